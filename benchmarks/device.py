"""lrd on an accelerator (issue 19): every chapter's ci units on ``--device`` against the CPU,
then the extraction's and the removal sweep's throughput against a plain forward pass.

**Units.** The ci profile of every chapter, with the panel replaced by tiny random models of
its three architectures (a BERT encoder, a Llama decoder, a Gemma 3 decoder with sliding and
full attention layers; the tokenizers of minilm and smollm2), computed once on ``--device`` and once on the CPU, each in an empty
``LRD_HOME`` that links only the data packs (no cached state crosses devices). Prints each
unit's seconds on both devices and the worst relative difference over every number its record
holds (``max |a - b| / max |b|`` per array; timings excluded). The Cayley chapter's units train
their aggregators on the unit's device: the dropout masks are drawn there, so those records
differ by training noise, not by float rounding; they are listed apart.

**Throughput.** Random-weight models built from the five panel configs (speed does not depend
on the weights): a plain ``base_model(**batch)`` loop over the same length-sorted batches as
``lrd.extract`` (tokenised beforehand, no hidden states asked for), against ``lrd.extract``
(every layer pooled, results on the CPU), in tokens per second, per batch size; then
the multiple-choice scorer (``lrd.engine.scoring.loglikelihoods``) and
``lrd.methods.relevance.removal_sweep`` on a multiple-choice task, in token passes per second.

It needs neither jupytext, papermill, mteb nor dask (the GPU machine has none of them): a
chapter's defaults are read from the ``parameters`` cell of ``notebooks/<chapter>.py``, the ci
profile from ``notebooks/profiles.yml``. ``--configs`` is a folder of ``<key>/config.json``
(default: the offline panel in ``$LRD_HOME/models``); ``--tokenizers`` one holding ``minilm/``
and ``smollm2/`` tokenizer files (default: the same panel).

    python benchmarks/device.py --device cuda              # on the GPU machine (see ../shared/gpu.md)
    python benchmarks/device.py --device cpu --quick       # the same code path on a CPU, small (run once:
                                                           # its differences are 0 by construction)
    python benchmarks/device.py --device cuda --parts default --dtype bfloat16   # the default book's units

**Default units** (``--parts default``, issue 19's "whole default book on one GPU"): every
chapter's units at its default parameters, the panel replaced by random-weight models of its
configs, timed unit by unit; a budget (``--budget``) stops starting units so the call ends in
time, and ``--out`` keeps the table of what finished.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import lrd  # noqa: E402
from lrd.engine.extract import batch_token_limit, batches_by_length  # noqa: E402
from lrd.engine.store import lrd_home  # noqa: E402
from lrd.engine.tasks import load_task  # noqa: E402
from lrd.units.registry import CHAPTER_UNITS, declared as units_declared  # noqa: E402

PANEL = ("minilm", "mpnet", "smollm2", "gemma3", "qwen")
ENCODERS, DECODERS = ("minilm", "mpnet"), ("smollm2", "gemma3", "qwen")
VOLATILE = {"seconds", "work"}  # record fields that hold timings


# --------------------------------------------------------------------------------------------
# Parameters without jupytext


def notebook_defaults(chapter: str) -> dict:
    """The values the ``parameters`` cell of ``notebooks/<chapter>.py`` assigns."""
    text = (ROOT / "notebooks" / f"{chapter}.py").read_text()
    start = text.index('# %% tags=["parameters"]')
    end = text.find("\n# %%", start + 1)
    namespace: dict = {}
    exec(text[start:end if end > 0 else None], {}, namespace)
    return namespace


def ci_parameters(chapter: str) -> dict:
    profiles = yaml.safe_load((ROOT / "notebooks" / "profiles.yml").read_text())
    return {**notebook_defaults(chapter), **profiles.get("ci", {}).get(chapter, {})}


def replace_panel(values: dict, models) -> dict:
    """``values`` with every panel model replaced: a list of panel keys by the concatenated
    ``models(key)`` lists (duplicates dropped), one key by the first of ``models(key)``."""
    out = {}
    for name, value in values.items():
        if isinstance(value, str) and value in PANEL:
            out[name] = models(value)[0]
        elif isinstance(value, list) and value and all(v in PANEL for v in value):
            out[name] = list(dict.fromkeys(m for v in value for m in models(v)))
        else:
            out[name] = value
    return out


def tiny_panel(values: dict, tiny: dict[str, str]) -> dict:
    """``values`` with every panel model replaced by tiny models of its kind (a list of
    encoders -> the BERT; of decoders -> the Llama and the Gemma 3; one model -> the first)."""
    return replace_panel(values, lambda key: [tiny["bert"]] if key in ENCODERS else [tiny["llama"], tiny["gemma"]])


# --------------------------------------------------------------------------------------------
# Tiny random models (the architectures of the panel)


def build_tiny_models(folder: Path, tokenizers: Path) -> dict[str, str]:
    """A 3-block BERT with minilm's tokenizer, a 4-block Llama and a 6-block Gemma 3 (sliding
    window 4, every third layer full attention) with smollm2's, random, saved under ``folder``;
    their paths by name."""
    from transformers import (AutoTokenizer, BertConfig, BertModel, Gemma3ForCausalLM, Gemma3TextConfig,
                              LlamaConfig, LlamaForCausalLM)

    torch.manual_seed(0)
    bert_tok = AutoTokenizer.from_pretrained(tokenizers / "minilm")
    dec_tok = AutoTokenizer.from_pretrained(tokenizers / "smollm2")
    pad = dec_tok.pad_token_id if dec_tok.pad_token_id is not None else dec_tok.eos_token_id
    small = dict(hidden_size=32, num_attention_heads=4, intermediate_size=64)
    specs = {
        "bert": (BertModel(BertConfig(vocab_size=len(bert_tok), num_hidden_layers=3, max_position_embeddings=128,
                                      **small)), bert_tok),
        "llama": (LlamaForCausalLM(LlamaConfig(vocab_size=len(dec_tok), num_hidden_layers=4, num_key_value_heads=2,
                                               max_position_embeddings=512, pad_token_id=pad, **small)), dec_tok),
        "gemma": (Gemma3ForCausalLM(Gemma3TextConfig(
            vocab_size=len(dec_tok), num_hidden_layers=6, num_key_value_heads=2, head_dim=8, max_position_embeddings=512,
            sliding_window=4, layer_types=["sliding_attention", "sliding_attention", "full_attention"] * 2,
            pad_token_id=pad, **small)), dec_tok),
    }
    out = {}
    for name, (model, tok) in specs.items():
        path = folder / f"tiny-{name}"
        model.save_pretrained(path)
        tok.save_pretrained(path)
        out[name] = str(path)
    return out


# --------------------------------------------------------------------------------------------
# Units on two devices


def numbers(record, prefix: str = "") -> dict[str, np.ndarray]:
    """Every numeric array a unit record holds, by path (timings left out)."""
    if dataclasses.is_dataclass(record):
        items = {f.name: getattr(record, f.name) for f in dataclasses.fields(record) if f.name not in VOLATILE}
    elif isinstance(record, dict):
        items = {str(k): v for k, v in record.items() if k not in VOLATILE}
    elif isinstance(record, (list, tuple)) and record and not np.isscalar(record[0]):
        items = {str(i): v for i, v in enumerate(record)}
    elif isinstance(record, pd.DataFrame):
        num = record.select_dtypes("number").drop(columns=[c for c in record if c in VOLATILE], errors="ignore")
        return {prefix: num.to_numpy(dtype=float)} if num.size else {}
    else:
        try:
            arr = np.asarray(record, dtype=float)
        except (TypeError, ValueError):
            return {}
        return {prefix: arr}
    out = {}
    for k, v in items.items():
        out.update(numbers(v, f"{prefix}.{k}" if prefix else k))
    return out


def worst_relative_difference(a, b) -> float:
    na, nb = numbers(a), numbers(b)
    if na.keys() != nb.keys():
        return float("inf")
    worst = 0.0
    for k in na:
        x, y = na[k], nb[k]
        if x.shape != y.shape or not np.array_equal(np.isnan(x), np.isnan(y)):
            return float("inf")
        ok = ~np.isnan(y)
        if ok.any():
            worst = max(worst, float(np.abs(x[ok] - y[ok]).max() / max(np.abs(y[ok]).max(), 1e-12)))
    return worst


def fresh_home(base: Path, name: str, data: Path) -> Path:
    home = base / name
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "data").exists():
        (home / "data").symlink_to(data)
    return home


def unit_rows(device: str, tiny: dict[str, str], scratch: Path, data: Path) -> pd.DataFrame:
    """Each ci unit computed on ``device`` and on the CPU (no cache shared between them)."""
    declared = [u for chapter in CHAPTER_UNITS
                for u in units_declared(chapter, tiny_panel(ci_parameters(chapter), tiny))]
    results = {}
    for d in dict.fromkeys([device, "cpu"]):
        os.environ["LRD_HOME"] = str(fresh_home(scratch, f"home-{d}", data))
        slots: dict = {}
        for i, u in enumerate(declared):
            if u.model not in slots:
                slots = {u.model: lrd.load_model(u.model, device=d)}
            t0 = time.perf_counter()
            record = u.func(slots[u.model], **u.params)
            if d.startswith("cuda"):
                torch.cuda.synchronize()
            results[d, i] = (record, time.perf_counter() - t0)
    rows = []
    for i, u in enumerate(declared):
        (a, ta), (b, tb) = results[device, i], results["cpu", i]
        rows.append({"chapter": u.chapter, "unit": u.label.replace(str(Path(u.model).parent) + "/", ""),
                     f"{device} s": ta, "cpu s": tb, "worst rel. diff": worst_relative_difference(a, b),
                     "trains": u.chapter == "cayley_aggregation"})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Throughput with random weights of the panel's configs


def random_panel_model(key: str, configs: Path, tokenizers: Path, scratch: Path, device: str):
    """A random-weight model of the panel model ``key``'s config, saved with the minilm
    (encoders) or smollm2 (decoders) tokenizer, loaded by lrd on ``device``."""
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoTokenizer

    path = scratch / f"random-{key}"
    if not path.exists():
        cfg = AutoConfig.from_pretrained(configs / key)
        auto = AutoModelForCausalLM if key in DECODERS else AutoModel
        with torch.device(device):  # initialised where it runs: seconds, not minutes, for 0.5B
            model = auto.from_config(cfg)
        model.save_pretrained(path)
        AutoTokenizer.from_pretrained(tokenizers / ("smollm2" if key in DECODERS else "minilm")).save_pretrained(path)
        del model
    return lrd.load_model(str(path), device=device)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def plain_forward(model, texts: list[str], batch_size: int) -> tuple[float, int]:
    """Seconds and real tokens of ``base_model(**batch)`` over the batches ``lrd.extract`` forms."""
    tok = model.tokenizer
    ids = tok(texts, truncation=True, max_length=512)["input_ids"]
    tok.padding_side = "right"
    batches = [tok.pad({"input_ids": [ids[i] for i in idx]}, return_tensors="pt")
               for idx in batches_by_length([len(x) for x in ids], batch_size, batch_token_limit(model, None))]
    with torch.inference_mode():
        model.model.base_model(**{k: v[:2].to(model.device) for k, v in batches[0].items()})  # warm-up
        _sync(model.device.type)
        t0 = time.perf_counter()
        for batch in batches:
            model.model.base_model(**{k: v.to(model.device) for k, v in batch.items()})
        _sync(model.device.type)
    return time.perf_counter() - t0, sum(len(x) for x in ids)


def throughput_rows(device: str, texts: list[str], batch_sizes: list[int], keys: list[str], configs: Path,
                    tokenizers: Path, scratch: Path, repeats: int = 2) -> pd.DataFrame:
    rows = []
    for key in keys:
        model = random_panel_model(key, configs, tokenizers, scratch, device)
        pooling = "last" if model.kind == "decoder" else "mean"
        for bs in batch_sizes:
            plain, ours = float("inf"), float("inf")
            for _ in range(repeats):  # alternated, best of each: neither gets the other's warm-up
                seconds, n_tokens = plain_forward(model, texts, bs)
                plain = min(plain, seconds)
                t0 = time.perf_counter()
                lrd.extract(model, texts, pooling=pooling, batch_size=bs, cache=False, progress=False)
                _sync(device)
                ours = min(ours, time.perf_counter() - t0)
            rows.append({"model": key, "batch": bs, "tokens": n_tokens, "plain tok/s": n_tokens / plain,
                         "extract tok/s": n_tokens / ours, "extract / plain": plain / ours})
        del model
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
    return pd.DataFrame(rows)


def sweep_rows(device: str, keys: list[str], n_items: int, configs: Path, tokenizers: Path,
               scratch: Path) -> pd.DataFrame:
    """Token passes per second of the multiple-choice scorer (``loglikelihoods``, the intact
    model) and of the removal sweep (every block removed in turn) on SciQ."""
    from lrd.engine.scoring import build_requests, loglikelihoods
    from lrd.methods.relevance import removal_sweep
    from lrd.units.common import mc_split

    rows = []
    for key in keys:
        model = random_panel_model(key, configs, tokenizers, scratch, device)
        req = build_requests(model, mc_split("sciq", "test", n_items))
        loglikelihoods(model, req, progress=False)  # warm-up
        _sync(device)
        t0 = time.perf_counter()
        loglikelihoods(model, req, progress=False)
        _sync(device)
        scored = time.perf_counter() - t0
        sweep = removal_sweep(model, req, batch_size=32, progress=False)
        rows.append({"model": key, "items": n_items, "tokens": req.n_tokens,
                     "scorer token passes/s": req.n_tokens / scored,
                     "sweep token passes": sweep.block_forwards * req.n_tokens, "sweep seconds": sweep.seconds,
                     "sweep token passes/s": sweep.block_forwards * req.n_tokens / sweep.seconds})
        del model
    return pd.DataFrame(rows)


def default_rows(device: str, dtype: str, keys: list[str], chapters: list[str], configs: Path, tokenizers: Path,
                 scratch: Path, data: Path, out: Path | None, budget_s: float) -> pd.DataFrame:
    """The default book's heavy work on ``device``: every chapter's units at its default
    parameters, the panel replaced by random-weight models of the panel's configs (same sizes,
    same architectures; speed does not depend on the weights), run as ``lrd sweep`` groups them
    (one load per model, extractions shared through the cache of a fresh ``LRD_HOME``).

    Units of models outside ``keys`` are left out. Stops starting units once ``budget_s``
    seconds have passed (the rest are listed as not run); with ``out``, the table is written
    after every unit, so a call cut short keeps what finished.
    """
    from lrd.units.sweep import batches

    paths = {k: str(scratch / f"random-{k}") for k in PANEL}  # built on first use by random_panel_model
    declared = [u for chapter in chapters for u in units_declared(
        chapter, replace_panel({**notebook_defaults(chapter), "device": device, "dtype": dtype}, lambda k: [paths[k]]))]
    key_of = {v: k for k, v in paths.items()}
    declared = [u for u in declared if key_of.get(u.model) in keys]
    os.environ["LRD_HOME"] = str(fresh_home(scratch, f"home-default-{device}-{dtype}", data))
    rows, start = [], time.perf_counter()
    for group in batches(declared):
        key = key_of[group[0].model]
        model = None
        for u in group:
            row = {"chapter": u.chapter, "model": key, "unit": u.label.replace(u.model, key)[:60],
                   "seconds": float("nan"), "error": ""}
            if time.perf_counter() - start > budget_s:
                row["error"] = "not run (budget)"
            else:
                try:
                    if model is None:
                        t0 = time.perf_counter()
                        model = random_panel_model(key, configs, tokenizers, scratch, device)
                        rows.append({"chapter": "(load)", "model": key, "unit": "build + load",
                                     "seconds": time.perf_counter() - t0, "error": ""})
                    t0 = time.perf_counter()
                    u.func(model, **u.params)
                    _sync(device)
                    row["seconds"] = time.perf_counter() - t0
                except Exception as err:  # noqa: BLE001  (reported in the table, the rest goes on)
                    row["error"] = f"{type(err).__name__}: {err}"[:200]
            rows.append(row)
            print(f"  {row['chapter']:<22} {key:<8} {row['unit']:<60} {row['seconds']:8.1f} s {row['error']}",
                  flush=True)
            if out is not None:
                out.mkdir(parents=True, exist_ok=True)
                pd.DataFrame(rows).to_csv(out / f"device-default-{dtype}.csv", index=False)
        del model
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="few texts, two models, batch 32 only (a CPU check)")
    parser.add_argument("--n-texts", type=int, default=5000, help="SST-2 sentences of the throughput table")
    parser.add_argument("--configs", type=Path, default=None, help="folder of <key>/config.json (default: the panel)")
    parser.add_argument("--tokenizers", type=Path, default=None, help="folder with minilm/ and smollm2/ tokenizers")
    parser.add_argument("--parts", default="units,extract,sweep",
                        help="comma-separated: units, extract, sweep, default (the default book's units)")
    parser.add_argument("--models", default=",".join(PANEL), help="panel keys of the extract, sweep and default parts")
    parser.add_argument("--chapters", default=",".join(c for c in CHAPTER_UNITS if c != "null_calibration"),
                        help="chapters of the default part")
    parser.add_argument("--dtype", default="float32", help="dtype of the default part (float32, bfloat16, float16)")
    parser.add_argument("--budget", type=float, default=420.0,
                        help="seconds after which the default part starts no more units")
    parser.add_argument("--out", type=Path, default=None, help="write each table as CSV into this folder too")
    args = parser.parse_args()
    pd.set_option("display.width", 160)
    home = lrd_home()
    configs = args.configs or home / "models"
    tokenizers = args.tokenizers or home / "models"
    parts = args.parts.split(",")
    keys = [k for k in args.models.split(",") if k]
    unknown = sorted(set(keys) - set(PANEL))
    if unknown:
        parser.error(f"--models {unknown} are not panel keys; choose among {', '.join(PANEL)}")
    keys = [k for k in keys if k in ("minilm", "smollm2")] if args.quick else keys
    sizes = [32] if args.quick else [32, 256]
    n_texts = 64 if args.quick else args.n_texts
    print(f"device {args.device}; torch {torch.__version__}; LRD_HOME {home}", flush=True)
    tables = {}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        if "units" in parts:
            t0 = time.perf_counter()
            tiny = build_tiny_models(scratch, tokenizers)
            tables["units"] = unit_rows(args.device, tiny, scratch, home / "data")
            print(f"\n## ci units on {args.device} and cpu, tiny random models ({time.perf_counter() - t0:.0f} s)")
            print(tables["units"].to_string(index=False, float_format=lambda x: f"{x:.3g}"))
            exact = tables["units"][~tables["units"]["trains"]]["worst rel. diff"]
            print(f"worst relative difference of the units that train nothing: {exact.max():.3g}", flush=True)
        os.environ["LRD_HOME"] = str(home)
        texts = load_task("sst2").texts
        texts = (texts * (n_texts // len(texts) + 1))[:n_texts]
        if "extract" in parts:
            t0 = time.perf_counter()
            tables["extract"] = throughput_rows(args.device, texts, sizes, keys, configs, tokenizers, scratch)
            print(f"\n## extraction against a plain forward pass, {len(texts)} SST-2 sentences "
                  f"({time.perf_counter() - t0:.0f} s)")
            print(tables["extract"].to_string(index=False, float_format=lambda x: f"{x:,.2f}"), flush=True)
        if "sweep" in parts:
            t0 = time.perf_counter()
            tables["sweep"] = sweep_rows(args.device, [k for k in keys if k in DECODERS], 8 if args.quick else 32,
                                         configs, tokenizers, scratch)
            print(f"\n## multiple-choice scorer and removal sweeps, SciQ ({time.perf_counter() - t0:.0f} s)")
            print(tables["sweep"].to_string(index=False, float_format=lambda x: f"{x:,.1f}"), flush=True)
        if "default" in parts:
            t0 = time.perf_counter()
            print(f"\n## the default book's units on {args.device} ({args.dtype}), random weights of the panel's "
                  "configs", flush=True)
            table = default_rows(args.device, args.dtype, keys, args.chapters.split(","), configs, tokenizers,
                                 scratch, home / "data", args.out, args.budget)
            tables["default"] = table
            os.environ["LRD_HOME"] = str(home)
            ran = table[table["chapter"] != "(load)"]
            print(table.groupby("chapter")["seconds"].sum().round(1).to_string())
            print(f"total {table['seconds'].sum():.0f} s over {ran['seconds'].notna().sum()} of {len(ran)} units "
                  f"({time.perf_counter() - t0:.0f} s wall); slowest:")
            print(ran.nlargest(8, "seconds").to_string(index=False, float_format=lambda x: f"{x:.1f}"), flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, table in tables.items():
            table.to_csv(args.out / f"device-{name}.csv", index=False)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
