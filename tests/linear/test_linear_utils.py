"""Triton's LayoutUtils functions and the newer LinearLayout methods on random layouts, each against a
brute-force reading of its definition (Triton's Python binding does not expose these, so the definitions
are the oracle here; the ported Triton unit tests are in test_peer_triton_ll.py)."""
import itertools

import pytest
from hypothesis import given, settings, strategies as st

from layoutlab.errors import LayoutError
from layoutlab.linear import (ColumnAction, LinearLayout, divide_left, divide_right, factor_maximal_identity_prefix,
                              get_integer_strides, is_linear_layout_image_subset, rename_linear_layout_dims)
from layoutlab.linear.utils import ensure_layout_not_smaller_than
from layoutlab.linear import layout as linear_layout
from strategies import layouts_with_a_square_dim, linear_layouts as layouts

SEEN = dict.fromkeys(["product", "factor_of_any_pair", "quotient", "no_quotient", "strides", "subset"], 0)


def not_vacuous(*keys, minimum=5):
    """Run the hypothesis property, then require that it saw each named case at least ``minimum`` times.

    The check sits in the same test as the property (not in a later test), so it holds whichever worker runs it."""
    def wrap(prop):
        def test():
            before = {k: SEEN[k] for k in keys}
            prop()
            seen = {k: SEEN[k] - before[k] for k in keys}
            assert all(v >= minimum for v in seen.values()), f"{prop.__name__} was vacuous: {seen}"
        test.__name__, test.__doc__ = prop.__name__, prop.__doc__
        return test
    return wrap


def inputs(L):
    names = [d for d, _ in L.in_dims]
    for values in itertools.product(*[range(s) for _, s in L.in_dims]):
        yield dict(zip(names, values))


def same_order(a, b):
    return [d for d in a if d in b] == [d for d in b if d in a]


def product_ok(B, C):
    return (same_order(B.get_in_dim_names(), C.get_in_dim_names())
            and same_order(B.get_out_dim_names(), C.get_out_dim_names()))


@not_vacuous("product")
@given(layouts(sparse=True), layouts(sparse=True))
@settings(max_examples=150, deadline=None, derandomize=True)
def test_divide_left_and_right_recover_a_factor_of_a_product(B, C):
    if not product_ok(B, C):
        return
    A = B * C
    SEEN["product"] += 1
    left, right = divide_left(A, B), divide_right(A, C)
    assert left is not None and B * left == A
    assert right is not None and right * C == A
    # the factor keeps A's dims (Triton's rule), and is C itself when C already has them in A's order
    assert left.get_in_dim_names() == A.get_in_dim_names() and left.get_out_dim_names() == A.get_out_dim_names()
    if C.get_in_dim_names() == A.get_in_dim_names() and C.get_out_dim_names() == A.get_out_dim_names():
        assert left == C


@not_vacuous("factor_of_any_pair")
@given(layouts(sparse=True), layouts(sparse=True))
@settings(max_examples=150, deadline=None, derandomize=True)
def test_divide_answers_are_sound_on_any_pair(A, B):
    """Whatever the pair, an answer is a true factor (None means "no factor of this shape")."""
    left, right = divide_left(A, B), divide_right(A, B)
    SEEN["factor_of_any_pair"] += left is not None or right is not None
    if left is not None:
        assert B * left == A
    if right is not None:
        assert right * B == A


def brute_consecutive(L):
    """Largest 2^k such that the low k bits of the first in-dim are the low k bits of the first out-dim and
    touch nothing else, while no other input bit touches those output bits."""
    first, out0 = L.get_in_dim_names()[0], L.get_out_dim_names()[0]
    best = 1
    for k in range(1, L.get_in_dim_size(first).bit_length()):
        mask = (1 << k) - 1
        ok = True
        for x in inputs(L):
            y = L.apply(x)
            low = dict(x, **{first: x[first] & ~mask})
            y_low = L.apply(low)
            if (y[out0] & mask) != (x[first] & mask) or y_low != dict(y, **{out0: y[out0] & ~mask}):
                ok = False
                break
        if not ok:
            break
        best = 1 << k
    return best


@given(layouts(sparse=True, max_bits=3))
@settings(max_examples=120, deadline=None, derandomize=True)
def test_get_num_consecutive_in_out_matches_its_definition(L):
    assert L.get_num_consecutive_in_out() == brute_consecutive(L)


@given(layouts(sparse=True), st.sampled_from([1, 2, 4, 8, 16]))
@settings(max_examples=120, deadline=None, derandomize=True)
def test_factor_maximal_identity_prefix(L, max_size):
    d, o = L.get_in_dim_names()[0], L.get_out_dim_names()[0]
    size, quotient = factor_maximal_identity_prefix(L, d, o, max_size)
    assert size <= max_size and LinearLayout.identity_1d(size, d, o) * quotient == L
    if 2 * size <= max_size:
        assert divide_left(L, LinearLayout.identity_1d(2 * size, d, o)) is None


@not_vacuous("quotient", "no_quotient")
@given(st.one_of(layouts(sparse=True), layouts_with_a_square_dim()))
@settings(max_examples=200, deadline=None, derandomize=True)
def test_quotient_exactly_when_the_dims_are_trivial(L):
    ins, outs = L.get_in_dim_names(), L.get_out_dim_names()
    for dims in ([d] for d in ins + outs):
        q = L.quotient(dims)
        present = all(d in ins and d in outs and L.get_in_dim_size(d) == L.get_out_dim_size(d) for d in dims)
        trivial = present
        if present:
            for x in inputs(L):
                y = L.apply(x)
                rest = L.apply({k: (0 if k in dims else v) for k, v in x.items()})
                if any(y[d] != x[d] for d in dims) or any(y[o] != rest[o] for o in outs if o not in dims):
                    trivial = False
                    break
        assert (q is not None) == trivial, (dims, L)
        SEEN["quotient" if trivial else "no_quotient"] += 1
        if q is not None:
            for x in inputs(q):
                full = L.apply({**{d: 0 for d in dims}, **x})
                assert q.apply(x) == {o: v for o, v in full.items() if o not in dims}


@given(layouts())
@settings(max_examples=100, deadline=None, derandomize=True)
def test_sublayout_is_zero_and_flatten_ins(L):
    ins, outs = L.get_in_dim_names(), L.get_out_dim_names()
    some_in, some_out = ins[:1], outs[-1:]
    zero = all(L.apply({k: (v if k in some_in else 0) for k, v in x.items()})[o] == 0
               for x in inputs(L) for o in some_out)
    assert L.sublayout_is_zero(some_in, some_out) == zero
    flat = L.flatten_ins()
    assert flat.get_in_dim_names() == ins[:1] and flat.total_in_dim_size_log2() == L.total_in_dim_size_log2()
    for x in inputs(L):
        index, shift = 0, 0
        for d, s in L.in_dims:
            index |= x[d] << shift
            shift += s.bit_length() - 1
        assert flat.apply({ins[0]: index}) == L.apply(x)


@not_vacuous("subset")
@given(layouts(), layouts())
@settings(max_examples=100, deadline=None, derandomize=True)
def test_image_subset_is_set_inclusion(A, B):
    def image(L):
        return {tuple(sorted(L.apply(x).items())) for x in inputs(L)}

    got = is_linear_layout_image_subset(A, B)
    SEEN["subset"] += got
    if set(A.get_out_dim_names()) <= set(B.get_out_dim_names()) and all(
            s <= B.get_out_dim_size(o) for o, s in A.out_dims):
        widen = lambda pts: {tuple(sorted({**{o: 0 for o in B.get_out_dim_names()}, **dict(p)}.items()))  # noqa: E731
                             for p in pts}
        assert got == (widen(image(A)) <= image(B))
    else:
        assert not got


@not_vacuous("strides")
@given(layouts(out_names=["dim0"], max_bits=4))
@settings(max_examples=120, deadline=None, derandomize=True)
def test_integer_strides_turn_xor_into_addition(L):
    ins = L.get_in_dim_names()
    strides = get_integer_strides(L, "dim0", ins)
    if strides is None:
        return
    SEEN["strides"] += 1
    for x in inputs(L):
        assert L.apply(x)["dim0"] == sum(strides[d].stride * x[d] for d in ins)


@given(layouts(in_names=["register"]), st.data())
@settings(max_examples=80, deadline=None, derandomize=True)
def test_column_action_on_a_layout_and_on_its_values_agree(L, data):
    n = L.total_in_dim_size_log2()
    action = data.draw(st.permutations(range(n)))[:data.draw(st.integers(0, n))]
    act = ColumnAction(action, "register", n)
    values = [L.apply({"register": i}) for i in range(1 << n)]
    moved = act.apply(L)
    assert act.apply(values) == [moved.apply({"register": i}) for i in range(1 << len(action))]
    assert act.is_identity() == (action == list(range(n)))


def test_quotient_matches_dims_by_name_not_by_order():
    """A deliberate difference (chapters/conformance.md): Triton flattens the dims in their input and output
    orders and compares bit by bit, so listing them in another order as outputs reads as "not trivial"."""
    swapped = (LinearLayout.identity_1d(2, "a", "a") * LinearLayout.identity_1d(2, "b", "b")
               * LinearLayout.identity_1d(4, "r", "o")).transpose_outs(["b", "a", "o"])
    assert not swapped.sublayout_is_identity(["a", "b"], ["a", "b"])       # Triton's flattened reading
    assert swapped.quotient(["a", "b"]) == LinearLayout.identity_1d(4, "r", "o")


def test_rename_round_trip_and_bad_renames():
    L = LinearLayout.from_bases([("a", [[1, 0]]), ("b", [[0, 1]])], ["x", "y"])
    there = rename_linear_layout_dims(L, [("a", "p")], [("y", "q")])
    assert rename_linear_layout_dims(there, [("p", "a")], [("q", "y")]) == L
    with pytest.raises(LayoutError, match="not an input dim"):
        rename_linear_layout_dims(L, [("c", "d")])
    with pytest.raises(LayoutError, match="repeat"):
        rename_linear_layout_dims(L, [("a", "b")])
    with pytest.raises(LayoutError, match="already an input dim"):
        L.rename_in_dim("a", "b")


# ------------------------------------------------------------------ issue 17 item 15: empty dims
def test_identity_of_size_zero_is_the_empty_layout():
    assert LinearLayout.identity_1d(0, "in", "out") == LinearLayout.empty()
    assert LinearLayout.zeros_1d(0, "in", "out") == LinearLayout.empty()
    with pytest.raises(LayoutError, match="not a power of two"):
        LinearLayout.identity_1d(3, "in", "out")


def test_flattening_a_layout_without_dims_adds_none():
    no_outs = LinearLayout.from_bases([("in1", [])], [])
    assert no_outs.flatten_outs() == no_outs and no_outs.flatten_outs().get_out_dim_names() == []
    no_ins = LinearLayout.from_bases([], ["out"])
    assert no_ins.flatten_ins() == no_ins and no_ins.flatten_ins().get_in_dim_names() == []


# ------------------------------------------------------------------ issue 18 item 3: checked outside, unchecked inside
def test_rank_is_computed_once_per_layout(monkeypatch):
    L = LinearLayout.from_bases([("lane", [[1, 0], [0, 1], [1, 1]])], ["dim0", "dim1"], require_surjective=False)
    calls = []
    real = linear_layout._rank
    monkeypatch.setattr(linear_layout, "_rank", lambda *a: calls.append(a) or real(*a))
    for _ in range(3):
        L.is_surjective(), L.is_injective(), L.is_invertible(), repr(L)
    assert len(calls) <= 1


def test_algebra_results_skip_revalidation(monkeypatch):
    a = LinearLayout.from_bases([("register", [[1, 0], [0, 1]]), ("lane", [[2, 0], [0, 2]])], ["dim0", "dim1"])
    b = LinearLayout.from_bases([("register", [[0, 1], [1, 0]]), ("lane", [[0, 2], [2, 0]])], ["dim0", "dim1"])
    expected = (a.invert_and_compose(b), a * LinearLayout.identity_1d(2, "warp", "dim2"), a.pseudoinvert(),
                a.transpose_outs(["dim1", "dim0"]).flatten_outs(), divide_left(a, a.sublayout(["register"], ["dim0", "dim1"])))

    def refuse(*args, **kwargs):
        raise AssertionError("an internal result went through the checked public constructor")

    monkeypatch.setattr(LinearLayout, "__init__", refuse)
    got = (a.invert_and_compose(b), a * LinearLayout.identity_1d(2, "warp", "dim2"), a.pseudoinvert(),
           a.transpose_outs(["dim1", "dim0"]).flatten_outs(), divide_left(a, a.sublayout(["register"], ["dim0", "dim1"])))
    assert got == expected


def test_ensure_layout_not_smaller_than_without_input_dims():
    """Triton reads the first input dim unchecked; with none there is nothing to repeat along: refused when
    growth is needed, returned unchanged when not (it used to raise a bare IndexError in both cases)."""
    empty = LinearLayout([], [("out", 4)], require_surjective=False)
    assert ensure_layout_not_smaller_than(empty, {"out": 4}) is empty
    with pytest.raises(LayoutError, match="no input dim to repeat along"):
        ensure_layout_not_smaller_than(empty, {"out": 8})
