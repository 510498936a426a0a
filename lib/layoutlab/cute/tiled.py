"""TiledMMA and TiledCopy: many atoms on one tile, and each thread's share of A, B and C or of a tensor.
A :class:`TiledMMA` repeats an MMA atom over threads and values as CuTe's ``thrfrg_C`` does: divide by the
permutation tiles, zip-divide by the atom shape, compose with the atom's TV layout, zip-divide the rest by the
thread layout, re-index threads by ``right_inverse(thr_layout_vmnk)``; a :class:`TiledCopy` likewise for copies.
Example (the 64x128x16 warpgroup MMA of the CuTe DSL's Hopper dense GEMM)::

    >>> from layoutlab import nvgpu
    >>> print(make_tiled_mma(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 128, 16))))
    Tiled MMA
      Thr Layout VMNK: (128,1,1,1):(1,0,0,0)
      Permutation MNK: (_,_,_)
    MMA Atom
      ThrID:           128:1
      Shape MNK:       (64,128,16)
      TV Layout A:     (128,(64,16)):(0,(1,64))
      TV Layout B:     (128,(128,16)):(0,(1,128))
      TV Layout C:     ((4,8,4),(2,2,16)):((128,1,16),(64,8,512))
"""

import math
from functools import partialmethod

from ..errors import LayoutError
from .algebra import (coalesce, composition, logical_divide, logical_product, right_inverse, tiled_product, upcast,
                      zipped_divide)
from .atom import CopyAtom, make_mma_atom, _table
from .basis import is_int, ScaledBasis
from .inttuple import format_tree, is_tuple, leaves, product, product_each, unflatten
from .layout import Layout, make_layout, slice_and_offset
from .tensor import get_flat_coord, make_layout_tv, make_tensor, _slice_tensor, Tensor

__all__ = ["TiledMMA", "ThrMMA", "Partition", "make_tiled_mma", "make_fragment_like", "partition_fragment_A",
           "partition_fragment_B", "partition_fragment_C", "TiledCopy", "ThrCopy", "make_tiled_copy",
           "make_tiled_copy_tv", "make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy_C"]


# operand -> its two modes among M, N, K (0, 1, 2) and the atom's TV layout of it
_OPERANDS = {"A": ((0, 2), "layout_a_tv"), "B": ((1, 2), "layout_b_tv"), "C": ((0, 1), "layout_c_tv")}


class Partition:
    """What ``partition_*`` returns for a :class:`Layout` (a Tensor gives a Tensor): the thread's ``offset`` in the
    layout's codomain and its ``layout``, printed like a DSL tensor (``tensor<(1,2) o ((2,2),2):((1@1,8@0),32@0)>``).

    >>> from layoutlab import nvgpu
    >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (2, 2, 1))
    >>> tm.get_slice(3).partition_C(make_layout((64, 32)))         # thread 3's accumulators of a 64x32 C
    tensor<384 o ((2,2),2,2):((64,8),32,1024)>
    """

    def __init__(self, offset, layout, coord_rank=None):
        # an identity (coordinate) tensor's offset is a coordinate; at the origin it is all zeros
        if coord_rank and offset == 0:
            offset = (0,) * coord_rank
        self.offset = offset
        self.layout = layout

    def __str__(self):
        return f"tensor<{format_tree(self.offset)} o {self.layout}>"

    __repr__ = __str__


def _slice_as(x, t, crd):
    """``t`` (``x``'s layout, partitioned) sliced at ``crd``: a Tensor for a Tensor ``x``, else a Partition."""
    if isinstance(x, Tensor):
        return _slice_tensor(x, t, crd, "partition")
    layout, offset = slice_and_offset(crd, t)
    # an identity layout produces coordinates of rank (its basis strides' largest top-level mode + 1)
    modes = [d.mode[0] for d in leaves(_layout_of(x, "partition").stride) if isinstance(d, ScaledBasis)]
    return Partition(offset, layout, max(modes) + 1 if modes else None)


def _layout_of(x, op):
    layout = x.layout if isinstance(x, (Tensor, Partition)) else x
    if isinstance(layout, Layout):
        return layout
    raise LayoutError(f"{op}: expected a Layout or a Tensor, got {type(x).__name__}")


def _atom_attr(name):
    """The atom's attribute ``name``, read through a tiled atom (the DSL's tiled atoms are atoms too)."""
    return property(lambda self: getattr(self.atom, name))


def _thread(thr_idx, size, what):
    if not is_int(thr_idx) or not 0 <= thr_idx < size:
        raise LayoutError(f"{what}.get_slice: thread {thr_idx!r} is outside 0..{size - 1}")
    return thr_idx


def _integral_strides(layout, op):
    for d in leaves(layout.stride):
        if not is_int(d):
            raise LayoutError(f"{op}: {layout} has coordinate strides ({d}): an identity tensor has no memory order "
                              f"to copy; make the fragment from a shape instead (partition_shape_A/B/C)")


def _ordered(shape, order, scale, layout, op):
    """Strides of a compact layout of ``shape`` with leaves ordered by ``order`` (CuTe's compact_order, times
    ``scale``; size-1 leaves 0 as in the DSL). Equal orders of leaves of size > 1 would alias and are refused."""
    _integral_strides(layout, op)
    fs, fo = leaves(shape), leaves(order)
    big = [o for sz, o in zip(fs, fo) if sz > 1]
    same = [o for i, o in enumerate(big) if o in big[:i]]
    if same:
        raise LayoutError(f"{op}: two modes of {layout} have the same stride {same[0]}: the fragment orders its modes "
                          f"by stride, so both would get one register stride and alias each other (the CuTe DSL builds "
                          f"that aliasing fragment silently); give every mode its own stride, or build it from a shape")
    return unflatten(tuple(0 if sz == 1 else scale * math.prod(s for s, o in zip(fs, fo) if o < oi)
                           for sz, oi in zip(fs, fo)), shape)


def _fragment_layout(layout, op):
    """CuTe's ``make_fragment_like(Layout)``: mode 0 (a thread's values) compact column-major, a broadcast (stride
    0) staying one; the other modes compact after it in the order of their strides (the tensor's memory order)."""
    if layout.rank() == 1:
        return make_layout(layout.shape)
    s0 = layout.shape[0]
    cur, st0 = 1, []
    for sz, d in zip(leaves(s0), leaves(layout.stride[0])):
        st0.append(0 if d == 0 or sz == 1 else cur)
        cur *= 1 if d == 0 else sz
    rest = _ordered(layout.shape[1:], layout.stride[1:], cur, layout, op)
    return Layout._new(layout.shape, (unflatten(tuple(st0), s0),) + rest)


def make_fragment_like(x):
    """A register fragment shaped like ``x`` (DSL: ``cute.make_fragment_like``): a Layout's mode 0 compact
    column-major, the others compact after it in stride order; a Tensor's ``tensor<0 o layout>``, all in stride order.

    >>> print(make_fragment_like(Layout(((2,2,2),2,4), ((1,512,8),1024,16))))     # a thread's A of a row-major tile
    ((2,2,2),2,4):((1,2,4),32,8)
    >>> make_fragment_like(make_tensor(0, Layout(((2,2,2),2,4), ((1,512,8),1024,16))))
    tensor<0 o ((2,2,2),2,4):((1,16,2),32,4)>
    """
    op = "make_fragment_like"
    if isinstance(x, Tensor):
        lay = x.layout
        if not is_tuple(lay.shape):
            return Tensor(0, make_layout(lay.shape))
        return Tensor(0, Layout._new(lay.shape, _ordered(lay.shape, lay.stride, 1, lay, op)))
    if isinstance(x, Layout):
        return _fragment_layout(x, op)
    raise LayoutError(f"{op}: expected a Layout or a Tensor, got {type(x).__name__}")


def _as_perm(p, i):
    if p is None or isinstance(p, Layout):
        return p
    if is_int(p):
        return Layout(int(p), 1)
    raise LayoutError(f"make_tiled_mma: permutation mode {'MNK'[i]} is {p!r}; give None (_), an int tile size or a "
                      f"Layout (e.g. make_layout((8,2),(2,1)) to interleave); nested int tuples are not a "
                      f"permutation (the DSL prints garbage strides 'x' for them)")


class TiledMMA:
    """An MMA atom tiled over threads and values (see :mod:`layoutlab.cute.tiled`), with the DSL's attributes (``atom``,
    ``thr_layout_vmnk``, ``permutation_mnk``, the atom's, ``tv_layout_A/B/C_tiled``, ``size``, ...)."""

    def __init__(self, atom, atom_layout_mnk=(1, 1, 1), permutation_mnk=None):
        op = "make_tiled_mma"
        self.atom = atom
        if isinstance(atom_layout_mnk, (tuple, list)):
            atom_layout_mnk = make_layout(tuple(atom_layout_mnk))
        if not isinstance(atom_layout_mnk, Layout):
            raise LayoutError(f"{op}: atom_layout_mnk {atom_layout_mnk!r} must be a rank-3 tuple like (2,2,1) or a "
                              f"Layout")
        if atom_layout_mnk.rank() != 3:
            raise LayoutError(f"{op}: atom_layout_mnk {atom_layout_mnk} must have rank 3 (M, N, K); e.g. (2,2,1)")
        self.atom_layout_mnk = atom_layout_mnk
        self.thr_layout_vmnk = tiled_product(atom.thr_id, atom_layout_mnk)
        self._thr_inv = right_inverse(self.thr_layout_vmnk)
        if self._thr_inv.size() != self.size:
            raise LayoutError(f"{op}: the atom layout {atom_layout_mnk} does not number the {self.size} threads "
                              f"0..{self.size - 1} exactly once (thread layout {self.thr_layout_vmnk}); use a compact "
                              f"layout such as make_layout((2,2,1))")
        perm = (None,) * 3 if permutation_mnk is None else tuple(permutation_mnk)
        if len(perm) != 3:
            raise LayoutError(f"{op}: permutation_mnk {permutation_mnk!r} must have three entries (M, N, K)")
        self.permutation_mnk = tuple(_as_perm(p, i) for i, p in enumerate(perm))
        for i in range(3):
            need, have = self._atoms_tile(i), self.get_tile_size(i)
            if have % need:
                raise LayoutError(f"{op}: the {'MNK'[i]} tile {have} (permutation {self.permutation_mnk[i]}) is not a "
                                  f"multiple of atom {'MNK'[i]} {atom.shape_mnk[i]} x "
                                  f"{self.thr_layout_vmnk[i + 1].size()} atoms = {need}; the atoms would not tile it")

    # the atom's view, as the DSL's TiledMma (a subclass of MmaAtom) offers it
    thr_id = _atom_attr("thr_id")
    shape_mnk = _atom_attr("shape_mnk")
    tv_layout_A = _atom_attr("layout_a_tv")
    tv_layout_B = _atom_attr("layout_b_tv")
    tv_layout_C = _atom_attr("layout_c_tv")

    size = property(lambda self: self.thr_layout_vmnk.size(), doc="Number of threads.")

    def _atoms_tile(self, i):
        """Extent of mode i (M, N, K) covered by the atoms alone: atom size x atoms along it."""
        return self.atom.shape_mnk[i] * self.thr_layout_vmnk[i + 1].size()

    def get_tile_size(self, mode_idx):
        """Tile extent of mode M (0), N (1) or K (2): the permutation's size, or atom size x atoms in that mode."""
        p = self.permutation_mnk[mode_idx]
        return self._atoms_tile(mode_idx) if p is None else p.size()

    tile_size_mnk = property(lambda self: tuple(map(self.get_tile_size, range(3))))

    def _tile(self, which):
        """The extents of operand ``which``'s tile: (tile_M, tile_K) for A, (tile_N, tile_K) for B, ..."""
        return tuple(map(self.get_tile_size, _OPERANDS[which][0]))

    def _thrfrg(self, layout, which):
        """(I,J,...) -> ((ThrV,(ThrI,ThrJ)),(FrgV,(RestI,RestJ,...))) for operand ``which``'s modes I, J."""
        if layout.rank() < 2:
            raise LayoutError(f"TiledMMA partition: the tensor layout {layout} needs at least two modes")
        modes, atom_tv = _OPERANDS[which]
        perm = tuple(self.permutation_mnk[m] for m in modes)
        t = logical_divide(layout, perm) if any(p is not None for p in perm) else layout
        atom = tuple(self.atom.shape_mnk[m] for m in modes)
        for k, m in enumerate(modes):
            if product(t.shape[k]) % atom[k]:
                raise LayoutError(f"TiledMMA partition: mode {k} of {layout} (size {product(t.shape[k])}) is not a "
                                  f"multiple of the atom's {'MNK'[m]} = {atom[k]}")
        tv = composition(zipped_divide(t, atom), (getattr(self.atom, atom_tv), None))
        return zipped_divide(tv, (None, tuple(self.thr_layout_vmnk[m + 1].size() for m in modes)))

    thrfrg_A = partialmethod(_thrfrg, which="A")    # (M,K,...) -> ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...)))
    thrfrg_B = partialmethod(_thrfrg, which="B")    # (N,K,...) -> ((ThrV,(ThrN,ThrK)),(FrgV,(RestN,RestK,...)))
    thrfrg_C = partialmethod(_thrfrg, which="C")    # (M,N,...) -> ((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN,...)))

    def _tiled(self, which):
        tv = self._thrfrg(make_layout(self._tile(which)), which)
        if which != "C":
            # (ThrV,(ThrM|N,ThrK)) -> (ThrV,(ThrM,ThrN,ThrK)): threads along N see the same A values (along M, B)
            v = self.thr_layout_vmnk
            spread = Layout._new((v[1].size(), v[2].size()), (1, 0) if which == "A" else (0, 1))
            tv = composition(tv, ((None, (spread, None)), None))
        return composition(tv, (self._thr_inv, None))

    tv_layout_A_tiled = property(lambda self: self._tiled("A"), doc="(thr_idx, val) -> m + tile_M * k (tile of A)")
    tv_layout_B_tiled = property(lambda self: self._tiled("B"), doc="(thr_idx, val) -> n + tile_N * k (tile of B)")
    tv_layout_C_tiled = property(lambda self: self._tiled("C"), doc="(thr_idx, val) -> m + tile_M * n (tile of C)")

    def get_slice(self, thr_idx):
        """The view of thread ``thr_idx`` (0 <= thr_idx < size)."""
        return ThrMMA(self, _thread(thr_idx, self.size, "TiledMMA"))

    def _partition_shape(self, shape, which):
        shape = tuple(shape)
        if len(shape) < 2:
            raise LayoutError(f"partition_shape: shape {shape!r} needs at least two modes")
        modes, atom_tv = _OPERANDS[which]
        out = [getattr(self.atom, atom_tv)[1].shape]
        for k, m in enumerate(modes):
            per = self._atoms_tile(m)
            if product(shape[k]) % per:
                raise LayoutError(f"partition_shape: mode {k} of {shape} is not a multiple of {per} "
                                  f"(atom {'MNK'[m]} x atoms in {'MNK'[m]})")
            out.append(product(shape[k]) // per)
        return tuple(out) + shape[2:]

    def partition_shape_A(self, shape_mk):
        """(FrgV, RestM, RestK, ...) of a thread's share of an M x K tensor (CuTe's ``partition_shape_A``)."""
        return self._partition_shape(shape_mk, "A")

    def partition_shape_B(self, shape_nk):
        return self._partition_shape(shape_nk, "B")

    def partition_shape_C(self, shape_mn):
        return self._partition_shape(shape_mn, "C")

    def _make_fragment(self, x, which):
        op = f"make_fragment_{which}"
        (mi, mj), atom_tv = _OPERANDS[which]
        atom_tv = getattr(self.atom, atom_tv)
        if which != "C" and atom_tv[0].stride == 0:
            raise LayoutError(f"{op}: operand {which} of {self.atom.name} is read from shared memory through a "
                              f"matrix descriptor (every thread sees the whole tile: {atom_tv}); there is no "
                              f"register fragment to make -- only register operands (mma.sync, wgmma RS's A) have one")
        from_shape = isinstance(x, (tuple, list))
        layout = make_layout(tuple(x)) if from_shape else _layout_of(x, op)
        v = atom_tv[1].size()
        if layout.rank() < 3 or product(layout.shape[0]) != v:
            raise LayoutError(f"{op}: {layout} is not a thread's partition (FrgV,Rest{'MNK'[mi]},Rest{'MNK'[mj]},...): "
                              f"{self.atom.name} gives each thread {v} values of {which} (mode 0 must have size {v}, "
                              f"and there must be at least 3 modes); partition first -- thr_mma.partition_{which}"
                              f"(tensor) or tiled_mma.partition_shape_{which}(shape) (the CuTe DSL accepts anything "
                              f"here and returns a fragment the MMA cannot use)")
        # accumulators never follow the input's order (CuTe's make_fragment_C)
        return make_tensor(0, make_layout(layout.shape) if which == "C" or from_shape else _fragment_layout(layout, op))

    def make_fragment_A(self, x):
        """A thread's A registers ``tensor<0 o layout>`` for its partition ``x`` ``(FrgV,RestM,RestK,...)`` (in its
        stride order, as :func:`make_fragment_like`) or such a shape (compact). DSL: ``tiled_mma.make_fragment_A``.

        >>> from layoutlab import nvgpu
        >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)))
        >>> tm.make_fragment_A(tm.get_slice(3).partition_A(make_layout((32, 64), stride=(64, 1))))
        tensor<0 o ((2,2,2),2,4):((1,2,4),32,8)>
        """
        return self._make_fragment(x, "A")

    make_fragment_B = partialmethod(_make_fragment, which="B")   # as make_fragment_A, for x = (FrgV,RestN,RestK,...)

    def make_fragment_C(self, x):
        """A thread's accumulator registers: compact column-major over the partition's shape (never C's order).

        >>> from layoutlab import nvgpu
        >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (2, 2, 1))
        >>> tm.make_fragment_C(tm.partition_shape_C((64, 64)))
        tensor<0 o ((2,2),2,4):((1,2),4,8)>
        """
        return self._make_fragment(x, "C")

    def __str__(self):
        head = [("Thr Layout VMNK", self.thr_layout_vmnk), ("Permutation MNK", format_tree(self.permutation_mnk))]
        return _table(17, ("Tiled MMA", head), ("MMA Atom", self.atom._rows()))

    def __repr__(self):
        return f"TiledMMA({self.atom.name}, {self.atom_layout_mnk}, {format_tree(self.permutation_mnk)})"


class ThrMMA:
    """Thread ``thr_idx``'s view of a :class:`TiledMMA`: ``partition_A/B/C`` cut its values out of a tensor."""

    def __init__(self, tiled_mma, thr_idx):
        self.tiled_mma = tiled_mma
        self.thr_idx = thr_idx
        # the (V, M, N, K) coordinate where the thread layout *produces* thr_idx (warps numbered along N too)
        self.thr_vmnk = get_flat_coord(tiled_mma.thr_layout_vmnk, thr_idx)

    def _partition(self, x, which):
        t = self.tiled_mma._thrfrg(_layout_of(x, f"partition_{which}"), which)
        v, rest = self.thr_vmnk, (None,) * len(t.shape[1][1])      # keep every Rest mode
        return _slice_as(x, t, ((v[0], tuple(v[m + 1] for m in _OPERANDS[which][0])), (None, rest)))

    def partition_A(self, tensor_mk):
        """Thread's values of an (M, K, ...) tensor: shape (FrgV, RestM, RestK, ...)."""
        return self._partition(tensor_mk, "A")

    def partition_B(self, tensor_nk):
        """Thread's values of an (N, K, ...) tensor: shape (FrgV, RestN, RestK, ...)."""
        return self._partition(tensor_nk, "B")

    def partition_C(self, tensor_mn):
        """Thread's values of an (M, N, ...) tensor: shape (FrgV, RestM, RestN, ...)."""
        return self._partition(tensor_mn, "C")

    def _partition_fragment(self, x, which):
        tm = self.tiled_mma
        part = tm._partition_shape(x, which) if isinstance(x, (tuple, list)) else self._partition(x, which)
        return tm._make_fragment(part, which)

    def partition_fragment_A(self, tensor_mk):
        """``make_fragment_A(partition_A(tensor_mk))`` (CuTe C++ ``thr_mma.partition_fragment_A``); a shape (M,K)
        gives the compact fragment of ``partition_shape_A``.

        >>> from layoutlab import nvgpu
        >>> thr = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (2, 2, 1)).get_slice(37)
        >>> thr.partition_fragment_A(make_layout((64, 32), stride=(32, 1)))      # row-major (K-major) A
        tensor<0 o ((2,2,2),2,2):((1,2,4),16,8)>
        """
        return self._partition_fragment(tensor_mk, "A")

    def partition_fragment_B(self, tensor_nk):
        """This thread's B registers: ``make_fragment_B(partition_B(tensor_nk))`` (see :meth:`partition_fragment_A`)."""
        return self._partition_fragment(tensor_nk, "B")

    def partition_fragment_C(self, tensor_mn):
        """This thread's accumulators: ``make_fragment_C(partition_C(tensor_mn))`` (compact; a shape works too)."""
        return self._partition_fragment(tensor_mn, "C")


def _partition_fragment_free(mma, x, which):
    op = f"partition_fragment_{which}"
    if isinstance(mma, ThrMMA):
        return mma._partition_fragment(x, which)
    if isinstance(mma, TiledMMA):
        if isinstance(x, (tuple, list)):
            return mma.get_slice(0)._partition_fragment(x, which)
        raise LayoutError(f"{op}: which thread's fragment? A tensor's partition depends on the thread: pass "
                          f"tiled_mma.get_slice(thr_idx), or a shape for the thread-independent fragment")
    raise LayoutError(f"{op}: expected a ThrMMA (tiled_mma.get_slice(t)) or a TiledMMA, got {type(mma).__name__}")


def partition_fragment_A(mma, x):
    """CuTe C++'s ``partition_fragment_A``: ``thr_mma.partition_fragment_A(x)``; with a TiledMMA, ``x`` a shape.

    >>> from layoutlab import nvgpu
    >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (2, 2, 1))
    >>> partition_fragment_A(tm.get_slice(5), (64, 16))
    tensor<0 o ((2,2,2),2,1):((1,2,4),8,0)>
    """
    return _partition_fragment_free(mma, x, "A")


def partition_fragment_B(mma, x):
    """CuTe C++'s ``partition_fragment_B`` (see :func:`partition_fragment_A`).

    >>> from layoutlab import nvgpu
    >>> partition_fragment_B(make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (2, 2, 1)), (32, 16))
    tensor<0 o ((2,2),2,1):((1,2),4,0)>
    """
    return _partition_fragment_free(mma, x, "B")


def partition_fragment_C(mma, x):
    """CuTe C++'s ``partition_fragment_C(tiled_mma, shape_MN)``: the accumulator registers of a thread.

    >>> from layoutlab import nvgpu
    >>> partition_fragment_C(make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (2, 2, 1)), (128, 128))
    tensor<0 o ((2,2),4,8):((1,2),4,16)>
    """
    return _partition_fragment_free(mma, x, "C")


def make_tiled_mma(op_or_atom, atom_layout_mnk=(1, 1, 1), permutation_mnk=None) -> TiledMMA:
    """Tile an MMA atom (DSL: ``cute.make_tiled_mma(op_or_atom, atom_layout_mnk, permutation_mnk)``):
    ``atom_layout_mnk`` atoms along M, N, K (tuple or Layout); ``permutation_mnk`` per mode None, a tile size or Layout.

    >>> from layoutlab import nvgpu
    >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (2, 2, 1))
    >>> print(tm.tv_layout_C_tiled)
    ((4,8,2,2),((2,2),(1,1))):((64,1,16,256),((32,8),(0,0)))
    """
    return TiledMMA(make_mma_atom(op_or_atom), atom_layout_mnk, permutation_mnk)


class TiledCopy:
    """A copy atom tiled over threads and values: ``layout_tv_tiled`` maps ``(thr_idx, val)`` into the ``tiler_mn``
    tile; with the DSL's attributes (``layout_src/dst_tv_tiled``, ``size``, ``get_slice``, the atom's)."""

    def __init__(self, atom, layout_tv, tiler_mn):
        op = "make_tiled_copy"
        if not isinstance(atom, CopyAtom):
            raise LayoutError(f"{op}: {atom!r} is not a copy atom; make one with make_copy_atom(op, value_type)")
        self.atom = atom
        self.layout_tv_tiled = layout_tv
        self.tiler_mn = tuple(t if isinstance(t, Layout) else make_layout(int(t)) for t in tiler_mn)
        n_thr, n_val = layout_tv[0].size(), layout_tv[1].size()
        if n_thr % atom.thr_id.size():
            raise LayoutError(f"{op}: TiledCopy uses too few thrs for selected CopyAtom: the tiled layout "
                              f"{layout_tv} has {n_thr} threads, not a multiple of {atom.name}'s {atom.thr_id.size()}")
        if n_val % atom.num_val:
            raise LayoutError(f"{op}: TiledCopy uses too few vals for selected CopyAtom: each thread owns {n_val} "
                              f"values of the tile ({layout_tv}) but one {atom.name} moves {atom.num_val} per thread; "
                              f"pick an atom that moves a divisor of {n_val} values (e.g. fewer matrices)")

    thr_id = _atom_attr("thr_id")
    layout_src_tv = _atom_attr("layout_src_tv")
    layout_dst_tv = _atom_attr("layout_dst_tv")
    value_type = _atom_attr("value_type")

    size = property(lambda self: self.layout_tv_tiled[0].size(), doc="Number of threads.")

    def _tile2thrfrg(self, layout, side):
        """((TileM,TileN),(RestM,RestN,...)) -> ((thr,val),(RestM,RestN,...)) for side "S" or "D" (ref -> side)."""
        atom = self.atom
        trg = atom.layout_src_tv if side == "S" else atom.layout_dst_tv
        ref2trg = composition(right_inverse(atom.layout_ref_tv), trg)
        atom_tv = zipped_divide(self.layout_tv_tiled, (atom.thr_id.size(), atom.num_val))
        t = composition(atom_tv, (ref2trg, None))                                          # ((thr,val),(Rest...))
        zipped = make_layout(make_layout(t[0][0], t[1][0]), make_layout(t[0][1], t[1][1]))    # CuTe's zip
        thrval2mn = coalesce(zipped, (1, (1, 1)))
        return composition(layout, (thrval2mn, None))

    def _tidfrg(self, layout, side):
        return self._tile2thrfrg(zipped_divide(layout, self.tiler_mn), side)

    tidfrg_S = partialmethod(_tidfrg, side="S")     # (M,N,...) -> ((thr,val),(RestM,RestN,...)) for the source
    tidfrg_D = partialmethod(_tidfrg, side="D")     # ... for the destination

    def _tv_tiled(self, side):
        # the tile itself as ((TileM,TileN),1): one "rest" coordinate, dropped at the end
        tile = make_layout(tuple(t.size() for t in self.tiler_mn))
        tv = self._tile2thrfrg(Layout._new((tile.shape, 1), (tile.stride, 0)), side)
        return slice_and_offset(((None, None), 0), tv)[0]

    layout_src_tv_tiled = property(lambda self: self._tv_tiled("S"), doc="(thr_idx, val) -> tile element, as read")
    layout_dst_tv_tiled = property(lambda self: self._tv_tiled("D"), doc="(thr_idx, val) -> tile element, as written")

    def get_slice(self, thr_idx):
        return ThrCopy(self, _thread(thr_idx, self.size, "TiledCopy"))

    def retile(self, x):
        """The copy's view of a thread's fragment ``x`` ``(V, Rest...)`` made for another partitioning: the *same
        registers* as ``((AtomVal, RestVal), Rest...)``, one ``AtomVal`` per copy, from the copy's ``(m,n) -> value``
        order (``layout_tv_tiled``'s right inverse, upcast by threads x V). CuTe ``retile_D/S``, DSL ``retile``.

        >>> from layoutlab import nvgpu, make_copy_atom, make_tiled_mma, make_tiled_copy_A
        >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (1, 1, 1), (16, 16, 16))
        >>> frag = tm.get_slice(3).partition_fragment_A(make_layout((32, 64), stride=(64, 1)))
        >>> x2 = make_tiled_copy_A(make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(False, 2), "f16"), tm)
        >>> frag, x2.retile(frag)            # the x2 copy sees the 8 values as 2 instructions of 4
        (tensor<0 o ((2,2,2),2,4):((1,2,4),32,8)>, tensor<0 o ((4,2),2,4):((1,4),32,8)>)
        """
        op = "retile"
        layout = _layout_of(x, op)
        if layout.rank() < 2:
            raise LayoutError(f"{op}: {layout} is not a thread's fragment (V, Rest...); retile the result of "
                              f"partition_fragment_A/B/C or partition_S/D")
        _integral_strides(layout, op)
        v = product(layout.shape[0])
        try:
            inv = composition(right_inverse(self.layout_tv_tiled), make_layout(tuple(t.size() for t in self.tiler_mn)))
            frg_mn = upcast(inv, self.size * v)                        # (m,n) -> which block of V values
            frg_v = zipped_divide(logical_product(make_layout(v), right_inverse(frg_mn)),
                                  self.atom.num_val)                   # (atom_vals, rest_vals) -> (v, m, n)
            t = zipped_divide(layout, (v, *product_each(frg_mn.shape)))
            tv = composition(t, (frg_v, None))
        except LayoutError as err:
            raise LayoutError(f"{op}: {layout} does not fit the copy {self!r}: {err}") from None
        out = _slice_as(x, tv, (None, (0,) + (None,) * (layout.rank() - 1)))
        if out.layout.size() != layout.size():
            raise LayoutError(f"{op}: the copy's view {out.layout} has {out.layout.size()} values but the fragment "
                              f"{layout} has {layout.size()}: a thread owns {v} values per tile and one "
                              f"{self.atom.name} moves {self.atom.num_val}; use an atom that moves a divisor of {v}")
        return out

    def __str__(self):
        head = [("Tiler MN", format_tree(self.tiler_mn)), ("TV Layout tiled", self.layout_tv_tiled)]
        return _table(17, ("Tiled Copy", head), ("Copy Atom", self.atom._rows()))

    def __repr__(self):
        return f"TiledCopy({self.atom.name}, {self.layout_tv_tiled})"


class ThrCopy:
    """Thread ``thr_idx``'s view of a :class:`TiledCopy`. 4 threads x 4 fp32 a row of 8x16: thread 5 copies 1, 4..7.

    >>> from layoutlab import CopyUniversalOp, make_copy_atom
    >>> tc = make_tiled_copy_tv(make_copy_atom(CopyUniversalOp(), "f32", num_bits_per_copy=128),
    ...                         make_layout((8, 4), stride=(4, 1)), make_layout((1, 4)))
    >>> tc.get_slice(5).partition_S(make_layout((8, 16), stride=(16, 1)))
    tensor<20 o ((4,1),1,1):((1,0),0,0)>
    """

    def __init__(self, tiled_copy, thr_idx):
        self.tiled_copy = tiled_copy
        self.thr_idx = thr_idx

    def _partition(self, tensor, side):
        t = self.tiled_copy._tidfrg(_layout_of(tensor, f"partition_{side}"), side)
        return _slice_as(tensor, t, ((self.thr_idx, None), (None,) * len(t.shape[1])))      # keep every Rest mode

    partition_S = partialmethod(_partition, side="S")   # the thread's share of the source: (CPY, CPY_M, CPY_N, ...)
    partition_D = partialmethod(_partition, side="D")   # ... of the destination

    def retile(self, x):
        """:meth:`TiledCopy.retile` (the DSL's ThrCopy inherits it; it does not depend on the thread)."""
        return self.tiled_copy.retile(x)

    retile_S = retile   # CuTe C++ names: the same construction for the source and the destination
    retile_D = retile


def make_tiled_copy(atom, layout_tv, tiler_mn) -> TiledCopy:
    """A tiled copy from its ``(thr_idx, val) -> (m, n)`` layout and tile (DSL: ``cute.make_tiled_copy``).

    >>> from layoutlab import CopyUniversalOp, make_copy_atom
    >>> tc = make_tiled_copy(make_copy_atom(CopyUniversalOp(), "f32", num_bits_per_copy=128),
    ...                      make_layout((32, 4), stride=(4, 1)), (8, 16))
    >>> tc.size, tc.tiler_mn
    (32, (8:1, 16:1))
    """
    return TiledCopy(atom, layout_tv, tiler_mn)


def make_tiled_copy_tv(atom, thr_layout, val_layout) -> TiledCopy:
    """Threads laid out by ``thr_layout`` (m, n) -> thr, each moving a ``val_layout`` block (DSL:
    ``cute.make_tiled_copy_tv``): the TV layout is ``raked_product(thr, val)``'s right inverse, the tile its shape.

    >>> from layoutlab import make_copy_atom, CopyUniversalOp
    >>> tc = make_tiled_copy_tv(make_copy_atom(CopyUniversalOp(), "f16", num_bits_per_copy=128),
    ...                         make_layout((32, 4), stride=(4, 1)), make_layout((1, 8)))
    >>> print(tc.layout_tv_tiled)
    ((4,32),8):((256,1),32)
    """
    try:
        tiler, layout_tv = make_layout_tv(thr_layout, val_layout)
    except LayoutError as err:
        raise LayoutError(f"make_tiled_copy_tv: {err}") from None
    return TiledCopy(atom, layout_tv, tiler)


def _tiled_copy_from_mma(atom, tiled_mma, which):
    if not isinstance(tiled_mma, TiledMMA):
        raise LayoutError(f"make_tiled_copy_{which}: expected a TiledMMA (make_tiled_mma(...)), got "
                          f"{type(tiled_mma).__name__}")
    return TiledCopy(atom, tiled_mma._tiled(which), tiled_mma._tile(which))


def make_tiled_copy_A(atom, tiled_mma) -> TiledCopy:
    """The copy whose values per thread are exactly the MMA's A fragment (e.g. ``ldmatrix`` -> ``mma.sync``).

    >>> from layoutlab import make_copy_atom, make_tiled_mma, nvgpu
    >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (1, 1, 1), (16, 16, 16))
    >>> make_tiled_copy_A(make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(False, 4), "f16"), tm).layout_tv_tiled
    ((4,8),((2,2,2),(1,1))):((32,1),((16,8,128),(0,0)))
    """
    return _tiled_copy_from_mma(atom, tiled_mma, "A")


def make_tiled_copy_B(atom, tiled_mma) -> TiledCopy:
    """The copy whose values per thread are exactly the MMA's B fragment.

    >>> from layoutlab import make_copy_atom, make_tiled_mma, nvgpu
    >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (1, 1, 1), (16, 16, 16))
    >>> make_tiled_copy_B(make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(True, 4), "f16"), tm).tiler_mn
    (16:1, 16:1)
    """
    return _tiled_copy_from_mma(atom, tiled_mma, "B")


def make_tiled_copy_C(atom, tiled_mma) -> TiledCopy:
    """The copy whose values per thread are exactly the MMA's C fragment (epilogue stores).

    >>> from layoutlab import CopyUniversalOp, make_copy_atom, make_tiled_mma, nvgpu
    >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (1, 1, 1), (16, 16, 16))
    >>> make_tiled_copy_C(make_copy_atom(CopyUniversalOp(), "f32", num_bits_per_copy=64), tm).layout_tv_tiled
    ((4,8),((2,2),(1,2))):((32,1),((16,8),(0,128)))
    """
    return _tiled_copy_from_mma(atom, tiled_mma, "C")
