"""Gluon's layout classes (``triton.experimental.gluon.language``) and their linear layouts.

Gluon's class and keyword names; ``.to_linear_layout(shape)`` gives Gluon's bases (checked in ``tests/linear/test_gluon.py``):
``register, lane, warp`` (distributed) or ``offset`` (shared) -> ``dim0, dim1, ...``. Fitting to a shape (Triton's
``combineCtaCgaWithShape``): a smaller tile repeats through extra register bits; a larger one loses its biggest bases
along the too-large dim: registers dropped, lanes/warps zeroed (they hold copies: a broadcast).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import LayoutError
from .layout import LinearLayout
from .utils import ensure_layout_not_smaller_than
from .f2 import is_pow2, log2

__all__ = ["BlockedLayout", "SliceLayout", "NVMMADistributedLayout", "DotOperandLayout", "NVMMASharedLayout",
           "SwizzledSharedLayout"]


def _dims(rank):
    return [f"dim{i}" for i in range(rank)]


def _pow2_list(name, xs, op):
    xs = [int(x) for x in xs]
    for x in xs:
        if not is_pow2(x):
            raise LayoutError(f"{op}: {name}={xs} has {x}, not a power of two")
    return xs


def _check_shape(shape, rank, op):
    shape = [int(s) for s in shape]
    if len(shape) != rank:
        raise LayoutError(f"{op}.to_linear_layout: shape {shape} has rank {len(shape)}, the layout has rank {rank}")
    return _pow2_list("shape", shape, op)


def _order(first, second):
    """Dims ``first, second`` (the two minor ones, in either order), then the batch dims, outermost last."""
    return [first, second] + list(range(min(first, second) - 1, -1, -1))


def _identity_nd(in_dim, sizes, order, zero_dim=None):
    """Identity from ``in_dim`` onto the dims, most minor (``order[0]``) first; ``zero_dim`` is broadcast (zeros)."""
    ll = LinearLayout.empty()
    for d in order:
        f = LinearLayout.zeros_1d if d == zero_dim else LinearLayout.identity_1d
        ll = ll * f(sizes[d], in_dim, f"dim{d}")
    return ll


def _fit_to_shape(ll, shape, broadcast_registers=False):
    """Fit ``ll`` to ``shape`` (module docstring); with ``broadcast_registers`` (MMA layouts) cut register bases
    are zeroed, not dropped (each basis here walks one dim, so a cut one is all zero).  Out-dims ``dim0, ...``."""
    want = dict(zip(_dims(len(shape)), shape))
    ll = ensure_layout_not_smaller_than(ll, want)
    bases = [(d, [list(v) for v in vs]) for d, vs in ll.bases]
    for k, (name, size) in enumerate(ll.out_dims):
        biggest = sorted((v for _, vs in bases for v in vs if v[k]), key=lambda v: -v[k])
        for v in biggest[:max(0, log2(size) - log2(want[name]))]:
            v[k] = 0
    ll = LinearLayout(bases if broadcast_registers else _without_zero_registers(bases),
                      [(n, min(s, want[n])) for n, s in ll.out_dims], require_surjective=False)
    return ll.transpose_outs(list(want))


def _without_zero_registers(bases):
    return [(d, [v for v in vs if any(v)] if d == "register" else vs) for d, vs in bases]


def _mma_layout(mma, shape, tile, k_width, order, k_dim=None):
    """Triton's nvidiaMmaTile (kWidth regs, 4 lanes (inner); 8 lanes, repeats (outer); repeats (inner)) times
    the warps of the ``mma`` parent (broadcast along ``k_dim``), fitted to ``shape``."""
    inner, outer = f"dim{order[0]}", f"dim{order[1]}"
    ll = (LinearLayout.identity_1d(k_width, "register", inner)
          * LinearLayout.identity_1d(4, "lane", inner)
          * LinearLayout.identity_1d(8, "lane", outer)
          * LinearLayout.identity_1d(tile[order[1]] // 8, "register", outer)
          * LinearLayout.identity_1d(tile[order[0]] // (k_width * 4), "register", inner)
          * _identity_nd("register", tile, order[2:]))      # size-1 batch dims, so a rank-3 tile names every dim
    warps = _identity_nd("warp", mma.warps_per_cta, mma._warp_order(), k_dim)
    return _fit_to_shape(ll * warps.transpose_outs(ll.get_out_dim_names()), shape, broadcast_registers=True)


@dataclass(frozen=True)
class BlockedLayout:
    """Each thread holds a ``size_per_thread`` block, tiled by lanes and warps; ``order``: most contiguous dim first.

    Math: L = I_reg(size_per_thread) * I_lane(threads_per_warp) * I_warp(warps_per_cta), dims in ``order``:

    >>> BlockedLayout([2, 2], [4, 8], [2, 1], [1, 0]).to_linear_layout([16, 16]).bases
    [('register', [[0, 1], [1, 0]]), ('lane', [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]]), ('warp', [[8, 0]])]
    """
    size_per_thread: list
    threads_per_warp: list
    warps_per_cta: list
    order: list

    def __post_init__(self):
        op, r = "BlockedLayout", len(self.size_per_thread)
        if not (len(self.threads_per_warp) == len(self.warps_per_cta) == len(self.order) == r):
            raise LayoutError(f"{op}: size_per_thread, threads_per_warp, warps_per_cta and order must have the same "
                              f"length (the rank), got {r}, {len(self.threads_per_warp)}, {len(self.warps_per_cta)}, "
                              f"{len(self.order)}")
        if sorted(self.order) != list(range(r)):
            raise LayoutError(f"{op}: order {list(self.order)} is not a permutation of 0..{r - 1}")
        for name in ("size_per_thread", "threads_per_warp", "warps_per_cta"):
            _pow2_list(name, getattr(self, name), op)

    @property
    def rank(self):
        return len(self.order)

    def to_linear_layout(self, shape) -> LinearLayout:
        shape = _check_shape(shape, self.rank, "BlockedLayout")
        ll = (_identity_nd("register", self.size_per_thread, self.order)
              * _identity_nd("lane", self.threads_per_warp, self.order)
              * _identity_nd("warp", self.warps_per_cta, self.order))
        return _fit_to_shape(ll, shape)


@dataclass(frozen=True)
class SliceLayout:
    """The layout of a tensor reduced along ``dim`` of a ``parent`` layout (rank one lower).

    Math: the parent on the shape with size 1 inserted at ``dim``, output ``dim`` dropped, zero register bases
    deleted (the lanes that walked dim 1 now hold copies: zero bases).

    >>> SliceLayout(1, BlockedLayout([2, 2], [4, 8], [2, 1], [1, 0])).to_linear_layout([16]).bases
    [('register', [[1]]), ('lane', [[0], [0], [0], [2], [4]]), ('warp', [[8]])]
    """
    dim: int
    parent: object

    @property
    def rank(self):
        return self.parent.rank - 1

    def to_linear_layout(self, shape) -> LinearLayout:
        shape = [int(s) for s in shape]
        if not 0 <= self.dim <= len(shape):
            raise LayoutError(f"SliceLayout: dim {self.dim} out of range for parent rank {self.parent.rank}")
        parent = self.parent.to_linear_layout(shape[:self.dim] + [1] + shape[self.dim:])
        keep = [n for k, n in enumerate(parent.get_out_dim_names()) if k != self.dim]
        sub = parent.sublayout(parent.get_in_dim_names(), keep)
        sizes = [(f"dim{k}", sub.get_out_dim_size(n)) for k, n in enumerate(keep)]
        return LinearLayout(_without_zero_registers(sub.bases), sizes, require_surjective=False)


@dataclass(frozen=True)
class NVMMADistributedLayout:
    """The MMA accumulator: ``version=[2,0]`` Ampere ``mma.sync`` (16x8), ``[3,0]`` Hopper wgmma (16xN per warp,
    ``instr_shape=[16,N,K]``); warps tile row-major on Ampere, along M first on Hopper.

    >>> for dim, bases in NVMMADistributedLayout([3, 0], [4, 1], [16, 64, 16]).to_linear_layout([64, 64]).bases:
    ...     print(dim, bases)
    register [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]]
    lane [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]
    warp [[16, 0], [32, 0]]
    """
    version: list
    warps_per_cta: list
    instr_shape: list

    def __post_init__(self):
        if list(self.version)[0] not in (2, 3):
            raise LayoutError(f"NVMMADistributedLayout: version {list(self.version)}; 2 (mma.sync) or 3 (wgmma)")
        _pow2_list("warps_per_cta", self.warps_per_cta, "NVMMADistributedLayout")

    @property
    def rank(self):
        return len(self.warps_per_cta)

    @property
    def is_hopper(self):
        return list(self.version)[0] == 3

    def _warp_order(self):
        r = self.rank
        return _order(r - 2, r - 1) if self.is_hopper else _order(r - 1, r - 2)

    def to_linear_layout(self, shape) -> LinearLayout:
        r = self.rank
        shape = _check_shape(shape, r, "NVMMADistributedLayout")
        tile = [1] * (r - 2) + [16, self.instr_shape[1] if self.is_hopper else 8]
        return _mma_layout(self, shape, tile, 2, _order(r - 1, r - 2))


@dataclass(frozen=True)
class DotOperandLayout:
    """The register layout of operand ``operand_index`` 0 (A, M x K) or 1 (B, K x N; refused for Hopper, which reads
    B from shared memory) of an ``NVMMADistributedLayout``; ``k_width`` K elements per register group; warps along
    K broadcast. A tile wider than the tensor keeps its register bases, zeroed:

    >>> mma = NVMMADistributedLayout([2, 0], [1, 1], [16, 8])
    >>> DotOperandLayout(0, mma, 2).to_linear_layout([16, 8]).bases[0]       # K = 8 < 8 * k_width
    ('register', [[0, 1], [8, 0], [0, 0]])
    """
    operand_index: int
    parent: object
    k_width: int

    def __post_init__(self):
        if self.operand_index not in (0, 1):
            raise LayoutError(f"DotOperandLayout: operand_index {self.operand_index} must be 0 (A) or 1 (B)")
        if not isinstance(self.parent, NVMMADistributedLayout):
            raise LayoutError("DotOperandLayout: only an NVMMADistributedLayout parent is modelled here")
        if self.operand_index == 1 and self.parent.is_hopper:
            raise LayoutError("DotOperandLayout: wgmma reads B from shared memory; a v3 parent has no B register "
                              "layout")
        _pow2_list("k_width", [self.k_width], "DotOperandLayout")

    @property
    def rank(self):
        return self.parent.rank

    def to_linear_layout(self, shape) -> LinearLayout:
        r = self.rank
        shape = _check_shape(shape, r, "DotOperandLayout")
        k_dim, mn_dim = (r - 1, r - 2) if self.operand_index == 0 else (r - 2, r - 1)
        tile = [1] * r
        tile[k_dim], tile[mn_dim] = self.k_width * 8, 16 if self.operand_index == 0 else 8
        return _mma_layout(self.parent, shape, tile, self.k_width, _order(k_dim, mn_dim), k_dim)


def _swizzle_rows(vec, per_phase, max_phase, n):
    """Column offsets of rows 1, 2, 4, ... (< ``n``) of an XOR swizzle: ``vec * ((row / per_phase) % max_phase)``."""
    return [(1 << k, vec * (((1 << k) // per_phase) % max_phase)) for k in range(log2(n))]


@dataclass(frozen=True)
class NVMMASharedLayout:
    """The wgmma/TMA shared layout: rows of ``swizzle_byte_width`` (0/32/64/128) bytes, 16-byte chunks XORed by row
    as CuTe's ``S<0..3,4,3>``; ``transposed``: dim 0 contiguous; ``fp4_padded``: packed fp4 pairs in the first 8
    bytes of each 16-byte chunk. Math: offset bits below the row width walk the columns; row bit r adds
    (2^r, vec * ((2^r / per_phase) % max_phase)), vec = 16 bytes, per_phase = 128/width, max_phase = width/16. The
    tile is one TMA box (Triton's ``getTMABlockShape``), outer dims collapsed into rows; the tensor repeats it.

    >>> NVMMASharedLayout(128, 16).to_linear_layout([16, 64]).apply({"offset": 64})
    {'dim0': 1, 'dim1': 8}
    """
    swizzle_byte_width: int
    element_bitwidth: int
    rank: int = 2
    transposed: bool = False
    fp4_padded: bool = False

    def __post_init__(self):
        op, width, bits = "NVMMASharedLayout", self.swizzle_byte_width, self.element_bitwidth
        if width not in (0, 32, 64, 128):
            raise LayoutError(f"{op}: swizzle_byte_width={width}; must be 0, 32, 64 or 128")
        if bits not in (8, 16, 32, 64):
            raise LayoutError(f"{op}: element_bitwidth={bits}; must be 8, 16, 32 or 64")
        if self.fp4_padded and (width, bits) != (128, 8):
            raise LayoutError(f"{op}: fp4_padded needs swizzle_byte_width=128 and element_bitwidth=8 (packed fp4 "
                              f"pairs), got {width} and {bits}")
        if self.rank < (2 if width else 1):
            raise LayoutError(f"{op}: rank {self.rank}; a swizzled layout needs rank >= 2 (rows and columns)")

    def _tma_box(self, shape):
        """Triton's getTMABlockShape (packed sizes): each dim at most 256, the contiguous dim one swizzle row."""
        box, contig = list(shape), 0 if self.transposed else self.rank - 1
        pack = 2 if self.fp4_padded else 1
        box[contig] *= pack
        box = [min(b, 256) for b in box]
        if self.swizzle_byte_width:
            row = 8 * self.swizzle_byte_width // self.element_bitwidth
            if box[contig] < row:
                raise LayoutError(f"NVMMASharedLayout: shape {shape} is smaller than one {self.swizzle_byte_width}-"
                                  f"byte swizzle row of {row} {self.element_bitwidth}-bit elements along its "
                                  f"contiguous dim {contig} (it has {shape[contig] * pack}); Gluon aborts here")
            box[contig] = row
        box[contig] //= pack
        return box

    def _core_matrix(self):
        """8 rows of one swizzle row each (offset -> (row, col)); fp4 padding bytes share their data's coordinates."""
        bits, width = self.element_bitwidth, self.swizzle_byte_width
        packed = (lambda c: c // 16 * 8 + c % 8) if self.fp4_padded else (lambda c: c)  # noqa: E731
        cols = [[0, packed(1 << k)] for k in range(log2(8 * width // bits))]
        rows = [[r, packed(c)] for r, c in _swizzle_rows(128 // bits, 128 // width, width // 16, 8)]
        return LinearLayout.from_bases([("offset", cols + rows)], ["dim0", "dim1"])

    def to_linear_layout(self, shape) -> LinearLayout:
        r = self.rank
        shape = _check_shape(shape, r, "NVMMASharedLayout")
        names, box = _dims(r), self._tma_box(shape)
        want = dict(zip(names, shape))
        if not self.swizzle_byte_width:
            if self.transposed and r > 2:
                raise LayoutError(f"NVMMASharedLayout: an unswizzled transposed layout of rank {r} is refused: Triton "
                                  f"3.9 builds one whose offsets repeat elements (not injective) and whose contiguous "
                                  f"dim is not dim 0; use rank 2, a swizzle, or transposed=False")
            ll = _identity_nd("offset", box, list(range(r)) if self.transposed else list(range(r - 1, -1, -1)))
            return ensure_layout_not_smaller_than(ll, want).transpose_outs(names)
        rows, cols = (box[-1], math.prod(box[:-1])) if self.transposed else (math.prod(box[:-1]), box[-1])
        tile = self._core_matrix()
        if rows < 8 or cols < tile.get_out_dim_size("dim1"):
            raise LayoutError(f"NVMMASharedLayout: shape {shape} gives a {rows}x{cols} box, smaller than one 8x"
                              f"{tile.get_out_dim_size('dim1')} swizzle tile; Gluon aborts here")
        ll = ensure_layout_not_smaller_than(tile, {"dim0": rows, "dim1": cols})
        # split the (row, col) box row-major into the box dims (rotated when dim 0 is the contiguous one)
        target = box[1:] + box[:1] if self.transposed else box
        ll = ll.transpose_outs(["dim1", "dim0"]).reshape_outs([(names[d], target[d]) for d in reversed(range(r))])
        ll = ll.transpose_outs(names)
        if self.transposed:         # dim 0 is contiguous: the last box dim becomes dim 0
            ll = LinearLayout.from_bases([(d, [[v[-1]] + v[:-1] for v in vs]) for d, vs in ll.bases], names)
        return ensure_layout_not_smaller_than(ll, want)


@dataclass(frozen=True)
class SwizzledSharedLayout:
    """The classic XOR-swizzled shared layout: ``vec`` elements together, ``order`` contiguous dim first.

    Math: offset bits walk the contiguous dim; row bit r maps to (2^r, vec * ((2^r / per_phase) % max_phase) mod cols).

    >>> SwizzledSharedLayout(1, 1, 32, [1, 0]).to_linear_layout([32, 32]).apply({"offset": 32 * 3 + 5})  # transpose
    {'dim0': 3, 'dim1': 6}
    """
    vec: int
    per_phase: int
    max_phase: int
    order: list

    def __post_init__(self):
        _pow2_list("vec, per_phase, max_phase", [self.vec, self.per_phase, self.max_phase], "SwizzledSharedLayout")
        if sorted(self.order) != list(range(len(self.order))):
            raise LayoutError(f"SwizzledSharedLayout: order {list(self.order)} is not a permutation")

    @property
    def rank(self):
        return len(self.order)

    def to_linear_layout(self, shape) -> LinearLayout:
        r = self.rank
        shape = _check_shape(shape, r, "SwizzledSharedLayout")
        col_dim, row_dim = self.order[0], self.order[1]
        n_cols, n_rows = shape[col_dim], shape[row_dim]
        bases = [[1 << k, 0] for k in range(log2(n_cols))]
        bases += [[c % n_cols, x] for x, c in _swizzle_rows(self.vec, self.per_phase, self.max_phase, n_rows)]
        ll = LinearLayout([("offset", bases)], [(f"dim{col_dim}", n_cols), (f"dim{row_dim}", n_rows)],
                          require_surjective=False)
        return (ll * _identity_nd("offset", shape, self.order[2:])).transpose_outs(_dims(r))
