"""Cayley graphs of SL(2, Z_n): closed-form order, regularity, connectivity, inverse-closed
generators, edge bookkeeping and the breadth-first node order."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from lrd.aggregation.cayley import cayley_graph, complete_graph, eccentricities, graph_summary, layer_to_node, sl2_order, smallest_n

GENERATORS = [np.array(m) for m in ([[1, 1], [0, 1]], [[1, -1], [0, 1]], [[1, 0], [1, 1]], [[1, 0], [-1, 1]])]


def order_by_formula(n: int) -> int:
    """n^3 prod_{p | n} (1 - 1/p^2), with exact rational arithmetic."""
    from fractions import Fraction

    primes = [p for p in range(2, n + 1) if n % p == 0 and all(p % q for q in range(2, p))]
    value = Fraction(n ** 3)
    for p in primes:
        value *= 1 - Fraction(1, p * p)
    return int(value)


@pytest.mark.parametrize("n", range(2, 9))
def test_group_order_matches_closed_form(n):
    g = cayley_graph(n)
    assert g.num_nodes == order_by_formula(n) == sl2_order(n)


@pytest.mark.parametrize("n", range(2, 9))
def test_elements_are_distinct_and_have_determinant_one(n):
    g = cayley_graph(n)
    det = (g.elements[:, 0, 0] * g.elements[:, 1, 1] - g.elements[:, 0, 1] * g.elements[:, 1, 0]) % n
    assert (det == 1 % n).all()
    assert len({m.tobytes() for m in g.elements}) == g.num_nodes
    assert (g.elements[0] == np.eye(2, dtype=int)).all(), "node 0 is the identity"


@pytest.mark.parametrize("n", range(3, 9))
def test_every_node_has_degree_four(n):
    g = cayley_graph(n)
    assert (np.bincount(g.edge_index[0], minlength=g.num_nodes) == 4).all()
    assert (np.bincount(g.edge_index[1], minlength=g.num_nodes) == 4).all()


def test_n2_is_two_regular_because_generators_are_involutions():
    g = cayley_graph(2)
    assert (np.bincount(g.edge_index[0]) == 2).all()


@pytest.mark.parametrize("n", range(2, 9))
def test_each_undirected_edge_once_in_each_direction_and_no_self_loops(n):
    ei = cayley_graph(n).edge_index
    pairs = set(map(tuple, ei.T.tolist()))
    assert len(pairs) == ei.shape[1], "no directed edge listed twice"
    assert pairs == {(t, s) for s, t in pairs}, "every edge has its reverse"
    assert all(s != t for s, t in pairs)


def test_reference_duplicates_list_every_edge_twice():
    plain, doubled = cayley_graph(4).edge_index, cayley_graph(4, reference_duplicates=True).edge_index
    assert doubled.shape[1] == 2 * plain.shape[1]
    assert np.array_equal(np.unique(doubled, axis=1), plain)


@pytest.mark.parametrize("n", [3, 4, 5, 7])
def test_generator_set_is_closed_under_inverses_and_edges_follow_it(n):
    inverses = {tuple((np.round(np.linalg.inv(s)).astype(int) % n).ravel()) for s in GENERATORS}
    assert inverses == {tuple((s % n).ravel()) for s in GENERATORS}
    g = cayley_graph(n)
    gens = {tuple((s % n).ravel()) for s in GENERATORS}
    for s, t in g.edge_index.T[:: max(1, g.edge_index.shape[1] // 200)]:
        a, b = g.elements[s], g.elements[t]
        inv_a = np.array([[a[1, 1], -a[0, 1]], [-a[1, 0], a[0, 0]]]) % n  # det 1
        assert tuple(((inv_a @ b) % n).ravel()) in gens, "edge (g, g s) with s a generator"


@pytest.mark.parametrize("n", range(2, 9))
def test_graph_is_connected_and_diameter_is_reported(n):
    summary = graph_summary(n)
    assert summary["connected"] and summary["diameter"] >= 1
    ecc = eccentricities(cayley_graph(n).edge_index, sl2_order(n))
    assert (ecc == summary["diameter"]).all(), "a Cayley graph is vertex-transitive"


def test_known_diameters():
    assert [graph_summary(n)["diameter"] for n in (3, 4)] == [4, 6]


def test_nodes_follow_a_plain_breadth_first_search():
    n = 5
    mul = lambda a, s: tuple(((np.array(a).reshape(2, 2) @ s) % n).ravel())
    start = (1, 0, 0, 1)
    seen, queue = {start: 0}, deque([start])
    while queue:
        a = queue.popleft()
        for s in GENERATORS:
            b = mul(a, s)
            if b not in seen:
                seen[b] = len(seen)
                queue.append(b)
    g = cayley_graph(n)
    assert [tuple(m.ravel()) for m in g.elements] == list(seen)


def test_smallest_n_counts_all_states():
    assert [smallest_n(k) for k in (1, 6, 7, 24, 25, 48, 49, 121)] == [2, 2, 3, 3, 4, 4, 5, 6]
    with pytest.raises(ValueError):
        smallest_n(0)


def test_layer_to_node_identity_and_seeded_permutation():
    assert layer_to_node(5).tolist() == [0, 1, 2, 3, 4]
    a, b = layer_to_node(13, seed=3), layer_to_node(13, seed=3)
    assert np.array_equal(a, b) and sorted(a.tolist()) == list(range(13))
    assert not np.array_equal(a, layer_to_node(13, seed=4))


def test_complete_graph():
    ei = complete_graph(4)
    assert ei.shape == (2, 12) and (ei[0] != ei[1]).all()


def test_invalid_modulus():
    with pytest.raises(ValueError, match="n must be"):
        cayley_graph(1)
