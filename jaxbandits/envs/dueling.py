"""Contextual dueling bandits: the synthetic and UCI tasks of NVLDB (Oh et al. 2026, App. E.1).

Protocol (Oh et al. 2026, Sec. 3). Each round shows K contexts ``Context(arms=(K, d))``; the agent
returns an ordered pair ``action = (k1, k2)`` (shape ``(2,)`` int32, ``k1 == k2`` allowed) and
observes a comparison bit ``o`` in {0., 1.} (1: the first arm is preferred),

    o ~ Bernoulli(P(k1 > k2)),   P(k1 > k2) = g(u(x_k1) - u(x_k2))       (synthetic tasks)

with the link ``g`` the logistic function (Bradley-Terry-Luce, ``link="btl"``, the paper's) or
the standard normal CDF (Thurstone-Mosteller, ``link="probit"``). The feedback is
``Feedback(reward=o, regret=r_a, metrics={"weak_regret": r_w, "strong_regret": r_s})`` with,
for ``u* = max_k u(x_k)`` over the round's contexts,

    r_a = (2 u* - u_k1 - u_k2) / 2      (average regret: the paper's objective)
    r_w = u* - max(u_k1, u_k2)          (weak regret)
    r_s = u* - min(u_k1, u_k2)          (strong regret; not in the paper, an extra metric)

so ``0 <= r_w <= r_a <= r_s``, ``r_a = (r_w + r_s) / 2``, and all three are 0 exactly when both
arms are optimal (:func:`dueling_regrets`).

**Synthetic** (``dueling-synthetic`` and the shortcuts ``dueling-cosine``, ``dueling-square``,
``dueling-quadratic``; App. E.1.1, Listing 1): per run ``theta ~ U[-1, 1]^d``, not normalised;
each round K x d i.i.d. ``U[-1, 1]`` entries, each row divided by its L2 norm; utilities

====================  ============================================  =========================
``utility``           ``u(x)``                                      note
====================  ============================================  =========================
``"cosine"``          ``cos(3 theta^T x)``                          Fig. 2(a)
``"square"``          ``10 (theta^T x)^2``                          Fig. 2(b), Tables E.2/E.3
``"quadratic"``       ``||Theta^T x||^2``, ``Theta`` (d, d) entries  our default (App. E.1.1)
                      ``U[-1, 1]``, drawn per run
``"quadratic"`` with  ``x^T theta theta^T x`` = square / 10         the formula read literally
``quadratic_form=``
``"vector"``
====================  ============================================  =========================

Raw utilities go into the link (as in Listing 1: no clipping; the square task is nearly
deterministic).

**UCI** (``dueling-shuttle``, ``dueling-magic``, ``dueling-covertype``, ``dueling-statlog``; App.
E.1.2, Table E.1), the two readings of the paper's loose description behind ``reading``:

* ``"instance"`` (reading A, the default): each round one data row ``(z, c)``; arm k's context is
  the disjoint encoding ``x_k = e_k (x) z`` in R^{K p} (:func:`~jaxbandits.envs.block_features`)
  with ``z`` z-scored over the data set and L2-normalised; ``u_k = 1[k = c]``.
* ``"class"`` (reading B): each round one random row of each class; arm k shows the (z-scored,
  L2-normalised) features of its class's row, ``x_k = z_k`` in R^p; ``u_k = k``.

Preference: ``P(i > j) = preference`` if ``u_i > u_j``, ``1 - preference`` if ``u_i < u_j`` and
1/2 on ties (the "0.7 baseline preference"; in reading A this is ``sigmoid(kappa (u_i - u_j))``
with ``kappa = logit(preference)``). ``deterministic=True`` (``dueling-statlog``, the paper's
variance study) makes it ``1[u_i > u_j]``, 1/2 on ties.

Example::

    env = jb.make_env("dueling-square")                       # d = 5, K = 5, BTL
    env = jb.make_env("dueling-synthetic", utility="cosine", link="probit")
    env = jb.make_env("dueling-statlog", reading="class")
    env = jb.make_env("dueling-covertype", path="~/data/covtype.data.gz")
"""

from __future__ import annotations

from typing import ClassVar

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
    float_dtype,
)
from jaxbandits.envs.dueling_data import (
    DuelingClassificationEnv,
    DuelingClassificationState,
    DuelingRowContext,
)
from jaxbandits.envs.dueling_math import (
    DUELING_METRICS,
    LINKS,
    QUADRATIC_FORMS,
    READINGS,
    UTILITIES,
    _check_duel_arms,
    _DuelingTask,
    _spec,
    dueling_feedback,
    dueling_regrets,
    dueling_utility,
    link_function,
)
from jaxbandits.registry import register_env

__all__ = [
    "DUELING_METRICS",
    "LINKS",
    "QUADRATIC_FORMS",
    "READINGS",
    "UTILITIES",
    "DuelingClassificationEnv",
    "DuelingClassificationState",
    "DuelingCosineEnv",
    "DuelingCovertypeEnv",
    "DuelingMagicEnv",
    "DuelingQuadraticEnv",
    "DuelingRowContext",
    "DuelingShuttleEnv",
    "DuelingSquareEnv",
    "DuelingStatlogEnv",
    "DuelingSyntheticEnv",
    "DuelingSyntheticState",
    "dueling_feedback",
    "dueling_regrets",
    "dueling_utility",
    "link_function",
]


# ------------------------------------------------------------------------------------------------
# Synthetic tasks.


class DuelingSyntheticState(struct.PyTreeNode):
    """One synthetic dueling instance.

    Attributes:
      theta: ``(d,)`` theta, entries ``U[-1, 1]`` (not normalised).
      matrix: ``(d, d)`` Theta, entries ``U[-1, 1]``, for the matrix quadratic task; else None.
    """

    theta: jax.Array
    matrix: jax.Array | None = None


@register_env
class DuelingSyntheticEnv(_DuelingTask, Env):
    """NVLDB's synthetic contextual dueling bandit (App. E.1.1, Listing 1).

    Per run ``theta ~ U[-1, 1]^d`` (not normalised; and ``Theta`` ``(d, d)`` ``U[-1, 1]`` for the
    matrix quadratic task). Round t shows K contexts, i.i.d. ``U[-1, 1]^d`` rows each divided by
    its L2 norm; the pair ``(k1, k2)`` gets ``o ~ Bernoulli(g(u(x_k1) - u(x_k2)))`` with the raw
    utilities (Listing 1), ``g`` the logistic (``link="btl"``) or normal-CDF (``"probit"``) link.
    The regret is the average regret ``(2 u* - u_k1 - u_k2) / 2`` and ``metrics`` hold the weak and
    strong regrets (see the module docstring).

    Attributes:
      dim: d (5 in Fig. 2; 10 in Fig. E.3; 20 in Table E.3).
      num_arms: K (5; 10 in Fig. E.4).
      utility: ``"cosine"`` ``cos(3 theta^T x)``, ``"square"`` ``10 (theta^T x)^2`` (default) or
        ``"quadratic"`` (static).
      quadratic_form: ``"matrix"`` ``||Theta^T x||^2`` (default) or ``"vector"``
        ``x^T theta theta^T x`` (static).
      link: ``"btl"`` (logistic, the paper's) or ``"probit"`` (static).
      instance_seed: if set, every run shares the theta (and Theta) drawn from this seed
        (static); contexts and comparisons stay per run.

    Example::

        env = jb.make_env("dueling-synthetic", utility="cosine", dim=10)
        state = env.init(jax.random.key(0))
        context = env.observe(jax.random.key(1), state, 0)           # arms (5, 10)
        fb = env.feedback(jax.random.key(2), state, context, jnp.array([0, 3]))
    """

    name = "dueling-synthetic"
    description = "contextual dueling bandit: cosine/square/quadratic utility, BTL or probit link"

    dim: int = struct.field(pytree_node=False, default=5)
    num_arms: int = struct.field(pytree_node=False, default=5)
    utility: str = struct.field(pytree_node=False, default="square")
    quadratic_form: str = struct.field(pytree_node=False, default="matrix")
    link: str = struct.field(pytree_node=False, default="btl")
    instance_seed: int | None = struct.field(pytree_node=False, default=None)

    def validate(self) -> None:
        super().validate()
        check_choice(self, "utility", UTILITIES)
        check_choice(self, "quadratic_form", QUADRATIC_FORMS)
        check_choice(self, "link", LINKS)
        _check_duel_arms(self.name, "num_arms", self.num_arms)

    def spec(self) -> Spec:
        return _spec(self.dim, self.num_arms)

    def assumptions(self) -> Assumptions:
        """Nothing stated: the utility is not linear in a known feature map."""
        return Assumptions()

    @property
    def uses_matrix(self) -> bool:
        """Whether the utility needs the ``(d, d)`` matrix Theta."""
        return self.utility == "quadratic" and self.quadratic_form == "matrix"

    def init(self, key: jax.Array) -> DuelingSyntheticState:
        if self.instance_seed is not None:
            key = jax.random.key(self.instance_seed)
        key_theta, key_matrix = jax.random.split(key)
        dtype = float_dtype()
        theta = jax.random.uniform(key_theta, (self.dim,), dtype, -1.0, 1.0)
        matrix = None
        if self.uses_matrix:
            matrix = jax.random.uniform(key_matrix, (self.dim, self.dim), dtype, -1.0, 1.0)
        return DuelingSyntheticState(theta=theta, matrix=matrix)

    def observe(self, key: jax.Array, env_state: DuelingSyntheticState, t: jax.Array
                ) -> Context:
        x = jax.random.uniform(key, (self.num_arms, self.dim), float_dtype(), -1.0, 1.0)
        norm = jnp.linalg.norm(x, axis=-1, keepdims=True)
        return Context(arms=x / jnp.maximum(norm, jnp.finfo(x.dtype).tiny))

    def utilities(self, env_state: DuelingSyntheticState, arms: jax.Array) -> jax.Array:
        """``(K,)`` the true utilities ``u(x_k)`` of ``arms`` ``(K, d)``."""
        return dueling_utility(self.utility, arms, env_state.theta, env_state.matrix,
                               self.quadratic_form)

    def feedback(self, key: jax.Array, env_state: DuelingSyntheticState, context: Context,
                 action: jax.Array) -> Feedback:
        u = self.utilities(env_state, context.arms)
        prob = link_function(self.link, u[action[0]] - u[action[1]])
        return dueling_feedback(key, u, action, prob)


@register_env
class DuelingCosineEnv(DuelingSyntheticEnv):
    """``dueling-synthetic`` with ``utility="cosine"``: ``u(x) = cos(3 theta^T x)`` (Fig. 2(a))."""

    name = "dueling-cosine"
    description = "contextual dueling bandit, u(x) = cos(3 theta^T x), d = 5, K = 5"

    utility: str = struct.field(pytree_node=False, default="cosine")


@register_env
class DuelingSquareEnv(DuelingSyntheticEnv):
    """``dueling-synthetic`` with ``utility="square"``: ``u(x) = 10 (theta^T x)^2`` (Fig. 2(b),
    Tables E.2 and E.3)."""

    name = "dueling-square"
    description = "contextual dueling bandit, u(x) = 10 (theta^T x)^2, d = 5, K = 5"

    utility: str = struct.field(pytree_node=False, default="square")


@register_env
class DuelingQuadraticEnv(DuelingSyntheticEnv):
    """``dueling-synthetic`` with ``utility="quadratic"``: ``u(x) = ||Theta^T x||^2`` with a
    ``(d, d)`` Theta (our default), or ``x^T theta theta^T x`` with ``quadratic_form="vector"``
    (Fig. 2(c) read literally)."""

    name = "dueling-quadratic"
    description = "contextual dueling bandit, u(x) = ||Theta^T x||^2 (Theta d x d), d = 5, K = 5"

    utility: str = struct.field(pytree_node=False, default="quadratic")


# ------------------------------------------------------------------------------------------------
# UCI classification data as dueling bandits.


@register_env
class DuelingShuttleEnv(DuelingClassificationEnv):
    """UCI Statlog (Shuttle) as a 7-armed dueling bandit (Table E.1: 9 attributes, 7 arms).

    Reads ``shuttle.trn`` (43,500 rows; or the 58,000-row ``shuttle.csv``). Reading A: contexts
    ``e_k (x) z`` in R^63, ``u_k = 1[k = c]``, ``P(i > j) = 0.7`` for the better arm. For the
    paper's deterministic variance study use ``dueling-statlog``.
    """

    name = "dueling-shuttle"
    description = "UCI Statlog Shuttle as a dueling bandit, 7 arms (d = 63), preference 0.7"
    fixed_dataset: ClassVar[str | None] = "shuttle"

    dataset: str = struct.field(pytree_node=False, default="shuttle")


@register_env
class DuelingStatlogEnv(DuelingShuttleEnv):
    """``dueling-shuttle`` with deterministic comparisons (``deterministic=True``): the better
    arm always wins, ties are fair coins — the paper's Statlog variance study (near-zero
    variance; T = 200 in the main text)."""

    name = "dueling-statlog"
    description = "UCI Statlog Shuttle as a dueling bandit, deterministic preferences"

    deterministic: bool = struct.field(pytree_node=False, default=True)


@register_env
class DuelingMagicEnv(DuelingClassificationEnv):
    """UCI MAGIC Gamma Telescope as a 2-armed dueling bandit (10 features; arm 1 is gamma).

    Reads ``magic04.data`` (19,020 rows). Reading A: contexts in R^20, ``u_k = 1[k = c]``,
    ``P(i > j) = 0.7`` for the better arm.
    """

    name = "dueling-magic"
    description = "UCI MAGIC gamma telescope as a dueling bandit, 2 arms (d = 20), preference 0.7"
    fixed_dataset: ClassVar[str | None] = "magic"

    dataset: str = struct.field(pytree_node=False, default="magic")


@register_env
class DuelingCovertypeEnv(DuelingClassificationEnv):
    """UCI Covertype as a 7-armed dueling bandit (54 features; 581,012 rows).

    Reads ``covtype.data.gz`` or ``covtype.data`` from ``path`` (or the usual search folders;
    there is no shared copy, and nothing is downloaded). Reading A: contexts in R^378,
    ``u_k = 1[k = c]``, ``P(i > j) = 0.7`` for the better arm.
    """

    name = "dueling-covertype"
    description = "UCI Covertype as a dueling bandit, 7 arms (d = 378), preference 0.7"
    fixed_dataset: ClassVar[str | None] = "covertype"

    dataset: str = struct.field(pytree_node=False, default="covertype")

