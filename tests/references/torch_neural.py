"""PyTorch references of the neural agents: one seed, a Python loop per step (the papers' code).

The correctness oracles of the neural agents (Ensemble++, LMC-TS, neural ES / UCB / TS, NVLDB
and NDB): NumPy twins of the environments (``NUMPY_ENVS``), the PyTorch network and training
shared by the references, one reference class per agent (``TORCH_REFERENCES``, with the
environment each runs on in ``REFERENCE_ENVS``), :func:`torch_run` (one seed) and
:func:`check_training` (one training round of the JAX agent against the reference's, from
identical inputs). The tests check them against the agents; ``python -m
benchmarks.throughput_neural`` times the engine against them. torch is imported lazily
(:func:`import_torch`), so this module imports without it.
"""

from __future__ import annotations

import math
import time

import numpy as np

torch = None  # the torch module, once import_torch() has found it


def to_torch(array: np.ndarray):
    """``torch.from_numpy`` on the reference's device (``--torch-device``; factory functions
    such as ``torch.zeros`` follow ``torch.set_default_device``)."""
    return torch.from_numpy(array).to(torch.get_default_device())


def import_torch():
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


class NumpyDuelingSynthetic:
    """``dueling-synthetic`` (and ``dueling-square`` etc.): per run ``theta ~ U[-1, 1]^d``; each
    round K rows ``U[-1, 1]^d`` divided by their norms (Listing 1); the pair ``(k1, k2)`` gets
    ``o ~ Bernoulli(sigmoid(u_k1 - u_k2))`` and the average regret ``u* - (u_k1 + u_k2) / 2``."""

    def __init__(self, env, rng: np.random.Generator):
        if env.instance_seed is not None or env.link != "btl":
            raise ValueError("the NumPy dueling twin draws one instance per run, BTL link")
        self.rng = rng
        self.dim, self.num_arms = env.dim, env.num_arms
        self.theta = rng.uniform(-1.0, 1.0, env.dim)
        self.matrix = rng.uniform(-1.0, 1.0, (env.dim, env.dim)) if env.uses_matrix else None
        self.utility, self.form = env.utility, env.quadratic_form
        self.u = None

    def _utilities(self, x: np.ndarray) -> np.ndarray:
        inner = x @ self.theta
        if self.utility == "quadratic":
            return inner**2 if self.form == "vector" else np.sum((x @ self.matrix) ** 2, -1)
        return {"linear": inner, "cosine": np.cos(3.0 * inner),
                "square": 10.0 * inner**2}[self.utility]

    def observe(self) -> np.ndarray:
        x = self.rng.uniform(-1.0, 1.0, (self.num_arms, self.dim))
        x = x / np.linalg.norm(x, axis=-1, keepdims=True)
        self.u = self._utilities(x)
        return x

    def feedback(self, action) -> tuple[float, float]:
        first, second = float(self.u[action[0]]), float(self.u[action[1]])
        gap = first - second
        prob = 1.0 / (1.0 + math.exp(-gap)) if gap >= 0 else 1.0 - 1.0 / (1.0 + math.exp(gap))
        return float(self.rng.random() < prob), float(self.u.max()) - 0.5 * (first + second)


class NumpyQuadraticPool:
    """``quadratic-pool`` (Ensemble++'s Quadratic): ``scale x^T Theta Theta^T x + N(0,
    noise_std^2)``, ``Theta`` ``(d, d)`` i.i.d. ``N(0, 1)``; each round K distinct vectors of a
    pool of P unit vectors (per run; ``instance="authors"`` / ``"authors_recipe"``: the shared
    instance and subset sequence, :func:`jaxbandits.envs.nonlinear.authors_pool_draws`)."""

    def __init__(self, env, rng: np.random.Generator):
        self.rng = rng
        self.num_arms, self.pool_size = env.num_arms, env.pool_size
        if env.shares_instance:
            from jaxbandits.envs.nonlinear import authors_pool_draws

            pool, theta, self.subsets = authors_pool_draws(
                env.authors_seed, env.dim, env.pool_size, env.num_arms, env.authors_rounds, True)
        else:
            theta = rng.standard_normal((env.dim, env.dim))
            g = rng.standard_normal((env.pool_size, env.dim))
            pool = g / np.linalg.norm(g, axis=-1, keepdims=True)
            self.subsets = None
        self.pool = np.asarray(pool, np.float32)
        self.pool_means = float(env.scale) * np.sum((np.asarray(pool, np.float64) @ theta) ** 2,
                                                    axis=-1)
        self.noise_std = float(env.noise_std)
        self.t, self.ids = 0, None

    def observe(self) -> np.ndarray:
        if self.subsets is not None:
            self.ids = np.asarray(self.subsets[self.t % self.subsets.shape[0]], np.int64)
        else:
            self.ids = self.rng.choice(self.pool_size, self.num_arms, replace=False)
        self.t += 1
        return self.pool[self.ids]

    def feedback(self, action: int) -> tuple[float, float]:
        means = self.pool_means[self.ids]
        mean = float(means[action])
        return (mean + self.noise_std * float(self.rng.standard_normal()),
                float(means.max()) - mean)


class NumpyVectorQuadratic:
    """``vector-quadratic`` (LMC-TS's ``QuadBandit``): ``scale <x, theta>^2 + N(0,
    noise_std^2)``, theta a unit vector per run, K fresh unit contexts every round."""

    def __init__(self, env, rng: np.random.Generator):
        if env.arm_prior != "sphere" or not env.fresh_arms or env.instance_seed is not None:
            raise ValueError("the NumPy vector-quadratic twin covers fresh unit-sphere contexts, "
                             "one instance per run")
        self.rng = rng
        self.dim, self.num_arms = env.dim, env.num_arms
        g = rng.standard_normal(env.dim)
        self.theta = g / np.linalg.norm(g)
        self.scale, self.noise_std = float(env.scale), float(env.noise_std)
        self.means = None

    def observe(self) -> np.ndarray:
        x = self.rng.standard_normal((self.num_arms, self.dim))
        x = x / np.linalg.norm(x, axis=-1, keepdims=True)
        self.means = self.scale * (x @ self.theta) ** 2
        return x.astype(np.float32)

    def feedback(self, action: int) -> tuple[float, float]:
        mean = float(self.means[action])
        return (mean + self.noise_std * float(self.rng.standard_normal()),
                float(self.means.max()) - mean)


NUMPY_ENVS = {"quadratic": NumpyQuadratic, "neurallog-synthetic": NumpyNeuralLogSynthetic,
              "quadratic-pool": NumpyQuadraticPool, "vector-quadratic": NumpyVectorQuadratic,
              **{name: NumpyDuelingSynthetic for name in (
                  "dueling-synthetic", "dueling-square", "dueling-cosine", "dueling-quadratic")}}


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
                    layer.weight.copy_(to_torch(np.array(k, np.float32)))
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
    return (values.detach().cpu().numpy().astype(np.float64),
            torch.stack(grads).cpu().numpy().astype(np.float64))


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
    ``data_modes``, ``"history"`` or ``"stats"``) and offers ``act(arms (K, d))`` (an arm, or a
    pair ``(k1, k2)``) and ``update(arms, action, reward)``; its ``warmup`` attribute is the
    number of rounds before training starts. Class attributes: ``link``, ``zero_anchor`` and
    ``penalty_coef(agent)`` (the loss, for :func:`check_training`), ``data_modes`` and
    ``horizon`` (the default PyTorch horizon, None for the warm-up plus 60 rounds). Optional
    class methods: ``initial_params(agent, env, seed)`` (the initial parameters, passed as
    ``kernels``, when theta_0 is more than :func:`initial_kernels` draws) and
    ``check_training(env, agent, seed, quick)`` (its own training check, in place of the
    :func:`~jaxbandits.nets.net_gd` one).

    Optional, for how the benchmark plans the agent's runs (the Li et al. 2024 references set them):
    ``agent_defaults`` (fields given to ``jb.make_agent`` unless ``--agents`` overrides them,
    e.g. a preset); ``growth`` (``"flat"``: a round's cost does not depend on t; ``"buffer"``:
    it grows while a ring buffer fills; ``"history"``: it grows with the whole history; default
    from the agent's ``buffer_size``, None: flat); ``steady_agent(agent)`` (the agent the
    steady-state JAX timing runs) and ``steady_horizon`` (its rounds per call);
    ``warmup_rounds(agent)`` (the rounds the PyTorch rate leaves out) and ``network_of(agent,
    env)`` (the ``network`` argument, when not ``agent.network(env.dim)``).
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
        self.anchor = [to_torch(np.array(k)) for k in kernels]
        self.num_obs = 0
        self.rows: list[int] = []  # history: the pulled arm of each observation
        self.rewards: list[float] = []
        self.counts = np.zeros(num_arms)  # stats
        self.sums = np.zeros(num_arms)
        self.arms_t = None

    def _set_arms(self, arms: np.ndarray) -> None:
        if self.arms_t is None:  # the fixed arm set, transformed once
            self.arms_t = to_torch(network_inputs(self.network, arms).astype(np.float32))

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
            torch_fit(net, self.anchor, inputs, to_torch(targets.astype(np.float32)),
                      None, **kwargs)
        else:
            sums = self.sums if perturbations is None else self.sums + perturbations
            torch_fit(net, self.anchor, self.arms_t,
                      to_torch(self.counts.astype(np.float32)),
                      to_torch(sums.astype(np.float32)), **kwargs)


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
    """NeuralLog-UCB-2 in practical mode (Bae & Lee 2025, App. A, diagonal matrices): rank
    ``f_k + nu nu^_{t-1} sqrt(sum_j g_kj^2 / W_j)`` with ``nu^_t = (1 + sqrt(L) S + L S^2)
    (sqrt(d~_t l_t) + l_t / sqrt(lam)) + 1``, ``d~_t = sum_j log(1 + R sum_s g_sj^2)``,
    ``l_t = log(4 t^2 / delta)``; every ``update_every`` rounds ``num_grad_steps`` GD steps on
    ``sum BCE + lam ||theta||^2`` (mean-normalised) from the current theta over the history (the
    last ``buffer_size`` observations); then ``W <- W + mu'(f(x_a; theta_t)) g_a^2``. The arms
    change every round, so the history holds the played inputs (``data`` is ignored)."""

    link = "logistic"
    zero_anchor = True
    data_modes = ("history",)  # the arms change every round: no per-arm statistics
    horizon = 2000  # the paper's T (Bae & Lee 2025, Sec. 7): a few ms per round, so affordable

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
        self.arms_t = to_torch(network_inputs(self.network, arms).astype(np.float32))
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
        self.inputs.append(self.arms_t[action].cpu().numpy())
        self.rewards.append(reward)
        self.num_obs += 1
        if _train_now(self.num_obs, self.warmup, self.update_every):
            keep = slice(-self.buffer, None) if self.buffer else slice(None)
            inputs = to_torch(np.asarray(self.inputs[keep], np.float32))
            targets = to_torch(np.asarray(self.rewards[keep], np.float32))
            torch_fit(self.net, self.zero_anchor, inputs, targets, None,
                      coef=self.penalty_coef(self.agent),
                      lr=self.lr, steps=self.steps, reduction=self.reduction, link="logistic")
        with torch.no_grad():
            f = float(self.net(self.arms_t[action:action + 1])[0])
        slope = 1.0 / (1.0 + math.exp(-f))
        self.design += slope * (1.0 - slope) * grad * grad


# Dueling references (one seed, a Python loop per step): the pair history, the network and the
# training check that runs the agent's own update function.


def make_torch_feature_net(kernels: list[np.ndarray], biases: list[np.ndarray] | None = None, *,
                           scale: float = 1.0, final_relu: bool = False):
    """``phi(x) = scale relu?(W_L relu(... relu(W_1 x + b_1)) + b_L)`` (``(..., D)``): the
    :class:`jaxbandits.nets.FeatureNetwork` as ``nn.Linear`` layers, with biases when given, in
    the arrays' dtype."""
    nn = torch.nn
    biases = biases or []

    class FeatureNet(nn.Module):
        def __init__(self):
            super().__init__()
            dtype = to_torch(np.asarray(kernels[0])).dtype
            self.layers = nn.ModuleList(
                nn.Linear(k.shape[1], k.shape[0], bias=bool(biases), dtype=dtype)
                for k in kernels)
            with torch.no_grad():
                for i, (layer, k) in enumerate(zip(self.layers, kernels, strict=True)):
                    layer.weight.copy_(to_torch(np.array(k)))
                    if biases:
                        layer.bias.copy_(to_torch(np.array(biases[i])))

        def forward(self, x):
            h = x
            for i, layer in enumerate(self.layers):
                h = layer(h)
                if i < len(self.layers) - 1 or final_relu:
                    h = torch.relu(h)
            return scale * h if scale != 1.0 else h

    return FeatureNet()


def _net_arrays(net_state) -> dict[str, list[np.ndarray]]:
    """``{"kernels": [...], "biases": [...]}`` of a network's ``nnx.State`` (in layer order;
    ``biases`` empty without biases), as NumPy arrays of its dtype."""
    import jax

    out = {}
    for part in ("kernels", "biases"):
        try:
            leaves = jax.tree.leaves(net_state[part])
        except KeyError:
            leaves = []
        out[part] = [np.array(leaf) for leaf in leaves]
    return out


class _TorchDuelingBase:
    """What the dueling references share: the pair history (the last ``buffer_size`` pairs, in
    the agent's ring-buffer order, as tensors of the agent's float dtype), the agent's
    initialisation, and the training check against the agent's own ``update``.

    A subclass defines ``_network_init(state)`` (the initial parameters from the agent's state),
    ``_pair_weight(x1, x2)``, ``_train()``, ``gram()`` (``V`` / ``U`` from the history with the
    current network), ``act`` and ``_params()`` / ``_jax_params(state)`` (the compared
    parameters, in the same order).
    """

    data_modes = ("history",)  # the arms change every round: a pair history, no statistics
    horizon = 100  # see the module docstring (both sides' cost per round grows with t)
    warmup = 0
    #: the check: ``CHECK_PAIRS - 1`` stored pairs, then two agent rounds (the second one
    #: wraps the ring buffer of ``CHECK_PAIRS`` rows; 300 > 256 rows: two blocks).
    CHECK_PAIRS = 300
    CHECK_ARM_SETS = 20  # both select a pair on these many arm sets (half before the rounds)

    @classmethod
    def initial_params(cls, agent, env, seed: int) -> dict:
        """The JAX agent's own initial parameters for ``seed`` (``agent.init``), in its dtype
        (float32 unless ``jax_enable_x64``), which the reference computes in."""
        import jax

        return cls._network_init(agent.init(jax.random.key(seed), env.spec()))

    def __init__(self, agent, network, init, num_arms: int, rng, data: str):
        self.agent, self.network, self.rng = agent, network, rng
        self.num_arms = num_arms
        self.steps = int(agent.num_grad_steps)
        self.lr = float(agent.learning_rate)
        self.reg = float(agent.reg)
        from jaxbandits.core import AUTO_BUFFER

        self.capacity = int(agent.buffer_size or AUTO_BUFFER)
        self.dtype = dtype = to_torch(np.asarray(init["kernels"][0])).dtype
        dim = network.in_features
        self.x1 = torch.zeros((self.capacity, dim), dtype=dtype)
        self.x2 = torch.zeros((self.capacity, dim), dtype=dtype)
        self.outcome = torch.zeros(self.capacity, dtype=dtype)
        self.weight = torch.zeros(self.capacity, dtype=dtype)
        self.num_obs = 0
        self.arms_t = None

    @property
    def num_rows(self) -> int:
        return min(self.num_obs, self.capacity)

    def _history(self):
        n = self.num_rows
        return self.x1[:n], self.x2[:n], self.outcome[:n], self.weight[:n]

    def _tensor(self, x: np.ndarray):
        return to_torch(np.asarray(x)).to(self.dtype)

    def _set_arms(self, arms: np.ndarray) -> None:
        self.arms_t = self._tensor(arms)

    def update(self, arms: np.ndarray, action, reward: float) -> None:
        """Store the pair (row ``num_obs mod B``, as the agent's ring buffer) with its weight
        from the current (selection-time) network, then train."""
        arms_t = self._tensor(arms)
        x1, x2 = arms_t[int(action[0])], arms_t[int(action[1])]
        weight = self._pair_weight(x1, x2)
        row = self.num_obs % self.capacity
        self.x1[row], self.x2[row] = x1, x2
        self.outcome[row], self.weight[row] = float(reward), weight
        self.num_obs += 1
        self._train()

    @classmethod
    def check_training(cls, env, agent, seed: int = 0, quick: bool = False) -> dict:
        """The agent's ``update`` (jitted) against the reference's on identical inputs: the
        agent's initial state with ``CHECK_PAIRS - 1`` stored pairs (random unit contexts,
        outcomes and weights), then the same two rounds (arms, pair, outcome) on both sides;
        compared are the parameters and ``V`` / ``U`` after them, relative to their largest
        entries, and the pairs ``agent.act`` and the reference's ``act`` choose on
        ``CHECK_ARM_SETS`` arm sets, half from the initial state (where the bonuses are wide)
        and half from the state after the rounds (float64 only).

        Run in float64 (``jax.enable_x64`` and double tensors) for the verdict, and in float32
        (what the benchmark runs) for information: Adam's normalised steps amplify float32
        rounding (a gradient entry near 0, a ReLU near its kink) over the ``2 n`` steps, so the
        float32 trajectories drift apart by up to ~1e-2 of the largest parameter although
        both sides do the same arithmetic; in float64 they agree to ~1e-10. ``quick``: float64
        only (one compile of the update instead of two).
        """
        import jax

        errors, moved, same = {}, 0.0, 0
        for precision in ("float64",) if quick else ("float64", "float32"):
            x64 = precision == "float64"
            with jax.enable_x64(x64):
                params, gram, step, pairs = cls._check_once(env, agent, seed, x64)
            errors[f"params, {precision}"] = params
            errors[f"{cls.gram_name}, {precision}"] = gram
            moved = max(moved, step)
            same = same or pairs
        ok = max(v for k, v in errors.items() if k.endswith("float64")) < 1e-6
        return {"errors": errors, "moved": moved, "ok": ok and same == cls.CHECK_ARM_SETS,
                "what": (f"agent.update twice on {cls.CHECK_PAIRS - 1} stored pairs, ring of "
                         f"{cls.CHECK_PAIRS}; the verdict in float64, where rounding cannot "
                         f"mask a difference"),
                "note": (f"; agent.act and the reference choose the same pair on "
                         f"{same}/{cls.CHECK_ARM_SETS} arm sets (before and after)")}

    @classmethod
    def _check_once(cls, env, agent, seed: int, select: bool) -> tuple[float, float, float, int]:
        """One run of :meth:`check_training` in the current default float dtype: (parameter
        error, ``V`` / ``U`` error, how far the rounds moved the parameters, on how many of
        ``CHECK_ARM_SETS`` arm sets both choose the same pair after them (with ``select``;
        else 0))."""
        import jax
        import jax.numpy as jnp

        from jaxbandits.agents.dueling_neural import duel_buffer_init
        from jaxbandits.core import Context, Feedback, float_dtype

        spec = env.spec()
        capacity = cls.CHECK_PAIRS
        agent = agent.replace(buffer_size=capacity)
        rng = np.random.default_rng(seed)
        num, dim, num_arms = capacity - 1, spec.dim, spec.num_arms
        dtype = np.dtype(float_dtype())

        def unit(*shape):
            x = rng.uniform(-1.0, 1.0, shape + (dim,))
            return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(dtype)

        x1, x2 = unit(num), unit(num)
        outcome = (rng.random(num) < 0.5).astype(dtype)
        weight = cls._check_weights(agent, rng, num).astype(dtype)
        rounds = [(unit(num_arms), rng.permutation(num_arms)[:2], float(rng.random() < 0.5))
                  for _ in range(2)]

        state = agent.init(jax.random.key(seed), spec)
        buffer = duel_buffer_init(capacity, dim)
        buffer = buffer.replace(x1=buffer.x1.at[:num].set(x1), x2=buffer.x2.at[:num].set(x2),
                                outcome=buffer.outcome.at[:num].set(outcome),
                                weight=buffer.weight.at[:num].set(weight),
                                num_obs=jnp.asarray(num, jnp.int32))
        state = state.replace(buffer=buffer)
        start = cls._jax_params(state)
        update = jax.jit(lambda s, k, c, a, f: agent.update(s, k, c, a, f))
        for arms, pair, o in rounds:
            state = update(state, jax.random.key(1), Context(arms=jnp.asarray(arms)),
                           jnp.asarray(pair, jnp.int32),
                           Feedback(reward=jnp.asarray(o, dtype), regret=jnp.asarray(0.0, dtype)))
        expected = cls._jax_params(state)
        expected_gram = np.asarray(state.gram)

        network = agent.network(dim)
        policy = cls(agent, network, cls.initial_params(agent, env, seed), num_arms,
                     np.random.default_rng(seed), "history")
        for name, values in (("x1", x1), ("x2", x2), ("outcome", outcome), ("weight", weight)):
            getattr(policy, name)[:num] = to_torch(values)
        policy.num_obs = num
        for arms, pair, o in rounds:
            policy.update(arms, pair, o)
        got = policy._params()
        gram = policy.gram().cpu().numpy()

        scale = max(float(np.max(np.abs(a))) for a in expected)
        params_error = max(float(np.max(np.abs(a - b))) for a, b in zip(got, expected,
                                                                        strict=True)) / scale
        gram_error = float(np.max(np.abs(gram - expected_gram))) / float(np.max(np.abs(
            expected_gram)))
        moved = max(float(np.max(np.abs(a - b))) for a, b in zip(expected, start,
                                                                 strict=True)) / scale
        same = 0
        if select:  # from the initial state (wide bonuses) and from the one after the rounds
            act = jax.jit(lambda s, k, c: agent.act(s, k, c)[0])
            fresh = cls(agent, network, cls.initial_params(agent, env, seed), num_arms,
                        np.random.default_rng(seed), "history")
            sides = [(agent.init(jax.random.key(seed), spec), fresh), (state, policy)]
            for i in range(cls.CHECK_ARM_SETS):
                jax_state, reference = sides[2 * i // cls.CHECK_ARM_SETS]
                arms = unit(num_arms)
                pair = act(jax_state, jax.random.key(2), Context(arms=jnp.asarray(arms)))
                same += tuple(int(k) for k in pair) == tuple(reference.act(arms))
        return params_error, gram_error, moved, same


@torch_reference("nvldb-ucb-asym", env="dueling-square")
class TorchNVLDB(_TorchDuelingBase):
    """NVLDB-UCB-ASYM as Algorithm 1 with Listing 2 (Oh et al. 2026, Sec. 4, App. E.2): each
    round ``Phi = phi(X; W)`` (the listing's ``grad_list``, ``df/dtheta``), ``u = Phi theta``,
    ``V = lambda I + sum_i w_i dphi_i dphi_i^T`` rebuilt from the history with the current
    network (App. E.2), then Listing 2's loop over the arms: ``k1 = argmax u``, ``k2 = argmax_{j
    != k1} u_j + a sqrt(max(z^T V^{-1} z, 0))``, ``z = phi_j - phi_k1`` (the listing inverts
    ``V`` inside the loop; here once per round, which only makes the reference faster). Observe,
    store the pair with ``w = 1 / max(sigma_hat, eps)^2``, ``sigma_hat^2 = g (1 - g)`` at the
    selection-time gap (1 for NLDB), and take ``n`` warm-started ``torch.optim.Adam`` steps (one
    optimiser for the whole run) on ``sum_i w_i softplus(-(2 o_i - 1)(f(x_i1) - f(x_i2))) +
    lambda/2 ||theta - theta_0||^2`` over the whole history."""

    gram_name = "V"

    def __init__(self, agent, network, init, num_arms, rng, data):
        if (agent.rule != "ucb-asym" or agent.gram != "recompute" or agent.link != "btl"
                or agent.net_init == "symmetric"):
            raise ValueError("the PyTorch NVLDB reference covers UCB-ASYM, gram='recompute', "
                             "the BTL link and the torch init")
        super().__init__(agent, network, init, num_arms, rng, data)
        self.explore = float(agent.explore_scale)
        self.eps = float(agent.eps)
        self.aware = agent.variance == "aware"
        self.update_every = int(agent.update_every)
        self.reset_optimizer = bool(agent.reset_optimizer)
        self.forbid_self_duel = bool(agent.forbid_self_duel)
        scale = math.sqrt(network.width) if network.scale_output else 1.0
        self.features = make_torch_feature_net(init["kernels"], scale=scale,
                                               final_relu=network.final_relu)
        self.theta = torch.nn.Parameter(to_torch(init["theta"].copy()))
        self.theta0 = to_torch(init["theta"].copy())
        self.optimizer = self._optimizer()

    def _optimizer(self):
        return torch.optim.Adam([self.theta, *self.features.parameters()], lr=self.lr)

    @staticmethod
    def _check_weights(agent, rng, num: int) -> np.ndarray:
        if agent.variance != "aware":
            return np.ones(num)
        sigma = rng.uniform(0.0, 0.5, num)
        return 1.0 / np.maximum(sigma, float(agent.eps)) ** 2

    @staticmethod
    def _network_init(state) -> dict:
        arrays = _net_arrays(state.params.net)
        return {"theta": np.array(state.params.theta), **arrays}

    @staticmethod
    def _jax_params(state) -> list[np.ndarray]:
        return [np.asarray(state.params.theta)] + _net_arrays(state.params.net)["kernels"]

    def _params(self) -> list[np.ndarray]:
        return [self.theta.detach().cpu().numpy().copy()] + [
            p.detach().cpu().numpy().copy() for p in self.features.parameters()]

    def gram(self):
        x1, x2, _, w = self._history()
        with torch.no_grad():
            dphi = self.features(x1) - self.features(x2)
            gram = (dphi * w[:, None]).T @ dphi
        return gram + self.reg * torch.eye(gram.shape[0], dtype=self.dtype)

    def act(self, arms: np.ndarray):
        self._set_arms(arms)
        with torch.no_grad():
            grad_list = self.features(self.arms_t)  # df/dtheta of each arm
            utilities = grad_list @ self.theta
            inverse = torch.linalg.inv(self.gram())
        # Listing 2
        at_1 = int(torch.argmax(utilities))
        at_2, max_score = at_1, -np.inf
        for j in range(len(utilities)):
            if self.forbid_self_duel and j == at_1:
                continue
            zt_j1 = grad_list[j] - grad_list[at_1]
            conf_term = torch.clamp(zt_j1 @ inverse @ zt_j1, min=0)
            sigma = self.explore * torch.sqrt(conf_term)
            action_score = utilities[j].item() + sigma.item()
            if action_score > max_score:
                max_score, at_2 = action_score, j
        return at_1, at_2

    def _pair_weight(self, x1, x2) -> float:
        if not self.aware:
            return 1.0
        with torch.no_grad():
            delta = (self.features(torch.stack([x1, x2])) @ self.theta)
            prob = torch.sigmoid(delta[0] - delta[1])
            sigma = torch.sqrt(prob * (1.0 - prob))
            return float(1.0 / torch.clamp(sigma, min=self.eps) ** 2)

    def _train(self) -> None:
        if self.num_obs % self.update_every:
            return
        if self.reset_optimizer:
            self.optimizer = self._optimizer()
        x1, x2, o, w = self._history()
        sign = 2.0 * o - 1.0
        for _ in range(self.steps):
            self.optimizer.zero_grad()
            delta = self.features(x1) @ self.theta - self.features(x2) @ self.theta
            loss = (w * torch.nn.functional.softplus(-sign * delta)).sum()
            loss = loss + 0.5 * self.reg * ((self.theta - self.theta0) ** 2).sum()
            loss.backward()
            self.optimizer.step()


@torch_reference("ndb-ucb", env="dueling-square")
class TorchNDB(_TorchDuelingBase):
    """NDB-UCB as APOHF's ``NeuralDBDiag`` (Oh et al. 2026, Sec. 6; APOHF is the NDB code): an
    MLP ``d -> 32 -> 32 -> 1``
    with biases; each round the per-sample full gradients of the arms and of the stored
    contexts (``torch.func.vmap`` of ``grad``, what BackPACK's ``BatchGrad`` gives the original
    code), ``U = diag(lambda I + sum_i (g_i1 - g_i2)^2)`` with the current network, ``k1 =
    argmax mu``, ``sigma_j = sqrt(sum_k nu (g_j - g_k1)_k^2 / U_k)``, ``k2`` the best of
    ``argsort(mu + sigma)`` other than ``k1``. Observe, store the pair, reset the network to its
    initial state and take ``n`` full-batch steps of a fresh ``torch.optim.Adam(lr,
    weight_decay=lambda / (t + 50))`` on the mean BCE-with-logits of ``f(x_i1) - f(x_i2)``."""

    gram_name = "U"

    def __init__(self, agent, network, init, num_arms, rng, data):
        if agent.rule != "ucb-asym" or agent.design != "diag" or not agent.forbid_self_duel:
            raise ValueError("the PyTorch NDB reference covers UCB-ASYM with a diagonal U and "
                             "k2 != k1 (APOHF's NeuralDBDiag)")
        super().__init__(agent, network, init, num_arms, rng, data)
        self.nu = float(agent.explore_scale)
        self.net = make_torch_feature_net(init["kernels"], init["biases"])
        self.init_state = {k: v.clone() for k, v in self.net.state_dict().items()}
        # the flat gradient in the library's order (biases, then kernels), so U compares
        self.names = ([f"layers.{i}.bias" for i in range(len(init["biases"]))]
                      + [f"layers.{i}.weight" for i in range(len(init["kernels"]))])
        from torch.func import functional_call, grad, vmap

        def value(params, x):
            return functional_call(self.net, params, (x[None],))[0, 0]

        self._batch_grad = vmap(grad(value), in_dims=(None, 0))

    @staticmethod
    def _check_weights(agent, rng, num: int) -> np.ndarray:
        return np.ones(num)

    @staticmethod
    def _network_init(state) -> dict:
        return _net_arrays(state.params0)

    @staticmethod
    def _jax_params(state) -> list[np.ndarray]:
        arrays = _net_arrays(state.params)
        return arrays["biases"] + arrays["kernels"]

    def _params(self) -> list[np.ndarray]:
        named = dict(self.net.named_parameters())
        return [named[n].detach().cpu().numpy().copy() for n in self.names]

    def _gradients(self, x):
        """``(N, p)`` per-sample flat gradients of ``f`` at the rows of ``x``."""
        params = {k: v.detach() for k, v in self.net.named_parameters()}
        grads = self._batch_grad(params, x)
        return torch.cat([grads[n].reshape(x.shape[0], -1) for n in self.names], dim=1)

    def gram(self):
        x1, x2, _, _ = self._history()
        n = x1.shape[0]
        if n == 0:
            return torch.full((sum(p.numel() for p in self.net.parameters()),), self.reg,
                              dtype=self.dtype)
        g = self._gradients(torch.cat([x1, x2]))
        feature = g[:n] - g[n:]
        return (feature * feature).sum(0) + self.reg

    def act(self, arms: np.ndarray):
        self._set_arms(arms)
        with torch.no_grad():
            mu = self.net(self.arms_t)[:, 0]
        g_list = self._gradients(self.arms_t)
        arm1 = int(torch.argmax(mu))
        u = self.gram()
        feature_arm_2 = g_list - g_list[arm1]
        sigma = torch.sqrt(torch.sum(self.nu * feature_arm_2 * feature_arm_2 / u, dim=1))
        sorted_idx = torch.argsort(mu + sigma, descending=True)
        arm2 = int(sorted_idx[1]) if int(sorted_idx[0]) == arm1 else int(sorted_idx[0])
        return arm1, arm2

    def _pair_weight(self, x1, x2) -> float:
        return 1.0

    def _train(self) -> None:
        self.net.load_state_dict(self.init_state)
        x1, x2, o, _ = self._history()
        n = x1.shape[0]
        optimizer = torch.optim.Adam(self.net.parameters(), lr=self.lr,
                                     weight_decay=self.reg / (n + 50))
        for _ in range(self.steps):
            optimizer.zero_grad()
            logits = (self.net(x1) - self.net(x2)).reshape(-1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, o)
            loss.backward()
            optimizer.step()


# Ensemble++ and LMC-TS references (Li et al. 2024, Alg. 1, App. F.2): the authors' loops, one
# seed at a time, with the agent's initial parameters; their training checks run the agent's own
# ``update`` on identical inputs (and the same random draws, taken from the agent's keys).


def _flat_state(state) -> dict[str, np.ndarray]:
    """``{"backbone.layers.0.kernel": array, ...}``: the leaves of an ``nnx.State`` (any pytree)
    by their dotted path, as NumPy arrays of their dtype."""
    import jax

    out = {}
    for path, leaf in jax.tree_util.tree_flatten_with_path(state)[0]:
        names = [str(getattr(k, "key", getattr(k, "idx", getattr(k, "name", k)))) for k in path
                 if not (isinstance(k, jax.tree_util.GetAttrKey) and k.name == "value")]
        out[".".join(names)] = np.array(leaf)
    return out


def _torch_trunk(arrays: dict, prefix: str, activation: str):
    """The library's :class:`~jaxbandits.nets.MLPTrunk` (``{prefix}.layers.i.kernel`` ``(in,
    out)`` and ``.bias``) as ``nn.Linear`` layers, each followed by the activation (``"relu"``
    or ``"leaky_relu"``, slope 0.01), in the arrays' dtype; returns ``(nn.Sequential, [(path,
    parameter, transposed)])``, the second for reading the parameters back in the library's
    layout."""
    nn = torch.nn
    layers, paths, i = [], [], 0
    while f"{prefix}.layers.{i}.kernel" in arrays:
        kernel = np.asarray(arrays[f"{prefix}.layers.{i}.kernel"])
        bias = np.asarray(arrays[f"{prefix}.layers.{i}.bias"])
        linear = nn.Linear(kernel.shape[0], kernel.shape[1],
                           dtype=to_torch(kernel[:1, :1].copy()).dtype)
        with torch.no_grad():
            linear.weight.copy_(to_torch(kernel.T.copy()))
            linear.bias.copy_(to_torch(bias.copy()))
        paths += [(f"{prefix}.layers.{i}.kernel", linear.weight, True),
                  (f"{prefix}.layers.{i}.bias", linear.bias, False)]
        layers += [linear, nn.ReLU() if activation == "relu" else nn.LeakyReLU(0.01)]
        i += 1
    return nn.Sequential(*layers), paths


def _read_params(paths) -> dict[str, np.ndarray]:
    """The parameters of ``[(path, parameter, transposed)]`` in the library's layout."""
    out = {}
    for path, param, transposed in paths:
        value = param.detach().cpu().numpy()
        out[path] = (value.T if transposed else value).copy()
    return out


def _relative_error(got: dict, expected: dict) -> float:
    """``max |got - expected| / max |expected|`` over the leaves of ``expected``."""
    scale = max(float(np.max(np.abs(v))) for v in expected.values())
    return max(float(np.max(np.abs(got[k] - v))) for k, v in expected.items()) / scale


def _unit_rows(rng, shape, dtype) -> np.ndarray:
    x = rng.standard_normal(shape)
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(dtype)


def make_torch_ensemble_pp(arrays: dict, *, posterior_scale: float, prior_scale: float):
    """The authors' ``Ensemble_exp_Net`` (``feature_sg=True``, ``based_prior=False``;
    ``szrlee/Ensemble_Plus_Plus`` ``network/ensemble_exp.py``) with the agent's parameters: a
    ReLU trunk ``basedmodel``, ``based_out = nn.Linear(D, C, bias=False)``, the trainable factor
    ``W`` ``(C D, M)`` and the frozen prior ``W0`` (``requires_grad=False``). ``forward(z, x)``
    as theirs: ``theta = F.linear(z, W)`` reshaped to ``(b, n, C, D)`` per row and index (the
    whole index set materialised for each minibatch row), ``out = <x~, b> + s_post <sg x~,
    theta> + s_prior <sg x~, theta0>``; ``z`` ``(1, M)`` (acting, broadcast over the K arms) or
    ``(B, N, M)`` (training)."""
    nn = torch.nn
    functional = torch.nn.functional

    class EnsemblePPNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.basedmodel, self.paths = _torch_trunk(arrays, "backbone", "relu")
            kernel = np.asarray(arrays["base.kernel"])  # (D, C)
            self.hidden_dim, self.action_num = kernel.shape
            self.based_out = nn.Linear(*kernel.shape, bias=False,
                                       dtype=to_torch(kernel[:1, :1].copy()).dtype)
            with torch.no_grad():
                self.based_out.weight.copy_(to_torch(kernel.T.copy()))
            self.weight = nn.Parameter(to_torch(np.array(arrays["factor"])))
            self.prior_weight = nn.Parameter(to_torch(np.array(arrays["prior"])),
                                             requires_grad=False)
            self.paths += [("base.kernel", self.based_out.weight, True),
                           ("factor", self.weight, False)]
            self.posterior_scale, self.prior_scale = posterior_scale, prior_scale

        def forward(self, z, x):
            logits = self.basedmodel(x)
            prior_logits = logits.detach()
            based_out = self.based_out(logits)
            logits = logits.detach()
            theta = functional.linear(z, self.weight)
            prior_theta = functional.linear(z, self.prior_weight)
            shape = (theta.shape[0], -1, self.action_num, self.hidden_dim)
            out = torch.einsum("bd,bnad -> bna", logits, theta.view(shape))
            prior_out = torch.einsum("bd,bnad -> bna", prior_logits, prior_theta.view(shape))
            uncertainty = self.posterior_scale * out + self.prior_scale * prior_out
            if uncertainty.shape[1] == 1:
                uncertainty = uncertainty.squeeze(1)
            else:
                based_out = based_out.unsqueeze(1)
            return (based_out + uncertainty).squeeze(-1)

    return EnsemblePPNet()


@torch_reference("neural-ensemble-pp", env="quadratic-pool")
class TorchEnsemblePP:
    """Neural Ensemble++ as the authors run it (``Solution.Ensemble_exp`` with
    ``Ensemble_exp_Solution``; Li et al. 2024, Sec. 3.3, Alg. 1): act on ``f(x, zeta)``, ``zeta`` a
    sphere draw times ``sqrt(M)`` shared by the K arms, argmax with random ties; store
    ``(x, y, z)`` in a ring buffer of NumPy arrays with ``z`` uniform on the sphere; once more than
    ``update_start`` points are in (the authors' ``t >= update_start``, t the 0-based round) and
    at every ``update_every``-th point, G steps of one
    ``torch.optim.Adam(trainable, lr)`` kept for the whole run, each on B rows drawn with
    ``randint(0, |D|)``, loss ``mean_s mean_xi (y_s + c <xi, z_s> - f(x_s, xi))^2`` over the 2M
    indices ``+-sqrt(M) e_m`` (built per step as their ``PMCoord`` update noise ``(B, 2M, M)``),
    with ``weight_decay = reg / |D|`` set before every step.

    ``_zeta``, ``_z`` and ``_indices`` draw with NumPy, as theirs; the training check feeds the
    agent's draws instead (``feed``)."""

    data_modes = ("history",)  # a replay buffer of the played inputs
    horizon = 400  # 128 rounds before training, then 272 training rounds (the timed ones)
    growth = "flat"  # G minibatch steps a round: the cost does not depend on t
    #: JAX rounds per timed call (not --horizon's 20): a run's 10,000-row buffer is allocated
    #: per call, and 100 rounds make that a small part of the call
    steady_horizon = 100
    agent_defaults = {"preset": "quadratic"}  # the brief's (and the authors') quadratic preset
    CHECK_ROWS = 300  # the check's buffer: 298 stored rows, then 3 rounds (the last one wraps)
    CHECK_ROUNDS = 3
    CHECK_ARM_SETS = 10  # scores compared on these many arm sets, before and after the rounds
    #: the float64 verdict: both sides agree to ~1e-16; a perturbation of the perturbation scale
    #: c by 10% already moves the parameters by ~3e-6 of their largest entry
    TOLERANCE = 1e-9

    @staticmethod
    def steady_agent(agent):
        """The agent with training from the first round: every round then costs what a round
        past ``update_start`` costs (G steps on B rows, whatever the buffer holds)."""
        return agent.replace(update_start=1)

    @staticmethod
    def warmup_rounds(agent) -> int:
        """Rounds before the first training (the reference's untimed rounds)."""
        return int(agent.resolved().update_start)

    @staticmethod
    def network_of(agent, env):
        return agent.network(env.spec())

    @classmethod
    def initial_params(cls, agent, env, seed: int) -> dict:
        """The agent's own initial parameters (trainable and frozen) for ``seed``, by path."""
        import jax

        state = agent.init(jax.random.key(seed), env.spec())
        return {**_flat_state(state.params), **_flat_state(state.frozen)}

    def __init__(self, agent, network, init, num_arms: int, rng, data: str):
        from jaxbandits.nets import MLPBackbone

        res = agent.resolved()
        backbone = res.backbone
        if (agent.head != "ensemble++" or res.loss != "regression" or res.inputs != "arms"
                or res.reference != "sphere" or res.perturbation != "sphere"
                or res.update_index != "coordinate" or not res.train_backbone
                or not isinstance(backbone, MLPBackbone) or backbone.activation != "relu"):
            raise ValueError("the PyTorch Ensemble++ reference covers the regression head on a "
                             "ReLU MLP backbone, sphere reference and perturbation, coordinate "
                             "update indices (the authors' defaults)")
        self.rng, self.num_arms = rng, num_arms
        self.size_m = int(res.ensemble_size)
        self.batch_size = int(res.batch_size)
        self.capacity = int(agent.buffer_size)
        self.steps, self.every = int(res.num_grad_steps), int(res.update_every)
        self.start = int(res.update_start)
        self.reg, self.coef = float(res.reg), float(res.perturb_std)
        self.net = make_torch_ensemble_pp(init, posterior_scale=float(res.posterior_scale),
                                          prior_scale=float(res.prior_scale))
        self.dtype = self.net.weight.dtype
        self.np_dtype = np.asarray(init["factor"]).dtype
        trainable = [p for p in self.net.parameters() if p.requires_grad]
        self.optimizer = torch.optim.Adam(trainable, lr=float(res.learning_rate),
                                          weight_decay=self.reg)
        dim = np.asarray(init["backbone.layers.0.kernel"]).shape[0]
        self.f = np.zeros((self.capacity, dim), self.np_dtype)
        self.r = np.zeros(self.capacity, self.np_dtype)
        self.z = np.zeros((self.capacity, self.size_m), self.np_dtype)
        self.point, self.size, self.num_obs = 0, 0, 0
        self.warmup = self.start
        self.feed = None  # the check's draws: {"z": [...], "indices": [...]}

    # The authors' NumPy draws (utils.py), or the fed ones.
    def _zeta(self) -> np.ndarray:
        v = self.rng.standard_normal((1, self.size_m)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True) * np.sqrt(self.size_m)

    def _z(self) -> np.ndarray:
        if self.feed is not None:
            return self.feed["z"].pop(0)
        v = self.rng.standard_normal(self.size_m).astype(np.float32)
        return v / np.linalg.norm(v)

    def _indices(self) -> np.ndarray:
        if self.feed is not None:
            return self.feed["indices"].pop(0)
        return self.rng.integers(0, self.size, self.batch_size)

    def _update_noise(self, batch: int) -> np.ndarray:
        """The authors' ``PMCoord`` update noise ``(B, 2M, M)``: ``+-sqrt(M) e_m``."""
        m = self.size_m
        b = np.zeros((2 * m, m), dtype=self.np_dtype)
        b[np.arange(m), np.arange(m)] = 1
        b[np.arange(m) + m, np.arange(m)] = -1
        return np.expand_dims(b, 0).repeat(batch, 0) * np.sqrt(m).astype(self.np_dtype)

    def scores(self, arms: np.ndarray, zeta: np.ndarray) -> np.ndarray:
        """``f(x_k, zeta)`` ``(K,)`` for ``zeta`` ``(1, M)``."""
        with torch.no_grad():
            x = to_torch(np.array(arms, self.np_dtype))
            return self.net(to_torch(np.array(zeta, self.np_dtype)), x).cpu().numpy()

    def act(self, arms: np.ndarray) -> int:
        value = self.scores(arms, self._zeta())
        return int(self.rng.choice(np.flatnonzero(value == value.max())))

    def update(self, arms: np.ndarray, action: int, reward: float) -> None:
        idx = self.point  # the authors' ring buffer (ReplayBuffer.put)
        self.f[idx], self.r[idx], self.z[idx] = arms[action], reward, self._z()
        self.point = (self.point + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)
        self.num_obs += 1
        if self.num_obs > self.start and self.num_obs % self.every == 0:
            for _ in range(self.steps):
                self._learn()

    def _learn(self) -> None:
        index = self._indices()
        f_batch = to_torch(self.f[index])
        r_batch = to_torch(self.r[index])
        z_batch = to_torch(self.z[index])
        update_noise = to_torch(self._update_noise(len(index)))
        target_noise = torch.bmm(update_noise, z_batch.unsqueeze(-1)) * self.coef
        predict = self.net(update_noise, f_batch)
        diff = target_noise.squeeze(-1) + r_batch.unsqueeze(-1) - predict
        loss = diff.pow(2).mean(-1).mean()
        for group in self.optimizer.param_groups:
            group["weight_decay"] = self.reg / self.size
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def params(self) -> dict[str, np.ndarray]:
        """The trainable parameters in the library's layout, by path."""
        return _read_params(self.net.paths)

    @classmethod
    def check_training(cls, env, agent, seed: int = 0, quick: bool = False) -> dict:
        """The agent's ``update`` (jitted) against the reference's on identical inputs: the
        agent's initial state with ``CHECK_ROWS - 2`` stored rows (unit inputs, Gaussian
        rewards, sphere ``z``), then the same ``CHECK_ROUNDS`` rounds (arms, action, reward) on
        both sides (buffer sizes 299, 300, 300 with a wrap: ``weight_decay = reg / |D|`` at two
        sizes; ``3 G`` Adam steps with the state carried). The random draws are the agent's: the
        new row's ``z`` read back from its buffer, and the minibatch indices that
        :func:`~jaxbandits.nets.minibatch_adam` draws (:func:`~jaxbandits.nets.replay_sample`
        on ``fold_in(key_train, i)``, ``key_train`` the second half of the update key, as
        ``agent.update`` splits it), replayed here from the same keys: a change in the
        library's key usage shows as a mismatch, not as a silent pass. Compared: the trainable
        parameters after the rounds, and the arm scores ``f(x, zeta)`` (``zeta`` from the act
        key, as ``agent.scores`` draws it) on ``CHECK_ARM_SETS`` arm sets before and after.

        In float64 for the verdict (Adam's normalised steps amplify float32 rounding) and in
        float32 for information (not with ``quick``)."""
        import jax

        errors, moved, same = {}, 0.0, 0
        for precision in ("float64",) if quick else ("float64", "float32"):
            x64 = precision == "float64"
            with jax.enable_x64(x64):
                params, scores, step, picks = cls._check_once(env, agent, seed)
            errors[f"params, {precision}"] = params
            errors[f"scores, {precision}"] = scores
            moved = max(moved, step)
            if x64:
                same = picks
        ok = max(v for k, v in errors.items() if k.endswith("float64")) < cls.TOLERANCE
        return {"errors": errors, "moved": moved, "ok": ok and same == cls.CHECK_ARM_SETS,
                "what": (f"agent.update {cls.CHECK_ROUNDS} times on {cls.CHECK_ROWS - 2} stored "
                         f"rows, ring of {cls.CHECK_ROWS}, the agent's z and minibatch indices; "
                         f"the verdict in float64"),
                "note": (f"; the same argmax on {same}/{cls.CHECK_ARM_SETS} arm sets (before and "
                         f"after)")}

    @classmethod
    def _check_once(cls, env, agent, seed: int) -> tuple[float, float, float, int]:
        import jax
        import jax.numpy as jnp

        from jaxbandits.core import Context, Feedback, float_dtype
        from jaxbandits.linalg.perturb import reference_sample
        from jaxbandits.nets import ReplayBuffer, replay_sample

        spec = env.spec()
        agent = agent.replace(buffer_size=cls.CHECK_ROWS)
        res = agent.resolved()
        rng = np.random.default_rng(seed)
        dtype = np.dtype(float_dtype())
        num, dim, num_arms, m = cls.CHECK_ROWS - 2, spec.dim, spec.num_arms, res.ensemble_size
        x, y = _unit_rows(rng, (num, dim), dtype), rng.standard_normal(num).astype(dtype)
        z = _unit_rows(rng, (num, m), dtype)
        rounds = [(_unit_rows(rng, (num_arms, dim), dtype), int(rng.integers(num_arms)),
                   float(rng.standard_normal())) for _ in range(cls.CHECK_ROUNDS)]

        state = agent.init(jax.random.key(seed), spec)
        init = {**_flat_state(state.params), **_flat_state(state.frozen)}
        rows = dict(state.buffer.rows)
        for name, values in (("x", x), ("y", y), ("z", z)):
            rows[name] = rows[name].at[:num].set(values)
        state = state.replace(buffer=state.buffer.replace(
            rows=rows, num_obs=jnp.asarray(num, jnp.int32)))
        initial = state
        update = jax.jit(lambda s, k, c, a, f: agent.update(s, k, c, a, f))
        draws = []
        for r, (arms, action, reward) in enumerate(rounds):
            key = jax.random.key(1000 + r)
            state = update(state, key, Context(arms=jnp.asarray(arms)),
                           jnp.asarray(action, jnp.int32),
                           Feedback(reward=jnp.asarray(reward, dtype),
                                    regret=jnp.asarray(0.0, dtype)))
            count = num + r + 1
            row = (count - 1) % cls.CHECK_ROWS
            _, key_train = jax.random.split(key)  # agent.update: key_z, key_train
            slots = ReplayBuffer(rows=jnp.arange(cls.CHECK_ROWS),
                                 num_obs=jnp.asarray(count, jnp.int32))
            indices = [np.asarray(replay_sample(  # minibatch_adam's step i
                slots, jax.random.split(jax.random.fold_in(key_train, i))[0], res.batch_size))
                for i in range(res.num_grad_steps)]
            draws.append({"z": [np.array(state.buffer.rows["z"][row])], "indices": indices})
        expected = _flat_state(state.params)

        policy = cls(agent, agent.network(spec), init, num_arms, np.random.default_rng(seed),
                     "history")
        policy.f[:num], policy.r[:num], policy.z[:num] = x, y, z
        policy.point = policy.size = policy.num_obs = num
        for (arms, action, reward), feed in zip(rounds, draws, strict=True):
            policy.feed = feed
            policy.update(arms, action, reward)
            if feed["z"] or feed["indices"]:
                raise AssertionError("the reference did not use the agent's draws")
        policy.feed = None
        got = policy.params()
        params_error = _relative_error(got, expected)
        moved = _relative_error({k: init[k] for k in expected}, expected)

        # Scores f(x, zeta) with the agent's zeta, before (a fresh reference) and after.
        fresh = cls(agent, agent.network(spec), init, num_arms, np.random.default_rng(seed),
                    "history")
        scores = jax.jit(lambda s, k, c: agent.scores(s, k, c))
        worst, same = 0.0, 0
        for i in range(cls.CHECK_ARM_SETS):
            jax_state, reference = (initial, fresh) if 2 * i < cls.CHECK_ARM_SETS else \
                (state, policy)
            arms = _unit_rows(rng, (num_arms, dim), dtype)
            key = jax.random.key(2000 + i)
            expected_scores = np.asarray(scores(jax_state, key, Context(arms=jnp.asarray(arms))))
            zeta = np.asarray(reference_sample(key, res.reference, m, dtype=dtype))[None]
            got_scores = reference.scores(arms, zeta)
            worst = max(worst, float(np.max(np.abs(got_scores - expected_scores)))
                        / float(np.max(np.abs(expected_scores))))
            same += int(np.argmax(got_scores)) == int(np.argmax(expected_scores))
        return params_error, worst, moved, same


class LangevinMC:
    """``devzhk/LMCTS`` ``algo/langevin.py`` ``LangevinMC`` (Li et al. 2024, App. F.2): ``temp =
    -sqrt(2 beta_inv / lr) sigma`` fixed at construction; each step draws one flat
    ``torch.randn(total_size)`` over the parameters with a gradient (in order), and sets ``p <-
    p - lr (grad + temp xi + weight_decay p)``; ``lr`` is an attribute the agent lowers.
    ``feed``: a list of per-parameter standard-normal draws to use instead (the check)."""

    def __init__(self, params, lr: float, beta_inv: float, weight_decay: float,
                 sigma: float = 1.0):
        self.params = list(params)
        self.lr, self.weight_decay = lr, weight_decay
        self.temp = -math.sqrt(2 * beta_inv / lr) * sigma
        self.total_size = sum(p.numel() for p in self.params)
        self.feed = None

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        with torch.no_grad():
            if self.feed is not None:
                draws = [to_torch(np.array(n)).reshape(p.shape)
                         for n, p in zip(self.feed.pop(0), self.params, strict=True)]
                noise = self.temp * torch.cat([d.reshape(-1) for d in draws])
            else:
                noise = self.temp * torch.randn(self.total_size, dtype=self.params[0].dtype)
            start = 0
            for p in self.params:
                if p.grad is None:
                    continue
                d_p = p.grad.add_(noise[start:start + p.numel()].reshape(p.shape))
                start += p.numel()
                if self.weight_decay != 0:
                    d_p = d_p.add_(p, alpha=self.weight_decay)
                p.add_(d_p, alpha=-self.lr)


@torch_reference("lmc-ts", env="vector-quadratic")
class TorchLMCTS:
    """LMC-TS as ``devzhk/LMCTS`` runs it (``algo/lmcts.py`` ``LMCTS`` with :class:`LangevinMC`
    and ``MSELoss(reduction="sum")``; the simulation loop of its ``main``; Li et al. 2024,
    App. F.2): the network ``FCN`` (LeakyReLU trunk, ``nn.Linear(D, 1, bias=False)``) with the
    agent's initial parameters; each round ``argmax f(x_k)``, collect ``(x_a, r)``, then
    ``update_model(num_iter=min(t, num_iter))``: the step counter ``+1``, ``lr = lr_0 / step`` at
    every multiple of ``decay_step`` (held until the next), ``torch.stack`` of the whole history
    and ``num_iter`` Langevin steps on ``sum_s (f(x_s) - r_s)^2``; ``beta_inv = beta_inv d log
    T``, weight decay 2.0. Its cost per round grows with t (the full history)."""

    data_modes = ("history",)
    horizon = 200  # both sides' rounds get dearer with t: O(min(t, 50) t) per round
    growth = "history"
    agent_defaults: dict = {}
    #: no further JAX timing trial (or flatness repeat) once this many seconds went into one
    #: measurement: a call of 100 runs over 200 rounds takes minutes, its own average
    trial_max_time = 20.0
    CHECK_ROWS = 38  # stored rows; then rounds t = 39 (lr_0 / 20, held) and 40 (lr_0 / 40)
    CHECK_ROUNDS = 2
    TOLERANCE = 1e-9  # the float64 verdict (both sides agree to ~1e-16)

    @staticmethod
    def steady_agent(agent):
        return agent

    @staticmethod
    def warmup_rounds(agent) -> int:
        return 0

    @staticmethod
    def network_of(agent, env):
        return agent.network(env.dim)

    @classmethod
    def initial_params(cls, agent, env, seed: int) -> dict:
        import jax

        return _flat_state(agent.init(jax.random.key(seed), env.spec()).params)

    def __init__(self, agent, network, init, num_arms: int, rng, data: str):
        from jaxbandits.nets import MLPBackbone

        backbone = agent.setting("backbone")
        if (not isinstance(backbone, MLPBackbone) or agent.lr_decay_clock != "round"
                or backbone.activation not in ("relu", "leaky_relu")):
            raise ValueError("the PyTorch LMC-TS reference covers an MLP backbone and the "
                             "official decay clock (lr_decay_clock='round')")
        self.rng, self.num_arms = rng, num_arms
        nn = torch.nn
        trunk, self.paths = _torch_trunk(init, "backbone", backbone.activation)
        kernel = np.asarray(init["base.kernel"])  # (D, 1)
        out = nn.Linear(kernel.shape[0], 1, bias=False,
                        dtype=to_torch(kernel[:1, :1].copy()).dtype)
        with torch.no_grad():
            out.weight.copy_(to_torch(kernel.T.copy()))
        self.paths.append(("base.kernel", out.weight, True))
        self.model = nn.Sequential(trunk, out)
        self.dtype = out.weight.dtype
        dim = np.asarray(init["backbone.layers.0.kernel"]).shape[0]
        lr = float(agent.setting("learning_rate"))
        beta_inv = (float(agent.setting("beta_inv")) * (agent.setting("beta_dim") or dim)
                    * math.log(agent.horizon_hint))
        self.optimizer = LangevinMC(self.model.parameters(), lr=lr, beta_inv=beta_inv,
                                    weight_decay=float(agent.weight_decay))
        self.criterion = nn.MSELoss(reduction="sum")
        self.base_lr, self.decay_step = lr, int(agent.lr_decay_every)
        self.num_iter = int(agent.setting("num_grad_steps"))
        self.step = 0
        self.contexts: list = []  # the official Collector
        self.rewards: list[float] = []
        self.warmup = 0

    def _tensor(self, x):
        return to_torch(np.asarray(x)).to(self.dtype)

    def act(self, arms: np.ndarray) -> int:
        with torch.no_grad():
            return int(torch.argmax(self.model(self._tensor(arms))))

    def update(self, arms: np.ndarray, action: int, reward: float) -> None:
        self.contexts.append(self._tensor(arms)[action])
        self.rewards.append(reward)
        self.update_model(num_iter=min(len(self.rewards), self.num_iter))

    def update_model(self, num_iter: int) -> None:
        self.step += 1
        if self.step % self.decay_step == 0:
            self.optimizer.lr = self.base_lr / self.step
        contexts = torch.stack(self.contexts, dim=0)
        rewards = torch.tensor(self.rewards, dtype=self.dtype)
        for _ in range(num_iter):
            self.optimizer.zero_grad()
            pred = self.model(contexts).squeeze(dim=1)
            loss = self.criterion(pred, rewards)
            loss.backward()
            self.optimizer.step()

    def params(self) -> dict[str, np.ndarray]:
        return _read_params(self.paths)

    @classmethod
    def check_training(cls, env, agent, seed: int = 0, quick: bool = False) -> dict:
        """The agent's ``update`` (jitted) against the reference's on identical inputs: the
        agent's initial state with ``CHECK_ROWS`` stored rows, then the same
        ``CHECK_ROUNDS`` rounds on both sides (t = 39: 39 steps at ``lr_0 / 20``, held since
        t = 20; t = 40: 40 steps at ``lr_0 / 40``). The Langevin noise is the agent's:
        ``xi ~ N(0, I)`` of :func:`~jaxbandits.agents.lmcts.langevin_noise`, as ``LMCTS.update``
        draws it, replayed from the same keys and fed to the reference's optimiser in place of
        its one flat ``torch.randn``. Compared: the parameters after the
        rounds. Float64 for the verdict, float32 for information (not with ``quick``)."""
        import jax

        errors, moved = {}, 0.0
        for precision in ("float64",) if quick else ("float64", "float32"):
            with jax.enable_x64(precision == "float64"):
                params, step, same = cls._check_once(env, agent, seed)
            errors[f"params, {precision}"] = params
            moved = max(moved, step)
        ok = max(v for k, v in errors.items() if k.endswith("float64")) < cls.TOLERANCE
        return {"errors": errors, "moved": moved, "ok": ok and same,
                "what": (f"agent.update at t = {cls.CHECK_ROWS + 1}, {cls.CHECK_ROWS + 2} on "
                         f"{cls.CHECK_ROWS} stored rows, the agent's Langevin noise; the verdict "
                         f"in float64"),
                "note": "" if same else "; agent.act and the reference chose different arms"}

    @classmethod
    def _check_once(cls, env, agent, seed: int) -> tuple[float, float, bool]:
        import jax
        import jax.numpy as jnp

        from jaxbandits.agents.lmcts import langevin_noise
        from jaxbandits.core import Context, Feedback, float_dtype

        spec = env.spec()
        # a history of 40 rows, summed in blocks of 32 (the second one slid back to row 8)
        agent = agent.replace(buffer_size=cls.CHECK_ROWS + cls.CHECK_ROUNDS)
        rng = np.random.default_rng(seed)
        dtype = np.dtype(float_dtype())
        num, dim, num_arms = cls.CHECK_ROWS, spec.dim, spec.num_arms
        x = _unit_rows(rng, (num, dim), dtype)
        r = (10.0 * (x @ _unit_rows(rng, (dim,), dtype)) ** 2
             + rng.standard_normal(num)).astype(dtype)
        rounds = [(_unit_rows(rng, (num_arms, dim), dtype), int(rng.integers(num_arms)),
                   float(rng.standard_normal())) for _ in range(cls.CHECK_ROUNDS)]

        state = agent.init(jax.random.key(seed), spec)
        init = _flat_state(state.params)
        rows = dict(state.buffer.rows)
        rows["x"], rows["r"] = rows["x"].at[:num].set(x), rows["r"].at[:num].set(r)
        steps_so_far = sum(min(s, agent.setting("num_grad_steps")) for s in range(1, num + 1))
        state = state.replace(buffer=state.buffer.replace(
            rows=rows, num_obs=jnp.asarray(num, jnp.int32)),
            num_steps=jnp.asarray(steps_so_far, jnp.int32))
        update = jax.jit(lambda s, k, c, a, f: agent.update(s, k, c, a, f))
        act = jax.jit(lambda s, k, c: agent.act(s, k, c)[0])
        feeds, picks = [], []
        for i, (arms, action, reward) in enumerate(rounds):
            key = jax.random.key(3000 + i)
            picks.append(int(act(state, key, Context(arms=jnp.asarray(arms)))))
            t = num + i + 1
            feeds.append([_flat_state(langevin_noise(key, step, state.params))  # LMCTS.update
                          for step in range(min(t, agent.setting("num_grad_steps")))])
            state = update(state, key, Context(arms=jnp.asarray(arms)),
                           jnp.asarray(action, jnp.int32),
                           Feedback(reward=jnp.asarray(reward, dtype),
                                    regret=jnp.asarray(0.0, dtype)))
        expected = _flat_state(state.params)

        policy = cls(agent, agent.network(dim), init, num_arms, np.random.default_rng(seed),
                     "history")
        policy.contexts = [policy._tensor(row) for row in x]
        policy.rewards = [float(v) for v in r]
        for s in range(1, num + 1):  # the decay clock as it stands after ``num`` rounds
            policy.step = s
            if s % policy.decay_step == 0:
                policy.optimizer.lr = policy.base_lr / s
        same = True
        where = {id(p): (path, transposed) for path, p, transposed in policy.paths}
        order = [where[id(p)] for p in policy.optimizer.params]
        for (arms, action, reward), noise in zip(rounds, feeds, strict=True):
            same &= policy.act(arms) == picks.pop(0)
            policy.optimizer.feed = [[n[path].T if transposed else n[path]
                                      for path, transposed in order] for n in noise]
            policy.update(arms, action, reward)
            if policy.optimizer.feed:
                raise AssertionError("the reference did not use the agent's noise")
        policy.optimizer.feed = None
        got = policy.params()
        return (_relative_error(got, expected),
                _relative_error({k: init[k] for k in expected}, expected), bool(same))


# ------------------------------------------------------------------------------------------------
# Runs and checks.


def torch_run(env, agent, name: str, horizon: int, seed: int, data: str) -> dict:
    """Plays one seed of the reference of ``name``; returns its final regret and the wall time
    of every round (act, environment, update)."""
    rng = np.random.default_rng(seed)
    world = NUMPY_ENVS[env.name](env, rng)
    reference = TORCH_REFERENCES[name]
    if hasattr(reference, "network_of"):  # an agent whose network is built from its spec
        network = reference.network_of(agent, env)
    else:
        network = agent.network(env.dim)
    if hasattr(reference, "initial_params"):  # the agent's own init (more than one network)
        init = reference.initial_params(agent, env, seed)
    else:
        init = initial_kernels(network, seed)
    policy = reference(agent, network, init, env.num_arms, rng, data)
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


def check_training(env, agent, name: str, seed: int = 0, quick: bool = False) -> dict:
    """One training round from identical inputs, the JAX agent's against the reference's.

    A reference with its own ``check_training(env, agent, seed, quick)`` (the dueling ones:
    the agent's ``update`` on a fixed pair history; ``quick`` trims it) answers itself. Otherwise
    :func:`jaxbandits.nets.net_gd` (the call the agents make) runs against :func:`torch_fit` on
    the full history and on the per-arm statistics. Returns ``{"errors": {what: the largest
    difference relative to the largest parameter}, "moved": how far the round moved the
    parameters (relative), "ok": bool}``, and ``"what"``, a description, where not the default.
    """
    reference = TORCH_REFERENCES[name]
    if hasattr(reference, "check_training"):
        return reference.check_training(env, agent, seed, quick=quick)

    import jax
    import jax.numpy as jnp

    from jaxbandits.nets import net_gd

    rng = np.random.default_rng(seed)
    network = agent.network(env.dim)
    kernels = initial_kernels(network, seed)
    num_arms = env.num_arms
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

    arms_t = to_torch(network_inputs(network, arms).astype(np.float32))
    anchor_t = [to_torch(np.array(k, np.float32)) for k in anchor_k]
    kwargs = dict(coef=coef, lr=float(agent.learning_rate), steps=int(agent.num_grad_steps),
                  reduction=agent.loss_reduction, link=link)
    scale = max(float(np.max(np.abs(k))) for k in expected)
    errors = {}
    for data in ("history", "stats"):
        net = make_torch_mlp(kernels, agent.width)
        if data == "history":
            torch_fit(net, anchor_t, arms_t[torch.as_tensor(pulls)],
                      to_torch(rewards.astype(np.float32)), None, **kwargs)
        else:
            torch_fit(net, anchor_t, arms_t, to_torch(counts.astype(np.float32)),
                      to_torch(sums.astype(np.float32)), **kwargs)
        got = [p.detach().cpu().numpy() for p in net.parameters()]
        errors[data] = max(float(np.max(np.abs(a - b))) for a, b in zip(got, expected,
                                                                        strict=True)) / scale
    moved = max(float(np.max(np.abs(a - b))) for a, b in zip(expected, kernels, strict=True))
    return {"errors": errors, "moved": moved / scale, "ok": max(errors.values()) < 1e-3}
