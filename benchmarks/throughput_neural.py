"""Throughput of the neural agents against a PyTorch loop, in seed-steps per second.

For each neural agent and run count this prints how many seed-steps (runs x rounds) per second
``jb.simulate`` plays once training is under way (compile time excluded, reported separately),
next to a PyTorch (CPU) implementation of the same algorithm that plays one seed at a time with a
Python loop per step, as the papers' code does: the same network and initialisation, the same
number of full-batch gradient steps on the same loss, the same retraining schedule. It also shows
that the engine's cost per round is flat in t (per-arm statistics, fixed shapes) and checks that
each PyTorch reference is a correct implementation:

* **training check** (pathwise): from identical inputs (theta_0, arms, a pull history), one
  training round of the reference (``num_grad_steps`` steps of ``torch.optim.SGD``) must land on
  the parameters :func:`jaxbandits.nets.net_gd` finds, up to float32 rounding;
* **regret check** (statistical): the reference's mean final regret over a few seeds must be in
  the range of the JAX agent's (both are printed).

Run it from the repository root::

    python benchmarks/throughput_neural.py                   # the full benchmark (~15 min)
    python benchmarks/throughput_neural.py --quick           # a smoke test
    python benchmarks/throughput_neural.py --agents neural-es --runs 1,10,100,1000 --markdown

PyTorch is an optional benchmark dependency (``pip install -e '.[bench]'``, which pins the CPU
build ``torch==2.13.0``); without it the script prints the JAX numbers and says how to install it.

What is timed:

* **JAX**: ``jb.simulate`` with the agent's ``warmup=0``. Agents on per-arm statistics
  (neural-es, neural-ucb on E-QUAD, training every round) cost the same every round after the
  warm-up, so a short horizon (``--horizon``) gives their steady state. Agents with a ring
  buffer of B rows (neurallog-ucb-2: the arms change every round) train on the rows filled so
  far, so their rounds get dearer until the buffer is full: they are timed over the PyTorch
  reference's whole horizon (T = 2000, training every 50 rounds), the same rounds the
  reference's rate averages. Best of ``--repeats`` trials of at least ``--min-time`` seconds of
  wall time; compile time is reported separately. One compiled program per run count is shared
  by the timing, the flatness and the regret runs (same ``--chunk-size``).
* **Flat in t**: one simulate call per horizon in ``--flat-horizons`` (``--flat-runs`` runs,
  best of ``--repeats``; default 50, 200, 800, and B/2, B, 2B for a buffer agent, whose cost
  grows while the buffer fills and is flat after): seed-steps/s over increasing horizons, and
  the per-round time of each window between consecutive horizons (early vs late), from the
  differences of the wall times.
* **PyTorch**: the rounds after the warm-up of the regret-check seeds (``--torch-horizon``
  rounds each, default warm-up; by default 60 rounds past the warm-up for neural-es and
  neural-ucb, whose references take up to a second a round, and the paper's T = 2000 for
  neurallog-ucb-2), the best seed. The reference trains on the **full history**
  (``--torch-data history``, default: what the papers' code does, so its cost per round grows
  with t) or on the per-arm statistics (``stats``, the engine's data: the same gradients, flat
  in t). The ratio is taken against the faster of the two data modes measured, so it is a lower
  bound for the papers' full-history code at larger t. One thread (``--torch-threads``): the
  ops are tiny (well below PyTorch's intra-op grain), and on a loaded 2-core machine a second
  thread only spins.

Adding an agent: write a reference class (see ``TorchNeuralES``) and decorate it with
``@torch_reference("agent-name", env="env-name")``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

_ROOT = Path(__file__).resolve().parents[1]
if (_ROOT / "jaxbandits").is_dir() and str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))  # benchmark the checkout this file belongs to
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import (  # noqa: E402
    CPU_DEVICES_HELP,
    fmt_rate,
    int_list,
    parse_agent_spec,
    print_table,
    time_jax,
)

# jax, jaxbandits and torch are imported in main() and the functions below, after --cpu-devices
# has split the CPU; the module itself imports without either.

TARGET_RATIO = 20.0  # the goal at TARGET_RUNS runs, against the PyTorch loop (issue 5)
TARGET_RUNS = 100
DEFAULT_AGENTS = "neural-es,neural-ucb,neurallog-ucb-2"
INSTALL_HINT = ("pip install -e '.[bench]'   (the CPU build torch==2.13.0; on this project's "
                "machines it installs under Python 3.11)")

torch = None  # the torch module, once _import_torch() has found it


def _import_torch():
    """The torch module, or None when it is not installed."""
    global torch
    if torch is None:
        try:
            import torch as module
        except ImportError:
            return None
        torch = module
    return torch


# ------------------------------------------------------------------------------------------------
# NumPy twins of the environments (one seed; the same distributions as the JAX ones).


class NumpyQuadratic:
    """``quadratic`` (E-QUAD): ``scale ||A^T x||^2 + N(0, noise_std^2)``, one fixed unit-sphere
    arm set; ``A`` ``(d, d)`` i.i.d. ``N(0, 1)``."""

    def __init__(self, env, rng: np.random.Generator):
        if (env.arm_prior != "sphere" or env.fresh_arms or env.instance_seed is not None):
            raise ValueError("the NumPy quadratic twin covers unit-sphere fixed arms, one "
                             "instance per run")
        self.rng = rng
        self.dim, self.num_arms = env.dim, env.num_arms
        matrix = rng.standard_normal((env.dim, env.dim))
        g = rng.standard_normal((env.num_arms, env.dim))
        self.arms = g / np.linalg.norm(g, axis=-1, keepdims=True)
        self.means = float(env.scale) * np.sum((self.arms @ matrix) ** 2, axis=-1)
        self.best = float(self.means.max())
        self.noise_std = float(env.noise_std)

    def observe(self) -> np.ndarray:
        return self.arms

    def feedback(self, action: int) -> tuple[float, float]:
        mean = float(self.means[action])
        return mean + self.noise_std * float(self.rng.standard_normal()), self.best - mean


class NumpyNeuralLogSynthetic:
    """``neurallog-synthetic``: K distinct pool vectors a round, ``Bernoulli(sigmoid(h(x_a)))``."""

    def __init__(self, env, rng: np.random.Generator):
        if env.instance_seed is not None:
            raise ValueError("the NumPy neurallog-synthetic twin draws one instance per run")
        self.rng = rng
        self.dim, self.num_arms, self.pool_size = env.dim, env.num_arms, env.pool_size
        theta = rng.uniform(-1.0, 1.0, env.dim)
        matrix = rng.uniform(-1.0, 1.0, (env.dim, env.dim))
        pool = rng.uniform(-1.0, 1.0, (env.pool_size, env.dim))
        if env.feature_dist == "sphere":
            g = rng.standard_normal((env.pool_size, env.dim))
            pool = g / np.linalg.norm(g, axis=-1, keepdims=True)
        u = pool @ theta
        latent = {
            "h1": lambda: 0.2 * u**4,
            "h2": lambda: 20.0 * np.cos(u),
            "h3": lambda: 5.0 * np.einsum("ni,ij,nj->n", pool, matrix, pool),
            "h4": lambda: 10.0 * u**2,
            "h5": lambda: np.sum((pool @ matrix.T) ** 2, axis=-1),
            "h6": lambda: np.cos(3.0 * u),
        }[env.function]()
        self.pool = pool
        self.pool_means = 1.0 / (1.0 + np.exp(-latent))
        self.ids = None

    def observe(self) -> np.ndarray:
        self.ids = self.rng.choice(self.pool_size, self.num_arms, replace=False)
        return self.pool[self.ids]

    def feedback(self, action: int) -> tuple[float, float]:
        means = self.pool_means[self.ids]
        mean = float(means[action])
        return float(self.rng.random() < mean), float(means.max()) - mean


NUMPY_ENVS = {"quadratic": NumpyQuadratic, "neurallog-synthetic": NumpyNeuralLogSynthetic}


# ------------------------------------------------------------------------------------------------
# The PyTorch network and training (what every reference shares).


def network_inputs(network, x: np.ndarray) -> np.ndarray:
    """The network's input transform, once per arm set: ``[x; x] / sqrt 2`` with
    ``double_input``, a zero column for the symmetric init of an odd ``d`` (see
    :class:`jaxbandits.nets.MLP`)."""
    if network.double_input:
        return np.concatenate([x, x], axis=-1) / math.sqrt(2.0)
    if network.init_scheme == "symmetric" and x.shape[-1] % 2 == 1:
        return np.concatenate([x, np.zeros_like(x[..., :1])], axis=-1)
    return x


def initial_kernels(network, seed: int) -> list[np.ndarray]:
    """theta_0 as float32 kernels ``(out, in)``, drawn by the library's own init
    (:meth:`jaxbandits.nets.Network.init`), so both sides start from the same distribution."""
    import jax

    params = network.init(jax.random.key(seed))
    return [np.asarray(leaf, np.float32) for leaf in jax.tree.leaves(params)]


def make_torch_mlp(kernels: list[np.ndarray], width: int):
    """``f(x) = sqrt(m) W_L relu(... relu(W_1 x))``: bias-free ``nn.Linear`` layers."""
    nn = torch.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(
                nn.Linear(k.shape[1], k.shape[0], bias=False) for k in kernels)
            with torch.no_grad():
                for layer, k in zip(self.layers, kernels, strict=True):
                    layer.weight.copy_(torch.from_numpy(np.array(k, np.float32)))
            self.scale = math.sqrt(width)

        def forward(self, x):
            h = x
            for layer in self.layers[:-1]:
                h = torch.relu(layer(h))
            return self.scale * self.layers[-1](h).squeeze(-1)

    return MLP()


def torch_fit(net, anchor: list, inputs, targets_or_counts, sums, *, coef: float, lr: float,
              steps: int, reduction: str, link: str = "identity") -> None:
    """``steps`` full-batch ``torch.optim.SGD`` steps on the regularised loss of
    :mod:`jaxbandits.nets.train` (in place).

    ``sums is None``: **full history**, rows ``inputs`` ``(n, d)`` with targets ``(n,)``, data
    term ``sum_l 1/2 (f(X_l) - Y_l)^2`` (identity) or ``sum_l softplus(f) - Y_l f`` (logistic,
    the BCE on the latent output). Otherwise **per-arm statistics**: ``inputs`` the K arms,
    ``targets_or_counts`` the pull counts and ``sums`` the (perturbed) reward sums, data term
    ``sum_k n_k b(f_k) - s_k f_k`` (the same gradients). The penalty is ``coef / 2 ||theta -
    anchor||^2``; ``"mean"`` divides the whole loss by ``max(n, 1)``.
    """
    optimizer = torch.optim.SGD(net.parameters(), lr=lr)
    if sums is None:
        counts, n = None, float(inputs.shape[0])
    else:
        counts, n = targets_or_counts, float(targets_or_counts.sum())
    n = max(n, 1.0)
    for _ in range(steps):
        optimizer.zero_grad()
        f = net(inputs)
        cumulant = torch.nn.functional.softplus(f) if link == "logistic" else 0.5 * f * f
        if counts is None:
            if link == "logistic":
                data = (cumulant - targets_or_counts * f).sum()
            else:
                data = 0.5 * ((f - targets_or_counts) ** 2).sum()
        else:
            data = (counts * cumulant - sums * f).sum()
        penalty = sum(((p - a) ** 2).sum() for p, a in zip(net.parameters(), anchor, strict=True))
        penalty = 0.5 * coef * penalty
        if reduction == "mean":
            loss = (data + penalty) / n
        elif reduction == "mean_plus_reg":
            loss = data / n + penalty
        else:
            loss = data + penalty
        loss.backward()
        optimizer.step()


def flat_gradients(net, inputs) -> tuple[np.ndarray, np.ndarray]:
    """``f(x_k)`` ``(K,)`` and ``grad_theta f(x_k)`` ``(K, p)``, one backward pass per arm (the
    NeuralUCB / NeuralLog reference code's loop), in the library's parameter order."""
    values = net(inputs)
    grads = []
    for k in range(inputs.shape[0]):
        net.zero_grad()
        values[k].backward(retain_graph=k + 1 < inputs.shape[0])
        grads.append(torch.cat([p.grad.reshape(-1) for p in net.parameters()]))
    return values.detach().numpy().astype(np.float64), torch.stack(grads).numpy().astype(np.float64)


def _train_now(num_obs: int, warmup: int, update_every: int) -> bool:
    """:func:`jaxbandits.nets.training_round`."""
    warm = num_obs >= warmup and num_obs > 0
    return warm and (num_obs == warmup or num_obs % update_every == 0)


# ------------------------------------------------------------------------------------------------
# References: one seed, a Python loop per step.

TORCH_REFERENCES: dict[str, type] = {}
REFERENCE_ENVS: dict[str, str] = {}


def torch_reference(name: str, env: str):
    """Registers a PyTorch reference for the JAX agent ``name``, benchmarked on ``env``.

    The class is built as ``cls(agent, network, kernels, num_arms, rng, data)`` (``agent`` the JAX
    agent object, to read its hyperparameters from; ``kernels`` theta_0; ``data`` one of its
    ``data_modes``, ``"history"`` or ``"stats"``) and offers ``act(arms (K, d)) -> int`` and
    ``update(arms, action, reward)``; its ``warmup`` attribute is the number of rounds before
    training starts. Class attributes: ``link``, ``zero_anchor`` and ``penalty_coef(agent)``
    (the loss, for :func:`check_training`), ``data_modes`` and ``horizon`` (the default PyTorch
    horizon, None for the warm-up plus 60 rounds).
    """

    def register(cls):
        TORCH_REFERENCES[name] = cls
        REFERENCE_ENVS[name] = env
        return cls

    return register


class _TorchNeuralBase:
    """The data and the fit shared by the references (a fixed arm set).

    Class attributes read by :func:`check_training`: ``link`` (the loss's link) and
    ``zero_anchor`` (the penalty is centred at 0 instead of theta_0); :meth:`penalty_coef`
    gives the penalty's whole coefficient. ``horizon``: the default PyTorch horizon (None: the
    warm-up plus 60 rounds, since these references take up to a second per round).
    """

    link = "identity"
    zero_anchor = False
    horizon = None
    data_modes = ("history", "stats")

    @staticmethod
    def penalty_coef(agent) -> float:
        """``1/2 lambda m ||theta - theta_0||^2``: the coefficient ``lambda m``."""
        return float(agent.reg) * agent.width

    def __init__(self, agent, network, kernels, num_arms: int, rng, data: str):
        if data not in ("history", "stats"):
            raise ValueError(f"data must be 'history' or 'stats', got {data!r}")
        self.agent, self.network, self.rng, self.data = agent, network, rng, data
        self.num_arms = num_arms
        self.width = agent.width
        self.steps = int(agent.num_grad_steps)
        self.lr = float(agent.learning_rate)
        self.coef = self.penalty_coef(agent)
        self.reduction = agent.loss_reduction
        self.update_every = int(agent.update_every)
        self.warmup = num_arms if int(agent.warmup) < 0 else int(agent.warmup)
        self.order = rng.permutation(num_arms)
        self.anchor = [torch.from_numpy(np.array(k)) for k in kernels]
        self.num_obs = 0
        self.rows: list[int] = []  # history: the pulled arm of each observation
        self.rewards: list[float] = []
        self.counts = np.zeros(num_arms)  # stats
        self.sums = np.zeros(num_arms)
        self.arms_t = None

    def _set_arms(self, arms: np.ndarray) -> None:
        if self.arms_t is None:  # the fixed arm set, transformed once
            self.arms_t = torch.from_numpy(network_inputs(self.network, arms).astype(np.float32))

    def _warm_arm(self) -> int | None:
        if self.num_obs < self.warmup:
            return int(self.order[self.num_obs % self.num_arms])
        return None

    def _add(self, action: int, reward: float) -> None:
        self.rows.append(action)
        self.rewards.append(reward)
        self.counts[action] += 1.0
        self.sums[action] += reward
        self.num_obs += 1

    def _history_inputs(self):
        """The played inputs ``(n, d')``, gathered once per training round (history mode)."""
        return self.arms_t[torch.as_tensor(self.rows)] if self.data == "history" else None

    def _fit(self, net, inputs=None, perturbations=None) -> None:
        """One training round of ``net`` on the data (``inputs`` from :meth:`_history_inputs`;
        plus per-observation ``perturbations`` ``(n,)`` in history mode, per-arm perturbation
        sums ``(K,)`` in stats mode)."""
        kwargs = dict(coef=self.coef, lr=self.lr, steps=self.steps, reduction=self.reduction)
        if self.data == "history":
            targets = np.asarray(self.rewards)
            if perturbations is not None:
                targets = targets + perturbations
            torch_fit(net, self.anchor, inputs, torch.from_numpy(targets.astype(np.float32)),
                      None, **kwargs)
        else:
            sums = self.sums if perturbations is None else self.sums + perturbations
            torch_fit(net, self.anchor, self.arms_t,
                      torch.from_numpy(self.counts.astype(np.float32)),
                      torch.from_numpy(sums.astype(np.float32)), **kwargs)


@torch_reference("neural-es", env="quadratic")
class TorchNeuralES(_TorchNeuralBase):
    """Neural-ES: m networks from the shared theta_0; member j fits the data with its own
    perturbations ``Z_l^j ~ N(0, sigma_R^2)``, drawn once per observation; round t plays the
    argmax of a uniformly drawn member. Members train one after another."""

    def __init__(self, agent, network, kernels, num_arms, rng, data):
        super().__init__(agent, network, kernels, num_arms, rng, data)
        self.size = int(agent.ensemble_size)
        active = int(agent.active_members)
        self.active = min(active, self.size) if active > 0 else self.size
        self.sigma = float(agent.perturb_std)
        self.nets = [make_torch_mlp(kernels, self.width) for _ in range(self.size)]
        self.z_history: list[np.ndarray] = []  # (m,) per observation
        self.z_sums = np.zeros((self.size, num_arms))

    def act(self, arms: np.ndarray) -> int:
        self._set_arms(arms)
        warm = self._warm_arm()
        if warm is not None:
            return warm
        member = int(self.rng.integers(self.active))
        with torch.no_grad():
            return int(torch.argmax(self.nets[member](self.arms_t)))

    def update(self, arms: np.ndarray, action: int, reward: float) -> None:
        z = self.sigma * self.rng.standard_normal(self.size)
        self.z_history.append(z)
        self.z_sums[:, action] += z
        self._add(action, reward)
        if _train_now(self.num_obs, self.warmup, self.update_every):
            inputs, table = self._history_inputs(), np.asarray(self.z_history)  # (n, m)
            for j, net in enumerate(self.nets):
                self._fit(net, inputs, table[:, j] if self.data == "history" else self.z_sums[j])


@torch_reference("neural-ucb", env="quadratic")
class TorchNeuralUCB(_TorchNeuralBase):
    """NeuralUCB with the diagonal design: ``argmax_k f_k + nu sqrt(sum_j g_kj^2 / m / U_j)``,
    ``U <- U + g_a^2 / m`` with the selection-time gradient, then training on the data."""

    def __init__(self, agent, network, kernels, num_arms, rng, data):
        super().__init__(agent, network, kernels, num_arms, rng, data)
        if agent.design != "diag":
            raise ValueError("the PyTorch NeuralUCB reference keeps the diagonal design only")
        self.nu = float(agent.explore_scale)
        self.net = make_torch_mlp(kernels, self.width)
        self.design = np.full(sum(k.size for k in kernels), float(agent.reg))
        self.chosen_grad = None

    def act(self, arms: np.ndarray) -> int:
        self._set_arms(arms)
        warm = self._warm_arm()
        if warm is not None:
            self.chosen_grad = None
            return warm
        values, grads = flat_gradients(self.net, self.arms_t)
        widths = np.sqrt(np.sum(grads * grads / self.width / self.design, axis=-1))
        action = int(np.argmax(values + self.nu * widths))
        self.chosen_grad = grads[action]
        return action

    def update(self, arms: np.ndarray, action: int, reward: float) -> None:
        grad = self.chosen_grad
        if grad is None:  # a warm-up round: the chosen arm's gradient alone
            grad = flat_gradients(self.net, self.arms_t[action:action + 1])[1][0]
        self.design += grad * grad / self.width
        self._add(action, reward)
        if _train_now(self.num_obs, self.warmup, self.update_every):
            self._fit(self.net, self._history_inputs())


@torch_reference("neurallog-ucb-2", env="neurallog-synthetic")
class TorchNeuralLogUCB2:
    """NeuralLog-UCB-2 in practical mode (seed-002 section 3.2, diagonal matrices): rank
    ``f_k + nu nu^_{t-1} sqrt(sum_j g_kj^2 / W_j)`` with ``nu^_t = (1 + sqrt(L) S + L S^2)
    (sqrt(d~_t l_t) + l_t / sqrt(lam)) + 1``, ``d~_t = sum_j log(1 + R sum_s g_sj^2)``,
    ``l_t = log(4 t^2 / delta)``; every ``update_every`` rounds ``num_grad_steps`` GD steps on
    ``sum BCE + lam ||theta||^2`` (mean-normalised) from the current theta over the history (the
    last ``buffer_size`` observations); then ``W <- W + mu'(f(x_a; theta_t)) g_a^2``. The arms
    change every round, so the history holds the played inputs (``data`` is ignored)."""

    link = "logistic"
    zero_anchor = True
    data_modes = ("history",)  # the arms change every round: no per-arm statistics
    horizon = 2000  # the paper's T (seed-002 section 4.1): a few ms per round, so affordable

    @staticmethod
    def penalty_coef(agent) -> float:
        """``lam ||theta||^2``: the coefficient ``2 lam``."""
        return 2.0 * float(agent.reg)

    def __init__(self, agent, network, kernels, num_arms, rng, data):
        if agent.mode != "practical" or agent.design != "diag":
            raise ValueError("the PyTorch NeuralLog-UCB-2 reference covers the practical mode "
                             "with diagonal matrices")
        self.agent, self.network, self.rng = agent, network, rng
        self.width = agent.width
        self.steps = int(agent.num_grad_steps)
        self.lr = float(agent.learning_rate)
        self.reg = float(agent.reg)
        self.reduction = agent.loss_reduction
        self.update_every = int(agent.update_every)
        self.warmup = num_arms if int(agent.warmup) < 0 else int(agent.warmup)
        self.buffer = agent.buffer_size
        self.nu = float(agent.explore_scale)
        self.delta = float(agent.delta)
        depth, bound = agent.depth, float(agent.param_bound)
        self.confidence = 1.0 + math.sqrt(depth) * bound + depth * bound * bound
        self.net = make_torch_mlp(kernels, self.width)
        self.zero_anchor = [torch.zeros(k.shape) for k in kernels]
        p = sum(k.size for k in kernels)
        self.design = np.full(p, self.reg)  # W = lam I + sum mu' g g^T (diagonal)
        self.info = np.zeros(p)  # sum g g^T (diagonal), for d~
        self.order = rng.permutation(num_arms)
        self.num_arms = num_arms
        self.inputs: list[np.ndarray] = []
        self.rewards: list[float] = []
        self.num_obs = 0
        self.arms_t = None
        self.chosen_grad = None

    def _radius(self) -> float:
        t = max(self.num_obs, 1)
        ell = math.log(4.0 * t * t / self.delta) if self.agent.include_logs else 1.0
        dtilde = float(np.sum(np.log1p(0.25 * self.info)))
        return self.confidence * (math.sqrt(dtilde * ell) + ell / math.sqrt(self.reg)) + 1.0

    def act(self, arms: np.ndarray) -> int:
        self.arms_t = torch.from_numpy(network_inputs(self.network, arms).astype(np.float32))
        values, grads = flat_gradients(self.net, self.arms_t)
        widths = np.sqrt(np.sum(grads * grads / self.design, axis=-1))
        scores = values + self.nu * self._radius() * widths
        if self.num_obs < self.warmup:
            action = int(self.order[self.num_obs % self.num_arms])
        else:
            action = int(np.argmax(scores))
        self.chosen_grad = grads[action]
        return action

    def update(self, arms: np.ndarray, action: int, reward: float) -> None:
        grad = self.chosen_grad
        self.info += grad * grad
        self.inputs.append(self.arms_t[action].numpy())
        self.rewards.append(reward)
        self.num_obs += 1
        if _train_now(self.num_obs, self.warmup, self.update_every):
            keep = slice(-self.buffer, None) if self.buffer else slice(None)
            inputs = torch.from_numpy(np.asarray(self.inputs[keep], np.float32))
            targets = torch.from_numpy(np.asarray(self.rewards[keep], np.float32))
            torch_fit(self.net, self.zero_anchor, inputs, targets, None,
                      coef=self.penalty_coef(self.agent),
                      lr=self.lr, steps=self.steps, reduction=self.reduction, link="logistic")
        with torch.no_grad():
            f = float(self.net(self.arms_t[action:action + 1])[0])
        slope = 1.0 / (1.0 + math.exp(-f))
        self.design += slope * (1.0 - slope) * grad * grad


# ------------------------------------------------------------------------------------------------
# Runs and checks.


def torch_run(env, agent, name: str, horizon: int, seed: int, data: str) -> dict:
    """Plays one seed of the reference of ``name``; returns its final regret and the wall time
    of every round (act, environment, update)."""
    rng = np.random.default_rng(seed)
    world = NUMPY_ENVS[env.name](env, rng)
    network = agent.network(env.dim)
    kernels = initial_kernels(network, seed)
    policy = TORCH_REFERENCES[name](agent, network, kernels, env.num_arms, rng, data)
    regret = 0.0
    times = np.zeros(horizon)
    for t in range(horizon):
        start = time.perf_counter()
        arms = world.observe()
        action = policy.act(arms)
        reward, gap = world.feedback(action)
        regret += gap
        policy.update(arms, action, reward)
        times[t] = time.perf_counter() - start
    return {"regret": regret, "times": times, "warmup": policy.warmup}


def check_training(env, agent, name: str, seed: int = 0) -> dict:
    """One training round from identical inputs: :func:`jaxbandits.nets.net_gd` (the call the
    agents make) against :func:`torch_fit` on the full history and on the per-arm statistics.
    Returns the largest parameter differences relative to the largest parameter."""
    import jax
    import jax.numpy as jnp

    from jaxbandits.nets import net_gd

    rng = np.random.default_rng(seed)
    network = agent.network(env.dim)
    kernels = initial_kernels(network, seed)
    num_arms = env.num_arms
    reference = TORCH_REFERENCES[name]
    link, coef = reference.link, reference.penalty_coef(agent)
    anchor_k = [np.zeros_like(k) for k in kernels] if reference.zero_anchor else kernels
    arms = rng.standard_normal((num_arms, env.dim)) / math.sqrt(env.dim)
    pulls = rng.integers(0, num_arms, 3 * num_arms)
    if link == "logistic":
        rewards = (rng.random(pulls.size) < 0.5).astype(np.float64)
    else:
        rewards = 0.3 + 0.5 * rng.standard_normal(pulls.size)
    counts = np.bincount(pulls, minlength=num_arms).astype(np.float64)
    sums = np.bincount(pulls, weights=rewards, minlength=num_arms)

    theta0 = network.init(jax.random.key(seed))
    leaves, treedef = jax.tree.flatten(theta0)
    anchor = jax.tree.unflatten(treedef, [jnp.asarray(k) for k in anchor_k])
    fit = jax.jit(lambda p, a, x, n, s: net_gd(
        network, p, a, x, n, s, coef, learning_rate=float(agent.learning_rate),
        num_steps=int(agent.num_grad_steps), reduction=agent.loss_reduction, link=link))
    expected = [np.asarray(x) for x in jax.tree.leaves(fit(
        theta0, anchor, jnp.asarray(arms, jnp.float32), jnp.asarray(counts, jnp.float32),
        jnp.asarray(sums, jnp.float32)))]

    arms_t = torch.from_numpy(network_inputs(network, arms).astype(np.float32))
    anchor_t = [torch.from_numpy(np.array(k, np.float32)) for k in anchor_k]
    kwargs = dict(coef=coef, lr=float(agent.learning_rate), steps=int(agent.num_grad_steps),
                  reduction=agent.loss_reduction, link=link)
    scale = max(float(np.max(np.abs(k))) for k in expected)
    errors = {}
    for data in ("history", "stats"):
        net = make_torch_mlp(kernels, agent.width)
        if data == "history":
            torch_fit(net, anchor_t, arms_t[torch.as_tensor(pulls)],
                      torch.from_numpy(rewards.astype(np.float32)), None, **kwargs)
        else:
            torch_fit(net, anchor_t, arms_t, torch.from_numpy(counts.astype(np.float32)),
                      torch.from_numpy(sums.astype(np.float32)), **kwargs)
        got = [p.detach().numpy() for p in net.parameters()]
        errors[data] = max(float(np.max(np.abs(a - b))) for a, b in zip(got, expected,
                                                                        strict=True)) / scale
    moved = max(float(np.max(np.abs(a - b))) for a, b in zip(expected, kernels, strict=True))
    return {"errors": errors, "moved": moved / scale, "ok": max(errors.values()) < 1e-3}


def flatness(env, agent, horizons: list[int], runs: int, *, repeats: int, chunk_size: int,
             seed: int) -> list:
    """One simulate call per horizon (the best of ``repeats``); the per-round time of each
    window between consecutive horizons, from the differences of the wall times."""
    import jaxbandits as jb

    rows, prev_h, prev_wall = [], 0, 0.0
    for h in horizons:
        wall = min(jb.simulate(env, agent, seed, h, runs, progress=False,
                               chunk_size=chunk_size).wall_time for _ in range(repeats))
        window = (wall - prev_wall) / (h - prev_h)
        rows.append({"horizon": h, "rate": runs * h / wall, "window": (prev_h + 1, h),
                     "ms_per_round": 1e3 * window})
        prev_h, prev_wall = h, wall
    return rows


# ------------------------------------------------------------------------------------------------
# Command line.


def parse_entry(text: str) -> tuple[str, dict]:
    """``name[:field=value...]`` -> ``(name, overrides)``."""
    name, overrides = parse_agent_spec(text)
    return name, dict(overrides)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--agents", default=DEFAULT_AGENTS,
                   help="comma-separated agents, each name[:field=value...] (PyTorch "
                        f"references: {', '.join(TORCH_REFERENCES)}); an agent jaxbandits does "
                        "not have is skipped with a note")
    p.add_argument("--runs", type=int_list, default=None,
                   help="comma-separated run counts (default 1,10,100; quick: 1,2)")
    p.add_argument("--horizon", type=int, default=None,
                   help="JAX rounds per timed simulate call, rounded up to a multiple of the "
                        "agent's update_every (default 20; quick: 2)")
    p.add_argument("--chunk-size", type=int, default=None,
                   help="simulate's chunk_size for every JAX call, so that the timing, flatness "
                        "and regret runs of a run count share one compiled program "
                        "(default 10; quick: 2)")
    p.add_argument("--flat-horizons", type=int_list, default=None,
                   help="horizons of the flatness runs (default 50,200,800, and B/2,B,2B for "
                        "an agent with a ring buffer of B rows; quick: 4,8)")
    p.add_argument("--flat-runs", type=int, default=1, help="runs of the flatness runs")
    p.add_argument("--torch-horizon", type=int, default=None,
                   help="rounds per PyTorch seed, also the horizon of the regret check "
                        "(default: the warm-up plus 60, neurallog-ucb-2 the paper's 2000; "
                        "quick: the warm-up plus 2, or one training period)")
    p.add_argument("--torch-data", choices=("history", "stats", "both"), default=None,
                   help="the PyTorch reference's training data: the full history (the papers' "
                        "code), the per-arm statistics, or both (default both; quick: history)")
    p.add_argument("--torch-threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--check-seeds", type=int, default=None,
                   help="PyTorch seeds (timed and regret-checked) (default 3; quick: 1)")
    p.add_argument("--check-runs", type=int, default=None,
                   help="JAX runs of the regret check (default 100; quick: 2)")
    p.add_argument("--repeats", type=int, default=None,
                   help="timing trials per JAX measurement, best reported (default 2; quick: 1)")
    p.add_argument("--min-time", type=float, default=None,
                   help="seconds of JAX wall time per trial (default 1.0; quick: 0.01)")
    p.add_argument("--dim", type=int, default=20, help="d of the quadratic environment")
    p.add_argument("--num-arms", type=int, default=50, help="K of the quadratic environment")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-torch", action="store_true", help="JAX numbers only")
    p.add_argument("--cpu-devices", type=int, default=None, help=CPU_DEVICES_HELP)
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    p.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    args = p.parse_args(argv)
    quick = args.quick
    defaults = {
        "runs": [1, 2] if quick else [1, 10, 100],
        "horizon": 2 if quick else 20,
        "chunk_size": 2 if quick else 10,
        "flat_horizons": [4, 8] if quick else [50, 200, 800],
        "torch_data": "history" if quick else "both",
        "check_seeds": 1 if quick else 3,
        "check_runs": 2 if quick else 100,
        "repeats": 1 if quick else 2,
        "min_time": 0.01 if quick else 1.0,
    }
    # None: an agent with a ring buffer of B rows picks B/2, B, 2B (quick: the defaults)
    args.flat_horizons_set = args.flat_horizons or ([4, 8] if quick else None)
    for field, value in defaults.items():
        if getattr(args, field) is None:
            setattr(args, field, value)
    try:
        args.agents = [parse_entry(a) for a in args.agents.split(",") if a.strip()]
    except ValueError as error:
        p.error(str(error))
    if sorted(args.flat_horizons) != args.flat_horizons:
        p.error("--flat-horizons must increase")
    return args


def _label(name: str, overrides: dict) -> str:
    if not overrides:
        return name
    return name + "[" + ",".join(f"{k}={v}" for k, v in overrides.items()) + "]"


def _torch_horizon(args, agent, env, name: str) -> int:
    """Rounds per PyTorch seed: ``--torch-horizon``, else the reference's own (the paper's T),
    else the warm-up plus 60 rounds (quick: plus one training period)."""
    warmup = env.num_arms if int(agent.warmup) < 0 else int(agent.warmup)
    every = int(getattr(agent, "update_every", 1))
    if args.torch_horizon:
        return args.torch_horizon
    if args.quick:
        return warmup + max(2, every)
    reference = TORCH_REFERENCES.get(name)
    return getattr(reference, "horizon", None) or warmup + max(60, every)


def _round_up(value: int, multiple: int) -> int:
    return max(multiple, -(-value // multiple) * multiple)


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    import jax

    import jaxbandits as jb
    from jaxbandits.registry import agent_names

    jb.use_cpu_cores(args.cpu_devices)

    have_torch = not args.no_torch and _import_torch() is not None
    if have_torch:
        torch.set_num_threads(args.torch_threads)
    print(f"jaxbandits neural throughput benchmark | jax {jax.__version__}, backend "
          f"{jax.default_backend()}, {jax.device_count()} device(s) "
          f"[{jax.devices()[0].device_kind}] | "
          + (f"torch {torch.__version__} ({torch.get_num_threads()} thread(s))" if have_torch
             else "torch: not used") +
          f" | python {platform.python_version()} | {os.cpu_count()} CPU(s), load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"JAX: warmup=0, {args.horizon}+ rounds per call (agents with a ring buffer: the "
          f"PyTorch horizon), chunk "
          f"{args.chunk_size}, best of {args.repeats} trial(s) of >= {args.min_time:g} s; "
          f"flatness at {args.flat_runs} run(s), horizons "
          f"{','.join(map(str, args.flat_horizons))}"
          f"{'; quick mode' if args.quick else ''}")
    if not have_torch:
        why = "--no-torch" if args.no_torch else "PyTorch is not installed"
        print(f"[note] {why}: JAX numbers only. The PyTorch reference is an optional "
              f"benchmark dependency: {INSTALL_HINT}")
    sys.stdout.flush()

    known = set(agent_names())
    timing_rows, flat_rows, notes, summary = [], [], [], []
    for name, overrides in args.agents:
        label = _label(name, overrides)
        if name not in known:
            note = f"[skip] {name}: jaxbandits has no agent of this name (yet)"
            print(note)
            notes.append(note)
            continue
        env_name = REFERENCE_ENVS.get(name, "quadratic")
        env_kwargs = {"dim": args.dim, "num_arms": args.num_arms} if env_name == "quadratic" \
            else {}
        env = jb.make_env(env_name, **env_kwargs)
        agent = jb.make_agent(name, **overrides)
        every = int(getattr(agent, "update_every", 1))
        period = math.lcm(every, args.chunk_size)
        steady = agent.replace(warmup=0)
        reference = TORCH_REFERENCES.get(name) if have_torch else None
        buffer = getattr(agent, "buffer_size", None)
        if buffer is None:  # per-arm statistics: every round after the warm-up costs the same
            horizon = _round_up(args.horizon, period)
            flat_horizons = args.flat_horizons
            timed = f"timed horizon {horizon}"
        else:
            # A ring buffer: training covers the filled rows, so a round costs more as the
            # buffer fills (up to buffer_size rows, flat after), like the papers' code on its
            # history. Time the whole horizon the PyTorch reference plays, so both average the
            # same rounds, and show the growth and the plateau (B/2, B, 2B).
            horizon = _round_up(_torch_horizon(args, agent, env, name), period)
            flat_horizons = args.flat_horizons_set or [
                max(1, buffer // 2), buffer, 2 * buffer]
            timed = (f"timed horizon {horizon} from an empty buffer of {buffer} rows (the "
                     f"PyTorch reference's rounds)")
        print(f"\n== {label} on {env_name} (d={env.dim}, K={env.num_arms}); trains every "
              f"{every} round(s), {agent.num_grad_steps} GD steps; {timed}")
        sys.stdout.flush()

        # PyTorch reference: the training check, then the timed regret-check seeds.
        torch_rates, check = {}, None
        if have_torch and reference is None:
            print(f"[note] {label}: no PyTorch reference; JAX numbers only")
        if reference is not None:
            train = check_training(env, agent, name, seed=args.seed)
            verdict = "consistent" if train["ok"] else "MISMATCH: check the PyTorch reference"
            print(f"[check] {label}: one training round from identical inputs: max |theta_torch"
                  f" - theta_jax| / max |theta| = {train['errors']['history']:.1e} (history), "
                  f"{train['errors']['stats']:.1e} (stats); the round moved theta by "
                  f"{train['moved']:.1e} -> {verdict}")
            warmup = env.num_arms if int(agent.warmup) < 0 else int(agent.warmup)
            torch_horizon = _torch_horizon(args, agent, env, name)
            asked = ["history", "stats"] if args.torch_data == "both" else [args.torch_data]
            modes = [mode for mode in asked if mode in reference.data_modes]
            if not modes:
                modes = list(reference.data_modes[:1])
                print(f"[note] {label}: the PyTorch reference has no {args.torch_data} mode; "
                      f"using {modes[0]}")
            regrets = []
            for mode in modes:
                rates, early, late = [], [], []
                # the regret check uses the papers' data (history) on every seed; the other
                # mode is timed on one seed
                seeds = args.check_seeds if mode == modes[0] else 1
                for s in range(seeds):
                    out = torch_run(env, agent, name, torch_horizon, 10_000 + s, mode)
                    if mode == modes[0]:
                        regrets.append(out["regret"])
                    times = out["times"][out["warmup"]:]
                    if times.size:
                        rates.append(times.size / times.sum())
                        w = max(1, min(max(10, 2 * every), times.size // 3))
                        early.append(1e3 * times[:w].mean())
                        late.append(1e3 * times[-w:].mean())
                if rates:
                    best = int(np.argmax(rates))
                    torch_rates[mode] = rates[best]
                    print(f"[torch] {label} ({mode}): {fmt_rate(rates[best])} seed-steps/s over"
                          f" rounds {warmup + 1}-{torch_horizon} (best of {len(rates)} seed(s));"
                          f" {early[best]:.1f} ms per round early, {late[best]:.1f} ms late")
                    sys.stdout.flush()
            check_runs = args.check_runs
            result = jb.simulate(env, agent, args.seed, torch_horizon, check_runs,
                                 progress=False, chunk_size=args.chunk_size)
            jax_mean, jax_half = result.final("regret")
            np_mean = float(np.mean(regrets))
            np_half = (1.96 * float(np.std(regrets, ddof=1)) / math.sqrt(len(regrets))
                       if len(regrets) > 1 else 0.0)
            margin = 2.0 * math.hypot(np_half, jax_half) + 0.15 * abs(jax_mean)
            consistent = abs(np_mean - jax_mean) <= margin
            check = {"train": train, "consistent": consistent}
            verdict = "consistent" if consistent else "MISMATCH: check the PyTorch reference"
            print(f"[check] {label}: final regret at T={torch_horizon}: PyTorch "
                  f"({modes[0]}) {np_mean:.2f} +- {np_half:.2f} ({len(regrets)} seed(s)), JAX "
                  f"{jax_mean:.2f} +- {jax_half:.2f} ({check_runs} runs) -> {verdict}")
            sys.stdout.flush()
        torch_rate = max(torch_rates.values()) if torch_rates else None
        torch_mode = max(torch_rates, key=torch_rates.get) if torch_rates else None

        # JAX: steady-state rate per run count, then flatness.
        for runs in args.runs:
            m = time_jax(env, steady, horizon, runs, repeats=args.repeats,
                         min_time=args.min_time, chunk_size=args.chunk_size, seed=args.seed)
            ratio = m["rate"] / torch_rate if torch_rate else None
            timing_rows.append({"agent": label, "runs": runs, "horizon": horizon, **m,
                                "torch": torch_rate, "torch_mode": torch_mode, "ratio": ratio})
            print(f"[jax]   {label} runs={runs}: {fmt_rate(m['rate'])} seed-steps/s, compile "
                  f"{m['compile']:.2f} s, {m['calls']} call(s)")
            sys.stdout.flush()
        horizons = [_round_up(h, period) for h in flat_horizons]
        horizons = sorted(set(horizons))
        rows = flatness(env, steady, horizons, args.flat_runs, repeats=args.repeats,
                        chunk_size=args.chunk_size, seed=args.seed)
        for row in rows:
            flat_rows.append({"agent": label, "runs": args.flat_runs, **row})
        first, last = rows[0]["ms_per_round"], rows[-1]["ms_per_round"]
        print(f"[flat]  {label}: {first:.2f} ms per round in rounds {rows[0]['window'][0]}-"
              f"{rows[0]['window'][1]}, {last:.2f} in rounds {rows[-1]['window'][0]}-"
              f"{rows[-1]['window'][1]} (late / early = {last / first:.2f})")
        sys.stdout.flush()
        summary.append((label, check))

    print()
    header = ["agent", "runs", "horizon", "compile s", "wall s", "JAX seed-steps/s",
              "PyTorch seed-steps/s", "ratio"]
    body = [[r["agent"], str(r["runs"]), str(r["horizon"]), f"{r['compile']:.2f}",
             f"{r['wall']:.2f}", fmt_rate(r["rate"]),
             fmt_rate(r["torch"]) + (f" ({r['torch_mode']})" if r["torch_mode"] else ""),
             f"{r['ratio']:.1f}x" if r["ratio"] else "-"] for r in timing_rows]
    if body:
        print_table(header, body, args.markdown)
        print()
        header = ["agent", "runs", "horizon", "JAX seed-steps/s", "rounds", "ms per round"]
        body = [[r["agent"], str(r["runs"]), str(r["horizon"]), fmt_rate(r["rate"]),
                 f"{r['window'][0]}-{r['window'][1]}", f"{r['ms_per_round']:.2f}"]
                for r in flat_rows]
        print_table(header, body, args.markdown)
        print()
    for note in notes:
        print(note)
    top = max(args.runs)
    for label, check in summary:
        row = next(r for r in timing_rows if r["agent"] == label and r["runs"] == top)
        if row["ratio"] is None:
            why = "PyTorch not used" if not have_torch else "no PyTorch reference"
            print(f"ratio {label} at {top} runs: - ({why})")
            continue
        status = ""
        if top >= TARGET_RUNS:
            met = "met" if row["ratio"] >= TARGET_RATIO else "NOT met"
            status = f" (target >= {TARGET_RATIO:g}x at {TARGET_RUNS} runs: {met})"
        checks = "" if check is None or (check["train"]["ok"] and check["consistent"]) else \
            " [reference check failed]"
        print(f"ratio {label} at {top} runs: {row['ratio']:.1f}x against PyTorch "
              f"({row['torch_mode']}){status}{checks}")
    if not have_torch:
        print(f"PyTorch reference not run; to compare, install it: {INSTALL_HINT}")
    print(f"total benchmark time {time.perf_counter() - t0:.1f} s; load average at the end "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
