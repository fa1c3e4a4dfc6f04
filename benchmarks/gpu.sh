#!/usr/bin/env bash
# GPU figures: the engine alone (no NumPy or PyTorch yardsticks, which run on the
# host) at 10^3-10^6 runs, for the linear, GLM and neural families, with compile times and the
# best run count per agent. Run from the repository root on a machine with a GPU and jax[cuda]:
#
#     bash benchmarks/gpu.sh [LOG_DIR]        # about 10 minutes on one H200
#
# Each family runs under its own time limit, so that one slow family cannot starve the others;
# the logs (LOG_DIR, default ./gpu-logs) hold everything printed.
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/_gpu_setup.sh "$@"

linear="lin-ts,lin-ucb,lin-es,ensemble-pp:ensemble_size=8,ensemble-pp:ensemble_size=32"
timeout 320 python3 -m benchmarks.throughput --no-reference --agents "$linear" \
  --runs 1000,10000,100000,1000000 --horizon 1000 --repeats 2 --min-time 0.5 --max-time 8 --block-runs all \
  --peak-gflops "${PEAK_GFLOPS:-67000}" --markdown 2>&1 | tee "$LOG/linear.txt"
timeout 110 python3 -m benchmarks.throughput --no-reference --agents glm-es:warmup=50 \
  --runs 1000,10000,100000,1000000 --horizon 200 --repeats 1 --min-time 0.1 --max-time 8 --block-runs all \
  --markdown 2>&1 | tee "$LOG/glm.txt"
timeout 150 python3 -m benchmarks.throughput_neural --no-torch --agents neural-es,neural-ucb \
  --runs 1000,10000,100000 --block-runs all --horizon 4 --flat-horizons 4,8 --repeats 1 --min-time 0.1 \
  --markdown 2>&1 | tee "$LOG/neural.txt"
echo "done"
