"""MMA and copy atoms (:mod:`layoutlab.mma_atoms`, :mod:`layoutlab.copy_atoms`) as the CuTe DSL's ``cute.nvgpu``
operations. An MMA atom's ``layout_a_tv/b_tv/c_tv`` map ``(thread, value)`` to the column-major index
``m + M*k`` / ``n + N*k`` / ``m + M*n`` of A, B, C; a copy atom's ``layout_src_tv/dst_tv`` to the element, in
``value_type`` units. What the DSL accepts but no instruction does (e.g. MN-major fp8 ``wgmma``) is a LayoutError.
Sources: PTX ISA "Matrix Fragments for mma.m16n8k*", "wgmma.mma_async", "ldmatrix"; CuTe ``mma_traits_sm*.hpp``.
Example (the Hopper accumulator of ``wgmma.m64n64k16``)::

    >>> atom = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16)))
    >>> print(atom.layout_c_tv)
    ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))
    >>> c = atom.layout_c_tv(1, 0); (c % 64, c // 64)       # thread 1, value 0 holds C[0, 2]
    (0, 2)
"""

from types import SimpleNamespace

from . import copy_atoms, mma_atoms
from .copy_atoms import *  # noqa: F401,F403 -- re-exported: atoms is the public module
from .mma_atoms import *  # noqa: F401,F403

__all__ = [*mma_atoms.__all__, *copy_atoms.__all__, "nvgpu"]

# DSL-shaped namespaces: layoutlab.nvgpu.warp.MmaF16BF16Op mirrors cute.nvgpu.warp.MmaF16BF16Op
nvgpu = SimpleNamespace(
    warp=SimpleNamespace(MmaF16BF16Op=MmaF16BF16Op, MmaTF32Op=MmaTF32Op, MmaFP8Op=MmaFP8Op,
                         LdMatrix8x8x16bOp=LdMatrix8x8x16bOp, StMatrix8x8x16bOp=StMatrix8x8x16bOp,
                         LdMatrix8x16x8bOp=LdMatrix8x16x8bOp, LdMatrix16x8x8bOp=LdMatrix16x8x8bOp,
                         LdMatrix16x16x8bOp=LdMatrix16x16x8bOp, StMatrix16x8x8bOp=StMatrix16x8x8bOp),
    warpgroup=SimpleNamespace(MmaF16BF16Op=WarpgroupMmaF16BF16Op, MmaF8Op=WarpgroupMmaF8Op),
    cpasync=SimpleNamespace(CopyG2SOp=CopyG2SOp),
    CopyUniversalOp=CopyUniversalOp,
)
