"""``sgemm_simple``: the blocked SIMT GEMM of the CuTe tutorial (``sgemm_nt_1``), in the CuTe DSL.

This is the course's baseline GEMM, written to be read rather than to be fast. One CTA of 256 threads
computes one 128x128 tile of ``C``; the k-loop walks K in steps of 8::

    for each k-tile:
        global -> shared   A tile (128x8) and B tile (128x8), one element per thread per step
        sync
        shared -> FMA      every thread owns an 8x8 block of C, strided by 16 in M and N
        sync

The three layouts that drive it are the tutorial's:

* block tiles ``(bM, bN, bK) = (128, 128, 8)``;
* copy thread layouts ``tA = tB`` of shape ``(32, 8)``: 256 threads cover an ``(M, K)`` = 128x8 tile in
  4 steps. Their stride follows the operand's contiguous mode, so a warp always reads one contiguous run
  of global memory (coalesced);
* compute thread layout ``tC = (16, 16):(1, 16)``: thread ``t`` owns ``C[t % 16 + 16 i, t // 16 + 16 j]``
  for ``i, j`` in ``0..7``.

Shared memory holds both tiles M-major (N-major for B) with a padded leading dimension
``bM + 4 = 132``: reads by the compute threads (16 consecutive ``m`` at one ``k``) hit 16 distinct banks,
and the transposing writes of a K-major operand (8 ``k`` x 4 ``m`` per warp) land on banks
``(m + 4 k) mod 32``, all distinct.

Operands: fp32 only; every majorness of A and B (TN, NT, NN, TT) and C row- or column-major; any
M, N, K >= 1 (every global access is predicated on its coordinate). ``C = alpha * A @ B + beta * C``;
with ``beta == 0`` C is never read (so C may hold NaN).

Example (on a GPU)::

    >>> import cupy as cp
    >>> from layoutlab.kernels import sgemm_simple
    >>> A = cp.random.rand(300, 70, dtype=cp.float32); B = cp.random.rand(70, 200, dtype=cp.float32)
    >>> C = sgemm_simple(A, B)
    >>> bool(cp.allclose(C, A @ B, rtol=1e-5))
    True
"""

import cutlass
import cutlass.cute as cute

from ._common import GemmLauncher, operand_tensors

__all__ = ["sgemm_simple", "SgemmSimple"]


class SgemmSimple:
    """The compile-time configuration of the simple SIMT GEMM: majorness of A, B, C and the tile sizes.

    ``a_major`` is ``"M"``/``"K"``, ``b_major`` is ``"N"``/``"K"``, ``c_major`` is ``"M"``/``"N"``.
    Inside the kernel B is viewed as an (N, K) tensor, as CuTe does, so both operands are tiled alike.

    >>> k = SgemmSimple("M", "N", "N")                   # NT: A M-major, B N-major, C row-major
    >>> (k.bM, k.bN, k.bK), k.threads, k.smem_bytes()    # two padded (128 + 4) x 8 fp32 tiles + 64 bytes
    ((128, 128, 8), 256, 8512)
    """

    bM, bN, bK = 128, 128, 8
    threads = 256
    pad = 4  # words added to each smem column; see the module docstring for the bank arithmetic

    def __init__(self, a_major, b_major, c_major, dtype=cutlass.Float32):
        self.a_major, self.b_major, self.c_major = a_major, b_major, c_major
        self.dtype = dtype

    @staticmethod
    def _copy_threads(contiguous_first):
        """(32, 8) threads over an (MN, K) tile; consecutive threads walk the contiguous mode."""
        if contiguous_first:
            return cute.make_layout((32, 8), stride=(1, 32))
        return cute.make_layout((32, 8), stride=(8, 1))

    def smem_bytes(self):
        return 2 * (self.bM + self.pad) * self.bK * 4 + 64

    @cute.jit
    def run(self, pA: cute.Pointer, pB: cute.Pointer, pC: cute.Pointer, M: cutlass.Int32, N: cutlass.Int32,
            K: cutlass.Int32, ldA: cutlass.Int32, ldB: cutlass.Int32, ldC: cutlass.Int32,
            alpha: cutlass.Float32, beta: cutlass.Float32, stream):
        mA, mB, mC = operand_tensors(self, pA, pB, pC, M, N, K, ldA, ldB, ldC, vec=1)
        sA_layout = cute.make_layout((self.bM, self.bK), stride=(1, self.bM + self.pad))
        sB_layout = cute.make_layout((self.bN, self.bK), stride=(1, self.bN + self.pad))
        tA = self._copy_threads(self.a_major == "M")
        tB = self._copy_threads(self.b_major == "N")
        tC = cute.make_layout((16, 16), stride=(1, 16))
        grid = (cute.ceil_div(cute.size(mC, mode=[0]), self.bM),
                cute.ceil_div(cute.size(mC, mode=[1]), self.bN), 1)
        self.kernel(mA, mB, mC, sA_layout, sB_layout, tA, tB, tC, alpha, beta).launch(
            grid=grid, block=(self.threads, 1, 1), smem=self.smem_bytes(), stream=stream)

    @cute.kernel
    def kernel(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor,
               sA_layout: cute.Layout, sB_layout: cute.Layout,
               tA: cute.Layout, tB: cute.Layout, tC: cute.Layout,
               alpha: cutlass.Float32, beta: cutlass.Float32):
        tid, _, _ = cute.arch.thread_idx()
        bm, bn, _ = cute.arch.block_idx()
        M, K = mA.shape
        N = mB.shape[0]

        # This CTA's tiles: gA is (bM, bK, k-tiles), gB is (bN, bK, k-tiles), gC is (bM, bN).
        gA = cute.local_tile(mA, (self.bM, self.bK), (bm, None))
        gB = cute.local_tile(mB, (self.bN, self.bK), (bn, None))
        gC = cute.local_tile(mC, (self.bM, self.bN), (bm, bn))
        # The same tiling of identity tensors gives each element's global (row, col) for predication.
        cA = cute.local_tile(cute.make_identity_tensor(mA.shape), (self.bM, self.bK), (bm, None))
        cB = cute.local_tile(cute.make_identity_tensor(mB.shape), (self.bN, self.bK), (bn, None))
        cC = cute.local_tile(cute.make_identity_tensor(mC.shape), (self.bM, self.bN), (bm, bn))

        smem = cutlass.memory.SmemAllocator()
        sA = smem.allocate_tensor(self.dtype, sA_layout, 16)
        sB = smem.allocate_tensor(self.dtype, sB_layout, 16)

        # Copy partitions: thread tid moves elements (tid's position in tA) + (32, 8) * (i, 0).
        tAgA = cute.local_partition(gA, tA, tid)   # (4, 1, k-tiles)
        tAcA = cute.local_partition(cA, tA, tid)
        tAsA = cute.local_partition(sA, tA, tid)   # (4, 1)
        tBgB = cute.local_partition(gB, tB, tid)
        tBcB = cute.local_partition(cB, tB, tid)
        tBsB = cute.local_partition(sB, tB, tid)

        # Compute partitions: project tC onto the M mode for A, onto the N mode for B.
        tCsA = cute.local_partition(sA, tC, tid, proj=(1, None))   # (8, bK)
        tCsB = cute.local_partition(sB, tC, tid, proj=(None, 1))   # (8, bK)
        tCgC = cute.local_partition(gC, tC, tid, proj=(1, 1))      # (8, 8)
        tCcC = cute.local_partition(cC, tC, tid, proj=(1, 1))

        acc = cute.make_rmem_tensor(tCgC.shape, self.dtype)
        acc.fill(0.0)

        k_tiles = cute.ceil_div(K, self.bK)
        for kt in range(k_tiles):
            # global -> shared, element by element; out-of-range elements become 0 so they add nothing.
            tAgA_k, tAcA_k = tAgA[None, None, kt], tAcA[None, None, kt]
            tBgB_k, tBcB_k = tBgB[None, None, kt], tBcB[None, None, kt]
            for i in cutlass.range_constexpr(cute.size(tAsA)):
                value = self.dtype(0.0)
                if cute.elem_less(tAcA_k[i], (M, K)):
                    value = tAgA_k[i]
                tAsA[i] = value
            for i in cutlass.range_constexpr(cute.size(tBsB)):
                value = self.dtype(0.0)
                if cute.elem_less(tBcB_k[i], (N, K)):
                    value = tBgB_k[i]
                tBsB[i] = value
            cute.arch.sync_threads()

            # shared -> registers -> FMA: the outer product of an 8-column of A and an 8-row of B per k.
            for k in cutlass.range_constexpr(self.bK):
                for m in cutlass.range_constexpr(8):
                    for n in cutlass.range_constexpr(8):
                        acc[m, n] += tCsA[m, k] * tCsB[n, k]
            cute.arch.sync_threads()

        # Epilogue: C = alpha * acc + beta * C, only where the coordinate is inside C.
        for i in cutlass.range_constexpr(cute.size(acc)):
            if cute.elem_less(tCcC[i], (M, N)):
                result = alpha * acc[i]
                if beta != 0.0:
                    result += beta * tCgC[i]
                tCgC[i] = result


_launcher = GemmLauncher(
    "sgemm_simple", dtypes=("float32",), layouts=("TN", "NT", "NN", "TT"),
    build=lambda problem, vec, even: SgemmSimple(problem.a_major, problem.b_major, problem.c_major))


def sgemm_simple(A, B, C=None, *, alpha=1.0, beta=0.0):
    """``C = alpha * A @ B + beta * C`` with the simple blocked SIMT kernel (fp32, all of TN/NT/NN/TT).

    ``A`` is (M, K), ``B`` is (K, N), ``C`` is (M, N) (row-major ``float32`` allocated when ``None``).
    Returns ``C``. Raises :class:`~layoutlab.errors.LayoutError` for a dtype other than float32, mismatched
    shapes or an operand with no contiguous mode. Example: ``sgemm_simple(A, B, alpha=2.0)``.
    """
    return _launcher(A, B, C, alpha=alpha, beta=beta)
