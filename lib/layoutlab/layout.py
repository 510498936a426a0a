"""``Layout``: a pair (shape, stride) of congruent IntTuples, i.e. a function from coordinates to offsets.

``L = make_layout((4,6), stride=(6,1))`` maps the coordinate ``(i,j)`` to ``6*i + j`` and the 1-D index
``k`` (colexicographic, first mode fastest) to ``L(idx2crd(k, (4,6)))``.  Printing and names follow
the CuTe DSL: ``str(L) == "(4,6):(6,1)"``.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from .errors import LayoutError
from .inttuple import (
    ScaledBasis,
    _add,
    as_int_tuple,
    congruent,
    crd2idx,
    depth as _depth,
    flatten as _flatten,
    format_int_tuple,
    idx2crd,
    is_int,
    is_tuple,
    product,
    prefix_product,
    rank as _rank,
)

__all__ = [
    "Layout",
    "make_layout",
    "make_ordered_layout",
    "make_identity_layout",
    "compact_col_major",
    "compact_row_major",
    "parse_layout",
    "is_layout",
    "shape",
    "stride",
    "cosize",
    "get",
    "select",
    "group_modes",
    "append",
    "prepend",
    "slice_",
    "dice",
    "zip_layouts",
]


def is_layout(x) -> bool:
    """True if ``x`` is a :class:`Layout`: ``is_layout(Layout(4))`` is True, ``is_layout((4,))`` False."""
    return isinstance(x, Layout)


def _check_stride(d, op):
    if isinstance(d, ScaledBasis):
        return d
    if is_int(d):
        return int(d)
    if isinstance(d, (tuple, list)):
        return tuple(_check_stride(e, op) for e in d)
    raise LayoutError(f"{op}: stride {d!r} is not an IntTuple; expected an int, a ScaledBasis or a nested tuple of them")


def _congruent_stride(s, d) -> bool:
    if is_tuple(s):
        return is_tuple(d) and len(s) == len(d) and all(_congruent_stride(x, y) for x, y in zip(s, d))
    return not is_tuple(d)


def _check_shape(s, op):
    if is_tuple(s):
        for e in s:
            _check_shape(e, op)
    elif s < 0:
        raise LayoutError(f"{op}: shape entry {s} is negative; shapes are positive integers")
    elif s == 0:
        raise LayoutError(f"{op}: shape entry 0 is not allowed; every mode of a layout has at least one element")


def _compact_left(shape, current=1):
    """LayoutLeft strides as the CuTe DSL makes them: size-1 modes get stride 0."""
    if is_tuple(shape):
        out = []
        for e in shape:
            out.append(_compact_left(e, current))
            current *= product(e)
        return tuple(out)
    return 0 if shape == 1 else current


def _compact_right(shape, current=1):
    if is_tuple(shape):
        out = []
        for e in reversed(shape):
            out.append(_compact_right(e, current))
            current *= product(e)
        return tuple(reversed(out))
    return 0 if shape == 1 else current


class Layout:
    """A CuTe layout ``shape:stride`` — a function from (nested) coordinates to offsets.

    Math: for a coordinate ``c`` congruent to ``shape`` the offset is ``sum_i c_i * stride_i``
    (an inner product over the leaves); a 1-D index ``k`` is first turned into the natural
    coordinate ``idx2crd(k, shape)`` (first mode fastest).

    Evaluation (``L(...)``):

    * ``L(k)`` with an integer in ``[0, size(L))`` -> offset;
    * ``L((i,j))`` or ``L(i, j)`` with a (nested) coordinate -> offset;
    * a coordinate containing ``None`` (CuTe's ``_``) -> the sub-layout of the free modes (a slice);
    * ``L(np.arange(n))`` -> all offsets as a numpy array (vectorised; see :meth:`table`).

    Example::

        >>> L = Layout(((4,8,4),(2,2,8)), ((128,1,16),(64,8,512)))
        >>> print(L)
        ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))
        >>> L(1), L((1, 2)), L[1]
        (128, 136, (2,2,8):(64,8,512))
    """

    __slots__ = ("shape", "stride", "_hash")

    def __init__(self, shape, stride=None):
        shape = as_int_tuple(shape, "shape", "Layout")
        _check_shape(shape, "Layout")
        if stride is None:
            stride = _compact_left(shape)
        else:
            stride = _check_stride(stride, "Layout")
            if not _congruent_stride(shape, stride):
                raise LayoutError(
                    f"Layout: shape {format_int_tuple(shape)} and stride {_fmt(stride)} are not congruent "
                    f"(they must have the same nesting, e.g. (4,(2,3)):(1,(4,8)))"
                )
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name, value):
        raise AttributeError("Layout is immutable")

    # ----------------------------------------------------------------- basic queries
    def size(self) -> int:
        """Number of coordinates in the domain: ``product(shape)``."""
        return product(self.shape)

    def cosize(self):
        """One past the largest offset, ``L(size-1) + 1`` for non-negative strides (CuTe's ``cosize``)."""
        return cosize(self)

    def rank(self) -> int:
        """Number of top-level modes."""
        return _rank(self.shape)

    def depth(self) -> int:
        """Nesting depth of the shape."""
        return _depth(self.shape)

    def flatten(self) -> "Layout":
        """The same function with all nesting removed: ``((4,2),3):((1,4),8)`` -> ``(4,2,3):(1,4,8)``."""
        return Layout(_flatten(self.shape), _flatten(self.stride)) if is_tuple(self.shape) else self

    @property
    def is_integral(self) -> bool:
        """True when every stride is an integer (an offset layout, not a coordinate layout)."""
        return not _has_basis(self.stride)

    # ----------------------------------------------------------------- structure
    def __getitem__(self, i) -> "Layout":
        """Sub-layout of mode ``i`` (a tuple ``(i, j)`` goes down the nesting), as ``layout[i]`` in the DSL."""
        path = i if isinstance(i, tuple) else (i,)
        s, d = self.shape, self.stride
        for k in path:
            if not is_int(k):
                raise LayoutError(f"Layout[{i!r}]: mode index {k!r} is not an integer; use L(coord) to evaluate or slice")
            if not is_tuple(s):
                if k in (0, -1):
                    continue
                raise LayoutError(f"Layout[{i!r}]: mode {k} does not exist in {self}; a rank-1 layout has only mode 0")
            if not -len(s) <= k < len(s):
                raise LayoutError(f"Layout[{i!r}]: mode {k} does not exist in {self}; valid modes are 0..{len(s) - 1}")
            s, d = s[k], d[k]
        return Layout(s, d)

    def __len__(self):
        return self.rank()

    def __iter__(self):
        for i in range(self.rank()):
            yield self[i]

    # ----------------------------------------------------------------- evaluation
    def __call__(self, *args):
        if len(args) == 0:
            raise LayoutError("Layout(): give an index, a coordinate or a slice")
        crd = args[0] if len(args) == 1 else tuple(args)
        if isinstance(crd, np.ndarray) or isinstance(crd, range) or isinstance(crd, list):
            return self.evaluate_indices(np.asarray(crd))
        if _has_none(crd):
            return slice_(crd, self)
        crd = as_int_tuple(crd, "coordinate", "Layout()")
        _check_coord(crd, self.shape, self)
        return crd2idx(crd, self.shape, self.stride)

    def evaluate_indices(self, idx) -> np.ndarray:
        """Offsets of many 1-D indices at once (a lookup in the cached :meth:`table`, no Python loop)."""
        if not self.is_integral:
            raise LayoutError(f"evaluate_indices: {self} has basis (coordinate) strides; evaluate it element by element")
        idx = np.asarray(idx, dtype=np.int64)
        n = self.size()
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise LayoutError(f"Layout(): index out of range for {self}: indices must lie in [0,{n})")
        return self.table()[idx]

    def table(self) -> np.ndarray:
        """All offsets ``[L(0), L(1), ..., L(size-1)]`` as an int64 numpy array (vectorised)."""
        return _table(self)

    # ----------------------------------------------------------------- protocol
    def __eq__(self, other):
        return isinstance(other, Layout) and self.shape == other.shape and self.stride == other.stride

    def __hash__(self):
        h = self._hash
        if h is None:
            h = hash((self.shape, self.stride))
            object.__setattr__(self, "_hash", h)
        return h

    def __str__(self):
        return f"{format_int_tuple(self.shape)}:{_fmt(self.stride)}"

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))

    def __reduce__(self):
        return (Layout, (self.shape, self.stride))


def _has_basis(d) -> bool:
    if is_tuple(d):
        return any(_has_basis(e) for e in d)
    return isinstance(d, ScaledBasis)


def _has_none(c) -> bool:
    if c is None:
        return True
    if isinstance(c, (tuple, list)):
        return any(_has_none(e) for e in c)
    return False


def _fmt(d) -> str:
    if isinstance(d, (tuple, list)):
        return "(" + ",".join(_fmt(e) for e in d) + ")"
    return str(d)


def _check_coord(crd, shp, layout):
    """Every coordinate lies inside its mode: integer c in [0, size(mode))."""
    if is_tuple(crd):
        if not is_tuple(shp) or len(crd) != len(shp):
            raise LayoutError(
                f"Layout(): coordinate {format_int_tuple(crd)} is not congruent with shape {format_int_tuple(layout.shape)} "
                f"of {layout}; give an index or a coordinate with one entry per mode"
            )
        for c, s in zip(crd, shp):
            _check_coord(c, s, layout)
    else:
        n = product(shp)
        if not 0 <= crd < n:
            raise LayoutError(
                f"Layout(): coordinate {crd} is out of range for a mode of size {n} in {layout}; valid: 0..{n - 1}"
            )


@lru_cache(maxsize=256)
def _table(layout: Layout) -> np.ndarray:
    """Outer-sum construction: offsets of each flat mode, combined with broadcasting (column-major order)."""
    if not layout.is_integral:
        raise LayoutError(f"table: {layout} has basis (coordinate) strides; it maps to coordinates, not offsets")
    shapes = _flatten(layout.shape) if is_tuple(layout.shape) else (layout.shape,)
    strides = _flatten(layout.stride) if is_tuple(layout.stride) else (layout.stride,)
    out = np.zeros(1, dtype=np.int64)
    for s, d in zip(shapes, strides):
        # new index = old + k * (size so far): append mode k as the slow axis.
        out = (out[None, :] + (np.arange(s, dtype=np.int64) * d)[:, None]).reshape(-1)
    out.setflags(write=False)
    return out


# --------------------------------------------------------------------------- constructors


def make_layout(*args, stride=None) -> Layout:
    """Make a layout from a shape (and stride), or concatenate layouts into modes.

    * ``make_layout(shape)``: column-major (LayoutLeft) strides, size-1 modes get stride 0 like the DSL:
      ``make_layout((4,1,6))`` is ``(4,1,6):(1,0,4)``.
    * ``make_layout(shape, stride=...)``: explicit strides.
    * ``make_layout(L0, L1, ...)``: the layout whose mode ``i`` is ``Li``: ``make_layout(4:1, 6:4)`` is ``(4,6):(1,4)``.

    >>> make_layout((4,6), stride=(6,1))
    (4,6):(6,1)
    """
    if args and all(isinstance(a, Layout) for a in args):
        if stride is not None:
            raise LayoutError("make_layout: stride= cannot be combined with layouts as modes")
        return Layout(tuple(a.shape for a in args), tuple(a.stride for a in args))
    if len(args) == 2 and stride is None:
        args, stride = (args[0],), args[1]
    if len(args) != 1:
        raise LayoutError(f"make_layout: expected one shape (or layouts as modes), got {len(args)} arguments")
    if isinstance(args[0], (list, tuple)) and args[0] and all(isinstance(a, Layout) for a in args[0]):
        return make_layout(*args[0])
    return Layout(args[0], stride)


def compact_col_major(shape) -> Layout:
    """LayoutLeft: first mode fastest. ``compact_col_major((4,6))`` is ``(4,6):(1,4)``."""
    return Layout(shape)


def compact_row_major(shape) -> Layout:
    """LayoutRight: last mode fastest. ``compact_row_major((4,6))`` is ``(4,6):(6,1)``."""
    shape = as_int_tuple(shape, "shape", "compact_row_major")
    return Layout(shape, _compact_right(shape))


def make_ordered_layout(shape, order) -> Layout:
    """Compact layout whose modes are laid out in the given ``order`` (rank 0 = fastest).

    Mode ``i`` gets stride ``prod(size of modes with smaller order)``; size-1 modes get stride 0.
    ``make_ordered_layout((4,6,2), order=(2,0,1))`` is ``(4,6,2):(12,1,6)``.
    """
    shape = as_int_tuple(shape, "shape", "make_ordered_layout")
    order = as_int_tuple(order, "order", "make_ordered_layout")
    if not is_tuple(shape):
        return Layout(shape)
    fs, fo = _flatten(shape), (_flatten(order) if is_tuple(order) else (order,))
    if len(fo) != len(fs):
        raise LayoutError(
            f"make_ordered_layout: order {format_int_tuple(order)} has {len(fo)} entries but shape "
            f"{format_int_tuple(shape)} has {len(fs)} leaves; give one order per leaf"
        )
    if len(set(fo)) != len(fo):
        raise LayoutError(f"make_ordered_layout: order {format_int_tuple(order)} repeats a value; orders must be distinct")
    strides = [0] * len(fs)
    current = 1
    for i in sorted(range(len(fs)), key=lambda k: fo[k]):
        strides[i] = 0 if fs[i] == 1 else current
        current *= fs[i]
    from .inttuple import unflatten

    return Layout(shape, unflatten(tuple(strides), shape))


def make_identity_layout(shape) -> Layout:
    """The coordinate layout of ``shape``: maps each index to its own natural coordinate.

    Strides are unit bases ``1@i`` (nested ``1@j@i`` for sub-modes; an integer shape gets stride 1),
    printed as the DSL does:
    ``make_identity_layout((4,6))`` is ``(4,6):(1@0,1@1)`` and maps ``5 -> (1,1)``.
    """
    shape = as_int_tuple(shape, "shape", "make_identity_layout")

    def basis(s, path):
        if is_tuple(s):
            return tuple(basis(e, (i,) + path) for i, e in enumerate(s))
        return ScaledBasis(1, path) if path else 1

    if not is_tuple(shape):
        return Layout(shape, 1)  # the rank-1 coordinate is the index itself (CuTe's E<>)
    return Layout(shape, basis(shape, ()))


_TOKEN = re.compile(r"\s*(?:(\()|(\))|(,)|(-?\d+(?:@\d+)*)|(.))")


def _parse_tuple(text: str, what: str):
    pos = 0
    tokens = []
    for m in _TOKEN.finditer(text):
        if m.group(5) is not None:
            raise LayoutError(f"parse_layout: unexpected character {m.group(5)!r} in {what} {text!r}; "
                              f"use CuTe notation like ((4,8),2):((1,4),32)")
        if m.group(0).strip():
            tokens.append(m.group(0).strip())
    if not tokens:
        raise LayoutError(f"parse_layout: empty {what} in {text!r}")

    def parse(i):
        t = tokens[i]
        if t == "(":
            items = []
            i += 1
            if i < len(tokens) and tokens[i] == ")":
                raise LayoutError(f"parse_layout: empty tuple '()' in {what} {text!r}")
            while True:
                item, i = parse(i)
                items.append(item)
                if i >= len(tokens):
                    raise LayoutError(f"parse_layout: missing ')' in {what} {text!r}")
                if tokens[i] == ",":
                    i += 1
                    continue
                if tokens[i] == ")":
                    return tuple(items), i + 1
                raise LayoutError(f"parse_layout: expected ',' or ')' at {tokens[i]!r} in {what} {text!r}")
        if t in (")", ","):
            raise LayoutError(f"parse_layout: unexpected {t!r} in {what} {text!r}")
        if "@" in t:
            v, *modes = t.split("@")
            return ScaledBasis(int(v), tuple(int(m) for m in modes)), i + 1
        return int(t), i + 1

    value, end = parse(0)
    if end != len(tokens):
        raise LayoutError(f"parse_layout: trailing text after {what} in {text!r}")
    return value


def parse_layout(text: str) -> Layout:
    """Read CuTe's printed notation ``shape:stride`` back into a :class:`Layout`.

    A bare shape (no ``:``) gets LayoutLeft strides.  ``_`` prefixes of static integers (``_4``) are accepted.

    >>> parse_layout("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))")((1, 2))
    136
    >>> parse_layout("(_4,_6)")
    (4,6):(1,4)
    """
    if not isinstance(text, str):
        raise LayoutError(f"parse_layout: expected a string like '(4,6):(1,4)', got {type(text).__name__}")
    t = text.strip().replace("_", "")
    if t.count(":") > 1:
        raise LayoutError(f"parse_layout: more than one ':' in {text!r}; write shape:stride, e.g. (4,6):(1,4)")
    if ":" in t:
        s, d = t.split(":")
        shp = _parse_tuple(s, "shape")
        if _has_basis(shp):
            raise LayoutError(f"parse_layout: shape {s!r} contains a basis element; shapes are integers")
        return Layout(shp, _parse_tuple(d, "stride"))
    return Layout(_parse_tuple(t, "shape"))


# --------------------------------------------------------------------------- free functions (cute.* names)


def shape(x, mode=()):
    """Shape of a layout (or an IntTuple itself), optionally of a sub-mode.

    >>> shape(Layout(((4,8),6))), shape(Layout(((4,8),6)), mode=[0])
    (((4, 8), 6), (4, 8))
    """
    if not isinstance(x, Layout) and isinstance(getattr(x, "layout", None), Layout):
        x = x.layout  # a Tensor
    s = x.shape if isinstance(x, Layout) else as_int_tuple(x, "shape", "shape")
    for m in [mode] if isinstance(mode, int) else mode:
        s = s[m] if is_tuple(s) else s
    return s


def stride(x, mode=()):
    """Stride of a layout, optionally of a sub-mode.

    >>> stride(Layout(((4,8),6)), mode=[1])
    32
    """
    if not isinstance(x, Layout) and isinstance(getattr(x, "layout", None), Layout):
        x = x.layout  # a Tensor
    if not isinstance(x, Layout):
        raise LayoutError(f"stride: expected a Layout, got {type(x).__name__}")
    d = x.stride
    for m in [mode] if isinstance(mode, int) else mode:
        d = d[m] if is_tuple(d) else d
    return d


def cosize(x, mode=()):
    """Codomain size: ``L(size-1 coordinate of each mode) + 1`` with |strides|, i.e. one past the largest offset.

    Math: ``cosize(L) = sum_i (s_i - 1) * |d_i| + 1``.  ``cosize((4,6):(1,10)) == 54``.
    For a coordinate layout the result is the coordinate shape product.
    """
    if not isinstance(x, Layout) and isinstance(getattr(x, "layout", None), Layout):
        x = x.layout  # a Tensor
    if not isinstance(x, Layout):
        raise LayoutError(f"cosize: expected a Layout, got {type(x).__name__}")
    for m in [mode] if isinstance(mode, int) else mode:
        x = x[m]
    shapes = _flatten(x.shape) if is_tuple(x.shape) else (x.shape,)
    strides = _flatten(x.stride) if is_tuple(x.stride) else (x.stride,)
    if x.is_integral:
        return sum((s - 1) * abs(d) for s, d in zip(shapes, strides)) + 1
    co = 0
    for s, d in zip(shapes, strides):
        if isinstance(d, ScaledBasis):
            co = _add(co, ScaledBasis((s - 1) * abs(d.value), d.modes).as_coordinate())
        else:
            co = _add(co, (s - 1) * abs(d))
    return product(_add_leafwise_one(co))


def _add_leafwise_one(t):
    if is_tuple(t):
        return tuple(_add_leafwise_one(e) for e in t)
    return t + 1


def get(layout: Layout, mode) -> Layout:
    """Sub-layout at ``mode`` (an int, or a path ``[i, j]``): ``get(L, [1, 0])`` is ``L[1][0]``."""
    return layout[tuple(mode) if isinstance(mode, (list, tuple)) else mode]


def select(layout: Layout, mode) -> Layout:
    """Layout made of the chosen top-level modes, in the given order.

    >>> select(Layout((2,3,4)), [2, 0])
    (4,2):(6,1)
    """
    modes = [mode] if is_int(mode) else list(mode)
    return make_layout(*[layout[m] for m in modes])


def group_modes(layout: Layout, begin: int, end: int | None = None) -> Layout:
    """Group modes ``[begin, end)`` into one nested mode: ``group_modes((2,3,4):(1,2,6), 0, 2)`` is ``((2,3),4):((1,2),6)``."""
    r = layout.rank()
    if end is None:
        end = r
    if end < 0:
        end += r
    if not (0 <= begin < end <= r):
        raise LayoutError(f"group_modes: range [{begin},{end}) is not a non-empty range of the {r} modes of {layout}")
    modes = list(layout) if is_tuple(layout.shape) else [layout]
    grouped = make_layout(*modes[begin:end])
    return make_layout(*modes[:begin], grouped, *modes[end:])


def append(layout: Layout, elem: Layout | None = None, up_to_rank: int | None = None) -> Layout:
    """Append ``elem`` (default ``1:0``) as a new last mode; with ``up_to_rank`` pad to that rank.

    ``append((4,6):(1,4), 2:24)`` is ``(4,6,2):(1,4,24)``; ``append(4:1, up_to_rank=3)`` is ``(4,1,1):(1,0,0)``.
    """
    elem = Layout(1, 0) if elem is None else elem
    modes = list(layout) if is_tuple(layout.shape) else [layout]
    if up_to_rank is None:
        return make_layout(*modes, elem)
    if up_to_rank < len(modes):
        raise LayoutError(f"append: up_to_rank={up_to_rank} is smaller than the rank {len(modes)} of {layout}")
    if up_to_rank == 1 and not is_tuple(layout.shape):
        return layout
    return make_layout(*modes, *([elem] * (up_to_rank - len(modes))))


def prepend(layout: Layout, elem: Layout | None = None, up_to_rank: int | None = None) -> Layout:
    """Prepend ``elem`` (default ``1:0``) as a new first mode; with ``up_to_rank`` pad to that rank.

    >>> prepend(Layout((4,6)), Layout(2,24))
    (2,4,6):(24,1,4)
    """
    elem = Layout(1, 0) if elem is None else elem
    modes = list(layout) if is_tuple(layout.shape) else [layout]
    if up_to_rank is None:
        return make_layout(elem, *modes)
    if up_to_rank < len(modes):
        raise LayoutError(f"prepend: up_to_rank={up_to_rank} is smaller than the rank {len(modes)} of {layout}")
    if up_to_rank == 1 and not is_tuple(layout.shape):
        return layout
    return make_layout(*([elem] * (up_to_rank - len(modes))), *modes)


def _slice_keep(c, x):
    """Keep the parts of ``x`` where ``c`` is ``None`` (CuTe's ``slice``)."""
    if c is None:
        return (x,)
    if is_tuple(c):
        out = ()
        for ci, xi in zip(c, x):
            out += _slice_keep(ci, xi)
        return out
    return ()


def _dice_keep(c, x):
    if c is None:
        return ()
    if is_tuple(c):
        out = ()
        for ci, xi in zip(c, x):
            out += _dice_keep(ci, xi)
        return out
    return (x,)


def _check_slice(c, s, layout, op):
    if c is None:
        return
    if is_tuple(c):
        if not is_tuple(s) or len(c) != len(s):
            raise LayoutError(f"{op}: coordinate {_fmt_crd(c)} is not congruent with shape {format_int_tuple(layout.shape)} "
                              f"of {layout}; use None (CuTe's _) for each mode to keep")
        for ci, si in zip(c, s):
            _check_slice(ci, si, layout, op)
    else:
        if not is_int(c):
            raise LayoutError(f"{op}: coordinate entry {c!r} must be an integer or None")
        n = product(s)
        if not 0 <= c < n:
            raise LayoutError(f"{op}: coordinate {c} is out of range for a mode of size {n} in {layout}; valid: 0..{n - 1}")


def _fmt_crd(c):
    if c is None:
        return "_"
    if isinstance(c, (tuple, list)):
        return "(" + ",".join(_fmt_crd(e) for e in c) + ")"
    return str(c)


def slice_(crd, layout: Layout) -> Layout:
    """The sub-layout of the modes where ``crd`` is ``None`` (CuTe's ``_``); fixed entries are dropped.

    Like ``cute.slice_`` the result keeps the kept modes as a tuple (rank-1 results stay wrapped):
    ``slice_((None, 3), ((4,8,4),(2,2,8)):(...))`` is ``((4,8,4)):((128,1,16))``.  The offset of the
    fixed part is ``layout(crd with None -> 0)``; see :func:`slice_and_offset`.
    """
    if not isinstance(layout, Layout) and hasattr(layout, "slice_"):  # a swizzled ComposedLayout
        return layout.slice_(crd)
    if isinstance(crd, list):
        crd = tuple(crd)
    if crd is None:
        return layout
    _check_slice(crd, layout.shape, layout, "slice_")
    if not is_tuple(crd):
        return _empty_slice(layout)
    s = _slice_keep(crd, layout.shape)
    d = _slice_keep(crd, layout.stride)
    if not s:
        return _empty_slice(layout)
    return Layout(s, d)


def _empty_slice(layout):
    raise LayoutError(f"slice_: the coordinate fixes every mode of {layout}; there is nothing left to slice "
                      f"(evaluate it with layout(coord) instead)")


def dice(crd, layout: Layout) -> Layout:
    """The complement of :func:`slice_`: keep the modes where ``crd`` is an integer (not ``None``).

    >>> dice((1, None), Layout((4,6)))
    (4):(1)
    """
    if isinstance(crd, list):
        crd = tuple(crd)
    s = _dice_keep(crd, layout.shape)
    d = _dice_keep(crd, layout.stride)
    if not s:
        raise LayoutError(f"dice: the coordinate keeps no mode of {layout}")
    return Layout(s, d)


def zip_layouts(a: Layout, b: Layout) -> Layout:
    """Pair up the modes of two layouts of equal rank: mode ``i`` of the result is ``(a_i, b_i)``.

    ``zip_layouts((2,2):(1,2), (3,4):(4,12))`` is ``((2,3),(2,4)):((1,4),(2,12))``.
    """
    if a.rank() != b.rank():
        raise LayoutError(f"zip: ranks differ, {a} has {a.rank()} modes and {b} has {b.rank()}")
    ma = list(a) if is_tuple(a.shape) else [a]
    mb = list(b) if is_tuple(b.shape) else [b]
    return make_layout(*[make_layout(x, y) for x, y in zip(ma, mb)])
