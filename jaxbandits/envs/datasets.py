"""Classification data sets as K-armed contextual bandits (the disjoint / block construction).

A data set of rows ``(x, y)`` with ``x`` in R^d and ``y`` one of K classes becomes a K-armed
bandit (seed-002 section 4.3, after Zhou et al. 2020 and Riquelme et al. 2018): each round shows
one row, and arm ``k``'s feature vector is ``x`` placed in block ``k`` of a ``K * d`` vector,

    x^(k) = e_k (x) x = [0, ..., 0, x, 0, ..., 0]  in R^{K d},

(:func:`block_features`). The reward is 1 for the true class and 0 otherwise (plus optional
``N(0, noise_std^2)`` noise), so the exact pseudo-regret of arm ``a`` is ``1 - 1[a = y]``; a
uniformly random policy has expected regret ``T (1 - 1/K)``.

Rows. Each run draws its own **pool** of ``pool_size`` distinct rows (a uniformly random subset,
without replacement; the whole data set if it is smaller), and each round shows one pool row drawn
uniformly **with** replacement (seed-002 A22: "Figures 1 and 2 use 2500 vectors", read as a pool
of 2,500 samples per run). ``sampling="sequential"`` instead walks the run's pool in its random
order (round ``t`` shows pool row ``t mod pool_size``): with ``pool_size=None`` that is one random
permutation of the whole data set per run, the "shuffled, without replacement" protocol of the
Ensemble++ and dueling papers (seed-001 E4, seed-004 A21).

Normalisation (seed-002 section 4.3, A12), done once when the data are loaded:

* ``"minmax"`` (default): each feature column to ``[-1, 1]`` over the data set,
  ``2 (x_j - min_j) / (max_j - min_j) - 1`` (a constant column becomes 0);
* ``"minmax-row"``: the paper's formula read literally, min and max over the coordinates of each
  row;
* ``"zscore"``: each column to mean 0, standard deviation 1; ``"none"``: raw values.

``unit_norm=True`` then scales each shown ``x`` to unit L2 norm (seed-001's shuttle and mushroom,
seed-004's UCI tasks). Categorical data (mushroom) use ``categorical="random"`` (seed-002: each
category of each column becomes one value drawn uniformly in ``[-1, 1]``, drawn per run; '?' is a
category of its own) or ``categorical="onehot"`` (seed-001 A14: one-hot columns, then the
normalisation above). ``shuttle-epp`` and ``mushroom-epp`` (:class:`ShuttleEppEnv`,
:class:`MushroomEppEnv`) preset Ensemble++'s encoding: raw (one-hot) features, unit rows, one
shuffled pass per run, noise std 0.1 (shuttle) or 1.0 (mushroom).

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
phoneme    5,404    5       2     ``phoneme.csv`` (OpenML 1489; seed-002 A13)
mnist      60,000   196     10    ``mnist.npz`` (Keras layout) or ``train-images-idx3-ubyte``
                                  (+ labels); 28x28 average-pooled to 14x14 (seed-002 A11;
                                  ``image_size=7`` gives 49)
covertype  581,012  54      7     ``covtype.data.gz`` (UCI Covertype)
=========  =======  ======  ====  ===========================================================

Where files are looked for, in order: an explicit ``path=`` (a file or a folder), the folder in
the ``JAXBANDITS_DATA`` environment variable, ``../shared/data`` next to the repository, and the
download cache (``JAXBANDITS_CACHE``, default ``~/.cache/jaxbandits``); inside each folder also in
its ``uci/`` and ``mnist/`` subfolders. Nothing is ever downloaded implicitly: a missing file
raises :class:`DataNotFoundError`, which says where to put the file and how to fetch it once with
:func:`download`.

Example::

    env = jb.make_env("shuttle")                       # reads shuttle.trn
    env = jb.make_env("classification", dataset="mushroom", path="~/data/agaricus-lepiota.data")
    result = jb.simulate(env, jb.make_agent("lin-ucb"), key, horizon=2_000, num_runs=10)
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import os
import struct as _struct
import urllib.request
from collections.abc import Callable
from pathlib import Path
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
from jaxbandits.registry import register_env

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

DATA_ENV_VAR = "JAXBANDITS_DATA"
CACHE_ENV_VAR = "JAXBANDITS_CACHE"
REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
SUBFOLDERS = ("", "uci", "mnist")

NORMALIZATIONS: tuple[str, ...] = ("minmax", "minmax-row", "zscore", "none")
SAMPLINGS: tuple[str, ...] = ("pool", "sequential")
CATEGORICAL_ENCODINGS: tuple[str, ...] = ("random", "onehot")


class DataNotFoundError(FileNotFoundError, ValueError):
    """A data file is missing; the message says where to put it and how to download it.

    It is a ``FileNotFoundError`` and a ``ValueError``, so the command line reports it as a
    usage error.
    """


@dataclasses.dataclass(frozen=True)
class DatasetInfo:
    """What a data set is and where it comes from.

    Attributes:
      name: the key in :data:`DATASETS`.
      files: file names the loader reads, in order of preference (empty when bundled).
      classes: the raw label of each arm, in arm order (``None``: sorted unique labels).
      num_classes: K.
      dim: the base feature dimension d with default options.
      rows: the number of rows of the preferred file.
      source: where the data come from.
      url: what :func:`download` fetches (a direct URL, or ``openml:<id>``; empty if bundled).
    """

    name: str
    files: tuple[str, ...]
    classes: tuple[str, ...] | None
    num_classes: int
    dim: int
    rows: int
    source: str
    url: str


_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"

DATASETS: dict[str, DatasetInfo] = {
    info.name: info
    for info in (
        DatasetInfo("shuttle", ("shuttle.trn", "shuttle.csv"), tuple("1234567"), 7, 9, 43_500,
                    "UCI Statlog (Shuttle), CC BY 4.0", "openml:40685"),
        DatasetInfo("magic", ("magic04.data", "magic.csv"), ("h", "g"), 2, 10, 19_020,
                    "UCI MAGIC Gamma Telescope, CC BY 4.0", f"{_UCI}/magic/magic04.data"),
        DatasetInfo("digits", (), tuple("0123456789"), 10, 64, 1_797,
                    "scikit-learn's bundled copy of the UCI optical digits (8x8)", ""),
        DatasetInfo("mushroom", ("agaricus-lepiota.data",), ("p", "e"), 2, 22,
                    8_124, "UCI Mushroom, CC BY 4.0",
                    f"{_UCI}/mushroom/agaricus-lepiota.data"),
        DatasetInfo("banknote", ("data_banknote_authentication.txt", "banknote.csv"), ("0", "1"),
                    2, 4, 1_372, "UCI Banknote Authentication, CC BY 4.0",
                    f"{_UCI}/00267/data_banknote_authentication.txt"),
        DatasetInfo("phoneme", ("phoneme.csv", "phoneme.arff", "phoneme.dat"), None, 2, 5, 5_404,
                    "OpenML 1489 (ELENA phoneme; seed-002 A13)", "openml:1489"),
        DatasetInfo("mnist", ("mnist.npz", "train-images-idx3-ubyte.gz",
                              "train-images-idx3-ubyte"), tuple("0123456789"), 10, 196, 60_000,
                    "LeCun et al. 1998 (training set)",
                    "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"),
        DatasetInfo("covertype", ("covtype.data.gz", "covtype.data"),
                    tuple("1234567"), 7, 54, 581_012, "UCI Covertype, CC BY 4.0",
                    f"{_UCI}/covtype/covtype.data.gz"),
    )
}


# ------------------------------------------------------------------------------------------------
# The data table an environment holds.


@dataclasses.dataclass(frozen=True)
class TableMeta:
    """Static description of a :class:`DataTable` (hashable: part of the pytree structure)."""

    name: str
    num_rows: int
    dim: int
    num_classes: int
    num_categories: int  # > 0: features are integer category codes with this many values
    digest: str
    load_key: tuple | None = None


@jax.tree_util.register_pytree_node_class
class DataTable:
    """A labelled data set held as device arrays: the leaves an environment carries.

    Attributes:
      features: ``(N, d)`` float32 features (normalised), or int32 category codes in
        ``[0, num_categories)`` for categorical data.
      labels: ``(N,)`` int32 classes in ``[0, K)`` (the arm that pays 1).
      meta: the static :class:`TableMeta` (name, sizes, content hash).

    Its ``repr`` names the data set and its content hash instead of printing the rows, so
    results and checkpoints record which data were used without copying them.
    """

    def __init__(self, features: Any, labels: Any, meta: TableMeta):
        self.features, self.labels, self.meta = features, labels, meta

    def tree_flatten(self):
        return (self.features, self.labels), self.meta

    @classmethod
    def tree_unflatten(cls, meta: TableMeta, leaves):
        return cls(*leaves, meta)

    @property
    def categorical(self) -> bool:
        return self.meta.num_categories > 0

    def __repr__(self) -> str:
        m = self.meta
        kind = f", categories={m.num_categories}" if m.num_categories else ""
        return (f"DataTable({m.name!r}, rows={m.num_rows}, dim={m.dim}, classes={m.num_classes}"
                f"{kind}, sha1={m.digest})")


def make_table(
    features: Any,
    labels: Any,
    *,
    name: str = "custom",
    num_classes: int | None = None,
    normalize: str = "none",
    categorical: bool = False,
) -> DataTable:
    """Builds a :class:`DataTable` from your own arrays (then ``ClassificationEnv(data=table)``).

    Args:
      features: ``(N, d)`` numbers (or, with ``categorical=True``, integer codes ``>= 0``).
      labels: ``(N,)`` integer classes in ``[0, K)``.
      name: a label recorded in results.
      num_classes: K (default: ``max(labels) + 1``).
      normalize: one of ``"minmax"``, ``"minmax-row"``, ``"zscore"``, ``"none"``
        (:func:`normalize_features`); ignored for categorical codes.
      categorical: the features are category codes (each shown as a per-run random value).

    Example::

        table = make_table(X, y, name="iris", normalize="minmax")
        env = jb.envs.ClassificationEnv(data=table)
    """
    features = np.asarray(features)
    labels = np.asarray(labels)
    if features.ndim != 2 or labels.shape != (features.shape[0],):
        raise ValueError(f"features must be (N, d) and labels (N,), got {features.shape} and "
                         f"{labels.shape}")
    if features.shape[0] == 0:
        raise ValueError("the data set has no rows")
    if not np.issubdtype(labels.dtype, np.integer) or labels.min() < 0:
        raise ValueError("labels must be integers >= 0 (class indices)")
    num_classes = int(labels.max()) + 1 if num_classes is None else int(num_classes)
    if num_classes < 2 or labels.max() >= num_classes:
        raise ValueError(f"labels must lie in [0, num_classes={num_classes}) with at least two "
                         "classes")
    if categorical:
        if not np.issubdtype(features.dtype, np.integer) or features.min() < 0:
            raise ValueError("categorical features must be integer codes >= 0")
        values = features.astype(np.int32)
        num_categories = int(values.max()) + 1
    else:
        if not np.all(np.isfinite(features)):
            raise ValueError(f"{name}: features contain NaN or inf (impute them first)")
        values = normalize_features(features.astype(np.float64), normalize).astype(np.float32)
        num_categories = 0
    labels = labels.astype(np.int32)
    digest = hashlib.sha1(values.tobytes() + labels.tobytes()).hexdigest()[:12]
    meta = TableMeta(name=name, num_rows=int(values.shape[0]), dim=int(values.shape[1]),
                     num_classes=num_classes, num_categories=num_categories, digest=digest)
    return DataTable(jnp.asarray(values), jnp.asarray(labels), meta)


def normalize_features(features: np.ndarray, how: str = "minmax") -> np.ndarray:
    """Rescales ``(N, d)`` features (NumPy, once at load time).

    ``"minmax"``: each column to ``[-1, 1]``, ``2 (x_j - min_j) / (max_j - min_j) - 1``, a constant
    column to 0 (seed-002's default reading, A12). ``"minmax-row"``: the same with min and max
    over the coordinates of each row (the formula read literally). ``"zscore"``: each column to
    mean 0 and standard deviation 1 (a constant column to 0). ``"none"``: unchanged.
    """
    if how not in NORMALIZATIONS:
        raise ValueError(f"normalize must be one of {NORMALIZATIONS}, got {how!r}")
    x = np.asarray(features, dtype=np.float64)
    if how == "none":
        return x
    if how == "zscore":
        std = x.std(axis=0)
        return np.where(std > 0, (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0), 0.0)
    axis, keep = (1, True) if how == "minmax-row" else (0, False)
    low = x.min(axis=axis, keepdims=keep)
    span = x.max(axis=axis, keepdims=keep) - low
    return np.where(span > 0, 2.0 * (x - low) / np.where(span > 0, span, 1.0) - 1.0, 0.0)


def block_features(x: jax.Array, num_arms: int) -> jax.Array:
    """The disjoint encoding: ``(K, K d)`` arm features, row ``k`` holding ``x`` in block ``k``.

    ``block_features(x, K)[k] = e_k (x) x`` for ``x`` of shape ``(d,)`` (seed-002 section 4.3,
    ``x^(k) = [0, ..., 0, x, 0, ..., 0]``).
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
    (seed-002 section 4.3). The data are read at construction (see the module docstring for the
    files, the search order and the normalisations) and held as the leaf ``data``.

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
    paper = "seed-002 section 4.3 (Riquelme et al. 2018 / Zhou et al. 2020 protocol)"
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
    run (seed-002 Fig. 2c; a uniform random policy has regret ``T (1 - 1/7)``, about 1,714 at
    T = 2,000). For seed-001's setting use ``unit_norm=True, normalize="none", noise_std=0.1``.
    """

    name = "shuttle"
    description = "UCI Statlog Shuttle, 7 classes as arms, block features (d = 63)"
    paper = "seed-002 Fig. 2c (also seed-001 E4, seed-004)"

    dataset: str = struct.field(pytree_node=False, default="shuttle")


@register_env
class MagicEnv(ClassificationEnv):
    """UCI MAGIC Gamma Telescope as a 2-armed bandit: d = 10, block features in R^20.

    Reads ``magic04.data`` (19,020 rows); arm 1 is gamma ('g', y = 1 in seed-002 App. J), arm 0
    hadron ('h'). Column-wise min-max to [-1, 1], a pool of 2,500 rows per run (seed-002
    Fig. 5a; random regret ``T / 2``).
    """

    name = "magic"
    description = "UCI MAGIC gamma telescope, 2 classes as arms, block features (d = 20)"
    paper = "seed-002 Fig. 5a (also seed-004)"

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
    paper = "seed-002 Fig. 2a protocol (mnist) on the bundled digits"

    dataset: str = struct.field(pytree_node=False, default="digits")


class _EnsemblePPClassification(ClassificationEnv):
    """Ensemble++'s UCI encoding (seed-001 E4, A14; the authors' ``Bandit_multi``): raw features,
    each row scaled to unit L2 norm, the rows shuffled and walked in order (one permutation of
    all rows per run, ``sampling="sequential"``, ``pool_size=None``; after N rounds the walk
    starts again, as the authors' cursor does), block features ``e_j (x) c``, reward
    ``1[a = y] + N(0, noise_std^2)``. The authors fix the order with seed 2022 for every run
    (``freq_task``); here each run draws its own order unless ``instance_seed`` is set (a JAX
    permutation: their sklearn shuffle of the 58,000-row OpenML file cannot be matched on
    another file anyway). T = 10^4 and 10 runs by default (A10)."""

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
    """UCI Statlog (Shuttle) as Ensemble++ runs it (seed-001 E4): 7 arms, d = 9, features in R^63.

    Each row's 9 raw features scaled to unit L2 norm, one shuffled pass over all rows per run,
    block (disjoint) features ``e_j (x) c``, ``reward = 1[a = y] + N(0, 0.1^2)`` (A15: noise std
    0.1). Reads ``shuttle.trn`` (43,500 rows; the paper used OpenML's 58,000-row file, which
    :func:`download` writes as ``shuttle.csv``). A uniform random policy has regret
    ``T (1 - 1/7)``; always playing class 1 has about ``0.21 T``.

    Example::

        env = jb.make_env("shuttle-epp")
    """

    name = "shuttle-epp"
    task = "shuttle"
    description = "UCI Shuttle with Ensemble++'s encoding (unit rows, shuffled, noise 0.1)"
    paper = "seed-001 (Ensemble++ E4, UCI Shuttle)"
    fixed_dataset: ClassVar[str] = "shuttle"

    dataset: str = struct.field(pytree_node=False, default="shuttle")
    noise_std: float = 0.1


@register_env
class MushroomEppEnv(_EnsemblePPClassification):
    """UCI Mushroom as Ensemble++ runs it (seed-001 E10, A14): 2 arms, features in R^{2 d}.

    All 22 categorical attributes one-hot encoded (d = the number of category values present in
    the file; '?' is a category of its own), each row scaled to unit L2 norm (every row
    has 22 ones, so each is ``1/sqrt(22)``), one shuffled pass per run, block features,
    ``reward = 1[a = y] + N(0, noise_std^2)`` with arm 1 = edible. ``noise_std = 1.0``: the
    authors' mushroom preset (seed-001 section 2.8 and E10; E4's 0.1 is stated for Shuttle).
    The file (``agaricus-lepiota.data``) is not shipped: pass ``path=``, set
    ``JAXBANDITS_DATA``, or fetch it once with :func:`download` (``download("mushroom")``); a
    missing file raises :class:`DataNotFoundError`.

    Example::

        env = jb.make_env("mushroom-epp", path="~/data/agaricus-lepiota.data")
    """

    name = "mushroom-epp"
    task = "mushroom"
    description = "UCI Mushroom with Ensemble++'s encoding (one-hot, unit rows, noise 1.0)"
    paper = "seed-001 (Ensemble++ E10 and A14, UCI Mushroom)"
    fixed_dataset: ClassVar[str] = "mushroom"

    dataset: str = struct.field(pytree_node=False, default="mushroom")
    categorical: str = struct.field(pytree_node=False, default="onehot")
    noise_std: float = 1.0


# ------------------------------------------------------------------------------------------------
# Finding, loading and downloading files.


def cache_dir() -> Path:
    """The download cache: ``$JAXBANDITS_CACHE`` or ``~/.cache/jaxbandits``."""
    env = os.environ.get(CACHE_ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "jaxbandits"


def search_dirs() -> list[Path]:
    """The folders searched for data files when no ``path`` is given, in order."""
    dirs = []
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        dirs += [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    if SHARED_DATA_DIR.is_dir():
        dirs.append(SHARED_DATA_DIR)
    dirs.append(cache_dir())
    return dirs


def locate_file(names, path: str | os.PathLike | None = None,
                subfolders: tuple[str, ...] = ("",)) -> tuple[Path | None, list[Path]]:
    """``(file, roots)``: ``path`` itself if it is a file, else the first of ``names`` in a
    ``subfolders`` entry of the folder ``path`` (default: every folder of :func:`search_dirs`),
    or None; ``roots`` are the folders searched (for the not-found message)."""
    if path is not None:
        given = Path(path).expanduser()
        if given.is_file():
            return given, [given]
        roots = [given]
    else:
        roots = search_dirs()
    for root in roots:
        for sub in subfolders:
            folder = root / sub if sub else root
            for name in names:
                if (folder / name).is_file():
                    return folder / name, roots
    return None, roots


def find_data_file(dataset: str, path: str | os.PathLike | None = None) -> Path:
    """The file :func:`load_dataset` reads for ``dataset``; raises :class:`DataNotFoundError`.

    ``path`` may name the file itself or a folder holding it; without it the folders of
    :func:`search_dirs` are tried (each also with its ``uci/`` and ``mnist/`` subfolders).
    """
    info = _info(dataset)
    if not info.files:
        raise ValueError(f"{dataset} is bundled with scikit-learn and has no file")
    found, roots = locate_file(info.files, path, SUBFOLDERS)
    if found is not None:
        return found
    raise DataNotFoundError(_missing_message(info, path, roots))


def _missing_message(info: DatasetInfo, path, roots: list[Path]) -> str:
    where = f"path={str(path)!r}" if path is not None else "any of: " + ", ".join(
        str(r) for r in roots)
    how = (f"download it once with `python -c \"import jaxbandits.envs.datasets as d; "
           f"d.download('{info.name}')\"` (into {cache_dir()}; source: {info.url})")
    return (f"{info.name}: data file not found (looked for {' or '.join(info.files)} in {where}, "
            f"and their uci/ and mnist/ subfolders). Put the file ({info.source}) in one of those "
            f"folders, pass path=<file or folder>, set {DATA_ENV_VAR}=<folder>, or {how}.")


def load_dataset(
    dataset: str,
    path: str | os.PathLike | None = None,
    *,
    normalize: str = "minmax",
    categorical: str = "random",
    image_size: int | None = None,
) -> DataTable:
    """Reads ``dataset`` (a name in :data:`DATASETS`) into a normalised :class:`DataTable`.

    Args:
      dataset: ``"shuttle"``, ``"magic"``, ``"digits"``, ``"mushroom"``, ``"banknote"``,
        ``"phoneme"``, ``"mnist"`` or ``"covertype"``.
      path: the file, or a folder holding it (default: :func:`search_dirs`).
      normalize: see :func:`normalize_features` (not applied to ``categorical="random"`` codes).
      categorical: ``"random"`` (integer codes, one per-run random value each) or ``"onehot"``.
      image_size: pooled image side for ``digits`` / ``mnist``.

    Tables are cached per file (and modification time) and options.
    """
    info = _info(dataset)
    _check_value("normalize", normalize, NORMALIZATIONS)
    _check_value("categorical", categorical, CATEGORICAL_ENCODINGS)
    if info.files:
        file = find_data_file(dataset, path).resolve()
        stamp = (str(file), file.stat().st_mtime_ns)
    else:
        stamp = ("bundled", 0)
    table = _load_cached(dataset, stamp, normalize, categorical, image_size)
    key = (dataset, None if path is None else str(path), normalize, categorical, image_size)
    return DataTable(table.features, table.labels, dataclasses.replace(table.meta, load_key=key))


def _check_value(field: str, value: Any, choices: tuple[str, ...]) -> None:
    """Raises ``ValueError`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{field} must be one of {choices}, got {value!r}")


@functools.lru_cache(maxsize=8)
def _load_cached(dataset, stamp, normalize, categorical, image_size) -> DataTable:
    info = _info(dataset)
    file = None if stamp[0] == "bundled" else Path(stamp[0])
    features, raw_labels, is_categorical = _READERS[dataset](file, image_size)
    labels = _class_indices(info, raw_labels, file)
    if is_categorical and categorical == "onehot":
        features, is_categorical = _one_hot(features), False
    return make_table(features, labels, name=dataset, num_classes=info.num_classes,
                      normalize=normalize, categorical=is_categorical)


def _info(dataset: str) -> DatasetInfo:
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r} (known: {', '.join(DATASETS)})")
    return DATASETS[dataset]


def _class_indices(info: DatasetInfo, raw: np.ndarray, file: Path | None) -> np.ndarray:
    raw = np.asarray([_clean_label(v) for v in raw])
    classes = info.classes
    if classes is None:
        values = sorted(set(raw.tolist()), key=lambda v: (len(v), v))
        if len(values) != info.num_classes:
            raise ValueError(f"{info.name}: expected {info.num_classes} classes in {file}, found "
                             f"{values[:10]}")
        classes = tuple(values)
    index = {c: i for i, c in enumerate(classes)}
    unknown = sorted(set(raw.tolist()) - set(index))
    if unknown:
        raise ValueError(f"{info.name}: unexpected labels {unknown[:5]} in {file} (expected "
                         f"{list(classes)})")
    return np.asarray([index[v] for v in raw], dtype=np.int32)


def _clean_label(value: Any) -> str:
    text = str(value).strip().strip("'\"")
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number == int(number) else text


def _read_table(path: Path, label_column: int = -1) -> tuple[list[list[str]], list[str]]:
    """Rows of a comma- or whitespace-separated text file (``.gz`` too; ARFF headers and a
    non-numeric header line skipped): ``(feature cells, label cells)``."""
    opener = gzip.open if path.suffix == ".gz" else open
    cells, labels = [], []
    with opener(path, "rt") as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "%@#":
                continue
            parts = [p.strip() for p in (line.split(",") if "," in line else line.split())]
            label = parts.pop(label_column)
            cells.append(parts)
            labels.append(label)
    if cells and label_column == -1 and not _is_number(cells[0][0]):
        cells, labels = cells[1:], labels[1:]  # a header line
    if not cells:
        raise ValueError(f"{path} holds no rows")
    return cells, labels


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _numeric(path: Path, image_size: int | None, label_column: int = -1):
    cells, labels = _read_table(path, label_column)
    try:
        features = np.asarray([[float(c) if c not in ("", "?") else 0.0 for c in row]
                               for row in cells])  # missing -> 0 (seed-002 App. J)
    except ValueError as err:
        raise ValueError(f"{path}: non-numeric feature ({err})") from err
    return features, labels, False


def _read_mushroom(path: Path, image_size: int | None):
    cells, labels = _read_table(path, label_column=0)
    columns = list(zip(*cells, strict=True))
    codes = np.stack([np.unique(np.asarray(col), return_inverse=True)[1] for col in columns], 1)
    return codes.astype(np.int64), labels, True


def _read_digits(path: Path | None, image_size: int | None):
    try:
        from sklearn.datasets import load_digits
    except ImportError as err:  # pragma: no cover - depends on the installation
        raise ImportError("the digits data set needs scikit-learn: pip install scikit-learn"
                          ) from err
    bunch = load_digits()
    images = _pool_images(np.asarray(bunch.images, np.float64), image_size or 8, "digits")
    return images, bunch.target.astype(str), False


def _read_mnist(path: Path, image_size: int | None):
    if path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as data:
            images, labels = data["x_train"], data["y_train"]
    else:
        images = _read_idx(path)
        label_name = path.name.replace("images-idx3", "labels-idx1")
        labels = _read_idx(path.with_name(label_name))
    images = _pool_images(np.asarray(images, np.float64), image_size or 14, "mnist")
    return images, np.asarray(labels).astype(str), False


def _read_idx(path: Path) -> np.ndarray:
    if not path.is_file():
        raise DataNotFoundError(f"mnist: {path} is missing (the idx images need their labels "
                                "file beside them)")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    shape = _struct.unpack(">" + "I" * ndim, raw[4: 4 + 4 * ndim])
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(shape)


def _read_covertype(path: Path, image_size: int | None):
    data = np.loadtxt(path, delimiter=",", dtype=np.float64)
    return data[:, :-1], data[:, -1].astype(np.int64).astype(str), False


def _pool_images(images: np.ndarray, size: int, name: str) -> np.ndarray:
    """``(N, s, s)`` images average-pooled to ``(N, size * size)``."""
    n, side = images.shape[0], images.shape[1]
    if side % size:
        raise ValueError(f"{name}: image_size must divide {side}, got {size}")
    f = side // size
    return images.reshape(n, size, f, size, f).mean(axis=(2, 4)).reshape(n, size * size)


def _one_hot(codes: np.ndarray) -> np.ndarray:
    blocks = [np.eye(int(col.max()) + 1)[col] for col in codes.T]
    return np.concatenate(blocks, axis=1)


_READERS: dict[str, Callable] = {
    "shuttle": _numeric,
    "magic": _numeric,
    "digits": _read_digits,
    "mushroom": _read_mushroom,
    "banknote": _numeric,
    "phoneme": _numeric,
    "mnist": _read_mnist,
    "covertype": _read_covertype,
}


def download(dataset: str, directory: str | os.PathLike | None = None, *,
             force: bool = False) -> Path:
    """Downloads ``dataset`` once into ``directory`` (default: :func:`cache_dir`); returns the file.

    Only this function touches the network, and only when called. UCI files and MNIST come from
    their original URLs (:data:`DATASETS`); shuttle (all 58,000 rows) and phoneme come from
    OpenML through scikit-learn's ``fetch_openml`` and are written as ``<name>.csv`` (features,
    then the label). An existing file is kept unless ``force``.

    Example::

        from jaxbandits.envs.datasets import download
        download("mushroom")                # then jb.make_env("classification", dataset="mushroom")
    """
    info = _info(dataset)
    if not info.url:
        raise ValueError(f"{dataset} is bundled with scikit-learn; nothing to download")
    folder = Path(directory).expanduser() if directory is not None else cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    if info.url.startswith("openml:"):
        target = folder / f"{dataset}.csv"
        if force or not target.is_file():
            _fetch_openml(int(info.url.split(":")[1]), target, folder / "openml")
        return target
    target = folder / info.url.rsplit("/", 1)[1]
    if force or not target.is_file():
        tmp = target.with_suffix(target.suffix + ".part")
        urllib.request.urlretrieve(info.url, tmp)  # noqa: S310 - fixed https URLs
        tmp.replace(target)
    return target


def _fetch_openml(data_id: int, target: Path, home: Path) -> None:
    from sklearn.datasets import fetch_openml

    bunch = fetch_openml(data_id=data_id, as_frame=False, parser="liac-arff",
                         data_home=str(home))
    features = np.asarray(bunch.data, dtype=np.float64)
    labels = np.asarray(bunch.target).astype(str)
    tmp = target.with_suffix(".csv.part")
    with open(tmp, "w") as f:
        f.write(",".join([f"x{j}" for j in range(features.shape[1])] + ["label"]) + "\n")
        for row, label in zip(features, labels, strict=True):
            f.write(",".join(repr(float(v)) for v in row) + f",{label}\n")
    tmp.replace(target)
