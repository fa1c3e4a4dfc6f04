"""The confidence schedules of the neural logistic bandits (Bae & Lee 2025, Secs. 4-5 for the
algorithm boxes; Sec. 7, App. A for the experiments), as plain functions of the statistics. The
agents are in :mod:`jaxbandits.agents.neurallog`, which re-exports these functions.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from jaxbandits.core import float_dtype


def log_term(num_obs: jax.Array, delta) -> jax.Array:
    """``l_t = log(4 t^2 / delta)`` with ``t = max(num_obs, 1)`` (``l_0`` read as ``l_1``)."""
    t = jnp.maximum(jnp.asarray(num_obs, float_dtype()), 1.0)
    return jnp.log(4.0 * t * t / delta)


def confidence_factor(depth: int, param_bound) -> jax.Array:
    """``1 + sqrt(L) S + L S^2``, the factor of ``iota_t`` in ``nu^(1)``, ``nu^(2)`` (Eq. 1)."""
    return 1.0 + math.sqrt(depth) * param_bound + depth * param_bound * param_bound


def neurallog_lambda0(depth: int, param_bound, delta, c_grad=1.0) -> jax.Array:
    """``lam_0 = 8 sqrt(2) C1 sqrt(L) log(4 / delta) / S`` (Algorithms 1-2, initialisation)."""
    return 8.0 * math.sqrt(2.0) * c_grad * math.sqrt(depth) * jnp.log(4.0 / delta) / param_bound


def neurallog_schedule(
    logdet: jax.Array, num_obs: jax.Array, depth: int, param_bound, delta, c_grad=1.0
) -> tuple[jax.Array, jax.Array]:
    """The theory schedule ``(lam_t, iota_t)`` after ``t`` = ``num_obs`` observations.

    With ``D_t = log det(I + sum_{i<=t} phi_i phi_i^T / (4 lam_0))`` = ``logdet`` (Eqs. 2-3)::

        lam_t  = max(lam_0, 64 / S^2 D_t l_t + 16 C1^2 L / (S^2 lam_0) l_t^2)
        iota_t = 16 sqrt(D_t l_t) + 8 C1 sqrt(L / lam_0) l_t

    The clamp at ``lam_0`` is ours (the paper's claim ``lam_0 <= lam_1`` fails by a
    factor 8 when ``D_1 ~ 0``); at ``t = 0`` this gives ``lam_0`` and ``iota_0`` (with ``l_0`` read
    as ``l_1``).
    """
    lam0 = neurallog_lambda0(depth, param_bound, delta, c_grad)
    ell = log_term(num_obs, delta)
    s2 = param_bound * param_bound
    lam = 64.0 / s2 * logdet * ell + 16.0 * c_grad**2 * depth / (s2 * lam0) * ell * ell
    iota = 16.0 * jnp.sqrt(logdet * ell) + 8.0 * c_grad * jnp.sqrt(depth / lam0) * ell
    return jnp.maximum(lam, lam0), iota


def practical_radius(
    dtilde: jax.Array, num_obs: jax.Array, reg, depth: int, param_bound, delta,
    include_logs: bool = True,
) -> jax.Array:
    """The practical ``nu^_t = (1 + sqrt(L) S + L S^2) iota^_t + 1`` (Bae & Lee 2025, Sec. 7, App.
    A) with ``iota^_t = sqrt(d~_t l_t) + l_t / sqrt(lam)`` (``include_logs``) or
    ``sqrt(d~_t) + 1 / sqrt(lam)``: the theory's ``nu_t`` with every constant 1 and the running
    effective dimension ``d~_t`` in place of ``D_t``."""
    ell = log_term(num_obs, delta) if include_logs else jnp.ones((), float_dtype())
    iota = jnp.sqrt(dtilde * ell) + ell / jnp.sqrt(reg)
    return confidence_factor(depth, param_bound) * iota + 1.0
