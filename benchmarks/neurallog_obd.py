"""Neural Logistic Bandits (Bae & Lee): Figs. 7-9 and Table 2, the OBD replay sweeps.

Bae & Lee 2025, App. J.1: the uniform-random OBD log (``obd-replay``, ``campaign="all"``, the
paper's random/all split, read from ``$JAXBANDITS_DATA/obd``) replayed with K = 5 candidates
(the logged item and four by affinity); a round counts only when the agent picks the logged item
(about one in five), so ``horizon`` counts logged events and 10,000 of them give about the paper's
T = 2,000 accepted ones. The seven agents (NCBF-UCB, Logistic-UCB-1, ada-OFU-ECOLog,
NeuralLog-UCB-1/2, NeuralLog-TS-1/2; width m, updates every 50 accepted rounds, 100 gd steps of
0.01, default nu) over three sweeps around m = 20, kappa = 50, S = 1: **Fig. 7** the width m in
{20, 50, 100} (Table 2's m rows; the linear agents have no m: their row is the default run),
**Fig. 8** kappa in {50, 100, 200}, **Fig. 9** S in {1, 10, 100}. Each sweep value of kappa or S
is a number (one program per agent); each width is one program. Claims (Table 2): a TS agent has
the highest CTR in every row; NeuralLog-UCB-2, NeuralLog-TS-2 and ada-OFU-ECOLog do not use
kappa (the table's constant rows). Scales: ``small`` (10,000 logged events, 3 runs; 1,393 s of
CPU on the 2-core machine), ``paper`` (5 runs; a GPU), ``tiny`` for the tests::

    python -m benchmarks.reproduce neurallog_obd --scale small
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

import jaxbandits as jb
from benchmarks import framework as C

NAME = "neurallog_obd"
TITLE = "Neural Logistic Bandits, Figs. 7-9 and Table 2: OBD replay over m, kappa and S"
LABELS = {"ncbf-ucb": "NCBF-UCB", "logistic-ucb-1": "Log-UCB-1", "ada-ofu-ecolog": "ada-OFU",
          "neurallog-ucb-1": "NL-UCB-1", "neurallog-ucb-2": "NL-UCB-2",
          "neurallog-ts-1": "NL-TS-1", "neurallog-ts-2": "NL-TS-2"}
LINEAR = ("logistic-ucb-1", "ada-ofu-ecolog")
KAPPA_FREE = ("NL-UCB-2", "NL-TS-2", "ada-OFU")
#: sweep -> (figure, the agent field)
SWEEPS = {"m": ("Fig. 7", "width"), "kappa": ("Fig. 8", "kappa"), "S": ("Fig. 9", "param_bound")}


@dataclasses.dataclass(frozen=True)
class Config:
    """Logged events replayed, runs, agents (registry names), the sweeps run (of
    :data:`SWEEPS`) and their values (the first ones are the shared default row), the campaign,
    the agents' buffer (only accepted rounds enter it, about a fifth of the events: 2,500 keeps
    all of 10,000 events) and runner options."""

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

    def agent(name):
        width = {} if name in LINEAR else {"width": c.widths[0]}
        return jb.make_agent(name, buffer_size=c.buffer_size, update_every=50, kappa=c.kappas[0],
                             param_bound=c.bounds[0], **width)

    agents = {LABELS[n]: agent(n) for n in c.agents}
    grids = {"m": c.widths, "kappa": c.kappas, "S": c.bounds}
    linear = {LABELS[n] for n in LINEAR}
    return {s: C.Experiment(env, {k: a for k, a in agents.items() if s != "m" or k not in linear},
                            c.horizon, c.num_runs, grid={SWEEPS[s][1]: grids[s]},
                            options=options)
            for s in c.sweeps}


def ctr(result) -> np.ndarray:
    """``(runs,)`` the final CTR: clicks over accepted events."""
    return (np.asarray(result.cumulative_reward[:, -1], np.float64)
            / np.maximum(np.asarray(result.accepted[:, -1], np.float64), 1.0))


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
    if not any("TS" in k for k in by_kappa):
        return out
    tops, failed = 0, []
    for by_label in rows(panels, c).values():
        means = {k: ctr(r).mean() for k, r in by_label.items()}
        ts = max((k for k in means if "TS" in k), key=means.get)
        other = max((k for k in means if "TS" not in k), key=means.get)
        if means[ts] >= means[other]:
            tops += 1
        else:  # the other agent's CTR significantly above the best TS agent's
            a, b = ctr(by_label[other]), ctr(by_label[ts])
            failed.append(C.ordering(a.mean(), b.mean(), C.paired_gap(a, b), math.inf)[0])
    return [("[Table 2] a NeuralLog-TS agent has the highest CTR in every row",
             True if not failed else (False if any(failed) else None),
             f"a TS agent highest in {tops} of {tops + len(failed)} rows; significantly below "
             f"another agent in {sum(map(bool, failed))}"), *out]


def tables(panels, c: Config) -> list[C.Table]:
    labels = [LABELS[n] for n in c.agents]
    table = C.Table(f"Table 2: final CTR after {c.horizon} logged events (mean over "
                    f"{c.num_runs} runs)", ["sweep", *labels, "accepted"],
                    note="Clicks over accepted events; about a fifth of the events are "
                         "accepted. The paper's CTRs are .0013-.0052.")
    for (sweep, value), by_label in rows(panels, c).items():
        accepted = np.mean([float(np.mean(r.accepted[:, -1])) for r in by_label.values()])
        table.add(f"{sweep} = {value:g}", *(f"{ctr(by_label[k]).mean():.4f}"
                                           for k in labels), f"{accepted:.0f}")
    return [table]


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
