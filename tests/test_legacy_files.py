"""Files written by jaxbandits 0.1.0 (``tests/data/legacy/``, made by ``make_legacy.py``) still
load, and its checkpoints, finished or killed after the first wave, resume to the same numbers.

The arrays were recorded on one jax version; resuming recomputes runs, so that part runs only
where the random streams are the same (see ``test_numbers_kept.py``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from numbers_kept_cases import same_streams

import jaxbandits as jb

LEGACY = Path(__file__).resolve().parent / "data" / "legacy"
EXPECTED = np.load(LEGACY / "expected_regret.npy")
_META = json.loads((LEGACY.parent / "numbers_kept.json").read_text())
SAME_STREAMS = same_streams(_META)
ENV = jb.make_env("linear", dim=3, num_arms=4)
AGENT = jb.make_agent("lin-ts")
KW = dict(horizon=20, num_runs=3, chunk_size=10, block_runs=2, record="all", progress=False)


def test_a_saved_result_loads():
    result = jb.Result.load(LEGACY / "result")
    np.testing.assert_array_equal(np.asarray(result.cumulative_regret), EXPECTED)
    assert result.cumulative_regret.shape == (3, 20)


@pytest.mark.full  # bits against saved arrays: compiled as users compile (tests/conftest.py)
@pytest.mark.skipif(not SAME_STREAMS, reason="recorded on another jax version")
@pytest.mark.parametrize("which", ["finished", "killed"])
def test_a_checkpoint_resumes_to_the_same_numbers(tmp_path, which):
    directory = tmp_path / which
    shutil.copytree(LEGACY / which, directory)
    result = jb.simulate(ENV, AGENT, 4, checkpoint_dir=directory, **KW)
    np.testing.assert_array_equal(np.asarray(result.cumulative_regret), EXPECTED)
