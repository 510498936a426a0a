"""The core of the CuTe layout algebra: coalesce, filter, composition, complement and the inverses.

Every operation follows CuTe's definitions (``cute/layout.hpp``, as the CuTe DSL evaluates them) so that
results print identically to ``cutlass.cute``.  Where CuTe only checks a *weak* condition and silently
returns a layout that is not the mathematical result, we check the exact admissibility condition and
raise :class:`~layoutlab.errors.LayoutError` saying which rule failed.  The divides and products built on
these operations live in :mod:`layoutlab.products`; :mod:`layoutlab.algebra` re-exports both.

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
    _ceil_div_modes,
    ceil_div,
    format_int_tuple,
    is_int,
    is_tuple,
    leaves,
    product,
    signum,
    transform_leaf,
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
    "complement",
    "right_inverse",
    "left_inverse",
    "is_injective",
    "nullspace",
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


def _prefix_products(shapes):
    pre = [1]
    for s in shapes:
        pre.append(pre[-1] * s)
    return pre


def _collision(shapes, strides, limit=1 << 18):
    """Two flat indices that map to the same offset, or None (also None past ``limit`` elements: unknown)."""
    if product(tuple(shapes)) > limit:
        return None
    seen = {}
    offsets = [0]
    for s, d in zip(shapes, strides):
        offsets = [o + k * d for k in range(s) for o in offsets]
    for i, o in enumerate(offsets):
        if o in seen:
            return seen[o], i, o
        seen[o] = i
    return None


def _not_injective(op, layout, shapes, strides, need):
    """The LayoutError for a layout with a collision, naming the two indices (or None if injective)."""
    hit = _collision(shapes, strides)
    if hit is None:
        return None
    i, j, o = hit
    return LayoutError(f"{op}: {layout} is not injective: indices {i} and {j} both map to offset {o}; {need}")


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


# --------------------------------------------------------------------------- complement


def _complement_int(shapes, strides, cotarget, layout, checked=True):
    """CuTe's complement of the filtered integer modes ``shapes:strides``; returns (result, span of the modes).

    Why the result is checked only for its size: with the modes sorted by stride, CuTe puts a gap mode
    ``floor(d_k / r_k) : r_k`` below each mode ``s_k:d_k`` (``r_k`` = span ``s_{k-1} d_{k-1}`` of the mode below).
    As long as every stride is at least the span below it (``d_k >= r_k``, CuTe's own assertion), the layout and
    its gaps interleave with each stride at least the span of the mode before, so ``(layout, complement)`` is
    injective and the complement is ordered and disjoint from the layout, even when ``d_k`` is not a multiple of
    ``r_k``.  But a rounded-down gap leaves holes, and then the last mode, sized ``ceil(M / r_n)`` as if there were
    none, can fall short of the cotarget: ``(5,5):(2,11)`` with ``M = 55`` reaches only offset 53.  So when a gap
    was rounded, CuTe's cosize post-conditions (``test_complement``, complement.cpp) are checked in closed form.
    """
    if len(shapes) == 1 and strides[0] == 0:
        n = product(cotarget)
        return (_mk(n, 1) if n != 1 else _mk(1, 0)), 1
    for d in strides:
        if d < 0:
            raise LayoutError(
                f"complement: {layout} has a negative stride {d}; complement is defined for positive strides only"
            )
    order = sorted(range(len(shapes)), key=lambda i: (strides[i], i))
    result_shape, result_stride = [], [1]
    for i in order:
        d, s = strides[i], shapes[i]
        last = result_stride[-1]
        if d < last:
            need = "complement needs an injective layout"
            raise _not_injective("complement", layout, shapes, strides, need) or LayoutError(
                f"complement: the modes of {layout} do not nest: sorted by stride, the mode {s}:{d} starts at {d}, inside "
                f"the span {last} of the smaller modes; CuTe's complement needs every stride to be at least the span "
                f"(shape x stride) of the mode below it (the layout is injective, but CuTe asserts here and the CuTe DSL "
                f"returns a shape containing 0)"
            )
        result_shape.append(d // last)
        result_stride.append(d * s)
    new_stride = result_stride.pop()
    rest_shape = _ceil_div_modes(cotarget, new_stride)
    rest_shape = product(rest_shape) if is_tuple(rest_shape) else rest_shape
    result_shape.append(rest_shape)
    result_stride.append(new_stride)
    if checked and any(d % r for d, r in zip(sorted(strides), result_stride)):
        _check_rounded_complement(shapes, strides, result_shape, result_stride, cotarget, layout)
    return coalesce(_mk(tuple(result_shape), tuple(result_stride))), new_stride


def _check_rounded_complement(shapes, strides, result_shape, result_stride, cotarget, layout):
    """CuTe's post-conditions on the codomain of a complement whose gaps were rounded down (complement.cpp):
    the completed layout reaches the cotarget, and the complement has at least ``M / size(layout)`` elements.
    (Its upper bound ``cosize(complement) <= round_up(M, cosize(layout))`` is not checked: it fails for exact
    complements too, e.g. ``((2,5),(4,2)):((20,1),(5,120))`` with ``M = 320`` gives ``(3,2):(40,240)``.)"""
    m = product(cotarget)
    cos_layout = 1 + sum((s - 1) * d for s, d in zip(shapes, strides))
    cos_result = 1 + sum((s - 1) * d for s, d in zip(result_shape, result_stride))
    cos_completed = cos_layout + cos_result - 1
    fewest = m // product(tuple(shapes))
    broken = []
    if cos_completed < m:
        broken.append(f"(layout, complement) reaches only offset {cos_completed - 1}, short of the cotarget {m}")
    if product(tuple(result_shape)) < fewest or cos_result < fewest:
        broken.append(f"the complement has fewer than {fewest} elements")
    if broken:
        raise LayoutError(
            f"complement: CuTe's complement of {layout} with cotarget {format_int_tuple(cotarget)} rounds a gap down "
            f"(a stride is not a multiple of the span below it), and its result "
            f"{coalesce(_mk(tuple(result_shape), tuple(result_stride)))} breaks CuTe's own post-condition: "
            f"{'; '.join(broken)}. The CuTe DSL returns it anyway; give strides that are multiples of the spans "
            f"below them, or a cotarget the rounded complement reaches"
        )


def _basis_dims(strides, layout, op):
    """Group flat modes by the top-level basis mode of their stride: {dim: [flat indices]}; int 0 joins none."""
    dims = {}
    ints = [d for d in strides if not isinstance(d, ScaledBasis) and d != 0]
    if ints:
        raise LayoutError(
            f"{op}: {layout} mixes integer strides ({', '.join(map(str, ints))}) with basis strides; give all "
            f"non-zero strides as offsets or all as coordinates (1@i), the CuTe DSL cannot mix them either"
        )
    for k, d in enumerate(strides):
        if isinstance(d, ScaledBasis):
            if len(d.mode) != 1:
                raise LayoutError(f"{op}: the nested basis stride {d} of {layout} is not supported; use strides 1@i of "
                                  f"the top-level modes")
            if d.value < 0:
                raise LayoutError(f"{op}: {layout} has a negative basis stride {d}; {op} needs positive strides")
            dims.setdefault(d.mode[0], []).append(k)
    return dims


def _complement_basis(layout, cotarget):
    """The DSL's complement of a layout with basis strides: one complement per coordinate mode ``i`` (of the
    modes with stride ``k@i``, against mode ``i`` of the cotarget, 1 beyond it), scaled back by ``@i``."""
    shapes, strides = _flat(layout)
    dims = _basis_dims(strides, layout, "complement")
    targets = tuple(cotarget) if is_tuple(cotarget) else (cotarget,)
    ndims = max(max(dims, default=-1) + 1, len(targets))
    out = []
    for i in range(ndims):
        target_i = targets[i] if i < len(targets) else 1
        ks = [k for k in dims.get(i, []) if shapes[k] != 1]
        if not ks:
            part = _mk(product(target_i), 1)
        else:
            part, span = _complement_int([shapes[k] for k in ks], [strides[k].value for k in ks], target_i, layout)
            if part.size() == 1:  # the DSL keeps the span as the stride of an empty complement
                part = _mk(1, span)
        out.append(_mk(part.shape, transform_leaf(part.stride, lambda v, i=i: ScaledBasis(v, i))))
    return _concat(out)


@lru_cache(maxsize=4096)
def _complement(layout: Layout, cotarget, checked: bool = True) -> Layout:
    """``checked=False`` skips the cotarget post-conditions of a rounded complement: a product composes the
    complement with its tiler, which extends the last mode, so only order and disjointness matter there."""
    if _has_basis(layout.stride):
        return _complement_basis(layout, cotarget)
    shapes, strides = _flat(filter(layout))
    return _complement_int(shapes, strides, cotarget, layout, checked)[0]


def complement(layout: Layout, cotarget=None) -> Layout:
    """The layout of the offsets *not* hit by ``layout``, ordered and disjoint from it, up to ``cotarget``.

    Math (CuTe's algorithm): with ``layout`` filtered and its modes sorted by stride ``d_0 < d_1 < ...``, the
    complement has modes ``(d_0/1, d_1/(s_0 d_0), ..., ceil(M/(s_k d_k))) : (1, s_0 d_0, ..., s_k d_k)`` (each
    quotient rounded down), coalesced; ``make_layout(layout, complement(layout, M))`` is injective and
    reaches at least ``M = size(cotarget)``.  ``cotarget`` is an integer or a shape (default: ``cosize(layout)``).
    Basis strides (``(4,5):(1@0,1@1)``) are complemented per coordinate mode, as the CuTe DSL does.

    Admissible when every stride is at least the span of the modes below it (CuTe's requirement); a
    non-injective layout, or one whose modes interleave, is refused.

    >>> complement(Layout((2,2), (1,6)), 24)
    (3,2):(2,12)
    """
    _need_layout(layout, "complement", "the argument")
    if cotarget is None:
        from .layout import cosize

        cotarget = 1 if _has_basis(layout.stride) else cosize(filter(layout))
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
    shapes, strides = _flat(layout)
    if layout.size() > 1 << 18:
        t = layout.table()
        return len(__import__("numpy").unique(t)) == t.size
    return _collision(shapes, strides) is None


# --------------------------------------------------------------------------- inverses


def _right_inverse_flat(shapes, strides, pre) -> Layout:
    """Follow the stride chain ``1, s*d, ...``: each mode found continues the contiguous run."""
    rs, rd, curr = [1], [0], 1
    for i in sorted(range(len(shapes)), key=lambda k: (strides[k], k)):
        if strides[i] == curr:
            rs.append(shapes[i])
            rd.append(pre[i])
            curr = shapes[i] * strides[i]
    return coalesce(_mk(tuple(rs), tuple(rd)))


def _left_inverse_flat(shapes, strides, pre, layout) -> Layout:
    """Read the offset back digit by digit in the mixed radix of the sorted strides (zero strides ignored)."""
    order = [k for k in sorted(range(len(shapes)), key=lambda k: (strides[k], k)) if strides[k] != 0]
    if not order:
        return _mk(1, 0)
    rs, rd = [], [0]
    covered, extent = 1, 1  # covered: the stride of the mode below; extent: span of the modes so far
    for i in order:
        d = strides[i]
        if d < extent:
            need = "only an injective layout has a left inverse"
            raise _not_injective("left_inverse", layout, shapes, strides, need) or LayoutError(
                f"left_inverse: {layout} is injective, but its modes interleave: sorted by stride, the mode "
                f"{shapes[i]}:{d} starts inside the span {extent} of the smaller modes, so an offset cannot be read back "
                f"digit by digit (CuTe's construction; the CuTe DSL refuses it too). A left inverse may still exist "
                f"(for (2,2):(2,3) it is (2,3):(1,1)); give a layout whose modes nest (each stride >= the span below)"
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
    return coalesce(_mk(tuple(rs), tuple(rd)))


def _inverse_basis(layout: Layout, flat_inverse, op) -> Layout:
    """The DSL's inverse of a basis-strided layout: one inverse per coordinate mode ``i`` (of the modes with
    stride ``k@i``, reading their indices in ``layout``'s domain), as the modes of the result."""
    shapes, strides = _flat(coalesce(layout))
    pre = _prefix_products(shapes)
    dims = _basis_dims(strides, layout, op)
    out = []
    for i in range(max(dims, default=-1) + 1):
        ks = dims.get(i, [])
        out.append(flat_inverse([shapes[k] for k in ks], [strides[k].value for k in ks], [pre[k] for k in ks])
                   if ks else _mk(1, 0))
    return _concat(out)


def right_inverse(layout: Layout) -> Layout:
    """A layout ``R`` with ``layout(R(i)) == i`` for all ``i < size(R)`` (the largest such contiguous domain).

    Follows the stride chain ``1, s*d, ...`` of the coalesced layout.  A basis-strided layout is inverted per
    coordinate mode: ``right_inverse((4,5):(1@0,1@1))`` is ``(4,5):(1,4)``, as in the CuTe DSL.

    >>> right_inverse(Layout((4,8),(8,1))), right_inverse(Layout(4,2))
    ((8,4):(4,1), 1:0)
    """
    _need_layout(layout, "right_inverse", "the argument")
    if _has_basis(layout.stride):
        return _inverse_basis(layout, _right_inverse_flat, "right_inverse")
    shapes, strides = _flat(coalesce(layout))
    return _right_inverse_flat(shapes, strides, _prefix_products(shapes))


def left_inverse(layout: Layout) -> Layout:
    """A layout ``L`` with ``L(layout(i)) == i`` for all ``i < size(layout)``.

    Math: sort the coalesced modes by stride ``d_0 < d_1 < ...``; the inverse reads offset digits in that
    mixed radix: shapes ``(d_0, d_1/d_0, ..., s_last)`` with the index strides of the sorted modes.
    Stride-0 modes are ignored (then ``layout(L(layout(i))) == layout(i)``, a quasi-inverse).
    Admissible when the non-zero modes nest (``d_{k+1} >= s_k d_k``) and ``d_k`` divides ``d_{k+1}``; a
    non-injective layout is refused naming two indices that collide.  Basis strides are inverted per
    coordinate mode, as in the CuTe DSL.

    >>> left_inverse(Layout((4,6),(6,1)))
    (6,4):(4,1)
    """
    _need_layout(layout, "left_inverse", "the argument")
    if _has_basis(layout.stride):
        return _inverse_basis(layout, lambda s, d, p: _left_inverse_flat(s, d, p, layout), "left_inverse")
    if filter(layout) == Layout(1, 0):
        return _mk(1, 0)
    shapes, strides = _flat(coalesce(layout))
    if any(d < 0 for d in strides):
        raise LayoutError(
            f"left_inverse: {layout} has a negative stride; left_inverse needs non-negative strides (the CuTe DSL "
            f"refuses them too)"
        )
    return _left_inverse_flat(shapes, strides, _prefix_products(shapes), layout)


# --------------------------------------------------------------------------- nullspace


def nullspace(layout: Layout) -> Layout:
    """The (flat) coordinates mapped to offset 0: the stride-0 modes, with the index strides of ``flatten(layout)``.

    No stride-0 mode gives ``1:0``.

    >>> nullspace(Layout((4,3,2),(0,1,0)))
    (4,2):(1,12)
    """
    _need_layout(layout, "nullspace", "the argument")
    shapes, strides = _flat(layout)
    pre = _prefix_products(shapes)
    idx = [i for i, d in enumerate(strides) if d == 0]
    if not idx:
        return _mk(1, 0)
    if len(idx) == 1:
        return _mk(shapes[idx[0]], pre[idx[0]])
    return _mk(tuple(shapes[i] for i in idx), tuple(pre[i] for i in idx))
