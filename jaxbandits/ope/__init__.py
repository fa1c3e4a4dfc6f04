"""Off-policy evaluation: a target policy's value estimated from logged bandit feedback.

* :mod:`~jaxbandits.ope.estimators`: :func:`evaluate` (IPS, SNIPS, the direct method, doubly
  robust and switch-DR, with clipping, for many target policies and bootstrap resamples in one
  jitted call) and its :class:`OPEResult`.
* :mod:`~jaxbandits.ope.policy`: :func:`action_probs`, an agent's action probabilities on the
  logged contexts (exact where the agent declares them, else Monte Carlo with its standard
  error), and :func:`fit_on_log`, an agent trained on a log.
* :mod:`~jaxbandits.ope.reward`: :func:`fit_reward_model`, ``q(x, a)`` for DM and DR (per-action
  ridge in closed form, or a small network).

Logs are :class:`~jaxbandits.data.BanditLog` (:func:`~jaxbandits.data.load_logs`,
:func:`~jaxbandits.data.load_obd_logs`).

Example::

    log = jb.data.load_obd_logs("random", "men")
    uniform = jnp.full((log.num_rounds, log.num_actions), 1 / log.num_actions)
    print(jb.ope.evaluate(log, uniform, jb.ope.fit_reward_model(log)))
"""

from jaxbandits.ope.estimators import ESTIMATORS, INTERVALS, OPEResult, evaluate
from jaxbandits.ope.policy import (
    ActionProbs,
    action_probs,
    beta_thompson_probs,
    block_arms,
    default_context_fn,
    fit_on_log,
    log_spec,
)
from jaxbandits.ope.reward import REWARD_MODELS, RewardModel, fit_reward_model

__all__ = [
    "ESTIMATORS",
    "INTERVALS",
    "REWARD_MODELS",
    "ActionProbs",
    "OPEResult",
    "RewardModel",
    "action_probs",
    "beta_thompson_probs",
    "block_arms",
    "default_context_fn",
    "evaluate",
    "fit_on_log",
    "fit_reward_model",
    "log_spec",
]
