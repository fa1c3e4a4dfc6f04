"""Replay of logged bandit data: the Open Bandit Dataset (OBD) as a K = 5 replay environment.

Bae & Lee 2025, App. J.1: OBD's uniform-random logging policy chose an item for a
user at one of 3 display positions and logged whether it was clicked. Each logged event becomes a
round with a **candidate set** of ``num_candidates = 5`` items: the logged item plus the 4 other
items with the highest user-item affinity scores (``user-item_affinity_<item>``; ties broken by
a fixed random order drawn from ``candidate_seed``), shown in a random order so the logged item's
slot carries no information (spec A24).

**Replay** (Li et al. 2011): the round counts only if the agent picks the logged item
(``Feedback.accepted``); then its reward is the logged click. Rejected rounds never happened for
the agent (the runner keeps its state), so ``horizon`` counts *logged events* and about
``horizon / 5`` are accepted; the paper's T = 2,000 accepted events is about ``horizon=10_000``.
There is no counterfactual reward, hence no regret (always 0): results report the cumulative
accepted count and clicks, and the click-through rate ``CTR = clicks / accepted``
(:meth:`jaxbandits.Result.final` shows it for replay results). Because the logging policy is
uniform, a uniformly random agent is accepted with probability exactly ``1 / 5`` and its CTR
estimates the logged click rate.

**Arm features** (``dim = 2 * user_dim + item_dim + 4 = 44``), per candidate item:
``[user embedding (16), item embedding (8), one-hot position (3), affinity (1),
user embedding * affinity (16)]``; the user features (4 categorical columns) and the item
features of ``item_context.csv`` are one-hot encoded and compressed by a truncated SVD (uncentred,
``U S`` of the top components, signs fixed), the affinity is ``log(1 + a)`` min-max scaled to
``[-1, 1]`` over the table.

**Runs**: every run replays the events in its own random order (``shuffle_events``; events of a
uniform-random log are exchangeable) with its own arm shuffles. Past the last event the order
wraps around.

**Files**: ``<obd>/random/<campaign>/<campaign>.csv`` and ``item_context.csv`` beside it, with
``<obd>`` found as ``path=`` (the ``obd`` folder, a campaign folder or its csv), else as the
``obd`` subfolder (or the folder itself) of each data folder of
:func:`~jaxbandits.data.search_dirs` (``$JAXBANDITS_DATA``, the per-user data folder, the
download cache), and last the small sample bundled with the ``obp`` package if it is
installed. ``campaign="men+women"`` (the default) merges the ``men`` and ``women`` files of
the 10,000-event samples (34 + 46 = 80 items, as OBD's ``all`` campaign); ``campaign="all"``
reads ``random/all/all.csv`` of the full data set
(``https://research.zozo.com/data_release/open_bandit_dataset.zip``) or of ``obp``'s sample,
which is what the paper used.

Example::

    env = jb.make_env("obd-replay")
    result = jb.simulate(env, jb.make_agent("lin-ts"), key, horizon=10_000, num_runs=5)
    print(result.final())          # (mean CTR, 95% half-width)
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import os
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxbandits.core import (
    Assumptions,
    Context,
    Feedback,
    Spec,
    check_choice,
    check_positive,
    check_seed,
    check_types,
    float_dtype,
)
from jaxbandits.data import DataNotFoundError, search_dirs
from jaxbandits.data.locate import DATA_ENV_VAR, where_looked
from jaxbandits.data.readers import read_obd_campaign
from jaxbandits.envs.datasets import DataBackedEnv
from jaxbandits.registry import register_env

__all__ = ["LoggedData", "OBDReplayEnv", "OBDReplayState", "ReplayContext", "load_obd"]

CAMPAIGNS: tuple[str, ...] = ("men+women", "all", "men", "women")
NUM_POSITIONS = 3
OBD_URL = "https://research.zozo.com/data_release/open_bandit_dataset.zip"


# ------------------------------------------------------------------------------------------------
# The logged data an environment holds.


@dataclasses.dataclass(frozen=True)
class LoggedMeta:
    """Static description of :class:`LoggedData` (hashable: part of the pytree structure)."""

    name: str
    num_events: int
    num_items: int
    num_candidates: int
    click_rate: float
    digest: str
    load_key: tuple | None = None


@jax.tree_util.register_pytree_node_class
class LoggedData:
    """Logged events prepared for replay, as device arrays.

    Attributes:
      user: ``(N, u)`` user embeddings.
      items: ``(I, i)`` item embeddings.
      position: ``(N,)`` int32 display position in ``[0, 3)``.
      candidates: ``(N, K)`` int32 candidate items, the logged item first.
      affinity: ``(N, K)`` the candidates' scaled affinity in ``[-1, 1]``.
      click: ``(N,)`` the logged click (0 or 1).
      meta: the static :class:`LoggedMeta`.
    """

    FIELDS = ("user", "items", "position", "candidates", "affinity", "click")

    def __init__(self, user, items, position, candidates, affinity, click, meta: LoggedMeta):
        self.user, self.items, self.position = user, items, position
        self.candidates, self.affinity, self.click = candidates, affinity, click
        self.meta = meta

    def tree_flatten(self):
        return tuple(getattr(self, f) for f in self.FIELDS), self.meta

    @classmethod
    def tree_unflatten(cls, meta: LoggedMeta, leaves):
        return cls(*leaves, meta)

    def __repr__(self) -> str:
        m = self.meta
        return (f"LoggedData({m.name!r}, events={m.num_events}, items={m.num_items}, "
                f"candidates={m.num_candidates}, click_rate={m.click_rate:.4f}, sha1={m.digest})")


# ------------------------------------------------------------------------------------------------
# The environment.


@struct.dataclass
class ReplayContext(Context):
    """A replay round: ``arms`` ``(K, d)`` of the shown candidates and the logged ``event``.

    Attributes:
      event: ``()`` int32, the index of the logged event in the environment's data (the
        environment finds the logged arm from it in ``feedback``; agents use ``arms``).
    """

    event: jax.Array | None = None


class OBDReplayState(struct.PyTreeNode):
    """One replay run.

    Attributes:
      order: ``(N,)`` int32 the order in which the run replays the events.
      shuffle_key: the key of the per-event arm shuffles.
    """

    order: jax.Array
    shuffle_key: jax.Array


@register_env
class OBDReplayEnv(DataBackedEnv):
    """Open Bandit Dataset replay with K = 5 candidates (Bae & Lee 2025, App. J.1).

    Round t replays logged event ``e = order[t mod N]``: arms are the features of the logged
    item and the 4 highest-affinity alternatives, in a per-run random order; the action is
    accepted iff it is the logged item, and then the reward is the logged click. ``regret`` is 0
    (no counterfactuals); the result reports accepted rounds, clicks and CTR. See the module
    docstring for the features and files.

    Attributes:
      campaign: ``"men+women"`` (the two samples merged), ``"all"``, ``"men"`` or
        ``"women"`` (static).
      path: the ``obd`` folder, a campaign folder or a campaign csv (static).
      num_candidates: K (static, default 5).
      user_dim / item_dim: SVD dimensions of the user and item features (static, 16 and 8).
      shuffle_events: each run replays the events in its own random order; else in log order
        (static).
      candidate_seed: seed of the tie-breaking among equal affinities (static).
      data: the :class:`LoggedData` (loaded from the fields above when not given).
    """

    name = "obd-replay"
    description = "Open Bandit Dataset replay, K = 5 candidates (reports accepted rounds and CTR)"
    paper = "Bae & Lee 2025, App. J.1 (the data of Saito et al. 2020)"
    agent_families = ("baseline", "linear", "glm", "neural", "neural-logistic")

    def assumptions(self) -> Assumptions:
        """Click rewards in {0, 1}: noise scale 1/2; no linear parameter."""
        return Assumptions(noise_std=0.5)

    campaign: str = struct.field(pytree_node=False, default="men+women")
    path: str | os.PathLike | None = struct.field(pytree_node=False, default=None)
    num_candidates: int = struct.field(pytree_node=False, default=5)
    user_dim: int = struct.field(pytree_node=False, default=16)
    item_dim: int = struct.field(pytree_node=False, default=8)
    shuffle_events: bool = struct.field(pytree_node=False, default=True)
    candidate_seed: int = struct.field(pytree_node=False, default=0)
    data: LoggedData | None = None

    def _load_key(self) -> tuple:
        path = None if self.path is None else str(self.path)
        return (self.campaign, path, self.num_candidates, self.user_dim, self.item_dim,
                self.candidate_seed)

    def _load(self) -> LoggedData:
        return load_obd(self.campaign, self.path, num_candidates=self.num_candidates,
                        user_dim=self.user_dim, item_dim=self.item_dim,
                        candidate_seed=self.candidate_seed)

    def _check_options(self) -> None:
        check_types(self)  # before loading anything
        check_choice(self, "campaign", CAMPAIGNS)
        check_seed(self, "candidate_seed")
        for field in ("num_candidates", "user_dim", "item_dim"):
            check_positive(self, field, integer=True)
        if self.num_candidates < 2:
            raise ValueError(f"{self.name}: num_candidates must be at least 2, got "
                             f"{self.num_candidates}")

    def validate(self) -> None:
        super().validate()
        self._check_options()
        if not isinstance(self.data, LoggedData):
            raise ValueError(f"{self.name}: data must be LoggedData, got {type(self.data)}")

    @property
    def dim(self) -> int:
        """d = 2 * user_dim + item_dim + 3 positions + 1 affinity."""
        return 2 * self.user_dim + self.item_dim + NUM_POSITIONS + 1

    def spec(self) -> Spec:
        return Spec(dim=self.dim, num_arms=self.num_candidates, action_kind="index", replay=True)

    def init(self, key: jax.Array) -> OBDReplayState:
        key_order, key_shuffle = jax.random.split(key)
        n = self.data.meta.num_events
        if self.shuffle_events:
            order = jax.random.permutation(key_order, n)
        else:
            order = jnp.arange(n)
        return OBDReplayState(order=order.astype(jnp.int32), shuffle_key=key_shuffle)

    def observe(self, key: jax.Array, env_state: OBDReplayState, t: jax.Array) -> ReplayContext:
        event = env_state.order[t % self.data.meta.num_events]
        slots = self._slots(env_state, event)
        return ReplayContext(arms=self.candidate_features(event, slots), event=event)

    def feedback(
        self, key: jax.Array, env_state: OBDReplayState, context: ReplayContext,
        action: jax.Array
    ) -> Feedback:
        dtype = float_dtype()
        accepted = action == self.logged_arm(env_state, context.event)
        reward = jnp.where(accepted, self.data.click[context.event].astype(dtype), 0.0)
        return Feedback(reward=reward, regret=jnp.zeros((), dtype), accepted=accepted)

    def logged_arm(self, env_state: OBDReplayState, event: jax.Array) -> jax.Array:
        """``()`` the arm index at which the logged item of ``event`` is shown in this run."""
        return jnp.argmin(self._slots(env_state, event))

    def _slots(self, env_state: OBDReplayState, event: jax.Array) -> jax.Array:
        """``(K,)`` which candidate (0 = the logged item) each arm shows for ``event``."""
        key = jax.random.fold_in(env_state.shuffle_key, event)
        return jax.random.permutation(key, self.num_candidates)

    def candidate_features(self, event: jax.Array, slots: jax.Array) -> jax.Array:
        """``(K, d)`` features of the candidates of ``event`` in the order ``slots``."""
        data, dtype = self.data, float_dtype()
        k = self.num_candidates
        user = jnp.broadcast_to(data.user[event].astype(dtype), (k, self.user_dim))
        items = data.items[data.candidates[event, slots]].astype(dtype)
        position = jax.nn.one_hot(data.position[event], NUM_POSITIONS, dtype=dtype)
        affinity = data.affinity[event, slots].astype(dtype)[:, None]
        return jnp.concatenate(
            [user, items, jnp.broadcast_to(position, (k, NUM_POSITIONS)), affinity,
             user * affinity], axis=1)


# ------------------------------------------------------------------------------------------------
# Loading.


def load_obd(
    campaign: str = "men+women",
    path: str | os.PathLike | None = None,
    *,
    num_candidates: int = 5,
    user_dim: int = 16,
    item_dim: int = 8,
    candidate_seed: int = 0,
) -> LoggedData:
    """Reads OBD's uniform-random log of ``campaign`` and prepares it for replay.

    Args:
      campaign: ``"men+women"``, ``"all"``, ``"men"`` or ``"women"``.
      path: the ``obd`` folder (holding ``random/<campaign>/``), a campaign folder or a
        campaign csv; default: the search order of the module docstring.
      num_candidates: K, the logged item plus ``K - 1`` highest-affinity alternatives.
      user_dim / item_dim: truncated-SVD dimensions.
      candidate_seed: seed of the tie-breaking among equal affinities.

    Raises:
      DataNotFoundError: no file found (the message lists where it looked).
    """
    if campaign not in CAMPAIGNS:
        raise ValueError(f"campaign must be one of {CAMPAIGNS}, got {campaign!r}")
    parts = ("men", "women") if campaign == "men+women" else (campaign,)
    files = tuple(_find_campaign(c, path) for c in parts)
    stamp = tuple((str(f), f.stat().st_mtime_ns) for f in files)
    logged = _load_cached(stamp, campaign, num_candidates, user_dim, item_dim, candidate_seed)
    key = (campaign, None if path is None else str(path), num_candidates, user_dim, item_dim,
           candidate_seed)
    leaves, meta = logged.tree_flatten()
    return LoggedData(*leaves, dataclasses.replace(meta, load_key=key))


def _search_roots(path) -> list[Path]:
    if path is not None:
        return [Path(path).expanduser()]
    roots = [root for folder in search_dirs() for root in (folder / "obd", folder)]
    spec = importlib.util.find_spec("obp")
    if spec is not None and spec.origin:
        roots.append(Path(spec.origin).parent / "dataset" / "obd")
    return roots


def _find_campaign(campaign: str, path) -> Path:
    name = f"{campaign}.csv"
    roots = _search_roots(path)
    for root in roots:
        if root.is_file() and root.name == name:
            return root
        for folder in (root / "random" / campaign, root / campaign, root):
            if (folder / name).is_file() and (folder / "item_context.csv").is_file():
                return folder / name
    raise DataNotFoundError(
        f"obd-replay: {name} (with item_context.csv beside it) not found under "
        f"{where_looked(path, roots)}, as "
        f"random/{campaign}/{name}. Put Open Bandit Dataset files there (the 10,000-event "
        f"samples ship with `pip install obp`; the full data set is {OBD_URL}), pass "
        f"path=<obd folder>, or set {DATA_ENV_VAR}=<folder holding obd/>."
        + (" The 10,000-event samples hold the 'men' and 'women' campaigns: use "
           "campaign='men+women'." if campaign == "all" else ""))


@functools.lru_cache(maxsize=4)
def _load_cached(stamp, campaign, num_candidates, user_dim, item_dim, seed) -> LoggedData:
    events, item_tables = [], []
    offset = 0
    for file, _ in stamp:
        log, items = read_obd_campaign(Path(file), NUM_POSITIONS)
        log["item"] = log["item"] + offset
        log["affinity_items"] = log["affinity_items"] + offset
        events.append(log)
        item_tables.append(items)
        offset += items["num_items"]
    num_items = offset
    rng = np.random.default_rng(seed)
    candidates, affinity = [], []
    for log in events:
        cand, aff = _candidates(log, num_candidates, rng)
        candidates.append(cand)
        affinity.append(aff)
    candidates = np.concatenate(candidates)
    affinity = _scale_affinity(np.concatenate(affinity))
    user_cells = [row for log in events for row in log["user"]]
    user = _svd_embed(_one_hot_columns(user_cells), user_dim)
    item_cells = [row for items in item_tables for row in items["categorical"]]
    item_numeric = np.concatenate([items["numeric"] for items in item_tables])
    item_matrix = np.concatenate([_one_hot_columns(item_cells), item_numeric], axis=1)
    item_emb = _svd_embed(item_matrix, item_dim)
    position = np.concatenate([log["position"] for log in events]).astype(np.int32)
    click = np.concatenate([log["click"] for log in events]).astype(np.float32)
    arrays = [user.astype(np.float32), item_emb.astype(np.float32), position,
              candidates.astype(np.int32), affinity.astype(np.float32), click]
    digest = hashlib.sha1(b"".join(a.tobytes() for a in arrays)).hexdigest()[:12]
    meta = LoggedMeta(name=f"obd-random-{campaign}", num_events=int(len(click)),
                      num_items=num_items, num_candidates=num_candidates,
                      click_rate=float(click.mean()), digest=digest)
    return LoggedData(*[jnp.asarray(a) for a in arrays], meta)


def _candidates(log: dict[str, Any], k: int, rng: np.random.Generator):
    """``(N, k)`` candidate items (logged first, then the top ``k - 1`` other items by affinity,
    ties in a random order) and their raw affinities."""
    affinity = log["affinity"]
    n, num_items = affinity.shape
    if num_items < k:
        raise ValueError(f"a campaign with {num_items} items cannot offer {k} candidates")
    logged = log["item"] - log["affinity_items"][0]
    tiebreak = rng.random((n, num_items))
    score = np.where(np.arange(num_items)[None] == logged[:, None], -np.inf, affinity)
    ranked = np.lexsort((tiebreak, -score), axis=-1)[:, : k - 1]  # by score desc, then tiebreak
    local = np.concatenate([logged[:, None], ranked], axis=1)
    raw = np.take_along_axis(affinity, local, axis=1)
    return local + log["affinity_items"][0], raw


def _scale_affinity(raw: np.ndarray) -> np.ndarray:
    """``log(1 + a)`` min-max scaled to ``[-1, 1]`` over the whole table."""
    logged = np.log1p(np.maximum(raw, 0.0))
    low, high = logged.min(), logged.max()
    if high <= low:
        return np.zeros_like(logged)
    return 2.0 * (logged - low) / (high - low) - 1.0


def _one_hot_columns(cells: list[list[str]]) -> np.ndarray:
    """One-hot encoding of categorical columns (categories sorted), concatenated."""
    if not cells or not cells[0]:
        return np.zeros((len(cells), 0))
    blocks = []
    for column in zip(*cells, strict=True):
        _, codes = np.unique(np.asarray(column), return_inverse=True)
        blocks.append(np.eye(int(codes.max()) + 1)[codes])
    return np.concatenate(blocks, axis=1)


def _svd_embed(matrix: np.ndarray, dim: int) -> np.ndarray:
    """Truncated SVD ``U_k S_k = X V_k`` (uncentred, as scikit-learn's ``TruncatedSVD``), from
    the eigenvectors of the small Gram matrix ``X^T X``; each component's sign is fixed so its
    largest loading is positive; zero-padded to ``dim``."""
    eigenvalues, vectors = np.linalg.eigh(matrix.T @ matrix)
    k = min(dim, int(np.sum(eigenvalues > 1e-9 * max(eigenvalues.max(initial=0.0), 1.0))))
    top = vectors[:, np.argsort(eigenvalues)[::-1][:k]]
    signs = np.sign(top[np.argmax(np.abs(top), axis=0), np.arange(k)])
    embedding = matrix @ (top * np.where(signs == 0, 1.0, signs))
    return np.pad(embedding, ((0, 0), (0, dim - k)))
