"""Multiple-choice log-likelihoods and acc / acc_norm, against hand computation and lm-eval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from lrd.methods.relevance import naive_removal_lls, removal_sweep
from lrd.engine.scoring import build_requests, loglikelihoods, mc_accuracy
from lrd.engine.tasks import Task


def _task() -> Task:
    contexts = [["the cat sat on"] * 3, ["a dog is"] * 2, ["the model is very"] * 3,
                ["the cat is good and the dog", "the cat is bad and the dog"]]
    choices = [[" the mat", " a dog", " the layer model text"], [" good", " bad"],
               [" good", " not good", " bad"], [" is good", " is good"]]
    frame = pd.DataFrame({"contexts": contexts, "choices": choices, "label": [0, 1, 2, 0], "split": "test"})
    return Task("toy", "multiple_choice", frame, None, "test")


def _by_hand(model, context: str, continuation: str) -> float:
    tok = model.tokenizer
    ctx = tok(context)["input_ids"]
    whole = tok(context + continuation)["input_ids"]
    with torch.no_grad():
        logp = torch.log_softmax(model.model(torch.tensor([whole])).logits[0].double(), -1)
    return float(sum(logp[t - 1, whole[t]] for t in range(len(ctx), len(whole))))


def test_loglikelihoods_match_hand_computation(tiny_decoder):
    task = _task()
    req = build_requests(tiny_decoder, task)
    got = loglikelihoods(tiny_decoder, req, batch_size=3)  # mixed lengths: left padding is exercised
    want = [_by_hand(tiny_decoder, c, ch) for cs, chs in zip(task.frame["contexts"], task.frame["choices"])
            for c, ch in zip(cs, chs)]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # choices sharing a context share one row, and the result equals unpacked scoring
    assert len(req.inputs) < len(req.item)
    plain = build_requests(tiny_decoder, task, share_context=False)
    assert plain.n_tokens > req.n_tokens
    np.testing.assert_allclose(loglikelihoods(tiny_decoder, plain, batch_size=3), want, rtol=1e-5, atol=1e-5)


def test_acc_norm_divides_by_choice_characters_without_the_delimiter():
    req = type("R", (), {})()
    req.item, req.labels = np.array([0, 0]), np.array([1])
    req.completion_len = np.array([len("a"), len("longer answer")])  # " a", " longer answer"
    lls = np.array([-2.0, -10.0])  # raw: choice 0; per character: -2/1 < -10/13 -> choice 1
    acc = mc_accuracy(lls, req)
    assert acc["acc"].tolist() == [0.0] and acc["acc_norm"].tolist() == [1.0]


def test_completion_lengths_follow_the_harness(tiny_decoder):
    req = build_requests(tiny_decoder, _task())
    assert req.completion_len[:3].tolist() == [len("the mat"), len("a dog"), len("the layer model text")]


def test_matches_lm_eval_harness_hflm(tiny_decoder):
    """lm-eval's HFLM wrapper runs offline on our loaded model object; its numbers are ours."""
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=tiny_decoder.model, tokenizer=tiny_decoder.tokenizer, backend="causal", batch_size=4,
              device="cpu")
    task = _task()
    pairs = [(c, ch) for cs, chs in zip(task.frame["contexts"], task.frame["choices"]) for c, ch in zip(cs, chs)]
    inst = [Instance("loglikelihood", {}, p, i) for i, p in enumerate(pairs)]
    theirs = np.array([ll for ll, _ in lm.loglikelihood(inst, disable_tqdm=True)])
    ours = loglikelihoods(tiny_decoder, build_requests(tiny_decoder, task))
    assert lm_eval.__version__
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("share", [True, False])
@pytest.mark.parametrize("sets", [None, [[2, 3], [1, 4], [3, 4]]])
def test_resumed_sweep_equals_naive(tiny_decoder, sets, share):
    req = build_requests(tiny_decoder, _task(), share_context=share)
    fast = removal_sweep(tiny_decoder, req, sets, batch_size=3)
    slow = naive_removal_lls(tiny_decoder, req, fast.sets[1:], batch_size=3)
    np.testing.assert_allclose(fast.lls, slow, rtol=1e-5, atol=1e-5)
    assert fast.block_forwards < len(fast.sets)  # it did save work
    again = removal_sweep(tiny_decoder, req, sets, resume=False, batch_size=3)
    np.testing.assert_allclose(again.lls, slow, rtol=1e-5, atol=1e-5)


def test_a_set_resumed_from_its_prefix_s_run_is_bit_identical_and_cheaper(tiny_decoder):
    """(1, 3) resumes at block 3 of the run without block 1, (2, 4) at block 4 of the run without
    block 2: the same numbers, to the last bit, as each set resumed from the intact run alone,
    for less work; (3, 4) has no usable prefix run (block 3 is removed in it)."""
    from lrd.methods.relevance import resume_plan

    req = build_requests(tiny_decoder, _task())
    sets = [[1], [1, 3], [2], [2, 4], [3], [3, 4]]
    swept = removal_sweep(tiny_decoder, req, sets, batch_size=3)
    assert resume_plan(swept.sets) == [(0, 0), (0, 1), (1, 3), (0, 2), (3, 4), (0, 3), (0, 3)]
    for k, s in enumerate(swept.sets[1:], start=1):
        alone = removal_sweep(tiny_decoder, req, [s], batch_size=3)
        assert np.array_equal(swept.lls[k], alone.lls[1]), s
    # blocks run per set (L = 4): 3, 1 (was 2), 2, 0 (was 1), 1, 0 (+ 4 for the intact run)
    assert swept.block_forwards == pytest.approx((4 + 3 + 1 + 2 + 0 + 1 + 0) / 4)


def test_cosine_relevance_is_one_minus_mean_token_cosine(tiny_decoder):
    req = build_requests(tiny_decoder, _task(), share_context=False)
    res = removal_sweep(tiny_decoder, req, [], batch_size=3)
    rows = []
    with torch.no_grad():
        for x in req.inputs:
            hs = tiny_decoder.model.base_model(torch.tensor([x]), output_hidden_states=True).hidden_states
            rows.append([torch.cosine_similarity(hs[i][0], hs[i + 1][0], dim=-1) for i in range(len(hs) - 2)])
    # the last hidden state is normed in HF's output: compare blocks 1..L-1
    want = [1 - torch.cat([r[i] for r in rows]).mean().item() for i in range(len(rows[0]))]
    np.testing.assert_allclose(res.cosine[:-1], want, rtol=1e-4, atol=1e-6)


def test_taylor_importance_is_the_directional_derivative_of_the_gold_loss(tiny_decoder):
    """|d/de L(h_l - e (h_l - h_{l-1}))| at e = 0, by finite differences on block 2's output."""
    from lrd.methods.relevance import taylor_importance

    req = build_requests(tiny_decoder, _task())
    imp = taylor_importance(tiny_decoder, req, batch_size=3)
    assert imp.shape == (4,) and np.isfinite(imp).all() and (imp >= 0).all()
    block = tiny_decoder.blocks[1]
    gold = req.choice == req.labels[req.item]

    def loss(eps):
        def hook(mod, args, kwargs, out):
            return out - eps * (out - (args[0] if args else kwargs["hidden_states"]))
        h = block.register_forward_hook(hook, with_kwargs=True)
        try:
            return -loglikelihoods(tiny_decoder, req)[gold].sum()
        finally:
            h.remove()
    e = 1e-3
    fd = (loss(e) - loss(-e)) / (2 * e)
    assert imp[1] == pytest.approx(abs(fd), rel=1e-2, abs=1e-4)


@pytest.mark.integration
@pytest.mark.parametrize("key", ["gemma3", "smollm2"])
def test_packed_context_equals_unpacked_on_the_panel(key, require_panel):
    import lrd

    require_panel(key)
    model = lrd.load_model(key)
    task = lrd.load_task("arc_easy").split("test").subset(3, seed=0)
    packed = loglikelihoods(model, build_requests(model, task), batch_size=2)
    plain = loglikelihoods(model, build_requests(model, task, share_context=False), batch_size=2)
    np.testing.assert_allclose(packed, plain, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("family", sorted(__import__("lrd.engine.scoring", fromlist=["PLAIN_HEADS"]).PLAIN_HEADS))
@pytest.mark.parametrize("softcap", [None, 3.0])
def test_head_on_selected_positions_equals_the_models_own_logits(family, softcap):
    """model_logits runs the body, then the head at the scored positions only: for every family
    of PLAIN_HEADS this must be exactly the causal LM's own logits (Gemma's soft-capping too)."""
    from types import SimpleNamespace

    from test_ablation import FAMILIES
    from lrd.engine.scoring import PLAIN_HEADS, output_logits

    cls, cfg = FAMILIES[family]()
    if softcap is not None:
        if family != "gemma3_text":
            pytest.skip("only Gemma has final logit soft-capping")
        cfg.final_logit_softcapping = softcap
    torch.manual_seed(0)
    hf = cls(cfg).eval()
    assert hf.config.model_type in PLAIN_HEADS
    ids = torch.randint(3, 40, (2, 9), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        full = hf(input_ids=ids).logits
        hidden = hf.base_model(input_ids=ids).last_hidden_state
        rows, cols = torch.tensor([0, 0, 1, 1]), torch.tensor([1, 8, 0, 5])
        mine = output_logits(SimpleNamespace(model=hf), hidden[rows, cols])
    torch.testing.assert_close(mine, full[rows, cols], rtol=1e-5, atol=1e-5)
    if softcap is not None:
        assert mine.abs().max() <= softcap
