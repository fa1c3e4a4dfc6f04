"""What the paper reproductions of ``benchmarks/`` share (docs/reproductions.md).

A reproduction is a module with ``NAME``, ``TITLE``, ``SCALES`` (``{"tiny" | "small" | "paper":
Config}``) and ``main(argv) -> Report``, one call of :func:`script`::

    def main(argv=None):
        return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)

    def body(run: C.Run) -> C.Page:      # run.config, run.key, run.progress, run.log(...)
        results = ...                    # jb.simulate / jb.sweep / C.Runner / C.run_panel
        return C.Page(figure, tables, claims, intro, data={"results": results})

A claim is ``(claim, verdict, evidence)``: True (reproduced), False (not reproduced) or None
(not decidable at this scale). :func:`run_options` fixes the chunk length and the recorded
steps' count per scale, so runs that differ only in their horizon share one compiled program.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import math
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import jax
import numpy as np

import jaxbandits as jb
from jaxbandits import Result
from jaxbandits.cli._settings import _json_or_text
from jaxbandits.results import t_quantile
from jaxbandits.tables import print_table, render_table

SCALES: tuple[str, ...] = ("tiny", "small", "paper")
#: an ordering is decided at this relative difference of means (or a paired 95% CI excluding 0)
ORDER_TOL = 0.10
#: "competitive" (:func:`not_worse`): mean at most this fraction above the reference's
NOT_WORSE_TOL = 0.10
#: "close" (:func:`close`): means within this fraction of their average
CLOSE_TOL = 0.15
#: the rules of those verdicts, for a report
RULES = (f"Competitive: mean final regret at most {100 * NOT_WORSE_TOL:.0f}% above the "
         "reference's (clearly worse: more than that with a paired 95% CI excluding 0); close: "
         f"means within {100 * CLOSE_TOL:.0f}%; an ordering is decided at a "
         f"{100 * ORDER_TOL:.0f}% difference of means or a paired 95% CI excluding 0; otherwise "
         "not decidable here.")


# -- Command line and the main of a script.

def parse_args(name: str, description: str, argv: Sequence[str] | None = None,
               options: Mapping[str, Mapping[str, Any]] | None = None) -> argparse.Namespace:
    """The shared command line, plus a script's ``options`` (``{flag: argparse keywords}``)."""
    lines = description.strip().splitlines()
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks.{name}",
                                     description=lines[0] if lines else "")
    add = parser.add_argument
    add("--scale", choices=SCALES, default="small",
        help="tiny: test-only smoke sizes; small: minutes on a 2-core CPU; paper: the papers' "
             "sizes, meant for a GPU")
    add("--seed", type=int, default=0, help="the key of every run (default 0)")
    add("--out", type=Path, default=None, help=f"output folder (default results/reproduce/{name}/)")
    add("--plain", action="store_true", help="plain markdown tables instead of rich tables")
    add("--no-progress", action="store_true", help="no progress bars")
    add("--cpu-devices", type=int, default=None,
        help="CPU devices to shard the runs over (default: one per core)")
    add("--set", action="append", default=[], metavar="FIELD=VALUE",
        help="override a field of the scale's configuration (JSON, else text; repeatable)")
    add("--cache", type=Path, default=None,
        help="a folder memoising every run by its config hash (Runner)")
    for flag, keywords in (options or {}).items():
        add(flag, **keywords)
    args = parser.parse_args(argv)
    jb.use_cpu_cores(args.cpu_devices)
    jb.use_compilation_cache()  # $JAXBANDITS_COMPILATION_CACHE, else ~/.cache/jaxbandits/jax
    args.name = name
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return args


def configure(scales: Mapping[str, Any], args: argparse.Namespace) -> Any:
    """``scales[args.scale]`` with the ``--set FIELD=VALUE`` overrides (a list becomes a tuple).

    Raises:
      ValueError: an override without ``=`` or naming no field of the configuration.
    """
    config = scales[args.scale]
    fields = {f.name for f in dataclasses.fields(config)}
    changes = {}
    for item in getattr(args, "set", []):
        field, sep, raw = item.partition("=")
        field = field.strip()
        if not sep or field not in fields:
            raise ValueError(f"--set {item!r}: expected FIELD=VALUE with FIELD one of "
                             f"{sorted(fields)}")
        value = _json_or_text(raw)
        changes[field] = tuple(value) if isinstance(value, list) else value
    return dataclasses.replace(config, **changes) if changes else config


@dataclasses.dataclass
class Run:
    """What a script's body gets: ``args``, the scale's ``config``, the output folder, the key of
    every run, the progress setting (False with ``--no-progress``) and the start time."""

    args: argparse.Namespace
    config: Any
    out: Path
    key: jax.Array
    progress: bool | None
    start: float

    def log(self, message: str) -> None:
        """Prints ``message`` with the seconds elapsed."""
        print(f"  [{time.perf_counter() - self.start:4.0f} s] {message}", flush=True)


class Page(NamedTuple):
    """What a script's body returns: the figure, tables, claims ``(claim, verdict, evidence)``,
    the report's introduction and the data the tests and notebooks read."""

    figure: Any
    tables: list
    claims: list
    intro: str
    data: dict


def script(name: str, title: str, scales: Mapping[str, Any], argv: Sequence[str] | None,
           body: Callable[[Run], Page], *, doc: str = "",
           options: Mapping[str, Mapping[str, Any]] | None = None) -> Report:
    """The ``main`` of a reproduction: runs ``body`` at the parsed scale and writes
    ``<out>/<name>.png`` and ``.md`` (default ``out``: ``results/reproduce/<name>/``)."""
    args = parse_args(name, doc or title, argv, options=options)
    config = configure(scales, args)
    out = args.out or Path("results") / "reproduce" / name
    out.mkdir(parents=True, exist_ok=True)
    run = Run(args, config, out, jax.random.key(args.seed),
              False if args.no_progress else None, time.perf_counter())
    print(f"{title}\nscale {args.scale}: {config}", flush=True)
    page = body(run)
    figure = save_figure(page.figure, out / f"{name}.png")
    intro = f"{describe(doc)}\n\nScale `{args.scale}`, seed {args.seed}: {page.intro}"
    seconds = time.perf_counter() - run.start
    command = " ".join(["python", "-m", f"benchmarks.{name}", *map(shlex.quote, args.argv)])
    markdown = write_report(out / f"{name}.md", title, intro, page.tables, page.claims, figure,
                            command, seconds)
    for table_ in page.tables:
        table_.print(plain=args.plain)
    print_claims(page.claims)
    print(f"wrote {figure} and {markdown} in {seconds:.0f} s", flush=True)
    return Report(out=out, figure=figure, markdown=markdown, tables=page.tables,
                  claims=[Verdict(*c) for c in page.claims], seconds=seconds, data=page.data)


def describe(doc: str) -> str:
    """A docstring for a report: without its first line and its closing command block."""
    text = doc.strip().partition("\n")[2].strip()
    setup, block, _ = text.partition("::\n")
    return setup.strip() + ("." if block else "")


# -- Tables, claims and reports.

@dataclasses.dataclass
class Table:
    """A titled table of strings; the first column labels the rows, ``note`` goes under it."""

    title: str
    columns: list[str]
    rows: list[list[str]] = dataclasses.field(default_factory=list)
    note: str = ""

    def add(self, *cells: Any) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"table {self.title!r}: expected {len(self.columns)} cells, "
                             f"got {len(cells)}")
        self.rows.append([str(c) for c in cells])

    @property
    def row_labels(self) -> list[str]:
        return [row[0] for row in self.rows]

    def markdown(self) -> str:
        """A markdown table, the title a heading and the note below."""
        return render_table(self.columns, self.rows, title=f"### {self.title}",
                            note=self.note or None) + "\n"

    def print(self, plain: bool = False) -> None:
        """Prints the table (rich on a terminal unless ``plain``, else markdown)."""
        print_table(self.columns, self.rows, title=f"### {self.title}" if plain or not
                    sys.stdout.isatty() else self.title, note=self.note or None, plain=plain)


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]],
          note: str = "") -> Table:
    """A :class:`Table` with ``rows`` added in order."""
    out = Table(title, list(columns), note=note)
    for row in rows:
        out.add(*row)
    return out


class Verdict(NamedTuple):
    """A checked claim: True (reproduced), False (not) or None (not decidable), and evidence."""

    claim: str
    verdict: bool | None
    evidence: str


@dataclasses.dataclass(frozen=True)
class Claim:
    """A paper's claim: ``name``, the ``statement`` cited, ``check: results -> (verdict,
    evidence)``."""

    name: str
    statement: str
    check: Callable[[Any], tuple[bool | None, str]]

    def __call__(self, results: Any) -> Verdict:
        return Verdict(self.name, *self.check(results))


def check_claims(claims: Iterable[Claim], results: Any) -> list[Verdict]:
    """Every claim checked on ``results``, in order."""
    return [claim(results) for claim in claims]


@dataclasses.dataclass
class Report:
    """What a reproduction wrote: the folder, figure, markdown file, tables, claims and data."""

    out: Path
    figure: Path
    markdown: Path
    tables: list[Table]
    claims: list[Verdict]
    seconds: float
    data: dict[str, Any] = dataclasses.field(default_factory=dict)

    def verdict(self, claim_start: str) -> bool | None:
        """The verdict of the one claim whose text starts with ``claim_start``."""
        found = [v for claim, v, _ in self.claims if claim.startswith(claim_start)]
        if len(found) != 1:
            raise KeyError(f"{len(found)} claims start with {claim_start!r}")
        return found[0]

    def table(self, title_start: str) -> Table:
        """The table whose title starts with ``title_start``."""
        for table_ in self.tables:
            if table_.title.startswith(title_start):
                return table_
        raise KeyError(title_start)


_VERDICTS = {True: "reproduced", False: "**not reproduced**", None: "not decidable here"}


def write_report(path: Path, title: str, intro: str, tables: Iterable[Table],
                 claims: Iterable[tuple[str, bool | None, str]], figure: Path,
                 command: str, seconds: float) -> Path:
    """Writes the markdown report: the setup, the figure, every table and the claims."""
    lines = [f"# {title}", "", intro.strip(), "", f"Command: `{command}`  ",
             f"Run time: {seconds:.0f} s (compilation included).", "",
             f"![{figure.stem}]({figure.name})", "", *(t.markdown() for t in tables)]
    claims = list(claims)
    if claims:
        lines += ["### Claims checked", ""]
        lines += [f"- {c}: {_VERDICTS[v]} ({evidence})" for c, v, evidence in claims] + [""]
    path.write_text("\n".join(lines))
    return path


def print_claims(claims: Iterable[tuple[str, bool | None, str]]) -> None:
    """Prints each claim as ``[yes]`` / ``[ NO]`` / ``[n/a]`` with its evidence."""
    marks = {True: "yes", False: "NO", None: "n/a"}
    for claim, verdict, evidence in claims:
        print(f"[{marks[verdict]:>3}] {claim} ({evidence})", flush=True)


# -- Experiments and the cached runner.

@dataclasses.dataclass(frozen=True)
class Experiment:
    """A figure's runs: ``env``, ``{label: agent}`` on common random numbers, T, R, a ``grid``
    ``{field: values}`` swept for every agent (``"env.<name>"`` sweeps the environment) and
    runner ``options``."""

    env: Any
    agents: Mapping[str, Any]
    horizon: int
    num_runs: int
    grid: Mapping[str, Sequence[Any]] = dataclasses.field(default_factory=dict)
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def config_hash(*parts: Any) -> str:
    """A stable digest of ``parts``' ``repr`` (without memory addresses) and the version."""
    text = _ADDRESS.sub("", repr((jb.__version__, *parts)))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class Runner:
    """A memoising runner on one key: each point ``(env, agent, horizon, num_runs, options)``
    runs once, kept in memory and, with ``cache``, as ``<cache>/<config_hash>.json``."""

    def __init__(self, key: Any, *, cache: str | Path | None = None, progress: bool | None = None,
                 log: Callable[[str], None] | None = None):
        self.key, self.progress = key, progress
        is_key = isinstance(key, jax.Array) and jax.dtypes.issubdtype(key.dtype,
                                                                        jax.dtypes.prng_key)
        self.seed = repr(jax.random.key_data(key).tolist()) if is_key else repr(key)
        self.cache = Path(cache) if cache is not None else None
        self.log = log or (lambda message: None)
        self.memory: dict[str, Result] = {}

    def _hash(self, env, agent, horizon: int, num_runs: int, options: Mapping[str, Any]) -> str:
        return config_hash(env, agent, int(horizon), int(num_runs),
                           sorted((k, repr(v)) for k, v in options.items() if k != "progress"),
                           self.seed)

    def _lookup(self, point: str) -> Result | None:
        if point not in self.memory and self.cache is not None:
            path = self.cache / f"{point}.json"
            if path.is_file():
                self.memory[point] = Result.load(path)
        return self.memory.get(point)

    def _store(self, point: str, result: Result) -> None:
        self.memory[point] = result
        if self.cache is not None:
            self.cache.mkdir(parents=True, exist_ok=True)
            result.save(self.cache / point)

    def simulate(self, env, agent, horizon: int, num_runs: int, name: str | None = None,
                 **options: Any) -> Result:
        """``jb.simulate`` of one point, or its cached result."""
        point = self._hash(env, agent, horizon, num_runs, options)
        result = self._lookup(point)
        if result is None:
            options.setdefault("progress", self.progress)
            result = jb.simulate(env, agent, self.key, horizon, num_runs, name=name, **options)
            self.log(f"{name or agent.name}: compile {result.compile_time:.1f} s, "
                     f"run {result.wall_time:.1f} s")
            self._store(point, result)
        if name is not None:
            result.name = name
        return result

    def sweep(self, env, agent, field: str, values: Sequence[Any], horizon: int,
              num_runs: int, name: str | None = None, **options: Any) -> list[Result]:
        """One Result per value of ``field`` (an agent field or ``"env.<name>"``), in order; the
        values not cached run in one ``jb.sweep``, named ``"<name> <field>=<value>"``."""
        def at(value):
            if field.startswith("env."):
                return env.replace(**{field[4:]: value}), agent
            return env, agent.replace(**{field: value})

        points = [self._hash(*at(v), horizon, num_runs, options) for v in values]
        missing = [(p, v) for p, v in dict(zip(points, values, strict=True)).items()
                   if self._lookup(p) is None]
        if missing:
            options.setdefault("progress", self.progress)
            swept = jb.sweep(env, agent, self.key, {field: [v for _, v in missing]}, horizon,
                             num_runs, **options)
            results = list(swept.values())
            for (point, value), result in zip(missing, results, strict=True):
                result.name = f"{name or agent.name} {field}={value}"
                self._store(point, result)
            self.log(f"{name or agent.name}, {field} in {[v for _, v in missing]}: compile "
                     f"{sum(r.compile_time for r in results):.1f} s, run "
                     f"{sum(r.wall_time for r in results):.1f} s")
        return [self.memory[p] for p in points]

    def run(self, experiment: Experiment) -> dict[str, Any]:
        """``{label: Result}``, with a grid ``{label: {value: Result}}`` (several fields:
        ``{label: {field: {value: Result}}}``)."""
        e = experiment
        out: dict[str, Any] = {}
        for label, agent in e.agents.items():
            if not e.grid:
                out[label] = self.simulate(e.env, agent, e.horizon, e.num_runs, name=label,
                                           **e.options)
                continue
            by_field = {field: dict(zip(values, self.sweep(e.env, agent, field, values,
                                                           e.horizon, e.num_runs, name=label,
                                                           **e.options), strict=True))
                        for field, values in e.grid.items()}
            out[label] = next(iter(by_field.values())) if len(by_field) == 1 else by_field
        return out


def run_experiments(run: Run, experiments: Mapping[str, Experiment]) -> dict[str, Any]:
    """``{title: Runner.run(experiment)}`` through one :class:`Runner` of ``run``."""
    runner = Runner(run.key, cache=run.args.cache, progress=run.progress, log=run.log)
    return {title: runner.run(dataclasses.replace(e, options={**e.options,
                                                              "progress": run.progress}))
            for title, e in experiments.items()}


def final_table(title: str, panels: Mapping[str, Mapping[str, Result]], note: str = "") -> Table:
    """Final regret (mean ± 95% CI), a row per label, a column per panel ("—": absent)."""
    labels = dict.fromkeys(label for results in panels.values() for label in results)
    out = Table(title, ["agent", *panels], note=note)
    for label in labels:
        out.add(label, *(fmt_ci(final_regret(results[label])) if label in results else "—"
                         for results in panels.values()))
    return out


def user_data(make: Callable[[], Any], standin: Callable[[], Any] | None, what: str,
              log: Callable[[str], None] = print) -> tuple[Any, str]:
    """``(make(), "")``, or where its data file is absent ``(standin(), note)`` (``None``
    without a stand-in), the note naming the file and where to put it."""
    from jaxbandits.envs import DataNotFoundError

    try:
        return make(), ""
    except DataNotFoundError as error:
        note = str(error).strip().splitlines()[0].rstrip(".") + "; " + (
            f"a bundled stand-in runs in place of {what}" if standin else f"{what} is skipped")
        log(note)
        return (standin() if standin else None), note


# -- Panels: an environment and entries, each one agent run once or swept over a numeric field.

@dataclasses.dataclass(frozen=True)
class Entry:
    """An agent of a panel, swept over ``field`` / ``values`` (None: one run): ``tune`` keeps
    the best value, else each value is a curve named by ``value_labels``; ``kind``: ``"es"``,
    ``"dt"``, ``"variant"`` or ``"baseline"`` (:data:`STYLES`), ``value_kinds`` per value."""

    label: str
    agent: Any
    field: str | None = None
    values: tuple = ()
    tune: bool = False
    value_labels: tuple[str, ...] = ()
    kind: str = "baseline"
    value_kinds: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Panel:
    """An environment and its entries, compared to the curve ``reference``; ``warmup``: the
    rounds before learning."""

    title: str
    env: Any
    entries: tuple[Entry, ...]
    reference: str
    warmup: int = 0


@dataclasses.dataclass
class PanelResult:
    """``curves`` ``{label: Result}`` (tuned entries at their best value), ``rows`` ``[(label,
    setting, Result, kind, chosen)]``, ``tuned`` ``{label: best value}``, ``kinds``."""

    panel: Panel
    curves: dict[str, Result]
    rows: list[tuple[str, str, Result, str, bool]]
    tuned: dict[str, Any]
    kinds: dict[str, str]


def checkpoints(horizon: int, warmup: int) -> tuple[int, int, int]:
    """``(w1, w2, T)``: the ends of the first and last 20% of the rounds after ``warmup``."""
    span = max(int(0.2 * (horizon - warmup)), 1)
    return warmup + span, horizon - span, horizon


def run_panel(panel: Panel, key: jax.Array, config: Any,
              progress: bool | None = False) -> PanelResult:
    """Every entry of ``panel`` on the same instances at ``config``'s sizes, one program per
    entry, the :func:`checkpoints` recorded."""
    options = config_options(config, (panel.warmup, *checkpoints(config.horizon, panel.warmup)),
                             progress)
    out = PanelResult(panel, {}, [], {}, {})
    for entry in panel.entries:
        if entry.field is None:
            result = jb.compare(panel.env, {entry.label: entry.agent}, key, config.horizon,
                                config.num_runs, **options)[entry.label]
            out.curves[entry.label], out.kinds[entry.label] = result, entry.kind
            out.rows.append((entry.label, "paper defaults", result, entry.kind, True))
            continue
        swept = jb.sweep(panel.env, entry.agent, key, {entry.field: list(entry.values)},
                         config.horizon, config.num_runs, **options)
        by_value = dict(zip(entry.values, swept.values(), strict=True))
        if entry.tune:
            best = min(by_value, key=lambda v: mean_final(by_value[v]))
            out.tuned[entry.label] = best
            label = f"{entry.label} ({entry.field}={best:g}, tuned)"
            out.curves[label], out.kinds[label] = by_value[best], entry.kind
            out.rows += [(entry.label, f"{entry.field} = {v:g}", r, entry.kind, v == best)
                         for v, r in by_value.items()]
            continue
        kinds = entry.value_kinds or (entry.kind,) * len(entry.values)
        for label, kind, (value, result) in zip(entry.value_labels, kinds, by_value.items(),
                                                strict=True):
            out.curves[label], out.kinds[label] = result, kind
            out.rows.append((label, f"{entry.field} = {value:g}", result, kind, True))
    return out


def builders(table: Mapping[str, Callable], names: Sequence[str] | str) -> dict[str, Callable]:
    """``{name: table[name]}`` for ``names`` (a string is one name).

    Raises:
      ValueError: a name that is not a panel of ``table``.
    """
    names = (names,) if isinstance(names, str) else tuple(names)
    unknown = [name for name in names if name not in table]
    if unknown:
        raise ValueError(f"no panel {', '.join(map(repr, unknown))}; the panels are "
                         f"{', '.join(map(repr, table))} (--set 'panels=[\"NAME\", ...]')")
    return {name: table[name] for name in names}


def panel_table(result: PanelResult, config: Any, note: str) -> Table:
    """Every configuration of a panel: final regret, its sd, the paired gap to the reference
    and the run time."""
    panel = result.panel
    reference = final_regret(result.curves[panel.reference])
    out = Table(f"{panel.title}: final regret at T = {config.horizon}",
                ["agent", "setting", "final regret (mean ± 95% CI)", "sd over runs",
                 f"gap to {panel.reference} (paired)", "run s"],
                note=note + " * marks the tuned value of a baseline's grid (plotted). Run s: "
                "seconds of running for all runs, compilation excluded (a sweep's time is "
                "split evenly over its points).")
    tuned = {e.label for e in panel.entries if e.tune}
    for label, setting, res, _, chosen in result.rows:
        final = final_regret(res)
        out.add(label, setting + (" *" if label in tuned and chosen else ""), fmt_ci(final),
                sd_text(final), "—" if label == panel.reference else fmt_ci(final - reference),
                f"{res.wall_time:.1f}")
    return out


# -- Figures.

STYLES = {"es": {"color": "0.35", "linestyle": "--", "linewidth": 2.0},
          "dt": {"linestyle": "--"}, "variant": {"color": "0.6", "linestyle": ":"},
          "baseline": {"linestyle": "-"}}


def draw_curves(ax, curves: Mapping[str, Result], kinds: Mapping[str, str], title: str,
                warmup: int = 0, band_alpha: float = 0.15, styles: Mapping = STYLES) -> None:
    """Mean cumulative regret with 95% bands, styled by kind; a dotted line at ``warmup``."""
    for label, result in curves.items():
        steps = np.asarray(result.steps)
        (line,) = ax.plot(steps, result.mean("regret"), label=label,
                          **styles[kinds.get(label, "baseline")])
        if result.num_runs > 1:
            lower_, upper = result.confidence_band("regret")
            ax.fill_between(steps, lower_, upper, color=line.get_color(), alpha=band_alpha,
                            linewidth=0)
    if warmup:
        ax.axvline(warmup, color="0.6", linewidth=0.8, linestyle=":")
    style_axes(ax, "round t", "cumulative regret", title, legend=7)


def new_figure(nrows: int, ncols: int, width: float = 5.0, height: float = 3.8):
    """A headless figure with an ``(nrows, ncols)`` array of axes."""
    import matplotlib

    if not matplotlib.get_backend() or "inline" not in matplotlib.get_backend():
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), dpi=110,
                        squeeze=False)


def save_figure(fig, path: Path) -> Path:
    """Writes ``fig`` as PNG and closes it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)
    return path


def style_axes(ax, xlabel: str, ylabel: str, title: str, legend: float | None = None,
               which: str = "major", log: str = "") -> None:
    """Labels, title and grid; a legend of font size ``legend``; ``log`` in ``"x"``, ``"y"``,
    ``"xy"``."""
    if "x" in log:
        ax.set_xscale("log")
    if "y" in log:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3, which=which)
    if legend:
        ax.legend(fontsize=legend)


def draw_errorbars(ax, x: Sequence, results: Sequence[Result], label: str, **style) -> None:
    """Final regret (mean, 95% CI) of ``results`` against ``x``."""
    stats = np.array([mean_ci(final_regret(r)) for r in results])
    ax.errorbar(x, stats[:, 0], yerr=np.nan_to_num(stats[:, 1]), marker="o", capsize=3,
                label=label, **style)


def not_run(ax, title: str, text: str = "not run at this scale") -> None:
    """An empty panel that says why."""
    ax.set_title(title)
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, fontsize=9,
            transform=ax.transAxes)
    ax.set_axis_off()


def draw_panels(panels: Mapping[str, Mapping[str, Result]], ncols: int = 3):
    """One axes per panel of :func:`run_experiments`: mean cumulative regret with 95% bands."""
    ncols = min(ncols, max(len(panels), 1))
    fig, axes = new_figure(-(-max(len(panels), 1) // ncols), ncols)
    for ax, (title, results) in zip(axes.flat, panels.items(), strict=False):
        draw_curves(ax, results, {}, title)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    return fig


# -- Runner options.

def record_steps(horizon: int, num: int, include: Iterable[int] = ()) -> np.ndarray:
    """Exactly ``min(num, horizon)`` increasing, about log-spaced steps in ``[1, horizon]``,
    ``horizon`` and ``include`` among them: one recording shape for every horizon."""
    num = min(num, horizon)
    chosen = {horizon} | {int(s) for s in include if 1 <= int(s) <= horizon}
    if len(chosen) > num:
        raise ValueError(f"record_steps: {len(chosen)} steps to include but only {num} slots")
    candidates = np.unique(np.round(np.geomspace(1, horizon, 4 * num)).astype(np.int64))
    candidates = [int(c) for c in candidates if c not in chosen]
    picks = np.linspace(0, len(candidates) - 1, num - len(chosen))
    chosen |= {candidates[i] for i in np.unique(np.round(picks).astype(int))}
    rest = iter(c for c in range(1, horizon + 1) if c not in chosen)
    while len(chosen) < num:  # rounding collisions: fill with the earliest free steps
        chosen.add(next(rest))
    return np.asarray(sorted(chosen), dtype=np.int64)


def run_options(horizon: int, chunk_size: int, num_records: int, include: Iterable[int] = (),
                progress: bool | None = None, block_runs: int | None = None) -> dict[str, Any]:
    """``jb.simulate`` / ``compare`` / ``sweep`` keywords with the chunk length and recorded
    steps' count fixed, so calls differing only in the horizon share a program;
    ``$BENCH_BLOCK_RUNS``, else ``block_runs``, sets the run block."""
    options = {"chunk_size": min(chunk_size, horizon),
               "record": record_steps(horizon, num_records, include).tolist(),
               "progress": progress}
    if os.environ.get("BENCH_BLOCK_RUNS"):  # e.g. one block of a paper's 200 runs on a GPU
        options["block_runs"] = int(os.environ["BENCH_BLOCK_RUNS"])
    elif block_runs:
        options["block_runs"] = block_runs
    return options


def config_options(config: Any, include: Iterable[int] = (), progress: bool | None = None,
                   horizon: int | None = None, block_runs: int | None = None) -> dict[str, Any]:
    """:func:`run_options` from ``config``'s ``horizon`` (or ``horizon``), ``chunk_size``,
    ``num_records``, and ``block_runs``."""
    return run_options(config.horizon if horizon is None else horizon, config.chunk_size,
                       config.num_records, include, progress, block_runs)


# -- Statistics and verdicts.

def final_regret(result: Result, step: int | None = None, metric: str = "regret") -> np.ndarray:
    """``(runs,)`` cumulative ``metric`` at a recorded ``step`` (default: the horizon)."""
    values = result.cumulative_regret if metric == "regret" else result.metrics[metric]
    if step is None:
        return np.asarray(values[:, -1], dtype=np.float64)
    index = np.flatnonzero(np.asarray(result.steps) == step)
    if index.size == 0:
        raise ValueError(f"step {step} was not recorded (recorded: {result.steps.tolist()})")
    return np.asarray(values[:, index[0]], dtype=np.float64)


def regret_at(result: Result, step: int) -> np.ndarray:
    """``(runs,)`` cumulative regret at a recorded ``step`` (0 before the first round)."""
    return np.zeros(result.num_runs) if step <= 0 else final_regret(result, step)


def mean_final(result: Result) -> float:
    """The mean final regret."""
    return float(final_regret(result).mean())


def mean_se(values: np.ndarray) -> tuple[float, float]:
    """``(mean, standard error)`` (nan for one value)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return float(values.mean()), math.nan
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))


def mean_ci(values: np.ndarray) -> tuple[float, float]:
    """``(mean, half-width of the 95% Student-t interval)``."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return float(values.mean()), math.nan
    return float(values.mean()), float(t_quantile(values.size - 1) * values.std(ddof=1)
                                        / math.sqrt(values.size))


def paired_gap(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean and 95% half-width of ``a - b`` run by run."""
    return mean_ci(np.asarray(a, np.float64) - np.asarray(b, np.float64))


def decide(holds: bool, contradicted: bool) -> bool | None:
    """True if ``holds``, else False if ``contradicted``, else None (not decidable)."""
    return True if holds else (False if contradicted else None)


def verdict_at_most(values: np.ndarray, limit: float) -> bool | None:
    """Mean of ``values`` at most ``limit``: True on the mean, False when the 95% interval lies
    above it, else None."""
    mean, half = mean_ci(values)
    return decide(mean <= limit, not math.isnan(half) and mean - half > limit)


def sublinear(result: Result) -> tuple[bool | None, str]:
    """R(t)/t decreases from the recorded step nearest T/2 to T (:func:`verdict_at_most` of
    the per-run change against 0), with the evidence."""
    steps = np.asarray(result.steps)
    i = int(np.argmin(np.abs(steps - result.horizon / 2)))
    average = np.asarray(result.cumulative_regret, np.float64) / steps
    return verdict_at_most(average[:, -1] - average[:, i], 0.0), (
        f"R(t)/t {average[:, i].mean():.3g} at t = {steps[i]}, "
        f"{average[:, -1].mean():.3g} at t = {steps[-1]}")


def lower(a: np.ndarray, b: np.ndarray) -> bool | None:
    """``a`` below ``b`` (paired): True on the mean, False when ``a - b``'s 95% interval lies
    above 0, else None."""
    mean, half = paired_gap(a, b)
    return decide(mean < 0, mean - half > 0)


def all_of(verdicts: Sequence[bool | None]) -> bool | None:
    """True if all are True, False if any is False, else None."""
    if any(v is False for v in verdicts):
        return False
    return True if all(v is True for v in verdicts) else None


def sd_text(values: np.ndarray) -> str:
    """The sample standard deviation (0 for one value), one decimal."""
    values = np.asarray(values)
    return f"{values.std(ddof=1) if values.size > 1 else 0.0:.1f}"


def every(checks: Mapping[str, tuple[bool | None, str]]) -> tuple[bool | None, str]:
    """``{name: (verdict, evidence)}`` as one claim: :func:`all_of` with every evidence."""
    return (all_of([v for v, _ in checks.values()]),
            "; ".join(f"{name}: {evidence}" for name, (_, evidence) in checks.items()))


def ordering(a: float, b: float, gap: tuple[float, float] | None = None,
             tol: float = ORDER_TOL) -> tuple[bool | None, str]:
    """``a`` larger than ``b``: True by ``tol`` (relative) or when the paired ``gap`` ``(mean,
    95% half-width)`` excludes 0 above, False the other way round, else None; with evidence."""
    rel = (a - b) / max(abs(b), 1e-12)
    mean_gap, half = gap if gap is not None else (a - b, math.inf)
    evidence = f"{a:.3g} vs {b:.3g} ({100 * rel:+.0f}%"
    evidence += f", paired gap {mean_gap:+.3g} ± {half:.3g})" if gap is not None else ")"
    if rel >= tol or mean_gap - half > 0:
        return True, evidence
    if rel <= -tol or mean_gap + half < 0:
        return False, evidence
    return None, evidence


def worse_than(a: Result, b: Result, tol: float = ORDER_TOL) -> tuple[bool | None, str]:
    """``a``'s final regret larger than ``b``'s (:func:`ordering`, paired)."""
    fa, fb = final_regret(a), final_regret(b)
    return ordering(fa.mean(), fb.mean(), paired_gap(fa, fb), tol)


def not_worse(a: Result, b: Result, tol: float = NOT_WORSE_TOL) -> tuple[bool | None, str]:
    """``a`` competitive with ``b``: True when ``mean(a) <= (1 + tol) mean(b)``, False when worse
    by more with a paired 95% CI excluding 0, else None."""
    fa, fb = final_regret(a), final_regret(b)
    gap, half = paired_gap(fa, fb)
    rel = fa.mean() / max(fb.mean(), 1e-12) - 1
    return decide(rel <= tol, gap - half > 0), (
        f"{fa.mean():.1f} vs {fb.mean():.1f} ({100 * rel:+.0f}%), paired gap "
        f"{gap:+.1f} ± {half:.1f}")


def within(a: Result, b: Result, tol: float = NOT_WORSE_TOL) -> tuple[bool | None, str]:
    """:func:`not_worse`, False only when the paired 95% CI of ``a - (1 + tol) b`` lies above 0."""
    fa, fb = final_regret(a), final_regret(b)
    gap, half = paired_gap(fa, (1 + tol) * fb)
    return decide(gap <= 0, gap - half > 0), (
        f"{fa.mean():.4g} vs {fb.mean():.4g} (tolerance +{100 * tol:.0f}%), paired gap "
        f"to the tolerance {gap:+.3g} ± {half:.3g}")


def close(a: Result, b: Result, tol: float = CLOSE_TOL) -> tuple[bool, str]:
    """The mean final regrets of ``a`` and ``b`` within ``tol`` of their average."""
    fa, fb = final_regret(a), final_regret(b)
    rel = abs(fa.mean() - fb.mean()) / max(0.5 * (fa.mean() + fb.mean()), 1e-12)
    gap, half = paired_gap(fa, fb)
    return bool(rel <= tol), (f"{fa.mean():.1f} vs {fb.mean():.1f}: {100 * rel:.0f}% apart "
                              f"(tolerance {100 * tol:.0f}%), paired gap {gap:+.1f} ± {half:.1f}")


def _fmt(mean: float, spread: float) -> str:
    digits = 0 if abs(mean) >= 100 else 1 if abs(mean) >= 10 else 2
    return f"{mean:.{digits}f} ± {spread:.{digits}f}"


def fmt_ci(values: np.ndarray) -> str:
    """``"mean ± half-width"`` (95% CI)."""
    return _fmt(*mean_ci(values))


def fmt_se(values: np.ndarray) -> str:
    """``"mean ± s.e."``."""
    return _fmt(*mean_se(values))


def gap_text(values: np.ndarray, digits: int = 1) -> str:
    """``"+mean ± half-width"`` of a paired gap (95% CI)."""
    mean, half = mean_ci(values)
    return f"{mean:+.{digits}f} ± {half:.{digits}f}"
