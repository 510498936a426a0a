"""Bad input gives a LayoutError (a ValueError) that names the operation, the offending argument and the rule.

One test per admissibility rule; the last tests show that the CuTe DSL is lenient on exactly these inputs
(it returns a wrong layout or kills the process) while we refuse with an explanation.
"""

from __future__ import annotations

import numpy as np
import pytest

from layoutlab import (
    Layout,
    LayoutError,
    blocked_product,
    complement,
    composition,
    group_modes,
    left_inverse,
    local_partition,
    local_tile,
    logical_divide,
    logical_product,
    make_layout,
    make_ordered_layout,
    make_tensor,
    parse_layout,
    raked_product,
    select,
    slice_,
    tile_to_shape,
    upcast,
    zipped_divide,
)
from layoutlab.dsl import HAVE_DSL, SKIP_REASON, dsl_eval


def raises(fn, *words):
    """Call fn, expect a LayoutError whose message contains every word (case-insensitive)."""
    with pytest.raises(LayoutError) as info:
        fn()
    msg = str(info.value)
    assert isinstance(info.value, ValueError)
    for w in words:
        assert w.lower() in msg.lower(), f"{w!r} not in: {msg}"
    return msg


# --------------------------------------------------------------------------- construction


def test_incongruent_shape_and_stride():
    raises(lambda: Layout((4, (2, 3)), (1, 4)), "Layout", "(4,(2,3))", "(1,4)", "not congruent")


def test_zero_or_negative_shape():
    raises(lambda: Layout((4, 0), (1, 4)), "Layout", "0", "at least one element")
    raises(lambda: Layout(-3, 1), "Layout", "-3", "positive")


def test_non_integer_shape():
    raises(lambda: Layout((4, 2.5)), "Layout", "2.5", "IntTuple")


def test_bad_parse():
    raises(lambda: parse_layout("(4,6):(1,4"), "parse_layout", "missing ')'")
    raises(lambda: parse_layout("(4,6):(1;4)"), "parse_layout", "unexpected character")
    raises(lambda: parse_layout("(4,6):(1,4):(2)"), "parse_layout", "more than one ':'")
    raises(lambda: parse_layout("()"), "parse_layout", "empty")
    raises(lambda: parse_layout("(4,6):(1)"), "not congruent")


def test_ordered_layout_order_must_match_and_be_distinct():
    raises(lambda: make_ordered_layout((4, 6, 2), (0, 1)), "make_ordered_layout", "one order per leaf")
    raises(lambda: make_ordered_layout((4, 6), (1, 1)), "make_ordered_layout", "distinct")


# --------------------------------------------------------------------------- evaluation and structure


def test_coordinate_out_of_range():
    L = Layout((4, 6), (6, 1))
    raises(lambda: L((4, 0)), "Layout()", "out of range", "0..3", "only the last mode extends")
    raises(lambda: L(-1), "Layout()", "out of range")
    raises(lambda: L(np.array([0, -1])), "index out of range", ">= 0")
    # issue 17 item 2: past its size a layout extends its last mode, as CuTe evaluates it
    assert L(24) == 6 and L((1, 7)) == 13 and L(np.array([0, 24, 30])).tolist() == [0, 6, 19]


def test_coordinate_not_congruent():
    raises(lambda: Layout((4, 6))((1, 2, 3)), "Layout()", "not congruent", "(4,6)")


def test_bad_mode_access():
    L = Layout((4, 6, 2))
    raises(lambda: L[3], "Layout[3]", "does not exist", "0..2")
    raises(lambda: select(L, [0, 5]), "does not exist")
    raises(lambda: group_modes(L, 2, 1), "group_modes", "[2,1)")


def test_slice_rules():
    L = Layout((4, 6))
    raises(lambda: slice_(L, (4, None)), "slice_", "out of range")
    raises(lambda: slice_((1, None), L), "slice_", "layout comes first", "slice_(layout, coord)")
    assert slice_(L, (1, 2)) == Layout((), ())  # issue 17 item 11: every mode fixed -> ():(), as the DSL


# --------------------------------------------------------------------------- composition


def test_composition_stride_divisibility():
    msg = raises(lambda: composition(Layout((4, 6), (1, 10)), Layout(4, 3)), "composition", "stride divisibility",
                 "3", "(4,6):(1,10)")
    assert "4:3" in msg


def test_composition_stride_must_skip_whole_modes():
    raises(lambda: composition(Layout((4, 6), (1, 10)), Layout(3, 5)), "composition", "stride divisibility",
           "must divide 5")


def test_composition_shape_divisibility():
    raises(lambda: composition(Layout((4, 6), (1, 10)), Layout(6, 1)), "composition", "shape divisibility",
           "does not divide")


def test_composition_modes_must_not_carry():
    # each mode of B alone is fine, but B(1,1) = 4 carries out of A's first mode
    raises(lambda: composition(Layout((4, 3), (3, 1)), Layout((4, 2), (1, 1))), "composition", "not a layout",
           "carry")


def test_composition_negative_stride_in_b_is_composed_like_cute():
    # issue 17 item 5: CuTe composes a negative stride in B (it walks A backwards); only the sign is carried
    assert str(composition(Layout(4, 1), Layout(4, -1))) == "4:-1"
    assert str(composition(Layout((4, 6)), Layout(4, -1))) == "4:-1"


def test_tiler_with_too_many_modes():
    raises(lambda: logical_divide(Layout((4, 6)), (2, 3, 1)), "logical_divide", "3 modes", "only 2")


def test_zipped_divide_cannot_unzip_none():
    raises(lambda: zipped_divide(Layout((8, 6)), (2, None)), "zipped", "None cannot be unzipped")


# --------------------------------------------------------------------------- complement, inverses, products


def test_complement_needs_injective_layout():
    raises(lambda: complement(Layout((2, 2), (1, 1)), 24), "complement", "not injective", "(2,2):(1,1)")


def test_complement_modes_must_nest():
    # (2,2):(3,4) is injective (0,3,4,7), but the mode 2:4 starts inside the span 6 of the mode 2:3: CuTe asserts
    # and the DSL returns a shape containing 0
    raises(lambda: complement(Layout((2, 2), (3, 4)), 24), "complement", "do not nest", "span 6", "injective")


def test_complement_with_a_gap_that_is_not_a_mode_follows_cute():
    # issue 17 item 6: stride 10 is not a multiple of the span 3 below it; CuTe rounds the gap down (10 // 3 = 3)
    # and the result meets every post-condition of CuTe's test_complement
    assert str(complement(Layout((3, 6), (1, 10)), 53)) == "3:3"
    assert str(complement(Layout((4, 6), (1, 6)), 34)) == "1:0"


def test_complement_whose_rounded_gap_breaks_cutes_post_conditions():
    # the rounded gaps leave holes: (5,5):(2,11) with its complement 2:1 reaches only offset 53 < 55, and 3:9 is
    # fewer than 24 / 6 elements; the DSL returns these anyway
    raises(lambda: complement(Layout((5, 5), (2, 11)), 55), "complement", "rounds a gap down", "only offset 53")
    raises(lambda: complement(Layout((2, 3), (1, 3)), 24), "complement", "fewer than 4 elements")


def test_complement_negative_stride():
    raises(lambda: complement(Layout(4, -1), 8), "complement", "negative stride")


def test_left_inverse_needs_injective_layout():
    raises(lambda: left_inverse(Layout((4, 3), (2, 4))), "left_inverse", "not injective")


def test_left_inverse_divisibility():
    raises(lambda: left_inverse(Layout((2, 2), (3, 8))), "left_inverse", "not a multiple of 3")


def test_product_of_non_injective_block():
    raises(lambda: logical_product(Layout((2, 2), (1, 1)), Layout(3)), "complement", "not injective")
    raises(lambda: blocked_product(Layout((2, 2), (1, 1)), Layout((3, 1))), "not injective")


def test_rank1_product_pairings_the_dsl_refuses():
    raises(lambda: blocked_product(Layout((5,), (1,)), Layout(4)), "blocked_product", "tuple tiler")
    raises(lambda: raked_product(Layout(5), Layout((4,))), "raked_product", "tuple-shaped tiler")


def test_tile_to_shape_divisibility_and_rank():
    raises(lambda: tile_to_shape(Layout((2, 2)), (8, 5)), "tile_to_shape", "mode 1", "not a multiple of", "2")
    raises(lambda: tile_to_shape(Layout((2, 2, 2)), (8, 8)), "tile_to_shape", "rank 3")


def test_upcast_divisibility():
    raises(lambda: upcast(Layout((4, 6), (1, 6)), 4), "upcast", "stride 6", "factor 4")


def test_wrong_argument_types():
    raises(lambda: composition((4, 6), Layout(4)), "composition", "must be a Layout")
    raises(lambda: complement("4:1", 8), "complement", "must be a Layout")


# --------------------------------------------------------------------------- tensors


def test_local_partition_index_and_projection():
    t = make_tensor(0, Layout((16, 64)))
    raises(lambda: local_partition(t, Layout((2, 16)), 32), "local_partition", "thread index 32", "size 32")
    raises(lambda: local_partition(t, Layout((2, 16)), 0, proj=(1, None, 1)), "local_partition", "one entry per mode")


def test_local_tile_projection_must_match():
    t = make_tensor(0, Layout((128, 64)))
    raises(lambda: local_tile(t, (16, 16, 8), (0, 0, None), (1, None)), "projection", "one Step entry per mode")


# --------------------------------------------------------------------------- the DSL is lenient on these


@pytest.mark.dsl
@pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON or "CuTe DSL unavailable")
def test_dsl_is_lenient_where_we_refuse():
    cases = {
        # composition: the DSL returns (2,2):(3,10) but A(B(1)) = A(3) = 3 and A(B(2)) = A(6) = 12
        "stride": "cute.composition(cute.make_layout((4,6), stride=(1,10)), cute.make_layout(4, stride=3))",
        # composition that carries across B's modes: the DSL answers (4,2):(3,3), but B(3,1)=4 -> A(4) = 1
        "carry": "cute.composition(cute.make_layout((4,3), stride=(3,1)), cute.make_layout((4,2), stride=(1,1)))",
        # complement of a non-injective layout: the DSL returns a shape containing 0
        "complement": "cute.complement(cute.make_layout((2,2), stride=(1,1)), 24)",
        # product with a non-injective block: the DSL's native code dies (SIGFPE)
        "product": "cute.logical_product(cute.make_layout((2,2), stride=(1,1)), cute.make_layout(3))",
    }
    got = dict(zip(cases, dsl_eval(list(cases.values()))))
    assert got["stride"].value == "(2,2):(3,10)"
    A = Layout((4, 6), (1, 10))
    assert [parse_layout(got["stride"].value)(i) for i in range(4)] != [A(3 * i) for i in range(4)]
    assert got["carry"].value == "(4,2):(3,3)"
    assert parse_layout(got["carry"].value)((3, 1)) != Layout((4, 3), (3, 1))(4)
    assert got["complement"].ok and "(0," in got["complement"].value
    assert got["product"].status == "crash"
    # and we refuse every one of them with an explanation
    raises(lambda: composition(A, Layout(4, 3)), "stride divisibility")
    raises(lambda: composition(Layout((4, 3), (3, 1)), Layout((4, 2), (1, 1))), "carry")
    raises(lambda: complement(Layout((2, 2), (1, 1)), 24), "not injective")
    raises(lambda: logical_product(Layout((2, 2), (1, 1)), make_layout(3)), "not injective")
