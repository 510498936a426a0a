"""Timing on the GPU: :mod:`~layoutlab.bench.gemm` (the GEMM kernels against cuBLAS, ``python -m
layoutlab.bench.gemm``), :mod:`~layoutlab.bench.timeline` (record the Hopper GEMMs' pipeline timeline) and
:mod:`~layoutlab.bench.tour` (the GEMM tour's measured steps, recorded or live). The lab's sweeps, A/B comparisons
and profiling scripts are in the repository's ``tools/``."""
