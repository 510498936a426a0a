#!/usr/bin/env bash
# Final GPU check of main: every kernel test file (one pytest each, in parallel), SIMT/Ampere in 5 parts, and
# compute-sanitizer on the stream-K rung (its host path changed after its last GPU run).
O=/tmp/out; mkdir -p $O; cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
tfile() { find tests -name "$1" | head -1; }
pids=()
for f in test_kernels_hopper.py test_kernels_specialized.py test_kernels_streamk.py test_kernels_pingpong.py \
         test_kernels_tma_copy.py test_kernels_wgmma_tile.py test_timeline.py test_gpu.py test_kernels_fp8.py; do
  timeout ${T:-380} python3 -m pytest -q -p no:cacheprovider -m gpu "$(tfile $f)" > $O/tests_${f%.py}.log 2>&1 &
  pids+=($!)
done
i=0
for k in "sgemm_matches and sgemm_simple" "sgemm_matches and sgemm_fast" "ampere_matches and float16" \
         "ampere_matches and bfloat16" "alpha or wrong_dtypes"; do
  timeout ${T:-380} python3 -m pytest -q -p no:cacheprovider -m gpu -k "$k" "$(tfile test_kernels_simt_ampere.py)" \
    > $O/tests_simt_part$i.log 2>&1 &
  pids+=($!); i=$((i + 1))
done
for tool in memcheck racecheck synccheck; do
  timeout ${T:-380} compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
    python3 "$(tfile test_kernels_streamk.py)" sanitize > $O/sanitize_streamk_$tool.log 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
python3 -c "import torch, cutlass; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cutlass-dsl', getattr(cutlass, '__version__', '?'))" >> $O/gpu.txt 2>&1
date -u >> $O/gpu.txt
for f in $O/tests_*.log; do echo "$(basename $f): $(grep -E '[0-9]+ (passed|failed|error|skipped)' $f | tail -1)"; done | tee $O/summary.txt
for tool in memcheck racecheck synccheck; do echo "$tool: $(grep -E 'SUMMARY' $O/sanitize_streamk_$tool.log | tail -1)"; done | tee -a $O/summary.txt
grep -h -E "^(FAILED|ERROR)" $O/tests_*.log | head -20
cat $O/gpu.txt
