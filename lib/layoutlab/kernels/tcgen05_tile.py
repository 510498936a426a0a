"""The smallest tcgen05 GEMM tile (Blackwell, sm_100a), written in the CuTe DSL for its PTX: chapter 10 prints
the kernel and compiles it on a CPU. Sources: PTX ISA 9.0 §9.7.16 (tensor memory, ``tcgen05.mma``, ``tcgen05.ld``,
``tcgen05.commit``); it has not run on a Blackwell GPU.
"""

from ..nvgpu.tcgen05 import TMEM_LANES
from ..errors import LayoutError

__all__ = ["tcgen05_tile_class", "tcgen05_tile_ptx"]


def tcgen05_tile_class():
    """The smallest tcgen05 GEMM tile in the CuTe DSL: one CTA of 128 threads, ``C (128 x n) = A (128 x k) B^T``.
    Written for its PTX (chapter 10 prints it), not for speed: operands reach shared memory element by element.

    >>> tile = tcgen05_tile_class()(64, 32)          # a CuTe DSL jit object; tcgen05_tile_ptx compiles it
    >>> tile.n, tile.k
    (64, 32)
    """
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
from layoutlab.kernels.tcgen05_tile import tcgen05_tile_class
n, k = {n}, {k}
a = make_fake_tensor(cutlass.BFloat16, (128, k), (k, 1), assumed_align=16)
b = make_fake_tensor(cutlass.BFloat16, (n, k), (k, 1), assumed_align=16)
c = make_fake_tensor(cutlass.Float32, (128, n), (n, 1), assumed_align=16)
print(json.dumps(cute.compile(tcgen05_tile_class()(n, k), a, b, c, make_fake_stream()).artifacts.PTX))
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
    from ..dsl import HAVE_DSL, SKIP_REASON
    if not HAVE_DSL:
        raise LayoutError(f"tcgen05_tile_ptx: the CuTe DSL is needed to compile ({SKIP_REASON})")
    if n not in (32, 64, 128, 256) or not isinstance(k, int) or k <= 0 or k % 16:
        raise LayoutError(f"tcgen05_tile_ptx: n={n!r}, k={k!r}; give n in 32, 64, 128, 256 (tensor-memory columns, "
                          f"a power of two >= 32) and k a positive multiple of 16 (the K of one bf16 tcgen05.mma)")
    lib = str(Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=tmp)
        proc = subprocess.run([sys.executable, "-c", _TILE_SCRIPT.format(lib=lib, n=n, k=k)], env=env,
                              capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"tcgen05_tile_ptx: the DSL compile failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
