"""The statistics of results: Student-t intervals of a mean over runs, from moments merged over
blocks of runs in float64 (so a memory-mapped result never needs to fit in memory)."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable

import numpy as np


@functools.lru_cache(maxsize=1024)
def t_quantile(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (``inf`` for ``df < 1``):
    ``scipy.stats.t.ppf(0.975, df)``, so ``mean ± t_quantile(n - 1) * std / sqrt(n)`` is the
    two-sided 95% confidence interval of the mean of ``n`` runs."""
    if df < 1:
        return math.inf
    # scipy.stats.t.ppf is this function; scipy.special imports in a fifth of scipy.stats' time
    from scipy.special import stdtrit  # imported on first use: importing jaxbandits stays light

    return float(stdtrit(int(df), 0.975))


def half_width(std, count: int):
    """The half-width of the 95% Student-t interval of a mean of ``count`` values with sample
    standard deviation ``std`` (a float or an array)."""
    return t_quantile(count - 1) * std / math.sqrt(count)


def band(mean: np.ndarray, std: np.ndarray | None, count: int):
    """``(lower, upper)`` of the 95% interval of ``mean``; ``(mean, mean)`` without ``std``."""
    if std is None:
        return mean, mean
    half = half_width(std, count)
    return mean - half, mean + half


def moments(blocks: Iterable[np.ndarray], width: int):
    """``(mean, sample std or None, count)`` over the rows of ``blocks`` (each ``(rows, width)``
    float64), each ``(width,)``: one pass, blocks merged with Chan et al.'s pairwise update
    (exact for one block). With no rows the mean is nan."""
    count, mean, m2 = 0, None, None
    for block in blocks:
        n = block.shape[0]
        if n == 0:
            continue
        block_mean = block.mean(axis=0)
        block_m2 = np.square(block - block_mean).sum(axis=0)
        if mean is None:
            count, mean, m2 = n, block_mean, block_m2
            continue
        delta, total = block_mean - mean, count + n
        mean = mean + delta * (n / total)
        m2 = m2 + block_m2 + np.square(delta) * (count * n / total)
        count = total
    if mean is None:  # no runs
        return np.full(width, np.nan), None, 0
    std = np.sqrt(m2 / (count - 1)) if count > 1 else None
    return mean, std, count
