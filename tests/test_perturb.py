"""LRD_PERTURB: float noise on model outputs, after the caches, keyed apart (lrd.engine.perturb)."""

from __future__ import annotations

import numpy as np
import pytest

from lrd.engine.perturb import ENV_VAR, perturb, perturbation_level


@pytest.mark.parametrize("raw, level", [(None, 0.0), ("", 0.0), ("0", 0.0), ("1e-6", 1e-6), (" 2e-7 ", 2e-7)])
def test_level_from_the_environment(monkeypatch, raw, level):
    if raw is None:
        monkeypatch.delenv(ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(ENV_VAR, raw)
    assert perturbation_level() == level


@pytest.mark.parametrize("raw", ["abc", "-1e-6", "0.5", "nan", "inf"])
def test_bad_level_is_an_error_naming_the_variable(monkeypatch, raw):
    monkeypatch.setenv(ENV_VAR, raw)
    with pytest.raises(ValueError, match=ENV_VAR):
        perturbation_level()


def test_perturb_is_relative_seeded_and_keeps_dtype(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "1e-6")
    x = np.random.default_rng(0).normal(size=(4, 50, 8)).astype(np.float32) * 100
    y = perturb(x, tag="a")
    assert y.dtype == np.float32 and y.shape == x.shape
    rel = np.abs(y.astype(np.float64) / x - 1)
    assert 1e-7 < np.median(rel) < 2e-6 and rel.max() < 1e-5  # about 1e-6 relative, no more
    np.testing.assert_array_equal(perturb(x, tag="a"), y)  # reproducible
    assert not np.array_equal(perturb(x, tag="b"), y)  # the tag seeds the noise


def test_no_perturbation_by_default_or_on_integers(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    x = np.ones(3)
    assert perturb(x, tag="a") is x
    monkeypatch.setenv(ENV_VAR, "1e-6")
    labels = np.arange(3)
    assert perturb(labels, tag="a") is labels


def test_extract_perturbs_after_the_cache(tiny_encoder, lrd_home, monkeypatch):
    import lrd

    texts = ["the cat sat on the mat", "a dog is good", "not bad"]
    monkeypatch.delenv(ENV_VAR, raising=False)
    exact = lrd.extract(tiny_encoder, texts)
    monkeypatch.setenv(ENV_VAR, "1e-6")
    noisy = lrd.extract(tiny_encoder, texts)  # read from the cache, perturbed on the way out
    assert not np.array_equal(noisy, exact)
    np.testing.assert_allclose(noisy, exact, rtol=1e-5)
    (entry,) = (lrd_home / "states").glob("*.npy")
    from lrd.engine.cache import open_checked

    with open_checked(entry) as f:
        np.testing.assert_array_equal(np.load(f), exact)  # the cache keeps exact states
    (pooled,), tokens = lrd.extract_variants(tiny_encoder, texts, ["mean"], return_tokens=True)
    np.testing.assert_array_equal(pooled, noisy)
    monkeypatch.delenv(ENV_VAR)
    _, exact_tokens = lrd.extract(tiny_encoder, texts, return_tokens=True)
    assert all(not np.array_equal(t, e) for t, e in zip(tokens, exact_tokens))
    np.testing.assert_allclose(np.concatenate(tokens, 1), np.concatenate(exact_tokens, 1), rtol=1e-5, atol=1e-6)


def test_scoring_and_removal_outputs_are_perturbed(tiny_decoder, tiny_encoder, monkeypatch):
    import pandas as pd

    from lrd.methods.relevance import encoder_removal_states, removal_sweep, taylor_importance
    from lrd.engine.scoring import build_requests, loglikelihoods
    from lrd.engine.tasks import Task

    frame = pd.DataFrame({"contexts": [["the cat sat on"] * 2, ["a dog is"] * 2], "choices": [[" the mat", " a dog"],
                          [" good", " bad"]], "label": [0, 1], "split": "test"})
    requests = build_requests(tiny_decoder, Task("toy", "multiple_choice", frame, None, "test"))
    outputs = {}
    for level in ("", "1e-6"):
        monkeypatch.setenv(ENV_VAR, level)
        sweep = removal_sweep(tiny_decoder, requests, [[1], [2]])
        outputs[level] = {"lls": loglikelihoods(tiny_decoder, requests), "sweep lls": sweep.lls,
                          "cosine": sweep.cosine, "last token": sweep.last_token,
                          "taylor": taylor_importance(tiny_decoder, requests),
                          "encoder states": encoder_removal_states(tiny_encoder, ["a cat", "the dog sat"])[0]}
    for name, exact in outputs[""].items():
        noisy = outputs["1e-6"][name]
        assert not np.array_equal(noisy, exact), name
        np.testing.assert_allclose(noisy, exact, rtol=1e-5, err_msg=name)


def test_unit_keys_depend_on_the_perturbation(tiny_encoder_dir, monkeypatch):
    from lrd.units import models_and_tasks_units

    (unit,) = models_and_tasks_units(models=[str(tiny_encoder_dir)], task="sst2", n_samples=8, dtype="float32")
    unit = type(unit)(unit.chapter, unit.func, unit.model, unit.params)  # no task content in the key
    monkeypatch.delenv(ENV_VAR, raising=False)
    exact = unit.key()
    monkeypatch.setenv(ENV_VAR, "0")
    assert unit.key() == exact
    monkeypatch.setenv(ENV_VAR, "1e-6")
    assert unit.key() != exact
    monkeypatch.setenv(ENV_VAR, "2e-6")
    assert len({exact, unit.key()}) == 2
