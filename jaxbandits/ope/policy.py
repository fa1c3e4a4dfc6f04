"""A target policy's action probabilities on logged contexts, and agents trained on logs.

Off-policy estimators need ``pi(a | x_i)`` for every logged context. :func:`action_probs`
gets them from any agent:

* **exact**, for an agent that declares its distribution (the
  :class:`~jaxbandits.core.Logits` capability: ``softmax(logits)``, e.g. ``soft-elim``,
  ``neural-policy`` or :class:`~jaxbandits.agents.Softmax` over a deterministic score such as
  ``greedy`` or ``lin-ucb``; the :class:`~jaxbandits.core.LogProb` capability: ``exp(log_prob)``
  of every arm, e.g. ``epsilon-greedy`` and ``disjoint-epsilon-greedy``), and for Bernoulli
  Thompson sampling (``bernoulli-ts``, whose rank probabilities are one-dimensional integrals,
  :func:`beta_thompson_probs`);
* otherwise by **Monte Carlo**: ``act`` (or, for slates of L positions, the top L of
  ``scores``) is ``vmap``-ped over ``num_draws`` keys per round, the frequencies are the
  probabilities and their binomial standard error ``sqrt(p (1 - p) / M)`` is reported
  (:class:`ActionProbs`); :func:`~jaxbandits.ope.evaluate` carries it to the estimates.

A policy given as an array ``(n, K)`` of probabilities needs none of this. Agents read a
:class:`~jaxbandits.Context` with ``arms`` ``(K, d')``; ``context_fn`` makes one from a logged
context row ``x`` ``(d,)``. The default (:func:`default_context_fn`) is the disjoint model of
Li et al. (2010), one parameter vector per action, either way: the per-arm agents (family
``"disjoint"``, e.g. ``disjoint-lin-ts``) read ``x`` itself (a
:class:`~jaxbandits.envs.SharedContext`, ``d' = d``), every other agent the block features
``e_a kron x`` (:func:`block_arms`, ``d' = K d``: a shared-parameter agent such as ``lin-ts``
is then the same model at O((K d)^2) per round instead of O(K d^2)).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxbandits.agents.mab import BernoulliTS
from jaxbandits.core import Agent, Context, Feedback, Logits, LogProb, Scores, Spec
from jaxbandits.data.logged import BanditLog
from jaxbandits.envs.disjoint import shared_context

__all__ = ["ActionProbs", "action_probs", "beta_thompson_probs", "block_arms",
           "default_context_fn", "fit_on_log", "log_spec"]

#: Rounds of a log processed at once by :func:`action_probs` (bounds memory on large logs).
BATCH_ROUNDS = 512


class ActionProbs(NamedTuple):
    """A target policy's action probabilities on logged contexts.

    Attributes:
      probs: ``(n, K)``, or ``(n, K, L)`` per position (``(K[, L])`` for a context-free
        policy computed once).
      std_error: the Monte Carlo standard error of each entry (zeros when exact).
      num_draws: M, the Monte Carlo draws per round (0: exact).
    """

    probs: jax.Array
    std_error: jax.Array
    num_draws: int


def block_arms(x: jax.Array, num_actions: int) -> Context:
    """The disjoint model's arms for a context ``x`` ``(d,)``: arm a is ``e_a kron x``,
    ``(K, K d)`` (zeros except x in block a)."""
    eye = jnp.eye(num_actions, dtype=x.dtype)
    return Context(arms=(eye[:, :, None] * x[None, None, :]).reshape(num_actions, -1))


def default_context_fn(agent: Agent, num_actions: int) -> Callable[[jax.Array], Context]:
    """How ``agent`` reads a logged context ``x`` ``(d,)`` by default: a per-arm agent (family
    ``"disjoint"``) the :class:`~jaxbandits.envs.SharedContext` of ``x``, any other agent the
    block features of :func:`block_arms`."""
    if getattr(agent, "family", "") == "disjoint":
        return functools.partial(shared_context, num_arms=num_actions)
    return functools.partial(block_arms, num_actions=num_actions)


def log_spec(log: BanditLog, context_fn: Callable | None = None) -> Spec:
    """The :class:`~jaxbandits.Spec` an agent sees on ``log``'s rounds through ``context_fn``
    (default :func:`block_arms`)."""
    fn = context_fn or functools.partial(block_arms, num_actions=log.num_actions)
    arms = jax.eval_shape(fn, jax.ShapeDtypeStruct((log.dim,), log.context.dtype)).arms
    return Spec(dim=arms.shape[-1], num_arms=log.num_actions, action_kind="index")


def fit_on_log(agent: Agent, log: BanditLog, key: jax.Array | int = 0,
               context_fn: Callable | None = None, state: Any = None) -> Any:
    """The agent's state after learning from every round of ``log`` in order, as if it had
    played the logged action and seen the logged reward (``update`` only; no ``act``).

    Args:
      agent: any agent with index actions.
      log: the rounds to learn from.
      key: the key of ``init`` and of the updates.
      context_fn: a logged context ``(d,)`` to a :class:`~jaxbandits.Context` (default
        :func:`default_context_fn`).
      state: a state to continue from (default: ``agent.init``).
    """
    key = jax.random.key(key) if isinstance(key, int) else key
    fn = context_fn or default_context_fn(agent, log.num_actions)
    key_init, key_update = jax.random.split(key)
    if state is None:
        state = agent.init(key_init, log_spec(log, fn))
    return _fit(agent, fn, log, state, key_update)


@functools.partial(jax.jit, static_argnames=("fn",))
def _fit(agent, fn, log, state, key):
    def step(state, row):
        i, x, a, r = row
        feedback = Feedback(reward=r, regret=jnp.zeros_like(r))
        return agent.update(state, jax.random.fold_in(key, i), fn(x), a, feedback), None

    rows = (jnp.arange(log.num_rounds), log.context, log.action, log.reward)
    return jax.lax.scan(step, state, rows)[0]


def action_probs(
    agent: Agent,
    state: Any,
    log: BanditLog | jax.Array,
    key: jax.Array | int = 0,
    *,
    num_draws: int = 1000,
    num_positions: int = 1,
    context_fn: Callable | None = None,
    method: str = "auto",
) -> ActionProbs:
    """``pi(a | x_i)`` of ``agent`` (with its ``state`` frozen) for every round of ``log``.

    Args:
      agent: the target policy.
      state: its state (e.g. from :func:`fit_on_log`, or ``agent.init``).
      log: the log (its contexts are used), or contexts ``(n, d)``.
      key: the key of the draws (round i uses ``fold_in(key, i)``).
      num_draws: M, Monte Carlo draws per round.
      num_positions: L; for L > 1 a draw's slate is the top L of the agent's ``scores``
        (needs the :class:`~jaxbandits.core.Scores` capability) and the result is per position.
      context_fn: a context row ``(d,)`` to a :class:`~jaxbandits.Context` (default
        :func:`default_context_fn` with K from the log).
      method: ``"auto"`` (exact for a :class:`~jaxbandits.core.Logits` or
        :class:`~jaxbandits.core.LogProb` agent with L = 1 and for ``bernoulli-ts``, else
        Monte Carlo), ``"exact"`` or ``"mc"``.

    Returns:
      :class:`ActionProbs`, ``probs`` ``(n, K)`` or ``(n, K, L)``.

    The exact probabilities of a ``Logits`` agent are ``softmax(logits(state, key_i, .))``,
    those of a ``LogProb`` agent ``exp(log_prob(state, key_i, ., a))`` for every arm a: exact
    when they do not depend on the key (a softmax over a Thompson sample is conditioned on one
    draw; use ``method="mc"`` for its marginal).
    """
    if method not in ("auto", "exact", "mc"):
        raise ValueError(f"method must be 'auto', 'exact' or 'mc', got {method!r}")
    contexts = log.context if isinstance(log, BanditLog) else jnp.asarray(log)
    if isinstance(log, BanditLog):
        num_actions = log.num_actions
    elif context_fn is None:
        raise ValueError("action_probs on bare contexts needs context_fn (no log gives K)")
    else:
        num_actions = None
    fn = context_fn or default_context_fn(agent, num_actions)
    if isinstance(agent, BernoulliTS) and method != "mc":
        alpha, beta = agent.posterior(state)
        probs = beta_thompson_probs(alpha, beta, num_positions)
        probs = probs[..., 0] if num_positions == 1 else probs
        n = contexts.shape[0]
        probs = jnp.broadcast_to(probs, (n,) + probs.shape)
        return ActionProbs(probs, jnp.zeros_like(probs), 0)
    exact = isinstance(agent, (Logits, LogProb)) and num_positions == 1
    if method == "exact" and not exact:
        raise ValueError(f"{type(agent).__name__}: exact action probabilities need the Logits "
                         "or LogProb capability and num_positions=1; use method='mc'")
    if num_positions > 1 and not isinstance(agent, Scores):
        raise ValueError(f"{type(agent).__name__}: slates (num_positions > 1) are the top L of "
                         "scores, which this agent does not offer")
    if method != "mc" and exact:
        num_draws = 0
    elif not isinstance(num_draws, int) or num_draws < 1:
        raise ValueError(f"num_draws must be a positive integer, got {num_draws!r}")
    key = jax.random.key(key) if isinstance(key, int) else key
    probs = _probs(agent, fn, state, contexts, key, num_draws, num_positions)
    if num_draws:
        se = jnp.sqrt(probs * (1.0 - probs) / num_draws)
    else:
        se = jnp.zeros_like(probs)
    return ActionProbs(probs, se, num_draws)


@functools.partial(jax.jit, static_argnames=("fn", "num_draws", "num_positions"))
def _probs(agent, fn, state, contexts, key, num_draws, num_positions):
    def one(row):
        i, x = row
        ctx = fn(x)
        k = ctx.arms.shape[0]
        key_i = jax.random.fold_in(key, i)
        if not num_draws and isinstance(agent, Logits):
            return jax.nn.softmax(agent.logits(state, key_i, ctx))
        if not num_draws:  # LogProb: every arm's probability
            arms = jnp.arange(k, dtype=jnp.int32)
            return jnp.exp(jax.vmap(lambda a: agent.log_prob(state, key_i, ctx, a))(arms))
        keys = jax.random.split(key_i, num_draws)
        if num_positions == 1:
            actions = jax.vmap(lambda kk: agent.act(state, kk, ctx)[0])(keys)
            return jnp.mean(jax.nn.one_hot(actions, k, dtype=x.dtype), axis=0)
        slates = jax.vmap(lambda kk: jax.lax.top_k(agent.scores(state, kk, ctx),
                                                    num_positions)[1])(keys)  # (M, L)
        return jnp.mean(jax.nn.one_hot(slates, k, dtype=x.dtype, axis=-2), axis=0)  # (K, L)

    rows = (jnp.arange(contexts.shape[0]), contexts)
    return jax.lax.map(one, rows, batch_size=BATCH_ROUNDS)


def beta_thompson_probs(alpha: jax.Array, beta: jax.Array, num_positions: int = 1, *,
                        num_points: int = 256) -> jax.Array:
    """``(K, L)``: the exact probability that Thompson sampling from independent
    ``Beta(alpha_a, beta_a)`` posteriors puts arm a at rank l (0 = the argmax) of its draws.

    The Bernoulli TS slate of L positions (the Open Bandit Pipeline's ``BernoulliTS``, whose
    ``compute_batch_action_dist`` estimates this by Monte Carlo) as a one-dimensional integral
    per arm::

        P(a at rank l) = int f_a(x) P(exactly l of the other arms draw above x) dx

    with ``f_a`` the Beta density and the count's Poisson-binomial law from the other arms'
    survival functions (dynamic programming over arms before and after a, truncated at L).
    The integral is a trapezoid rule on ``num_points`` points per arm, spread over
    ``mean +- (10, 40) sd`` of each arm's Beta (log-densities; survival functions from the same
    rule), so the result has quadrature error only (each position's probabilities are then
    normalised to sum to 1).

    Args:
      alpha, beta: ``(K,)`` positive Beta parameters (prior plus successes and failures).
      num_positions: L.
      num_points: quadrature points per arm.
    """
    alpha, beta = jnp.asarray(alpha), jnp.asarray(beta)
    if alpha.ndim != 1 or alpha.shape != beta.shape:
        raise ValueError(f"alpha and beta must be (K,) arrays of one shape, got {alpha.shape} "
                         f"and {beta.shape}")
    if not 1 <= num_positions <= alpha.shape[0]:
        raise ValueError(f"num_positions must be in [1, K={alpha.shape[0]}], got "
                         f"{num_positions}")
    return _beta_thompson(alpha, beta, num_positions, num_points)


@functools.partial(jax.jit, static_argnames=("num_positions", "num_points"))
def _beta_thompson(alpha, beta, num_positions, num_points):
    dtype = jnp.result_type(alpha.dtype, jnp.float32)
    alpha, beta = alpha.astype(dtype), beta.astype(dtype)
    total = alpha + beta
    mean = alpha / total
    sd = jnp.sqrt(alpha * beta / (total * total * (total + 1.0)))
    offsets = jnp.linspace(-10.0, 40.0, num_points, dtype=dtype)
    x = jnp.sort(jnp.clip(mean[:, None] + sd[:, None] * offsets[None], 0.0, 1.0).ravel())
    x = jnp.concatenate([jnp.zeros((1,), dtype), x, jnp.ones((1,), dtype)])
    # log Beta densities (K, G); 0 where outside (0, 1)
    inside = (x > 0) & (x < 1)
    xs = jnp.where(inside, x, 0.5)
    logpdf = ((alpha[:, None] - 1) * jnp.log(xs) + (beta[:, None] - 1) * jnp.log1p(-xs)
              - (jax.scipy.special.gammaln(alpha) + jax.scipy.special.gammaln(beta)
                 - jax.scipy.special.gammaln(total))[:, None])
    pdf = jnp.where(inside, jnp.exp(logpdf), 0.0)
    dx = jnp.diff(x)
    pieces = 0.5 * (pdf[:, 1:] + pdf[:, :-1]) * dx  # (K, G - 1) trapezoids
    mass = jnp.sum(pieces, axis=1, keepdims=True)
    cdf = jnp.concatenate([jnp.zeros((alpha.shape[0], 1), dtype),
                           jnp.cumsum(pieces, axis=1)], axis=1) / mass
    survive = jnp.clip(1.0 - cdf, 0.0, 1.0)  # (K, G): P(draw of b > x)
    pdf = pdf / mass

    def add(dist, s):  # one more arm into the truncated count law (G, L)
        shifted = jnp.pad(dist, ((0, 0), (1, 0)))[:, :num_positions]
        new = dist * (1.0 - s)[:, None] + shifted * s[:, None]
        return new, dist

    start = jnp.zeros((x.shape[0], num_positions), dtype).at[:, 0].set(1.0)
    _, before = jax.lax.scan(add, start, survive)  # (K, G, L): arms < a
    _, after = jax.lax.scan(add, start, survive[::-1])
    after = after[::-1]  # arms > a
    others = sum(before[..., j:j + 1] * jnp.pad(after, ((0, 0), (0, 0), (j, 0)))
                 [..., :num_positions] for j in range(num_positions))  # (K, G, L)
    integrand = pdf[..., None] * others
    probs = jnp.sum(0.5 * (integrand[:, 1:] + integrand[:, :-1]) * dx[None, :, None], axis=1)
    return probs / jnp.sum(probs, axis=0)  # each position's law sums to 1
