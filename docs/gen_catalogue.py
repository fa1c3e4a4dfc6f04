"""Writes docs/catalogue.md from the registry: every environment and agent, its fields, their
defaults and the paper it comes from.

    python docs/gen_catalogue.py           # rewrite docs/catalogue.md
    python docs/gen_catalogue.py --check   # exit 1 if the committed page is stale

The page is generated, never edited by hand: change a class's ``description``, ``paper``,
docstring or fields, then run this script (``tests/test_docs.py`` checks the page is current).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent / "catalogue.md"

HEADER = """# Catalogue

Every registered environment and agent, generated from the registry by `docs/gen_catalogue.py`
(do not edit this page by hand). `jb.make_env(name, **fields)` and `jb.make_agent(name,
**fields)` build them; `jaxbandits list` prints the same names, descriptions and papers. Papers
are cited by key with the paper's own numbering ([Papers](papers.md)). A field marked *static*
is part of the compiled program (changing it recompiles); the others are leaves that a sweep can
vary in one compilation. A default marked *(preset)* is filled by `make_agent` from the agent's
presets; *(from d)* depends on the environment's dimension.
"""

_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def _summary(cls: type) -> str:
    """The first paragraph of a class docstring, as one line of markdown."""
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    text = " ".join(line.strip() for line in doc.splitlines())
    text = _ROLE.sub(lambda m: f"``{m.group(1).split('.')[-1]}``", text)
    return text.replace("``", "`")


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _default_repr(value) -> str:
    from jaxbandits.core import Agent, Env

    if isinstance(value, Agent | Env):
        return f"{type(value).__name__}(...)"
    if callable(value) and not isinstance(value, type):
        return getattr(value, "__name__", type(value).__name__)
    text = repr(value)
    return text if len(text) <= 40 else f"{type(value).__name__}(...)"


def _fields(cls: type, overrides=None) -> list[str]:
    from jaxbandits.core import PerDim

    overrides = dict(overrides or {})
    presets = dict(getattr(cls, "presets", {}).get(None, {}) or {})
    rows = ["| field | default | |", "|---|---|---|"]
    for field in dataclasses.fields(cls):
        if not field.init or field.name.startswith("_"):
            continue
        if field.name in overrides:
            default = f"`{_default_repr(overrides[field.name])}` (this name)"
        elif field.default is not dataclasses.MISSING:
            default = f"`{_default_repr(field.default)}`"
            if field.default is None and field.name in presets:
                value = presets[field.name]
                kind = "from d" if isinstance(value, PerDim) else "preset"
                shown = "a function of d" if isinstance(value, PerDim) else _default_repr(value)
                default = f"`{shown}` ({kind})"
        elif field.default_factory is not dataclasses.MISSING:
            default = f"`{_default_repr(field.default_factory())}`"
        else:
            default = "required"
        static = "static" if field.metadata.get("pytree_node", True) is False else ""
        rows.append(f"| `{field.name}` | {_cell(default)} | {static} |")
    return rows


def _entry(name: str, cls: type, description: str, paper: str, extra: list[str],
           overrides=None) -> list[str]:
    sentence = description[:1].upper() + description[1:]
    lines = [f"### `{name}`", "", sentence if sentence.endswith(".") else f"{sentence}.", ""]
    lines += [f"- paper: {paper or '—'}", f"- class: `{cls.__module__}.{cls.__qualname__}`"]
    lines += extra
    summary = _summary(cls)
    if summary and overrides is None:
        lines += ["", summary]
    lines += ["", *_fields(cls, overrides), ""]
    return lines


def _library(registry: dict) -> dict:
    """The entries the library registers (not those a user's code or a test added)."""
    return {n: c for n, c in registry.items() if c.__module__.startswith("jaxbandits.")}


def render() -> str:
    """The catalogue page, from the library's registrations."""
    import jaxbandits  # noqa: F401  (registers everything)
    from jaxbandits import registry

    AGENTS, ALIASES, ENVS = _library(registry.AGENTS), registry.ALIASES, _library(registry.ENVS)

    out = [HEADER, "## Environments", "", "| name | description | paper |", "|---|---|---|"]
    envs = sorted(ENVS.items())
    out += [f"| [`{n}`](#{n}) | {_cell(c.description)} | {_cell(c.paper or '—')} |"
            for n, c in envs]
    out.append("")
    for name, cls in envs:
        extra = [f"- agent families: {', '.join(cls.agent_families)}"]
        if cls.default_horizon or cls.default_runs:
            extra.append(f"- `jaxbandits run` default: T = {cls.default_horizon}, "
                         f"{cls.default_runs} runs")
        out += _entry(name, cls, cls.description, cls.paper, extra)

    def agent_row(name):
        alias = ALIASES.get(name)
        cls = AGENTS[name]
        return (cls.family, name, cls, alias)

    agents = sorted(agent_row(n) for n in AGENTS)
    out += ["## Agents", "", "| name | family | description | paper |", "|---|---|---|---|"]
    for family, name, cls, alias in agents:
        desc, paper = (alias.description, alias.paper) if alias else (cls.description, cls.paper)
        out.append(f"| [`{name}`](#{name}) | {family} | {_cell(desc)} | {_cell(paper or '—')} |")
    out.append("")
    for family, name, cls, alias in agents:
        extra = [f"- family: {family}"]
        kinds = [(label, getattr(cls, attr)) for label, attr in
                 (("actions", "action_kinds"), ("inputs", "input_kinds"))]
        kinds = [f"{label}: {', '.join(v)}" for label, v in kinds if isinstance(v, tuple)]
        if kinds:
            extra.append("- " + "; ".join(kinds))
        named = sorted(k for k in getattr(cls, "presets", {}) if k is not None)
        if named:
            extra.append(f"- presets: {', '.join(f'`{k}`' for k in named)}")
        if alias:
            extra.append(f"- a configuration of `{cls.__name__}`: "
                         + ", ".join(f"`{k}={v!r}`" for k, v in alias.fields.items()))
            out += _entry(name, cls, alias.description, alias.paper, extra, alias.fields)
        else:
            out += _entry(name, cls, cls.description, cls.paper, extra)
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    args = parser.parse_args(argv)
    page = render()
    if args.check:
        if PAGE.read_text() != page:
            print(f"{PAGE} is stale: run python docs/gen_catalogue.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
