"""IntTuples: integers and (nested) tuples of integers, the shapes, strides and coordinates of CuTe.

An *IntTuple* is either a Python ``int`` or a ``tuple`` of IntTuples, e.g. ``((4,8,4),(2,2,8))``.
Every function here is small, pure and named after its CuTe counterpart, so that
``layoutlab.size((4,(2,3)))`` means exactly what ``cute.size((4,(2,3)))`` means.

Strides may also contain :class:`ScaledBasis` elements (``1@0``, ``2@1``...), the unit vectors
``E<i>`` of CuTe's identity ("coordinate") layouts.  They appear only where the text says so.
"""

from __future__ import annotations

import math
from functools import reduce

from .errors import LayoutError

__all__ = [
    "ScaledBasis",
    "E",
    "is_int",
    "is_tuple",
    "as_int_tuple",
    "product",
    "product_each",
    "size",
    "rank",
    "depth",
    "flatten",
    "unflatten",
    "congruent",
    "compatible",
    "weakly_congruent",
    "prefix_product",
    "suffix_product",
    "shape_div",
    "ceil_div",
    "crd2idx",
    "idx2crd",
    "crd2crd",
    "elem_scale",
    "inner_product",
    "signum",
    "repeat_like",
    "zip_tuples",
    "format_int_tuple",
]


# --------------------------------------------------------------------------- scaled basis


class ScaledBasis:
    """A scaled unit vector ``value @ modes`` of CuTe's arithmetic tuples (``E<i>`` scaled by ``value``).

    ``ScaledBasis(v, (i,))`` is the coordinate ``(0,..,v,..0)`` with ``v`` in mode ``i``; a longer
    ``modes`` path nests, innermost index first as CuTe prints it: ``ScaledBasis(1, (1, 0))`` is
    ``1@1@0``, sub-mode 1 of mode 0.  They are the strides of :func:`make_identity_layout`, whose evaluation returns
    coordinates instead of offsets.

    >>> str(ScaledBasis(2, (1,)))
    '2@1'
    >>> ScaledBasis(1, (1,)) * 4
    4@1
    """

    __slots__ = ("value", "modes")

    def __init__(self, value: int, modes):
        if isinstance(modes, int):
            modes = (modes,)
        self.value = int(value)
        self.modes = tuple(int(m) for m in modes)

    def __mul__(self, k):
        if not is_int(k):
            return NotImplemented
        return ScaledBasis(self.value * int(k), self.modes)

    __rmul__ = __mul__

    def __neg__(self):
        return ScaledBasis(-self.value, self.modes)

    def __eq__(self, other):
        if isinstance(other, ScaledBasis):
            return self.value == other.value and self.modes == other.modes
        # 0@i is the zero vector, equal to the integer 0 (a stride-0 mode).
        return is_int(other) and other == 0 and self.value == 0

    def __hash__(self):
        return hash(("E", self.value, self.modes))

    def __str__(self):
        return f"{self.value}@" + "@".join(str(m) for m in self.modes)

    __repr__ = __str__

    def as_coordinate(self):
        """The nested coordinate tuple this basis element points to (zeros elsewhere), e.g. 2@1 -> (0,2)."""
        out = self.value
        for m in self.modes:  # innermost first: 1@1@0 is sub-mode 1 of mode 0 -> ((0,1),)
            out = tuple([0] * m + [out])
        return out


def E(*modes) -> ScaledBasis:
    """The unit basis vector ``E<modes...>`` (``1@modes``), e.g. ``E(1)`` is ``1@1``."""
    return ScaledBasis(1, modes)


# --------------------------------------------------------------------------- predicates


def is_int(x) -> bool:
    """True for a Python/numpy integer (but not ``bool``)."""
    return isinstance(x, int) and not isinstance(x, bool) or (
        hasattr(x, "dtype") and getattr(x, "ndim", 1) == 0 and x.dtype.kind in "iu"
    )


def is_tuple(x) -> bool:
    """True for a tuple (an IntTuple with modes)."""
    return isinstance(x, tuple)


def as_int_tuple(x, what: str = "IntTuple", op: str = "as_int_tuple", allow_basis: bool = False):
    """Validate and normalise ``x`` into an IntTuple of Python ints (lists become tuples).

    >>> as_int_tuple([4, (2, 3)])
    (4, (2, 3))
    """
    if isinstance(x, ScaledBasis) and allow_basis:
        return x
    if is_int(x):
        return int(x)
    if isinstance(x, (tuple, list)):
        return tuple(as_int_tuple(e, what, op, allow_basis) for e in x)
    raise LayoutError(
        f"{op}: {what} {x!r} is not an IntTuple; expected an int or a (nested) tuple of ints, e.g. (4,(2,3))"
    )


# --------------------------------------------------------------------------- reductions


def product(a):
    """Product of all integers in ``a``: ``product((4,(2,3))) == 24``; ``product(()) == 1``."""
    if is_tuple(a):
        r = 1
        for e in a:
            r *= product(e)
        return r
    return a


def product_each(a):
    """Product of each top-level mode: ``product_each((4,(2,3))) == (4,6)``."""
    if is_tuple(a):
        return tuple(product(e) for e in a)
    return a


def size(a, mode=()):
    """Number of elements: the product of a shape (or of a Layout's shape).

    ``mode`` selects a sub-mode first, as ``cute.size(x, mode=[i, j])`` does: ``size(((4,8),6), mode=[0]) == 32``.
    """
    if hasattr(a, "shape") and hasattr(a, "stride") and not is_tuple(a):
        a = a.shape
    if isinstance(mode, int):
        mode = [mode]
    for m in mode:
        if not is_tuple(a) or not (0 <= m < len(a)):
            raise LayoutError(f"size: mode {list(mode)} does not exist in {format_int_tuple(a)}; valid modes are 0..{rank(a) - 1}")
        a = a[m]
    return product(a)


def rank(a, mode=()) -> int:
    """Number of top-level modes; an integer has rank 1: ``rank((4,(2,3))) == 2``, ``rank(7) == 1``."""
    if hasattr(a, "shape") and hasattr(a, "stride") and not is_tuple(a):
        a = a.shape
    for m in [mode] if isinstance(mode, int) else mode:
        a = a[m]
    return len(a) if is_tuple(a) else 1


def depth(a, mode=()) -> int:
    """Nesting depth: an integer has depth 0, ``(4,6)`` depth 1, ``(4,(2,3))`` depth 2."""
    if hasattr(a, "shape") and hasattr(a, "stride") and not is_tuple(a):
        a = a.shape
    for m in [mode] if isinstance(mode, int) else mode:
        a = a[m]
    if is_tuple(a):
        return 1 + max((depth(e) for e in a), default=0)
    return 0


def flatten(a):
    """All leaves of ``a`` in order, as a flat tuple; an integer stays an integer.

    ``flatten((4,(2,(3,5)))) == (4,2,3,5)``
    """
    if hasattr(a, "shape") and hasattr(a, "stride") and not is_tuple(a):
        return a.flatten()
    if is_tuple(a):
        return tuple(x for e in a for x in (flatten(e) if is_tuple(e) else (e,)))
    return a


def unflatten(flat, profile):
    """Fold the flat tuple ``flat`` back into the nesting of ``profile`` (the inverse of :func:`flatten`).

    ``unflatten((4,2,3), (0,(0,0))) == (4,(2,3))``
    """
    flat = tuple(flat) if is_tuple(flat) else (flat,)
    it = iter(flat)

    def build(p):
        if is_tuple(p):
            return tuple(build(e) for e in p)
        return next(it)

    n = len(flatten(profile)) if is_tuple(profile) else 1
    if n != len(flat):
        raise LayoutError(f"unflatten: {len(flat)} leaves cannot fill profile {format_int_tuple(profile)} with {n} leaves")
    return build(profile)


# --------------------------------------------------------------------------- shape relations


def congruent(a, b) -> bool:
    """Same nesting structure (profile): ``congruent((4,(2,3)), (1,(5,7)))`` is True."""
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a) and not is_tuple(b)


def weakly_congruent(a, b) -> bool:
    """``a`` is a coarsening of ``b``'s profile: an integer in ``a`` may stand for any sub-tuple of ``b``."""
    if not is_tuple(a):
        return True
    if not is_tuple(b):
        return False
    return len(a) == len(b) and all(weakly_congruent(x, y) for x, y in zip(a, b))


def compatible(a, b) -> bool:
    """Shape ``a`` is compatible with shape ``b``: sizes agree and every coordinate of ``a`` is one of ``b``.

    That is, ``size(a) == size(b)`` and each integer of ``a`` covers a whole sub-tuple of ``b``:
    ``compatible(24, (4,6))`` and ``compatible((4,6), (4,(2,3)))`` are True, ``compatible((4,6), (6,4))`` is False.
    """
    if is_tuple(a):
        return is_tuple(b) and len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    return a == size(b)


# --------------------------------------------------------------------------- arithmetic


def signum(a: int) -> int:
    """Sign of an integer: -1, 0 or 1."""
    return (a > 0) - (a < 0)


def prefix_product(a, init=1):
    """Exclusive prefix product, congruent to ``a``: the column-major (LayoutLeft) strides of shape ``a``.

    ``prefix_product((4,(2,3))) == (1,(4,8))``
    """
    if is_tuple(a):
        out = []
        for e in a:
            out.append(prefix_product(e, init))
            init = init * product(e)
        return tuple(out)
    return init


def suffix_product(a, init=1):
    """Exclusive suffix product, congruent to ``a``: the row-major (LayoutRight) strides of shape ``a``.

    ``suffix_product((4,(2,3))) == (6,(3,1))``
    """
    if is_tuple(a):
        out = []
        for e in reversed(a):
            out.append(suffix_product(e, init))
            init = init * product(e)
        return tuple(reversed(out))
    return init


def shape_div(a, b):
    """CuTe's ``shape_div``: divide shape ``a`` by ``b`` left to right, one mode at a time.

    For integers: ``a // b`` when ``b`` divides ``a``, ``1`` when ``a`` divides ``b`` (the divisor is "used
    up" and carries on as ``b // a``).  A tuple ``a`` is divided mode by mode by what is left of ``b``; two
    tuples divide element-wise.  Any other pair is refused, as in the DSL.
    ``shape_div((4,6), 8) == (1,3)``; ``shape_div((4,6), (2,3)) == (2,2)``; ``shape_div(6, 4)`` raises.
    """
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise LayoutError(f"shape_div: ranks differ, {format_int_tuple(a)} vs {format_int_tuple(b)}")
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out = []
        for e in a:
            out.append(shape_div(e, b))
            b = shape_div(b, product(e))
        return tuple(out)
    if is_tuple(b):
        return shape_div(a, product(b))
    if b == 0:
        raise LayoutError("shape_div: division by 0")
    if a % b != 0 and b % a != 0:
        raise LayoutError(
            f"shape_div: {a} and {b} do not divide one another; shape_div needs one of them to be a multiple of the other"
        )
    q = int(a / b)
    return q if q != 0 else signum(a) * signum(b)


def ceil_div(a, b):
    """Ceiling division as the DSL's ``cute.ceil_div`` computes it: element-wise for two tuples, and
    ``ceil(size(a) / b)`` for a shape divided by an integer.

    ``ceil_div(10, 4) == 3``; ``ceil_div((4,6), (3,4)) == (2,2)``; ``ceil_div((4,6), 8) == 3``.
    """
    if is_tuple(a) and is_tuple(b):
        if len(a) != len(b):
            raise LayoutError(f"ceil_div: ranks differ, {format_int_tuple(a)} vs {format_int_tuple(b)}")
        return tuple(ceil_div(x, y) for x, y in zip(a, b))
    if is_tuple(a) or is_tuple(b):
        return ceil_div(product(a), product(b))
    if b == 0:
        raise LayoutError("ceil_div: division by 0")
    return -((-a) // b)


def _ceil_div_modes(a, b):
    """CuTe's internal (C++) ceil_div of a shape by an integer: consume ``b`` left to right, rounding up per mode.

    ``_ceil_div_modes((4,6), 8) == (1,3)``: used for shape cotargets in :func:`complement`.
    """
    if is_tuple(a):
        out = []
        for e in a:
            out.append(_ceil_div_modes(e, b))
            b = -((-b) // product(e))
        return tuple(out)
    return -((-a) // b)


def elem_scale(a, b):
    """Element-wise product of congruent IntTuples; an integer ``a`` scales the whole of ``b``'s size.

    ``elem_scale((2,(3,4)), (5,(6,7))) == (10,(18,28))``
    """
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise LayoutError(f"elem_scale: {format_int_tuple(a)} and {format_int_tuple(b)} are not congruent")
        return tuple(elem_scale(x, y) for x, y in zip(a, b))
    return a * product(b)


def inner_product(a, b):
    """Sum of element-wise products of congruent IntTuples: ``inner_product((1,(2,3)), (4,(5,6))) == 32``.

    ``b`` may hold :class:`ScaledBasis` leaves; the result is then a coordinate tuple.
    """
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise LayoutError(f"inner_product: {format_int_tuple(a)} and {format_int_tuple(b)} are not congruent")
        return reduce(_add, (inner_product(x, y) for x, y in zip(a, b)), 0)
    if is_tuple(b):
        raise LayoutError(f"inner_product: {a} and {format_int_tuple(b)} are not congruent")
    return _mul(a, b)


def _mul(c, d):
    if isinstance(d, ScaledBasis):
        return ScaledBasis(c * d.value, d.modes).as_coordinate()
    return c * d


def _add(x, y):
    """Add offsets that are ints or (nested) coordinate tuples (zero-padded on the right)."""
    if is_tuple(x) or is_tuple(y):
        xt = x if is_tuple(x) else (x,)
        yt = y if is_tuple(y) else (y,)
        if x == 0:
            return y
        if y == 0:
            return x
        n = max(len(xt), len(yt))
        xt = xt + (0,) * (n - len(xt))
        yt = yt + (0,) * (n - len(yt))
        return tuple(_add(p, q) for p, q in zip(xt, yt))
    return x + y


def repeat_like(a, x):
    """An IntTuple congruent to ``a`` with every leaf replaced by ``x``: ``repeat_like((4,(2,3)), 0) == (0,(0,0))``."""
    if is_tuple(a):
        return tuple(repeat_like(e, x) for e in a)
    return x


def zip_tuples(*ts):
    """Transpose tuples of equal length: ``zip_tuples((1,2),(3,4)) == ((1,3),(2,4))``."""
    return tuple(zip(*ts))


# --------------------------------------------------------------------------- coordinates


def idx2crd(idx, shape, stride=None):
    """Natural coordinate of a 1-D index in ``shape`` (colexicographic: the first mode varies fastest).

    A tuple ``idx`` is mapped mode by mode.  The last mode absorbs any overflow, as in CuTe.
    ``idx2crd(17, (4,6)) == (1,4)``; ``idx2crd(17, ((2,2),6)) == ((1,0),4)``.
    """
    if is_tuple(idx):
        if not is_tuple(shape) or len(idx) != len(shape):
            raise LayoutError(f"idx2crd: coordinate {format_int_tuple(idx)} is not congruent with shape {format_int_tuple(shape)}")
        return tuple(idx2crd(i, s) for i, s in zip(idx, shape))
    if is_tuple(shape):
        out = []
        n = len(shape)
        for k, s in enumerate(shape):
            if k == n - 1:
                out.append(idx2crd(idx, s))
            else:
                sz = product(s)
                out.append(idx2crd(idx % sz, s))
                idx //= sz
        return tuple(out)
    return idx


def crd2idx(crd, shape, stride=None):
    """Map a coordinate to an index with ``stride`` (default: the LayoutLeft strides of ``shape``).

    ``crd`` may be an integer (a 1-D index, split with :func:`idx2crd` per mode) or a nested tuple;
    an integer standing for a sub-tuple of ``shape`` is split the same way.
    ``crd2idx((1,2), (4,6)) == 9``; ``crd2idx((1,2), (4,6), (6,1)) == 8``; ``crd2idx(9, (4,6), (6,1)) == 8``.
    """
    if stride is None:
        stride = prefix_product(shape)
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise LayoutError(f"crd2idx: coordinate {format_int_tuple(crd)} is not congruent with shape {format_int_tuple(shape)}")
        return reduce(_add, (crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride)), 0)
    if is_tuple(shape):
        return crd2idx(idx2crd(crd, shape), shape, stride)
    return _mul(crd, stride)


def crd2crd(crd, src_shape, dst_shape):
    """Re-express a coordinate of ``src_shape`` as the coordinate of the same index in ``dst_shape``.

    ``crd2crd((1,4), (4,6), 24) == 17``; ``crd2crd(17, 24, (4,6)) == (1,4)``.
    """
    if product(src_shape) != product(dst_shape):
        raise LayoutError(f"crd2crd: sizes differ, {format_int_tuple(src_shape)} has {product(src_shape)} elements, "
                          f"{format_int_tuple(dst_shape)} has {product(dst_shape)}")
    return idx2crd(crd2idx(crd, src_shape), dst_shape)


# --------------------------------------------------------------------------- printing


def format_int_tuple(a) -> str:
    """CuTe's printing of an IntTuple: no spaces, ``((4,8,4),(2,2,8))``; 1-tuples keep their parentheses."""
    if is_tuple(a):
        return "(" + ",".join(format_int_tuple(e) for e in a) + ")"
    return str(a)


def _gcd(a, b):
    return math.gcd(a, b)


# --------------------------------------------------------------------------- tree helpers
# The walks every nested-tuple function of the package needs, written once.  A node is a tuple (or a list,
# as users write coordinates); anything else -- an int, a ScaledBasis, None (CuTe's ``_``) -- is a leaf.

__all__ += ["leaves", "leaf_paths", "zip_leaves", "transform_leaf", "zip_profile", "none_to_zero", "format_tree"]


def _is_node(t) -> bool:
    return isinstance(t, (tuple, list))


def leaves(t) -> tuple:
    """All leaves of ``t`` in order (depth first), as a flat tuple; a leaf alone gives a 1-tuple.

    >>> leaves((4,(2,(3,None)))), leaves(7), leaves(())
    ((4, 2, 3, None), (7,), ())
    """
    if not _is_node(t):
        return (t,)
    return tuple(x for e in t for x in leaves(e))


def leaf_paths(t) -> tuple:
    """The index path of every leaf of ``t``, in the order of :func:`leaves` (``t[i][j]`` has path ``(i, j)``).

    >>> leaf_paths((4,(2,3)))
    ((0,), (1, 0), (1, 1))
    """
    if not _is_node(t):
        return ((),)
    return tuple((i,) + p for i, e in enumerate(t) for p in leaf_paths(e))


def _not_congruent(op, trees):
    return LayoutError(f"{op}: {' and '.join(format_tree(x) for x in trees)} are not congruent "
                       f"(they need the same nesting, e.g. (4,(2,3)) and (1,(4,8)))")


def zip_leaves(*ts) -> tuple:
    """The leaves of congruent trees side by side: one tuple ``(leaf_of_t0, leaf_of_t1, ...)`` per position.

    Trees of different nesting raise a :class:`LayoutError`.

    >>> zip_leaves((4,(2,3)), (1,(4,8)))
    ((4, 1), (2, 4), (3, 8))
    """
    if not all(_is_node(t) == _is_node(ts[0]) for t in ts):
        raise _not_congruent("zip_leaves", ts)
    if not _is_node(ts[0]):
        return (tuple(ts),)
    if any(len(t) != len(ts[0]) for t in ts):
        raise _not_congruent("zip_leaves", ts)
    return tuple(x for es in zip(*ts) for x in zip_leaves(*es))


def transform_leaf(t, f):
    """``t`` with every leaf ``x`` replaced by ``f(x)``, keeping the nesting (lists become tuples).

    >>> transform_leaf((4,(2,3)), lambda x: x + 1)
    (5, (3, 4))
    """
    if _is_node(t):
        return tuple(transform_leaf(e, f) for e in t)
    return f(t)


def zip_profile(profile, t) -> tuple:
    """Walk ``t`` along a coarser ``profile`` (weakly congruent, like a coordinate with a shape): one pair
    ``(leaf_of_profile, subtree_of_t)`` per leaf of ``profile``; a leaf may stand for a whole sub-tuple of ``t``.

    Where ``t`` does not refine ``profile`` (a node of ``profile`` meets a leaf or a node of another length),
    a :class:`LayoutError` is raised.

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
    """``c`` with every ``None`` (CuTe's ``_``) replaced by 0: the origin of the slice ``c`` describes.

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
        return "(" + ",".join(format_tree(e) for e in t) + ")"
    return "_" if t is None else str(t)
