"""``gemm_ampere``: a tensor-core GEMM the Ampere way (fp16/bf16 in, fp32 accumulate), in the CuTe DSL.

Data path of one CTA (tile ``bM x bN``, K walked ``bK`` at a time)::

    global --cp.async (16 B per thread)--> shared (swizzled, `stages` deep)
    shared --ldmatrix (x4: four 8x8 matrices per warp)--> registers
    registers --mma.sync.m16n8k16 (fp32 accumulators)--> registers --(alpha, beta)--> global

* **cp.async pipeline.** ``stages - 1`` k-tiles are in flight while the tensor cores work on the oldest
  one. Each k-tile's copies form one commit group; ``cp.async.wait_group(stages - 2)`` + a CTA barrier
  says "the next tile has landed, and every warp is done with the buffer about to be refilled". One
  barrier per k-tile.
* **Register double buffering.** ldmatrix for k-block ``kb + 1`` is issued before the mma.sync of
  k-block ``kb`` (the last k-block prefetches the next tile's first), so shared-memory latency hides
  behind tensor-core work.
* **CTA order.** Tiles are handed out in groups of 8 tile-rows (:func:`grouped_tile_coord`) so that the
  CTAs resident together reuse A and B from L2.
* **Swizzled shared memory.** A K-major tile row of ``bK`` halves is ``2 bK`` bytes; without a swizzle the
  8 rows of one ldmatrix 8x8 matrix would fall into the same 4 banks. ``Swizzle<B,3,3>`` XORs the row
  index into the 16-byte chunk index (``B = log2(2 bK / 16)``), so the 8 rows of a matrix hit 8 distinct
  chunks = all 32 banks. An M-major (or N-major) tile is stored M-major with the same 128-byte swizzle
  atom ``Swizzle<3,3,3> o (64,8):(1,64)``, and ``ldmatrix.trans`` transposes it on the way to registers.
* **ldmatrix choice.** Made by :func:`layoutlab.nvgpu.ldmatrix.select_ldmatrix` on the course's own model of
  the same tiled MMA and smem tile (see :meth:`GemmAmpere.ldmatrix_selection`, whose ``reasoning`` says
  why): a warp's share of an m16n8k16 operand, with the N permutation below, is 16x16 = four 8x8 b16
  matrices, so ``ldmatrix.x4``; ``.trans`` exactly when the operand is MN-major in shared memory.
* **Predication.** Any M, N, K: each 16-byte vector of A and B is copied only if its first element is
  inside the matrix, else its smem slot is zero-filled (the vector width is chosen so that a vector is
  wholly in or out); the epilogue writes only in-range elements. Operands whose addresses, leading
  dimensions or contiguous extents are not multiples of 16 bytes get a kernel compiled with narrower
  (8/4-byte) cp.async, or, for single 2-byte elements, synchronous copies. When M, N and K are
  multiples of the tile the launcher compiles an ``even`` variant with no bounds tests at all.

Supported: fp16 and bf16 A/B/C (C has the operands' dtype; accumulation and alpha/beta in fp32); layouts
TN, NT, NN and TT; C row- or column-major. Tile configuration: ``DEFAULT_CONFIG`` (128x128x64, 4 warps
as 2x2 of 64x64, 3 stages: four k-blocks per barrier, 96 KB of shared memory and 234 registers, so two
CTAs per SM; the fastest of the H100 sweeps in ``results/simt_ampere_notes.md``);
:func:`gemm_ampere_configured` builds a launcher for another one.

Example (on a GPU)::

    >>> import cupy as cp
    >>> from layoutlab.kernels import gemm_ampere
    >>> A = cp.random.rand(512, 256).astype(cp.float16); B = cp.random.rand(256, 384).astype(cp.float16)
    >>> C = gemm_ampere(A, B)
    >>> float(cp.abs(C.astype(cp.float32) - A.astype(cp.float32) @ B.astype(cp.float32)).max()) < 0.5
    True
"""

import math
import numbers

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync, warp

from ..errors import LayoutError
from ._common import GemmLauncher, cutlass_dtype, grouped_tile_coord, operand_tensors

__all__ = ["gemm_ampere", "GemmAmpere", "gemm_ampere_configured", "DEFAULT_CONFIG"]


def _check_kinds(**given):
    """Refuse a configuration argument of the wrong kind: ``name=(value, kind)``, a kind being a type or the
    length of a tuple of ints."""
    for name, (value, kind) in given.items():
        if isinstance(kind, int):
            ok = isinstance(value, tuple) and len(value) == kind and all(
                isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value)
            words = f"a tuple of {kind} ints"
        else:
            ok = isinstance(value, numbers.Integral if kind is int else kind) and (
                kind is bool or not isinstance(value, bool))
            words = {str: "a str", int: "an int", bool: "True or False"}[kind]
        if not ok:
            raise LayoutError(f"GemmAmpere: {name}={value!r}; it is {words}")


class GemmAmpere:
    """Compile-time configuration: dtype, majorness of A/B/C, tile (bM, bN, bK), warps (wm, wn), stages,
    the global-copy vector width ``vec`` (elements; 8 = 16-byte cp.async) and ``even`` (M, N, K are
    multiples of the tile, so nothing needs a bounds test).

    >>> k = GemmAmpere(cutlass.Float16, "K", "N", "N", tile=(128, 128, 64), warps=(2, 2), stages=3)
    >>> k.threads, k.smem_bytes()           # 4 warps; 3 stages of (128 + 128) x 64 fp16 + 2 KiB
    (128, 100352)
    >>> k.ldmatrix_selection("A").name, k.ldmatrix_selection("B").name     # A K-major, B N-major
    ('SM75_U32x4_LDSM_N', 'SM75_U16x8_LDSM_T')
    """

    def __init__(self, dtype, a_major, b_major, c_major, vec=8, tile=(128, 128, 32), warps=(2, 2),
                 stages=4, min_ctas=0, even=False):
        _check_kinds(a_major=(a_major, str), b_major=(b_major, str), c_major=(c_major, str), vec=(vec, int),
                     tile=(tile, 3), warps=(warps, 2), stages=(stages, int), min_ctas=(min_ctas, int),
                     even=(even, bool))
        self.dtype = dtype
        self.a_major, self.b_major, self.c_major = a_major, b_major, c_major
        self.vec = vec
        self.bM, self.bN, self.bK = tile
        self.wm, self.wn = warps
        self.threads = 32 * self.wm * self.wn
        self.stages = stages
        # CTAs per SM that ptxas must make room for (launch bound minctasm): 65536 / (min_ctas * threads)
        # caps the registers per thread; 0 leaves ptxas free. With it the launch asks for the largest
        # shared-memory carveout (100 %), which is also what lets the DSL compile without a GPU.
        self.min_ctas = min_ctas
        # M, N, K are multiples of the tile: no bounds tests at all (~40 fewer instructions per k-tile and
        # warp, and fewer registers); the launcher compiles this variant for evenly tiled problems.
        self.even = even

    # ---- shared memory ------------------------------------------------------------------------------
    def smem_layout(self, rows, k_major):
        """Staged (rows, bK, stages) smem layout built from a 128-byte-swizzled atom."""
        if k_major:
            chunks = self.bK * 2 // 16                      # 16-byte chunks in one K-major row
            atom = cute.make_composed_layout(
                cute.make_swizzle(int(math.log2(chunks)), 3, 3), 0,
                cute.make_layout((8, self.bK), stride=(self.bK, 1)))
        else:
            atom = cute.make_composed_layout(
                cute.make_swizzle(3, 3, 3), 0, cute.make_layout((64, 8), stride=(1, 64)))
        return cute.tile_to_shape(atom, (rows, self.bK, self.stages), (0, 1, 2))

    def smem_bytes(self):
        return (self.bM + self.bN) * self.bK * self.stages * 2 + 2048

    # ---- global -> shared ---------------------------------------------------------------------------
    def g2s_copy(self, rows, k_major):
        """Tiled cp.async: each thread moves ``vec`` contiguous elements; a warp covers whole rows of
        the contiguous mode, so its requests are coalesced."""
        bits = self.vec * self.dtype.width
        if bits < 32:
            # cp.async moves 4, 8 or 16 bytes; a single 2-byte element (an odd contiguous extent or
            # leading dimension) is copied synchronously instead: correct, but without the overlap.
            atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), self.dtype, num_bits_per_copy=bits)
        else:
            mode = cpasync.LoadCacheMode.GLOBAL if bits == 128 else cpasync.LoadCacheMode.ALWAYS
            atom = cute.make_copy_atom(cpasync.CopyG2SOp(cache_mode=mode), self.dtype,
                                       num_bits_per_copy=bits)
        if k_major:
            t_k = self.bK // self.vec
            threads = cute.make_layout((self.threads // t_k, t_k), stride=(t_k, 1))
            values = cute.make_layout((1, self.vec))
        else:
            t_mn = min(rows // self.vec, self.threads)
            threads = cute.make_layout((t_mn, self.threads // t_mn), stride=(1, t_mn))
            values = cute.make_layout((self.vec, 1))
        return cute.make_tiled_copy_tv(atom, threads, values)

    # ---- shared -> registers ------------------------------------------------------------------------
    def ldmatrix_selection(self, operand):
        """``layoutlab.select_ldmatrix`` for operand "A" or "B", asked about this kernel's tiled MMA and
        one stage of its smem tile (the plain layout under the swizzle: the swizzle moves whole 16-byte
        chunks, so it changes neither the majorness nor the width). ``.reasoning`` explains the choice.
        Example: A K-major -> ``SM75_U32x4_LDSM_N``; B N-major -> ``SM75_U16x8_LDSM_T``."""
        from ..cute.layout import make_layout
        from ..cute.tiled import make_tiled_mma
        from .. import nvgpu
        from ..nvgpu.ldmatrix import select_ldmatrix

        ab = "bf16" if self.dtype is cutlass.BFloat16 else "f16"
        model = make_tiled_mma(nvgpu.warp.MmaF16BF16Op(ab, "f32", (16, 8, 16)), (self.wm, self.wn, 1),
                               (self.wm * 16, self.wn * 16, 16))
        rows, k_major = (self.bM, self.a_major == "K") if operand == "A" else (self.bN, self.b_major == "K")
        stage = make_layout((rows, self.bK), stride=(self.bK, 1) if k_major else (1, rows))
        return select_ldmatrix(model, operand, stage)

    def ldmatrix_op(self, operand):
        """The DSL ldmatrix operation that :meth:`ldmatrix_selection` chose for operand "A" or "B"."""
        choice = self.ldmatrix_selection(operand)
        return warp.LdMatrix8x8x16bOp(transpose=choice.transpose, num_matrices=choice.num_matrices)

    @cute.jit
    def run(self, pA: cute.Pointer, pB: cute.Pointer, pC: cute.Pointer, M: cutlass.Int32, N: cutlass.Int32,
            K: cutlass.Int32, ldA: cutlass.Int32, ldB: cutlass.Int32, ldC: cutlass.Int32,
            alpha: cutlass.Float32, beta: cutlass.Float32, stream):
        mA, mB, mC = operand_tensors(self, pA, pB, pC, M, N, K, ldA, ldB, ldC, vec=self.vec)
        sA_layout = self.smem_layout(self.bM, self.a_major == "K")
        sB_layout = self.smem_layout(self.bN, self.b_major == "K")
        copy_A = self.g2s_copy(self.bM, self.a_major == "K")
        copy_B = self.g2s_copy(self.bN, self.b_major == "K")
        # 2x2 (or wm x wn) warps of m16n8k16; the N permutation gives each warp 16 columns per step, so
        # a B tile per warp is 16x16 = four 8x8 matrices, one ldmatrix.x4.
        mma_op = warp.MmaF16BF16Op(self.dtype, cutlass.Float32, (16, 8, 16))
        tiled_mma = cute.make_tiled_mma(mma_op, (self.wm, self.wn, 1),
                                        permutation_mnk=(self.wm * 16, self.wn * 16, 16))
        s2r_A = cute.make_tiled_copy_A(cute.make_copy_atom(self.ldmatrix_op("A"), self.dtype), tiled_mma)
        s2r_B = cute.make_tiled_copy_B(cute.make_copy_atom(self.ldmatrix_op("B"), self.dtype), tiled_mma)
        grid = (cute.ceil_div(M, self.bM), cute.ceil_div(N, self.bN), 1)
        self.kernel(mA, mB, mC, sA_layout, sB_layout, copy_A, copy_B, tiled_mma, s2r_A, s2r_B,
                    alpha, beta).launch(grid=grid, block=(self.threads, 1, 1), smem=self.smem_bytes(),
                                        stream=stream, min_blocks_per_mp=self.min_ctas,
                                        preferred_smem_carveout=100 if self.min_ctas > 1 else None)

    @cute.kernel
    def kernel(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor,
               sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout,
               copy_A: cute.TiledCopy, copy_B: cute.TiledCopy, tiled_mma: cute.TiledMma,
               s2r_A: cute.TiledCopy, s2r_B: cute.TiledCopy,
               alpha: cutlass.Float32, beta: cutlass.Float32):
        tid, _, _ = cute.arch.thread_idx()
        bidx, bidy, _ = cute.arch.block_idx()
        M, K = mA.shape
        N = mB.shape[0]
        # CTA -> tile in groups of 8 tile-rows, so that CTAs running together share A and B in L2
        bm, bn = grouped_tile_coord(bidx, bidy, cute.ceil_div(M, self.bM), cute.ceil_div(N, self.bN))

        gA = cute.local_tile(mA, (self.bM, self.bK), (bm, None))        # (bM, bK, k-tiles)
        gB = cute.local_tile(mB, (self.bN, self.bK), (bn, None))        # (bN, bK, k-tiles)
        gC = cute.local_tile(mC, (self.bM, self.bN), (bm, bn))          # (bM, bN)
        cA = cute.local_tile(cute.make_identity_tensor(mA.shape), (self.bM, self.bK), (bm, None))
        cB = cute.local_tile(cute.make_identity_tensor(mB.shape), (self.bN, self.bK), (bn, None))
        cC = cute.local_tile(cute.make_identity_tensor(mC.shape), (self.bM, self.bN), (bm, bn))

        smem = cutlass.memory.SmemAllocator()
        # 1024-byte alignment: the swizzle pattern repeats every 1024 bytes, so aligned tiles keep
        # the bank arithmetic of the docstring exact.
        sA = smem.allocate_tensor(self.dtype, sA_layout, 1024)          # (bM, bK, stages)
        sB = smem.allocate_tensor(self.dtype, sB_layout, 1024)

        # global -> shared partitions: (CPY, CPY_M, CPY_K, k-tiles or stages)
        thr_copy_A = copy_A.get_slice(tid)
        thr_copy_B = copy_B.get_slice(tid)
        tAgA, tAsA, tAcA = thr_copy_A.partition_S(gA), thr_copy_A.partition_D(sA), thr_copy_A.partition_S(cA)
        tBgB, tBsB, tBcB = thr_copy_B.partition_S(gB), thr_copy_B.partition_D(sB), thr_copy_B.partition_S(cB)

        # MMA partitions and register fragments
        thr_mma = tiled_mma.get_slice(tid)
        tCsA = thr_mma.partition_A(sA)                                   # (MMA, MMA_M, MMA_K, stages)
        tCsB = thr_mma.partition_B(sB)
        tCrA = tiled_mma.make_fragment_A(tCsA[None, None, None, 0])      # (MMA, MMA_M, MMA_K)
        tCrB = tiled_mma.make_fragment_B(tCsB[None, None, None, 0])
        tCgC = thr_mma.partition_C(gC)
        tCcC = thr_mma.partition_C(cC)
        acc = tiled_mma.make_fragment_C(tCgC)
        acc.fill(0.0)

        # shared -> register (ldmatrix) partitions, viewed to match the MMA fragments
        thr_s2r_A = s2r_A.get_slice(tid)
        thr_s2r_B = s2r_B.get_slice(tid)
        tXsA = thr_s2r_A.partition_S(sA)
        tXrA = thr_s2r_A.retile(tCrA)
        tXsB = thr_s2r_B.partition_S(sB)
        tXrB = thr_s2r_B.retile(tCrB)

        k_tiles = cute.ceil_div(K, self.bK)
        k_blocks = cute.size(tCrA, mode=[2])
        b_block = 1 if k_blocks > 2 else 0          # the k-block that issues B's cp.async (see below)

        # Prologue: put the first stages-1 k-tiles in flight (one commit group each, empty ones too,
        # so that group counting in the main loop stays uniform), wait for tile 0, load its first k-block.
        for s in cutlass.range_constexpr(self.stages - 1):
            if s < k_tiles:
                self.load_tile(copy_A, tAgA, tAsA, tAcA, s, s, (M, K))
                self.load_tile(copy_B, tBgB, tBsB, tBcB, s, s, (N, K))
            cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(self.stages - 2)
        cute.arch.sync_threads()
        cute.copy(s2r_A, tXsA[None, None, 0, 0], tXrA[None, None, 0])
        cute.copy(s2r_B, tXsB[None, None, 0, 0], tXrB[None, None, 0])

        # Main loop. While the tensor cores work on k-block kb, ldmatrix fetches k-block kb + 1 (from the
        # next stage when kb is the last one); after kb == 0 (A) and kb == b_block (B) the cp.async for
        # tile kt + stages - 1 is issued. Before the last k-block: wait until tile kt + 1 has landed, and
        # barrier so that every warp is done with stage kt % stages before anyone refills it (at the next
        # kb == 0).
        for kt in range(k_tiles):
            for kb in cutlass.range_constexpr(k_blocks):
                if kb == k_blocks - 1:
                    cute.arch.cp_async_wait_group(self.stages - 2)
                    cute.arch.sync_threads()
                # ldmatrix for k-block kb + 1 first, then the mma.sync of kb, so that ptxas issues the
                # shared-memory loads early among the MMAs (their latency hides behind kb's 32 MMAs),
                # then the cp.async. With bounds tests the cp.async block is a branch, and ptxas does
                # not schedule across branches: ldmatrix issued *before* such a branch shared a
                # scoreboard with the previous ones, so the first mma.sync of every k-tile waited for
                # a whole shared-memory round trip (runs 1-3).
                kb_next = (kb + 1) % k_blocks
                stage_next = kt % self.stages if kb + 1 < k_blocks else (kt + 1) % self.stages
                cute.copy(s2r_A, tXsA[None, None, kb_next, stage_next], tXrA[None, None, kb_next])
                cute.copy(s2r_B, tXsB[None, None, kb_next, stage_next], tXrB[None, None, kb_next])
                cute.gemm(tiled_mma, acc, tCrA[None, None, kb], tCrB[None, None, kb], acc)
                # A's copies at kb == 0, B's at kb == 1 (both at 0 when a tile has only two k-blocks, so
                # that the commit precedes the wait at the last one): half as many cp.async in one burst,
                # which ncu saw stall on the full load/store queue ("LG throttle").
                nxt = kt + self.stages - 1
                if kb == 0:
                    if nxt < k_tiles:
                        self.load_tile(copy_A, tAgA, tAsA, tAcA, nxt, nxt % self.stages, (M, K))
                if kb == b_block:
                    if nxt < k_tiles:
                        self.load_tile(copy_B, tBgB, tBsB, tBcB, nxt, nxt % self.stages, (N, K))
                    cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)

        # Epilogue: C = alpha * acc + beta * C in fp32, rounded once to the output type. Whether the tile
        # lies wholly inside C and whether beta is zero are decided once, outside the per-element loops.
        if cutlass.const_expr(self.even) or ((bm + 1) * self.bM <= M and (bn + 1) * self.bN <= N):
            if beta == 0.0:
                for i in cutlass.range_constexpr(cute.size(acc)):
                    tCgC[i] = (alpha * acc[i]).to(self.dtype)
            else:
                for i in cutlass.range_constexpr(cute.size(acc)):
                    tCgC[i] = (alpha * acc[i] + beta * tCgC[i].to(cutlass.Float32)).to(self.dtype)
        else:
            for i in cutlass.range_constexpr(cute.size(acc)):
                if cute.elem_less(tCcC[i], (M, N)):
                    result = alpha * acc[i]
                    if beta != 0.0:
                        result += beta * tCgC[i].to(cutlass.Float32)
                    tCgC[i] = result.to(self.dtype)

    @cute.jit
    def load_tile(self, tiled_copy: cute.TiledCopy, src: cute.Tensor, dst: cute.Tensor, coords: cute.Tensor,
                  k_tile, stage, bounds):
        """cp.async one k-tile into one smem stage; vectors outside the matrix are zero-filled."""
        src_k, dst_s, crd_k = src[None, None, None, k_tile], dst[None, None, None, stage], \
            coords[None, None, None, k_tile]
        if cutlass.const_expr(self.even):
            cute.copy(tiled_copy, src_k, dst_s)
        else:
            for i in cutlass.range_constexpr(cute.size(dst_s, mode=[1])):
                for j in cutlass.range_constexpr(cute.size(dst_s, mode=[2])):
                    if cute.elem_less(crd_k[0, i, j], bounds):
                        cute.copy(tiled_copy, src_k[None, i, j], dst_s[None, i, j])
                    else:
                        dst_s[None, i, j].fill(0.0)


def gemm_ampere_configured(tile=(128, 128, 32), warps=(2, 2), stages=4, min_ctas=0):
    """A launcher for :class:`GemmAmpere` with a given tile/warps/stages (for tuning and the bench).

    >>> import numpy as np
    >>> from layoutlab.kernels._common import GemmProblem
    >>> launcher = gemm_ampere_configured(tile=(128, 128, 64), warps=(2, 2), stages=3)
    >>> launcher.name, launcher.layouts, launcher.max_vec
    ('gemm_ampere', ('TN', 'NT', 'NN', 'TT'), 8)
    >>> problems = [GemmProblem(m, m, m, np.dtype("float16"), "K", "K", "N") for m in (8192, 4000)]
    >>> [launcher.is_even(p) for p in problems]       # 8192 is a multiple of the tile: no bounds tests
    [True, False]
    >>> kernel = launcher.build(problems[0], 8, True)
    >>> (kernel.bM, kernel.bN, kernel.bK), kernel.stages, kernel.even
    ((128, 128, 64), 3, True)
    """
    return GemmLauncher(
        "gemm_ampere", dtypes=("float16", "bfloat16"), layouts=("TN", "NT", "NN", "TT"), max_vec=8,
        tile=tile, build=lambda p, vec, even: GemmAmpere(cutlass_dtype(p.dtype), p.a_major, p.b_major,
                                                         p.c_major, vec, tile, warps, stages, min_ctas, even))


#: The tile configuration ``gemm_ampere`` uses (chosen by the H100 sweep in results/simt_ampere_notes.md).
DEFAULT_CONFIG = dict(tile=(128, 128, 64), warps=(2, 2), stages=3, min_ctas=0)
_launcher = gemm_ampere_configured(**DEFAULT_CONFIG)


def gemm_ampere(A, B, C=None, *, alpha=1.0, beta=0.0):
    """``C = alpha * A @ B + beta * C`` on tensor cores via cp.async + ldmatrix + mma.sync (sm_80+).

    A (M, K) and B (K, N) are fp16 or bf16 (cupy arrays, or torch tensors for bf16); C has their dtype
    and is allocated row-major when ``None``. Layouts TN, NT, NN, TT; any M, N, K. Returns C.
    Example: ``gemm_ampere(A, B, C, alpha=0.5, beta=1.0)``.
    """
    return _launcher(A, B, C, alpha=alpha, beta=beta)
