"""Closed-form linear algebra shared by every linear agent."""

from jaxbandits.linalg.ridge import (
    RidgeState,
    ridge_covariance,
    ridge_init,
    ridge_sample,
    ridge_update,
    ridge_widths,
)

__all__ = [
    "RidgeState",
    "ridge_covariance",
    "ridge_init",
    "ridge_sample",
    "ridge_update",
    "ridge_widths",
]
