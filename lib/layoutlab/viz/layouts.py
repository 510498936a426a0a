"""Pictures of layouts and thread-value layouts: a layout's offsets, who owns each cell of a tile, tiled MMAs and
copies, linear layouts as F2 matrices (SVG, pure Python)."""

from ..cute.atom import MmaAtom
from ..errors import LayoutError
from ..cute.inttuple import product
from ..cute.layout import Layout
from ..linear.layout import LinearLayout
from ..cute.tiled import TiledCopy, TiledMMA
from .figure import (BANK_HEX, EMPTY, TV_HEX, Grid, _LABEL_LIMIT, _as_layout, _modes, _offsets, _tile_mn,
                     choose_cell, darken, draw_key, fade, grid_margins, key_size, new_figure, paint_grid)
from .svg import CHAR_W, MAX_WIDTH, TICK_TEXT

__all__ = [
    "draw_layout", "draw_tv_layout", "draw_f2_matrix", "draw_tiled_mma", "draw_tiled_copy", "tv_cell_owners",
    "linear_tv_owners", "draw_partition", "draw_tv_legend", "f2_matrix_parts",
]

_TOUR_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
_TOUR_TEXT = ["#fff", "#000", "#fff", "#fff", "#fff", "#fff", "#000", "#000"]


def _owners(cells, m_ext, n_ext):
    """(thread, value) Grids: for each cell the first (t, v) of ``cells`` [(t, v, m, n)] (given in thread-major
    order, t outer and v inner, as print_latex_tv draws it) that lands there; -1 where none does."""
    thread = [[-1] * n_ext for _ in range(m_ext)]
    value = [[-1] * n_ext for _ in range(m_ext)]
    for t, v, m, n in cells:
        if thread[m][n] < 0:
            thread[m][n], value[m][n] = t, v
    return Grid(thread), Grid(value)


def tv_cell_owners(tv, tile_mn, op="tv_cell_owners"):
    """Which (thread, value) owns each cell of the (M, N) tile under the TV layout ``tv``.

    ``tv`` maps (t, v) -> offset in the tile; with the tile (M,N):(s_m,s_n) the cell is
    ``m = (offset // s_m) % M``, ``n = (offset // s_n) % N`` (for the plain ``(M, N)`` tile, column-major:
    ``m = offset % M``, ``n = offset // M``). Like ``print_latex_tv``, a cell reached by several (t, v)
    (broadcast) shows the first one in thread-major order. Returns ``(thread, value)``, two (M, N) grids
    (``g[m, n]``, ``g.tolist()``) with -1 where no (t, v) lands.

    The WGMMA 64x64 accumulator (PTX ISA, "wgmma 64xNx16 accumulator D"): (t,v)=(1,0) -> offset 128 ->
    (m,n)=(0,2), so thread[0,2] == 1 and value[0,2] == 0:

    >>> from layoutlab import parse_layout
    >>> thread, value = tv_cell_owners(parse_layout("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"), (64, 64))
    >>> thread[0, :4], value[0, :4]               # row 0: T0 V0, T0 V1, T1 V0, T1 V1
    ([0, 0, 1, 1], [0, 1, 0, 1])
    """
    tv = _as_layout(tv, op)
    modes = _modes(tv, op)
    if len(modes) != 2:
        raise LayoutError(f"{op}: the TV layout {tv} has rank {len(modes)}; it must be rank 2 (thread, value)")
    num_t, num_v = product(modes[0]), product(modes[1])
    m_ext, n_ext, s_m, s_n = _tile_mn(tile_mn, op)
    offsets = _offsets(tv, op)  # index t + T*v
    cosize = (m_ext - 1) * s_m + (n_ext - 1) * s_n + 1
    for i, off in enumerate(offsets):
        if not 0 <= off < cosize:
            raise LayoutError(f"{op}: (t,v)=({i % num_t},{i // num_t}) maps to offset {off}, "
                              f"outside the {m_ext}x{n_ext} tile; the tile must cover the TV layout's cosize")
    cells = ((t, v, (offsets[t + num_t * v] // s_m) % m_ext, (offsets[t + num_t * v] // s_n) % n_ext)
             for t in range(num_t) for v in range(num_v))
    return _owners(cells, m_ext, n_ext)


def _grid_figure(title, alt, colors, labels, cell, size, *, key=(), key_title="", row_name="", col_name="",
                 bold=None, outline=None, text_colors=None, col_ticks=None, row_ticks=None):
    """One grid under its title, its key below: the common picture."""
    rows, cols = len(colors), len(colors[0])
    left, top = grid_margins(rows, row_name, col_name)
    content_w = left + cols * cell + 16
    width, kh = key_size(key, content_w, key_title)
    fig, y0 = new_figure(width, top + rows * cell + 8 + kh, title, alt)
    x0 = (fig.width - content_w) / 2 + left
    paint_grid(fig, x0, y0 + top, cell, colors, labels, label_size=size or 11, bold=bold, outline=outline,
               text_colors=text_colors, row_name=row_name, col_name=col_name, col_ticks=col_ticks,
               row_ticks=row_ticks)
    if key:
        draw_key(fig, 8, y0 + top + rows * cell + 4, fig.width - 16, key, key_title)
    return fig


def draw_layout(layout, *, color_by="offset", labels=None, highlight=None, title=None,
                label_limit=_LABEL_LIMIT):
    """The 2-D grid of a rank-1 or rank-2 layout, each cell (m, n) showing its offset ``layout(m, n)``.

    Mode 0 runs down (rows m), mode 1 to the right (columns n); a cell's offset is
    ``layout(m + M*n)`` with M = size(mode 0), as in CuTe's ``print_layout`` / ``print_latex``.
    A rank-1 layout is drawn as one column (CuTe appends the mode ``1:0``).

    ``color_by``: ``"offset"`` (colour = offset mod 8, the pastels ``TV_COLORS``; the key says so),
    ``"bank"`` (``BANK_COLORS``, 4-byte elements: colour = offset mod 32) or ``None`` (white).
    ``highlight``: a set of (m, n) cells to outline; the rest is faded. ``labels``: None = when they fit.

    Example: ``(4,8):(8,1)`` (row-major 4x8) puts offset 9 at (m,n)=(1,1) and 8 at (1,0)::

        draw_layout(parse_layout("(4,8):(8,1)"))

    >>> fig = draw_layout(Layout((4, 8), (8, 1)))
    >>> fig.get_suptitle(), fig.panels[0].cell_labels[(1, 1)]
    ('(4,8):(8,1)', '9')
    """
    op = "draw_layout"
    layout = _as_layout(layout, op)
    modes = _modes(layout, op)
    if len(modes) > 2:
        raise LayoutError(f"{op}: {layout} has rank {len(modes)}; only rank 1 or 2 can be drawn as a "
                          f"grid (group modes first, e.g. with group_modes or a rank-2 reshape)")
    if color_by not in ("offset", "bank", None):
        raise LayoutError(f"{op}: color_by={color_by!r}; use 'offset', 'bank' or None")
    rows = product(modes[0])
    cols = product(modes[1]) if len(modes) == 2 else 1
    flat = _offsets(layout, op)
    grid = [[flat[m + rows * n] for n in range(cols)] for m in range(rows)]
    if color_by == "offset":
        colors = [[TV_HEX[o % 8] for o in row] for row in grid]
        key = [(TV_HEX[k], f"offset mod 8 = {k}") for k in sorted({o % 8 for row in grid for o in row})]
    elif color_by == "bank":
        colors = [[BANK_HEX[o % 32] for o in row] for row in grid]
        key = [(BANK_HEX[b], f"bank {b}") for b in sorted({o % 32 for row in grid for o in row})]
    else:
        colors, key = [[EMPTY] * cols for _ in range(rows)], []
    outline = None
    if highlight:
        mask = [[False] * cols for _ in range(rows)]
        for m, n in highlight:
            mask[m][n] = True
        colors = [[fade(c, mask[m][n]) for n, c in enumerate(row)] for m, row in enumerate(colors)]
        outline = mask
        key.append((("outline", "#000"), "highlighted (others faded)"))
    chars = len(str(max((max(r) for r in grid), default=0)))
    want = labels if labels is not None else (None if rows * cols <= label_limit else False)
    cell, size = choose_cell(rows, cols, chars, 1, want)
    text = [[str(o) for o in row] for row in grid] if size else None
    name = str(layout) if title is None else title
    what = {"offset": "colour = offset mod 8", "bank": "colour = bank (offset mod 32)", None: "no colour"}[color_by]
    alt = f"{name}: a {rows} x {cols} grid, cell (m, n) {'labelled with' if size else 'coloured by'} its offset; {what}"
    key_title = f"cell (m, n): its offset layout(m + {rows}*n); {what}" if key else ""
    return _grid_figure(name, alt, colors, text, cell, size, key=key, key_title=key_title, outline=outline)


def _tv_colors(thread, value, highlight_threads, highlight_values, cell):
    """Colours TV_COLORS[t % 8] (white: no owner) and the highlight mask (None: no highlight)."""
    rows, cols = thread.shape
    colors = [[TV_HEX[t % 8] if t >= 0 else EMPTY for t in row] for row in thread]
    if highlight_threads is None and highlight_values is None:
        return colors, None
    ht = None if highlight_threads is None else set(highlight_threads)
    hv = None if highlight_values is None else set(highlight_values)
    mask = [[t >= 0 and (ht is None or t in ht) and (hv is None or v in hv) for t, v in zip(tr, vr)]
            for tr, vr in zip(thread, value)]
    small = cell < 8        # cells too small to outline: show the selection as darker cells instead
    colors = [[darken(c) if small and mask[m][n] else fade(c, mask[m][n]) for n, c in enumerate(row)]
              for m, row in enumerate(colors)]
    return colors, mask


def _tv_key(threads, mask=None):
    used = sorted({t % 8 for grid in threads for row in grid for t in row if t >= 0})
    key = [(TV_HEX[k], f"t mod 8 = {k}") for k in used]
    if mask is not None:
        key.append((("outline", "#000"), "selected (t, v), bold; others faded"))
    return key


def _paint_tv(fig, x, y, thread, value, cell, size, *, mask, colors, row_name="", col_name=""):
    labels = None
    if size:
        labels = [[f"T{t}\nV{v}" if t >= 0 else "" for t, v in zip(tr, vr)] for tr, vr in zip(thread, value)]
    paint_grid(fig, x, y, cell, colors, labels, label_size=size or 11, bold=mask,
               outline=mask if cell >= 8 else None, row_name=row_name, col_name=col_name)


def _tv_cell(rows, cols, thread, value, labels, label_limit, **kw):
    chars = 1 + len(str(max(max((max(r) for r in thread), default=0), max((max(r) for r in value), default=0))))
    want = labels if labels is not None else (None if rows * cols <= label_limit else False)
    return choose_cell(rows, cols, chars, 2, want, **kw)


_TV_KEY_TITLE = "cell: T<t> V<v> = thread t holds it as its value v; colour = thread t mod 8"


def _tv_figure(thread, value, title, *, labels, label_limit, highlight_threads, highlight_values, what):
    rows, cols = thread.shape
    cell, size = _tv_cell(rows, cols, thread, value, labels, label_limit)
    colors, mask = _tv_colors(thread, value, highlight_threads, highlight_values, cell)
    text = None
    if size:
        text = [[f"T{t}\nV{v}" if t >= 0 else "" for t, v in zip(tr, vr)] for tr, vr in zip(thread, value)]
    alt = (f"{title}: {what} on a {rows} x {cols} tile, each cell coloured by its thread (t mod 8)"
           + (" and labelled T<t> V<v>" if size else ""))
    return _grid_figure(title, alt, colors, text, cell, size, key=_tv_key([thread], mask), key_title=_TV_KEY_TITLE,
                        bold=mask, outline=mask if cell >= 8 else None)


def draw_tv_layout(tv, tile_mn, *, highlight_threads=None, highlight_values=None, inverse=False,
                   labels=None, title=None, label_limit=_LABEL_LIMIT):
    """A thread-value layout on its (M, N) tile: each cell labelled ``T<t>`` / ``V<v>`` and coloured by thread.

    ``tv`` maps (t, v) -> offset; the cell is ``(m, n) = (offset % M, offset // M)`` for the tile (M, N)
    (or ``tile_mn`` as a rank-2 Layout, see :func:`tv_cell_owners`). Colours are ``TV_COLORS[t % 8]`` as in
    CuTe's ``print_latex_tv`` (the key lists them). ``highlight_threads`` / ``highlight_values`` outline the
    cells of those threads / values (both given: their intersection) and fade the rest.

    ``inverse=True`` draws the other direction: the (T, V) grid (rows t, columns v), each cell labelled with
    the ``(m,n)`` that (t, v) writes.

    ``tv`` may also be a distributed :class:`~layoutlab.linear.LinearLayout` (input dims ``register``,
    ``lane``, ``warp``; two output dims m = ``dim0``, n = ``dim1``): then t = lane + 32 * warp (lanes per
    warp = 2^(number of lane bits)), v = register, and ``tile_mn`` may be None (the output dims' sizes).

    The WGMMA accumulator on a 64x64 tile (cell (0,2) is thread 1's value 0):

    >>> from layoutlab import parse_layout
    >>> draw_tv_layout(parse_layout("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"), (64, 64)).get_suptitle()
    '((4,8,4),(2,2,8)):((128,1,16),(64,8,512))'
    """
    op = "draw_tv_layout"
    if isinstance(tv, LinearLayout):
        thread, value = linear_tv_owners(tv, op)
        if tile_mn is not None and tuple(product(x) for x in tile_mn) != thread.shape:
            raise LayoutError(f"{op}: tile_mn {tile_mn} differs from the linear layout's output sizes "
                              f"{thread.shape}; pass tile_mn=None")
        head = title if title is not None else "linear layout: t = lane + 32*warp, v = register"
        return _tv_figure(thread, value, head, labels=labels, label_limit=label_limit, what="a linear layout",
                          highlight_threads=highlight_threads, highlight_values=highlight_values)
    tv = _as_layout(tv, op)
    title = str(tv) if title is None else title
    if inverse:
        return _draw_tv_inverse(tv, tile_mn, labels=labels, title=title, label_limit=label_limit,
                                highlight_threads=highlight_threads, highlight_values=highlight_values)
    thread, value = tv_cell_owners(tv, tile_mn, op)
    return _tv_figure(thread, value, title, labels=labels, label_limit=label_limit, what="a thread-value layout",
                      highlight_threads=highlight_threads, highlight_values=highlight_values)


def linear_tv_owners(linear_layout, op="draw_tv_layout"):
    """(thread, value) grids over the (dim0, dim1) tile of a distributed linear layout (first writer in
    thread-major order, -1 where nothing lands), with t = lane + 2^lane_bits * warp and v = register.

    The output of an input is the XOR of the basis vectors of its set bits.
    Example: bases register [[0,1]], lane [[1,0],[2,0]] on a 4x2 tile: lane 1, register 1 -> (1, 1).

    >>> ll = LinearLayout.from_bases([("register", [[0, 1]]), ("lane", [[1, 0], [2, 0]])], ["dim0", "dim1"])
    >>> thread, value = linear_tv_owners(ll)
    >>> thread[1], value[1]                       # row 1: lane 1 holds registers 0 and 1
    ([1, 1], [0, 1])
    """
    if not isinstance(linear_layout, LinearLayout):
        raise LayoutError(f"{op}: linear_layout must be a LinearLayout, got {type(linear_layout).__name__}")
    names = [d for d, _ in linear_layout.bases]
    unknown = [d for d in names if d not in ("register", "lane", "warp")]
    outs = list(linear_layout.out_dims)
    if unknown or len(outs) != 2:
        raise LayoutError(f"{op}: a linear layout is drawn as a TV layout when its input dims are register / "
                          f"lane / warp and it has two output dims (m, n); got inputs {names} and outputs "
                          f"{[d for d, _ in outs]}")
    bases = dict(linear_layout.bases)
    bits = {d: len(bases.get(d, [])) for d in ("register", "lane", "warp")}
    total = sum(bits.values())
    if total > 16:
        raise LayoutError(f"{op}: {total} input bits is too many to draw (at most 16)")
    mm, nn = [0], [0]                     # outputs of every input x (bit j of x = the j-th basis vector)
    for d in ("register", "lane", "warp"):
        for vec in bases.get(d, []):
            mm = mm + [m ^ int(vec[0]) for m in mm]
            nn = nn + [n ^ int(vec[1]) for n in nn]
    rb, lb = bits["register"], bits["lane"]
    num_v, num_t = 1 << rb, 1 << (total - rb)
    (_, m_ext), (_, n_ext) = outs
    cells = ((t, v, mm[v | (t << rb)], nn[v | (t << rb)]) for t in range(num_t) for v in range(num_v))
    return _owners(cells, int(m_ext), int(n_ext))


def _draw_tv_inverse(tv, tile_mn, *, labels, title, label_limit, highlight_threads, highlight_values):
    op = "draw_tv_layout"
    modes = _modes(tv, op)
    if len(modes) != 2:
        raise LayoutError(f"{op}: the TV layout {tv} has rank {len(modes)}; it must be rank 2")
    num_t, num_v = product(modes[0]), product(modes[1])
    m_ext, n_ext, s_m, s_n = _tile_mn(tile_mn, op)
    tv_cell_owners(tv, tile_mn, op)  # validates that every offset lies in the tile
    offsets = _offsets(tv, op)
    thread = Grid([[t] * num_v for t in range(num_t)])
    value = Grid([list(range(num_v)) for _ in range(num_t)])
    chars = len(str(m_ext)) + len(str(n_ext)) + 1
    want = labels if labels is not None else (None if num_t * num_v <= label_limit else False)
    cell, size = choose_cell(num_t, num_v, chars, 1, want)
    colors, mask = _tv_colors(thread, value, highlight_threads, highlight_values, cell)
    text = None
    if size:
        text = [[f"{(offsets[t + num_t * v] // s_m) % m_ext},{(offsets[t + num_t * v] // s_n) % n_ext}"
                 for v in range(num_v)] for t in range(num_t)]
    head = title + "\n(t, v) -> (m, n)"
    alt = f"{title}: the inverse view, row t and column v show the tile cell (m, n) that thread t's value v is"
    return _grid_figure(head, alt, colors, text, cell, size, key=_tv_key([thread], mask),
                        key_title="cell (t, v): the (m, n) it writes; colour = thread t mod 8",
                        row_name="thread t", col_name="value v", bold=mask, outline=mask if cell >= 8 else None)


_SHORT = {"register": "reg", "lane": "lane", "warp": "warp", "block": "block", "offset": "off"}


def f2_matrix_parts(linear_layout):
    """(matrix rows [out_bits][in_bits] of 0/1, in-bit labels, out-bit labels, in-group sizes, out-group sizes) of a
    LinearLayout or a 0/1 matrix: what :func:`draw_f2_matrix` (and the linear-layout explorer) draws.

    >>> from layoutlab import LinearLayout
    >>> f2_matrix_parts(LinearLayout.from_bases([("lane", [[1], [2]])], ["x"]))
    ([[1, 0], [0, 1]], ['lane0', 'lane1'], ['x.0', 'x.1'], [2], [2])
    """
    if isinstance(linear_layout, str):
        raise LayoutError(f"draw_f2_matrix: expected a LinearLayout or a 0/1 matrix, got the string {linear_layout!r}")
    if not isinstance(linear_layout, LinearLayout):
        try:
            mat = [[int(x) & 1 for x in row] for row in (linear_layout.tolist() if hasattr(linear_layout, "tolist")
                                                         else linear_layout)]
        except TypeError:
            raise LayoutError("draw_f2_matrix: expected a LinearLayout or a 0/1 matrix (rows of 0/1), got "
                              f"{type(linear_layout).__name__}") from None
        if not mat or len({len(r) for r in mat}) != 1:
            raise LayoutError("draw_f2_matrix: a matrix must be 2-D with rows of equal length")
        rows, cols = len(mat), len(mat[0])
        return mat, [f"in{j}" for j in range(cols)], [f"out{i}" for i in range(rows)], [cols], [rows]
    out_bits = []
    for name, size in linear_layout.out_dims:
        size = int(size)
        if size & (size - 1):
            raise LayoutError(f"draw_f2_matrix: out dim {name} has size {size}, not a power of two")
        out_bits.append((str(name), size.bit_length() - 1))
    in_labels, in_groups = [], []
    for name, vectors in linear_layout.bases:
        short = _SHORT.get(str(name), str(name))
        in_groups.append(len(vectors))
        in_labels += [f"{short}{j}" for j in range(len(vectors))]
    mat = [list(r) for r in linear_layout.get_matrix_view()]
    out_labels = [f"{name}.{b}" for name, n in out_bits for b in range(n)]
    return mat, in_labels, out_labels, in_groups, [n for _, n in out_bits]


def draw_f2_matrix(linear_layout, *, title=None, in_labels=None, out_labels=None):
    """A linear layout as its 0/1 matrix over F2: one column per input bit, one row per output bit.

    Column j is the image of input bit j (``reg0, reg1, ..., lane0, ..., warp0, ...``): output bit i is set
    iff entry (i, j) is 1, and the layout maps an input x to the XOR of the columns of x's set bits.
    Rows are labelled ``<out dim>.<bit>`` (bit 0 = least significant); thick lines separate the input
    dimensions (reg / lane / warp) and the output dimensions. Accepts a LinearLayout or a 0/1 matrix.

    Example: a layout with ``bases={"lane": [[1,0],[2,0],[0,1]]}``, ``out_dims={"dim0": 4, "dim1": 2}``
    gives the 3x3 identity: lane0 -> dim0.0, lane1 -> dim0.1, lane2 -> dim1.0.

    >>> ll = LinearLayout.from_bases([("register", [[0, 1]]), ("lane", [[1, 0], [2, 0]])], ["dim0", "dim1"])
    >>> draw_f2_matrix(ll).get_suptitle()
    'F2 matrix: 3 input bits -> 3 output bits'
    """
    mat, ins, outs, in_groups, out_groups = f2_matrix_parts(linear_layout)
    ins = list(in_labels) if in_labels is not None else ins
    outs = list(out_labels) if out_labels is not None else outs
    rows, cols = len(mat), len(mat[0]) if mat else 0
    cell, size = choose_cell(rows, cols, 1, 1, None, max_w=MAX_WIDTH - 100, preferred=26)
    group_of_col = [g for g, n in enumerate(in_groups) for _ in range(n)]
    colors = [[("#33336f" if mat[r][c] else TV_HEX[group_of_col[c] % 8]) for c in range(cols)] for r in range(rows)]
    text = [[str(mat[r][c]) for c in range(cols)] for r in range(rows)] if size else None
    tcol = [["#fff" if mat[r][c] else "#000" for c in range(cols)] for r in range(rows)]
    left = CHAR_W * TICK_TEXT * max((len(s) for s in outs), default=1) + 12
    top = CHAR_W * TICK_TEXT * max((len(s) for s in ins), default=1) + 12
    name = title if title is not None else f"F2 matrix: {cols} input bits -> {rows} output bits"
    key = [("#33336f", "1: output bit set"), (TV_HEX[0], "0 (shade: input dimension)")]
    content_w = left + cols * cell + 16
    width, kh = key_size(key, content_w)
    fig, y0 = new_figure(width, top + rows * cell + 8 + kh, name,
                         f"{name}: a {rows} x {cols} matrix of 0/1, rows = output bits, columns = input bits")
    x0, y = (fig.width - content_w) / 2 + left, y0 + top
    paint_grid(fig, x0, y, cell, colors, text, label_size=size or 11, text_colors=tcol, col_ticks=[], row_ticks=[])
    for c, lab in enumerate(ins):
        fig.text(x0 + (c + 0.5) * cell, y - 6, lab, TICK_TEXT, anchor="start", rotate=-90)
    for r, lab in enumerate(outs):
        fig.text(x0 - 6, y + (r + 0.5) * cell, lab, TICK_TEXT, anchor="end")
    fig.panels[-1].texts += list(ins) + list(outs)
    segs, acc = [], 0
    for n in in_groups[:-1]:
        acc += n
        segs.append(((x0 + acc * cell, y), (x0 + acc * cell, y + rows * cell)))
    acc = 0
    for n in out_groups[:-1]:
        acc += n
        segs.append(((x0, y + acc * cell), (x0 + cols * cell, y + acc * cell)))
    fig.lines(segs, "#000", 3)
    draw_key(fig, 8, y + rows * cell + 4, fig.width - 16, key)
    return fig


def _mma_panels(tiled_mma, op):
    """{"A": (tv, (M,K)), "B": (tv, (N,K)), "C": (tv, (M,N))} of a TiledMMA, an MMA atom or such a dict."""
    if isinstance(tiled_mma, dict) and {"A", "B", "C"} <= set(tiled_mma):
        return {k: tiled_mma[k] for k in "ABC"}
    if isinstance(tiled_mma, TiledMMA):
        tvs = tiled_mma.tv_layout_A_tiled, tiled_mma.tv_layout_B_tiled, tiled_mma.tv_layout_C_tiled
        mnk = tiled_mma.tile_size_mnk
    elif isinstance(tiled_mma, MmaAtom):
        tvs, mnk = (tiled_mma.tv_layout_A, tiled_mma.tv_layout_B, tiled_mma.tv_layout_C), tiled_mma.shape_mnk
    else:
        raise LayoutError(f"{op}: expected a TiledMMA, an MMA atom or a dict {{'A': (tv, (M,K)), 'B': ..., "
                          f"'C': ...}}, got {type(tiled_mma).__name__}")
    m, n, k = (product(x) for x in mnk)
    return {"A": (tvs[0], (m, k)), "B": (tvs[1], (n, k)), "C": (tvs[2], (m, n))}


def draw_tiled_mma(tiled_mma, *, labels=None, title=None, label_limit=_LABEL_LIMIT):
    """The A, B and C thread-value layouts of an MMA, placed like the CuTe docs' tiled-MMA figures.

    C (M x N) bottom right, A (M x K) to its left, B above C drawn as K x N (B's TV layout maps into its
    (N, K) tile; the picture transposes it so that k runs down, matching A's k running right). Each cell is
    labelled ``T<t>`` / ``V<v>`` with ``TV_COLORS[t % 8]``. ``tiled_mma``: a TiledMMA / MMA atom object
    or a dict ``{"A": (tv, (M,K)), "B": (tv, (N,K)), "C": (tv, (M,N))}``.

    >>> from layoutlab import MmaF16BF16Op, make_mma_atom
    >>> fig = draw_tiled_mma(make_mma_atom(MmaF16BF16Op("f16", "f32", (16, 8, 16))))
    >>> fig.get_suptitle(), [p.name for p in fig.panels]
    ('SM80_16x8x16_F32F16F16F32_TN', ['B: n', 'A: k', 'C: n'])
    """
    op = "draw_tiled_mma"
    panels = _mma_panels(tiled_mma, op)
    owners = {key: tv_cell_owners(_as_layout(tv, op), tile, op) for key, (tv, tile) in panels.items()}
    owners["B"] = (owners["B"][0].T(), owners["B"][1].T())
    (m, k), n = owners["A"][0].shape, owners["B"][0].shape[1]
    allt = [g for g, _ in owners.values()]
    allv = [v for _, v in owners.values()]
    chars = 1 + len(str(max(max(max(r) for r in g) for g in allt + allv)))
    want = labels if labels is not None else (None if (m + k) * (n + k) <= 2 * label_limit else False)
    cell, size = choose_cell(m + k, n + k, chars, 2, want, max_w=MAX_WIDTH - 92)
    left, top = grid_margins(max(m, k), "m", "x")
    gap, vgap = 30, top + 4         # room for C's index labels left (A names the rows) and C's names above
    content_w = left + k * cell + gap + n * cell + 16
    key = _tv_key(allt)
    width, kh = key_size(key, content_w, _TV_KEY_TITLE)
    name = tiled_mma.name if isinstance(tiled_mma, MmaAtom) else None
    if isinstance(tiled_mma, TiledMMA):
        name = f"TiledMMA of {tiled_mma.atom.name}, tile {'x'.join(str(x) for x in tiled_mma.tile_size_mnk)}"
    head = title if title is not None else (name or "MMA")
    fig, y0 = new_figure(width, top + k * cell + vgap + m * cell + 8 + kh, head,
                         f"{head}: the thread-value layouts of A ({m} x {k}), B ({k} x {n}) and C ({m} x {n})")
    x0 = (fig.width - content_w) / 2 + left
    xc, yc = x0 + k * cell + gap, y0 + top + k * cell + vgap
    for key_, (x, y, rn, cn) in {"B": (xc, y0 + top, "", "B: n"), "A": (x0, yc, "m", "A: k"),
                                 "C": (xc, yc, "", "C: n")}.items():
        thread, value = owners[key_]
        colors, _ = _tv_colors(thread, value, None, None, cell)
        _paint_tv(fig, x, y, thread, value, cell, size, mask=None, colors=colors, row_name=rn, col_name=cn)
    draw_key(fig, 8, yc + m * cell + 4, fig.width - 16, key, _TV_KEY_TITLE)
    return fig


def draw_tiled_copy(tiled_copy=None, *, src=None, dst=None, tile_mn=None, labels=None, title=None,
                    label_limit=_LABEL_LIMIT):
    """A tiled copy: which thread reads which element (Src) and which writes which element (Dst).

    Two TV pictures of the same (M, N) tile side by side, as in CuTe's ``print_latex(tiled_copy)``.
    Either a TiledCopy (``layout_src_tv_tiled`` / ``layout_dst_tv_tiled`` and ``tiler_mn``) or
    ``src=tv, dst=tv, tile_mn=(M, N)``.

    Example: ldmatrix x1 (``SM75_U32x1_LDSM_N``) reading an 8x8 fp16 matrix: in Src thread t gives the
    address of row t; in Dst thread t holds (t//4, 2*(t%4)) and (t//4, 2*(t%4)+1).

    >>> from layoutlab import parse_layout
    >>> fig = draw_tiled_copy(src=parse_layout("(8,8):(1,8)"), dst=parse_layout("((4,2),8):((2,1),8)"),
    ...                       tile_mn=(8, 8))
    >>> print(fig.get_suptitle())
    Src (8,8):(1,8)
    Dst ((4,2),8):((2,1),8)
    """
    op = "draw_tiled_copy"
    if tiled_copy is not None:
        if not isinstance(tiled_copy, TiledCopy):
            raise LayoutError(f"{op}: expected a TiledCopy, got {type(tiled_copy).__name__}; or give src=, dst= "
                              f"and tile_mn=")
        src, dst, tile_mn = tiled_copy.layout_src_tv_tiled, tiled_copy.layout_dst_tv_tiled, tiled_copy.tiler_mn
    if src is None or dst is None or tile_mn is None:
        raise LayoutError(f"{op}: give a TiledCopy, or all of src=, dst= and tile_mn=")
    if isinstance(tile_mn, (tuple, list)) and len(tile_mn) == 2 and all(isinstance(t, Layout) for t in tile_mn):
        tile_mn = tuple(product(t.shape) for t in tile_mn)
    owners = [tv_cell_owners(_as_layout(x, op), tile_mn, op) for x in (src, dst)]
    rows, cols = owners[0][0].shape
    th = [o[0] for o in owners]
    vs = [o[1] for o in owners]
    chars = 1 + len(str(max(max(max(r) for r in g) for g in th + vs)))
    want = labels if labels is not None else (None if rows * cols <= label_limit else False)
    cell, size = choose_cell(rows, 2 * cols, chars, 2, want, max_w=MAX_WIDTH - 100)
    left, top = grid_margins(rows, "", "Src")
    gap = 30
    content_w = left + 2 * cols * cell + gap + 16
    key = _tv_key(th)
    width, kh = key_size(key, content_w, _TV_KEY_TITLE)
    name = tiled_copy.atom.name if tiled_copy is not None else None
    head = title if title is not None else f"{name + ': ' if name else ''}Src {src}\nDst {dst}"
    fig, y0 = new_figure(width, top + rows * cell + 8 + kh, head,
                         f"{head}: which thread reads (Src) and writes (Dst) each cell of the {rows} x {cols} tile")
    x0 = (fig.width - content_w) / 2 + left
    for i, (nm, (thread, value)) in enumerate(zip(("Src", "Dst"), owners)):
        colors, _ = _tv_colors(thread, value, None, None, cell)
        _paint_tv(fig, x0 + i * (cols * cell + gap), y0 + top, thread, value, cell, size, mask=None,
                  colors=colors, col_name=nm)
    draw_key(fig, 8, y0 + top + rows * cell + 4, fig.width - 16, key, _TV_KEY_TITLE)
    return fig


def draw_partition(tv, tile_mn, threads, *, title=None, transpose=False, row_name="m", col_name="n"):
    """Which elements of an (M, N) tile the given threads own under a thread-value layout, everything else
    grey: each owned cell is coloured by its thread (the key) and labelled with the value index ``v``.

    ``tv`` maps (t, v) -> offset ``m + M n`` (e.g. :func:`layoutlab.bench.tour.partition_tv`). A cell that
    several of the given threads share takes the first one's colour and lists ``v`` once.
    ``transpose=True`` draws the tile as N rows x M columns (for tall tiles such as 128 x 8).

    Example: the copy partition of the CuTe tutorial's A tile, threads 0, 1 and 37, drawn K by M::

        draw_partition(partition_tv((128, 8), Layout((32, 8))), (128, 8), [0, 1, 37], transpose=True)

    >>> draw_partition(Layout((32, 8)), (128, 8), [0, 1]).get_suptitle()
    '(32,8):(1,32): threads [0, 1]'
    """
    op = "draw_partition"
    tv = _as_layout(tv, op)
    m_ext, n_ext = _tile_mn(tile_mn, op)[:2]
    if not isinstance(threads, (list, tuple, range)):
        raise LayoutError(f"{op}: threads must be a list of thread indices, e.g. [0, 1, 37], got "
                          f"{type(threads).__name__}")
    threads = list(threads)
    if not threads or len(threads) > len(_TOUR_COLORS):
        raise LayoutError(f"{op}: give 1 to {len(_TOUR_COLORS)} threads to colour, got {len(threads)}")
    thr_size, val_size = tv[0].size(), tv[1].size()
    for t in threads:
        if not isinstance(t, int) or not 0 <= t < thr_size:
            raise LayoutError(f"{op}: thread {t!r} is outside the layout's {thr_size} threads")
    owner = [[-1] * n_ext for _ in range(m_ext)]
    value = [[-1] * n_ext for _ in range(m_ext)]
    for i, t in enumerate(threads):
        for v in range(val_size):
            off = tv((t, v))
            mm, nn = off % m_ext, off // m_ext
            if nn >= n_ext:
                raise LayoutError(f"{op}: (t={t}, v={v}) -> offset {off} lies outside the {m_ext}x{n_ext} tile")
            if owner[mm][nn] < 0:
                owner[mm][nn], value[mm][nn] = i, v
    if transpose:
        owner, value = [list(r) for r in zip(*owner)], [list(r) for r in zip(*value)]
        row_name, col_name = col_name, row_name
    rows, cols = len(owner), len(owner[0])
    chars = len(str(max(max(r) for r in value)))
    cell, size = choose_cell(rows, cols, chars, 1, None)
    colors = [[_TOUR_COLORS[o] if o >= 0 else "#ededed" for o in row] for row in owner]
    text = [[str(v) if o >= 0 else "" for o, v in zip(ro, rv)] for ro, rv in zip(owner, value)] if size else None
    tcol = [[_TOUR_TEXT[o] if o >= 0 else "#000" for o in row] for row in owner]
    key = [(_TOUR_COLORS[i], f"thread {t}") for i, t in enumerate(threads)] + [("#ededed", "other threads")]
    head = title or f"{tv}: threads {threads}"
    alt = f"{head}: the {rows} x {cols} tile, the cells of threads {threads} coloured, the rest grey"
    return _grid_figure(head, alt, colors, text, cell, size, key=key,
                        key_title="colour = the thread that owns the cell" + ("; label = its value index v" if size
                                                                               else ""),
                        row_name=row_name, col_name=col_name, text_colors=tcol)


def draw_tv_legend(tv, tile_mn, *, highlight_threads=None, highlight_values=None, labels=None, title=None,
                   label_limit=_LABEL_LIMIT):
    """:func:`draw_tv_layout` with its key spelled out: the eight thread colours (``TV_COLORS[t % 8]``, named
    ``t mod 8 = k``) and how to read a cell (``T<t> V<v>``: thread t's value v). Same arguments and cells as
    :func:`draw_tv_layout`; threads that share a colour are told apart by their labels, so draw a tile small
    enough to be labelled (or use :func:`draw_partition` to colour a few chosen threads).

    Example: warp 0's corner of the WGMMA accumulator, rows 0-15 and columns 0-15 of the 64-row tile::

        draw_tv_legend(parse_layout("((4,8),(2,2,2)):((128,1),(64,8,512))"), Layout((16, 16), (1, 64)))

    >>> from layoutlab import parse_layout
    >>> fig = draw_tv_legend(parse_layout("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"), (64, 64))
    >>> fig.get_suptitle(), len(fig.legends)
    ('((4,8,4),(2,2,8)):((128,1,16),(64,8,512))', 1)
    """
    op = "draw_tv_legend"
    tv = _as_layout(tv, op)
    thread, value = tv_cell_owners(tv, tile_mn, op)
    return _tv_figure(thread, value, str(tv) if title is None else title, labels=labels, label_limit=label_limit,
                      highlight_threads=highlight_threads, highlight_values=highlight_values,
                      what="a thread-value layout")
