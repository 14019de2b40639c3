"""Issue 30: where lrd follows the authors' code, and the other variant, each pinned by a closed
form or a hand-computed case (each test fails if the variant it pins changes)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from lrd.aggregation.cayley import cayley_graph, sl2_order
from lrd.metrics.augmentation import dime
from lrd.metrics.curvature import curvature, prompt_curvature
from lrd.metrics.entropy import dataset_entropy, matrix_entropy, prompt_entropy

LOG2, LOG3 = np.log(2.0), np.log(3.0)


def _triangle(d: int) -> np.ndarray:
    """Three unit rows at 120 degrees (centred already), in d >= 2 dimensions: Gram 1 / -1/2."""
    angles = 2 * np.pi * np.arange(3) / 3
    z = np.zeros((3, d))
    z[:, 0], z[:, 1] = np.cos(angles), np.sin(angles)
    return z


# --- matrix-based entropy: the clamp of the code, and which side it builds ------------------------

def test_gram_with_negative_entries_clamped_and_unclamped():
    # Gram [[1, -1/2, -1/2], ...]: spectrum (3/2, 3/2, 0) -> log 2; clamped: the identity -> log 3
    z = _triangle(3)  # n = 3 <= d = 3: the code builds the 3 x 3 Gram matrix
    assert matrix_entropy(z) == pytest.approx(LOG2, abs=1e-12)
    assert matrix_entropy(z, clamp=True) == pytest.approx(LOG3, abs=1e-12)


def test_clamped_value_depends_on_the_side_built():
    # n = 3 > d = 2: the code builds Z^T Z = 3/2 I (no negative entry), so the clamp changes nothing
    z = _triangle(2)
    assert matrix_entropy(z, clamp=True) == pytest.approx(LOG2, abs=1e-12)
    assert matrix_entropy(z) == pytest.approx(LOG2, abs=1e-12)


def test_dataset_and_prompt_entropy_default_to_the_code():
    layers = _triangle(3)[None]  # (1 layer, 3 samples, d = 3), normalised by log min(3, 3)
    assert dataset_entropy(layers)[0] == pytest.approx(1.0, abs=1e-12)
    assert dataset_entropy(layers, clamp=False)[0] == pytest.approx(LOG2 / LOG3, abs=1e-12)
    assert prompt_entropy([layers])[0] == pytest.approx(1.0, abs=1e-12)
    assert prompt_entropy([layers], clamp=False)[0] == pytest.approx(LOG2 / LOG3, abs=1e-12)


def test_prompt_entropy_clamp_uses_each_prompts_own_side():
    # a T = 3 > d = 2 prompt (d x d, clamp inert) batched with a T = 2 <= d prompt (T x T)
    long = _triangle(2)[None]
    short = np.array([[[1.0, 0.0], [-1.0, 0.0]]])  # Gram [[1, -1], [-1, 1]]: 0, clamped: log 2
    got = prompt_entropy([long, short])[0]
    assert got == pytest.approx((LOG2 / LOG2 + LOG2 / LOG2) / 2, abs=1e-12)
    assert prompt_entropy([long, short], clamp=False)[0] == pytest.approx((1.0 + 0.0) / 2, abs=1e-12)


def test_renyi2_frobenius_offset_is_two_log_size():
    eye = np.eye(3)  # trace-one K = I / 3: S_2 = log 3; shortcut -log(||K||_F^2 / 9) = log 27
    assert matrix_entropy(eye, alpha=2) == pytest.approx(LOG3, abs=1e-12)
    assert matrix_entropy(eye, alpha=2, frobenius_offset=True) == pytest.approx(3 * LOG3, abs=1e-12)
    x = np.random.default_rng(0).normal(size=(5, 9))  # m = min(5, 9) = 5
    gap = matrix_entropy(x, alpha=2, frobenius_offset=True) - matrix_entropy(x, alpha=2)
    assert gap == pytest.approx(2 * np.log(5), abs=1e-10)
    with pytest.raises(ValueError, match="alpha = 2"):
        matrix_entropy(x, alpha=1, frobenius_offset=True)


# --- curvature: normalised tokens, |cos|, a zero step as angle 0 ---------------------------------

def test_repeated_token_counts_as_angle_zero_or_is_dropped():
    path = np.array([[0, 0], [1, 0], [1, 1], [1, 1]], dtype=float)  # steps e1, e2, 0
    assert curvature(path, normalize=False, zero_steps="zero") == pytest.approx(np.pi / 4)  # (pi/2 + 0) / 2
    assert curvature(path, normalize=False, zero_steps="drop") == pytest.approx(np.pi / 2)
    # default: the code's; the repeated token stays a zero step after normalisation
    assert curvature(path) == pytest.approx(curvature(path, normalize=True, absolute=True, zero_steps="zero"))
    noisy = path + 1e-7 * np.random.default_rng(0).normal(size=path.shape)  # float noise: still a zero step
    assert curvature(noisy, normalize=False) == pytest.approx(np.pi / 4, abs=1e-5)
    with pytest.raises(ValueError, match="zero_steps"):
        curvature(path, zero_steps="skip")


def test_signed_against_absolute_angle():
    back = np.array([[0, 0], [1, 0], [0, 0]], dtype=float)  # reverses: pi signed, 0 with |cos|
    assert curvature(back, normalize=False, absolute=False) == pytest.approx(np.pi)
    assert curvature(back, normalize=False) == pytest.approx(0.0, abs=1e-12)


def test_normalised_tokens_by_hand():
    path = np.array([[0, 0], [2, 0], [2, 1]], dtype=float)  # raw steps (2, 0), (0, 1): pi/2
    assert curvature(path, normalize=False) == pytest.approx(np.pi / 2)
    u = np.array([[-4, -1] / np.sqrt(17), [2, -1] / np.sqrt(5), [1, 1] / np.sqrt(2)])  # centred, unit rows
    v1, v2 = u[1] - u[0], u[2] - u[1]
    expected = np.arccos(abs(v1 @ v2) / np.linalg.norm(v1) / np.linalg.norm(v2))
    assert curvature(path) == pytest.approx(expected, abs=1e-12)
    assert abs(expected - np.pi / 2) > 0.1  # the case tells the variants apart
    tokens = [np.stack([path, path])]
    assert prompt_curvature(tokens) == pytest.approx([expected, expected], abs=1e-12)


# --- DiME: d x d covariances for N > d, as the code ------------------------------------------------

def _cross(d: int) -> np.ndarray:
    z = np.zeros((4, d))
    z[:, :2] = [[1, 0], [0, 1], [-1, 0], [0, -1]]
    return z


def test_dime_n_greater_than_d_uses_covariances():
    # N = 4 > d = 2: A^T A = 2 I for both views, permuting its axes changes nothing: DiME = 0 exactly
    a = _cross(2)
    assert float(dime(a, a)) == pytest.approx(0.0, abs=1e-12)
    # the N x N variant is the same quantity as the code's once d >= N (zero features added)
    samples = float(dime(a, a, kernel="samples"))
    assert samples == pytest.approx(float(dime(_cross(4), _cross(4))), abs=1e-12)
    assert samples > 0.05  # matched views share information: the two variants differ here
    with pytest.raises(ValueError, match="kernel"):
        dime(a, a, kernel="features")


# --- ILSE Cayley configurations ---------------------------------------------------------------------

def _multiplicity(edge_index: np.ndarray) -> set[int]:
    _, counts = np.unique(edge_index, axis=1, return_counts=True)
    return set(counts.tolist())


@pytest.mark.parametrize("n, times", [(2, 4), (3, 2), (4, 2)])
def test_reference_edge_multiplicity(n, times):
    plain, ref = cayley_graph(n), cayley_graph(n, reference_duplicates=True)
    assert ref.edge_index.shape[1] == sl2_order(n) * 4 * 2  # forward and reverse of every (node, generator)
    assert _multiplicity(ref.edge_index) == {times}
    assert _multiplicity(plain.edge_index) == {1}
    assert np.array_equal(np.unique(ref.edge_index, axis=1), plain.edge_index)


def test_ilse_node_counts():
    from lrd.aggregation.cayley import ilse_layout

    assert ilse_layout(25) == (4, 48, 0)  # every state kept: 25 states on 48 nodes
    assert ilse_layout(25, keep_embedding_layer=False) == (3, 24, 1)  # 24 + 1: embeddings dropped
    assert ilse_layout(7, keep_embedding_layer=False) == (2, 6, 1)
    assert ilse_layout(27, keep_embedding_layer=False) == (4, 48, 0)  # 27 is no |SL(2, Z_n)| + 1
    from lrd.aggregation.encoders import cayley_encoder

    enc = cayley_encoder(5, 25, keep_embedding_layer=False, hidden=8)
    assert enc.num_nodes == 24 and len(enc.layer_nodes) == 24
    x = torch.randn(3, 25, 5)
    changed = x.clone()
    changed[:, 0] += 10.0  # the embedding state does not enter
    enc.eval()
    assert torch.equal(enc(x), enc(changed))
    assert cayley_encoder(5, 25, hidden=8).num_nodes == 48


# --- block influence: the last block before and after the final norm --------------------------------

def _mc_task():
    from lrd.engine.tasks import Task

    frame = pd.DataFrame({"contexts": [["the cat sat on"] * 2, ["a dog is very"] * 2],
                          "choices": [[" the mat", " a dog"], [" good", " bad"]], "label": [0, 1], "split": "test"})
    return Task("toy", "multiple_choice", frame, None, "test")


def test_last_block_relevance_before_and_after_final_norm(tiny_decoder):
    from lrd.engine.scoring import build_requests
    from lrd.methods.relevance import relevance_rows, removal_sweep

    req = build_requests(tiny_decoder, _mc_task(), share_context=False)
    hf = tiny_decoder.model
    blocks = list(hf.model.layers)
    gain = hf.model.norm.weight
    saved = gain.detach().clone()
    pre, post, captured = [], [], {}
    handle = blocks[-1].register_forward_hook(lambda m, a, o: captured.__setitem__("out", o[0] if isinstance(o, tuple) else o))
    try:
        with torch.no_grad():  # a random RMSNorm gain (a unit gain only rescales: cosines unchanged)
            gain.copy_(torch.rand(saved.shape, generator=torch.Generator().manual_seed(0)) * 2)
        sweep = removal_sweep(tiny_decoder, req, batch_size=8)
        with torch.no_grad():
            for row in req.inputs:  # one row at a time: no pad token anywhere
                out = hf(torch.tensor([row]), output_hidden_states=True)
                h_in, h_hf = out.hidden_states[-2][0].double(), out.hidden_states[-1][0].double()
                pre.append(torch.nn.functional.cosine_similarity(h_in, captured["out"][0].double(), dim=-1))
                post.append(torch.nn.functional.cosine_similarity(h_in, h_hf, dim=-1))
    finally:
        handle.remove()
        with torch.no_grad():
            gain.copy_(saved)
    lrd_value = 1 - float(torch.cat(pre).mean())
    shortgpt = 1 - float(torch.cat(post).mean())
    assert sweep.cosine[-1] == pytest.approx(lrd_value, abs=1e-5)
    assert sweep.extra["cosine, last block after final norm"] == pytest.approx(shortgpt, abs=1e-5)
    assert abs(shortgpt - lrd_value) > 1e-3  # the final norm moves the last block's score
    rows, _ = relevance_rows(sweep, req, model="tiny", task="toy")
    short = rows[rows["measurement"] == "cosine relevance (ShortGPT last block)"].sort_values("layer")["value"]
    plain = rows[rows["measurement"] == "cosine relevance"].sort_values("layer")["value"]
    assert np.allclose(short.to_numpy()[:-1], plain.to_numpy()[:-1])
    assert short.to_numpy()[-1] == pytest.approx(shortgpt, abs=1e-5)


def test_code_variants_depend_on_the_basis_only_when_n_exceeds_d():
    # the Gram matrix (N <= d) is rotation invariant even clamped; Z^T Z (N > d) is not
    from scipy.stats import ortho_group

    rng = np.random.default_rng(3)
    wide, tall = rng.normal(size=(1, 6, 10)), rng.normal(size=(1, 30, 5))
    q10, q5 = ortho_group.rvs(10, random_state=1), ortho_group.rvs(5, random_state=2)
    assert dataset_entropy(wide @ q10) == pytest.approx(dataset_entropy(wide), abs=1e-10)
    assert abs(dataset_entropy(tall @ q5)[0] - dataset_entropy(tall)[0]) > 1e-5  # vs 1e-10 above
    assert dataset_entropy(tall @ q5, clamp=False) == pytest.approx(dataset_entropy(tall, clamp=False), abs=1e-10)


# --- the appendix's tables, on hand-made rows ---------------------------------------------------------

def _rows(model, task, measurement, values):
    return pd.DataFrame({"model": model, "task": task, "measurement": measurement, "layer": range(len(values)),
                         "value": values})


def test_relevance_variants_by_hand():
    from lrd.verdicts.fidelity import relevance_variants

    rel = pd.concat([_rows("m", "t", "cosine relevance", [0.1, 0.3, 0.2]),
                     _rows("m", "t", "cosine relevance (ShortGPT last block)", [0.1, 0.3, 0.9])])
    got = relevance_variants(rel).iloc[0]
    assert (got["lrd"], got["ShortGPT"], got["rank lrd"], got["rank ShortGPT"]) == (0.2, 0.9, 2, 3)
    assert got["difference"] == pytest.approx(0.7)


def test_variant_differences_by_hand():
    from lrd.methods.suite import FORMULA_VARIANTS
    from lrd.verdicts.fidelity import variant_differences

    rows = pd.concat([_rows("m", "t", "prompt entropy", [1.0, 0.5, 0.7, 1.0]),
                      _rows("m", "t", FORMULA_VARIANTS["prompt entropy"], [1.0, 0.8, 0.6, 0.9])])
    got = variant_differences(rows).iloc[0]
    assert got["max |diff|"] == pytest.approx(0.3) and got["mean diff"] == pytest.approx((0 - 0.3 + 0.1 + 0.1) / 4)
    assert bool(got["argmin moves"])  # the deepest inner layer: 1 under the code, 2 under the formula


def test_ilse_layouts_are_numbers_and_the_sentence_is_written_from_them():
    from lrd.verdicts.fidelity import ilse_layout_text, ilse_layouts
    # 13 states fill SL(2, Z_3)'s 24 nodes under both configurations; 7 = |SL(2, Z_2)| + 1: ILSE drops one
    assert ilse_layouts(13) == {"n_states": 13, "n": 3, "nodes": 24, "drops_first": False, "lrd_nodes": 24}
    assert ilse_layouts(7)["drops_first"] and ilse_layouts(7)["nodes"] == 6 and ilse_layouts(None) is None
    assert ilse_layout_text("m", 7).startswith("m has 7 states, one more than |SL(2, Z_2)| = 6")
