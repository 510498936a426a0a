#!/bin/bash
# One device call for sgemm_simple / sgemm_fast / gemm_ampere (run from the repo root on the GPU machine):
#  A. compile + time the sweep candidates (tools/simt_ampere_sweep.py; timing waits until the tests of
#     this phase are done), check every gemm_ampere candidate at odd sizes, GPU tests of the SIMT kernels;
#  B. time the sweep alone; name the gemm_ampere candidate to adopt (pick prints it, changes nothing);
#  C. GPU tests of gemm_ampere with that default, compute-sanitizer memcheck + racecheck of all three;
#  D. the full benchmark of all five kernels (python -m layoutlab.bench.gemm).
#  E. (if $PROFILE is set) ncu of the profile_kernels.py cases it names.
# At most 8 files come back: sweep.json, bench.json, bench.log, checks.log, ncu_profile.txt (everything else, rebuilt
# after each phase, so a run cut short still returns what it did).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT /tmp/parts /tmp/cubins
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 ))s] $*" | tee -a /tmp/parts/00_stamps; }
collect() { for f in /tmp/parts/*; do echo "##### $(basename $f)"; cat $f; done > $OUT/checks.log 2>&1; }
mkdir -p /tmp/site && tar -C /tmp/site -xJf .device/gpu-deps-py312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages:$PWD/lib MPLBACKEND=Agg PYTHONUNBUFFERED=1
unset CUTE_DSL_ARCH
export AMPERE_OLD_DIR=${AMPERE_OLD_DIR:-$PWD/.device}  # older gemm_ampere.py files the sweep times (see its AMPERE list)
T=tests/kernels/test_kernels_simt_ampere.py; S="tools/simt_ampere_sweep.py"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
  python3 -c "import cupy, torch, sys; from importlib.metadata import version; print('python', sys.version.split()[0], 'cupy', cupy.__version__, 'torch', torch.__version__, 'nvidia-cutlass-dsl', version('nvidia-cutlass-dsl'), 'cuda runtime', cupy.cuda.runtime.runtimeGetVersion())"
} > /tmp/parts/01_env 2>&1
stamp "A: sweep compile + candidate checks + SIMT tests"
rm -f /tmp/go
( CUTE_DSL_KEEP=cubin CUTE_DSL_DUMP_DIR=/tmp/cubins BENCH_WAIT_FOR=/tmp/go timeout 230 \
    python3 $S time $OUT/sweep.json > /tmp/parts/10_sweep 2>&1; echo "sweep rc $?" >> /tmp/parts/10_sweep ) &
SW=$!
( timeout 120 python3 $S check 0 2 /tmp/check0.json > /tmp/parts/11_check0 2>&1; echo "check rc $?" >> /tmp/parts/11_check0 ) &
C0=$!
( timeout 120 python3 $S check 1 2 /tmp/check1.json > /tmp/parts/12_check1 2>&1; echo "check rc $?" >> /tmp/parts/12_check1 ) &
C1=$!
( timeout 120 python3 -m pytest -m gpu $T -q -p no:cacheprovider -k sgemm > /tmp/parts/20_pytest_simt 2>&1
  echo "pytest rc $?" >> /tmp/parts/20_pytest_simt ) &
P0=$!
wait $C0 $C1 $P0
collect
stamp "B: sweep timing"
touch /tmp/go
wait $SW
stamp "pick"
python3 $S pick $OUT/sweep.json /tmp/check0.json /tmp/check1.json > /tmp/parts/30_pick 2>&1
grep -n "^DEFAULT_CONFIG" lib/layoutlab/kernels/ampere.py >> /tmp/parts/30_pick
collect
stamp "C: gemm_ampere tests + sanitizers"
( timeout 140 python3 -m pytest -m gpu $T -q -p no:cacheprovider -k "not sgemm" > /tmp/parts/40_pytest_ampere 2>&1
  echo "pytest rc $?" >> /tmp/parts/40_pytest_ampere ) &
P1=$!
( timeout 140 compute-sanitizer --tool memcheck --report-api-errors no python3 $T sanitize > /tmp/parts/41_memcheck 2>&1
  echo "memcheck rc $?" >> /tmp/parts/41_memcheck ) &
P2=$!
( timeout 140 compute-sanitizer --tool racecheck python3 $T sanitize > /tmp/parts/42_racecheck 2>&1
  echo "racecheck rc $?" >> /tmp/parts/42_racecheck ) &
P3=$!
wait $P1 $P2 $P3
{ for f in /tmp/cubins/*.cubin.bin; do
    echo "== $(basename $f)"
    cuobjdump --dump-resource-usage $f 2>&1 | grep -E "REG|STACK|LOCAL" | head -3
    cuobjdump --dump-sass $f > /tmp/sass.txt 2>&1
    for i in LDGSTS LDSM HMMA FFMA LDS.128 LDG.E.128 STS " LDL" " STL" BAR.SYNC; do printf "%s=%s " "$i" "$(grep -c -- "$i" /tmp/sass.txt)"; done; echo
  done; } > /tmp/parts/50_sass 2>&1
collect
stamp "D: full benchmark"
timeout ${BENCH_TIMEOUT:-170} python3 -m layoutlab.bench.gemm --json $OUT/bench.json > $OUT/bench.log 2>&1
echo "bench rc $?" >> $OUT/bench.log
if [ -n "$PROFILE" ]; then   # E (optional): ncu of the named cases, e.g. PROFILE="gemm_ampere sgemm_fast TN"
  stamp "E: ncu $PROFILE"
  timeout 200 ncu --clock-control none --profile-from-start off --target-processes all \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy \
    --section LaunchStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    python3 tools/profile_kernels.py $PROFILE > $OUT/ncu_profile.txt 2>&1
  echo "ncu rc $?" >> $OUT/ncu_profile.txt
fi
stamp done
collect
echo "=== summary"; grep -hE "passed|failed|rc |SUMMARY|pick|worst|^== " $OUT/checks.log | grep -v "^== \[" | head -60
grep -v "^compiled" /tmp/parts/10_sweep | tail -16
tail -30 $OUT/bench.log
[ -n "$PROFILE" ] && grep -E "profiling|Duration|SM Frequency|Issue Slots Busy|No Eligible|Registers Per|Stall|ncu rc" $OUT/ncu_profile.txt | head -40
