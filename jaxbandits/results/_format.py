"""How a result and its arrays are named on disk: the format's name and version, its keys,
and the files of a result called ``<stem>`` (see :mod:`jaxbandits.results`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

_FORMAT, _VERSION = "jaxbandits-result", 2  # 2: with sha256 (version 1 files load without)
_CURVES = ("cumulative_regret", "cumulative_reward", "accepted")
_NPY_NAMES = {"steps": "steps", "cumulative_regret": "regret", "cumulative_reward": "reward",
              "accepted": "accepted"}
# An extra metric ``name`` is the array ``metric.<name>`` (in the .npz, and in the JSON's
# "arrays" in the environment's order), stored by ``save_to`` as ``<path>.metric.<name>.npy``.
_METRIC_PREFIX = "metric."
_META_TYPES = {"name": (str,), "wall_time": (int, float), "compile_time": (int, float),
               "env_config": (dict,), "agent_config": (dict,), "extras": (dict,),
               "run_info": (dict,)}
_OPTIONAL_KEYS = {"run_info"}  # absent from older version-1 files: loads as {}
_LEGACY_KEYS = set(_META_TYPES) - _OPTIONAL_KEYS  # written before the format was recorded


@dataclasses.dataclass(frozen=True)
class _Spec:
    """The shape and dtype of an array that is on disk but not in memory."""

    shape: tuple[int, ...]
    dtype: np.dtype


def _stem(path: str | Path) -> Path:
    """The result's name: ``path`` without a trailing ``.npz`` / ``.json`` (and nothing else)."""
    path = Path(path)
    return path.with_suffix("") if path.suffix in (".npz", ".json") else path


def _sibling(stem: Path, suffix: str) -> Path:
    return stem.with_name(stem.name + suffix)


def _npy_name(array: str) -> str:
    """The middle of an array's ``.npy`` file name: ``<path>.<this>.npy``."""
    return array if array.startswith(_METRIC_PREFIX) else _NPY_NAMES[array]
