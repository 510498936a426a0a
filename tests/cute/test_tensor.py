"""Tensor, local_tile and local_partition: unit tests and a differential test against the CuTe DSL."""

from __future__ import annotations

import random

import numpy as np
import pytest

from layoutlab import (
    Layout,
    LayoutError,
    Step,
    X,
    local_partition,
    local_tile,
    make_identity_tensor,
    make_layout,
    make_tensor,
)
from layoutlab.dsl import HAVE_DSL, SKIP_REASON, dsl_eval
from layoutlab.cute.tensor import get_flat_coord


def test_array_engine_reads_and_writes_through_the_layout():
    data = np.arange(24.0)
    t = make_tensor(data, Layout((4, 6), (6, 1)))  # row-major 4x6 view
    assert t[1, 2] == 8.0
    assert t[7] == 19.0  # index 7 -> coordinate (3, 1) -> 3*6 + 1
    assert t[None, 1].values().tolist() == [1.0, 7.0, 13.0, 19.0]
    t[None, 0] = -1.0
    assert data[[0, 6, 12, 18]].tolist() == [-1.0] * 4
    with pytest.raises(LayoutError, match="outside the engine"):
        make_tensor(np.zeros(4), Layout(8))[5]


def test_identity_tensor_returns_coordinates():
    t = make_identity_tensor((4, 6))
    assert t[1, 2] == (1, 2)
    assert t[9] == (1, 2)
    assert str(t) == "tensor<(0,0) o (4,6):(1@0,1@1)>"
    g = local_tile(t, (2, 3), (1, 1))
    assert g[1, 2] == (3, 5)


def test_get_flat_coord_inverts_thread_layouts():
    for L in (Layout((32, 8)), Layout((32, 8), (8, 1)), Layout(((4, 8), 4), ((8, 1), 32))):
        for i in range(L.size()):
            c = get_flat_coord(L, i)
            modes = list(L)
            assert sum(m(ci) for m, ci in zip(modes, c)) == i


def test_projection_helpers_match_the_dsl_spelling():
    assert Step(1, X, 1) == (1, None, 1)


def _rand_case(rng):
    shape = (rng.choice([8, 12, 16, 24]), rng.choice([4, 6, 8, 12]), rng.choice([2, 3, 4]))
    r = rng.choice([2, 3])
    shape = shape[:r]
    order = rng.sample(range(r), r)
    strides = [0] * r
    cur = 1
    for i in order:
        strides[i] = cur
        cur *= shape[i] * rng.choice([1, 1, 2])
    L = Layout(shape, tuple(strides))
    tile = tuple(rng.choice([d for d in (1, 2, 3, 4, 6, 8) if s % d == 0]) for s in shape)
    coord = tuple(rng.randrange(s // t) if rng.random() < 0.7 else None for s, t in zip(shape, tile))
    return L, tile, coord


@pytest.mark.dsl
@pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON or "CuTe DSL unavailable")
def test_local_tile_and_partition_match_the_dsl():
    rng = random.Random(7)
    snippets, ours = [], []
    for _ in range(150):
        L, tile, coord = _rand_case(rng)
        lit = f"cute.make_tensor(0, cute.make_layout({L.shape!r}, stride={L.stride!r}))"
        t = make_tensor(0, L)
        # plain local_tile
        snippets.append(f"cute.local_tile({lit}, {tile!r}, {coord!r})")
        ours.append(str(local_tile(t, tile, coord)))
        # with a projection, as sgemm_nt_1 does: a rank-2 tensor, a rank-3 tiler/coord, one mode dropped
        if len(tile) == 2:
            where = rng.randrange(3)
            proj = tuple(None if i == where else 1 for i in range(3))
            tt = tile[:where] + (rng.choice([8, 16]),) + tile[where:]
            cc = coord[:where] + (rng.randrange(4),) + coord[where:]
            snippets.append(f"cute.local_tile({lit}, {tt!r}, {cc!r}, proj={proj!r})")
            ours.append(str(local_tile(t, tt, cc, proj)))
        # local_partition of one tile by a thread layout of the tile's shape (or a sub-shape)
        g = local_tile(t, tile, tuple(0 for _ in tile))
        thr_shape = tuple(rng.choice([d for d in (1, 2, 4) if s % d == 0]) for s in tile)
        thr = make_layout(thr_shape) if rng.random() < 0.5 else Layout(thr_shape, _row_major(thr_shape))
        tid = rng.randrange(thr.size())
        glit = f"cute.local_tile({lit}, {tile!r}, {tuple(0 for _ in tile)!r})"
        snippets.append(
            f"cute.local_partition({glit}, cute.make_layout({thr.shape!r}, stride={thr.stride!r}), cutlass.Int32({tid}))"
        )
        ours.append(str(local_partition(g, thr, tid)))
    results = dsl_eval(snippets)
    mismatches = [
        (s, o, r.value or r.message[:200]) for s, o, r in zip(snippets, ours, results) if o != r.value
    ]
    print(f"tensor DSL differential: {len(snippets)} cases, {len(mismatches)} mismatches")
    assert not mismatches, "\n".join(f"{s}\n  ours: {o}\n  dsl : {d}" for s, o, d in mismatches[:10])


def _row_major(shape):
    out, cur = [], 1
    for s in reversed(shape):
        out.append(cur)
        cur *= s
    return tuple(reversed(out))
