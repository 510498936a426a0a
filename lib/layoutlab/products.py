"""The divides and products of the CuTe layout algebra (``cute/layout.hpp``), tile_to_shape, common vectors, recasts,
built from composition and the complement.
"""

from __future__ import annotations

from math import gcd

from .algebra_core import LayoutWrapper, _mk, _need_layout, _transform_layout, _wrapped, coalesce, composition
from .inverse import _complement, complement, right_inverse
from .errors import LayoutError
from .inttuple import ceil_div, format_int_tuple, is_int, is_tuple, product_each, signum, zip_leaves, unflatten
from .layout import Layout, cosize, make_layout, make_ordered_layout

__all__ = ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product", "zipped_product",
           "tiled_product", "flat_product", "blocked_product", "raked_product", "tile_to_shape", "max_common_layout",
           "max_common_vector", "upcast", "downcast", "recast_layout"]


def _by_mode(public, layout: Layout, tiler, what: str, fn) -> Layout:
    """``fn(layout, tiler)`` for a Layout or integer tiler (``n:1``); ``None`` keeps it; a tuple: mode by mode."""
    op = public.__name__
    _need_layout(layout, op, what)
    if tiler is None:
        return layout
    if isinstance(tiler, (tuple, list)):
        return _transform_layout(layout, tuple(tiler), public, op)
    if is_int(tiler):
        return fn(layout, _mk(int(tiler), 1 if tiler > 1 else 0))
    _need_layout(tiler, op, "the tiler")
    return fn(layout, tiler)


def _unpack(z: Layout, tile_too: bool = False) -> Layout:
    """``(tile, rest)`` with the rest modes (and, with ``tile_too``, the tile modes) unpacked to the top level."""
    return make_layout([*(z[0] if tile_too else [z[0]]), *z[1]])


@_wrapped
def logical_divide(layout: Layout, tiler) -> Layout:
    """Split ``layout`` into (tile, rest): ``composition(layout, make_layout(tiler, complement(tiler, size)))``; a
    tuple tiler divides mode by mode (``None`` keeps a mode, as do trailing modes), an integer ``n`` is ``n:1``.

    >>> logical_divide(Layout((9,(4,8)), (59,(13,1))), (Layout(3,3), Layout((2,4),(1,8))))
    ((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))
    """
    return _by_mode(logical_divide, layout, tiler, "the layout",
                    lambda L, T: composition(L, make_layout(T, complement(T, coalesce(L).shape))))


def _zip2_by(layout: Layout, guide):
    """Gather the (tile, rest) pairs at the terminals of ``guide`` into two modes."""
    if isinstance(guide, (tuple, list)):
        modes = list(layout)  # the divide or product already refused a guide longer than the modes
        pairs = [_zip2_by(m, g) for m, g in zip(modes, guide)]
        return make_layout(make_layout([p[0] for p in pairs]), make_layout([p[1] for p in pairs] + modes[len(guide):]))
    if layout.rank() != 2 or not is_tuple(layout.shape):
        raise LayoutError(
            f"zipped_divide/zipped_product: the mode {layout} for tiler entry {guide!r} is not a (tile, rest) pair; "
            f"give a Layout or an integer for every mode you tile (None cannot be unzipped)"
        )
    return layout


@_wrapped
def zipped_divide(layout: Layout, tiler) -> Layout:
    """:func:`logical_divide`, then gather all tile modes into mode 0 and all rest modes into mode 1.

    >>> zipped_divide(Layout((8,6)), (4,3))
    ((4,3),(2,2)):((1,8),(4,24))
    """
    return _zip2_by(logical_divide(layout, tiler), tiler)


@_wrapped
def tiled_divide(layout: Layout, tiler) -> Layout:
    """:func:`zipped_divide` with the rest modes unpacked: ``((tile), rest0, rest1, ...)``.

    >>> tiled_divide(Layout((8,6)), (4,3))
    ((4,3),2,2):((1,8),4,24)
    """
    return _unpack(zipped_divide(layout, tiler))


@_wrapped
def flat_divide(layout: Layout, tiler) -> Layout:
    """:func:`zipped_divide` with both groups unpacked: ``(tile0, tile1, ..., rest0, rest1, ...)``.

    >>> flat_divide(Layout((8,6)), (4,3))
    (4,3,2,2):(1,8,4,24)
    """
    return _unpack(zipped_divide(layout, tiler), tile_too=True)


def _logical_product_layout(block: Layout, tiler: Layout) -> Layout:
    rest = _complement(block, block.size() * cosize(tiler), checked=False)  # the tiler extends its last mode
    return make_layout(block, composition(rest, tiler))


@_wrapped
def logical_product(block: Layout, tiler) -> Layout:
    """Repeat ``block`` as ``tiler`` says: ``(block, complement(block, size(block)*cosize(tiler)) o tiler)``, mode by
    mode for a tuple tiler.  Admissible only for an injective ``block`` (its complement must exist).

    >>> logical_product(Layout((2,2),(4,1)), Layout(6,1))
    ((2,2),(2,3)):((4,1),(2,8))
    """
    return _by_mode(logical_product, block, tiler, "the block", _logical_product_layout)


@_wrapped
def zipped_product(block: Layout, tiler) -> Layout:
    """:func:`logical_product` with block modes gathered in mode 0 and repetition modes in mode 1.

    >>> zipped_product(Layout((2,2),(2,1)), Layout((2,3)))
    ((2,2),(2,3)):((2,1),(4,8))
    """
    return _zip2_by(logical_product(block, tiler), tiler)


@_wrapped
def tiled_product(block: Layout, tiler) -> Layout:
    """:func:`zipped_product` with the repetition modes unpacked: ``((block), rest0, rest1, ...)``.

    >>> tiled_product(Layout((2,2),(2,1)), Layout((2,3)))
    ((2,2),2,3):((2,1),4,8)
    """
    return _unpack(zipped_product(block, tiler))


@_wrapped
def flat_product(block: Layout, tiler) -> Layout:
    """:func:`zipped_product` with both groups unpacked: ``(block0, block1, ..., rest0, rest1, ...)``.

    >>> flat_product(Layout((2,2),(2,1)), Layout((2,3)))
    (2,2,2,3):(2,1,4,8)
    """
    return _unpack(zipped_product(block, tiler), tile_too=True)


def _pad(layout: Layout, r: int) -> Layout:
    """``append<r>``: pad with ``1:0`` modes up to rank ``r`` (a layout of rank ``r`` is returned as is)."""
    modes = list(layout)
    return layout if len(modes) == r else make_layout(modes + [_mk(1, 0)] * (r - len(modes)))


def _rank_product(op: str, block: Layout, tiler: Layout):
    """The block and repetition modes of ``logical_product`` of both padded to the larger rank ``r``."""
    _need_layout(block, op, "the block")
    _need_layout(tiler, op, "the tiler")
    r = max(block.rank(), tiler.rank())
    res = _logical_product_layout(_pad(block, r), _pad(tiler, r))
    return res[0], res[1], r


def _pair(first: Layout, second: Layout, whole: bool = False) -> Layout:
    """Mode ``i`` is ``(first_i, second_i)``; an integer-shaped ``first`` (or ``whole``) pairs with all ``second``."""
    if whole or not is_tuple(first.shape):
        return _mk(((first.shape, second.shape),), ((first.stride, second.stride),))
    ma, mb = list(first), list(second)
    if len(ma) != len(mb):
        raise LayoutError(f"zip: ranks differ, {first} has {len(ma)} modes and {second} has {len(mb)}; the block and "
                          f"its repetitions pair up mode by mode")
    return make_layout([make_layout(a, b) for a, b in zip(ma, mb)])


@_wrapped
def blocked_product(block: Layout, tiler: Layout) -> Layout:
    """Rank-preserving product: mode ``i`` is ``(block_i, tiler_i)`` of ``logical_product`` (padded to one rank).

    >>> blocked_product(Layout((2,2)), Layout((3,4)))
    ((2,3),(2,4)):((1,4),(2,12))
    """
    first, rest, r = _rank_product("blocked_product", block, tiler)
    if r == 1 and is_tuple(first.shape) and not is_tuple(rest.shape):
        raise LayoutError(
            f"blocked_product: a rank-1 tuple block {first} needs a tuple tiler too (got {rest}); the CuTe DSL pairs "
            f"their modes, so give both as tuples or both as integer shapes"
        )
    return _pair(first, rest)


@_wrapped
def raked_product(block: Layout, tiler: Layout) -> Layout:
    """Rank-preserving interleaved product: mode ``i`` is ``(tiler_i, block_i)``, coalesced, as CuTe does.

    >>> raked_product(Layout((2,2)), Layout((3,4)))
    ((3,2),(4,2)):((4,1),(12,2))
    """
    first, rest, r = _rank_product("raked_product", block, tiler)
    if r == 1 and is_tuple(rest.shape) and not is_tuple(first.shape):
        raise LayoutError(
            f"raked_product: an integer-shaped block {block} cannot be raked over the tuple-shaped tiler {tiler} "
            f"(the CuTe DSL refuses this pairing); give both as tuples or both as integer shapes"
        )
    return coalesce(_pair(rest, first, whole=r == 1), (1,) * r)


@_wrapped
def tile_to_shape(block: Layout, trg_shape, order=None) -> Layout:
    """Repeat ``block`` to ``trg_shape`` (multiples of its modes); ``order`` ranks the repetition grid's modes.

    >>> tile_to_shape(Layout((2,2)), (8,6), order=(1,0))
    ((2,4),(2,3)):((1,12),(2,4))
    """
    _need_layout(block, "tile_to_shape", "the block")
    trg_shape = tuple(trg_shape) if isinstance(trg_shape, list) else trg_shape
    r = len(trg_shape) if is_tuple(trg_shape) else 1
    if block.rank() > r:
        raise LayoutError(f"tile_to_shape: block {block} has rank {block.rank()}, more than the target shape "
                          f"{format_int_tuple(trg_shape)} (rank {r})")
    padded, grid = _pad(block, r), []
    for i, (t, m) in enumerate(zip(product_each(trg_shape) if is_tuple(trg_shape) else (trg_shape,), padded)):
        if t % m.size() != 0:
            raise LayoutError(
                f"tile_to_shape: mode {i} of the target shape {format_int_tuple(trg_shape)} has size {t}, not a "
                f"multiple of the block's mode size {m.size()} ({block}); the block must tile the target exactly"
            )
        grid.append(t // m.size())
    grid = tuple(grid) if is_tuple(trg_shape) else grid[0]
    order = tuple(range(r)) if order is None else order
    if not is_tuple(trg_shape) and is_tuple(order):
        order = order[0]
    return blocked_product(padded, make_ordered_layout(grid, order))


def _common_run(a: Layout, b: Layout, op: str):
    """``right_inverse(b)`` and the leading mode of ``coalesce(a o right_inverse(b))``."""
    _need_layout(a, op, "a")
    _need_layout(b, op, "b")
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    return inv_b, common[0] if is_tuple(common.shape) else common


def max_common_layout(a: Layout, b: Layout) -> Layout:
    """The largest ``R`` with ``a(R(i)) == i == b(R(i))``: ``right_inverse(b) o`` the leading stride-1 mode of
    ``coalesce(a o right_inverse(b))``, or ``1:0``.

    >>> max_common_layout(Layout((4,8),(1,4)), Layout((4,8),(1,8)))
    4:1
    """
    inv_b, first = _common_run(a, b, "max_common_layout")
    return composition(inv_b, first) if first.stride == 1 else _mk(1, 0)


def max_common_vector(a: Layout, b: Layout) -> int:
    """The number ``N`` of leading elements that ``a`` and ``b`` map identically and contiguously.

    >>> max_common_vector(Layout((4,8),(1,4)), Layout((4,8),(1,8)))
    4
    """
    first = _common_run(a, b, "max_common_vector")[1]
    return first.shape if first.stride == 1 else 1


def _map_leaves(layout: Layout, f, op: str, n: int) -> Layout:
    """Apply ``f(shape, stride) -> (shape, stride)`` to every flat mode, keeping the nesting (factor ``n`` checked)."""
    _need_layout(layout, op, "the argument")
    if n < 1:
        raise LayoutError(f"{op}: factor {n} must be a positive integer")
    pairs = [f(s, d) for s, d in zip_leaves(layout.shape, layout.stride)]
    shapes, strides = zip(*pairs) if pairs else ((), ())
    return _mk(unflatten(shapes, layout.shape), unflatten(strides, layout.shape))


def upcast(layout: Layout, n: int) -> Layout:
    """View the layout in units ``n`` times larger: stride-1 modes shrink by ``n``, other strides divide by ``n``.

    >>> upcast(Layout((4,8),(1,4)), 2)
    (2,8):(1,2)
    """

    def f(s, d):
        if d == 0:
            return s, 0
        a = abs(d)
        if a % n and n % a:
            raise LayoutError(f"upcast: stride {d} of {layout} and factor {n} do not divide one another; "
                              f"upcast needs strides that are multiples or divisors of {n}")
        return ceil_div(s, ceil_div(n, a)), signum(d) * ceil_div(a, n)

    return _map_leaves(layout, f, "upcast", n)


def downcast(layout: Layout, n: int) -> Layout:
    """View the layout in units ``n`` times smaller: stride-±1 modes grow by ``n``, other strides multiply by ``n``.

    >>> downcast(Layout((2,8),(1,2)), 2)
    (4,8):(1,4)
    """
    return _map_leaves(layout, lambda s, d: (s * n, d) if d in (1, -1) else (s, d * n), "downcast", n)


def recast_layout(new_type_bits: int, old_type_bits: int, src_layout):
    """Re-express a layout of ``old_type_bits``-bit elements in ``new_type_bits``-bit ones (the DSL's order).

    >>> recast_layout(32, 16, Layout((4,8),(1,4)))
    (2,8):(1,2)
    """
    if new_type_bits <= 0 or old_type_bits <= 0:
        raise LayoutError(f"recast_layout: bit widths must be positive, got {new_type_bits} and {old_type_bits}")
    if isinstance(src_layout, LayoutWrapper):
        return src_layout._recast_layout(new_type_bits, old_type_bits)
    _need_layout(src_layout, "recast_layout", "src_layout")
    g = gcd(new_type_bits, old_type_bits)
    num, den = new_type_bits // g, old_type_bits // g
    out = upcast(src_layout, num) if num != 1 else src_layout
    return downcast(out, den) if den != 1 else out
