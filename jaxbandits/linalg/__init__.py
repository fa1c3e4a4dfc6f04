"""Closed-form linear algebra shared by every linear agent."""

from jaxbandits.linalg.ensemble import (
    FACTOR_INITS,
    EnsembleState,
    ensemble_init,
    ensemble_sample,
    ensemble_update,
    factor_calibration,
    kalman_gain,
    prior_factor,
)
from jaxbandits.linalg.perturb import (
    PERTURBATIONS,
    REFERENCES,
    check_distribution,
    perturbation_sample,
    reference_sample,
    update_index_set,
)
from jaxbandits.linalg.ridge import (
    RidgeState,
    ridge_covariance,
    ridge_init,
    ridge_sample,
    ridge_update,
    ridge_widths,
)

__all__ = [
    "FACTOR_INITS",
    "PERTURBATIONS",
    "REFERENCES",
    "EnsembleState",
    "RidgeState",
    "check_distribution",
    "ensemble_init",
    "ensemble_sample",
    "ensemble_update",
    "factor_calibration",
    "kalman_gain",
    "perturbation_sample",
    "prior_factor",
    "reference_sample",
    "ridge_covariance",
    "ridge_init",
    "ridge_sample",
    "ridge_update",
    "ridge_widths",
    "update_index_set",
]
