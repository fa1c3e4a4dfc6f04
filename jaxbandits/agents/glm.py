"""GLM bandits: GLM-ES (Sun et al. 2025) and the GLM baselines of Sun et al. 2025 and Bae & Lee
2025.

All of them fit the regularised GLM loss of :mod:`jaxbandits.linalg.glm` (``mu = sigmoid`` by
default) on fixed-shape data:

* with a fixed arm set (``spec.fixed_arms``, ``buffer_size=None``), **per-arm statistics**: pull
  counts ``n_k`` and reward sums ``s_k`` -- exact, O(K d) per gradient whatever t;
* with changing contexts, a **ring buffer** of the last B observations and a validity mask
  (exact while ``t <= B``, a sliding window afterwards): ``buffer_size=B``, or by itself with
  ``buffer_size=None`` a buffer of ``AUTO_BUFFER`` = 2,000 rows (``make_agent(name, env=env,
  horizon=T)`` sizes it to ``min(T, 2000)``).

and share two solvers (static ``solver``): ``"gd"``, ``num_grad_steps`` warm-started gradient
steps of ``learning_rate`` on the mean-normalised loss (Sun et al. 2025, Sec. 7.2's "100 GD steps of
0.01" diverge on the sum loss; ``loss_reduction="sum"`` is the literal sum-loss reading), and
``"newton"``, damped Newton to round-off (at most ``newton_steps`` steps; the exact argmin). The
agents of Sun et al. 2025 warm up with ``warmup`` pulls of the rounded G-optimal design
(:mod:`jaxbandits.linalg.design`, Sun et al. 2025, Algs. 2-3): the design is solved on the first
round, and each warm-up round pulls an arm with probability proportional to its remaining count,
which plays a uniformly random permutation of the rounded multiset (the paper leaves the order
open). The fit starts once the warm-up is over, from 0, and is warm-started afterwards (Sec. 4.1).

* ``glm-es`` (:class:`GLMES`): m members, each the GLM fit on its own perturbed history
  ``(x_l, y_l + Z_l^j)``, ``Z_l^j`` drawn once per (member, data point) (Sun et al. 2025, Alg. 1).
* ``ucb-glm`` (:class:`UCBGLM`, Li et al. 2017): ``argmax x^T theta + alpha ||x||_{V^{-1}}``.
* ``glm-tsl`` (:class:`GLMTSL`, Kveton et al. 2020): ``theta ~ N(theta_MLE, a^2 H^{-1})``.
* ``logistic-ucb-1`` (:class:`LogisticUCB1`, Faury et al. 2020) and ``ada-ofu-ecolog``
  (:class:`AdaOFUECOLog`, Faury et al. 2022), as Bae & Lee 2025 run them (Sec. 7, App. A):
  ``argmax mu(x^T theta) + nu w_t ||x||_{V^{-1}}``, trained every ``update_every`` rounds.

A round in which no run trains (a warm-up round, a round between two training rounds) runs no
solver step at all, also under ``vmap``: the step count is a loop bound, and a batched loop runs
only as long as some run needs it. Every run shares the same schedule, so those rounds are free.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.agents.ensembles import member_reward_noise
from jaxbandits.agents.glm_base import (
    LOGISTIC_SLOPE_BOUND,
    SOLVERS,
    GLMAgent,
)
from jaxbandits.agents.select import chosen_features, greedy_index, num_active_members
from jaxbandits.core import (
    Context,
    Feedback,
    Spec,
)
from jaxbandits.linalg import (
    GLMData,
    RidgeState,
    glm_data_accumulate,
    glm_hessian,
    link_mean,
    link_slope,
    ridge_init,
    ridge_update,
    ridge_widths,
)
from jaxbandits.registry import register_agent

__all__ = [
    "SOLVERS",
    "AdaOFUECOLog",
    "GLMES",
    "GLMESState",
    "GLMTSL",
    "GLMTSLState",
    "GLMAgent",
    "LogisticUCB1",
    "LogisticUCBState",
    "UCBGLM",
    "UCBGLMState",
]

# ------------------------------------------------------------------------------------------------
# GLM-ES.


class GLMESState(struct.PyTreeNode):
    """State of :class:`GLMES`.

    Attributes:
      theta: ``(m, d)`` the members' estimates ``theta_t^j``.
      data: the unperturbed rows (per-arm counts and reward sums, or a buffer).
      perturb_sums: ``(m, N)`` per row, the sum of member j's perturbations ``Z_l^j`` (per-arm:
        ``P^j_k = sum_{l: a_l = k} Z_l^j``; buffer: the row's ``Z_l^j``).
      remaining: ``(K,)`` int32, warm-up pulls left per arm.
      noise_key: the key of the perturbation table (shared with ``lin-es``): ``Z_l^j =
        perturb_std * member_reward_noise(noise_key, j, l)``.
    """

    theta: jax.Array
    data: GLMData
    perturb_sums: jax.Array
    remaining: jax.Array
    noise_key: jax.Array


@register_agent
class GLMES(GLMAgent):
    """GLM ensemble sampling (Sun et al. 2025, Alg. 1 with the GLM loss, Sec. 4.2).

    After ``tau`` = ``warmup`` rounds of the rounded G-optimal design, member ``j`` of
    ``m`` = ``ensemble_size`` is the regularised MLE on its perturbed history::

        theta_t^j = argmin_theta  reg/2 ||theta||^2
                                  - sum_{l<=t} [(Y_l + Z_l^j) X_l^T theta - b(X_l^T theta)]

    with ``Z_l^j ~ N(0, sigma_R^2)``, sigma_R = ``perturb_std``, drawn once when ``(X_l, Y_l)``
    arrives (the warm-up data are perturbed too, as in the proofs of App. A) and never redrawn.
    Round t plays
    ``argmax_k x_k^T theta_{t-1}^{j_t}`` with ``j_t`` uniform over the first ``active_members``
    members (all when 0). With per-arm statistics the data enter only through ``n_k`` and
    ``s_k^j = sum_{l: a_l = k} (Y_l + Z_l^j)``, so a round costs O(m J K d) (``gd``) or
    O(m iters (K d^2 + d^3)) (``newton``), flat in t.

    Defaults are the paper's logistic-bandit setting (Sec. 7.2): ``m = 10``, ``sigma_R = 0.1``,
    ``lambda = 1``, ``tau = 500``, 100 gd steps of 0.01 (on the mean loss, warm-started).
    With the identity link and ``solver="newton"`` this is Lin-ES without initial perturbation
    (``lin-es`` with ``init_perturbation=False``), pathwise, given the same init key.

    Attributes (beyond :class:`GLMAgent`'s):
      perturb_std: sigma_R.  ensemble_size: m (static).
      active_members: how many of the m members ``j_t`` is drawn from (0: all); the anytime
        wrapper sets it per epoch (``m_e``), and a sweep over it runs several ensemble sizes in
        one compiled program (members are independent, so the first m' of m are an m'-ensemble).

    Example::

        agent = jb.make_agent("glm-es", ensemble_size=10, perturb_std=0.1, warmup=500)
    """

    name = "glm-es"
    description = "GLM ensemble sampling: m perturbed-history logistic MLEs, G-optimal warm-up"
    paper = "Sun et al. 2025, Algs. 1-3, Sec. 4.2"
    family = "glm"
    action_kinds = ("index",)

    perturb_std: float = 0.1
    warmup: int = 500
    active_members: int = 0
    ensemble_size: int = struct.field(pytree_node=False, default=10)

    def init(self, key: jax.Array, spec: Spec) -> GLMESState:
        data = self._data_init(spec)
        m = self.ensemble_size
        return GLMESState(
            theta=jnp.zeros((m, spec.dim), data.features.dtype),
            data=data,
            perturb_sums=jnp.zeros((m,) + data.counts.shape, data.counts.dtype),
            remaining=jnp.zeros((spec.num_arms,), jnp.int32),
            noise_key=key,
        )

    def num_active(self) -> jax.Array:
        """The number of members ``j_t`` is drawn from: ``active_members``, or m when 0."""
        return num_active_members(self.active_members, self.ensemble_size)

    def act(self, state: GLMESState, key: jax.Array, context: Context):
        key_member, key_warmup = jax.random.split(key)
        member = jax.random.randint(key_member, (), 0, self.num_active())
        in_warmup, warm_arm, remaining = self._warmup_step(
            state.remaining, state.data, key_warmup, context.arms)
        greedy = greedy_index(context.arms @ state.theta[member])
        return jnp.where(in_warmup, warm_arm, greedy), state.replace(remaining=remaining)

    def update(
        self,
        state: GLMESState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> GLMESState:
        step = state.data.num_obs
        members = jnp.arange(self.ensemble_size)
        noise = jax.vmap(lambda j: member_reward_noise(state.noise_key, j, step))(members)
        data, row = self._add(state.data, context, action, feedback.reward)
        perturb_sums = glm_data_accumulate(state.perturb_sums, row, self.perturb_std * noise,
                                           data.per_arm)
        fit = self._warm(state.remaining, data)
        theta = jax.vmap(lambda th, p: self._fit(th, data, data.rewards + p, self.reg, fit))(
            state.theta, perturb_sums)
        return state.replace(theta=theta, data=data, perturb_sums=perturb_sums)


# ------------------------------------------------------------------------------------------------
# UCB-GLM and GLM-TSL (the GLM baselines Sun et al. 2025, Sec. 7.2 infers).


class UCBGLMState(struct.PyTreeNode):
    """State of :class:`UCBGLM`.

    Attributes:
      theta: ``(d,)`` the regularised MLE.  data: the rows it is fitted on.
      design: ridge state of ``V_t = reg I + sum_l X_l X_l^T`` (for the widths).
      remaining: ``(K,)`` int32 warm-up pulls left per arm.
    """

    theta: jax.Array
    data: GLMData
    design: RidgeState
    remaining: jax.Array


@register_agent
class UCBGLM(GLMAgent):
    """UCB-GLM (Li, Lu & Zhou 2017), a GLM baseline for Sun et al. 2025 (Sec. 7.2; the paper does
    not name its GLM baselines).

    After ``warmup`` design rounds, ``theta_t`` is the regularised MLE (either solver) and::

        a_t = argmax_k x_k^T theta_{t-1} + alpha ||x_k||_{V_{t-1}^{-1}},   V_t = reg I + sum X X^T

    with ``alpha`` = ``explore_scale`` (tuned in practice; the theory value is
    ``(sigma / kappa) sqrt(d/2 log(1 + 2t/d) + log 1/delta)``). Defaults: ``lambda = 1``, the
    authors' group's harness (devzhk/LMCTS) warm-up ``tau = 30`` (it pulls uniformly; here the
    rounded design, as GLM-ES; ``warmup=500`` runs the baselines with GLM-ES's own warm-up).
    """

    name = "ucb-glm"
    description = "UCB-GLM: regularised MLE plus alpha ||x||_{V^-1} (warm-up as GLM-ES)"
    paper = "Li et al. 2017; baseline of Sun et al. 2025, Sec. 7.2"
    family = "glm"
    action_kinds = ("index",)

    explore_scale: float = 0.5
    warmup: int = 30

    def init(self, key: jax.Array, spec: Spec) -> UCBGLMState:
        data = self._data_init(spec)
        return UCBGLMState(
            theta=jnp.zeros((spec.dim,), data.features.dtype),
            data=data,
            design=ridge_init(spec.dim, self.reg),
            remaining=jnp.zeros((spec.num_arms,), jnp.int32),
        )

    def act(self, state: UCBGLMState, key: jax.Array, context: Context):
        in_warmup, warm_arm, remaining = self._warmup_step(
            state.remaining, state.data, key, context.arms)
        scores = (context.arms @ state.theta
                  + self.explore_scale * ridge_widths(state.design, context.arms))
        return jnp.where(in_warmup, warm_arm, greedy_index(scores)), state.replace(
            remaining=remaining)

    def update(self, state: UCBGLMState, key, context, action, feedback) -> UCBGLMState:
        data, theta = self._add_and_refit(state, context, action, feedback.reward)
        design = ridge_update(state.design, chosen_features(context, action), feedback.reward)
        return state.replace(theta=theta, data=data, design=design)


class GLMTSLState(struct.PyTreeNode):
    """State of :class:`GLMTSL`: ``theta`` ``(d,)`` the regularised MLE, its ``data`` and the
    warm-up pulls ``remaining`` ``(K,)``."""

    theta: jax.Array
    data: GLMData
    remaining: jax.Array


@register_agent
class GLMTSL(GLMAgent):
    """GLM-TSL (Kveton et al. 2020): Thompson sampling from the Laplace approximation.

    After ``warmup`` design rounds, with ``theta_bar`` the regularised MLE and
    ``H_bar = reg I + sum_l mu'(X_l^T theta_bar) X_l X_l^T`` its Hessian::

        theta~ ~ N(theta_bar, a^2 H_bar^{-1});   a_t = argmax_k x_k^T theta~

    ``a`` = ``explore_scale``. The sample is ``theta_bar + a L^{-T} z`` with ``H_bar = L L^T``
    (O(K d^2 + d^3) per round). The authors' group's harness (devzhk/LMCTS) uses ``tau = 30`` and
    ``a = 0.01``; the default ``a = 0.5`` suits the noise of Sun et al. 2025's logistic bandit (Sec.
    7.1; tune over a small grid).
    """

    name = "glm-tsl"
    description = "GLM-TSL: Thompson sampling from the Laplace posterior N(MLE, a^2 H^-1)"
    paper = "Kveton et al. 2020; baseline of Sun et al. 2025, Sec. 7.2"
    family = "glm"
    action_kinds = ("index",)

    explore_scale: float = 0.5
    warmup: int = 30

    def init(self, key: jax.Array, spec: Spec) -> GLMTSLState:
        data = self._data_init(spec)
        return GLMTSLState(theta=jnp.zeros((spec.dim,), data.features.dtype), data=data,
                           remaining=jnp.zeros((spec.num_arms,), jnp.int32))

    def sample(self, state: GLMTSLState, key: jax.Array) -> jax.Array:
        """One draw ``theta~ ~ N(theta_bar, a^2 H_bar^{-1})``, shape ``(d,)``."""
        data = state.data
        hess = glm_hessian(state.theta, data.features, data.counts, self.reg, self.link)
        chol = jnp.linalg.cholesky(hess)
        z = jax.random.normal(key, state.theta.shape, state.theta.dtype)
        return state.theta + self.explore_scale * jax.scipy.linalg.solve_triangular(
            chol.T, z, lower=False)

    def act(self, state: GLMTSLState, key: jax.Array, context: Context):
        key_sample, key_warmup = jax.random.split(key)
        in_warmup, warm_arm, remaining = self._warmup_step(
            state.remaining, state.data, key_warmup, context.arms)
        greedy = greedy_index(context.arms @ self.sample(state, key_sample))
        return jnp.where(in_warmup, warm_arm, greedy), state.replace(remaining=remaining)

    def update(self, state: GLMTSLState, key, context, action, feedback) -> GLMTSLState:
        data, theta = self._add_and_refit(state, context, action, feedback.reward)
        return state.replace(theta=theta, data=data)


# ------------------------------------------------------------------------------------------------
# Logistic-UCB-1 and ada-OFU-ECOLog as Bae & Lee 2025 run them (Sec. 7, App. A).


class LogisticUCBState(struct.PyTreeNode):
    """State of :class:`LogisticUCB1` and :class:`AdaOFUECOLog`.

    Attributes:
      theta: ``(d,)`` the estimate (updated every ``update_every`` rounds).
      data: the rows it is trained on.
      design: ridge state of the bonus matrix (``V_t`` or the weighted ``V~_t``).
      info: ridge state of ``I/R + sum x x^T``, whose log-determinant gives the running
        effective dimension ``d~_t = log det(I + R sum x x^T)``, ``R = 1/4``.
      remaining: ``(K,)`` int32 warm-up pulls left (no warm-up by default).
    """

    theta: jax.Array
    data: GLMData
    design: RidgeState
    info: RidgeState
    remaining: jax.Array


class _FauryUCB(GLMAgent):
    """Shared plumbing of the streamlined linear logistic UCBs that Bae & Lee 2025 compare with
    (Sec. 7).

    ``index_k = mu(x_k^T theta) + nu w_t ||x_k||_{A^{-1}}``, ``nu`` = ``explore_scale``; theta
    is trained every ``update_every`` rounds by ``num_grad_steps`` warm-started gd steps on
    ``sum_i BCE(r_i, x_i^T theta) + reg ||theta||^2`` with step ``learning_rate / n`` (the
    ``"mean"`` reduction: the paper's step 0.01 on the sum diverges) and no projection. Subclasses
    give ``A`` and ``w_t``.

    ``nu`` is grid-searched over {0.01, 0.1, 1, 10, 100} in the paper; the default 0.01 is the
    best of that grid on a small ``logistic`` bandit (d = 5, K = 10; ``nu = 1`` there explores
    uniformly for the first thousand rounds, as ``w_t`` is about 20).
    """

    explore_scale: float = 0.01
    kappa: float = 10.0
    param_bound: float = 1.0
    delta: float = 0.05
    update_every: int = 50

    def _design_reg(self):
        raise NotImplementedError

    def _width(self, info: RidgeState) -> jax.Array:
        raise NotImplementedError

    def _design_weight(self, theta, x) -> jax.Array:
        raise NotImplementedError

    def effective_dim(self, info: RidgeState) -> jax.Array:
        """``d~_t = log det(I + R sum_s x_s x_s^T)`` from the ``info`` ridge state."""
        dim = info.mean.shape[-1]
        log_prior = jnp.log(jnp.asarray(1.0 / LOGISTIC_SLOPE_BOUND, info.logdet.dtype))
        return info.logdet - dim * log_prior

    def init(self, key: jax.Array, spec: Spec) -> LogisticUCBState:
        data = self._data_init(spec)
        return LogisticUCBState(
            theta=jnp.zeros((spec.dim,), data.features.dtype),
            data=data,
            design=ridge_init(spec.dim, self._design_reg()),
            info=ridge_init(spec.dim, 1.0 / LOGISTIC_SLOPE_BOUND),
            remaining=jnp.zeros((spec.num_arms,), jnp.int32),
        )

    def scores(self, state: LogisticUCBState, key: jax.Array, context: Context) -> jax.Array:
        """The optimistic index of each arm, ``(K,)`` for ``context.arms`` ``(K, d)``."""
        arms = context.arms
        mean = link_mean(arms @ state.theta, self.link)
        width = self.explore_scale * self._width(state.info)
        return mean + width * ridge_widths(state.design, arms)

    def act(self, state: LogisticUCBState, key: jax.Array, context: Context):
        in_warmup, warm_arm, remaining = self._warmup_step(
            state.remaining, state.data, key, context.arms)
        greedy = greedy_index(self.scores(state, key, context))
        return jnp.where(in_warmup, warm_arm, greedy), state.replace(remaining=remaining)

    def update(self, state: LogisticUCBState, key, context, action, feedback):
        x = chosen_features(context, action)
        data, _ = self._add(state.data, context, action, feedback.reward)
        train = self._warm(state.remaining, data) & (data.num_obs % self.update_every == 0)
        theta = self._fit(state.theta, data, data.rewards, 2.0 * self.reg, train)  # reg ||th||^2
        weight = self._design_weight(theta, x)
        return state.replace(
            theta=theta,
            data=data,
            design=ridge_update(state.design, jnp.sqrt(weight) * x, 0.0),
            info=ridge_update(state.info, x, 0.0),
        )


@register_agent
class LogisticUCB1(_FauryUCB):
    """Logistic-UCB-1 (Faury, Abeille, Calauzenes & Fercoq 2020) as Bae & Lee 2025 run it (Sec. 7,
    baseline (2)).

    ::

        index_k = mu(x_k^T theta) + nu R sqrt(kappa) sqrt(1 + 2S) gamma_t ||x_k||_{V^{-1}}
        gamma_t = sqrt(lambda) (S + 1/2) + (2 / sqrt(lambda)) (log(1/delta) + d~_t / 2)
        V_t     = kappa lambda I + sum_s x_s x_s^T,     d~_t = log det(I + R sum_s x_s x_s^T)

    with ``R = 1/4``, ``kappa`` = ``kappa``, ``S`` = ``param_bound``, ``lambda`` = ``reg``,
    ``nu`` = ``explore_scale``. Defaults are the paper's: ``S = 1``, ``kappa = 10``,
    ``delta = 0.05``, training every 50 rounds by 100 gd steps of 0.01 (``nu`` and ``lambda``
    are grid-searched over {0.01, 0.1, 1, 10, 100} there; default ``nu = 0.01``). Changing
    contexts need a ring buffer (``buffer_size``) holding the horizon.
    """

    name = "logistic-ucb-1"
    description = "Logistic-UCB-1 (streamlined: MLE by gd, V = kappa lambda I + sum x x^T)"
    paper = "Faury et al. 2020; baseline of Bae & Lee 2025, Sec. 7"
    family = "glm"
    action_kinds = ("index",)

    def _design_reg(self):
        return self.kappa * self.reg

    def _width(self, info: RidgeState) -> jax.Array:
        reg, s = self.reg, self.param_bound
        gamma = (jnp.sqrt(reg) * (s + 0.5)
                 + 2.0 / jnp.sqrt(reg) * (jnp.log(1.0 / self.delta) + self.effective_dim(info) / 2))
        return LOGISTIC_SLOPE_BOUND * jnp.sqrt(self.kappa) * jnp.sqrt(1.0 + 2.0 * s) * gamma

    def _design_weight(self, theta, x):
        return jnp.ones((), x.dtype)


@register_agent
class AdaOFUECOLog(_FauryUCB):
    """ada-OFU-ECOLog (Faury, Abeille, Jun & Calauzenes 2022) as Bae & Lee 2025 run it (Sec. 7,
    baseline (3)).

    ::

        index_k = mu(x_k^T theta) + nu sqrt(2 lambda S^2 + (1 + S)^2 gamma'_t) ||x_k||_{V~^{-1}}
        gamma'_t = sqrt(lambda) / 2 + (2 / sqrt(lambda)) (log(1/delta) + d~_t / 2)
        V~_t     = lambda I + sum_s mu'(x_s^T theta_s) x_s x_s^T

    where ``theta_s`` is the estimate right after round s's (possible) update, and ``d~_t`` as
    in :class:`LogisticUCB1`. No ``kappa`` anywhere: its actions do not change with ``kappa``
    (tested). Streamlined as in the paper: the full regularised log-loss by
    gd (no ECOLog one-step update, no projection, no loss-difference term).
    """

    name = "ada-ofu-ecolog"
    description = "ada-OFU-ECOLog (streamlined: MLE by gd, variance-weighted V~)"
    paper = "Faury et al. 2022; baseline of Bae & Lee 2025, Sec. 7"
    family = "glm"
    action_kinds = ("index",)

    def _design_reg(self):
        return self.reg

    def _width(self, info: RidgeState) -> jax.Array:
        reg, s = self.reg, self.param_bound
        gamma = (jnp.sqrt(reg) / 2.0
                 + 2.0 / jnp.sqrt(reg) * (jnp.log(1.0 / self.delta) + self.effective_dim(info) / 2))
        return jnp.sqrt(2.0 * reg * s * s + (1.0 + s) ** 2 * gamma)

    def _design_weight(self, theta, x):
        return link_slope(x @ theta, self.link)
