"""Resuming from a checkpoint: a position counted in blocks of runs (independent of the device
count), the carry of blocks left mid-way as host arrays, and their checks."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from jaxbandits.runner.multihost import host, is_key, key_data, put
from jaxbandits.runner.plan import Plan
from jaxbandits.runner.run import Carry

__all__ = ["carry_arrays", "pad_blocks", "position_meta", "read_position", "restore_carry"]


def carry_arrays(carry: Carry, rows: int) -> dict[str, np.ndarray]:
    """The carry's leaves on the host (keys as key data), its first ``rows`` runs (the real
    blocks)."""
    return {f"leaf_{i}": host(key_data(x))[:rows] for i, x in enumerate(jax.tree.leaves(carry))}


def pad_blocks(arrays: dict[str, np.ndarray], count: int, num_devices: int,
                block_runs: int) -> dict[str, np.ndarray]:
    """``count`` blocks of carry rows padded to one block per device with copies of the last."""
    last = slice((count - 1) * block_runs, count * block_runs)
    return {k: np.concatenate([v[: count * block_runs]] + [v[last]] * (num_devices - count))
            for k, v in arrays.items()}


def position_meta(plan: Plan, first: int, partial: int, done: int, wall: float) -> dict[str, Any]:
    """A checkpoint's position, by blocks of runs (independent of the device count): blocks
    ``[0, blocks_done)`` are finished (their records committed), the next ``partial`` blocks
    have played ``done`` rounds (their carry is the commit's arrays), the rest have not
    started."""
    return {"blocks_done": first, "partial": partial, "done": done,
            "runs_done": plan.rows_before(first), "wall": wall}


def read_position(restored, plan: Plan, like: Carry, horizon: int, ckpt):
    """``(blocks done, partial blocks, round, wall, their carry arrays)`` of a loaded
    checkpoint ``(meta, arrays)``, checked against this experiment.

    Raises:
      CheckpointError: the position or arrays do not fit this experiment, or a version-1
        checkpoint (progress in waves) cannot be read on this device count.
    """
    from jaxbandits.checkpoint import CheckpointError

    meta, arrays = restored
    if "wave" in meta:
        return _legacy_position(meta, arrays, plan, like, horizon, ckpt)
    try:
        first, partial, done = (int(meta[k]) for k in ("blocks_done", "partial", "done"))
        wall = float(meta["wall"])
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"the checkpoint's position is unreadable: {meta!r}") from err
    if not (0 <= first <= plan.num_blocks and 0 <= partial <= plan.num_blocks - first
            and 0 <= done < horizon and (partial == 0) == (done == 0)):
        raise CheckpointError(f"the checkpoint's position ({first} blocks done, {partial} at "
                              f"round {done}) lies outside this experiment "
                              f"({plan.num_blocks} blocks of {plan.block_runs} runs, horizon "
                              f"{horizon})")
    _check_carry_arrays(arrays, like, partial * plan.block_runs)
    return first, partial, done, wall, arrays


def _legacy_position(meta, arrays, plan: Plan, like: Carry, horizon: int, ckpt):
    """The position of a version-1 checkpoint, which counted waves of one block per device
    without recording the device count: read from its carry's size when it stopped mid-wave;
    at a wave boundary, assumed to be this run's, and refused if that claims runs whose
    records are empty (it was then written on fewer devices)."""
    from jaxbandits import _io
    from jaxbandits.checkpoint import RECORDS, CheckpointError

    try:
        wave, done, wall = int(meta["wave"]), int(meta["done"]), float(meta["wall"])
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"the checkpoint's position is unreadable: {meta!r}") from err
    B, D = plan.block_runs, plan.num_devices
    if not (0 <= wave <= plan.num_waves and 0 <= done < horizon):
        raise CheckpointError(f"the checkpoint's position (wave {wave}, round {done}) lies "
                              "outside this experiment")
    if done:
        rows = np.shape(arrays.get("leaf_0", np.zeros(0)))
        written = rows[0] // B if rows and rows[0] % B == 0 else 0
        first = wave * written
        partial = min(written, plan.num_blocks - first)
        if partial <= 0:
            raise CheckpointError(f"the checkpoint's carry ({rows} for leaf_0) does not fit "
                                  f"wave {wave} of blocks of {B} runs")
        arrays = {k: v[: partial * B] for k, v in arrays.items()}
        num_leaves = len(jax.tree.leaves(like))
        if len(arrays) == num_leaves - 1:  # no bad_state yet: nothing was flagged
            arrays[f"leaf_{num_leaves - 1}"] = np.full((partial * B, 2), -1, np.int32)
        _check_carry_arrays(arrays, like, partial * B)
        return first, partial, done, wall, arrays
    first = min(wave * D, plan.num_blocks)
    records = None if ckpt is None else _io.read_npy(ckpt.directory / RECORDS)
    for block in range(first if records is not None else 0):
        start, stop = plan.rows_before(block), plan.rows_before(block + 1)
        if not np.any(records[start:stop]):
            raise CheckpointError(
                f"this checkpoint, of an older jaxbandits (version 1), counts progress in "
                f"waves of one block per device and does not record its device count; read "
                f"with this run's {D} device(s) its {wave} wave(s) claim runs "
                f"{start}..{stop - 1} done, but their records are empty: it was written on "
                f"fewer than {D} devices. Resume it on the device count that wrote it, or "
                "start afresh (overwrite=True)")
    return first, 0, 0, wall, {}


def _check_carry_arrays(arrays: dict, like: Carry, rows: int) -> None:
    """Checks that ``arrays`` are the carry leaves of ``rows`` runs (keys as key data)."""
    from jaxbandits.checkpoint import CheckpointError

    templates = jax.tree.leaves(like)
    if not rows:
        if arrays:
            raise CheckpointError(f"the checkpoint holds {len(arrays)} carry arrays at a "
                                  "block boundary, where it needs none")
        return
    if set(arrays) != {f"leaf_{i}" for i in range(len(templates))}:
        raise CheckpointError(f"the checkpoint holds arrays {sorted(arrays)}; the run's carry "
                              f"has {len(templates)} leaves (leaf_0 .. "
                              f"leaf_{len(templates) - 1})")
    for i, t in enumerate(templates):
        shape = (rows, *t.shape[1:]) + ((2,) if is_key(t) else ())
        dtype = np.dtype(np.uint32) if is_key(t) else np.dtype(t.dtype)
        a = arrays[f"leaf_{i}"]
        if a.shape != shape or a.dtype != dtype:
            raise CheckpointError(f"checkpoint array leaf_{i} is {a.dtype} {a.shape}; this "
                                  f"run's carry of {rows} runs needs {dtype} {shape}")


# ------------------------------------------------------------------------------------------------
# Several processes (jax.distributed): the run axis spans every process's devices; host data is
# the same in every process, results are gathered, files are written by process 0.


def restore_carry(like: Carry, arrays: dict[str, np.ndarray], sharding, impl) -> Carry:
    """The carry held by ``arrays`` (checked by :func:`_check_carry_arrays`, one block per
    device), on the devices."""
    leaves = [jax.random.wrap_key_data(arrays[f"leaf_{i}"], impl=impl) if is_key(t)
              else arrays[f"leaf_{i}"] for i, t in enumerate(jax.tree.leaves(like))]
    return put(jax.tree.unflatten(jax.tree.structure(like), leaves), sharding)
