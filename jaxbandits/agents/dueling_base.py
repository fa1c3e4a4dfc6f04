"""What the neural dueling agents share: the pair buffer and its blocked sums, and their base class.

A stored duel is a row (x_k1, x_k2, outcome, weight); :class:`DuelBuffer` keeps the last
``B`` of them on the shared ring buffer (:mod:`jaxbandits.ring`), and :func:`duel_buffer_sum`
sums a function of the filled rows in blocks. Re-exported by
:mod:`jaxbandits.agents.dueling_neural`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.core import (
    AUTO_BUFFER,
    Agent,
    Assumptions,
    Spec,
    float_dtype,
)
from jaxbandits.ring import Ring, blocked_sum, ring_add, ring_init, ring_size

_BLOCK_ROWS = 256  # the most rows per block of a training or Gram sum over the buffer


def _block_rows(num_total: int) -> int:
    """Rows per block for a buffer of ``num_total`` rows: about an eighth of it (at least 32,
    at most 256), so that the rows summed past the filled ones stay a small fraction."""
    return min(_BLOCK_ROWS, max(32, -(-num_total // 8)))

# ------------------------------------------------------------------------------------------------
# The pair buffer.


class DuelRows(struct.PyTreeNode):
    """Stored duels: one (``()``-shaped ``outcome``) or a buffer's ``(B, ...)`` of them.

    Attributes:
      x1, x2: ``(..., d)`` the contexts of the first and second arm of each pair.
      outcome: ``(...)`` ``o`` (1: the first arm won).
      weight: ``(...)`` the row's loss / Gram weight (``1 / zeta^2``; 1 for NDB); 0 for an
        empty row, so empty rows add exactly nothing to any sum.
    """

    x1: jax.Array
    x2: jax.Array
    outcome: jax.Array
    weight: jax.Array


class DuelBuffer(struct.PyTreeNode):
    """A ring buffer of the last ``B`` duels, with a fixed shape: the rows of a
    :class:`DuelRows` of ``(B, ...)`` arrays kept as fields (``rows`` views them), written and
    counted by the rule of :mod:`jaxbandits.ring`.

    Attributes:
      x1, x2: ``(B, d)`` the contexts of the first and second arm of each stored pair.
      outcome: ``(B,)`` ``o`` (1: the first arm won).
      weight: ``(B,)`` the row's loss / Gram weight; 0 for an empty row.
      num_obs: ``()`` int32, pairs seen so far; rows ``0 .. min(num_obs, B) - 1`` are filled.
    """

    x1: jax.Array
    x2: jax.Array
    outcome: jax.Array
    weight: jax.Array
    num_obs: jax.Array

    @property
    def rows(self) -> DuelRows:
        """The stored rows, ``(B, ...)``."""
        return DuelRows(x1=self.x1, x2=self.x2, outcome=self.outcome, weight=self.weight)

    @property
    def capacity(self) -> int:
        """B, the number of pairs kept (static)."""
        return self.weight.shape[0]

    @property
    def num_rows(self) -> jax.Array:
        """The number of filled rows, ``min(num_obs, B)``."""
        return ring_size(self.num_obs, self.capacity)


def _duel_buffer(rows: DuelRows, num_obs: jax.Array) -> DuelBuffer:
    return DuelBuffer(x1=rows.x1, x2=rows.x2, outcome=rows.outcome, weight=rows.weight,
                      num_obs=num_obs)


def duel_buffer_init(capacity: int, dim: int, dtype=None) -> DuelBuffer:
    """An empty buffer of ``capacity`` rows of ``dim``-dimensional contexts."""
    dtype = dtype or float_dtype()
    row = DuelRows(x1=jnp.zeros((dim,), dtype), x2=jnp.zeros((dim,), dtype),
                   outcome=jnp.zeros((), dtype), weight=jnp.zeros((), dtype))
    ring = ring_init(row, capacity)
    return _duel_buffer(ring.rows, ring.num_obs)


def duel_buffer_add(buffer: DuelBuffer, x1: jax.Array, x2: jax.Array, outcome: jax.Array,
                    weight: jax.Array) -> DuelBuffer:
    """``buffer`` with the pair ``(x1, x2, o)`` of weight ``weight`` written over its oldest
    row (row ``num_obs mod B``; :func:`~jaxbandits.ring.ring_add`)."""
    ring = ring_add(Ring(rows=buffer.rows, num_obs=buffer.num_obs),
                    DuelRows(x1=x1, x2=x2, outcome=outcome, weight=weight))
    return _duel_buffer(ring.rows, ring.num_obs)


def duel_buffer_sum(fn, buffer: DuelBuffer, block_rows: int | None = None):
    """``sum_b fn(x1_b, x2_b, outcome_b, weight_b)`` over blocks of the buffer's filled rows
    (:func:`~jaxbandits.ring.blocked_sum`), the rows outside a block's share given weight 0.

    ``fn`` maps ``block_rows`` rows to a pytree and must be linear in the rows' weights (every
    row's contribution a multiple of its weight, as in a weighted loss or Gram matrix), so that
    a weight-0 row adds exactly nothing. ``block_rows`` (default: about B / 8, between 32 and
    256 rows): a buffer of at most that many rows is one block; a larger one is summed in
    blocks that skip those past the filled rows, so that the cost is O(t) for t pairs.
    """
    block_rows = block_rows or _block_rows(buffer.capacity)

    def block(cut, mask):
        return fn(cut.x1, cut.x2, cut.outcome, jnp.where(mask, cut.weight, 0.0))

    return blocked_sum(block, buffer.rows, buffer.num_rows, block_rows=block_rows)


def pair_difference(fn, x1: jax.Array, x2: jax.Array):
    """``fn(x1) - fn(x2)`` (leaf by leaf) for row batches ``x1``, ``x2`` ``(N, d)`` and a
    row-wise ``fn``, from ONE call of ``fn`` on the ``2N`` stacked rows: one network pass over
    both arms of every pair, whose matmuls are twice as wide as two passes' (nvldb-ucb-asym at
    100 runs on 2 CPU cores: 15-22% more seed-steps/s than two passes)."""
    num = x1.shape[0]
    return jax.tree.map(lambda out: out[:num] - out[num:], fn(jnp.concatenate([x1, x2])))


class _DuelingAgent(Agent):
    """Plumbing shared by the neural dueling agents: what they play, the buffer's size."""

    family = "dueling"
    action_kinds = ("pair",)
    runs_per_block: ClassVar[int] = 8  # a neural round is costly (see default_block_runs)

    buffer_size: int | None = struct.field(pytree_node=False, default=None)

    def assume(self, assumptions: Assumptions, spec: Spec,
               horizon: int | None = None) -> dict[str, Any]:
        """The shared mapping (:meth:`Agent.assume`), and a horizon-sized buffer for pairs."""
        values = super().assume(assumptions, spec, horizon)
        if self.buffer_size is None and horizon and spec.action_kind == "pair":
            values["buffer_size"] = int(min(horizon, AUTO_BUFFER))
        return values

    def _buffer_init(self, spec: Spec) -> DuelBuffer:
        return duel_buffer_init(self.buffer_size or AUTO_BUFFER, spec.dim)
