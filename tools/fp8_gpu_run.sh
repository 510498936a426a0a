#!/usr/bin/env bash
# Issue 30, the fp8 rung on the GPU machine: bash tools/fp8_gpu_run.sh STEP...  (from a checkout's root; sources
# tools/gpu_env.sh). Steps:
#   tests     GPU tests of gemm_hopper_fp8 (tests/test_kernels_fp8.py: float64, cuBLASLt, odd shapes, scales)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck on `tests/test_kernels_fp8.py sanitize`
#   quick     the fp8 bench at 8192^3 and the accuracy table to K = 4096 (fp8_quick.json)
#   sweep     tools/fp8_sweep.py: configurations (interval, tile_n, cluster) at 8192^3 and 4096^3 (fp8_sweep.json)
#   bench     the full fp8 record: speed at FP8_SHAPES, accuracy to K = 16384 (gemm_fp8_h200.json)
source tools/gpu_env.sh
T0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - T0 )) s] $*"; }
TESTS=$(ls tests/test_kernels_fp8.py tests/kernels/test_kernels_fp8.py 2>/dev/null | head -1)
for step in "$@"; do
  case "$step" in
    tests)   # FP8_CONFIG (HopperFp8Config fields as JSON) sets what `bench` measures; FALLBACK_CONFIG replaces
             # it when a GPU test fails (the 2026-11-28 run used this to guard n_halves=2 with n_halves=1)
      stamp tests
      timeout ${TESTS_TIMEOUT:-240} python3 -m pytest -q -p no:cacheprovider -m gpu "$TESTS" \
        2>&1 | tee "$OUT/fp8_tests.log" | tail -15
      if grep -q "failed" "$OUT/fp8_tests.log" && [ -n "${FALLBACK_CONFIG:-}" ]; then
        FP8_CONFIG=$FALLBACK_CONFIG; echo "FALLBACK $FP8_CONFIG"
      fi ;;
    sanitize)
      for tool in memcheck racecheck synccheck; do
        stamp "sanitize $tool"
        timeout ${SAN_TIMEOUT:-90} compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
          python3 "$TESTS" sanitize 2>&1 | tee "$OUT/sanitize_$tool.log" | tail -3
      done ;;
    quick)
      stamp quick
      timeout ${QUICK_TIMEOUT:-150} python3 -c 'import sys; from layoutlab.bench.gemm import fp8_main; fp8_main(sys.argv[1:])' \
        --quick --json "$OUT/fp8_quick.json" 2>&1 | tail -30 ;;
    sweep)
      stamp sweep
      timeout ${SWEEP_TIMEOUT:-200} python3 tools/fp8_sweep.py "$OUT/fp8_sweep.json" ${SWEEP_S:-0.4} 2>&1 | tail -25 ;;
    bench)
      stamp bench
      timeout ${BENCH_TIMEOUT:-300} python3 -c 'import sys; from layoutlab.bench.gemm import fp8_main; fp8_main(sys.argv[1:])' \
        --json "$OUT/gemm_fp8_h200.json" --rounds ${ROUNDS:-5} --config "${FP8_CONFIG:-{\}}" 2>&1 | tee "$OUT/gemm_fp8_h200.log" | tail -40 ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
stamp done
