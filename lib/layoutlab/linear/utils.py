"""Triton's ``LayoutUtils`` and ``divideLeft`` / ``divideRight`` in snake case (``None`` for ``std::optional``)."""

from __future__ import annotations

from functools import reduce
from operator import or_
from typing import NamedTuple

from ..errors import LayoutError
from .f2 import is_pow2, log2, rank_f2
from .layout import LinearLayout

__all__ = ["divide_left", "divide_right", "get_basis_mask", "get_input_basis_mask", "IntegerStride",
           "get_integer_strides", "factor_maximal_identity_prefix", "square_sublayout_is_identity",
           "rename_linear_layout_dims", "is_linear_layout_image_subset", "get_reps", "ensure_layout_not_smaller_than",
           "ColumnAction"]


def _divide(A: LinearLayout, B: LinearLayout, left: bool) -> LinearLayout | None:
    """The C with ``B * C == A`` (``left``) or ``C * B == A``, or ``None``: A less B's bases in each in-dim (the
    first ones if ``left``), kept if it rebuilds A (a basis of A that mixes B's bits with C's is no product)."""
    pairs = ((A.get_in_dim_names(), B.get_in_dim_names()), (A.get_out_dim_names(), B.get_out_dim_names()))
    if any([d for d in a if d in b] != b for a, b in pairs):     # B's dims must be among A's, in A's order
        return None
    n_b = {d: log2(dict(B.in_dims).get(d, 1)) for d in A.get_in_dim_names()}
    scale = [dict(B.out_dims).get(o, 1) for o in A.get_out_dim_names()]     # B's size in each out-dim of A
    if any(len(vs) < n_b[d] for d, vs in A._bases) or any(s < k for (_, s), k in zip(A._out_dims, scale)):
        return None
    c_out = [(o, s // k) for (o, s), k in zip(A._out_dims, scale)]
    if left:
        c_bases = [(d, [[x // k for x, k in zip(v, scale)] for v in vs[n_b[d]:]]) for d, vs in A._bases]
    else:
        c_bases = [(d, vs[:len(vs) - n_b[d]]) for d, vs in A._bases]
    if any(x >= s for _, vs in c_bases for v in vs for x, (_, s) in zip(v, c_out)):
        return None
    C = LinearLayout._make(c_bases, c_out)
    return C if (B * C if left else C * B) == A else None


def divide_left(A: LinearLayout, B: LinearLayout) -> LinearLayout | None:
    """C with ``B * C == A``, A = [[B, 0], [0, C]] (B minor), or ``None`` (``divideLeft``); C keeps A's dims.

    >>> A = LinearLayout.identity_1d(8, "in", "out") * LinearLayout.zeros_1d(4, "in", "out")
    >>> divide_left(A, LinearLayout.identity_1d(8, "in", "out")) == LinearLayout.zeros_1d(4, "in", "out")
    True
    """
    return _divide(A, B, left=True)


def divide_right(A: LinearLayout, B: LinearLayout) -> LinearLayout | None:
    """C with ``C * B == A``, A = [[C, 0], [0, B]] (B major), or ``None`` (``divideRight``).

    >>> A = LinearLayout.identity_1d(8, "in", "out") * LinearLayout.zeros_1d(4, "in", "out")
    >>> divide_right(A, LinearLayout.zeros_1d(4, "in", "out")) == LinearLayout.identity_1d(8, "in", "out")
    True
    """
    return _divide(A, B, left=False)


def get_basis_mask(layout: LinearLayout, in_dims, out_dim: str) -> int:
    """OR of the ``out_dim`` parts of every basis of ``in_dims``: the output bits they can touch.

    >>> L = LinearLayout.from_bases([("x", [[1, 8], [2, 16]]), ("y", [[4, 1]])], ["out0", "out1"], [8, 32], False)
    >>> bin(get_basis_mask(L, ["x", "y"], "out0"))
    '0b111'
    """
    k = layout._out_index(out_dim, "get_basis_mask")
    return reduce(or_, (v[k] for d in in_dims for v in layout._in_bases(d, "get_basis_mask")), 0)


def get_input_basis_mask(layout: LinearLayout, in_dim: str, out_dims) -> int:
    """Bit i set when basis i of ``in_dim`` is nonzero in one of ``out_dims``.

    >>> L = LinearLayout.from_bases([("x", [[1, 0], [0, 2], [0, 0], [4, 8]])], ["out0", "out1"], [8, 16], False)
    >>> bin(get_input_basis_mask(L, "x", ["out1"]))
    '0b1010'
    """
    ks = [layout._out_index(o, "get_input_basis_mask") for o in out_dims]
    vs = layout._in_bases(in_dim, "get_input_basis_mask")
    return sum(1 << i for i, v in enumerate(vs) if any(v[k] for k in ks))


class IntegerStride(NamedTuple):
    """An input dim that adds ``stride * x`` to an output dim; ``basis_mask`` holds the output bits it touches.

    >>> IntegerStride(2, 0b110).stride
    2
    """
    stride: int
    basis_mask: int


def get_integer_strides(layout: LinearLayout, out_dim: str, in_dims) -> dict | None:
    """``{in_dim: IntegerStride}`` when each in-dim adds a stride (basis i = stride * 2^i) on bits no other dim
    touches (XOR is then addition); ``None`` otherwise (Triton's ``getIntegerStrides``).

    >>> L = LinearLayout.from_bases([("x", [[2], [4]]), ("y", [[1]])], ["out"])
    >>> get_integer_strides(L, "out", ["x"])
    {'x': IntegerStride(stride=2, basis_mask=6)}
    """
    k = layout._out_index(out_dim, "get_integer_strides")
    if len(set(in_dims)) != len(in_dims):
        raise LayoutError(f"get_integer_strides: in_dims {list(in_dims)} repeat a dim")
    result, selected = {}, 0
    for d in in_dims:
        vs = layout._in_bases(d, "get_integer_strides")
        stride = vs[0][k] if vs else 0
        mask = get_basis_mask(layout, [d], out_dim)
        if stride and not is_pow2(stride) or any(v[k] != stride << i for i, v in enumerate(vs)) or selected & mask:
            return None
        selected |= mask
        result[d] = IntegerStride(stride, mask)
    if selected & get_basis_mask(layout, [d for d in layout.get_in_dim_names() if d not in in_dims], out_dim):
        return None
    return result


def factor_maximal_identity_prefix(layout: LinearLayout, in_dim: str, out_dim: str, max_size: int):
    """The largest ``(size, q)``, size <= ``max_size``, with ``identity_1d(size, in_dim, out_dim) * q == layout``.

    >>> L = LinearLayout.from_bases([("x", [[1], [2], [8]]), ("other", [[4]])], ["out"], [16], False)
    >>> factor_maximal_identity_prefix(L, "x", "out", 8)[0]
    4
    """
    layout._in_bases(in_dim, "factor_maximal_identity_prefix")
    layout._out_index(out_dim, "factor_maximal_identity_prefix")
    if not is_pow2(max_size):
        raise LayoutError(f"factor_maximal_identity_prefix: max_size {max_size} is not a power of two")
    best, size = (1, layout), 2
    while size <= max_size and (q := divide_left(layout, LinearLayout.identity_1d(size, in_dim, out_dim))) is not None:
        best, size = (size, q), size * 2
    return best


def square_sublayout_is_identity(layout: LinearLayout, dim_names) -> bool:
    """Whether ``layout`` on ``dim_names`` -> ``dim_names`` is the identity (``squareSublayoutIsIdentity``).

    >>> square_sublayout_is_identity(LinearLayout.identity_1d(4, "in", "in"), ["in"])
    True
    """
    return (all(layout.get_in_dim_size(d) == layout.get_out_dim_size(d) for d in dim_names)
            and layout.sublayout_is_identity(dim_names, dim_names))


def rename_linear_layout_dims(layout: LinearLayout, in_renames=(), out_renames=()) -> LinearLayout:
    """The same map with dims renamed by ``[(old, new), ...]`` pairs, in place (order kept).

    >>> L = LinearLayout.from_bases([("a", [[1, 0]]), ("b", [[0, 1]])], ["x", "y"])
    >>> rename_linear_layout_dims(L, [("a", "b"), ("b", "a")], [("x", "y"), ("y", "x")]).bases
    [('b', [[1, 0]]), ('a', [[0, 1]])]
    """
    def mapping(names, renames, kind):
        table = {}
        for old, new in renames:
            if old not in names:
                raise LayoutError(f"rename_linear_layout_dims: '{old}' is not an {kind} dim of {names}")
            if old in table:
                raise LayoutError(f"rename_linear_layout_dims: {kind} dim '{old}' is renamed twice")
            table[old] = new
        final = [table.get(n, n) for n in names]
        if len(set(final)) != len(final):
            raise LayoutError(f"rename_linear_layout_dims: renaming {kind} dims {names} gives {final}, which repeat")
        return table

    ins = mapping(layout.get_in_dim_names(), in_renames, "input")
    outs = mapping(layout.get_out_dim_names(), out_renames, "output")
    return LinearLayout._make([(ins.get(d, d), vs) for d, vs in layout._bases],
                              [(outs.get(o, o), s) for o, s in layout.out_dims])


def is_linear_layout_image_subset(subset: LinearLayout, superset: LinearLayout) -> bool:
    """Whether every output of ``subset`` is one of ``superset`` (span inclusion; out-dims matched by name).

    >>> sup = LinearLayout.from_bases([("x", [[1, 1], [2, 0]])], ["out0", "out1"], [4, 2], False)
    >>> is_linear_layout_image_subset(LinearLayout.from_bases([("o", [[3, 1]])], ["out0", "out1"], [4, 2], False), sup)
    True
    """
    sup_out = dict(superset.out_dims)
    if any(o not in sup_out or s > sup_out[o] for o, s in subset.out_dims):
        return False
    widened = LinearLayout._make(subset._bases_over(superset.get_out_dim_names()).items(), superset.out_dims)
    cols_sup, n = superset._columns(), superset.total_out_dim_size_log2()
    return rank_f2(cols_sup + widened._columns(), n) == rank_f2(cols_sup, n)     # columns as rows: rank(M^T) = rank(M)


def get_reps(cvt: LinearLayout, tile: LinearLayout) -> LinearLayout | None:
    """``cvt`` with ``tile``'s leading bases zeroed, or ``None`` when it does not start with the tile or its other
    bases touch the tile's bits (Triton's ``getReps``).

    >>> cvt = LinearLayout.from_bases([("in", [[1, 0], [0, 1]])], ["out0", "out1"])
    >>> get_reps(cvt, LinearLayout.from_bases([("in", [[1]])], ["out0"])).bases
    [('in', [[0, 0], [0, 1]])]
    """
    for o in tile.get_out_dim_names():
        cvt._out_index(o, "get_reps")
    outs = cvt.get_out_dim_names()
    tile_bases = tile._bases_over(outs)
    mask = [reduce(or_, col, 0) for col in zip(*(v for vs in tile_bases.values() for v in vs))]
    bases = []
    for d, vs in cvt._bases:
        head = tile_bases.get(d, [])
        if [list(v) for v in vs[:len(head)]] != head or any(x & m for v in vs[len(head):] for x, m in zip(v, mask)):
            return None
        bases.append((d, [[0] * len(outs)] * len(head) + list(vs[len(head):])))
    return LinearLayout._make(bases, cvt.out_dims)


def ensure_layout_not_smaller_than(layout: LinearLayout, shape: dict) -> LinearLayout:
    """Repeat ``layout`` along its first in-dim until out-dim d reaches ``shape[d]`` (``ensureLayoutNotSmallerThan``).

    >>> ensure_layout_not_smaller_than(LinearLayout.identity_1d(2, "register", "dim0"), {"dim0": 8}).bases
    [('register', [[1], [2], [4]])]
    """
    if set(shape) != set(layout.get_out_dim_names()):
        raise LayoutError(f"ensure_layout_not_smaller_than: shape {shape} must name exactly the out dims "
                          f"{layout.get_out_dim_names()}")
    for o in layout.get_out_dim_names():
        have, want = layout.get_out_dim_size(o), int(shape[o])
        if have < want:
            if not layout.get_in_dim_names():
                raise LayoutError(f"ensure_layout_not_smaller_than: out-dim '{o}' must grow from {have} to {want}, "
                                  "but the layout has no input dim to repeat along; give it one (even of size 1)")
            first = layout.get_in_dim_names()[0]
            if want % have:
                raise LayoutError(f"ensure_layout_not_smaller_than: out-dim '{o}' has size {have}, which does "
                                  f"not divide the wanted {want}")
            layout = layout * LinearLayout.identity_1d(want // have, first, o)
    return layout


class ColumnAction:
    """New basis i of ``in_dim`` is old basis ``action[i]``, on a layout or that dim's values (``ColumnAction``).

    >>> ColumnAction([2, 0, 1], "register", 3).apply([1, 2, 3, 4, 5, 6, 7, 8])
    [1, 5, 2, 6, 3, 7, 4, 8]
    """

    def __init__(self, action, in_dim: str, in_size_log2: int):
        action = [int(a) for a in action]
        if len(set(action)) != len(action) or any(not 0 <= a < in_size_log2 for a in action):
            raise LayoutError(f"ColumnAction: action {action} must list distinct bases in [0, {in_size_log2})")
        self.action, self.in_dim, self.in_size_log2 = action, in_dim, int(in_size_log2)

    def is_identity(self) -> bool:
        """Whether the action keeps every basis in place.

        >>> ColumnAction([0, 1], "register", 2).is_identity()
        True
        """
        return self.action == list(range(self.in_size_log2))

    def apply(self, target):
        """The layout with ``in_dim``'s bases reordered, or values[sum of bit j of i times 2^action[j]] for each i.

        >>> ColumnAction([1, 0], "in", 3).apply(LinearLayout.identity_1d(8, "in", "out")).bases
        [('in', [[2], [1]])]
        """
        if isinstance(target, LinearLayout):
            vs = dict(target._bases).get(self.in_dim)
            if vs is None or len(vs) != self.in_size_log2:
                raise LayoutError(f"ColumnAction.apply: the layout's in-dim '{self.in_dim}' needs "
                                  f"{self.in_size_log2} bases, it has {None if vs is None else len(vs)}")
            return LinearLayout._make([(d, [vs[a] for a in self.action] if d == self.in_dim else b)
                                       for d, b in target._bases], target.out_dims)
        values = list(target)
        if len(values) != 1 << self.in_size_log2:
            raise LayoutError(f"ColumnAction.apply: {len(values)} values, expected 2^{self.in_size_log2}")
        return [values[sum(((i >> j) & 1) << a for j, a in enumerate(self.action))]
                for i in range(1 << len(self.action))]
