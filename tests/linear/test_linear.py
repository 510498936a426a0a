"""LinearLayout: hypothesis properties, CuTe/swizzle/TV conversions, bad input."""
import re

import pytest
from hypothesis import assume, given, settings

from layoutlab import Layout
from layoutlab.errors import LayoutError
from layoutlab.linear import (LinearLayout, cute_from_linear_layout, layout_conversion, linear_layout_from_cute,
                              rref_f2, swizzle_to_linear_layout, tv_layout_to_linear_layout)
from layoutlab.cute.swizzle import ComposedLayout, Swizzle
from strategies import any_layouts, square_layouts


def all_inputs(ll):
    sizes = ll.in_dims
    total = 1
    for _, s in sizes:
        total *= s
    for x in range(total):
        d, rest = {}, x
        for name, s in sizes:
            d[name] = rest % s
            rest //= s
        yield d


@given(square_layouts())
@settings(max_examples=80, deadline=None)
def test_invert_is_a_two_sided_inverse(L):
    inv = L.invert()
    assert inv.invert() == L
    for x in all_inputs(L):
        assert inv.apply(L.apply(x)) == x
    for y in all_inputs(inv):
        assert L.apply(inv.apply(y)) == y


@given(any_layouts())
@settings(max_examples=100, deadline=None)
def test_apply_is_linear_over_f2(L):
    xs = list(all_inputs(L))[:64]
    for a in xs[:8]:
        for b in xs[:8]:
            s = {k: a[k] ^ b[k] for k in a}
            la, lb, ls = L.apply(a), L.apply(b), L.apply(s)
            assert ls == {k: la[k] ^ lb[k] for k in la}


@given(any_layouts())
@settings(max_examples=100, deadline=None)
def test_pseudoinverse_and_invert_and_compose(L):
    assume(L.is_surjective())
    P = L.pseudoinvert()
    for y in all_inputs(P):
        assert L.apply(P.apply(y)) == y
    # C = A.invert_and_compose(L) satisfies A(x) = L(C(x)) for A = L itself and for A = L after a permutation
    C = L.invert_and_compose(L)
    for x in all_inputs(L):
        assert L.apply(x) == L.apply(C.apply(x))


@given(any_layouts())
@settings(max_examples=100, deadline=None)
def test_matrix_view_rank_and_free_variables(L):
    m = L.get_matrix_view()
    rows = [sum(b << c for c, b in enumerate(r)) for r in m]
    rank = sum(1 for r in rref_f2(rows, L.total_in_dim_size_log2()) if r)
    free = L.free_variable_masks()
    n_free = sum(bin(v).count("1") for v in free.values())
    assert n_free == L.total_in_dim_size_log2() - rank
    assert L.is_injective() == (n_free == 0)
    assert L.is_surjective() == (rank == L.total_out_dim_size_log2())
    # the image has exactly 2^rank points
    image = {tuple(L.apply(x).values()) for x in all_inputs(L)}
    assert len(image) == 1 << rank


@given(any_layouts(), any_layouts())
@settings(max_examples=60, deadline=None)
def test_product_applies_blockwise(A, B):
    B2 = LinearLayout.from_bases([(f"{d}_b", v) for d, v in B.bases], ["dim2", "dim3"],
                                 [s for _, s in B.out_dims], require_surjective=False)
    P = A * B2
    for x in list(all_inputs(A))[:16]:
        for y in list(all_inputs(B2))[:4]:
            out = P.apply({**x, **y})
            assert out == {**A.apply(x), **B2.apply(y)}


def test_compose_order_is_triton_s():
    A = LinearLayout.identity_1d(4, "i", "o")
    B = LinearLayout.strided_1d(4, 2, "o", "p")
    assert A.compose(B).bases == [("i", [[2], [4]])] and A.compose(B).out_dims == [("p", 8)]


# ------------------------------------------------------------------ CuTe conversions
@pytest.mark.parametrize("text_shape,stride", [((8, 64), (64, 1)), (((4, 8, 4), (2, 2, 8)), ((128, 1, 16), (64, 8, 512))),
                                               ((4, 2), (2, 0)), ((16,), (1,))])
def test_cute_round_trip(text_shape, stride):
    lay = Layout(text_shape, stride)
    ll = linear_layout_from_cute(lay)
    for i in range(lay.size()):
        crd = []
        rest = i
        for m in range(ll.num_in_dims):
            s = ll.in_dims[m][1]
            crd.append(rest % s)
            rest //= s
        assert ll.apply(dict(zip(ll.get_in_dim_names(), crd)))["offset"] == lay(i)
    back = cute_from_linear_layout(ll)
    assert [back(i) for i in range(lay.size())] == [lay(i) for i in range(lay.size())]


def test_seed000_wgmma_accumulator_as_linear_layout():
    tv = Layout(((4, 8, 4), (2, 2, 8)), ((128, 1, 16), (64, 8, 512)))   # 64x64 tile, index m + 64 n
    ll = tv_layout_to_linear_layout(tv, (64, 64))
    assert ll.is_invertible()
    # T1 V0 -> (0, 2) and T4 V0 -> (1, 0), as seed 000 walks through
    assert ll.apply({"register": 0, "lane": 1, "warp": 0}) == {"dim0": 0, "dim1": 2}
    assert ll.apply({"register": 0, "lane": 4, "warp": 0}) == {"dim0": 1, "dim1": 0}


def test_swizzle_matrix_and_composed_layout():
    ll = swizzle_to_linear_layout(Swizzle(1, 0, 1), 2)
    assert ll.bases == [("offset", [[1], [3]])]
    c = ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    L = linear_layout_from_cute(c)  # the swizzled layout converts in the linear bridge (linear_cute)
    assert not all(v & (v - 1) == 0 for (v,) in dict(L.bases)["dim0"])   # rows XOR columns: not a CuTe Layout
    with pytest.raises(LayoutError, match="XOR"):
        cute_from_linear_layout(L)


def test_bad_input():
    with pytest.raises(LayoutError, match="power-of-two"):
        LinearLayout.from_bases([("r", [[1]])], ["o"], [6])
    with pytest.raises(LayoutError, match="out of range"):
        LinearLayout.from_bases([("r", [[4]])], ["o"], [4], require_surjective=False)
    with pytest.raises(LayoutError, match="one entry per out-dim"):
        LinearLayout.from_bases([("r", [[1, 0]])], ["o"], [2])
    with pytest.raises(LayoutError, match="not surjective"):
        LinearLayout.from_bases([("r", [[1], [1]])], ["o"], [4])
    with pytest.raises(LayoutError, match="not invertible"):
        LinearLayout.from_bases([("r", [[1], [1]])], ["o"], [2]).invert()
    with pytest.raises(LayoutError, match="not a power of two"):
        LinearLayout.identity_1d(6, "r", "o")
    with pytest.raises(LayoutError, match="stride 3"):
        LinearLayout.strided_1d(4, 3, "r", "o")
    with pytest.raises(LayoutError, match="not a power of two"):
        linear_layout_from_cute(Layout((6, 4), (1, 8)))
    with pytest.raises(LayoutError, match="neither 0 nor a power of two"):
        linear_layout_from_cute(Layout((4, 4), (1, 6)))
    with pytest.raises(LayoutError, match="carries"):
        linear_layout_from_cute(Layout((2, 2), (1, 1)))
    with pytest.raises(LayoutError, match="input dims"):
        LinearLayout.identity_1d(4, "i", "o").compose(LinearLayout.identity_1d(4, "x", "y"))
    with pytest.raises(LayoutError, match="give a value"):
        LinearLayout.identity_1d(4, "i", "o").apply({"j": 1})
    with pytest.raises(LayoutError, match="same relative order"):
        (LinearLayout.identity_1d(2, "a", "o") * LinearLayout.identity_1d(2, "b", "o")) * \
            (LinearLayout.identity_1d(2, "b", "o") * LinearLayout.identity_1d(2, "a", "o"))


@pytest.mark.parametrize("entry", ["x", 1.5, True])
def test_non_integer_basis_entry_is_refused(entry):
    """A basis entry that is not an integer is refused by name, not cast by int() (1.5 used to become 1)."""
    with pytest.raises(LayoutError, match=f"must be an integer, got {entry!r}"):
        LinearLayout([("in", [[1], [entry]])], [("out", 4)])
    with pytest.raises(LayoutError, match="must be an integer"):
        LinearLayout.from_bases([("in", [[1], [entry]])], ["out"])


@pytest.mark.parametrize("bases, out_dims, says", [
    ([[[1], [2]]], [("out", 4)], "bases must be (name, value) pairs"),        # the in-dim name left out
    ([("in", [[1], [2]])], ["out"], "out_dims must be (name, value) pairs"),  # the out-dim size left out
    ([("in", 3)], [("out", 4)], "give a list of bases"),
    ([("in", [1, 2])], [("out", 4)], "give a list of bases"),                # bases not wrapped per out-dim
])
def test_malformed_constructor_arguments_are_refused_with_the_expected_form(bases, out_dims, says):
    """These used to raise a bare TypeError/ValueError from unpacking."""
    with pytest.raises(LayoutError, match=re.escape(says)):
        LinearLayout(bases, out_dims)
    if isinstance(out_dims[0], tuple) and "out_dims" not in says:
        with pytest.raises(LayoutError, match=re.escape(says)):
            LinearLayout.from_bases(bases, [n for n, _ in out_dims], [s for _, s in out_dims])


def test_a_layout_without_out_dims_goes_back_to_cute_as_stride_zero():
    """Every input reaches offset 0; it used to fail unpacking an empty basis."""
    assert str(cute_from_linear_layout(LinearLayout([("in", [[], []])], [], require_surjective=False))) == "4:0"
