"""lrd.extract(final_norm=True): the model's final norm applied to every layer before pooling."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lrd
from lrd.engine.extract import cache_key

TEXTS = ["the cat sat on the mat", "a dog is good", "not very bad and very good text of the layer"]


def test_final_norm_equals_truncated_model_states(tiny_decoder_dir, lrd_home):
    """Layer l with the norm equals the last state of the model cut after block l (the paper's way)."""
    model = lrd.load_model(str(tiny_decoder_dir))  # its own copy: truncating it must not leak into other tests
    plain = lrd.extract(model, TEXTS, cache=False)
    normed = lrd.extract(model, TEXTS, final_norm=True, cache=False)
    np.testing.assert_allclose(normed[-1], plain[-1], rtol=1e-6, atol=1e-6)  # already normed by HF
    full = list(model.blocks)
    for l in range(1, len(full)):
        cut = lrd.load_model(str(tiny_decoder_dir))
        cut.model.model.layers = torch.nn.ModuleList(list(cut.blocks)[:l])
        cut.model.config.num_hidden_layers = l
        cut.n_layers = l
        np.testing.assert_allclose(normed[l], lrd.extract(cut, TEXTS, cache=False)[-1], rtol=1e-4, atol=1e-5)
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


class CountForwards:
    """Counts forward calls of a loaded model's base model (a forward hook); ``.handle.remove()`` ends it."""

    def __init__(self, model):
        self.n = 0
        self.handle = model.model.base_model.register_forward_hook(self)

    def __call__(self, *args):
        self.n += 1


def test_extract_variants_one_pass_equals_separate_extractions(tiny_decoder, tmp_path):
    """Several variants from ONE forward pass per batch, identical to (and cached as) separate calls."""
    variants = [{"pooling": "mean"}, {"pooling": "mean", "final_norm": True}, "last",
                {"pooling": "last", "final_norm": True}]
    counter = CountForwards(tiny_decoder)
    try:
        got = lrd.extract_variants(tiny_decoder, TEXTS, variants, batch_size=8, cache=tmp_path)
        assert counter.n == 1  # three texts, one batch, one forward for all four variants
        separate = [lrd.extract(tiny_decoder, TEXTS, pooling=p, final_norm=f, cache=False)
                    for p, f in (("mean", False), ("mean", True), ("last", False), ("last", True))]
        for a, b in zip(got, separate):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        counter.n = 0
        cached = [lrd.extract(tiny_decoder, TEXTS, pooling=p, final_norm=f, cache=tmp_path)
                  for p, f in (("mean", False), ("mean", True), ("last", False), ("last", True))]
        assert counter.n == 0  # every variant was cached under extract's own key
        for a, b in zip(got, cached):
            np.testing.assert_array_equal(a, b)
        again = lrd.extract_variants(tiny_decoder, TEXTS, variants[:2], cache=tmp_path)
        assert counter.n == 0
        (pooled,), tokens = lrd.extract_variants(tiny_decoder, TEXTS, ["mean"], cache=tmp_path, return_tokens=True)
        assert counter.n == 1  # tokens are never cached: one pass for them
        _, ref_tokens = lrd.extract(tiny_decoder, TEXTS, return_tokens=True)
        for a, b in zip(tokens, ref_tokens):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(pooled, again[0])
    finally:
        counter.handle.remove()


def test_extract_variants_bad_input(tiny_decoder, tiny_encoder):
    with pytest.raises(ValueError, match="non-empty list"):
        lrd.extract_variants(tiny_decoder, TEXTS, {"pooling": "mean"})
    with pytest.raises(ValueError, match="unknown variant option"):
        lrd.extract_variants(tiny_decoder, TEXTS, [{"pooling": "mean", "norm": True}])
    with pytest.raises(ValueError, match="unknown pooling"):
        lrd.extract_variants(tiny_decoder, TEXTS, ["max"])
    with pytest.raises(ValueError, match="no final norm"):
        lrd.extract_variants(tiny_encoder, TEXTS, [{"final_norm": True}])
