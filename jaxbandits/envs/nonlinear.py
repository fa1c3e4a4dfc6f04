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
from typing import Any, ClassVar

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
    check_seed,
    check_types,
    float_dtype,
)
from jaxbandits.envs.base import VaryingContext, finite_arm_feedback, noisy_reward, pool_context
from jaxbandits.envs.linear import draw_vectors
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

#: ``PoolNonlinearEnv.instance``: a fresh instance per run, the authors' shared one (at their
#: sizes), or one shared instance drawn by the authors' recipe at any sizes.
POOL_INSTANCES: tuple[str, ...] = ("per_run", "authors", "authors_recipe")


@functools.cache
def authors_pool_draws(
    seed: int, dim: int, pool_size: int, num_arms: int, rounds: int, draw_theta: bool
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """The Ensemble++ authors' pool instance, drawn with NumPy as their code draws it.

    Their ``SyntheticNonlinModel`` (``jiawei415/Information_Directed_Sampling``,
    ``env/synthetic.py``; Li et al. 2024, the authors' code) uses one
    ``np.random.default_rng(seed)`` (2022):

    1. the pool ``standard_normal((P, d))`` in float32, each row divided by its norm;
    2. for the quadratic task (``draw_theta``), ``Theta = standard_normal((d, d))`` in float32
       (the neural task draws its network with torch, nothing from this generator);
    3. ``choice(arange(P, dtype=int32), K, replace=False)`` once in the constructor
       (``set_context``), and again at the start of every round: their loops call
       ``set_context()`` first thing in round t. Round t (0-based) therefore offers the subset
       of draw ``t + 2``, counting the constructor's draw as draw 1 (Li et al. 2024, the authors'
       code); the constructor's subset is never offered. When ``K == P`` they draw nothing and offer
       ``arange(P)`` every round.

    Args:
      seed: the generator's seed.  dim: d.  pool_size: P.  num_arms: K (at most P).
      rounds: R, the rounds of subsets to precompute.  draw_theta: draw Theta after the pool.

    Returns:
      ``pool`` ``(P, d)`` float32, ``theta`` ``(d, d)`` float32 (None without ``draw_theta``)
      and ``subsets`` ``(R, K)`` (``(1, P)`` when ``K == P``) of int16 pool indices (int32 when
      P > 32,767), row t offered in round t; read-only and cached per argument tuple.
    """
    if not 0 < num_arms <= pool_size:
        raise ValueError(f"need 0 < num_arms <= pool_size, got {num_arms} and {pool_size}")
    rng = np.random.default_rng(seed)
    pool = rng.standard_normal((pool_size, dim), dtype=np.float32)
    pool /= np.linalg.norm(pool, axis=-1, keepdims=True)
    theta = rng.standard_normal((dim, dim), dtype=np.float32) if draw_theta else None
    index_dtype = np.int16 if pool_size <= np.iinfo(np.int16).max else np.int32
    if num_arms == pool_size:
        subsets = np.arange(pool_size, dtype=index_dtype)[None, :]
    else:
        ids = np.arange(pool_size, dtype=np.int32)
        rng.choice(ids, size=num_arms, replace=False)  # the constructor's draw, never offered
        subsets = np.empty((rounds, num_arms), index_dtype)
        for t in range(rounds):
            subsets[t] = rng.choice(ids, size=num_arms, replace=False)
    for array in (pool, theta, subsets):
        if array is not None:
            array.flags.writeable = False
    return pool, theta, subsets


@jax.tree_util.register_pytree_node_class
class SharedPoolInstance:
    """The instance every run of a pool environment shares (``instance="authors"``).

    Built once on the host (:func:`authors_pool_draws`) and held by the environment as a leaf,
    so the jitted program receives it as arrays, once, not once per run.

    Attributes:
      pool: ``(P, d)`` float32 unit-norm pool vectors.
      params: the reward function's parameters (``Theta`` ``(d, d)``, or the network's layers).
      subsets: ``(R, K)`` int16 (int32 for P > 32,767) pool indices; round ``t`` offers row
        ``t mod R`` (rounds beyond R cycle).
      key: the static configuration it was drawn for, ``((name, value), ...)`` (part of the
        pytree structure; a changed configuration draws a new instance).
    """

    def __init__(self, pool: Any, params: Any, subsets: Any, key: tuple):
        self.pool, self.params, self.subsets, self.key = pool, params, subsets, key

    def tree_flatten(self):
        return (self.pool, self.params, self.subsets), self.key

    @classmethod
    def tree_unflatten(cls, key: tuple, leaves):
        return cls(*leaves, key)

    def __repr__(self) -> str:
        return "SharedPoolInstance(" + ", ".join(f"{k}={v!r}" for k, v in self.key) + ")"


class PoolEnvState(struct.PyTreeNode):
    """One run of a pool environment.

    Attributes:
      params: the reward function's parameters (None with a shared instance, which the
        environment holds).
      pool: ``(P, d)`` the run's unit-norm pool vectors (None with a shared instance).
      means: ``(P,)`` the mean reward ``h(x)`` of every pool vector.
    """

    params: Any
    pool: jax.Array | None
    means: jax.Array


class PoolNonlinearEnv(Env):
    """Shared plumbing of the Ensemble++ pool tasks: K arms of a fixed pool of P per round.

    Each round offers ``num_arms`` distinct vectors of a pool of ``pool_size`` unit vectors
    (normalised Gaussians), as indices (:class:`~jaxbandits.envs.VaryingContext`: ``arms``
    ``(K, d)`` and ``arm_ids`` ``(K,)``); regret is measured against the best offered arm.
    Subclasses write :meth:`draw_params`, :meth:`mean_reward`, :meth:`draw_reward` and
    :meth:`_shared_params`.

    ``instance="per_run"`` (default): every run draws its own pool and reward function from its
    key, and fresh subsets each round (uniform without replacement). ``instance="authors"``: all
    runs share the authors' instance and subset sequence (Li et al. 2024, the authors' code), drawn
    with NumPy from ``authors_seed`` with the authors' recipe (:func:`authors_pool_draws`) at the
    authors' sizes (:attr:`AUTHORS_SIZES`: d = 100, P = 1,000, K = 50; other sizes are a
    ``ValueError``, since they would draw another instance); only the reward noise and the agents
    vary across runs. ``instance="authors_recipe"``: the same recipe and sharing at any sizes (small
    test instances). The subsets of the first ``authors_rounds`` rounds are precomputed (int16, 1 MB
    at the defaults); later rounds cycle through them (round t offers subset
    ``t mod authors_rounds``).

    Attributes:
      dim: d.  num_arms: K, arms offered per round.  pool_size: P (at least K).
      instance: ``"per_run"``, ``"authors"`` or ``"authors_recipe"`` (static).
      authors_seed: the NumPy seed of the authors' instance (2022, their ``freq_task`` seed).
      authors_rounds: rounds of precomputed authors' subsets (static).
      shared_instance: the :class:`SharedPoolInstance` (drawn at construction with
        ``instance="authors"`` or ``"authors_recipe"``; None otherwise).
    """

    #: the sizes of the authors' instance (``instance="authors"`` requires them).
    AUTHORS_SIZES: ClassVar[tuple[tuple[str, int], ...]] = (
        ("dim", 100), ("pool_size", 1000), ("num_arms", 50))
    #: the paper's methods (Ensemble++, Ensemble+, EpiNet, greedy, LMC-TS) and uniform play
    agent_families = ("baseline", "neural-ensemble")
    default_horizon = 10_000  # T = 10^4 quick default (10^5 for paper scale)
    default_runs = 10

    dim: int = struct.field(pytree_node=False, default=100)
    num_arms: int = struct.field(pytree_node=False, default=50)
    pool_size: int = struct.field(pytree_node=False, default=1000)
    instance: str = struct.field(pytree_node=False, default="per_run")
    authors_seed: int = struct.field(pytree_node=False, default=2022)
    authors_rounds: int = struct.field(pytree_node=False, default=10_000)
    shared_instance: SharedPoolInstance | None = None

    def __post_init__(self):
        # Draw the shared instance on construction (or after a replace that changed its
        # configuration); an unflatten of traced leaves keeps its key and draws nothing.
        current = self.shared_instance
        if current is not None and not isinstance(current, SharedPoolInstance):
            return  # validate() names the field
        want = self._shared_key() if self.shares_instance else None
        if current is not None and current.key == want:
            self._check_authors_sizes()  # a replace(instance="authors") draws nothing
            return
        if want is None:
            object.__setattr__(self, "shared_instance", None)
            return
        self._check_options()  # before drawing anything
        pool, params, subsets = self._draw_shared()
        object.__setattr__(self, "shared_instance", SharedPoolInstance(
            jnp.asarray(pool), jax.tree.map(jnp.asarray, params), jnp.asarray(subsets), want))

    @property
    def shares_instance(self) -> bool:
        """Whether every run shares one instance drawn by the authors' recipe."""
        return self.instance in ("authors", "authors_recipe")

    def _shared_key(self) -> tuple:
        """The configuration the shared instance depends on, ``((name, value), ...)``."""
        names = ("authors_seed", "dim", "pool_size", "num_arms", "authors_rounds")
        return (("env", self.name),) + tuple((n, getattr(self, n)) for n in names)

    def _check_options(self) -> None:
        """Checks the fields the shared instance is drawn from."""
        check_types(self)
        for name in ("dim", "num_arms", "pool_size", "authors_rounds"):
            check_positive(self, name, integer=True)
        check_seed(self, "authors_seed")
        check_choice(self, "instance", POOL_INSTANCES)
        if self.num_arms > self.pool_size:
            raise ValueError(f"{self.name}: num_arms must be at most pool_size "
                             f"({self.pool_size}), got {self.num_arms}")
        self._check_authors_sizes()

    def _check_authors_sizes(self) -> None:
        """``instance="authors"`` needs the authors' sizes (:attr:`AUTHORS_SIZES`)."""
        if self.instance != "authors":
            return
        other = {n: getattr(self, n) for n, v in self.AUTHORS_SIZES if getattr(self, n) != v}
        if other:
            theirs = ", ".join(f"{n}={v}" for n, v in self.AUTHORS_SIZES)
            raise ValueError(
                f"{self.name}: instance='authors' is the authors' instance at their sizes "
                f"({theirs}); got {', '.join(f'{n}={v}' for n, v in other.items())}, which "
                f"would draw another instance. Use instance='authors_recipe' for their recipe "
                f"at other sizes, or 'per_run'")

    def validate(self) -> None:
        super().validate()
        self._check_options()
        shared = self.shared_instance
        if shared is not None and not isinstance(shared, SharedPoolInstance):
            raise ValueError(f"{self.name}: shared_instance must be a SharedPoolInstance or None "
                             f"(it is drawn on construction), got {type(shared).__name__}")
        if self.shares_instance and (shared is None or shared.key != self._shared_key()):
            raise ValueError(f"{self.name}: shared_instance does not match the configuration; "
                             "build the environment with make_env or replace(...)")

    def _draw_shared(self) -> tuple[np.ndarray, Any, np.ndarray]:
        """``(pool, params, subsets)`` of the authors' instance (host arrays)."""
        raise NotImplementedError

    def draw_params(self, key: jax.Array) -> Any:
        """The reward function's parameters for one run's instance."""
        raise NotImplementedError

    def mean_reward(self, params: Any, arms: jax.Array) -> jax.Array:
        """``h(x_k)`` ``(K,)`` for arms ``(K, d)``."""
        raise NotImplementedError

    def draw_reward(self, key: jax.Array, mean: jax.Array) -> jax.Array:
        """``()`` an observed reward with mean ``mean``."""
        raise NotImplementedError

    def spec(self) -> Spec:
        return Spec(dim=self.dim, num_arms=self.num_arms, action_kind="index")

    def init(self, key: jax.Array) -> PoolEnvState:
        dtype = float_dtype()
        if self.shares_instance:
            shared = self.shared_instance
            means = self.mean_reward(shared.params, shared.pool.astype(dtype))
            return PoolEnvState(params=None, pool=None, means=means)
        key_params, key_pool = jax.random.split(key)
        params = self.draw_params(key_params)
        pool = draw_vectors(key_pool, (self.pool_size, self.dim), "sphere", 1.0)
        return PoolEnvState(params=params, pool=pool, means=self.mean_reward(params, pool))

    def observe(self, key: jax.Array, env_state: PoolEnvState, t: jax.Array) -> VaryingContext:
        if not self.shares_instance:
            return pool_context(key, env_state.pool, self.num_arms)
        shared = self.shared_instance
        arm_ids = shared.subsets[t % shared.subsets.shape[0]].astype(jnp.int32)
        return VaryingContext(arms=shared.pool[arm_ids].astype(float_dtype()), arm_ids=arm_ids)

    def feedback(
        self, key: jax.Array, env_state: PoolEnvState, context: VaryingContext, action: jax.Array
    ) -> Feedback:
        return finite_arm_feedback(key, env_state.means[context.arm_ids], action,
                                   draw_reward=self.draw_reward)


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
