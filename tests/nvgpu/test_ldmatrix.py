"""select_ldmatrix: seed 002's cases, the DSL agreeing on the tiled copies it builds, and clear refusals."""

import pytest

from layoutlab import LayoutError, Layout, make_layout, nvgpu
from layoutlab.dsl import HAVE_DSL, SKIP_REASON, dsl_eval
from layoutlab.nvgpu.ldmatrix import operand_majorness, select_ldmatrix
from layoutlab.cute.swizzle import ComposedLayout, Swizzle
from layoutlab.cute.tiled import make_tiled_mma

ROW_MAJOR = lambda r, c: make_layout((r, c), stride=(c, 1))  # noqa: E731 - K contiguous: K-major
COL_MAJOR = lambda r, c: make_layout((r, c))                  # noqa: E731 - M/N contiguous: MN-major


def _mma(k, perm=None, atoms=(1, 1, 1), acc="f16"):
    return make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", acc, (16, 8, k)), atoms, perm)


# ---- seed 002 -------------------------------------------------------------------------------------------

def test_seed_16x8x16_value_layout_121_uses_x4():
    """16x8x16 with ValLayoutMNK (1,2,1): A and B are both 16x16 per warp = four 8x8 matrices -> x4;
    row-major -> SM75_U32x4_LDSM_N, column-major -> SM75_U16x8_LDSM_T."""
    tm = _mma(16, perm=(16, 16, 16))
    for operand in "AB":
        assert select_ldmatrix(tm, operand, ROW_MAJOR(16, 16)).name == "SM75_U32x4_LDSM_N"
        assert select_ldmatrix(tm, operand, COL_MAJOR(16, 16)).name == "SM75_U16x8_LDSM_T"


def test_seed_16x8x8_value_layout_111_B_needs_x1():
    tm = _mma(8)
    assert select_ldmatrix(tm, "B", ROW_MAJOR(8, 8)).name == "SM75_U32x1_LDSM_N"
    assert select_ldmatrix(tm, "B", COL_MAJOR(8, 8)).name == "SM75_U16x2_LDSM_T"
    # and A (16x8 = two matrices) takes x2
    assert select_ldmatrix(tm, "A", ROW_MAJOR(16, 8)).name == "SM75_U32x2_LDSM_N"


def test_seed_x4_on_16x8x8_121_B_is_too_wide():
    """B of 16x8x8 with (1,2,1) is 16x8 = two matrices: x2 fits, x4 is CuTe's static_assert."""
    tm = _mma(8, perm=(16, 16, 8))
    assert select_ldmatrix(tm, "B", ROW_MAJOR(16, 8)).name == "SM75_U32x2_LDSM_N"
    with pytest.raises(LayoutError, match="TiledCopy uses too few vals for selected CopyAtom"):
        select_ldmatrix(tm, "B", ROW_MAJOR(16, 8), num_matrices=4)


def test_reasoning_explains_count_and_transpose():
    choice = select_ldmatrix(_mma(16, perm=(16, 16, 16)), "A", COL_MAJOR(16, 16))
    atom, why = choice
    assert atom.name == "SM75_U16x8_LDSM_T" and choice.transpose and choice.num_matrices == 4
    assert "4 8x8 matrices" in why and "MN-major" in why and ".trans" in why
    assert str(choice).startswith("SM75_U16x8_LDSM_T\n")


# ---- more tilings: the count follows the per-warp fragment ----------------------------------------------

@pytest.mark.parametrize("k,perm,atoms,operand,expect", [
    (16, None, (1, 1, 1), "A", 4),           # 16x16 A
    (16, None, (1, 1, 1), "B", 2),           # 8x16 B
    (8, None, (1, 1, 1), "A", 2),
    (16, None, (2, 2, 1), "A", 4),           # warps split M; each still holds a 16x16 piece
    (16, (32, 32, 16), (2, 2, 1), "B", 4),   # N repeated twice per warp
    (8, (16, 32, 8), (1, 1, 1), "B", 4),     # 32x8 B per warp: four matrices
    (16, (16, 8, 32), (1, 1, 1), "A", 4),    # K repeated: 8 matrices, two x4 per k-block
])
def test_matrix_count(k, perm, atoms, operand, expect):
    tm = _mma(k, perm=perm, atoms=atoms)
    m_or_n = tm.get_tile_size(0 if operand == "A" else 1)
    choice = select_ldmatrix(tm, operand, ROW_MAJOR(m_or_n, tm.get_tile_size(2)))
    assert choice.num_matrices == expect
    assert not choice.transpose


def test_majorness_through_swizzle():
    """Seed 004's 128B-swizzled K-major atom stays K-major; an MN-major swizzled tile gives .trans."""
    k_major = ComposedLayout(Swizzle(3, 4, 3), 0, Layout(((8, 16), (64, 1)), ((64, 512), (1, 0))))
    assert operand_majorness(k_major)[0] == "K"
    mn_major = ComposedLayout(Swizzle(3, 4, 3), 0, Layout((64, (8, 8)), (1, (64, 512))))
    tm = _mma(16, perm=(32, 16, 16), atoms=(2, 1, 1))
    assert select_ldmatrix(tm, "A", k_major).name == "SM75_U32x4_LDSM_N"
    assert select_ldmatrix(tm, "A", mn_major).name == "SM75_U16x8_LDSM_T"


# ---- refusals -------------------------------------------------------------------------------------------

def test_refusals_name_the_constraint():
    tm = _mma(16)
    with pytest.raises(LayoutError, match="'A' or 'B'"):
        select_ldmatrix(tm, "C", ROW_MAJOR(16, 8))
    with pytest.raises(LayoutError, match="can't tell .* no mode has stride 1"):
        select_ldmatrix(tm, "A", make_layout((16, 16), stride=(32, 2)))
    with pytest.raises(LayoutError, match="both modes have a stride-1 leaf"):
        select_ldmatrix(tm, "A", Layout(((2, 8), (2, 8)), ((1, 4), (1, 32))))
    with pytest.raises(LayoutError, match="at least 8"):
        select_ldmatrix(tm, "A", Layout((16, (4, 4)), (4, (1, 64))))
    with pytest.raises(LayoutError, match="swizzle base M >= 3"):
        select_ldmatrix(tm, "A", ComposedLayout(Swizzle(2, 2, 3), 0, ROW_MAJOR(16, 16)))
    with pytest.raises(LayoutError, match="16-bit"):
        select_ldmatrix(make_tiled_mma(nvgpu.warp.MmaTF32Op((16, 8, 8))), "A", ROW_MAJOR(16, 8))
    with pytest.raises(LayoutError, match="warpgroup MMA"):
        select_ldmatrix(make_tiled_mma(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16))), "A",
                        ROW_MAJOR(64, 16))
    with pytest.raises(LayoutError, match="TiledMMA"):
        select_ldmatrix("not an mma", "A", ROW_MAJOR(16, 16))


@pytest.mark.parametrize("stride", [(17, 1), (20, 1), (1, 17), (1, 20)])
def test_row_addresses_must_be_16_byte_aligned(stride):
    """PTX ISA §9.7.14.5.15: the row addresses must be 16-byte aligned. fp16 tiles padded by 1 or 4 elements put
    rows 34 or 40 bytes apart: refused, naming the rule and a valid pitch (24 elements = 48 bytes)."""
    tm = _mma(16, perm=(16, 16, 16))
    pitch = max(stride)
    with pytest.raises(LayoutError, match=rf"stride of {pitch} elements \({2 * pitch} bytes\).*16-byte aligned"
                                          rf".*§9\.7\.14\.5\.15.*multiple of 8 elements \(e\.g\. 24 instead"):
        select_ldmatrix(tm, "A", make_layout((16, 16), stride=stride))


@pytest.mark.parametrize("layout,ok", [
    (make_layout((16, 16), stride=(24, 1)), True),                    # padded by one 16-byte chunk
    (make_layout((16, 16), stride=(1, 24)), True),
    (make_layout((16, 16), stride=(17, 1)), False),
    (make_layout((16, 16), stride=(20, 1)), False),
    (make_layout((16, 16), stride=(1, 20)), False),
    (ComposedLayout(Swizzle(3, 4, 3), 0, ROW_MAJOR(16, 16)), True),
    (ComposedLayout(Swizzle(3, 4, 3), 4, ROW_MAJOR(16, 16)), False),   # starts 8 bytes into a chunk
    (Layout((16, (8, 2)), (8, (1, 136))), True),                      # K split over two blocks 272 bytes apart
    (Layout((16, (8, 2)), (8, (1, 132))), False),
])
def test_alignment_rule_agrees_with_the_row_addresses(layout, ok):
    """Accepted exactly when every row address of every x4 over the tile is a multiple of 16 bytes, as
    ldmatrix_row_addresses (the bank model's own walk over the layout) computes them."""
    from layoutlab.nvgpu.banks import ldmatrix_row_addresses
    tm = _mma(16, perm=(16, 16, 16))
    k_major = operand_majorness(layout)[0] == "K"
    addrs = [a for r0 in (0, 8) for c0 in (0, 8)
             for a in ldmatrix_row_addresses(layout, 2, r0, c0, num_matrices=1)] if k_major else \
        [2 * layout((r, c)) for r in (0, 8) for c in range(16)]  # MN-major: rows run down M from r = 0, 8
    assert all(a % 16 == 0 for a in addrs) == ok
    if ok:
        assert select_ldmatrix(tm, "A", layout).num_matrices == 4
    else:
        with pytest.raises(LayoutError, match="16-byte aligned"):
            select_ldmatrix(tm, "A", layout)


# ---- against the CuTe DSL -------------------------------------------------------------------------------

SETUP = "from cutlass import Float16\n"
DSL_CASES = [  # (k, perm, atoms, operand, layout kind)
    (16, (16, 16, 16), (1, 1, 1), "A", "row"), (16, (16, 16, 16), (1, 1, 1), "B", "col"),
    (8, None, (1, 1, 1), "B", "row"), (8, None, (1, 1, 1), "B", "col"), (8, (16, 16, 8), (1, 1, 1), "B", "row"),
    (16, (32, 32, 16), (2, 2, 1), "A", "col"), (16, None, (2, 2, 1), "B", "row"),
]


@pytest.mark.dsl
@pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON)
def test_selected_tiled_copy_matches_the_dsl():
    """The tiled copy built with the selected atom prints exactly as the DSL's make_tiled_copy_A/B."""
    snippets, ours = [], []
    for k, perm, atoms, operand, kind in DSL_CASES:
        tm = _mma(k, perm=perm, atoms=atoms)
        mn = tm.get_tile_size(0 if operand == "A" else 1)
        lay = (ROW_MAJOR if kind == "row" else COL_MAJOR)(mn, tm.get_tile_size(2))
        choice = select_ldmatrix(tm, operand, lay)
        ours.append(str(choice.tiled_copy))
        snippets.append(
            f"str(cute.make_tiled_copy_{operand}(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp("
            f"{choice.transpose}, {choice.num_matrices}), Float16), cute.make_tiled_mma(cute.make_mma_atom("
            f"cute.nvgpu.warp.MmaF16BF16Op(Float16, Float16, (16,8,{k}))), {atoms}, {perm})))")
    results = dsl_eval(snippets, setup=SETUP)
    for r, mine, case in zip(results, ours, DSL_CASES):
        assert r.ok, (case, r.message)
        assert r.value == mine, case


@pytest.mark.dsl
@pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON)
def test_dsl_builds_the_too_wide_copy_silently():
    """CuTe C++ static_asserts; the DSL 4.8 builds it; we refuse (the copy would move values the MMA lacks)."""
    (r,) = dsl_eval(["str(cute.make_tiled_copy_B(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), "
                     "Float16), cute.make_tiled_mma(cute.make_mma_atom(cute.nvgpu.warp.MmaF16BF16Op(Float16, "
                     "Float16, (16,8,8))), (1,1,1), (16,16,8))))"], setup=SETUP)
    assert r.ok and "Tiled Copy" in r.value
    with pytest.raises(LayoutError, match="too few vals"):
        select_ldmatrix(_mma(8, perm=(16, 16, 8)), "B", ROW_MAJOR(16, 8), num_matrices=4)


@pytest.mark.dsl
@pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON)
def test_random_selections_build_the_dsl_tiled_copy():
    """Seeded random warp tilings: the selected atom's tiled copy (print, src/dst TV, a thread's partition_S)
    is the DSL's make_tiled_copy_A/B with the same atom."""
    import random

    from layoutlab import make_identity_tensor

    rng = random.Random(11)
    snippets, ours = [], []
    for _ in range(30):
        k, ab = rng.choice([(16, "f16"), (8, "f16"), (16, "bf16")])
        wm, wn = rng.choice([1, 2, 4]), rng.choice([1, 2])
        reps = [rng.choice([1, 2]) for _ in range(3)]
        perm = (16 * wm * reps[0], 8 * wn * reps[1], k * reps[2])
        operand, row = rng.choice("AB"), rng.random() < 0.5
        tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op(ab, "f32", (16, 8, k)), (wm, wn, 1), perm)
        mn, kk = tm.get_tile_size(0 if operand == "A" else 1), tm.get_tile_size(2)
        choice = select_ldmatrix(tm, operand, (ROW_MAJOR if row else COL_MAJOR)(mn, kk))
        dt = "Float16" if ab == "f16" else "BFloat16"
        src = (f"cute.make_tiled_copy_{operand}(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp("
               f"{choice.transpose}, {choice.num_matrices}), {dt}), cute.make_tiled_mma(cute.make_mma_atom("
               f"cute.nvgpu.warp.MmaF16BF16Op({dt}, Float32, (16,8,{k}))), ({wm},{wn},1), {perm}))")
        thr = (tm.size * 3) // 5
        tc = choice.tiled_copy
        for snip, mine in ((f"str({src})", str(tc)), (f"{src}.layout_src_tv_tiled", str(tc.layout_src_tv_tiled)),
                           (f"{src}.layout_dst_tv_tiled", str(tc.layout_dst_tv_tiled)),
                           (f"{src}.get_slice({thr}).partition_S(cute.make_identity_tensor(({mn},{2 * kk})))",
                            str(tc.get_slice(thr).partition_S(make_identity_tensor((mn, 2 * kk)))))):
            snippets.append(snip)
            ours.append(mine)
    results = dsl_eval(snippets, setup="from cutlass import Float16, BFloat16, Float32\n")
    bad = [(s, r.value if r.ok else r.message[:200], m) for s, r, m in zip(snippets, results, ours)
           if not r.ok or r.value != m]
    print(f"\nrandom ldmatrix selections vs CuTe DSL: {len(snippets)} cases, {len(bad)} differ")
    assert not bad, bad[:3]
