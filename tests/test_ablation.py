"""Layer removal: equals a model built without the block, for every family of the table; restores."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lrd
import lrd.engine.models
from lrd.engine.ablation import removed_layers


def _gemma3():
    from transformers import Gemma3TextConfig, Gemma3ForCausalLM

    # sliding window 3 on a 12-token input: local and global layers really differ
    cfg = Gemma3TextConfig(vocab_size=40, hidden_size=32, intermediate_size=64, num_hidden_layers=5,
                           num_attention_heads=4, num_key_value_heads=2, head_dim=8, sliding_window=3,
                           layer_types=["sliding_attention", "full_attention", "sliding_attention",
                                        "sliding_attention", "full_attention"], max_position_embeddings=64)
    return Gemma3ForCausalLM, cfg


def _gemma3_embedder():
    """EmbeddingGemma's architecture: the Gemma 3 backbone alone (AutoModel), bidirectional."""
    from transformers import Gemma3TextModel

    _, cfg = _gemma3()
    cfg.use_bidirectional_attention = True
    return Gemma3TextModel, cfg


def _qwen2():
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(vocab_size=40, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                      use_sliding_window=True, sliding_window=3, max_window_layers=2)
    return Qwen2ForCausalLM, cfg


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM, LlamaConfig(vocab_size=40, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)


def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    return GPT2LMHeadModel, GPT2Config(vocab_size=40, n_embd=32, n_layer=4, n_head=4, n_positions=64)


def _neox():
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    return GPTNeoXForCausalLM, GPTNeoXConfig(vocab_size=40, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                                             num_attention_heads=4, max_position_embeddings=64)


def _opt():
    from transformers import OPTConfig, OPTForCausalLM

    return OPTForCausalLM, OPTConfig(vocab_size=40, hidden_size=32, ffn_dim=64, num_hidden_layers=4,
                                     num_attention_heads=4, max_position_embeddings=64, word_embed_proj_dim=32)


def _bert():
    from transformers import BertConfig, BertModel

    return BertModel, BertConfig(vocab_size=40, hidden_size=32, num_hidden_layers=4, num_attention_heads=4,
                                 intermediate_size=64, max_position_embeddings=64)


def _mpnet():
    from transformers import MPNetConfig, MPNetModel

    return MPNetModel, MPNetConfig(vocab_size=40, hidden_size=32, num_hidden_layers=4, num_attention_heads=4,
                                   intermediate_size=64, max_position_embeddings=64)


FAMILIES = {"llama": _llama, "gemma3_text": _gemma3, "gemma3_text_bidirectional": _gemma3_embedder, "qwen2": _qwen2, "gpt2": _gpt2, "gpt_neox": _neox,
            "opt": _opt, "bert": _bert, "mpnet": _mpnet}


def _build(family):
    cls, cfg = FAMILIES[family]()
    torch.manual_seed(0)
    model = cls(cfg).eval()
    return cls, cfg, model


def _blocks_path(model) -> str:
    from lrd.engine.models import architecture_row

    return architecture_row(model)["blocks"]


def _without(cls, cfg, model, layer: int):
    """The reference: a model built with block ``layer`` (1-based) deleted and its config adjusted."""
    cfg2 = cfg.__class__.from_dict(cfg.to_dict())
    cfg2.num_hidden_layers = cfg.num_hidden_layers - 1
    if getattr(cfg, "layer_types", None) is not None:
        cfg2.layer_types = [t for i, t in enumerate(cfg.layer_types) if i != layer - 1]
    prefix = _blocks_path(model) + "."
    state = {}
    for k, v in model.state_dict().items():
        if k.startswith(prefix):
            idx, rest = k[len(prefix):].split(".", 1)
            if int(idx) == layer - 1:
                continue
            k = f"{prefix}{int(idx) - (int(idx) > layer - 1)}.{rest}"
        state[k] = v
    ref = cls(cfg2).eval()
    ref.load_state_dict(state, strict=True)
    return ref


def _inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, 40, (2, 12), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 9:] = 0  # right padding in the second row
    return {"input_ids": ids, "attention_mask": mask}


def _out(model, **kw):
    with torch.no_grad():
        o = model(**_inputs(), **kw)
    return o.logits if hasattr(o, "logits") else o.last_hidden_state


@pytest.mark.parametrize("family", FAMILIES)
def test_removing_nothing_is_the_intact_model(family):
    _, _, model = _build(family)
    before = _out(model)
    with removed_layers(model, []):
        torch.testing.assert_close(_out(model), before, rtol=0, atol=0)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("layer", [1, 2, 4])
def test_removing_a_block_equals_the_model_built_without_it(family, layer):
    cls, cfg, model = _build(family)
    ref = _without(cls, cfg, model, layer)
    intact, n = _out(model), model.config.num_hidden_layers
    with removed_layers(model, [layer]):
        got = _out(model)
        assert len(_get_blocks(model)) == model.config.num_hidden_layers == n - 1
    torch.testing.assert_close(got, _out(ref), rtol=1e-5, atol=1e-5)
    assert not torch.allclose(got, intact, atol=1e-4)  # the removal did something
    torch.testing.assert_close(_out(model), intact, rtol=0, atol=0)  # and was undone


def _get_blocks(model):
    from lrd.engine.models import _get

    return _get(model, _blocks_path(model))


def test_gemma3_local_global_pattern_follows_the_blocks():
    """Removing a sliding layer must shift the config pattern, not re-label the later blocks."""
    cls, cfg, model = _build("gemma3_text")
    with removed_layers(model, [1]):
        assert model.config.layer_types == ["full_attention", "sliding_attention", "sliding_attention",
                                            "full_attention"]
        assert [b.self_attn.layer_idx for b in _get_blocks(model)] == [0, 1, 2, 3]
        assert [b.self_attn.sliding_window for b in _get_blocks(model)] == [None, 3, 3, None]
    assert model.config.layer_types[0] == "sliding_attention" and model.config.num_hidden_layers == 5
    assert [b.self_attn.layer_idx for b in _get_blocks(model)] == list(range(5))


@pytest.mark.parametrize("family", ["gemma3_text", "llama", "gpt2"])
def test_removal_matches_reference_with_kv_cache_generation(family):
    cls, cfg, model = _build(family)
    ref = _without(cls, cfg, model, 2)
    ids = _inputs()["input_ids"][:1]
    with removed_layers(model, [2]), torch.no_grad():
        got = model.generate(ids, max_new_tokens=6, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        want = ref.generate(ids, max_new_tokens=6, do_sample=False, pad_token_id=0)
    assert torch.equal(got, want)


def test_state_is_restored_after_an_exception():
    _, cfg, model = _build("gemma3_text")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    blocks = list(_get_blocks(model))
    with pytest.raises(RuntimeError, match="boom"):
        with removed_layers(model, [2, 3]):
            raise RuntimeError("boom")
    assert list(_get_blocks(model)) == blocks
    assert model.config.num_hidden_layers == 5 and len(model.config.layer_types) == 5
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())


def test_loaded_model_gets_fewer_layers_and_another_fingerprint(tiny_decoder):
    n, fp = tiny_decoder.n_layers, tiny_decoder.fingerprint
    with removed_layers(tiny_decoder, [2]) as m:
        assert m is tiny_decoder and m.n_layers == n - 1 and m.fingerprint != fp
        states = lrd.extract(m, ["the cat sat"], cache=False)
        assert states.shape[0] == n
    assert (tiny_decoder.n_layers, tiny_decoder.fingerprint) == (n, fp)


def test_an_architecture_that_cannot_be_derived_says_how_to_register(monkeypatch):
    """A bare model without a row whose blocks cannot be found (no ModuleList of the config's length)."""
    cls, cfg, model = _build("llama")
    model.config.num_hidden_layers = 7
    monkeypatch.delitem(lrd.engine.models.ARCHITECTURES, "llama")
    with pytest.raises(NotImplementedError, match=r"no nn.ModuleList of 7 blocks.*ARCHITECTURES\['llama'\]"):
        with removed_layers(model, [1]):
            pass


@pytest.mark.parametrize("layers", [[0], [5], [1, 1]])
def test_bad_layer_numbers_are_named(tiny_decoder, layers):
    with pytest.raises(ValueError, match="layer"):
        with removed_layers(tiny_decoder, layers):
            pass


@pytest.mark.parametrize("layers", [[2.7], [2.0], [True], [1, np.float64(3)]])
def test_non_integer_layers_are_errors_naming_the_fix(tiny_decoder, layers):
    """removed_layers(m, [2.7]) removed block 2."""
    with pytest.raises(ValueError, match=r"integer block numbers.*pass whole numbers"):
        with removed_layers(tiny_decoder, layers):
            pass
    assert tiny_decoder.n_layers == 4


@pytest.mark.parametrize("layers", ["2", 2])
def test_layers_must_be_a_list(tiny_decoder, layers):
    with pytest.raises(TypeError, match=r"list of block numbers.*\[2\]"):
        with removed_layers(tiny_decoder, layers):
            pass


def test_hidden_states_complete_after_a_first_forward_inside_a_removal(tiny_decoder_dir):
    """transformers 5 installs hidden-state hooks on first use: a removal must not hide a block."""
    model = lrd.load_model(str(tiny_decoder_dir))  # fresh: no forward has run yet
    with removed_layers(model, [2]):
        assert lrd.extract(model, ["the cat"], cache=False).shape[0] == model.n_layers + 1
    assert lrd.extract(model, ["the cat"], cache=False).shape[0] == model.n_layers + 1 == 5


def test_encoder_removal_truncates_as_extraction_does(tiny_encoder):
    """A text longer than the model's position table (the tiny BERT has 64) is truncated as
    extraction truncates it, instead of failing inside the embeddings: the intact row equals the
    extracted last layer."""
    from lrd.engine.extract import extract
    from lrd.methods.relevance import encoder_removal_states

    texts = [" ".join(["the cat sat on the mat"] * 30), "a dog is good"]  # 180 words > 64 positions
    pooled, cosine = encoder_removal_states(tiny_encoder, texts, sets=[[1]])
    assert pooled.shape == (2, 2, tiny_encoder.hidden_size) and np.isfinite(cosine).all()
    np.testing.assert_allclose(pooled[0], extract(tiny_encoder, texts, cache=False)[-1], rtol=1e-5, atol=1e-6)
