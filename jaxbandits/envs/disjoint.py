"""Environments of the per-arm ("disjoint") linear model: one shared context, one theta* per arm.

Li et al. (2010, Sec. 3.1) model arm ``a``'s reward as ``x_{t,a}^T theta*_a``, each arm with its
own parameter. In the common case (MABWiser's and OBP's linear policies, a classification table)
every arm sees the same context ``x_t`` (d,). The convention, which keeps every agent working:

* the context is a :class:`SharedContext`: ``shared`` holds ``x_t`` ``(d,)`` and ``arms`` holds
  each arm's feature vector ``x_{t,a}`` ``(K, d)``, here ``x_t`` repeated K times (a problem
  with per-arm features shows them in ``arms`` with ``shared=None``, as
  :class:`~jaxbandits.envs.ArrayEnv` does with ``contexts=``);
* the disjoint agents (``disjoint-lin-ucb``, ...) keep one model per arm and read ``x_t`` once
  (or ``arms`` row by row when the arms have features of their own);
  agents of one shared theta* run too, but cannot tell identical rows apart (they are not the
  model of these problems, and ``jaxbandits run`` does not play them here).

Environments: ``disjoint-linear`` (synthetic, theta*_a per arm) and ``disjoint-classification``
(any (X, y) table: the row's features shared by all arms, reward 1 for the right class).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.core import (
    Assumptions,
    Context,
    Env,
    Feedback,
    Spec,
    check_choice,
    check_positive,
)
from jaxbandits.data import make_table
from jaxbandits.envs.base import finite_arm_feedback
from jaxbandits.envs.datasets import ClassificationEnv, RowContext
from jaxbandits.envs.linear import THETA_PRIORS, draw_vectors, theta_assumptions
from jaxbandits.registry import register_env

__all__ = [
    "DisjointClassificationEnv",
    "DisjointLinearEnv",
    "SharedContext",
    "SharedRowContext",
    "shared_context",
]

#: How ``disjoint-linear`` draws a round's shared context.
CONTEXT_PRIORS: tuple[str, ...] = ("sphere", "gaussian")


@struct.dataclass
class SharedContext(Context):
    """A round with one context shared by all arms.

    Attributes:
      arms: ``(K, d)`` each arm's feature vector ``x_{t,a}``: ``shared`` repeated when it is
        given.
      shared: ``(d,)`` the shared context ``x_t``, or None (the arms have features of their
        own).
    """

    shared: jax.Array | None = None


@struct.dataclass
class SharedRowContext(RowContext):
    """A round of :class:`DisjointClassificationEnv`: ``arms`` ``(K, d)`` (the row repeated),
    ``shared`` ``(d,)`` the row's features and ``row`` its index in the table."""

    shared: jax.Array | None = None


def shared_context(x: jax.Array, num_arms: int) -> SharedContext:
    """The :class:`SharedContext` of a shared ``x`` ``(d,)``: ``arms`` is ``x`` repeated K times."""
    return SharedContext(arms=jnp.broadcast_to(x, (num_arms, x.shape[-1])), shared=x)


class DisjointLinearEnvState(struct.PyTreeNode):
    """One instance: ``theta`` ``(K, d)``, row ``a`` the parameter theta*_a of arm ``a``, and
    with ``context_pool`` the run's contexts ``pool`` ``(N, d)`` (else None)."""

    theta: jax.Array
    pool: jax.Array | None = None


@register_env
class DisjointLinearEnv(Env):
    """The disjoint linear bandit: ``reward = x_t^T theta*_a + N(0, noise_std^2)``.

    Each run draws K parameters theta*_a (unit vectors, or ``N(0, prior_var I)``); each round a
    fresh shared context ``x_t`` (a unit vector, or ``N(0, I / d)``), shown as a
    :class:`SharedContext`. The regret is ``max_a x_t^T theta*_a - x_t^T theta*_{a_t}``.

    Attributes:
      dim: d.  num_arms: K.  noise_std: the reward noise's standard deviation.
      theta_prior: ``"sphere"`` (unit theta*_a) or ``"gaussian"`` (``N(0, prior_var I)``).
      context_prior: ``"sphere"`` (unit x_t) or ``"gaussian"`` (``N(0, I / d)``).
      prior_var: the variance of the Gaussian theta* prior.
      context_pool: None (a fresh x_t every round) or N: each run draws N contexts at the
        start and shows one of them, uniformly, each round (one integer draw per round instead
        of d Gaussians: a population of N users).
      instance_seed: if set, every run shares the parameters drawn from this seed.

    Example::

        env = jb.make_env("disjoint-linear", dim=10, num_arms=20)
    """

    name = "disjoint-linear"
    description = "one shared context, one theta* per arm (Li et al.'s disjoint linear model)"
    paper = "Li et al. 2010, Sec. 3.1 (Eq. 2)"
    agent_families = ("baseline", "disjoint")

    dim: int = struct.field(pytree_node=False, default=10)
    num_arms: int = struct.field(pytree_node=False, default=20)
    noise_std: float = 0.5
    theta_prior: str = struct.field(pytree_node=False, default="sphere")
    context_prior: str = struct.field(pytree_node=False, default="sphere")
    prior_var: float = 1.0
    context_pool: int | None = struct.field(pytree_node=False, default=None)
    instance_seed: int | None = struct.field(pytree_node=False, default=None)

    def validate(self) -> None:
        super().validate()
        check_choice(self, "theta_prior", THETA_PRIORS)
        check_choice(self, "context_prior", CONTEXT_PRIORS)
        check_positive(self, "prior_var")
        if self.context_pool is not None:
            check_positive(self, "context_pool", integer=True)

    def spec(self) -> Spec:
        return Spec(dim=self.dim, num_arms=self.num_arms, action_kind="index")

    def assumptions(self) -> Assumptions:
        """Noise ``noise_std``; each theta*_a as drawn (see :func:`theta_assumptions`)."""
        return theta_assumptions(self.theta_prior, self.noise_std, self.prior_var, self.dim)

    def init(self, key: jax.Array) -> DisjointLinearEnvState:
        if self.instance_seed is not None:
            key = jax.random.key(self.instance_seed)
        key_theta, key_pool = jax.random.split(key)
        theta = draw_vectors(key_theta, (self.num_arms, self.dim), self.theta_prior,
                             jnp.sqrt(self.prior_var))
        pool = None
        if self.context_pool is not None:
            pool = self._draw_contexts(key_pool, (self.context_pool, self.dim))
        return DisjointLinearEnvState(theta=theta, pool=pool)

    def _draw_contexts(self, key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
        return draw_vectors(key, shape, self.context_prior, 1.0 / jnp.sqrt(self.dim))

    def observe(self, key: jax.Array, env_state: DisjointLinearEnvState,
                t: jax.Array) -> SharedContext:
        if self.context_pool is None:
            x = self._draw_contexts(key, (self.dim,))
        else:
            x = env_state.pool[jax.random.randint(key, (), 0, self.context_pool)]
        return shared_context(x, self.num_arms)

    def mean_rewards(self, env_state: DisjointLinearEnvState, context: Context) -> jax.Array:
        """``(K,)`` the expected rewards ``x_{t,a}^T theta*_a``."""
        return jnp.sum(context.arms * env_state.theta, axis=-1)

    def feedback(self, key: jax.Array, env_state: DisjointLinearEnvState, context: Context,
                 action: jax.Array) -> Feedback:
        return finite_arm_feedback(key, self.mean_rewards(env_state, context), action,
                                   noise_std=self.noise_std)


@register_env
class DisjointClassificationEnv(ClassificationEnv):
    """Any (X, y) table as a K-armed bandit with a shared context (the supervised-to-bandit
    conversion of Dudik et al. 2011 and OBP's ``MultiClassToBanditReduction``, online).

    Round t shows a row ``(x, y)``; every arm sees ``x`` (:class:`SharedRowContext`, ``arms`` the
    row repeated, ``dim = d``); ``reward = 1[a = y] + N(0, noise_std^2)`` and the exact regret is
    ``1 - 1[a = y]``. Rows, pools, normalisations and data sets are those of
    ``classification`` (:class:`~jaxbandits.envs.ClassificationEnv`), whose block features
    ``e_a (x) x`` are the same model in R^{K d}.

    ``jaxbandits run --env disjoint-classification`` plays T = 1,000 rounds of 256 runs by
    default: on the bundled digits (d = 64, K = 10, a per-arm model of 64 x 64 per arm) the
    four disjoint agents and ``random`` then take about a minute on 2 CPU cores, compile
    included, and every agent ends well below ``random``'s regret (LinUCB and epsilon-greedy at
    about half of it; the sampling agents, which explore 64 directions per arm, at 80-90%). The
    usual scale of supervised-to-bandit experiments, T = 10^4 and more, is ``--horizon 10000``.

    Example::

        env = jb.envs.DisjointClassificationEnv.from_arrays(X, y)      # your own table
        env = jb.make_env("disjoint-classification", dataset="digits", image_size=4)
    """

    name = "disjoint-classification"
    description = "any (X, y) table as a bandit: the row shared by all arms, reward 1[a = y]"
    paper = "Li et al. 2010 (disjoint model); Dudik et al. 2011 (supervised-to-bandit)"
    agent_families = ("baseline", "disjoint")
    default_horizon = 1_000  # about a minute for `jaxbandits run` on 2 CPU cores (docstring)
    default_runs = 256

    @classmethod
    def from_arrays(cls, features: Any, labels: Any, *, num_classes: int | None = None,
                    normalize: str = "none", name: str = "custom",
                    **fields: Any) -> DisjointClassificationEnv:
        """The environment of a table: ``features`` ``(N, d)``, ``labels`` ``(N,)`` in
        ``[0, K)`` (:func:`~jaxbandits.data.make_table`), other ``fields`` as given
        (``pool_size=None`` and ``sampling="sequential"`` walk all rows in a random order)."""
        table = make_table(features, labels, name=name, num_classes=num_classes,
                           normalize=normalize)
        env = cls(data=table, **fields)
        env.validate()
        return env

    def spec(self) -> Spec:
        meta = self.data.meta
        return Spec(dim=meta.dim, num_arms=meta.num_classes, action_kind="index")

    def observe(self, key: jax.Array, env_state, t: jax.Array) -> SharedRowContext:
        context = super().observe(key, env_state, t)
        x = self.row_features(env_state, context.row)
        num_arms = self.data.meta.num_classes
        return SharedRowContext(arms=jnp.broadcast_to(x, (num_arms, x.shape[-1])), row=context.row,
                                shared=x)
