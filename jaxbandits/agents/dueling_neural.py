"""Neural contextual dueling bandits: NVLDB / NLDB (Oh et al. 2026) and the NDB
baseline (Verma et al. 2024, in the form of APOHF's ``NeuralDBDiag``, the closest public code;
Oh et al. 2026, Sec. 6 runs it without giving its settings).

Each round the agent sees ``K`` arms ``X`` ``(K, d)``, plays an ordered pair ``(k1, k2)``
(``(2,)`` int32) and observes ``o = 1`` ("k1 preferred") with probability
``g(u(x_k1) - u(x_k2))``. Both agents keep the pairs in a ring buffer (:class:`DuelBuffer`, the
last ``buffer_size`` pairs; ``None``: ``AUTO_BUFFER`` rows, or the horizon through
``jb.make_agent(..., env=env, horizon=T)``), train on its filled rows only (in blocks, so a
training on t pairs costs O(t), not O(B)), and choose the pair with
:func:`~jaxbandits.agents.duel_select.select_pair` from utility estimates, exploration features
and an inverse Gram matrix; the agents differ only in those three.

**NVLDB / NLDB** (:class:`NVLDB`; Oh et al. 2026, Sec. 4.1, Alg. 1): the network
``f(x) = theta^T phi(x; W)`` with the deep feature map of
:class:`~jaxbandits.nets.FeatureNetwork` (``phi = sqrt(m) relu(W_3 relu(W_2 relu(W_1 x)))``,
``D = d``) and shallow exploration on ``phi`` = ``df/dtheta``. Every round: select with
``u = Phi theta``, ``Phi = phi(X; W)`` and ``V^{-1}``; store the pair with the weight ``1 /
zeta^2``; take ``num_grad_steps`` warm-started Adam steps on the weighted BTL loss; refresh
``V``. Twelve registered names (aliases of :class:`NVLDB` with ``rule`` and ``variance`` set),
``{nvldb,nldb}-{ucb,ts}-{asym,osym,csym}``: ``nvldb`` weighs
pair i by ``1 / zeta_i^2`` with ``zeta_i = max(sigma_hat_i, eps)`` (variance-aware), ``nldb``
by 1 (``zeta_i = 1``).

**NDB** (:class:`NDB`; ``ndb-ucb``, ``ndb-ts``): a scalar MLP ``d -> 32 -> 32 -> 1`` with
biases, all parameters ``N(0, 1)``, reset to its initialisation and retrained every round;
exploration on the flat full gradients with a diagonal Gram matrix.

Per-round cost (K arms, D = d features, width m, t stored pairs, n gradient steps, p network
parameters): NVLDB acts in O(K C_f + D^3 + K^2 D^2) (forward, Cholesky, pair widths) and updates
in O(n t C_f) (training, the dominant term) plus O(t (C_f + D^2)) for ``gram="recompute"``
(O(D^2) incremental), independent of p beyond the forward pass. NDB acts in O(K p + K^2 p) (the
per-arm gradients and widths; ``design="full"``: O(p^3 + K^2 p^2)) and updates in O(n t C_f +
t p) (training from scratch, and the gradients of the 2t stored contexts; ``"full"``: O(t p^2)
more), with p = 1,217 at d = 3 and width 32.
"""

from __future__ import annotations

import difflib
import math
import types
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import nnx, struct

from jaxbandits.agents.duel_select import (
    CANDIDATE_MODES,
    TS_CSYM_FORMS,
    check_rule,
    select_pair,
)
from jaxbandits.agents.dueling_base import (
    DuelBuffer,
    DuelRows,
    _DuelingAgent,
    duel_buffer_add,
    duel_buffer_init,
    duel_buffer_sum,
    pair_difference,
)
from jaxbandits.agents.dueling_ndb import (  # the NDB baseline; NDB_* keep their import path
    NDB,
    NDB_DESIGNS,  # noqa: F401
    NDB_INITS,  # noqa: F401
    NDBState,
)
from jaxbandits.core import (
    Agent,
    Context,
    Feedback,
    Spec,
    check_choice,
    check_positive,
    float_dtype,
)
from jaxbandits.linalg.glm import PREFERENCE_LINKS, neg_log_preference, preference_prob
from jaxbandits.nets import FeatureNetwork
from jaxbandits.registry import register_alias

__all__ = [
    "DUELING_PRESETS",
    "GRAM_MODES",
    "LINKS",
    "NDB",
    "NDBState",
    "NVLDB",
    "NVLDBParams",
    "NVLDBState",
    "VARIANCE_MODES",
    "DuelBuffer",
    "DuelRows",
    "duel_buffer_add",
    "duel_buffer_init",
    "duel_buffer_sum",
    "dueling_preset",
    "neg_log_preference",
    "nvldb_data_loss",
    "nvldb_gram",
    "nvldb_loss",
    "nvldb_theta_newton",
    "nvldb_utilities",
    "pair_difference",
    "preference_prob",
]

LINKS = PREFERENCE_LINKS  # the environments' links (jaxbandits.linalg.glm)
VARIANCE_MODES: tuple[str, ...] = ("aware", "agnostic", "oracle")
GRAM_MODES: tuple[str, ...] = ("recompute", "incremental")
NVLDB_INITS: tuple[str, ...] = ("torch", "symmetric")

#: The two configurations of Oh et al. 2026: ``main`` (Sec. 6: width 100, Adam lr
#: 1e-3; the registered defaults) and ``appendix`` (App. E.2: width 32, lr 1e-2). Everything
#: else is shared (lambda = 1, n = 20, H = 1, a = 1).
DUELING_PRESETS: dict[str, dict[str, Any]] = {
    "main": {"width": 100, "learning_rate": 1e-3},
    "appendix": {"width": 32, "learning_rate": 1e-2},
}


def dueling_preset(name: str) -> dict[str, Any]:
    """The field overrides of the NVLDB configuration ``name`` (``"main"`` or ``"appendix"``).

    Example::

        agent = jb.make_agent("nvldb-ucb-asym", **dueling_preset("appendix"))
        agent = jb.make_agent("nvldb-ucb-asym", preset="appendix")    # the same
    """
    if name not in DUELING_PRESETS:
        close = difflib.get_close_matches(name, list(DUELING_PRESETS), n=2, cutoff=0.4)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"unknown dueling preset {name!r}{hint} (known: "
                         f"{', '.join(DUELING_PRESETS)})")
    return dict(DUELING_PRESETS[name])


# ------------------------------------------------------------------------------------------------
# NVLDB / NLDB.


class NVLDBParams(struct.PyTreeNode):
    """The trained parameters of :class:`NVLDB`: ``theta`` ``(D,)``, the linear head, and
    ``net``, the feature map's ``W`` (an ``nnx.State``)."""

    theta: jax.Array
    net: nnx.State


def nvldb_utilities(network: FeatureNetwork, params: NVLDBParams, x: jax.Array):
    """``(f(x), phi(x))``: ``(K,)`` utilities ``theta^T phi`` and ``(K, D)`` features."""
    phi = network.apply(params.net, x)
    return phi @ params.theta, phi


def nvldb_data_loss(network: FeatureNetwork, params: NVLDBParams, x1: jax.Array,
                    x2: jax.Array, outcome: jax.Array, weight: jax.Array,
                    link: str = "btl") -> jax.Array:
    """The data term of :func:`nvldb_loss` on rows ``x1``, ``x2`` ``(N, d)``, ``outcome`` and
    ``weight`` ``(N,)``: ``sum_i w_i (-log g(s_i (f(x_i1) - f(x_i2))))``, ``s_i = 2 o_i - 1``
    (a row of weight 0 adds exactly 0 to it and to its gradient)."""
    delta = pair_difference(lambda x: nvldb_utilities(network, params, x)[0], x1, x2)
    return jnp.sum(weight * neg_log_preference((2.0 * outcome - 1.0) * delta, link))


def nvldb_loss(network: FeatureNetwork, params: NVLDBParams, theta0: jax.Array,
               buffer: DuelBuffer, reg, link: str = "btl") -> jax.Array:
    """The NVLDB loss (Oh et al. 2026, Eq. 4), a SUM over the stored pairs::

        L(theta, W) = sum_i -log g((2 o_i - 1) (f(x_i1) - f(x_i2))) / zeta_i^2
                      + reg / 2 ||theta - theta_0||^2

    with ``1 / zeta_i^2`` = ``buffer.weight`` (0 on empty rows); only ``theta`` is regularised.
    """
    data = nvldb_data_loss(network, params, buffer.x1, buffer.x2, buffer.outcome, buffer.weight,
                      link)
    return data + 0.5 * reg * jnp.sum((params.theta - theta0) ** 2)


def nvldb_gram(network: FeatureNetwork, net: nnx.State, buffer: DuelBuffer, reg,
               block_rows: int | None = None) -> jax.Array:
    """``V = reg I + sum_i w_i dphi_i dphi_i^T`` ``(D, D)`` over the stored pairs with the
    features of the network ``net``, ``dphi_i = phi(x_i1) - phi(x_i2)``, ``w_i = 1 /
    zeta_i^2`` (Oh et al. 2026, Eq. 6 rebuilt every round, as App. E.2 says)."""

    def block(x1, x2, o, w):
        dphi = pair_difference(lambda x: network.apply(net, x), x1, x2)
        return (dphi * w[:, None]).T @ dphi

    outer = duel_buffer_sum(block, buffer, block_rows)
    return outer + reg * jnp.eye(outer.shape[0], dtype=outer.dtype)


def nvldb_theta_newton(network: FeatureNetwork, params: NVLDBParams, theta0: jax.Array,
                       buffer: DuelBuffer, reg, link: str = "btl") -> jax.Array:
    """One Newton step on ``theta`` ``(D,)`` of :func:`nvldb_loss` with the feature map fixed
    (Oh et al. 2026, Alg. 1 line 10): ``theta - H^{-1} grad`` with, over the stored pairs,
    ``grad = sum_i w_i l'(z_i) dphi_i + reg (theta - theta_0)`` and ``H = sum_i w_i l''(z_i)
    dphi_i dphi_i^T + reg I``, ``z_i = theta^T dphi_i``, ``l(z) = -log g((2 o_i - 1) z)``."""
    theta = params.theta

    def row_loss(z, outcome):
        return neg_log_preference((2.0 * outcome - 1.0) * z, link)

    slope = jax.vmap(jax.grad(row_loss))
    curvature = jax.vmap(jax.grad(jax.grad(row_loss)))

    def block(x1, x2, o, w):
        dphi = pair_difference(lambda x: network.apply(params.net, x), x1, x2)
        z = dphi @ theta
        return (w * slope(z, o)) @ dphi, (dphi * (w * curvature(z, o))[:, None]).T @ dphi

    grad, hessian = duel_buffer_sum(block, buffer)
    eye = jnp.eye(theta.shape[0], dtype=theta.dtype)
    grad, hessian = grad + reg * (theta - theta0), hessian + reg * eye
    return theta - jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(hessian), grad)


class NVLDBState(struct.PyTreeNode):
    """State of :class:`NVLDB`.

    Attributes:
      params: ``theta`` ``(D,)`` and the feature map ``W`` (:class:`NVLDBParams`).
      theta0: ``(D,)`` the initial ``theta_0 ~ N(0, I / D)``, the regulariser's centre.
      opt_state: the Adam state, persistent across rounds (warm start; App. E.2 does not say).
      gram: ``(D, D)`` ``V``, ready for the next selection: rebuilt from the buffer with the
        current network after every update (``gram="recompute"``) or the rank-one sum of the
        selection-time ``dphi`` (``"incremental"``).
      buffer: the stored pairs with weights ``1 / zeta^2``.
    """

    params: NVLDBParams
    theta0: jax.Array
    opt_state: Any
    gram: jax.Array
    buffer: DuelBuffer


class NVLDB(_DuelingAgent):
    """NVLDB / NLDB: neural (variance-aware) dueling bandits with deep representation and
    shallow exploration (Oh et al. 2026, Alg. 1).

    The network is ``f(x) = theta^T phi(x; W)`` with ``phi(x; W) = sqrt(m) relu(W_L relu(...
    relu(W_1 x)))`` (``m`` = ``width``, ``L`` = ``depth``, ``D`` = ``feature_dim``, no biases;
    Eq. 2). Round t, with the network ``(theta_{t-1}, W_{t-1})``::

        u = Phi theta,  Phi = phi(X; W)  (K, D);   M = V^{-1}  (Cholesky)
        (k1, k2) = select_pair(rule, u, Phi, M, a)           (a = explore_scale)
        zeta_t = max(sigma_hat_t, eps),  sigma_hat_t^2 = g(u_k1 - u_k2) (1 - g(u_k1 - u_k2))
                 (variance="aware", NVLDB, Eq. 5; the selection-time network)  or 1 (NLDB)
        n Adam steps on  L = sum_{i<=t} -log g(s_i (f(x_i1) - f(x_i2))) / zeta_i^2
                             + lambda/2 ||theta - theta_0||^2
        V = lambda I + sum_{i<=t} dphi_i dphi_i^T / zeta_i^2

    with ``s_i = 2 o_i - 1``, ``lambda`` = ``reg``, ``n`` = ``num_grad_steps`` every
    ``update_every`` (H) rounds, ``dphi_i`` = ``phi(x_i1) - phi(x_i2)`` with the current ``W``
    (``gram="recompute"``, App. E.2) or frozen at selection time (``"incremental"``, Eq. 6).
    The six rules and their options (``forbid_self_duel``, ``candidates``, ``ts_csym``) are
    :func:`~jaxbandits.agents.duel_select.select_pair`'s.

    Defaults: the paper's main configuration (``width=100``, ``learning_rate=1e-3``, Sec. 6;
    :data:`DUELING_PRESETS` also has ``"appendix"``: 32, 1e-2), ``depth=3``, ``D = d``,
    ``reg=1``, ``n=20``, ``H=1``, ``a=1``, Adam with PyTorch's defaults warm-started with one
    persistent state, ``theta_0 ~ N(0, I/D)`` and PyTorch-Linear init of ``W`` (Eq. 3's symmetric
    init makes ``phi(x; W_0) = 0``), ``eps=0.1`` (not given by the paper, Eq. 5: a guess; report it
    with results) and ``forbid_self_duel=True`` (in our reimplementation of Oh et al. 2026's
    Listings 2-4, App. E.2, the listings' self-duels stop learning).

    Attributes:
      reg: lambda, of the loss and of ``V``.
      learning_rate: Adam's step size.
      explore_scale: a (``a_t``), the width multiplier.
      eps: epsilon > 0, the floor of ``zeta`` (variance-aware only; ``eps >= 1/2`` makes every
        ``zeta = eps``, and ``eps = 1`` is NLDB exactly).
      width: m (static).  depth: L >= 2, the number of weight matrices (static).
      feature_dim: D (static; None: the context dimension d, Eq. 2).
      feature_scale: multiply ``phi`` by ``sqrt(m)`` (static, Eq. 2).
      final_relu: ReLU after the feature layer (static, Eq. 2).
      net_init: ``"torch"`` (default) or ``"symmetric"`` (Eq. 3 on the doubled input ``[x;
        x] / sqrt 2``: ``phi(x; W_0) = 0``, so nothing trains; for theory checks only).
      num_grad_steps: n (static).  update_every: H, train every H rounds (static).
      reset_optimizer: start Adam afresh every training round (static).
      theta_refit: Newton steps on ``theta`` alone after each training round, ``W`` fixed
        (Alg. 1 line 10's "theta minimises Eq. 4 with W_t fixed", a convex D-dim weighted
        logistic ridge problem; App. E.2 skips it, so 0 by default) (static).
      buffer_size: pairs kept (static; see the module docstring).
      gram: ``"recompute"`` or ``"incremental"`` (static).
      link: ``"btl"`` (logistic) or ``"probit"``, the ``g`` of the loss and of ``sigma_hat``
        (static).
      rule: the pair-selection rule (static; the registered name's).
      variance: ``"aware"`` (NVLDB), ``"agnostic"`` (NLDB, ``zeta = 1``) or ``"oracle"``
        (Alg. 1 line 12's oracle: ``zeta = max(sigma, eps)`` with the true ``sigma^2 = p (1 -
        p)``, ``p`` the environment's ``P(k1 > k2)`` from ``Feedback.oracle``) (static).
      forbid_self_duel, candidates, ts_csym: :func:`select_pair`'s options (static).

    Example::

        agent = jb.make_agent("nvldb-ucb-asym", **jb.agents.dueling_preset("appendix"))
    """

    paper = "Oh et al. 2026, Alg. 1"
    #: ``make_agent("nvldb-ucb-asym", preset="appendix")``: the paper's two configurations.
    presets = types.MappingProxyType(DUELING_PRESETS)

    @property
    def name(self) -> str:  # type: ignore[override]
        """The registered name of this configuration: ``nvldb-{rule}`` (``nldb-{rule}`` for
        ``variance="agnostic"``)."""
        return f"{'nldb' if self.variance == 'agnostic' else 'nvldb'}-{self.rule}"

    reg: float = 1.0
    learning_rate: float = 1e-3
    explore_scale: float = 1.0
    eps: float = 0.1
    width: int = struct.field(pytree_node=False, default=100)
    depth: int = struct.field(pytree_node=False, default=3)
    feature_dim: int | None = struct.field(pytree_node=False, default=None)
    feature_scale: bool = struct.field(pytree_node=False, default=True)
    final_relu: bool = struct.field(pytree_node=False, default=True)
    net_init: str = struct.field(pytree_node=False, default="torch")
    num_grad_steps: int = struct.field(pytree_node=False, default=20)
    update_every: int = struct.field(pytree_node=False, default=1)
    reset_optimizer: bool = struct.field(pytree_node=False, default=False)
    theta_refit: int = struct.field(pytree_node=False, default=0)
    gram: str = struct.field(pytree_node=False, default="recompute")
    link: str = struct.field(pytree_node=False, default="btl")
    rule: str = struct.field(pytree_node=False, default="ucb-asym")
    variance: str = struct.field(pytree_node=False, default="aware")
    forbid_self_duel: bool = struct.field(pytree_node=False, default=True)
    candidates: str = struct.field(pytree_node=False, default="strict")
    ts_csym: str = struct.field(pytree_node=False, default="code")

    def validate(self) -> None:
        super().validate()
        check_rule(self.name or type(self).__name__, self.rule)
        check_positive(self, "eps")
        if self.theta_refit < 0:
            raise ValueError(f"{self.name}: theta_refit must be >= 0 (Newton steps), got "
                             f"{self.theta_refit!r}")
        if self.depth < 2:
            raise ValueError(f"{self.name}: depth must be >= 2 (weight matrices), got "
                             f"{self.depth!r}")
        if self.feature_dim is not None:
            check_positive(self, "feature_dim", integer=True)
        for field, choices in (("variance", VARIANCE_MODES), ("gram", GRAM_MODES),
                               ("link", LINKS), ("net_init", NVLDB_INITS),
                               ("candidates", CANDIDATE_MODES), ("ts_csym", TS_CSYM_FORMS)):
            check_choice(self, field, choices)
        if self.net_init == "symmetric" and self.width % 2:
            raise ValueError(f"{self.name}: width must be even for the symmetric init, got "
                             f"{self.width!r}")

    def network(self, dim: int) -> FeatureNetwork:
        """The static feature map ``phi`` for contexts of dimension ``dim``."""
        symmetric = self.net_init == "symmetric"
        return FeatureNetwork(in_features=dim, width=self.width, depth=self.depth,
                              out_features=self.feature_dim or dim, init_scheme=self.net_init,
                              scale_output=self.feature_scale, final_relu=self.final_relu,
                              double_input=symmetric)

    def init(self, key: jax.Array, spec: Spec) -> NVLDBState:
        key_net, key_theta = jax.random.split(key)
        network = self.network(spec.dim)
        num_features = network.out_features
        theta0 = jax.random.normal(key_theta, (num_features,), float_dtype())
        theta0 = theta0 / math.sqrt(num_features)
        params = NVLDBParams(theta=theta0, net=network.init(key_net))
        return NVLDBState(
            params=params,
            theta0=theta0,
            opt_state=optax.adam(self.learning_rate).init(params),
            gram=self.reg * jnp.eye(num_features, dtype=theta0.dtype),
            buffer=self._buffer_init(spec),
        )

    def act(self, state: NVLDBState, key: jax.Array, context: Context):
        network = self.network(context.arms.shape[-1])
        u, phi = nvldb_utilities(network, state.params, context.arms)
        factor = jax.scipy.linalg.cho_factor(state.gram)
        inv_gram = jax.scipy.linalg.cho_solve(factor, jnp.eye(phi.shape[-1], dtype=phi.dtype))
        pair = select_pair(self.rule, key, u, phi, inv_gram, self.explore_scale,
                           state.buffer.num_obs + 1, forbid_self_duel=self.forbid_self_duel,
                           candidates=self.candidates, ts_csym=self.ts_csym)
        return pair, state

    def pair_weight(self, delta: jax.Array, feedback: Feedback | None = None) -> jax.Array:
        """``1 / zeta^2`` of a pair whose selection-time utility gap is ``delta`` (and, for
        ``variance="oracle"``, whose true preference probability ``feedback`` carries)."""
        if self.variance == "agnostic":
            return jnp.ones_like(delta)
        if self.variance == "oracle":
            if feedback is None or "preference_prob" not in feedback.oracle:
                raise ValueError(f"{self.name}: variance='oracle' needs an environment whose "
                                 "feedback carries the true preference probability "
                                 "(Feedback.oracle['preference_prob'], as the dueling "
                                 "environments' does)")
            prob = jnp.asarray(feedback.oracle["preference_prob"], delta.dtype)
        else:
            prob = preference_prob(delta, self.link)
        sigma = jnp.sqrt(jnp.maximum(prob * (1.0 - prob), 0.0))
        return 1.0 / jnp.maximum(sigma, self.eps) ** 2

    def update(
        self,
        state: NVLDBState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> NVLDBState:
        network = self.network(context.arms.shape[-1])
        x1, x2 = context.arms[action[0]], context.arms[action[1]]
        u, phi = nvldb_utilities(network, state.params, jnp.stack([x1, x2]))  # selection time
        weight = self.pair_weight(u[0] - u[1], feedback)
        buffer = duel_buffer_add(state.buffer, x1, x2, feedback.reward, weight)
        train_now = buffer.num_obs % self.update_every == 0
        opt_state = state.opt_state
        if self.reset_optimizer:
            opt_state = optax.adam(self.learning_rate).init(state.params)
        params, opt_state = self._train(network, state.params, state.theta0, opt_state, buffer,
                                        jnp.where(train_now, self.num_grad_steps, 0))
        if self.theta_refit:
            theta = jax.lax.fori_loop(
                0, jnp.where(train_now, self.theta_refit, 0),
                lambda _, th: nvldb_theta_newton(network, params.replace(theta=th),
                                                 state.theta0, buffer, self.reg, self.link),
                params.theta)
            params = params.replace(theta=theta)
        if self.gram == "recompute":
            gram = nvldb_gram(network, params.net, buffer, self.reg)
        else:
            dphi = phi[0] - phi[1]
            gram = state.gram + weight * jnp.outer(dphi, dphi)
        return state.replace(params=params, opt_state=opt_state, gram=gram, buffer=buffer)

    def _train(self, network, params, theta0, opt_state, buffer, num_steps):
        """``num_steps`` full-batch Adam steps on :func:`nvldb_loss` from ``params``."""
        optimizer = optax.adam(self.learning_rate)

        def data_grad(p, x1, x2, o, w):
            return jax.grad(nvldb_data_loss, argnums=1)(network, p, x1, x2, o, w, self.link)

        def step(_, carry):
            p, opt = carry
            grad = duel_buffer_sum(lambda *rows: data_grad(p, *rows), buffer)
            grad = grad.replace(theta=grad.theta + self.reg * (p.theta - theta0))
            updates, opt = optimizer.update(grad, opt, p)
            return optax.apply_updates(p, updates), opt

        return jax.lax.fori_loop(0, num_steps, step, (params, opt_state))


# ------------------------------------------------------------------------------------------------
# The registered names: aliases that fix the rule (and the weighting), no classes of their own.

_RULE_SOURCES = {"asym": "Listing 2", "osym": "Listing 3", "csym": "Listing 4"}


def _register_rule(base: type[Agent], prefix: str, rule: str, variance: str | None = None):
    """Registers ``{prefix}-{rule}`` (``ndb-{kind}``) as ``base`` with ``rule`` (and
    ``variance``) set."""
    kind, form = rule.split("-")
    label = f"{prefix.upper()}-{kind.upper()}" + (f"-{form.upper()}" if variance else "")
    if base is NVLDB:
        weights = ("variance-aware weights 1/max(sigma_hat, eps)^2" if variance == "aware"
                   else "unweighted (zeta = 1)")
        description = (f"{label}: neural dueling, {rule} pairs on last-layer features, "
                       f"{weights}")
        return register_alias(f"{prefix}-{rule}", NVLDB, {"rule": rule, "variance": variance},
                              description=description)
    description = f"{label}: neural dueling, greedy k1, {kind.upper()} k2 on full gradients"
    return register_alias(f"{prefix}-{kind}", NDB, {"rule": rule}, description=description)


for _prefix, _variance in (("nvldb", "aware"), ("nldb", "agnostic")):
    for _rule in ("ucb-asym", "ts-asym", "ucb-osym", "ts-osym", "ucb-csym", "ts-csym"):
        _register_rule(NVLDB, _prefix, _rule, _variance)
for _rule in ("ucb-asym", "ts-asym"):
    _register_rule(NDB, "ndb", _rule)
