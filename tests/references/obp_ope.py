"""OBP's off-policy estimates, the reference of ``tests/test_ope.py`` and the peer of
``benchmarks/obd_ope.py``, run under OBP's Python 3.10 (it imports NumPy and obp only).

``--benchmark IN.npz OUT.json``: per campaign of IN (the engine's BTS probabilities
``probs_<c>``, reward model ``q_<c>``), OBP's estimates with its own and those probabilities,
timed. ``--reference OUT.json``: the fixed case of ``tests/test_ope.py`` (``ROWS`` rounds).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

ROWS = 2000
SIZES = {"all": 80, "men": 34, "women": 46}


def estimators(max_weight=np.inf, tau=np.inf):
    from obp.ope import (
        DirectMethod,
        DoublyRobust,
        InverseProbabilityWeighting,
        SelfNormalizedInverseProbabilityWeighting,
        SwitchDoublyRobust,
    )
    return {"ips": InverseProbabilityWeighting(lambda_=max_weight),
            "snips": SelfNormalizedInverseProbabilityWeighting(),
            "dm": DirectMethod(), "dr": DoublyRobust(lambda_=max_weight),
            "switch-dr": SwitchDoublyRobust(lambda_=tau)}


def estimate(feedback, action_dist, q, **options):
    out = {}
    for name, est in estimators(**options).items():
        out[name] = float(est.estimate_policy_value(
            reward=feedback["reward"], action=feedback["action"], position=feedback["position"],
            pscore=feedback["pscore"], action_dist=action_dist,
            estimated_rewards_by_reg_model=q))
    return out


def load(campaign, data_path):
    from obp.dataset import OpenBanditDataset
    data = OpenBanditDataset(behavior_policy="random", campaign=campaign, data_path=data_path)
    return data.obtain_batch_bandit_feedback()


def benchmark(npz_path, out_path, data_path, num_draws, seed):
    from obp.policy import BernoulliTS
    inputs = np.load(npz_path)
    campaigns = [k[len("probs_"):] for k in inputs.files if k.startswith("probs_")]
    result = {}
    for c in campaigns:
        feedback = load(c, data_path)
        n = feedback["n_rounds"]
        policy = BernoulliTS(n_actions=SIZES[c], len_list=3, is_zozotown_prior=True,
                             campaign=c, random_state=seed)
        start = time.perf_counter()
        own = policy.compute_batch_action_dist(n_rounds=n, n_sim=num_draws)
        probs_time = time.perf_counter() - start
        engine = np.broadcast_to(inputs[f"probs_{c}"], (n,) + inputs[f"probs_{c}"].shape)
        q = inputs[f"q_{c}"]
        start = time.perf_counter()
        on_engine = estimate(feedback, np.ascontiguousarray(engine), q)
        estimate_time = time.perf_counter() - start
        result[c] = {"probs_time": probs_time, "estimate_time": estimate_time,
                     "num_draws": num_draws, "on_engine_probs": on_engine,
                     "on_own_probs": estimate(feedback, own, q),
                     "own_probs": own[0].tolist()}
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)


def reference_q(n, k, num_positions):
    """The reference case's reward model, a formula the test recomputes."""
    i = np.arange(n)[:, None, None]
    a = np.arange(k)[None, :, None]
    pos = np.arange(num_positions)[None, None, :]
    return 0.002 + 0.0001 * a + 0.0005 * pos + 0.00002 * (i % 7)


def reference(out_path, data_path):
    from obp.policy import BernoulliTS
    feedback = load("men", data_path)
    feedback = {k: (v[:ROWS] if isinstance(v, np.ndarray) and v.shape[:1] == (
        feedback["n_rounds"],) else v) for k, v in feedback.items()}
    policy = BernoulliTS(n_actions=34, len_list=3, is_zozotown_prior=True, campaign="men",
                         random_state=0)
    dist = policy.compute_batch_action_dist(n_rounds=1, n_sim=10_000)[0]  # (K, L)
    action_dist = np.ascontiguousarray(np.broadcast_to(dist, (ROWS,) + dist.shape))
    q = reference_q(ROWS, 34, 3)
    import obp
    out = {"obp_version": obp.__version__, "campaign": "men", "rows": ROWS,
           "action_dist": dist.tolist(),
           "plain": estimate(feedback, action_dist, q),
           "clipped": estimate(feedback, action_dist, q, max_weight=5.0, tau=5.0)}
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--benchmark", nargs=2, metavar=("IN_NPZ", "OUT_JSON"))
    parser.add_argument("--reference", metavar="OUT_JSON")
    parser.add_argument("--data-path", required=True, help="the obd folder (random/<campaign>/)")
    parser.add_argument("--num-draws", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=12345)
    args = parser.parse_args()
    if args.reference:
        reference(args.reference, args.data_path)
    if args.benchmark:
        benchmark(*args.benchmark, args.data_path, args.num_draws, args.seed)


if __name__ == "__main__":
    main()
