"""Writes ``tests/data/legacy/``: a saved result, a finished checkpoint and a checkpoint killed
mid-run, in the file formats of jaxbandits 0.1.0 (before the engine was restructured).

``tests/test_legacy_files.py`` checks that they still load and resume to the same numbers.
Run once, with the version whose formats are being kept::

    python tests/data/make_legacy.py
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

import jaxbandits as jb
from jaxbandits import _io

OUT = Path(__file__).resolve().parent / "legacy"
ENV = jb.make_env("linear", dim=3, num_arms=4)
AGENT = jb.make_agent("lin-ts")
KW = dict(horizon=20, num_runs=3, chunk_size=10, block_runs=2, record="all", progress=False)


class _Killed(BaseException):
    pass


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir()
    reference = jb.simulate(ENV, AGENT, 4, save_to=OUT / "result", **KW)
    np.save(OUT / "expected_regret.npy", np.asarray(reference.cumulative_regret))
    jb.simulate(ENV, AGENT, 4, checkpoint_dir=OUT / "finished", **KW)
    calls = []

    def fault(name):  # a kill just after the first wave's records are committed
        calls.append(name)
        if len(calls) >= 30:
            raise _Killed

    _io.fault_point = fault
    try:
        jb.simulate(ENV, AGENT, 4, checkpoint_dir=OUT / "killed", **KW)
    except _Killed:
        pass
    for lock in OUT.glob("*/lock"):
        lock.unlink()
    print(sorted(str(p.relative_to(OUT)) for p in OUT.rglob("*")))


if __name__ == "__main__":
    main()
