"""Shared fixtures (float64 switch) and the two test tiers.

Tiers: ``python -m pytest -n auto`` runs the fast tier, every test without the ``full`` marker;
``python -m pytest -n auto -m full`` runs the full tier (subprocesses, end-to-end scripts,
notebooks, layout matrices, fault injection and long statistical checks). ``--tier all`` runs
both; an explicit ``-m`` expression or a named test file or test node overrides the default."""

from __future__ import annotations

import os
from pathlib import Path

import jax
import pytest

# The CLI, benchmarks and reproductions turn JAX's persistent compilation cache on by default
# (tests/test_cache.py checks it in subprocesses); in the tests they use the test session's
# cache: one cache, .pytest_cache/jax-compilation-cache (or the
# folder JAXBANDITS_TEST_COMPILATION_CACHE names; "off" turns it off): both tiers and every
# xdist worker compile a program once (a cached program is the same program, so the numbers are
# unchanged; test_numbers_kept passes on a cold and on a warm cache).
_TEST_CACHE = os.environ.get("JAXBANDITS_TEST_COMPILATION_CACHE",
                             str(Path(__file__).resolve().parents[1] / ".pytest_cache"
                                 / "jax-compilation-cache"))
if _TEST_CACHE.strip().lower() in ("", "0", "off", "false", "no", "none"):
    _TEST_CACHE = None
os.environ["JAXBANDITS_COMPILATION_CACHE"] = _TEST_CACHE or "off"
if _TEST_CACHE:
    from jaxbandits.cache import use_compilation_cache

    use_compilation_cache(_TEST_CACHE)

# The shared data files (UCI shuttle and magic, the OBD samples) live in ../shared/data beside
# the repository; the library does not know that folder, the tests point JAXBANDITS_DATA at it.
os.environ.setdefault("JAXBANDITS_DATA",
                      str(Path(__file__).resolve().parents[2] / "shared" / "data"))

# Start JAX's backend now, with the devices the environment asks for (XLA's single CPU device by
# default), so that a script run in-process (the CLI, the benchmarks and reproductions call
# jb.use_cpu_cores()) cannot change the device count of the tests that run after it.
jax.devices()


TIERS = ("fast", "full", "all")

# Tests that check what programs compute, not their last bits, compile with JAX's
# ``jax_disable_most_optimizations`` (XLA's backend at optimization level 0, LLVM's costly passes
# off), which cuts their compile time, most of their time, by about a third: the whole fast tier,
# and the full tier's tests marked ``unoptimized`` (learning checks, the notebooks, the
# documentation's examples). Every test that compares bits with saved arrays (numbers kept, block
# sizes kept, legacy checkpoints resumed), across layouts, devices or processes, or asserts a
# reproduction's verdict, runs in the full tier unmarked, compiled as users compile.
# JAXBANDITS_TEST_OPTIMIZE=1 compiles every test as users do.
OPTIMIZE_ENV = "JAXBANDITS_TEST_OPTIMIZE"
_FLAG = "jax_disable_most_optimizations"


def compiles_unoptimized(config) -> bool:
    """Whether the whole session compiles with most optimizations off: the fast tier, unless
    ``JAXBANDITS_TEST_OPTIMIZE`` is set to 1."""
    return selected_tier(config) == "fast" and not optimizations_asked()


def optimizations_asked() -> bool:
    """Whether ``JAXBANDITS_TEST_OPTIMIZE`` asks every test to compile as users do."""
    return os.environ.get(OPTIMIZE_ENV, "").strip().lower() in ("1", "on", "true", "yes")


def pytest_configure(config):
    if compiles_unoptimized(config):
        os.environ["JAX_DISABLE_MOST_OPTIMIZATIONS"] = "1"  # the xdist workers and subprocesses
        jax.config.update(_FLAG, True)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """In a session that compiles as users do, a test marked ``unoptimized`` compiles with most
    optimizations off (before its fixtures are built). Going back, every compiled program held
    in memory is dropped first (JAX's and the runner's, which key programs on their inputs, not
    on this flag), so an unmarked test never plays a program compiled the other way; the
    persistent cache keys programs on their compile options, so it keeps both."""
    if compiles_unoptimized(item.config):
        return
    unoptimized = item.get_closest_marker("unoptimized") is not None and not optimizations_asked()
    if unoptimized == jax.config.values[_FLAG]:
        return
    if not unoptimized:
        from jaxbandits.runner.programs import clear_compiled

        jax.clear_caches()
        clear_compiled()
    jax.config.update(_FLAG, unoptimized)


def pytest_addoption(parser):
    parser.addoption("--tier", choices=TIERS, default=None,
                     help="which test tier runs: fast (the default when whole directories are "
                          "collected), full (like -m full) or all")


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under ``-n`` (pytest-xdist's default ``load``), the tests of a module that shares work
    between them run on one worker, one after the other; every other test is a unit of its own,
    handed to whichever worker runs low first. A module shares work when it is a reproduction
    or defines a module-scoped fixture.

    A reproduction's notebook replays its scripts' tiny experiments: in the scripts' process it
    reuses their compiled programs (8 s), on the other worker at the same time it compiles them
    all again (68 s on 2 cores). A module-scoped fixture split over two workers is built twice
    (the tier check's three collections: 48 s on each worker). xdist's ``xdist_group`` mark
    would say this, but on pytest 9.2 its ``loadgroup`` scheduler no longer sees the groups
    (reported to pytest-xdist as #1386)."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    together = modules_run_together(Path(config.rootpath))

    class SharingModulesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path in together else nodeid

    return SharingModulesTogether(config, log)


def modules_run_together(root: Path) -> set[str]:
    """The test modules (paths relative to ``root``) whose tests run on one worker: the
    reproductions, and every module that defines a module-scoped fixture."""
    found = set()
    for path in sorted((root / "tests").glob("test_*.py")):
        if (path.name.startswith("test_reproduce_")
                or 'fixture(scope="module")' in path.read_text()):
            found.add(path.relative_to(root).as_posix())
    return found


def _names_tests(config) -> bool:
    """Whether the command line names test files or test nodes (not only directories)."""
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        return False
    root = config.invocation_params.dir
    return any("::" in arg or (root / Path(arg)).is_file() for arg in config.args)


def selected_tier(config) -> str:
    """The tier a session runs: ``--tier``, else ``all`` under ``-m`` or named tests, else fast."""
    if config.getoption("tier"):
        return config.getoption("tier")
    return "all" if config.option.markexpr or _names_tests(config) else "fast"


def in_full_tier(item) -> bool:
    """The one rule for the full tier: marked ``full`` (``slow`` implies ``full``)."""
    return item.get_closest_marker("full") is not None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Marks ``slow`` tests ``full`` (so ``-m full`` sees them), then keeps the selected tier."""
    for item in items:
        if item.get_closest_marker("slow") and not in_full_tier(item):
            item.add_marker(pytest.mark.full)
    tier = selected_tier(config)
    if tier == "all":
        return
    keep, drop = [], []
    for item in items:
        (keep if in_full_tier(item) == (tier == "full") else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_report_header(config):
    tier = selected_tier(config)
    more = {"fast": "; the full tier: -m full", "full": "", "all": ""}[tier]
    if compiles_unoptimized(config):
        more += f"; compiled with most optimizations off ({OPTIMIZE_ENV}=1: as users compile)"
    return f"jaxbandits test tier: {tier}{more}"


@pytest.fixture
def x64():
    """Runs a test with ``jax_enable_x64`` on (float64 identity tests use it module-wide)."""
    with jax.enable_x64(True):
        yield


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drops JAX's caches of compiled programs after each test module.

    A pytest-xdist worker plays hundreds of modules in one process; without this every
    program any of them compiled stays alive (3.8 GB of resident memory per worker at 80% of
    the suite), and two CI runs lost a worker to a crash inside XLA's compiler late in the run.
    Programs are rarely shared between modules, so little is recompiled. The runner keeps its
    own ahead-of-time compiled programs, which :func:`jax.clear_caches` does not reach."""
    yield
    jax.clear_caches()
    from jaxbandits.runner import clear_compiled

    clear_compiled()
