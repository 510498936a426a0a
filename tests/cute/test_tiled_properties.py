"""Property tests (hypothesis) for atoms, TiledMMA, TiledCopy and the ldmatrix choice.

* every atom's C layout, and every register operand layout, is a bijection (thread, value) -> tile;
* a TiledMMA's C layout is a bijection onto the tile; its A (B) layout covers the tile with each element
  held by exactly the number of atoms along N (M): the broadcast of operands;
* partition_C over all threads covers a bigger tensor exactly once, and agrees with the tiled TV layout;
* the selected ldmatrix's tiled copy writes exactly the MMA's operand fragment (dst TV == MMA TV).
"""

import numpy as np
from hypothesis import given, settings, strategies as st

from layoutlab import make_layout, nvgpu
import layoutlab as atoms
from layoutlab.nvgpu.ldmatrix import select_ldmatrix
from layoutlab.cute.tiled import make_tiled_mma

WARP_OPS = [lambda: nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)),
            lambda: nvgpu.warp.MmaF16BF16Op("f16", "f16", (16, 8, 8)),
            lambda: nvgpu.warp.MmaF16BF16Op("bf16", "f32", (16, 8, 8)),
            lambda: nvgpu.warp.MmaTF32Op((16, 8, 8)),
            lambda: nvgpu.warp.MmaTF32Op((16, 8, 4))]


def _table(layout):
    return layout.evaluate_indices(np.arange(layout.size()))


def _is_bijection(layout, n):
    t = _table(layout)
    return t.size == n and np.array_equal(np.sort(t), np.arange(n))


def test_every_atom_layout_is_a_bijection_where_it_should_be():
    ops = [f() for f in WARP_OPS] + [nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, n, 16), src)
                                     for n in atoms.WGMMA_N_VALUES for src in ("smem", "rmem")]
    for op in ops:
        a = atoms.make_mma_atom(op)
        m, n, k = a.shape_mnk
        assert _is_bijection(a.layout_c_tv, m * n), a.name
        if a.layout_a_tv[0].stride != 0:  # register A (smem A is (128,(M,K)):(0,...): every thread sees all)
            assert _is_bijection(a.layout_a_tv, m * k), a.name
        if a.layout_b_tv[0].stride != 0:
            assert _is_bijection(a.layout_b_tv, n * k), a.name
    for ins in (atoms.LdMatrix8x8x16bOp, atoms.StMatrix8x8x16bOp):
        for t in (False, True):
            for nm in (1, 2, 4):
                c = atoms.make_copy_atom(ins(t, nm), "f16")
                reg = c.layout_dst_tv if ins is atoms.LdMatrix8x8x16bOp else c.layout_src_tv
                assert _is_bijection(reg, 64 * nm), c.name
                addr = c.layout_src_tv if ins is atoms.LdMatrix8x8x16bOp else c.layout_dst_tv
                assert set(_table(addr)) == set(range(64 * nm)), c.name  # broadcast lanes repeat rows


@st.composite
def tilings(draw):
    op = draw(st.sampled_from(WARP_OPS))()
    shape = atoms.make_mma_atom(op).shape_mnk
    al = tuple(draw(st.sampled_from([1, 2, 4])) for _ in range(2)) + (1,)
    reps = tuple(draw(st.sampled_from([1, 2])) for _ in range(3))
    perm = None if draw(st.booleans()) else tuple(shape[i] * al[i] * reps[i] for i in range(3))
    return make_tiled_mma(op, al, perm)


@settings(max_examples=40, deadline=None)
@given(tilings())
def test_tiled_tv_layouts_cover_the_tile(tm):
    tm_, tn, tk = tm.tile_size_mnk
    nthr = tm.size
    assert tm.tv_layout_C_tiled[0].size() == nthr
    assert _is_bijection(tm.tv_layout_C_tiled, tm_ * tn)
    ta, tb = _table(tm.tv_layout_A_tiled), _table(tm.tv_layout_B_tiled)
    atoms_n, atoms_m = tm.thr_layout_vmnk[2].size(), tm.thr_layout_vmnk[1].size()
    assert np.array_equal(np.bincount(ta, minlength=tm_ * tk), np.full(tm_ * tk, atoms_n))
    assert np.array_equal(np.bincount(tb, minlength=tn * tk), np.full(tn * tk, atoms_m))


@settings(max_examples=25, deadline=None)
@given(tilings(), st.integers(1, 3), st.integers(1, 2))
def test_partition_C_covers_a_tensor_once(tm, rm, rn):
    tm_, tn, _ = tm.tile_size_mnk
    shape = (tm_ * rm, tn * rn)
    tensor = make_layout(shape)            # offsets = column-major index into the (M, N) tensor
    seen = []
    for t in range(tm.size):
        p = tm.get_slice(t).partition_C(tensor)
        seen.append(p.offset + _table(p.layout))
    seen = np.concatenate(seen)
    assert np.array_equal(np.sort(seen), np.arange(shape[0] * shape[1]))
    # thread t's first tile is exactly row t of the tiled TV layout
    t = tm.size - 1
    p = tm.get_slice(t).partition_C(make_layout((tm_, tn)))
    tv = tm.tv_layout_C_tiled
    assert sorted(p.offset + _table(p.layout)) == sorted(tv(t, v) for v in range(tv[1].size()))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([(16, "f16"), (8, "f16"), (8, "bf16")]), st.sampled_from([1, 2]), st.sampled_from([1, 2]),
       st.sampled_from([1, 2]), st.sampled_from(["A", "B"]), st.booleans())
def test_selected_ldmatrix_writes_the_mma_fragment(kd, wm, rep, rk, operand, row_major):
    k, ab = kd
    op = nvgpu.warp.MmaF16BF16Op(ab, "f32", (16, 8, k))
    tm = make_tiled_mma(op, (wm, 1, 1), (16 * wm, 8 * rep, k * rk))
    mn = tm.get_tile_size(0 if operand == "A" else 1)
    lay = make_layout((mn, tm.get_tile_size(2)), stride=(tm.get_tile_size(2), 1)) if row_major else \
        make_layout((mn, tm.get_tile_size(2)))
    choice = select_ldmatrix(tm, operand, lay)
    assert choice.transpose == (not row_major)
    mma_tv = tm.tv_layout_A_tiled if operand == "A" else tm.tv_layout_B_tiled
    dst = choice.tiled_copy.layout_dst_tv_tiled
    assert dst.size() == mma_tv.size()
    assert np.array_equal(_table(dst), _table(mma_tv))
