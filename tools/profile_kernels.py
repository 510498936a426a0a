"""Launch each kernel whose speed target was missed (or is weak) exactly once after compiling, for ncu.

    ncu --profile-from-start off ... python tools/profile_kernels.py [NAME...]

Run under `ncu` (tools/profile_run.sh): compile and warm-up first, then one launch per kernel inside a
cudaProfilerStart/Stop range. Arguments keep only the cases whose name contains one (e.g. ``gemm_ampere``).
"""
import sys


def main(argv):
    import cupy as cp
    import torch

    from layoutlab.kernels import gemm_ampere, gemm_hopper_fp8, gemm_hopper_streamk, gemm_hopper_ws, sgemm_fast

    def operands(layout, m, n, k, dtype):
        """A (M, K) and B (K, N): "NT" A M-major and B N-major; "TN" both K-major."""
        shapes = ((k, m), (k, n)) if layout == "NT" else ((m, k), (n, k))
        a, b = (cp.random.standard_normal(shape, dtype=cp.float32).astype(dtype) for shape in shapes)
        return (a.T, b) if layout == "NT" else (a, b.T)

    def bf16_tn(m, n, k):
        a, b = (torch.randn(shape, device="cuda").to(torch.bfloat16) for shape in ((m, k), (n, k)))
        return a, b.T

    def cublas(A, B, C=None):
        return torch.matmul(A, B) if C is None else torch.matmul(A, B, out=C)

    def fp8_tn(m, n, k):
        a, b = (torch.randn(shape, device="cuda").to(torch.float8_e4m3fn) for shape in ((m, k), (n, k)))
        return a, b.T

    def cublaslt_fp8(A, B, C=None):   # issue 30's reference: per-tensor scales, bf16 out, default accumulation
        one = torch.ones((), device="cuda")
        return torch._scaled_mm(A, B, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    def fp8_block(A, B, C=None):      # DeepSeek-style 1 x 128 / 128 x 128 scales, made once per shape
        m, k = A.shape
        n = B.shape[1]
        if (m, n, k) not in block_scales:
            block_scales[(m, n, k)] = (torch.rand((m, k // 128), device="cuda") + 0.5,
                                       torch.rand((n // 128, k // 128), device="cuda") + 0.5)
        sa, sb = block_scales[(m, n, k)]
        return gemm_hopper_fp8(A, B, C, scale_a=sa, scale_b=sb)

    block_scales = {}

    def streamk(split):
        return lambda A, B, C=None: gemm_hopper_streamk(A, B, C, split=split)

    cases = [("sgemm_fast NT fp32 4096^3", sgemm_fast, lambda: operands("NT", 4096, 4096, 4096, cp.float32)),
             ("sgemm_fast TN fp32 4096^3", sgemm_fast, lambda: operands("TN", 4096, 4096, 4096, cp.float32)),
             ("gemm_ampere TN fp16 8192^3", gemm_ampere, lambda: operands("TN", 8192, 8192, 8192, cp.float16)),
             ("gemm_hopper_ws TN fp16 4096x14336x4096", gemm_hopper_ws,
              lambda: operands("TN", 4096, 14336, 4096, cp.float16)),
             # issue 25: the top rung (its rule does not split at 4096^3) against cuBLAS, and the split's share
             ("top4096 gemm_hopper_streamk TN bf16 4096^3", gemm_hopper_streamk, lambda: bf16_tn(4096, 4096, 4096)),
             ("top4096 cublas TN bf16 4096^3", cublas, lambda: bf16_tn(4096, 4096, 4096)),
             ("fixup8192 gemm_hopper_streamk split TN bf16 8192^3", streamk(True), lambda: bf16_tn(8192, 8192, 8192)),
             ("fixup8192 gemm_hopper_streamk nosplit TN bf16 8192^3", streamk(False),
              lambda: bf16_tn(8192, 8192, 8192)),
             # issue 30: the fp8 rung (default configuration, per-tensor scales) against cuBLASLt fp8
             ("fp8 gemm_hopper_fp8 e4m3 8192^3", gemm_hopper_fp8, lambda: fp8_tn(8192, 8192, 8192)),
             ("fp8 gemm_hopper_fp8 block e4m3 8192^3", fp8_block, lambda: fp8_tn(8192, 8192, 8192)),
             ("fp8 cublaslt e4m3 8192^3", cublaslt_fp8, lambda: fp8_tn(8192, 8192, 8192))]
    cases = [(name, kernel, make()) for name, kernel, make in cases if not argv or any(a in name for a in argv)]
    for name, kernel, (A, B) in cases:       # compile and warm up outside the profiled range
        C = kernel(A, B)
        kernel(A, B, C)
    cp.cuda.Device().synchronize()
    torch.cuda.synchronize()
    cp.cuda.profiler.start()
    for name, kernel, (A, B) in cases:
        print("profiling", name, flush=True)
        kernel(A, B)
        torch.cuda.synchronize()
    cp.cuda.Device().synchronize()
    cp.cuda.profiler.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
