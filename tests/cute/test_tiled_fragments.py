"""Register fragments (make_fragment_A/B/C, partition_fragment_A/B/C, make_fragment_like) and TiledCopy.retile:
against the CuTe DSL (printed layouts identical), by property (retile routes every loaded element into the
register where the MMA reads it), and the refusals where the DSL is lenient."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layoutlab import (Layout, LayoutError, make_copy_atom, make_identity_tensor, make_layout, make_tensor, nvgpu)
from layoutlab.dsl import HAVE_DSL, SKIP_REASON, dsl_eval
from layoutlab.cute.tiled import (make_fragment_like, make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C,
                                  make_tiled_mma, partition_fragment_A, partition_fragment_C)

SETUP = """
from cutlass import Float16, BFloat16, Float32
def smem(layout):
    return cute.make_tensor(cute.make_ptr(Float16, 0, cute.AddressSpace.smem, assumed_align=16), layout)
def ldsm(t, n):
    return cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(t, n), Float16)
def stsm(t, n):
    return cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(t, n), Float16)
L = cute.make_layout
"""


def _mma(k, atoms, perm):
    return make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, k)), atoms, perm)


def _mma_src(k, atoms, perm):
    atoms_src = atoms if isinstance(atoms, tuple) else atoms[0]
    return (f"cute.make_tiled_mma(cute.make_mma_atom(cute.nvgpu.warp.MmaF16BF16Op(Float16, Float32, (16,8,{k}))), "
            f"{atoms_src}, {perm[0] if isinstance(perm, list) else perm})")


def _perm_ours(perm):
    return perm[1] if isinstance(perm, list) else perm


def _atoms_ours(atoms):
    return atoms if isinstance(atoms, tuple) else atoms[1]


# (k, atom layout, permutation): one warp, warp-tiled, value-repeated, N-first warp numbering, permuted N
TILINGS = [
    (16, (1, 1, 1), None),
    (16, (1, 1, 1), (16, 16, 16)),
    (8, (1, 1, 1), None),
    (8, (1, 1, 1), (16, 32, 8)),
    (16, (2, 2, 1), None),
    (16, (2, 2, 1), (32, 32, 16)),
    (16, (4, 1, 1), (64, 16, 32)),
    (16, ["cute.make_layout((2,2,1), stride=(2,1,0))", make_layout((2, 2, 1), stride=(2, 1, 0))], (32, 32, 16)),
    (16, (2, 2, 1), ["(32,cute.make_layout((16,2),stride=(2,1)),16)", (32, make_layout((16, 2), stride=(2, 1)), 16)]),
]


def _smem_layouts(rows, cols):
    """(label, DSL source, ours) for an operand tile 2x the MMA tile: K-major and MN-major, plus a 3-mode stage."""
    return [("K-major", f"L(({rows},{cols}), stride=({cols},1))", make_layout((rows, cols), stride=(cols, 1))),
            ("MN-major", f"L(({rows},{cols}))", make_layout((rows, cols)))]


def _ldsm_count(tm, operand):
    tv = tm.tv_layout_A_tiled if operand == "A" else tm.tv_layout_B_tiled
    n = tv[1].size() // 2
    return next(x for x in (4, 2, 1) if n % x == 0)


def _cases():
    cases = []
    for k, atoms, perm in TILINGS:
        tm = _mma(k, _atoms_ours(atoms), _perm_ours(perm))
        src = _mma_src(k, atoms, perm)
        tile_m, tile_n, tile_k = tm.tile_size_mnk
        label = f"16x8x{k} {atoms if isinstance(atoms, tuple) else 'N-first'} {perm if not isinstance(perm, list) else 'permuted N'}"
        for thr in (0, 37 % tm.size, tm.size - 1):
            for operand, rows in (("A", tile_m), ("B", tile_n)):
                for kind, lsrc, lay in _smem_layouts(2 * rows, 2 * tile_k):
                    frag = lambda tm=tm, thr=thr, lay=lay, operand=operand: getattr(  # noqa: E731
                        tm.get_slice(thr), f"partition_fragment_{operand}")(lay)
                    dsl_frag = f"m = {src}\nf = m.make_fragment_{operand}(m.get_slice({thr}).partition_{operand}(smem({lsrc})))"
                    cases.append((f"{label} thr {thr} {operand} {kind}: fragment", dsl_frag + "\nf.layout",
                                  lambda frag=frag: str(frag().layout)))
                    for trans in (False, True):
                        n = _ldsm_count(tm, operand)
                        for x in sorted({n, 1}):
                            copy = lambda tm=tm, operand=operand, trans=trans, x=x: (  # noqa: E731
                                make_tiled_copy_A if operand == "A" else make_tiled_copy_B)(
                                make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(trans, x), "f16"), tm)
                            snip = (dsl_frag + f"\nc = cute.make_tiled_copy_{operand}(ldsm({trans}, {x}), m)\n"
                                    f"(c.get_slice({thr}).retile(f).layout, c.get_slice({thr}).partition_S(smem({lsrc})).layout)")
                            cases.append((f"{label} thr {thr} {operand} {kind} ldsm {trans} x{x}: retile, partition_S", snip,
                                          lambda copy=copy, frag=frag, thr=thr, lay=lay: "(" + ",".join(
                                              (str(copy().retile(frag()).layout),
                                               str(copy().get_slice(thr).partition_S(lay).layout))) + ")"))
            shp = (2 * tile_m, 2 * tile_n)
            cases.append((f"{label} thr {thr} C: fragment",
                          f"m = {src}\nm.make_fragment_C(m.get_slice({thr}).partition_C(smem(L({shp}, stride=({shp[1]},1))))).layout",
                          lambda tm=tm, thr=thr, shp=shp: str(tm.get_slice(thr).partition_fragment_C(
                              make_layout(shp, stride=(shp[1], 1))).layout)))
            cases.append((f"{label} C from shape", f"m = {src}\nm.make_fragment_C(m.partition_shape_C({shp})).layout",
                          lambda tm=tm, shp=shp: str(partition_fragment_C(tm, shp).layout)))
            if tm.tv_layout_C_tiled[1].size() % 8 == 0:
                for x in (2, 4):
                    snip = (f"m = {src}\nf = m.make_fragment_C(m.partition_shape_C({shp}))\n"
                            f"c = cute.make_tiled_copy_C(stsm(False, {x}), m)\nc.retile(f).layout")
                    cases.append((f"{label} C stsm x{x}: retile", snip, lambda tm=tm, shp=shp, x=x: str(
                        make_tiled_copy_C(make_copy_atom(nvgpu.warp.StMatrix8x8x16bOp(False, x), "f16"), tm).retile(
                            partition_fragment_C(tm, shp)).layout)))
    likes = ["L(((2,2),2,2),stride=((1,2),4,2))", "L(((2,2),2,4),stride=((1,2),0,8))", "L(((2,2),2),stride=((0,1),4))",
             "L(((2,2),2),stride=((8,1),4))", "L(((2,2),(2,3),4),stride=((8,1),(100,4),2))",
             "L((4,(2,3)),stride=(1,(0,5)))", "L(8,stride=3)", "L((8,),stride=(3,))",
             "L(((2,2),1,1),stride=((16,8),0,0))", "L(((2,2,2),2,4),stride=((1,512,8),1024,16))"]
    for src in likes:
        ours = eval(src.replace("L(", "make_layout("))
        cases.append((f"make_fragment_like {src}", f"cute.make_fragment_like({src})",
                      lambda ours=ours: str(make_fragment_like(ours))))
    cases.append(("make_fragment_like tensor", "cute.make_fragment_like(smem(L(((2,2,2),2,4),stride=((1,512,8),1024,16))))"
                  ".layout", lambda: str(make_fragment_like(make_tensor(0, Layout(((2, 2, 2), 2, 4),
                                                                                   ((1, 512, 8), 1024, 16)))).layout)))
    return cases


CASES = _cases()


def test_enough_cases():
    assert len(CASES) > 200


@pytest.mark.dsl
@pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON)
def test_fragments_and_retile_match_the_dsl():
    results = dsl_eval([s for _, s, _ in CASES], setup=SETUP)
    bad, errors = [], []
    for (label, snip, ours), r in zip(CASES, results):
        if not r.ok:
            errors.append(f"{label}: DSL {r.status}: {r.message[:300]}")
        elif ours() != r.value:
            bad.append(f"{label}\n  DSL : {r.value}\n  ours: {ours()}")
    print(f"\nfragments/retile vs CuTe DSL: {len(CASES)} cases, {len(bad)} differ, {len(errors)} DSL errors")
    assert not errors, "\n".join(errors[:5])
    assert not bad, "\n".join(bad[:6])


# ---- where the DSL is lenient, we refuse --------------------------------------------------------------------

@pytest.mark.dsl
@pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON)
def test_dsl_leniencies_that_we_refuse():
    snips = [
        # an unpartitioned (16,16) tile is accepted as an "A fragment"
        "cute.make_tiled_mma(cute.make_mma_atom(cute.nvgpu.warp.MmaF16BF16Op(Float16, Float32, (16,8,16)))).make_fragment_A(L((16,16))).layout",
        # tied strides give an aliasing fragment
        "cute.make_fragment_like(L((2,3,4), stride=(5,7,7)))",
        # the too-wide x4 copy of a 2-value B fragment: its retiled view has more values than the fragment
        "m = " + _mma_src(8, (1, 1, 1), (16, 16, 8)) + "\nf = m.make_fragment_B(m.get_slice(3).partition_B(smem(L((32,64), stride=(64,1)))))\n"
        "(f.layout, cute.make_tiled_copy_B(ldsm(False, 4), m).retile(f).layout)",
    ]
    r1, r2, r3 = dsl_eval(snips, setup=SETUP)
    assert r1.ok and r1.value == "(16,16):(1,16)"
    with pytest.raises(LayoutError, match="not a thread's partition"):
        _mma(16, (1, 1, 1), None).make_fragment_A(make_layout((16, 16)))
    assert r2.ok and r2.value == "(2,3,4):(1,2,2)"        # (0,1,0) and (0,0,1) share register 2
    with pytest.raises(LayoutError, match="alias"):
        make_fragment_like(make_layout((2, 3, 4), stride=(5, 7, 7)))
    assert r3.ok and r3.value == "((2,4,8):(1,16,2),(((2,2,2),1),2,8):(((1,16,0),0),32,2))"
    frag_size, view = 2 * 4 * 8, Layout((((2, 2, 2), 1), 2, 8), (((1, 16, 0), 0), 32, 2))
    assert view.size() == 2 * frag_size    # the DSL's view covers 128 "values" of a 64-register fragment
    with pytest.raises(LayoutError, match="too few vals"):
        make_tiled_copy_B(make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(False, 4), "f16"), _mma(8, (1, 1, 1), (16, 16, 8)))


def test_refusals():
    tm = _mma(16, (2, 2, 1), None)
    with pytest.raises(LayoutError, match="mode 0 must have size 8"):
        tm.make_fragment_A(make_layout((4, 2, 2)))
    with pytest.raises(LayoutError, match="which thread"):
        partition_fragment_A(tm, make_layout((64, 32)))
    with pytest.raises(LayoutError, match="coordinate strides"):
        tm.get_slice(0).partition_fragment_A(make_identity_tensor((64, 32)))
    wg = make_tiled_mma(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16)))
    with pytest.raises(LayoutError, match="matrix descriptor"):
        wg.make_fragment_B(wg.partition_shape_B((64, 16)))
    copy = make_tiled_copy_A(make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(False, 4), "f16"), tm)
    with pytest.raises(LayoutError, match="not a thread's fragment"):
        copy.retile(make_layout(8))
    with pytest.raises(LayoutError, match="Layout or a Tensor"):
        copy.retile("tCrA")


# ---- properties ----------------------------------------------------------------------------------------------

def _random_setup(rng):
    k = rng.choice([8, 16])
    wm, wn = rng.choice([1, 2, 4]), rng.choice([1, 2])
    reps = [rng.choice([1, 2]) for _ in range(3)]
    tm = _mma(k, (wm, wn, 1), (16 * wm * reps[0], 8 * wn * reps[1], k * reps[2]))
    operand = rng.choice("AB")
    rows = tm.get_tile_size(0 if operand == "A" else 1)
    kk = tm.get_tile_size(2)
    shape = (rows * rng.choice([1, 2]), kk * rng.choice([1, 2]))
    k_major = rng.random() < 0.5
    lay = make_layout(shape, stride=(shape[1], 1)) if k_major else make_layout(shape)
    n = _ldsm_count(tm, operand)
    x = rng.choice([m for m in (1, 2, 4) if n % m == 0])
    make = make_tiled_copy_A if operand == "A" else make_tiled_copy_B
    copy = make(make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(not k_major, x), "f16"), tm)
    return tm, operand, shape, lay, copy, rng.randrange(tm.size)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6))
def test_retile_routes_each_loaded_element_to_the_register_the_mma_reads(seed):
    """For a thread, the copy writes tile element partition_D(id)[i] into register retile(frag)(i); the MMA
    reads register frag(j) as element partition_A(id)[j]. They must agree for every register."""
    tm, operand, shape, lay, copy, thr = _random_setup(random.Random(seed))
    thr_mma = tm.get_slice(thr)
    frag = getattr(thr_mma, f"partition_fragment_{operand}")(lay)
    view = copy.retile(frag)
    ident = make_identity_tensor(shape)
    dst = copy.get_slice(thr).partition_D(ident)
    mma_coord = getattr(thr_mma, f"partition_{operand}")(ident)
    assert view.layout.size() == frag.layout.size() == dst.size()
    reg_of = {frag.layout(j): j for j in range(frag.layout.size())}
    assert sorted(reg_of) == list(range(frag.layout.size()))       # the fragment is a bijection onto registers
    for i in range(view.layout.size()):
        assert dst[i] == mma_coord[reg_of[view.layout(i)]]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6))
def test_retiled_view_is_shaped_like_the_copy_source(seed):
    """copy(tCsA, tCrA_view) needs the same rest modes on both sides and the same number of copy instructions in
    mode 0 (an ldmatrix.x1 lane names 8 source elements but receives 2: the sides' values per atom differ)."""
    tm, operand, shape, lay, copy, thr = _random_setup(random.Random(seed))
    frag = getattr(tm.get_slice(thr), f"partition_fragment_{operand}")(lay)
    view = copy.retile(frag)
    src = copy.get_slice(thr).partition_S(lay)
    assert view.layout.shape[1:] == src.layout.shape[1:]
    assert view.layout[0].size() % copy.atom.num_val == 0
    src_per_atom = copy.atom.layout_src_tv[1].size()
    assert view.layout[0].size() // copy.atom.num_val == src.layout[0].size() // src_per_atom


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 3, 4]), min_size=2, max_size=4), st.randoms(use_true_random=False))
def test_fragment_like_is_compact_and_follows_the_stride_order(shape, rnd):
    """make_fragment_like of an injective layout: a bijection onto 0..size-1, mode 0 column-major, and the
    other modes in the order of the input's strides."""
    strides = rnd.sample(range(1, 50), len(shape))
    lay = make_layout(tuple(shape), stride=tuple(strides))
    frag = make_fragment_like(lay)
    assert sorted(frag(i) for i in range(frag.size())) == list(range(frag.size()))
    assert frag.shape == lay.shape
    rest = [(s, d, fd) for s, d, fd in zip(shape[1:], strides[1:], frag.stride[1:]) if s > 1]
    rest.sort(key=lambda t: t[1])
    assert [fd for _, _, fd in rest] == sorted(fd for _, _, fd in rest)
