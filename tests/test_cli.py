"""The command line: run (small), list, --set parsing and errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.cli import main, parse_settings


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


def test_default_run_uses_every_linear_agent(monkeypatch, tmp_path):
    """`jaxbandits run` with no arguments: linear, d = 20, K = 50, T = 10,000, 200 runs, every
    linear agent (the run itself is measured in the benchmarks; here compare is intercepted)."""
    seen = {}

    def fake_compare(env, agents, key, horizon, num_runs, **kwargs):
        seen.update(env=env, agents=agents, horizon=horizon, num_runs=num_runs)
        raise SystemExit(0)

    monkeypatch.setattr(jb, "compare", fake_compare)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["run"])
    assert seen["horizon"] == 10_000 and seen["num_runs"] == 200
    assert (seen["env"].dim, seen["env"].num_arms, seen["env"].name) == (20, 50, "linear")
    assert set(seen["agents"]) == set(jb.agent_names("linear"))
    assert {"greedy", "lin-ucb", "lin-ts"} <= set(seen["agents"])


@pytest.mark.parametrize(
    "argv, match",
    [
        (["run", "--agents", "lin-tss"], "did you mean 'lin-ts'"),
        (["run", "--env", "linear-sphere", "--agents", "lin-ucb"], "cannot act on environment"),
        (["run", "--horizon", "0"], "horizon must be a positive integer"),
        (["run", "--set", "agent.nonexistent=1"], "no agent run has that field"),
        (["run", "--set", "env.noise_std=-1"], "noise_std must be finite and >= 0"),
        (["run", "--agents", "lin-ts", "--set", "lin-ucb.reg=1"], "not among the agents run"),
    ],
)
def test_run_errors_exit_2_with_a_message(argv, match, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv + ["--no-progress"]) == 2
    assert match in capsys.readouterr().err


def test_list_prints_every_name(capsys):
    assert main(["list"]) == 0
    printed = capsys.readouterr().out
    for name in jb.agent_names() + jb.env_names():
        assert name in printed


def test_result_mean_of_cli_matches_api(tmp_path):
    main(["run", "--horizon", "60", "--runs", "2", "--out", str(tmp_path), "--no-progress",
          "--agents", "greedy", "--set", "env.dim=3", "--set", "env.num_arms=4"])
    direct = jb.simulate(jb.make_env("linear", dim=3, num_arms=4), jb.make_agent("greedy"),
                         0, 60, 2, progress=False)
    np.testing.assert_array_equal(jb.Result.load(tmp_path / "greedy").cumulative_regret,
                                  direct.cumulative_regret)
