"""The numbers quoted in the course's source documents, reproduced with layoutlab (and, where available,
with the CuTe DSL itself).

* seed 000: the Hopper WGMMA accumulator layout ``((4,8,4),(2,2,8)):((128,1,16),(64,8,512))`` evaluated at
  T1D0, T4D0, T32D0, T0D1, T0D2, T0D4 on the 64x64 tile;
* seed 003: ``sgemm_nt_1``'s ``local_tile`` results for M = N = 5120, K = 4096 and 128x128x8 CTA tiles.
"""

from __future__ import annotations

import pytest

from layoutlab import (
    Layout,
    Step,
    X,
    composition,
    cosize,
    idx2crd,
    local_partition,
    local_tile,
    make_identity_layout,
    make_layout,
    make_tensor,
    parse_layout,
    size,
)
from layoutlab.dsl import HAVE_DSL, SKIP_REASON, dsl_eval

WGMMA_C = "((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"

# (thread, value) -> (natural coordinate, offset, (m, n)) as listed in seed 000
SEED_000 = [
    ((1, 0), ((1, 0, 0), (0, 0, 0)), 128, (0, 2)),
    ((4, 0), ((0, 1, 0), (0, 0, 0)), 1, (1, 0)),
    ((32, 0), ((0, 0, 1), (0, 0, 0)), 16, (16, 0)),
    ((0, 1), ((0, 0, 0), (1, 0, 0)), 64, (0, 1)),
    ((0, 2), ((0, 0, 0), (0, 1, 0)), 8, (8, 0)),
    ((0, 4), ((0, 0, 0), (0, 0, 1)), 512, (0, 8)),
]


@pytest.mark.parametrize("tv, natural, offset, mn", SEED_000, ids=[f"T{t}D{v}" for (t, v), *_ in SEED_000])
def test_wgmma_accumulator_evaluations(tv, natural, offset, mn):
    C = parse_layout(WGMMA_C)
    assert str(C) == WGMMA_C
    assert idx2crd(tv, C.shape) == natural
    assert C(tv) == offset
    assert C(natural) == offset
    # the 64x64 tile is column-major: offset k -> (k % 64, k // 64)
    assert idx2crd(offset, (64, 64)) == mn
    # the same map as a coordinate layout: identity(64,64) o C sends (T,V) straight to (m, n)
    assert composition(make_identity_layout((64, 64)), C)(tv) == mn


def test_wgmma_accumulator_is_a_bijection_onto_the_tile():
    C = parse_layout(WGMMA_C)
    assert size(C) == 128 * 32 == 64 * 64
    assert cosize(C) == 64 * 64
    assert sorted(C.table().tolist()) == list(range(64 * 64))


M, N, K = 5120, 5120, 4096
BM, BN, BK = 128, 128, 8


def _sgemm_tensors():
    mA = make_tensor(0, make_layout((M, K), stride=(1, M)))  # M-major A (BLAS "N")
    mB = make_tensor(0, make_layout((N, K), stride=(1, N)))  # N-major B (BLAS "T")
    mC = make_tensor(0, make_layout((M, N), stride=(1, M)))
    return mA, mB, mC


@pytest.mark.parametrize("bm, bn", [(0, 0), (3, 5), (39, 39)])
def test_sgemm_nt_1_local_tile(bm, bn):
    mA, mB, mC = _sgemm_tensors()
    tile = (BM, BN, BK)
    coord = (bm, bn, None)
    gA = local_tile(mA, tile, coord, Step(1, X, 1))
    gB = local_tile(mB, tile, coord, Step(X, 1, 1))
    gC = local_tile(mC, tile, coord, Step(1, 1, X))
    # the seed prints these three layouts
    assert str(gA.layout) == "(128,8,512):(1,5120,40960)"
    assert str(gB.layout) == "(128,8,512):(1,5120,40960)"
    assert str(gC.layout) == "(128,128):(1,5120)"
    # each CTA starts at its own block: A rows bm*128, B rows bn*128, C at (bm*128, bn*128)
    assert gA.iterator == bm * BM
    assert gB.iterator == bn * BN
    assert gC.iterator == bm * BM + bn * BN * M
    # every k-tile skips 8 columns: 5120 * 8 = 40960
    assert gA[0, 0, 1] - gA[0, 0, 0] == BK * M


def test_sgemm_nt_1_sizes_and_thread_partition():
    sA = make_layout((BM, BK))
    tA = make_layout((32, 8))
    tC = make_layout((16, 16))
    assert cosize(sA) == 1024  # smemA[cosize_v<ABlockLayout>]
    assert size(tC) == 256  # dimBlock
    assert -(-M // BM) == 40  # dimGrid.x
    mA, _, _ = _sgemm_tensors()
    gA = local_tile(mA, (BM, BN, BK), (0, 0, None), Step(1, X, 1))
    tAgA = local_partition(gA, tA, 37)
    assert size(tAgA.layout, mode=[2]) == K // BK  # k_max = size<2>(tAgA)
    # thread 37 of the (32,8) thread layout sits at (5, 1): rows 5, 37, 69, 101 of column 1
    assert tAgA.iterator == 5 + 1 * M
    assert [tAgA[i, 0, 0] for i in range(4)] == [5 + M + 32 * i for i in range(4)]


@pytest.mark.dsl
@pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON or "CuTe DSL unavailable")
def test_seed_numbers_agree_with_the_dsl():
    mk = f"cute.make_tensor(0, cute.make_layout(({M},{K}), stride=(1,{M})))"
    snippets = [
        f"cute.local_tile({mk}, ({BM},{BN},{BK}), (3,5,None), proj=(1,None,1))",
        f"cute.local_partition(cute.local_tile({mk}, ({BM},{BN},{BK}), (0,0,None), proj=(1,None,1)), "
        f"cute.make_layout((32,8)), cutlass.Int32(37))",
        f"c = cute.make_layout({parse_layout(WGMMA_C).shape!r}, stride={parse_layout(WGMMA_C).stride!r})\n"
        f"cute.composition(cute.make_identity_layout((64,64)), c)((1,0))",
        f"c = cute.make_layout({parse_layout(WGMMA_C).shape!r}, stride={parse_layout(WGMMA_C).stride!r})\nc((0,4))",
    ]
    mA, _, _ = _sgemm_tensors()
    gA = local_tile(mA, (BM, BN, BK), (3, 5, None), Step(1, X, 1))
    tAgA = local_partition(local_tile(mA, (BM, BN, BK), (0, 0, None), Step(1, X, 1)), make_layout((32, 8)), 37)
    ours = [str(gA), str(tAgA), "(0,2)", "512"]
    got = [r.value if r.ok else f"{r.status}: {r.message}" for r in dsl_eval(snippets)]
    assert got == ours
