"""Li et al. 2024 (Ensemble++): the authors' and the official LMC-TS code beside the engine.

``linear`` (Fig. 2(a)), ``lmcts`` (App. F.2), ``greedy`` (Fig. 3) and ``compact`` (App. F.1,
Fig. 10(c): the references at small M on the unit sphere), each run with ``--side
authors`` (their checkout on ``PYTHONPATH``; without it, it says what is missing and exits 0) and
``--side engine``; each prints every run's final regret and the mean ± standard error. Setup,
commands and findings: docs/reproductions/li-2024.md, "Misses and their causes"::

    PYTHONPATH=.:IDS python -m benchmarks.authors.li2024 linear --side authors --runs 100
    python -m benchmarks.authors.li2024 linear --side engine --runs 100
    PYTHONPATH=.:IDS python -m benchmarks.authors.li2024 compact --side authors --sizes 2
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import math
import sys
import time

import numpy as np

#: the authors' modules each comparison imports (the first missing one is reported)
NEEDS = {"linear": ("agent.closedform", "env.linear", "numba"),
         "compact": ("agent.CompactClosedform", "env.linear", "numba"),
         "LMC-TS": ("algo.langevin", "algo.lmcts", "train_utils.dataset", "torch"),
         "Ensemble++": ("agent.nonlinear_sol", "network.ensemble_exp", "torch"),
         "greedy": ("agent.nonlinear_sol", "network.ensemble_exp", "torch")}
WHERE = {"linear": "jiawei415/Information_Directed_Sampling (master)",
         "compact": "jiawei415/Information_Directed_Sampling (master)",
         "LMC-TS": "devzhk/LMCTS", "Ensemble++": "szrlee/Ensemble_Plus_Plus",
         "greedy": "szrlee/Ensemble_Plus_Plus"}


def summary(label: str, finals) -> str:
    finals = np.asarray(finals, dtype=np.float64)
    se = finals.std(ddof=1) / math.sqrt(finals.size) if finals.size > 1 else float("nan")
    return f"{label}: {finals.mean():.1f} ± {se:.1f} (se, {finals.size} runs)"


def report(out: dict, path: str | None) -> None:
    for label, finals in out.items():
        print(summary(label, finals), flush=True)
    if path:
        with open(path, "w") as f:
            json.dump(out, f)


def engine_finals(env, agents: dict, args) -> dict:
    """``{label: [final regret per run]}`` of each agent on ``env`` (one block of all runs)."""
    import jaxbandits as jb

    out = {}
    for label, agent in agents.items():
        result = jb.simulate(env, agent, args.seed, args.horizon, args.runs,
                             record=[args.horizon], block_runs=args.runs)
        out[label] = np.asarray(result.cumulative_regret[:, -1], np.float64).tolist()
        print(summary(label, out[label]), flush=True)
    return out


# -- (a) linear: Fig. 2(a) ------------------------------------------------------------------------

def linear_authors(args) -> dict:
    """The authors' ``LinMAB.TS`` and ``LinMAB.IS`` on ``PaperLinModel`` (their "Russo" game), as
    ``exp.LinMAB_expe`` + ``utils.storeRegret`` run them: one model per run, ``set_seed(2023)``
    before every method, ``np.random.seed(46)`` before the models (``scripts/run_linear.py``)."""
    import agent.closedform as closedform
    import utils
    from env.linear import PaperLinModel

    closedform.approx_err = lambda action_set, p, q: np.zeros(len(action_set))  # log only
    closedform.approx_err_compact = lambda p, q_inv: (0.0, 0.0)
    np.random.seed(46)  # noqa: NPY002 -- the authors' global seeding, scripts/run_linear.py
    models = [closedform.LinMAB(PaperLinModel(1 / np.sqrt(5), args.dim, args.arms, sigma=10))
              for _ in range(args.runs)]
    index_sampling = {"haar": False, "index": "Normal", "perturbed_noise": "Sphere"}
    methods = [("TS", {})] * (not args.no_ts) + [(f"Ensemble++ M={m}", {"M": m, **index_sampling})
                                                  for m in args.sizes]
    out = {}
    for label, kwargs in methods:
        utils.set_seed(2023)
        start, finals = time.perf_counter(), []
        for model in models:
            method = model.TS if label == "TS" else model.IS
            finals.append(float(np.sum(method(args.horizon, **kwargs)["expected_regret"])))
        out[label] = finals
        print(summary(label, finals), f"[{time.perf_counter() - start:.0f} s]", flush=True)
    return out


def linear_engine(args) -> dict:
    import jaxbandits as jb

    env = jb.make_env("russo", dim=args.dim, num_arms=args.arms)
    reg, noise = float(env.noise_std) ** 2 / float(env.prior_var), float(env.noise_std)
    agents = {"TS": jb.make_agent("lin-ts", reg=reg, noise_std=noise)}
    for m in args.sizes:
        for init in ("paper", "code"):
            agents[f"Ensemble++ M={m} ({init} A_0)"] = jb.make_agent(
                "ensemble-pp", ensemble_size=m, reg=reg, noise_std=noise, reference="gaussian",
                perturbation="sphere", factor_init=init)
    return engine_finals(env, agents, args)


# -- (b) LMC-TS on vector-quadratic: App. F.2 -----------------------------------------------------

def lmcts_authors(args) -> dict:
    """LMC-TS: ``devzhk/LMCTS``'s ``run_simulation.py`` loop with the quad config
    (``configs/simulation/quad-LMCTS.yaml``: FCN [20, 20, 20] LeakyReLU, num_iter 50, beta_inv
    0.01, lr 1e-3; ``construct_agent_sim``: beta_inv d log T, weight decay 2, summed L2 loss) on
    ``QuadBandit`` with ``data_generator.py``'s contexts (fresh K x d normalised Gaussians per
    round, theta a unit vector), T = ``--horizon`` (also the T of beta). Ensemble++: the authors'
    ``Solution.Ensemble_exp`` with their ``quadratic_lmcts`` preset on the same draws."""
    import torch

    torch.set_num_threads(1)
    out = {}
    for label in args.methods:
        out[label] = []
        for run in range(args.first_run, args.first_run + args.runs):
            torch.manual_seed(args.seed + run)
            theta = torch.randn(args.dim)
            theta = theta / torch.norm(theta)
            # the authors' Solution loops need T >= 1000 (log_interval = T // 1000); nothing else
            # in them depends on T, so Ensemble++ runs 1000 rounds and reports the first T
            rounds = args.horizon if label == "LMC-TS" else max(args.horizon, 1000)
            context = torch.randn((rounds, args.arms, args.dim))
            context = context / torch.norm(context, dim=2, keepdim=True)
            start = time.perf_counter()
            if label == "LMC-TS":
                total = _official_lmcts(args, theta, context)
            else:
                total = _authors_ensemble_pp_vector(args, theta, context, run)
            out[label].append(total)
            print(f"{label} run {run}: {total:.1f} [{time.perf_counter() - start:.0f} s]",
                  flush=True)
    return out


def _official_lmcts(args, theta, context) -> float:
    import torch
    from algo.langevin import LangevinMC
    from algo.lmcts import LMCTS
    from models.classifier import FCN
    from train_utils.bandit import QuadBandit
    from train_utils.dataset import Collector
    from train_utils.losses import construct_loss

    model = FCN(1, args.dim, layers=[20, 20, 20], act="LeakyReLU")
    optimizer = LangevinMC(model.parameters(), lr=1e-3,
                           beta_inv=0.01 * args.dim * np.log(args.horizon), weight_decay=2.0,
                           device=torch.device("cpu"))
    agent = LMCTS(model, optimizer, construct_loss("L2", reduction="sum"), Collector(),
                  name="LMCTS", device="cpu")
    bandit, total = QuadBandit(theta=theta, sigma=1.0), 0.0
    for e in range(args.horizon):
        arm = agent.choose_arm(context[e])
        reward, regret = bandit.get_reward(context[e], arm)
        agent.receive_reward(arm, context[e][arm], reward)
        agent.update_model(num_iter=min(e + 1, 50))
        total += regret.item()
    return total


class VectorQuadratic:
    """``QuadBandit`` (10 <x, theta>^2 + N(0, 1)) on fixed context draws, with the attributes
    ``agent.solution.Solution`` reads."""

    def __init__(self, theta, context, seed: int):
        self.theta, self.context = theta.numpy(), context.numpy()
        self.reward_random = np.random.default_rng(seed)
        self.n_actions, self.n_features = context.shape[1], context.shape[2]
        self.eta, self.t = 1.0, -1
        self.set_context()

    def set_context(self):
        self.t += 1
        self.features = self.context[self.t - 1]
        self.means = 10 * (self.features @ self.theta) ** 2

    def reward(self, arm):
        return self.means[arm] + self.reward_random.standard_normal(size=1).astype(np.float32)

    def expect_regret(self, arm, features):
        return self.means.max() - self.means[arm]


def _authors_ensemble_pp_vector(args, theta, context, run) -> float:
    from agent.solution import Solution

    params = {**AUTHORS_QUADRATIC, "update_num": 20}  # run_nonlinear.py, quadratic_lmcts
    solution = Solution(VectorQuadratic(theta, context, 1000 + run))
    regret = _call(solution.Ensemble_exp, len(context), params)[1]
    return float(np.sum(regret[:args.horizon]))


def lmcts_engine(args) -> dict:
    import jaxbandits as jb

    env = jb.make_env("vector-quadratic", dim=args.dim, num_arms=args.arms)
    made = {"LMC-TS": lambda: jb.make_agent("lmc-ts", preset="vector-quadratic", env=env,
                                            horizon=args.horizon, buffer_size=args.horizon),
            "Ensemble++": lambda: jb.make_agent("neural-ensemble-pp", preset="vector-quadratic",
                                                backbone=jb.nets.MLPBackbone(hidden=(64, 64)))}
    agents = {label: made[label]() for label in args.methods}
    return engine_finals(env, agents, args)


# -- (c) Greedy and Ensemble+ on the authors' quadratic instance: Fig. 3 --------------------------

class AuthorsQuadratic:
    """The authors' ``SyntheticNonlinModel`` ("v1", ``freq_task``; the co-author's
    ``jiawei415/Information_Directed_Sampling`` ``env/synthetic.py``, which the released repo does
    not ship): pool, Theta and the subset sequence from ``default_rng(2022)``, mean reward
    ``0.01 x^T Theta Theta^T x``, ``N(0, 0.1^2)`` reward noise from its own generator. The
    attributes are those ``agent.solution.Solution`` reads."""

    def __init__(self, noise_seed: int, dim=100, arms=50, pool=1000, eta=0.1):
        self.prior_random = np.random.default_rng(2022)
        self.reward_random = np.random.default_rng(noise_seed)
        x = self.prior_random.standard_normal((pool, dim), dtype=np.float32)
        self.all_features = x / np.linalg.norm(x, axis=1, keepdims=True)
        theta = self.prior_random.standard_normal((dim, dim), dtype=np.float32)
        self.all_rewards = np.diagonal(0.01 * self.all_features @ (theta @ theta.T)
                                       @ self.all_features.T)
        self.n_actions, self.n_features, self.pool, self.eta = arms, dim, pool, eta
        self.set_context()

    def set_context(self):
        subset = self.prior_random.choice(np.arange(self.pool, dtype=np.int32),
                                          size=self.n_actions, replace=False)
        self.features, self.sub_rewards = self.all_features[subset], self.all_rewards[subset]

    def reward(self, arm):
        return self.sub_rewards[arm] + self.reward_random.standard_normal(
            size=1, dtype=np.float32) * self.eta

    def expect_regret(self, arm, features):
        return self.sub_rewards.max() - self.sub_rewards[arm]


#: ``scripts/run_nonlinear.py`` with ``--game quadratic`` (the shared settings, then the preset)
AUTHORS_QUADRATIC = dict(noise_dim=8, NpS=16, z_coef=0.01, action_noise="sp", update_noise="pm",
                         buffer_noise="sp", prior_scale=5.0, posterior_scale=1.0, feature_sg=True,
                         hidden_sizes=[64, 64], class_num=1, optim="Adam", lr=1e-4,
                         batch_size=128, weight_decay=0.01, update_start=128, update_num=4,
                         update_freq=1, buffer_size=10_000)


class _Log:
    """The calls ``Solution`` makes on the authors' logger, discarded."""

    def record(self, *args, **kwargs): pass
    def dump(self, *args, **kwargs): pass
    def info(self, *args, **kwargs): pass


def _call(method, horizon: int, params: dict):
    """``method(T, logger, **the params it takes)``, as ``utils.storeRegret`` calls it."""
    names = method.__code__.co_varnames[3:method.__code__.co_argcount]
    return method(horizon, _Log(), **{k: params[k] for k in names if k in params})


def greedy_authors(args) -> dict:
    """The authors' ``Solution.Ensemble_exp`` with both scales 0 (Greedy) and
    ``Solution.Ensemble_ori`` (Ensemble+: one-hot action/update noise, Gaussian buffer noise), as
    ``utils.storeRegret`` runs them (``set_seed(seed)`` once, then the runs in turn)."""
    import torch
    import utils
    from agent.solution import Solution

    torch.set_num_threads(1)
    methods = {"Greedy": ("Ensemble_exp", {"prior_scale": 0.0, "posterior_scale": 0.0,
                                            "based_prior": False}),
               "Ensemble+": ("Ensemble_ori", {"action_noise": "oh", "update_noise": "oh",
                                              "buffer_noise": "gs", "ensemble_sizes": []})}
    out = {}
    for label in args.methods:
        name, extra = methods[label]
        utils.set_seed(args.seed + args.first_run, use_torch=True)
        finals, start = [], time.perf_counter()
        for run in range(args.first_run, args.first_run + args.runs):
            solution = Solution(AuthorsQuadratic(noise_seed=1000 + run))
            _, regret = _call(getattr(solution, name), args.horizon, {**AUTHORS_QUADRATIC, **extra})
            finals.append(float(np.sum(regret)))
            print(f"{label} run {run}: {finals[-1]:.1f} [{time.perf_counter() - start:.0f} s]",
                  flush=True)
        out[label] = finals
    return out


def greedy_engine(args) -> dict:
    import jaxbandits as jb

    env = jb.make_env("quadratic-pool", instance="authors", authors_rounds=args.horizon)
    names = {"Greedy": "neural-greedy", "Ensemble+": "ensemble-plus"}
    agents = {label: jb.make_agent(names[label], preset="quadratic",
                                   backbone=jb.nets.MLPBackbone(hidden=(64, 64)))
              for label in args.methods}
    return engine_finals(env, agents, args)


# -- (d) compact: App. F.1, reference x perturbation on the unit sphere -------------------------

#: the engine's law names -> the authors' ``index`` (reference) and ``perturbed_noise`` names
LAWS = {"gaussian": ("Normal", "Gaussian"), "sphere": ("Sphere", "Sphere"),
        "cube": ("UnifCube", "UnifCube"), "coordinate": ("PMCoord", "PMCoord"),
        "sparse": ("Sparse", "Sparse")}
AUTHORS_ORDER = ("gaussian", "sparse", "coordinate", "sphere", "cube")  # run_linear_compact.py


def compact_authors(args) -> dict:
    """The authors' ``LinCompact.IS`` (``agent/CompactClosedform.py``) on ``CompactLinModel``
    (theta* ~ N(0, 10 I), N(0, 1) noise, action theta / ||theta||), as
    ``scripts/run_linear_compact.py`` runs them: ``np.random.seed(46)`` before the models (one
    per run, shared by every pair), ``set_seed(2023)`` before every pair."""
    import agent.CompactClosedform as closedform
    import utils
    from env.linear import CompactLinModel

    closedform.approx_err_compact = lambda p, q_inv: (0.0, 0.0)  # log only
    np.random.seed(46)  # noqa: NPY002 -- the authors' global seeding
    models = [closedform.LinCompact(CompactLinModel(args.dim, sigma=10)) for _ in range(args.runs)]
    for model in models:  # log only; it returns a 1-element array that NumPy 2.4 will not store
        model.pess_regret = lambda arm, theta, scheme: 0.0
    out = {}
    for ref in [r for r in AUTHORS_ORDER if r in args.references]:
        for pert in args.perturbations:
            utils.set_seed(2023)
            out[f"{ref} / {pert}"] = [float(np.sum(model.IS(
                args.horizon, M=args.sizes[0], index=LAWS[ref][0],
                perturbed_noise=LAWS[pert][1])["expected_regret"])) for model in models]
            print(summary(f"{ref} / {pert}", out[f"{ref} / {pert}"]), flush=True)
    return out


def compact_engine(args) -> dict:
    import jaxbandits as jb

    env = jb.make_env("linear-sphere", dim=args.dim, theta_prior="gaussian", prior_var=10.0,
                      noise_std=1.0)
    agent = jb.make_agent("ensemble-pp", ensemble_size=args.sizes[0], reg=0.1, noise_std=1.0,
                          factor_init=args.factor_init)
    grid = {"reference": args.references, "perturbation": args.perturbations}
    swept = jb.sweep(env, agent, args.seed, grid, args.horizon, args.runs, record=[args.horizon])
    return {f"{r} / {p}": np.asarray(result.cumulative_regret[:, -1], np.float64).tolist()
            for (r, p), result in zip(itertools.product(*grid.values()), swept.values(),
                                      strict=True)}


def compact_summary(out: dict, args) -> None:
    """Each reference's regret averaged over the perturbations run, and Gaussian - other per
    run (the runs share theta* on both sides)."""
    by_ref = {r: np.mean([out[f"{r} / {p}"] for p in args.perturbations], axis=0)
              for r in args.references}
    for ref, finals in by_ref.items():
        print(summary(f"{ref} (mean over perturbations)", finals))
        if ref != "gaussian" and "gaussian" in by_ref:
            print("  " + summary(f"paired gaussian - {ref}", by_ref["gaussian"] - finals))


DEFAULTS = {"linear": dict(dim=50, arms=10_000, horizon=1000, runs=100, seed=0),
            "lmcts": dict(dim=20, arms=50, horizon=2000, runs=4, seed=0),
            "greedy": dict(dim=100, arms=50, horizon=5000, runs=10, seed=2023),
            "compact": dict(dim=10, arms=0, horizon=1000, runs=200, seed=0)}
RUN = {("linear", "authors"): linear_authors, ("linear", "engine"): linear_engine,
       ("lmcts", "authors"): lmcts_authors, ("lmcts", "engine"): lmcts_engine,
       ("greedy", "authors"): greedy_authors, ("greedy", "engine"): greedy_engine,
       ("compact", "authors"): compact_authors, ("compact", "engine"): compact_engine}


def _missing(modules) -> str | None:
    for module in modules:
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except ModuleNotFoundError:
            return module
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=tuple(DEFAULTS))
    parser.add_argument("--side", choices=("authors", "engine"), required=True)
    for name in ("dim", "arms", "horizon", "runs", "seed"):
        parser.add_argument(f"--{name}", type=int)
    parser.add_argument("--sizes", type=int, nargs="+", help="linear: the M (default 8 32); "
                        "compact: the M (the first; default 2)")
    parser.add_argument("--references", nargs="+", choices=tuple(LAWS), default=list(LAWS),
                        help="compact: the reference laws")
    parser.add_argument("--perturbations", nargs="+", choices=tuple(LAWS), default=["sphere"],
                        help="compact: the perturbation laws")
    parser.add_argument("--factor-init", choices=("paper", "code"), default="paper",
                        help="compact, engine side: the initial factor")
    parser.add_argument("--no-ts", action="store_true", help="linear: the ensembles only")
    parser.add_argument("--methods", nargs="+",
                        help="greedy: Greedy and/or Ensemble+ (default both); lmcts: LMC-TS "
                             "and/or Ensemble++ (default LMC-TS)")
    parser.add_argument("--first-run", type=int, default=0,
                        help="greedy: the first run's index (its noise seed is 1000 + index)")
    parser.add_argument("--out", help="write {label: [final regret per run]} as JSON")
    args = parser.parse_args(argv)
    for name, value in DEFAULTS[args.what].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.sizes = args.sizes or ([2] if args.what == "compact" else [8, 32])
    args.methods = args.methods or {"greedy": ["Greedy", "Ensemble+"], "lmcts": ["LMC-TS"]}.get(
        args.what, [])
    for part in (args.methods if args.what == "lmcts" else [args.what]):
        if args.side == "authors" and (missing := _missing(NEEDS[part])):
            print(f"skipped: {missing!r} is not importable; put a checkout of {WHERE[part]} "
                  "on PYTHONPATH (and install numpy, scipy, numba, torch)")
            return 0
    out = RUN[(args.what, args.side)](args)
    report(out, args.out)
    if args.what == "compact":
        compact_summary(out, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
