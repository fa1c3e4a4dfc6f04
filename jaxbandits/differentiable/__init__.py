"""Differentiable bandit research: gradients of the expected cumulative reward with respect to an
agent's float leaves, and meta-learning by gradient (Boutilier et al., "Differentiable
Meta-Learning of Bandit Policies", NeurIPS 2020).

Two estimators, both one jitted program over runs (``lax.scan`` over rounds, rematerialised per
chunk of rounds so memory grows with ``sqrt(T)``, not ``T``):

* **Score function** (:func:`policy_gradient`), for agents that draw their arm from an explicit
  distribution (the ``log_prob`` method of the agent protocol; ``soft-elim``, ``softmax``,
  ``neural-policy``). Unbiased for the hard policy: with ``L_t = sum_{s<=t} log pi(a_s | H_s)``
  and rewards ``r_t``, the gradient of ``E[sum_t r_t]`` is
  ``E[sum_t (r_t - b_t) grad L_t]`` for any baseline ``b_t`` independent of the actions from
  round ``t`` on: ``"none"``; ``"mean"``, the round's mean reward over the other runs; or
  ``"self-play"`` (the paper's), the rewards of the same policy run again on the same instance.

* **Pathwise through a relaxed rollout** (:func:`relaxed_rollout`, :func:`relaxed_gradient`),
  for agents that play ``argmax_k scores_k`` (the ``scores`` method; the ridge, ensemble and
  K-armed agents). Each round plays the soft action ``w = softmax(scores / temperature)``
  (``relaxation="softmax"``), or forward the hard arm with ``w``'s gradient backward
  (``"straight-through"``: the agent's own argmax, so the forward pass *is* the hard rollout;
  ``"gumbel"``: a Gumbel-max sample ``argmax(scores / temperature + g)``); the agent learns
  from the features ``w @ arms`` and the reward ``w @ mu + noise`` (the hard arm's noise), and
  the objective is the expected reward ``sum_t w_t @ mu_t``. ``jax.grad`` then flows through
  the whole rollout to ``explore_scale``, ``reg``, ``perturb_std``, prior scales and network
  parameters. As the temperature goes to 0 the softmax rollout becomes the hard one (up to
  exact ties of scores, which a soft action shares between the tied arms).

  Limits: the rollout is a chaotic map of the parameters over long horizons; at low
  temperatures the pathwise gradient of optimistic agents (LinUCB) explodes with T (measured:
  per-run gradients of 1e6-1e15 at T = 500 and temperature <= 0.03), while larger temperatures
  bias the optimum (the soft action explores by itself). Sampling agents (LinTS, ensembles) and
  short horizons are well behaved; for LinUCB prefer the score function on
  ``Softmax(agent=lin-ucb)``.

Key streams are the runner's: run ``r`` of :func:`policy_gradient` or :func:`relaxed_rollout`
meets the same instance, contexts and noise as run ``r`` of ``jb.simulate`` with the same key.

Modules: :mod:`~jaxbandits.differentiable.common` (learnable leaves, checks, the rematerialised
rollout, key streams), :mod:`~jaxbandits.differentiable.score` (score function),
:mod:`~jaxbandits.differentiable.relaxed` (relaxed rollouts),
:mod:`~jaxbandits.differentiable.meta` (meta-learning). Every rollout is
:func:`jaxbandits.runner.rollout` over a round function of its own.
"""

from jaxbandits.differentiable.common import (
    BASELINES,
    POSITIVE_FIELDS,
    RELAXATIONS,
    GradientEstimate,
    learnable_leaves,
)
from jaxbandits.differentiable.meta import MODES, OPTIMIZERS, MetaLearnResult, meta_learn
from jaxbandits.differentiable.relaxed import (
    RelaxedRollout,
    relaxed_gradient,
    relaxed_rollout,
)
from jaxbandits.differentiable.score import policy_gradient

__all__ = [
    "BASELINES",
    "GradientEstimate",
    "MODES",
    "MetaLearnResult",
    "OPTIMIZERS",
    "POSITIVE_FIELDS",
    "RELAXATIONS",
    "RelaxedRollout",
    "learnable_leaves",
    "meta_learn",
    "policy_gradient",
    "relaxed_gradient",
    "relaxed_rollout",
]
