"""Readers: one data file (or bundled copy) to NumPy arrays, with errors that name the file.

Every reader checks what it reads: a text table must have the data set's known width (``d``
feature columns and the class, :class:`~jaxbandits.data.DatasetInfo`), a binary file its
format's header, and bytes that cannot be decoded raise :class:`DataFileError` naming the file
instead of a bare ``UnicodeDecodeError``. Readers return raw labels; mapping them to arms and
the class and row checks are :func:`~jaxbandits.data.load_dataset`'s.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import math
import struct as _struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from jaxbandits.data.catalog import DatasetInfo
from jaxbandits.data.locate import DataNotFoundError

__all__ = ["READERS", "DataFileError", "is_parquet", "read_hate_speech", "read_obd_campaign",
           "read_parquet", "reading"]


class DataFileError(ValueError):
    """A data file exists but does not hold what it should (undecodable bytes, the wrong number
    of columns, too few rows or classes ...); the message names the file, and the line or
    column where one is at fault."""


@contextlib.contextmanager
def reading(file: Path, what: str = "data") -> Iterator[None]:
    """Turns the errors of reading ``file`` into :class:`DataFileError` naming it.

    Undecodable bytes, a broken gzip or zip archive and the ``ValueError`` / ``KeyError`` of a
    parser (which do not name the file) get the file's name; errors that already name it
    (:class:`DataFileError`, :class:`~jaxbandits.data.DataNotFoundError`) pass unchanged."""
    try:
        yield
    except (DataFileError, DataNotFoundError):
        raise
    except UnicodeDecodeError as err:
        bad = err.object[err.start: err.start + 8]
        raise DataFileError(f"{file}: not a text file of {what} (bytes {bad!r} are not UTF-8)"
                            ) from err
    except (gzip.BadGzipFile, zipfile.BadZipFile, zlib.error, EOFError) as err:
        raise DataFileError(f"{file}: not a readable compressed file of {what} ({err})") from err
    except KeyError as err:
        missing = err.args[0] if err.args else err
        raise DataFileError(f"{file}: cannot read the {what} (missing column or key: {missing})"
                            ) from err
    except ValueError as err:
        raise DataFileError(f"{file}: cannot read the {what} ({err})") from err


def _open_text(file: Path):
    opener = gzip.open if file.suffix == ".gz" else open
    return opener(file, "rt", encoding="utf-8", newline="")


# ------------------------------------------------------------------------------------------------
# The classification data sets: ``reader(file, info, image_size) -> (features, labels,
# categorical)``.


def _read_rows(file: Path, info: DatasetInfo, label_column: int = -1
               ) -> tuple[list[list[str]], list[str], list[int]]:
    """Rows of a comma- or whitespace-separated text file (``.gz`` too; ARFF headers, comments
    and a non-numeric header line skipped): ``(feature cells, label cells, line numbers)``.
    Every row must have ``info.dim + 1`` cells."""
    width = info.dim + 1
    cells, labels, lines = [], [], []
    with reading(file, info.name), _open_text(file) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line[0] in "%@#":
                continue
            parts = [p.strip() for p in (line.split(",") if "," in line else line.split())]
            if len(parts) != width:
                raise DataFileError(
                    f"{file}, line {number}: {len(parts)} columns, expected {width} (the "
                    f"{info.dim} features of {info.name} and its class)")
            labels.append(parts.pop(label_column))
            cells.append(parts)
            lines.append(number)
    if cells and label_column == -1 and not _is_number(cells[0][0]):
        cells, labels, lines = cells[1:], labels[1:], lines[1:]  # a header line
    if not cells:
        raise DataFileError(f"{file} holds no rows")
    return cells, labels, lines


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _numeric(file: Path, info: DatasetInfo, image_size: int | None):
    cells, labels, lines = _read_rows(file, info)
    try:
        features = np.asarray([[float(c) if c not in ("", "?") else 0.0 for c in row]
                               for row in cells])  # missing -> 0 (Bae & Lee 2025, App. J)
    except ValueError:
        number, column, cell = next((n, j, c) for row, n in zip(cells, lines, strict=True)
                                    for j, c in enumerate(row, 1)
                                    if c not in ("", "?") and not _is_number(c))
        raise DataFileError(f"{file}, line {number}, column {column}: non-numeric feature "
                            f"{cell!r}") from None
    return features, labels, False


def _read_mushroom(file: Path, info: DatasetInfo, image_size: int | None):
    cells, labels, _ = _read_rows(file, info, label_column=0)
    columns = list(zip(*cells, strict=True))
    codes = np.stack([np.unique(np.asarray(col), return_inverse=True)[1] for col in columns], 1)
    return codes.astype(np.int64), labels, True


def _read_digits(file: Path | None, info: DatasetInfo, image_size: int | None):
    try:
        from sklearn.datasets import load_digits
    except ImportError as err:  # pragma: no cover - depends on the installation
        raise ImportError("the digits data set needs scikit-learn: pip install scikit-learn"
                          ) from err
    bunch = load_digits()
    images = pool_images(np.asarray(bunch.images, np.float64), image_size or 8, "digits")
    return images, bunch.target.astype(str), False


def _read_mnist(file: Path, info: DatasetInfo, image_size: int | None):
    if file.suffix == ".npz":
        if not zipfile.is_zipfile(file):
            raise DataFileError(f"{file}: not a NumPy .npz archive (expected MNIST's x_train and "
                                "y_train, as Keras saves them)")
        with reading(file, "MNIST .npz archive (x_train, y_train)"), \
                np.load(file, allow_pickle=False) as data:
            images, labels = data["x_train"], data["y_train"]
    else:
        images = _read_idx(file)
        label_name = file.name.replace("images-idx3", "labels-idx1")
        labels = _read_idx(file.with_name(label_name))
    images, labels = np.asarray(images), np.asarray(labels)
    if images.ndim != 3 or labels.shape != images.shape[:1]:
        raise DataFileError(f"{file}: expected (N, side, side) images and N labels, got "
                            f"{images.shape} and {labels.shape}")
    images = pool_images(images.astype(np.float64), image_size or 14, "mnist")
    return images, labels.astype(str), False


def _read_idx(file: Path) -> np.ndarray:
    """An idx array (LeCun et al. 1998's format: two zero bytes, type 0x08 for uint8, the
    number of dimensions, the sizes as big-endian uint32, then the values)."""
    if not file.is_file():
        raise DataNotFoundError(f"mnist: {file} is missing (the idx images need their labels "
                                "file beside them)")
    opener = gzip.open if file.suffix == ".gz" else open
    with reading(file, "idx array"), opener(file, "rb") as f:
        raw = f.read()
    ndim = raw[3] if len(raw) >= 4 else 0
    header = 4 + 4 * ndim
    if raw[:3] != b"\x00\x00\x08" or ndim == 0 or len(raw) < header:
        raise DataFileError(f"{file}: not an idx file of uint8 values (its header is "
                            f"{raw[:4]!r})")
    shape = _struct.unpack(">" + "I" * ndim, raw[4: header])
    if len(raw) - header != math.prod(shape):
        raise DataFileError(f"{file}: the header says shape {shape} ({math.prod(shape)} values) "
                            f"but {len(raw) - header} follow")
    return np.frombuffer(raw, np.uint8, offset=header).reshape(shape)


def _read_covertype(file: Path, info: DatasetInfo, image_size: int | None):
    with reading(file, info.name):
        data = np.loadtxt(file, delimiter=",", dtype=np.float64, ndmin=2)
    if data.shape[1] != info.dim + 1:
        raise DataFileError(f"{file}: {data.shape[1]} columns, expected {info.dim + 1} (the "
                            f"{info.dim} features of {info.name} and its class)")
    return data[:, :-1], data[:, -1].astype(np.int64).astype(str), False


def pool_images(images: np.ndarray, size: int, name: str) -> np.ndarray:
    """``(N, s, s)`` images average-pooled to ``(N, size * size)``."""
    n, side = images.shape[0], images.shape[1]
    if side % size:
        raise ValueError(f"{name}: image_size must divide {side}, got {size}")
    f = side // size
    return images.reshape(n, size, f, size, f).mean(axis=(2, 4)).reshape(n, size * size)


#: The reader of each data set in :data:`~jaxbandits.data.DATASETS`.
READERS: dict[str, Callable] = {
    "shuttle": _numeric,
    "magic": _numeric,
    "digits": _read_digits,
    "mushroom": _read_mushroom,
    "banknote": _numeric,
    "phoneme": _numeric,
    "mnist": _read_mnist,
    "covertype": _read_covertype,
}


# ------------------------------------------------------------------------------------------------
# The Open Bandit Dataset's campaign logs (Saito et al. 2020).


def read_obd_campaign(file: Path, num_positions: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """One OBD campaign's log (``<campaign>.csv``) and the item table (``item_context.csv``
    beside it) as NumPy arrays, items renumbered from 0.

    Returns ``(log, items)``: ``log`` with ``item`` ``(N,)``, ``position`` ``(N,)`` in
    ``[0, num_positions)``, ``click`` ``(N,)``, ``user`` (N rows of categorical cells),
    ``affinity`` ``(N, I)`` and ``affinity_items`` ``(I,)``; ``items`` with ``num_items``, the
    ``categorical`` cells and the ``numeric`` ``(I, f)`` columns of the item features.
    """
    with reading(file, "OBD campaign log"):
        with open(file, encoding="utf-8", newline="") as f:
            header = next(csv.reader(f))
        col = {name: i for i, name in enumerate(header)}
        aff_cols = sorted((int(name.rsplit("_", 1)[1]), i) for name, i in col.items()
                          if name.startswith("user-item_affinity_"))
        user_cols = sorted((name for name in col if name.startswith("user_feature_")),
                           key=lambda n: int(n.rsplit("_", 1)[1]))
        numbers = np.loadtxt(file, delimiter=",", skiprows=1, ndmin=2,
                             usecols=[col["item_id"], col["position"], col["click"]]
                             + [i for _, i in aff_cols])
        users = np.loadtxt(file, delimiter=",", skiprows=1, dtype=str, ndmin=2,
                           usecols=[col[n] for n in user_cols])
    item_file = file.parent / "item_context.csv"
    with reading(item_file, "OBD item table"):
        with open(item_file, encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            item_header = next(reader)
            item_rows = list(reader)
        icol = {name: i for i, name in enumerate(item_header)}
        item_ids = [int(r[icol["item_id"]]) for r in item_rows]
    if sorted(item_ids) != list(range(len(item_ids))):
        raise DataFileError(f"{item_file}: item_id must be 0..I-1")
    order = np.argsort(item_ids)
    item_rows = [item_rows[i] for i in order]
    feature_cols = sorted((n for n in icol if n.startswith("item_feature_")),
                          key=lambda n: int(n.rsplit("_", 1)[1]))
    numeric = [n for n in feature_cols if all(_is_number(r[icol[n]]) for r in item_rows)]
    categorical = [n for n in feature_cols if n not in numeric]
    num_items = len(item_rows)
    if [a for a, _ in aff_cols] != list(range(num_items)):
        raise DataFileError(f"{file}: expected user-item_affinity_0..{num_items - 1} columns")
    log = {
        "item": numbers[:, 0].astype(np.int64),
        "position": numbers[:, 1].astype(np.int64) - 1,
        "click": numbers[:, 2],
        "user": users.tolist(),
        "affinity": numbers[:, 3:],
        "affinity_items": np.arange(num_items),
    }
    if log["position"].min() < 0 or log["position"].max() >= num_positions:
        raise DataFileError(f"{file}: positions must be 1..{num_positions}")
    items = {
        "num_items": num_items,
        "categorical": [[r[icol[n]] for n in categorical] for r in item_rows],
        "numeric": np.asarray([[float(r[icol[n]]) for n in numeric] for r in item_rows],
                              np.float64).reshape(num_items, len(numeric)),
    }
    return log, items


# ------------------------------------------------------------------------------------------------
# The measuring-hate-speech export (Kennedy et al. 2020).


def read_hate_speech(file: Path, threshold: float) -> tuple[list[str], np.ndarray]:
    """``(texts, labels)`` of a ``measuring-hate-speech`` CSV or parquet export.

    The export has one row per (comment, annotator), so comments repeat; each comment is kept
    once, in order of first appearance, identified by its ``comment_id`` column (or by its text
    when there is none), with its comment-level ``hate_speech_score`` (the same on each of its
    rows; their mean if they differ) and label ``score > threshold`` (1 = hate). Needs the
    columns ``text`` and ``hate_speech_score``.
    """
    with reading(file, "measuring-hate-speech export"):
        columns = _read_columns(file)
    missing = [c for c in ("text", "hate_speech_score") if c not in columns]
    if missing:
        raise DataFileError(f"{file}: missing column(s) {missing} (found {sorted(columns)[:12]}); "
                            "expected the measuring-hate-speech export with 'text' and "
                            "'hate_speech_score'")
    texts, scores = columns["text"], columns["hate_speech_score"]
    keys = columns.get("comment_id", texts)
    first: dict[Any, int] = {}
    totals: list[float] = []
    counts: list[int] = []
    kept: list[str] = []
    for row, (key, text, score) in enumerate(zip(keys, texts, scores, strict=True)):
        try:
            value = float(score)
        except (TypeError, ValueError):
            value = math.nan
        if not math.isfinite(value):
            raise DataFileError(f"{file}: row {row + 1} has hate_speech_score {score!r}, not a "
                                "finite number")
        slot = first.setdefault(key, len(kept))
        if slot == len(kept):
            kept.append("" if text is None else str(text))
            totals.append(0.0)
            counts.append(0)
        totals[slot] += value
        counts[slot] += 1
    if not kept:
        raise DataFileError(f"{file} holds no rows")
    mean = np.asarray(totals) / np.asarray(counts)
    return kept, (mean > threshold).astype(np.int32)


def is_parquet(file: Path) -> bool:
    """Whether ``file`` is named as a parquet file (``.parquet``, ``.pq``, any case)."""
    return file.name.lower().endswith((".parquet", ".pq"))


def read_parquet(file: Path, what: str) -> Any:
    """The pandas ``DataFrame`` of the parquet file ``file``; without pandas and pyarrow an
    ``ImportError`` that says to install them or to export ``what`` to CSV."""
    try:
        import pandas as pd

        return pd.read_parquet(file)
    except ImportError as err:
        raise ImportError(f"{file}: reading parquet needs pandas and pyarrow (pip install "
                          f"pandas pyarrow), or export {what} to CSV") from err


def _read_columns(file: Path) -> dict[str, list]:
    """``{column: values}`` of a CSV (``.csv``, ``.csv.gz``) or parquet file."""
    if is_parquet(file):
        frame = read_parquet(file, "the data set")
        return {str(c): frame[c].tolist() for c in frame.columns}
    with _open_text(file) as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None:
            raise DataFileError(f"{file} is empty")
        fields = [str(c).strip() for c in reader.fieldnames]
        columns: dict[str, list] = {c: [] for c in fields}
        for row in reader:
            for raw, clean in zip(reader.fieldnames, fields, strict=True):
                columns[clean].append(row[raw])
    return columns
