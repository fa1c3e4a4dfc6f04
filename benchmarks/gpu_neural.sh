#!/usr/bin/env bash
# GPU figures of the neural agents whose >= 20x target the 2-core CPU misses
# (nvldb-ucb-asym at width 100, lmc-ts) and neural-ensemble-pp, the engine against the PyTorch
# per-seed loop on the SAME GPU (`--torch-device cuda`, as the papers' code runs when it has one).
# Run from the repository root on a machine with a GPU, jax[cuda] and torch (CUDA build):
#
#     bash benchmarks/gpu_neural.sh [LOG_DIR [OPTIONS...]]   # about 6 minutes on one H100
#
# OPTIONS go to throughput_neural.py after the defaults below (a later option wins), e.g.
# `--agents neural-ucb,ndb-ucb --check-seeds 1`.
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/_gpu_setup.sh "$@"
shift || true  # the rest are throughput_neural.py options
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # JAX leaves the card to PyTorch

timeout "${NEURAL_LIMIT:-420}" python3 -m benchmarks.throughput_neural --torch-device cuda \
  --agents nvldb-ucb-asym,lmc-ts,neural-ensemble-pp --runs 1,100,1000 \
  --check-seeds 3 --torch-data history --repeats 1 --min-time 0.5 --markdown "$@" 2>&1 \
  | tee "$LOG/neural_vs_torch.txt"
echo "done"
