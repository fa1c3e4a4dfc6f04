"""What every contextual dueling environment shares (Oh et al. 2026, Sec. 3): the link, the three
regrets, one round's feedback, the synthetic utilities, and the traits of :class:`_DuelingTask`.
The environments are in :mod:`jaxbandits.envs.dueling`, which re-exports these names.
"""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp

from jaxbandits.core import (
    Feedback,
    Spec,
)
from jaxbandits.linalg.glm import PREFERENCE_LINKS, preference_prob

UTILITIES: tuple[str, ...] = ("cosine", "square", "quadratic", "linear")
QUADRATIC_FORMS: tuple[str, ...] = ("matrix", "vector")
LINKS = PREFERENCE_LINKS
READINGS: tuple[str, ...] = ("instance", "class")
#: the names of the extra per-round metrics of every dueling environment (``Spec.metrics``).
DUELING_METRICS: tuple[str, ...] = ("weak_regret", "strong_regret")
_PAPER = "Oh et al. 2026, Sec. 6, App. E.1"
# ------------------------------------------------------------------------------------------------
# The shared math: link, regrets, one round's feedback.


def link_function(link: str, z: jax.Array) -> jax.Array:
    """``g(z)``, the probability that the first arm wins at utility gap ``z``.

    ``"btl"``: the logistic function ``1 / (1 + exp(-z))`` (Bradley-Terry-Luce);
    ``"probit"``: the standard normal CDF ``Phi(z)`` (Thurstone-Mosteller).
    """
    if link not in LINKS:
        raise ValueError(f"link must be one of {LINKS}, got {link!r}")
    return preference_prob(z, link)


def dueling_regrets(utilities: jax.Array, action: jax.Array
                    ) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(r_a, r_w, r_s)``, the average, weak and strong regret of the pair ``action``.

    Args:
      utilities: ``(K,)`` the true utilities ``u(x_k)`` of the round's arms.
      action: ``(2,)`` int, the ordered pair ``(k1, k2)``.

    With ``u* = max_k u_k``: ``r_a = (2 u* - u_k1 - u_k2) / 2``, ``r_w = u* - max(u_k1, u_k2)``,
    ``r_s = u* - min(u_k1, u_k2)`` (Oh et al. 2026, Sec. 3), each ``()``.
    """
    best = jnp.max(utilities)
    first, second = utilities[action[0]], utilities[action[1]]
    average = best - 0.5 * (first + second)
    weak = best - jnp.maximum(first, second)
    strong = best - jnp.minimum(first, second)
    return average, weak, strong


def dueling_feedback(key: jax.Array, utilities: jax.Array, action: jax.Array,
                     prob_first: jax.Array) -> Feedback:
    """One round's :class:`~jaxbandits.Feedback`: ``o ~ Bernoulli(prob_first)`` as the reward,
    the average regret as the regret, the weak and strong regrets as ``metrics`` and the true
    ``P(k1 > k2)`` as ``oracle["preference_prob"]``.

    Args:
      key: the feedback key (the Bernoulli draw).
      utilities: ``(K,)`` true utilities of the round's arms.
      action: ``(2,)`` int, the ordered pair ``(k1, k2)``.
      prob_first: ``()`` ``P(k1 > k2)``.
    """
    dtype = utilities.dtype
    outcome = jax.random.bernoulli(key, prob_first).astype(dtype)
    average, weak, strong = dueling_regrets(utilities, action)
    return Feedback(reward=outcome, regret=average,
                    metrics={"weak_regret": weak, "strong_regret": strong},
                    oracle={"preference_prob": jnp.asarray(prob_first, dtype)})


def dueling_utility(utility: str, x: jax.Array, theta: jax.Array,
                    matrix: jax.Array | None = None, quadratic_form: str = "matrix") -> jax.Array:
    """``u(x)`` of a synthetic task for contexts ``x`` ``(..., d)``; returns ``(...)``.

    ``"cosine"``: ``cos(3 theta^T x)``; ``"square"``: ``10 (theta^T x)^2``; ``"quadratic"``:
    ``||Theta^T x||^2`` with ``Theta = matrix`` ``(d, d)`` (``quadratic_form="matrix"``, our
    default) or ``x^T theta theta^T x`` (``"vector"``, the paper's formula read literally; equal to
    square / 10); ``"linear"``: ``theta^T x`` (the linear dueling bandit of Bengs et al. and
    Saha, where the linear baselines are well specified; not one of the paper's tasks).
    ``theta`` is ``(d,)``.
    """
    if utility == "quadratic":
        if quadratic_form == "vector":
            return jnp.einsum("...i,ij,...j->...", x, jnp.outer(theta, theta), x)
        projected = x @ matrix  # (Theta^T x)^T
        return jnp.sum(projected * projected, axis=-1)
    inner = x @ theta
    if utility == "linear":
        return inner
    if utility == "cosine":
        return jnp.cos(3.0 * inner)
    if utility == "square":
        return 10.0 * inner * inner
    raise ValueError(f"utility must be one of {UTILITIES}, got {utility!r}")


def _check_duel_arms(owner: str, what: str, num_arms: int) -> None:
    """Raises ``ValueError`` unless a dueling environment offers at least 2 arms: with one, every
    duel is a self-duel, which agents that forbid self-duels (``forbid_self_duel``) cannot
    avoid, and no comparison carries information."""
    if num_arms < 2:
        raise ValueError(f"{owner}: {what} must be at least 2 for a dueling bandit (a pair of "
                         f"distinct arms; with 1 every duel is a self-duel, even for agents with "
                         f"forbid_self_duel=True), got {num_arms}")


def _spec(dim: int, num_arms: int) -> Spec:
    return Spec(dim=dim, num_arms=num_arms, action_kind="pair", feedback_kind="preference",
                metrics=DUELING_METRICS, fixed_arms=False)

class _DuelingTask:
    """What every dueling environment of Oh et al. 2026 shares: its paper, the agents that model it,
    and the paper's size for ``jaxbandits run`` (T = 2,000, 20 seeds)."""

    paper: ClassVar[str] = _PAPER
    agent_families: ClassVar[tuple[str, ...]] = ("baseline", "dueling")
    default_horizon: ClassVar[int | None] = 2000
    default_runs: ClassVar[int | None] = 20
