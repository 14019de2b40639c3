"""Blocks, final norm and embeddings of any family: derived from the model, checked against the
table, and exercised by layer removal and the final-norm variant on tiny random models.

Every family below is a random-weight model with 3 blocks saved to a folder and loaded by path,
like a user's model; the families of ``lrd.engine.models.ARCHITECTURES`` and held-out ones (Phi,
DistilBERT) that have no row.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import lrd
from lrd.engine.ablation import removed_layers
from lrd.engine.models import ARCHITECTURES, _get, derive_anatomy

from conftest import _tokenizer

DECODERS = ["llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3", "olmo", "olmo2",
            "granite", "smollm3", "gpt2", "gpt_neox", "opt", "phi"]
ENCODERS = ["bert", "roberta", "xlm-roberta", "mpnet", "deberta-v2", "electra", "distilbert"]
HELD_OUT = {"phi", "distilbert"}  # no row in the table: derived
TINY = dict(hidden_size=32, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
            max_position_embeddings=64, head_dim=8, pad_token_id=0, bos_token_id=2, eos_token_id=3,
            ffn_dim=64, word_embed_proj_dim=32, hidden_dim=64)  # the last three: OPT's and DistilBERT's names
TEXTS = ["the cat sat on the mat", "a dog is good", "not very bad and very good text of the layer"]


def test_every_table_family_and_the_held_out_ones_are_tested():
    assert set(ARCHITECTURES) <= set(DECODERS + ENCODERS)
    assert HELD_OUT.isdisjoint(ARCHITECTURES)


def _save(family: str, folder, **overrides) -> None:
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    tok = _tokenizer(bert=family in ENCODERS)
    cfg = AutoConfig.for_model(family, vocab_size=len(tok), **{**TINY, **overrides})
    torch.manual_seed(0)
    (AutoModel if family in ENCODERS else AutoModelForCausalLM).from_config(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)


@pytest.fixture(scope="module", params=DECODERS + ENCODERS)
def family(request, tmp_path_factory):
    """``(family, folder, loaded model)``; the model has run no forward yet."""
    folder = tmp_path_factory.mktemp(request.param)
    _save(request.param, folder)
    return request.param, folder, lrd.load_model(str(folder))


def _extract(model, **kw) -> np.ndarray:
    return lrd.extract(model, TEXTS, cache=False, **kw)


def test_states_are_the_same_before_between_and_after_removals(family):
    """Consecutive removals installed transformers' capture hooks twice: '7 hidden states, expected 4'."""
    name, folder, model = family
    before = _extract(model)
    assert before.shape == (4, len(TEXTS), 32)
    removed = []
    for _ in range(3):
        with removed_layers(model, [2]):
            removed.append(_extract(model))
        np.testing.assert_array_equal(_extract(model), before)
    assert removed[0].shape[0] == 3
    for again in removed[1:]:
        np.testing.assert_array_equal(again, removed[0])
    fresh = lrd.load_model(str(folder))  # its first forward inside a removal
    with removed_layers(fresh, [1, 3]):
        assert _extract(fresh).shape[0] == 2
    np.testing.assert_allclose(_extract(fresh), before, rtol=1e-6, atol=1e-6)


def test_the_derived_anatomy_is_the_tables_row_and_fits_the_model(family):
    name, _, model = family
    row = derive_anatomy(model.model)
    assert len(_get(model.model, row["blocks"])) == model.n_layers == 3
    assert _get(model.model, row["embeddings"]) is model.model.get_input_embeddings()
    assert (row["final_norm"] is None) == (model.kind == "encoder")
    if name in ARCHITECTURES:
        assert {k: row[k] for k in ("blocks", "final_norm")} == {k: ARCHITECTURES[name][k] for k in ("blocks", "final_norm")}
    else:
        assert model.anatomy == row


def _without_block(model, layer: int):
    """The reference: the same weights in a model built with block ``layer`` (1-based) deleted."""
    hf = model.model
    prefix = model.anatomy["blocks"] + "."
    cfg = hf.config.__class__.from_dict(hf.config.to_dict())
    cfg.num_hidden_layers = hf.config.num_hidden_layers - 1
    if getattr(cfg, "layer_types", None) is not None:
        cfg.layer_types = [t for i, t in enumerate(hf.config.layer_types) if i != layer - 1]
    state = {}
    for k, v in hf.state_dict().items():
        if k.startswith(prefix):
            idx, rest = k[len(prefix):].split(".", 1)
            if int(idx) == layer - 1:
                continue
            k = f"{prefix}{int(idx) - (int(idx) > layer - 1)}.{rest}"
        state[k] = v
    ref = type(hf)(cfg).eval()
    ref.load_state_dict(state, strict=True)
    return dataclasses.replace(model, model=ref, n_layers=model.n_layers - 1, fingerprint="reference")


@pytest.mark.parametrize("layer", [1, 2, 3])
def test_removing_a_block_equals_the_model_built_without_it(family, layer):
    _, _, model = family
    with removed_layers(model, [layer]):
        got = _extract(model)
    np.testing.assert_allclose(got, _extract(_without_block(model, layer)), rtol=1e-5, atol=1e-5)


def test_the_final_norm_variant_equals_the_truncated_models_last_state(family):
    _, _, model = family
    if model.kind == "encoder":
        with pytest.raises(ValueError, match="no final norm"):
            _extract(model, final_norm=True)
        return
    plain, normed = _extract(model), _extract(model, final_norm=True)
    np.testing.assert_allclose(normed[-1], plain[-1], rtol=1e-6, atol=1e-6)
    for l in range(1, model.n_layers):
        with removed_layers(model, range(l + 1, model.n_layers + 1)):
            np.testing.assert_allclose(normed[l], _extract(model)[-1], rtol=1e-4, atol=1e-5)
    assert not np.allclose(normed[1], plain[1])


def test_a_family_whose_final_norm_cannot_be_derived_names_the_row_to_add(tmp_path, monkeypatch):
    """OPT with a projection after its final norm: no module maps the last block to the output."""
    _save("opt", tmp_path, word_embed_proj_dim=16)
    model = lrd.load_model(str(tmp_path))
    monkeypatch.delitem(ARCHITECTURES, "opt")
    with pytest.raises(NotImplementedError, match=r"'opt'.*final norm.*ARCHITECTURES\['opt'\]"):
        with removed_layers(model, [1]):
            pass


def test_ambiguous_block_lists_name_the_row_to_add():
    from transformers import T5Config, T5Model

    model = T5Model(T5Config(vocab_size=40, d_model=16, d_kv=4, d_ff=32, num_layers=2, num_heads=4))
    with pytest.raises(NotImplementedError, match=r"several block lists.*encoder.block.*ARCHITECTURES\['t5'\]"):
        derive_anatomy(model)


def test_a_bidirectional_gemma3_backbone_is_an_encoder_whose_row_is_read_below_the_base_prefix(tmp_path):
    """EmbeddingGemma's shape: a Gemma3TextModel (AutoModel) with bidirectional attention. Its
    blocks are ``layers``, not the causal LM's ``model.layers``; removal and extraction work on it."""
    from transformers import Gemma3TextConfig, Gemma3TextModel

    tok = _tokenizer(bert=False)
    cfg = Gemma3TextConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                           num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=64,
                           use_bidirectional_attention=True, pad_token_id=0)
    torch.manual_seed(0)
    Gemma3TextModel(cfg).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    model = lrd.load_model(str(tmp_path))
    assert model.kind == "encoder" and type(model.model).__name__ == "Gemma3TextModel"
    assert model.anatomy == {"blocks": "layers", "final_norm": "norm", "embeddings": "embed_tokens"}
    assert derive_anatomy(model.model) == model.anatomy
    before = _extract(model)
    assert before.shape == (4, len(TEXTS), 32)
    with removed_layers(model, [2]):
        assert len(model.blocks) == 2
        removed = _extract(model)
    assert removed.shape == (3, len(TEXTS), 32) and not np.allclose(removed[-1], before[-1])
    np.testing.assert_array_equal(_extract(model), before)
