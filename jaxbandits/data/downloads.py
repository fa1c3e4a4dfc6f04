"""Downloads: the only code that touches the network, and only when called."""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path

import numpy as np

from jaxbandits.data.catalog import dataset_info
from jaxbandits.data.locate import cache_dir

__all__ = ["download"]


def download(dataset: str, directory: str | os.PathLike | None = None, *,
             force: bool = False) -> Path:
    """Downloads ``dataset`` once into ``directory`` (default: :func:`~jaxbandits.data.cache_dir`);
    returns the file.

    UCI files and MNIST come from their original URLs (:data:`~jaxbandits.data.DATASETS`);
    shuttle (all 58,000 rows) and phoneme come from OpenML through scikit-learn's
    ``fetch_openml`` and are written as ``<name>.csv`` (features, then the label). An existing
    file is kept unless ``force``.

    Example::

        from jaxbandits.data import download
        download("mushroom")                # then jb.make_env("classification", dataset="mushroom")
    """
    info = dataset_info(dataset)
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
