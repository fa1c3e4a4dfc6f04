"""Where data files are looked for, and the error that says where to put a missing one.

The search order, when no ``path`` is given (an explicit ``path=``, a file or a folder, is the
only place looked in when it is):

1. each folder of the ``JAXBANDITS_DATA`` environment variable (several joined by ``os.pathsep``);
2. the per-user data folder, ``$XDG_DATA_HOME/jaxbandits`` (``~/.local/share/jaxbandits`` when
   ``XDG_DATA_HOME`` is unset), :func:`user_data_dir`;
3. the download cache, ``$JAXBANDITS_CACHE`` (default ``~/.cache/jaxbandits``), :func:`cache_dir`,
   where :func:`~jaxbandits.data.download` writes.

Inside each folder a data set's file is also looked for in the ``uci/`` and ``mnist/``
subfolders. Nothing is downloaded implicitly.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from jaxbandits.data.catalog import DatasetInfo, dataset_info

__all__ = [
    "CACHE_ENV_VAR",
    "DATA_ENV_VAR",
    "DataNotFoundError",
    "cache_dir",
    "find_data_file",
    "locate_file",
    "search_dirs",
    "user_data_dir",
]

DATA_ENV_VAR = "JAXBANDITS_DATA"
CACHE_ENV_VAR = "JAXBANDITS_CACHE"
#: Subfolders of a data folder searched for the classification data sets' files.
SUBFOLDERS = ("", "uci", "mnist")


class DataNotFoundError(FileNotFoundError, ValueError):
    """A data file is missing; the message says where to put it and how to download it.

    It is a ``FileNotFoundError`` and a ``ValueError``, so the command line reports it as a
    usage error.
    """


def cache_dir() -> Path:
    """The download cache: ``$JAXBANDITS_CACHE`` or ``~/.cache/jaxbandits``."""
    env = os.environ.get(CACHE_ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "jaxbandits"


def user_data_dir() -> Path:
    """The per-user data folder: ``$XDG_DATA_HOME/jaxbandits``, else
    ``~/.local/share/jaxbandits`` (searched whether or not it exists)."""
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "jaxbandits"


def search_dirs() -> list[Path]:
    """The folders searched for data files when no ``path`` is given, in order:
    ``$JAXBANDITS_DATA``'s folders, :func:`user_data_dir`, :func:`cache_dir`."""
    env = os.environ.get(DATA_ENV_VAR, "")
    dirs = [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    return dirs + [user_data_dir(), cache_dir()]


def locate_file(names: Sequence[str], path: str | os.PathLike | None = None,
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


def where_looked(path: str | os.PathLike | None, roots: Sequence[Path]) -> str:
    """``path=...`` when the user gave one, else the searched folders (for error messages)."""
    if path is not None:
        return f"path={str(path)!r}"
    return "any of: " + ", ".join(str(r) for r in roots)


def find_data_file(dataset: str, path: str | os.PathLike | None = None) -> Path:
    """The file :func:`~jaxbandits.data.load_dataset` reads for ``dataset``.

    ``path`` may name the file itself or a folder holding it; without it the folders of
    :func:`search_dirs` are tried (each also with its ``uci/`` and ``mnist/`` subfolders).

    Raises:
      DataNotFoundError: no file; the message lists where it looked and how to get the file.
    """
    info = dataset_info(dataset)
    if not info.files:
        raise ValueError(f"{dataset} is bundled with scikit-learn and has no file")
    found, roots = locate_file(info.files, path, SUBFOLDERS)
    if found is not None:
        return found
    raise DataNotFoundError(missing_message(info, path, roots))


def missing_message(info: DatasetInfo, path: str | os.PathLike | None,
                    roots: Sequence[Path]) -> str:
    """The text of :class:`DataNotFoundError` for ``info``: where it looked, where to put the file
    (``JAXBANDITS_DATA``, the per-user folder) and how to download it."""
    how = (f"download it once with `python -c \"import jaxbandits.data as d; "
           f"d.download('{info.name}')\"` (into {cache_dir()}; source: {info.url})")
    return (f"{info.name}: data file not found (looked for {' or '.join(info.files)} in "
            f"{where_looked(path, roots)}, and their uci/ and mnist/ subfolders). Put the file "
            f"({info.source}) in the per-user data folder {user_data_dir()} or in a folder named "
            f"by {DATA_ENV_VAR}=<folder>, pass path=<file or folder>, or {how}.")
