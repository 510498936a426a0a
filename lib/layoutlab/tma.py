"""The CuTe view of TMA on a CPU: ``make_tiled_tma_atom`` as the CuTe DSL 4.8.1 derives it (plus the driver's
checks), the copies that fill a CTA tile and where their bytes land (checked on an H100); re-exports
:mod:`layoutlab.tensor_map` and :mod:`layoutlab.async_copy`. Sources: CUDA Driver API, ``cuTensorMapEncodeTiled``;
PTX ISA, ``cp.async.bulk.tensor``; the CuTe DSL's ``cpasync.make_tiled_tma_atom``. An 8 x 64 fp16 K-major tile::

    >>> from layoutlab import Layout, make_composed_layout, make_swizzle
    >>> sl = make_composed_layout(make_swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    >>> atom = make_tiled_tma_atom("G2S", Layout((256, 128), (128, 1)), sl, (8, 64), "f16")
    >>> atom.tma_gbasis, atom.copy_bits, atom.tensor_map.box_dim
    ('(64,8):(1@1,1@0)', 8192, (64, 8))
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import async_copy, tensor_map
from .async_copy import *  # noqa: F401,F403  (re-exported: they were defined here before the split)
from .errors import LayoutError
from .inttuple import format_tree, idx2crd, is_int, size
from .layout import Layout
from .swizzle import ComposedLayout, Swizzle
from .tensor import Tensor
from .tensor_map import *  # noqa: F401,F403
from .tensor_map import (SWIZZLE_SPAN, TMA_DATA_TYPES, TensorMap, _dtype, _ints, _largest_divisor_at_most,
                         box_placement, encode_tiled, swizzle_mode_of, tma_swizzle)

__all__ = ["TmaAtom", "make_tiled_tma_atom", "TmaCopy", "tma_partition", "tile_placement", "multicast_slices",
           "TMA_DSL_SETUP", "tma_dsl_summary"] + tensor_map.__all__ + async_copy.__all__

#: Setup for :func:`layoutlab.dsl.dsl_eval`: ``tma(dt, gshape, gstride, smem_layout, tiler)`` traces the DSL's
#: atom and returns what :func:`tma_dsl_summary` gives for ours; ``staged(kind, dt, shape, order)`` tiles a GMMA atom.
TMA_DSL_SETUP = """
from cutlass.cute.nvgpu import cpasync
W = cute.nvgpu.warpgroup
DT = {"f16": cutlass.Float16, "bf16": cutlass.BFloat16, "f32": cutlass.Float32, "i8": cutlass.Int8,
      "tf32": cutlass.TFloat32}
def tma(dt, gshape, gstride, sl, tiler):
    ptr = cute.make_ptr(DT[dt], 0, cute.AddressSpace.gmem, assumed_align=16)
    g = cute.make_tensor(ptr, cute.make_layout(gshape, stride=gstride))
    a, t = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), g, sl, tiler)
    ty = str(a._trait.value.type)
    gb = ty.split('tma_gbasis = <"')[1].split('"')[0]
    bits = ty.split("copy_bits = ")[1].split(",")[0]
    return gb + "|" + bits + "|" + str(t) + "|" + str(a)
def staged(kind, dt, shape, order):
    a = W.make_smem_layout_atom(getattr(W.SmemLayoutAtomKind, kind), DT[dt])
    return cute.tile_to_shape(a, shape, order=order)
"""


def tma_dsl_summary(atom) -> str:
    """``"tma_gbasis|copy_bits|TMA tensor|atom"`` for our atom, the string ``TMA_DSL_SETUP``'s ``tma()`` returns.

    >>> from layoutlab import make_composed_layout, make_swizzle
    >>> sl = make_composed_layout(make_swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    >>> atom = make_tiled_tma_atom("G2S", Layout((256, 128), (128, 1)), sl, (8, 64), "f16")
    >>> print(tma_dsl_summary(atom).split("|")[:3])
    ['(64,8):(1@1,1@0)', '8192', 'tensor<(0,0) o (256,128):(1@1,1@0)>']
    """
    return f"{atom.tma_gbasis}|{atom.copy_bits}|{atom.tma_tensor()}|{atom}"


_OPS = {"G2S": "CopyBulkTensorTileG2SOp", "G2S_MULTICAST": "CopyBulkTensorTileG2SMulticastOp",
        "S2G": "CopyBulkTensorTileS2GOp"}

def _op_name(op):
    key = op if isinstance(op, str) else getattr(op, "__name__", None) or type(op).__name__
    for short, long in _OPS.items():
        if key in (short, long):
            return short
    raise LayoutError(f"make_tiled_tma_atom: op {op!r} must be one of {list(_OPS.values())} "
                      f"(or the short names {list(_OPS)})")


@dataclass(frozen=True)
class TmaAtom:
    """What ``cpasync.make_tiled_tma_atom`` derives and the tensor map it implies (TMA dimension order); ``modes``:
    the box as ``(extent, gmem mode)`` pairs, innermost first (the DSL's ``tma_gbasis``).

    >>> from layoutlab import make_composed_layout, make_swizzle
    >>> sl = make_composed_layout(make_swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    >>> atom = make_tiled_tma_atom("G2S", Layout((256, 128), (128, 1)), sl, (8, 64), "f16")
    >>> atom.tma_gbasis, atom.copy_bits, atom.tensor_map.swizzle
    ('(64,8):(1@1,1@0)', 8192, '128B')
    """

    op: str
    element_type: str
    modes: tuple
    tensor_map: TensorMap
    smem_layout: object
    cta_tiler: tuple
    gmem_layout: Layout
    num_multicast: int = 1
    tma_coord_of_mode: tuple = ()

    @property
    def num_values(self) -> int:
        return math.prod(e for e, _ in self.modes)

    @property
    def copy_bits(self) -> int:
        return self.num_values * TMA_DATA_TYPES[self.element_type][0] * 8

    @property
    def tma_gbasis(self) -> str:
        """Printed as the DSL's atom type prints it, e.g. ``(64,8):(1@1,1@0)``."""
        return format_tree(tuple(e for e, _ in self.modes)) + ":" + _basis(m for _, m in self.modes)

    def tma_tensor(self) -> str:
        """The TMA tensor as the DSL prints it: ``tensor<(0,0) o (256,128):(1@1,1@0)>`` (mode k of the
        global tensor -> TMA coordinate ``tma_coord_of_mode[k]``)."""
        shp = _tup(self.gmem_layout.shape)
        return f"tensor<{format_tree((0,) * len(shp))} o {format_tree(shp)}:{_basis(self.tma_coord_of_mode)}>"

    def __str__(self):
        n = self.num_values
        return ("Copy Atom\n  ThrID:         1:0\n"
                f"  TV Layout Src: (1,{n}):(0,1)\n  TV Layout Dst: (1,{n}):(0,1)\n"
                f"  Value type:    {self.element_type}")


def _tup(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _basis(modes):
    """``(1@m0,1@m1,...)``: unit steps along the given modes, as the DSL prints them."""
    return format_tree(tuple(f"1@{m}" for m in modes))


def _smem_parts(smem_layout, tiler_rank, op):
    if isinstance(smem_layout, ComposedLayout):
        if not isinstance(smem_layout.inner, Swizzle):
            raise LayoutError(f"{op}: a composed smem layout's inner function must be a Swizzle, "
                              f"got {smem_layout.inner}")
        sw, outer, off = smem_layout.inner, smem_layout.outer, smem_layout.offset
    elif isinstance(smem_layout, Layout):
        sw, outer, off = Swizzle(0, 4, 3), smem_layout, 0
    else:
        raise LayoutError(f"{op}: smem layout {smem_layout!r} must be a Layout or a swizzled ComposedLayout")
    if off:
        raise LayoutError(f"{op}: smem layout offset {off} must be 0 (the TMA box starts at the buffer)")
    r = outer.rank()
    if r == tiler_rank + 1:                      # staged: take stage 0
        outer = Layout(tuple(outer.shape[:tiler_rank]), tuple(outer.stride[:tiler_rank]))
    elif r != tiler_rank:
        raise LayoutError(f"{op}: smem layout rank {r} must equal the tiler's rank {tiler_rank} (or one more: "
                          f"a stage mode)")
    return sw, outer


def make_tiled_tma_atom(op, gmem, smem_layout, cta_tiler, element_type="f16", num_multicast=1, *,
                        global_address=0, oob_fill="zero", validate=True) -> TmaAtom:
    """``cute.nvgpu.cpasync.make_tiled_tma_atom(op, gmem_tensor, smem_layout, cta_tiler)`` on a CPU.
    ``gmem``: flat static global layout (element strides); ``smem_layout``: a Layout or swizzled ComposedLayout
    over the tile (+ optional stage mode); ``cta_tiler``: the tile shape. As the DSL: walk smem from offset 0 and
    read which global mode each offset steps along (``tma_gbasis``); keep the leading unit-step modes; cut the
    inner one to the swizzle span, each to 256 (largest divisor; later modes drop to 1); add untouched global modes
    with extent 1. :func:`encode_tiled` then checks the driver rules (the DSL does not; ``validate=False`` skips)::

        >>> from layoutlab import Layout, make_composed_layout, make_swizzle
        >>> sl = make_composed_layout(make_swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
        >>> a = make_tiled_tma_atom("G2S", Layout((256, 128), (128, 1)), sl, (8, 64))
        >>> a.tma_gbasis, a.tma_tensor(), a.tensor_map.swizzle
        ('(64,8):(1@1,1@0)', 'tensor<(0,0) o (256,128):(1@1,1@0)>', '128B')
    """
    fn = "make_tiled_tma_atom"
    opn = _op_name(op)
    dt = _dtype(element_type, fn)
    esize = TMA_DATA_TYPES[dt][0]
    gmem = gmem.layout if isinstance(gmem, Tensor) else gmem
    if not isinstance(gmem, Layout):
        raise LayoutError(f"{fn}: gmem {gmem!r} must be a Layout (or a Tensor with one)")
    gshape, gstride, tiler = _tup(gmem.shape), _tup(gmem.stride), _tup(cta_tiler)
    if not all(is_int(s) for s in gshape + gstride):
        raise LayoutError(f"{fn}: gmem layout {gmem} must be flat and static (one integer per mode)")
    if len(tiler) != len(gshape) or not all(is_int(t) and t > 0 for t in tiler):
        raise LayoutError(f"{fn}: cta_tiler {cta_tiler!r} must give one positive extent per gmem mode "
                          f"({len(gshape)} modes)")
    if opn == "G2S" and num_multicast != 1:
        raise LayoutError(f"{fn}: num_multicast={num_multicast} needs the multicast op "
                          f"CopyBulkTensorTileG2SMulticastOp; the plain G2S op takes 1")
    if not is_int(num_multicast) or num_multicast < 1:
        raise LayoutError(f"{fn}: num_multicast {num_multicast!r} must be a positive integer")
    sw, outer = _smem_parts(smem_layout, len(tiler), fn)
    if tuple(size(s) for s in outer.shape) != tiler:
        raise LayoutError(f"{fn}: smem layout shape {outer.shape} does not cover the tile {tiler}")
    mode = swizzle_mode_of(sw)

    # smem offset -> tile coordinate (the smem layout's right inverse on its contiguous prefix; crd[0]: the origin)
    where = {outer(i): i for i in reversed(range(outer.size()))}      # the first index of each offset
    crd = []
    while len(crd) in where:
        crd.append(idx2crd(where[len(crd)], tiler))
    n = len(crd)

    def shifted(c, k, x):                        # coordinate c moved x steps along mode k
        return c[:k] + (c[k] + x,) + c[k + 1:]

    modes, p = [], 1
    while p < n:
        k = next((k for k in range(len(tiler)) if crd[p] == shifted(crd[0], k, 1)), None)
        if k is None or any(m == k for _, m in modes):
            break                                # not a unit step along a new gmem mode: the box ends here
        ext = 1
        while p * (ext + 1) <= n and crd[p * ext] == shifted(crd[0], k, ext):
            ext += 1
        # the whole block [0, p*ext) must be the product of the modes so far
        if not all(crd[s] == shifted(crd[s % p], k, s // p) for s in range(p * ext)):
            break
        modes.append([ext, k])
        p *= ext
    if not modes:
        raise LayoutError(f"{fn}: shared-memory offset 1 does not step along a single global mode; the smem "
                          f"layout {smem_layout} must be contiguous along some mode of the tile")
    # the swizzle span cuts the inner mode, 256 cuts every mode; after a cut, the later modes drop to 1
    for i, (ext, k) in enumerate(modes):
        cap = min(SWIZZLE_SPAN[mode] // esize, 256) if i == 0 and mode != "none" else 256
        if ext > cap:
            modes[i:] = [[_largest_divisor_at_most(ext, cap), k]] + [[1, q] for _, q in modes[i + 1:]]
            break
    used = {k for _, k in modes}
    modes += [[1, k] for k in range(len(gshape)) if k not in used]
    if len(modes) > 5:
        raise LayoutError(f"{fn}: the box needs {len(modes)} TMA dimensions; TMA handles at most 5")
    box, ks = zip(*modes)
    if gstride[ks[0]] != 1:
        raise LayoutError(
            f"{fn}: shared memory is contiguous along global mode {ks[0]}, whose global stride is "
            f"{gstride[ks[0]]}; TMA reads box dimension 0 contiguously from global memory and writes it "
            f"contiguously to shared memory (it cannot transpose): make the smem layout contiguous along "
            f"mode {next((k for k, s in enumerate(gstride) if s == 1), 'with stride 1')} instead")
    gdim, gstr = tuple(gshape[k] for k in ks), tuple(gstride[k] * esize for k in ks[1:])
    tmap = (encode_tiled(dt, gdim, gstr, box, swizzle=mode, oob_fill=oob_fill, global_address=global_address)
            if validate else TensorMap(dt, gdim, gstr, box, (1,) * len(box), mode, "none", oob_fill, 0, global_address))
    coord_of = {k: t for t, (_, k) in enumerate(modes)}
    return TmaAtom(opn, dt, tuple(map(tuple, modes)), tmap, smem_layout, tiler, gmem, num_multicast,
                   tuple(coord_of[m] for m in range(len(gshape))))


@dataclass(frozen=True)
class TmaCopy:
    """One ``cp.async.bulk.tensor``: box corner (TMA coordinates, innermost first), unswizzled smem element offset.

    >>> TmaCopy(box_start=(0, 8), smem_offset=0)
    TmaCopy(box_start=(0, 8), smem_offset=0)
    """

    box_start: tuple
    smem_offset: int


def tma_partition(atom: TmaAtom, tile_coord) -> list:
    """The TMA copies that fill CTA tile ``tile_coord``, one per box, as ``cpasync.tma_partition`` + ``cute.copy``
    issue them: copy j fills smem offsets from ``j * atom.num_values`` on, starting at the tile coordinate there.

    >>> from layoutlab import make_composed_layout, make_swizzle
    >>> sl = make_composed_layout(make_swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    >>> atom = make_tiled_tma_atom("G2S", Layout((256, 128), (128, 1)), sl, (8, 64), "f16")
    >>> tma_partition(atom, (1, 0))         # tile (1, 0): rows 8..15, one box
    [TmaCopy(box_start=(0, 8), smem_offset=0)]
    """
    outer = _smem_parts(atom.smem_layout, len(atom.cta_tiler), "tma_partition")[1]
    tc = _ints("tile_coord", tile_coord, len(atom.cta_tiler), "tma_partition")
    where = {outer(i): i for i in range(outer.size())}
    copies = []
    for start in range(0, outer.size(), atom.num_values):
        if start not in where:
            raise LayoutError(f"tma_partition: no tile element at smem offset {start}; the smem layout is not "
                              f"compact, so whole boxes cannot tile it")
        crd = idx2crd(where[start], atom.cta_tiler)
        g = [c + t * x for c, t, x in zip(crd, atom.cta_tiler, tc)]
        copies.append(TmaCopy(tuple(g[k] for _, k in atom.modes), start))
    return copies


def tile_placement(atom: TmaAtom, tile_coord, smem_base: int = 0) -> dict:
    """Where each byte of CTA tile ``tile_coord`` lands (the copies of :func:`tma_partition`, swizzled on absolute
    addresses): ``{smem byte - smem_base: (gmem-mode coordinate or None for OOB fill, element byte)}``.

    >>> from layoutlab import make_composed_layout, make_swizzle
    >>> sl = make_composed_layout(make_swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    >>> atom = make_tiled_tma_atom("G2S", Layout((256, 128), (128, 1)), sl, (8, 64), "f16")
    >>> placed = tile_placement(atom, (0, 0))
    >>> len(placed), placed[0], placed[2]       # byte -> ((row, column) of the tile, byte of the element)
    (1024, ((0, 0), 0), ((0, 1), 0))
    """
    esize, sw = atom.tensor_map.element_bytes, tma_swizzle(atom.tensor_map.swizzle)
    out = {}
    for cp in tma_partition(atom, tile_coord):
        base = smem_base + cp.smem_offset * esize
        if base % 128:
            raise LayoutError(f"tile_placement: a box would start at smem byte {base}, not 128-byte aligned")
        for i, (g, b) in enumerate(box_placement(atom.tensor_map, cp.box_start, 0)):
            # relative to an aligned 0, sw(i) is byte i's unswizzled position: swizzle it at the true base
            gm = None if g is None else tuple(g[t] for t in atom.tma_coord_of_mode)
            out[sw(base + sw(i)) - smem_base] = (gm, b)
    return out


def multicast_slices(box_bytes: int, num_ctas: int) -> list:
    """``[(first byte, bytes)]`` per CTA of a ``.multicast::cluster`` load: each of ``num_ctas`` CTAs loads one
    slice (whole 16-byte chunks), written to every CTA's smem; each CTA's barrier still expects the whole tile.

    >>> multicast_slices(16384, 2)
    [(0, 8192), (8192, 8192)]
    """
    if not is_int(num_ctas) or not 1 <= num_ctas <= 16:
        raise LayoutError(f"multicast_slices: num_ctas {num_ctas!r} must be 1..16 (a cluster has at most 16 CTAs)")
    if box_bytes % num_ctas or (box_bytes // num_ctas) % 16:
        raise LayoutError(f"multicast_slices: {box_bytes} bytes do not split into {num_ctas} slices of whole "
                          f"16-byte chunks; use a CTA count that divides {box_bytes // 16}")
    s = box_bytes // num_ctas
    return [(i * s, s) for i in range(num_ctas)]
