"""Anytime ensemble sampling (Sun, Wang & Xu), Figure 1 distance / quadratic and Figure 2(d).

Sun et al. 2025, Fig. 1 (Sec. 7.1-7.2): Neural-ES and Neural-ES-DT100 / DT300 against tuned
Neural-UCB / Neural-TS with ``anytime_fig1``'s panels and claims; Fig. 2(d): Neural-ES over a
(L, N) grid on the quadratic bandit::

    python -m benchmarks.neural_fig1                    # small: d = 8, K = 10, T = 600
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import jaxbandits as jb
from benchmarks import anytime_fig1 as A
from benchmarks import framework as C
from jaxbandits import Result

NAME = "neural_fig1"
TITLE = ("Anytime ensemble sampling, Figure 1 distance / quadratic bandits (Neural-ES, DT "
         "variants) and Figure 2(d) (network size)")


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes of one scale: d, K, T, instances, the networks' N and L (paper: 20, 3), the DT
    T_0, the Neural-UCB / TS ``explore_scale`` grid, the panels, Fig. 2(d)'s ``(L, N)`` grid;
    the warm-up tau = K (Neural-ES and its baselines pull each arm once)."""

    dim: int
    num_arms: int
    horizon: int
    num_runs: int
    width: int = 20
    depth: int = 3
    first_epochs: tuple[int, ...] = (100, 300)
    nn_scales: tuple[float, ...] = (0.001, 0.01, 0.1)
    panels: tuple[str, ...] = ("distance", "quadratic")
    nets: tuple[tuple[int, int], ...] = ((2, 10), (3, 10), (3, 20), (3, 50), (5, 20))
    chunk_size: int = 300
    num_records: int = 40


SCALES = {
    "tiny": Config(dim=4, num_arms=6, horizon=60, num_runs=2, width=8, first_epochs=(10, 20),
                   nn_scales=(0.01, 0.1), panels=("quadratic",), nets=((2, 8), (3, 8)),
                   chunk_size=60, num_records=15),
    # not on the command line: the sizes notebooks/neural.ipynb tells the story at
    "notebook": Config(dim=6, num_arms=8, horizon=200, num_runs=3, width=10, first_epochs=(50,),
                       nn_scales=(0.01, 0.1), panels=("quadratic",), nets=((2, 10), (3, 10)),
                       chunk_size=200, num_records=20),
    "small": Config(dim=8, num_arms=10, horizon=600, num_runs=4),
    "paper": Config(dim=20, num_arms=50, horizon=10_000, num_runs=10,
                    nets=((2, 10), (3, 10), (3, 20), (3, 50), (3, 100), (5, 20)),
                    chunk_size=1000, num_records=100),
}


def neural_es(config: Config, width: int | None = None, depth: int | None = None,
              ensemble_size: int = 10):
    """The paper's Neural-ES: m = 10, sigma_R = 0.1, lambda = 1, 100 gd steps of 0.01."""
    return jb.make_agent("neural-es", ensemble_size=ensemble_size, perturb_std=0.1, reg=1.0,
                         width=width or config.width, depth=depth or config.depth)


def neural_panel(name: str, config: Config) -> C.Panel:
    """Neural-ES, Neural-ES-DT (20 members, m_e = ceil(2 ln L_e)), tuned Neural-UCB / TS."""
    net = {"width": config.width, "depth": config.depth, "reg": 1.0}
    env = jb.make_env(name, dim=config.dim, num_arms=config.num_arms, noise_std=0.5)
    dt = jb.make_agent("neural-es-dt", agent=neural_es(config, ensemble_size=20))
    return C.Panel(f"{name} bandit", env, (
        C.Entry("Neural-ES", neural_es(config), kind="es"),
        A.dt_entry("Neural-ES", dt, config),
        A.tuned("Neural-UCB", jb.make_agent("neural-ucb", **net), config.nn_scales),
        A.tuned("Neural-TS", jb.make_agent("neural-ts", **net), config.nn_scales)),
        "Neural-ES", warmup=config.num_arms)


#: panel name -> builder ``(config, solver) -> Panel``, as ``anytime_fig1.PANELS``
PANELS: dict[str, Callable[[Config, str], C.Panel]] = {
    name: (lambda config, solver="gd", name=name: neural_panel(name, config))
    for name in ("distance", "quadratic")}


def net_label(depth: int, width: int) -> str:
    return f"L={depth}, N={width}"


def params(config: Config, depth: int, width: int) -> int:
    """d' = N d + N^2 (L - 2) + N (no biases)."""
    return width * config.dim + width * width * (depth - 2) + width


def run(config: Config, key, progress: bool | None = False
        ) -> tuple[dict[str, C.PanelResult], dict[tuple[int, int], Result]]:
    """``({name: PanelResult}, {(L, N): Result})``: the panels and Figure 2(d)'s grid (one
    compilation per (L, N); the baseline is the quadratic panel's Neural-ES)."""
    panels = {name: C.run_panel(build(config, "gd"), key, config, progress)
              for name, build in C.builders(PANELS, config.panels).items()}
    base = panels["quadratic"].curves["Neural-ES"] if "quadratic" in panels else None
    shared = (config.depth, config.width) if base is not None else None  # the Figure 1 run
    env = jb.make_env("quadratic", dim=config.dim, num_arms=config.num_arms, noise_std=0.5)
    grid = C.run_panel(C.Panel("Fig. 2(d)", env, tuple(
        C.Entry(net_label(d, n), neural_es(config, n, d)) for d, n in config.nets
        if (d, n) != shared), "", warmup=config.num_arms), key, config, progress)
    nets = {k: base if k == shared else grid.curves[net_label(*k)] for k in config.nets}
    return panels, nets


def nets_table(nets: dict[tuple[int, int], Result], config: Config) -> C.Table:
    base = nets.get((config.depth, config.width))
    return C.table(
        f"Figure 2(d), quadratic bandit: Neural-ES final regret at T = {config.horizon} by "
        "network size", ["(L, N)", "parameters d'", "final regret (mean ± 95% CI)",
                         "gap to baseline (paired)", "run s"],
        [(net_label(*k), params(config, *k), C.fmt_ci(C.final_regret(res)),
          "—" if base is None or k == (config.depth, config.width)
          else C.fmt_ci(C.final_regret(res) - C.final_regret(base)), f"{res.wall_time:.1f}")
         for k, res in nets.items()],
        f"Baseline L = {config.depth}, N = {config.width} (the Figure 1 Neural-ES). d' = N d + "
        f"N^2 (L - 2) + N (no biases). {config.num_runs} instances, common random numbers.")


def nets_claims(nets: dict[tuple[int, int], Result],
                config: Config) -> list[tuple[str, bool | None, str]]:
    """Sun et al. 2025, Fig. 2(d) (App. F): the smallest net is worst, large nets bring no
    significant gain, width helps more than depth (the widest net beats the deepest)."""
    base_key = (config.depth, config.width)
    if base_key not in nets or len(nets) < 2:
        return []
    base, claims = nets[base_key], []
    smallest = min(nets, key=lambda k: params(config, *k))
    if smallest != base_key:
        claims.append((f"[Fig. 2(d)] the smallest net ({net_label(*smallest)}) has larger "
                       f"regret than the baseline ({net_label(*base_key)}) on the quadratic "
                       "bandit", *C.worse_than(nets[smallest], base)))
    wide = [k for k in nets if k[0] == config.depth and k[1] > config.width]
    for k in wide:
        ok, evidence = C.worse_than(base, nets[k])  # True: the wider net gains clearly
        claims.append((f"[Fig. 2(d)] the wider net {net_label(*k)} brings no significant gain "
                       "over the baseline", ok is not True, evidence))
    deep = [k for k in nets if k[0] > config.depth and k[1] == config.width]
    if wide and deep:
        claims.append((f"[Fig. 2(d)] width helps more than depth: {net_label(*wide[0])} has "
                       f"lower regret than {net_label(*deep[0])}",
                       *C.worse_than(nets[deep[0]], nets[wide[0]])))
    return claims


def draw(panels: dict[str, C.PanelResult], nets: dict[tuple[int, int], Result], config: Config):
    fig, axes = C.new_figure(1, len(panels) + bool(nets), width=5.6, height=4.2)
    for ax, res in zip(axes[0], panels.values(), strict=False):
        C.draw_curves(ax, res.curves, res.kinds, f"{res.panel.title} (d = {config.dim}, "
                      f"K = {config.num_arms})", res.panel.warmup)
    if nets:
        base = (config.depth, config.width)
        C.draw_curves(axes[0][-1], {net_label(*k): res for k, res in nets.items()},
                      {net_label(*k): "baseline" if k == base else "dt" for k in nets},
                      "Fig. 2(d): quadratic bandit, Neural-ES by (L, N)", config.num_arms)
    return fig


def body(r: C.Run) -> C.Page:
    config = r.config
    panels, nets = run(config, r.key, r.progress)
    tables = [A.panel_table(res, config) for res in panels.values()]
    intro = (f"d = {config.dim}, K = {config.num_arms}, T = {config.horizon}, "
             f"{config.num_runs} instances; L = {config.depth}, N = {config.width}; DT T_0 in "
             f"{list(config.first_epochs)}; Neural-UCB / TS tuned over explore_scale in "
             f"{list(config.nn_scales)}. " + C.RULES)
    return C.Page(draw(panels, nets, config), tables + ([nets_table(nets, config)] if nets else []),
                  A.check_claims(panels) + nets_claims(nets, config), intro,
                  {"panels": panels, "nets": nets, "config": config})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
