#!/usr/bin/env bash
# Issue 25, the GEMM ladder on the GPU machine: bash tools/ladder_gpu_run.sh STEP...  (run from a checkout's root,
# PYTHONPATH already holding the DSL tarball's site and this checkout's lib/ and tests/). Steps:
#   tests     GPU tests of gemm_hopper_pingpong (vs float64, NaN-poisoned C, odd sizes, tiny persistent grids)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck on `tests/kernels/test_kernels_pingpong.py sanitize`
#             (SAN_TEST=test_kernels_specialized.py: on another rung's test file)
#   alltests  the GPU tests of every kernel file, one pytest per file in parallel (ALLTESTS_TIMEOUT each), and the
#             sanitizer step on SAN_TEST beside them; logs tests_<file>.log, a summary in alltests.txt
#   fixup     tools/streamk_fixup.py: the stream-K split's price (ws, split, no split), streamk_fixup.json
#   ncu4096   Nsight Compute on tools/profile_kernels.py top4096 fixup8192 (top rung vs cuBLAS at bf16 4096^3;
#             the stream-K kernel split / not split at 8192^3), ncu_top4096.txt
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
tfile() { find tests -name "$1" | head -1; }     # the test files may sit in sub-folders of tests/
KERNEL_TESTS="test_kernels_hopper.py test_kernels_specialized.py test_kernels_streamk.py test_kernels_pingpong.py
  test_kernels_simt_ampere.py test_kernels_tma_copy.py test_kernels_wgmma_tile.py test_timeline.py test_gpu.py"
sanitize() {   # sanitize [&]: the three tools one after the other, or (with &) side by side
  local file; file=$(tfile "${SAN_TEST:-test_kernels_pingpong.py}")
  local spids=()
  for tool in memcheck racecheck synccheck; do
    stamp "sanitize $tool $file"
    if [ "${1:-}" = "&" ]; then
      timeout ${SAN_TIMEOUT:-90} compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
        python3 "$file" sanitize > "$OUT/sanitize_$tool.log" 2>&1 &
      spids+=($!)
    else
      timeout ${SAN_TIMEOUT:-90} compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
        python3 "$file" sanitize > "$OUT/sanitize_$tool.log" 2>&1
    fi
  done
  for p in "${spids[@]}"; do wait "$p"; done
  for tool in memcheck racecheck synccheck; do tail -2 "$OUT/sanitize_$tool.log"; done
}
for step in "$@"; do
  case "$step" in
    tests)
      stamp tests
      timeout ${TESTS_TIMEOUT:-200} python3 -m pytest -q -p no:cacheprovider -m gpu tests/kernels/test_kernels_pingpong.py \
        2>&1 | tee "$OUT/pingpong_tests.log" | tail -6 ;;
    sanitize) sanitize ;;
    alltests)
      stamp alltests
      pids=()
      for f in $KERNEL_TESTS; do
        timeout ${ALLTESTS_TIMEOUT:-240} python3 -m pytest -q -p no:cacheprovider -m gpu "$(tfile $f)" \
          > "$OUT/tests_${f%.py}.log" 2>&1 &
        pids+=($!)
      done
      sanitize "&"
      for p in "${pids[@]}"; do wait "$p"; done
      for f in $KERNEL_TESTS; do
        echo "$f: $(grep -E '[0-9]+ (passed|failed|error)' "$OUT/tests_${f%.py}.log" | tail -1)"
      done | tee "$OUT/alltests.txt"
      grep -h -E "^(FAILED|ERROR)" "$OUT"/tests_*.log | head -20 ;;
    simt)   # the SIMT/Ampere GPU tests (many compiled variants), in SIMT_PARTS parallel pytest runs by -k
      stamp simt
      pids=(); i=0
      for k in "sgemm_matches and sgemm_simple" "sgemm_matches and sgemm_fast" "ampere_matches and float16" \
               "ampere_matches and bfloat16" "alpha or wrong_dtypes"; do
        timeout ${SIMT_TIMEOUT:-120} python3 -m pytest -q -p no:cacheprovider -m gpu -k "$k" \
          "$(tfile test_kernels_simt_ampere.py)" > "$OUT/tests_simt_part$i.log" 2>&1 &
        pids+=($!); i=$((i + 1))
      done
      for p in "${pids[@]}"; do wait "$p"; done
      for f in "$OUT"/tests_simt_part*.log; do echo "$(basename $f): $(grep -E '[0-9]+ (passed|failed|error)' $f | tail -1)"; done \
        | tee "$OUT/simt_tests.txt"
      grep -h -E "^(FAILED|ERROR)" "$OUT"/tests_simt_part*.log | head -10 ;;
    fixup)
      stamp fixup
      timeout ${FIXUP_TIMEOUT:-150} python3 tools/streamk_fixup.py "$OUT/streamk_fixup.json" ${FIXUP_ARGS:-5 0.15} 2>&1 \
        | tee "$OUT/streamk_fixup.log" | tail -16 ;;
    ncu4096)
      stamp ncu4096
      timeout ${NCU_TIMEOUT:-150} ncu --clock-control none --profile-from-start off --target-processes all \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy \
        --section LaunchStats --section SchedulerStats --section MemoryWorkloadAnalysis \
        --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
        python3 tools/profile_kernels.py top4096 fixup8192 > "$OUT/ncu_top4096.txt" 2>&1
      echo "ncu rc $?" >> "$OUT/ncu_top4096.txt"
      grep -E "profiling|  [a-z_0-9]+.*\(|Duration|Elapsed Cycles|SM Frequency|Compute \(SM\) Throughput|DRAM Throughput|L2 Cache Throughput|Memory Throughput|Tensor \\(All\\)|SM Busy|Waves Per SM|Grid Size|Stall|stalled|No Eligible|Issue Slots Busy|ncu rc|==ERROR==" \
        "$OUT/ncu_top4096.txt" | head -90 ;;
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
      timeout ${LADDER_TIMEOUT:-400} python3 -m layoutlab.bench.gemm ${LADDER_ARGS:-} --goals ${LADDER_TOP:-gemm_hopper_streamk} \
        --dsl-json "$OUT/dsl_compare.json" --json "$OUT/gemm_ladder_h200.json" 2>&1 | tee "$OUT/gemm_ladder_h200.log" \
        | grep -v "^  " | tail -60 ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
[ -n "${CLOCK_PID:-}" ] && kill "$CLOCK_PID"
stamp done
