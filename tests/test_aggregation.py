"""Layer-aggregation encoders and their training: message passing against references,
permutation equivariance, virtual nodes, a toy task, seeds, splits, item outcomes and memory
(the verdicts are tested in tests/test_fusion_verdicts.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from lrd.aggregation.encoders import (METHODS, DeepSet, GraphEncoder, adjacency, cayley_encoder, count_parameters,
                             fc_encoder, make_method, propagate)
from lrd.aggregation.cayley import cayley_graph
from lrd.aggregation.scores import classification_scores, item_outcomes, similarity_scores
from lrd.aggregation.memory import peak_memory, token_graph_memory
from lrd.aggregation.training import Classification, TrainConfig, few_shot_indices, fit, stratified_holdout


def toy(seed=0, n=160, states=7, dim=24, classes=3, signal_layer=3):
    """States (S, N, d) where one layer carries the class as a large shift."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    x = rng.standard_normal((states, n, dim)).astype(np.float32)
    x[signal_layer] += 4 * rng.standard_normal((classes, dim)).astype(np.float32)[y]
    return x, y, np.arange(n) % 2 == 0


# ----------------------------------------------------------------------------- message passing


@pytest.mark.parametrize("reference_duplicates", [False, True])
def test_scatter_aggregation_equals_dense_adjacency_product(reference_duplicates):
    g = cayley_graph(4, reference_duplicates=reference_duplicates)
    h = torch.randn(3, g.num_nodes, 5)
    ei = torch.as_tensor(g.edge_index)
    assert torch.allclose(propagate(h, ei), propagate(h, ei, dense=adjacency(g.edge_index, g.num_nodes)), atol=1e-5)


def test_adjacency_counts_incoming_edges():
    a = adjacency(np.array([[0, 0, 1], [1, 2, 2]]), 3)  # 0->1, 0->2, 1->2
    assert a.tolist() == [[0, 0, 0], [1, 0, 0], [1, 1, 0]]


@pytest.mark.parametrize("conv", ["gin", "gcn"])
@pytest.mark.parametrize("aggregation", ["dense", "scatter"])
def test_graph_layers_equal_torch_geometric(conv, aggregation):
    pyg = pytest.importorskip("torch_geometric.nn")
    torch.manual_seed(0)
    enc = cayley_encoder(12, 7, hidden=8, conv=conv, dropout=0.0, aggregation=aggregation)
    batch, n = 3, enc.num_nodes
    h0 = enc.node_features(torch.randn(batch, 7, 12))
    ei = torch.as_tensor(cayley_graph(3).edge_index)
    edges = ei.repeat(1, batch) + torch.arange(batch).repeat_interleave(ei.shape[1]) * n  # PyG batching
    if conv == "gin":
        ref = pyg.GINConv(torch.nn.Identity(), eps=0.0)
        out = enc.norms[0](enc.mlps[0](ref(h0.reshape(batch * n, -1), edges)))
    else:
        ref = pyg.GCNConv(8, 8)
        ref.lin.weight.data.copy_(enc.mlps[0].weight.data)
        ref.bias.data.copy_(enc.mlps[0].bias.data)
        out = torch.relu(enc.norms[0](ref(h0.reshape(batch * n, -1), edges)))
    assert torch.allclose(enc.message_passing(h0).reshape(batch * n, -1), out, atol=1e-5)


def test_encoder_is_equivariant_to_node_permutations():
    torch.manual_seed(0)
    g = cayley_graph(3)
    enc = GraphEncoder(10, g.edge_index, g.num_nodes, np.arange(7), hidden=6, num_layers=2, dropout=0.0).eval()
    perm = np.random.default_rng(1).permutation(g.num_nodes)  # node v -> perm[v]
    moved = GraphEncoder(10, perm[g.edge_index], g.num_nodes, perm[:7], hidden=6, num_layers=2, dropout=0.0).eval()
    moved.load_state_dict(enc.state_dict())
    x = torch.randn(4, 7, 10)
    h = enc.message_passing(enc.node_features(x))
    h_moved = moved.message_passing(moved.node_features(x))
    assert torch.allclose(h_moved[:, perm], h, atol=1e-5), "node features move with the nodes"
    assert torch.allclose(moved(x), enc(x), atol=1e-5), "the pooled output does not change"


def test_virtual_nodes_never_enter_the_pooled_output():
    torch.manual_seed(0)
    enc = cayley_encoder(10, 7, hidden=6, dropout=0.0).eval()  # 24 nodes, 17 virtual
    x = torch.randn(2, 7, 10)
    h = enc.message_passing(enc.node_features(x))
    assert torch.allclose(enc(x), h[:, :7].mean(1), atol=1e-6)
    assert not torch.allclose(enc(x), h.mean(1), atol=1e-3)


def test_virtual_nodes_start_from_zero_input():
    torch.manual_seed(0)
    enc = cayley_encoder(10, 7, hidden=6, dropout=0.0)
    h = enc.node_features(torch.randn(2, 7, 10))
    assert torch.allclose(h[:, 7:], torch.relu(enc.proj.bias).expand(2, 17, 6))


def test_fc_encoder_has_no_virtual_nodes_and_a_complete_graph():
    enc = fc_encoder(10, 5, hidden=4)
    assert enc.num_nodes == 5 and enc.edge_index.shape[1] == 20


def test_deepset_is_invariant_to_layer_order():
    torch.manual_seed(0)
    ds = DeepSet(8, 5, hidden=6, dropout=0.0).eval()
    x = torch.randn(3, 5, 8)
    assert torch.allclose(ds(x), ds(x[:, torch.randperm(5)]), atol=1e-5)


@pytest.mark.parametrize("method", [m for m in METHODS if m != "best"])
def test_every_method_maps_states_to_embeddings(method):
    model = make_method(method, 16, 5, 3)
    assert model(torch.randn(4, 5, 16)).shape == (4, 3)
    with pytest.raises(ValueError, match="expected x of shape"):
        model(torch.randn(4, 6, 16))


def test_parameter_counts_of_the_cayley_encoder():
    d, h, c = 32, 16, 3
    n = count_parameters(make_method("cayley", d, 7, c, hidden=h))
    assert n == (d * h + h) + (h * h + h) + 2 * h + (h * c + c)  # projection, GIN MLP, LayerNorm, head


# ----------------------------------------------------------------------------- training


def test_cayley_encoder_fits_a_separable_toy_task():
    x, y, is_test = toy()
    df = classification_scores(x, y, is_test, "cayley", seeds=[0, 1], config=TrainConfig(max_epochs=30))
    assert (df["score"] > 0.9).all()


def test_best_layer_finds_the_informative_layer():
    x, y, is_test = toy(signal_layer=5)
    df = classification_scores(x, y, is_test, "best", seeds=[0], config=TrainConfig(max_epochs=30))
    assert df["layer"].tolist() == [5] and df["score"].iloc[0] > 0.9


def test_item_outcomes_are_the_items_behind_each_score():
    x, y, is_test = toy(signal_layer=5)
    df = classification_scores(x, y, is_test, "best", seeds=[0, 1], config=TrainConfig(max_epochs=3))
    items = item_outcomes(df.assign(model="toy", task="t"))
    assert len(items) == 2 * is_test.sum() and set(items["correct"]) <= {0, 1}
    per_seed = items.groupby("seed")["correct"].mean()
    assert np.allclose(per_seed.to_numpy(), df["score"].to_numpy())  # 'best': the chosen layer's items
    assert items.groupby("seed")["item"].apply(list).map(lambda i: i == list(range(is_test.sum()))).all()
    with pytest.raises(ValueError, match="correct"):
        item_outcomes(df.drop(columns="correct"))


def test_training_is_reproducible_with_a_fixed_seed():
    x, y, is_test = toy()
    a = classification_scores(x, y, is_test, "cayley", seeds=[3], config=TrainConfig(max_epochs=3))
    b = classification_scores(x, y, is_test, "cayley", seeds=[3], config=TrainConfig(max_epochs=3))
    pd.testing.assert_frame_equal(a, b)


def test_vectorised_seeds_equal_independent_training():
    x, y, _ = toy(n=90)
    obj = Classification(torch.as_tensor(x).permute(1, 0, 2).contiguous(), torch.as_tensor(y))
    splits = {s: stratified_holdout(y[:60], 60, 0.15, seed=s) for s in (0, 1)}
    build = lambda: make_method("cayley", 24, 7, 3, dropout=0.0)
    cfg = TrainConfig(max_epochs=6, patience=2)
    joint = fit(build, obj, [splits[s][0] for s in (0, 1)], [splits[s][1] for s in (0, 1)], seeds=[0, 1], config=cfg)
    for k, s in enumerate((0, 1)):
        alone = fit(build, obj, [splits[s][0]], [splits[s][1]], seeds=[s], config=cfg)
        for name, p in alone.params.items():
            assert torch.allclose(joint.params[name][k], p[0], atol=1e-5), name


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (benchmarks/device.py runs it there)")
def test_training_on_the_gpu_starts_from_the_cpu_s_weights_and_learns_as_well():
    """Issue 19: the aggregators train on the unit's device. Each seed's model is initialised on
    the CPU and moved, and the batch orders come from CPU generators, so without dropout the
    two devices train the same models up to float reductions."""
    x, y, _ = toy(n=90)
    obj = Classification(torch.as_tensor(x).permute(1, 0, 2).contiguous(), torch.as_tensor(y))
    train, val = stratified_holdout(y[:60], 60, 0.15, seed=0)
    build = lambda: make_method("cayley", 24, 7, 3, dropout=0.0)
    fitted = {d: fit(build, obj, [train], [val], seeds=[0], config=TrainConfig(max_epochs=6, patience=2, device=d))
              for d in ("cpu", "cuda")}
    assert fitted["cuda"].epochs == fitted["cpu"].epochs and fitted["cuda"].best_val.device.type == "cpu"
    for name, p in fitted["cpu"].params.items():
        assert torch.allclose(fitted["cuda"].params[name].cpu(), p, atol=1e-4), name
    test = np.arange(60, 90)
    assert torch.equal(fitted["cuda"].predict(obj, test), fitted["cpu"].predict(obj, test))
    rng = np.random.default_rng(0)  # STS: the objective embeds its documents inside predict too
    states = rng.standard_normal((5, 12, 8)).astype(np.float32)
    i, j = np.triu_indices(12, 1)
    pairs, scores = np.stack([i, j], 1), rng.random(len(i)).astype(np.float32)
    sts = {d: similarity_scores(states, pairs, scores, "cayley", folds=3, seeds=[0],
                                config=TrainConfig(max_epochs=2, device=d), dropout=0.0) for d in ("cpu", "cuda")}
    np.testing.assert_allclose(sts["cuda"]["score"], sts["cpu"]["score"], atol=1e-3)


def test_similarity_training_runs_and_raw_baselines_are_deterministic():
    rng = np.random.default_rng(0)
    states = rng.standard_normal((5, 12, 8)).astype(np.float32)
    i, j = np.triu_indices(12, 1)
    pairs, scores = np.stack([i, j], 1), rng.random(len(i)).astype(np.float32)
    raw = similarity_scores(states, pairs, scores, "last", folds=3, seeds=[0, 1])
    assert raw["score"].nunique() == 1
    trained = similarity_scores(states, pairs, scores, "cayley", folds=3, seeds=[0, 1], config=TrainConfig(max_epochs=2))
    assert np.isfinite(trained["score"]).all() and len(trained) == 2


def test_stratified_holdout_keeps_class_shares():
    labels = np.repeat([0, 1, 2], [60, 30, 10])
    train, val = stratified_holdout(labels, 100, 0.15, seed=0)
    assert len(val) == 15 and len(np.intersect1d(train, val)) == 0 and len(train) + len(val) == 100
    assert np.bincount(labels[val]).tolist() == [9, 4, 2] or abs(np.bincount(labels[val])[0] - 9) <= 1


def test_few_shot_indices():
    labels = np.repeat([0, 1], [20, 3])
    idx = few_shot_indices(labels, 5, seed=0)
    assert np.bincount(labels[idx]).tolist() == [5, 3]


# ----------------------------------------------------------------------------- memory


def test_peak_memory_sees_a_known_allocation():
    assert peak_memory(lambda: torch.zeros(1000, 1000)) >= 4_000_000


def test_fully_connected_token_graph_needs_more_memory_than_cayley():
    mem = token_graph_memory(4, [8, 16], dim=16, hidden=32).pivot_table(index="tokens", columns="graph",
                                                                           values="peak_bytes")
    assert (mem["fc"] > mem["cayley"]).all()
