"""TMA tensor maps on a CPU: :func:`encode_tiled` checks every rule of ``cuTensorMapEncodeTiled`` (errors quote the
rule); :func:`box_placement` says where each byte of a box lands in smem; :mod:`layoutlab.tma` builds on these.
Sources: CUDA Driver API, "Tensor Map Object Management"; PTX ISA, "Tensors" (tiled mode, bounding box, swizzling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product as cartesian

from .errors import LayoutError
from .inttuple import is_int, prefix_product
from .swizzle import Swizzle

__all__ = ["TMA_DATA_TYPES", "SWIZZLE_SPAN", "TMA_SWIZZLE", "tma_swizzle", "swizzle_mode_of", "smem_alignment",
           "TensorMap", "encode_tiled", "box_placement", "smem_byte_of"]

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
