"""Anytime ensemble sampling (Sun, Wang & Xu), Figure 3, quadratic bandit: Neural-ES-DT's b, T_0.

Sun et al. 2025, Fig. 3 (Sec. 6, App. E-F), the half ``anytime_fig3`` leaves out: Neural-ES-DT
(20 members, L = 3) on the quadratic bandit over the growth b and the first epoch T_0::

    python -m benchmarks.reproduce neural_fig3 --scale small
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

import jaxbandits as jb
from benchmarks import framework as C
from jaxbandits.agents import GOLDEN_GROWTH as GOLD
from jaxbandits.agents import doubling_regret_factor

NAME = "neural_fig3"
TITLE = "Anytime ensemble sampling, Figure 3 (quadratic bandit): Neural-ES-DT's b and T_0"
SPREAD = 0.15  # "T_0 has a minor effect": final regrets within 15% of their mean


@dataclasses.dataclass(frozen=True)
class Config:
    """d, K, T, instances, the network (N, L), the b and T_0 grids and runner options."""

    dim: int
    num_arms: int
    horizon: int
    num_runs: int
    width: int = 20
    depth: int = 3
    growths: tuple[float, ...] = (1.5, 2.0, GOLD, 4.0)
    first_epochs: tuple[int, ...] = (50, 100, 300, 1000)
    chunk_size: int = 500
    num_records: int = 40


SCALES = {
    "tiny": Config(dim=3, num_arms=4, horizon=40, num_runs=2, width=4, growths=(1.5, GOLD),
                   first_epochs=(5, 10), chunk_size=40, num_records=10),
    "small": Config(dim=8, num_arms=10, horizon=1000, num_runs=10, growths=(1.5, GOLD, 4.0),
                    first_epochs=(50, 100, 300), chunk_size=1000),
    "paper": Config(dim=20, num_arms=50, horizon=10_000, num_runs=10, chunk_size=1000,
                    num_records=100),
}


def experiments(c: Config) -> dict[str, C.Experiment]:
    """One experiment per T_0, each sweeping b (every point one program)."""
    env = jb.make_env("quadratic", dim=c.dim, num_arms=c.num_arms, noise_std=0.5)
    inner = jb.make_agent("neural-es", ensemble_size=20, perturb_std=0.1, reg=1.0,
                          width=c.width, depth=c.depth)
    options = C.run_options(c.horizon, c.chunk_size, c.num_records, block_runs=c.num_runs)
    return {f"T_0 = {t0}": C.Experiment(
        env, {"Neural-ES-DT": jb.make_agent("neural-es-dt", agent=inner, first_epoch=t0)},
        c.horizon, c.num_runs, grid={"growth": c.growths}, options=options)
        for t0 in c.first_epochs}


def finals(panels) -> dict[tuple[int, float], jb.Result]:
    """``{(T_0, b): Result}``."""
    return {(int(t.split("= ")[1]), b): r for t, p in panels.items()
            for b, r in p["Neural-ES-DT"].items()}


def claims(panels, c: Config) -> list[tuple[str, bool | None, str]]:
    f = finals(panels)
    means = {t0: C.mean_final(f[t0, GOLD]) for t0 in c.first_epochs}
    spread = (max(means.values()) - min(means.values())) / np.mean(list(means.values()))
    best = {t0: min(c.growths, key=lambda b: doubling_regret_factor(t0, b))
            for t0 in c.first_epochs}
    return [(f"[Fig. 3] T_0 has a minor effect at b = 2.618 (within {100 * SPREAD:.0f}%)",
             bool(spread <= SPREAD), f"spread {100 * spread:.0f}%: " + ", ".join(
                 f"T_0={t}: {m:.1f}" for t, m in means.items())),
            *((f"[Fig. 3] b = {b:.4g} gives larger regret than b = 2.618 at every T_0",
               *C.every({f"T_0={t0}": C.worse_than(f[t0, b], f[t0, GOLD], tol=math.inf)
                         for t0 in c.first_epochs})) for b in c.growths if b != GOLD),
            ("Theory: l(1/2, 3/2, T_0, b) is smallest at b = 2.618 for every T_0 of the grid",
             all(b == GOLD for b in best.values()),
             "argmin b: " + ", ".join(f"T_0={t}: {b:.4g}" for t, b in best.items()))]


def tables(panels, c: Config) -> list[C.Table]:
    f = finals(panels)
    table = C.Table(f"Final regret at T = {c.horizon} (mean ± 95% CI)",
                    ["T_0", *(f"b = {b:.4g}" for b in c.growths)],
                    note="l(1/2, 3/2, T_0, b) of Lemma E.1 in brackets.")
    for t0 in c.first_epochs:
        table.add(f"T_0 = {t0}", *(f"{C.fmt_ci(C.final_regret(f[t0, b]))} "
                                   f"[{doubling_regret_factor(t0, b):.2f}]"
                                   for b in c.growths))
    return [table]


def draw(panels, c: Config):
    fig, axes = C.new_figure(1, 2)
    f = finals(panels)
    for t0 in c.first_epochs:
        axes[0, 0].plot(c.growths, [C.mean_final(f[t0, b]) for b in c.growths], "o-",
                        label=f"T_0={t0}")
    axes[0, 0].set(xlabel="growth b", ylabel=f"final regret at T = {c.horizon}",
                   title="(a) final regret against b")
    axes[0, 0].legend(fontsize=7)
    middle = list(panels)[len(panels) // 2]
    jb.plot_regret({f"b = {b:.4g}": r for b, r in panels[middle]["Neural-ES-DT"].items()},
                   ax=axes[0, 1], title=f"(b) regret curves, {middle}")
    return fig


def body(r: C.Run) -> C.Page:
    c = r.config
    panels = C.run_experiments(r, experiments(c))
    return C.Page(draw(panels, c), tables(panels, c), claims(panels, c), (
        f"d = {c.dim}, K = {c.num_arms}, T = {c.horizon}, {c.num_runs} instances; N = "
        f"{c.width}, L = {c.depth}; b in {c.growths}, T_0 in {c.first_epochs}."),
        {"panels": panels, "config": c})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
