"""lrd.methods.suite: one forward pass per task feeds pooled states, the final-norm variant and token metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import lrd
from lrd.methods.suite import task_pass, token_metrics, token_rows
from test_final_norm import CountForwards

TEXTS = ["the cat sat on the mat today", "a dog is good and the layer is bad", "not very bad", "good text of the model",
         "the"]


def test_task_pass_is_one_forward_and_equals_separate_calls(tiny_decoder, lrd_home):
    counter = CountForwards(tiny_decoder)
    try:
        run = task_pass(tiny_decoder, TEXTS, final_norm=True, n_token_prompts=3)
        assert counter.n == 1  # five texts, one batch: pooled, normed and tokens from one pass
    finally:
        counter.handle.remove()
    np.testing.assert_allclose(run.states, lrd.extract(tiny_decoder, TEXTS, cache=False), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(run.normed, lrd.extract(tiny_decoder, TEXTS, final_norm=True, cache=False),
                               rtol=1e-6, atol=1e-6)
    _, tokens = lrd.extract(tiny_decoder, TEXTS[:3], return_tokens=True)
    assert len(run.tokens) == 3
    for a, b in zip(run.tokens, tokens):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    plain = task_pass(tiny_decoder, TEXTS)
    assert plain.normed is None and plain.tokens is None
    np.testing.assert_array_equal(plain.states, run.states)  # now from the cache


def test_token_rows_equal_token_metrics_and_skip_short_prompts(tiny_decoder):
    _, tokens = lrd.extract(tiny_decoder, TEXTS, return_tokens=True)
    mine = token_rows(tokens, model=tiny_decoder.name, task="toy")
    ref = token_metrics(tiny_decoder, TEXTS, task="toy")
    pd.testing.assert_frame_equal(mine, ref)
    from lrd.methods.suite import FORMULA_VARIANTS

    names = {"prompt entropy", "curvature"}
    assert set(mine["measurement"]) == names | {FORMULA_VARIANTS[k] for k in names}
    long_only = token_rows([t for t in tokens if t.shape[1] >= 3], model=tiny_decoder.name, task="toy")
    pd.testing.assert_frame_equal(mine, long_only)  # a 1-2 token prompt is left out, not averaged in
    with pytest.raises(ValueError, match="shorter than 3 tokens"):
        token_rows([t[:, :2] for t in tokens], model="m", task="toy")
