"""The standard Open Bandit Dataset check of off-policy evaluation, with OBP as the reference.

For each campaign: the Bernoulli Thompson sampling (BTS) policy that logged OBD's ``bts/`` logs
is evaluated from the uniform-random ``random/`` logs. Its action probabilities (3 positions)
follow from its shipped Beta prior (``jb.data.obd_bts_prior``): the engine computes them
exactly (``jb.ope.beta_thompson_probs``, one-dimensional integrals) and by Monte Carlo Thompson
sampling (``jb.ope.action_probs`` of a ``bernoulli-ts`` agent with the prior, ``num_draws``
draws, as OBP's ``BernoulliTS.compute_batch_action_dist``). Each estimator of
``jb.ope.evaluate`` (reward model: per-action-and-position ridge) is compared with the BTS
policy's on-policy click rate in the ``bts/`` log of the campaign (Saito et al. 2020).

With ``--obp-python`` (a Python 3.10 interpreter with ``obp==0.5.7``), OBP computes its BTS
action distribution and its estimators on the same logs, with its own probabilities and with
the engine's (same reward model), and both libraries' times are printed.

    python -m benchmarks.obd_ope --obp-python /path/to/venv-obp/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxbandits as jb

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


def bts_agent(alpha, beta):
    """The BTS policy as the engine's ``bernoulli-ts`` agent and its (prior) state."""
    k = alpha.shape[0]
    agent = jb.make_agent("bernoulli-ts", prior_alpha=jnp.asarray(alpha),
                          prior_beta=jnp.asarray(beta))
    spec = jb.Spec(dim=1, num_arms=k, action_kind="index", fixed_arms=True)
    return agent, agent.init(jax.random.key(0), spec), k


def mc_probs(alpha, beta, num_draws, key):
    agent, state, k = bts_agent(alpha, beta)

    def context_fn(x):
        return jb.Context(arms=jnp.zeros((k, 1), x.dtype))

    return jb.ope.action_probs(agent, state, jnp.zeros((1, 1)), key, num_draws=num_draws,
                               num_positions=3, context_fn=context_fn, method="mc")


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
        script = Path(__file__).with_name("obd_ope_obp.py")
        cmd = [args.obp_python, str(script), "--benchmark", str(npz), str(out),
               "--data-path", str(obd), "--num-draws", str(args.num_draws)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"OBP run failed:\n{done.stderr[-3000:]}")
        return json.loads(out.read_text())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--campaigns", default=",".join(CAMPAIGNS))
    parser.add_argument("--num-draws", type=int, default=100_000,
                        help="Monte Carlo draws of the BTS action probabilities (OBP's n_sim)")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--obp-python", default=os.environ.get("OBP_PYTHON"),
                        help="a Python with obp==0.5.7 (default: $OBP_PYTHON; none: skip OBP)")
    args = parser.parse_args(argv)
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
        head = f"   {'estimator':<10} {'estimate':>9} {'95% bootstrap CI':>22} {'rel. err':>9}"
        if obp:
            head += f" {'OBP (same probs)':>17} {'|diff|':>8} {'OBP (own MC)':>13}"
        print(head)
        for k, name in enumerate(names):
            v = float(r.value[k])
            line = (f"   {name:<10} {v:>9.6f} [{r.lower[k]:>9.6f}, {r.upper[k]:>9.6f}] "
                    f"{(v - e['ctr']) / e['ctr']:>+9.3f}")
            if obp:
                o = obp[c]
                same, own = o["on_engine_probs"][name], o["on_own_probs"][name]
                line += f" {same:>17.6f} {abs(same - v):>8.1e} {own:>13.6f}"
            print(line)
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
