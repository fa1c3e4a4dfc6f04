"""Anytime ensemble sampling (Sun, Wang & Xu), Figure 1: the linear and logistic bandits, with DT.

Sun et al. 2025, Fig. 1 (Sec. 7.1-7.2): Lin-ES (and a diagnostic sigma_R = 0.5) and GLM-ES with
their DT100 / DT300 variants against LinUCB / LinTS and UCB-GLM / GLM-TSL, each baseline's
exploration scale tuned by one ``jb.sweep``; setup and evidence: docs/reproductions/sun-2025.md.
``--solver gd|newton`` sets every GLM agent's solver, ``--set 'panels=["logistic"]'`` one panel::

    python -m benchmarks.anytime_fig1                   # small: d = 10, K = 20, T = 2,000
    python -m benchmarks.anytime_fig1 --scale paper     # d = 20, K = 50, T = 10,000 (a GPU)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import jaxbandits as jb
from benchmarks import framework as C
from jaxbandits import Result

NAME = "anytime_fig1"
TITLE = ("Anytime ensemble sampling, Figure 1: the linear and logistic bandits, with the "
         "doubling-trick variants")
OPTIONS = {"--solver": {"choices": ("gd", "newton"), "default": "gd",
                        "help": "every GLM agent's solver (default gd, the paper's)"}}
LIN_ES_DIAGNOSTIC = 0.5  # the diagnostic Lin-ES's sigma_R: the noise std
#: "sublinear": the slope over the last 20% of rounds at most this fraction of the slope over the
#: first 20% after the warm-up
SUBLINEAR_RATIO = 0.7


@dataclasses.dataclass(frozen=True)
class Sizes:
    """The bandits' d and K, T, instances (one run each), the design warm-up tau of every GLM
    agent (per epoch for DT) and runner options: what Figures 1-3 share."""

    dim: int
    num_arms: int
    horizon: int
    num_runs: int
    warmup: int
    chunk_size: int = 500
    num_records: int = 60


#: the sizes of each scale ("notebook", not on the command line: notebooks/anytime_glm.ipynb's)
SIZES = {"tiny": {"dim": 3, "num_arms": 5, "horizon": 60, "num_runs": 4, "warmup": 10,
                  "chunk_size": 60, "num_records": 20},
         "notebook": {"dim": 8, "num_arms": 16, "horizon": 1000, "num_runs": 8, "warmup": 100,
                      "num_records": 40},
         "small": {"dim": 10, "num_arms": 20, "horizon": 2000, "num_runs": 10, "warmup": 200},
         "paper": {"dim": 20, "num_arms": 50, "horizon": 10_000, "num_runs": 10, "warmup": 500,
                   "chunk_size": 1000, "num_records": 100}}


def make_scales(config: type, **extra: dict) -> dict:
    """``{scale: config(**SIZES[scale], **extra[scale])}``."""
    return {scale: config(**sizes, **extra.get(scale, {})) for scale, sizes in SIZES.items()}


def setup(config: Sizes, solver: str) -> str:
    """The report's sizes."""
    return (f"GLM solver `{solver}`, d = {config.dim}, K = {config.num_arms}, T = "
            f"{config.horizon}, {config.num_runs} instances, tau = {config.warmup}")


@dataclasses.dataclass(frozen=True)
class Config(Sizes):
    """:class:`Sizes`, the DT variants' T_0, the LinUCB / LinTS and UCB-GLM / GLM-TSL
    ``explore_scale`` grids and the panels run."""

    first_epochs: tuple[int, ...] = (100, 300)
    lin_scales: tuple[float, ...] = (0.1, 0.3, 1.0)
    glm_scales: tuple[float, ...] = (0.01, 0.1, 0.5, 1.0)
    panels: tuple[str, ...] = ("linear", "logistic")


SCALES = make_scales(Config, tiny={"first_epochs": (10, 20), "lin_scales": (0.3, 1.0),
                                   "glm_scales": (0.1, 1.0)},
                     notebook={"glm_scales": (0.01, 0.1, 1.0), "panels": ("logistic",)})


def bandit(config: Sizes, name: str = "logistic"):
    """The bandit ``name`` (the logistic or the linear one) at d, K with N(0, 0.5^2) noise."""
    return jb.make_env(name, dim=config.dim, num_arms=config.num_arms, noise_std=0.5)


def glm_es(warmup: int, solver: str = "gd", ensemble_size: int = 10):
    """The paper's GLM-ES: m = 10, sigma_R = 0.1, lambda = 1, ``warmup`` design rounds."""
    return jb.make_agent("glm-es", ensemble_size=ensemble_size, perturb_std=0.1, reg=1.0,
                         warmup=warmup, solver=solver)


def glm_es_dt(warmup: int, solver: str = "gd"):
    """GLM-ES-DT: 20 allocated members and a warm-up of ``min(warmup, L_e)`` rounds an epoch."""
    inner = jb.make_agent("glm-es", ensemble_size=20, warmup=warmup, solver=solver)
    return jb.make_agent("glm-es-dt", agent=inner, first_epoch=100,
                         growth=jb.agents.GOLDEN_GROWTH)


def dt_entry(prefix: str, agent, config) -> C.Entry:
    return C.Entry(f"{prefix}-DT", agent, "first_epoch", config.first_epochs, kind="dt",
                   value_labels=tuple(f"{prefix}-DT{t}" for t in config.first_epochs))


def tuned(label: str, agent, scales) -> C.Entry:
    return C.Entry(label, agent, "explore_scale", scales, tune=True)


def lin_panel(config: Config, solver: str = "gd") -> C.Panel:
    """Lin-ES (and the diagnostic sigma_R), Lin-ES-DT, tuned LinUCB and LinTS."""
    lin_es = jb.make_agent("lin-es", ensemble_size=25, perturb_std=0.1, reg=1.0,
                           init_perturbation=False)
    ridge = {"reg": 1.0, "noise_std": 0.5}
    return C.Panel("linear bandit", bandit(config, "linear"), (
        C.Entry("Lin-ES", lin_es, "perturb_std", (0.1, LIN_ES_DIAGNOSTIC), kind="es",
                value_labels=("Lin-ES", f"Lin-ES (sigma_R={LIN_ES_DIAGNOSTIC:g})"),
                value_kinds=("es", "variant")),
        dt_entry("Lin-ES", jb.make_agent("lin-es-dt"), config),
        tuned("LinUCB", jb.make_agent("lin-ucb", **ridge), config.lin_scales),
        tuned("LinTS", jb.make_agent("lin-ts", **ridge), config.lin_scales)), "Lin-ES")


def log_panel(config: Config, solver: str = "gd") -> C.Panel:
    """GLM-ES, GLM-ES-DT100/300, tuned UCB-GLM and GLM-TSL (same warm-up and solver)."""
    glm = {"warmup": config.warmup, "reg": 1.0, "solver": solver}
    return C.Panel("logistic bandit", bandit(config), (
        C.Entry("GLM-ES", glm_es(config.warmup, solver), kind="es"),
        dt_entry("GLM-ES", glm_es_dt(config.warmup, solver), config),
        tuned("UCB-GLM", jb.make_agent("ucb-glm", **glm), config.glm_scales),
        tuned("GLM-TSL", jb.make_agent("glm-tsl", **glm), config.glm_scales)), "GLM-ES",
        warmup=config.warmup)


#: panel name (the environment's) -> builder ``(config, solver) -> Panel``; the neural panels
#: are ``neural_fig1.PANELS``
PANELS: dict[str, Callable[[Config, str], C.Panel]] = {"linear": lin_panel, "logistic": log_panel}


def run(config: Config, key, solver: str = "gd", progress: bool | None = False
        ) -> dict[str, C.PanelResult]:
    """``{name: PanelResult}`` of the panels of ``config``."""
    return {name: C.run_panel(build(config, solver), key, config, progress)
            for name, build in C.builders(PANELS, config.panels).items()}


def slope_ratio(result: Result, warmup: int) -> float:
    """Mean regret slope over the last 20% of the rounds over that of the first 20% after the
    warm-up (below 1 is sublinear)."""
    w1, w2, horizon = C.checkpoints(result.horizon, warmup)
    first = (C.regret_at(result, w1) - C.regret_at(result, warmup)).mean() / (w1 - warmup)
    last = (C.regret_at(result, horizon) - C.regret_at(result, w2)).mean() / (horizon - w2)
    return float(last / first) if first > 0 else math.inf


def panel_table(result: C.PanelResult, config) -> C.Table:
    return C.panel_table(result, config, (
        f"{config.num_runs} instances (common random numbers), d = {config.dim}, "
        f"K = {config.num_arms}, noise 0.5"
        + (f", warm-up tau = {result.panel.warmup}" if result.panel.warmup else "") + "."))


def check_claims(results: dict[str, C.PanelResult],
                 figure: str = "Fig. 1") -> list[tuple[str, bool | None, str]]:
    """Fig. 1's claims on each panel: the method competitive with the best tuned baseline, its
    regret sublinear, the DT variants close to each other and competitive with it."""
    claims = []
    for result in results.values():
        title, es_label = f"the {result.panel.title}", result.panel.reference
        es, kinds = result.curves[es_label], result.kinds
        baselines = {k: r for k, r in result.curves.items() if kinds[k] == "baseline"}
        base_label = min(baselines, key=lambda k: C.mean_final(baselines[k]))
        ok, evidence = C.not_worse(es, baselines[base_label])
        for variant in (k for k, kind in kinds.items() if kind == "variant"):
            text = C.not_worse(result.curves[variant], baselines[base_label])[1]
            evidence += f"; diagnostic {variant}: {text.split(',')[0]}"
        claims.append((f"[{figure}] {es_label} is competitive with the best "
                       f"tuned baseline on {title} (not clearly worse)", ok,
                       f"{es_label} vs {base_label}: {evidence}"))
        ratio = slope_ratio(es, result.panel.warmup)
        claims.append((f"[{figure}] {es_label}'s regret on {title} is sublinear (late slope <= "
                       f"{SUBLINEAR_RATIO:g} x early slope after the warm-up)",
                       ratio <= SUBLINEAR_RATIO, f"slope ratio {ratio:.2f}"))
        dts = [k for k, kind in kinds.items() if kind == "dt"]
        if len(dts) >= 2:
            claims.append((f"[{figure}] {dts[0]} and {dts[1]} end close to each other on "
                           f"{title}", *C.close(result.curves[dts[0]], result.curves[dts[1]])))
        claims += [(f"[{figure}] {dt} is competitive with {es_label} on {title} (not clearly "
                    "worse)", *C.not_worse(result.curves[dt], es)) for dt in dts]
    return claims


def main(argv: Sequence[str] | None = None, *, name: str = NAME, title: str = TITLE,
         scales: dict[str, Config] = SCALES, figure: str = "Fig. 1") -> C.Report:
    """Runs the reproduction at ``--scale`` (the keywords: another figure of the same panels,
    e.g. ``anytime_fig4``)."""
    def body(r: C.Run) -> C.Page:
        config, solver = r.config, r.args.solver
        results = run(config, r.key, solver, r.progress)
        fig, axes = C.new_figure(1, len(results), width=5.6, height=4.2)
        for ax, res in zip(axes[0], results.values(), strict=True):
            C.draw_curves(ax, res.curves, res.kinds, f"{res.panel.title} (d = {config.dim}, "
                          f"K = {config.num_arms})", res.panel.warmup)
        intro = (f"{setup(config, solver)}, DT T_0 in {list(config.first_epochs)}. Sun et al. "
                 f"2025, {figure}. " + C.RULES)
        return C.Page(fig, [panel_table(res, config) for res in results.values()],
                      check_claims(results, figure), intro,
                      {"results": results, "config": config, "solver": solver})

    return C.script(name, title, scales, argv, body, doc=__doc__, options=OPTIONS)


if __name__ == "__main__":
    main()
