"""The warpgroup operations of the CuTe DSL's ``cute.nvgpu.warpgroup``: the SM90 ``wgmma.mma_async`` MMAs
(``MmaF16BF16Op``, ``MmaF8Op``; also as ``WarpgroupMmaF16BF16Op`` / ``WarpgroupMmaF8Op``) and the shared-memory
layout atoms they read (swizzled ComposedLayouts of 8 rows, K- or MN-major), as
``cute.nvgpu.warpgroup.make_smem_layout_atom`` and ``cutlass.utils.hopper_helpers.get_smem_layout_atom`` build
them. Sources: PTX ISA "wgmma.mma_async", "Matrix Descriptor"; CuTe ``mma_traits_sm90_gmma.hpp``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..cute.atom import MmaAtom, MmaOp, make_mma_atom  # noqa: F401 (the examples use make_mma_atom)
from ..cute.basis import is_int
from ..cute.layout import Layout
from ..cute.swizzle import ComposedLayout, Swizzle
from ..errors import CheckedEnumType, LayoutError
from .common import _L, _acc16, _check_fields, _dsl_enum
from .warp import _FP8, _FP8_RULE

__all__ = ["WarpgroupMmaF16BF16Op", "WarpgroupMmaF8Op", "WGMMA_N_VALUES",
           "SmemLayoutAtomKind", "make_smem_layout_atom", "get_smem_layout_atom"]


#: The N of ``wgmma.mma_async.m64nNk16`` for f16/bf16 inputs: 8, 16, ..., 256.
WGMMA_N_VALUES = tuple(range(8, 257, 8))


class _WarpgroupOp(MmaOp):
    """What the warpgroup ops share: the shape, operand source and majors checks, and the atom."""

    def _check_wgmma(self, what, k):
        """Check and store ``shape_mnk`` (``k`` is the instruction's K), ``a_src`` and the majors ("K" or "MN")."""
        if isinstance(self.shape_mnk, (tuple, list)) and len(self.shape_mnk) == 2:   # the DSL completes (64, N)
            object.__setattr__(self, "shape_mnk", (*self.shape_mnk, k))
        rule = f"a wgmma shape for these inputs; use (64,N,{k}) with N a multiple of 8 in [8,256]"
        _check_fields(self, what, shape_mnk=([(64, n, k) for n in WGMMA_N_VALUES], rule))
        object.__setattr__(self, "a_src", _dsl_enum(self.a_src, f"{what} a_src", ("smem", "rmem")))
        for f in ("a_major_mode", "b_major_mode"):
            object.__setattr__(self, f, _dsl_enum(getattr(self, f), f"{what} {f}", ("k", "mn")).upper())

    def _atom(self, a_rmem, types):
        """The atom: A from registers (``a_rmem``) or, as B, seen whole by every thread from shared memory. C: thread
        t0 + 4*t1 + 32*w starts at row t1 + 16*w, column 2*t0; the DSL drops N = 8's size-1 mode."""
        m, n, k = self.shape_mnk
        rs = self.a_src == "rmem"
        a = a_rmem if rs else _L((128, (m, k)), (0, (1, m)))
        c = (_L(((4, 8, 4), (2, 2)), ((128, 1, 16), (64, 8))) if n == 8 else
             _L(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512))))
        return MmaAtom(self, f"SM90_{m}x{n}x{k}_{types}_{'RS' if rs else 'SS'}", _L(128, 1), self.shape_mnk,
                       a, _L((128, (n, k)), (0, (1, n))), c)


@dataclass(frozen=True)
class WarpgroupMmaF16BF16Op(_WarpgroupOp):
    """SM90 warpgroup MMA ``wgmma.mma_async.m64nNk16`` with f16/bf16 inputs (DSL:
    ``cute.nvgpu.warpgroup.MmaF16BF16Op(ab, acc, (64,N,16), a_src, a_major_mode, b_major_mode)``), acc f32 (or f16
    for f16); ``a_src`` ``"smem"`` (descriptor, "SS") or ``"rmem"`` (registers, "RS", K-major); majors "K" or "MN".

    >>> make_mma_atom(WarpgroupMmaF16BF16Op("bf16", "f32", (64, 128, 16), a_src="rmem")).name
    'SM90_64x128x16_F32BF16BF16_RS'
    """

    ab_dtype: object
    acc_dtype: object
    shape_mnk: tuple
    a_src: object = "smem"
    a_major_mode: object = "K"
    b_major_mode: object = "K"

    def __post_init__(self):
        what = "warpgroup.MmaF16BF16Op"
        _check_fields(self, what, ab_dtype=(("f16", "bf16"), "f16 or bf16"))
        _check_fields(self, what, acc_dtype=_acc16(self.ab_dtype, "wgmma"))
        self._check_wgmma(what, 16)
        if self.a_src == "rmem" and self.a_major_mode != "K":
            raise LayoutError(f"{what}: A from registers is always K-major (wgmma has no imm-trans-a for register A); "
                              f"use a_major_mode='K' or a_src='smem'")

    def _make_atom(self):
        ab, acc = self.ab_dtype.upper(), self.acc_dtype.upper()
        # A from registers: the pattern of C, two k-blocks
        return self._atom(_L(((4, 8, 4), (2, 2, 2)), ((128, 1, 16), (64, 8, 512))), f"{acc}{ab}{ab}")


@dataclass(frozen=True)
class WarpgroupMmaF8Op(_WarpgroupOp):
    """SM90 warpgroup MMA ``wgmma.mma_async.m64nNk32`` with e4m3/e5m2 inputs (DSL:
    ``cute.nvgpu.warpgroup.MmaF8Op(a_dtype, b_dtype, acc_dtype, shape_mnk, a_src, a_major_mode, b_major_mode)``).
    wgmma transposes only 16-bit operands: both must be K-major (the DSL accepts MN-major; we refuse).

    >>> make_mma_atom(WarpgroupMmaF8Op("f8E4M3FN", "f8E5M2", "f32", (64, 128, 32))).name
    'SM90_64x128x32_F32E4M3E5M2_SS'
    """

    a_dtype: object
    b_dtype: object
    acc_dtype: object
    shape_mnk: tuple
    a_src: object = "smem"
    a_major_mode: object = "K"
    b_major_mode: object = "K"

    def __post_init__(self):
        what = "warpgroup.MmaF8Op"
        _check_fields(self, what, a_dtype=(_FP8, _FP8_RULE), b_dtype=(_FP8, _FP8_RULE),
                      acc_dtype=(("f16", "f32"), "f16 or f32"))
        self._check_wgmma(what, 32)
        if "MN" in (self.a_major_mode, self.b_major_mode):
            raise LayoutError(f"{what}: fp8 operands must be K-major (wgmma's imm-trans-a/b exist only "
                              f"for 16-bit inputs); use a_major_mode='K' and b_major_mode='K'. The CuTe DSL "
                              f"accepts MN-major here and builds an atom no instruction implements")

    def _make_atom(self):
        types = f"{self.acc_dtype.upper()}{_FP8[self.a_dtype]}{_FP8[self.b_dtype]}"
        return self._atom(_L(((4, 8, 4), (4, 2, 2)), ((256, 1, 16), (64, 8, 1024))), types)


# The DSL's names, cute.nvgpu.warpgroup.MmaF16BF16Op / MmaF8Op (not in __all__: `from layoutlab import *` would
# mistake them for the warp-wide MmaF16BF16Op).
MmaF16BF16Op = WarpgroupMmaF16BF16Op
MmaF8Op = WarpgroupMmaF8Op



class SmemLayoutAtomKind(Enum, metaclass=CheckedEnumType):
    """The eight GMMA smem atoms, as ``cute.nvgpu.warpgroup.SmemLayoutAtomKind``: MN_* has M (or N) contiguous, K_*
    K; INTER = no swizzle (16-byte interleave), SW32/SW64/SW128 = the 32/64/128-byte swizzle.

    >>> [k.name for k in SmemLayoutAtomKind if k.name.startswith("K_")]
    ['K_INTER', 'K_SW32', 'K_SW64', 'K_SW128']
    """
    MN_INTER = "MN_INTER"
    MN_SW32 = "MN_SW32"
    MN_SW64 = "MN_SW64"
    MN_SW128 = "MN_SW128"
    K_INTER = "K_INTER"
    K_SW32 = "K_SW32"
    K_SW64 = "K_SW64"
    K_SW128 = "K_SW128"


_WIDTHS = ("INTER", "SW32", "SW64", "SW128")  # index B: atom rows of 128 << B bits, the swizzle S<B,4,3> on bytes


def _element_bits(element_type, op) -> int:
    bits = getattr(element_type, "width", element_type)
    if not is_int(bits):
        raise LayoutError(f"{op}: element type {element_type!r} must be a bit width (8, 16, 32) or a DSL numeric type")
    if bits not in (8, 16, 32):
        raise LayoutError(
            f"{op}: {bits}-bit elements are not GMMA shared-memory operands; wgmma reads 8-bit (e4m3/e5m2/s8/u8), "
            f"16-bit (f16/bf16) or 32-bit (tf32) A/B tiles from shared memory")
    return int(bits)


def _atom_kind(kind, op) -> SmemLayoutAtomKind:
    """A SmemLayoutAtomKind from ours, the DSL's enum member or its name."""
    name = kind if isinstance(kind, str) else getattr(kind, "name", None)
    if name not in SmemLayoutAtomKind.__members__:
        raise LayoutError(f"{op}: unknown atom kind {kind!r}; one of {[k.name for k in SmemLayoutAtomKind]}")
    return SmemLayoutAtomKind[name]


def make_smem_layout_atom(kind, element_type) -> ComposedLayout:
    """``cute.nvgpu.warpgroup.make_smem_layout_atom(kind, element_type)``, in elements: a row of 128/256/512/1024
    bits (INTER/SW32/SW64/SW128) holds ``n = bits / width`` elements, swizzled by ``S<0|1|2|3, 4, 3>`` on bytes;
    K-major ``(8, n):(n, 1)``, MN-major ``(n, 8):(1, n)``. CUTLASS's Hopper GEMM atom (K-major, 128B, 16-bit)::

        >>> make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, 16)
        S<3,4,3> o 0 o (8,64):(64,1)
    """
    major, width = _atom_kind(kind, "make_smem_layout_atom").name.split("_")
    b = _WIDTHS.index(width)
    n = (128 << b) // _element_bits(element_type, "make_smem_layout_atom")
    outer = Layout._new((n, 8), (1, n)) if major == "MN" else Layout._new((8, n), (n, 1))
    return ComposedLayout(Swizzle(b, 4, 3), 0, outer)


def get_smem_layout_atom(major, element_type, major_mode_size: int) -> SmemLayoutAtomKind:
    """``cutlass.utils.hopper_helpers.get_smem_layout_atom``: the widest swizzle the tile's major extent fills.
    ``major``: ``"K"`` or ``"MN"``; ``major_mode_size``: the extent along it (elements, a multiple of 8). SW128 if
    it is a multiple of 1024 bits, else SW64 (512), SW32 (256), else INTER. K-major fp16, K-tiles of 64 and 16::

        >>> get_smem_layout_atom("K", 16, 64), get_smem_layout_atom("K", 16, 16)
        (<SmemLayoutAtomKind.K_SW128: 'K_SW128'>, <SmemLayoutAtomKind.K_SW32: 'K_SW32'>)
    """
    op = "get_smem_layout_atom"
    m = getattr(major, "name", major)
    if m not in ("K", "MN"):
        raise LayoutError(f"{op}: major {major!r} must be 'K' or 'MN'")
    bits = _element_bits(element_type, op)
    if not is_int(major_mode_size) or major_mode_size <= 0 or major_mode_size % 8:
        raise LayoutError(f"{op}: major_mode_size {major_mode_size!r} must be a positive multiple of 8 elements")
    b = next((b for b in (3, 2, 1) if major_mode_size * bits % (128 << b) == 0), 0)
    return SmemLayoutAtomKind[f"{m}_{_WIDTHS[b]}"]
