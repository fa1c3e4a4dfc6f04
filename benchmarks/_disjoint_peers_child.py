"""The peer side of ``disjoint_peers`` (NumPy and the peer only, in the peer's Python).

``python _disjoint_peers_child.py INSTANCES.npz {mabwiser|obp} OUT.json [BUDGET]`` plays each run
online and writes ``{"final_regret": {algorithm: [per run]}, "seconds": {...}, "import": s}``;
with ``BUDGET`` seconds an algorithm stops after the run that exceeds it.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
import types

import numpy as np


def play_mabwiser(name, shared, means, rewards, hp, seed):
    from mabwiser.mab import MAB, LearningPolicy

    num_arms = means.shape[-1]
    policy = {
        "lin-ucb": LearningPolicy.LinUCB(alpha=hp["alpha"], l2_lambda=hp["reg"]),
        "lin-ts": LearningPolicy.LinTS(alpha=hp["v"], l2_lambda=hp["reg"]),
        "epsilon-greedy": LearningPolicy.LinGreedy(epsilon=hp["epsilon"], l2_lambda=hp["reg"]),
    }[name]
    mab = MAB(arms=list(range(num_arms)), learning_policy=policy, seed=seed)
    regret = 0.0
    for t in range(shared.shape[0]):
        x = shared[t][None]
        if t == 0:  # MABWiser predicts after a first fit; its first arm is drawn uniformly
            arm = int(np.random.default_rng(seed).integers(num_arms))
        else:
            arm = int(mab.predict(x))
        reward = rewards[t, arm]
        regret += means[t].max() - means[t, arm]
        if t == 0:
            mab.fit([arm], [reward], x)
        else:
            mab.partial_fit([arm], [reward], x)
    return regret


def play_obp(name, shared, means, rewards, hp, seed):
    from obp.policy import LinEpsilonGreedy, LinTS, LinUCB

    dim, num_arms = shared.shape[-1], means.shape[-1]
    if hp["reg"] != 1.0:
        raise ValueError("OBP 0.5.7's linear policies fix lambda = 1 (A = I)")
    if name == "lin-ucb":
        policy = LinUCB(dim=dim, n_actions=num_arms, epsilon=hp["alpha"], random_state=seed)
    elif name == "lin-ts":
        if hp["v"] != 1.0:
            raise ValueError("OBP 0.5.7's LinTS samples N(theta, A^-1): v = 1 only")
        policy = LinTS(dim=dim, n_actions=num_arms, random_state=seed)
    else:
        policy = LinEpsilonGreedy(dim=dim, n_actions=num_arms, epsilon=hp["epsilon"],
                                  random_state=seed)
    regret = 0.0
    for t in range(shared.shape[0]):
        x = shared[t][None]
        arm = int(policy.select_action(x)[0])
        regret += means[t].max() - means[t, arm]
        policy.update_params(action=arm, reward=float(rewards[t, arm]), context=x)
    return regret


def main() -> None:
    path, library, out = sys.argv[1:4]
    budget = float(sys.argv[4]) if len(sys.argv) > 4 else float("inf")
    start = time.perf_counter()
    sys.modules.setdefault("seaborn", types.ModuleType("seaborn"))  # obp 0.5.7's plots only
    importlib.import_module("mabwiser.mab" if library == "mabwiser" else "obp.policy")
    imported = time.perf_counter() - start
    data = np.load(path)
    hp = {k: float(data[k]) for k in ("alpha", "v", "epsilon", "reg")}
    algorithms = [str(a) for a in data["algorithms"]]
    play = {"mabwiser": play_mabwiser, "obp": play_obp}[library]
    finals, seconds = {}, {}
    for name in algorithms:
        start, finals[name] = time.perf_counter(), []
        for r in range(data["shared"].shape[0]):
            if finals[name] and time.perf_counter() - start >= budget:
                break
            finals[name].append(play(name, data["shared"][r], data["means"][r],
                                     data["rewards"][r], hp, seed=r))
        seconds[name] = time.perf_counter() - start
    with open(out, "w") as f:
        json.dump({"final_regret": finals, "seconds": seconds, "import": imported}, f)


if __name__ == "__main__":
    main()
