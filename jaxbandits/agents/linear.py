"""Linear baselines on the shared ridge core: uniform random, greedy, LinUCB (OFUL) and LinTS.

Every linear agent here keeps a :class:`~jaxbandits.linalg.RidgeState` with
``V_t = reg * I + sum_s x_s x_s^T`` and ``mean_t = V_t^{-1} sum_s x_s y_s``, updated in O(d^2) per
round. As a Bayesian model the prior is ``N(0, noise_std^2 / reg * I)`` and the posterior
``N(mean_t, noise_std^2 V_t^{-1})``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.agents.select import LinearScores, chosen_features, greedy_index, uniform_action
from jaxbandits.core import Agent, Context, Feedback, Spec, check_choice, check_nonnegative
from jaxbandits.linalg import (
    RidgeState,
    ridge_init,
    ridge_sample,
    ridge_sq_widths_update,
    ridge_update,
    ridge_widths,
)
from jaxbandits.registry import register_agent

__all__ = ["LINUCB_RADII", "Greedy", "LinTS", "LinUCB", "LinUCBState", "RandomAgent", "RidgeAgent",
           "oful_radius"]

#: LinUCB's confidence radius: the OFUL ``beta_t`` or Li et al. (2010)'s constant ``alpha``.
LINUCB_RADII: tuple[str, ...] = ("oful", "constant")


@register_agent
class RandomAgent(Agent):
    """Uniformly random play (a uniform arm, a uniform pair of two distinct arms for dueling,
    or a uniform direction on the sphere)."""

    name = "random"
    description = "uniformly random arm (the reference every agent must beat)"
    paper = "—"
    family = "baseline"
    action_kinds = ("index", "pair", "vector")
    input_kinds = ("arms", "tokens")

    def init(self, key: jax.Array, spec: Spec) -> jax.Array:
        # only its shape is used: (d,) (the dimension of vector actions), or (2, d) for pairs
        return jnp.zeros((2, spec.dim) if spec.action_kind == "pair" else (spec.dim,))

    def act(self, state, key, context):
        return uniform_action(key, context, state.shape[-1], pair=state.ndim == 2), state

    def update(self, state, key, context, action, feedback):
        return state


class RidgeAgent(Agent):
    """Shared plumbing of the ridge agents: ``init`` and the rank-one ``update``.

    Subclasses write only ``act``. Attributes: ``reg`` (lambda), ``noise_std`` (the noise scale
    the agent assumes) and ``explore_scale`` (the multiplier of the width or sampling scale).
    """

    reg: float = 1.0
    noise_std: float = 0.5
    explore_scale: float = 1.0

    reg_is_prior = True
    relaxed_updates = True

    def init(self, key: jax.Array, spec: Spec) -> RidgeState:
        return ridge_init(spec.dim, self.reg)

    def update(
        self,
        state: RidgeState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> RidgeState:
        return ridge_update(state, chosen_features(context, action), feedback.reward)


@register_agent
class Greedy(LinearScores, RidgeAgent):
    """Greedy: play ``argmax_k <x_k, mean_t>`` (on the sphere, ``mean_t / ||mean_t||``)."""

    name = "greedy"
    description = "ridge regression, always exploit"
    paper = "the Greedy baseline of Li et al. 2024, Sec. 5.2"
    family = "linear"
    action_kinds = ("index", "vector")

    def parameter(self, state: RidgeState, key: jax.Array, context: Context) -> jax.Array:
        return state.mean


def oful_radius(state: RidgeState, reg, noise_std, delta, param_bound) -> jax.Array:
    """The OFUL confidence radius (Abbasi-Yadkori et al. 2011, Theorem 2).

    ``beta_t = noise_std * sqrt(2 log(1/delta) + log det V_t - d log reg) + sqrt(reg) * S``,
    with ``log det V_t`` tracked exactly by the ridge state and ``S >= ||theta*||``.
    """
    dim = state.mean.shape[-1]
    log_ratio = state.logdet - dim * jnp.log(reg)
    width = noise_std * jnp.sqrt(2.0 * jnp.log(1.0 / delta) + log_ratio)
    return width + jnp.sqrt(reg) * param_bound


class LinUCBState(struct.PyTreeNode):
    """LinUCB's state on a fixed arm set (``spec.fixed_arms``): the ridge statistic and widths.

    Attributes:
      ridge: the ridge statistic (:class:`~jaxbandits.linalg.RidgeState`).
      sq_widths: ``(K,)`` the squared widths ``x_k^T V_t^{-1} x_k`` of the run's arms, kept by
        Sherman-Morrison (:func:`~jaxbandits.linalg.ridge_sq_widths_update`); set from the arms
        in the first round (``ridge.count == 0``), when the agent first sees them.
    """

    ridge: RidgeState
    sq_widths: jax.Array


@register_agent
class LinUCB(RidgeAgent):
    """LinUCB / OFUL: ``argmax_k <x_k, mean_t> + explore_scale * beta_t * ||x_k||_{V_t^{-1}}``.

    ``beta_t`` is the OFUL radius (:func:`oful_radius`) with confidence ``1 - delta`` and
    parameter-norm bound ``param_bound``; ``explore_scale`` tunes it (the papers tune it over a
    small grid). The width is the square-rooted norm (the anytime paper's harness omits the root,
    a quirk noted in Sun et al. 2025, Sec. 7.2).

    ``radius="constant"`` replaces ``beta_t`` by the constant ``alpha``: Li et al. (2010)'s
    LinUCB, ``x_k^T mean_t + explore_scale * alpha * ||x_k||_{V_t^{-1}}`` (MABWiser's and OBP's
    ``alpha``, with ``explore_scale = 1``; ``noise_std``, ``delta`` and ``param_bound`` are then
    unused). For one ridge model per arm see ``disjoint-lin-ucb``.

    Cost per round: on a fixed arm set (``spec.fixed_arms``) the state is a
    :class:`LinUCBState` whose squared widths are downdated by Sherman-Morrison,
    ``w_k <- w_k - (x_k^T V^{-1} x_t)^2 / (1 + x_t^T V^{-1} x_t)``, O(K d + d^2); otherwise
    (fresh or varying arms) the state is a :class:`~jaxbandits.linalg.RidgeState` and the widths
    are recomputed, O(K d^2). Both play the same actions (up to rounding).
    """

    name = "lin-ucb"
    description = "optimism with the OFUL confidence width (tunable scale)"
    paper = "Abbasi-Yadkori et al. 2011; baseline of Sun et al. 2025, Sec. 7.2"
    family = "linear"
    action_kinds = ("index",)

    delta: float = 0.01
    param_bound: float = 1.0
    radius: str = struct.field(pytree_node=False, default="oful")
    alpha: float = 1.0

    def validate(self) -> None:
        super().validate()
        check_choice(self, "radius", LINUCB_RADII)
        check_nonnegative(self, "alpha")

    def init(self, key: jax.Array, spec: Spec) -> RidgeState | LinUCBState:
        ridge = ridge_init(spec.dim, self.reg)
        if not spec.fixed_arms:
            return ridge
        return LinUCBState(ridge=ridge, sq_widths=jnp.zeros((spec.num_arms,), ridge.mean.dtype))

    def scores(self, state: RidgeState | LinUCBState, key: jax.Array,
               context: Context) -> jax.Array:
        """The optimistic index of each arm, ``(K,)`` for ``context.arms`` ``(K, d)``."""
        arms = context.arms
        if isinstance(state, LinUCBState):
            ridge, widths = state.ridge, jnp.sqrt(self._sq_widths(state, arms))
        else:
            ridge, widths = state, ridge_widths(state, arms)
        if self.radius == "constant":
            radius = self.alpha
        else:
            radius = oful_radius(ridge, self.reg, self.noise_std, self.delta, self.param_bound)
        return arms @ ridge.mean + self.explore_scale * radius * widths

    def act(self, state: RidgeState | LinUCBState, key: jax.Array, context: Context):
        action = greedy_index(self.scores(state, key, context))
        if isinstance(state, LinUCBState):  # keep the first round's widths for update
            state = state.replace(sq_widths=self._sq_widths(state, context.arms))
        return action, state

    def update(
        self,
        state: RidgeState | LinUCBState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> RidgeState | LinUCBState:
        if not isinstance(state, LinUCBState):
            return super().update(state, key, context, action, feedback)
        x = chosen_features(context, action)
        arms = context.arms
        return LinUCBState(
            ridge=ridge_update(state.ridge, x, feedback.reward),
            sq_widths=ridge_sq_widths_update(state.ridge, self._sq_widths(state, arms), arms, x),
        )

    def _sq_widths(self, state: LinUCBState, arms: jax.Array) -> jax.Array:
        """The kept squared widths, or ``||x_k||^2 / reg`` (``V_0 = reg I``) before round one.

        The prior widths depend on the arms alone; on a fixed arm set XLA hoists them out of
        the runner's loop, so the ``where`` costs O(K) per round.
        """
        prior = jnp.sum(arms * arms, axis=-1) / jnp.asarray(self.reg, arms.dtype)
        return jnp.where(state.ridge.count == 0, prior, state.sq_widths)


@register_agent
class LinTS(LinearScores, RidgeAgent):
    """Linear Thompson sampling: ``theta ~ N(mean_t, (explore_scale * noise_std)^2 V_t^{-1})``.

    Exact Gaussian sampling from the ridge posterior through the maintained square root (no
    factorisation per round), then ``argmax_k <x_k, theta>``, or ``theta / ||theta||`` on the
    sphere. With ``reg = noise_std^2 / prior_var`` this is exact Bayesian TS (Ensemble++'s "TS"
    baseline uses ``noise_std = 1``, ``prior_var = 10``, i.e. ``reg = 0.1``).
    """

    name = "lin-ts"
    description = "Thompson sampling from the exact Gaussian ridge posterior"
    paper = "Agrawal & Goyal 2013; baseline of Li et al. 2024, Sec. 5.1"
    family = "linear"
    action_kinds = ("index", "vector")

    def parameter(self, state: RidgeState, key: jax.Array, context: Context) -> jax.Array:
        return ridge_sample(state, key, self.explore_scale * self.noise_std)

