"""Feature networks ("backbones"): any Flax NNX module that maps an input to a feature vector.

The neural ensemble agents (Ensemble++, Ensemble+, EpiNet, greedy; Li et al. 2024, Sec. 3.3, App.
A.5, App. A.7.1) and LMC-TS put their heads on a backbone ``h(x; w)``: ``(..., d) -> (..., D)``. The
contract is
one callable, hashable so that agents can keep it as a static field::

    backbone(in_features: int, *, rngs: nnx.Rngs) -> nnx.Module   # module(x) -> (..., D)

A Flax module class whose constructor has that signature is such a callable as it stands, so
plugging in one's own network is one line::

    class Trunk(nnx.Module):
        def __init__(self, in_features, *, rngs):
            self.dense = nnx.Linear(in_features, 32, rngs=rngs)
        def __call__(self, x):
            return jax.nn.gelu(self.dense(x))

    agent = jb.make_agent("neural-ensemble-pp", backbone=Trunk)

:class:`MLPBackbone` is the papers' default: ``hidden = (64, 64)``, a ReLU after every layer,
biases, PyTorch's ``nn.Linear`` initialisation (Li et al. 2024, Sec. 3.3, Alg. 1: the feature is the
post-ReLU last hidden vector, no output layer). :func:`feature_dim` finds ``D`` abstractly.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
from flax import nnx

from jaxbandits.core import float_dtype

__all__ = [
    "ACTIVATIONS",
    "MLPBackbone",
    "MLPTrunk",
    "feature_dim",
    "torch_linear",
    "xavier_normal",
]

ACTIVATIONS: dict[str, Callable[[jax.Array], jax.Array]] = {
    "relu": jax.nn.relu,
    "leaky_relu": jax.nn.leaky_relu,  # negative slope 0.01, PyTorch's default (LMC-TS)
    "tanh": jnp.tanh,
    "gelu": jax.nn.gelu,
}


def xavier_normal(key: jax.Array, fan_in: int, fan_out: int, shape=None) -> jax.Array:
    """``N(0, 2 / (fan_in + fan_out))`` entries (PyTorch's ``xavier_normal_``), ``(fan_in,
    fan_out)`` unless ``shape`` is given."""
    std = math.sqrt(2.0 / (fan_in + fan_out))
    return std * jax.random.normal(key, shape or (fan_in, fan_out), float_dtype())


def torch_linear(in_features: int, out_features: int, *, rngs: nnx.Rngs,
                 bias: bool = True, kernel: str = "torch") -> nnx.Linear:
    """An ``nnx.Linear`` initialised as PyTorch's ``nn.Linear`` (``kernel="torch"``: kernel and
    bias ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``) or Xavier-normal with a zero bias
    (``kernel="xavier"``, the authors' heads and priors)."""
    bound = 1.0 / math.sqrt(in_features)

    def uniform(key, shape, dtype=None):
        return jax.random.uniform(key, shape, dtype or float_dtype(), -bound, bound)

    def xavier(key, shape, dtype=None):
        return xavier_normal(key, in_features, out_features, shape).astype(dtype or float_dtype())

    kernel_init = uniform if kernel == "torch" else xavier
    bias_init = uniform if kernel == "torch" else nnx.initializers.zeros_init()
    return nnx.Linear(in_features, out_features, use_bias=bias, kernel_init=kernel_init,
                      bias_init=bias_init, param_dtype=float_dtype(), rngs=rngs)


class MLPTrunk(nnx.Module):
    """``h(x) = act(W_n ... act(W_1 x + b_1) ... + b_n)`` ``(..., hidden[-1])``: the last hidden
    vector after its activation (no output layer)."""

    def __init__(self, in_features: int, hidden: tuple[int, ...], activation: str = "relu",
                 *, kernel: str = "torch", rngs: nnx.Rngs):
        sizes = (in_features, *hidden)
        self.layers = nnx.List([torch_linear(a, b, kernel=kernel, rngs=rngs)
                                for a, b in zip(sizes[:-1], sizes[1:], strict=True)])
        self.activation = activation

    def __call__(self, x: jax.Array) -> jax.Array:
        act = ACTIVATIONS[self.activation]
        for layer in self.layers:
            x = act(layer(x))
        return x


@dataclasses.dataclass(frozen=True)
class MLPBackbone:
    """The default backbone: an :class:`MLPTrunk` with ``hidden`` widths (64, 64) and ReLU.

    A frozen (hashable) dataclass, so two equal descriptions share compilations.

    Example::

        trunk = MLPBackbone(hidden=(50, 50, 50), activation="leaky_relu")(20, rngs=nnx.Rngs(0))
        trunk(jnp.ones((5, 20))).shape    # (5, 50)
    """

    hidden: tuple[int, ...] = (64, 64)
    activation: str = "relu"

    def __post_init__(self):
        hidden = tuple(self.hidden)
        if not hidden or any(isinstance(h, bool) or not isinstance(h, int) or h < 1
                             for h in hidden):
            raise ValueError(f"MLPBackbone: hidden must be a non-empty tuple of positive "
                             f"integers, got {self.hidden!r}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"MLPBackbone: activation must be one of {tuple(ACTIVATIONS)}, "
                             f"got {self.activation!r}")
        object.__setattr__(self, "hidden", hidden)

    def __call__(self, in_features: int, *, rngs: nnx.Rngs) -> MLPTrunk:
        return MLPTrunk(in_features, self.hidden, self.activation, rngs=rngs)


@functools.cache
def feature_dim(backbone: Callable, in_features: int, input_dtype: str = "float") -> int:
    """``D``, the size of ``backbone``'s feature vector for ``in_features``-dimensional inputs
    of ``input_dtype`` (``"float"``, or ``"int32"`` for token ids; found abstractly, no
    parameters drawn).

    Raises:
      ValueError: when the backbone cannot be built or does not map ``(N, d)`` inputs to
        ``(N, D)`` features (a vector per input).
    """
    name = getattr(backbone, "__name__", type(backbone).__name__)
    try:
        module = nnx.eval_shape(lambda: backbone(in_features, rngs=nnx.Rngs(params=0)))
        graphdef, state = nnx.split(module)
        dtype = float_dtype() if input_dtype == "float" else jnp.dtype(input_dtype)
        x = jax.ShapeDtypeStruct((3, in_features), dtype)
        out = jax.eval_shape(lambda s, v: nnx.merge(graphdef, s)(v), state, x)
    except Exception as error:  # noqa: BLE001 -- any failure here is the user's backbone
        raise ValueError(f"backbone {name}: cannot build it as backbone({in_features}, "
                         f"rngs=...) and apply it to a (3, {in_features}) input: "
                         f"{type(error).__name__}: {error}") from error
    shape = getattr(out, "shape", None)
    if shape is None or len(shape) != 2 or shape[0] != 3:
        raise ValueError(f"backbone {name} must map an (N, d) input to (N, D) features (a "
                         f"vector per input); on (3, {in_features}) it returned shape {shape}")
    return int(shape[1])
