"""The shared linear-BTL core of the linear dueling agents: the Gram matrix in square-root form,
the logistic fit (``fit="mle"`` or ``"online"``), the presets of the two public codes, and the
base class of MaxInP, MaxPairUCB, CoLSTIM and VACDB (:mod:`jaxbandits.agents.dueling_linear`,
which re-exports it).
"""

from __future__ import annotations

import difflib
import types
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits import core
from jaxbandits.core import (
    AUTO_BUFFER,
    Agent,
    Assumptions,
    Context,
    Feedback,
    PerDim,
    Spec,
    check_positive,
    float_dtype,
)
from jaxbandits.linalg import (
    GLMData,
    RidgeState,
    glm_data_add,
    glm_data_init,
    glm_newton,
    ridge_init,
    ridge_update,
)

LINEAR_DUEL_FITS: tuple[str, ...] = ("mle", "online")


def _sqrt_d_log_t(dim: int, horizon):
    """``sqrt(d log T)``, the confidence scale of CoLSTIM and VACDB's ``ucb.py``."""
    return jnp.sqrt(dim * jnp.log(jnp.asarray(horizon, float_dtype())))


#: The linear-BTL core's values per preset: VACDB's code (``ucb.py``) and rcdp-public's.
_CORE_PRESETS = {"vacdb": {"reg": 0.001, "fit": "mle"}, "rcdp": {"reg": 1.0, "fit": "online"}}
LINEAR_DUEL_PRESETS: tuple[str, ...] = tuple(_CORE_PRESETS)
#: VACDB's width coefficient ``2 sqrt(d log T)`` (T = ``horizon_hint``).
_TWO_SQRT_D_LOG_T = PerDim(lambda d, agent: 2.0 * _sqrt_d_log_t(d, agent.horizon_hint))


def _duel_presets(**rules: dict[str, Any]) -> types.MappingProxyType:
    """``{preset: {field: value}}``: the core's values of each preset, with a rule's ``rules
    [preset]`` added (``LinearDuelAgent.presets``)."""
    return types.MappingProxyType({p: {**core_values, **rules[p]}
                                   for p, core_values in _CORE_PRESETS.items()})


class _DuelAgent(Agent):
    """Plumbing shared by the linear dueling agents: pair actions, ``horizon_hint``, the buffer.

    Attributes:
      horizon_hint: T in the defaults that depend on the horizon (``log T``); 2,000 by default,
        the horizon ``jb.make_agent(name, env=env, horizon=T)`` is given otherwise.
      buffer_size: rows of the ring buffer of ``(z, o)`` the MLE is fitted on (static; None:
        ``AUTO_BUFFER`` = 2,000, or ``min(T, AUTO_BUFFER)`` through ``make_agent(..., horizon=T)``).
      newton_steps: the most damped-Newton steps per fit; it stops earlier at round-off (static).
    """

    family = "dueling"
    action_kinds = ("pair",)

    horizon_hint: int = 2000
    buffer_size: int | None = struct.field(pytree_node=False, default=None)
    newton_steps: int = struct.field(pytree_node=False, default=20)

    def assume(self, assumptions: Assumptions, spec: Spec,
               horizon: int | None = None) -> dict[str, Any]:
        """The shared mapping, plus ``horizon_hint`` <- the horizon and, on pair actions, an
        unset ``buffer_size`` <- ``min(horizon, AUTO_BUFFER)`` (a pair history has no per-arm
        summary, so also on a fixed arm set)."""
        values = super().assume(assumptions, spec, horizon)
        if horizon:
            values["horizon_hint"] = int(horizon)
            if self.buffer_size is None and spec.action_kind == "pair":
                values["buffer_size"] = int(min(horizon, AUTO_BUFFER))
        return values

    def validate(self) -> None:
        super().validate()
        check_positive(self, "horizon_hint", integer=True)
        check_positive(self, "newton_steps", integer=True)

    def _buffer_rows(self) -> int:
        return AUTO_BUFFER if self.buffer_size is None else int(self.buffer_size)

    def _check_spec(self, spec: Spec) -> None:
        if spec.action_kind != "pair":
            raise ValueError(f"{self.name}: plays pairs of arms (action kind 'pair'), the "
                             f"environment needs {spec.action_kind!r} actions")


def _check_name(obj: Any, field: str, choices: tuple[str, ...]) -> None:
    """Raises ``ValueError`` naming close matches unless ``obj.field`` is one of ``choices``."""
    value = getattr(obj, field)
    if value in choices:
        return
    close = difflib.get_close_matches(str(value), choices, n=2, cutoff=0.5) \
        if isinstance(value, str) else []
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise ValueError(f"{obj.name or type(obj).__name__}: unknown {field} {value!r}{hint} "
                     f"(known: {', '.join(choices)})")


# ------------------------------------------------------------------------------------------------
# The shared linear-BTL core.


class LinearDuelState(struct.PyTreeNode):
    """State of the linear-BTL core (:class:`LinearDuelAgent`).

    Attributes:
      theta: ``(d,)`` the utility estimate (the MLE, or the online-Newton iterate).
      gram: ``V_t = reg I + sum_s z_s z_s^T`` in square-root form (``gram.sqrt_cov`` ``(d, d)``
        with ``S S^T = V_t^{-1}``; ``gram.count`` ``()`` int32 the rounds played; its ``mean``
        and ``logdet`` are unused).
      data: the ring buffer of ``(z, o)``: ``features`` ``(B, d)``, ``counts`` ``(B,)`` 1 for a
        filled row, ``rewards`` ``(B,)`` the bits (``B = 0`` rows with ``fit="online"``).
    """

    theta: jax.Array
    gram: RidgeState
    data: GLMData


class LinearDuelAgent(_DuelAgent):
    """The linear-BTL core of ``maxinp``, ``maxpair-ucb`` and ``colstim``; subclasses write
    ``act`` (the pair rule) and their presets.

    Attributes:
      preset: ``"vacdb"`` (default) or ``"rcdp"`` (static): the source whose defaults fill the
        fields left at None.
      reg: lambda of ``V_t = lambda I + sum z z^T`` and of the MLE's penalty (None: 0.001 for
        ``vacdb``, 1 for ``rcdp``).
      kappa: the MLE penalty's weight, ``kappa lambda ||theta||^2 + (1/n) sum loss`` (0.1,
        VACDB's ``DB.kappa``; unused by ``fit="online"``).
      explore_scale: the width coefficient (beta of MaxInP / MaxPairUCB, c1 of CoLSTIM); None:
        the preset's value.
      fit: ``"mle"`` or ``"online"`` (static; None: ``mle`` for ``vacdb``, ``online`` for
        ``rcdp``).
      forbid_self_duel: never play ``k1 == k2`` (static; None: the preset's code).
      horizon_hint: T in the horizon-dependent defaults (2,000; ``make_agent(..., horizon=T)``
        sets it).
      buffer_size: rows of the MLE's ring buffer (static; None: ``AUTO_BUFFER``).
      newton_steps: the most damped-Newton steps per fit, warm-started (static; 20).
    """

    preset: str = struct.field(pytree_node=False, default="vacdb")
    reg: float | None = None
    kappa: float = 0.1
    explore_scale: float | None = None
    fit: str | None = struct.field(pytree_node=False, default=None)
    forbid_self_duel: bool | None = struct.field(pytree_node=False, default=None)

    #: ``{preset: {field: value}}`` for the fields left at None (a :class:`PerDim` value
    #: depends on d and ``horizon_hint``); each rule adds its own (:func:`_duel_presets`).
    presets = _duel_presets(vacdb={}, rcdp={})

    def validate(self) -> None:
        core.check_types(self)  # first, so a wrong type is named as such
        _check_name(self, "preset", LINEAR_DUEL_PRESETS)
        # the shared range checks, on a copy whose None fields hold their preset's values
        filled = self.replace(reg=self.setting("reg", 1),
                              explore_scale=0.0 if self.explore_scale is None
                              else self.explore_scale)
        _DuelAgent.validate(filled)
        if self.fit is not None:
            _check_name(self, "fit", LINEAR_DUEL_FITS)

    # -- the core -------------------------------------------------------------------------------

    def init(self, key: jax.Array, spec: Spec) -> LinearDuelState:
        self._check_spec(spec)
        dtype = float_dtype()
        rows = self._buffer_rows() if self.setting("fit", spec.dim) == "mle" else 0
        return LinearDuelState(
            theta=jnp.zeros((spec.dim,), dtype),
            gram=ridge_init(spec.dim, self.setting("reg", spec.dim), dtype),
            data=glm_data_init(rows, spec.dim, dtype),
        )

    def update(
        self,
        state: LinearDuelState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> LinearDuelState:
        arms = context.arms
        z = arms[action[0]] - arms[action[1]]
        o = jnp.asarray(feedback.reward, z.dtype)
        gram = ridge_update(state.gram, z, jnp.zeros((), z.dtype))
        if self.setting("fit", z.shape[-1]) == "online":
            gain = gram.sqrt_cov @ (gram.sqrt_cov.T @ z)  # V_t^{-1} z, after adding z
            theta = state.theta + gain * (o - jax.nn.sigmoid(z @ state.theta))
            return state.replace(theta=theta, gram=gram)
        data, _ = glm_data_add(state.data, z[None, :], jnp.zeros((), jnp.int32), o, False)
        n = jnp.maximum(jnp.sum(data.counts), 1.0)
        reg = 2.0 * self.kappa * self.setting("reg", z.shape[-1]) * n
        theta = glm_newton(state.theta, data.features, data.counts, data.rewards, reg,
                           "logistic", num_steps=self.newton_steps)
        return LinearDuelState(theta=theta, gram=gram, data=data)

    def _rule_inputs(self, state: LinearDuelState, arms: jax.Array):
        """``u = X theta`` ``(K,)``, ``phi = X S`` ``(K, d)`` and the identity ``inv_gram`` (as a
        diagonal): ``||phi_i - phi_j||^2 = ||x_i - x_j||^2_{V^{-1}}``."""
        ones = jnp.ones((arms.shape[-1],), arms.dtype)
        return arms @ state.theta, arms @ state.gram.sqrt_cov, ones
