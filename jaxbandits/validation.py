"""Checks of settings on concrete values, before any tracing: a field's declared type and range.

Environments and agents call these from ``validate`` (:meth:`jaxbandits.Agent.validate`); each
raises ``ValueError`` naming the class and the field. Re-exported by :mod:`jaxbandits.core`.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import os
import re
import types
from collections.abc import Mapping
from typing import Any, NamedTuple, Union, get_args, get_origin

import jax
import jax.numpy as jnp
import numpy as np

from jaxbandits.spec import float_dtype


class FieldKind(NamedTuple):
    """The declared type of a dataclass field, as :func:`check_types` enforces it.

    Attributes:
      kind: ``"int"``, ``"float"`` (any real number), ``"bool"``, ``"str"``, ``"path"`` (a
        string or ``os.PathLike``), or ``""`` for a field that is not type-checked (a data table,
        a wrapped agent...).
      optional: None is allowed (the annotation says ``| None`` or the default is None).
      leaf: a pytree leaf (not static): arrays of the kind's dtype are allowed too, since
        ``sweep`` stacks leaves into arrays.
    """

    kind: str
    optional: bool
    leaf: bool


_ARRAY_NAMES = {"jax.Array", "Array", "jnp.ndarray", "np.ndarray", "ndarray"}
_PATH_NAMES = {"os.PathLike", "PathLike", "Path", "pathlib.Path"}
_UNCHECKED_NAMES = {"Any", "typing.Any", "object"}
_OPTIONAL = re.compile(r"^(?:typing\.)?Optional\[(.*)\]$")
_KIND_WORDS = {"int": "an integer", "float": "a number", "bool": "True or False",
               "str": "a string", "path": "a string or a path"}


@functools.cache
def field_kinds(cls: type) -> Mapping[str, FieldKind]:
    """``{field name: FieldKind}`` of a dataclass, read once per class from its annotations
    (strings under ``from __future__ import annotations``, or types) and, for an annotation that
    names no scalar type, from the default's type (``warmup = 0`` is an integer field).

    Example::

        field_kinds(jb.agents.LinTS)["explore_scale"]   # FieldKind("float", False, True)
    """
    kinds = {}
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else None
        tokens = _annotation_tokens(f.type)
        optional = "None" in tokens or (f.default is None)
        names = tokens - {"None"}
        if names == {"bool"}:
            kind = "bool"
        elif names == {"int"}:
            kind = "int"
        elif "float" in names and names <= {"float", "int"} | _ARRAY_NAMES:
            kind = "float"
        elif names == {"str"}:
            kind = "str"
        elif "str" in names and names <= {"str"} | _PATH_NAMES:
            kind = "path"
        elif names & _UNCHECKED_NAMES:
            kind = ""
        else:
            kind = _kind_of_value(default)
        kinds[f.name] = FieldKind(kind, optional, f.metadata.get("pytree_node", True))
    return types.MappingProxyType(kinds)


def check_types(obj: Any) -> None:
    """Raises ``ValueError`` naming the field unless every field of ``obj`` has its declared type.

    Integer fields take Python or NumPy integers, never ``True`` or ``5.0``; number fields take
    ints, floats and NumPy scalars but not bools, strings, lists or None; boolean fields take
    only ``True``/``False`` (or NumPy bools); string switches take only strings. Pytree leaves
    may also be arrays of the field's dtype (``sweep`` stacks them); static fields never are.
    Optional fields (``buffer_size=None``) take None. The first check of every ``validate``.
    """
    for name, kind in field_kinds(type(obj)).items():
        if not kind.kind:
            continue
        value = getattr(obj, name)
        if value is None and kind.optional:
            continue
        if not _has_kind(value, kind):
            what = _KIND_WORDS[kind.kind] + (" or None" if kind.optional else "")
            raise ValueError(f"{_owner(obj)}: {name} must be {what}, got {_show(value)}")


def _annotation_tokens(annotation: Any) -> set[str]:
    """The names of an annotation's union members: ``"int | None"`` -> ``{"int", "None"}``."""
    if isinstance(annotation, str):
        text = annotation.strip()
        match = _OPTIONAL.match(text)
        if match:
            return _annotation_tokens(match.group(1)) | {"None"}
        parts, depth, start = [], 0, 0
        for i, char in enumerate(text + "|"):
            depth += (char == "[") - (char == "]")
            if char == "|" and depth == 0:
                parts.append(text[start:i].strip())
                start = i + 1
        return {part for part in parts if part}
    if annotation is None or annotation is type(None):
        return {"None"}
    if get_origin(annotation) in (Union, types.UnionType):
        return set().union(*(_annotation_tokens(a) for a in get_args(annotation)))
    if annotation is Any:
        return {"Any"}
    if isinstance(annotation, type):
        return {annotation.__name__}
    return {str(annotation)}


def _kind_of_value(value: Any) -> str:
    for kind, cls in (("bool", bool), ("int", int), ("float", float), ("str", str)):
        if isinstance(value, cls):
            return kind
    return ""


def _has_kind(value: Any, kind: FieldKind) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return kind.kind == "bool"
    if kind.kind == "int":
        scalar = isinstance(value, (int, np.integer))
    elif kind.kind == "float":
        scalar = isinstance(value, (int, float, np.integer, np.floating))
    elif kind.kind == "str":
        return isinstance(value, str)
    elif kind.kind == "path":
        return isinstance(value, (str, os.PathLike))
    else:  # bool, and the value is not one
        scalar = False
    if scalar or not kind.leaf or not isinstance(value, (jax.Array, np.ndarray)):
        return scalar
    dtype = value.dtype
    if kind.kind == "bool":
        return dtype == np.bool_
    if kind.kind == "int":
        return jnp.issubdtype(dtype, jnp.integer)
    return jnp.issubdtype(dtype, jnp.integer) or jnp.issubdtype(dtype, jnp.floating)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _values(obj: Any, field: str) -> list[float]:
    value = getattr(obj, field)
    try:
        return [float(v) for v in np.ravel(np.asarray(value, dtype=float))]
    except (TypeError, ValueError) as err:
        raise ValueError(f"{_owner(obj)}: {field} must be a number, got {_show(value)}") from err


def _owner(obj: Any) -> str:
    return getattr(obj, "name", "") or type(obj).__name__
def check_positive(obj: Any, field: str, *, integer: bool = False) -> None:
    """Raises ``ValueError`` unless ``obj.field`` is positive (and an integer if asked), and a
    float value is a positive normal number of the engine's dtype (:func:`float_dtype`)."""
    value = getattr(obj, field)
    for v in _values(obj, field):
        if not math.isfinite(v) or v <= 0 or (integer and v != int(v)):
            kind = "a positive integer" if integer else "a positive finite number"
            raise ValueError(f"{_owner(obj)}: {field} must be {kind}, got {_show(value)}")
        _check_held(obj, field, v, integer=integer)


def check_nonnegative(obj: Any, field: str, *, integer: bool = False) -> None:
    """Raises ``ValueError`` unless ``obj.field`` is finite and >= 0 (and an integer if asked),
    and finite in the engine's dtype (:func:`float_dtype`)."""
    value = getattr(obj, field)
    for v in _values(obj, field):
        if not math.isfinite(v) or v < 0 or (integer and v != int(v)):
            kind = "an integer >= 0" if integer else "finite and >= 0"
            raise ValueError(f"{_owner(obj)}: {field} must be {kind}, got {_show(value)}")
        _check_held(obj, field, v, zero_ok=True, integer=integer)


def _check_held(obj: Any, field: str, v: float, zero_ok: bool = False,
                integer: bool = False) -> None:
    """Raises ``ValueError`` when the engine cannot hold the finite value ``v`` of ``obj.field``.

    A float, in the engine's float dtype (:func:`float_dtype`): it overflows to inf
    (``explore_scale=1e308`` in float32), or (unless ``zero_ok``) a nonzero value lies below the
    dtype's smallest normal number, where it rounds to 0 or to a subnormal whose reciprocal is
    inf (``reg=1e-45``). An integer pytree leaf, in int32 (the runner's integer leaves): it lies
    outside int32's range (``warmup=2**40``). Static integer sizes stay Python ints."""
    if integer:
        limit = np.iinfo(np.int32)
        kind = field_kinds(type(obj)).get(field) if dataclasses.is_dataclass(obj) else None
        if kind is not None and kind.leaf and not limit.min <= v <= limit.max:
            raise ValueError(f"{_owner(obj)}: {field} = {int(v)} overflows the engine's int32; "
                             f"it must be at most {limit.max}")
        return
    info = np.finfo(float_dtype())
    largest, smallest = float(info.max), float(info.tiny)
    if abs(v) > largest:
        problem, bound = "overflows to inf", f"at most {largest:.4g}"
    elif 0 < abs(v) < smallest and not zero_ok:
        problem, bound = "underflows (to 0 or a subnormal)", f"at least {smallest:.4g}"
    else:
        return
    raise ValueError(f"{_owner(obj)}: {field} = {v!r} {problem} in the engine's "
                     f"{info.dtype.name}; it must be {bound} (or enable float64, "
                     "jax_enable_x64, for a wider range)")


def check_probability(obj: Any, field: str) -> None:
    """Raises ``ValueError`` unless ``obj.field`` lies in the open interval (0, 1), also as the
    engine's dtype (:func:`float_dtype`) holds it."""
    value = getattr(obj, field)
    for v in _values(obj, field):
        if not 0 < v < 1:
            raise ValueError(f"{_owner(obj)}: {field} must lie in (0, 1), got {_show(value)}")
        _check_held(obj, field, v)
        if float(np.asarray(v, float_dtype())) >= 1:
            raise ValueError(f"{_owner(obj)}: {field} = {v!r} rounds to 1 in the engine's "
                             f"{np.dtype(float_dtype()).name}; it must lie in (0, 1) as the "
                             "engine holds it (enable float64, jax_enable_x64, for values "
                             "closer to 1)")


def check_seed(obj: Any, field: str) -> None:
    """Raises ``ValueError`` unless ``obj.field`` is an integer seed in ``[0, 2**63)`` (what
    both ``jax.random.key`` and ``np.random.default_rng`` accept)."""
    value = getattr(obj, field)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or not 0 <= int(value) < 2**63:
        raise ValueError(f"{_owner(obj)}: {field} must be an integer seed in [0, 2**63), got "
                         f"{_show(value)}")


def check_choice(obj: Any, field: str, choices: tuple[str, ...]) -> None:
    """Raises ``ValueError`` unless ``obj.field`` is one of ``choices``, naming the closest
    choices of a misspelt string."""
    value = getattr(obj, field)
    if value in choices:
        return
    close = difflib.get_close_matches(value, choices, n=3, cutoff=0.5) \
        if isinstance(value, str) else []
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise ValueError(f"{_owner(obj)}: {field} must be one of {choices}, got {_show(value)}{hint}")
