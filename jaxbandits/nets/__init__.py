"""Neural networks for the neural bandits: the NTK-initialised MLP, its gradient features and
design matrices, NTK diagnostics, and the training loop."""

from jaxbandits.nets.features import FEATURE_INITS, FeatureMLP, FeatureNetwork
from jaxbandits.nets.mlp import (
    DESIGNS,
    INITS,
    MLP,
    Network,
    design_init,
    design_logdet,
    design_update,
    design_widths,
    effective_dimension,
    ntk_gram,
    ntk_limit,
)
from jaxbandits.nets.train import net_gd, net_loss, training_round

__all__ = [
    "DESIGNS",
    "FEATURE_INITS",
    "FeatureMLP",
    "FeatureNetwork",
    "INITS",
    "MLP",
    "Network",
    "design_init",
    "design_logdet",
    "design_update",
    "design_widths",
    "effective_dimension",
    "net_gd",
    "net_loss",
    "ntk_gram",
    "ntk_limit",
    "training_round",
]
