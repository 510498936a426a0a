"""Pictures of shared memory: swizzles and banks, ldmatrix, the TMA box, the GMMA descriptor and canonical layouts
(SVG, pure Python)."""

import numbers

from ..errors import LayoutError
from ..cute.inttuple import product
from ..cute.swizzle import ComposedLayout, Swizzle
from .figure import (BANK_HEX, CONFLICT, EMPTY, GREY, TV_HEX, _BANKS, _BANK_BYTES, _as_layout, _modes, _offsets,
                     choose_cell, draw_key, grid_margins, key_size, new_figure, paint_grid)
from .svg import MAX_WIDTH, TICK_TEXT

__all__ = [
    "draw_swizzle", "draw_bank_map", "draw_ldmatrix", "draw_tma_box", "draw_gmma_descriptor",
    "draw_gmma_canonical",
]


def _bank_of(offset, element_bytes):
    return (offset * element_bytes // _BANK_BYTES) % _BANKS


def _smem_offsets(layout, element_bytes, op):
    """Physical element offsets of ``layout`` placed in shared memory.

    A swizzled ComposedLayout's swizzle acts on *byte* addresses there (the DSL applies it to the smem
    pointer; the GMMA atoms' ``S<3,4,3>`` is the 128-byte pattern for every element size), so the offsets are
    ``swizzle((offset + outer(i)) * element_bytes) / element_bytes`` — not the swizzle of the element offset.
    """
    layout = _as_layout(layout, op)
    if not (isinstance(layout, ComposedLayout) and isinstance(layout.inner, Swizzle)):
        return _offsets(layout, op)
    return [layout.inner((o + int(layout.offset)) * element_bytes) // element_bytes
            for o in _offsets(layout.outer, op)]


def _swizzle_tile(swizzle_or_composed, shape, op, element_bytes):
    """(rows, cols, physical element offsets as rows of lists) for a bare swizzle (acting on the element offsets
    of a row-major tile) or a layout (a swizzled ComposedLayout acts on byte addresses, see _smem_offsets)."""
    if isinstance(swizzle_or_composed, Swizzle):
        sw = swizzle_or_composed
        if shape is None:
            rows, cols = max(1 << sw.num_bits, 1), 1 << (sw.num_base + max(sw.num_shift, 0))
        else:
            rows, cols = shape
        if rows * cols > 1 << 15:
            raise LayoutError(f"{op}: the tile {rows}x{cols} is too large to draw (at most 32768 cells); "
                              f"pass a smaller shape=(rows, cols)")
        return rows, cols, [[sw(r * cols + c) for c in range(cols)] for r in range(rows)]
    layout = _as_layout(swizzle_or_composed, op)
    modes = _modes(layout, op)
    if len(modes) != 2:
        raise LayoutError(f"{op}: {layout} has rank {len(modes)}; draw a rank-2 (rows, cols) tile")
    rows, cols = product(modes[0]), product(modes[1])
    flat = _smem_offsets(layout, element_bytes, op)
    return rows, cols, [[flat[r + rows * c] for c in range(cols)] for r in range(rows)]


def _check_element_bytes(element_bytes, op):
    if element_bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"{op}: element_bytes={element_bytes!r}; use 1, 2, 4, 8 or 16")


_BANK_KEY = "colour of a logical cell = its bank, (address / 4) mod 32 (label: the bank, where it fits)"


def draw_swizzle(swizzle_or_composed, element_bytes=2, *, shape=None, labels=None, title=None,
                 label_limit=512):
    """A swizzled shared-memory tile: where each logical element lives, and which bank it hits.

    On top, the logical tile (rows m, columns n): cell (m, n) coloured (and labelled, where it fits) by the bank
    of its physical address, ``bank = (offset * element_bytes // 4) % 32`` (the key lists the 32 bank colours).
    Below, the physical memory in rows of 128 bytes (one row = all 32 banks; the bank is written above): each
    slot shows the logical ``m,n`` stored there, coloured by the logical 16-byte chunk of its row
    (``TV_COLORS[(n * element_bytes // 16) % 8]``), so the swizzle's permutation of chunks is visible.

    A bare Swizzle<B,M,S> acts on a row-major tile of ``2^B`` rows of ``2^(M+S)`` elements (one period of the
    pattern) unless ``shape=(rows, cols)`` is given; it maps offset o to
    ``o ^ ((o >> S) & ((2^B - 1) << M))``. A composed (swizzled) layout is drawn on its own (M, N) tile.

    Example: Swizzle<3,3,3> on 2-byte elements: logical (1, 0) sits at offset 64 ^ 8 = 72, in bank 4.

    >>> fig = draw_swizzle(Swizzle(3, 4, 3), element_bytes=2)
    >>> fig.get_suptitle(), [p.name for p in fig.panels]
    ('S<3,4,3>, 2-byte elements', ['logical tile (m, n)', 'physical: 128-byte rows'])
    """
    op = "draw_swizzle"
    _check_element_bytes(element_bytes, op)
    rows, cols, phys = _swizzle_tile(swizzle_or_composed, shape, op, element_bytes)
    banks = [[_bank_of(o, element_bytes) for o in row] for row in phys]
    per_row = max(128 // element_bytes, 1)
    cosize = max(max(r) for r in phys) + 1
    prow = -(-cosize // per_row)
    slot = [[None] * per_row for _ in range(prow)]
    for m in range(rows):
        for n in range(cols):
            o = phys[m][n]
            slot[o // per_row][o % per_row] = (m, n)
    want = labels if labels is not None else (None if max(rows * cols, prow * per_row) <= label_limit else False)
    chars = max(len(f"{rows - 1},{cols - 1}"), 2)
    cell, size = choose_cell(rows + prow, max(cols, per_row), chars, 1, want, max_w=MAX_WIDTH - 80)
    left, top = grid_margins(max(rows, prow), "m", "x")
    content_w = left + max(cols, per_row) * cell + 16
    key = [(BANK_HEX[b], str(b)) for b in range(_BANKS)]
    chunks = sorted({(n * element_bytes // 16) % 8 for n in range(cols)})
    key2 = [(TV_HEX[k], f"n*{element_bytes} // 16 mod 8 = {k}") for k in chunks] + [(EMPTY, "unused")]
    width, kh = key_size(key, content_w, _BANK_KEY)
    width, kh2 = key_size(key2, width, "physical slot colour = the logical 16-byte chunk of its element")
    name = f"{title if title is not None else swizzle_or_composed}, {element_bytes}-byte elements"
    fig, y0 = new_figure(width, 2 * top + rows * cell + prow * cell + 20 + kh + kh2, name,
                         f"{name}: the logical {rows} x {cols} tile coloured by bank, and the physical 128-byte rows "
                         f"showing which logical element each slot holds")
    x0 = (fig.width - content_w) / 2 + left
    y = y0 + top
    paint_grid(fig, x0, y, cell, [[BANK_HEX[b] for b in row] for row in banks],
               [[str(b) for b in row] for row in banks] if size else None, label_size=size or 10,
               name="logical tile (m, n)", row_name="m", col_name="logical tile (m, n): colour = bank")
    y += rows * cell + 4
    draw_key(fig, 8, y, fig.width - 16, key, _BANK_KEY)
    y += kh + top
    colors = [[TV_HEX[(s[1] * element_bytes // 16) % 8] if s else EMPTY for s in row] for row in slot]
    text = [[f"{s[0]},{s[1]}" if s else "" for s in row] for row in slot] if size else None
    step = max(4 // element_bytes, 1)
    while step * cell < 16:
        step *= 2
    paint_grid(fig, x0, y, cell, colors, text, label_size=size or 10, name="physical: 128-byte rows",
               row_name="row", col_name="physical: 128-byte rows, bank above",
               col_ticks=[(j, str(j * element_bytes // _BANK_BYTES)) for j in range(0, per_row, step)])
    draw_key(fig, 8, y + prow * cell + 4, fig.width - 16, key2,
             "physical slot colour = the logical 16-byte chunk of its element")
    return fig


def draw_bank_map(layout, element_bytes, accesses, *, access_bytes=None, shape=None, title=None):
    """Which bank each thread of one warp-wide shared-memory access hits, with conflicts marked.

    ``layout`` gives the physical offset (in elements) of each logical (m, n) of the tile (a Layout, a
    swizzled layout, or a bare Swizzle on its default tile or ``shape`` as in :func:`draw_swizzle`); ``accesses[t]`` is
    the (m, n) where thread t starts reading ``access_bytes`` (default ``element_bytes``). One panel per
    phase (threads served together: 32, or 16 / 8 for 8- / 16-byte accesses): columns are the 32 banks, rows the
    128-byte memory lines touched, each 4-byte word labelled with the (first) thread reading it, bold when
    several threads read it. A bank asked for more than one word in a phase is framed red, with its ``k``
    (k-way) under the column. The counts come from :func:`layoutlab.nvgpu.banks.bank_conflicts`.

    Example: 8 threads of an ldmatrix phase reading rows 0..7, column 0 of a 2-byte row-major 8x64 tile
    (16 bytes each): every row starts at bank 0 -> one 8-way conflict; under Swizzle<3,3,3> it is 1 way.

    >>> from layoutlab import Layout
    >>> column = [(r, 0) for r in range(8)]       # 8 threads read 16 B down a column of a row-major tile
    >>> draw_bank_map(Layout((8, 64), (64, 1)), 2, column, access_bytes=16).get_suptitle()
    '8 threads x 16 B: 8 wavefront(s), ideal 1 -> 8-way conflict'
    """
    op = "draw_bank_map"
    _check_element_bytes(element_bytes, op)
    access_bytes = element_bytes if access_bytes is None else int(access_bytes)
    if access_bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"{op}: access_bytes={access_bytes!r}; use 1, 2, 4, 8 or 16")
    rows, cols, phys = _swizzle_tile(layout, shape, op, element_bytes)
    def _coordinate(a):
        return isinstance(a, (list, tuple)) and len(a) == 2 and all(
            isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in a)
    if not isinstance(accesses, (list, tuple)) or not all(map(_coordinate, accesses)):
        raise LayoutError(f"{op}: accesses must be a list of (m, n) int coordinates, one per thread, got "
                          f"{str(accesses)[:60]}")
    coords = [tuple(int(x) for x in a) for a in accesses]
    if not coords or len(coords) > 32:
        raise LayoutError(f"{op}: {len(coords)} accesses given; a warp issues 1 to 32 (one per thread)")
    for t, (m, n) in enumerate(coords):
        if not (0 <= m < rows and 0 <= n < cols):
            raise LayoutError(f"{op}: thread {t} accesses (m,n)=({m},{n}) outside the {rows}x{cols} tile")
    from ..nvgpu.banks import bank_conflicts
    addrs = [phys[m][n] * element_bytes for m, n in coords]
    result = bank_conflicts(addrs, access_bytes)
    waves, ideal, worst = result.wavefronts, result.ideal_wavefronts, result.conflict_degree
    width_b = max(access_bytes, _BANK_BYTES)
    per_phase = max(128 // width_b, 1)  # the phase size of banks.bank_conflicts: 32, 16 (8 B), 8 (16 B)
    nwords = width_b // _BANK_BYTES
    phases = [list(range(s, min(s + per_phase, len(coords)))) for s in range(0, len(coords), per_phase)]
    panels = []
    for threads in phases:
        owners = {}
        for t in threads:
            for w in range(nwords):
                owners.setdefault(addrs[t] // _BANK_BYTES + w, []).append(t)
        panels.append((threads, owners, sorted({w // _BANKS for w in owners})))
    nrows = sum(len(p[2]) for p in panels)
    cell = 19.0
    left, top = grid_margins(max(max(p[2]) for p in panels) + 1, "line", "x")
    content_w = left + _BANKS * cell + 16
    used = sorted({t % 8 for t in range(len(coords))})
    key = [(TV_HEX[k], f"t mod 8 = {k}") for k in used] + [(("outline", CONFLICT), "k-way conflict: k > 1 words of a bank")]
    key_title = ("cell = a 4-byte word: the thread reading it (bold: several threads), colour = thread mod 8; "
                 "a red number under a bank = k words asked of it in one phase (k-way)")
    width, kh = key_size(key, content_w, key_title)
    head = title if title is not None else f"{len(coords)} threads x {access_bytes} B"
    verdict = "conflict-free" if waves == ideal else f"{worst}-way conflict"
    name = f"{head}: {waves} wavefront(s), ideal {ideal} -> {verdict}"
    per_panel = 22 + top + 18
    fig, y0 = new_figure(width, len(panels) * per_panel + nrows * cell + kh + 4, name,
                         f"{name}. One grid per phase: columns are the 32 banks, rows the 128-byte lines touched.")
    x0 = (fig.width - content_w) / 2 + left
    y = y0
    for index, (threads, owners, lines) in enumerate(panels):
        colors = [[EMPTY] * _BANKS for _ in lines]
        text = [[""] * _BANKS for _ in lines]
        bold = [[False] * _BANKS for _ in lines]
        per_bank = [0] * _BANKS
        for word, ts in owners.items():
            r, b = lines.index(word // _BANKS), word % _BANKS
            colors[r][b], text[r][b], bold[r][b] = TV_HEX[ts[0] % 8], str(ts[0]), len(ts) > 1
            per_bank[b] += 1
        fig.text(x0 - left + 4, y + 11, f"phase {index}: threads {threads[0]}..{threads[-1]}, "
                 f"{max(per_bank)} wavefront(s)", TICK_TEXT, anchor="start")
        y += 22 + top
        panel = paint_grid(fig, x0, y, cell, colors, text, label_size=10, bold=bold, name=f"phase {index}",
                   row_name="line", col_name="bank",
                   row_ticks=[(r, str(line)) for r, line in enumerate(lines)],
                   col_ticks=[(b, str(b)) for b in range(0, _BANKS, 2)])
        segs = []
        for b in range(_BANKS):
            if per_bank[b] > 1:
                for r, line in enumerate(lines):
                    if line * _BANKS + b in owners:
                        sx, sy = x0 + b * cell, y + r * cell
                        segs += [((sx, sy), (sx + cell, sy)), ((sx + cell, sy), (sx + cell, sy + cell)),
                                 ((sx + cell, sy + cell), (sx, sy + cell)), ((sx, sy + cell), (sx, sy))]
                fig.text(x0 + (b + 0.5) * cell, y + len(lines) * cell + 9, str(per_bank[b]), 12, fill=CONFLICT,
                         weight="bold")
        fig.lines(segs, CONFLICT, 2.5)
        panel.conflicts = {b: k for b, k in enumerate(per_bank) if k > 1}     # bank -> k (k-way)
        y += len(lines) * cell + 18
    draw_key(fig, 8, y, fig.width - 16, key, key_title)
    fig.bank_summary = {"wavefronts": waves, "ideal": ideal, "worst_ways": worst}
    return fig


def draw_ldmatrix(op, *, title=None):
    """One ``ldmatrix`` / ``stmatrix`` instruction as the PTX ISA draws it (sections "Warp-level matrix load
    instruction: ldmatrix" and "... store instruction: stmatrix"), computed from the atom's TV layouts.

    The grid is the instruction's 8x8 matrices as they sit in shared memory, stacked (matrix ``j`` = rows
    ``8j..8j+7``), each row 16 contiguous bytes. Left: the lane whose address names that row (color = lane).
    Right: which lane holds each element in which register -- ``T5`` lane 5, ``d1.0`` register ``d1``,
    low 16-bit half (color = the holding lane). With ``.trans`` each matrix arrives transposed: a lane's pair
    runs down a column.

    >>> from layoutlab.nvgpu.warp import LdMatrix8x8x16bOp
    >>> draw_ldmatrix(LdMatrix8x8x16bOp(False, 4)).get_suptitle()
    'ldmatrix.sync.aligned.m8n8.x4.shared.b16  (SM75_U32x4_LDSM_N)'
    """
    from ..nvgpu.warp import LdMatrix8x8x16bOp, StMatrix8x8x16bOp
    from ..nvgpu.ldmatrix import ldmatrix_address_lane, ldmatrix_owner

    fn = "draw_ldmatrix"
    if not isinstance(op, (LdMatrix8x8x16bOp, StMatrix8x8x16bOp)):
        raise LayoutError(f"{fn}: expected LdMatrix8x8x16bOp or StMatrix8x8x16bOp, got {type(op).__name__}")
    n = op.num_matrices
    rows, cols = 8 * n, 8
    addr_c, addr_l = [[None] * cols for _ in range(rows)], [[""] * cols for _ in range(rows)]
    reg_c, reg_l = [[None] * cols for _ in range(rows)], [[""] * cols for _ in range(rows)]
    for j in range(n):
        for r in range(8):
            lane = ldmatrix_address_lane(op, j, r)
            for c in range(8):
                addr_c[8 * j + r][c] = TV_HEX[lane % 8]
                addr_l[8 * j + r][c] = f"T{lane}" if c == 0 else ""
                t, v = ldmatrix_owner(op, j, r, c)
                reg_c[8 * j + r][c] = TV_HEX[t % 8]
                reg_l[8 * j + r][c] = f"T{t}\nd{v // 2}.{v % 2}"
    cell, size = choose_cell(rows, 2 * cols, 4, 2, True, max_w=MAX_WIDTH - 120, max_h=1400, preferred=38)
    left, top = grid_margins(rows, "row (8 per matrix)", "x")
    gap = 36
    content_w = left + 2 * cols * cell + gap + 16
    key = [(TV_HEX[k], f"lane mod 8 = {k}") for k in range(8)]
    key_title = ("Grid = the 8x8 matrices in shared memory (thick lines between matrices), one row = 16 bytes. "
                 "Left: the lane that supplies the row's address. Right: Tl = lane holding the element, dR.h = its "
                 "register dR (one per matrix), 16-bit half h.")
    width, kh = key_size(key, content_w, key_title)
    verb = "ldmatrix" if isinstance(op, LdMatrix8x8x16bOp) else "stmatrix"
    head = title if title is not None else (
        f"{verb}.sync.aligned.m8n8.x{n}{'.trans' if op.transpose else ''}.shared.b16  ({op.name})")
    fig, y0 = new_figure(width, top + rows * cell + 8 + kh, head,
                         f"{head}: which lane gives each row's address, and which lane and register receive each "
                         f"element of the {n} 8x8 matrices")
    x0 = (fig.width - content_w) / 2 + left
    for i, (colors, labels, nm) in enumerate(((addr_c, addr_l, "row address (lane)"),
                                             (reg_c, reg_l, "registers (lane, d.half)"))):
        x = x0 + i * (cols * cell + gap)
        paint_grid(fig, x, y0 + top, cell, colors, labels, label_size=size, name=nm, col_name=nm,
                   row_name="row (8 per matrix)" if i == 0 else "")
        fig.lines([((x, y0 + top + 8 * j * cell), (x + cols * cell, y0 + top + 8 * j * cell)) for j in range(1, n)],
                  "#000", 3)
    draw_key(fig, 8, y0 + top + rows * cell + 4, fig.width - 16, key, key_title)
    return fig


_OUTSIDE = "#a9a9a9"
_AROUND = "#f2f2f2"
_BEYOND = "#d9d9d9"


def draw_tma_box(tensor_map, box_start, *, smem_base=0, labels=None, title=None, label_limit=1024):
    """One TMA box: where it sits in the global tensor and where each of its 16-byte chunks lands in shared memory.

    Top: a window of the global tensor around the box (rows = TMA dimension 1 and up, flattened; columns =
    dimension 0, the contiguous one; tick labels are the global coordinates), the box framed, and the part of the
    box outside the tensor drawn dark grey. Below: the box's shared-memory bytes in rows of 128 bytes (or of the
    box's inner extent when that is shorter and there is no swizzle), one cell per 16-byte chunk, as
    ``layoutlab.nvgpu.tma.box_placement`` computes them: dense, dimension 0 innermost, through the tensor map's swizzle.
    Colour = the chunk's place within its global row (the key); label = its global row; grey = outside the
    tensor (the zero fill). A swizzle shows up as chunks changing places from one 128-byte row to the next
    (PTX ISA, "Tensors" / "Swizzling modes").

    >>> from layoutlab import encode_tiled
    >>> draw_tma_box(encode_tiled("f16", (64, 16), (128,), (64, 8), swizzle="128B"), (0, 4)).get_suptitle()
    'TMA box (64, 8) at (0, 4), f16, swizzle 128B: 1024 bytes'
    """
    from ..nvgpu.tma import TensorMap, box_placement
    if not isinstance(tensor_map, TensorMap):
        raise LayoutError(f"draw_tma_box: tensor_map must be a TensorMap, from encode_tiled(...), got "
                          f"{type(tensor_map).__name__}")
    tm = tensor_map
    esize = tm.element_bytes
    pl = box_placement(tm, box_start, smem_base)
    row_bytes = 128 if tm.swizzle != "none" else max(min(128, tm.smem_box[0] * esize), 1)
    chunk_b = min(16, row_bytes)
    chunk_e = max(chunk_b // esize, 1)
    per_row = max(row_bytes // chunk_b, 1)
    nchunks = -(-len(pl) // chunk_b)
    prow = -(-nchunks // per_row)
    dims = tm.global_dim

    def flat_row(g):
        r, scale = 0, 1
        for x, d in zip(g[1:], dims[1:]):
            r += x * scale
            scale *= d
        return r

    # the box's elements in the global tensor, inside or not (dimension i >= 1 steps by elementStrides[i])
    start = list(box_start)
    steps = (1,) + tuple(tm.element_strides[1:])
    box_cells = set()
    from itertools import product as cartesian
    for rc in cartesian(*(range(e) for e in reversed(tm.smem_box))):
        g = tuple(s + c * e for s, c, e in zip(start, reversed(rc), steps))
        box_cells.add((flat_row(g), g[0]))
    rows_g = product(dims[1:]) if tm.rank > 1 else 1
    bx0, bx1 = min(c for _, c in box_cells), max(c for _, c in box_cells)
    by0, by1 = min(r for r, _ in box_cells), max(r for r, _ in box_cells)
    cx0, cx1 = min(bx0, max(bx0 - 8, 0)), max(bx1, min(bx1 + 8, dims[0] - 1))
    ry0, ry1 = min(by0, max(by0 - 4, 0)), max(by1, min(by1 + 4, rows_g - 1))
    wrows, wcols = ry1 - ry0 + 1, cx1 - cx0 + 1

    def inside(r, c):
        return 0 <= c < dims[0] and 0 <= r < rows_g

    def gcolor(r, c):
        if (r, c) in box_cells:
            return TV_HEX[(c // chunk_e) % 8] if inside(r, c) else _OUTSIDE
        return _AROUND if inside(r, c) else _BEYOND

    gcolors = [[gcolor(r, c) for c in range(cx0, cx1 + 1)] for r in range(ry0, ry1 + 1)]
    # shared memory, one cell per chunk: colour = chunk within its global row, label = global row
    scolors = [[EMPTY] * per_row for _ in range(prow)]
    slabels = [[""] * per_row for _ in range(prow)]
    for k in range(nchunks):
        g = pl[k * chunk_b][0]
        r, c = divmod(k, per_row)
        if g is None:
            scolors[r][c] = _OUTSIDE
        else:
            scolors[r][c], slabels[r][c] = TV_HEX[(g[0] // chunk_e) % 8], str(flat_row(g))
    gcell = min(max(min((MAX_WIDTH - 90) / wcols, 420 / wrows), 3.0), 26)
    scell, ssize = choose_cell(prow, per_row, len(str(rows_g)), 1, labels if labels is not None else
                               (None if nchunks <= label_limit else False), max_w=MAX_WIDTH - 90, preferred=40)
    gl, gt = grid_margins(ry1 + 1, "dims 1..", "x")
    content_w = gl + max(wcols * gcell, per_row * scell) + 16
    nkey = min(8, -(-min(tm.smem_box[0], dims[0]) // chunk_e))
    key = [(TV_HEX[j], f"dim-0 elements {j * chunk_e}..{j * chunk_e + chunk_e - 1} (mod {8 * chunk_e})")
           for j in range(nkey)]
    key += [(_OUTSIDE, "box outside the tensor: zero fill"), (_BEYOND, "outside the tensor"),
            (_AROUND, "tensor around the box")]
    key_title = f"colour = the {chunk_b}-byte chunk's place in its global row; smem label = its global row"
    width, kh = key_size(key, content_w, key_title)
    name = title or (f"TMA box {tm.box_dim} at {tuple(box_start)}, {tm.data_type}, swizzle {tm.swizzle}: "
                     f"{tm.box_bytes} bytes")
    fig, y0 = new_figure(width, gt + wrows * gcell + 12 + gt + prow * scell + 8 + kh, name,
                         f"{name}. Top: the box in the global tensor. Below: its {chunk_b}-byte chunks in shared "
                         f"memory, labelled with their global row.")
    x0 = (fig.width - content_w) / 2 + gl
    y = y0 + gt
    tick = max(1, 1 << max(0, (int(36 / gcell)).bit_length()))
    paint_grid(fig, x0, y, gcell, gcolors, None, name="global tensor", row_name="dims 1..",
               col_name="global tensor: dim 0 ->", lines=gcell >= 6,
               col_ticks=[(c - cx0, str(c)) for c in range(cx0, cx1 + 1) if c % tick == 0],
               row_ticks=[(r - ry0, str(r)) for r in range(ry0, ry1 + 1) if r % max(1, int(14 / gcell) + 1) == 0])
    fig.rect(x0 + (bx0 - cx0) * gcell, y + (by0 - ry0) * gcell, (bx1 - bx0 + 1) * gcell, (by1 - by0 + 1) * gcell,
             "none", "#000", 2.5)
    y += wrows * gcell + 12 + gt
    paint_grid(fig, x0, y, scell, scolors, slabels if ssize else None, label_size=ssize or 10,
               name="shared memory", row_name="row",
               col_name=f"shared memory, swizzle {tm.swizzle}: {row_bytes}-byte rows of {chunk_b}-byte chunks")
    draw_key(fig, 8, y + prow * scell + 4, fig.width - 16, key, key_title)
    return fig


_GMMA_FIELD_COLORS = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5")


def draw_gmma_descriptor(desc, *, title=None):
    """The 64 bits of a wgmma shared-memory descriptor as labelled fields (the PTX ISA's table, redrawn).

    ``desc`` is a :class:`layoutlab.nvgpu.gmma.GmmaDescriptor` or a 64-bit int. Two rows of 32 bits (63..32 on
    top, 31..0 below), each field coloured and named with its value below (the key repeats them); reserved
    bits grey. Example: ``draw_gmma_descriptor(0x4000004000010000)`` (128B swizzle, SBO 64 = 1024 bytes).

    >>> draw_gmma_descriptor(0x4000004000010000).get_suptitle()
    'GmmaDescriptor 0x4000004000010000  (layout type B128)'
    """
    from ..nvgpu.gmma import GmmaDescriptor, decode_gmma_desc
    d = desc if isinstance(desc, GmmaDescriptor) else decode_gmma_desc(desc)
    x = d.desc
    fields = d.fields()
    cell = 19.0
    content_w = 32 * cell + 40
    key = [(_GMMA_FIELD_COLORS[i], f"bits {lo}-{hi}: {name} = {val}") for i, (name, lo, hi, val) in enumerate(fields)]
    key.append((GREY, "reserved (0)"))
    width, kh = key_size(key, content_w)
    head = title if title is not None else f"GmmaDescriptor 0x{x:016x}  (layout type {d.layout_type.name})"
    fig, y0 = new_figure(width, 2 * (22 + cell + 34) + kh, head,
                         f"{head}: the 64 bits in two rows, each field coloured and named with its value")
    x0 = (fig.width - 32 * cell) / 2
    y = y0
    for top_bit in (63, 31):
        y += 22
        bits = [top_bit - c for c in range(32)]
        owner = [next((i for i, (_, lo, hi, _) in enumerate(fields) if lo <= b <= hi), None) for b in bits]
        colors = [[_GMMA_FIELD_COLORS[o] if o is not None else GREY for o in owner]]
        labels = [[str((x >> b) & 1) for b in bits]]
        panel = paint_grid(fig, x0, y, cell, colors, labels, label_size=11, name=f"bits {top_bit}..{top_bit - 31}",
                           row_ticks=[], col_ticks=[(c, str(b)) for c, b in enumerate(bits)
                                                    if b % 4 == 0 or b in (13, 29, 45, 51, 62)])
        for name, lo, hi, val in fields:
            if hi < top_bit - 31 or lo > top_bit:
                continue
            c0, c1 = top_bit - min(hi, top_bit), top_bit - max(lo, top_bit - 31) + 1
            label = f"{name.split(' >>')[0]} = {val}" if c1 - c0 >= 6 else f"{val}"
            fig.text(x0 + (c0 + c1) / 2 * cell, y + cell + 12, label, 12)
            panel.texts.append(label)
        y += cell + 34
    draw_key(fig, 8, y, fig.width - 16, key, "fields (PTX ISA, matrix descriptor); addresses and offsets >> 4")
    return fig


def draw_gmma_canonical(major, layout_type, element_bits=16, mn=None, k=None, *, lbo=None, sbo=None, title=None):
    """A canonical wgmma operand layout (PTX ISA, Canonical Layouts) in 16-byte chunks, as the PTX ISA draws it.

    Each cell is one 16-byte chunk of the (mn, k) operand tile of one wgmma (K-major: rows = M/N, columns =
    the chunks along K; MN-major: rows = chunks along M/N, columns = K). The label is the chunk's place in
    shared memory (byte address / 16, after the swizzle); the colour is its 8-chunk core matrix (the key).
    The title gives LBO and SBO in bytes.
    Example: ``draw_gmma_canonical("K", "B128")`` -- 64 x 16 f16, every row one 16-byte chunk pair.

    >>> print(draw_gmma_canonical("K", "B128", 16).get_suptitle().splitlines()[1])
    S<3,4,3> o 0 o ((8,2),(8,2)):((64,512),(1,8))
    """
    from ..nvgpu.gmma import LayoutType, gmma_canonical_layout, gmma_read_addresses, make_gmma_desc, wgmma_k
    lt = LayoutType[layout_type] if isinstance(layout_type, str) else LayoutType(layout_type)
    T = 128 // element_bits
    kk = wgmma_k(element_bits) if k is None else k
    W = {0: 1, 3: 2, 2: 4, 1: 8}[int(lt)]
    if mn is None:
        mn = 16 if major == "K" else 2 * T * W
    canon = gmma_canonical_layout(major, lt, element_bits, mn, kk, lbo=lbo, sbo=sbo)
    d = make_gmma_desc(major, canon, element_bits)
    addr = gmma_read_addresses(d, major, element_bits, mn)         # (mn, k) byte addresses
    addr = addr.tolist() if hasattr(addr, "tolist") else [list(r) for r in addr]
    if major == "K":
        chunks = [[a // 16 for a in row[::T]] for row in addr]
        core = [[(r // 8) * (kk // T) + c for c in range(kk // T)] for r in range(mn)]
        row_name, col_name = "M/N", "K (16-byte chunks)"
    else:
        chunks = [[a // 16 for a in row] for row in addr[::T]]
        core = [[r * (kk // 8) + c // 8 for c in range(kk)] for r in range(mn // T)]
        row_name, col_name = "M/N (16-byte chunks)", "K"
    head = title if title is not None else (
        f"{major}-major {lt.name}, {element_bits}-bit\n{canon}\nLBO = {d.leading_byte_offset_bytes} B"
        f"{' (unused)' if major == 'K' and lt != LayoutType.INTERLEAVE else ''}, SBO = {d.stride_byte_offset_bytes} B"
        f"\nlabel: address / 16 B; colour: core matrix")
    rows, cols = len(chunks), len(chunks[0])
    chars = len(str(max(max(r) for r in chunks)))
    cell, size = choose_cell(rows, cols, chars, 1, True, max_h=900)
    colors = [[TV_HEX[c % 8] for c in row] for row in core]
    key = [(TV_HEX[k], f"core matrix mod 8 = {k}") for k in sorted({c % 8 for row in core for c in row})]
    from .layouts import _grid_figure
    return _grid_figure(head, f"{head}: a {rows} x {cols} grid of 16-byte chunks", colors,
                        [[str(c) for c in row] for row in chunks], cell, size, key=key,
                        key_title="label = byte address / 16 in shared memory; colour = the chunk's core matrix "
                                  "(8 chunks)", row_name=row_name, col_name=col_name)
