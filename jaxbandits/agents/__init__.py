"""Agents, one module per family; each registers itself by name."""

from jaxbandits.agents.ensembles import (
    RRLS,
    EnsemblePlusPlus,
    EnsembleSampling,
    LinES,
    LinESState,
    LinPHE,
    LinPHEState,
    member_prior_noise,
    member_reward_noise,
    theory_perturb_std,
)
from jaxbandits.agents.linear import Greedy, LinTS, LinUCB, RandomAgent, RidgeAgent, oful_radius
from jaxbandits.agents.select import best_action, chosen_features, greedy_index, uniform_action

__all__ = [
    "RRLS",
    "EnsemblePlusPlus",
    "EnsembleSampling",
    "Greedy",
    "LinES",
    "LinESState",
    "LinPHE",
    "LinPHEState",
    "LinTS",
    "LinUCB",
    "RandomAgent",
    "RidgeAgent",
    "best_action",
    "chosen_features",
    "greedy_index",
    "member_prior_noise",
    "member_reward_noise",
    "oful_radius",
    "theory_perturb_std",
    "uniform_action",
]
