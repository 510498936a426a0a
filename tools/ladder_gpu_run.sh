#!/usr/bin/env bash
# Issue 25, the GEMM ladder on the GPU machine: bash tools/ladder_gpu_run.sh STEP...  (run from a checkout's root,
# PYTHONPATH already holding the DSL tarball's site and this checkout's lib/ and tests/). Steps:
#   tests     GPU tests of gemm_hopper_pingpong (vs float64, NaN-poisoned C, odd sizes, tiny persistent grids)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck on `tests/kernels/test_kernels_pingpong.py sanitize`
#   quick     tools/pingpong_sweep.py: pingpong configurations vs ws vs cuBLAS, bf16 8192^3 and 4096^3
#   dsl       tools/compare_dsl_example.py: the DSL example beside pingpong and ws (DSL_EXAMPLE, DSL_ARGS)
#   ladder    python -m layoutlab.bench.gemm, every rung, goal fields for the top rung (LADDER_ARGS)
# Logs and JSON go to $OUT (or /tmp/out).
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
unset CUTE_DSL_ARCH
if [ -n "${CLOCKS:-}" ]; then        # SM clock and power every 200 ms while the steps run
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 200 \
    > "$OUT/clocks.csv" 2>&1 &
  CLOCK_PID=$!
fi
T0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - T0 )) s] $*"; }
for step in "$@"; do
  case "$step" in
    tests)
      stamp tests
      timeout ${TESTS_TIMEOUT:-200} python3 -m pytest -q -p no:cacheprovider -m gpu tests/kernels/test_kernels_pingpong.py \
        2>&1 | tee "$OUT/pingpong_tests.log" | tail -6 ;;
    sanitize)
      for tool in memcheck racecheck synccheck; do
        stamp "sanitize $tool"
        timeout ${SAN_TIMEOUT:-90} compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
          python3 tests/kernels/test_kernels_pingpong.py sanitize 2>&1 | tee "$OUT/sanitize_$tool.log" | tail -3
      done ;;
    quick)
      stamp quick
      timeout 150 python3 tools/pingpong_sweep.py "$OUT/pingpong_sweep.json" 3 0.5 2>&1 | tail -12 ;;
    ncu)   # one launch each of pingpong, ws and the DSL example (bf16 8192^3), clocks as found
      stamp ncu
      timeout ${NCU_TIMEOUT:-150} ncu --clock-control none --profile-from-start off --target-processes all \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats ${NCU_SECTIONS:-} \
        python3 tools/compare_dsl_example.py "${DSL_EXAMPLE:-.device/dsl_examples/dense_gemm_persistent.py}" \
        --profile --ours gemm_hopper_pingpong,gemm_hopper_ws ${NCU_ARGS:---shapes 8192x8192x8192 --dtypes bfloat16} \
        > "$OUT/ncu_pingpong_ws_example.txt" 2>&1
      grep -E "profiling|Duration|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Elapsed Cycles|Cluster Size|Grid Size" \
        "$OUT/ncu_pingpong_ws_example.txt" | head -45 ;;
    dsl)
      stamp dsl
      timeout ${DSL_TIMEOUT:-200} python3 tools/compare_dsl_example.py \
        "${DSL_EXAMPLE:-.device/dsl_examples/dense_gemm_persistent.py}" --ours gemm_hopper_pingpong,gemm_hopper_ws \
        ${DSL_ARGS:---shapes 8192x8192x8192,6144x6144x6144,4096x4096x4096} --json "$OUT/dsl_compare.json" 2>&1 \
        | tee "$OUT/dsl_compare.log" | tail -9 ;;
    ladder)
      stamp ladder
      timeout ${LADDER_TIMEOUT:-400} python3 -m layoutlab.bench.gemm ${LADDER_ARGS:-} --goals gemm_hopper_pingpong \
        --dsl-json "$OUT/dsl_compare.json" --json "$OUT/gemm_ladder_h100.json" 2>&1 | tee "$OUT/gemm_ladder_h100.log" \
        | grep -v "^  " | tail -60 ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
[ -n "${CLOCK_PID:-}" ] && kill "$CLOCK_PID"
stamp done
