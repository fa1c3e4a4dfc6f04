"""Smoke tests of the neural reproductions (Sun et al. 2025, Fig. 1 distance / quadratic and 2(d);
Bae & Lee 2025, Figures 1-2 and Table 2) and their notebook.

Each script's ``main`` runs at the test-only ``--scale tiny`` into a temporary folder; the tests
check the PNG and the markdown report, the rows the configuration implies and finite numbers. The
notebook then runs with ``SCALE = "tiny"`` in the same process, so it reuses the compiled programs.
"""

from __future__ import annotations

import numpy as np
import pytest
from reproduce_checks import ROOT, run_notebook
from reproduce_checks import run_tiny as _run

from benchmarks import neural_fig1, neurallog_figs

pytestmark = pytest.mark.full

NOTEBOOK = ROOT / "notebooks" / "neural.ipynb"


def test_neural_fig1_tiny(tmp_path):
    module, config, report = _run(neural_fig1, tmp_path)
    dts = [f"Neural-ES-DT{t}" for t in config.first_epochs]
    quad = report.table("quadratic bandit")
    assert quad.row_labels == (["Neural-ES", *dts] + ["Neural-UCB"] * len(config.nn_scales)
                               + ["Neural-TS"] * len(config.nn_scales))
    assert sum(row[1].endswith("*") for row in quad.rows) == 2  # one tuned value per baseline
    nets = report.table("Figure 2(d)")
    assert nets.row_labels == [module.net_label(d, n) for d, n in config.nets]
    checks = {claim.split("]")[0] + "]" for claim, _, _ in report.claims}
    assert checks == {"[Fig. 1]", "[Fig. 2(d)]"}
    # the Figure 2(d) baseline is the Figure 1 Neural-ES run, not a second one
    base = report.data["nets"][config.depth, config.width]
    assert base is report.data["panels"]["quadratic"].curves["Neural-ES"]
    for result in report.data["panels"]["quadratic"].curves.values():
        assert result.cumulative_regret.shape == (config.num_runs, config.num_records)
        assert np.all(np.diff(result.cumulative_regret, axis=1) >= -1e-5)


def test_neurallog_figs_tiny(tmp_path):
    module, config, report = _run(neurallog_figs, tmp_path,
                                  expected={"[Table 2] kappa-invariance": True})
    figures = report.table("Figures 1-2")
    assert figures.columns[1:] == ([f"Fig. 1 {f}" for f in config.functions]
                                   + [f"Fig. 2 {d}" for d in config.datasets])
    assert figures.row_labels == [module.LABELS[a] for a in config.agents]
    obd = report.table("Table 2")
    expected = ([("m", f"{w:g}") for w in config.widths]
                + [("kappa", f"{k:g}") for k in config.kappas]
                + [("S", f"{s:g}") for s in config.bounds])
    assert [(r[0], r[1]) for r in obd.rows] == expected
    for row in obd.rows:
        assert all(0.0 <= float(c) <= 1.0 for c in row[2:-1])  # CTRs
    # the default configuration is one run, shared by every sweep
    rows = report.data["obd"]
    default = rows["m", config.widths[0]]
    assert all(rows["kappa", config.kappas[0]][k] is v for k, v in default.items())
    assert all(rows["S", config.bounds[0]][k] is v for k, v in default.items())


def test_neural_notebook_runs_at_tiny_sizes():
    namespace = run_notebook(NOTEBOOK, SCALE="tiny")
    assert namespace["cfg_es"] is neural_fig1.SCALES["tiny"]
    assert namespace["claims"]
