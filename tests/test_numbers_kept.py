"""Numbers kept: fixed tiny experiments reproduce their saved arrays bit for bit.

``tests/data/numbers_kept.npz`` holds the cumulative regret and reward of one tiny experiment
per registered agent (each action kind it plays) and per registered environment, recorded by
``tests/data/make_numbers_kept.py`` with an explicit ``block_runs`` and a fixed key. A
refactoring must reproduce them exactly; random streams differ between jax versions and
backends, so the comparison runs only on the jax version and backend that recorded them.
A new agent or environment without saved arrays is reported by ``test_every_case_is_kept``.
"""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np
import pytest
from numbers_kept_cases import FILE, META, agent_cases, env_cases, play

DATA = Path(__file__).resolve().parent / "data"
_META = json.loads((DATA / META).read_text())
_SAVED = np.load(DATA / FILE)
CASES = [*agent_cases(), *env_cases()]

pytestmark = pytest.mark.skipif(
    (jax.__version__, jax.default_backend()) != (_META["jax"], _META["backend"]),
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
    np.testing.assert_array_equal(regret, _SAVED[f"{label}/regret"], err_msg=label)
    np.testing.assert_array_equal(reward, _SAVED[f"{label}/reward"], err_msg=label)
