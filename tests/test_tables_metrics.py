"""The shared pieces of the reports: Student-t quantiles (scipy's, checked against closed forms
and the table they replaced), the metric vocabulary, the table renderer, and the command line
as ``python -m jaxbandits``. Nothing here compiles a JAX program."""

from __future__ import annotations

import io
import math
import runpy

import numpy as np
import pytest
from scipy import stats

from jaxbandits import metrics
from jaxbandits.plotting import metric_label
from jaxbandits.results import RESERVED_METRICS, Result, check_metric_names, t_quantile
from jaxbandits.tables import print_table, render_table

# The hand-written table t_quantile read before it used scipy (df = 1..30, three decimals), and
# its approximation past 30 (1.96 + 2.4 / df).
OLD_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
            2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
            2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def _old_t(df: int) -> float:
    return OLD_T975[df - 1] if df <= 30 else 1.96 + 2.4 / df


def test_t_quantiles_are_scipys_for_df_1_to_200():
    dfs = np.arange(1, 201)
    ours = np.array([t_quantile(int(df)) for df in dfs])
    np.testing.assert_array_equal(ours, stats.t.ppf(0.975, dfs))  # the same function, bit for bit
    assert np.all(stats.t.cdf(ours, dfs) == pytest.approx(0.975, abs=1e-12))
    # closed forms: Cauchy (df = 1) and df = 2
    assert ours[0] == pytest.approx(math.tan(math.pi * 0.475), rel=1e-12)
    assert ours[1] == pytest.approx(0.95 / math.sqrt(2 * 0.975 * 0.025), rel=1e-12)
    # decreasing towards the normal quantile
    assert np.all(np.diff(ours) < 0) and ours[-1] > stats.norm.ppf(0.975)
    assert t_quantile(0) == math.inf and t_quantile(-3) == math.inf


def test_t_quantiles_differ_from_the_old_table_only_by_its_rounding():
    """The table held three decimals (within 5e-4 of the truth) and the approximation past 30
    was within 1.1e-3 relative: intervals move by at most that much, nothing else changed."""
    for df in range(1, 31):
        assert abs(t_quantile(df) - _old_t(df)) <= 5e-4 + 1e-12, df
    for df in range(31, 201):
        assert abs(t_quantile(df) / _old_t(df) - 1) < 1.1e-3, df


@pytest.mark.parametrize("runs", [2, 5, 31, 200])
def test_saved_result_intervals_are_the_t_intervals_of_its_runs(tmp_path, runs):
    """A saved and loaded result's interval is mean ± t_{0.975, n-1} s / sqrt(n) of its final
    column, to the last bit, and within the old table's rounding of the old number."""
    rng = np.random.default_rng(runs)
    regret = np.cumsum(rng.random((runs, 4)), axis=1)
    Result(steps=np.array([1, 2, 3, 4]), cumulative_regret=regret, cumulative_reward=-regret,
           name="r").save(tmp_path / "r")
    loaded = Result.load(tmp_path / "r")
    final = regret[:, -1].astype(np.float64)
    std = final.std(ddof=1)
    mean, half = loaded.final()
    assert mean == pytest.approx(final.mean(), rel=1e-15)
    assert half == pytest.approx(stats.t.ppf(0.975, runs - 1) * std / math.sqrt(runs),
                                 rel=1e-12)
    old = _old_t(runs - 1) * std / math.sqrt(runs)
    assert abs(half / old - 1) < 1.1e-3
    lower, upper = loaded.confidence_band()
    np.testing.assert_allclose((upper - lower)[-1] / 2, half, rtol=1e-12)


def test_metric_vocabulary_is_what_results_understand():
    plain = Result(steps=np.array([1, 2]), cumulative_regret=np.ones((3, 2)),
                   cumulative_reward=np.ones((3, 2)), metrics={"weak_regret": np.ones((3, 2))})
    replay = Result(steps=np.array([1, 2]), cumulative_regret=np.zeros((3, 2)),
                    cumulative_reward=np.array([[0.0, 1.0]] * 3),
                    accepted=np.array([[0.0, 4.0]] * 3))
    assert plain.metric_names == ("regret", "reward", "weak_regret")
    assert replay.metric_names == metrics.builtin_names(replay=True) == tuple(metrics.BUILTIN)
    assert (plain.default_metric, replay.default_metric) == ("regret", "ctr")
    assert RESERVED_METRICS == tuple(metrics.BUILTIN)
    np.testing.assert_array_equal(replay.mean("ctr"), [0.0, 0.25])  # reward / max(accepted, 1)
    assert metric_label("ctr") == metrics.metric("ctr").label
    assert metrics.metric("weak_regret").label == "cumulative weak regret"
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        metrics.metric("nope", extra=("weak_regret",))
    with pytest.raises(ValueError, match="needs a replay result"):
        plain.mean("ctr")
    with pytest.raises(ValueError, match="taken by a built-in"):
        check_metric_names(("ctr",), "env")
    assert check_metric_names(["a", "b"], "env") == ("a", "b")


def test_render_table_markdown_and_text():
    rows = [["lin-ts", "1.50 ± 0.10"], ["a|b", 2]]
    assert render_table(["agent", "final"], rows) == (
        "| agent | final |\n|---|---|\n| lin-ts | 1.50 ± 0.10 |\n| a\\|b | 2 |")
    assert render_table(["agent", "final"], rows, align="lr", title="### T", note="n") == (
        "### T\n\n| agent | final |\n|---|---:|\n| lin-ts | 1.50 ± 0.10 |\n| a\\|b | 2 |\n\nn")
    assert render_table(["agent", "final"], rows, format="text").splitlines() == [
        "agent         final", "lin-ts  1.50 ± 0.10", "a|b               2"]
    with pytest.raises(ValueError, match="row 0 has 1 cells"):
        render_table(["a", "b"], [["x"]])
    with pytest.raises(ValueError, match="format must be"):
        render_table(["a"], [], format="html")
    with pytest.raises(ValueError, match="align must be"):
        render_table(["a", "b"], [], align="lc")


def test_print_table_off_a_terminal_is_markdown():
    out = io.StringIO()
    print_table(["name", "paper"], [["lin-ts", "Agrawal & Goyal 2013"]], title="agents",
                file=out)
    assert out.getvalue() == ("agents\n\n| name | paper |\n|---|---|\n"
                              "| lin-ts | Agrawal & Goyal 2013 |\n")


def test_python_dash_m_jaxbandits_is_the_command_line(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["jaxbandits", "--version"])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_module("jaxbandits", run_name="__main__")
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("jaxbandits ")


def test_list_prints_the_papers_the_registry_records(capsys):
    """``jaxbandits list`` cites each environment's and agent's paper exactly as the registry
    holds it (the command converts nothing)."""
    from jaxbandits.cli import main
    from jaxbandits.registry import AGENTS, ENVS, describe_agent

    assert main(["list"]) == 0
    lines = set(capsys.readouterr().out.splitlines())
    rows = [(name, cls.description, cls.paper) for name, cls in ENVS.items()]
    rows += [(name, *describe_agent(name)) for name in AGENTS]
    for row in rows:
        assert "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" in lines, row
