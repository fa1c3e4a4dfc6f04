"""Linear bandits: a finite arm set (fixed or fresh every round) and the unit sphere.

Mean reward ``f*(x) = <x, theta*>``, observed with ``N(0, noise_std^2)`` noise. Instance draws:

* ``"sphere"``: normalised Gaussian vectors, ``g / ||g||`` with ``g ~ N(0, I_d)`` (the anytime
  ensemble-sampling paper, Sun et al. 2025, Sec. 7.1: unit theta* and unit arms).
* ``"gaussian"``: ``theta* ~ N(0, prior_var * I)`` (Ensemble++, Li et al. 2024, Sec. 5.1:
  ``prior_var = 10``), and
  for arms ``N(0, I / d)``.
* ``"cube"`` (arms only): entries i.i.d. uniform in ``[-cube_halfwidth, cube_halfwidth]``
  (Russo & Van Roy's setting as Ensemble++ runs it, with half-width ``1 / sqrt(5)``).
"""

from __future__ import annotations

import math

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
    float_dtype,
)
from jaxbandits.envs.base import finite_arm_feedback
from jaxbandits.registry import register_env

__all__ = [
    "LinearEnv",
    "LinearEnvState",
    "LinearSphereEnv",
    "draw_vectors",
    "theta_assumptions",
]

THETA_PRIORS = ("sphere", "gaussian")
ARM_PRIORS = ("sphere", "gaussian", "cube")


def theta_assumptions(theta_prior: str, noise_std, prior_var, dim: int,
                      scale: float = 1.0) -> Assumptions:
    """The assumptions of a linear model with theta* drawn as ``theta_prior`` (times ``scale``)
    and reward noise ``noise_std``: a Gaussian prior as drawn, or for the sphere the isotropic
    Gaussian with its second moment (``scale^2 / d``) and the exact norm ``scale``."""
    if theta_prior == "gaussian":
        return Assumptions.gaussian_prior(float(noise_std), float(prior_var) * scale**2, dim)
    return Assumptions.sphere_prior(float(noise_std), scale, dim)


def draw_vectors(
    key: jax.Array, shape: tuple[int, ...], kind: str, scale: jax.Array | float
) -> jax.Array:
    """Vectors of shape ``(..., d)`` drawn as ``kind`` (``"sphere"``, ``"gaussian"``, ``"cube"``).

    ``scale`` is the standard deviation for ``"gaussian"`` and the half-width for ``"cube"``.
    """
    dtype = float_dtype()
    if kind == "cube":
        return jax.random.uniform(key, shape, dtype, -1.0, 1.0) * scale
    g = jax.random.normal(key, shape, dtype)
    if kind == "sphere":
        return g / jnp.linalg.norm(g, axis=-1, keepdims=True)
    return g * scale


class LinearEnvState(struct.PyTreeNode):
    """One linear problem instance.

    Attributes:
      theta: ``(d,)`` the true parameter theta*.
      arms: ``(K, d)`` the fixed arm set (unused with ``fresh_arms``).
      means: ``(K,)`` ``arms @ theta``, precomputed for a fixed arm set.
    """

    theta: jax.Array
    arms: jax.Array
    means: jax.Array


@register_env
class LinearEnv(Env):
    """K-armed linear bandit: ``reward = <x_a, theta*> + N(0, noise_std^2)``.

    Defaults are the linear bandit of the anytime ensemble-sampling paper (Sun et al. 2025, Sec.
    7.1): ``d = 20``, ``K = 50``, ``noise_std = 0.5``, unit-norm theta* and arms, one fixed arm set
    per run.

    Attributes:
      dim: d.  num_arms: K.  noise_std: reward noise standard deviation.
      theta_prior: ``"sphere"`` (unit norm) or ``"gaussian"`` (``N(0, prior_var I)``).
      arm_prior: ``"sphere"``, ``"gaussian"`` (``N(0, I/d)``) or ``"cube"``.
      fresh_arms: draw a new arm set every round instead of one per run.
      prior_var: variance of the Gaussian theta* prior.
      cube_halfwidth: half-width of the ``"cube"`` arm distribution.
      instance_seed: if set, every run shares the one instance drawn from this seed (a
        frequentist setting); otherwise each run draws its own instance.

    Example::

        env = jb.make_env("linear", dim=10, num_arms=100)
    """

    name = "linear"
    description = "finite-arm linear bandit (fixed or fresh arms), Gaussian noise"
    paper = "Sun et al. 2025, Sec. 7.1; Li et al. 2024, Sec. 5.1"

    dim: int = struct.field(pytree_node=False, default=20)
    num_arms: int = struct.field(pytree_node=False, default=50)
    noise_std: float = 0.5
    theta_prior: str = struct.field(pytree_node=False, default="sphere")
    arm_prior: str = struct.field(pytree_node=False, default="sphere")
    fresh_arms: bool = struct.field(pytree_node=False, default=False)
    prior_var: float = 10.0
    cube_halfwidth: float = 1.0 / math.sqrt(5.0)
    instance_seed: int | None = struct.field(pytree_node=False, default=None)

    def validate(self) -> None:
        super().validate()
        check_choice(self, "theta_prior", THETA_PRIORS)
        check_choice(self, "arm_prior", ARM_PRIORS)
        check_positive(self, "prior_var")
        check_positive(self, "cube_halfwidth")

    def spec(self) -> Spec:
        # One arm set per run, unless arms are fresh every round. A subclass that overrides
        # observe may show other arms (linear-varying), so it does not inherit the promise.
        fixed = not self.fresh_arms and type(self).observe is LinearEnv.observe
        return Spec(dim=self.dim, num_arms=self.num_arms, action_kind="index", fixed_arms=fixed)

    def assumptions(self) -> Assumptions:
        """Noise ``noise_std``; theta* ~ N(0, prior_var I), or uniform on the unit sphere
        (prior variance 1/d per coordinate, ``||theta*|| = 1``)."""
        return theta_assumptions(self.theta_prior, self.noise_std, self.prior_var, self.dim)

    def _draw_theta(self, key: jax.Array) -> jax.Array:
        return draw_vectors(key, (self.dim,), self.theta_prior, jnp.sqrt(self.prior_var))

    def _draw_arms(self, key: jax.Array) -> jax.Array:
        scale = self.cube_halfwidth if self.arm_prior == "cube" else 1.0 / math.sqrt(self.dim)
        return draw_vectors(key, (self.num_arms, self.dim), self.arm_prior, scale)

    def init(self, key: jax.Array) -> LinearEnvState:
        if self.instance_seed is not None:
            key = jax.random.key(self.instance_seed)
        key_theta, key_arms = jax.random.split(key)
        theta = self._draw_theta(key_theta)
        arms = self._draw_arms(key_arms)
        return LinearEnvState(theta=theta, arms=arms, means=arms @ theta)

    def observe(self, key: jax.Array, env_state: LinearEnvState, t: jax.Array) -> Context:
        if self.fresh_arms:
            return Context(arms=self._draw_arms(key))
        return Context(arms=env_state.arms)

    def mean_rewards(self, env_state: LinearEnvState, context: Context) -> jax.Array:
        """``(K,)`` the expected reward ``<x_k, theta*>`` of every arm this round."""
        return context.arms @ env_state.theta if self.fresh_arms else env_state.means

    def feedback(
        self, key: jax.Array, env_state: LinearEnvState, context: Context, action: jax.Array
    ) -> Feedback:
        return finite_arm_feedback(key, self.mean_rewards(env_state, context), action,
                                   noise_std=self.noise_std)


@register_env
class LinearSphereEnv(Env):
    """Linear bandit on the unit sphere (a compact action set): the agent returns a vector.

    ``reward = <x, theta*> + N(0, noise_std^2)`` and regret ``||theta*|| - <x, theta*>``. An
    action outside the unit ball is projected onto it (``x / max(1, ||x||)``), so regret is never
    negative.
    """

    name = "linear-sphere"
    description = "linear bandit on the unit sphere (vector actions)"
    paper = "Li et al. 2024, App. F.1 (compact action set)"

    dim: int = struct.field(pytree_node=False, default=20)
    noise_std: float = 0.5
    theta_prior: str = struct.field(pytree_node=False, default="sphere")
    prior_var: float = 10.0

    def validate(self) -> None:
        super().validate()
        check_choice(self, "theta_prior", THETA_PRIORS)
        check_positive(self, "prior_var")

    def spec(self) -> Spec:
        return Spec(dim=self.dim, num_arms=0, action_kind="vector")

    def assumptions(self) -> Assumptions:
        return theta_assumptions(self.theta_prior, self.noise_std, self.prior_var, self.dim)

    def init(self, key: jax.Array) -> jax.Array:
        return draw_vectors(key, (self.dim,), self.theta_prior, jnp.sqrt(self.prior_var))

    def observe(self, key: jax.Array, env_state: jax.Array, t: jax.Array) -> Context:
        return Context(arms=None)

    def feedback(
        self, key: jax.Array, env_state: jax.Array, context: Context, action: jax.Array
    ) -> Feedback:
        theta = env_state
        x = action / jnp.maximum(1.0, jnp.linalg.norm(action))
        mean = x @ theta
        noise = self.noise_std * jax.random.normal(key, (), mean.dtype)
        return Feedback(reward=mean + noise, regret=jnp.linalg.norm(theta) - mean)
