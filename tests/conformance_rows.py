"""The rows of the "Where we differ" table of chapters/conformance.md, as data the tests check.

Each row: the case, what the peer (CuTe C++ / the CuTe DSL) does, what layoutlab does, why, and for a
refusal a call that must raise LayoutError (``refusal``; None where we answer differently instead).
``tests/oracles/test_conformance_dsl.py`` checks that every refusal raises and that the page names every case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from layoutlab.cute.basis import E
from layoutlab import (ComposedLayout, LdMatrix16x8x8bOp, WarpgroupMmaF8Op, make_copy_atom, Layout, Swizzle, complement, composition, evenly_divides, left_inverse,
                       logical_product, make_layout_tv, make_ordered_layout, recast_layout, right_inverse, slice_, tile_to_shape, upcast)


@dataclass(frozen=True)
class Row:
    case: str
    peer: str
    ours: str
    why: str
    refusal: Optional[Callable] = None


def _sw(b=1, m=0, s=2, outer=None):
    return ComposedLayout(Swizzle(b, m, s), 0, outer or Layout((4, 4), (1, 4)))


DIFFERENCES = [
    Row("composition whose strides do not divide",
        "the DSL returns `(2,2):(3,10)` for `(4,6):(1,10) o 4:3`, which is not `A(B(i))`",
        "LayoutError naming the stride-divisibility rule",
        "CuTe checks divisibility only weakly; the returned layout is a different function",
        lambda: composition(Layout((4, 6), (1, 10)), Layout(4, 3))),
    Row("composition whose modes carry",
        "the DSL returns `(4,2):(3,3)` for `(4,3):(3,1) o (4,2):(1,1)`; `B(3,1) = 4` lands in A's next mode",
        "LayoutError: B's modes together reach past A's mode",
        "right-distributivity holds only while B's modes fit side by side inside A's modes",
        lambda: composition(Layout((4, 3), (3, 1)), Layout((4, 2), (1, 1)))),
    Row("complement of a non-injective layout",
        "the DSL returns a shape containing 0 (`(0,12):(2,2)` for `(2,2):(1,1)`)",
        "LayoutError naming two indices that collide",
        "no ordered, disjoint complement exists",
        lambda: complement(Layout((2, 2), (1, 1)), 24)),
    Row("complement of modes that do not nest",
        "CuTe C++ static_asserts; the DSL returns `(3,0,3):(1,6,8)` for `(2,2):(3,4)`",
        "LayoutError: the mode starts inside the span of the smaller modes",
        "CuTe's algorithm needs every stride to reach the span below it; we refuse exactly where CuTe does",
        lambda: complement(Layout((2, 2), (3, 4)), 24)),
    Row("complement whose rounded gaps fall short of the cotarget",
        "the DSL returns `2:1` for `complement((5,5):(2,11), 55)`; with it the layout reaches only offset 53",
        "LayoutError naming the broken post-condition of CuTe's own test_complement",
        "a stride that is not a multiple of the span below gets a rounded-down gap; we accept the result where it "
        "meets every post-condition (e.g. `complement((4,6):(1,6), 34) = 1:0`) and refuse it where it does not",
        lambda: complement(Layout((5, 5), (2, 11)), 55)),
    Row("product with a non-injective block",
        "the DSL's native code dies (SIGFPE) on `logical_product((2,2):(1,1), 3)`",
        "LayoutError from the complement (not injective)",
        "the product needs the block's complement",
        lambda: logical_product(Layout((2, 2), (1, 1)), Layout(3))),
    Row("tile_to_shape with a target that is not a multiple of the block",
        "the DSL returns `((2,4),(2,3)):((1,4),(2,16))`, of shape (8,6), for `tile_to_shape((2,2), (8,5))`",
        "LayoutError naming the mode and the block size",
        "the block must tile the target exactly",
        lambda: tile_to_shape(Layout((2, 2)), (8, 5))),
    Row("upcast of strides that do not divide the factor",
        "the DSL returns `(1,6):(1,2)` for `recast_layout(64, 16, (4,6):(1,6))`; stride 6 is 1.5 of the new elements",
        "LayoutError naming the stride and the factor",
        "a stride that is neither a multiple nor a divisor of the factor splits elements",
        lambda: upcast(Layout((4, 6), (1, 6)), 4)),
    Row("recast of a swizzle past its base bit",
        "the DSL prints a wrapped-around base (`S<3,4294...>`) for `recast_layout(32, 16, S<3,0,3> o ...)`",
        "LayoutError: the swizzle's base M would go below bit 0",
        "the swizzle would XOR bits inside one element",
        lambda: recast_layout(32, 16, _sw(3, 0, 3, Layout((8, 64), (64, 1))))),
    Row("slice of a swizzled layout",
        "the DSL folds the swizzle into the strides and drops the fixed part's offset; for some 32-bit SW32 staged "
        "layouts that gives negative offsets (tests/cute/test_swizzle.py records them)",
        "the fixed part goes into the offset and the swizzle is kept, so the slice evaluates like the original",
        "a slice must be the same function on the kept coordinates"),
    Row("composition with a swizzled right operand",
        "CuTe C++ composes `A o (Sw o B)` (composition.cpp, \"Swizzle composition\"); the DSL refuses",
        "LayoutError: the right operand is a ComposedLayout",
        "we follow the DSL; compose with the outer layout and apply the swizzle after",
        lambda: composition(Layout((8, 8), (8, 1)), _sw(2, 0, 3, Layout((8, 8), (8, 1))))),
    Row("left_inverse of a swizzled ComposedLayout",
        "CuTe C++ inverts it (inverse_left.cpp); the DSL raises TypeError (not a Layout)",
        "LayoutError: the argument must be a Layout",
        "we follow the DSL; the inverse of a swizzled layout is not a swizzled layout of the same form",
        lambda: left_inverse(_sw())),
    Row("right_inverse of a swizzled ComposedLayout",
        "CuTe C++ inverts it (inverse_right.cpp); the DSL raises TypeError (not a Layout)",
        "LayoutError: the argument must be a Layout",
        "we follow the DSL, as for left_inverse",
        lambda: right_inverse(_sw())),
    Row("left_inverse with a negative stride",
        "CuTe C++ returns `4:-1` for `4:-1` (inverse_left.cpp, beta); the DSL refuses",
        "LayoutError: left_inverse needs non-negative strides",
        "we follow the DSL; negative strides are beta in CuTe",
        lambda: left_inverse(Layout(4, -1))),
    Row("left_inverse of an injective layout whose modes interleave",
        "CuTe's construction (and the DSL) cannot invert `(2,2):(2,3)`, although `(2,3):(1,1)` is a left inverse",
        "LayoutError that says the layout is injective, why the construction fails, and the example",
        "no general construction for interleaved modes; the message no longer claims the layout is not injective",
        lambda: left_inverse(Layout((2, 2), (2, 3)))),
    Row("evenly_divides with a Layout tile",
        "CuTe C++ takes `Tile<Layout<_8,_2>, _32>` (int_tuple.cpp, Divides); the DSL 4.8.1 has no evenly_divides",
        "LayoutError: give tile sizes",
        "evenly_divides sits in inttuple, below the algebra a Layout tile needs (its complement); divide with "
        "logical_divide and compare sizes instead",
        lambda: evenly_divides((32, 64), (Layout(8, 2), 32))),
    Row("stride of a size-1 rest mode",
        "CuTe C++ keeps stride 32 in `logical_divide(2, 32:1)` because its size-1 mode is a dynamic 1",
        "`(32,1):(1,0)`, as the DSL prints it",
        "Python has no static/dynamic integers; the DSL (all static) gives stride 0"),
    # helper A (layout): issue 17 items 1, 2, 9
    Row("slice_ or dice in the C++ argument order",
        "the DSL takes the coordinate as the source: `cute.slice_((1,None), L)` returns `()`, "
        "`cute.dice((1,None), L)` returns `(1,None)`",
        "LayoutError: the layout comes first, `slice_(layout, coord)` as in the DSL",
        "the DSL's order is `slice_(src, coord)`; the C++ order `slice(coord, layout)` gives a silent wrong value there",
        lambda: slice_((1, None), Layout((4, 6)))),
    Row("coordinate entry past the extent of a mode other than the last",
        "CuTe (and the DSL) take the inner product anyway: `(4,6):(1,4)` at `(5,1)` gives 9, the offset of `(1,2)`",
        "LayoutError: only the last mode extends past its size",
        "such an entry silently aliases a coordinate of the next mode; past the size only the last mode extends, "
        "as CuTe's `idx2crd` does (an index `k >= size` and a last-mode entry past its extent evaluate like CuTe)",
        lambda: Layout((4, 6), (1, 4))((5, 1))),
    Row("make_layout_tv of thread and value layouts whose raked product is not a bijection",
        "the DSL returns `((4,2),(4,2):(4,16))` for `(2,2):(3,1)` and `2:1`: offsets up to 28 in an 8-element tile",
        "LayoutError: the raked product is not a bijection onto 0..7; the layouts must be compact",
        "the DSL documents that both layouts must be compact and does not check it; the TV layout it returns "
        "sends threads outside the tile",
        lambda: make_layout_tv(Layout((2, 2), (3, 1)), Layout(2, 1))),
    Row("compact_col_major / compact_row_major results",
        "CuTe C++ returns the stride tuple (`compact_col_major((4,6), 2)` is `(2,8)`); the DSL 4.8.1 has neither",
        "the compact layout `(4,6):(2,8)` (its `.stride` is C++'s value)",
        "a layout prints and composes like the DSL's `make_layout`/`make_ordered_layout` results; the same names "
        "returning a tuple would be the only constructors that do not"),
    # helper R (atoms): issue 17 item 9
    Row("MN-major fp8 wgmma",
        "the DSL builds `warpgroup.MmaF8Op(..., a_major_mode=OperandMajorMode.MN)` with the K-major layouts",
        "LayoutError: fp8 operands must be K-major",
        "wgmma transposes (imm-trans-a/b) only 16-bit inputs (PTX ISA 9.7.15); no instruction implements the atom",
        lambda: WarpgroupMmaF8Op("f8E4M3FN", "f8E4M3FN", "f32", (64, 64, 32), "smem", "MN", "K")),
    Row("8-bit ldmatrix/stmatrix of 16-bit values",
        "the DSL builds `LdMatrix16x8x8bOp(True, 4)` / `StMatrix16x8x8bOp` for Float16 with a thread mode of 16 lanes",
        "LayoutError: the op moves 8-bit elements",
        "the .b8 forms move bytes; the DSL's layout no longer covers the 32 lanes of the warp",
        lambda: make_copy_atom(LdMatrix16x8x8bOp(True, 4), "f16")),
    # issue 29: the PyCuTe cases
    Row("make_ordered_layout with a repeated order",
        "the DSL starts tied parts at the same stride: `(2,4):(1,1)` for order `(0,0)`",
        "LayoutError: orders must be distinct",
        "an ordered layout is compact; parts with one order would overlap",
        lambda: make_ordered_layout((2, 4), (0, 0))),
    Row("basis strides that end at a coordinate mode and reach inside it",
        "the DSL aborts (SIGABRT) on `complement` and `left_inverse` of `(2,3):(1@1,2@0@1)` and returns "
        "`(1,(1)):(0,(0))` as its `right_inverse`",
        "LayoutError: give every stride of one mode the same depth",
        "a coordinate mode is an integer or a tuple, not both; no answer can nest both ways",
        lambda: complement(Layout((2, 3), (E(1), E(1, 0) * 2)), (8, (8, 8)))),
    Row("by-mode logical_product of an identity layout",
        "PyCuTe returns an injective layout, as the complement in each mode's own coordinate does: "
        "`((6,2),(4,2)):((1@0,6@0),(1@1,4@1))` for `make_identity_layout((6,4))` by `(2,2)`",
        "the DSL's `((6,2),(4,2)):((1@0,6@0),(1@1,1@0))`, not injective",
        "we follow the DSL; the tuple tiler multiplies each mode alone"),
]
