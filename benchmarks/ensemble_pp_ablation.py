"""Ensemble++ (Li et al. 2024), Fig. 10(a)-(e): every reference x perturbation law against M.

Li et al. 2024, App. F.1: linear Ensemble++ with each of the 25 (reference, perturbation) pairs
of {Gaussian, Sphere, Cube, Coordinate, Sparse} at several M, on ``russo`` and ``linear-sphere``,
beside exact TS; one ``jb.sweep`` over the pairs per M (``tiny``: a 2 x 2 sub-grid). Evidence:
docs/reproductions/li-2024.md::

    python -m benchmarks.ensemble_pp_ablation                  # small
    python -m benchmarks.ensemble_pp_ablation --scale paper    # GPU
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

import numpy as np

import jaxbandits as jb
from benchmarks import framework as C
from benchmarks.ensemble_pp_fig2 import TS_LABEL, bayes_reg
from jaxbandits import Result
from jaxbandits.linalg import PERTURBATIONS, REFERENCES

NAME = "ensemble_pp_ablation"
TITLE = "Ensemble++ ablation: reference x perturbation distributions against ensemble size"
PAIRS: tuple[tuple[str, str], ...] = tuple(itertools.product(REFERENCES, PERTURBATIONS))


@dataclasses.dataclass(frozen=True)
class Problem:
    """A test problem: ``kind`` is ``"finite"`` (``russo``) or ``"sphere"`` (the unit sphere)."""

    kind: str
    dim: int
    num_arms: int = 0

    @property
    def label(self) -> str:
        return f"{self.kind}, d = {self.dim}" + (f", K = {self.num_arms}"
                                                 if self.kind == "finite" else "")

    def make(self):
        if self.kind == "finite":
            return jb.make_env("russo", dim=self.dim, num_arms=self.num_arms)
        return jb.make_env("linear-sphere", dim=self.dim, theta_prior="gaussian",
                           prior_var=10.0, noise_std=1.0)


@dataclasses.dataclass(frozen=True)
class Config:
    """Problems, ensemble sizes, the heatmaps' M, T, runs, the matching tolerance, runner
    options and the laws crossed (default: all five of each)."""

    problems: tuple[Problem, ...]
    sizes: tuple[int, ...]
    heatmap_sizes: tuple[int, ...]
    horizon: int
    num_runs: int
    tolerance: float = 0.02
    chunk_size: int = 500
    num_records: int = 50
    references: tuple[str, ...] = REFERENCES
    perturbations: tuple[str, ...] = PERTURBATIONS

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """Every (reference, perturbation) pair run, references first."""
        return tuple(itertools.product(self.references, self.perturbations))


SCALES = {
    # tiny: the smoke test's 2 x 2 sub-grid of the laws
    "tiny": Config(problems=(Problem("finite", 3, 8),), sizes=(2,), heatmap_sizes=(2,),
                   horizon=100, num_runs=8, chunk_size=100, num_records=20,
                   references=("gaussian", "coordinate"), perturbations=("sphere", "coordinate")),
    "small": Config(problems=(Problem("finite", 10, 100), Problem("sphere", 10)),
                    sizes=(2, 4, 16, 64, 512), heatmap_sizes=(2, 16, 512), horizon=500,
                    num_runs=64),
    "paper": Config(problems=tuple(Problem("finite", d, k) for d in (10, 50)
                                   for k in (100, 1000, 10_000))
                    + tuple(Problem("sphere", d) for d in (10, 50, 100)),
                    sizes=tuple(2**k for k in range(1, 11)), heatmap_sizes=(2, 8, 64, 1024),
                    horizon=1000, num_runs=200, chunk_size=1000, num_records=100),
}


def pair_label(pair: tuple[str, str]) -> str:
    return f"{pair[0].capitalize()} / {pair[1].capitalize()}"


def run_grid(env, size: int, key, config: Config, **options) -> dict[tuple, Result]:
    """``{pair: Result}``: Ensemble++ (the environment's prior and noise), ``M = size``, at
    every pair of the configuration in one ``jb.sweep``."""
    agent = jb.make_agent("ensemble-pp", ensemble_size=size, reg=bayes_reg(env),
                          noise_std=float(env.noise_std))
    grid = {"ensemble_size": [size], "reference": list(config.references),
            "perturbation": list(config.perturbations)}
    swept = jb.sweep(env, agent, key, grid, config.horizon, config.num_runs, **options)
    return dict(zip(config.pairs, swept.values(), strict=True))


def ratio_matrix(by_pair: dict[tuple, Result], ts: Result,
                 references: Sequence[str] = REFERENCES,
                 perturbations: Sequence[str] = PERTURBATIONS) -> np.ndarray:
    """Mean final regret / TS's, ``(len(references), len(perturbations))``, NaN where not run."""
    return np.array([[C.mean_final(by_pair[(r, p)]) / C.mean_final(ts) if (r, p) in by_pair
                      else np.nan for p in perturbations] for r in references])


def draw_heatmap(ax, matrix: np.ndarray, title: str, vmax: float,
                 references: Sequence[str] = REFERENCES,
                 perturbations: Sequence[str] = PERTURBATIONS):
    """A :func:`ratio_matrix` (over ``references`` x ``perturbations``) as a heatmap."""
    from matplotlib.colors import LogNorm

    image = ax.imshow(matrix, cmap="viridis_r", norm=LogNorm(vmin=1 / 1.25, vmax=vmax))
    ax.set_xticks(range(len(perturbations)), [p.capitalize() for p in perturbations],
                  rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(references)), [r.capitalize() for r in references], fontsize=8)
    ax.set_xlabel("perturbation P_z", fontsize=8)
    ax.set_ylabel("reference P_zeta", fontsize=8)
    for i, j in itertools.product(range(matrix.shape[0]), range(matrix.shape[1])):
        if np.isfinite(matrix[i, j]):
            ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if matrix[i, j] > np.sqrt(vmax) else "black")
    ax.set_title(title, fontsize=9)
    return image


def draw_lines(ax, ratios: dict[int, np.ndarray], title: str, config: Config) -> None:
    """Regret / TS against M: each reference with the Sphere perturbation, and Coordinate^2."""
    sizes, refs, perts = sorted(ratios), list(config.references), list(config.perturbations)
    if "sphere" in perts:
        for i, r in enumerate(refs):
            ax.plot(sizes, [ratios[m][i, perts.index("sphere")] for m in sizes], marker="o",
                    label=f"{r.capitalize()} / Sphere")
    if "coordinate" in refs and "coordinate" in perts:
        c = refs.index("coordinate")
        ax.plot(sizes, [ratios[m][c, perts.index("coordinate")] for m in sizes], "k--",
                marker="x", label="Coordinate / Coordinate")
    ax.axhline(1.0, color="gray", linewidth=1)
    ax.set_xscale("log", base=2)
    C.style_axes(ax, "ensemble size M", "final regret / TS", title, legend=7, which="both",
                 log="y")
    ax.title.set_fontsize(9)


def problem_table(problem: Problem, runs: dict[int, dict[tuple, Result]], ts: Result,
                  config: Config) -> C.Table:
    sizes = sorted(runs)
    return C.table(f"Final regret at T = {config.horizon}: {problem.label}",
                   ["reference / perturbation"] + [f"M = {m}" for m in sizes],
                   [(pair_label(pair), *[C.fmt_ci(C.final_regret(runs[m][pair])) for m in sizes])
                    for pair in config.pairs] + [(TS_LABEL, *[C.fmt_ci(C.final_regret(ts))]
                                                  * len(sizes))],
                   f"Mean ± 95% CI over {config.num_runs} runs.")


def check_claims(problem: Problem, runs, ts: Result, config: Config):
    """Li et al. 2024, Fig. 10(a)-(e) (App. F.1) on one problem, paired run by run."""
    claims, tag = [], f"[{problem.label}]"
    final = {m: {pair: C.final_regret(r) for pair, r in by.items()} for m, by in runs.items()}
    ts_final = C.final_regret(ts)
    pairs, refs, perts = config.pairs, config.references, config.perturbations
    for m in [m for m in (2, 4) if m in final and "gaussian" in refs and len(refs) > 1]:
        # per run, each reference's regret averaged over the perturbations
        by_ref = {r: np.mean([final[m][(r, p)] for p in perts], axis=0) for r in refs}
        gaps = {r: C.mean_ci(by_ref["gaussian"] - by_ref[r]) for r in refs if r != "gaussian"}
        claims.append((f"{tag} at M = {m} the Gaussian reference is the best reference "
                       "(regret averaged over the perturbations)",
                       C.decide(all(g < 0 for g, _ in gaps.values()),
                                any(g - h > 0 for g, h in gaps.values())),
                       "paired Gaussian - other: " + ", ".join(
                           f"{r.capitalize()} {g:+.0f} ± {h:.0f}" for r, (g, h) in gaps.items())))
    default = ("gaussian", "sphere")  # Ensemble++'s pair, the yardstick
    for m in [m for m in sorted(final) if 8 <= m <= 64 and default in pairs]:
        base = final[m][default]
        # clearly above: the 95% interval of the paired excess lies above 0
        above = [p for p in pairs if C.lower(final[m][p], 1.25 * base) is False]
        below = [p for p in pairs if C.lower(base, 1.25 * final[m][p]) is False]
        inside = all(0.8 * base.mean() <= final[m][p].mean() <= 1.25 * base.mean()
                     for p in pairs)
        ratios = {pair: final[m][pair].mean() / base.mean() for pair in pairs}
        worst = sorted(ratios, key=ratios.get)[-3:][::-1]
        claims.append((f"{tag} at moderate M = {m} all pairs are similar (mean regret within "
                       "25% of Gaussian / Sphere's)",
                       False if above or below else True if inside else None,
                       f"> 25% worse: {[pair_label(p) for p in above] or 'none'}; better: "
                       f"{[pair_label(p) for p in below] or 'none'}; highest ratios "
                       + ", ".join(f"{pair_label(p)} x{ratios[p]:.2f}" for p in worst)))
    for m in [m for m in final if m >= 512 and ("coordinate", "coordinate") in pairs
              and "gaussian" in refs]:
        cc = final[m][("coordinate", "coordinate")]
        gaps = [C.paired_gap(cc, final[m][("gaussian", p)]) for p in perts]
        claims.append((f"{tag} at M = {m} Coordinate/Coordinate is clearly worse than every "
                       "Gaussian-reference pair (paired 95% CI above 0)",
                       C.decide(all(g - h > 0 for g, h in gaps), any(g + h < 0 for g, h in gaps)),
                       "paired gaps vs Gaussian / " + ", ".join(
                           f"{p.capitalize()} {g:+.0f} ± {h:.0f}"
                           for p, (g, h) in zip(perts, gaps, strict=True))))
    limit = config.tolerance * config.horizon
    for r in [r for r in ("gaussian", "sphere") if (r, "sphere") in pairs]:
        gaps = {m: final[m][(r, "sphere")] - ts_final for m in sorted(final)}
        verdicts = {m: C.verdict_at_most(v, limit) for m, v in gaps.items() if m <= 16}
        reached = [m for m, v in gaps.items() if v.mean() <= limit]
        verdict = (True if True in verdicts.values()
                   else False if verdicts and all(v is False for v in verdicts.values())
                   and max(final) >= 16 else None)
        claims.append((f"{tag} the {r.capitalize()} reference (Sphere pert.) reaches TS-level "
                       f"regret (gap <= {config.tolerance:g} T = {limit:g}) at a small M (<= 16)",
                       verdict, f"first M reaching it: {reached[0] if reached else None}; gaps "
                       "to TS " + ", ".join(f"M={m}: {C.gap_text(v)}" for m, v in gaps.items())))
    return claims


def body(r: C.Run) -> C.Page:
    config = r.config
    options = C.config_options(config, progress=r.progress)
    results, ts_results, tables, claims = {}, {}, [], []
    for problem in config.problems:
        env = problem.make()
        ts_results[problem] = ts = jb.simulate(
            env, jb.make_agent("lin-ts", reg=bayes_reg(env), noise_std=float(env.noise_std)), r.key,
            config.horizon, config.num_runs, name=TS_LABEL, **options)
        results[problem] = {}
        for m in config.sizes:
            results[problem][m] = by_pair = run_grid(env, m, r.key, config, **options)
            r.log(f"{problem.label}: M = {m}, {len(by_pair)} pairs: compile "
                  f"{sum(x.compile_time for x in by_pair.values()):.1f} s, run "
                  f"{sum(x.wall_time for x in by_pair.values()):.1f} s")
        tables.append(problem_table(problem, results[problem], ts, config))
        claims += check_claims(problem, results[problem], ts, config)
    heat = [m for m in config.heatmap_sizes if m in config.sizes]
    laws = (config.references, config.perturbations)
    fig, axes = C.new_figure(len(config.problems), len(heat) + 1, width=4.2, height=3.9)
    for row, problem in enumerate(config.problems):
        ratios = {m: ratio_matrix(results[problem][m], ts_results[problem], *laws)
                  for m in config.sizes}
        vmax = max(2.0, float(np.nanmax([ratios[m] for m in heat])))
        for col, m in enumerate(heat):
            image = draw_heatmap(axes[row, col], ratios[m],
                                 f"{problem.label}, M = {m}: regret / TS", vmax, *laws)
        fig.colorbar(image, ax=axes[row, len(heat) - 1], fraction=0.046, pad=0.04)
        draw_lines(axes[row, -1], ratios, f"{problem.label}: regret / TS against M", config)
    intro = (f"T = {config.horizon}, {config.num_runs} runs per point, M in "
             f"{list(config.sizes)}, {len(config.references)} x {len(config.perturbations)} "
             "laws; heatmaps: mean final regret over exact TS's.")
    return C.Page(fig, tables, claims, intro,
                  {"results": results, "ts": ts_results, "config": config})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
