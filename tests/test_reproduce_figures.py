"""The figure scripts of benchmarks/ whose body plays ``{panel: Experiment}`` through
``framework.run_experiments``: the verdict helpers they add to the framework, their
configurations at every scale (built, not run), and the claims they decide at ``tiny``.

A tiny run here asserts the verdict the paper states where the tiny scale decides it with fixed
keys (a wide gap); the other claims need the ``small`` scale (docs/reproductions/ gives the
numbers).
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import numpy as np
import pytest
from reproduce_checks import run_tiny

import jaxbandits as jb
from benchmarks import (
    dueling_scaling,
    ensemble_pp_fig6,
    ensemble_pp_tasks,
    framework,
    neural_fig3,
    neurallog_appendix,
    neurallog_obd,
    reproduce,
)

SCRIPTS = (neural_fig3, ensemble_pp_fig6, ensemble_pp_tasks, neurallog_appendix, neurallog_obd,
           dueling_scaling)


class Curves:
    """The fields of a Result that the verdicts read: ``(runs, steps)`` cumulative regret."""

    def __init__(self, regret, steps=None):
        self.cumulative_regret = np.asarray(regret, np.float64).reshape(len(regret), -1)
        self.steps = np.arange(1, self.cumulative_regret.shape[1] + 1) if steps is None else steps
        self.horizon = int(self.steps[-1])


def test_paired_verdicts_of_the_figure_scripts():
    a = np.array([1.0, 2.0, 3.0, 4.0])
    # "a below b" decided by the paired interval alone (tol = inf), either way or not at all
    assert framework.worse_than(Curves(a + 1.0), Curves(a), tol=math.inf)[0] is True
    assert framework.worse_than(Curves(a), Curves(a + 1.0), tol=math.inf)[0] is False
    assert framework.worse_than(Curves(a + [1.0, -1.0, 1.0, -1.0]), Curves(a),
                                tol=math.inf)[0] is None
    assert framework.within(Curves(1.05 * a), Curves(a))[0] is True  # within +10%
    assert framework.within(Curves(2.0 * a), Curves(a))[0] is False
    assert framework.within(Curves(1.2 * a + [0.5, -0.5, 0.5, -0.5]), Curves(a))[0] is None
    verdict, evidence = framework.every({"x": (True, "1"), "y": (None, "2")})
    assert (verdict, evidence) == (None, "x: 1; y: 2")
    assert framework.every({"x": (True, ""), "y": (False, "")})[0] is False


def test_sublinear_reads_the_average_regret_over_the_second_half():
    steps = np.array([25, 50, 75, 100])
    curves = Curves([[25.0, 40.0, 50.0, 60.0], [25.0, 45.0, 60.0, 70.0]], steps)
    assert framework.sublinear(curves)[0] is True  # 0.8 -> 0.6 and 0.9 -> 0.7
    curves = Curves([[10.0, 20.0, 40.0, 60.0], [10.0, 20.0, 40.0, 61.0]], steps)
    assert framework.sublinear(curves)[0] is False  # 0.4 -> 0.6, every run


def test_user_data_falls_back_to_the_stand_in_and_says_so(tmp_path):
    """A data set the papers use that is not shipped: read from the user's path, else the
    stand-in (or nothing), with a note naming the file and where to put it."""
    def banknote():
        return jb.make_env("classification", dataset="banknote", path=tmp_path)

    notes = []
    env, note = framework.user_data(banknote, lambda: "iris", "banknote", log=notes.append)
    assert env == "iris" and notes == [note]
    assert "data_banknote_authentication.txt" in note and "in place of banknote" in note
    env, note = framework.user_data(banknote, None, "banknote", log=notes.append)
    assert env is None and note.endswith("banknote is skipped")
    table = neurallog_appendix.standin("banknote").data
    assert (table.meta.name, table.meta.dim, table.meta.num_classes) == ("iris", 4, 3)


@pytest.mark.parametrize("module", [
    pytest.param(m, marks=[pytest.mark.full] if m is ensemble_pp_tasks else [], id=m.NAME)
    for m in SCRIPTS])  # the authors' Ensemble++ instances take seconds to build
def test_every_scale_builds_and_is_listed(module):
    """Each scale's experiments are built (no run): agents and environments exist, every panel
    plays the scale's horizon and runs, and the script is on the reproduction list."""
    assert tuple(module.SCALES) == framework.SCALES
    assert module.NAME in reproduce.PAPERS
    for config in module.SCALES.values():
        experiments = module.experiments(config)
        assert experiments
        for experiment in experiments.values():
            assert isinstance(experiment, framework.Experiment) and experiment.agents
            assert experiment.options["block_runs"] == experiment.num_runs
            assert experiment.horizon in experiment.options["record"]


def test_scales_hold_the_papers_sizes():
    paper = {m.NAME: m.SCALES["paper"] for m in SCRIPTS}
    assert dataclasses.astuple(paper["ensemble_pp_fig6"])[:4] == (50, 10_000, 1000, 200)
    assert paper["neurallog_appendix"].pools == (10, 50, 10_000)
    assert paper["neurallog_appendix"].pool_functions == ("h1", "h2", "h3", "h4", "h5", "h6")
    assert paper["neurallog_appendix"].datasets == ("magic", "banknote", "phoneme", "mushroom",
                                                    "mnist")
    assert (paper["neurallog_obd"].widths, paper["neurallog_obd"].horizon) == ((20, 50, 100),
                                                                              10_000)
    assert paper["ensemble_pp_tasks"].tasks == ("quadratic", "neural", "shuttle", "mushroom")
    duel = paper["dueling_scaling"]
    assert (duel.wide, duel.large_dim, duel.many_arms, duel.big_dim, duel.ts_widths) == (
        100, 10, 10, 100, (500, 1000))
    assert neural_fig3.SCALES["paper"].first_epochs == (50, 100, 300, 1000)


@pytest.mark.full
def test_ensemble_pp_fig6_tiny(tmp_path):
    """Li et al. 2024, Fig. 6: ES matches TS at a moderate M, and M = 1 does not (tiny: d = 4,
    K = 20, 16 runs; the gap at M = 1 is +38 ± 33 against a tolerance of 2)."""
    _, config, report = run_tiny(ensemble_pp_fig6, tmp_path, expected={
        "[Fig. 6] ES matches TS": True, "[Fig. 6] the smallest M": True})
    assert report.table("Gap to TS").row_labels == [f"M = {m}" for m in config.sizes]


@pytest.mark.full
def test_dueling_scaling_tiny(tmp_path):
    """Oh et al. 2026, Fig. E.2's ordering at the tiny width: NVLDB-UCB-ASYM ends below uniform
    pairs (8 runs of T = 100: paired gap -125 ± 51)."""
    _, _, report = run_tiny(dueling_scaling, tmp_path, "--set", 'figures=["E.2"]', expected={
        "[Fig. E.2] every NVLDB variant ends below every baseline": True})
    assert report.table("R(T)/T").row_labels == ["Fig. E.2: square, m = 8"] * 2


def test_neural_fig3_claims_on_results_with_a_known_gap():
    """Sun et al. 2025, Fig. 3's claims read the right results: b = 1.5 clearly above b = 2.618
    at every T_0 decides "larger regret" True, the swap decides it False; equal T_0 means are a
    minor effect; Lemma E.1's factor is smallest at b = 2.618 (closed form)."""
    config, gold = neural_fig3.SCALES["tiny"], neural_fig3.GOLD
    low, high = Curves([10.0, 11.0, 12.0, 13.0]), Curves([20.0, 22.0, 21.0, 23.0])

    def verdicts(by_b):
        panels = {f"T_0 = {t0}": {"Neural-ES-DT": by_b} for t0 in config.first_epochs}
        return [v for _, v, _ in neural_fig3.claims(panels, config)]

    assert verdicts({1.5: high, gold: low}) == [True, True, True]
    assert verdicts({1.5: low, gold: high}) == [True, False, True]


@pytest.mark.full
def test_neurallog_obd_tiny(tmp_path):
    """Bae & Lee 2025, Table 2's constant rows: NeuralLog-UCB-2 does not use kappa, so its OBD
    replay is bit-identical at kappa = 50 and 100 (tiny: 200 logged events, 2 runs)."""
    if not (Path(os.environ["JAXBANDITS_DATA"].split(os.pathsep)[0]) / "obd").is_dir():
        pytest.skip("the OBD samples are not in $JAXBANDITS_DATA")
    _, _, report = run_tiny(neurallog_obd, tmp_path, "--set", 'agents=["neurallog-ucb-2"]',
                            "--set", 'sweeps=["kappa"]', expected={"do not depend on kappa": True})
    assert "['NL-UCB-2'] of ['NL-UCB-2']" in report.claims[0].evidence
