"""Atoms without the DSL: seed 000's accumulator evaluations, PTX fragment facts, CuTe names, bad input."""

import pytest

from layoutlab import LayoutError, nvgpu
import layoutlab as atoms


def _mn(layout, t, v, m):
    x = layout(t, v)
    return x % m, x // m


def test_seed_000_wgmma_accumulator_evaluations():
    """Seed 000 evaluates C of m64n64k16, ((4,8,4),(2,2,8)):((128,1,16),(64,8,512)), on the 64x64 tile."""
    c = atoms.make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16))).layout_c_tv
    assert str(c) == "((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"
    for (t, v), mn in {(1, 0): (0, 2), (4, 0): (1, 0), (32, 0): (16, 0), (0, 1): (0, 1), (0, 2): (8, 0),
                       (0, 4): (0, 8)}.items():
        assert _mn(c, t, v, 64) == mn
    assert c(1, 0) == 128


def test_mma_sync_fragments_follow_the_ptx_figures():
    """PTX mma.m16n8k16 (.f16): lane = 4*groupID + threadID_in_group; a0,a1 = (groupID, 2*tig + {0,1}),
    a2,a3 = row + 8, a4..a7 = column + 8; b0,b1 = (k = 2*tig + {0,1}, n = groupID); c0,c1 = (groupID,
    2*tig + {0,1}), c2,c3 = row + 8."""
    a = atoms.make_mma_atom(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)))
    for lane in range(32):
        g, tig = lane // 4, lane % 4
        assert [_mn(a.layout_a_tv, lane, v, 16) for v in range(8)] == [
            (g, 2 * tig), (g, 2 * tig + 1), (g + 8, 2 * tig), (g + 8, 2 * tig + 1),
            (g, 2 * tig + 8), (g, 2 * tig + 9), (g + 8, 2 * tig + 8), (g + 8, 2 * tig + 9)]
        # B is stored (N, K): index n + 8 k
        assert [_mn(a.layout_b_tv, lane, v, 8) for v in range(4)] == [
            (g, 2 * tig), (g, 2 * tig + 1), (g, 2 * tig + 8), (g, 2 * tig + 9)]
        assert [_mn(a.layout_c_tv, lane, v, 16) for v in range(4)] == [
            (g, 2 * tig), (g, 2 * tig + 1), (g + 8, 2 * tig), (g + 8, 2 * tig + 1)]


def test_ldmatrix_fragment_follows_the_ptx_figure():
    """PTX ldmatrix: without .trans lane l receives row l/4, columns 2*(l%4) and +1 of each matrix; with
    .trans it receives column l/4, rows 2*(l%4) and +1."""
    n = atoms.make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(False, 4), "f16").layout_dst_tv
    t = atoms.make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(True, 4), "f16").layout_dst_tv
    for lane in range(32):
        for j in range(4):
            for i in range(2):
                assert n(lane, i + 2 * j) == 64 * j + 8 * (lane // 4) + 2 * (lane % 4) + i
                assert t(lane, i + 2 * j) == 64 * j + 8 * (2 * (lane % 4) + i) + lane // 4


@pytest.mark.parametrize("op,name", [
    (lambda: nvgpu.warp.MmaF16BF16Op("f16", "f16", (16, 8, 8)), "SM80_16x8x8_F16F16F16F16_TN"),
    (lambda: nvgpu.warp.MmaF16BF16Op("bf16", "f32", (16, 8, 16)), "SM80_16x8x16_F32BF16BF16F32_TN"),
    (lambda: nvgpu.warp.MmaTF32Op((16, 8, 8)), "SM80_16x8x8_F32TF32TF32F32_TN"),
    (lambda: nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 256, 16)), "SM90_64x256x16_F32F16F16_SS"),
    (lambda: nvgpu.warpgroup.MmaF16BF16Op("bf16", "f32", (64, 8, 16), "rmem"), "SM90_64x8x16_F32BF16BF16_RS"),
])
def test_mma_cute_names(op, name):
    assert atoms.make_mma_atom(op()).name == name


def test_copy_cute_names():
    assert [atoms.make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(t, n), "f16").name
            for t in (False, True) for n in (1, 2, 4)] == [
        "SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N",
        "SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T", "SM75_U16x8_LDSM_T"]
    assert atoms.make_copy_atom(nvgpu.warp.StMatrix8x8x16bOp(True, 4), "bf16").name == "SM90_U16x8_STSM_T"
    assert atoms.make_copy_atom(nvgpu.cpasync.CopyG2SOp(), "f16", num_bits_per_copy=64).name == \
        "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>"
    assert atoms.make_copy_atom(nvgpu.CopyUniversalOp(), "f32", num_bits_per_copy=128).name == "UniversalCopy<uint128_t>"


def test_dtype_names_accepted():
    class Float16:  # stands in for cutlass.Float16 (matched by name)
        pass
    assert atoms.dtype_name(Float16) == "f16"
    assert atoms.dtype_name("BFloat16") == "bf16" and atoms.dtype_bits("tf32") == 32


@pytest.mark.parametrize("make,match", [
    (lambda: atoms.dtype_name("f17"), "unknown element type"),
    (lambda: nvgpu.warp.MmaF16BF16Op("f32", "f32", (16, 8, 16)), "not f16 or bf16"),
    (lambda: nvgpu.warp.MmaF16BF16Op("f16", "f64", (16, 8, 16)), "f16 or f32"),
    (lambda: nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 4)), r"use \(16,8,8\) or \(16,8,16\)"),
    (lambda: nvgpu.warp.MmaTF32Op((16, 8, 16)), r"\(16,8,4\) or \(16,8,8\)"),
    (lambda: nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (128, 64, 16)), "64,N,16"),
    (lambda: nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16), "rmem", "MN"), "always K-major"),
    (lambda: nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16), "tmem"), "smem, rmem"),
    (lambda: nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16), "smem", "K", "N"), "k, mn"),
    (lambda: nvgpu.warp.LdMatrix8x8x16bOp("yes", 4), "bool"),
    (lambda: atoms.make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(False, 4), "f64"), "8, 16 or 32 bits"),
    (lambda: atoms.make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(False, 4), "f16", num_bits_per_copy=128),
     "does not apply"),
    (lambda: atoms.make_copy_atom(nvgpu.cpasync.CopyG2SOp(), "f16"), "32, 64 or 128"),
    (lambda: atoms.make_copy_atom(nvgpu.cpasync.CopyG2SOp("global"), "f16", num_bits_per_copy=64), "16 bytes only"),
    (lambda: atoms.make_copy_atom(nvgpu.cpasync.CopyG2SOp(), "f64", num_bits_per_copy=32), "whole number"),
    (lambda: atoms.make_copy_atom(nvgpu.CopyUniversalOp(), "f16", num_bits_per_copy=48), "power-of-two"),
    (lambda: atoms.make_copy_atom("ldmatrix", "f16"), "not a copy operation"),
    (lambda: atoms.make_mma_atom("mma"), "not an MMA operation"),
])
def test_bad_input_is_refused_with_the_rule(make, match):
    with pytest.raises(LayoutError, match=match):
        make()


def test_docstring_examples_run():
    """The worked examples in the docstrings of atoms, tiled, ldmatrix and probe are true."""
    import doctest

    from layoutlab.nvgpu import ldmatrix
    from layoutlab.probe import atoms as probe
    from layoutlab.cute import tiled

    for mod in (atoms, tiled, ldmatrix, probe):
        res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert res.failed == 0, mod.__name__


# --------------------------------------------------------------------------- issue 17 item 9: 8-bit and fp8 atoms

MATRIX_FORMS = [(op, t, n, ub) for op, ts, ns, ubs in (
    (nvgpu.warp.LdMatrix8x8x16bOp, (False, True), (1, 2, 4), (None,)),
    (nvgpu.warp.StMatrix8x8x16bOp, (False, True), (1, 2, 4), (None,)),
    (nvgpu.warp.LdMatrix8x16x8bOp, (False,), (1, 2, 4), (None, 4, 6)),
    (nvgpu.warp.LdMatrix16x8x8bOp, (True,), (2, 4), (None, 4, 6)),
    (nvgpu.warp.LdMatrix16x16x8bOp, (True,), (1, 2), (None, 4, 6)),
    (nvgpu.warp.StMatrix16x8x8bOp, (True,), (1, 2, 4), (None,))) for t in ts for n in ns for ub in ubs]


@pytest.mark.parametrize("op,t,n,ub", MATRIX_FORMS)
def test_matrix_copies_move_each_element_once(op, t, n, ub):
    """Both sides of every ldmatrix/stmatrix form cover the same n matrices of 128 (16x16: 256) bytes: the register side
    holds each byte exactly once, the address side names every 16-byte row (broadcast lanes repeat one)."""
    bits = 16 if t and "16b" in op.__name__ else 8          # the 16-bit ops transpose 16-bit elements only
    atom = atoms.make_copy_atom(op(t, n, ub), "f16" if bits == 16 else "i8")
    per_matrix = (256 if op is nvgpu.warp.LdMatrix16x16x8bOp else 128) * 8 // bits    # a 16x16 byte matrix is two
    regs = atom.layout_ref_tv
    addr = atom.layout_src_tv if regs is atom.layout_dst_tv else atom.layout_dst_tv
    held = [regs(i) for i in range(regs.size())]
    assert sorted(held) == list(range(per_matrix * n)), "registers hold every element once"
    assert {addr(i) for i in range(addr.size())} == set(held)
    assert regs[0].size() == addr[0].size() == 32 and atom.num_val * 32 == per_matrix * n


def test_8bit_transposing_load_feeds_the_8bit_transposing_store():
    """LdMatrix16x8x8b exists to give each lane the bytes StMatrix16x8x8b stores from it (CuTe's SM100_U8x*_LDSM_T)."""
    for n in (2, 4):
        ld = atoms.make_copy_atom(nvgpu.warp.LdMatrix16x8x8bOp(True, n), "f8E4M3FN")
        st = atoms.make_copy_atom(nvgpu.warp.StMatrix16x8x8bOp(True, n), "f8E4M3FN")
        assert ld.layout_dst_tv == st.layout_src_tv
        assert (ld.name, st.name) == (f"SM100_U8x{4 * n}_LDSM_T", f"SM100_U8x{4 * n}_STSM_T")


def test_fp8_mma_sync_fragments_follow_the_ptx_figures():
    """PTX mma.m16n8k32 (.e4m3/.e5m2): a_i sits at row groupID (+8 for registers 1, 3), column 4*tig + (i % 4)
    (+16 for registers 2, 3); b_i at k = 4*tig + (i % 4) (+16 for register 1), n = groupID."""
    atom = atoms.make_mma_atom(nvgpu.warp.MmaFP8Op("f8E5M2", "f32", (16, 8, 32)))
    assert atom.name == "SM89_16x8x32_F32E5M2E5M2F32_TN"
    for lane in range(32):
        g, tig = lane // 4, lane % 4
        assert [_mn(atom.layout_a_tv, lane, i, 16) for i in range(16)] == [
            (g + 8 * (r % 2), 4 * tig + b + 16 * (r // 2)) for r in range(4) for b in range(4)]
        assert [_mn(atom.layout_b_tv, lane, i, 8) for i in range(8)] == [
            (g, 4 * tig + b + 16 * r) for r in range(2) for b in range(4)]
    half = atoms.make_mma_atom(nvgpu.warp.MmaFP8Op("e4m3", "f16", (16, 8, 16)))
    assert half.layout_a_tv(5, 7) == atom.layout_a_tv(5, 7) and half.layout_a_tv.size() == 32 * 8


def test_fp8_wgmma_register_a_packs_four_k_neighbours():
    """wgmma m64nNk32 with A in registers: thread t = t0 + 4*t1 + 32*w holds rows t1 + 16*w (+8), columns
    4*t0 + (0..3) (+16); the accumulator is the 16-bit wgmma's."""
    atom = atoms.make_mma_atom(nvgpu.warpgroup.MmaF8Op("f8E4M3FN", "f8E5M2", "f16", (64, 64), "rmem"))
    assert atom.shape_mnk == (64, 64, 32) and atom.name == "SM90_64x64x32_F16E4M3E5M2_RS"
    for t in range(128):
        t0, t1, w = t % 4, (t // 4) % 8, t // 32
        assert [_mn(atom.layout_a_tv, t, i, 64) for i in range(16)] == [
            (t1 + 16 * w + 8 * (r % 2), 4 * t0 + b + 16 * (r // 2)) for r in range(4) for b in range(4)]
    f16 = atoms.make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("f16", "f16", (64, 64, 16)))
    assert atom.layout_c_tv == f16.layout_c_tv


def test_fp8_type_names_print_as_the_dsl():
    assert [atoms.dtype_name(x) for x in ("Float8E4M3FN", "f8e4m3", "e5m2", "FLOAT8E5M2")] == \
        ["f8E4M3FN", "f8E4M3FN", "f8E5M2", "f8E5M2"]
    assert atoms.make_copy_atom(nvgpu.warp.LdMatrix16x16x8bOp(True, 2), "e4m3").value_type == "f8E4M3FN"


def test_wgmma_shape_without_k_is_completed_for_both_input_kinds():
    """The DSL completes shape_mnk (64, N) with the instruction's K for 16-bit inputs as for fp8 (one shared check
    since session 15; 16-bit inputs refused it before)."""
    op = nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64))
    assert op.shape_mnk == (64, 64, 16) and str(atoms.make_mma_atom(op)).splitlines()[2].endswith("(64,64,16)")
