"""The online policy and saved agents: online equals simulated, restore equals never stopping,
bad input is refused with the state unchanged."""

from __future__ import annotations

import json
import threading
import types
import zipfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits import online, saved

DIM, ARMS = 3, 4
SPEC = jb.Spec(dim=DIM, num_arms=ARMS)


def _env():
    return jb.make_env("linear", dim=DIM, num_arms=ARMS, noise_std=0.1)


def _contexts(seed: int, batch: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(batch, ARMS, DIM)).astype(np.float32)


def _equal_trees(a, b) -> bool:
    data = (lambda x: jax.random.key_data(x)
            if jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else x)
    la, lb = jax.tree.leaves(jax.tree.map(data, a)), jax.tree.leaves(jax.tree.map(data, b))
    return jax.tree.structure(a) == jax.tree.structure(b) and all(
        x.dtype == y.dtype and np.array_equal(np.asarray(x), np.asarray(y))
        for x, y in zip(la, lb, strict=True))


def _run_streams(seed: int):
    """The runner's documented key derivation for run 0: fold_in(fold_in(key, 0), i)."""
    run_key = jax.random.fold_in(jax.random.key(seed), 0)
    return [jax.random.fold_in(run_key, i) for i in range(6)]


@pytest.mark.full
def test_online_batches_of_one_play_the_simulated_run():
    """Serving the simulated environment's contexts one at a time and feeding its rewards back
    plays run 0 of jb.simulate with the same seed: the same arm every round (the per-round
    regrets match; the arms' mean gaps are far above float rounding)."""
    env, agent, seed, horizon = _env(), jb.make_agent("lin-ts"), 7, 12
    result = jb.simulate(env, agent, seed, horizon, 1, record="all", progress=False)
    sim_regret = np.diff(np.concatenate([[0.0], np.asarray(result.cumulative_regret)[0]]))
    env_key, _, observe, feedback_key, _, _ = _run_streams(seed)
    env_state = env.init(env_key)
    policy = jb.OnlinePolicy(agent, env, seed=seed)
    observe_fn, feedback_fn = jax.jit(env.observe), jax.jit(env.feedback)
    regrets = []
    for t in range(horizon):
        context = observe_fn(jax.random.fold_in(observe, t), env_state, t)
        action = policy.act(context.arms[None])[0]
        fb = feedback_fn(jax.random.fold_in(feedback_key, t), env_state, context, action)
        policy.update(context.arms[None], [action], [fb.reward])
        regrets.append(float(fb.regret))
    means = np.asarray(env_state.means)
    gap = np.min(np.diff(np.sort(means)))
    assert gap > 1e-3
    np.testing.assert_allclose(regrets, sim_regret, atol=1e-5)
    assert policy.num_served == policy.num_updates == horizon


def test_restored_policy_continues_bit_for_bit(tmp_path):
    """Save after some traffic, load, continue: the same actions and a bitwise equal state as
    the policy that never stopped."""
    path = tmp_path / "policy.agent"
    policy = jb.OnlinePolicy("lin-ts", SPEC, seed=3)
    ctx = _contexts(0, 5)
    policy.update(ctx, policy.act(ctx), np.arange(5.0))
    policy.save(path)
    restored = jb.OnlinePolicy.load(path)
    assert (restored.num_served, restored.num_updates) == (5, 5)
    for step in range(2):
        ctx = _contexts(1 + step, 5)
        a, b = policy.act(ctx), restored.act(ctx)
        np.testing.assert_array_equal(a, b)
        rewards = np.linspace(-1, 1, 5)
        policy.update(ctx, a, rewards)
        restored.update(ctx, b, rewards)
    assert _equal_trees(policy.state, restored.state)


def _rollout(env, agent, state, env_state, streams, start, length):
    """The runner's round (act, feedback, update) driven by the agents' pure functions."""
    _, _, observe, feedback_key, act_key, update_key = streams

    def body(s, t):
        ctx = env.observe(jax.random.fold_in(observe, t), env_state, t)
        action, acted = agent.act(s, jax.random.fold_in(act_key, t), ctx)
        fb = env.feedback(jax.random.fold_in(feedback_key, t), env_state, ctx, action)
        return agent.update(acted, jax.random.fold_in(update_key, t), ctx, action, fb), None

    return jax.lax.scan(body, state, start + jnp.arange(length))[0]


@pytest.mark.full
def test_saved_simulation_state_continues_bit_for_bit(tmp_path):
    """A simulation stopped after T rounds, saved and loaded, ends T more rounds with exactly
    the state of one that never stopped (an agent whose state holds a PRNG key)."""
    env, agent = _env(), jb.make_agent("glm-es", ensemble_size=2)
    streams = _run_streams(5)
    env_state = env.init(streams[0])
    rollout = jax.jit(_rollout, static_argnums=(0, 6))
    state = rollout(env, agent, agent.init(streams[1], env.spec()), env_state, streams, 0, 6)
    jb.save_agent(tmp_path / "glm.agent", agent, state, env.spec())
    loaded = jb.load_agent(tmp_path / "glm.agent", agent=agent)
    assert loaded.agent == agent and loaded.spec == env.spec()
    assert _equal_trees(loaded.state, state)
    never_stopped = rollout(env, agent, state, env_state, streams, 6, 6)
    continued = rollout(env, loaded.agent, loaded.state, env_state, streams, 6, 6)
    assert _equal_trees(never_stopped, continued)


def test_load_refuses_changed_configuration_version_and_corruption(tmp_path):
    agent = jb.make_agent("lin-ts")
    state = agent.init(jax.random.key(0), SPEC)
    path = tmp_path / "a.agent"
    jb.save_agent(path, agent, state, SPEC)
    served = jb.OnlinePolicy.load(path)            # a saved agent served with a seed-0 stream
    assert _equal_trees(served.state, state) and served.num_served == 0
    with pytest.raises(ValueError, match="explore_scale"):
        jb.load_agent(path, agent=agent.replace(explore_scale=2.0))
    with pytest.raises(ValueError, match="layout agent.init gives"):
        jb.save_agent(path, agent, state, jb.Spec(dim=DIM + 1, num_arms=ARMS))

    def rewrite(change):
        with np.load(path) as npz:
            arrays = {name: npz[name] for name in npz.files}
        manifest = json.loads(arrays["manifest"].tobytes())
        change(manifest, arrays)
        arrays["manifest"] = np.frombuffer(json.dumps(manifest).encode(), np.uint8)
        other = tmp_path / "b.agent"
        with open(other, "wb") as f:
            saved._io.write_npz(f, arrays)
        return other

    def older_jax(manifest, arrays):
        manifest["jax"] = "0.0.1"
        manifest["fingerprint"] = saved._fingerprint(manifest)

    other = rewrite(older_jax)
    with pytest.raises(ValueError, match="saved under jax 0.0.1"):
        jb.load_agent(other)
    assert _equal_trees(jb.load_agent(other, allow_other_jax=True).state, state)

    def flipped(manifest, arrays):
        arrays["leaf_00000"] = arrays["leaf_00000"] + 1

    with pytest.raises(ValueError, match="sha256 does not match"):
        jb.load_agent(rewrite(flipped))

    def edited(manifest, arrays):
        manifest["agent"]["fields"]["reg"] = 5.0

    with pytest.raises(ValueError, match="fingerprint does not match"):
        jb.load_agent(rewrite(edited))
    assert zipfile.is_zipfile(path) and not list(tmp_path.glob(".*.tmp"))


def test_bad_input_is_an_error_and_leaves_the_state_unchanged():
    policy = jb.OnlinePolicy("lin-ts", SPEC, seed=0)
    ctx = _contexts(0, 2)
    policy.update(ctx, policy.act(ctx), [0.5, 1.0])
    before, counters = policy.state, (policy.num_served, policy.num_updates)
    cases = [
        (lambda: policy.act(ctx[0]), "shape \\(B, K, d\\)"),
        (lambda: policy.act(ctx[:, :, :2]), "shape \\(B, K, d\\)"),
        (lambda: policy.act(np.full_like(ctx, np.nan)), "NaN"),
        (lambda: policy.update(ctx, [0, ARMS], [1.0, 1.0]), "outside the action set"),
        (lambda: policy.update(ctx, [0, -1], [1.0, 1.0]), "outside the action set"),
        (lambda: policy.update(ctx, [0.5, 1], [1.0, 1.0]), "integer"),
        (lambda: policy.update(ctx, [0, 1], [1.0, np.nan]), "not finite"),
        (lambda: policy.update(ctx, [0, 1], [1.0]), "shape \\(2,\\)"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
        assert policy.state is before
        assert (policy.num_served, policy.num_updates) == counters


def test_batches_compile_once_per_size_and_probabilities():
    """Each batch size compiles once; a deterministic agent's Monte Carlo probability is 1; a
    softmax agent's probabilities are exact (log_prob) and match its logits; a vmapped batch
    serves every request from the same state."""
    policy = jb.OnlinePolicy("lin-ucb", SPEC, seed=0, prob_draws=8)
    ctx = _contexts(4, 3)
    policy.update(ctx, policy.act(ctx), [1.0, 0.0, 0.5])
    traces = online.trace_counts()
    actions, probs = policy.act(ctx, probs=True)
    np.testing.assert_array_equal(probs, 1.0)
    policy.act(_contexts(5, 3), probs=True)
    policy.update(_contexts(5, 3), actions, [0.0, 0.0, 1.0])
    assert online.trace_counts() == {**traces, "act": traces["act"] + 1}
    assert policy._sequential is False

    agent = jb.agents.Softmax(agent=jb.make_agent("lin-ucb"), temperature=0.5)
    soft = jb.OnlinePolicy(agent, SPEC, seed=1)
    served_before = soft.num_served
    actions, probs = soft.act(ctx, probs=True)
    key = jax.random.fold_in(soft._act_stream, served_before + 1)
    logits = agent.logits(soft.state, jax.random.split(key)[0], jax.tree.map(
        lambda x: x[1], jb.Context(arms=jnp.asarray(ctx))))
    np.testing.assert_allclose(probs[1], jax.nn.softmax(logits)[actions[1]], rtol=1e-5)


def test_chunked_batches_and_compiling_ahead():
    """A batch served in chunks (act_chunk) gets the same actions and Monte Carlo
    probabilities as one vmap (the same key per request); the automatic chunk keeps a batch
    whole unless its requests' intermediate arrays exceed the budget; compile() prepares a
    batch size without serving: nothing changes and the first calls trace nothing."""
    ctx, actions, rewards = _contexts(8, 5), np.arange(5) % ARMS, np.linspace(-1, 1, 5)
    whole = jb.OnlinePolicy("lin-ts", SPEC, seed=4, prob_draws=16)
    chunked = jb.OnlinePolicy("lin-ts", SPEC, seed=4, prob_draws=16, act_chunk=2)
    for policy in (whole, chunked):
        policy.update(ctx, actions, rewards)
    a, pa = whole.act(ctx, probs=True)
    b, pb = chunked.act(ctx, probs=True)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(pa, pb)
    assert np.all((0 <= pa) & (pa <= 1)) and np.any((0 < pa) & (pa < 1))  # draws disagree
    assert online._auto_chunk(10_000, 1_000, 2**24) == 10_000  # 10 MB: one vmap
    assert online._auto_chunk(10_000, 2**20, 2**24) == 16 and online._auto_chunk(5, 2**30, 1) == 1
    with pytest.raises(ValueError, match="act_chunk"):
        jb.OnlinePolicy("lin-ts", SPEC, act_chunk=0)

    neural = jb.make_agent("neural-ucb")  # its per-arm gradients (K, p) count, traced only
    key = jax.random.key(0)
    state = jax.eval_shape(neural.init, key, SPEC)
    params = sum(x.size for x in jax.tree.leaves(state.params))
    one = online._request_bytes(neural, state, key, jb.Context(arms=jnp.asarray(ctx)), 0)
    assert one >= ARMS * params * 4

    policy = jb.OnlinePolicy("lin-ucb", SPEC, seed=5)
    before = policy.state
    policy.compile(_contexts(9, 3))
    assert policy.state is before and (policy.num_served, policy.num_updates) == (0, 0)
    traces = online.trace_counts()
    ctx = _contexts(10, 3)
    policy.update(ctx, policy.act(ctx), np.ones(3))
    assert online.trace_counts() == traces


def test_warm_start_and_threads_lose_no_update():
    """Warm start from a mapping equals updating with the arrays; updates from four threads
    are all applied (the ridge Gram matrix is the order-free sum of x x^T)."""
    ctx = _contexts(6, 8)
    actions = np.arange(8) % ARMS
    rewards = np.linspace(0, 1, 8)
    a = jb.OnlinePolicy("lin-ts", SPEC, seed=2)
    a.warm_start({"contexts": ctx, "actions": actions, "rewards": rewards})
    b = jb.OnlinePolicy("lin-ts", SPEC, seed=2)
    b.update(ctx, actions, rewards)
    assert _equal_trees(a.state, b.state)

    # a log of one context vector per round (n, d'): the disjoint encoding, arm k in block k
    log = types.SimpleNamespace(context=np.ones((3, 2)), action=np.array([0, 1, 1]),
                                reward=np.array([1.0, 0.0, 2.0]))
    disjoint = jb.OnlinePolicy("lin-ts", jb.Spec(dim=4, num_arms=2), seed=0)
    disjoint.warm_start(log)
    rows = np.kron(np.eye(2), np.ones((1, 2)))[log.action]        # e_k (x) x of each round
    gram = np.eye(4) + rows.T @ rows                                # reg = 1
    s = np.asarray(disjoint.state.sqrt_cov, np.float64)
    np.testing.assert_allclose(np.linalg.inv(s @ s.T), gram, rtol=1e-4, atol=1e-4)

    c = jb.OnlinePolicy("lin-ts", SPEC, seed=2)

    def worker(i):
        for j in range(2):
            k = 2 * i + j
            c.update(ctx[k:k + 1], actions[k:k + 1], rewards[k:k + 1])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert c.num_updates == 8

    def gram(state):
        s = np.asarray(state.sqrt_cov, np.float64)
        return np.linalg.inv(s @ s.T)

    np.testing.assert_allclose(gram(c.state), gram(b.state), rtol=1e-3, atol=1e-3)
