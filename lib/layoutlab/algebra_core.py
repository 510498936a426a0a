"""The core of the CuTe layout algebra: coalesce, filter and composition, and the LayoutWrapper protocol.

Every operation follows CuTe's definitions (``cute/layout.hpp``, as the CuTe DSL evaluates them) so that
results print identically to ``cutlass.cute``.  Where CuTe only checks a *weak* condition and silently
returns a layout that is not the mathematical result, we check the exact admissibility condition and
raise :class:`~layoutlab.errors.LayoutError` saying which rule failed.  The complement and the inverses are
in :mod:`layoutlab.inverse`, the divides and products built on them in :mod:`layoutlab.products`;
:mod:`layoutlab.algebra` re-exports all three.

Objects that *hold* a layout (a swizzled ``ComposedLayout``, a ``Tensor``) take part through the
:class:`LayoutWrapper` protocol: the operation acts on the held layout and the object is rebuilt around
the result, as ``cute.composition(swizzled, tiler)`` does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import lru_cache

from .errors import LayoutError
from .inttuple import (
    ScaledBasis,
    ceil_div,
    format_int_tuple,
    is_int,
    is_tuple,
    leaves,
    signum,
    unflatten,
    zip_leaves,
)
from .layout import Layout

__all__ = [
    "LayoutWrapper",
    "coalesce",
    "filter",
    "filter_zeros",
    "composition",
]


# --------------------------------------------------------------------------- protocol, helpers


class LayoutWrapper(ABC):
    """The protocol of objects that hold a layout the algebra acts on (CuTe's ``ComposedLayout``, ``Tensor``).

    ``composition``, the divides, the products, ``coalesce`` and ``tile_to_shape`` act on
    ``_algebra_layout()`` and rebuild the object with ``_with_layout(result)``, as the ``cute.*`` functions do;
    ``recast_layout`` calls ``_recast_layout(new_bits, old_bits)`` (override it when the wrapper itself
    depends on the element width, like a swizzle).

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

    def _recast_layout(self, new_type_bits: int, old_type_bits: int):
        from .products import recast_layout

        return self._with_layout(recast_layout(new_type_bits, old_type_bits, self._algebra_layout()))


def _mk(shape, stride) -> Layout:
    """An algebra result, built through the unchecked internal constructor (our own output is well-formed)."""
    return Layout._new(shape, stride)


def _concat(modes) -> Layout:
    """The layout whose top-level modes are ``modes`` (``make_layout(*modes)`` without re-validation)."""
    return _mk(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


def _modes(layout: Layout):
    """Top-level modes as Layouts (a rank-1 integer layout is its own single mode)."""
    if is_tuple(layout.shape):
        return [_mk(s, d) for s, d in zip(layout.shape, layout.stride)]
    return [layout]


def _flat(layout: Layout):
    return list(leaves(layout.shape)), list(leaves(layout.stride))


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
    return _concat(out)


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
        return _mk(1, 0) if rs[0] == 1 else _mk(rs[0], rd[0])
    return _mk(tuple(rs), tuple(rd))


@lru_cache(maxsize=4096)
def _coalesce(layout: Layout) -> Layout:
    shapes, strides = _flat(layout)
    return _bw_coalesce(shapes[:-1], strides[:-1], shapes[-1], strides[-1])


def coalesce(layout, target_profile=None):
    """Simplify a layout without changing it as a function on its domain: merge modes ``s0:d0, s1:d1``
    with ``d1 == s0*d0`` and drop size-1 modes.  Result has depth <= 1; all-size-1 gives ``1:0``.

    With ``target_profile`` (a tuple), coalesce each top-level mode separately, keeping the rank.
    A swizzled ComposedLayout keeps its swizzle and coalesces its outer layout.

    >>> coalesce(Layout(((2,4),(3,2)), ((1,2),(8,24))), target_profile=(1,1))
    (8,6):(1,8)
    >>> coalesce(Layout((2,(1,6)), (1,(6,2))))
    12:1
    """
    if isinstance(layout, LayoutWrapper):
        return layout._with_layout(coalesce(layout._algebra_layout(), target_profile))
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
    try:
        pairs = zip_leaves(guide, layout.shape)
    except LayoutError:
        raise LayoutError(f"filter_zeros: target_profile {format_int_tuple(guide)} is not congruent with {layout}") from None
    shape = tuple(1 if g == 0 else s for g, s in pairs)
    return _mk(unflatten(shape, layout.shape) if is_tuple(layout.shape) else shape[0], layout.stride)


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


def _basis_get(path, x):
    """The entry of the nested tuple ``x`` at a basis stride's ``path`` (outermost mode first)."""
    for m in path:
        if not is_tuple(x):
            if m == 0:
                continue
            raise LayoutError(f"composition: a basis stride selects mode {m} of the integer shape {x}")
        x = x[m]
    return x


def _composition_impl(ls, ld, rs, rd, lhs, rhs, usage, key=()):
    """``lhs o rhs`` for a coalesced ``lhs = ls:ld`` and ``rhs = rs:rd`` (CuTe's composition_impl).

    ``usage[(key, i)]`` accumulates the largest coordinate that the rhs modes reach inside lhs mode ``i``;
    right-distributivity (composing mode by mode) is exact only if their sum stays inside the mode.
    A negative stride in rhs walks lhs backwards: its magnitude does the divisibility walk, its sign is
    carried into the result (``4:1 o 4:-1 = 4:-1``), as in CuTe.
    """
    if is_tuple(rs):  # right-distributivity over the modes of rhs
        return _concat([_composition_impl(ls, ld, s, d, lhs, rhs, usage, key) for s, d in zip(rs, rd)])
    if isinstance(rd, ScaledBasis):
        return _composition_impl(_basis_get(rd.mode, ls), _basis_get(rd.mode, ld), rs, rd.value, lhs, rhs, usage,
                                 key + rd.mode)
    if rd == 0:
        return _mk(rs, 0)
    if not is_tuple(ls):
        return _mk(rs, rd * ld)

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
        return _mk(rest_shape, rest_stride * ld[-1])
    if rest_shape == 1:
        if len(result_shape) == 1:
            return _mk(result_shape[0], result_stride[0])
        return _mk(tuple(result_shape), tuple(result_stride))
    return _mk(tuple(result_shape) + (rest_shape,), tuple(result_stride) + (rest_stride * ld[-1],))


def _has_basis(stride) -> bool:
    return any(isinstance(d, ScaledBasis) for d in leaves(stride))


@lru_cache(maxsize=8192)
def _compose_layouts(lhs: Layout, rhs: Layout) -> Layout:
    if not _has_basis(rhs.stride):
        flat = _coalesce_x(lhs)
    else:
        # rhs selects modes of lhs through basis strides: keep lhs's top-level modes apart.
        flat = _concat([_coalesce_x(m) for m in _modes(lhs)]) if is_tuple(lhs.shape) else _coalesce_x(lhs)
    usage = {}
    result = _composition_impl(flat.shape, flat.stride, rhs.shape, rhs.stride, lhs, rhs, usage)
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
    """Functional composition ``R = lhs o rhs``: ``R(c) = lhs(rhs(c))`` for every coordinate ``c`` of ``rhs``.

    ``rhs`` may be

    * a Layout: the result is compatible with (has the shape of) ``rhs``; negative strides walk ``lhs`` backwards;
    * an integer ``n``: the first ``n`` elements of ``lhs`` (``rhs = make_layout(n)``, so ``1`` means ``1:0``);
    * a tuple tiler ``(t0, t1, ...)`` of Layouts / integers / ``None`` / nested tuples: compose mode by mode
      (``None`` keeps the mode); modes of ``lhs`` beyond the tiler are dropped, as in CuTe; the empty
      tuple gives the rank-0 layout ``():()``;
    * ``None``: ``lhs`` itself.

    A swizzled ComposedLayout (or a Tensor) as ``lhs`` keeps its swizzle (engine) and composes its layout.
    Admissibility (checked exactly; CuTe checks only weakly): walking ``lhs``'s coalesced modes, each stride of
    ``rhs`` must divide out whole modes (``d % s == 0`` or ``s % d == 0``) and each shape of ``rhs`` must be made of
    whole pieces of those modes.  ``lhs`` extends beyond its size along its last mode.

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
        if len(rhs) == 0:
            return _mk((), ())
        return _transform_layout(lhs, tuple(rhs), composition, "composition", keep_rest=False)
    if isinstance(rhs, LayoutWrapper):
        raise LayoutError(
            f"composition: the right operand {rhs} is a {type(rhs).__name__}; a swizzled right operand is not a "
            f"layout we can compose into (the CuTe DSL refuses it too); compose with its outer layout and apply the "
            f"swizzle afterwards"
        )
    raise LayoutError(f"composition: cannot compose with {type(rhs).__name__} {rhs!r}; use a Layout, int, tuple or None")


