#!/bin/bash
# One device call for sgemm_simple / sgemm_fast / gemm_ampere: GPU correctness tests, compute-sanitizer
# (memcheck + racecheck) and, once those are done, the timing against cupy.matmul; SASS resource usage
# of every benchmarked kernel. Run from the repo root on the GPU machine; writes under $OUT.
# Usage: bash results/simt_ampere_run.sh [pytest -k expression]
mkdir -p /tmp/site && tar -C /tmp/site -xJf .device/gpu-deps-py312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages:$PWD/lib MPLBACKEND=Agg PYTHONUNBUFFERED=1
unset CUTE_DSL_ARCH
OUT=${OUT:-/tmp/out}; mkdir -p $OUT /tmp/cubins
T=tests/test_kernels_simt_ampere.py
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
  python3 -c "import cupy, torch, cutlass, sys; print('python', sys.version.split()[0], 'cupy', cupy.__version__, 'torch', torch.__version__, 'cutlass-dsl', cutlass.__version__ if hasattr(cutlass, '__version__') else '4.8.1', 'cuda runtime', cupy.cuda.runtime.runtimeGetVersion())"
} > $OUT/env.txt 2>&1
rm -f /tmp/tests_done
# the benchmark process compiles everything now, and times only after /tmp/tests_done appears
( CUTE_DSL_KEEP=cubin CUTE_DSL_DUMP_DIR=/tmp/cubins BENCH_WAIT_FOR=/tmp/tests_done timeout 235 \
    python3 $T bench $OUT/bench.json > $OUT/bench.log 2>&1; echo "bench rc $?" >> $OUT/bench.log ) &
BENCH=$!
( timeout 150 python3 -m pytest -n 12 -m gpu $T -q -p no:cacheprovider ${1:+-k "$1"} > $OUT/pytest.log 2>&1
  echo "pytest rc $?" >> $OUT/pytest.log ) &
P1=$!
( timeout 150 compute-sanitizer --tool memcheck --report-api-errors no python3 $T sanitize > $OUT/memcheck.log 2>&1
  echo "memcheck rc $?" >> $OUT/memcheck.log ) &
P2=$!
( timeout 150 compute-sanitizer --tool racecheck python3 $T sanitize > $OUT/racecheck.log 2>&1
  echo "racecheck rc $?" >> $OUT/racecheck.log ) &
P3=$!
wait $P1 $P2 $P3
touch /tmp/tests_done
wait $BENCH
{ for f in /tmp/cubins/*.cubin.bin; do
    echo "== $(basename $f)"
    cuobjdump --dump-resource-usage $f 2>&1 | grep -E "REG|STACK|LOCAL" | head -3
    cuobjdump --dump-sass $f > /tmp/sass.txt 2>&1
    for i in LDGSTS LDSM HMMA FFMA LDS.128 LDS " LDL" " STL" BAR.SYNC; do printf "%s=%s " "$i" "$(grep -c -- "$i" /tmp/sass.txt)"; done; echo
  done; } > $OUT/sass_summary.txt 2>&1
echo "=== pytest";  tail -25 $OUT/pytest.log
echo "=== memcheck"; grep -E "ERROR SUMMARY|sanitize runs|rc " $OUT/memcheck.log
echo "=== racecheck"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|sanitize runs|rc " $OUT/racecheck.log
echo "=== sass"; cat $OUT/sass_summary.txt
echo "=== bench"; grep -v "^compiled" $OUT/bench.log | tail -20
