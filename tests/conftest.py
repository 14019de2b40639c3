"""Fixtures: tiny random models (unit tier) and the real offline panel (integration tier)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

WORDS = "the a cat dog sat on mat layer model text is good bad very not and of to in".split()


def _tokenizer(bert: bool):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] if bert else ["<pad>", "<unk>", "<s>", "</s>"]
    vocab = {w: i for i, w in enumerate(specials + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token=specials[1]))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if bert:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
        return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]",
                                       cls_token="[CLS]", sep_token="[SEP]")
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>",
                                   bos_token="<s>", eos_token="</s>")


def _save_bert(out: Path, *, n_layers: int, seed: int) -> Path:
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    tok = _tokenizer(bert=True)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=n_layers, num_attention_heads=4,
                     intermediate_size=64, max_position_embeddings=64)
    BertModel(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out


def _save_llama(out: Path, *, n_layers: int, seed: int) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    tok = _tokenizer(bert=False)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=n_layers, num_attention_heads=4,
                      num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64,
                      pad_token_id=tok.pad_token_id)
    LlamaForCausalLM(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_encoder_dir(tmp_path_factory) -> Path:
    """A 3-block random BERT with a 24-word tokenizer, saved as a local folder."""
    return _save_bert(tmp_path_factory.mktemp("tiny-bert"), n_layers=3, seed=0)


@pytest.fixture(scope="session")
def tiny_decoder_dir(tmp_path_factory) -> Path:
    """A 4-block random Llama with the same tiny vocabulary, saved as a local folder."""
    return _save_llama(tmp_path_factory.mktemp("tiny-llama"), n_layers=4, seed=0)


@pytest.fixture(scope="session")
def tiny_encoder2_dir(tmp_path_factory) -> Path:
    """A second random BERT (4 blocks, other weights), for panels of two encoders."""
    return _save_bert(tmp_path_factory.mktemp("tiny-bert-2"), n_layers=4, seed=1)


@pytest.fixture(scope="session")
def tiny_decoder2_dir(tmp_path_factory) -> Path:
    """A second random Llama (3 blocks, other weights), for panels of two decoders."""
    return _save_llama(tmp_path_factory.mktemp("tiny-llama-2"), n_layers=3, seed=1)


@pytest.fixture(scope="session")
def tiny_encoder(tiny_encoder_dir):
    import lrd

    return lrd.load_model(str(tiny_encoder_dir))


@pytest.fixture(scope="session")
def tiny_decoder(tiny_decoder_dir):
    import lrd

    return lrd.load_model(str(tiny_decoder_dir))


@pytest.fixture
def lrd_home(tmp_path, monkeypatch) -> Path:
    """An empty, private LRD_HOME for tests that write to the cache."""
    monkeypatch.setenv("LRD_HOME", str(tmp_path / "lrd-home"))
    return tmp_path / "lrd-home"


def _panel_available(*keys: str) -> bool:
    from lrd.engine import packs as assets

    return all((assets.PACKS[k].path / assets.MANIFEST).is_file() for k in keys)


@pytest.fixture(scope="session")
def require_panel():
    """Skip unless the offline packs are built (``lrd fetch``); CI always builds them first."""
    def need(*keys: str):
        if not _panel_available(*keys):
            if os.environ.get("CI"):
                pytest.fail(f"offline packs {keys} missing in CI: `lrd fetch` must run before the tests")
            pytest.skip(f"offline packs {keys} not built; run `lrd fetch`")
    return need
