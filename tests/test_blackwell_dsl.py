"""layoutlab.blackwell against the CuTe DSL 4.8.1 on the same inputs: the ``tcgen05.ld.32x32b`` copy atom
(``cute.nvgpu.tcgen05.Ld32x32bOp``, built for sm_100a at trace time, no GPU needed) and the block-scale factors'
storage chunk (``cutlass.utils.BlockScaledBasicChunk``) tiled over whole operands."""

import pytest

from layoutlab.blackwell import DSL_SETUP_SM100 as SM100
from layoutlab.blackwell import block_scale_chunk, block_scale_storage, tmem_ld_32x32b_atom
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
