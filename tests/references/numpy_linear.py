"""NumPy references of the linear and GLM agents: per seed (float64 loops) and batched.

The correctness oracles of ``lin-ts``, ``lin-ucb``, ``lin-es``, ``ensemble-pp`` and ``glm-es``:
one seed at a time with a Python loop per step, float64, the way the papers' own code runs
(``NUMPY_REFERENCES``, :func:`numpy_run`), and all R runs as a leading array axis with one
Python loop over time (``NUMPY_BATCHED``, :func:`numpy_batched_run`). Each draws its problem
instance as the JAX environment draws its own (:func:`numpy_instance`). The tests check them
against the agents; ``python -m benchmarks.throughput`` times the engine against them.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable

import numpy as np

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
    """Linear ensemble sampling (Lee & Oh 2024, Alg. 1; Sun et al. 2025, Sec. 7.1).

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


def reference_law(rng: np.random.Generator, kind: str, size: int, sparsity: int,
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
    """Linear Ensemble++ (Li et al. 2024, Sec. 3.1) with the Kalman-form factor update.

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
        zeta = reference_law(self.rng, self.perturbation, self.size, self.sparsity)
        return zeta / math.sqrt(self.size)

    def act(self, arms: np.ndarray) -> int:
        zeta = reference_law(self.rng, self.reference, self.size, self.sparsity)
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
    """GLM ensemble sampling (Sun et al. 2025 Algorithms 1-3) as the paper's code runs it.

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
    """NumPy twin of ``jaxbandits.linalg.round_design`` (Sun et al. 2025, Alg. 3,
    line 15 off)."""
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
        return reference_law(self.rng, kind, self.size, self.sparsity, batch, self.dtype)

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
