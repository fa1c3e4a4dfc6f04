"""The ordering of Oh et al. 2026, Fig. 2 (NVLDB below CoLSTIM, MaxPairUCB and uniform pairs) with
enough runs to decide.

``dueling_figs``'s Fig. 2 panel alone (cosine; paper: cosine and square), 20 runs per agent, with
its agents, verdicts and the best-distinct-pair floor of the same runs::

    python -m benchmarks.dueling_acceptance            # small: cosine; paper: cosine and square
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from benchmarks import dueling_figs as D
from benchmarks import framework as C

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


def body(r: C.Run) -> C.Page:
    config = r.config
    panels = D.run_figure2(config, r.key, r.progress)
    floors = {task: D.run_floor(config, r.key, task, config.dim, horizon, config.num_runs,
                                progress=r.progress) for task, horizon in config.tasks}
    table = C.Table("R(t)/t over the second half (mean ± 95% CI)", ["agent"] + [
        c for task, t in config.tasks for c in (f"{task}: R(t)/t at t = {t // 2}",
                                                f"{task}: at t = {t}")],
                    note=(f"{config.num_runs} runs, common random numbers, d = {config.dim}, K = "
                          f"{config.num_arms}, BTL; NVLDB: width {config.width}, lr "
                          f"{config.learning_rate:g}, self-duels forbidden. '{D.FLOOR}': the "
                          "lowest R(t)/t of an agent that never self-duels, on the same runs."))
    rows = {lbl: [panels[task].get(lbl) for task in panels]
            for lbl in dict.fromkeys(k for results in panels.values() for k in results)}
    for lbl, results in {**rows, D.FLOOR: list(floors.values())}.items():
        table.add(lbl, *[c for (task, t), res in zip(config.tasks, results, strict=True)
                         for c in ((D.fmt(D.average(res, t // 2)), D.fmt(D.average(res)))
                                   if res is not None else ("—", "—"))])
    fig, axes = C.new_figure(1, len(panels), width=5.5, height=4.0)
    for ax, (task, results) in zip(axes.flat, panels.items(), strict=True):
        D.draw_regret(ax, results, f"{task}: the acceptance ordering",
                      floor=(np.asarray(floors[task].steps), floors[task].mean()))
    tasks = ", ".join(f"{t} (T = {h})" for t, h in config.tasks)
    return C.Page(fig, [table], D.acceptance_claims(panels, config),
                  f"{tasks}, {config.num_runs} runs per agent (Oh et al. 2026, Fig. 2).",
                  {"panels": panels, "floors": floors, "config": config})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
