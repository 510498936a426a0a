#!/bin/bash
# Chapter 9 on the H100: the chapter's live path. tour.live_record() times the five tour points with the
# benchmark's API (3 alternating rounds of 0.25 s per point, ~1 min), then the chapter runs live under nbmake
# (it calls live_record again and compiles the five kernels). Nothing here changes results/gemm_h100_bench.json.
# Usage (on the GPU machine, repo root): bash tools/gemm_tour_gpu_run.sh [env] [live] [chapter]  (default: all)
# Writes $OUT/gemm_tour_live_h100.json, $OUT/gemm_tour_live.log and $OUT/gemm_tour_chapter.log.
# A good run: five rows, every rel_err_vs_cublas below 1e-2, pct_cublas near the recorded table
# (sgemm_simple ~70, sgemm_fast ~90, gemm_ampere ~58, gemm_hopper ~95, gemm_hopper_ws ~100: +-5 points is noise
# with short windows), and "1 passed" for the chapter.
source "$(dirname "$0")/gpu_env.sh"   # $OUT, the DSL tarball, PYTHONPATH
T0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - T0 ))s] $*"; }
steps=${*:-env live chapter}
for step in $steps; do
  case $step in
    env)
      stamp env
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
      python3 -c "import cupy, cutlass; print('cupy', cupy.__version__, 'cutlass', cutlass.__version__)"
      ;;
    live)
      stamp "tour.live_record (5 points)"
      timeout 300 python3 - "$OUT/gemm_tour_live_h100.json" <<'PY' 2>&1 | tee "$OUT/gemm_tour_live.log" | tail -20
import json, sys
from layoutlab.bench import tour
from layoutlab.bench.gemm import format_table
rec = tour.live_record()
open(sys.argv[1], "w").write(json.dumps(rec, indent=1))
print(format_table(rec["rows"], rec["info"], rec["notes"]))
PY
      ;;
    chapter)
      stamp "chapter 9, live"
      timeout 400 python3 -m pytest -q -p no:cacheprovider --nbmake chapters/09_gemm.ipynb 2>&1 | tee "$OUT/gemm_tour_chapter.log" | tail -15
      ;;
  esac
done
stamp done
