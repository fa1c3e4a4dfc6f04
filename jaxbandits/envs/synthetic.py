"""The synthetic logistic bandits of the neural logistic bandit paper (Bae & Lee 2025, Sec. 7, App.
J).

Rewards are ``r ~ Bernoulli(mu(h(x)))`` with ``mu = sigmoid`` and one of six latent functions,
``theta`` ``(d,)`` and ``Theta`` ``(d, d)`` with i.i.d. ``Unif(-1, 1)`` entries drawn per run:

====  ========================  ==========================================
id    ``h(x)``                  where in the paper
====  ========================  ==========================================
h1    ``0.2 (x^T theta)^4``     Fig. 1a, 3a-c
h2    ``20 cos(x^T theta)``     Fig. 1b, 3d-f
h3    ``5 x^T Theta x``         Fig. 1c, 3g-i
h4    ``10 (x^T theta)^2``      Fig. 4a, 6a-c (from Zhou et al. 2020)
h5    ``x^T Theta^T Theta x``   Fig. 4b, 6d-f
h6    ``cos(3 x^T theta)``      Fig. 4c, 6g-i
====  ========================  ==========================================

**Feature pool** (App. A): every run draws a pool of ``pool_size`` vectors (2500 in Figs. 1, 2, 4,
5; 10 / 50 / 10000 for the low / mid / high effective dimension of Figs. 3 and 6), i.i.d.
``Unif(-1, 1)^d`` (``feature_dist="uniform"``, the default: the paper rescales real data to
[-1, 1] "for consistency with the synthetic environment") or uniform on the unit sphere
(``"sphere"``); round t offers ``num_arms`` distinct pool vectors drawn uniformly (our reading). The
feedback's regret is the exact pseudo-regret ``max_k mu(h(x_k)) - mu(h(x_a))`` over the offered
arms. Defaults: ``d = 20``, ``K = 5``, pool 2500.

Sanity (Bae & Lee 2025, Sec. 7, App. J, T = 2000, uniform features, pool 2500): uniform random play
has regret about 486, 574, 900, 176, 0, 374 on h1-h6. h5 is degenerate under either feature
distribution (``||Theta x||^2`` is large, so every arm has ``mu ~ 1``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.core import (
    Assumptions,
    Env,
    Feedback,
    Spec,
    check_choice,
    check_positive,
    float_dtype,
)
from jaxbandits.envs.base import VaryingContext, finite_arm_feedback, pool_context
from jaxbandits.envs.linear import draw_vectors
from jaxbandits.registry import register_env

__all__ = ["FEATURE_DISTS", "FUNCTIONS", "NeuralLogSyntheticEnv", "SyntheticState", "latent_reward"]

FUNCTIONS: tuple[str, ...] = ("h1", "h2", "h3", "h4", "h5", "h6")
FEATURE_DISTS: tuple[str, ...] = ("uniform", "sphere")


def latent_reward(function: str, theta: jax.Array, matrix: jax.Array, x: jax.Array) -> jax.Array:
    """``h(x)`` of ``function`` (``"h1"`` ... ``"h6"``) for ``x`` ``(..., d)``, with ``theta``
    ``(d,)`` and ``Theta`` = ``matrix`` ``(d, d)``; returns ``(...)``."""
    if function in ("h3", "h5"):
        if function == "h3":
            return 5.0 * jnp.einsum("...i,ij,...j->...", x, matrix, x)
        projected = x @ matrix.T  # Theta x
        return jnp.sum(projected * projected, axis=-1)
    u = x @ theta
    return {
        "h1": lambda: 0.2 * u**4,
        "h2": lambda: 20.0 * jnp.cos(u),
        "h4": lambda: 10.0 * u**2,
        "h6": lambda: jnp.cos(3.0 * u),
    }[function]()


class SyntheticState(struct.PyTreeNode):
    """One instance of :class:`NeuralLogSyntheticEnv`.

    Attributes:
      theta: ``(d,)`` theta.  matrix: ``(d, d)`` Theta.
      pool: ``(N, d)`` the feature pool.  means: ``(N,)`` ``mu(h(pool))``.
    """

    theta: jax.Array
    matrix: jax.Array
    pool: jax.Array
    means: jax.Array


@register_env
class NeuralLogSyntheticEnv(Env):
    """Bae & Lee 2025's synthetic logistic bandit (Sec. 7, App. J): K of a per-run pool of vectors
    per round, ``reward ~ Bernoulli(sigmoid(h(x_a)))`` for one of the six latent functions.

    Attributes:
      dim: d.  num_arms: K.
      function: ``"h1"`` ... ``"h6"`` (static; see the module docstring).
      pool_size: N, the pool's size (static).
      feature_dist: ``"uniform"`` (``Unif(-1, 1)^d``) or ``"sphere"`` (static).
      instance_seed: if set, every run shares the instance (theta, Theta, pool) of this seed.

    Example::

        env = jb.make_env("neurallog-synthetic", function="h3")
        env = jb.make_env("neurallog-synthetic", function="h4", pool_size=10)   # low d~
    """

    name = "neurallog-synthetic"
    description = "Bernoulli(sigmoid(h(x))), h one of six nonlinear functions, K pool arms a round"
    paper = "Bae & Lee 2025, Sec. 7, App. J"
    agent_families = ("baseline", "glm", "neural", "neural-logistic")

    def assumptions(self) -> Assumptions:
        """Bernoulli rewards: noise scale 1/2 (1/2-sub-Gaussian); no linear parameter."""
        return Assumptions(noise_std=0.5)

    dim: int = struct.field(pytree_node=False, default=20)
    num_arms: int = struct.field(pytree_node=False, default=5)
    function: str = struct.field(pytree_node=False, default="h1")
    pool_size: int = struct.field(pytree_node=False, default=2500)
    feature_dist: str = struct.field(pytree_node=False, default="uniform")
    instance_seed: int | None = struct.field(pytree_node=False, default=None)

    def validate(self) -> None:
        super().validate()
        check_choice(self, "function", FUNCTIONS)
        check_choice(self, "feature_dist", FEATURE_DISTS)
        check_positive(self, "pool_size", integer=True)
        if self.num_arms > self.pool_size:
            raise ValueError(f"{self.name}: num_arms must be at most pool_size "
                             f"({self.pool_size}), got {self.num_arms}")

    def spec(self) -> Spec:
        return Spec(dim=self.dim, num_arms=self.num_arms, action_kind="index")

    def init(self, key: jax.Array) -> SyntheticState:
        if self.instance_seed is not None:
            key = jax.random.key(self.instance_seed)
        key_theta, key_matrix, key_pool = jax.random.split(key, 3)
        dtype = float_dtype()
        theta = jax.random.uniform(key_theta, (self.dim,), dtype, -1.0, 1.0)
        matrix = jax.random.uniform(key_matrix, (self.dim, self.dim), dtype, -1.0, 1.0)
        kind = "sphere" if self.feature_dist == "sphere" else "cube"  # cube: Unif(-1, 1)^d
        pool = draw_vectors(key_pool, (self.pool_size, self.dim), kind, 1.0)
        means = jax.nn.sigmoid(latent_reward(self.function, theta, matrix, pool))
        return SyntheticState(theta=theta, matrix=matrix, pool=pool, means=means)

    def observe(self, key: jax.Array, env_state: SyntheticState, t: jax.Array) -> VaryingContext:
        return pool_context(key, env_state.pool, self.num_arms)

    def feedback(
        self, key: jax.Array, env_state: SyntheticState, context: VaryingContext, action: jax.Array
    ) -> Feedback:
        return finite_arm_feedback(key, env_state.means[context.arm_ids], action, "bernoulli")
