"""K-armed (multi-armed) bandit agents on per-arm statistics: UCB1, Bernoulli TS and SoftElim.

On a fixed arm set (``spec.fixed_arms``: arm ``i`` is the same in every round) the smallest exact
statistic of the history is, per arm, the pull count ``T_i`` and the reward sum ``S_i``
(:class:`ArmStats`, one O(K) update per round). Every agent here keeps exactly that:

* ``ucb1`` (:class:`UCB1`, Auer, Cesa-Bianchi & Fischer 2002): optimism,
  ``argmax_i mu_i + explore_scale * sqrt(2 log t / T_i)``.
* ``bernoulli-ts`` (:class:`BernoulliTS`, Agrawal & Goyal 2012; Chapelle & Li 2011): Thompson
  sampling from the Beta-Bernoulli posterior ``Beta(prior_alpha + S_i, prior_beta + T_i - S_i)``.
* ``soft-elim`` (:class:`SoftElim`, Boutilier et al. 2020): arm ``i`` with probability
  ``proportional to exp(-2 T_i (max_j mu_j - mu_i)^2 / explore_scale)``, the policy that
  "Differentiable Meta-Learning of Bandit Policies" learns ``explore_scale`` (theta) of.

The statistics take relaxed (soft) actions too: a float ``(K,)`` vector of arm weights adds
fractional pulls (:func:`arm_stats_update`), and the scores stay finite with fractional counts,
so relaxed rollouts (:mod:`jaxbandits.differentiable`) can play ``softmax(scores / temperature)``
and differentiate through the whole history.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.agents.select import SoftmaxPolicy, action_weights, greedy_index
from jaxbandits.core import Agent, Context, Feedback, Spec, check_positive, float_dtype
from jaxbandits.registry import register_agent

__all__ = [
    "UNTRIED_SCORE",
    "ArmStats",
    "BernoulliTS",
    "MABAgent",
    "SoftElim",
    "UCB1",
    "arm_stats_init",
    "arm_stats_update",
    "empirical_means",
    "pulled_arms",
    "untried_scores",
]

#: The least score of an arm never pulled in index policies (UCB1): above any index at ordinary
#: settings (rewards in [0, 1]), yet finite, so that ``softmax(scores / temperature)`` never
#: meets ``inf - inf``. Untried arm ``i`` of K scores ``UNTRIED_SCORE * (2 - i / K)``
#: (:func:`untried_scores`).
UNTRIED_SCORE = 1e6


class ArmStats(struct.PyTreeNode):
    """Per-arm statistics of a K-armed history.

    Attributes:
      counts: ``(K,)`` float, T_i, the pulls of each arm (float, so that relaxed actions add
        fractional pulls).
      sums: ``(K,)`` float, S_i, the sum of each arm's rewards (weighted by the pull weights).
      rounds: ``()`` float, t, the rounds played so far.
    """

    counts: jax.Array
    sums: jax.Array
    rounds: jax.Array


def arm_stats_init(num_arms: int, dtype=None) -> ArmStats:
    """Empty statistics of ``num_arms`` arms (dtype default :func:`~jaxbandits.core.float_dtype`).

    Example::

        stats = arm_stats_init(5)       # counts (5,), sums (5,), rounds () all zero
    """
    dtype = dtype or float_dtype()
    zeros = jnp.zeros((num_arms,), dtype)
    return ArmStats(counts=zeros, sums=zeros, rounds=jnp.zeros((), dtype))


def arm_stats_update(stats: ArmStats, action: jax.Array, reward: jax.Array) -> ArmStats:
    """Adds one round: ``T += w``, ``S += w * reward``, ``t += 1``, where ``w`` is the one-hot
    vector of an index ``action`` or a relaxed action's ``(K,)`` weights as they are
    (:func:`~jaxbandits.agents.select.action_weights`). O(K)."""
    dtype = stats.counts.dtype
    w = action_weights(action, stats.counts.shape[-1], dtype)
    reward = jnp.asarray(reward, dtype)
    return ArmStats(counts=stats.counts + w, sums=stats.sums + w * reward,
                    rounds=stats.rounds + 1)


def pulled_arms(counts: jax.Array) -> jax.Array:
    """``(K,)`` bool: the arms with a count above ``sqrt(tiny)`` of the dtype (1e-19 in float32).

    Below it an arm counts as untried. The threshold keeps ``1 / T_i^2`` (the derivative of
    ``S_i / T_i``) finite, so gradients through fractional counts never overflow to inf (which
    would turn a zero cotangent into NaN). Integer counts are unaffected.
    """
    return counts > jnp.sqrt(jnp.finfo(counts.dtype).tiny)


def untried_scores(num_arms: int, dtype=None) -> jax.Array:
    """``(K,)`` the scores of untried arms: ``UNTRIED_SCORE * (2 - i / K)`` for arm ``i``, all
    in ``(1e6, 2e6]``, decreasing in ``i`` by ``1e6 / K``.

    Hard play takes the untried arms in index order (as a tie would, by the first maximiser);
    ``softmax(scores / temperature)`` does too, one arm at a time, at any temperature well below
    ``1e6 / K``. Equal scores would give every untried arm the same weight, and so the same
    fractional statistics for ever: a symmetry that a relaxed rollout never breaks.
    """
    dtype = dtype or float_dtype()
    return UNTRIED_SCORE * (2.0 - jnp.arange(num_arms, dtype=dtype) / num_arms)


def empirical_means(stats: ArmStats) -> jax.Array:
    """``(K,)`` the empirical means ``mu_i = S_i / T_i``, and 0 for an arm not pulled.

    Written with a double ``where`` (the division never sees a zero count), so values and
    gradients stay finite for zero and fractional counts (see :func:`pulled_arms`).
    """
    pulled = pulled_arms(stats.counts)
    return jnp.where(pulled, stats.sums / jnp.where(pulled, stats.counts, 1), 0)


class MABAgent(Agent):
    """Base of the K-armed agents: :class:`ArmStats` as state, built and updated here.

    Subclasses write ``scores(state, key, context) -> (K,)`` (finite; ``act`` plays
    ``greedy_index(scores)``, and relaxed rollouts ``softmax(scores / temperature)``) or
    override ``act`` (:class:`SoftElim` draws from its softmax). Needs a fixed arm set
    (``spec.fixed_arms``); the arms' features are never read.
    """

    family = "mab"
    action_kinds = ("index",)
    relaxed_updates = True

    def init(self, key: jax.Array, spec: Spec) -> ArmStats:
        if not spec.fixed_arms:
            raise ValueError(f"{self.name or type(self).__name__} needs a fixed arm set "
                             "(spec.fixed_arms): per-arm statistics need the same arms in "
                             "every round; this environment changes them (use a contextual "
                             "agent, e.g. lin-ts)")
        return arm_stats_init(spec.num_arms)

    def act(self, state: ArmStats, key: jax.Array, context: Context):
        return greedy_index(self.scores(state, key, context)), state

    def update(
        self,
        state: ArmStats,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> ArmStats:
        return arm_stats_update(state, action, feedback.reward)


@register_agent
class UCB1(MABAgent):
    """UCB1: pull each arm once, then ``argmax_i mu_i + explore_scale * sqrt(2 log t / T_i)``.

    ``mu_i = S_i / T_i`` is arm i's empirical mean, ``T_i`` its pulls and ``t`` the rounds played
    so far (Auer, Cesa-Bianchi & Fischer 2002, with rewards in [0, 1]; ``explore_scale = 1``
    is the paper's index, smaller values explore less). Untried arms score above any index
    (finite, decreasing in the arm's index: :func:`untried_scores`), so the first K rounds play
    arms 0, 1, ..., K-1 in order, in hard and in relaxed play.
    With fractional counts (relaxed actions) the bonus stays finite: it is written
    ``sqrt(2 log t) * rsqrt(T_i)`` for ``t > 1`` and 0 otherwise.

    Attributes:
      explore_scale: the multiplier of the confidence width (>= 0; default 1).

    Cost per round: O(K).

    Example::

        env = jb.make_env("bernoulli", num_arms=5)
        result = jb.simulate(env, jb.make_agent("ucb1", explore_scale=0.5), 0, 1000, 100)
    """

    name = "ucb1"
    description = "UCB1: empirical mean plus sqrt(2 log t / T_i) (K-armed)"
    paper = "Auer et al. 2002; baseline of Boutilier et al. 2020"

    explore_scale: float = 1.0

    def scores(self, state: ArmStats, key: jax.Array, context: Context) -> jax.Array:
        """``(K,)`` the UCB1 index of every arm (:func:`untried_scores` for untried arms)."""
        t = state.rounds
        played = t > 1  # log t > 0 (double where: no log(0) and no sqrt'(0) in gradients)
        root_log = jnp.where(played, jnp.sqrt(2.0 * jnp.log(jnp.where(played, t, 2.0))), 0.0)
        pulled = pulled_arms(state.counts)
        inv_root = jax.lax.rsqrt(jnp.where(pulled, state.counts, 1.0))
        index = empirical_means(state) + self.explore_scale * root_log * inv_root
        return jnp.where(pulled, index, untried_scores(index.shape[-1], index.dtype))


@register_agent
class BernoulliTS(MABAgent):
    """Thompson sampling with a Beta-Bernoulli posterior: ``argmax_i theta_i``,
    ``theta_i ~ Beta(prior_alpha + S_i, prior_beta + T_i - S_i)``.

    Agrawal & Goyal (2012); Chapelle & Li (2011). A reward in [0, 1] counts as a fractional
    success (``S_i`` is the sum of the rewards; no random binarisation), so the posterior and
    its draws (``jax.random.beta``, differentiable in its parameters by implicit
    reparameterisation) are smooth functions of the history. Rewards outside [0, 1] (another
    environment's) are clipped into the successes' range ``0 <= S_i <= T_i``, keeping the
    posterior proper.

    Attributes:
      prior_alpha, prior_beta: the Beta prior of every arm's mean (> 0; default 1, 1: uniform).

    Cost per round: O(K) (K Beta draws).

    Example::

        env = jb.make_env("bernoulli", num_arms=5, prior_alpha=2.0, prior_beta=5.0)
        agent = jb.make_agent("bernoulli-ts", prior_alpha=2.0, prior_beta=5.0)  # well specified
        result = jb.simulate(env, agent, 0, 1000, 100)
    """

    name = "bernoulli-ts"
    description = "Thompson sampling from the Beta-Bernoulli posterior (K-armed)"
    paper = "Agrawal & Goyal 2012; Chapelle & Li 2011; baseline of Boutilier et al. 2020"

    prior_alpha: float = 1.0
    prior_beta: float = 1.0

    def validate(self) -> None:
        super().validate()
        check_positive(self, "prior_alpha")
        check_positive(self, "prior_beta")

    def posterior(self, state: ArmStats) -> tuple[jax.Array, jax.Array]:
        """``(alpha, beta)``, each ``(K,)``: ``prior_alpha + S_i`` and ``prior_beta + T_i - S_i``
        (with ``S_i`` clipped into ``[0, T_i]``)."""
        counts, sums = state.counts, state.sums
        inside = (sums >= 0) & (sums <= counts)  # where, not clip: full gradient at S_i = T_i
        successes = jnp.where(inside, sums, jnp.clip(sums, 0, counts))
        return self.prior_alpha + successes, self.prior_beta + counts - successes

    def scores(self, state: ArmStats, key: jax.Array, context: Context) -> jax.Array:
        """``(K,)`` one posterior draw per arm."""
        alpha, beta = self.posterior(state)
        return jax.random.beta(key, alpha, beta, dtype=state.counts.dtype)


@register_agent
class SoftElim(SoftmaxPolicy, MABAgent):
    """SoftElim: arm i with probability ``proportional to exp(-2 T_i (max_j mu_j - mu_i)^2 /
    explore_scale)``.

    Boutilier et al. 2020, "Differentiable Meta-Learning of Bandit Policies", Sec. 5: a
    soft elimination of arms that look worse than the empirical best by a gap the Hoeffding
    bound ``exp(-2 T_i gap^2)`` makes unlikely; ``explore_scale`` is the paper's theta, the
    parameter its gradient meta-learns (theta -> infinity: uniform play; theta -> 0: greedy
    among pulled arms). ``mu_i`` are empirical means; an unpulled arm has logit 0, the largest.
    The policy is explicit: ``logits`` and ``log_prob`` (:class:`~jaxbandits.agents.select.
    SoftmaxPolicy`) serve score-function gradients.

    Attributes:
      explore_scale: theta (> 0; default 1).

    Cost per round: O(K).

    Example::

        env = jb.make_env("bernoulli", num_arms=5)
        grid = {"explore_scale": [0.1, 0.3, 1.0]}     # theta: one compilation for the grid
        results = jb.sweep(env, jb.make_agent("soft-elim"), 0, grid, horizon=1000, num_runs=100)
    """

    name = "soft-elim"
    description = "SoftElim: softmax of -2 T_i gap_i^2 / theta (the meta-learned policy)"
    paper = "Boutilier et al. 2020"
    family = "differentiable"

    explore_scale: float = 1.0

    def validate(self) -> None:
        super().validate()
        check_positive(self, "explore_scale")

    def logits(self, state: ArmStats, key: jax.Array, context: Context) -> jax.Array:
        """``(K,)`` ``-2 T_i (max_j mu_j - mu_i)^2 / explore_scale``."""
        means = empirical_means(state)
        gaps = jnp.max(means) - means
        return -2.0 * state.counts * gaps**2 / self.explore_scale
