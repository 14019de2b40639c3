"""lrd.engine.extract: pooling, padding invariance, layer count, cache (tiny random models)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lrd
from lrd.engine.extract import _atomic_save, _cached_states, batches_by_length, pool

TEXTS = ["the cat sat on the mat", "a dog", "the model is very good and not bad",
         "text", "cat and dog sat in the mat of the model", "a good text"]


@pytest.mark.parametrize("side", ["right", "left"])
def test_pool_matches_manual_computation(side):
    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(3, 2, 5, 4, generator=g)  # (layers, batch, seq, d)
    lengths = [5, 2]
    mask = torch.zeros(2, 5, dtype=torch.long)
    for b, n in enumerate(lengths):
        if side == "right":
            mask[b, :n] = 1
        else:
            mask[b, 5 - n:] = 1
    for b, n in enumerate(lengths):
        real = hidden[:, b][:, mask[b].bool()]  # (layers, n, d)
        assert torch.allclose(pool(hidden, mask, "mean")[:, b], real.mean(1))
        assert torch.allclose(pool(hidden, mask, "last")[:, b], real[:, -1])
        assert torch.allclose(pool(hidden, mask, "cls")[:, b], real[:, 0])


def test_pool_rejects_unknown_pooling():
    with pytest.raises(ValueError, match="unknown pooling 'max'"):
        pool(torch.zeros(1, 1, 2, 3), torch.ones(1, 2), "max")


def test_batches_sorted_by_length_cover_all_indices():
    batches = batches_by_length([3, 9, 1, 7, 5], 2)
    assert [b.tolist() for b in batches] == [[1, 3], [4, 0], [2]]


@pytest.mark.parametrize("fixture", ["tiny_encoder", "tiny_decoder"])
def test_extract_has_one_state_per_layer_and_text(fixture, request):
    model = request.getfixturevalue(fixture)
    states = lrd.extract(model, TEXTS, cache=False)
    assert states.shape == (model.n_layers + 1, len(TEXTS), model.hidden_size)
    assert states.dtype == np.float32


@pytest.mark.parametrize("fixture", ["tiny_encoder", "tiny_decoder"])
@pytest.mark.parametrize("pooling", ["mean", "last", "cls"])
@pytest.mark.parametrize("side", ["right", "left"])
def test_text_alone_equals_text_in_padded_batch(fixture, pooling, side, request):
    model = request.getfixturevalue(fixture)
    batch = lrd.extract(model, TEXTS, pooling=pooling, padding_side=side, batch_size=4, cache=False)
    for i, text in enumerate(TEXTS):
        alone = lrd.extract(model, [text], pooling=pooling, cache=False)
        np.testing.assert_allclose(batch[:, i], alone[:, 0], rtol=1e-5, atol=1e-5)


def test_extract_equals_hugging_face_hidden_states(tiny_decoder):
    text = TEXTS[2]
    enc = tiny_decoder.tokenizer([text], return_tensors="pt")
    with torch.no_grad():
        hs = tiny_decoder.model(**enc, output_hidden_states=True).hidden_states
    expected = torch.stack(hs)[:, 0].mean(1).numpy()
    np.testing.assert_allclose(lrd.extract(tiny_decoder, [text], cache=False)[:, 0], expected, rtol=1e-5, atol=1e-6)


def test_token_level_states_are_unpadded(tiny_encoder):
    pooled, tokens = lrd.extract(tiny_encoder, TEXTS, return_tokens=True)
    for i, text in enumerate(TEXTS):
        n = len(tiny_encoder.tokenizer(text)["input_ids"])
        assert tokens[i].shape == (tiny_encoder.n_layers + 1, n, tiny_encoder.hidden_size)
        np.testing.assert_allclose(tokens[i].mean(1), pooled[:, i], rtol=1e-5, atol=1e-6)


def test_cache_roundtrip_and_key(tiny_encoder, lrd_home):
    first = lrd.extract(tiny_encoder, TEXTS)
    files = list((lrd_home / "states").glob("*.npy"))
    assert len(files) == 1
    assert not list((lrd_home / "states").glob(".*tmp"))  # nothing half-written left behind
    np.testing.assert_array_equal(_cached_states(files[0]), first)
    _atomic_save(files[0], np.zeros_like(first))  # a cache hit returns the stored array ...
    assert np.all(lrd.extract(tiny_encoder, TEXTS) == 0)
    lrd.extract(tiny_encoder, TEXTS, pooling="cls")  # ... and other options get other keys
    lrd.extract(tiny_encoder, TEXTS[::-1])
    assert len(list((lrd_home / "states").glob("*.npy"))) == 3


def test_corrupt_cache_entry_is_recomputed(tiny_encoder, lrd_home, capsys):
    first = lrd.extract(tiny_encoder, TEXTS)
    (path,) = (lrd_home / "states").glob("*.npy")
    path.write_bytes(b"not an array")
    capsys.readouterr()
    np.testing.assert_array_equal(lrd.extract(tiny_encoder, TEXTS), first)
    # said on the terminal (lrd.engine.progress.notice), not as a warning; more damage: test_cache_integrity.py
    assert f"{path.name} could not be used" in capsys.readouterr().err


def test_interrupted_extraction_leaves_no_cache_entry(tiny_encoder, lrd_home, monkeypatch):
    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "save", boom)
    with pytest.raises(KeyboardInterrupt):
        lrd.extract(tiny_encoder, TEXTS)
    assert list((lrd_home / "states").iterdir()) == []


@pytest.mark.parametrize("kwargs, message", [
    ({"pooling": "max"}, "unknown pooling"),
    ({"padding_side": "middle"}, "padding_side"),
])
def test_bad_options_are_named(tiny_encoder, kwargs, message):
    with pytest.raises(ValueError, match=message):
        lrd.extract(tiny_encoder, TEXTS, cache=False, **kwargs)


def test_empty_texts_are_rejected(tiny_encoder):
    with pytest.raises(ValueError, match="texts is empty"):
        lrd.extract(tiny_encoder, [], cache=False)
    with pytest.raises(ValueError, match="non-empty string"):
        lrd.extract(tiny_encoder, ["a", ""], cache=False)


def test_nan_states_raise_a_clear_error(tiny_encoder_dir):
    model = lrd.load_model(str(tiny_encoder_dir))
    with torch.no_grad():
        model.blocks[1].output.dense.bias.fill_(float("nan"))
    with pytest.raises(FloatingPointError, match="NaN"):
        lrd.extract(model, TEXTS, cache=False)


# ----------------------------------------------------------------------------- bad inputs (issue 9)


def test_a_single_string_is_a_type_error_not_characters(tiny_encoder):
    with pytest.raises(TypeError, match=r"single str.*\[text\]"):
        lrd.extract(tiny_encoder, "the cat sat", cache=False)


LONG = " ".join(["the cat sat on the mat"] * 30)  # 180 words, more than the 64 positions


def test_default_max_length_respects_a_short_position_table(tiny_encoder, lrd_home):
    from lrd.engine.extract import max_input_length

    assert max_input_length(tiny_encoder) == 64  # max_position_embeddings=64, no tokenizer limit
    states = lrd.extract(tiny_encoder, [LONG, "a dog"])
    np.testing.assert_array_equal(states, lrd.extract(tiny_encoder, [LONG, "a dog"], max_length=64, cache=False))
    lrd.extract(tiny_encoder, [LONG, "a dog"], max_length=64)  # the same cache entry as the default
    assert len(list((lrd_home / "states").glob("*.npy"))) == 1


def test_explicit_max_length_above_the_model_limit_is_an_error(tiny_encoder):
    with pytest.raises(ValueError, match=r"max_length=100 is above .* \(64 tokens"):
        lrd.extract(tiny_encoder, [LONG], max_length=100, cache=False)
    with pytest.raises(ValueError, match="positive integer"):
        lrd.extract(tiny_encoder, [LONG], max_length=0, cache=False)


def _stub(model_type="bert", positions=512, pad=0, tokenizer_limit=int(1e30)):
    from types import SimpleNamespace

    config = SimpleNamespace(model_type=model_type, max_position_embeddings=positions, pad_token_id=pad)
    return SimpleNamespace(name="stub", config=config, model=SimpleNamespace(config=config),
                           tokenizer=SimpleNamespace(model_max_length=tokenizer_limit))


@pytest.mark.parametrize("stub, default, limit", [
    (_stub(), 512, 512),  # BERT-style (minilm): the default stays 512, so cache keys do not change
    (_stub("mpnet", 514, 1, 512), 512, 512),  # RoBERTa-style position offset
    (_stub("roberta", 514, 1), 512, 512),
    (_stub("llama", 8192), 512, 8192),  # decoders: capped at 512 by default
    (_stub("bert", 128), 128, 128),
    (_stub("bert", 512, tokenizer_limit=256), 256, 256),
    (_stub("bert", None), 512, None),  # no stated limit
])
def test_max_length_default_and_limit(stub, default, limit):
    from lrd.engine.extract import max_input_length, resolve_max_length

    assert max_input_length(stub) == limit
    assert resolve_max_length(stub, None) == default
    assert resolve_max_length(stub, default) == default


@pytest.mark.integration
@pytest.mark.parametrize("key", ["minilm", "mpnet", "smollm2", "gemma3", "qwen"])
def test_panel_default_max_length_is_512_so_cache_keys_are_unchanged(key, require_panel):
    from lrd.engine.extract import resolve_max_length

    require_panel(key)
    assert resolve_max_length(lrd.load_model(key), None) == 512


@pytest.mark.parametrize("max_tokens", [None, 1, 7, 20, 1000])
def test_token_budget_batches_cover_every_text_once(max_tokens):
    from lrd.engine.extract import batches_by_length

    lengths = [3, 17, 5, 5, 40, 1, 9, 12, 2, 8]
    batches = batches_by_length(lengths, 4, max_tokens)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    for b in batches:
        longest = max(lengths[i] for i in b)
        assert len(b) <= 4
        assert max_tokens is None or len(b) == 1 or len(b) * longest <= max_tokens
    if max_tokens == 20:  # longest first: 40 alone, then 17 alone (2 x 17 > 20), 12 alone, then pairs
        assert [len(b) for b in batches][:3] == [1, 1, 1]


def test_token_budget_does_not_change_the_states(tiny_decoder):
    texts = ["a dog is good", "the cat sat on the mat and the dog sat on the cat", "bad", "the layer model text is bad"]
    plain = lrd.extract(tiny_decoder, texts, max_batch_tokens=10_000, cache=False)
    small = lrd.extract(tiny_decoder, texts, max_batch_tokens=4, cache=False)
    np.testing.assert_allclose(small, plain, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="max_batch_tokens"):
        lrd.extract(tiny_decoder, texts, max_batch_tokens=0, cache=False)


def test_two_processes_needing_the_same_states_run_the_model_once(tiny_encoder, lrd_home, monkeypatch):
    """`lrd book`'s workers: the second caller waits for the first one's entry (an OS file lock,
    which also separates two threads: flock locks belong to open files) instead of computing it again."""
    import threading
    import time

    from lrd.engine import extract as extract_module

    calls, run = [], extract_module._run

    def slow_run(*args, **kwargs):
        calls.append(threading.current_thread().name)
        time.sleep(0.5)  # long enough for the other caller to arrive while this one computes
        return run(*args, **kwargs)

    monkeypatch.setattr(extract_module, "_run", slow_run)
    out = {}
    threads = [threading.Thread(target=lambda k=k: out.__setitem__(k, lrd.extract(tiny_encoder, TEXTS)), name=f"w{k}")
               for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1, f"the model ran {len(calls)} times for one cache entry"
    np.testing.assert_array_equal(out[0], out[1])
    assert len(list((lrd_home / "states").glob("*.npy"))) == 1 and (lrd_home / "locks").is_dir()
