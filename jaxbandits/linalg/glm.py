"""Generalised linear models on weighted data: loss, gradient, Hessian, and the two solvers.

Every GLM agent (GLM-ES, UCB-GLM, GLM-TSL, Logistic-UCB-1, ada-OFU-ECOLog) fits the
regularised negative log-likelihood (Sun et al. 2025, Sec. 4.2) through these functions::

    L(theta) = reg/2 ||theta||^2 - sum_i [ s_i x_i^T theta - n_i b(x_i^T theta) ]
    grad L   = reg theta + sum_i (n_i mu(x_i^T theta) - s_i) x_i
    hess L   = reg I + sum_i n_i mu'(x_i^T theta) x_i x_i^T

on rows ``(x_i, n_i, s_i)``. The loss is linear in the rewards, so the rows can be

* **per-arm statistics** (a fixed arm set, Sun et al. 2025, Sec. 4.1): ``x_i`` the K arms, ``n_i``
  the
  pull counts and ``s_i`` the (perturbed) reward sums -- O(K d) per gradient, exact; or
* **a history** (changing contexts): ``x_i`` the played features, ``n_i`` 1 for a valid row and 0
  for an empty one, ``s_i`` the (perturbed) reward.

Both give the same loss and gradient on the same data (the per-arm form is the full-history form
with equal rows merged). :class:`GLMData` keeps either, with a fixed shape.

Links (``link``, static): ``"logistic"`` (``mu = sigmoid``, ``b = softplus``) and ``"identity"``
(``mu(u) = u``, ``b(u) = u^2 / 2``: the loss is ridge regression's and GLM-ES is Lin-ES).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.core import AUTO_BUFFER, float_dtype
from jaxbandits.ring import ring_size, ring_slot, ring_write

__all__ = [
    "PREFERENCE_LINKS",
    "neg_log_preference",
    "preference_prob",
    "AUTO_BUFFER",
    "LINKS",
    "REDUCTIONS",
    "GLMData",
    "glm_data_accumulate",
    "glm_data_add",
    "glm_data_for_spec",
    "glm_data_init",
    "glm_gd",
    "glm_grad",
    "glm_hessian",
    "glm_loss",
    "glm_newton",
    "link_cumulant",
    "link_mean",
    "link_slope",
]

LINKS: tuple[str, ...] = ("logistic", "identity")
#: links of a pairwise preference ``P(first wins) = g(u_1 - u_2)`` (dueling bandits)
PREFERENCE_LINKS: tuple[str, ...] = ("btl", "probit")


def preference_prob(z: jax.Array, link: str = "btl") -> jax.Array:
    """``g(z)``: ``sigmoid(z)`` (Bradley-Terry-Luce) or ``Phi(z)`` (probit, Thurstone-Mosteller),
    the probability that the first of two arms wins at utility gap ``z``."""
    return jax.nn.sigmoid(z) if link == "btl" else jax.scipy.special.ndtr(z)


def neg_log_preference(z: jax.Array, link: str = "btl") -> jax.Array:
    """``-log g(z)``, stable for any ``|z|``: ``softplus(-z)`` or ``-log_ndtr(z)``."""
    return jax.nn.softplus(-z) if link == "btl" else -jax.scipy.special.log_ndtr(z)
REDUCTIONS: tuple[str, ...] = ("mean", "sum", "mean_plus_reg")


# ------------------------------------------------------------------------------------------------
# Links.


def link_mean(u: jax.Array, link: str) -> jax.Array:
    """``mu(u)``: ``sigmoid(u)`` or ``u``."""
    return jax.nn.sigmoid(u) if link == "logistic" else u


def link_slope(u: jax.Array, link: str) -> jax.Array:
    """``mu'(u)``: ``sigmoid(u) (1 - sigmoid(u))`` or 1."""
    if link == "logistic":
        p = jax.nn.sigmoid(u)
        return p * (1.0 - p)
    return jnp.ones_like(u)


def link_cumulant(u: jax.Array, link: str) -> jax.Array:
    """``b(u)`` with ``b' = mu``: ``softplus(u) = log(1 + e^u)`` or ``u^2 / 2``."""
    return jax.nn.softplus(u) if link == "logistic" else 0.5 * u * u


# ------------------------------------------------------------------------------------------------
# Loss, gradient, Hessian on weighted rows (features (N, d), counts (N,), sums (N,)).


def glm_loss(theta, features, counts, sums, reg, link: str) -> jax.Array:
    """``reg/2 ||theta||^2 + sum_i [n_i b(x_i^T theta) - s_i x_i^T theta]``, a scalar."""
    u = features @ theta
    return 0.5 * reg * (theta @ theta) + jnp.sum(counts * link_cumulant(u, link) - sums * u)


def glm_grad(theta, features, counts, sums, reg, link: str) -> jax.Array:
    """``reg theta + sum_i (n_i mu(x_i^T theta) - s_i) x_i``, shape ``(d,)``."""
    u = features @ theta
    return reg * theta + features.T @ (counts * link_mean(u, link) - sums)


def glm_hessian(theta, features, counts, reg, link: str) -> jax.Array:
    """``reg I + sum_i n_i mu'(x_i^T theta) x_i x_i^T``, shape ``(d, d)``."""
    weights = counts * link_slope(features @ theta, link)
    return reg * jnp.eye(theta.shape[-1], dtype=theta.dtype) + (features.T * weights) @ features


# ------------------------------------------------------------------------------------------------
# Solvers. ``num_steps`` may be traced: it is a loop bound, and under ``vmap`` a round in which no
# run needs a step (a warm-up round, a round between two training rounds) costs nothing.


def glm_gd(
    theta: jax.Array,
    features: jax.Array,
    counts: jax.Array,
    sums: jax.Array,
    reg,
    link: str,
    *,
    learning_rate,
    num_steps,
    reduction: str = "mean",
) -> jax.Array:
    """``num_steps`` gradient steps on the GLM loss from ``theta`` (warm start).

    * ``"mean"`` (default): steps of ``learning_rate`` on ``L / max(n, 1)``, ``n = sum_i n_i``
      (same argmin; Sun et al. 2025, Sec. 7.2's 100 steps at 0.01 on the sum diverge at large n);
    * ``"sum"``: steps of ``learning_rate`` on ``L`` itself (the literal reading);
    * ``"mean_plus_reg"``: on the mean data loss plus the unscaled regulariser
      (``L_data / n + reg/2 ||theta||^2``; a different argmin, one reading of Bae & Lee 2025, App.
      A).
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    n = jnp.maximum(jnp.sum(counts), 1.0)

    def step(_, theta):
        grad = glm_grad(theta, features, counts, sums, reg, link)
        if reduction == "mean":
            grad = grad / n
        elif reduction == "mean_plus_reg":
            grad = (grad - reg * theta) / n + reg * theta
        return theta - learning_rate * grad

    return jax.lax.fori_loop(0, num_steps, step, theta)


def glm_newton(
    theta: jax.Array,
    features: jax.Array,
    counts: jax.Array,
    sums: jax.Array,
    reg,
    link: str,
    *,
    num_steps,
    num_backtracks: int = 12,
    tol: float | None = None,
) -> jax.Array:
    """Damped Newton from ``theta`` to the exact minimiser (the ``newton`` solver).

    Each step solves ``H(theta) delta = grad L(theta)`` (Cholesky, O(N d^2 + d^3)) and moves
    ``theta <- theta - 2^{-i} delta`` with the first ``i < num_backtracks`` that satisfies
    Armijo's condition up to the loss's round-off (no move if none does). The loss is
    ``reg``-strongly convex, so this converges globally and quadratically near the minimiser. It
    stops after ``num_steps`` steps or once a step moved ``theta`` by at most
    ``tol * (1 + ||theta||_inf)`` in the max norm (default ``tol = sqrt(eps)``: by quadratic
    convergence the iterate is then exact to round-off). A warm-started round takes one to three
    steps; the identity link takes one and a confirming one.
    """
    eps = jnp.finfo(theta.dtype).eps
    tol = jnp.sqrt(eps) if tol is None else tol

    def loss(t):
        return glm_loss(t, features, counts, sums, reg, link)

    def step(theta):
        grad = glm_grad(theta, features, counts, sums, reg, link)
        hess = glm_hessian(theta, features, counts, reg, link)
        chol = jnp.linalg.cholesky(hess)
        delta = jax.scipy.linalg.cho_solve((chol, True), grad)
        base, slope = loss(theta), grad @ delta
        slack = 8.0 * eps * (jnp.abs(base) + 1.0)  # round-off of the loss: no futile halving

        def accepted(size, trial):
            return trial <= base - 1e-4 * size * slope + slack

        def rejected(carry):
            i, size, trial = carry
            return ~accepted(size, trial) & (i < num_backtracks - 1)

        def halve(carry):
            i, size, _ = carry
            return i + 1, 0.5 * size, loss(theta - 0.5 * size * delta)

        one = jnp.ones((), theta.dtype)
        _, size, trial = jax.lax.while_loop(
            rejected, halve, (jnp.zeros((), jnp.int32), one, loss(theta - delta)))
        return jnp.where(accepted(size, trial), size, 0.0) * delta

    def moving(carry):
        i, theta, moved = carry
        return (i < num_steps) & (moved > tol * (1.0 + jnp.max(jnp.abs(theta))))

    def body(carry):
        i, theta, _ = carry
        delta = step(theta)
        return i + 1, theta - delta, jnp.max(jnp.abs(delta))

    start = (jnp.zeros((), jnp.int32), theta, jnp.full((), jnp.inf, theta.dtype))
    return jax.lax.while_loop(moving, body, start)[1]


# ------------------------------------------------------------------------------------------------
# Fixed-shape data: per-arm statistics or a ring buffer (the rule of jaxbandits.ring).


class GLMData(struct.PyTreeNode):
    """The rows a GLM is fitted on, with a fixed shape.

    Attributes:
      features: ``(N, d)``: the arm set (per-arm statistics, ``N = K``, refreshed from the
        context) or the played features (a ring buffer of ``N = B`` rows).
      counts: ``(N,)`` pulls per arm, or 1 for a filled buffer row and 0 for an empty one.
      rewards: ``(N,)`` reward sums per arm, or each row's reward.
      num_obs: ``()`` int32, observations so far (a buffer keeps the last ``B``).
      per_arm: static; True for per-arm statistics, False for a ring buffer.
    """

    features: jax.Array
    counts: jax.Array
    rewards: jax.Array
    num_obs: jax.Array
    per_arm: bool = struct.field(pytree_node=False, default=False)

    @property
    def capacity(self) -> int:
        """N, the number of rows (static)."""
        return self.counts.shape[0]

    @property
    def size(self) -> jax.Array | None:
        """The filled leading rows of a ring buffer, ``min(num_obs, N)``; None for per-arm
        statistics (every row holds an arm)."""
        return None if self.per_arm else ring_size(self.num_obs, self.capacity)


def glm_data_init(num_rows: int, dim: int, dtype=None, *, per_arm: bool = False) -> GLMData:
    """Empty data of ``num_rows`` rows (K arms with ``per_arm``, or a buffer of B rows)."""
    dtype = dtype or float_dtype()
    return GLMData(
        features=jnp.zeros((num_rows, dim), dtype),
        counts=jnp.zeros((num_rows,), dtype),
        rewards=jnp.zeros((num_rows,), dtype),
        num_obs=jnp.zeros((), jnp.int32),
        per_arm=per_arm,
    )


def glm_data_for_spec(name: str, spec, buffer_size: int | None) -> GLMData:
    """Empty data for an agent called ``name`` on ``spec``: a ring buffer of ``buffer_size``
    rows, or for ``buffer_size=None`` the agent's own choice: exact per-arm statistics (K rows)
    on a fixed arm set (``spec.fixed_arms``), else a ring buffer of :data:`AUTO_BUFFER` rows
    (per-arm statistics would merge different feature vectors when the arms change).

    Raises ``ValueError`` when the agent cannot act on ``spec`` (not a finite arm set).
    """
    if spec.action_kind != "index":
        raise ValueError(f"{name}: needs a finite arm set (action kind 'index'), got "
                         f"{spec.action_kind!r}")
    if buffer_size is None and spec.fixed_arms:
        return glm_data_init(spec.num_arms, spec.dim, per_arm=True)
    return glm_data_init(AUTO_BUFFER if buffer_size is None else buffer_size, spec.dim)


def glm_data_add(
    data: GLMData, arms: jax.Array, action: jax.Array, reward: jax.Array, per_arm: bool
) -> tuple[GLMData, jax.Array]:
    """Adds the observation ``(arms[action], reward)``; returns the data and the row it went to.

    ``per_arm`` (static): row ``action`` accumulates (``n_a += 1``, ``s_a += y``, features set to
    the arm set ``arms`` ``(K, d)``); otherwise row ``num_obs mod B`` is overwritten (a sliding
    window once more than ``B`` observations have arrived). Per-row side tables (GLM-ES's
    perturbation sums) follow the same rule with :func:`glm_data_accumulate`.
    """
    if per_arm:
        row = action
        data = data.replace(
            features=arms.astype(data.features.dtype),
            counts=data.counts.at[row].add(1.0),
            rewards=data.rewards.at[row].add(reward),
        )
    else:
        row = ring_slot(data.num_obs, data.capacity)
        features, counts, rewards = ring_write(
            (data.features, data.counts, data.rewards), row, (arms[action], 1.0, reward))
        data = data.replace(features=features, counts=counts, rewards=rewards)
    return data.replace(num_obs=data.num_obs + 1), row


def glm_data_accumulate(
    table: jax.Array, row: jax.Array, values: jax.Array, per_arm: bool
) -> jax.Array:
    """Adds (per-arm statistics) or writes (buffer) ``values`` into column ``row`` of ``table``
    ``(..., N)``: the rule :func:`glm_data_add` applies to the rewards."""
    if per_arm:
        return table.at[..., row].add(values)
    return table.at[..., row].set(values)
