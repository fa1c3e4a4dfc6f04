"""Fixed-shape ring buffers: the one FIFO store of the library, and the blocked sum over it.

A ring of capacity ``C`` keeps the last ``C`` rows of a stream: row ``n`` of the stream goes to
slot ``n mod C``, so slots ``0 .. min(n, C) - 1`` are filled after ``n`` rows and the oldest row
is overwritten next. Every history the agents keep is such a ring: the neural ensembles' replay
buffer (:class:`Ring` itself, alias ``jaxbandits.nets.ReplayBuffer``), the neural dueling agents'
pairs (``DuelBuffer``, a :class:`Ring` of pair rows), the GLM and neural agents' played features
(``jaxbandits.linalg.GLMData`` in buffer mode) and LinPHE's played features. The ones that keep
their own fields (for their saved states' sake) write through :func:`ring_slot` and
:func:`ring_write`, the same rule. Sums over the filled slots cost O(t), not O(C), through
:func:`blocked_sum`.

This module imports nothing from the library, so ``linalg/``, ``nets/`` and ``agents/`` may all
use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

__all__ = [
    "Ring",
    "blocked_sum",
    "ring_add",
    "ring_init",
    "ring_sample",
    "ring_size",
    "ring_slot",
    "ring_write",
]


def ring_slot(num_obs: jax.Array, capacity: int) -> jax.Array:
    """The slot that the row after ``num_obs`` rows goes to: ``num_obs mod C``."""
    return num_obs % capacity


def ring_size(num_obs: jax.Array, capacity: int) -> jax.Array:
    """``min(num_obs, C)``, the number of filled slots after ``num_obs`` rows."""
    return jnp.minimum(num_obs, capacity)


def ring_write(tables: Any, slot: jax.Array, row: Any) -> Any:
    """``tables`` (a pytree of ``(C, ...)`` arrays) with ``row`` (the same pytree of ``(...)``
    values) written at ``slot``, each value cast to its table's dtype."""
    return jax.tree.map(lambda table, value: table.at[slot].set(jnp.asarray(value, table.dtype)),
                        tables, row)


class Ring(struct.PyTreeNode):
    """A FIFO ring buffer of the last ``C`` rows, with a fixed shape.

    Attributes:
      rows: a pytree of arrays with a leading capacity axis ``(C, ...)`` (e.g. the played input,
        its reward and its perturbation vector ``z``, drawn once and kept with the row).
      num_obs: ``()`` int32, rows added so far; slots ``0 .. min(num_obs, C) - 1`` are filled and
        slot ``num_obs mod C`` is overwritten next.
    """

    rows: Any
    num_obs: jax.Array

    @property
    def capacity(self) -> int:
        """C, the number of rows kept (static)."""
        return jax.tree.leaves(self.rows)[0].shape[0]

    @property
    def size(self) -> jax.Array:
        """``min(num_obs, C)``, the number of filled rows."""
        return ring_size(self.num_obs, self.capacity)

    @property
    def valid(self) -> jax.Array:
        """``(C,)`` bool, True on the filled rows."""
        return jnp.arange(self.capacity) < self.size


def ring_init(example_row: Any, capacity: int) -> Ring:
    """An empty ring of ``capacity`` rows shaped like ``example_row`` (a pytree of arrays)."""
    rows = jax.tree.map(lambda a: jnp.zeros((capacity,) + jnp.shape(a), jnp.asarray(a).dtype),
                        example_row)
    return Ring(rows=rows, num_obs=jnp.zeros((), jnp.int32))


def ring_add(ring: Ring, row: Any) -> Ring:
    """``ring`` with ``row`` written over its oldest row (the type of ``ring`` is kept, so a
    subclass with named views of its rows stays itself)."""
    rows = ring_write(ring.rows, ring_slot(ring.num_obs, ring.capacity), row)
    return ring.replace(rows=rows, num_obs=ring.num_obs + 1)


def ring_sample(ring: Ring, key: jax.Array, batch_size: int) -> Any:
    """``batch_size`` rows drawn uniformly **with replacement** from the filled rows (the
    authors' ``randint(0, |D|)`` of Li et al. 2024's Ensemble++ code, also when
    ``|D| < batch_size``)."""
    index = jax.random.randint(key, (batch_size,), 0, jnp.maximum(ring.size, 1))
    return jax.tree.map(lambda table: table[index], ring.rows)


def blocked_sum(
    fn: Callable[[Any, jax.Array], Any],
    rows: Any,
    num_rows: jax.Array | int,
    *,
    block_rows: int = 256,
) -> Any:
    """``sum_b fn(rows_b, mask_b)`` over the blocks of ``block_rows`` rows that cover the first
    ``num_rows`` rows of ``rows``, skipping the blocks past them -- a sum over the t rows seen so
    far of an N-row buffer costs O(t), not O(N). The one blocked loop of the library: training
    gradients (``jaxbandits.nets.blocked_grad``), the dueling agents' Gram matrices and losses.

    Args:
      fn: ``fn(block, mask)``, a pytree: the contribution of ``block`` (``rows`` cut to
        ``block_rows`` rows) from its rows where ``mask`` ``(block_rows,)`` bool is True; the
        other rows must add exactly nothing (e.g. ``jnp.sum(jnp.where(mask, per_row, 0.0))``).
      rows: a pytree of arrays with a leading row axis ``(N, ...)`` (a ring buffer's rows).
      num_rows: the number of leading rows that hold data (may be traced; clipped to N).
      block_rows: rows per block (static). A buffer of at most that many rows is one block.

    Blocks are ``[b B, (b + 1) B)``; the last one is slid back to end at row N (no padded copy of
    the data) and its rows that an earlier block covered are masked out, as are the rows at or
    past ``num_rows``. Under ``vmap`` the loop runs while some run has blocks left (the runs of
    one experiment fill their buffers in step, so they stop together).

    Example::

        total = blocked_sum(lambda r, m: jnp.sum(jnp.where(m, r, 0.0)), ring.rows, ring.size)
    """
    num_total = jax.tree.leaves(rows)[0].shape[0]
    if num_total <= block_rows:
        return fn(rows, jnp.arange(num_total) < num_rows)
    used = (jnp.minimum(num_rows, num_total) + block_rows - 1) // block_rows
    offsets = jnp.arange(block_rows)

    def block(b):
        start = jnp.minimum(b * block_rows, num_total - block_rows)
        cut = jax.tree.map(lambda a: jax.lax.dynamic_slice_in_dim(a, start, block_rows), rows)
        index = start + offsets
        return fn(cut, (index >= b * block_rows) & (index < num_rows))

    zeros = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), jax.eval_shape(block, 0))
    return jax.lax.fori_loop(0, used, lambda b, total: jax.tree.map(jnp.add, total, block(b)),
                             zeros)
