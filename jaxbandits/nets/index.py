"""Index networks: ``f(x, xi)`` ``(..., C)`` for an index ``xi`` in ``R^M``, on any backbone.

The neural agents of Ensemble++ (Li et al. 2024, Sec. 3.3, App. A.5, App. A.7.1) all evaluate a
network at an input ``x`` and an *index* ``xi``: a reference draw when acting, each vector of the
update-index set in the loss. Every head below reads features ``h(x)`` of a backbone
(:mod:`jaxbandits.nets.backbone`) and returns ``C`` outputs (1 for regression, 2 logits for the
classification head, one per action for a task with a single input per round):

* ``"ensemble++"`` (:class:`EnsemblePPNet`, Eq. 12): ``f(x, xi) = <h, b> + s_post <sg h, W xi>
  + s_prior <sg h, W0 xi>`` with a trainable base ``b`` ``(D, C)`` (no bias), a trainable factor
  ``W`` ``(C D, M)`` (Xavier-normal, or zero; App. B does not say) and a frozen prior factor ``W0``
  ( ``"gaussian"``, i.i.d. ``N(0, 1/M)``, the paper's columns ``N(0, I/M)``; ``"sphere"``, every row
  uniform on ``S^{M-1}``, the authors' code). ``sg`` is ``stop_gradient``: the backbone learns from
  the base term only. Linear in ``xi``: the head's ``u = sg(h)^T (s_post W + s_prior W0)`` is
  computed once for all indices.
* ``"ensemble+"`` (:class:`EnsemblePlusNet`, Osband et al. 2018; Li et al. 2024, App. A.5, Eq. 11):
  ``M`` linear heads
  with biases on the trainable backbone and ``M`` frozen heads on a separate frozen copy of it
  (its own initialisation), ``f_m(x) = s_post g_m(h(x)) + s_prior g0_m(h0(x))``; with the
  one-hot index ``xi = e_m`` that is ``f(x, xi) = sum_m xi_m f_m(x)``. No stop-gradient.
* ``"epinet"`` (:class:`EpiNet`, Osband et al. 2023; Li et al. 2024, App. A.7.1): ``f(x, xi) = mu(x)
  + s_post
  sigma_L(x, xi) + s_prior sigma_P(x, xi)``: a linear head with bias ``mu``, a learnable MLP
  ``[15, 15]`` on ``[x, sg h(x), xi]`` with ``M C`` outputs contracted with ``xi``, and ``M``
  frozen prior MLPs ``[5, 5]`` on the raw ``x`` (Xavier-normal weights, zero biases), contracted
  with ``xi``.
* ``"none"`` (:class:`BaseNet`, the greedy baseline of Li et al. 2024, Sec. 5.2): ``f(x) = <h, b>``.

:class:`IndexNetwork` is the static, hashable handle that agents keep: ``init`` returns the
trainable parameters and the frozen ones separately (every parameter under an attribute named
``prior`` is frozen: :data:`FROZEN`), so gradients are taken with respect to the former only and
a prior cannot move.

Parameter counts: :func:`paper_param_count` gives the paper's formulas (Appendix A.7.1:
frozen parts and a base-head bias counted; 11,713 / 22,288 / 17,931 for Ensemble++ / Ensemble+ /
EpiNet at d = 100, D = 64, C = 1, M = 8), :attr:`IndexNetwork.num_trainable` the modules' own
trainable count (11,200 for Ensemble++ there, the authors' code).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx, struct

from jaxbandits.core import float_dtype
from jaxbandits.nets.backbone import (
    MLPBackbone,
    feature_dim,
    torch_linear,
    xavier_normal,
)

__all__ = [
    "FROZEN",
    "HEADS",
    "PRIOR_INITS",
    "TRAINABLE",
    "BaseNet",
    "EnsemblePPNet",
    "EnsemblePlusNet",
    "EpiNet",
    "IndexNetwork",
    "paper_param_count",
]

HEADS: tuple[str, ...] = ("ensemble++", "ensemble+", "epinet", "none")
PRIOR_INITS: tuple[str, ...] = ("gaussian", "sphere")
#: The filters that split an index network into its frozen parameters (under ``prior``) and
#: its trainable ones (every other ``nnx.Param``).
FROZEN = nnx.PathContains("prior")
TRAINABLE = nnx.All(nnx.Param, nnx.Not(FROZEN))


def _contract(out: jax.Array, xi: jax.Array) -> jax.Array:
    """``sum_m xi_m out[..., m, :]`` for ``out`` ``(..., M, C)`` and ``xi`` ``(N, M)`` (shared)
    or ``(..., N, M)`` (per input): ``(..., N, C)``."""
    if xi.ndim == 2:
        return jnp.einsum("...mc,nm->...nc", out, xi)
    return jnp.einsum("...mc,...nm->...nc", out, xi)


class BaseNet(nnx.Module):
    """``f(x) = <h(x), b>`` ``(..., 1, C)`` (any index): the greedy baseline's network."""

    def __init__(self, backbone: Callable, in_features: int, num_outputs: int, *, width: int,
                 rngs: nnx.Rngs, **_: Any):
        self.backbone = backbone(in_features, rngs=rngs)
        self.base = torch_linear(width, num_outputs, bias=False, rngs=rngs)

    def __call__(self, x, xi, posterior_scale=1.0, prior_scale=1.0):
        out = self.base(self.backbone(x))
        return jnp.broadcast_to(out[..., None, :], out.shape[:-1] + (xi.shape[0], out.shape[-1]))


class EnsemblePPNet(nnx.Module):
    """The Ensemble++ network (module docstring); ``__call__(x, xi, s_post, s_prior)`` returns
    ``f(x, xi_n)`` ``(..., N, C)`` for ``x`` ``(..., d)`` and indices ``xi`` ``(N, M)``."""

    def __init__(self, backbone: Callable, in_features: int, num_outputs: int, *, width: int,
                 ensemble_size: int, prior_init: str = "gaussian", zero_init: bool = False,
                 rngs: nnx.Rngs, **_: Any):
        self.backbone = backbone(in_features, rngs=rngs)
        size, rows = ensemble_size, width * num_outputs
        self.base = torch_linear(width, num_outputs, bias=False, rngs=rngs)
        factor = (jnp.zeros((rows, size), float_dtype()) if zero_init
                  else xavier_normal(rngs.params(), size, rows, (rows, size)))
        self.factor = nnx.Param(factor)
        self.prior = nnx.Param(_prior_factor(rngs.params(), rows, size, prior_init))
        self.num_outputs = num_outputs

    def head(self, x, posterior_scale=1.0, prior_scale=1.0):
        """``(<h, b>, u)``: the base outputs ``(..., C)`` and ``u = sg(h)^T (s_post W + s_prior
        W0)`` ``(..., M, C)``, so that ``f(x, xi) = <h, b> + sum_m xi_m u_m``."""
        h = self.backbone(x)
        factor = posterior_scale * self.factor[...] + prior_scale * self.prior[...]
        factor = factor.reshape(self.num_outputs, h.shape[-1], -1)  # (C, D, M): row c D + j
        u = jnp.einsum("...j,cjm->...mc", jax.lax.stop_gradient(h), factor)
        return self.base(h), u

    def __call__(self, x, xi, posterior_scale=1.0, prior_scale=1.0):
        base, u = self.head(x, posterior_scale, prior_scale)
        return base[..., None, :] + _contract(u, xi)


class _HeadsOnTrunk(nnx.Module):
    """``M C`` linear outputs (Xavier-normal kernel, zero bias) on a backbone: ``(..., M C)``."""

    def __init__(self, backbone: Callable, in_features: int, width: int, outputs: int, *,
                 rngs: nnx.Rngs):
        self.backbone = backbone(in_features, rngs=rngs)
        self.heads = torch_linear(width, outputs, kernel="xavier", rngs=rngs)

    def __call__(self, x):
        return self.heads(self.backbone(x))


class EnsemblePlusNet(nnx.Module):
    """The Ensemble+ network (module docstring): ``(..., N, C)`` for indices ``xi`` ``(N, M)``
    (one-hot ``e_m`` picks member m)."""

    def __init__(self, backbone: Callable, in_features: int, num_outputs: int, *, width: int,
                 ensemble_size: int, rngs: nnx.Rngs, **_: Any):
        outputs = ensemble_size * num_outputs
        self.member = _HeadsOnTrunk(backbone, in_features, width, outputs, rngs=rngs)
        # The frozen prior: a second backbone with its own initialisation and M frozen heads.
        self.prior = _HeadsOnTrunk(backbone, in_features, width, outputs, rngs=rngs)
        self.shape = (ensemble_size, num_outputs)

    def __call__(self, x, xi, posterior_scale=1.0, prior_scale=1.0):
        out = posterior_scale * self.member(x) + prior_scale * self.prior(x)
        return _contract(out.reshape(out.shape[:-1] + self.shape), xi)


class EpiNet(nnx.Module):
    """The EpiNet (module docstring): ``(..., N, C)`` for indices ``xi`` ``(N, M)``."""

    def __init__(self, backbone: Callable, in_features: int, num_outputs: int, *, width: int,
                 ensemble_size: int, epinet_hidden: tuple[int, ...] = (15, 15),
                 prior_hidden: tuple[int, ...] = (5, 5), rngs: nnx.Rngs, **_: Any):
        size = ensemble_size
        self.backbone = backbone(in_features, rngs=rngs)
        self.base = torch_linear(width, num_outputs, rngs=rngs)
        sizes = (in_features + width + size, *epinet_hidden)
        self.epinet = nnx.List([torch_linear(a, b, kernel="xavier", rngs=rngs)
                                for a, b in zip(sizes[:-1], sizes[1:], strict=True)])
        self.epinet_out = torch_linear(sizes[-1], size * num_outputs, kernel="xavier",
                                       rngs=rngs)
        # M frozen prior MLPs on the raw input, as one stacked set of kernels per layer.
        prior_sizes = (in_features, *prior_hidden, num_outputs)
        keys = jax.random.split(rngs.params(), len(prior_sizes) - 1)
        self.prior = nnx.List([
            nnx.Param(xavier_normal(k, a, b, (size, a, b)))
            for k, a, b in zip(keys, prior_sizes[:-1], prior_sizes[1:], strict=True)])
        self.shape = (size, num_outputs)

    def __call__(self, x, xi, posterior_scale=1.0, prior_scale=1.0):
        h = self.backbone(x)
        mu = self.base(h)                                            # (..., C)
        lead, (n, size) = x.shape[:-1], xi.shape[-2:]
        xi = jnp.broadcast_to(xi, lead + (n, size))                   # (..., N, M)
        z = jnp.concatenate([jnp.broadcast_to(x[..., None, :], lead + (n, x.shape[-1])),
                             jnp.broadcast_to(jax.lax.stop_gradient(h)[..., None, :],
                                              lead + (n, h.shape[-1])), xi], axis=-1)
        for layer in self.epinet:
            z = jax.nn.relu(layer(z))
        learn = self.epinet_out(z).reshape(lead + (n,) + self.shape)  # (..., N, M, C)
        sigma_l = jnp.einsum("...nmc,...nm->...nc", learn, xi)
        p = x
        kernels = [kernel[...] for kernel in self.prior]
        p = jnp.einsum("...d,mde->...me", p, kernels[0])
        for kernel in kernels[1:]:
            p = jnp.einsum("...md,mde->...me", jax.nn.relu(p), kernel)
        sigma_p = _contract(p, xi)             # (..., N, C)
        return mu[..., None, :] + posterior_scale * sigma_l + prior_scale * sigma_p


def _prior_factor(key, rows: int, size: int, prior_init: str) -> jax.Array:
    if prior_init == "gaussian":  # columns N(0, I / M): E[W0 W0^T] = I
        return jax.random.normal(key, (rows, size), float_dtype()) / math.sqrt(size)
    v = jax.random.normal(key, (rows, size), float_dtype())  # rows uniform on S^{M-1}
    return v / jnp.linalg.norm(v, axis=-1, keepdims=True)


_MODULES = {"ensemble++": EnsemblePPNet, "ensemble+": EnsemblePlusNet, "epinet": EpiNet,
            "none": BaseNet}


class IndexNetwork(struct.PyTreeNode):
    """A static, hashable description of an index network, with pure functions of its
    parameters.

    Attributes (all static): ``head`` (one of :data:`HEADS`), ``backbone`` (a backbone callable,
    :class:`~jaxbandits.nets.MLPBackbone` by default), ``in_features`` (d), ``num_outputs`` (C),
    ``ensemble_size`` (M), ``prior_init`` and ``zero_init`` (the paper's and the code's inits),
    ``train_backbone`` (False: the backbone is frozen, trained heads only; Li et al. 2024, App.
    G.4's frozen language model) and ``input_dtype`` (``"float"``, or ``"int32"`` for token ids).

    Example::

        net = IndexNetwork("ensemble++", in_features=100, ensemble_size=8)
        params, frozen = net.init(key)
        f = net.apply(params, frozen, arms, xi)      # (K, N, 1)
    """

    head: str = struct.field(pytree_node=False)
    in_features: int = struct.field(pytree_node=False)
    backbone: Callable = struct.field(pytree_node=False, default=MLPBackbone())
    num_outputs: int = struct.field(pytree_node=False, default=1)
    ensemble_size: int = struct.field(pytree_node=False, default=8)
    prior_init: str = struct.field(pytree_node=False, default="gaussian")
    zero_init: bool = struct.field(pytree_node=False, default=False)
    train_backbone: bool = struct.field(pytree_node=False, default=True)
    input_dtype: str = struct.field(pytree_node=False, default="float")

    @property
    def filters(self) -> tuple[Any, Any]:
        """``(trainable, frozen)``: the ``nnx`` filters that split the parameters (the priors,
        and the backbone too when ``train_backbone`` is False, are frozen)."""
        if self.train_backbone:
            return TRAINABLE, FROZEN
        frozen = nnx.Any(FROZEN, nnx.PathContains("backbone"))
        return nnx.All(nnx.Param, nnx.Not(frozen)), frozen

    def create(self, rngs: nnx.Rngs) -> nnx.Module:
        """A fresh module with parameters drawn from ``rngs``."""
        return _MODULES[self.head](self.backbone, self.in_features, self.num_outputs,
                                   width=self.feature_dim, ensemble_size=self.ensemble_size,
                                   prior_init=self.prior_init, zero_init=self.zero_init, rngs=rngs)

    @property
    def feature_dim(self) -> int:
        """D, the backbone's feature size (``ValueError`` for a backbone that does not map an
        input to a feature vector)."""
        return feature_dim(self.backbone, self.in_features, self.input_dtype)

    def init(self, key: jax.Array) -> tuple[nnx.State, nnx.State]:
        """``(params, frozen)``: the trainable and the frozen parameters of a fresh network."""
        _, params, frozen = nnx.split(self.create(nnx.Rngs(params=key)), *self.filters)
        return params, frozen

    def apply(self, params: nnx.State, frozen: nnx.State, x: jax.Array, xi: jax.Array,
              posterior_scale=1.0, prior_scale=1.0) -> jax.Array:
        """``f(x, xi_n)`` ``(..., N, C)`` for inputs ``x`` ``(..., d)`` and indices ``xi``
        ``(N, M)``, shared by all inputs, or ``(..., N, M)``, per input."""
        module = nnx.merge(_graphdef(self), params, frozen)
        return module(x, xi, posterior_scale, prior_scale)

    @property
    def num_trainable(self) -> int:
        """The number of trainable parameters (the authors' code's count)."""
        return _counts(self)[0]

    @property
    def num_frozen(self) -> int:
        """The number of frozen (prior) parameters."""
        return _counts(self)[1]


@functools.cache
def _abstract(network: IndexNetwork):
    return nnx.split(nnx.eval_shape(lambda: network.create(nnx.Rngs(params=0))),
                     *network.filters)


def _graphdef(network: IndexNetwork) -> nnx.GraphDef:
    return _abstract(network)[0]


@functools.cache
def _counts(network: IndexNetwork) -> tuple[int, int]:
    _, params, frozen = _abstract(network)
    return tuple(sum(math.prod(x.shape) for x in jax.tree.leaves(s)) for s in (params, frozen))


def paper_param_count(head: str, in_features: int, hidden: tuple[int, ...] = (64, 64),
                      num_outputs: int = 1, ensemble_size: int = 8) -> int:
    """The paper's parameter count (Li et al. 2024, App. A.7.1) of ``head`` on an MLP trunk.

    With ``H`` the trunk's parameters (weights and biases): Ensemble++ ``H + (2M + 1) D C + C``,
    Ensemble+ ``2H + 2M (D + 1) C``, EpiNet ``H + 15d + 15D + 31M + 255 + 16C + M (5d + 35 +
    6C)`` (as printed: it counts the epinet's output as ``M + C``), greedy ``H + D C + C``.

    Example::

        paper_param_count("ensemble++", 100)    # 11713
    """
    sizes = (in_features, *hidden)
    trunk = sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=True))
    d, width, c, m = in_features, hidden[-1], num_outputs, ensemble_size
    counts = {
        "ensemble++": trunk + (2 * m + 1) * width * c + c,
        "ensemble+": 2 * trunk + 2 * m * (width + 1) * c,
        "epinet": trunk + 15 * d + 15 * width + 31 * m + 255 + 16 * c + m * (5 * d + 35 + 6 * c),
        "none": trunk + width * c + c,
    }
    if head not in counts:
        raise ValueError(f"head must be one of {HEADS}, got {head!r}")
    return counts[head]
