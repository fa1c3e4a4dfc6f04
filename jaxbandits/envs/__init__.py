"""Environments, one module per family; each registers itself by name."""

from jaxbandits.envs.datasets import (
    ClassificationEnv,
    ClassificationEnvState,
    DataNotFoundError,
    DataTable,
    DigitsEnv,
    MagicEnv,
    RowContext,
    ShuttleEnv,
    block_features,
    download,
    load_dataset,
    make_table,
)
from jaxbandits.envs.ensemble_pp import FreqRussoEnv, LinearVaryingEnv, RussoEnv, VaryingContext
from jaxbandits.envs.linear import LinearEnv, LinearEnvState, LinearSphereEnv, draw_vectors
from jaxbandits.envs.logistic import LogisticBernoulliEnv, LogisticEnv
from jaxbandits.envs.nonlinear import (
    DistanceEnv,
    NonlinearEnv,
    NonlinearEnvState,
    QuadraticEnv,
    RandomMLPEnv,
)
from jaxbandits.envs.replay import (
    LoggedData,
    OBDReplayEnv,
    OBDReplayState,
    ReplayContext,
    load_obd,
)
from jaxbandits.envs.synthetic import NeuralLogSyntheticEnv, SyntheticState

__all__ = [
    "ClassificationEnv",
    "ClassificationEnvState",
    "DataNotFoundError",
    "DataTable",
    "DigitsEnv",
    "DistanceEnv",
    "FreqRussoEnv",
    "LinearEnv",
    "LinearEnvState",
    "LinearSphereEnv",
    "LinearVaryingEnv",
    "LoggedData",
    "LogisticBernoulliEnv",
    "LogisticEnv",
    "MagicEnv",
    "NeuralLogSyntheticEnv",
    "NonlinearEnv",
    "NonlinearEnvState",
    "OBDReplayEnv",
    "OBDReplayState",
    "QuadraticEnv",
    "RandomMLPEnv",
    "ReplayContext",
    "RowContext",
    "RussoEnv",
    "ShuttleEnv",
    "SyntheticState",
    "VaryingContext",
    "block_features",
    "download",
    "draw_vectors",
    "load_dataset",
    "load_obd",
    "make_table",
]
