"""Which ``ldmatrix`` feeds an MMA operand from shared memory: x1/x2/x4 and ``.trans``, with the reasons (checked
against the CuTe DSL and on an H100). The rule is :func:`select_ldmatrix`'s. SM80 16x8x16 with CUTLASS's Ampere
value layout (1,2,1), A row-major::

    >>> from layoutlab import nvgpu, make_layout, make_tiled_mma
    >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f16", (16, 8, 16)), (1, 1, 1), (16, 16, 16))
    >>> choice = select_ldmatrix(tm, "A", make_layout((16, 16), stride=(16, 1)))
    >>> choice.name
    'SM75_U32x4_LDSM_N'
    >>> atom, why = choice                      # unpacks as (copy atom, reasoning text)
"""

from dataclasses import dataclass

from .warp import LdMatrix8x8x16bOp, MmaF16BF16Op, MmaFP8Op, StMatrix8x8x16bOp
from .warpgroup import WarpgroupMmaF8Op, WarpgroupMmaF16BF16Op
from ..cute.atom import dtype_bits, make_copy_atom
from ..errors import LayoutError
from ..cute.inttuple import is_tuple, zip_leaves
from ..cute.layout import Layout
from ..cute.swizzle import ComposedLayout
from ..cute.tiled import TiledMMA, make_tiled_copy_A, make_tiled_copy_B

__all__ = ["select_ldmatrix", "LdmatrixSelection", "operand_majorness", "ldmatrix_address_lane", "ldmatrix_owner"]


@dataclass(frozen=True)
class LdmatrixSelection:
    """The chosen copy atom, the tiled copy feeding the MMA with it, and why (``reasoning``); unpacks as (atom,
    reasoning). ``name``: CuTe's (``SM75_U32x4_LDSM_N``); ``op``: ``LdMatrix8x8x16bOp(transpose, num_matrices)``.

    >>> from layoutlab import nvgpu, make_layout, make_tiled_mma
    >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f16", (16, 8, 8)))
    >>> sel = select_ldmatrix(tm, "A", make_layout((16, 8), stride=(8, 1)))       # row-major A: K contiguous
    >>> sel.name, sel.num_matrices, sel.transpose
    ('SM75_U32x2_LDSM_N', 2, False)
    """

    atom: object
    tiled_copy: object
    op: LdMatrix8x8x16bOp
    reasoning: str

    @property
    def name(self):
        return self.atom.name

    @property
    def num_matrices(self):
        return self.op.num_matrices

    @property
    def transpose(self):
        return self.op.transpose

    def __iter__(self):
        return iter((self.atom, self.reasoning))

    def __str__(self):
        return f"{self.name}\n{self.reasoning}"


def _contiguous_run(layout, mode, with_leaves=False):
    """How many elements of top-level mode ``mode`` are contiguous from its stride-1 leaf on (merging the
    leaves that continue it, size-1 leaves skipped); 0 if it has none. ``with_leaves``: also the (shape, stride)
    leaves of the whole layout outside that run."""
    leaves = [(s, d) for s, d in zip_leaves(layout.shape[mode], layout.stride[mode]) if s != 1]
    k = next((k for k, (_, d) in enumerate(leaves) if d == 1), None)
    run, end = (0, 0) if k is None else (1, k)
    for s, d in leaves[k:] if k is not None else ():
        if d != run:
            break
        run, end = run * s, end + 1
    if not with_leaves:
        return run
    others = [(s, d) for m in range(len(layout.shape)) if m != mode
              for s, d in zip_leaves(layout.shape[m], layout.stride[m]) if s != 1]
    return run, leaves[:k or 0] + leaves[end:] + others


def _check_row_alignment(smem_layout, major, operand, bits, op):
    """PTX ISA §9.7.14.5.15 (ldmatrix): "a group of four consecutive threads loads 16 bytes. The matrix addresses
    must be naturally aligned accordingly" -- every row address 16-byte aligned. A row is 8 elements of the
    contiguous run, so its start is a multiple of 8 elements iff the layout's offset and every stride outside
    the run are (a swizzle with base M >= 3 keeps offsets mod 8). Assumes the buffer itself starts 16-byte aligned."""
    offset = smem_layout.offset if isinstance(smem_layout, ComposedLayout) else 0
    layout = smem_layout.outer if isinstance(smem_layout, ComposedLayout) else smem_layout
    row = 128 // bits                                  # elements in a 16-byte row
    run, others = _contiguous_run(layout, 1 if major == "K" else 0, with_leaves=True)
    if run % row:
        raise LayoutError(f"{op}: the contiguous run of {layout} along {major} is {run} elements; ldmatrix reads "
                          f"rows of {row} contiguous {bits}-bit elements (16 bytes), so the run must be a multiple "
                          f"of {row} or a row would leave it")
    bad = [d for _, d in others if d % row]
    if offset % row:
        what, fix = f"{smem_layout} starts at element offset {offset}", f"an offset that is a multiple of {row}"
    elif bad:
        what = f"{layout} has a stride of {bad[0]} elements ({bad[0] * bits // 8} bytes) between ldmatrix rows"
        fix = (f"a stride that is a multiple of {row} elements (e.g. {-(-bad[0] // row) * row} instead of {bad[0]}: "
               f"pad by whole 16-byte chunks, or drop the padding and use a swizzle against bank conflicts)")
    else:
        return
    raise LayoutError(f"{op}: {what}, so some row addresses are not 16-byte aligned; ldmatrix needs every row "
                      f"address 16-byte aligned (PTX ISA §9.7.14.5.15: \"the matrix addresses must be naturally "
                      f"aligned\"), i.e. a multiple of {row} {bits}-bit elements from a 16-byte aligned buffer. "
                      f"Valid: {fix}")


def operand_majorness(smem_layout, operand="A"):
    """``("K" | "MN", contiguous run, explanation)`` for an (M or N, K) operand tile in smem: a :class:`Layout` or a
    swizzled ``ComposedLayout`` (looked through: it keeps 2^M-element chunks whole). K-major: K has stride 1.

    >>> operand_majorness(Layout((16, 16), (1, 16)))[0]      # column-major A: M contiguous
    'MN'
    """
    op, mn = "select_ldmatrix", "M" if operand == "A" else "N"
    what, note, layout = f"({mn},K)", "", smem_layout
    if isinstance(smem_layout, ComposedLayout):
        inner = smem_layout.inner
        if isinstance(inner, Layout):
            raise LayoutError(f"{op}: {smem_layout} composes with a Layout, not a swizzle; its majorness can't be "
                              f"read from the outer layout -- pass the plain {what} layout")
        base = inner.num_base
        if inner.num_bits and base < 3:
            raise LayoutError(f"{op}: swizzle {inner} keeps only 2^{base}-element chunks together; ldmatrix reads "
                              f"8 contiguous 16-bit elements per row, so it needs a swizzle base M >= 3")
        note = f"looking through the swizzle {inner} (it moves whole 2^{base}-element chunks), "
        layout = smem_layout.outer
    if not isinstance(layout, Layout):
        raise LayoutError(f"{op}: smem_layout must be a Layout or a ComposedLayout over the operand's {what} "
                          f"tile, got {type(smem_layout).__name__}")
    if layout.rank() < 2 or not is_tuple(layout.shape):
        raise LayoutError(f"{op}: smem_layout {layout} must have two modes {what}")
    runs = {"MN": _contiguous_run(layout, 0), "K": _contiguous_run(layout, 1)}
    found = [k for k, r in runs.items() if r]
    if len(found) != 1:
        raise LayoutError(f"{op}: can't tell whether {layout} is K-major or MN-major: "
                          + ("no mode has stride 1" if not found else "both modes have a stride-1 leaf")
                          + f"; ldmatrix needs rows of 8 contiguous 16-bit elements along K or along {mn}")
    major = found[0]
    run = runs[major]
    mode = "K (mode 1)" if major == "K" else f"{mn} (mode 0)"
    return major, run, f"{note}the stride-1 mode of {layout} is {mode}, {run} contiguous elements"


def select_ldmatrix(tiled_mma, operand, smem_layout, num_matrices=None) -> LdmatrixSelection:
    """The ``ldmatrix`` copy atom for operand ``"A"`` or ``"B"`` of ``tiled_mma`` read from ``smem_layout``.
    A thread holds ``v = size(mode 1 of tv_layout_X_tiled)`` 16-bit values, two per 8x8 matrix: x = the widest of
    4, 2, 1 dividing ``v / 2`` (or ``num_matrices``, dividing it; wider is CuTe's "TiledCopy uses too few vals");
    ``.trans`` iff the operand is MN-major (a lane gets neighbours along its 16-byte row, the MMA wants them along
    K). Refused: not A/B, not a 16-bit warp MMA, unreadable majorness, rows not 16-byte aligned (PTX ISA
    §9.7.14.5.15: every row address must be), ``num_matrices`` wider than the fragment.

    >>> from layoutlab import nvgpu, make_layout, make_tiled_mma
    >>> tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f16", (16, 8, 8)))
    >>> select_ldmatrix(tm, "B", make_layout((8, 8), stride=(1, 8))).name     # B (N,K) with N contiguous
    'SM75_U16x2_LDSM_T'
    """
    op = "select_ldmatrix"
    if not isinstance(tiled_mma, TiledMMA):
        raise LayoutError(f"{op}: expected a TiledMMA (make_tiled_mma(...)), got {type(tiled_mma).__name__}")
    if operand not in ("A", "B"):
        raise LayoutError(f"{op}: operand {operand!r} must be 'A' or 'B'; ldmatrix loads MMA inputs (the "
                          f"accumulator C is stored with stmatrix / StMatrix8x8x16bOp)")
    atom = tiled_mma.atom
    if not isinstance(atom.op, MmaF16BF16Op):
        if isinstance(atom.op, (WarpgroupMmaF16BF16Op, WarpgroupMmaF8Op)):
            raise LayoutError(f"{op}: {atom.name} is a warpgroup MMA; its operands are read from shared memory "
                              f"through matrix descriptors (or A from registers loaded per warp), not through "
                              f"a TiledCopy over the whole MMA -- ldmatrix selection applies to SM80 mma.sync")
        ab = atom.op.ab_dtype if isinstance(atom.op, MmaFP8Op) else "tf32"
        raise LayoutError(f"{op}: {atom.name} takes {ab} operands; ldmatrix "
                          f"moves 16-bit elements (f16/bf16 mma.sync atoms only)")
    bits = dtype_bits(atom.op.ab_dtype)
    tv = tiled_mma.tv_layout_A_tiled if operand == "A" else tiled_mma.tv_layout_B_tiled
    vals, i = tv[1].size(), 0 if operand == "A" else 1
    tile_mn, tile_k = tiled_mma.get_tile_size(i), tiled_mma.get_tile_size(2)
    atom_mn, atom_k = atom.shape_mnk[i], atom.shape_mnk[2]
    warps = tiled_mma.thr_layout_vmnk[i + 1].size() * tiled_mma.thr_layout_vmnk[3].size()
    lines = [
        f"operand {operand} of {atom.name}: the tiled MMA's {operand} tile is {tile_mn}x{tile_k} "
        f"({'MN'[i]} x K), atom {atom_mn}x{atom_k} repeated {tile_mn * tile_k // (atom_mn * atom_k * warps)}x "
        f"in values per warp ({warps} warp(s) split it: {tile_mn * tile_k // warps} elements each)",
        f"each thread holds {vals} {bits}-bit values of it (size of mode 1 of {tv}), i.e. one warp's fragment "
        f"covers {vals * 32} elements = {vals // 2} 8x8 matrices (ldmatrix gives a lane 2 values per matrix)",
    ]
    if vals % 2:
        raise LayoutError(f"{op}: a thread holds {vals} values of {operand}; ldmatrix hands out values in pairs")
    n_mat = vals // 2
    if num_matrices is not None and num_matrices not in (1, 2, 4):
        raise LayoutError(f"{op}: num_matrices {num_matrices!r} must be 1, 2 or 4")
    chosen = num_matrices or next(x for x in (4, 2, 1) if n_mat % x == 0)
    lines.append(f"-> x{chosen} as requested" if num_matrices else f"-> x{chosen}: the widest of x4/x2/x1 dividing "
                 f"{n_mat}" + (f" ({n_mat // chosen} ldmatrix per k-block)" if n_mat > chosen else ""))
    major, run, why = operand_majorness(smem_layout, operand)
    if run < 8:
        raise LayoutError(f"{op}: {why}; ldmatrix reads rows of 8 contiguous 16-bit elements (16 bytes), "
                          f"so the contiguous run must be at least 8")
    _check_row_alignment(smem_layout, major, operand, bits, op)
    trans = major == "MN"
    lines.append(f"shared memory: {why} -> {major}-major"
                 + (" (rows run along M/N, so .trans turns each 8x8 matrix to give K-pairs)" if trans
                    else " (rows run along K: the K-pairs the MMA wants come out as they are, no .trans)"))
    ld_op = LdMatrix8x8x16bOp(trans, chosen)
    copy_atom = make_copy_atom(ld_op, atom.op.ab_dtype)
    make = make_tiled_copy_A if operand == "A" else make_tiled_copy_B
    tiled_copy = make(copy_atom, tiled_mma)  # raises CuTe's "too few vals" when the atom is too wide
    lines.append(f"=> {copy_atom.name} = LdMatrix8x8x16bOp(transpose={trans}, num_matrices={chosen})")
    return LdmatrixSelection(copy_atom, tiled_copy, ld_op, "\n".join(lines))


# ---- one instruction: which lane names which row, which (lane, register) holds which element -------------------

def _matrix_op(op, fn):
    if not isinstance(op, (LdMatrix8x8x16bOp, StMatrix8x8x16bOp)):
        raise LayoutError(f"{fn}: expected LdMatrix8x8x16bOp(transpose, num_matrices) or StMatrix8x8x16bOp, "
                          f"got {type(op).__name__}")
    atom = make_copy_atom(op, "f16")
    if isinstance(op, LdMatrix8x8x16bOp):
        return atom.layout_src_tv, atom.layout_dst_tv
    return atom.layout_dst_tv, atom.layout_src_tv


def _check_element(op, matrix, row, col, fn):
    for name, x, hi in (("matrix", matrix, op.num_matrices), ("row", row, 8), ("col", col, 8)):
        if not isinstance(x, int) or not 0 <= x < hi:
            raise LayoutError(f"{fn}: {name} {x!r} is outside 0..{hi - 1} (x{op.num_matrices}: "
                              f"{op.num_matrices} matrices of 8x8 16-bit elements)")


def ldmatrix_address_lane(op, matrix, row):
    """The lane whose address names row ``row`` of matrix ``matrix`` (PTX ISA, ldmatrix/stmatrix: lanes 0-7 give
    matrix 0's rows, 8-15 matrix 1's, ...; .x1/.x2 ignore the rest), from the atom's address-side TV layout.

    >>> ldmatrix_address_lane(LdMatrix8x8x16bOp(False, 4), 2, 5)
    21
    """
    fn = "ldmatrix_address_lane"
    addr, _ = _matrix_op(op, fn)
    _check_element(op, matrix, row, 0, fn)
    return min(t for t in range(32) if addr(t, 0) == 8 * (8 * matrix + row))


def ldmatrix_owner(op, matrix, row, col):
    """``(lane, value)`` holding element ``(row, col)`` of matrix ``matrix`` (register ``d{value // 2}``, half
    ``value % 2``): lane ``4*row + col//2``, or ``4*col + row//2`` with ``.trans`` (each matrix transposed).

    >>> ldmatrix_owner(LdMatrix8x8x16bOp(False, 2), 1, 3, 5), ldmatrix_owner(LdMatrix8x8x16bOp(True, 2), 1, 3, 5)
    ((14, 3), (21, 3))
    """
    fn = "ldmatrix_owner"
    _, regs = _matrix_op(op, fn)
    _check_element(op, matrix, row, col, fn)
    e = 64 * matrix + 8 * row + col
    n_val = regs[1].size()
    return next((t, v) for t in range(32) for v in range(n_val) if regs(t, v) == e)
