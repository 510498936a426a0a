"""``Layout``: a pair (shape, stride) of congruent IntTuples, a function from coordinates to offsets, with its
constructors, modes and slicing; printing and names follow the CuTe DSL.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import prod

from .basis import E, read_tuple
from ..errors import LayoutError
from .inttuple import (_layout_like, as_int_tuple, congruent, crd2idx, depth as _depth, format_tree, inner_product,
                       is_tuple, leaf_paths, leaves, none_to_zero, prefix_product, product, rank as _rank, size as
                       _size, suffix_product, transform_leaf, unflatten, zip_leaves, zip_profile)
from .basis import is_int

__all__ = ["Layout", "make_layout", "make_ordered_layout", "make_identity_layout", "compact_col_major",
           "compact_row_major", "parse_layout", "is_layout", "shape", "stride", "cosize", "get", "select",
           "group_modes", "append", "prepend", "slice_", "slice_and_offset", "dice", "zip_layouts"]


def is_layout(x) -> bool:
    """True if ``x`` is a :class:`Layout`.

    >>> is_layout(Layout(4)), is_layout((4,))
    (True, False)
    """
    return isinstance(x, Layout)


def _checked_shape(s, op):
    """``s`` as an IntTuple of positive integers (the shape of a layout), or a LayoutError for ``op``."""
    s = as_int_tuple(s, "shape", op)
    for x in leaves(s):
        if x <= 0:
            raise LayoutError(f"{op}: shape entry {x} is {'negative' if x < 0 else '0'}; every mode of a layout has "
                              f"at least one element (shapes are positive integers)")
    return s


def _compact_strides(shape, current, reverse):
    """LayoutLeft (``reverse``: LayoutRight) strides of ``shape`` from ``current`` (a tuple: per mode); size-1: 0."""
    if is_tuple(current):
        if not is_tuple(shape) or len(shape) != len(current):
            raise LayoutError(f"compact strides: the start {format_tree(current)} must have one entry per mode of "
                              f"{format_tree(shape)}")
        return tuple(_compact_strides(s, c, reverse) for s, c in zip(shape, current))
    strides = (suffix_product if reverse else prefix_product)(shape, current)
    return unflatten(tuple(0 if s == 1 else d for s, d in zip_leaves(shape, strides)), shape)


@lru_cache(maxsize=256)
def _table(layout: Layout):
    """All offsets ``[L(0), ..., L(size-1)]``: sums over the flat modes, the first mode fastest. Computed in pure
    Python (no numpy needed, e.g. in JupyterLite offline); returned as a read-only int64 numpy array where numpy
    is installed (callers index it with arrays), else as a tuple of ints."""
    if not layout.is_integral:
        raise LayoutError(f"table: {layout} has basis (coordinate) strides; it maps to coordinates, not offsets: "
                          f"evaluate it element by element")
    out = [0]
    for s, d in zip_leaves(layout.shape, layout.stride):
        out = [j * d + o for j in range(s) for o in out]
    try:
        import numpy as np
    except ImportError:
        return tuple(out)
    arr = np.array(out, dtype=np.int64)
    arr.setflags(write=False)
    return arr


def cosize(x, mode=()):
    """One past the largest offset, ``sum_i (s_i - 1) * |d_i| + 1`` (coordinate layouts: the product of the extents).

    >>> cosize(Layout((4,6), (1,10))), cosize(make_identity_layout((4,6)))
    (54, 24)
    """
    x = get(_as_layout(x, "cosize"), mode)
    co = inner_product(transform_leaf(x.shape, lambda s: s - 1), transform_leaf(x.stride, abs))
    return co + 1 if is_int(co) else product(transform_leaf(co, lambda e: e + 1))


@dataclass(frozen=True, slots=True, init=False)  # immutable; == and hash on (shape, stride)
class Layout:
    """A CuTe layout ``shape:stride``, a function from coordinates to offsets: ``L(c) = sum_i c_i * stride_i`` over the
    leaves of ``c``; an index ``k`` is first ``idx2crd(k, shape)`` (the last mode extends).  ``None`` in ``c`` slices.

    >>> L = Layout(((4,8,4),(2,2,8)), ((128,1,16),(64,8,512)))
    >>> L(1), L((1, 2)), L[1]
    (128, 136, (2,2,8):(64,8,512))
    """

    shape: tuple | int
    stride: tuple | int

    def __init__(self, shape, stride=None):
        shape = _checked_shape(shape, "Layout")
        if stride is None:
            stride = _compact_strides(shape, 1, reverse=False)
        else:
            stride = as_int_tuple(stride, "stride", "Layout", allow_basis=True)
            if not congruent(shape, stride):
                raise LayoutError(f"Layout: shape {format_tree(shape)} and stride {format_tree(stride)} are not "
                                  f"congruent (they must have the same nesting, e.g. (4,(2,3)):(1,(4,8)))")
        self._set(shape, stride)

    def _set(self, shape, stride) -> "Layout":
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)
        return self

    @classmethod
    def _new(cls, shape, stride) -> "Layout":
        """Unchecked: the internal path for results the algebra has already made valid (public constructors check)."""
        return object.__new__(cls)._set(shape, stride)

    size, rank, depth, cosize = _size, _rank, _depth, cosize  # the free functions, which measure a Layout

    def flatten(self) -> "Layout":
        """The same function with all nesting removed: ``((4,2),3):((1,4),8)`` -> ``(4,2,3):(1,4,8)``."""
        return Layout._new(leaves(self.shape), leaves(self.stride)) if is_tuple(self.shape) else self

    @property
    def is_integral(self) -> bool:
        """True when every stride is an integer (an offset layout, not a coordinate layout)."""
        return all(map(is_int, leaves(self.stride)))

    def __getitem__(self, i) -> "Layout":
        """Sub-layout of mode ``i`` (a tuple ``(i, j)`` goes down the nesting), as ``layout[i]`` in the DSL."""
        s, d = self.shape, self.stride
        for k in i if isinstance(i, (tuple, list)) else (i,):
            if not is_int(k):
                raise LayoutError(f"Layout[{i!r}]: mode index {k!r} is not an integer; use L(coord) to evaluate or "
                                  f"slice")
            n = len(s) if is_tuple(s) else 1  # a rank-1 integer layout is its own mode 0
            if not -n <= k < n:
                raise LayoutError(f"Layout[{i!r}]: mode {k} does not exist in {self}; valid modes are 0..{n - 1}")
            if is_tuple(s):
                s, d = s[k], d[k]
        return Layout._new(s, d)

    __len__ = rank

    def __iter__(self):
        return map(self.__getitem__, range(len(self)))

    def __call__(self, *args):
        if not args:
            raise LayoutError("Layout(): give an index, a coordinate or a slice")
        crd = args[0] if len(args) == 1 else args
        if isinstance(crd, (range, list)) or getattr(crd, "ndim", 0) > 0:
            return self.evaluate_indices(crd)
        if _has_none(crd):
            return slice_(self, crd)
        crd = as_int_tuple(crd, "coordinate", "Layout()")
        _check_coord(crd, self, "Layout()")
        return crd2idx(crd, self.shape, self.stride)

    def evaluate_indices(self, idx):
        """Offsets of many 1-D indices at once, as a numpy array (a lookup in the cached :meth:`table`)."""
        import numpy as np

        idx = np.asarray(idx, dtype=np.int64)
        if (idx < 0).any():
            raise LayoutError(f"Layout(): index out of range for {self}: indices must be >= 0")
        s, d = ((1, 0), *zip_leaves(self.shape, self.stride))[-1]  # the last leaf extends (1:0 for rank 0)
        return self.table()[idx % self.size()] + idx // self.size() * s * d

    table = _table  # cached per layout

    def __str__(self):
        return f"{format_tree(self.shape)}:{format_tree(self.stride)}"

    __repr__ = __str__


def _has_none(c) -> bool:
    return any(x is None for x in leaves(c))


def _check_coord(crd, layout, op):
    """Each entry of ``crd`` is None or an integer in its mode; only the last mode extends (others would alias)."""
    try:
        pairs = zip_profile(crd, layout.shape)
    except LayoutError:
        raise LayoutError(f"{op}: coordinate {format_tree(crd)} is not congruent with shape "
                          f"{format_tree(layout.shape)} of {layout}; give an index or a coordinate with one entry per "
                          f"mode (None, CuTe's _, for each mode to keep)") from None
    for k, (c, s) in enumerate(pairs):
        if c is None:
            continue
        if not is_int(c):
            raise LayoutError(f"{op}: coordinate entry {c!r} must be an integer or None")
        n = product(s)
        if c < 0 or c >= n and k < len(pairs) - 1:
            raise LayoutError(f"{op}: coordinate {c} is out of range for a mode of size {n} in {layout}; valid: "
                              f"0..{n - 1} (only the last mode extends past its size)")


def make_layout(*args, stride=None) -> Layout:
    """A layout from a shape and a stride (default LayoutLeft, size-1 modes stride 0), or from layouts as modes.

    >>> make_layout((4,1,6)), make_layout((4,6), stride=(6,1)), make_layout(Layout(4,1), Layout(6,4))
    ((4,1,6):(1,0,4), (4,6):(6,1), (4,6):(1,4))
    """
    modes = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) and args[0] else args
    if modes and all(map(is_layout, modes)):
        if stride is not None:
            raise LayoutError("make_layout: stride= cannot be combined with layouts as modes")
        return Layout._new(tuple(a.shape for a in modes), tuple(a.stride for a in modes))
    if len(args) == 2 and stride is None:
        args, stride = args[:1], args[1]
    if len(args) != 1:
        raise LayoutError(f"make_layout: expected one shape (or layouts as modes), got {len(args)} arguments")
    return Layout(args[0], stride)


def compact_col_major(shape, current=1) -> Layout:
    """LayoutLeft strides from ``current`` (per mode if a tuple), size-1 modes 0: CuTe's ``compact_col_major``.

    >>> compact_col_major((4,6)), compact_col_major((4,6), 2), compact_col_major((4,(1,6)), (1,100))
    ((4,6):(1,4), (4,6):(2,8), (4,(1,6)):(1,(0,100)))
    """
    shape = _checked_shape(shape, "compact_col_major")
    return Layout._new(shape, _compact_strides(shape, as_int_tuple(current, "current", "compact_col_major"), False))


def compact_row_major(shape, current=1) -> Layout:
    """LayoutRight: last mode fastest, strides starting at ``current`` (CuTe's ``compact_row_major``).

    >>> compact_row_major((4,6)), compact_row_major((4,(2,3)), 2)
    ((4,6):(6,1), (4,(2,3)):(12,(6,2)))
    """
    shape = _checked_shape(shape, "compact_row_major")
    return Layout._new(shape, _compact_strides(shape, as_int_tuple(current, "current", "compact_row_major"), True))


def _order_parts(shape, order, op, whole_shape, whole_order):
    """``[(order value, sub-shape)]``: each leaf of ``order`` with the part of ``shape`` it orders (``order`` must be
    weakly congruent to ``shape``: an integer orders a whole sub-shape, a tuple one entry per mode)."""
    if not is_tuple(order):
        return [(order, shape)]
    if not is_tuple(shape) or len(shape) != len(order):
        raise LayoutError(
            f"{op}: order {format_tree(whole_order)} is not congruent to shape {format_tree(whole_shape)}: "
            f"{format_tree(order)} has {len(order)} entries where the shape has "
            f"{f'{len(shape)} modes' if is_tuple(shape) else f'the integer {shape}'}; give one order per leaf (a "
            f"tuple nested as the shape) or one integer for a whole mode (the CuTe DSL refuses it too)")
    return [part for s, o in zip(shape, order) for part in _order_parts(s, o, op, whole_shape, whole_order)]


def make_ordered_layout(shape, order) -> Layout:
    """Compact layout whose modes are laid out in ``order`` (weakly congruent to ``shape``): the part ordered by ``o``
    starts at the size of the parts with smaller orders, column-major inside (size 1: stride 0), as CuTe's
    ``compact_order``.

    >>> make_ordered_layout((4,6,2), order=(2,0,1)), make_ordered_layout(((2,4),8), order=(1,0))
    ((4,6,2):(12,1,6), ((2,4),8):((8,16),1))
    """
    shape = _checked_shape(shape, "make_ordered_layout")
    order = as_int_tuple(order, "order", "make_ordered_layout")
    parts = _order_parts(shape, order, "make_ordered_layout", shape, order)
    if len({o for o, _ in parts}) != len(parts):
        raise LayoutError(f"make_ordered_layout: order {format_tree(order)} repeats a value; orders must be distinct")
    starts = iter([prod(product(t) for p, t in parts if p < o) for o, _ in parts])

    def strides(s, o):
        return tuple(strides(a, b) for a, b in zip(s, o)) if is_tuple(o) else _compact_strides(s, next(starts), False)

    return Layout._new(shape, strides(shape, order))


def make_identity_layout(shape) -> Layout:
    """The coordinate layout of ``shape``: each index to its natural coordinate, strides ``E([i, j, ...])``.

    >>> make_identity_layout(((2,3),4)), make_identity_layout((4,6))(5)
    (((2,3),4):((1@0@0,1@1@0),1@1), (1, 1))
    """
    shape = _checked_shape(shape, "make_identity_layout")
    return Layout._new(shape, unflatten(tuple(map(E, leaf_paths(shape))), shape))  # E(()) is 1, CuTe's E<>


def parse_layout(text: str) -> Layout:
    """Read CuTe's printed ``shape:stride`` (or a bare shape: LayoutLeft; ``_4`` static integers) into a Layout.

    >>> parse_layout("((4,8),(2,2)):((128,1),(64,8))")((1, 2)), parse_layout("(_4,_6)"), parse_layout("2:1@0@1")
    (136, (4,6):(1,4), 2:1@0@1)
    """
    if not isinstance(text, str):
        raise LayoutError(f"parse_layout: expected a string like '(4,6):(1,4)', got {type(text).__name__}")
    s, *d = text.strip().replace("_", "").split(":")
    if len(d) > 1:
        raise LayoutError(f"parse_layout: more than one ':' in {text!r}; write shape:stride, e.g. (4,6):(1,4)")
    shp = read_tuple(s, "shape")
    if not all(map(is_int, leaves(shp))):
        raise LayoutError(f"parse_layout: shape {s!r} contains a basis element; shapes are integers")
    return Layout(shp, read_tuple(d[0], "stride") if d else None)


def _as_layout(x, op) -> Layout:  # a Layout, or a Tensor's layout
    x = x.layout if isinstance(getattr(x, "layout", None), Layout) else x
    if not isinstance(x, Layout):
        raise LayoutError(f"{op}: expected a Layout, got {type(x).__name__}")
    return x


def _down(t, mode, op):
    path = [mode] if is_int(mode) else list(mode)
    for m in path:
        if is_tuple(t) and not 0 <= m < len(t):
            raise LayoutError(f"{op}: mode {path} does not exist in {format_tree(t)}; valid modes are 0..{len(t) - 1}")
        t = t[m] if is_tuple(t) else t
    return t


def shape(x, mode=()):
    """Shape of a layout (or an IntTuple itself), optionally of a sub-mode.

    >>> shape(Layout(((4,8),6))), shape(Layout(((4,8),6)), mode=[0])
    (((4, 8), 6), (4, 8))
    """
    return _down(x.shape if _layout_like(x) else as_int_tuple(x, "shape", "shape"), mode, "shape")


def stride(x, mode=()):
    """Stride of a layout, optionally of a sub-mode.

    >>> stride(Layout(((4,8),6))), stride(Layout(((4,8),6)), mode=[1])
    (((1, 4), 32), 32)
    """
    return _down(_as_layout(x, "stride").stride, mode, "stride")


def get(layout: Layout, mode) -> Layout:
    """Sub-layout at ``mode`` (an int, or a path ``[i, j]``): ``get(L, [1, 0])`` is ``L[1][0]``.

    >>> get(Layout(((4,8),6)), [0, 1])
    8:4
    """
    return layout[mode]


def select(layout: Layout, mode) -> Layout:
    """Layout made of the chosen top-level modes, in the given order.

    >>> select(Layout((2,3,4)), [2, 0])
    (4,2):(6,1)
    """
    return make_layout(*(layout[m] for m in ([mode] if is_int(mode) else mode)))


def group_modes(layout: Layout, begin: int, end: int | None = None) -> Layout:
    """Group modes ``[begin, end)`` into one nested mode.

    >>> group_modes(Layout((2,3,4), (1,2,6)), 0, 2)
    ((2,3),4):((1,2),6)
    """
    r = layout.rank()
    end = r if end is None else end + r if end < 0 else end
    if not (0 <= begin < end <= r):
        raise LayoutError(f"group_modes: range [{begin},{end}) is not a non-empty range of the {r} modes of {layout}")
    modes = list(layout)
    return make_layout(*modes[:begin], make_layout(*modes[begin:end]), *modes[end:])


def _pad(op, layout, elem, up_to_rank, front):
    modes = list(layout)
    if up_to_rank is not None and up_to_rank < len(modes):
        raise LayoutError(f"{op}: up_to_rank={up_to_rank} is smaller than the rank {len(modes)} of {layout}")
    if up_to_rank == 1 and not is_tuple(layout.shape):
        return layout
    pad = [Layout._new(1, 0) if elem is None else elem] * (1 if up_to_rank is None else up_to_rank - len(modes))
    return make_layout(*pad, *modes) if front else make_layout(*modes, *pad)


def append(layout: Layout, elem: Layout | None = None, up_to_rank: int | None = None) -> Layout:
    """Append ``elem`` (default ``1:0``) as a new last mode; with ``up_to_rank`` pad to that rank.

    >>> append(Layout((4,6)), Layout(2,24)), append(Layout(4), up_to_rank=3)
    ((4,6,2):(1,4,24), (4,1,1):(1,0,0))
    """
    return _pad("append", layout, elem, up_to_rank, front=False)


def prepend(layout: Layout, elem: Layout | None = None, up_to_rank: int | None = None) -> Layout:
    """Prepend ``elem`` (default ``1:0``) as a new first mode; with ``up_to_rank`` pad to that rank.

    >>> prepend(Layout((4,6)), Layout(2,24))
    (2,4,6):(24,1,4)
    """
    return _pad("prepend", layout, elem, up_to_rank, front=True)


def _is_layout_like(x) -> bool:
    """A Layout, or a layout-like object that slices itself (a swizzled ComposedLayout, a Tensor)."""
    return isinstance(x, Layout) or callable(getattr(x, "slice_", None))


def _check_order(op, layout, crd):
    if not _is_layout_like(layout) and _is_layout_like(crd):
        raise LayoutError(f"{op}: the layout comes first, as in the CuTe DSL: {op}(layout, coord); "
                          f"got {op}(coord, layout) (the order of CuTe C++)")


def _kept(crd, t, keep_free: bool):
    """The modes of ``t`` (a Layout or a tuple) where ``crd`` is None (``keep_free``) or not, as CuTe's slice/dice."""
    if isinstance(t, Layout):
        return Layout._new(_kept(crd, t.shape, keep_free), _kept(crd, t.stride, keep_free))
    return tuple(x for c, x in zip_profile(crd, t) if (c is None) == keep_free)


def slice_and_offset(crd, layout: Layout):
    """``(slice_(layout, crd), layout(crd with None -> 0))``, as ``cute.slice_and_offset`` (coordinate first).

    >>> slice_and_offset((1, None), Layout(((4,2),6), ((3,40),7)))
    ((6):(7), 3)
    """
    if not isinstance(layout, Layout):
        raise LayoutError(f"slice_and_offset: expected a Layout as the second argument, got {type(layout).__name__}; "
                          f"the DSL's order is slice_and_offset(coord, layout)")
    return _slice_and_offset(layout, crd, "slice_and_offset")


def _slice_and_offset(layout, crd, op):
    _check_coord(crd, layout, op)
    sub = layout if crd is None else _kept(crd, layout, keep_free=True)
    return sub, crd2idx(none_to_zero(crd), layout.shape, layout.stride)


def slice_(layout: Layout, crd) -> Layout:
    """The sub-layout of the modes where ``crd`` is ``None`` (CuTe's ``_``), as ``cute.slice_(src, coord)``.

    >>> L = Layout(((4,8,4),(2,2,8)), ((128,1,16),(64,8,512)))
    >>> slice_(L, (None, 3)), slice_(L, ((1, None, 2), None)), slice_(L, (1, 2))
    (((4,8,4)):((128,1,16)), (8,(2,2,8)):(1,(64,8,512)), ():())
    """
    _check_order("slice_", layout, crd)
    if not isinstance(layout, Layout):
        if not _is_layout_like(layout):
            raise LayoutError(f"slice_: expected a Layout as the first argument, got {type(layout).__name__}")
        return layout.slice_(crd)  # a swizzled ComposedLayout slices itself
    return _slice_and_offset(layout, crd, "slice_")[0]


def dice(layout: Layout, crd) -> Layout:
    """The modes of the layout (or tuple) where ``crd`` is an integer (all for an integer ``crd``), as ``cute.dice``.

    >>> dice(Layout((4,6,2)), (1, None, 1)), dice(Layout((4,6)), (None, None)), dice((128, 128, 8), (1, None, 1))
    ((4,2):(1,24), ():(), (128, 8))
    """
    _check_order("dice", layout, crd)
    if is_int(crd):
        return layout
    try:
        return _kept(crd, layout, keep_free=False)
    except LayoutError:
        raise LayoutError(f"dice: coordinate {format_tree(crd)} is not congruent with {format_tree(layout)}; give "
                          f"one entry per mode (None for each mode to drop)") from None


def zip_layouts(a: Layout, b: Layout) -> Layout:
    """Pair up the modes of two layouts of equal rank: mode ``i`` of the result is ``(a_i, b_i)``.

    >>> zip_layouts(Layout((2,2), (1,2)), Layout((3,4), (4,12)))
    ((2,3),(2,4)):((1,4),(2,12))
    """
    if a.rank() != b.rank():
        raise LayoutError(f"zip: ranks differ, {a} has {a.rank()} modes and {b} has {b.rank()}")
    return make_layout(*map(make_layout, a, b))
