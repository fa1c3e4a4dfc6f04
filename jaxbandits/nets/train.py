"""Training networks: full-batch gradient descent on fixed-shape data (:func:`net_gd`), and a
replay buffer with minibatch Adam (:class:`ReplayBuffer`, :func:`minibatch_adam`) at the end.

Every neural agent fits the regularised loss (Sun et al. 2025, Sec. 4.3, App. C; Zhou et al. 2020)::

    L(theta) = sum_i [ n_i b(f(x_i; theta)) - s_i f(x_i; theta) ] + reg/2 ||theta - anchor||^2

on rows ``(x_i, n_i, s_i)`` (the :class:`~jaxbandits.linalg.GLMData` rows: inputs, counts, sums).
With the identity link ``b(u) = u^2 / 2`` the data term is the squared loss
``1/2 sum_l (f(X_l) - Y_l)^2`` up to a theta-independent constant, in either row layout:

* **per-arm statistics** (a fixed arm set, Sun et al. 2025, Sec. 4.1): ``x_i`` the K arms, ``n_i``
  the pull counts and ``s_i`` the reward sums, since ``sum_l (f(X_l) - Y_l)^2 =
  sum_k n_k (f(x_k) - ybar_k)^2 + const``; exact, O(K) per step whatever t;
* **a ring buffer** (changing contexts): ``x_i`` the played inputs, ``n_i`` the validity mask
  (1 for a filled row, 0 for an empty one) and ``s_i`` the row's reward.

The logistic link (``b = softplus``) gives the binary cross-entropy of the neural logistic
bandits on the same rows. ``reg`` is the whole coefficient: the papers' ``1/2 lambda m
||theta - theta_0||^2`` is ``reg = lambda * m`` with ``anchor = theta_0``.

Reductions (Sun et al. 2025, Sec. 7.2 and Bae & Lee 2025, App. A both take 100 steps of 0.01):
``"mean"`` (default) descends ``L / max(n, 1)``, ``n = sum_i n_i`` -- the same minimiser, stable at
lr 0.01 for any n, and the same trajectory as ``"sum"`` with step ``learning_rate / n``; ``"sum"``
descends ``L`` itself (the literal reading, which diverges once n is large); ``"mean_plus_reg"``
descends ``data / n + reg/2 ||theta - anchor||^2`` (a different minimiser; the reference code's
weight decay).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import nnx

from jaxbandits.linalg import REDUCTIONS, link_cumulant
from jaxbandits.nets.mlp import Network
from jaxbandits.ring import Ring, blocked_sum, ring_add, ring_init, ring_sample

__all__ = [
    "ReplayBuffer",
    "blocked_grad",
    "blocked_sum",
    "minibatch_adam",
    "net_gd",
    "net_loss",
    "replay_add",
    "replay_init",
    "replay_sample",
    "training_round",
]


def net_loss(
    network: Network,
    params: nnx.State,
    anchor: nnx.State,
    inputs: jax.Array,
    counts: jax.Array,
    sums: jax.Array,
    reg: jax.Array | float,
    *,
    link: str = "identity",
    reduction: str = "sum",
) -> jax.Array:
    """The regularised loss above for rows ``inputs`` ``(N, d)``, ``counts`` ``(N,)`` and
    ``sums`` ``(N,)``, reduced by ``reduction`` (a scalar)."""
    data_scale, penalty_scale = _reduction_scales(reduction, counts)
    data = _data_term(network, params, inputs, counts, sums, link)
    return data_scale * data + penalty_scale * _penalty(params, anchor, reg)


def _data_term(network, params, inputs, counts, sums, link) -> jax.Array:
    """``sum_i n_i b(f(x_i)) - s_i f(x_i)`` (the loss's data part, unreduced)."""
    f = network.apply(params, inputs)
    return jnp.sum(counts * link_cumulant(f, link) - sums * f)


def _penalty(params, anchor, reg) -> jax.Array:
    squares = jax.tree.map(lambda p, a: jnp.sum((p - a) ** 2), params, anchor)
    return 0.5 * reg * sum(jax.tree.leaves(squares))


def _reduction_scales(reduction: str, counts: jax.Array):
    """``(c_data, c_penalty)``: the reduced loss is ``c_data data + c_penalty penalty``."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    inv_n = 1.0 / jnp.maximum(jnp.sum(counts), 1.0)
    return {"mean": (inv_n, inv_n), "mean_plus_reg": (inv_n, 1.0), "sum": (1.0, 1.0)}[reduction]


def net_gd(
    network: Network,
    params: nnx.State,
    anchor: nnx.State,
    inputs: jax.Array,
    counts: jax.Array,
    sums: jax.Array,
    reg: jax.Array | float,
    *,
    learning_rate: jax.Array | float,
    num_steps: jax.Array | int,
    reduction: str = "mean",
    link: str = "identity",
    num_rows: jax.Array | int | None = None,
    block_rows: int = 256,
) -> nnx.State:
    """``num_steps`` full-batch gradient steps (``optax.sgd(learning_rate)``) on
    :func:`net_loss` from ``params`` (a warm start); returns the new parameters.

    ``num_steps`` may be traced: it is a loop bound, so a round in which no run trains costs no
    step, also under ``vmap`` (a batched loop runs while some run still needs a step; the runs
    of one experiment share their schedule, so they all stop together).

    ``num_rows`` (may be traced): only the first ``num_rows`` rows hold data (the filled prefix
    of a ring buffer; the others must have ``counts`` 0). The data gradient is then summed over
    blocks of ``block_rows`` rows (static), skipping the blocks past ``num_rows``, so a training
    on t < N observations costs O(t) rather than O(N), as the papers' code that trains on the
    history so far; the result is the full-batch step up to float rounding.

    Example::

        params = net_gd(net, params, theta0, arms, counts, sums, reg=1.0 * net.width,
                        learning_rate=0.01, num_steps=100)
    """
    optimizer = optax.sgd(learning_rate)
    data_scale, penalty_scale = _reduction_scales(reduction, counts)
    data_grad = _blocked_data_grad(network, inputs, counts, sums, link, num_rows, block_rows)

    def grad(p):
        g_penalty = jax.tree.map(lambda q, a: reg * (q - a), p, anchor)
        return jax.tree.map(lambda gd, gp: data_scale * gd + penalty_scale * gp,
                            data_grad(p), g_penalty)

    def step(_, carry):
        p, opt_state = carry
        updates, opt_state = optimizer.update(grad(p), opt_state, p)
        return optax.apply_updates(p, updates), opt_state

    return jax.lax.fori_loop(0, num_steps, step, (params, optimizer.init(params)))[0]


def _blocked_data_grad(network, inputs, counts, sums, link, num_rows, block_rows):
    """``p -> grad_p data_term(p)``, over the first ``num_rows`` rows in blocks when given."""
    if num_rows is None or inputs.shape[0] <= block_rows:
        return jax.grad(lambda p: _data_term(network, p, inputs, counts, sums, link))

    def block_term(p, block, mask):
        x, n, s = block
        return _data_term(network, p, x, jnp.where(mask, n, 0.0), jnp.where(mask, s, 0.0), link)

    return lambda p: blocked_grad(block_term, p, (inputs, counts, sums), num_rows,
                                  block_rows=block_rows)


def blocked_grad(
    loss: Callable[[Any, Any, jax.Array], jax.Array],
    params: Any,
    rows: Any,
    num_rows: jax.Array | int,
    *,
    block_rows: int = 256,
) -> Any:
    """``grad_p sum_b loss(p, rows_b, mask_b)``: the gradient of a sum over the first
    ``num_rows`` rows of ``rows`` in blocks (:func:`blocked_sum`; ``loss(p, block, mask)`` sums
    the per-row losses of ``block`` where ``mask`` is True, and the other rows must add exactly
    nothing). The result is the gradient of the plain sum up to float rounding.

    Example::

        def loss(p, block, mask):
            residual = block["x"] @ p - block["r"]
            return jnp.sum(jnp.where(mask, residual**2, 0.0))

        grad = blocked_grad(loss, w, buffer.rows, buffer.size, block_rows=64)
    """
    return blocked_sum(lambda block, mask: jax.grad(loss)(params, block, mask), rows, num_rows,
                       block_rows=block_rows)


def training_round(
    num_obs: jax.Array, warmup: jax.Array | int, update_every: jax.Array | int
) -> jax.Array:
    """Whether to train once ``num_obs`` observations are in: at the end of the warm-up
    (``num_obs == warmup``) and afterwards every ``update_every`` observations
    (``num_obs % update_every == 0``), i.e. at t = 50, 100, ... for ``update_every = 50``."""
    warm = (num_obs >= warmup) & (num_obs > 0)
    return warm & ((num_obs == warmup) | (num_obs % update_every == 0))


# ------------------------------------------------------------------------------------------------
# A replay buffer and minibatch Adam (the neural ensemble agents of Ensemble++, Li et al. 2024,
# Sec. 3.3, Alg. 1).


ReplayBuffer = Ring  # the ring buffer of jaxbandits.ring: rows (a pytree), num_obs, size
replay_init = ring_init
replay_add = ring_add
replay_sample = ring_sample


def minibatch_adam(
    loss: Callable[[Any, Any, jax.Array], jax.Array],
    params: Any,
    opt_state: optax.OptState,
    buffer: ReplayBuffer,
    key: jax.Array,
    *,
    num_steps: jax.Array | int,
    batch_size: int,
    learning_rate: jax.Array | float,
    reg: jax.Array | float,
    max_steps: int | None = None,
) -> tuple[Any, optax.OptState]:
    """``num_steps`` Adam steps, each on a fresh minibatch of the buffer, with coupled L2.

    ``loss(params, batch, key)`` is the minibatch loss (``batch`` as :func:`replay_sample`
    returns it). The gradient of every parameter gets ``reg / |D| * param`` added before Adam
    (PyTorch's ``Adam(weight_decay=reg / |D|)``, with ``|D|`` the number of filled rows, as the
    authors reset it before every step; Li et al. 2024, Sec. 3.3, Alg. 1), and the Adam state
    carries over from the previous call. ``num_steps`` may be traced (0 in a round without training:
    no step is run, also under ``vmap``). With ``max_steps`` (static) the loop always runs
    ``max_steps`` iterations and keeps the state unchanged from step ``num_steps`` on: a fixed trip
    count, which reverse-mode differentiation needs (gradients through training, e.g. with respect
    to ``learning_rate``); the same result, at the cost of the skipped steps.
    """
    optimizer = optax.adam(learning_rate)
    decay = reg / jnp.maximum(buffer.size, 1).astype(jnp.result_type(float))

    def step(i, carry):
        p, opt = carry
        key_batch, key_loss = jax.random.split(jax.random.fold_in(key, i))
        grads = jax.grad(loss)(p, replay_sample(buffer, key_batch, batch_size), key_loss)
        grads = jax.tree.map(lambda g, q: g + decay * q, grads, p)
        updates, opt = optimizer.update(grads, opt, p)
        return optax.apply_updates(p, updates), opt

    if max_steps is None:
        return jax.lax.fori_loop(0, num_steps, step, (params, opt_state))

    def masked(i, carry):
        new = step(i, carry)
        return jax.tree.map(lambda n, o: jnp.where(i < num_steps, n, o), new, carry)

    return jax.lax.fori_loop(0, max_steps, masked, (params, opt_state))
