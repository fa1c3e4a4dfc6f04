"""Closed-form ensemble agents: linear ensemble sampling, LinPHE, RRLS and linear Ensemble++.

All of them keep the shared ridge statistic (``V_t = reg I + sum_s x_s x_s^T``, ``mu_t`` the ridge
estimate, a square root of ``V_t^{-1}``) and perturb it in closed form, with fixed-shape states:
no gradient steps and no growing history (LinPHE's optional buffer has a fixed capacity):

* ``lin-es`` (:class:`LinES`, Lee & Oh 2024, Alg. 1): m members
  ``theta^j = V_t^{-1} (W^j + sum_s x_s (y_s + Z_s^j))``, kept as the columns of an ensemble
  factor (:mod:`jaxbandits.linalg.ensemble`) and updated together in O(d^2 + m d).
* ``ensemble-sampling`` (:class:`EnsembleSampling`, Lu & Van Roy 2017, Li et al. 2024, App. A.5) and
  ``rrls`` (:class:`RRLS`, Li et al. 2024, App. A.4, Alg. 2): the same estimator in Bayesian form.
* ``lin-phe`` (:class:`LinPHE`, Lee & Oh 2024, Alg. 2): the same estimator with ``W`` and every
  ``Z`` redrawn each round.
* ``ensemble-pp`` (:class:`EnsemblePlusPlus`, Li et al. 2024, Sec. 3.1, Eqs. 2-4): the sample
  ``mu_t + beta A_t zeta`` from a shared factor ``A_t`` updated in Kalman form.

**Shared perturbation table.** ``lin-es`` (and its Bayesian forms) and ``lin-phe`` read their
perturbations from one lazily evaluated random table, keyed by the agent's init key:
``W^j = member_prior_noise(key, j, d)`` and ``Z_s^j = member_reward_noise(key, j, s)`` (standard
normals, scaled by the agent). ``lin-es`` member ``j`` uses ``W^j`` and ``Z_s^j`` for every step
``s``; ``lin-phe`` at round ``t`` uses ``W^t`` and ``Z_s^t`` for ``s < t``. So ``lin-es`` with
``m = T`` members and round-robin selection and ``lin-phe`` given the same init key play the same
actions with the same estimates (Lee & Oh, Proposition 2), pathwise.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.agents.linear import oful_radius
from jaxbandits.agents.member_ensemble import (
    LinESState,
    _MemberEnsemble,
    member_prior_noise,
    member_reward_noise,
    theory_perturb_std,
)
from jaxbandits.agents.select import (
    LinearScores,
    action_weights,
    best_action,
    chosen_features,
    uniform_action,
)
from jaxbandits.core import (
    Agent,
    Context,
    Feedback,
    Spec,
    check_choice,
    check_positive,
    float_dtype,
)
from jaxbandits.linalg import (
    AUTO_BUFFER,
    FACTOR_INITS,
    PERTURBATIONS,
    REFERENCES,
    EnsembleState,
    RidgeState,
    ensemble_init,
    ensemble_sample,
    ensemble_update,
    kalman_gain,
    perturbation_sample,
    prior_factor,
    reference_sample,
    ridge_init,
    ridge_update,
)
from jaxbandits.registry import register_agent
from jaxbandits.ring import ring_slot, ring_write

__all__ = [
    "RRLS",
    "EnsemblePlusPlus",
    "EnsembleSampling",
    "LinES",
    "LinESState",
    "LinPHE",
    "LinPHEState",
    "member_prior_noise",
    "member_reward_noise",
    "theory_perturb_std",
]

SELECTIONS: tuple[str, ...] = ("uniform", "round_robin")
INFLATIONS: tuple[str, ...] = ("none", "theory")


@register_agent
class LinES(_MemberEnsemble):
    """Linear ensemble sampling, Lee & Oh 2024, Alg. 1.

    Member ``j`` of ``m`` = ``ensemble_size``::

        theta_t^j = argmin reg ||theta - W^j / reg||^2 + sum_{s<=t} (x_s^T theta - y_s - Z_s^j)^2
                  = V_t^{-1} (W^j + sum_s x_s (y_s + Z_s^j)),  V_t = reg I + sum_s x_s x_s^T

    with ``W^j ~ N(0, reg (prior_scale sigma_R)^2 I)`` (Lee & Oh 2024, Eq. 6; off with
    ``init_perturbation=False``) and ``Z_s^j ~ N(0, sigma_R^2)``, sigma_R = ``perturb_std``, drawn
    once and never redrawn. Round t plays ``argmax_x <x, theta_{t-1}^{j_t}>`` (or the unit vector
    on a compact set) with ``j_t`` uniform (Theorem 1) or round-robin ``t mod m`` (with ``m = T``
    this is LinPHE, Proposition 2); every member then absorbs ``(x_t, y_t + Z_t^j)`` through the
    shared gain ``V_t^{-1} x_t``. O(d^2 + m d + K d) per round, O(d^2 + m d) memory.

    Defaults: ``reg = 1`` (the theory needs ``lambda >= 1``), the practical calibration
    ``perturb_std = 0.5`` (= the ``linear`` environment's noise std; Lee & Oh's theory uses
    ``beta_T``, see :func:`theory_perturb_std`) and Sun et al. 2025's ``m = 25`` (Sec. 7.2). The
    anytime-ensemble paper's Lin-ES (Sun et al. 2025, Sec. 7.1: no initial perturbation, ``sigma_R =
    0.1``) is ``jb.make_agent("lin-es", init_perturbation=False, perturb_std=0.1)``; its first round
    is an all-way tie (lowest index).

    Attributes:
      reg: lambda.  perturb_std: sigma_R.  ensemble_size: m (static).
      prior_scale: multiplier of the initial perturbation's std (``W^j`` has std
        ``sqrt(reg) * prior_scale * perturb_std``).
      init_perturbation: draw ``W^j`` (static; False gives ``W^j = 0``).
      selection: ``"uniform"`` or ``"round_robin"`` (static).
    """

    perturb_is_noise = True

    name = "lin-es"
    description = "linear ensemble sampling: m perturbed ridge members, one shared inverse"
    paper = "Lee & Oh 2024, Alg. 1; Lin-ES of Sun et al. 2025, Sec. 7.1"
    family = "linear"
    action_kinds = ("index", "vector")

    reg: float = 1.0
    perturb_std: float = 0.5
    prior_scale: float = 1.0
    ensemble_size: int = struct.field(pytree_node=False, default=25)
    init_perturbation: bool = struct.field(pytree_node=False, default=True)
    selection: str = struct.field(pytree_node=False, default="uniform")

    def validate(self) -> None:
        super().validate()
        check_choice(self, "selection", SELECTIONS)

    def _num_members(self) -> int:
        return self.ensemble_size

    def _perturb_std(self) -> jax.Array:
        return self.perturb_std

    def _init_std(self) -> jax.Array:
        return self.prior_scale * self.perturb_std if self.init_perturbation else 0.0

    def _select(self, state: LinESState, key: jax.Array) -> jax.Array:
        if self.selection == "round_robin":
            return state.ensemble.ridge.count % self.ensemble_size
        return super()._select(state, key)


@register_agent
class EnsembleSampling(_MemberEnsemble):
    """Ensemble sampling of Lu & Van Roy (2017), linear Gaussian form (Li et al. 2024, App. A.5).

    Each of ``M`` = ``ensemble_size`` models starts from a prior draw
    ``theta_{0,m} ~ N(0, Sigma_0)``, ``Sigma_0 = noise_std^2 / reg I``, and absorbs every
    observation with its own fresh noise ``W_{t,m} ~ N(0, noise_std^2)``, drawn once::

        theta_{t,m} = Sigma_t (Sigma_{t-1}^{-1} theta_{t-1,m} + x_t (y_t + W_{t,m}) / sigma^2)
                    = theta_{t-1,m} + k_t (y_t + W_{t,m} - x_t^T theta_{t-1,m})   (Kalman form)

    and round t acts greedily on a uniformly drawn model. This is :class:`LinES` with
    ``perturb_std = noise_std`` and ``prior_scale = 1`` (Lee & Oh 2024, Sec. 6), and shares its
    code and perturbation table. Defaults are Ensemble++'s linear experiments: ``Sigma_0 = 10 I``,
    ``sigma = 1`` (``reg = 0.1``) and ``M = 8``.
    """

    name = "ensemble-sampling"
    description = "Lu & Van Roy's ensemble sampling: M perturbed Bayesian ridge models"
    paper = "Lu & Van Roy 2017 (Li et al. 2024, App. A.5)"
    family = "linear"
    action_kinds = ("index", "vector")

    reg: float = 0.1
    noise_std: float = 1.0
    ensemble_size: int = struct.field(pytree_node=False, default=8)

    def _num_members(self) -> int:
        return self.ensemble_size

    def _perturb_std(self) -> jax.Array:
        return self.noise_std

    def _init_std(self) -> jax.Array:
        return self.noise_std


@register_agent
class RRLS(_MemberEnsemble):
    """Randomised recursive least squares (Li et al. 2024, App. A.4, Alg. 2): ES with M = 1.

    ``theta_0 ~ N(0, noise_std^2 / reg I)``; play ``argmax_x <x, theta_{t-1}>``; then
    ``theta_t = theta_{t-1} + k_t (y_t + noise_std Z_t - x_t^T theta_{t-1})``, ``Z_t ~ N(0, 1)``.
    A single perturbed model: cheap (O(d^2)) but with sequential-dependence bias that can give
    linear regret. Defaults as Ensemble++'s linear experiments (``reg = 0.1``, ``noise_std = 1``).
    """

    name = "rrls"
    description = "randomised recursive least squares (one perturbed ridge model)"
    paper = "Li et al. 2024, App. A.4, Alg. 2"
    family = "linear"
    action_kinds = ("index", "vector")

    reg: float = 0.1
    noise_std: float = 1.0

    def _num_members(self) -> int:
        return 1

    def _perturb_std(self) -> jax.Array:
        return self.noise_std

    def _init_std(self) -> jax.Array:
        return self.noise_std

    def _select(self, state: LinESState, key: jax.Array) -> jax.Array:
        return jnp.zeros((), jnp.int32)


# ------------------------------------------------------------------------------------------------
# Generalised LinPHE.


class LinPHEState(struct.PyTreeNode):
    """State of :class:`LinPHE`.

    Attributes:
      ridge: the ridge statistic (``V_t``, ``mu_t``, the observation count t).
      counts: ``(K,)`` pulls per arm (per-arm statistics; ``(0,)`` with a buffer).
      features: ``(B, d)`` ring buffer of played features (``(0, d)`` with per-arm statistics).
      steps: ``(B,)`` int32, the observation index of each slot, -1 when empty.
      frozen: ``(d,)`` ``sum x_s xi_s`` over observations evicted from the buffer, with ``xi_s``
        standard normals drawn once at eviction.
      noise_key: the key of the perturbation table shared with :class:`LinES`.
    """

    ridge: RidgeState
    counts: jax.Array
    features: jax.Array
    steps: jax.Array
    frozen: jax.Array
    noise_key: jax.Array


@register_agent
class LinPHE(LinearScores, Agent):
    """Generalised linear perturbed-history exploration, Lee & Oh 2024, Alg. 2.

    Every round redraws the whole perturbation::

        theta_t = V_{t-1}^{-1} (W_t + sum_{s<t} x_s (y_s + Z_{t,s})),  V_{t-1} = reg I + sum x x^T
                = mu_{t-1} + V_{t-1}^{-1} (W_t + sum_{s<t} x_s Z_{t,s})

    with ``W_t ~ N(0, reg (prior_scale sigma_R)^2 I)`` (``init_perturbation``) and
    ``Z_{t,s} ~ N(0, sigma_R^2)`` all fresh, sigma_R = ``perturb_std``; then plays
    ``argmax_x <x, theta_t>``. Two exact ways of keeping the history, chosen by the static
    ``buffer_size``:

    * ``None`` with arm indices (per-arm statistics; the arm set must be fixed, arm k always the
      same vector): ``sum_{s: a_s = k} Z_{t,s} = sigma_R sqrt(n_k) N(0, 1)`` in law,
      O(K d + d^2) per round. On a compact set (vector actions) or an arm set that changes
      between rounds, ``None`` means a buffer of ``jaxbandits.linalg.AUTO_BUFFER`` (2,000) rows.
    * ``B`` (a ring buffer of the last B played features, any arm set, the sphere included):
      ``Z_{t,s} = sigma_R * member_reward_noise(key, t, s)``, pathwise the perturbations of
      :class:`LinES` member t, O(B d + d^2) per round. Exact while ``t <= B``; an evicted
      observation keeps its place in ``V`` and ``mu`` and its perturbation is drawn once at
      eviction and then frozen (an ensemble-sampling approximation of the old data).

    Gaussian LinPHE equals LinTS with ``theta ~ N(mu, sigma_R^2 V^{-1})`` in law (Lee & Oh 2024,
    Sec. 6). Defaults as :class:`LinES` (``reg = 1``, ``perturb_std = 0.5``).
    """

    reg_is_prior = True
    perturb_is_noise = True
    relaxed_updates = True

    name = "lin-phe"
    description = "generalised LinPHE: ridge on freshly perturbed history every round"
    paper = "Lee & Oh 2024, Alg. 2; Kveton et al. 2019"
    family = "linear"
    action_kinds = ("index", "vector")

    reg: float = 1.0
    perturb_std: float = 0.5
    prior_scale: float = 1.0
    init_perturbation: bool = struct.field(pytree_node=False, default=True)
    buffer_size: int | None = struct.field(pytree_node=False, default=None)

    def init(self, key: jax.Array, spec: Spec) -> LinPHEState:
        dtype = float_dtype()
        per_arm = self.buffer_size is None and spec.action_kind == "index" and spec.fixed_arms
        num_arms = spec.num_arms if per_arm else 0
        capacity = 0 if per_arm else self.buffer_size or AUTO_BUFFER
        return LinPHEState(
            ridge=ridge_init(spec.dim, self.reg, dtype),
            counts=jnp.zeros((num_arms,), dtype),
            features=jnp.zeros((capacity, spec.dim), dtype),
            steps=jnp.full((capacity,), -1, jnp.int32),
            frozen=jnp.zeros((spec.dim,), dtype),
            noise_key=key,
        )

    def estimate(self, state: LinPHEState, context: Context) -> jax.Array:
        """This round's perturbed estimate ``theta_t`` ``(d,)`` (a function of the state alone)."""
        t = state.ridge.count
        dtype = state.ridge.mean.dtype
        dim = state.ridge.mean.shape[-1]
        init_std = self.prior_scale * self.perturb_std if self.init_perturbation else 0.0
        w = jnp.sqrt(jnp.asarray(self.reg, dtype)) * init_std * member_prior_noise(
            state.noise_key, t, dim)
        if state.features.shape[0] == 0:  # per-arm statistics
            key_arms = jax.random.fold_in(jax.random.fold_in(state.noise_key, 2), t)
            normals = jax.random.normal(key_arms, state.counts.shape, dtype)
            perturbation = context.arms.T @ (jnp.sqrt(state.counts) * normals)
        else:
            valid = state.steps >= 0
            normals = jax.vmap(lambda s: member_reward_noise(state.noise_key, t, s))(state.steps)
            perturbation = state.features.T @ jnp.where(valid, normals, 0.0) + state.frozen
        # V^{-1} v through the square root, for v = W_t + sigma_R sum_s x_s Z_{t,s}
        return state.ridge.mean + kalman_gain(state.ridge, w + self.perturb_std * perturbation)

    def parameter(self, state: LinPHEState, key: jax.Array, context: Context) -> jax.Array:
        return self.estimate(state, context)

    def update(
        self,
        state: LinPHEState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> LinPHEState:
        x = chosen_features(context, action)
        t = state.ridge.count
        ridge = ridge_update(state.ridge, x, feedback.reward)
        capacity = state.features.shape[0]
        if capacity == 0:  # per-arm statistics
            pulls = action_weights(action, state.counts.shape[0], state.counts.dtype)
            return state.replace(ridge=ridge, counts=state.counts + pulls)
        slot = ring_slot(t, capacity)
        evicted = state.steps[slot]
        key_frozen = jax.random.fold_in(jax.random.fold_in(state.noise_key, 3), evicted)
        xi = jnp.where(evicted >= 0, jax.random.normal(key_frozen, (), x.dtype), 0.0)
        features, steps = ring_write((state.features, state.steps), slot, (x, t))
        return state.replace(ridge=ridge, features=features, steps=steps,
                             frozen=state.frozen + xi * state.features[slot])


# ------------------------------------------------------------------------------------------------
# Linear Ensemble++.


@register_agent
class EnsemblePlusPlus(LinearScores, Agent):
    """Linear Ensemble++ sampling (Li et al. 2024, Sec. 3.1, Eqs. 2-4).

    A shared factor ``A_t`` ``(d, M)`` tracks the posterior covariance, ``A_t A_t^T ~ Sigma_t``::

        act:    zeta ~ P_zeta;  theta = mu_{t-1} + beta_t A_{t-1} zeta;  x_t = argmax <x, theta>
                (on a compact set x_t = theta / ||theta||)
        update: z ~ P_z;  k = Sigma_{t-1} x / (sigma^2 + x^T Sigma_{t-1} x) = V_t^{-1} x
                mu_t = mu_{t-1} + k (y - x^T mu_{t-1});  A_t = A_{t-1} + k (sigma z^T - x^T A_{t-1})

    which is the paper's ``A_t = Sigma_t (Sigma_{t-1}^{-1} A_{t-1} + x z^T / sigma)`` in
    O(d^2 + d M) per round (the authors' P-form costs O(d^2 M)); acting costs O(d M + K d), with no
    factorisation. Prior ``N(0, Sigma_0)`` with ``Sigma_0 = noise_std^2 / reg I``, noise
    ``sigma = noise_std``. Defaults are the paper's linear experiments: ``Sigma_0 = 10 I`` and
    ``sigma = 1`` (``reg = 0.1``), ``M = 8``, Gaussian reference and Sphere perturbation
    (Fig. 2(a)); ``reference="coordinate"`` is the paper's "ES" variant (2.5b).

    Attributes:
      reg, noise_std: the prior and noise (see above).
      explore_scale: a constant inflation ``beta`` (1 in the experiments).
      ensemble_size: M (static).
      reference / perturbation: ``"gaussian"``, ``"sphere"``, ``"cube"``, ``"coordinate"`` or
        ``"sparse"`` (static; :mod:`jaxbandits.linalg.perturb`); ``sparsity``: s of ``"sparse"``.
      factor_init: ``"paper"`` (``A_0`` columns ``N(0, Sigma_0) / sqrt(M)``) or ``"code"`` (the
        authors' linear code: rows of ``Sigma_0^{-1/2} A_0`` drawn from ``P_z``) (static).
      inflation: ``"none"`` or ``"theory"``, which multiplies ``beta`` by Appendix D's
        ``beta_t = sqrt(2 log(1/delta) + log det(V_{t-1} / reg)) + sqrt(reg) S / sigma``
        (Eq. 36, the OFUL radius in ``Sigma``-norm), ``S`` = ``param_bound`` (static).
      delta, param_bound: of the theoretical inflation.

    Example::

        agent = jb.make_agent("ensemble-pp", ensemble_size=16, reference="sphere")
    """

    name = "ensemble-pp"
    description = "linear Ensemble++: shared factor A, sample mu + A zeta (Kalman-form update)"
    paper = "Li et al. 2024, Sec. 3.1, Eqs. 2-4"
    family = "linear"
    action_kinds = ("index", "vector")

    reg_is_prior = True
    relaxed_updates = True

    reg: float = 0.1
    noise_std: float = 1.0
    explore_scale: float = 1.0
    delta: float = 0.01
    param_bound: float = 1.0
    ensemble_size: int = struct.field(pytree_node=False, default=8)
    reference: str = struct.field(pytree_node=False, default="gaussian")
    perturbation: str = struct.field(pytree_node=False, default="sphere")
    sparsity: int = struct.field(pytree_node=False, default=2)
    factor_init: str = struct.field(pytree_node=False, default="paper")
    inflation: str = struct.field(pytree_node=False, default="none")

    def validate(self) -> None:
        super().validate()
        check_positive(self, "noise_std")
        check_choice(self, "reference", REFERENCES)
        check_choice(self, "perturbation", PERTURBATIONS)
        check_positive(self, "sparsity", integer=True)
        if "sparse" in (self.reference, self.perturbation) and self.sparsity > self.ensemble_size:
            raise ValueError(f"{self.name}: sparsity must be at most ensemble_size "
                             f"({self.ensemble_size}), got {self.sparsity}")
        check_choice(self, "factor_init", FACTOR_INITS)
        check_choice(self, "inflation", INFLATIONS)

    def init(self, key: jax.Array, spec: Spec) -> EnsembleState:
        scale = self.noise_std / jnp.sqrt(jnp.asarray(self.reg, float_dtype()))
        factor = prior_factor(key, spec.dim, self.ensemble_size, scale, self.factor_init,
                              self.perturbation, self.sparsity)
        return ensemble_init(factor, self.reg)

    def inflation_scale(self, state: EnsembleState) -> jax.Array:
        """``beta_t``: ``explore_scale``, times Eq. 36's radius with ``inflation="theory"``."""
        if self.inflation == "none":
            return jnp.asarray(self.explore_scale, state.factor.dtype)
        radius = oful_radius(state.ridge, self.reg, self.noise_std, self.delta, self.param_bound)
        return self.explore_scale * radius / self.noise_std

    def parameter(self, state: EnsembleState, key: jax.Array, context: Context) -> jax.Array:
        """``theta = mu + beta_t A zeta`` for a reference draw ``zeta`` (from ``key``'s first
        half, as ``act`` draws it)."""
        key_ref, _ = jax.random.split(key)
        zeta = reference_sample(key_ref, self.reference, self.ensemble_size,
                                sparsity=self.sparsity, dtype=state.factor.dtype)
        return ensemble_sample(state, zeta, self.inflation_scale(state))

    def act(self, state: EnsembleState, key: jax.Array, context: Context):
        _, key_fallback = jax.random.split(key)
        theta = self.parameter(state, key, context)
        if context.arms is None:  # theta = 0 has no direction: a uniform point (authors' code)
            fallback = uniform_action(key_fallback, context, theta.shape[-1])
            unit = best_action(context, theta)
            return jnp.where(jnp.any(theta != 0), unit, fallback.astype(unit.dtype)), state
        return best_action(context, theta), state

    def update(
        self,
        state: EnsembleState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> EnsembleState:
        z = perturbation_sample(key, self.perturbation, self.ensemble_size,
                                sparsity=self.sparsity, dtype=state.factor.dtype)
        x = chosen_features(context, action)
        return ensemble_update(state, x, feedback.reward, self.noise_std * z)
