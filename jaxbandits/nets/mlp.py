"""The NTK-parameterised ReLU network of the neural bandit papers, its gradient features and
design matrices, and NTK diagnostics.

The network (Sun et al. 2025, Sec. 4.3, App. C, Bae & Lee 2025, Sec. 2; Zhou et al. 2020) is
bias-free::

    f(x; theta) = sqrt(m) * W_L relu(W_{L-1} relu( ... relu(W_1 x') ))

with width ``m``, depth ``L`` (the number of weight matrices: ``W_1`` ``(m, d')``, ``W_l``
``(m, m)`` for ``2 <= l <= L-1``, ``W_L`` ``(1, m)``), so ``p = m d' + m^2 (L - 2) + m``
parameters (820 for ``d' = 20, m = 20, L = 3``; the papers' ``m^2 (L - 1)`` is off by one layer).
The input ``x'`` is ``x``, or ``[x; x] / sqrt 2`` with ``double_input`` (Bae & Lee 2025, Assumption
4.2; ``d' = 2d``); with the symmetric init and an odd ``d`` without doubling, ``x`` is padded with
one zero so that the two input halves exist (``d' = d + 1``; the padded column gets no gradient).

Initialisations (``init``):

* ``"symmetric"`` (the papers'): ``W_l = blockdiag(W, W)`` for ``l < L`` with ``W`` i.i.d.
  ``N(0, 4/m)`` of shape ``(m/2, d'/2)`` or ``(m/2, m/2)``, and ``W_L = [w, -w]`` with ``w``
  i.i.d. ``N(0, 2/m)``. With a doubled input the two halves of every hidden layer are equal, so
  ``f(x; theta_0) = 0`` exactly. The off-diagonal blocks start at zero but are trained.
* ``"gaussian"``: every entry i.i.d. ``N(0, 2/m)`` (the symmetric init's average entry
  variance without its block / sign structure: the same NTK, but ``f(x; theta_0) != 0``).
* ``"torch"``: PyTorch's ``nn.Linear`` default, ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` (used by
  the NeuralUCB reference code, which also has biases; this network never has biases).

**Parameters as pytrees.** :class:`MLP` is a Flax NNX module. Agents and environments hold a
:class:`Network`, a hashable static description, and keep the parameters (an ``nnx.State``, a
pytree of arrays) in their state: ``Network.graphdef`` is the ``nnx.split`` graph definition,
computed once per static configuration (abstractly, with ``nnx.eval_shape``) and cached, and
``Network.apply`` merges it with the parameters inside pure functions. An ensemble is then just
parameters stacked on a leading axis and a ``jax.vmap`` over them: it composes with the runner's
``vmap`` over runs and ``scan`` over rounds with no NNX graph machinery inside the loop, and
members may share ``theta_0`` (Neural-ES) by broadcasting one state instead of creating m.

**Gradient features.** ``g(x; theta) = grad_theta f(x; theta)`` flattened to ``(p,)``
(``jax.flatten_util.ravel_pytree``), for all K arms at once (``vmap`` of ``grad``), and the
design matrix ``U = reg I + sum_s g_s g_s^T`` of the chosen arms' features (callers pass
``g / sqrt(m)`` for the papers' ``U = lambda I + sum g g^T / m``), diagonal or full. The full
``U^{-1}`` is kept as a square root by :mod:`jaxbandits.linalg.ridge`'s rank-one update.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from flax import nnx, struct
from jax.flatten_util import ravel_pytree

from jaxbandits.core import float_dtype
from jaxbandits.linalg import RidgeState, ridge_init, ridge_update, ridge_widths

__all__ = [
    "DESIGNS",
    "INITS",
    "KERNEL_INITS",
    "MLP",
    "Network",
    "design_init",
    "design_logdet",
    "design_update",
    "design_widths",
    "bias_init",
    "effective_dimension",
    "kernel_init",
    "ntk_gram",
    "ntk_limit",
]

INITS: tuple[str, ...] = ("symmetric", "gaussian", "torch")
#: every scheme of :func:`kernel_init` (``"normal"`` is the NDB baseline's)
KERNEL_INITS: tuple[str, ...] = (*INITS, "normal")
DESIGNS: tuple[str, ...] = ("diag", "full")


# ------------------------------------------------------------------------------------------------
# The module.


class MLP(nnx.Module):
    """The library's one ReLU network in its kernel layout (``W_l`` ``(out, in)``)::

        f(x) = c relu?(W_L relu(... relu(W_1 x' + b_1) ...) + b_L)

    By default the bias-free scalar network of the module docstring (``c = sqrt(m)``, no final
    ReLU, ``f(x)`` ``(...)``); with ``out_features=D`` a vector ``(..., D)``, as the feature map
    of the neural dueling bandits (:class:`~jaxbandits.nets.FeatureMLP`, Oh et al. 2026).

    Args:
      in_features: d, the raw input dimension.
      width: m, the hidden width (even for the symmetric init).
      depth: L >= 2, the number of weight matrices.
      out_features: D for a vector output ``(..., D)``; None (default) for a scalar ``(...)``.
      init: ``"symmetric"``, ``"gaussian"``, ``"torch"`` or ``"normal"`` (:func:`kernel_init`).
      bias: add a bias to every layer (drawn after all the kernels; not with ``"symmetric"``).
      scale_output: multiply the output by ``c = sqrt(m)``.
      final_relu: apply a ReLU to the last layer's output.
      double_input: feed ``[x; x] / sqrt 2`` (then ``f(x; theta_0) = 0`` with the symmetric
        init).
      rngs: the NNX random streams (``rngs.params`` draws the kernels, then the biases).

    Example::

        net = MLP(20, 20, 3, init="symmetric", double_input=True, rngs=nnx.Rngs(0))
        net(jnp.ones((5, 20)))   # (5,) zeros at init
    """

    def __init__(
        self,
        in_features: int,
        width: int,
        depth: int,
        out_features: int | None = None,
        *,
        init: str = "symmetric",
        bias: bool = False,
        scale_output: bool = True,
        final_relu: bool = False,
        double_input: bool = False,
        rngs: nnx.Rngs,
    ):
        _check_network(width, depth, init, KERNEL_INITS, out_features, bias)
        self.in_features = in_features
        self.width = width
        self.out_features = out_features
        self.scale_output = scale_output
        self.final_relu = final_relu
        self.double_input = double_input
        self.pad = init == "symmetric" and not double_input and in_features % 2 == 1
        fan_in = 2 * in_features if double_input else in_features + int(self.pad)
        shapes = [(width, fan_in)] + [(width, width)] * (depth - 2) + [(out_features or 1, width)]
        last = len(shapes) - 1
        keys = [rngs.params() for _ in shapes]
        self.kernels = nnx.List([nnx.Param(kernel_init(k, s, i == last, init))
                                 for i, (k, s) in enumerate(zip(keys, shapes, strict=True))])
        self.biases = nnx.List(
            [nnx.Param(bias_init(rngs.params(), s, init)) for s in shapes] if bias else [])

    def __call__(self, x: jax.Array) -> jax.Array:
        """``f(x)`` for ``x`` of shape ``(..., d)``; returns ``(...)`` or ``(..., D)``."""
        kernels = [kernel[...] for kernel in self.kernels]
        biases = [b[...] for b in self.biases] or [None] * len(kernels)
        if self.double_input:
            # W_1 [x; x] / sqrt 2 = (W_1a + W_1b) x / sqrt 2: the doubled input is never formed
            # (it was a copy of every training row, every round, at twice the first layer's cost)
            half = kernels[0].shape[-1] // 2
            kernels[0] = (kernels[0][:, :half] + kernels[0][:, half:]) / math.sqrt(2.0)
        elif self.pad:
            kernels[0] = kernels[0][:, :-1]  # the padded input is zero: its column adds nothing
        # Feature-major: the inputs are the columns, h = relu(W h), so every layer is `kernel @
        # h` with the batch (the K arms) as the minor axis. Forward and backward then need no
        # transposes (XLA:CPU spent about a fifth of a training step transposing the row-major
        # `h @ W.T` form) and under vmap over members the first layer is one matrix product:
        # a Neural-ES round is about 1.25x faster, with the same numbers up to float rounding.
        h = x.reshape(-1, x.shape[-1]).T
        for i, (kernel, b) in enumerate(zip(kernels, biases, strict=True)):
            h = kernel @ h
            if b is not None:
                h = h + b[:, None]
            if i < len(kernels) - 1 or self.final_relu:
                h = jax.nn.relu(h)
        if self.scale_output:
            h = math.sqrt(self.width) * h
        if self.out_features is None:
            return h[0].reshape(x.shape[:-1])
        return h.T.reshape(x.shape[:-1] + (h.shape[0],))


def kernel_init(key: jax.Array, shape: tuple[int, int], output: bool, init: str) -> jax.Array:
    """One kernel ``(out, in)`` of a ReLU network, drawn by ``init`` (the library's one
    initialiser; ``output``: the last layer, ``m`` below the hidden width):

    * ``"symmetric"`` (Zhou et al. 2020; Oh et al. 2026, Eq. 3): ``blockdiag(w, w)`` with
      ``w`` i.i.d. ``N(0, 4/m)``, or ``[w, -w]`` with ``w`` i.i.d. ``N(0, 2/m)`` for the output;
    * ``"gaussian"``: i.i.d. ``N(0, 2/m)``;
    * ``"torch"``: PyTorch's ``nn.Linear`` default ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``;
    * ``"normal"``: i.i.d. ``N(0, 1)``.
    """
    dtype = float_dtype()
    rows, cols = shape
    if init == "torch":
        bound = 1.0 / math.sqrt(cols)
        return jax.random.uniform(key, shape, dtype, -bound, bound)
    if init == "normal":
        return jax.random.normal(key, shape, dtype)
    width = cols if output else rows
    if init == "gaussian":
        return jax.random.normal(key, shape, dtype) * math.sqrt(2.0 / width)
    if output:
        w = jax.random.normal(key, (rows, cols // 2), dtype) * math.sqrt(2.0 / width)
        return jnp.concatenate([w, -w], axis=-1)
    block = jax.random.normal(key, (rows // 2, cols // 2), dtype) * math.sqrt(4.0 / width)
    zeros = jnp.zeros_like(block)
    return jnp.block([[block, zeros], [zeros, block]])


def bias_init(key: jax.Array, shape: tuple[int, int], init: str) -> jax.Array:
    """The bias ``(out,)`` of a kernel of ``shape`` ``(out, in)``: i.i.d. ``N(0, 1)`` for
    ``init="normal"``, else PyTorch's ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``."""
    rows, cols = shape
    if init == "normal":
        return jax.random.normal(key, (rows,), float_dtype())
    bound = 1.0 / math.sqrt(cols)
    return jax.random.uniform(key, (rows,), float_dtype(), -bound, bound)


def _check_network(width: int, depth: int, init: str, inits: tuple[str, ...] = INITS,
                   out_features: int | None = None, bias: bool = False) -> None:
    if init not in inits:
        raise ValueError(f"init must be one of {inits}, got {init!r}")
    if int(depth) != depth or depth < 2:
        raise ValueError(f"depth must be an integer >= 2 (weight matrices), got {depth!r}")
    sizes = {"width": width} if out_features is None else {"width": width,
                                                            "out_features": out_features}
    for name, value in sizes.items():
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if init == "symmetric" and (width % 2 or bias):
        raise ValueError("the symmetric init needs an even width and no biases, got "
                         f"width={width!r}, bias={bias!r}")


# ------------------------------------------------------------------------------------------------
# The static handle agents and environments keep.


class NetworkHandle(struct.PyTreeNode):
    """Pure functions of a network's parameters, for a static description with ``create``
    (:class:`Network`, :class:`~jaxbandits.nets.FeatureNetwork`)."""

    def create(self, rngs: nnx.Rngs) -> nnx.Module:
        raise NotImplementedError

    def init(self, key: jax.Array) -> nnx.State:
        """The parameters ``theta_0`` of a freshly initialised network."""
        return nnx.split(self.create(nnx.Rngs(params=key)))[1]

    @property
    def graphdef(self) -> nnx.GraphDef:
        """The module's static graph definition (cached per configuration)."""
        return _graphdef(self)

    @property
    def num_params(self) -> int:
        """p, the number of parameters."""
        return _num_params(self)

    def apply(self, params: nnx.State, x: jax.Array) -> jax.Array:
        """The network's output at ``x`` ``(..., d)`` with ``params``."""
        return nnx.merge(self.graphdef, params)(x)


class Network(NetworkHandle):
    """A static, hashable description of an :class:`MLP`, with pure functions of its parameters.

    Attributes (all static): ``in_features`` (d), ``width`` (m), ``depth`` (L), ``init_scheme``
    (``init`` of :class:`MLP`) and ``double_input``.

    ``params`` below is the ``nnx.State`` of the module's parameters (a pytree of arrays), as
    returned by :meth:`init`; an ensemble stacks it on a leading axis.

    Example::

        net = Network(in_features=20, width=20, depth=3)
        params = net.init(key)
        f, g = net.features(params, arms)     # (K,), (K, p)
    """

    in_features: int = struct.field(pytree_node=False)
    width: int = struct.field(pytree_node=False, default=20)
    depth: int = struct.field(pytree_node=False, default=3)
    init_scheme: str = struct.field(pytree_node=False, default="symmetric")
    double_input: bool = struct.field(pytree_node=False, default=False)

    def create(self, rngs: nnx.Rngs) -> MLP:
        """A fresh :class:`MLP` module with parameters drawn from ``rngs``."""
        return MLP(self.in_features, self.width, self.depth, init=self.init_scheme,
                   double_input=self.double_input, rngs=rngs)


    def features(self, params: nnx.State, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        """``f(x_k; theta)`` ``(K,)`` and the flat gradients ``g(x_k; theta)`` ``(K, p)`` for
        inputs ``x`` ``(K, d)``, all arms at once (``vmap`` of ``value_and_grad``)."""
        flat, unravel = ravel_pytree(params)
        value_and_grad = jax.value_and_grad(lambda th, xk: self.apply(unravel(th), xk))
        return jax.vmap(value_and_grad, (None, 0))(flat, x)

    def gradient(self, params: nnx.State, x: jax.Array) -> jax.Array:
        """The flat gradient ``g(x; theta)`` ``(p,)`` at one input ``x`` ``(d,)``."""
        flat, unravel = ravel_pytree(params)
        return jax.grad(lambda th: self.apply(unravel(th), x))(flat)


@functools.cache
def _graphdef(network: NetworkHandle) -> nnx.GraphDef:
    abstract = nnx.eval_shape(lambda: network.create(nnx.Rngs(params=0)))
    return nnx.split(abstract)[0]


@functools.cache
def _num_params(network: NetworkHandle) -> int:
    abstract = nnx.eval_shape(lambda: network.create(nnx.Rngs(params=0)))
    return sum(math.prod(x.shape) for x in jax.tree.leaves(nnx.split(abstract)[1]))


# ------------------------------------------------------------------------------------------------
# Design matrices of gradient features.


def design_init(num_params: int, reg: jax.Array | float, kind: str = "diag"):
    """``U_0 = reg I`` over ``p`` = ``num_params`` features.

    ``kind="diag"``: the diagonal, a ``(p,)`` array (the NeuralUCB / NeuralTS reference code);
    ``"full"``: a :class:`~jaxbandits.linalg.RidgeState` holding a square root of ``U^{-1}``
    (O(p^2) memory and per update; p = 820 at the paper's sizes).
    """
    if kind not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {kind!r}")
    if kind == "full":
        return ridge_init(num_params, reg)
    return jnp.full((num_params,), reg, float_dtype())


def design_update(design, g: jax.Array):
    """``U <- U + g g^T`` for one feature ``g`` ``(p,)`` (diagonal: ``U_jj += g_j^2``)."""
    if isinstance(design, RidgeState):
        return ridge_update(design, g, jnp.zeros((), g.dtype))
    return design + g * g


def design_widths(design, g: jax.Array) -> jax.Array:
    """``||g_k||_{U^{-1}} = sqrt(g_k^T U^{-1} g_k)`` for features ``g`` ``(K, p)``; ``(K,)``."""
    if isinstance(design, RidgeState):
        return ridge_widths(design, g)
    return jnp.sqrt(jnp.sum(g * g / design, axis=-1))


def design_logdet(design) -> jax.Array:
    """``log det U``: exact for a full design (kept by the rank-one updates), ``sum_j log U_jj``
    for a diagonal one (by Hadamard's inequality an upper bound on the full matrix's)."""
    if isinstance(design, RidgeState):
        return design.logdet
    return jnp.sum(jnp.log(design), axis=-1)


# ------------------------------------------------------------------------------------------------
# NTK diagnostics.


def ntk_gram(network: Network, params: nnx.State, x: jax.Array) -> jax.Array:
    """The empirical NTK Gram matrix ``H_ij = g(x_i; theta)^T g(x_j; theta) / m``, ``(K, K)``
    for inputs ``x`` ``(K, d)`` (at ``theta_0`` it converges to :func:`ntk_limit` as m grows)."""
    _, g = network.features(params, x)
    return g @ g.T / network.width


def ntk_limit(x: jax.Array, depth: int) -> jax.Array:
    """The infinite-width NTK of the bias-free ReLU network, ``(K, K)`` for ``x`` ``(K, d)``.

    The recursion of Bae & Lee 2025, Definition C.1 with the standard covariance
    ``[[S_ii, S_ij], [S_ij, S_jj]]`` (the printed recursion repeats ``S_ij``): ``S^1 = H^1 = x x^T``
    and for ``l < L``, with
    ``cos t_ij = S_ij / sqrt(S_ii S_jj)``::

        S^{l+1}_ij = sqrt(S_ii S_jj) (sin t + (pi - t) cos t) / pi   (= 2 E[relu(u) relu(v)])
        H^{l+1}_ij = H^l_ij (pi - t) / pi + S^{l+1}_ij               ((pi - t) / pi = 2 P(u, v > 0))

    Returns ``H^L``: the limit of :func:`ntk_gram` at ``theta_0`` (the inputs' doubling and
    padding keep inner products), with ``H^L_ii = L ||x_i||^2`` (Bae & Lee
    2025, Sec. 2: ``E ||g / sqrt m||^2 = L``). The papers' Gram matrix is ``(H^L + S^L) / 2``.
    """
    sigma = x @ x.T
    ntk = sigma
    for _ in range(depth - 1):
        diag = jnp.sqrt(jnp.clip(jnp.diag(sigma), 1e-30))
        norms = jnp.outer(diag, diag)
        angle = jnp.arccos(jnp.clip(sigma / norms, -1.0, 1.0))
        sigma = norms * (jnp.sin(angle) + (jnp.pi - angle) * jnp.cos(angle)) / jnp.pi
        ntk = ntk * (jnp.pi - angle) / jnp.pi + sigma
    return ntk


def effective_dimension(gram: jax.Array, reg: jax.Array | float, horizon: int) -> jax.Array:
    """The effective dimension of Sun et al. 2025, Sec. 5.2 ``log det(I + T H / reg) / log(1 + T K /
    reg)`` for the ``(K, K)`` NTK Gram matrix ``H`` of a fixed arm set and horizon ``T``."""
    num_arms = gram.shape[-1]
    eye = jnp.eye(num_arms, dtype=gram.dtype)
    _, logdet = jnp.linalg.slogdet(eye + horizon * gram / reg)
    return logdet / jnp.log1p(horizon * num_arms / reg)
