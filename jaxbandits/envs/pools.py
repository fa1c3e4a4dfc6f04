"""The pool scheme of the Ensemble++ paper's nonlinear tasks (Li et al. 2024, Sec. 5.2, App. F.2):
each round offers K of a fixed pool of unit vectors, drawn per run or shared with the authors'
exact instance and subset sequence (:func:`authors_pool_draws`, NumPy as their code draws it).
:class:`PoolNonlinearEnv` is the base of ``quadratic-pool`` and ``random-mlp-bernoulli``
(:mod:`jaxbandits.envs.nonlinear`, which re-exports these names).
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxbandits.core import (
    Env,
    Feedback,
    Spec,
    check_choice,
    check_positive,
    check_seed,
    check_types,
    float_dtype,
)
from jaxbandits.envs.base import VaryingContext, finite_arm_feedback, pool_context
from jaxbandits.envs.linear import draw_vectors

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
