"""TiledMMA: an MMA atom repeated over threads and values, and each thread's share of A, B and C.

The construction and the register fragments are explained in :mod:`layoutlab.tiled`, which re-exports
everything here; the helpers shared with :mod:`layoutlab.tiled_copy` (``Partition``, the fragment layouts)
live here too.
"""

import math

from .algebra import composition, logical_divide, right_inverse, tiled_product, zipped_divide
from .atoms import MmaAtom, make_mma_atom
from .errors import LayoutError
from .inttuple import ScaledBasis, _add, format_tree, is_int, is_tuple, leaves, product, unflatten
from .layout import Layout, make_layout, slice_and_offset
from .tensor import Tensor, get_flat_coord, make_tensor

__all__ = ["TiledMMA", "ThrMMA", "Partition", "make_tiled_mma", "make_fragment_like", "partition_fragment_A",
           "partition_fragment_B", "partition_fragment_C"]


# --------------------------------------------------------------------------------------------------
# helpers (shared with tiled_copy)
# --------------------------------------------------------------------------------------------------

class Partition:
    """What ``partition_*`` returns for a plain :class:`Layout` input (a :class:`~layoutlab.tensor.Tensor`
    input gives a Tensor): the thread's ``offset`` in the partitioned layout's codomain and its ``layout``. Printed
    like a DSL tensor: ``tensor<(1,2) o ((2,2),2,4):((1@1,8@0),32@0,16@1)>``.

    >>> from layoutlab import nvgpu
    >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (2, 2, 1))
    >>> tm.get_slice(3).partition_C(make_layout((64, 32)))         # thread 3's accumulators of a 64x32 C
    tensor<384 o ((2,2),2,2):((64,8),32,1024)>
    """

    def __init__(self, offset, layout, coord_rank=None):
        # an identity (coordinate) tensor's offset is a coordinate; at the origin it is all zeros
        if coord_rank and not isinstance(offset, tuple) and offset == 0:
            offset = (0,) * coord_rank
        self.offset = offset
        self.layout = layout

    def __str__(self):
        return f"tensor<{format_tree(self.offset)} o {self.layout}>"

    __repr__ = __str__


def _as_tensor_result(x, offset, layout):
    """A layoutlab Tensor in gives a Tensor out (its iterator moved by ``offset``); a Layout gives a Partition."""
    if isinstance(x, Tensor):
        return Tensor(x.engine if x.engine is not None else 0, layout, iterator=_add(x.iterator, offset))
    return Partition(offset, layout, _coord_rank(_layout_of(x, "partition")))


def _coord_rank(layout):
    """Rank of the coordinates an identity layout produces (its basis strides' largest mode + 1), else None."""
    if not isinstance(layout, Layout) or layout.is_integral:
        return None
    modes = [d.mode[0] for d in leaves(layout.stride) if isinstance(d, ScaledBasis)]   # the top-level mode
    return max(modes) + 1 if modes else None


def _layout_of(x, op):
    layout = x.layout if isinstance(x, (Tensor, Partition)) else x
    if isinstance(layout, Layout):
        return layout
    raise LayoutError(f"{op}: expected a Layout or a Tensor, got {type(x).__name__}")


# --------------------------------------------------------------------------------------------------
# register fragments (CuTe's make_fragment_like)
# --------------------------------------------------------------------------------------------------

def _integral_strides(layout, op):
    for d in leaves(layout.stride):
        if not is_int(d):
            raise LayoutError(f"{op}: {layout} has coordinate strides ({d}): an identity tensor has no memory order "
                              f"to copy; make the fragment from a shape instead (partition_shape_A/B/C)")


def _ordered(shape, order, scale, layout, op):
    """Strides of a compact layout of ``shape`` whose leaves are ordered by ``order`` (CuTe's compact_order:
    a leaf's stride is the product of the sizes of the leaves of smaller order, times ``scale``; size-1
    leaves get stride 0 as in the DSL). Equal orders would give equal strides -- aliasing registers -- so
    two leaves of size > 1 with the same order are refused."""
    fs, fo = leaves(shape), leaves(order)
    seen = {}
    for sz, o in zip(fs, fo):
        if sz > 1 and o in seen:
            raise LayoutError(
                f"{op}: two modes of {layout} have the same stride {o}: the fragment orders its modes by stride, "
                f"so both would get one register stride and alias each other (the CuTe DSL builds that aliasing "
                f"fragment silently); give every mode its own stride, or build the fragment from a shape")
        if sz > 1:
            seen[o] = sz
    out = tuple(0 if sz == 1 else scale * math.prod(s for s, o in zip(fs, fo) if o < oi) for sz, oi in zip(fs, fo))
    return unflatten(out, shape) if is_tuple(shape) else out[0]


def _fragment_layout(layout, op="make_fragment_like"):
    """CuTe's ``make_fragment_like(Layout)``: mode 0 (a thread's values) compact column-major, stride-0
    leaves kept at 0 (a broadcast stays a broadcast); the other modes compact after it, in the order of
    their strides (so the loop a kernel runs over the fragment walks memory in the tensor's own order)."""
    if not is_tuple(layout.shape) or len(layout.shape) == 1:
        return make_layout(layout.shape)
    _integral_strides(layout, op)
    s0, d0 = layout.shape[0], layout.stride[0]
    cur, st0 = 1, []
    for sz, d in zip(leaves(s0), leaves(d0)):
        st0.append(0 if d == 0 or sz == 1 else cur)
        cur *= 1 if d == 0 else sz
    st0 = unflatten(tuple(st0), s0) if is_tuple(s0) else st0[0]
    rest = _ordered(layout.shape[1:], layout.stride[1:], cur, layout, op)
    return Layout._new((s0,) + tuple(layout.shape[1:]), (st0,) + tuple(rest))


def make_fragment_like(x):
    """A register fragment shaped like ``x`` (DSL: ``cute.make_fragment_like``).

    * a :class:`Layout` gives CuTe's fragment layout: mode 0 compact column-major, the other modes compact
      after it in the order of their strides;
    * a :class:`~layoutlab.tensor.Tensor` gives a register tensor ``tensor<0 o layout>`` (offset = register
      index) whose layout is compact with *all* leaves in the order of the tensor's strides (the DSL's
      ``make_rmem_tensor_like``).

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
        _integral_strides(lay, op)
        return Tensor(0, Layout._new(lay.shape, _ordered(lay.shape, lay.stride, 1, lay, op)))
    if isinstance(x, Layout):
        return _fragment_layout(x, op)
    raise LayoutError(f"{op}: expected a Layout or a Tensor, got {type(x).__name__}")


# --------------------------------------------------------------------------------------------------
# TiledMMA
# --------------------------------------------------------------------------------------------------

def _as_perm(p, i, op):
    if p is None:
        return None
    if is_int(p):
        return Layout(int(p), 1)
    if isinstance(p, Layout):
        return p
    raise LayoutError(f"{op}: permutation mode {'MNK'[i]} is {p!r}; give None (_), an int tile size or a "
                      f"Layout (e.g. make_layout((8,2),(2,1)) to interleave); nested int tuples are not a "
                      f"permutation (the DSL prints garbage strides 'x' for them)")


class TiledMMA:
    """An MMA atom tiled over threads and values (see the module docstring).

    Attributes (DSL names): ``atom``, ``thr_layout_vmnk``, ``permutation_mnk`` (tuple of Layout or None),
    ``thr_id`` / ``shape_mnk`` / ``tv_layout_A/B/C`` (the atom's), ``tv_layout_A_tiled`` /
    ``tv_layout_B_tiled`` / ``tv_layout_C_tiled`` (``(thr_idx, val) -> (m,k)/(n,k)/(m,n)`` over the tile),
    ``size`` (threads), ``tile_size_mnk``; ``get_tile_size(i)``, ``get_slice(thr)``,
    ``partition_shape_A/B/C(shape)``.
    """

    def __init__(self, atom, atom_layout_mnk=(1, 1, 1), permutation_mnk=None):
        op = "make_tiled_mma"
        self.atom = atom
        if isinstance(atom_layout_mnk, Layout):
            atom_layout = atom_layout_mnk
        elif isinstance(atom_layout_mnk, (tuple, list)):
            atom_layout = make_layout(tuple(atom_layout_mnk))
        else:
            raise LayoutError(f"{op}: atom_layout_mnk {atom_layout_mnk!r} must be a rank-3 tuple like (2,2,1) or a Layout")
        if atom_layout.rank() != 3 or not is_tuple(atom_layout.shape):
            raise LayoutError(f"{op}: atom_layout_mnk {atom_layout} must have rank 3 (M, N, K); e.g. (2,2,1)")
        self.atom_layout_mnk = atom_layout
        self.thr_layout_vmnk = tiled_product(atom.thr_id, atom_layout)
        nthr = self.thr_layout_vmnk.size()
        inv = right_inverse(self.thr_layout_vmnk)
        if inv.size() != nthr:
            raise LayoutError(f"{op}: the atom layout {atom_layout} does not number the {nthr} threads 0..{nthr - 1} "
                              f"exactly once (thread layout {self.thr_layout_vmnk}); use a compact layout such as "
                              f"make_layout((2,2,1))")
        self._thr_inv = inv
        perm = (None, None, None) if permutation_mnk is None else tuple(permutation_mnk)
        if len(perm) != 3:
            raise LayoutError(f"{op}: permutation_mnk {permutation_mnk!r} must have three entries (M, N, K)")
        self.permutation_mnk = tuple(_as_perm(p, i, op) for i, p in enumerate(perm))
        for i in range(3):
            need = atom.shape_mnk[i] * self.thr_layout_vmnk[i + 1].size()
            have = self.get_tile_size(i)
            if have % need:
                raise LayoutError(
                    f"{op}: the {'MNK'[i]} tile {have} (permutation {self.permutation_mnk[i]}) is not a multiple of "
                    f"atom {'MNK'[i]} {atom.shape_mnk[i]} x {self.thr_layout_vmnk[i + 1].size()} atoms = {need}; "
                    f"the atoms would not tile the MMA")

    # the atom's view, as the DSL's TiledMma (a subclass of MmaAtom) offers it
    thr_id = property(lambda self: self.atom.thr_id)
    shape_mnk = property(lambda self: self.atom.shape_mnk)
    tv_layout_A = property(lambda self: self.atom.layout_a_tv)
    tv_layout_B = property(lambda self: self.atom.layout_b_tv)
    tv_layout_C = property(lambda self: self.atom.layout_c_tv)

    @property
    def size(self):
        """Number of threads."""
        return self.thr_layout_vmnk.size()

    def get_tile_size(self, mode_idx):
        """Tile extent of mode M (0), N (1) or K (2): the permutation's size, or atom size x atoms in that mode."""
        p = self.permutation_mnk[mode_idx]
        if p is None:
            return self.atom.shape_mnk[mode_idx] * self.thr_layout_vmnk[mode_idx + 1].size()
        return p.size()

    @property
    def tile_size_mnk(self):
        return tuple(self.get_tile_size(i) for i in range(3))

    def _thrfrg(self, layout, mi, mj, atom_tv):
        """(I,J,...) -> ((ThrV,(ThrI,ThrJ)),(FrgV,(RestI,RestJ,...))) for operand modes (mi, mj) of MNK."""
        if layout.rank() < 2 or not is_tuple(layout.shape):
            raise LayoutError(f"TiledMMA partition: the tensor layout {layout} needs at least two modes")
        t_tile = (self.permutation_mnk[mi], self.permutation_mnk[mj])
        t = logical_divide(layout, t_tile) if any(x is not None for x in t_tile) else layout
        a_tile = (Layout._new(self.atom.shape_mnk[mi], 1), Layout._new(self.atom.shape_mnk[mj], 1))
        for k, (ext, tile) in enumerate(zip(t.shape[:2], a_tile)):
            if product(ext) % tile.size():
                raise LayoutError(f"TiledMMA partition: mode {k} of {layout} (size {product(ext)}) is not a multiple "
                                  f"of the atom's {'MNK'[(mi, mj)[k]]} = {tile.size()}")
        a = zipped_divide(t, a_tile)
        tv = composition(a, (atom_tv, None))
        thr_tile = (None, (Layout._new(self.thr_layout_vmnk[mi + 1].size(), 1),
                           Layout._new(self.thr_layout_vmnk[mj + 1].size(), 1)))
        return zipped_divide(tv, thr_tile)

    def thrfrg_A(self, layout):
        """(M,K,...) -> ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...)))."""
        return self._thrfrg(layout, 0, 2, self.atom.layout_a_tv)

    def thrfrg_B(self, layout):
        """(N,K,...) -> ((ThrV,(ThrN,ThrK)),(FrgV,(RestN,RestK,...)))."""
        return self._thrfrg(layout, 1, 2, self.atom.layout_b_tv)

    def thrfrg_C(self, layout):
        """(M,N,...) -> ((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN,...)))."""
        return self._thrfrg(layout, 0, 1, self.atom.layout_c_tv)

    def _tiled(self, which):
        tm, tn, tk = self.tile_size_mnk
        v = self.thr_layout_vmnk
        if which == "C":
            tv = self.thrfrg_C(make_layout((tm, tn)))
            return composition(tv, (self._thr_inv, None))
        if which == "A":
            tv = self.thrfrg_A(make_layout((tm, tk)))
            # (ThrV,(ThrM,ThrK)) -> (ThrV,(ThrM,ThrN,ThrK)): threads along N see the same A values
            spread = Layout._new((v[1].size(), v[2].size()), (1, 0))
        else:
            tv = self.thrfrg_B(make_layout((tn, tk)))
            spread = Layout._new((v[1].size(), v[2].size()), (0, 1))
        tv = composition(tv, ((None, (spread, None)), None))
        return composition(tv, (self._thr_inv, None))

    @property
    def tv_layout_A_tiled(self):
        """(thr_idx, val) -> m + tile_M * k over the tile_M x tile_K tile of A."""
        return self._tiled("A")

    @property
    def tv_layout_B_tiled(self):
        """(thr_idx, val) -> n + tile_N * k over the tile_N x tile_K tile of B."""
        return self._tiled("B")

    @property
    def tv_layout_C_tiled(self):
        """(thr_idx, val) -> m + tile_M * n over the tile_M x tile_N tile of C."""
        return self._tiled("C")

    def get_slice(self, thr_idx):
        """The view of thread ``thr_idx`` (0 <= thr_idx < size)."""
        if not is_int(thr_idx) or not 0 <= thr_idx < self.size:
            raise LayoutError(f"TiledMMA.get_slice: thread {thr_idx!r} is outside 0..{self.size - 1}")
        return ThrMMA(self, thr_idx)

    def _partition_shape(self, shape, mi, mj, atom_tv):
        if not is_tuple(shape) or len(shape) < 2:
            raise LayoutError(f"partition_shape: shape {shape!r} needs at least two modes")
        v = atom_tv[1].shape
        out = [v]
        for k, m in enumerate((mi, mj)):
            per = self.atom.shape_mnk[m] * self.thr_layout_vmnk[m + 1].size()
            if product(shape[k]) % per:
                raise LayoutError(f"partition_shape: mode {k} of {shape} is not a multiple of {per} "
                                  f"(atom {'MNK'[m]} x atoms in {'MNK'[m]})")
            out.append(product(shape[k]) // per)
        return tuple(out) + tuple(shape[2:])

    def partition_shape_A(self, shape_mk):
        """(FrgV, RestM, RestK, ...) of a thread's share of an M x K tensor (CuTe's ``partition_shape_A``)."""
        return self._partition_shape(tuple(shape_mk), 0, 2, self.atom.layout_a_tv)

    def partition_shape_B(self, shape_nk):
        return self._partition_shape(tuple(shape_nk), 1, 2, self.atom.layout_b_tv)

    def partition_shape_C(self, shape_mn):
        return self._partition_shape(tuple(shape_mn), 0, 1, self.atom.layout_c_tv)

    # ---- register fragments: DSL tiled_mma.make_fragment_A/B/C, CuTe C++ make_fragment_A/B/C --------------

    def _make_fragment(self, x, which):
        op = f"make_fragment_{which}"
        atom_tv = {"A": self.atom.layout_a_tv, "B": self.atom.layout_b_tv, "C": self.atom.layout_c_tv}[which]
        if which != "C" and atom_tv[0].stride == 0:
            raise LayoutError(f"{op}: operand {which} of {self.atom.name} is read from shared memory through a "
                              f"matrix descriptor (every thread sees the whole tile: {atom_tv}); there is no "
                              f"register fragment to make -- only register operands (mma.sync, wgmma RS's A) have one")
        from_shape = isinstance(x, (tuple, list))
        layout = make_layout(tuple(x)) if from_shape else _layout_of(x, op)
        v = atom_tv[1].size()
        what = {"A": "(FrgV,RestM,RestK,...)", "B": "(FrgV,RestN,RestK,...)", "C": "(FrgV,RestM,RestN,...)"}[which]
        if not is_tuple(layout.shape) or len(layout.shape) < 3 or product(layout.shape[0]) != v:
            raise LayoutError(
                f"{op}: {layout} is not a thread's partition {what}: {self.atom.name} gives each thread {v} values "
                f"of {which} (mode 0 must have size {v}, and there must be at least 3 modes); partition first -- "
                f"thr_mma.partition_{which}(tensor) or tiled_mma.partition_shape_{which}(shape) (the CuTe DSL "
                f"accepts anything here and returns a fragment the MMA cannot use)")
        if which == "C" or from_shape:   # accumulators never follow the input's order (CuTe's make_fragment_C)
            frag = make_layout(layout.shape)
        else:
            frag = _fragment_layout(layout, op)
        return make_tensor(0, frag)

    def make_fragment_A(self, x):
        """The registers of a thread's A fragment, as ``tensor<0 o layout>`` (offset = register index).

        ``x`` is a thread's partition ``(FrgV,RestM,RestK,...)`` (a Tensor or Layout from ``partition_A``,
        whose stride order the fragment follows: mode 0 compact, then the rest in the order of its strides)
        or such a shape (compact column-major). DSL: ``tiled_mma.make_fragment_A(thr_mma.partition_A(sA))``.

        >>> from layoutlab import nvgpu
        >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)))
        >>> tm.make_fragment_A(tm.get_slice(3).partition_A(make_layout((32, 64), stride=(64, 1))))
        tensor<0 o ((2,2,2),2,4):((1,2,4),32,8)>
        """
        return self._make_fragment(x, "A")

    def make_fragment_B(self, x):
        """The registers of a thread's B fragment (see :meth:`make_fragment_A`); ``x`` is ``(FrgV,RestN,RestK,...)``."""
        return self._make_fragment(x, "B")

    def make_fragment_C(self, x):
        """The accumulator registers of a thread: always compact column-major over the partition's shape
        (CuTe never follows the C tensor's order for accumulators).

        >>> from layoutlab import nvgpu
        >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (2, 2, 1))
        >>> tm.make_fragment_C(tm.partition_shape_C((64, 64)))
        tensor<0 o ((2,2),2,4):((1,2),4,8)>
        """
        return self._make_fragment(x, "C")

    def __str__(self):
        head = ["Tiled MMA", f"  Thr Layout VMNK: {self.thr_layout_vmnk}",
                f"  Permutation MNK: {format_tree(self.permutation_mnk)}", "MMA Atom"]
        return "\n".join(head) + "\n" + self.atom._body(17)

    def __repr__(self):
        return f"TiledMMA({self.atom.name}, {self.atom_layout_mnk}, {format_tree(self.permutation_mnk)})"


class ThrMMA:
    """Thread ``thr_idx``'s view of a :class:`TiledMMA`: ``partition_A/B/C`` cut its values out of a tensor."""

    def __init__(self, tiled_mma, thr_idx):
        self.tiled_mma = tiled_mma
        self.thr_idx = thr_idx
        # the (V, M, N, K) coordinate at which the thread layout *produces* thr_idx (CuTe's get_flat_coord:
        # read through the strides, so warps numbered along N first land in the right place)
        self.thr_vmnk = get_flat_coord(tiled_mma.thr_layout_vmnk, thr_idx)

    def _partition(self, x, thrfrg, i, j, op):
        layout = _layout_of(x, op)
        t = thrfrg(layout)
        v = self.thr_vmnk
        rest = t.shape[1][1]
        crd = ((v[0], (v[i], v[j])), (None, tuple(None for _ in rest) if is_tuple(rest) else None))
        sub, offset = slice_and_offset(crd, t)
        return _as_tensor_result(x, offset, sub)

    def partition_A(self, tensor_mk):
        """Thread's values of an (M, K, ...) tensor: shape (FrgV, RestM, RestK, ...)."""
        return self._partition(tensor_mk, self.tiled_mma.thrfrg_A, 1, 3, "partition_A")

    def partition_B(self, tensor_nk):
        """Thread's values of an (N, K, ...) tensor: shape (FrgV, RestN, RestK, ...)."""
        return self._partition(tensor_nk, self.tiled_mma.thrfrg_B, 2, 3, "partition_B")

    def partition_C(self, tensor_mn):
        """Thread's values of an (M, N, ...) tensor: shape (FrgV, RestM, RestN, ...)."""
        return self._partition(tensor_mn, self.tiled_mma.thrfrg_C, 1, 2, "partition_C")

    def _partition_fragment(self, x, which):
        tm = self.tiled_mma
        if isinstance(x, (tuple, list)):
            shape = getattr(tm, f"partition_shape_{which}")(tuple(x))
            return getattr(tm, f"make_fragment_{which}")(shape)
        return getattr(tm, f"make_fragment_{which}")(getattr(self, f"partition_{which}")(x))

    def partition_fragment_A(self, tensor_mk):
        """The registers this thread needs for its A values of ``tensor_mk``: ``make_fragment_A(partition_A(t))``
        (CuTe C++ ``thr_mma.partition_fragment_A(sA)``; the DSL spells it out as
        ``tiled_mma.make_fragment_A(thr_mma.partition_A(sA))``). A shape ``(M,K)`` gives the compact fragment
        of ``partition_shape_A``.

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
    """CuTe C++'s free ``partition_fragment_A``: ``thr_mma.partition_fragment_A(x)``; with a TiledMMA, ``x``
    must be a shape (the fragment does not depend on the thread then).

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
    """Tile an MMA atom (DSL: ``cute.make_tiled_mma(op_or_atom, atom_layout_mnk, permutation_mnk)``).

    ``atom_layout_mnk``: how many atoms (warps / warpgroups) along M, N, K, as a tuple or Layout.
    ``permutation_mnk``: per mode None (tile = atom x atoms), an int tile size (32 -> ``32:1``: the extra
    factor is repeated values, the "ValLayoutMNK" of older CuTe), or a permuting Layout.

    >>> from layoutlab import nvgpu
    >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), (2, 2, 1))
    >>> print(tm.tv_layout_C_tiled)
    ((4,8,2,2),((2,2),(1,1))):((64,1,16,256),((32,8),(0,0)))
    """
    atom = op_or_atom if isinstance(op_or_atom, MmaAtom) else make_mma_atom(op_or_atom)
    return TiledMMA(atom, atom_layout_mnk, permutation_mnk)
