"""Extra per-round metrics (``Spec.metrics`` / ``Feedback.metrics``): the runner
accumulates them like the regret, bit for bit whatever the layout, through checkpoints and
streamed results; ``Result`` saves, loads and reduces them; plots and the command line show them.

One tiny environment (``MetricEnv``: a linear bandit reporting each round's squared regret and
the arm played) and two compiled programs serve every test.
"""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits import _io
from jaxbandits.core import Feedback
from jaxbandits.envs.linear import LinearEnv
from jaxbandits.results import Result, ResultWriter, paired_difference
from jaxbandits.simulate import trace_counts

METRICS = ("squared_regret", "chosen_arm")


class MetricEnv(LinearEnv):
    """A linear bandit that also reports ``regret^2`` and the index played each round; with
    ``poison > 0`` its ``chosen_arm`` is nan (for the non-finite check)."""

    name = "metric-test"
    poison: float = 0.0

    def spec(self):
        return super().spec().replace(metrics=METRICS)

    def feedback(self, key, env_state, context, action):
        base = super().feedback(key, env_state, context, action)
        arm = jnp.where(self.poison > 0, jnp.nan, action.astype(base.regret.dtype))
        return Feedback(reward=base.reward, regret=base.regret,
                        metrics={"squared_regret": base.regret**2, "chosen_arm": arm})


ENV = MetricEnv(dim=3, num_arms=4)
AGENT = jb.make_agent("lin-ts")
T, SEED = 30, 1
# Two programs: chunk_size=T and chunk_size=7, both with blocks of 2 runs (several waves).
KW = dict(record="all", block_runs=2, progress=False)


def _sim(num_runs=3, chunk_size=T, env=ENV, **kwargs):
    return jb.simulate(env, AGENT, SEED, T, num_runs, chunk_size=chunk_size, **{**KW, **kwargs})


def _assert_same(a: Result, b: Result, runs: int | None = None) -> None:
    rows = slice(None) if runs is None else slice(runs)
    np.testing.assert_array_equal(np.asarray(a.cumulative_regret)[rows],
                                  np.asarray(b.cumulative_regret))
    np.testing.assert_array_equal(np.asarray(a.cumulative_reward)[rows],
                                  np.asarray(b.cumulative_reward))
    assert list(a.metrics) == list(b.metrics) == list(METRICS)
    for name in METRICS:
        np.testing.assert_array_equal(np.asarray(a.metrics[name])[rows],
                                      np.asarray(b.metrics[name]), err_msg=name)


@pytest.fixture(scope="module")
def base() -> Result:
    return _sim()


# ------------------------------------------------------------------------------------------------
# The runner.


def test_recorded_metrics_are_the_cumulative_sums_of_the_rounds(base):
    assert list(base.metrics) == list(METRICS)
    dtype = base.cumulative_regret.dtype
    for name in METRICS:
        assert base.metrics[name].shape == (3, T) and base.metrics[name].dtype == dtype
    arms = np.diff(base.metrics["chosen_arm"], axis=1, prepend=0.0)
    np.testing.assert_array_equal(arms, np.round(arms))  # small integers: exact in float32
    assert arms.min() >= 0 and arms.max() < ENV.num_arms
    for run in range(base.num_runs):  # the run's instance, drawn as the runner draws it
        key = jax.random.fold_in(jax.random.fold_in(jax.random.key(SEED), run), 0)
        means = np.asarray(ENV.init(key).means)
        regret = (means.max() - means[arms[run].astype(int)]).astype(np.float64)
        np.testing.assert_allclose(base.cumulative_regret[run], np.cumsum(regret),
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(base.metrics["squared_regret"][run], np.cumsum(regret**2),
                                   rtol=1e-5, atol=1e-5)
    assert np.any(np.diff(arms, axis=1) != 0)  # not a constant column


def test_metrics_do_not_depend_on_num_runs_or_chunking(base):
    more = _sim(num_runs=8)  # more waves of the same program
    chunked = _sim(chunk_size=7)  # 7 does not divide 30
    _assert_same(more, base, runs=3)
    _assert_same(chunked, base)


def test_sweep_points_carry_the_metrics(base):
    results = jb.sweep(ENV, AGENT, SEED, {"env.noise_std": [float(ENV.noise_std), 1.0]}, T, 3,
                       chunk_size=T, **KW)
    first, second = results.values()
    _assert_same(first, base)
    assert list(second.metrics) == list(METRICS)
    assert not np.array_equal(second.cumulative_reward, base.cumulative_reward)


def test_checkpoint_kill_and_resume_give_the_same_metrics(base, tmp_path, monkeypatch):
    class Killed(BaseException):
        pass

    calls = []
    monkeypatch.setattr(_io, "fault_point", lambda name: calls.append(name))
    _assert_same(_sim(chunk_size=7, checkpoint_dir=tmp_path / "count"), base)
    total = len(calls)
    assert total > 20
    for k in range(1, total + 1, 5):
        seen = []

        def fault(name, k=k, seen=seen):
            seen.append(name)
            if len(seen) >= k:
                raise Killed(f"killed at operation {k} ({name})")

        monkeypatch.setattr(_io, "fault_point", fault)
        with pytest.raises(Killed):
            _sim(chunk_size=7, checkpoint_dir=tmp_path / f"k{k}")
        monkeypatch.setattr(_io, "fault_point", lambda name: None)
        _assert_same(_sim(chunk_size=7, checkpoint_dir=tmp_path / f"k{k}"), base)
    # a finished checkpoint resumed under another chunking, streamed to files
    again = _sim(checkpoint_dir=tmp_path / "count", save_to=tmp_path / "out" / "r")
    _assert_same(again, base)
    _assert_same(Result.load(tmp_path / "out" / "r"), base)


def test_non_finite_metric_names_the_metrics():
    with pytest.raises(FloatingPointError, match="metric \\(squared_regret, chosen_arm\\)"):
        _sim(env=ENV.replace(poison=1.0))


class _WrongKeys(MetricEnv):
    def feedback(self, key, env_state, context, action):
        f = super().feedback(key, env_state, context, action)
        return f.replace(metrics={"squared_regret": f.metrics["squared_regret"]})


class _NotScalar(MetricEnv):
    def feedback(self, key, env_state, context, action):
        f = super().feedback(key, env_state, context, action)
        return f.replace(metrics={**f.metrics, "chosen_arm": jnp.zeros(2)})


class _NoMetrics(MetricEnv):
    def feedback(self, key, env_state, context, action):
        f = super().feedback(key, env_state, context, action)
        return Feedback(reward=f.reward, regret=f.regret)


def _named(metrics):
    class Named(MetricEnv):
        def spec(self):
            return super().spec().replace(metrics=metrics)

    return Named(dim=3, num_arms=4)


@pytest.mark.parametrize("env,match", [
    (_WrongKeys(dim=3, num_arms=4), "'metric-test'.*keys \\['squared_regret'\\].*Spec.metrics"),
    (_NoMetrics(dim=3, num_arms=4), "'metric-test'.*keys \\[\\].*Spec.metrics"),
    (_NotScalar(dim=3, num_arms=4), "'metric-test'.*chosen_arm.*shape \\(\\)"),
    (_named(("regret",)), "'metric-test'.*'regret' is taken"),
    (_named(("weak-regret",)), "identifiers"),
    (_named(("a", "a")), "distinct"),
])
def test_feedback_metrics_must_match_the_spec_before_compiling(env, match):
    before = trace_counts()
    with pytest.raises(ValueError, match=match):
        jb.simulate(env, AGENT, 0, 5, 2, progress=False)
    assert trace_counts() == before


def test_environments_without_metrics_keep_their_files(tmp_path):
    plain = jb.simulate(LinearEnv(dim=3, num_arms=4), AGENT, 0, 5, 2, progress=False,
                        save_to=tmp_path / "plain")
    assert plain.metrics == {}
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "plain.json", "plain.regret.npy", "plain.reward.npy", "plain.steps.npy"]
    meta = json.loads((tmp_path / "plain.json").read_text())
    assert list(meta["arrays"]) == ["steps", "cumulative_regret", "cumulative_reward"]
    assert "metrics" not in meta


# ------------------------------------------------------------------------------------------------
# Results: save / load, streaming, statistics.


def test_npz_round_trip_keeps_the_metrics_in_order(base, tmp_path):
    base.save(tmp_path / "r")
    meta = json.loads((tmp_path / "r.json").read_text())
    assert list(meta["arrays"])[3:] == ["metric.squared_regret", "metric.chosen_arm"]
    loaded = Result.load(tmp_path / "r")
    _assert_same(loaded, base)
    assert loaded.final("chosen_arm") == base.final("chosen_arm")


def test_save_to_streams_the_metrics_memory_mapped(base, tmp_path):
    streamed = _sim(save_to=tmp_path / "s")
    _assert_same(streamed, base)
    for name in METRICS:
        assert (tmp_path / f"s.metric.{name}.npy").exists()
        assert isinstance(streamed.metrics[name], np.memmap)
    loaded = Result.load(tmp_path / "s")
    _assert_same(loaded, base)
    assert json.loads((tmp_path / "s.json").read_text())["storage"] == "npy"


def test_result_writer_takes_metric_rows(tmp_path):
    writer = ResultWriter(tmp_path / "w", 2, [1, 2], replay=False, metrics=("m",))
    rows = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match="exactly the metrics"):
        writer.write(0, rows, rows)
    writer.write(0, rows, rows, metric_rows={"m": 2 * rows})
    result = writer.finish(name="w")
    np.testing.assert_array_equal(result.metrics["m"], 2 * rows)
    with pytest.raises(ValueError, match="taken by a built-in"):
        ResultWriter(tmp_path / "x", 2, [1, 2], replay=False, metrics=("ctr",))


def test_tampered_metric_entries_are_refused(base, tmp_path):
    base.save(tmp_path / "r")
    meta = json.loads((tmp_path / "r.json").read_text())
    meta["arrays"]["metric.not-a-name"] = meta["arrays"].pop("metric.chosen_arm")
    (tmp_path / "r.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="identifiers"):
        Result.load(tmp_path / "r")
    meta["arrays"]["bogus"] = meta["arrays"].pop("metric.not-a-name")
    (tmp_path / "r.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="'arrays' must list"):
        Result.load(tmp_path / "r")


def test_statistics_understand_the_metric_names(base):
    values = base.metrics["chosen_arm"].astype(np.float64)
    np.testing.assert_allclose(base.mean("chosen_arm"), values.mean(axis=0))
    mean, half = base.final("chosen_arm")
    assert mean == pytest.approx(values[:, -1].mean()) and half > 0
    lower, upper = base.confidence_band("squared_regret")
    assert np.all(lower <= upper)
    assert base.metric_names == ("regret", "reward", *METRICS)
    assert paired_difference(base, base, metric="squared_regret") == (0.0, 0.0)
    with pytest.raises(ValueError, match="'squared_regret', 'chosen_arm'.*got 'weak_regret'"):
        base.final("weak_regret")


def test_to_dataframe_includes_the_metrics(base):
    pytest.importorskip("pandas")
    df = base.to_dataframe()
    assert list(df.metric.cat.categories) == ["regret", "reward", *METRICS]
    assert len(df) == 3 * T * 4
    part = df[df.metric == "chosen_arm"].value.to_numpy().reshape(3, T)
    np.testing.assert_array_equal(part, base.metrics["chosen_arm"].astype(np.float64))
    assert len(base.to_dataframe("squared_regret")) == 3 * T


# ------------------------------------------------------------------------------------------------
# Plots and the command line.


def test_plot_regret_of_an_extra_metric(base):
    import matplotlib.pyplot as plt

    fig = jb.plot_regret(base, metric="squared_regret")
    try:
        ax = fig.axes[0]
        assert ax.get_ylabel() == "cumulative squared regret"
        np.testing.assert_allclose(ax.lines[0].get_ydata(), base.mean("squared_regret"))
    finally:
        plt.close(fig)
    with pytest.raises(ValueError, match="no metric 'weak_regret'.*chosen_arm"):
        jb.plot_regret(base, metric="weak_regret")


def test_cli_table_has_a_column_per_metric(base):
    from jaxbandits.cli._reports import _ci, _table_markdown

    table = _table_markdown({"lin-ts": base}).splitlines()
    headers = [h.strip() for h in table[0].strip("|").split("|")]
    assert headers[1:4] == ["final regret (mean ± 95% CI)",
                            "final squared_regret (mean ± 95% CI)",
                            "final chosen_arm (mean ± 95% CI)"]
    cells = [c.strip() for c in table[2].strip("|").split("|")]
    assert cells[3] == _ci(*base.final("chosen_arm"), base.num_runs)
    one = Result(steps=base.steps, cumulative_regret=base.cumulative_regret[:1],
                 cumulative_reward=base.cumulative_reward[:1],
                 metrics={m: base.metrics[m][:1] for m in METRICS})
    bare = Result(steps=base.steps, cumulative_regret=base.cumulative_regret,
                  cumulative_reward=base.cumulative_reward)
    rows = _table_markdown({"one": one, "bare": bare}).splitlines()[2:]
    assert "n/a" in rows[0].split("|")[3]
    assert rows[1].split("|")[3].strip() == ""  # no such metric: an empty cell


def test_cli_plot_and_compare_take_the_metric_names(base, tmp_path, capsys):
    from jaxbandits.cli import main

    base.save(tmp_path / "res" / "lin-ts")
    folder = str(tmp_path / "res")
    assert main(["compare", folder, "--metric", "chosen_arm"]) == 0
    assert "final chosen_arm" in capsys.readouterr().out
    png = tmp_path / "m.png"
    assert main(["plot", folder, "--metric", "squared_regret", "--out", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert main(["compare", folder, "--metric", "weak_regret"]) == 2
    err = capsys.readouterr().err
    assert "--metric 'weak_regret' is not a metric of lin-ts" in err and "chosen_arm" in err
