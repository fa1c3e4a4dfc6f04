"""The ensemble of perturbed ridge members that ``lin-es``, ``ensemble-sampling`` and ``rrls``
share: the perturbation table (one prior draw per member, one reward draw per member and round,
never redrawn), Lee & Oh 2024's theoretical calibration, and the base class
:class:`_MemberEnsemble`. The agents are in :mod:`jaxbandits.agents.ensembles`, which re-exports
these names.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.agents.select import (
    LinearScores,
    chosen_features,
)
from jaxbandits.core import (
    Agent,
    Context,
    Feedback,
    Spec,
    float_dtype,
)
from jaxbandits.linalg import (
    EnsembleState,
    ensemble_init,
    ensemble_update,
)

# ------------------------------------------------------------------------------------------------
# The shared perturbation table of lin-es and lin-phe.


def member_prior_noise(key: jax.Array, member: jax.Array | int, dim: int) -> jax.Array:
    """Member ``j``'s standard-normal initial perturbation ``xi^j`` ``(d,)`` (``W^j`` unscaled)."""
    key = jax.random.fold_in(jax.random.fold_in(key, 0), member)
    return jax.random.normal(key, (dim,), float_dtype())


def member_reward_noise(
    key: jax.Array, member: jax.Array | int, step: jax.Array | int
) -> jax.Array:
    """Member ``j``'s standard-normal reward perturbation of observation ``s`` (0-based), ``()``."""
    key = jax.random.fold_in(jax.random.fold_in(jax.random.fold_in(key, 1), member), step)
    return jax.random.normal(key, (), float_dtype())


def theory_perturb_std(
    dim: int,
    horizon: int,
    noise_std: float,
    reg: float = 1.0,
    delta: float = 0.05,
    param_bound: float = 1.0,
) -> float:
    """Lee & Oh's theoretical calibration ``sigma_R = beta_T(delta)`` (Lee & Oh 2024, Thm 1).

    ``beta_T = sigma sqrt(d log(1 + T / (d lambda)) + 2 log(1/delta)) + sqrt(lambda) S``, with
    ``sigma`` = ``noise_std`` and ``S`` = ``param_bound``. It over-explores heavily in practice;
    the practical calibration is ``sigma_R = noise_std`` (Lu & Van Roy).

    Example::

        agent = jb.make_agent("lin-es", perturb_std=theory_perturb_std(20, 10_000, 0.5))
    """
    log_term = dim * math.log1p(horizon / (dim * reg)) + 2.0 * math.log(1.0 / delta)
    return noise_std * math.sqrt(log_term) + math.sqrt(reg) * param_bound


# ------------------------------------------------------------------------------------------------
# Linear ensemble sampling (Lee & Oh; Lu & Van Roy; RRLS).


class LinESState(struct.PyTreeNode):
    """State of a linear ensemble-sampling agent.

    Attributes:
      ensemble: the ridge statistic and the ``(d, m)`` factor whose column ``j`` is member
        ``j``'s offset ``theta^j - mu_t = V_t^{-1} (W^j + sum_s x_s Z_s^j)``.
      noise_key: the key of the perturbation table (:func:`member_prior_noise`,
        :func:`member_reward_noise`).
    """

    ensemble: EnsembleState
    noise_key: jax.Array


class _MemberEnsemble(LinearScores, Agent):
    """Plumbing shared by the ensemble-sampling agents; subclasses map their fields to the math.

    Member ``j`` is ridge regression towards ``W^j / reg`` on the rewards ``y_s + Z_s^j`` with
    ``W^j = sqrt(reg) * init_std * xi^j`` and ``Z_s^j = perturb_std * N(0, 1)``.
    """

    reg_is_prior = True
    relaxed_updates = True

    def _num_members(self) -> int:
        raise NotImplementedError

    def _perturb_std(self) -> jax.Array:
        """sigma_R, the standard deviation of the reward perturbations."""
        raise NotImplementedError

    def _init_std(self) -> jax.Array:
        """The std of ``W^j / sqrt(reg)`` (0 for no initial perturbation)."""
        raise NotImplementedError

    def _select(self, state: LinESState, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (), 0, self._num_members())

    def init(self, key: jax.Array, spec: Spec) -> LinESState:
        members = jnp.arange(self._num_members())
        xi = jax.vmap(lambda j: member_prior_noise(key, j, spec.dim))(members)  # (m, d)
        # theta_0^j - mu_0 = W^j / reg = init_std * xi^j / sqrt(reg)
        factor = (self._init_std() / jnp.sqrt(jnp.asarray(self.reg, xi.dtype))) * xi.T
        return LinESState(ensemble=ensemble_init(factor, self.reg), noise_key=key)

    def estimate(self, state: LinESState, member: jax.Array) -> jax.Array:
        """Member ``j``'s estimate ``theta^j = mu_t + A_t e_j``, shape ``(d,)``."""
        return state.ensemble.ridge.mean + state.ensemble.factor[:, member]

    def parameter(self, state: LinESState, key: jax.Array, context: Context) -> jax.Array:
        return self.estimate(state, self._select(state, key))

    def update(
        self,
        state: LinESState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> LinESState:
        step = state.ensemble.ridge.count
        members = jnp.arange(self._num_members())
        noise = jax.vmap(lambda j: member_reward_noise(state.noise_key, j, step))(members)
        targets = self._perturb_std() * noise
        x = chosen_features(context, action)
        ensemble = ensemble_update(state.ensemble, x, feedback.reward, targets)
        return state.replace(ensemble=ensemble)
