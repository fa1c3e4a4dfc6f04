"""The classic K-armed Bernoulli bandit, the setting of differentiable meta-learning.

Arm ``i`` pays ``Bernoulli(mu_i)``; the arms are the one-hot vectors ``e_1, ..., e_K`` (so linear
agents see a K-armed bandit too). Each run draws its instance ``mu_i ~ Beta(prior_alpha,
prior_beta)`` independently per arm, the instance distribution that Boutilier et al. (2020,
"Differentiable Meta-Learning of Bandit Policies") learn policies for; ``means=`` fixes one
instance for every run instead.

The environment states its expected rewards through the optional protocol method
``mean_rewards(env_state, context) -> (K,)``, which differentiable rollouts read
(:mod:`jaxbandits.differentiable`); ``feedback`` draws its reward and regret from it.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxbandits.core import Assumptions, Context, Env, Feedback, Spec, check_positive, float_dtype
from jaxbandits.envs.base import finite_arm_feedback
from jaxbandits.registry import register_env

__all__ = ["BernoulliEnv", "BernoulliEnvState"]


class BernoulliEnvState(struct.PyTreeNode):
    """One Bernoulli bandit instance.

    Attributes:
      means: ``(K,)`` the arms' success probabilities mu_i in [0, 1].
    """

    means: jax.Array


@register_env
class BernoulliEnv(Env):
    """K-armed Bernoulli bandit: ``reward ~ Bernoulli(mu_a)``, regret ``max_i mu_i - mu_a``.

    Arms are one-hot features (``Context.arms = I_K`` every round; ``Spec(dim=K, num_arms=K,
    fixed_arms=True)``). Per run, ``mu_i ~ Beta(prior_alpha, prior_beta)`` i.i.d. over arms
    (uniform means by default), unless ``means`` fixes them.

    Attributes:
      num_arms: K (at least 2; default 10).
      prior_alpha, prior_beta: the Beta instance prior of every arm's mean (> 0; default 1, 1).
      means: if given, a tuple of K numbers in [0, 1]: every run plays exactly these means (and
        ``instance_seed`` and the prior are not used).
      instance_seed: if set, every run shares the one instance drawn from this seed (a
        frequentist setting); otherwise each run draws its own instance.

    Rewards lie in [0, 1], so they are 1/2-sub-Gaussian (``assumptions().noise_std = 0.5``).
    Cost per round: O(K) (one uniform draw; the context is a constant).

    Example::

        env = jb.make_env("bernoulli", num_arms=5)                # mu_i ~ Beta(1, 1) per run
        hard = jb.make_env("bernoulli", num_arms=2, means=(0.5, 0.6))
    """

    name = "bernoulli"
    description = "K-armed Bernoulli bandit, arm means ~ Beta(prior_alpha, prior_beta) per run"
    paper = "Boutilier et al. 2020"
    agent_families = ("baseline", "mab", "differentiable")
    task = "bernoulli"

    num_arms: int = struct.field(pytree_node=False, default=10)
    prior_alpha: float = 1.0
    prior_beta: float = 1.0
    means: tuple[float, ...] | None = struct.field(pytree_node=False, default=None)
    instance_seed: int | None = struct.field(pytree_node=False, default=None)

    def __post_init__(self):
        # A list or array of means becomes a tuple (static fields must be hashable); anything
        # else is left for validate() to reject.
        if isinstance(self.means, (list, np.ndarray, jax.Array)):
            object.__setattr__(self, "means", tuple(np.asarray(self.means).tolist()))

    def validate(self) -> None:
        super().validate()
        if self.num_arms < 2:
            raise ValueError(f"{self.name}: num_arms must be an integer >= 2, got "
                             f"{self.num_arms!r}")
        check_positive(self, "prior_alpha")
        check_positive(self, "prior_beta")
        if self.means is not None:
            self._check_means()

    def _check_means(self) -> None:
        means, k = self.means, self.num_arms
        ok = isinstance(means, tuple) and len(means) == k and all(
            isinstance(m, (int, float, np.integer, np.floating)) and not isinstance(m, bool)
            and math.isfinite(m) and 0.0 <= m <= 1.0 for m in means)
        if not ok:
            text = repr(means)
            text = text if len(text) <= 80 else text[:77] + "..."
            raise ValueError(f"{self.name}: means must be None or a tuple of num_arms={k} "
                             f"numbers in [0, 1], got {text}")

    def spec(self) -> Spec:
        return Spec(dim=self.num_arms, num_arms=self.num_arms, action_kind="index",
                    fixed_arms=True)

    def assumptions(self) -> Assumptions:
        """Rewards in [0, 1]: 1/2-sub-Gaussian noise; no linear parameter."""
        return Assumptions(noise_std=0.5)

    def init(self, key: jax.Array) -> BernoulliEnvState:
        dtype = float_dtype()
        if self.means is not None:
            return BernoulliEnvState(means=jnp.asarray(self.means, dtype))
        if self.instance_seed is not None:
            key = jax.random.key(self.instance_seed)
        means = jax.random.beta(key, self.prior_alpha, self.prior_beta, (self.num_arms,), dtype)
        return BernoulliEnvState(means=means)

    def observe(self, key: jax.Array, env_state: BernoulliEnvState, t: jax.Array) -> Context:
        return Context(arms=jnp.eye(self.num_arms, dtype=env_state.means.dtype))

    def mean_rewards(self, env_state: BernoulliEnvState, context: Context) -> jax.Array:
        """``(K,)`` the expected reward of every arm this round (the instance's mu)."""
        return env_state.means

    def feedback(
        self, key: jax.Array, env_state: BernoulliEnvState, context: Context, action: jax.Array
    ) -> Feedback:
        return finite_arm_feedback(key, self.mean_rewards(env_state, context), action,
                                   "bernoulli")
