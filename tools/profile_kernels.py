"""Launch each kernel whose speed target was missed (or is weak) exactly once after compiling, for ncu.

    ncu --profile-from-start off ... python tools/profile_kernels.py [NAME...]

Run under `ncu` (tools/profile_run.sh): compile and warm-up first, then one launch per kernel inside a
cudaProfilerStart/Stop range. Arguments keep only the cases whose name contains one (e.g. ``gemm_ampere``).
"""
import sys


def main(argv):
    import cupy as cp

    from layoutlab.kernels import gemm_ampere, gemm_hopper_ws, sgemm_fast

    def operands(layout, m, n, k, dtype):
        """A (M, K) and B (K, N): "NT" A M-major and B N-major; "TN" both K-major."""
        shapes = ((k, m), (k, n)) if layout == "NT" else ((m, k), (n, k))
        a, b = (cp.random.standard_normal(shape, dtype=cp.float32).astype(dtype) for shape in shapes)
        return (a.T, b) if layout == "NT" else (a, b.T)

    cases = [("sgemm_fast NT fp32 4096^3", sgemm_fast, operands("NT", 4096, 4096, 4096, cp.float32)),
             ("sgemm_fast TN fp32 4096^3", sgemm_fast, operands("TN", 4096, 4096, 4096, cp.float32)),
             ("gemm_ampere TN fp16 8192^3", gemm_ampere, operands("TN", 8192, 8192, 8192, cp.float16)),
             ("gemm_hopper_ws TN fp16 4096x14336x4096", gemm_hopper_ws, operands("TN", 4096, 14336, 4096, cp.float16))]
    cases = [c for c in cases if not argv or any(a in c[0] for a in argv)]
    for name, kernel, (A, B) in cases:       # compile and warm up outside the profiled range
        C = kernel(A, B)
        kernel(A, B, C)
    cp.cuda.Device().synchronize()
    cp.cuda.profiler.start()
    for name, kernel, (A, B) in cases:
        print("profiling", name, flush=True)
        kernel(A, B)
    cp.cuda.Device().synchronize()
    cp.cuda.profiler.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
