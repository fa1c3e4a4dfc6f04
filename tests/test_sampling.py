"""``distinct_indices``: k distinct indices of range(n), uniform over ordered k-tuples.

The pool environments (``neurallog-synthetic``, ``ensemble-pp-varying``) and the sparse
perturbations draw through it instead of ``jax.random.choice(replace=False)``, which shuffles
the whole pool.
"""

from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest

from jaxbandits.core import distinct_indices

DRAWS = 30_000


def _draws(n: int, k: int, num: int = DRAWS) -> np.ndarray:
    keys = jax.random.split(jax.random.key(0), num)
    return np.asarray(jax.jit(jax.vmap(lambda key: distinct_indices(key, n, k)))(keys))


@pytest.mark.parametrize("n,k", [(5, 3), (4, 4), (2500, 5), (60, 50)])
def test_indices_are_distinct_and_in_range(n, k):
    draws = _draws(n, k, 2_000)
    assert draws.shape == (2_000, k) and draws.dtype == np.int32
    assert draws.min() >= 0 and draws.max() < n
    assert all(len(set(row)) == k for row in draws)


def test_every_ordered_tuple_is_equally_likely():
    """n = 5, k = 3: 60 ordered tuples, each with probability 1/60. Pearson's statistic has 59
    degrees of freedom (mean 59, sd 10.9); 120 is beyond its 99.999th percentile."""
    draws = _draws(5, 3)
    tuples = list(itertools.permutations(range(5), 3))
    counts = {t: 0 for t in tuples}
    for row in map(tuple, draws):
        counts[row] += 1
    expected = DRAWS / len(tuples)
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert min(counts.values()) > 0
    assert chi2 < 120.0, chi2


def test_each_position_is_uniform_on_a_large_pool():
    """n = 2500, k = 5: every position is uniform on range(n) (mean (n - 1) / 2, sd of the
    mean 722 / sqrt(30,000) = 4.2) and the last position is as uniform as the first."""
    draws = _draws(2500, 5)
    means = draws.mean(axis=0)
    np.testing.assert_allclose(means, 1249.5, atol=5 * 4.2)
    # Deciles of each position: 3,000 expected per decile (sd 52).
    for column in draws.T:
        counts = np.bincount(column // 250, minlength=10)
        assert np.all(np.abs(counts - DRAWS / 10) < 6 * 52), counts


def test_bad_sizes_are_rejected():
    with pytest.raises(ValueError, match="0 < k <= n"):
        distinct_indices(jax.random.key(0), 3, 4)
    with pytest.raises(ValueError, match="0 < k <= n"):
        distinct_indices(jax.random.key(0), 3, 0)
