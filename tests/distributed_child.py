"""One process of tests/test_distributed.py: joins a 2-process jax.distributed cluster on
localhost and plays a compare and a sweep, process 0 saving what it got (not a test module)."""

import json
import os
import sys

import jax

process_id, port, out, checkpoint = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(coordinator_address=f"localhost:{port}", num_processes=2,
                           process_id=int(process_id))

import numpy as np  # noqa: E402
from child_config import experiment  # noqa: E402

import jaxbandits as jb  # noqa: E402

stop = os.environ.get("JB_STOP_AFTER_COMMITS")
if stop and process_id == "0":  # a crash of process 0 in the middle of a wave
    from jaxbandits.checkpoint import Checkpoint

    original, count = Checkpoint.commit, [0]

    def commit(self, meta, arrays):
        original(self, meta, arrays)
        count[0] += 1
        if count[0] >= int(stop) and meta.get("done"):
            os._exit(3)

    Checkpoint.commit = commit

env, agents, grid, kwargs = experiment()
options = dict(kwargs, checkpoint_dir=f"{out}/ckpt" if checkpoint else None)
results = jb.compare(env, agents, 0, **options)
sweep_options = dict(kwargs, checkpoint_dir=f"{out}/ckpt-sweep" if checkpoint else None)
swept = jb.sweep(env, agents["lin-ts"], 1, grid, **sweep_options)
arrays = {f"compare/{k}": r.cumulative_regret for k, r in results.items()}
arrays |= {f"sweep/{k}": r.cumulative_regret for k, r in swept.items()}
np.savez(f"{out}/process{process_id}.npz", **arrays)
with open(f"{out}/process{process_id}.json", "w") as f:
    json.dump({"devices": jax.device_count(), "local": jax.local_device_count(),
               "processes": jax.process_count()}, f)
