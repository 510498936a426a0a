"""The divides and products of the CuTe layout algebra, tile_to_shape, common vectors and recasting.

All are built from composition (:mod:`layoutlab.algebra_core`) and the complement (:mod:`layoutlab.inverse`), as in CuTe's
``cute/layout.hpp``; results print as the CuTe DSL prints them.  A swizzled ``ComposedLayout`` (or any
:class:`~layoutlab.algebra_core.LayoutWrapper`) is divided, multiplied, tiled and recast through its held
layout and keeps its swizzle, as ``cute.*`` does.  :mod:`layoutlab.algebra` re-exports every name.
"""

from __future__ import annotations

from math import gcd

from .algebra_core import LayoutWrapper, _concat, _mk, _modes, _need_layout, _transform_layout, coalesce, composition
from .inverse import _complement, complement, right_inverse
from .errors import LayoutError
from .inttuple import ceil_div, format_int_tuple, is_int, is_tuple, product_each, signum, zip_leaves, unflatten
from .layout import Layout, cosize, make_ordered_layout

__all__ = [
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "flat_product",
    "blocked_product",
    "raked_product",
    "tile_to_shape",
    "max_common_layout",
    "max_common_vector",
    "upcast",
    "downcast",
    "recast_layout",
]


def _wrapped(fn):
    """Let a layout operation ``fn(layout, *args)`` accept a LayoutWrapper: act on its layout, rebuild it.
    (Defined here, not imported: doctest finds a function's examples only in the module of its globals.)"""

    def op(layout, *args, **kw):
        if isinstance(layout, LayoutWrapper):
            return layout._with_layout(op(layout._algebra_layout(), *args, **kw))
        return fn(layout, *args, **kw)

    op.__name__, op.__qualname__, op.__doc__, op.__wrapped__ = fn.__name__, fn.__qualname__, fn.__doc__, fn
    return op


def _as_tiler_layout(tiler, op):
    if is_int(tiler):
        return _mk(int(tiler), 1 if tiler > 1 else 0)
    _need_layout(tiler, op, "the tiler")
    return tiler


# --------------------------------------------------------------------------- divide


@_wrapped
def logical_divide(layout: Layout, tiler) -> Layout:
    """Split ``layout`` into (tile, rest): ``composition(layout, make_layout(tiler, complement(tiler, size)))``.

    Mode 0 of the result enumerates one tile (as ``tiler`` picks it), mode 1 enumerates the tiles.
    A tuple tiler divides mode by mode (``None`` keeps a mode; untouched trailing modes are kept); an
    integer ``n`` means the tile ``n:1``.

    >>> logical_divide(Layout((9,(4,8)), (59,(13,1))), (Layout(3,3), Layout((2,4),(1,8))))
    ((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))
    """
    _need_layout(layout, "logical_divide", "the layout")
    if tiler is None:
        return layout
    if isinstance(tiler, (tuple, list)):
        return _transform_layout(layout, tuple(tiler), logical_divide, "logical_divide")
    tiler = _as_tiler_layout(tiler, "logical_divide")
    return composition(layout, _concat([tiler, complement(tiler, coalesce(layout).shape)]))


def _zip2_by(layout: Layout, guide):
    """Gather the (tile, rest) pairs at the terminals of ``guide`` into two modes."""
    if isinstance(guide, (tuple, list)):
        modes = _modes(layout)
        if len(guide) > len(modes):
            raise LayoutError(f"zip2_by: guide {guide!r} has more modes than {layout}")
        pairs = [_zip2_by(m, g) for m, g in zip(modes, guide)]
        firsts = [p[0] for p in pairs]
        seconds = [p[1] for p in pairs] + modes[len(guide):]
        return _concat([_concat(firsts), _concat(seconds)])
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
    z = zipped_divide(layout, tiler)
    return _concat([z[0], *_modes(z[1])])


@_wrapped
def flat_divide(layout: Layout, tiler) -> Layout:
    """:func:`zipped_divide` with both groups unpacked: ``(tile0, tile1, ..., rest0, rest1, ...)``.

    >>> flat_divide(Layout((8,6)), (4,3))
    (4,3,2,2):(1,8,4,24)
    """
    z = zipped_divide(layout, tiler)
    return _concat([*_modes(z[0]), *_modes(z[1])])


# --------------------------------------------------------------------------- product


def _logical_product_layout(block: Layout, tiler: Layout) -> Layout:
    _need_layout(block, "logical_product", "the block")
    rest = _complement(block, block.size() * cosize(tiler), checked=False)  # the tiler extends its last mode
    return _concat([block, composition(rest, tiler)])


@_wrapped
def logical_product(block: Layout, tiler) -> Layout:
    """Repeat ``block`` as ``tiler`` says: ``(block, complement(block, size(block)*cosize(tiler)) o tiler)``.

    Mode 0 is the block, mode 1 enumerates its copies.  A tuple tiler works mode by mode.
    Admissible only for an injective ``block`` (its complement must exist).

    >>> logical_product(Layout((2,2),(4,1)), Layout(6,1))
    ((2,2),(2,3)):((4,1),(2,8))
    """
    _need_layout(block, "logical_product", "the block")
    if tiler is None:
        return block
    if isinstance(tiler, (tuple, list)):
        return _transform_layout(block, tuple(tiler), logical_product, "logical_product")
    return _logical_product_layout(block, _as_tiler_layout(tiler, "logical_product"))


@_wrapped
def zipped_product(block: Layout, tiler) -> Layout:
    """:func:`logical_product` with block modes gathered in mode 0 and repetition modes in mode 1
    (for a Layout tiler this is :func:`logical_product` itself; tuple tilers are zipped mode by mode).

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
    z = zipped_product(block, tiler)
    return _concat([z[0], *_modes(z[1])])


@_wrapped
def flat_product(block: Layout, tiler) -> Layout:
    """:func:`zipped_product` with both groups unpacked: ``(block0, block1, ..., rest0, rest1, ...)``.

    >>> flat_product(Layout((2,2),(2,1)), Layout((2,3)))
    (2,2,2,3):(2,1,4,8)
    """
    z = zipped_product(block, tiler)
    return _concat([*_modes(z[0]), *_modes(z[1])])


def _pad(layout: Layout, r: int) -> Layout:
    """``append<r>``: pad with ``1:0`` modes up to rank ``r`` (a layout of rank ``r`` is returned as is)."""
    modes = _modes(layout)
    if len(modes) == r:
        return layout
    return _concat([*modes, *([_mk(1, 0)] * (r - len(modes)))])


def _zip_modes(first: Layout, second: Layout) -> Layout:
    """Mode ``i`` of the result is ``(first_i, second_i)``; the ranks must be equal."""
    ma, mb = _modes(first), _modes(second)
    if len(ma) != len(mb):
        raise LayoutError(f"zip: ranks differ, {first} has {len(ma)} modes and {second} has {len(mb)}; the block and "
                          f"its repetitions pair up mode by mode")
    return _concat([_concat([a, b]) for a, b in zip(ma, mb)])


def _zip_rank1(first: Layout, second: Layout, op: str) -> Layout:
    """The DSL's pairing of rank-1 (block, rest): an integer-shaped block pairs with the whole rest,
    a 1-tuple block pairs with the rest's single mode."""
    if not is_tuple(first.shape):
        return _mk(((first.shape, second.shape),), ((first.stride, second.stride),))
    if not is_tuple(second.shape):
        raise LayoutError(
            f"{op}: a rank-1 tuple block {first} needs a tuple tiler too (got {second}); the CuTe DSL pairs their "
            f"modes, so give both as tuples or both as integer shapes"
        )
    return _zip_modes(first, second)


@_wrapped
def blocked_product(block: Layout, tiler: Layout) -> Layout:
    """Rank-preserving product: mode ``i`` is ``(block_i, tiler_i)`` — whole blocks laid out by ``tiler``.

    Math: ``logical_product(block, tiler)`` (both padded with ``1:0`` to the larger rank), with block mode
    ``i`` and repetition mode ``i`` zipped together.

    >>> blocked_product(Layout((2,2)), Layout((3,4)))
    ((2,3),(2,4)):((1,4),(2,12))
    """
    _need_layout(block, "blocked_product", "the block")
    _need_layout(tiler, "blocked_product", "the tiler")
    r = max(block.rank(), tiler.rank())
    res = _logical_product_layout(_pad(block, r), _pad(tiler, r))
    if r == 1:
        return _zip_rank1(res[0], res[1], "blocked_product")
    return _zip_modes(res[0], res[1])


@_wrapped
def raked_product(block: Layout, tiler: Layout) -> Layout:
    """Rank-preserving interleaved product: mode ``i`` is ``(tiler_i, block_i)`` — blocks raked across the tiler.

    Like :func:`blocked_product` with the pair order swapped, then each mode coalesced (as CuTe does).

    >>> raked_product(Layout((2,2)), Layout((3,4)))
    ((3,2),(4,2)):((4,1),(12,2))
    """
    _need_layout(block, "raked_product", "the block")
    _need_layout(tiler, "raked_product", "the tiler")
    r = max(block.rank(), tiler.rank())
    res = _logical_product_layout(_pad(block, r), _pad(tiler, r))
    if r == 1:
        if is_tuple(res[1].shape) and not is_tuple(res[0].shape):
            raise LayoutError(
                f"raked_product: an integer-shaped block {block} cannot be raked over the tuple-shaped tiler {tiler} "
                f"(the CuTe DSL refuses this pairing); give both as tuples or both as integer shapes"
            )
        z = _mk(((res[1].shape, res[0].shape),), ((res[1].stride, res[0].stride),))
        return coalesce(z, (1,))
    return coalesce(_zip_modes(res[1], res[0]), (1,) * r)


@_wrapped
def tile_to_shape(block: Layout, trg_shape, order=None) -> Layout:
    """Repeat ``block`` (a blocked product) until it has shape ``trg_shape``; ``order`` says which mode of
    the repetition grid advances first (default: mode 0, column-major).

    Every mode of ``trg_shape`` must be a multiple of the block's mode size.

    >>> tile_to_shape(Layout((2,2)), (8,6), order=(1,0))
    ((2,4),(2,3)):((1,12),(2,4))
    """
    _need_layout(block, "tile_to_shape", "the block")
    if isinstance(trg_shape, list):
        trg_shape = tuple(trg_shape)
    r = len(trg_shape) if is_tuple(trg_shape) else 1
    if block.rank() > r:
        raise LayoutError(f"tile_to_shape: block {block} has rank {block.rank()}, more than the target shape "
                          f"{format_int_tuple(trg_shape)} (rank {r})")
    padded = _pad(block, r)
    bshape = product_each(padded.shape) if is_tuple(padded.shape) else (padded.shape,)
    tshape = product_each(trg_shape) if is_tuple(trg_shape) else (trg_shape,)
    for i, (t, b) in enumerate(zip(tshape, bshape)):
        if t % b != 0:
            raise LayoutError(
                f"tile_to_shape: mode {i} of the target shape {format_int_tuple(trg_shape)} has size {t}, not a multiple "
                f"of the block's mode size {b} ({block}); the block must tile the target exactly"
            )
    grid = tuple(t // b for t, b in zip(tshape, bshape))
    if order is None:
        order = tuple(range(r))
    if not is_tuple(trg_shape):
        grid, order = grid[0], (order[0] if is_tuple(order) else order)
    return blocked_product(padded, make_ordered_layout(grid, order))


# --------------------------------------------------------------------------- common vectors


def _leading_unit_mode(layout: Layout) -> Layout:
    common = coalesce(layout)
    return common[0] if is_tuple(common.shape) else common


def max_common_layout(a: Layout, b: Layout) -> Layout:
    """The layout ``R`` of the largest contiguous run on which ``a`` and ``b`` agree: ``a(R(i)) == i == b(R(i))``.

    ``R = right_inverse(b) o (the leading stride-1 mode of coalesce(a o right_inverse(b)))``; ``1:0`` if none.

    >>> max_common_layout(Layout((4,8),(1,4)), Layout((4,8),(1,8)))
    4:1
    """
    _need_layout(a, "max_common_layout", "a")
    _need_layout(b, "max_common_layout", "b")
    inv_b = right_inverse(b)
    first = _leading_unit_mode(composition(a, inv_b))
    return composition(inv_b, first) if first.stride == 1 else _mk(1, 0)


def max_common_vector(a: Layout, b: Layout) -> int:
    """The number ``N`` of leading elements that ``a`` and ``b`` map identically and contiguously.

    >>> max_common_vector(Layout((4,8),(1,4)), Layout((4,8),(1,8)))
    4
    """
    _need_layout(a, "max_common_vector", "a")
    _need_layout(b, "max_common_vector", "b")
    first = _leading_unit_mode(composition(a, right_inverse(b)))
    return first.shape if first.stride == 1 else 1


# --------------------------------------------------------------------------- recast


def _map_leaves(layout: Layout, f) -> Layout:
    """Apply ``f(shape, stride) -> (shape, stride)`` to every flat mode, keeping the nesting."""
    pairs = [f(s, d) for s, d in zip_leaves(layout.shape, layout.stride)]
    if not is_tuple(layout.shape):
        return _mk(*pairs[0])
    return _mk(unflatten(tuple(p[0] for p in pairs), layout.shape), unflatten(tuple(p[1] for p in pairs), layout.shape))


def upcast(layout: Layout, n: int) -> Layout:
    """View the layout in units ``n`` times larger: stride-1 modes shrink by ``n``, other strides divide by ``n``.

    >>> upcast(Layout((4,8),(1,4)), 2)
    (2,8):(1,2)
    """
    _need_layout(layout, "upcast", "the argument")
    if n < 1:
        raise LayoutError(f"upcast: factor {n} must be a positive integer")

    def f(s, d):
        if d == 0:
            return s, 0
        a = abs(d)
        if not (a % n == 0 or n % a == 0):
            raise LayoutError(f"upcast: stride {d} of {layout} and factor {n} do not divide one another; "
                              f"upcast needs strides that are multiples or divisors of {n}")
        return ceil_div(s, ceil_div(n, a)), signum(d) * ceil_div(a, n)

    return _map_leaves(layout, f)


def downcast(layout: Layout, n: int) -> Layout:
    """View the layout in units ``n`` times smaller: stride-±1 modes grow by ``n``, other strides multiply by ``n``.

    >>> downcast(Layout((2,8),(1,2)), 2)
    (4,8):(1,4)
    """
    _need_layout(layout, "downcast", "the argument")
    if n < 1:
        raise LayoutError(f"downcast: factor {n} must be a positive integer")
    return _map_leaves(layout, lambda s, d: (s * n, d) if d in (1, -1) else (s, d * n))


def recast_layout(new_type_bits: int, old_type_bits: int, src_layout):
    """Re-express a layout of ``old_type_bits``-bit elements in ``new_type_bits``-bit elements (the DSL's
    argument order).  A swizzled ComposedLayout recasts its swizzle too (its base ``M`` moves by the log2 of
    the ratio).

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
    out = src_layout
    if num != 1:
        out = upcast(out, num)
    if den != 1:
        out = downcast(out, den)
    return out
