"""The shared pair-selection rules (``jaxbandits.agents.duel_select``; Oh et al. 2026,
Sec. 4.2, App. C.1, Listings 2-4 of App. E.2).

Identities (widths, the a = 0 rules, candidate sets) run in float64 through the ``x64`` fixture
and against slow NumPy loops written from the paper's formulas (App. C.1, Listings 2-4). The
Thompson-sampling laws are checked through the empirical frequencies of the chosen pairs over many
keys against a NumPy Monte Carlo of the same formulas (tolerance stated at the check). Each rule
compiles once per shape.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbandits.agents.duel_select import (
    RULES,
    candidate_set,
    check_rule,
    pair_quadratic_forms,
    pair_widths,
    select_pair,
)

K, D = 5, 3


def _inputs(seed, num_arms=K, dim=D, diagonal=False):
    """Random ``u`` ``(K,)``, ``phi`` ``(K, D)`` and an SPD ``inv_gram`` (or its diagonal)."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=num_arms)
    phi = rng.normal(size=(num_arms, dim))
    if diagonal:
        inv_gram = rng.uniform(0.2, 2.0, size=dim)
    else:
        root = rng.normal(size=(dim, dim))
        inv_gram = root @ root.T / dim + 0.1 * np.eye(dim)
    return u, phi, inv_gram


def _reference_widths(phi, inv_gram, scale):
    """``a sqrt(max(dphi^T V^{-1} dphi, 0))`` pair by pair (a slow loop)."""
    matrix = np.diag(inv_gram) if inv_gram.ndim == 1 else inv_gram
    num_arms = phi.shape[0]
    out = np.zeros((num_arms, num_arms))
    for i in range(num_arms):
        for j in range(num_arms):
            dphi = phi[i] - phi[j]
            out[i, j] = scale * np.sqrt(max(dphi @ matrix @ dphi, 0.0))
    return out


def _batched(rule, t=1, **options):
    """``select_pair`` jitted and vmapped over ``(key, u, phi, inv_gram, scale)`` (one
    compilation per rule, options and shapes)."""
    return jax.jit(jax.vmap(functools.partial(_select, rule, t=t, **options)))


def _select(rule, key, u, phi, inv_gram, scale, t, **options):
    return select_pair(rule, key, u, phi, inv_gram, scale, t, **options)


def _select_many(rule, keys, u, phi, inv_gram, scale, t=1, **options):
    """``select_pair`` on one problem for each of ``keys``."""
    n = keys.shape[0]
    tile = functools.partial(jnp.broadcast_to, shape=(n,))
    stack = [jnp.broadcast_to(a, (n, *a.shape)) for a in (u, phi, inv_gram)]
    return np.asarray(_batched(rule, t, **options)(keys, *stack, tile(jnp.asarray(scale))))


def _widths(phi, inv_gram, scale):
    return jax.vmap(pair_widths, (0, 0, None))(phi, inv_gram, scale)


def _members(u, widths, mode):
    return np.asarray(jax.vmap(functools.partial(candidate_set, mode=mode))(u, widths))


# ------------------------------------------------------------------------------------------------
# Widths.


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("diagonal", [False, True])
def test_widths_symmetric_nonnegative_zero_diagonal_and_pairwise(diagonal):
    u, phi, inv_gram = _inputs(0, diagonal=diagonal)
    with jax.numpy_rank_promotion("raise"):
        widths = np.asarray(pair_widths(jnp.asarray(phi), jnp.asarray(inv_gram), 0.7))
        q = np.asarray(pair_quadratic_forms(jnp.asarray(phi), jnp.asarray(inv_gram)))
    assert widths.dtype == np.float64
    np.testing.assert_array_equal(widths, widths.T)
    assert np.all(widths >= 0)
    np.testing.assert_array_equal(np.diag(widths), 0.0)
    np.testing.assert_allclose(widths, _reference_widths(phi, inv_gram, 0.7), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(0.7 * np.sqrt(np.maximum(q, 0)), widths, rtol=1e-12)


@pytest.mark.usefixtures("x64")
def test_widths_clamp_a_negative_quadratic_form_to_zero():
    """An indefinite ``inv_gram`` (round-off in practice) gives a 0 width, never NaN."""
    phi = jnp.asarray([[1.0, 0.0], [0.0, 0.0]])
    widths = pair_widths(phi, jnp.asarray([-1.0, 1.0]), 1.0)
    np.testing.assert_array_equal(np.asarray(widths), 0.0)


# ------------------------------------------------------------------------------------------------
# a = 0.


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("seed", range(4))
def test_zero_scale_rules_play_the_greedy_self_duel(seed):
    u, phi, inv_gram = _inputs(seed)
    best = int(np.argmax(u))
    for rule in ("ucb-asym", "ucb-osym", "ucb-csym"):
        for candidates in ("strict", "ge"):
            pair = select_pair(rule, jax.random.key(0), jnp.asarray(u), jnp.asarray(phi),
                               jnp.asarray(inv_gram), 0.0, 1, forbid_self_duel=False,
                               candidates=candidates)
            assert pair.dtype == jnp.int32 and pair.shape == (2,)
            assert tuple(np.asarray(pair)) == (best, best), (rule, candidates)


@pytest.mark.usefixtures("x64")
def test_zero_scale_ties_go_to_the_first_maximiser():
    u = jnp.asarray([0.0, 1.0, 1.0, -1.0])
    phi = jnp.asarray(np.eye(4))
    for rule in ("ucb-asym", "ucb-osym"):
        pair = select_pair(rule, jax.random.key(0), u, phi, jnp.eye(4), 0.0, 1,
                           forbid_self_duel=False)
        assert tuple(np.asarray(pair)) == (1, 1), rule


# ------------------------------------------------------------------------------------------------
# Self-duels and candidate sets (App. C.1, Listings 2-4).


def _random_batch(n, seed, degenerate_every=0):
    """``n`` random problems (``u`` ``(n, K)``, ``phi`` ``(n, K, D)``, ``inv_gram`` ``(n, D,
    D)``); every ``degenerate_every``-th has all ``phi`` equal and tied ``u`` (C empty)."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(n, K))
    phi = rng.normal(size=(n, K, D))
    roots = rng.normal(size=(n, D, D))
    inv_gram = roots @ np.swapaxes(roots, 1, 2) / D + 0.05 * np.eye(D)
    if degenerate_every:
        u[::degenerate_every] = 0.3
        phi[::degenerate_every] = phi[::degenerate_every, :1]
    return jnp.asarray(u), jnp.asarray(phi), jnp.asarray(inv_gram)


@pytest.mark.parametrize("rule", RULES)
def test_forbid_self_duel_never_plays_a_self_duel(rule):
    u, phi, inv_gram = _random_batch(256, seed=1, degenerate_every=8)
    keys = jax.random.split(jax.random.key(3), 256)
    scales = jnp.asarray(np.random.default_rng(2).choice([0.0, 0.1, 1.0, 10.0], size=256))
    # the candidate modes only matter for CSYM, the TS-CSYM forms only for ts-csym
    options = [("strict", "code")]
    if rule.endswith("csym"):
        options += [("ge", "code")]
    if rule == "ts-csym":
        options += [("strict", "paper"), ("ge", "paper")]
    for candidates, form in options:
        run = _batched(rule, 3, forbid_self_duel=True, candidates=candidates, ts_csym=form)
        pairs = np.asarray(run(keys, u, phi, inv_gram, scales))
        assert np.all((pairs >= 0) & (pairs < K))
        assert np.all(pairs[:, 0] != pairs[:, 1]), (rule, candidates, form)


def _raw_members(u, widths, strict):
    """The candidate set without the empty-set fallback, by a slow loop."""
    out = []
    for i in range(len(u)):
        ok = all((u[i] + widths[i, j] > u[j]) if strict else (u[i] + widths[i, j] >= u[j])
                 for j in range(len(u)) if j != i)
        out.append(ok)
    return np.asarray(out)


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("kind", ["ucb", "ts"])
@pytest.mark.parametrize("candidates", ["strict", "ge"])
def test_csym_pairs_lie_in_the_candidate_set(kind, candidates):
    n = 128
    u, phi, inv_gram = _random_batch(n, seed=4, degenerate_every=16)
    keys = jax.random.split(jax.random.key(5), n)
    scale = 0.3
    members = _members(u, _widths(phi, inv_gram, scale), candidates)
    for forbid in (False, True):
        run = _batched(f"{kind}-csym", 2, forbid_self_duel=forbid, candidates=candidates)
        pairs = np.asarray(run(keys, u, phi, inv_gram, jnp.full((n,), scale)))
        for i in range(n):
            k1, k2 = pairs[i]
            if forbid and members[i].sum() == 1:  # the lone candidate meets its ASYM rival
                assert members[i][k1] and k2 != k1
            else:
                assert members[i][k1] and members[i][k2], (i, pairs[i], members[i])


@pytest.mark.usefixtures("x64")
def test_ge_candidates_always_hold_the_greedy_arm_and_empty_strict_sets_are_degenerate():
    n = 256
    u, phi, inv_gram = _random_batch(n, seed=6, degenerate_every=4)
    u = np.array(u)
    u[1::4, 2] = u[1::4, 1] = np.max(u[1::4], axis=1)  # ties for the max, generic widths
    u = jnp.asarray(u)
    for scale in (0.0, 0.5):
        widths = _widths(phi, inv_gram, scale)
        ge, strict = _members(u, widths, "ge"), _members(u, widths, "strict")
        best = np.argmax(np.asarray(u), axis=1)
        assert np.all(ge[np.arange(n), best])
        for i in range(n):
            raw = _raw_members(np.asarray(u[i]), np.asarray(widths[i]), strict=True)
            degenerate = i % 4 == 0 or (scale == 0.0 and i % 4 == 1)  # zero width on a tie
            if not raw.any():
                assert degenerate, i
                # the fallback {argmax u}: the first maximiser
                np.testing.assert_array_equal(strict[i], np.arange(K) == best[i])
            else:
                np.testing.assert_array_equal(strict[i], raw)
        assert not _raw_members(np.asarray(u[0]), np.asarray(widths[0]), strict=True).any()


# ------------------------------------------------------------------------------------------------
# Thompson-sampling laws, keys, jit and vmap.

NUM_DRAWS = 20_000
# The frequency of each of the K^2 pairs over NUM_DRAWS independent draws has a standard error of
# at most 0.5 / sqrt(NUM_DRAWS) = 0.0035, both for JAX and for the NumPy Monte Carlo; 0.02 is
# four standard errors of their difference.
FREQ_TOL = 0.02


def _numpy_ts(rule, u, widths, q, t, forbid, rng, n, candidates="strict", form="code"):
    """Monte Carlo of the TS rules from Oh et al. 2026, Sec. 4.2, App. C.1, Listings 2-4 (first
    maximiser, row-major)."""
    num_arms = len(u)
    counts = np.zeros((num_arms, num_arms))
    best = int(np.argmax(u))
    members = _raw_members(u, widths, strict=candidates == "strict")
    for _ in range(n):
        if rule == "ts-asym":
            s = rng.normal(u, widths[:, best])  # s_j ~ N(u_j, w_{j,k1}^2)
            if forbid:
                s[best] = -np.inf
            pair = (best, int(np.argmax(s)))
        elif rule == "ts-osym":
            s = rng.normal(u[:, None] + u[None, :], widths + 1e-12)
            if forbid:
                np.fill_diagonal(s, -np.inf)
            pair = np.unravel_index(np.argmax(s), s.shape)
        else:  # ts-csym on C x C
            if form == "code":
                mean, std = widths.copy(), widths**2 / 4 + 1e-12
            else:
                mean, std = q.copy(), q / (2 * np.sqrt(np.log(num_arms * t**2))) + 1e-12
            np.fill_diagonal(mean, 0.0)
            np.fill_diagonal(std, 1e-12)
            s = rng.normal(mean, std)
            s[~(members[:, None] & members[None, :])] = -np.inf
            if forbid:
                np.fill_diagonal(s, -np.inf)
            pair = np.unravel_index(np.argmax(s), s.shape)
        counts[pair] += 1
    return counts / n


TS_CASES = [
    ("ts-asym", False, "code"),
    ("ts-asym", True, "code"),
    ("ts-osym", False, "code"),
    ("ts-osym", True, "code"),
    ("ts-csym", False, "code"),
    ("ts-csym", True, "paper"),
]


@pytest.mark.parametrize("rule, forbid, form", TS_CASES)
def test_ts_pair_frequencies_match_a_numpy_monte_carlo(rule, forbid, form):
    """The perturbation laws N(u, w^2) (ASYM / OSYM), N(w, (w^2/4)^2) (CSYM code) and
    N(q, q^2 / (4 log(K t^2))) (CSYM paper), through the law of the chosen pair."""
    num_arms = 4
    u = np.asarray([0.5, 0.3, 0.2, -0.4])
    phi = np.asarray([[0.0, 0.0], [1.0, 0.2], [-0.5, 1.0], [0.8, -0.9]])
    inv_gram = np.asarray([[0.9, 0.1], [0.1, 0.5]])
    scale, t = 0.8, 7
    q = np.asarray(pair_quadratic_forms(jnp.asarray(phi, jnp.float32),
                                        jnp.asarray(inv_gram, jnp.float32)), float)
    widths = scale * np.sqrt(np.maximum(q, 0))
    keys = jax.random.split(jax.random.key(11), NUM_DRAWS)
    pairs = _select_many(rule, keys, jnp.asarray(u, jnp.float32), jnp.asarray(phi, jnp.float32),
                         jnp.asarray(inv_gram, jnp.float32), scale, t, forbid_self_duel=forbid,
                         ts_csym=form)
    freq = np.zeros((num_arms, num_arms))
    np.add.at(freq, (pairs[:, 0], pairs[:, 1]), 1.0 / NUM_DRAWS)
    ref = _numpy_ts(rule, u, widths, q, t, forbid, np.random.default_rng(0), NUM_DRAWS,
                    form=form)
    assert len(np.unique(pairs, axis=0)) > 1  # the draws matter here
    np.testing.assert_allclose(freq, ref, atol=FREQ_TOL)


@pytest.mark.parametrize("rule", RULES)
def test_same_key_same_pair_and_jit_equals_eager(rule):
    u, phi, inv_gram = (jnp.asarray(a, jnp.float32) for a in _inputs(7))
    key = jax.random.key(42)
    eager = select_pair(rule, key, u, phi, inv_gram, 0.9, 3)
    again = select_pair(rule, key, u, phi, inv_gram, 0.9, 3)
    jitted = jax.jit(lambda k, s: select_pair(rule, k, u, phi, inv_gram, s, 3))(key, 0.9)
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(again))
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))


def test_vmap_over_problems_equals_a_loop():
    u, phi, inv_gram = _random_batch(6, seed=8)
    keys = jax.random.split(jax.random.key(9), 6)
    for rule in ("ts-osym", "ucb-csym"):
        batched = _batched(rule, 2)(keys, u, phi, inv_gram, jnp.full((6,), 0.5))
        for i in range(6):
            single = select_pair(rule, keys[i], u[i], phi[i], inv_gram[i], 0.5, 2)
            np.testing.assert_array_equal(np.asarray(batched[i]), np.asarray(single))


def test_unknown_rule_names_close_matches():
    with pytest.raises(ValueError, match="did you mean 'ucb-osym'"):
        check_rule("nvldb", "ucb_osym")
    with pytest.raises(ValueError, match="unknown selection rule"):
        check_rule("nvldb", "greedy")
    check_rule("nvldb", "ts-csym")
