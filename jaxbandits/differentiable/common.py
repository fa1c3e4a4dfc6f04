"""What the gradient tools share: the learnable leaves of an agent, the rollout (the runner's,
rematerialised per chunk), the argument checks, the key streams of runs and their twins, and the
estimate's mean and standard error."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxbandits.core import Agent, Env, LogProb, Scores, float_dtype
from jaxbandits.runner import (
    rollout,
    run_keys,
)

__all__ = [
    "BASELINES",
    "GradientEstimate",
    "POSITIVE_FIELDS",
    "RELAXATIONS",
    "check_args",
    "check_chunk",
    "check_count",
    "check_temperature",
    "combine",
    "leaf_values",
    "learnable_leaves",
    "mean_estimate",
    "remat_rollout",
    "run_streams",
]

PyTree = Any


BASELINES = ("none", "mean", "self-play")
RELAXATIONS = ("softmax", "straight-through", "gumbel")
#: fields that must stay positive: :func:`meta_learn` learns their logarithm.
POSITIVE_FIELDS = frozenset({
    "reg", "kappa", "noise_std", "explore_scale", "perturb_std", "prior_scale", "learning_rate",
    "param_bound", "temperature", "prior_alpha", "prior_beta", "posterior_scale",
})
PyTree = Any


#: the stream (folded into the key) of the self-play twins' own draws.
_TWIN_STREAM = 2**31 - 1


class GradientEstimate(NamedTuple):
    """A Monte-Carlo gradient of the expected cumulative reward over ``num_runs`` runs.

    Attributes:
      grad: the mean gradient, an agent-shaped pytree: each learnable leaf holds its gradient
        and every other leaf zero (so ``optax.apply_updates`` and ``jax.tree.map`` apply).
      grad_se: the standard error of each gradient entry (same structure; over instances: the
        two plays of an instance count as one under the self-play baseline).
      value: the objective's mean: the cumulative reward (score function) or the relaxed
        expected cumulative reward (pathwise).
      value_se: its standard error.
      regret: the mean cumulative (pseudo-)regret of the same rollouts (relaxed: of the
        actions played forward, the soft actions in ``"softmax"`` mode, the hard arms in the
        straight-through modes).
      num_runs: runs the mean is over (instances).
    """

    grad: PyTree
    grad_se: PyTree
    value: float
    value_se: float
    regret: float
    num_runs: int


# ------------------------------------------------------------------------------------------------
# Learnable leaves.


def _is_float(x) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, float):
        return True
    return hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.floating)


def _leaf_names(tree: PyTree) -> list[str]:
    return [jax.tree_util.keystr(path, simple=True, separator=".")
            for path, _ in jax.tree_util.tree_flatten_with_path(tree)[0]]


def learnable_leaves(agent: Agent, wrt: str | Sequence[str] | None = None) -> list[str]:
    """The dotted names of ``agent``'s leaves that gradients are taken with respect to: its
    float leaves, or those under the names (or dotted prefixes) in ``wrt``.

    Example::

        learnable_leaves(jb.make_agent("lin-ucb"), "explore_scale")   # ['explore_scale']
    """
    names = _leaf_names(agent)
    floats = _float_names(agent)
    if wrt is None:
        chosen = floats
    else:
        wanted = _wanted(agent, wrt)
        chosen = []
        for prefix in wanted:
            hits = [n for n in names if n == prefix or n.startswith(prefix + ".")]
            if not hits:
                raise ValueError(f"wrt: {type(agent).__name__} has no leaf {prefix!r} (its "
                                 f"leaves: {', '.join(names) or 'none'})")
            bad = [n for n in hits if n not in floats]
            if bad:
                raise ValueError(f"wrt: {', '.join(bad)} of {type(agent).__name__} is not a "
                                 f"float leaf (only float leaves have gradients)")
            chosen += [n for n in hits if n not in chosen]
    if not chosen:
        raise ValueError(f"{type(agent).__name__} has no float leaf to differentiate")
    return chosen


def _wanted(agent: Agent, wrt) -> tuple[str, ...]:
    """``wrt`` as a non-empty tuple of leaf names; ``ValueError`` for anything else."""
    if isinstance(wrt, str):
        return (wrt,)
    owner = type(agent).__name__
    wanted = tuple(wrt) if isinstance(wrt, (list, tuple)) else None
    if wanted is None or not all(isinstance(n, str) for n in wanted):
        raise ValueError(f"wrt must be a leaf name, a list of leaf names or None (every float "
                         f"leaf of {owner}), got {wrt!r}")
    if not wanted:
        raise ValueError(f"wrt is empty: name the leaves of {owner} to differentiate, or pass "
                         f"None for every float leaf ({', '.join(_float_names(agent)) or 'none'})")
    return wanted


def _float_names(agent: Agent) -> list[str]:
    leaves = jax.tree.leaves(agent)
    return [n for n, x in zip(_leaf_names(agent), leaves, strict=True) if _is_float(x)]


def combine(agent: Agent, names: Sequence[str], values: Sequence) -> Agent:
    """``agent`` with the leaves ``names`` replaced by ``values`` (traceable)."""
    all_names = _leaf_names(agent)
    leaves, treedef = jax.tree.flatten(agent)
    for name, value in zip(names, values, strict=True):
        leaves[all_names.index(name)] = value
    return jax.tree.unflatten(treedef, leaves)


def leaf_values(agent: Agent, names: Sequence[str]) -> list[jax.Array]:
    """The leaves ``names`` of ``agent`` as float arrays."""
    all_names = _leaf_names(agent)
    leaves = jax.tree.leaves(agent)
    return [jnp.asarray(leaves[all_names.index(n)], float_dtype()) for n in names]


def _as_agent_tree(agent: Agent, names: Sequence[str], values: Sequence) -> PyTree:
    """An agent-shaped pytree with ``values`` at ``names`` and zeros elsewhere."""
    zeros = jax.tree.map(lambda x: jnp.zeros_like(jnp.asarray(x)), agent)
    return combine(zeros, names, values)


# ------------------------------------------------------------------------------------------------
# Rollouts: the runner's public rollout, rematerialised per chunk.


def remat_rollout(body: Callable, carry, horizon: int, chunk_size: int | None):
    """``carry`` after ``body(carry, t)`` for ``t < horizon``: :func:`jaxbandits.runner.rollout`
    with each chunk rematerialised, so reverse mode keeps one carry per chunk and one chunk of
    residuals (about ``2 sqrt(T)`` rounds' worth with the default chunk)."""
    carry, _ = rollout(lambda c, t: (body(c, t), None), carry, horizon, chunk_size=chunk_size,
                       remat=True)
    return carry


def check_args(env: Env, agent: Agent, horizon, num_runs, what: str, need: str,
           validate: bool = True) -> tuple[int, int]:
    """Checks the arguments every gradient tool shares; returns ``(horizon, num_runs)`` as
    Python ints (static arguments of the jitted programs)."""
    if validate:
        env.validate()
        agent.validate()
    spec = env.spec()
    name = agent.name or type(agent).__name__
    if spec.action_kind != "index" or spec.replay:
        raise ValueError(f"{what}: environment {env.name!r} has {spec.action_kind!r} actions"
                         f"{' and replays logged data' if spec.replay else ''}; gradients are "
                         f"implemented for finite arm sets of simulated environments")
    if spec.action_kind not in agent.action_kinds:
        raise ValueError(f"{what}: agent {name!r} cannot act on environment {env.name!r}")
    for label, value in (("horizon", horizon), ("num_runs", num_runs)):
        check_count(value, label, what)
    if need == "log_prob" and not isinstance(agent, LogProb):
        raise ValueError(
            f"{what}: agent {name!r} has no log_prob: it does not draw its arm from an explicit "
            f"distribution, so score-function gradients do not apply. Use the relaxed mode, "
            f"jb.relaxed_gradient(env, agent, ...) (it plays softmax(scores / temperature)), or "
            f"wrap it: jb.agents.Softmax(agent=agent, temperature=...)")
    if need == "scores":
        if not isinstance(agent, Scores):
            raise ValueError(
                f"{what}: agent {name!r} has no scores method (it does not act by an argmax of "
                f"scores), so it has no relaxed mode"
                + ("; it draws from an explicit distribution: use jb.policy_gradient"
                   if isinstance(agent, LogProb) else ""))
        if not agent.relaxed_updates:
            raise ValueError(f"{what}: agent {name!r} cannot learn from a relaxed action (its "
                             f"update reads the played arm by index; relaxed_updates is False)")
        owner_feedback = _owner(type(env), "feedback")
        owner_means = _owner(type(env), "mean_rewards")
        if owner_means is None or not issubclass(owner_means, owner_feedback):
            raise ValueError(f"{what}: environment {env.name!r} does not state its arms' "
                             f"expected rewards (no mean_rewards method written with its "
                             f"feedback), which the relaxed objective needs")
    return int(horizon), int(num_runs)


def check_count(value, label: str, what: str, alternative: str = "") -> None:
    """Raises ``ValueError`` unless ``value`` is a positive integer (Python or NumPy)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < 1:
        raise ValueError(f"{what}: {label} must be a positive integer{alternative}, got "
                         f"{value!r}")


def check_chunk(chunk_size, what: str) -> int | None:
    """``chunk_size`` as a Python int (None: the default); ``ValueError`` unless positive."""
    if chunk_size is None:
        return None
    check_count(chunk_size, "chunk_size (rounds per rematerialised chunk)", what,
                 " or None (about sqrt(horizon))")
    return int(chunk_size)


def _owner(cls: type, method: str) -> type | None:
    """The class of ``cls``'s MRO that defines ``method`` (None if none does)."""
    for klass in cls.__mro__:
        if method in vars(klass):
            return klass
    return None


def check_temperature(temperature, relaxation: str, what: str) -> None:
    if relaxation not in RELAXATIONS:
        raise ValueError(f"{what}: relaxation must be one of {RELAXATIONS}, got {relaxation!r}")
    if isinstance(temperature, jax.core.Tracer):  # a traced temperature is the caller's to keep
        return
    try:
        ok = bool(np.all(np.asarray(temperature, float) > 0))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{what}: temperature must be positive, got {temperature!r}")


def _mean_se(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Mean and standard error over the leading axis."""
    n = x.shape[0]
    mean = jnp.mean(x, axis=0)
    se = jnp.std(x, axis=0, ddof=1) / math.sqrt(n) if n > 1 else jnp.zeros_like(mean)
    return mean, se


def mean_estimate(agent, names, grads, values, regrets) -> GradientEstimate:
    """The :class:`GradientEstimate` of per-run ``grads`` (one array per leaf of ``names``),
    objective ``values`` and ``regrets`` (each with a leading axis of runs)."""
    means, ses = zip(*(_mean_se(g) for g in grads), strict=True)
    value, value_se = _mean_se(values)
    return GradientEstimate(
        grad=_as_agent_tree(agent, names, list(means)),
        grad_se=_as_agent_tree(agent, names, list(ses)),
        value=float(value), value_se=float(value_se), regret=float(jnp.mean(regrets)),
        num_runs=int(values.shape[0]))


def run_streams(key: jax.Array, num_runs: int, twins: int):
    """``(env_keys, agent_keys, keys)`` of ``num_runs * twins`` runs, twins adjacent: twin 0 of
    run ``r`` is ``jb.simulate``'s run ``r``; twin 1 meets the same instance and contexts with
    its own agent, action and reward draws."""
    runs = jnp.arange(num_runs, dtype=jnp.int32)

    def streams(r, twin):
        env_key, agent_key, keys = run_keys(key, r)
        if twin:
            _, agent_key, other = run_keys(jax.random.fold_in(key, _TWIN_STREAM), r)
            keys = keys.replace(agent_act=other.agent_act, agent_update=other.agent_update,
                                env_feedback=other.env_feedback)
        return env_key, agent_key, keys

    copies = [jax.vmap(lambda r, c=c: streams(r, c))(runs) for c in range(twins)]
    return jax.tree.map(
        lambda *x: jnp.stack(x, 1).reshape((num_runs * twins,) + x[0].shape[1:]), *copies)
