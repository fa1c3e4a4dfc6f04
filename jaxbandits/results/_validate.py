"""The checks a result's arrays and JSON pass before a :class:`~jaxbandits.results.Result` is
made of them (names, dtypes, shapes, steps, the JSON's field types)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxbandits.metrics import check_metric_names
from jaxbandits.results._format import _META_TYPES, _METRIC_PREFIX, _npy_name, _sibling


def _check_meta_types(meta: dict, where: str) -> None:
    for key, types in _META_TYPES.items():
        if key not in meta:  # an optional key (the required ones are checked before)
            continue
        if isinstance(meta[key], bool) or not isinstance(meta[key], types):
            names = " or ".join(t.__name__ for t in types)
            raise ValueError(f"{where}: {key!r} must be {names}, got {meta[key]!r}")



def _check_listed(arrays: dict, listed: dict, json_path: Path, stem: Path, storage: str) -> None:
    """The arrays on disk are exactly those the JSON lists, with its shapes and dtypes."""
    def data(name=None):
        if storage == "npz":
            return repr(str(_sibling(stem, ".npz")))
        return "the .npy files" if name is None else repr(str(_sibling(stem,
                                                                        f".{_npy_name(name)}.npy")))

    if set(arrays) != set(listed):
        missing, extra = sorted(set(listed) - set(arrays)), sorted(set(arrays) - set(listed))
        raise ValueError(f"{data()} and {str(json_path)!r} disagree: arrays missing {missing}, "
                         f"unexpected {extra}")
    for name, entry in listed.items():
        try:
            dtype = np.dtype(entry["dtype"])
        except TypeError as e:
            raise ValueError(f"{str(json_path)!r}: {name!r} has an unknown dtype "
                             f"{entry['dtype']!r}") from e
        array = arrays[name]
        if list(array.shape) != entry["shape"] or array.dtype != dtype:
            raise ValueError(f"{str(json_path)!r} says {name!r} is {dtype} of shape "
                             f"{tuple(entry['shape'])}, but {data(name)} holds {array.dtype} of "
                             f"shape {array.shape} (tampered or mismatched files)")


def _check_steps(steps: np.ndarray, where: str) -> None:
    if not np.issubdtype(steps.dtype, np.integer) or steps.ndim != 1 or steps.size == 0:
        raise ValueError(f"{where}: 'steps' must be a non-empty (S,) integer array, got "
                         f"{steps.dtype} of shape {steps.shape}")
    if steps[0] < 1 or np.any(np.diff(steps) <= 0):
        raise ValueError(f"{where}: 'steps' must be positive and increasing, got "
                         f"{np.asarray(steps).tolist()[:10]}")


def _check_arrays(arrays: dict, where: str) -> None:
    """Names, dtypes and shapes of a result's arrays (see :meth:`Result.load`)."""
    required = {"steps", "cumulative_regret", "cumulative_reward"}
    names = set(arrays)
    metrics = [n for n in arrays if n.startswith(_METRIC_PREFIX)]
    unexpected = names - required - {"accepted"} - set(metrics)
    if not required <= names or unexpected:
        raise ValueError(f"{where}: arrays must be {sorted(required)} and optionally "
                         f"'accepted' and '{_METRIC_PREFIX}<name>' metrics; missing "
                         f"{sorted(required - names)}, unexpected {sorted(unexpected)}")
    check_metric_names([n[len(_METRIC_PREFIX):] for n in metrics], where)
    steps = arrays["steps"]
    _check_steps(steps, where)
    shape = None
    for name in ("cumulative_regret", "cumulative_reward", "accepted", *metrics):
        if name not in arrays:
            continue
        array = arrays[name]
        kinds = (np.floating, np.integer) if name == "accepted" else (np.floating,)
        if not any(np.issubdtype(array.dtype, k) for k in kinds):
            raise ValueError(f"{where}: {name!r} must be floating, got {array.dtype}")
        if array.ndim != 2 or array.shape[1] != steps.shape[0]:
            raise ValueError(f"{where}: {name!r} must be (runs, {steps.shape[0]}) (one column "
                             f"per recorded step), got shape {array.shape}")
        if shape is not None and array.shape != shape:
            raise ValueError(f"{where}: {name!r} has shape {array.shape}, the other curves "
                             f"{shape}")
        shape = array.shape
