"""Delayed and batched feedback in the runner (``feedback_delay``, ``update_every``): no agent
sees a reward before it arrives, every reward due is applied once, in arrival order, only at the
end of a batch; the defaults are the undelayed numbers bit for bit; the options are checked."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

import jaxbandits as jb
from jaxbandits.core import Agent, Context, Env
from jaxbandits.runner.delay import as_timing, delay_of
from jaxbandits.runner.fingerprint import fingerprint
from jaxbandits.runner.options import Configs, run_options

BASE_ENV = jb.make_env("linear", dim=3, num_arms=4)
T = 40


@struct.dataclass
class RoundContext(Context):
    """A context that tells the round it was shown at (for the logging agent below)."""

    round: jax.Array = 0


class RoundEnv(Env):
    """``linear`` with the round index in its context."""

    env: Env

    def spec(self):
        return self.env.spec()

    def init(self, key):
        return self.env.init(key)

    def observe(self, key, env_state, t):
        return RoundContext(arms=self.env.observe(key, env_state, t).arms, round=t)

    def feedback(self, key, env_state, context, action):
        return self.env.feedback(key, env_state, Context(arms=context.arms), action)


class Logging(Agent):
    """Wraps an agent and logs, for each update, the round its feedback was played at and the
    round it is applied at (the number of ``act`` calls so far, minus one)."""

    agent: Agent
    horizon: int = struct.field(pytree_node=False, default=T)

    def init(self, key, spec):
        minus = jnp.full((self.horizon,), -1, jnp.int32)
        return {"inner": self.agent.init(key, spec), "rounds": jnp.zeros((), jnp.int32),
                "count": jnp.zeros((), jnp.int32), "origin": minus, "applied": minus}

    def act(self, state, key, context):
        action, inner = self.agent.act(state["inner"], key, Context(arms=context.arms))
        return action, {**state, "inner": inner, "rounds": state["rounds"] + 1}

    def update(self, state, key, context, action, feedback):
        n = state["count"]
        inner = self.agent.update(state["inner"], key, Context(arms=context.arms), action,
                                  feedback)
        return {**state, "inner": inner, "count": n + 1,
                "origin": state["origin"].at[n].set(context.round),
                "applied": state["applied"].at[n].set(state["rounds"] - 1)}


def _play(env, agent, key, runs, timing, out):
    """``runs`` runs of ``T`` rounds under ``timing`` by the public one-run API (vmapped:
    the delays differ between runs), and ``out(carry)`` stacked over rounds."""
    steps = jnp.asarray([T], jnp.int32)

    def one(run_id):
        carry = jb.runner.init(env, agent, key, run_id, timing=timing)

        def round_(carry, t):
            carry = jb.runner.step(env, agent, carry, t, steps, timing)
            return carry, out(carry)

        return jb.runner.rollout(round_, carry, T)

    return jax.jit(jax.vmap(one))(jnp.arange(runs, dtype=jnp.uint32))


@pytest.mark.parametrize("delay, search", [((1, 6), "rank"), ((1, 6), "sort"),
                                           ((4, 4), "fixed")])
def test_no_reward_before_its_arrival_and_every_due_reward_once_in_order(delay, search,
                                                                          monkeypatch):
    if search == "sort":  # the sort that large rings use instead of the rank search
        monkeypatch.setattr("jaxbandits.runner.delay._RANK_LIMIT", 0)
    timing = as_timing(delay, 3, T)
    key = jax.random.key(3)
    carry, _ = _play(RoundEnv(BASE_ENV), Logging(jb.make_agent("lin-ucb")), key, 3, timing,
                     lambda c: ())
    last_batch = max(t for t in range(T) if (t + 1) % 3 == 0)
    delays_seen = set()
    for r in range(3):
        stream = jb.runner.run_keys(key, jnp.uint32(r))[2].env_feedback
        delays = np.asarray([int(delay_of(timing, jax.random.fold_in(stream, s)))
                             for s in range(T)])
        delays_seen |= set(delays.tolist())
        arrival = np.arange(T) + delays
        state = jax.tree.map(lambda x, r=r: np.asarray(x[r]), carry.agent_state)
        n = int(state["count"])
        origin, applied = state["origin"][:n], state["applied"][:n]
        assert np.all(applied >= arrival[origin])  # never before its arrival round
        assert np.all((applied + 1) % 3 == 0)  # only at the end of a batch
        assert np.all(applied - origin >= delay[0])  # the smallest delay
        # every reward arrived by the last batch's end, exactly once, and none other
        np.testing.assert_array_equal(np.sort(origin), np.flatnonzero(arrival <= last_batch))
        # applied as soon as a batch ends after its arrival
        np.testing.assert_array_equal(applied, arrival[origin] + (2 - arrival[origin] % 3))
        # in arrival order, ties in the order played
        order = np.lexsort((origin, arrival[origin], applied))
        np.testing.assert_array_equal(order, np.arange(n))
        assert int(carry.pending.rows["valid"][r].sum()) == T - n  # the rest still wait
    assert delays_seen == set(range(delay[0], delay[1] + 1))  # drawn over the whole range


def test_batched_agent_changes_only_at_the_end_of_a_batch():
    timing = as_timing(0, 4, T)
    agent = jb.make_agent("lin-ucb")
    _, means = _play(BASE_ENV, agent, jax.random.key(1), 1, timing,
                     lambda c: c.agent_state.ridge.mean)
    means = np.asarray(means[0])
    changed = np.any(means[1:] != means[:-1], axis=1)
    np.testing.assert_array_equal(np.flatnonzero(changed) + 1, np.arange(3, T, 4))


def test_defaults_are_the_undelayed_numbers_and_a_delay_only_changes_what_comes_after():
    agent = jb.make_agent("lin-ts")
    kw = dict(record="all", block_runs=4, progress=False)
    plain = jb.simulate(BASE_ENV, agent, 0, T, 4, **kw)
    same = jb.simulate(BASE_ENV, agent, 0, T, 4, feedback_delay=0, update_every=1, **kw)
    np.testing.assert_array_equal(plain.cumulative_regret, same.cumulative_regret)
    np.testing.assert_array_equal(plain.cumulative_reward, same.cumulative_reward)
    assert "feedback_delay" not in plain.run_info
    short = jb.simulate(BASE_ENV, agent, 0, T, 4, feedback_delay=2, **kw)
    long = jb.simulate(BASE_ENV, agent, 0, T, 4, feedback_delay=(9, 9), **kw)
    assert short.run_info["feedback_delay"] == 2 and long.run_info["update_every"] == 1
    # the agents see no reward before the end of round 2: rounds 0..2 are the same plays
    np.testing.assert_array_equal(short.cumulative_regret[:, :3], long.cumulative_regret[:, :3])
    assert np.any(short.cumulative_regret[:, 3:] != long.cumulative_regret[:, 3:])


def test_fingerprint_holds_the_timing_only_when_not_the_default():
    configs = Configs([BASE_ENV], [jb.make_agent("lin-ts")], ["lin-ts"])

    def digest(**kw):
        return fingerprint(configs.envs, configs.agents, configs.labels,
                           run_options(configs, 0, T, 2, **kw))

    assert digest() == digest(feedback_delay=0, update_every=1) == digest(callback=print)
    assert len({digest(), digest(feedback_delay=1), digest(feedback_delay=(0, 1)),
                digest(update_every=2)}) == 4


@pytest.mark.parametrize("options, match", [
    ({"feedback_delay": -1}, "feedback_delay"),
    ({"feedback_delay": 1.5}, "feedback_delay"),
    ({"feedback_delay": (3, 1)}, "low <= high"),
    ({"feedback_delay": (1, 2, 3)}, "pair"),
    ({"update_every": 0}, "update_every"),
    ({"update_every": True}, "update_every"),
    ({"feedback_delay": 2**31}, "int32"),
    ({"callback": 3}, "callable"),
])
def test_bad_timing_options_are_clear_errors(options, match):
    with pytest.raises(ValueError, match=match):
        jb.simulate(BASE_ENV, jb.make_agent("lin-ts"), 0, T, **options)


class FakeTracker:
    """Records the calls a tracker receives."""

    def __init__(self, fail: bool = False):
        self.calls, self.closed, self.fail = [], 0, fail

    def __call__(self, stats, run_info):
        if self.fail:
            raise RuntimeError("tracker down")
        self.calls.append((dict(stats), run_info))

    def close(self):
        self.closed += 1


def test_callback_receives_running_statistics_between_chunks_and_is_closed(tmp_path):
    agent = jb.make_agent("lin-ts")
    kw = dict(record="all", block_runs=4, progress=False, chunk_size=20)
    tracker = FakeTracker()
    # two blocks of runs played in turn: the first reports after each chunk, then all runs
    result = jb.simulate(BASE_ENV, agent, 0, T, 6, callback=tracker, **kw)
    assert [c[0]["step"] for c in tracker.calls] == [20, T, T] and tracker.closed == 1
    assert all(c[1] == result.run_info for c in tracker.calls)
    first = tracker.calls[1][0]
    regret = np.asarray(result.cumulative_regret, np.float64)
    assert first["regret/mean"] == pytest.approx(regret[:4, -1].mean(), rel=1e-6)
    assert tracker.calls[0][0]["regret/mean"] == pytest.approx(regret[:4, 19].mean(), rel=1e-6)
    assert tracker.calls[2][0] == pytest.approx(jb.tracking.result_stats(result)[-1], rel=1e-6)
    again = jb.simulate(BASE_ENV, agent, 0, T, 6, **kw)  # the callback never changes numbers
    np.testing.assert_array_equal(again.cumulative_regret, result.cumulative_regret)
    failing = FakeTracker(fail=True)
    with pytest.raises(RuntimeError, match="tracker down"):
        jb.simulate(BASE_ENV, agent, 0, T, 6, callback=failing, **kw)
    assert failing.closed == 1  # closed also when the run fails
    pytest.importorskip("tensorboardX")
    from test_tracking import _events

    jb.simulate(BASE_ENV, agent, 0, T, 4, callback=jb.tracking.TensorBoardTracker(tmp_path),
                **kw)
    steps = sorted(step for tag, step, _ in _events(tmp_path) if tag == "regret/mean")
    assert steps == [20, T]


def test_compare_and_sweep_callbacks_name_each_configuration(tmp_path):
    """One tracker for several configurations: each agent of compare and each grid point of a
    sweep reports its own statistics (live for its first block, all its runs at the end),
    named in run_info; the tracker is closed once; TensorBoard gets a run per name."""
    agent = jb.make_agent("lin-ts")
    kw = dict(record="all", block_runs=4, progress=False, chunk_size=20)
    tracker = FakeTracker()
    agents = {"a": agent, "b/2": agent.replace(explore_scale=0.5)}
    results = jb.compare(BASE_ENV, agents, 0, T, 6, callback=tracker, **kw)
    assert tracker.closed == 1
    assert [(c[1]["name"], c[0]["step"]) for c in tracker.calls] == [
        ("a", 20), ("a", T), ("a", T), ("b/2", 20), ("b/2", T), ("b/2", T)]
    for name, result in results.items():
        calls = [c for c in tracker.calls if c[1]["name"] == name]
        assert {k: v for k, v in calls[0][1].items() if k != "name"} == result.run_info
        regret = np.asarray(result.cumulative_regret, np.float64)
        assert calls[1][0]["regret/mean"] == pytest.approx(regret[:4, -1].mean(), rel=1e-6)
        assert calls[2][0] == pytest.approx(jb.tracking.result_stats(result)[-1], rel=1e-6)

    tracker = FakeTracker()
    swept = jb.sweep(BASE_ENV, agent, 0, {"explore_scale": [0.5, 2.0]}, T, 6,
                     callback=tracker, **kw)
    assert tracker.closed == 1
    for label, result in swept.items():
        calls = [c for c in tracker.calls if c[1]["name"] == label]
        assert [c[0]["step"] for c in calls] == [20, T, T]
        assert calls[0][1]["grid"] == {"explore_scale": result.agent_config["explore_scale"]}
        assert calls[2][0] == pytest.approx(jb.tracking.result_stats(result)[-1], rel=1e-6)
    np.testing.assert_array_equal(swept["explore_scale=0.5"].cumulative_regret,
                                  results["b/2"].cumulative_regret)  # the same bits
    with pytest.raises(ValueError, match="callable"):
        jb.sweep(BASE_ENV, agent, 0, {"explore_scale": [0.5]}, T, callback=3)

    pytest.importorskip("tensorboardX")
    from test_tracking import _events

    jb.compare(BASE_ENV, agents, 0, T, 4, callback=jb.tracking.TensorBoardTracker(tmp_path),
               **kw)
    for folder in ("a", "b_2"):
        scalars = _events(tmp_path / folder)
        assert sorted(step for tag, step, _ in scalars if tag == "regret/mean") == [20, T]


def test_a_delayed_run_resumes_from_its_checkpoint_bit_for_bit(tmp_path):
    agent = jb.make_agent("lin-ts")
    kw = dict(record="all", block_runs=4, progress=False, chunk_size=20,
              feedback_delay=(1, 6), update_every=3, checkpoint_dir=tmp_path / "ckpt")

    class StopAt40(FakeTracker):
        def __call__(self, stats, run_info):
            if stats["step"] == T:  # after the commit at round 20: an interrupted run
                raise KeyboardInterrupt
            super().__call__(stats, run_info)

    with pytest.raises(KeyboardInterrupt):
        jb.simulate(BASE_ENV, agent, 0, T, 4, callback=StopAt40(), **kw)
    seen = FakeTracker()
    resumed = jb.simulate(BASE_ENV, agent, 0, T, 4, callback=seen, **kw)
    assert [c[0]["step"] for c in seen.calls] == [T]  # it played from round 20 on
    whole = jb.simulate(BASE_ENV, agent, 0, T, 4, **{**kw, "checkpoint_dir": None})
    np.testing.assert_array_equal(resumed.cumulative_regret, whole.cumulative_regret)
    with pytest.raises(ValueError, match="checkpoint|experiment"):  # another timing's
        jb.simulate(BASE_ENV, agent, 0, T, 4, **{**kw, "update_every": 2})
