"""Bae & Lee 2025, Table 2 (OBD replay): can a replay decide "the TS agents reach the top CTR"?

Table 2's default row (m = 20, kappa = 50, S = 1; App. J.1) with many runs: every agent's final
CTR and the paired TS - UCB differences, the power of a CTR difference at the replay's size, and
what CTR the log allows any policy (docs/reproductions/bae-lee-2025.md). ``BENCH_BLOCK_RUNS=8``
keeps every agent's runs the same whichever agents one invocation holds::

    BENCH_BLOCK_RUNS=8 python -m benchmarks.neurallog_table2_power    # 24 runs x 5,000 events
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

import jaxbandits as jb
from benchmarks import framework as C
from benchmarks.neurallog_figs import final_ctr as ctr
from benchmarks.neurallog_figs import make_agent
from jaxbandits import Result

NAME = "neurallog_table2_power"
TITLE = "Bae & Lee 2025, Table 2 (OBD replay): power of the CTR comparison"
LABELS = {"random": "random", "ncbf-ucb": "NCBF-UCB", "logistic-ucb-1": "Log-UCB-1",
          "ada-ofu-ecolog": "ada-OFU-ECOLog", "neurallog-ucb-1": "NL-UCB-1",
          "neurallog-ucb-2": "NL-UCB-2", "neurallog-ts-1": "NL-TS-1", "neurallog-ts-2": "NL-TS-2"}
TS = ("NL-TS-1", "NL-TS-2")
#: Table 2's default row (m = 20, kappa = 50, S = 1), Bae & Lee 2025, App. J.1
PAPER_ROW = {"NCBF-UCB": .0020, "Log-UCB-1": .0021, "ada-OFU-ECOLog": .0024, "NL-UCB-1": .0017,
             "NL-UCB-2": .0025, "NL-TS-1": .0050, "NL-TS-2": .0041}
PAPER_RUNS, PAPER_ACCEPTED = 5, 2000
Z_POWER = 1.959964 + 0.841621  # two-sided 5% level, 80% power


@dataclasses.dataclass(frozen=True)
class Config:
    """Logged events per run (about a fifth accepted), runs, agents, Table 2's default row (m,
    kappa, S), the buffer (at least a run's accepted events), the campaign and the half splits
    of the data check."""

    horizon: int
    num_runs: int
    agents: tuple[str, ...] = tuple(LABELS)
    width: int = 20
    kappa: float = 50.0
    param_bound: float = 1.0
    buffer_size: int = 2500
    campaign: str = "men+women"
    chunk_size: int = 1000
    num_records: int = 10
    splits: int = 200


SCALES = {
    "tiny": Config(horizon=200, num_runs=2, agents=("random", "neurallog-ucb-2", "neurallog-ts-2"),
                   width=8, buffer_size=100, chunk_size=100, splits=10),
    # half the paper's T (about 980 accepted events a run) to afford 24 runs on a 2-core CPU
    "small": Config(horizon=5000, num_runs=24, buffer_size=1200),
    "paper": Config(horizon=10_000, num_runs=100),
}


def diff_se(p: float, accepted: float, runs: int) -> float:
    """s.e. of a difference of two mean CTRs, each over ``runs`` binomial runs of
    ``accepted`` events at rate ``p`` (independent runs)."""
    return math.sqrt(2.0 * p * (1.0 - p) / (accepted * runs))


def runs_needed(gap: float, p: float, accepted: float) -> int:
    """Runs for 80% power at a two-sided 5% level to detect a CTR difference ``gap``."""
    return math.ceil(2.0 * p * (1.0 - p) / accepted * (Z_POWER / gap) ** 2)


def half_split(env, splits: int, seed: int = 0) -> tuple[np.ndarray, float]:
    """``(splits,)`` replay CTRs of the policy that ranks the candidates by item CTRs estimated
    on a random half of the log (shrunk to the log's rate with 50 pseudo-events), replayed on
    the other half; and the log's click rate."""
    data = env.data
    candidates, click = np.asarray(data.candidates), np.asarray(data.click, np.float64)
    n, num_items, rate = click.size, int(candidates.max()) + 1, float(click.mean())
    rng = np.random.default_rng(seed)
    out = np.empty(splits)
    for s in range(splits):
        perm = rng.permutation(n)
        train, test = perm[: n // 2], perm[n // 2:]
        item = candidates[train, 0]  # the logged item is candidate 0
        estimate = ((np.bincount(item, click[train], num_items) + 50 * rate)
                    / (np.bincount(item, minlength=num_items) + 50))
        score = estimate[candidates[test]] + 1e-9 * rng.random((test.size, candidates.shape[1]))
        accepted = np.argmax(score, axis=1) == 0
        out[s] = click[test][accepted].mean()
    return out, rate


def agent_table(results: dict[str, Result], config: Config, rate: float) -> C.Table:
    table = C.Table(f"Final CTR after {config.horizon} logged events ({config.num_runs} runs)",
                    ["agent", "CTR (mean ± s.e.)", "95% CI", "clicks / run", "accepted / run",
                     "paper (default row)"],
                    note=(f"Default row m = {config.width}, kappa = {config.kappa:g}, S = "
                          f"{config.param_bound:g}; campaign {config.campaign} (log click rate "
                          f"{rate:.4f}). Paper: 5 runs of T = 2,000 accepted events of the full "
                          "random/all log."))
    for label, res in results.items():
        values = ctr(res)
        mean, se = C.mean_se(values)
        _, half = C.mean_ci(values)
        table.add(label, f"{mean:.4f} ± {se:.4f}", f"[{mean - half:.4f}, {mean + half:.4f}]",
                  f"{float(np.mean(res.cumulative_reward[:, -1])):.1f}",
                  f"{float(np.mean(res.accepted[:, -1])):.0f}",
                  f"{PAPER_ROW[label]:.4f}" if label in PAPER_ROW else "—")
    return table


def best_pair(results: dict[str, Result]) -> tuple[str, str] | None:
    """``(best TS agent, best other learner)`` by mean CTR (None without both)."""
    ts = [k for k in results if k in TS]
    others = [k for k in results if k not in TS and k != "random"]
    if not (ts and others):
        return None
    best = lambda ks: max(ks, key=lambda k: ctr(results[k]).mean())  # noqa: E731
    return best(ts), best(others)


def pairs(results: dict[str, Result]) -> list[tuple[str, str]]:
    """The paired comparisons ``(a, b)`` of ``a - b``: each TS agent against its UCB sibling and
    the best TS against the best other learner (by mean CTR; once if it is one of those)."""
    out = [(a, b) for a, b in (("NL-TS-1", "NL-UCB-1"), ("NL-TS-2", "NL-UCB-2"))
           if a in results and b in results]
    best = best_pair(results)
    return out + ([best] if best is not None and best not in out else [])


def pair_table(results: dict[str, Result]) -> C.Table:
    table = C.Table("Paired differences of final CTR (run by run)",
                    ["a - b", "mean ± s.e.", "95% CI", "z", "paper (default row)"],
                    note="Common random numbers pair the runs; the last row: the best TS agent "
                         "against the best other learner (by their means here).")
    for a, b in pairs(results):
        d = ctr(results[a]) - ctr(results[b])
        mean, se = C.mean_se(d)
        _, half = C.mean_ci(d)
        paper = (f"{PAPER_ROW[a] - PAPER_ROW[b]:+.4f}" if a in PAPER_ROW and b in PAPER_ROW
                 else "—")
        z = f"{mean / se:+.2f}" if se > 0 else "—"
        table.add(f"{a} - {b}", f"{mean:+.4f} ± {se:.4f}",
                  f"[{mean - half:+.4f}, {mean + half:+.4f}]", z, paper)
    return table


def power_table(results: dict[str, Result], config: Config,
                rate: float) -> tuple[C.Table, dict]:
    learners = {k: v for k, v in results.items() if k != "random"}
    clicks = sum(float(r.cumulative_reward[:, -1].sum()) for r in learners.values())
    accepted = sum(float(r.accepted[:, -1].sum()) for r in learners.values())
    p = clicks / accepted if clicks > 0 else rate  # no click at all (tiny): the log's rate
    n_here = accepted / max(sum(r.num_runs for r in learners.values()), 1)
    table = C.Table("Power of a CTR difference between two agents",
                    ["setting", "accepted / run", "runs", "s.e. of a difference",
                     "smallest difference detected (80% power, 5% two-sided)"],
                    note=(f"Independent binomial runs at the learners' pooled CTR p = {p:.4f} "
                          "(the log's rate without a click); the paired s.e. above is measured."))
    rows = [("paper (5 runs of 2,000)", PAPER_ACCEPTED, PAPER_RUNS),
            (f"here ({config.num_runs} runs)", n_here, config.num_runs)]
    for label, n, runs in rows:
        se = diff_se(p, n, runs)
        table.add(label, f"{n:.0f}", runs, f"{se:.5f}", f"{Z_POWER * se:.4f}")
    gaps = {"NL-TS-1 - best other (paper .0050 - .0025)": .0025,
            "NL-TS-2 - NL-UCB-2 (paper .0041 - .0025)": .0016}
    for label, gap in gaps.items():
        table.add(f"runs needed: {label}", PAPER_ACCEPTED, runs_needed(gap, p, PAPER_ACCEPTED),
                  f"{diff_se(p, PAPER_ACCEPTED, runs_needed(gap, p, PAPER_ACCEPTED)):.5f}",
                  f"{gap:.4f}")
    return table, {"p": p, "accepted": n_here}


def body(r: C.Run) -> C.Page:
    config = r.config
    env = jb.make_env("obd-replay", campaign=config.campaign)
    agents = {LABELS[n]: make_agent(n, config, config.buffer_size, kappa=config.kappa,
                                    param_bound=config.param_bound) for n in config.agents}
    options = C.run_options(config.horizon, config.chunk_size, config.num_records,
                            progress=r.progress)
    r.log(f"{len(agents)} agents x {config.num_runs} runs x {config.horizon} logged events")
    results = jb.compare(env, agents, r.key, config.horizon, config.num_runs, **options)
    most = max(int(np.max(res.accepted[:, -1])) for res in results.values())
    if most > config.buffer_size:  # the ring would forget accepted events: another algorithm
        raise ValueError(f"a run accepted {most} events > buffer_size {config.buffer_size}")
    split, rate = half_split(env, config.splits)
    tables = [agent_table(results, config, rate), pair_table(results)]
    power, stats = power_table(results, config, rate)
    tables.append(power)
    data = C.Table("What the log allows: a policy learnt on half the log, replayed on the other",
                   ["policy", "CTR (mean ± sd over splits)", "log click rate"],
                   note=f"{config.splits} random half splits of {env.data}.")
    data.add("rank candidates by item CTR of the other half", f"{split.mean():.4f} ± "
             f"{split.std(ddof=1) if split.size > 1 else 0.0:.4f}", f"{rate:.4f}")
    tables.append(data)

    claims = []
    if best_pair(results) is not None:
        a, b = best_pair(results)
        gap, half = C.paired_gap(ctr(results[a]), ctr(results[b]))
        verdict = True if gap >= 0 else (False if gap + half < 0 else None)
        claims.append(("[Table 2] a NeuralLog-TS agent has the highest CTR (default row)",
                       verdict, f"{a} - {b} {gap:+.4f} ± {half:.4f} (95%)"))
        claims.append(("[Table 2] the paper's gap (best TS - best other = +.0025) lies in the "
                       "paired 95% CI here", gap - half <= .0025 <= gap + half,
                       f"CI [{gap - half:+.4f}, {gap + half:+.4f}]"))

    fig, axes = C.new_figure(1, 1, width=6.0, height=3.8)
    ax = axes[0][0]
    labels = list(results)
    stats_ = [C.mean_se(ctr(results[k])) for k in labels]
    ax.errorbar(range(len(labels)), [m for m, _ in stats_], yerr=[2 * s for _, s in stats_],
                fmt="o", capsize=3, label="engine (± 2 s.e.)")
    ax.plot([i for i, k in enumerate(labels) if k in PAPER_ROW],
            [PAPER_ROW[k] for k in labels if k in PAPER_ROW], "x", color="C3",
            label="paper (5 runs)")
    ax.axhline(rate, color="0.6", linestyle=":", label="log click rate")
    ax.set_xticks(range(len(labels)), labels, rotation=30, fontsize=7)
    C.style_axes(ax, "", "final CTR", "OBD replay, Table 2 default row", legend=7)
    intro = (f"{config.horizon} logged events x {config.num_runs} runs, agents "
             + ", ".join(labels) + f"; pooled learner CTR {stats['p']:.4f} over "
             f"{stats['accepted']:.0f} accepted events a run.")
    return C.Page(fig, tables, claims, intro, {"results": results, "split": split,
                                               "config": config, **stats})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
