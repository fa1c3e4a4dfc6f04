"""A ReLU network with a vector output: the feature map of the neural dueling bandits.

NVLDB (Oh et al. 2026, Eq. 2) splits its network into a deep feature map and a
linear head, ``f(x) = theta^T phi(x; W)``::

    phi(x; W) = c * relu( W_L relu(W_{L-1} ... relu(W_1 x' + b_1) ... ) + b_L )

with width ``m``, depth ``L`` (the number of weight matrices: ``W_1`` ``(m, d')``, ``W_l``
``(m, m)``, ``W_L`` ``(D, m)``), ``c = sqrt(m)`` (``scale_output``) and the final ReLU
(``final_relu``) both switchable (Eq. 2 has both), biases only with ``bias`` (the paper's equations
have none). The same module with ``D = 1``, biases, no scale and no final ReLU is the plain
scalar MLP of the NDB baseline (Verma et al. 2024, as APOHF's ``NeuralDBDiag``: ``d -> 32 -> 32
-> 1``).

Initialisations (``init``):

* ``"torch"``: PyTorch's ``nn.Linear`` default, every weight and bias ``U(-1/sqrt(fan_in),
  1/sqrt(fan_in))`` (the default for NVLDB: the paper's code is PyTorch).
* ``"normal"``: every weight and bias i.i.d. ``N(0, 1)`` (the NDB reference code, APOHF's
  ``NeuralDBDiag``).
* ``"symmetric"``: the theory init of Oh et al. 2026, Eq. 3, ``W_l = blockdiag(w, w)`` with ``w``
  i.i.d. ``N(0, 4/m)`` for ``l < L`` and ``W_L = [w, -w]`` with ``w`` i.i.d. ``N(0, 2/m)``; no
  biases, even width, and with ``double_input`` (``x' = [x; x] / sqrt 2``) ``phi(x; W_0) = 0``
  for every x (up to float rounding). Since ``relu'(0) = 0`` no gradient reaches ``W`` from
  there: an option for theory checks, not for training.

Like :class:`~jaxbandits.nets.Network`, agents keep a static :class:`FeatureNetwork` handle and
the parameters (an ``nnx.State``) in their state; ``apply`` merges them inside pure functions.
"""

from __future__ import annotations

from flax import nnx, struct

from jaxbandits.nets.mlp import MLP, NetworkHandle

__all__ = ["FEATURE_INITS", "FeatureMLP", "FeatureNetwork"]

FEATURE_INITS: tuple[str, ...] = ("torch", "normal", "symmetric")


class FeatureMLP(MLP):
    """ReLU network ``phi(x) = c relu?(W_L relu(... relu(W_1 x' + b_1)) + b_L)`` ``(..., D)``:
    the library's :class:`~jaxbandits.nets.MLP` with a vector output and this module's defaults
    (PyTorch's init, no output scale).

    Args:
      in_features: d, the raw input dimension.
      width: m, the hidden width.
      depth: L >= 2, the number of weight matrices.
      out_features: D, the output (feature) dimension.
      init: ``"torch"``, ``"normal"`` or ``"symmetric"`` (see the module docstring).
      bias: add a bias to every layer (not with ``"symmetric"``).
      scale_output: multiply the output by ``sqrt(m)``.
      final_relu: apply a ReLU to the last layer's output.
      double_input: feed ``[x; x] / sqrt 2`` (``d' = 2d``).
      rngs: the NNX random streams (``rngs.params`` draws the parameters).

    Example::

        net = FeatureMLP(3, 8, 3, 3, scale_output=True, final_relu=True, rngs=nnx.Rngs(0))
        net(jnp.ones((4, 3))).shape   # (4, 3)
    """

    def __init__(
        self,
        in_features: int,
        width: int,
        depth: int,
        out_features: int,
        *,
        init: str = "torch",
        bias: bool = False,
        scale_output: bool = False,
        final_relu: bool = False,
        double_input: bool = False,
        rngs: nnx.Rngs,
    ):
        if init not in FEATURE_INITS:
            raise ValueError(f"init must be one of {FEATURE_INITS}, got {init!r}")
        if int(out_features) != out_features or out_features < 1:
            raise ValueError(f"out_features must be a positive integer, got {out_features!r}")
        super().__init__(in_features, width, depth, out_features, init=init, bias=bias,
                         scale_output=scale_output, final_relu=final_relu,
                         double_input=double_input, rngs=rngs)


class FeatureNetwork(NetworkHandle):
    """A static, hashable description of a :class:`FeatureMLP`, with pure functions of its
    parameters (the ``nnx.State`` returned by :meth:`init`).

    Attributes (all static): ``in_features`` (d), ``width`` (m), ``depth`` (L),
    ``out_features`` (D), ``init_scheme``, ``bias``, ``scale_output``, ``final_relu`` and
    ``double_input`` (the arguments of :class:`FeatureMLP`).

    Example::

        net = FeatureNetwork(in_features=3, width=8, out_features=3, scale_output=True,
                             final_relu=True)
        params = net.init(key)
        phi = net.apply(params, arms)         # (K, 3)
    """

    in_features: int = struct.field(pytree_node=False)
    width: int = struct.field(pytree_node=False, default=32)
    depth: int = struct.field(pytree_node=False, default=3)
    out_features: int = struct.field(pytree_node=False, default=1)
    init_scheme: str = struct.field(pytree_node=False, default="torch")
    bias: bool = struct.field(pytree_node=False, default=False)
    scale_output: bool = struct.field(pytree_node=False, default=False)
    final_relu: bool = struct.field(pytree_node=False, default=False)
    double_input: bool = struct.field(pytree_node=False, default=False)

    def create(self, rngs: nnx.Rngs) -> FeatureMLP:
        """A fresh :class:`FeatureMLP` with parameters drawn from ``rngs``."""
        return FeatureMLP(self.in_features, self.width, self.depth, self.out_features,
                          init=self.init_scheme, bias=self.bias,
                          scale_output=self.scale_output, final_relu=self.final_relu,
                          double_input=self.double_input, rngs=rngs)

