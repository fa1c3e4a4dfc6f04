"""Lee & Oh 2024, "Improved regret of linear ensemble sampling": a demonstration.

The paper has no experiments; our protocol (docs/reproductions/lee-oh-2024.md): Prop. 2 (Sec. 6)
run by run, regret against the ensemble size m, scaling in T and d, and a comparison of ES,
LinPHE, LinTS and LinUCB at the theory (``sigma_R = beta_T``) and practical (``sigma_R =
sigma``) calibrations on ``linear``::

    python -m benchmarks.lee_oh_demo                  # small
    python -m benchmarks.lee_oh_demo --scale paper    # more seeds, T = 10^4; GPU
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import matplotlib.ticker
import numpy as np

import jaxbandits as jb
from benchmarks import framework as C
from jaxbandits import Result
from jaxbandits.agents import theory_perturb_std

NAME = "lee_oh_demo"
TITLE = "Lee & Oh linear ensemble sampling: a demonstration (the paper has no experiments)"
CALIBRATIONS = ("theory", "practical")
#: an independent NumPy implementation's numbers (d = 5, K = 20, T = 1000, sigma = 0.5, 40 seeds)
REFERENCE_KEYS = (1, 10, 100, "ES-RR", "LinPHE", "LinTS", "LinUCB")  # ES by m, then the agents
REFERENCE = {
    "theory": ["230 ± 28", "230 ± 9", "270 ± 7", "272 ± 7", "277 ± 8", "273 ± 7", "78 ± 2"],
    "practical": ["187 ± 26", "33 ± 7", "27 ± 2", "28 ± 2", "30 ± 2", "26 ± 1", "—"],
}
REFERENCE_SETUP = {"dim": 5, "num_arms": 20, "horizon": 1000, "noise_std": 0.5}


@dataclasses.dataclass(frozen=True)
class Config:
    """The Prop. 2 / ensemble-size problem and its m, the scaling grids (the largest T is the
    comparison's); ``per_arm_phe``: LinPHE with per-arm statistics (False: Prop. 2's)."""

    dim: int
    num_arms: int
    horizon: int
    num_runs: int
    ensemble_sizes: tuple[int, ...]
    scaling_dims: tuple[int, ...]
    scaling_arms: int
    scaling_horizons: tuple[int, ...]
    t_scaling_dim: int
    d_scaling_horizon: int
    scaling_runs: int
    scaling_size: int = 20
    scaling_agents: tuple[str, ...] = ("ES", "LinPHE", "LinTS", "LinUCB")
    per_arm_phe: bool = True
    noise_std: float = 0.5
    reg: float = 1.0
    delta: float = 0.05
    param_bound: float = 1.0
    chunk_size: int = 500
    num_records: int = 40


SCALES = {
    # tiny: the scaling parts rerun the ensemble-size part's programs (five in all)
    "tiny": Config(dim=3, num_arms=5, horizon=60, num_runs=6, ensemble_sizes=(2,),
                   scaling_dims=(3,), scaling_arms=5, scaling_horizons=(60,),
                   t_scaling_dim=3, d_scaling_horizon=60, scaling_runs=6, scaling_size=2,
                   scaling_agents=("ES", "LinUCB"), per_arm_phe=False, chunk_size=60,
                   num_records=20),
    "small": Config(dim=5, num_arms=20, horizon=1000, num_runs=100,
                    ensemble_sizes=(1, 2, 5, 10, 20, 50, 100), scaling_dims=(2, 5, 10, 20),
                    scaling_arms=50, scaling_horizons=(250, 500, 1000, 2000, 4000),
                    t_scaling_dim=5, d_scaling_horizon=2000, scaling_runs=50),
    "paper": Config(dim=5, num_arms=20, horizon=1000, num_runs=1000,
                    ensemble_sizes=(1, 2, 5, 10, 20, 50, 100), scaling_dims=(2, 5, 10, 20),
                    scaling_arms=50, scaling_horizons=(625, 1250, 2500, 5000, 10_000),
                    t_scaling_dim=5, d_scaling_horizon=10_000, scaling_runs=200,
                    chunk_size=1000, num_records=60),
}


def build_agent(name: str, config: Config, horizon: int, size: int = 0):
    """``(agent, field)``: the agent and the numeric field carrying sigma_R (or None)."""
    phe = {"reg": config.reg, "prior_scale": 1.0}
    agents = {  # ES-RR: m = T members in turn, Prop. 2's LinPHE; LinPHE: per-arm statistics
        "ES": ("lin-es", {"ensemble_size": size, "selection": "uniform", **phe}),
        "ES-RR": ("lin-es", {"ensemble_size": horizon, "selection": "round_robin", **phe}),
        "LinPHE": ("lin-phe", phe),
        "LinPHE-buffer": ("lin-phe", {"buffer_size": horizon, **phe}),  # coupled with lin-es
        "LinTS": ("lin-ts", {"reg": config.reg, "explore_scale": 1.0}),  # v = sigma_R
        "LinUCB": ("lin-ucb", {"reg": config.reg, "noise_std": config.noise_std, "delta":
                               config.delta, "param_bound": config.param_bound,
                               "explore_scale": 1.0})}
    registry, fields = agents[name]
    return jb.make_agent(registry, **fields), {"LinTS": "noise_std", "LinUCB": None}.get(
        name, "perturb_std")


def run_scales(env, agent, field: str | None, scales: Sequence[float], key, horizon: int,
               num_runs: int, **options) -> list[Result]:
    """One result per perturbation scale (one ``jb.sweep``); ``field=None``: one ``simulate``."""
    if field is None:
        return [jb.simulate(env, agent, key, horizon, num_runs, **options)] * len(scales)
    return list(jb.sweep(env, agent, key, {field: [float(s) for s in scales]}, horizon,
                         num_runs, **options).values())


def beta(config: Config, dim: int, horizon: int) -> float:
    """The theory calibration sigma_R = beta_T(delta)."""
    return theory_perturb_std(dim, horizon, config.noise_std, config.reg, config.delta,
                              config.param_bound)


def run_reference(config: Config, key, progress: bool | None, log) -> dict:
    """The Prop. 2 and ensemble-size parts: ``{agent: {calibration: Result}}`` (ES by m)."""
    env = jb.make_env("linear", dim=config.dim, num_arms=config.num_arms,
                      noise_std=config.noise_std)
    scales = [beta(config, config.dim, config.horizon), config.noise_std]
    options = C.config_options(config, progress=progress)
    out: dict = {"scales": dict(zip(CALIBRATIONS, scales, strict=True)), "ES": {}}
    es, _ = build_agent("ES", config, config.horizon, config.ensemble_sizes[0])
    swept = iter(jb.sweep(env, es, key, {"ensemble_size": list(config.ensemble_sizes),
                                         "perturb_std": scales}, config.horizon,
                          config.num_runs, **options).values())  # m, then the calibration
    for m in config.ensemble_sizes:
        out["ES"][m] = {cal: next(swept) for cal in CALIBRATIONS}
        for cal, result in out["ES"][m].items():
            result.name = f"ES m={m}, {cal}"
    log(f"ensemble size: ES m in {list(config.ensemble_sizes)} (compile "
        f"{sum(out['ES'][m]['theory'].compile_time for m in config.ensemble_sizes):.1f} s)")
    # without per-arm statistics LinPHE is Prop. 2's (the buffer of T rounds)
    for name in ("ES-RR", "LinPHE-buffer", *["LinPHE"] * config.per_arm_phe, "LinTS", "LinUCB"):
        agent, field = build_agent(name, config, config.horizon)
        results = run_scales(env, agent, field, scales, key, config.horizon, config.num_runs,
                             **options)
        log(f"ensemble size: {name} (compile {results[0].compile_time:.1f} s)")
        out[name] = dict(zip(CALIBRATIONS, results, strict=True))
    out.setdefault("LinPHE", out["LinPHE-buffer"])
    return out


def run_scaling(config: Config, key, progress: bool | None, log) -> dict:
    """The scaling and comparison parts: ``{(agent, d): {"theory": {T: Result}, "practical":
    Result}}`` (at the theory calibration every T has its own beta_T)."""
    horizons = sorted(config.scaling_horizons)
    options = C.config_options(config, horizons, progress, horizon=horizons[-1])
    out = {}
    for d in config.scaling_dims:
        env = jb.make_env("linear", dim=d, num_arms=config.scaling_arms,
                          noise_std=config.noise_std)
        scales = [beta(config, d, t) for t in horizons] + [config.noise_std]
        for name in config.scaling_agents:
            agent, field = build_agent(name, config, horizons[-1], config.scaling_size)
            results = run_scales(env, agent, field, scales, key, horizons[-1],
                                 config.scaling_runs, **options)
            out[(name, d)] = {"theory": dict(zip(horizons, results[:-1], strict=True)),
                              "practical": results[-1]}
            log(f"scaling: {name} d={d} (compile {results[0].compile_time:.1f} s)")
    return out


def scaled_regret(scaling: dict, name: str, d: int, calibration: str,
                  horizon: int) -> np.ndarray:
    """``(runs,)`` regret at T = ``horizon`` with the calibration of that horizon."""
    entry = scaling[(name, d)]
    return C.final_regret(entry["theory"][horizon] if calibration == "theory"
                          else entry["practical"], step=horizon)


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """The least-squares slope of ``log y`` against ``log x`` (NaN with fewer than 2 points)."""
    if len(x) < 2:
        return float("nan")
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def curve(scaling: dict, config: Config, name: str, cal: str, against: str):
    """``(xs, mean regrets)`` against T (at ``t_scaling_dim``) or d (at ``d_scaling_horizon``);
    None when not run."""
    points = ([(config.t_scaling_dim, t) for t in sorted(config.scaling_horizons)]
              if against == "T" else
              [(d, config.d_scaling_horizon) for d in sorted(config.scaling_dims)])
    if any((name, d) not in scaling for d, _ in points):
        return None
    return ([t if against == "T" else d for d, t in points],
            [scaled_regret(scaling, name, d, cal, t).mean() for d, t in points])


def series(config: Config) -> list[tuple[str, str]]:
    """The scaling part's ``(agent, calibration)`` (LinUCB: one, it has no calibration)."""
    return [(name, cal) for name in config.scaling_agents for cal in CALIBRATIONS
            if name != "LinUCB" or cal == "theory"]


def label(name: str, config: Config) -> str:
    return {"ES": f"ES (m = {config.scaling_size})", "LinTS": "LinTS (v = σ_R)",
            "LinUCB": "LinUCB (OFUL radius)"}.get(name, name)


def reference_comparable(ref: dict, config: Config) -> bool:
    """Whether the ensemble-size part ran the reference setup (so its NumPy numbers apply)."""
    return all(getattr(config, k) == v for k, v in REFERENCE_SETUP.items()) and \
        {1, 10, 100} <= set(ref["ES"])


def reference_table(ref: dict, config: Config) -> C.Table:
    """The demonstration's table: mean ± s.e. of the final regret, one row per calibration."""
    sizes = [m for m in (1, 10, 100) if m in ref["ES"]] or list(ref["ES"])[:3]
    columns = [ref["ES"][m] for m in sizes] + [ref[n] for n in ("ES-RR", "LinPHE", "LinTS")]
    rows = []
    for cal, scale in ref["scales"].items():
        rows.append((f"theory, σ_R = β_T = {scale:.2f}" if cal == "theory"
                     else f"practical, σ_R = σ = {scale:g}",
                     *[C.fmt_se(C.final_regret(by_cal[cal])) for by_cal in columns],
                     C.fmt_se(C.final_regret(ref["LinUCB"][cal])) if cal == "theory" else "—"))
        if reference_comparable(ref, config):
            rows.append((f"{cal} (NumPy reference)", *REFERENCE[cal]))
    return C.table(
        f"Final regret (mean ± s.e.), d = {config.dim}, K = {config.num_arms}, "
        f"T = {config.horizon}, σ = {config.noise_std}, {config.num_runs} seeds",
        ["calibration"] + [f"ES m={m}" for m in sizes]
        + [f"ES m=T={config.horizon} RR", "LinPHE", "LinTS(v=σ_R)", "LinUCB"], rows,
        "LinUCB (OFUL radius) does not depend on the calibration. Reference rows: an "
        "independent NumPy check (40 seeds).")


def equivalence_stats(ref: dict, cal: str) -> tuple[int, int, float]:
    """(runs whose curves agree, runs, max |difference|) of ES-RR against LinPHE-buffer."""
    a = np.asarray(ref["ES-RR"][cal].cumulative_regret, np.float64)
    b = np.asarray(ref["LinPHE-buffer"][cal].cumulative_regret, np.float64)
    diff = np.abs(a - b)
    agree = np.all(diff <= 1e-3 * (1.0 + np.abs(b)), axis=1)
    return int(agree.sum()), int(a.shape[0]), float(diff.max())


def equivalence_table(ref: dict, config: Config) -> C.Table:
    return C.table(
        f"Prop. 2: ES (m = T = {config.horizon}, round robin) vs LinPHE (buffer T)",
        ["calibration", "runs with identical curves", "max |difference|", "ES-RR", "LinPHE"],
        [(cal, f"{agree} / {runs}", f"{worst:.3g}", C.fmt_ci(C.final_regret(ref["ES-RR"][cal])),
          C.fmt_ci(C.final_regret(ref["LinPHE-buffer"][cal])))
         for cal in CALIBRATIONS for agree, runs, worst in [equivalence_stats(ref, cal)]],
        "Same keys: member t of ES and round t of LinPHE read the same perturbations. Identical: "
        "every recorded regret within 1e-3 (relative).")


def ensemble_size_table(ref: dict, config: Config) -> C.Table:
    rows = {f"m = {m}": ref["ES"][m] for m in sorted(ref["ES"])}
    rows |= {f"m = T = {config.horizon} (round robin)": ref["ES-RR"], "LinPHE": ref["LinPHE"],
             "LinTS": ref["LinTS"], "LinUCB": dict.fromkeys(CALIBRATIONS, ref["LinUCB"]["theory"])}
    return C.table(f"Ensemble size: ES final regret against m (mean ± 95% CI, "
                   f"T = {config.horizon})", ["m", *CALIBRATIONS],
                   [(name, *[C.fmt_ci(C.final_regret(by_cal[c])) for c in CALIBRATIONS])
                    for name, by_cal in rows.items()])


def scaling_table(scaling: dict, config: Config) -> C.Table:
    horizons, dims = sorted(config.scaling_horizons), sorted(config.scaling_dims)

    def slope(name, cal, against):
        xy = curve(scaling, config, name, cal, against)
        value = loglog_slope(*xy) if xy else float("nan")
        return "— (one point)" if np.isnan(value) else f"{value:.2f}"

    return C.table(
        f"Scaling: log-log slopes of the mean regret, K = {config.scaling_arms}",
        ["agent", "calibration", f"slope in T (d = {config.t_scaling_dim}, T = {horizons[0]}.."
         f"{horizons[-1]})", f"slope in d (T = {config.d_scaling_horizon}, d = {dims[0]}.."
         f"{dims[-1]})", f"regret at d = {dims[-1]}, T = {config.d_scaling_horizon}"],
        [(label(name, config), cal if name != "LinUCB" else "—", slope(name, cal, "T"),
          slope(name, cal, "d"),
          C.fmt_ci(scaled_regret(scaling, name, dims[-1], cal, config.d_scaling_horizon)))
         for name, cal in series(config)],
        f"{config.scaling_runs} runs per point; at the theory calibration each T has its own "
        "beta_T.")


def check_claims(ref: dict, scaling: dict, config: Config) -> list[tuple[str, bool | None, str]]:
    mean, se = ({cal: {k: C.mean_se(C.final_regret(by_cal[cal]))[i]
                       for k, by_cal in [*ref["ES"].items(), *((n, ref[n]) for n in (
                           "ES-RR", "LinPHE", "LinTS", "LinUCB"))]} for cal in CALIBRATIONS}
                for i in (0, 1))
    theory, practical = mean["theory"], mean["practical"]

    def name(k):
        return k if isinstance(k, str) else f"ES m={k}"

    agree = {cal: equivalence_stats(ref, cal) for cal in CALIBRATIONS}
    claims = [("Prop. 2: ES with m = T and round robin is LinPHE, run by run",
               all(a == n for a, n, _ in agree.values()),
               ", ".join(f"{c}: {a}/{n} runs identical" for c, (a, n, _) in agree.items()))]
    probe = [k for k in (10, "LinPHE", "LinTS") if k in theory]
    ratios = {k: theory[k] / practical[k] for k in probe}
    claims.append(("the theory calibration over-explores (regret >= 3x the practical one)",
                   all(r >= 3 for r in ratios.values()),
                   ", ".join(f"{name(k)}: x{r:.1f}" for k, r in ratios.items())))
    if 1 in practical and 10 in practical:
        claims.append(("practical calibration: ES with m = 1 is much worse than m = 10 "
                       "(>= 1.5x)", practical[1] / practical[10] >= 1.5,
                       f"{practical[1]:.0f} ± {se['practical'][1]:.0f} vs "
                       f"{practical[10]:.0f} ± {se['practical'][10]:.0f} (s.e.)"))
    large = [k for k in (10, 50, 100, "ES-RR", "LinPHE") if k in practical]
    ts, ts_se = practical["LinTS"], se["practical"]["LinTS"]
    close = [abs(practical[k] - ts) <= max(2 * np.hypot(se["practical"][k], ts_se), 0.3 * ts)
             for k in large]
    claims.append(("practical calibration: ES (m >= 10, m = T), LinPHE and LinTS agree "
                   "(within 2 combined s.e. or 30%)", all(close) if close else None,
                   ", ".join(f"{k if isinstance(k, str) else f'm={k}'}: {practical[k]:.1f}"
                             for k in large) + f" vs LinTS {ts:.1f}"))
    sampling_theory = min(theory[k] for k in probe)
    sampling_practical = max(practical[k] for k in probe)
    ucb = theory["LinUCB"]
    claims.append(("ordering: LinUCB < sampling methods at the theory calibration, and "
                   "sampling methods (practical) < LinUCB",
                   ucb < sampling_theory and sampling_practical < ucb,
                   f"LinUCB {ucb:.0f}; sampling theory >= {sampling_theory:.0f}, "
                   f"practical <= {sampling_practical:.0f}"))
    if 10 in theory and 100 in theory:
        claims.append(("theory calibration: no improvement with m (m = 10 not worse than "
                       "m = 100; reference 230 vs 270)", theory[10] <= theory[100]
                       + 2 * np.hypot(se["theory"][10], se["theory"][100]),
                       f"{theory[10]:.0f} vs {theory[100]:.0f}"))
    if reference_comparable(ref, config):
        cells = [(cal, k, cell, *map(float, cell.split("±"))) for cal in CALIBRATIONS
                 for k, cell in zip(REFERENCE_KEYS, REFERENCE[cal], strict=True) if cell != "—"]
        off = [f"{cal} {name(k)}: {mean[cal][k]:.0f} vs {cell}" for cal, k, cell, m, s in cells
               if abs(mean[cal][k] - m) > 3 * np.hypot(se[cal][k], s)]  # s: the reference's s.e.
        claims.append(("the NumPy reference numbers are matched (every cell within 3 "
                       "combined s.e.)", not off,
                       "cells off: " + "; ".join(off) if off else "all 13 cells agree"))
    for against, xs in (("T", config.scaling_horizons), ("d", config.scaling_dims)):
        if len(xs) < 2 or curve(scaling, config, "ES", "theory", against) is None:
            continue  # ES's scaling, once it has two points
        xy = {cal: curve(scaling, config, "ES", cal, against) for cal in CALIBRATIONS}
        slopes = {cal: loglog_slope(*points) for cal, points in xy.items()}
        evidence = f"slopes practical {slopes['practical']:.2f}, theory {slopes['theory']:.2f}"
        xs, ys = xy["practical"]
        claims.append(("scaling: ES regret is sublinear in T (log-log slope < 0.8, R(T)/T "
                       "decreasing, practical)", slopes["practical"] < 0.8
                       and all(np.diff(np.divide(ys, xs)) < 0), evidence) if against == "T" else
                      ("scaling: ES regret increases with d, exponent <= 1.7",
                       all(np.all(np.diff(xy[c][1]) > 0) and slopes[c] <= 1.7
                           for c in CALIBRATIONS), evidence))
    return claims


def draw(ref: dict, scaling: dict, config: Config):
    fig, axes = C.new_figure(2, 3, width=5.2, height=4.0)
    ax = axes[0, 0]  # Prop. 2, run by run
    for cal, marker in zip(CALIBRATIONS, ("o", "s"), strict=True):
        ax.scatter(C.final_regret(ref["ES-RR"][cal]), C.final_regret(ref["LinPHE-buffer"][cal]),
                   s=12, marker=marker, alpha=0.6, label=cal)
    ax.plot(ax.get_xlim(), ax.get_xlim(), "k:", linewidth=1)
    C.style_axes(ax, "ES, m = T, round robin: final regret", "LinPHE (buffer T): final regret",
                 "Prop. 2, run by run", legend=8)
    ax, sizes = axes[0, 1], sorted(ref["ES"]) + [config.horizon]  # ensemble size
    for cal in CALIBRATIONS:
        stats = np.array([C.mean_ci(C.final_regret(by_cal[cal]))
                          for by_cal in [*(ref["ES"][m] for m in sizes[:-1]), ref["ES-RR"]]])
        (line,) = ax.plot(sizes, stats[:, 0], marker="o", label=f"ES, {cal}")
        ax.fill_between(sizes, stats[:, 0] - stats[:, 1], stats[:, 0] + stats[:, 1],
                        color=line.get_color(), alpha=0.15, linewidth=0)
        for name, style in (("LinPHE", "--"), ("LinTS", ":")):
            ax.axhline(C.mean_final(ref[name][cal]), color=line.get_color(), linestyle=style,
                       linewidth=1, label=f"{name}, {cal}")
    ax.axhline(C.mean_final(ref["LinUCB"]["theory"]), color="k", linestyle="-.", linewidth=1,
               label="LinUCB")
    C.style_axes(ax, "ensemble size m (last point: m = T, round robin)",
                 f"final regret at T = {config.horizon}", f"Ensemble size: regret against m "
                 f"(d = {config.dim}, K = {config.num_arms})", which="both", log="xy")
    ax.legend(fontsize=6, ncol=2)
    for ax, against in ((axes[0, 2], "T"), (axes[1, 0], "d")):  # scaling
        for name, cal in series(config):
            xy = curve(scaling, config, name, cal, against)
            if xy is not None:
                shown = label(name, config) + ("" if name == "LinUCB" else f", {cal}")
                ax.plot(*xy, "--" if cal == "theory" else "-", marker="o",
                        label=f"{shown} ({loglog_slope(*xy):.2f})")
        ticks = sorted(config.scaling_horizons if against == "T" else config.scaling_dims)
        C.style_axes(ax, "horizon T" if against == "T" else "dimension d", "mean regret",
                     f"Scaling: regret against T (d = {config.t_scaling_dim}, K = "
                     f"{config.scaling_arms}); slopes" if against == "T" else
                     f"Scaling: regret against d (T = {config.d_scaling_horizon}); slopes",
                     legend=6, which="both", log="xy")
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    d, t_max = max(config.scaling_dims), max(config.scaling_horizons)
    for ax, cal in ((axes[1, 1], "practical"), (axes[1, 2], "theory")):  # comparison
        results = {label(name, config): scaling[(name, d)]["theory"][t_max] if cal == "theory"
                   else scaling[(name, d)]["practical"] for name in config.scaling_agents}
        scale = beta(config, d, t_max) if cal == "theory" else config.noise_std
        jb.plot_regret(results, ax=ax, title=f"Comparison: {cal} calibration, σ_R = "
                                             f"{scale:.2f} (d = {d}, K = {config.scaling_arms})")
    return fig


def body(r: C.Run) -> C.Page:
    config = r.config
    ref = run_reference(config, r.key, r.progress, r.log)
    scaling = run_scaling(config, r.key, r.progress, r.log)
    tables = [reference_table(ref, config), equivalence_table(ref, config),
              ensemble_size_table(ref, config), scaling_table(scaling, config)]
    intro = (f"σ = {config.noise_std}, λ = {config.reg}, δ = {config.delta}, S = "
             f"{config.param_bound}. Prop. 2 and ensemble size: d = {config.dim}, K = "
             f"{config.num_arms}, T = {config.horizon}, {config.num_runs} runs; scaling and "
             f"comparison: K = {config.scaling_arms}, d in {list(config.scaling_dims)}, T up to "
             f"{max(config.scaling_horizons)}, {config.scaling_runs} runs. Not run: Janz et "
             "al.'s ensemble sampling and other perturbation laws (no such agents yet).")
    return C.Page(draw(ref, scaling, config), tables, check_claims(ref, scaling, config), intro,
                  {"reference": ref, "scaling": scaling, "config": config})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
