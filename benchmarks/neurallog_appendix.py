"""Neural Logistic Bandits (Bae & Lee 2025): Figs. 3-6 and Fig. 2's mushroom and mnist.

Bae & Lee 2025, App. A and J: Figs. 3 and 6 (pools of 10, 50 and 10,000 vectors: low, middle,
high d~), Fig. 4 (h4-h6), Fig. 5 (magic, banknote, phoneme) and Fig. 2's mushroom and mnist
(read from ``--set data_path=DIR`` or ``$JAXBANDITS_DATA``, else scikit-learn stand-ins). Setup
and claims: docs/reproductions/bae-lee-2025.md::

    python -m benchmarks.reproduce neurallog_appendix --scale small --set data_path=~/data
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import jaxbandits as jb
from benchmarks import framework as C
from benchmarks.neurallog_figs import make_agent

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
    """d, T, runs, agents, Figs. 3/6's functions and pools, Fig. 4's functions, the data sets
    and where to read them, the width m."""

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
    agents = {LABELS[n]: make_agent(n, c, c.horizon) for n in c.agents}
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
        f"{c.width}. '(stand-in: X)': the paper's file was not found, scikit-learn's X ran."),
        {"panels": panels, "config": c})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
