"""Throughput of the engine against NumPy, looped and batched, in seed-steps per second.

For every benchmarked agent and run count this prints how many seed-steps (runs x rounds) per
second ``jb.simulate`` plays (compile time excluded, reported separately), next to two NumPy
yardsticks of the same algorithm, and the engine's ratio to each:

* the NumPy loop (``NumPy loop seed-steps/s``, ``ratio``): one seed at a time with a Python loop
  per step, float64, the way the papers' own code runs. Its rate per seed-step does not depend on
  the number of runs;
* batched NumPy (``batched NumPy seed-steps/s``, ``ratio batched``; the linear agents ``lin-ts``,
  ``lin-ucb``, ``lin-es``, ``ensemble-pp``): all R runs at once as a leading array axis
  (``(R, d, d)``, ``(R, K, d)``, ...), one Python loop over time, batched ``einsum`` products and
  one ``(R, ...)`` random draw per round, float32 (``--batched-dtype``), in one process, what a
  careful NumPy user would write. Its rate depends on R (the Python overhead per round is shared
  by R runs), so it is measured at every run count. It costs per round what the engine's forms
  cost, O(d^2 + K d + d M) per run: no factorisation (lin-ts samples through a square root of
  ``V^{-1}`` kept by the Potter update, where the loop takes a Cholesky per step) and no
  O(K d^2) widths (lin-ucb downdates them by Sherman-Morrison, where the loop recomputes them).

Targets (issue 15), printed with "met" / "NOT met" at 1,000 runs, never asserted: >= 100x the
NumPy loop and >= 10x batched NumPy for the linear agents (>= 30x the loop for ``glm-es``, which
has no batched reference). Correctness: each NumPy reference's mean final regret must be in the
range of the JAX agent's, over ``--check-seeds`` seeds for the loop and ``--check-runs`` runs
for the batched reference (both printed, ``consistent`` or ``MISMATCH``).

Roofline: for the linear agents at the top run count the script prints the engine's achieved
GFLOP/s, ``rate x FLOP per seed-step / 1e9``, and its fraction of ``--peak-gflops`` (default 142,
the f32 matrix-multiply peak of the 2-core reference machine, shared/PERFORMANCE.md). The FLOP
counts are approximate analytic counts of the engine's forms (``FLOPS_PER_STEP``; a multiply-add
is 2 FLOP; random draws, argmax and the environment are not counted), e.g. lin-ts
8d^2 + 2Kd + O(d) = 5,380 at d = 20, K = 50.

Benchmarked by default, each on the environment its NumPy reference names (d = 20, K = 50, the
environment's defaults otherwise) and with the agent's default hyperparameters:

* ``lin-ts``, ``lin-ucb`` on ``linear``: ridge agents, ``V^{-1}`` kept by Sherman-Morrison (in
  the references; the engine keeps a square root of it);
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
    python benchmarks/throughput.py --no-reference --runs 1000,1000000 --block-runs all  # a GPU

An agent is given as ``name[:field=value[:field=value...]]``, the fields being overrides of
``jb.make_agent``: ``ensemble-pp:ensemble_size=8:reference=sphere`` is the row
``ensemble-pp[M=8,reference=sphere]`` (``ensemble_size`` is written ``M`` in labels).

Timing: each (agent, run count) is measured in ``--repeats`` trials (fewer once ``--max-time``
seconds have been spent on it); a trial repeats the same ``simulate`` call until its summed wall
time (compile excluded) reaches ``--min-time`` seconds, and the best trial is reported. The NumPy
loop's rate is the best of ``--check-seeds`` seeds of ``--numpy-horizon`` steps; per seed-step it
does not depend on the number of runs (it would play them one after another), so one loop rate
serves every run count. Batched NumPy is timed at each run count R in ``--repeats`` trials too: a
trial plays batches of R runs (fresh instances, ``--numpy-horizon`` rounds each, the last cut
short) until ``--min-time`` seconds of play, and the best trial is reported (its per-round cost
is flat in t, so a cut play's rate is a whole one's). The loop's rate does depend on the horizon
when the reference's per-step cost grows with t (``glm-es``): such agents are timed in JAX over
``--numpy-horizon`` rounds too (the ``horizon`` column), so the ratio compares equal horizons.

Cost: at the defaults each linear agent takes about two minutes on a busy 2-core CPU (the batched
NumPy reference adds about 3 s per run count and its regret check a few seconds). ``glm-es``
(10 members x 100 gradient steps per round) costs about 100 times more per seed-step, so its
1,000-run row, its regret check and the flat-in-t section take most of the time (about an hour
on such a machine). Use ``--agents``, ``--runs``, ``--numpy-horizon``, ``--check-seeds``,
``--check-runs`` and ``--flat-*`` to shorten it, e.g. ``--agents glm-es --runs 1,10,100
--numpy-horizon 1000 --check-seeds 4 --check-runs 50`` (about 6 minutes there).

Adding an agent: write a NumPy reference class (``__init__(agent, dim, rng)``, ``act(arms) ->
int``, ``update(x, y)``; read the hyperparameters from the JAX agent object so both run the same
configuration) and decorate it with ``@numpy_reference("agent-name")`` (``env="logistic"`` to
benchmark it there). See ``LinTSReference``. A batched reference (``__init__(agent, runs, dim,
rng, dtype)``, ``act(arms (R, K, d)) -> (R,)``, ``update(x (R, d), y (R,))``) is registered with
``@numpy_batched_reference("agent-name")`` (see ``BatchedLinTS``), and a FLOP count per seed-step
in ``FLOPS_PER_STEP`` gives the agent its roofline line.
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
    BLOCK_RUNS_HELP,
    CPU_DEVICES_HELP,
    block_runs_option,
    fmt_rate,
    int_list,
    parse_agent_spec,
    print_table,
    regret_agreement,
    time_jax,
)
from throughput_neural import TORCH_REFERENCES  # noqa: E402

# jax and jaxbandits are imported in main(), after --cpu-devices has split the CPU
# (the functions below import them lazily, so this module can be imported for its references).

TARGET_RUNS = 1000  # the run count the targets are set at
TARGET_RATIO = 30.0  # the engine's goal against the NumPy loop (agents with no batched reference)
# issue 15, the agents with a batched NumPy reference: against the loop and against the batch
LOOP_TARGET, BATCHED_TARGET = 100.0, 10.0
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


def _numpy_reference_law(rng: np.random.Generator, kind: str, size: int, sparsity: int,
                         batch: tuple[int, ...] = (), dtype=np.float64) -> np.ndarray:
    """NumPy twin of ``jaxbandits.linalg.reference_sample``: isotropic ``zeta`` in ``R^M``, one
    independent draw for each index of ``batch`` (shape ``(*batch, M)``)."""
    shape = (*batch, size)
    if kind == "gaussian":
        return rng.standard_normal(shape, dtype=dtype)
    if kind == "sphere":
        v = rng.standard_normal(shape, dtype=dtype)
        return v * (math.sqrt(size) / np.linalg.norm(v, axis=-1, keepdims=True))
    if kind == "cube":
        return rng.choice(np.array((-1.0, 1.0), dtype), shape)
    if kind == "coordinate":  # one coordinate +-sqrt(M)
        chosen = rng.integers(size, size=(*batch, 1))
    else:  # "sparse": s coordinates without replacement, +-sqrt(M / s)
        chosen = np.argsort(rng.random(shape), axis=-1)[..., :sparsity]
    values = rng.choice((-1.0, 1.0), chosen.shape) * math.sqrt(size / chosen.shape[-1])
    zeta = np.zeros(shape, dtype)
    np.put_along_axis(zeta, chosen, values, axis=-1)
    return zeta


def _read_ensemble_pp(reference, agent) -> None:
    """Sets the Ensemble++ hyperparameters of ``agent`` on a (per-seed or batched) reference."""
    _require(agent, inflation=("none", "theory"), factor_init=("paper", "code"))
    reference.size = int(agent.ensemble_size)
    reference.sigma = float(agent.noise_std)
    reference.explore_scale = float(agent.explore_scale)
    reference.theory = agent.inflation == "theory"
    reference.delta = float(agent.delta)
    reference.param_bound = float(agent.param_bound)
    reference.reference = agent.reference
    reference.perturbation = agent.perturbation
    reference.sparsity = int(agent.sparsity)


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
        _read_ensemble_pp(self, agent)
        self.rng = rng
        self.dim = dim
        self.reg = float(agent.reg)
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


def numpy_instance(env, rng: np.random.Generator,
                   batch: tuple[int, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """One instance of the ``linear`` or ``logistic`` (Gaussian-noise) environment ``env``, or
    independent ones for each index of ``batch`` (a leading shape, e.g. ``(runs,)``).

    Returns ``(arms (*batch, K, d), means (*batch, K))`` with ``means = arms @ theta*`` (linear)
    or ``sigmoid(arms @ theta*)`` (logistic; theta* scaled by ``theta_scale``), drawn from the
    same distributions as the JAX environment's (one fixed arm set per run).
    """
    name = getattr(env, "name", "")
    if (name not in NUMPY_ENVS or getattr(env, "fresh_arms", False)
            or getattr(env, "instance_seed", None) is not None
            or getattr(env, "reward_kind", "gaussian") != "gaussian"):
        raise ValueError(f"the NumPy reference environments are {NUMPY_ENVS} with fixed arms, "
                         "an instance per run and Gaussian noise")
    dim, num_arms = env.dim, env.num_arms
    theta = _numpy_vectors(rng, (*batch, dim), env.theta_prior, math.sqrt(env.prior_var))
    arm_scale = env.cube_halfwidth if env.arm_prior == "cube" else 1.0 / math.sqrt(dim)
    arms = _numpy_vectors(rng, (*batch, num_arms, dim), env.arm_prior, arm_scale)
    if name == "logistic":
        theta = env.theta_scale * theta
    means = (arms @ theta[..., None])[..., 0]
    if name == "logistic":
        return arms, 1.0 / (1.0 + np.exp(-means))
    return arms, means


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
# Batched NumPy references: all R runs as a leading axis, one Python loop over time.
#
# What a careful NumPy user writes to play many seeds at once: the per-seed references' algorithms
# with every array given a leading run axis ((R, d, d), (R, K, d), ...), batched products
# (``np.matmul`` for the matrix-vector products and ``np.einsum`` for the outer products, the
# faster of the two forms for each on this machine, about 1.5x over einsum throughout), one
# ``rng`` draw of shape (R, ...) per round and no Python loop over runs.
# float32 by default (``--batched-dtype``), as the engine runs. Per round they cost what the
# engine's forms cost, O(d^2 + K d + d M) per run, with no factorisation and no O(K d^2) step
# (the per-seed references, like the papers' code, factorise V^{-1} (lin-ts) or recompute every
# width (lin-ucb)): a batched yardstick must not do asymptotically more work than the engine.

NUMPY_BATCHED: dict[str, Callable] = {}


def numpy_batched_reference(name: str):
    """Registers a batched NumPy reference class for the JAX agent called ``name``.

    The class is built as ``cls(agent, runs, dim, rng, dtype)`` and offers
    ``act(arms: (R, K, d)) -> (R,) int`` and ``update(x: (R, d), y: (R,)) -> None``; it plays
    the environment of the agent's per-seed reference (``NUMPY_REFERENCES[name].env_name``).
    """

    def register(cls):
        NUMPY_BATCHED[name] = cls
        return cls

    return register


def _bmv(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Batched matrix-vector product: ``(..., n, d) x (..., d) -> (..., n)``."""
    return (a @ x[..., None])[..., 0]


def _bvm(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Batched vector-matrix product ``x^T A``: ``(..., n) x (..., n, d) -> (..., d)``."""
    return (x[..., None, :] @ a)[..., 0, :]


def _bouter(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched outer product: ``(..., n) x (..., d) -> (..., n, d)``."""
    return np.einsum("...i,...j->...ij", a, b)


def _bdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched inner product: ``(..., d) x (..., d) -> (...)``."""
    return np.einsum("...i,...i->...", a, b)


class _BatchedRidge:
    """R ridge regressions: ``V^{-1}`` ``(R, d, d)`` by batched Sherman-Morrison, the ridge mean
    by its Kalman step, ``log det V`` for the confidence radii.

    The downdate is written ``V^{-1} -= c c^T`` with ``c = V^{-1} x / sqrt(1 + q)``, which keeps
    ``V^{-1}`` exactly symmetric in floating point (an outer product of one vector with itself).
    """

    def __init__(self, runs: int, dim: int, reg: float, rng: np.random.Generator, dtype):
        self.rng, self.runs, self.dim, self.dtype = rng, runs, dim, dtype
        self.reg = float(reg)
        self.v_inv = np.tile(np.eye(dim, dtype=dtype) / dtype(self.reg), (runs, 1, 1))
        self.mean = np.zeros((runs, dim), dtype)
        self.logdet = np.full(runs, dim * math.log(self.reg))  # float64: log det V per run

    def _absorb(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Adds ``(x, y)`` to every run; returns ``V_{t-1}^{-1} x`` ``(R, d)`` and ``q``
        ``(R,)`` (``x^T V_{t-1}^{-1} x``); the gain ``V_t^{-1} x`` is ``vx / (1 + q)``."""
        vx = _bmv(self.v_inv, x)
        q = _bdot(x, vx)
        self.mean += vx * ((y - _bdot(x, self.mean)) / (1.0 + q))[:, None]
        c = vx / np.sqrt(1.0 + q)[:, None]
        self.v_inv -= _bouter(c, c)
        self.logdet += np.log1p(q)
        return vx, q

    def _oful_radius(self, noise_std: float, delta: float, param_bound: float) -> np.ndarray:
        """``(R,)`` the OFUL radius (as ``LinUCBReference``), float64."""
        log_ratio = self.logdet - self.dim * math.log(self.reg)
        radius = noise_std * np.sqrt(2.0 * math.log(1.0 / delta) + log_ratio)
        return radius + math.sqrt(self.reg) * param_bound


@numpy_batched_reference("lin-ts")
class BatchedLinTS:
    """LinTS on R runs: ``theta ~ N(mean, (scale * noise_std)^2 V^{-1})`` through a square root
    ``S`` of ``V^{-1}`` (``S S^T = V^{-1}``) kept by the Potter rank-one update, as the engine
    does: one batched matrix-vector product per sample, no factorisation.

    (The per-seed reference takes a Cholesky of ``V^{-1}`` every step, as the papers' code does;
    batched over R runs ``np.linalg.cholesky`` costs more than the rest of the step, and in
    float32 a Sherman-Morrison ``V^{-1}`` can lose definiteness, so the square root is both the
    faster and the safer batched form. The law of the actions is the same.)
    """

    def __init__(self, agent, runs: int, dim: int, rng: np.random.Generator, dtype):
        self.rng, self.runs, self.dim, self.dtype = rng, runs, dim, dtype
        self.scale = dtype(float(agent.explore_scale) * float(agent.noise_std))
        reg = float(agent.reg)
        self.sqrt_cov = np.tile(np.eye(dim, dtype=dtype) / dtype(math.sqrt(reg)), (runs, 1, 1))
        self.mean = np.zeros((runs, dim), dtype)

    def act(self, arms: np.ndarray) -> np.ndarray:
        z = self.rng.standard_normal((self.runs, self.dim), dtype=self.dtype)
        theta = self.mean + self.scale * _bmv(self.sqrt_cov, z)
        return np.argmax(_bmv(arms, theta), axis=-1)

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        # s = S^T x, q = |s|^2, r = sqrt(1 + q); mean += S s (y - x^T mean) / (1 + q);
        # S -= (S s) s^T / (r (r + 1))  (jaxbandits.linalg.ridge_update)
        s = _bvm(x, self.sqrt_cov)
        q = _bdot(s, s)
        r = np.sqrt(1.0 + q)
        s_s = _bmv(self.sqrt_cov, s)
        self.mean += s_s * ((y - _bdot(x, self.mean)) / (1.0 + q))[:, None]
        self.sqrt_cov -= _bouter(s_s, s / (r * (r + 1.0))[:, None])


@numpy_batched_reference("lin-ucb")
class BatchedLinUCB(_BatchedRidge):
    """LinUCB on R runs, the squared widths ``x_k^T V^{-1} x_k`` ``(R, K)`` downdated by
    Sherman-Morrison (``w_k -= (x_k^T V^{-1} x)^2 / (1 + q)``, clipped at 0) as the engine does
    on a fixed arm set, instead of the per-seed reference's O(K d^2) recomputation."""

    def __init__(self, agent, runs: int, dim: int, rng: np.random.Generator, dtype):
        super().__init__(runs, dim, agent.reg, rng, dtype)
        self.noise_std = float(agent.noise_std)
        self.explore_scale = float(agent.explore_scale)
        self.delta = float(agent.delta)
        self.param_bound = float(agent.param_bound)
        self.arms: np.ndarray | None = None
        self.sq_widths: np.ndarray | None = None

    def act(self, arms: np.ndarray) -> np.ndarray:
        if self.sq_widths is None:  # the prior widths |x_k|^2 / reg, from the first arms seen
            self.arms = arms
            self.sq_widths = _bdot(arms, arms) / self.dtype(self.reg)
        radius = self._oful_radius(self.noise_std, self.delta, self.param_bound)
        bonus = (self.explore_scale * radius).astype(self.dtype)[:, None]
        return np.argmax(_bmv(arms, self.mean) + bonus * np.sqrt(self.sq_widths), axis=-1)

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        vx, q = self._absorb(x, y)
        u = _bmv(self.arms, vx)  # (R, K): x_k^T V_{t-1}^{-1} x
        self.sq_widths = np.maximum(self.sq_widths - u * u / (1.0 + q)[:, None], 0.0)


@numpy_batched_reference("lin-es")
class BatchedLinES(_BatchedRidge):
    """Linear ensemble sampling on R runs: member ``j`` is ``mean + V^{-1} p^j`` (the per-seed
    reference's ``V^{-1} (b + p^j)``) with ``p`` ``(R, m, d)``; each run draws its own ``j``."""

    def __init__(self, agent, runs: int, dim: int, rng: np.random.Generator, dtype):
        super().__init__(runs, dim, agent.reg, rng, dtype)
        _require(agent, selection=("uniform", "round_robin"))
        self.size = int(agent.ensemble_size)
        self.round_robin = agent.selection == "round_robin"
        self.perturb_std = dtype(float(agent.perturb_std))
        init_std = float(agent.prior_scale) * float(agent.perturb_std)
        init_std = init_std if agent.init_perturbation else 0.0
        self.p = dtype(math.sqrt(self.reg) * init_std) * rng.standard_normal(
            (runs, self.size, dim), dtype=dtype)
        self.rows = np.arange(runs)
        self.count = 0

    def act(self, arms: np.ndarray) -> np.ndarray:
        if self.round_robin:
            member = np.full(self.runs, self.count % self.size)
        else:
            member = self.rng.integers(self.size, size=self.runs)
        theta = self.mean + _bmv(self.v_inv, self.p[self.rows, member])
        return np.argmax(_bmv(arms, theta), axis=-1)

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        self._absorb(x, y)
        z = self.perturb_std * self.rng.standard_normal((self.runs, self.size), dtype=self.dtype)
        self.p += _bouter(z, x)
        self.count += 1


@numpy_batched_reference("ensemble-pp")
class BatchedEnsemblePlusPlus(_BatchedRidge):
    """Linear Ensemble++ on R runs: ``V^{-1}`` (``Sigma = sigma^2 V^{-1}``), ``mu`` and the
    factor ``A`` ``(R, d, M)``; the Kalman gain ``k = Sigma x / alpha`` is the ridge gain
    ``V^{-1} x / (1 + q)`` (``alpha = sigma^2 (1 + q)``), so the update is the ridge step plus
    ``A += k (sigma z^T - x^T A)``. Same laws as ``EnsemblePlusPlusReference``."""

    def __init__(self, agent, runs: int, dim: int, rng: np.random.Generator, dtype):
        _read_ensemble_pp(self, agent)
        super().__init__(runs, dim, agent.reg, rng, dtype)
        if agent.factor_init == "paper":  # columns N(0, Sigma_0) / sqrt(M)
            b = rng.standard_normal((runs, dim, self.size), dtype=dtype)
        else:  # the authors' code: each row of B a draw of P_z
            b = self._law(self.perturbation, (runs, dim))
        self.factor = b * dtype(self.sigma / math.sqrt(self.reg) / math.sqrt(self.size))

    def _law(self, kind: str, batch: tuple[int, ...]) -> np.ndarray:
        return _numpy_reference_law(self.rng, kind, self.size, self.sparsity, batch, self.dtype)

    def act(self, arms: np.ndarray) -> np.ndarray:
        zeta = self._law(self.reference, (self.runs,))
        beta = np.full(self.runs, self.explore_scale)
        if self.theory:  # Eq. 36: the OFUL radius in Sigma-norm
            beta *= self._oful_radius(self.sigma, self.delta, self.param_bound) / self.sigma
        theta = self.mean + beta.astype(self.dtype)[:, None] * _bmv(self.factor, zeta)
        return np.argmax(_bmv(arms, theta), axis=-1)

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        z = self._law(self.perturbation, (self.runs,))
        z *= self.dtype(self.sigma / math.sqrt(self.size))
        residual = z - _bvm(x, self.factor)  # before the ridge step
        vx, q = self._absorb(x, y)
        self.factor += _bouter(vx / (1.0 + q)[:, None], residual)


@dataclasses.dataclass
class BatchedRun:
    """R runs of a batched reference: final regrets ``(R,)`` (after ``steps`` rounds; the
    horizon unless a time budget stopped the play) and the timed seconds."""

    regrets: np.ndarray
    steps: int
    seconds: float


def numpy_batched_run(env, agent, agent_name: str, horizon: int, runs: int, seed: int, *,
                      dtype=np.float32, time_budget: float = math.inf) -> BatchedRun:
    """Plays ``runs`` runs of ``agent_name``'s batched NumPy reference at once, each on its own
    instance of ``env`` (drawn as ``numpy_instance`` draws one), for ``horizon`` rounds or until
    ``time_budget`` seconds have passed. The timed loop covers every round: act, rewards,
    regrets, update (as ``numpy_run``'s)."""
    rng = np.random.default_rng(seed)
    arms, means = numpy_instance(env, rng, (runs,))
    arms = arms.astype(dtype)
    best = means.max(axis=-1)
    noise_std = float(env.noise_std)
    policy = NUMPY_BATCHED[agent_name](agent, runs, env.dim, rng, dtype)
    rows = np.arange(runs)

    regrets = np.zeros(runs)
    clock = time.perf_counter
    start = clock()
    steps = 0
    while steps < horizon:
        action = policy.act(arms)
        mean = means[rows, action]
        rewards = (mean + noise_std * rng.standard_normal(runs)).astype(dtype)
        regrets += best - mean
        policy.update(arms[rows, action], rewards)
        steps += 1
        if clock() - start >= time_budget:
            break
    return BatchedRun(regrets, steps, clock() - start)


# ------------------------------------------------------------------------------------------------
# The engine's arithmetic per seed-step, for the roofline line: approximate FLOP counts of the JAX
# agents' forms (a multiply-add counts 2; random draws, argmax, the environment's reward lookup
# and the engine's bookkeeping are not counted). Every ridge agent's update is the Potter
# square-root step of ``jaxbandits.linalg.ridge_update``: S^T x (2d^2), S s (2d^2), the rank-one
# downdate of S (2d^2) and O(d) for q, the mean and log det: 6d^2 + 7d.


def _ridge_update_flops(d: int) -> int:
    return 6 * d * d + 7 * d


def _lin_ts_flops(agent, d: int, k: int) -> int:
    # sample S z (2d^2) and mean + scale S z (2d); scores arms @ theta (2Kd); Potter update
    return 2 * d * d + 2 * d + 2 * k * d + _ridge_update_flops(d)


def _lin_ucb_flops(agent, d: int, k: int) -> int:
    # scores arms @ mean (2Kd) + bonus * sqrt(widths) (3K); Potter update; widths downdate on the
    # fixed arm set: arms @ (S s) (2Kd) and w - u^2 / (1 + q) (3K)
    return 4 * k * d + 6 * k + _ridge_update_flops(d)


def _lin_es_flops(agent, d: int, k: int) -> int:
    # member mu + A e_j (d); scores (2Kd); Potter update; gain (d); x^T A (2dm), targets - x^T A
    # (m), A += gain residual^T (2dm)
    m = int(agent.ensemble_size)
    return 2 * d + 2 * k * d + _ridge_update_flops(d) + 4 * d * m + m


def _ensemble_pp_flops(agent, d: int, k: int) -> int:
    # A zeta (2dM), mu + beta A zeta (2d); scores (2Kd); Potter update; gain (d); sigma z (M),
    # x^T A (2dM), residual (M), A += gain residual^T (2dM)
    m = int(agent.ensemble_size)
    return 3 * d + 2 * k * d + _ridge_update_flops(d) + 6 * d * m + 2 * m


FLOPS_PER_STEP: dict[str, Callable[[Any, int, int], int]] = {
    "lin-ts": _lin_ts_flops,  # 8d^2 + 2Kd + O(d): 5,380 at d = 20, K = 50
    "lin-ucb": _lin_ucb_flops,  # 6d^2 + 4Kd + O(K + d): 6,840
    "lin-es": _lin_es_flops,  # 6d^2 + 4dm + 2Kd + O(d + m): 6,605 at m = 25
    "ensemble-pp": _ensemble_pp_flops,  # 6d^2 + 6dM + 2Kd + O(d + M): 5,576 (M=8), 8,504 (M=32)
}


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
    return {
        "rate": max(rates),
        "rate_median": float(np.median(rates)),
        **regret_agreement(regrets, jax_mean, jax_half, jax_runs),
        "numpy_runs": runs,
        "compiled": {compiled: result.compile_time},
    }


def check_batched(env, agent, name: str, *, horizon: int, runs: int, seed: int, dtype,
                  jax_mean: float, jax_half: float) -> dict:
    """The batched reference's mean final regret over ``runs`` runs against the JAX agent's
    (``jax_mean +- jax_half``, from ``check_numpy``), and its seed-steps/s at ``runs``."""
    run = numpy_batched_run(env, agent, name, horizon, runs, seed, dtype=dtype)
    return {"rate": runs * run.steps / run.seconds,
            **regret_agreement(run.regrets, jax_mean, jax_half, runs)}


def time_batched(env, agent, name: str, *, horizon: int, runs: int, repeats: int,
                 min_time: float, seed: int, dtype) -> dict:
    """Best-of-``repeats`` seed-steps/s of the batched reference at ``runs`` runs.

    A trial plays fresh batches of ``runs`` runs (``horizon`` rounds each, the last one cut
    short) until ``min_time`` seconds of play; the per-round cost is flat in t, so the rate of
    a cut play is that of a whole one. Returns ``{"rate", "steps", "seconds"}`` (best trial).
    """
    best = {"rate": 0.0, "steps": 0, "seconds": 0.0}
    for trial in range(repeats):
        steps, seconds, play = 0, 0.0, 0
        while seconds < min_time:
            run = numpy_batched_run(env, agent, name, horizon, runs,
                                    seed + 1_000 * trial + play, dtype=dtype,
                                    time_budget=min_time - seconds)
            steps, seconds, play = steps + run.steps, seconds + run.seconds, play + 1
        if runs * steps / seconds > best["rate"]:
            best = {"rate": runs * steps / seconds, "steps": steps, "seconds": seconds}
    return best


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
                   help="JAX runs of the regret check, also the runs of the batched NumPy "
                        "reference's check (default 200; quick: 10)")
    p.add_argument("--repeats", type=int, default=None,
                   help="timing trials per JAX measurement, best reported (default 3; quick: 1)")
    p.add_argument("--min-time", type=float, default=None,
                   help="seconds of wall time per trial, JAX and batched NumPy (default 1.0; "
                        "quick: 0.05)")
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
    p.add_argument("--batched-dtype", choices=("float32", "float64"), default="float32",
                   help="the batched NumPy references' float type")
    p.add_argument("--peak-gflops", type=float, default=142.0,
                   help="the machine's f32 peak for the roofline line (142: the f32 "
                        "matrix-multiply peak of the 2-core reference machine, "
                        "shared/PERFORMANCE.md)")
    p.add_argument("--dim", type=int, default=20)
    p.add_argument("--num-arms", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cpu-devices", type=int, default=None, help=CPU_DEVICES_HELP)
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test (~1 min)")
    p.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    p.add_argument("--block-runs", type=block_runs_option, default=None, help=BLOCK_RUNS_HELP)
    p.add_argument("--no-reference", action="store_true",
                   help="JAX numbers only: no NumPy loop, no batched NumPy, no regret checks, no "
                        "flat-in-t section; a run count that does not fit the device is printed "
                        "as such and the benchmark goes on (for GPU sweeps to 10^6 runs)")
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
        linear = (bool(args.agents) or flat_given) and not args.no_reference
        args.flat = None if args.flat.lower() == "none" or not linear else parse_entry(args.flat)
    except ValueError as err:
        p.error(str(err))
    return args


def _fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}x"


def print_throughput(rows: list[dict], markdown: bool, references: bool = True) -> None:
    """The throughput table; without ``references``, the engine's columns alone."""
    header = ["agent", "env", "runs", "horizon", "compile s", "wall s", "JAX seed-steps/s"]
    body = [[r["agent"], r["env"], str(r["runs"]), str(r["horizon"]), f"{r['compile']:.2f}",
             f"{r['wall']:.2f}", fmt_rate(r["rate"])] for r in rows]
    if references:
        header += ["NumPy loop seed-steps/s", "ratio", "batched NumPy seed-steps/s",
                   "ratio batched"]
        for line, r in zip(body, rows, strict=True):
            line += [fmt_rate(r["np_rate"]), _fmt_ratio(r["ratio"]),
                     fmt_rate(r["batched_rate"]), _fmt_ratio(r["batched_ratio"])]
    print_table(header, body, markdown)


def _against(ratio: float, target: float, runs: int) -> str:
    if runs < TARGET_RUNS:
        return f"{ratio:.1f}x"
    return f"{ratio:.1f}x (target >= {target:g}x: {'met' if ratio >= target else 'NOT met'})"


def summary_line(label: str, row: dict, runs: int) -> str:
    """``ratio LABEL at RUNS runs: ...`` against the NumPy loop (and the batched reference, if
    any), with the targets' verdicts at ``TARGET_RUNS`` runs or more (printed, never asserted)."""
    if row["batched_ratio"] is None:
        return f"ratio {label} at {runs} runs: {_against(row['ratio'], TARGET_RATIO, runs)}"
    return (f"ratio {label} at {runs} runs: {_against(row['ratio'], LOOP_TARGET, runs)} vs the "
            f"NumPy loop, {_against(row['batched_ratio'], BATCHED_TARGET, runs)} vs batched "
            "NumPy")


def roofline_line(label: str, row: dict, runs: int, flops: int, peak_gflops: float) -> str:
    """The engine's achieved GFLOP/s (``rate * flops / 1e9``) and its fraction of the peak."""
    achieved = row["rate"] * flops / 1e9
    return (f"roofline {label} at {runs} runs: ~{flops:,} FLOP per seed-step x "
            f"{fmt_rate(row['rate'])} seed-steps/s = {achieved:.2f} GFLOP/s achieved = "
            f"{100.0 * achieved / peak_gflops:.2f}% of the {peak_gflops:g} GFLOP/s f32 peak")


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


def jax_only(args) -> int:
    """``--no-reference``: the engine's seed-steps/s and compile time per (agent, run count),
    the best run count per agent, and the roofline at ``--peak-gflops``. A run count whose
    state does not fit the device (the engine's memory check, or the device's allocator) is
    printed as ``does not fit`` and the run counts after it are skipped."""
    if args.neural:
        print(f"(neural agents {', '.join(args.neural)}: run benchmarks/throughput_neural.py "
              "--no-torch for them)")
    t0 = time.perf_counter()
    rows, flops = [], {}
    for entry in args.agents:
        env, agent = entry.make(args.dim, args.num_arms)
        if entry.name in FLOPS_PER_STEP:
            flops[entry.label] = FLOPS_PER_STEP[entry.name](agent, env.dim, env.num_arms)
        for runs in args.runs:
            try:
                m = time_jax(env, agent, args.horizon, runs, repeats=args.repeats,
                             min_time=args.min_time, max_time=args.max_time,
                             chunk_size=args.chunk_size, seed=args.seed,
                             block_runs=args.block_runs)
            except Exception as err:  # noqa: BLE001 - out of memory, whatever the backend says
                message = str(err).splitlines()[0][:160]
                print(f"[jax]   {entry.label} runs={runs}: does not fit ({type(err).__name__}: "
                      f"{message}); the run counts after it skipped")
                sys.stdout.flush()
                break
            rows.append({"agent": entry.label, "env": env.name, "runs": runs,
                         "horizon": args.horizon, **m})
            print(f"[jax]   {entry.label} runs={runs}: {fmt_rate(m['rate'])} seed-steps/s, "
                  f"compile {m['compile']:.2f} s, {m['calls']} call(s)")
            sys.stdout.flush()
    print()
    print_throughput(rows, args.markdown, references=False)
    print()
    for entry in args.agents:
        mine = [r for r in rows if r["agent"] == entry.label]
        if not mine:
            continue
        best = max(mine, key=lambda r: r["rate"])
        print(f"best {entry.label}: {fmt_rate(best['rate'])} seed-steps/s at {best['runs']:,} "
              f"runs (compile {best['compile']:.2f} s)")
        if entry.label in flops:
            print(roofline_line(entry.label, best, best["runs"], flops[entry.label],
                                args.peak_gflops))
    print(f"total benchmark time {time.perf_counter() - t0:.1f} s")
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    import jax

    import jaxbandits as jb

    jb.use_cpu_cores(args.cpu_devices)
    jb.use_compilation_cache()  # compile times are reported apart; the cache shortens reruns

    print(f"jaxbandits throughput benchmark | jax {jax.__version__}, backend "
          f"{jax.default_backend()}, {jax.device_count()} device(s) "
          f"[{jax.devices()[0].device_kind}] | numpy {np.__version__} | python "
          f"{platform.python_version()} | {os.cpu_count()} CPU(s), load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.no_reference:
        print(f"envs d={args.dim}, K={args.num_arms}, defaults otherwise; JAX horizon "
              f"{args.horizon}, best of {args.repeats} trial(s) of >= {args.min_time:g} s; "
              "JAX only (--no-reference)")
        return jax_only(args)
    grows = "" if args.horizon == args.numpy_horizon else (
        f" ({args.numpy_horizon} for agents whose NumPy cost grows with t)")
    print(f"envs d={args.dim}, K={args.num_arms}, defaults otherwise; JAX horizon "
          f"{args.horizon}{grows}, best of {args.repeats} trial(s) of >= {args.min_time:g} s; "
          f"NumPy loop {args.numpy_horizon} steps x {args.check_seeds} seed(s), best seed; "
          f"batched NumPy ({args.batched_dtype}, one process) best of {args.repeats} "
          f"trial(s) of >= {args.min_time:g} s in plays of <= {args.numpy_horizon} rounds"
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

    dtype = np.dtype(args.batched_dtype).type
    rows, checks = [], {}
    for entry in args.agents:
        env, agent = entry.make(args.dim, args.num_arms)
        batched = entry.name in NUMPY_BATCHED
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
        if batched:
            bcheck = check_batched(env, agent, entry.name, horizon=args.numpy_horizon,
                                   runs=args.check_runs, seed=20_000, dtype=dtype,
                                   jax_mean=check["jax_regret"], jax_half=check["jax_half"])
            verdict = ("consistent" if bcheck["consistent"]
                       else "MISMATCH: check the batched NumPy reference")
            print(f"[batched] {entry.label} on {env.name}: final regret at "
                  f"T={args.numpy_horizon}: batched NumPy {bcheck['np_regret']:.1f} +- "
                  f"{bcheck['np_half']:.1f} ({args.check_runs} runs, {args.batched_dtype}), "
                  f"JAX {bcheck['jax_regret']:.1f} +- {bcheck['jax_half']:.1f} -> {verdict}; "
                  f"{fmt_rate(bcheck['rate'])} seed-steps/s at {args.check_runs} runs")
            sys.stdout.flush()
        horizon = args.numpy_horizon if entry.reference.grows_with_t else args.horizon
        for runs in args.runs:
            b_rate = None
            if batched:
                b = time_batched(env, agent, entry.name, horizon=args.numpy_horizon, runs=runs,
                                 repeats=args.repeats, min_time=args.min_time, seed=30_000,
                                 dtype=dtype)
                b_rate = b["rate"]
                print(f"[batched] {entry.label} runs={runs}: {fmt_rate(b_rate)} seed-steps/s "
                      f"(best trial: {b['steps']} rounds in {b['seconds']:.2f} s)")
            m = time_jax(env, agent, horizon, runs, repeats=args.repeats,
                         min_time=args.min_time, max_time=args.max_time,
                         chunk_size=args.chunk_size, seed=args.seed,
                         block_runs=args.block_runs)
            chunk = (jb.default_chunk_size(agent, horizon) if args.chunk_size is None
                     else args.chunk_size)
            m["compile"] += check["compiled"].get((runs, chunk), 0.0)  # compiled by the check
            rows.append({"agent": entry.label, "env": env.name, "runs": runs,
                         "horizon": horizon, **m, "np_rate": check["rate"],
                         "ratio": m["rate"] / check["rate"], "batched_rate": b_rate,
                         "batched_ratio": None if b_rate is None else m["rate"] / b_rate})
            print(f"[jax]   {entry.label} runs={runs}: {fmt_rate(m['rate'])} seed-steps/s, "
                  f"compile {m['compile']:.2f} s, {m['calls']} call(s)")
            sys.stdout.flush()

    print()
    print_throughput(rows, args.markdown)
    print()
    top = max(args.runs)
    for entry in args.agents:
        row = next(r for r in rows if r["agent"] == entry.label and r["runs"] == top)
        print(summary_line(entry.label, row, top))
    for entry in args.agents:
        flops = FLOPS_PER_STEP.get(entry.name)
        if flops is not None:
            row = next(r for r in rows if r["agent"] == entry.label and r["runs"] == top)
            env, agent = entry.make(args.dim, args.num_arms)
            print(roofline_line(entry.label, row, top, flops(agent, env.dim, env.num_arms),
                                args.peak_gflops))
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
