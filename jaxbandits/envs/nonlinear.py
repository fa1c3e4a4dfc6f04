"""Nonlinear K-armed bandits: the distance and quadratic rewards of Sun et al. 2025 and a random
network.

Mean reward ``h(x)`` for each arm, observed with ``N(0, noise_std^2)`` noise, one fixed arm set
per run by default (Sun et al. 2025, Sec. 7.1; ``fresh_arms`` draws a new one every round):

* ``distance`` (Sun et al. 2025, Sec. 7.1): ``h(x) = -||x - theta*||_2`` with unit theta*. On
  unit-norm arms this
  is a decreasing function of ``<x, theta*>`` (the best arm is the linear one);
  ``arm_prior="ball"`` (uniform in the unit ball) makes it genuinely nonlinear (the paper does not
  say how arms are drawn).
* ``quadratic`` (Sun et al. 2025, Sec. 7.1): ``h(x) = scale * x^T A A^T x = scale ||A^T x||^2`` with
  ``A`` ``(d, d)``
  i.i.d. ``N(0, 1)``, not normalised, ``scale = 0.01`` (for unit arms at d = 20, K = 50 the mean
  over arms is about 0.20 and the best about 0.37).
* ``random-mlp``: ``h(x) = scale * f(x; theta_env)`` for a random ReLU network
  (:class:`~jaxbandits.nets.Network`, Gaussian init by default; for unit arms ``f`` has about
  unit variance across arms).

Arms are drawn by :func:`~jaxbandits.envs.linear.draw_vectors` (``"sphere"``: normalised
Gaussian vectors, the default; ``"gaussian"``; ``"cube"``) or uniformly in the unit ball
(``"ball"``). Every run draws its own instance, or shares the one drawn from ``instance_seed``.

The Ensemble++ paper's nonlinear tasks (Li et al. 2024, Sec. 5.2, Figs. 1, 3, 10, App. F.2, and the
authors' code):

* ``quadratic-pool`` (:class:`QuadraticPoolEnv`): ``h(x) = 0.01 x^T Theta Theta^T x`` with
  ``Theta`` ``(d, d)`` i.i.d. ``N(0, 1)``, d = 100, ``N(0, 0.1^2)`` noise; each round offers
  K = 50 distinct arms of a pool of 1,000 unit vectors.
* ``random-mlp-bernoulli`` (:class:`RandomMLPBernoulliEnv`): the "Neural" task, ``reward ~
  Bernoulli(p(x))`` with ``p(x) = softmax(f(x) / tau)_1`` for a random d-50-50-2 ReLU network
  (Xavier-normal weights, PyTorch-default biases), the same pool scheme; regret in ``p``.
* ``vector-quadratic`` (:class:`VectorQuadraticEnv`): LMC-TS's ``QuadBandit`` (App. F.2), ``h(x) =
  10 (x^T theta)^2`` with unit theta, 50 fresh unit contexts per round, d = 20, ``N(0, 1)`` noise.

The two pool tasks (:class:`PoolNonlinearEnv`) draw the pool, the reward function and the
per-round subsets per run (``instance="per_run"``), or share the authors' instance
(``instance="authors"``, at the authors' sizes): drawn once on the host with NumPy exactly as the
authors' code draws it (:func:`authors_pool_draws`) and held by the environment as the leaf
``shared_instance`` (``instance="authors_recipe"``: the same recipe at other sizes).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxbandits.core import (
    Assumptions,
    Context,
    Env,
    Feedback,
    Spec,
    check_choice,
    check_nonnegative,
    check_positive,
    float_dtype,
)
from jaxbandits.envs.base import finite_arm_feedback, noisy_reward
from jaxbandits.envs.linear import draw_vectors
from jaxbandits.envs.pools import (
    POOL_INSTANCES,
    PoolEnvState,
    PoolNonlinearEnv,
    SharedPoolInstance,
    authors_pool_draws,
)
from jaxbandits.nets import INITS, Network
from jaxbandits.registry import register_env

__all__ = [
    "POOL_INSTANCES",
    "DistanceEnv",
    "NonlinearEnv",
    "NonlinearEnvState",
    "PoolEnvState",
    "PoolNonlinearEnv",
    "QuadraticEnv",
    "QuadraticPoolEnv",
    "RandomMLPBernoulliEnv",
    "RandomMLPEnv",
    "SharedPoolInstance",
    "VectorQuadraticEnv",
    "authors_pool_draws",
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
        return finite_arm_feedback(key, means, action, noise_std=self.noise_std)


@register_env
class DistanceEnv(NonlinearEnv):
    """The distance bandit (Sun et al. 2025, Sec. 7.1): ``reward = -||x_a - theta*||_2 + N(0,
    noise_std^2)``, theta* uniform on the unit sphere (Sun et al. 2025, Sec. 7.1; defaults d = 20, K
    = 50, noise 0.5, unit arms).

    Example::

        env = jb.make_env("distance", arm_prior="ball")
    """

    name = "distance"
    description = "negative distance to a unit theta*, fixed arms, Gaussian noise"
    paper = "Sun et al. 2025, Sec. 7.1"

    def draw_params(self, key: jax.Array) -> jax.Array:
        return draw_vectors(key, (self.dim,), "sphere", 1.0)

    def mean_reward(self, params: jax.Array, arms: jax.Array) -> jax.Array:
        return -jnp.linalg.norm(arms - params, axis=-1)


@register_env
class QuadraticEnv(NonlinearEnv):
    """The quadratic bandit (Sun et al. 2025, Sec. 7.1): ``reward = scale * ||A^T x_a||^2 + N(0,
    noise_std^2)`` with ``A`` ``(d, d)`` i.i.d. ``N(0, 1)`` (Sun et al. 2025, Sec. 7.1; ``scale =
    0.01``, d = 20, K = 50, noise 0.5, unit arms).

    Attributes (beyond :class:`NonlinearEnv`'s): scale: the factor of ``x^T A A^T x``.

    Example::

        env = jb.make_env("quadratic", dim=5, num_arms=10, scale=0.1)
    """

    name = "quadratic"
    description = "quadratic reward 0.01 x^T A A^T x, fixed arms, Gaussian noise"
    paper = "Sun et al. 2025, Sec. 7.1"

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
    paper = "test bed (the network of Sun et al. 2025, Sec. 4.3 and Bae & Lee 2025, Sec. 2)"

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


# ------------------------------------------------------------------------------------------------
# The Ensemble++ paper's nonlinear tasks (Li et al. 2024, Sec. 5.2, App. F.2; the authors' code
# where the paper and the code differ).


@register_env
class QuadraticPoolEnv(PoolNonlinearEnv):
    """Ensemble++'s Quadratic task: ``reward = scale * x_a^T Theta Theta^T x_a + N(0, sigma^2)``.

    ``Theta`` ``(d, d)`` i.i.d. ``N(0, 1)``; ``scale = 0.01``, ``sigma = 0.1`` (the code's
    ``normal(0, eta)``, eta = 0.1; App. F.2's "N(0, 0.1)"), d = 100; each round offers K = 50
    distinct vectors of a pool of 1,000 unit vectors (Li et al. 2024, Sec. 5.2, App. F.2; Figs. 1,
    3, 14). ``instance="authors"`` is the authors' exact instance and subset sequence (their code;
    :func:`authors_pool_draws`). Regret is ``max_k h(x_k) - h(x_a)`` over the offered arms. Fields
    of :class:`PoolNonlinearEnv`, plus:

    Attributes:
      scale: the factor of ``x^T Theta Theta^T x``.  noise_std: sigma.

    Example::

        env = jb.make_env("quadratic-pool", instance="authors")
        env = jb.make_env("quadratic-pool", dim=10, pool_size=100, num_arms=5)
    """

    name = "quadratic-pool"
    task = "quadratic"
    description = "Ensemble++ quadratic 0.01 x^T Theta Theta^T x, 50 of a 1,000-arm pool per round"
    paper = "Li et al. 2024, Sec. 5.2, App. F.2 (Figs. 1, 3, 14)"

    scale: float = 0.01
    noise_std: float = 0.1

    def validate(self) -> None:
        super().validate()
        check_positive(self, "scale")

    def _draw_shared(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pool, theta, subsets = authors_pool_draws(self.authors_seed, self.dim, self.pool_size,
                                                  self.num_arms, self.authors_rounds, True)
        return pool, theta, subsets

    def draw_params(self, key: jax.Array) -> jax.Array:
        return jax.random.normal(key, (self.dim, self.dim), float_dtype())

    def mean_reward(self, params: jax.Array, arms: jax.Array) -> jax.Array:
        projected = arms @ params
        return self.scale * jnp.sum(projected * projected, axis=-1)

    def draw_reward(self, key: jax.Array, mean: jax.Array) -> jax.Array:
        return noisy_reward(key, mean, "gaussian", self.noise_std)


@register_env
class RandomMLPBernoulliEnv(PoolNonlinearEnv):
    """Ensemble++'s Neural task: ``reward ~ Bernoulli(p(x_a))``, ``p(x) = softmax(f(x) / tau)_1``.

    ``f`` is a fixed random ReLU network d-50-50-2 as the authors' ``MLP`` builds it: weights
    Xavier-normal (std ``sqrt(2 / (fan_in + fan_out))``), biases PyTorch's default, uniform in
    ``[-1/sqrt(fan_in), 1/sqrt(fan_in)]``. ``tau = temperature`` (the paper's 0.1 by default;
    the authors' code runs 1.0). Regret is measured in ``p`` over
    the offered arms; no Gaussian noise. The pool scheme is :class:`PoolNonlinearEnv`'s (d = 100, K
    = 50 of P = 1,000 unit vectors). With ``instance="authors"`` the pool and the subset sequence
    are exactly the authors' (NumPy, seed 2022) and the network is one draw shared by all runs,
    made with JAX from ``jax.random.key(authors_seed)`` (theirs comes from torch's generator, so
    its weights cannot be reproduced without torch; the law is the same).

    Attributes (beyond :class:`PoolNonlinearEnv`'s):
      temperature: tau > 0.  width: hidden units (50; static).  depth: hidden layers (2; static).

    Example::

        env = jb.make_env("random-mlp-bernoulli", temperature=1.0)   # the authors' code
    """

    name = "random-mlp-bernoulli"
    task = "neural-classification"
    description = "Ensemble++ neural task: Bernoulli(softmax(MLP(x)/tau)_1), 50 of a 1,000 pool"
    paper = "Li et al. 2024, Sec. 5.2, App. F.2 (Figs. 3, 10)"
    agent_families = ("baseline", "neural-ensemble")

    temperature: float = 0.1
    width: int = struct.field(pytree_node=False, default=50)
    depth: int = struct.field(pytree_node=False, default=2)

    def validate(self) -> None:
        super().validate()
        check_positive(self, "temperature")

    def _check_options(self) -> None:
        super()._check_options()
        check_positive(self, "width", integer=True)
        check_nonnegative(self, "depth", integer=True)

    AUTHORS_SIZES = PoolNonlinearEnv.AUTHORS_SIZES + (("width", 50), ("depth", 2))

    def _shared_key(self) -> tuple:
        return super()._shared_key() + (("width", self.width), ("depth", self.depth))

    @property
    def layer_sizes(self) -> tuple[int, ...]:
        """``(d, width, ..., width, 2)``: the network's layer sizes."""
        return (self.dim,) + (self.width,) * self.depth + (2,)

    def _draw_shared(self) -> tuple[np.ndarray, Any, np.ndarray]:
        pool, _, subsets = authors_pool_draws(self.authors_seed, self.dim, self.pool_size,
                                              self.num_arms, self.authors_rounds, False)
        return pool, _shared_mlp(self.authors_seed, self.layer_sizes), subsets

    def draw_params(self, key: jax.Array) -> Any:
        return _xavier_mlp(key, self.layer_sizes, float_dtype())

    def mean_reward(self, params: Any, arms: jax.Array) -> jax.Array:
        logits = _mlp_logits(params, arms)
        return jax.nn.softmax(logits / self.temperature, axis=-1)[..., 1]

    def draw_reward(self, key: jax.Array, mean: jax.Array) -> jax.Array:
        return noisy_reward(key, mean, "bernoulli")

    def assumptions(self) -> Assumptions:
        """Rewards in {0, 1}: noise scale 1/2 (1/2-sub-Gaussian); no linear parameter."""
        return Assumptions(noise_std=0.5)


@register_env
class VectorQuadraticEnv(NonlinearEnv):
    """LMC-TS's quadratic bandit (``devzhk/LMCTS`` ``QuadBandit``; Li et al. 2024,
    App. F.2).

    ``reward = scale * <x_a, theta>^2 + N(0, noise_std^2)`` with ``scale = 10``, theta a unit
    vector (a normalised Gaussian: on the sphere, not in the ball as the paper says), and
    K = 50 fresh unit contexts (normalised Gaussians) every round; d = 20, ``noise_std = 1``.
    Regret is ``max_k h(x_k) - h(x_a)`` over the round's arms. Every run draws its own theta
    (``instance_seed`` shares one). All fields of :class:`NonlinearEnv` apply.

    Attributes (beyond :class:`NonlinearEnv`'s): scale: the factor of ``<x, theta>^2``.

    Example::

        env = jb.make_env("vector-quadratic", dim=10)
    """

    name = "vector-quadratic"
    task = "vector-quadratic"
    description = "LMC-TS quadratic 10 (x^T theta)^2, 50 fresh unit contexts per round"
    paper = "Li et al. 2024, App. F.2 (Xu et al. 2022's QuadBandit)"
    agent_families = ("baseline", "neural-ensemble")
    default_horizon = 10_000
    default_runs = 10

    noise_std: float = 1.0
    fresh_arms: bool = struct.field(pytree_node=False, default=True)
    scale: float = 10.0

    def validate(self) -> None:
        super().validate()
        check_positive(self, "scale")

    def draw_params(self, key: jax.Array) -> jax.Array:
        return draw_vectors(key, (self.dim,), "sphere", 1.0)

    def mean_reward(self, params: jax.Array, arms: jax.Array) -> jax.Array:
        return self.scale * (arms @ params) ** 2


def _xavier_mlp(key: jax.Array, sizes: tuple[int, ...], dtype) -> tuple:
    """``((W_1, b_1), ...)`` of a ReLU MLP with layer sizes ``sizes``: ``W_l`` ``(n_{l-1}, n_l)``
    Xavier-normal, ``b_l`` ``(n_l,)`` uniform in ``+-1/sqrt(n_{l-1})`` (PyTorch's default)."""
    layers = []
    for key_layer, fan_in, fan_out in zip(jax.random.split(key, len(sizes) - 1), sizes[:-1],
                                          sizes[1:], strict=True):
        key_w, key_b = jax.random.split(key_layer)
        std = math.sqrt(2.0 / (fan_in + fan_out))
        bound = 1.0 / math.sqrt(fan_in)
        layers.append((std * jax.random.normal(key_w, (fan_in, fan_out), dtype),
                       jax.random.uniform(key_b, (fan_out,), dtype, -bound, bound)))
    return tuple(layers)


def _mlp_logits(params: tuple, x: jax.Array) -> jax.Array:
    """``(..., C)`` the network's output for inputs ``(..., d)`` (ReLU between layers)."""
    for i, (weight, bias) in enumerate(params):
        x = x @ weight + bias
        if i < len(params) - 1:
            x = jax.nn.relu(x)
    return x


@functools.cache
def _shared_mlp(seed: int, sizes: tuple[int, ...]) -> tuple:
    """The shared network of ``random-mlp-bernoulli``'s authors' instance (float32, host)."""
    with jax.ensure_compile_time_eval():  # concrete even if built while tracing
        draw = jax.jit(_xavier_mlp, static_argnums=(1, 2))  # one compilation, not one per op
        params = draw(jax.random.key(seed), sizes, jnp.float32)
    return jax.tree.map(np.asarray, params)
