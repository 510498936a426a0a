"""IntTuples: the (nested) integer tuples of CuTe's shapes, strides and coordinates (strides may hold
:class:`ScaledBasis` leaves); pure functions named after CuTe's.  The tree helpers at the end walk nested tuples.
"""

from __future__ import annotations

from functools import reduce
from itertools import accumulate, zip_longest
from math import prod
from operator import mul

from .basis import E, ScaledBasis, is_int
from ..errors import LayoutError

__all__ = ["ScaledBasis", "E", "is_int", "is_tuple", "as_int_tuple", "product", "product_each", "size", "rank", "depth",
           "flatten", "unflatten", "congruent", "compatible", "weakly_congruent", "evenly_divides", "prefix_product",
           "suffix_product", "shape_div", "ceil_div", "crd2idx", "idx2crd", "crd2crd", "elem_scale", "inner_product",
           "signum", "repeat_like", "zip_tuples", "format_int_tuple", "leaves", "leaf_paths", "zip_leaves",
           "transform_leaf", "zip_profile", "none_to_zero", "format_tree"]


def is_tuple(x) -> bool:
    """True for a tuple (an IntTuple with modes).

    >>> is_tuple((4,)), is_tuple(4)
    (True, False)
    """
    return isinstance(x, tuple)


def as_int_tuple(x, what: str = "IntTuple", op: str = "as_int_tuple", allow_basis: bool = False):
    """Validate and normalise ``x`` into an IntTuple of Python ints (lists become tuples).

    >>> as_int_tuple([4, (2, 3)])
    (4, (2, 3))
    """

    def check(e):
        if isinstance(e, ScaledBasis) and allow_basis:
            return e
        if is_int(e):
            return int(e)
        raise LayoutError(f"{op}: {what} {format_tree(x)} is not an IntTuple; expected an int"
                          f"{', a ScaledBasis' if allow_basis else ''} or a (nested) tuple of them, e.g. (4,(2,3))")

    return transform_leaf(x, check)


def product(a):
    """Product of all integers in ``a``; the empty tuple has product 1.

    >>> product((4,(2,3))), product(())
    (24, 1)
    """
    return prod(leaves(a))


def product_each(a):
    """Product of each top-level mode.

    >>> product_each((4,(2,3)))
    (4, 6)
    """
    return tuple(map(product, a)) if is_tuple(a) else a


def _layout_like(a) -> bool:  # a Layout, a Tensor or a ComposedLayout (whose domain is its outer layout's)
    return hasattr(a, "shape") and (hasattr(a, "stride") or hasattr(a, "outer"))


def _sub(a, mode, op):
    """The shape ``a`` (or a Layout's shape) down the path ``mode`` (an int or a list of ints)."""
    a = a.shape if _layout_like(a) else a
    path = [mode] if is_int(mode) else list(mode)
    for m in path:
        if not is_tuple(a) or not 0 <= m < len(a):
            raise LayoutError(f"{op}: mode {path} does not exist in {format_tree(a)}; valid modes are 0..{rank(a) - 1}")
        a = a[m]
    return a


def size(a, mode=()):
    """Number of elements of a shape (or a Layout), of sub-mode ``mode`` if given, as ``cute.size(x, mode=[i, j])``.

    >>> size(((4,8),6)), size(((4,8),6), mode=[0])
    (192, 32)
    """
    return product(_sub(a, mode, "size"))


def rank(a, mode=()) -> int:
    """Number of top-level modes; an integer has rank 1.

    >>> rank((4,(2,3))), rank(7), rank(())
    (2, 1, 0)
    """
    a = _sub(a, mode, "rank")
    return len(a) if is_tuple(a) else 1


def depth(a, mode=()) -> int:
    """Nesting depth: an integer has depth 0, ``(4,6)`` depth 1, ``(4,(2,3))`` depth 2.

    >>> depth(7), depth((4,6)), depth((4,(2,3)))
    (0, 1, 2)
    """
    a = _sub(a, mode, "depth")
    return 1 + max(map(depth, a), default=0) if is_tuple(a) else 0


def flatten(a):
    """All leaves of ``a`` in order, as a flat tuple; an integer stays an integer (a Layout flattens too).

    >>> flatten((4,(2,(3,5)))), flatten(7)
    ((4, 2, 3, 5), 7)
    """
    if _layout_like(a):
        return a.flatten()
    return leaves(a) if is_tuple(a) else a


def unflatten(flat, profile):
    """Fold the flat tuple ``flat`` back into the nesting of ``profile`` (the inverse of :func:`flatten`).

    >>> unflatten((4,2,3), (0,(0,0)))
    (4, (2, 3))
    """
    flat = flat if is_tuple(flat) else (flat,)
    n = len(leaves(profile))
    if n != len(flat):
        raise LayoutError(f"unflatten: {len(flat)} leaves cannot fill profile {format_tree(profile)} with {n} leaves")
    it = iter(flat)
    return transform_leaf(profile, lambda _: next(it))


def congruent(a, b) -> bool:
    """Same nesting structure (profile).

    >>> congruent((4,(2,3)), (1,(5,7))), congruent((4,6), (4,(2,3)))
    (True, False)
    """
    return repeat_like(a, 0) == repeat_like(b, 0)


def weakly_congruent(a, b) -> bool:
    """``a`` is a coarsening of ``b``'s profile: an integer in ``a`` may stand for any sub-tuple of ``b``.

    >>> weakly_congruent((4,6), (4,(2,3))), weakly_congruent((4,(2,3)), (4,6))
    (True, False)
    """
    try:
        zip_profile(a, b)
    except LayoutError:
        return False
    return True


def compatible(a, b) -> bool:
    """Every coordinate of shape ``a`` is one of ``b``: weakly congruent, each integer the size of its sub-tuple.

    >>> compatible(24, (4,6)), compatible((4,6), (4,(2,3))), compatible((4,6), (6,4))
    (True, True, False)
    """
    try:
        return all(x == product(y) for x, y in zip_profile(a, b))
    except LayoutError:
        return False


def evenly_divides(shape, tiler) -> bool:
    """CuTe C++'s ``evenly_divides``, mode by mode: ``t`` divides ``s`` if ``size(s) == t * size(ceil_div(s, t))``.

    >>> evenly_divides((4,6), 8), evenly_divides((4,6), 3), evenly_divides((4,6), (2,3)), evenly_divides(12, 8)
    (True, False, True, False)
    """
    if is_tuple(tiler):
        modes = shape if is_tuple(shape) else (shape,)
        return len(tiler) <= len(modes) and all(map(evenly_divides, modes, tiler))
    if not is_int(tiler) or tiler <= 0:
        raise LayoutError(f"evenly_divides: tile {tiler!r} is not a positive integer; give tile sizes, e.g. (8,4)")
    return product(shape) == tiler * product(_ceil_div_modes(shape, tiler))


def signum(a: int) -> int:
    """Sign of an integer: -1, 0 or 1.

    >>> signum(-7), signum(0), signum(3)
    (-1, 0, 1)
    """
    return (a > 0) - (a < 0)


def prefix_product(a, init=1):
    """Exclusive prefix product, congruent to ``a``: the column-major (LayoutLeft) strides of shape ``a``.

    >>> prefix_product((4,(2,3))), prefix_product(2)
    ((1, (4, 8)), 1)
    """
    return unflatten(tuple(accumulate(leaves(a), mul, initial=init))[:-1], a)


def suffix_product(a, init=1):
    """Exclusive suffix product, congruent to ``a``: the row-major (LayoutRight) strides of shape ``a``.

    >>> suffix_product((4,(2,3)))
    (6, (3, 1))
    """
    return unflatten(tuple(accumulate(reversed(leaves(a)), mul, initial=init))[-2::-1], a)


def _same_rank(op, a, b):
    if len(a) != len(b):
        raise LayoutError(f"{op}: ranks differ, {format_tree(a)} vs {format_tree(b)}")
    return a, b


def _div_modes(a, b, div):
    """Divide shape ``a`` by the integer ``b`` left to right, each mode using up its size of ``b`` (CuTe's way)."""
    if not is_tuple(a):
        return div(a, b)
    out = []
    for e in a:
        out.append(_div_modes(e, b, div))
        b = div(b, product(e))
    return tuple(out)


def shape_div(a, b):
    """CuTe's ``shape_div``, left to right: ``a // b``, or ``1`` and ``b // a`` goes on (else refused); tuples: each.

    >>> shape_div((4,6), 8), shape_div((4,6), (2,3))
    ((1, 3), (2, 2))
    """
    if is_tuple(a) and is_tuple(b):
        return tuple(map(shape_div, *_same_rank("shape_div", a, b)))
    if is_tuple(a) or is_tuple(b):
        return _div_modes(a, product(b), shape_div)
    if b == 0:
        raise LayoutError("shape_div: division by 0")
    if a % b != 0 and b % a != 0:
        raise LayoutError(f"shape_div: {a} and {b} do not divide one another; shape_div needs one of them to be a "
                          f"multiple of the other")
    return int(a / b) or signum(a) * signum(b)


def ceil_div(a, b):
    """``cute.ceil_div``: element-wise for two tuples, ``ceil(size(a) / b)`` for a shape and an integer.

    >>> ceil_div(10, 4), ceil_div((4,6), (3,4)), ceil_div((4,6), 8)
    (3, (2, 2), 3)
    """
    if is_tuple(a) and is_tuple(b):
        return tuple(map(ceil_div, *_same_rank("ceil_div", a, b)))
    if is_tuple(a) or is_tuple(b):
        return ceil_div(product(a), product(b))
    if b == 0:
        raise LayoutError("ceil_div: division by 0")
    return -(-a // b)


def _ceil_div_modes(a, b):
    """CuTe's (C++) ceil_div of a shape by an integer, rounding up per mode: ``(4,6), 8 -> (1,3)``."""
    return _div_modes(a, b, lambda x, y: -(-x // y))


def elem_scale(a, b):
    """Element-wise product of congruent IntTuples; an integer ``a`` scales the whole of ``b``'s size.

    >>> elem_scale((2,(3,4)), (5,(6,7))), elem_scale(2, (3,4))
    ((10, (18, 28)), 24)
    """
    try:
        return unflatten(tuple(x * product(y) for x, y in zip_profile(a, b)), a)
    except LayoutError:
        raise LayoutError(f"elem_scale: {format_tree(a)} and {format_tree(b)} are not congruent") from None


def inner_product(a, b):
    """Sum of element-wise products of congruent IntTuples (a coordinate tuple where ``b`` has basis leaves).

    >>> inner_product((1,(2,3)), (4,(5,6))), inner_product((1,2), (ScaledBasis(1,0), ScaledBasis(1,1)))
    (32, (1, 2))
    """
    try:
        pairs = zip_leaves(a, b)
    except LayoutError:
        raise LayoutError(f"inner_product: {format_tree(a)} and {format_tree(b)} are not congruent") from None
    return reduce(_add, (_mul(c, d) for c, d in pairs), 0)


def _mul(c, d):
    return (d * c).as_coordinate() if isinstance(d, ScaledBasis) else c * d


def _add(x, y):
    """Add offsets that are ints or (nested) coordinate tuples (zero-padded on the right)."""
    if not (is_tuple(x) or is_tuple(y)):
        return x + y
    if x == 0 or y == 0:
        return y if x == 0 else x
    xs, ys = (t if is_tuple(t) else (t,) for t in (x, y))
    return tuple(_add(p, q) for p, q in zip_longest(xs, ys, fillvalue=0))


def repeat_like(a, x):
    """An IntTuple congruent to ``a`` with every leaf replaced by ``x``.

    >>> repeat_like((4,(2,3)), 0)
    (0, (0, 0))
    """
    return transform_leaf(a, lambda _: x)


def zip_tuples(*ts):
    """Transpose tuples of equal length.

    >>> zip_tuples((1,2), (3,4))
    ((1, 3), (2, 4))
    """
    return tuple(zip(*ts))


def _check_modes(op, crd, shape):
    if not is_tuple(shape) or len(crd) != len(shape):
        raise LayoutError(f"{op}: coordinate {format_tree(crd)} is not congruent with shape {format_tree(shape)}")


def idx2crd(idx, shape):
    """Natural coordinate of a 1-D index in ``shape`` (colexicographic, the last mode absorbs any overflow).

    >>> idx2crd(17, (4,6)), idx2crd(17, ((2,2),6)), idx2crd(30, (4,6))
    ((1, 4), ((1, 0), 4), (2, 7))
    """
    if is_tuple(idx):
        _check_modes("idx2crd", idx, shape)
        return tuple(map(idx2crd, idx, shape))
    if not is_tuple(shape):
        return idx
    crd = []
    for s in shape[:-1]:
        if product(s) <= 0:
            raise LayoutError(f"idx2crd: the shape {format_tree(shape)} has a mode of size {product(s)}; an index "
                              f"splits into a coordinate only over modes of positive size")
        idx, c = divmod(idx, product(s))
        crd.append(idx2crd(c, s))
    return tuple(crd + [idx2crd(idx, s) for s in shape[-1:]])  # the last mode takes what is left


def crd2idx(crd, shape, stride=None):
    """A coordinate's index with ``stride`` (default LayoutLeft); an integer for a sub-tuple goes through idx2crd.

    >>> crd2idx((1,2), (4,6)), crd2idx((1,2), (4,6), (6,1)), crd2idx(9, (4,6), (6,1))
    (9, 8, 8)
    """
    stride = prefix_product(shape) if stride is None else stride
    if is_tuple(crd):
        _check_modes("crd2idx", crd, shape)
        if not is_tuple(stride):
            raise LayoutError(f"crd2idx: the stride {format_tree(stride)} is not congruent with the shape "
                              f"{format_tree(shape)}; give one stride per mode")
        return reduce(_add, map(crd2idx, crd, shape, stride), 0)
    if is_tuple(shape):
        return crd2idx(idx2crd(crd, shape), shape, stride)
    return _mul(crd, stride)


def crd2crd(crd, src_shape, dst_shape):
    """Re-express a coordinate of ``src_shape`` as the coordinate of the same index in ``dst_shape``.

    >>> crd2crd((1,4), (4,6), 24), crd2crd(17, 24, (4,6))
    (17, (1, 4))
    """
    if product(src_shape) != product(dst_shape):
        raise LayoutError(f"crd2crd: sizes differ, {format_tree(src_shape)} has {product(src_shape)} elements, "
                          f"{format_tree(dst_shape)} has {product(dst_shape)}")
    return idx2crd(crd2idx(crd, src_shape), dst_shape)


def format_int_tuple(a) -> str:
    """CuTe's printing of an IntTuple: no spaces, 1-tuples keep their parentheses (see :func:`format_tree`).

    >>> format_int_tuple(((4,8,4),(2,2,8))), format_int_tuple((5,))
    ('((4,8,4),(2,2,8))', '(5)')
    """
    return format_tree(a)


def _is_node(t) -> bool:
    """A tuple (or a list, as users write coordinates); anything else (int, ScaledBasis, None) is a leaf."""
    return isinstance(t, (tuple, list))


def leaves(t) -> tuple:
    """All leaves of ``t`` in order (depth first), as a flat tuple; a leaf alone gives a 1-tuple.

    >>> leaves((4,(2,(3,None)))), leaves(7), leaves(())
    ((4, 2, 3, None), (7,), ())
    """
    return tuple(x for e in t for x in leaves(e)) if _is_node(t) else (t,)


def leaf_paths(t) -> tuple:
    """The index path of every leaf of ``t``, in the order of :func:`leaves` (``t[i][j]`` has path ``(i, j)``).

    >>> leaf_paths((4,(2,3)))
    ((0,), (1, 0), (1, 1))
    """
    return tuple((i,) + p for i, e in enumerate(t) for p in leaf_paths(e)) if _is_node(t) else ((),)


def zip_leaves(*ts) -> tuple:
    """The leaves of congruent trees side by side, one tuple per position (different nesting: a LayoutError).

    >>> zip_leaves((4,(2,3)), (1,(4,8)))
    ((4, 1), (2, 4), (3, 8))
    """
    node = _is_node(ts[0])
    if any(_is_node(t) != node or node and len(t) != len(ts[0]) for t in ts):
        raise LayoutError(f"zip_leaves: {' and '.join(map(format_tree, ts))} are not congruent "
                          f"(they need the same nesting, e.g. (4,(2,3)) and (1,(4,8)))")
    return tuple(x for es in zip(*ts) for x in zip_leaves(*es)) if node else (ts,)


def transform_leaf(t, f):
    """``t`` with every leaf ``x`` replaced by ``f(x)``, keeping the nesting (lists become tuples).

    >>> transform_leaf((4,(2,3)), lambda x: x + 1)
    (5, (3, 4))
    """
    if _is_node(t):
        return tuple(transform_leaf(e, f) for e in t)
    try:
        return f(t)
    except LayoutError:
        raise
    except Exception as e:  # the caller's function refused a leaf: say which, keeping its error as the cause
        raise LayoutError(f"transform_leaf: f({t!r}) raised {type(e).__name__}: {e}; f must accept every leaf") from e


def zip_profile(profile, t) -> tuple:
    """One pair ``(leaf_of_profile, subtree_of_t)`` per leaf of the coarser ``profile`` (a coordinate and a shape).

    >>> zip_profile((None, 3), ((4,8),(2,2)))
    ((None, (4, 8)), (3, (2, 2)))
    """
    if not _is_node(profile):
        return ((profile, t),)
    if not _is_node(t) or len(t) != len(profile):
        raise LayoutError(f"zip_profile: {format_tree(t)} does not refine the profile {format_tree(profile)}; "
                          f"every tuple of the profile needs a tuple of the same length there")
    return tuple(pair for p, e in zip(profile, t) for pair in zip_profile(p, e))


def none_to_zero(c):
    """``c`` with every ``None`` (CuTe's ``_``) replaced by 0: the origin of the slice ``c``.

    >>> none_to_zero((None, (2, None)))
    (0, (2, 0))
    """
    return transform_leaf(c, lambda x: 0 if x is None else x)


def format_tree(t) -> str:
    """CuTe's printing of a nested tuple: no spaces, 1-tuples keep their parentheses, ``None`` prints as ``_``.

    >>> print(format_tree((None, (4, 8), (3,))))
    (_,(4,8),(3))
    """
    if _is_node(t):
        return f"({','.join(map(format_tree, t))})"
    return "_" if t is None else str(t)
