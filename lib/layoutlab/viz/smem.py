"""Pictures of shared memory: swizzles and banks, ldmatrix, the TMA box, the GMMA descriptor and canonical layouts."""

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.patches import Rectangle

from ..errors import LayoutError
from ..inttuple import product
from ..swizzle import ComposedLayout, Swizzle
from .figure import (BANK_COLORS, FONT, TV_COLORS, _BANKS, _BANK_BYTES, _BookFigure, _CONFLICT, _EMPTY,
                     _as_layout, _cell_inches, _fontsize, _modes, _offsets, _paint, _relabel_columns,
                     _relabel_rows, _single_grid_figure, _tick_step, _want_labels)

__all__ = [
    "draw_swizzle", "draw_bank_map", "draw_ldmatrix", "draw_tma_box", "draw_gmma_descriptor",
    "draw_gmma_canonical",
]


def _bank_of(offsets, element_bytes):
    return (offsets * element_bytes // _BANK_BYTES) % _BANKS


def _smem_offsets(layout, element_bytes, op):
    """Physical element offsets of ``layout`` placed in shared memory.

    A swizzled ComposedLayout's swizzle acts on *byte* addresses there (the DSL applies it to the smem
    pointer; the GMMA atoms' ``S<3,4,3>`` is the 128-byte pattern for every element size), so the offsets are
    ``swizzle((offset + outer(i)) * element_bytes) / element_bytes`` — not the swizzle of the element offset.
    """
    layout = _as_layout(layout, op)
    if not (isinstance(layout, ComposedLayout) and isinstance(layout.inner, Swizzle)):
        return _offsets(layout, op)
    base = (_offsets(layout.outer, op) + int(layout.offset)) * element_bytes
    return layout.inner(base) // element_bytes


def _swizzle_tile(swizzle_or_composed, shape, op, element_bytes):
    """(rows, cols, physical element offsets[rows, cols]) for a bare swizzle (acting on the element offsets of
    a row-major tile) or a layout (a swizzled ComposedLayout acts on byte addresses, see _smem_offsets)."""
    if isinstance(swizzle_or_composed, Swizzle):
        swizzle = swizzle_or_composed
        b, m, s = swizzle.num_bits, swizzle.num_base, swizzle.num_shift
        if shape is None:
            cols = 1 << (m + max(s, 0))
            rows = max(1 << b, 1)
        else:
            rows, cols = shape
        if rows * cols > 1 << 15:
            raise LayoutError(f"{op}: the tile {rows}x{cols} is too large to draw (at most 32768 cells); "
                              f"pass a smaller shape=(rows, cols)")
        logical = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)  # row-major
        return rows, cols, swizzle(logical)
    layout = _as_layout(swizzle_or_composed, op)
    modes = _modes(layout, op)
    if len(modes) != 2:
        raise LayoutError(f"{op}: {layout} has rank {len(modes)}; draw a rank-2 (rows, cols) tile")
    rows, cols = product(modes[0]), product(modes[1])
    return rows, cols, _smem_offsets(layout, element_bytes, op).reshape(cols, rows).T


def _check_element_bytes(element_bytes, op):
    if element_bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"{op}: element_bytes={element_bytes!r}; use 1, 2, 4, 8 or 16")


def draw_swizzle(swizzle_or_composed, element_bytes=2, *, shape=None, labels=None, title=None,
                 label_limit=512):
    """A swizzled shared-memory tile: where each logical element lives, and which bank it hits.

    On top, the logical tile (rows m, columns n): cell (m, n) coloured and labelled by the bank of its
    physical address, ``bank = (offset * element_bytes // 4) % 32``. Below, the physical memory in rows of
    128 bytes (one row = all 32 banks): each slot shows the logical ``m,n`` stored there, coloured by the
    logical 16-byte chunk of its row (``TV_COLORS[(n * element_bytes // 16) % 8]``), so the permutation of
    chunks that the swizzle performs is visible at a glance.

    A bare Swizzle<B,M,S> acts on a row-major tile of ``2^B`` rows of ``2^(M+S)`` elements (one period of the
    pattern) unless ``shape=(rows, cols)`` is given; it maps offset o to
    ``o ^ ((o >> S) & ((2^B - 1) << M))``. A composed (swizzled) layout is drawn on its own (M, N) tile.

    Example: Swizzle<3,3,3> on 2-byte elements (the 128-byte swizzle for fp16): logical (1, 0) sits at
    offset 64 ^ 8 = 72, in bank 4, so column 0 of the 8 rows spreads over 8 different 16-byte bank groups::

        draw_swizzle(Swizzle(3, 3, 3), element_bytes=2)

    >>> fig = draw_swizzle(Swizzle(3, 4, 3), element_bytes=2)
    >>> fig.get_suptitle(), len(fig.axes)        # the logical tile, then the physical rows
    ('S<3,4,3>, 2-byte elements', 2)
    """
    op = "draw_swizzle"
    _check_element_bytes(element_bytes, op)
    rows, cols, phys = _swizzle_tile(swizzle_or_composed, shape, op, element_bytes)
    banks = _bank_of(phys, element_bytes)
    per_row = max(128 // element_bytes, 1)
    cosize = int(phys.max()) + 1
    prow = -(-cosize // per_row)
    slot_m = np.full(prow * per_row, -1, dtype=np.int64)
    slot_n = np.full(prow * per_row, -1, dtype=np.int64)
    mm, nn = np.indices((rows, cols))
    slot_m[phys.ravel()] = mm.ravel()
    slot_n[phys.ravel()] = nn.ravel()
    slot_m, slot_n = slot_m.reshape(prow, per_row), slot_n.reshape(prow, per_row)

    # logical tile on top, physical memory (128-byte rows) below, same cell size
    cell = _cell_inches(rows + prow, max(cols, per_row), max_w=9, max_h=8)
    left, gap, top, bottom = 0.7, 0.75, 0.95, 0.25
    width = left + max(cols, per_row) * cell + 0.3
    height = top + rows * cell + gap + prow * cell + bottom
    fig = _BookFigure(figsize=(max(width, 3.0), height))
    width = fig.get_size_inches()[0]
    ax_l = fig.add_axes((left / width, 1 - (top + rows * cell) / height, cols * cell / width, rows * cell / height))
    ax_p = fig.add_axes((left / width, bottom / height, per_row * cell / width, prow * cell / height))
    want = _want_labels(labels, max(rows * cols, prow * per_row), label_limit, cell)
    _paint(ax_l, BANK_COLORS[banks], banks.astype(str) if want else None, fontsize=_fontsize(cell, 1, 2),
           row_name="m", col_name="logical tile (m, n), colour = bank")
    prgb = TV_COLORS[(np.maximum(slot_n, 0) * element_bytes // 16) % 8]
    prgb[slot_m < 0] = _EMPTY
    ptext = None
    if want:
        ptext = np.char.add(np.char.add(slot_m.astype(str), ","), slot_n.astype(str))
        ptext[slot_m < 0] = ""
    _paint(ax_p, prgb, ptext, fontsize=_fontsize(cell, 1, 4), row_name="row",
           col_name="physical: 128-byte rows, bank on top, colour = logical 16-byte chunk of n")
    step = max(_tick_step(per_row), max(_BANK_BYTES // element_bytes, 1))
    _relabel_columns(ax_p, np.arange(0, per_row, step),
                     [str(j * element_bytes // _BANK_BYTES) for j in range(0, per_row, step)])
    name = title if title is not None else str(swizzle_or_composed)
    fig.suptitle(f"{name}, {element_bytes}-byte elements", fontfamily="monospace", fontsize=10,
                 y=1 - 0.1 / height, va="top")
    return fig


def draw_bank_map(layout, element_bytes, accesses, *, access_bytes=None, shape=None, title=None):
    """Which bank each thread of one warp-wide shared-memory access hits, with conflicts marked.

    ``layout`` gives the physical offset (in elements) of each logical (m, n) of the tile (a Layout, a
    swizzled layout, or a bare Swizzle on its default tile or ``shape`` as in :func:`draw_swizzle`); ``accesses[t]`` is
    the (m, n) where thread t starts reading ``access_bytes`` (default ``element_bytes``). One panel per
    phase (threads served together: 32, or 16 / 8 for 8- / 16-byte accesses): columns are the 32 banks, rows the 128-byte memory lines touched,
    each word labelled with the thread(s) reading it. A bank asked for more than one word in a phase is
    marked red with its ``k-way`` count. The counts come from :func:`layoutlab.banks.bank_conflicts`.

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
    coords = [tuple(int(x) for x in a) for a in accesses]
    if not coords or len(coords) > 32:
        raise LayoutError(f"{op}: {len(coords)} accesses given; a warp issues 1 to 32 (one per thread)")
    for t, (m, n) in enumerate(coords):
        if not (0 <= m < rows and 0 <= n < cols):
            raise LayoutError(f"{op}: thread {t} accesses (m,n)=({m},{n}) outside the {rows}x{cols} tile")
    from ..banks import bank_conflicts
    addrs = np.array([phys[m, n] * element_bytes for m, n in coords], dtype=np.int64)
    result = bank_conflicts([int(a) for a in addrs], access_bytes)
    waves, ideal, worst = result.wavefronts, result.ideal_wavefronts, result.conflict_degree
    width = max(access_bytes, _BANK_BYTES)
    per_phase = max(128 // width, 1)  # the phase size of banks.bank_conflicts: 32, 16 (8 B), 8 (16 B)
    nwords = width // _BANK_BYTES
    phases = [list(range(s, min(s + per_phase, len(coords)))) for s in range(0, len(coords), per_phase)]
    panels = []
    for threads in phases:
        owners = {}
        for t in threads:
            for w in range(nwords):
                word = int(addrs[t] // _BANK_BYTES + w)
                owners.setdefault(word, []).append(t)
        lines = sorted({w // _BANKS for w in owners})
        panels.append((threads, owners, lines))
    nrows = sum(len(p[2]) for p in panels)
    cell = 0.34
    height = 0.9 + nrows * cell + len(panels) * 0.45 + 0.5       # + 0.5: the legend at the bottom
    fig = _BookFigure(figsize=(0.8 + _BANKS * cell, height))
    w_in, h_in = fig.get_size_inches()
    y = h_in - 0.85
    for index, (threads, owners, lines) in enumerate(panels):
        ph = len(lines) * cell
        y -= ph
        ax = fig.add_axes((0.6 / w_in, y / h_in, _BANKS * cell / w_in, ph / h_in))
        y -= 0.45
        rgb = np.ones((len(lines), _BANKS, 3))
        text = np.full((len(lines), _BANKS), "", dtype=object)
        per_bank = np.zeros(_BANKS, dtype=int)
        for word, ts in owners.items():
            r, b = lines.index(word // _BANKS), word % _BANKS
            rgb[r, b] = TV_COLORS[ts[0] % 8]
            text[r, b] = "T" + "/".join(str(t) for t in ts[:2]) + ("+" if len(ts) > 2 else "")
            per_bank[b] += 1
        conflict = np.zeros((len(lines), _BANKS), dtype=bool)
        for b in np.flatnonzero(per_bank > 1):
            conflict[:, b] = [(line * _BANKS + b) in owners for line in lines]
        _paint(ax, rgb, text, fontsize=5.5, row_name="line")
        _relabel_columns(ax, range(_BANKS), [str(b) for b in range(_BANKS)], fontsize=6)
        _relabel_rows(ax, range(len(lines)), [str(line) for line in lines], fontsize=6)
        if conflict.any():
            rr, cc = np.nonzero(conflict)
            squares = [((c - .5, r - .5), (c + .5, r - .5), (c + .5, r + .5), (c - .5, r + .5))
                       for r, c in zip(rr, cc)]
            ax.add_collection(PolyCollection(squares, facecolors="none", edgecolors=_CONFLICT, linewidths=2))
        for b in np.flatnonzero(per_bank > 1):
            ax.text(b, len(lines) - 0.5 + 0.35, f"{per_bank[b]}-way", ha="center", va="top", color=_CONFLICT,
                    fontsize=6, fontfamily="monospace")
        ax.set_title(f"phase {index}: threads {threads[0]}..{threads[-1]}, {per_bank.max()} wavefront(s)",
                     fontsize=8, fontfamily="monospace", loc="left", pad=14)
    head = title if title is not None else f"{len(coords)} threads x {access_bytes} B"
    verdict = "conflict-free" if waves == ideal else f"{worst}-way conflict"
    fig.suptitle(f"{head}: {waves} wavefront(s), ideal {ideal} -> {verdict}", fontfamily="monospace",
                 fontsize=10, y=1 - 0.1 / h_in, va="top")
    used = sorted({t % 8 for t in range(len(coords))})
    handles = [Rectangle((0, 0), 1, 1, facecolor=TV_COLORS[k], edgecolor="#444") for k in used]
    names = [f"word read first by a thread t = {k} mod 8" for k in used]
    handles.append(Rectangle((0, 0), 1, 1, facecolor="none", edgecolor=_CONFLICT, linewidth=2))
    names.append("bank asked for k > 1 words in one phase (k-way)")
    fig.legend(handles, names, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=3, frameon=False,
               prop={"family": "monospace", "size": 6.5}, title="cell: T<t> = the thread(s) reading that 4-byte word",
               title_fontsize=7)
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

    >>> from layoutlab.atoms import LdMatrix8x8x16bOp
    >>> draw_ldmatrix(LdMatrix8x8x16bOp(False, 4)).get_suptitle()
    'ldmatrix.sync.aligned.m8n8.x4.shared.b16  (SM75_U32x4_LDSM_N)'
    """
    from ..atoms import LdMatrix8x8x16bOp, StMatrix8x8x16bOp
    from ..ldmatrix import ldmatrix_address_lane, ldmatrix_owner

    fn = "draw_ldmatrix"
    if not isinstance(op, (LdMatrix8x8x16bOp, StMatrix8x8x16bOp)):
        raise LayoutError(f"{fn}: expected LdMatrix8x8x16bOp or StMatrix8x8x16bOp, got {type(op).__name__}")
    n = op.num_matrices
    rows, cols = 8 * n, 8
    addr_rgb = np.zeros((rows, cols, 3))
    addr_lab = np.empty((rows, cols), dtype=object)
    reg_rgb = np.zeros((rows, cols, 3))
    reg_lab = np.empty((rows, cols), dtype=object)
    for j in range(n):
        for r in range(8):
            lane = ldmatrix_address_lane(op, j, r)
            for c in range(8):
                addr_rgb[8 * j + r, c] = TV_COLORS[lane % 8]
                addr_lab[8 * j + r, c] = f"T{lane}" if c == 0 else ""
                t, v = ldmatrix_owner(op, j, r, c)
                reg_rgb[8 * j + r, c] = TV_COLORS[t % 8]
                reg_lab[8 * j + r, c] = f"T{t}\nd{v // 2}.{v % 2}"
    cell = _cell_inches(rows, 2 * cols, max_w=8, max_h=10, preferred=0.5)
    left, gap, top, bottom = 0.55, 0.7, 1.0, 0.75
    width = left + 2 * cols * cell + gap + 0.2
    height = top + rows * cell + bottom
    fig = _BookFigure(figsize=(width, height))
    load = isinstance(op, LdMatrix8x8x16bOp)
    names = ("row address (lane)", "registers (lane, d.half)")
    for i, (rgb, lab) in enumerate(((addr_rgb, addr_lab), (reg_rgb, reg_lab))):
        x = left + i * (cols * cell + gap)
        ax = fig.add_axes((x / width, bottom / height, cols * cell / width, rows * cell / height))
        _paint(ax, rgb, lab, fontsize=_fontsize(cell, lines=2, chars=4), row_name="row (8 per matrix)",
               col_name=names[i])
        for j in range(1, n):
            ax.axhline(8 * j - 0.5, color="black", lw=2.5)
    verb = "ldmatrix" if load else "stmatrix"
    head = title if title is not None else (
        f"{verb}.sync.aligned.m8n8.x{n}{'.trans' if op.transpose else ''}.shared.b16  ({op.name})")
    fig.suptitle(head, fontfamily="monospace", fontsize=9, y=1 - 0.1 / height, va="top")
    legend = ("Legend: grid = the 8x8 matrices in shared memory (thick lines between matrices), one row = 16 bytes. "
              "Left: the lane that supplies the row's address. Right: Tl = lane holding the element, "
              "dR.h = its register dR (one per matrix), 16-bit half h. Color = lane (8 colors, cycled).")
    fig.text(0.02, 0.02, "\n".join(_wrap(legend, 95)), fontsize=7, fontfamily="monospace", va="bottom")
    return fig


def _wrap(text, width):
    import textwrap
    return textwrap.wrap(text, width)


_OOB = np.array([0.82, 0.82, 0.82])


def draw_tma_box(tensor_map, box_start, *, smem_base=0, labels=None, title=None, label_limit=1024):
    """One TMA box: where it sits in the global tensor and where each of its elements lands in shared memory.

    Left: the global tensor (rows = TMA dimension 1 and up, flattened; columns = dimension 0, the contiguous
    one) with the box drawn in. Right: the box's shared-memory bytes in rows of 128 bytes (or of the box's
    inner extent when that is shorter), one cell per element, as ``layoutlab.tma.box_placement`` computes
    them: dense, dimension 0 innermost, through the tensor map's swizzle. Colour = the element's 16-byte
    chunk within its global row (the legend); a label = its global row; grey = outside the tensor (the
    out-of-bounds fill). A swizzle shows up as chunks changing places from one 128-byte row to the next
    (PTX ISA, "Tensors" / "Swizzling modes").

    Example: ``draw_tma_box(encode_tiled("f16", (64, 16), (128,), (64, 8), swizzle="128B"), (0, 4))``.

    >>> from layoutlab import encode_tiled
    >>> draw_tma_box(encode_tiled("f16", (64, 16), (128,), (64, 8), swizzle="128B"), (0, 4)).get_suptitle()
    'TMA box (64, 8) at (0, 4), f16, swizzle 128B: 1024 bytes'
    """
    from ..tma import box_placement
    tm = tensor_map
    esize = tm.element_bytes
    pl = box_placement(tm, box_start, smem_base)
    n = len(pl) // esize
    inner = tm.smem_box[0]
    per_row = max(1, min(128, inner * esize) // esize) if tm.swizzle == "none" else 128 // esize
    per_row = min(per_row, n)
    prow = -(-n // per_row)
    gm = np.full((prow * per_row,), -1)
    gc = np.full((prow * per_row,), -1)
    oob = np.zeros(prow * per_row, bool)
    for e in range(n):
        g, _ = pl[e * esize]
        if g is None:
            oob[e] = True
        else:
            gc[e] = g[0]
            gm[e] = sum(x * int(np.prod(tm.global_dim[1:i])) for i, x in enumerate(g[1:], start=1))
    # global picture: a window around the box, columns = dim 0, rows = the other dims flattened
    rows_g = int(np.prod(tm.global_dim[1:])) if tm.rank > 1 else 1
    cols_g = tm.global_dim[0]
    rgb_g = np.tile(np.array([0.97, 0.97, 0.97]), (rows_g, cols_g, 1))
    chunk = 16 // min(esize, 16) if esize < 16 else 1
    for e in range(n):
        if not oob[e]:
            rgb_g[gm[e], gc[e]] = TV_COLORS[(gc[e] // chunk) % 8]
    rgb_s = TV_COLORS[(np.maximum(gc, 0) // chunk) % 8].copy()
    rgb_s[oob] = _OOB
    rgb_s[np.arange(prow * per_row) >= n] = _EMPTY
    rgb_s = rgb_s.reshape(prow, per_row, 3)
    cell = _cell_inches(max(rows_g, prow), cols_g + per_row, max_w=11, max_h=7, preferred=0.28)
    left, gap, top, bottom = 0.6, 0.9, 1.0, 0.9
    width = left + cols_g * cell + gap + per_row * cell + 0.3
    height = top + max(rows_g, prow) * cell + bottom
    fig = _BookFigure(figsize=(width, height))
    ax_g = fig.add_axes((left / width, 1 - (top + rows_g * cell) / height, cols_g * cell / width,
                         rows_g * cell / height))
    ax_s = fig.add_axes(((left + cols_g * cell + gap) / width, 1 - (top + prow * cell) / height,
                         per_row * cell / width, prow * cell / height))
    _paint(ax_g, rgb_g, None, fontsize=6, row_name="dims 1.. (flattened)", col_name="global tensor: dim 0 →")
    start = list(box_start) + [0] * (5 - len(box_start))
    r0 = sum(x * int(np.prod(tm.global_dim[1:i])) for i, x in enumerate(box_start[1:], start=1))
    ax_g.add_patch(Rectangle((start[0] - 0.5, r0 - 0.5), tm.box_dim[0], int(np.prod(tm.smem_box[1:])),
                             fill=False, lw=2, ec="black"))
    # one label per 16-byte chunk (on its first element): the global row it came from, "0" for the fill
    text = None
    if labels is not False and n <= label_limit:
        idx = np.arange(prow * per_row)
        text = np.where(oob, "0", gm.astype(str))
        text[(idx >= n) | ((idx * esize) % 16 != 0)] = ""
        text = text.reshape(prow, per_row)
    _paint(ax_s, rgb_s, text, fontsize=max(_fontsize(cell, 1, 2), 6), row_name="128-byte row",
           col_name=f"shared memory (swizzle {tm.swizzle}), label = global row of the 16-byte chunk")
    handles = [Rectangle((0, 0), 1, 1, fc=TV_COLORS[j], ec="grey") for j in range(min(8, -(-inner // chunk)))]
    names = [f"chunk {j}: dim-0 elements {j * chunk}..{j * chunk + chunk - 1} (mod {8 * chunk})"
             for j in range(len(handles))]
    handles.append(Rectangle((0, 0), 1, 1, fc=_OOB, ec="grey"))
    names.append("outside the tensor: fill")
    fig.legend(handles, names, loc="lower center", ncol=3, fontsize=7, frameon=False)
    name = title or (f"TMA box {tm.box_dim} at {tuple(box_start)}, {tm.data_type}, swizzle {tm.swizzle}: "
                     f"{tm.box_bytes} bytes")
    fig.suptitle(name, fontfamily="monospace", fontsize=10, y=1 - 0.1 / height, va="top")
    return fig


_GMMA_FIELD_COLORS = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5")


def draw_gmma_descriptor(desc, *, title=None):
    """The 64 bits of a wgmma shared-memory descriptor as labelled fields (the PTX ISA's table, redrawn).

    ``desc`` is a :class:`layoutlab.gmma.GmmaDescriptor` or a 64-bit int. Two rows of 32 bits (63..32 on
    top, 31..0 below), each field coloured and labelled with its name and value; reserved bits grey.
    Example: ``draw_gmma_descriptor(0x4000004000010000)`` (128B swizzle, SBO 64 = 1024 bytes).

    >>> draw_gmma_descriptor(0x4000004000010000).get_suptitle()
    'GmmaDescriptor 0x4000004000010000  (layout type B128)'
    """
    from ..gmma import GmmaDescriptor, decode_gmma_desc
    d = desc if isinstance(desc, GmmaDescriptor) else decode_gmma_desc(desc)
    x = d.desc
    fig = _BookFigure(figsize=(9.6, 2.5))
    ax = fig.add_axes((0.02, 0.04, 0.96, 0.74))
    ax.set_xlim(0, 32)
    ax.set_ylim(0, 2.6)
    ax.axis("off")
    fields = d.fields()
    for hi_row, y in ((True, 1.45), (False, 0.15)):
        for col in range(32):
            bit = (63 - col) if hi_row else (31 - col)
            owner = next((i for i, (_, lo, hi, _) in enumerate(fields) if lo <= bit <= hi), None)
            color = _GMMA_FIELD_COLORS[owner] if owner is not None else "#e0e0e0"
            ax.add_patch(Rectangle((col, y), 1, 0.55, facecolor=color, edgecolor="white", lw=0.6))
            ax.text(col + 0.5, y + 0.27, str((x >> bit) & 1), ha="center", va="center", fontsize=7, **FONT)
            if bit % 4 == 0 or bit in (13, 29, 45, 51, 62):
                ax.text(col + 0.5, y + 0.62, str(bit), ha="center", va="bottom", fontsize=5.5, color="#555",
                        **FONT)
        for name, lo, hi, val in fields:
            top, bot = (63, 32) if hi_row else (31, 0)
            if hi < bot or lo > top:
                continue
            c0, c1 = top - min(hi, top), top - max(lo, bot) + 1
            label = f"{name.split(' >>')[0]} = {val}" if c1 - c0 >= 6 else f"{val}"
            ax.text((c0 + c1) / 2, y - 0.1, label, ha="center", va="top", fontsize=6.5, **FONT)
    head = title if title is not None else f"GmmaDescriptor 0x{x:016x}  (layout type {d.layout_type.name})"
    fig.suptitle(head, fontsize=9, **FONT)
    return fig


def draw_gmma_canonical(major, layout_type, element_bits=16, mn=None, k=None, *, lbo=None, sbo=None, title=None):
    """A canonical wgmma operand layout (PTX ISA, Canonical Layouts) in 16-byte chunks, as the PTX ISA draws it.

    Each cell is one 16-byte chunk of the (mn, k) operand tile of one wgmma (K-major: rows = M/N, columns =
    the chunks along K; MN-major: rows = chunks along M/N, columns = K). The label is the chunk's place in
    shared memory (byte address / 16, after the swizzle); the colour is its 8-chunk core matrix. The title
    gives LBO and SBO in bytes: the step from core matrix 0 to the next along K (K-major interleave, MN-major
    swizzled: along MN) and to the next 8-row group.
    Example: ``draw_gmma_canonical("K", "B128")`` -- 64 x 16 f16, every row one 16-byte chunk pair.

    >>> print(draw_gmma_canonical("K", "B128", 16).get_suptitle().splitlines()[1])
    S<3,4,3> o 0 o ((8,2),(8,2)):((64,512),(1,8))
    """
    from ..gmma import LayoutType, gmma_canonical_layout, gmma_read_addresses, make_gmma_desc, wgmma_k
    lt = LayoutType[layout_type] if isinstance(layout_type, str) else LayoutType(layout_type)
    T = 128 // element_bits
    kk = wgmma_k(element_bits) if k is None else k
    W = {0: 1, 3: 2, 2: 4, 1: 8}[int(lt)]
    if mn is None:
        mn = 16 if major == "K" else 2 * T * W
    canon = gmma_canonical_layout(major, lt, element_bits, mn, kk, lbo=lbo, sbo=sbo)
    d = make_gmma_desc(major, canon, element_bits)
    addr = gmma_read_addresses(d, major, element_bits, mn)         # (mn, k) byte addresses
    if major == "K":
        chunks = addr[:, ::T] // 16                                   # rows mn, cols k / T
        core = (np.arange(mn)[:, None] // 8) * (kk // T) + np.arange(kk // T)[None, :]
        row_name, col_name = "M/N", "K (16-byte chunks)"
    else:
        chunks = (addr[::T, :] // 16)                                 # rows mn / T, cols k
        core = (np.arange(mn // T)[:, None]) * (kk // 8) + (np.arange(kk)[None, :] // 8)
        row_name, col_name = "M/N (16-byte chunks)", "K"
    rows, cols = chunks.shape
    rgb = TV_COLORS[core % 8]
    head = title if title is not None else (
        f"{major}-major {lt.name}, {element_bits}-bit\n{canon}\nLBO = {d.leading_byte_offset_bytes} B"
        f"{' (unused)' if major == 'K' and lt != LayoutType.INTERLEAVE else ''}, SBO = {d.stride_byte_offset_bytes} B"
        f"\nlabel: address / 16 B; colour: core matrix")
    fig, ax, cell = _single_grid_figure(rows, cols, head, extra_h=0.2)
    _paint(ax, rgb, chunks.astype(str), fontsize=_fontsize(cell, 1, len(str(int(chunks.max())))),
           row_name=row_name, col_name=col_name)
    return fig
