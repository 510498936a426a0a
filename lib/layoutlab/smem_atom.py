"""The Hopper GMMA shared-memory layout atoms (swizzled ComposedLayouts of 8 rows, K- or MN-major), as
``cute.nvgpu.warpgroup.make_smem_layout_atom`` and ``cutlass.utils.hopper_helpers.get_smem_layout_atom`` build
them (also importable from :mod:`layoutlab.swizzle`).
"""

from __future__ import annotations

from enum import Enum

from .errors import LayoutError
from .inttuple import is_int
from .layout import Layout
from .swizzle import ComposedLayout, Swizzle

__all__ = ["SmemLayoutAtomKind", "make_smem_layout_atom", "get_smem_layout_atom"]


class SmemLayoutAtomKind(Enum):
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
