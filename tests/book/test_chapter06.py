"""Chapter 6 (ldmatrix): every hand-written answer of its "check yourself" block and the numbers its prose
states, re-derived with the library."""

from pathlib import Path

import pytest

from layoutlab import ComposedLayout, Swizzle, gpu, make_copy_atom, make_layout, nvgpu
from layoutlab.nvgpu.banks import ldmatrix_bank_conflicts, ldmatrix_row_addresses
from layoutlab.nvgpu.ldmatrix import ldmatrix_address_lane, ldmatrix_owner, select_ldmatrix
from layoutlab.cute.tiled import make_tiled_copy_A, make_tiled_mma

ROOT = Path(__file__).resolve().parents[2]
LD = nvgpu.warp.LdMatrix8x8x16bOp


def _mma(k, atoms=(1, 1, 1), perm=None):
    return make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, k)), atoms, perm)


def test_ch6_answers():
    # 1. 16x8x8 with tile (16,32,8), B K-major: 8 values, 4 matrices, x4 N
    tm = _mma(8, perm=(16, 32, 8))
    assert tm.tv_layout_B_tiled[1].size() == 8
    assert select_ldmatrix(tm, "B", make_layout((32, 8), stride=(8, 1))).name == "SM75_U32x4_LDSM_N"
    # 2. x4: row 6 of matrix 3 named by lane 30; element (6,3) -> lane 25, d3 high half (value 7)
    assert ldmatrix_address_lane(LD(False, 4), 3, 6) == 30
    assert ldmatrix_owner(LD(False, 4), 3, 6, 3) == (25, 7)
    # 3. x4.trans: lane 30 names the row, lane 15 receives it in d3 low half (value 6)
    assert ldmatrix_address_lane(LD(True, 4), 3, 6) == 30
    assert ldmatrix_owner(LD(True, 4), 3, 6, 3) == (15, 6)
    # 4. the swizzle keeps the atom, and one x4 goes from 32 wavefronts to the ideal 4
    plain = make_layout((64, 64), stride=(64, 1))
    swz = ComposedLayout(Swizzle(3, 4, 3), 0, plain)
    tm64 = _mma(16, (4, 1, 1), (64, 16, 16))
    assert select_ldmatrix(tm64, "A", plain).name == select_ldmatrix(tm64, "A", swz).name
    a, b = (ldmatrix_bank_conflicts(ldmatrix_row_addresses(x, 2, 0, 0, num_matrices=4)) for x in (plain, swz))
    assert (a.wavefronts, b.wavefronts, b.ideal_wavefronts) == (32, 4, 4)
    # 5. x2 retile of the 8-value A fragment: mode 0 (4,2)
    tm = _mma(16, perm=(16, 16, 16))
    frag = tm.get_slice(0).partition_fragment_A(make_layout((16, 16), stride=(16, 1)))
    view = make_tiled_copy_A(make_copy_atom(LD(False, 2), "f16"), tm).retile(frag)
    assert view.layout.shape[0] == (4, 2)


def test_ch6_prose_numbers():
    # the x1 worked example: lane 5 holds row 1, columns 2 and 3
    assert [ldmatrix_owner(LD(False, 1), 0, 1, c) for c in (2, 3)] == [(5, 0), (5, 1)]
    # the too-few-vals example: 4 values of B per thread, two matrices
    tm = _mma(8, perm=(16, 16, 8))
    assert tm.tv_layout_B_tiled[1].size() == 4
    # the mainloop example: shapes
    tm = _mma(16, (2, 2, 1), (32, 32, 16))
    sA = make_layout((64, 32), stride=(32, 1))
    copy = select_ldmatrix(tm, "A", sA).tiled_copy
    frag = tm.get_slice(37).partition_fragment_A(sA)
    assert frag.layout.shape == ((2, 2, 2), 2, 2)
    assert copy.get_slice(37).retile(frag).layout.shape == ((8, 1), 2, 2)
    assert copy.get_slice(37).partition_S(sA).layout.shape == ((8, 1), 2, 2)


def test_ch6_recorded_probe_lane5():
    rec = gpu.load_result("atoms_probe_h100")
    got = rec["ldsm_stsm"]["ldmatrix_x4_t"]["lane_value_to_offset"][5]
    assert [ldmatrix_owner(LD(True, 4), o // 64, (o % 64) // 8, o % 8) for o in got] == [(5, v) for v in range(8)]


def test_ch6_padded_row_pitches():
    """The row-alignment table: pitches of 16 and 24 fp16 elements are read by an x4, 17 and 20 (34 and 40 bytes)
    are refused because rows of an x4 start off 16-byte boundaries (PTX ISA §9.7.14.5.15)."""
    from layoutlab import LayoutError
    tm = _mma(16, perm=(16, 16, 16))
    for pitch in (16, 24):
        assert select_ldmatrix(tm, "A", make_layout((16, 16), stride=(pitch, 1))).name == "SM75_U32x4_LDSM_N"
    for pitch, misaligned in ((17, 28), (20, 16)):
        tile = make_layout((16, 16), stride=(pitch, 1))
        starts = [a for c0 in (0, 8) for a in ldmatrix_row_addresses(tile, 2, 0, c0, num_matrices=2)]
        assert sum(a % 16 != 0 for a in starts) == misaligned
        with pytest.raises(LayoutError, match=rf"{pitch} elements \({2 * pitch} bytes\).*16-byte aligned"):
            select_ldmatrix(tm, "A", tile)


def test_ch6_swizzle_condition():
    """A swizzle that cuts 16-byte chunks (S<2,2,3> on element offsets) is refused; S<3,4,3> keeps the atom."""
    from layoutlab import LayoutError
    tm64 = _mma(16, (4, 1, 1), (64, 16, 16))
    plain = make_layout((64, 64), stride=(64, 1))
    with pytest.raises(LayoutError, match="swizzle base M >= 3"):
        select_ldmatrix(tm64, "A", ComposedLayout(Swizzle(2, 2, 3), 0, plain))


def test_ch6_too_few_vals_counts():
    """The (32, 64) B fragment of 16x8x8 with tile (16,16,8): 64 16-bit values = 32 registers of 32 bits."""
    tm = _mma(8, perm=(16, 16, 8))
    frag = tm.get_slice(3).partition_fragment_B(make_layout((32, 64), stride=(64, 1)))
    assert frag.layout.size() == 64 and frag.layout.size() * 16 // 32 == 32


@pytest.mark.dsl
def test_ch6_too_few_vals_dsl_view_has_twice_the_values():
    """The DSL's retile of that fragment for an x4 has 128 values, twice the fragment's 64."""
    from layoutlab import dsl
    if not dsl.HAVE_DSL:
        pytest.skip(dsl.SKIP_REASON)
    setup = ("from cutlass import Float16, Float32\n"
             "def smem(l):\n    return cute.make_tensor(cute.make_ptr(Float16, 0, cute.AddressSpace.smem, "
             "assumed_align=16), l)\n")
    wide = ("m = cute.make_tiled_mma(cute.make_mma_atom(cute.nvgpu.warp.MmaF16BF16Op(Float16, Float32, (16,8,8))), "
            "(1,1,1), (16,16,8))\n"
            "c = cute.make_tiled_copy_B(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), Float16), m)\n")
    frag = "m.make_fragment_B(m.get_slice(3).partition_B(smem(cute.make_layout((32,64), stride=(64,1)))))"
    sizes = dsl.dsl_eval([wide + f"cute.size({frag}.layout)", wide + f"cute.size(c.retile({frag}).layout)"],
                         setup=setup)
    assert [r.value for r in sizes] == ["64", "128"]


def test_ch6_ends_with_next():
    import json
    nb = json.loads((ROOT / "chapters" / "06_ldmatrix.ipynb").read_text())
    last = "".join(nb["cells"][-1]["source"]).rstrip().splitlines()[-2:]
    assert last[0].startswith("**Next:** {ref}`ch-tma`")
