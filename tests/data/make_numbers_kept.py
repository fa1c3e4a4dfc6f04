"""Writes the saved arrays that ``tests/test_numbers_kept.py`` compares with, bit for bit.

Every registered agent (on a tiny environment of each action kind it plays, with the
conformance suite's cheaper settings) and every registered environment (with a uniform
random agent of its action kind) is played for a short horizon with a fixed key and an
explicit ``block_runs``; the cumulative regret and reward are stored per case, with the jax
version, backend and CPU they ran on, as ``numbers_kept.<cpu>.npz`` (the last bits differ
between CPUs: ``numbers_kept_cases.cpu_signature``). Run it only to record numbers on purpose
(a change that is meant to change results says so in its commit and deletes the other CPUs'
sets, which it makes stale)::

    JAXBANDITS_DATA=../shared/data python tests/data/make_numbers_kept.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from numbers_kept_cases import (  # noqa: E402
    FILE,
    META,
    agent_cases,
    cpu_signature,
    env_cases,
    play,
    set_paths,
)


def main() -> None:
    arrays: dict[str, np.ndarray] = {}
    skipped: dict[str, str] = {}
    for label, make in [*agent_cases(), *env_cases()]:
        try:
            env, agent = make()
        except Exception as err:  # data or extras absent on this machine: recorded, not fatal
            skipped[label] = f"{type(err).__name__}: {err}"
            continue
        regret, reward = play(env, agent)
        arrays[f"{label}/regret"] = regret
        arrays[f"{label}/reward"] = reward
        print(f"{label}: final regret {regret[:, -1]}", flush=True)
    npz, meta_path = set_paths(FILE, META)
    np.savez_compressed(npz, **arrays)
    meta = {"jax": jax.__version__, "backend": jax.default_backend(), "cpu": cpu_signature(),
            "skipped": skipped}
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {len(arrays) // 2} cases to {npz.name}; skipped {sorted(skipped)}")


if __name__ == "__main__":
    main()
