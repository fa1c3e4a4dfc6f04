#!/usr/bin/env bash
# The headline figure of each of the five papers at paper scale (or as close as fits), on one GPU,
# in at most about 7 minutes after the install:
#
#     bash benchmarks/gpu_paper_scale.sh [OUT_DIR]             # default $OUT, else results/gpu
#     SCALE=tiny CPU=1 bash benchmarks/gpu_paper_scale.sh DIR  # the same steps at tiny scale, on a CPU
#
# Each step is `python -m benchmarks.<name> --scale $SCALE` under its own time limit, writing its
# PNG and markdown report (tables, claims, verdicts) under OUT_DIR/<name>/ and its log to
# OUT_DIR/<name>.log; a step that runs out of time leaves its log (and the points its cached
# runner finished, under OUT_DIR/cache) and the next step runs. The device has the repository
# but none of the data files: only the synthetic tasks run (Bae & Lee 2025's Table 2 needs the
# OBD sample: obd_runs=0). What each step reduces from the paper is in its --set options.
set -uo pipefail

OUT_DIR=${1:-${OUT:-results/gpu}}
SCALE=${SCALE:-paper}
mkdir -p "$OUT_DIR"

# Install first (not timed); quiet, the device reaches package registries only.
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
if [ -z "${CPU:-}" ]; then
  python3 -m pip install -q -e . >"$OUT_DIR/pip.log" 2>&1
  # a jax without CUDA (a bare environment): the CUDA wheels of the same jax version
  if [ "$(python3 -c 'import jax; print(jax.default_backend())')" = cpu ]; then
    version=$(python3 -c 'import jax; print(jax.__version__)')
    python3 -m pip install -q "jax[cuda13]==$version" >>"$OUT_DIR/pip.log" 2>&1 \
      || python3 -m pip install -q "jax[cuda12]==$version" >>"$OUT_DIR/pip.log" 2>&1
  fi
fi
python3 - <<'EOF' | tee "$OUT_DIR/device.txt"
import jax
print("jax", jax.__version__, "devices:", jax.devices())
EOF

# step NAME LIMIT_S [options...]: one reproduction under a time limit.
step() {
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout "$limit" python3 -m benchmarks."$name" --scale "$SCALE" --seed 0 --plain --no-progress \
    --out "$OUT_DIR/$name" --cache "$OUT_DIR/cache/$name" "$@" >"$OUT_DIR/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $((SECONDS - start)) s (limit $limit s)" | tee -a "$OUT_DIR/steps.txt"
}

if [ "$SCALE" = paper ]; then
  # Li et al. 2024, Fig. 2(a): d = 50, K = 10,000, T = 1000, 200 runs, M = 2..1024 (panel (b)
  # at the headline's (d, K) only: it reuses panel (a)'s runs).
  step ensemble_pp_fig2 110 --set dims_b=[50] --set arms_b=[10000]
  # Oh et al. 2026, Fig. 2: the ordering on cosine and square, 20 runs, T = 2000.
  step dueling_acceptance 90
  # Sun et al. 2025, Fig. 1 (linear and logistic): d = 20, K = 50, T = 10^4, 10 instances.
  step anytime_fig1 100
  # Bae & Lee 2025, Fig. 1 (h1-h3): d = 20, K = 5, pool 2500, T = 2000, 10 runs; no OBD data.
  step neurallog_figs 70 --set datasets=[] --set obd_runs=0
  # Lee & Oh 2024 (no experiments; the demonstration): d = 5, K = 20, T = 1000, 1000 runs.
  step lee_oh_demo 50
else
  step ensemble_pp_fig2 600
  step dueling_acceptance 600
  step anytime_fig1 600
  step neurallog_figs 600 --set datasets=[] --set obd_runs=0
  step lee_oh_demo 600
fi
echo "reports: $OUT_DIR/<name>/<name>.md; step times: $OUT_DIR/steps.txt"
