"""Blackwell (sm_100a/sm_100f family: ``tcgen05``) on paper: tensor memory, the ``tcgen05.ld`` register layout,
block-scale factors (chapter 10's numbers, computed). Source: PTX ISA 9.0 §9.7.16 "TensorCore 5th Generation Family
Instructions": tensor memory is 128 lanes x 512 32-bit columns per CTA, allocated in powers of two >= 32 columns; in
``tcgen05.ld.32x32b`` thread ``t`` of warp ``w`` reads lane ``32 w + t``; block-scaled ``tcgen05.mma`` has one scale
per 32 K elements (``mxf8f6f4``, ``mxf4``) or 16 (``mxf4nvf4``). The CuTe forms of the copy atom and of the scale
factors' storage order follow CuTe (``cute/atom/copy_traits_sm100.hpp``, the DSL's ``BlockScaledBasicChunk``).
"""

from ..errors import LayoutError
from ..cute.layout import Layout
from ..cute.algebra import tile_to_shape

__all__ = ["TMEM_LANES", "TMEM_COLUMNS", "tmem_alloc_columns", "accumulator_columns", "tmem_ld_32x32b_tv",
           "tmem_ld_32x32b_atom", "block_scale_layout", "block_scale_chunk", "block_scale_storage", "DSL_SETUP_SM100"]

TMEM_LANES, TMEM_COLUMNS = 128, 512

# Setup for :func:`layoutlab.dsl.dsl_eval`/``dsl_check``: the DSL builds tcgen05 atoms only when it targets the
# sm_100 family, so the comparison process targets sm_100a (trace time only: no GPU is needed, none is used).
DSL_SETUP_SM100 = """
from cutlass.cutlass_dsl import CuTeDSL
CuTeDSL._get_dsl().envar.arch = "sm_100a"
from cutlass.cute.nvgpu import tcgen05, OperandMajorMode
from cutlass.utils import BlockScaledBasicChunk
import cutlass.utils.blockscaled_layout as blockscaled
"""


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


def tmem_ld_32x32b_atom(n: int) -> tuple[Layout, Layout, Layout]:
    """CuTe's copy atom of one warp's ``tcgen05.ld.32x32b.x<n>`` on 32-bit values: ``(ThrID, TV src, TV dst)``.

    The reference is the warp's ``32 x n`` slab numbered lane by lane (CuTe's ``ValID``: a lane's columns are
    consecutive, the next lane follows). Every thread passes the same tensor-memory address, so the source TV
    layout ignores the thread (stride 0 over all ``32 n`` values); thread ``t`` receives lane ``t``, register
    ``j`` column ``j``, i.e. value ``n t + j`` of the slab.

    >>> tmem_ld_32x32b_atom(64)
    (32:1, (32,2048):(0,1), (32,64):(64,1))
    """
    tmem_ld_32x32b_tv(n)                                 # the same .x1 ... .x128 check and message
    lanes = TMEM_LANES // 4                              # a warp reaches its own quarter of the lanes
    slab = Layout((lanes, n), (n, 1))                    # (lane, column) -> value of the lane-major slab
    return Layout(lanes, 1), Layout((lanes, lanes * n), (0, 1)), slab


def block_scale_layout(rows: int, k: int, vec: int) -> Layout:
    """Element ``(r, c)`` of a ``rows x k`` operand -> the *logical* index of its scale factor (``rows x k / vec`` of
    them, numbered row-major): a CuTe layout with a stride-0 mode of size ``vec`` (every element of a block shares
    one). Which scale, not where it is stored: the hardware's order is :func:`block_scale_chunk`.

    >>> block_scale_layout(4, 64, 32)
    (4,(32,2)):(2,(0,1))
    """
    _check_vec("block_scale_layout", vec)
    if not isinstance(k, int) or k <= 0 or k % vec:
        raise LayoutError(f"block_scale_layout: k={k!r} is not a positive multiple of the block size {vec}")
    if not isinstance(rows, int) or rows <= 0:
        raise LayoutError(f"block_scale_layout: rows={rows!r} must be a positive integer")
    return Layout((rows, (vec, k // vec)), (k // vec, (0, 1)))


SF_CHUNK_ROWS, SF_PER_WORD = 128, 4      # one storage chunk: 128 rows x 4 scales (one 32-bit word per row)


def block_scale_chunk(vec: int, major: str = "K") -> Layout:
    """Where the scale factor of element ``(m, k)`` of a ``128 x 4 vec`` block is *stored* (byte offset, one byte
    per scale): the 512-byte chunk that block-scaled ``tcgen05.mma`` expects in shared memory, before
    ``tcgen05.cp`` moves it into tensor memory. Row ``m``'s four scales are one 32-bit word, at byte
    ``16 (m mod 32) + 4 (m div 32)``: the rows 32 apart share a 16-byte line. ``major="MN"`` gives the same
    chunk indexed ``(k, m)``. This is CuTe DSL 4.8.1's ``BlockScaledBasicChunk`` (``cutlass.utils``); the PTX ISA 9.0
    draws it in §9.7.16 ("Scale factor A/B layout" of ``tcgen05.mma``).

    >>> block_scale_chunk(16)
    ((32,4),(16,4)):((16,4),(0,1))
    """
    _check_vec("block_scale_chunk", vec)
    line = SF_PER_WORD * SF_PER_WORD                     # 16 bytes: one word for each of rows m, m+32, m+64, m+96
    mn, kk = ((32, SF_CHUNK_ROWS // 32), (line, SF_PER_WORD)), ((vec, SF_PER_WORD), (0, 1))
    if major == "K":
        return Layout((mn[0], kk[0]), (mn[1], kk[1]))
    if major == "MN":
        return Layout((kk[0], mn[0]), (kk[1], mn[1]))
    raise LayoutError(f"block_scale_chunk: major={major!r}; give 'K' (index (m, k)) or 'MN' (index (k, m))")


def block_scale_storage(rows: int, k: int, vec: int) -> Layout:
    """The stored order of all the scale factors of a ``rows x k`` K-major operand: 512-byte chunks
    (:func:`block_scale_chunk`), consecutive along K first, then along the rows (``tile_to_shape`` with order
    ``(2, 1)``, as the DSL's ``tile_atom_to_shape_SF`` and ``make_smem_layout_sf`` build it).

    >>> block_scale_storage(256, 128, 16)
    (((32,4),2),((16,4),2)):(((16,4),1024),((0,1),512))
    """
    _check_vec("block_scale_storage", vec)
    if not isinstance(rows, int) or rows <= 0 or rows % SF_CHUNK_ROWS:
        raise LayoutError(f"block_scale_storage: rows={rows!r}; scale factors are stored in chunks of "
                          f"{SF_CHUNK_ROWS} rows: pad the operand to a multiple of {SF_CHUNK_ROWS} rows")
    if not isinstance(k, int) or k <= 0 or k % (SF_PER_WORD * vec):
        raise LayoutError(f"block_scale_storage: k={k!r}; a chunk covers {SF_PER_WORD} blocks of {vec} along K: "
                          f"pad K to a multiple of {SF_PER_WORD * vec}")
    return tile_to_shape(block_scale_chunk(vec), (rows, k), (2, 1))


def _check_vec(name, vec):
    if vec not in (16, 32):
        raise LayoutError(f"{name}: vec={vec!r}; block-scaled MMA uses one scale per 32 elements "
                          f"(mxf8f6f4, mxf4: UE8M0 scales) or per 16 (mxf4nvf4: UE4M3 scales)")
