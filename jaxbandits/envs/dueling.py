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

import os
from typing import ClassVar

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
    check_positive,
    check_seed,
    check_types,
    float_dtype,
)
from jaxbandits.envs.datasets import (
    DATASETS,
    NORMALIZATIONS,
    SAMPLINGS,
    DataBackedEnv,
    DataTable,
    block_features,
    load_dataset,
)
from jaxbandits.linalg.glm import PREFERENCE_LINKS, preference_prob
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

UTILITIES: tuple[str, ...] = ("cosine", "square", "quadratic", "linear")
QUADRATIC_FORMS: tuple[str, ...] = ("matrix", "vector")
LINKS = PREFERENCE_LINKS
READINGS: tuple[str, ...] = ("instance", "class")
#: the names of the extra per-round metrics of every dueling environment (``Spec.metrics``).
DUELING_METRICS: tuple[str, ...] = ("weak_regret", "strong_regret")
_PAPER = "Oh et al. 2026, Sec. 6, App. E.1"


# ------------------------------------------------------------------------------------------------
# The shared math: link, regrets, one round's feedback.


def link_function(link: str, z: jax.Array) -> jax.Array:
    """``g(z)``, the probability that the first arm wins at utility gap ``z``.

    ``"btl"``: the logistic function ``1 / (1 + exp(-z))`` (Bradley-Terry-Luce);
    ``"probit"``: the standard normal CDF ``Phi(z)`` (Thurstone-Mosteller).
    """
    if link not in LINKS:
        raise ValueError(f"link must be one of {LINKS}, got {link!r}")
    return preference_prob(z, link)


def dueling_regrets(utilities: jax.Array, action: jax.Array
                    ) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(r_a, r_w, r_s)``, the average, weak and strong regret of the pair ``action``.

    Args:
      utilities: ``(K,)`` the true utilities ``u(x_k)`` of the round's arms.
      action: ``(2,)`` int, the ordered pair ``(k1, k2)``.

    With ``u* = max_k u_k``: ``r_a = (2 u* - u_k1 - u_k2) / 2``, ``r_w = u* - max(u_k1, u_k2)``,
    ``r_s = u* - min(u_k1, u_k2)`` (Oh et al. 2026, Sec. 3), each ``()``.
    """
    best = jnp.max(utilities)
    first, second = utilities[action[0]], utilities[action[1]]
    average = best - 0.5 * (first + second)
    weak = best - jnp.maximum(first, second)
    strong = best - jnp.minimum(first, second)
    return average, weak, strong


def dueling_feedback(key: jax.Array, utilities: jax.Array, action: jax.Array,
                     prob_first: jax.Array) -> Feedback:
    """One round's :class:`~jaxbandits.Feedback`: ``o ~ Bernoulli(prob_first)`` as the reward,
    the average regret as the regret, the weak and strong regrets as ``metrics`` and the true
    ``P(k1 > k2)`` as ``oracle["preference_prob"]``.

    Args:
      key: the feedback key (the Bernoulli draw).
      utilities: ``(K,)`` true utilities of the round's arms.
      action: ``(2,)`` int, the ordered pair ``(k1, k2)``.
      prob_first: ``()`` ``P(k1 > k2)``.
    """
    dtype = utilities.dtype
    outcome = jax.random.bernoulli(key, prob_first).astype(dtype)
    average, weak, strong = dueling_regrets(utilities, action)
    return Feedback(reward=outcome, regret=average,
                    metrics={"weak_regret": weak, "strong_regret": strong},
                    oracle={"preference_prob": jnp.asarray(prob_first, dtype)})


def dueling_utility(utility: str, x: jax.Array, theta: jax.Array,
                    matrix: jax.Array | None = None, quadratic_form: str = "matrix") -> jax.Array:
    """``u(x)`` of a synthetic task for contexts ``x`` ``(..., d)``; returns ``(...)``.

    ``"cosine"``: ``cos(3 theta^T x)``; ``"square"``: ``10 (theta^T x)^2``; ``"quadratic"``:
    ``||Theta^T x||^2`` with ``Theta = matrix`` ``(d, d)`` (``quadratic_form="matrix"``, our
    default) or ``x^T theta theta^T x`` (``"vector"``, the paper's formula read literally; equal to
    square / 10); ``"linear"``: ``theta^T x`` (the linear dueling bandit of Bengs et al. and
    Saha, where the linear baselines are well specified; not one of the paper's tasks).
    ``theta`` is ``(d,)``.
    """
    if utility == "quadratic":
        if quadratic_form == "vector":
            return jnp.einsum("...i,ij,...j->...", x, jnp.outer(theta, theta), x)
        projected = x @ matrix  # (Theta^T x)^T
        return jnp.sum(projected * projected, axis=-1)
    inner = x @ theta
    if utility == "linear":
        return inner
    if utility == "cosine":
        return jnp.cos(3.0 * inner)
    if utility == "square":
        return 10.0 * inner * inner
    raise ValueError(f"utility must be one of {UTILITIES}, got {utility!r}")


def _check_duel_arms(owner: str, what: str, num_arms: int) -> None:
    """Raises ``ValueError`` unless a dueling environment offers at least 2 arms: with one, every
    duel is a self-duel, which agents that forbid self-duels (``forbid_self_duel``) cannot
    avoid, and no comparison carries information."""
    if num_arms < 2:
        raise ValueError(f"{owner}: {what} must be at least 2 for a dueling bandit (a pair of "
                         f"distinct arms; with 1 every duel is a self-duel, even for agents with "
                         f"forbid_self_duel=True), got {num_arms}")


def _spec(dim: int, num_arms: int) -> Spec:
    return Spec(dim=dim, num_arms=num_arms, action_kind="pair", feedback_kind="preference",
                metrics=DUELING_METRICS, fixed_arms=False)


# ------------------------------------------------------------------------------------------------
# Synthetic tasks.


class _DuelingTask:
    """What every dueling environment of Oh et al. 2026 shares: its paper, the agents that model it,
    and the paper's size for ``jaxbandits run`` (T = 2,000, 20 seeds)."""

    paper: ClassVar[str] = _PAPER
    agent_families: ClassVar[tuple[str, ...]] = ("baseline", "dueling")
    default_horizon: ClassVar[int | None] = 2000
    default_runs: ClassVar[int | None] = 20


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


@struct.dataclass
class DuelingRowContext(Context):
    """A round of a UCI dueling bandit: ``arms`` and the data rows behind them.

    Attributes:
      rows: ``(K,)`` int32, the table row behind each arm (reading ``"instance"``: the one row
        shown, repeated; ``"class"``: one row of class k for arm k). The environment reads the
        labels in ``feedback``; agents use ``arms``.
    """

    rows: jax.Array | None = None


class DuelingClassificationState(struct.PyTreeNode):
    """One run of a UCI dueling bandit.

    Attributes:
      pool: reading ``"instance"``: ``(P,)`` int32, the run's rows (a uniformly random subset
        without replacement, in random order); ``"class"``: ``(K, P)`` int32, row ``k`` holding
        ``P`` rows of class k drawn uniformly with replacement.
    """

    pool: jax.Array


class DuelingClassificationEnv(_DuelingTask, DataBackedEnv):
    """A classification data set as a contextual dueling bandit (Oh et al. 2026, App. E.1.2, both
    readings).

    ``reading="instance"`` (A): round t shows one row ``(z, c)`` of the run's pool; arm k's
    context is ``e_k (x) z`` (``(K, K p)``), ``u_k = 1[k = c]``. ``reading="class"`` (B): round t
    shows one row of each class, arm k the features of its class-k row (``(K, p)``), ``u_k = k``.
    Features are z-scored over the data set (``normalize``) and each shown row scaled to unit
    L2 norm (``unit_norm``). The pair ``(k1, k2)`` gets ``o ~ Bernoulli(P)`` with
    ``P = preference`` if ``u_k1 > u_k2``, ``1 - preference`` if ``u_k1 < u_k2``, 1/2 on ties
    (``= sigmoid(logit(preference) (u_k1 - u_k2))`` in reading A), or ``P = 1[u_k1 > u_k2]``
    (1/2 on ties) with ``deterministic``. Regret and metrics as in :class:`DuelingSyntheticEnv`.

    Rows. Reading A: each run draws a pool of ``pool_size`` distinct rows (all rows if None) in
    random order; ``sampling="sequential"`` (default) walks it (round t shows pool row
    ``t mod P``: rows drawn uniformly **without** replacement for the first P rounds, as App. E.1.2
    says; cycles after), ``"pool"`` draws a pool row uniformly **with** replacement each round.
    Reading B: each run draws, for each class, ``pool_size`` rows of that class uniformly with
    replacement (a class may have fewer rows: shuttle's class 6 has 6); each round shows one row
    per class, the class pools walked (``"sequential"``) or drawn from (``"pool"``).

    Attributes:
      dataset: a name in :data:`~jaxbandits.envs.datasets.DATASETS` (static; categorical data
        are one-hot encoded).
      path: a file or folder to read it from (static; default: the search order of
        :func:`~jaxbandits.envs.load_dataset`). Nothing is downloaded: a missing file raises
        :class:`~jaxbandits.envs.DataNotFoundError`.
      reading: ``"instance"`` (A, default) or ``"class"`` (B) (static).
      preference: ``P(i > j)`` when ``u_i > u_j``, in (0.5, 1] (0.7: the paper's baseline;
        ``sigmoid(1) = 0.731`` is the ``kappa = 1`` reading).
      deterministic: comparisons ``1[u_i > u_j]``, 1/2 on ties (Statlog; static). Overrides
        ``preference`` (it equals ``preference=1``).
      pool_size: P, rows per run (per class in reading B; static). None: all N rows of the data
        set in reading A (one permutation per run), N draws per class in reading B.
      sampling: ``"sequential"`` or ``"pool"`` (static; see above).
      normalize: ``"zscore"`` (default), ``"minmax"``, ``"minmax-row"`` or ``"none"`` (static).
      unit_norm: scale each shown row to unit L2 norm (static).
      instance_seed: if set, every run shares the pool drawn from this seed (static).
      data: the :class:`~jaxbandits.envs.DataTable` (loaded from the fields above when not
        given; pass ``make_table(...)`` for your own data).

    Example::

        env = jb.envs.DuelingClassificationEnv(dataset="banknote", reading="class")
    """

    description = "a classification data set as a contextual dueling bandit"
    #: the data set a registered subclass is fixed to (None: any).
    fixed_dataset: ClassVar[str | None] = None

    dataset: str = struct.field(pytree_node=False, default="shuttle")
    path: str | os.PathLike | None = struct.field(pytree_node=False, default=None)
    reading: str = struct.field(pytree_node=False, default="instance")
    preference: float = 0.7
    deterministic: bool = struct.field(pytree_node=False, default=False)
    pool_size: int | None = struct.field(pytree_node=False, default=2500)
    sampling: str = struct.field(pytree_node=False, default="sequential")
    normalize: str = struct.field(pytree_node=False, default="zscore")
    unit_norm: bool = struct.field(pytree_node=False, default=True)
    instance_seed: int | None = struct.field(pytree_node=False, default=None)
    data: DataTable | None = None

    def _load_key(self) -> tuple:
        path = None if self.path is None else str(self.path)
        return (self.dataset, path, self.normalize, "onehot", None)

    def _load(self) -> DataTable:
        return load_dataset(self.dataset, self.path, normalize=self.normalize,
                            categorical="onehot")

    def _check_options(self) -> None:
        check_types(self)  # before loading anything
        check_choice(self, "dataset", tuple(DATASETS))
        check_choice(self, "reading", READINGS)
        check_choice(self, "sampling", SAMPLINGS)
        check_choice(self, "normalize", NORMALIZATIONS)
        if self.pool_size is not None:
            check_positive(self, "pool_size", integer=True)
        if self.instance_seed is not None:
            check_seed(self, "instance_seed")
        fixed = self.fixed_dataset
        if fixed is not None and self.dataset != fixed:
            raise ValueError(f"{self.name}: dataset is fixed to {fixed!r}, got {self.dataset!r};"
                             " use jb.envs.DuelingClassificationEnv for other data sets")

    def validate(self) -> None:
        super().validate()
        self._check_options()
        for value in np.ravel(np.asarray(self.preference, dtype=float)):
            if not 0.5 < value <= 1.0:
                raise ValueError(f"{self.name or type(self).__name__}: preference must lie in "
                                 f"(0.5, 1], got {self.preference!r}")
        if not isinstance(self.data, DataTable):
            raise ValueError(f"{self.name or type(self).__name__}: data must be a DataTable, "
                             f"got {type(self.data)}")
        if self.data.categorical:
            raise ValueError(f"{self.name or type(self).__name__}: data must hold numeric "
                             "features (one-hot encode categorical columns)")
        _check_duel_arms(self.name or type(self).__name__, "the data's number of classes",
                        self.num_classes)
        if self.reading == "class":
            counts = np.bincount(np.asarray(self.data.labels), minlength=self.num_classes)
            if np.any(counts == 0):
                raise ValueError(f"{self.name or type(self).__name__}: reading='class' needs a "
                                 f"row of every class; classes {np.flatnonzero(counts == 0)} "
                                 "have none")

    @property
    def num_classes(self) -> int:
        """K, the number of classes (= arms)."""
        return self.data.meta.num_classes

    @property
    def num_rows(self) -> int:
        """N, the number of rows of the data set."""
        return self.data.meta.num_rows

    @property
    def num_pool(self) -> int:
        """P, the pool's rows (per class in reading B): ``pool_size``, at most N in reading A;
        N if ``pool_size`` is None."""
        n = self.num_rows
        if self.pool_size is None:
            return n
        return min(self.pool_size, n) if self.reading == "instance" else self.pool_size

    def spec(self) -> Spec:
        meta = self.data.meta
        dim = meta.num_classes * meta.dim if self.reading == "instance" else meta.dim
        return _spec(dim, meta.num_classes)

    def assumptions(self) -> Assumptions:
        """Nothing stated: there is no parametric utility."""
        return Assumptions()

    def init(self, key: jax.Array) -> DuelingClassificationState:
        if self.instance_seed is not None:
            key = jax.random.key(self.instance_seed)
        if self.reading == "instance":
            pool = jax.random.permutation(key, self.num_rows)[: self.num_pool]
            return DuelingClassificationState(pool=pool.astype(jnp.int32))
        # Reading B: the r-th row of class k (r uniform in [0, n_k)) is the first index where
        # the running count of class-k rows exceeds r (exact integer arithmetic). The counts do
        # not depend on the key, so vmap over runs computes them once.
        classes = jnp.arange(self.num_classes, dtype=jnp.int32)
        running = jnp.cumsum(self.data.labels[None, :] == classes[:, None], axis=1,
                             dtype=jnp.int32)  # (K, N)
        counts = running[:, -1]
        ranks = jax.random.randint(key, (self.num_classes, self.num_pool), 0, counts[:, None])
        pool = jax.vmap(lambda r, c: jnp.searchsorted(r, c, side="right"))(running, ranks)
        return DuelingClassificationState(pool=pool.astype(jnp.int32))

    def observe(self, key: jax.Array, env_state: DuelingClassificationState, t: jax.Array
                ) -> DuelingRowContext:
        if self.sampling == "pool":
            shape = () if self.reading == "instance" else (self.num_classes,)
            slot = jax.random.randint(key, shape, 0, self.num_pool)
        else:
            slot = t % self.num_pool
        if self.reading == "instance":
            row = env_state.pool[slot]
            arms = block_features(self.row_features(row), self.num_classes)
            rows = jnp.full((self.num_classes,), row, jnp.int32)
        else:
            rows = env_state.pool[jnp.arange(self.num_classes), slot]
            arms = jax.vmap(self.row_features)(rows)
        return DuelingRowContext(arms=arms, rows=rows.astype(jnp.int32))

    def row_features(self, row: jax.Array) -> jax.Array:
        """``(p,)`` the features of table ``row`` as shown (optionally unit-norm)."""
        x = self.data.features[row].astype(float_dtype())
        if self.unit_norm:
            x = x / jnp.maximum(jnp.linalg.norm(x), 1e-12)
        return x

    def utilities(self, context: DuelingRowContext) -> jax.Array:
        """``(K,)`` the true utilities: ``1[k = c]`` (reading A) or ``k`` (reading B)."""
        dtype = float_dtype()
        classes = jnp.arange(self.num_classes)
        if self.reading == "instance":
            return (classes == self.data.labels[context.rows[0]]).astype(dtype)
        return classes.astype(dtype)

    def preference_probability(self, gap: jax.Array) -> jax.Array:
        """``P(k1 > k2)`` at utility gap ``u_k1 - u_k2``: ``preference`` above 0, ``1 -
        preference`` below, 1/2 at 0 (``preference = 1`` if ``deterministic``)."""
        dtype = float_dtype()
        high = jnp.asarray(1.0 if self.deterministic else self.preference, dtype)
        return jnp.where(gap > 0, high, jnp.where(gap < 0, 1.0 - high, jnp.asarray(0.5, dtype)))

    def feedback(self, key: jax.Array, env_state: DuelingClassificationState,
                 context: DuelingRowContext, action: jax.Array) -> Feedback:
        u = self.utilities(context)
        prob = self.preference_probability(u[action[0]] - u[action[1]])
        return dueling_feedback(key, u, action, prob)


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

