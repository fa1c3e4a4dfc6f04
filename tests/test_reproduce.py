"""Smoke tests of the paper reproductions in benchmarks/reproduce/ at the test-only tiny scale.

Each script's ``main`` runs in-process at ``--scale tiny`` into a temporary folder; the tests check
that the PNG and the markdown report are written, that the tables have the rows and columns the
configuration implies and finite numbers. The scripts sweep static fields (ensemble sizes,
laws) with ``jb.sweep`` on the library agents; that a grid point's runs equal ``jb.simulate``'s
is the library's own test (``tests/test_layout.py``). Almost all of the time is compilation (a
handful of programs per script, one per distinct static value; programs are shared between tests
that use the same shapes). The notebook ``notebooks/linear_ensembles.ipynb``, which calls these
scripts' functions, is executed by ``tests/test_notebooks.py`` with every other notebook.
"""

from __future__ import annotations

import numpy as np
import pytest
from reproduce_checks import load as _load
from reproduce_checks import run_tiny as _run

pytestmark = pytest.mark.full

SCRIPTS = ("ensemble_pp_fig2", "ensemble_pp_ablation", "lee_oh_demo")


# ------------------------------------------------------------------------------------------------
# _common and the configurations (no simulation).


def test_common_record_steps_have_a_fixed_count():
    common = _load("_common")
    for horizon in (60, 100, 1000, 4000):
        steps = common.record_steps(horizon, 40, include=(30, 60, 250, 5000))
        assert len(steps) == 40
        assert steps[-1] == horizon and steps[0] >= 1
        assert np.all(np.diff(steps) > 0)
        assert {s for s in (30, 60, 250) if s <= horizon} <= set(steps.tolist())
    assert common.record_steps(20, 40).tolist() == list(range(1, 21))


def test_common_statistics_and_verdicts():
    common = _load("_common")
    values = np.array([1.0, 2.0, 3.0, 4.0])
    mean, half = common.mean_ci(values)
    assert mean == 2.5 and half == pytest.approx(3.182446 * values.std(ddof=1) / 2, rel=1e-3)
    assert common.paired_gap(values, values - 1.0) == (1.0, 0.0)
    assert common.fmt_ci(values) == f"2.50 ± {half:.2f}"
    assert common.verdict_at_most(values, 2.5) is True
    assert common.verdict_at_most(values, 2.0) is None  # the interval reaches the limit
    assert common.verdict_at_most(values + 10.0, 2.0) is False
    table = common.Table("T", ["a", "b"], note="n")
    table.add("x", "1 | 2")
    with pytest.raises(ValueError, match="expected 2 cells"):
        table.add("only one")
    assert table.markdown() == "### T\n\n| a | b |\n|---|---|\n| x | 1 \\| 2 |\n\nn\n"


@pytest.mark.parametrize("name", SCRIPTS)
def test_scales_are_consistent(name):
    """Every scale's sizes fit the scripts' assumptions (checked before minutes of running)."""
    module, common = _load(name), _load("_common")
    assert tuple(module.SCALES) == common.SCALES
    for config in module.SCALES.values():
        if name == "ensemble_pp_fig2":
            assert list(config.sizes) == sorted(set(config.sizes))
            assert set(config.variants) <= set(module.VARIANTS)
        elif name == "ensemble_pp_ablation":
            assert set(config.heatmap_sizes) <= set(config.sizes)
            assert min(config.sizes) >= 2  # the Sparse law has s = 2 entries
            laws = _load("jaxbandits.linalg")
            assert len(set(config.references)) == len(config.references)
            assert len(set(config.perturbations)) == len(config.perturbations)
            assert set(config.references) <= set(laws.REFERENCES)
            assert set(config.perturbations) <= set(laws.PERTURBATIONS)
        else:
            assert max(config.scaling_horizons) >= config.d_scaling_horizon
            assert config.d_scaling_horizon in config.scaling_horizons
            assert config.t_scaling_dim in config.scaling_dims
        assert config.num_records >= 2
    if name == "ensemble_pp_ablation":  # only the test-only scale runs a sub-grid of the laws
        assert module.SCALES["small"].pairs == module.SCALES["paper"].pairs == module.PAIRS
        assert len(module.PAIRS) == 25


# ------------------------------------------------------------------------------------------------
# The scripts at tiny scale.


def test_ensemble_pp_fig2_tiny(tmp_path):
    module, config, report = _run("ensemble_pp_fig2", tmp_path)
    sizes = report.table("Final regret")
    assert sizes.row_labels == [f"M = {m}" for m in config.sizes] + ["TS (exact)"]
    assert sizes.columns[1:-1] == [module.VARIANTS[v][0] for v in config.variants]
    minimal = report.table("Smallest")
    assert minimal.row_labels == [f"d = {d}, K = {k}" for d in config.dims_b
                                  for k in config.arms_b]
    assert set(report.data["minimal"]) == {(d, k) for d in config.dims_b for k in config.arms_b}
    for by_size in report.data["curves"].values():
        for result in by_size.values():
            assert result.cumulative_regret.shape == (config.num_runs, config.num_records)
            assert np.all(np.isfinite(result.cumulative_regret))
            assert np.all(np.diff(result.cumulative_regret, axis=1) >= -1e-4)
    # each (variant, M) is the library agent with that ensemble size
    for variant, by_size in report.data["curves"].items():
        for m, result in by_size.items():
            assert result.name == f"{variant} M={m}"
            assert result.agent_config["ensemble_size"] == m


def test_ensemble_pp_ablation_tiny(tmp_path):
    module, config, report = _run("ensemble_pp_ablation", tmp_path)
    (problem,) = config.problems
    table = report.table("Final regret")
    assert table.row_labels == [module.pair_label(p) for p in config.pairs] + ["TS (exact)"]
    assert len(config.pairs) == len(config.references) * len(config.perturbations) > 1
    assert table.columns[1:] == [f"M = {m}" for m in config.sizes]
    # each (M, pair) is ensemble-pp with that size and those laws
    for m, by_pair in report.data["results"][problem].items():
        assert set(by_pair) == set(config.pairs)
        for (reference, perturbation), result in by_pair.items():
            assert (result.agent_config["ensemble_size"], result.agent_config["reference"],
                    result.agent_config["perturbation"]) == (m, reference, perturbation)


def test_lee_oh_demo_tiny(tmp_path):
    module, config, report = _run("lee_oh_demo", tmp_path)
    table = report.table("Final regret (mean ± s.e.)")
    assert [r.split(",")[0] for r in table.row_labels] == ["theory", "practical"]
    assert table.columns == (["calibration"] + [f"ES m={m}" for m in config.ensemble_sizes]
                             + [f"ES m=T={config.horizon} RR", "LinPHE", "LinTS(v=σ_R)",
                                "LinUCB"])
    assert report.table("E1").row_labels == ["theory", "practical"]
    assert report.table("E2").row_labels == (
        [f"m = {m}" for m in config.ensemble_sizes]
        + [f"m = T = {config.horizon} (round robin)", "LinPHE", "LinTS", "LinUCB"])
    scaling = report.table("E3")
    assert len(scaling.rows) == sum(1 if a == "LinUCB" else 2 for a in config.scaling_agents)
    # Proposition 2 through the runner: ES with m = T played in turn is LinPHE, run by run.
    (verdict,) = [v for claim, v, _ in report.claims if claim.startswith("E1")]
    assert verdict is True
    # The theory calibration is beta_T of Lee & Oh 2024, Thm 1 (3.85 at d = 5, T = 1000).
    assert report.data["e2"]["scales"]["practical"] == config.noise_std
    assert module.beta(module.SCALES["small"], 5, 1000) == pytest.approx(3.85, abs=0.01)
    # The ES at each m and calibration is lin-es with that size and perturbation scale
    for m, by_cal in report.data["e2"]["ES"].items():
        for cal, result in by_cal.items():
            assert result.agent_config["ensemble_size"] == m
            assert result.agent_config["perturb_std"] == pytest.approx(
                report.data["e2"]["scales"][cal])
