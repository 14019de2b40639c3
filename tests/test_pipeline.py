"""lrd.engine.pipeline: prefetching, numpy padding, deferred host copies, memory-sized batches;
and the accelerator path of the extraction, exercised on the CPU."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import torch

import lrd
from lrd.engine import extract as extract_module
from lrd.engine.pipeline import HostCopy, accelerator_batch_tokens, pad_rows, prefetch

TEXTS = ["the cat sat on the mat", "a dog", "the model is very good and not bad", "text",
         "cat and dog sat in the mat of the model", "a good text", "bad", "the layer is not good",
         "a cat and a dog and a mat", "very very good", "of to in", "the model text"]


def test_prefetch_yields_every_item_in_order():
    assert list(prefetch(iter(range(50)), depth=3)) == list(range(50))
    assert list(prefetch([], depth=1)) == []


def test_prefetch_raises_the_producers_error_at_its_item():
    def items():
        yield 1
        yield 2
        raise KeyError("broken tokenizer")

    got = []
    with pytest.raises(KeyError, match="broken tokenizer"):
        for x in prefetch(items()):
            got.append(x)
    assert got == [1, 2]


def test_prefetch_stops_its_producer_when_the_consumer_stops():
    produced = []

    def items():
        for i in range(1000):
            produced.append(i)
            yield i

    before = threading.active_count()
    for x in prefetch(items(), depth=2):
        if x == 3:
            break  # closes the generator: the producer must stop, not fill 1000 items
    time.sleep(0.2)
    assert len(produced) <= 3 + 2 + 2  # what was consumed, the queue, the item in hand
    assert threading.active_count() == before


def test_prefetch_runs_ahead_of_the_consumer():
    """While the consumer works on item i, item i + 1 is produced (the point of it)."""
    stamps = {}

    def items():
        for i in range(3):
            time.sleep(0.2)  # tokenising
            stamps[i] = time.perf_counter()
            yield i

    start = time.perf_counter()
    for _ in prefetch(items()):
        time.sleep(0.2)  # the forward pass
    total = time.perf_counter() - start
    assert total < 0.2 * 6 - 0.1  # serial would take 1.2 s; overlapped about 0.8 s


def test_prefetch_inline_produces_each_item_when_asked_in_the_calling_thread():
    """background=False (the CPU): no thread, nothing produced ahead, errors at their item,
    and closing it closes the producer."""
    produced, threads, closed = [], set(), []

    def items():
        try:
            for i in range(5):
                produced.append(i)
                threads.add(threading.current_thread())
                if i == 3:
                    raise KeyError("broken tokenizer")
                yield i
        finally:
            closed.append(True)

    feed = prefetch(items(), background=False)
    assert next(feed) == 0 and produced == [0]  # not one item ahead
    assert next(feed) == 1 and produced == [0, 1]
    feed.close()
    assert closed == [True] and threads == {threading.current_thread()}
    got = []
    with pytest.raises(KeyError, match="broken tokenizer"):
        for x in prefetch(items(), background=False):
            got.append(x)
    assert got == [0, 1, 2]
    with pytest.raises(ValueError, match="depth"):
        prefetch([], depth=0, background=False)


def test_the_cpu_path_starts_no_feeding_thread(tiny_encoder, tiny_decoder, monkeypatch):
    """On the CPU a feeding thread would only take cycles from torch's threads: the extraction,
    the scorer, the removal sweep and the encoder removal produce their batches inline."""
    import pandas as pd

    from lrd.engine import pipeline, scoring
    from lrd.engine.tasks import Task
    from lrd.methods.relevance import encoder_removal_states, removal_sweep

    def no_thread(items, depth):
        raise AssertionError("a feeding thread was started on the CPU")

    monkeypatch.setattr(pipeline, "_threaded", no_thread)
    extract_module.extract(tiny_decoder, TEXTS, batch_size=4, cache=False)
    frame = pd.DataFrame({"contexts": [[w] * 2 for w in TEXTS], "choices": [["the mat", "a dog"]] * len(TEXTS),
                          "label": [0] * len(TEXTS), "split": "test"})
    requests = scoring.build_requests(tiny_decoder, Task("toy", "multiple_choice", frame, None, "test"))
    scoring.loglikelihoods(tiny_decoder, requests, batch_size=4)
    removal_sweep(tiny_decoder, requests, [[1]], batch_size=4)
    encoder_removal_states(tiny_encoder, TEXTS, sets=[[1]], batch_size=4)
    with pytest.raises(AssertionError, match="feeding thread"):  # the accelerator path does start one
        list(prefetch(iter(TEXTS), background=True))


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("bert", [True, False])
def test_pad_rows_equals_the_tokenizers_pad(side, bert, tiny_encoder, tiny_decoder):
    tok = (tiny_encoder if bert else tiny_decoder).tokenizer
    rows = tok(TEXTS)["input_ids"]
    old = tok.padding_side
    tok.padding_side = side
    try:
        want = tok.pad({"input_ids": rows}, return_tensors="pt")
    finally:
        tok.padding_side = old
    ids, mask = pad_rows(rows, tok.pad_token_id, side)
    assert torch.equal(ids, want["input_ids"]) and torch.equal(mask, want["attention_mask"])
    assert ids.dtype == mask.dtype == torch.int64


def test_pad_rows_rejects_an_unknown_side():
    with pytest.raises(ValueError, match="side"):
        pad_rows([[1, 2]], 0, "middle")


def test_host_copy_on_the_cpu_is_the_tensor_itself():
    t = torch.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(HostCopy(t).result(), t.numpy())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_host_copy_from_cuda_lands_in_pinned_memory():
    t = torch.randn(3, 5, device="cuda")
    copy = HostCopy(t)
    assert copy._host.is_pinned()
    np.testing.assert_array_equal(copy.result(), t.cpu().numpy())


def test_accelerator_batch_tokens_closed_form(monkeypatch):
    assert accelerator_batch_tokens(12, 384, 1536, 4, "cpu") is None
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (10 * 2**30, 80 * 2**30))
    per_token = 4 * (2 * 13 * 384 + 4 * 384 + 3 * 1536)
    assert accelerator_batch_tokens(12, 384, 1536, 4, "cuda") == int(0.5 * 10 * 2**30 // per_token)
    # half precision halves the bytes per token: twice the tokens
    assert accelerator_batch_tokens(12, 384, 1536, 2, "cuda") == int(0.5 * 10 * 2**30 // (per_token // 2))
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (10, 80))
    assert accelerator_batch_tokens(12, 384, 1536, 4, "cuda") == 1  # never zero


def test_the_cuda_default_budget_comes_from_free_memory(tiny_decoder, monkeypatch):
    """``batch_token_limit`` on a CUDA device: the estimate from the model's own sizes; explicit wins."""
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (2**30, 2**31))
    monkeypatch.setattr(tiny_decoder, "device", "cuda")
    cfg = tiny_decoder.model.config
    want = accelerator_batch_tokens(cfg.num_hidden_layers, cfg.hidden_size, cfg.intermediate_size, 4, "cuda")
    assert extract_module.batch_token_limit(tiny_decoder, None) == want
    assert extract_module.batch_token_limit(tiny_decoder, 64) == 64
    monkeypatch.setattr(tiny_decoder, "device", "cpu")
    assert extract_module.batch_token_limit(tiny_decoder, None) == extract_module.CPU_BATCH_TOKENS


def test_tokenized_batches_cover_every_text_once_chunked_or_not(tiny_decoder):
    tok = tiny_decoder.tokenizer
    whole = list(extract_module.tokenized_batches(tok, TEXTS, batch_size=3, max_batch_tokens=None, max_length=64,
                                                  padding_side="right"))
    lengths = [len(x) for x in tok(TEXTS)["input_ids"]]
    want = extract_module.batches_by_length(lengths, 3)
    assert [b[0].tolist() for b in whole] == [w.tolist() for w in want]  # unchunked: the global batches
    chunked = list(extract_module.tokenized_batches(tok, TEXTS, batch_size=3, max_batch_tokens=None, max_length=64,
                                                    padding_side="right", chunk=5))
    assert sorted(np.concatenate([b[0] for b in chunked]).tolist()) == list(range(len(TEXTS)))
    assert all(b[0].max() < 5 for b in chunked[:2])  # the first chunk's texts come first
    for idx, ids, mask in chunked:
        assert ids.shape == mask.shape == (len(idx), max(lengths[i] for i in idx))


@pytest.mark.parametrize("fixture", ["tiny_encoder", "tiny_decoder"])
def test_the_accelerator_path_gives_the_cpu_paths_states(fixture, request, monkeypatch):
    """The extraction as it runs on a GPU (chunked tokenisation in a thread, all variants in one
    deferred copy, read a batch late), forced on the CPU: the same states as the CPU path."""
    model = request.getfixturevalue(fixture)
    variants = [{"pooling": "mean"}, {"pooling": "last"}, {"pooling": "cls"}]
    if model.final_norm is not None:
        variants.append({"pooling": "mean", "final_norm": True})
    texts = TEXTS * 3
    plain = lrd.extract_variants(model, texts, variants, batch_size=4, cache=False)
    monkeypatch.setattr(extract_module, "on_accelerator", lambda device: True)
    monkeypatch.setattr(extract_module, "ACCELERATOR_CHUNK_BATCHES", 2)  # 8 texts a chunk: several chunks
    fast = extract_module.extract_variants(model, texts, variants, batch_size=4, max_batch_tokens=10_000, cache=False)
    for a, b in zip(fast, plain):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_non_finite_states_are_caught_on_the_deferred_path(tiny_encoder, monkeypatch):
    monkeypatch.setattr(extract_module, "on_accelerator", lambda device: True)
    monkeypatch.setattr(extract_module, "pool", lambda h, mask, pooling: torch.full(h.shape[:-2] + h.shape[-1:],
                                                                                     float("nan")))
    with pytest.raises(FloatingPointError, match="NaN"):
        extract_module.extract(tiny_encoder, TEXTS, cache=False)


@pytest.mark.parametrize("where", ["extract", "scorer"])
def test_an_error_in_the_loop_stops_the_feeding_thread_at_once(where, tiny_decoder, monkeypatch):
    """The traceback keeps the failed loop's frame alive; the producer must not wait for it.
    The accelerator path (which has the thread) forced on the CPU."""
    from lrd.engine import scoring
    from lrd.engine.tasks import Task

    started = []
    real_thread = threading.Thread

    def recording_thread(*args, **kwargs):
        started.append(kwargs.get("name"))
        return real_thread(*args, **kwargs)

    monkeypatch.setattr(threading, "Thread", recording_thread)
    monkeypatch.setattr(extract_module, "on_accelerator", lambda device: True)
    monkeypatch.setattr(scoring, "on_accelerator", lambda device: True)

    def broken(*args, **kwargs):
        raise RuntimeError("device fault")

    if where == "extract":
        monkeypatch.setattr(extract_module, "pool", broken)
        call = lambda: extract_module.extract(tiny_decoder, TEXTS * 8, batch_size=2, cache=False)  # noqa: E731
    else:
        import pandas as pd

        frame = pd.DataFrame({"contexts": [[w] * 2 for w in TEXTS * 2], "choices": [["the mat", "a dog"]] * 24,
                              "label": [0] * 24, "split": "test"})
        requests = scoring.build_requests(tiny_decoder, Task("toy", "multiple_choice", frame, None, "test"))
        monkeypatch.setattr(scoring, "request_logprobs", broken)
        call = lambda: scoring.loglikelihoods(tiny_decoder, requests, batch_size=2)  # noqa: E731
    with pytest.raises(RuntimeError, match="device fault") as held:  # `held` keeps the traceback
        call()
    time.sleep(0.3)
    assert held.value is not None
    assert "lrd-prefetch" in started  # the thread did run ...
    assert not [t for t in threading.enumerate() if t.name == "lrd-prefetch"]  # ... and is gone
