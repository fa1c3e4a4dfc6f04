"""The data a round exchanges: the environment's :class:`Spec`, the :class:`Context` an agent
sees, the :class:`Feedback` it gets, and the :class:`Assumptions` an environment's model makes.

Re-exported by :mod:`jaxbandits.core`, which defines the contract that uses them.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal

import jax
import jax.numpy as jnp
from flax import struct

ActionKind = Literal["index", "pair", "vector"]
ACTION_KINDS: tuple[str, ...] = ("index", "pair", "vector")
PyTree = Any


@struct.dataclass
class Spec:
    """What an environment shows an agent, fixed for the whole experiment (all static).

    Attributes:
      dim: feature dimension d of an arm (or of the action vector for ``"vector"`` actions).
      num_arms: K, the number of arms offered per round (0 for compact action sets).
      action_kind: ``"index"`` (an arm index in [0, K)), ``"pair"`` (two indices, dueling) or
        ``"vector"`` (a point of a compact set such as the unit sphere, shape ``(d,)``).
      feedback_kind: ``"reward"`` (a real reward) or ``"preference"`` (a comparison bit).
      replay: True when the environment replays logged data; rounds whose logged action differs
        from the agent's are not counted (``Feedback.accepted``) and there is no regret.
      fixed_arms: True when the arm set is the same in every round of a run (``Context.arms``
        is the same ``(K, d)`` array in every round, arm k always the same vector), so agents
        may keep per-arm statistics across rounds (LinUCB's incremental widths). False unless
        the environment guarantees it.
      metrics: names of the extra per-round metrics in ``Feedback.metrics`` (e.g.
        ``("weak_regret",)`` for dueling): the runner records their cumulative sums beside
        regret and reward, and results, plots and summaries show them.
      inputs: what a model reads each round: ``"arms"`` (the feature vectors ``Context.arms``,
        every environment but the text ones) or ``"tokens"`` (one row of token ids,
        ``Context.tokens``, shown for all actions; ``Context.arms`` repeats it per action).
        Agents list the inputs they understand in ``Agent.input_kinds``.
    """

    dim: int = struct.field(pytree_node=False)
    num_arms: int = struct.field(pytree_node=False)
    action_kind: str = struct.field(pytree_node=False, default="index")
    feedback_kind: str = struct.field(pytree_node=False, default="reward")
    replay: bool = struct.field(pytree_node=False, default=False)
    fixed_arms: bool = struct.field(pytree_node=False, default=False)
    metrics: tuple[str, ...] = struct.field(pytree_node=False, default=())
    inputs: str = struct.field(pytree_node=False, default="arms")


@dataclasses.dataclass(frozen=True)
class Assumptions:
    """What an agent must assume about an environment to be well specified (None: not stated).

    An environment states them (:meth:`Env.assumptions`); an agent maps them onto the fields it
    has (:meth:`Agent.assume`); ``jb.make_agent(name, env=env)`` applies them to the fields the
    user did not set.

    Attributes:
      noise_std: sigma, the (sub-)Gaussian scale of a reward around its mean (1/2 for rewards
        in [0, 1], which are 1/2-sub-Gaussian).
      prior_var: sigma_0^2, the variance of each coordinate of theta* under the instance
        distribution: ``N(0, sigma_0^2 I)`` exactly, or the isotropic Gaussian with theta*'s
        second moment (``1/d`` for a uniform unit vector). None when there is no linear
        parameter.
      param_bound: S, a bound on ``||theta*||`` (exact for a unit vector; for a Gaussian prior
        the 99% quantile ``sigma_0 (sqrt(d) + sqrt(2 ln 100))``). None when unknown.
      task: the environment's :attr:`Env.task`, the key of agents' per-task presets (set by
        :func:`~jaxbandits.well_specified`).
    """

    noise_std: float | None = None
    prior_var: float | None = None
    param_bound: float | None = None
    task: str | None = None

    @classmethod
    def gaussian_prior(cls, noise_std: float, prior_var: float, dim: int) -> Assumptions:
        """theta* ~ N(0, prior_var I) in R^dim, rewards with noise scale ``noise_std``."""
        bound = math.sqrt(prior_var) * (math.sqrt(dim) + math.sqrt(2.0 * math.log(100.0)))
        return cls(noise_std=float(noise_std), prior_var=float(prior_var), param_bound=bound)

    @classmethod
    def sphere_prior(cls, noise_std: float, radius: float, dim: int) -> Assumptions:
        """theta* uniform on the sphere of ``radius`` in R^dim (covariance radius^2 / dim I)."""
        return cls(noise_std=float(noise_std), prior_var=float(radius) ** 2 / dim,
                   param_bound=float(radius))


@struct.dataclass
class Context:
    """What the agent sees in one round.

    Attributes:
      arms: ``(K, d)`` feature vectors of the arms offered this round, or None for a compact
        action set (the agent then returns a vector).
    Environments that show more subclass this dataclass and add fields.
    """

    arms: jax.Array | None = None


@struct.dataclass
class Feedback:
    """What one round returns.

    Attributes:
      reward: ``()`` the observed reward (or the preference bit for dueling feedback).
      regret: ``()`` the exact instantaneous pseudo-regret, ``max_x f*(x) - f*(action)``.
      accepted: ``()`` bool, for replay environments: whether the round counted. Always True
        for simulated environments.
      metrics: ``{name: ()}`` the extra per-round metrics the spec names (``Spec.metrics``);
        the runner accumulates each like the regret.
      oracle: ``{name: array}`` privileged quantities of the round that a simulation knows and
        a bandit algorithm does not (a dueling environment's true ``preference_prob``), for
        oracle variants of agents (NVLDB's ``variance="oracle"``); not recorded.
    """

    reward: jax.Array
    regret: jax.Array
    accepted: jax.Array | bool = True
    metrics: dict[str, jax.Array] = struct.field(default_factory=dict)
    oracle: dict[str, jax.Array] = struct.field(default_factory=dict)


def float_dtype() -> jnp.dtype:
    """The default float dtype: float32, or float64 when ``jax_enable_x64`` is on."""
    return jnp.result_type(float)
