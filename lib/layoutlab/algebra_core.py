"""The core of the CuTe layout algebra (``cute/layout.hpp``): coalesce, filter, composition, the LayoutWrapper protocol.
Where CuTe checks only weakly and returns a wrong layout, we check exact admissibility and raise a LayoutError.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from functools import lru_cache, wraps

from .errors import LayoutError
from .inttuple import ScaledBasis, ceil_div, format_int_tuple, is_int, is_tuple, leaves, signum, unflatten, zip_leaves
from .layout import Layout, make_layout

__all__ = ["LayoutWrapper", "coalesce", "filter", "filter_zeros", "composition"]


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
        from .products import recast_layout

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
    usage = Counter()

    def compose(ls, ld, rs, rd, key=()):
        if is_tuple(rs):  # right-distributivity over the modes of rhs
            return make_layout([compose(ls, ld, s, d, key) for s, d in zip(rs, rd)])
        if isinstance(rd, ScaledBasis):
            return compose(_basis_get(rd.mode, ls), _basis_get(rd.mode, ld), rs, rd.value, key + rd.mode)
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
        mode_shape = _basis_get(key, flat.shape)[i]
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
