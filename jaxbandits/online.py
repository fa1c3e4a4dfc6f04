"""Serving an agent on live traffic: a small stateful object around any registered agent.

:class:`OnlinePolicy` keeps one agent's state, its own key streams and two counters, and offers::

    actions = policy.act(contexts)                      # a batch of B requests
    actions, probs = policy.act(contexts, probs=True)   # ... with P(served action) for logging
    policy.update(contexts, actions, rewards)           # B observed rewards, in order
    policy.warm_start(logged)                           # logged (contexts, actions, rewards)
    policy.save(path); OnlinePolicy.load(path)          # crash-safe, fingerprinted
    policy.compile(contexts)                            # compile a batch size before traffic

Semantics (what a batch means):

- **act** serves B independent requests from the current state: request ``i`` uses the key
  ``fold_in(act_stream, n + i)``, where ``n`` counts the requests served before, and no reward
  of the batch is seen by another of its requests. An agent whose ``act`` leaves its state
  unchanged (found once, from the traced program: every state leaf is passed through) serves
  the batch with ``vmap``; an agent whose ``act`` moves bookkeeping (a warm-up round robin, the
  doubling trick's inner state) serves it with a ``lax.scan`` in request order, and the state
  after the batch is the one after its last request, exactly as B rounds of the runner would
  leave it before their updates. A large batch is vectorised in chunks (``act_chunk``), so
  its working memory stays bounded: see :class:`OnlinePolicy`.
- **update** applies B observed rewards in order (a ``lax.scan`` of the agent's ``update``),
  item ``j`` with the key ``fold_in(update_stream, u + j)``, ``u`` counting the updates before.
  The feedback carries a neutral ``regret`` of 0: production has none and no agent reads it.
- The key streams are those of run 0 of ``jb.simulate(env, agent, key=seed)``, so alternating
  ``act`` and ``update`` with batches of 1 on a simulated environment plays the runner's run 0
  (a test checks it).

Each program is jitted once per batch size (and reused by every policy of the same agent
class and settings); :meth:`OnlinePolicy.compile` compiles a batch size ahead of traffic. Bad
input (a context of the wrong shape, an action outside the action set, a non-finite reward)
raises ``ValueError`` before anything runs, and leaves the state and counters unchanged.

Thread safety: ``act``, ``update``, ``warm_start`` and ``save`` may be called from several
threads. Each holds one lock from reading the state to swapping in the new one, so calls are
serialised and never lose an update; for throughput batch requests into one ``act`` call
rather than calling it from many threads.
"""

from __future__ import annotations

import collections
import functools
import os
import threading
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxbandits.core import Agent, Context, Env, Feedback, LogProb, Spec, float_dtype

__all__ = ["OnlinePolicy", "trace_counts"]

PyTree = Any
#: Monte Carlo draws per request of :meth:`OnlinePolicy.act`'s probabilities, for agents
#: without ``log_prob`` (standard error at most ``0.5 / sqrt(draws)``, 0.016 at 1,000).
DEFAULT_PROB_DRAWS = 1000
#: The working memory of one vectorised step of :meth:`OnlinePolicy.act` by default: a batch
#: whose requests need more is served in chunks of ``max(1, budget // bytes per request)``.
#: On a CPU a cache-sized step is fastest (measured on 2 cores, neural-ucb, d = 20, K = 50,
#: B = 10,000: one vmap 2.0k requests/s with 3.3 GB of temporaries, chunks of 16 18.6k/s with
#: 5 MB; lin-ts's 1 kB per request stays one vmap, 1.9M/s); an accelerator wants wide steps.
ACT_CHUNK_BYTES = {"cpu": 16 * 2**20, "default": 2**30}
_TRACES: collections.Counter[str] = collections.Counter()


def trace_counts() -> dict[str, int]:
    """How many times the online programs were traced (compiled), by program name."""
    return dict(_TRACES)


class OnlinePolicy:
    """A registered agent serving requests: batched ``act``, ``update`` without regret.

    Args:
      agent: an :class:`~jaxbandits.Agent` or a registered name (``"lin-ts"``).
      spec: what requests look like: a :class:`~jaxbandits.Spec` or an environment (its spec).
      seed: an int seed or a JAX key; the key streams are those of run 0 of
        ``jb.simulate(env, agent, key=seed)``.
      prob_draws: Monte Carlo draws per request for ``act(..., probs=True)`` of an agent
        without ``log_prob`` (default 1,000).
      act_chunk: requests per vectorised step of :meth:`act` (a ``lax.map`` over chunks of a
        ``vmap``): a positive int, or None (default) for the largest chunk whose intermediate
        arrays (counted from the traced program of one request) fit in
        :data:`ACT_CHUNK_BYTES` for the backend, the whole batch when it fits. Never changes
        which key a request uses; requests are independent, so only the speed and the memory
        change (a test checks equal actions).

    Example::

        policy = jb.OnlinePolicy("lin-ts", jb.Spec(dim=8, num_arms=5), seed=0)
        actions = policy.act(contexts)                 # contexts (B, 5, 8) -> (B,) int32
        policy.update(contexts, actions, rewards)      # rewards (B,)
    """

    def __init__(self, agent: Agent | str, spec: Spec | Env, *, seed: int | jax.Array = 0,
                 prob_draws: int = DEFAULT_PROB_DRAWS, act_chunk: int | None = None):
        if isinstance(agent, str):
            from jaxbandits.registry import make_agent

            agent = make_agent(agent, env=spec) if isinstance(spec, Env) else make_agent(agent)
        if not isinstance(agent, Agent):
            raise ValueError(f"OnlinePolicy: agent must be a jaxbandits Agent or a registered "
                             f"name, got {agent!r}")
        if isinstance(spec, Env):
            spec = spec.spec()
        if not isinstance(spec, Spec):
            raise ValueError(f"OnlinePolicy: spec must be a jb.Spec or an environment, got "
                             f"{spec!r}")
        if spec.action_kind not in agent.action_kinds:
            raise ValueError(f"OnlinePolicy: agent {type(agent).__name__} plays "
                             f"{agent.action_kinds} actions, the spec asks for "
                             f"{spec.action_kind!r}")
        if not isinstance(prob_draws, int) or isinstance(prob_draws, bool) or prob_draws < 1:
            raise ValueError(f"OnlinePolicy: prob_draws must be a positive integer, got "
                             f"{prob_draws!r}")
        if act_chunk is not None and (not isinstance(act_chunk, int) or
                                      isinstance(act_chunk, bool) or act_chunk < 1):
            raise ValueError(f"OnlinePolicy: act_chunk must be a positive integer or None, got "
                             f"{act_chunk!r}")
        agent.validate()
        self.agent, self.spec, self.prob_draws = agent, spec, prob_draws
        self.act_chunk = act_chunk
        self.key = _as_key(seed)
        init_key, self._act_stream, self._update_stream, self._prob_stream = _streams(self.key)
        self._lock = threading.Lock()
        self._state = agent.init(init_key, spec)
        self._served = 0
        self._updates = 0
        self._sequential: bool | None = None
        self._request_bytes: dict[int, int] = {}  # by draws mode

    # -- read-only views

    @property
    def state(self) -> PyTree:
        """The agent's current state (a pytree; replaced, never mutated, by each call)."""
        return self._state

    @property
    def num_served(self) -> int:
        """Requests served so far (the position in the act key stream)."""
        return self._served

    @property
    def num_updates(self) -> int:
        """Rewards applied so far (the position in the update key stream)."""
        return self._updates

    def __repr__(self) -> str:
        return (f"OnlinePolicy({type(self.agent).__name__}, dim={self.spec.dim}, "
                f"num_arms={self.spec.num_arms}, served={self._served}, "
                f"updates={self._updates})")

    # -- serving

    def act(self, contexts: Any, *, probs: bool = False):
        """Actions for a batch of B requests, served from the current state.

        Args:
          contexts: ``(B, K, d)`` the arms of each request, or a :class:`~jaxbandits.Context`
            (subclass) whose every leaf has a leading axis of size B.
          probs: also return each served action's probability under the policy: exact for an
            agent with ``log_prob`` (:class:`~jaxbandits.core.LogProb`), else the frequency of
            the served action among ``prob_draws`` independent draws from the same state
            (Monte Carlo, standard error at most ``0.5 / sqrt(prob_draws)``).

        Returns:
          ``(B,)`` int32 arm indices (``(B, 2)`` pairs, ``(B, d)`` vectors), as a NumPy array;
          with ``probs``, also ``(B,)`` probabilities.
        """
        context = self._check_contexts(contexts, "act")
        with self._lock:
            actions, p, state = _act_program(*self._act_arguments(context, probs))
            actions = np.asarray(actions)
            self._state = state
            self._served += _batch_size(context)
        return (actions, np.asarray(p)) if probs else actions

    def update(self, contexts: Any, actions: Any, rewards: Any) -> None:
        """Applies B observed rewards, in order.

        Args:
          contexts: ``(B, K, d)`` (or a batched Context), the requests as served.
          actions: ``(B,)`` the arms played (``(B, 2)`` pairs, ``(B, d)`` vectors).
          rewards: ``(B,)`` the observed rewards (preference bits for dueling), finite.

        Raises:
          ValueError: a shape, an action outside the action set or a non-finite reward; the
            state is unchanged.
        """
        context = self._check_contexts(contexts, "update")
        size = _batch_size(context)
        actions = self._check_actions(actions, size)
        rewards = _check_rewards(rewards, size)
        with self._lock:
            state, finite = _update_program(self.agent, self._state, self._update_stream,
                                            _counter(self._updates), context, actions, rewards)
            bad = _first_nonfinite(state, np.asarray(finite))
            if bad is not None:
                raise ValueError(f"OnlinePolicy.update: the agent's state became non-finite "
                                 f"({bad}); the update was discarded and the state is "
                                 "unchanged")
            self._state = state
            self._updates += size

    def warm_start(self, logged: Any = None, *, contexts: Any = None, actions: Any = None,
                   rewards: Any = None) -> None:
        """Learns from logged data before serving: ``update`` on the logged rounds in order.

        Pass either ``logged``, an object with ``contexts`` (or ``arms`` or ``context``),
        ``actions`` (or ``action``) and ``rewards`` (or ``reward``), as attributes or mapping
        keys (e.g. ``jb.data.load_logs``'s log), or the three arrays by keyword. Contexts are
        ``(n, K, d)`` arm features, or ``(n, d')`` one vector per round when the spec's
        ``d = K d'``: then arm ``k`` sees the disjoint encoding ``e_k (x) x``
        (``jb.envs.block_features``, one linear model per arm). Rounds count as updates (the
        update key stream advances).
        """
        if logged is not None:
            if any(x is not None for x in (contexts, actions, rewards)):
                raise ValueError("warm_start: pass logged data or contexts/actions/rewards, "
                                 "not both")
            contexts, actions, rewards = _logged_arrays(logged)
        if contexts is None or actions is None or rewards is None:
            raise ValueError("warm_start: contexts, actions and rewards are all needed")
        if not isinstance(contexts, Context):
            x = np.asarray(contexts)
            k = self.spec.num_arms
            if x.ndim == 2 and k and self.spec.inputs == "arms" and x.shape[1] * k == \
                    self.spec.dim:
                from jaxbandits.envs.datasets import block_features

                contexts = jax.vmap(lambda row: block_features(row, k))(
                    jnp.asarray(x, float_dtype()))
        self.update(contexts, actions, rewards)

    def compile(self, contexts: Any, *, probs: bool = False) -> None:
        """Compiles :meth:`act` (with ``probs`` or not) and :meth:`update` for batches shaped
        like ``contexts`` (their values are not used), so that the first requests of that size
        pay no compilation. Serves nothing: the state and counters are unchanged."""
        context = self._check_contexts(contexts, "compile")
        size = _batch_size(context)
        kind = self.spec.action_kind
        actions = (jnp.zeros((size, self.spec.dim), float_dtype()) if kind == "vector" else
                   jnp.zeros((size,) if kind == "index" else (size, 2), jnp.int32))
        rewards = jnp.zeros((size,), float_dtype())
        with self._lock:
            _act_program.lower(*self._act_arguments(context, probs)).compile()
            _update_program.lower(self.agent, self._state, self._update_stream,
                                  _counter(self._updates), context, actions,
                                  rewards).compile()

    def _act_arguments(self, context: Context, probs: bool) -> tuple:
        """The arguments of :func:`_act_program` for ``context`` (under the lock): the first
        call finds whether ``act`` moves the state and sizes the chunks."""
        if self._sequential is None:
            self._sequential = _act_changes_state(self.agent, self._state, context)
        exact = isinstance(self.agent, LogProb)
        draws = 0 if not probs else (-1 if exact else self.prob_draws)
        chunk = 0
        if not self._sequential:
            if self.act_chunk is not None:
                chunk = self.act_chunk
            else:
                if draws not in self._request_bytes:
                    self._request_bytes[draws] = _request_bytes(
                        self.agent, self._state, self._prob_stream, context, draws)
                budget = ACT_CHUNK_BYTES.get(jax.default_backend(), ACT_CHUNK_BYTES["default"])
                chunk = _auto_chunk(_batch_size(context), self._request_bytes[draws], budget)
            chunk = 0 if chunk >= _batch_size(context) else chunk
        return (self.agent, self._state, self._act_stream, self._prob_stream,
                _counter(self._served), context, self._sequential, draws, chunk)

    # -- saving

    def save(self, path: str | os.PathLike) -> None:
        """Saves the agent, its state, the spec, the key and both counters to one file,
        atomically (:func:`jaxbandits.save_agent`); :meth:`load` continues bit for bit."""
        from jaxbandits.saved import save_agent

        with self._lock:
            extra = {"online": {"served": self._served, "updates": self._updates,
                                "prob_draws": self.prob_draws},
                     "key": np.asarray(jax.random.key_data(self.key)).tolist(),
                     "key_impl": _impl_name(self.key)}
            save_agent(path, self.agent, self._state, self.spec, extra=extra)

    @classmethod
    def load(cls, path: str | os.PathLike, agent: Agent | None = None,
             **load_options: Any) -> OnlinePolicy:
        """The policy saved at ``path`` (:meth:`save`), or the agent of a simulation saved with
        :func:`jaxbandits.save_agent` served from its state with a fresh seed-0 key stream.
        ``agent`` and ``load_options`` are checked as by :func:`jaxbandits.load_agent`."""
        from jaxbandits.saved import load_agent

        saved = load_agent(path, agent=agent, **load_options)
        online = saved.extra.get("online")
        if online is None:
            policy = cls(saved.agent, saved.spec, seed=0)
        else:
            key = jax.random.wrap_key_data(np.asarray(saved.extra["key"], np.uint32),
                                           impl=saved.extra["key_impl"])
            policy = cls(saved.agent, saved.spec, seed=key, prob_draws=online["prob_draws"])
            policy._served, policy._updates = online["served"], online["updates"]
        policy._state = saved.state
        return policy

    # -- input checks

    def _check_contexts(self, contexts: Any, where: str) -> Context:
        spec = self.spec
        if not isinstance(contexts, Context):
            arr = np.asarray(contexts)
            if spec.inputs != "tokens" and arr.dtype.kind not in "fiu":
                raise ValueError(f"OnlinePolicy.{where}: contexts must be numbers, got dtype "
                                 f"{arr.dtype}")
            dtype = arr.dtype if spec.inputs == "tokens" else float_dtype()
            contexts = Context(arms=jnp.asarray(arr, dtype))
        arms = contexts.arms
        leaves = jax.tree.leaves(contexts)
        if not leaves:
            raise ValueError(f"OnlinePolicy.{where}: contexts hold no arrays")
        size = np.shape(leaves[0])[0] if np.ndim(leaves[0]) else None
        if size is None or size < 1 or any(np.ndim(x) == 0 or np.shape(x)[0] != size
                                           for x in leaves):
            raise ValueError(f"OnlinePolicy.{where}: every context array needs the same "
                             f"leading batch axis B >= 1, got shapes "
                             f"{[np.shape(x) for x in leaves]}")
        if arms is not None and spec.inputs == "arms":
            want = (spec.num_arms, spec.dim) if spec.num_arms else (None, spec.dim)
            shape = np.shape(arms)
            if len(shape) != 3 or shape[2] != spec.dim or (spec.num_arms and
                                                           shape[1] != spec.num_arms):
                raise ValueError(
                    f"OnlinePolicy.{where}: contexts must have shape (B, K, d) = (B, "
                    f"{want[0] if want[0] else 'K'}, {spec.dim}), got {shape} (one request: "
                    "contexts[None])")
        for x in leaves:
            a = np.asarray(x)
            if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
                raise ValueError(f"OnlinePolicy.{where}: contexts hold NaN or inf")
        return jax.tree.map(jnp.asarray, contexts)

    def _check_actions(self, actions: Any, size: int) -> jax.Array:
        spec, a = self.spec, np.asarray(actions)
        if spec.action_kind == "vector":
            if a.shape != (size, spec.dim) or a.dtype.kind not in "fiu" or \
                    not np.all(np.isfinite(a)):
                raise ValueError(f"OnlinePolicy.update: actions must be finite vectors of "
                                 f"shape ({size}, {spec.dim}), got {a.shape} {a.dtype}")
            return jnp.asarray(a, float_dtype())
        want = (size,) if spec.action_kind == "index" else (size, 2)
        if a.shape != want:
            raise ValueError(f"OnlinePolicy.update: actions must have shape {want}, got "
                             f"{a.shape}")
        if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
            a = a.astype(np.int64)
        if a.dtype.kind not in "iu":
            raise ValueError(f"OnlinePolicy.update: actions must be integer arm indices, got "
                             f"dtype {a.dtype}")
        outside = (a < 0) | (a >= spec.num_arms)
        if np.any(outside):
            first = int(np.argwhere(outside)[0][0])
            raise ValueError(f"OnlinePolicy.update: action {a[first].tolist()} (item {first}) "
                             f"is outside the action set [0, {spec.num_arms})")
        return jnp.asarray(a, jnp.int32)


# ------------------------------------------------------------------------------------------------
# The programs: module level, so every policy of one agent class and settings shares them.


@functools.partial(jax.jit, static_argnames=("sequential", "draws", "chunk"))
def _act_program(agent, state, act_stream, prob_stream, start, context, sequential: bool,
                 draws: int, chunk: int):
    """``(actions (B, ...), probs (B,) or None, state)``; ``draws``: 0 no probabilities, -1
    exact (``log_prob``), else Monte Carlo draws per request; ``chunk``: requests per
    vectorised step (0: the whole batch in one ``vmap``)."""
    _TRACES["act"] += 1
    size = _batch_size(context)
    index = start + jnp.arange(size, dtype=jnp.uint32)
    keys = jax.vmap(lambda i: jax.random.fold_in(act_stream, i))(index)
    serve = functools.partial(_serve, agent, draws, prob_stream)

    if sequential:
        def body(s, item):
            action, p, s = serve(s, *item)
            return s, (action, p)

        state, (actions, probs) = jax.lax.scan(body, state, (keys, context, index))
    elif chunk:
        actions, probs, _ = jax.lax.map(lambda item: serve(state, *item), (keys, context, index),
                                        batch_size=chunk)
    else:
        actions, probs, _ = jax.vmap(serve, in_axes=(None, 0, 0, 0))(state, keys, context,
                                                                    index)
    return actions, (probs if draws else None), state


def _serve(agent, draws: int, prob_stream, state, key, context, index):
    """One request: ``(action, probability (0 when not asked), state after act)``."""
    action, acted = agent.act(state, key, context)
    if draws == 0:
        return action, jnp.zeros((), float_dtype()), acted
    if draws < 0:
        return action, jnp.exp(agent.log_prob(state, key, context, action)), acted
    stream = jax.random.fold_in(prob_stream, index)
    others = jax.vmap(lambda j: agent.act(state, jax.random.fold_in(stream, j), context)[0])(
        jnp.arange(draws, dtype=jnp.uint32))
    same = jnp.all((others == action).reshape(draws, -1), axis=1)
    return action, jnp.mean(same.astype(float_dtype())), acted


@jax.jit
def _update_program(agent, state, update_stream, start, context, actions, rewards):
    """The state after the agent's ``update`` on each item, in order, and ``(L,)`` whether each
    of its L floating leaves is finite."""
    _TRACES["update"] += 1

    def body(s, item):
        i, ctx, action, reward = item
        feedback = Feedback(reward=reward, regret=jnp.zeros_like(reward))
        return agent.update(s, jax.random.fold_in(update_stream, i), ctx, action, feedback), None

    index = start + jnp.arange(rewards.shape[0], dtype=jnp.uint32)
    state = jax.lax.scan(body, state, (index, context, actions, rewards))[0]
    floats = [x for x in jax.tree.leaves(state) if jnp.issubdtype(x.dtype, jnp.inexact)]
    finite = jnp.stack([jnp.all(jnp.isfinite(x)) for x in floats]) if floats else \
        jnp.ones((0,), bool)
    return state, finite


# ------------------------------------------------------------------------------------------------
# Helpers.


def _streams(key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """``(agent_init, act, update, probabilities)``: the runner's keys of run 0 (the agent's
    initial draw and act/update streams, ``fold_in(fold_in(key, 0), i)``), and an extra stream
    for probability draws that no round uses."""
    run_key = jax.random.fold_in(key, 0)
    agent_init, act, update, probs = (jax.random.fold_in(run_key, i) for i in (1, 4, 5, 6))
    return agent_init, act, update, probs


def _act_changes_state(agent: Agent, state: PyTree, context: Context) -> bool:
    """Whether ``agent.act`` may change the state: False only when the traced program passes
    every state leaf through untouched (then a batch can be served with ``vmap``)."""
    one = jax.tree.map(lambda x: x[0], context)
    closed = jax.make_jaxpr(lambda s, k, c: agent.act(s, k, c)[1])(
        state, jax.random.key(0), one)
    num = len(jax.tree.leaves(state))
    ins, outs = closed.jaxpr.invars[:num], closed.jaxpr.outvars
    return len(outs) != num or any(o is not i for o, i in zip(outs, ins, strict=True))


def _request_bytes(agent: Agent, state: PyTree, prob_stream: jax.Array, context: Context,
                   draws: int) -> int:
    """Bytes of every intermediate array of one request's ``act`` (traced, not run; loops'
    bodies counted once): a bound on the working memory each request adds to a ``vmap``."""
    one = jax.tree.map(lambda x: x[0], context)
    closed = jax.make_jaxpr(functools.partial(_serve, agent, draws, prob_stream))(
        state, jax.random.key(0), one, jnp.zeros((), jnp.uint32))
    return _jaxpr_bytes(closed.jaxpr)


def _jaxpr_bytes(jaxpr) -> int:
    total = 0
    for eqn in jaxpr.eqns:
        for var in eqn.outvars:
            aval = var.aval
            total += int(np.prod(getattr(aval, "shape", ()))) * getattr(
                getattr(aval, "dtype", None), "itemsize", 8)
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(item, "jaxpr", item)
                if hasattr(inner, "eqns"):
                    total += _jaxpr_bytes(inner)
    return total


def _auto_chunk(size: int, request_bytes: int, budget: int) -> int:
    """Requests per vectorised step: the whole batch if its requests fit in ``budget`` bytes,
    else as many as fit (at least one)."""
    if size * request_bytes <= budget:
        return size
    return max(1, budget // max(request_bytes, 1))


def _batch_size(context: Context) -> int:
    return int(jax.tree.leaves(context)[0].shape[0])


def _check_rewards(rewards: Any, size: int) -> jax.Array:
    r = np.asarray(rewards)
    if r.shape != (size,) or r.dtype.kind not in "fiub":
        raise ValueError(f"OnlinePolicy.update: rewards must be numbers of shape ({size},), "
                         f"got {r.shape} {r.dtype}")
    bad = ~np.isfinite(r.astype(float))
    if np.any(bad):
        first = int(np.argmax(bad))
        raise ValueError(f"OnlinePolicy.update: reward {r[first]!r} (item {first}) is not "
                         "finite; nothing was updated")
    return jnp.asarray(r, float_dtype())


def _first_nonfinite(state: PyTree, finite: np.ndarray) -> str | None:
    """The path of the first floating leaf of ``state`` whose ``finite`` flag is False."""
    if finite.all():
        return None
    paths = [path for path, x in jax.tree_util.tree_flatten_with_path(state)[0]
             if jnp.issubdtype(x.dtype, jnp.inexact)]
    return f"state{jax.tree_util.keystr(paths[int(np.argmin(finite))])}"


def _counter(count: int) -> jax.Array:
    """A request or update counter as the uint32 folded into keys (the streams repeat after
    2**32 requests)."""
    return jnp.asarray(count % 2**32, jnp.uint32)


def _logged_arrays(logged: Any) -> tuple[Any, Any, Any]:
    def get(name: str) -> Any:
        if isinstance(logged, Mapping):
            return logged.get(name)
        return getattr(logged, name, None)

    def first(*names: str) -> Any:
        return next((v for v in map(get, names) if v is not None), None)

    contexts = first("contexts", "arms", "context")
    actions, rewards = first("actions", "action"), first("rewards", "reward")
    if contexts is None or actions is None or rewards is None:
        raise ValueError(f"warm_start: logged data needs contexts (or arms), actions and "
                         f"rewards, got {type(logged).__name__}")
    return contexts, actions, rewards


def _as_key(seed: Any) -> jax.Array:
    if isinstance(seed, (bool, np.bool_)):
        raise ValueError(f"OnlinePolicy: seed must be an int or a JAX key, got {seed!r}")
    if isinstance(seed, (int, np.integer)):
        return jax.random.key(int(seed))
    if isinstance(seed, jax.Array) and jnp.issubdtype(seed.dtype, jax.dtypes.prng_key) \
            and seed.shape == ():
        return seed
    if isinstance(seed, (jax.Array, np.ndarray)) and seed.dtype == np.uint32 \
            and seed.shape == (2,):
        return jax.random.wrap_key_data(jnp.asarray(seed))
    raise ValueError(f"OnlinePolicy: seed must be an int or a JAX key, got {seed!r}")


def _impl_name(key: jax.Array) -> str:
    return str(jax.random.key_impl(key))
