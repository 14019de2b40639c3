"""Model kinds (lrd.engine.kinds): the groupings the papers use, read from configs and packs."""

from types import SimpleNamespace as Config

import pandas as pd
import pytest

from lrd.engine.kinds import GROUPINGS, grouped, model_kind
from lrd.verdicts.claims import CLAIM_GROUPINGS, CLAIMS, GROUPING_TEXT, grouping_table


def test_a_bidirectional_gemma_backbone_is_a_decoder_based_embedder():
    kind = model_kind(Config(model_type="gemma3_text", use_bidirectional_attention=True,
                             architectures=["Gemma3TextModel"]), kind="encoder", info={"kind": "encoder"})
    assert (kind.attention, kind.backbone, kind.role, kind.family) == (
        "bidirectional", "decoder", "embedder", "decoder-based embedder")


def test_a_bert_embedder_is_encoder_based_and_bidirectional():
    kind = model_kind(Config(model_type="bert", is_decoder=False, architectures=["BertModel"]), kind="encoder")
    assert (kind.attention, kind.backbone, kind.family) == ("bidirectional", "encoder", "encoder-based embedder")


def test_a_causal_decoder_embedder_keeps_causal_attention():
    """A decoder-family embedder without a bidirectional flag (e5-mistral style) is causal."""
    kind = model_kind(Config(model_type="mistral", architectures=["MistralModel"]), kind="encoder")
    assert (kind.attention, kind.backbone, kind.role) == ("causal", "decoder", "embedder")


@pytest.mark.parametrize("name, tuning", [("Qwen/Qwen2.5-0.5B-Instruct", "instruct"), ("google/gemma-2-2b-it", "instruct"),
                                          ("EleutherAI/pythia-410m", "base"), ("meta-llama/Llama-2-7b-chat-hf", "instruct"),
                                          ("my/italian-model", "base")])
def test_a_hub_model_s_tuning_is_read_from_its_name(name, tuning):
    kind = model_kind(Config(model_type="llama"), kind="decoder", name=name)
    assert (kind.tuning, kind.tuning_source) == (tuning, "name")
    assert kind.family == ("instruct LLM" if tuning == "instruct" else "base LLM")


def test_a_pack_s_stated_tuning_wins_over_the_name():
    kind = model_kind(Config(model_type="gemma3_text"), kind="decoder", info={"tuning": "base"}, name="x-instruct")
    assert (kind.tuning, kind.tuning_source, kind.family) == ("base", "pack", "base LLM")


def test_bad_kind_and_tuning_are_errors():
    with pytest.raises(ValueError, match="kind must be"):
        model_kind(Config(model_type="bert"), kind="embedder")
    with pytest.raises(ValueError, match="tuning must be"):
        model_kind(Config(model_type="llama"), kind="decoder", info={"tuning": "chat"})


#: The eight packs' families, from their model cards (EmbeddingGemma: a Gemma 3 stack run bidirectionally).
PANEL_FAMILIES = {"minilm": "encoder-based embedder", "mpnet": "encoder-based embedder",
                  "e5small": "encoder-based embedder", "embeddinggemma": "decoder-based embedder",
                  "smollm2": "instruct LLM", "gemma3": "base LLM", "qwen": "instruct LLM", "qwen15": "instruct LLM"}


def test_every_pack_states_what_its_kind_needs():
    from lrd.engine.packs import MODEL_PACKS

    assert set(PANEL_FAMILIES) == set(MODEL_PACKS)
    for key, pack in MODEL_PACKS.items():
        assert pack.info["kind"] == ("encoder" if PANEL_FAMILIES[key].endswith("embedder") else "decoder")
        if pack.info["kind"] == "decoder":
            assert pack.info["tuning"] == PANEL_FAMILIES[key].split()[0]


@pytest.mark.integration
def test_the_offline_panel_s_kinds_from_its_configs(require_panel):
    """Read from the built packs' configs (no weights): EmbeddingGemma's flag makes it bidirectional."""
    from lrd.engine.models import model_kinds

    require_panel(*PANEL_FAMILIES)
    kinds = model_kinds(list(PANEL_FAMILIES)).set_index("model")
    assert kinds["family"].to_dict() == PANEL_FAMILIES
    assert kinds.loc["embeddinggemma", ["attention", "backbone"]].tolist() == ["bidirectional", "decoder"]
    assert (kinds.loc[["smollm2", "gemma3", "qwen", "qwen15"], "attention"] == "causal").all()


def _kinds() -> pd.DataFrame:
    return pd.DataFrame({"model": ["bert", "gemma-emb", "lm"], "attention": ["bidirectional", "bidirectional", "causal"],
                         "backbone": ["encoder", "decoder", "decoder"], "role": ["embedder", "embedder", "language model"]})


def test_grouped_relabels_by_the_grouping_the_claim_uses():
    frame = pd.DataFrame({"model": ["bert", "gemma-emb", "lm", "lm"], "kind": "x"})
    assert list(grouped(frame, _kinds(), "backbone")["kind"]) == ["encoder", "decoder", "decoder", "decoder"]
    assert list(grouped(frame, _kinds(), "attention")["kind"]) == ["encoder", "encoder", "decoder", "decoder"]
    with pytest.raises(ValueError, match="no kind for models"):
        grouped(pd.DataFrame({"model": ["other"]}), _kinds(), "backbone")
    with pytest.raises(ValueError, match="unknown grouping"):
        grouped(frame, _kinds(), "role")


def test_every_claim_has_a_grouping_with_a_text():
    assert set(CLAIM_GROUPINGS) == set(CLAIMS)
    assert set(CLAIM_GROUPINGS.values()) <= set(GROUPING_TEXT)
    assert CLAIM_GROUPINGS["lrd.architecture"] == "backbone" and CLAIM_GROUPINGS["skean.valley"] == "attention"
    assert all(CLAIM_GROUPINGS[c] == "demonstration" for c, claim in CLAIMS.items() if claim.kind == "demonstration")
    assert set(GROUPINGS) <= set(GROUPING_TEXT)


def test_grouping_table_lists_each_group_s_models():
    table = grouping_table(_kinds(), "lrd_families").set_index("claim")
    arch = table.loc[CLAIMS["lrd.architecture"].label, "models"]
    assert arch == "encoder: bert; decoder: gemma-emb, lm"
    valley = grouping_table(_kinds(), "mid_layer").set_index("claim").loc[CLAIMS["skean.valley"].label, "models"]
    assert valley == "bidirectional: bert, gemma-emb; causal: lm"
    cos = grouping_table(_kinds(), "cosine_vs_ablation", pruned=["lm"]).set_index("claim")
    assert cos.loc[CLAIMS["cosine.correlation"].label, "models"] == "lm"
    assert cos.loc[CLAIMS["cosine.theory"].label, "models"] == "-"
    assert cos.loc[CLAIMS["cosine.olmo"].label, "models"] == "none of the panel"  # OLMo-7B's claim, OLMo-7B only


def test_the_anatomy_table_s_decoder_rows_are_the_decoder_families_in_it():
    """Issue 47 (8b): which families are decoders is DECODER_FAMILIES' fact; the anatomy table's
    decoder rows (those with a final norm, read from the *ForCausalLM) are exactly its members, so
    the loader's rule (lrd.engine.models._is_decoder) reads the same set from either."""
    from lrd.engine.kinds import DECODER_FAMILIES
    from lrd.engine.models import ARCHITECTURES

    with_norm = {k for k, v in ARCHITECTURES.items() if v["final_norm"] is not None}
    assert with_norm == set(ARCHITECTURES) & DECODER_FAMILIES
    assert {"bert", "mpnet", "xlm-roberta"} <= set(ARCHITECTURES) - DECODER_FAMILIES

