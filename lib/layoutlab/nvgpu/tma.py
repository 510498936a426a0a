"""The CuTe view of TMA on a CPU: ``make_tiled_tma_atom`` as the CuTe DSL 4.8.1 derives it (plus the driver's
checks), the copies that fill a CTA tile and where their bytes land (checked on an H100), on top of the tensor
maps (below). Sources: CUDA Driver API, ``cuTensorMapEncodeTiled``;
PTX ISA, ``cp.async.bulk.tensor``; the CuTe DSL's ``cpasync.make_tiled_tma_atom``. An 8 x 64 fp16 K-major tile::

    >>> from layoutlab import Layout, make_composed_layout, make_swizzle
    >>> sl = make_composed_layout(make_swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    >>> atom = make_tiled_tma_atom("G2S", Layout((256, 128), (128, 1)), sl, (8, 64), "f16")
    >>> atom.tma_gbasis, atom.copy_bits, atom.tensor_map.box_dim
    ('(64,8):(1@1,1@0)', 8192, (64, 8))

TMA tensor maps on a CPU: :func:`encode_tiled` checks every rule of ``cuTensorMapEncodeTiled`` (errors quote the
rule); :func:`box_placement` says where each byte of a box lands in smem.
Sources: CUDA Driver API, "Tensor Map Object Management"; PTX ISA, "Tensors" (tiled mode, bounding box, swizzling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product as cartesian

from ..cute.basis import is_int
from ..cute.inttuple import format_tree, idx2crd, prefix_product, size
from ..cute.layout import Layout
from ..cute.swizzle import ComposedLayout, Swizzle
from ..cute.tensor import Tensor
from ..errors import LayoutError

__all__ = ["TmaAtom", "make_tiled_tma_atom", "TmaCopy", "tma_partition", "tile_placement", "multicast_slices",
           "TMA_DSL_SETUP", "tma_dsl_summary", "TMA_DATA_TYPES", "SWIZZLE_SPAN", "TMA_SWIZZLE", "tma_swizzle",
           "swizzle_mode_of", "smem_alignment", "TensorMap", "encode_tiled", "box_placement", "smem_byte_of"]


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


#: TMA element types: name -> (bytes, is floating point, CUtensorMapDataType name).
TMA_DATA_TYPES = {
    "u8": (1, False, "UINT8"), "i8": (1, False, "UINT8"), "u16": (2, False, "UINT16"),
    "u32": (4, False, "UINT32"), "i32": (4, False, "INT32"), "u64": (8, False, "UINT64"),
    "i64": (8, False, "INT64"), "f16": (2, True, "FLOAT16"), "f32": (4, True, "FLOAT32"),
    "f64": (8, True, "FLOAT64"), "bf16": (2, True, "BFLOAT16"), "tf32": (4, True, "TFLOAT32"),
}
_DSL_NAMES = {"Float16": "f16", "BFloat16": "bf16", "Float32": "f32", "TFloat32": "tf32", "Float64": "f64",
              "Int8": "i8", "Uint8": "u8", "Uint16": "u16", "Int32": "i32", "Uint32": "u32", "Int64": "i64",
              "Uint64": "u64", "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64"}

#: Swizzle mode -> span in bytes (the 16-byte chunks of one row are permuted within this span).
SWIZZLE_SPAN = {"none": 0, "32B": 32, "64B": 64, "128B": 128}
#: Swizzle mode -> the CuTe swizzle it applies to shared-memory *byte addresses* (16-byte chunks, 8 rows).
TMA_SWIZZLE = {"none": (0, 4, 3), "32B": (1, 4, 3), "64B": (2, 4, 3), "128B": (3, 4, 3)}


def _dtype(data_type, op):
    name = getattr(data_type, "__name__", None) or str(data_type)
    name = _DSL_NAMES.get(name, name)
    if name not in TMA_DATA_TYPES:
        raise LayoutError(f"{op}: element type {data_type!r} is not a TMA data type; use one of "
                          f"{sorted(TMA_DATA_TYPES)} (or the DSL's Float16, BFloat16, Float32, ...)")
    return name


def _mode(swizzle, op):
    if isinstance(swizzle, Swizzle):
        return swizzle_mode_of(swizzle)
    key = {None: "none", 0: "none", 32: "32B", 64: "64B", 128: "128B"}.get(swizzle, swizzle)
    if key not in SWIZZLE_SPAN:
        raise LayoutError(f"{op}: swizzle {swizzle!r} is not a TMA swizzle mode; use one of "
                          f"{list(SWIZZLE_SPAN)} (CU_TENSOR_MAP_SWIZZLE_NONE/_32B/_64B/_128B)")
    return key


def tma_swizzle(mode) -> Swizzle:
    """The CuTe swizzle TMA swizzle ``mode`` applies to smem byte addresses: the 16-byte chunk index (address bits
    4..) XORed with 1/2/3 bits (32B/64B/128B) of the 128-byte row index (bits 7..).

    >>> sw = tma_swizzle("128B")
    >>> print(sw)
    S<3,4,3>
    >>> hex(sw(0x90))          # byte 0x90 (row 1, chunk 1) goes to chunk 0 of row 1
    '0x80'
    """
    return Swizzle(*TMA_SWIZZLE[_mode(mode, "tma_swizzle")])


def swizzle_mode_of(sw: Swizzle) -> str:
    """The TMA mode of a CuTe swizzle on byte addresses, ``S<0|1|2|3,4,3>`` -> none/32B/64B/128B; any other is
    refused (the CuTe DSL 4.8.1 accepts ``S<3,3,3>`` and shrinks the box; the hardware does only these four).

    >>> swizzle_mode_of(Swizzle(3, 4, 3)), swizzle_mode_of(Swizzle(0, 4, 3))
    ('128B', 'none')
    """
    for mode, bms in TMA_SWIZZLE.items():
        if (sw.num_bits, sw.num_base, sw.num_shift) == bms or (mode == "none" and sw.num_bits == 0):
            return mode
    raise LayoutError(f"swizzle_mode_of: {sw} is not a TMA swizzle; TMA permutes 16-byte chunks (M=4) by the "
                      f"128-byte row index (S=3): S<1,4,3> (32B), S<2,4,3> (64B) or S<3,4,3> (128B) on byte "
                      f"addresses, or no swizzle")


def smem_alignment(mode) -> int:
    """A TMA smem buffer's alignment: 128 bytes, or the swizzle's 8-row pattern: 256/512/1024 for 32B/64B/128B.

    >>> smem_alignment("128B"), smem_alignment("none")
    (1024, 128)
    """
    m = _mode(mode, "smem_alignment")
    return 128 if m == "none" else 8 * SWIZZLE_SPAN[m]


@dataclass(frozen=True)
class TensorMap:
    """The parameters of ``cuTensorMapEncodeTiled``, innermost first (``global_strides``: bytes, dims 1..rank-1;
    ``box_dim``: elements). A box lands in smem densely, dim 0 innermost: ``box_bytes``, an ``mbarrier``'s tx count.

    >>> tm = encode_tiled("f16", (64, 256), (128,), (64, 8), swizzle="128B")
    >>> tm.box_dim, tm.swizzle, tm.element_strides
    ((64, 8), '128B', (1, 1))
    """

    data_type: str
    global_dim: tuple
    global_strides: tuple
    box_dim: tuple
    element_strides: tuple
    swizzle: str = "none"
    interleave: str = "none"
    oob_fill: str = "zero"
    l2_promotion: int = 0
    global_address: int = 0

    @property
    def rank(self) -> int:
        return len(self.global_dim)

    @property
    def element_bytes(self) -> int:
        return TMA_DATA_TYPES[self.data_type][0]

    @property
    def smem_box(self) -> tuple:
        """Elements written per dimension: ``ceil(boxDim[i] / elementStrides[i])`` (dim 0 never strided)."""
        return tuple(b if i == 0 else -(-b // e) for i, (b, e) in enumerate(zip(self.box_dim, self.element_strides)))

    @property
    def box_bytes(self) -> int:
        """Bytes one ``cp.async.bulk.tensor`` writes (the box's ``expect_tx`` count)."""
        return math.prod(self.smem_box) * self.element_bytes

    def fields(self):
        """``(field, value)`` rows as the driver call takes them (for tables)."""
        return [("tensorDataType", f"CU_TENSOR_MAP_DATA_TYPE_{TMA_DATA_TYPES[self.data_type][2]}"),
                ("tensorRank", self.rank), ("globalAddress", hex(self.global_address)),
                ("globalDim", self.global_dim), ("globalStrides (bytes)", self.global_strides),
                ("boxDim", self.box_dim), ("elementStrides", self.element_strides),
                ("interleave", f"CU_TENSOR_MAP_INTERLEAVE_{self.interleave.upper()}"),
                ("swizzle", f"CU_TENSOR_MAP_SWIZZLE_{self.swizzle.upper()}"),
                ("oobFill", "CU_TENSOR_MAP_FLOAT_OOB_FILL_" + ("NONE" if self.oob_fill == "zero"
                                                               else "NAN_REQUEST_ZERO_FMA"))]


def _ints(name, xs, n, op):
    xs = tuple(xs)
    if len(xs) != n or not all(is_int(x) for x in xs):
        raise LayoutError(f"{op}: {name} {xs!r} must hold {n} integers (one per dimension, innermost first)")
    return tuple(int(x) for x in xs)


def encode_tiled(data_type, global_dim, global_strides, box_dim, element_strides=None, *, swizzle="none",
                 interleave="none", oob_fill="zero", l2_promotion=0, global_address=0) -> TensorMap:
    """``cuTensorMapEncodeTiled`` on a CPU: check every documented requirement, return the :class:`TensorMap`.
    Arrays innermost first; ``global_strides`` (bytes) has ``rank - 1`` entries. A broken requirement raises
    :class:`LayoutError` naming the field, the rule and a valid value; a row-major 256 x 100 fp16 matrix::

        >>> encode_tiled("f16", (100, 256), (200,), (64, 8))   # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        layoutlab.errors.LayoutError: encode_tiled: globalStrides[0] = 200 bytes is not a multiple of 16...
    """
    op = "encode_tiled"
    dt = _dtype(data_type, op)
    esize, is_float, _ = TMA_DATA_TYPES[dt]
    rank = len(tuple(global_dim))
    if interleave not in ("none", "16B", "32B"):
        raise LayoutError(f"{op}: interleave {interleave!r} must be 'none', '16B' or '32B'")
    if not 1 <= rank <= 5:
        raise LayoutError(f"{op}: tensorRank {rank} must be in 1..5 (TMA handles at most 5 dimensions); "
                          f"merge or drop dimensions so that at most 5 remain")
    if interleave != "none" and rank < 3:
        raise LayoutError(f"{op}: tensorRank {rank} with interleave {interleave} must be >= 3")
    gdim = _ints("globalDim", global_dim, rank, op)
    gstr = _ints("globalStrides", global_strides, rank - 1, op)
    box = _ints("boxDim", box_dim, rank, op)
    est = _ints("elementStrides", element_strides if element_strides is not None else (1,) * rank, rank, op)
    sw = _mode(swizzle, op)
    if oob_fill not in ("zero", "nan"):
        raise LayoutError(f"{op}: oobFill {oob_fill!r} must be 'zero' (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) or "
                          f"'nan' (..._NAN_REQUEST_ZERO_FMA)")
    align = 32 if interleave == "32B" else 16
    if global_address % align:
        raise LayoutError(f"{op}: globalAddress {global_address:#x} is not {align}-byte aligned; TMA needs a "
                          f"{align}-byte aligned base (e.g. {global_address - global_address % align:#x})")
    for i, d in enumerate(gdim):
        if not 1 <= d <= 2 ** 32:
            raise LayoutError(f"{op}: globalDim[{i}] = {d} must be in 1..2^32")
    for i, s in enumerate(gstr):
        if s % align:
            raise LayoutError(f"{op}: globalStrides[{i}] = {s} bytes is not a multiple of {align}; TMA needs every "
                              f"stride but the innermost in multiples of {align} bytes: pad that dimension so the "
                              f"stride becomes {-(-s // align) * align} (given this one through the CuTe DSL, an H100 read "
                              f"rows {s // 16 * 16} bytes apart, without an error: the stride cut to 16-byte units)")
        if not 0 < s < 2 ** 40:
            raise LayoutError(f"{op}: globalStrides[{i}] = {s} must be positive and < 2^40 bytes")
    for i, b in enumerate(box):
        if not 1 <= b <= 256:
            raise LayoutError(f"{op}: boxDim[{i}] = {b} must be in 1..256 elements; split the tile into boxes of "
                              f"at most 256 (e.g. {_largest_divisor_at_most(b, 256) if b > 256 else 1}) and issue "
                              f"several copies")
    if interleave == "none" and (box[0] * esize) % 16:
        good = 16 // math.gcd(16, esize)
        raise LayoutError(f"{op}: boxDim[0] * elementSize = {box[0]} * {esize} = {box[0] * esize} bytes is not a "
                          f"multiple of 16; the box's inner dimension must be whole 16-byte chunks: use a multiple "
                          f"of {good} elements (e.g. {max(good, box[0] // good * good)})")
    for i, e in enumerate(est):
        if not 1 <= e <= 8:
            raise LayoutError(f"{op}: elementStrides[{i}] = {e} must be in 1..8")
    if interleave == "none" and sw != "none" and box[0] * esize > SWIZZLE_SPAN[sw]:
        raise LayoutError(f"{op}: boxDim[0] = {box[0]}: with swizzle {sw} the box's inner dimension, "
                          f"boxDim[0] * elementSize = {box[0] * esize} bytes, must be <= the swizzle span "
                          f"{SWIZZLE_SPAN[sw]} bytes: use boxDim[0] <= {SWIZZLE_SPAN[sw] // esize}, or a wider swizzle")
    if interleave == "32B" and sw != "32B":
        raise LayoutError(f"{op}: interleave 32B requires swizzle 32B (got {sw})")
    if oob_fill == "nan" and not is_float:
        raise LayoutError(f"{op}: oobFill 'nan' is only for floating-point types; {dt} is an integer type: "
                          f"use oob_fill='zero'")
    if l2_promotion not in (0, 64, 128, 256):
        raise LayoutError(f"{op}: l2Promotion {l2_promotion!r} must be 0 (none), 64, 128 or 256 bytes")
    return TensorMap(dt, gdim, gstr, box, est, sw, interleave, oob_fill, l2_promotion, global_address)


def smem_byte_of(tmap: TensorMap, box_crd, smem_base: int = 0) -> int:
    """Smem byte of box element ``box_crd`` (innermost first), box at ``smem_base``: dense, dim 0 first, swizzled.

    >>> tm = encode_tiled("f16", (64, 256), (128,), (64, 8), swizzle="128B")
    >>> smem_byte_of(tm, (0, 1)), smem_byte_of(tm, (8, 1))    # row 1: chunks 0 and 1 trade places
    (144, 128)
    """
    if not all(0 <= c < n for c, n in zip(box_crd, tmap.smem_box)):
        raise LayoutError(f"smem_byte_of: box coordinate {tuple(box_crd)} outside the box {tmap.smem_box}")
    lin = sum(c * m for c, m in zip(box_crd, prefix_product(tmap.smem_box)))
    return tma_swizzle(tmap.swizzle)(smem_base + lin * tmap.element_bytes)


def box_placement(tmap: TensorMap, box_start, smem_base: int = 0):
    """Which global element each smem byte of one TMA box holds: entry ``i`` (byte ``smem_base + i``) is
    ``(global coordinate or None for OOB fill, byte within the element)``. ``box_start``: the box corner (innermost
    first; may be negative); dimension i >= 1 steps by ``elementStrides[i]``; ``smem_base``: 128-byte aligned (the
    swizzle acts on absolute addresses). A box starting one element early::

        >>> tm = encode_tiled("f16", (64,), (), (8,))
        >>> [c for c, b in box_placement(tm, (-1,))[:4]]
        [None, None, (0,), (0,)]
    """
    start = _ints("box_start", box_start, tmap.rank, "box_placement")
    if smem_base % 128:
        raise LayoutError(f"box_placement: smem_base {smem_base} is not 128-byte aligned; cp.async.bulk.tensor "
                          f"needs a 128-byte aligned shared-memory destination (e.g. {smem_base // 128 * 128})")
    esize, sw = tmap.element_bytes, tma_swizzle(tmap.swizzle)
    out = [None] * tmap.box_bytes
    steps = (1,) + tmap.element_strides[1:]
    for lin, rcrd in enumerate(cartesian(*(range(e) for e in reversed(tmap.smem_box)))):
        g = tuple(s + c * e for s, c, e in zip(start, reversed(rcrd), steps))
        inside = all(0 <= x < d for x, d in zip(g, tmap.global_dim))
        for b in range(esize):
            addr = sw(smem_base + lin * esize + b) - smem_base
            if not 0 <= addr < len(out):
                raise LayoutError("box_placement: the swizzle moved a byte outside the box; the box is not a whole "
                                  "number of swizzle patterns -- align smem_base to smem_alignment(swizzle)")
            out[addr] = (g if inside else None, b)
    return out


def _largest_divisor_at_most(n, cap):
    return max(d for d in range(1, min(n, cap) + 1) if n % d == 0)
