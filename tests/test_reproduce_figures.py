"""The compact figure scripts of benchmarks/ (``figure_script.main``): their verdict helpers,
their configurations at every scale (built, not run), and the claims they decide at ``tiny``.

A tiny run here asserts the verdict the paper states where the tiny scale decides it with fixed
keys (a wide gap); the other scripts' claims need the ``small`` scale (their pages on
docs/reproductions/ give the numbers), so only their configurations are checked.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from reproduce_checks import run_tiny

import jaxbandits as jb
from benchmarks import (
    dueling_scaling,
    ensemble_pp_fig6,
    ensemble_pp_tasks,
    figure_script,
    framework,
    neural_fig3,
    neurallog_appendix,
    neurallog_obd,
    reproduce,
)

SCRIPTS = (neural_fig3, ensemble_pp_fig6, ensemble_pp_tasks, neurallog_appendix, neurallog_obd,
           dueling_scaling)


def test_verdicts_of_paired_orderings():
    a = np.array([1.0, 2.0, 3.0, 4.0])
    assert figure_script.below(a, a + 1.0)[0] is True
    assert figure_script.below(a + 1.0, a)[0] is False
    assert figure_script.below(a, a + np.array([1.0, -1.0, 1.0, -1.0]))[0] is None
    assert figure_script.within(1.05 * a, a)[0] is True  # within +10%
    assert figure_script.within(2.0 * a, a)[0] is False
    assert figure_script.all_of([True, None]) is None
    assert figure_script.all_of([True, False, None]) is False
    assert figure_script.all_of([True, True]) is True
    assert figure_script.all_of(v for v in (True, None)) is None  # any iterable


def test_sublinear_reads_the_average_regret_over_the_second_half():
    class Curves:  # the fields of a Result that ``sublinear`` reads
        horizon = 100
        steps = np.array([25, 50, 75, 100])
        cumulative_regret = np.array([[25.0, 40.0, 50.0, 60.0], [25.0, 45.0, 60.0, 70.0]])

    assert figure_script.sublinear(Curves)[0] is True  # 0.8 -> 0.6 and 0.9 -> 0.7
    Curves.cumulative_regret = np.array([[10.0, 20.0, 40.0, 60.0], [10.0, 20.0, 40.0, 61.0]])
    assert figure_script.sublinear(Curves)[0] is False  # 0.4 -> 0.6, every run


def test_user_data_falls_back_to_the_stand_in_and_says_so(tmp_path):
    """A data set the papers use that is not shipped: read from the user's path, else the
    stand-in (or nothing), with a note naming the file and where to put it."""
    def banknote():
        return jb.make_env("classification", dataset="banknote", path=tmp_path)

    notes = []
    env, note = figure_script.user_data(banknote, lambda: "iris", "banknote", log=notes.append)
    assert env == "iris" and notes == [note]
    assert "data_banknote_authentication.txt" in note and "in place of banknote" in note
    env, note = figure_script.user_data(banknote, None, "banknote", log=notes.append)
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
