"""The one ring buffer (``jaxbandits.ring``) and the buffers built on it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxbandits as jb
from jaxbandits.agents import dueling_neural as dn
from jaxbandits.linalg import glm_data_add, glm_data_init
from jaxbandits.ring import Ring, ring_add, ring_init, ring_sample


def test_ring_keeps_the_last_rows_in_slot_order_and_counts_them():
    ring = ring_init({"x": jnp.zeros((2,)), "n": jnp.zeros((), jnp.int32)}, 3)
    assert ring.capacity == 3 and int(ring.size) == 0 and not bool(ring.valid.any())
    add = jax.jit(ring_add)
    for n in range(5):  # rows 0..4: rows 3 and 4 overwrite slots 0 and 1
        ring = add(ring, {"x": jnp.full((2,), float(n)), "n": jnp.asarray(n)})
    np.testing.assert_array_equal(ring.rows["n"], [3, 4, 2])
    np.testing.assert_array_equal(ring.rows["x"][:, 0], [3.0, 4.0, 2.0])
    assert int(ring.num_obs) == 5 and int(ring.size) == 3 and bool(ring.valid.all())
    assert ring.rows["x"].dtype == jnp.zeros(()).dtype  # values cast to the table's dtype


def test_ring_samples_only_filled_rows():
    ring = ring_init(jnp.zeros(()), 8)
    for n in range(3):
        ring = ring_add(ring, jnp.asarray(n + 1.0))
    batch = ring_sample(ring, jax.random.key(0), 64)
    assert set(np.asarray(batch).tolist()) <= {1.0, 2.0, 3.0}


def test_every_buffer_writes_by_the_ring_rule():
    # the replay buffer is the ring; the GLM data, the duel buffer and LinPHE write the same slots
    assert jb.nets.ReplayBuffer is Ring
    ring = ring_init(jnp.zeros(()), 3)
    data = glm_data_init(3, 2)
    duel = dn.duel_buffer_init(3, 2)
    arms = jnp.arange(8.0).reshape(4, 2)
    for n in range(4):
        ring = ring_add(ring, jnp.asarray(n + 1.0))
        data, row = glm_data_add(data, arms, jnp.asarray(n), jnp.asarray(n + 1.0), False)
        assert int(row) == n % 3
        duel = dn.duel_buffer_add(duel, arms[n], arms[n], n + 1.0, 1.0)
    np.testing.assert_array_equal(data.rewards, ring.rows)
    np.testing.assert_array_equal(duel.outcome, ring.rows)
    np.testing.assert_array_equal(data.features, arms[jnp.array([3, 1, 2])])
    assert int(data.size) == int(duel.num_rows) == int(ring.size) == 3
    assert glm_data_init(3, 2, per_arm=True).size is None
