"""Comparing results of common random numbers run by run."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from jaxbandits.results._provenance import _jsonable
from jaxbandits.results._result import Result
from jaxbandits.results._stats import half_width


def common_random_numbers(a: Result, b: Result) -> bool:
    """Whether run ``r`` of ``a`` and of ``b`` saw the same instance, contexts and noise.

    True when both record the same key (``extras["key"]``), horizon, recorded steps, number of
    runs and environment configuration, as the results of one :func:`~jaxbandits.compare` or
    :func:`~jaxbandits.sweep` over agent fields do.
    """
    return _crn_mismatch(a, b) is None


def paired_difference(a: Result, b: Result, metric: str | None = None) -> tuple[float, float]:
    """``(mean, half-width)``: the mean over runs of ``a``'s final ``metric`` minus ``b``'s in
    the same run, and the half-width of its 95% Student-t confidence interval.

    With common random numbers the run-by-run differences cancel the variation of the instances
    and the noise, so the interval is usually much narrower than the unpaired one built from
    :meth:`Result.final` of each. The half-width is nan for a single run.

    Args:
      a / b: results with common random numbers (see :func:`common_random_numbers`).
      metric: see :meth:`Result.mean`; default: :attr:`Result.default_metric` (both must agree).

    Raises:
      ValueError: the results are not common random numbers (saying why), or the metric
        does not apply.

    Example::

        results = jb.compare(env, {"lin-ts": ts, "lin-ucb": ucb}, key, 1_000, 50)
        diff, half = paired_difference(results["lin-ts"], results["lin-ucb"])   # regret
    """
    reason = _crn_mismatch(a, b)
    if reason is not None:
        raise ValueError(f"paired_difference needs common random numbers: {reason}")
    if metric is None and a.default_metric != b.default_metric:
        raise ValueError(f"the default metrics differ ({a.default_metric!r}, "
                         f"{b.default_metric!r}); pass metric=")
    last = slice(-1, None)
    diff = np.concatenate(list(a._metric_blocks(metric, last)))[:, 0] \
        - np.concatenate(list(b._metric_blocks(metric, last)))[:, 0]
    n = diff.size
    if n < 2:
        return float(diff.mean()), math.nan
    return float(diff.mean()), float(half_width(diff.std(ddof=1), n))


def _crn_mismatch(a: Result, b: Result) -> str | None:
    """Why ``a`` and ``b`` are not common random numbers, or None if they are."""
    for which, r in (("a", a), ("b", b)):
        if not isinstance(r, Result):
            raise ValueError(f"{which} must be a Result, got {type(r).__name__}")
        if r.extras.get("key") is None:
            return f"{which} ({r.name!r}) does not record its key (extras['key'])"
    if a.num_runs != b.num_runs:
        return f"the numbers of runs differ ({a.num_runs} and {b.num_runs})"
    if a.horizon != b.horizon:
        return f"the horizons differ ({a.horizon} and {b.horizon})"
    if not np.array_equal(a.steps, b.steps):
        return "the recorded steps differ"
    if _canonical(a.extras["key"]) != _canonical(b.extras["key"]):
        return f"the keys differ ({a.extras['key']} and {b.extras['key']})"
    if _canonical(a.env_config) != _canonical(b.env_config):
        return (f"the environments differ ({a.env_config.get('name', '?')!r} and "
                f"{b.env_config.get('name', '?')!r} configurations)")
    return None


def _canonical(value: Any) -> str:
    """``value`` as sorted JSON, so a tuple in memory equals the list it loads back as."""
    return json.dumps(value, sort_keys=True, default=_jsonable)
