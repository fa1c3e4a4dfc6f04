"""``--set`` and ``--grid`` values: ``TARGET.FIELD=VALUE`` items, each value read by the kind of
its field."""

from __future__ import annotations

import json
from typing import Any

_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


def parse_settings(items: list[str]) -> dict[str, dict[str, Any]]:
    """Parses ``--set TARGET.FIELD=VALUE`` items into ``{target: {field: value}}``.

    Values are read as JSON when they parse (numbers, true/false, null, lists), else as strings.
    ``jaxbandits run`` reads each value by the kind of its field instead (:func:`_read_value`).
    """
    return {target: {field: _json_or_text(raw) for field, raw in fields.items()}
            for target, fields in _raw_settings(items).items()}


def _raw_settings(items: list[str], option: str = "--set") -> dict[str, dict[str, str]]:
    """``--set`` items as ``{target: {field: the value's text}}``."""
    settings: dict[str, dict[str, str]] = {}
    for item in items:
        target_field, sep, raw = item.partition("=")
        target, dot, field = target_field.rpartition(".")
        if not sep or not dot or not target or not field:
            raise ValueError(f"{option} expects TARGET.FIELD=VALUE (e.g. env.noise_std=1), got "
                             f"{item!r}")
        fields = settings.setdefault(target, {})
        if option == "--grid" and field in fields:
            raise ValueError(f"--grid {target}.{field} is given twice ({fields[field]!r} and "
                             f"{raw!r}): give all its values in one --grid, comma-separated")
        fields[field] = raw
    return settings


def _json_or_text(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _read_value(cls: type | None, target: str, field: str, raw: str) -> Any:
    """The value of ``--set target.field=raw`` for a field of ``cls``, read by the field's kind
    (:func:`jaxbandits.core.field_kinds`, the kinds ``validate`` checks): a boolean takes exactly
    true/false, 1/0 or yes/no (any case); a string switch takes the text as is; an optional field
    takes null/none; anything else is read as JSON, so ``"0.1"`` is a number and a word given to
    a numeric field fails the type check naming the field."""
    from jaxbandits.core import field_kinds

    kind = field_kinds(cls).get(field) if cls is not None else None
    if kind is None:  # unknown field: make_env / make_agent say so, with close matches
        return _json_or_text(raw)
    word = raw.strip().lower()
    if kind.optional and word in ("null", "none"):
        return None
    if kind.kind == "bool":
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise ValueError(f"--set {target}.{field}: {field} is a boolean, give true/false, 1/0 or "
                         f"yes/no, got {raw!r}")
    if kind.kind in ("str", "path"):
        value = _json_or_text(raw)
        return value if isinstance(value, str) else raw
    return _json_or_text(raw)


def _read_values(cls: type | None, target: str, fields: dict[str, str]) -> dict[str, Any]:
    return {field: _read_value(cls, target, field, raw) for field, raw in fields.items()}


def _has_field(cls, field: str) -> bool:
    from jaxbandits.core import field_kinds

    return cls is not None and field in field_kinds(cls)

