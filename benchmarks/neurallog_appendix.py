"""Neural Logistic Bandits (Bae & Lee): Figs. 3-6 and the mushroom and mnist panels of Fig. 2.

Bae & Lee 2025, App. A and App. J, with the setup of Sec. 7 (K = 5 arms a round from a per-run pool
of ``Unif(-1, 1)^d`` vectors, ``r ~ Bern(mu(h(x)))``; classification sets as K-armed bandits with
block features):

* **Figs. 3 and 6** (``neurallog-synthetic``): pools of 10, 50 and 10,000 vectors for a low,
  middle and high effective dimension d~ (Figs. 1-2 use 2,500); Fig. 3 on h1-h3, Fig. 6 on h4-h6.
* **Fig. 4**: h4-h6 with the pool of 2,500. **Fig. 5**: magic, banknote, phoneme. **Fig. 2**'s
  mushroom and mnist. banknote, phoneme, mushroom and mnist cannot be shipped: they are read from
  ``--set data_path=DIR`` or ``$JAXBANDITS_DATA``; where a file is absent a bundled scikit-learn
  set stands in (banknote: iris, phoneme: breast_cancer, mushroom: wine, mnist: the 8x8 digits)
  and the panel's title and the report say so.

Claims: NeuralLog-UCB-2, algorithm (5), is best in every panel and at every d~ (Sec. 7, App. A,
App. J); the linear logistic baselines (2)-(3) are worst; the TS variants are competitive with
the baselines (1)-(3) (within 10% of the best of them). Our check of Fig. 3's premise: every
agent's regret is lower with 10 vectors than with 10,000. Networks: two layers, width m = 20,
100 gd steps of 0.01 every 50 rounds, S = 1, kappa = 10, each agent's default nu (the paper tunes
nu and lambda over a grid; not here); one registry agent each. Common random numbers. Scales:
``small`` (d = 10, T = 1,000, 20 runs, h1 and h4 over the pools, h4 and h6 at 2,500, magic and
the banknote / phoneme / mushroom stand-ins, five agents; about 20 min on a 2-core CPU),
``paper`` (d = 20, T = 2,000, 10 runs, every panel and agent; a GPU), ``tiny`` for the tests::

    python -m benchmarks.reproduce neurallog_appendix --scale small --set data_path=~/data
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import jaxbandits as jb
from benchmarks import framework as C

NAME = "neurallog_appendix"
TITLE = "Neural Logistic Bandits, Figs. 3-6 and Fig. 2's mushroom and mnist"
LABELS = {"ncbf-ucb": "NCBF-UCB", "logistic-ucb-1": "Log-UCB-1", "ada-ofu-ecolog": "ada-OFU",
          "neurallog-ucb-1": "NL-UCB-1", "neurallog-ucb-2": "NL-UCB-2",
          "neurallog-ts-1": "NL-TS-1", "neurallog-ts-2": "NL-TS-2"}
LINEAR = ("Log-UCB-1", "ada-OFU")
BASELINES = ("NCBF-UCB", *LINEAR)
TS = ("NL-TS-1", "NL-TS-2")
BEST = "NL-UCB-2"
#: data set -> (its figure, the bundled scikit-learn stand-in used when its file is absent)
DATASETS = {"magic": ("Fig. 5", None), "banknote": ("Fig. 5", "iris"),
            "phoneme": ("Fig. 5", "breast_cancer"), "mushroom": ("Fig. 2", "wine"),
            "mnist": ("Fig. 2", "digits")}


@dataclasses.dataclass(frozen=True)
class Config:
    """d, T, runs, the agents (registry names), Figs. 3/6's functions and pools, Fig. 4's
    functions, the data sets (Fig. 5, Fig. 2's user-path sets), where to read them, the width
    m and runner options."""

    dim: int
    horizon: int
    num_runs: int
    agents: tuple[str, ...] = tuple(LABELS)
    pool_functions: tuple[str, ...] = ("h1", "h2", "h3", "h4", "h5", "h6")
    pools: tuple[int, ...] = (10, 50, 10_000)
    functions: tuple[str, ...] = ("h4", "h5", "h6")
    datasets: tuple[str, ...] = tuple(DATASETS)
    data_path: str | None = None
    num_arms: int = 5
    width: int = 20
    chunk_size: int = 500
    num_records: int = 30


SCALES = {
    "tiny": Config(dim=3, horizon=100, num_runs=2, agents=("logistic-ucb-1", "neurallog-ts-2"),
                   pool_functions=("h4",), pools=(10, 10_000), functions=(),
                   datasets=("banknote",), width=8, chunk_size=100, num_records=10),
    "small": Config(dim=10, horizon=1000, num_runs=20, agents=(
        "logistic-ucb-1", "ncbf-ucb", "neurallog-ucb-2", "neurallog-ts-1", "neurallog-ts-2"),
        pool_functions=("h1", "h4"), functions=("h4", "h6"),
        datasets=("magic", "banknote", "phoneme", "mushroom")),
    "paper": Config(dim=20, horizon=2000, num_runs=10, chunk_size=1000, num_records=60),
}


def agent(name: str, c: Config):
    """The paper's practical settings: width m, updates every 50 rounds, a buffer of T."""
    width = {} if LABELS[name] in LINEAR else {"width": c.width}
    return jb.make_agent(name, buffer_size=c.horizon, update_every=50, **width)


def standin(dataset: str):
    """A bundled scikit-learn set as a classification bandit (columns min-max to [-1, 1])."""
    name = DATASETS[dataset][1]
    if name == "digits":
        return jb.make_env("digits")
    import sklearn.datasets

    bunch = getattr(sklearn.datasets, f"load_{name}")()
    table = jb.data.make_table(bunch.data, bunch.target, name=name, normalize="minmax")
    return jb.envs.ClassificationEnv(data=table)


def environments(c: Config) -> dict[str, object]:
    """``{panel title: env}``."""
    synthetic = {f"Fig. {3 if f in ('h1', 'h2', 'h3') else 6}: {f}, pool {n}": (f, n)
                 for f in c.pool_functions for n in c.pools}
    synthetic |= {f"Fig. 4: {f}, pool 2500": (f, 2500) for f in c.functions}
    out = {t: jb.make_env("neurallog-synthetic", dim=c.dim, num_arms=c.num_arms, function=f,
                          pool_size=n) for t, (f, n) in synthetic.items()}
    for name in c.datasets:
        fig, sub = DATASETS[name]
        env, note = C.user_data(
            lambda name=name: jb.make_env("classification", dataset=name, path=c.data_path),
            sub and (lambda name=name: standin(name)), name)
        if env is not None:
            out[f"{fig}: {name}" + (f" (stand-in: {sub})" if note else "")] = env
    return out


def experiments(c: Config) -> dict[str, C.Experiment]:
    options = C.run_options(c.horizon, c.chunk_size, c.num_records, block_runs=c.num_runs)
    agents = {LABELS[n]: agent(n, c) for n in c.agents}
    return {t: C.Experiment(env, agents, c.horizon, c.num_runs, options=options)
            for t, env in environments(c).items()}


def claims(panels, c: Config) -> list[tuple[str, bool | None, str]]:
    def best(res):
        low = min(res, key=lambda k: C.mean_final(res[k]))
        if low == BEST:
            return True, f"{BEST} lowest ({C.mean_final(res[BEST]):.1f})"
        verdict, evidence = C.worse_than(res[BEST], res[low], tol=math.inf)
        return (False if verdict else None), f"lowest {low}: {evidence}"

    def competitive(res):
        base = min((k for k in BASELINES if k in res), key=lambda k: C.mean_final(res[k]))
        verdict, evidence = C.every({k: C.within(res[k], res[base]) for k in TS if k in res})
        return verdict, f"best baseline {base}; {evidence}"

    labels, out = {LABELS[n] for n in c.agents}, []
    for key, res in panels.items():
        fig, where = key.split(": ", 1)
        if BEST in labels:
            out.append((f"[{fig}] {BEST} has the lowest regret on {where} (another agent lower "
                        "within noise: not decidable)", *best(res)))
            if labels & set(LINEAR):
                out.append((f"[{fig}] the linear baselines end above {BEST} on {where}",
                            *C.every({k: C.worse_than(res[k], res[BEST], tol=math.inf)
                                      for k in LINEAR if k in res})))
        if labels & set(TS) and labels & set(BASELINES):
            out.append((f"[{fig}] the TS variants are competitive with the best of (1)-(3) "
                        f"(within 10%) on {where}", *competitive(res)))
    for f in c.pool_functions if len(c.pools) > 1 else ():
        low, high = (panels[next(k for k in panels if k.endswith(f"{f}, pool {n}"))]
                     for n in (min(c.pools), max(c.pools)))
        out.append((f"[Fig. {3 if f in ('h1', 'h2', 'h3') else 6}] every agent's regret is lower "
                    f"with pool {min(c.pools)} than with pool {max(c.pools)} on {f} (low vs high "
                    "d~; our check)", *C.every({k: C.worse_than(high[k], low[k], tol=math.inf)
                                                 for k in low})))
    return out


def body(r: C.Run) -> C.Page:
    c = r.config
    panels = C.run_experiments(r, experiments(c))
    return C.Page(C.draw_panels(panels), [C.final_table(
        "Final cumulative regret (mean ± 95% CI)", panels)], claims(panels, c), (
        f"d = {c.dim}, K = {c.num_arms}, T = {c.horizon}, {c.num_runs} runs, width m = "
        f"{c.width}. A '(stand-in: X)' panel ran the bundled scikit-learn set X because the "
        "paper's file was not found."), {"panels": panels, "config": c})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
