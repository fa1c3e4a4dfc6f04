"""Ensemble++ (Li et al. 2024), Fig. 2: regret against ensemble size; the M matching TS.

Li et al. 2024, Sec. 5.1, Fig. 2 on ``russo``: (a) final regret against M for Ensemble++, the
paper's ES (Coordinate reference) and Lu & Van Roy's ensemble sampling beside exact TS; (b) the
smallest M matching TS (mean gap <= 0.02 T at M and the next M) as d and K grow; (c) the curves
at M = 8. Evidence: docs/reproductions/li-2024.md::

    python -m benchmarks.ensemble_pp_fig2                  # small: d = 20, K = 1,000, T = 500
    python -m benchmarks.ensemble_pp_fig2 --scale paper    # d = 50, K = 10,000, T = 1,000 (GPU)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import jaxbandits as jb
from benchmarks import framework as C
from jaxbandits import Result

NAME = "ensemble_pp_fig2"
TITLE = "Ensemble++ Figure 2: regret against ensemble size M, and the M that matches TS"


def _agent(name: str, **laws: str):
    return lambda m, reg, noise: jb.make_agent(name, ensemble_size=m, reg=reg, noise_std=noise,
                                               **laws)


#: label -> (description, the library agent ``(M, reg, noise_std) -> Agent``)
VARIANTS = {"ES++": ("Ensemble++ (Gaussian ref., Sphere pert.)",
                     _agent("ensemble-pp", reference="gaussian", perturbation="sphere")),
            "ES": ("ES (Coordinate ref., Sphere pert.)",
                   _agent("ensemble-pp", reference="coordinate", perturbation="sphere")),
            "ES (Lu-VR)": ("ensemble sampling (Lu & Van Roy)", _agent("ensemble-sampling"))}
TS_LABEL = "TS (exact)"


@dataclasses.dataclass(frozen=True)
class Config:
    """d, K, T, runs and the M grid (ascending) of (a), (b)'s d and K grids, the matching
    tolerance (a fraction of T), (c)'s M and runner options."""

    dim: int
    num_arms: int
    horizon: int
    num_runs: int
    sizes: tuple[int, ...]
    dims_b: tuple[int, ...]
    arms_b: tuple[int, ...]
    variants: tuple[str, ...] = tuple(VARIANTS)
    tolerance: float = 0.02
    curve_size: int = 8
    chunk_size: int = 500
    num_records: int = 50


SCALES = {
    # tiny: the smoke test's seven programs
    "tiny": Config(dim=3, num_arms=8, horizon=100, num_runs=8, sizes=(2, 4), dims_b=(3,),
                   arms_b=(8,), curve_size=4, chunk_size=100, num_records=20),
    "small": Config(dim=20, num_arms=1000, horizon=500, num_runs=200,
                    sizes=(2, 4, 8, 16, 32, 64), dims_b=(5, 10, 20), arms_b=(100, 1000)),
    "paper": Config(dim=50, num_arms=10_000, horizon=1000, num_runs=200,
                    sizes=tuple(2**k for k in range(1, 11)), dims_b=(10, 20, 30, 40, 50),
                    arms_b=(100, 1000, 10_000), chunk_size=1000, num_records=100),
}


def make_env(dim: int, num_arms: int):
    return jb.make_env("russo", dim=dim, num_arms=num_arms)


def bayes_reg(env) -> float:
    """``reg = noise_std^2 / prior_var``: the ridge form of the prior ``N(0, prior_var I)``."""
    return float(env.noise_std) ** 2 / float(env.prior_var)


class Runner:
    """TS and the ensembles on ``russo(d, K)``, cached: a variant's M grid is one sweep."""

    def __init__(self, config: Config, key, progress: bool | None = None, log=None, cache=None):
        self.config = config
        self.options = C.config_options(config, progress=progress)
        self.runs = C.Runner(key, cache=cache, progress=progress, log=log)

    def ts(self, dim: int, num_arms: int) -> Result:
        env = make_env(dim, num_arms)
        agent = jb.make_agent("lin-ts", reg=bayes_reg(env), noise_std=float(env.noise_std))
        return self.runs.simulate(env, agent, self.config.horizon, self.config.num_runs,
                                  name=TS_LABEL, **self.options)

    def ensemble(self, dim: int, num_arms: int, variant: str) -> dict[int, Result]:
        """``{M: Result}`` of a variant at every M of the grid (named ``"<variant> M=<M>"``)."""
        env, sizes = make_env(dim, num_arms), self.config.sizes
        agent = VARIANTS[variant][1](sizes[0], bayes_reg(env), float(env.noise_std))
        results = dict(zip(sizes, self.runs.sweep(env, agent, "ensemble_size", list(sizes),
                                                  self.config.horizon, self.config.num_runs,
                                                  name=variant, **self.options), strict=True))
        for m, result in results.items():
            result.name = f"{variant} M={m}"
        return results


def minimal_matching_size(runner: Runner, dim: int, num_arms: int
                          ) -> tuple[int | None, dict[int, float]]:
    """Panel (b): ``(M* or None, {M: gap})``, M* the first M whose mean paired gap
    ``R_T(ES++) - R_T(TS)`` is at most ``tolerance * T`` at M and the next M of the grid; the
    gaps up to the M after M*."""
    config = runner.config
    ts = C.final_regret(runner.ts(dim, num_arms))
    es = runner.ensemble(dim, num_arms, "ES++")
    gaps = {m: C.paired_gap(C.final_regret(es[m]), ts)[0] for m in config.sizes}
    matched = [g <= config.tolerance * config.horizon for g in gaps.values()] + [True]
    for i, m in enumerate(config.sizes):
        if matched[i] and matched[i + 1]:
            return m, dict(list(gaps.items())[: i + 2])
    return None, gaps


def draw_regret_vs_size(ax, curves: dict[str, dict[int, Result]], ts: Result,
                        title: str = "") -> None:
    """Final regret (mean, 95% CI) against M, one line per variant, TS as a band."""
    ts_mean, ts_half = C.mean_ci(C.final_regret(ts))
    for variant, by_size in curves.items():
        sizes = sorted(by_size)
        C.draw_errorbars(ax, sizes, [by_size[m] for m in sizes], VARIANTS[variant][0])
    ax.axhline(ts_mean, color="k", linestyle="--", label=TS_LABEL)
    ax.axhspan(ts_mean - ts_half, ts_mean + ts_half, color="k", alpha=0.1, linewidth=0)
    ax.set_xscale("log", base=2)
    C.style_axes(ax, "ensemble size M", "final cumulative regret",
                 title or "(a) regret at T against M", legend=8, which="both", log="y")


def draw_minimal_size(ax, minimal: dict[tuple[int, int], int | None], config: Config) -> None:
    """M* against d, one line per K; 'not matched' points drawn above the grid's top."""
    top = 2 * max(config.sizes)
    for num_arms in sorted({k for _, k in minimal}):
        dims = sorted(d for d, k in minimal if k == num_arms)
        (line,) = ax.plot(dims, [minimal[(d, num_arms)] or top for d in dims], marker="o",
                          label=f"K = {num_arms}")
        for d in (d for d in dims if minimal[(d, num_arms)] is None):
            ax.annotate(f"> {max(config.sizes)}", (d, top), textcoords="offset points",
                        xytext=(3, 3), fontsize=7, color=line.get_color())
    ax.set_yscale("log", base=2)
    C.style_axes(ax, "dimension d", "smallest matching M",
                 f"(b) M* with R_T(ES++) - R_T(TS) <= {config.tolerance:g} T", legend=8,
                 which="both")


def size_table(curves, ts: Result, config: Config) -> C.Table:
    ts_final = C.final_regret(ts)
    return C.table(
        f"Final regret at T = {config.horizon} against M (d = {config.dim}, K = {config.num_arms})",
        ["M"] + [VARIANTS[v][0] for v in curves] + ["gap ES++ - TS (paired)"],
        [(f"M = {m}", *[C.fmt_ci(C.final_regret(curves[v][m])) for v in curves],
          "—" if "ES++" not in curves else C.fmt_ci(C.final_regret(curves["ES++"][m]) - ts_final))
         for m in config.sizes] + [(TS_LABEL, C.fmt_ci(ts_final), *["—"] * (len(curves) - 1),
                                    "0")],
        f"Mean ± 95% CI over {config.num_runs} runs; tolerance {config.tolerance:g} T = "
        f"{config.tolerance * config.horizon:g}.")


def minimal_table(runner: Runner, minimal, gaps, config: Config) -> C.Table:
    table = C.Table(
        "Smallest ensemble size M* matching exact TS",
        ["setting", "TS regret", "M*", "ES++ regret at M*", "gap at M* (paired)", "gaps by M"],
        note=f"Matching: mean gap <= {config.tolerance * config.horizon:g} at M and the next M.")
    for (d, k), m_star in sorted(minimal.items()):
        ts = C.final_regret(runner.ts(d, k))
        es = None if m_star is None else C.final_regret(runner.ensemble(d, k, "ES++")[m_star])
        table.add(f"d = {d}, K = {k}", C.fmt_ci(ts), "not reached" if m_star is None else m_star,
                  *(("—", "—") if es is None else (C.fmt_ci(es), C.fmt_ci(es - ts))),
                  ", ".join(f"{m}: {g:.1f}" for m, g in sorted(gaps[(d, k)].items())))
    return table


def check_claims(curves, ts: Result, minimal, config: Config) -> list[tuple[str, bool | None, str]]:
    """Li et al. 2024, Sec. 5.1, Fig. 2: verdicts on the 95% interval of run-by-run gaps."""
    claims = []
    ts_final = C.final_regret(ts)
    limit = config.tolerance * config.horizon
    if "ES++" in curves and "ES" in curves:
        stats = {m: C.paired_gap(C.final_regret(curves["ES++"][m]),
                                 C.final_regret(curves["ES"][m]))
                 for m in config.sizes if m <= 64}
        better = [m for m, (g, h) in stats.items() if g + h < 0]
        worse = [m for m, (g, h) in stats.items() if g - h > 0]
        noise = [m for m in stats if m not in better + worse]
        trail = ", ".join(f"M={m}: {g:+.1f} ± {h:.1f}" for m, (g, h) in stats.items())
        claims.append((
            "ES++ has lower regret than ES (Coordinate ref.) at every M <= 64",
            C.decide(all(g < 0 for g, _ in stats.values()), bool(worse)),
            f"paired gaps ES++ - ES: {trail}; lower at M = {better or 'none'}, higher at M = "
            f"{worse or 'none'}, within noise at M = {noise or 'none'}"))
    if "ES++" in curves:
        largest = max(curves["ES++"])
        for m, claim in ((8, "nearly matches TS at M = 8"),
                         (largest, f"reaches TS-level regret at the largest M = {largest}")):
            if m in curves["ES++"]:
                gap = C.final_regret(curves["ES++"][m]) - ts_final
                claims.append((f"ES++ {claim} (gap <= {config.tolerance:g} T)",
                               C.verdict_at_most(gap, limit),
                               f"gap {C.gap_text(gap)}, tolerance {limit:g}"))
    if "ES (Lu-VR)" in curves:
        moderate = max(m for m in config.sizes if m <= 64)
        lu = C.final_regret(curves["ES (Lu-VR)"][moderate])
        claims.append((f"Lu & Van Roy ensemble sampling is near TS at M = {moderate} "
                       "(regret within 20% of TS's)", C.verdict_at_most(lu - 1.2 * ts_final, 0.0),
                       f"ratio to TS {lu.mean() / ts_final.mean():.2f}; paired R(ES) - 1.2 R(TS) "
                       f"{C.gap_text(lu - 1.2 * ts_final)}"))
    ks, dims = sorted({k for _, k in minimal}), sorted({d for d, _ in minimal})
    top = 2 * max(config.sizes)  # "not matched" counts as twice the grid's top
    if len(dims) > 1:
        seqs = [[minimal[(d, k)] or top for d in dims] for k in ks]
        claims.append(("M* grows with d (for every K)",
                       all(s == sorted(s) and s[-1] > s[0] for s in seqs),
                       "; ".join(f"K={k}: {[minimal[(d, k)] for d in dims]}" for k in ks)
                       + f" for d = {dims}"))
    if len(ks) > 1:
        seqs = [[minimal[(d, k)] or top for k in ks if (d, k) in minimal] for d in dims]
        claims.append(("M* is flat in K (within a factor 2 at every d)",
                       all(max(s) <= 2 * min(s) for s in seqs),
                       "; ".join(f"d={d}: {[minimal.get((d, k)) for k in ks]}" for d in dims)
                       + f" for K = {ks}"))
    return claims


def body(r: C.Run) -> C.Page:
    config = r.config
    runner = Runner(config, r.key, r.progress, log=r.log, cache=r.args.cache)
    curves = {v: runner.ensemble(config.dim, config.num_arms, v) for v in config.variants}
    ts = runner.ts(config.dim, config.num_arms)
    minimal, gaps = {}, {}
    for d in config.dims_b:
        for k in config.arms_b:
            minimal[(d, k)], gaps[(d, k)] = minimal_matching_size(runner, d, k)
            r.log(f"d = {d}, K = {k}: M* = {minimal[(d, k)]}")
    fig, axes = C.new_figure(1, 3)
    draw_regret_vs_size(axes[0, 0], curves, ts,
                        f"(a) d = {config.dim}, K = {config.num_arms}, T = {config.horizon}")
    draw_minimal_size(axes[0, 1], minimal, config)
    m_curve = min(config.sizes, key=lambda m: abs(m - config.curve_size))
    jb.plot_regret({**{VARIANTS[v][0]: curves[v][m_curve] for v in curves}, TS_LABEL: ts},
                   ax=axes[0, 2], title=f"(c) regret curves at M = {m_curve}")
    intro = (f"d = {config.dim}, K = {config.num_arms}, T = {config.horizon}, "
             f"{config.num_runs} runs per point, M in {list(config.sizes)}; panel (b): d in "
             f"{list(config.dims_b)}, K in {list(config.arms_b)}.")
    return C.Page(fig, [size_table(curves, ts, config),
                        minimal_table(runner, minimal, gaps, config)],
                  check_claims(curves, ts, minimal, config), intro,
                  {"minimal": minimal, "gaps": gaps, "config": config, "curves": curves,
                   "ts": ts, "runner": runner})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
