# Sourced by the GPU run scripts here (run from the repository root on the GPU machine): $OUT, the unpacked
# CuTe DSL / notebook tarball (.device/, see ../shared/device/README.md), PYTHONPATH, and the DSL compiling
# for the GPU it finds.
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
mkdir -p /tmp/site && [ -f /tmp/site/.unpacked ] || { tar -C /tmp/site -xJf .device/gpu-deps-py312.tar.xz && touch /tmp/site/.unpacked; }
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages:$PWD/lib:$PWD/tests MPLBACKEND=Agg PYTHONUNBUFFERED=1
unset CUTE_DSL_ARCH
