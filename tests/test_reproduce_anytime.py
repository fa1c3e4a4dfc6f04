"""Smoke tests of the anytime-ensemble reproductions (Sun et al. 2025, Figures 1-3) and their
notebook.

Each script's ``main`` runs at the test-only ``--scale tiny`` into a temporary folder; the tests
check the PNG and the markdown report, the rows the configuration implies, finite numbers, the
claims, and that the sweeps compile as few programs as the scripts promise. The notebook then runs
with ``SCALE = "tiny"`` in the same process, so it reuses the scripts' compiled programs.
"""

from __future__ import annotations

import numpy as np
import pytest
from reproduce_checks import ROOT, run_notebook
from reproduce_checks import load as _load
from reproduce_checks import run_tiny as _run

import jaxbandits as jb
from jaxbandits.simulate import trace_counts

pytestmark = pytest.mark.full

NOTEBOOK = ROOT / "notebooks" / "anytime_glm.ipynb"


def _chunk_traces() -> int:
    return trace_counts().get("chunk", 0)


def test_anytime_fig1_tiny(tmp_path):
    module, config, report = _run("anytime_fig1", tmp_path)
    dts = [f"DT{t}" for t in config.first_epochs]
    lin = report.table("E-LIN")
    assert lin.row_labels == (["Lin-ES", f"Lin-ES (sigma_R={module.LIN_ES_DIAGNOSTIC:g})"]
                              + [f"Lin-ES-{d}" for d in dts]
                              + ["LinUCB"] * len(config.lin_scales)
                              + ["LinTS"] * len(config.lin_scales))
    log = report.table("E-LOG")
    assert log.row_labels == (["GLM-ES"] + [f"GLM-ES-{d}" for d in dts]
                              + ["UCB-GLM"] * len(config.glm_scales)
                              + ["GLM-TSL"] * len(config.glm_scales))
    # one tuned value per baseline grid
    assert sum(row[1].endswith("*") for row in log.rows) == 2
    checks = {claim.split("]")[0] + "]" for claim, _, _ in report.claims}
    assert checks == {"[14]", "[15]", "[16]", "[22]"}
    results = report.data["results"]
    for title in config.panels:
        for result in results[title].curves.values():
            assert result.cumulative_regret.shape == (config.num_runs, config.num_records)
            assert np.all(np.diff(result.cumulative_regret, axis=1) >= -1e-5)  # regret >= 0


def test_anytime_fig2_tiny_and_the_grids_share_programs(tmp_path):
    before = _chunk_traces()
    module, config, report = _run("anytime_fig2", tmp_path)
    # the m sweep is one program; the lambda and sigma_R sweeps (same grid length) share one
    assert _chunk_traces() - before <= 2
    assert report.table("(a)").row_labels == [
        f"m = {m}" + (" *" if m == 10 else "") for m in config.sizes]
    assert report.table("(b)").row_labels == [
        f"lambda = {v:g}" + (" *" if v == 1.0 else "") for v in config.regs]
    assert report.table("(c)").row_labels == [
        f"sigma_R = {v:g}" + (" *" if v == 0.1 else "") for v in config.perturbs]
    assert len(report.claims) >= 8
    assert all(claim.startswith("[17]") for claim, _, _ in report.claims)
    # the baseline is one configuration: the same runs in panels (b) and (c)
    results = report.data["results"]
    np.testing.assert_allclose(results["lambda"][1.0].cumulative_regret,
                               results["sigma_R"][0.1].cumulative_regret, rtol=1e-5, atol=1e-5)


def test_anytime_fig3_tiny_is_one_program(tmp_path):
    before = _chunk_traces()
    module, config, report = _run("anytime_fig3", tmp_path)
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
    fig1 = _load("anytime_fig1")
    args = fig1.parse_args("anytime_fig1", fig1.__doc__, ["--scale", "tiny", "--solver", "newton"])
    assert (args.scale, args.solver) == ("tiny", "newton")
    assert fig1.parse_args("anytime_fig1", fig1.__doc__, []).solver == "gd"
    panel = fig1.log_panel(fig1.SCALES["tiny"], "newton")
    solvers = {e.label: getattr(e.agent, "solver", None) or e.agent.agent.solver
               for e in panel.entries}
    assert set(solvers.values()) == {"newton"}, solvers


def test_anytime_notebook_runs_at_tiny_sizes():
    namespace = run_notebook(NOTEBOOK, SCALE="tiny")
    assert namespace["cfg1"] is _load("anytime_fig1").SCALES["tiny"]
    assert namespace["claims"]
    import matplotlib.pyplot as plt

    plt.close("all")
