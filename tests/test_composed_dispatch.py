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
