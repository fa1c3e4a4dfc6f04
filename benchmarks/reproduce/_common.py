"""Shared plumbing of the paper reproductions in ``benchmarks/reproduce/``.

Every reproduction script is runnable on its own (``python benchmarks/reproduce/<name>.py``) and
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
import math
import shlex
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if (ROOT / "jaxbandits").is_dir() and str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run the checkout this file belongs to

import jaxbandits as jb  # noqa: E402
from jaxbandits.results import Result, t_quantile  # noqa: E402

__all__ = [
    "ROOT",
    "SCALES",
    "Report",
    "Table",
    "command_line",
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
    parser = argparse.ArgumentParser(prog=f"{name}.py", description=description)
    parser.add_argument("--scale", choices=SCALES, default=default_scale, help=SCALE_HELP)
    parser.add_argument("--seed", type=int, default=0, help="the key of every run (default 0)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"output folder (default results/reproduce/{name}/)")
    parser.add_argument("--plain", action="store_true",
                        help="print tables as plain markdown instead of rich tables")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--cpu-devices", type=int, default=None,
                        help="CPU devices to shard the runs over (default: one per core)")
    args = parser.parse_args(argv)
    jb.use_cpu_cores(args.cpu_devices)
    jb.use_compilation_cache()  # $JAXBANDITS_COMPILATION_CACHE, else ~/.cache/jaxbandits/jax
    args.name = name
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return args


def output_dir(name: str, out: str | Path | None = None) -> Path:
    """``out``, or ``results/reproduce/<name>/`` under the working directory; created."""
    path = Path(out) if out is not None else Path("results") / "reproduce" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def command_line(name: str, argv: Sequence[str]) -> str:
    """The command that reproduces a run, for the report."""
    return " ".join(["python", f"benchmarks/reproduce/{name}.py", *map(shlex.quote, argv)])


# ------------------------------------------------------------------------------------------------
# Tables and reports.


@dataclasses.dataclass
class Table:
    """A titled table of strings; the first column labels the rows.

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
        def line(cells):
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

        out = [f"### {self.title}", "", line(self.columns),
               "|" + "|".join("---" for _ in self.columns) + "|"]
        out += [line(row) for row in self.rows]
        if self.note:
            out += ["", self.note]
        return "\n".join(out) + "\n"

    def print(self, plain: bool = False) -> None:
        """Prints the table with rich on a terminal (unless ``plain``), else as markdown.

        Off a terminal (a log file, a pipe) rich would wrap to 80 columns, so markdown it is.
        """
        plain = plain or not sys.stdout.isatty()
        if not plain:
            try:
                from rich.console import Console
                from rich.table import Table as RichTable
            except ImportError:  # pragma: no cover - rich is a dependency
                plain = True
        if plain:
            print(self.markdown(), flush=True)
            return
        table = RichTable(title=self.title, title_justify="left")
        for i, column in enumerate(self.columns):
            table.add_column(column, justify="left" if i == 0 else "right", no_wrap=True)
        for row in self.rows:
            table.add_row(*row)
        console = Console()
        console.print(table)
        if self.note:
            console.print(self.note, style="dim", highlight=False)


@dataclasses.dataclass
class Report:
    """What a reproduction wrote: the folder, the figure, the markdown file and the tables."""

    out: Path
    figure: Path
    markdown: Path
    tables: list[Table]
    claims: list[tuple[str, bool | None, str]]
    seconds: float
    data: dict[str, Any] = dataclasses.field(default_factory=dict)

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
    return Report(out=out, figure=figure, markdown=markdown, tables=tables, claims=claims,
                  seconds=seconds, data=data)


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
    count, unlike :func:`jaxbandits.simulate.log_spaced_steps`, keeps the recording buffer's
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
    horizon reuse one compiled program (chunking never changes the numbers).
    """
    return {"chunk_size": min(chunk_size, horizon),
            "record": record_steps(horizon, num_records, include).tolist(),
            "progress": progress}


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
