"""A lightweight ``Tensor`` (an engine plus a Layout) as the CuTe DSL's ``cute.make_tensor``, printed the same way;
:func:`local_tile` (a CTA's tiles) and :func:`local_partition` (a thread's share of a tile).
"""

from __future__ import annotations

from math import gcd

from .algebra import LayoutWrapper, coalesce, composition, raked_product, right_inverse, zipped_divide
from .algebra import _need_layout
from ..errors import LayoutError
from .inttuple import (_add, as_int_tuple, crd2idx, format_tree, is_tuple, leaves, product_each, rank, unflatten,
                       zip_leaves)
from .basis import is_int
from .layout import Layout, _has_none, compact_col_major, dice, make_identity_layout, make_layout, slice_and_offset

__all__ = ["Tensor", "make_tensor", "make_identity_tensor", "local_tile", "local_partition", "Step", "X",
           "get_flat_coord", "make_layout_tv", "domain_distribute"]

X = None
"""CuTe's ``X`` in a ``Step``: this mode of the tiler/coordinate is projected away (the DSL writes ``None``)."""


def Step(*modes):
    """A projection for :func:`local_tile`: ``Step(1, X, 1)`` (C++'s ``Step<_1,X,_1>``) keeps modes 0 and 2.

    >>> Step(1, X, 1)
    (1, None, 1)
    """
    return modes


class Tensor(LayoutWrapper):
    """A view ``engine`` (numpy array, integer or coordinate) + ``iterator`` + ``layout``: ``T[c]`` is
    ``engine[iterator + layout(c)]`` (or the counting value ``iterator + layout(c)``); ``None`` slices.

    >>> t = make_tensor(0, Layout((5120, 4096)))
    >>> t[None, 3], t[7, 3]
    (tensor<15360 o (5120):(1)>, 15367)
    """

    __slots__ = ("engine", "iterator", "layout")

    def __init__(self, engine, layout: Layout, iterator=None):
        _need_layout(layout, "Tensor", "layout")
        self.layout, self.engine = layout, None
        if is_int(engine) or is_tuple(engine):
            self.iterator = engine if iterator is None else iterator
        else:
            import numpy as np

            if not isinstance(engine, np.ndarray):
                raise LayoutError(f"Tensor: engine must be a numpy array, an integer or a coordinate, "
                                  f"got {type(engine).__name__}")
            self.engine = engine.reshape(-1, order="F" if engine.flags.f_contiguous else "C")
            self.iterator = 0 if iterator is None else iterator

    def _algebra_layout(self) -> Layout:
        return self.layout

    def _with_layout(self, layout) -> "Tensor":
        """The same engine and iterator over ``layout`` (``cute.composition(tensor, tiler)`` and friends)."""
        return Tensor(self.iterator if self.engine is None else self.engine, layout, self.iterator)

    stride = property(lambda self: self.layout.stride)  # shape, size and rank: LayoutWrapper's

    def _offset(self, crd):
        return _add(self.iterator, self.layout(crd))

    def __getitem__(self, crd):
        crd = tuple(crd) if isinstance(crd, list) else crd
        if _has_none(crd):
            return _slice_tensor(self, self.layout, crd, "Tensor")
        off = self._offset(crd)
        if self.engine is None:
            return off
        if is_tuple(off):
            raise LayoutError("Tensor: a coordinate-valued layout cannot index an array engine")
        if not 0 <= off < self.engine.size:
            raise LayoutError(f"Tensor: offset {off} is outside the engine's {self.engine.size} elements")
        return self.engine[off]

    __call__ = __getitem__

    def __setitem__(self, crd, value):
        if self.engine is None:
            raise LayoutError("Tensor: cannot assign into a counting (offset/coordinate) tensor")
        self.engine[self[crd].offsets() if _has_none(crd) else self._offset(crd)] = value

    def offsets(self):
        """``iterator + layout(i)`` for every index ``i`` (integer engines and arrays)."""
        if is_tuple(self.iterator):
            raise LayoutError("offsets: a coordinate tensor has coordinate values; index it element by element")
        return self.iterator + self.layout.table()

    def values(self):
        """All elements in index order: array values, or the counting values for an integer engine."""
        offs = self.offsets()
        return offs if self.engine is None else self.engine[offs]

    def __str__(self):
        engine = "" if self.engine is None else f"{self.engine.dtype}[{self.engine.size}]+"
        return f"tensor<{engine}{format_tree(self.iterator)} o {self.layout}>"

    __repr__ = __str__


def make_tensor(engine, layout: Layout) -> Tensor:
    """A tensor over ``engine`` (numpy array, or an integer start offset as in ``cute.make_tensor(0, layout)``).

    >>> make_tensor(0, Layout((4, 6)))
    tensor<0 o (4,6):(1,4)>
    """
    return Tensor(engine, layout)


def make_identity_tensor(shape) -> Tensor:
    """The tensor mapping each coordinate to itself, as ``cute.make_identity_tensor``.

    >>> t = make_identity_tensor((4, 6)); t, t[1, 2], t[9]
    (tensor<(0,0) o (4,6):(1@0,1@1)>, (1, 2), (1, 2))
    """
    shape = as_int_tuple(shape, "shape", "make_identity_tensor")
    return Tensor((0,) * len(shape) if is_tuple(shape) else 0, make_identity_layout(shape))


def _dice(op, proj, x, what):
    """Keep the modes of ``x`` (a tuple or a Layout) where the projection ``proj`` is not ``None`` (C++ ``dice``)."""
    x = tuple(x) if isinstance(x, list) else x
    if not is_tuple(proj):
        return x
    modes = getattr(x, "shape", x)  # a Layout's modes, or the tuple's
    if not is_tuple(modes) or len(modes) != len(proj):
        raise LayoutError(f"{op}: projection {proj!r} has {len(proj)} modes but the {what} {x!r} has "
                          f"{rank(modes)}; give one Step entry per mode (one entry per mode of the {what})")
    return dice(x, proj)


def _unwrap(t):
    """``t[0]`` for a rank-1 ``t`` (a tuple or a Layout), else ``t``: CuTe's rank-1 tilers and coordinates are bare."""
    return t[0] if len(t) == 1 else t


def local_tile(tensor: Tensor, tiler, coord, proj=None) -> Tensor:
    """The tile(s) of ``tensor`` at tile coordinate ``coord``: ``zipped_divide(tensor, tiler)`` sliced with
    ``(_, coord)`` (``None`` keeps a tile mode); ``proj`` first drops the modes marked ``X``.  sgemm_nt_1's A tile:

    >>> mA = make_tensor(0, Layout((5120, 4096)))
    >>> local_tile(mA, (128, 128, 8), (3, 0, None), Step(1, X, 1))
    tensor<384 o (128,8,512):(1,5120,40960)>
    """
    if not isinstance(tensor, Tensor):
        raise LayoutError(f"local_tile: expected a Tensor, got {type(tensor).__name__}")
    tiler, coord = _dice("local_tile", proj, tiler, "tiler"), _dice("local_tile", proj, coord, "coordinate")
    z = zipped_divide(tensor.layout, tiler)
    r1 = z[1].rank()
    coord = coord if is_tuple(coord) else (coord,)
    if len(coord) > r1:
        raise LayoutError(f"local_tile: coordinate {coord!r} has {len(coord)} modes but there are only {r1} tile modes")
    rest = _unwrap(coord + (None,) * (r1 - len(coord)))
    return _slice_tensor(tensor, z, (_unwrap((None,) * rank(tiler)), rest), "local_tile")


def _slice_tensor(tensor, layout, crd, op):
    """The sub-tensor of ``layout``'s free modes at ``crd``, its iterator moved to the slice's origin."""
    try:
        sub, origin = slice_and_offset(crd, layout)
    except LayoutError as e:
        raise LayoutError(f"{op}: {e}") from None
    return Tensor(0 if tensor.engine is None else tensor.engine, sub, _add(tensor.iterator, origin))


def get_flat_coord(layout: Layout, index: int):
    """Per top-level mode, the coordinate where ``layout`` gives ``index``: per leaf ``(index // stride) % shape``.

    >>> get_flat_coord(Layout((32, 8), (8, 1)), 37)
    (4, 5)
    """
    h = unflatten(tuple((index // d) % s if d else 0 for s, d in zip_leaves(layout.shape, layout.stride)),
                  layout.shape)
    return tuple(map(crd2idx, h, layout.shape)) if is_tuple(layout.shape) else h


def local_partition(tensor: Tensor, tiler: Layout, index: int, proj=1) -> Tensor:
    """Thread ``index``'s share: ``zipped_divide(tensor, product_each(shape(tiler)))`` at ``(get_flat_coord(...), _)``.

    >>> local_partition(make_tensor(0, Layout((16, 64))), Layout((2, 16)), 5)
    tensor<33 o (8,4):(2,256)>
    """
    if not isinstance(tensor, Tensor):
        raise LayoutError(f"local_partition: expected a Tensor, got {type(tensor).__name__}")
    _need_layout(tiler, "local_partition", "the thread layout")
    if not 0 <= index < tiler.size():
        raise LayoutError(f"local_partition: thread index {index} is outside the thread layout {tiler} "
                          f"(size {tiler.size()})")
    c = get_flat_coord(tiler, index)  # in the full thread layout, as CuTe does
    if is_tuple(proj):
        tiler, c = _dice("local_partition", proj, tiler, "thread layout"), dice(c, proj)
        tiler, c = _unwrap(tiler), _unwrap(c)
    z = zipped_divide(tensor.layout, product_each(tiler.shape))
    return _slice_tensor(tensor, z, (c, _unwrap((None,) * z[1].rank())), "local_partition")


def make_layout_tv(thr_layout: Layout, val_layout: Layout):
    """``(tiler_mn, layout_tv)``: each thread of ``thr_layout`` owns a ``val_layout`` block, as ``cute.make_layout_tv``:
    ``right_inverse(raked_product(thr_layout, val_layout))`` (both compact) o compact (threads, values).

    >>> make_layout_tv(make_layout((2, 3), stride=(3, 1)), make_layout((2, 2), stride=(2, 1)))
    ((4, 6), ((3,2),(2,2)):((8,2),(4,1)))
    """
    _need_layout(thr_layout, "make_layout_tv", "thr_layout")
    _need_layout(val_layout, "make_layout_tv", "val_layout")
    layout_mn = raked_product(thr_layout, val_layout)
    inv = right_inverse(layout_mn)
    if inv.size() != layout_mn.size():
        raise LayoutError(f"make_layout_tv: raked_product({thr_layout}, {val_layout}) = {layout_mn} is not a "
                          f"bijection onto 0..{layout_mn.size() - 1}; thr_layout and val_layout must be compact")
    return product_each(layout_mn.shape), composition(inv, make_layout((thr_layout.size(), val_layout.size())))


def domain_distribute(shape, n: int) -> Layout:
    """A compact sub-domain of ``n`` elements of ``shape`` (CuTe C++'s ``domain_distribute``): ``gcd(a_i, rest)`` per
    leaf left to right (``rest``: ``n`` over those so far), column-major strides, coalesced.

    >>> domain_distribute((15, 14), 6), domain_distribute((4, 8), 8)
    ((3,2):(1,15), 8:1)
    """
    flat = leaves(as_int_tuple(getattr(shape, "shape", shape), "shape", "domain_distribute"))  # a shape or a Layout
    if not is_int(n) or n <= 0:
        raise LayoutError(f"domain_distribute: n = {n!r} must be a positive integer (the number of elements to tile)")
    taken = []
    for a in flat:
        taken.append(gcd(a, n))
        n //= taken[-1]
    return coalesce(Layout(tuple(taken), compact_col_major(flat).stride))
