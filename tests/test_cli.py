"""The command line: run (small), list, --set parsing and errors."""

from __future__ import annotations

import json
import os

import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.cli import DEFAULT_EXPERIMENT, main, parse_settings
from jaxbandits.registry import AGENTS
from jaxbandits.results import paired_difference


def test_parse_settings():
    settings = parse_settings(["env.noise_std=1", "agent.reg=0.5", "lin-ucb.explore_scale=0.2",
                               "env.theta_prior=gaussian", "lin-ts.explore_scale=1e-1"])
    assert settings == {"env": {"noise_std": 1, "theta_prior": "gaussian"}, "agent": {"reg": 0.5},
                        "lin-ucb": {"explore_scale": 0.2}, "lin-ts": {"explore_scale": 0.1}}
    with pytest.raises(ValueError, match="TARGET.FIELD=VALUE"):
        parse_settings(["noise_std=1"])


def test_run_writes_results_folder(tmp_path, capsys):
    out = tmp_path / "res"
    code = main(["run", "--horizon", "150", "--runs", "3", "--out", str(out), "--no-progress",
                 "--agents", "lin-ts,lin-ucb", "--set", "env.dim=4", "--set", "env.num_arms=6",
                 "--set", "lin-ucb.explore_scale=0.2", "--set", "agent.reg=2.0"])
    assert code == 0
    for name in ("lin-ts", "lin-ucb"):
        result = jb.Result.load(out / name)
        assert result.cumulative_regret.shape[0] == 3 and result.steps[-1] == 150
        assert result.agent_config["reg"] == 2.0
        assert result.env_config["dim"] == 4
    assert json.loads((out / "lin-ucb.json").read_text())["agent_config"]["explore_scale"] == 0.2
    assert (out / "regret.png").read_bytes()[:4] == b"\x89PNG"
    summary = (out / "summary.md").read_text()
    assert "| lin-ts |" in summary and "seed-steps/s" in summary
    printed = capsys.readouterr().out
    assert "final cumulative regret" in printed and "lin-ucb" in printed


def _intercept(monkeypatch, tmp_path, argv: list[str]) -> dict:
    """Runs the command with ``jb.compare`` intercepted: returns what it was called with."""
    seen = {}

    def fake_compare(env, agents, key, horizon, num_runs, **kwargs):
        seen.update(env=env, agents=agents, horizon=horizon, num_runs=num_runs, **kwargs)
        raise SystemExit(0)

    monkeypatch.setattr(jb, "compare", fake_compare)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(argv)
    return seen


def test_default_experiment_is_well_specified_and_tuned(monkeypatch, tmp_path, capsys):
    """`jaxbandits run` with no arguments: linear, d = 20, K = 50, T = 10,000, 200 runs, the
    default experiment's agents, each well specified for the environment (noise 0.5, prior
    variance 1/d: reg = 0.25 * 20 = 5) and lin-ucb's tuned scale, all said in the output."""
    seen = _intercept(monkeypatch, tmp_path, ["run"])
    assert seen["horizon"] == 10_000 and seen["num_runs"] == 200
    assert (seen["env"].dim, seen["env"].num_arms, seen["env"].name) == (20, 50, "linear")
    agents = seen["agents"]
    assert list(agents) == DEFAULT_EXPERIMENT["agents"]
    assert agents["lin-ucb"].explore_scale == DEFAULT_EXPERIMENT["tuned"]["lin-ucb"][
        "explore_scale"]
    for name in ("lin-ts", "lin-ucb", "ensemble-pp", "lin-phe"):
        assert agents[name].reg == pytest.approx(5.0)
    assert agents["ensemble-pp"].noise_std == 0.5 and agents["lin-es"].perturb_std == 0.5
    printed = capsys.readouterr().out
    assert "well specified for linear" in printed and "tuned on this experiment" in printed
    assert seen["run_info"]["tuned"] == DEFAULT_EXPERIMENT["tuned"]
    assert seen["block_runs"] == DEFAULT_EXPERIMENT["block_runs"] == 100  # 2 x 100 = 200 runs


def test_block_runs_option(monkeypatch, tmp_path, capsys):
    """--block-runs N reaches compare and sweep; without it the engine's default applies, also
    to the built-in experiment at another run count; N < 1 is an error naming the option."""
    assert "block_runs" not in _intercept(monkeypatch, tmp_path, ["run", "--runs", "50"])
    assert "block_runs" not in _intercept(monkeypatch, tmp_path, ["run", "--agents", "lin-ts"])
    assert _intercept(monkeypatch, tmp_path, ["run", "--block-runs", "16"])["block_runs"] == 16
    seen = {}

    def fake_sweep(env, agent, key, grid, horizon, num_runs, **kwargs):
        seen.update(kwargs)
        raise SystemExit(0)

    monkeypatch.setattr(jb, "sweep", fake_sweep)
    with pytest.raises(SystemExit):
        main(["sweep", "--grid", "agent.reg=1,2", "--block-runs", "8"])
    assert seen["block_runs"] == 8
    assert main(["run", "--block-runs", "0", "--no-progress"]) == 2
    assert "--block-runs must be a positive integer" in capsys.readouterr().err


@pytest.mark.full
def test_default_experiments_block_keeps_its_numbers():
    """The built-in experiment plays its 200 runs in blocks of 100 instead of the CPU default
    128 (no padded runs): its agents' runs are the same bits in either block size."""
    env = jb.make_env(DEFAULT_EXPERIMENT["env"])
    agents = {n: jb.make_agent(n, env=env, horizon=40, **DEFAULT_EXPERIMENT["tuned"].get(n, {}))
              for n in DEFAULT_EXPERIMENT["agents"]}
    runs = {b: jb.compare(env, agents, 0, 40, 3, block_runs=b, record="all") for b in (100, 128)}
    for name in agents:
        np.testing.assert_array_equal(runs[100][name].cumulative_regret,
                                      runs[128][name].cumulative_regret)
        np.testing.assert_array_equal(runs[100][name].cumulative_reward,
                                      runs[128][name].cumulative_reward)


def test_misspecified_keeps_the_bare_defaults(monkeypatch, tmp_path):
    seen = _intercept(monkeypatch, tmp_path, ["run", "--env", "russo", "--misspecified",
                                              "--agents", "lin-ts,ensemble-pp"])
    assert seen["agents"]["lin-ts"] == jb.make_agent("lin-ts")
    assert seen["agents"]["ensemble-pp"] == jb.make_agent("ensemble-pp")
    assert seen["run_info"]["well_specified"] is False


def test_set_wins_over_the_environment(monkeypatch, tmp_path):
    seen = _intercept(monkeypatch, tmp_path, ["run", "--env", "russo", "--agents", "lin-ts",
                                              "--set", "agent.reg=0.5"])
    agent = seen["agents"]["lin-ts"]
    assert agent.reg == 0.5 and agent.noise_std == 1.0  # reg set, noise from the environment


def test_default_agents_are_those_that_can_act(monkeypatch, tmp_path):
    """On the sphere (vector actions) lin-ucb is left out instead of failing the command; on
    shuttle (an arm set that changes every round) every GLM and neural agent is in, and each
    can be initialised and play a round (abstractly: no compilation)."""
    import jax

    seen = _intercept(monkeypatch, tmp_path, ["run", "--env", "linear-sphere"])
    assert "lin-ucb" not in seen["agents"] and {"lin-ts", "ensemble-pp"} <= set(seen["agents"])
    assert all("vector" in a.action_kinds for a in seen["agents"].values())

    try:
        jb.make_env("shuttle")
    except FileNotFoundError:
        pytest.skip("the UCI shuttle file is not in ../shared/data")
    seen = _intercept(monkeypatch, tmp_path, ["run", "--env", "shuttle", "--horizon", "300"])
    env, agents = seen["env"], seen["agents"]
    wanted = [n for n, c in AGENTS.items() if c().model_family in ("glm", "neural",
                                                                    "neural-logistic")]
    assert set(wanted) <= set(agents) and len(wanted) >= 12
    spec, key = env.spec(), jax.random.key(0)
    env_state = env.init(key)
    context = jax.eval_shape(env.observe, key, env_state, 0)
    for name, agent in agents.items():
        state = jax.eval_shape(agent.init, key, spec)
        action, state = jax.eval_shape(agent.act, state, key, context)
        assert action.shape == () and jnp.issubdtype(action.dtype, jnp.integer), name
        if getattr(AGENTS[name](), "buffer_size", 0) is None:
            assert agent.buffer_size == 300, name  # the whole history of T = 300 rounds


def test_dueling_environments_run_at_their_papers_size(monkeypatch, tmp_path):
    """A dueling environment without --horizon / --runs: the paper's T = 2,000 and 20 seeds
    (not the linear experiment's 10,000 x 200, hours of neural training on a CPU); every
    default agent plays pairs; explicit options win."""
    seen = _intercept(monkeypatch, tmp_path, ["run", "--env", "dueling-square"])
    assert (seen["horizon"], seen["num_runs"]) == (2000, 20)
    assert {"random", "colstim", "nvldb-ucb-asym", "ndb-ucb"} <= set(seen["agents"])
    assert all("pair" in a.action_kinds for a in seen["agents"].values())
    assert seen["agents"]["nvldb-ucb-asym"].buffer_size == 2000  # the whole history
    seen = _intercept(monkeypatch, tmp_path, ["run", "--env", "dueling-cosine", "--horizon",
                                              "300", "--runs", "3", "--agents", "maxinp"])
    assert (seen["horizon"], seen["num_runs"]) == (300, 3)
    assert seen["agents"]["maxinp"].horizon_hint == 300


def test_disjoint_classification_runs_in_about_a_minute(monkeypatch, tmp_path):
    """disjoint-classification without --horizon / --runs: T = 1,000 and 256 runs (the generic
    10,000 x 200 took over 6 minutes on digits, d = 64 per arm); the disjoint agents play."""
    seen = _intercept(monkeypatch, tmp_path, ["run", "--env", "disjoint-classification"])
    assert (seen["horizon"], seen["num_runs"]) == (1000, 256)
    assert {"random", "disjoint-lin-ucb", "disjoint-lin-ts", "disjoint-epsilon-greedy"} <= set(
        seen["agents"])


@pytest.mark.parametrize(
    "argv, match",
    [
        (["run", "--agents", "lin-tss"], "did you mean 'lin-ts'"),
        (["run", "--env", "linear-sphere", "--agents", "lin-ucb"], "cannot act on environment"),
        (["run", "--env", "linear-sphere", "--agents", "lin-ucb", "--misspecified"],
         "cannot act on environment"),
        (["run", "--record", "often"], "--record takes log, all or a whole number"),
        (["sweep", "--grid", "agent.explore_scale="], "give comma-separated values"),
        (["sweep", "--grid", "lin-ts.reg=1,2"], "the target is agent"),
        (["run", "--horizon", "0"], "horizon must be a positive integer"),
        (["run", "--set", "agent.nonexistent=1"], "no agent run has that field"),
        (["run", "--set", "env.noise_std=-1"], "noise_std must be finite and >= 0"),
        (["run", "--agents", "lin-ts", "--set", "lin-ucb.reg=1"], "not among the agents run"),
        (["run", "--feedback-delay", "-1"], "--feedback-delay takes a whole number"),
        (["run", "--feedback-delay", "1.5"], "--feedback-delay takes a whole number"),
        (["run", "--feedback-delay", "9,2"], "LOW <= HIGH, got '9,2'"),
        (["run", "--feedback-delay", "1,2,3"], "--feedback-delay takes a whole number"),
        (["sweep", "--grid", "agent.reg=1", "--update-every", "0"],
         "--update-every must be a positive integer"),
        (["run", "--feedback-delay", str(2**31)], "--feedback-delay / --update-every: "),
    ],
)
def test_run_errors_exit_2_with_a_message(argv, match, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv + ["--no-progress"]) == 2
    assert match in capsys.readouterr().err


def test_feedback_flags_reach_the_runner(monkeypatch, tmp_path, capsys):
    """--feedback-delay N or LOW,HIGH and --update-every B are simulate's feedback_delay and
    update_every, for run and sweep; the defaults pass nothing (the undelayed runner); the
    neural agents' own update_every stays a --set field."""
    seen = _intercept(monkeypatch, tmp_path, ["run", "--agents", "lin-ts,neural-ucb",
                                              "--feedback-delay", "3600", "--update-every",
                                              "1000", "--set", "neural-ucb.update_every=50"])
    assert (seen["feedback_delay"], seen["update_every"]) == (3600, 1000)
    assert seen["agents"]["neural-ucb"].update_every == 50
    assert "rewards delayed 3,600 rounds, agents updated at the end of every 1,000 rounds" \
        in capsys.readouterr().out
    seen = _intercept(monkeypatch, tmp_path, ["run", "--agents", "lin-ts", "--feedback-delay",
                                              " 2, 9"])
    assert (seen["feedback_delay"], seen["update_every"]) == ((2, 9), 1)
    seen = _intercept(monkeypatch, tmp_path, ["run", "--agents", "lin-ts"])
    assert "feedback_delay" not in seen and "update_every" not in seen

    def fake_sweep(env, agent, key, grid, horizon, num_runs, **kwargs):
        seen.update(grid=grid, **kwargs)
        raise SystemExit(0)

    monkeypatch.setattr(jb, "sweep", fake_sweep)
    seen.clear()
    with pytest.raises(SystemExit):
        main(["sweep", "--grid", "agent.reg=1,2", "--feedback-delay", "0,5",
              "--update-every", "3"])
    assert (seen["feedback_delay"], seen["update_every"]) == ((0, 5), 3)
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--feedback-delay N|LOW,HIGH" in text and "(default: 0)" in text
    assert "(jb.simulate's update_every; not a neural agent's training schedule" in text


@pytest.mark.full
def test_delayed_run_is_simulate_with_the_same_options(tmp_path):
    """A tiny delayed, batched run: the numbers of jb.simulate with feedback_delay and
    update_every, both recorded in every result's run_info and in summary.md."""
    argv = ["run", "--runs", "2", "--out", str(tmp_path), "--no-progress", "--agents",
            "lin-ts", "--feedback-delay", "1,3", "--update-every", "4", *TINY]
    assert main(argv) == 0
    env = jb.make_env("linear", dim=3, num_arms=4)
    direct = jb.simulate(env, jb.make_agent("lin-ts", env=env, horizon=60), 0, 60, 2,
                         progress=False, feedback_delay=(1, 3), update_every=4)
    saved = jb.Result.load(tmp_path / "lin-ts")
    np.testing.assert_array_equal(saved.cumulative_regret, direct.cumulative_regret)
    assert saved.run_info["feedback_delay"] == [1, 3] and saved.run_info["update_every"] == 4
    summary = (tmp_path / "summary.md").read_text()
    assert "uniform on 1 to 3 rounds" in summary
    assert "`--feedback-delay 1,3 --update-every 4`" in summary


def test_plot_and_compare_errors(capsys, tmp_path):
    assert main(["plot", str(tmp_path / "nowhere")]) == 2
    assert "no such results folder" in capsys.readouterr().err
    assert main(["compare", str(tmp_path)]) == 2
    assert "no saved results" in capsys.readouterr().err


def test_list_prints_every_name(capsys):
    assert main(["list"]) == 0
    printed = capsys.readouterr().out
    for name in jb.agent_names() + jb.env_names():
        assert name in printed


TINY = ["--set", "env.dim=3", "--set", "env.num_arms=4", "--horizon", "60"]


def test_result_of_cli_matches_api(tmp_path):
    """The command's agent is ``make_agent(name, env=env, horizon=T)``: the same numbers."""
    main(["run", "--runs", "2", "--out", str(tmp_path), "--no-progress", "--agents", "greedy",
          *TINY])
    env = jb.make_env("linear", dim=3, num_arms=4)
    direct = jb.simulate(env, jb.make_agent("greedy", env=env, horizon=60), 0, 60, 2,
                         progress=False)
    np.testing.assert_array_equal(jb.Result.load(tmp_path / "greedy").cumulative_regret,
                                  direct.cumulative_regret)


def test_run_record_in_summary_and_json(tmp_path, capsys):
    """The exact command, the overrides, the values taken from the environment, the seed, the
    versions and the devices, read back from summary.md and every result's .json."""
    import jax
    import jaxlib

    argv = ["run", "--runs", "2", "--out", str(tmp_path), "--agents", "lin-ts,lin-ucb",
            "--seed", "3", "--set", "lin-ucb.explore_scale=0.3", *TINY]
    assert main(argv) == 0
    summary = (tmp_path / "summary.md").read_text()
    command = "jaxbandits " + " ".join(argv)
    assert f"command: `{command}`" in summary
    assert "`lin-ucb.explore_scale=0.3`" in summary and "`env.dim=3`" in summary
    assert f"jax {jax.__version__}" in summary and f"jaxlib {jaxlib.__version__}" in summary
    assert f"jaxbandits {jb.__version__}" in summary and "numpy" in summary
    assert "lin-ts: reg=0.75 (from the environment)" in summary  # prior variance 1/3
    assert "devices: " in summary and "seed: 3" in summary
    for name in ("lin-ts", "lin-ucb"):
        info = json.loads((tmp_path / f"{name}.json").read_text())["run_info"]
        assert info["command"] == command and "lin-ucb.explore_scale=0.3" in info["overrides"]
        assert info["jax"] == jax.__version__ and info["seed"] == 3
        assert jb.Result.load(tmp_path / name).run_info["command"] == command


@pytest.mark.full
def test_output_in_a_log_file(tmp_path):
    """Stdout and stderr redirected to files (not terminals): the table is complete (no name
    or header cut at 80 columns), progress comes as plain lines, compiling is announced."""
    import subprocess
    import sys

    log, err = tmp_path / "out.log", tmp_path / "err.log"
    with open(log, "w") as out_file, open(err, "w") as err_file:
        code = subprocess.run(
            [sys.executable, "-m", "jaxbandits.cli", "run", "--runs", "2", "--out",
             str(tmp_path / "res"), "--agents", "lin-ts,ensemble-sampling", "--chunk-size", "20",
             "--cpu-devices", "1", *TINY],
            stdout=out_file, stderr=err_file, env={**os.environ, "COLUMNS": "40"}).returncode
    assert code == 0, err.read_text()
    printed = log.read_text()
    assert "| ensemble-sampling |" in printed and "final regret (mean ± 95% CI)" in printed
    assert "…" not in printed
    progress = err.read_text()
    assert "compiling" in progress and "100%" in progress
    assert progress.count("seed-steps/s") >= 2


@pytest.mark.full
def test_the_executable_exits_with_mains_code(tmp_path):
    """``python -m jaxbandits`` (the ``jaxbandits`` executable's entry, which skips the
    interpreter's teardown) exits with main's code and flushes what main printed."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "jaxbandits", "run", "--runs", "0", "--out",
                           str(tmp_path / "res")], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("jaxbandits: error:") and "runs" in done.stderr
    listed = subprocess.run([sys.executable, "-m", "jaxbandits", "list"], capture_output=True,
                            text=True)
    assert listed.returncode == 0 and "lin-ts" in listed.stdout


def test_one_run_has_no_interval(tmp_path, capsys):
    assert main(["run", "--runs", "1", "--out", str(tmp_path), "--no-progress", "--agents",
                 "lin-ts", *TINY]) == 0
    assert "± n/a" in capsys.readouterr().out and "± n/a" in (tmp_path / "summary.md").read_text()


def test_record_options(tmp_path):
    for record, steps in (("all", list(range(1, 61))), ("25", [25, 50, 60])):
        out = tmp_path / record
        assert main(["run", "--runs", "2", "--out", str(out), "--no-progress", "--agents",
                     "lin-ts", "--record", record, *TINY]) == 0
        assert jb.Result.load(out / "lin-ts").steps.tolist() == steps


def test_sweep_plot_and_compare_commands(tmp_path, capsys):
    """`sweep` writes one result per grid point (equal to jb.sweep), summary.md, regret.png and
    final.png; `plot` redraws saved folders; `compare` tabulates them with paired differences
    under common random numbers and says n/a when the runs are not paired."""
    out = tmp_path / "sweep"
    assert main(["sweep", "--agent", "lin-ucb", "--grid", "agent.explore_scale=0.1,0.5",
                 "--runs", "3", "--out", str(out), "--no-progress", *TINY]) == 0
    env = jb.make_env("linear", dim=3, num_arms=4)
    direct = jb.sweep(env, jb.make_agent("lin-ucb", env=env, horizon=60), 0,
                      {"explore_scale": [0.1, 0.5]}, 60, 3, progress=False)
    for label, result in direct.items():
        np.testing.assert_array_equal(jb.Result.load(out / label).cumulative_regret,
                                      result.cumulative_regret)
    for name in ("final.png", "regret.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG"
    assert "explore_scale=0.1" in (out / "summary.md").read_text()

    other = tmp_path / "other"  # another seed: not common random numbers with the sweep
    assert main(["run", "--runs", "3", "--out", str(other), "--no-progress", "--agents",
                 "lin-ts", "--seed", "1", *TINY]) == 0
    capsys.readouterr()
    assert main(["plot", str(out), str(other), "--log-y", "--out",
                 str(tmp_path / "both.png")]) == 0
    assert (tmp_path / "both.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["plot", str(out)]) == 0 and (out / "regret.png").exists()
    capsys.readouterr()
    assert main(["compare", str(out), str(other)]) == 0
    table = capsys.readouterr().out
    a, b = direct["explore_scale=0.1"], direct["explore_scale=0.5"]
    diff, half = paired_difference(b, a)
    assert f"{diff:,.2f} ± {half:,.2f}" in table
    assert "not common random numbers" in table


def test_version_and_help(capsys):
    import jax

    with pytest.raises(SystemExit):
        main(["--version"])
    assert f"jax {jax.__version__}" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # unwrapped
    assert "default: 10,000, or the environment's paper's" in text
    assert "results/<env>-<time>" in text
