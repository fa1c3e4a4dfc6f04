"""Off-policy estimators of a target policy's value from logged bandit feedback.

For a log of n rounds ``(x_i, a_i, r_i, p_i)`` (:class:`~jaxbandits.data.BanditLog`, ``p_i``
the logging policy's propensity), a target policy's action probabilities ``pi(a | x_i)`` and,
for the model-based estimators, a reward model ``q(x_i, a)``, with importance weights
``w_i = pi(a_i | x_i) / p_i`` clipped at ``max_weight`` (``min(w_i, max_weight)``; no clipping
by default)::

    ips        (1/n) sum_i w_i r_i                                   (Horvitz & Thompson 1952)
    snips      sum_i w_i r_i / sum_i w_i                         (Swaminathan & Joachims 2015)
    dm         (1/n) sum_i sum_a pi(a | x_i) q(x_i, a)                      (Dudik et al. 2011)
    dr         dm + (1/n) sum_i w_i (r_i - q(x_i, a_i))                     (Dudik et al. 2011)
    switch-dr  dm + (1/n) sum_i 1[w_i <= tau] w_i (r_i - q(x_i, a_i))        (Wang et al. 2017)

the names and definitions of the Open Bandit Pipeline (Saito et al. 2020;
``InverseProbabilityWeighting``, ``SelfNormalizedInverseProbabilityWeighting``,
``DirectMethod``, ``DoublyRobust``, ``SwitchDoublyRobust``; their ``lambda_`` is
``max_weight`` for IPS and DR, and ``switch_threshold`` (tau, the weights unclipped) for
switch-DR; OBP's SNIPS has no clipping, here ``max_weight`` clips its weights too). For
slates (a log with positions) each round uses the target's probabilities and the reward model
at the logged position.

Every estimator is a ratio of two sums over rounds, ``sum_i c_i u_i / sum_i c_i v_i`` (``v = 1``
except SNIPS's ``w``), with ``c_i = 1`` for the estimate and ``c_i`` the multiplicities of a
bootstrap resample (Efron & Tibshirani 1993) for the percentile interval: :func:`evaluate`
forms ``u`` and ``v`` for every target policy and estimator at once (``vmap`` over policies)
and the bootstrap estimates are one matrix product with the resamples' counts, all in one
jitted call. The normal interval uses the standard error of the linearised ratio,
``sd((u_i - V v_i) / mean(v)) / sqrt(n)``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxbandits.data.logged import BanditLog

__all__ = ["ESTIMATORS", "INTERVALS", "OPEResult", "evaluate"]

#: The estimators :func:`evaluate` computes, in this order by default.
ESTIMATORS: tuple[str, ...] = ("ips", "snips", "dm", "dr", "switch-dr")
#: The confidence intervals: bootstrap percentile, or normal approximation.
INTERVALS: tuple[str, ...] = ("bootstrap", "normal")
_NEEDS_MODEL = ("dm", "dr", "switch-dr")


@dataclasses.dataclass(frozen=True)
class OPEResult:
    """Estimates of P target policies' values by E estimators, with confidence intervals.

    Attributes:
      estimators: the E estimator names.
      value: ``(P, E)`` the estimates (``(E,)`` for one policy given without a policy axis).
      lower, upper: the confidence interval at ``level`` (same shape).
      std_error: the normal-approximation standard error (same shape).
      mc_std_error: the Monte Carlo standard error of the estimate that comes from Monte Carlo
        action probabilities (linearised; zeros for exact probabilities).
      level: the confidence level.
      interval: ``"bootstrap"`` (percentile) or ``"normal"``.
      num_bootstrap: the number of bootstrap resamples (0 for ``"normal"``).
      num_draws: the Monte Carlo draws behind the action probabilities (0: exact).
    """

    estimators: tuple[str, ...]
    value: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    std_error: np.ndarray
    mc_std_error: np.ndarray
    level: float
    interval: str
    num_bootstrap: int
    num_draws: int = 0

    def __getitem__(self, name: str) -> np.ndarray:
        """The estimate(s) of estimator ``name``: a scalar, or ``(P,)``."""
        return self.value[..., self.estimators.index(name)]

    def table(self, policy: int = 0) -> str:
        """A text table of one policy's estimates and intervals."""
        def row(a):
            return a if a.ndim == 1 else a[policy]
        value, lo, hi = row(self.value), row(self.lower), row(self.upper)
        se, mc = row(self.std_error), row(self.mc_std_error)
        pct = f"{100 * self.level:g}%"
        lines = [f"{'estimator':<10} {'estimate':>10} {pct + ' ' + self.interval:>26} "
                 f"{'std err':>9} {'MC err':>9}"]
        for k, name in enumerate(self.estimators):
            lines.append(f"{name:<10} {value[k]:>10.6f} [{lo[k]:>10.6f}, {hi[k]:>10.6f}]    "
                         f"{se[k]:>9.2e} {mc[k]:>9.2e}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def evaluate(
    log: BanditLog,
    probs: Any,
    reward_model: Any = None,
    *,
    estimators: Sequence[str] = ESTIMATORS,
    max_weight: float = math.inf,
    switch_threshold: float = math.inf,
    interval: str = "bootstrap",
    num_bootstrap: int = 1000,
    level: float = 0.95,
    key: jax.Array | int = 0,
) -> OPEResult:
    """Estimates the value of one or many target policies from ``log``, with intervals.

    Args:
      log: the logged feedback.
      probs: the target policies' action probabilities: ``(n, K)``, or ``(n, K, L)`` per
        position for a log with L > 1 positions (``(1, K[, L])`` or ``(K[, L])``: the same in
        every round), or any of these with a leading axis of P policies; or an
        :class:`~jaxbandits.ope.ActionProbs` (then the Monte Carlo error is reported).
      reward_model: ``q(x_i, a)`` for DM, DR and switch-DR: an array ``(n, K)`` (or ``(n, K,
        L)``) or a :class:`~jaxbandits.ope.RewardModel`; None computes only IPS and SNIPS.
      estimators: any of :data:`ESTIMATORS`.
      max_weight: clip the importance weights of IPS, SNIPS, DM and DR at this value.
      switch_threshold: tau of switch-DR (rounds with a larger weight use DM alone).
      interval: ``"bootstrap"`` (percentile, ``num_bootstrap`` resamples of the rounds) or
        ``"normal"``.
      num_bootstrap: resamples for the bootstrap interval.
      level: the confidence level.
      key: the bootstrap's key (or an int seed).

    Returns:
      an :class:`OPEResult`.

    Example::

        probs = jnp.full((log.num_rounds, log.num_actions), 1 / log.num_actions)
        q = jb.ope.fit_reward_model(log)
        print(jb.ope.evaluate(log, probs, q))
    """
    estimators = tuple(estimators)
    unknown = [e for e in estimators if e not in ESTIMATORS]
    if unknown or not estimators:
        raise ValueError(f"estimators must be among {ESTIMATORS}, got {list(estimators)}")
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {INTERVALS}, got {interval!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if interval == "bootstrap" and (not isinstance(num_bootstrap, int) or num_bootstrap < 2):
        raise ValueError(f"num_bootstrap must be an integer >= 2, got {num_bootstrap!r}")
    for name, value in (("max_weight", max_weight), ("switch_threshold", switch_threshold)):
        if not value > 0:
            raise ValueError(f"{name} must be positive, got {value}")
    if reward_model is None and any(e in _NEEDS_MODEL for e in estimators):
        needing = [e for e in estimators if e in _NEEDS_MODEL]
        raise ValueError(f"{needing} need a reward_model (an (n, K) array of q(x, a) or "
                         "jb.ope.fit_reward_model(log)); pass estimators=('ips', 'snips') "
                         "without one")
    mc = getattr(probs, "std_error", None) is not None and getattr(probs, "num_draws", 0) > 0
    num_draws = int(getattr(probs, "num_draws", 0))
    table = getattr(probs, "probs", probs)
    table, single = _policy_axis(log, jnp.asarray(table))
    dtype = log.reward.dtype
    q = _reward_table(log, reward_model, dtype)
    key = jax.random.key(key) if isinstance(key, int) else key
    boot = num_bootstrap if interval == "bootstrap" else 0
    value, se, lower, upper = _evaluate(log, table.astype(dtype), q, estimators,
                                        jnp.asarray(max_weight, dtype),
                                        jnp.asarray(switch_threshold, dtype), key, boot, level)
    if mc:
        mc_se = _mc_std_error(log, table.astype(dtype), q, estimators,
                              jnp.asarray(max_weight, dtype),
                              jnp.asarray(switch_threshold, dtype), num_draws)
    else:
        mc_se = jnp.zeros_like(value)
    out = [np.asarray(a) for a in (value, lower, upper, se, mc_se)]
    if single:
        out = [a[0] for a in out]
    return OPEResult(estimators, *out[:3], out[3], out[4], level=level, interval=interval,
                     num_bootstrap=boot, num_draws=num_draws)


# ------------------------------------------------------------------------------------------------
# The pieces.


def _policy_axis(log: BanditLog, probs: jax.Array) -> tuple[jax.Array, bool]:
    """``(P, n, K[, L])`` or context-free ``(P, 1, K[, L])`` probabilities, and whether the
    input had no policy axis. Checks the shapes against ``log``."""
    n, k, num_pos = log.num_rounds, log.num_actions, log.num_positions
    tail = (k, num_pos) if num_pos > 1 else (k,)
    t = len(tail)
    if probs.shape[-t:] != tail:
        tail2 = (k,)  # probabilities shared by every position
        if num_pos > 1 and probs.shape[-1:] == tail2:
            probs = jnp.repeat(probs[..., None], num_pos, axis=-1)
        else:
            raise ValueError(f"probs must end with the log's (K{', L' if num_pos > 1 else ''}) "
                             f"= {tail}, got shape {probs.shape}")
    lead = probs.shape[:-t]
    if lead == ():
        return probs[None, None], True
    if lead in ((n,), (1,)):  # (1, ...): a context-free policy, the same in every round
        return probs[None], True
    if len(lead) == 2 and lead[1] in (n, 1):
        return probs, False
    raise ValueError(f"probs must have shape (n, {tail}) or (P, n, {tail}) with n = "
                     f"{n} rounds, got {probs.shape}")


def _reward_table(log: BanditLog, model: Any, dtype) -> jax.Array | None:
    if model is None:
        return None
    q = model.predict(log) if hasattr(model, "predict") else jnp.asarray(model, dtype)
    n, k, num_pos = log.num_rounds, log.num_actions, log.num_positions
    if q.shape == (n, k) and num_pos > 1:
        q = jnp.repeat(q[..., None], num_pos, axis=-1)
    want = (n, k, num_pos) if num_pos > 1 else (n, k)
    if q.shape != want:
        raise ValueError(f"reward_model must give q(x_i, a) of shape {want}, got {q.shape}")
    return q.astype(dtype)


def _at_position(log: BanditLog, a: jax.Array) -> jax.Array:
    """``(..., n, K, L)`` -> ``(..., n, K)`` at each round's logged position."""
    if log.num_positions == 1:
        return a
    idx = jnp.broadcast_to(log.position[:, None, None], a.shape[:-1] + (1,))
    return jnp.take_along_axis(a, idx, axis=-1)[..., 0]


def round_terms(log: BanditLog, probs: jax.Array, q: jax.Array | None, max_weight,
                switch_threshold, estimators: tuple[str, ...] = ESTIMATORS):
    """``(u, v)``, each ``(E, n)``: the per-round numerator and denominator terms of each
    estimator for one policy's probabilities ``probs`` ``(n or 1, K[, L])``."""
    n = log.num_rounds
    pi = _at_position(log, jnp.broadcast_to(probs, (n,) + probs.shape[1:]))
    rows = jnp.arange(n)
    raw = pi[rows, log.action] / log.pscore
    w = jnp.minimum(raw, max_weight)
    r = log.reward
    ones = jnp.ones_like(r)
    if q is not None:
        qq = _at_position(log, q)
        q_a = qq[rows, log.action]
        dm = jnp.sum(pi * qq, axis=-1) / jnp.sum(pi, axis=-1)  # as np.average, OBP's DM
    terms = {}
    for name in estimators:
        if name == "ips":
            terms[name] = (w * r, ones)
        elif name == "snips":
            terms[name] = (w * r, w)
        elif name == "dm":
            terms[name] = (dm, ones)
        elif name == "dr":
            terms[name] = (dm + w * (r - q_a), ones)
        else:  # switch-dr
            terms[name] = (dm + jnp.where(raw <= switch_threshold, raw, 0.0) * (r - q_a), ones)
    u = jnp.stack([terms[e][0] for e in estimators])
    v = jnp.stack([terms[e][1] for e in estimators])
    return u, v


@functools.partial(jax.jit, static_argnames=("estimators", "num_bootstrap", "level"))
def _evaluate(log, probs, q, estimators, max_weight, switch_threshold, key, num_bootstrap,
              level):
    """``(value, se, lower, upper)``, each ``(P, E)``; one compiled program for all policies,
    estimators and bootstrap resamples."""
    n = log.num_rounds
    terms = functools.partial(round_terms, estimators=estimators)
    u, v = jax.vmap(terms, (None, 0, None, None, None))(
        log, probs, q, max_weight, switch_threshold)  # (P, E, n)
    value = u.sum(-1) / v.sum(-1)
    mean_v = v.mean(-1)
    resid = (u - value[..., None] * v) / mean_v[..., None]
    se = jnp.std(resid, axis=-1, ddof=1) / jnp.sqrt(n)
    alpha = 1.0 - level
    if num_bootstrap:
        counts = _bootstrap_counts(key, n, num_bootstrap, u.dtype)  # (B, n)
        boot = (jnp.einsum("pen,bn->peb", u, counts)
                / jnp.einsum("pen,bn->peb", v, counts))
        lower = jnp.quantile(boot, alpha / 2, axis=-1)
        upper = jnp.quantile(boot, 1 - alpha / 2, axis=-1)
    else:
        z = jax.scipy.stats.norm.ppf(1 - alpha / 2)
        lower, upper = value - z * se, value + z * se
    return value, se, lower, upper


def _bootstrap_counts(key: jax.Array, n: int, num: int, dtype) -> jax.Array:
    """``(num, n)`` how often each round is drawn in each of ``num`` resamples of size n."""
    idx = jax.random.randint(key, (num, n), 0, n)
    return jnp.zeros((num, n), dtype).at[jnp.arange(num)[:, None], idx].add(1.0)


@functools.partial(jax.jit, static_argnames=("estimators", "num_draws"))
def _mc_std_error(log, probs, q, estimators, max_weight, switch_threshold, num_draws):
    """``(P, E)`` the Monte Carlo standard error of each estimate, linearised in the action
    probabilities: each independent categorical draw (a round's distribution, or a context-free
    policy's distribution at one position) contributes ``(sum_a g_a^2 p_a - (sum_a g_a p_a)^2)
    / M`` for the gradient ``g`` of the estimate in its probabilities and M draws. Covariances
    between the positions of one slate draw are ignored (each round reads one position)."""
    def point(table, e):
        u, v = round_terms(log, table, q, max_weight, switch_threshold, (e,))
        return u.sum() / v.sum()

    axis = -2 if log.num_positions > 1 else -1

    def one(table):
        row = []
        for e in estimators:
            g = jax.grad(point)(table, e)
            var = (jnp.sum(g * g * table, axis=axis)
                   - jnp.sum(g * table, axis=axis) ** 2) / num_draws
            row.append(jnp.sqrt(jnp.sum(jnp.maximum(var, 0.0))))
        return jnp.stack(row)

    return jax.lax.map(one, probs)
