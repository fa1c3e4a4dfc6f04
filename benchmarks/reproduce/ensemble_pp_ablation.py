"""Ensemble++ distribution ablation: every reference x perturbation pair against ensemble size.

Reproduces seed-001 section 3, E3 (the paper's Fig. 10(a)-(e), Appendix F.1): linear Ensemble++
with each of the 25 pairs of a reference law ``P_zeta`` (acting: ``theta = mu + A zeta``) and a
perturbation law ``P_z`` (updating: ``A <- A + k (sigma z^T - x^T A)``), both taken from
{Gaussian, Sphere, Cube, Coordinate, Sparse (s = 2)} (:mod:`jaxbandits.linalg.perturb`; the
Gaussian perturbation is the experiments' ``N(0, I/M)``), at several ensemble sizes M, on the
``russo`` finite-arm problem and on the unit sphere (``linear-sphere`` with
``theta* ~ N(0, 10 I)`` and ``N(0, 1)`` noise), next to exact TS (``lin-ts``, ``reg = 0.1``).

The paper's claims (seed-001 E3): the Gaussian reference is much better at small M (2, 4); at
moderate M all pairs are similar; at M = 512 and 1024 the Coordinate-reference +
Coordinate-perturbation pair clearly underperforms; the Gaussian and Sphere references reach
TS-level regret at small M.

**Few compilations.** ``reference``, ``perturbation`` and ``ensemble_size`` are static fields
of ``ensemble-pp`` (they select code or set shapes), so a faithful grid would compile 25
programs per M. This script runs ``_sweepable.SwitchedEnsemblePlusPlus`` (re-exported here), a
thin subclass in which the two laws and the size are numeric leaves (indices): it draws every
candidate from the same key and keeps the selected one, so it plays exactly the actions of
``ensemble-pp`` with that pair and size (the smoke test checks it) and ``jb.sweep`` runs all 25
pairs at all sizes up to ``batch_sizes_upto`` (64) in one program; every larger M is its own
program, since every point of a program pays for its largest M. Run it from the
repository root::

    python benchmarks/reproduce/ensemble_pp_ablation.py                  # --scale small
    python benchmarks/reproduce/ensemble_pp_ablation.py --scale paper    # GPU

It writes ``ensemble_pp_ablation.png`` and ``ensemble_pp_ablation.md`` into ``--out`` (default
``results/reproduce/ensemble_pp_ablation/``).
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from collections.abc import Sequence
from pathlib import Path

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

import _common as C  # noqa: E402  (puts the repository root on sys.path)
import jax  # noqa: E402
import numpy as np  # noqa: E402
from _sweepable import SwitchedEnsemblePlusPlus  # noqa: E402

import jaxbandits as jb  # noqa: E402
from jaxbandits.linalg import PERTURBATIONS, REFERENCES  # noqa: E402
from jaxbandits.results import Result  # noqa: E402

NAME = "ensemble_pp_ablation"
TITLE = "Ensemble++ ablation: reference x perturbation distributions against ensemble size"
LAW_NAMES = {"gaussian": "Gaussian", "sphere": "Sphere", "cube": "Cube",
             "coordinate": "Coordinate", "sparse": "Sparse"}
PAIRS: tuple[tuple[str, str], ...] = tuple(itertools.product(REFERENCES, PERTURBATIONS))
TS_LABEL = "TS (exact)"


# ------------------------------------------------------------------------------------------------
# Configuration.


@dataclasses.dataclass(frozen=True)
class Problem:
    """A test problem: ``kind`` is ``"finite"`` (``russo``) or ``"sphere"`` (the unit sphere)."""

    kind: str
    dim: int
    num_arms: int = 0

    @property
    def label(self) -> str:
        if self.kind == "finite":
            return f"finite, d = {self.dim}, K = {self.num_arms}"
        return f"sphere, d = {self.dim}"

    def make(self):
        if self.kind == "finite":
            return jb.make_env("russo", dim=self.dim, num_arms=self.num_arms)
        return jb.make_env("linear-sphere", dim=self.dim, theta_prior="gaussian",
                           prior_var=10.0, noise_std=1.0)


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes of one scale: problems, ensemble sizes, horizon, runs, and the heatmaps' M.

    ``batch_sizes_upto``: the sizes up to it run as one program (each pays for the largest of
    them, cheap next to a compilation at these sizes); every larger size is its own program.
    ``memory_gib``: what one sweep may use (a rough estimate splits larger grids).
    """

    problems: tuple[Problem, ...]
    sizes: tuple[int, ...]
    heatmap_sizes: tuple[int, ...]
    horizon: int
    num_runs: int
    tolerance: float = 0.02
    chunk_size: int = 500
    num_records: int = 50
    memory_gib: float = 4.0
    batch_sizes_upto: int = 64


SCALES = {
    "tiny": Config(problems=(Problem("finite", 3, 8),), sizes=(2,), heatmap_sizes=(2,),
                   horizon=100, num_runs=8, chunk_size=100, num_records=20),
    "small": Config(problems=(Problem("finite", 10, 100), Problem("sphere", 10)),
                    sizes=(2, 4, 16, 64, 512), heatmap_sizes=(2, 16, 512), horizon=500,
                    num_runs=64),
    "paper": Config(problems=tuple(Problem("finite", d, k) for d in (10, 50)
                                   for k in (100, 1000, 10_000))
                    + tuple(Problem("sphere", d) for d in (10, 50, 100)),
                    sizes=tuple(2**k for k in range(1, 11)), heatmap_sizes=(2, 8, 64, 1024),
                    horizon=1000, num_runs=200, chunk_size=1000, num_records=100),
}


# ------------------------------------------------------------------------------------------------
# Experiment.


def pair_label(pair: tuple[str, str]) -> str:
    return f"{LAW_NAMES[pair[0]]} / {LAW_NAMES[pair[1]]}"


def run_pairs(env, size: int, key: jax.Array, horizon: int, num_runs: int,
              pairs: Sequence[tuple[str, str]] = PAIRS, max_points: int | None = None,
              **options) -> dict[tuple, Result]:
    """All ``pairs`` (reference, perturbation) of Ensemble++ with ``M = size``, one program.

    ``run_grid(env, (size,), ...)[size]``; see :func:`run_grid`.
    """
    return run_grid(env, (size,), key, horizon, num_runs, pairs, max_points, **options)[size]


def run_grid(env, sizes: Sequence[int], key: jax.Array, horizon: int, num_runs: int,
             pairs: Sequence[tuple[str, str]] = PAIRS, max_points: int | None = None,
             **options) -> dict[int, dict[tuple, Result]]:
    """``{M: {pair: Result}}``: every (reference, perturbation) pair at every M of ``sizes``.

    One program (a :class:`SwitchedEnsemblePlusPlus` over ``sizes``, so every point pays for
    the largest M: group sizes of the same order). With ``max_points=None`` one ``jb.sweep``
    runs the whole grid of sizes x references x perturbations; otherwise each (size,
    reference) sweeps its perturbations in groups of at most ``max_points``
    (:func:`_common.sweep_values`; bounded memory, the same program). The agent shares the
    environment's prior and noise (``reg = noise^2 / prior_var``).
    """
    sizes = tuple(int(m) for m in sizes)
    reg = float(env.noise_std) ** 2 / float(env.prior_var)
    agent = SwitchedEnsemblePlusPlus(ensemble_size=max(sizes), sizes=sizes, reg=reg,
                                     noise_std=float(env.noise_std))
    ids = sorted({(REFERENCES.index(r), PERTURBATIONS.index(p)) for r, p in pairs})
    grid_refs = sorted({i for i, _ in ids})
    grid_perts = sorted({j for _, j in ids})
    size_ids = list(range(len(sizes)))
    if max_points is None:
        results = jb.sweep(env, agent, key, {"size_id": size_ids, "reference_id": grid_refs,
                                             "perturbation_id": grid_perts},
                           horizon, num_runs, **options)
        by_point = dict(zip(itertools.product(size_ids, grid_refs, grid_perts),
                            results.values(), strict=True))
    else:
        by_point = {}
        for s, i in itertools.product(size_ids, grid_refs):
            perts = [j for r, j in ids if r == i]
            results = C.sweep_values(env, agent.replace(size_id=s, reference_id=i), key,
                                     "perturbation_id", perts, horizon, num_runs,
                                     max_points=max_points, **options)
            by_point.update({(s, i, j): r for j, r in zip(perts, results, strict=True)})
    return {m: {(r, p): by_point[(s, REFERENCES.index(r), PERTURBATIONS.index(p))]
                for r, p in pairs} for s, m in enumerate(sizes)}


def size_groups(sizes: Sequence[int], batch_upto: int) -> list[tuple[int, ...]]:
    """The sizes up to ``batch_upto`` in one group (one program), each larger size alone."""
    small = tuple(m for m in sizes if m <= batch_upto)
    return ([small] if small else []) + [(m,) for m in sizes if m > batch_upto]


def points_per_sweep(problem: Problem, size: int, num_runs: int, memory_gib: float,
                     num_points: int = len(PAIRS)) -> int | None:
    """``None`` when all ``num_points`` grid points fit in ``memory_gib`` (a rough per-run
    estimate: the arm set and its scores, the factor at the largest ``size``, the ridge square
    root), else how many points fit."""
    d, k = problem.dim, max(problem.num_arms, 1)
    per_run = 4 * (3 * k * d + 3 * d * size + 2 * d * d)
    fit = int(memory_gib * 2**30 // (per_run * num_runs))
    return None if fit >= num_points else max(1, fit)


def run_ts(env, key: jax.Array, horizon: int, num_runs: int, **options) -> Result:
    reg = float(env.noise_std) ** 2 / float(env.prior_var)
    agent = jb.make_agent("lin-ts", reg=reg, noise_std=float(env.noise_std))
    return jb.simulate(env, agent, key, horizon, num_runs, name=TS_LABEL, **options)


# ------------------------------------------------------------------------------------------------
# Drawing, tables and claims.


def ratio_matrix(by_pair: dict[tuple, Result], ts: Result) -> np.ndarray:
    """``(5, 5)`` mean final regret / TS mean final regret, rows references, columns perts."""
    ts_mean = float(C.final_regret(ts).mean())
    out = np.full((len(REFERENCES), len(PERTURBATIONS)), np.nan)
    for (r, p), result in by_pair.items():
        out[REFERENCES.index(r), PERTURBATIONS.index(p)] = C.final_regret(result).mean() / ts_mean
    return out


def draw_heatmap(ax, matrix: np.ndarray, title: str, vmax: float):
    from matplotlib.colors import LogNorm

    image = ax.imshow(matrix, cmap="viridis_r", norm=LogNorm(vmin=1 / 1.25, vmax=vmax))
    ax.set_xticks(range(len(PERTURBATIONS)), [LAW_NAMES[p] for p in PERTURBATIONS],
                  rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(REFERENCES)), [LAW_NAMES[r] for r in REFERENCES], fontsize=8)
    ax.set_xlabel("perturbation P_z", fontsize=8)
    ax.set_ylabel("reference P_zeta", fontsize=8)
    for i, j in itertools.product(range(matrix.shape[0]), range(matrix.shape[1])):
        if np.isfinite(matrix[i, j]):
            ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if matrix[i, j] > np.sqrt(vmax) else "black")
    ax.set_title(title, fontsize=9)
    return image


def draw_lines(ax, ratios: dict[int, np.ndarray], title: str) -> None:
    """Regret / TS against M: each reference with the Sphere perturbation, and Coordinate^2."""
    sizes = sorted(ratios)
    p_sphere = PERTURBATIONS.index("sphere")
    for i, r in enumerate(REFERENCES):
        ax.plot(sizes, [ratios[m][i, p_sphere] for m in sizes], marker="o",
                label=f"{LAW_NAMES[r]} / Sphere")
    c = REFERENCES.index("coordinate")
    ax.plot(sizes, [ratios[m][c, PERTURBATIONS.index("coordinate")] for m in sizes], "k--",
            marker="x", label="Coordinate / Coordinate")
    ax.axhline(1.0, color="gray", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("ensemble size M")
    ax.set_ylabel("final regret / TS")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)


def problem_table(problem: Problem, runs: dict[int, dict[tuple, Result]], ts: Result,
                  config: Config) -> C.Table:
    sizes = sorted(runs)
    table = C.Table(f"Final regret at T = {config.horizon}: {problem.label}",
                    ["reference / perturbation"] + [f"M = {m}" for m in sizes],
                    note=(f"Mean ± 95% CI over {config.num_runs} runs (common random numbers "
                          "across pairs, sizes and TS)."))
    for pair in PAIRS:
        table.add(pair_label(pair), *[C.fmt_ci(C.final_regret(runs[m][pair])) for m in sizes])
    table.add(TS_LABEL, *[C.fmt_ci(C.final_regret(ts))] * len(sizes))
    return table


def _above_zero(values: np.ndarray) -> bool:
    """Whether the 95% interval of the mean of ``values`` lies above 0."""
    mean, half = C.mean_ci(values)
    return mean - half > 0


def check_claims(problem: Problem, runs, ts: Result, config: Config):
    """Seed-001 E3's claims on one problem, each ``(claim, verdict, evidence)``.

    Comparisons are paired run by run (common random numbers) with 95% intervals: a claim is
    "not reproduced" only when the data contradict it beyond noise.
    """
    claims = []
    tag = f"[{problem.label}]"
    final = {m: {pair: C.final_regret(r) for pair, r in by.items()} for m, by in runs.items()}
    mean = {m: {pair: float(v.mean()) for pair, v in by.items()} for m, by in final.items()}
    ts_final = C.final_regret(ts)
    for m in [m for m in (2, 4) if m in final]:
        # per run, each reference's regret averaged over the five perturbations
        by_ref = {r: np.mean([final[m][(r, p)] for p in PERTURBATIONS], axis=0)
                  for r in REFERENCES}
        gaps = {r: C.mean_ci(by_ref["gaussian"] - by_ref[r]) for r in REFERENCES
                if r != "gaussian"}
        verdict = (False if any(g - h > 0 for g, h in gaps.values())
                   else True if all(g < 0 for g, _ in gaps.values()) else None)
        claims.append((f"{tag} at M = {m} the Gaussian reference is the best reference "
                       "(regret averaged over the perturbations)", verdict,
                       "means " + ", ".join(f"{LAW_NAMES[r]} {v.mean():.0f}"
                                            for r, v in by_ref.items())
                       + "; paired Gaussian - other: "
                       + ", ".join(f"{LAW_NAMES[r]} {g:+.0f} ± {h:.0f}"
                                   for r, (g, h) in gaps.items())))
    default = ("gaussian", "sphere")  # Ensemble++'s pair, the yardstick
    for m in [m for m in sorted(mean) if 8 <= m <= 64]:
        base = final[m][default]
        above = [p for p in PAIRS if _above_zero(final[m][p] - 1.25 * base)]
        below = [p for p in PAIRS if _above_zero(base - 1.25 * final[m][p])]
        inside = all(0.8 * base.mean() <= mean[m][pair] <= 1.25 * base.mean() for pair in PAIRS)
        verdict = False if above or below else True if inside else None
        ratios = {pair: mean[m][pair] / base.mean() for pair in PAIRS}
        worst = sorted(ratios, key=ratios.get)[-3:][::-1]
        claims.append((f"{tag} at moderate M = {m} all pairs are similar (mean regret within "
                       "25% of Gaussian / Sphere's)", verdict,
                       f"significantly more than 25% worse: "
                       f"{[pair_label(p) for p in above] or 'none'}; significantly better: "
                       f"{[pair_label(p) for p in below] or 'none'}; highest ratios "
                       + ", ".join(f"{pair_label(p)} x{ratios[p]:.2f}" for p in worst)))
    for m in [m for m in mean if m >= 512]:
        cc = final[m][("coordinate", "coordinate")]
        gaps = [C.paired_gap(cc, final[m][("gaussian", p)]) for p in PERTURBATIONS]
        verdict = (True if all(g - h > 0 for g, h in gaps)
                   else False if any(g + h < 0 for g, h in gaps) else None)
        claims.append((f"{tag} at M = {m} Coordinate/Coordinate is clearly worse than every "
                       "Gaussian-reference pair (paired 95% CI above 0)", verdict,
                       "paired gaps vs Gaussian / " + ", ".join(
                           f"{LAW_NAMES[p]} {g:+.0f} ± {h:.0f}"
                           for p, (g, h) in zip(PERTURBATIONS, gaps, strict=True))))
    limit = config.tolerance * config.horizon
    for r in ("gaussian", "sphere"):
        gaps = {m: final[m][(r, "sphere")] - ts_final for m in sorted(mean)}
        verdicts = {m: C.verdict_at_most(v, limit) for m, v in gaps.items() if m <= 16}
        reached = [m for m, v in gaps.items() if v.mean() <= limit]
        verdict = (True if True in verdicts.values()
                   else False if verdicts and all(v is False for v in verdicts.values())
                   and max(mean) >= 16 else None)
        claims.append((f"{tag} the {LAW_NAMES[r]} reference (Sphere pert.) reaches TS-level "
                       f"regret (gap <= {config.tolerance:g} T = {limit:g}) at a small M (<= 16)",
                       verdict, f"first M reaching it: {reached[0] if reached else None}; gaps "
                       "to TS " + ", ".join(f"M={m}: {C.mean_ci(v)[0]:+.1f} ± "
                                            f"{C.mean_ci(v)[1]:.1f}" for m, v in gaps.items())))
    return claims


# ------------------------------------------------------------------------------------------------
# Main.


def main(argv: Sequence[str] | None = None) -> C.Report:
    """Runs the ablation at ``--scale`` and writes the PNG and the markdown report."""
    args = C.parse_args(NAME, __doc__.splitlines()[0], argv)
    config = SCALES[args.scale]
    out = C.output_dir(NAME, args.out)
    start = C.timer()
    key = jax.random.key(args.seed)
    options = C.run_options(config.horizon, config.chunk_size, config.num_records,
                            progress=False if args.no_progress else None)
    print(f"{TITLE}\nscale {args.scale}: {config}", flush=True)

    results, ts_results, tables, claims = {}, {}, [], []
    for problem in config.problems:
        env = problem.make()
        ts_results[problem] = run_ts(env, key, config.horizon, config.num_runs, **options)
        results[problem] = {}
        for group in size_groups(config.sizes, config.batch_sizes_upto):
            points = len(group) * len(PAIRS)
            grid = run_grid(
                env, group, key, config.horizon, config.num_runs,
                max_points=points_per_sweep(problem, max(group), config.num_runs,
                                            config.memory_gib, points),
                **options)
            results[problem].update(grid)
            first = next(iter(grid[group[0]].values()))
            print(f"  [{C.timer() - start:4.0f} s] {problem.label}: M in {list(group)}, 25 pairs "
                  f"each: compile {first.compile_time:.1f} s, run {points * first.wall_time:.1f} s",
                  flush=True)
        results[problem] = {m: results[problem][m] for m in config.sizes}
        tables.append(problem_table(problem, results[problem], ts_results[problem], config))
        claims += check_claims(problem, results[problem], ts_results[problem], config)

    heat = [m for m in config.heatmap_sizes if m in config.sizes]
    fig, axes = C.new_figure(len(config.problems), len(heat) + 1, width=4.2, height=3.9)
    for row, problem in enumerate(config.problems):
        ratios = {m: ratio_matrix(results[problem][m], ts_results[problem])
                  for m in config.sizes}
        vmax = max(2.0, float(np.nanmax([ratios[m] for m in heat])))
        for col, m in enumerate(heat):
            image = draw_heatmap(axes[row, col], ratios[m],
                                 f"{problem.label}, M = {m}: regret / TS", vmax)
        fig.colorbar(image, ax=axes[row, len(heat) - 1], fraction=0.046, pad=0.04)
        draw_lines(axes[row, -1], ratios, f"{problem.label}: regret / TS against M")
    figure = C.save_figure(fig, out / f"{NAME}.png")

    seconds = C.timer() - start
    intro = (f"Scale `{args.scale}`, seed {args.seed}: T = {config.horizon}, "
             f"{config.num_runs} runs per point, sizes M = {list(config.sizes)}. Ensemble++ "
             "shares the prior N(0, 10 I) and noise 1 of the problems (reg = 0.1). Heatmaps: "
             "mean final regret divided by exact TS's (1 = TS). Seed-001 section 3, E3. The "
             "paper runs T = 1000, 200 runs, d in {10, 50} with K up to 10,000 and the sphere "
             "up to d = 100, M in {2, ..., 1024} (`--scale paper`); the smaller scales check the "
             "same claims on fewer, smaller problems. Comparisons are paired run by run with "
             "95% intervals: *not reproduced* means the data contradict the claim beyond noise, "
             "*not decidable here* that the intervals straddle it.")
    return C.finish(NAME, TITLE, intro, tables, claims, figure, out, args, seconds,
                    data={"results": results, "ts": ts_results, "config": config})


if __name__ == "__main__":
    main()
