"""Meta-learning by gradient: a gradient-tuned exploration scale lands in
the best bracket of a grid sweep of the same objective, and meta-learned SoftElim beats untuned
UCB1 and Bernoulli Thompson sampling on held-out instances of its training distribution
(Boutilier et al. 2020's qualitative claim)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxbandits as jb

pytestmark = pytest.mark.unoptimized  # checks what programs compute, not bits (conftest.py)


@pytest.mark.full
def test_gradient_tuned_lin_ucb_lands_in_the_best_bracket_of_a_sweep():
    env = jb.make_env("linear", dim=10, num_arms=20)
    base = jb.make_agent("lin-ucb", env=env)
    agent = jb.agents.Softmax(agent=base, temperature=0.03)  # the objective: this policy's reward
    out = jb.meta_learn(env, agent, 3, horizon=500, num_runs=32, steps=40, learning_rate=0.3,
                        wrt="agent.explore_scale", eval_every=40, eval_runs=32, progress=False)
    tuned = out.agent.agent.explore_scale
    grid = np.geomspace(0.01, 10, 7)
    agents = {f"{s:.3g}": agent.replace(agent=base.replace(explore_scale=float(s))) for s in grid}
    results = jb.compare(env, agents, 99, 500, 128, record=[500], progress=False)
    regrets = np.array([r.final()[0] for r in results.values()])
    best = int(np.argmin(regrets))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    assert low <= tuned <= high, (tuned, dict(zip(results, regrets.round(1), strict=True)))
    assert out.eval_regret[-1] < out.eval_regret[0]  # held-out regret fell from scale 1
    assert out.leaves["agent.explore_scale"].shape == (41,)
    frame = out.to_dataframe()
    assert list(frame["step"][:2]) == [0, 1] and "eval_regret" in frame


@pytest.mark.full
def test_meta_learned_soft_elim_beats_ucb1_and_thompson_sampling(tmp_path):
    env = jb.make_env("bernoulli", num_arms=10)  # Beta(1, 1) means per instance
    out = jb.meta_learn(env, jb.make_agent("soft-elim"), 0, horizon=200, num_runs=64, steps=40,
                        learning_rate=0.2, eval_every=40, eval_runs=64, progress=False)
    assert out.mode == "score"
    agents = {"meta-learned soft-elim": out.agent, "ucb1": jb.make_agent("ucb1"),
              "bernoulli-ts": jb.make_agent("bernoulli-ts")}
    results = jb.compare(env, agents, 7, 200, 512, record=[200], progress=False)  # held out
    learned, ucb1, ts = (results[name].final() for name in agents)
    # mean regret below each rival's by more than the two 95% half-widths together
    assert learned[0] + learned[1] + ucb1[1] < ucb1[0], (learned, ucb1)
    assert learned[0] + learned[1] + ts[1] < ts[0], (learned, ts)
    fig = out.plot(tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 0 and len(fig.axes) == 2


@pytest.mark.parametrize("mode", ["score", "relaxed"])
def test_neural_policy_meta_learns_without_error(mode):
    env = jb.make_env("bernoulli", num_arms=3)
    agent = jb.make_agent("neural-policy")
    out = jb.meta_learn(env, agent, 1, horizon=20, num_runs=8, steps=3, mode=mode,
                        temperature=0.5, eval_every=3, eval_runs=8, progress=False)
    before = np.concatenate([np.ravel(v[0]) for v in out.leaves.values()])
    after = np.concatenate([np.ravel(v[-1]) for v in out.leaves.values()])
    assert np.all(np.isfinite(after)) and np.any(before != after)
    assert np.isfinite(out.eval_regret).all()


def test_the_default_network_follows_the_float_mode():
    """The default network is built once per float dtype: an agent made with x64 off after one
    made with it on has float32 parameters (it had the cached float64 ones, and every act
    warned that float64 was truncated)."""
    with jax.enable_x64(True):
        wide = jb.make_agent("neural-policy")
    narrow = jb.make_agent("neural-policy")
    assert {x.dtype for x in jax.tree.leaves(wide.params)} == {np.dtype("float64")}
    assert {x.dtype for x in jax.tree.leaves(narrow.params)} == {np.dtype("float32")}
    np.testing.assert_allclose(jax.tree.leaves(narrow.params)[0],
                               jax.tree.leaves(wide.params)[0], rtol=1e-6)


@pytest.mark.parametrize("overrides, match", [
    # a negative rate ascended the negated objective (descent on reward) without a word
    (dict(learning_rate=-1), r"meta_learn: learning_rate must be a positive finite number"),
    # NaN reached the agent, and the error named explore_scale
    (dict(learning_rate=float("nan")), "learning_rate must be a positive finite number.*nan"),
    (dict(learning_rate=0.0), "learning_rate must be"),
    (dict(learning_rate=True), "learning_rate must be"),
    (dict(optimizer="adamx"), r"optimizer must be an optax GradientTransformation or one of the "
                              r"names \('adam'"),
    (dict(optimizer=42), r"optimizer must be an optax GradientTransformation \(e.g."),
    (dict(optimizer="Adam"), "optimizer must be"),
])
def test_bad_meta_learning_settings_are_named(overrides, match):
    from jaxbandits.simulate import trace_counts

    before = trace_counts()
    with pytest.raises(ValueError, match=match):
        jb.meta_learn(jb.make_env("bernoulli", num_arms=2), jb.make_agent("soft-elim"), 0,
                      horizon=5, num_runs=2, steps=1, progress=False, **overrides)
    assert trace_counts() == before  # before anything was compiled


def test_an_optimizer_by_name_is_the_optax_optimizer():
    import optax

    env, agent = jb.make_env("bernoulli", num_arms=2), jb.make_agent("soft-elim")
    kwargs = dict(horizon=6, num_runs=4, steps=2, eval_runs=2, eval_every=2, progress=False)
    named = jb.meta_learn(env, agent, 0, optimizer="sgd", learning_rate=0.5, **kwargs)
    built = jb.meta_learn(env, agent, 0, optimizer=optax.sgd(0.5), **kwargs)
    default = jb.meta_learn(env, agent, 0, learning_rate=0.5, **kwargs)  # adam
    np.testing.assert_array_equal(named.leaves["explore_scale"], built.leaves["explore_scale"])
    assert not np.array_equal(named.leaves["explore_scale"], default.leaves["explore_scale"])
