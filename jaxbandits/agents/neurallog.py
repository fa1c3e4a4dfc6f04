"""Neural logistic bandits (Bae & Lee 2025): NeuralLog-UCB-1/2, NeuralLog-TS-1/2 and the
NCBF-UCB baseline, on Bernoulli rewards ``r ~ Bernoulli(mu(h(x)))``, ``mu = sigmoid``.

All five share one template (Bae & Lee 2025, App. A), written once in :class:`NeuralLogAgent`::

    round t:  for each arm k:  f_k = f(x_k; theta_{t-1}),  u_k = the arm's gradient feature
              index_k = mean_k + nu * w_{t-1} * ||u_k||_{A_{t-1}^{-1}}          (UCB)
              index_k ~ N(f_k or the linearised mean, (nu * w_{t-1} * ||u_k||_{A^{-1}})^2)  (TS)
              play argmax_k index_k; observe r_t
              every ``update_every`` rounds: theta <- GD on sum_i BCE(r_i, f(x_i; theta)) + pen.
              A <- A + omega u_a u_a^T,  omega = 1 (V-type) or mu'(f(x_a; theta_t)) (W-type)

and differ only in a few switches (``nu`` = ``explore_scale``, ``R = 1/4``, ``nu^_t`` below):

===============  ==========================  ========================  ======================
agent            mean                        matrix A: offset, weight  width w
===============  ==========================  ========================  ======================
neurallog-ucb-1  ``mu(f)``                   V: ``kappa lam``, 1       ``R sqrt(kappa) nu_t``
neurallog-ucb-2  ``f`` (theory: linearised)  W: ``lam``, ``mu'(f)``    ``nu_t``
neurallog-ts-1   draw around ``f``           V                         ``sqrt(kappa) nu_t``
neurallog-ts-2   draw around ``f`` (lin.)    W                         ``nu_t``
ncbf-ucb         ``f``                       V                         Verma's (``NCBFUCB``)
===============  ==========================  ========================  ======================

Two modes (static ``mode``):

* ``"practical"`` (default; what the paper's experiments ran, Bae & Lee 2025, Sec. 7, App. A): the
  current gradient ``u = g(x; theta_{t-1})`` (not divided by ``sqrt m``), a fixed ``lam`` =
  ``reg``, the loss ``sum BCE + lam ||theta||^2`` (warm-started GD), diagonal matrices, and
  ``nu^_t = (1 + sqrt(L) S + L S^2) iota^_t + 1`` with ``iota^_t = sqrt(d~_t l_t) + l_t /
  sqrt(lam)``, ``l_t = log(4 t^2 / delta)``, ``d~_t = log det(I + R sum_s u_s u_s^T)`` over the
  chosen arms (NCBF: ``(1/kappa) sum u u^T``). ``include_logs=False`` drops the ``l_t``.
* ``"theory"`` (the algorithm boxes, Bae & Lee 2025, Secs. 4-5): the NTK feature ``u = phi(x) =
  g(x; theta_0) / sqrt m``, the data-adaptive ``lam_t`` of Eq. 3 (clamped at ``lam_0``: the paper's
  claim ``lam_0 <= lam_t`` fails) in both the matrix and the loss ``sum BCE + m lam_t / 2 ||theta -
  theta_0||^2`` (GD restarted at ``theta_0``, as in the proof), and the widths ``nu^(1)_t``,
  ``nu^(2)_t`` of Eqs. 1-2 (constants ``C1`` = ``c_grad``, ``C6 = C7`` = ``c_conf``); UCB-2 and TS-2
  rank by the linearisation ``g(x; theta_0)^T (theta_{t-1} - theta_0)``. The box's rule is
  ``explore_scale = 1``; it trains every ``update_every`` rounds (the box: every round,
  ``update_every=1``). NCBF-UCB's theory mode is Verma et al.'s: ``phi`` features, fixed ``lam``,
  ``m lam / 2 ||theta - theta_0||^2`` and ``d~ = log det(I + sum phi phi^T / (kappa lam))``.

In both modes every statistic uses the rounds before t (``nu_{t-1}``, ``A_{t-1}``), the matrix
and ``d~`` move every round, the matrix row is the chosen arm's selection-time feature
``g(x; theta_{t-1})`` (our reading of Alg. 2's inputs), and the W weight uses the network right
after the round's (possible) training. ``kappa`` enters only the V-type agents and NCBF-UCB: with
everything else fixed, the actions of ``neurallog-ucb-2`` and ``neurallog-ts-2`` do not depend on it
(tested). With ``explore_scale = 0`` every agent is greedy on its mean (tested).

Data: a ring buffer of the last ``buffer_size`` observations (default 2000, the paper's horizon:
exact for T <= 2000; the synthetic and real settings show new arms every round), or per-arm
statistics for a fixed arm set (``buffer_size=None``). Network (Bae & Lee 2025, App. A): the
bias-free ReLU MLP of :class:`~jaxbandits.nets.Network` with ``L = 2``, ``m = 20``, the symmetric
init on the doubled input ``[x; x] / sqrt 2`` (so ``f(x; theta_0) = 0``, Assumption 4.2; the
experiments do not say); training by :func:`~jaxbandits.nets.net_gd` with ``num_grad_steps = 100``
steps of ``learning_rate = 0.01`` every 50 rounds, on the ``"mean"`` reduction (step ``0.01 / n`` on
the summed loss: the step 0.01 on the sum diverges).

``nu`` and ``lam`` were grid-searched over {0.01, 0.1, 1, 10, 100} in the paper, whose picks are
not reported. With the widths above (our reconstruction from App. A) ``nu = 0.01`` already
explores far too much (``nu^_t`` is in the hundreds: ``d~_t`` sums ``log(1 + R Q_j)`` over all
p parameters), so the defaults come from a pilot on a finer grid (see :class:`NeuralLogAgent`):
``lam = 1`` and ``nu = 1e-4`` (UCB-1, TS-1, TS-2), ``3e-4`` (UCB-2), ``1e-3`` (NCBF-UCB). Tune
them for the problem at hand with ``jb.sweep`` (one compilation for the whole grid).
"""

from __future__ import annotations

import math
from typing import ClassVar

import jax
import jax.numpy as jnp
from flax import nnx, struct
from jax.flatten_util import ravel_pytree

from jaxbandits.agents.glm import LOGISTIC_SLOPE_BOUND
from jaxbandits.agents.neural import NeuralAgent
from jaxbandits.agents.neurallog_schedules import (
    confidence_factor,
    log_term,  # noqa: F401  (its old import path)
    neurallog_lambda0,
    neurallog_schedule,
    practical_radius,
)
from jaxbandits.core import (
    Context,
    Feedback,
    Spec,
    check_choice,
    check_positive,
    check_probability,
    float_dtype,
)
from jaxbandits.linalg import GLMData, RidgeState, glm_data_add, link_mean, link_slope
from jaxbandits.nets import (
    DESIGNS,
    Network,
    design_init,
    design_logdet,
    design_update,
    design_widths,
    net_gd,
)
from jaxbandits.registry import register_agent

__all__ = [
    "MODES",
    "NCBFUCB",
    "NeuralLogAgent",
    "NeuralLogState",
    "NeuralLogTS1",
    "NeuralLogTS2",
    "NeuralLogUCB1",
    "NeuralLogUCB2",
    "confidence_factor",
    "neurallog_lambda0",
    "neurallog_schedule",
    "practical_radius",
]

MODES: tuple[str, ...] = ("practical", "theory")
R = LOGISTIC_SLOPE_BOUND  # the sigmoid's Lipschitz constant, 1/4


# ------------------------------------------------------------------------------------------------
# The shared agent.


class NeuralLogState(struct.PyTreeNode):
    """State of every :class:`NeuralLogAgent`.

    Attributes:
      params: the network parameters ``theta_t``.
      anchor: the initialisation ``theta_0`` (theory: the NTK features' point, the loss's centre
        and every training's start).
      design: the exploration matrix. Practical: ``A = offset I + sum omega u u^T`` itself (its
        diagonal ``(p,)``, or a :class:`~jaxbandits.linalg.RidgeState` square root of
        ``A^{-1}`` with ``design="full"``). Theory: the weighted Gram ``G = sum omega phi
        phi^T`` (diagonal ``(p,)`` or full ``(p, p)``) without the offset, since ``lam_t``
        moves every round and ``A_t = G_t + offset_t I`` is formed when needed.
      info: the running effective dimension's matrix ``I / c + sum u u^T`` (same layout as a
        practical ``design``), so that ``d~ = log det(I + c sum u u^T)`` (theory: ``D_t``).
      data: the rows the network is trained on (a ring buffer or per-arm statistics).
      order: ``(K,)`` int32, the warm-up order (only used with ``warmup > 0``).
    """

    params: nnx.State
    anchor: nnx.State
    design: jax.Array | object
    info: jax.Array | object
    data: GLMData
    order: jax.Array


class NeuralLogAgent(NeuralAgent):
    """The template shared by the neural logistic bandits (see the module docstring).

    Subclasses set three class-level switches and their width:

    * ``rule``: ``"ucb"`` (the index) or ``"ts"`` (an independent Gaussian draw per arm);
    * ``mean_link``: ``"logistic"`` (rank ``mu(f)``, UCB-1) or ``"identity"`` (rank ``f``);
    * ``weighted``: W-type (offset ``lam``, weight ``mu'(f(x_a; theta_t))``) instead of V-type
      (offset ``kappa lam``, weight 1); a weighted agent in theory mode ranks by the
      linearisation ``g(x; theta_0)^T (theta - theta_0)`` (Algorithm 2);
    * :meth:`kappa_factor` (the width is ``kappa_factor * nu_t``) or :meth:`width_at` itself.

    Attributes (beyond :class:`~jaxbandits.agents.NeuralAgent`'s ``reg`` (lam),
    ``learning_rate``, ``width`` (m), ``depth`` (L), ``num_grad_steps`` (J), ``update_every``,
    ``warmup``, ``buffer_size``, ...):
      explore_scale: nu, the multiplier of the width (1 for the literal theory boxes).
      kappa: the assumed ``1 / inf mu'``; a constant (10 in the paper), never estimated.
      param_bound: S.  delta: the confidence level delta.
      c_grad: C1 of Lemma C.4 (theory mode).  c_conf: C6 (UCB-1, TS-1) or C7 (UCB-2, TS-2).
      mode: ``"practical"`` or ``"theory"`` (static).
      design: ``"diag"`` (the paper's) or ``"full"`` matrices (static).
      include_logs: keep the ``l_t`` factors of the practical ``nu^_t`` (static).

    Defaults are the paper's (Sec. 7, App. A; S = 1, kappa = 10, L = 2, m = 20, diagonal matrices,
    100 GD steps at 0.01 every 50 rounds) with delta = 0.05 and C = 1 (values the paper does not
    give). ``nu`` and ``lam`` come from a pilot on ``neurallog-synthetic`` (d = 8, K = 5, pool 2500,
    T = 1000, 8 runs, key 0; uniform random play: 440 / 149 / 107 on h3 / h4 / h1). ``lam`` in {0.1,
    1} tie and 10 is worse (UCB-2). Final regret on h3 / h4 / h1 for ``nu`` = 0, 1e-4, 3e-4, 1e-3,
    1e-2:

    * UCB-2: 151/63/69, 138/65/51, 139/65/50, 139/67/50, 270/94/73;
    * UCB-1: 165/64/65, 137/68/53, 137/67/53, 146/73/53, 334/114/80;
    * TS-1: 151/63/69, 156/59/61, 163/66/65, 245/89/89, 410/137/104;
    * TS-2: 151/63/69, 156/61/60, 162/66/65, 218/88/80, 402/136/104;
    * NCBF-UCB: 151/63/69, 138/67/55, 136/67/54, 137/67/52, 149/67/51.

    (At ``nu = 0`` all five are the same greedy algorithm; UCB-1 differs there only because in
    float32 ``mu`` merges values of ``f`` closer than about 1e-7 near 0 and saturates to 1 above
    ``f = 17``, and ties go to the lowest index.)
    """

    rule: ClassVar[str] = "ucb"
    mean_link: ClassVar[str] = "identity"
    weighted: ClassVar[bool] = False

    @property
    def model_family(self) -> str:
        """``"neural-logistic"``: a logistic-link model of rewards in [0, 1], so the default
        agent set of ``jaxbandits run`` has them only on environments with such rewards."""
        return "neural-logistic"

    explore_scale: float = 1e-4
    kappa: float = 10.0
    param_bound: float = 1.0
    delta: float = 0.05
    c_grad: float = 1.0
    c_conf: float = 1.0
    warmup: int = 0
    width: int = struct.field(pytree_node=False, default=20)
    depth: int = struct.field(pytree_node=False, default=2)
    double_input: bool = struct.field(pytree_node=False, default=True)
    update_every: int = struct.field(pytree_node=False, default=50)
    buffer_size: int | None = struct.field(pytree_node=False, default=2000)
    mode: str = struct.field(pytree_node=False, default="practical")
    design: str = struct.field(pytree_node=False, default="diag")
    include_logs: bool = struct.field(pytree_node=False, default=True)

    def validate(self) -> None:
        super().validate()
        check_choice(self, "mode", MODES)
        check_choice(self, "design", DESIGNS)
        for name in ("kappa", "param_bound", "c_grad", "c_conf"):
            check_positive(self, name)
        check_probability(self, "delta")

    # -- the switches subclasses set ---------------------------------------------------------

    def kappa_factor(self) -> jax.Array | float:
        """The width's factor in front of ``nu_t``: ``R sqrt(kappa)``, ``sqrt(kappa)`` or 1."""
        return 1.0

    def width_at(self, info, num_obs: jax.Array) -> jax.Array:
        """``w_t``, the width before ``nu`` after ``t`` = ``num_obs`` observations (a scalar)."""
        if self.mode == "theory":
            _, iota = neurallog_schedule(self.effective_dim(info), num_obs, self.depth,
                                         self.param_bound, self.delta, self.c_grad)
            nu = self.c_conf * confidence_factor(self.depth, self.param_bound) * iota + 1.0
        else:
            nu = practical_radius(self.effective_dim(info), num_obs, self.reg, self.depth,
                                  self.param_bound, self.delta, self.include_logs)
        return self.kappa_factor() * nu

    def info_scale(self):
        """``c`` of the running ``d~ = log det(I + c sum u u^T)``: ``R`` (practical), ``R /
        lam_0`` (theory: ``D_t`` of Eq. 2)."""
        if self.mode == "theory":
            return R / neurallog_lambda0(self.depth, self.param_bound, self.delta, self.c_grad)
        return R

    def reg_at(self, info, num_obs: jax.Array) -> jax.Array:
        """The ``lam`` of the matrix and the loss after ``num_obs`` observations: ``reg``
        (practical) or the theory schedule's ``lam_t``."""
        if self.mode == "theory":
            return neurallog_schedule(self.effective_dim(info), num_obs, self.depth,
                                      self.param_bound, self.delta, self.c_grad)[0]
        return jnp.asarray(self.reg, float_dtype())

    # -- shared machinery --------------------------------------------------------------------

    def effective_dim(self, info) -> jax.Array:
        """The running ``d~ = log det(I + c sum_s u_s u_s^T)`` from the ``info`` matrix (clamped
        at 0 against the round-off of subtracting ``p log(1/c)``)."""
        return jnp.maximum(design_logdet(info) - self._info_shift(info), 0.0)

    def _info_shift(self, info) -> jax.Array:
        num_params = (info.mean if isinstance(info, RidgeState) else info).shape[-1]
        return num_params * jnp.log(1.0 / jnp.asarray(self.info_scale(), float_dtype()))

    def _offset(self, reg) -> jax.Array:
        return reg if self.weighted else self.kappa * reg

    def init(self, key: jax.Array, spec: Spec) -> NeuralLogState:
        key_net, key_order = jax.random.split(key)
        network = self.network(spec.dim)
        theta0 = network.init(key_net)
        p = network.num_params
        if self.mode == "theory":
            shape = (p, p) if self.design == "full" else (p,)
            design = jnp.zeros(shape, float_dtype())
        else:
            design = design_init(p, self._offset(jnp.asarray(self.reg, float_dtype())),
                                 self.design)
        return NeuralLogState(
            params=theta0,
            anchor=theta0,
            design=design,
            info=design_init(p, 1.0 / jnp.asarray(self.info_scale(), float_dtype()),
                             self.design),
            data=self._data_init(spec),
            order=self._warmup_order(key_order, spec),
        )

    def _features(self, network: Network, state: NeuralLogState, arms: jax.Array):
        """``(mean (K,), u (K, p))``: the ranking mean and the gradient features."""
        if self.mode == "practical":
            f, g = network.features(state.params, arms)
            return link_mean(f, self.mean_link), g
        _, g0 = network.features(state.anchor, arms)
        if self.weighted:  # Algorithm 2: g(x; theta_0)^T (theta - theta_0), literally (no f0)
            mean = g0 @ (ravel_pytree(state.params)[0] - ravel_pytree(state.anchor)[0])
        else:
            mean = link_mean(network.apply(state.params, arms), self.mean_link)
        return mean, g0 / math.sqrt(self.width)

    def _widths(self, design, u: jax.Array, offset: jax.Array) -> jax.Array:
        """``||u_k||_{A^{-1}}`` ``(K,)``; theory forms ``A = G + offset I`` on the fly."""
        if self.mode == "practical":
            return design_widths(design, u)
        if self.design == "diag":
            return design_widths(design + offset, u)
        eye = jnp.eye(design.shape[-1], dtype=design.dtype)
        chol = jnp.linalg.cholesky(design + offset * eye)
        solved = jax.scipy.linalg.solve_triangular(chol, u.T, lower=True)
        return jnp.sqrt(jnp.sum(solved * solved, axis=0))

    def scores(self, state: NeuralLogState, key: jax.Array, context: Context) -> jax.Array:
        """The index of each arm, ``(K,)`` for ``context.arms`` ``(K, d)`` (a draw for the TS
        agents)."""
        arms = context.arms
        network = self.network(arms.shape[-1])
        mean, u = self._features(network, state, arms)
        num_obs = state.data.num_obs
        offset = self._offset(self.reg_at(state.info, num_obs))
        bonus = (self.explore_scale * self.width_at(state.info, num_obs)
                 * self._widths(state.design, u, offset))
        if self.rule == "ts":
            return mean + bonus * jax.random.normal(key, mean.shape, mean.dtype)
        return mean + bonus

    def act(self, state: NeuralLogState, key: jax.Array, context: Context):
        scores = self.scores(state, key, context)
        return self._select(scores, state.order, state.data.num_obs), state

    def update(
        self,
        state: NeuralLogState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> NeuralLogState:
        arms = context.arms
        network = self.network(arms.shape[-1])
        x = arms[action]
        if self.mode == "practical":  # selection-time gradient g(x_a; theta_{t-1}), Alg. 2's input
            u = network.gradient(state.params, x)
        else:
            u = network.gradient(state.anchor, x) / math.sqrt(self.width)
        info = design_update(state.info, u)
        data, _ = glm_data_add(state.data, arms, action, feedback.reward, state.data.per_arm)
        reg = self.reg_at(info, data.num_obs)  # theory: lam_t uses D_t, which includes u_t
        active = self._train_now(data.num_obs, arms.shape[0])
        params = self._train(network, state, data, reg, active)
        weight = link_slope(network.apply(params, x), "logistic") if self.weighted else 1.0
        return state.replace(params=params, design=self._design_add(state.design, u, weight),
                             info=info, data=data)

    def _train(self, network: Network, state: NeuralLogState, data: GLMData, reg, active):
        """``num_grad_steps`` GD steps on ``sum BCE + penalty`` where ``active``; practical:
        ``lam ||theta||^2`` from the current theta; theory: ``m lam_t / 2 ||theta -
        theta_0||^2`` from ``theta_0``."""
        if self.mode == "practical":
            start, anchor, coef = state.params, jax.tree.map(jnp.zeros_like, state.anchor), 2 * reg
        else:
            start = jax.tree.map(lambda a, p: jnp.where(active, a, p), state.anchor, state.params)
            anchor, coef = state.anchor, self.width * reg
        return net_gd(network, start, anchor, data.features, data.counts, data.rewards, coef,
                      learning_rate=self.learning_rate,
                      num_steps=jnp.where(active, self.num_grad_steps, 0),
                      reduction=self.loss_reduction, link="logistic",
                      num_rows=self._filled_rows(data))

    def _design_add(self, design, u: jax.Array, weight):
        if self.mode == "practical":
            return design_update(design, jnp.sqrt(weight) * u)
        if self.design == "diag":
            return design + weight * u * u
        return design + weight * jnp.outer(u, u)


# ------------------------------------------------------------------------------------------------
# The five agents.


@register_agent
class NeuralLogUCB1(NeuralLogAgent):
    """NeuralLog-UCB-1 (Bae & Lee, Bae & Lee 2025, Alg. 1)::

        a_t = argmax_k mu(f(x_k; theta_{t-1})) + nu R sqrt(kappa) nu_{t-1} ||u_k||_{V_{t-1}^{-1}}
        V_t = kappa lam I + sum_{i<=t} u_i u_i^T

    Theory: ``u = g(x; theta_0) / sqrt m``, ``lam = lam_t`` and ``nu_t = nu^(1)_t = C6 (1 +
    sqrt(L) S + L S^2) iota_t + 1`` (Eqs. 1-3); practical: ``u = g(x; theta_{t-1})``, fixed
    ``lam``, ``nu^_t`` as above, diagonal V. The bonus is on the mean's (mu) scale.

    Example::

        agent = jb.make_agent("neurallog-ucb-1", explore_scale=0.01, reg=1.0)
    """

    name = "neurallog-ucb-1"
    description = "NeuralLog-UCB-1: mu(f) + nu R sqrt(kappa) nu_t ||g||_{V^-1} (V-type design)"
    paper = "Bae & Lee 2025, Alg. 1"
    family = "neural"
    action_kinds = ("index",)

    mean_link: ClassVar[str] = "logistic"

    def kappa_factor(self):
        return R * jnp.sqrt(self.kappa)


@register_agent
class NeuralLogUCB2(NeuralLogAgent):
    """NeuralLog-UCB-2 (Bae & Lee, Bae & Lee 2025, Alg. 2), the variance-weighted refinement::

        a_t = argmax_k g(x_k; theta_0)^T (theta_{t-1} - theta_0) + nu nu_{t-1} ||u_k||_{W^{-1}}
        W_t = lam I + sum_{i<=t} mu'(f(x_i; theta_i)) u_i u_i^T

    the closed form of optimism over ``{theta : sqrt(m) ||theta - theta_{t-1}||_W <= nu}``
    (Eq. 5), with ``theta_i`` the network right after round i's training. Theory: ``u =
    g(x; theta_0) / sqrt m``, ``lam_t``, ``nu^(2)_t`` (C7); practical: ``u = g(x;
    theta_{t-1})``, fixed ``lam``, ``nu^_t``, diagonal W, and the mean ``f(x; theta_{t-1})``
    (the linearisation's first-order equivalent since ``f(x; theta_0) = 0``; App. A). No ``kappa``
    anywhere: its actions do not change with ``kappa`` (tested).

    Example::

        agent = jb.make_agent("neurallog-ucb-2", mode="theory", explore_scale=1.0)
    """

    name = "neurallog-ucb-2"
    description = "NeuralLog-UCB-2: f + nu nu_t ||g||_{W^-1}, W weighted by mu'(f) (no kappa)"
    paper = "Bae & Lee 2025, Alg. 2"
    family = "neural"
    action_kinds = ("index",)

    weighted: ClassVar[bool] = True

    explore_scale: float = 3e-4


@register_agent
class NeuralLogTS1(NeuralLogAgent):
    """NeuralLog-TS-1 (Bae & Lee, Bae & Lee 2025, Appendix I): NeuralUCB-1's state, with an
    independent latent-scale draw per arm::

        r_k ~ N(f(x_k; theta_{t-1}), (nu sqrt(kappa) nu_{t-1} ||u_k||_{V_{t-1}^{-1}})^2)

    i.e. ``nu_T sigma_{t-1}(x)`` with ``sigma^2 = kappa lam ||u||^2_{V^{-1}}`` and ``nu_t =
    nu^(1)_t / sqrt(lam_t)``, made anytime (``nu_{t-1}`` for ``nu_T``): UCB-1's width
    without R.
    """

    name = "neurallog-ts-1"
    description = "NeuralLog-TS-1: per-arm N(f, (nu sqrt(kappa) nu_t ||g||_{V^-1})^2) draws"
    paper = "Bae & Lee 2025, App. I"
    family = "neural"
    action_kinds = ("index",)

    rule: ClassVar[str] = "ts"

    def kappa_factor(self):
        return jnp.sqrt(self.kappa)


@register_agent
class NeuralLogTS2(NeuralLogAgent):
    """NeuralLog-TS-2 (Bae & Lee, Bae & Lee 2025, Remark I.2 and Appendix J): NeuralLog-UCB-2's
    state,
    with an independent draw per arm whose standard deviation is UCB-2's bonus::

        r_k ~ N(mean_k, (nu nu_{t-1} ||u_k||_{W_{t-1}^{-1}})^2)

    (the Remark's unsquared norm read as squared and its indices aligned); ``mean_k`` is the
    linearisation (theory) or ``f(x_k; theta_{t-1})`` (practical). No ``kappa`` anywhere.
    """

    name = "neurallog-ts-2"
    description = "NeuralLog-TS-2: per-arm N(f, (nu nu_t ||g||_{W^-1})^2) draws (no kappa)"
    paper = "Bae & Lee 2025, Remark I.2, App. J"
    family = "neural"
    action_kinds = ("index",)

    rule: ClassVar[str] = "ts"
    weighted: ClassVar[bool] = True


@register_agent
class NCBFUCB(NeuralLogAgent):
    """NCBF-UCB (Verma et al. 2024; baseline (1) of Bae & Lee 2025, Sec. 7)::

        a_t = argmax_k f(x_k; theta_{t-1}) + nu w_{t-1} ||u_k||_{V_{t-1}^{-1}}
        w_t = kappa sqrt(d~_t + 2 log(1/delta)) + S sqrt(kappa lam) + 1
        V_t = kappa lam I + sum u u^T,   d~_t = log det(I + c sum u u^T)

    (Verma's ``nu_T sigma_{t-1}`` in ``V^{-1}``-norm units, made anytime with the running
    ``d~``). Practical: ``u = g(x; theta_{t-1})``, ``c = 1/kappa`` (the paper's running d~ for
    (1)), ``lam ||theta||^2``; theory: ``u = g(x; theta_0) / sqrt m``, ``c = 1 / (kappa lam)``
    and ``m lam / 2 ||theta - theta_0||^2`` from ``theta_0`` with a fixed ``lam``.
    """

    name = "ncbf-ucb"
    description = "NCBF-UCB: f + nu (kappa sqrt(d~ + 2 log 1/delta) + ...) ||g||_{V^-1}"
    paper = "Verma et al. 2024; baseline of Bae & Lee 2025, Sec. 7"
    family = "neural"
    action_kinds = ("index",)

    explore_scale: float = 1e-3

    def info_scale(self):
        if self.mode == "theory":
            return 1.0 / (self.kappa * self.reg)
        return 1.0 / self.kappa

    def reg_at(self, info, num_obs):
        return jnp.asarray(self.reg, float_dtype())

    def width_at(self, info, num_obs):
        dtilde = self.effective_dim(info)
        return (self.kappa * jnp.sqrt(dtilde + 2.0 * jnp.log(1.0 / self.delta))
                + self.param_bound * jnp.sqrt(self.kappa * self.reg) + 1.0)
