"""Saved agents: an agent's configuration and learned state in one crash-safe, checked file.

::

    jb.save_agent("lin-ts.agent", agent, state, spec)     # from a simulation or a policy
    saved = jb.load_agent("lin-ts.agent")                 # SavedAgent(agent, state, spec, extra)

The file is an ``.npz`` (no pickle) written atomically with the checkpoints' primitives
(:mod:`jaxbandits._io`: a temporary file, fsync, rename, fsync of the directory), so a kill
leaves the old file or the new one. It holds a JSON manifest and one array per state leaf
(PRNG keys as their key data and implementation). The manifest records:

- the agent's configuration (its class and every field, static or leaf, by value) and the
  :class:`~jaxbandits.Spec`, from which :func:`load_agent` rebuilds the agent;
- the state's layout (each leaf's path, shape and dtype), checked against the layout the
  rebuilt agent's ``init`` gives today, so a changed agent class is refused, not misread;
- the jax version and the float64 switch;
- the sha256 of every array and a fingerprint (sha256) of all the above.

Loading refuses, with a ``ValueError`` naming the difference: a file whose hashes do not match
(corrupt or edited), an ``agent=`` whose configuration differs from the saved one, a state
layout that the agent class no longer has, a float64 switch that differs, and a file saved under
another jax version. The last has a documented conversion: ``allow_other_jax=True`` loads the
arrays unchanged (they are plain numbers and key data); the agent then continues, but PRNG
streams or numerics of the new jax may differ, so continuation is bit for bit only under the
saving version.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxbandits import _io
from jaxbandits.core import Agent, Spec

__all__ = ["SavedAgent", "load_agent", "save_agent"]

FORMAT = "jaxbandits-agent"
VERSION = 1
PyTree = Any


class SavedAgent(NamedTuple):
    """What :func:`load_agent` returns.

    Attributes:
      agent: the rebuilt agent (equal to the saved one).
      state: the agent's state, a pytree of device arrays of the saved dtypes.
      spec: the :class:`~jaxbandits.Spec` the state was made for.
      extra: the caller's JSON metadata (an online policy's counters and key).
    """

    agent: Agent
    state: PyTree
    spec: Spec
    extra: dict


def save_agent(path: str | os.PathLike, agent: Agent, state: PyTree, spec: Spec, *,
               extra: dict | None = None) -> None:
    """Saves ``agent``'s configuration and ``state`` (made for ``spec``) to ``path``.

    Args:
      path: the file to write (replaced atomically; its directory must exist).
      agent: the agent; every field must be a number, string, bool, None, tuple, array or a
        nested dataclass of them (an agent wrapping another is saved with it).
      state: the agent's state, e.g. a simulation's final state or ``policy.state``.
      spec: the spec ``state`` was made for (``env.spec()``).
      extra: JSON-serialisable metadata stored beside it.

    Raises:
      ValueError: a field cannot be saved by value, or ``state`` does not have the layout
        ``agent.init`` gives for ``spec``.
    """
    if not isinstance(agent, Agent):
        raise ValueError(f"save_agent: agent must be a jaxbandits Agent, got {agent!r}")
    if not isinstance(spec, Spec):
        raise ValueError(f"save_agent: spec must be a jb.Spec (env.spec()), got {spec!r}")
    config = {"agent": _config(agent, "agent"), "spec": _config(spec, "spec")}
    paths, leaves = _flatten(state)
    layout = [_layout(p, x) for p, x in zip(paths, leaves, strict=True)]
    expected = _expected_layout(agent, spec)
    if layout != expected:
        raise ValueError("save_agent: state does not have the layout agent.init gives for "
                         f"spec: {_layout_difference(expected, layout)}")
    arrays = {f"leaf_{i:05d}": _host(x) for i, x in enumerate(leaves)}
    manifest = {
        "format": FORMAT, "version": VERSION, "jax": jax.__version__,
        "x64": bool(jax.config.jax_enable_x64), **config, "layout": layout,
        "sha256": {name: hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
                   for name, a in arrays.items()},
        "extra": extra or {},
    }
    manifest["fingerprint"] = _fingerprint(manifest)
    try:
        text = json.dumps(manifest, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ValueError(f"save_agent: extra must be JSON-serialisable: {err}") from err
    arrays["manifest"] = np.frombuffer(text.encode(), np.uint8)
    _io.atomic_write(path, lambda f: _io.write_npz(f, arrays))


def load_agent(path: str | os.PathLike, *, agent: Agent | None = None,
               allow_other_jax: bool = False) -> SavedAgent:
    """The agent, state and spec saved at ``path`` by :func:`save_agent`, checked.

    Args:
      path: a file written by :func:`save_agent` (or ``OnlinePolicy.save``).
      agent: if given, the configuration the caller expects: any difference from the saved
        one is an error naming the fields (a changed configuration never runs on a state
        learnt under another).
      allow_other_jax: load a file saved under another jax version (the arrays are taken
        unchanged; continuation is then not guaranteed bit for bit).

    Raises:
      ValueError: not such a file, corrupt, another jax version (unless allowed), another
        float64 switch, a configuration that differs from ``agent``, or a state layout the
        agent class no longer produces.
    """
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, EOFError) as err:
        raise ValueError(f"load_agent: cannot read {str(path)!r} as a saved agent: {err}") \
            from err
    try:
        manifest = json.loads(arrays.pop("manifest").tobytes().decode())
    except (KeyError, ValueError) as err:
        raise ValueError(f"load_agent: {str(path)!r} is not a saved agent (no manifest)") \
            from err
    where = f"load_agent({str(path)!r})"
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError(f"{where}: not a saved agent (format {manifest.get('format')!r})")
    if manifest.get("version") != VERSION:
        raise ValueError(f"{where}: format version {manifest.get('version')} is not "
                         f"{VERSION}, the one this jaxbandits reads")
    if manifest.get("fingerprint") != _fingerprint(manifest):
        raise ValueError(f"{where}: the manifest's fingerprint does not match its content "
                         "(the file was edited or is corrupt)")
    for name, digest in manifest["sha256"].items():
        if name not in arrays or hashlib.sha256(
                np.ascontiguousarray(arrays[name]).tobytes()).hexdigest() != digest:
            raise ValueError(f"{where}: array {name} is missing or its sha256 does not match "
                             "(the file is corrupt)")
    if manifest["jax"] != jax.__version__ and not allow_other_jax:
        raise ValueError(
            f"{where}: saved under jax {manifest['jax']}, this is jax {jax.__version__}; PRNG "
            "streams and numerics may differ between versions, so continuing would not equal "
            "the saved run. Pass allow_other_jax=True to load the arrays unchanged anyway")
    if manifest["x64"] != bool(jax.config.jax_enable_x64):
        raise ValueError(f"{where}: saved with jax_enable_x64={manifest['x64']}, running with "
                         f"{bool(jax.config.jax_enable_x64)}; set it as when saving")
    saved_agent = _rebuild(manifest["agent"], where)
    spec = _rebuild(manifest["spec"], where)
    if agent is not None:
        mine = _config(agent, "agent")
        if mine != manifest["agent"]:
            raise ValueError(f"{where}: the saved agent's configuration differs from the "
                             f"given agent: {_config_difference(manifest['agent'], mine)}")
    expected = _expected_layout(saved_agent, spec)
    if expected != manifest["layout"]:
        raise ValueError(f"{where}: the agent class's state layout changed since saving: "
                         f"{_layout_difference(expected, manifest['layout'])}")
    like = jax.eval_shape(lambda k: saved_agent.init(k, spec), jax.random.key(0))
    leaves = []
    for i, (entry, _) in enumerate(zip(manifest["layout"], jax.tree.leaves(like), strict=True)):
        a = arrays[f"leaf_{i:05d}"]
        if entry["key_impl"] is not None:
            leaves.append(jax.random.wrap_key_data(jnp.asarray(a), impl=entry["key_impl"]))
        else:
            leaves.append(jnp.asarray(a))
    state = jax.tree.unflatten(jax.tree.structure(like), leaves)
    return SavedAgent(saved_agent, state, spec, manifest.get("extra", {}))


# ------------------------------------------------------------------------------------------------
# Configuration by value.


def _config(x: Any, where: str) -> Any:
    """A JSON value describing ``x`` exactly (dataclasses by class and fields)."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, int):
        return {"int": str(x)} if abs(x) >= 2**53 else x
    if isinstance(x, float):
        return x if math.isfinite(x) else {"float": repr(x)}
    if isinstance(x, (np.bool_, np.integer, np.floating)) or (
            isinstance(x, (np.ndarray, jax.Array))
            and not jnp.issubdtype(x.dtype, jax.dtypes.prng_key)):
        a = np.asarray(x)
        if a.dtype.hasobject:
            raise ValueError(f"save_agent: {where} is an object array and cannot be saved")
        return {"array": a.tobytes().hex(), "dtype": a.dtype.str, "shape": list(a.shape)}
    if isinstance(x, tuple):
        return {"tuple": [_config(v, f"{where}[{i}]") for i, v in enumerate(x)]}
    if isinstance(x, list):
        return [_config(v, f"{where}[{i}]") for i, v in enumerate(x)]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        cls = type(x)
        fields = {f.name: _config(getattr(x, f.name), f"{where}.{f.name}")
                  for f in dataclasses.fields(x) if f.init}
        return {"class": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
    raise ValueError(f"save_agent: {where} = {x!r} cannot be saved by value (numbers, strings, "
                     "bools, None, tuples, arrays and dataclasses of them can)")


def _rebuild(config: Any, where: str) -> Any:
    if isinstance(config, list):
        return [_rebuild(v, where) for v in config]
    if not isinstance(config, dict):
        return config
    if "int" in config:
        return int(config["int"])
    if "float" in config:
        return float(config["float"])
    if "array" in config:
        a = np.frombuffer(bytes.fromhex(config["array"]), np.dtype(config["dtype"]))
        a = a.reshape(config["shape"])
        return a[()] if a.ndim == 0 else a.copy()
    if "tuple" in config:
        return tuple(_rebuild(v, where) for v in config["tuple"])
    module_name, _, qualname = config["class"].partition(":")
    if module_name.split(".")[0] != "jaxbandits" and module_name not in sys.modules:
        raise ValueError(f"{where}: class {config['class']} is outside jaxbandits and its "
                         "module is not imported; import it before loading")
    try:
        found = importlib.import_module(module_name)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"{where}: class {config['class']} no longer exists") from err
    if not (isinstance(found, type) and dataclasses.is_dataclass(found)):
        raise ValueError(f"{where}: {config['class']} is not a dataclass")
    fields = {f.name for f in dataclasses.fields(found) if f.init}
    unknown = set(config["fields"]) - fields
    if unknown:
        raise ValueError(f"{where}: class {config['class']} no longer has the saved fields "
                         f"{sorted(unknown)}")
    return found(**{k: _rebuild(v, where) for k, v in config["fields"].items()})


def _config_difference(saved: Any, given: Any, path: str = "agent") -> str:
    if isinstance(saved, dict) and isinstance(given, dict) and "fields" in saved \
            and "fields" in given:
        if saved["class"] != given["class"]:
            return f"{path} is {saved['class']} in the file, {given['class']} given"
        out = [_config_difference(saved["fields"].get(k), given["fields"].get(k),
                                  f"{path}.{k}")
               for k in sorted(set(saved["fields"]) | set(given["fields"]))
               if saved["fields"].get(k) != given["fields"].get(k)]
        return "; ".join(out)
    return f"{path} is {_shown(saved)} in the file, {_shown(given)} given"


def _shown(config: Any) -> str:
    try:
        return repr(_rebuild(config, ""))
    except (ValueError, KeyError, TypeError):
        return json.dumps(config)


# ------------------------------------------------------------------------------------------------
# State layout and arrays.


def _flatten(state: PyTree) -> tuple[list[str], list[Any]]:
    pairs = jax.tree_util.tree_flatten_with_path(state)[0]
    return [f"state{jax.tree_util.keystr(p)}" for p, _ in pairs], [x for _, x in pairs]


def _is_key(x: Any) -> bool:
    return jnp.issubdtype(x.dtype, jax.dtypes.prng_key)


def _layout(path: str, x: Any) -> dict:
    if _is_key(x):
        return {"path": path, "shape": list(x.shape), "dtype": "key",
                "key_impl": _key_impl(x)}
    return {"path": path, "shape": list(np.shape(x)), "dtype": np.dtype(x.dtype).str,
            "key_impl": None}


def _key_impl(x: Any) -> str:
    """The PRNG implementation's name of a key array or of its abstract value."""
    if isinstance(x, jax.Array):
        return str(jax.random.key_impl(x))
    return x.dtype._impl.name  # a ShapeDtypeStruct of eval_shape: no public accessor


def _expected_layout(agent: Agent, spec: Spec) -> list[dict]:
    like = jax.eval_shape(lambda k: agent.init(k, spec), jax.random.key(0))
    paths, leaves = _flatten(like)
    return [_layout(p, x) for p, x in zip(paths, leaves, strict=True)]


def _layout_difference(expected: list[dict], got: list[dict]) -> str:
    if len(expected) != len(got):
        return f"{len(expected)} leaves expected, {len(got)} found"
    for e, g in zip(expected, got, strict=True):
        if e != g:
            return (f"{g['path']} is {g['dtype']}{tuple(g['shape'])}, expected "
                    f"{e['path']} {e['dtype']}{tuple(e['shape'])}")
    return "none"


def _host(x: Any) -> np.ndarray:
    return np.asarray(jax.random.key_data(x) if _is_key(x) else x)


def _fingerprint(manifest: dict) -> str:
    fields = {k: manifest[k] for k in ("format", "version", "jax", "x64", "agent", "spec",
                                       "layout", "sha256", "extra")}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
