"""Nonlinear K-armed bandits: the distance and quadratic rewards of seed-000 and a random network.

Mean reward ``h(x)`` for each arm, observed with ``N(0, noise_std^2)`` noise, one fixed arm set
per run by default (seed-000 section 3.1; ``fresh_arms`` draws a new one every round):

* ``distance`` (E-DIST): ``h(x) = -||x - theta*||_2`` with unit theta*. On unit-norm arms this
  is a decreasing function of ``<x, theta*>`` (the best arm is the linear one);
  ``arm_prior="ball"`` (uniform in the unit ball) makes it genuinely nonlinear (section 3.2).
* ``quadratic`` (E-QUAD): ``h(x) = scale * x^T A A^T x = scale ||A^T x||^2`` with ``A`` ``(d, d)``
  i.i.d. ``N(0, 1)``, not normalised, ``scale = 0.01`` (for unit arms at d = 20, K = 50 the mean
  over arms is about 0.20 and the best about 0.37).
* ``random-mlp``: ``h(x) = scale * f(x; theta_env)`` for a random ReLU network
  (:class:`~jaxbandits.nets.Network`, Gaussian init by default; for unit arms ``f`` has about
  unit variance across arms).

Arms are drawn by :func:`~jaxbandits.envs.linear.draw_vectors` (``"sphere"``: normalised
Gaussian vectors, the default; ``"gaussian"``; ``"cube"``) or uniformly in the unit ball
(``"ball"``). Every run draws its own instance, or shares the one drawn from ``instance_seed``.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.core import (
    Context,
    Env,
    Feedback,
    Spec,
    check_choice,
    check_positive,
    float_dtype,
)
from jaxbandits.envs.linear import draw_vectors
from jaxbandits.nets import INITS, Network
from jaxbandits.registry import register_env

__all__ = [
    "DistanceEnv",
    "NonlinearEnv",
    "NonlinearEnvState",
    "QuadraticEnv",
    "RandomMLPEnv",
]

ARM_PRIORS = ("sphere", "ball", "gaussian", "cube")


class NonlinearEnvState(struct.PyTreeNode):
    """One nonlinear problem instance.

    Attributes:
      params: the reward function's parameters (theta* ``(d,)``, ``A`` ``(d, d)`` or the
        network's parameters).
      arms: ``(K, d)`` the fixed arm set (unused with ``fresh_arms``).
      means: ``(K,)`` ``h(arms)``, precomputed for a fixed arm set.
    """

    params: object
    arms: jax.Array
    means: jax.Array


class NonlinearEnv(Env):
    """Shared plumbing of the nonlinear environments; subclasses write ``draw_params`` and
    ``mean_reward``.

    Attributes:
      dim: d.  num_arms: K.  noise_std: reward noise standard deviation.
      arm_prior: ``"sphere"`` (unit norm), ``"ball"`` (uniform in the unit ball), ``"gaussian"``
        (``N(0, I/d)``) or ``"cube"`` (uniform in ``[-cube_halfwidth, cube_halfwidth]^d``).
      fresh_arms: draw a new arm set every round instead of one per run.
      cube_halfwidth: half-width of the ``"cube"`` arms.
      instance_seed: if set, every run shares the instance drawn from this seed.
    """

    agent_families = ("baseline", "linear", "neural")

    dim: int = struct.field(pytree_node=False, default=20)
    num_arms: int = struct.field(pytree_node=False, default=50)
    noise_std: float = 0.5
    arm_prior: str = struct.field(pytree_node=False, default="sphere")
    fresh_arms: bool = struct.field(pytree_node=False, default=False)
    cube_halfwidth: float = 1.0 / math.sqrt(5.0)
    instance_seed: int | None = struct.field(pytree_node=False, default=None)

    def validate(self) -> None:
        super().validate()
        check_choice(self, "arm_prior", ARM_PRIORS)
        check_positive(self, "cube_halfwidth")

    def draw_params(self, key: jax.Array):
        """The reward function's parameters for one instance."""
        raise NotImplementedError

    def mean_reward(self, params, arms: jax.Array) -> jax.Array:
        """``h(x_k)`` ``(K,)`` for arms ``(K, d)``."""
        raise NotImplementedError

    def spec(self) -> Spec:
        # One arm set per run, unless arms are fresh every round (see LinearEnv.spec).
        fixed = not self.fresh_arms and type(self).observe is NonlinearEnv.observe
        return Spec(dim=self.dim, num_arms=self.num_arms, action_kind="index", fixed_arms=fixed)

    def _draw_arms(self, key: jax.Array) -> jax.Array:
        shape = (self.num_arms, self.dim)
        if self.arm_prior == "ball":
            key_dir, key_radius = jax.random.split(key)
            radius = jax.random.uniform(key_radius, (self.num_arms, 1), float_dtype())
            return draw_vectors(key_dir, shape, "sphere", 1.0) * radius ** (1.0 / self.dim)
        scale = self.cube_halfwidth if self.arm_prior == "cube" else 1.0 / math.sqrt(self.dim)
        return draw_vectors(key, shape, self.arm_prior, scale)

    def init(self, key: jax.Array) -> NonlinearEnvState:
        if self.instance_seed is not None:
            key = jax.random.key(self.instance_seed)
        key_params, key_arms = jax.random.split(key)
        params = self.draw_params(key_params)
        arms = self._draw_arms(key_arms)
        return NonlinearEnvState(params=params, arms=arms, means=self.mean_reward(params, arms))

    def observe(self, key: jax.Array, env_state: NonlinearEnvState, t: jax.Array) -> Context:
        if self.fresh_arms:
            return Context(arms=self._draw_arms(key))
        return Context(arms=env_state.arms)

    def feedback(
        self, key: jax.Array, env_state: NonlinearEnvState, context: Context, action: jax.Array
    ) -> Feedback:
        if self.fresh_arms:
            means = self.mean_reward(env_state.params, context.arms)
        else:
            means = env_state.means
        mean = means[action]
        noise = self.noise_std * jax.random.normal(key, (), mean.dtype)
        return Feedback(reward=mean + noise, regret=jnp.max(means) - mean)


@register_env
class DistanceEnv(NonlinearEnv):
    """E-DIST: ``reward = -||x_a - theta*||_2 + N(0, noise_std^2)``, theta* uniform on the unit
    sphere (seed-000 sections 3.1-3.2; defaults d = 20, K = 50, noise 0.5, unit arms).

    Example::

        env = jb.make_env("distance", arm_prior="ball")
    """

    name = "distance"
    description = "negative distance to a unit theta* (E-DIST), fixed arms, Gaussian noise"
    paper = "seed-000 (E-DIST)"

    def draw_params(self, key: jax.Array) -> jax.Array:
        return draw_vectors(key, (self.dim,), "sphere", 1.0)

    def mean_reward(self, params: jax.Array, arms: jax.Array) -> jax.Array:
        return -jnp.linalg.norm(arms - params, axis=-1)


@register_env
class QuadraticEnv(NonlinearEnv):
    """E-QUAD: ``reward = scale * ||A^T x_a||^2 + N(0, noise_std^2)`` with ``A`` ``(d, d)``
    i.i.d. ``N(0, 1)`` (seed-000 sections 3.1-3.2; ``scale = 0.01``, d = 20, K = 50, noise 0.5,
    unit arms).

    Attributes (beyond :class:`NonlinearEnv`'s): scale: the factor of ``x^T A A^T x``.

    Example::

        env = jb.make_env("quadratic", dim=5, num_arms=10, scale=0.1)
    """

    name = "quadratic"
    description = "quadratic reward 0.01 x^T A A^T x (E-QUAD), fixed arms, Gaussian noise"
    paper = "seed-000 (E-QUAD)"

    scale: float = 0.01

    def validate(self) -> None:
        super().validate()
        check_positive(self, "scale")

    def draw_params(self, key: jax.Array) -> jax.Array:
        return jax.random.normal(key, (self.dim, self.dim), float_dtype())

    def mean_reward(self, params: jax.Array, arms: jax.Array) -> jax.Array:
        projected = arms @ params
        return self.scale * jnp.sum(projected * projected, axis=-1)


@register_env
class RandomMLPEnv(NonlinearEnv):
    """A random ReLU network as the mean reward: ``reward = scale * f(x_a; theta_env) +
    N(0, noise_std^2)``, with ``theta_env`` drawn per instance by ``net_init``.

    Attributes (beyond :class:`NonlinearEnv`'s): scale: the reward's factor.  width, depth,
    net_init: the network's (static; see :class:`~jaxbandits.nets.Network`).

    Example::

        env = jb.make_env("random-mlp", width=32, depth=2)
    """

    name = "random-mlp"
    description = "mean reward from a random ReLU network, fixed arms, Gaussian noise"
    paper = "neural-bandit test bed (seed-000/002 network)"

    scale: float = 1.0
    width: int = struct.field(pytree_node=False, default=32)
    depth: int = struct.field(pytree_node=False, default=2)
    net_init: str = struct.field(pytree_node=False, default="gaussian")

    def validate(self) -> None:
        super().validate()
        check_positive(self, "scale")
        check_positive(self, "width", integer=True)
        check_positive(self, "depth", integer=True)
        check_choice(self, "net_init", INITS)
        if self.depth < 2:
            raise ValueError(f"{self.name}: depth must be >= 2, got {self.depth!r}")
        if self.net_init == "symmetric" and self.width % 2:
            raise ValueError(f"{self.name}: width must be even for the symmetric init, got "
                             f"{self.width!r}")

    @property
    def network(self) -> Network:
        """The reward network."""
        return Network(in_features=self.dim, width=self.width, depth=self.depth,
                       init_scheme=self.net_init)

    def draw_params(self, key: jax.Array):
        return self.network.init(key)

    def mean_reward(self, params, arms: jax.Array) -> jax.Array:
        return self.scale * self.network.apply(params, arms)
