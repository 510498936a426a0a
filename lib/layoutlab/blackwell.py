"""Blackwell (sm_100) on paper: tensor memory, the ``tcgen05.ld`` register layout, block-scale factors (chapter 10's
numbers, computed). Source: PTX ISA 9.0 §9.7.16 "TensorCore 5th Generation Family Instructions": tensor memory is
128 lanes x 512 32-bit columns per CTA, allocated in powers of two >= 32 columns; in ``tcgen05.ld.32x32b`` thread
``t`` of warp ``w`` reads lane ``32 w + t``; block-scaled ``tcgen05.mma`` has one scale per 32 K elements
(``mxf8f6f4``, ``mxf4``) or 16 (``mxf4nvf4``).
"""

from .errors import LayoutError
from .layout import Layout

__all__ = ["TMEM_LANES", "TMEM_COLUMNS", "tmem_alloc_columns", "accumulator_columns", "tmem_ld_32x32b_tv",
           "block_scale_layout"]

TMEM_LANES, TMEM_COLUMNS = 128, 512


def accumulator_columns(tile_n: int, acc_bits: int = 32) -> int:
    """TMEM columns an ``M = 128 x tile_n`` accumulator occupies: one 32-bit column per 32 bits of a row.

    >>> accumulator_columns(256), accumulator_columns(256, 16)
    (256, 128)
    """
    if acc_bits not in (16, 32) or not isinstance(tile_n, int) or tile_n <= 0:
        raise LayoutError(f"accumulator_columns: tile_n={tile_n!r}, acc_bits={acc_bits!r}; tile_n must be a positive "
                          f"integer and the accumulator f32/s32 (32 bits) or f16 (16 bits)")
    return -(-tile_n * acc_bits // 32)


def tmem_alloc_columns(columns: int) -> int:
    """Columns ``tcgen05.alloc`` must be asked for to hold ``columns``: a power of two, at least 32, at most 512.

    >>> tmem_alloc_columns(200), tmem_alloc_columns(8), tmem_alloc_columns(512)
    (256, 32, 512)
    """
    if not isinstance(columns, int) or not 1 <= columns <= TMEM_COLUMNS:
        raise LayoutError(f"tmem_alloc_columns: {columns!r} columns; tensor memory has {TMEM_COLUMNS} columns per "
                          f"CTA: ask for 1..{TMEM_COLUMNS} (split a wider accumulator over several tiles)")
    return max(32, 1 << (columns - 1).bit_length())


def tmem_ld_32x32b_tv(n: int) -> Layout:
    """The TV layout after ``tcgen05.ld.32x32b.x<n>`` by 4 warps: thread ``t`` holds row ``t``, register ``j``
    column ``j`` of a ``128 x n`` accumulator (tile index ``m + 128 n``, CuTe's column-major order).

    >>> tmem_ld_32x32b_tv(64)
    (128,64):(1,128)
    """
    if not isinstance(n, int) or n not in (1, 2, 4, 8, 16, 32, 64, 128):
        raise LayoutError(f"tmem_ld_32x32b_tv: n={n!r}; the .32x32b shape loads .x1 ... .x128 columns per thread "
                          f"(a power of two up to 128)")
    return Layout((TMEM_LANES, n), (1, TMEM_LANES))


def block_scale_layout(rows: int, k: int, vec: int) -> Layout:
    """Element ``(r, c)`` of a ``rows x k`` operand -> the index of its scale factor (``rows x k / vec`` of them,
    row-major): a CuTe layout with a stride-0 mode of size ``vec`` (every element of a block shares one).

    >>> block_scale_layout(4, 64, 32)
    (4,(32,2)):(2,(0,1))
    """
    if vec not in (16, 32):
        raise LayoutError(f"block_scale_layout: vec={vec!r}; block-scaled MMA uses one scale per 32 elements "
                          f"(mxf8f6f4, mxf4: UE8M0 scales) or per 16 (mxf4nvf4: UE4M3 scales)")
    if not isinstance(k, int) or k <= 0 or k % vec:
        raise LayoutError(f"block_scale_layout: k={k!r} is not a positive multiple of the block size {vec}")
    if not isinstance(rows, int) or rows <= 0:
        raise LayoutError(f"block_scale_layout: rows={rows!r} must be a positive integer")
    return Layout((rows, (vec, k // vec)), (k // vec, (0, 1)))
