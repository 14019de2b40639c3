"""lrd.load_model: local folders, anatomy table, errors; the real offline panel (integration)."""

from __future__ import annotations

import numpy as np
import pytest

import lrd
from lrd.models import ARCHITECTURES


def test_local_folder_loads_with_kind_and_anatomy(tiny_encoder, tiny_decoder):
    assert (tiny_encoder.kind, tiny_encoder.n_layers, tiny_encoder.hidden_size) == ("encoder", 3, 32)
    assert (tiny_decoder.kind, tiny_decoder.n_layers, tiny_decoder.hidden_size) == ("decoder", 4, 32)
    assert len(tiny_encoder.blocks) == 3 and len(tiny_decoder.blocks) == 4
    assert tiny_encoder.final_norm is None and tiny_decoder.final_norm is not None


def test_fingerprint_is_stable_and_content_based(tiny_encoder_dir, tiny_encoder):
    again = lrd.load_model(str(tiny_encoder_dir))
    assert again.fingerprint == tiny_encoder.fingerprint


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


def test_unsupported_architecture_for_layer_access_is_named(tiny_encoder_dir):
    model = lrd.load_model(str(tiny_encoder_dir))
    model.model_type = "exotic"
    with pytest.raises(NotImplementedError, match="exotic.*ARCHITECTURES"):
        model.blocks


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
