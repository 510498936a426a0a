"""TiledMMA and TiledCopy: many atoms working together on one tile, and how each thread's share is found.

A :class:`TiledMMA` repeats an MMA atom over threads (``atom_layout_mnk``, e.g. 2x2x1 warps) and over
values (``permutation_mnk``, the tile each mode covers, optionally permuted). Its TV layouts map
``(thread index, value) -> element`` of the whole ``tile_M x tile_K`` (A), ``tile_N x tile_K`` (B) and
``tile_M x tile_N`` (C) tiles; ``get_slice(t).partition_A(tensor)`` cuts thread ``t``'s values out of any
tensor, as ``(FrgV, RestM, RestK)``.

The construction is CuTe's (``thrfrg_C``): divide the (M, N) tensor by the permutation tiles, zip-divide by
the atom shape, compose the atom mode with the atom's ``(thr, val) -> (m, n)`` layout, then zip-divide the
rest by the thread layout, giving ``((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN)))``. Finally the thread modes
are re-indexed by ``right_inverse(thr_layout_vmnk)``.

Example (the 64x128x16 warpgroup MMA of the CuTe DSL's Hopper dense GEMM)::

    >>> from layoutlab import nvgpu
    >>> print(make_tiled_mma(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 128, 16))))
    Tiled MMA
      Thr Layout VMNK: (128,1,1,1):(1,0,0,0)
      Permutation MNK: (_,_,_)
    MMA Atom
      ThrID:           128:1
      Shape MNK:       (64,128,16)
      TV Layout A:     (128,(64,16)):(0,(1,64))
      TV Layout B:     (128,(128,16)):(0,(1,128))
      TV Layout C:     ((4,8,4),(2,2,16)):((128,1,16),(64,8,512))

A :class:`TiledCopy` does the same for a copy atom: ``make_tiled_copy_A(atom, tiled_mma)`` gives the copy
whose destination layout is exactly the MMA's A layout (the ``ldmatrix`` that feeds ``mma.sync``), and
``make_tiled_copy_tv(atom, thr_layout, val_layout)`` the usual "threads x vectors" copy.
"""


from . import tiled_copy, tiled_mma
from .tiled_copy import *  # noqa: F401,F403 -- re-exported: tiled is the public module
from .tiled_mma import *  # noqa: F401,F403

__all__ = [*tiled_mma.__all__, *tiled_copy.__all__]
