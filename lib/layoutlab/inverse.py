"""The complement, the inverses and the nullspace of a layout, as in CuTe's ``cute/layout.hpp``; inputs for which
CuTe's algorithm gives no valid result are refused.  Basis strides are treated per coordinate mode, as in the DSL.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import zip_longest

from .algebra_core import _flat, _has_basis, _mk, _mk_flat, _need_layout, coalesce, filter
from .errors import LayoutError
from .inttuple import ScaledBasis, _ceil_div_modes, format_int_tuple, prefix_product, product, transform_leaf
from .layout import Layout, cosize, make_layout

__all__ = ["complement", "right_inverse", "left_inverse", "is_injective", "nullspace"]


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


def _basis_dims(strides, layout, op):
    """For each top-level mode ``i`` (up to the largest used), the flat indices of the modes with stride ``k@i``."""
    ints = [d for d in strides if not isinstance(d, ScaledBasis) and d != 0]
    if ints:
        raise LayoutError(
            f"{op}: {layout} mixes integer strides ({', '.join(map(str, ints))}) with basis strides; give all "
            f"non-zero strides as offsets or all as coordinates (1@i), the CuTe DSL cannot mix them either"
        )
    dims = {}
    for k, d in enumerate(strides):
        if isinstance(d, ScaledBasis):
            if len(d.mode) != 1:
                raise LayoutError(f"{op}: the nested basis stride {d} of {layout} is not supported; use strides 1@i of "
                                  f"the top-level modes")
            if d.value < 0:
                raise LayoutError(f"{op}: {layout} has a negative basis stride {d}; {op} needs positive strides")
            dims.setdefault(d.mode[0], []).append(k)
    return [dims.get(i, []) for i in range(max(dims, default=-1) + 1)]


def _complement_basis(layout, cotarget):
    """The DSL's complement of a basis-strided layout: per mode ``i``, the ``k@i`` modes against cotarget mode ``i``."""
    shapes, strides = _flat(layout)
    out = []
    targets = cotarget if isinstance(cotarget, tuple) else (cotarget,)
    for i, (ks, target_i) in enumerate(zip_longest(_basis_dims(strides, layout, "complement"), targets)):
        ks = [k for k in ks or () if shapes[k] != 1]  # zip_longest pads the shorter of the two with None
        target_i = 1 if target_i is None else target_i
        part = _mk(product(target_i), 1)
        if ks:
            part, span = _complement_int([shapes[k] for k in ks], [strides[k].value for k in ks], target_i, layout)
            if part.size() == 1:  # the DSL keeps the span as the stride of an empty complement
                part = _mk(1, span)
        out.append(_mk(part.shape, transform_leaf(part.stride, lambda v, i=i: ScaledBasis(v, i))))
    return make_layout(out)


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
    shapes, strides = _flat(coalesce(layout))
    pre = prefix_product(shapes)
    if not _has_basis(layout.stride):
        return flat_inverse(shapes, strides, pre, layout)
    return make_layout([flat_inverse([shapes[k] for k in ks], [strides[k].value for k in ks], [pre[k] for k in ks],
                                     layout) if ks else _mk(1, 0) for ks in _basis_dims(strides, layout, op)])


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
