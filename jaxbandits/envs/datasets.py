"""Classification data sets as K-armed contextual bandits (the disjoint / block construction).

A data set of rows ``(x, y)`` with ``x`` in R^d and ``y`` one of K classes becomes a K-armed
bandit (Bae & Lee 2025, Sec. 7, App. A, after Zhou et al. 2020 and Riquelme et al. 2018): each round
shows one row, and arm ``k``'s feature vector is ``x`` placed in block ``k`` of a ``K * d`` vector,

    x^(k) = e_k (x) x = [0, ..., 0, x, 0, ..., 0]  in R^{K d},

(:func:`block_features`). The reward is 1 for the true class and 0 otherwise (plus optional
``N(0, noise_std^2)`` noise), so the exact pseudo-regret of arm ``a`` is ``1 - 1[a = y]``; a
uniformly random policy has expected regret ``T (1 - 1/K)``.

Rows. Each run draws its own **pool** of ``pool_size`` distinct rows (a uniformly random subset,
without replacement; the whole data set if it is smaller), and each round shows one pool row drawn
uniformly **with** replacement (Bae & Lee 2025, Sec. 7: "Figures 1 and 2 use 2500 vectors", read as
a pool of 2,500 samples per run). ``sampling="sequential"`` instead walks the run's pool in its
random order (round ``t`` shows pool row ``t mod pool_size``): with ``pool_size=None`` that is one
random permutation of the whole data set per run, the "shuffled, without replacement" protocol of
the Ensemble++ and dueling papers (Li et al. 2024, App. F.2; Oh et al. 2026, App. E.1.2).

Normalisation (Bae & Lee 2025, App. A), done once when the data are loaded:

* ``"minmax"`` (default): each feature column to ``[-1, 1]`` over the data set,
  ``2 (x_j - min_j) / (max_j - min_j) - 1`` (a constant column becomes 0);
* ``"minmax-row"``: the paper's formula read literally, min and max over the coordinates of each
  row;
* ``"zscore"``: each column to mean 0, standard deviation 1; ``"none"``: raw values.

``unit_norm=True`` then scales each shown ``x`` to unit L2 norm (Li et al. 2024's shuttle and
mushroom, Oh et al. 2026's UCI tasks). Categorical data (mushroom) use ``categorical="random"`` (Bae
& Lee 2025, App. A: each category of each column becomes one value drawn uniformly in ``[-1, 1]``,
drawn per run; '?' is a category of its own) or ``categorical="onehot"`` (our reading for Li et al.
2024, App. F.2: one-hot columns, then the normalisation above). ``shuttle-epp`` and ``mushroom-epp``
(:class:`ShuttleEppEnv`, :class:`MushroomEppEnv`) preset Ensemble++'s encoding: raw (one-hot)
features, unit rows, one shuffled pass per run, noise std 0.1 (shuttle) or 1.0 (mushroom).

Data sets (:data:`DATASETS`):

=========  =======  ======  ====  ===========================================================
name       rows     d       K     file (searched as described below)
=========  =======  ======  ====  ===========================================================
shuttle    43,500   9       7     ``shuttle.trn`` (UCI Statlog Shuttle, training part) or the
                                  58,000-row ``shuttle.csv`` that :func:`download` writes
magic      19,020   10      2     ``magic04.data`` (UCI MAGIC Gamma Telescope; 'g' is arm 1)
digits     1,797    64      10    bundled with scikit-learn (8x8 images; the offline MNIST
                                  stand-in); ``image_size=4`` pools to 4x4
mushroom   8,124    22      2     ``agaricus-lepiota.data`` (UCI; edible 'e' is arm 1)
banknote   1,372    4       2     ``data_banknote_authentication.txt`` (UCI)
phoneme    5,404    5       2     ``phoneme.csv`` (OpenML 1489)
mnist      60,000   196     10    ``mnist.npz`` (Keras layout) or ``train-images-idx3-ubyte``
                                  (+ labels); 28x28 average-pooled to 14x14 (the 196 inputs of Bae &
                                  Lee 2025, App. A; ``image_size=7`` gives 49)
covertype  581,012  54      7     ``covtype.data.gz`` (UCI Covertype)
=========  =======  ======  ====  ===========================================================

Where files are looked for, in order (:mod:`jaxbandits.data.locate`): an explicit ``path=`` (a
file or a folder; then nowhere else), else the folders in the ``JAXBANDITS_DATA`` environment
variable, the per-user data folder ``$XDG_DATA_HOME/jaxbandits`` (``~/.local/share/jaxbandits``)
and the download cache (``JAXBANDITS_CACHE``, default ``~/.cache/jaxbandits``); inside each
folder also in its ``uci/`` and ``mnist/`` subfolders. Nothing is ever downloaded implicitly: a
missing file raises :class:`DataNotFoundError`, which says where to put the file and how to fetch
it once with :func:`download`. A file that is not the data set (undecodable bytes, another
number of columns, one class, fewer than two rows per class) raises
:class:`~jaxbandits.data.DataFileError` naming the file.

This module holds the environments; reading, locating and downloading files and the table type
live in :mod:`jaxbandits.data` (re-exported here under their old names).

Example::

    env = jb.make_env("shuttle")                       # reads shuttle.trn
    env = jb.make_env("classification", dataset="mushroom", path="~/data/agaricus-lepiota.data")
    result = jb.simulate(env, jb.make_agent("lin-ucb"), key, horizon=2_000, num_runs=10)
"""

from __future__ import annotations

import os
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
    check_positive,
    check_seed,
    check_types,
    float_dtype,
)
from jaxbandits.data import (
    CATEGORICAL_ENCODINGS,
    DATASETS,
    NORMALIZATIONS,
    DataNotFoundError,
    DatasetInfo,
    DataTable,
    cache_dir,
    download,
    find_data_file,
    load_dataset,
    make_table,
    normalize_features,
    search_dirs,
)
from jaxbandits.registry import register_env

# The names of jaxbandits.data in this list are re-exported for earlier import paths.
__all__ = [
    "DATASETS",
    "ClassificationEnv",
    "ClassificationEnvState",
    "DataBackedEnv",
    "DataNotFoundError",
    "DataTable",
    "DatasetInfo",
    "DigitsEnv",
    "MagicEnv",
    "MushroomEppEnv",
    "RowContext",
    "ShuttleEnv",
    "ShuttleEppEnv",
    "block_features",
    "cache_dir",
    "download",
    "find_data_file",
    "load_dataset",
    "make_table",
    "normalize_features",
    "search_dirs",
]

#: How a classification environment picks a run's row each round.
SAMPLINGS: tuple[str, ...] = ("pool", "sequential")


def block_features(x: jax.Array, num_arms: int) -> jax.Array:
    """The disjoint encoding: ``(K, K d)`` arm features, row ``k`` holding ``x`` in block ``k``.

    ``block_features(x, K)[k] = e_k (x) x`` for ``x`` of shape ``(d,)`` (Bae & Lee 2025, Sec. 7,
    App. A, ``x^(k) = [0, ..., 0, x, 0, ..., 0]``).
    """
    return jnp.kron(jnp.eye(num_arms, dtype=x.dtype), x[None, :])


# ------------------------------------------------------------------------------------------------
# The environments.


@struct.dataclass
class RowContext(Context):
    """A round of a classification bandit: ``arms`` ``(K, K d)`` and the data row shown.

    Attributes:
      row: ``()`` int32, the index of the shown row in the environment's table (the environment
        reads its label in ``feedback``; agents use ``arms``).
    """

    row: jax.Array | None = None


class ClassificationEnvState(struct.PyTreeNode):
    """One run of a classification bandit.

    Attributes:
      pool: ``(P,)`` int32 the run's rows, a uniformly random subset in random order.
      codebook: ``(d, C)`` the per-run value of each category of each column (categorical data
        with ``categorical="random"``), else ``None``.
    """

    pool: jax.Array
    codebook: jax.Array | None = None


class DataBackedEnv(Env):
    """Base of the environments that hold a table read from files in their ``data`` field.

    ``data`` is loaded on construction when it is missing, or when it was loaded with other
    options (its ``meta.load_key`` differs from :meth:`_load_key`, e.g. after
    ``replace(dataset=...)``); never on an unflatten of traced leaves, which keep their key.
    Subclasses define :meth:`_load_key`, :meth:`_check_options` (run before anything is read)
    and :meth:`_load`.
    """

    def __post_init__(self):
        loaded_with = getattr(getattr(self.data, "meta", None), "load_key", None)
        if self.data is None or (loaded_with is not None and loaded_with != self._load_key()):
            self._check_options()
            object.__setattr__(self, "data", self._load())

    def _load_key(self) -> tuple:
        """The options ``data`` is read with (equal to the loaded table's ``meta.load_key``)."""
        raise NotImplementedError

    def _check_options(self) -> None:
        """Checks the fields that choose what to read."""

    def _load(self) -> Any:
        """Reads ``data`` from the options."""
        raise NotImplementedError


@register_env
class ClassificationEnv(DataBackedEnv):
    """A classification data set as a K-armed bandit with block (disjoint) arm features.

    Round t shows a row ``(x, y)`` of the run's pool; arm ``k`` is ``e_k (x) x`` in R^{K d};
    ``reward = 1[a = y] + N(0, noise_std^2)`` and the exact pseudo-regret is ``1 - 1[a = y]``
    (Bae & Lee 2025, Sec. 7, App. A). The data are read at construction (see the module docstring
    for the files, the search order and the normalisations) and held as the leaf ``data``.

    Attributes:
      dataset: a name in :data:`DATASETS` (static).
      path: a file or folder to read it from (static; default: the search order).
      pool_size: rows per run, drawn without replacement (static; None: all rows).
      sampling: ``"pool"`` (each round a uniform pool row, with replacement) or ``"sequential"``
        (the pool in its random order; static).
      normalize: ``"minmax"`` (columns to [-1, 1]), ``"minmax-row"``, ``"zscore"`` or
        ``"none"`` (static).
      unit_norm: scale each shown row to unit L2 norm (static).
      categorical: ``"random"`` or ``"onehot"`` encoding of categorical data (static).
      image_size: side of the pooled image for ``digits`` (8 or 4) and ``mnist`` (14 or 7;
        static; None: the data set's default).
      noise_std: standard deviation of Gaussian noise added to the 0/1 reward.
      instance_seed: if set, every run shares the pool drawn from this seed (static).
      data: the :class:`DataTable` (loaded from the fields above when not given).

    Example::

        env = jb.make_env("classification", dataset="banknote", path="data/")
    """

    name = "classification"
    description = "any supported classification data set as a K-armed bandit (block features)"
    paper = "Bae & Lee 2025, Sec. 7, App. A (Riquelme et al. 2018 / Zhou et al. 2020 protocol)"
    agent_families = ("baseline", "linear", "glm", "neural", "neural-logistic")

    dataset: str = struct.field(pytree_node=False, default="digits")
    path: str | os.PathLike | None = struct.field(pytree_node=False, default=None)
    pool_size: int | None = struct.field(pytree_node=False, default=2500)
    sampling: str = struct.field(pytree_node=False, default="pool")
    normalize: str = struct.field(pytree_node=False, default="minmax")
    unit_norm: bool = struct.field(pytree_node=False, default=False)
    categorical: str = struct.field(pytree_node=False, default="random")
    image_size: int | None = struct.field(pytree_node=False, default=None)
    noise_std: float = 0.0
    instance_seed: int | None = struct.field(pytree_node=False, default=None)
    data: DataTable | None = None

    def _load_key(self) -> tuple:
        path = None if self.path is None else str(self.path)
        return (self.dataset, path, self.normalize, self.categorical, self.image_size)

    def _load(self) -> DataTable:
        return load_dataset(self.dataset, self.path, normalize=self.normalize,
                            categorical=self.categorical, image_size=self.image_size)

    def _check_options(self) -> None:
        check_types(self)  # before loading anything
        check_choice(self, "dataset", tuple(DATASETS))
        check_choice(self, "sampling", SAMPLINGS)
        check_choice(self, "normalize", NORMALIZATIONS)
        check_choice(self, "categorical", CATEGORICAL_ENCODINGS)
        if self.pool_size is not None:
            check_positive(self, "pool_size", integer=True)
        if self.image_size is not None:
            check_positive(self, "image_size", integer=True)
        if self.instance_seed is not None:
            check_seed(self, "instance_seed")
        fixed = type(self).name
        if fixed in DATASETS and self.dataset != fixed:
            raise ValueError(f"{fixed}: dataset is fixed to {fixed!r}, got {self.dataset!r}; "
                             "use the 'classification' environment for other data sets")

    def validate(self) -> None:
        super().validate()
        self._check_options()
        if not isinstance(self.data, DataTable):
            raise ValueError(f"{self.name}: data must be a DataTable, got {type(self.data)}")

    @property
    def num_rows(self) -> int:
        """N, the number of rows of the data set."""
        return self.data.meta.num_rows

    @property
    def num_pool(self) -> int:
        """P, the rows each run draws: ``min(pool_size, N)``."""
        n = self.num_rows
        return n if self.pool_size is None else min(self.pool_size, n)

    def spec(self) -> Spec:
        meta = self.data.meta
        return Spec(dim=meta.num_classes * meta.dim, num_arms=meta.num_classes,
                    action_kind="index")

    def assumptions(self) -> Assumptions:
        """Rewards in {0, 1} (plus ``noise_std`` Gaussian noise): noise scale
        ``sqrt(1/4 + noise_std^2)``; no linear parameter."""
        return Assumptions(noise_std=float(np.sqrt(0.25 + float(self.noise_std) ** 2)))

    def init(self, key: jax.Array) -> ClassificationEnvState:
        if self.instance_seed is not None:
            key = jax.random.key(self.instance_seed)
        key_pool, key_code = jax.random.split(key)
        pool = jax.random.permutation(key_pool, self.num_rows)[: self.num_pool]
        codebook = None
        if self.data.categorical:
            meta = self.data.meta
            codebook = jax.random.uniform(key_code, (meta.dim, meta.num_categories),
                                          float_dtype(), -1.0, 1.0)
        return ClassificationEnvState(pool=pool.astype(jnp.int32), codebook=codebook)

    def observe(self, key: jax.Array, env_state: ClassificationEnvState, t: jax.Array
                ) -> RowContext:
        if self.sampling == "pool":
            slot = jax.random.randint(key, (), 0, self.num_pool)
        else:
            slot = t % self.num_pool
        row = env_state.pool[slot]
        x = self.row_features(env_state, row)
        return RowContext(arms=block_features(x, self.data.meta.num_classes), row=row)

    def row_features(self, env_state: ClassificationEnvState, row: jax.Array) -> jax.Array:
        """``(d,)`` the base features of ``row`` as shown (decoded, optionally unit-norm)."""
        values = self.data.features[row]
        if self.data.categorical:
            x = env_state.codebook[jnp.arange(values.shape[0]), values]
        else:
            x = values.astype(float_dtype())
        if self.unit_norm:
            x = x / jnp.maximum(jnp.linalg.norm(x), 1e-12)
        return x

    def feedback(
        self, key: jax.Array, env_state: ClassificationEnvState, context: RowContext,
        action: jax.Array
    ) -> Feedback:
        dtype = float_dtype()
        correct = (action == self.data.labels[context.row]).astype(dtype)
        noise = self.noise_std * jax.random.normal(key, (), dtype)
        return Feedback(reward=correct + noise, regret=1.0 - correct)


@register_env
class ShuttleEnv(ClassificationEnv):
    """UCI Statlog (Shuttle) as a 7-armed bandit: d = 9, block features in R^63.

    Reads ``shuttle.trn`` (43,500 rows, about 78% class 1; the 58,000-row ``shuttle.csv`` that
    :func:`download` writes also works). Column-wise min-max to [-1, 1], a pool of 2,500 rows per
    run (Bae & Lee 2025, Fig. 2c; a uniform random policy has regret ``T (1 - 1/7)``, about 1,714 at
    T = 2,000). For Li et al. 2024's setting use ``unit_norm=True, normalize="none",
    noise_std=0.1``.
    """

    name = "shuttle"
    description = "UCI Statlog Shuttle, 7 classes as arms, block features (d = 63)"
    paper = "Bae & Lee 2025, Fig. 2c (also Li et al. 2024, Fig. 3; Oh et al. 2026, App. E.1.2)"

    dataset: str = struct.field(pytree_node=False, default="shuttle")


@register_env
class MagicEnv(ClassificationEnv):
    """UCI MAGIC Gamma Telescope as a 2-armed bandit: d = 10, block features in R^20.

    Reads ``magic04.data`` (19,020 rows); arm 1 is gamma ('g', y = 1 in Bae & Lee 2025, App. J), arm
    0 hadron ('h'). Column-wise min-max to [-1, 1], a pool of 2,500 rows per run (Bae & Lee 2025,
    Fig. 5a; random regret ``T / 2``).
    """

    name = "magic"
    description = "UCI MAGIC gamma telescope, 2 classes as arms, block features (d = 20)"
    paper = "Bae & Lee 2025, Fig. 5a (also Oh et al. 2026, App. E.1.2)"

    dataset: str = struct.field(pytree_node=False, default="magic")


@register_env
class DigitsEnv(ClassificationEnv):
    """scikit-learn's bundled 8x8 digits as a 10-armed bandit (offline stand-in for MNIST).

    1,797 rows, d = 64 (``image_size=4`` average-pools to 4x4, d = 16), block features in
    R^{10 d}, column-wise min-max to [-1, 1]; every run uses all rows (fewer than the 2,500 of
    the pool). Needs scikit-learn, nothing else.
    """

    name = "digits"
    description = "scikit-learn's 8x8 digits, 10 classes as arms (offline MNIST stand-in)"
    paper = "Bae & Lee 2025, Fig. 2a protocol (mnist) on the bundled digits"

    dataset: str = struct.field(pytree_node=False, default="digits")


class _EnsemblePPClassification(ClassificationEnv):
    """Ensemble++'s UCI encoding (Li et al. 2024, Sec. 5.2, App. F.2; the authors'
    ``Bandit_multi``): raw features, each row scaled to unit L2 norm, the rows shuffled and walked
    in order (one permutation of all rows per run, ``sampling="sequential"``, ``pool_size=None``;
    after N rounds the walk starts again, as the authors' cursor does), block features ``e_j (x)
    c``, reward ``1[a = y] + N(0, noise_std^2)``. The authors fix the order with seed 2022 for every
    run (``freq_task``); here each run draws its own order unless ``instance_seed`` is set (a JAX
    permutation: their sklearn shuffle of the 58,000-row OpenML file cannot be matched on
    another file anyway). T = 10^4 and 10 runs by default (the paper does not give them for these
    figures)."""

    #: the data set the registered subclass is fixed to.
    fixed_dataset: ClassVar[str] = ""
    agent_families = ("baseline", "neural-ensemble")  # the paper's methods
    default_horizon = 10_000
    default_runs = 10

    pool_size: int | None = struct.field(pytree_node=False, default=None)
    sampling: str = struct.field(pytree_node=False, default="sequential")
    normalize: str = struct.field(pytree_node=False, default="none")
    unit_norm: bool = struct.field(pytree_node=False, default=True)

    def _check_options(self) -> None:
        super()._check_options()
        if self.dataset != self.fixed_dataset:
            raise ValueError(f"{self.name}: dataset is fixed to {self.fixed_dataset!r}, got "
                             f"{self.dataset!r}; use the 'classification' environment for other "
                             "data sets")


@register_env
class ShuttleEppEnv(_EnsemblePPClassification):
    """UCI Statlog (Shuttle) as Ensemble++ runs it (Li et al. 2024, Fig. 3): 7 arms, d = 9, features
    in R^63.

    Each row's 9 raw features scaled to unit L2 norm, one shuffled pass over all rows per run,
    block (disjoint) features ``e_j (x) c``, ``reward = 1[a = y] + N(0, 0.1^2)``
    (App. F.2's "N(0, 0.1)" read as std 0.1). Reads ``shuttle.trn`` (43,500 rows; the paper used
    OpenML's 58,000-row file, which :func:`download` writes as ``shuttle.csv``). A uniform random
    policy has regret ``T (1 - 1/7)``; always playing class 1 has about ``0.21 T``.

    Example::

        env = jb.make_env("shuttle-epp")
    """

    name = "shuttle-epp"
    task = "shuttle"
    description = "UCI Shuttle with Ensemble++'s encoding (unit rows, shuffled, noise 0.1)"
    paper = "Li et al. 2024, Sec. 5.2, Fig. 3, App. F.2"
    fixed_dataset: ClassVar[str] = "shuttle"

    dataset: str = struct.field(pytree_node=False, default="shuttle")
    noise_std: float = 0.1


@register_env
class MushroomEppEnv(_EnsemblePPClassification):
    """UCI Mushroom as Ensemble++ runs it (Li et al. 2024, App. F.2; the encoding is ours): 2 arms,
    features in R^{2 d}.

    All 22 categorical attributes one-hot encoded (d = the number of category values present in
    the file; '?' is a category of its own), each row scaled to unit L2 norm (every row
    has 22 ones, so each is ``1/sqrt(22)``), one shuffled pass per run, block features,
    ``reward = 1[a = y] + N(0, noise_std^2)`` with arm 1 = edible. ``noise_std = 1.0``: the
    authors' mushroom preset (their code; App. F.2's 0.1 is stated for Shuttle).
    The file (``agaricus-lepiota.data``) is not shipped: pass ``path=``, set
    ``JAXBANDITS_DATA``, or fetch it once with :func:`download` (``download("mushroom")``); a
    missing file raises :class:`DataNotFoundError`.

    Example::

        env = jb.make_env("mushroom-epp", path="~/data/agaricus-lepiota.data")
    """

    name = "mushroom-epp"
    task = "mushroom"
    description = "UCI Mushroom with Ensemble++'s encoding (one-hot, unit rows, noise 1.0)"
    paper = "Li et al. 2024, App. F.2 (the encoding is ours)"
    fixed_dataset: ClassVar[str] = "mushroom"

    dataset: str = struct.field(pytree_node=False, default="mushroom")
    categorical: str = struct.field(pytree_node=False, default="onehot")
    noise_std: float = 1.0
