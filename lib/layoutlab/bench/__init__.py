"""Benchmarks: ``python -m layoutlab.bench`` (algebra and widget redraw) and
``python -m layoutlab.bench.gemm`` (GEMM kernels against cuBLAS, GPU only)."""
