#!/usr/bin/env bash
# Issue 25, the last-wave rung on the GPU machine: bash tools/streamk_gpu_run.sh STEP...  (from a checkout's root;
# LIB/BENCH/TESTS name the lib/, bench/ and test file to use when they are not this checkout's). Steps:
#   tests     GPU tests of gemm_hopper_streamk (vs float64, NaN-poisoned C, odd sizes, small grids, workspace reset)
#   sanitize  compute-sanitizer memcheck and racecheck on `tests/kernels/test_kernels_streamk.py sanitize`
#   bench     tools/streamk_bench.py: stream-K vs ws vs cuBLAS, bf16 8192^3, 6144^3, 4096^3, 8000^3 (ROUNDS, SECONDS)
# Logs and JSON go to $OUT (or /tmp/out).
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIB=${LIB:-$PWD/lib}; BENCH=${BENCH:-$PWD/bench}; TESTS=${TESTS:-$PWD/tests/kernels/test_kernels_streamk.py}
mkdir -p /tmp/site && [ -f /tmp/site/.unpacked ] || { tar -C /tmp/site -xJf .device/gpu-deps-py312.tar.xz && touch /tmp/site/.unpacked; }
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages:$LIB:$PWD/tests MPLBACKEND=Agg PYTHONUNBUFFERED=1
unset CUTE_DSL_ARCH
[ "$TESTS" -ef tests/kernels/test_kernels_streamk.py ] || cp "$TESTS" tests/kernels/test_kernels_streamk.py
T0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - T0 )) s] $*"; }
for step in "$@"; do
  case "$step" in
    tests)
      stamp tests
      timeout ${TESTS_TIMEOUT:-240} python3 -m pytest -q -p no:cacheprovider -m gpu tests/kernels/test_kernels_streamk.py \
        2>&1 | tee "$OUT/streamk_tests.log" | grep -v "^  " | tail -25 ;;
    sanitize)
      for tool in memcheck racecheck; do
        stamp "sanitize $tool"
        timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
          python3 tests/kernels/test_kernels_streamk.py sanitize 2>&1 | tee "$OUT/streamk_sanitize_$tool.log" | tail -3
      done ;;
    bench)
      stamp bench
      timeout ${BENCH_TIMEOUT:-200} python3 "$BENCH/streamk_bench.py" "$OUT/streamk_bench.json" ${ROUNDS:-5} \
        ${SECONDS_EACH:-0.5} 2>&1 | tee "$OUT/streamk_bench.log" | tail -14 ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
stamp done
