"""Neural Ensemble++ and its baselines: Ensemble+, EpiNet and neural greedy (Li et al.
2024, Sec. 3.3, Alg. 1, App. A.5, App. A.7.1).

The four agents are one algorithm with different index networks
(:class:`~jaxbandits.nets.IndexNetwork`, on any backbone) and index laws
(:mod:`jaxbandits.linalg.perturb`):

* **act**: draw a reference index ``zeta ~ P_zeta``, one for all arms, score every arm by
  ``f(x, zeta)`` (``C = 1``: the output; the classification head, ``C = 2``: ``softmax(f)_1``, or
  the raw class-1 logit with ``ranking="logit"``, the authors' code) and play the argmax;
* **update**: draw a perturbation ``z ~ P_z`` for the new point and push ``(x, y, z)`` into a FIFO
  ring buffer of ``buffer_size`` rows (``z`` stays with its point); once more than
  ``update_start`` points are in (the authors' ``t >= update_start``, t the 0-based round), at
  every ``update_every``-th point, take ``num_grad_steps`` Adam steps, each on
  ``batch_size`` rows drawn with replacement, on

      L = mean_s mean_{xi in Xi} (y_s + c <xi, z_s> - f(x_s, xi))^2

  (``c`` = ``perturb_std``; the classification head: the cross-entropy of ``f(x_s, xi)`` with
  the label ``y_s``, no ``z``; Eq. 18), with the coupled L2 ``reg / |D|`` on every trainable
  parameter (:func:`~jaxbandits.nets.minibatch_adam`). ``Xi`` is the whole update-index set of a
  discrete law (Ensemble++'s ``"coordinate"``: the ``2M`` vectors ``+-sqrt(M) e_m``, which makes
  ``L`` the canonical per-head ridge loss) or ``num_index_samples`` fresh draws per point of a
  continuous one (EpiNet's Gaussian).

======================= ============ ============= ============ ==================== ==========
name                    network      ``P_zeta``    ``P_z``      ``Xi``               scales
======================= ============ ============= ============ ==================== ==========
``neural-ensemble-pp``  Ensemble++   sphere        sphere       coordinate (2M)      0.1 / 0.1
``ensemble-plus``       Ensemble+    one-hot       N(0, I/M)    one-hot (M)          0.1 / 0.1
``epinet``              EpiNet       N(0, I)       sphere       16 N(0, I) per point 0.1 / 0.1
``neural-greedy``       base only    --            --           --                   0 / 0
======================= ============ ============= ============ ==================== ==========

Shared defaults (paper Appendix B and the authors' code): ``M = 8``, ``c = 0.01``, ``reg =
0.01``, Adam ``lr = 1e-4``, ``B = 128``, buffer 10,000, updates from ``update_start = 128``, every
round, ``G = 1`` gradient step (the paper's synthetic-task value), the 2 x 64 ReLU MLP backbone
(:class:`~jaxbandits.nets.MLPBackbone`), and the scales ``s_prior = s_post = 0.1`` (the code's
defaults; the paper gives none).

**Presets**: the authors' per-task settings (their code; the paper gives some), applied to every
method as they did (``jb.make_agent("neural-ensemble-pp", preset="quadratic")``); a field left at
None takes its preset's value, merged in by ``make_agent``, a field set explicitly wins.
:data:`NEURAL_ENSEMBLE_PRESETS` lists them (G, ``update_every``, ``(s_prior, s_post)``;
loss): ``quadratic`` 4, 1, (5, 1);
``neural-classification`` 1, 10, (0.1, 0.1), classification; ``neural-regression`` 10, 1,
(0.2, 0.1); ``vector-quadratic`` (the code's ``quadratic_lmcts``) 20, 1, (5, 1); ``shuttle`` 50,
1, (0.2, 0.1) (the paper says G = 100); ``mushroom`` 50, 1, (1, 0.1); ``hate-speech`` (the
language-model task, App. G.4): M = 4, B = 32, ``reg`` 0.1, from 20 points one step every 10,
(0.2, 0.1), ``inputs="tokens"``.

Cost per round: acting K backbone forwards plus ``O(K D M)``; training ``G B`` forward and
backward passes plus ``O(G B |Xi| M)``. Nothing depends on t: the buffer, the batch and ``G`` are
fixed (Li et al. 2024, Sec. 3.3).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import optax
from flax import nnx, struct

from jaxbandits import core
from jaxbandits.agents.select import chosen_features, greedy_index
from jaxbandits.core import (
    Agent,
    Assumptions,
    Context,
    Feedback,
    Spec,
    check_choice,
    check_nonnegative,
    check_positive,
)
from jaxbandits.linalg.perturb import (
    PERTURBATIONS,
    check_distribution,
    perturbation_sample,
    reference_sample,
    update_index_set,
)
from jaxbandits.nets import (
    PRIOR_INITS,
    IndexNetwork,
    MLPBackbone,
    ReplayBuffer,
    TransformerNetwork,
    minibatch_adam,
    replay_add,
    replay_init,
)
from jaxbandits.registry import register_agent

__all__ = [
    "INPUTS",
    "LOSSES",
    "NEURAL_ENSEMBLE_PRESETS",
    "RANKINGS",
    "EnsemblePlus",
    "EpiNetAgent",
    "NeuralEnsemblePP",
    "NeuralEnsembleState",
    "NeuralGreedy",
    "NeuralIndexAgent",
    "index_loss",
]

LOSSES: tuple[str, ...] = ("regression", "classification")
INPUTS: tuple[str, ...] = ("arms", "tokens")
RANKINGS: tuple[str, ...] = ("softmax", "logit")

#: The authors' per-task settings (their code; Li et al. 2024, Sec. 3.3 and App. F), for every
# method.
NEURAL_ENSEMBLE_PRESETS: dict[str, dict[str, Any]] = {
    "quadratic": {"num_grad_steps": 4, "prior_scale": 5.0, "posterior_scale": 1.0},
    "neural-classification": {"num_grad_steps": 1, "update_every": 10, "prior_scale": 0.1,
                              "posterior_scale": 0.1, "loss": "classification"},
    "neural-regression": {"num_grad_steps": 10, "prior_scale": 0.2, "posterior_scale": 0.1},
    "vector-quadratic": {"num_grad_steps": 20, "prior_scale": 5.0, "posterior_scale": 1.0},
    "shuttle": {"num_grad_steps": 50, "prior_scale": 0.2, "posterior_scale": 0.1},
    "mushroom": {"num_grad_steps": 50, "prior_scale": 1.0, "posterior_scale": 0.1},
    # GPT-Ensemble++ (Li et al. 2024, App. G.4; the authors' start_llm.sh): one post per round, an
    # output per action, the loss on the chosen one
    "hate-speech": {"ensemble_size": 4, "num_index_samples": 8, "prior_scale": 0.2,
                    "posterior_scale": 0.1, "batch_size": 32, "reg": 0.1, "update_start": 20,
                    "num_grad_steps": 1, "update_every": 10, "inputs": "tokens"},
}

#: The values of the fields left at None without a preset (the paper's; the code's scales).
_DEFAULTS: dict[str, Any] = {
    "reg": 0.01, "prior_scale": 0.1, "posterior_scale": 0.1, "ensemble_size": 8,
    "batch_size": 128, "num_grad_steps": 1, "update_every": 1, "update_start": 128,
    "num_index_samples": 16, "loss": "regression", "inputs": "arms"}


#: ``NeuralIndexAgent.presets``: per preset (None: no task) the values of the fields left at None.
_PRESETS = types.MappingProxyType(
    {None: _DEFAULTS, **{task: {**_DEFAULTS, **values}
                         for task, values in NEURAL_ENSEMBLE_PRESETS.items()}})


class NeuralEnsembleState(struct.PyTreeNode):
    """State of a :class:`NeuralIndexAgent`.

    Attributes:
      params: the trainable parameters (an ``nnx.State``).
      frozen: the frozen prior parameters (never updated).
      opt_state: Adam's state, carried across rounds.
      buffer: a :class:`~jaxbandits.nets.ReplayBuffer` of rows ``{"x": (d,), "y": (), "z":
        (M,)}``.
    """

    params: nnx.State
    frozen: nnx.State
    opt_state: optax.OptState
    buffer: ReplayBuffer


def index_loss(
    network: IndexNetwork,
    params: nnx.State,
    frozen: nnx.State,
    batch: dict[str, jax.Array],
    xi: jax.Array,
    *,
    perturb_std: jax.Array | float,
    posterior_scale: jax.Array | float,
    prior_scale: jax.Array | float,
    loss: str = "regression",
) -> jax.Array:
    """The minibatch loss of the module docstring.

    Args:
      batch: rows ``x`` ``(B, ...)`` (the network's inputs), ``y`` ``(B,)``, ``z`` ``(B, M)``
        and optionally ``a`` ``(B,)`` int32, the output each row's loss is taken on (the chosen
        action when the network has one output per action; Li et al. 2024, App. G.4); output 0
        without it.
      xi: the update indices, shared ``(N, M)`` or per row ``(B, N, M)``.
      loss: ``"regression"`` (squared error against ``y + c <xi, z>``) or ``"classification"``
        (cross-entropy of the ``C = 2`` logits with the label ``y``, no ``z``).

    Returns:
      ``()``, the mean over rows and indices.
    """
    f = network.apply(params, frozen, batch["x"], xi, posterior_scale, prior_scale)  # (B, N, C)
    if loss == "classification":
        labels = batch["y"].astype(jnp.int32)[:, None]
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(
            f, jnp.broadcast_to(labels, f.shape[:-1])))
    if "a" in batch:
        f = jnp.take_along_axis(f, batch["a"][:, None, None].astype(jnp.int32), axis=-1)
    target = batch["y"][:, None] + perturb_std * jnp.sum(xi * batch["z"][:, None, :], -1)
    return jnp.mean((target - f[..., 0]) ** 2)


class NeuralIndexAgent(Agent):
    """Neural Ensemble++ and its baselines (module docstring); the registered names are the
    subclasses, which differ in ``head`` and their index laws' defaults.

    Fields left at None take their preset's value, else the default given here: ``make_agent``
    merges them (:meth:`with_preset`), so a made agent holds the values that run.

    Attributes:
      learning_rate: Adam's step size (1e-4).
      reg: lambda, the coupled L2 coefficient, divided by the buffer's size (0.01).
      perturb_std: c, the perturbation scale of the targets (0.01; the paper's "symmetrized
        slack variable beta", Sec. 3.2).
      prior_scale, posterior_scale: ``s_prior`` and ``s_post`` (0.1 and 0.1).
      ensemble_size: M, the index dimension (8; static).
      batch_size, buffer_size: B (128) and the buffer's capacity C (10,000) (static).
      num_grad_steps, update_every, update_start: G Adam steps at every ``update_every``-th point
        once more than ``update_start`` points are in (1, 1 and 128; static).
      reference, perturbation, update_index: the laws of ``zeta``, ``z`` and ``Xi`` (names of
        :data:`~jaxbandits.linalg.INDEX_LAWS`; static).
      num_index_samples: indices drawn per point for a continuous ``update_index`` (16; static).
      loss: ``"regression"`` or ``"classification"`` (the two-logit head of Eq. 18).
      ranking: how the classification head ranks arms: ``"softmax"`` (``p_1``, the paper's) or
        ``"logit"`` (the class-1 logit, the authors' code).
      inputs: ``"arms"`` (the network scores each arm's features, one or two outputs) or
        ``"tokens"`` (one input per round, the context's token ids, and one output per action,
        the loss on the chosen action's output: the language-model task of Li et al. 2024, App.
        G.4).
      train_backbone: False freezes the backbone (heads only; the frozen-GPT ablation).
      prior_init: the Ensemble++ prior factor's init, ``"gaussian"`` (paper) or ``"sphere"``
        (code); zero_init: start the trainable factor at 0 (the paper does not say, App. B).
      backbone: the feature network (any backbone callable; None: the 2 x 64 ReLU MLP, or on
        tokens a tiny :class:`~jaxbandits.nets.TransformerNetwork`).
      preset: a key of :data:`NEURAL_ENSEMBLE_PRESETS` or None (static).
    """

    family = "neural-ensemble"
    paper = "Li et al. 2024, Sec. 3.3, Alg. 1"
    input_kinds = ("arms", "tokens")
    runs_per_block: ClassVar[int] = 8  # a neural round is costly (simulate.default_block_runs)
    head: ClassVar[str] = "ensemble++"
    presets = _PRESETS

    learning_rate: float = 1e-4
    reg: float | None = None
    perturb_std: float = 0.01
    prior_scale: float | None = None
    posterior_scale: float | None = None
    ensemble_size: int | None = struct.field(pytree_node=False, default=None)
    batch_size: int | None = struct.field(pytree_node=False, default=None)
    buffer_size: int = struct.field(pytree_node=False, default=10_000)
    num_grad_steps: int | None = struct.field(pytree_node=False, default=None)
    update_every: int | None = struct.field(pytree_node=False, default=None)
    update_start: int | None = struct.field(pytree_node=False, default=None)
    reference: str = struct.field(pytree_node=False, default="sphere")
    perturbation: str = struct.field(pytree_node=False, default="sphere")
    update_index: str = struct.field(pytree_node=False, default="coordinate")
    num_index_samples: int | None = struct.field(pytree_node=False, default=None)
    loss: str | None = struct.field(pytree_node=False, default=None)
    ranking: str = struct.field(pytree_node=False, default="softmax")
    inputs: str | None = struct.field(pytree_node=False, default=None)
    train_backbone: bool = struct.field(pytree_node=False, default=True)
    prior_init: str = struct.field(pytree_node=False, default="gaussian")
    zero_init: bool = struct.field(pytree_node=False, default=False)
    backbone: Callable | None = struct.field(pytree_node=False, default=None)
    preset: str | None = struct.field(pytree_node=False, default=None)
    fixed_trip_training: bool = struct.field(pytree_node=False, default=False)

    @property
    def relaxed_updates(self) -> bool:  # type: ignore[override]
        """Feature inputs learn from a relaxed action (its mean feature vector)."""
        return self.resolved().inputs == "arms"

    def for_gradients(self) -> NeuralIndexAgent:
        """This agent with a fixed-trip training loop (reverse-differentiable; same values)."""
        return self.replace(fixed_trip_training=True)

    def with_preset(self, dim: int | None = None) -> NeuralIndexAgent:
        """This agent with every field left at None set from its preset (:attr:`presets`: the
        task's values over the defaults) and an unset backbone from its inputs: the 2 x 64 MLP
        on arms, a tiny :class:`~jaxbandits.nets.TransformerNetwork` on tokens."""
        agent = super().with_preset(dim)
        if agent.backbone is None:
            backbone = MLPBackbone() if agent.inputs == "arms" else TransformerNetwork()
            agent = agent.replace(backbone=backbone)
        return agent

    def resolved(self) -> NeuralIndexAgent:
        """This agent with its preset merged (:meth:`with_preset`; what ``make_agent`` gives)."""
        return self.with_preset()

    def assume(self, assumptions: Assumptions, spec: Spec,
               horizon: int | None = None) -> dict[str, Any]:
        """The shared mapping; an unset ``preset`` <- the environment's task (``Env.task``:
        ``quadratic-pool`` is ``"quadratic"``, ...); on an environment of token rows
        (``Spec.inputs == "tokens"``) ``inputs="tokens"`` and, failing a task, the
        language-model preset ``"hate-speech"``."""
        values = super().assume(assumptions, spec, horizon)
        if self.preset is None and assumptions.task in NEURAL_ENSEMBLE_PRESETS:
            values["preset"] = assumptions.task
        if spec.inputs == "tokens" and self.inputs is None:
            values["inputs"] = "tokens"
            values.setdefault("preset", "hate-speech")
        return values

    def validate(self) -> None:
        core.check_types(self)  # first, so a wrong type is named as such
        if self.preset is not None:
            check_choice(self, "preset", tuple(NEURAL_ENSEMBLE_PRESETS))
        agent = self.resolved()
        super(NeuralIndexAgent, agent).validate()  # the shared checks, on the preset's values
        check_nonnegative(agent, "posterior_scale")
        check_nonnegative(agent, "update_start", integer=True)
        check_positive(agent, "num_index_samples", integer=True)
        for name, choices in (("loss", LOSSES), ("ranking", RANKINGS), ("inputs", INPUTS),
                              ("prior_init", PRIOR_INITS)):
            check_choice(agent, name, choices)
        size = agent.ensemble_size
        check_distribution(self.reference, size, field=f"{self.name}: reference")
        check_distribution(self.update_index, size, field=f"{self.name}: update_index")
        check_distribution(self.perturbation, size, field=f"{self.name}: perturbation",
                           choices=PERTURBATIONS)
        if self.buffer_size < agent.batch_size:
            raise ValueError(f"{self.name}: buffer_size ({self.buffer_size}) must be at least "
                             f"batch_size ({agent.batch_size})")
        if agent.inputs == "tokens" and agent.loss == "classification":
            raise ValueError(f"{self.name}: inputs='tokens' scores actions by one regression "
                             "output each; loss='classification' needs inputs='arms'")
        if not callable(agent.backbone):
            raise ValueError(f"{self.name}: backbone must be a callable backbone(in_features, "
                             f"rngs=...) -> nnx.Module, got {self.backbone!r}")

    def network(self, spec: Spec) -> IndexNetwork:
        """The index network for ``spec`` (``ValueError`` for a backbone that does not map an
        input to a feature vector)."""
        agent = self.resolved()
        tokens = agent.inputs == "tokens"
        outputs = spec.num_arms if tokens else 2 if agent.loss == "classification" else 1
        network = IndexNetwork(self.head, spec.dim, agent.backbone, outputs, agent.ensemble_size,
                               self.prior_init, self.zero_init, self.train_backbone,
                               "int32" if tokens else "float")
        network.feature_dim  # noqa: B018 -- checks the backbone before any tracing
        return network

    def inputs_of(self, context: Context) -> jax.Array:
        """The network's inputs this round: the arms ``(K, d)``, or the token ids ``(1, L)``."""
        tokens = getattr(context, "tokens", None)
        if self.resolved().inputs == "tokens":
            if tokens is None:
                raise ValueError(f"{self.name}: inputs='tokens' needs a context with token ids "
                                 "(a TextContext, e.g. the text-moderation environment)")
            return tokens[None]
        if tokens is not None:
            raise ValueError(f"{self.name}: this context carries token ids; score them with "
                             "inputs='tokens' and a text backbone (preset='hate-speech')")
        return context.arms

    def init(self, key: jax.Array, spec: Spec) -> NeuralEnsembleState:
        if spec.action_kind != "index":
            raise ValueError(f"{self.name}: needs a finite arm set (action kind 'index'), got "
                             f"{spec.action_kind!r}")
        agent = self.resolved()
        network = self.network(spec)
        params, frozen = network.init(key)
        dtype = jax.tree.leaves(params)[0].dtype
        x_dtype = jnp.int32 if network.input_dtype == "int32" else dtype
        row = {"x": jnp.zeros((spec.dim,), x_dtype), "y": jnp.zeros((), dtype),
               "z": jnp.zeros((agent.ensemble_size,), dtype), "a": jnp.zeros((), jnp.int32)}
        return NeuralEnsembleState(
            params=params, frozen=frozen,
            opt_state=optax.adam(agent.learning_rate).init(params),
            buffer=replay_init(row, self.buffer_size))

    def scores(self, state: NeuralEnsembleState, key: jax.Array, context: Context) -> jax.Array:
        """``(K,)`` the actions' scores under one reference draw ``zeta``."""
        agent = self.resolved()
        network = self.network(_spec_of(context))
        dtype = jax.tree.leaves(state.params)[0].dtype
        zeta = reference_sample(key, self.reference, agent.ensemble_size, dtype=dtype)
        f = network.apply(state.params, state.frozen, self.inputs_of(context), zeta[None],
                          agent.posterior_scale, agent.prior_scale)[:, 0]  # (K, C) or (1, K)
        if agent.inputs == "tokens":
            return f[0]
        if agent.loss == "regression":
            return f[:, 0]
        return jax.nn.softmax(f)[:, 1] if self.ranking == "softmax" else f[:, 1]

    def act(self, state: NeuralEnsembleState, key: jax.Array, context: Context):
        return greedy_index(self.scores(state, key, context)), state

    def update(self, state: NeuralEnsembleState, key: jax.Array, context: Context,
               action: jax.Array, feedback: Feedback) -> NeuralEnsembleState:
        agent = self.resolved()
        key_z, key_train = jax.random.split(key)
        tokens = agent.inputs == "tokens"
        inputs = self.inputs_of(context)
        x = inputs[0] if tokens else chosen_features(context, action)
        dtype = state.buffer.rows["z"].dtype
        z = perturbation_sample(key_z, self.perturbation, agent.ensemble_size, dtype=dtype)
        row = {"x": x, "y": feedback.reward, "z": z, "a": action if tokens else jnp.int32(0)}
        buffer = replay_add(state.buffer, row)
        count = buffer.num_obs
        # the authors' `t >= update_start` after storing round t (0-based): from point 129 on
        train = (count > agent.update_start) & (count % agent.update_every == 0)
        network = self.network(_spec_of(context))

        def loss(params, batch, key_xi):
            return index_loss(network, params, state.frozen, batch,
                              self.update_indices(key_xi, agent.batch_size, dtype),
                              perturb_std=agent.perturb_std,
                              posterior_scale=agent.posterior_scale,
                              prior_scale=agent.prior_scale, loss=agent.loss)

        params, opt_state = minibatch_adam(
            loss, state.params, state.opt_state, buffer, key_train,
            num_steps=jnp.where(train, agent.num_grad_steps, 0), batch_size=agent.batch_size,
            learning_rate=agent.learning_rate, reg=agent.reg,
            max_steps=agent.num_grad_steps if self.fixed_trip_training else None)
        return state.replace(params=params, opt_state=opt_state, buffer=buffer)

    def update_indices(self, key: jax.Array, batch_size: int, dtype) -> jax.Array:
        """The update indices ``Xi``: the whole set of a discrete law ``(N, M)``, or
        ``num_index_samples`` fresh draws per row of a continuous one ``(B, N, M)``."""
        agent = self.resolved()
        size = agent.ensemble_size
        if self.update_index in ("gaussian", "sphere"):
            draws = agent.num_index_samples
            keys = jax.random.split(key, batch_size * draws)
            xi = jax.vmap(lambda k: reference_sample(k, self.update_index, size, dtype=dtype))
            return xi(keys).reshape(batch_size, draws, size)
        return update_index_set(self.update_index, size, dtype=dtype)


def _spec_of(context: Context) -> Spec:
    tokens = getattr(context, "tokens", None)
    dim = context.arms.shape[-1] if tokens is None else tokens.shape[-1]
    return Spec(dim=dim, num_arms=context.arms.shape[0])


@register_agent
class NeuralEnsemblePP(NeuralIndexAgent):
    """Neural Ensemble++ (Li et al. 2024, Alg. 1): the shared-factor head on stop-gradient
    features, sphere reference and perturbation, the exact coordinate update set.

    Example::

        agent = jb.make_agent("neural-ensemble-pp", preset="quadratic")
    """

    name = "neural-ensemble-pp"
    description = "Neural Ensemble++: shared-factor index head on stop-gradient features"


@register_agent
class EnsemblePlus(NeuralIndexAgent):
    """Ensemble+ (Osband et al. 2018; Li et al. 2024, App. A.5, Eq. 11): M heads with a frozen prior
    network, one-hot indices, ``N(0, I/M)`` perturbations.

    Example::

        agent = jb.make_agent("ensemble-plus", ensemble_size=16)
    """

    name = "ensemble-plus"
    description = "Ensemble+: M heads on a shared trunk with a separate frozen prior network"
    paper = "Osband et al. 2018; baseline of Li et al. 2024, App. A.5, Eq. 11"
    head = "ensemble+"
    reference: str = struct.field(pytree_node=False, default="one_hot")
    perturbation: str = struct.field(pytree_node=False, default="gaussian")
    update_index: str = struct.field(pytree_node=False, default="one_hot")


@register_agent
class EpiNetAgent(NeuralIndexAgent):
    """EpiNet (Osband et al. 2023; Li et al. 2024, App. A.7.1): a base network plus a small
    learnable epistemic network and frozen prior MLPs on the raw input, Gaussian indices.

    Example::

        agent = jb.make_agent("epinet")
    """

    name = "epinet"
    description = "EpiNet: base network plus a [15, 15] epistemic network and [5, 5] priors"
    paper = "Osband et al. 2023; baseline of Li et al. 2024, App. A.7.1"
    head = "epinet"
    input_kinds = ("arms",)  # its epinet reads the raw input (not applied to text)
    reference: str = struct.field(pytree_node=False, default="gaussian")
    update_index: str = struct.field(pytree_node=False, default="gaussian")


@register_agent
class NeuralGreedy(NeuralIndexAgent):
    """Neural greedy (Li et al. 2024, Sec. 5.2): the backbone and a base head trained on the plain
    loss, no index and no prior (Ensemble++ with both scales 0).

    Example::

        agent = jb.make_agent("neural-greedy", preset="shuttle")
    """

    name = "neural-greedy"
    description = "Neural greedy: the backbone and a linear head, no exploration"
    paper = "the Greedy baseline of Li et al. 2024, Sec. 5.2"
    head = "none"
    perturb_std: float = 0.0
    ensemble_size: int = struct.field(pytree_node=False, default=1)
