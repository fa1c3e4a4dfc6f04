"""Experimental design on a finite arm set: the G-optimal design and its rounding to counts.

The G-optimal design of arms ``x_1..x_K`` (rows of ``arms``, ``(K, d)``, spanning ``R^d``) is::

    zeta = argmin_{zeta in simplex} max_k x_k^T V(zeta)^{-1} x_k,   V(zeta) = sum_k zeta_k x_k x_k^T

By Kiefer-Wolfowitz it is also D-optimal (it maximises ``log det V(zeta)``) and at the optimum
``max_k x_k^T V(zeta)^{-1} x_k = d``. GLM-ES warms up by pulling the arms ``N_i`` times, the design
rounded to ``tau`` pulls (Sun et al. 2025, Algs. 2 and 3, App. B.6).

Example::

    weights = g_optimal_design(arms)                  # (K,), on the simplex
    counts = round_design(weights, 500)               # (K,) int32, sums to 500
    design_variance(arms, counts).max() * 500 / d     # <= 1.5 once 500 >= r(0.5) (Lemma B.5)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["design_variance", "g_optimal_design", "round_design", "rounding_threshold"]

INCREMENTS: tuple[str, ...] = ("ratio", "literal")


def g_optimal_design(
    arms: jax.Array,
    *,
    num_iters: int | jax.Array = 2000,
    tol: float = 1e-4,
    support_tol: float = 1e-5,
) -> jax.Array:
    """The G-optimal (equivalently D-optimal) design on the rows of ``arms``.

    Fedorov-Wynn / Frank-Wolfe on ``log det V(zeta)`` with Wolfe's away steps (Todd & Yildirim
    2007), each with the exact line search. With ``g_k = x_k^T V(zeta)^{-1} x_k``, a step moves
    weight ``alpha`` towards one arm ``j``, ``zeta <- (1 - alpha) zeta + alpha e_j``, where

        alpha = (g_j - d) / (d (g_j - 1))        (the maximiser of log det along the segment)

    ``j`` is the arm with the largest ``g`` (a toward step, ``alpha > 0``) or, when that gains
    less, the support arm with the smallest ``g`` (an away step, ``alpha < 0``, clipped so the
    weight stays >= 0: a drop step). Away steps make the convergence linear, so the
    Kiefer-Wolfowitz optimum ``max_k g_k = d`` is reached to ``tol`` in a few hundred iterations
    at ``d = 20, K = 50``. ``V`` is refactorised (Cholesky) every iteration: O(d^3 + K d^2).

    Args:
      arms: ``(K, d)``; the rows must span ``R^d`` (``K >= d`` random arms do almost surely).
      num_iters: the iteration budget (may be traced: it is a ``while_loop`` bound, so 0 skips
        the solve and returns the uniform design).
      tol: stop once ``max_k g_k <= (1 + tol) d``.
      support_tol: weights below it are dropped and the rest renormalised (Fiez et al.'s 1e-5).

    Returns:
      ``(K,)`` weights on the simplex.
    """
    if arms.ndim != 2:
        raise ValueError(f"arms must have shape (K, d), got {arms.shape}")
    num_arms, dim = arms.shape
    dtype = arms.dtype

    def variances(weights):
        return design_variance(arms, weights)

    def cond(carry):
        i, _, g = carry
        return (i < num_iters) & (jnp.max(g) > (1.0 + tol) * dim)

    def body(carry):
        i, weights, g = carry
        support = weights > 0
        j_up = jnp.argmax(g)
        j_down = jnp.argmin(jnp.where(support, g, jnp.inf))
        toward = (g[j_up] - dim) >= (dim - g[j_down])
        j = jnp.where(toward, j_up, j_down)
        g_j, w_j = g[j], weights[j]
        exact = jnp.where(g_j > 1.0, (g_j - dim) / (dim * (g_j - 1.0)), -jnp.inf)
        lowest = -w_j / jnp.maximum(1.0 - w_j, jnp.finfo(dtype).tiny)
        alpha = jnp.clip(exact, lowest, 1.0 - 1e-6)
        weights = (1.0 - alpha) * weights + alpha * jax.nn.one_hot(j, num_arms, dtype=dtype)
        weights = jnp.maximum(weights, 0.0)
        return i + 1, weights, variances(weights)

    uniform = jnp.full((num_arms,), 1.0 / num_arms, dtype)
    init = (jnp.zeros((), jnp.int32), uniform, variances(uniform))
    _, weights, _ = jax.lax.while_loop(cond, body, init)
    weights = jnp.where(weights >= support_tol, weights, 0.0)
    return weights / jnp.sum(weights)


def design_variance(arms: jax.Array, weights: jax.Array) -> jax.Array:
    """``x_k^T V^{-1} x_k`` for every arm, ``V = sum_i w_i x_i x_i^T``; ``(K,)``.

    ``weights`` ``(K,)`` are design weights (for ``g_k``, max ``d`` at the G-optimal design) or
    integer counts (``V`` is then the warm-up design matrix ``V_tau`` of Lemma B.5).
    """
    weights = jnp.asarray(weights, arms.dtype)
    matrix = (arms.T * weights) @ arms
    chol = jnp.linalg.cholesky(matrix)
    solved = jax.scipy.linalg.solve_triangular(chol, arms.T, lower=True)  # (d, K) = L^{-1} X^T
    return jnp.sum(solved * solved, axis=0)


def rounding_threshold(dim: int, eps: float = 0.5) -> float:
    """``r(eps) = (d (d + 1) / 2 + 1) / eps``: from ``n >= r(eps)`` pulls on, the rounded design
    satisfies ``max_k x_k^T (sum_i N_i x_i x_i^T)^{-1} x_k <= (1 + eps) d / n`` (Lemma B.5)."""
    return (dim * (dim + 1) / 2 + 1) / eps


def round_design(
    weights: jax.Array,
    n: int | jax.Array,
    *,
    enforce_min_count: bool = False,
    dim: int | None = None,
    eps: float = 0.5,
    increment: str = "ratio",
) -> jax.Array:
    """Rounds a design to ``n`` pulls: Sun et al. 2025, Alg. 3 (Pukelsheim ch. 12; Fiez et al.
    2019).

    On the support (``p`` arms with ``weights > 0``)::

        N_i = max(ceil((n - p/2) zeta_i), 0)
        while sum N != n:
            if sum N < n:  N_j += 1 for j = argmin_i N_i / zeta_i        (efficient apportionment)
            else:          N_j -= 1 for j = argmax_i (N_i - 1) / zeta_i
        (enforce_min_count)  N_i = max(N_i, ceil(r(eps) / p))             (paper's line 15)

    Corrections to the printed algorithm (Sun et al. 2025, Alg. 3, App. B.6): the increment uses
    ``N_i / zeta_i`` as Pukelsheim and Fiez's code do (``increment="literal"`` keeps the paper's
    ``(N_i - 1) / zeta_i``); line 15 is off by default, so ``sum N = n`` exactly, and when on it
    rounds ``r(eps) / p`` up and the total becomes ``sum N >= n``. The clip at 0 only matters for
    ``n < p / 2`` (then ``ceil`` of a negative number could leave negative counts).

    Args:
      weights: ``(K,)`` a design on the simplex (zero weights are off the support).
      n: the number of pulls (may be traced).
      enforce_min_count: apply line 15 (needs ``dim``).
      dim: d, for ``r(eps)``.
      eps: epsilon of ``r(eps)``.
      increment: ``"ratio"`` (default) or ``"literal"``.

    Returns:
      ``(K,)`` int32 counts, 0 off the support.
    """
    if increment not in INCREMENTS:
        raise ValueError(f"increment must be one of {INCREMENTS}, got {increment!r}")
    if enforce_min_count and dim is None:
        raise ValueError("round_design: enforce_min_count needs dim (for r(eps))")
    num_arms = weights.shape[-1]
    support = weights > 0
    p = jnp.sum(support)
    n = jnp.asarray(n, jnp.int32)
    safe = jnp.where(support, weights, 1.0)
    start = jnp.ceil((n - p / 2.0) * weights).astype(jnp.int32)
    start = jnp.where(support, jnp.maximum(start, 0), 0)

    def cond(carry):
        i, counts = carry
        return (jnp.sum(counts) != n) & (i < 2 * num_arms + 2)

    def body(carry):
        i, counts = carry
        low = jnp.sum(counts) < n
        shift = 1 if increment == "literal" else 0
        up = jnp.argmin(jnp.where(support, (counts - shift) / safe, jnp.inf))
        down = jnp.argmax(jnp.where(support, (counts - 1) / safe, -jnp.inf))
        j = jnp.where(low, up, down)
        return i + 1, counts.at[j].add(jnp.where(low, 1, -1))

    _, counts = jax.lax.while_loop(cond, body, (jnp.zeros((), jnp.int32), start))
    if enforce_min_count:
        floor = jnp.ceil(rounding_threshold(dim, eps) / p).astype(jnp.int32)
        counts = jnp.where(support, jnp.maximum(counts, floor), 0)
    return counts
