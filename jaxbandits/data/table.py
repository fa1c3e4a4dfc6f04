"""The table type an environment holds: labelled rows as device arrays, and their normalisation."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["NORMALIZATIONS", "DataTable", "TableMeta", "make_table", "normalize_features"]

#: Feature normalisations (:func:`normalize_features`).
NORMALIZATIONS: tuple[str, ...] = ("minmax", "minmax-row", "zscore", "none")


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
    column to 0 (Bae & Lee 2025's default reading). ``"minmax-row"``: the same with min and max
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
