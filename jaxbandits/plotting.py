"""Figures of results, written as PNG: regret curves (CTR curves for replay results) of several
results with 95% confidence bands (:func:`plot_regret`), and the final value of a sweep against
its swept setting (:func:`plot_final`).

This module depends on :mod:`jaxbandits.results`, never the reverse: reading and reducing results
never imports matplotlib.
"""

from __future__ import annotations

import itertools
import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jaxbandits import metrics as _metrics
from jaxbandits.results import Result

__all__ = ["metric_label", "plot_final", "plot_regret"]

# Line styles cycled together with the colours (10 x 4: 20 distinct pairs), so that curves stay
# distinguishable where they overlap (a dashed line over a solid one shows both) and in greyscale.
_LINE_STYLES = ("-", "--", "-.", ":")
_BAND_NOTE = "shaded: 95% CI of the mean"


def metric_label(metric: str) -> str:
    """The axis label of ``metric`` (:attr:`jaxbandits.metrics.Metric.label`): the built-in ones
    by name, an extra (environment) metric as its cumulative sum in words (``"weak_regret"`` ->
    ``"cumulative weak regret"``)."""
    return _metrics.metric(metric).label


def plot_regret(
    results: Mapping[str, Result] | Sequence[Result] | Result,
    path: str | Path | None = None,
    *,
    metric: str | None = None,
    log_x: bool = False,
    log_y: bool = False,
    band: bool = True,
    title: str | None = None,
    ax=None,
    note: str | None = None,
):
    """Plots the mean cumulative ``metric`` of each result against rounds, with its 95% band.

    Curve ``i`` (counting the lines already on ``ax``) gets colour ``C{i % 10}`` and line style
    solid, dashed, dash-dot, dotted in turn, so identical curves remain visible. The bands are
    95% Student-t confidence intervals of the mean over runs; the legend says so.

    Args:
      results: ``{label: Result}`` (as returned by ``compare`` / ``sweep``), a list, or one result.
      path: if given, the figure is written there as PNG.
      metric: ``"regret"``, ``"reward"``, for replay results ``"ctr"`` or ``"accepted"``, or
        an extra metric the results record (:attr:`~jaxbandits.Result.metrics`, such as
        ``"weak_regret"``: labelled "cumulative weak regret"); default: the results'
        :attr:`~jaxbandits.Result.default_metric` (regret, or CTR when the results are replay
        results).
      log_x / log_y: logarithmic axes.
      band: shade the 95% Student-t confidence band of the mean.
      title: the axes' title.
      ax: an existing matplotlib axes to draw on.
      note: a second, smaller line under the title (such as the settings that were overridden).

    Returns:
      The matplotlib figure.

    Example::

        results = jb.compare(env, agents, key, 1_000, 20)
        jb.plot_regret(results, "regret.png", log_x=True, note="explore_scale=0.5")
    """
    plt = _pyplot(headless=ax is None)
    from matplotlib.patches import Patch

    if isinstance(results, Result):
        results = {results.name or "agent": results}
    elif not isinstance(results, Mapping):
        results = {r.name or f"result {i}": r for i, r in enumerate(results)}
    if metric is None:
        defaults = {r.default_metric for r in results.values()}
        if len(defaults) > 1:
            raise ValueError("plot_regret: replay and non-replay results have different default "
                             "metrics; pass metric='reward' to plot them together")
        metric = defaults.pop() if defaults else "regret"
    for label, result in results.items():
        if metric not in _metrics.BUILTIN and metric not in result.metrics:
            raise ValueError(f"plot_regret: result {label!r} has no metric {metric!r}; its "
                             f"metrics are {', '.join(result.metric_names)}")
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    else:
        fig = ax.figure
    first, banded = len(ax.lines), False
    for i, (label, result) in enumerate(results.items(), start=first):
        steps = np.asarray(result.steps)
        (line,) = ax.plot(steps, result.mean(metric), color=f"C{i % 10}",
                          linestyle=_LINE_STYLES[i % len(_LINE_STYLES)], linewidth=1.6,
                          label=f"{label} (n={result.num_runs})")
        if band and result.num_runs > 1:
            lower, upper = result.confidence_band(metric)
            ax.fill_between(steps, lower, upper, color=line.get_color(), alpha=0.2, linewidth=0)
            banded = True
    replay = any(r.replay for r in results.values())
    ax.set_xlabel("logged events t" if replay else "round t")
    ax.set_ylabel(metric_label(metric))
    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    if note:
        ax.set_title("\n".join(([title] if title else []) + textwrap.wrap(note, 90)), fontsize=10)
    elif title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    handles, _ = ax.get_legend_handles_labels()
    if banded:  # one legend entry explains the bands
        handles.append(Patch(facecolor="0.5", alpha=0.3, label=_BAND_NOTE))
    ax.legend(handles=handles, fontsize=8)
    fig.tight_layout()
    if path is not None:
        _save(fig, Path(path))
    return fig


def _save(fig, path: Path, who: str = "plot_regret") -> None:
    """Writes ``fig`` to ``path`` as PNG; a path that cannot be written (inside a file, a
    folder, a full disk) is a clear error naming it."""
    from jaxbandits import _io

    if path.is_dir():
        raise ValueError(f"{who}: {str(path)!r} is a folder; give the PNG file to write")
    try:
        _io.check_writable_dir(path.parent)
    except ValueError as err:
        raise ValueError(f"{who}: cannot write {str(path)!r}: {err}") from err
    with _io.naming(path):
        fig.savefig(path, format="png")


def plot_final(results: Mapping[str, Result], grid: Mapping[str, Sequence[Any]],
               path: str | Path | None = None, *, title: str | None = None):
    """Plots the final value (mean and 95% CI) of each grid point of a sweep against the first
    swept field, one line per combination of the others.

    Args:
      results: ``{label: Result}`` as :func:`~jaxbandits.sweep` returns them (labels
        ``"field=value,..."`` in the order of ``grid``).
      grid: ``{field: values}`` of the sweep; a numeric first field spanning a factor of 10 or
        more gets a logarithmic axis, a non-numeric one a tick per value.
      path: if given, the figure is written there as PNG (and closed).
      title: the axes' title.

    Returns:
      The matplotlib figure.
    """
    plt = _pyplot(headless=True)
    names = list(grid)
    first, rest = names[0], names[1:]
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in grid[first])
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    items = list(results.values())
    metric = items[0].default_metric if items else "regret"
    for i, combo in enumerate(itertools.product(*(grid[n] for n in rest))):
        xs, means, halves = [], [], []
        for j, value in enumerate(grid[first]):
            point = dict(zip(rest, combo, strict=True)) | {first: value}
            label = ",".join(f"{n}={point[n]}" for n in names)
            mean, half = results[label].final()
            xs.append(value if numeric else j)
            means.append(mean)
            halves.append(0.0 if not math.isfinite(half) else half)
        legend = ", ".join(f"{n}={v}" for n, v in zip(rest, combo, strict=True)) or None
        ax.errorbar(xs, means, yerr=halves, marker="o", capsize=3, label=legend,
                    linestyle=_LINE_STYLES[i % len(_LINE_STYLES)])
    if not numeric:
        ax.set_xticks(range(len(grid[first])), [str(v) for v in grid[first]])
    elif all(v > 0 for v in grid[first]) and max(grid[first]) / min(grid[first]) >= 10:
        ax.set_xscale("log")
    ax.set_xlabel(first)
    ax.set_ylabel(f"final {_metrics.metric(metric).words} (mean, 95% CI)")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    if rest:
        ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        _save(fig, Path(path), "plot_final")
        plt.close(fig)
    return fig


def _pyplot(headless: bool):
    """``matplotlib.pyplot``, imported here only (never when results are read); a new figure
    with no backend chosen yet draws off screen (Agg)."""
    import matplotlib

    if headless and matplotlib.get_backend() == "":
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt
