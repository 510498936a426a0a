"""Pictures of layouts and thread-value layouts: a layout's offsets, who owns each cell of a tile, tiled MMAs and
copies, linear layouts as F2 matrices."""

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.patches import Rectangle

from ..atoms import MmaAtom
from ..errors import LayoutError
from ..inttuple import product
from ..layout import Layout
from ..linear import LinearLayout
from ..tiled import TiledCopy, TiledMMA
from .figure import (BANK_COLORS, TV_COLORS, _BANKS, _BookFigure, _EMPTY, _LABEL_LIMIT, _as_layout, _cell_inches,
                     _cell_labels, _fade, _fontsize, _index_labels, _modes, _offsets, _paint,
                     _relabel_columns, _relabel_rows, _single_grid_figure, _tile_mn, _want_labels)

__all__ = [
    "draw_layout", "draw_tv_layout", "draw_f2_matrix", "draw_tiled_mma", "draw_tiled_copy", "tv_cell_owners",
    "linear_tv_owners", "draw_partition", "draw_tv_legend",
]


def _first_owners(m, n, thread_of, value_of, m_ext, n_ext):
    """(thread, value) grids of shape (m_ext, n_ext): for each cell (m, n) the first (t, v) in thread-major
    order (t outer, v inner) that lands there, as print_latex_tv draws it; -1 where no one does."""
    order = np.lexsort((value_of, thread_of))
    cells = (m * n_ext + n)[order]
    first_cells, first_pos = np.unique(cells, return_index=True)
    thread = np.full(m_ext * n_ext, -1, dtype=np.int64)
    value = np.full(m_ext * n_ext, -1, dtype=np.int64)
    thread[first_cells] = thread_of[order][first_pos]
    value[first_cells] = value_of[order][first_pos]
    return thread.reshape(m_ext, n_ext), value.reshape(m_ext, n_ext)


def tv_cell_owners(tv, tile_mn, op="tv_cell_owners"):
    """Which (thread, value) owns each cell of the (M, N) tile under the TV layout ``tv``.

    ``tv`` maps (t, v) -> offset in the tile; with the tile (M,N):(s_m,s_n) the cell is
    ``m = (offset // s_m) % M``, ``n = (offset // s_n) % N`` (for the plain ``(M, N)`` tile, column-major:
    ``m = offset % M``, ``n = offset // M``). Like ``print_latex_tv``, a cell reached by several (t, v)
    (broadcast) shows the first one in thread-major order. Returns ``(thread, value)``, two (M, N) int arrays
    with -1 where no (t, v) lands.

    The WGMMA 64x64 accumulator (PTX ISA, "wgmma 64xNx16 accumulator D"): (t,v)=(1,0) -> offset 128 ->
    (m,n)=(0,2), so thread[0,2] == 1 and value[0,2] == 0:

    >>> from layoutlab import parse_layout
    >>> thread, value = tv_cell_owners(parse_layout("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"), (64, 64))
    >>> thread[0, :4], value[0, :4]               # row 0: T0 V0, T0 V1, T1 V0, T1 V1
    (array([0, 0, 1, 1]), array([0, 1, 0, 1]))
    """
    tv = _as_layout(tv, op)
    modes = _modes(tv, op)
    if len(modes) != 2:
        raise LayoutError(f"{op}: the TV layout {tv} has rank {len(modes)}; it must be rank 2 (thread, value)")
    num_t, num_v = product(modes[0]), product(modes[1])
    m_ext, n_ext, s_m, s_n = _tile_mn(tile_mn, op)
    offsets = _offsets(tv, op)  # index t + T*v
    cosize = (m_ext - 1) * s_m + (n_ext - 1) * s_n + 1
    if offsets.size and (offsets.min() < 0 or offsets.max() >= cosize):
        bad = int(np.flatnonzero((offsets < 0) | (offsets >= cosize))[0])
        raise LayoutError(f"{op}: (t,v)=({bad % num_t},{bad // num_t}) maps to offset {int(offsets[bad])}, "
                          f"outside the {m_ext}x{n_ext} tile; the tile must cover the TV layout's cosize")
    m = (offsets // s_m) % m_ext
    n = (offsets // s_n) % n_ext
    # thread-major order (t outer, v inner), first writer wins as in print_latex_tv
    t_idx = np.arange(offsets.size) % num_t
    v_idx = np.arange(offsets.size) // num_t
    return _first_owners(m, n, t_idx, v_idx, m_ext, n_ext)


def draw_layout(layout, *, color_by="offset", labels=None, highlight=None, title=None,
                label_limit=_LABEL_LIMIT):
    """The 2-D grid of a rank-1 or rank-2 layout, each cell (m, n) showing its offset ``layout(m, n)``.

    Mode 0 runs down (rows m), mode 1 to the right (columns n); a cell's offset is
    ``layout(m + M*n)`` with M = size(mode 0), as in CuTe's ``print_layout`` / ``print_latex``.
    A rank-1 layout is drawn as one column (CuTe appends the mode ``1:0``).

    ``color_by``: ``"offset"`` (pastel ``TV_COLORS[offset % 8]``), ``"bank"`` (``BANK_COLORS``, 4-byte
    elements) or ``None`` (white). ``highlight``: a set of (m, n) cells to outline; the rest is faded.

    Example: ``(4,8):(8,1)`` (row-major 4x8) puts offset 9 at (m,n)=(1,1) and 8 at (1,0)::

        draw_layout(parse_layout("(4,8):(8,1)"))

    >>> fig = draw_layout(Layout((4, 8), (8, 1)))
    >>> fig.get_suptitle(), len(fig.axes)
    ('(4,8):(8,1)', 1)
    """
    layout = _as_layout(layout, "draw_layout")
    modes = _modes(layout, "draw_layout")
    if len(modes) > 2:
        raise LayoutError(f"draw_layout: {layout} has rank {len(modes)}; only rank 1 or 2 can be drawn as a "
                          f"grid (group modes first, e.g. with group_modes or a rank-2 reshape)")
    rows = product(modes[0])
    cols = product(modes[1]) if len(modes) == 2 else 1
    grid = _offsets(layout, "draw_layout").reshape(cols, rows).T
    if color_by == "offset":
        rgb = TV_COLORS[grid % 8]
    elif color_by == "bank":
        rgb = BANK_COLORS[grid % _BANKS]
    elif color_by is None:
        rgb = np.ones((rows, cols, 3))
    else:
        raise LayoutError(f"draw_layout: color_by={color_by!r}; use 'offset', 'bank' or None")
    mask = None
    if highlight:
        mask = np.zeros((rows, cols), dtype=bool)
        for m, n in highlight:
            mask[m, n] = True
        rgb = _fade(rgb, mask)
    fig, ax, cell = _single_grid_figure(rows, cols, str(layout) if title is None else title)
    text = None
    if _want_labels(labels, rows * cols, label_limit, cell):
        text = grid.astype(str)
    _paint(ax, rgb, text, fontsize=_fontsize(cell, 1, len(str(int(grid.max(initial=0))))), outline=mask)
    return fig


def _tv_image(thread, value, highlight_threads, highlight_values, darken=False):
    rgb = TV_COLORS[np.maximum(thread, 0) % 8]
    rgb[thread < 0] = _EMPTY
    mask = None
    if highlight_threads is not None or highlight_values is not None:
        mask = thread >= 0
        if highlight_threads is not None:
            mask &= np.isin(thread, list(highlight_threads))
        if highlight_values is not None:
            mask &= np.isin(value, list(highlight_values))
        rgb = _fade(rgb, mask)
        if darken:  # cells too small to outline: show the selection as darker cells instead
            rgb = np.where(mask[..., None], rgb * 0.55, rgb)
            mask = None
    return rgb, mask


def _tv_labels(thread, value):
    labels = np.char.add(np.char.add("T", thread.astype(str)), np.char.add("\nV", value.astype(str)))
    labels[thread < 0] = ""
    return labels


def _draw_tv_on(ax, thread, value, cell, *, labels, label_limit, highlight_threads=None,
                highlight_values=None, row_name="", col_name="", transpose=False):
    if transpose:
        thread, value = thread.T, value.T
    rgb, mask = _tv_image(thread, value, highlight_threads, highlight_values, darken=cell * 72 < 8)
    text = None
    if _want_labels(labels, thread.size, label_limit, cell):
        text = _tv_labels(thread, value)
    chars = len(str(int(max(thread.max(initial=0), value.max(initial=0))))) + 1
    _paint(ax, rgb, text, fontsize=_fontsize(cell, 2, chars), outline=mask, bold=mask,
           row_name=row_name, col_name=col_name)


def draw_tv_layout(tv, tile_mn, *, highlight_threads=None, highlight_values=None, inverse=False,
                   labels=None, title=None, label_limit=_LABEL_LIMIT):
    """A thread-value layout on its (M, N) tile: each cell labelled ``T<t>`` / ``V<v>`` and coloured by thread.

    ``tv`` maps (t, v) -> offset; the cell is ``(m, n) = (offset % M, offset // M)`` for the tile (M, N)
    (or ``tile_mn`` as a rank-2 Layout, see :func:`tv_cell_owners`). Colours are ``TV_COLORS[t % 8]`` as in
    CuTe's ``print_latex_tv``. ``highlight_threads`` / ``highlight_values`` outline the cells of those
    threads / values (both given: their intersection) and fade the rest.

    ``inverse=True`` draws the other direction: the (T, V) grid (rows t, columns v), each cell labelled with
    the ``(m,n)`` that (t, v) writes.

    ``tv`` may also be a distributed :class:`~layoutlab.linear.LinearLayout` (input dims ``register``,
    ``lane``, ``warp``; two output dims m = ``dim0``, n = ``dim1``): then t = lane + 32 * warp (lanes per
    warp = 2^(number of lane bits)), v = register, and ``tile_mn`` may be None (the output dims' sizes).

    The WGMMA accumulator on a 64x64 tile (cell (0,2) reads ``T1 V0``):

    >>> from layoutlab import parse_layout
    >>> draw_tv_layout(parse_layout("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"), (64, 64)).get_suptitle()
    '((4,8,4),(2,2,8)):((128,1,16),(64,8,512))'
    """
    if isinstance(tv, LinearLayout):
        return _draw_linear_tv(tv, tile_mn, highlight_threads=highlight_threads,
                               highlight_values=highlight_values, labels=labels, title=title,
                               label_limit=label_limit)
    tv = _as_layout(tv, "draw_tv_layout")
    title = str(tv) if title is None else title
    if inverse:
        return _draw_tv_inverse(tv, tile_mn, labels=labels, title=title, label_limit=label_limit,
                                highlight_threads=highlight_threads, highlight_values=highlight_values)
    thread, value = tv_cell_owners(tv, tile_mn, "draw_tv_layout")
    rows, cols = thread.shape
    fig, ax, cell = _single_grid_figure(rows, cols, title)
    _draw_tv_on(ax, thread, value, cell, labels=labels, label_limit=label_limit,
                highlight_threads=highlight_threads, highlight_values=highlight_values)
    return fig


def linear_tv_owners(linear_layout, op="draw_tv_layout"):
    """(thread, value) arrays over the (dim0, dim1) tile of a distributed linear layout (first writer in
    thread-major order, -1 where nothing lands), with t = lane + 2^lane_bits * warp and v = register.

    Evaluated for all inputs at once: the output is the XOR of the basis vectors of the set input bits.
    Example: bases register [[0,1]], lane [[1,0],[2,0]] on a 4x2 tile: lane 1, register 1 -> (1, 1).

    >>> ll = LinearLayout.from_bases([("register", [[0, 1]]), ("lane", [[1, 0], [2, 0]])], ["dim0", "dim1"])
    >>> thread, value = linear_tv_owners(ll)
    >>> thread[1].tolist(), value[1].tolist()     # row 1: lane 1 holds registers 0 and 1
    ([1, 1], [0, 1])
    """
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
    x = np.arange(1 << total, dtype=np.int64)
    m = np.zeros_like(x)
    n = np.zeros_like(x)
    j = 0
    for d in ("register", "lane", "warp"):
        for vec in bases.get(d, []):
            bit = (x >> j) & 1
            m ^= bit * int(vec[0])
            n ^= bit * int(vec[1])
            j += 1
    reg = x & ((1 << bits["register"]) - 1)
    lane = (x >> bits["register"]) & ((1 << bits["lane"]) - 1)
    warp = x >> (bits["register"] + bits["lane"])
    t = lane + (warp << bits["lane"])
    (_, m_ext), (_, n_ext) = outs
    return _first_owners(m, n, t, reg, m_ext, n_ext)


def _draw_linear_tv(ll, tile_mn, *, highlight_threads, highlight_values, labels, title, label_limit):
    thread, value = linear_tv_owners(ll)
    if tile_mn is not None and tuple(product(x) for x in tile_mn) != thread.shape:
        raise LayoutError(f"draw_tv_layout: tile_mn {tile_mn} differs from the linear layout's output sizes "
                          f"{thread.shape}; pass tile_mn=None")
    rows, cols = thread.shape
    head = title if title is not None else "linear layout: t = lane + 32*warp, v = register"
    fig, ax, cell = _single_grid_figure(rows, cols, head)
    _draw_tv_on(ax, thread, value, cell, labels=labels, label_limit=label_limit,
                highlight_threads=highlight_threads, highlight_values=highlight_values)
    return fig


def _draw_tv_inverse(tv, tile_mn, *, labels, title, label_limit, highlight_threads, highlight_values):
    modes = _modes(tv, "draw_tv_layout")
    if len(modes) != 2:
        raise LayoutError(f"draw_tv_layout: the TV layout {tv} has rank {len(modes)}; it must be rank 2")
    num_t, num_v = product(modes[0]), product(modes[1])
    m_ext, n_ext, s_m, s_n = _tile_mn(tile_mn, "draw_tv_layout")
    tv_cell_owners(tv, tile_mn, "draw_tv_layout")  # validates that every offset lies in the tile
    offsets = _offsets(tv, "draw_tv_layout").reshape(num_v, num_t).T  # [t, v]
    m, n = (offsets // s_m) % m_ext, (offsets // s_n) % n_ext
    thread = np.repeat(np.arange(num_t)[:, None], num_v, axis=1)
    value = np.repeat(np.arange(num_v)[None, :], num_t, axis=0)
    rgb, mask = _tv_image(thread, value, highlight_threads, highlight_values)
    fig, ax, cell = _single_grid_figure(num_t, num_v, title + "\n(t, v) -> (m, n)")
    text = None
    if _want_labels(labels, num_t * num_v, label_limit, cell):
        text = np.char.add(np.char.add(m.astype(str), ","), n.astype(str))
    chars = len(str(m_ext)) + len(str(n_ext)) + 1
    _paint(ax, rgb, text, fontsize=_fontsize(cell, 1, chars), outline=mask, row_name="thread t",
           col_name="value v")
    return fig


_SHORT = {"register": "reg", "lane": "lane", "warp": "warp", "block": "block", "offset": "off"}


def _f2_parts(linear_layout):
    """(matrix[out_bits, in_bits] of 0/1, in-bit labels, out-bit labels, in-group sizes, out-group sizes)."""
    if isinstance(linear_layout, (np.ndarray, list)):
        linear_layout = np.asarray(linear_layout)
        mat = (np.asarray(linear_layout) & 1).astype(np.int64)
        if mat.ndim != 2:
            raise LayoutError(f"draw_f2_matrix: a matrix must be 2-D, got shape {mat.shape}")
        return (mat, [f"in{j}" for j in range(mat.shape[1])], [f"out{i}" for i in range(mat.shape[0])],
                [mat.shape[1]], [mat.shape[0]])
    if not isinstance(linear_layout, LinearLayout):
        raise LayoutError("draw_f2_matrix: expected a LinearLayout or a 0/1 "
                          f"numpy matrix, got {type(linear_layout).__name__}")
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
    total_out = sum(n for _, n in out_bits)
    mat = np.array(linear_layout.get_matrix_view(), dtype=np.int64).reshape(total_out, len(in_labels))
    out_labels = [f"{name}.{b}" for name, n in out_bits for b in range(n)]
    return mat, in_labels, out_labels, in_groups, [n for _, n in out_bits]


def draw_f2_matrix(linear_layout, *, title=None, in_labels=None, out_labels=None):
    """A linear layout as its 0/1 matrix over F2: one column per input bit, one row per output bit.

    Column j is the image of input bit j (``reg0, reg1, ..., lane0, ..., warp0, ...``): output bit i is set
    iff entry (i, j) is 1, and the layout maps an input x to the XOR of the columns of x's set bits.
    Rows are labelled ``<out dim>.<bit>`` (bit 0 = least significant); thick lines separate the input
    dimensions (reg / lane / warp) and the output dimensions. Accepts a LinearLayout (``.bases`` as
    ``{in_dim: [basis vector per bit]}``, ``.out_dims`` as ``{out_dim: size}``) or a 0/1 numpy matrix.

    Example: a layout with ``bases={"lane": [[1,0],[2,0],[0,1]]}``, ``out_dims={"dim0": 4, "dim1": 2}``
    gives the 3x3 identity: lane0 -> dim0.0, lane1 -> dim0.1, lane2 -> dim1.0.

    >>> ll = LinearLayout.from_bases([("register", [[0, 1]]), ("lane", [[1, 0], [2, 0]])], ["dim0", "dim1"])
    >>> draw_f2_matrix(ll).get_suptitle()
    'F2 matrix: 3 input bits -> 3 output bits'
    """
    mat, ins, outs, in_groups, out_groups = _f2_parts(linear_layout)
    ins = list(in_labels) if in_labels is not None else ins
    outs = list(out_labels) if out_labels is not None else outs
    rows, cols = mat.shape
    cell = _cell_inches(max(rows, 1), max(cols, 1), max_w=9, max_h=7, preferred=0.4)
    left, top = 0.9, 1.0
    width, height = left + max(cols, 1) * cell + 0.3, top + max(rows, 1) * cell + 0.25
    fig = _BookFigure(figsize=(max(width, 2.5), height))
    w_in, h_in = fig.get_size_inches()
    ax = fig.add_axes((left / w_in, 0.25 / h_in, max(cols, 1) * cell / w_in, max(rows, 1) * cell / h_in))
    group_of_col = np.repeat(np.arange(len(in_groups)), in_groups) if cols else np.zeros(0, dtype=int)
    ones = np.array([0.2, 0.2, 0.45])
    rgb = np.ones((rows, cols, 3))
    if cols:
        rgb[mat == 1] = ones
        shade = TV_COLORS[group_of_col % 8]
        zero = np.broadcast_to(shade, (rows, cols, 3))
        rgb[mat == 0] = zero[mat == 0]
    text = np.where(mat == 1, "1", "0").astype(object) if rows * cols <= 2048 else None
    _paint(ax, rgb, None, grid=True)
    fs = min(8, max(4, cell * 72 * 0.5))
    _relabel_columns(ax, [], [])
    _relabel_rows(ax, [], [])
    _index_labels(ax, range(cols), ins, range(rows), outs, fontsize=fs, rotate_x=True)
    if text is not None:
        _cell_labels(ax, text, _fontsize(cell, 1, 1), colors=np.where(mat == 1, "white", "black"))
    segs = []
    for boundary in np.cumsum(in_groups)[:-1]:
        segs.append(((boundary - 0.5, -0.5), (boundary - 0.5, rows - 0.5)))
    for boundary in np.cumsum(out_groups)[:-1]:
        segs.append(((-0.5, boundary - 0.5), (cols - 0.5, boundary - 0.5)))
    ax.add_collection(LineCollection(segs, colors="black", linewidths=2.5))
    name = title if title is not None else f"F2 matrix: {cols} input bits -> {rows} output bits"
    fig.suptitle(name, fontfamily="monospace", fontsize=9, y=1 - 0.08 / h_in, va="top")
    return fig


def _mma_panels(tiled_mma, op):
    """{"A": (tv, (M,K)), "B": (tv, (N,K)), "C": (tv, (M,N))} of a TiledMMA, an MMA atom or such a dict."""
    if isinstance(tiled_mma, dict) and {"A", "B", "C"} <= set(tiled_mma):
        return {k: tiled_mma[k] for k in "ABC"}
    # a TiledMMA's tiled layouts cover its whole tile; a bare atom's cover shape_mnk
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
    (``tv_layout_A/B/C`` and ``shape_mnk``) or a dict ``{"A": (tv, (M,K)), "B": (tv, (N,K)), "C": (tv, (M,N))}``.

    Example: SM80 16x8x8 (``SM80_16x8x8_F32F16F16F32_TN``): C is ``((4,8),(2,2)):((32,1),(16,8))`` on
    (16, 8) -- thread 1 value 0 lands at (m,n)=(0,2).

    >>> from layoutlab.atoms import MmaF16BF16Op, make_mma_atom
    >>> fig = draw_tiled_mma(make_mma_atom(MmaF16BF16Op("f16", "f32", (16, 8, 16))))
    >>> fig.get_suptitle(), len(fig.axes)         # panels B, A, C
    ('SM80_16x8x16_F32F16F16F32_TN', 3)
    """
    op = "draw_tiled_mma"
    panels = _mma_panels(tiled_mma, op)
    owners = {key: tv_cell_owners(_as_layout(tv, op), tile, op) for key, (tv, tile) in panels.items()}
    (m, k), (n, _) = owners["A"][0].shape, owners["B"][0].shape
    cell = _cell_inches(m + k, n + k, max_w=10, max_h=10)
    gap, left, top = 0.55, 0.55, 0.9
    width = left + k * cell + gap + n * cell + 0.2
    height = top + k * cell + gap + m * cell + 0.2
    fig = _BookFigure(figsize=(width, height))

    def box(x, y, w, h):
        return (x / width, 1 - (y + h) / height, w / width, h / height)

    axes = {"B": fig.add_axes(box(left + k * cell + gap, top, n * cell, k * cell)),
            "A": fig.add_axes(box(left, top + k * cell + gap, k * cell, m * cell)),
            "C": fig.add_axes(box(left + k * cell + gap, top + k * cell + gap, n * cell, m * cell))}
    names = {"A": ("m", "k"), "B": ("k", "n"), "C": ("m", "n")}
    for key, ax in axes.items():
        thread, value = owners[key]
        _draw_tv_on(ax, thread, value, cell, labels=labels, label_limit=label_limit,
                    row_name=names[key][0], col_name=f"{key}: {names[key][1]}", transpose=(key == "B"))
    name = tiled_mma.name if isinstance(tiled_mma, MmaAtom) else None
    if isinstance(tiled_mma, TiledMMA):
        name = f"TiledMMA of {tiled_mma.atom.name}, tile {'x'.join(str(x) for x in tiled_mma.tile_size_mnk)}"
    fig.suptitle(title if title is not None else (name or "MMA"),
                 fontfamily="monospace", fontsize=10, y=1 - 0.08 / height, va="top")
    return fig


def draw_tiled_copy(tiled_copy=None, *, src=None, dst=None, tile_mn=None, labels=None, title=None,
                    label_limit=_LABEL_LIMIT):
    """A tiled copy: which thread reads which element (Src) and which writes which element (Dst).

    Two TV pictures of the same (M, N) tile side by side, as in CuTe's ``print_latex(tiled_copy)``.
    Either a TiledCopy-like object (``layout_src_tv_tiled`` / ``layout_dst_tv_tiled`` and ``tiler_mn``) or
    ``src=tv, dst=tv, tile_mn=(M, N)``.

    Example: ldmatrix x1 (``SM75_U32x1_LDSM_N``) reading an 8x8 fp16 matrix: in Src thread t gives the
    address of row t (``8:1`` threads x ``8:8`` values, one row each); in Dst thread t holds (t//4, 2*(t%4))
    and (t//4, 2*(t%4)+1).

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
    cell = _cell_inches(rows, 2 * cols, max_w=10, max_h=9)
    left, gap, top = 0.55, 0.55, 1.75                  # the title, then the colour legend
    width = left + 2 * cols * cell + gap + 0.2
    height = top + rows * cell + 0.2
    fig = _BookFigure(figsize=(width, height))
    for i, (name, (thread, value)) in enumerate(zip(("Src", "Dst"), owners)):
        x = left + i * (cols * cell + gap)
        ax = fig.add_axes((x / width, 0.2 / height, cols * cell / width, rows * cell / height))
        _draw_tv_on(ax, thread, value, cell, labels=labels, label_limit=label_limit, col_name=name)
    name = tiled_copy.atom.name if tiled_copy is not None else None
    head = f"{name}: " if name else ""
    fig.suptitle(title if title is not None else f"{head}Src {src}\nDst {dst}", fontfamily="monospace",
                 fontsize=9, y=1 - 0.08 / height, va="top")
    _tv_colour_legend(fig, [thread for thread, _ in owners], 0.55)
    return fig


_TOUR_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def draw_partition(tv, tile_mn, threads, *, title=None, transpose=False, row_name="m", col_name="n"):
    """Which elements of an (M, N) tile the given threads own under a thread-value layout, everything else
    grey: each owned cell is coloured by its thread (legend) and labelled with the value index ``v``.

    ``tv`` maps (t, v) -> offset ``m + M n`` (e.g. :func:`layoutlab.bench.tour.partition_tv`). A cell that
    several of the given threads share (a projected partition) takes the first one's colour and lists
    ``v`` once. ``transpose=True`` draws the tile as N rows x M columns (for tall tiles such as 128 x 8).

    Example: the copy partition of the CuTe tutorial's A tile, threads 0, 1 and 37, drawn K by M::

        draw_partition(partition_tv((128, 8), Layout((32, 8))), (128, 8), [0, 1, 37], transpose=True)

    >>> draw_partition(Layout((32, 8)), (128, 8), [0, 1]).get_suptitle()
    '(32,8):(1,32): threads [0, 1]'
    """
    op = "draw_partition"
    tv = _as_layout(tv, op)
    m_ext, n_ext = _tile_mn(tile_mn, op)[:2]
    threads = list(threads)
    if not threads or len(threads) > len(_TOUR_COLORS):
        raise LayoutError(f"{op}: give 1 to {len(_TOUR_COLORS)} threads to colour, got {len(threads)}")
    thr_size = tv[0].size()
    val_size = tv[1].size()
    for t in threads:
        if not isinstance(t, (int, np.integer)) or not 0 <= t < thr_size:
            raise LayoutError(f"{op}: thread {t!r} is outside the layout's {thr_size} threads")
    owner = -np.ones((m_ext, n_ext), dtype=int)
    value = -np.ones((m_ext, n_ext), dtype=int)
    for i, t in enumerate(threads):
        for v in range(val_size):
            off = tv((t, v))
            mm, nn = off % m_ext, off // m_ext
            if nn >= n_ext:
                raise LayoutError(f"{op}: (t={t}, v={v}) -> offset {off} lies outside the {m_ext}x{n_ext} tile")
            if owner[mm, nn] < 0:
                owner[mm, nn], value[mm, nn] = i, v
    if transpose:
        owner, value = owner.T, value.T
        row_name, col_name = col_name, row_name
    rows, cols = owner.shape
    from matplotlib.colors import to_rgb
    rgb = np.ones((rows, cols, 3)) * 0.93
    for i in range(len(threads)):
        rgb[owner == i] = to_rgb(_TOUR_COLORS[i])
    fig, ax, cell = _single_grid_figure(rows, cols, title or f"{tv}: threads {threads}", extra_h=0.35)
    labels = np.where(owner >= 0, value.astype(str), "")
    _paint(ax, rgb, labels if cell * 72 >= 7 else None, fontsize=_fontsize(cell, 1, 2), row_name=row_name,
           col_name=col_name)
    handles = [Rectangle((0, 0), 1, 1, facecolor=_TOUR_COLORS[i], edgecolor="#444") for i in range(len(threads))]
    handles.append(Rectangle((0, 0), 1, 1, facecolor=(0.93, 0.93, 0.93), edgecolor="#444"))
    names = [f"thread {t}" for t in threads] + ["other threads"]
    h = fig.get_size_inches()[1]
    fig.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, 1 - 0.42 / h), ncol=len(names),
               frameon=False, prop={"family": "monospace", "size": 7})
    return fig


def draw_tv_legend(tv, tile_mn, *, highlight_threads=None, highlight_values=None, labels=None, title=None,
                   label_limit=_LABEL_LIMIT):
    """:func:`draw_tv_layout` with a legend: the eight thread colours (``TV_COLORS[t % 8]``, named
    ``t = k mod 8``) and how to read a cell (``T<t> V<v>``: thread t's value v). Same arguments and cells as
    :func:`draw_tv_layout` (a CuTe TV layout on an ``(M, N)`` tile or a rank-2 tile layout); threads that share
    a colour are told apart by their labels, so draw a tile small enough to be labelled (or use
    :func:`draw_partition` to colour a few chosen threads).

    Example: warp 0's corner of the WGMMA accumulator, rows 0-15 and columns 0-15 of the 64-row tile::

        draw_tv_legend(parse_layout("((4,8),(2,2,2)):((128,1),(64,8,512))"), Layout((16, 16), (1, 64)))

    >>> from layoutlab import parse_layout
    >>> fig = draw_tv_legend(parse_layout("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"), (64, 64))
    >>> fig.get_suptitle()
    '((4,8,4),(2,2,8)):((128,1,16),(64,8,512))'
    """
    op = "draw_tv_legend"
    tv = _as_layout(tv, op)
    title = str(tv) if title is None else title
    thread, value = tv_cell_owners(tv, tile_mn, op)
    rows, cols = thread.shape
    fig, ax, cell = _single_grid_figure(rows, cols, title, extra_h=0.55)
    _draw_tv_on(ax, thread, value, cell, labels=labels, label_limit=label_limit,
                highlight_threads=highlight_threads, highlight_values=highlight_values)
    _tv_colour_legend(fig, [thread], 0.40)
    return fig


def _tv_colour_legend(fig, thread_grids, top_inches):
    """The legend of a TV picture: the thread colours used (``TV_COLORS[t % 8]``) and how to read a cell,
    placed ``top_inches`` below the figure's top."""
    used = sorted({int(t) % 8 for grid in thread_grids for t in np.unique(grid[grid >= 0])})
    handles = [Rectangle((0, 0), 1, 1, facecolor=TV_COLORS[k], edgecolor="#444") for k in used]
    names = [f"t = {k} mod 8" for k in used]
    h = fig.get_size_inches()[1]
    fig.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, 1 - top_inches / h),
               ncol=min(len(used), 4), frameon=False, prop={"family": "monospace", "size": 7},
               title="cell: T<t> V<v> = thread t, value v", title_fontsize=7)
