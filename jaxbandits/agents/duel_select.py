"""Pair selection for contextual dueling bandits, written once for every dueling agent.

Each rule is a pure function of the round's key, the current utility estimates ``u`` ``(K,)``,
the exploration features ``phi`` ``(K, D)`` and the inverse Gram matrix ``inv_gram`` (``(D, D)``,
or ``(D,)`` for a diagonal one), the width scale ``a`` and the round ``t`` (1-based), and returns
the ordered pair ``(k1, k2)`` as ``(2,)`` int32. The features are what distinguishes the agents:
NVLDB passes its last-layer features, NDB the flattened network gradients, the linear baselines
(MaxInP, MaxPairUCB) the contexts themselves (Oh et al. 2026, Sec. 4.3).

The width of a pair is ``w_ij = a sqrt(max((phi_i - phi_j)^T V^{-1} (phi_i - phi_j), 0))``
(symmetric, zero diagonal; computed from the explicit differences, as the listings do, so tiny
widths keep their precision). The six rules (Oh et al. 2026, Sec. 4.2, App. C.1, Listings 2-4):

* ``ucb-asym``: ``k1 = argmax u``; ``k2 = argmax_j u_j + w_{j,k1}``.
* ``ts-asym``: ``k1 = argmax u``; ``k2 = argmax_j s_j``, ``s_j ~ N(u_j, w_{j,k1}^2)``.
* ``ucb-osym``: ``argmax_{ij} u_i + u_j + w_ij`` (row-major first maximiser).
* ``ts-osym``: ``argmax_{ij} s_ij``, ``s_ij ~ N(u_i + u_j, (w_ij + 1e-12)^2)``, (i, j) and
  (j, i) drawn independently.
* ``ucb-csym`` (MaxInP-style): the candidate set ``C = {i : u_i + w_ij > u_j for all j != i}``
  (``candidates="ge"``: ``>=``, which always holds the greedy arm); the pair of ``C x C`` with
  the largest width (``score_ij = 1[i, j in C] (w_ij + 1)``).
* ``ts-csym``: on ``C x C``, ``s_ij ~ N(w_ij, (w_ij^2 / 4 + 1e-12)^2)`` (``ts_csym="code"``,
  Listing 4), or the paper's ``N(q_ij, q_ij^2 / (4 log(K t^2)))`` with ``q_ij = ||Delta phi||^2``
  (``"paper"``, App. C.1); diagonal mean 0.

Self-duels. With the listings' semantics (``forbid_self_duel=False``) every rule may return
``k1 = k2``, which carries no information; reimplementing Oh et al. 2026's Listings 2-4
(App. E.2) shows that under every UCB rule learning then stops (99-100% self-duels after a few
hundred rounds). By default (``forbid_self_duel=True``) ASYM excludes ``k1`` from the second choice
and OSYM / CSYM mask the diagonal; a candidate set with a single arm ``i`` then pairs ``i`` with the
ASYM choice against it. An empty candidate set (possible only when some pair has zero width and
equal utilities) falls back to ``{argmax u}`` (our choice; the paper does not say). Ties go to the
first maximiser in row-major order, as in the listings.
"""

from __future__ import annotations

import difflib

import jax
import jax.numpy as jnp

__all__ = [
    "CANDIDATE_MODES",
    "RULES",
    "TS_CSYM_FORMS",
    "candidate_set",
    "check_rule",
    "pair_quadratic_forms",
    "pair_widths",
    "select_pair",
]

RULES = ("ucb-asym", "ts-asym", "ucb-osym", "ts-osym", "ucb-csym", "ts-csym")
CANDIDATE_MODES = ("strict", "ge")
TS_CSYM_FORMS = ("code", "paper")
_TINY = 1e-12  # the listings' std floor


def pair_quadratic_forms(phi: jax.Array, inv_gram: jax.Array) -> jax.Array:
    """``q_ij = (phi_i - phi_j)^T V^{-1} (phi_i - phi_j)`` ``(K, K)`` for ``phi`` ``(K, D)`` and
    ``inv_gram`` ``(D, D)`` or its diagonal ``(D,)``."""
    diff = phi[:, None, :] - phi[None, :, :]  # (K, K, D)
    if inv_gram.ndim == 1:
        return jnp.einsum("ijd,d,ijd->ij", diff, inv_gram, diff)
    return jnp.einsum("ijd,de,ije->ij", diff, inv_gram, diff)


def pair_widths(phi: jax.Array, inv_gram: jax.Array, scale) -> jax.Array:
    """``w_ij = scale sqrt(max(q_ij, 0))`` ``(K, K)``: symmetric, zero diagonal."""
    return scale * jnp.sqrt(jnp.maximum(pair_quadratic_forms(phi, inv_gram), 0.0))


def candidate_set(u: jax.Array, widths: jax.Array, mode: str = "strict") -> jax.Array:
    """``(K,)`` bool: ``i`` is a candidate when ``u_i + w_ij > u_j`` (``"strict"``) or ``>=``
    (``"ge"``) for every ``j != i``; an empty set becomes ``{argmax u}``."""
    margin = u[:, None] + widths - u[None, :]
    beats = margin > 0 if mode == "strict" else margin >= 0
    beats = beats | jnp.eye(u.shape[0], dtype=bool)  # self-comparisons always pass
    members = jnp.all(beats, axis=1)
    greedy = jax.nn.one_hot(jnp.argmax(u), u.shape[0], dtype=bool)
    return jnp.where(jnp.any(members), members, greedy)


def select_pair(
    rule: str,
    key: jax.Array,
    u: jax.Array,
    phi: jax.Array,
    inv_gram: jax.Array,
    scale,
    t,
    *,
    forbid_self_duel: bool = True,
    candidates: str = "strict",
    ts_csym: str = "code",
) -> jax.Array:
    """The pair ``(k1, k2)`` ``(2,)`` int32 chosen by ``rule`` (one of :data:`RULES`).

    Args:
      rule: ``"{ucb,ts}-{asym,osym,csym}"`` (static).
      key: the round's key (used by the TS rules).
      u: ``(K,)`` utility estimates.  phi: ``(K, D)`` exploration features.
      inv_gram: ``(D, D)`` inverse Gram matrix, or ``(D,)`` a diagonal one.
      scale: ``a``, the width multiplier.  t: the round, from 1 (``ts-csym`` paper form).
      forbid_self_duel: never return ``k1 == k2`` (static; False: the listings' semantics).
      candidates: ``"strict"`` or ``"ge"`` candidate sets for CSYM (static).
      ts_csym: ``"code"`` or ``"paper"`` form of TS-CSYM (static).
    """
    num_arms = u.shape[0]
    q = pair_quadratic_forms(phi, inv_gram)
    widths = scale * jnp.sqrt(jnp.maximum(q, 0.0))
    greedy = jnp.argmax(u).astype(jnp.int32)
    kind, form = rule.split("-")
    if form == "asym":
        if kind == "ucb":
            scores = u + widths[:, greedy]
        else:
            scores = u + widths[:, greedy] * jax.random.normal(key, (num_arms,), u.dtype)
        return jnp.stack([greedy, _second(scores, greedy, forbid_self_duel)])
    diagonal = jnp.eye(num_arms, dtype=bool)
    if form == "osym":
        means = u[:, None] + u[None, :]
        if kind == "ucb":
            scores = means + widths
        else:
            noise = jax.random.normal(key, (num_arms, num_arms), u.dtype)
            scores = means + (widths + _TINY) * noise
        if forbid_self_duel:
            scores = jnp.where(diagonal, -jnp.inf, scores)
        return _flat_argmax(scores)
    # csym
    members = candidate_set(u, widths, candidates)
    inside = members[:, None] & members[None, :]
    if kind == "ucb":
        scores = jnp.where(inside, widths + 1.0, 0.0)
    else:
        if ts_csym == "code":
            mean, std = widths, widths**2 / 4.0 + _TINY
        else:
            log_term = jnp.log(num_arms * jnp.asarray(t, u.dtype) ** 2)
            q = jnp.maximum(q, 0.0)
            mean, std = q, q / (2.0 * jnp.sqrt(log_term)) + _TINY
        mean = jnp.where(diagonal, 0.0, mean)
        std = jnp.where(diagonal, _TINY, std)
        draws = mean + std * jax.random.normal(key, (num_arms, num_arms), u.dtype)
        scores = jnp.where(inside, draws, -jnp.inf)
    if not forbid_self_duel:
        return _flat_argmax(scores)
    pair = _flat_argmax(jnp.where(diagonal | ~inside, -jnp.inf, scores))
    alone = jnp.argmax(members).astype(jnp.int32)  # the only candidate, when |C| = 1
    fallback = jnp.stack([alone, _second(u + widths[:, alone], alone, True)])
    return jnp.where(jnp.sum(members) >= 2, pair, fallback)


def _second(scores: jax.Array, first: jax.Array, forbid_self_duel: bool) -> jax.Array:
    """``argmax scores``, over the arms other than ``first`` when self-duels are forbidden."""
    if forbid_self_duel:
        scores = jnp.where(jnp.arange(scores.shape[0]) == first, -jnp.inf, scores)
    return jnp.argmax(scores).astype(jnp.int32)


def _flat_argmax(scores: jax.Array) -> jax.Array:
    """The row-major first maximiser of ``(K, K)`` scores as ``(2,)`` int32."""
    index = jnp.argmax(scores.reshape(-1))
    return jnp.stack([index // scores.shape[1], index % scores.shape[1]]).astype(jnp.int32)


def check_rule(owner: str, rule: str) -> None:
    """Raises ``ValueError`` naming close matches unless ``rule`` is one of :data:`RULES`."""
    if rule not in RULES:
        close = difflib.get_close_matches(rule, RULES, n=2, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"{owner}: unknown selection rule {rule!r}{hint} (known: "
                         f"{', '.join(RULES)})")

