"""The Open Bandit Dataset check of off-policy evaluation (Saito et al. 2020), OBP beside.

Per campaign, the BTS policy of ``bts/`` evaluated from the ``random/`` logs (exact and Monte
Carlo action probabilities) against its on-policy click rate; with ``--obp-python`` (Python
3.10, ``obp==0.5.7``) OBP's estimates and times on the same logs
(``tests/references/obp_ope.py``)::

    python -m benchmarks.obd_ope --obp-python /path/to/venv-obp/bin/python
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxbandits as jb
from benchmarks.timing import cli
from jaxbandits.tables import render_table

CAMPAIGNS = ("all", "men", "women")


def find_obd() -> Path:
    """The ``obd`` folder the engine reads (the first of ``jb.data.search_dirs()`` with one)."""
    for folder in jb.data.search_dirs():
        for root in (folder / "obd", folder):
            if (root / "random").is_dir() and (root / "bts_prior.yaml").is_file():
                return root
    raise SystemExit("no obd folder with random/ and bts_prior.yaml; set JAXBANDITS_DATA")


def timed(fn, *args, **kwargs):
    """``(result, seconds of the first call, seconds of a second call)``."""
    start = time.perf_counter()
    out = jax.block_until_ready(fn(*args, **kwargs))
    first = time.perf_counter() - start
    start = time.perf_counter()
    out = jax.block_until_ready(fn(*args, **kwargs))
    return out, first, time.perf_counter() - start


def mc_probs(alpha, beta, num_draws, key):
    """The BTS policy's action probabilities by Monte Carlo: a ``bernoulli-ts`` agent with the
    prior (``jb.ope.action_probs``, as OBP's ``BernoulliTS.compute_batch_action_dist``)."""
    k = alpha.shape[0]
    agent = jb.make_agent("bernoulli-ts", prior_alpha=jnp.asarray(alpha),
                          prior_beta=jnp.asarray(beta))
    state = agent.init(jax.random.key(0), jb.Spec(dim=1, num_arms=k, action_kind="index",
                                                  fixed_arms=True))
    return jb.ope.action_probs(agent, state, jnp.zeros((1, 1)), key, num_draws=num_draws,
                               num_positions=3, method="mc",
                               context_fn=lambda x: jb.Context(arms=jnp.zeros((k, 1), x.dtype)))


def run_engine(campaign, args):
    log = jb.data.load_obd_logs("random", campaign)
    on_policy = jb.data.load_obd_logs("bts", campaign)
    alpha, beta = jb.data.obd_bts_prior(campaign)
    exact, exact_first, exact_time = timed(jb.ope.beta_thompson_probs, alpha, beta, 3)
    start = time.perf_counter()  # one call (with its compilation): the draws dominate
    mc = jax.block_until_ready(mc_probs(alpha, beta, args.num_draws, jax.random.key(1)))
    mc_time = time.perf_counter() - start
    model = jb.ope.fit_reward_model(log, reg=1.0)
    q = model.predict(log)
    result, est_first, est_time = timed(
        jb.ope.evaluate, log, exact[None], q, num_bootstrap=args.bootstrap, key=2)
    with_mc = jb.ope.evaluate(log, mc, estimators=("ips", "snips"), interval="normal")
    clicks = np.asarray(on_policy.reward)
    ctr = clicks.mean()
    ctr_se = clicks.std(ddof=1) / np.sqrt(clicks.size)
    return {"log": log, "exact": np.asarray(exact), "mc": mc, "q": np.asarray(q),
            "result": result, "with_mc": with_mc, "ctr": ctr, "ctr_se": ctr_se,
            "times": {"exact": (exact_first, exact_time), "mc": mc_time,
                      "estimate": (est_first, est_time)}}


def run_obp(engine, args, obd: Path):
    with tempfile.TemporaryDirectory() as tmp:
        npz, out = Path(tmp) / "in.npz", Path(tmp) / "out.json"
        arrays = {}
        for c, e in engine.items():
            arrays[f"probs_{c}"] = e["exact"].astype(np.float64)
            arrays[f"q_{c}"] = e["q"].astype(np.float64)
        np.savez(npz, **arrays)
        script = Path(__file__).resolve().parents[1] / "tests" / "references" / "obp_ope.py"
        cmd = [args.obp_python, str(script), "--benchmark", str(npz), str(out),
               "--data-path", str(obd), "--num-draws", str(args.num_draws)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"OBP run failed:\n{done.stderr[-3000:]}")
        return json.loads(out.read_text())


def main(argv=None):
    args = cli(__doc__, argv, campaigns=",".join(CAMPAIGNS),
               num_draws=(100_000, "Monte Carlo draws of the BTS action probabilities"),
               bootstrap=1000, obp_python=(str, os.environ.get("OBP_PYTHON"),
                                           "a Python with obp==0.5.7 (default: $OBP_PYTHON)"))
    campaigns = [c for c in args.campaigns.split(",") if c]
    obd = find_obd()
    print(f"jaxbandits {jb.__version__}, jax {jax.__version__} on "
          f"{jax.devices()[0].platform}; data {obd}; {args.num_draws:,} Monte Carlo draws")
    engine = {c: run_engine(c, args) for c in campaigns}
    obp = run_obp(engine, args, obd) if args.obp_python else None
    names = jb.ope.ESTIMATORS
    for c, e in engine.items():
        r = e["result"]
        print(f"\n== campaign {c}: {e['log'].num_rounds:,} random-log rounds, "
              f"K = {e['log'].num_actions}; BTS on-policy CTR (bts/ log) = {e['ctr']:.5f} "
              f"+- {1.96 * e['ctr_se']:.5f}")
        mc_gap = np.abs(np.asarray(e["mc"].probs[0]) - e["exact"])
        mc_se = np.maximum(np.asarray(e["mc"].std_error[0]), 1.0 / args.num_draws)
        print(f"   Monte Carlo vs exact BTS probabilities: max |diff| {mc_gap.max():.2e}, "
              f"max |diff| / MC std err {np.max(mc_gap / mc_se):.2f}")
        m = e["with_mc"]
        for k, name in enumerate(m.estimators):
            gap = abs(m.value[k] - r[name])
            print(f"   {name} with Monte Carlo probabilities {m.value[k]:.6f}: |diff| from exact "
                  f"{gap:.1e} = {gap / m.mc_std_error[k]:.2f} x its stated MC std err "
                  f"{m.mc_std_error[k]:.1e}")
        header = ["estimator", "estimate", "95% bootstrap CI", "rel. err"] + (
            ["OBP (same probs)", "|diff|", "OBP (own MC)"] if obp else [])
        rows = []
        for k, name in enumerate(names):
            v = float(r.value[k])
            rows.append([name, f"{v:.6f}", f"[{r.lower[k]:.6f}, {r.upper[k]:.6f}]",
                         f"{(v - e['ctr']) / e['ctr']:+.3f}"])
            if obp:
                same, own = obp[c]["on_engine_probs"][name], obp[c]["on_own_probs"][name]
                rows[-1] += [f"{same:.6f}", f"{abs(same - v):.1e}", f"{own:.6f}"]
        print(textwrap.indent(render_table(header, rows, format="text"), "   "))
        t = e["times"]
        print(f"   time, engine: exact BTS probabilities {t['exact'][1]:.3f} s (first call "
              f"{t['exact'][0]:.2f} s), Monte Carlo {t['mc']:.2f} s (one call, with its "
              f"compilation), all estimators + {args.bootstrap} bootstrap resamples "
              f"{t['estimate'][1]:.3f} s (first call {t['estimate'][0]:.2f} s)")
        if obp:
            o = obp[c]
            print(f"   time, OBP: BTS action distribution {o['probs_time']:.2f} s, the five "
                  f"estimates {o['estimate_time']:.3f} s")
            print(f"   BTS probabilities, OBP time / engine time: exact "
                  f"{o['probs_time'] / t['exact'][1]:.0f}x, Monte Carlo "
                  f"{o['probs_time'] / t['mc']:.1f}x")
    return engine, obp


if __name__ == "__main__":
    sys.exit(main() and 0)
