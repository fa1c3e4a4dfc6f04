"""Meta-learning by gradient (Boutilier et al. 2020): an agent's learnable leaves trained on
fresh instances, step by step."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxbandits.core import Agent, Env, LogProb
from jaxbandits.differentiable.common import (
    POSITIVE_FIELDS,
    check_args,
    check_count,
    check_temperature,
    combine,
    leaf_values,
    learnable_leaves,
)
from jaxbandits.differentiable.relaxed import relaxed_gradient
from jaxbandits.differentiable.score import policy_gradient
from jaxbandits.runner import (
    Progress,
    as_key,
    progress_mode,
    simulate,
)

__all__ = [
    "MODES",
    "MetaLearnResult",
    "OPTIMIZERS",
    "meta_learn",
]

PyTree = Any


# ------------------------------------------------------------------------------------------------
# Meta-learning.

MODES = ("score", "relaxed")
#: optax optimisers :func:`meta_learn` builds by name, ``getattr(optax, name)(learning_rate)``.
OPTIMIZERS = ("adam", "adamw", "sgd", "rmsprop", "adagrad")


@dataclasses.dataclass(frozen=True)
class MetaLearnResult:
    """The learning curve of :func:`meta_learn`.

    Attributes:
      agent: the learned agent (its learnable leaves after the last step).
      objective / objective_se: ``(steps,)`` the training objective of each step's fresh
        instances (mean cumulative reward; relaxed in ``"relaxed"`` mode) and its standard error.
      leaves: ``{name: (steps + 1, ...)}`` every learnable leaf before each step and at the end.
      eval_steps: ``(E,)`` the steps after which the agent was evaluated (0: before learning).
      eval_regret / eval_regret_se: ``(E,)`` the hard policy's mean cumulative regret at
        ``horizon`` on the held-out instances (``jb.simulate``), and its standard error.
      mode, horizon, num_runs, eval_runs: the settings.
    """

    agent: Agent
    objective: np.ndarray
    objective_se: np.ndarray
    leaves: dict[str, np.ndarray]
    eval_steps: np.ndarray
    eval_regret: np.ndarray
    eval_regret_se: np.ndarray
    mode: str
    horizon: int
    num_runs: int
    eval_runs: int

    def to_dataframe(self):
        """One row per step: objective, its s.e., the scalar leaves, and the held-out regret
        where evaluated (pandas)."""
        import pandas as pd

        frame = pd.DataFrame({"step": np.arange(len(self.objective)),
                              "objective": self.objective, "objective_se": self.objective_se})
        for name, values in self.leaves.items():
            if values[0].size == 1:
                frame[name] = np.ravel(values[:-1])
        held_out = pd.DataFrame({"step": self.eval_steps, "eval_regret": self.eval_regret,
                                 "eval_regret_se": self.eval_regret_se})
        return frame.merge(held_out, on="step", how="outer")

    def plot(self, path=None):
        """Two panels: the training objective by step, and the held-out regret at the evaluated
        steps (95% intervals). Writes a PNG to ``path`` if given; returns the figure."""
        import matplotlib.pyplot as plt

        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
        steps = np.arange(len(self.objective))
        left.plot(steps, self.objective)
        left.fill_between(steps, self.objective - 1.96 * self.objective_se,
                          self.objective + 1.96 * self.objective_se, alpha=0.25)
        left.set(xlabel="step", title=f"training objective ({self.mode})",
                 ylabel="relaxed expected reward" if self.mode == "relaxed" else "reward")
        right.errorbar(self.eval_steps, self.eval_regret, yerr=1.96 * self.eval_regret_se,
                       marker="o", capsize=3)
        right.set(xlabel="step", ylabel=f"cumulative regret at T = {self.horizon}",
                  title=f"held-out instances ({self.eval_runs} runs)")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120)
        return fig


def _optimizer(optimizer, learning_rate, what: str) -> optax.GradientTransformation:
    """The optax transformation of :func:`meta_learn`'s ``optimizer`` argument: itself, one of
    :data:`OPTIMIZERS` by name at ``learning_rate``, or (None) ``optax.adam(learning_rate)``."""
    if not callable(learning_rate):  # a number, or an optax schedule of the step
        ok = not isinstance(learning_rate, (bool, np.bool_)) and isinstance(
            learning_rate, (int, float, np.integer, np.floating)) and 0 < learning_rate < math.inf
        if not ok:
            raise ValueError(f"{what}: learning_rate must be a positive finite number or an "
                             f"optax schedule (the step size of gradient ascent on the "
                             f"objective), got {learning_rate!r}")
    if optimizer is None:
        optimizer = "adam"
    if isinstance(optimizer, str):
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"{what}: optimizer must be an optax GradientTransformation or one "
                             f"of the names {OPTIMIZERS}, got {optimizer!r}")
        return getattr(optax, optimizer)(learning_rate)
    if not isinstance(optimizer, optax.GradientTransformation):
        raise ValueError(f"{what}: optimizer must be an optax GradientTransformation (e.g. "
                         f"optax.adam(0.05)) or one of the names {OPTIMIZERS}, got "
                         f"{optimizer!r}")
    return optimizer


def meta_learn(
    env: Env,
    agent: Agent,
    key: jax.Array | int,
    *,
    horizon: int,
    num_runs: int = 64,
    steps: int = 100,
    learning_rate: float | optax.Schedule = 0.05,
    optimizer: optax.GradientTransformation | str | None = None,
    mode: str | None = None,
    baseline: str = "self-play",
    temperature: float = 0.1,
    relaxation: str = "softmax",
    wrt: str | Sequence[str] | None = None,
    eval_runs: int = 256,
    eval_every: int = 10,
    progress: bool | str | None = None,
) -> MetaLearnResult:
    """Learns ``agent``'s leaves by gradient ascent on the expected cumulative reward over the
    environment's instance distribution (Boutilier et al. 2020, Algorithm 1, "GradBand").

    Every step draws ``num_runs`` fresh instances (``fold_in(key, step)``), estimates the
    gradient (:func:`policy_gradient` in ``"score"`` mode, :func:`relaxed_gradient` in
    ``"relaxed"`` mode) and applies one optax update. Leaves that must stay positive
    (``explore_scale``, ``reg``, ``temperature``, ...) are learned in log space. Every
    ``eval_every`` steps, and before and after learning, the hard policy is played on
    ``eval_runs`` held-out instances (another key) with ``jb.simulate``.

    Args:
      env, agent, key, horizon, num_runs: the instance distribution, the policy, the seed, T,
        and the instances per step.
      steps: optimisation steps.
      learning_rate: > 0 (or an optax schedule): the step size of the optimiser named by
        ``optimizer`` (ignored with an optax transformation, but still checked).
      optimizer: any optax transformation (it minimises the negated objective), or the name of
        one of :data:`OPTIMIZERS` (``"adam"``, ``"sgd"``, ...) built at ``learning_rate``;
        default ``"adam"``.
      mode: ``"score"`` (needs ``log_prob``), ``"relaxed"`` (needs ``scores``); default: score
        when the agent has ``log_prob``, else relaxed.
      baseline: of the score mode; temperature, relaxation: of the relaxed mode.
      wrt: the leaves to learn (default: every float leaf).
      eval_runs, eval_every: the held-out evaluation.
      progress: as :func:`jaxbandits.simulate` (a bar on a terminal, ``"lines"`` for logs).

    Example::

        env = jb.make_env("bernoulli", num_arms=2)
        out = jb.meta_learn(env, jb.make_agent("soft-elim"), 0, horizon=200, steps=50)
        out.agent.explore_scale, out.plot("soft_elim.png")
    """
    what = "meta_learn"
    if mode is None:
        mode = "score" if isinstance(agent, LogProb) else "relaxed"
    if mode not in MODES:
        raise ValueError(f"{what}: mode must be one of {MODES}, got {mode!r}")
    for label, value in (("steps", steps), ("eval_runs", eval_runs), ("eval_every", eval_every)):
        check_count(value, label, what)
    horizon, num_runs = check_args(env, agent, horizon, num_runs, what,
                               "log_prob" if mode == "score" else "scores")
    if mode == "relaxed":
        check_temperature(temperature, relaxation, what)
    names = tuple(learnable_leaves(agent, wrt))
    positive = [n.rsplit(".", 1)[-1] in POSITIVE_FIELDS for n in names]
    key = as_key(key)
    train_key, eval_key = jax.random.fold_in(key, 0), jax.random.fold_in(key, 1)
    optimizer = _optimizer(optimizer, learning_rate, what)

    def to_free(values):
        return [jnp.log(v) if p else v for v, p in zip(values, positive, strict=True)]

    def from_free(free):
        return [jnp.exp(u) if p else u for u, p in zip(free, positive, strict=True)]

    def estimate(agent, step_key):
        if mode == "score":
            return policy_gradient(env, agent, step_key, horizon, num_runs, baseline=baseline,
                                   wrt=names)
        return relaxed_gradient(env, agent, step_key, horizon, num_runs,
                                temperature=temperature, relaxation=relaxation, wrt=names)

    def evaluate(agent):
        result = simulate(env, agent, eval_key, horizon, eval_runs, record=[horizon],
                          progress=False, name=f"{agent.name or 'agent'} (meta-learning)")
        final = np.asarray(result.cumulative_regret)[:, -1]
        return float(final.mean()), float(final.std(ddof=1) / math.sqrt(final.size))

    free = to_free(leaf_values(agent, names))
    opt_state = optimizer.init(free)
    history = {n: [] for n in names}
    objective, objective_se, evals = [], [], []
    seed_steps = num_runs * horizon * (2 if mode == "score" and baseline == "self-play" else 1)
    label = f"meta-learning {agent.name or type(agent).__name__}"
    with Progress(progress_mode(progress), label, steps * seed_steps, num_runs) as bar:
        evals.append((0, *evaluate(agent)))
        start = time.perf_counter()
        for step in range(steps):
            values = from_free(free)
            for n, v in zip(names, values, strict=True):
                history[n].append(np.asarray(v))
            current = combine(agent, names, values)
            if step == 0:
                bar.compiling()
            out = estimate(current, jax.random.fold_in(train_key, step))
            if step == 0:
                bar.compiled(time.perf_counter() - start)
                start = time.perf_counter()
            objective.append(out.value)
            objective_se.append(out.value_se)
            grads = leaf_values(out.grad, names)
            # ascent on the objective; d/du exp(u) = exp(u) for the log-space leaves
            free_grads = [-(g * v if p else g)
                          for g, v, p in zip(grads, values, positive, strict=True)]
            updates, opt_state = optimizer.update(free_grads, opt_state, free)
            free = optax.apply_updates(free, updates)
            bar.advance((step + 1) * seed_steps, time.perf_counter() - start)
            if (step + 1) % eval_every == 0 or step + 1 == steps:
                evals.append((step + 1, *evaluate(combine(agent, names, from_free(free)))))
    values = from_free(free)
    for n, v in zip(names, values, strict=True):
        history[n].append(np.asarray(v))
    learned = combine(agent, names, [np.asarray(v) for v in values])
    learned = jax.tree.map(lambda x: x.item() if isinstance(x, np.ndarray) and x.ndim == 0
                           else x, learned)
    eval_steps, eval_regret, eval_se = (np.asarray(c) for c in zip(*evals, strict=True))
    return MetaLearnResult(
        agent=learned, objective=np.asarray(objective), objective_se=np.asarray(objective_se),
        leaves={n: np.stack(v) for n, v in history.items()}, eval_steps=eval_steps.astype(int),
        eval_regret=eval_regret, eval_regret_se=eval_se, mode=mode, horizon=horizon,
        num_runs=num_runs, eval_runs=eval_runs)
