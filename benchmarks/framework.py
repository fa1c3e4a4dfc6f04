"""Shared plumbing of the paper reproductions in ``benchmarks/``.

Every reproduction script is runnable on its own (``python -m benchmarks.<name>``) and
importable (its ``main(argv)`` returns a :class:`Report`). This module holds what they share:

* :func:`parse_args`: ``--scale tiny|small|paper``, ``--seed``, ``--out``, ``--plain``,
  ``--no-progress``;
* :func:`output_dir`: the output folder (default ``results/reproduce/<name>/``);
* :class:`Table` and :func:`write_report`: markdown tables, printed with rich (or plain text);
* :func:`new_figure` / :func:`save_figure`: headless matplotlib figures written as PNG;
* :func:`record_steps` and :func:`run_options`: runner options chosen so that programs compile
  once per static configuration (see below);
* small statistics helpers (:func:`final_regret`, :func:`mean_ci`, :func:`mean_se`,
  :func:`paired_gap`, :func:`fmt_ci`, :func:`fmt_se`) and :func:`verdict_at_most`, the
  three-valued verdict of a "gap <= tolerance" claim;
* :func:`command_line`, :func:`print_claims`, :func:`timer`: the small pieces of ``main``.

A script's ``main(argv)`` parses the shared options, runs, draws one figure
(:func:`new_figure` / :func:`save_figure`), builds :class:`Table` s and claims
``(claim, verdict, evidence)`` and calls :func:`write_report`; it returns a :class:`Report`,
which is what the tests and the notebook read.

**Compile time.** On a 2-core CPU one ``jb.simulate`` of a small linear problem runs in a fraction
of a second but compiles for 5-10 s, so the number of distinct static configurations (ensemble
size, dimension, number of arms, reference law...) sets the run time of a reproduction. The
runner caches a compiled program per argument signature: the horizon is an argument, but the
chunk length and the number of recorded steps are shapes. :func:`run_options` therefore fixes both
per scale, so that two calls that differ only in their horizon (or a numeric hyperparameter)
share one program. A grid may also vary static fields (an ensemble size, a sampling law, a
network width): ``jb.sweep`` compiles one program per distinct static value, and each grid
point's runs equal ``jb.simulate``'s with that point's settings bit for bit. Each distinct value
is one more compilation, so the ``tiny`` scales keep few of them; ``jb.sweep`` plays runs in
fixed blocks, which bounds a sweep's memory whatever its number of grid points.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
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
from jaxbandits.results import t_quantile
from jaxbandits.tables import print_table, render_table

ROOT = Path(__file__).resolve().parents[1]

__all__ = [
    "ROOT",
    "SCALES",
    "Claim",
    "Experiment",
    "Report",
    "Runner",
    "Table",
    "Verdict",
    "check_claims",
    "command_line",
    "config_hash",
    "configure",
    "final_regret",
    "finish",
    "fmt_ci",
    "fmt_se",
    "mean_ci",
    "mean_se",
    "new_figure",
    "output_dir",
    "paired_gap",
    "parse_args",
    "print_claims",
    "record_steps",
    "run_options",
    "save_figure",
    "timer",
    "verdict_at_most",
    "write_report",
]

SCALES: tuple[str, ...] = ("tiny", "small", "paper")
SCALE_HELP = ("tiny: test-only smoke sizes (seconds of running, the rest is compilation); "
              "small: minutes on a 2-core CPU; paper: the papers' sizes, meant for a GPU")


# ------------------------------------------------------------------------------------------------
# Command line and output folder.


def parse_args(name: str, description: str, argv: Sequence[str] | None = None,
               default_scale: str = "small") -> argparse.Namespace:
    """The shared command line of a reproduction script.

    Options: ``--scale {tiny,small,paper}``, ``--seed`` (the JAX key of every run),
    ``--out`` (default ``results/reproduce/<name>/``), ``--plain`` (plain-text tables instead of
    rich), ``--no-progress`` (no progress bars), ``--cpu-devices`` (``jb.use_cpu_cores``:
    one device per core by default, so the runs are split over the cores).
    """
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks.{name}", description=description)
    parser.add_argument("--scale", choices=SCALES, default=default_scale, help=SCALE_HELP)
    parser.add_argument("--seed", type=int, default=0, help="the key of every run (default 0)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"output folder (default results/reproduce/{name}/)")
    parser.add_argument("--plain", action="store_true",
                        help="print tables as plain markdown instead of rich tables")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--cpu-devices", type=int, default=None,
                        help="CPU devices to shard the runs over (default: one per core)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="override a field of the scale's configuration, e.g. --set "
                             "num_runs=20 (the value read as JSON, else as text; repeatable), "
                             "as `jaxbandits run --set` does for agents")
    parser.add_argument("--cache", type=Path, default=None,
                        help="a folder memoising every run by its config hash (Runner): a rerun "
                             "loads the points it already played")
    args = parser.parse_args(argv)
    jb.use_cpu_cores(args.cpu_devices)
    jb.use_compilation_cache()  # $JAXBANDITS_COMPILATION_CACHE, else ~/.cache/jaxbandits/jax
    args.name = name
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return args


def configure(scales: Mapping[str, Any], args: argparse.Namespace) -> Any:
    """The configuration of ``args.scale`` with the ``--set FIELD=VALUE`` overrides applied.

    Values are read as JSON (``20``, ``0.5``, ``true``, ``[1, 2]``; a list becomes a tuple),
    else kept as text, as the command line's ``--set`` reads them.

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
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        changes[field] = tuple(value) if isinstance(value, list) else value
    return dataclasses.replace(config, **changes) if changes else config


def output_dir(name: str, out: str | Path | None = None) -> Path:
    """``out``, or ``results/reproduce/<name>/`` under the working directory; created."""
    path = Path(out) if out is not None else Path("results") / "reproduce" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def command_line(name: str, argv: Sequence[str]) -> str:
    """The command that reproduces a run, for the report."""
    return " ".join(["python", "-m", f"benchmarks.{name}", *map(shlex.quote, argv)])


# ------------------------------------------------------------------------------------------------
# Tables and reports.


@dataclasses.dataclass
class Table:
    """A titled table of strings; the first column labels the rows.

    Rendered by the one table renderer (:mod:`jaxbandits.tables`, the library's
    ``jaxbandits.tables``).

    Attributes:
      title: a heading.  columns: the header.  rows: lists of cells (strings).
      note: a paragraph printed under the table (units, tolerances, what the numbers are).
    """

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
        """A GitHub-flavoured markdown table (with the title as a heading and the note below)."""
        return render_table(self.columns, self.rows, title=f"### {self.title}",
                            note=self.note or None) + "\n"

    def print(self, plain: bool = False) -> None:
        """Prints the table with rich on a terminal (unless ``plain``), else as markdown."""
        print_table(self.columns, self.rows, title=f"### {self.title}" if plain or not
                    sys.stdout.isatty() else self.title, note=self.note or None, plain=plain)


# ------------------------------------------------------------------------------------------------
# Claims.


class Verdict(NamedTuple):
    """A claim checked on results: ``(claim, verdict, evidence)``.

    ``verdict`` is True (reproduced), False (not reproduced) or None (not decidable at this
    scale, e.g. the interval straddles the paper's tolerance); ``evidence`` holds the numbers.
    """

    claim: str
    verdict: bool | None
    evidence: str


@dataclasses.dataclass(frozen=True)
class Claim:
    """One of a paper's claims, as a check of a reproduction's results.

    Attributes:
      name: a short label, starting with the figure or table (``"Fig. 2: M = 8 matches TS"``).
      statement: what the paper states, with its citation (``"Li et al. 2024, Sec. 5.1"``).
      check: ``results -> (verdict, evidence)``: True / False / None and the numbers.
    """

    name: str
    statement: str
    check: Callable[[Any], tuple[bool | None, str]]

    def __call__(self, results: Any) -> Verdict:
        verdict, evidence = self.check(results)
        return Verdict(self.name, verdict, evidence)


def check_claims(claims: Iterable[Claim], results: Any) -> list[Verdict]:
    """Every claim checked on ``results``, in order."""
    return [claim(results) for claim in claims]


@dataclasses.dataclass
class Report:
    """What a reproduction wrote: the folder, the figure, the markdown file and the tables."""

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
        for table in self.tables:
            if table.title.startswith(title_start):
                return table
        raise KeyError(title_start)


def write_report(path: Path, title: str, intro: str, tables: Iterable[Table],
                 claims: Iterable[tuple[str, bool | None, str]], figure: Path,
                 command: str, seconds: float) -> Path:
    """Writes the markdown report: the setup, the figure, every table and the claims checked.

    ``claims`` are ``(claim, verdict, evidence)`` with verdict True (reproduced), False (not
    reproduced) or None (not decidable at this scale).
    """
    verdicts = {True: "reproduced", False: "**not reproduced**", None: "not decidable here"}
    lines = [f"# {title}", "", intro.strip(), "", f"Command: `{command}`  ",
             f"Run time: {seconds:.0f} s (compilation included).", "",
             f"![{figure.stem}]({figure.name})", ""]
    for table in tables:
        lines += [table.markdown()]
    claims = list(claims)
    if claims:
        lines += ["### Claims checked", ""]
        lines += [f"- {claim}: {verdicts[verdict]} ({evidence})"
                  for claim, verdict, evidence in claims]
        lines += [""]
    path.write_text("\n".join(lines))
    return path


def print_claims(claims: Iterable[tuple[str, bool | None, str]]) -> None:
    """Prints each claim as ``[yes]`` / ``[ NO]`` / ``[n/a]``, the claim and its evidence."""
    verdicts = {True: "yes", False: "NO", None: "n/a"}
    for claim, verdict, evidence in claims:
        print(f"[{verdicts[verdict]:>3}] {claim} ({evidence})", flush=True)


def finish(name: str, title: str, intro: str, tables: list[Table],
           claims: list[tuple[str, bool | None, str]], figure: Path, out: Path,
           args, seconds: float, data: dict[str, Any]) -> Report:
    """Writes ``<out>/<name>.md``, prints the tables and the claims, and returns the report."""
    markdown = write_report(out / f"{name}.md", title, intro, tables, claims, figure,
                            command_line(name, args.argv), seconds)
    for table in tables:
        table.print(plain=args.plain)
    print_claims(claims)
    print(f"wrote {figure} and {markdown} in {seconds:.0f} s", flush=True)
    claims = [Verdict(*c) for c in claims]
    return Report(out=out, figure=figure, markdown=markdown, tables=tables, claims=claims,
                  seconds=seconds, data=data)


# ------------------------------------------------------------------------------------------------
# Experiments and the cached runner.


@dataclasses.dataclass(frozen=True)
class Experiment:
    """One set of runs of a figure: an environment, agents and a grid, at one scale.

    Attributes:
      env: a ``jb`` environment (``jb.make_env(...)``).
      agents: ``{label: agent}`` (``jb.make_agent(...)``), played with common random numbers.
      horizon / num_runs: rounds T and independent runs R.
      grid: ``{field: values}`` swept for every agent with ``jb.sweep`` (an agent field, or an
        environment field as ``"env.<name>"``); empty: one ``jb.simulate`` per agent.
      options: runner options (``chunk_size``, ``record``, ``block_runs``: :func:`run_options`).
    """

    env: Any
    agents: Mapping[str, Any]
    horizon: int
    num_runs: int
    grid: Mapping[str, Sequence[Any]] = dataclasses.field(default_factory=dict)
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def config_hash(*parts: Any) -> str:
    """A stable hex digest of ``parts`` (environments, agents, sizes, options, the seed): their
    ``repr`` without memory addresses, and the library's version."""
    text = _ADDRESS.sub("", repr((jb.__version__, *parts)))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class Runner:
    """The one memoising runner of the reproductions: common random numbers (one key for every
    run), each point run once, in memory and, with ``cache``, on disk by its config hash.

    A point is an ``(env, agent, horizon, num_runs, options)``; its hash (:func:`config_hash`)
    names ``<cache>/<hash>.npz`` / ``.json`` (``Result.save``), so a second run of a script with
    the same ``--cache`` folder loads every point it has already played. :meth:`sweep` runs only
    the grid values not cached yet, in one ``jb.sweep``.
    """

    def __init__(self, key: Any, *, cache: str | Path | None = None, progress: bool | None = None,
                 log: Callable[[str], None] | None = None):
        self.key, self.progress = key, progress
        self.seed = repr(jax.random.key_data(key).tolist()) if _is_key(key) else repr(key)
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
        """``agent`` at each of ``values`` of ``field`` (an agent field, or ``"env.<name>"``):
        one Result per value, in order; the values not cached run in one ``jb.sweep`` and are
        named ``"<name> <field>=<value>"`` (a cached point keeps the name it was run under)."""
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
            compiled = sum(r.compile_time for r in results)
            self.log(f"{name or agent.name}, {field} in {[v for _, v in missing]}: compile "
                     f"{compiled:.1f} s, run {sum(r.wall_time for r in results):.1f} s")
        return [self.memory[p] for p in points]

    def run(self, experiment: Experiment) -> dict[str, Any]:
        """Every agent of ``experiment``: ``{label: Result}``, or with a grid of one field
        ``{label: {value: Result}}`` (a grid of several fields: one sweep per field)."""
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


def _is_key(key: Any) -> bool:
    return isinstance(key, jax.Array) and jax.dtypes.issubdtype(key.dtype,
                                                                  jax.dtypes.prng_key)


# ------------------------------------------------------------------------------------------------
# Figures.


def new_figure(nrows: int, ncols: int, width: float = 5.0, height: float = 3.8):
    """A headless figure with an ``(nrows, ncols)`` array of axes."""
    import matplotlib

    if not matplotlib.get_backend() or "inline" not in matplotlib.get_backend():
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), dpi=110,
                             squeeze=False)
    return fig, axes


def save_figure(fig, path: Path, close: bool = True) -> Path:
    """Writes ``fig`` as PNG (and closes it unless ``close=False``)."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, format="png")
    if close:
        plt.close(fig)
    return path


# ------------------------------------------------------------------------------------------------
# Runner options.


def record_steps(horizon: int, num: int, include: Iterable[int] = ()) -> np.ndarray:
    """Exactly ``min(num, horizon)`` increasing steps in ``[1, horizon]``, about log-spaced.

    The steps in ``include`` (those in range) and ``horizon`` are always among them. A fixed
    count, unlike :func:`jaxbandits.runner.log_spaced_steps`, keeps the recording buffer's
    shape (and so the compiled program) the same for every horizon.
    """
    num = min(num, horizon)
    chosen = {horizon} | {int(s) for s in include if 1 <= int(s) <= horizon}
    if len(chosen) > num:
        raise ValueError(f"record_steps: {len(chosen)} steps to include but only {num} slots")
    candidates = np.unique(np.round(np.geomspace(1, horizon, 4 * num)).astype(np.int64))
    candidates = [int(c) for c in candidates if c not in chosen]
    need = num - len(chosen)
    if need > 0:
        picks = np.unique(np.round(np.linspace(0, len(candidates) - 1, need)).astype(int))
        chosen |= {candidates[i] for i in picks}
        rest = iter(c for c in range(1, horizon + 1) if c not in chosen)
        while len(chosen) < num:  # rounding collisions: fill with the earliest free steps
            chosen.add(next(rest))
    return np.asarray(sorted(chosen), dtype=np.int64)


def run_options(horizon: int, chunk_size: int, num_records: int, include: Iterable[int] = (),
                progress: bool | None = None) -> dict[str, Any]:
    """Keyword arguments for ``jb.simulate`` / ``compare`` / ``sweep`` with shape-stable programs.

    ``chunk_size`` and the number of recorded steps are fixed, so calls that differ only in the
    horizon reuse one compiled program (chunking never changes the numbers). The environment
    variable ``BENCH_BLOCK_RUNS`` sets ``block_runs`` (the default block of an accelerator can be
    far larger than a paper's run count).
    """
    options = {"chunk_size": min(chunk_size, horizon),
               "record": record_steps(horizon, num_records, include).tolist(),
               "progress": progress}
    if os.environ.get("BENCH_BLOCK_RUNS"):  # e.g. one block of a paper's 200 runs on a GPU
        options["block_runs"] = int(os.environ["BENCH_BLOCK_RUNS"])
    return options


def timer() -> float:
    """``time.perf_counter()``: seconds, for the run time of a report."""
    return time.perf_counter()


# ------------------------------------------------------------------------------------------------
# Statistics.


def final_regret(result: Result, step: int | None = None) -> np.ndarray:
    """``(runs,)`` cumulative regret at ``step`` (default: the horizon), a recorded step."""
    if step is None:
        return np.asarray(result.cumulative_regret[:, -1], dtype=np.float64)
    index = np.flatnonzero(np.asarray(result.steps) == step)
    if index.size == 0:
        raise ValueError(f"step {step} was not recorded (recorded: {result.steps.tolist()})")
    return np.asarray(result.cumulative_regret[:, index[0]], dtype=np.float64)


def mean_ci(values: np.ndarray) -> tuple[float, float]:
    """``(mean, half-width of the 95% Student-t interval)``."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n < 2:
        return float(values.mean()), math.nan
    return float(values.mean()), float(t_quantile(n - 1) * values.std(ddof=1) / math.sqrt(n))


def mean_se(values: np.ndarray) -> tuple[float, float]:
    """``(mean, standard error)``."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n < 2:
        return float(values.mean()), math.nan
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(n))


def paired_gap(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean and 95% half-width of ``a - b`` run by run (common random numbers pair the runs)."""
    return mean_ci(np.asarray(a, np.float64) - np.asarray(b, np.float64))


def verdict_at_most(values: np.ndarray, limit: float) -> bool | None:
    """The verdict of the claim "the mean of ``values`` is at most ``limit``".

    True when the sample mean is at most ``limit`` (the papers' criteria are on means), False
    when the whole 95% interval lies above it, None (not decidable at this number of runs) when
    the mean is above ``limit`` but the interval reaches it.
    """
    mean, half = mean_ci(values)
    if mean <= limit:
        return True
    if math.isnan(half):
        return None
    return False if mean - half > limit else None


def _digits(value: float) -> int:
    magnitude = abs(value)
    return 0 if magnitude >= 100 else 1 if magnitude >= 10 else 2


def fmt_ci(values: np.ndarray) -> str:
    """``"mean ± half-width"`` (95% CI)."""
    mean, half = mean_ci(values)
    d = _digits(mean)
    return f"{mean:.{d}f} ± {half:.{d}f}"


def fmt_se(values: np.ndarray) -> str:
    """``"mean ± s.e."``."""
    mean, se = mean_se(values)
    d = _digits(mean)
    return f"{mean:.{d}f} ± {se:.{d}f}"
