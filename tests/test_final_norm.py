"""lrd.extract(final_norm=True): the model's final norm applied to every layer before pooling."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lrd
from lrd.extract import cache_key

TEXTS = ["the cat sat on the mat", "a dog is good", "not very bad and very good text of the layer"]


def test_final_norm_equals_truncated_model_states(tiny_decoder, lrd_home):
    """Layer l with the norm equals the last state of the model cut after block l (the paper's way)."""
    plain = lrd.extract(tiny_decoder, TEXTS, cache=False)
    normed = lrd.extract(tiny_decoder, TEXTS, final_norm=True, cache=False)
    np.testing.assert_allclose(normed[-1], plain[-1], rtol=1e-6, atol=1e-6)  # already normed by HF
    full = list(tiny_decoder.blocks)
    try:
        for l in range(1, len(full)):
            tiny_decoder.model.model.layers = torch.nn.ModuleList(full[:l])
            tiny_decoder.model.config.num_hidden_layers = l
            tiny_decoder.n_layers = l
            cut = lrd.extract(tiny_decoder, TEXTS, cache=False)
            np.testing.assert_allclose(normed[l], cut[-1], rtol=1e-4, atol=1e-5)
    finally:
        tiny_decoder.model.model.layers = torch.nn.ModuleList(full)
        tiny_decoder.model.config.num_hidden_layers = len(full)
        tiny_decoder.n_layers = len(full)
    assert not np.allclose(normed[1], plain[1])


def test_final_norm_needs_a_norm(tiny_encoder):
    with pytest.raises(ValueError, match="no final norm"):
        lrd.extract(tiny_encoder, TEXTS, final_norm=True, cache=False)


def test_default_cache_key_unchanged(tiny_decoder):
    """final_norm=False must not change the key of existing cache entries."""
    key = cache_key(tiny_decoder, TEXTS, pooling="mean", max_length=512, padding_side="right")
    assert key == cache_key(tiny_decoder, TEXTS, pooling="mean", max_length=512, padding_side="right")
    assert key != cache_key(tiny_decoder, TEXTS, pooling="mean", max_length=512, padding_side="right",
                            final_norm=True)
