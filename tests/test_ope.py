"""Off-policy evaluation: the estimators against a NumPy reference and OBP's numbers on the OBD
logs, their statistical properties, action probabilities (exact, Monte Carlo, Bernoulli TS),
and the logged-data loader's errors.

Shapes are tiny and the compiled programs few: one ``evaluate`` program serves the OBD
comparisons (clipping levels are traced values), one more the synthetic checks.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.data import BanditLog, DataFileError, load_logs
from jaxbandits.ope import ESTIMATORS

REFERENCE = json.loads((Path(__file__).parent / "data" / "obp_ope_reference.json").read_text())


def _reference_q(n: int, k: int, num_positions: int) -> np.ndarray:
    """The reward model of the saved OBP case (``tests/references/obp_ope.py``)."""
    i = np.arange(n)[:, None, None]
    a = np.arange(k)[None, :, None]
    pos = np.arange(num_positions)[None, None, :]
    return 0.002 + 0.0001 * a + 0.0005 * pos + 0.00002 * (i % 7)


def numpy_estimates(reward, action, position, pscore, dist, q, max_weight=math.inf,
                    tau=math.inf) -> dict[str, float]:
    """The five estimators, written from their definitions (Horvitz & Thompson 1952;
    Swaminathan & Joachims 2015; Dudik et al. 2011; Wang et al. 2017) in float64."""
    n = reward.shape[0]
    rows = np.arange(n)
    pi = dist[rows, :, position]  # (n, K) at the logged position
    qq = q[rows, :, position]
    raw = pi[rows, action] / pscore
    w = np.minimum(raw, max_weight)
    q_a = qq[rows, action]
    dm = (pi * qq).sum(1) / pi.sum(1)
    return {"ips": np.mean(w * reward), "snips": np.sum(w * reward) / np.sum(w),
            "dm": np.mean(dm), "dr": np.mean(dm + w * (reward - q_a)),
            "switch-dr": np.mean(dm + np.where(raw <= tau, raw, 0.0) * (reward - q_a))}


@pytest.fixture(scope="module")
def obd_case():
    """The first rounds of OBD's random/men log with the saved BTS distribution."""
    log = jb.data.load_obd_logs("random", "men").take(slice(0, REFERENCE["rows"]))
    dist = np.asarray(REFERENCE["action_dist"])  # (K, L), the same every round
    q = _reference_q(log.num_rounds, log.num_actions, log.num_positions)
    return log, dist, q


def test_estimators_equal_numpy_reference_and_obp_on_obd_logs(obd_case):
    log, dist, q = obd_case
    n, k, num_pos = log.num_rounds, log.num_actions, log.num_positions
    full = np.broadcast_to(dist, (n, k, num_pos))
    # two target policies in one call: the BTS distribution and the uniform one
    uniform = np.full((n, k, num_pos), 1.0 / k)
    probs = jnp.asarray(np.stack([full, uniform]), log.reward.dtype)
    reward, action = np.asarray(log.reward, np.float64), np.asarray(log.action)
    position, pscore = np.asarray(log.position), np.asarray(log.pscore, np.float64)
    for case, options in (("plain", {}), ("clipped", {"max_weight": 5.0, "tau": 5.0})):
        result = jb.ope.evaluate(log, probs, jnp.asarray(q, log.reward.dtype),
                                 max_weight=options.get("max_weight", math.inf),
                                 switch_threshold=options.get("tau", math.inf),
                                 interval="normal")
        for p, table in enumerate((full, uniform)):
            want = numpy_estimates(reward, action, position, pscore, table, q, **options)
            got = dict(zip(result.estimators, result.value[p].tolist(), strict=True))
            np.testing.assert_allclose([got[e] for e in want], list(want.values()), rtol=2e-6,
                                       err_msg=f"{case}, policy {p}")
        # OBP 0.5.7's own estimators on the same data and probabilities (its SNIPS does not
        # clip: the clipped case compares the other four)
        obp = {e: v for e, v in REFERENCE[case].items() if case == "plain" or e != "snips"}
        np.testing.assert_allclose([result.value[0, result.estimators.index(e)] for e in obp],
                                   list(obp.values()), rtol=2e-6, err_msg=case)
    # switch-DR with an infinite threshold is DR; clipping changed IPS
    assert REFERENCE["plain"]["switch-dr"] == REFERENCE["plain"]["dr"]
    assert REFERENCE["clipped"]["ips"] < REFERENCE["plain"]["ips"]
    assert REFERENCE["clipped"]["snips"] == REFERENCE["plain"]["snips"]


def _synthetic(key, n=2000, k=4, d=3):
    """A log of a known problem: mean reward ``mu(x, a) = sigmoid(x @ theta_a)``, a
    non-uniform logging policy, and a target policy; ``(log, mu, target, true value)``."""
    log, mu, target, value = _synthetic_jit(key, n, k, d)
    return log, mu, target, float(value)


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _synthetic_jit(key, n, k, d):
    kx, kt, kl, ka, kr, kp = jax.random.split(key, 6)
    x = jax.random.normal(kx, (n, d))
    theta = jax.random.normal(kt, (k, d))
    mu = jax.nn.sigmoid(x @ theta.T)  # (n, K)
    logging = jax.nn.softmax(x @ jax.random.normal(kl, (k, d)).T, axis=1)
    action = jax.random.categorical(ka, jnp.log(logging), axis=1)
    mean = mu[jnp.arange(n), action]
    reward = jax.random.bernoulli(kr, mean).astype(x.dtype)
    target = jax.nn.softmax(2.0 * x @ jax.random.normal(kp, (k, d)).T, axis=1)
    log = BanditLog(context=x, action=action.astype(jnp.int32), reward=reward,
                    pscore=logging[jnp.arange(n), action], position=jnp.zeros(n, jnp.int32),
                    num_actions=k, num_positions=1, name="synthetic")
    return log, mu, target, jnp.mean(jnp.sum(target * mu, axis=1))


def test_dr_with_a_perfect_reward_model_has_no_bias_and_intervals():
    # noiseless rewards: DR (and DM) with q = mu are the target's value exactly, whatever the
    # logging policy; with Bernoulli rewards, DR is within its standard error of the value
    # even when the reward model is wrong (q = 0: DR is IPS), while DM with q = 0 is not.
    # Two policies per call (the target and the uniform one): one compiled program a kind.
    log, mu, target, value = _synthetic(jax.random.key(1))
    both = jnp.stack([target, jnp.full_like(target, 0.25)])
    dm, dr = ESTIMATORS.index("dm"), ESTIMATORS.index("dr")
    noiseless = log.replace(reward=mu[jnp.arange(log.num_rounds), log.action])
    exact = jb.ope.evaluate(noiseless, both, mu, interval="normal")
    np.testing.assert_allclose(exact.value[0, [dm, dr]], [value, value], rtol=1e-5)
    for q in (mu, jnp.zeros_like(mu)):
        r = jb.ope.evaluate(log, both, q, interval="normal")
        assert abs(r.value[0, dr] - value) < 4 * r.std_error[0, dr]
    assert abs(r.value[0, dm]) < 1e-12 < value  # the wrong model's DM: 0, far from the value
    # the bootstrap percentile interval: the same estimates, an interval about as wide as the
    # normal one (2 * 1.96 se), all estimators and both policies from one call
    boot = jb.ope.evaluate(log, both, mu, num_bootstrap=400, key=3)
    normal = jb.ope.evaluate(log, both, mu, interval="normal")
    np.testing.assert_allclose(boot.value, normal.value, rtol=1e-6)
    assert boot.value.shape == (2, 5)
    assert np.all((boot.lower < boot.value) & (boot.value < boot.upper))
    assert np.all((normal.lower < normal.value) & (normal.value < normal.upper))
    ratio = (boot.upper - boot.lower) / (normal.upper - normal.lower)
    assert np.all((ratio > 0.7) & (ratio < 1.3)), ratio
    assert "ips" in boot.table() and boot["snips"].shape == (2,)


@pytest.mark.full  # trains a network (one more compiled program)
def test_mlp_reward_model_fits_and_dr_with_it_stays_unbiased():
    log, mu, target, value = _synthetic(jax.random.key(1))
    model = jb.ope.fit_reward_model(log, "mlp", num_steps=200, key=0)
    q = model.predict(log)
    assert q.shape == (log.num_rounds, log.num_actions)
    ridge = jb.ope.fit_reward_model(log).predict(log)
    mse = [float(jnp.mean((m - mu) ** 2)) for m in (q, ridge, jnp.zeros_like(mu))]
    assert mse[0] < 0.5 * mse[2] and mse[1] < 0.5 * mse[2], mse  # both learnt mu
    both = jnp.stack([target, jnp.full_like(target, 0.25)])
    r = jb.ope.evaluate(log, both, q, interval="normal")
    dr = ESTIMATORS.index("dr")
    assert abs(r.value[0, dr] - value) < 4 * r.std_error[0, dr]


def test_monte_carlo_probabilities_within_their_stated_error():
    log, _, _, _ = _synthetic(jax.random.key(4), n=64, d=3)
    agent = jb.agents.Softmax(agent=jb.make_agent("greedy"), temperature=0.5)
    state = jb.ope.fit_on_log(agent, log.take(slice(0, 48)), key=0)
    target = log.take(slice(48, None))
    exact = jb.ope.action_probs(agent, state, target, key=5)
    assert exact.num_draws == 0 and float(jnp.max(exact.std_error)) == 0.0
    np.testing.assert_allclose(exact.probs.sum(1), 1.0, rtol=1e-5)
    draws = 4000
    mc = jb.ope.action_probs(agent, state, target, key=6, num_draws=draws, method="mc")
    assert mc.num_draws == draws
    p = np.asarray(exact.probs)
    se = np.sqrt(p * (1 - p) / draws)
    assert np.all(np.abs(np.asarray(mc.probs) - p) <= 4.5 * se + 1e-7)
    # the IPS / SNIPS estimates from the Monte Carlo probabilities: within the reported
    # Monte Carlo error of those from the exact ones
    est = ("ips", "snips")
    r_exact = jb.ope.evaluate(target, exact, estimators=est, interval="normal")
    r_mc = jb.ope.evaluate(target, mc, estimators=est, interval="normal")
    assert r_mc.num_draws == draws and np.all(r_mc.mc_std_error > 0)
    assert np.all(np.abs(r_mc.value - r_exact.value) <= 4 * r_mc.mc_std_error)


def test_per_arm_agents_read_the_logged_context_and_epsilon_greedy_is_exact():
    """A per-arm agent learns from the logged x itself (by default, not block features): its
    models are the closed-form ridge estimates of each action's rounds; disjoint-epsilon-greedy's
    probabilities come exactly from its log_prob, 1 - eps + eps / K on the greedy action."""
    log, _, _, _ = _synthetic(jax.random.key(4), n=64, d=3)
    train, test = log.take(slice(0, 48)), log.take(slice(48, None))
    agent = jb.make_agent("disjoint-epsilon-greedy", epsilon=0.2, reg=0.5)
    state = jb.ope.fit_on_log(agent, train, key=0)
    want = np.asarray(jb.linalg.ridge_fit(train.context, train.reward, train.action, 4, 0.5))
    np.testing.assert_allclose(np.asarray(state.mean), want, rtol=1e-4, atol=1e-5)
    probs = jb.ope.action_probs(agent, state, test, key=1)
    assert probs.num_draws == 0 and float(jnp.max(probs.std_error)) == 0.0
    greedy = np.argmax(np.asarray(test.context) @ want.T, axis=1)
    expected = np.full((16, 4), 0.2 / 4)
    expected[np.arange(16), greedy] += 0.8
    np.testing.assert_allclose(np.asarray(probs.probs), expected, rtol=1e-5)


def test_beta_thompson_probabilities_match_sampling():
    # the exact rank probabilities of Bernoulli TS under OBD's men prior against 100,000
    # NumPy draws, and against OBP's own 10,000-draw estimate saved with the reference
    alpha, beta = (jnp.asarray(a, jnp.float32) for a in jb.data.obd_bts_prior("men"))
    exact = np.asarray(jb.ope.beta_thompson_probs(alpha, beta, 3))
    assert exact.shape == (34, 3)
    np.testing.assert_allclose(exact.sum(0), 1.0, rtol=1e-6)
    rng = np.random.default_rng(0)
    draws = 100_000
    draw = rng.beta(np.asarray(alpha, np.float64), np.asarray(beta, np.float64),
                    size=(draws, 34))
    top = np.argsort(-draw, axis=1)[:, :3]
    mc = np.stack([np.bincount(top[:, j], minlength=34) for j in range(3)], 1) / draws
    se = np.sqrt(exact * (1 - exact) / draws)
    assert np.all(np.abs(mc - exact) <= 4.5 * se + 1e-6)
    obp = np.asarray(REFERENCE["action_dist"])
    assert np.all(np.abs(obp - exact) <= 4.5 * np.sqrt(exact * (1 - exact) / 10_000) + 1e-6)
    # an agent's route to them: bernoulli-ts with the prior as its per-arm prior
    agent = jb.make_agent("bernoulli-ts", prior_alpha=alpha, prior_beta=beta)
    state = agent.init(jax.random.key(0), jb.Spec(dim=1, num_arms=34, fixed_arms=True))
    got = jb.ope.action_probs(agent, state, jnp.zeros((2, 1)), num_positions=3,
                              context_fn=lambda x: jb.Context(arms=jnp.zeros((34, 1))))
    assert got.num_draws == 0
    np.testing.assert_allclose(got.probs[1], exact, rtol=1e-6)


def test_ridge_fit_is_the_ridge_estimate_per_group():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    group = rng.integers(0, 2, 30)  # group 2 has no rows
    theta = np.asarray(jb.linalg.ridge_fit(jnp.asarray(x, jnp.float32),
                                           jnp.asarray(y, jnp.float32), jnp.asarray(group), 3,
                                           0.5))
    for g in range(2):
        xg, yg = x[group == g], y[group == g]
        want = np.linalg.solve(0.5 * np.eye(3) + xg.T @ xg, xg.T @ yg)
        np.testing.assert_allclose(theta[g], want, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(theta[2], 0.0)


# ------------------------------------------------------------------------------------------------
# The loader.


def _columns(n=5):
    return {"x": np.arange(n, dtype=float), "user": ["a", "b", "a", "c", "b"][:n],
            "action": np.array([0, 1, 2, 1, 0]), "reward": np.array([1.0, 0, 0, 1, 0]),
            "pscore": np.full(n, 0.5)}


def test_logs_load_from_a_csv_a_dataframe_and_a_dict(tmp_path):
    cols = _columns()
    log = load_logs(cols, context=["x", "user"], num_actions=4)
    assert (log.num_rounds, log.num_actions, log.dim) == (5, 4, 4)  # x + 3 one-hot users
    assert log.context_names == ("x", "user=a", "user=b", "user=c")
    csv = tmp_path / "logs.csv"
    lines = ["x,user,action,reward,pscore"] + [
        f"{cols['x'][i]},{cols['user'][i]},{cols['action'][i]},{cols['reward'][i]},0.5"
        for i in range(5)]
    csv.write_text("\n".join(lines) + "\n")
    from_csv = load_logs(csv, context=["x", "user"], num_actions=4)
    np.testing.assert_array_equal(from_csv.context, log.context)
    assert from_csv.name == "logs.csv"
    pd = pytest.importorskip("pandas")
    frame = load_logs(pd.DataFrame(cols), context="x", num_actions=4)
    np.testing.assert_array_equal(frame.action, log.action)
    first, rest = log.split(0.6)
    assert (first.num_rounds, rest.num_rounds) == (3, 2)


@pytest.mark.parametrize("change, column, row, words", [
    ({"pscore": None}, "pscore", None, "missing column 'pscore'"),
    ({"pscore": [0.5, 0.5, 0.0, 0.5, 0.5]}, "pscore", 2, "not in (0, 1]"),
    ({"pscore": [0.5, -0.1, 0.5, 0.5, 0.5]}, "pscore", 1, "not in (0, 1]"),
    ({"pscore": [0.5, 0.5, 0.5, 1.5, 0.5]}, "pscore", 3, "not in (0, 1]"),
    ({"action": [0, 1, 7, 1, 0]}, "action", 2, "outside the action set"),
    ({"action": [0, 1, -1, 1, 0]}, "action", 2, "outside the action set"),
    ({"reward": [1.0, 0.0, 0.0, float("nan"), 0.0]}, "reward", 3, "not a finite number"),
    ({"x": [0.0, float("inf"), 0, 0, 0]}, "x", 1, "not a finite number"),
])
def test_bad_logs_name_the_column_and_row(change, column, row, words):
    cols = _columns()
    for name, values in change.items():
        if values is None:
            del cols[name]
        else:
            cols[name] = np.asarray(values)
    with pytest.raises(DataFileError) as err:
        load_logs(cols, context=["x"], num_actions=4)
    message = str(err.value)
    assert f"'{column}'" in message and words in message, message
    if row is not None:
        assert f"row {row}" in message, message


def test_bad_csv_log_names_the_file_line(tmp_path):
    csv = tmp_path / "bad.csv"
    csv.write_text("x,action,reward,pscore\n0.1,0,1,0.5\n0.2,1,0,0\n")
    with pytest.raises(DataFileError, match=r"bad.csv: column 'pscore', row 1 \(line 3\)"):
        load_logs(csv, context=["x"])
    with pytest.raises(ValueError, match="policy must be one of"):
        jb.data.load_obd_logs("greedy")


def test_obd_logs_are_obps_reading():
    log = jb.data.load_obd_logs("bts", "women")
    assert (log.num_rounds, log.num_actions, log.num_positions) == (10_000, 46, 3)
    assert float(log.pscore.min()) > 0 and int(log.position.max()) == 2
    assert jb.data.obd_bts_prior("all")[0].shape == (80,)
