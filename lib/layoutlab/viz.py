"""Pictures of layouts: every concept of the course as a matplotlib Figure.

Each ``draw_*`` function returns a :class:`matplotlib.figure.Figure` (not a pyplot figure, so notebooks show
it exactly once and nothing accumulates in pyplot's registry). Save it with ``fig.savefig("x.svg")`` or turn
it into bytes with :func:`figure_to_png` / :func:`figure_to_svg`.

The look follows CuTe's ``print_latex`` / ``print_latex_tv``: M grows downwards, N to the right, row indices
on the left, column indices on top, and the eight pastel thread colours of ``print_latex_tv`` cycling over
threads (``TV_COLORS[t % 8]``). Shared-memory banks always use :data:`BANK_COLORS` (bank ``b`` has the same
colour in every picture of the book).

Large tiles stay fast: cells are painted as one image (``imshow``), grid lines are two line collections, and
per-cell text labels are only drawn up to ``label_limit`` cells (pass ``labels=True`` to force them).
"""

import colorsys
import io
from functools import lru_cache

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Rectangle
from matplotlib.path import Path
from matplotlib.textpath import TextPath
from matplotlib.transforms import Affine2D

from .errors import LayoutError

__all__ = [
    "show_table",
    "TV_COLORS",
    "BANK_COLORS",
    "FONT",
    "draw_layout",
    "draw_tv_layout",
    "draw_swizzle",
    "draw_bank_map",
    "draw_f2_matrix",
    "draw_tiled_mma",
    "draw_tiled_copy",
    "draw_gemm_tiling",
    "tv_cell_owners",
    "linear_tv_owners",
    "figure_to_png",
    "figure_to_svg",
]

# print_latex_tv's eight pastels (RGB/255), cycled by thread index.
TV_COLORS = np.array([
    (175, 175, 255), (175, 255, 175), (255, 255, 175), (255, 175, 175),
    (210, 210, 255), (210, 255, 210), (255, 255, 210), (255, 210, 210),
]) / 255.0

# 32 shared-memory banks around the hue wheel (pale enough for black text): bank b -> BANK_COLORS[b].
BANK_COLORS = np.array([colorsys.hsv_to_rgb(b / 32, 0.45, 1.0) for b in range(32)])

FONT = {"family": "monospace"}
_EMPTY = np.array([1.0, 1.0, 1.0])
_CONFLICT = "#d62728"
_LABEL_LIMIT = 512
_BANKS, _BANK_BYTES = 32, 4


class _BookFigure(Figure):
    """A Figure with an Agg canvas (so ``fig.canvas.draw()`` renders without pyplot) that also shows itself
    as PNG where no inline backend is active (e.g. ``MPLBACKEND=Agg``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        FigureCanvasAgg(self)

    def _repr_png_(self):
        return figure_to_png(self)


def figure_to_png(fig, dpi=80):
    """PNG bytes of ``fig`` (``dpi`` 80 keeps pages light: a 6-inch picture is ~480 pixels wide).

    Example: ``figure_to_png(draw_layout(parse_layout("(2,2):(1,2)")))[:4] == b"\\x89PNG"``.
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def figure_to_svg(fig):
    """SVG text of ``fig`` (cell labels are glyph outlines, index labels and titles are text).

    Example: ``"<svg" in figure_to_svg(draw_layout(parse_layout("(2,2):(1,2)")))``.
    """
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    return buf.getvalue()


# ---------------------------------------------------------------- reading layouts (duck-typed, vectorised)

def _flatten(t):
    if isinstance(t, (tuple, list)):
        return [x for e in t for x in _flatten(e)]
    return [t]


def _product(t):
    return int(np.prod([int(x) for x in _flatten(t)], dtype=np.int64))


def _as_layout(x, op):
    """Strings in CuTe notation are parsed with the library's parser; everything else is used as given."""
    if isinstance(x, str):
        from . import layout as _layout_module
        parse = getattr(_layout_module, "parse_layout", None)
        if parse is None:
            raise LayoutError(f"{op}: cannot parse {x!r}: layoutlab.parse_layout is not available yet; "
                              f"pass a Layout object")
        return parse(x)
    return x


def _shape_of(layout, op):
    shape = getattr(layout, "shape", None)
    if shape is None:
        raise LayoutError(f"{op}: expected a Layout (an object with .shape), got {type(layout).__name__}")
    return shape


def _modes(layout, op):
    """The top-level modes of ``layout``'s shape as a tuple (a rank-1 layout has one mode)."""
    shape = _shape_of(layout, op)
    return tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)


def _swizzle_bms(swz):
    """(B, M, S) of a swizzle object, whatever the attribute names of its implementation."""
    for names in (("bits", "base", "shift"), ("num_bits", "num_base", "num_shft"), ("B", "M", "S"),
                  ("bbits", "mbase", "sshift"), ("num_bits", "num_base", "num_shift")):
        if all(hasattr(swz, n) for n in names):
            return tuple(int(getattr(swz, n)) for n in names)
    return None


def _apply_swizzle(bms, offsets):
    """CuTe Swizzle<B,M,S>: XOR the B bits at [M+S, M+S+B) into the bits at [M, M+B) (S may be negative)."""
    b, m, s = bms
    mask = (1 << b) - 1
    yyy = mask << (m + max(0, s))
    if s >= 0:
        return offsets ^ ((offsets & yyy) >> s)
    return offsets ^ ((offsets & yyy) << -s)


def _offsets(layout, op):
    """Offsets of every index of ``layout`` in CuTe's colexicographic order, as an int64 array.

    Plain layouts use the vectorised ``Layout.table()``; composed layouts are ``inner(offset + outer(i))``
    (a swizzle inner applied vectorised); anything else is called index by index.
    """
    inner, outer = getattr(layout, "inner", None), getattr(layout, "outer", None)
    if inner is not None and outer is not None:
        base = _offsets(outer, op) + int(getattr(layout, "offset", 0) or 0)
        bms = _swizzle_bms(inner)
        if bms is not None:
            return _apply_swizzle(bms, base)
        if hasattr(inner, "shape"):
            table = _offsets(inner, op)
            return table[base]
        return np.array([int(inner(int(o))) for o in base], dtype=np.int64)
    if hasattr(layout, "table"):
        return np.asarray(layout.table(), dtype=np.int64).ravel()
    size = _product(_shape_of(layout, op))
    return np.array([int(layout(i)) for i in range(size)], dtype=np.int64)


def _tile_mn(tile_mn, op):
    """(M, N, stride_m, stride_n) of a tile given as (M, N) (column-major) or as a rank-2 Layout."""
    if hasattr(tile_mn, "shape"):
        modes = _modes(tile_mn, op)
        stride = getattr(tile_mn, "stride", None)
        if len(modes) != 2 or not isinstance(stride, (tuple, list)) or \
                not all(isinstance(s, (int, np.integer)) for s in stride) or \
                not all(isinstance(s, (int, np.integer)) for s in modes):
            raise LayoutError(f"{op}: tile_mn {tile_mn} must be (M, N) or a rank-2 layout with integer modes")
        return int(modes[0]), int(modes[1]), int(stride[0]), int(stride[1])
    if not isinstance(tile_mn, (tuple, list)) or len(tile_mn) != 2:
        raise LayoutError(f"{op}: tile_mn must be a pair (M, N), got {tile_mn!r}")
    m, n = (_product(x) for x in tile_mn)
    if m < 1 or n < 1:
        raise LayoutError(f"{op}: tile_mn {tile_mn!r} must have positive extents")
    return m, n, 1, m


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

    Example (seed 000, the WGMMA 64x64 accumulator)::

        tv = ((4,8,4),(2,2,8)):((128,1,16),(64,8,512)),  tile (64,64)
        (t,v)=(1,0) -> offset 128 -> (m,n)=(0,2), so thread[0,2] == 1 and value[0,2] == 0
    """
    tv = _as_layout(tv, op)
    modes = _modes(tv, op)
    if len(modes) != 2:
        raise LayoutError(f"{op}: the TV layout {tv} has rank {len(modes)}; it must be rank 2 (thread, value)")
    num_t, num_v = _product(modes[0]), _product(modes[1])
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


# ---------------------------------------------------------------- painting grids

def _cell_inches(rows, cols, max_w=9.0, max_h=9.0, preferred=0.45):
    return max(min(preferred, max_w / cols, max_h / rows), 0.012)


def _fontsize(cell_in, lines=1, chars=3):
    pts = cell_in * 72
    return float(np.clip(min(pts * 0.8 / lines, pts * 1.2 / max(chars, 1)), 3.0, 10.0))


def _tick_step(extent):
    """Index labels every 1, 2, 4, ... cells: at most 16 labels per side (8 on big tiles, where each text
    artist is a noticeable part of the redraw time)."""
    most = 16 if extent <= 64 else 8
    step = 1
    while extent / step > most:
        step *= 2
    return step


def _paint(ax, rgb, labels=None, *, fontsize=8, grid=True, outline=None, row_name="", col_name="",
           col_offset=0, row_offset=0, bold=None):
    """Paint an (R, C, 3) colour image as grid cells on ``ax``; optional per-cell labels and outlines."""
    rows, cols = rgb.shape[:2]
    # uint8 RGBA skips matplotlib's normalisation and RGBA conversion passes (a third of a big redraw)
    rgba = np.full(rgb.shape[:2] + (4,), 255, dtype=np.uint8)
    rgba[..., :3] = np.round(np.asarray(rgb) * 255)
    ax.imshow(rgba, interpolation="none", aspect="equal",
              extent=(-0.5 + col_offset, cols - 0.5 + col_offset, rows - 0.5 + row_offset, -0.5 + row_offset))
    if grid:
        step = 1 if max(rows, cols) <= 64 else 8
        width = 0.8 if step == 1 else 0.5
        xs = np.arange(0, cols + 1, step) - 0.5 + col_offset
        ys = np.arange(0, rows + 1, step) - 0.5 + row_offset
        top, bottom = -0.5 + row_offset, rows - 0.5 + row_offset
        left, right = -0.5 + col_offset, cols - 0.5 + col_offset
        segs = [((x, top), (x, bottom)) for x in xs] + [((left, y), (right, y)) for y in ys]
        ax.add_collection(LineCollection(segs, colors="black", linewidths=width))
    if labels is not None:
        _cell_labels(ax, labels, fontsize, bold=bold, col_offset=col_offset, row_offset=row_offset)
    if outline is not None and outline.any():
        rr, cc = np.nonzero(outline)
        squares = [((c - .5 + col_offset, r - .5 + row_offset), (c + .5 + col_offset, r - .5 + row_offset),
                    (c + .5 + col_offset, r + .5 + row_offset), (c - .5 + col_offset, r + .5 + row_offset))
                   for r, c in zip(rr, cc)]
        cell_pts = ax.get_position().width * ax.figure.get_figwidth() * 72 / max(cols, 1)
        ax.add_collection(PolyCollection(squares, facecolors="none", edgecolors="black",
                                         linewidths=float(np.clip(cell_pts * 0.1, 0.3, 2.0))))
    ax.set_xlim(-0.5 + col_offset, cols - 0.5 + col_offset)
    ax.set_ylim(rows - 0.5 + row_offset, -0.5 + row_offset)
    rstep, cstep = _tick_step(rows), _tick_step(cols)
    _index_labels(ax, np.arange(0, cols, cstep) + col_offset, [str(i) for i in range(0, cols, cstep)],
                  np.arange(0, rows, rstep) + row_offset, [str(i) for i in range(0, rows, rstep)])
    _axis_names(ax, row_name, col_name)
    for spine in ax.spines.values():
        spine.set_visible(False)


_FONTS = {}


@lru_cache(maxsize=4096)
def _line_path(line, weight):
    """One line of text as a glyph outline at a 1-point font, centred horizontally on x = 0 (cached: the
    labels of a tile reuse few distinct lines, e.g. T0..T127 and V0..V31)."""
    font = _FONTS.setdefault(weight, FontProperties(family="monospace", weight=weight))
    path = TextPath((0, 0), line, size=1, prop=font)
    if not len(path.vertices):
        return None
    x0, x1 = path.vertices[:, 0].min(), path.vertices[:, 0].max()
    return Path(path.vertices - [(x0 + x1) / 2, 0], path.codes)


@lru_cache(maxsize=16384)
def _label_path(text, weight="normal"):
    """The outline of ``text``: lines stacked 1.05 em apart, the whole centred on (0, 0)."""
    pieces = []
    for i, line in enumerate(text.split("\n")):
        path = _line_path(line, weight)
        if path is not None:
            pieces.append(Path(path.vertices - [0, 1.05 * i], path.codes))
    if not pieces:
        return Path(np.zeros((1, 2)), [Path.MOVETO])
    compound = Path.make_compound_path(*pieces)
    y0, y1 = compound.vertices[:, 1].min(), compound.vertices[:, 1].max()
    return Path(compound.vertices - [0, (y0 + y1) / 2], compound.codes)


def _cell_labels(ax, labels, fontsize, *, bold=None, colors=None, col_offset=0, row_offset=0):
    """Per-cell text as glyph outlines in one PathCollection per weight: one artist instead of one Text per
    cell, so a labelled 16x32 tile redraws in tens of milliseconds. The strings are kept on the collection
    as ``cell_labels = {(row, col): text}``."""
    for weight in ("normal", "bold"):
        cells = [(r, c) for (r, c), text in np.ndenumerate(labels) if text and
                 (bold is not None and bool(bold[r, c])) == (weight == "bold")]
        if not cells:
            continue
        paths = [_label_path(str(labels[r, c]), weight) for r, c in cells]
        offsets = [(c + col_offset, r + row_offset) for r, c in cells]
        face = "black" if colors is None else [colors[r, c] for r, c in cells]
        coll = PathCollection(paths, offsets=offsets, offset_transform=ax.transData, facecolors=face,
                              edgecolors="none", linewidths=0)
        coll.set_transform(Affine2D().scale(fontsize / 72.0) + ax.figure.dpi_scale_trans)
        coll.cell_labels = {cell: str(labels[cell]) for cell in cells}
        coll.label_weight = weight
        ax.add_collection(coll, autolim=False)


def _index_labels(ax, xs, xlabels, ys, ylabels, fontsize=8, rotate_x=False):
    """Column labels above and row labels left of the grid, as plain text: matplotlib Tick objects cost
    milliseconds each, and a picture that redraws in a widget cannot afford dozens of them."""
    ax.set_xticks([])
    ax.set_yticks([])
    for x, text in zip(xs, xlabels):
        ax.annotate(text, (x, 1), xycoords=("data", "axes fraction"), xytext=(0, 2), textcoords="offset points",
                    ha="center", va="bottom", fontsize=fontsize, fontfamily="monospace",
                    rotation=90 if rotate_x else 0)
    for y, text in zip(ys, ylabels):
        ax.annotate(text, (0, y), xycoords=("axes fraction", "data"), xytext=(-3, 0), textcoords="offset points",
                    ha="right", va="center", fontsize=fontsize, fontfamily="monospace")


def _relabel_columns(ax, xs, labels, fontsize=8):
    """Replace the column index labels that _paint put above the grid."""
    for text in [t for t in ax.texts if t.get_va() == "bottom" and getattr(t, "xycoords", None) == ("data", "axes fraction")]:
        text.remove()
    for x, label in zip(xs, labels):
        ax.annotate(label, (x, 1), xycoords=("data", "axes fraction"), xytext=(0, 2), textcoords="offset points",
                    ha="center", va="bottom", fontsize=fontsize, fontfamily="monospace")


def _relabel_rows(ax, ys, labels, fontsize=8):
    """Replace the row index labels that _paint put left of the grid."""
    for text in [t for t in ax.texts if getattr(t, "xycoords", None) == ("axes fraction", "data")]:
        text.remove()
    for y, label in zip(ys, labels):
        ax.annotate(label, (0, y), xycoords=("axes fraction", "data"), xytext=(-3, 0), textcoords="offset points",
                    ha="right", va="center", fontsize=fontsize, fontfamily="monospace")


def _axis_names(ax, row_name, col_name, pad=12):
    if row_name:
        ax.set_ylabel(row_name, fontfamily="monospace", labelpad=18)
    if col_name:
        ax.xaxis.set_label_position("top")
        ax.set_xlabel(col_name, fontfamily="monospace", labelpad=pad)


def _title_inches(title, fontsize=10):
    """Width a monospace title needs (0.6 em per character), so that figures are never narrower."""
    return 0.6 * fontsize / 72 * max((len(line) for line in str(title or "").split("\n")), default=0) + 0.3


def _single_grid_figure(rows, cols, title, extra_h=0.0):
    cell = _cell_inches(rows, cols)
    top = 0.75 + extra_h + 0.17 * str(title or "").count("\n")
    right, bottom = 0.2, 0.2
    width = max(cols * cell + 0.55 + right, 2.5, _title_inches(title))
    left = max(0.55, (width - cols * cell) / 2)     # centre the grid under a wide title
    height = rows * cell + top + bottom
    fig = _BookFigure(figsize=(width, height))
    w, h = fig.get_size_inches()
    ax = fig.add_axes((left / w, bottom / h, cols * cell / w, rows * cell / h))
    if title:
        fig.suptitle(title, fontfamily="monospace", fontsize=10, y=1 - 0.12 / h, va="top")
    return fig, ax, cell


def _want_labels(labels, cells, label_limit, cell_in=1.0):
    """Explicit ``labels`` wins; by default label only tiles of at most ``label_limit`` readable cells."""
    return bool(labels) if labels is not None else (cells <= label_limit and cell_in >= 0.2)


def _fade(rgb, mask, amount=0.78):
    """Blend the cells outside ``mask`` towards white so the highlighted ones stand out."""
    return np.where(mask[..., None], rgb, rgb + (1 - rgb) * amount)


# ---------------------------------------------------------------- plain layouts

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
    """
    layout = _as_layout(layout, "draw_layout")
    modes = _modes(layout, "draw_layout")
    if len(modes) > 2:
        raise LayoutError(f"draw_layout: {layout} has rank {len(modes)}; only rank 1 or 2 can be drawn as a "
                          f"grid (group modes first, e.g. with group_modes or a rank-2 reshape)")
    rows = _product(modes[0])
    cols = _product(modes[1]) if len(modes) == 2 else 1
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


# ---------------------------------------------------------------- thread-value layouts

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

    Example (seed 000): the WGMMA accumulator on a 64x64 tile, cell (0,2) reads ``T1 V0``::

        draw_tv_layout(parse_layout("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"), (64, 64))
    """
    if hasattr(tv, "bases") and hasattr(tv, "out_dims"):
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
    if tile_mn is not None and tuple(_product(x) for x in tile_mn) != thread.shape:
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
    num_t, num_v = _product(modes[0]), _product(modes[1])
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


# ---------------------------------------------------------------- swizzles and banks

def _bank_of(offsets, element_bytes):
    return (offsets * element_bytes // _BANK_BYTES) % _BANKS


def _smem_offsets(layout, element_bytes, op):
    """Physical element offsets of ``layout`` placed in shared memory.

    A swizzled ComposedLayout's swizzle acts on *byte* addresses there (the DSL applies it to the smem
    pointer; the GMMA atoms' ``S<3,4,3>`` is the 128-byte pattern for every element size), so the offsets are
    ``swizzle((offset + outer(i)) * element_bytes) / element_bytes`` — not the swizzle of the element offset.
    """
    inner, outer = getattr(layout, "inner", None), getattr(layout, "outer", None)
    bms = _swizzle_bms(inner) if inner is not None and outer is not None else None
    if bms is None:
        return _offsets(layout, op)
    base = (_offsets(outer, op) + int(getattr(layout, "offset", 0) or 0)) * element_bytes
    return _apply_swizzle(bms, base) // element_bytes


def _swizzle_tile(swizzle_or_composed, shape, op, element_bytes):
    """(rows, cols, physical element offsets[rows, cols]) for a bare swizzle (acting on the element offsets of
    a row-major tile) or a layout (a swizzled ComposedLayout acts on byte addresses, see _smem_offsets)."""
    bms = _swizzle_bms(swizzle_or_composed)
    if bms is not None and not hasattr(swizzle_or_composed, "shape"):
        b, m, s = bms
        if shape is None:
            cols = 1 << (m + max(s, 0))
            rows = max(1 << b, 1)
        else:
            rows, cols = shape
        if rows * cols > 1 << 15:
            raise LayoutError(f"{op}: the tile {rows}x{cols} is too large to draw (at most 32768 cells); "
                              f"pass a smaller shape=(rows, cols)")
        logical = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)  # row-major
        return rows, cols, _apply_swizzle(bms, logical)
    layout = _as_layout(swizzle_or_composed, op)
    modes = _modes(layout, op)
    if len(modes) != 2:
        raise LayoutError(f"{op}: {layout} has rank {len(modes)}; draw a rank-2 (rows, cols) tile")
    rows, cols = _product(modes[0]), _product(modes[1])
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
    from .banks import bank_conflicts
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


# ---------------------------------------------------------------- linear layouts over F2

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
    bases = getattr(linear_layout, "bases", None)
    out_dims = getattr(linear_layout, "out_dims", None)
    if bases is None or out_dims is None:
        raise LayoutError("draw_f2_matrix: expected a LinearLayout (with .bases and .out_dims) or a 0/1 "
                          f"numpy matrix, got {type(linear_layout).__name__}")
    out_items = list(out_dims.items()) if hasattr(out_dims, "items") else list(out_dims)
    out_bits = []
    for name, size in out_items:
        size = int(size)
        if size & (size - 1):
            raise LayoutError(f"draw_f2_matrix: out dim {name} has size {size}, not a power of two")
        out_bits.append((str(name), size.bit_length() - 1))
    in_items = list(bases.items()) if hasattr(bases, "items") else list(bases)
    columns, in_labels, in_groups = [], [], []
    for name, vectors in in_items:
        short = _SHORT.get(str(name), str(name))
        in_groups.append(len(vectors))
        for j, vec in enumerate(vectors):
            vec = list(vec) if isinstance(vec, (tuple, list)) else [vec]
            column = []
            for (oname, nbits), comp in zip(out_bits, vec):
                column += [(int(comp) >> b) & 1 for b in range(nbits)]
            columns.append(column)
            in_labels.append(f"{short}{j}")
    total_out = sum(n for _, n in out_bits)
    if hasattr(linear_layout, "get_matrix_view"):
        mat = np.array(linear_layout.get_matrix_view(), dtype=np.int64).reshape(total_out, len(columns))
    else:
        mat = np.array(columns, dtype=np.int64).T if columns else np.zeros((total_out, 0), dtype=np.int64)
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


# ---------------------------------------------------------------- tiled MMA / tiled copy / GEMM tiling

def _attr(obj, names, what, op):
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        value = getattr(obj, name, None)
        if value is not None:
            return value() if callable(value) and not hasattr(value, "shape") else value
    raise LayoutError(f"{op}: {type(obj).__name__} has no {what} (looked for {', '.join(names)})")


def _mma_panels(tiled_mma, op):
    """{"A": (tv, (M,K)), "B": (tv, (N,K)), "C": (tv, (M,N))} from a TiledMMA-like object or a dict."""
    if isinstance(tiled_mma, dict) and {"A", "B", "C"} <= set(tiled_mma):
        return {k: tiled_mma[k] for k in "ABC"}
    # a TiledMMA's tiled layouts cover its whole tile; a bare atom's cover shape_mnk
    tv_a = _attr(tiled_mma, ("tv_layout_A_tiled", "tv_layout_A", "layout_a_tv"), "A TV layout", op)
    tv_b = _attr(tiled_mma, ("tv_layout_B_tiled", "tv_layout_B", "layout_b_tv"), "B TV layout", op)
    tv_c = _attr(tiled_mma, ("tv_layout_C_tiled", "tv_layout_C", "layout_c_tv"), "C TV layout", op)
    mnk = _attr(tiled_mma, ("tile_size_mnk", "shape_mnk"), "tile shape (M,N,K)", op)
    m, n, k = (_product(x) for x in mnk)
    return {"A": (tv_a, (m, k)), "B": (tv_b, (n, k)), "C": (tv_c, (m, n))}


def draw_tiled_mma(tiled_mma, *, labels=None, title=None, label_limit=_LABEL_LIMIT):
    """The A, B and C thread-value layouts of an MMA, placed like the CuTe docs' tiled-MMA figures.

    C (M x N) bottom right, A (M x K) to its left, B above C drawn as K x N (B's TV layout maps into its
    (N, K) tile; the picture transposes it so that k runs down, matching A's k running right). Each cell is
    labelled ``T<t>`` / ``V<v>`` with ``TV_COLORS[t % 8]``. ``tiled_mma``: a TiledMMA / MMA atom object
    (``tv_layout_A/B/C`` and ``shape_mnk``) or a dict ``{"A": (tv, (M,K)), "B": (tv, (N,K)), "C": (tv, (M,N))}``.

    Example: SM80 16x8x8 (``SM80_16x8x8_F32F16F16F32_TN``): C is ``((4,8),(2,2)):((32,1),(16,8))`` on
    (16, 8) -- thread 1 value 0 lands at (m,n)=(0,2).
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
    name = getattr(tiled_mma, "name", None) or getattr(getattr(tiled_mma, "atom", None), "name", None)
    if name and hasattr(tiled_mma, "tile_size_mnk"):
        name = f"TiledMMA of {name}, tile {'x'.join(str(x) for x in tiled_mma.tile_size_mnk)}"
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
    """
    op = "draw_tiled_copy"
    if tiled_copy is not None:
        src = _attr(tiled_copy, ("layout_src_tv_tiled",), "Src TV layout", op)
        dst = _attr(tiled_copy, ("layout_dst_tv_tiled",), "Dst TV layout", op)
        tile_mn = _attr(tiled_copy, ("tiler_mn",), "tile (M, N)", op)
    if src is None or dst is None or tile_mn is None:
        raise LayoutError(f"{op}: give a TiledCopy, or all of src=, dst= and tile_mn=")
    if isinstance(tile_mn, (tuple, list)) and len(tile_mn) == 2 and all(hasattr(t, "shape") for t in tile_mn):
        tile_mn = tuple(_product(t.shape) for t in tile_mn)
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
    name = getattr(getattr(tiled_copy, "atom", None), "name", None)
    head = f"{name}: " if name else ""
    fig.suptitle(title if title is not None else f"{head}Src {src}\nDst {dst}", fontfamily="monospace",
                 fontsize=9, y=1 - 0.08 / height, va="top")
    _tv_colour_legend(fig, [thread for thread, _ in owners], 0.55)
    return fig


def draw_gemm_tiling(m, n, k, block_mnk, *, thread_mn=None, block=(0, 0), k_tile=0, title=None):
    """How a GEMM C[M,N] += A[M,K] B[K,N] is cut: CTA blocks over C, k-tiles along K, thread tiles in a block.

    C is split into ``ceil(M/bM) x ceil(N/bN)`` blocks, one per CTA; the CTA at ``block=(i, j)`` walks A's
    row panel and B's column panel in ``ceil(K/bK)`` k-tiles (numbered ``k0, k1, ...``; ``k_tile`` is
    drawn darker). ``thread_mn=(tM, tN)`` splits the highlighted C block among tM x tN threads into *blocked*
    ``bM/tM x bN/tN`` sub-tiles (thread 0 outlined) -- not the raked partition that ``local_partition`` gives the
    CuTe tutorial's GEMM, where a thread's elements lie tM rows and tN columns apart: draw that with
    :func:`draw_partition`. Drawn to scale: A left, B on top, C bottom right.

    Example: ``draw_gemm_tiling(256, 256, 64, (128, 128, 8), thread_mn=(16, 16))`` shows 2x2 CTAs, 8 k-tiles,
    and a blocked split of one C block among 256 threads, 8x8 contiguous elements each.
    """
    op = "draw_gemm_tiling"
    for name, value in (("M", m), ("N", n), ("K", k)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise LayoutError(f"{op}: {name}={value!r} must be a positive integer")
    if len(block_mnk) != 3 or any(not isinstance(b, (int, np.integer)) or b < 1 for b in block_mnk):
        raise LayoutError(f"{op}: block_mnk={block_mnk!r} must be three positive integers (bM, bN, bK)")
    bm, bn, bk = block_mnk
    grid_m, grid_n, k_tiles = -(-m // bm), -(-n // bn), -(-k // bk)
    bi, bj = block
    if not (0 <= bi < grid_m and 0 <= bj < grid_n):
        raise LayoutError(f"{op}: block={block!r} outside the {grid_m}x{grid_n} grid of CTAs")
    if thread_mn is not None:
        tm, tn = thread_mn
        if bm % tm or bn % tn:
            raise LayoutError(f"{op}: thread_mn={thread_mn!r} must divide the block ({bm}, {bn}) evenly")
    scale = 6.0 / max(m + k, n + k)
    gap, left, top = 0.35, 0.5, 0.8
    width = left + (k + n) * scale + gap + 0.3
    height = top + (k + m) * scale + gap + 0.3
    fig = _BookFigure(figsize=(width, height))

    def box(x, y, w, h):
        return (x / width, 1 - (y + h) / height, w / width, h / height)

    ax_a = fig.add_axes(box(left, top + k * scale + gap, k * scale, m * scale))
    ax_b = fig.add_axes(box(left + k * scale + gap, top, n * scale, k * scale))
    ax_c = fig.add_axes(box(left + k * scale + gap, top + k * scale + gap, n * scale, m * scale))
    pale, strong = TV_COLORS[0], np.array([0.35, 0.35, 0.85])
    for ax, (rows, cols), label in ((ax_a, (m, k), "A (M x K)"), (ax_b, (k, n), "B (K x N)"),
                                    (ax_c, (m, n), "C (M x N)")):
        ax.set_xlim(0, cols)
        ax.set_ylim(rows, 0)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(label, fontsize=8, fontfamily="monospace")
    # A: the block's row panel, cut into k-tiles
    for t in range(k_tiles):
        kx = t * bk
        ax_a.add_patch(Rectangle((kx, bi * bm), min(bk, k - kx), min(bm, m - bi * bm),
                                 facecolor=strong if t == k_tile else pale, edgecolor="black", lw=0.6))
        ax_b.add_patch(Rectangle((bj * bn, kx), min(bn, n - bj * bn), min(bk, k - kx),
                                 facecolor=strong if t == k_tile else pale, edgecolor="black", lw=0.6))
        roomy = bk * scale >= 0.14       # inches per k-tile: label each, or only the first and last
        if roomy or t in (0, k_tiles - 1):
            ax_a.text(kx + min(bk, k - kx) / 2, min(m, (bi + 1) * bm) + 0.02 * m, f"k{t}", ha="center",
                      va="top", fontsize=6, fontfamily="monospace")
            ax_b.text(bj * bn - 0.01 * n, kx + min(bk, k - kx) / 2, f"k{t}", ha="right", va="center",
                      fontsize=6, fontfamily="monospace")
    # C: the CTA grid, the highlighted block and its thread tiles
    segs = [((j * bn, 0), (j * bn, m)) for j in range(grid_n + 1)] + \
           [((0, i * bm), (n, i * bm)) for i in range(grid_m + 1)]
    ax_c.add_collection(LineCollection(segs, colors="black", linewidths=0.8))
    ax_c.add_patch(Rectangle((bj * bn, bi * bm), min(bn, n - bj * bn), min(bm, m - bi * bm),
                             facecolor=pale, edgecolor="black", lw=1.5))
    if grid_m * grid_n <= 64:
        for i in range(grid_m):
            for j in range(grid_n):
                ax_c.text(j * bn + bn / 2, i * bm + bm / 2, f"CTA\n({i},{j})", ha="center", va="center",
                          fontsize=6, fontfamily="monospace", alpha=0.6)
    if thread_mn is not None:
        sm, sn = bm // tm, bn // tn
        segs = [((bj * bn + j * sn, bi * bm), (bj * bn + j * sn, bi * bm + bm)) for j in range(tn + 1)] + \
               [((bj * bn, bi * bm + i * sm), (bj * bn + bn, bi * bm + i * sm)) for i in range(tm + 1)]
        ax_c.add_collection(LineCollection(segs, colors="gray", linewidths=0.3))
        ax_c.add_patch(Rectangle((bj * bn, bi * bm), sn, sm, facecolor=strong, edgecolor="black", lw=1.0))
    head = title if title is not None else \
        f"GEMM {m}x{n}x{k}, CTA tile {bm}x{bn}x{bk}: {grid_m}x{grid_n} CTAs, {k_tiles} k-tiles" + \
        (f", {tm}x{tn} threads of {bm // tm}x{bn // tn}" if thread_mn is not None else "")
    fig.suptitle(head, fontfamily="monospace", fontsize=8, y=1 - 0.08 / height, va="top")
    return fig


def show_table(header, rows):
    """Show ``rows`` under ``header`` as an HTML table in Jupyter and on the website (text elsewhere).

    Text in backticks becomes code. Outside IPython the table is printed as aligned text, so scripts and
    tests see the same content.
    """
    import html
    import re

    rows = [list(r) for r in rows]
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        get_ipython = None
    if get_ipython is None or get_ipython() is None:
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
        for r in [header, *rows]:
            print("  ".join(f"{str(x):{w}s}" for x, w in zip(r, widths)))
        return

    def cell(x):
        return re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(str(x)))

    head = "".join(f"<th>{cell(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in r) + "</tr>" for r in rows)
    display(HTML(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"))


# ----------------------------------------------------------------- chapter 6 (ldmatrix): pictures/widgets below

__all__ += ["draw_ldmatrix"]


def draw_ldmatrix(op, *, title=None):
    """One ``ldmatrix`` / ``stmatrix`` instruction as the PTX ISA draws it (sections "Warp-level matrix load
    instruction: ldmatrix" and "... store instruction: stmatrix"), computed from the atom's TV layouts.

    The grid is the instruction's 8x8 matrices as they sit in shared memory, stacked (matrix ``j`` = rows
    ``8j..8j+7``), each row 16 contiguous bytes. Left: the lane whose address names that row (color = lane).
    Right: which lane holds each element in which register -- ``T5`` lane 5, ``d1.0`` register ``d1``,
    low 16-bit half (color = the holding lane). With ``.trans`` each matrix arrives transposed: a lane's pair
    runs down a column.
    """
    from .atoms import LdMatrix8x8x16bOp, StMatrix8x8x16bOp
    from .ldmatrix import ldmatrix_address_lane, ldmatrix_owner

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



# ----------------------------------------------------------------- chapter 7 (cp.async, TMA): pictures/widgets below

__all__ += ["draw_tma_box", "draw_mbarrier_timeline"]

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
    """
    from .tma import box_placement
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


def draw_mbarrier_timeline(barrier, *, title=None):
    """An ``mbarrier``'s life from its ``log`` (a :class:`layoutlab.tma.MBarrier`): one column per event,
    with the pending arrivals and the transaction bytes still expected after it, and the phase number;
    a phase completes (shaded boundary) when both reach zero (PTX ISA, "mbarrier": phase completion,
    ``expect-tx`` / ``complete-tx``)."""
    log = list(barrier.log)
    if not log:
        raise LayoutError("draw_mbarrier_timeline: the barrier has no events yet")
    n = len(log)
    fig = _BookFigure(figsize=(max(4.0, 1.25 * n + 1.5), 3.2))
    ax = fig.add_axes((0.1, 0.34, 0.78, 0.5))
    tx = [e[3] for e in log]
    pend = [e[2] for e in log]
    xs = np.arange(n)
    ax.step(xs, tx, where="post", color="#1f77b4", label="bytes still expected (tx-count)")
    ax2 = ax.twinx()
    ax2.step(xs, pend, where="post", color="#d62728", ls="--", label="arrivals pending")
    ax2.set_ylim(-0.2, max(pend + [barrier.count]) + 0.5)
    ax.set_ylim(-0.05 * max(tx + [1]), max(tx + [1]) * 1.15)
    for i, e in enumerate(log):
        if e[0].endswith("phase complete"):
            ax.axvspan(i - 0.5, i + 0.5, color="#2ca02c", alpha=0.15)
        ax.text(i, -0.32, e[0].replace(" -> phase complete", "\n→ phase done"), transform=ax.get_xaxis_transform(),
                ha="center", va="top", fontsize=7, fontfamily="monospace")
        ax.text(i, 1.02, f"phase {e[1]}", transform=ax.get_xaxis_transform(), ha="center", fontsize=7)
    ax.set_xticks([])
    ax.set_ylabel("tx bytes", fontsize=8)
    ax2.set_ylabel("arrivals", fontsize=8)
    fig.legend(loc="upper right", fontsize=7, frameon=False)
    fig.suptitle(title or f"mbarrier (expected arrivals {barrier.count}): green = a phase completes",
                 fontsize=9, y=0.99, va="top")
    return fig


# ----------------------------------------------------------------- chapter 8 (warpgroup MMA): pictures/widgets below

_GMMA_FIELD_COLORS = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5")


def draw_gmma_descriptor(desc, *, title=None):
    """The 64 bits of a wgmma shared-memory descriptor as labelled fields (the PTX ISA's table, redrawn).

    ``desc`` is a :class:`layoutlab.gmma.GmmaDescriptor` or a 64-bit int. Two rows of 32 bits (63..32 on
    top, 31..0 below), each field coloured and labelled with its name and value; reserved bits grey.
    Example: ``draw_gmma_descriptor(0x4000004000010000)`` (128B swizzle, SBO 64 = 1024 bytes).
    """
    from .gmma import GmmaDescriptor, decode_gmma_desc
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
    """
    from .gmma import LayoutType, gmma_canonical_layout, gmma_read_addresses, make_gmma_desc, wgmma_k
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


def draw_wgmma_timeline(k_blocks=4, *, title=None):
    """What may overlap with ``wgmma``: one warpgroup's instruction stream against the tensor cores.

    ``wgmma.fence`` orders earlier register/shared-memory writes before the MMAs read them;
    ``wgmma.mma_async`` only *issues* (the warps go on); ``commit_group`` closes a group;
    ``wait_group N`` blocks until at most N groups are pending -- only then may the accumulators (and the
    shared memory the group reads) be touched again. Independent work can fill the gap.
    """
    fig = _BookFigure(figsize=(9.6, 2.6))
    ax = fig.add_axes((0.12, 0.1, 0.86, 0.7))
    ax.set_ylim(-0.2, 2.4)
    ax.axis("off")
    steps = [("stores to smem\nfence.proxy.async", "#e0e0e0", 2.2), ("wgmma.fence", "#ffbb78", 1.2)]
    steps += [(f"mma_async\nk-block {i}", "#aec7e8", 1.0) for i in range(k_blocks)]
    steps += [("commit_group", "#98df8a", 1.3), ("independent work\n(not acc, not its smem)", "#f7f7f7", 2.6),
              ("wait_group 0", "#ff9896", 1.3), ("read / write\naccumulators", "#c5b0d5", 1.8)]
    x = 0.0
    mma_x = []
    for label, color, w in steps:
        ax.add_patch(Rectangle((x, 1.4), w - 0.08, 0.8, facecolor=color, edgecolor="#444", lw=0.6))
        ax.text(x + (w - 0.08) / 2, 1.8, label, ha="center", va="center", fontsize=6.5, **FONT)
        if label.startswith("mma_async"):
            mma_x.append(x)
        if label.startswith("wait_group"):
            wait_x = x
        x += w
    # the tensor cores run the issued MMAs one after the other, finishing before wait_group returns
    t = mma_x[0] + 0.4
    for i, mx in enumerate(mma_x):
        ax.annotate("", xy=(t + 0.2, 0.95), xytext=(mx + 0.45, 1.38),
                    arrowprops=dict(arrowstyle="->", lw=0.6, color="#1f77b4"))
        ax.add_patch(Rectangle((t, 0.3), 1.55, 0.65, facecolor="#aec7e8", edgecolor="#1f77b4", lw=0.6))
        ax.text(t + 0.78, 0.62, f"MMA {i}", ha="center", va="center", fontsize=6.5, **FONT)
        t += 1.6
    ax.annotate("", xy=(wait_x + 0.6, 1.38), xytext=(t - 0.05, 0.62),
                arrowprops=dict(arrowstyle="->", lw=0.8, color="#d62728"))
    ax.text(-0.15, 1.8, "warpgroup\n(issues)", ha="right", va="center", fontsize=7, **FONT)
    ax.text(-0.15, 0.62, "tensor cores\n(execute)", ha="right", va="center", fontsize=7, **FONT)
    ax.set_xlim(-0.2, x + 0.1)
    fig.suptitle(title or "wgmma: fence, issue, commit, overlap, wait (PTX ISA, wgmma.fence / commit_group / "
                          "wait_group)", fontsize=8.5, **FONT)
    return fig


__all__ += ["draw_gmma_descriptor", "draw_gmma_canonical", "draw_wgmma_timeline"]


# --- chapter 9 (GEMM tour): pictures below

from matplotlib.lines import Line2D  # noqa: E402  (chapter 9 only)

_TOUR_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def draw_partition(tv, tile_mn, threads, *, title=None, transpose=False, row_name="m", col_name="n"):
    """Which elements of an (M, N) tile the given threads own under a thread-value layout, everything else
    grey: each owned cell is coloured by its thread (legend) and labelled with the value index ``v``.

    ``tv`` maps (t, v) -> offset ``m + M n`` (e.g. :func:`layoutlab.bench.tour.partition_tv`). A cell that
    several of the given threads share (a projected partition) takes the first one's colour and lists
    ``v`` once. ``transpose=True`` draws the tile as N rows x M columns (for tall tiles such as 128 x 8).

    Example: the copy partition of the CuTe tutorial's A tile, threads 0, 1 and 37, drawn K by M::

        draw_partition(partition_tv((128, 8), Layout((32, 8))), (128, 8), [0, 1, 37], transpose=True)
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


def draw_tour_bars(rows, *, title=None):
    """The tour's measured TFLOP/s, one bar per step (log scale), with cuBLAS on the same dtype and shape
    as a black tick and the percentage written beside. ``rows`` as :func:`layoutlab.bench.tour.tour_rows`
    returns them (keys kernel, dtype, m, n, k, tflops, cublas_tflops, pct_cublas)."""
    op = "draw_tour_bars"
    if not rows:
        raise LayoutError(f"{op}: no rows to draw")
    for r in rows:
        for key in ("kernel", "dtype", "tflops", "cublas_tflops", "pct_cublas"):
            if key not in r:
                raise LayoutError(f"{op}: row {r.get('kernel', '?')} lacks {key!r} (use tour.tour_rows)")
    n = len(rows)
    fig = _BookFigure(figsize=(8.0, 0.62 * n + 1.4))
    ax = fig.add_axes([0.27, 0.22, 0.6, 0.66])
    ys = np.arange(n)[::-1]
    for y, r, c in zip(ys, rows, _TOUR_COLORS):
        ax.barh(y, r["tflops"], color=c, height=0.6)
        ax.plot([r["cublas_tflops"]] * 2, [y - 0.38, y + 0.38], color="black", lw=2)
        ax.text(max(r["tflops"], r["cublas_tflops"]) * 1.08, y, f"{r['pct_cublas']:.1f} %", va="center",
                fontsize=8, **FONT)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{r['kernel']}\n{r['dtype']} {r['m']}x{r['n']}x{r['k']}" for r in rows],
                       fontsize=7, **FONT)
    ax.set_xscale("log")
    ax.set_xlim(10, 3000)
    ax.set_xlabel("TFLOP/s (log scale)", fontsize=8)
    bar = Rectangle((0, 0), 1, 1, facecolor="#888")
    tick = Line2D([0], [0], color="black", lw=2)
    fig.legend([bar, tick], ["kernel", "cuBLAS, same dtype, shape and run"], loc="lower center", ncol=2,
               fontsize=7, frameon=False)
    fig.suptitle(title or "The tour, measured: TFLOP/s and % of cuBLAS", fontsize=9, **FONT)
    return fig


def draw_roofline(points, roofs, bandwidth_tbs, *, title=None):
    """A roofline (log-log): for each roof ``(label, peak TFLOP/s)`` the line ``min(peak, I * bandwidth)``,
    and each point ``(label, intensity, tflops, tile_intensity)`` as a filled dot at its DRAM intensity and
    a hollow one at its tile intensity (FLOP per byte a CTA loads), joined by a dotted line.
    Intensities in FLOP/byte, bandwidth in TB/s."""
    op = "draw_roofline"
    if not roofs or not points:
        raise LayoutError(f"{op}: needs at least one roof and one point")
    if bandwidth_tbs <= 0:
        raise LayoutError(f"{op}: bandwidth_tbs={bandwidth_tbs!r} must be positive")
    fig = _BookFigure(figsize=(8.0, 4.6))
    ax = fig.add_axes([0.1, 0.12, 0.56, 0.78])
    xs = np.logspace(0, 4, 200)
    for (label, peak), style in zip(roofs, ["-", "--", "-.", ":"]):
        ax.plot(xs, np.minimum(peak, xs * bandwidth_tbs), color="black", ls=style, lw=1,
                label=f"roof: {label} ({peak:.0f} TFLOP/s, {bandwidth_tbs} TB/s)")
    for (label, ai, tflops, tile_ai), c in zip(points, _TOUR_COLORS):
        ax.plot([tile_ai, ai], [tflops, tflops], color=c, ls=":", lw=1)
        ax.plot(tile_ai, tflops, "o", mfc="none", mec=c, ms=7)
        ax.plot(ai, tflops, "o", color=c, ms=7, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP / byte)", fontsize=8)
    ax.set_ylabel("TFLOP/s", fontsize=8)
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    handles, labels = ax.get_legend_handles_labels()
    handles += [Line2D([0], [0], marker="o", color="#555", ls="none"),
                Line2D([0], [0], marker="o", mfc="none", mec="#555", ls="none")]
    labels += ["filled: DRAM intensity (A, B read once, C written once)",
               "hollow: tile intensity (every k-tile from DRAM)"]
    fig.legend(handles, labels, loc="center right", fontsize=6.5, frameon=False)
    fig.suptitle(title or "Roofline: each step of the tour", fontsize=9, **FONT)
    return fig


__all__ += ["draw_partition", "draw_tour_bars", "draw_roofline"]


# --- chapter 9 (pipeline timeline): pictures below

_PIPE_COLORS = {"load": ("#9ecae1", "#3182bd"), "mma": ("#fdae6b", "#e6550d"), "epi": ("#a1d99b", "#31a354"),
                "wait": ("#d62728", "#d62728")}


def draw_pipeline_timeline(record, *, kernel=None, ctas=None, tiles=None, t_range_us=None, title=None):
    """A measured pipeline timeline as a Gantt chart: one row per warp role of each CTA, time in us.

    ``record`` is a one-kernel record of :func:`layoutlab.bench.timeline.record_timeline` or the recorded
    file (``gpu.load_result("gemm_timeline_h100")``, several records: ``kernel`` picks one, default the
    first). Producer row: one bar per TMA load from issue to the first consumer's arrival, stacked by
    stage (the ring's slots), and in red the waits for a free stage. Consumer rows (one per MMA
    warpgroup): one bar per k-tile from wgmma issue to ``wait_group`` observing it retired (alternating
    lanes, since the next batch is issued before the previous one is known done), the epilogue, and in
    red the waits for data. Blank stretches are time the role did none of these. ``ctas`` (default the
    first two recorded), ``tiles`` (tile ordinals per CTA, default the first two) and ``t_range_us``
    ``(start, end)`` zoom in. Refuses a malformed record with a LayoutError.
    Example: ``draw_pipeline_timeline(gpu.load_result("gemm_timeline_h100"), kernel="gemm_hopper")``.
    """
    from matplotlib.patches import Patch

    from .bench.timeline import check_timeline_record, select_record
    op = "draw_pipeline_timeline"
    rec = check_timeline_record(select_record(record, kernel), op=op)
    events = rec["events"]
    stages = rec["config"]["stages"]
    recorded = sorted({e["cta"] for e in events})
    ctas = recorded[:2] if ctas is None else list(ctas)
    if not ctas or any(c not in recorded for c in ctas):
        raise LayoutError(f"{op}: ctas={ctas!r}; this record has CTAs {recorded}")
    all_tiles = sorted({e["tile"] for e in events})
    tiles = all_tiles[:2] if tiles is None else list(tiles)
    if not tiles or any(t not in all_tiles for t in tiles):
        raise LayoutError(f"{op}: tiles={tiles!r}; this record has tile ordinals {all_tiles}")
    if t_range_us is not None:
        if len(t_range_us) != 2 or not t_range_us[0] < t_range_us[1]:
            raise LayoutError(f"{op}: t_range_us={t_range_us!r}; give (start, end) with start < end, in us")
    idx = {(e["cta"], e["role"], e["tile"], e["event"], e["k_tile"]): e for e in events}
    roles = sorted({e["role"] for e in events}, key=lambda r: (r != "producer", r))
    warps = {e["role"]: e["warp"] for e in events}
    K = rec["problem"]["k_tiles"]
    first_arrival = {}
    for e in events:
        if e["event"] == "load_arrive":
            key = (e["cta"], e["tile"], e["k_tile"])
            first_arrival[key] = min(first_arrival.get(key, e["t_ns"]), e["t_ns"])

    rows = [(c, r) for c in ctas for r in roles]
    polys = {name: [] for name in _PIPE_COLORS}

    def bar(name, t0, t1, y0, h):
        a, b = t0 / 1e3, t1 / 1e3
        polys[name].append([(a, y0), (b, y0), (b, y0 + h), (a, y0 + h)])

    labels, starts = [], []
    for i, (c, r) in enumerate(rows):
        y = len(rows) - 1 - i                      # first row on top
        for t in tiles:
            def ev(name, k, _c=c, _r=r, _t=t):
                e = idx.get((_c, _r, _t, name, k))
                return None if e is None else e["t_ns"]
            for k in range(K):
                if r == "producer":
                    issue, wait = ev("load_issue", k), ev("empty_wait", k)
                    e = idx.get((c, r, t, "load_issue", k))
                    arrive = first_arrival.get((c, t, k))
                    if issue is not None and arrive is not None:
                        lane = e["stage"] % stages
                        bar("load", issue, arrive, y + 0.14 + 0.72 * lane / stages, 0.72 / stages * 0.9)
                    if wait is not None and issue is not None and issue > wait:
                        bar("wait", wait, issue, y + 0.02, 0.09)
                else:
                    start, end = ev("mma_start", k), ev("mma_end", k)
                    if start is not None and end is not None:
                        bar("mma", start, end, y + 0.14 + 0.36 * (k % 2), 0.33)
                    wait, arrive = ev("full_wait", k), ev("load_arrive", k)
                    if wait is not None and arrive is not None and arrive > wait:
                        bar("wait", wait, arrive, y + 0.02, 0.09)
            if r != "producer":
                s, e = ev("epi_start", 0), ev("epi_end", 0)
                if s is not None and e is not None:
                    bar("epi", s, e, y + 0.14, 0.72)
                    mn = idx[(c, r, t, "epi_start", 0)].get("tile_mn")
                    labels.append(((s + e) / 2e3, y + 0.5, (e - s) / 1e3, f"tile {t}" + (
                        f"\n({mn[0]},{mn[1]})" if isinstance(mn, (list, tuple)) and len(mn) == 2 else "")))
                ts = ev("tile_start", 0)
                if ts is not None and t != tiles[0]:
                    starts.append((ts / 1e3, i))
    if not any(polys.values()):
        raise LayoutError(f"{op}: the chosen CTAs {ctas} and tiles {tiles} hold no complete interval to draw")

    height = 0.62 * len(rows) + 1.3            # rows + title (0.4 in) + axis label and legend (0.9 in)
    fig = _BookFigure(figsize=(10.0, height))
    ax = fig.add_axes((0.2, 0.9 / height, 0.78, 0.62 * len(rows) / height))
    for name, (face, edge) in _PIPE_COLORS.items():
        if polys[name]:
            ax.add_collection(PolyCollection(polys[name], facecolors=face, edgecolors=edge, linewidths=0.4))
    xs = [p[0][0] for v in polys.values() for p in v] + [p[1][0] for v in polys.values() for p in v]
    lo, hi = (min(xs), max(xs)) if t_range_us is None else t_range_us
    pad = 0.01 * (hi - lo)
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(-0.1, len(rows) + 0.05)
    us_per_inch = (hi - lo + 2 * pad) / (0.78 * 10.0)
    for x, y, width, text in labels:           # a tile's name inside its epilogue bar, where it fits
        if lo <= x <= hi and width / us_per_inch > 0.05 * max(len(line) for line in text.split("\n")):
            ax.text(x, y, text, fontsize=6, va="center", ha="center", color="#1b5e20", **FONT)
    for x, i in starts:                         # where a CTA's next tile begins (consumer rows)
        y = len(rows) - 1 - i
        ax.plot([x, x], [y, y + 1], color="#555", lw=0.7, ls=":")
    for i in range(1, len(ctas)):
        ax.axhline(len(rows) - i * len(roles), color="#888", lw=0.8)
    ax.set_yticks([len(rows) - 1 - i + 0.5 for i in range(len(rows))])
    ax.set_yticklabels([f"CTA {c} {r} (warp {warps[r]})" for c, r in rows], fontsize=7.5, **FONT)
    ax.tick_params(axis="y", length=0)
    ax.set_xlabel("time (us) from the first recorded event", fontsize=8)
    ax.tick_params(axis="x", labelsize=7.5)
    ax.grid(axis="x", color="#ddd", lw=0.5)
    ax.set_axisbelow(True)
    handles = [Patch(facecolor=_PIPE_COLORS["load"][0], edgecolor=_PIPE_COLORS["load"][1],
                     label=f"TMA load in flight (issue -> arrival), by stage (of {stages})"),
               Patch(facecolor=_PIPE_COLORS["mma"][0], edgecolor=_PIPE_COLORS["mma"][1],
                     label="wgmma k-tile (issue -> wait_group sees it retired)"),
               Patch(facecolor=_PIPE_COLORS["epi"][0], edgecolor=_PIPE_COLORS["epi"][1], label="epilogue"),
               Patch(facecolor=_PIPE_COLORS["wait"][0], edgecolor=_PIPE_COLORS["wait"][1],
                     label="waiting (producer: for a free stage; consumer: for data)")]
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.55, 0.0), ncol=2, fontsize=7,
               frameon=False)
    prob = rec["problem"]
    head = title if title is not None else (
        f"{rec['kernel']}: measured pipeline, {prob.get('m')}x{prob.get('n')}x{prob.get('k')} "
        f"{prob.get('dtype', '')}, {K} k-tiles per tile" + (f" -- {rec['gpu']}" if rec.get("gpu") else ""))
    fig.suptitle(head, fontsize=9, y=1 - 0.08 / height, va="top", **FONT)
    return fig


__all__ += ["draw_pipeline_timeline"]


# --- chapters 1-5 (fixes): pictures below


def draw_tv_legend(tv, tile_mn, *, highlight_threads=None, highlight_values=None, labels=None, title=None,
                   label_limit=_LABEL_LIMIT):
    """:func:`draw_tv_layout` with a legend: the eight thread colours (``TV_COLORS[t % 8]``, named
    ``t = k mod 8``) and how to read a cell (``T<t> V<v>``: thread t's value v). Same arguments and cells as
    :func:`draw_tv_layout` (a CuTe TV layout on an ``(M, N)`` tile or a rank-2 tile layout); threads that share
    a colour are told apart by their labels, so draw a tile small enough to be labelled (or use
    :func:`draw_partition` to colour a few chosen threads).

    Example: warp 0's corner of the WGMMA accumulator, rows 0-15 and columns 0-15 of the 64-row tile::

        draw_tv_legend(parse_layout("((4,8),(2,2,2)):((128,1),(64,8,512))"), Layout((16, 16), (1, 64)))
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


__all__ += ["draw_tv_legend"]
