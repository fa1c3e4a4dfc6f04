"""Anytime ensemble sampling (Sun, Wang & Xu), Figure 1: the linear and logistic bandits, with DT.

Reproduces the linear and logistic panels of Sun et al. 2025, Fig. 1 (Sec. 7.1-7.2), with
the paper's claims about them. A panel is named after its environment, as the paper names its
bandits (Sec. 7.1):

* **linear** (the linear bandit, ``linear``: unit theta* and arms, ``N(0, 0.5^2)`` noise): Lin-ES
  (``lin-es``, m = 25, sigma_R = 0.1, lambda = 1, no initial perturbation) against LinUCB and
  LinTS, plus Lin-ES with the doubling trick (``lin-es-dt``, T_0 = 100 and 300; an extension: the
  paper gives the DT schedule for GLM-ES and Neural-ES only). LinPHE is left out: Gaussian LinPHE
  is LinTS in law (Lee & Oh 2024, Sec. 6), so tuned LinTS stands for both. A second, diagnostic
  Lin-ES with sigma_R = 0.5 (the noise std) runs in the same sweep: with no initial perturbation
  and no warm-up, the paper's Lin-ES starts with theta^j = 0 (an all-way tie, arm 0) and its
  members only ever differ along the arms played so far, so a run whose first arms have positive
  means can lock onto them; sigma_R = 0.1 rarely perturbs it out.
* **logistic** (the logistic bandit, ``logistic``: ``sigmoid(<x, theta*>) + N(0, 0.5^2)``):
  GLM-ES (``glm-es``, m = 10, sigma_R = 0.1, lambda = 1, tau design warm-up rounds, 100 gd steps
  of 0.01 on the mean loss) and GLM-ES-DT100 / DT300 (``glm-es-dt``: restarts at
  ``floor(T_0 b^e)``, ``b = 2.618``, ``m_e = ceil(2 ln L_e)``, ``sigma_R,e = 0.02 ln L_e``,
  warm-up ``min(tau, L_e)`` per epoch) against UCB-GLM and GLM-TSL with the same warm-up and
  solver (Sun et al. 2025, Sec. 7.2; the grid is our choice).

The paper names no linear or logistic baselines; these are our choice (Sec. 7.2 names only
Neural-UCB and Neural-TS) and their exploration scales are tuned over a small grid by one
``jb.sweep`` each (the best final regret is plotted; every grid point is in the table; tuning on
the evaluation runs favours the baselines). Every agent sees the same instances and noise (common
random numbers), so the gaps in the tables are paired run by run. The distance and quadratic
panels (Neural-ES) belong to the neural reproduction: :data:`PANELS` maps a panel name to a
builder, and a neural panel is one more entry. ``--set 'panels=["logistic"]'`` runs one panel.

Scales: ``small`` (d = 10, K = 20, T = 2,000, 10 instances, tau = 200; a few minutes on a 2-core
CPU) and ``paper`` (d = 20, K = 50, T = 10,000, 10 instances, tau = 500; meant for a GPU). Run it
from the repository root::

    python -m benchmarks.anytime_fig1                   # --scale small
    python -m benchmarks.anytime_fig1 --scale paper --solver newton

``--solver gd`` (default, the paper's 100 gd steps) or ``newton`` (the exact argmin) for every
GLM agent. It writes ``anytime_fig1.png`` and ``anytime_fig1.md`` into ``--out`` (default
``results/reproduce/anytime_fig1/``).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

import jaxbandits as jb
from benchmarks import framework as C
from jaxbandits import Result

NAME = "anytime_fig1"
TITLE = ("Anytime ensemble sampling, Figure 1: the linear and logistic bandits, with the "
         "doubling-trick variants")
SOLVERS = ("gd", "newton")
#: "competitive" below: mean final regret at most this fraction above the reference's (True); more
#: than that with a paired 95% CI excluding 0 is False, and in between "not decidable here".
NOT_WORSE_TOL = 0.10
#: "close" below: means within this fraction of each other.
CLOSE_TOL = 0.15
#: a diagnostic second Lin-ES on the linear bandit: sigma_R = the noise std (the paper's 0.1 is a
#: fifth of it, and without an initial perturbation Lin-ES's members only ever differ along played
#: arms)
LIN_ES_DIAGNOSTIC = 0.5
#: an ordering ("a has larger regret than b") is decided when the means differ by this fraction
#: or the paired 95% CI excludes 0; otherwise it is "not decidable here"
ORDER_TOL = 0.10
#: "sublinear": the slope over the last 20% of rounds at most this fraction of the slope over the
#: first 20% after the warm-up.
SUBLINEAR_RATIO = 0.7


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes of one scale.

    Attributes:
      dim, num_arms: d and K of both environments (noise 0.5, unit theta* and arms).
      horizon, num_runs: T and the number of problem instances (one run each, paper: 10).
      warmup: tau, the G-optimal design warm-up of every GLM agent (per epoch for DT).
      first_epochs: T_0 of the DT variants (the paper's DT100 and DT300).
      lin_scales: the LinUCB / LinTS ``explore_scale`` grid.
      glm_scales: the UCB-GLM / GLM-TSL ``explore_scale`` grid.
      panels: which of :data:`PANELS` to run.
      chunk_size, num_records: runner options (see :func:`benchmarks.framework.run_options`).
    """

    dim: int
    num_arms: int
    horizon: int
    num_runs: int
    warmup: int
    first_epochs: tuple[int, ...] = (100, 300)
    lin_scales: tuple[float, ...] = (0.1, 0.3, 1.0)
    glm_scales: tuple[float, ...] = (0.01, 0.1, 0.5, 1.0)
    panels: tuple[str, ...] = ("linear", "logistic")
    chunk_size: int = 500
    num_records: int = 60


SCALES = {
    "tiny": Config(dim=3, num_arms=5, horizon=60, num_runs=4, warmup=10, first_epochs=(10, 20),
                   lin_scales=(0.3, 1.0), glm_scales=(0.1, 1.0), chunk_size=60,
                   num_records=20),
    # not on the command line: the sizes notebooks/anytime_glm.ipynb tells the story at
    "notebook": Config(dim=8, num_arms=16, horizon=1000, num_runs=8, warmup=100,
                       glm_scales=(0.01, 0.1, 1.0), panels=("logistic",), chunk_size=500,
                       num_records=40),
    "small": Config(dim=10, num_arms=20, horizon=2000, num_runs=10, warmup=200),
    "paper": Config(dim=20, num_arms=50, horizon=10_000, num_runs=10, warmup=500,
                    chunk_size=1000, num_records=100),
}


# ------------------------------------------------------------------------------------------------
# Agents (Sun et al. 2025, Sec. 7.2) and environments (Sec. 7.1).


def lin_env(config: Config):
    """The linear bandit: ``<x, theta*> + N(0, 0.5^2)``, unit theta* and arms, one arm set per
    run."""
    return jb.make_env("linear", dim=config.dim, num_arms=config.num_arms, noise_std=0.5)


def log_env(config: Config):
    """The logistic bandit: ``sigmoid(<x, theta*>) + N(0, 0.5^2)``, unit theta* and arms."""
    return jb.make_env("logistic", dim=config.dim, num_arms=config.num_arms, noise_std=0.5)


def lin_es(ensemble_size: int = 25, perturb_std: float = 0.1, reg: float = 1.0):
    """The paper's Lin-ES: m = 25, sigma_R = 0.1, lambda = 1, no initial perturbation."""
    return jb.make_agent("lin-es", ensemble_size=ensemble_size, perturb_std=perturb_std, reg=reg,
                         init_perturbation=False)


def glm_es(warmup: int, solver: str = "gd", ensemble_size: int = 10, perturb_std: float = 0.1,
           reg: float = 1.0):
    """The paper's GLM-ES: m = 10, sigma_R = 0.1, lambda = 1, ``warmup`` design rounds."""
    return jb.make_agent("glm-es", ensemble_size=ensemble_size, perturb_std=perturb_std, reg=reg,
                         warmup=warmup, solver=solver)


def glm_es_dt(warmup: int, solver: str = "gd", first_epoch: int = 100,
              growth: float = jb.agents.GOLDEN_GROWTH):
    """GLM-ES-DT: ``glm-es-dt`` (20 allocated members, m_e = ceil(2 ln L_e), sigma_R,e =
    0.02 ln L_e) with a warm-up of ``min(warmup, L_e)`` design rounds in every epoch."""
    inner = jb.make_agent("glm-es", ensemble_size=20, warmup=warmup, solver=solver)
    return jb.make_agent("glm-es-dt", agent=inner, first_epoch=first_epoch, growth=growth)


def dt_label(first_epoch: int) -> str:
    return f"DT{first_epoch}"


# ------------------------------------------------------------------------------------------------
# Panels: a panel is an environment and entries; an entry is one agent, run once, or swept over
# one numeric field in one compiled program (the values either tuned, or each its own curve).


@dataclasses.dataclass(frozen=True)
class Entry:
    """One agent of a panel.

    Attributes:
      label: the legend and table label.
      agent: the agent.
      field / values: a numeric field swept in one program (``None``: a single run).
      tune: keep only the value with the lowest mean final regret for the plot (a baseline's
        exploration scale); otherwise every value is its own curve (``value_labels``).
      value_labels: the curve labels of the values when not tuned.
      kind: ``"es"`` (the paper's method), ``"dt"`` (its anytime variants), ``"variant"`` (a
        diagnostic setting of the method) or ``"baseline"``.
      value_kinds: per-value kinds when not tuned (default: ``kind`` for all).
    """

    label: str
    agent: Any
    field: str | None = None
    values: tuple = ()
    tune: bool = False
    value_labels: tuple[str, ...] = ()
    kind: str = "baseline"
    value_kinds: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Panel:
    """An environment and its entries; ``reference`` labels the ES curve others are compared to."""

    title: str
    env: Any
    entries: tuple[Entry, ...]
    reference: str
    warmup: int = 0


def lin_panel(config: Config, solver: str = "gd") -> Panel:
    """The linear panel: Lin-ES, Lin-ES-DT, tuned LinUCB and LinTS."""
    ridge = {"reg": 1.0, "noise_std": 0.5}
    return Panel(
        title="linear bandit", env=lin_env(config), reference="Lin-ES",
        entries=(
            Entry("Lin-ES", lin_es(), "perturb_std", (0.1, LIN_ES_DIAGNOSTIC),
                  value_labels=("Lin-ES", f"Lin-ES (sigma_R={LIN_ES_DIAGNOSTIC:g})"),
                  value_kinds=("es", "variant"), kind="es"),
            Entry("Lin-ES-DT", jb.make_agent("lin-es-dt"), "first_epoch", config.first_epochs,
                  value_labels=tuple(f"Lin-ES-{dt_label(t)}" for t in config.first_epochs),
                  kind="dt"),
            Entry("LinUCB", jb.make_agent("lin-ucb", **ridge), "explore_scale", config.lin_scales,
                  tune=True),
            Entry("LinTS", jb.make_agent("lin-ts", **ridge), "explore_scale", config.lin_scales,
                  tune=True),
        ))


def log_panel(config: Config, solver: str = "gd") -> Panel:
    """The logistic panel: GLM-ES, GLM-ES-DT100/300, tuned UCB-GLM and GLM-TSL (same warm-up and
    solver)."""
    tau = config.warmup
    glm = {"warmup": tau, "reg": 1.0, "solver": solver}
    return Panel(
        title="logistic bandit", env=log_env(config), reference="GLM-ES", warmup=tau,
        entries=(
            Entry("GLM-ES", glm_es(tau, solver), kind="es"),
            Entry("GLM-ES-DT", glm_es_dt(tau, solver), "first_epoch", config.first_epochs,
                  value_labels=tuple(f"GLM-ES-{dt_label(t)}" for t in config.first_epochs),
                  kind="dt"),
            Entry("UCB-GLM", jb.make_agent("ucb-glm", **glm), "explore_scale",
                  config.glm_scales, tune=True),
            Entry("GLM-TSL", jb.make_agent("glm-tsl", **glm), "explore_scale",
                  config.glm_scales, tune=True),
        ))


#: panel name (the environment's, as the paper names its bandits in Sun et al. 2025, Sec. 7.1) ->
#: builder ``(config, solver) -> Panel``. The neural reproduction has "distance" and "quadratic"
#: (Neural-ES, Neural-ES-DT, Neural-UCB/TS; ``neural_fig1.PANELS``).
PANELS: dict[str, Callable[[Config, str], Panel]] = {"linear": lin_panel, "logistic": log_panel}


def builders(table: dict[str, Callable], names: Sequence[str] | str) -> dict[str, Callable]:
    """``{name: builder}`` of the panels ``names`` (a configuration's ``panels``; one name alone,
    as ``--set panels=logistic`` gives it, is one panel) in ``table``.

    Raises:
      ValueError: a name that is not a panel of ``table``.
    """
    names = (names,) if isinstance(names, str) else tuple(names)
    unknown = [name for name in names if name not in table]
    if unknown:
        raise ValueError(f"no panel {', '.join(map(repr, unknown))}; the panels are "
                         f"{', '.join(map(repr, table))} (--set 'panels=[\"NAME\", ...]')")
    return {name: table[name] for name in names}


@dataclasses.dataclass
class PanelResult:
    """What a panel produced.

    Attributes:
      panel: the panel.
      curves: ``{label: Result}`` of the plotted curves (tuned baselines at their best value).
      rows: ``[(label, setting, Result, kind, chosen)]`` for every configuration run.
      tuned: ``{entry label: best value}``.
      kinds: ``{curve label: entry kind}``.
    """

    panel: Panel
    curves: dict[str, Result]
    rows: list[tuple[str, str, Result, str, bool]]
    tuned: dict[str, Any]
    kinds: dict[str, str]


def run_options(config: Config, warmup: int = 0, progress: bool | None = False) -> dict:
    """Shape-stable runner options; the checkpoints of :func:`slope_ratio` are recorded."""
    return C.run_options(config.horizon, config.chunk_size, config.num_records,
                         include=(warmup, *checkpoints(config.horizon, warmup)),
                         progress=progress)


def checkpoints(horizon: int, warmup: int) -> tuple[int, int, int]:
    """``(w1, w2, T)``: the end of the first 20% of the rounds after the warm-up, the start of the
    last 20%, and T."""
    span = max(int(0.2 * (horizon - warmup)), 1)
    return warmup + span, horizon - span, horizon


def run_entry(env, entry: Entry, key: jax.Array, config: Config,
              options: dict) -> dict[Any, Result]:
    """``{value: Result}`` (``{None: Result}`` for a single run) with common random numbers."""
    if entry.field is None:
        return {None: jb.compare(env, {entry.label: entry.agent}, key, config.horizon,
                                 config.num_runs, **options)[entry.label]}
    results = jb.sweep(env, entry.agent, key, {entry.field: list(entry.values)}, config.horizon,
                       config.num_runs, **options)
    return dict(zip(entry.values, results.values(), strict=True))


def run_panel(panel: Panel, key: jax.Array, config: Config,
              progress: bool | None = False) -> PanelResult:
    """Runs every entry of ``panel`` (one compiled program per entry) on the same instances."""
    options = run_options(config, panel.warmup, progress)
    curves: dict[str, Result] = {}
    rows: list[tuple[str, str, Result, str, bool]] = []
    tuned: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    for entry in panel.entries:
        by_value = run_entry(panel.env, entry, key, config, options)
        if entry.field is None:
            curves[entry.label] = by_value[None]
            kinds[entry.label] = entry.kind
            rows.append((entry.label, "paper defaults", by_value[None], entry.kind, True))
            continue
        if entry.tune:
            best = min(by_value, key=lambda v: float(C.final_regret(by_value[v]).mean()))
            tuned[entry.label] = best
            label = f"{entry.label} ({entry.field}={best:g}, tuned)"
            curves[label], kinds[label] = by_value[best], entry.kind
            for value, result in by_value.items():
                rows.append((entry.label, f"{entry.field} = {value:g}", result, entry.kind,
                             value == best))
        else:
            value_kinds = entry.value_kinds or (entry.kind,) * len(entry.values)
            for label, kind, (value, result) in zip(entry.value_labels, value_kinds,
                                                    by_value.items(), strict=True):
                curves[label], kinds[label] = result, kind
                rows.append((label, f"{entry.field} = {value:g}", result, kind, True))
    return PanelResult(panel, curves, rows, tuned, kinds)


# ------------------------------------------------------------------------------------------------
# Comparisons shared by the three anytime scripts.


def mean_final(result: Result) -> float:
    return float(C.final_regret(result).mean())


def not_worse(a: Result, b: Result, tol: float = NOT_WORSE_TOL) -> tuple[bool | None, str]:
    """Whether ``a`` is competitive with ``b`` (not clearly worse): True when
    ``mean(a) <= (1 + tol) mean(b)``; False when ``a`` is worse by more than that and the paired
    95% CI of ``a - b`` excludes 0; None (not decidable here) otherwise."""
    fa, fb = C.final_regret(a), C.final_regret(b)
    gap, half = C.paired_gap(fa, fb)
    rel = fa.mean() / max(fb.mean(), 1e-12) - 1
    evidence = (f"{fa.mean():.1f} vs {fb.mean():.1f} ({100 * rel:+.0f}%), paired gap "
                f"{gap:+.1f} ± {half:.1f}")
    if rel <= tol:
        return True, evidence
    return (False if gap - half > 0 else None), evidence


def close(a: Result, b: Result, tol: float = CLOSE_TOL) -> tuple[bool, str]:
    """The mean final regrets of ``a`` and ``b`` are within ``tol`` of their average."""
    fa, fb = C.final_regret(a), C.final_regret(b)
    avg = 0.5 * (fa.mean() + fb.mean())
    rel = abs(fa.mean() - fb.mean()) / max(avg, 1e-12)
    gap, half = C.paired_gap(fa, fb)
    return bool(rel <= tol), (f"{fa.mean():.1f} vs {fb.mean():.1f}: {100 * rel:.0f}% apart "
                              f"(tolerance {100 * tol:.0f}%), paired gap {gap:+.1f} ± {half:.1f}")


def worse_than(a: Result, b: Result, tol: float = ORDER_TOL) -> tuple[bool | None, str]:
    """Whether ``a`` has larger final regret than ``b``: True when its mean is larger by at least
    ``tol`` (relative) or the paired 95% CI of ``a - b`` excludes 0; False for the same the other
    way round; None (not decidable) when the means are within ``tol`` and the CI covers 0."""
    fa, fb = C.final_regret(a), C.final_regret(b)
    return ordering(fa.mean(), fb.mean(), C.paired_gap(fa, fb), tol)


def ordering(a: float, b: float, gap: tuple[float, float] | None = None,
             tol: float = ORDER_TOL) -> tuple[bool | None, str]:
    """The three-way verdict of "``a`` is larger than ``b``" (see :func:`worse_than`), from the
    two means and optionally the paired gap ``(mean, 95% half-width)`` of ``a - b``."""
    rel = (a - b) / max(abs(b), 1e-12)
    mean_gap, half = gap if gap is not None else (a - b, math.inf)
    evidence = f"{a:.3g} vs {b:.3g} ({100 * rel:+.0f}%"
    evidence += f", paired gap {mean_gap:+.3g} ± {half:.3g})" if gap is not None else ")"
    if rel >= tol or mean_gap - half > 0:
        return True, evidence
    if rel <= -tol or mean_gap + half < 0:
        return False, evidence
    return None, evidence


def all_of(verdicts: Sequence[bool | None]) -> bool | None:
    """True if all are True, False if any is False, else None (not decidable)."""
    if any(v is False for v in verdicts):
        return False
    return True if all(v is True for v in verdicts) else None


def regret_at(result: Result, step: int) -> np.ndarray:
    """``(runs,)`` cumulative regret at a recorded ``step`` (0 before the first round)."""
    return np.zeros(result.num_runs) if step <= 0 else C.final_regret(result, step)


def slope_ratio(result: Result, warmup: int) -> float:
    """Mean regret slope over the last 20% of the rounds over that of the first 20% after the
    warm-up (below 1 is sublinear)."""
    w1, w2, horizon = checkpoints(result.horizon, warmup)
    first = (regret_at(result, w1) - regret_at(result, warmup)).mean() / (w1 - warmup)
    last = (regret_at(result, horizon) - regret_at(result, w2)).mean() / (horizon - w2)
    return float(last / first) if first > 0 else math.inf


# ------------------------------------------------------------------------------------------------
# Drawing.

STYLES = {"es": {"color": "0.35", "linestyle": "--", "linewidth": 2.0},
          "dt": {"linestyle": "--"}, "variant": {"color": "0.6", "linestyle": ":"},
          "baseline": {"linestyle": "-"}}


def draw_curves(ax, curves: dict[str, Result], kinds: dict[str, str], title: str,
                warmup: int = 0) -> None:
    """Mean cumulative regret with 95% bands; ES gray dashed and DT dashed, as in the paper."""
    for label, result in curves.items():
        style = dict(STYLES[kinds.get(label, "baseline")])
        steps = np.asarray(result.steps)
        (line,) = ax.plot(steps, result.mean("regret"), label=label, **style)
        if result.num_runs > 1:
            lower, upper = result.confidence_band("regret")
            ax.fill_between(steps, lower, upper, color=line.get_color(), alpha=0.15, linewidth=0)
    if warmup:
        ax.axvline(warmup, color="0.6", linewidth=0.8, linestyle=":")
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)


# ------------------------------------------------------------------------------------------------
# Tables and claims.


def panel_table(result: PanelResult, config: Config) -> C.Table:
    """Every configuration of a panel: final regret (mean ± 95% CI), its spread, the paired gap
    to the panel's ES, and the run time."""
    panel = result.panel
    reference = C.final_regret(result.curves[panel.reference])
    table = C.Table(
        f"{panel.title}: final regret at T = {config.horizon}",
        ["agent", "setting", "final regret (mean ± 95% CI)", "sd over runs",
         f"gap to {panel.reference} (paired)", "run s"],
        note=(f"{config.num_runs} instances (common random numbers), d = {config.dim}, "
              f"K = {config.num_arms}, noise 0.5"
              + (f", warm-up tau = {panel.warmup}" if panel.warmup else "")
              + ". * marks the tuned value of a baseline's grid (plotted). Run s: seconds of "
              "running for all runs, compilation excluded (a sweep's time is split evenly "
              "over its points)."))
    for label, setting, res, _, chosen in result.rows:
        final = C.final_regret(res)
        gap = "—" if label == panel.reference else C.fmt_ci(final - reference)
        tuned = any(label == e.label and e.tune for e in panel.entries)
        table.add(label, setting + (" *" if tuned and chosen else ""), C.fmt_ci(final),
                  f"{final.std(ddof=1) if final.size > 1 else 0.0:.1f}", gap,
                  f"{res.wall_time:.1f}")
    return table


def best_baseline(result: PanelResult) -> tuple[str, Result]:
    """The tuned baseline with the lowest mean final regret."""
    baselines = {label: res for label, res in result.curves.items()
                 if result.kinds[label] == "baseline"}
    label = min(baselines, key=lambda k: mean_final(baselines[k]))
    return label, baselines[label]


def check_claims(results: dict[str, PanelResult],
                 figure: str = "Fig. 1") -> list[tuple[str, bool | None, str]]:
    claims: list[tuple[str, bool | None, str]] = []
    names = {"linear": "Lin-ES", "logistic": "GLM-ES"}
    for name, result in results.items():
        title = f"the {result.panel.title}"
        es_label = result.panel.reference
        es = result.curves[es_label]
        base_label, base = best_baseline(result)
        ok, evidence = not_worse(es, base)
        variants = [label for label, kind in result.kinds.items() if kind == "variant"]
        for variant in variants:
            evidence += (f"; diagnostic {variant}: "
                         f"{not_worse(result.curves[variant], base)[1].split(',')[0]}")
        claims.append((f"[{figure}] {names.get(name, es_label)} is competitive with the best "
                       f"tuned baseline on {title} (not clearly worse)", ok,
                       f"{es_label} vs {base_label}: {evidence}"))
        ratio = slope_ratio(es, result.panel.warmup)
        claims.append((f"[{figure}] {es_label}'s regret on {title} is sublinear (late slope <= "
                       f"{SUBLINEAR_RATIO:g} x early slope after the warm-up)",
                       ratio <= SUBLINEAR_RATIO, f"slope ratio {ratio:.2f}"))
        dts = [label for label, kind in result.kinds.items() if kind == "dt"]
        if len(dts) >= 2:
            ok, evidence = close(result.curves[dts[0]], result.curves[dts[1]])
            claims.append((f"[{figure}] {dts[0]} and {dts[1]} end close to each other on "
                           f"{title}", ok, evidence))
        for dt in dts:
            ok, evidence = not_worse(result.curves[dt], es)
            claims.append((f"[{figure}] {dt} is competitive with {es_label} on {title} (not "
                           "clearly worse)", ok, evidence))
    return claims


# ------------------------------------------------------------------------------------------------
# Main.


def parse_args(name: str, doc: str, argv: Sequence[str] | None) -> argparse.Namespace:
    """The shared command line plus ``--solver {gd,newton}`` (the GLM agents' solver)."""
    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--solver", choices=SOLVERS, default="gd")
    argv = list(sys.argv[1:] if argv is None else argv)
    mine, rest = extra.parse_known_args(argv)
    args = C.parse_args(name, doc.splitlines()[0] + " Also: --solver {gd,newton} (default gd).",
                        rest)
    args.solver = mine.solver
    args.argv = argv
    return args


def run(config: Config, key: jax.Array, solver: str = "gd",
        progress: bool | None = False) -> dict[str, PanelResult]:
    """Runs the panels of ``config``: ``{name: PanelResult}``."""
    return {name: run_panel(builder(config, solver), key, config, progress)
            for name, builder in builders(PANELS, config.panels).items()}


def draw(results: dict[str, PanelResult], config: Config):
    fig, axes = C.new_figure(1, len(results), width=5.6, height=4.2)
    for ax, result in zip(axes[0], results.values(), strict=True):
        draw_curves(ax, result.curves, result.kinds,
                    f"{result.panel.title} (d = {config.dim}, K = {config.num_arms})",
                    result.panel.warmup)
    return fig


def main(argv: Sequence[str] | None = None, *, name: str = NAME, title: str = TITLE,
         scales: dict[str, Config] = SCALES, figure: str = "Fig. 1") -> C.Report:
    """Runs the reproduction at ``--scale`` and writes the PNG and the markdown report (the
    keywords: another figure of the same panels, e.g. ``anytime_fig4``)."""
    args = parse_args(name, __doc__, argv)
    config = C.configure(scales, args)
    out = C.output_dir(name, args.out)
    start = C.timer()
    print(f"{title}\nscale {args.scale}, solver {args.solver}: {config}", flush=True)
    results = run(config, jax.random.key(args.seed), args.solver,
                  progress=False if args.no_progress else None)

    png = C.save_figure(draw(results, config), out / f"{name}.png")
    tables = [panel_table(result, config) for result in results.values()]
    claims = check_claims(results, figure)
    seconds = C.timer() - start
    intro = (f"Scale `{args.scale}`, seed {args.seed}, GLM solver `{args.solver}`: d = "
             f"{config.dim}, K = {config.num_arms}, T = {config.horizon}, {config.num_runs} "
             f"instances, noise 0.5, unit theta* and arms. Lin-ES: m = 25, sigma_R = 0.1, "
             f"lambda = 1. GLM-ES: m = 10, sigma_R = 0.1, lambda = 1, tau = {config.warmup} "
             "G-optimal design rounds, 100 gd steps of 0.01 (mean loss, warm-started). DT: "
             "T_0 in {" + ", ".join(map(str, config.first_epochs)) + "}, b = 2.618, "
             "m_e = ceil(2 ln L_e), sigma_R,e = 0.02 ln L_e, warm-up min(tau, L_e) per epoch. "
             "Baselines (our choice, Sec. 7.2) tuned over their grid on these runs. "
             f"Sun et al. 2025, {figure}. Competitive = mean final regret at most "
             f"{100 * NOT_WORSE_TOL:.0f}% above the reference's (clearly worse: more than that "
             "and a paired 95% CI excluding 0; else not decidable); close = means within "
             f"{100 * CLOSE_TOL:.0f}%.")
    return C.finish(name, title, intro, tables, claims, png, out, args, seconds,
                    data={"results": results, "config": config, "solver": args.solver})


if __name__ == "__main__":
    main()
