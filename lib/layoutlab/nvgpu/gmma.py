"""The wgmma shared-memory matrix descriptor on a CPU: encode, decode, and which layouts it can express.
The descriptor (PTX ISA 9.0, §9.7.15.5.1.2.2 "Matrix Descriptor Format") is one 64-bit register: bits 0-13
start address, 16-29 leading (LBO) and 32-45 stride (SBO) dimension byte offset, each ``>> 4``; 49-51 base
offset; 62-63 layout type (0 interleave, 1 128B, 2 64B, 3 32B). It describes only the *canonical layouts*
(§9.7.15.5.1.2.1.3): 8-row core matrices of 16-byte rows repeated with two strides, composed with
``Swizzle<log2 W,4,3>`` on bytes; T = 128/bits elements (16 bytes), W = 1, 2, 4, 8 chunks per swizzle row::

    K-major   interleave : ((8,m),(T,2k)):((T,SBO),(1,LBO))
    K-major   swizzled   : ((8,m),(T,2k)):((W*T,SBO),(1,T))          LBO unused ("assumed 1")
    MN-major  interleave : ((T,1,m),(8,k)):((1,T,SBO),(T,LBO))
    MN-major  swizzled   : ((T,W,m),(8,k)):((1,T,LBO),(W*T,SBO))

The K-major 64B-swizzled f16 A tile of 64 x 32 (the CuTe DSL's PTX holds the same two constants)::

    >>> from layoutlab import SmemLayoutAtomKind, make_smem_layout_atom
    >>> sA = make_smem_layout_atom(SmemLayoutAtomKind.K_SW64, 16).tile_to_shape((64, 32), (0, 1))
    >>> [hex(d.desc) for d in gmma_k_block_descs("K", sA, 16)]
    ['0x8000002000010000', '0x8000002000010002']
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from ..errors import CheckedEnumType, LayoutError
from ..cute.basis import is_int
from ..cute.layout import Layout
from ..cute.swizzle import ComposedLayout, Swizzle

__all__ = ["LayoutType", "GmmaDescriptor", "make_gmma_desc", "decode_gmma_desc", "gmma_canonical_layout",
           "gmma_k_block_descs", "check_operand_major", "wgmma_k", "pattern_bytes", "gmma_read_addresses"]


class LayoutType(IntEnum, metaclass=CheckedEnumType):
    """The descriptor's 2-bit swizzle field, named as CuTe's ``GMMA::LayoutType``.

    >>> LayoutType(1).name, int(LayoutType.B32)
    ('B128', 3)
    """
    INTERLEAVE = 0
    B128 = 1
    B64 = 2
    B32 = 3


#: chunks of 16 bytes per swizzle row (W) and the swizzle's repeating pattern in bytes (8 rows of W chunks)
_W = {LayoutType.INTERLEAVE: 1, LayoutType.B32: 2, LayoutType.B64: 4, LayoutType.B128: 8}
_SWIZZLE_BITS = {0: LayoutType.INTERLEAVE, 1: LayoutType.B32, 2: LayoutType.B64, 3: LayoutType.B128}
#: the descriptor's fields: (attribute, name in the PTX ISA's table, first bit, width in bits), low bits first
_FIELDS = (("start_address", "start address >> 4", 0, 14), ("leading_byte_offset", "leading byte offset >> 4", 16, 14),
           ("stride_byte_offset", "stride byte offset >> 4", 32, 14), ("base_offset", "base offset", 49, 3),
           ("layout_type", "layout type", 62, 2))
_RESERVED = ((1 << 64) - 1) & ~sum(((1 << w) - 1) << lo for _, _, lo, w in _FIELDS)

#: element bits -> what the wgmma dtype names are (for messages)
_TYPES = {8: "e4m3/e5m2/s8/u8", 16: "f16/bf16", 32: "tf32"}


def pattern_bytes(layout_type) -> int:
    """Bytes of one repeat of the swizzle pattern: 8 rows of 16*W bytes (1024 for 128B, 128 for none).

    >>> pattern_bytes(LayoutType.B128), pattern_bytes(LayoutType.INTERLEAVE)
    (1024, 128)
    """
    return 8 * 16 * _W[LayoutType(layout_type)]


@dataclass(frozen=True)
class GmmaDescriptor:
    """A wgmma shared-memory matrix descriptor: the *encoded* fields of CuTe's ``union GmmaDescriptor``
    (``cute/arch/mma_sm90_desc.hpp``); addresses and offsets in units of 16 bytes. ``desc``: the 64 bits.

    >>> d = GmmaDescriptor(start_address=0x40, leading_byte_offset=1, stride_byte_offset=64, layout_type=1)
    >>> hex(d.desc), decode_gmma_desc(d.desc) == d
    ('0x4000004000010040', True)
    """

    start_address: int = 0
    leading_byte_offset: int = 0
    stride_byte_offset: int = 0
    base_offset: int = 0
    layout_type: LayoutType = LayoutType.INTERLEAVE

    def __post_init__(self):
        for name, _, _, bits in _FIELDS[:4]:
            v = getattr(self, name)
            if not is_int(v) or not 0 <= v < (1 << bits):
                raise LayoutError(f"GmmaDescriptor: {name} = {v!r} does not fit its {bits}-bit field "
                                  f"(0 <= value < {1 << bits}; addresses and offsets are in units of 16 bytes)")
        if self.layout_type not in (0, 1, 2, 3):
            raise LayoutError(f"GmmaDescriptor: layout_type = {self.layout_type!r}; the 2-bit field is "
                              f"0 interleave, 1 128B, 2 64B or 3 32B swizzle")
        object.__setattr__(self, "layout_type", LayoutType(int(self.layout_type)))

    @property
    def desc(self) -> int:
        """The 64-bit descriptor (what goes in the ``.b64`` register)."""
        return sum(int(getattr(self, name)) << lo for name, _, lo, _ in _FIELDS)

    @property
    def start_address_bytes(self) -> int:
        return self.start_address << 4

    @property
    def leading_byte_offset_bytes(self) -> int:
        return self.leading_byte_offset << 4

    @property
    def stride_byte_offset_bytes(self) -> int:
        return self.stride_byte_offset << 4

    def fields(self) -> list:
        """``(name, first bit, last bit, value)`` for each field, low bits first (the PTX ISA's table)."""
        return [(label, lo, lo + w - 1, int(getattr(self, name))) for name, label, lo, w in _FIELDS]

    def __str__(self):
        # exactly as CuTe's print(GmmaDescriptor) (cute/arch/mma_sm90_desc.hpp) prints it
        return (f"GmmaDescriptor: 0x{self.desc:016x}\n"
                f"  start_addr :  0x{self.start_address:04x}\n"
                f"  leading_off:  0x{self.leading_byte_offset:04x} ({self.leading_byte_offset})\n"
                f"  stride_off :  0x{self.stride_byte_offset:04x} ({self.stride_byte_offset})\n"
                f"  base_offset:  0x{self.base_offset:x}\n"
                f"  layout_type:  0x{int(self.layout_type):x} ({self.layout_type.name})")


def decode_gmma_desc(desc: int) -> GmmaDescriptor:
    """The fields of a 64-bit descriptor; refuses a value with reserved bits (14-15, 30-31, 46-48, 52-61) set.

    >>> decode_gmma_desc(0x8000002000010000).layout_type.name
    'B64'
    """
    if not is_int(desc) or not 0 <= desc < (1 << 64):
        raise LayoutError(f"decode_gmma_desc: {desc!r} is not a 64-bit unsigned value")
    if desc & _RESERVED:
        bits = [b for b in range(64) if desc & _RESERVED & (1 << b)]
        raise LayoutError(f"decode_gmma_desc: 0x{desc:016x} has reserved bit(s) {bits} set; only bits 0-13, "
                          f"16-29, 32-45, 49-51 and 62-63 carry fields (PTX ISA, Matrix Descriptor Format)")
    return GmmaDescriptor(*((desc >> lo) & ((1 << w) - 1) for _, _, lo, w in _FIELDS))


def wgmma_k(element_bits: int) -> int:
    """K of one ``wgmma`` for an element width: 32 bytes of K, i.e. 8 (tf32), 16 (f16/bf16), 32 (8-bit).

    >>> wgmma_k(16), wgmma_k(8), wgmma_k(32)      # f16/bf16, fp8, tf32
    (16, 32, 8)
    """
    if element_bits not in _TYPES:
        raise LayoutError(f"wgmma_k: {element_bits}-bit elements; wgmma reads 8-bit ({_TYPES[8]}), 16-bit "
                          f"({_TYPES[16]}) or 32-bit ({_TYPES[32]}) operands")
    return 256 // element_bits


def _bits(element_type, op) -> int:
    bits = getattr(element_type, "width", element_type)
    if isinstance(bits, str):
        bits = {"f16": 16, "bf16": 16, "float16": 16, "bfloat16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8,
                "s8": 8, "u8": 8, "int8": 8, "uint8": 8}.get(bits.lower(), bits)
    if not is_int(bits) or bits not in _TYPES:
        raise LayoutError(f"{op}: element type {element_type!r}; wgmma operands in shared memory are 8-bit "
                          f"({_TYPES[8]}), 16-bit ({_TYPES[16]}) or 32-bit ({_TYPES[32]})")
    return int(bits)


def _major(major, op) -> str:
    m = str(getattr(major, "name", major)).upper()
    if m not in ("K", "MN"):
        raise LayoutError(f"{op}: major {major!r} must be 'K' or 'MN' (which mode is contiguous in memory)")
    return m


def check_operand_major(element_type, major, source="smem") -> None:
    """Refuse an operand majorness wgmma lacks: MN-major ("transposed") exists only for f16/bf16 read through a
    descriptor; tf32, fp8 and int8 operands, and A from registers, are K-major.

    >>> check_operand_major(16, "MN")          # f16/bf16: fine
    >>> check_operand_major(32, "MN")          # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    layoutlab.errors.LayoutError: ...
    """
    op = "check_operand_major"
    bits, m = _bits(element_type, op), _major(major, op)
    if source not in ("smem", "rmem"):
        raise LayoutError(f"{op}: source {source!r} must be 'smem' (descriptor) or 'rmem' (A in registers)")
    if m == "MN" and source == "rmem":
        raise LayoutError(f"{op}: A from registers has a fixed K-major fragment (no imm-trans-a); an MN-major "
                          f"A must be read from shared memory through a descriptor")
    if m == "MN" and bits != 16:
        raise LayoutError(f"{op}: {bits}-bit ({_TYPES[bits]}) operands must be K-major; wgmma transposes "
                          f"(imm-trans-a/b = 1) only f16/bf16 operands read from shared memory. Store the "
                          f"tile with K contiguous, or use a 16-bit type")


def _swizzle_of(layout, op):
    """(LayoutType, outer Layout, element offset) of a plain or swizzled layout."""
    if isinstance(layout, Layout):
        return LayoutType.INTERLEAVE, layout, 0
    if isinstance(layout, ComposedLayout) and isinstance(layout.inner, Swizzle):
        sw = layout.inner
        if sw.num_bits == 0 or (sw.num_base, sw.num_shift) == (4, 3) and sw.num_bits in _SWIZZLE_BITS:
            return _SWIZZLE_BITS[sw.num_bits], layout.outer, layout.offset
        raise LayoutError(f"{op}: swizzle {sw} is not one wgmma knows; the descriptor's modes are S<0,4,3> "
                          f"(none), S<1,4,3> (32B), S<2,4,3> (64B) and S<3,4,3> (128B) on byte addresses")
    raise LayoutError(f"{op}: {layout!r} is not a Layout or a swizzled ComposedLayout")


def _canonical_outer(major, lt, T, mn, k, lbo, sbo):
    """The canonical layout (without its swizzle) of an (mn, k) tile with these LBO/SBO, in elements."""
    W = _W[lt]
    if major == "K":
        lead = lbo if lt == LayoutType.INTERLEAVE else T
        return Layout(((8, mn // 8), (T, k // T)), ((W * T, sbo), (1, lead)))
    a, b = (sbo, lbo) if lt == LayoutType.INTERLEAVE else (lbo, sbo)
    return Layout(((T, W, mn // (T * W)), (8, k // 8)), ((1, T, a), (W * T, b)))


def _offsets(layout, mn, k):
    """A layout's offsets over an (mn, k) tile, as an (mn, k) numpy array."""
    import numpy as np

    return np.asarray(layout.evaluate_indices(np.arange(mn * k)), dtype=np.int64).reshape(k, mn).T


def gmma_canonical_layout(major, layout_type, element_bits, mn, k, lbo=None, sbo=None):
    """The PTX ISA's canonical layout (§9.7.15.5.1.2.1.3) of an (mn, k) operand tile, ``S<b,4,3> o 0 o outer`` in
    elements; ``lbo``/``sbo`` in elements (default: compact, core matrices packed as CuTe's ``tile_to_shape`` does).

    >>> print(gmma_canonical_layout("K", "INTERLEAVE", 16, 16, 16))
    S<0,4,3> o 0 o ((8,2),(8,2)):((8,128),(1,64))
    """
    op = "gmma_canonical_layout"
    m = _major(major, op)
    lt = LayoutType[layout_type] if isinstance(layout_type, str) else LayoutType(layout_type)
    T, W, inter = 128 // element_bits, _W[lt], lt == LayoutType.INTERLEAVE
    check_operand_major(element_bits, m)
    _check_extent(m, lt, element_bits, mn, k, op)
    if m == "K":                                 # default: core matrices packed as tile_to_shape packs them
        lbo = (8 * T if inter else T) if lbo is None else lbo
        sbo = 8 * W * T * (k // T if inter else 1) if sbo is None else sbo
    else:
        lbo = (8 * mn if inter else 8 * W * T) if lbo is None else lbo
        sbo = (8 * T if inter else 8 * mn) if sbo is None else sbo
    return ComposedLayout(Swizzle(W.bit_length() - 1, 4, 3), 0, _canonical_outer(m, lt, T, mn, k, lbo, sbo))


def _check_extent(major, lt, bits, mn, k, op):
    T, W = 128 // bits, _W[lt]
    kk = wgmma_k(bits)
    if not (is_int(mn) and is_int(k)) or mn <= 0 or k <= 0:
        raise LayoutError(f"{op}: tile extents ({mn}, {k}) must be positive integers")
    if k % kk:
        raise LayoutError(f"{op}: K extent {k} is not a multiple of one wgmma's K = {kk} ({bits}-bit: 32 bytes)")
    unit = 8 if major == "K" else T * W
    if mn % unit:
        what = "8 rows (one core matrix)" if major == "K" else f"{unit} elements (one {16 * W}-byte swizzle row)"
        raise LayoutError(f"{op}: MN extent {mn} of a {major}-major {lt.name} tile is not a multiple of {what}")


def make_gmma_desc(major, layout, element_type, smem_base: int = 0) -> GmmaDescriptor:
    """CuTe's ``make_gmma_desc<Major>``: the descriptor of one wgmma operand tile, or a refusal.
    ``layout`` maps ``(mn, k)`` of one instruction's operand (MN x 32 bytes of K) to element offsets: a ``Layout``
    or ``S<b,4,3> o offset o outer`` (e.g. a k-block of a swizzled tile) at byte ``smem_base``. LBO/SBO are read off
    the layout, which must equal the canonical one with them; base offset 0 if ``smem_base`` is a multiple of the
    pattern, else ``(smem_base >> 7) & 7``. Unused strides (size-1 modes) encode 0, as in CuTe; K-major swizzled: 1.

    >>> d = make_gmma_desc("K", Layout(((8, 2), (8, 2)), ((8, 128), (1, 64))), 16)
    >>> d.leading_byte_offset, d.stride_byte_offset, d.layout_type.name
    (8, 16, 'INTERLEAVE')
    """
    import numpy as np

    op = "make_gmma_desc"
    m = _major(major, op)
    bits = _bits(element_type, op)
    check_operand_major(bits, m)
    lt, outer, offset = _swizzle_of(layout, op)
    T, W, inter = 128 // bits, _W[lt], lt == LayoutType.INTERLEAVE
    shp = outer.shape
    if not isinstance(shp, tuple) or len(shp) != 2:
        raise LayoutError(f"{op}: {layout} must have two modes (MN, K); got shape {shp}")
    mn, k = outer[0].size(), outer[1].size()
    if k != wgmma_k(bits):
        raise LayoutError(f"{op}: the K mode has {k} elements; one descriptor covers one wgmma's K = "
                          f"{wgmma_k(bits)} ({bits}-bit elements, 32 bytes). Slice the tile into k-blocks "
                          f"(gmma_k_block_descs does that)")
    _check_extent(m, lt, bits, mn, k, op)
    off = _offsets(outer, mn, k)
    o0 = int(off[0, 0])
    rel = off - o0

    def at(r, c):
        return int(rel[r, c]) if r < mn and c < k else None

    # read the two strides where the canonical form puts them (None when that mode has size 1)
    if m == "K":
        lbo, sbo = at(0, T) if inter else None, at(8, 0)
        names = ("between the two 16-byte halves of K (next core matrix along K)",
                 "between 8-row groups (next core matrix along MN)")
    elif inter:
        lbo, sbo = at(0, 8), at(T, 0)
        names = ("between 8-row groups along K", f"between {T}-element groups along MN")
    else:
        lbo, sbo = at(T * W, 0), at(0, 8)
        names = (f"between {16 * W}-byte swizzle rows along MN", "between 8-row groups along K")
    want = _offsets(_canonical_outer(m, lt, T, mn, k, lbo or 0, sbo or 0), mn, k)
    if not np.array_equal(rel, want):
        bad = np.argwhere(rel != want)[0]
        raise LayoutError(
            f"{op}: {layout} is not a canonical {m}-major {lt.name} layout for {bits}-bit elements: at (mn, k) = "
            f"({bad[0]}, {bad[1]}) it gives offset {o0 + rel[bad[0], bad[1]]}, the canonical layout with the "
            f"strides read at its corners (LBO={lbo}, SBO={sbo} elements) gives {o0 + want[bad[0], bad[1]]}. "
            f"A descriptor needs 8 x 16-byte core matrices, "
            + ("each row contiguous, " if m == "K" else "each 16-byte chunk contiguous along MN, ")
            + f"rows {16 * W} bytes apart, repeated with two constant strides (PTX ISA, Canonical Layouts); e.g. "
            f"{gmma_canonical_layout(m, lt, bits, mn, k)}")
    eb = bits // 8
    for v, name in zip((lbo, sbo), names):
        if v is not None and (v * eb % 16 or v < 0 or v * eb >= 1 << 18):
            raise LayoutError(f"{op}: the stride {name} is {v} elements = {v * eb} bytes; the descriptor "
                              f"holds a non-negative multiple of 16 bytes below 2^18 in 14 bits (>> 4)")
    start = smem_base + (offset + o0) * eb
    if start % 16 or start < 0:
        raise LayoutError(f"{op}: start address {start} (smem_base {smem_base} + {offset + o0} elements) is not "
                          f"16-byte aligned; wgmma operands start on 16-byte boundaries")
    if not inter and smem_base % 16:
        raise LayoutError(f"{op}: smem_base {smem_base} is not 16-byte aligned")
    lbo_f = (1 if not inter and m == "K" else 0) if lbo is None else lbo * eb >> 4
    sbo_f = 0 if sbo is None else sbo * eb >> 4
    base = (smem_base >> 7) & 7 if not inter and smem_base % pattern_bytes(lt) else 0
    return GmmaDescriptor((start & 0x3FFFF) >> 4, lbo_f, sbo_f, base, lt)


def gmma_k_block_descs(major, layout, element_type, smem_base: int = 0) -> list:
    """One descriptor per wgmma along K of an (MN, K) smem tile (what ``tiled_mma.make_fragment_A/B`` yields): block
    kb is the layout composed with ``(MN, Kw):(1, MN)`` shifted by ``kb * Kw`` columns, Kw = one wgmma's K.

    >>> from layoutlab import SmemLayoutAtomKind, make_smem_layout_atom
    >>> sB = make_smem_layout_atom("K_SW128", 16).tile_to_shape((64, 64), (0, 1))
    >>> [d.start_address for d in gmma_k_block_descs("K", sB, 16)]      # +32 bytes per k-block
    [0, 2, 4, 6]
    """
    op = "gmma_k_block_descs"
    bits = _bits(element_type, op)
    kw = wgmma_k(bits)
    if isinstance(layout, Layout):
        layout = ComposedLayout(Swizzle(0, 4, 3), 0, layout)
    shp = layout.outer.shape if isinstance(layout, ComposedLayout) else None
    if not isinstance(shp, tuple) or len(shp) != 2:
        raise LayoutError(f"{op}: {layout} must be an (MN, K) layout")
    mn, k = layout.outer[0].size(), layout.outer[1].size()
    if k % kw:
        raise LayoutError(f"{op}: K extent {k} is not a multiple of one wgmma's K = {kw} ({bits}-bit elements)")
    blocks = layout.compose(Layout((mn, (kw, k // kw)), (1, (mn, mn * kw))))
    return [make_gmma_desc(major, blocks.slice_((None, (None, kb))), bits, smem_base) for kb in range(k // kw)]


def gmma_read_addresses(desc, major, element_type, mn) -> np.ndarray:
    """The smem byte address of each element (mn, k) one wgmma reads through ``desc``: the canonical layout with its
    LBO/SBO (K-major swizzled: no LBO) from its start, then the swizzle, 16-byte chunk XOR row ``(address >> 7) - b``
    for base offset ``b`` (our reading of the PTX ISA; the H100 recording of :mod:`layoutlab.probe.gmma` agrees).

    >>> a = gmma_read_addresses(0x4000004000010000, "K", 16, 64)      # K_SW128, f16: row 1 is swizzled
    >>> a.shape, int(a[0, 0]), int(a[1, 0]), int(a[1, 8])
    ((64, 16), 0, 144, 128)
    """
    op = "gmma_read_addresses"
    d = desc if isinstance(desc, GmmaDescriptor) else decode_gmma_desc(desc)
    m, bits = _major(major, op), _bits(element_type, op)
    T, eb, k = 128 // bits, bits // 8, wgmma_k(bits)
    _check_extent(m, d.layout_type, bits, mn, k, op)
    rel = _offsets(_canonical_outer(m, d.layout_type, T, mn, k, d.leading_byte_offset_bytes // eb,
                                    d.stride_byte_offset_bytes // eb), mn, k)
    addr = d.start_address_bytes + rel * eb
    mask = _W[d.layout_type] - 1                        # 0, 1, 3, 7: how many row bits the swizzle uses
    row = ((addr >> 7) - (d.base_offset if mask else 0)) & mask
    return addr ^ (row << 4)
