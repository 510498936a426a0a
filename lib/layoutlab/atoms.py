"""MMA and copy atoms as data: the (thread, value) -> element maps of single tensor-core and copy instructions.

An *atom* is one hardware instruction seen through layouts. For an MMA atom of shape ``(M, N, K)``:

* ``thr_id``: which hardware threads take part (``32:1`` for a warp, ``128:1`` for a warpgroup);
* ``layout_a_tv``: ``(thread, value) -> m + M*k``, the element of the ``M x K`` tile A that value ``v`` of
  thread ``t`` holds (a column-major index into the tile);
* ``layout_b_tv``: ``(thread, value) -> n + N*k`` into the ``N x K`` tile B (CuTe keeps B as N x K);
* ``layout_c_tv``: ``(thread, value) -> m + M*n`` into the ``M x N`` accumulator.

Example (the Hopper accumulator of ``wgmma.m64n64k16``)::

    >>> atom = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16)))
    >>> print(atom.layout_c_tv)
    ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))
    >>> c = atom.layout_c_tv(1, 0); (c % 64, c // 64)       # thread 1, value 0 holds C[0, 2]
    (0, 2)

A copy atom moves ``value_type`` elements; ``layout_src_tv`` / ``layout_dst_tv`` map ``(thread, value)``
to the index of the element in the atom's *reference* order (that of the register side). The layouts are
defined in bits, as in CuTe, and shown in units of ``value_type``: ``ldmatrix.x4`` with f16 prints
``TV Layout Dst: (32,(2,4)):(2,(1,64))``.

Names, arguments and printing follow the CuTe DSL (``cute.make_mma_atom(cute.nvgpu.warp.MmaF16BF16Op(
Float16, Float32, (16,8,16)))`` prints exactly as ``str(make_mma_atom(nvgpu.warp.MmaF16BF16Op("f16",
"f32", (16,8,16))))``); each atom also carries its CuTe C++ name (``SM80_16x8x16_F32F16F16F32_TN``,
``SM75_U32x4_LDSM_N`` ...). Where the DSL accepts something no instruction can do (a 2-byte ``cp.async``,
``ldmatrix.trans`` of 32-bit values, MN-major fp8 ``wgmma``) we refuse with a :class:`~layoutlab.errors.LayoutError`.

The MMA atoms and element types live in :mod:`layoutlab.mma_atoms`, the copy atoms in :mod:`layoutlab.copy_atoms`;
this module gathers them under the DSL's namespaces (``nvgpu.warp``, ``nvgpu.warpgroup``, ``nvgpu.cpasync``).
"""


from types import SimpleNamespace

from .copy_atoms import (CopyAtom, CopyG2SOp, CopyUniversalOp, LdMatrix8x8x16bOp, LdMatrix8x16x8bOp,
                         LdMatrix16x8x8bOp, LdMatrix16x16x8bOp, StMatrix8x8x16bOp, StMatrix16x8x8bOp, make_copy_atom)
from .mma_atoms import (WGMMA_N_VALUES, MmaAtom, MmaF16BF16Op, MmaFP8Op, MmaTF32Op, WarpgroupMmaF8Op,
                        WarpgroupMmaF16BF16Op, dtype_bits, dtype_name, make_mma_atom)

__all__ = [
    "MmaAtom",
    "CopyAtom",
    "make_mma_atom",
    "make_copy_atom",
    "MmaF16BF16Op",
    "MmaTF32Op",
    "MmaFP8Op",
    "WarpgroupMmaF16BF16Op",
    "WarpgroupMmaF8Op",
    "LdMatrix8x8x16bOp",
    "StMatrix8x8x16bOp",
    "LdMatrix8x16x8bOp",
    "LdMatrix16x8x8bOp",
    "LdMatrix16x16x8bOp",
    "StMatrix16x8x8bOp",
    "CopyG2SOp",
    "CopyUniversalOp",
    "nvgpu",
    "dtype_name",
    "dtype_bits",
    "WGMMA_N_VALUES",
]

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
