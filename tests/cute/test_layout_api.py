"""Properties of the layout-level API of issue 17 (items 1, 2, 8, 9, 11), without the DSL: slicing and its
offset, evaluation past the size, basis paths, make_layout_tv, domain_distribute, evenly_divides, the compact
majors with a start, and the unchecked internal constructor.  ``test_conformance_layout_dsl.py`` compares the
same functions with the CuTe DSL."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layoutlab import (E, Layout, LayoutError, ScaledBasis, compact_col_major, compact_row_major, dice,
                       domain_distribute, evenly_divides, logical_divide, make_identity_layout, make_layout,
                       make_layout_tv, make_ordered_layout, parse_layout, raked_product, slice_, slice_and_offset)
from layoutlab.cute.inttuple import idx2crd, is_tuple, leaves, product, transform_leaf, unflatten
from strategies import layouts, rand_shape

SETTINGS = settings(max_examples=150, deadline=None)


def _coords(rng, shape):
    """A random coordinate weakly congruent to ``shape``: None keeps a mode, an integer fixes it."""
    r = rng.random()
    if r < 0.35:
        return None
    if r < 0.65 or not is_tuple(shape):
        return rng.randrange(product(shape))
    return tuple(_coords(rng, s) for s in shape)


def _fill(crd, values):
    """``crd`` with each None replaced by the next value (a coordinate of the kept mode)."""
    it = iter(values)
    return transform_leaf(crd, lambda c: next(it) if c is None else c)


@SETTINGS
@given(layouts(), st.integers(0, 2**32 - 1))
def test_a_slice_plus_its_offset_is_the_layout_on_the_kept_modes(A, seed):
    crd = _coords(random.Random(seed), A.shape)
    sub, offset = slice_and_offset(crd, A)
    assert slice_(A, crd) == sub
    n_free = sum(1 for c in leaves(crd) if c is None)
    assert sub.rank() == n_free or (n_free == 1 and crd is None)
    for j in range(sub.size()):
        kept = idx2crd(j, sub.shape)
        values = kept if is_tuple(sub.shape) and crd is not None else (kept,)
        assert A(_fill(crd, values)) == offset + sub(j)


@SETTINGS
@given(layouts(), st.integers(0, 2**32 - 1))
def test_dice_keeps_exactly_what_slice_drops(A, seed):
    crd = _coords(random.Random(seed), A.shape)
    if crd is None or not is_tuple(crd):
        return
    kept, diced = slice_(A, crd), dice(A, crd)
    assert sorted(leaves(kept.shape) + leaves(diced.shape)) == sorted(leaves(A.shape))
    assert kept.size() * diced.size() == A.size()


def test_a_slice_that_fixes_every_mode_is_rank_0():
    A = Layout(((4, 2), 6), ((3, 40), 7))
    for crd in [((1, 1), 3), (5, 3), 7, ((0, 0), 0)]:
        sub, offset = slice_and_offset(crd, A)
        assert str(sub) == "():()" and sub.rank() == 0 and sub.size() == 1 and sub.cosize() == 1
        assert offset == A(crd)
    assert dice(A, None) == Layout((), ()) and dice(A, 1) is A and slice_(A, None) is A


def test_the_cpp_order_is_refused_by_name():
    A = Layout((4, 6))
    for call in (lambda: slice_((1, None), A), lambda: dice((1, None), A)):
        with pytest.raises(LayoutError, match=r"the layout comes first.*\(layout, coord\)"):
            call()
    with pytest.raises(LayoutError, match=r"slice_and_offset\(coord, layout\)"):
        slice_and_offset(A, (1, None))


@SETTINGS
@given(layouts(), st.integers(0, 5))
def test_past_its_size_a_layout_extends_its_last_mode(A, q):
    n = A.size()
    last_shape, last_stride = list(zip(leaves(A.shape), leaves(A.stride)))[-1]
    ks = list(range(q * n, q * n + min(n, 16)))
    want = [A(k % n) + (k // n) * last_shape * last_stride for k in ks]
    assert [A(k) for k in ks] == want
    assert A(ks).tolist() == want  # the vectorised path agrees
    if is_tuple(A.shape) and len(A.shape) > 1:
        crd = tuple(0 for _ in A.shape[:-1]) + (product(A.shape[-1]) * (q + 1),)
        assert A(crd) == A(product(A.shape[:-1]) * product(A.shape[-1]) * (q + 1))


def test_basis_paths_are_outermost_first_like_the_dsl():
    assert str(E([1, 0])) == "1@0@1" and E(1, 0) == E([1, 0]) == ScaledBasis(1, [1, 0]) and E([]) == 1
    assert E([1, 0]).as_coordinate() == (0, (1,))
    assert Layout((6, 2), (E([1, 0]), E(0)))((5, 1)) == (1, (5,))  # the DSL's (1,(5))
    ident = make_identity_layout(((2, 3), 4))
    assert str(ident) == "((2,3),4):((1@0@0,1@1@0),1@1)"
    assert all(ident(k) == idx2crd(k, ((2, 3), 4)) for k in range(24))
    assert parse_layout(str(ident)) == ident


@SETTINGS
@given(st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4]),
       st.sampled_from([1, 2, 4]), st.booleans(), st.booleans())
def test_make_layout_tv_gives_each_thread_its_block(tm, tn, vm, vn, thr_rows, val_rows):
    thr = make_ordered_layout((tm, tn), (1, 0) if thr_rows else (0, 1))
    val = make_ordered_layout((vm, vn), (1, 0) if val_rows else (0, 1))
    tiler, tv = make_layout_tv(thr, val)
    assert tiler == (tm * vm, tn * vn)
    mn = raked_product(thr, val)  # (m, n) -> thread + size(thr) * value
    seen = set()
    for t, v in itertools.product(range(thr.size()), range(val.size())):
        x = tv((t, v))
        assert mn(x) == t + thr.size() * v
        seen.add(x)
    assert seen == set(range(product(tiler)))


def test_make_layout_tv_refuses_layouts_whose_product_is_not_a_bijection():
    # the DSL returns ((4,2),(4,2):(4,16)) here: offsets up to 28 in an 8-element tile
    with pytest.raises(LayoutError, match="make_layout_tv: .* not a bijection onto 0..7"):
        make_layout_tv(Layout((2, 2), (3, 1)), Layout(2, 1))


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 32]))
def test_domain_distribute_meets_cutes_post_conditions(seed, n):
    S = rand_shape(random.Random(seed), max_size=512)
    R = domain_distribute(S, n)
    offsets = [R(i) for i in range(R.size())]
    assert n % R.size() == 0                                # evenly_divides(n, size(result))
    assert offsets == sorted(set(offsets))                 # surjective onto its image and ordered
    assert max(offsets) < product(S)                        # inside the domain of make_layout(S)
    flat = leaves(S) if is_tuple(S) else (S,)
    want, rest = 1, n
    for a in flat:                                          # takes all of n that the leaves hold, in order
        g = __import__("math").gcd(a, rest)
        want, rest = want * g, rest // g
    assert R.size() == want


def test_domain_distribute_worked_example_and_refusal():
    assert str(domain_distribute((15, 14), 6)) == "(3,2):(1,15)"  # CuTe's layout.hpp example
    with pytest.raises(LayoutError, match="positive integer"):
        domain_distribute((4, 4), 0)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 3, 4, 6, 8, 16]))
def test_evenly_divides_means_logical_divide_keeps_every_element(seed, t):
    S = rand_shape(random.Random(seed), max_size=512)
    if evenly_divides(S, t):
        assert logical_divide(make_layout(S), t).size() == product(S)
    tiler = tuple(t for _ in S) if is_tuple(S) else (t,)
    assert evenly_divides(S, tiler) == all(evenly_divides(s, t) for s in (S if is_tuple(S) else (S,)))
    assert not evenly_divides(S, tiler + (1,) * 3) or len(tiler) + 3 <= (len(S) if is_tuple(S) else 1)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 3, 8]))
def test_compact_majors_with_a_start_scale_the_compact_strides(seed, c):
    S = rand_shape(random.Random(seed), max_size=512)
    col, row = compact_col_major(S, c), compact_row_major(S, c)
    assert col.stride == transform_leaf(make_layout(S).stride, lambda d: d * c)
    n = len(leaves(S))
    order = unflatten(tuple(range(n - 1, -1, -1)), S) if is_tuple(S) else 0
    assert row.stride == transform_leaf(make_ordered_layout(S, order).stride, lambda d: d * c)


def test_compact_major_with_a_start_per_mode():
    assert str(compact_col_major((4, (2, 3)), (1, 100))) == "(4,(2,3)):(1,(100,200))"
    with pytest.raises(LayoutError, match="one entry per mode"):
        compact_col_major((4, 6), (1, 2, 3))


def test_the_internal_constructor_skips_validation_only():
    checked = Layout(((4, 2), 6), ((3, 40), 7))
    fast = Layout._new(((4, 2), 6), ((3, 40), 7))
    assert fast == checked and hash(fast) == hash(checked) and str(fast) == str(checked)
    with pytest.raises(AttributeError):
        fast.shape = 4
    with pytest.raises(LayoutError, match="not congruent"):
        Layout((4, 6), (1,))  # the public constructor still checks
