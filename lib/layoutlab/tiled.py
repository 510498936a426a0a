"""TiledMMA and TiledCopy (:mod:`layoutlab.tiled_mma`, :mod:`layoutlab.tiled_copy`): many atoms on one tile.
A :class:`TiledMMA` repeats an MMA atom over threads and values as CuTe's ``thrfrg_C`` does: divide by the
permutation tiles, zip-divide by the atom shape, compose with the atom's TV layout, zip-divide the rest by the
thread layout, re-index threads by ``right_inverse(thr_layout_vmnk)``; a :class:`TiledCopy` likewise for copies.
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
"""

from . import tiled_copy, tiled_mma
from .tiled_copy import *  # noqa: F401,F403 -- re-exported: tiled is the public module
from .tiled_mma import *  # noqa: F401,F403

__all__ = [*tiled_mma.__all__, *tiled_copy.__all__]
