"""The ordering of Oh et al. 2026, Fig. 2 (NVLDB below CoLSTIM, MaxPairUCB and uniform pairs) with
enough runs to decide.

The claim: on ``dueling-square`` and ``dueling-cosine`` (d = K = 5, BTL, T = 2,000) every NVLDB
variant ends below CoLSTIM, MaxPairUCB and uniformly random pairs, and its R(t)/t decreases over
the second half. ``dueling_figs.py --scale small`` runs it inside Fig. 2 with 2 runs, which
decides square but not cosine; this script runs only that panel, with 20 runs per agent (the
paper's number of seeds) and runs vmapped in blocks of 10, so that it fits in a CPU session. The
agents, settings, statistics and verdicts are ``dueling_figs``'s (the appendix network: width
32, Adam lr 1e-2, 20 warm-started steps a round; common random numbers, paired comparisons; an
ordering is decided when the means differ by 10% or the paired 95% CI excludes 0; "decreasing"
holds when the mean change of R(t)/t from T/2 to T is <= 0 and fails when its whole 95% CI is
above 0), beside the best-distinct-pair floor of the same runs.

Scales: ``small`` (cosine, the task ``dueling_figs`` left undecided; 20 runs), ``paper``
(cosine and square, 20 runs each), ``tiny`` for the tests. Run it from the repository root::

    python -m benchmarks.dueling_acceptance            # --scale small

It writes ``dueling_acceptance.png`` and ``dueling_acceptance.md`` into ``--out`` (default
``results/reproduce/dueling_acceptance/``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import jax
import numpy as np

from benchmarks import dueling_figs as D
from benchmarks import framework as C
from jaxbandits import Result

NAME = "dueling_acceptance"
TITLE = "Neural dueling bandits: the acceptance ordering on square and cosine, decided"

#: the acceptance agents only; the tables' horizons at T so that the buffers keep T pairs
_ACCEPTANCE = {"baselines": D.ACCEPTANCE, "ndb": (), "num_records": 20}
_T = {"e2_horizon": 2000, "e3_horizon": 2000, "block_runs": 10}
SCALES = {
    "tiny": dataclasses.replace(D.SCALES["tiny"], **_ACCEPTANCE, block_runs=2),
    "small": D.Config(num_runs=20, tasks=(("cosine", 2000),), **_ACCEPTANCE, **_T),
    "paper": D.Config(num_runs=20, tasks=(("cosine", 2000), ("square", 2000)), **_ACCEPTANCE,
                      **_T),
}


def run(config: D.Config, key: jax.Array, progress: bool | None = False
        ) -> tuple[dict[str, dict[str, Result]], dict[str, Result]]:
    """``(panels, floors)``: ``dueling_figs``'s Fig. 2 runs of the scale's tasks (``{task:
    {label: Result}}``) and each task's best-distinct-pair floor on the same runs."""
    panels = D.run_figure2(config, key, progress)
    floors = {task: D.run_floor(config, key, task, config.dim, horizon, config.num_runs,
                                progress=progress) for task, horizon in config.tasks}
    return panels, floors


def results_table(panels: dict[str, dict[str, Result]], floors: dict[str, Result],
                  config: D.Config) -> C.Table:
    """R(T/2)/(T/2) and R(T)/T (mean ± 95% CI) of every agent on every task."""
    columns = ["agent"]
    for task in panels:
        t = config.horizon(task)
        columns += [f"{task}: R(t)/t at t = {t // 2}", f"{task}: at t = {t}"]
    table = C.Table("R(t)/t over the second half (mean ± 95% CI)", columns,
                    note=(f"{config.num_runs} runs, common random numbers, d = {config.dim}, K = "
                          f"{config.num_arms}, BTL; NVLDB: width {config.width}, lr "
                          f"{config.learning_rate:g}, self-duels forbidden. '{D.FLOOR}': the "
                          "lowest R(t)/t of an agent that never self-duels, on the same runs."))
    labels = list(dict.fromkeys(k for results in panels.values() for k in results))
    rows = {lbl: [panels[task].get(lbl) for task in panels] for lbl in labels}
    rows[D.FLOOR] = list(floors.values())
    for lbl, results in rows.items():
        cells = []
        for task, result in zip(panels, results, strict=True):
            t = config.horizon(task)
            cells += ([D.fmt(D.average(result, t // 2)), D.fmt(D.average(result))]
                      if result is not None else ["—", "—"])
        table.add(lbl, *cells)
    return table


def draw(panels: dict[str, dict[str, Result]], floors: dict[str, Result]):
    """One panel per task: mean cumulative average regret with 95% bands and the floor."""
    fig, axes = C.new_figure(1, len(panels), width=5.5, height=4.0)
    for ax, (task, results) in zip(axes.flat, panels.items(), strict=True):
        floor = floors[task]
        D.draw_regret(ax, results, f"{task}: the acceptance ordering",
                      floor=(np.asarray(floor.steps), floor.mean()))
    return fig


def main(argv: Sequence[str] | None = None) -> C.Report:
    """Runs the acceptance panels at ``--scale`` and writes the PNG and the markdown report."""
    args = C.parse_args(NAME, __doc__.splitlines()[0], argv)
    config = C.configure(SCALES, args)
    out = C.output_dir(NAME, args.out)
    start = C.timer()
    print(f"{TITLE}\nscale {args.scale}: {config}", flush=True)
    panels, floors = run(config, jax.random.key(args.seed),
                         progress=False if args.no_progress else None)
    figure = C.save_figure(draw(panels, floors), out / f"{NAME}.png")
    claims = D.acceptance_claims(panels, config)
    tasks = ", ".join(f"{t} (T = {h})" for t, h in config.tasks)
    intro = (f"Scale `{args.scale}`, seed {args.seed}: {tasks}, {config.num_runs} runs per "
             "agent, the agents and verdicts of `dueling_figs.py` (Oh et al. 2026, Fig. 2).")
    return C.finish(NAME, TITLE, intro, [results_table(panels, floors, config)], claims, figure,
                    out, args, C.timer() - start,
                    data={"panels": panels, "floors": floors, "config": config})


if __name__ == "__main__":
    main()
