"""Every setting is validated at construction: field types, the remaining
ranges, the command line's booleans and its results folder. Construction only: nothing here
compiles (the CLI tests intercept ``jb.compare``)."""

from __future__ import annotations

import os
import re

import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.cli import _folders as cli
from jaxbandits.cli import main
from jaxbandits.core import check_types, field_kinds
from jaxbandits.registry import AGENTS, ENVS

# ------------------------------------------------------------------------------------------------
# Bad inputs, one per field kind.


@pytest.mark.parametrize(
    "make, name, overrides, match",
    [
        ("env", "linear", {"dim": True}, "linear: dim must be an integer, got True"),
        ("env", "linear", {"dim": 5.0}, "linear: dim must be an integer, got 5.0"),
        ("env", "linear", {"num_arms": "50"}, "num_arms must be an integer"),
        ("env", "linear", {"fresh_arms": "False"}, "fresh_arms must be True or False"),
        ("env", "linear", {"fresh_arms": 0}, "fresh_arms must be True or False"),
        ("env", "linear", {"theta_prior": 1}, "theta_prior must be a string"),
        ("env", "linear", {"instance_seed": -1}, r"instance_seed must be an integer seed"),
        ("env", "linear", {"instance_seed": 2.0}, "instance_seed must be an integer or None"),
        ("agent", "lin-ts", {"explore_scale": True}, "lin-ts: explore_scale must be a number, "
                                                     "got True"),
        ("agent", "lin-ts", {"explore_scale": "0.1"}, "explore_scale must be a number, got '0.1'"),
        ("agent", "lin-ts", {"explore_scale": [0.1]}, r"explore_scale must be a number, got \[0.1"),
        ("agent", "lin-ts", {"reg": None}, "reg must be a number, got None"),
        ("agent", "lin-ucb", {"param_bound": float("nan")}, "param_bound must be finite and >= 0"),
        ("agent", "lin-ucb", {"param_bound": -1}, "param_bound must be finite and >= 0"),
        ("agent", "ensemble-pp", {"param_bound": float("nan")}, "param_bound must be finite"),
        ("agent", "logistic-ucb-1", {"param_bound": -1.0}, "param_bound must be finite"),
        ("agent", "glm-es", {"warmup": float("inf")}, "warmup must be an integer, got inf"),
        ("agent", "glm-es", {"warmup": -1}, "warmup must be an integer >= 0"),
        ("agent", "neural-ucb", {"warmup": float("inf")}, "warmup must be an integer, got inf"),
        ("agent", "neural-ucb", {"warmup": -2}, "warmup must be an integer >= -1"),
        ("agent", "glm-es", {"active_members": -1}, "active_members must be an integer >= 0"),
        ("agent", "neural-ucb", {"learning_rate": float("inf")}, "learning_rate must be finite"),
        ("agent", "lin-es", {"ensemble_size": 8.0}, "ensemble_size must be an integer, got 8.0"),
        ("agent", "lin-phe", {"buffer_size": 0}, "buffer_size must be a positive integer"),
        ("agent", "lin-phe", {"buffer_size": 1.5}, "buffer_size must be an integer or None"),
        ("agent", "lin-es", {"init_perturbation": "no"}, "init_perturbation must be True or"),
        ("agent", "glm-es-dt", {"first_epoch": 100.0}, "first_epoch must be an integer"),
        ("agent", "glm-es-dt", {"agent": "glm-es"}, "agent must be a jaxbandits Agent"),
        ("agent", "glm-es-dt", {"agent": jb.agents.GLMES(reg=-1.0)}, "reg must be a"),
    ],
)
def test_bad_settings_name_the_field(make, name, overrides, match):
    builder = jb.make_env if make == "env" else jb.make_agent
    with pytest.raises(ValueError, match=match):
        builder(name, **overrides)


@pytest.mark.parametrize("value", ["1.0", [1.0, 2.0], (0.5,), {"a": 1}, None, True])
def test_string_and_list_hyperparameters_fail_before_the_runner(value):
    """They used to reach the runner and fail there with a misleading "dimension mismatch"."""
    agent = jb.agents.LinTS(explore_scale=value)  # built directly: the runner validates it
    with pytest.raises(ValueError, match="lin-ts: explore_scale must be a number"):
        jb.simulate(jb.make_env("linear", dim=3, num_arms=4), agent, 0, 10, 2, progress=False)


def test_good_values_of_every_kind_are_accepted():
    jb.make_agent("lin-ts", reg=1, explore_scale=np.float32(0.5), noise_std=np.int64(1))
    jb.make_agent("lin-ts", explore_scale=jnp.asarray([0.1, 0.2]))  # a stacked sweep leaf
    jb.make_agent("glm-es", warmup=np.int32(10), active_members=jnp.asarray(2))
    jb.make_agent("lin-phe", buffer_size=None)
    jb.make_agent("lin-phe", buffer_size=np.int64(64))
    jb.make_env("linear", dim=np.int64(3), fresh_arms=np.bool_(True), instance_seed=7)
    jb.make_env("linear", instance_seed=None, noise_std=0)


def test_arrays_only_for_leaves_and_of_the_right_dtype():
    with pytest.raises(ValueError, match="warmup must be an integer"):
        jb.make_agent("glm-es", warmup=jnp.asarray(10.0))
    with pytest.raises(ValueError, match="explore_scale must be a number"):
        jb.make_agent("lin-ts", explore_scale=jnp.asarray([True, False]))
    with pytest.raises(ValueError, match="dim must be an integer"):  # static: never an array
        jb.make_env("linear", dim=np.asarray(3))


def test_field_kinds_read_the_annotations():
    kinds = field_kinds(jb.agents.LinPHE)
    assert kinds["reg"] == ("float", False, True)
    assert kinds["buffer_size"] == ("int", True, False)
    assert kinds["init_perturbation"] == ("bool", False, False)
    assert field_kinds(jb.envs.LinearEnv)["theta_prior"] == ("str", False, False)
    assert field_kinds(AGENTS["glm-es-dt"])["agent"].kind == ""  # not type-checked here


def test_every_validate_runs_the_type_checks(monkeypatch):
    """Every registered class's ``validate`` reaches the base class's (``super().validate()``),
    which runs the type checks (data environments also run them before loading)."""
    import jaxbandits.core as core

    seen = []
    monkeypatch.setattr(core, "check_types", lambda obj: seen.append(obj))
    for table in (AGENTS, ENVS):
        for name, cls in table.items():
            if "data" in field_kinds(cls):
                continue  # construction loads the data set
            obj = cls()
            seen.clear()
            try:
                obj.validate()
            except jb.envs.DataNotFoundError:  # user data not given (arrays): checked types first
                pass
            assert any(o is obj for o in seen), name


# ------------------------------------------------------------------------------------------------
# Every field of every registered class rejects a value of the wrong type, naming the field.

_WRONG = {
    "int": [True, 2.0, "2", [2]],
    "float": [True, "0.5", [0.5], (0.5,)],
    "bool": ["False", "no", 0, 1.0],
    "str": [3, ["a"]],
    "path": [3],
    "": ["not-a-table-or-agent"],
}


def _wrong_values(kind) -> list:
    values = list(_WRONG[kind.kind])
    if not kind.optional and kind.kind:
        values.append(None)
    return values


@pytest.mark.parametrize("name", sorted(ENVS))
def test_every_env_field_rejects_a_wrong_type(name):
    _check_every_field(ENVS[name], jb.make_env, name)


@pytest.mark.parametrize("name", list(AGENTS))
def test_every_agent_field_rejects_a_wrong_type(name):
    _check_every_field(AGENTS[name], jb.make_agent, name)


def _check_every_field(cls, make, name):
    for field, kind in field_kinds(cls).items():
        for value in _wrong_values(kind):
            with pytest.raises(ValueError, match=rf": {field} must") as err:
                make(name, **{field: value})
            assert name in str(err.value), (field, value, err.value)


def test_type_checks_are_cheap():
    """They run at every make_agent / make_env and in the runner's checks."""
    import time

    agent = jb.make_agent("neurallog-ucb-1")
    start = time.perf_counter()
    for _ in range(200):
        check_types(agent)
    assert (time.perf_counter() - start) / 200 < 1e-3


# ------------------------------------------------------------------------------------------------
# The command line: booleans, types and the results folder.


@pytest.fixture
def fake_compare(monkeypatch, tmp_path):
    """Intercepts ``jb.compare``: records its calls (and the results folders at call time);
    returns no results, so the CLI writes only its summary (the plot is intercepted too)."""
    calls = []

    def compare(env, agents, key, horizon, num_runs, **kwargs):
        calls.append({"env": env, "agents": agents, "kwargs": kwargs,
                      "folders": sorted(p.name for p in (tmp_path / "results").glob("*"))})
        return {}

    monkeypatch.setattr(jb, "compare", compare)
    monkeypatch.setattr(jb, "plot_regret", lambda results, path, **kw: path.write_bytes(b"png"))
    monkeypatch.chdir(tmp_path)
    return calls


ARGS = ["run", "--agents", "lin-ts", "--horizon", "10", "--runs", "2", "--no-progress"]


@pytest.mark.parametrize("text, value", [("False", False), ("no", False), ("0", False),
                                         ("false", False), ("NO", False), ("True", True),
                                         ("yes", True), ("1", True), ("true", True)])
def test_cli_booleans(text, value, fake_compare, tmp_path):
    assert main(ARGS + ["--out", str(tmp_path / "o"), "--set", f"env.fresh_arms={text}"]) == 0
    assert fake_compare[0]["env"].fresh_arms is value


@pytest.mark.parametrize(
    "setting, match",
    [
        ("env.fresh_arms=maybe", "env.fresh_arms: fresh_arms is a boolean"),
        ("env.fresh_arms=2", "fresh_arms is a boolean"),
        ("env.fresh_arms=", "fresh_arms is a boolean"),
        ("lin-ts.explore_scale=abc", "lin-ts: explore_scale must be a number, got 'abc'"),
        ("agent.explore_scale=[0.1]", r"explore_scale must be a number, got \[0.1\]"),
        ("lin-ts.explore_scale=true", "explore_scale must be a number, got True"),
        ("env.dim=5.0", "linear: dim must be an integer, got 5.0"),
        ("env.theta_prior=3", "theta_prior must be one of"),
    ],
)
def test_cli_wrong_types_exit_2_naming_the_field(setting, match, fake_compare, capsys):
    assert main(ARGS + ["--set", setting]) == 2
    assert re.search(match, capsys.readouterr().err)
    assert not fake_compare


def test_cli_numbers_strings_and_none(fake_compare, tmp_path):
    assert main(ARGS + ["--out", str(tmp_path / "o"), "--agents", "lin-ts,lin-phe",
                        "--set", "agent.reg=2", "--set", "lin-ts.explore_scale=1e-1",
                        "--set", "lin-phe.buffer_size=null", "--set", "env.theta_prior=gaussian",
                        "--set", "env.instance_seed=None"]) == 0
    call = fake_compare[0]
    assert call["agents"]["lin-ts"].reg == 2 and call["agents"]["lin-ts"].explore_scale == 0.1
    assert call["agents"]["lin-phe"].buffer_size is None
    assert call["env"].theta_prior == "gaussian" and call["env"].instance_seed is None


def test_out_existing_file_fails_before_anything_runs(fake_compare, tmp_path, capsys):
    target = tmp_path / "file.txt"
    target.write_text("keep me")
    assert main(ARGS + ["--out", str(target)]) == 2
    assert "is an existing file" in capsys.readouterr().err
    assert not fake_compare and target.read_text() == "keep me"


def test_out_that_cannot_be_created(fake_compare, tmp_path, capsys):
    (tmp_path / "file.txt").write_text("")
    assert main(ARGS + ["--out", str(tmp_path / "file.txt" / "sub")]) == 2
    assert "cannot use it as the results folder" in capsys.readouterr().err
    assert not fake_compare


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root ignores directory permissions")
def test_out_under_a_read_only_folder(fake_compare, tmp_path, capsys):
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o500)
    try:
        assert main(ARGS + ["--out", str(parent / "sub")]) == 2
        assert "cannot use it as the results folder" in capsys.readouterr().err
        assert main(ARGS + ["--out", str(parent)]) == 2  # exists, empty, not writable
    finally:
        parent.chmod(0o700)
    assert not fake_compare


def test_out_not_empty_needs_overwrite(fake_compare, tmp_path, capsys):
    out = tmp_path / "old"
    out.mkdir()
    (out / "stale.npz").write_bytes(b"old")
    (out / "stale.json").write_text("{}")
    (out / "summary.md").write_text("old")
    (out / "notes.txt").write_text("mine")
    assert main(ARGS + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "is not empty" in err and "--overwrite" in err
    assert not fake_compare and (out / "stale.npz").exists()

    assert main(ARGS + ["--out", str(out), "--overwrite"]) == 0
    assert fake_compare[0]["kwargs"]["overwrite"] is True
    assert not (out / "stale.npz").exists() and not (out / "stale.json").exists()
    assert (out / "notes.txt").read_text() == "mine"  # not a results file: kept
    assert (out / "summary.md").read_text() != "old"  # written by this run


def test_out_existing_empty_folder_is_fine(fake_compare, tmp_path):
    (tmp_path / "empty").mkdir()
    assert main(ARGS + ["--out", str(tmp_path / "empty")]) == 0
    assert (tmp_path / "empty" / "summary.md").exists()


def test_default_folders_of_runs_started_in_the_same_second(fake_compare, monkeypatch):
    monkeypatch.setattr(cli, "_stamp", lambda: "20250101-120000")
    assert main(ARGS) == 0
    assert main(ARGS) == 0
    assert main(ARGS) == 0
    assert [c["folders"][-1] for c in fake_compare] == [
        "linear-20250101-120000", "linear-20250101-120000-2", "linear-20250101-120000-3"]


def test_a_failed_run_leaves_no_empty_default_folder(monkeypatch, tmp_path, capsys):
    def failing(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(jb, "compare", failing)
    monkeypatch.chdir(tmp_path)
    assert main(ARGS) == 2
    assert "boom" in capsys.readouterr().err
    assert not any((tmp_path / "results").iterdir())


def test_checkpoint_and_overwrite_are_forwarded(fake_compare, tmp_path):
    out, ckpt = tmp_path / "out", tmp_path / "ckpt"
    assert main(ARGS + ["--out", str(out), "--checkpoint", str(ckpt)]) == 0
    assert fake_compare[0]["kwargs"]["checkpoint_dir"] == str(ckpt)
    assert "overwrite" not in fake_compare[0]["kwargs"]  # the runner's default
    assert main(ARGS + ["--out", str(out), "--checkpoint", str(ckpt), "--overwrite"]) == 0
    assert fake_compare[1]["kwargs"]["checkpoint_dir"] == str(ckpt)
    assert fake_compare[1]["kwargs"]["overwrite"] is True


def test_a_checkpoint_inside_out_does_not_make_it_non_empty(fake_compare, tmp_path):
    """A killed run resumed with the same command: its checkpoint may live in --out."""
    out = tmp_path / "out"
    (out / "ckpt").mkdir(parents=True)
    (out / "ckpt" / "lin-ts.npz").write_bytes(b"carry")
    assert main(ARGS + ["--out", str(out), "--checkpoint", str(out / "ckpt")]) == 0
    assert (out / "ckpt" / "lin-ts.npz").exists()


# ------------------------------------------------------------------------------------------------
# Values are checked as the engine's dtype holds them (float32 unless x64 is on).


@pytest.mark.parametrize(
    "make, name, overrides, match",
    [
        ("agent", "lin-ucb", {"reg": 1e-45}, r"lin-ucb: reg = 1e-45 underflows .* float32"),
        ("agent", "rrls", {"reg": 1e-38}, r"rrls: reg = 1e-38 underflows .* at least 1.175e-38"),
        ("agent", "lin-ts", {"reg": np.asarray([1.0, 1e-40])}, "lin-ts: reg = 1e-40 underflows"),
        ("agent", "lin-ts", {"explore_scale": 1e308},
         r"lin-ts: explore_scale = 1e\+308 overflows to inf in the engine's float32"),
        ("agent", "neural-ucb", {"learning_rate": 1e39}, "learning_rate = 1e\\+39 overflows"),
        ("agent", "lin-ucb", {"delta": 1e-50}, "delta = 1e-50 underflows"),
        ("agent", "lin-ucb", {"delta": 1 - 1e-9}, "delta = 0.999999999 rounds to 1 in .*float32"),
        ("env", "linear", {"noise_std": 1e39}, r"linear: noise_std = 1e\+39 overflows to inf"),
        ("env", "quadratic-pool", {"scale": 1e-40}, "quadratic-pool: scale = 1e-40 underflows"),
    ],
)
def test_values_the_engine_dtype_cannot_hold_name_the_field(make, name, overrides, match):
    """``reg=1e-45`` was 0 in the float32 engine (a diverged, NaN state); ``explore_scale=1e308``
    was inf: both passed the float64 range checks."""
    builder = jb.make_env if make == "env" else jb.make_agent
    with pytest.raises(ValueError, match=match):
        builder(name, **overrides)


def test_values_the_engine_dtype_holds_are_accepted(x64):
    jb.make_agent("lin-ucb", reg=1e-45, delta=1 - 1e-9)  # float64 holds them
    jb.make_agent("lin-ts", explore_scale=1e308)


def test_float32_edge_values_are_accepted():
    jb.make_agent("lin-ucb", reg=1.2e-38, explore_scale=3.4e38)
    jb.make_agent("lin-ts", noise_std=1e-45, explore_scale=0.0)  # a nonnegative field may be ~0
    jb.make_env("linear", noise_std=0.0)


# ------------------------------------------------------------------------------------------------
# The registry's arguments.


@pytest.mark.parametrize("name", [None, 3, ["lin-ts"], b"lin-ts"])
def test_make_agent_and_make_env_need_a_string_name(name):
    with pytest.raises(ValueError, match=r"make_agent: the agent name must be a string .*known"):
        jb.make_agent(name)
    with pytest.raises(ValueError, match=r"make_env: the environment name must be a string"):
        jb.make_env(name)


def test_make_agent_needs_an_environment_object():
    with pytest.raises(ValueError, match=r"make_agent: env must be a jaxbandits Env.*'linear'"):
        jb.make_agent("lin-ts", env="linear")
    with pytest.raises(ValueError, match="env must be a jaxbandits Env"):
        jb.well_specified(jb.make_agent("lin-ts"), "linear")


def test_make_agent_takes_a_numpy_integer_horizon():
    env = jb.make_env("linear", dim=2, num_arms=3, fresh_arms=True)
    agent = jb.make_agent("lin-phe", env=env, horizon=np.int64(10))
    assert agent.buffer_size == 10 and type(agent.buffer_size) is int
    with pytest.raises(ValueError, match="horizon must be a positive integer"):
        jb.make_agent("lin-phe", env=env, horizon=np.int64(0))


def test_integer_leaves_must_fit_the_engines_int32():
    """``warmup=2**40`` failed in the runner as a "dimension mismatch" (an int32 overflow)."""
    with pytest.raises(ValueError, match="glm-es: warmup = 1099511627776 overflows the engine's "
                                         "int32; it must be at most 2147483647"):
        jb.make_agent("glm-es", warmup=2**40)
    jb.make_agent("glm-es", warmup=2**31 - 1)
    jb.make_env("linear-varying", pool_size=2**31 + 1, num_arms=2)  # a static size: a Python int
