"""TiledCopy: a copy atom repeated over threads and values, and each thread's share of a tensor (see
:mod:`layoutlab.tiled`, which re-exports everything here)."""

from functools import partialmethod

from .algebra import coalesce, composition, logical_product, right_inverse, upcast, zipped_divide
from .atoms import CopyAtom
from .errors import LayoutError
from .inttuple import format_tree, product, product_each
from .layout import Layout, make_layout, slice_and_offset
from .mma_atoms import _table
from .tensor import make_layout_tv
from .tiled_mma import TiledMMA, _atom_attr, _integral_strides, _layout_of, _slice_as, _thread

__all__ = ["TiledCopy", "ThrCopy", "make_tiled_copy", "make_tiled_copy_tv", "make_tiled_copy_A",
           "make_tiled_copy_B", "make_tiled_copy_C"]


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
