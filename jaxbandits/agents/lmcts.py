"""LMC-TS: Langevin Monte Carlo Thompson sampling (Xu et al. 2022), as the Ensemble++ paper ran it
(Li et al. 2024, App. F.2; the details from the official ``devzhk/LMCTS`` code that it used).

A network ``f(x; theta)`` predicts the reward of a context-arm vector ``x`` ``(d,)``. Every round
the agent

1. plays ``argmax_k f(x_k; theta)`` on its current parameters (the Langevin iterate *is* the
   posterior sample: no other randomness when acting);
2. stores ``(x_t, r_t)``;
3. runs ``K_t = min(t, num_grad_steps)`` Langevin steps (t: observations so far) on the
   full-history, sum-reduced loss ``L(theta) = sum_s (f(x_s; theta) - r_s)^2``::

       theta <- theta - lr_k (grad L(theta) + weight_decay theta + temp xi),   xi ~ N(0, I),

   with ``temp = -sqrt(2 beta / lr_0)`` fixed when the optimiser is built (the official
   ``LangevinMC``: the noise's standard deviation is ``lr_k sqrt(2 beta / lr_0)``, which is
   ``sqrt(2 lr beta)`` only until the first decay), ``beta = beta_inv d log T`` (d the input
   dimension or ``beta_dim``, T ``horizon_hint``), ``lr_0 = learning_rate``, and the step size
   decayed to ``lr_0 / c`` whenever the decay clock c reaches a multiple of ``lr_decay_every``
   (20) and held until the next one (:func:`lmcts_learning_rate`).

The decay clock (``lr_decay_clock``): ``"round"`` (default) is the official code's -- its
``LMCTS.step`` counts ``update_model`` calls, one per round, so ``lr = lr_0 / t`` is set at the
start of rounds t = 20, 40, ... and used by all of that round's steps. ``"step"`` counts the
optimiser's Langevin steps across rounds instead (step k, from 1, uses ``lr_0 / (20
floor(k / 20))``), a reading of the official code's "lr = lr_0 / step at every step that is a
multiple of 20". The state counts both (``buffer.num_obs`` and ``num_steps``).

The model (official ``models/classifier.py`` ``FCN``): a backbone (``MLPBackbone`` with PyTorch's
``nn.Linear`` init, LeakyReLU (slope 0.01) after every hidden layer) and a **bias-free** linear
output ``D -> 1`` (``nn.Linear(..., bias=False)``), i.e. exactly
:class:`~jaxbandits.nets.IndexNetwork` with ``head="none"`` (:class:`~jaxbandits.nets.BaseNet`;
its index input is unused). Any backbone callable can be plugged in (``backbone=``; the contract
is in :mod:`jaxbandits.nets.backbone`).

History and cost. The rows live in a ring buffer of ``buffer_size`` rows (None: ``AUTO_BUFFER`` =
2,000, or ``min(T, AUTO_BUFFER)`` through ``jb.make_agent(..., env=env, horizon=T)``): the full
history while ``t <= buffer_size``, a sliding window of the last ``buffer_size`` rows after. The
gradient is summed over the filled rows only, in blocks
(:func:`~jaxbandits.nets.train.blocked_grad`), so a round costs O(K_t t C_f) (C_f: a forward and
backward pass on one row), growing linearly in t up to the buffer -- the Ensemble++ paper's point
against LMC-TS (App. F.2, Fig. 10) -- plus O(K C_f) to act; memory O(buffer_size d).

Configurations (``preset``; the official ``devzhk/LMCTS`` YAML files, T = 10,000):

* None, ``"quadratic"``, ``"vector-quadratic"`` (the quad config): backbone [20, 20, 20]
  LeakyReLU, ``num_grad_steps`` (num_iter) 50, ``beta_inv`` 0.01, ``learning_rate`` 1e-3,
  ``beta_dim`` the input dimension;
* ``"shuttle"``: [50, 50, 50] LeakyReLU, 70 steps, ``beta_inv`` 1e-4, ``learning_rate`` 1e-2,
  ``beta_dim`` 9.

(``configs/simulation/quad-LMCTS.yaml`` and ``configs/uci/shuttle-lmcts.yaml``; LeakyReLU in both.
The classification code scales ``beta_inv`` by the raw feature count, ``dim_context = 9`` for
Shuttle, while its network reads the 63-dimensional disjoint encoding: hence ``beta_dim = 9``.)
The preset names are those of the neural Ensemble++ agents; the others have no LMC-TS
configuration and raise ``ValueError``.

Deviations from the official code: the noise is one flat standard-normal draw per step over all
parameters, as the official ``torch.randn(total_size)``, but from ``fold_in(key, step)`` and in
``ravel_pytree``'s order of the parameters (:func:`langevin_noise`), the sliding window past
``buffer_size`` rows (the official collector keeps everything), and the official
classification runs' ``norm=True`` input LayerNorm of some versions is not reproduced (pass a
backbone that normalises to get it).
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Callable
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
from flax import nnx, struct
from jax.flatten_util import ravel_pytree

from jaxbandits import core
from jaxbandits.agents.select import chosen_features, greedy_index
from jaxbandits.core import (
    AUTO_BUFFER,
    Agent,
    Assumptions,
    Context,
    Feedback,
    Spec,
    check_choice,
    check_nonnegative,
    check_positive,
    float_dtype,
)
from jaxbandits.nets.backbone import MLPBackbone
from jaxbandits.nets.index import IndexNetwork
from jaxbandits.nets.train import ReplayBuffer, blocked_grad, replay_add, replay_init
from jaxbandits.registry import register_agent

__all__ = [
    "LMCTS",
    "LMCTS_DECAY_CLOCKS",
    "LMCTS_PRESETS",
    "LMCTSState",
    "langevin_noise",
    "langevin_step",
    "lmcts_history_grad",
    "lmcts_learning_rate",
    "lmcts_predict",
    "lmcts_preset",
]

_QUAD: dict[str, Any] = {
    "backbone": MLPBackbone(hidden=(20, 20, 20), activation="leaky_relu"),
    "num_grad_steps": 50,
    "beta_inv": 0.01,
    "learning_rate": 1e-3,
    "beta_dim": None,
}
_SHUTTLE: dict[str, Any] = {
    "backbone": MLPBackbone(hidden=(50, 50, 50), activation="leaky_relu"),
    "num_grad_steps": 70,
    "beta_inv": 1e-4,
    "learning_rate": 1e-2,
    "beta_dim": 9,
}
#: ``{preset: {field: value}}``: the official ``devzhk/LMCTS`` configurations under the preset
#: names of the neural Ensemble++ agents (the quad config for both quadratic tasks); ``preset=None``
#: is ``"quadratic"``.
LMCTS_PRESETS: dict[str, dict[str, Any]] = {
    "quadratic": _QUAD,
    "vector-quadratic": _QUAD,
    "shuttle": _SHUTTLE,
}
#: ``LMCTS.lr_decay_clock``: what the step-size decay counts (module docstring).
LMCTS_DECAY_CLOCKS: tuple[str, ...] = ("round", "step")
_BLOCK_ROWS = 128  # the most rows per block of the history sum (about C / 16, >= 32)


def lmcts_preset(name: str) -> dict[str, Any]:
    """The field values of the LMC-TS configuration ``name`` (a copy of :data:`LMCTS_PRESETS`).

    Raises:
      ValueError: for a name without an LMC-TS configuration, naming the close matches.

    Example::

        lmcts_preset("shuttle")["num_grad_steps"]    # 70
    """
    if name not in LMCTS_PRESETS:
        close = difflib.get_close_matches(str(name), list(LMCTS_PRESETS), n=2, cutoff=0.4)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"lmc-ts: unknown preset {name!r}{hint} (LMC-TS has the official "
                         f"devzhk/LMCTS configurations {', '.join(LMCTS_PRESETS)} only)")
    return dict(LMCTS_PRESETS[name])


def lmcts_learning_rate(learning_rate, count, decay_every=20) -> jax.Array:
    """The step size at decay-clock value ``count`` (``()``, may be traced): ``lr_0`` until the
    clock first reaches ``decay_every``, then ``lr_0 / c`` with ``c`` the last multiple of
    ``decay_every`` reached (the official ``if step % 20 == 0: lr = base_lr / step``, held)."""
    last = (jnp.asarray(count) // decay_every) * decay_every
    lr = jnp.asarray(learning_rate, float_dtype())
    return jnp.where(last > 0, lr / jnp.maximum(last, 1).astype(lr.dtype), lr)


def langevin_step(params, grads, noise, learning_rate, weight_decay, temperature):
    """One ``LangevinMC`` step: ``theta - lr (grad + weight_decay theta + temp xi)`` on every leaf
    (``noise`` = xi, standard normal, shaped like ``params``)."""
    return jax.tree.map(
        lambda p, g, n: p - learning_rate * (g + weight_decay * p + temperature * n),
        params, grads, noise)


def langevin_noise(key: jax.Array, step, params):
    """``xi ~ N(0, I)`` shaped like ``params``, the noise of Langevin step ``step`` (may be
    traced) of a round whose update key is ``key``: ONE standard-normal draw of all the
    parameters (flattened in ``jax.flatten_util.ravel_pytree`` order) from ``fold_in(key,
    step)``, unflattened. One random call per step, not one per leaf: with a call per leaf the
    random numbers took more than half of an LMC-TS round's time."""
    flat, unravel = ravel_pytree(params)
    return unravel(jax.random.normal(jax.random.fold_in(key, step), flat.shape, flat.dtype))


def lmcts_predict(network: IndexNetwork, params: nnx.State, x: jax.Array) -> jax.Array:
    """``f(x; theta)`` ``(...)`` for inputs ``x`` ``(..., d)``."""
    index = jnp.zeros((1, network.ensemble_size), x.dtype)
    return network.apply(params, nnx.State({}), x, index)[..., 0, 0]


def lmcts_history_grad(network: IndexNetwork, params: nnx.State, buffer: ReplayBuffer,
                       block_rows: int = _BLOCK_ROWS) -> nnx.State:
    """``grad_theta sum_s (f(x_s; theta) - r_s)^2`` over the buffer's filled rows (rows ``x``
    ``(C, d)`` and ``r`` ``(C,)``), summed in blocks of ``block_rows`` that skip the empty ones:
    O(t) for t filled rows."""

    def block_loss(p, rows, mask):
        residual = lmcts_predict(network, p, rows["x"]) - rows["r"]
        return jnp.sum(jnp.where(mask, residual * residual, 0.0))

    return blocked_grad(block_loss, params, buffer.rows, buffer.size, block_rows=block_rows)


class LMCTSState(struct.PyTreeNode):
    """State of :class:`LMCTS`.

    Attributes:
      params: theta, the network's parameters (an ``nnx.State``; the current Langevin iterate).
      buffer: the history, rows ``x`` ``(C, d)`` and ``r`` ``(C,)``; ``buffer.num_obs`` ``()``
        int32 is t, the rounds observed (the ``"round"`` decay clock).
      num_steps: ``()`` int32, the Langevin steps taken so far, ``sum_s min(s, num_grad_steps)``
        (the optimiser's step count: the ``"step"`` decay clock).
    """

    params: nnx.State
    buffer: ReplayBuffer
    num_steps: jax.Array


@register_agent
class LMCTS(Agent):
    """LMC-TS (Xu et al. 2022; Li et al. 2024, App. F.2 and the authors' code): act greedily on the
    Langevin iterate, then ``min(t, num_grad_steps)`` Langevin steps on the full-history sum loss.

    Update rule (module docstring): ``theta <- theta - lr_k (grad L + weight_decay theta + temp
    xi)``, ``L = sum_s (f(x_s) - r_s)^2``, ``temp = -sqrt(2 beta_inv d log T / learning_rate)``,
    ``xi ~ N(0, I)``, ``lr_k = learning_rate / c`` from each multiple ``c`` of ``lr_decay_every``
    the decay clock reaches.

    Attributes:
      preset: the configuration whose values fill the fields left at None (static): None or
        ``"quadratic"`` / ``"vector-quadratic"`` (the official quad config), ``"shuttle"``
        (:data:`LMCTS_PRESETS`).
      backbone: the feature network (static; a backbone callable, :mod:`jaxbandits.nets.backbone`;
        None: the preset's ``MLPBackbone((20, 20, 20), "leaky_relu")``, ``(50, 50, 50)`` for
        Shuttle). A bias-free linear output ``D -> 1`` sits on it.
      learning_rate: lr_0, the initial step size (None: 1e-3; Shuttle 1e-2).
      num_grad_steps: num_iter, the most Langevin steps per round (static; None: 50; Shuttle 70).
      beta_inv: the inverse temperature before scaling, ``beta = beta_inv d log T`` (None: 0.01;
        Shuttle 1e-4). 0 gives plain gradient descent with weight decay.
      weight_decay: the L2 coefficient added to the gradient (2.0, the official value).
      horizon_hint: T in ``d log T`` (10,000, the configs' horizon; ``jb.make_agent(name,
        env=env, horizon=T)`` sets it).
      beta_dim: d in ``d log T`` (None: the input dimension; the Shuttle preset: 9).
      lr_decay_every: the decay period of the step size (20, the official ``decay_step``).
      lr_decay_clock: ``"round"`` (default, the official code) or ``"step"`` (static).
      buffer_size: rows of history kept (static; None: ``AUTO_BUFFER``, or ``min(T,
        AUTO_BUFFER)`` through ``make_agent(..., horizon=T)``); a sliding window beyond it.

    Example::

        agent = jb.make_agent("lmc-ts", env=jb.make_env("quadratic"), horizon=2000)
        agent = jb.make_agent("lmc-ts", preset="shuttle")
    """

    name = "lmc-ts"
    description = "Langevin Monte Carlo Thompson sampling on an MLP, full-history loss"
    paper = "Xu et al. 2022; baseline of Li et al. 2024, App. F.2"
    family = "neural-ensemble"
    runs_per_block: ClassVar[int] = 8  # a round trains on the whole history (see simulate)
    #: the official configurations (:data:`LMCTS_PRESETS`; None: ``"quadratic"``), merged into
    #: the fields left at None by ``make_agent`` (:meth:`~jaxbandits.Agent.with_preset`).
    presets = types.MappingProxyType({None: _QUAD, **LMCTS_PRESETS})

    preset: str | None = struct.field(pytree_node=False, default=None)
    backbone: Callable | None = struct.field(pytree_node=False, default=None)
    learning_rate: float | None = None
    num_grad_steps: int | None = struct.field(pytree_node=False, default=None)
    beta_inv: float | None = None
    weight_decay: float = 2.0
    horizon_hint: int = 10_000
    beta_dim: int | None = struct.field(pytree_node=False, default=None)
    lr_decay_every: int = 20
    lr_decay_clock: str = struct.field(pytree_node=False, default="round")
    buffer_size: int | None = struct.field(pytree_node=False, default=None)

    # -- settings -------------------------------------------------------------------------------

    def network(self, dim: int) -> IndexNetwork:
        """The static network for ``dim``-dimensional inputs (backbone + bias-free output)."""
        return IndexNetwork("none", in_features=dim, backbone=self.setting("backbone"),
                            num_outputs=1, ensemble_size=1)

    def temperature(self, dim: int) -> jax.Array:
        """``temp = -sqrt(2 beta / lr_0)``, ``beta = beta_inv d log T`` (``d = beta_dim`` or
        ``dim``): the noise of a step is ``lr_k |temp| xi``."""
        d = self.setting("beta_dim") or dim
        dtype = float_dtype()
        beta = (jnp.asarray(self.setting("beta_inv"), dtype) * d
                * jnp.log(jnp.asarray(self.horizon_hint, dtype)))
        return -jnp.sqrt(2.0 * beta / jnp.asarray(self.setting("learning_rate"), dtype))

    def assume(self, assumptions: Assumptions, spec: Spec,
               horizon: int | None = None) -> dict[str, Any]:
        """The shared mapping, plus ``horizon_hint`` <- the horizon and an unset ``buffer_size``
        <- ``min(horizon, AUTO_BUFFER)`` (the whole history of runs up to 2,000 rounds; on any
        arm set, since LMC-TS keeps the rows), and an unset ``preset`` <- the environment's task
        when LMC-TS has a configuration for it (``vector-quadratic``, ``shuttle-epp``)."""
        values = super().assume(assumptions, spec, horizon)
        if self.preset is None and assumptions.task in LMCTS_PRESETS:
            values["preset"] = assumptions.task
        if horizon:
            values["horizon_hint"] = int(horizon)
            if self.buffer_size is None:
                values["buffer_size"] = int(min(horizon, AUTO_BUFFER))
        return values

    def validate(self) -> None:
        core.check_types(self)  # first, so that a wrong type is named as such
        if self.preset is not None:
            lmcts_preset(self.preset)
        filled = self.with_preset()
        Agent.validate(filled)  # the shared checks (num_grad_steps, buffer_size ...)
        check_positive(filled, "learning_rate")
        check_nonnegative(filled, "beta_inv")
        check_nonnegative(self, "weight_decay")
        check_positive(self, "horizon_hint", integer=True)
        check_positive(self, "lr_decay_every", integer=True)
        if self.beta_dim is not None:
            check_positive(self, "beta_dim", integer=True)
        check_choice(self, "lr_decay_clock", LMCTS_DECAY_CLOCKS)
        if not callable(filled.backbone):
            raise ValueError(f"{self.name}: backbone must be a backbone callable "
                             f"(backbone(in_features, rngs=...) -> module), got "
                             f"{self.backbone!r}")

    # -- the agent ------------------------------------------------------------------------------

    def init(self, key: jax.Array, spec: Spec) -> LMCTSState:
        if spec.action_kind != "index" or spec.num_arms < 1:
            raise ValueError(f"{self.name}: plays one of K arms (action kind 'index'), the "
                             f"environment needs {spec.action_kind!r} actions")
        params, _ = self.network(spec.dim).init(key)
        dtype = float_dtype()
        row = {"x": jnp.zeros((spec.dim,), dtype), "r": jnp.zeros((), dtype)}
        capacity = AUTO_BUFFER if self.buffer_size is None else int(self.buffer_size)
        return LMCTSState(params=params, buffer=replay_init(row, capacity),
                          num_steps=jnp.zeros((), jnp.int32))

    def act(self, state: LMCTSState, key: jax.Array, context: Context
            ) -> tuple[jax.Array, LMCTSState]:
        scores = lmcts_predict(self.network(context.arms.shape[-1]), state.params, context.arms)
        return greedy_index(scores), state

    def update(
        self,
        state: LMCTSState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> LMCTSState:
        x = chosen_features(context, action)
        buffer = replay_add(state.buffer, {"x": x, "r": jnp.asarray(feedback.reward, x.dtype)})
        network = self.network(x.shape[-1])
        t = buffer.num_obs
        lr0 = self.setting("learning_rate")
        temp = self.temperature(x.shape[-1])
        block_rows = min(_BLOCK_ROWS, max(32, -(-buffer.capacity // 16)))

        def step(i, carry):
            params, count = carry
            count = count + 1
            clock = t if self.lr_decay_clock == "round" else count
            lr = lmcts_learning_rate(lr0, clock, self.lr_decay_every)
            grads = lmcts_history_grad(network, params, buffer, block_rows)
            noise = langevin_noise(key, i, params)
            return langevin_step(params, grads, noise, lr, self.weight_decay, temp), count

        num = jnp.minimum(t, self.setting("num_grad_steps"))
        params, num_steps = jax.lax.fori_loop(0, num, step, (state.params, state.num_steps))
        return LMCTSState(params=params, buffer=buffer, num_steps=num_steps)
