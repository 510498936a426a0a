"""layoutlab.nvgpu.gmma: the wgmma shared-memory descriptor (encode/decode, canonical-layout check, refusals).

Ground truth here is the PTX ISA's own worked examples (§9.7.15.5.1.2.1.3, Canonical Layouts: exact layout
-> encoded LBO/SBO) and the bit positions of §9.7.15.5.1.2.2; tests/oracles/test_gmma_dsl.py compares with what
the CuTe DSL encodes.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layoutlab import Layout, SmemLayoutAtomKind, make_smem_layout_atom
from layoutlab.errors import LayoutError
from layoutlab.nvgpu.gmma import (GmmaDescriptor, LayoutType, check_operand_major, decode_gmma_desc,
                                  gmma_canonical_layout, gmma_k_block_descs, make_gmma_desc, pattern_bytes, wgmma_k)
from layoutlab.cute.swizzle import ComposedLayout, Swizzle

field14 = st.integers(0, (1 << 14) - 1)


@given(field14, field14, field14, st.integers(0, 7), st.integers(0, 3))
def test_encode_decode_round_trip_and_bit_positions(sa, lbo, sbo, base, lt):
    d = GmmaDescriptor(sa, lbo, sbo, base, lt)
    x = d.desc
    assert decode_gmma_desc(x) == d
    # the PTX ISA's bit positions, read back independently of the class
    assert x & 0x3FFF == sa and (x >> 16) & 0x3FFF == lbo and (x >> 32) & 0x3FFF == sbo
    assert (x >> 49) & 7 == base and x >> 62 == lt
    assert x < 1 << 64


@pytest.mark.parametrize("bit", [14, 15, 30, 31, 46, 47, 48, 52, 61])
def test_reserved_bits_are_refused(bit):
    with pytest.raises(LayoutError, match="reserved bit"):
        decode_gmma_desc(1 << bit)


@pytest.mark.parametrize("kw", [dict(start_address=1 << 14), dict(leading_byte_offset=-1),
                                dict(stride_byte_offset=1 << 14), dict(base_offset=8), dict(layout_type=4)])
def test_fields_out_of_range_are_refused(kw):
    with pytest.raises(LayoutError):
        GmmaDescriptor(**kw)


def test_layout_type_numbers_follow_the_ptx_isa():
    # 0: no swizzle, 1: 128-Byte, 2: 64-Byte, 3: 32-Byte
    assert [LayoutType.INTERLEAVE, LayoutType.B128, LayoutType.B64, LayoutType.B32] == [0, 1, 2, 3]
    assert [pattern_bytes(t) for t in (LayoutType.B128, LayoutType.B64, LayoutType.B32)] == [1024, 512, 256]


# The PTX ISA's examples (Canonical Layouts): exact layout -> (LBO, SBO) as encoded (>> 4)
PTX_EXAMPLES = [
    ("K", 32, Swizzle(0, 4, 3), Layout(((8, 2), (4, 4)), ((4, 32), (1, 64))), 0, 16, 8),
    ("K", 32, Swizzle(1, 4, 3), Layout(((8, 2), (4, 4)), ((8, 64), (1, 4))), 3, 1, 16),
    ("MN", 16, Swizzle(0, 4, 3), Layout(((8, 1, 2), (8, 2)), ((1, 8, 64), (8, 128))), 0, 16, 8),
    ("MN", 16, Swizzle(1, 4, 3), Layout(((8, 2, 2), (8, 2)), ((1, 8, 128), (16, 256))), 3, 16, 32),
    ("MN", 16, Swizzle(2, 4, 3), Layout(((8, 4, 2), (8, 2)), ((1, 8, 256), (32, 512))), 2, 32, 64),
]


@pytest.mark.parametrize("major,bits,sw,outer,lt,lbo,sbo", PTX_EXAMPLES)
def test_ptx_isa_worked_examples(major, bits, sw, outer, lt, lbo, sbo):
    kw = wgmma_k(bits)
    first = Layout((outer[0].size(), kw), (1, outer[0].size()))
    from layoutlab import composition
    block = ComposedLayout(sw, 0, composition(outer, first))       # the first wgmma's k-block
    d = make_gmma_desc(major, block, bits)
    assert (d.layout_type, d.leading_byte_offset, d.stride_byte_offset) == (lt, lbo, sbo)
    assert d.start_address == 0 and d.base_offset == 0


CANON = [(m, lt, bits) for m in ("K", "MN") for lt in LayoutType for bits in (8, 16, 32) if m == "K" or bits == 16]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(CANON), st.integers(1, 4), st.integers(1, 40), st.integers(1, 40), st.integers(0, 60))
def test_canonical_layouts_give_back_their_strides(case, reps, lbo16, sbo16, start16):
    major, lt, bits = case
    T, W = 128 // bits, {0: 1, 3: 2, 2: 4, 1: 8}[int(lt)]
    mn = reps * (8 if major == "K" else T * W)
    k = wgmma_k(bits)
    lbo, sbo = lbo16 * T, sbo16 * T          # in elements, multiples of 16 bytes
    canon = gmma_canonical_layout(major, lt, bits, mn, k, lbo=lbo, sbo=sbo)
    shifted = ComposedLayout(canon.inner, start16 * T, canon.outer)
    d = make_gmma_desc(major, shifted, bits, smem_base=0)
    assert d.layout_type == lt and d.start_address == start16
    uses_sbo = (mn > 8) if major == "K" else (k > 8 if lt != LayoutType.INTERLEAVE else mn > T)
    uses_lbo = (lt == LayoutType.INTERLEAVE and k > T) if major == "K" else \
        (k > 8 if lt == LayoutType.INTERLEAVE else mn > T * W)
    assert d.stride_byte_offset == (sbo16 if uses_sbo else 0)
    if major == "K" and lt != LayoutType.INTERLEAVE:
        assert d.leading_byte_offset == 1      # "not used, assumed to be 1"
    else:
        assert d.leading_byte_offset == (lbo16 if uses_lbo else 0)


@pytest.mark.parametrize("kind,bits", [(k.name, b) for k in SmemLayoutAtomKind for b in (8, 16, 32)
                                       if k.name.startswith("K") or b == 16])
def test_every_dsl_atom_tiled_is_expressible(kind, bits):
    major = kind.split("_")[0]
    atom = make_smem_layout_atom(kind, bits)
    mn = max(64, atom.outer[0].size()) if major == "MN" else 64
    k = max(wgmma_k(bits) * 2, atom.outer[1].size()) if major == "K" else wgmma_k(bits) * 2
    tile = atom.tile_to_shape((mn, k), (0, 1) if major == "K" else (1, 0))
    descs = gmma_k_block_descs(major, tile, bits)
    assert len(descs) == k // wgmma_k(bits)
    assert len({d.layout_type for d in descs}) == 1
    starts = [d.start_address for d in descs]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)


def test_base_offset_follows_the_ptx_formula():
    tile = make_smem_layout_atom("K_SW128", 16).tile_to_shape((64, 64), (0, 1)).compose(Layout((64, 16), (1, 64)))
    assert make_gmma_desc("K", tile, 16, smem_base=2048).base_offset == 0
    assert make_gmma_desc("K", tile, 16, smem_base=2048 + 3 * 128).base_offset == 3
    assert make_gmma_desc("K", tile, 16, smem_base=512).base_offset == 4          # (512 >> 7) & 7
    t64 = make_smem_layout_atom("K_SW64", 16).tile_to_shape((64, 32), (0, 1))
    assert make_gmma_desc("K", t64.compose(Layout((64, 16), (1, 64))), 16, smem_base=1536).base_offset == 0
    inter = make_smem_layout_atom("K_INTER", 16).tile_to_shape((64, 16), (0, 1))
    assert make_gmma_desc("K", inter, 16, smem_base=384).base_offset == 0      # no swizzle: no base offset


def test_refusals_say_what_is_wrong():
    with pytest.raises(LayoutError, match="must be K-major"):
        check_operand_major("tf32", "MN")
    with pytest.raises(LayoutError, match="must be K-major"):
        make_gmma_desc("MN", make_smem_layout_atom("MN_SW128", 32).tile_to_shape((32, 8), (1, 0)), 32)
    check_operand_major("bf16", "MN")
    with pytest.raises(LayoutError, match="registers"):
        check_operand_major(16, "MN", source="rmem")
    # row-major 64 x 16 f16 with 16-element rows: K contiguous, but rows 32 bytes apart: not canonical
    with pytest.raises(LayoutError, match="not a canonical K-major INTERLEAVE"):
        make_gmma_desc("K", Layout((64, 16), (16, 1)), 16)
    with pytest.raises(LayoutError, match="swizzle S<3,3,3>"):
        make_gmma_desc("K", ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1))), 16)
    with pytest.raises(LayoutError, match="K mode has 64 elements"):
        make_gmma_desc("K", make_smem_layout_atom("K_SW128", 16), 16)
    with pytest.raises(LayoutError, match="16-byte aligned"):
        make_gmma_desc("K", Layout(((8, 8), (8, 2)), ((8, 64), (1, 512))), 16, smem_base=8)
    with pytest.raises(LayoutError, match="multiple of 64 elements"):
        make_gmma_desc("MN", make_smem_layout_atom("MN_SW128", 16).compose(Layout((32, 16), (1, 64))), 16)
    with pytest.raises(LayoutError, match="reserved"):
        decode_gmma_desc(0xFFFF_FFFF_FFFF_FFFF)


def test_swizzled_k_major_with_wrong_row_pitch_is_refused():
    # S<3,4,3> (128B) but rows only 64 bytes apart: the 64B pattern's rows under the 128B swizzle
    bad = ComposedLayout(Swizzle(3, 4, 3), 0, Layout(((8, 8), 16), ((32, 256), 1)))
    with pytest.raises(LayoutError, match="not a canonical K-major B128"):
        make_gmma_desc("K", bad, 16)


def test_printing_has_cutes_fields():
    s = str(GmmaDescriptor(0x40, 1, 64, 0, LayoutType.B128))
    assert s.splitlines()[0] == "GmmaDescriptor: 0x4000004000010040"
    assert "layout_type:  0x1 (B128)" in s and "stride_off :  0x0040 (64)" in s


@pytest.mark.parametrize("kind,bits", [(k.name, b) for k in SmemLayoutAtomKind for b in (8, 16, 32)
                                       if k.name.startswith("K") or b == 16])
@pytest.mark.parametrize("base", [0, 2048, 384, 640])
def test_descriptor_reads_where_the_layout_wrote(kind, bits, base):
    """The PTX ISA's reading of each k-block descriptor (canonical layout + swizzle on the byte address, rows
    counted from the pattern start by the base offset) lands on exactly the byte the swizzled tile layout put
    each element at, with the pattern starting at ``base`` (aligned or not)."""
    import numpy as np
    from layoutlab.nvgpu.gmma import gmma_read_addresses
    major = kind.split("_")[0]
    atom = make_smem_layout_atom(kind, bits)
    mn = 128 if major == "MN" else 64
    k = max(2 * wgmma_k(bits), atom.outer[1].size()) if major == "K" else 2 * wgmma_k(bits)
    tile = atom.tile_to_shape((mn, k), (0, 1) if major == "K" else (1, 0))
    kw = wgmma_k(bits)
    for kb, d in enumerate(gmma_k_block_descs(major, tile, bits, smem_base=base)):
        got = gmma_read_addresses(d, major, bits, mn)
        want = np.array([[base + tile.byte_address((r, kb * kw + c), bits // 8, 0) for c in range(kw)]
                         for r in range(mn)])
        assert np.array_equal(got, want), (kind, bits, kb)


def test_pictures_and_explorer():
    from layoutlab import viz, widgets
    fig = viz.draw_gmma_descriptor(0x4000004000010040)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert "stride byte offset = 64" in texts and "start address = 64" in texts
    assert fig._suptitle.get_text().startswith("GmmaDescriptor 0x4000004000010040")
    fig = viz.draw_gmma_canonical("MN", "B64")
    assert "LBO = 512 B, SBO = 1024 B" in fig._suptitle.get_text()
    with pytest.raises(LayoutError, match="must be K-major"):
        viz.draw_gmma_canonical("MN", "B64", 32)
    assert viz.draw_wgmma_timeline(3) is not None
    ex = widgets.GmmaDescriptorExplorer("MN", "B128", "tf32")
    assert "must be K-major" in ex.message.value and ex.bits.value == ""
    ex.dtype.value = "f16/bf16"
    assert ex.message.value == "" and "<svg" in ex.bits.value
    assert "LayoutType.B128" not in ex.summary.value and "B128" in ex.summary.value


def test_docstring_examples_run():
    import doctest

    import layoutlab
    import layoutlab.nvgpu.gmma as mod
    res = doctest.testmod(mod, extraglobs=vars(layoutlab), optionflags=doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL)
    assert res.failed == 0 and res.attempted >= 12


def test_descriptor_constants_follow_the_ptx_definitions():
    from layoutlab.kernels.wgmma_tile import descriptor_constants
    ptx = """
	shr.u32 	%r60, %r1, 4;
	and.b32 	%r61, %r60, 16383;
	cvt.u64.u32 	%rd13, %r61;
	or.b64 	%rd9, %rd13, -9223371899415756800;
	and.b32 	%r35, %r34, 16320;
	or.b32 	%r36, %r35, 524288;
	cvt.u64.u32 	%rd10, %r36;
	add.s64 	%rd11, %rd13, -9223371899415756798;
	cvt.u64.u32 	%rd12, %r35;
wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%r28, %r29}, %rd9, %rd10, p, 1,  1, 0, 1;
wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%r28, %r29}, %rd11, %rd12, p, 1,  1, 0, 1;
"""
    got = descriptor_constants(ptx)
    assert got == [("m64n64k16", 0x8000002000010000, 0x80000), ("m64n64k16", 0x8000002000010002, 0)]
    with pytest.raises(LayoutError, match="cannot follow"):
        descriptor_constants("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r1}, %rd1, %rd2, p, 1, 1, 0, 0;")
