"""Writes ``block_sizes_kept.<cpu>.npz`` (the last bits differ between CPUs:
``numbers_kept_cases.cpu_signature``): tiny experiments played with explicit block sizes,
recorded before the runner chose block sizes to fit the experiment, so that ``block_runs=N``
keeps giving the numbers it gave (see ``tests/test_block_sizes_kept.py``). Run it only to
record numbers on purpose::

    python tests/data/make_block_sizes_kept.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from numbers_kept_cases import cpu_signature, set_paths  # noqa: E402
from test_block_sizes_kept import BLOCKS, CASES, FILE, META, play  # noqa: E402


def main() -> None:
    arrays: dict[str, np.ndarray] = {}
    for label, make in CASES.items():
        for block in BLOCKS:
            regret, reward = play(*make(), block)
            arrays[f"{label}/{block}/regret"] = regret
            arrays[f"{label}/{block}/reward"] = reward
            print(f"{label} block_runs={block}: final regret {regret[:, -1]}", flush=True)
    npz, meta_path = set_paths(FILE, META)
    np.savez_compressed(npz, **arrays)
    meta = {"jax": jax.__version__, "backend": jax.default_backend(), "cpu": cpu_signature()}
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main()
