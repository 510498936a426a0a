"""MMA and copy atoms: single tensor-core and copy instructions as (thread, value) -> element layouts.

An MMA atom of shape ``(M, N, K)`` has ``thr_id`` (the threads taking part: ``32:1`` a warp, ``128:1`` a
warpgroup) and ``layout_a_tv`` / ``layout_b_tv`` / ``layout_c_tv``: ``(thread, value) ->`` the column-major
index ``m + M*k`` / ``n + N*k`` / ``m + M*n`` into the ``M x K`` tile A, the ``N x K`` tile B (CuTe keeps B as
N x K) and the ``M x N`` accumulator. A copy atom's ``layout_src_tv`` / ``layout_dst_tv`` map ``(thread, value)``
to the element in the atom's reference order (the register side's), defined in bits as in CuTe and shown in
units of ``value_type``. Names, arguments and printing follow the CuTe DSL (``cute.nvgpu.warp``,
``cute.nvgpu.warpgroup``, ``cute.nvgpu.cpasync``); each atom carries its CuTe C++ name. Where the DSL accepts
what no instruction can do (a 2-byte ``cp.async``, ``ldmatrix.trans`` of 32-bit values, MN-major fp8 ``wgmma``)
we refuse with a :class:`~layoutlab.errors.LayoutError`. Sources: PTX ISA "Matrix Fragments for mma.m16n8k*",
"wgmma.mma_async" and "ldmatrix"; the MMA atoms live in :mod:`layoutlab.mma_atoms`, the copy atoms in
:mod:`layoutlab.copy_atoms`.

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
