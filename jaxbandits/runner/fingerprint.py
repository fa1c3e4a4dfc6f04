"""A checkpoint's fingerprint: a digest of everything that determines the numbers, described by
value (never by address, so that every process and a later session agree)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import sys
import types
from collections.abc import Mapping

import jax
import numpy as np

from jaxbandits.runner.checks import label_of
from jaxbandits.runner.multihost import is_key
from jaxbandits.runner.options import RunOptions

__all__ = ["fingerprint"]


def fingerprint(envs: list, agents: list, labels: list[str], options: RunOptions) -> str:
    """A digest of everything that determines the numbers (not the layout: chunking and the
    device count never change them, so a checkpoint resumes under either)."""
    digest = hashlib.sha256()
    o = options
    identity = {
        "key": np.asarray(jax.random.key_data(o.key)).tolist(), "horizon": o.horizon,
        "num_runs": o.num_runs, "block_runs": o.block_runs, "labels": labels,
        "steps": hashlib.sha256(o.steps.tobytes()).hexdigest(), "jax": jax.__version__,
        "x64": bool(jax.config.jax_enable_x64),
    }
    metrics = list(envs[0].spec().metrics)
    if metrics:  # only when there are some: older checkpoints keep their fingerprint
        identity["metrics"] = metrics
    if not o.timing.immediate:  # likewise, only when the feedback is delayed or batched
        identity["timing"] = o.timing.describe()
    digest.update(json.dumps(identity, sort_keys=True).encode())
    for obj in (*envs, *agents):
        leaves, treedef = jax.tree.flatten(obj)
        statics = str(treedef)
        if _ADDRESS.search(statics):  # a static named by its address: described by value
            statics = _by_value(treedef, label_of(obj))
        digest.update(f"{type(obj).__module__}.{type(obj).__qualname__}|{statics}".encode())
        for leaf in leaves:
            a = np.asarray(leaf)
            if a.dtype.hasobject:
                a = np.frombuffer(_by_value(leaf, label_of(obj)).encode(), np.uint8)
            digest.update(f"{a.dtype}{a.shape}".encode())
            digest.update(np.ascontiguousarray(a).tobytes())
    return digest.hexdigest()


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _by_value(x, owner: str) -> str:
    """A description of ``x`` that depends on its value alone, never on its address (the same
    in every process): static pytree data, functions by their code, closure and defaults.

    Raises:
      ValueError: ``x`` (or a part of it) is an object known only by its identity.
    """
    describe = functools.partial(_by_value, owner=owner)
    if isinstance(x, jax.tree_util.PyTreeDef):
        data = x.node_data()
        head = "*" if data is None else f"{describe(data[0])}:{describe(data[1])}"
        return f"{head}({','.join(describe(c) for c in x.children())})"
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes)):
        return repr(x)
    if isinstance(x, (tuple, list, set, frozenset)):
        items = sorted(map(describe, x)) if isinstance(x, (set, frozenset)) else map(describe, x)
        return f"{type(x).__name__}[{','.join(items)}]"
    if isinstance(x, Mapping):
        return "{" + ",".join(sorted(f"{describe(k)}:{describe(v)}" for k, v in x.items())) + "}"
    if isinstance(x, (np.ndarray, np.generic, jax.Array)) and not is_key(x):
        a = np.asarray(x)
        if not a.dtype.hasobject:
            return f"{a.dtype}{a.shape}:{hashlib.sha256(a.tobytes()).hexdigest()}"
    named = _importable_name(x)
    if named is not None:
        return named
    if isinstance(x, functools.partial):
        return f"partial({describe(x.func)},{describe(x.args)},{describe(x.keywords)})"
    if isinstance(x, types.MethodType):
        return f"method({describe(x.__self__)},{describe(x.__func__)})"
    if isinstance(x, types.FunctionType):
        cells = [c.cell_contents for c in x.__closure__ or ()]
        return (f"function({x.__module__}.{x.__qualname__},{_code_value(x.__code__)},"
                f"{describe(x.__defaults__)},{describe(x.__kwdefaults__)},{describe(cells)})")
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        fields = {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}
        return f"{type(x).__module__}.{type(x).__qualname__}{describe(fields)}"
    text = repr(x)
    if _ADDRESS.search(text) or " object at " in text:
        raise ValueError(
            f"cannot fingerprint {text} (in {owner!r}) for a checkpoint: it is known only by "
            "its address, which another process does not share, so the checkpoint could never "
            "be resumed. Use a module-level function or class, a functools.partial or a "
            "dataclass of them, or run without checkpoint_dir")
    return f"{type(x).__module__}.{type(x).__qualname__}:{text}"


def _importable_name(x) -> str | None:
    """``module.qualname`` when that name imports back to ``x`` itself (module-level functions,
    classes, jitted functions...)."""
    module, name = getattr(x, "__module__", None), getattr(x, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(name, str) or "<" in name:
        return None
    found = sys.modules.get(module)
    for part in name.split("."):
        found = getattr(found, part, None)
    return f"{module}.{name}" if found is x else None


def _code_value(code: types.CodeType) -> str:
    """A digest of a code object's bytecode, constants (nested code included) and names."""
    consts = [_code_value(c) if isinstance(c, types.CodeType) else repr(c)
              for c in code.co_consts]
    text = json.dumps([code.co_code.hex(), consts, code.co_names, code.co_varnames])
    return hashlib.sha256(text.encode()).hexdigest()
