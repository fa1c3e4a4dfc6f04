"""What the GLM agents share (:class:`GLMAgent`): the regularised GLM fit by either solver, the
data (per-arm statistics or a ring buffer) and the rounded G-optimal design warm-up. The agents are
in :mod:`jaxbandits.agents.glm`, which re-exports it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.core import (
    Agent,
    Context,
    Spec,
    check_choice,
    check_nonnegative,
    check_positive,
    check_probability,
)
from jaxbandits.linalg import (
    LINKS,
    REDUCTIONS,
    GLMData,
    g_optimal_design,
    glm_data_add,
    glm_data_for_spec,
    glm_gd,
    glm_newton,
    round_design,
)

SOLVERS: tuple[str, ...] = ("gd", "newton")
LOGISTIC_SLOPE_BOUND = 0.25  # R: the Lipschitz constant of the sigmoid (Bae & Lee 2025, Sec. 2)


class GLMAgent(Agent):
    """Plumbing shared by the GLM agents: the fit, the data and the design warm-up.

    Subclasses write ``init``, ``act`` and ``update`` from :meth:`_warmup_step`, :meth:`_fit`
    and :meth:`_data_init`.

    Attributes:
      reg: lambda, the ridge weight of the loss (``reg/2 ||theta||^2``).
      learning_rate: the ``gd`` step size.
      warmup: tau, the rounds of rounded G-optimal design before the fit starts (the uniform
        design if the K arms do not span ``R^d``; with a ring buffer: tau uniformly random pulls,
        since there is no fixed arm set to design on).
      design_eps: epsilon of the rounding's ``r(eps)`` (used by ``enforce_min_count``).
      link: ``"logistic"`` or ``"identity"`` (static).
      solver: ``"gd"`` or ``"newton"`` (static).
      num_grad_steps: gd steps per fit (static).
      newton_steps: the most Newton steps per fit; it stops earlier at round-off (static).
      loss_reduction: ``"mean"`` (default), ``"sum"`` or ``"mean_plus_reg"`` (static; see
        :func:`~jaxbandits.linalg.glm_gd`).
      enforce_min_count: the paper's line 15 of Algorithm 3, which can lengthen the warm-up
        (static; off: the warm-up is exactly ``warmup`` rounds).
      design_iters: the G-optimal design solver's iteration budget (static).
      buffer_size: B for a ring buffer of the last B observations, or None (default) for the
        agent's choice: per-arm statistics on a fixed arm set, else a ring buffer of
        ``AUTO_BUFFER`` rows (static).
    """

    reg: float = 1.0
    learning_rate: float = 0.01
    warmup: int = 0
    design_eps: float = 0.5
    link: str = struct.field(pytree_node=False, default="logistic")
    solver: str = struct.field(pytree_node=False, default="gd")
    num_grad_steps: int = struct.field(pytree_node=False, default=100)
    newton_steps: int = struct.field(pytree_node=False, default=20)
    loss_reduction: str = struct.field(pytree_node=False, default="mean")
    enforce_min_count: bool = struct.field(pytree_node=False, default=False)
    design_iters: int = struct.field(pytree_node=False, default=2000)
    buffer_size: int | None = struct.field(pytree_node=False, default=None)

    def validate(self) -> None:
        super().validate()
        check_nonnegative(self, "warmup", integer=True)
        check_probability(self, "design_eps")
        check_choice(self, "link", LINKS)
        check_choice(self, "solver", SOLVERS)
        check_choice(self, "loss_reduction", REDUCTIONS)
        for name in ("newton_steps", "design_iters"):
            check_positive(self, name, integer=True)

    # -- data --------------------------------------------------------------------------------

    def _data_init(self, spec: Spec) -> GLMData:
        return glm_data_for_spec(self.name, spec, self.buffer_size)

    def _add(self, data: GLMData, context: Context, action, reward) -> tuple[GLMData, jax.Array]:
        return glm_data_add(data, context.arms, action, reward, data.per_arm)

    # -- fit ---------------------------------------------------------------------------------

    def _fit(self, theta, data: GLMData, sums, reg, active) -> jax.Array:
        """The solver from ``theta`` on rows ``(data.features, data.counts, sums)``; it takes
        no step at all where ``active`` is False."""
        if self.solver == "newton":
            steps = jnp.where(active, self.newton_steps, 0)
            return glm_newton(theta, data.features, data.counts, sums, reg, self.link,
                              num_steps=steps)
        steps = jnp.where(active, self.num_grad_steps, 0)
        return glm_gd(theta, data.features, data.counts, sums, reg, self.link,
                      learning_rate=self.learning_rate, num_steps=steps,
                      reduction=self.loss_reduction)

    # -- warm-up -----------------------------------------------------------------------------

    def _warmup_step(self, remaining, data, key, arms):
        """One warm-up decision: ``(in_warmup, arm, remaining)``.

        Per-arm mode: on the first round (``num_obs == 0``) solve the G-optimal design on
        ``arms`` ``(K, d)`` (the uniform design if the arms do not span ``R^d``) and round it to
        ``warmup`` pulls; while pulls remain, pull arm k with probability
        ``remaining_k / sum(remaining)``. The design solve is a loop whose budget is 0 on every
        other round, so it runs once per run (and once per anytime epoch).
        Buffer mode: uniformly random pulls while ``num_obs < warmup``.
        """
        num_arms, dim = arms.shape
        if not data.per_arm:
            arm = jax.random.randint(key, (), 0, num_arms, jnp.int32)
            return data.num_obs < self.warmup, arm, remaining
        first = data.num_obs == 0
        weights = g_optimal_design(arms, num_iters=jnp.where(first, self.design_iters, 0))
        # arms that do not span R^d (K < d) have no G-optimal design: use the uniform one
        weights = jnp.where(jnp.all(jnp.isfinite(weights)), weights, 1.0 / num_arms)
        counts = round_design(weights, jnp.where(first, self.warmup, 0),
                              enforce_min_count=self.enforce_min_count, dim=dim,
                              eps=self.design_eps)
        remaining = jnp.where(first, counts, remaining)
        in_warmup = jnp.sum(remaining) > 0
        logits = jnp.log(remaining.astype(arms.dtype))  # -inf for arms with no pulls left
        arm = jax.random.categorical(key, logits).astype(jnp.int32)
        pull = jax.nn.one_hot(arm, num_arms, dtype=jnp.int32)
        return in_warmup, arm, remaining - jnp.where(in_warmup, pull, 0)

    def _warm(self, remaining, data: GLMData) -> jax.Array:
        """Whether the warm-up is over with ``data`` in (fit from now on)."""
        if data.per_arm:
            return jnp.sum(remaining) == 0
        return data.num_obs >= self.warmup

    def _add_and_refit(self, state, context, action, reward):
        """``(data, theta)``: ``state.data`` with this round's observation in, and the
        regularised MLE refit on it from ``state.theta`` once the warm-up is over (the update of
        a state with ``theta``, ``data`` and ``remaining``)."""
        data, _ = self._add(state.data, context, action, reward)
        fit = self._warm(state.remaining, data)
        return data, self._fit(state.theta, data, data.rewards, self.reg, fit)
