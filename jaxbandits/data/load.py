"""``load_dataset``: a data set's name to a normalised :class:`~jaxbandits.data.DataTable`.

Finds the file (:mod:`~jaxbandits.data.locate`), reads it (:mod:`~jaxbandits.data.readers`),
maps its labels to arms and checks that it can be the data set: every label one of the data
set's classes, at least 2 classes present, and at least ``2 K`` rows
(:data:`~jaxbandits.data.catalog.MIN_ROWS_PER_CLASS` per class on average), each failure a
:class:`~jaxbandits.data.DataFileError` naming the file.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from pathlib import Path
from typing import Any

import numpy as np

from jaxbandits.data.catalog import CATEGORICAL_ENCODINGS, DatasetInfo, dataset_info
from jaxbandits.data.locate import find_data_file
from jaxbandits.data.readers import READERS, DataFileError
from jaxbandits.data.table import NORMALIZATIONS, DataTable, make_table

__all__ = ["load_dataset"]


def load_dataset(
    dataset: str,
    path: str | os.PathLike | None = None,
    *,
    normalize: str = "minmax",
    categorical: str = "random",
    image_size: int | None = None,
) -> DataTable:
    """Reads ``dataset`` (a name in :data:`~jaxbandits.data.DATASETS`) into a normalised table.

    Args:
      dataset: ``"shuttle"``, ``"magic"``, ``"digits"``, ``"mushroom"``, ``"banknote"``,
        ``"phoneme"``, ``"mnist"`` or ``"covertype"``.
      path: the file, or a folder holding it (default: :func:`~jaxbandits.data.search_dirs`).
      normalize: see :func:`~jaxbandits.data.normalize_features` (not applied to
        ``categorical="random"`` codes).
      categorical: ``"random"`` (integer codes, one per-run random value each) or ``"onehot"``.
      image_size: pooled image side for ``digits`` / ``mnist``.

    Raises:
      DataNotFoundError: no file (the message says where it looked and how to get one).
      DataFileError: the file is not the data set (see the module docstring).

    Tables are cached per file (and modification time) and options.
    """
    info = dataset_info(dataset)
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
    info = dataset_info(dataset)
    file = None if stamp[0] == "bundled" else Path(stamp[0])
    features, raw_labels, is_categorical = READERS[dataset](file, info, image_size)
    labels = _class_indices(info, raw_labels, file)
    if is_categorical and categorical == "onehot":
        features, is_categorical = _one_hot(features), False
    try:
        return make_table(features, labels, name=dataset, num_classes=info.num_classes,
                          normalize=normalize, categorical=is_categorical)
    except ValueError as err:  # e.g. NaN features: say which file
        raise DataFileError(f"{file}: {err}") from err


def _class_indices(info: DatasetInfo, raw: np.ndarray, file: Path | None) -> np.ndarray:
    """The arm of each raw label, checked: known labels, >= 2 classes, >= ``info.min_rows``."""
    raw = np.asarray([_clean_label(v) for v in raw])
    classes = info.classes
    if classes is None:
        values = sorted(set(raw.tolist()), key=lambda v: (len(v), v))
        if len(values) != info.num_classes:
            raise DataFileError(f"{info.name}: expected {info.num_classes} classes in {file}, "
                                f"found {values[:10]}")
        classes = tuple(values)
    index = {c: i for i, c in enumerate(classes)}
    unknown = sorted(set(raw.tolist()) - set(index))
    if unknown:
        raise DataFileError(f"{info.name}: unexpected labels {unknown[:5]} in {file} (expected "
                            f"{list(classes)})")
    present = sorted(set(raw.tolist()), key=index.get)
    if len(present) < 2:
        raise DataFileError(f"{info.name}: every row of {file} has class {present[0]!r}; a "
                            "classification bandit needs at least 2 classes (is the class "
                            "column the right one?)")
    if raw.size < info.min_rows:
        raise DataFileError(f"{info.name}: {file} holds {raw.size} rows, fewer than the "
                            f"{info.min_rows} (2 per class) a file of {info.name} needs (the "
                            f"full data set has {info.rows:,}); is it cut short?")
    return np.asarray([index[v] for v in raw], dtype=np.int32)


def _clean_label(value: Any) -> str:
    text = str(value).strip().strip("'\"")
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number == int(number) else text


def _one_hot(codes: np.ndarray) -> np.ndarray:
    blocks = [np.eye(int(col.max()) + 1)[col] for col in codes.T]
    return np.concatenate(blocks, axis=1)
