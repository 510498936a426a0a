#!/bin/bash
# One device call: Nsight Compute profile of the kernels that miss their targets (issue 7 asks what limits
# them). Clocks are left as the card has them (--clock-control none). Writes under $OUT.
mkdir -p /tmp/site && tar -C /tmp/site -xJf .device/gpu-deps-py312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages:$PWD/lib MPLBACKEND=Agg PYTHONUNBUFFERED=1
unset CUTE_DSL_ARCH
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/env.txt
timeout 280 ncu --clock-control none --profile-from-start off --target-processes all \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
  --section Occupancy --section LaunchStats --section SchedulerStats --section MemoryWorkloadAnalysis \
  python3 tools/profile_kernels.py > $OUT/ncu_profile.txt 2>&1
echo "ncu rc $?" >> $OUT/ncu_profile.txt
grep -E "profiling|==PROF==|Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|No Eligible|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Block Limit|Stall|Warp Cycles Per Issued|Executed Ipc|One or More Eligible|ncu rc|Error|error" $OUT/ncu_profile.txt | head -120
