"""The two test tiers: every test runs in exactly one, and the README's command runs the fast one.

The split is checked on pytest's own collection (``--collect-only`` in subprocesses: nothing is
compiled), so a test module or marker added later is checked too."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import types
from pathlib import Path

import jax
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _collect(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
         "-p", "no:cacheprovider", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _node_ids(proc: subprocess.Popen) -> set[str]:
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    return {line for line in out.splitlines() if "::" in line}


def _slow_tests() -> set[str]:
    """``file::name`` of every test function decorated ``@pytest.mark.slow``."""
    found = set()
    for path in (ROOT / "tests").glob("test_*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and any(
                    ast.unparse(d) == "pytest.mark.slow" for d in node.decorator_list):
                found.add(f"{path.relative_to(ROOT).as_posix()}::{node.name}")
    return found


@pytest.fixture(scope="module")
def tiers():
    """Node ids collected by the README's command, by ``-m full`` and by ``--tier all``."""
    procs = {name: _collect(*args) for name, args in {
        "fast": (), "full": ("-m", "full"), "all": ("--tier", "all")}.items()}
    return {name: _node_ids(proc) for name, proc in procs.items()}


def test_the_full_marker_is_registered(pytestconfig):
    names = [line.split(":")[0] for line in pytestconfig.getini("markers")]
    assert "full" in names and "slow" in names


def test_every_test_runs_in_exactly_one_tier(tiers):
    assert tiers["fast"] and tiers["full"]
    assert not tiers["fast"] & tiers["full"]
    assert tiers["fast"] | tiers["full"] == tiers["all"]


def test_slow_tests_run_in_the_full_tier(tiers):
    names = _slow_tests()
    slow = {node for node in tiers["all"] if node.split("[")[0] in names}
    assert slow and slow <= tiers["full"]


def test_every_test_module_is_collected(tiers):
    modules = {path.relative_to(ROOT).as_posix() for path in (ROOT / "tests").glob("test_*.py")}
    assert modules == {node.split("::")[0] for node in tiers["all"]}


def test_the_fast_tier_runs_this_check(tiers):
    assert any(node.startswith("tests/test_tiers.py::") for node in tiers["fast"])


def test_a_named_file_runs_both_of_its_tiers(tiers):
    """A developer who names a file gets all of its tests, full-tier ones included."""
    fast_files = {node.split("::")[0] for node in tiers["fast"]}
    mixed = sorted({node.split("::")[0] for node in tiers["full"]} & fast_files)[0]
    named = _node_ids(_collect(mixed))
    assert named == {node for node in tiers["all"] if node.startswith(mixed + "::")}


def test_only_the_fast_tier_compiles_with_optimizations_off(pytestconfig, monkeypatch):
    """The fast tier (the README's command) compiles with most optimizations off, in this
    process and in its xdist workers and subprocesses (the environment variable); every other
    selection compiles as users do, so the full tier's bit-for-bit checks see users' programs."""
    import conftest

    tier = conftest.selected_tier(pytestconfig)
    expected = tier == "fast" and not conftest.optimizations_asked()
    assert conftest.compiles_unoptimized(pytestconfig) == expected
    assert jax.config.values["jax_disable_most_optimizations"] == expected
    assert (os.environ.get("JAX_DISABLE_MOST_OPTIMIZATIONS") == "1") == expected
    monkeypatch.setattr(conftest, "selected_tier", lambda config: "full")
    assert not conftest.compiles_unoptimized(pytestconfig)
    monkeypatch.setattr(conftest, "selected_tier", lambda config: "fast")
    monkeypatch.setenv(conftest.OPTIMIZE_ENV, "1")
    assert not conftest.compiles_unoptimized(pytestconfig)
    monkeypatch.delenv(conftest.OPTIMIZE_ENV)
    assert conftest.compiles_unoptimized(pytestconfig)


def test_a_marked_full_tier_test_compiles_unoptimized_and_going_back_drops_programs(
        pytestconfig, monkeypatch):
    """In a session that compiles as users do, a test marked ``unoptimized`` turns the flag on;
    the next unmarked test turns it off and drops every program compiled in between (JAX's and
    the runner's), so it cannot play one."""
    import conftest

    import jaxbandits.runner.programs as programs

    def item(*marks):
        return types.SimpleNamespace(config=pytestconfig, get_closest_marker=lambda name: (
            object() if name in marks else None))

    dropped = []
    monkeypatch.setattr(programs, "clear_compiled", lambda: dropped.append(True))
    monkeypatch.setattr(conftest, "compiles_unoptimized", lambda config: False)
    monkeypatch.delenv(conftest.OPTIMIZE_ENV, raising=False)
    session_value = jax.config.values["jax_disable_most_optimizations"]
    double = jax.jit(lambda x: 2.0 * x)
    try:
        conftest.pytest_runtest_setup(item("unoptimized", "full"))
        assert jax.config.values["jax_disable_most_optimizations"]
        double(1.0)
        conftest.pytest_runtest_setup(item("unoptimized"))  # no change: programs kept
        assert double._cache_size() == 1 and not dropped
        conftest.pytest_runtest_setup(item("full"))
        assert not jax.config.values["jax_disable_most_optimizations"]
        assert double._cache_size() == 0 and dropped == [True]
        monkeypatch.setenv(conftest.OPTIMIZE_ENV, "1")  # every test as users compile
        conftest.pytest_runtest_setup(item("unoptimized"))
        assert not jax.config.values["jax_disable_most_optimizations"]
    finally:
        jax.config.update("jax_disable_most_optimizations", session_value)


def test_modules_that_share_work_are_one_scheduling_unit(pytestconfig, monkeypatch):
    """Under ``-n`` a reproduction module's tests go to one worker (its notebook test reuses its
    scripts' compiled programs), as do a module's tests that share a module-scoped fixture;
    every other test is a unit of its own."""
    if not pytestconfig.pluginmanager.hasplugin("xdist"):
        pytest.skip("pytest-xdist is not active (-p no:xdist)")
    from conftest import pytest_xdist_make_scheduler

    monkeypatch.setattr(pytestconfig.option, "dist", "load")
    monkeypatch.setattr(pytestconfig.option, "tx", ["popen"] * 2)  # what -n 2 makes
    split = pytest_xdist_make_scheduler(pytestconfig, None)._split_scope
    module = "tests/test_reproduce_neural.py"
    assert (split(f"{module}::test_neural_fig1_tiny")
            == split(f"{module}::test_neural_notebook_runs_at_tiny_sizes"))
    assert split("tests/test_layout.py::test_a") != split("tests/test_layout.py::test_b")
    here = "tests/test_tiers.py"  # its three collections are a module-scoped fixture
    assert split(f"{here}::test_a") == split(f"{here}::test_b")
    monkeypatch.setattr(pytestconfig.option, "dist", "loadfile")  # an explicit --dist wins
    assert pytest_xdist_make_scheduler(pytestconfig, None) is None
