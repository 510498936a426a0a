"""Blackwell (sm_100a/sm_100f family: ``tcgen05``) on paper: tensor memory, the ``tcgen05.ld`` register layout,
block-scale factors (chapter 10's numbers, computed). Source: PTX ISA 9.0 §9.7.16 "TensorCore 5th Generation Family
Instructions": tensor memory is 128 lanes x 512 32-bit columns per CTA, allocated in powers of two >= 32 columns; in
``tcgen05.ld.32x32b`` thread ``t`` of warp ``w`` reads lane ``32 w + t``; block-scaled ``tcgen05.mma`` has one scale
per 32 K elements (``mxf8f6f4``, ``mxf4``) or 16 (``mxf4nvf4``). The CuTe forms of the copy atom and of the scale
factors' storage order follow CuTe (``cute/atom/copy_traits_sm100.hpp``, the DSL's ``BlockScaledBasicChunk``).
"""

from .errors import LayoutError
from .layout import Layout
from .products import tile_to_shape

__all__ = ["TMEM_LANES", "TMEM_COLUMNS", "tmem_alloc_columns", "accumulator_columns", "tmem_ld_32x32b_tv",
           "tmem_ld_32x32b_atom", "block_scale_layout", "block_scale_chunk", "block_scale_storage", "DSL_SETUP_SM100"]

TMEM_LANES, TMEM_COLUMNS = 128, 512

# Setup for :func:`layoutlab.dsl.dsl_eval`/``dsl_check``: the DSL builds tcgen05 atoms only when it targets the
# sm_100 family, so the comparison process targets sm_100a (trace time only: no GPU is needed, none is used).
DSL_SETUP_SM100 = """
from cutlass.cutlass_dsl import CuTeDSL
CuTeDSL._get_dsl().envar.arch = "sm_100a"
from cutlass.cute.nvgpu import tcgen05, OperandMajorMode
from cutlass.utils import BlockScaledBasicChunk
import cutlass.utils.blockscaled_layout as blockscaled
"""


def accumulator_columns(tile_n: int, acc_bits: int = 32) -> int:
    """TMEM columns an ``M = 128 x tile_n`` accumulator occupies: one 32-bit column per 32 bits of a row.

    >>> accumulator_columns(256), accumulator_columns(256, 16)
    (256, 128)
    """
    if acc_bits not in (16, 32) or not isinstance(tile_n, int) or tile_n <= 0:
        raise LayoutError(f"accumulator_columns: tile_n={tile_n!r}, acc_bits={acc_bits!r}; tile_n must be a positive "
                          f"integer and the accumulator f32/s32 (32 bits) or f16 (16 bits)")
    return -(-tile_n * acc_bits // 32)


def tmem_alloc_columns(columns: int) -> int:
    """Columns ``tcgen05.alloc`` must be asked for to hold ``columns``: a power of two, at least 32, at most 512.

    >>> tmem_alloc_columns(200), tmem_alloc_columns(8), tmem_alloc_columns(512)
    (256, 32, 512)
    """
    if not isinstance(columns, int) or not 1 <= columns <= TMEM_COLUMNS:
        raise LayoutError(f"tmem_alloc_columns: {columns!r} columns; tensor memory has {TMEM_COLUMNS} columns per "
                          f"CTA: ask for 1..{TMEM_COLUMNS} (split a wider accumulator over several tiles)")
    return max(32, 1 << (columns - 1).bit_length())


def tmem_ld_32x32b_tv(n: int) -> Layout:
    """The TV layout after ``tcgen05.ld.32x32b.x<n>`` by 4 warps: thread ``t`` holds row ``t``, register ``j``
    column ``j`` of a ``128 x n`` accumulator (tile index ``m + 128 n``, CuTe's column-major order).

    >>> tmem_ld_32x32b_tv(64)
    (128,64):(1,128)
    """
    if not isinstance(n, int) or n not in (1, 2, 4, 8, 16, 32, 64, 128):
        raise LayoutError(f"tmem_ld_32x32b_tv: n={n!r}; the .32x32b shape loads .x1 ... .x128 columns per thread "
                          f"(a power of two up to 128)")
    return Layout((TMEM_LANES, n), (1, TMEM_LANES))


def tmem_ld_32x32b_atom(n: int) -> tuple[Layout, Layout, Layout]:
    """CuTe's copy atom of one warp's ``tcgen05.ld.32x32b.x<n>`` on 32-bit values: ``(ThrID, TV src, TV dst)``.

    The reference is the warp's ``32 x n`` slab numbered lane by lane (CuTe's ``ValID``: a lane's columns are
    consecutive, the next lane follows). Every thread passes the same tensor-memory address, so the source TV
    layout ignores the thread (stride 0 over all ``32 n`` values); thread ``t`` receives lane ``t``, register
    ``j`` column ``j``, i.e. value ``n t + j`` of the slab.

    >>> tmem_ld_32x32b_atom(64)
    (32:1, (32,2048):(0,1), (32,64):(64,1))
    """
    tmem_ld_32x32b_tv(n)                                 # the same .x1 ... .x128 check and message
    lanes = TMEM_LANES // 4                              # a warp reaches its own quarter of the lanes
    slab = Layout((lanes, n), (n, 1))                    # (lane, column) -> value of the lane-major slab
    return Layout(lanes, 1), Layout((lanes, lanes * n), (0, 1)), slab


def block_scale_layout(rows: int, k: int, vec: int) -> Layout:
    """Element ``(r, c)`` of a ``rows x k`` operand -> the *logical* index of its scale factor (``rows x k / vec`` of
    them, numbered row-major): a CuTe layout with a stride-0 mode of size ``vec`` (every element of a block shares
    one). Which scale, not where it is stored: the hardware's order is :func:`block_scale_chunk`.

    >>> block_scale_layout(4, 64, 32)
    (4,(32,2)):(2,(0,1))
    """
    _check_vec("block_scale_layout", vec)
    if not isinstance(k, int) or k <= 0 or k % vec:
        raise LayoutError(f"block_scale_layout: k={k!r} is not a positive multiple of the block size {vec}")
    if not isinstance(rows, int) or rows <= 0:
        raise LayoutError(f"block_scale_layout: rows={rows!r} must be a positive integer")
    return Layout((rows, (vec, k // vec)), (k // vec, (0, 1)))


SF_CHUNK_ROWS, SF_PER_WORD = 128, 4      # one storage chunk: 128 rows x 4 scales (one 32-bit word per row)


def block_scale_chunk(vec: int, major: str = "K") -> Layout:
    """Where the scale factor of element ``(m, k)`` of a ``128 x 4 vec`` block is *stored* (byte offset, one byte
    per scale): the 512-byte chunk that block-scaled ``tcgen05.mma`` expects in shared memory, before
    ``tcgen05.cp`` moves it into tensor memory. Row ``m``'s four scales are one 32-bit word, at byte
    ``16 (m mod 32) + 4 (m div 32)``: the rows 32 apart share a 16-byte line. ``major="MN"`` gives the same
    chunk indexed ``(k, m)``. This is CuTe DSL 4.8.1's ``BlockScaledBasicChunk`` (``cutlass.utils``); the PTX ISA 9.0
    draws it in §9.7.16 ("Scale factor A/B layout" of ``tcgen05.mma``).

    >>> block_scale_chunk(16)
    ((32,4),(16,4)):((16,4),(0,1))
    """
    _check_vec("block_scale_chunk", vec)
    line = SF_PER_WORD * SF_PER_WORD                     # 16 bytes: one word for each of rows m, m+32, m+64, m+96
    mn, kk = ((32, SF_CHUNK_ROWS // 32), (line, SF_PER_WORD)), ((vec, SF_PER_WORD), (0, 1))
    if major == "K":
        return Layout((mn[0], kk[0]), (mn[1], kk[1]))
    if major == "MN":
        return Layout((kk[0], mn[0]), (kk[1], mn[1]))
    raise LayoutError(f"block_scale_chunk: major={major!r}; give 'K' (index (m, k)) or 'MN' (index (k, m))")


def block_scale_storage(rows: int, k: int, vec: int) -> Layout:
    """The stored order of all the scale factors of a ``rows x k`` K-major operand: 512-byte chunks
    (:func:`block_scale_chunk`), consecutive along K first, then along the rows (``tile_to_shape`` with order
    ``(2, 1)``, as the DSL's ``tile_atom_to_shape_SF`` and ``make_smem_layout_sf`` build it).

    >>> block_scale_storage(256, 128, 16)
    (((32,4),2),((16,4),2)):(((16,4),1024),((0,1),512))
    """
    _check_vec("block_scale_storage", vec)
    if not isinstance(rows, int) or rows <= 0 or rows % SF_CHUNK_ROWS:
        raise LayoutError(f"block_scale_storage: rows={rows!r}; scale factors are stored in chunks of "
                          f"{SF_CHUNK_ROWS} rows: pad the operand to a multiple of {SF_CHUNK_ROWS} rows")
    if not isinstance(k, int) or k <= 0 or k % (SF_PER_WORD * vec):
        raise LayoutError(f"block_scale_storage: k={k!r}; a chunk covers {SF_PER_WORD} blocks of {vec} along K: "
                          f"pad K to a multiple of {SF_PER_WORD * vec}")
    return tile_to_shape(block_scale_chunk(vec), (rows, k), (2, 1))


def _check_vec(name, vec):
    if vec not in (16, 32):
        raise LayoutError(f"{name}: vec={vec!r}; block-scaled MMA uses one scale per 32 elements "
                          f"(mxf8f6f4, mxf4: UE8M0 scales) or per 16 (mxf4nvf4: UE4M3 scales)")


# ------------------------------------------------------------------ one tcgen05 tile, compiled for sm_100a

def _make_tile_class():
    """The smallest tcgen05 GEMM tile in the CuTe DSL: one CTA of 128 threads, ``C (128 x n) = A (128 x k) B^T``.
    Written for its PTX (chapter 10 prints it), not for speed: operands reach shared memory element by element."""
    import cutlass
    import cutlass.cute as cute
    import cutlass.utils.blackwell_helpers as sm100
    from cutlass.cute.nvgpu import OperandMajorMode, tcgen05
    from cutlass.experimental.primitives import nvvm_wrapper as nvvm

    ab = cutlass.BFloat16

    class Tcgen05Tile:
        def __init__(self, n, k):
            self.n, self.k = n, k

        @cute.jit
        def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
            mma = sm100.make_trivial_tiled_mma(ab, ab, OperandMajorMode.K, OperandMajorMode.K, cutlass.Float32,
                                               tcgen05.CtaGroup.ONE, (TMEM_LANES, self.n))
            tiler = (TMEM_LANES, self.n, self.k)
            sA, sB = sm100.make_smem_layout_a(mma, tiler, ab, 1), sm100.make_smem_layout_b(mma, tiler, ab, 1)
            self.kernel(mA, mB, mC, mma, sA, sB).launch(grid=(1, 1, 1), block=(128, 1, 1), stream=stream)

        @cute.kernel
        def kernel(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, mma: cute.TiledMma,
                   sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout):
            tidx, _, _ = cute.arch.thread_idx()
            warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
            smem = cutlass.memory.SmemAllocator()
            sA = smem.allocate_tensor(ab, sA_layout.outer, byte_alignment=1024, swizzle=sA_layout.inner)
            sB = smem.allocate_tensor(ab, sB_layout.outer, byte_alignment=1024, swizzle=sB_layout.inner)
            tmem_addr, mbar = smem.allocate_array(cutlass.Int32, 1), smem.allocate_array(cutlass.Int64, 1)
            # operands: global -> shared in the MMA's own partition (one stage)
            thr = mma.get_slice(0)
            sA0, tCgA = sA[None, None, None, 0], thr.partition_A(mA)
            sB0, tCgB = sB[None, None, None, 0], thr.partition_B(mB)
            for i in cutlass.range(tidx, TMEM_LANES * self.k, 128):
                sA0[i] = tCgA[i]
            for i in cutlass.range(tidx, self.n * self.k, 128):
                sB0[i] = tCgB[i]
            cute.arch.fence_proxy("async.shared", space="cta")      # generic stores -> the MMA's async proxy
            if warp == 0:                                           # one warp allocates (PTX §9.7.16.7.1)
                cute.arch.alloc_tmem(self.n, tmem_addr)
                cute.arch.relinquish_tmem_alloc_permit()
                with cute.arch.elect_one():
                    cute.arch.mbarrier_init(mbar, 1)
                cute.arch.mbarrier_init_fence()
            cute.arch.sync_threads()
            acc = cute.make_tensor(cute.arch.retrieve_tmem_ptr(cutlass.Float32, 16, tmem_addr),
                                   mma.make_fragment_C(thr.partition_C(mC).shape).layout)
            tCgC = thr.partition_C(mC)
            if warp == 0:                                           # the MMA warp (one thread issues)
                nvvm.tcgen05_fence("after_thread_sync")
                tCrA, tCrB = mma.make_fragment_A(sA0), mma.make_fragment_B(sB0)
                mma.set(tcgen05.Field.ACCUMULATE, False)
                for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
                    cute.gemm(mma, acc, tCrA[None, None, kb], tCrB[None, None, kb], acc)
                    mma.set(tcgen05.Field.ACCUMULATE, True)
                with cute.arch.elect_one():
                    tcgen05.commit(mbar)                            # MMAs done -> mbarrier
            cute.arch.mbarrier_wait(mbar, 0)                        # epilogue: all four warps
            nvvm.tcgen05_fence("after_thread_sync")
            ld = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x32), cutlass.Float32)
            t2r = tcgen05.make_tmem_copy(ld, acc[(None, None), 0, 0])           # four warps, a lane quarter each
            part = t2r.get_slice(tidx)
            tTR_t, tTR_g = part.partition_S(acc[(None, None), 0, 0]), part.partition_D(tCgC[(None, None), 0, 0])
            tTR_r = cute.make_rmem_tensor(tTR_g.shape, cutlass.Float32)
            cute.copy(t2r, tTR_t, tTR_r)
            cute.arch.fence_view_async_tmem_load()                  # tcgen05.wait::ld
            cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32), tTR_r, tTR_g)
            nvvm.tcgen05_fence("before_thread_sync")
            cute.arch.sync_threads()
            if warp == 0:
                nvvm.tcgen05_fence("after_thread_sync")
                cute.arch.dealloc_tmem(acc.iterator, self.n)

    return Tcgen05Tile


_TILE_SCRIPT = """
import json, sys
sys.path.insert(0, {lib!r})
import cutlass
from cutlass.cute.runtime import make_fake_stream, make_fake_tensor
import cutlass.cute as cute
from layoutlab.blackwell import _make_tile_class
n, k = {n}, {k}
a = make_fake_tensor(cutlass.BFloat16, (128, k), (k, 1), assumed_align=16)
b = make_fake_tensor(cutlass.BFloat16, (n, k), (k, 1), assumed_align=16)
c = make_fake_tensor(cutlass.Float32, (128, n), (n, 1), assumed_align=16)
print(json.dumps(cute.compile(_make_tile_class()(n, k), a, b, c, make_fake_stream()).artifacts.PTX))
"""


def tcgen05_tile_ptx(n: int = 64, k: int = 64, timeout: float = 600) -> str:
    """Compile the smallest tcgen05 GEMM tile (one CTA: TMEM alloc, ``k/16`` ``tcgen05.mma``, commit to an
    mbarrier, ``tcgen05.ld.32x32b`` epilogue, dealloc) with the CuTe DSL for sm_100a, on the CPU (in a fresh
    process: the DSL reads its target when imported), and return the PTX. Nothing runs: no Blackwell GPU is needed.

    >>> ptx = tcgen05_tile_ptx(32, 32)                  # a few seconds
    >>> [line.split()[0][:31] for line in ptx.splitlines() if line.strip().startswith("tcgen05.mma")]
    ['tcgen05.mma.cta_group::1.kind::', 'tcgen05.mma.cta_group::1.kind::']
    """
    import json
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path
    from .dsl import HAVE_DSL, SKIP_REASON
    if not HAVE_DSL:
        raise LayoutError(f"tcgen05_tile_ptx: the CuTe DSL is needed to compile ({SKIP_REASON})")
    if n not in (32, 64, 128, 256) or not isinstance(k, int) or k <= 0 or k % 16:
        raise LayoutError(f"tcgen05_tile_ptx: n={n!r}, k={k!r}; give n in 32, 64, 128, 256 (tensor-memory columns, "
                          f"a power of two >= 32) and k a positive multiple of 16 (the K of one bf16 tcgen05.mma)")
    lib = str(Path(__file__).resolve().parents[1])
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=tmp)
        proc = subprocess.run([sys.executable, "-c", _TILE_SCRIPT.format(lib=lib, n=n, k=k)], env=env,
                              capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"tcgen05_tile_ptx: the DSL compile failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
