"""The algebra's free functions accept swizzled ComposedLayouts, as `cute.*` does (seed 004's staged layout)."""

from layoutlab import (ComposedLayout, Layout, composition, logical_divide, make_composed_layout,
                       make_swizzle, slice_, tile_to_shape)


def _atom():
    return make_composed_layout(make_swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))


def test_tile_to_shape_on_a_swizzled_atom_gives_seed_004s_staged_layout():
    staged = tile_to_shape(_atom(), (128, 64, 7), order=(0, 1, 2))
    assert isinstance(staged, ComposedLayout)
    assert str(staged) == "S<3,4,3> o 0 o ((8,16),(64,1),(1,7)):((64,512),(1,0),(0,8192))"


def test_free_functions_agree_with_evaluating_the_composed_function():
    atom = _atom()
    sw = make_swizzle(3, 4, 3)
    tile = Layout((4, 8), (1, 4))
    composed = composition(atom, tile)
    assert [composed(i) for i in range(32)] == [sw(atom.outer(tile(i))) for i in range(32)]
    divided = logical_divide(atom, (2, 8))
    assert [divided(i) for i in range(512)] == [sw(logical_divide(atom.outer, (2, 8))(i)) for i in range(512)]
    row3 = slice_(atom, (3, None))
    assert [row3(j) for j in range(64)] == [atom((3, j)) for j in range(64)]


# --------------------------------------------------------------------------- the LayoutWrapper protocol (issue 18 item 2)

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from layoutlab import (LayoutError, LayoutWrapper, blocked_product, coalesce, flat_divide, logical_product,  # noqa: E402
                       make_tensor, raked_product, recast_layout, tiled_divide, zipped_divide)

_OPS = [
    ("composition", lambda x: composition(x, Layout((4, 8), (1, 4)))),
    ("logical_divide", lambda x: logical_divide(x, (2, 8))),
    ("zipped_divide", lambda x: zipped_divide(x, (4, 8))),
    ("tiled_divide", lambda x: tiled_divide(x, (4, 8))),
    ("flat_divide", lambda x: flat_divide(x, (4, 8))),
    ("logical_product", lambda x: logical_product(x, Layout(2))),
    ("blocked_product", lambda x: blocked_product(x, Layout((2, 3)))),
    ("raked_product", lambda x: raked_product(x, Layout((2, 3)))),
    ("coalesce", lambda x: coalesce(x)),
    ("tile_to_shape", lambda x: tile_to_shape(x, (16, 128), order=(1, 0))),
]


@pytest.mark.parametrize("name,op", _OPS, ids=[n for n, _ in _OPS])
def test_swizzled_layout_goes_through_every_operation_keeping_its_swizzle(name, op):
    atom = _atom()
    out = op(atom)
    assert isinstance(out, ComposedLayout) and out.inner == atom.inner and out.offset == atom.offset
    plain = op(atom.outer)
    assert out.outer == plain
    sw = atom.inner
    assert [out(i) for i in range(plain.size())] == [sw(plain(i)) for i in range(plain.size())]


@pytest.mark.parametrize("name,op", _OPS, ids=[n for n, _ in _OPS])
def test_tensor_goes_through_every_operation_keeping_its_engine(name, op):
    data = np.arange(8 * 64 * 8) * 10  # room for the products' copies
    t = make_tensor(data, Layout((8, 64), (64, 1)))
    out = op(t)
    plain = op(t.layout)
    assert out.layout == plain
    assert list(out.values()) == [int(data[plain(i)]) for i in range(plain.size())]


def test_recast_of_a_swizzled_layout_moves_the_swizzle_base():
    # the 16-bit 128B atom read as 32-bit elements: half as many columns, the swizzle one bit lower
    out = recast_layout(32, 16, _atom())
    assert str(out) == "S<3,3,3> o 0 o (8,32):(32,1)"
    back = recast_layout(16, 32, out)
    assert back == _atom()


def test_the_protocol_is_a_type_not_an_attribute_probe():
    class LooksLikeOne:  # has inner/outer attributes, but does not implement the protocol
        inner, outer = make_swizzle(3, 4, 3), Layout((8, 64), (64, 1))

    assert isinstance(_atom(), LayoutWrapper) and not isinstance(LooksLikeOne(), LayoutWrapper)
    with pytest.raises(LayoutError, match="must be a Layout"):
        composition(LooksLikeOne(), Layout(4))


def test_a_swizzled_layout_converts_to_a_linear_layout_in_the_linear_bridge():
    # (the conversion lives in linear_cute, above swizzle in the import layers)
    from layoutlab.linear.cute import linear_layout_from_cute

    c = make_composed_layout(make_swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    ll = linear_layout_from_cute(c)
    assert [ll.apply({"dim0": i, "dim1": j})["offset"] for i in range(8) for j in range(64)] == \
        [c((i, j)) for i in range(8) for j in range(64)]
