"""The result sink: where finished blocks' records go (host memory, result files written block
by block, or a checkpoint's records file), and the results made from them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxbandits.core import float_dtype
from jaxbandits.metrics import RECORDED
from jaxbandits.results import Result
from jaxbandits.runner.checks import safe_name
from jaxbandits.runner.plan import Plan

__all__ = ["Sink", "result_paths", "under"]

# The record's columns: the built-in cumulative values in the vocabulary's order, then the extras.
_REGRET, _REWARD, _ACCEPTED = (RECORDED.index(m) for m in ("regret", "reward", "accepted"))
_EXTRA = len(RECORDED)


class Sink:
    """Where finished blocks' records go: host memory, the result files (``save_to``), or the
    checkpoint's records file (so that a resumed run has them)."""

    def __init__(self, plan: Plan, steps: np.ndarray, paths, ckpt, replay: bool,
                 metrics: tuple[str, ...] = ()):
        self.plan, self.paths, self.replay, self.dtype = plan, paths, replay, float_dtype()
        self.metrics = metrics
        self.steps = steps.astype(np.int64)
        shape = (plan.num_points * plan.num_runs, len(steps), _EXTRA + len(metrics))
        self.memory = self.rows = self.writers = None
        if ckpt is not None:
            self.rows = ckpt.records(shape, self.dtype)
        elif paths is not None:
            self.writers = [self._writer(p) for p in paths]
        else:
            self.memory = np.zeros(shape, self.dtype)

    def _writer(self, path):
        from jaxbandits.results import ResultWriter

        return ResultWriter(path, self.plan.num_runs, self.steps, replay=self.replay,
                            dtype=self.dtype, metrics=self.metrics)

    def _write_rows(self, writer, start: int, rows: np.ndarray) -> None:
        writer.write(start, rows[..., _REGRET], rows[..., _REWARD],
                         rows[..., _ACCEPTED] if self.replay else None,
                     {m: rows[..., _EXTRA + i] for i, m in enumerate(self.metrics)})

    def write(self, g: int, start: int, rows: np.ndarray) -> None:
        offset = g * self.plan.num_runs + start
        if self.memory is not None:
            self.memory[offset: offset + len(rows)] = rows
        elif self.rows is not None:
            self.rows.write(offset, rows)
        else:
            self._write_rows(self.writers[g], start, rows)

    def flush(self) -> None:
        if self.rows is not None:
            self.rows.flush()

    def share_from_process_zero(self) -> None:
        """Process 0's records (its checkpoint's records file holds the waves finished before a
        resume), in every process (a collective)."""
        from jax.experimental import multihost_utils

        rows = _read_rows(self.rows) if self.rows is not None else self.memory
        shared = np.asarray(multihost_utils.broadcast_one_to_all(np.asarray(rows)))
        if self.memory is not None:
            self.memory = shared

    def result(self, g: int, **fields) -> Result:
        n = self.plan.num_runs
        if self.writers is None and self.paths is None:
            rows = self.memory if self.memory is not None else _read_rows(self.rows)
            block = rows[g * n: (g + 1) * n]
            column = lambda i: np.ascontiguousarray(block[..., i])  # noqa: E731
            return Result(steps=self.steps, cumulative_regret=column(_REGRET),
                          cumulative_reward=column(_REWARD),
                          accepted=column(_ACCEPTED) if self.replay else None,
                          metrics={m: column(_EXTRA + i) for i, m in enumerate(self.metrics)},
                          **fields)
        if self.writers is None:  # checkpointed and streamed: copy the rows into the result
            source = _read_rows(self.rows)
            writer = self._writer(self.paths[g])
            step = max(1, (64 << 20) // max(1, source[0].nbytes))
            for start in range(0, n, step):
                rows = np.asarray(source[g * n + start: g * n + min(n, start + step)])
                self._write_rows(writer, start, rows)
            return writer.finish(**fields)
        return self.writers[g].finish(**fields)


def _read_rows(rows) -> np.ndarray:
    from jaxbandits._io import read_npy

    rows.flush()
    return read_npy(rows.path, mmap=True)


def result_paths(save_to, labels: list[str], folder: bool) -> list[Path] | None:
    if save_to is None:
        return None
    from jaxbandits._io import check_writable_dir

    save_to = Path(save_to)
    if folder or len(labels) > 1:
        check_writable_dir(save_to)
        return [save_to / safe_name(label) for label in labels]
    check_writable_dir(save_to.parent)
    return [save_to]


def under(folder, label: str) -> Path | None:
    return None if folder is None else Path(folder) / safe_name(label)
