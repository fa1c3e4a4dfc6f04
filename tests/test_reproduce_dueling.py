"""Smoke tests of the NVLDB reproduction (Oh et al. 2026: Fig. 2, Figs. E.1 and E.5-E.8,
Tables E.2-E.3, the Statlog study, App. E.3 compute), of the acceptance-ordering script and of
the notebook.

The script's ``main`` runs at the test-only ``--scale tiny`` into a temporary folder; the test
checks the PNG and the markdown report, the rows the configuration implies, finite numbers and
that runs are shared instead of repeated. The notebook then runs with ``SCALE = "tiny"`` in the
same process, so it reuses the compiled programs (its agents and horizon are the Fig. 2 ones).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from reproduce_checks import ROOT, run_notebook
from reproduce_checks import run_tiny as _run

from benchmarks import dueling_acceptance, dueling_figs

pytestmark = pytest.mark.full

NOTEBOOK = ROOT / "notebooks" / "dueling.ipynb"


#: Oh et al. 2026, Tables E.2 / E.3 against the best-distinct-pair floor of the square task
#: (``jb.envs.DuelingPairFloorEnv``), decided at tiny scale: Table E.2's R(T)/T (0.39-0.54,
#: d = 5) lies below the floor (about 1.6), the documented deviation (the paper's agents must
#: self-duel); Table E.3's (6.05-6.73) does not.
FLOORS = {"[diagnostic, Table E.2]": True, "[diagnostic, Table E.3]": False}


def test_dueling_figs_tiny(tmp_path):
    module, config, report = _run(dueling_figs, tmp_path, expected=FLOORS)
    label = module.label
    figure2 = report.table("Fig. 2 / Fig. E.1")
    assert figure2.columns[1:] == [f"{t} (T = {h})" for t, h in config.tasks]
    agents = [n for t, _ in config.tasks for n in module.figure2_agents(t, config)]
    floors = [module.FLOOR, f"{module.FLOOR}, {max(config.num_runs, config.floor_runs)} instances"]
    assert figure2.row_labels == list(dict.fromkeys(label(n) for n in agents)) + floors
    nvldb = [label(f"nvldb-{r}") for r in config.nvldb]
    assert report.table("Fig. 2: R(t)/t").row_labels == nvldb
    assert report.table("Figs. E.5-E.7").row_labels == [r.upper() for r in config.ablation_rules]
    assert report.table("Fig. E.8").row_labels == [f"{s:g}" for s in config.scales]
    assert report.table("Statlog").row_labels == (
        [label(n) for n in config.statlog_agents]
        + [module.self_duel_label(n) for n in config.statlog_self_duels])
    assert report.table("Table E.2").row_labels == [f"{r.upper()} m={w}" for w in config.e2_widths
                                                    for r in config.table_rules] + floors
    assert report.table("Table E.3").row_labels == [f"{r.upper()} m={config.e3_width}"
                                                    for r in config.table_rules] + floors
    titles = [t.title for t in report.tables]
    assert any(t.startswith("Fig. E.1(e-f)") for t in titles) == bool(config.real_tasks)
    has_compute = any({"nvldb-ucb-asym", "ndb-ucb"} <= set(module.figure2_agents(t, config))
                      for t, _ in config.tasks) or config.ndb_full_horizon > 0
    assert any(t.startswith("App. E.3") for t in titles) == has_compute

    checks = {claim.split("]")[0] + "]" for claim, _, _ in report.claims}
    assert {"[Fig. 2]", "[Figs. E.5-E.7]", "[Fig. E.8]", "[Statlog study]", "[Table E.2]",
            "[Table E.3]", "[Table E.2, level]"} <= checks
    if {"square", "cosine"} & set(dict(config.tasks)):
        assert "[Fig. 2 ordering]" in checks

    runs = report.data["runs"]
    panel = runs.figure2["square"]
    for result in panel.values():
        assert result.cumulative_regret.shape == (config.num_runs, config.num_records)
        assert np.all(np.diff(result.cumulative_regret, axis=1) >= -1e-5)
        weak = np.asarray(result.metrics["weak_regret"])
        assert np.all(weak <= np.asarray(result.cumulative_regret) + 1e-4)  # weak <= average
    # runs are shared, not repeated: the tables read the Fig. 2 run with the same settings, the
    # sweep reuses its compiled program, and a run's first t rounds do not depend on its horizon
    # (what Figs. E.5-E.7 rely on when they read the NVLDB side at the NLDB horizon)
    # the floor run sees the same instances and contexts: no agent that never self-duels goes
    # below it in any run at any recorded step
    floor = runs.floors["square", config.dim, config.horizon("square")]
    assert np.array_equal(floor.steps, panel[label("random")].steps)
    lowest = np.asarray(floor.cumulative_regret)[:config.num_runs]
    for lbl in [label(f"nvldb-{r}") for r in config.nvldb] + [label("random")]:
        assert np.all(np.asarray(panel[lbl].cumulative_regret) >= lowest - 1e-3), lbl
    asym = panel[label("nvldb-ucb-asym")]
    assert runs.tables["E.2"][config.dim, config.width, "ucb-asym"] is asym
    assert all(r.compile_time == 0.0 for r in runs.sweep["square"].values())
    np.testing.assert_allclose(module.average(runs.sweep["square"][1.0]),
                               module.average(asym, config.sweep_horizon), rtol=1e-6)


def test_dueling_acceptance_tiny(tmp_path):
    module, config, report = _run(dueling_acceptance, tmp_path)
    figs = module.D
    table = report.table("R(t)/t over the second half")
    agents = [f"nvldb-{r}" for r in config.nvldb] + list(figs.ACCEPTANCE)
    assert table.row_labels == [figs.label(n) for n in agents] + [figs.FLOOR]
    tasks = [t for t, _ in config.tasks]
    assert table.columns[1:] == [c for t in tasks for c in (
        f"{t}: R(t)/t at t = {config.horizon(t) // 2}", f"{t}: at t = {config.horizon(t)}")]
    assert [c.split(" on ")[1].split(",")[0] for c, _, _ in report.claims] == [
        t for t in figs.ACCEPTANCE_TASKS if t in tasks]
    # the floor run sees the runs' instances: nothing that never self-duels goes below it
    panels, floors = report.data["panels"], report.data["floors"]
    for task in tasks:
        lowest = np.asarray(floors[task].cumulative_regret)
        for result in panels[task].values():
            assert result.num_runs == config.num_runs
            assert np.all(np.asarray(result.cumulative_regret) >= lowest - 1e-3)


def test_dueling_notebook_runs_at_tiny_sizes():
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    assert all(not c.get("outputs") for c in cells if c["cell_type"] == "code")  # stored clean
    namespace = run_notebook(NOTEBOOK, SCALE="tiny")
    module = dueling_figs
    config = module.SCALES["tiny"]
    assert namespace["cfg"] is config
    assert list(namespace["results"]) == [module.label(n) for n in config.demo_agents]
    assert len(namespace["sweep"]) == len(config.scales)
