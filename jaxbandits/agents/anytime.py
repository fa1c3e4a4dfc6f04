"""Anytime agents by the doubling trick: full restarts at ``T_e = floor(T_0 b^e)`` (Sun et al. 2025,
Sec. 6).

An agent whose settings depend on the horizon (GLM-ES's ensemble size and perturbation scale)
becomes anytime by restarting it, as a black box, at the boundaries

    T_e = floor(T_0 b^e),  e = 0, 1, 2, ...     (b = (3 + sqrt 5) / 2 by default; Sun et al. 2025,
    Thm 6.1)

Epoch 0 is rounds ``1..T_0`` and epoch ``e >= 1`` is rounds ``T_{e-1}+1 .. T_e`` (our reading of
Sec. 6), of planned length ``L_0 = T_0``, ``L_e = T_e - T_{e-1}`` (the last epoch is cut at the
horizon, which the agent never knows). At each boundary the wrapped agent's state is discarded and
re-initialised from a fresh key (data, statistics, perturbations, members: everything), with epoch
e's settings:

* ``m_e = ceil(ensemble_scale * ln L_e)`` members (clipped to ``[1, ensemble_size]``: the
  wrapped agent allocates ``ensemble_size`` members and draws ``j_t`` from the first ``m_e``),
* ``sigma_R,e = perturb_scale * ln L_e``,
* a warm-up of ``min(tau, L_e)`` rounds, the design rounded to that many pulls (our literal reading
  of Sec. 6; or only in
  epoch 0 with ``warmup_mode="first_epoch_only"``),

each applied when the wrapped agent has the field (``active_members``, ``perturb_std``,
``warmup``). Regret and the round count run on across epochs. The paper's settings are
``T_0 in {100, 300}``, ``ensemble_scale = 2``, ``perturb_scale = 0.02`` (the log base is not given;
natural log).

Registered: ``glm-es-dt`` (:class:`GLMESDT`) and ``lin-es-dt`` (:class:`LinESDT`); any other
agent is wrapped with :class:`Anytime` directly::

    agent = jb.agents.Anytime(agent=jb.make_agent("lin-ts"), first_epoch=300)
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxbandits.agents.ensembles import LinES, LinESState
from jaxbandits.agents.glm import GLMES
from jaxbandits.agents.neural import NeuralES
from jaxbandits.agents.select import num_active_members
from jaxbandits.core import (
    Agent,
    Context,
    Feedback,
    Spec,
    check_choice,
    check_nonnegative,
    check_positive,
    float_dtype,
    wrapped_assume,
)
from jaxbandits.registry import register_agent

__all__ = [
    "GOLDEN_GROWTH",
    "WARMUP_MODES",
    "Anytime",
    "AnytimeState",
    "GLMESDT",
    "LinESDT",
    "doubling_boundaries",
    "doubling_regret_factor",
    "epoch_end",
]

GOLDEN_GROWTH: float = (3.0 + math.sqrt(5.0)) / 2.0
WARMUP_MODES: tuple[str, ...] = ("every_epoch", "first_epoch_only")
_INT32_MAX = 2**31 - 1


def epoch_end(first_epoch, growth, epoch) -> jax.Array:
    """``T_e = floor(T_0 b^e)``, the last round (1-based) of epoch ``e``, as int32 (traceable).

    Computed in the default float dtype; :func:`doubling_boundaries` and the wrapper both call
    this function, so they agree exactly. In float32 the value is exact for every ``T_e`` below
    about 2 million (checked for the paper's grid of ``T_0`` and ``b``); under x64 beyond.
    """
    dtype = float_dtype()
    value = jnp.asarray(first_epoch, dtype) * jnp.asarray(growth, dtype) ** jnp.asarray(
        epoch, dtype)
    return jnp.floor(jnp.minimum(value, _INT32_MAX)).astype(jnp.int32)


def doubling_boundaries(first_epoch: float, growth: float, horizon: int) -> np.ndarray:
    """The boundaries ``T_0 < T_1 < ...`` up to the first one ``>= horizon``, ``(E,)`` int.

    Example::

        doubling_boundaries(100, GOLDEN_GROWTH, 10_000)   # [100, 261, 685, 1794, 4697, 12299]
    """
    if not first_epoch >= 1 or not growth > 1 or first_epoch * (growth - 1) <= 1:
        raise ValueError(f"need T_0 >= 1, b > 1 and T_0 (b - 1) > 1, got T_0={first_epoch!r}, "
                         f"b={growth!r}")
    boundaries = [int(epoch_end(first_epoch, growth, 0))]
    while boundaries[-1] < horizon:
        boundaries.append(int(epoch_end(first_epoch, growth, len(boundaries))))
    return np.asarray(boundaries, dtype=np.int64)


def doubling_regret_factor(
    first_epoch: float, growth: float, gamma: float = 0.5, delta: float = 1.5
) -> float:
    """The doubling trick's regret factor ``l(gamma, delta, T_0, b)`` (Lemma E.1; Besson &
    Kaufmann 2018, Theorem 4): ``R^DT(T) <= l R(T)`` for ``R(T) = O(T^gamma (log T)^delta)``::

        l = (log(T_0 (b - 1) + 1) / log(T_0 (b - 1)))^delta * b^gamma (b - 1)^gamma / (b^gamma - 1)

    ES has ``gamma = 1/2``, ``delta = 3/2``; ``l(1/2, 3/2, 100, (3 + sqrt 5)/2) = 3.336`` and the
    ``b`` part is smallest at ``b = (3 + sqrt 5)/2`` (Sun et al. 2025, Sec. 6, Fig. 3).
    """
    base = first_epoch * (growth - 1.0)
    log_part = (math.log(base + 1.0) / math.log(base)) ** delta
    return log_part * growth**gamma * (growth - 1.0) ** gamma / (growth**gamma - 1.0)


class AnytimeState(struct.PyTreeNode):
    """State of :class:`Anytime`.

    Attributes:
      inner: the wrapped agent's state for the current epoch.
      step: ``()`` int32, rounds played so far (the global t).
      epoch: ``()`` int32, the current epoch e.
      epoch_start: ``()`` int32, ``T_{e-1}`` (0 in epoch 0).
      epoch_end: ``()`` int32, ``T_e``: the state restarts after this round.
      key: the wrapper's key; epoch e's state is initialised from ``fold_in(key, e)``.
      spec: the environment's spec (static), to re-initialise the wrapped agent.
    """

    inner: Any
    step: jax.Array
    epoch: jax.Array
    epoch_start: jax.Array
    epoch_end: jax.Array
    key: jax.Array
    spec: Spec = struct.field(pytree_node=False)


class Anytime(Agent):
    """Wraps ``agent`` in the doubling trick (Sun et al. 2025, Sec. 6, App. E).

    See the module docstring for the schedule. ``R^DT(T) <= l(1/2, 3/2, T_0, b) R(T)`` with
    ``l ~ 3.3`` at ``T_0 = 100``, ``b = (3 + sqrt 5)/2`` (Theorem 6.1).

    Attributes:
      agent: the wrapped agent (its numeric fields are leaves of this one).
      first_epoch: T_0, the first boundary (a leaf: ``sweep`` can vary it).
      growth: b.
      ensemble_scale: m_e = ceil(ensemble_scale ln L_e).
      perturb_scale: sigma_R,e = perturb_scale ln L_e.
      schedule: set ``m_e`` and ``sigma_R,e`` per epoch (static; False only restarts, with the
        wrapped agent's own settings).
      warmup_mode: ``"every_epoch"`` (warm-up ``min(tau, L_e)`` in every epoch) or
        ``"first_epoch_only"`` (static).

    Example::

        agent = jb.agents.Anytime(agent=jb.make_agent("glm-es", ensemble_size=20), first_epoch=300)
    """

    agent: Agent
    first_epoch: int = 100
    growth: float = GOLDEN_GROWTH
    ensemble_scale: float = 2.0
    perturb_scale: float = 0.02
    schedule: bool = struct.field(pytree_node=False, default=True)
    warmup_mode: str = struct.field(pytree_node=False, default="every_epoch")

    family = "anytime"

    @property
    def action_kinds(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.agent.action_kinds

    @property
    def model_family(self) -> str:
        return self.agent.model_family

    def assume(self, assumptions, spec, horizon=None) -> dict:
        """The wrapped agent's well-specified values, less those the schedule sets per epoch
        (``perturb_std``), as a new ``agent``."""
        values = self.agent.assume(assumptions, spec, horizon)
        if self.schedule:
            values.pop("perturb_std", None)
        return wrapped_assume(self.agent, values)

    def warmup_rounds(self, spec: Spec) -> int:
        """The first epoch's warm-up, ``min(tau, T_0)``."""
        return min(self.agent.warmup_rounds(spec), int(np.max(np.asarray(self.first_epoch))))

    def validate(self) -> None:
        if not isinstance(self.agent, Agent):
            raise ValueError(f"{self.name or 'anytime'}: agent must be a jaxbandits Agent, got "
                             f"{self.agent!r}")
        super().validate()
        self.agent.validate()
        check_positive(self, "first_epoch", integer=True)
        check_positive(self, "growth")
        if not float(self.growth) > 1.0 or float(self.first_epoch) * (float(self.growth) - 1) <= 1:
            raise ValueError(f"{self.name or 'anytime'}: growth must exceed 1 and "
                             f"first_epoch * (growth - 1) must exceed 1 (so epochs are never "
                             f"empty), got first_epoch={self.first_epoch!r}, "
                             f"growth={self.growth!r}")
        check_nonnegative(self, "ensemble_scale")
        check_nonnegative(self, "perturb_scale")
        check_choice(self, "warmup_mode", WARMUP_MODES)

    def epoch_agent(self, epoch: jax.Array, length: jax.Array) -> Agent:
        """The wrapped agent with epoch ``epoch``'s settings, for planned length ``L_e``."""
        agent = self.agent
        dtype = float_dtype()
        log_length = jnp.log(jnp.maximum(length, 1).astype(dtype))
        overrides = {}
        if self.schedule and hasattr(agent, "active_members") and hasattr(agent, "ensemble_size"):
            members = jnp.ceil(self.ensemble_scale * log_length).astype(jnp.int32)
            overrides["active_members"] = jnp.clip(members, 1, agent.ensemble_size)
        if self.schedule and hasattr(agent, "perturb_std"):
            overrides["perturb_std"] = self.perturb_scale * log_length
        if hasattr(agent, "warmup"):
            warmup = jnp.minimum(jnp.asarray(agent.warmup, jnp.int32), length)
            if self.warmup_mode == "first_epoch_only":
                warmup = jnp.where(epoch == 0, warmup, 0)
            overrides["warmup"] = warmup
        return agent.replace(**overrides)

    def _current(self, state: AnytimeState) -> Agent:
        return self.epoch_agent(state.epoch, state.epoch_end - state.epoch_start)

    def init(self, key: jax.Array, spec: Spec) -> AnytimeState:
        zero = jnp.zeros((), jnp.int32)
        end = epoch_end(self.first_epoch, self.growth, zero)
        inner = self.epoch_agent(zero, end).init(jax.random.fold_in(key, 0), spec)
        return AnytimeState(inner=inner, step=zero, epoch=zero, epoch_start=zero, epoch_end=end,
                            key=key, spec=spec)

    def act(self, state: AnytimeState, key: jax.Array, context: Context):
        action, inner = self._current(state).act(state.inner, key, context)
        return action, state.replace(inner=inner)

    def update(
        self,
        state: AnytimeState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> AnytimeState:
        inner = self._current(state).update(state.inner, key, context, action, feedback)
        step = state.step + 1
        restart = step >= state.epoch_end
        epoch = state.epoch + restart.astype(jnp.int32)
        start = jnp.where(restart, state.epoch_end, state.epoch_start)
        end = jnp.where(restart, epoch_end(self.first_epoch, self.growth, epoch), state.epoch_end)
        end = jnp.maximum(end, start + 1)
        fresh = self.epoch_agent(epoch, end - start).init(jax.random.fold_in(state.key, epoch),
                                                          state.spec)
        inner = jax.tree.map(lambda new, old: jnp.where(restart, new, old), fresh, inner)
        return state.replace(inner=inner, step=step, epoch=epoch, epoch_start=start,
                             epoch_end=end)


# ------------------------------------------------------------------------------------------------
# Registered anytime agents.


@register_agent
class GLMESDT(Anytime):
    """GLM-ES with the doubling trick (Sun et al. 2025, Sec. 6, App. E, "GLM-ES-DT100/300").

    Epoch e runs :class:`~jaxbandits.agents.GLMES` with ``m_e = ceil(2 ln L_e)`` of 20 allocated
    members (enough for ``L_e <= e^10 ~ 22,000``; longer epochs keep 20), ``sigma_R,e =
    0.02 ln L_e``, ``lambda = 1`` and a warm-up of ``min(500, L_e)`` design rounds. ``T_0 = 100``
    by default (DT100); ``first_epoch=300`` is DT300.

    Example::

        agent = jb.make_agent("glm-es-dt", first_epoch=300)
    """

    name = "glm-es-dt"
    description = "GLM-ES made anytime by the doubling trick (restarts at floor(T0 b^e))"
    paper = "Sun et al. 2025, Sec. 6, Thm 6.1"
    family = "anytime"
    action_kinds = ("index",)

    agent: Agent = GLMES(ensemble_size=20)


@register_agent
class NeuralESDT(Anytime):
    """Neural-ES with the doubling trick (Sun et al. 2025, Sec. 6, App. E; Sec. 7.2,
    "Neural-ES-DT").

    Epoch e runs :class:`~jaxbandits.agents.NeuralES` afresh with ``m_e = ceil(2 ln L_e)`` of 20
    allocated members, ``sigma_R,e = 0.02 ln L_e``, ``lambda = 1`` and its warm-up (each arm
    once) at the start of every epoch. ``T_0 = 100`` by default; ``first_epoch=300`` is DT300.

    Example::

        agent = jb.make_agent("neural-es-dt", first_epoch=300)
    """

    name = "neural-es-dt"
    description = "Neural-ES made anytime by the doubling trick (restarts at floor(T0 b^e))"
    paper = "Sun et al. 2025, Sec. 6, Thm 6.1"
    family = "anytime"
    action_kinds = ("index",)

    agent: Agent = NeuralES(ensemble_size=20)


class _ScheduledLinES(LinES):
    """``lin-es`` whose ``j_t`` is drawn from the first ``active_members`` members (0: all).

    For the doubling trick only (not registered); the default is Sun et al. 2025's Lin-ES (Sec.
    7.1), without the initial perturbation.
    """

    active_members: int = 0
    init_perturbation: bool = struct.field(pytree_node=False, default=False)

    def _select(self, state: LinESState, key: jax.Array) -> jax.Array:
        active = num_active_members(self.active_members, self.ensemble_size)
        if self.selection == "round_robin":
            return state.ensemble.ridge.count % active
        return jax.random.randint(key, (), 0, active)


@register_agent
class LinESDT(Anytime):
    """Linear ensemble sampling with the doubling trick: ``lin-es`` (Sun et al. 2025's Lin-ES, Sec.
    7.1, no initial perturbation) restarted at ``T_e = floor(T_0 b^e)``, with ``m_e = ceil(2 ln
    L_e)`` of 20 allocated members and ``sigma_R,e = 0.02 ln L_e`` (the GLM-ES-DT schedule; the
    paper runs Lin-ES without the doubling trick). Lin-ES has no warm-up.
    """

    name = "lin-es-dt"
    description = "Lin-ES made anytime by the doubling trick (restarts at floor(T0 b^e))"
    paper = "Sun et al. 2025, Sec. 6 schedule applied to Lin-ES (Lee & Oh 2024)"
    family = "anytime"
    action_kinds = ("index", "vector")

    agent: Agent = _ScheduledLinES(ensemble_size=20)
