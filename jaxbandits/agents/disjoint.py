"""Agents of the per-arm ("disjoint") linear model: one ridge model per arm (Li et al. 2010).

Arm ``a`` has its own parameter, ``E[r_{t,a} | x_{t,a}] = x_{t,a}^T theta*_a`` (Li et al. 2010,
Sec. 3.1, Eq. 2), where ``x_{t,a}`` is row ``a`` of ``Context.arms`` ``(K, d)``. On a problem
with one shared context ``x_t`` (a :class:`~jaxbandits.envs.SharedContext`, the setting of
MABWiser's and OBP's linear policies) every row is ``x_t``. Each arm keeps

    A_a = reg I + sum_{s: a_s = a} x_s x_s^T,    theta_a = A_a^{-1} sum_{s: a_s = a} r_s x_s

in square-root form (:mod:`jaxbandits.linalg.disjoint`): the scores read the K models in
O(K d^2) per round (with a shared context, one ``x_t^T (d, K d)`` product), an update changes
only the played arm's model (O(d^2)).

* ``disjoint-lin-ucb`` (Li et al. 2010, Alg. 1): ``x_a^T theta_a + alpha sqrt(x_a^T A_a^{-1}
  x_a)``, with a constant ``alpha``.
* ``disjoint-lin-ts`` (Agrawal & Goyal 2013, Alg. 1, per arm): ``theta_a ~ N(theta_a, v^2
  A_a^{-1})`` independently for each arm, then the argmax of ``x_a^T theta_a``.
* ``disjoint-epsilon-greedy`` (Li et al. 2010, Sec. 5.2): a uniform arm with probability
  ``epsilon``, else ``argmax_a x_a^T theta_a``; it has the exact ``log_prob``.

* ``disjoint-ensemble-pp`` (Li et al. 2024, Sec. 3.1, per arm): one Ensemble++ factor
  ``A_a`` ``(d, M)`` per arm and one reference draw ``zeta`` shared by the arms, ``theta_a =
  mu_a + beta A_a zeta``. This is exactly linear Ensemble++ on the block features ``e_a (x) x``
  (whose Gram matrix and factor split into per-arm blocks), at O(K d (d + M)) per round.

Linear ensemble sampling (``lin-es``) extends the same way (one factor per arm, a member index
shared by the arms); it is not written here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbandits.agents.ensembles import EnsemblePlusPlus
from jaxbandits.agents.epsilon_greedy import (
    _check_epsilon,
    epsilon_greedy_action,
    epsilon_greedy_log_prob,
)
from jaxbandits.agents.select import greedy_index
from jaxbandits.core import Agent, Context, Feedback, Spec, check_choice, check_nonnegative
from jaxbandits.linalg import (
    DisjointState,
    EnsembleState,
    disjoint_init,
    disjoint_means,
    disjoint_sq_widths,
    disjoint_update,
    ensemble_update,
    perturbation_sample,
    reference_sample,
)
from jaxbandits.registry import register_agent

__all__ = ["DisjointAgent", "DisjointEnsemblePlusPlus", "DisjointEpsilonGreedy", "DisjointLinTS",
           "DisjointLinUCB", "features"]


def features(context: Context) -> jax.Array:
    """What the per-arm models read this round: ``(d,)`` the shared context ``x_t`` of a
    context that has one (``shared`` not None: a :class:`~jaxbandits.envs.SharedContext`, or
    ``disjoint-classification``'s row; every row of ``arms`` is ``x_t``), else ``(K, d)`` the
    arms' own rows ``x_{t,a}``.

    A shared ``x_t`` is materialised once (``lax.optimization_barrier``): XLA would otherwise
    fuse the environment's whole draw of ``x_t`` into each of the K d^2 products that read it
    (measured: a round of ``disjoint-lin-ucb`` on ``disjoint-linear`` 1.6x slower without it).
    """
    shared = getattr(context, "shared", None)
    if shared is not None:
        return jax.lax.optimization_barrier(shared)
    return context.arms


def _played(x: jax.Array, action: jax.Array) -> jax.Array:
    """``(d,)`` the played arm's features from :func:`features`' ``x``."""
    return x if x.ndim == 1 else x[action]


class DisjointAgent(Agent):
    """Shared plumbing of the per-arm ridge agents: ``init`` (K models ``A_a = reg I``) and the
    square-root (Potter) ``update`` of the played arm's model. Subclasses write only ``act``.

    Attributes:
      reg: lambda, the ridge regulariser of every arm's model (Li et al. 2010 use 1: ``A_a =
        I_d``; MABWiser's ``l2_lambda``, OBP's ``lambda_``).
    """

    family = "disjoint"
    action_kinds = ("index",)

    reg: float = 1.0

    def init(self, key: jax.Array, spec: Spec) -> DisjointState:
        return disjoint_init(spec.num_arms, spec.dim, self.reg)

    def update(self, state: DisjointState, key: jax.Array, context: Context, action: jax.Array,
               feedback: Feedback) -> DisjointState:
        x = _played(features(context), action)
        return disjoint_update(state, action, x, feedback.reward)

    def estimates(self, state: DisjointState, context: Context) -> jax.Array:
        """``(K,)`` the estimated rewards ``x_a^T theta_a`` of this round's arms."""
        return disjoint_means(state.mean, features(context))

    def sq_widths(self, state: DisjointState, context: Context) -> jax.Array:
        """``(K,)`` the squared widths ``x_a^T A_a^{-1} x_a`` of this round's arms."""
        return disjoint_sq_widths(state, features(context))


@register_agent
class DisjointLinUCB(DisjointAgent):
    """LinUCB with disjoint linear models (Li et al. 2010, Alg. 1): play

        argmax_a  x_{t,a}^T theta_a + alpha sqrt(x_{t,a}^T A_a^{-1} x_{t,a})

    with a constant ``alpha`` (Li et al.: ``alpha = 1 + sqrt(ln(2/delta) / 2)`` for confidence
    ``1 - delta``; in practice tuned). Ties go to the first arm.

    Attributes:
      alpha: the width multiplier (MABWiser's and OBP's ``alpha``; OBP <= 0.5.x calls it
        ``epsilon``).
      reg: lambda (``A_a = reg I`` at the start).

    Example::

        agent = jb.make_agent("disjoint-lin-ucb", alpha=0.5)
    """

    name = "disjoint-lin-ucb"
    description = "LinUCB with one ridge model per arm and a constant alpha (Li et al.)"
    paper = "Li et al. 2010, Alg. 1"

    alpha: float = 1.0

    def validate(self) -> None:
        super().validate()
        check_nonnegative(self, "alpha")

    def scores(self, state: DisjointState, key: jax.Array, context: Context) -> jax.Array:
        """``(K,)`` the upper confidence bounds ``p_{t,a}`` of Alg. 1."""
        widths = jnp.sqrt(self.sq_widths(state, context))
        return self.estimates(state, context) + self.alpha * widths

    def act(self, state: DisjointState, key: jax.Array, context: Context):
        return greedy_index(self.scores(state, key, context)), state


@register_agent
class DisjointLinTS(DisjointAgent):
    """Linear Thompson sampling with one model per arm (Agrawal & Goyal 2013, Alg. 1, applied to
    each arm's own ``B_a = A_a``): draw ``theta~_a ~ N(theta_a, v^2 A_a^{-1})`` independently for
    every arm, play ``argmax_a x_{t,a}^T theta~_a``.

    Agrawal & Goyal's theory takes ``v = R sqrt(24 d ln(1/delta) / epsilon)``; practice tunes
    ``v`` (1: the posterior of a unit-variance Gaussian model with prior ``N(0, I / reg)``).

    Attributes:
      v: the sampling scale (MABWiser's LinTS ``alpha``; OBP's LinTS has none, i.e. ``v = 1``).
      reg: lambda (``A_a = reg I`` at the start).

    Example::

        agent = jb.make_agent("disjoint-lin-ts", v=0.25)
    """

    name = "disjoint-lin-ts"
    description = "linear Thompson sampling with one ridge posterior per arm (scale v)"
    paper = "Agrawal & Goyal 2013, Alg. 1 (per arm, as Li et al. 2010's disjoint model)"

    v: float = 1.0

    def validate(self) -> None:
        super().validate()
        check_nonnegative(self, "v")

    def scores(self, state: DisjointState, key: jax.Array, context: Context) -> jax.Array:
        """``(K,)`` ``x_{t,a}^T theta~_a`` for this round's posterior draws.

        Only these K numbers matter to the argmax, and with ``theta~_a ~ N(theta_a, v^2
        A_a^{-1})`` each is exactly ``N(x_a^T theta_a, v^2 x_a^T A_a^{-1} x_a)``, independent
        across arms: drawn as ``x_a^T theta_a + v ||x_a||_{A_a^{-1}} z_a``, ``z ~ N(0, I_K)``
        (K normals instead of the K d of :func:`~jaxbandits.linalg.disjoint_sample`).
        """
        widths = jnp.sqrt(self.sq_widths(state, context))
        z = jax.random.normal(key, widths.shape, widths.dtype)
        return self.estimates(state, context) + self.v * widths * z

    def act(self, state: DisjointState, key: jax.Array, context: Context):
        return greedy_index(self.scores(state, key, context)), state


@register_agent
class DisjointEpsilonGreedy(DisjointAgent):
    """Epsilon-greedy with one ridge model per arm (Li et al. 2010, Sec. 5.2): a uniform arm
    with probability ``epsilon``, else ``argmax_a x_{t,a}^T theta_a``.

    Attributes:
      epsilon: the exploration probability in [0, 1] (MABWiser's and OBP's ``epsilon``).
      reg: lambda (``A_a = reg I`` at the start).

    Example::

        agent = jb.make_agent("disjoint-epsilon-greedy", epsilon=0.05)
    """

    name = "disjoint-epsilon-greedy"
    description = "epsilon-greedy on one ridge model per arm"
    paper = "Li et al. 2010, Sec. 5.2"

    epsilon: float = 0.1

    def validate(self) -> None:
        super().validate()
        _check_epsilon(self)

    def act(self, state: DisjointState, key: jax.Array, context: Context):
        return epsilon_greedy_action(key, self.estimates(state, context), self.epsilon), state

    def log_prob(self, state: DisjointState, key: jax.Array, context: Context,
                 action: jax.Array) -> jax.Array:
        return epsilon_greedy_log_prob(self.estimates(state, context), self.epsilon, action)


@register_agent
class DisjointEnsemblePlusPlus(EnsemblePlusPlus):
    """Linear Ensemble++ with one model per arm (Li et al. 2024, Sec. 3.1, Eqs. 2-4, per arm).

    Each arm keeps the ridge statistic and an Ensemble++ factor ``A_a`` ``(d, M)`` (a stacked
    :class:`~jaxbandits.linalg.EnsembleState`, leading axis K); a round draws one reference
    ``zeta ~ P_zeta`` shared by the arms and plays ``argmax_a x_{t,a}^T (mu_a + beta A_a
    zeta)``; the played arm's factor takes the Kalman update with targets ``noise_std z``,
    ``z ~ P_z``. This is ``ensemble-pp`` on the block features ``e_a (x) x`` exactly, with
    O(K d (d + M)) work per round instead of O((K d)^2). Fields as ``ensemble-pp`` (``reg``,
    ``noise_std``, ``explore_scale`` = beta, ``ensemble_size`` = M, ``reference``,
    ``perturbation``, ``factor_init``); ``inflation`` is ``"none"`` only.

    Example::

        agent = jb.make_agent("disjoint-ensemble-pp", ensemble_size=16)
    """

    name = "disjoint-ensemble-pp"
    description = "linear Ensemble++ with one factor per arm and a shared reference draw"
    paper = "Li et al. 2024, Sec. 3.1 (per arm, the disjoint model of Li et al. 2010)"
    family = "disjoint"
    action_kinds = ("index",)
    relaxed_updates = False

    def validate(self) -> None:
        super().validate()
        check_choice(self, "inflation", ("none",))

    def init(self, key: jax.Array, spec: Spec) -> EnsembleState:
        one_arm = spec.replace(num_arms=1)
        keys = jax.random.split(key, spec.num_arms)
        return jax.vmap(lambda k: super(DisjointEnsemblePlusPlus, self).init(k, one_arm))(keys)

    def scores(self, state: EnsembleState, key: jax.Array, context: Context) -> jax.Array:
        """``(K,)`` ``x_{t,a}^T (mu_a + beta A_a zeta)`` for this round's reference draw."""
        key_ref, _ = jax.random.split(key)
        zeta = reference_sample(key_ref, self.reference, self.ensemble_size,
                                sparsity=self.sparsity, dtype=state.factor.dtype)
        theta = state.ridge.mean + self.explore_scale * (state.factor @ zeta)
        return disjoint_means(theta, context.arms)

    def act(self, state: EnsembleState, key: jax.Array, context: Context):
        return greedy_index(self.scores(state, key, context)), state

    def update(self, state: EnsembleState, key: jax.Array, context: Context, action: jax.Array,
               feedback: Feedback) -> EnsembleState:
        z = perturbation_sample(key, self.perturbation, self.ensemble_size,
                                sparsity=self.sparsity, dtype=state.factor.dtype)
        one = jax.tree.map(lambda leaf: leaf[action], state)
        new = ensemble_update(one, context.arms[action], feedback.reward, self.noise_std * z)
        return jax.tree.map(lambda leaf, value: leaf.at[action].set(value), state, new)
