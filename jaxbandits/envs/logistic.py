"""Logistic bandits: ``f*(x) = sigmoid(<x, theta*>)``, with Gaussian or Bernoulli rewards.

* ``logistic`` (:class:`LogisticEnv`): the logistic bandit of Sun et al. 2025 (Sec. 7.1), ``reward =
  sigmoid(<x_a, theta*>) +
  N(0, noise_std^2)`` (sigmoid plus Gaussian noise, not Bernoulli), with
  ``d = 20``, ``K = 50``, ``noise_std = 0.5`` and one fixed arm set per run; theta* and the arms
  are unit vectors ``g / ||g||``, ``g ~ N(0, I_d)`` (the paper does not say; drawn by
  :func:`~jaxbandits.envs.linear.draw_vectors`).
* ``logistic-bernoulli`` (:class:`LogisticBernoulliEnv`): the same instance with
  ``reward ~ Bernoulli(sigmoid(<x_a, theta*>))`` (the logistic model of Bae & Lee 2025, Sec. 2,
  and the reward of the anytime group's harness, devzhk/LMCTS).

Both take every option of :class:`~jaxbandits.envs.linear.LinearEnv` (priors, fresh arms every
round, a shared instance) plus ``theta_scale``, which multiplies theta*: with unit theta* and arms
the ``logistic`` gaps are tiny (best minus second about 0.019 at d = 20, K = 50), a larger scale
makes the problem less flat. Feedback carries the exact pseudo-regret ``max_k f*(x_k) - f*(x_a)``.
"""

from __future__ import annotations

import jax
from flax import struct

from jaxbandits.core import Assumptions, Context, Feedback, check_choice, check_positive
from jaxbandits.envs.base import REWARD_KINDS, finite_arm_feedback
from jaxbandits.envs.linear import LinearEnv, LinearEnvState, theta_assumptions
from jaxbandits.registry import register_env

__all__ = ["LogisticBernoulliEnv", "LogisticEnv"]


@register_env
class LogisticEnv(LinearEnv):
    """Logistic bandit with Gaussian noise: ``reward = sigmoid(<x_a, theta*>) + N(0, sigma^2)``.

    Sun et al. 2025's logistic bandit (GLM-ES's experiment, Sec. 7.1): ``d = 20``, ``K = 50``,
    ``sigma = 0.5``, unit theta* and arms, one fixed arm set per run. Regret is ``max_k
    sigmoid(<x_k, theta*>) - sigmoid(<x_a, theta*>)``.

    Attributes (beyond :class:`~jaxbandits.envs.linear.LinearEnv`'s):
      theta_scale: multiplies theta* (``||theta*|| = theta_scale`` with the sphere prior).
      reward_kind: ``"gaussian"`` (mean plus ``N(0, noise_std^2)``) or ``"bernoulli"``
        (``Bernoulli(mean)``; ``noise_std`` is then unused) (static).

    Example::

        env = jb.make_env("logistic")                      # Sun et al. 2025
        env = jb.make_env("logistic", dim=5, num_arms=10, theta_scale=3.0)
    """

    name = "logistic"
    description = "logistic bandit: sigmoid(<x, theta*>) + Gaussian noise"
    paper = "Sun et al. 2025, Sec. 7.1"

    theta_scale: float = 1.0
    reward_kind: str = struct.field(pytree_node=False, default="gaussian")

    agent_families = ("baseline", "linear", "glm")

    def assumptions(self) -> Assumptions:
        """theta* as :class:`LinearEnv` draws it, times ``theta_scale``; the noise of a reward
        around its mean: ``noise_std``, or 1/2 for Bernoulli rewards (1/2-sub-Gaussian)."""
        noise = 0.5 if self.reward_kind == "bernoulli" else self.noise_std
        return theta_assumptions(self.theta_prior, noise, self.prior_var, self.dim,
                                 float(self.theta_scale))

    def validate(self) -> None:
        super().validate()
        check_positive(self, "theta_scale")
        check_choice(self, "reward_kind", REWARD_KINDS)

    def _draw_theta(self, key: jax.Array) -> jax.Array:
        return self.theta_scale * super()._draw_theta(key)

    def init(self, key: jax.Array) -> LinearEnvState:
        state = super().init(key)
        return state.replace(means=jax.nn.sigmoid(state.means))

    def feedback(
        self, key: jax.Array, env_state: LinearEnvState, context: Context, action: jax.Array
    ) -> Feedback:
        if self.fresh_arms:
            means = jax.nn.sigmoid(context.arms @ env_state.theta)
        else:
            means = env_state.means
        return finite_arm_feedback(key, means, action, self.reward_kind, self.noise_std)


@register_env
class LogisticBernoulliEnv(LogisticEnv):
    """Logistic bandit with Bernoulli rewards: ``reward ~ Bernoulli(sigmoid(<x_a, theta*>))``.

    :class:`LogisticEnv` with ``reward_kind="bernoulli"`` (``noise_std`` is unused); the same
    instance generation, fixed arms by default (``fresh_arms=True`` draws new arms every round,
    as the anytime group's harness does).
    """

    name = "logistic-bernoulli"
    description = "logistic bandit with Bernoulli(sigmoid(<x, theta*>)) rewards"
    paper = "Bae & Lee 2025, Sec. 2 (the logistic model)"

    reward_kind: str = struct.field(pytree_node=False, default="bernoulli")
