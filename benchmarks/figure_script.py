"""The main and the helpers of a compact figure script of ``benchmarks/``.

A compact figure script holds its scales, its experiments, its claims and (optionally) its
tables and plot; :func:`main` does the rest on :mod:`benchmarks.framework` (its command line,
cached :class:`~benchmarks.framework.Runner` and report)::

    def experiments(config) -> {panel title: C.Experiment}       # what to run
    def claims(panels, config) -> [C.Claim]                       # checks of {panel: results}
    def main(argv=None):
        return F.main(NAME, TITLE, __doc__, SCALES, argv, experiments, claims, intro)

``panels`` is ``{title: Runner.run(experiment)}``: ``{label: Result}``, or with a one-field grid
``{label: {value: Result}}``. The helpers: :func:`options` (runner options, every run in one
block), :func:`draw_panels` and :func:`final_table` (the default plot and table),
:func:`final_values`, the paired verdicts :func:`below`, :func:`within`, :func:`sublinear` and
:func:`all_of`, and :func:`user_data` (a data set the papers use that cannot be shipped, read
from a user path, else a bundled stand-in, said so in the report).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import jax
import numpy as np

import jaxbandits as jb
from benchmarks import framework as C
from jaxbandits import Result

__all__ = ["all_of", "below", "draw_panels", "final_table", "final_values", "main", "options",
           "sublinear", "user_data", "within"]


def final_values(result: Result, metric: str = "regret") -> np.ndarray:
    """``(runs,)`` the final ``metric``: cumulative ``"regret"`` or ``"reward"``, or for a replay
    result the ``"ctr"`` (clicks over accepted events)."""
    if metric == "ctr":
        accepted = np.maximum(np.asarray(result.accepted[:, -1], np.float64), 1.0)
        return np.asarray(result.cumulative_reward[:, -1], np.float64) / accepted
    if metric not in ("regret", "reward"):
        raise ValueError(f"final_values: metric must be regret, reward or ctr, got {metric!r}")
    return np.asarray(getattr(result, f"cumulative_{metric}")[:, -1], np.float64)


def options(horizon: int, num_runs: int, chunk_size: int, num_records: int,
            include: Iterable[int] = ()) -> dict[str, Any]:
    """``framework.run_options`` with every run in one block (``block_runs = num_runs``: no
    padded runs on a CPU, and the numbers do not depend on a device's default block), unless
    ``$BENCH_BLOCK_RUNS`` sets it; progress bars are the runner's."""
    out = C.run_options(horizon, chunk_size, num_records, include)
    del out["progress"]
    out.setdefault("block_runs", num_runs)
    return out


# ------------------------------------------------------------------------------------------------
# Orderings: the three-valued verdicts of the figure scripts.


def below(a: np.ndarray, b: np.ndarray) -> tuple[bool | None, str]:
    """The verdict of "``a`` ends below ``b``" on paired per-run values (common random numbers):
    True when the paired 95% CI of ``a - b`` lies below 0, False when it lies above, None (not
    decidable at this number of runs) when it covers 0."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    gap, half = C.paired_gap(a, b)
    evidence = f"{a.mean():.4g} vs {b.mean():.4g}, paired gap {gap:+.3g} ± {half:.3g}"
    if math.isnan(half):
        return None, evidence
    return (True if gap + half < 0 else False if gap - half > 0 else None), evidence


def within(a: np.ndarray, b: np.ndarray, tol: float = 0.10) -> tuple[bool | None, str]:
    """The verdict of "``a`` is competitive with ``b``" (lower is better): True when
    ``mean(a) <= (1 + tol) mean(b)``; False when it is above that and the paired 95% CI of
    ``a - (1 + tol) b`` lies above 0; None otherwise."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    gap, half = C.paired_gap(a, (1 + tol) * b)
    evidence = (f"{a.mean():.4g} vs {b.mean():.4g} (tolerance +{100 * tol:.0f}%), paired gap "
                f"to the tolerance {gap:+.3g} ± {half:.3g}")
    if gap <= 0:
        return True, evidence
    return (False if gap - half > 0 else None), evidence


def all_of(verdicts: Iterable[bool | None]) -> bool | None:
    """True if every verdict is True, False if any is False, else None (any iterable)."""
    verdicts = list(verdicts)
    if any(v is False for v in verdicts):
        return False
    return True if all(v is True for v in verdicts) else None


def sublinear(result: Result) -> tuple[bool | None, str]:
    """The verdict of "the average regret R(t)/t decreases over the second half": the per-run
    change of R(t)/t from the recorded step nearest T/2 to T; True when its mean is <= 0, False
    when its whole 95% CI lies above 0, else None."""
    steps = np.asarray(result.steps)
    i = int(np.argmin(np.abs(steps - result.horizon / 2)))
    regret = np.asarray(result.cumulative_regret, np.float64)
    change = regret[:, -1] / steps[-1] - regret[:, i] / steps[i]
    mean, half = C.mean_ci(change)
    evidence = (f"R(t)/t {regret[:, i].mean() / steps[i]:.3g} at t = {steps[i]}, "
                f"{regret[:, -1].mean() / steps[-1]:.3g} at t = {steps[-1]}")
    if mean <= 0:
        return True, evidence
    return (None if math.isnan(half) or mean - half <= 0 else False), evidence


# ------------------------------------------------------------------------------------------------
# Data, panels, the table and the main.


def user_data(make: Callable[[], Any], standin: Callable[[], Any] | None, what: str,
              log: Callable[[str], None] = print) -> tuple[Any, str]:
    """``(env, note)``: ``make()``, an environment reading a data set the papers use that cannot be
    shipped (from ``path=``, ``$JAXBANDITS_DATA`` or the per-user data folder), or where its file
    is absent (``DataNotFoundError``) ``standin()`` with a note saying so (``(None, note)``
    without a stand-in). The missing-file message says where to put the file."""
    from jaxbandits.envs import DataNotFoundError

    try:
        return make(), ""
    except DataNotFoundError as error:
        first = str(error).strip().splitlines()[0].rstrip(".")
        note = f"{first}; " + (f"a bundled stand-in runs in place of {what}" if standin
                               else f"{what} is skipped")
        log(note)
        return (standin() if standin else None), note


def draw_panels(panels: Mapping[str, Mapping[str, Result]], metric: str | None = None,
                ncols: int = 3, log_x: bool = False):
    """One axes per panel: each result's mean cumulative ``metric`` with its 95% band
    (``jb.plot_regret``)."""
    n = max(len(panels), 1)
    ncols = min(ncols, n)
    fig, axes = C.new_figure(math.ceil(n / ncols), ncols, width=5.0, height=3.8)
    for ax, (title, results) in zip(axes.flat, panels.items(), strict=False):
        jb.plot_regret(dict(results), ax=ax, metric=metric, title=title, log_x=log_x)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    return fig


def final_table(title: str, panels: Mapping[str, Mapping[str, Result]], note: str = "",
                metric: str = "regret") -> C.Table:
    """A table with one row per label and one column per panel: the final ``metric`` (mean ±
    95% CI; "—" where a panel lacks the label)."""
    labels = list(dict.fromkeys(label for results in panels.values() for label in results))
    table = C.Table(title, ["agent", *panels], note=note)
    for label in labels:
        table.add(label, *(C.fmt_ci(final_values(results[label], metric)) if label in results
                           else "—" for results in panels.values()))
    return table


def main(name: str, title: str, doc: str, scales: Mapping[str, Any], argv: Sequence[str] | None,
         experiments: Callable[[Any], Mapping[str, C.Experiment]],
         claims: Callable[[dict[str, dict[str, Any]], Any], list[C.Claim]],
         intro: Callable[[Any], str], *,
         tables: Callable[[dict[str, dict[str, Any]], Any], list[C.Table]] | None = None,
         draw: Callable[[dict[str, dict[str, Any]], Any], Any] | None = None) -> C.Report:
    """The ``main`` of a figure script: parses the shared options, runs ``experiments(config)``
    (``{panel title: Experiment}``) through one cached :class:`~benchmarks.framework.Runner`,
    draws (default: :func:`draw_panels`), tabulates (default: :func:`final_table`), checks
    ``claims(panels, config)`` and writes the report; ``panels`` is ``{title: Runner.run(...)}``.
    """
    args = C.parse_args(name, doc.strip().splitlines()[0], argv)
    config = C.configure(scales, args)
    out = C.output_dir(name, args.out)
    start = C.timer()
    print(f"{title}\nscale {args.scale}: {config}", flush=True)
    runner = C.Runner(jax.random.key(args.seed), cache=args.cache,
                      progress=False if args.no_progress else None,
                      log=lambda text: print(f"  [{C.timer() - start:5.0f} s] {text}", flush=True))
    panels = {t: runner.run(e) for t, e in experiments(config).items()}
    png = C.save_figure(draw(panels, config) if draw else draw_panels(panels), out / f"{name}.png")
    made = (tables(panels, config) if tables else
            [final_table("Final cumulative regret (mean ± 95% CI)", panels)])
    verdicts = C.check_claims(claims(panels, config), panels)
    text = f"Scale `{args.scale}`, seed {args.seed}. " + intro(config)
    return C.finish(name, title, text, made, verdicts, png, out, args, C.timer() - start,
                    data={"panels": panels, "config": config})
