"""Neural Logistic Bandits (Bae & Lee 2025): Figs. 7-9 and Table 2, the OBD replay sweeps.

Bae & Lee 2025, App. J.1: cumulative clicks against accepted events over the width m, kappa and
S (Figs. 7-9) and Table 2 with every row, m = 20 / 50 / 100 included. Setup:
docs/reproductions/bae-lee-2025.md::

    python -m benchmarks.reproduce neurallog_obd --scale small
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

import jaxbandits as jb
from benchmarks import framework as C
from benchmarks.neurallog_figs import LINEAR, ctr_table, make_agent, ts_on_top

NAME = "neurallog_obd"
TITLE = "Neural Logistic Bandits, Figs. 7-9 and Table 2: OBD replay over m, kappa and S"
LABELS = {"ncbf-ucb": "NCBF-UCB", "logistic-ucb-1": "Log-UCB-1", "ada-ofu-ecolog": "ada-OFU",
          "neurallog-ucb-1": "NL-UCB-1", "neurallog-ucb-2": "NL-UCB-2",
          "neurallog-ts-1": "NL-TS-1", "neurallog-ts-2": "NL-TS-2"}
KAPPA_FREE = ("NL-UCB-2", "NL-TS-2", "ada-OFU")
#: sweep -> (figure, the agent field)
SWEEPS = {"m": ("Fig. 7", "width"), "kappa": ("Fig. 8", "kappa"), "S": ("Fig. 9", "param_bound")}


@dataclasses.dataclass(frozen=True)
class Config:
    """Logged events, runs, agents, the sweeps of :data:`SWEEPS` and their values (the first
    ones the shared default row), the campaign and the buffer (2,500 holds every accepted event
    of 10,000)."""

    horizon: int
    num_runs: int
    agents: tuple[str, ...] = tuple(LABELS)
    sweeps: tuple[str, ...] = tuple(SWEEPS)
    widths: tuple[int, ...] = (20, 50, 100)
    kappas: tuple[float, ...] = (50.0, 100.0, 200.0)
    bounds: tuple[float, ...] = (1.0, 10.0, 100.0)
    campaign: str = "all"
    buffer_size: int = 2500
    chunk_size: int = 1000
    num_records: int = 30


SCALES = {
    "tiny": Config(horizon=200, num_runs=2, agents=("logistic-ucb-1", "neurallog-ucb-2"),
                   widths=(8, 12), kappas=(50.0, 100.0), bounds=(1.0, 10.0), buffer_size=64,
                   chunk_size=200, num_records=10),
    "small": Config(horizon=10_000, num_runs=3),
    "paper": Config(horizon=10_000, num_runs=5, num_records=60),
}


def experiments(c: Config) -> dict[str, C.Experiment]:
    """One experiment per sweep (``grid``: that sweep's field), all at the default row."""
    env, _ = C.user_data(lambda: jb.make_env("obd-replay", campaign=c.campaign), None,
                         "the OBD replay")
    if env is None:
        return {}
    options = C.run_options(c.horizon, c.chunk_size, c.num_records, block_runs=c.num_runs)
    agents = {LABELS[n]: make_agent(n, c, c.buffer_size, c.widths[0], kappa=c.kappas[0],
                                    param_bound=c.bounds[0]) for n in c.agents}
    grids = {"m": c.widths, "kappa": c.kappas, "S": c.bounds}
    linear = {LABELS[n] for n in LINEAR}
    return {s: C.Experiment(env, {k: a for k, a in agents.items() if s != "m" or k not in linear},
                            c.horizon, c.num_runs, grid={SWEEPS[s][1]: grids[s]},
                            options=options)
            for s in c.sweeps}


def rows(panels, c: Config) -> dict[tuple[str, float], dict[str, object]]:
    """Table 2's rows: ``{(sweep, value): {label: Result}}`` (the m rows of the linear agents
    are their default run)."""
    out = {}
    for sweep, by_label in panels.items():
        for label, by_value in by_label.items():
            for value, result in by_value.items():
                out.setdefault((sweep, value), {})[label] = result
    default = out.get(("kappa", c.kappas[0]), {})
    for w in c.widths if "m" in panels else ():
        out[("m", w)] = {k: out[("m", w)].get(k, default[k]) for k in default}
    return out


def claims(panels, c: Config) -> list[tuple[str, bool | None, str]]:
    if "kappa" not in panels:
        return []
    by_kappa = panels["kappa"]
    present = [k for k in KAPPA_FREE if k in by_kappa]
    same = [k for k in present if all(
        np.array_equal(r.cumulative_reward, by_kappa[k][c.kappas[0]].cumulative_reward)
        and np.array_equal(r.accepted, by_kappa[k][c.kappas[0]].accepted)
        for r in by_kappa[k].values())]
    out = [("[Table 2] NL-UCB-2, NL-TS-2 and ada-OFU-ECOLog do not depend on kappa",
            same == present, f"bit-identical across kappa: {same} of {present}")]
    ts = [k for k in by_kappa if "TS" in k]
    if not ts:
        return out
    return [("[Table 2] a NeuralLog-TS agent has the highest CTR in every row",
             *ts_on_top(rows(panels, c).values(), ts)), *out]


def tables(panels, c: Config) -> list[C.Table]:
    return [ctr_table(f"Table 2: final CTR after {c.horizon} logged events (mean over "
                      f"{c.num_runs} runs)", rows(panels, c), [LABELS[n] for n in c.agents],
                      "Clicks over accepted events. The paper's CTRs are .0013-.0052.")]


def draw(panels, c: Config):
    """Figs. 7-9: mean cumulative clicks against mean accepted events, one axes per value."""
    by_row = rows(panels, c)
    fig, axes = C.new_figure(len(SWEEPS), max(len(c.widths), len(c.kappas), len(c.bounds)),
                             width=4.2, height=3.2)
    for i, sweep in enumerate(SWEEPS):
        keys = [k for k in by_row if k[0] == sweep]
        for j, ax in enumerate(axes[i]):
            if j >= len(keys):
                ax.set_visible(False)
                continue
            for label, r in by_row[keys[j]].items():
                ax.plot(r.mean("accepted"), r.mean("reward"), label=label)
            ax.set(title=f"{SWEEPS[sweep][0]}: {sweep} = {keys[j][1]:g}",
                   xlabel="accepted events", ylabel="cumulative clicks")
            ax.legend(fontsize=6)
    return fig


def body(r: C.Run) -> C.Page:
    c = r.config
    panels = C.run_experiments(r, experiments(c))
    return C.Page(draw(panels, c), tables(panels, c), claims(panels, c), (
        f"OBD random/{c.campaign}, {c.horizon} logged events x {c.num_runs} runs; defaults m = "
        f"{c.widths[0]}, kappa = {c.kappas[0]:g}, S = {c.bounds[0]:g}."),
        {"panels": panels, "config": c})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
