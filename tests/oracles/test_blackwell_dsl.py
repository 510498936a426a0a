"""layoutlab.nvgpu.tcgen05 against the CuTe DSL 4.8.1 on the same inputs: the ``tcgen05.ld.32x32b`` copy atom
(``cute.nvgpu.tcgen05.Ld32x32bOp``, built for sm_100a at trace time, no GPU needed) and the block-scale factors'
storage chunk (``cutlass.utils.BlockScaledBasicChunk``) tiled over whole operands."""

import pytest

from layoutlab.nvgpu.tcgen05 import DSL_SETUP_SM100 as SM100
from layoutlab.nvgpu.tcgen05 import block_scale_chunk, block_scale_storage, tmem_ld_32x32b_atom
from layoutlab.dsl import HAVE_DSL, SKIP_REASON, dsl_eval

pytestmark = [pytest.mark.dsl, pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON)]


REPEATS = (1, 2, 4, 8, 16, 32, 64, 128)


def _ok(results, n):
    assert len(results) == n
    bad = [r for r in results if not r.ok]
    assert not bad, bad[0].message[:500]
    return [r.value for r in results]


def test_tmem_load_atom_is_the_dsl_s():
    snippets = []
    for n in REPEATS:
        atom = f"cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x{n}), cutlass.Float32)"
        snippets += [f"{atom}.thr_id", f"{atom}.layout_src_tv", f"{atom}.layout_dst_tv"]
    values = _ok(dsl_eval(snippets, SM100), len(snippets))
    for i, n in enumerate(REPEATS):
        assert values[3 * i: 3 * i + 3] == [str(x) for x in tmem_ld_32x32b_atom(n)], n


def test_tmem_load_atom_refused_for_hopper():
    """Without the sm_100 target the DSL refuses the op: the check above is not vacuous."""
    hopper = SM100.replace('"sm_100a"', '"sm_90a"')
    (r,) = dsl_eval(["cute.make_copy_atom(tcgen05.Ld32x32bOp(), cutlass.Float32).layout_dst_tv"], hopper)
    assert not r.ok and "arch" in r.message


@pytest.mark.parametrize("major", ["K", "MN"])
def test_scale_chunk_is_blockscaledbasicchunk(major):
    snippets = [f"BlockScaledBasicChunk({vec}, OperandMajorMode.{major}).layout" for vec in (16, 32)]
    assert _ok(dsl_eval(snippets, SM100), 2) == [str(block_scale_chunk(vec, major)) for vec in (16, 32)]


SHAPES = [(128, 64, 16), (128, 128, 32), (256, 128, 16), (384, 256, 32), (512, 64, 16)]


def test_scale_storage_is_the_dsl_s_tiling():
    snippets = [f"cute.tile_to_shape(BlockScaledBasicChunk({vec}).layout, ({rows}, {k}), (2, 1))"
                for rows, k, vec in SHAPES]
    # the DSL's own helper for a whole (rows, k, batch) operand: its first two modes are the same layout
    snippets += [f"cute.select(blockscaled.tile_atom_to_shape_SF(({rows}, {k}, 1), {vec}), mode=[0, 1])"
                 for rows, k, vec in SHAPES]
    values = _ok(dsl_eval(snippets, SM100), 2 * len(SHAPES))
    ours = [str(block_scale_storage(*s)) for s in SHAPES]
    assert values[:len(SHAPES)] == ours
    assert values[len(SHAPES):] == ours


def _steps(ptx):
    """The tcgen05 and mbarrier instructions of a PTX text, in program order, by opcode."""
    return [line.split()[0] for line in ptx.splitlines()
            if line.strip().startswith(("tcgen05.", "mbarrier.", "fence.mbarrier"))]


@pytest.mark.parametrize("n, k", [(64, 64), (128, 32)])
def test_tcgen05_tile_compiles_to_the_chapter_s_synchronization(n, k):
    """The tile compiles for sm_100a on a CPU, and its PTX is chapter 10's list in order: alloc + relinquish by one
    warp; fence after the barrier; k/16 MMAs; commit to the mbarrier; wait, fence, n/32 .32x32b.x32 loads,
    wait::ld; the fence pair around the barrier; dealloc."""
    from layoutlab.kernels.tcgen05_tile import tcgen05_tile_ptx
    ptx = tcgen05_tile_ptx(n, k)
    assert ".target sm_100a" in ptx
    mma = "tcgen05.mma.cta_group::1.kind::f16.collector::a::discard"
    assert _steps(ptx) == (
        ["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;",
         "mbarrier.init.shared.b64", "fence.mbarrier_init.release.cluster;", "tcgen05.fence::after_thread_sync;"]
        + [mma] * (k // 16)
        + ["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64", "mbarrier.try_wait.parity.shared.b64",
           "tcgen05.fence::after_thread_sync;"]
        + ["tcgen05.ld.sync.aligned.32x32b.x32.b32"] * (n // 32)
        + ["tcgen05.wait::ld.sync.aligned;", "tcgen05.fence::before_thread_sync;", "tcgen05.fence::after_thread_sync;",
           "tcgen05.dealloc.cta_group::1.sync.aligned.b32"])


def test_tcgen05_tile_refuses_what_tensor_memory_cannot_hold():
    from layoutlab import LayoutError
    from layoutlab.kernels.tcgen05_tile import tcgen05_tile_ptx
    for bad in ((48, 64), (512, 64), (64, 40), (64, 0)):
        with pytest.raises(LayoutError, match="power of two >= 32"):
            tcgen05_tile_ptx(*bad)
