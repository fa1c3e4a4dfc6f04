"""Anytime ensemble sampling (Sun, Wang & Xu), Figure 3: the doubling schedule's b and T_0.

Sun et al. 2025, Fig. 3 (Sec. 6, App. E-F): GLM-ES-DT on ``anytime_fig1``'s logistic bandit over
the growth b and first epoch T_0 (one ``jb.sweep``), beside Lemma E.1's factor
``l(1/2, 3/2, T_0, b)``; the quadratic half is ``neural_fig3``'s::

    python -m benchmarks.anytime_fig3                   # small: d = 10, K = 20, T = 2,000
    python -m benchmarks.anytime_fig3 --scale paper     # d = 20, K = 50, T = 10,000
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

import numpy as np

import jaxbandits as jb
from benchmarks import anytime_fig1 as fig1
from benchmarks import framework as C
from jaxbandits.agents import GOLDEN_GROWTH, doubling_boundaries, doubling_regret_factor

NAME = "anytime_fig3"
TITLE = "Anytime ensemble sampling, Figure 3: the doubling trick's growth b and first epoch T_0"


@dataclasses.dataclass(frozen=True)
class Config(fig1.Sizes):
    """``anytime_fig1``'s sizes, the b grid (holds :data:`GOLDEN_GROWTH`), the T_0 grid and
    the T_0 of panel (b) (the closest in the grid)."""

    growths: tuple[float, ...] = (1.5, 2.0, GOLDEN_GROWTH, 4.0)
    first_epochs: tuple[int, ...] = (50, 100, 300, 1000)
    curve_epoch: int = 100


SCALES = fig1.make_scales(
    Config, tiny={"growths": (1.5, GOLDEN_GROWTH, 4.0), "first_epochs": (5, 10), "curve_epoch": 10},
    notebook={"growths": (1.5, GOLDEN_GROWTH, 4.0), "first_epochs": (100, 300)})


def curve_epoch(config: Config) -> int:
    return min(config.first_epochs, key=lambda t: abs(t - config.curve_epoch))


def golden(config: Config) -> float:
    return min(config.growths, key=lambda b: abs(b - GOLDEN_GROWTH))


def run(config: Config, key, solver: str = "gd",
        progress: bool | None = False) -> dict[tuple[int, float], jb.Result]:
    """``{(T_0, b): Result}``: one ``jb.sweep`` of GLM-ES-DT over the grid; the restarts of the
    curves' T_0 are recorded, so that the kinks show."""
    points = list(itertools.product(config.first_epochs, config.growths))
    boundaries = {int(t) for t0, b in points
                  for t in doubling_boundaries(t0, b, config.horizon) if t < config.horizon}
    marks = sorted(t for t in boundaries
                   if any(t in doubling_boundaries(curve_epoch(config), b, config.horizon)
                          for b in config.growths))
    options = C.config_options(config, marks[: config.num_records // 2], progress)
    grid = {"first_epoch": list(config.first_epochs), "growth": list(config.growths)}
    results = jb.sweep(fig1.bandit(config), fig1.glm_es_dt(config.warmup, solver), key, grid,
                       config.horizon, config.num_runs, **options)
    return dict(zip(points, results.values(), strict=True))


def t0_table(config: Config, title: str, columns: list[str], cells, note: str = "") -> C.Table:
    """A row per T_0: ``cells(T_0)``."""
    return C.table(title, ["T_0", *columns],
                   [(f"T_0 = {t0}", *cells(t0)) for t0 in config.first_epochs], note)


def grid_table(results, config: Config) -> C.Table:
    def cells(t0):
        bounds = [int(t) for t in doubling_boundaries(t0, golden(config), config.horizon)
                  if t < config.horizon]
        return [*[C.fmt_ci(C.final_regret(results[(t0, b)])) for b in config.growths],
                ", ".join(map(str, bounds)) or "none"]

    return t0_table(
        config, f"Final regret of GLM-ES-DT at T = {config.horizon} (mean ± 95% CI)",
        [f"b = {b:.4g}" for b in config.growths] + ["restarts at b = 2.618"], cells,
        f"Logistic bandit, {config.num_runs} instances, tau = {config.warmup} per epoch.")


def gap_table(results, config: Config) -> C.Table:
    g = golden(config)
    others = [b for b in config.growths if b != g]
    return t0_table(config, "Paired gap to b = 2.618 (final regret, mean ± 95% CI)",
                    [f"b = {b:.4g} minus b = 2.618" for b in others],
                    lambda t0: [C.fmt_ci(C.final_regret(results[(t0, b)])
                                         - C.final_regret(results[(t0, g)])) for b in others],
                    "Positive: worse than the golden growth.")


def factor_table(config: Config) -> C.Table:
    return t0_table(config, "Regret factor l(1/2, 3/2, T_0, b) of Lemma E.1 (theory)",
                    [f"b = {b:.4g}" for b in config.growths],
                    lambda t0: [f"{doubling_regret_factor(t0, b):.3f}" for b in config.growths])


def check_claims(results, config: Config) -> list[tuple[str, bool | None, str]]:
    claims = []
    g = golden(config)
    tol = f"{100 * C.CLOSE_TOL:.0f}%"
    spreads = sorted(config.growths, key=lambda b: b != g) if len(config.first_epochs) > 1 else []
    for b in spreads:  # 2.618 first, with the means
        means = {t0: C.mean_final(results[(t0, b)]) for t0 in config.first_epochs}
        spread = (max(means.values()) - min(means.values())) / np.mean(list(means.values()))
        scope, text = f"b = {b:.4g} (within {tol})", f"spread {100 * spread:.0f}%"
        if b == g:
            scope = f"b = 2.618 (final regrets within {tol} of their mean)"
            text += ": " + ", ".join(f"T_0={t}: {m:.1f}" for t, m in means.items())
        claims.append((f"[Fig. 3] T_0 has a minor effect at {scope}", bool(spread <= C.CLOSE_TOL),
                       text))
    for b in config.growths:
        if b == g or not (b < 1.75 or b > 3.5):  # "far from 2.618": the grid's ends
            continue
        verdicts = {t0: C.worse_than(results[(t0, b)], results[(t0, g)])
                    for t0 in config.first_epochs}
        counts = [sum(v[0] is x for v in verdicts.values()) for x in (True, None, False)]
        claims.append((f"[Fig. 3] b = {b:.4g} gives larger regret than b = 2.618 at every T_0",
                       C.all_of([v[0] for v in verdicts.values()]),
                       f"larger / undecided / smaller at {counts[0]} / {counts[1]} / {counts[2]} "
                       "T_0: " + "; ".join(f"T_0={t}: {v[1]}" for t, v in verdicts.items())))
    factors = {t0: min(config.growths, key=lambda b: doubling_regret_factor(t0, b))
               for t0 in config.first_epochs}
    claims.append(("Theory: l(1/2, 3/2, T_0, b) is smallest at b = 2.618 on the grid, every T_0",
                   all(b == g for b in factors.values()),
                   ", ".join(f"T_0={t}: b={b:.4g}" for t, b in factors.items())))
    return claims


def draw(results, config: Config):
    """(a) final regret against b, a line per T_0; (b) the curves at one T_0; (c) the factor."""
    fig, axes = C.new_figure(1, 3, width=5.0, height=4.0)
    bs = np.linspace(1.3, 5.0, 200)
    for t0 in config.first_epochs:
        C.draw_errorbars(axes[0, 0], config.growths,
                         [results[(t0, b)] for b in config.growths], f"T_0 = {t0}")
        axes[0, 2].plot(bs, [doubling_regret_factor(t0, b) for b in bs], label=f"T_0 = {t0}")
    t0 = curve_epoch(config)
    C.draw_curves(axes[0, 1], {f"b = {b:.4g}": results[(t0, b)] for b in config.growths},
                  {f"b = {golden(config):.4g}": "es"}, f"(b) regret curves at T_0 = {t0}",
                  band_alpha=0.12, styles={"es": {"color": "0.35", "linewidth": 2.0},
                                           "baseline": {"linestyle": "--"}})
    for ax, ylabel, title in ((axes[0, 0], f"cumulative regret at T = {config.horizon}",
                               "(a) GLM-ES-DT, logistic bandit: final regret"),
                              (axes[0, 2], "l(1/2, 3/2, T_0, b)",
                               "(c) the doubling trick's regret factor")):
        ax.axvline(GOLDEN_GROWTH, color="0.6", linewidth=0.8, linestyle=":")
        C.style_axes(ax, "growth b", ylabel, title, legend=8)
    return fig


def main(argv: Sequence[str] | None = None) -> C.Report:
    def body(r: C.Run) -> C.Page:
        config, solver = r.config, r.args.solver
        results = run(config, r.key, solver, r.progress)
        return C.Page(draw(results, config), [grid_table(results, config),
                                              gap_table(results, config), factor_table(config)],
                      check_claims(results, config), fig1.setup(config, solver) + ".",
                      {"results": results, "config": config, "solver": solver})

    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__, options=fig1.OPTIONS)


if __name__ == "__main__":
    main()
