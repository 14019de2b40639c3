"""The three packs of issue 29 (embeddinggemma, qwen15, e5small), each loaded once: kind, layer
count, hidden size, a finite pass, layer removal, and a sanity check of the real weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lrd
from lrd.engine.ablation import removed_layers

pytestmark = pytest.mark.integration

NEW = {  # key: (kind, blocks, hidden size, model type), from the upstream model cards
    "embeddinggemma": ("encoder", 24, 768, "gemma3_text"),
    "qwen15": ("decoder", 28, 1536, "qwen2"),
    "e5small": ("encoder", 12, 384, "bert"),
}
# each embedder's documented prompt for symmetric similarity
PROMPTS = {"embeddinggemma": "task: sentence similarity | query: ", "e5small": "query: "}
RELATED = [  # (a, b): the same meaning in other words
    ("A man is playing a guitar on stage.", "Someone performs music with a guitar in front of an audience."),
    ("The stock market fell sharply today.", "Share prices dropped steeply on the exchange this afternoon."),
    ("How do I bake bread at home?", "What is a simple recipe for homemade bread?"),
    ("The cat is sleeping on the sofa.", "A kitten naps on the couch."),
]


@pytest.fixture(scope="module", params=list(NEW))
def new_pack(request, require_panel):
    """One new pack's loaded model at a time (pytest finalises one parameter before the next)."""
    require_panel(request.param)
    return lrd.load_model(request.param)


def test_kind_layers_hidden_size_and_a_finite_pass(new_pack):
    model = new_pack
    assert (model.kind, model.n_layers, model.hidden_size, model.model_type) == NEW[model.name]
    assert len(model.blocks) == model.n_layers
    pooling = "last" if model.kind == "decoder" else "mean"
    states = lrd.extract(model, ["The capital of France is Paris.", "Hi"], pooling=pooling, cache=False)
    assert states.shape == (model.n_layers + 1, 2, model.hidden_size)
    assert np.isfinite(states).all()
    with removed_layers(model, [2, model.n_layers]):
        removed = lrd.extract(model, ["The capital of France is Paris."], pooling=pooling, cache=False)
    assert removed.shape == (model.n_layers - 1, 1, model.hidden_size) and np.isfinite(removed).all()


def test_the_pack_says_where_it_comes_from_and_what_was_done_to_the_weights(new_pack):
    info = new_pack.info
    assert info["upstream"] and info["weights"] and info["kind"] == new_pack.kind


def test_sanity_of_the_real_weights(new_pack):
    """Embedders: each sentence is closer to its paraphrase than to the other pairs' sentences
    (last layer, mean pooling, the model's prompt). qwen15: greedy ' Paris' after the prompt."""
    model = new_pack
    if model.kind == "decoder":
        enc = model.tokenizer("The capital of France is", return_tensors="pt")
        with torch.no_grad():
            nxt = model.model(**enc).logits[0, -1].argmax().item()
        assert model.tokenizer.decode([nxt]) == " Paris"
        return
    prompt = PROMPTS[model.name]
    a, b = ([prompt + pair[i] for pair in RELATED] for i in (0, 1))
    states = lrd.extract(model, a + b, pooling="mean", cache=False)[-1]
    unit = states / np.linalg.norm(states, axis=-1, keepdims=True)
    sim = unit[: len(a)] @ unit[len(a):].T
    off = sim[~np.eye(len(a), dtype=bool)].reshape(len(a), -1)
    assert (np.diag(sim) > off.max(axis=1)).all(), np.round(sim, 3)
    assert np.diag(sim).mean() > off.mean() + 0.1, np.round(sim, 3)
