"""One run, written for a single seed: its keys, its carry, ``init``, one round ``step``, a
chunk of rounds ``play_chunk`` (the runner's compiled loop), and :func:`rollout`, the scan over
chunks of any round function (for gradients, traces and custom loops).

Randomness: every key derives from the user key and the run index with ``fold_in``, and each
round's keys from the round index, never from the batch layout, so run ``r`` is the same
whatever ``num_runs``, chunking or device count.

Example (run 0 of ``jb.simulate(env, agent, key, 100)``, unbatched)::

    carry = jb.runner.init(env, agent, key, 0)
    steps = jnp.asarray([100], jnp.int32)
    carry, _ = jb.runner.rollout(jb.runner.round_fn(env, agent, steps), carry, 100)
    carry.cumulative[0]   # run 0's cumulative regret at T = 100
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.core import Agent, Env, float_dtype
from jaxbandits.metrics import RECORDED
from jaxbandits.runner.delay import Timing, apply_due, delay_of, pending_init, push

__all__ = [
    "Carry",
    "RunKeys",
    "init",
    "init_agent",
    "init_instance",
    "num_columns",
    "play_chunk",
    "rollout",
    "round_fn",
    "run_keys",
    "step",
]

PyTree = Any


class RunKeys(struct.PyTreeNode):
    """The per-run key streams; round ``t`` uses ``fold_in(stream, t)``."""

    env_observe: jax.Array
    env_feedback: jax.Array
    agent_act: jax.Array
    agent_update: jax.Array

    def at(self, t: jax.Array) -> RunKeys:
        """Round ``t``'s keys, ``fold_in(stream, t)`` of every stream."""
        return jax.tree.map(lambda k: jax.random.fold_in(k, t), self)


class Carry(struct.PyTreeNode):
    """Everything one run carries between rounds.

    Attributes:
      env_state / agent_state: the instance and the agent's state.
      keys: the run's key streams.
      cumulative: ``(C,)`` with ``C = len(RECORDED) + M``: cumulative regret, reward and
        accepted rounds, then the M extra metrics of the environment (``Spec.metrics``).
      records: ``(S + 1, C)`` the cumulative values at the recorded steps (the last row is a
        scratch slot written by unrecorded steps).
      bad_step: ``(2,)`` int32, the first round with a non-finite reward, regret or extra
        metric (or a cumulative sum of them that overflowed), and the first round whose action
        was out of range (an index outside ``[0, K)``, a non-finite vector), each -1 if none.
      bad_state: ``(2,)`` int32, the first round after whose update the agent's state held a
        non-finite value, and the index of its first such leaf among the state's floating
        leaves (see :func:`jaxbandits.runner.checks.state_leaf_paths`); -1 if none.
      pending: with delayed or batched feedback (:class:`~jaxbandits.runner.delay.Timing`),
        the ring of rounds whose feedback has not reached the agent yet; None (no leaves)
        otherwise.
    """

    env_state: PyTree
    agent_state: PyTree
    keys: RunKeys
    cumulative: jax.Array
    records: jax.Array
    bad_step: jax.Array
    bad_state: jax.Array
    pending: PyTree = None


def run_keys(key: jax.Array, run_id: jax.Array) -> tuple[jax.Array, jax.Array, RunKeys]:
    """``(env_init, agent_init, streams)``: the keys of run ``run_id`` (the instance draw, the
    agent's initial draw and the per-round streams), ``fold_in(fold_in(key, run_id), i)``."""
    run_key = jax.random.fold_in(key, run_id)
    streams = [jax.random.fold_in(run_key, i) for i in range(6)]
    return streams[0], streams[1], RunKeys(*streams[2:])


def num_columns(spec) -> int:
    """Columns of the cumulative values: the recorded metrics (``jaxbandits.metrics.RECORDED``:
    regret, reward, accepted), then the environment's extra metrics."""
    return len(RECORDED) + len(spec.metrics)


def init(env: Env, agent: Agent, key: jax.Array, run_id: jax.Array | int,
         num_slots: int = 1, timing: Timing | None = None) -> Carry:
    """The carry of run ``run_id`` before its first round, with ``num_slots`` recorded steps
    (and, with delayed or batched feedback ``timing``, an empty pending ring):
    :func:`init_agent` of :func:`init_instance`."""
    return init_agent(env, agent, init_instance(env, key, run_id), num_slots, timing)


def init_instance(env: Env, key: jax.Array, run_id: jax.Array | int
                  ) -> tuple[PyTree, jax.Array, RunKeys]:
    """``(env_state, agent_key, streams)`` of run ``run_id``: its instance and its keys, the
    part of :func:`init` every agent of a comparison shares (the runner compiles it once)."""
    env_key, agent_key, keys = run_keys(key, jnp.asarray(run_id, jnp.uint32)
                                        if isinstance(run_id, int) else run_id)
    return env.init(env_key), agent_key, keys


def init_agent(env: Env, agent: Agent, instance: tuple[PyTree, jax.Array, RunKeys],
               num_slots: int = 1, timing: Timing | None = None) -> Carry:
    """The carry before the first round, given the run's :func:`init_instance`."""
    env_state, agent_key, keys = instance
    dtype = float_dtype()
    columns = num_columns(env.spec())
    agent_state = agent.init(agent_key, env.spec())
    pending = None
    if timing is not None and not timing.immediate:
        def one_round(env, agent, env_state, agent_state, keys):
            context = env.observe(keys.env_observe, env_state, jnp.zeros((), jnp.int32))
            action, _ = agent.act(agent_state, keys.agent_act, context)
            return context, action, env.feedback(keys.env_feedback, env_state, context, action)

        shapes = jax.eval_shape(one_round, env, agent, env_state, agent_state, keys)
        pending = pending_init(*shapes, timing)
    return Carry(
        env_state=env_state,
        agent_state=agent_state,
        keys=keys,
        cumulative=jnp.zeros((columns,), dtype),
        records=jnp.zeros((num_slots + 1, columns), dtype),
        bad_step=jnp.full((2,), -1, jnp.int32),
        bad_state=jnp.full((2,), -1, jnp.int32),
        pending=pending,
    )


def step(env: Env, agent: Agent, carry: Carry, t: jax.Array, steps: jax.Array,
         timing: Timing | None = None, check_state_each_round: bool = True) -> Carry:
    """Plays round ``t`` (0-based) of one run and records it if ``t + 1`` is in ``steps``
    (``(S,)`` int32, increasing).

    ``check_state_each_round``: flag a non-finite agent state in ``bad_state`` at the round it
    happens. With False the state is checked by :func:`play_chunk` once, at the chunk's end
    (one reduction per state leaf every round costs up to a quarter of a cheap agent's round).
    Rewards, regrets and actions are checked every round either way. Never changes what is
    played or recorded.

    With delayed or batched feedback (``timing``, the carry made by :func:`init` with it), the
    round's feedback joins the pending ring and the agent is updated with the feedback due
    (:func:`jaxbandits.runner.delay.apply_due`); ``t`` must then be shared by the runs of a
    ``vmap``, as in the runner's loops."""
    keys = carry.keys
    context = env.observe(jax.random.fold_in(keys.env_observe, t), carry.env_state, t)
    action, acted = agent.act(carry.agent_state, jax.random.fold_in(keys.agent_act, t), context)
    feedback_key = jax.random.fold_in(keys.env_feedback, t)
    feedback = env.feedback(feedback_key, carry.env_state, context, action)
    dtype = carry.cumulative.dtype
    accepted = jnp.asarray(feedback.accepted, dtype)
    pending = carry.pending
    if timing is None or timing.immediate:
        agent_state = agent.update(
            acted, jax.random.fold_in(keys.agent_update, t), context, action, feedback
        )
        if env.spec().replay:  # rejected replay rounds never happened, for the agent
            agent_state = jax.tree.map(
                lambda new, old: jnp.where(accepted > 0, new, old), agent_state,
                carry.agent_state
            )
    else:
        if pending is None:
            raise ValueError("step: a carry made without timing= cannot play delayed or "
                             "batched feedback; make it with init(..., timing=timing)")
        if env.spec().replay:  # a rejected replay round never happened: no act, no feedback
            acted = jax.tree.map(lambda new, old: jnp.where(accepted > 0, new, old), acted,
                                 carry.agent_state)
        pending = push(pending, t, delay_of(timing, feedback_key), context, action, feedback,
                       accepted > 0)
        agent_state, pending = apply_due(agent.update, acted, keys.agent_update, pending, t,
                                         timing)
    reward = jnp.asarray(feedback.reward, dtype)
    regret = jnp.asarray(feedback.regret, dtype)
    extra = [jnp.asarray(feedback.metrics[name], dtype) for name in env.spec().metrics]
    cumulative = carry.cumulative + jnp.stack([regret, reward * accepted, accepted, *extra])
    finite = jnp.isfinite(reward) & jnp.isfinite(regret) & jnp.all(jnp.isfinite(cumulative))
    for value in extra:
        finite = finite & jnp.isfinite(value)
    bad = jnp.stack([~finite, ~_action_in_range(env.spec(), action)])
    bad_step = jnp.where((carry.bad_step < 0) & bad, t, carry.bad_step)
    bad_state = carry.bad_state
    if check_state_each_round:
        bad_state = _flag_state(agent_state, bad_state, t)
    num_slots = steps.shape[0]
    slot = jnp.minimum(jnp.searchsorted(steps, t + 1), num_slots - 1)
    # ``t`` is shared by the runs of a vmap, so this stays a branch: rows are written at the
    # recorded rounds only
    records = jax.lax.cond(steps[slot] == t + 1, lambda r: r.at[slot].set(cumulative),
                           lambda r: r, carry.records)
    return Carry(
        env_state=carry.env_state,
        agent_state=agent_state,
        keys=keys,
        cumulative=cumulative,
        records=records,
        bad_step=bad_step,
        bad_state=bad_state,
        pending=pending,
    )


def _flag_state(agent_state: PyTree, bad_state: jax.Array, t: jax.Array) -> jax.Array:
    """``bad_state`` with ``[t, leaf]`` if none was flagged yet and a floating leaf of
    ``agent_state`` holds a NaN or inf (``leaf``: the first such, among the floating leaves)."""
    floats = [x for x in jax.tree.leaves(agent_state) if jnp.issubdtype(x.dtype, jnp.inexact)]
    if not floats:
        return bad_state
    leaf_ok = jnp.stack([jnp.all(jnp.isfinite(x)) for x in floats])  # one reduction per leaf
    diverged = (bad_state[0] < 0) & ~jnp.all(leaf_ok)
    return jnp.where(diverged, jnp.stack([t, jnp.argmin(leaf_ok).astype(jnp.int32)]), bad_state)


def _action_in_range(spec, action: jax.Array) -> jax.Array:
    """Whether ``action`` is a valid action of ``spec`` (an environment would clamp it)."""
    if spec.action_kind == "vector":
        return jnp.all(jnp.isfinite(action))
    if not jnp.issubdtype(action.dtype, jnp.integer):
        return jnp.all((action == jnp.round(action)) & (action >= 0) & (action < spec.num_arms))
    return jnp.all((action >= 0) & (action < spec.num_arms))


def round_fn(env: Env, agent: Agent, steps: jax.Array, timing: Timing | None = None
             ) -> Callable[[Carry, jax.Array], tuple[Carry, None]]:
    """The runner's round as a :func:`rollout` round function, ``(carry, t) -> (carry, None)``."""

    def play(carry: Carry, t: jax.Array) -> tuple[Carry, None]:
        return step(env, agent, carry, t, steps, timing), None

    return play


def play_chunk(env: Env, agent: Agent, carry: Carry, start: jax.Array, horizon: jax.Array,
               steps: jax.Array, length: int, timing: Timing | None = None,
               check_state_each_round: bool = True) -> Carry:
    """Plays rounds ``start, ..., start + length - 1`` of one run (those before ``horizon``):
    the loop the runner compiles once and drives chunk by chunk from Python.

    ``start`` and ``horizon`` are shared by all runs, so the trip count ``min(length, horizon -
    start)`` is not batched under ``vmap`` and a last, shorter chunk simply stops early. The loop
    body is the bare round (no ``cond`` around it), so XLA hoists what does not change between
    rounds, such as functions of a fixed arm set, out of the loop. (A loop of traced length:
    not reverse-differentiable; :func:`rollout` is.) ``check_state_each_round=False``: the
    state's divergence flag is set once, at the chunk's end, and holds the chunk's last round
    (see :func:`step`); the runner plays so and, when the flag is set, replays the block with
    ``True`` to name the round.
    """

    def body(offset: jax.Array, carry: Carry) -> Carry:
        return step(env, agent, carry, start + offset, steps, timing, check_state_each_round)

    stop = jnp.clip(horizon - start, 0, length).astype(jnp.int32)
    carry = jax.lax.fori_loop(jnp.zeros((), jnp.int32), stop, body, carry)
    if check_state_each_round:
        return carry
    # Once per chunk: a state that went non-finite and came back within the chunk is not seen.
    # The flag holds the chunk's last round; the runner then replays with every round checked.
    last = start + jnp.maximum(stop, 1) - 1
    return carry.replace(bad_state=_flag_state(carry.agent_state, carry.bad_state, last))


def rollout(round_fn: Callable[[PyTree, jax.Array], tuple[PyTree, PyTree]], carry: PyTree,
            num_rounds: int, *, start: int = 0, chunk_size: int | None = None,
            remat: bool = False) -> tuple[PyTree, PyTree]:
    """``carry`` after ``carry, out = round_fn(carry, t)`` for ``t = start, ...,
    start + num_rounds - 1``, and the outputs stacked ``(num_rounds, ...)``.

    An outer ``lax.scan`` over chunks of ``chunk_size`` rounds (default about
    ``sqrt(num_rounds)``), each an inner ``lax.scan``; rounds past the end of a last, partial
    chunk leave the carry unchanged. With ``remat=True`` each chunk is rematerialised
    (``jax.checkpoint``), so reverse mode keeps one carry per chunk and one chunk of residuals,
    about ``2 sqrt(T)`` rounds' worth. Jit-, vmap- and grad-compatible; chunking never changes
    the numbers of the forward pass.

    Args:
      round_fn: ``(carry, t) -> (carry, out)``, ``t`` an int32 round index (e.g.
        :func:`round_fn` for the runner's round, or your own).
      carry: the initial carry (e.g. :func:`init`).
      num_rounds: how many rounds to play (a Python int).
      start: the index of the first round.
      chunk_size: rounds per chunk.
      remat: rematerialise each chunk in reverse mode.

    Returns:
      ``(carry, outs)``: the final carry and ``out`` stacked over rounds (None if ``out`` is).
    """
    if int(num_rounds) != num_rounds or num_rounds < 1:
        raise ValueError(f"rollout: num_rounds must be a positive integer, got {num_rounds!r}")
    num_rounds = int(num_rounds)
    if chunk_size is not None and (int(chunk_size) != chunk_size or chunk_size < 1):
        raise ValueError(f"rollout: chunk_size must be a positive integer, got {chunk_size!r}")
    chunk = max(1, math.isqrt(num_rounds - 1) + 1) if chunk_size is None else int(chunk_size)
    num_chunks = -(-num_rounds // chunk)
    whole = num_chunks * chunk == num_rounds

    def inner(carry, c):
        def one(carry, offset):
            t = c * chunk + offset if start == 0 else start + c * chunk + offset
            new, out = round_fn(carry, t)
            if whole:
                return new, out
            return jax.tree.map(lambda n, o: jnp.where(t < start + num_rounds, n, o),
                                new, carry), out

        return jax.lax.scan(one, carry, jnp.arange(chunk, dtype=jnp.int32))

    if remat:
        inner = jax.checkpoint(inner, prevent_cse=False)
    carry, outs = jax.lax.scan(inner, carry, jnp.arange(num_chunks, dtype=jnp.int32))
    outs = jax.tree.map(lambda x: x.reshape((num_chunks * chunk,) + x.shape[2:])[:num_rounds],
                        outs)
    return carry, outs

