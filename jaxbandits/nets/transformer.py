"""A small GPT-2-style causal transformer: the text feature network of GPT-Ensemble++.

Li et al. 2024 (App. G.4) put the Ensemble++ heads on GPT-2: a post is tokenised,
right-padded (or truncated) to ``L`` tokens with the pad id ``50256`` (GPT-2's end-of-text), and
its feature is the **last-layer hidden state at the last non-pad token**. No pretrained weights
can be fetched offline, so :class:`TransformerEncoder` is the same architecture, randomly
initialised, at any size (tiny by default; :meth:`TransformerNetwork.gpt2_small` has GPT-2
small's shape)::

    h_0 = wte[tokens] + wpe[0:L]                              token + position embeddings
    h_l = h_{l-1} + attn(LN(h_{l-1}))                          causal multi-head self-attention
    h_l = h_l + W_2 gelu(W_1 LN(h_l) + b_1) + b_2              MLP, hidden 4 D
    phi = LN_f(h_n)[i],  i = (first pad - 1) mod L             the last non-pad position

Pre-LayerNorm blocks (epsilon 1e-5), GELU with the tanh approximation, biases everywhere and
GPT-2's initialisation: every weight ``N(0, 0.02^2)`` (the blocks' output projections
``N(0, (0.02 / sqrt(2 n))^2)`` for ``n`` blocks), biases 0, LayerNorm scales 1. No dropout.

The position rule is HuggingFace's ``GPT2ForSequenceClassification`` (the authors' code):
``i = (argmax(tokens == pad) - 1) mod L``, i.e. the token before the first pad, or ``L - 1``
when the row has no pad (an all-pad row, an empty text, also reads ``L - 1``). Attention is
causal, so the hidden state at ``i`` depends on tokens ``0..i`` only: padding after a post never
changes its feature, and no attention mask is needed. :func:`last_token_features` applies the
rule to any encoder's per-token states.

**The feature-network contract.** Any Flax module mapping an input to a feature vector
``(..., D)`` can carry the neural Ensemble++ heads; :class:`TransformerEncoder` maps token ids
``(..., L)`` to ``(..., D)``. :class:`TransformerNetwork` is its static, hashable handle: like
:class:`~jaxbandits.nets.Network` it has ``init`` / ``apply`` / ``graphdef`` / ``num_params``,
and it is also a backbone callable ``network(in_features, rngs=...)`` (the shape
:mod:`jaxbandits.nets.backbone` asks for), ``in_features`` being the row length ``L``.

Token ids may arrive as any integer dtype or as floats holding integers (a float32 replay
buffer stores GPT-2's ids, all below 2^24, exactly); they are cast to int32.

**Freezing the backbone** (the paper's "frozen" ablation) is the agent's business: it takes
gradients with respect to the head parameters only, or applies ``jax.lax.stop_gradient`` to the
feature; this module has no switch for it.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from flax import nnx, struct

from jaxbandits.core import float_dtype
from jaxbandits.nets.mlp import NetworkHandle

__all__ = [
    "GPT2_PAD_ID",
    "GPT2_VOCAB_SIZE",
    "TransformerEncoder",
    "TransformerNetwork",
    "last_token_features",
    "last_token_index",
]

#: GPT-2's vocabulary size (50,257 byte-level BPE tokens).
GPT2_VOCAB_SIZE = 50257
#: GPT-2's end-of-text token, the pad id of Li et al. 2024's GPT runs.
GPT2_PAD_ID = 50256

_INIT_STD = 0.02  # GPT-2's initializer_range
_LN_EPS = 1e-5


# ------------------------------------------------------------------------------------------------
# The last non-pad position.


def last_token_index(tokens: jax.Array, pad_id: int = GPT2_PAD_ID) -> jax.Array:
    """``(...)`` int32: the position of the last non-pad token of right-padded rows ``(..., L)``.

    ``(argmax(tokens == pad_id) - 1) mod L``: the position before the first pad, or ``L - 1``
    when a row has no pad (an all-pad row also gives ``L - 1``; HuggingFace's rule).
    """
    length = tokens.shape[-1]
    first_pad = jnp.argmax(tokens == pad_id, axis=-1).astype(jnp.int32)
    return (first_pad - 1) % length


def last_token_features(hidden: jax.Array, tokens: jax.Array,
                        pad_id: int = GPT2_PAD_ID) -> jax.Array:
    """The hidden state at each row's last non-pad token: ``(..., D)`` from per-token states
    ``hidden`` ``(..., L, D)`` and the rows ``tokens`` ``(..., L)`` they were computed from.

    Reusable with any encoder that returns per-token states (see :func:`last_token_index` for
    the position rule).

    Example::

        hidden = encoder.hidden_states(tokens)          # (N, L, D)
        phi = last_token_features(hidden, tokens)       # (N, D)
    """
    if hidden.ndim < 2 or hidden.shape[:-1] != tokens.shape:
        raise ValueError(f"last_token_features: hidden must be (..., L, D) for tokens (..., L), "
                         f"got hidden {hidden.shape} and tokens {tokens.shape}")
    index = last_token_index(tokens, pad_id)
    return jnp.take_along_axis(hidden, index[..., None, None], axis=-2)[..., 0, :]


# ------------------------------------------------------------------------------------------------
# The module.


class TransformerEncoder(nnx.Module):
    """GPT-2-style causal transformer: token ids ``(..., L)`` to the feature ``(..., D)`` at the
    last non-pad token (see the module docstring for the architecture).

    Args:
      vocab_size: V, the number of token ids (50,257 for GPT-2's tokenizer).
      max_length: the number of learned positions; rows may be shorter (``L <= max_length``).
      width: D, the hidden size (a multiple of ``num_heads``).
      num_heads: attention heads (each of size ``D / num_heads``).
      num_layers: transformer blocks.
      pad_id: the id that right-pads rows (GPT-2's end-of-text, 50256).
      rngs: the NNX random streams (``rngs.params`` draws the weights).

    Example::

        enc = TransformerEncoder(50257, 32, 32, 2, 2, rngs=nnx.Rngs(0))
        enc(jnp.array([[15496, 995, 50256, 50256]]))   # (1, 32): the state at "world"
    """

    def __init__(
        self,
        vocab_size: int = GPT2_VOCAB_SIZE,
        max_length: int = 512,
        width: int = 32,
        num_heads: int = 2,
        num_layers: int = 2,
        *,
        pad_id: int = GPT2_PAD_ID,
        rngs: nnx.Rngs,
    ):
        _check_sizes(vocab_size, max_length, width, num_heads, num_layers, pad_id)
        dtype = float_dtype()
        normal = nnx.initializers.normal(_INIT_STD)
        self.pad_id = pad_id
        self.max_length = max_length
        self.token_embed = nnx.Embed(vocab_size, width, embedding_init=normal,
                                     param_dtype=dtype, rngs=rngs)
        self.position_embed = nnx.Embed(max_length, width, embedding_init=normal,
                                        param_dtype=dtype, rngs=rngs)
        self.blocks = nnx.List([_Block(width, num_heads, num_layers, rngs=rngs)
                                for _ in range(num_layers)])
        self.final_norm = nnx.LayerNorm(width, epsilon=_LN_EPS, param_dtype=dtype, rngs=rngs)

    def hidden_states(self, tokens: jax.Array) -> jax.Array:
        """The last layer's states at every position, ``(..., L, D)``, after the final
        LayerNorm, for token ids ``(..., L)``."""
        length = tokens.shape[-1]
        if length > self.max_length:
            raise ValueError(f"TransformerEncoder: tokens have length {length} > max_length "
                             f"{self.max_length}")
        ids = tokens.astype(jnp.int32)
        h = self.token_embed(ids) + self.position_embed(jnp.arange(length))
        mask = jnp.tril(jnp.ones((length, length), bool))
        for block in self.blocks:
            h = block(h, mask)
        return self.final_norm(h)

    def __call__(self, tokens: jax.Array) -> jax.Array:
        """The feature ``(..., D)`` at each row's last non-pad token, for ids ``(..., L)``."""
        ids = tokens.astype(jnp.int32)
        return last_token_features(self.hidden_states(ids), ids, self.pad_id)


class _Block(nnx.Module):
    """One pre-LayerNorm block: ``h + attn(LN h)``, then ``h + mlp(LN h)``."""

    def __init__(self, width: int, num_heads: int, num_layers: int, *, rngs: nnx.Rngs):
        dtype = float_dtype()
        normal = nnx.initializers.normal(_INIT_STD)
        residual = nnx.initializers.normal(_INIT_STD / math.sqrt(2 * num_layers))

        def linear(n_in, n_out, init):
            return nnx.Linear(n_in, n_out, kernel_init=init, param_dtype=dtype, rngs=rngs)

        self.num_heads = num_heads
        self.attn_norm = nnx.LayerNorm(width, epsilon=_LN_EPS, param_dtype=dtype, rngs=rngs)
        self.qkv = linear(width, 3 * width, normal)
        self.attn_out = linear(width, width, residual)
        self.mlp_norm = nnx.LayerNorm(width, epsilon=_LN_EPS, param_dtype=dtype, rngs=rngs)
        self.mlp_in = linear(width, 4 * width, normal)
        self.mlp_out = linear(4 * width, width, residual)

    def __call__(self, h: jax.Array, mask: jax.Array) -> jax.Array:
        h = h + self.attn_out(self._attention(self.attn_norm(h), mask))
        return h + self.mlp_out(jax.nn.gelu(self.mlp_in(self.mlp_norm(h)), approximate=True))

    def _attention(self, x: jax.Array, mask: jax.Array) -> jax.Array:
        """Causal multi-head self-attention of ``x`` ``(..., L, D)``: ``(..., L, D)``."""
        *batch, length, width = x.shape
        heads = self.num_heads
        qkv = self.qkv(x).reshape(*batch, length, 3, heads, width // heads)
        q, k, v = qkv[..., 0, :, :], qkv[..., 1, :, :], qkv[..., 2, :, :]  # (..., L, H, Dh)
        logits = jnp.einsum("...qhd,...khd->...hqk", q, k) / math.sqrt(width // heads)
        logits = jnp.where(mask, logits, jnp.finfo(logits.dtype).min)
        weights = jax.nn.softmax(logits, axis=-1)
        out = jnp.einsum("...hqk,...khd->...qhd", weights, v)
        return out.reshape(*batch, length, width)


def _check_sizes(vocab_size, max_length, width, num_heads, num_layers, pad_id) -> None:
    for name, value in (("vocab_size", vocab_size), ("max_length", max_length),
                        ("width", width), ("num_heads", num_heads),
                        ("num_layers", num_layers)):
        if isinstance(value, bool) or int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if width % num_heads:
        raise ValueError(f"width ({width}) must be a multiple of num_heads ({num_heads})")
    if isinstance(pad_id, bool) or int(pad_id) != pad_id or not 0 <= pad_id < vocab_size:
        raise ValueError(f"pad_id must be an integer in [0, vocab_size={vocab_size}), got "
                         f"{pad_id!r}")


# ------------------------------------------------------------------------------------------------
# The static handle agents keep.


class TransformerNetwork(NetworkHandle):
    """A static, hashable description of a :class:`TransformerEncoder`, with pure functions of
    its parameters (``init``, ``apply``, ``graphdef``, ``num_params``) and usable as a backbone
    callable ``network(in_features, rngs=...)`` (``in_features``: the row length L, at most
    ``max_length``).

    Attributes (all static): ``vocab_size`` (V), ``max_length``, ``width`` (D), ``num_heads``,
    ``num_layers`` and ``pad_id`` (the arguments of :class:`TransformerEncoder`). The defaults
    are tiny (D = 32, 2 blocks of 2 heads: about 1.6M parameters, nearly all in the 50,257 x 32
    token embedding) with GPT-2's vocabulary and pad id.

    Example::

        net = TransformerNetwork()                         # or TransformerNetwork.gpt2_small()
        params = net.init(key)
        phi = net.apply(params, tokens)                    # (N, L) ids -> (N, 32)
    """

    vocab_size: int = struct.field(pytree_node=False, default=GPT2_VOCAB_SIZE)
    max_length: int = struct.field(pytree_node=False, default=512)
    width: int = struct.field(pytree_node=False, default=32)
    num_heads: int = struct.field(pytree_node=False, default=2)
    num_layers: int = struct.field(pytree_node=False, default=2)
    pad_id: int = struct.field(pytree_node=False, default=GPT2_PAD_ID)

    def __post_init__(self):
        _check_sizes(self.vocab_size, self.max_length, self.width, self.num_heads,
                     self.num_layers, self.pad_id)

    @classmethod
    def gpt2_small(cls, max_length: int = 512) -> TransformerNetwork:
        """GPT-2 small's shape (D = 768, 12 heads, 12 blocks; 124M parameters with 1,024
        positions), randomly initialised; ``max_length`` 512 as in Li et al. 2024's runs."""
        return cls(max_length=max_length, width=768, num_heads=12, num_layers=12)

    @property
    def out_features(self) -> int:
        """D, the size of the feature vector."""
        return self.width

    def create(self, rngs: nnx.Rngs) -> TransformerEncoder:
        """A fresh :class:`TransformerEncoder` with parameters drawn from ``rngs``."""
        return TransformerEncoder(self.vocab_size, self.max_length, self.width, self.num_heads,
                                  self.num_layers, pad_id=self.pad_id, rngs=rngs)

    def __call__(self, in_features: int, *, rngs: nnx.Rngs) -> TransformerEncoder:
        """The backbone contract: a fresh encoder for rows of ``in_features`` tokens."""
        if in_features > self.max_length:
            raise ValueError(f"TransformerNetwork: rows of {in_features} tokens exceed "
                             f"max_length {self.max_length}")
        return self.create(rngs)
