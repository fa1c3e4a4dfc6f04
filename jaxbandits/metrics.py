"""The metric vocabulary, in one place: each metric's name, its words, what it reads and how it
is reduced over runs.

A run records cumulative sums at the recorded steps: regret, reward and accepted rounds (the
columns :data:`RECORDED`, in the runner's order), then the environment's extra per-round metrics
(``Spec.metrics``, such as a dueling environment's ``weak_regret``), each stored as its
cumulative sum. The built-in metrics (:data:`BUILTIN`) read those curves of a
:class:`~jaxbandits.results.Result`; every metric is reduced over runs as a mean with a 95%
Student-t interval (:mod:`jaxbandits.results`), of its per-run value:

==========  =================================================  =======================
name        per-run value (at each recorded step)              results
==========  =================================================  =======================
regret      cumulative pseudo-regret                           all
reward      cumulative observed reward (accepted rounds only)  all
ctr         reward / max(accepted, 1): the click-through rate  replay results
accepted    cumulative number of accepted rounds               replay results
<extra>     cumulative sum of the environment's metric         those that record it
==========  =================================================  =======================

The command line (``--metric``, its tables), :class:`~jaxbandits.results.Result` (``mean``,
``final``, ``to_dataframe``) and :func:`~jaxbandits.plot_regret` (axis labels) all read this
module; an extra metric is described by :func:`metric` from its name.

Example::

    from jaxbandits.metrics import metric
    metric("regret").label          # 'cumulative regret'
    metric("weak_regret").label     # 'cumulative weak regret'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "BUILTIN",
    "RECORDED",
    "RESERVED_METRICS",
    "Metric",
    "builtin_names",
    "check_metric_names",
    "default_metric",
    "metric",
]


@dataclasses.dataclass(frozen=True)
class Metric:
    """One metric: how it is named, described and computed from a result's curves.

    Attributes:
      name: the name users pass (``--metric``, ``Result.mean(metric)``).
      words: what it is, in words (``"cumulative regret"``), for titles and tables.
      label: the axis label of its curves.
      heading: how a table's heading names it (``"regret"``, ``"CTR"``).
      sources: the :class:`~jaxbandits.results.Result` curves it reads, each ``(runs, S)``.
      per_run: the per-run value from float64 blocks of ``sources`` (same order), ``(rows, S')``.
      replay: whether it exists only for replay results (those that record accepted rounds).
      fmt: the format of its numbers in tables (``format(value, fmt)``).
    """

    name: str
    words: str
    label: str
    heading: str
    sources: tuple[str, ...]
    per_run: Callable[..., np.ndarray]
    replay: bool = False
    fmt: str = ",.2f"


def _identity(values: np.ndarray) -> np.ndarray:
    return values


def _rate(reward: np.ndarray, accepted: np.ndarray) -> np.ndarray:
    return reward / np.maximum(accepted, 1.0)  # 0 before the first accepted round


#: The built-in metrics by name, in the order the command line lists them.
BUILTIN: dict[str, Metric] = {m.name: m for m in (
    Metric("regret", "cumulative regret", "cumulative regret", "regret",
           ("cumulative_regret",), _identity),
    Metric("reward", "cumulative reward", "cumulative reward", "reward",
           ("cumulative_reward",), _identity),
    Metric("ctr", "click-through rate", "click-through rate (accepted rounds)", "CTR",
           ("cumulative_reward", "accepted"), _rate, replay=True, fmt=",.4f"),
    Metric("accepted", "accepted rounds", "accepted rounds", "accepted", ("accepted",),
           _identity, replay=True),
)}

#: The runner's cumulative columns, in order (the environment's extra metrics follow them).
RECORDED: tuple[str, ...] = ("regret", "reward", "accepted")

#: Names an extra metric (``Spec.metrics``) may not take: the built-in metrics.
RESERVED_METRICS: tuple[str, ...] = tuple(BUILTIN)


def metric(name: str, extra: Sequence[str] | None = None) -> Metric:
    """The :class:`Metric` called ``name``: a built-in one, or an extra (environment) metric
    read from ``Result.metrics[name]``, labelled as its cumulative sum in words
    (``"weak_regret"`` -> ``"cumulative weak regret"``).

    Args:
      name: the metric's name.
      extra: the extra metrics that exist (a result's ``metrics``); when given, any other name
        that is not built in raises ``ValueError``.
    """
    if not isinstance(name, str):
        raise ValueError(f"a metric name is a string, got {name!r}")
    if name in BUILTIN:
        return BUILTIN[name]
    if extra is not None and name not in extra:
        raise ValueError(f"unknown metric {name!r}: the metrics are "
                         f"{', '.join(map(repr, (*BUILTIN, *extra)))}")
    words = "cumulative " + " ".join(name.replace("_", " ").split())
    return Metric(name, words, words, name, ("metrics",), _identity)


def builtin_names(replay: bool) -> tuple[str, ...]:
    """The built-in metrics of a result: regret and reward, and for replay results CTR and
    accepted rounds."""
    return tuple(m.name for m in BUILTIN.values() if replay or not m.replay)


def default_metric(replay: bool) -> str:
    """The headline metric: ``"ctr"`` for replay results (they have no regret), else
    ``"regret"``."""
    return "ctr" if replay else "regret"


def check_metric_names(names: Any, where: str) -> tuple[str, ...]:
    """``names`` as a tuple of extra metric names, or ``ValueError`` naming ``where``: a
    sequence of distinct strings, each a Python identifier and none of :data:`RESERVED_METRICS`.
    """
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
        raise ValueError(f"{where}: metrics must be a tuple of names, got {names!r}")
    names = tuple(names)
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{where}: metric names must be Python identifiers, got {name!r}")
        if name in RESERVED_METRICS:
            raise ValueError(f"{where}: metric name {name!r} is taken by a built-in metric "
                             f"({', '.join(RESERVED_METRICS)})")
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: metric names must be distinct, got {names!r}")
    return names
