#!/bin/bash
# Chapter 9's measured pipeline timeline: the Hopper GEMMs built with config.timeline=True on the H100.
# Usage (on the GPU machine, repo root): bash tools/gemm_timeline_gpu_run.sh
# Writes $OUT/gemm_timeline_h100.json (and results/gemm_timeline_h100.json.gz in the working tree),
# $OUT/gemm_timeline.log and two pictures $OUT/timeline_gemm_hopper_ws.png, $OUT/timeline_gemm_hopper.png.
# About 1-2 minutes: 4 kernel compiles (each kernel with the option on and off), then the pytest run
# compiles the two instrumented kernels once more.
#
# What it does:
#  1. checks both instrumented kernels (bf16, 1000 x 1032 x 1096 TN, standard-normal data) against a float64
#     reference and bitwise against the uninstrumented build (the stamps must not change the arithmetic);
#  2. records the timeline of gemm_hopper_ws and gemm_hopper at 4096 x 4096 x 4096 bf16 (3 launches, the
#     buffer keeps the last): 4 CTAs each, all 4 tiles of a gemm_hopper_ws CTA, the one tile of a gemm_hopper CTA;
#  3. validates each record (every event present, program order, stages, causality, stage reuse) and prints
#     a per-role summary; 4. runs the recorded-file and live tests of tests/kernels/test_timeline.py.
#
# A good run prints, per kernel, "check ... rel err vs float64 ~3e-3 ..., identical to the uninstrumented
# build: True, words written N" (N > 0), then "recorded <kernel> 4096x4096x4096: <n> events, clock
# {'source': 'globaltimer', ...}" (or the clock64 fallback if %globaltimer ticks coarsely: the record says
# which) with "validate: {... 'complete': 48 ...}" for gemm_hopper_ws (4 CTAs x 3 roles x 4 tiles) and
# 'complete': 12 for gemm_hopper, a summary like
#   gemm_hopper_ws: 64 k-tiles per tile, steady state ~5-7 TFLOP/s per SM
#     producer    ctas=4 span_us=... wait_fraction=0.8-1.0 (it mostly waits for free stages) mean_load_latency_ns=...
#     consumer 0  ... mma_in_flight_fraction=0.8-0.95 ... k_tile_period_ns=~600-800 ...
# "wrote ... checks ok", "record exit 0", the picture line, and a pytest line with 3 passed (recorded file,
# live ws, live plain), no failure.
source "$(dirname "$0")/gpu_env.sh"   # $OUT, the DSL tarball, PYTHONPATH
T0=$(date +%s)
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "== [$(( $(date +%s) - T0 ))s] check + record"
  timeout 180 python3 -m layoutlab.bench.timeline "$OUT/gemm_timeline_h100.json"
  echo "record exit $?"
  gzip -9 -c "$OUT/gemm_timeline_h100.json" > results/gemm_timeline_h100.json.gz 2>/dev/null   # ~1.8 MB of events: kept packed
  echo "== [$(( $(date +%s) - T0 ))s] pictures"
  timeout 60 python3 - "$OUT" <<'PY' 2>&1 | tail -4
import sys
from pathlib import Path
from layoutlab import gpu, viz
rec = gpu.load_result("gemm_timeline_h100")
for r in rec["records"]:
    path = Path(sys.argv[1]) / f"timeline_{r['kernel']}.png"
    path.write_bytes(viz.figure_to_png(viz.draw_pipeline_timeline(rec, kernel=r["kernel"]), dpi=100))
    print("picture", path)
PY
  echo "== [$(( $(date +%s) - T0 ))s] recorded-file and live tests"
  timeout 150 python3 -m pytest -q -p no:cacheprovider -m "gpu or not gpu" tests/kernels/test_timeline.py -k "recorded or live" 2>&1 | tail -6
  echo "== [$(( $(date +%s) - T0 ))s] done"
} 2>&1 | tee "$OUT/gemm_timeline.log"
