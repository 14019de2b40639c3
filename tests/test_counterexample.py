"""The constructed counterexample: tiny cosine relevance, removal drops accuracy 100% -> chance."""

import numpy as np

from lrd.methods.counterexample import counterexample


def test_block_with_tiny_cosine_relevance_is_indispensable():
    r = counterexample()
    assert r.cosine_relevance[1] < 1e-3
    assert r.accuracy == 1.0
    assert r.accuracy_without[1] == r.chance == 0.5


def test_blocks_with_large_cosine_relevance_are_dispensable():
    r = counterexample()
    assert (r.cosine_relevance[[0, 2]] > 100 * r.cosine_relevance[1]).all()
    np.testing.assert_array_equal(r.accuracy_without[[0, 2]], [1.0, 1.0])


def test_cosine_relevance_shrinks_as_the_shared_component_grows():
    small, large = counterexample(scale=100.0), counterexample(scale=1000.0)
    assert large.cosine_relevance[1] < small.cosine_relevance[1] / 50
    assert large.accuracy_without[1] == 0.5
