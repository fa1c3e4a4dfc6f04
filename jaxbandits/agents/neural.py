"""Neural bandits on the NTK-parameterised MLP: Neural-ES (Sun et al. 2025) and its baselines
NeuralUCB and NeuralTS (Sun et al. 2025, Sec. 7.2).

All three use the same network (:class:`~jaxbandits.nets.Network`: bias-free ReLU, ``sqrt(m)``
output scale, the symmetric NTK init; Sun et al. 2025's defaults ``L = 3``, ``m = 20``, Sec. 7.2),
the same training (:func:`~jaxbandits.nets.net_gd`: ``num_grad_steps = 100`` full-batch steps of
``learning_rate = 0.01``, warm-started, on the mean-normalised loss (the paper's sum loss diverges
at that step) with the regulariser ``1/2 lambda m ||theta - theta_0||^2`` anchored at the
initialisation) and the same warm-up (each arm once, in a random order drawn at ``init``; Sun et al.
2025, Sec. 7.2; the order is ours). They fit on fixed-shape data
(:class:`~jaxbandits.linalg.GLMData`):

* with a fixed arm set (``spec.fixed_arms``, ``buffer_size=None``), **per-arm statistics**: pull
  counts and reward sums, exact for the squared loss and O(K) per gradient step whatever t
  (Sun et al. 2025, Sec. 4.1);
* with changing contexts (``buffer_size=B``, or by itself with ``buffer_size=None`` a buffer of
  ``AUTO_BUFFER`` = 2,000 rows), a **ring buffer** of the last B observations with
  a validity mask (exact while ``t <= B``, a sliding window afterwards); a training covers the
  filled rows only, in blocks (``net_gd(num_rows=...)``), so it costs O(min(t, B)).

Training happens at the end of the warm-up and then every ``update_every`` observations
(:func:`~jaxbandits.nets.training_round`; 1 in Sun et al. 2025, 50 in Bae & Lee 2025's experiments).
The schedule keys on the observation count, which every run shares: the gradient-step count is a
loop bound that is 0 in a round without training, so under the runner's ``vmap`` such a round
costs no step at all (no ``lax.cond`` that ``vmap`` would turn into a select of both branches).

* ``neural-es`` (:class:`NeuralES`): m networks that share ``theta_0`` and differ only in their
  reward perturbations ``Z_l^j``, drawn once per (member, data point); a vmap over stacked
  member parameters.
* ``neural-ucb`` (:class:`NeuralUCB`, Zhou et al. 2020): ``argmax f(x; theta) + nu ||g / sqrt
  m||_{U^{-1}}``.
* ``neural-ts`` (:class:`NeuralTS`, Zhang et al. 2021): ``argmax`` of ``N(f(x; theta), nu^2
  lambda ||g / sqrt m||^2_{U^{-1}})`` drawn independently per arm.

The exploration scale ``nu`` (``explore_scale``) of the baselines is not given by Sun et al. 2025;
tune it over ``{1e-3, 1e-2, 1e-1, 1}`` and report the best, e.g. with
``jb.sweep(env, agent, key, {"explore_scale": [1e-3, 1e-2, 1e-1, 1.0]}, ...)`` (one
compilation). The default ``nu = 0.01`` was the best of ``{0, 0.01, 0.1, 0.3, 1}`` for both
baselines on ``quadratic`` at the paper's sizes (d = 20, K = 50; final regret at T = 1,500, mean of
4 runs, in that order: NeuralUCB 92 / 76 / 107 / 161 / 175, NeuralTS 92 / 82 / 129 / 189 / 227,
uniform random 238), a pilot rather than a tuned value: tune it for the horizon at hand.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx, struct

from jaxbandits.agents.ensembles import member_reward_noise
from jaxbandits.agents.select import greedy_index, num_active_members
from jaxbandits.core import Agent, Context, Feedback, Spec, check_choice
from jaxbandits.linalg import (
    REDUCTIONS,
    GLMData,
    glm_data_accumulate,
    glm_data_add,
    glm_data_for_spec,
)
from jaxbandits.nets import (
    DESIGNS,
    INITS,
    Network,
    design_init,
    design_update,
    design_widths,
    net_gd,
    training_round,
)
from jaxbandits.registry import register_agent

__all__ = [
    "NeuralAgent",
    "NeuralES",
    "NeuralESState",
    "NeuralTS",
    "NeuralUCB",
    "NeuralUCBState",
]


class NeuralAgent(Agent):
    """Plumbing shared by the neural agents: the network, the data, the warm-up and the fit.

    Attributes:
      reg: lambda; the loss's regulariser is ``1/2 lambda m ||theta - theta_0||^2``.
      learning_rate: the gradient-descent step size.
      width: m, the hidden width (static; even for the symmetric init).
      depth: L, the number of weight matrices (static, >= 2).
      net_init: ``"symmetric"`` (the papers'), ``"gaussian"`` or ``"torch"`` (static).
      double_input: feed ``[x; x] / sqrt 2`` so that ``f(x; theta_0) = 0`` (static; the input
        symmetrisation of Sun et al. 2025, Assumption C.1, off in its experiments).
      num_grad_steps: J, the gradient steps per training round (static).
      update_every: train every this many observations after the warm-up (static).
      warmup: the number of warm-up rounds, which pull the arms in a random order drawn at
        ``init`` (cycling through it if longer than K); negative (the default) means K, each
        arm once (Sun et al. 2025, Sec. 7.2). A leaf, so the anytime wrapper can shorten it per
        epoch.
      loss_reduction: ``"mean"`` (default), ``"sum"`` (literal) or ``"mean_plus_reg"`` (static;
        see :mod:`jaxbandits.nets.train`).
      buffer_size: B for a ring buffer of the last B observations, or None (default) for the
        agent's choice: per-arm statistics on a fixed arm set, else a ring buffer of
        ``AUTO_BUFFER`` rows (static).
    """

    reg: float = 1.0
    learning_rate: float = 0.01
    width: int = struct.field(pytree_node=False, default=20)
    depth: int = struct.field(pytree_node=False, default=3)
    net_init: str = struct.field(pytree_node=False, default="symmetric")
    double_input: bool = struct.field(pytree_node=False, default=False)
    num_grad_steps: int = struct.field(pytree_node=False, default=100)
    update_every: int = struct.field(pytree_node=False, default=1)
    warmup: int = -1
    loss_reduction: str = struct.field(pytree_node=False, default="mean")
    buffer_size: int | None = struct.field(pytree_node=False, default=None)

    def validate(self) -> None:
        super().validate()
        if self.depth < 2:
            raise ValueError(f"{self.name}: depth must be >= 2 (weight matrices), got "
                             f"{self.depth!r}")
        check_choice(self, "net_init", INITS)
        if self.net_init == "symmetric" and self.width % 2:
            raise ValueError(f"{self.name}: width must be even for the symmetric init, got "
                             f"{self.width!r}")
        check_choice(self, "loss_reduction", REDUCTIONS)
        if np.any(np.asarray(self.warmup) < -1):  # -1: one round per arm
            raise ValueError(f"{self.name}: warmup must be an integer >= -1 (-1: K rounds, each "
                             f"arm once), got {self.warmup!r}")

    # -- network -----------------------------------------------------------------------------

    def network(self, dim: int) -> Network:
        """The static network for inputs of dimension ``dim``."""
        return Network(in_features=dim, width=self.width, depth=self.depth,
                       init_scheme=self.net_init, double_input=self.double_input)

    # -- data and schedule -------------------------------------------------------------------

    def _data_init(self, spec: Spec) -> GLMData:
        return glm_data_for_spec(self.name, spec, self.buffer_size)

    def _warmup_order(self, key: jax.Array, spec: Spec) -> jax.Array:
        return jax.random.permutation(key, spec.num_arms).astype(jnp.int32)

    def _warmup_length(self, num_arms: int) -> jax.Array:
        warmup = jnp.asarray(self.warmup, jnp.int32)
        return jnp.where(warmup < 0, num_arms, warmup)

    def _select(self, scores: jax.Array, order: jax.Array, num_obs: jax.Array) -> jax.Array:
        """``argmax scores``, or the next warm-up arm while the warm-up lasts."""
        num_arms = scores.shape[-1]
        warm_arm = order[num_obs % num_arms]
        return jnp.where(num_obs < self._warmup_length(num_arms), warm_arm, greedy_index(scores))

    def _train_now(self, num_obs: jax.Array, num_arms: int) -> jax.Array:
        return training_round(num_obs, self._warmup_length(num_arms), self.update_every)

    def _fit(self, network: Network, params, anchor, data: GLMData, sums, active) -> nnx.State:
        """``num_grad_steps`` GD steps from ``params`` on ``data`` with reward sums ``sums``;
        no step at all where ``active`` is False."""
        return net_gd(network, params, anchor, data.features, data.counts, sums,
                      self.reg * self.width, learning_rate=self.learning_rate,
                      num_steps=jnp.where(active, self.num_grad_steps, 0),
                      reduction=self.loss_reduction, num_rows=self._filled_rows(data))

    def _filled_rows(self, data: GLMData) -> jax.Array | None:
        """How many leading rows of ``data`` hold observations: a ring buffer fills rows 0, 1,
        ... in order, so training skips the empty tail (None for per-arm statistics)."""
        return data.size


# ------------------------------------------------------------------------------------------------
# Neural-ES.


class NeuralESState(struct.PyTreeNode):
    """State of :class:`NeuralES`.

    Attributes:
      params: the m members' network parameters, stacked on a leading ``(m,)`` axis.
      anchor: the shared initialisation ``theta_0`` (unstacked), the regulariser's centre.
      data: the unperturbed rows (per-arm counts and reward sums, or a buffer).
      perturb_sums: ``(m, N)`` per row, member j's perturbation sum (per-arm:
        ``P^j_k = sum_{l: a_l = k} Z_l^j``; buffer: the row's ``Z_l^j``).
      order: ``(K,)`` int32, the warm-up order of the arms.
      noise_key: the key of the perturbation table: ``Z_l^j = perturb_std *
        member_reward_noise(noise_key, j, l)`` (shared with ``lin-es`` and ``glm-es``).
    """

    params: nnx.State
    anchor: nnx.State
    data: GLMData
    perturb_sums: jax.Array
    order: jax.Array
    noise_key: jax.Array


@register_agent
class NeuralES(NeuralAgent):
    """Neural ensemble sampling (Sun et al. 2025, Alg. 1 with the network loss).

    After the warm-up (each arm once), member ``j`` of ``m`` = ``ensemble_size`` is the network
    fitted to its perturbed history::

        theta_t^j ~ argmin_theta 1/2 sum_{l<=t} (f(X_l; theta) - Y_l - Z_l^j)^2
                                 + 1/2 lambda m_w ||theta - theta_0||^2

    (``m_w`` = ``width``), by ``num_grad_steps`` warm-started GD steps of ``learning_rate`` on the
    loss divided by ``max(n, 1)``, with ``Z_l^j ~ N(0, sigma_R^2)``, sigma_R =
    ``perturb_std``, drawn once when ``(X_l, Y_l)`` arrives (the warm-up data too, as in the proofs)
    and never redrawn. All members start from the same ``theta_0`` and differ only through the Z.
    Round t plays ``argmax_k f(x_k; theta_{t-1}^{j_t})`` with ``j_t`` uniform over the first
    ``active_members`` members (all when 0). With per-arm statistics a round costs
    O(m J K C_f), flat in t.

    Defaults are the paper's (Sec. 7.2): ``m = 10``, ``sigma_R = 0.1``, ``lambda = 1``,
    ``L = 3``, width 20, 100 GD steps at 0.01 every round.

    Attributes (beyond :class:`NeuralAgent`'s):
      perturb_std: sigma_R.  ensemble_size: m (static).
      active_members: how many of the m members ``j_t`` is drawn from (0: all); the anytime
        wrapper sets it per epoch.

    Example::

        agent = jb.make_agent("neural-es", ensemble_size=10, perturb_std=0.1)
    """

    name = "neural-es"
    description = "neural ensemble sampling: m perturbed-history networks from a shared init"
    paper = "Sun et al. 2025, Alg. 1, Sec. 4.3"
    family = "neural"
    action_kinds = ("index",)

    perturb_std: float = 0.1
    active_members: int = 0
    ensemble_size: int = struct.field(pytree_node=False, default=10)

    def init(self, key: jax.Array, spec: Spec) -> NeuralESState:
        key_net, key_order, key_noise = jax.random.split(key, 3)
        data = self._data_init(spec)
        theta0 = self.network(spec.dim).init(key_net)
        m = self.ensemble_size
        return NeuralESState(
            params=jax.tree.map(lambda p: jnp.broadcast_to(p, (m,) + p.shape), theta0),
            anchor=theta0,
            data=data,
            perturb_sums=jnp.zeros((m,) + data.counts.shape, data.counts.dtype),
            order=self._warmup_order(key_order, spec),
            noise_key=key_noise,
        )

    def num_active(self) -> jax.Array:
        """The number of members ``j_t`` is drawn from: ``active_members``, or m when 0."""
        return num_active_members(self.active_members, self.ensemble_size)

    def act(self, state: NeuralESState, key: jax.Array, context: Context):
        member = jax.random.randint(key, (), 0, self.num_active())
        params = jax.tree.map(lambda p: p[member], state.params)
        scores = self.network(context.arms.shape[-1]).apply(params, context.arms)
        return self._select(scores, state.order, state.data.num_obs), state

    def update(
        self,
        state: NeuralESState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> NeuralESState:
        step = state.data.num_obs
        members = jnp.arange(self.ensemble_size)
        noise = jax.vmap(lambda j: member_reward_noise(state.noise_key, j, step))(members)
        data, row = glm_data_add(state.data, context.arms, action, feedback.reward,
                                 state.data.per_arm)
        perturb_sums = glm_data_accumulate(state.perturb_sums, row, self.perturb_std * noise,
                                           state.data.per_arm)
        network = self.network(context.arms.shape[-1])
        active = self._train_now(data.num_obs, context.arms.shape[0])
        params = jax.vmap(
            lambda p, z: self._fit(network, p, state.anchor, data, data.rewards + z, active)
        )(state.params, perturb_sums)
        return state.replace(params=params, data=data, perturb_sums=perturb_sums)


# ------------------------------------------------------------------------------------------------
# NeuralUCB and NeuralTS.


class NeuralUCBState(struct.PyTreeNode):
    """State of :class:`NeuralUCB` and :class:`NeuralTS`.

    Attributes:
      params: the network parameters theta.
      anchor: the initialisation ``theta_0``, the regulariser's centre.
      design: ``U = lambda I + sum_s g_s g_s^T / m`` over the chosen arms' selection-time
        gradients: its diagonal ``(p,)``, or a :class:`~jaxbandits.linalg.RidgeState` with a
        square root of ``U^{-1}`` (``design="full"``).
      data: the rows the network is fitted on.
      order: ``(K,)`` int32, the warm-up order of the arms.
    """

    params: nnx.State
    anchor: nnx.State
    design: jax.Array | object
    data: GLMData
    order: jax.Array


@register_agent
class NeuralUCB(NeuralAgent):
    """NeuralUCB (Zhou, Li & Gu 2020), the neural optimism baseline of Sun et al. 2025 (Sec. 7.2)::

        a_t = argmax_k f(x_k; theta) + nu sqrt(g_k^T U^{-1} g_k / m),   g_k = grad f(x_k; theta)
        U  <- U + g_a g_a^T / m        (U_0 = lambda I; g_a the selection-time gradient)

    with ``nu`` = ``explore_scale`` and m the width, and theta trained as in
    :class:`NeuralAgent` on ``1/2 sum (f - Y)^2 + 1/2 lambda m ||theta - theta_0||^2``. ``U`` is
    diagonal by default, as in the reference code (``design="full"`` keeps the exact ``U^{-1}``
    as a square root, O(K p^2) per round). With ``nu = 0`` it is greedy on ``f``.

    The reference code's diagonal rule ``sqrt(lambda nu sum g^2 / U)`` with ``U = lambda +
    sum g^2`` is this rule with its ``lambda`` read as ``lambda m`` and ``nu`` as ``nu^2``.
    Tune ``nu`` over ``{1e-3, 1e-2, 1e-1, 1}``.

    Example::

        agent = jb.make_agent("neural-ucb", explore_scale=0.01, design="diag")
    """

    name = "neural-ucb"
    description = "NeuralUCB: network mean plus nu ||g / sqrt m||_{U^-1} (diagonal U)"
    paper = "Zhou et al. 2020; baseline of Sun et al. 2025, Sec. 7.2"
    family = "neural"
    action_kinds = ("index",)

    explore_scale: float = 0.01
    design: str = struct.field(pytree_node=False, default="diag")

    def validate(self) -> None:
        super().validate()
        check_choice(self, "design", DESIGNS)

    def init(self, key: jax.Array, spec: Spec) -> NeuralUCBState:
        key_net, key_order = jax.random.split(key)
        network = self.network(spec.dim)
        theta0 = network.init(key_net)
        return NeuralUCBState(
            params=theta0,
            anchor=theta0,
            design=design_init(network.num_params, self.reg, self.design),
            data=self._data_init(spec),
            order=self._warmup_order(key_order, spec),
        )

    def scores(self, state: NeuralUCBState, key: jax.Array, context: Context) -> jax.Array:
        """The index of each arm, ``(K,)`` for ``context.arms`` ``(K, d)``: ``f + nu * width``."""
        mean, widths = self._mean_and_widths(state, context.arms)
        return mean + self.explore_scale * widths

    def _mean_and_widths(self, state: NeuralUCBState, arms: jax.Array):
        network = self.network(arms.shape[-1])
        mean, grads = network.features(state.params, arms)
        return mean, design_widths(state.design, grads / math.sqrt(self.width))

    def act(self, state: NeuralUCBState, key: jax.Array, context: Context):
        scores = self.scores(state, key, context)
        return self._select(scores, state.order, state.data.num_obs), state

    def update(
        self,
        state: NeuralUCBState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> NeuralUCBState:
        network = self.network(context.arms.shape[-1])
        grad = network.gradient(state.params, context.arms[action])  # selection-time gradient
        design = design_update(state.design, grad / math.sqrt(self.width))
        data, _ = glm_data_add(state.data, context.arms, action, feedback.reward,
                               state.data.per_arm)
        active = self._train_now(data.num_obs, context.arms.shape[0])
        params = self._fit(network, state.params, state.anchor, data, data.rewards, active)
        return state.replace(params=params, design=design, data=data)


@register_agent
class NeuralTS(NeuralUCB):
    """NeuralTS (Zhang, Zhou, Li & Gu 2021), the neural sampling baseline of Sun et al. 2025 (Sec.
    7.2)::

        r_k ~ N(f(x_k; theta), nu^2 lambda g_k^T U^{-1} g_k / m)  independently per arm
        a_t = argmax_k r_k

    with the same ``U``, training and warm-up as :class:`NeuralUCB` (``nu`` =
    ``explore_scale``, diagonal ``U`` by default). With ``nu = 0`` it is greedy on ``f``. The
    reference code's ``sigma^2 = lambda nu sum g^2 / U`` is this rule with ``nu`` read as
    ``nu^2`` (and its ``lambda`` in ``U`` as ``lambda m``).

    Example::

        agent = jb.make_agent("neural-ts", explore_scale=0.01)
    """

    name = "neural-ts"
    description = "NeuralTS: per-arm Gaussian draws around the network, variance from diagonal U"
    paper = "Zhang et al. 2021; baseline of Sun et al. 2025, Sec. 7.2"
    family = "neural"
    action_kinds = ("index",)

    def scores(self, state: NeuralUCBState, key: jax.Array, context: Context) -> jax.Array:
        """A Gaussian draw per arm around ``f``, ``(K,)`` for ``context.arms`` ``(K, d)``."""
        mean, widths = self._mean_and_widths(state, context.arms)
        z = jax.random.normal(key, mean.shape, mean.dtype)
        return mean + self.explore_scale * jnp.sqrt(self.reg) * widths * z
