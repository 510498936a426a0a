"""Property tests (hypothesis): the algebra satisfies its definitions on random layouts.

When an operation refuses an input (LayoutError) the property is vacuous for that input; each test also
asserts that a healthy fraction of draws is admissible, so the properties are really exercised.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from layoutlab import (
    Layout,
    LayoutError,
    blocked_product,
    coalesce,
    complement,
    composition,
    cosize,
    crd2idx,
    filter,
    filter_zeros,
    flatten,
    idx2crd,
    is_tuple,
    left_inverse,
    local_partition,
    local_tile,
    logical_divide,
    logical_product,
    make_layout,
    make_tensor,
    max_common_layout,
    max_common_vector,
    nullspace,
    parse_layout,
    product,
    raked_product,
    recast_layout,
    right_inverse,
    tile_to_shape,
    zipped_divide,
    zipped_product,
)
from strategies import ext_eval, injective_layouts, layouts, rand_layout, rand_tiler_layout

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _injective(L):
    t = L.table()
    return np.unique(t).size == t.size


class _Admitted:
    """Counts admissible draws so that a property can't pass vacuously."""

    def __init__(self):
        self.ok = 0
        self.total = 0

    def __call__(self, fn):
        self.total += 1
        try:
            r = fn()
        except LayoutError:
            return None
        self.ok += 1
        return r


@pytest.fixture
def admitted():
    a = _Admitted()
    yield a
    if a.total >= 20:
        assert a.ok >= 0.2 * a.total, f"only {a.ok}/{a.total} draws were admissible"


# --------------------------------------------------------------------------- evaluation basics


@SETTINGS
@given(layouts())
def test_table_matches_scalar_evaluation_and_parse_roundtrips(L):
    t = L.table()
    assert t.tolist() == [L(i) for i in range(L.size())]
    assert np.array_equal(L(np.arange(L.size())), t)
    assert parse_layout(str(L)) == L
    for i in range(0, L.size(), max(1, L.size() // 7)):
        c = idx2crd(i, L.shape)
        assert crd2idx(c, L.shape) == i
        assert L(c) == L(i)


# --------------------------------------------------------------------------- coalesce / filter


@SETTINGS
@given(layouts())
def test_coalesce_preserves_the_function(L):
    C = coalesce(L)
    assert C.size() == L.size()
    assert C.depth() <= 1
    assert np.array_equal(C.table(), L.table())
    if L.rank() >= 2:
        P = coalesce(L, tuple(1 for _ in range(L.rank())))
        assert P.rank() == L.rank()
        assert np.array_equal(P.table(), L.table())


@SETTINGS
@given(layouts(kind="zero"))
def test_filter_keeps_exactly_the_nonzero_stride_modes(L):
    fz = filter_zeros(L)
    assert fz.stride == L.stride
    fs, ls = flatten(fz.shape) if is_tuple(fz.shape) else (fz.shape,), flatten(L.stride) if is_tuple(L.stride) else (L.stride,)
    assert all(s == 1 for s, d in zip(fs, ls) if d == 0)
    F = filter(L)
    kept = [(s, d) for s, d in zip(flatten(L.shape) if is_tuple(L.shape) else (L.shape,), ls) if d != 0 and s != 1]
    ref = Layout(tuple(s for s, _ in kept), tuple(d for _, d in kept)) if kept else Layout(1, 0)
    assert np.array_equal(F.table(), ref.table())
    # nullspace: the stride-0 part, mapped to 0; sizes multiply back to size(L)
    N = nullspace(L)
    assert np.all(L.table()[N.table()] == 0) if N.size() > 1 else True
    assert N.size() * product(tuple(s for s, _ in kept)) == L.size()


# --------------------------------------------------------------------------- composition


@SETTINGS
@given(layouts(), st.integers(0, 2**32 - 1))
def test_composition_is_function_composition(admitted, A, seed):
    rng = random.Random(seed)
    B = rand_tiler_layout(rng, coalesce(A).size()) if rng.random() < 0.7 else rand_layout(rng, max_size=64)
    R = admitted(lambda: composition(A, B))
    if R is None:
        return
    assert R.size() == B.size()
    assert np.array_equal(R.table(), ext_eval(A, B.table()))
    # the result has B's shape (up to B's size-1 / integer modes, it is congruent to B)
    assert R.rank() == B.rank() or not is_tuple(B.shape)


def test_composition_refuses_the_dsl_counterexample():
    with pytest.raises(LayoutError, match="stride divisibility"):
        composition(Layout((4, 6), (1, 10)), Layout(4, 3))


# --------------------------------------------------------------------------- complement


@SETTINGS
@given(layouts(), st.integers(1, 4))
def test_complement_is_disjoint_ordered_and_large_enough(admitted, A, k):
    M = cosize(A) * k
    R = admitted(lambda: complement(A, M))
    if R is None:
        return
    t = R.table()
    assert t.size == 1 or np.all(np.diff(t) > 0)  # ordered
    fa = filter(A)
    both = np.add.outer(t, fa.table()).ravel()
    assert np.unique(both).size == both.size  # (A, R) injective: disjoint images
    # CuTe's post-conditions (complement.cpp): (A, R) reaches the cotarget and R has at least M / size(A) elements.
    # (A gap rounded down when a stride is not a multiple of the span below leaves holes, so not size(A, R) >= M.)
    assert cosize(make_layout(fa, R)) >= M
    assert R.size() >= M // fa.size()


@SETTINGS
@given(injective_layouts())
def test_complement_of_injective_compact_like_layouts_exists(A):
    # layouts built from permuted (possibly gapped) compact strides always have a complement
    R = complement(A, cosize(A))
    assert _injective(make_layout(filter(A), R))


# --------------------------------------------------------------------------- inverses


@SETTINGS
@given(layouts())
def test_right_inverse_identity(A):
    R = right_inverse(A)
    r = R.table()
    assert r.max() < A.size()
    assert np.array_equal(A.table()[r], np.arange(R.size()))


@SETTINGS
@given(layouts())
def test_left_inverse_identity(admitted, A):
    R = admitted(lambda: left_inverse(A))
    if R is None:
        return
    a = A.table()
    back = ext_eval(R, a)
    if _injective(A):
        assert np.array_equal(back, np.arange(A.size()))
    else:  # quasi-inverse (stride-0 modes)
        assert np.array_equal(a[back], a)


@SETTINGS
@given(injective_layouts())
def test_left_inverse_exists_for_compact_like_layouts(A):
    R = left_inverse(A)
    assert np.array_equal(ext_eval(R, A.table()), np.arange(A.size()))


# --------------------------------------------------------------------------- divide


@SETTINGS
@given(layouts(), st.integers(0, 2**32 - 1))
def test_logical_divide_postconditions(admitted, A, seed):
    rng = random.Random(seed)
    T = rand_tiler_layout(rng, A.size())
    R = admitted(lambda: logical_divide(A, T))
    if R is None:
        return
    # mode 0 is A o T; mode 1 enumerates the tiles; together they are A o (T, T*)
    assert np.array_equal(R[0].table(), ext_eval(A, T.table()))
    Tstar = complement(T, coalesce(A).shape)
    assert np.array_equal(R.table(), ext_eval(A, make_layout(T, Tstar).table()))
    # A permutation of A's offsets only when the tiler stays inside A's domain: a tiler reaching past it
    # evaluates A beyond its size (the last mode extends), e.g. (2,4):(4,1) / (2,2):(6,2) = ((2,2),2):((3,1),4)
    # in the CuTe DSL too.
    if A.size() % T.size() == 0 and R.size() == A.size() and T.cosize() <= A.size():
        assert sorted(R.table().tolist()) == sorted(A.table().tolist())


@SETTINGS
@given(layouts(kind="compact", max_depth=1, max_leaves=3), st.integers(0, 2**32 - 1))
def test_zipped_divide_of_compact_layouts_tiles_everything(A, seed):
    rng = random.Random(seed)
    modes = list(A) if is_tuple(A.shape) else [A]
    tiler = tuple(rng.choice([d for d in range(1, m.size() + 1) if m.size() % d == 0]) for m in modes)
    Z = zipped_divide(A, tiler)
    assert Z[0].size() == product(tiler)
    assert Z.size() == A.size()
    assert sorted(Z.table().tolist()) == sorted(A.table().tolist())


# --------------------------------------------------------------------------- product


@SETTINGS
@given(injective_layouts(max_size=64), st.integers(0, 2**32 - 1))
def test_logical_product_postconditions(admitted, A, seed):
    rng = random.Random(seed)
    if rng.random() < 0.5:
        A = make_layout(A.shape)  # a compact block: its complement is one mode, every tiler is admissible
    T = rand_layout(rng, rng.choice(["compact", "gapped"]), max_size=16, max_leaves=3)
    R = admitted(lambda: logical_product(A, T))
    if R is None:
        return
    assert R[0] == A
    assert R.size() == A.size() * T.size()
    C = complement(A, A.size() * cosize(T))
    assert np.array_equal(R[1].table(), ext_eval(C, T.table()))
    assert _injective(R)  # A injective, T injective -> the product is injective
    for fn in (blocked_product, raked_product):
        P = admitted(lambda fn=fn: fn(A, T))
        if P is None:  # only the DSL's rank-1 pairing rules refuse here
            assert max(A.rank(), T.rank()) == 1
            continue
        assert P.rank() == max(A.rank(), T.rank())
        assert sorted(P.table().tolist()) == sorted(R.table().tolist())
    assert zipped_product(A, T) == R  # a Layout tiler: zipped == logical


@SETTINGS
@given(layouts(kind="compact", max_size=16, max_leaves=2, max_depth=1), st.integers(0, 2**32 - 1))
def test_tile_to_shape_postconditions(A, seed):
    rng = random.Random(seed)
    r = max(A.rank(), rng.randint(2, 3))
    modes = list(A) if is_tuple(A.shape) else [A]
    sizes = [m.size() for m in modes] + [1] * (r - len(modes))
    trg = tuple(s * rng.randint(1, 4) for s in sizes)
    order = tuple(rng.sample(range(r), r))
    R = tile_to_shape(A, trg, order)
    assert tuple(product(m.shape) for m in R) == trg
    assert _injective(R)
    assert sorted(R.table().tolist()) == list(range(product(trg)))  # a compact block tiles densely
    if any(s > 1 for s in sizes):
        with pytest.raises(LayoutError, match="not a multiple"):
            tile_to_shape(A, tuple(t + 1 if s > 1 else t for t, s in zip(trg, sizes)), order)


# --------------------------------------------------------------------------- common layouts, recast


@SETTINGS
@given(injective_layouts(max_size=256), st.integers(0, 2**32 - 1))
def test_max_common_layout_postconditions(admitted, A, seed):
    rng = random.Random(seed)
    B = make_layout(A.shape) if rng.random() < 0.5 else rand_layout(rng, "compact", max_size=256)
    assume(B.size() == A.size())
    R = admitted(lambda: max_common_layout(A, B))
    if R is None:
        return
    r = R.table()
    ident = np.arange(R.size())
    assert np.array_equal(A.table()[r], ident)
    assert np.array_equal(B.table()[r], ident)
    assert max_common_vector(A, B) == R.size()


@SETTINGS
@given(layouts(kind="compact"))
def test_recast_roundtrip(L):
    assert recast_layout(16, 16, L) == L
    shapes = flatten(L.shape) if is_tuple(L.shape) else (L.shape,)
    strides = flatten(L.stride) if is_tuple(L.stride) else (L.stride,)
    # two 8-bit elements make one 16-bit element when every mode is pair-aligned
    assume(any(d == 1 for d in strides))
    assume(all((d == 1 and s % 2 == 0) or (d % 2 == 0 and d != 2 and s > 1) or (s == 1 and d == 0) for s, d in zip(shapes, strides)))
    up = recast_layout(16, 8, L)
    assert up.size() * 2 == L.size()
    assert np.array_equal(np.unique(up.table()) * 2, np.unique(L.table()[L.table() % 2 == 0]))
    assert recast_layout(8, 16, up) == L


# --------------------------------------------------------------------------- tensors


@SETTINGS
@given(st.sampled_from([(8, 6), (16, 12), (12, 20)]), st.integers(0, 2**32 - 1))
def test_local_tile_and_partition_cover_the_tensor_exactly_once(shape, seed):
    rng = random.Random(seed)
    L = make_layout(shape) if rng.random() < 0.5 else Layout(shape, (shape[1], 1))
    T = make_tensor(0, L)
    tiles = (rng.choice([2, 4]), rng.choice([2, 3, 4] if shape[1] % 3 == 0 else [2, 4]))
    assume(shape[0] % tiles[0] == 0 and shape[1] % tiles[1] == 0)
    seen = []
    for m in range(shape[0] // tiles[0]):
        for n in range(shape[1] // tiles[1]):
            g = local_tile(T, tiles, (m, n))
            assert g.shape == tiles
            seen.extend(g.values().tolist())
    assert sorted(seen) == sorted(L.table().tolist())
    thr = make_layout((tiles[0], 1)) if rng.random() < 0.5 else make_layout(tiles)
    g = local_tile(T, tiles, (0, 0))
    parts = []
    for t in range(thr.size()):
        parts.extend(local_partition(g, thr, t).values().tolist())
    assert sorted(parts) == sorted(g.values().tolist())
