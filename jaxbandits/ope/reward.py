"""Reward models ``q(x, a)`` for the direct method and doubly robust estimators.

:func:`fit_reward_model` fits, on a log, either

* ``"ridge"`` (default): one ridge regression per action (and per position for slates) on the
  context with an intercept, in closed form (:func:`~jaxbandits.linalg.ridge_fit`); or
* ``"mlp"``: one small network (:class:`~jaxbandits.nets.MLP` with biases) on the context, the
  one-hot action and the one-hot position, trained by full-batch Adam on the squared error.

Fitting and evaluating on the same log is the usual practice for DM/DR on a log too small to
split (and what the Open Bandit Pipeline's ``RegressionModel.fit_predict`` does with
``n_folds=1``); cross-fitting would use :meth:`~jaxbandits.data.BanditLog.split`.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import nnx, struct

from jaxbandits.data.logged import BanditLog
from jaxbandits.linalg import ridge_fit
from jaxbandits.nets import MLP

__all__ = ["REWARD_MODELS", "RewardModel", "fit_reward_model"]

#: The kinds of :func:`fit_reward_model`.
REWARD_MODELS: tuple[str, ...] = ("ridge", "mlp")


class RewardModel(struct.PyTreeNode):
    """A fitted reward model; :meth:`predict` gives ``q(x_i, a)`` on a log's rounds.

    Attributes:
      params: the ridge estimates ``(K, L, d + 1)``, or the network's parameters.
      kind: ``"ridge"`` or ``"mlp"`` (static).
      num_actions / num_positions: K and L (static).
      graphdef: the network's graph definition (static; ``"mlp"`` only).
    """

    params: Any
    kind: str = struct.field(pytree_node=False, default="ridge")
    num_actions: int = struct.field(pytree_node=False, default=1)
    num_positions: int = struct.field(pytree_node=False, default=1)
    graphdef: Any = struct.field(pytree_node=False, default=None)

    def predict(self, log: BanditLog) -> jax.Array:
        """``(n, K)``, or ``(n, K, L)`` for a log with L > 1 positions: ``q(x_i, a[, l])``."""
        return _predict(self, log.context)


@jax.jit
def _predict(model: RewardModel, context: jax.Array) -> jax.Array:
    n = context.shape[0]
    k, num_pos = model.num_actions, model.num_positions
    if model.kind == "ridge":
        x = jnp.concatenate([context, jnp.ones((n, 1), context.dtype)], axis=1)
        q = jnp.einsum("nd,kld->nkl", x, model.params)
    else:
        net = nnx.merge(model.graphdef, model.params)
        q = net(_mlp_inputs(context, k, num_pos)).reshape(n, k, num_pos)
    return q if num_pos > 1 else q[..., 0]


def fit_reward_model(log: BanditLog, kind: str = "ridge", *, reg: float = 1.0,
                     width: int = 32, num_steps: int = 300, learning_rate: float = 1e-2,
                     key: jax.Array | int = 0) -> RewardModel:
    """Fits ``q(x, a)`` (per position for slates) to the logged rewards.

    Args:
      log: the rounds to fit.
      kind: ``"ridge"`` (one ridge model per action and position, closed form) or ``"mlp"``.
      reg: the ridge regulariser lambda (``"ridge"``), or the weight decay (``"mlp"``).
      width: the network's hidden width (``"mlp"``, two hidden layers).
      num_steps / learning_rate: full-batch Adam steps and step size (``"mlp"``).
      key: the network's initialisation key (``"mlp"``).
    """
    if kind not in REWARD_MODELS:
        raise ValueError(f"kind must be one of {REWARD_MODELS}, got {kind!r}")
    if not reg >= 0:
        raise ValueError(f"reg must be >= 0, got {reg}")
    k, num_pos = log.num_actions, log.num_positions
    if kind == "ridge":
        if not reg > 0:
            raise ValueError("the ridge reward model needs reg > 0")
        params = _fit_ridge(log, reg)
        return RewardModel(params, "ridge", k, num_pos)
    key = jax.random.key(key) if isinstance(key, int) else key
    net = MLP(log.dim + k + num_pos, width, 3, init="torch", bias=True, scale_output=False,
              rngs=nnx.Rngs(params=key))
    graphdef, params = nnx.split(net)
    params = _fit_mlp(graphdef, params, log, reg, num_steps, learning_rate)
    return RewardModel(params, "mlp", k, num_pos, graphdef)


@jax.jit
def _fit_ridge(log: BanditLog, reg) -> jax.Array:
    x = jnp.concatenate([log.context, jnp.ones((log.num_rounds, 1), log.context.dtype)], axis=1)
    group = log.action * log.num_positions + log.position
    theta = ridge_fit(x, log.reward, group, log.num_actions * log.num_positions, reg)
    return theta.reshape(log.num_actions, log.num_positions, -1)


def _mlp_inputs(context: jax.Array, k: int, num_pos: int) -> jax.Array:
    """``(n * K * L, d + K + L)`` every round's context with every action and position."""
    n, d = context.shape
    x = jnp.broadcast_to(context[:, None, None, :], (n, k, num_pos, d))
    a = jnp.broadcast_to(jnp.eye(k, dtype=context.dtype)[None, :, None, :], (n, k, num_pos, k))
    p = jnp.broadcast_to(jnp.eye(num_pos, dtype=context.dtype)[None, None], (n, k, num_pos,
                                                                            num_pos))
    return jnp.concatenate([x, a, p], axis=-1).reshape(n * k * num_pos, -1)


@functools.partial(jax.jit, static_argnames=("graphdef", "num_steps"))
def _fit_mlp(graphdef, params, log: BanditLog, weight_decay, num_steps, learning_rate):
    dtype = log.context.dtype
    inputs = jnp.concatenate(
        [log.context, jax.nn.one_hot(log.action, log.num_actions, dtype=dtype),
         jax.nn.one_hot(log.position, log.num_positions, dtype=dtype)], axis=1)
    opt = optax.adamw(learning_rate, weight_decay=weight_decay)

    def loss(p):
        pred = nnx.merge(graphdef, p)(inputs)
        return jnp.mean((pred - log.reward) ** 2)

    def step(carry, _):
        p, s = carry
        g = jax.grad(loss)(p)
        updates, s = opt.update(g, s, p)
        return (optax.apply_updates(p, updates), s), None

    (params, _), _ = jax.lax.scan(step, (params, opt.init(params)), None, length=num_steps)
    return params
