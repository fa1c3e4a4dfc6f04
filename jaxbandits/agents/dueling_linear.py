"""Linear contextual dueling bandits: MaxInP, MaxPairUCB, CoLSTIM and VACDB (the linear baselines of
Oh et al. 2026, Sec. 6).

Each round shows ``K`` contexts ``X`` ``(K, d)``; the agent plays an ordered pair ``(k1, k2)``
and sees ``o = 1`` (``k1`` preferred) with probability ``sigmoid(theta*^T (x_k1 - x_k2))`` (the
Bradley-Terry-Luce model with a linear utility ``u(x) = theta*^T x``). Every agent here learns
``theta*`` from difference vectors ``z = x_k1 - x_k2`` and preference bits ``o``.

**The shared linear-BTL core** (:class:`LinearDuelAgent`; ``maxinp``, ``maxpair-ucb``,
``colstim``). The Gram matrix ``V_t = reg I + sum_s z_s z_s^T`` is kept in square-root form
(:class:`~jaxbandits.linalg.RidgeState`, ``S S^T = V_t^{-1}``, Potter's rank-one update: O(d^2)
per round, positive definite by construction), so pair widths are
``||z||_{V^{-1}} = ||S^T z||`` and the selection rules of :mod:`~jaxbandits.agents.duel_select`
take ``phi = X S`` with an identity ``inv_gram``. ``theta`` is fitted by ``fit``:

* ``"mle"``: the regularised logistic MLE on a ring buffer of ``(z, o)`` (capacity
  ``buffer_size``), ``theta_t = argmin kappa reg ||theta||^2 + (1/n) sum_i [log(1 + e^{z_i^T
  theta}) - o_i z_i^T theta]`` over the ``n`` buffered rounds (VACDB's code, ``LCDB.MLE``, which
  uses BFGS), solved to round-off by warm-started damped Newton
  (:func:`~jaxbandits.linalg.glm_newton`, the ``reg_glm = 2 kappa reg n`` form of the same loss);
* ``"online"``: one online Newton step per round, ``V <- V + z z^T``,
  ``theta <- theta + V^{-1} z (o - sigmoid(theta^T z))`` (rcdp-public's
  ``BaselineDuelingGLMLearner.update``).

**Presets.** The two public codes that implement these baselines disagree, and Oh et al. 2026
(Sec. 6) give no settings: ``preset="vacdb"`` (default; uclaml/VACDB's ``ucb.py``,
whose conventions NVLDB's Listing 4 reuses) and ``preset="rcdp"`` (the NVLDB first author's
``rcdp-public``). A field left at None takes its preset's value (``presets``, as each class
documents), which ``jb.make_agent`` merges in; ``T`` in those values is ``horizon_hint`` (2,000,
NVLDB's timing-study horizon; ``jb.make_agent(name, env=env, horizon=T)`` sets it, and sizes the
buffer to ``min(T, AUTO_BUFFER)``). The values of d (``2 sqrt(d log T)``) are filled by
``make_agent(name, env=env)``; without an environment they are computed from the spec's d where the
rule reads them.

``vacdb`` (:class:`VACDB`) keeps its own multi-layer statistics (SupLinUCB-style elimination).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.agents.duel_select import CANDIDATE_MODES, pair_widths, select_pair
from jaxbandits.agents.dueling_linear_core import (
    _TWO_SQRT_D_LOG_T,
    LINEAR_DUEL_FITS,
    LINEAR_DUEL_PRESETS,
    LinearDuelAgent,
    LinearDuelState,
    _check_name,
    _duel_presets,
    _DuelAgent,
    _sqrt_d_log_t,
)
from jaxbandits.agents.select import greedy_index
from jaxbandits.core import (
    Context,
    Feedback,
    PerDim,
    Spec,
    check_nonnegative,
    check_positive,
    float_dtype,
)
from jaxbandits.linalg import (
    GLMData,
    RidgeState,
    glm_data_init,
    glm_newton,
    ridge_init,
    ridge_update,
    ridge_widths,
)
from jaxbandits.registry import register_agent
from jaxbandits.ring import ring_slot, ring_write

__all__ = [
    "LINEAR_DUEL_FITS",
    "LINEAR_DUEL_PRESETS",
    "VACDB",
    "CoLSTIM",
    "LinearDuelAgent",
    "LinearDuelState",
    "MaxInP",
    "MaxPairUCB",
    "VACDBState",
]


@register_agent
class MaxInP(LinearDuelAgent):
    """MaxInP (Saha 2021): the most informative pair among the plausible winners.

    The UCB-CSYM rule (:func:`~jaxbandits.agents.duel_select.select_pair`) on the contexts,
    ``u = X theta_t``, ``phi = X``, ``inv_gram = V_t^{-1}``, ``a = beta``: the candidate set
    ``C_t = {i : (x_i - x_j)^T theta_t + beta ||x_i - x_j||_{V_t^{-1}} >= 0 for all j}`` and
    ``(k1, k2) = argmax_{i, j in C_t} ||x_i - x_j||_{V_t^{-1}}``.

    Defaults. ``preset="vacdb"`` (uclaml/VACDB ``ucb.py`` ``MaxInp``): ``beta = 2 sqrt(d log T)``,
    ``reg = 0.001``, ``kappa = 0.1``, the MLE refitted every round, ``candidates="ge"`` (its
    ``ucb >= 0``), self-duels allowed (``C = {i}`` plays ``(i, i)``). ``preset="rcdp"``:
    ``beta = 0.5``, ``reg = 1``, one online Newton step per round, no self-duels (rcdp-public's
    ``maxinp_select`` is a leader/challenger variant of this rule, not reproduced here).

    Attributes (besides :class:`LinearDuelAgent`'s):
      candidates: ``"ge"`` (default, VACDB) or ``"strict"`` (Saha's ``>``) candidate sets
        (static).

    Example::

        agent = jb.make_agent("maxinp", env=jb.make_env("dueling-cosine"), horizon=2000)
    """

    name = "maxinp"
    description = "MaxInP: the widest pair among the plausible winners (linear BTL, CSYM)"
    paper = "Saha 2021 (as in the VACDB code of Di et al. 2023); baseline of Oh et al. 2026, Sec. 6"

    candidates: str = struct.field(pytree_node=False, default="ge")

    presets = _duel_presets(vacdb={"explore_scale": _TWO_SQRT_D_LOG_T, "forbid_self_duel": False},
                            rcdp={"explore_scale": 0.5, "forbid_self_duel": True})

    def validate(self) -> None:
        super().validate()
        _check_name(self, "candidates", CANDIDATE_MODES)

    def act(self, state: LinearDuelState, key: jax.Array, context: Context):
        u, phi, inv_gram = self._rule_inputs(state, context.arms)
        dim = context.arms.shape[-1]
        pair = select_pair("ucb-csym", key, u, phi, inv_gram,
                           self.setting("explore_scale", dim), state.gram.count + 1,
                           forbid_self_duel=self.setting("forbid_self_duel", dim),
                           candidates=self.candidates)
        return pair, state


@register_agent
class MaxPairUCB(LinearDuelAgent):
    """MaxPairUCB: the pair with the largest joint upper confidence bound.

    The UCB-OSYM rule on the contexts: ``(k1, k2) = argmax_{i, j} (x_i + x_j)^T theta_t + beta
    ||x_i - x_j||_{V_t^{-1}}`` (row-major first maximiser).

    Defaults. ``preset="vacdb"`` (uclaml/VACDB ``ucb.py`` ``MaxPairUCB``): ``beta = 2 sqrt(d log
    T)``, ``reg = 0.001``, ``kappa = 0.1``, the MLE every round. ``preset="rcdp"``
    (``MaxPairUCBLearner``): ``beta = sqrt(d)``, ``reg = 1``, one online Newton step per round.
    Both codes allow self-duels (the diagonal scores ``2 u_i``), so ``forbid_self_duel``
    defaults to False.

    Example::

        agent = jb.make_agent("maxpair-ucb", preset="rcdp")
    """

    name = "maxpair-ucb"
    description = "MaxPairUCB: the pair maximising the joint UCB (linear BTL, OSYM)"
    paper = ("Saha & Hüllermeier 2022 (as in the VACDB code of Di et al. 2023); "
             "baseline of Oh et al. 2026, Sec. 6")

    presets = _duel_presets(
        vacdb={"explore_scale": _TWO_SQRT_D_LOG_T, "forbid_self_duel": False},
        rcdp={"explore_scale": PerDim(lambda d, agent: math.sqrt(d)), "forbid_self_duel": False})

    def act(self, state: LinearDuelState, key: jax.Array, context: Context):
        u, phi, inv_gram = self._rule_inputs(state, context.arms)
        dim = context.arms.shape[-1]
        pair = select_pair("ucb-osym", key, u, phi, inv_gram,
                           self.setting("explore_scale", dim), state.gram.count + 1,
                           forbid_self_duel=self.setting("forbid_self_duel", dim))
        return pair, state


@register_agent
class CoLSTIM(LinearDuelAgent):
    """CoLSTIM (Bengs, Saha & Huellermeier 2022): a perturbed leader and its toughest rival.

    Each round, with ``t`` counted from 1::

        p_t  = min(1, coupling_scale (d / sqrt t) log(d T))
        eps  = one Gumbel(0, 1) draw shared by all arms with probability p_t, else K draws,
               clipped to [-threshold, threshold]
        k1   = argmax_k theta_t^T x_k + eps_k ||x_k||_{V_t^{-1}}
        k2   = argmax_j theta_t^T (x_j - x_k1) + c1 ||x_j - x_k1||_{V_t^{-1}}   (c1 = explore_scale)

    (``k2`` skips ``k1`` when ``forbid_self_duel``). No warm-up in either public code.

    Presets (the public codes; Oh et al. 2026 give none):

    * ``"vacdb"`` (default; uclaml/VACDB ``ucb.py`` ``CoLSTIM``): ``threshold = sqrt(d log T)``,
      ``coupling_scale = 1``, ``c1 = 2 sqrt(d log T)``, ``reg = 0.001``, ``kappa = 0.1``, the MLE
      of ``kappa reg ||theta||^2 + (1/t) sum loss`` every round, ``k2`` may equal ``k1``.
    * ``"rcdp"`` (rcdp-public ``ColSTIMLearner``): Gumbel clipped to +-5, always independent
      draws (``coupling_scale = 0``; rcdp-public's "p_t = 1" is its probability of independent
      draws), ``c1 = 0.5``, ``k2 != k1``, one online Newton step per round, ``reg = 1``.

    Attributes (besides :class:`LinearDuelAgent`'s):
      threshold: C, the clipping threshold of the perturbations (None: the preset's).
      coupling_scale: the factor of the shared-draw probability ``p_t`` (None: the preset's).

    Example::

        agent = jb.make_agent("colstim", preset="rcdp")
    """

    name = "colstim"
    description = "CoLSTIM: Gumbel-perturbed leader + optimistic challenger (linear BTL)"
    paper = "Bengs et al. 2022; baseline of Oh et al. 2026, Sec. 6"

    threshold: float | None = None
    coupling_scale: float | None = None

    presets = _duel_presets(
        vacdb={"explore_scale": _TWO_SQRT_D_LOG_T,
               "threshold": PerDim(lambda d, agent: _sqrt_d_log_t(d, agent.horizon_hint)),
               "coupling_scale": 1.0, "forbid_self_duel": False},
        rcdp={"explore_scale": 0.5, "threshold": 5.0, "coupling_scale": 0.0,
              "forbid_self_duel": True})

    def validate(self) -> None:
        super().validate()
        for name in ("threshold", "coupling_scale"):
            if getattr(self, name) is not None:
                check_nonnegative(self, name)

    def act(self, state: LinearDuelState, key: jax.Array, context: Context):
        arms = context.arms
        num_arms, dim = arms.shape
        key_share, key_eps = jax.random.split(key)
        t = (state.gram.count + 1).astype(arms.dtype)
        horizon = jnp.asarray(self.horizon_hint, arms.dtype)
        p_share = jnp.minimum(1.0, self.setting("coupling_scale", dim) * dim / jnp.sqrt(t)
                              * jnp.log(dim * horizon))
        gumbel = jax.random.gumbel(key_eps, (num_arms,), arms.dtype)
        shared = jax.random.uniform(key_share, (), arms.dtype) < p_share
        limit = self.setting("threshold", dim)
        eps = jnp.clip(jnp.where(shared, gumbel[0], gumbel), -limit, limit)
        u = arms @ state.theta
        first = greedy_index(u + eps * ridge_widths(state.gram, arms))
        rivals = arms - arms[first]
        scores = rivals @ state.theta + self.setting("explore_scale", dim) * ridge_widths(
            state.gram, rivals)
        if self.setting("forbid_self_duel", dim):
            scores = jnp.where(jnp.arange(num_arms) == first, -jnp.inf, scores)
        return jnp.stack([first, greedy_index(scores)]), state


# ------------------------------------------------------------------------------------------------
# VACDB: SupLinUCB-style multi-layer elimination.


class VACDBState(struct.PyTreeNode):
    """State of :class:`VACDB` (``L`` layers; layer ``l`` = 1..L is stored at index ``l - 1``).

    Attributes:
      theta: ``(L, d)`` the per-layer weighted MLEs.
      gram: per-layer ``Sigma_l = 2^{-2l} I + sum w^2 z z^T`` in square-root form (a stacked
        :class:`~jaxbandits.linalg.RidgeState`: ``sqrt_cov`` ``(L, d, d)``).
      data: the ring buffer of the weighted rows: ``features`` ``(B, d)`` the ``z``,
        ``counts`` ``(B,)`` the weights ``w^2``, ``rewards`` ``(B,)`` ``w^2 o``.
      layers: ``(B,)`` int32, the layer of each buffered row.
      pending_layer: ``()`` int32, the layer this round's sample goes to (set by ``act``; 0: none).
      count: ``()`` int32, the rounds played.
    """

    theta: jax.Array
    gram: RidgeState
    data: GLMData
    layers: jax.Array
    pending_layer: jax.Array
    count: jax.Array


@register_agent
class VACDB(_DuelAgent):
    """VACDB (Di et al. 2023): variance-aware SupLinUCB-style elimination over ``L`` layers.

    Layer ``l = 1..L`` keeps ``Sigma_l = 2^{-2l} I + sum_s w_s^2 z_s z_s^T`` and the weighted MLE
    ``theta_l = argmin kappa 2^{-2l} ||theta||^2 + sum_s w_s^2 [log(1 + e^{z_s^T theta}) - o_s
    z_s^T theta]`` over its own samples (warm-started from ``theta_l``, or ``theta_{l-1}`` while
    ``theta_l = 0``). With ``e_l(i, j) = ||x_i - x_j||_{Sigma_l^{-1}}`` recomputed on each round's
    contexts (the official code caches it for a fixed arm set), ``alpha = 2^{-L}`` and
    ``beta_l = explore_scale 2^{-l} sqrt(log T)``, a round starts with ``A_1`` = all arms and at
    layer ``l`` (only pairs of ``A_l x A_l`` count):

    1. if every ``e_l <= alpha``: play the UCB-OSYM pair of ``A_l`` (``argmax theta_l^T (x_i +
       x_j) + beta_l e_l(i, j)``); its sample goes to layer ``l + 1`` (dropped if ``l = L``;
       the paper drops it always: ``exploit_update=False``);
    2. elif every ``e_l <= 2^{-l}``: ``A_{l+1} = {i in A_l : theta_l^T x_i >= max_{A_l}
       theta_l^T x - 2^{-l} beta_l}``, next layer;
    3. else play a uniformly random pair with ``e_l > 2^{-l}``; its sample goes to layer ``l``.

    A sample of layer ``l`` gets the weight ``w = 2^{-l} / e_l(k1, k2)`` (from ``Sigma_l``
    before the update). The loop is a ``lax.scan`` over the ``L`` layers (at layer ``L``,
    ``alpha = 2^{-L}`` makes steps 1 and 2 coincide, so a round always ends).

    Defaults, from uclaml/VACDB (``suplin.py`` ``StaAdaCDB``, ``db.py``): ``kappa = 1``, ``beta_l
    = 2^{-l} sqrt(log T) / ||theta*||`` with the code's ``||theta*|| = 1`` (``explore_scale``
    plays ``1 / ||theta*||``), ``num_layers = 5`` (its ``main.py`` runs ``L = 5``), self-duels
    allowed (a sample with ``z = 0`` is dropped: the code would divide by zero). Simplifications:
    one ``beta_l`` formula throughout (the code starts from ``2^{1-l}`` before a layer's first
    sample), exact Newton instead of BFGS(gtol 1e-4).

    Attributes:
      num_layers: L (static).
      kappa: the penalty weight of the per-layer MLE.
      explore_scale: the multiplier of ``beta_l``.
      exploit_update: step 1's sample updates layer ``l + 1`` (the code) or nothing (the
        paper) (static).
      forbid_self_duel: step 1 never plays ``k1 == k2`` (static).
      horizon_hint: T in ``beta_l`` (2,000; ``make_agent(..., horizon=T)`` sets it).
      buffer_size: rows of the ring buffer of weighted samples, all layers together (static;
        None: ``AUTO_BUFFER``).
      newton_steps: the most damped-Newton steps per layer fit (static; 20).

    Example::

        agent = jb.make_agent("vacdb", env=jb.make_env("dueling-cosine"), horizon=2000)
    """

    name = "vacdb"
    description = "VACDB: variance-aware multi-layer elimination (linear BTL)"
    paper = "Di et al. 2023; baseline of Oh et al. 2026, Sec. 6"

    kappa: float = 1.0
    explore_scale: float = 1.0
    num_layers: int = struct.field(pytree_node=False, default=5)
    exploit_update: bool = struct.field(pytree_node=False, default=True)
    forbid_self_duel: bool = struct.field(pytree_node=False, default=False)

    def validate(self) -> None:
        super().validate()
        check_positive(self, "num_layers", integer=True)

    def init(self, key: jax.Array, spec: Spec) -> VACDBState:
        self._check_spec(spec)
        dtype = float_dtype()
        levels = jnp.arange(1, self.num_layers + 1, dtype=dtype)
        rows = self._buffer_rows()
        return VACDBState(
            theta=jnp.zeros((self.num_layers, spec.dim), dtype),
            gram=jax.vmap(lambda r: ridge_init(spec.dim, r, dtype))(2.0 ** (-2.0 * levels)),
            data=glm_data_init(rows, spec.dim, dtype),
            layers=jnp.zeros((rows,), jnp.int32),
            pending_layer=jnp.zeros((), jnp.int32),
            count=jnp.zeros((), jnp.int32),
        )

    def act(self, state: VACDBState, key: jax.Array, context: Context):
        arms = context.arms
        num_arms, dim = arms.shape
        num_layers = self.num_layers
        dtype = arms.dtype
        levels = jnp.arange(1, num_layers + 1)
        ones = jnp.ones((dim,), dtype)
        phis = jnp.einsum("kd,lde->lke", arms, state.gram.sqrt_cov)  # x_k^T S_l
        norms = jax.vmap(lambda phi: pair_widths(phi, ones, 1.0))(phis)  # (L, K, K)
        utils = state.theta @ arms.T  # (L, K)
        radii = 2.0 ** -levels.astype(dtype)
        log_t = jnp.log(jnp.asarray(self.horizon_hint, dtype))
        betas = self.explore_scale * radii * jnp.sqrt(log_t)
        alpha = 2.0 ** -num_layers
        t = state.count + 1

        def layer(carry, xs):
            active, done, pair, target = carry
            level, radius, beta, norm, u, phi, key_l = xs
            key_ucb, key_pick = jax.random.split(key_l)
            inside = active[:, None] & active[None, :]
            masked = jnp.where(inside, norm, 0.0)
            exploit = jnp.all(masked <= alpha)
            narrow = jnp.all(masked <= radius)
            # 1: UCB-OSYM on A_l (arms outside A_l pushed below every pair of A_l)
            big = 4.0 * jnp.max(jnp.abs(u)) + 2.0 * beta * jnp.max(norm) + 1.0
            best = select_pair("ucb-osym", key_ucb, jnp.where(active, u, u - big), phi, ones,
                               beta, t, forbid_self_duel=self.forbid_self_duel)
            up = jnp.where((level < num_layers) & self.exploit_update, level + 1, 0)
            # 3: a uniformly random pair of A_l x A_l with e_l > 2^{-l}
            wide = (inside & (norm > radius)).reshape(-1)
            flat = jax.random.categorical(key_pick, jnp.where(wide, 0.0, -jnp.inf))
            explore = jnp.stack([flat // num_arms, flat % num_arms]).astype(jnp.int32)
            # 2: eliminate
            top = jnp.max(jnp.where(active, u, -jnp.inf))
            kept = active & (u >= top - radius * beta)
            chosen = jnp.where(exploit, best, explore)
            stop = ~done & (exploit | ~narrow)
            pair = jnp.where(stop, chosen, pair)
            target = jnp.where(stop, jnp.where(exploit, up, level), target)
            active = jnp.where(done | exploit | ~narrow, active, kept)
            return (active, done | stop, pair, target), None

        start = (jnp.ones((num_arms,), bool), jnp.zeros((), bool), jnp.zeros((2,), jnp.int32),
                 jnp.zeros((), levels.dtype))
        keys = jax.random.split(key, num_layers)
        (_, _, pair, target), _ = jax.lax.scan(
            layer, start, (levels, radii, betas, norms, utils, phis, keys))
        return pair, state.replace(pending_layer=target.astype(jnp.int32))

    def update(
        self,
        state: VACDBState,
        key: jax.Array,
        context: Context,
        action: jax.Array,
        feedback: Feedback,
    ) -> VACDBState:
        arms = context.arms
        z = arms[action[0]] - arms[action[1]]
        o = jnp.asarray(feedback.reward, z.dtype)
        level = state.pending_layer
        index = jnp.clip(level - 1, 0, self.num_layers - 1)
        sqrt_cov = state.gram.sqrt_cov[index]
        norm = jnp.linalg.norm(sqrt_cov.T @ z)  # e_l(k1, k2), from Sigma_l before the update
        valid = (level >= 1) & (norm > 0)
        weight = jnp.where(valid, 2.0 ** -level.astype(z.dtype) / jnp.where(valid, norm, 1.0),
                           0.0)
        levels = jnp.arange(1, self.num_layers + 1)
        rows = jnp.where((levels == level)[:, None], weight * z, 0.0)
        gram = jax.vmap(ridge_update)(state.gram, rows, jnp.zeros((self.num_layers,), z.dtype))

        data = state.data
        row = ring_slot(data.num_obs, data.capacity)
        sq = weight * weight
        features, counts, rewards = ring_write(
            (data.features, data.counts, data.rewards), row, (z, sq, sq * o))
        written = data.replace(features=features, counts=counts, rewards=rewards,
                               num_obs=data.num_obs + 1)
        data = jax.tree.map(lambda new, old: jnp.where(valid, new, old), written, data)
        layers = jnp.where(valid, state.layers.at[row].set(level), state.layers)

        mine = (layers == level).astype(z.dtype)
        start = state.theta[index]
        below = state.theta[jnp.maximum(index - 1, 0)]
        start = jnp.where((level >= 2) & jnp.all(start == 0), below, start)
        reg = 2.0 * self.kappa * 2.0 ** (-2.0 * level.astype(z.dtype))
        fitted = glm_newton(start, data.features, data.counts * mine, data.rewards * mine, reg,
                            "logistic", num_steps=jnp.where(valid, self.newton_steps, 0))
        theta = state.theta.at[index].set(jnp.where(valid, fitted, state.theta[index]))
        return VACDBState(theta=theta, gram=gram, data=data, layers=layers,
                          pending_layer=jnp.zeros((), jnp.int32), count=state.count + 1)
