#!/bin/bash
# The whole-step measurement (step.py) on a GPU: versions, a smoke test, then all 144
# configurations with --device cuda, and the cuda report of step.py --check. Run from the
# repository root of a machine with a GPU and PyTorch 2.x as `python3`, with $OUT an empty
# folder whose files are kept:
#
#     OUT=/some/dir bash tests/validation/step_device.sh
#
# Writes $OUT/step_cuda.log (everything printed), $OUT/step_cuda.csv (the rows, one flushed at
# a time, so a run cut short keeps what it measured) and $OUT/step_smoke.csv. The whole script
# ends within about 420 s: the smoke test has 120 s, the full run what is left of 400 s (in
# --order spread, so a run cut short still spans the precisions, gradient buffers and
# optimizers), the report 30 s. On 2 CPU cores the 144 configurations take about 60 s
# (tests/validation/README.md, "Whole training step"); a GPU run is expected within 2-3 min.
set -u

cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-/tmp/step_device}
mkdir -p "$OUT" || exit 1
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
STEP=tests/validation/step.py
LOG="$OUT/step_cuda.log"

run_all() {
    local t0=$SECONDS rc
    echo "== $(date -u '+%Y-%m-%d %H:%M:%S UTC') step_device.sh in $(pwd), OUT=$OUT"
    echo "== versions"
    timeout 90 "$PY" -c '
import sys, torch
print("python", sys.version.split()[0])
print("torch", torch.__version__, "cuda", torch.version.cuda,
      "cudnn", torch.backends.cudnn.version(), "available", torch.cuda.is_available())
if torch.cuda.is_available():
    print("device", torch.cuda.get_device_name(0), "capability",
          torch.cuda.get_device_capability(0), "count", torch.cuda.device_count())
print("untyped_storage", hasattr(torch.Tensor, "untyped_storage"))
' || echo "== versions: exit $?"
    echo "PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF-}" \
         "CUBLAS_WORKSPACE_CONFIG=${CUBLAS_WORKSPACE_CONFIG-}"
    timeout 30 nvidia-smi -L || echo "== nvidia-smi: exit $?"

    echo "== smoke: configurations 0 (fp32) and 82 (autocast, recompute, foreach)," \
         "timeout 120 s"
    timeout -k 5 120 "$PY" "$STEP" "$OUT/step_smoke.csv" --device cuda --only 0,82
    rc=$?
    echo "== smoke: exit $rc after $((SECONDS - t0)) s"

    local left=$((400 - (SECONDS - t0)))
    if [ "$left" -lt 30 ]; then
        left=30
    fi
    echo "== full: 144 configurations, --order spread, timeout $left s"
    timeout -k 5 "$left" "$PY" "$STEP" "$OUT/step_cuda.csv" --device cuda --order spread \
        --no-check
    rc=$?
    echo "== full: exit $rc after $((SECONDS - t0)) s (124: cut by the timeout; the rows" \
         "measured are in step_cuda.csv)"

    echo "== report: $STEP --check $OUT/step_cuda.csv"
    timeout 30 "$PY" "$STEP" --check "$OUT/step_cuda.csv"
    rc=$?
    local rows=0
    if [ -f "$OUT/step_cuda.csv" ]; then
        rows=$(($(wc -l < "$OUT/step_cuda.csv") - 1))
    fi
    echo "== report: exit $rc; $rows rows; done after $((SECONDS - t0)) s"
    return $rc
}

run_all 2>&1 | tee "$LOG"
exit "${PIPESTATUS[0]}"
