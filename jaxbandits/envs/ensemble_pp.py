"""The linear settings of the Ensemble++ paper (Li et al. 2024, Sec. 5), built on
:class:`LinearEnv`.

* ``russo``: Russo & Van Roy's finite-action linear bandit as Ensemble++ runs it (Li et al. 2024,
  Sec. 5.1, Figs. 2, 6, App. F.1): one
  fixed set of K arms per run with entries uniform in ``[-1/sqrt 5, 1/sqrt 5]``,
  ``theta* ~ N(0, 10 I)`` redrawn every run, ``N(0, 1)`` noise; ``d = 50``, ``K = 10,000``.
* ``freq-russo``: the same with one instance shared by every run (a frequentist setting).
* ``linear-varying``: the "varying" context: each round offers K = 50 arms drawn (as indices,
  without replacement) from a fixed pool of 1,000 per run.
"""

from __future__ import annotations

import math

import jax
from flax import struct

from jaxbandits.core import Feedback, check_positive
from jaxbandits.envs.base import VaryingContext, finite_arm_feedback, pool_context
from jaxbandits.envs.linear import LinearEnv, LinearEnvState, draw_vectors
from jaxbandits.registry import register_env

__all__ = ["FreqRussoEnv", "LinearVaryingEnv", "RussoEnv", "VaryingContext"]


@register_env
class RussoEnv(LinearEnv):
    """Russo & Van Roy's linear bandit as in Ensemble++ (Li et al. 2024, Sec. 5.1;
    authors' ``env/linear.py``).

    ``reward = <x_a, theta*> + N(0, noise_std^2)`` with ``theta* ~ N(0, prior_var I)`` and a fixed
    arm set with i.i.d. entries uniform in ``[-cube_halfwidth, cube_halfwidth]``. The main text
    says half-width ``1/sqrt(d)``; the appendix and the code use ``1/sqrt(5)``, the
    default here. All fields of :class:`LinearEnv` apply.

    Example::

        env = jb.make_env("russo", dim=10, num_arms=100)
    """

    name = "russo"
    description = "Russo-Van Roy finite-arm linear bandit (cube arms, theta* ~ N(0, 10 I))"
    paper = "Li et al. 2024, Sec. 5.1, App. F.1 (after Russo & Van Roy 2018)"

    dim: int = struct.field(pytree_node=False, default=50)
    num_arms: int = struct.field(pytree_node=False, default=10_000)
    noise_std: float = 1.0
    theta_prior: str = struct.field(pytree_node=False, default="gaussian")
    arm_prior: str = struct.field(pytree_node=False, default="cube")


@register_env
class FreqRussoEnv(RussoEnv):
    """``russo`` with one instance (theta* and arms) drawn from ``instance_seed`` for every run.

    The default seed 2022 is the one the authors' code fixes its frequentist tasks with
    (``freq_task=True``); only the reward noise and the agent vary across runs.
    """

    name = "freq-russo"
    description = "russo with one fixed instance for all runs (frequentist)"
    paper = "the authors' code of Li et al. 2024 (freq_task)"

    instance_seed: int | None = struct.field(pytree_node=False, default=2022)


@register_env
class LinearVaryingEnv(LinearEnv):
    """Linear bandit with a varying decision set: K of a fixed pool of ``pool_size`` arms per round.

    Each run draws theta* and a pool of ``pool_size`` arms (as :class:`LinearEnv` draws arms);
    round t offers ``num_arms`` distinct pool arms chosen uniformly at random, as indices (the
    authors' pool scheme of Li et al. 2024, Sec. 5.2: 50 of 1,000 unit-sphere arms). Regret is
    measured against the best offered arm. Defaults combine that scheme with the Ensemble++ linear
    prior and
    noise: ``theta* ~ N(0, 10 I)``, ``N(0, 1)`` noise, ``d = 50`` (our choice: the paper gives no
    linear varying-context experiment).

    Attributes (besides :class:`LinearEnv`'s; ``fresh_arms`` must stay False):
      pool_size: the number of pooled arms (static).
    """

    name = "linear-varying"
    description = "linear bandit offering 50 of a fixed pool of 1,000 arms each round"
    paper = "Li et al. 2024 (the pool scheme of Sec. 5.2 on the linear bandit of Sec. 5.1)"

    dim: int = struct.field(pytree_node=False, default=50)
    noise_std: float = 1.0
    theta_prior: str = struct.field(pytree_node=False, default="gaussian")
    pool_size: int = struct.field(pytree_node=False, default=1000)

    def validate(self) -> None:
        super().validate()
        check_positive(self, "pool_size", integer=True)
        if self.num_arms > self.pool_size:
            raise ValueError(f"{self.name}: num_arms must be at most pool_size "
                             f"({self.pool_size}), got {self.num_arms}")
        if self.fresh_arms:
            raise ValueError(f"{self.name}: fresh_arms must be False (the pool is fixed)")

    def init(self, key: jax.Array) -> LinearEnvState:
        if self.instance_seed is not None:
            key = jax.random.key(self.instance_seed)
        key_theta, key_pool = jax.random.split(key)
        theta = self._draw_theta(key_theta)
        scale = self.cube_halfwidth if self.arm_prior == "cube" else 1.0 / math.sqrt(self.dim)
        pool = draw_vectors(key_pool, (self.pool_size, self.dim), self.arm_prior, scale)
        return LinearEnvState(theta=theta, arms=pool, means=pool @ theta)

    def observe(self, key: jax.Array, env_state: LinearEnvState, t: jax.Array) -> VaryingContext:
        return pool_context(key, env_state.arms, self.num_arms)

    def feedback(
        self, key: jax.Array, env_state: LinearEnvState, context: VaryingContext, action: jax.Array
    ) -> Feedback:
        return finite_arm_feedback(key, env_state.means[context.arm_ids], action,
                                   noise_std=self.noise_std)
