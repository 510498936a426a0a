#!/bin/bash
# Chapter 8 on the H100: the descriptor/swizzle-mode probe and the minimal one-warpgroup wgmma kernel.
# Usage (on the GPU machine, repo root): bash tools/gmma_gpu_run.sh [env] [probe] [tile] [tests]  (default: all)
# Writes $OUT/gmma_probe_h100.json, $OUT/wgmma_tile_h100.json and logs (and copies the JSON to results/).
source "$(dirname "$0")/gpu_env.sh"   # $OUT, the DSL tarball, PYTHONPATH
T0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - T0 ))s] $*"; }
steps=${*:-env probe tile tests}
for step in $steps; do
  case $step in
    env)
      stamp env
      nvidia-smi --query-gpu=name,driver_version --format=csv
      nvcc --version | tail -1
      python3 -c "import cupy, torch, cutlass; print('cupy', cupy.__version__, 'torch', torch.__version__, 'cutlass', cutlass.__version__)"
      ;;
    probe)
      stamp "probe (117 wgmma launches, descriptors from layoutlab.nvgpu.gmma)"
      timeout 240 python3 -m layoutlab.probe.gmma "$OUT/gmma_probe_h100.json" 2>&1 | tee "$OUT/gmma_probe.log" | tail -40
      cp "$OUT/gmma_probe_h100.json" results/ 2>/dev/null
      ;;
    tile)
      stamp "wgmma_tile (76 kernels vs float64)"
      timeout 400 python3 -m layoutlab.kernels.wgmma_tile "$OUT/wgmma_tile_h100.json" 2>&1 | tee "$OUT/wgmma_tile.log" | tail -30
      cp "$OUT/wgmma_tile_h100.json" results/ 2>/dev/null
      ;;
    tests)
      stamp tests
      timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/kernels/test_kernels_wgmma_tile.py tests/nvgpu/test_probe_gmma.py 2>&1 | tee "$OUT/gmma_tests.log" | tail -15
      ;;
  esac
done
stamp done
