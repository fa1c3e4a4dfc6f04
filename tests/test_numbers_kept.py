"""Numbers kept: fixed tiny experiments reproduce their saved arrays bit for bit.

``tests/data/numbers_kept.npz`` holds the cumulative regret and reward of one tiny experiment
per registered agent (each action kind it plays) and per registered environment, recorded by
``tests/data/make_numbers_kept.py`` with an explicit ``block_runs`` and a fixed key. A
refactoring must reproduce them exactly; random streams differ between jax versions and
backends, so the comparison runs only on the jax version and backend that recorded them, and
the last bits between CPUs, so it reads the set recorded on this machine's CPU
(``numbers_kept_cases.saved_set``).
A new agent or environment without saved arrays is reported by ``test_every_case_is_kept``.
"""

from __future__ import annotations

import numpy as np
import pytest
from numbers_kept_cases import (
    FILE,
    META,
    agent_cases,
    cpu_signature,
    env_cases,
    play,
    same_streams,
    saved_set,
)

if (_FOUND := saved_set(FILE, META)) is None:
    pytest.skip(f"no arrays recorded on the CPU {cpu_signature()}", allow_module_level=True)
_ARRAYS, _META = _FOUND
_SAVED = np.load(_ARRAYS)
CASES = [*agent_cases(), *env_cases()]

pytestmark = pytest.mark.skipif(
    not same_streams(_META),
    reason=f"arrays recorded on jax {_META['jax']} ({_META['backend']}): random streams differ "
           "between jax versions")


def test_every_case_is_kept():
    """Every registered agent and environment has saved arrays (or was skipped for want of
    data when they were recorded)."""
    missing = [label for label, _ in CASES
               if f"{label}/regret" not in _SAVED and label not in _META["skipped"]]
    assert not missing, f"no saved arrays for {missing}: run tests/data/make_numbers_kept.py"


@pytest.mark.full
@pytest.mark.parametrize("label, make", [c for c in CASES if f"{c[0]}/regret" in _SAVED],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_numbers_kept_bit_for_bit(label, make):
    env, agent = make()
    regret, reward = play(env, agent)
    where = f"{label} against {_ARRAYS.name} on the CPU {cpu_signature()}"
    np.testing.assert_array_equal(regret, _SAVED[f"{label}/regret"], err_msg=where)
    np.testing.assert_array_equal(reward, _SAVED[f"{label}/reward"], err_msg=where)


def test_the_set_recorded_on_this_cpu_is_read_else_the_first_recording(monkeypatch):
    """A CPU with its own set reads it; any other CPU reads the first recording."""
    import platform

    import numbers_kept_cases as cases

    assert cases.cpu_signature().startswith(platform.machine())
    recorded = sorted(p.name for p in cases.DATA.glob("numbers_kept.*.npz"))
    assert recorded, "no set recorded with its CPU"
    cpu = recorded[0].removeprefix("numbers_kept.").removesuffix(".npz")
    monkeypatch.setattr(cases, "cpu_signature", lambda: cpu)
    arrays, meta = cases.saved_set(FILE, META)
    assert (arrays.name, meta["cpu"]) == (recorded[0], cpu)
    monkeypatch.setattr(cases, "cpu_signature", lambda: "riscv64-no-such-cpu")
    arrays, meta = cases.saved_set(FILE, META)
    assert arrays.name == FILE and "cpu" not in meta
