"""The classification data sets the library knows: their files, classes, widths and sources."""

from __future__ import annotations

import dataclasses

__all__ = ["CATEGORICAL_ENCODINGS", "DATASETS", "MIN_ROWS_PER_CLASS", "DatasetInfo",
           "dataset_info"]

#: How categorical columns (mushroom) are encoded: per-run random values or one-hot columns.
CATEGORICAL_ENCODINGS: tuple[str, ...] = ("random", "onehot")

#: A data file must hold at least ``MIN_ROWS_PER_CLASS * K`` rows (K the data set's number of
#: classes): two rows per arm on average. Every supported data set has over a thousand rows, so
#: a file below this is cut short or another file; smaller tables of your own go through
#: :func:`~jaxbandits.data.make_table`, which has no minimum.
MIN_ROWS_PER_CLASS = 2


@dataclasses.dataclass(frozen=True)
class DatasetInfo:
    """What a data set is and where it comes from.

    Attributes:
      name: the key in :data:`DATASETS`.
      files: file names the loader reads, in order of preference (empty when bundled).
      classes: the raw label of each arm, in arm order (``None``: sorted unique labels).
      num_classes: K.
      dim: the base feature dimension d with default options; a row of a text file holds
        ``d`` feature columns and the class.
      rows: the number of rows of the preferred file.
      source: where the data come from.
      url: what :func:`~jaxbandits.data.download` fetches (a direct URL, or ``openml:<id>``;
        empty if bundled).
    """

    name: str
    files: tuple[str, ...]
    classes: tuple[str, ...] | None
    num_classes: int
    dim: int
    rows: int
    source: str
    url: str

    @property
    def min_rows(self) -> int:
        """The fewest rows a file of this data set may hold (:data:`MIN_ROWS_PER_CLASS` a class)."""
        return MIN_ROWS_PER_CLASS * self.num_classes


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
                    "OpenML 1489 (ELENA phoneme)", "openml:1489"),
        DatasetInfo("mnist", ("mnist.npz", "train-images-idx3-ubyte.gz",
                              "train-images-idx3-ubyte"), tuple("0123456789"), 10, 196, 60_000,
                    "LeCun et al. 1998 (training set)",
                    "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"),
        DatasetInfo("covertype", ("covtype.data.gz", "covtype.data"),
                    tuple("1234567"), 7, 54, 581_012, "UCI Covertype, CC BY 4.0",
                    f"{_UCI}/covtype/covtype.data.gz"),
    )
}


def dataset_info(dataset: str) -> DatasetInfo:
    """The :class:`DatasetInfo` of ``dataset``; ``ValueError`` naming the known ones otherwise."""
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r} (known: {', '.join(DATASETS)})")
    return DATASETS[dataset]
