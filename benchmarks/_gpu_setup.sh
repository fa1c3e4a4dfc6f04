# Sourced by the GPU scripts (gpu.sh, gpu_neural.sh) from the repository root: the log folder
# ($LOG, from their first argument, default ./gpu-logs), the environment, and device.txt with
# the card, the driver and the versions that produced the figures.
LOG=${1:-gpu-logs}
mkdir -p "$LOG"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export JAXBANDITS_COMPILATION_CACHE=${JAXBANDITS_COMPILATION_CACHE:-off}  # compile times as paid
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$LOG/device.txt"
python3 - <<'PY' | tee -a "$LOG/device.txt"
import importlib.util, jax, flax
torch = ("torch " + __import__("torch").__version__) if importlib.util.find_spec("torch") else ""
print("jax", jax.__version__, jax.devices(), "flax", flax.__version__, torch)
PY
