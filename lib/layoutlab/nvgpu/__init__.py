"""The CuTe DSL's ``cute.nvgpu`` and the hardware models behind it, one module per instruction family:
:mod:`~layoutlab.nvgpu.warp` (``mma.sync``, ``ldmatrix`` / ``stmatrix`` operations), :mod:`~layoutlab.nvgpu.warpgroup`
(``wgmma`` operations, shared-memory layout atoms), :mod:`~layoutlab.nvgpu.cpasync` (``cp.async``, ``mbarrier``),
:mod:`~layoutlab.nvgpu.common` (``CopyUniversalOp``), :mod:`~layoutlab.nvgpu.ldmatrix` (which ``ldmatrix`` feeds an
MMA operand), :mod:`~layoutlab.nvgpu.tma` (tensor maps and CuTe's TMA atom), :mod:`~layoutlab.nvgpu.gmma` (the
wgmma matrix descriptor, CuTe's ``GmmaDescriptor``), :mod:`~layoutlab.nvgpu.banks` (the bank model and the swizzle
search) and :mod:`~layoutlab.nvgpu.tcgen05` (Blackwell's tensor memory, on paper).

As in the DSL, the operations are reached through their family::

    >>> from layoutlab import nvgpu, make_mma_atom
    >>> make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("bf16", "f32", (64, 128, 16))).name
    'SM90_64x128x16_F32BF16BF16_SS'
"""

from . import cpasync, warp, warpgroup
from .common import CopyUniversalOp

__all__ = ["warp", "warpgroup", "cpasync", "CopyUniversalOp"]
