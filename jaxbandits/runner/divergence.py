"""The divergence check's report: which run went wrong first, at which round, and how (a
non-finite reward or regret, a diverged agent state naming its leaf, an out-of-range action).
The flags themselves are written in the carry by :func:`jaxbandits.runner.run.step`."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxbandits.core import Agent

__all__ = ["Divergence", "state_leaf_paths"]


@dataclasses.dataclass(frozen=True)
class Divergence:
    """The report of one group of configurations: their ``labels``, the environment's
    ``spec``, the agent state's floating ``leaf_paths`` (:func:`state_leaf_paths`) and the
    runs per block."""

    labels: list[str]
    spec: Any
    leaf_paths: list[str]
    block_runs: int

    def raise_if_bad(self, bad: np.ndarray, bad_state: np.ndarray, wave) -> None:
        """Raises for the earliest problem among the real runs of ``wave`` (``(grid point,
        first run, real runs)`` per block), from the carries' ``bad_step`` and ``bad_state``
        flags (:class:`~jaxbandits.runner.run.Carry`)."""
        _raise_if_bad(bad, bad_state, wave, self)


def _raise_if_bad(bad: np.ndarray, bad_state: np.ndarray, wave, report: Divergence) -> None:
    """Raises for the earliest problem among real runs: a non-finite reward (regret, extra
    metric, or an overflowed cumulative sum), a diverged agent state (a NaN or inf in a state
    leaf after an update) or an out-of-range action; at the same round in that order."""
    block_runs, labels, spec = report.block_runs, report.labels, report.spec
    leaf_paths = report.leaf_paths
    hits = []  # (step, kind, run, grid point, leaf)
    for i, (g, start, real) in enumerate(wave):
        rows = slice(i * block_runs, i * block_runs + real)
        for kind, steps in ((0, bad[rows, 0]), (1, bad_state[rows, 0]), (2, bad[rows, 1])):
            hits += [(int(steps[j]), kind, start + int(j), g, int(bad_state[rows, 1][j]))
                     for j in np.flatnonzero(steps >= 0)]
    if not hits:
        return
    step, kind, run, g, leaf = min(hits)
    affected = len({(h[2], h[3]) for h in hits if h[1] == kind})
    where = f" ({labels[g]})" if len(labels) > 1 else ""
    if kind == 0:
        what = ("reward or regret" if not spec.metrics else
                f"reward, regret or metric ({', '.join(spec.metrics)})")
        raise FloatingPointError(
            f"non-finite {what} in run {run}{where} at step {step} (0-based round index; a "
            f"cumulative sum that overflowed counts too); {affected} run(s) affected. Check "
            "the environment's feedback and scale.")
    if kind == 1:
        path = leaf_paths[leaf] if 0 <= leaf < len(leaf_paths) else f"#{leaf}"
        raise FloatingPointError(
            f"agent {labels[g]!r} diverged: its state leaf {path} holds a non-finite value (NaN "
            f"or inf) after the update of step {step} (0-based round index) in run {run}; "
            f"{affected} run(s) affected. Lower its learning rate or raise its "
            "regularisation.")
    allowed = ("a finite vector" if spec.action_kind == "vector" else
               f"indices in [0, {spec.num_arms})")
    raise ValueError(
        f"agent {labels[g]!r} returned an out-of-range action in run {run} at step {step} "
        f"(0-based round index): {spec.action_kind!r} actions must be {allowed}; "
        f"{affected} run(s) affected.")


def state_leaf_paths(agent: Agent, spec) -> list[str]:
    """The paths (``jax.tree_util.keystr``) of the agent state's floating leaves, in the order
    of :attr:`Carry.bad_state`'s leaf index."""
    state = jax.eval_shape(lambda k: agent.init(k, spec), jax.random.key(0))
    return [f"state{jax.tree_util.keystr(path)}"
            for path, x in jax.tree_util.tree_flatten_with_path(state)[0]
            if jnp.issubdtype(x.dtype, jnp.inexact)]
