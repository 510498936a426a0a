#!/bin/bash
# One device call for the Hopper GEMMs: environment, correctness tests, compute-sanitizer, benchmark.
# Usage (on the GPU machine, repo root): bash tools/gemm_gpu_run.sh [env|smoke|tests|alltests|sanitize|dsl|ncu|sweep|bench]...
# Set CLOCKS=1 to sample SM clock and power every 200 ms into $OUT/clocks.csv while the steps run.
# dsl/ncu: tools/compare_dsl_example.py on $DSL_EXAMPLE (default .device/dsl_examples/dense_gemm_persistent.py,
# a copy of the user's NVIDIA/cutlass example in the git-ignored .device/, carried to the device).
# Logs and JSON go to $OUT (or /tmp/out).
source "$(dirname "$0")/gpu_env.sh"   # $OUT, the DSL tarball, PYTHONPATH
T0=$(date +%s)
if [ -n "${CLOCKS:-}" ]; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > "$OUT/clocks.csv" 2>&1 &
  CLOCK_PID=$!; trap 'kill $CLOCK_PID 2>/dev/null' EXIT
fi
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
      timeout 150 python3 -m pytest -q -p no:cacheprovider -x -m gpu tests/kernels/test_kernels_hopper.py 2>&1 | tee "$OUT/tests.log" | tail -25
      ;;
    alltests)   # GPU correctness tests of every kernel (no pytest-xdist in the device tarball: one process)
      stamp alltests
      timeout ${TESTS_TIMEOUT:-240} python3 -m pytest -q -p no:cacheprovider -m gpu tests/kernels/test_kernels_*.py 2>&1 | tee "$OUT/alltests.log" | tail -8
      ;;
    sanitize)
      for tool in memcheck racecheck; do
        stamp "sanitize $tool"
        timeout 75 compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 python3 tests/kernels/test_kernels_hopper.py sanitize 2>&1 | tee "$OUT/sanitize_$tool.log" | tail -8
      done
      ;;
    dsl)   # issue 19: the CuTe DSL example (a file outside the repository's tracked tree) beside ours and cuBLAS
      stamp "dsl example comparison"
      timeout ${DSL_TIMEOUT:-240} python3 tools/compare_dsl_example.py "${DSL_EXAMPLE:-.device/dsl_examples/dense_gemm_persistent.py}" \
        ${DSL_ARGS:-} --json "$OUT/dsl_compare.json" 2>&1 | tee "$OUT/dsl_compare.log" | tail -12
      ;;
    ncu)   # one launch of ours and of the example (fp16 8192^3 unless NCU_ARGS says otherwise), clocks as found
      stamp "ncu ours + example"
      timeout ${NCU_TIMEOUT:-200} ncu --clock-control none --profile-from-start off --target-processes all \
        --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
        --section LaunchStats --section Occupancy ${NCU_SECTIONS:-} \
        python3 tools/compare_dsl_example.py "${DSL_EXAMPLE:-.device/dsl_examples/dense_gemm_persistent.py}" --profile \
        ${NCU_ARGS:---shapes 8192x8192x8192 --dtypes float16} > "$OUT/ncu_ours_vs_example.txt" 2>&1
      echo "ncu rc $?" >> "$OUT/ncu_ours_vs_example.txt"
      grep -E "profiling|Kernel|Duration|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|No Eligible|Registers Per|Stall|Warp Cycles Per Issued|Grid Size|Cluster|ncu rc" "$OUT/ncu_ours_vs_example.txt" | head -60
      ;;
    sweep)   # gemm_hopper_ws schedule/staging sweep (tools/hopper_ws_sweep.py), SWEEP_ROUNDS rounds
      stamp sweep
      timeout ${SWEEP_TIMEOUT:-300} python3 tools/hopper_ws_sweep.py "$OUT/hopper_ws_sweep.json" ${SWEEP_ROUNDS:-3} 2>&1 | tee "$OUT/sweep.log" | grep -v "^compiled" | tail -30
      ;;
    bench)
      stamp bench
      timeout 150 python3 -m layoutlab.bench.gemm ${BENCH_ARGS:-} --json "$OUT/gemm_bench.json" 2>&1 | tee "$OUT/bench.log" | tail -40
      ;;
  esac
done
stamp done
