"""The warp-wide operations of the CuTe DSL's ``cute.nvgpu.warp``: the ``mma.sync`` MMAs (``MmaF16BF16Op``,
``MmaTF32Op``, ``MmaFP8Op``) and the ``ldmatrix`` / ``stmatrix`` copies, their layouts written out from the PTX ISA
("Matrix Fragments for mma.m16n8k*", "ldmatrix", "stmatrix") and CuTe's ``mma_traits_sm80.hpp`` /
``copy_traits_sm75.hpp``; copy layouts are defined in bits as in CuTe and shown in units of ``value_type`` (see
:mod:`layoutlab.cute.atom`)."""

from dataclasses import dataclass

from ..cute.atom import CopyAtom, CopyOp, MmaAtom, MmaOp, make_copy_atom, make_mma_atom  # noqa: F401 (examples)
from ..errors import LayoutError
from .common import _L, _acc16, _alternatives, _check, _check_fields

__all__ = ["MmaF16BF16Op", "MmaTF32Op", "MmaFP8Op", "LdMatrix8x8x16bOp", "StMatrix8x8x16bOp", "LdMatrix8x16x8bOp",
           "LdMatrix16x8x8bOp", "LdMatrix16x16x8bOp", "StMatrix16x8x8bOp"]


# TV layouts of mma.sync (PTX "Matrix Fragments for mma.m16n8k*") by (inputs, K). Lane l = t0 + 4*t1: C rows t1
# and t1 + 8, columns 2*t0 + (0,1). A register packs 2 16-bit or 4 8-bit K-neighbours; the larger K adds a block.
_WARP_C = _L(((4, 8), (2, 2)), ((32, 1), (16, 8)))
_WARP_AB = {
    ("f16", 8): (_WARP_C, _L(((4, 8), 2), ((16, 1), 8))),          # rows t1, t1+8; k = 2*t0 + (0,1); n = t1
    ("f16", 16): (_L(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128))), _L(((4, 8), (2, 2)), ((16, 1), (8, 64)))),
    ("tf32", 4): (_L(((4, 8), 2), ((16, 1), 8)), _L(((4, 8), 1), ((8, 1), 0))),   # k = t0 (+4)
    ("tf32", 8): (_L(((4, 8), (2, 2)), ((16, 1), (8, 64))), _L(((4, 8), 2), ((8, 1), 32))),
    ("f8", 16): (_L(((4, 8), (4, 2)), ((64, 1), (16, 8))), _L(((4, 8), 4), ((32, 1), 8))),   # k = 4*t0 + (0..3)
    ("f8", 32): (_L(((4, 8), (4, 2, 2)), ((64, 1), (16, 8, 256))), _L(((4, 8), (4, 2)), ((32, 1), (8, 128)))),
}


def _warp_atom(op, inputs, sm, types):
    """The MmaAtom of a warp-wide ``mma.sync`` op, named as CuTe does: ``SM{sm}_MxNxK_{types}_TN``."""
    m, n, k = op.shape_mnk
    a, b = _WARP_AB[inputs, k]
    return MmaAtom(op, f"SM{sm}_{m}x{n}x{k}_{types}_TN", _L(32, 1), op.shape_mnk, a, b, _WARP_C)


@dataclass(frozen=True)
class MmaF16BF16Op(MmaOp):
    """SM80 warp MMA ``mma.sync.aligned.m16n8k{8,16}.row.col`` with f16 (acc f16/f32) or bf16 (acc f32) inputs
    (DSL: ``cute.nvgpu.warp.MmaF16BF16Op(ab_dtype, acc_dtype, shape_mnk)``).

    >>> make_mma_atom(MmaF16BF16Op("f16", "f32", (16, 8, 16))).name
    'SM80_16x8x16_F32F16F16F32_TN'
    """

    ab_dtype: object
    acc_dtype: object
    shape_mnk: tuple

    def __post_init__(self):
        _check_fields(self, "MmaF16BF16Op", ab_dtype=(("f16", "bf16"), "f16 or bf16 (use MmaTF32Op for tf32)"))
        _check_fields(self, "MmaF16BF16Op", acc_dtype=_acc16(self.ab_dtype, "mma.sync"),
                      shape_mnk=(((16, 8, 8), (16, 8, 16)),
                                 "an mma.sync shape for 16-bit inputs; use (16,8,8) or (16,8,16)"))

    def _make_atom(self):
        ab, acc = self.ab_dtype.upper(), self.acc_dtype.upper()
        return _warp_atom(self, "f16", 80, f"{acc}{ab}{ab}{acc}")


@dataclass(frozen=True)
class MmaTF32Op(MmaOp):
    """SM80 warp MMA ``mma.sync.aligned.m16n8k{4,8}.row.col.f32.tf32.tf32.f32`` (DSL: ``warp.MmaTF32Op(shape_mnk)``).

    >>> print(make_mma_atom(MmaTF32Op((16, 8, 8))).layout_a_tv)
    ((4,8),(2,2)):((16,1),(8,64))
    """

    shape_mnk: tuple

    def __post_init__(self):
        _check_fields(self, "MmaTF32Op",
                      shape_mnk=(((16, 8, 4), (16, 8, 8)), "a tf32 mma.sync shape; use (16,8,4) or (16,8,8)"))

    def _make_atom(self):
        return _warp_atom(self, "tf32", 80, "F32TF32TF32F32")


_FP8 = {"f8E4M3FN": "E4M3", "f8E5M2": "E5M2"}     # -> CuTe's name


_FP8_RULE = "an fp8 type; use Float8E4M3FN or Float8E5M2"


@dataclass(frozen=True)
class MmaFP8Op(MmaOp):
    """SM89 warp MMA ``mma.sync.aligned.m16n8k{16,32}.row.col`` with e4m3/e5m2 inputs (DSL:
    ``cute.nvgpu.warp.MmaFP8Op(ab_dtype, acc_dtype, shape_mnk)``).

    >>> print(make_mma_atom(MmaFP8Op("f8E4M3FN", "f32", (16, 8, 32))).layout_a_tv)
    ((4,8),(4,2,2)):((64,1),(16,8,256))
    """

    ab_dtype: object
    acc_dtype: object
    shape_mnk: tuple

    def __post_init__(self):
        _check_fields(self, "MmaFP8Op", ab_dtype=(_FP8, _FP8_RULE + " (MmaF16BF16Op for 16-bit inputs)"),
                      acc_dtype=(("f16", "f32"), "f16 or f32"),
                      shape_mnk=(((16, 8, 16), (16, 8, 32)),
                                 "an mma.sync shape for fp8 inputs; use (16,8,16) or (16,8,32)"))

    def _make_atom(self):
        ab, acc = _FP8[self.ab_dtype], self.acc_dtype.upper()
        return _warp_atom(self, "f8", 89, f"{acc}{ab}{ab}{acc}")


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


@dataclass(frozen=True)
class _MatrixOp(CopyOp):
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
