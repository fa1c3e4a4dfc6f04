"""JAX's persistent compilation cache, on by default for the command line, the benchmarks and the
reproductions: a second process that compiles the same program reads it from disk.

The location is, in order: the ``path`` given to :func:`use_compilation_cache`, the environment
variable ``JAXBANDITS_COMPILATION_CACHE``, ``$XDG_CACHE_HOME/jaxbandits/jax``, and
``~/.cache/jaxbandits/jax``. The value ``off`` (argument or variable) leaves the cache off.
"""

from __future__ import annotations

import os
from pathlib import Path

import jax

__all__ = ["CACHE_ENV_VAR", "default_cache_dir", "use_compilation_cache"]

CACHE_ENV_VAR = "JAXBANDITS_COMPILATION_CACHE"
_OFF = ("off", "none", "0", "false", "")


def default_cache_dir() -> Path | None:
    """The cache directory the environment asks for (None when it says ``off``)."""
    value = os.environ.get(CACHE_ENV_VAR)
    if value is not None:
        return None if value.strip().lower() in _OFF else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "jaxbandits" / "jax"


def use_compilation_cache(path: str | os.PathLike | None = None) -> Path | None:
    """Turns on JAX's persistent compilation cache in ``path`` (default: :func:`default_cache_dir`)
    for every program however short its compilation; ``"off"`` turns it off. Returns the
    directory in use, or None. Call it before the first compilation of the process.

    Example::

        jb.use_compilation_cache()                  # ~/.cache/jaxbandits/jax
        jb.use_compilation_cache("/scratch/jax")    # a shared cache on a cluster
    """
    if path is None:
        directory = default_cache_dir()
    elif str(path).strip().lower() in _OFF:
        directory = None
    else:
        directory = Path(path).expanduser()
    if directory is None:
        jax.config.update("jax_compilation_cache_dir", None)
        return None
    directory.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(directory))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return directory
