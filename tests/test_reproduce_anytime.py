"""Smoke tests of the anytime-ensemble reproductions (Sun et al. 2025, Figs. 1-3) and their
notebook.

Each script's ``main`` runs at the test-only ``--scale tiny`` into a temporary folder; the tests
check the PNG and the markdown report, the rows the configuration implies, finite numbers, the
claims, and that the sweeps compile as few programs as the scripts promise. The notebook then runs
with ``SCALE = "tiny"`` in the same process, so it reuses the scripts' compiled programs.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from reproduce_checks import ROOT, run_notebook
from reproduce_checks import run_tiny as _run

import jaxbandits as jb
from benchmarks import anytime_fig1, anytime_fig2, anytime_fig3, anytime_fig4
from jaxbandits.simulate import trace_counts

pytestmark = pytest.mark.full

NOTEBOOK = ROOT / "notebooks" / "anytime_glm.ipynb"


def _chunk_traces() -> int:
    return trace_counts().get("chunk", 0)


def test_anytime_fig1_tiny(tmp_path):
    module, config, report = _run(anytime_fig1, tmp_path, expected={
        "regret on the linear bandit is sublinear": True,
        "regret on the logistic bandit is sublinear": True})
    dts = [f"DT{t}" for t in config.first_epochs]
    lin = report.table("linear bandit")
    assert lin.row_labels == (["Lin-ES", f"Lin-ES (sigma_R={module.LIN_ES_DIAGNOSTIC:g})"]
                              + [f"Lin-ES-{d}" for d in dts]
                              + ["LinUCB"] * len(config.lin_scales)
                              + ["LinTS"] * len(config.lin_scales))
    log = report.table("logistic bandit")
    assert log.row_labels == (["GLM-ES"] + [f"GLM-ES-{d}" for d in dts]
                              + ["UCB-GLM"] * len(config.glm_scales)
                              + ["GLM-TSL"] * len(config.glm_scales))
    # one tuned value per baseline grid
    assert sum(row[1].endswith("*") for row in log.rows) == 2
    checks = {claim.split("]")[0] + "]" for claim, _, _ in report.claims}
    assert checks == {"[Fig. 1]"}
    results = report.data["results"]
    for title in config.panels:
        for result in results[title].curves.values():
            assert result.cumulative_regret.shape == (config.num_runs, config.num_records)
            assert np.all(np.diff(result.cumulative_regret, axis=1) >= -1e-5)  # regret >= 0


def test_anytime_fig4_is_fig1_at_larger_sizes():
    """Fig. 4 runs Fig. 1's panels (tested above at tiny scale) at d = 50, K = 500 on paper
    scale: its configurations differ from Fig. 1's in d and K only."""
    for scale, config in anytime_fig4.SCALES.items():
        base = anytime_fig1.SCALES[scale]
        assert config.dim > base.dim and config.num_arms > base.num_arms
        assert dataclasses.replace(config, dim=base.dim, num_arms=base.num_arms) == base
    assert (anytime_fig4.SCALES["paper"].dim, anytime_fig4.SCALES["paper"].num_arms) == (50, 500)


def test_panels_are_the_papers_bandits_and_selected_by_name():
    """The Fig. 1 panels are named as Sun et al. 2025, Sec. 7.1 names its bandits (and the
    registry its environments); ``--set panels=...`` picks them by name, one name alone too,
    and a name that is no panel is an error that lists the panels."""
    from benchmarks import framework, neural_fig1

    assert list(anytime_fig1.PANELS) == ["linear", "logistic"]
    assert list(neural_fig1.PANELS) == ["distance", "quadratic"]
    config = anytime_fig1.SCALES["tiny"]
    for name, build in {**anytime_fig1.PANELS, **neural_fig1.PANELS}.items():
        assert name in jb.registry.ENVS
        assert build(config if name in anytime_fig1.PANELS else neural_fig1.SCALES["tiny"],
                     "gd").title == f"{name} bandit"
    for value, picked in (('["logistic"]', ["logistic"]), ("logistic", ["logistic"]),
                          ('["logistic", "linear"]', ["logistic", "linear"])):
        args = framework.parse_args(anytime_fig1.NAME, "", ["--scale", "tiny", "--set",
                                                           f"panels={value}"])
        chosen = framework.configure(anytime_fig1.SCALES, args).panels
        assert list(framework.builders(anytime_fig1.PANELS, chosen)) == picked
    with pytest.raises(ValueError, match="'linear', 'logistic'"):
        framework.builders(anytime_fig1.PANELS, ("linear", "lin"))


def test_anytime_fig2_tiny_and_the_grids_share_programs(tmp_path):
    before = _chunk_traces()
    module, config, report = _run(anytime_fig2, tmp_path, expected={
        "sigma_R = 0.1 beats every huge sigma_R": True})
    # the m sweep is one program; the lambda and sigma_R sweeps (same grid length) share one
    assert _chunk_traces() - before <= 2
    assert report.table("(a)").row_labels == [
        f"m = {m}" + (" *" if m == 10 else "") for m in config.sizes]
    assert report.table("(b)").row_labels == [
        f"lambda = {v:g}" + (" *" if v == 1.0 else "") for v in config.regs]
    assert report.table("(c)").row_labels == [
        f"sigma_R = {v:g}" + (" *" if v == 0.1 else "") for v in config.perturbs]
    assert len(report.claims) >= 8
    assert all(claim.startswith("[Fig. 2]") for claim, _, _ in report.claims)
    # the baseline is one configuration: the same runs in panels (b) and (c)
    results = report.data["results"]
    np.testing.assert_allclose(results["lambda"][1.0].cumulative_regret,
                               results["sigma_R"][0.1].cumulative_regret, rtol=1e-5, atol=1e-5)


def test_anytime_fig3_tiny_is_one_program(tmp_path):
    before = _chunk_traces()
    # b = 1.5 costs regret (Fig. 3); the factor l(1/2, 3/2, T_0, b) is a closed form whose
    # minimiser is b = 2.618 only for large T_0 (at T_0 = 5, b = 4 gives 3.589 < 3.612): the
    # paper's statement is asymptotic, a documented deviation at the tiny grid's T_0 = 5
    module, config, report = _run(anytime_fig3, tmp_path, expected={
        "b = 1.5 gives larger regret than b = 2.618": True,
        "Theory: l(1/2, 3/2, T_0, b) is smallest at b = 2.618": False})
    assert _chunk_traces() - before <= 1
    grid = report.table("Final regret")
    assert grid.row_labels == [f"T_0 = {t}" for t in config.first_epochs]
    assert grid.columns[1:-1] == [f"b = {b:.4g}" for b in config.growths]
    factors = report.table("Regret factor")
    for t0, row in zip(config.first_epochs, factors.rows, strict=True):
        expected = [jb.agents.doubling_regret_factor(t0, b) for b in config.growths]
        np.testing.assert_allclose([float(c) for c in row[1:]], expected, atol=1e-3)
    assert set(report.data["results"]) == {(t, b) for t in config.first_epochs
                                           for b in config.growths}


def test_solver_switch_reaches_every_glm_agent():
    from benchmarks import framework

    fig1 = anytime_fig1
    args = framework.parse_args("anytime_fig1", fig1.__doc__, ["--scale", "tiny", "--solver",
                                                               "newton"], options=fig1.OPTIONS)
    assert (args.scale, args.solver) == ("tiny", "newton")
    assert framework.parse_args("anytime_fig1", "", [], options=fig1.OPTIONS).solver == "gd"
    panel = fig1.log_panel(fig1.SCALES["tiny"], "newton")
    solvers = {e.label: getattr(e.agent, "solver", None) or e.agent.agent.solver
               for e in panel.entries}
    assert set(solvers.values()) == {"newton"}, solvers


def test_anytime_notebook_runs_at_tiny_sizes():
    namespace = run_notebook(NOTEBOOK, SCALE="tiny")
    assert namespace["cfg1"] is anytime_fig1.SCALES["tiny"]
    assert namespace["claims"]
    import matplotlib.pyplot as plt

    plt.close("all")
