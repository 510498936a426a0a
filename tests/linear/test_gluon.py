"""Gluon layouts: our ``to_linear_layout`` against Gluon's own conversion (Triton's C++ on the CPU)."""
import json
import os
import random
import subprocess
import sys
import textwrap

import pytest

from layoutlab import Layout
from layoutlab.errors import LayoutError
from layoutlab.linear.gluon import (BlockedLayout, DotOperandLayout, NVMMADistributedLayout, NVMMASharedLayout,
                                    SliceLayout, SwizzledSharedLayout)
from layoutlab.linear.layout import LinearLayout
from layoutlab.linear.conversion import layout_conversion
from layoutlab.linear.cute import tv_layout_to_linear_layout

pytest.importorskip("triton", reason="triton (Gluon's layout oracle) is not installed")
pytestmark = [pytest.mark.triton, pytest.mark.xdist_group("triton_gluon")]

WORKER = textwrap.dedent(r'''
    import json, sys
    from triton._C.libtriton import ir, gluon_ir
    import triton.experimental.gluon.language as ttgl
    ctx = ir.context(); ir.load_dialects(ctx)
    b = gluon_ir.GluonOpBuilder(ctx)

    def build(s):
        k, a = s["kind"], dict(s["args"])
        if k in ("SliceLayout", "DotOperandLayout"):
            a["parent"] = build(a["parent"])
        return getattr(ttgl, k)(**a)

    for line in sys.stdin:
        i, spec, shape = json.loads(line)
        try:
            r = b.to_linear_layout(build(spec)._to_ir(b), shape)
            if hasattr(r, "reg_bases"):
                out = [["register", r.reg_bases], ["lane", r.lane_bases], ["warp", r.warp_bases]]
            else:
                out = [["offset", r.offset_bases]]
            print(json.dumps([i, "ok", out]), flush=True)
        except Exception as e:
            print(json.dumps([i, "error", str(e)[:300]]), flush=True)
''')


def gluon_oracle(cases):
    """{index: ("ok", bases) | ("error", msg) | ("crash", stderr)}; a case that aborts the process is
    pinned and the rest rerun in a fresh one."""
    results, todo = {}, list(enumerate(cases))
    while todo:
        payload = "".join(json.dumps([i, spec, shape]) + "\n" for i, (spec, shape) in todo)
        proc = subprocess.run([sys.executable, "-c", WORKER], input=payload, capture_output=True, text=True,
                              timeout=900)
        for line in proc.stdout.splitlines():
            if line.startswith("["):
                i, status, val = json.loads(line)
                results[i] = (status, val)
        todo = [(i, c) for i, c in todo if i not in results]
        if todo:
            results[todo[0][0]] = ("crash", proc.stderr.strip().splitlines()[-1:] if proc.stderr else "")
            todo = todo[1:]
    return results


def spec(layout):
    """Our layout object -> the JSON spec the worker rebuilds with Gluon's classes (same field names)."""
    args = {}
    for f in layout.__dataclass_fields__:
        v = getattr(layout, f)
        args[f] = spec(v) if hasattr(v, "__dataclass_fields__") else (list(v) if isinstance(v, (list, tuple)) else v)
    return {"kind": type(layout).__name__, "args": args}


def ours(layout, shape):
    ll = layout.to_linear_layout(shape)
    d = dict(ll.bases)
    if "offset" in d:
        return [["offset", d["offset"]]]
    return [[k, d.get(k, [])] for k in ("register", "lane", "warp")]


def split_bits(rng, total, parts):
    out = [0] * parts
    for _ in range(total):
        out[rng.randrange(parts)] += 1
    return [1 << x for x in out]


def random_cases(rng, n_each=60):
    cases = []
    for _ in range(n_each):
        rank = rng.choice([2, 2, 2, 3])
        order = list(range(rank))
        rng.shuffle(order)
        bl = BlockedLayout([rng.choice([1, 2, 4]) for _ in range(rank)], split_bits(rng, 5, rank),
                           split_bits(rng, rng.randint(0, 3), rank), order)
        shape = [1 << rng.randint(0, 6) for _ in range(rank)]
        cases.append((bl, shape))
        if rank == 2:
            d = rng.randint(0, 1)
            cases.append((SliceLayout(d, bl), [1 << rng.randint(0, 7)]))
    for _ in range(n_each):
        w = split_bits(rng, rng.randint(0, 3), 2)
        v2 = NVMMADistributedLayout([2, 0], w, [16, 8])
        cases.append((v2, [16 << rng.randint(0, 3), 8 << rng.randint(0, 4)]))
        n = 8 << rng.randint(0, 5)
        v3 = NVMMADistributedLayout([3, 0], [4 << rng.randint(0, 1), 1 << rng.randint(0, 1)], [16, n, 16])
        cases.append((v3, [64 << rng.randint(0, 2), n << rng.randint(0, 1)]))
        kw = rng.choice([1, 2, 4, 8])
        cases.append((DotOperandLayout(0, v2, kw), [16 << rng.randint(0, 3), kw * 8 << rng.randint(0, 2)]))
        cases.append((DotOperandLayout(1, v2, kw), [kw * 8 << rng.randint(0, 2), 8 << rng.randint(0, 3)]))
        cases.append((DotOperandLayout(0, v3, rng.choice([1, 2, 4])), [64 << rng.randint(0, 1), 64]))
        cases.append((SliceLayout(rng.randint(0, 1), v2), [1 << rng.randint(3, 7)]))
    for _ in range(n_each):
        width = rng.choice([0, 32, 64, 128])
        bits = rng.choice([8, 16, 32])
        tr = rng.random() < 0.5
        cols = (width or 16) * 8 // bits
        rows = 8
        s_cont = cols << rng.randint(0, 2)
        s_rows = rows << rng.randint(0, 3)
        shape = [s_cont, s_rows] if tr else [s_rows, s_cont]
        cases.append((NVMMASharedLayout(width, bits, 2, tr), shape))
        order = rng.choice([[1, 0], [0, 1]])
        cases.append((SwizzledSharedLayout(rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4]), rng.choice([1, 2, 4, 8]),
                                           order), [1 << rng.randint(2, 6), 1 << rng.randint(2, 6)]))
    return cases


def edge_cases(rng, n_each=40):
    """Issue 17 items 13-14: MMA tiles larger than the tensor (K < 8 k_width, M < 16, N < 8), rank-3 MMA
    layouts, NVMMAShared with fp4 padding, unswizzled rows of more than 256 bytes, and rank-3 shapes."""
    cases = []
    for _ in range(n_each):
        w = split_bits(rng, rng.randint(0, 2), 2)
        v2 = NVMMADistributedLayout([2, 0], w, [16, 8])
        cases.append((v2, [8 << rng.randint(0, 2), 4 << rng.randint(0, 2)]))
        kw = rng.choice([2, 4, 8])
        cases.append((DotOperandLayout(0, v2, kw), [8 << rng.randint(0, 2), kw * 8 >> rng.randint(0, 2)]))
        cases.append((DotOperandLayout(1, v2, kw), [kw * 8 >> rng.randint(0, 2), 4 << rng.randint(0, 2)]))
        v3 = NVMMADistributedLayout([3, 0], [4, 1], [16, 8 << rng.randint(0, 3), 16])
        cases.append((DotOperandLayout(0, v3, kw), [64, kw * 8 >> rng.randint(0, 2)]))
        v2b = NVMMADistributedLayout([2, 0], [1] + split_bits(rng, rng.randint(0, 2), 2), [1, 16, 8])
        batch = 1 << rng.randint(0, 2)
        cases.append((v2b, [batch, 16 << rng.randint(0, 1), 8 << rng.randint(0, 1)]))
        cases.append((DotOperandLayout(0, v2b, kw), [batch, 16 << rng.randint(0, 1), kw * 8 >> rng.randint(0, 1)]))
        # shared: fp4 padding (128-byte swizzle of packed 8-bit pairs), either orientation
        tr = rng.random() < 0.5
        cont, rows = 64 << rng.randint(0, 1), 8 << rng.randint(0, 2)
        cases.append((NVMMASharedLayout(128, 8, 2, tr, True), [cont, rows] if tr else [rows, cont]))
        # unswizzled: the contiguous dim runs up to 256 elements whatever the element size
        bits = rng.choice([8, 16, 32, 64])
        cont, rows = 1 << rng.randint(2, 9), 1 << rng.randint(0, 9)
        cases.append((NVMMASharedLayout(0, bits, 2, tr), [cont, rows] if tr else [rows, cont]))
        # rank 3: the outer dims collapse into rows of the swizzle tile
        width, bits = rng.choice([32, 64, 128]), rng.choice([8, 16, 32])
        cont = width * 8 // bits << rng.randint(0, 1)
        outer = [1 << rng.randint(0, 2), 8 << rng.randint(0, 1)]
        cases.append((NVMMASharedLayout(width, bits, 3, tr), [cont] + outer[::-1] if tr else outer + [cont]))
        cases.append((NVMMASharedLayout(0, bits, 3), [1 << rng.randint(0, 3) for _ in range(2)] + [cont]))
    return cases


def test_against_gluon():
    cases = random_cases(random.Random(2024)) + edge_cases(random.Random(17))
    theirs = gluon_oracle([(spec(lay), shape) for lay, shape in cases])
    counts, bad, refused, crashed = {}, [], 0, 0
    for i, (lay, shape) in enumerate(cases):
        kind = type(lay).__name__
        status, val = theirs[i]
        try:
            mine = ours(lay, shape)
        except LayoutError as e:
            mine = e
        if status != "ok":
            # Gluon raised or aborted: we must refuse too (never a silent answer Gluon would not give)
            crashed += status == "crash"
            refused += 1
            if not isinstance(mine, LayoutError):
                bad.append((kind, spec(lay), shape, status, val, mine))
            continue
        counts[kind] = counts.get(kind, 0) + 1
        if mine != val:
            bad.append((kind, spec(lay), shape, val, mine))
    print(f"\ngluon layouts vs Gluon's to_linear_layout: {sum(counts.values())} compared {counts}; "
          f"{refused} refused by both ({crashed} aborted Gluon's process); {len(bad)} mismatches")
    assert not bad, bad[:3]


def test_seed001_blocked_layout_and_its_cute_form():
    bl = BlockedLayout(size_per_thread=[2, 2], threads_per_warp=[4, 8], warps_per_cta=[2, 1], order=[1, 0])
    ll = bl.to_linear_layout([16, 16])
    # from the definition: registers fill dim1 then dim0; 8 lanes along dim1 (after 2 registers), 4 along dim0
    assert ll.bases == [("register", [[0, 1], [1, 0]]),
                        ("lane", [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]]),
                        ("warp", [[8, 0]])]
    # the same map as the CuTe TV layout ((8,4,2),(2,2)):((32,2,8),(16,1)) on the 16x16 tile (index m + 16 n)
    tv = Layout(((8, 4, 2), (2, 2)), ((32, 2, 8), (16, 1)))
    assert tv_layout_to_linear_layout(tv, (16, 16)) == ll
    # element (0,1) sits in register 1 of thread 0; element (0,2) in thread 1 (seed 001's walk-through)
    inv = ll.invert()
    assert inv.apply({"dim0": 0, "dim1": 1}) == {"register": 1, "lane": 0, "warp": 0}
    assert inv.apply({"dim0": 0, "dim1": 2}) == {"register": 0, "lane": 1, "warp": 0}


def test_layout_conversions_are_classified():
    a = BlockedLayout([2, 2], [4, 8], [2, 1], [1, 0]).to_linear_layout([16, 16])
    b = BlockedLayout([2, 2], [4, 8], [2, 1], [0, 1]).to_linear_layout([16, 16])   # registers transposed
    assert layout_conversion(a, a).kind == "none"
    regs_swapped = LinearLayout.from_bases([("register", [[1, 0], [0, 1]])] + a.bases[1:], ["dim0", "dim1"])
    assert layout_conversion(a, regs_swapped).kind == "register"
    c = BlockedLayout([1, 4], [8, 4], [2, 1], [1, 0]).to_linear_layout([16, 16])     # lanes re-shuffled in the warp
    assert layout_conversion(a, c).kind == "warp_shuffle"
    d = BlockedLayout([2, 2], [4, 8], [1, 2], [1, 0]).to_linear_layout([16, 16])     # warps split the other dim
    assert layout_conversion(a, d).kind == "shared_memory"
    assert layout_conversion(a, b).kind in ("warp_shuffle", "shared_memory")
    for src, dst in ((a, c), (a, d), (c, d)):
        cvt = layout_conversion(src, dst).map
        for x in range(0, 256, 7):
            hw = {"register": x & 3, "lane": (x >> 2) & 31, "warp": x >> 7}
            assert dst.apply(hw) == src.apply(cvt.apply(hw))


def test_unswizzled_transposed_rank3_shared_layout_is_refused():
    """Triton 3.9 gives this layout offsets that repeat elements (not injective): we refuse it (see the
    conformance page, "Where we differ")."""
    lay, shape = NVMMASharedLayout(0, 16, 3, True), [8, 4, 2]
    status, val = gluon_oracle([(spec(lay), shape)])[0]
    assert status == "ok"
    theirs = LinearLayout.from_bases([tuple(b) for b in val], ["dim0", "dim1", "dim2"], shape, require_surjective=False)
    assert not theirs.is_injective()
    with pytest.raises(LayoutError, match="not injective"):
        lay.to_linear_layout(shape)


def test_bad_gluon_arguments():
    with pytest.raises(LayoutError, match="same length"):
        BlockedLayout([1, 1], [32], [1, 1], [1, 0])
    with pytest.raises(LayoutError, match="not a power of two"):
        BlockedLayout([3, 1], [4, 8], [1, 1], [1, 0])
    with pytest.raises(LayoutError, match="permutation"):
        BlockedLayout([1, 1], [4, 8], [1, 1], [1, 1])
    with pytest.raises(LayoutError, match="0, 32, 64 or 128"):
        NVMMASharedLayout(16, 16)
    with pytest.raises(LayoutError, match="fp4_padded needs"):
        NVMMASharedLayout(64, 8, fp4_padded=True)
    with pytest.raises(LayoutError, match="smaller than one"):
        NVMMASharedLayout(128, 16).to_linear_layout([8, 32])
    with pytest.raises(LayoutError, match="shared memory"):
        DotOperandLayout(1, NVMMADistributedLayout([3, 0], [4, 1], [16, 64, 16]), 2)
    with pytest.raises(LayoutError, match="rank"):
        BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0]).to_linear_layout([16])


@pytest.mark.parametrize("width", [32, 64, 128])
@pytest.mark.parametrize("bits", [8, 16, 32])
@pytest.mark.parametrize("transposed", [False, True])
def test_nvmma_shared_is_the_cute_gmma_atom(width, bits, transposed):
    """Gluon's NVMMASharedLayout (offset -> coordinate) inverts CuTe's GMMA atom tiled over the same tile
    (coordinate -> byte address, the swizzle acting on bytes): the same shared memory, two notations."""
    from layoutlab.nvgpu.warpgroup import make_smem_layout_atom
    eb = bits // 8
    cont = width // eb                       # elements along the contiguous dim in one atom row
    kind = ("MN_SW" if transposed else "K_SW") + str(width)
    atom = make_smem_layout_atom(kind, bits)
    shape = (2 * cont, 32) if transposed else (32, 2 * cont)
    # stack atoms along the non-contiguous dim first, as the DSL's GEMM does (order (0,1,2) for K-major,
    # (1,0,2) for MN-major); Gluon's layout does the same
    tiled = atom.tile_to_shape(shape, order=(1, 0) if transposed else (0, 1))
    gl = NVMMASharedLayout(width, bits, 2, transposed).to_linear_layout(list(shape)).invert()
    for m in range(shape[0]):
        for n in range(shape[1]):
            assert gl.apply({"dim0": m, "dim1": n})["offset"] * eb == tiled.byte_address((m, n), eb), (m, n)
