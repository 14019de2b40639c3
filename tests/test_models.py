"""lrd.load_model: local folders, anatomy table, errors; the real offline panel (integration)."""

from __future__ import annotations

import numpy as np
import pytest

import lrd
from lrd.engine.models import ARCHITECTURES


def test_local_folder_loads_with_kind_and_anatomy(tiny_encoder, tiny_decoder):
    assert (tiny_encoder.kind, tiny_encoder.n_layers, tiny_encoder.hidden_size) == ("encoder", 3, 32)
    assert (tiny_decoder.kind, tiny_decoder.n_layers, tiny_decoder.hidden_size) == ("decoder", 4, 32)
    assert len(tiny_encoder.blocks) == 3 and len(tiny_decoder.blocks) == 4
    assert tiny_encoder.final_norm is None and tiny_decoder.final_norm is not None


def test_fingerprint_is_stable_and_content_based(tiny_encoder_dir, tiny_encoder):
    again = lrd.load_model(str(tiny_encoder_dir))
    assert again.fingerprint == tiny_encoder.fingerprint


def test_fingerprint_does_not_depend_on_where_the_files_are(tiny_encoder_dir, tiny_encoder, tmp_path):
    """Cache keys are content addresses: the same model copied elsewhere (another $LRD_HOME, a
    moved folder) has the same fingerprint, loaded or not; changed weights change it."""
    import shutil

    import torch

    from lrd.engine.models import source_fingerprint

    moved = shutil.copytree(tiny_encoder_dir, tmp_path / "elsewhere" / "model")
    assert lrd.load_model(str(moved)).fingerprint == tiny_encoder.fingerprint
    assert source_fingerprint(str(moved)) == source_fingerprint(str(tiny_encoder_dir)) == tiny_encoder.fingerprint
    changed = lrd.load_model(str(moved))
    with torch.no_grad():
        next(changed.model.parameters()).add_(1.0)
    changed.model.save_pretrained(tmp_path / "changed")
    changed.tokenizer.save_pretrained(tmp_path / "changed")
    assert source_fingerprint(str(tmp_path / "changed")) != tiny_encoder.fingerprint


def test_unknown_model_offline_names_keys_and_folder_hint(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    with pytest.raises(ValueError) as err:
        lrd.load_model("no-such-org/no-such-model-xyz")
    msg = str(err.value)
    for key in ("minilm", "mpnet", "smollm2", "gemma3", "qwen", "local folder"):
        assert key in msg


def test_missing_local_folder_is_named(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        lrd.load_model(str(tmp_path / "nowhere"))


def test_a_file_given_as_a_model_is_named_a_file(tiny_encoder_dir):
    """Issue 28: a path to a weight file said "does not exist or has no config.json"."""
    from lrd.engine.models import model_config

    weights = next(tiny_encoder_dir.glob("*.safetensors"))
    with pytest.raises(ValueError, match="is a file, not a model folder") as err:
        model_config(str(weights))
    assert repr(str(tiny_encoder_dir)) in str(err.value)  # the folder to pass instead


def test_a_family_without_a_row_has_its_anatomy_derived(tiny_encoder_dir, monkeypatch):
    """Failing derivations name the row to add: tests/test_anatomy.py."""
    model = lrd.load_model(str(tiny_encoder_dir))
    monkeypatch.delitem(ARCHITECTURES, "bert")
    assert model.anatomy == {"blocks": "encoder.layer", "final_norm": None, "embeddings": "embeddings.word_embeddings"}
    assert model.blocks is model.model.encoder.layer and model.final_norm is None


@pytest.mark.parametrize("fixture", ["tiny_encoder_dir", "tiny_decoder_dir"])
def test_a_folder_without_tokenizer_files_is_refused(fixture, request, tmp_path):
    """A BERT folder without them loaded with a 5-entry tokenizer that maps every word to [UNK]."""
    import shutil

    folder = tmp_path / "no-tokenizer"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(request.getfixturevalue(fixture) / name, folder / name)
    with pytest.raises(ValueError, match=r"tokenizer.*tokenizer.save_pretrained\(folder\)"):
        lrd.load_model(str(folder))


def test_every_architecture_row_names_blocks_and_embeddings():
    for name, row in ARCHITECTURES.items():
        assert row["blocks"] and row["embeddings"], name


PANEL = {  # key: (kind, blocks, hidden size), from the upstream model cards
    "minilm": ("encoder", 6, 384),
    "mpnet": ("encoder", 12, 768),
    "smollm2": ("decoder", 30, 576),
    "gemma3": ("decoder", 18, 640),
    "qwen": ("decoder", 24, 896),
}


@pytest.mark.integration
@pytest.mark.parametrize("key", PANEL)
def test_offline_panel_model_layers_and_padding(key, require_panel):
    require_panel(key)
    model = lrd.load_model(key)
    assert (model.kind, model.n_layers, model.hidden_size) == PANEL[key]
    assert len(model.blocks) == model.n_layers
    texts = ["The capital of France is Paris.", "Layers change representations.", "Hi"]
    pooling = "last" if model.kind == "decoder" else "mean"
    batch = lrd.extract(model, texts, pooling=pooling, cache=False)
    assert batch.shape == (model.n_layers + 1, 3, model.hidden_size)
    alone = lrd.extract(model, texts[:1], pooling=pooling, cache=False)
    scale = np.abs(alone).max(axis=-1, keepdims=True)  # decoders carry massive activations
    np.testing.assert_allclose(batch[:, :1] / scale, alone / scale, atol=1e-5)


@pytest.mark.integration
def test_offline_decoder_completes_a_fact(require_panel):
    import torch

    require_panel("smollm2")
    model = lrd.load_model("smollm2")
    enc = model.tokenizer("The capital of France is", return_tensors="pt")
    with torch.no_grad():
        nxt = model.model(**enc).logits[0, -1].argmax().item()
    assert model.tokenizer.decode([nxt]).strip() == "Paris"


def test_typo_in_an_offline_key_fails_fast_and_suggests_the_key(monkeypatch):
    import time

    from lrd.engine import models

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    monkeypatch.setattr(models, "_probe_hub", lambda endpoint: False)  # the hub does not answer
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"unreachable.*Did you mean 'minilm'\?"):
        lrd.load_model("minilmx")
    assert time.perf_counter() - t0 < 5  # no retries against an unreachable hub


def test_hub_reachability_is_probed_once_per_process(monkeypatch):
    import urllib.error
    import urllib.request

    from lrd.engine import models

    calls = []

    def unreachable(*args, **kwargs):
        calls.append(args)
        raise urllib.error.URLError("no route")

    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    monkeypatch.setattr(urllib.request, "urlopen", unreachable)
    models._probe_hub.cache_clear()
    try:
        assert models.hub_reachable() is False
        assert models.hub_reachable() is False
        assert len(calls) == 1
    finally:
        models._probe_hub.cache_clear()
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    assert models.hub_reachable() is False and len(calls) == 1  # offline mode: no probe at all


def test_suggestion_only_for_close_names():
    from lrd.engine.models import suggest

    assert suggest("minilmx", ["minilm", "mpnet"]) == " Did you mean 'minilm'?"
    assert suggest("bert-base-uncased", ["minilm", "mpnet"]) == ""


# --------------------------------------------------------------------------------------------
# Deferred weights (load_model(..., lazy=True)): what a cached unit needs, without the weights


@pytest.mark.parametrize("which", ["tiny_encoder_dir", "tiny_decoder_dir"])
def test_lazy_model_knows_everything_but_the_weights_and_reads_them_on_first_use(which, request):
    import torch

    from lrd.engine.models import load_model

    folder = str(request.getfixturevalue(which))
    eager, lazy = load_model(folder), load_model(folder, lazy=True)
    assert "model" not in vars(lazy)  # nothing read yet
    for attr in ("fingerprint", "n_params", "n_layers", "hidden_size", "kind", "model_type", "source"):
        assert getattr(lazy, attr) == getattr(eager, attr), attr
    assert lazy.model_kind == eager.model_kind
    assert lazy.has_final_norm == (eager.final_norm is not None) == (which == "tiny_decoder_dir")
    assert lazy.config.to_dict() == eager.config.to_dict()
    assert "model" not in vars(lazy)
    lazy.model  # noqa: B018  (the first use reads the weights)
    assert "model" in vars(lazy) and not lazy.model.training
    for (n1, t1), (n2, t2) in zip(eager.model.state_dict().items(), lazy.model.state_dict().items()):
        assert n1 == n2 and torch.equal(t1, t2)
    assert lazy.blocks is lazy.blocks and len(lazy.blocks) == eager.n_layers


def test_lazy_model_serves_cached_states_without_reading_its_weights(tiny_decoder_dir, lrd_home):
    from lrd.engine.extract import extract
    from lrd.engine.models import load_model

    texts = ["a cat sat", "the dog ran far"]
    first = load_model(str(tiny_decoder_dir), lazy=True)
    computed = extract(first, texts, progress=False)  # not cached: the weights are read
    normed = extract(first, texts, progress=False, final_norm=True)
    assert "model" in vars(first)
    second = load_model(str(tiny_decoder_dir), lazy=True)
    again = extract(second, texts, progress=False)
    np.testing.assert_array_equal(again, computed)
    np.testing.assert_array_equal(extract(second, texts, progress=False, final_norm=True), normed)
    assert "model" not in vars(second)  # served from the cache, weights never read
    with pytest.raises(AttributeError, match="no attribute 'weights'"):
        second.weights  # noqa: B018  (other missing attributes stay errors)


def test_parameter_count_on_meta_counts_tied_weights_once(tiny_decoder_dir):
    from transformers import AutoConfig, AutoModelForCausalLM

    from lrd.engine.models import parameter_count

    config = AutoConfig.from_pretrained(tiny_decoder_dir)
    for tie in (False, True):
        config.tie_word_embeddings = tie
        built = AutoModelForCausalLM.from_config(config)
        assert parameter_count(AutoModelForCausalLM, config) == sum(p.numel() for p in built.parameters())
    untied = parameter_count(AutoModelForCausalLM, config.__class__(**{**config.to_dict(), "tie_word_embeddings": False}))
    assert untied - parameter_count(AutoModelForCausalLM, config) == config.vocab_size * config.hidden_size
