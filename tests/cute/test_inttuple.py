"""IntTuple helpers: properties, worked values, and a differential check against the CuTe DSL."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layoutlab import (
    LayoutError,
    ScaledBasis,
    ceil_div,
    compatible,
    congruent,
    crd2crd,
    crd2idx,
    depth,
    elem_scale,
    flatten,
    idx2crd,
    inner_product,
    prefix_product,
    product,
    product_each,
    rank,
    shape_div,
    suffix_product,
    weakly_congruent,
)
from layoutlab.dsl import HAVE_DSL, SKIP_REASON, dsl_eval
from layoutlab.cute.inttuple import format_int_tuple, unflatten
from strategies import rand_shape

shapes = st.integers(0, 2**32 - 1).map(lambda s: rand_shape(random.Random(s)))


def test_worked_values():
    assert product((4, (2, 3))) == 24
    assert product_each((4, (2, 3))) == (4, 6)
    assert rank((4, (2, 3))) == 2 and rank(7) == 1
    assert depth(7) == 0 and depth((4, 6)) == 1 and depth((4, (2, (3, 5)))) == 3
    assert flatten((4, (2, (3, 5)))) == (4, 2, 3, 5)
    assert prefix_product((4, (2, 3))) == (1, (4, 8))
    assert suffix_product((4, (2, 3))) == (6, (3, 1))
    assert shape_div((4, 6), 8) == (1, 3) and shape_div(3, 6) == 1 and shape_div((4, 6), (2, 3)) == (2, 2)
    assert ceil_div(10, 4) == 3 and ceil_div((4, 6), 8) == 3 and ceil_div((4, 6), (3, 4)) == (2, 2)
    assert elem_scale((2, (3, 4)), (5, (6, 7))) == (10, (18, 28))
    assert inner_product((1, (2, 3)), (4, (5, 6))) == 32
    assert idx2crd(17, (4, 6)) == (1, 4) and idx2crd(17, ((2, 2), 6)) == ((1, 0), 4)
    assert crd2idx((1, 2), (4, 6)) == 9 and crd2idx((1, 2), (4, 6), (6, 1)) == 8
    assert crd2crd((1, 4), (4, 6), 24) == 17
    assert compatible(24, (4, 6)) and compatible((4, 6), (4, (2, 3))) and not compatible((4, 6), (6, 4))
    assert congruent((4, (2, 3)), (1, (5, 7))) and not congruent((4, 6), (4, (2, 3)))
    assert weakly_congruent((4, 6), (4, (2, 3))) and not weakly_congruent((4, (2, 3)), (4, 6))
    assert format_int_tuple(((4, 8, 4), (2, 2, 8))) == "((4,8,4),(2,2,8))" and format_int_tuple((5,)) == "(5)"
    assert inner_product((1, 2), (ScaledBasis(1, 0), ScaledBasis(1, 1))) == (1, 2)


def test_errors_name_the_operation():
    with pytest.raises(LayoutError, match="crd2idx: coordinate .* not congruent"):
        crd2idx((1, 2, 3), (4, 6))
    with pytest.raises(LayoutError, match="crd2crd: sizes differ"):
        crd2crd(3, 24, (4, 5))
    with pytest.raises(LayoutError, match="shape_div: 6 and 4 do not divide"):
        shape_div(6, 4)
    with pytest.raises(LayoutError, match="unflatten"):
        unflatten((1, 2), (0, (0, 0)))


@settings(max_examples=200, deadline=None)
@given(shapes, st.integers(0, 10**6))
def test_idx2crd_crd2idx_roundtrip(shape, k):
    i = k % product(shape)
    c = idx2crd(i, shape)
    assert crd2idx(c, shape) == i
    assert congruent(c, shape)
    assert crd2idx(i, shape) == i
    assert crd2crd(c, shape, product(shape)) == i


@settings(max_examples=200, deadline=None)
@given(shapes)
def test_prefix_product_is_the_compact_column_major_stride(shape):
    st_ = prefix_product(shape)
    assert congruent(st_, shape)
    fs, fd = flatten(shape) if isinstance(shape, tuple) else (shape,), flatten(st_) if isinstance(st_, tuple) else (st_,)
    for k in range(len(fs)):
        assert fd[k] == product(tuple(fs[:k]))
    assert unflatten(flatten(shape), shape) == shape if isinstance(shape, tuple) else True


@settings(max_examples=200, deadline=None)
@given(shapes, st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16]))
def test_shape_div_consumes_left_to_right(shape, d):
    exact = all(s % r == 0 or r % s == 0 for s, r in _consumption(flatten(shape) if isinstance(shape, tuple) else (shape,), d))
    if not exact:
        with pytest.raises(LayoutError, match="shape_div"):
            shape_div(shape, d)
        return
    q = shape_div(shape, d)
    assert congruent(q, shape)
    if product(shape) % d == 0:
        assert product(q) * d == product(shape)
        assert ceil_div(shape, d) == product(q)


def _consumption(flat, d):
    out = []
    for s in flat:
        out.append((s, d))
        d = d // s if d % s == 0 else 1
    return out


@pytest.mark.dsl
@pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON or "CuTe DSL unavailable")
def test_inttuple_functions_match_the_dsl():
    rng = random.Random(11)
    snippets, ours = [], []
    for _ in range(120):
        s = rand_shape(rng)
        t = rand_shape(rng)
        d = rng.choice([1, 2, 3, 4, 6, 8, 16])
        i = rng.randrange(product(s))
        pairs = [
            (f"cute.product({s!r})", lambda: product(s)),
            (f"cute.product_each({s!r})", lambda: product_each(s)),
            (f"cute.rank({s!r})", lambda: rank(s)),
            (f"cute.depth({s!r})", lambda: depth(s)),
            (f"cute.flatten({s!r})", lambda: flatten(s)),
            (f"cute.shape_div({s!r}, {d})", lambda: shape_div(s, d)),
            (f"cute.ceil_div({s!r}, {d})", lambda: ceil_div(s, d)),
            (f"cute.idx2crd({i}, {s!r})", lambda: idx2crd(i, s)),
            (f"cute.crd2idx({idx2crd(i, s)!r}, {s!r})", lambda: crd2idx(idx2crd(i, s), s)),
            (f"cute.is_congruent({s!r}, {t!r})", lambda: congruent(s, t)),
            (f"cute.is_weakly_congruent({s!r}, {t!r})", lambda: weakly_congruent(s, t)),
        ]
        for snip, fn in pairs:
            snippets.append(snip)
            try:
                val = fn()
            except LayoutError:
                ours.append(None)  # we refuse: the DSL must refuse too
                continue
            ours.append(format_int_tuple(val) if not isinstance(val, bool) else str(val))
    got = dsl_eval(snippets)
    bad = [(s, o, r.value or r.message[:120]) for s, o, r in zip(snippets, ours, got)
           if (o is None and r.ok) or (o is not None and r.value != o)]
    print(f"inttuple DSL differential: {len(snippets)} cases, {len(bad)} differ")
    assert not bad, "\n".join(f"{s}: ours {o}, dsl {v}" for s, o, v in bad[:15])
