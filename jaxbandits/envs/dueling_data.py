"""UCI classification data as contextual dueling bandits (Oh et al. 2026, App. E.1.2, Table E.1),
in both readings of the paper's description (:class:`DuelingClassificationEnv`). The registered
data sets (``dueling-shuttle``, ...) are in :mod:`jaxbandits.envs.dueling`, which re-exports
these names.
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
from jaxbandits.envs.dueling_math import (
    READINGS,
    _check_duel_arms,
    _DuelingTask,
    _spec,
    dueling_feedback,
)


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
