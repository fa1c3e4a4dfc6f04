"""The power calculation behind Bae & Lee 2025, Table 2's miss
(``benchmarks.neurallog_table2_power``): the binomial standard error of a CTR difference and
the runs needed for 80% power, checked by simulating the replay's binomial runs."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.neurallog_table2_power import Z_POWER, diff_se, runs_needed

P, ACCEPTED = 0.0046, 2000  # the replay's click rate and the paper's accepted events a run


def simulated_means(rng, p, runs, sims):
    """``(sims,)`` mean CTR over ``runs`` binomial runs of ``ACCEPTED`` events."""
    return rng.binomial(ACCEPTED, p, size=(sims, runs)).mean(axis=1) / ACCEPTED


def test_diff_se_matches_simulated_binomial_runs():
    rng = np.random.default_rng(0)
    diff = simulated_means(rng, P, 5, 40_000) - simulated_means(rng, P, 5, 40_000)
    assert diff.std() == pytest.approx(diff_se(P, ACCEPTED, 5), rel=0.03)
    # the paper's 5 runs detect about a quarter-percent CTR difference, not less
    assert 0.0025 < Z_POWER * diff_se(P, ACCEPTED, 5) < 0.0029


@pytest.mark.parametrize("gap", [0.0025, 0.0016])
def test_runs_needed_gives_eighty_percent_power(gap):
    rng = np.random.default_rng(1)
    runs = runs_needed(gap, P, ACCEPTED)
    sims = 20_000
    diff = simulated_means(rng, P + gap / 2, runs, sims) - simulated_means(rng, P - gap / 2,
                                                                           runs, sims)
    power = np.mean(np.abs(diff) > 1.959964 * diff_se(P, ACCEPTED, runs))
    assert 0.78 <= power <= 0.92  # at least 80% (the runs are rounded up), up to noise
    if runs > 1:  # one run fewer is short of 80%
        fewer = simulated_means(rng, P + gap / 2, runs - 1, sims) - simulated_means(
            rng, P - gap / 2, runs - 1, sims)
        assert np.mean(np.abs(fewer) > 1.959964 * diff_se(P, ACCEPTED, runs - 1)) < 0.82
