"""Arrays as an environment: run the engine on contexts and rewards you already have.

:class:`ArrayEnv` (registered as ``arrays``) plays given arrays round by round:

* the contexts, either per-arm features ``contexts`` ``(T, K, d)`` or one shared context per
  round ``shared`` ``(T, d)`` (shown as a :class:`~jaxbandits.envs.SharedContext`, the disjoint
  model's input);
* the rewards, ``means`` ``(T, K)``, the expected rewards (then the observed reward is the mean
  plus ``N(0, noise_std^2)`` noise drawn from the runner's feedback key), and/or the realised
  ``rewards`` ``(T, K)`` (observed as given). The regret is exact against the means when they
  are given, else against the realised rewards (``max_k r_{t,k} - r_{t,a}``).

Every array may carry a leading run axis ``(R, T, ...)``: run ``r`` then plays slice ``r``. The
runner gives an environment only its key (the contract keeps runs independent of the batch
layout), so run ``r`` is recognised by its key, the one :func:`jaxbandits.simulate` derives from
the integer ``seed``: make the environment with ``seed=S`` and give ``simulate`` / ``compare`` /
``sweep`` the same ``S``. Before compiling, the runner asks the environment about the call
(:meth:`ArrayEnv.check_call`): another key, more runs than ``R`` or a horizon past ``T`` is a
``ValueError`` that says which and what to pass. (A run played outside the runner's entry,
``jb.runner.init`` and ``jb.runner.rollout``, that the arrays do not hold observes NaN
rewards.) ``make_env("arrays")`` without arrays raises
:class:`~jaxbandits.data.DataNotFoundError` (a ``ValueError``).

``simulate``, ``compare`` and ``sweep`` all see the same arrays, so every agent meets the same
contexts and rewards (common random numbers), and so does a peer library given the same arrays.

Example::

    env = jb.envs.ArrayEnv(shared=X, means=M, noise_std=0.1)    # X (T, d), M (T, K)
    results = jb.compare(env, {"ucb": jb.make_agent("disjoint-lin-ucb")}, 0, horizon=T,
                         num_runs=10)
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxbandits.core import Context, Env, Feedback, Spec, check_seed, float_dtype
from jaxbandits.data import DataNotFoundError
from jaxbandits.envs.disjoint import SharedContext
from jaxbandits.registry import register_env
from jaxbandits.validation import _show

__all__ = ["ArrayContext", "ArrayEnv", "ArrayEnvState"]

_ARRAYS = ("contexts", "shared", "means", "rewards")
# the trailing dimensions of each array after (T,): contexts (K, d), shared (d,), rewards (K,)
_TRAILING = {"contexts": 2, "shared": 1, "means": 1, "rewards": 1}


@struct.dataclass
class ArrayContext(SharedContext):
    """A round of :class:`ArrayEnv`: ``arms`` ``(K, d)``, ``shared`` ``(d,)`` or None, and the
    round index ``step`` (the environment reads its rewards at it)."""

    step: jax.Array | None = None


class ArrayEnvState(struct.PyTreeNode):
    """``run``: ``()`` int32, the slice of per-run arrays this run plays (-1: none; 0 when the
    arrays are shared by all runs)."""

    run: jax.Array


@register_env
class ArrayEnv(Env):
    """An environment of given arrays (see the module docstring for the layout).

    Attributes:
      contexts: ``(T, K, d)`` or ``(R, T, K, d)`` per-arm features (or None).
      shared: ``(T, d)`` or ``(R, T, d)`` a context shared by the arms (or None; exactly one of
        ``contexts`` and ``shared``).
      means: ``(T, K)`` or ``(R, T, K)`` expected rewards (or None).
      rewards: ``(T, K)`` or ``(R, T, K)`` realised rewards (or None; at least one of the two).
      noise_std: the Gaussian noise added to ``means`` when ``rewards`` is not given.
      seed: the integer key given to ``simulate``; needed with per-run arrays (static; a
        call with another key is refused before compiling, :meth:`check_call`).

    Example::

        env = jb.envs.ArrayEnv(contexts=C, rewards=Y)                  # C (T, K, d), Y (T, K)
    """

    name = "arrays"
    description = "your own arrays: contexts (T, K, d) or (T, d), mean or realised rewards (T, K)"
    paper = "user data"
    agent_families = ("baseline", "linear", "disjoint")

    contexts: Any = None
    shared: Any = None
    means: Any = None
    rewards: Any = None
    noise_std: float = 0.0
    seed: int | None = struct.field(pytree_node=False, default=None)

    def __post_init__(self):  # user arrays (NumPy, lists) to the engine's float dtype
        for name in _ARRAYS:
            value = getattr(self, name)
            if isinstance(value, (np.ndarray, list, tuple)) or np.isscalar(value):
                array = np.asarray(value)
                if array.dtype.kind in "biuf":
                    object.__setattr__(self, name, jnp.asarray(array, float_dtype()))

    # -- the sizes, read from the arrays' shapes ---------------------------------------------

    @property
    def per_run(self) -> bool:
        """Whether the arrays carry a leading run axis ``(R, ...)``."""
        name = self._present()[0]
        return np.ndim(getattr(self, name)) == 2 + _TRAILING[name]

    @property
    def num_runs(self) -> int | None:
        """R, the runs the arrays hold (None when they are shared by all runs)."""
        return int(np.shape(getattr(self, self._present()[0]))[0]) if self.per_run else None

    @property
    def horizon(self) -> int:
        """T, the rounds the arrays hold."""
        return int(np.shape(getattr(self, self._present()[0]))[int(self.per_run)])

    def _present(self) -> list[str]:
        return [n for n in _ARRAYS if getattr(self, n) is not None]

    def _reward_array(self) -> jax.Array:
        return self.means if self.means is not None else self.rewards

    def spec(self) -> Spec:
        num_arms = int(np.shape(self._reward_array())[-1])
        features = self.contexts if self.contexts is not None else self.shared
        return Spec(dim=int(np.shape(features)[-1]), num_arms=num_arms, action_kind="index")

    # -- validation -----------------------------------------------------------------------------

    def validate(self) -> None:
        super().validate()
        for name in self._present():
            value = getattr(self, name)
            if not isinstance(value, (jax.Array, np.ndarray)) or value.dtype.kind not in "biuf":
                raise ValueError(f"arrays: {name} must be an array of numbers, got "
                                 f"{type(value).__name__} {_show(value)}")
        if not self._present():
            raise DataNotFoundError("arrays: no data given; pass contexts= (T, K, d) or shared= "
                                    "(T, d), and means= (T, K) and/or rewards= (T, K)")
        if (self.contexts is None) == (self.shared is None):
            raise ValueError("arrays: give exactly one of contexts= (T, K, d) per-arm features "
                             "and shared= (T, d) shared contexts")
        if self.means is None and self.rewards is None:
            raise ValueError("arrays: give means= (T, K) expected and/or rewards= (T, K) "
                             "realised rewards")
        if self.seed is not None:
            check_seed(self, "seed")
        shapes = {}
        for name in self._present():
            value = getattr(self, name)
            if isinstance(value, jax.core.Tracer):
                return  # traced leaves (inside sweep): checked on the concrete environment
            array = np.asarray(value)
            lead = array.ndim - _TRAILING[name]
            if lead not in (1, 2):
                raise ValueError(f"arrays: {name} must have {_TRAILING[name] + 1} dimensions "
                                 f"(T, ...) or {_TRAILING[name] + 2} (R, T, ...), got shape "
                                 f"{array.shape}")
            shapes[name] = array.shape
            bad = np.argwhere(~np.isfinite(array))
            if len(bad):
                index = tuple(int(i) for i in bad[0])
                raise ValueError(f"arrays: {name}{list(index)} is {array[index]}; every value "
                                 f"must be finite ({len(bad)} are not)")
        self._check_shapes(shapes)
        if self.per_run and self.seed is None:
            raise ValueError("arrays: per-run arrays (a leading run axis R) need seed=S, the "
                             "integer key you give simulate / compare / sweep: run r plays "
                             "slice r, recognised by the key the runner derives from S for it "
                             "(e.g. ArrayEnv(..., seed=0) and jb.simulate(env, agent, 0, ...))")

    def check_call(self, key: jax.Array, horizon: int, num_runs: int) -> None:
        """Raises ``ValueError`` for a call the arrays cannot serve: ``horizon`` past their T
        rounds, and with per-run arrays ``num_runs`` past their R runs or a ``key`` other than
        ``jax.random.key(seed)`` (the runs would not be recognised). The runner calls it at its
        public entry, before compiling."""
        if horizon > self.horizon:
            raise ValueError(f"arrays: horizon {horizon} is past the T = {self.horizon} rounds "
                             f"the arrays hold; pass horizon <= {self.horizon}")
        if not self.per_run:
            return
        if num_runs > self.num_runs:
            raise ValueError(f"arrays: num_runs {num_runs} is past the R = {self.num_runs} "
                             f"runs the arrays hold (run r plays slice r); pass num_runs <= "
                             f"{self.num_runs}")
        expected = jax.random.key_data(jax.random.key(self.seed))
        if jax.random.key_impl(key) != jax.random.key_impl(jax.random.key(self.seed)) or \
                not np.array_equal(np.asarray(jax.random.key_data(key)), np.asarray(expected)):
            raise ValueError(f"arrays: per-run arrays recognise run r by the key the runner "
                             f"derives from seed={self.seed}, and this call's key is not "
                             f"jax.random.key({self.seed}): pass {self.seed} as the key of "
                             "simulate / compare / sweep, or make the environment with "
                             "seed=<your integer key>")

    def _check_shapes(self, shapes: dict[str, tuple[int, ...]]) -> None:
        first = next(iter(shapes))
        lead = len(shapes[first]) - _TRAILING[first]
        want_lead = shapes[first][:lead]
        reward_name = "means" if "means" in shapes else "rewards"
        num_arms = shapes[reward_name][-1]
        feature_name = "contexts" if "contexts" in shapes else "shared"
        for name, shape in shapes.items():
            if shape[: len(shape) - _TRAILING[name]] != want_lead:
                raise ValueError(f"arrays: {name} has leading axes {shape[:-_TRAILING[name]]} "
                                 f"(runs, rounds), {first} has {want_lead}; they must agree")
        for name in ("means", "rewards", "contexts"):
            if name in shapes and shapes[name][-1 - (name == "contexts")] != num_arms:
                raise ValueError(f"arrays: {name} has {shapes[name][-1 - (name == 'contexts')]}"
                                 f" arms, {reward_name} has {num_arms}; they must agree")
        if shapes[feature_name][-1] < 1 or num_arms < 1 or want_lead[-1] < 1:
            raise ValueError(f"arrays: need T >= 1 rounds, K >= 1 arms and d >= 1 features, got "
                             f"{feature_name} {shapes[feature_name]}, {reward_name} "
                             f"{shapes[reward_name]}")

    # -- the three functions ----------------------------------------------------------------------

    def init(self, key: jax.Array) -> ArrayEnvState:
        if not self.per_run:
            return ArrayEnvState(run=jnp.zeros((), jnp.int32))
        from jaxbandits.simulate import run_keys  # the runner's key of run r

        base = jax.random.key(self.seed)
        runs = jnp.arange(self.num_runs)
        candidates = jax.vmap(lambda r: jax.random.key_data(run_keys(base, r)[0]))(runs)
        match = jnp.all(candidates == jax.random.key_data(key), axis=-1)
        run = jnp.where(jnp.any(match), jnp.argmax(match), -1)
        return ArrayEnvState(run=run.astype(jnp.int32))

    def _at(self, array: jax.Array, env_state: ArrayEnvState, t: jax.Array) -> jax.Array:
        t = jnp.minimum(t, self.horizon - 1)
        if self.per_run:
            return array[jnp.maximum(env_state.run, 0), t]
        return array[t]

    def _valid(self, env_state: ArrayEnvState, t: jax.Array) -> jax.Array:
        return (env_state.run >= 0) & (t < self.horizon)

    def observe(self, key: jax.Array, env_state: ArrayEnvState, t: jax.Array) -> ArrayContext:
        step = jnp.asarray(t, jnp.int32)
        if self.contexts is not None:
            return ArrayContext(arms=self._at(self.contexts, env_state, step), step=step)
        x = self._at(self.shared, env_state, step)
        num_arms = self.spec().num_arms
        return ArrayContext(arms=jnp.broadcast_to(x, (num_arms, x.shape[-1])), shared=x,
                            step=step)

    def mean_rewards(self, env_state: ArrayEnvState, context: ArrayContext) -> jax.Array:
        """``(K,)`` the round's reference rewards: the means if given, else the realised ones."""
        return self._at(self._reward_array(), env_state, context.step)

    def feedback(self, key: jax.Array, env_state: ArrayEnvState, context: Context,
                 action: jax.Array) -> Feedback:
        means = self.mean_rewards(env_state, context)
        if self.rewards is not None:
            reward = self._at(self.rewards, env_state, context.step)[action]
        else:
            reward = means[action] + self.noise_std * jax.random.normal(key, (), means.dtype)
        valid = self._valid(env_state, context.step)
        nan = jnp.asarray(jnp.nan, means.dtype)
        return Feedback(reward=jnp.where(valid, reward, nan),
                        regret=jnp.where(valid, jnp.max(means) - means[action], nan))
