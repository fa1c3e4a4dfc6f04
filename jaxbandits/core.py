"""The contract: environments and agents as pure functions, and the small shared types.

An environment and an agent are frozen pytree dataclasses. Sizes and switches are static fields
(``struct.field(pytree_node=False)``); every numeric hyperparameter is a pytree leaf, so the runner
can ``vmap`` over it (:func:`jaxbandits.sweep`) without recompiling.

Each function is written for **one run**; the runner adds the run and grid axes with ``vmap`` and
the time axis with ``lax.scan``::

    env.spec()                                          -> Spec (static)
    env.init(key)                                       -> env_state
    env.observe(key, env_state, t)                      -> Context
    env.feedback(key, env_state, context, action)       -> Feedback
    agent.init(key, spec)                               -> agent_state
    agent.act(state, key, context)                      -> (action, state)
    agent.update(state, key, context, action, feedback) -> state

What an agent offers beyond these three is a declared capability, typed by a protocol and checked
with its signature when the agent is registered (:func:`check_agent_class`)::

    Scores      scores(state, key, context) -> (K,)               act plays their argmax
    LogProb     log_prob(state, key, context, action) -> ()       act draws from a distribution
    Logits      logits(state, key, context) -> (K,)               ... which is softmax(logits)
    Parameter   parameter(state, key, context) -> (d,)            act plays argmax <x, theta>
    Wrapper     agent                                             wraps another agent
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable, Mapping
from typing import (
    Any,
    ClassVar,
    Protocol,
    runtime_checkable,
)

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxbandits.spec import (  # the round's data types and the engine's float dtype
    ACTION_KINDS,
    ActionKind,  # noqa: F401  (its old import path)
    Assumptions,
    Context,
    Feedback,
    PyTree,
    Spec,
    float_dtype,
)
from jaxbandits.validation import (  # the checks of settings
    FieldKind,
    check_choice,
    check_nonnegative,
    check_positive,
    check_probability,
    check_seed,
    check_types,
    field_kinds,
)

__all__ = [
    "ACTION_KINDS",
    "AUTO_BUFFER",
    "Agent",
    "Assumptions",
    "Context",
    "Delegating",
    "Env",
    "Feedback",
    "FieldKind",
    "INPUT_KINDS",
    "LogProb",
    "Logits",
    "METHOD_CAPABILITIES",
    "Parameter",
    "PerDim",
    "Scores",
    "Spec",
    "Wrapper",
    "check_agent_class",
    "check_choice",
    "check_inputs",
    "check_positive",
    "check_nonnegative",
    "check_probability",
    "check_seed",
    "check_types",
    "distinct_indices",
    "field_kinds",
    "float_dtype",
    "wrapped_agent",
    "wrapped_assume",
]

#: Rows of the ring buffer an agent with ``buffer_size=None`` keeps on an arm set that changes
#: between rounds (2,000: Bae & Lee 2025's horizon and buffer, so the whole history of shorter
#: runs).
AUTO_BUFFER = 2000


class Env(struct.PyTreeNode):
    """Base class of environments: a frozen dataclass of static sizes and numeric leaves.

    Subclasses implement :meth:`spec`, :meth:`init`, :meth:`observe` and :meth:`feedback`, and
    may extend :meth:`validate` (called by the registry and the runner before any compilation).
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    #: the agent families whose model fits this environment: ``jaxbandits run`` plays the
    #: registered agents of these families (that can act on it) by default.
    agent_families: ClassVar[tuple[str, ...]] = ("baseline", "linear")
    #: the horizon and run count ``jaxbandits run`` plays on this environment when ``--horizon``
    #: / ``--runs`` are not given (its paper's; None: the command's 10,000 rounds and 200 runs).
    default_horizon: ClassVar[int | None] = None
    default_runs: ClassVar[int | None] = None
    #: the task's name in agents' per-task presets (Ensemble++'s ``"quadratic"``, ``"shuttle"``,
    #: ...): ``jb.make_agent(name, env=env)`` gives an agent with such presets this one.
    task: ClassVar[str | None] = None

    def spec(self) -> Spec:
        raise NotImplementedError

    def assumptions(self) -> Assumptions:
        """What an agent must assume to be well specified here (see :class:`Assumptions`).

        The default states only the environment's ``noise_std`` field, if it has one.
        """
        noise = getattr(self, "noise_std", None)
        return Assumptions(noise_std=None if noise is None else float(noise))

    # Optional (differentiable rollouts, :mod:`jaxbandits.differentiable`), written by
    # environments with a finite arm set whose expected rewards are known:
    #
    #     mean_rewards(env_state, context) -> (K,)   the expected reward of every arm this round
    #
    # ``feedback`` should draw its reward around it (and compute its regret from it), so the two
    # cannot disagree; a subclass that overrides ``feedback`` must override it too.

    def init(self, key: jax.Array) -> PyTree:
        """Draws one problem instance (theta*, the arm pool, a data order...)."""
        raise NotImplementedError

    def observe(self, key: jax.Array, env_state: PyTree, t: jax.Array) -> Context:
        """The context of round ``t`` (0-based)."""
        raise NotImplementedError

    def feedback(
        self, key: jax.Array, env_state: PyTree, context: Context, action: jax.Array
    ) -> Feedback:
        """The reward of ``action`` and its exact pseudo-regret."""
        raise NotImplementedError

    def validate(self) -> None:
        """Raises ``ValueError`` naming the field when a setting has the wrong type or is out of
        range. Subclasses extend it and call ``super().validate()`` first (the type checks)."""
        check_types(self)
        for name in ("dim", "num_arms"):
            if hasattr(self, name):
                check_positive(self, name, integer=True)
        if hasattr(self, "noise_std"):
            check_nonnegative(self, "noise_std")
        if getattr(self, "instance_seed", None) is not None:
            check_seed(self, "instance_seed")

    def check_call(self, key: jax.Array, horizon: int, num_runs: int) -> None:
        """Raises ``ValueError`` when this environment cannot serve a call of the runner with
        this user ``key`` (a typed JAX key), ``horizon`` and ``num_runs``: the runner asks at its
        public entry, before any compilation. Every call by default; an environment of finite
        data overrides it (:class:`~jaxbandits.envs.ArrayEnv`: its rounds and runs, and the key
        its per-run slices are recognised by)."""


class Agent(struct.PyTreeNode):
    """Base class of agents: a frozen dataclass of static switches and numeric leaves.

    Subclasses implement :meth:`init`, :meth:`act` and :meth:`update`, declare their traits (the
    class attributes of the block below) and may extend :meth:`validate`. What an agent can do
    beyond the contract is declared by the methods it has, typed by the capability protocols
    (:class:`Scores`, :class:`LogProb`, :class:`Parameter`, :class:`Logits`, :class:`Wrapper`);
    :func:`check_agent_class` checks both when the agent is registered.
    """

    # -- Traits: one block of class attributes, the same for every instance (a wrapper may
    # answer some of them for what it wraps, as properties). :data:`AGENT_TRAITS` lists them.
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    family: ClassVar[str] = ""
    #: the action kinds (``Spec.action_kind``, :data:`ACTION_KINDS`) the agent can play.
    action_kinds: ClassVar[tuple[str, ...]] = ("index",)
    #: the round inputs (``Spec.inputs``, :data:`INPUT_KINDS`) the agent's model reads.
    input_kinds: ClassVar[tuple[str, ...]] = ("arms",)
    #: ``reg`` is the prior precision relative to the noise (a ridge prior ``N(0, noise_std^2 /
    #: reg I)``), so the well-specified value is ``noise_std^2 / prior_var``.
    reg_is_prior: ClassVar[bool] = False
    #: ``perturb_std`` perturbs rewards as the noise would, so the well-specified value is the
    #: noise scale (ensemble sampling, perturbed history).
    perturb_is_noise: ClassVar[bool] = False
    #: ``update`` reads the played arm only through ``chosen_features`` / ``action_weights``,
    #: so it also learns from a relaxed action (a float ``(K,)`` vector of arm weights), as
    #: relaxed rollouts play (:mod:`jaxbandits.differentiable`).
    relaxed_updates: ClassVar[bool] = False
    #: the runs per block the runner plays on a CPU by default (None: the runner's rule, see
    #: ``simulate.default_block_runs``); set by agents with costly rounds.
    runs_per_block: ClassVar[int | None] = None
    #: named presets, as data: ``{preset: {field: value}}``, under the key None the values of
    #: an agent whose ``preset`` field is None (or that has no such field). ``make_agent`` merges
    #: them into the fields left at None (:meth:`with_preset`), so a made agent holds the
    #: numbers that run; a value that depends on the context dimension is a :class:`PerDim`.
    presets: ClassVar[Mapping[str | None, Mapping[str, Any]]] = types.MappingProxyType({})

    @property
    def model_family(self) -> str:
        """The family of the model this agent fits (a wrapper answers for what it wraps)."""
        return self.family

    def preset_values(self) -> Mapping[str, Any]:
        """``{field: value}`` of this agent's preset (its ``preset`` field; None without one)."""
        preset = self.preset if "preset" in field_kinds(type(self)) else None
        return self.presets.get(preset, {})

    def with_preset(self, dim: int | None = None) -> Agent:
        """This agent with every field left at None that its preset sets (:attr:`presets`)
        given the preset's value; a :class:`PerDim` value only when ``dim`` (the context
        dimension d) is given, else it stays None and :meth:`setting` computes it from the
        spec's d while tracing. ``make_agent`` calls it last (with the environment's d if given).

        Example::

            MaxInP(preset="rcdp").with_preset()    # reg=1.0, fit='online', explore_scale=0.5
        """
        fill = {}
        for field, value in self.preset_values().items():
            if value is None or getattr(self, field) is not None:
                continue
            if isinstance(value, PerDim):
                if dim is None:
                    continue
                value = value(dim, self)
            fill[field] = value
        return self.replace(**fill) if fill else self

    def setting(self, field: str, dim: int | None = None) -> Any:
        """``field``'s value, or for None its preset's (a :class:`PerDim` one at context
        dimension ``dim``): what a field left at None means where the agent reads it."""
        value = getattr(self, field)
        if value is not None:
            return value
        value = self.preset_values().get(field)
        return value(dim, self) if isinstance(value, PerDim) else value

    def assume(self, assumptions: Assumptions, spec: Spec,
               horizon: int | None = None) -> dict[str, Any]:
        """``{field: value}`` that make this agent well specified for an environment with
        ``assumptions`` and ``spec``, over ``horizon`` rounds if known (only fields it has).

        The shared field names map one way for every agent: ``noise_std`` <- sigma,
        ``param_bound`` <- S, ``reg`` <- sigma^2 / sigma_0^2 where ``reg_is_prior``,
        ``perturb_std`` <- sigma where ``perturb_is_noise``, and an unset ``buffer_size`` on an
        arm set that changes <- ``min(horizon, AUTO_BUFFER)`` (the whole history of runs up to
        2,000 rounds). Subclasses with other meanings override it.
        """
        have = field_kinds(type(self))
        a, values = assumptions, {}
        if "noise_std" in have and a.noise_std is not None:
            values["noise_std"] = a.noise_std
        if "param_bound" in have and a.param_bound is not None:
            values["param_bound"] = a.param_bound
        if self.reg_is_prior and "reg" in have and a.noise_std and a.prior_var:
            values["reg"] = a.noise_std**2 / a.prior_var
        if self.perturb_is_noise and "perturb_std" in have and a.noise_std is not None:
            values["perturb_std"] = a.noise_std
        if ("buffer_size" in have and self.buffer_size is None and horizon
                and not spec.fixed_arms and spec.action_kind == "index"):
            values["buffer_size"] = int(min(horizon, AUTO_BUFFER))
        return values

    def init(self, key: jax.Array, spec: Spec) -> PyTree:
        raise NotImplementedError

    def for_gradients(self) -> Agent:
        """This agent as gradient tools differentiate it (:mod:`jaxbandits.differentiable`):
        the same policy, with loops of data-dependent trip count replaced by fixed-trip ones,
        which reverse mode needs (a neural agent's training steps). Default: itself."""
        return self

    def act(self, state: PyTree, key: jax.Array, context: Context) -> tuple[jax.Array, PyTree]:
        raise NotImplementedError

    def update(
        self,
        state: PyTree,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> PyTree:
        raise NotImplementedError

    def warmup_rounds(self, spec: Spec) -> int:
        """The rounds of forced exploration before the agent's own rule acts on ``spec`` (a
        ``warmup`` field; -1 means one round per arm). The runner warns when it exceeds the
        horizon. 0 for agents without a warm-up; array-valued (swept) warm-ups give their max."""
        warmup = getattr(self, "warmup", None)
        if warmup is None:
            return 0
        values = np.ravel(np.asarray(warmup))
        if values.size == 0:
            return 0
        return int(max(spec.num_arms if v < 0 else v for v in values.tolist()))

    def validate(self) -> None:
        """Raises ``ValueError`` naming the field when a setting has the wrong type or is out of
        range. Subclasses extend it and call ``super().validate()`` first (the type checks).

        The field names that agents share are range-checked here, once for every agent:
        ``reg`` and ``kappa`` positive; ``noise_std``, ``explore_scale``, ``perturb_std``,
        ``prior_scale``, ``learning_rate`` and ``param_bound`` finite and >= 0; ``delta`` in
        (0, 1); the sizes positive integers (``buffer_size`` may be None).
        """
        check_types(self)
        for name in ("reg", "kappa"):
            if hasattr(self, name):
                check_positive(self, name)
        for name in ("noise_std", "explore_scale", "perturb_std", "prior_scale", "learning_rate",
                     "param_bound"):
            if hasattr(self, name):
                check_nonnegative(self, name)
        if hasattr(self, "delta"):
            check_probability(self, "delta")
        for name in ("ensemble_size", "num_grad_steps", "update_every", "width", "depth",
                     "buffer_size", "batch_size"):
            if getattr(self, name, None) is not None:
                check_positive(self, name, integer=True)
        if hasattr(self, "active_members"):
            check_nonnegative(self, "active_members", integer=True)


@dataclasses.dataclass(frozen=True)
class PerDim:
    """A preset value that depends on the context dimension d: ``fn(d, agent)`` (the agent
    gives the other fields it reads, e.g. a horizon hint). Filled by ``make_agent(name,
    env=env)``, where d is known; without an environment while tracing, from the spec's d."""

    fn: Callable[[int, Agent], Any]

    def __call__(self, dim: int, agent: Agent) -> Any:
        return self.fn(dim, agent)


# ------------------------------------------------------------------------------------------------
# Capabilities: what an agent offers beyond the contract, declared by the methods it has and typed
# by these protocols, so callers test a type (``isinstance(agent, Scores)``), never an attribute.


@runtime_checkable
class Scores(Protocol):
    """An agent that plays ``greedy_index(scores)`` (after any warm-up): relaxed rollouts play
    ``softmax(scores / temperature)`` instead, and :class:`~jaxbandits.agents.Softmax` wraps it
    (mixin ``agents.select.LinearScores``)."""

    def scores(self, state: PyTree, key: jax.Array, context: Context) -> jax.Array:
        """``(K,)`` the score of every arm of ``context`` this round."""


@runtime_checkable
class LogProb(Protocol):
    """An agent that draws its arm from an explicit distribution: score-function gradients
    (:func:`jaxbandits.policy_gradient`) need its log-probabilities (mixin
    ``agents.select.SoftmaxPolicy``)."""

    def log_prob(self, state: PyTree, key: jax.Array, context: Context,
                 action: jax.Array) -> jax.Array:
        """``()`` the log-probability that ``act(state, key, context)`` plays ``action``."""


@runtime_checkable
class Logits(Protocol):
    """An agent that plays a draw from ``softmax(logits)`` (mixin
    ``agents.select.SoftmaxPolicy``)."""

    def logits(self, state: PyTree, key: jax.Array, context: Context) -> jax.Array:
        """``(K,)`` the logits of the round's arm distribution."""


@runtime_checkable
class Parameter(Protocol):
    """An agent that plays ``argmax_k <x_k, theta>`` for a parameter of the round (mixin
    ``agents.select.LinearScores``)."""

    def parameter(self, state: PyTree, key: jax.Array, context: Context) -> jax.Array:
        """``(d,)`` theta, the round's parameter (a mean, a posterior draw, a member)."""


@runtime_checkable
class Wrapper(Protocol):
    """An agent that wraps another (``agent`` field): it keeps the wrapped agent's state and
    answers for its model (the doubling trick, a softmax over scores)."""

    agent: Agent


#: The method capabilities whose signatures :func:`check_agent_class` checks.
METHOD_CAPABILITIES: tuple[type, ...] = (Scores, LogProb, Logits, Parameter)
#: The round inputs an agent may read (``Spec.inputs``).
INPUT_KINDS: tuple[str, ...] = ("arms", "tokens")


def wrapped_agent(agent: Agent) -> Agent | None:
    """The agent ``agent`` wraps (:class:`Wrapper`), or None."""
    inner = agent.agent if isinstance(agent, Wrapper) else None
    return inner if isinstance(inner, Agent) else None


def wrapped_assume(inner: Agent, values: dict[str, Any]) -> dict[str, Any]:
    """A wrapper's :meth:`Agent.assume` from its wrapped agent ``inner``'s ``values``: those
    that change ``inner``, as ``{"agent": inner.replace(...)}`` (``{}`` when none does)."""
    values = {f: v for f, v in values.items() if getattr(inner, f) != v}
    return {"agent": inner.replace(**values)} if values else {}


class Delegating:
    """Mixin of a :class:`Wrapper` agent (listed before :class:`Agent`): the wrapped ``agent``'s
    round inputs, well-specified values (:func:`wrapped_assume`) and initial state. It declares
    no field."""

    @property
    def input_kinds(self) -> tuple[str, ...]:
        return self.agent.input_kinds

    def assume(self, assumptions: Assumptions, spec: Spec,
               horizon: int | None = None) -> dict[str, Any]:
        """The wrapped agent's well-specified values, as a new ``agent``."""
        return wrapped_assume(self.agent, self.agent.assume(assumptions, spec, horizon))

    def init(self, key: jax.Array, spec: Spec):
        return self.agent.init(key, spec)


def check_agent_class(cls: type) -> None:
    """Raises ``ValueError`` naming the class unless it is an :class:`Agent` whose traits have
    their declared types, whose presets set only its fields, and whose capability methods have
    the protocols' signatures (names of the parameters after ``self``, in order), so a drifted
    signature fails at registration, not while tracing. :func:`~jaxbandits.register_agent`
    calls it."""
    if not (isinstance(cls, type) and issubclass(cls, Agent)):
        raise ValueError(f"{cls!r} is not a subclass of jaxbandits.Agent")
    owner = cls.name or cls.__name__
    for trait in ("name", "description", "paper", "family"):
        if not isinstance(getattr(cls, trait), (str, property)):
            raise ValueError(f"agent {owner!r}: {trait} must be a string")
    for trait, allowed in (("action_kinds", ACTION_KINDS), ("input_kinds", INPUT_KINDS)):
        value = getattr(cls, trait)
        if isinstance(value, property):  # answered per instance (a wrapper)
            continue
        if not isinstance(value, tuple) or not value or not set(value) <= set(allowed):
            raise ValueError(f"agent {owner!r}: {trait} must be a non-empty tuple of {allowed}, "
                             f"got {value!r}")
    for trait in ("reg_is_prior", "perturb_is_noise", "relaxed_updates"):
        value = getattr(cls, trait)
        if not isinstance(value, (bool, property)):
            raise ValueError(f"agent {owner!r}: {trait} must be True or False, got {value!r}")
    blocks = cls.runs_per_block
    if blocks is not None and (isinstance(blocks, bool) or not isinstance(blocks, int)
                               or blocks < 1):
        raise ValueError(f"agent {owner!r}: runs_per_block must be a positive integer or None, "
                         f"got {blocks!r}")
    fields = {f.name for f in dataclasses.fields(cls)}
    for preset, values in cls.presets.items():
        unknown = sorted(set(values) - fields)
        if unknown:
            raise ValueError(f"agent {owner!r}: preset {preset!r} sets {unknown}, which are not "
                             "fields of the agent")
    for protocol in METHOD_CAPABILITIES:
        (method,) = protocol.__protocol_attrs__
        have = getattr(cls, method, None)
        if have is None:
            continue
        want = _parameter_names(getattr(protocol, method))
        got = _parameter_names(have) if callable(have) else None
        if got != want:
            shown = "not a method" if got is None else f"({', '.join(got)})"
            raise ValueError(f"agent {owner!r}: {method} must take ({', '.join(want)}) as the "
                             f"{protocol.__name__} capability says, got {shown}")


def _parameter_names(method: Any) -> tuple[str, ...]:
    """The parameter names of an unbound method after ``self``."""
    return tuple(inspect.signature(method).parameters)[1:]


def check_inputs(spec: Spec, agent: Agent, env_name: str, agent_name: str) -> None:
    """Raises ``ValueError`` when ``agent`` cannot read the environment's round inputs
    (``Spec.inputs``, e.g. token ids for an agent of feature vectors)."""
    if spec.inputs not in agent.input_kinds:
        raise ValueError(f"agent {agent_name!r} cannot read environment {env_name!r}'s inputs: "
                         f"it reads {'/'.join(agent.input_kinds)}, the environment shows "
                         f"{spec.inputs!r} (an agent with a text backbone reads tokens, e.g. "
                         "neural-ensemble-pp)")


def distinct_indices(key: jax.Array, n: int, k: int) -> jax.Array:
    """``(k,)`` int32: ``k`` distinct indices of ``range(n)``, a uniformly random ordered draw
    without replacement (the law of ``jax.random.choice(key, n, (k,), replace=False)``).

    Sequential sampling in O(k^2) instead of a shuffle of all ``n`` (a sort of ``n`` random
    keys, which dominated a round of the pool environments: offering 5 of 2,500 pool vectors
    cost more than a NeuralLog round's network work). Draw ``r_i ~ Unif{0, ..., n - 1 - i}`` and
    take the ``r_i``-th index (from 0) not yet picked: with the picks so far sorted, ``s_0 <
    s_1 < ...``, that index is ``r_i + j`` with ``j = #{j : s_j - j <= r_i}`` (``s_j - j``
    unpicked indices lie below ``s_j``), which is also where it goes in the sorted picks.
    """
    if not 0 < k <= n:
        raise ValueError(f"need 0 < k <= n, got k={k}, n={n}")
    ranks = jax.random.randint(key, (k,), 0, n - jnp.arange(k), dtype=jnp.int32)
    slots = jnp.arange(k, dtype=jnp.int32)

    def pick(i, carry):
        picked, out = carry  # picked: sorted, unfilled slots hold n + k (never counted)
        j = jnp.sum(picked - slots <= ranks[i]).astype(jnp.int32)
        index = ranks[i] + j
        shifted = jnp.concatenate([picked[:1], picked[:-1]])
        picked = jnp.where(slots < j, picked, jnp.where(slots == j, index, shifted))
        return picked, out.at[i].set(index)

    init = (jnp.full((k,), n + k, jnp.int32), jnp.zeros((k,), jnp.int32))
    return jax.lax.fori_loop(0, k, pick, init, unroll=k <= 8)[1]
