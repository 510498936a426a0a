"""Global to shared memory on a CPU: ``cp.async`` rules, TMA tensor maps, where each byte lands, mbarriers.

Three copy mechanisms move a tile from global to shared memory on Hopper; this module models each one
exactly enough to predict, byte for byte, what the hardware does (an H100 probe checks the predictions,
``results/tma_probe_h100.json``):

* ``cp.async`` (sm_80+): each thread copies 4, 8 or 16 bytes; a source size below the copy size
  zero-fills the rest (predicated tiles); copies are committed in groups and waited for with
  ``cp.async.wait_group N``.  :func:`cp_async_copy`, :func:`cp_async_plan`, :func:`cp_async_wait_group`.
* The Tensor Memory Accelerator (TMA, sm_90): one thread hands a *tensor map* (built on the host by the
  CUDA driver's ``cuTensorMapEncodeTiled``) and a box coordinate to ``cp.async.bulk.tensor``; the TMA
  engine writes the whole box into shared memory, densely, dimension 0 innermost, through the tensor
  map's swizzle, and fills elements outside the tensor with zeros (or NaN).  :func:`encode_tiled` checks
  every rule of the driver call and returns a :class:`TensorMap`; :func:`box_placement` says which
  global element each shared-memory byte holds.
* The CuTe view: ``make_tiled_tma_atom(op, gmem, smem_layout, cta_tiler)`` derives the tensor map from a
  (swizzled) shared-memory layout; :func:`make_tiled_tma_atom` reproduces what the CuTe DSL 4.8.1 derives
  (its printed ``tma_gbasis``, ``copy_bits``, TMA tensor) and then refuses the configurations whose tensor
  map the driver would reject -- the DSL accepts those silently at compile time.
  :func:`tma_partition` lists the TMA instructions that fill one CTA tile.
* ``mbarrier`` (sm_90): :class:`MBarrier` counts arrivals and transaction bytes (``expect_tx``) and flips
  its phase when both reach zero; ``try_wait.parity`` (:func:`mbarrier_try_wait`) asks about a parity.

Sources: CUDA Driver API, "Tensor Map Object Management", ``cuTensorMapEncodeTiled`` (the requirements
quoted in each error message); PTX ISA sections "Tensors" (tiled mode, bounding box, swizzling modes),
``cp.async``, ``cp.async.bulk.tensor`` and ``mbarrier``; the CuTe DSL's ``cpasync.make_tiled_tma_atom``.

Example: a 128 x 64 fp16 K-major tile with the 128-byte swizzle is two 64-element (128-byte) wide boxes::

    >>> from layoutlab import Layout, make_composed_layout, make_swizzle
    >>> sl = make_composed_layout(make_swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    >>> atom = make_tiled_tma_atom("G2S", Layout((256, 128), (128, 1)), sl, (8, 64), "f16")
    >>> atom.tma_gbasis, atom.copy_bits, atom.tensor_map.box_dim
    ('(64,8):(1@1,1@0)', 8192, (64, 8))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .errors import LayoutError
from .inttuple import flatten, is_int, product
from .layout import Layout
from .swizzle import ComposedLayout, Swizzle

__all__ = [
    "TMA_DATA_TYPES", "SWIZZLE_SPAN", "TMA_SWIZZLE", "tma_swizzle", "swizzle_mode_of", "smem_alignment",
    "TensorMap", "encode_tiled", "box_placement", "smem_byte_of",
    "TmaAtom", "make_tiled_tma_atom", "TmaCopy", "tma_partition", "tile_placement", "multicast_slices",
    "MBarrier", "mbarrier_try_wait", "cp_async_copy", "cp_async_plan", "cp_async_wait_group",
    "CP_ASYNC_SIZES", "TMA_DSL_SETUP", "tma_dsl_summary",
]

#: Setup code for :func:`layoutlab.dsl.dsl_eval` / ``dsl_check``: ``tma(dt, gshape, gstride, smem_layout, tiler)``
#: traces ``cpasync.make_tiled_tma_atom`` on a CPU and returns ``"tma_gbasis|copy_bits|TMA tensor|atom"``,
#: what :func:`tma_dsl_summary` gives for our atom; ``staged(kind, dt, shape, order)`` tiles a GMMA smem atom.
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
    """``"tma_gbasis|copy_bits|TMA tensor|atom"`` for our atom, the string ``TMA_DSL_SETUP``'s ``tma()`` returns."""
    return f"{atom.tma_gbasis}|{atom.copy_bits}|{atom.tma_tensor()}|{atom}"

# ------------------------------------------------------------------------------------------------------
# Element types, swizzle modes
# ------------------------------------------------------------------------------------------------------

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

_OPS = {"G2S": "CopyBulkTensorTileG2SOp", "G2S_MULTICAST": "CopyBulkTensorTileG2SMulticastOp",
        "S2G": "CopyBulkTensorTileS2GOp"}


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
    """The CuTe swizzle that TMA swizzle ``mode`` applies to shared-memory byte addresses.

    Math: the 16-byte chunk index (address bits 4..) is XORed with the 128-byte row index (bits 7..),
    1/2/3 bits of it for 32B/64B/128B.  Example: ``tma_swizzle("128B")`` is ``S<3,4,3>``; byte 0x90
    (row 1, chunk 1) goes to 0x80 (chunk 0).
    """
    return Swizzle(*TMA_SWIZZLE[_mode(mode, "tma_swizzle")])


def swizzle_mode_of(sw: Swizzle) -> str:
    """The TMA mode of a CuTe swizzle on byte addresses: ``S<0|1|2|3,4,3>`` -> none/32B/64B/128B.

    Any other swizzle (``S<3,3,3>``, ``S<2,4,2>``, ...) has no TMA mode: refused (the CuTe DSL 4.8.1
    accepts ``S<3,3,3>`` silently and shrinks the box; the hardware can only do these four)."""
    for mode, bms in TMA_SWIZZLE.items():
        if (sw.num_bits, sw.num_base, sw.num_shift) == bms or (mode == "none" and sw.num_bits == 0):
            return mode
    raise LayoutError(f"swizzle_mode_of: {sw} is not a TMA swizzle; TMA permutes 16-byte chunks (M=4) by the "
                      f"128-byte row index (S=3): S<1,4,3> (32B), S<2,4,3> (64B) or S<3,4,3> (128B) on byte "
                      f"addresses, or no swizzle")


def smem_alignment(mode) -> int:
    """Bytes a TMA shared-memory destination must be aligned to for the placement CuTe assumes.

    ``cp.async.bulk.tensor`` needs 128 bytes.  A swizzle is computed from *address* bits 4..9, so its
    pattern repeats every 8 rows of 128 bytes (256 / 512 / 1024 bytes for 32B / 64B / 128B); a buffer
    that starts elsewhere in the pattern gets the chunks permuted differently from what the swizzled
    layout says.  Hence CUTLASS aligns 128B-swizzled buffers to 1024 bytes.
    Example: ``smem_alignment("128B")`` is 1024, ``smem_alignment("none")`` 128.
    """
    m = _mode(mode, "smem_alignment")
    return 128 if m == "none" else 8 * SWIZZLE_SPAN[m]


# ------------------------------------------------------------------------------------------------------
# The tensor map (cuTensorMapEncodeTiled)
# ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TensorMap:
    """The parameters of ``cuTensorMapEncodeTiled``, all dimension arrays innermost first.

    ``global_strides`` are in bytes and list dimensions 1..rank-1 (dimension 0 is contiguous);
    ``box_dim`` in elements; the box is written to shared memory densely, dimension 0 innermost,
    so a box holds ``box_bytes`` bytes -- the transaction count an ``mbarrier`` must expect.
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

    Arrays are innermost first, as the driver takes them; ``global_strides`` (bytes) has ``rank - 1``
    entries.  Each broken requirement raises :class:`LayoutError` naming the field, the rule and a
    valid value.  Example: a row-major 256 x 100 fp16 matrix has a row stride of 200 bytes::

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
                              f"stride becomes {-(-s // align) * align} (the map keeps strides in 16-byte units: an "
                              f"H100 given this one reads rows {s // 16 * 16} bytes apart, without an error)")
        if not 0 < s < 2 ** 40:
            raise LayoutError(f"{op}: globalStrides[{i}] = {s} must be positive and < 2^40 bytes")
    for i, b in enumerate(box):
        if not 1 <= b <= 256:
            raise LayoutError(f"{op}: boxDim[{i}] = {b} must be in 1..256 elements; split the tile into boxes of "
                              f"at most 256 (e.g. {_largest_divisor_at_most(b, 256) if b > 256 else 1}) and issue several copies")
    if interleave == "none" and (box[0] * esize) % 16:
        good = 16 // math.gcd(16, esize)
        raise LayoutError(f"{op}: boxDim[0] * elementSize = {box[0]} * {esize} = {box[0] * esize} bytes is not a "
                          f"multiple of 16; the box's inner dimension must be whole 16-byte chunks: use a multiple "
                          f"of {good} elements (e.g. {max(good, box[0] // good * good)})")
    for i, e in enumerate(est):
        if not 1 <= e <= 8:
            raise LayoutError(f"{op}: elementStrides[{i}] = {e} must be in 1..8")
    if interleave == "none" and sw != "none" and box[0] * esize > SWIZZLE_SPAN[sw]:
        raise LayoutError(f"{op}: boxDim[0] = {box[0]}: with swizzle {sw} the box's inner dimension, boxDim[0] * elementSize = "
                          f"{box[0] * esize} bytes, must be <= the swizzle span {SWIZZLE_SPAN[sw]} bytes: use "
                          f"boxDim[0] <= {SWIZZLE_SPAN[sw] // esize}, or a wider swizzle")
    if interleave == "32B" and sw != "32B":
        raise LayoutError(f"{op}: interleave 32B requires swizzle 32B (got {sw})")
    if oob_fill == "nan" and not is_float:
        raise LayoutError(f"{op}: oobFill 'nan' is only for floating-point types; {dt} is an integer type: "
                          f"use oob_fill='zero'")
    if l2_promotion not in (0, 64, 128, 256):
        raise LayoutError(f"{op}: l2Promotion {l2_promotion!r} must be 0 (none), 64, 128 or 256 bytes")
    return TensorMap(dt, gdim, gstr, box, est, sw, interleave, oob_fill, l2_promotion, global_address)


def smem_byte_of(tmap: TensorMap, box_crd, smem_base: int = 0) -> int:
    """Shared-memory byte address of box coordinate ``box_crd`` (element index per dimension, innermost
    first) for a box written at ``smem_base``: dense, dimension 0 innermost, then the swizzle applied to
    the absolute address.  Example: 128B swizzle, fp16, box (64, 8): element (8, 1) -> 128 + 16 = 0x90 ->
    swizzled 0x80 (chunk 1 of row 1 becomes chunk 0)."""
    lin, mul = 0, 1
    for c, n in zip(box_crd, tmap.smem_box):
        if not 0 <= c < n:
            raise LayoutError(f"smem_byte_of: box coordinate {tuple(box_crd)} outside the box {tmap.smem_box}")
        lin += c * mul
        mul *= n
    return tma_swizzle(tmap.swizzle)(smem_base + lin * tmap.element_bytes)


def box_placement(tmap: TensorMap, box_start, smem_base: int = 0):
    """Which global element each shared-memory byte of one TMA box holds.

    Returns a list, one entry per byte of the box (``tmap.box_bytes`` of them, byte ``i`` at address
    ``smem_base + i``): ``(global coordinate tuple, byte within the element)`` or ``(None, byte)`` where
    the element lies outside the tensor (out-of-bounds fill: zero, or NaN for floats with ``oob_fill='nan'``).
    ``box_start`` is the box corner in global coordinates (innermost first; may be negative).  Elements
    are taken every ``elementStrides[i]`` along dimension i >= 1.
    ``smem_base`` must be 128-byte aligned (the ``cp.async.bulk.tensor`` rule); a swizzled box at a base
    not aligned to :func:`smem_alignment` is modelled with the swizzle on absolute address bits.

    Example: an 8-element fp16 box that starts one element before the tensor holds the fill first::

        >>> tm = encode_tiled("f16", (64,), (), (8,))
        >>> [c for c, b in box_placement(tm, (-1,))[:4]]
        [None, None, (0,), (0,)]
    """
    start = _ints("box_start", box_start, tmap.rank, "box_placement")
    if smem_base % 128:
        raise LayoutError(f"box_placement: smem_base {smem_base} is not 128-byte aligned; cp.async.bulk.tensor "
                          f"needs a 128-byte aligned shared-memory destination (e.g. {smem_base // 128 * 128})")
    esize = tmap.element_bytes
    out = [None] * tmap.box_bytes
    sbox = tmap.smem_box
    sw = tma_swizzle(tmap.swizzle)
    n = math.prod(sbox)
    for lin in range(n):
        crd, r = [], lin
        for ext in sbox:
            crd.append(r % ext)
            r //= ext
        g = tuple(s + c * (1 if i == 0 else tmap.element_strides[i]) for i, (s, c) in enumerate(zip(start, crd)))
        inside = all(0 <= x < d for x, d in zip(g, tmap.global_dim))
        for b in range(esize):
            addr = sw(smem_base + lin * esize + b) - smem_base
            if not 0 <= addr < len(out):
                raise LayoutError("box_placement: the swizzle moved a byte outside the box; the box is not a whole "
                                  "number of swizzle patterns -- align smem_base to smem_alignment(swizzle)")
            out[addr] = (g if inside else None, b)
    return out


# ------------------------------------------------------------------------------------------------------
# The CuTe view: make_tiled_tma_atom, tma_partition
# ------------------------------------------------------------------------------------------------------

def _op_name(op):
    key = getattr(op, "__name__", None) or type(op).__name__ if not isinstance(op, str) else op
    for short, long in _OPS.items():
        if key in (short, long):
            return short
    raise LayoutError(f"make_tiled_tma_atom: op {op!r} must be one of {list(_OPS.values())} "
                      f"(or the short names {list(_OPS)})")


@dataclass(frozen=True)
class TmaAtom:
    """What ``cpasync.make_tiled_tma_atom`` derives, plus the tensor map it implies.

    ``modes``: the box as ``(extent, gmem mode)`` pairs, innermost first (the DSL's ``tma_gbasis``).
    ``tensor_map``: the encode parameters (global tensor in TMA dimension order, box, swizzle).
    ``smem_layout``: the (non-staged) shared-memory layout for one CTA tile; ``cta_tiler`` the tile.
    """

    op: str
    element_type: str
    modes: tuple
    tensor_map: TensorMap
    smem_layout: object
    cta_tiler: tuple
    gmem_layout: Layout
    num_multicast: int = 1
    tma_coord_of_mode: tuple = field(default=())

    @property
    def num_values(self) -> int:
        return math.prod(e for e, _ in self.modes)

    @property
    def copy_bits(self) -> int:
        return self.num_values * TMA_DATA_TYPES[self.element_type][0] * 8

    @property
    def tma_gbasis(self) -> str:
        """Printed as the DSL's atom type prints it, e.g. ``(64,8):(1@1,1@0)``."""
        return "(" + ",".join(str(e) for e, _ in self.modes) + "):(" + ",".join(f"1@{m}" for _, m in self.modes) + ")"

    def tma_tensor(self) -> str:
        """The TMA tensor as the DSL prints it: ``tensor<(0,0) o (256,128):(1@1,1@0)>`` (mode k of the
        global tensor -> TMA coordinate ``tma_coord_of_mode[k]``)."""
        shp = self.gmem_layout.shape
        shp = shp if isinstance(shp, tuple) else (shp,)
        zeros = "(" + ",".join("0" for _ in shp) + ")"
        return (f"tensor<{zeros} o (" + ",".join(str(s) for s in shp) + "):("
                + ",".join(f"1@{t}" for t in self.tma_coord_of_mode) + ")>")

    def __str__(self):
        n = self.num_values
        return ("Copy Atom\n  ThrID:         1:0\n"
                f"  TV Layout Src: (1,{n}):(0,1)\n  TV Layout Dst: (1,{n}):(0,1)\n"
                f"  Value type:    {self.element_type}")


def _smem_parts(smem_layout, tiler_rank, op):
    if isinstance(smem_layout, ComposedLayout):
        if not isinstance(smem_layout.inner, Swizzle):
            raise LayoutError(f"{op}: a composed smem layout's inner function must be a Swizzle, got {smem_layout.inner}")
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


def _largest_divisor_at_most(n, cap):
    return max(d for d in range(1, min(n, cap) + 1) if n % d == 0)


def make_tiled_tma_atom(op, gmem, smem_layout, cta_tiler, element_type="f16", num_multicast=1, *,
                        global_address=0, oob_fill="zero", validate=True) -> TmaAtom:
    """``cute.nvgpu.cpasync.make_tiled_tma_atom(op, gmem_tensor, smem_layout, cta_tiler)`` on a CPU.

    ``gmem`` is the global tensor's layout (element strides; flat, static); ``smem_layout`` a Layout or a
    swizzled ComposedLayout over the tile (optionally with a trailing stage mode); ``cta_tiler`` the tile
    shape.  Like the DSL: walk shared memory from offset 0 and read off which global mode each offset
    steps along (``tma_gbasis``); keep the leading modes that step by one element; cut the inner one to the
    swizzle span and every one to 256 (to the largest divisor, dropping the modes after a cut); add the
    global modes the tile does not walk with extent 1.  Then the tensor map is encoded with every driver
    rule checked (:func:`encode_tiled`), which the DSL does not do at compile time; ``validate=False`` skips
    those checks and returns what the DSL would derive even for a tensor map the driver would refuse.

    Example (K-major fp16, 128B swizzle, one 8 x 64 atom)::

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
    if not isinstance(gmem, Layout):
        gmem = getattr(gmem, "layout", gmem)
    if not isinstance(gmem, Layout):
        raise LayoutError(f"{fn}: gmem {gmem!r} must be a Layout (or a Tensor with one)")
    gshape = gmem.shape if isinstance(gmem.shape, tuple) else (gmem.shape,)
    gstride = gmem.stride if isinstance(gmem.stride, tuple) else (gmem.stride,)
    if any(isinstance(s, tuple) for s in gshape) or not all(is_int(s) for s in gshape + gstride):
        raise LayoutError(f"{fn}: gmem layout {gmem} must be flat and static (one integer per mode)")
    tiler = tuple(cta_tiler) if isinstance(cta_tiler, (tuple, list)) else (cta_tiler,)
    if len(tiler) != len(gshape) or not all(is_int(t) and t > 0 for t in tiler):
        raise LayoutError(f"{fn}: cta_tiler {cta_tiler!r} must give one positive extent per gmem mode "
                          f"({len(gshape)} modes)")
    if opn == "G2S" and num_multicast != 1:
        raise LayoutError(f"{fn}: num_multicast={num_multicast} needs the multicast op "
                          f"CopyBulkTensorTileG2SMulticastOp; the plain G2S op takes 1")
    if not is_int(num_multicast) or num_multicast < 1:
        raise LayoutError(f"{fn}: num_multicast {num_multicast!r} must be a positive integer")
    sw, outer = _smem_parts(smem_layout, len(tiler), fn)
    if tuple(product(flatten(s)) if isinstance(s, tuple) else s for s in outer.shape) != tiler:
        raise LayoutError(f"{fn}: smem layout shape {outer.shape} does not cover the tile {tiler}")
    mode = swizzle_mode_of(sw)

    # smem offset -> tile coordinate (the right inverse of the smem layout, on its contiguous prefix)
    where = {}
    for i in range(outer.size()):
        where.setdefault(outer(i), i)
    n = 0
    while n in where:
        n += 1

    def gcrd(s):
        lin, c = where[s], []
        for t in tiler:
            c.append(lin % t)
            lin //= t
        return c

    modes, p = [], 1
    while p < n:
        base, nxt = gcrd(0), gcrd(p)
        diff = [b - a for a, b in zip(base, nxt)]
        moved = [k for k, d in enumerate(diff) if d]
        if len(moved) != 1 or diff[moved[0]] != 1 or any(m == moved[0] for _, m in modes):
            break                                # not a unit step along a new gmem mode: the box ends here
        k = moved[0]
        ext = 1
        while p * (ext + 1) <= n and all(a == b + (ext if q == k else 0)
                                         for q, (a, b) in enumerate(zip(gcrd(p * ext), base))):
            ext += 1
        # the whole block [0, p*ext) must be the product of the modes so far
        if not all(gcrd(s) == [base[q] + (((s // p) if q == k else 0)) + (gcrd(s % p)[q] - base[q])
                               for q in range(len(tiler))] for s in range(0, p * ext)):
            break
        modes.append([ext, k])
        p *= ext
    if not modes:
        raise LayoutError(f"{fn}: shared-memory offset 1 does not step along a single global mode; the smem "
                          f"layout {smem_layout} must be contiguous along some mode of the tile")
    # the swizzle span cuts the inner mode, 256 cuts every mode; after a cut, the later modes drop to 1
    caps = [SWIZZLE_SPAN[mode] // esize if mode != "none" else 256] + [256] * (len(modes) - 1)
    for i, (ext, k) in enumerate(modes):
        cap = min(caps[i], 256)
        if ext > cap:
            modes[i][0] = _largest_divisor_at_most(ext, cap)
            for j in range(i + 1, len(modes)):
                modes[j][0] = 1
            break
    used = {k for _, k in modes}
    modes += [[1, k] for k in range(len(gshape)) if k not in used]
    if len(modes) > 5:
        raise LayoutError(f"{fn}: the box needs {len(modes)} TMA dimensions; TMA handles at most 5")
    inner_mode = modes[0][1]
    if gstride[inner_mode] != 1:
        unit = [k for k, s in enumerate(gstride) if s == 1]
        raise LayoutError(
            f"{fn}: shared memory is contiguous along global mode {inner_mode}, whose global stride is "
            f"{gstride[inner_mode]}; TMA reads box dimension 0 contiguously from global memory and writes it "
            f"contiguously to shared memory (it cannot transpose): make the smem layout contiguous along "
            f"mode {unit[0] if unit else 'with stride 1'} instead")
    gdim = tuple(gshape[k] for _, k in modes)
    gstr = tuple(gstride[k] * esize for _, k in modes[1:])
    box = tuple(e for e, _ in modes)
    if validate:
        tmap = encode_tiled(dt, gdim, gstr, box, swizzle=mode, oob_fill=oob_fill, global_address=global_address)
    else:
        tmap = TensorMap(dt, gdim, gstr, box, (1,) * len(box), mode, "none", oob_fill, 0, global_address)
    coord_of = tuple(next(t for t, (_, k) in enumerate(modes) if k == m) for m in range(len(gshape)))
    return TmaAtom(opn, dt, tuple((e, k) for e, k in modes), tmap, smem_layout, tiler, gmem, num_multicast,
                   coord_of)


@dataclass(frozen=True)
class TmaCopy:
    """One ``cp.async.bulk.tensor`` of a tile: its box corner (TMA coordinates, innermost first) and the
    shared-memory element offset it writes to (before the swizzle)."""

    box_start: tuple
    smem_offset: int


def tma_partition(atom: TmaAtom, tile_coord) -> list:
    """The TMA instructions that fill CTA tile ``tile_coord`` (one per box), as ``cpasync.tma_partition``
    + ``cute.copy`` issue them: the tile's shared memory is cut into ``atom.num_values``-element pieces in
    offset order; piece j starts at the tile coordinate that the smem layout puts at offset
    ``j * num_values``.  Example: the 128 x 64 MN-major fp16 tile with 128B swizzle takes 2 boxes of 64 x 64.
    """
    outer = _smem_parts(atom.smem_layout, len(atom.cta_tiler), "tma_partition")[1]
    tc = _ints("tile_coord", tile_coord, len(atom.cta_tiler), "tma_partition")
    where = {outer(i): i for i in range(outer.size())}
    copies = []
    for start in range(0, outer.size(), atom.num_values):
        if start not in where:
            raise LayoutError(f"tma_partition: no tile element at smem offset {start}; the smem layout is not "
                              f"compact, so whole boxes cannot tile it")
        lin, crd = where[start], []
        for t in atom.cta_tiler:
            crd.append(lin % t)
            lin //= t
        g = [c + t * x for c, t, x in zip(crd, atom.cta_tiler, tc)]
        copies.append(TmaCopy(tuple(g[k] for _, k in atom.modes), start))
    return copies


def tile_placement(atom: TmaAtom, tile_coord, smem_base: int = 0) -> dict:
    """Where every byte of one CTA tile lands when the TMA copies of :func:`tma_partition` run: a dict
    ``smem byte offset -> (global coordinate in the gmem layout's mode order, or None for OOB fill)``
    for every written byte, relative to ``smem_base`` (the buffer's address; see :func:`smem_alignment`).

    Each copy writes its box at ``smem_base + smem_offset * element_bytes`` with the swizzle applied to
    absolute addresses.  For an aligned buffer this equals the smem layout's own
    ``ComposedLayout.byte_address`` for every tile element -- the TMA swizzle mode and the CuTe swizzle
    describe the same placement (tests/test_tma.py checks it).
    """
    esize = atom.tensor_map.element_bytes
    out = {}
    for cp in tma_partition(atom, tile_coord):
        base = smem_base + cp.smem_offset * esize
        if base % 128:
            raise LayoutError(f"tile_placement: a box would start at smem byte {base}, not 128-byte aligned")
        sw = tma_swizzle(atom.tensor_map.swizzle)
        for i, (g, b) in enumerate(box_placement(atom.tensor_map, cp.box_start, 0)):
            # box_placement is relative to an aligned 0; re-apply the swizzle at the true base
            lin_addr = tma_swizzle(atom.tensor_map.swizzle)(i)     # unswizzled position of byte i
            addr = sw(base + lin_addr) - smem_base
            gm = None if g is None else tuple(g[atom.tma_coord_of_mode[k]] for k in range(len(atom.tma_coord_of_mode)))
            out[addr] = (gm, b)
    return out


def multicast_slices(box_bytes: int, num_ctas: int) -> list:
    """With ``.multicast::cluster``, each of ``num_ctas`` CTAs loads one slice of the tile and the TMA writes
    it into every CTA's shared memory; each CTA's barrier still expects the whole tile.  Returns
    ``[(first byte, bytes)]`` per CTA; ``num_ctas`` must divide the tile into 16-byte-multiple slices.
    Example: ``multicast_slices(16384, 2)`` -> ``[(0, 8192), (8192, 8192)]``."""
    if not is_int(num_ctas) or not 1 <= num_ctas <= 16:
        raise LayoutError(f"multicast_slices: num_ctas {num_ctas!r} must be 1..16 (a cluster has at most 16 CTAs)")
    if box_bytes % num_ctas or (box_bytes // num_ctas) % 16:
        raise LayoutError(f"multicast_slices: {box_bytes} bytes do not split into {num_ctas} slices of whole "
                          f"16-byte chunks; use a CTA count that divides {box_bytes // 16}")
    s = box_bytes // num_ctas
    return [(i * s, s) for i in range(num_ctas)]


# ------------------------------------------------------------------------------------------------------
# mbarrier
# ------------------------------------------------------------------------------------------------------

class MBarrier:
    """An ``mbarrier`` object: a phase completes when all expected arrivals came and no bytes are pending.

    ``init(count)`` sets the arrivals per phase.  ``arrive_expect_tx(bytes)`` is one arrival that also
    raises the transaction count (``mbarrier.arrive.expect_tx``); the TMA's ``complete_tx(bytes)``
    lowers it.  When the pending arrivals reach 0 and the transaction count is 0, the phase completes:
    ``phase`` (the number of completed phases) grows by one and the arrivals are re-armed.  ``parity`` is
    the current phase's parity (``phase % 2``).  ``log`` records ``(event, phase, pending, tx)``.
    """

    def __init__(self, count: int):
        if not is_int(count) or not 1 <= count < 2 ** 20:
            raise LayoutError(f"MBarrier: expected arrival count {count!r} must be in 1..2^20-1")
        self.count, self.pending, self.tx, self.phase, self.log = count, count, 0, 0, []

    @property
    def parity(self) -> int:
        return self.phase % 2

    def _event(self, what):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count
            what += " -> phase complete"
        self.log.append((what, self.phase, self.pending, self.tx))

    def arrive(self, n: int = 1):
        if n > self.pending:
            raise LayoutError(f"MBarrier.arrive: {n} arrivals but only {self.pending} pending in this phase")
        self.pending -= n
        self._event(f"arrive({n})")

    def expect_tx(self, nbytes: int):
        self.tx += nbytes
        self.log.append((f"expect_tx({nbytes})", self.phase, self.pending, self.tx))

    def arrive_expect_tx(self, nbytes: int):
        if self.pending < 1:
            raise LayoutError("MBarrier.arrive_expect_tx: no arrival pending in this phase")
        self.tx += nbytes
        self.pending -= 1
        self._event(f"arrive.expect_tx({nbytes})")

    def complete_tx(self, nbytes: int):
        if nbytes > self.tx and self.pending == 0:
            raise LayoutError(f"MBarrier.complete_tx: {nbytes} bytes completed but only {self.tx} expected; the "
                              f"expect-tx count must equal the bytes the TMA writes (the box bytes)")
        self.tx -= nbytes
        self._event(f"complete_tx({nbytes})")

    def try_wait(self, parity: int) -> bool:
        return mbarrier_try_wait(self.phase, parity)


def mbarrier_try_wait(completed_phases: int, parity: int) -> bool:
    """``mbarrier.try_wait.parity`` after ``completed_phases`` phase completions: True once the phase of
    parity ``parity`` has completed, i.e. when the *current* phase's parity differs from ``parity``.

    A fresh barrier (0 completions): waiting on parity 0 blocks, on parity 1 returns at once -- which is
    why a producer starts waiting on its empty barriers with phase 1.  Example: after 3 completions the
    current phase is 3 (parity 1): ``try_wait(parity=0)`` is True, ``try_wait(parity=1)`` False.
    """
    if parity not in (0, 1):
        raise LayoutError(f"mbarrier_try_wait: parity {parity!r} must be 0 or 1")
    return completed_phases % 2 != parity


# ------------------------------------------------------------------------------------------------------
# cp.async (sm_80)
# ------------------------------------------------------------------------------------------------------

#: The copy sizes ``cp.async`` takes (``.cg`` only 16).
CP_ASYNC_SIZES = (4, 8, 16)


def cp_async_copy(cp_size: int, src_size=None, *, cache="ca", src_addr=0, dst_addr=0):
    """One ``cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}``: ``(bytes read, bytes zero-filled)``.

    ``cp-size`` is 4, 8 or 16 (``.cg`` only 16); both addresses aligned to it; ``src-size <= cp-size``
    bytes are read and the rest of the ``cp-size`` bytes are written as zeros (how a predicated tile edge
    is zero-filled: ``src-size = 0`` writes only zeros).  Example: ``cp_async_copy(16, 6)`` -> ``(6, 10)``.
    """
    if cp_size not in CP_ASYNC_SIZES:
        raise LayoutError(f"cp_async_copy: cp-size {cp_size} must be 4, 8 or 16 bytes")
    if cache not in ("ca", "cg"):
        raise LayoutError(f"cp_async_copy: cache {cache!r} must be 'ca' or 'cg'")
    if cache == "cg" and cp_size != 16:
        raise LayoutError(f"cp_async_copy: cp.async.cg takes only cp-size 16 (got {cp_size}); use .ca")
    src = cp_size if src_size is None else src_size
    if not is_int(src) or not 0 <= src <= cp_size:
        raise LayoutError(f"cp_async_copy: src-size {src_size!r} must be in 0..cp-size ({cp_size})")
    for name, a in (("src", src_addr), ("dst", dst_addr)):
        if a % cp_size:
            raise LayoutError(f"cp_async_copy: {name} address {a:#x} is not aligned to cp-size {cp_size}; "
                              f"use {a - a % cp_size:#x} or a smaller cp-size")
    return src, cp_size - src


def cp_async_plan(tile_bytes: int, threads: int, cp_size: int = 16) -> dict:
    """How a thread block copies a ``tile_bytes`` tile with ``cp_size``-byte ``cp.async``: total copies and
    copies per thread (the tile must be a whole number of copies per thread).
    Example: a 128 x 32 fp16 tile (8192 B) with 128 threads: 512 copies, 4 per thread."""
    if cp_size not in CP_ASYNC_SIZES:
        raise LayoutError(f"cp_async_plan: cp-size {cp_size} must be 4, 8 or 16 bytes")
    if tile_bytes % cp_size:
        raise LayoutError(f"cp_async_plan: {tile_bytes} bytes are not whole {cp_size}-byte copies")
    copies = tile_bytes // cp_size
    if copies % threads:
        raise LayoutError(f"cp_async_plan: {copies} copies do not split evenly over {threads} threads; use a "
                          f"thread count that divides {copies}")
    return {"copies": copies, "per_thread": copies // threads}


def cp_async_wait_group(committed: int, n: int) -> int:
    """After ``committed`` ``cp.async.commit_group``s, ``cp.async.wait_group n`` returns once all but the
    ``n`` most recent groups are complete: the number of groups guaranteed complete.
    Example: 3 stages in flight, ``wait_group 1`` -> groups 0 and 1 (2) are done."""
    if n < 0 or committed < 0:
        raise LayoutError("cp_async_wait_group: counts must be >= 0")
    return max(committed - n, 0)
