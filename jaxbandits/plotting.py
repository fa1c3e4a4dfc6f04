"""Regret curves (CTR curves for replay results) of several results with 95% confidence bands,
written as PNG."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from jaxbandits.results import Result

__all__ = ["plot_regret"]


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
):
    """Plots the mean cumulative ``metric`` of each result against rounds, with its 95% band.

    Args:
      results: ``{label: Result}`` (as returned by ``compare`` / ``sweep``), a list, or one result.
      path: if given, the figure is written there as PNG.
      metric: ``"regret"``, ``"reward"``, or for replay results ``"ctr"`` or ``"accepted"``;
        default: the results' :attr:`~jaxbandits.Result.default_metric` (regret, or CTR when
        the results are replay results).
      log_x / log_y: logarithmic axes.
      band: shade the 95% Student-t confidence band of the mean.
      title: the axes' title.
      ax: an existing matplotlib axes to draw on.

    Returns:
      The matplotlib figure.
    """
    import matplotlib

    if ax is None:
        matplotlib.use("Agg", force=False) if matplotlib.get_backend() == "" else None
    import matplotlib.pyplot as plt

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
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    else:
        fig = ax.figure
    for label, result in results.items():
        steps = np.asarray(result.steps)
        (line,) = ax.plot(steps, result.mean(metric), label=f"{label} (n={result.num_runs})")
        if band and result.num_runs > 1:
            lower, upper = result.confidence_band(metric)
            ax.fill_between(steps, lower, upper, color=line.get_color(), alpha=0.2, linewidth=0)
    replay = any(r.replay for r in results.values())
    ax.set_xlabel("logged events t" if replay else "round t")
    ax.set_ylabel({"regret": "cumulative regret", "reward": "cumulative reward",
                   "ctr": "click-through rate (accepted rounds)",
                   "accepted": "accepted rounds"}.get(metric, metric))
    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png")
    return fig
