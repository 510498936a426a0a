"""The CuTe layout algebra (``cute/layout.hpp``), in one file as pycute's ``layout.py``: coalesce, filter,
composition and the LayoutWrapper protocol; the complement, the inverses and the nullspace; the divides and
products, tile_to_shape, common vectors and recasts, built from composition and the complement. Where CuTe checks
only weakly and returns a wrong layout, we check exact admissibility and raise a LayoutError; inputs for which
CuTe's algorithm gives no valid result are refused. Basis strides are treated per coordinate mode, as in the DSL.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from functools import lru_cache, wraps
from math import gcd

from ..errors import LayoutError
from .basis import is_int, ScaledBasis
from .inttuple import (ceil_div, _ceil_div_modes, format_int_tuple, is_tuple, leaves, prefix_product, product,
                       product_each, signum, transform_leaf, unflatten, zip_leaves)
from .basis_paths import basis_paths as _basis_paths, by_basis_path as _by_basis_path
from .layout import cosize, Layout, make_identity_layout, make_layout, make_ordered_layout

__all__ = ["LayoutWrapper", "coalesce", "filter", "filter_zeros", "composition", "complement", "right_inverse",
           "left_inverse", "is_injective", "nullspace", "logical_divide", "zipped_divide", "tiled_divide",
           "flat_divide", "logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product",
           "raked_product", "tile_to_shape", "max_common_layout", "max_common_vector", "upcast", "downcast",
           "recast_layout"]


class LayoutWrapper(ABC):
    """The protocol of objects holding a layout (``ComposedLayout``, ``Tensor``): the ``cute.*`` algebra acts on
    ``_algebra_layout()``, rebuilds with ``_with_layout(result)``; ``recast_layout`` calls ``_recast_layout``.

    >>> from layoutlab import ComposedLayout, Swizzle
    >>> isinstance(ComposedLayout(Swizzle(3,4,3), 0, Layout((8,64),(64,1))), LayoutWrapper)
    True
    """

    __slots__ = ()

    @abstractmethod
    def _algebra_layout(self) -> Layout:
        """The layout the algebra operates on."""

    @abstractmethod
    def _with_layout(self, layout):
        """The same object around ``layout``."""

    shape = property(lambda self: self._algebra_layout().shape)

    def size(self, mode=()) -> int:
        return self._algebra_layout().size(mode)

    def rank(self, mode=()) -> int:
        return self._algebra_layout().rank(mode)

    def _recast_layout(self, new_type_bits: int, old_type_bits: int):
        return self._with_layout(recast_layout(new_type_bits, old_type_bits, self._algebra_layout()))


def _wrapped(fn):
    """Let ``fn(layout, *args)`` accept a LayoutWrapper: act on its layout, rebuild it (the divides and products)."""

    @wraps(fn)
    def op(layout, *args, **kw):
        if isinstance(layout, LayoutWrapper):
            return layout._with_layout(op(layout._algebra_layout(), *args, **kw))
        return fn(layout, *args, **kw)

    return op


_mk = Layout._new  # an algebra result is built unchecked: our own output is well-formed


def _mk_flat(shapes, strides) -> Layout:
    """The layout of the flat modes ``shapes:strides``; a single mode is integer-shaped."""
    return _mk(shapes[0], strides[0]) if len(shapes) == 1 else _mk(tuple(shapes), tuple(strides))


def _flat(layout: Layout):
    return leaves(layout.shape), leaves(layout.stride)


def _need_layout(x, op, what):
    if not isinstance(x, Layout):
        raise LayoutError(f"{op}: {what} must be a Layout, got {type(x).__name__} {x!r}")


def _transform_layout(layout: Layout, tiler: tuple, fn, op: str, keep_rest: bool = True) -> Layout:
    """Apply ``fn(mode_i, tiler_i)`` to the first ``len(tiler)`` modes; keep (or drop) the remaining modes."""
    modes = list(layout)
    if len(tiler) > len(modes):
        raise LayoutError(f"{op}: the tiler has {len(tiler)} modes but the layout {layout} has only {len(modes)}; "
                          f"give at most one tiler entry per mode")
    return make_layout([fn(m, t) for m, t in zip(modes, tiler)] + (modes[len(tiler):] if keep_rest else []))


@lru_cache(maxsize=4096)
def _coalesce(layout: Layout, extend: bool = False) -> Layout:
    """CuTe's backward coalesce of the flat modes; ``extend`` keeps the function past its domain too."""
    shapes, strides = _flat(layout)
    if not shapes:  # the empty layout ():() stays empty, as in the DSL; extended, it is the zero function 1:0
        return _mk(1, 0) if extend else _mk((), ())
    rs, rd = [2 if extend and shapes[-1] == 1 else shapes[-1]], [strides[-1]]
    for s, d in zip(reversed(shapes[:-1]), reversed(strides[:-1])):
        if s == 1:
            continue
        if rs[0] == 1:
            rs[0], rd[0] = s, d
        elif s * d == rd[0]:
            rs[0], rd[0] = s * rs[0], d
        else:
            rs.insert(0, s)
            rd.insert(0, d)
    return _mk(1, 0) if rs == [1] else _mk_flat(rs, rd)


def coalesce(layout, target_profile=None):
    """The same function on the domain, simplified: merge modes ``s0:d0, s1:d1`` with ``d1 == s0*d0``, drop size-1
    modes (depth <= 1; all size 1: ``1:0``).  A tuple ``target_profile`` coalesces each top-level mode (same rank).

    >>> coalesce(Layout(((2,4),(3,2)), ((1,2),(8,24))), target_profile=(1,1))
    (8,6):(1,8)
    >>> coalesce(Layout((2,(1,6)), (1,(6,2))))
    12:1
    """
    if isinstance(layout, LayoutWrapper):
        return layout._with_layout(coalesce(layout._algebra_layout(), target_profile))
    _need_layout(layout, "coalesce", "the argument")
    if is_tuple(target_profile):
        return _transform_layout(layout, target_profile, coalesce, "coalesce")
    return _coalesce(layout)


def filter_zeros(layout: Layout, target_profile=None) -> Layout:
    """Replace the shape of every stride-0 mode by 1 (the layout keeps its rank and strides).

    >>> filter_zeros(Layout((4,6),(0,1)))
    (1,6):(0,1)
    """
    _need_layout(layout, "filter_zeros", "the argument")
    guide = layout.stride if target_profile is None else target_profile
    try:
        pairs = zip_leaves(guide, layout.shape)
    except LayoutError:
        raise LayoutError(f"filter_zeros: target_profile {format_int_tuple(guide)} is not congruent with "
                          f"{layout}") from None
    return _mk(unflatten(tuple(1 if g == 0 else s for g, s in pairs), layout.shape), layout.stride)


def filter(layout: Layout, target_profile=None) -> Layout:  # noqa: A001 - CuTe's name
    """Remove all stride-0 and size-1 modes and coalesce (else ``1:0``); a tuple ``target_profile``: mode by mode.

    >>> filter(Layout((4,1,6),(0,3,1)))
    6:1
    """
    _need_layout(layout, "filter", "the argument")
    if is_tuple(target_profile):
        return _transform_layout(layout, target_profile, filter, "filter")
    return coalesce(filter_zeros(layout))


def _basis_get(path, x):
    """The entry of the nested tuple ``x`` at a basis stride's ``path`` (outermost mode first)."""
    for m in path:
        if not is_tuple(x):
            if m == 0:
                continue
            raise LayoutError(f"composition: a basis stride selects mode {m} of the integer shape {x}")
        x = x[m]
    return x


def _has_basis(stride) -> bool:
    return any(isinstance(d, ScaledBasis) for d in leaves(stride))


@lru_cache(maxsize=8192)
def _compose_layouts(lhs: Layout, rhs: Layout) -> Layout:
    """``lhs o rhs`` for Layouts: CuTe's composition_impl on the coalesced ``lhs``, checked exactly: ``usage[key, i]``
    sums the coordinates the rhs modes reach in lhs mode ``i``; composing mode by mode is exact only if it fits."""
    usage, parts = Counter(), {}

    def compose(ls, ld, rs, rd, key=()):
        if is_tuple(rs):  # right-distributivity over the modes of rhs
            return make_layout([compose(ls, ld, s, d, key) for s, d in zip(rs, rd)])
        if isinstance(rd, ScaledBasis):  # the (nested) mode of lhs the path selects, coalesced on its own
            part = parts[rd.mode] = _coalesce(_mk(_basis_get(rd.mode, lhs.shape), _basis_get(rd.mode, lhs.stride)),
                                              True)
            return compose(part.shape, part.stride, rs, rd.value, key + rd.mode)
        if rd == 0:
            return _mk(rs, 0)
        if not is_tuple(ls):
            return _mk(rs, rd * ld)

        def indivisible(kind, what, valid):
            return LayoutError(f"composition: {kind} divisibility fails for {lhs} o {rhs}: {what} (A coalesced: "
                               f"{Layout(ls, ld)}); {valid}")

        result_shape, result_stride = [], []
        for i, curr_shape in enumerate(ls[:-1]):
            a = abs(rd)
            next_shape = ceil_div(curr_shape, a)
            if rs != 1:
                if a >= curr_shape and a % curr_shape != 0:
                    raise indivisible("stride", f"B's remaining stride {a} steps over A's mode of shape {curr_shape} "
                                      f"but is not a multiple of it", f"an admissible stride skips whole modes "
                                      f"({curr_shape} must divide {a}) or stays inside one")
                if 1 < next_shape < rs:  # B needs more than fits in this mode: it must be made of whole pieces
                    if curr_shape % a != 0:
                        raise indivisible("stride", f"B's remaining stride {a} does not divide A's mode shape "
                                          f"{curr_shape}, yet B needs {rs} elements, more than the {next_shape} that "
                                          f"fit in that mode", "admissible strides divide the modes they run across")
                    if rs % next_shape != 0:
                        raise indivisible("shape", f"B needs {rs} elements but A's mode {curr_shape} (at stride {a}) "
                                          f"holds {next_shape}, which does not divide {rs}",
                                          "admissible shapes are made of whole pieces of A's modes")
                take = min(next_shape, rs)
                if take != 1:
                    usage[key, i] += (take - 1) * a
                    result_shape.append(take)
                    result_stride.append(rd * ld[i])
                    rs //= take
            rd = ceil_div(a, curr_shape) * signum(rd)
        if rs != 1 or not result_shape:
            result_shape.append(rs)
            result_stride.append(rd * ld[-1])
        return _mk_flat(result_shape, result_stride)

    if _has_basis(rhs.stride) and is_tuple(lhs.shape):
        # rhs selects modes of lhs through basis strides: keep lhs's top-level modes apart.
        flat = make_layout([_coalesce(m, True) for m in lhs])
    else:
        flat = _coalesce(lhs, True)
    result = compose(flat.shape, flat.stride, rhs.shape, rhs.stride)
    for (key, i), reach in usage.items():
        mode_shape = (parts[key] if key else flat).shape[i]
        if reach >= mode_shape:
            raise LayoutError(
                f"composition: {lhs} o {rhs} is not a layout: B's modes together reach coordinate {reach} of A's "
                f"mode {i} (shape {mode_shape}, A coalesced: {flat}), so sums of B's offsets carry into the next mode "
                f"and A is not linear on B's image; admissible B's modes fit side by side inside A's modes"
            )
    return result


def composition(lhs, rhs):
    """Functional composition ``R = lhs o rhs``: ``R(c) = lhs(rhs(c))`` for every coordinate ``c`` of ``rhs``, which is
    a Layout, an integer ``n`` (``make_layout(n)``), a tuple tiler (mode by mode; ``None`` keeps a mode, the modes
    beyond it are dropped) or ``None``.  Admissible (checked exactly) when, along ``lhs``'s coalesced modes, each
    stride of ``rhs`` divides out whole modes and each shape of ``rhs`` is made of whole pieces of them.

    >>> composition(Layout((6,2), (8,2)), Layout((4,3), (3,1)))
    ((2,2),3):((24,2),8)
    """
    if isinstance(lhs, LayoutWrapper):
        return lhs._with_layout(composition(lhs._algebra_layout(), rhs))
    _need_layout(lhs, "composition", "the left operand")
    if rhs is None:
        return lhs
    if isinstance(rhs, Layout):
        return _compose_layouts(lhs, rhs)
    if is_int(rhs):
        if rhs <= 0:
            raise LayoutError(f"composition: integer tiler {rhs} must be positive")
        return _compose_layouts(lhs, _mk(int(rhs), 1 if rhs > 1 else 0))
    if isinstance(rhs, (tuple, list)):
        return _transform_layout(lhs, tuple(rhs), composition, "composition", keep_rest=False)  # () gives ():()
    if isinstance(rhs, LayoutWrapper):
        raise LayoutError(
            f"composition: the right operand {rhs} is a {type(rhs).__name__}; a swizzled right operand is not a "
            f"layout we can compose into (the CuTe DSL refuses it too); compose with its outer layout and apply the "
            f"swizzle afterwards"
        )
    raise LayoutError(f"composition: cannot compose with {type(rhs).__name__} {rhs!r}; use a Layout, int, tuple or "
                      f"None")


def _collision(shapes, strides):
    """Two flat indices that map to the same offset, or None (also None past 2^18 elements: unknown)."""
    if product(shapes) > 1 << 18:
        return None
    offsets = [0]
    for s, d in zip(shapes, strides):
        offsets = [o + k * d for k in range(s) for o in offsets]
    first = {}
    for i, o in enumerate(offsets):
        if first.setdefault(o, i) != i:
            return first[o], i, o
    return None


def _refuse(op, layout, shapes, strides, need, otherwise):
    """Raise the LayoutError naming two indices that collide, or (for an injective layout) ``otherwise``."""
    hit = _collision(shapes, strides)
    if hit:
        i, j, o = hit
        raise LayoutError(f"{op}: {layout} is not injective: indices {i} and {j} both map to offset {o}; {need}")
    raise LayoutError(otherwise)


def _complement_int(shapes, strides, cotarget, layout, checked=True):
    """CuTe's complement of the filtered integer modes ``shapes:strides``; returns (result, span of the modes).
    A rounded-down gap ``floor(d_k / r_k) : r_k`` leaves holes, so the last mode ``ceil(M / r_n)`` can fall short of
    the cotarget (``(5,5):(2,11)``, ``M = 55``): then CuTe's post-conditions (complement.cpp) are checked."""
    if len(shapes) == 1 and strides[0] == 0:
        return coalesce(_mk(product(cotarget), 1)), 1
    for d in strides:
        if d < 0:
            raise LayoutError(f"complement: {layout} has a negative stride {d}; complement is defined for positive "
                              f"strides only")
    result_shape, result_stride = [], [1]
    for d, s in sorted(zip(strides, shapes)):  # equal strides collide, so their order does not matter
        if d < result_stride[-1]:
            _refuse("complement", layout, shapes, strides, "complement needs an injective layout",
                    f"complement: the modes of {layout} do not nest: sorted by stride, the mode {s}:{d} starts at "
                    f"{d}, inside the span {result_stride[-1]} of the smaller modes; CuTe's complement needs every "
                    f"stride to be at least the span (shape x stride) of the mode below it (the layout is injective, "
                    f"but CuTe asserts here and the CuTe DSL returns a shape containing 0)")
        result_shape.append(d // result_stride[-1])
        result_stride.append(d * s)
    result_shape.append(product(_ceil_div_modes(cotarget, result_stride[-1])))
    result = _mk(tuple(result_shape), tuple(result_stride))
    if checked and any(d % r for d, r in zip(sorted(strides), result_stride)):
        _check_rounded_complement(_mk(tuple(shapes), tuple(strides)), result, cotarget, layout)
    return coalesce(result), result_stride[-1]


def _check_rounded_complement(flat, result, cotarget, layout):
    """CuTe's post-conditions (complement.cpp) on a rounded complement: (layout, complement) reaches the cotarget
    and the complement has at least ``M / size(layout)`` elements (not its cosize bound: exact ones break it too)."""
    m, fewest = product(cotarget), product(cotarget) // flat.size()
    reach = cosize(flat) + cosize(result) - 1
    broken = [f"(layout, complement) reaches only offset {reach - 1}, short of the cotarget {m}"] if reach < m else []
    if result.size() < fewest or cosize(result) < fewest:
        broken.append(f"the complement has fewer than {fewest} elements")
    if broken:
        raise LayoutError(
            f"complement: CuTe's complement of {layout} with cotarget {format_int_tuple(cotarget)} rounds a gap down "
            f"(a stride is not a multiple of the span below it), and its result {coalesce(result)} breaks CuTe's own "
            f"post-condition: {'; '.join(broken)}. The CuTe DSL returns it anyway; give strides that are multiples of "
            f"the spans below them, or a cotarget the rounded complement reaches"
        )


def _complement_basis(layout, cotarget):
    """The DSL's complement of a basis-strided layout: per coordinate mode ``i``, the ``k@i`` modes against cotarget
    mode ``i`` (a mode no stride reaches is the whole cotarget mode)."""
    shapes, strides = _flat(layout)

    def leaf(ks, target_i):
        ks = [k for k in ks if shapes[k] != 1]
        if not ks:
            return _mk(product(target_i), 1)
        part, span = _complement_int([shapes[k] for k in ks], [strides[k].value for k in ks],
                                     product(target_i), layout)  # the DSL takes a coordinate mode's size
        return _mk(1, span) if part.size() == 1 else part  # the DSL keeps the span as the stride of an empty one

    return _by_basis_path(_basis_paths(strides, layout, "complement"), leaf, layout, "complement", cotarget, True)


@lru_cache(maxsize=4096)
def _complement(layout: Layout, cotarget, checked: bool = True) -> Layout:
    """``checked=False`` (for products, whose tiler extends the last mode) skips the rounded-complement checks."""
    if _has_basis(layout.stride):
        return _complement_basis(layout, cotarget)
    return _complement_int(*_flat(filter(layout)), cotarget, layout, checked)[0]


def complement(layout: Layout, cotarget=None) -> Layout:
    """The layout of the offsets *not* hit by ``layout``, ordered and disjoint from it, up to ``cotarget``: modes
    sorted by stride give ``(d_0/1, d_1/(s_0 d_0), ..., ceil(M/(s_k d_k))) : (1, s_0 d_0, ..., s_k d_k)`` (CuTe's),
    coalesced, reaching ``M = size(cotarget)`` (default ``cosize``).  Admissible when every stride is at least the
    span of the modes below it.

    >>> complement(Layout((2,2), (1,6)), 24)
    (3,2):(2,12)
    """
    _need_layout(layout, "complement", "the argument")
    if cotarget is None:
        cotarget = 1 if _has_basis(layout.stride) else cosize(filter(layout))
    elif isinstance(cotarget, (Layout, list)):
        cotarget = cotarget.shape if isinstance(cotarget, Layout) else tuple(cotarget)
    return _complement(layout, cotarget)


def is_injective(layout: Layout) -> bool:
    """True when distinct coordinates map to distinct offsets (checked on the full table).

    >>> is_injective(Layout((4,6),(6,1))), is_injective(Layout((2,2),(1,1)))
    (True, False)
    """
    if layout.size() > 1 << 18:
        t = layout.table()
        return len(__import__("numpy").unique(t)) == t.size
    return _collision(*_flat(layout)) is None


def _right_inverse_flat(shapes, strides, pre, layout) -> Layout:
    """Follow the stride chain ``1, s*d, ...``: each mode found continues the contiguous run."""
    rs, rd, curr = [1], [0], 1
    for d, p, s in sorted(zip(strides, pre, shapes)):  # pre rises with the index
        if d == curr:
            rs.append(s)
            rd.append(p)
            curr = s * d
    return coalesce(_mk(tuple(rs), tuple(rd)))


def _left_inverse_flat(shapes, strides, pre, layout) -> Layout:
    """Read the offset back digit by digit in the mixed radix of the sorted strides (zero strides ignored)."""
    if any(d < 0 for d in strides):
        raise LayoutError(
            f"left_inverse: {layout} has a negative stride; left_inverse needs non-negative strides (the CuTe DSL "
            f"refuses them too)"
        )
    modes = [m for m in sorted(zip(strides, pre, shapes)) if m[0] != 0]  # (d, p, s); pre rises with the index
    if not modes:
        return _mk(1, 0)
    rs, rd = [], [0]
    covered, extent = 1, 1  # covered: the stride of the mode below; extent: span of the modes so far
    for d, p, s in modes:
        if d < extent:
            _refuse("left_inverse", layout, shapes, strides, "only an injective layout has a left inverse",
                    f"left_inverse: {layout} is injective, but its modes interleave: sorted by stride, the mode "
                    f"{s}:{d} starts inside the span {extent} of the smaller modes, so an offset cannot be read back "
                    f"digit by digit (CuTe's construction; the CuTe DSL refuses it too). A left inverse may still "
                    f"exist (for (2,2):(2,3) it is (2,3):(1,1)); give a layout whose modes nest (each stride >= the "
                    f"span below)")
        if d % covered != 0:
            raise LayoutError(
                f"left_inverse: stride {d} of {layout} is not a multiple of {covered}, the stride of the mode below "
                f"it; the offsets in between cannot be read back by a layout"
            )
        rs.append(d // covered)
        rd.append(p)
        covered, extent = d, d * s
    rs.append(modes[-1][2])
    return coalesce(_mk(tuple(rs), tuple(rd)))


def _inverse(layout: Layout, flat_inverse, op) -> Layout:
    """``flat_inverse`` of the coalesced modes; basis-strided: one per coordinate mode (of the ``k@i`` modes)."""
    _need_layout(layout, op, "the argument")
    if not _has_basis(layout.stride):
        shapes, strides = _flat(coalesce(layout))
        return flat_inverse(shapes, strides, prefix_product(shapes), layout)
    shapes, strides = _flat(layout)  # the DSL nests the answer as all the paths do, size-1 modes' paths too
    pre = prefix_product(shapes)

    def leaf(ks, _):
        ks = [k for k in ks if shapes[k] != 1]
        return flat_inverse([shapes[k] for k in ks], [strides[k].value for k in ks], [pre[k] for k in ks],
                            layout) if ks else _mk(1, 0)

    return _by_basis_path(_basis_paths(strides, layout, op), leaf, layout, op)


def right_inverse(layout: Layout) -> Layout:
    """The largest ``R`` with ``layout(R(i)) == i`` for all ``i < size(R)``: the stride chain ``1, s*d, ...``.

    >>> right_inverse(Layout((4,8),(8,1))), right_inverse(Layout(4,2))
    ((8,4):(4,1), 1:0)
    """
    return _inverse(layout, _right_inverse_flat, "right_inverse")


def left_inverse(layout: Layout) -> Layout:
    """A layout ``L`` with ``L(layout(i)) == i`` for all ``i < size(layout)``: the offset's digits in the mixed radix
    of the modes sorted by stride (stride 0 ignored), ``(d_0, d_1/d_0, ..., s_last)``; admissible when the modes nest
    (``d_{k+1} >= s_k d_k``) and ``d_k`` divides ``d_{k+1}``.

    >>> left_inverse(Layout((4,6),(6,1)))
    (6,4):(4,1)
    """
    return _inverse(layout, _left_inverse_flat, "left_inverse")


def nullspace(layout: Layout) -> Layout:
    """The (flat) coordinates mapped to offset 0: the stride-0 modes with their index strides (else ``1:0``).

    >>> nullspace(Layout((4,3,2),(0,1,0)))
    (4,2):(1,12)
    """
    _need_layout(layout, "nullspace", "the argument")
    shapes, strides = _flat(layout)
    zero = [(s, p) for s, d, p in zip(shapes, strides, prefix_product(shapes)) if d == 0]
    return _mk_flat(*zip(*zero)) if zero else _mk(1, 0)


def _by_mode(public, layout: Layout, tiler, what: str, fn) -> Layout:
    """``fn(layout, tiler)`` for a Layout or integer tiler (``n:1``); ``None`` keeps it; a tuple: mode by mode."""
    op = public.__name__
    _need_layout(layout, op, what)
    if tiler is None:
        return layout
    if is_int(tiler) and layout.rank():
        return fn(layout, _mk(int(tiler), 1 if tiler > 1 else 0))
    if isinstance(tiler, (tuple, list)) or is_int(tiler):  # an int tiles mode 0, which ():() lacks (as the DSL says)
        return _transform_layout(layout, (tiler,) if is_int(tiler) else tuple(tiler), public, op)
    _need_layout(tiler, op, "the tiler")
    return fn(layout, tiler)


def _unpack(z: Layout, tile_too: bool = False) -> Layout:
    """``(tile, rest)`` with the rest modes (and, with ``tile_too``, the tile modes) unpacked to the top level."""
    return make_layout([*(z[0] if tile_too else [z[0]]), *z[1]])


def _divide_cotarget(layout: Layout, tiler: Layout):
    """A tiler of coordinates (basis strides, e.g. an identity layout) divides by ``shape(layout)``, mode by mode, as
    the DSL does; an offset tiler by the size (the coalesced shape, whose product it is)."""
    return layout.shape if _has_basis(tiler.stride) else coalesce(layout).shape


def _identity_as_shape(tiler):
    """The DSL divides by an identity layout as by its shape, zipped (a size-1 mode gets stride 0)."""
    if isinstance(tiler, Layout) and is_tuple(tiler.shape) and tiler == make_identity_layout(tiler.shape):
        return tiler.shape
    return tiler


@_wrapped
def logical_divide(layout: Layout, tiler) -> Layout:
    """Split ``layout`` into (tile, rest): ``composition(layout, make_layout(tiler, complement(tiler, size)))``; a
    tuple tiler divides mode by mode (``None`` keeps a mode, as do trailing modes), an integer ``n`` is ``n:1``.

    >>> logical_divide(Layout((9,(4,8)), (59,(13,1))), (Layout(3,3), Layout((2,4),(1,8))))
    ((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))
    """
    if _identity_as_shape(tiler) is not tiler:  # (tile, rest) as for any Layout tiler, the strides of the shape's
        return zipped_divide(layout, tiler)      # divide (the DSL's: a size-1 mode gets stride 0)
    return _by_mode(logical_divide, layout, tiler, "the layout",
                    lambda L, T: composition(L, make_layout(T, complement(T, _divide_cotarget(L, T)))))


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
    tiler = _identity_as_shape(tiler)
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
