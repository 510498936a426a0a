#!/bin/bash
# One device call for the Hopper GEMMs: environment, correctness tests, compute-sanitizer, benchmark.
# Usage (on the GPU machine, repo root): bash results/gemm_gpu_run.sh [env|smoke|bench|tests|sanitize]...
# Logs and JSON go to $OUT (or /tmp/out).
source "$(dirname "$0")/gpu_env.sh"   # $OUT, the DSL tarball, PYTHONPATH
T0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - T0 ))s] $*"; }
for step in "$@"; do
  case $step in
    env)
      stamp env
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
      python3 -c "import cupy, torch, cutlass; print('cupy', cupy.__version__, 'torch', torch.__version__, 'cutlass', cutlass.__version__)"
      python3 -c "import cupy, ml_dtypes; cupy.zeros(1, dtype=ml_dtypes.bfloat16); print('cupy bf16 ok')" 2>&1 | tail -1
      ;;
    smoke)
      stamp smoke
      python3 - <<'PY' 2>&1 | tail -30
import cupy, sys, traceback
from layoutlab.kernels import gemm_hopper, gemm_hopper_ws
ok = True
a = cupy.random.standard_normal((256, 128), dtype=cupy.float32).astype(cupy.float16)
b = cupy.random.standard_normal((128, 512), dtype=cupy.float32).astype(cupy.float16)
ref = a.astype(cupy.float64) @ b.astype(cupy.float64)
for k in (gemm_hopper, gemm_hopper_ws):
    try:
        c = cupy.full((256, 512), cupy.nan, dtype=cupy.float16)
        k(a, cupy.asfortranarray(b), c)
        cupy.cuda.runtime.deviceSynchronize()
        print(k.__name__, "rel err", float(cupy.linalg.norm(c.astype(cupy.float64) - ref) / cupy.linalg.norm(ref)),
              "nan", int(cupy.isnan(c).sum()))
        ok = ok and not int(cupy.isnan(c).sum())
    except Exception:
        traceback.print_exc()
        ok = False
sys.exit(0 if ok else 1)
PY
      [ "${PIPESTATUS[0]}" = 0 ] || { stamp "smoke failed: stopping"; exit 1; }
      ;;
    tests)
      stamp tests
      timeout 150 python3 -m pytest -q -p no:cacheprovider -x -n 8 -m gpu tests/test_kernels_hopper.py 2>&1 | tee "$OUT/tests.log" | tail -25
      ;;
    sanitize)
      for tool in memcheck racecheck; do
        stamp "sanitize $tool"
        timeout 75 compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 python3 tests/test_kernels_hopper.py sanitize 2>&1 | tee "$OUT/sanitize_$tool.log" | tail -8
      done
      ;;
    bench)
      stamp bench
      timeout 150 python3 -m layoutlab.bench.gemm ${BENCH_ARGS:-} --json "$OUT/gemm_bench.json" 2>&1 | tee "$OUT/bench.log" | tail -40
      ;;
  esac
done
stamp done
