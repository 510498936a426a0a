#!/usr/bin/env bash
# Issue 30, the fp8 rung's record on the GPU machine (after tools/gpu_env.sh's preamble): bash tools/fp8_final_run.sh
# STEP... Steps:
#   choose   tools/fp8_sweep.py on the default configuration (a last look before the record)
#   bench    the fp8 record (layoutlab.bench.gemm.fp8_main): speed rows, accuracy table, goals (gemm_fp8_h200.json)
#   tests    the GPU tests of tests/kernels/test_kernels_fp8.py
#   sanitize compute-sanitizer memcheck, racecheck, synccheck on the test file's sanitize runs
#   ncu      Nsight Compute on tools/profile_kernels.py fp8 (ours per-tensor and block, cuBLASLt), with the
#            per-instruction stall samples of our kernels (tools/ncu_source_top.py)
T0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - T0 )) s] $*"; }
TESTS=tests/kernels/test_kernels_fp8.py
for step in "$@"; do
  case "$step" in
    choose)
      stamp choose
      FP8_SWEEP_CONFIGS=${FP8_SWEEP_CONFIGS:-'[{}]'} timeout 200 python3 tools/fp8_sweep.py "$OUT/fp8_choose.json" 0.4 3 \
        2>&1 | tail -12 ;;
    bench)
      stamp bench
      timeout 330 python3 -c 'import sys; from layoutlab.bench.gemm import fp8_main; fp8_main(sys.argv[1:])' \
        --json "$OUT/gemm_fp8_h200.json" --rounds ${ROUNDS:-5} --config "${FP8_CONFIG:-{\}}" 2>&1 \
        | tee "$OUT/gemm_fp8_h200.log" | tail -30 ;;
    tests)
      stamp tests
      timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu $TESTS 2>&1 | tee "$OUT/fp8_tests.log" | tail -4 ;;
    sanitize)
      for tool in memcheck racecheck synccheck; do
        stamp "sanitize $tool"
        timeout ${SAN_TIMEOUT:-100} compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
          python3 $TESTS sanitize 2>&1 | tee "$OUT/sanitize_$tool.log" | tail -3
      done ;;
    ncu)
      stamp ncu
      timeout 300 ncu --clock-control none --profile-from-start off --target-processes all \
        --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
        --section LaunchStats --section SourceCounters -o "$OUT/fp8" -f python3 tools/profile_kernels.py fp8 \
        > "$OUT/ncu_run.txt" 2>&1
      ncu --import "$OUT/fp8.ncu-rep" > "$OUT/ncu_fp8.txt" 2>&1
      grep -E "profiling|Duration|Elapsed Cycles|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Registers Per|Warp Cycles Per Issued|Stall" "$OUT/ncu_fp8.txt" | head -60
      python3 tools/ncu_source_top.py "$OUT/fp8.ncu-rep" > "$OUT/ncu_fp8_source.txt" 2>&1
      tail -60 "$OUT/ncu_fp8_source.txt"
      rm -f "$OUT/fp8.ncu-rep" ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
stamp done
