"""Several processes (``jax.distributed``): the run axis spans every process's devices; host
data is the same in every process, results are gathered, files are written by process 0.

Every function here is the identity (or a plain device put) in a single process.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxbandits.runner.run import Carry

__all__ = ["any_process", "host", "is_key", "key_data", "put", "share_restored"]

PyTree = Any


def put(tree: PyTree, sharding) -> PyTree:
    """``jax.device_put`` onto ``sharding``, also when it spans other processes' devices (the
    host values are the same in every process: they are put from NumPy)."""
    if jax.process_count() == 1:
        return jax.device_put(tree, sharding)

    def put(x):
        if is_key(x):
            data = put(np.asarray(jax.random.key_data(x)))
            return jax.random.wrap_key_data(data, impl=jax.random.key_impl(x))
        return jax.device_put(np.asarray(x), sharding)

    return jax.tree.map(put, tree)


def host(x: jax.Array) -> np.ndarray:
    """The whole of ``x`` on the host, gathered from every process when it is spread over them
    (a collective: every process calls it)."""
    if getattr(x, "is_fully_addressable", True):
        return np.asarray(x)
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def any_process(flag: bool) -> bool:
    """``flag`` of process 0 (which alone opens checkpoints and result files), in every
    process."""
    if jax.process_count() == 1:
        return flag
    from jax.experimental import multihost_utils

    return bool(multihost_utils.broadcast_one_to_all(np.asarray(flag)))


def share_restored(restored, like: Carry, block_runs: int):
    """Process 0's checked position ``(blocks done, partial, round, wall, arrays)`` (or None),
    in every process."""
    from jax.experimental import multihost_utils

    have = restored is not None
    first, partial, done, wall, arrays = restored if have else (0, 0, 0, 0.0, {})
    head = multihost_utils.broadcast_one_to_all(
        (np.asarray(have), np.asarray([first, partial, done], np.int64), np.asarray(wall)))
    if not bool(head[0]):
        return None
    first, partial, done = (int(v) for v in head[1])
    if partial:
        rows = partial * block_runs
        zeros = {f"leaf_{i}": np.zeros((rows, *t.shape[1:]) + ((2,) if is_key(t) else ()),
                                       np.uint32 if is_key(t) else t.dtype)
                 for i, t in enumerate(jax.tree.leaves(like))}
        shared = multihost_utils.broadcast_one_to_all(
            arrays if jax.process_index() == 0 else zeros)
        arrays = {k: np.asarray(v) for k, v in shared.items()}
    return first, partial, done, float(head[2]), arrays if partial else {}


def is_key(x) -> bool:
    return jnp.issubdtype(x.dtype, jax.dtypes.prng_key)


def key_data(x):
    return jax.random.key_data(x) if is_key(x) else x
