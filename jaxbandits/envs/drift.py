"""Non-stationary environments: any environment's parameters jumping or drifting over rounds.

:class:`Drifting` wraps an environment. Its problem instance changes on a schedule keyed on the
round index ``t``, which the runner shares across runs (it is not batched), so a schedule is
plain arithmetic on ``t``, never a per-run ``lax.cond`` that ``vmap`` would turn into both
branches. Rounds are cut into segments of ``period`` rounds; segment ``k`` has its own instance
``env.init(key_k)``, drawn from the run's instance key (segment 0's is the wrapped
environment's own instance, so a period longer than the horizon plays the wrapped environment
exactly). Only the ``fields`` of the instance's state that are named drift (default: every
floating-point leaf):

- ``schedule="abrupt"``: in segment ``k`` they are instance ``k``'s (change points every
  ``period`` rounds, a piecewise-stationary bandit);
- ``schedule="linear"``: they move linearly from instance ``k``'s to instance ``k + 1``'s over
  segment ``k`` (a continuous drift through independent instances).

The regret of a round is measured against that round's instance (dynamic regret). Each round
draws its segment's instance(s) again (XLA keeps only what the drifting fields need), which
costs one or two ``init`` per round: cheap for synthetic environments, not for datasets.

Quantities that an instance caches from drifting fields must follow them: a subclass
recomputes them in :meth:`Drifting.refresh` (``drifting-linear`` drifts theta* and recomputes
the cached ``means = arms @ theta`` for its fixed arms). Naming no fields (every floating leaf
drifts) keeps an ``"abrupt"`` instance consistent (each segment is a whole instance) but also
changes the arm set, and the spec then no longer promises fixed arms.

Registered: ``drifting-linear`` (the ``linear`` environment whose theta* jumps every 1,000
rounds). These are extensions for studying non-stationarity, not a setting of the papers.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.core import Assumptions, Context, Env, Feedback, Spec, check_choice, check_positive
from jaxbandits.envs.linear import LinearEnv
from jaxbandits.registry import register_env

__all__ = ["DRIFT_SCHEDULES", "DriftState", "Drifting", "DriftingLinearEnv", "drifted"]

#: the schedules of :class:`Drifting`
DRIFT_SCHEDULES: tuple[str, ...] = ("abrupt", "linear")
PyTree = Any


class DriftState(struct.PyTreeNode):
    """One drifting run: ``base`` the wrapped environment's instance of segment 0 and ``key``
    the instance key that draws the others (``fold_in(key, k)`` for segment ``k >= 1``)."""

    base: PyTree
    key: jax.Array


def drifted(env: Env, state: DriftState, t: jax.Array, schedule: str, period: int,
            fields: tuple[str, ...] | None) -> PyTree:
    """The wrapped environment's instance in round ``t``: ``state.base`` with the drifting
    fields of the round's segment (``"abrupt"``) or of the line between its segment's and the
    next one's (``"linear"``). ``t`` is the shared round index (an unbatched scalar)."""
    t = jnp.asarray(t, jnp.int32)
    segment = t // period

    def instance(k):
        key = jnp.where(k == 0, jax.random.key_data(state.key),
                        jax.random.key_data(jax.random.fold_in(state.key, k)))
        return env.init(jax.random.wrap_key_data(key, impl=jax.random.key_impl(state.key)))

    # segment 0 is the wrapped instance itself, bit for bit (a redraw inside another program
    # may round differently)
    start = jax.tree.map(lambda b, s: jnp.where(segment == 0, b, s), state.base,
                         instance(segment))
    if schedule == "abrupt":
        return _take(state.base, start, fields, lambda new: new)
    end = instance(segment + 1)
    weight = (t % period).astype(jnp.float32) / period
    return _take(state.base, _zip(start, end), fields,
                 lambda pair: ((1 - weight.astype(pair[0].dtype)) * pair[0]
                               + weight.astype(pair[0].dtype) * pair[1]))


class Drifting(Env):
    """Any environment made non-stationary: its instance jumps or drifts every ``period``
    rounds (see the module docstring).

    Attributes:
      env: the wrapped environment (its numeric fields stay sweepable leaves).
      schedule: ``"abrupt"`` (a new instance's fields each segment) or ``"linear"`` (a linear
        path from each segment's instance to the next one's).
      period: rounds per segment.
      fields: the names of the instance state's fields that drift (None: every floating leaf).

    Example::

        env = jb.envs.Drifting(jb.make_env("bernoulli"), period=500)   # new arms' means
    """

    name = "drifting"
    description = "any environment whose instance jumps or drifts on a schedule of rounds"

    env: Env = struct.field(default_factory=LinearEnv)
    schedule: str = struct.field(pytree_node=False, default="abrupt")
    period: int = struct.field(pytree_node=False, default=1000)
    fields: tuple[str, ...] | None = struct.field(pytree_node=False, default=None)

    def inner(self) -> Env:
        """The wrapped environment."""
        return self.env

    @property
    def agent_families(self) -> tuple[str, ...]:
        return self.inner().agent_families

    def spec(self) -> Spec:
        spec = self.inner().spec()
        keeps_arms = self.fields is not None and "arms" not in self.fields
        return spec.replace(fixed_arms=spec.fixed_arms and keeps_arms)

    def assumptions(self) -> Assumptions:
        return self.inner().assumptions()

    def init(self, key: jax.Array) -> DriftState:
        return DriftState(base=self.inner().init(key), key=key)

    def observe(self, key: jax.Array, env_state: DriftState, t: jax.Array) -> Context:
        context = self.inner().observe(key, self._at(env_state, t), t)
        values = {f.name: getattr(context, f.name) for f in dataclasses.fields(context)}
        return _timed(type(context))(**values, drift_round=jnp.asarray(t, jnp.int32))

    def feedback(self, key: jax.Array, env_state: DriftState, context: Context,
                 action: jax.Array) -> Feedback:
        inner_cls = type(context).__mro__[1]
        plain = inner_cls(**{f.name: getattr(context, f.name)
                             for f in dataclasses.fields(inner_cls)})
        state = self._at(env_state, context.drift_round)
        return self.inner().feedback(key, state, plain, action)

    def validate(self) -> None:
        super().validate()
        inner = self.inner()
        if not isinstance(inner, Env):
            raise ValueError(f"{self.name}: env must be a jaxbandits Env, got {inner!r}")
        inner.validate()
        if self.fields is not None and not (isinstance(self.fields, tuple) and all(
                isinstance(f, str) for f in self.fields)):
            raise ValueError(f"{self.name}: fields must be None or a tuple of the instance "
                             f"state's field names, got {self.fields!r}")
        check_choice(self, "schedule", DRIFT_SCHEDULES)
        check_positive(self, "period", integer=True)
        if getattr(inner, "instance_seed", None) is not None:
            raise ValueError(f"{self.name}: the wrapped environment fixes its instance "
                             "(instance_seed), so every segment would be the same; leave it "
                             "None")
        state = jax.eval_shape(inner.init, jax.random.key(0))
        for name in self.fields or ():
            if not hasattr(state, name):
                raise ValueError(f"{self.name}: fields names {name!r}, which the wrapped "
                                 f"environment's state ({type(state).__name__}) does not have")

    def refresh(self, state: PyTree) -> PyTree:
        """The wrapped instance ``state`` after its fields drifted, with the quantities it
        caches from them recomputed (none here; subclasses override)."""
        return state

    def _at(self, env_state: DriftState, t: jax.Array) -> PyTree:
        state = self.refresh(drifted(self.inner(), env_state, t, self.schedule, self.period,
                                     self.fields))
        if self.schedule == "linear":
            return state
        first = jnp.asarray(t) < self.period  # the wrapped instance as drawn, caches included
        return jax.tree.map(lambda b, s: jnp.where(first, b, s), env_state.base, state)


@register_env
class DriftingLinearEnv(Drifting):
    """The ``linear`` environment whose theta* jumps (or drifts) every ``period`` rounds.

    The arms stay fixed per run; theta* of segment k is a fresh unit vector (``"abrupt"``),
    or theta* moves on the line between segment k's and segment k + 1's (``"linear"``); the
    cached means ``arms @ theta`` follow it. Attributes: the sizes and noise of
    :class:`~jaxbandits.envs.LinearEnv`, and :class:`Drifting`'s schedule and period.
    An extension for non-stationary studies, not a paper's setting.

    Example::

        env = jb.make_env("drifting-linear", dim=10, num_arms=20, period=500)
    """

    name = "drifting-linear"
    description = "linear bandit whose theta* jumps every `period` rounds (arms fixed)"
    paper = "extension (non-stationary)"

    env: Env | None = struct.field(pytree_node=False, default=None)
    dim: int = struct.field(pytree_node=False, default=20)
    num_arms: int = struct.field(pytree_node=False, default=50)
    noise_std: float = 0.5
    fields: tuple[str, ...] | None = struct.field(pytree_node=False, default=("theta",))

    def inner(self) -> Env:
        return LinearEnv(dim=self.dim, num_arms=self.num_arms, noise_std=self.noise_std)

    def refresh(self, state: PyTree) -> PyTree:
        return state.replace(means=state.arms @ state.theta)

    def validate(self) -> None:
        if self.env is not None:
            raise ValueError(f"{self.name}: env must be None (it wraps its own linear "
                             f"environment; jb.envs.Drifting(env) wraps another), got "
                             f"{self.env!r}")
        super().validate()


# ------------------------------------------------------------------------------------------------
# Helpers.


@functools.cache
def _timed(cls: type) -> type:
    """``cls`` (a Context dataclass) with one more field, ``drift_round``: the round index, so
    that ``feedback`` finds the round's instance (it is not given ``t``). Agents read the
    context's other fields as before (it is still an instance of ``cls``)."""

    @struct.dataclass
    class Timed(cls):
        drift_round: jax.Array | None = None

    Timed.__name__ = Timed.__qualname__ = f"Drifting{cls.__name__}"
    return Timed


def _zip(a: PyTree, b: PyTree) -> PyTree:
    return jax.tree.map(lambda x, y: (x, y), a, b)


def _take(base: PyTree, new: PyTree, fields: tuple[str, ...] | None, mix) -> PyTree:
    """``base`` with its drifting floating leaves replaced by ``mix(new leaf)``."""
    def floating(x) -> bool:
        x = x[0] if isinstance(x, tuple) else x
        return jnp.issubdtype(x.dtype, jnp.floating)

    if fields is None:
        return jax.tree.map(lambda old, n: mix(n) if floating(n) else old, base, new,
                            is_leaf=lambda x: isinstance(x, tuple))
    changes = {}
    for name in fields:
        changes[name] = jax.tree.map(lambda old, n: mix(n) if floating(n) else old,
                                     getattr(base, name), getattr(new, name),
                                     is_leaf=lambda x: isinstance(x, tuple))
    return base.replace(**changes)
