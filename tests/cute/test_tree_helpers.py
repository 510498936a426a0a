"""The tree helpers of ``layoutlab.cute.inttuple`` (leaves, leaf_paths, zip_leaves, transform_leaf, zip_profile,
none_to_zero, format_tree): properties on random nested tuples, plus the refusals."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from layoutlab import LayoutError, ScaledBasis, congruent, flatten, format_int_tuple, weakly_congruent
from layoutlab.cute.inttuple import (format_tree, leaf_paths, leaves, none_to_zero, transform_leaf, unflatten,
                                     zip_leaves, zip_profile)
from strategies import trees

ints = st.integers(-40, 40)
leaf_values = st.one_of(ints, st.none(), st.builds(ScaledBasis, st.integers(1, 8), st.integers(0, 3)))


def _nodes(t):
    return 1 + sum(_nodes(e) for e in t) if isinstance(t, tuple) else 0


def _at(t, path):
    for i in path:
        t = t[i]
    return t


def _parse(text):
    """CuTe tuple notation back to Python (independent of format_tree): '(_,(4,8),(3))' -> (None, (4, 8), (3,))."""
    tokens = re.findall(r"\(|\)|,|[^(),]+", text)

    def parse(i):
        if tokens[i] != "(":
            return (None if tokens[i] == "_" else int(tokens[i])), i + 1
        items, i = [], i + 1
        while tokens[i] != ")":
            item, i = parse(i)
            items.append(item)
            if tokens[i] == ",":
                i += 1
        return tuple(items), i + 1

    out, end = parse(0)
    assert end == len(tokens)
    return out


class _Marker:
    """A profile leaf that remembers the path of the subtree it stands for."""

    def __init__(self, path):
        self.path = path


def _coarsen(t, draw):
    """A profile ``t`` refines: some subtrees of ``t`` replaced by a marker leaf."""
    def go(x, path):
        if isinstance(x, tuple) and draw(st.booleans()):
            return tuple(go(e, path + (i,)) for i, e in enumerate(x))
        return _Marker(path)
    return go(t, ())


# --------------------------------------------------------------------------- leaves / leaf_paths


@settings(max_examples=300, deadline=None)
@given(trees(leaf_values))
def test_leaves_unflatten_round_trip(t):
    flat = leaves(t)
    assert all(not isinstance(x, tuple) for x in flat)
    assert len(flat) == len(leaf_paths(t))
    if isinstance(t, tuple):
        assert flat == flatten(t)                  # flatten's tuple case; an int stays an int there
        if flat:
            assert unflatten(flat, t) == t
    else:
        assert flat == (t,)


@settings(max_examples=300, deadline=None)
@given(trees(leaf_values))
def test_leaf_paths_point_at_the_leaves_in_order(t):
    paths = leaf_paths(t)
    assert tuple(_at(t, p) for p in paths) == leaves(t)
    assert len(set(paths)) == len(paths)
    assert list(paths) == sorted(paths)            # depth-first order is lexicographic order of the paths


def test_leaves_worked_values():
    assert leaves(()) == () and leaves(((), ((),))) == ()
    assert leaves([4, [2, 3]]) == (4, 2, 3)      # a user's list counts as a tuple
    assert leaf_paths(5) == ((),)


# --------------------------------------------------------------------------- transform_leaf / zip_leaves


@settings(max_examples=300, deadline=None)
@given(trees(), st.integers(-5, 5), st.integers(-5, 5))
def test_transform_leaf_keeps_nesting_and_composes(t, a, b):
    f, g = (lambda x: x + a), (lambda x: x * b)
    ft = transform_leaf(t, f)
    assert congruent(ft, t)
    assert leaves(ft) == tuple(f(x) for x in leaves(t))
    assert transform_leaf(ft, g) == transform_leaf(t, lambda x: g(f(x)))
    assert transform_leaf(t, lambda x: x) == t


@settings(max_examples=300, deadline=None)
@given(trees(), st.integers(1, 7))
def test_zip_leaves_pairs_congruent_trees(t, k):
    u = transform_leaf(t, lambda x: x * k)
    z = zip_leaves(t, u, t)
    assert z == tuple((x, x * k, x) for x in leaves(t))
    assert zip_leaves(t) == tuple((x,) for x in leaves(t))


@settings(max_examples=300, deadline=None)
@given(trees(min_size=1), st.data())
def test_zip_leaves_refuses_other_nesting(t, data):
    paths = leaf_paths(t)
    assume(paths)
    p = data.draw(st.sampled_from(paths))
    wrapped = unflatten(tuple((x,) if q == p else x for q, x in zip(paths, leaves(t))), t) if p else (t,)
    assert not congruent(t, wrapped)
    with pytest.raises(LayoutError, match="zip_leaves: .* are not congruent"):
        zip_leaves(t, wrapped)
    with pytest.raises(LayoutError, match="not congruent"):
        zip_leaves(wrapped, t)


# --------------------------------------------------------------------------- zip_profile


@settings(max_examples=300, deadline=None)
@given(trees(), st.data())
def test_zip_profile_walks_a_coarser_profile(t, data):
    profile = _coarsen(t, data.draw)
    assert weakly_congruent(transform_leaf(profile, lambda _: 0) if isinstance(profile, tuple) else 0, t)
    pairs = zip_profile(profile, t)
    assert tuple(p for p, _ in pairs) == leaves(profile)
    for marker, sub in pairs:                          # each marker meets the subtree at its path
        assert sub == _at(t, marker.path)
    assert tuple(x for _, sub in pairs for x in leaves(sub)) == leaves(t)
    assert zip_profile(t, t) == tuple((x, x) for x in leaves(t))


@settings(max_examples=200, deadline=None)
@given(trees(min_size=1))
def test_zip_profile_refuses_a_finer_profile(t):
    assume(isinstance(t, tuple))
    with pytest.raises(LayoutError, match="does not refine the profile"):
        zip_profile(t + (0,), t)
    if leaves(t):
        with pytest.raises(LayoutError, match="does not refine the profile"):
            zip_profile(t, 7)                          # a tuple profile against an integer


# --------------------------------------------------------------------------- none_to_zero / format_tree


@settings(max_examples=300, deadline=None)
@given(trees(st.one_of(ints, st.none())))
def test_none_to_zero_is_the_slice_origin(t):
    z = none_to_zero(t)
    assert congruent(z, t)
    assert None not in leaves(z)
    assert leaves(z) == tuple(0 if x is None else x for x in leaves(t))


def test_none_to_zero_worked_values():
    assert none_to_zero(None) == 0
    assert none_to_zero([None, [3, None]]) == (0, (3, 0))     # lists as a user writes them become tuples


@settings(max_examples=300, deadline=None)
@given(trees(st.one_of(ints, st.none())))
def test_format_tree_round_trips_and_matches_format_int_tuple(t):
    text = format_tree(t)
    assert " " not in text and "None" not in text
    assert text.count("(") == _nodes(t)
    assert _parse(text) == t
    if None not in leaves(t):
        assert text == format_int_tuple(t)


def test_format_tree_worked_values():
    assert format_tree((None, (4, 8), (3,))) == "(_,(4,8),(3))"
    assert format_tree([1, [2, None]]) == "(1,(2,_))"
    assert format_tree((ScaledBasis(1, (0, 1)), 2)) == "(1@1@0,2)"  # path (0, 1): sub-mode 1 of mode 0
