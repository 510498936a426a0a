"""``sgemm_fast``: ``sgemm_simple`` made fast, one idea at a time (fp32 SIMT, CuTe DSL).

Same CTA tile as the baseline (128x128, 256 threads, 8x8 outputs per thread), but k-tiles of 16
(``bK``; 8 as in the baseline is available) to halve the per-tile overhead (barrier, copies,
predicates) per FMA; four changes:

1. **Vectorised 128-bit global copies** -- each thread moves 4 contiguous floats per instruction
   (``cp.async.cg ... 16`` or ``ld.global.v4``) instead of one.
2. **cp.async multi-stage pipeline** -- global->shared copies go straight to shared memory without
   passing through registers, ``stages`` k-tiles deep, so the load of tile ``k + stages - 1`` overlaps the
   FMAs of tile ``k``; one barrier per k-tile instead of two. Inside a tile, the shared->register loads
   of step ``k + 1`` are issued before the FMAs of step ``k`` (register double buffering), and CTAs take
   tiles in L2-friendly groups of 8 tile-rows (:func:`grouped_tile_coord`).
3. **Register blocking with 128-bit shared loads** -- each thread's 8 rows are not strided by 16 as in
   the baseline but come in two groups of 4 *contiguous* rows (``m = 4 t + {0..3}`` and ``64 + 4 t +
   {0..3}``), so they reach registers with ``ld.shared.v4``. This is a permutation of the tiled MMA's M
   (and N) mode: ``(16,4,2):(4,1,64)``. A warp covers 8 (M) x 4 (N) threads, so per k it reads 256 + 128
   distinct bytes of shared memory for 8 x 64 FMAs. This needs both operands MN-major in shared memory.
4. **K-major operands transposed on the way in** -- cp.async copies bytes, it cannot transpose, so a
   K-major operand (A in TN/TT, B in TN/NN) is *staged*: at the start of tile ``k`` each thread loads its
   vectors of tile ``k + stages - 1`` into registers (``ld.global.v4``: 4 consecutive k of one row), and
   at the end of tile ``k``, before the barrier, it stores them as 4 scalars into the MN-major tile. The
   global latency hides behind a whole tile of FMAs, and every layout runs the same inner loop.
5. **Bank-conflict-free shared memory** -- MN-major tiles from cp.async are stored unpadded (a warp's
   vector reads of 8 threads x 16 bytes cover 32 consecutive words). A staged tile has k-rows of
   ``128 + 4`` words: a warp of the staging copy is 8 rows x 4 k-groups, so its stores for one value
   land at word ``m + 132 (4 q + j)``, bank ``m + 16 q + 4 j mod 32``: 2-way conflicts instead of the
   4-way of an unpadded tile (a pad that removed them would break the 16-byte alignment of the
   ``ld.shared.v4`` reads; 16 conflicted stores per 1024 FMAs cost nothing measurable).

Operands: fp32; TN, NT, NN, TT; C row- or column-major; any M, N, K (vectors outside the matrix are
zero-filled in shared memory, the epilogue writes only in-range elements; operands that are not 16-byte
aligned get a kernel compiled with narrower copies). ``C = alpha * A @ B + beta * C``.

Speed (H100, same-run ratio to cuBLAS fp32, ``results/NOTES.md``): the benchmark (L2-cold operands, five
alternating 1-s rounds) records TN 0.95 at 4096^3 and 0.97 at 8192^3, NT 0.92 and 0.91. Before the
staging, TN kept K-major tiles, needed ~220 registers and reached 0.65.

Example (on a GPU)::

    >>> import cupy as cp
    >>> from layoutlab.kernels import sgemm_fast
    >>> A = cp.random.rand(1000, 300, dtype=cp.float32); B = cp.random.rand(300, 500, dtype=cp.float32)
    >>> bool(cp.allclose(sgemm_fast(A, B), A @ B, rtol=1e-5))
    True
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync

from ._common import GemmLauncher, grouped_tile_coord, operand_tensors

__all__ = ["sgemm_fast", "SgemmFast"]


class SgemmFast:
    """Compile-time configuration: majorness of A/B/C, vector width ``vec`` (floats per global load),
    pipeline depth ``stages``, k-tile depth ``bK`` (8 or 16), ``min_ctas`` (CTAs per SM that ptxas must
    leave registers for; 0 = no bound, the default: ptxas already lands at <= 128 registers = 2 CTAs per
    SM in NT and TN with C row-major, and the bound min_ctas = 2 made NT 14 % slower on the H100).
    Tile 128x128, 256 threads.

    >>> tn, nt = SgemmFast("K", "K", "N"), SgemmFast("M", "N", "N")
    >>> (tn.staged_a, tn.staged_b), (nt.staged_a, nt.staged_b)   # K-major goes through registers
    ((True, True), (False, False))
    >>> tn.smem_bytes()                  # 2 x (128 + 4) x bK 16 x 3 stages x 4 bytes + 256
    50944
    """

    bM, bN = 128, 128
    threads = 256
    mn_pad = 4  # floats added to each k-row of a transposed (staged) smem tile; see module docstring (5.)

    def __init__(self, a_major, b_major, c_major, vec=4, stages=3, bK=16, min_ctas=0, stage_mn=False):
        self.a_major, self.b_major, self.c_major = a_major, b_major, c_major
        self.dtype = cutlass.Float32
        self.vec, self.stages, self.bK, self.min_ctas = vec, stages, bK, min_ctas
        # A K-major operand cannot go through cp.async (it copies, it cannot transpose): it is loaded
        # into registers and stored transposed, so that every operand is MN-major in shared memory.
        # ``stage_mn`` stages MN-major operands too (registers instead of cp.async, no transpose): an
        # option for the next sweep, since staged TN ran 4 % faster than cp.async NT. Compiled and
        # PTX-checked on the CPU only, not yet run on a GPU; it needs 139 registers in NT (1 CTA/SM).
        self.staged_a, self.staged_b = a_major == "K" or stage_mn, b_major == "K" or stage_mn

    def smem_layout(self, rows, transposed):
        """(rows, bK, stages), MN-major; a transposed (K-major staged) tile has k-rows of ``rows + mn_pad``."""
        row = rows + (self.mn_pad if transposed else 0)
        return cute.make_layout((rows, self.bK, self.stages), stride=(1, row, row * self.bK))

    def smem_bytes(self):
        return 2 * (128 + self.mn_pad) * self.bK * self.stages * 4 + 256

    def g2s_copy(self, k_major, staged):
        """256 threads x ``vec`` floats over a (128, bK) tile; consecutive threads walk the contiguous
        mode. Not ``staged``: cp.async straight into shared memory. ``staged``: a plain (LDG) copy to
        registers, which the main loop stores to shared memory a tile later (transposed when K-major)."""
        bits = 32 * self.vec
        if staged:
            atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), self.dtype, num_bits_per_copy=bits)
        else:
            mode = cpasync.LoadCacheMode.GLOBAL if bits == 128 else cpasync.LoadCacheMode.ALWAYS
            atom = cute.make_copy_atom(cpasync.CopyG2SOp(cache_mode=mode), self.dtype, num_bits_per_copy=bits)
        if k_major:
            t_k = self.bK // self.vec
            threads = cute.make_layout((self.threads // t_k, t_k), stride=(t_k, 1))
            values = cute.make_layout((1, self.vec))
        else:
            t_mn = 128 // self.vec
            threads = cute.make_layout((t_mn, self.threads // t_mn), stride=(1, t_mn))
            values = cute.make_layout((self.vec, 1))
        return cute.make_tiled_copy_tv(atom, threads, values)

    @staticmethod
    def value_permutation():
        """How a thread's 8 rows (or columns) are spread over the 128 of the tile: 2 groups of 4
        contiguous ones (``m = 4 t + {0..3}`` and ``64 + 4 t + {0..3}``), so they load with ld.shared.v4."""
        return cute.make_layout((16, 4, 2), stride=(4, 1, 64))

    @cute.jit
    def run(self, pA: cute.Pointer, pB: cute.Pointer, pC: cute.Pointer, M: cutlass.Int32, N: cutlass.Int32,
            K: cutlass.Int32, ldA: cutlass.Int32, ldB: cutlass.Int32, ldC: cutlass.Int32,
            alpha: cutlass.Float32, beta: cutlass.Float32, stream):
        mA, mB, mC = operand_tensors(self, pA, pB, pC, M, N, K, ldA, ldB, ldC, vec=self.vec)
        sA_layout = self.smem_layout(self.bM, self.a_major == "K")
        sB_layout = self.smem_layout(self.bN, self.b_major == "K")
        copy_A = self.g2s_copy(self.a_major == "K", self.staged_a)
        copy_B = self.g2s_copy(self.b_major == "K", self.staged_b)
        # 16x16 threads, each an FMA "atom"; a warp is 8 (M) x 4 (N) threads: tid = m0 + 8 n0 + 32 m1 + 64 n1.
        thread_layout = cute.make_layout(((8, 2), (4, 4), 1), stride=((1, 32), (8, 64), 0))
        tiled_mma = cute.make_tiled_mma(
            cute.nvgpu.MmaUniversalOp(cutlass.Float32), thread_layout,
            permutation_mnk=(self.value_permutation(), self.value_permutation(), None))
        grid = (cute.ceil_div(M, self.bM), cute.ceil_div(N, self.bN), 1)
        self.kernel(mA, mB, mC, sA_layout, sB_layout, copy_A, copy_B, tiled_mma, alpha, beta).launch(
            grid=grid, block=(self.threads, 1, 1), smem=self.smem_bytes(), stream=stream,
            min_blocks_per_mp=self.min_ctas, preferred_smem_carveout=100 if self.min_ctas > 1 else None)

    @cute.kernel
    def kernel(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor,
               sA_layout: cute.Layout, sB_layout: cute.Layout,
               copy_A: cute.TiledCopy, copy_B: cute.TiledCopy, tiled_mma: cute.TiledMma,
               alpha: cutlass.Float32, beta: cutlass.Float32):
        tid, _, _ = cute.arch.thread_idx()
        bidx, bidy, _ = cute.arch.block_idx()
        M, K = mA.shape
        N = mB.shape[0]
        # CTA -> tile in groups of 8 tile-rows, so that CTAs running together share A and B in L2
        bm, bn = grouped_tile_coord(bidx, bidy, cute.ceil_div(M, self.bM), cute.ceil_div(N, self.bN))

        gA = cute.local_tile(mA, (self.bM, self.bK), (bm, None))
        gB = cute.local_tile(mB, (self.bN, self.bK), (bn, None))
        gC = cute.local_tile(mC, (self.bM, self.bN), (bm, bn))
        cA = cute.local_tile(cute.make_identity_tensor(mA.shape), (self.bM, self.bK), (bm, None))
        cB = cute.local_tile(cute.make_identity_tensor(mB.shape), (self.bN, self.bK), (bn, None))
        cC = cute.local_tile(cute.make_identity_tensor(mC.shape), (self.bM, self.bN), (bm, bn))

        smem = cutlass.memory.SmemAllocator()
        sA = smem.allocate_tensor(self.dtype, sA_layout, 16)
        sB = smem.allocate_tensor(self.dtype, sB_layout, 16)

        thr_copy_A = copy_A.get_slice(tid)
        thr_copy_B = copy_B.get_slice(tid)
        tAgA, tAsA, tAcA = thr_copy_A.partition_S(gA), thr_copy_A.partition_D(sA), thr_copy_A.partition_S(cA)
        tBgB, tBsB, tBcB = thr_copy_B.partition_S(gB), thr_copy_B.partition_D(sB), thr_copy_B.partition_S(cB)

        thr_mma = tiled_mma.get_slice(tid)
        tCsA = thr_mma.partition_A(sA)                 # (1, 8, bK, stages)
        tCsB = thr_mma.partition_B(sB)
        tCgC = thr_mma.partition_C(gC)
        tCcC = thr_mma.partition_C(cC)
        acc = tiled_mma.make_fragment_C(tCgC)
        acc.fill(0.0)

        # Register double buffering: the 8 A and 8 B values of k-step k + 1 are loaded (two ld.shared.v4
        # each) while the 64 FMAs of step k run: (1, 8, 2) per operand.
        tCrA = cute.make_rmem_tensor((1, 8, 2), self.dtype)
        tCrB = cute.make_rmem_tensor((1, 8, 2), self.dtype)
        # Staged (K-major) operands: one k-tile's vectors in registers, between its global load (at the
        # start of a tile) and its transposing store to shared memory (at the end of the same tile).
        # (the global partition is the template: its vectors are contiguous, so the registers are too)
        tArA = cute.make_rmem_tensor_like(tAgA[None, None, None, 0], self.dtype)
        tBrB = cute.make_rmem_tensor_like(tBgB[None, None, None, 0], self.dtype)

        k_tiles = cute.ceil_div(K, self.bK)
        for s in cutlass.range_constexpr(self.stages - 1):
            if s < k_tiles:
                self.load_operand(copy_A, tAgA, tAsA, tArA, tAcA, s, s, (M, K), self.staged_a, True)
                self.load_operand(copy_B, tBgB, tBsB, tBrB, tBcB, s, s, (N, K), self.staged_b, True)
            cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(self.stages - 2)
        cute.arch.sync_threads()
        cute.autovec_copy(tCsA[None, None, 0, 0], tCrA[None, None, 0])
        cute.autovec_copy(tCsB[None, None, 0, 0], tCrB[None, None, 0])

        # Main loop, one k (a rank-1 update of the 8x8 block) per step. Each step first loads the next
        # step's values from shared memory (128-bit loads); the last step of a tile first stores the staged
        # operands of tile kt + stages - 1, waits for tile kt + 1 (and barriers), and prefetches from it.
        # Stage (kt + stages - 1) % stages, written during tile kt, was last read before the barrier
        # that ended tile kt - 1, and is first read after the barrier that ends tile kt + stages - 2.
        for kt in range(k_tiles):
            nxt = kt + self.stages - 1
            for k in cutlass.range_constexpr(self.bK):
                if k == self.bK - 1:
                    if nxt < k_tiles:
                        if cutlass.const_expr(self.staged_a):
                            cute.autovec_copy(tArA, tAsA[None, None, None, nxt % self.stages])
                        if cutlass.const_expr(self.staged_b):
                            cute.autovec_copy(tBrB, tBsB[None, None, None, nxt % self.stages])
                    cute.arch.cp_async_wait_group(self.stages - 2)
                    cute.arch.sync_threads()
                stage_next = kt % self.stages if k + 1 < self.bK else (kt + 1) % self.stages
                k_next = (k + 1) % self.bK
                cute.autovec_copy(tCsA[None, None, k_next, stage_next], tCrA[None, None, (k + 1) % 2])
                cute.autovec_copy(tCsB[None, None, k_next, stage_next], tCrB[None, None, (k + 1) % 2])
                if k == 0:
                    if nxt < k_tiles:
                        self.load_operand(copy_A, tAgA, tAsA, tArA, tAcA, nxt, nxt % self.stages, (M, K),
                                          self.staged_a, False)
                        self.load_operand(copy_B, tBgB, tBsB, tBrB, tBcB, nxt, nxt % self.stages, (N, K),
                                          self.staged_b, False)
                    cute.arch.cp_async_commit_group()
                cute.gemm(tiled_mma, acc, tCrA[None, None, k % 2], tCrB[None, None, k % 2], acc)
        cute.arch.cp_async_wait_group(0)

        # Epilogue: C = alpha * acc + beta * C. The checks that do not depend on the element (is the whole
        # tile inside C? is beta zero?) are made once, outside the per-element loops.
        if (bm + 1) * self.bM <= M and (bn + 1) * self.bN <= N:
            if beta == 0.0:
                for i in cutlass.range_constexpr(cute.size(acc)):
                    tCgC[i] = alpha * acc[i]
            else:
                for i in cutlass.range_constexpr(cute.size(acc)):
                    tCgC[i] = alpha * acc[i] + beta * tCgC[i]
        else:
            for i in cutlass.range_constexpr(cute.size(acc)):
                if cute.elem_less(tCcC[i], (M, N)):
                    result = alpha * acc[i]
                    if beta != 0.0:
                        result += beta * tCgC[i]
                    tCgC[i] = result

    @cute.jit
    def load_operand(self, tiled_copy: cute.TiledCopy, src: cute.Tensor, dst: cute.Tensor, regs: cute.Tensor,
                     coords: cute.Tensor, k_tile, stage, bounds, staged: cutlass.Constexpr,
                     store_now: cutlass.Constexpr):
        """Start loading one k-tile of an operand. MN-major: cp.async into smem stage ``stage``. K-major
        (``staged``): into registers (the caller stores them transposed later, or at once if
        ``store_now``). Vectors outside the matrix become zeros."""
        src_k, dst_s, crd_k = src[None, None, None, k_tile], dst[None, None, None, stage], \
            coords[None, None, None, k_tile]
        for i in cutlass.range_constexpr(cute.size(dst_s, mode=[1])):
            for j in cutlass.range_constexpr(cute.size(dst_s, mode=[2])):
                if cutlass.const_expr(staged):
                    if cute.elem_less(crd_k[0, i, j], bounds):
                        cute.copy(tiled_copy, src_k[None, i, j], regs[None, i, j])
                    else:
                        regs[None, i, j].fill(0.0)
                else:
                    if cute.elem_less(crd_k[0, i, j], bounds):
                        cute.copy(tiled_copy, src_k[None, i, j], dst_s[None, i, j])
                    else:
                        dst_s[None, i, j].fill(0.0)
        if cutlass.const_expr(staged and store_now):
            cute.autovec_copy(regs, dst_s)


def sgemm_fast_configured(stages=3, bK=16, min_ctas=0, stage_mn=False):
    """A launcher for :class:`SgemmFast` with a given pipeline depth and k-tile (for tuning and the bench)."""
    return GemmLauncher(
        "sgemm_fast", dtypes=("float32",), layouts=("TN", "NT", "NN", "TT"), max_vec=4,
        build=lambda p, vec, even: SgemmFast(p.a_major, p.b_major, p.c_major, vec, stages, bK, min_ctas, stage_mn))


_launcher = sgemm_fast_configured()


def sgemm_fast(A, B, C=None, *, alpha=1.0, beta=0.0):
    """``C = alpha * A @ B + beta * C`` with the tuned SIMT kernel (fp32; TN, NT, NN, TT; any M, N, K).

    A (M, K), B (K, N), C (M, N) float32 cupy arrays (C allocated row-major when ``None``). Returns C.
    Example: ``sgemm_fast(A, B, C, beta=1.0)`` accumulates into C.
    """
    return _launcher(A, B, C, alpha=alpha, beta=beta)
