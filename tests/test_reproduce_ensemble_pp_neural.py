"""Smoke test of the neural Ensemble++ reproduction (Li et al. 2024: Figs. 1/10, 3, 4, 11, 14,
the LMC-TS comparison and the moderation task) and its notebook.

The script's ``main`` runs at the test-only ``--scale tiny`` into a temporary folder (eight
programs: ES++, Greedy and random on a tiny quadratic, ES++ and LMC-TS on a tiny
vector-quadratic, run and timed, ES++ on 50 stand-in posts); the test checks the PNG and the
markdown report, the rows the configuration implies, finite numbers, that shared points run once,
and that the timed rounds are the runner's. The notebook then runs with ``SCALE = "tiny"`` in the
same process, so it reuses the compiled programs.
"""

from __future__ import annotations

import numpy as np
import pytest
from reproduce_checks import ROOT, run_notebook
from reproduce_checks import run_tiny as _run

from benchmarks import ensemble_pp_neural

pytestmark = pytest.mark.full

NOTEBOOK = ROOT / "notebooks" / "neural_ensemblepp.ipynb"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    # Li et al. 2024, Fig. 1's parameter counts: a closed form, decided at every scale
    return _run(ensemble_pp_neural, tmp_path_factory.mktemp("ensemble_pp_neural"),
                expected={"Parameter ordering at M = 8": True})


def test_ensemble_pp_neural_tiny(tiny):
    module, config, report = tiny
    panels, runner = report.data["panels"], report.data["runner"]
    # the paper's parameter counts (Fig. 1), in the table and as a reproduced claim
    counts = report.table("Parameter counts")
    assert counts.row_labels == ["ES++", "EpiNet", "Ensemble+", "Greedy"]
    assert [row[1] for row in counts.rows[:3]] == ["11,713", "17,931", "22,288"]
    assert "11,713" in report.claims[0][0]
    params = report.table("Figs. 1 / 10")
    assert params.row_labels == [f"{a}, M = {m}" for a in module.index_agents(config)
                                 for m in config.sizes]
    figure3 = report.table("Fig. 3: final regret")
    assert figure3.row_labels == [*config.agents, module.RANDOM]
    assert report.table("Fig. 3: regret after").row_labels == list(config.agents)
    assert report.table("Paper horizon").row_labels == ["not run"]
    assert report.table("App. F.2").row_labels == list(config.lmc_agents)
    moderation = report.table("Moderation")
    assert moderation.row_labels == [*config.mod_agents, "always block", "always publish"]
    # a point shared by panels is one run: ES++ at the default M, pool, buffer and laws
    es = panels.comparison["quadratic"]["ES++"]
    assert panels.params["quadratic"]["ES++"][config.ensemble_size] is es
    assert panels.pools[config.pool_sizes[0]][config.ensemble_size] is es
    assert panels.buffers[config.buffers[0]] is es
    assert all(next(iter(by_law.values())) is es for by_law in panels.ablations.values())
    assert len(runner.runs.memory) == len(config.agents) + 1 + len(config.lmc_agents) + 1
    for result in panels.comparison["quadratic"].values():
        assert result.cumulative_regret.shape == (config.num_runs, config.num_records)
        assert np.all(np.diff(result.cumulative_regret, axis=1) >= -1e-5)
    # the timed run is run 0 of the runner's ES++ run (the same round function and keys)
    for label, costs in panels.costs.items():
        assert costs["steps"][-1] == config.lmc_horizon and np.all(costs["ms"] > 0)
        np.testing.assert_allclose(costs["regret"], panels.lmc[label].cumulative_regret[0, -1],
                                   rtol=1e-4)
    # accuracy is reported beside regret on the moderation task
    accuracy = module.accuracy(panels.moderation["ES++"])
    assert accuracy.shape == (config.mod_runs,) and np.all((accuracy >= 0) & (accuracy <= 1))
    rates = module.always_rates(runner)
    hate = runner.env("moderation").data.meta.hate_rate
    assert rates["always block"] == pytest.approx((hate, 0.5 * (1 - hate)))
    assert rates["always publish"] == pytest.approx((1 - hate, 1.0 * hate))


def test_ensemble_pp_neural_notebook_runs_at_tiny_sizes(tiny):
    namespace = run_notebook(NOTEBOOK, SCALE="tiny")
    assert namespace["config"] is ensemble_pp_neural.SCALES["tiny"]
    assert namespace["claims"]
