"""Swizzles, composed layouts and GMMA smem atoms: differential tests against the CuTe DSL + properties."""
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from layoutlab import Layout, make_layout
from layoutlab.dsl import HAVE_DSL, SKIP_REASON, dsl_eval
from layoutlab.errors import LayoutError
from layoutlab.linear.cute import linear_layout_from_cute, swizzle_to_linear_layout
from layoutlab.cute.swizzle import ComposedLayout, Swizzle, make_composed_layout, make_swizzle
from layoutlab.nvgpu.warpgroup import SmemLayoutAtomKind, get_smem_layout_atom, make_smem_layout_atom

needs_dsl = pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON)

SEED4_STAGED = "S<3,4,3> o 0 o ((8,16),(64,1),(1,7)):((64,512),(1,0),(0,8192))"
DSL_TYPES = {8: "cutlass.Float8E4M3FN", 16: "cutlass.Float16", 32: "cutlass.TFloat32"}


def valid_swizzles():
    out = []
    for b in range(1, 4):
        for m in range(0, 5):
            for s in list(range(b, 5)) + [-x for x in range(b, 5)]:   # any M with S < 0, as in CuTe
                out.append((b, m, s))
    return out


# ----------------------------------------------------------------------------- seed 004
def test_seed004_atom_and_staged_layout():
    atom = make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, 16)
    assert str(atom) == "S<3,4,3> o 0 o (8,64):(64,1)"
    staged = atom.tile_to_shape((128, 64, 7), order=(0, 1, 2))
    assert str(staged) == SEED4_STAGED
    assert str(staged.slice_((None, None, 0))) == "S<3,4,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))"
    # stage k starts at k*8192 elements, rows of 64 elements, 128B swizzle on each 8-row block
    assert staged((0, 0, 3)) == 3 * 8192
    # values are element offsets (as in the DSL): bit 7 of 2*64+8 flips bit 4
    assert staged((2, 8, 0)) == 128 + (8 ^ 16) and staged((1, 8, 0)) == 72
    # on a smem pointer the swizzle acts on bytes: fp16 row 1, 16-byte chunk 1 -> chunk 0
    assert atom.byte_address((1, 8), element_bytes=2) == 128


def test_swizzle_128b_moves_16_byte_chunks_by_row():
    sw = Swizzle(3, 4, 3)
    for row in range(8):
        for chunk in range(8):
            addr = row * 128 + chunk * 16
            assert sw(addr) == row * 128 + (chunk ^ row) * 16
            assert sw(addr + 5) == sw(addr) + 5  # bytes inside a 16-byte chunk stay together


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("b,m,s", [(3, 4, 2), (2, 1, 1), (3, 0, -2)])
def test_overlapping_bit_ranges_are_refused(b, m, s):
    with pytest.raises(LayoutError, match=r"\|S\| .* < B"):
        make_swizzle(b, m, s)


@pytest.mark.parametrize("b,m,s", [(-1, 4, 3), (1, -1, 3)])
def test_negative_parameters_are_refused(b, m, s):
    with pytest.raises(LayoutError, match=">= 0"):
        make_swizzle(b, m, s)


def test_negative_shift_needs_no_room_below():
    """CuTe requires only M >= 0, B >= 0, |S| >= B (issue 17 item 3): S < 0 moves the low bits up."""
    sw = make_swizzle(3, 0, -3)
    assert (sw.yyy_mask, sw.zzz_mask) == (0b000111, 0b111000)
    assert sw(1) == 9 and sw(0b101) == 0b101101 and sw(sw(0b110011)) == 0b110011
    assert [make_swizzle(2, 1, -3)(x) for x in (2, 4, 6, 8)] == [2 + 16, 4 + 32, 6 + 48, 8]


@pytest.mark.parametrize("bits", [4, 64, 1])
def test_unsupported_element_sizes_are_refused(bits):
    with pytest.raises(LayoutError, match="not GMMA"):
        make_smem_layout_atom("K_SW128", bits)
    with pytest.raises(LayoutError, match="not GMMA"):
        get_smem_layout_atom("K", bits, 64)


def test_bad_atom_arguments():
    with pytest.raises(LayoutError, match="unknown atom kind"):
        make_smem_layout_atom("K_SW256", 16)
    with pytest.raises(LayoutError, match="multiple of 8"):
        get_smem_layout_atom("MN", 16, 12)
    with pytest.raises(LayoutError, match="'K' or 'MN'"):
        get_smem_layout_atom("M", 16, 64)
    with pytest.raises(LayoutError, match="Swizzle or a Layout"):
        ComposedLayout(3, 0, Layout(8))


def test_one_swizzle_interface():
    """B, M, S are read one way, the DSL's (num_bits, num_base, num_shift); a ComposedLayout exposes its
    swizzle as ``inner``; no other spelling exists for a picture or analysis to probe."""
    sw = make_swizzle(2, 4, 3)
    assert (sw.num_bits, sw.num_base, sw.num_shift) == (2, 4, 3)
    c = make_composed_layout(sw, 0, Layout((8, 32), (32, 1)))
    assert c.inner is sw and (c.offset, c.outer) == (0, Layout((8, 32), (32, 1)))
    for other in ("bits", "base", "shift", "B", "M", "S", "num_shft", "bbits", "mbase", "sshift"):
        assert not hasattr(sw, other), other


# ----------------------------------------------------------------------------- properties
swizzles = st.sampled_from(valid_swizzles())


@given(swizzles, st.integers(0, 1 << 14))
def test_swizzle_is_an_involution(bms, x):
    sw = Swizzle(*bms)
    assert sw(sw(x)) == x


@given(swizzles)
@settings(max_examples=40)
def test_swizzle_matrix_matches_function_and_is_its_own_inverse(bms):
    sw = Swizzle(*bms)
    ll = swizzle_to_linear_layout(sw, 12)
    for x in range(0, 1 << 12, 37):
        assert ll.apply({"offset": x}) == {"offset": sw(x)}
    assert ll.compose(ll) == ll.compose(ll.invert()) == ll.invert().compose(ll)
    assert ll.invert() == ll


@given(swizzles, st.integers(0, 1 << 12))
def test_swizzle_works_on_numpy_arrays(bms, x):
    sw = Swizzle(*bms)
    arr = np.arange(x, x + 64, dtype=np.int64)
    assert list(sw(arr)) == [sw(int(v)) for v in arr]


@given(st.sampled_from(list(SmemLayoutAtomKind)), st.sampled_from([8, 16, 32]),
       st.integers(1, 3), st.integers(1, 3), st.integers(1, 4), st.booleans())
@settings(max_examples=40, deadline=None)
def test_staged_layout_is_a_bijection_onto_its_cosize(kind, bits, rm, rn, stages, kfirst):
    atom = make_smem_layout_atom(kind, bits)
    shape = (atom.outer.shape[0] * rm, atom.outer.shape[1] * rn, stages)
    staged = atom.tile_to_shape(shape, order=(0, 1, 2) if kfirst else (1, 0, 2))
    vals = {staged(i) for i in range(staged.size())}
    assert vals == set(range(staged.size())) and staged.cosize() == staged.size()
    # slicing a stage keeps the function: sliced(i) == staged(coord with that stage)
    k = stages - 1
    sl = staged.slice_((None, None, k))
    for i in range(0, sl.size(), 7):
        m, n = i % shape[0], i // shape[0]
        assert sl((m, n)) == staged((m, n, k))


@given(st.sampled_from(list(SmemLayoutAtomKind)), st.sampled_from([8, 16, 32]))
@settings(max_examples=24, deadline=None)
def test_atom_as_linear_layout_matches_evaluation(kind, bits):
    atom = make_smem_layout_atom(kind, bits)
    ll = linear_layout_from_cute(atom)
    shp = atom.outer.shape
    for i in range(atom.size()):
        m, n = i % shp[0], i // shp[0]
        assert ll.apply({"dim0": m, "dim1": n})["offset"] == atom((m, n))


def test_get_smem_layout_atom_picks_the_widest_swizzle():
    assert get_smem_layout_atom("K", 16, 64) is SmemLayoutAtomKind.K_SW128
    assert get_smem_layout_atom("K", 16, 32) is SmemLayoutAtomKind.K_SW64
    assert get_smem_layout_atom("MN", 8, 32) is SmemLayoutAtomKind.MN_SW32
    assert get_smem_layout_atom("MN", 32, 8) is SmemLayoutAtomKind.MN_SW32
    assert get_smem_layout_atom("K", 8, 8) is SmemLayoutAtomKind.K_INTER


# ----------------------------------------------------------------------------- vs the CuTe DSL
COMPOSED = "cute.make_composed_layout(cute.make_swizzle({b},{m},{s}), {o}, cute.make_layout({shape}, stride={stride}))"


@pytest.mark.dsl
@needs_dsl
@pytest.mark.xdist_group("dsl_swizzle")
def test_against_cute_dsl():
    rng = random.Random(7)
    snippets, expected, labels = [], [], []

    def case(label, snippet, ours):
        labels.append(label)
        snippets.append(snippet)
        expected.append(ours)

    # 1. every valid swizzle as a function on 2^11 offsets (through an identity outer layout)
    for b, m, s in valid_swizzles():
        n = 1 << min(11, m + b + abs(s) + 1)
        sw = Swizzle(b, m, s)
        case("swizzle-values",
             f"c = cute.make_composed_layout(cute.make_swizzle({b},{m},{s}), 0, cute.make_layout({n}))\n"
             f"tuple(c(i) for i in range({n}))",
             "(" + ",".join(str(sw(i)) for i in range(n)) + ")")
        if s > 0:  # the DSL's printer drops the closing '>' when S < 0 (prints 'S<3,2,-3')
            case("swizzle-print", f"cute.make_swizzle({b},{m},{s})", str(sw))
        # the one swizzle interface (issue 18 item 2): B, M, S read as the DSL's Swizzle exposes them
        case("swizzle-bms", f"s = cute.make_swizzle({b},{m},{s})\n(s.num_bits, s.num_base, s.num_shift)",
             f"({sw.num_bits},{sw.num_base},{sw.num_shift})")
    # 2. all 24 GMMA atoms
    for kind in SmemLayoutAtomKind:
        for bits, ty in DSL_TYPES.items():
            case("atom", f"cute.nvgpu.warpgroup.make_smem_layout_atom("
                         f"cute.nvgpu.warpgroup.SmemLayoutAtomKind.{kind.name}, {ty})",
                 str(make_smem_layout_atom(kind, bits)))
    # 3. get_smem_layout_atom over majors, widths and tile extents
    for major, enum in (("K", "ROW_MAJOR"), ("MN", "COL_MAJOR")):
        for bits, ty in DSL_TYPES.items():
            for size in (8, 16, 24, 32, 48, 64, 96, 128, 256):
                case("atom-select",
                     f"import cutlass.utils.hopper_helpers as h\nfrom cutlass.utils import LayoutEnum\n"
                     f"h.get_smem_layout_atom(LayoutEnum.{enum}, {ty}, {size}).name",
                     get_smem_layout_atom(major, bits, size).name)
    # 4. staged layouts (tile_to_shape with both orders), slices, compositions, divides, values
    for _ in range(40):
        kind = rng.choice(list(SmemLayoutAtomKind))
        bits = rng.choice([8, 16, 32])
        atom = make_smem_layout_atom(kind, bits)
        a0, a1 = atom.outer.shape
        shape = (a0 * rng.choice([1, 2, 4]), a1 * rng.choice([1, 2]), rng.randint(1, 4))
        order = rng.choice([(0, 1, 2), (1, 0, 2)])
        make_atom = (f"a = cute.nvgpu.warpgroup.make_smem_layout_atom("
                     f"cute.nvgpu.warpgroup.SmemLayoutAtomKind.{kind.name}, {DSL_TYPES[bits]})\n")
        staged = atom.tile_to_shape(shape, order=order)
        case("tile_to_shape", make_atom + f"cute.tile_to_shape(a, {shape}, order={order})", str(staged))
        # the DSL simplifies a sliced swizzle by folding it into strides; for some 32-bit SW32 atoms that
        # folding is wrong (negative offsets).  We check ours against the DSL's *unsliced* layout and keep
        # the DSL's sliced values aside to show the discrepancy.
        sl = staged.slice_((None, None, 0))
        ours_vals = "(" + ",".join(str(sl(i)) for i in range(sl.size())) + ")"
        case("slice-stage0 vs DSL unsliced",
             make_atom + f"s = cute.tile_to_shape(a, {shape}, order={order})\n"
                         f"tuple(s(i) for i in range({sl.size()}))", ours_vals)
        case("DSL slice_ (known bug)",
             make_atom + f"s = cute.slice_(cute.tile_to_shape(a, {shape}, order={order}), (None,None,0))\n"
                         f"tuple(s(i) for i in range({sl.size()}))", ours_vals)
        idx = rng.sample(range(staged.size()), 48)
        case("staged-values", make_atom + f"s = cute.tile_to_shape(a, {shape}, order={order})\n"
                                          f"tuple(s(i) for i in {tuple(idx)})",
             "(" + ",".join(str(staged(i)) for i in idx) + ")")
        t0 = rng.choice([d for d in (1, 2, 4, 8) if a0 % d == 0])
        t1 = rng.choice([d for d in (1, 2, 4, 8) if a1 % d == 0])
        case("composition", make_atom + f"cute.composition(a, cute.make_layout(({t0},{t1}), stride=(1,{t0})))",
             str(atom.compose(make_layout((t0, t1), stride=(1, t0)))))
        case("logical_divide", make_atom + f"cute.logical_divide(a, ({t0},{t1}))", str(atom.logical_divide((t0, t1))))
        case("mode", make_atom + "a[1]", str(atom[1]))
        case("cosize", make_atom + f"cute.cosize(cute.tile_to_shape(a, {shape}, order={order}))", str(staged.cosize()))
    # 5. composed layouts with an offset, printing and evaluation
    for b, m, s in rng.sample(valid_swizzles(), 12):
        o = rng.choice([0, 3, 64])
        c = make_composed_layout(make_swizzle(b, m, s), o, make_layout((8, 32), stride=(32, 1)))
        snip = COMPOSED.format(b=b, m=m, s=s, o=o, shape=(8, 32), stride=(32, 1))
        if s > 0:
            case("composed-print", snip, str(c))
        case("composed-values", "c = " + snip + "\ntuple(c(i) for i in range(256))",
             "(" + ",".join(str(c(i)) for i in range(256)) + ")")
    # 6. what the DSL does with invalid swizzles: silently the identity (we raise instead)
    for b, m, s in [(3, 4, 2), (2, 1, 1), (-1, 4, 3)]:
        case("invalid->identity", f"cute.make_swizzle({b},{m},{s})", "S<0,4,3>")

    results = dsl_eval(snippets)
    bad, dsl_bug = [], []
    for lab, sn, r, exp in zip(labels, snippets, results, expected):
        if r.ok and r.value == exp:
            continue
        (dsl_bug if lab == "DSL slice_ (known bug)" and r.ok else bad).append((lab, sn, r.status, r.value, r.message[:200], exp))
    counts = {}
    for lab in labels:
        counts[lab] = counts.get(lab, 0) + 1
    print(f"\nswizzle/composed vs CuTe DSL: {len(snippets)} cases {counts}, {len(bad)} mismatches; "
          f"DSL slice_ wrong (disagrees with its own unsliced layout, we are right) in {len(dsl_bug)} cases")
    for b in dsl_bug[:2]:
        print("  e.g.", b[1].split("\n")[0][-60:], "->", b[3][:80], "...")
    assert not bad, bad[:3]
    # every DSL slice_ disagreement is a negative (impossible) smem offset: a DSL bug, not ours
    assert all(any(v.startswith("-") for v in b[3].strip("()").split(",")) for b in dsl_bug)
