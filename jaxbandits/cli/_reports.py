"""Reports of saved results: the ``plot``, ``compare`` and ``list`` commands and the results
table of ``run`` / ``sweep`` (printed, and in ``summary.md``)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from jaxbandits import metrics as _metrics
from jaxbandits.tables import print_table, render_table


def _load_results(paths: list[str]) -> dict:
    """``{label: Result}`` from folders (every result in them) and result files; labels are
    the results' names, prefixed with the folder when names repeat."""
    from jaxbandits.results import Result, is_result_file

    found: list[tuple[str, Any]] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            # every result here, each checked; a JSON that is not a result (a user's config) is
            # skipped by what it holds, a corrupt result is an error
            loaded = [Result.load(file) for file in sorted(path.glob("*.json"))
                      if file.is_file() and is_result_file(file)]
            if not loaded:
                raise ValueError(f"{text}: no saved results in this folder")
            found += [(str(path), r) for r in loaded]
        elif path.suffix == ".npy" and path.exists():
            name = path.name.split(".")[0]
            raise ValueError(f"{text} is one array of a saved result; give the result (its "
                             f"name, such as {str(path.with_name(name))!r}, or its .json)")
        elif path.with_suffix(".json").exists() or path.exists():
            found.append((str(path.parent), Result.load(path)))
        else:
            raise ValueError(f"{text}: no such results folder or result file")
    names = [r.name for _, r in found]
    results = {}
    for folder, r in found:
        label = r.name if names.count(r.name) == 1 else f"{folder}/{r.name}"
        if label in results:
            raise ValueError(f"result {label!r} given twice")
        results[label] = r
    return results


def plot(args: argparse.Namespace) -> int:
    """``jaxbandits plot``: saved results in one figure."""
    import jaxbandits as jb

    results = _load_results(args.paths)
    metric = _check_metric(args.metric, results) or _default_metric(results)
    if args.out is not None:
        path = Path(args.out)
    else:
        folder = Path(args.paths[0]) if len(args.paths) == 1 and Path(args.paths[0]).is_dir() \
            else Path(".")
        path = folder / f"{metric}.png"
    jb.plot_regret(results, path, metric=metric, log_x=args.log_x, log_y=args.log_y,
                   title=args.title)
    print(f"wrote {path} ({len(results)} results)")
    return 0


def compare(args: argparse.Namespace) -> int:
    """``jaxbandits compare``: final values and paired differences from a baseline."""
    from jaxbandits.results import paired_difference
    from jaxbandits.results._paired import _crn_mismatch

    results = _load_results(args.paths)
    metric = _check_metric(args.metric, results) or _default_metric(results)
    baseline = args.baseline or next(iter(results))
    if baseline not in results:
        raise ValueError(f"--baseline {baseline!r} is not among the results "
                         f"({', '.join(results)})")
    base = results[baseline]
    headers = ["result", "runs", "T", f"final {metric} (mean ± 95% CI)",
               f"difference from {baseline} (paired 95% CI)"]
    rows = []
    for label, r in results.items():
        mean, half = r.final(metric)
        if label == baseline:
            diff = "(baseline)"
        else:
            reason = _crn_mismatch(r, base)
            if reason is None:
                d, h = paired_difference(r, base, metric)
                diff = _ci(d, h, r.num_runs, _fmt(metric))
            else:
                diff = f"n/a: not common random numbers ({reason})"
        rows.append([label, str(r.num_runs), f"{r.horizon:,}",
                     _ci(mean, half, r.num_runs, _fmt(metric)), diff])
    print_table(headers, rows, title=f"final {metric}")
    return 0


def _check_metric(metric: str | None, results) -> str | None:
    """``--metric`` as given (None stays None), once every loaded result knows it."""
    if metric is None:
        return None
    lacking = [label for label, r in results.items() if metric not in r.metric_names]
    if lacking:
        common = [m for m in next(iter(results.values())).metric_names
                  if all(m in r.metric_names for r in results.values())]
        raise ValueError(f"--metric {metric!r} is not a metric of {', '.join(lacking)}; the "
                         f"results have {', '.join(common) or 'no metric in common'}")
    return metric


def _default_metric(results) -> str:
    metrics = {r.default_metric for r in results.values()}
    if len(metrics) > 1:
        raise ValueError("replay and non-replay results have different default metrics; pass "
                         "--metric reward to put them together")
    return metrics.pop()


def _fmt(name: str) -> str:
    """The number format of metric ``name`` in tables."""
    return _metrics.metric(name).fmt


def _ci(mean: float, half: float, runs: int, fmt: str = ",.2f") -> str:
    """``mean ± half``, or ``mean ± n/a`` where the interval is undefined (a single run)."""
    if runs < 2 or not math.isfinite(half):
        return f"{mean:{fmt}} ± n/a"
    return f"{mean:{fmt}} ± {half:{fmt}}"


def _table_rows(results) -> tuple[str, list[str], list[list[str]]]:
    """The results table of ``run`` / ``sweep``: ``(title, headers, rows)``."""
    replay = any(r.replay for r in results.values())
    headline = _metrics.metric(_metrics.default_metric(replay))
    extra = list(dict.fromkeys(m for r in results.values() for m in r.metrics))
    headers = ["agent", f"final {headline.heading} (mean ± 95% CI)"] + (
        ["accepted"] if replay else []) + [
        f"final {_metrics.metric(m).heading} (mean ± 95% CI)" for m in extra] + [
        "wall time (s)", "compile (s)", "seed-steps/s"]
    rows = []
    for name, r in results.items():
        cells = [name, _ci(*r.final(), r.num_runs, _fmt(r.default_metric))]
        if replay:
            cells.append(f"{r.final('accepted')[0]:,.0f}" if r.replay else "")
        for m in extra:  # empty for a result without this metric
            cells.append(_ci(*r.final(m), r.num_runs, _fmt(m)) if m in r.metrics else "")
        cells += [f"{r.wall_time:.2f}", f"{r.compile_time:.2f}",
                  f"{r.seed_steps_per_second:,.0f}"]
        rows.append(cells)
    title = f"final {headline.words}" + (" (replay)" if replay else "")
    return title, headers, rows


def _table_markdown(results) -> str:
    """The results table as markdown (``summary.md``)."""
    _, headers, rows = _table_rows(results)
    return render_table(headers, rows)


def _print_table(results) -> None:
    title, headers, rows = _table_rows(results)
    print_table(headers, rows, title=title)


def list_registered(args: argparse.Namespace) -> int:
    """``jaxbandits list``: the registered environments and agents, with the paper each comes
    from as the registry records it."""
    import jaxbandits  # noqa: F401 - registers everything
    from jaxbandits.registry import AGENTS, ENVS, describe_agent

    for title, table_items in (("environments", ENVS), ("agents", AGENTS)):
        rows = [[name, *(describe_agent(name) if title == "agents" else (cls.description,
                                                                          cls.paper))]
                for name, cls in table_items.items()]
        print_table(["name", "description", "paper"], rows, title=title, align="lll")
        print()
    return 0
