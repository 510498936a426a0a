#!/bin/bash
# Chapter 7's H100 run: the TMA placement probe (layoutlab.probe.tma) and the live chapter-7 tests.
# Usage (on the GPU machine, repo root): bash tools/tma_gpu_run.sh
# Writes $OUT/tma_probe_h100.json (copy it to results/tma_probe_h100.json) and $OUT/tma_probe.log;
# also writes results/tma_probe_h100.json in the working tree.  About 1-2 minutes (each case runs in its own
# process: 8 cases + 2 multicast clusters + 1 misaligned buffer + 2 refused configurations).
#
# A good run prints the compare() summary with "checked": 8, "bytes": 73728, "mismatches": [] and
# "cute_view_mismatches": [], both "multicast" entries "ran" / "every CTA holds the whole tile", the
# "misaligned" entry ("ran" and either "as the model says..." or a byte count -- both are results worth
# recording), the two "refused" entries with whatever happened (an error from the driver at launch is the
# expected outcome), "probe exit 0", and then the pytest line of tests/kernels/test_kernels_tma_copy.py with no failure
# (the live test and the recorded-probe test included).
source "$(dirname "$0")/gpu_env.sh"   # $OUT, the DSL tarball, PYTHONPATH
{
  nvidia-smi --query-gpu=name,driver_version --format=csv
  echo "== probe"
  timeout 300 python3 -m layoutlab.probe.tma "$OUT/tma_probe_h100.json"
  echo "probe exit $?"
  cp "$OUT/tma_probe_h100.json" results/tma_probe_h100.json 2>/dev/null
  echo "== recorded-probe and live tests"
  timeout 200 python3 -m pytest -q -p no:cacheprovider -m "gpu or not gpu" tests/kernels/test_kernels_tma_copy.py 2>&1 | tail -8
} 2>&1 | tee "$OUT/tma_probe.log"
