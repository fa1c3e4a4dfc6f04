"""Ensemble++ (Li et al. 2024), Fig. 6: vanilla ensemble sampling with moderate M is near TS.

Li et al. 2024, App. A, Fig. 6 (Fig. 2's setup, ``russo``): Lu & Van Roy's ``ensemble-sampling``
at several M against exact TS (``lin-ts``, the same prior and noise). Claims: a moderate M matches
TS (mean gap <= 0.02 T, Fig. 2(b)'s criterion); the smallest M does not. Evidence:
docs/reproductions/li-2024.md::

    python -m benchmarks.reproduce ensemble_pp_fig6 --scale small
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import jaxbandits as jb
from benchmarks import framework as C

NAME = "ensemble_pp_fig6"
TITLE = "Ensemble++ Figure 6: ensemble sampling with moderate M is near Thompson sampling"
TS = "TS (exact)"


@dataclasses.dataclass(frozen=True)
class Config:
    """d, K, T, runs, the M grid, the largest M called moderate, the matching tolerance (a
    fraction of T) and runner options."""

    dim: int
    num_arms: int
    horizon: int
    num_runs: int
    sizes: tuple[int, ...] = (2, 4, 8, 16, 32, 64, 128)
    moderate: int = 64
    tolerance: float = 0.02
    chunk_size: int = 500
    num_records: int = 50


SCALES = {
    "tiny": Config(dim=4, num_arms=20, horizon=100, num_runs=16, sizes=(1, 16), moderate=16,
                   chunk_size=100, num_records=10),
    "small": Config(dim=20, num_arms=1000, horizon=500, num_runs=100, sizes=(2, 4, 8, 16, 32, 64),
                    moderate=32),
    "paper": Config(dim=50, num_arms=10_000, horizon=1000, num_runs=200, chunk_size=1000,
                    num_records=100),
}


def experiments(c: Config) -> dict[str, C.Experiment]:
    env = jb.make_env("russo", dim=c.dim, num_arms=c.num_arms)
    reg, noise = float(env.noise_std) ** 2 / float(env.prior_var), float(env.noise_std)
    options = C.run_options(c.horizon, c.chunk_size, c.num_records, block_runs=c.num_runs)
    es = {f"ES M={m}": jb.make_agent("ensemble-sampling", ensemble_size=m, reg=reg,
                                     noise_std=noise) for m in c.sizes}
    ts = jb.make_agent("lin-ts", reg=reg, noise_std=noise)
    return {f"d = {c.dim}, K = {c.num_arms}": C.Experiment(env, {**es, TS: ts}, c.horizon,
                                                          c.num_runs, options=options)}


def gaps(panels, c: Config) -> dict[int, tuple[float, float]]:
    """``{M: (mean, 95% half-width)}`` of the run-by-run gap R_T(ES) - R_T(TS)."""
    (results,) = panels.values()
    ts = C.final_regret(results[TS])
    return {m: C.paired_gap(C.final_regret(results[f"ES M={m}"]), ts) for m in c.sizes}


def claims(panels, c: Config) -> list[tuple[str, bool | None, str]]:
    limit, g = c.tolerance * c.horizon, gaps(panels, c)
    text = ", ".join(f"M={m}: {a:+.1f} ± {h:.1f}" for m, (a, h) in g.items())
    near = [m for m, (a, _) in g.items() if m <= c.moderate and a <= limit]
    a, h = g[min(c.sizes)]
    return [(f"[Fig. 6] ES matches TS (gap <= {c.tolerance:g} T) at a moderate M <= {c.moderate}",
             bool(near), f"M with gap <= {limit:g}: {near or 'none'}; gaps {text}"),
            (f"[Fig. 6] the smallest M = {min(c.sizes)} is clearly above TS (gap > "
             f"{c.tolerance:g} T)", True if a - h > limit else False if a <= limit else None,
             f"M={min(c.sizes)}: gap {a:+.1f} ± {h:.1f}, tolerance {limit:g}")]


def tables(panels, c: Config) -> list[C.Table]:
    table = C.final_table(f"Final regret at T = {c.horizon} (mean ± 95% CI)", panels,
                          note=f"{c.num_runs} runs, common random numbers.")
    gap = C.Table("Gap to TS, run by run (mean ± 95% CI)", ["M", "R_T(ES) - R_T(TS)"],
                  note=f"Matching: mean gap <= {c.tolerance:g} T = {c.tolerance * c.horizon:g}.")
    for m, (a, h) in gaps(panels, c).items():
        gap.add(f"M = {m}", f"{a:+.1f} ± {h:.1f}")
    return [table, gap]


def body(r: C.Run) -> C.Page:
    c = r.config
    panels = C.run_experiments(r, experiments(c))
    return C.Page(C.draw_panels(panels), tables(panels, c), claims(panels, c),
                  f"d = {c.dim}, K = {c.num_arms}, T = {c.horizon}, {c.num_runs} runs.",
                  {"panels": panels, "config": c})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
