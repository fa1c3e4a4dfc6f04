"""Agents, one module per family; each registers itself by name."""

from jaxbandits.agents.linear import Greedy, LinTS, LinUCB, RandomAgent, RidgeAgent, oful_radius
from jaxbandits.agents.select import best_action, chosen_features, greedy_index, uniform_action

__all__ = [
    "Greedy",
    "LinTS",
    "LinUCB",
    "RandomAgent",
    "RidgeAgent",
    "best_action",
    "chosen_features",
    "greedy_index",
    "oful_radius",
    "uniform_action",
]
