"""Linear ensemble factors on the shared ridge core: the Ensemble++ update in Kalman form.

An ensemble state is the ridge state (``mean``, the square root ``S`` of ``V^{-1}``) plus a
factor ``A`` of shape ``(d, M)`` whose columns are perturbation directions. One observation
``(x, y)`` with per-column targets ``u`` (shape ``(M,)``) updates it in O(d^2 + d M)::

    ridge  <- ridge_update(ridge, x, y)          (Potter square root, O(d^2); V_t = V_{t-1} + x x^T)
    k       = V_t^{-1} x = S s / (1 + s^T s)     (the Kalman gain; s = S^T x, shared with the ridge)
    A      <- A + k (u^T - x^T A)                 (every column regresses its target onto x)

so that ``A_t = V_t^{-1} (V_0 A_0 + sum_s x_s u_s^T)``: column ``m`` is the ridge fit of the
targets ``u_{s,m}`` with prior centre ``A_{0,m}``. Every linear ensemble agent is this update with
its own targets:

* **Ensemble++** (Li et al. 2024, Sec. 3.1, Eqs. 2-4, Eq. 4): ``u = sigma z_t`` with ``z_t ~ P_z``
  unit-norm.
  In the paper's notation ``Sigma_t = sigma^2 V_t^{-1}``, ``g = Sigma_{t-1} x``,
  ``alpha = sigma^2 + x^T g``, ``k = g / alpha`` and
  ``A_t = A_{t-1} + k (sigma z_t^T - x^T A_{t-1})``, which is exactly
  ``A_t = Sigma_t (Sigma_{t-1}^{-1} A_{t-1} + x z_t^T / sigma)``. The sample is
  ``theta = mu + beta A zeta`` with ``zeta ~ P_zeta`` (:mod:`jaxbandits.linalg.perturb`).
* **Ensemble sampling** (Lee & Oh, Lu & Van Roy; Lee & Oh 2024, Eqs. 1, 5): column ``j`` is member
  ``j``'s offset ``zeta^j = theta^j - mu`` and ``u = (Z_t^1, ..., Z_t^m)`` its reward
  perturbations; the member is ``mu + A e_j``.

Scale conventions. Ensemble++ writes ``Sigma_0 = sigma^2 / lambda I`` and noise ``sigma``; Lee &
Oh write ``V_0 = lambda I``, ``W^j ~ N(0, lambda sigma_I^2 I)``, ``Z ~ N(0, sigma_R^2)``. The
library's shared field names map onto them as follows (``Sigma_t = noise_std^2 V_t^{-1}``):

================= ===========================================================================
``reg``           lambda, ``V_0 = reg I``, in every agent; the Bayesian agents' prior is
                  ``Sigma_0 = noise_std^2 / reg I`` (Ensemble++'s ``10 I``, ``sigma = 1``:
                  ``reg = 0.1``)
``noise_std``     sigma, in ``ensemble-pp`` (targets ``u = noise_std z``, ``A_0 ~ Sigma_0^{1/2}``)
                  and in ``ensemble-sampling`` / ``rrls`` (perturbations ``N(0, noise_std^2)``)
``perturb_std``   sigma_R, in ``lin-es`` / ``lin-phe``: ``u = Z ~ N(0, sigma_R^2)``
``prior_scale``   in ``lin-es`` / ``lin-phe``: ``sigma_I = prior_scale * sigma_R``; the member's
                  prior offset ``W^j / reg`` has std ``prior_scale sigma_R / sqrt(reg)``.
                  ``ensemble-pp`` has none: ``A_0`` is ``Sigma_0^{1/2} B`` exactly
``ensemble_size`` M (Ensemble++) or m (ensemble sampling): the number of columns of ``A``
``explore_scale`` in ``ensemble-pp``: the inflation beta multiplying ``A zeta`` (1 in the paper)
================= ===========================================================================
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.core import float_dtype
from jaxbandits.linalg.perturb import PERTURBATIONS, check_distribution, perturbation_sample
from jaxbandits.linalg.ridge import RidgeState, ridge_init, ridge_update

__all__ = [
    "FACTOR_INITS",
    "EnsembleState",
    "ensemble_init",
    "ensemble_sample",
    "ensemble_update",
    "factor_calibration",
    "kalman_gain",
    "prior_factor",
]

FACTOR_INITS: tuple[str, ...] = ("paper", "code")


class EnsembleState(struct.PyTreeNode):
    """A ridge state and an ensemble factor.

    Attributes:
      ridge: the ridge statistic: ``mean`` ``(d,)`` is ``mu_t = V_t^{-1} sum_s x_s y_s``,
        ``sqrt_cov`` ``(d, d)`` a square root of ``V_t^{-1}``, ``count`` the observations.
      factor: ``(d, M)`` the factor ``A_t``.
    """

    ridge: RidgeState
    factor: jax.Array


def ensemble_init(factor: jax.Array, reg: jax.Array | float) -> EnsembleState:
    """The prior state: ``V_0 = reg I``, ``mu_0 = 0`` and the initial factor ``A_0`` ``(d, M)``."""
    return EnsembleState(ridge=ridge_init(factor.shape[0], reg, factor.dtype), factor=factor)


def prior_factor(
    key: jax.Array,
    dim: int,
    size: int,
    scale: jax.Array | float,
    init: str = "paper",
    perturbation: str = "sphere",
    sparsity: int = 2,
) -> jax.Array:
    """An initial factor ``A_0 = scale * B`` of shape ``(d, M)`` with ``E[A_0 A_0^T] = scale^2 I``.

    With ``scale = noise_std / sqrt(reg)`` this is ``Sigma_0^{1/2} B`` (Li et al. 2024, Sec. 3.1,
    Eqs. 2-4):

    * ``init="paper"``: ``B_ij ~ N(0, 1/M)``, i.e. the columns are ``N(0, Sigma_0) / sqrt(M)``;
    * ``init="code"``: each of the d rows of ``B`` is a draw of ``P_z`` (``perturbation``), as in
      the authors' linear code (unit-norm rows for the unit-norm laws).
    """
    if init not in FACTOR_INITS:
        raise ValueError(f"init must be one of {FACTOR_INITS}, got {init!r}")
    dtype = float_dtype()
    if init == "paper":
        b = jax.random.normal(key, (dim, size), dtype) / jnp.sqrt(jnp.asarray(size, dtype))
    else:
        check_distribution(perturbation, size, sparsity, field="perturbation",
                           choices=PERTURBATIONS)
        keys = jax.random.split(key, dim)
        b = jax.vmap(lambda k: perturbation_sample(k, perturbation, size, sparsity=sparsity,
                                                   dtype=dtype))(keys)
    return jnp.asarray(scale, dtype) * b


def kalman_gain(ridge: RidgeState, x: jax.Array) -> jax.Array:
    """``V^{-1} x = S (S^T x)``, shape ``(d,)``; with the state *after* adding ``x``, the gain."""
    return ridge.sqrt_cov @ (ridge.sqrt_cov.T @ x)


def ensemble_update(
    state: EnsembleState, x: jax.Array, y: jax.Array, targets: jax.Array
) -> EnsembleState:
    """Adds ``(x, y)`` and regresses the per-column ``targets`` ``(M,)`` onto ``x``; O(d^2 + dM).

    ``A <- A + k (targets^T - x^T A)`` with the gain ``k = V_t^{-1} x`` of the updated ridge state
    (see the module docstring for the Ensemble++ and ensemble-sampling targets).
    """
    dim, size = state.factor.shape
    if x.shape != (dim,) or jnp.shape(targets) != (size,):
        raise ValueError(f"ensemble_update: expected x of shape ({dim},) and targets of shape "
                         f"({size},), got {x.shape} and {jnp.shape(targets)}")
    # k = V_t^{-1} x = V_{t-1}^{-1} x / (1 + x^T V_{t-1}^{-1} x), from the same products
    # S^T x and S (S^T x) that ridge_update forms (XLA computes them once).
    s = state.ridge.sqrt_cov.T @ x
    gain = (state.ridge.sqrt_cov @ s) / (1.0 + s @ s)
    ridge = ridge_update(state.ridge, x, y)
    residual = targets - x @ state.factor
    return EnsembleState(ridge=ridge, factor=state.factor + jnp.outer(gain, residual))


def ensemble_sample(
    state: EnsembleState, index: jax.Array, scale: jax.Array | float = 1.0
) -> jax.Array:
    """``mu + scale * A index`` ``(d,)`` for an index ``(M,)`` (a reference vector, a one-hot)."""
    return state.ridge.mean + scale * (state.factor @ index)


def factor_calibration(state: EnsembleState, noise_std: jax.Array | float) -> jax.Array:
    """Eigenvalues ``(d,)`` of ``Sigma^{-1/2} A A^T Sigma^{-1/2}``, ``Sigma = noise_std^2 V^{-1}``.

    All equal to 1 when the factor tracks the posterior covariance exactly; Lemma 4.2 of
    Ensemble++ keeps them in ``[1/2, 3/2]``. The authors' diagnostics are
    ``up_err = max - 1`` and ``low_err = 1 - min``. O(d^3 + d^2 M); for tests and monitoring.
    """
    whitened = jnp.linalg.solve(state.ridge.sqrt_cov, state.factor) / noise_std
    return jnp.linalg.eigvalsh(whitened @ whitened.T)
