"""How a result was made: the software and devices (:func:`environment_info`) and the
configuration of its environment and agent (:func:`config_of`), as JSON-friendly values."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np


def environment_info(devices: Sequence[Any] | None = None) -> dict[str, Any]:
    """The software and hardware a result was made with, as a JSON-friendly dict.

    Keys: ``jaxbandits``, ``jax``, ``jaxlib``, ``numpy`` and ``python`` (versions),
    ``platform`` (the OS), ``x64`` (whether JAX runs in float64), and ``devices``:
    ``{"backend", "kind", "count"}`` of ``devices`` (default: ``jax.devices()``).

    Example::

        environment_info()["devices"]   # {'backend': 'cpu', 'kind': 'cpu', 'count': 1}
    """
    import platform
    import sys

    import jax
    import jaxlib

    devices = list(jax.devices() if devices is None else devices)
    return {
        "jaxbandits": _package_version(),
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "numpy": np.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "x64": bool(jax.config.jax_enable_x64),
        "devices": {
            "backend": devices[0].platform if devices else None,
            "kind": ", ".join(sorted({d.device_kind for d in devices})) or None,
            "count": len(devices),
        },
    }


def _package_version() -> str:
    import sys

    version = getattr(sys.modules.get("jaxbandits"), "__version__", None)
    if version is None:  # while jaxbandits/__init__ is still importing
        from importlib import metadata

        try:
            version = metadata.version("jaxbandits")
        except metadata.PackageNotFoundError:
            version = "unknown"
    return version


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "tolist"):
        return np.asarray(value).tolist()
    return repr(value)


def config_of(obj: Any) -> dict[str, Any]:
    """The configuration of an environment or agent as a JSON-friendly dict (with its name)."""
    config: dict[str, Any] = {"name": getattr(obj, "name", "") or type(obj).__name__}
    for field in dataclasses.fields(obj):
        value = getattr(obj, field.name)
        if hasattr(value, "tolist"):
            value = np.asarray(value).tolist()
        elif dataclasses.is_dataclass(value):
            value = config_of(value)
        elif not isinstance(value, (int, float, str, bool, type(None), list, tuple)):
            value = repr(value)
        config[field.name] = value
    return config
