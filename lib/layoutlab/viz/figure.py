"""Figures, colours and cells: the drawing machinery every picture shares, and reading a layout's offsets."""

import colorsys
import io
from functools import lru_cache

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.path import Path
from matplotlib.textpath import TextPath
from matplotlib.transforms import Affine2D

from ..errors import LayoutError
from ..inttuple import product
from ..layout import Layout, parse_layout
from ..swizzle import ComposedLayout, Swizzle

__all__ = ["TV_COLORS", "BANK_COLORS", "FONT", "figure_to_png", "figure_to_svg"]

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

    >>> from layoutlab.viz import draw_layout
    >>> figure_to_png(draw_layout("(2,2):(1,2)"))[:4]
    b'\x89PNG'
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def figure_to_svg(fig):
    """SVG text of ``fig`` (cell labels are glyph outlines, index labels and titles are text).

    Example: ``"<svg" in figure_to_svg(draw_layout(parse_layout("(2,2):(1,2)")))``.

    >>> from layoutlab.viz import draw_layout
    >>> "<svg" in figure_to_svg(draw_layout("(2,2):(1,2)"))
    True
    """
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    return buf.getvalue()


def _as_layout(x, op):
    """Strings in CuTe notation are parsed with the library's parser; layouts are used as given."""
    if isinstance(x, str):
        return parse_layout(x)
    if not isinstance(x, (Layout, ComposedLayout)):
        raise LayoutError(f"{op}: expected a Layout, a ComposedLayout or a layout string like '(4,8):(8,1)', "
                          f"got {type(x).__name__}")
    return x


def _modes(layout, op):
    """The top-level modes of ``layout``'s shape as a tuple (a rank-1 layout has one mode)."""
    shape = _as_layout(layout, op).shape
    return tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)


def _offsets(layout, op):
    """Offsets of every index of ``layout`` in CuTe's colexicographic order, as an int64 array.

    Plain layouts use the vectorised ``Layout.table()``; composed layouts are ``inner(offset + outer(i))``
    (a swizzle inner applied to the whole array at once, a layout inner by table lookup).
    """
    layout = _as_layout(layout, op)
    if isinstance(layout, ComposedLayout):
        base = _offsets(layout.outer, op) + int(layout.offset)
        if isinstance(layout.inner, Swizzle):
            return layout.inner(base)
        return _offsets(layout.inner, op)[base]
    return np.asarray(layout.table(), dtype=np.int64).ravel()


def _tile_mn(tile_mn, op):
    """(M, N, stride_m, stride_n) of a tile given as (M, N) (column-major) or as a rank-2 Layout."""
    if isinstance(tile_mn, Layout):
        modes, stride = _modes(tile_mn, op), tile_mn.stride
        if len(modes) != 2 or not all(isinstance(x, (int, np.integer)) for x in (*modes, *stride)):
            raise LayoutError(f"{op}: tile_mn {tile_mn} must be (M, N) or a rank-2 layout with integer modes")
        return int(modes[0]), int(modes[1]), int(stride[0]), int(stride[1])
    if not isinstance(tile_mn, (tuple, list)) or len(tile_mn) != 2:
        raise LayoutError(f"{op}: tile_mn must be a pair (M, N), got {tile_mn!r}")
    m, n = (product(x) for x in tile_mn)
    if m < 1 or n < 1:
        raise LayoutError(f"{op}: tile_mn {tile_mn!r} must have positive extents")
    return m, n, 1, m


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
