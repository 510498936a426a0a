"""Copy atoms (``ldmatrix``, ``stmatrix``, ``cp.async``, plain loads and stores) as the CuTe DSL's ``cute.nvgpu``
copy operations: layouts defined in bits as in CuTe, shown in units of ``value_type`` (see :mod:`layoutlab.atoms`)."""

from dataclasses import dataclass

from .algebra import recast_layout
from .errors import LayoutError
from .mma_atoms import _DTYPES, _L, _check, _dsl_enum, _table, dtype_bits, dtype_name

__all__ = ["CopyAtom", "make_copy_atom", "LdMatrix8x8x16bOp", "StMatrix8x8x16bOp", "LdMatrix8x16x8bOp",
           "LdMatrix16x8x8bOp", "LdMatrix16x16x8bOp", "StMatrix16x8x8bOp", "CopyG2SOp", "CopyUniversalOp"]


class CopyAtom:
    """One copy instruction as layouts in units of ``value_type``: ``op``, ``name`` (CuTe's), ``value_type``,
    ``thr_id``, ``layout_src_tv``, ``layout_dst_tv``, ``layout_ref_tv`` (the register side's order), ``num_val``
    (values per thread), ``layout_src_tv_bits`` / ``layout_dst_tv_bits`` (in bits, as CuTe C++ writes them).

        >>> print(make_copy_atom(LdMatrix8x8x16bOp(False, 4), "f16"))
        Copy Atom
          ThrID:         32:1
          TV Layout Src: (32,8):(8,1)
          TV Layout Dst: (32,(2,4)):(2,(1,64))
          Value type:    f16
    """

    def __init__(self, op, name, value_type, thr_id, src_bits, dst_bits, raw_units=False, ref="dst"):
        self.op, self.name, self.value_type, self.thr_id = op, name, value_type, thr_id
        self.layout_src_tv_bits, self.layout_dst_tv_bits = src_bits, dst_bits
        # raw_units: already in value units (the DSL's "auto-vectorising" universal copy)
        bits = 1 if raw_units else dtype_bits(value_type)
        self.layout_src_tv, self.layout_dst_tv = (recast_layout(bits, 1, x) for x in (src_bits, dst_bits))
        # CuTe's RefLayout: the side whose (thread, value) order a TiledCopy follows -- the registers
        # (ldmatrix's destination, stmatrix's source); for copies with one TV layout it does not matter
        self.layout_ref_tv = self.layout_src_tv if ref == "src" else self.layout_dst_tv
        self.num_val = self.layout_ref_tv[1].size()

    def _rows(self):
        return [("ThrID", self.thr_id), ("TV Layout Src", self.layout_src_tv), ("TV Layout Dst", self.layout_dst_tv),
                ("Value type", self.value_type)]

    def __str__(self):
        return _table(15, ("Copy Atom", self._rows()))

    def __repr__(self):
        return f"CopyAtom({self.name}, {self.value_type})"


# ldmatrix/stmatrix in bits, CuTe's SM75_U32x{1,2,4}_LDSM_N / SM75_U16x{2,4,8}_LDSM_T.
# Address side: lane l names row l of the stacked 8x8 matrices (128 bits a row); x1/x2 use lanes 0..7/0..15.
_LDSM_ADDR = {1: _L(((8, 4), 128), ((128, 0), 1)),
              2: _L(((16, 2), 128), ((128, 0), 1)),
              4: _L((32, 128), (128, 1))}
# Register side without .trans: lane l gets bits 32*(l%4)... of row l/4; register j from matrix j.
_LDSM_REG_N = {1: _L((32, 32), (32, 1)),
               2: _L((32, (32, 2)), (32, (1, 1024))),
               4: _L((32, (32, 4)), (32, (1, 1024)))}
# With .trans: lane l = t0 + 4*t1 gets 16-bit elements (row 2*t0 + i, column t1) of each matrix.
_LDSM_REG_T = {1: _L(((4, 8), (16, 2)), ((256, 16), (1, 128))),
               2: _L(((4, 8), (16, 2, 2)), ((256, 16), (1, 128, 1024))),
               4: _L(((4, 8), (16, 2, 4)), ((256, 16), (1, 128, 1024)))}
# 8-bit transposing forms (sm_100a, as the DSL 4.8.1 builds them). stmatrix.m16n8.trans.b8: lane t0 + 4*t1
# holds bytes (row 2*t0 + i (+8), column t1) of each 16x8 matrix.
_STSM8_REG = {1: _L(((4, 8), (8, 2, 2)), ((256, 8), (1, 128, 64))),
              2: _L(((4, 8), (8, 2, 2, 2)), ((256, 8), (1, 128, 64, 1024))),
              4: _L(((4, 8), (8, 2, 2, 4)), ((256, 8), (1, 128, 64, 1024)))}
# LdMatrix16x8x8b: ldmatrix.m16n16.trans.b8 with its addresses and bytes permuted to give stmatrix.m16n8's
# registers (CuTe's SM100_U8x{8,16}_LDSM_T); x2 = one 16x16 matrix, x4 = two.
_LDSM8_16x8_ADDR = {2: _L(((2, 2, 4, 2), 128), ((128, 1024, 256, 0), 1)),
                    4: _L(((2, 2, 4, 2), 128), ((128, 1024, 256, 2048), 1))}
# LdMatrix16x16x8b: ldmatrix.m16n16.trans.b8 as PTX returns it (no permutation).
_LDSM8_16x16_REG = {1: _L(((4, 8), (8, 4, 2)), ((512, 8), (1, 128, 64))),
                    2: _L(((4, 8), (8, 4, 2, 2)), ((512, 8), (1, 128, 64, 2048)))}


def _alternatives(values):
    """``(1, 2, 4)`` -> ``"1, 2 or 4"`` (for error messages)."""
    *first, last = map(str, values)
    return f"{', '.join(first)} or {last}" if first else last


@dataclass(frozen=True)
class _MatrixOp:
    """The DSL's warp matrix copies ``(transpose, num_matrices, unpack_bits)``. ``_FORMS``: allowed ``transpose`` ->
    (CuTe's name, n = num_matrices, register layouts by n); ``_ADDR``: address layouts by n."""

    transpose: bool = False
    num_matrices: int = 1
    unpack_bits: object = None

    _FORMS = {False: ("SM75_U32x{n}_LDSM_N", _LDSM_REG_N), True: ("SM75_U16x{n2}_LDSM_T", _LDSM_REG_T)}
    _ADDR = _LDSM_ADDR
    _NUM = (1, 2, 4)
    _UNPACK = (None,)
    _BYTES = False                # moves 8-bit elements only (else 8, 16 or 32 bits)
    is_load = True                # ldmatrix (registers are the destination) or stmatrix

    def __post_init__(self):
        cls = type(self).__name__
        if not isinstance(self.transpose, bool):
            raise LayoutError(f"{cls}: transpose must be a bool, got {self.transpose!r}")
        _check(f"{cls}: transpose", self.transpose, self._FORMS,
               f"available: this op {'never' if self.transpose else 'always'} transposes")
        _check(f"{cls}: num_matrices", self.num_matrices, self._NUM, f"{_alternatives(self._NUM)} (.x1/.x2/.x4)")
        _check(f"{cls}: unpack_bits", self.unpack_bits, self._UNPACK,
               f"{_alternatives(self._UNPACK)} (4 and 6 read packed 4-/6-bit elements into 8-bit containers)")

    @property
    def name(self):
        n = self.num_matrices
        return self._FORMS[self.transpose][0].format(n=n, n2=2 * n, n4=4 * n)

    def _make_atom(self, vt, bits, num_bits_per_copy):
        kind = "ldmatrix" if self.is_load else "stmatrix"
        if num_bits_per_copy is not None:
            raise LayoutError(f"make_copy_atom: {kind} moves fixed matrices; num_bits_per_copy does not apply")
        if self._BYTES and bits != 8:
            raise LayoutError(f"make_copy_atom: {type(self).__name__} moves 8-bit elements, so value_type must be 8 "
                              f"bits wide, not {vt} ({bits} bits); use LdMatrix8x8x16bOp/StMatrix8x8x16bOp for 16-bit "
                              f"values (the DSL accepts this and builds a layout over the wrong number of threads)")
        if not self._BYTES and self.transpose and bits != 16:
            raise LayoutError(f"make_copy_atom: {kind}.trans transposes 16-bit elements, so value_type must be "
                              f"16 bits wide, not {vt} ({bits} bits); the DSL accepts this and builds a "
                              f"layout over the wrong number of threads")
        if bits not in (8, 16, 32):
            raise LayoutError(f"make_copy_atom: {kind} moves 32 bits per lane and matrix; value_type {vt} "
                              f"({bits} bits) must be 8, 16 or 32 bits wide")
        addr, reg = self._ADDR[self.num_matrices], self._FORMS[self.transpose][1][self.num_matrices]
        src, dst = (addr, reg) if self.is_load else (reg, addr)
        return CopyAtom(self, self.name, vt, _L(32, 1), src, dst, ref="dst" if self.is_load else "src")


@dataclass(frozen=True)
class LdMatrix8x8x16bOp(_MatrixOp):
    """``ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16`` (DSL: ``cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose,
    num_matrices)``): a warp loads 1, 2 or 4 8x8 matrices of 16-bit elements, lanes giving row addresses.

    >>> make_copy_atom(LdMatrix8x8x16bOp(True, 4), "f16").name
    'SM75_U16x8_LDSM_T'
    """


@dataclass(frozen=True)
class StMatrix8x8x16bOp(_MatrixOp):
    """``stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16`` (sm_90; DSL:
    ``cute.nvgpu.warp.StMatrix8x8x16bOp(transpose, num_matrices)``): the mirror image of ldmatrix.

    >>> make_copy_atom(StMatrix8x8x16bOp(False, 2), "bf16").name
    'SM90_U32x2_STSM_N'
    """

    _FORMS = {False: ("SM90_U32x{n}_STSM_N", _LDSM_REG_N), True: ("SM90_U16x{n2}_STSM_T", _LDSM_REG_T)}
    is_load = False


@dataclass(frozen=True)
class LdMatrix8x16x8bOp(_MatrixOp):
    """``ldmatrix.sync.aligned.m8n16.x{1,2,4}.shared.b8x16.b{4,6}x16_p{64,32}`` (sm_100a; DSL:
    ``cute.nvgpu.warp.LdMatrix8x16x8bOp(False, num_matrices, unpack_bits)``): rows of 16 packed 4- or 6-bit
    elements unpacked into bytes (CuTe: ``SM100_SU{4,6}_DU8x16_x{n}_LDSM_N``); without ``unpack_bits`` the 16-bit
    ``ldmatrix`` in bytes. No transpose.

    >>> print(make_copy_atom(LdMatrix8x16x8bOp(False, 4, 4), "i8").layout_dst_tv)
    (32,(4,4)):(4,(1,128))
    """

    _FORMS = {False: ("SM75_U32x{n}_LDSM_N", _LDSM_REG_N)}
    _UNPACK = (None, 4, 6)
    _BYTES = True

    @property
    def name(self):
        if self.unpack_bits is None:
            return super().name
        return f"SM100_SU{self.unpack_bits}_DU8x16_x{self.num_matrices}_LDSM_N"


@dataclass(frozen=True)
class LdMatrix16x8x8bOp(_MatrixOp):
    """8-bit transposing load matched to ``stmatrix.m16n8.trans.b8`` (sm_100a; DSL:
    ``cute.nvgpu.warp.LdMatrix16x8x8bOp(True, num_matrices, unpack_bits)``, ``num_matrices`` 2 or 4):
    ``ldmatrix.m16n16.trans.b8`` permuted so each lane holds what :class:`StMatrix16x8x8bOp` stores from it.

    >>> print(make_copy_atom(LdMatrix16x8x8bOp(True, 2), "f8E4M3FN").layout_dst_tv)
    ((4,8),(1,2,2,2)):((32,1),(1,16,8,128))
    """

    _FORMS = {True: ("SM100_U8x{n4}_LDSM_T", _STSM8_REG)}
    _ADDR = _LDSM8_16x8_ADDR
    _NUM = (2, 4)
    _UNPACK = (None, 4, 6)
    _BYTES = True


@dataclass(frozen=True)
class LdMatrix16x16x8bOp(_MatrixOp):
    """``ldmatrix.sync.aligned.m16n16.x{1,2}.trans.shared.b8`` (sm_100a; DSL:
    ``cute.nvgpu.warp.LdMatrix16x16x8bOp(True, num_matrices, unpack_bits)``): one or two 16x16 byte matrices,
    transposed, as PTX delivers them (no permutation; CuTe C++ has no atom for it, so the name is PTX's).

    >>> print(make_copy_atom(LdMatrix16x16x8bOp(True, 1), "i8").layout_dst_tv)
    ((4,8),(1,4,2)):((64,1),(1,16,8))
    """

    _FORMS = {True: ("ldmatrix.m16n16.x{n}.trans.b8", _LDSM8_16x16_REG)}
    _ADDR = {1: _LDSM_ADDR[2], 2: _LDSM_ADDR[4]}     # 16 (32) row addresses, as ldmatrix .x2 (.x4)
    _NUM = (1, 2)
    _UNPACK = (None, 4, 6)
    _BYTES = True


@dataclass(frozen=True)
class StMatrix16x8x8bOp(_MatrixOp):
    """``stmatrix.sync.aligned.m16n8.x{1,2,4}.trans.shared.b8`` (sm_100a; DSL:
    ``cute.nvgpu.warp.StMatrix16x8x8bOp(True, num_matrices)``): 1, 2 or 4 16x8 byte matrices, transposed.

    >>> print(make_copy_atom(StMatrix16x8x8bOp(True, 1), "i8").layout_src_tv)
    ((4,8),(1,2,2)):((32,1),(1,16,8))
    """

    _FORMS = {True: ("SM100_U8x{n4}_STSM_T", _STSM8_REG)}
    _BYTES = True
    is_load = False


def _thread_copy(op, name, vt, nb):
    """The atom of one thread moving ``nb`` contiguous bits (``None``: one value, the DSL's auto-vectorising copy)."""
    lay = _L((1, 1), (0, 0)) if nb is None else _L((1, nb), (0, 1))
    return CopyAtom(op, name, vt, _L(1, 0), lay, lay, raw_units=nb is None)


@dataclass(frozen=True)
class CopyG2SOp:
    """``cp.async.ca/.cg.shared.global`` (sm_80; DSL: ``cute.nvgpu.cpasync.CopyG2SOp(cache_mode)``): a thread copies
    4, 8 or 16 bytes global -> shared; ``cache_mode`` ``"always"`` (.ca) or ``"global"`` (.cg, 16 bytes only).

    >>> make_copy_atom(CopyG2SOp("global"), "f16", num_bits_per_copy=128).name
    'SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>'
    """

    cache_mode: str = "always"

    def __post_init__(self):
        object.__setattr__(self, "cache_mode", _dsl_enum(self.cache_mode, "CopyG2SOp cache_mode", ("always", "global")))

    def _make_atom(self, vt, bits, nb):
        _check("make_copy_atom: num_bits_per_copy", nb, (32, 64, 128),
               "32, 64 or 128: cp.async copies 4, 8 or 16 bytes per thread")
        if self.cache_mode == "global" and nb != 128:
            raise LayoutError("make_copy_atom: cp.async.cg (cache_mode='global') copies 16 bytes only; "
                              "use num_bits_per_copy=128 or cache_mode='always'")
        if nb % bits:
            raise LayoutError(f"make_copy_atom: {nb} bits per copy is not a whole number of {vt} values ({bits} bits)")
        return _thread_copy(self, f"SM80_CP_ASYNC_CACHE{self.cache_mode.upper()}<uint{nb}_t>", vt, nb)


@dataclass(frozen=True)
class CopyUniversalOp:
    """A plain load/store of ``num_bits_per_copy`` bits per thread (DSL: ``cute.nvgpu.CopyUniversalOp()``); without
    it the DSL leaves the width to its auto-vectoriser and shows one value, ``(1,1):(0,0)``, as we do.

    >>> print(make_copy_atom(CopyUniversalOp(), "f32", num_bits_per_copy=128).layout_dst_tv)
    (1,4):(0,1)
    """

    def _make_atom(self, vt, bits, nb):
        if nb is None:
            return _thread_copy(self, f"UniversalCopy<{vt}>", vt, None)
        if not isinstance(nb, int) or nb not in (8, 16, 32, 64, 128, 256) or nb % bits:
            raise LayoutError(f"make_copy_atom: a universal copy moves a power-of-two number of whole {vt} "
                              f"values up to 256 bits; num_bits_per_copy={nb!r} is not that "
                              f"(use a multiple of {bits})")
        return _thread_copy(self, f"UniversalCopy<uint{nb}_t>", vt, nb)


def make_copy_atom(op, value_type, num_bits_per_copy=None) -> CopyAtom:
    """The copy atom of ``op`` for ``value_type`` (DSL: ``cute.make_copy_atom(op, value_type, num_bits_per_copy)``).

    >>> print(make_copy_atom(CopyG2SOp(), "f16", num_bits_per_copy=128).layout_src_tv)
    (1,8):(0,1)
    """
    vt = dtype_name(value_type)
    if not isinstance(op, (_MatrixOp, CopyG2SOp, CopyUniversalOp)):
        raise LayoutError(f"make_copy_atom: {op!r} is not a copy operation; use an nvgpu.warp LdMatrix/StMatrix op, "
                          f"nvgpu.cpasync.CopyG2SOp or nvgpu.CopyUniversalOp")
    return op._make_atom(vt, _DTYPES[vt], num_bits_per_copy)
