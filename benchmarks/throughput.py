"""Throughput of the engine against a plain NumPy loop, in seed-steps per second.

For every benchmarked agent and run count this prints how many seed-steps (runs x rounds) per
second ``jb.simulate`` plays (compile time excluded, reported separately), next to a plain NumPy
implementation of the same algorithm that plays one seed at a time with a Python loop per step,
the way the papers' own code runs, and the ratio of the two (the engine's target: >= 30x at 1,000
runs). It also checks that each NumPy reference is a correct implementation: its mean final regret
over a few seeds must be in the range of the JAX agent's (both are printed).

Benchmarked by default, each on the environment its NumPy reference names (d = 20, K = 50, the
environment's defaults otherwise) and with the agent's default hyperparameters:

* ``lin-ts``, ``lin-ucb`` on ``linear``: ridge agents, ``V^{-1}`` kept by Sherman-Morrison;
* ``lin-es`` on ``linear``: linear ensemble sampling (Lee & Oh), m = 25 perturbed members that
  share one Sherman-Morrison ``V^{-1}``;
* ``ensemble-pp[M=8]`` and ``ensemble-pp[M=32]`` on ``linear``: linear Ensemble++ with the
  Kalman-form update of the factor ``A`` (seed-001 section 2.2);
* ``glm-es`` on ``logistic`` (E-LOG): GLM ensemble sampling (seed-000) with its G-optimal warm-up
  (500 rounds), then m = 10 members of 100 gradient steps each per round. Its NumPy reference
  refits every member on the whole perturbed history every round, as the paper's code does, so
  its per-step cost grows with t; the engine fits on per-arm statistics, flat in t. A section
  "flat in t" prints both: the engine's seed-steps/s over growing horizons, and the NumPy
  reference's time per step early and late in a run. Timings are printed, never asserted.

Neural agents (``neural-es``, ``neural-ucb``, ``neurallog-ucb-2``) given in ``--agents`` are
measured against their PyTorch references by ``throughput_neural.py`` (1, 10 and 100 runs, flat
in t; ``--runs`` and ``--quick`` are passed on).

Run it from the repository root::

    python benchmarks/throughput.py                      # the full benchmark (long on a laptop)
    python benchmarks/throughput.py --quick              # a smoke test (about a minute)
    python benchmarks/throughput.py --agents lin-ts,ensemble-pp:ensemble_size=16 --markdown

An agent is given as ``name[:field=value[:field=value...]]``, the fields being overrides of
``jb.make_agent``: ``ensemble-pp:ensemble_size=8:reference=sphere`` is the row
``ensemble-pp[M=8,reference=sphere]`` (``ensemble_size`` is written ``M`` in labels).

Timing: each (agent, run count) is measured in ``--repeats`` trials (fewer once ``--max-time``
seconds have been spent on it); a trial repeats the same ``simulate`` call until its summed wall
time (compile excluded) reaches ``--min-time`` seconds, and the best trial is reported. The NumPy
rate is the best of ``--check-seeds`` seeds of ``--numpy-horizon`` steps; per seed-step it does
not depend on the number of runs (it would play them one after another), so one NumPy rate serves
every run count. It does depend on the horizon when the reference's per-step cost grows with t
(``glm-es``): such agents are timed in JAX over ``--numpy-horizon`` rounds too (the ``horizon``
column), so the ratio compares equal horizons.

Cost: at the defaults each linear agent takes about two minutes on a busy 2-core CPU. ``glm-es``
(10 members x 100 gradient steps per round) costs about 100 times more per seed-step, so its
1,000-run row, its regret check and the flat-in-t section take most of the time (about an hour
on such a machine). Use ``--agents``, ``--runs``, ``--numpy-horizon``, ``--check-seeds``,
``--check-runs`` and ``--flat-*`` to shorten it, e.g. ``--agents glm-es --runs 1,10,100
--numpy-horizon 1000 --check-seeds 4 --check-runs 50`` (about 6 minutes there).

Adding an agent: write a NumPy reference class (``__init__(agent, dim, rng)``, ``act(arms) ->
int``, ``update(x, y)``; read the hyperparameters from the JAX agent object so both run the same
configuration) and decorate it with ``@numpy_reference("agent-name")`` (``env="logistic"`` to
benchmark it there). See ``LinTSReference``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

_ROOT = Path(__file__).resolve().parents[1]
if (_ROOT / "jaxbandits").is_dir() and str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))  # benchmark the checkout this file belongs to
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import throughput_neural  # noqa: E402  (neural agents: the PyTorch comparison)
from _bench import (  # noqa: E402
    CPU_DEVICES_HELP,
    fmt_rate,
    int_list,
    parse_agent_spec,
    print_table,
    time_jax,
)
from throughput_neural import TORCH_REFERENCES  # noqa: E402

# jax and jaxbandits are imported in main(), after --cpu-devices has split the CPU
# (the functions below import them lazily, so this module can be imported for its references).

TARGET_RATIO = 30.0  # the engine's goal at 1,000 runs, against the NumPy loop
DEFAULT_AGENTS = ("lin-ts,lin-ucb,lin-es,ensemble-pp:ensemble_size=8,"
                  "ensemble-pp:ensemble_size=32,glm-es")
# quick: a 50-round warm-up, so that glm-es's gradient steps run within the short horizon
QUICK_AGENTS = ("lin-ts,lin-ucb,lin-es,ensemble-pp:ensemble_size=8,"
                "ensemble-pp:ensemble_size=32,glm-es:warmup=50")
LABEL_ALIASES = {"ensemble_size": "M"}  # how an override is written in a row label
NUMPY_ENVS: tuple[str, ...] = ("linear", "logistic")  # the environments numpy_run can play


# ------------------------------------------------------------------------------------------------
# NumPy references: one seed, a Python loop per step, float64.

NUMPY_REFERENCES: dict[str, Callable] = {}


def numpy_reference(name: str, *, env: str = "linear", grows_with_t: bool = False):
    """Registers a NumPy reference policy class for the JAX agent called ``name``.

    The class is built as ``cls(agent, dim, rng)`` (``agent`` the JAX agent object, to read its
    hyperparameters from; ``rng`` a ``np.random.Generator`` it owns) and must offer
    ``act(arms: (K, d) array) -> int`` and ``update(x: (d,) array, y: float) -> None``; it may
    set ``warmup_steps`` (the rounds before its main phase, for the per-step timing windows).

    Args:
      name: the registered JAX agent name.
      env: the environment the agent is benchmarked on, ``"linear"`` or ``"logistic"``.
      grows_with_t: the reference's per-step cost grows with t (it refits on the history); the
        JAX side is then timed over the NumPy horizon, so the ratio compares equal horizons.
    """
    if env not in NUMPY_ENVS:
        raise ValueError(f"env must be one of {NUMPY_ENVS}, got {env!r}")

    def register(cls):
        cls.env_name = env
        cls.grows_with_t = grows_with_t
        NUMPY_REFERENCES[name] = cls
        return cls

    return register


def _require(agent, **expected) -> None:
    """Raises ``ValueError`` if a static switch of ``agent`` is one the reference does not do."""
    for field, allowed in expected.items():
        value = getattr(agent, field)
        allowed = allowed if isinstance(allowed, tuple) else (allowed,)
        if value not in allowed:
            raise ValueError(f"the NumPy reference of {agent.name} implements {field} in "
                             f"{allowed}, got {value!r}")


class _ShermanMorrisonRidge:
    """Ridge regression with ``V^{-1}`` kept by Sherman-Morrison (what the papers' code does)."""

    def __init__(self, dim: int, reg: float, rng: np.random.Generator):
        self.rng = rng
        self.dim = dim
        self.reg = float(reg)
        self.v_inv = np.eye(dim) / self.reg
        self.b = np.zeros(dim)
        self.mean = np.zeros(dim)
        self.logdet = dim * math.log(self.reg)

    def update(self, x: np.ndarray, y: float) -> None:
        vx = self.v_inv @ x
        q = float(x @ vx)
        self.v_inv -= np.outer(vx, vx) / (1.0 + q)
        self.b += y * x
        self.mean = self.v_inv @ self.b
        self.logdet += math.log1p(q)


@numpy_reference("lin-ts")
class LinTSReference(_ShermanMorrisonRidge):
    """LinTS: ``theta ~ N(mean, (scale * noise_std)^2 V^{-1})`` through a Cholesky per step."""

    def __init__(self, agent, dim: int, rng: np.random.Generator):
        super().__init__(dim, agent.reg, rng)
        self.noise_std = float(agent.noise_std)
        self.explore_scale = float(agent.explore_scale)

    def act(self, arms: np.ndarray) -> int:
        chol = np.linalg.cholesky(self.v_inv)
        z = self.rng.standard_normal(self.dim)
        theta = self.mean + (self.explore_scale * self.noise_std) * (chol @ z)
        return int(np.argmax(arms @ theta))


@numpy_reference("lin-ucb")
class LinUCBReference(_ShermanMorrisonRidge):
    """LinUCB / OFUL: ``<x, mean> + scale * beta_t * ||x||_{V^{-1}}``, widths from ``V^{-1}``."""

    def __init__(self, agent, dim: int, rng: np.random.Generator):
        super().__init__(dim, agent.reg, rng)
        self.noise_std = float(agent.noise_std)
        self.explore_scale = float(agent.explore_scale)
        self.delta = float(agent.delta)
        self.param_bound = float(agent.param_bound)

    def act(self, arms: np.ndarray) -> int:
        log_ratio = self.logdet - self.dim * math.log(self.reg)
        radius = self.noise_std * math.sqrt(2.0 * math.log(1.0 / self.delta) + log_ratio)
        radius += math.sqrt(self.reg) * self.param_bound
        widths = np.sqrt(np.einsum("kd,kd->k", arms @ self.v_inv, arms))
        scores = arms @ self.mean + (self.explore_scale * radius) * widths
        return int(np.argmax(scores))


@numpy_reference("lin-es")
class LinESReference(_ShermanMorrisonRidge):
    """Linear ensemble sampling (Lee & Oh, seed-003 Algorithm 1; seed-000 section 2.2).

    Member j is ``theta^j = V^{-1} (b + p^j)`` with ``b = sum_s x_s y_s`` and
    ``p^j = W^j + sum_s x_s Z_s^j``, ``W^j ~ N(0, reg (prior_scale sigma_R)^2 I)``,
    ``Z_s^j ~ N(0, sigma_R^2)`` drawn once. Round t: draw ``j`` (uniform or round-robin), play
    ``argmax <x, V^{-1} (b + p^j)>``; then Sherman-Morrison on ``V^{-1}``, ``b += x y`` and
    ``p += Z x^T`` for the m members at once. O(d^2 + m d + K d) per step.
    """

    def __init__(self, agent, dim: int, rng: np.random.Generator):
        super().__init__(dim, agent.reg, rng)
        _require(agent, selection=("uniform", "round_robin"))
        self.size = int(agent.ensemble_size)
        self.round_robin = agent.selection == "round_robin"
        self.perturb_std = float(agent.perturb_std)
        init_std = float(agent.prior_scale) * self.perturb_std if agent.init_perturbation else 0.0
        self.p = (math.sqrt(self.reg) * init_std) * rng.standard_normal((self.size, dim))
        self.count = 0

    def act(self, arms: np.ndarray) -> int:
        j = self.count % self.size if self.round_robin else int(self.rng.integers(self.size))
        theta = self.v_inv @ (self.b + self.p[j])
        return int(np.argmax(arms @ theta))

    def update(self, x: np.ndarray, y: float) -> None:
        super().update(x, y)
        z = self.perturb_std * self.rng.standard_normal(self.size)
        self.p += np.outer(z, x)
        self.count += 1


def _numpy_reference_law(rng: np.random.Generator, kind: str, size: int,
                         sparsity: int) -> np.ndarray:
    """NumPy twin of ``jaxbandits.linalg.reference_sample``: isotropic ``zeta`` in ``R^M``."""
    if kind == "gaussian":
        return rng.standard_normal(size)
    if kind == "sphere":
        v = rng.standard_normal(size)
        return math.sqrt(size) * v / np.linalg.norm(v)
    if kind == "cube":
        return rng.choice((-1.0, 1.0), size)
    zeta = np.zeros(size)
    if kind == "coordinate":
        zeta[rng.integers(size)] = rng.choice((-1.0, 1.0)) * math.sqrt(size)
        return zeta
    chosen = rng.choice(size, sparsity, replace=False)  # "sparse"
    zeta[chosen] = rng.choice((-1.0, 1.0), sparsity) * math.sqrt(size / sparsity)
    return zeta


@numpy_reference("ensemble-pp")
class EnsemblePlusPlusReference:
    """Linear Ensemble++ (seed-001 section 2.2) with the Kalman-form factor update.

    State ``mu``, ``Sigma`` (``Sigma_0 = noise_std^2 / reg I``) and ``A`` ``(d, M)`` with
    ``A_0 = Sigma_0^{1/2} B``. Act: ``zeta ~ P_zeta``, ``theta = mu + beta A zeta``, argmax.
    Update, with ``z ~ P_z`` and ``sigma`` = ``noise_std``::

        g = Sigma x,  alpha = sigma^2 + x^T g,  k = g / alpha
        Sigma <- Sigma - k g^T (re-symmetrised);  mu <- mu + k (y - x^T mu)
        A <- A + k (sigma z^T - x^T A)

    O(d^2 + d M + K d) per step, no factorisation.
    """

    def __init__(self, agent, dim: int, rng: np.random.Generator):
        _require(agent, inflation=("none", "theory"), factor_init=("paper", "code"))
        self.rng = rng
        self.dim = dim
        self.size = int(agent.ensemble_size)
        self.reg = float(agent.reg)
        self.sigma = float(agent.noise_std)
        self.explore_scale = float(agent.explore_scale)
        self.theory = agent.inflation == "theory"
        self.delta = float(agent.delta)
        self.param_bound = float(agent.param_bound)
        self.reference = agent.reference
        self.perturbation = agent.perturbation
        self.sparsity = int(agent.sparsity)
        prior_std = self.sigma / math.sqrt(self.reg)
        self.mu = np.zeros(dim)
        self.cov = prior_std**2 * np.eye(dim)
        if agent.factor_init == "paper":  # columns N(0, Sigma_0) / sqrt(M)
            b = rng.standard_normal((dim, self.size)) / math.sqrt(self.size)
        else:  # the authors' code: each row of B a draw of P_z
            b = np.stack([self._perturbation() for _ in range(dim)])
        self.factor = prior_std * b
        self.logdet = dim * math.log(self.reg)  # log det V_t, V_t = sigma^2 Sigma_t^{-1}

    def _perturbation(self) -> np.ndarray:
        zeta = _numpy_reference_law(self.rng, self.perturbation, self.size, self.sparsity)
        return zeta / math.sqrt(self.size)

    def act(self, arms: np.ndarray) -> int:
        zeta = _numpy_reference_law(self.rng, self.reference, self.size, self.sparsity)
        beta = self.explore_scale
        if self.theory:  # Eq. 36: the OFUL radius in Sigma-norm
            log_ratio = self.logdet - self.dim * math.log(self.reg)
            radius = self.sigma * math.sqrt(2.0 * math.log(1.0 / self.delta) + log_ratio)
            beta *= (radius + math.sqrt(self.reg) * self.param_bound) / self.sigma
        theta = self.mu + beta * (self.factor @ zeta)
        return int(np.argmax(arms @ theta))

    def update(self, x: np.ndarray, y: float) -> None:
        z = self._perturbation()
        g = self.cov @ x
        alpha = self.sigma**2 + float(x @ g)
        k = g / alpha
        self.cov -= np.outer(k, g)
        self.cov = 0.5 * (self.cov + self.cov.T)
        self.mu += k * (y - float(x @ self.mu))
        self.factor += np.outer(k, self.sigma * z - x @ self.factor)
        self.logdet += math.log(alpha / self.sigma**2)


@numpy_reference("glm-es", env="logistic", grows_with_t=True)
class GLMESReference:
    """GLM ensemble sampling (seed-000 Algorithms 1-3) as the paper's code runs it.

    Warm-up: the G-optimal design of the arms (Frank-Wolfe with away steps, as the engine's),
    rounded to ``warmup`` pulls played in a random order. Every observation gets m perturbed
    targets ``y + Z^j``, ``Z^j ~ N(0, sigma_R^2)``, appended to the history. From the end of the
    warm-up on, every round refits every member from its previous estimate (0 at first) by
    ``num_grad_steps`` gradient steps of ``learning_rate`` on its mean-normalised regularised
    log-loss over the whole history (``(reg theta + sum_l (sigmoid(x_l^T theta) - y_l - Z_l^j)
    x_l) / n``): O(m J t d) per round, growing with t. The m members step side by side as one
    ``(t, m)`` matrix product, NumPy's fastest form. Acting: ``argmax <x, theta^j>``, ``j``
    uniform.
    """

    def __init__(self, agent, dim: int, rng: np.random.Generator):
        _require(agent, link="logistic", solver="gd", loss_reduction="mean", buffer_size=None,
                 enforce_min_count=False)
        self.rng = rng
        self.size = int(agent.ensemble_size)
        active = int(agent.active_members)
        self.active = min(active, self.size) if active > 0 else self.size
        self.reg = float(agent.reg)
        self.learning_rate = float(agent.learning_rate)
        self.num_steps = int(agent.num_grad_steps)
        self.perturb_std = float(agent.perturb_std)
        self.warmup = int(agent.warmup)
        self.design_iters = int(agent.design_iters)
        self.theta = np.zeros((self.size, dim))
        self.features = np.empty((1024, dim))  # the history, grown by doubling
        self.targets = np.empty((1024, self.size))  # y_l + Z_l^j
        self.count = 0
        self.pulls: list[int] | None = None
        self.warmup_steps = 0

    def act(self, arms: np.ndarray) -> int:
        if self.pulls is None:  # first round: the warm-up pulls, in a random order
            counts = _numpy_round_design(_numpy_g_optimal_design(arms, self.design_iters),
                                         self.warmup)
            self.pulls = list(self.rng.permutation(np.repeat(np.arange(len(arms)), counts)))
            self.warmup_steps = len(self.pulls)
        if self.pulls:
            return int(self.pulls.pop())
        j = int(self.rng.integers(self.active))
        return int(np.argmax(arms @ self.theta[j]))

    def update(self, x: np.ndarray, y: float) -> None:
        if self.count == len(self.features):
            self.features = np.concatenate([self.features, np.empty_like(self.features)])
            self.targets = np.concatenate([self.targets, np.empty_like(self.targets)])
        self.features[self.count] = x
        self.targets[self.count] = y + self.perturb_std * self.rng.standard_normal(self.size)
        self.count += 1
        if self.pulls:  # still warming up: no fit
            return
        n = self.count
        features, targets = self.features[:n], self.targets[:n]
        step = self.learning_rate / n
        theta = self.theta
        with np.errstate(over="ignore"):  # exp(-u) = inf gives sigmoid(u) = 0, as it should
            for _ in range(self.num_steps):
                u = features @ theta.T  # (n, m)
                residual = 1.0 / (1.0 + np.exp(-u)) - targets  # sigmoid(u) - (y + Z)
                theta = theta - step * (residual.T @ features + self.reg * theta)
        self.theta = theta


def _numpy_design_variance(arms: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``x_k^T V(w)^{-1} x_k`` for every arm, ``V(w) = sum_i w_i x_i x_i^T``."""
    matrix = (arms.T * weights) @ arms
    return np.einsum("kd,kd->k", arms @ np.linalg.inv(matrix), arms)


def _numpy_g_optimal_design(arms: np.ndarray, num_iters: int, tol: float = 1e-4,
                            support_tol: float = 1e-5) -> np.ndarray:
    """NumPy twin of ``jaxbandits.linalg.g_optimal_design`` (Frank-Wolfe with away steps)."""
    num_arms, dim = arms.shape
    weights = np.full(num_arms, 1.0 / num_arms)
    try:
        g = _numpy_design_variance(arms, weights)
    except np.linalg.LinAlgError:  # the arms do not span R^d: the uniform design
        return weights
    for _ in range(num_iters):
        if g.max() <= (1.0 + tol) * dim:
            break
        j_up = int(np.argmax(g))
        j_down = int(np.argmin(np.where(weights > 0, g, np.inf)))
        j = j_up if g[j_up] - dim >= dim - g[j_down] else j_down
        exact = (g[j] - dim) / (dim * (g[j] - 1.0)) if g[j] > 1.0 else -np.inf
        alpha = min(max(exact, -weights[j] / max(1.0 - weights[j], 1e-300)), 1.0 - 1e-6)
        weights = (1.0 - alpha) * weights
        weights[j] += alpha
        weights = np.maximum(weights, 0.0)
        g = _numpy_design_variance(arms, weights)
    weights = np.where(weights >= support_tol, weights, 0.0)
    return weights / weights.sum()


def _numpy_round_design(weights: np.ndarray, n: int) -> np.ndarray:
    """NumPy twin of ``jaxbandits.linalg.round_design`` (seed-000 Algorithm 3, line 15 off)."""
    support = weights > 0
    p = int(support.sum())
    safe = np.where(support, weights, 1.0)
    counts = np.where(support, np.maximum(np.ceil((n - p / 2.0) * weights), 0), 0).astype(int)
    for _ in range(2 * len(weights) + 2):
        total = int(counts.sum())
        if total == n:
            break
        if total < n:
            counts[np.argmin(np.where(support, counts / safe, np.inf))] += 1
        else:
            counts[np.argmax(np.where(support, (counts - 1) / safe, -np.inf))] -= 1
    return counts


# ------------------------------------------------------------------------------------------------
# NumPy environments: the problem instance drawn as the JAX environments draw theirs.


def _numpy_vectors(rng: np.random.Generator, shape, kind: str, scale: float) -> np.ndarray:
    """NumPy twin of ``jaxbandits.envs.linear.draw_vectors``."""
    if kind == "cube":
        return rng.uniform(-1.0, 1.0, shape) * scale
    g = rng.standard_normal(shape)
    if kind == "sphere":
        return g / np.linalg.norm(g, axis=-1, keepdims=True)
    return g * scale


def numpy_instance(env, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One instance of the ``linear`` or ``logistic`` (Gaussian-noise) environment ``env``.

    Returns ``(arms (K, d), means (K,))`` with ``means = arms @ theta*`` (linear) or
    ``sigmoid(arms @ theta*)`` (logistic; theta* scaled by ``theta_scale``), drawn from the same
    distributions as the JAX environment's (one fixed arm set per run).
    """
    name = getattr(env, "name", "")
    if (name not in NUMPY_ENVS or getattr(env, "fresh_arms", False)
            or getattr(env, "instance_seed", None) is not None
            or getattr(env, "reward_kind", "gaussian") != "gaussian"):
        raise ValueError(f"the NumPy reference environments are {NUMPY_ENVS} with fixed arms, "
                         "an instance per run and Gaussian noise")
    dim, num_arms = env.dim, env.num_arms
    theta = _numpy_vectors(rng, (dim,), env.theta_prior, math.sqrt(env.prior_var))
    arm_scale = env.cube_halfwidth if env.arm_prior == "cube" else 1.0 / math.sqrt(dim)
    arms = _numpy_vectors(rng, (num_arms, dim), env.arm_prior, arm_scale)
    if name == "logistic":
        return arms, 1.0 / (1.0 + np.exp(-(arms @ (env.theta_scale * theta))))
    return arms, arms @ theta


@dataclasses.dataclass
class NumpyRun:
    """One NumPy seed: final regret, timed seconds, per-step seconds ``(T,)``, warm-up rounds."""

    regret: float
    seconds: float
    step_seconds: np.ndarray
    warmup_steps: int


def numpy_run(env, agent, agent_name: str, horizon: int, seed: int) -> NumpyRun:
    """Plays one seed of ``agent_name``'s NumPy reference on ``env`` (``linear`` or ``logistic``).

    The environment (one fixed arm set, Gaussian noise) is drawn as the JAX one is, from the
    same distributions; the timed loop covers every step: act, reward, regret, update.
    """
    rng = np.random.default_rng(seed)
    arms, means = numpy_instance(env, rng)
    best = float(means.max())
    noise_std = float(env.noise_std)
    policy = NUMPY_REFERENCES[agent_name](agent, env.dim, rng)

    regret = 0.0
    stamps = np.empty(horizon + 1)
    clock = time.perf_counter
    stamps[0] = start = clock()
    for t in range(horizon):
        action = policy.act(arms)
        mean = float(means[action])
        reward = mean + noise_std * rng.standard_normal()
        regret += best - mean
        policy.update(arms[action], reward)
        stamps[t + 1] = clock()
    return NumpyRun(regret, float(stamps[-1] - start), np.diff(stamps),
                    int(getattr(policy, "warmup_steps", 0)))


# ------------------------------------------------------------------------------------------------
# What is benchmarked: an agent name, its overrides, its row label and its environment.


@dataclasses.dataclass(frozen=True)
class BenchEntry:
    """One benchmarked configuration, parsed from ``name[:field=value...]``."""

    label: str
    name: str
    overrides: tuple[tuple[str, Any], ...] = ()

    @property
    def reference(self):
        return NUMPY_REFERENCES[self.name]

    def make(self, dim: int, num_arms: int):
        """``(env, agent)``: the reference's environment and the configured JAX agent."""
        import jaxbandits as jb

        env = jb.make_env(self.reference.env_name, dim=dim, num_arms=num_arms)
        return env, jb.make_agent(self.name, **dict(self.overrides))


def parse_entry(spec: str) -> BenchEntry:
    """``"ensemble-pp:ensemble_size=8"`` -> the entry labelled ``ensemble-pp[M=8]``."""
    name, overrides = parse_agent_spec(spec)
    if name not in NUMPY_REFERENCES:
        raise ValueError(f"no NumPy reference for {name!r} (have: {', '.join(NUMPY_REFERENCES)})"
                         "; add one with @numpy_reference")
    label = name
    if overrides:
        label += "[" + ",".join(f"{LABEL_ALIASES.get(k, k)}={v}" for k, v in overrides) + "]"
    return BenchEntry(label, name, tuple(overrides))


# ------------------------------------------------------------------------------------------------
# Measurements.


def check_numpy(env, agent, name: str, *, horizon: int, seeds: int, jax_runs: int,
                chunk_size: int | None, seed: int) -> dict:
    """NumPy seed-steps/s (best seed) and final regret against the JAX agent's mean regret."""
    import jaxbandits as jb

    runs = [numpy_run(env, agent, name, horizon, seed=10_000 + s) for s in range(seeds)]
    regrets = [r.regret for r in runs]
    rates = [horizon / r.seconds for r in runs]
    result = jb.simulate(env, agent, seed, horizon, jax_runs, progress=False,
                         chunk_size=chunk_size)
    jax_mean, jax_half = result.final("regret")
    # the program this call compiled: (runs, rounds per chunk), reused by a timing of that shape
    compiled = (jax_runs, result.extras["chunk_size"])
    np_mean = float(np.mean(regrets))
    np_half = (1.96 * float(np.std(regrets, ddof=1)) / math.sqrt(seeds)) if seeds > 1 else 0.0
    # Same algorithm and problem distribution: the means must agree up to sampling noise (a
    # generous margin, since a handful of NumPy seeds is noisy).
    margin = 2.0 * math.hypot(np_half, jax_half) + 0.15 * abs(jax_mean)
    return {
        "rate": max(rates),
        "rate_median": float(np.median(rates)),
        "np_regret": np_mean,
        "np_half": np_half,
        "jax_regret": jax_mean,
        "jax_half": jax_half,
        "consistent": abs(np_mean - jax_mean) <= margin,
        "numpy_runs": runs,
        "compiled": {compiled: result.compile_time},
    }


def step_time_windows(runs: Sequence[NumpyRun], num_windows: int = 4) -> list[tuple]:
    """Median over seeds of the mean seconds per step in ``(first, last, seconds)`` windows:
    the warm-up (if any), then the rest of the run cut into ``num_windows`` equal parts."""
    horizon = len(runs[0].step_seconds)
    warmup = min(runs[0].warmup_steps, horizon)
    edges = [0] if warmup == 0 else [0, warmup]
    rest = horizon - edges[-1]
    edges += [edges[-1] + round(rest * (i + 1) / num_windows) for i in range(num_windows)]
    windows = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        if hi > lo:
            per_step = [float(np.mean(r.step_seconds[lo:hi])) for r in runs]
            windows.append((lo + 1, hi, float(np.median(per_step))))
    return windows


def flat_in_t(entry: BenchEntry, env, agent, *, horizons: Sequence[int], runs: int,
              seed: int) -> list[dict]:
    """The engine's seed-steps/s of ``agent`` over growing ``horizons`` at ``runs`` runs, and the
    marginal rate of the rounds each horizon adds to the previous one (compile excluded; one
    compiled program, the chunk size being the smallest horizon's)."""
    import jaxbandits as jb

    chunk = min(min(horizons), 1000)
    rows, previous_t, previous_wall = [], 0, 0.0
    for horizon in sorted(horizons):
        result = jb.simulate(env, agent, seed, horizon, runs, progress=False, chunk_size=chunk)
        added = horizon - previous_t
        marginal = runs * added / max(result.wall_time - previous_wall, 1e-9)
        rows.append({"agent": entry.label, "horizon": horizon, "wall": result.wall_time,
                     "rate": runs * horizon / result.wall_time, "from": previous_t + 1,
                     "marginal": marginal})
        previous_t, previous_wall = horizon, result.wall_time
    return rows


# ------------------------------------------------------------------------------------------------
# Command line.


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--agents", default=None,
                   help="comma-separated agents, each name[:field=value...] (NumPy references: "
                        f"{', '.join(NUMPY_REFERENCES)}; PyTorch, via throughput_neural.py: "
                        f"{', '.join(TORCH_REFERENCES)}) (default {DEFAULT_AGENTS}; quick: "
                        "glm-es with warmup=50)")
    p.add_argument("--runs", type=int_list, default=None,
                   help="comma-separated run counts (default 1,10,100,1000; quick: 10)")
    p.add_argument("--horizon", type=int, default=None,
                   help="JAX rounds per simulate call (default 5000; quick: 200); agents whose "
                        "NumPy cost grows with t use --numpy-horizon")
    p.add_argument("--numpy-horizon", type=int, default=None,
                   help="NumPy steps per seed, also the horizon of the regret check "
                        "(default 2000; quick: 200)")
    p.add_argument("--check-seeds", type=int, default=None,
                   help="NumPy seeds (timed and regret-checked) (default 8; quick: 2)")
    p.add_argument("--check-runs", type=int, default=None,
                   help="JAX runs of the regret check (default 200; quick: 10)")
    p.add_argument("--repeats", type=int, default=None,
                   help="timing trials per JAX measurement, best reported (default 3; quick: 1)")
    p.add_argument("--min-time", type=float, default=None,
                   help="seconds of JAX wall time per trial (default 1.0; quick: 0.05)")
    p.add_argument("--max-time", type=float, default=None,
                   help="no further trial of a JAX measurement once this many seconds have been "
                        "spent on it (default 60)")
    p.add_argument("--chunk-size", type=int, default=None,
                   help="simulate's chunk_size (default: the engine's)")
    p.add_argument("--flat", default=None,
                   help="the agent of the flat-in-t section, name[:field=value...]; 'none' skips "
                        "it (default glm-es; quick: glm-es:warmup=50)")
    p.add_argument("--flat-horizons", type=int_list, default=None,
                   help="JAX horizons of the flat-in-t section (default 1000,4000,16000; "
                        "quick: 200,400)")
    p.add_argument("--flat-runs", type=int, default=None,
                   help="JAX runs of the flat-in-t section (default 10)")
    p.add_argument("--dim", type=int, default=20)
    p.add_argument("--num-arms", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cpu-devices", type=int, default=None, help=CPU_DEVICES_HELP)
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test (~1 min)")
    p.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    args = p.parse_args(argv)
    quick = args.quick
    defaults = {
        "agents": QUICK_AGENTS if quick else DEFAULT_AGENTS,
        "runs": [10] if quick else [1, 10, 100, 1000],
        "horizon": 200 if quick else 5000,
        "numpy_horizon": 200 if quick else 2000,
        "check_seeds": 2 if quick else 8,
        "check_runs": 10 if quick else 200,
        "repeats": 1 if quick else 3,
        "min_time": 0.05 if quick else 1.0,
        "max_time": 60.0,
        "flat": "glm-es:warmup=50" if quick else "glm-es",
        "flat_horizons": [200, 400] if quick else [1000, 4000, 16000],
        "flat_runs": 10,
    }
    runs_given, flat_given = args.runs is not None, args.flat is not None
    for field, value in defaults.items():
        if getattr(args, field) is None:
            setattr(args, field, value)
    specs = [a.strip() for a in args.agents.split(",") if a.strip()]
    if not specs:
        p.error("--agents is empty")
    # neural agents are measured against PyTorch by throughput_neural.py (same options)
    args.neural = [a for a in specs if parse_agent_spec(a)[0] in TORCH_REFERENCES]
    args.neural_runs = args.runs if runs_given else None
    try:
        args.agents = [parse_entry(a) for a in specs if a not in args.neural]
        linear = bool(args.agents) or flat_given
        args.flat = None if args.flat.lower() == "none" or not linear else parse_entry(args.flat)
    except ValueError as err:
        p.error(str(err))
    return args


def print_throughput(rows: list[dict], markdown: bool) -> None:
    header = ["agent", "env", "runs", "horizon", "compile s", "wall s", "JAX seed-steps/s",
              "NumPy seed-steps/s", "ratio"]
    body = [[r["agent"], r["env"], str(r["runs"]), str(r["horizon"]), f"{r['compile']:.2f}",
             f"{r['wall']:.2f}", fmt_rate(r["rate"]), fmt_rate(r["np_rate"]),
             f"{r['ratio']:.1f}x"] for r in rows]
    print_table(header, body, markdown)


def print_flat(entry: BenchEntry, rows: list[dict], runs: int, numpy_runs: Sequence[NumpyRun],
               markdown: bool) -> None:
    print(f"flat in t: {entry.label}, JAX seed-steps/s at {runs} run(s) over growing horizons; "
          "'marginal' is the rate of the rounds a horizon adds to the previous one")
    header = ["agent", "horizon", "wall s", "JAX seed-steps/s", "rounds", "marginal seed-steps/s"]
    body = [[r["agent"], str(r["horizon"]), f"{r['wall']:.2f}", fmt_rate(r["rate"]),
             f"{r['from']}-{r['horizon']}", fmt_rate(r["marginal"])] for r in rows]
    print_table(header, body, markdown)
    if numpy_runs:
        warm = numpy_runs[0].warmup_steps
        parts = [f"{lo}-{hi}{' (warm-up)' if warm and hi <= warm else ''}: {1e3 * s:.3f}"
                 for lo, hi, s in step_time_windows(numpy_runs)]
        print(f"NumPy reference of {entry.label}, ms per step (median of {len(numpy_runs)} "
              f"seed(s)) by rounds: {' | '.join(parts)}")


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    import jax

    import jaxbandits as jb

    jb.use_cpu_cores(args.cpu_devices)

    print(f"jaxbandits throughput benchmark | jax {jax.__version__}, backend "
          f"{jax.default_backend()}, {jax.device_count()} device(s) "
          f"[{jax.devices()[0].device_kind}] | numpy {np.__version__} | python "
          f"{platform.python_version()} | {os.cpu_count()} CPU(s), load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    grows = "" if args.horizon == args.numpy_horizon else (
        f" ({args.numpy_horizon} for agents whose NumPy cost grows with t)")
    print(f"envs d={args.dim}, K={args.num_arms}, defaults otherwise; JAX horizon "
          f"{args.horizon}{grows}, best of {args.repeats} trial(s) of >= {args.min_time:g} s; "
          f"NumPy {args.numpy_horizon} steps x {args.check_seeds} seed(s), best seed"
          f"{'; quick mode' if args.quick else ''}")
    sys.stdout.flush()

    if args.neural:
        neural_args = ["--agents", ",".join(args.neural)] + (
            ["--runs", ",".join(map(str, args.neural_runs))] if args.neural_runs else []) + (
            ["--quick"] if args.quick else []) + (["--markdown"] if args.markdown else [])
        print(f"\nneural agents ({', '.join(args.neural)}): against PyTorch, as "
              f"`python benchmarks/throughput_neural.py {' '.join(neural_args)}`")
        sys.stdout.flush()
        throughput_neural.main(neural_args)
        if not args.agents and args.flat is None:
            return 0
        print()

    rows, checks = [], {}
    for entry in args.agents:
        env, agent = entry.make(args.dim, args.num_arms)
        check = check_numpy(env, agent, entry.name, horizon=args.numpy_horizon,
                            seeds=args.check_seeds, jax_runs=args.check_runs,
                            chunk_size=args.chunk_size, seed=args.seed)
        checks[entry.label] = check
        verdict = "consistent" if check["consistent"] else "MISMATCH: check the NumPy reference"
        print(f"[check] {entry.label} on {env.name}: final regret at T={args.numpy_horizon}: "
              f"NumPy {check['np_regret']:.1f} +- {check['np_half']:.1f} ({args.check_seeds} "
              f"seeds), JAX {check['jax_regret']:.1f} +- {check['jax_half']:.1f} "
              f"({args.check_runs} runs) -> {verdict}; NumPy {fmt_rate(check['rate'])} "
              f"seed-steps/s (best), {fmt_rate(check['rate_median'])} (median)")
        sys.stdout.flush()
        horizon = args.numpy_horizon if entry.reference.grows_with_t else args.horizon
        for runs in args.runs:
            m = time_jax(env, agent, horizon, runs, repeats=args.repeats,
                         min_time=args.min_time, max_time=args.max_time,
                         chunk_size=args.chunk_size, seed=args.seed)
            chunk = min(horizon, 1000) if args.chunk_size is None else args.chunk_size
            m["compile"] += check["compiled"].get((runs, chunk), 0.0)  # compiled by the check
            rows.append({"agent": entry.label, "env": env.name, "runs": runs,
                         "horizon": horizon, **m, "np_rate": check["rate"],
                         "ratio": m["rate"] / check["rate"]})
            print(f"[jax]   {entry.label} runs={runs}: {fmt_rate(m['rate'])} seed-steps/s, "
                  f"compile {m['compile']:.2f} s, {m['calls']} call(s)")
            sys.stdout.flush()

    print()
    print_throughput(rows, args.markdown)
    print()
    top = max(args.runs)
    for entry in args.agents:
        row = next(r for r in rows if r["agent"] == entry.label and r["runs"] == top)
        status = ""
        if top >= 1000:
            met = "met" if row["ratio"] >= TARGET_RATIO else "NOT met"
            status = f" (target >= {TARGET_RATIO:g}x: {met})"
        print(f"ratio {entry.label} at {top} runs: {row['ratio']:.1f}x{status}")
    grows = [e.label for e in args.agents if e.reference.grows_with_t]
    if grows:
        print(f"({', '.join(grows)}: the NumPy reference's per-step cost grows with t, so its "
              f"rows compare both sides over the same {args.numpy_horizon} rounds)")

    if args.flat is not None:
        print()
        env, agent = args.flat.make(args.dim, args.num_arms)
        flat_rows = flat_in_t(args.flat, env, agent, horizons=args.flat_horizons,
                              runs=args.flat_runs, seed=args.seed)
        numpy_runs = checks.get(args.flat.label, {}).get("numpy_runs")
        if numpy_runs is None:
            numpy_runs = [numpy_run(env, agent, args.flat.name, args.numpy_horizon, 10_000)]
        print_flat(args.flat, flat_rows, args.flat_runs, numpy_runs, args.markdown)
    print(f"total benchmark time {time.perf_counter() - t0:.1f} s; load average at the end "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
