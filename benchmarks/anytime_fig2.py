"""Anytime ensemble sampling (Sun, Wang & Xu), Figure 2 (a)-(c): GLM-ES ablations (logistic).

Sun et al. 2025, Fig. 2 (App. F): m, lambda and sigma_R varied one at a time around GLM-ES on
``anytime_fig1``'s logistic bandit, one ``jb.sweep`` per panel (panel (d) is ``neural_fig1``'s)::

    python -m benchmarks.anytime_fig2                   # small: d = 10, K = 20, T = 2,000
    python -m benchmarks.anytime_fig2 --scale paper     # d = 20, K = 50, T = 10,000
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

import jaxbandits as jb
from benchmarks import anytime_fig1 as fig1
from benchmarks import framework as C
from jaxbandits import Result

NAME = "anytime_fig2"
TITLE = "Anytime ensemble sampling, Figure 2 (a)-(c): GLM-ES ablations of m, lambda and sigma_R"
#: ablation (its symbol) -> (swept field, its grid in :class:`Config`, baseline value)
ABLATIONS = {"m": ("active_members", "sizes", 10), "lambda": ("reg", "regs", 1.0),
             "sigma_R": ("perturb_std", "perturbs", 0.1)}


@dataclasses.dataclass(frozen=True)
class Config(fig1.Sizes):
    """``anytime_fig1``'s sizes and the grids of panels (a), (b) and (c) (each holds the
    baseline 10, 1 and 0.1)."""

    sizes: tuple[int, ...] = (5, 10, 20, 50)
    regs: tuple[float, ...] = (0.001, 0.1, 1.0, 10.0, 100.0)
    perturbs: tuple[float, ...] = (0.001, 0.01, 0.1, 1.0, 10.0)


LAWS = {"regs": (0.001, 1.0, 100.0), "perturbs": (0.001, 0.1, 10.0)}
SCALES = fig1.make_scales(Config, tiny={"sizes": (5, 10), **LAWS},
                          notebook={"sizes": (5, 10, 20), **LAWS})


def run(config: Config, key, solver: str = "gd",
        progress: bool | None = False) -> dict[str, dict]:
    """``{ablation: {value: Result}}``: one ``jb.sweep`` per ablation around GLM-ES."""
    options = C.config_options(config, (config.warmup, *C.checkpoints(config.horizon,
                                                                      config.warmup)), progress)
    out = {}
    for ablation, (field, grid, _) in ABLATIONS.items():
        values = getattr(config, grid)
        agent = fig1.glm_es(config.warmup, solver, max(config.sizes) if ablation == "m" else 10)
        results = jb.sweep(fig1.bandit(config), agent, key, {field: list(values)},
                           config.horizon, config.num_runs, **options)
        out[ablation] = dict(zip(values, results.values(), strict=True))
    return out


def early_regret(result: Result, warmup: int) -> np.ndarray:
    """``(runs,)`` regret over the first 20% of the rounds after the warm-up."""
    w1, _, _ = C.checkpoints(result.horizon, warmup)
    return C.regret_at(result, w1) - C.regret_at(result, warmup)


def late_slope(result: Result, warmup: int) -> np.ndarray:
    """``(runs,)`` regret per round over the last 20% of the rounds."""
    _, w2, horizon = C.checkpoints(result.horizon, warmup)
    return (C.regret_at(result, horizon) - C.regret_at(result, w2)) / (horizon - w2)


def ablation_table(ablation: str, by_value: dict, config: Config) -> C.Table:
    base = ABLATIONS[ablation][2]
    reference = C.final_regret(by_value[base])
    w1, w2, _ = C.checkpoints(config.horizon, config.warmup)

    def row(value, result):
        final = C.final_regret(result)
        return (f"{ablation} = {value:g}" + (" *" if value == base else ""), C.fmt_ci(final),
                C.sd_text(final), "—" if value == base else C.fmt_ci(final - reference),
                f"{early_regret(result, config.warmup).mean():.1f}",
                f"{1000 * late_slope(result, config.warmup).mean():.2f}")

    return C.table(
        f"({'abc'[list(ABLATIONS).index(ablation)]}) {ablation}: final regret at "
        f"T = {config.horizon}",
        ["setting", "final regret (mean ± 95% CI)", "sd over runs", "gap to baseline (paired)",
         f"early regret (t = {config.warmup}..{w1})", f"late slope x1000 (t > {w2})"],
        [row(value, result) for value, result in by_value.items()],
        f"Logistic bandit, {config.num_runs} instances; the baseline m = 10, lambda = 1, "
        "sigma_R = 0.1 marked *; early: the first 20% after the warm-up, late: the last 20%.")


def check_claims(results: dict[str, dict], config: Config) -> list[tuple[str, bool | None, str]]:
    """Fig. 2's claims (:func:`benchmarks.framework.ordering` verdicts)."""
    claims = []

    def sd(result):
        return float(C.final_regret(result).std(ddof=1))

    def trail(by_value, symbol, stat=C.mean_final):
        return ", ".join(f"{symbol}={v:g}: {stat(r):.1f}" for v, r in by_value.items())

    def beats(by_value, best, others):
        return C.all_of([C.worse_than(by_value[v], by_value[best])[0] for v in others])

    sizes, regs, sigmas = results["m"], results["lambda"], results["sigma_R"]
    if 5 in sizes and 10 in sizes:
        claims.append(("[Fig. 2] m = 5 has larger final regret than m = 10",
                       *C.worse_than(sizes[5], sizes[10])))
        verdict, evidence = C.ordering(sd(sizes[5]), sd(sizes[10]))
        claims.append(("[Fig. 2] m = 5 is more variable than m = 10 (sd over instances)",
                       verdict, f"sd {evidence}"))
        others = [C.ordering(sd(sizes[5]), sd(r))[0] for m, r in sizes.items() if m != 5]
        claims.append(("[Fig. 2] m = 5 has the largest spread of the m grid", C.all_of(others),
                       "sd " + trail(sizes, "m", sd)))
    if 50 in sizes and 10 in sizes:
        claims.append(("[Fig. 2] m = 50 gains only marginally over m = 10 (within "
                       f"{100 * C.CLOSE_TOL:.0f}%)", *C.close(sizes[50], sizes[10])))
    low, high = min(regs), max(regs)
    if 1.0 in regs and low < 1.0 < high:
        claims.append((f"[Fig. 2] lambda = 1 beats lambda = {low:g} and lambda = {high:g}",
                       beats(regs, 1.0, (low, high)), trail(regs, "lambda")))
        claims.append(("[Fig. 2] lambda = 1 is the best of the lambda grid",
                       beats(regs, 1.0, [v for v in regs if v != 1.0]), trail(regs, "lambda")))
    tiny, huge = [v for v in sigmas if v < 0.1], [v for v in sigmas if v > 0.1]
    if 0.1 in sigmas and tiny and huge:
        for name, values, side in (("tiny", tiny, "< 0.1"), ("huge", huge, "> 0.1")):
            claims.append((f"[Fig. 2] sigma_R = 0.1 beats every {name} sigma_R ({side})",
                           beats(sigmas, 0.1, values), trail(sigmas, "sigma_R")))
        late = C.ordering(*[1000 * float(late_slope(sigmas[v], config.warmup).mean())
                            for v in (min(tiny), 0.1)])
        claims.append((f"[Fig. 2] tiny sigma_R = {min(tiny):g} is greedy: steeper late regret "
                       "than sigma_R = 0.1", late[0], f"late slope x1000 {late[1]}"))
        early = C.ordering(*[float(early_regret(sigmas[v], config.warmup).mean())
                             for v in (max(huge), 0.1)])
        claims.append((f"[Fig. 2] huge sigma_R = {max(huge):g} over-explores: larger early "
                       "regret than sigma_R = 0.1", early[0], f"early regret {early[1]}"))
    return claims


def draw(results: dict[str, dict], config: Config):
    """Regret curves with 95% bands: the baseline gray solid, the variants dashed (as the paper)."""
    fig, axes = C.new_figure(1, len(results), width=5.0, height=4.0)
    styles = {"es": {"color": "0.35", "linestyle": "-", "linewidth": 2.0},
              "baseline": {"linestyle": "--"}}
    for ax, letter, (ablation, by_value) in zip(axes[0], "abc", results.items(), strict=False):
        C.draw_curves(ax, {f"{ablation} = {v:g}": r for v, r in by_value.items()},
                      {f"{ablation} = {ABLATIONS[ablation][2]:g}": "es"},
                      f"({letter}) logistic bandit, varying {ablation}", config.warmup,
                      band_alpha=0.12, styles=styles)
    return fig


def main(argv: Sequence[str] | None = None) -> C.Report:
    def body(r: C.Run) -> C.Page:
        config, solver = r.config, r.args.solver
        results = run(config, r.key, solver, r.progress)
        return C.Page(draw(results, config),
                      [ablation_table(a, by_value, config) for a, by_value in results.items()],
                      check_claims(results, config), fig1.setup(config, solver) + ".",
                      {"results": results, "config": config, "solver": solver})

    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__, options=fig1.OPTIONS)


if __name__ == "__main__":
    main()
