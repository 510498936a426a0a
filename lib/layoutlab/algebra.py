"""The CuTe layout algebra: coalesce, composition, complement, inverses, divides and products.

Every operation follows CuTe's definitions (``cute/layout.hpp``, as the CuTe DSL evaluates them) so that
results print identically to ``cutlass.cute``.  Where CuTe only checks a *weak* condition and silently
returns a layout that is not the mathematical result, we check the exact admissibility condition and
raise :class:`~layoutlab.errors.LayoutError` saying which rule failed.
"""

from __future__ import annotations

from functools import lru_cache
from math import gcd

from .errors import LayoutError
from .inttuple import (
    ScaledBasis,
    _ceil_div_modes,
    ceil_div,
    flatten as _flatten,
    format_int_tuple,
    is_int,
    is_tuple,
    product,
    product_each,
    signum,
)
from .layout import Layout, append, make_layout, make_ordered_layout, zip_layouts

__all__ = [
    "coalesce",
    "filter",
    "filter_zeros",
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
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
    "nullspace",
    "upcast",
    "downcast",
    "recast_layout",
    "is_injective",
]


def _modes(layout: Layout):
    """Top-level modes as Layouts (a rank-1 integer layout is its own single mode)."""
    if is_tuple(layout.shape):
        return [Layout(s, d) for s, d in zip(layout.shape, layout.stride)]
    return [layout]


def _flat(layout: Layout):
    if is_tuple(layout.shape):
        return list(_flatten(layout.shape)), list(_flatten(layout.stride))
    return [layout.shape], [layout.stride]


def _need_layout(x, op, what):
    if not isinstance(x, Layout):
        raise LayoutError(f"{op}: {what} must be a Layout, got {type(x).__name__} {x!r}")


def _transform_layout(layout: Layout, tiler: tuple, fn, op: str, keep_rest: bool = True) -> Layout:
    """Apply ``fn(mode_i, tiler_i)`` to the first ``len(tiler)`` modes; keep (or drop) the remaining modes."""
    modes = _modes(layout)
    if len(tiler) > len(modes):
        raise LayoutError(
            f"{op}: the tiler has {len(tiler)} modes but the layout {layout} has only {len(modes)}; "
            f"give at most one tiler entry per mode"
        )
    out = [fn(m, t) for m, t in zip(modes, tiler)]
    if keep_rest:
        out += modes[len(tiler):]
    return make_layout(*out)


# --------------------------------------------------------------------------- coalesce / filter


def _bw_coalesce(shapes, strides, new_shape, new_stride):
    """CuTe's backward coalesce over flat modes ``shapes[:-1]`` with the last mode already in ``new_*``."""
    rs, rd = [new_shape], [new_stride]
    for s, d in zip(reversed(shapes), reversed(strides)):
        if s == 1:
            continue
        if rs[0] == 1:
            rs[0], rd[0] = s, d
        elif s * d == rd[0]:
            rs[0], rd[0] = s * rs[0], d
        else:
            rs.insert(0, s)
            rd.insert(0, d)
    if len(rs) == 1:
        return Layout(1, 0) if rs[0] == 1 else Layout(rs[0], rd[0])
    return Layout(tuple(rs), tuple(rd))


@lru_cache(maxsize=4096)
def _coalesce(layout: Layout) -> Layout:
    shapes, strides = _flat(layout)
    return _bw_coalesce(shapes[:-1], strides[:-1], shapes[-1], strides[-1])


def coalesce(layout: Layout, target_profile=None) -> Layout:
    """Simplify a layout without changing it as a function on its domain: merge modes ``s0:d0, s1:d1``
    with ``d1 == s0*d0`` and drop size-1 modes.  Result has depth <= 1; all-size-1 gives ``1:0``.

    With ``target_profile`` (a tuple), coalesce each top-level mode separately, keeping the rank:
    >>> coalesce(Layout(((2,4),(3,2)), ((1,2),(8,24))), target_profile=(1,1))
    (8,6):(1,8)
    >>> coalesce(Layout((2,(1,6)), (1,(6,2))))
    12:1
    """
    _need_layout(layout, "coalesce", "the argument")
    if target_profile is not None and is_tuple(target_profile):
        return _transform_layout(layout, target_profile, lambda m, t: coalesce(m, t), "coalesce")
    return _coalesce(layout)


def _coalesce_x(layout: Layout) -> Layout:
    """Coalesce that also preserves the layout *outside* its domain (the last mode extends forever)."""
    shapes, strides = _flat(layout)
    last = 2 if shapes[-1] == 1 else shapes[-1]  # keep a trailing size-1 mode's stride as the extension
    return _bw_coalesce(shapes[:-1], strides[:-1], last, strides[-1])


def filter_zeros(layout: Layout, target_profile=None) -> Layout:
    """Replace the shape of every stride-0 mode by 1 (the layout keeps its rank and strides).

    >>> filter_zeros(Layout((4,6),(0,1)))
    (1,6):(0,1)
    """
    _need_layout(layout, "filter_zeros", "the argument")
    guide = layout.stride if target_profile is None else target_profile

    def go(g, s):
        if is_tuple(s):
            if not is_tuple(g) or len(g) != len(s):
                raise LayoutError(f"filter_zeros: target_profile {format_int_tuple(g)} is not congruent with {layout}")
            return tuple(go(gi, si) for gi, si in zip(g, s))
        return 1 if g == 0 else s

    return Layout(go(guide, layout.shape), layout.stride)


def filter(layout: Layout, target_profile=None) -> Layout:  # noqa: A001 - CuTe's name
    """Remove all stride-0 and size-1 modes and coalesce.

    The result is ``1:0`` when nothing is left.  With a tuple ``target_profile``, filter mode by mode.

    >>> filter(Layout((4,1,6),(0,3,1)))
    6:1
    """
    _need_layout(layout, "filter", "the argument")
    if target_profile is not None and is_tuple(target_profile):
        return _transform_layout(layout, target_profile, lambda m, t: filter(m, t), "filter")
    return coalesce(filter_zeros(layout))


# --------------------------------------------------------------------------- composition


def _basis_get(d: ScaledBasis, x):
    for m in reversed(d.modes):  # modes are printed innermost first: 1@1@0 is sub-mode 1 of mode 0
        if not is_tuple(x):
            if m == 0:
                continue
            raise LayoutError(f"composition: basis stride {d} selects mode {m} of an integer shape")
        x = x[m]
    return x


def _composition_impl(ls, ld, rs, rd, lhs, rhs, usage, key=()):
    """``lhs o rhs`` for a coalesced ``lhs = ls:ld`` and ``rhs = rs:rd`` (CuTe's composition_impl).

    ``usage[(key, i)]`` accumulates the largest coordinate that the rhs modes reach inside lhs mode ``i``;
    right-distributivity (composing mode by mode) is exact only if their sum stays inside the mode.
    """
    if is_tuple(rs):  # right-distributivity over the modes of rhs
        parts = [_composition_impl(ls, ld, s, d, lhs, rhs, usage, key) for s, d in zip(rs, rd)]
        return make_layout(*parts)
    if isinstance(rd, ScaledBasis):
        return _composition_impl(_basis_get(rd, ls), _basis_get(rd, ld), rs, rd.value, lhs, rhs, usage,
                                 key + rd.modes)
    if rd == 0:
        return Layout(rs, 0)
    if rd < 0:
        raise LayoutError(f"composition: {rhs} has a negative stride {rd}; composition needs non-negative strides in B")
    if not is_tuple(ls):
        return Layout(rs, rd * ld)

    rest_shape, rest_stride = rs, rd
    result_shape, result_stride = [], []
    for i in range(len(ls) - 1):
        curr_shape, curr_stride = ls[i], ld[i]
        a = abs(rest_stride)
        next_shape = ceil_div(curr_shape, a)
        next_stride = ceil_div(a, curr_shape) * signum(rest_stride)
        if rest_shape == 1:
            rest_stride = next_stride
            continue
        if a >= curr_shape and a % curr_shape != 0:
            raise LayoutError(
                f"composition: stride divisibility fails for {lhs} o {rhs}: B's remaining stride {a} steps over A's "
                f"mode of shape {curr_shape} but is not a multiple of it (A coalesced: {Layout(ls, ld)}); an admissible "
                f"stride skips whole modes ({curr_shape} must divide {a}) or stays inside one"
            )
        if next_shape == 1:
            rest_stride = next_stride
            continue
        if next_shape >= rest_shape:
            # the remaining rest_shape elements all fit inside this mode: no divisibility needed
            usage[(key, i)] = usage.get((key, i), 0) + (rest_shape - 1) * a
            result_shape.append(rest_shape)
            result_stride.append(rest_stride * curr_stride)
            rest_shape = 1
            rest_stride = next_stride
            continue
        if curr_shape % a != 0:
            raise LayoutError(
                f"composition: stride divisibility fails for {lhs} o {rhs}: B's remaining stride {a} does not divide "
                f"A's mode shape {curr_shape}, yet B needs {rest_shape} elements, more than the {next_shape} that fit "
                f"in that mode (A coalesced: {Layout(ls, ld)}); admissible strides divide the modes they run across"
            )
        if rest_shape % next_shape != 0:
            raise LayoutError(
                f"composition: shape divisibility fails for {lhs} o {rhs}: B needs {rest_shape} elements but A's mode "
                f"{curr_shape} (at stride {a}) holds {next_shape}, which does not divide {rest_shape} "
                f"(A coalesced: {Layout(ls, ld)}); admissible shapes are made of whole pieces of A's modes"
            )
        usage[(key, i)] = usage.get((key, i), 0) + (next_shape - 1) * a
        result_shape.append(next_shape)
        result_stride.append(rest_stride * curr_stride)
        rest_shape //= next_shape
        rest_stride = next_stride
    if not result_shape:
        return Layout(rest_shape, rest_stride * ld[-1])
    if rest_shape == 1:
        if len(result_shape) == 1:
            return Layout(result_shape[0], result_stride[0])
        return Layout(tuple(result_shape), tuple(result_stride))
    return Layout(tuple(result_shape) + (rest_shape,), tuple(result_stride) + (rest_stride * ld[-1],))


def _coprofile_is_int(d) -> bool:
    if is_tuple(d):
        return all(_coprofile_is_int(e) for e in d)
    return not isinstance(d, ScaledBasis)


@lru_cache(maxsize=8192)
def _compose_layouts(lhs: Layout, rhs: Layout) -> Layout:
    if _coprofile_is_int(rhs.stride):
        flat = _coalesce_x(lhs)
    else:
        # rhs selects modes of lhs through basis strides: keep lhs's top-level modes apart.
        flat = make_layout(*[_coalesce_x(m) for m in _modes(lhs)]) if is_tuple(lhs.shape) else _coalesce_x(lhs)
    usage = {}
    result = _composition_impl(flat.shape, flat.stride, rhs.shape, rhs.stride, lhs, rhs, usage)
    for (key, i), reach in usage.items():
        mode_shape = _basis_get(ScaledBasis(1, key), flat.shape)[i] if key else flat.shape[i]
        if reach >= mode_shape:
            raise LayoutError(
                f"composition: {lhs} o {rhs} is not a layout: B's modes together reach coordinate {reach} of A's "
                f"mode {i} (shape {mode_shape}, A coalesced: {flat}), so sums of B's offsets carry into the next mode "
                f"and A is not linear on B's image; admissible B's modes fit side by side inside A's modes"
            )
    return result


def _composed(obj):
    """True for a swizzled ``ComposedLayout`` (layoutlab.swizzle), which carries its own algebra on the outer
    layout; the free functions dispatch to it so DSL-style code (``tile_to_shape(atom, ...)``) works."""
    return not isinstance(obj, Layout) and hasattr(obj, "inner") and hasattr(obj, "outer")


def composition(lhs: Layout, rhs) -> Layout:
    """Functional composition ``R = lhs o rhs``: ``R(c) = lhs(rhs(c))`` for every coordinate ``c`` of ``rhs``.

    ``rhs`` may be

    * a Layout: the result is compatible with (has the shape of) ``rhs``;
    * an integer ``n``: the first ``n`` elements of ``lhs`` (``rhs = make_layout(n)``, so ``1`` means ``1:0``);
    * a tuple tiler ``(t0, t1, ...)`` of Layouts / integers / ``None`` / nested tuples: compose mode by mode
      (``None`` keeps the mode); modes of ``lhs`` beyond the tiler are dropped, as in CuTe;
    * ``None``: ``lhs`` itself.

    Admissibility (checked exactly; CuTe checks only weakly): walking ``lhs``'s coalesced modes, each stride of
    ``rhs`` must divide out whole modes (``d % s == 0`` or ``s % d == 0``) and each shape of ``rhs`` must be made of
    whole pieces of those modes.  ``lhs`` extends beyond its size along its last mode.

    >>> composition(Layout((6,2), (8,2)), Layout((4,3), (3,1)))
    ((2,2),3):((24,2),8)
    """
    if _composed(lhs):
        return lhs.compose(rhs)
    _need_layout(lhs, "composition", "the left operand")
    if rhs is None:
        return lhs
    if isinstance(rhs, Layout):
        return _compose_layouts(lhs, rhs)
    if is_int(rhs):
        if rhs <= 0:
            raise LayoutError(f"composition: integer tiler {rhs} must be positive")
        return _compose_layouts(lhs, Layout(int(rhs)))
    if isinstance(rhs, (tuple, list)):
        return _transform_layout(lhs, tuple(rhs), composition, "composition", keep_rest=False)
    raise LayoutError(f"composition: cannot compose with {type(rhs).__name__} {rhs!r}; use a Layout, int, tuple or None")


# --------------------------------------------------------------------------- complement


def _complement_filtered(shapes, strides, cotarget, layout):
    if len(shapes) == 1 and strides[0] == 0:
        n = product(cotarget)
        return Layout(n) if n != 1 else Layout(1, 0)
    for d in strides:
        if isinstance(d, ScaledBasis):
            raise LayoutError(f"complement: {layout} has basis (coordinate) strides; complement needs integer strides")
        if d < 0:
            raise LayoutError(
                f"complement: {layout} has a negative stride {d}; complement is defined for positive strides only"
            )
    order = sorted(range(len(shapes)), key=lambda i: (strides[i], i))
    result_shape, result_stride = [], [1]
    inexact = None
    for i in order:
        d, s = strides[i], shapes[i]
        last = result_stride[-1]
        if d < last:
            raise LayoutError(
                f"complement: {layout} is not injective: its mode {s}:{d} overlaps the smaller modes, which already "
                f"span offsets up to {last}; complement needs an injective layout"
            )
        if d % last != 0 and inexact is None:
            inexact = (d, last)
        result_shape.append(d // last)  # CuTe's (floor) gap; verified below when inexact
        result_stride.append(d * s)
    new_stride = result_stride.pop()
    rest_shape = _ceil_div_modes(cotarget, new_stride)
    rest_shape = product(rest_shape) if is_tuple(rest_shape) else rest_shape
    result = coalesce(Layout(tuple(result_shape) + (rest_shape,), tuple(result_stride) + (new_stride,)))
    if inexact is not None and not _is_complement(Layout(tuple(shapes), tuple(strides)), result, cotarget):
        d, last = inexact
        raise LayoutError(
            f"complement: stride {d} of {layout} is not a multiple of {last} (the span of its smaller modes), so the "
            f"gap between them is not a layout mode and no ordered, disjoint complement covering "
            f"{format_int_tuple(cotarget)} exists"
        )
    return result


def _is_complement(a: Layout, r: Layout, cotarget) -> bool:
    """Check the complement post-conditions numerically: ordered, disjoint from ``a``, large enough."""
    import numpy as np

    if a.size() * r.size() > 1 << 22:
        return False
    t = r.table()
    if t.size > 1 and not np.all(np.diff(t) > 0):
        return False
    both = np.add.outer(t, a.table()).ravel()
    if np.unique(both).size != both.size:
        return False
    return r.size() * a.size() >= product(cotarget)


@lru_cache(maxsize=4096)
def _complement(layout: Layout, cotarget) -> Layout:
    f = filter(layout)
    shapes, strides = _flat(f)
    return _complement_filtered(shapes, strides, cotarget, layout)


def complement(layout: Layout, cotarget=None) -> Layout:
    """The layout of the offsets *not* hit by ``layout``, ordered and disjoint from it, up to ``cotarget``.

    Math: with ``layout`` filtered and its modes sorted by stride ``d_0 < d_1 < ...``, the complement has
    modes ``(d_0/1, d_1/(s_0 d_0), ..., ceil(M/(s_k d_k))) : (1, s_0 d_0, ..., s_k d_k)``, coalesced; so
    ``make_layout(layout, complement(layout, M))`` is injective and covers at least ``M = size(cotarget)``.
    ``cotarget`` is an integer or a shape (default: ``cosize(layout)``).

    Admissible for injective layouts; when a stride is not a multiple of the span below it, the result is
    accepted only if it is still ordered, disjoint and large enough (checked), otherwise refused.

    >>> complement(Layout((2,2), (1,6)), 24)
    (3,2):(2,12)
    """
    _need_layout(layout, "complement", "the argument")
    if cotarget is None:
        from .layout import cosize

        cotarget = cosize(filter(layout))
    elif isinstance(cotarget, Layout):
        cotarget = cotarget.shape
    elif isinstance(cotarget, list):
        cotarget = tuple(cotarget)
    return _complement(layout, cotarget)


def is_injective(layout: Layout) -> bool:
    """True when distinct coordinates map to distinct offsets (checked on the full table).

    >>> is_injective(Layout((4,6),(6,1))), is_injective(Layout((2,2),(1,1)))
    (True, False)
    """
    t = layout.table()
    return len(set(t.tolist())) == t.size if t.size < 1 << 16 else len(__import__("numpy").unique(t)) == t.size


# --------------------------------------------------------------------------- inverses


def right_inverse(layout: Layout) -> Layout:
    """A layout ``R`` with ``layout(R(i)) == i`` for all ``i < size(R)`` (the largest such contiguous domain).

    Follows the stride chain ``1, s*d, ...`` of the coalesced layout.
    >>> right_inverse(Layout((4,8),(8,1))), right_inverse(Layout(4,2))
    ((8,4):(4,1), 1:0)
    """
    _need_layout(layout, "right_inverse", "the argument")
    c = coalesce(layout)
    shapes, strides = _flat(c)
    if any(isinstance(d, ScaledBasis) for d in strides):
        raise LayoutError(f"right_inverse: {layout} has basis (coordinate) strides; it needs integer strides")
    pre = [1]
    for s in shapes:
        pre.append(pre[-1] * s)
    rs, rd, curr = [1], [0], 1
    for i in sorted(range(len(shapes)), key=lambda k: (strides[k], k)):
        if strides[i] == curr:
            rs.append(shapes[i])
            rd.append(pre[i])
            curr = shapes[i] * strides[i]
    return coalesce(Layout(tuple(rs), tuple(rd)))


def left_inverse(layout: Layout) -> Layout:
    """A layout ``L`` with ``L(layout(i)) == i`` for all ``i < size(layout)``.

    Math: sort the coalesced modes by stride ``d_0 < d_1 < ...``; the inverse reads offset digits in that
    mixed radix: shapes ``(d_0, d_1/d_0, ..., s_last)`` with the index strides of the sorted modes.
    Stride-0 modes are ignored (then ``layout(L(layout(i))) == layout(i)``, a quasi-inverse).
    Admissible when the non-zero modes do not overlap (``d_{k+1} >= s_k d_k``) and ``d_k`` divides ``d_{k+1}``.

    >>> left_inverse(Layout((4,6),(6,1)))
    (6,4):(4,1)
    """
    _need_layout(layout, "left_inverse", "the argument")
    if filter(layout) == Layout(1, 0):
        return Layout(1, 0)
    c = coalesce(layout)
    shapes, strides = _flat(c)
    if any(isinstance(d, ScaledBasis) or d < 0 for d in strides):
        raise LayoutError(f"left_inverse: {layout} must have non-negative integer strides")
    pre = [1]
    for s in shapes:
        pre.append(pre[-1] * s)
    order = sorted(range(len(shapes)), key=lambda k: (strides[k], k))
    rs, rd = [], [0]
    covered, extent = 1, 1  # covered: product of shapes found so far; extent: span of the modes so far
    for i in order:
        d = strides[i]
        if d == 0:
            continue
        if d < extent:
            raise LayoutError(
                f"left_inverse: {layout} is not injective: its mode {shapes[i]}:{d} overlaps the smaller modes, "
                f"which already span offsets up to {extent}; only an injective layout has a left inverse"
            )
        if d % covered != 0:
            raise LayoutError(
                f"left_inverse: stride {d} of {layout} is not a multiple of {covered}, the stride of the mode below it; "
                f"the offsets in between cannot be read back by a layout"
            )
        rs.append(d // covered)
        rd.append(pre[i])
        covered = d
        extent = d * shapes[i]
    rs.append(shapes[order[-1]])
    return coalesce(Layout(tuple(rs), tuple(rd)))


# --------------------------------------------------------------------------- divide


def _logical_divide_layout(layout: Layout, tiler: Layout) -> Layout:
    return composition(layout, make_layout(tiler, complement(tiler, coalesce(layout).shape)))


def _as_tiler_layout(t):
    return Layout(int(t)) if is_int(t) else t


def logical_divide(layout: Layout, tiler) -> Layout:
    """Split ``layout`` into (tile, rest): ``composition(layout, make_layout(tiler, complement(tiler, size)))``.

    Mode 0 of the result enumerates one tile (as ``tiler`` picks it), mode 1 enumerates the tiles.
    A tuple tiler divides mode by mode (``None`` keeps a mode; untouched trailing modes are kept); an
    integer ``n`` means the tile ``n:1``.

    >>> logical_divide(Layout((9,(4,8)), (59,(13,1))), (Layout(3,3), Layout((2,4),(1,8))))
    ((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))
    """
    if _composed(layout):
        return layout.logical_divide(tiler)
    _need_layout(layout, "logical_divide", "the layout")
    if tiler is None:
        return layout
    if isinstance(tiler, (tuple, list)):
        return _transform_layout(layout, tuple(tiler), logical_divide, "logical_divide")
    if is_int(tiler):
        tiler = Layout(int(tiler))
    _need_layout(tiler, "logical_divide", "the tiler")
    return _logical_divide_layout(layout, tiler)


def _zip2_by(layout: Layout, guide):
    """Gather the (tile, rest) pairs at the terminals of ``guide`` into two modes."""
    if isinstance(guide, (tuple, list)):
        modes = _modes(layout)
        if len(guide) > len(modes):
            raise LayoutError(f"zip2_by: guide {guide!r} has more modes than {layout}")
        firsts, seconds = [], []
        for m, g in zip(modes, guide):
            z = _zip2_by(m, g)
            firsts.append(z[0])
            seconds.append(z[1])
        seconds += modes[len(guide):]
        return make_layout(make_layout(*firsts), make_layout(*seconds))
    if layout.rank() != 2 or not is_tuple(layout.shape):
        raise LayoutError(
            f"zipped_divide/zipped_product: the mode {layout} for tiler entry {guide!r} is not a (tile, rest) pair; "
            f"give a Layout or an integer for every mode you tile (None cannot be unzipped)"
        )
    return layout


def zipped_divide(layout: Layout, tiler) -> Layout:
    """:func:`logical_divide`, then gather all tile modes into mode 0 and all rest modes into mode 1.

    >>> zipped_divide(Layout((8,6)), (4,3))
    ((4,3),(2,2)):((1,8),(4,24))
    """
    return _zip2_by(logical_divide(layout, tiler), tiler)


def _unpack(modes_layout: Layout):
    return _modes(modes_layout)


def tiled_divide(layout: Layout, tiler) -> Layout:
    """:func:`zipped_divide` with the rest modes unpacked: ``((tile), rest0, rest1, ...)``.

    >>> tiled_divide(Layout((8,6)), (4,3))
    ((4,3),2,2):((1,8),4,24)
    """
    z = zipped_divide(layout, tiler)
    return make_layout(z[0], *_unpack(z[1]))


def flat_divide(layout: Layout, tiler) -> Layout:
    """:func:`zipped_divide` with both groups unpacked: ``(tile0, tile1, ..., rest0, rest1, ...)``.

    >>> flat_divide(Layout((8,6)), (4,3))
    (4,3,2,2):(1,8,4,24)
    """
    z = zipped_divide(layout, tiler)
    return make_layout(*_unpack(z[0]), *_unpack(z[1]))


# --------------------------------------------------------------------------- product


def _logical_product_layout(block: Layout, tiler: Layout) -> Layout:
    from .layout import cosize

    return make_layout(block, composition(complement(block, block.size() * cosize(tiler)), tiler))


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
    if is_int(tiler):
        tiler = Layout(int(tiler))
    _need_layout(tiler, "logical_product", "the tiler")
    return _logical_product_layout(block, tiler)


def zipped_product(block: Layout, tiler) -> Layout:
    """:func:`logical_product` with block modes gathered in mode 0 and repetition modes in mode 1
    (for a Layout tiler this is :func:`logical_product` itself; tuple tilers are zipped mode by mode).

    >>> zipped_product(Layout((2,2),(2,1)), Layout((2,3)))
    ((2,2),(2,3)):((2,1),(4,8))
    """
    return _zip2_by(logical_product(block, tiler), tiler)


def tiled_product(block: Layout, tiler) -> Layout:
    """:func:`zipped_product` with the repetition modes unpacked: ``((block), rest0, rest1, ...)``.

    >>> tiled_product(Layout((2,2),(2,1)), Layout((2,3)))
    ((2,2),2,3):((2,1),4,8)
    """
    z = zipped_product(block, tiler)
    return make_layout(z[0], *_unpack(z[1]))


def flat_product(block: Layout, tiler) -> Layout:
    """:func:`zipped_product` with both groups unpacked: ``(block0, block1, ..., rest0, rest1, ...)``.

    >>> flat_product(Layout((2,2),(2,1)), Layout((2,3)))
    (2,2,2,3):(2,1,4,8)
    """
    z = zipped_product(block, tiler)
    return make_layout(*_unpack(z[0]), *_unpack(z[1]))


def _pad(layout: Layout, r: int) -> Layout:
    """``append<r>``: pad with ``1:0`` modes up to rank ``r`` (a layout of rank ``r`` is returned as is)."""
    modes = _modes(layout)
    if len(modes) == r:
        return layout
    return make_layout(*modes, *([Layout(1, 0)] * (r - len(modes))))


def _zip_rank1(first: Layout, second: Layout, op: str) -> Layout:
    """The DSL's pairing of rank-1 (block, rest): an integer-shaped block pairs with the whole rest,
    a 1-tuple block pairs with the rest's single mode."""
    if not is_tuple(first.shape):
        return Layout(((first.shape, second.shape),), ((first.stride, second.stride),))
    if not is_tuple(second.shape):
        raise LayoutError(
            f"{op}: a rank-1 tuple block {first} needs a tuple tiler too (got {second}); the CuTe DSL pairs their "
            f"modes, so give both as tuples or both as integer shapes"
        )
    return zip_layouts(first, second)


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
    return zip_layouts(res[0], res[1])


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
        z = Layout(((res[1].shape, res[0].shape),), ((res[1].stride, res[0].stride),))
        return coalesce(z, (1,))
    return coalesce(zip_layouts(res[1], res[0]), (1,) * r)


def tile_to_shape(block: Layout, trg_shape, order=None) -> Layout:
    """Repeat ``block`` (a blocked product) until it has shape ``trg_shape``; ``order`` says which mode of
    the repetition grid advances first (default: mode 0, column-major).

    Every mode of ``trg_shape`` must be a multiple of the block's mode size.
    >>> tile_to_shape(Layout((2,2)), (8,6), order=(1,0))
    ((2,4),(2,3)):((1,12),(2,4))
    """
    if _composed(block):
        return block.tile_to_shape(trg_shape, order)
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


# --------------------------------------------------------------------------- common vectors, nullspace


def max_common_layout(a: Layout, b: Layout) -> Layout:
    """The layout ``R`` of the largest contiguous run on which ``a`` and ``b`` agree: ``a(R(i)) == i == b(R(i))``.

    ``R = right_inverse(b) o (the leading stride-1 mode of coalesce(a o right_inverse(b)))``; ``1:0`` if none.
    >>> max_common_layout(Layout((4,8),(1,4)), Layout((4,8),(1,8)))
    4:1
    """
    _need_layout(a, "max_common_layout", "a")
    _need_layout(b, "max_common_layout", "b")
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    first = common[0] if is_tuple(common.shape) else common
    if first.stride == 1:
        return composition(inv_b, first)
    return Layout(1, 0)


def max_common_vector(a: Layout, b: Layout) -> int:
    """The number ``N`` of leading elements that ``a`` and ``b`` map identically and contiguously.

    >>> max_common_vector(Layout((4,8),(1,4)), Layout((4,8),(1,8)))
    4
    """
    _need_layout(a, "max_common_vector", "a")
    _need_layout(b, "max_common_vector", "b")
    common = coalesce(composition(a, right_inverse(b)))
    first = common[0] if is_tuple(common.shape) else common
    return first.shape if first.stride == 1 else 1


def nullspace(layout: Layout) -> Layout:
    """The (flat) coordinates mapped to offset 0: the stride-0 modes, with the index strides of ``flatten(layout)``.

    No stride-0 mode gives ``1:0``.

    >>> nullspace(Layout((4,3,2),(0,1,0)))
    (4,2):(1,12)
    """
    _need_layout(layout, "nullspace", "the argument")
    shapes, strides = _flat(layout)
    pre = [1]
    for s in shapes:
        pre.append(pre[-1] * s)
    idx = [i for i, d in enumerate(strides) if d == 0]
    if not idx:
        return Layout(1, 0)

    if len(idx) == 1:
        return Layout(shapes[idx[0]], pre[idx[0]])
    return Layout(tuple(shapes[i] for i in idx), tuple(pre[i] for i in idx))


# --------------------------------------------------------------------------- recast


def _map_modes(layout, f):
    def go(s, d):
        if is_tuple(s):
            pairs = [go(x, y) for x, y in zip(s, d)]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        return f(s, d)

    s, d = go(layout.shape, layout.stride)
    return Layout(s, d)


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

    return _map_modes(layout, f)


def downcast(layout: Layout, n: int) -> Layout:
    """View the layout in units ``n`` times smaller: stride-±1 modes grow by ``n``, other strides multiply by ``n``.

    >>> downcast(Layout((2,8),(1,2)), 2)
    (4,8):(1,4)
    """
    _need_layout(layout, "downcast", "the argument")
    if n < 1:
        raise LayoutError(f"downcast: factor {n} must be a positive integer")
    return _map_modes(layout, lambda s, d: (s * n, d) if d in (1, -1) else (s, d * n))


def recast_layout(new_type_bits: int, old_type_bits: int, src_layout: Layout) -> Layout:
    """Re-express a layout of ``old_type_bits``-bit elements in ``new_type_bits``-bit elements (the DSL's
    argument order).  ``recast_layout(32, 16, (4,8):(1,4))`` is ``(2,8):(1,2)``.
    """
    _need_layout(src_layout, "recast_layout", "src_layout")
    if new_type_bits <= 0 or old_type_bits <= 0:
        raise LayoutError(f"recast_layout: bit widths must be positive, got {new_type_bits} and {old_type_bits}")
    g = gcd(new_type_bits, old_type_bits)
    num, den = new_type_bits // g, old_type_bits // g
    out = src_layout
    if num != 1:
        out = upcast(out, num)
    if den != 1:
        out = downcast(out, den)
    return out
