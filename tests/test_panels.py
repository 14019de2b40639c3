"""Named panels of hub models (lrd.units.panels), their cost (lrd.units.cost) and
``lrd sweep CHAPTER --panel NAME --dry-run``: offline, from the panels' data alone."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lrd.units import cost, panels

ROOT = Path(__file__).resolve().parents[1]


def test_every_panel_names_known_models_and_every_row_its_source():
    for p in panels.PANELS.values():
        assert p.models and all(m in panels.MODELS for m in p.models)
    for m in panels.MODELS.values():
        assert m.source and m.licence and m.architecture
        assert m.revision is None or len(m.revision) == 40  # a commit, or resolved at run time


def test_pythia_rows_agree_with_their_own_vocabulary():
    """Biderman et al.'s total and non-embedding counts differ by the two untied 50304-row embeddings."""
    rows = [m for m in panels.MODELS.values() if m.hub_id.startswith("EleutherAI/pythia")]
    assert len(rows) == 8
    for m in rows:
        assert m.params - m.non_embedding == 2 * 50304 * m.hidden, m.hub_id


@pytest.mark.parametrize("hub_id", ["sentence-transformers/all-MiniLM-L6-v2", "BAAI/bge-small-en-v1.5",
                                    "intfloat/e5-small-v2", "thenlper/gte-small"])
def test_bert_shaped_embedders_parameter_count_fits_their_layers(hub_id):
    """mteb's parameter count of a BERT-shaped model is what its layers and width give
    (embeddings + 12 H^2 + 13 H per block, FFN 4H): the layer count is right to within 2%."""
    m = panels.MODELS[hub_id]
    h = m.hidden
    formula = (m.vocab + 512 + 2) * h + 2 * h + m.layers * (12 * h * h + 13 * h) + h * h + h
    assert abs(formula / m.params - 1) < 0.02, (formula, m.params)


def test_claim_panels_quote_their_scope_and_stay_within_ilse_sizes():
    ilse = panels.panel("ilse-panel")
    assert "Pythia-410M, Gemma2-2B, Llama3-8B" in ilse.scope
    assert all(405e6 <= m.params <= 8.03e9 for m in ilse.rows)
    assert panels.panel("olmo").of_kind("decoder") == ["allenai/OLMo-7B-hf"]
    with pytest.raises(ValueError, match="panels: "):
        panels.panel("nope")


def test_panel_parameters_give_each_model_parameter_its_kind():
    p = panels.panel_parameters("cosine_vs_ablation", "skean-panel")
    assert all(panels.MODELS[m].kind == "decoder" for m in p["models"])
    assert p["encoders"] == ["google-bert/bert-base-uncased", "google-bert/bert-large-uncased"]
    assert p["pruning_models"] == p["models"]
    with pytest.raises(ValueError, match="no decoders"):
        panels.panel_parameters("cosine_vs_ablation", "mlm-encoders")


def test_forward_flops_are_two_per_non_embedding_parameter_per_token():
    """A closed form: one lrd_families unit on Pythia-410M, 300 SST-2 rows."""
    from lrd.units.lrd_families import lrd_families_units

    (u,) = lrd_families_units(models=["EleutherAI/pythia-410m-deduped"], tasks=["sst2"], n_samples=300)
    c = cost.unit_cost(u)
    assert c.flops == pytest.approx(2 * 302_311_424 * 300 * 23.2)
    assert c.gpu_hours == pytest.approx(c.flops / (989e12 * 0.4) / 3600)


def test_removal_sweeps_cost_grows_with_depth_and_fits_are_priced_per_state():
    from lrd.units.cosine_vs_ablation import cosine_vs_ablation_units
    from lrd.units.mid_layer import mid_layer_units

    def decoder_flops(model):
        units = cosine_vs_ablation_units(models=[model], tasks=["copa"], n_items=10, n_calibration=4, pruning_models=[],
                                         pruning_ks=[2], n_random=1, encoders=["minilm"], encoder_task="sst2",
                                         n_encoder=10, encoder_scorer="mteb")["decoders"]
        return cost.unit_cost(units[0]).flops

    shallow, deep = (decoder_flops(m) for m in ("EleutherAI/pythia-1b-deduped", "EleutherAI/pythia-1.4b-deduped"))
    per_token = [2 * m.non_embedding + 2 * 50304 * m.hidden for m in
                 (panels.MODELS["EleutherAI/pythia-1b-deduped"], panels.MODELS["EleutherAI/pythia-1.4b-deduped"])]
    assert shallow == pytest.approx(per_token[0] * (1 + 17 / 2) * 10 * 20.9)  # 16 blocks
    assert deep == pytest.approx(per_token[1] * (1 + 25 / 2) * 10 * 20.9)  # 24 blocks
    (mid,) = mid_layer_units(models=["EleutherAI/pythia-70m-deduped"], tasks=["sst2", "sarcasm"], n_samples=150,
                             n_bootstrap=1, pooling="mean", token_task="sst2", n_token_prompts=4, aug_task="sst2",
                             n_aug_prompts=2, n_views=2, norm_task="sst2", n_permutations=1)
    assert cost.unit_cost(mid).cpu_seconds == pytest.approx(0.37 * 7 * 2 * 0.5 * 2)  # states x tasks x rows/300 x 2


def _dry_run(chapter: str, panel: str, *extra: str) -> subprocess.CompletedProcess:
    code = ("import socket, sys\n"
            "touched = []\n"
            "def refuse(*a, **k):\n"
            "    touched.append(a)\n"
            "    raise OSError('the test refuses the network')\n"
            "socket.getaddrinfo = socket.create_connection = socket.socket.connect = socket.socket.connect_ex = refuse\n"
            "from lrd.cli import main\n"
            "rc = main(sys.argv[1:])\n"
            "assert not touched, f'touched the network: {touched}'\n"
            "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'imported a model library'\n"
            "sys.exit(rc)")
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}  # offline by itself, not by the hub's switch
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-c", code, "sweep", chapter, "--panel", panel, "--dry-run", *extra],
                          capture_output=True, text=True, env=env, timeout=120)


def test_panel_dry_run_lists_every_unit_and_its_cost_offline_without_torch():
    t0 = time.perf_counter()
    done = _dry_run("mid_layer", "pythia-deduped")
    seconds = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for hub_id in panels.panel("pythia-deduped").models:
        assert f"mid_layer_model({hub_id}, " in out
    assert "8 units of mid_layer on 8 models" in out
    assert "GPU-hours on an NVIDIA H100 SXM at 40% of its bf16 peak" in out and "CPU-hours" in out
    assert "the hub is needed to run them" in out
    assert seconds < 30  # under 5 s on an idle machine; this one is shared


def test_panel_dry_run_names_gated_models_and_refuses_a_clash():
    done = _dry_run("cayley_aggregation", "ilse-panel")
    assert done.returncode == 0, done.stderr
    assert "gated, accept their licence on the hub first: google/gemma-2-2b, meta-llama/Meta-Llama-3-8B" in done.stdout
    clash = _dry_run("mid_layer", "olmo", "-p", "models", '["minilm"]')
    assert clash.returncode == 2 and "--panel olmo sets models" in clash.stderr
    for chapter in ("null_calibration", "all"):  # no units to run on a panel
        refused = _dry_run(chapter, "olmo")
        assert refused.returncode == 2 and "--panel runs one chapter with units" in refused.stderr


def _stand_in(row: panels.HubModel, folder: Path) -> Path:
    """A random-weight model of ``row``'s architecture, shrunk to 2 blocks of width 32."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    from conftest import _tokenizer

    tok = _tokenizer(bert=row.kind == "encoder")
    cfg = AutoConfig.for_model(row.architecture, vocab_size=len(tok), hidden_size=32, num_hidden_layers=2,
                               num_attention_heads=4, intermediate_size=64, max_position_embeddings=64,
                               pad_token_id=0, bos_token_id=2, eos_token_id=3)
    torch.manual_seed(0)
    (AutoModel if row.kind == "encoder" else AutoModelForCausalLM).from_config(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.mark.parametrize("hub_id", ["EleutherAI/pythia-70m-deduped", "google-bert/bert-base-uncased"])
def test_a_panel_stand_in_runs_the_smallest_chapter_end_to_end(hub_id, tmp_path, require_panel, monkeypatch):
    """The panel's unit, with its model swapped for a random stand-in of the same architecture,
    computes the models_and_tasks probe: one curve point per hidden state."""
    require_panel("olmo_eval")
    from lrd.engine import extract as extract_module
    from lrd.units.base import compute

    monkeypatch.setattr(extract_module, "folder", lambda kind: tmp_path / "states")  # this test's own state cache
    from lrd.units.models_and_tasks import models_and_tasks_units

    (declared,) = models_and_tasks_units(models=[hub_id], task="sst2", n_samples=24, dtype="float32")
    folder = _stand_in(panels.MODELS[hub_id], tmp_path / "stand-in")
    (unit,) = models_and_tasks_units(models=[str(folder)], **{k: v for k, v in declared.params.items()},
                                     dtype="float32")
    (probe,) = compute([unit], root=tmp_path / "results")
    assert sorted(probe.curve["layer"].unique()) == [0, 1, 2]
    assert probe.summary["kind"] == panels.MODELS[hub_id].kind


def test_the_estimate_of_the_offline_book_is_an_upper_bound_within_the_stated_factor():
    """The cost model against the measured cold book of 2026-12-05 (commit 53d41c0, not the run its
    constants came from), the chapters sharing their cached states as in ``lrd book``: every
    chapter within 0.25-1.1 of its estimate, the six together 0.45-0.9."""
    import json

    run = json.loads((ROOT / "benchmarks/fresh_clone/2026-12-05-53d41c0.json").read_text())
    measured = next(o["chapters"] for o in run["outcomes"] if o["chapters"])
    chapters = ["models_and_tasks", "lrd_families", "mid_layer", "cosine_vs_ablation", "selection_and_pruning",
                "cayley_aggregation"]
    estimates = cost.book_estimates(chapters)
    assert not any(e.unknown for e in estimates.values())
    estimated = {c: e.this_machine_seconds() for c, e in estimates.items()}
    for c in chapters:
        assert 0.25 <= measured[c] / estimated[c] <= 1.1, (c, measured[c], estimated[c])
    assert 0.45 <= sum(measured[c] for c in chapters) / sum(estimated.values()) <= 0.9


def test_a_later_chapter_finds_the_states_an_earlier_one_cached():
    """Two lrd_families units of one model and task (another k) pass the texts once."""
    from lrd.units.lrd_families import lrd_families_units

    a = lrd_families_units(models=["EleutherAI/pythia-70m-deduped"], tasks=["sst2"], n_samples=300, k=5)
    b = lrd_families_units(models=["EleutherAI/pythia-70m-deduped"], tasks=["sst2"], n_samples=300, k=7)
    together = cost.estimate(a + b)
    assert together.units[1].flops == 0 and together.flops == cost.estimate(a).flops


@pytest.mark.integration
def test_sentence_embedders_are_as_mteb_describes_them():
    """The panels' numbers for sentence embedders are mteb's model metadata (installed, offline)."""
    mteb = pytest.importorskip("mteb")
    rows = [m for m in [*panels.MODELS.values(), panels.OFFLINE["e5small"]] if m.training == "contrastive"]
    assert len(rows) == 7
    for m in rows:
        meta = mteb.get_model_meta(m.hub_id)
        assert (meta.revision, meta.n_parameters, meta.embed_dim) == (m.revision, m.params, m.hidden), m.hub_id
        assert meta.license.lower() == m.licence.lower(), m.hub_id


def test_removal_sweep_tokens_match_what_the_unit_recorded():
    """The ci reference's cosine unit recorded its own work (``token passes``: block forwards x
    request tokens, SmolLM2's tokenizer); the estimate (Qwen2.5's token counts, half a pass per
    removal) is within 0.7-1.3 of it."""
    import ast
    import json

    import lrd.book as book
    from lrd.units.registry import declared

    nb = json.loads((ROOT / "tests/nbval/cosine_vs_ablation.ipynb").read_text())
    glued = {o["metadata"]["scrapbook"]["name"]: o["data"]["application/papermill.record/text/plain"]
             for c in nb["cells"] for o in c.get("outputs", []) if "scrapbook" in o.get("metadata", {})}
    recorded = float(ast.literal_eval(glued["cosine_vs_ablation-token_passes"]).replace(",", ""))
    chapter = "cosine_vs_ablation"
    (decoder,) = [u for u in declared(chapter, {**book.default_parameters(chapter), **book.profile("ci", chapter)})
                  if u.name == "ablation_decoder"]
    _, scored = cost.unit_tokens(decoder.name, decoder.params, cost.size_of(decoder.model))
    assert 0.7 <= recorded / scored <= 1.3, (recorded, scored)


def test_a_planner_draws_models_within_a_scope_and_prices_a_design():
    rows = panels.models_within(kind="decoder", training="base", params=(405_334_016, 8_030_261_248))
    assert rows[0].hub_id == "EleutherAI/pythia-410m-deduped" and rows[-1].hub_id == "meta-llama/Meta-Llama-3-8B"
    assert all(405_334_016 <= m.params <= 8_030_261_248 for m in rows)
    ids = [m.hub_id for m in rows[:3]]
    small = cost.chapter_estimate("lrd_families", {"models": ids, "tasks": ["sst2"], "n_samples": 300})
    large = cost.chapter_estimate("lrd_families", {"models": ids, "tasks": ["sst2"], "n_samples": 600})
    assert large.flops == pytest.approx(2 * small.flops)  # forward passes scale with the rows


def test_every_panel_architecture_is_one_the_engine_is_tested_on():
    """Each row's ``architecture`` (its stand-in's model_type) is a family tests/test_anatomy.py
    builds and runs at random weights (EmbeddingGemma: a Gemma 3 text model used as an encoder, as
    the offline pack of it is)."""
    from test_anatomy import DECODERS, ENCODERS

    for m in [*panels.MODELS.values(), *panels.OFFLINE.values()]:
        assert m.architecture in DECODERS + ENCODERS, (m.hub_id, m.architecture)
        assert m.kind == "decoder" or m.architecture in ENCODERS or m.hub_id == "google/embeddinggemma-300m", m.hub_id


def test_loading_counts_each_hub_model_once():
    e = cost.chapter_estimate("lrd_families", {"models": ["allenai/OLMo-7B-hf"], "tasks": ["sst2", "mrpc"]})
    assert len(e.units) == 2
    assert e.load_hours == pytest.approx(2 * 6_890_000_000 / 200e6 / 3600)
    assert cost.chapter_estimate("lrd_families", {"models": ["minilm"]}).load_hours == 0  # an offline pack
