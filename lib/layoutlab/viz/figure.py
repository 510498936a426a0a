"""Colours, grids and keys: the drawing machinery every layout picture shares (pure Python, see :mod:`.svg`),
reading a layout's offsets, and the bytes of a figure (:func:`figure_to_svg`, :func:`figure_to_png`)."""

import colorsys
from functools import lru_cache

from ..errors import LayoutError
from ..cute.inttuple import product
from ..cute.layout import Layout, parse_layout
from ..cute.swizzle import ComposedLayout, Swizzle
from .svg import (CHAR_W, MAX_WIDTH, MIN_TEXT, TICK_TEXT, TITLE_TEXT, Legend, Panel, SvgFigure, hex_color,
                  text_width, wrap, _VECTOR_CELLS)

__all__ = ["TV_COLORS", "BANK_COLORS", "FONT", "SvgFigure", "figure_to_png", "figure_to_svg"]

# print_latex_tv's eight pastels (RGB in [0, 1]), cycled by thread index.
TV_COLORS = tuple(tuple(c / 255 for c in rgb) for rgb in (
    (175, 175, 255), (175, 255, 175), (255, 255, 175), (255, 175, 175),
    (210, 210, 255), (210, 255, 210), (255, 255, 210), (255, 210, 210)))
# 32 shared-memory banks around the hue wheel (pale enough for black text): bank b -> BANK_COLORS[b].
BANK_COLORS = tuple(colorsys.hsv_to_rgb(b / 32, 0.45, 1.0) for b in range(32))
TV_HEX = tuple(hex_color(c) for c in TV_COLORS)
BANK_HEX = tuple(hex_color(c) for c in BANK_COLORS)
FONT = {"family": "monospace"}
EMPTY = "#ffffff"
GREY = "#d1d1d1"
CONFLICT = "#d62728"
_LABEL_LIMIT = 512
_BANKS, _BANK_BYTES = 32, 4


def _check_figure(fig, op):
    if not isinstance(fig, SvgFigure) and not callable(getattr(fig, "savefig", None)):
        raise LayoutError(f"{op}: fig must be a picture, an SvgFigure (what draw_layout and the other draw_* "
                          f"functions return) or a matplotlib Figure, got {type(fig).__name__}")


def figure_to_png(fig, dpi=80):
    """PNG bytes of a picture (an :class:`SvgFigure` is drawn through matplotlib, which must be installed).

    >>> from layoutlab.viz import draw_layout
    >>> figure_to_png(draw_layout("(2,2):(1,2)"))[:4]
    b'\\x89PNG'
    """
    import io
    _check_figure(fig, "figure_to_png")
    if not isinstance(dpi, (int, float)) or isinstance(dpi, bool) or dpi <= 0:
        raise LayoutError(f"figure_to_png: dpi={dpi!r}; it is a positive number of dots per inch, e.g. 80")
    if isinstance(fig, SvgFigure):
        fig = fig.to_matplotlib(dpi)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def figure_to_svg(fig):
    """SVG text of a picture (text stays text).

    >>> from layoutlab.viz import draw_layout
    >>> figure_to_svg(draw_layout("(2,2):(1,2)")).startswith("<svg")
    True
    """
    _check_figure(fig, "figure_to_svg")
    if isinstance(fig, SvgFigure):
        return fig.to_svg()
    import io
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
    """Offsets of every index of ``layout`` in CuTe's colexicographic order, as a list of ints.

    Composed layouts are ``inner(offset + outer(i))`` (a swizzle inner applied to each, a layout inner by lookup)."""
    layout = _as_layout(layout, op)
    if isinstance(layout, ComposedLayout):
        base = [o + int(layout.offset) for o in _offsets(layout.outer, op)]
        if isinstance(layout.inner, Swizzle):
            return [layout.inner(o) for o in base]
        inner = _offsets(layout.inner, op)
        return [inner[o] for o in base]
    table = layout.table()
    return table.tolist() if hasattr(table, "tolist") else list(table)


class Grid:
    """A small 2-D table of ints (rows of lists): ``g[r, c]``, ``g[r]``, ``g.shape``, ``g.tolist()``."""

    def __init__(self, rows):
        self.rows = [list(r) for r in rows]
        self.shape = (len(self.rows), len(self.rows[0]) if self.rows else 0)

    def __getitem__(self, key):
        if isinstance(key, tuple):
            r, c = key
            if isinstance(r, slice):
                return [row[c] for row in self.rows[r]]
            return self.rows[r][c]
        return self.rows[key]

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def tolist(self):
        return [list(r) for r in self.rows]

    def T(self):
        return Grid(zip(*self.rows)) if self.rows else Grid([])

    def __repr__(self):
        return f"Grid({self.rows!r})"


def _tile_mn(tile_mn, op):
    """(M, N, stride_m, stride_n) of a tile given as (M, N) (column-major) or as a rank-2 Layout."""
    if isinstance(tile_mn, Layout):
        modes, stride = _modes(tile_mn, op), tile_mn.stride
        if len(modes) != 2 or not all(isinstance(x, int) for x in (*modes, *stride)):
            raise LayoutError(f"{op}: tile_mn {tile_mn} must be (M, N) or a rank-2 layout with integer modes")
        return int(modes[0]), int(modes[1]), int(stride[0]), int(stride[1])
    if not isinstance(tile_mn, (tuple, list)) or len(tile_mn) != 2:
        raise LayoutError(f"{op}: tile_mn must be a pair (M, N), got {tile_mn!r}")
    m, n = (product(x) for x in tile_mn)
    if m < 1 or n < 1:
        raise LayoutError(f"{op}: tile_mn {tile_mn!r} must have positive extents")
    return m, n, 1, m


# ------------------------------------------------------------------ sizes
def label_cell(chars, lines=1, size=MIN_TEXT):
    """The cell side (px) a label of ``chars`` x ``lines`` needs at font ``size``."""
    return max(0.66 * size * chars + 4, 1.05 * size * lines + 2)


def choose_cell(rows, cols, chars, lines, labels, *, max_w=MAX_WIDTH - 70, max_h=1000, preferred=34):
    """(cell px, label font px or None): fit the column; label only when the labels fit at >= MIN_TEXT px
    (``labels=True`` forces them: the picture gets wider and scrolls), ``labels=False`` never."""
    fit = max(min(max_w / max(cols, 1), max_h / max(rows, 1)), 1.0)
    need = label_cell(chars, lines)
    if labels is False:
        return min(fit, preferred), None
    if fit >= need:
        cell = min(fit, max(preferred, need))
    elif labels:
        cell = need
    else:
        return min(fit, preferred), None
    # 0.66 em: room for monospace fonts a little wider than DejaVu's 0.6
    size = min((cell - 4) / (0.66 * max(chars, 1)), (cell - 2) / (1.05 * lines), 12.5)
    return cell, max(size, MIN_TEXT)


def tick_step(extent, cell):
    """Index labels every 1, 2, 4, ... cells, far enough apart to be read."""
    step = 1
    while step * cell < CHAR_W * TICK_TEXT * (len(str(extent)) + 1) and step < extent:
        step *= 2
    return step


def grid_margins(rows, row_name="", col_name=""):
    """(left, top) px that a grid's index labels and names need."""
    left = CHAR_W * TICK_TEXT * len(str(max(rows - 1, 0))) + 8 + (20 if row_name else 0)
    top = 20 + (20 if col_name else 0)
    return left, top


def paint_grid(fig, x, y, cell, colors, labels=None, *, name="", label_size=MIN_TEXT, bold=None, outline=None,
               text_colors=None, row_name="", col_name="", col_ticks=None, row_ticks=None, lines=True):
    """Draw a grid of ``colors`` (rows of hex colours) with its top-left corner at (x, y) and return its Panel.

    ``labels``: rows of strings (``""``: none; ``\\n`` stacks lines); ``bold``/``outline``: rows of booleans;
    ``col_ticks``/``row_ticks``: [(index, text)] (default: every few indices); names above / left."""
    rows, cols = len(colors), len(colors[0]) if colors else 0
    panel = Panel(name or col_name, rows, cols, colors)
    if rows * cols <= _VECTOR_CELLS:
        by_color = {}
        for r in range(rows):
            for c in range(cols):
                by_color.setdefault(colors[r][c], []).append((x + c * cell, y + r * cell, cell, cell))
        for color, squares in by_color.items():
            if color != EMPTY:
                fig.cells(color, squares)
    else:
        def rgb(h):
            return tuple(int(h[i:i + 2], 16) for i in (1, 3, 5))
        cache = {}
        fig.pixels(x, y, cols * cell, rows * cell,
                   [[cache[h] if h in cache else cache.setdefault(h, rgb(h)) for h in row] for row in colors])
    if lines:
        step = 1 if max(rows, cols) <= 64 and cell >= 6 else 8
        segs = [((x + c * cell, y), (x + c * cell, y + rows * cell)) for c in range(0, cols + 1, step)]
        segs += [((x, y + r * cell), (x + cols * cell, y + r * cell)) for r in range(0, rows + 1, step)]
        if cols % step:
            segs.append(((x + cols * cell, y), (x + cols * cell, y + rows * cell)))
        if rows % step:
            segs.append(((x, y + rows * cell), (x + cols * cell, y + rows * cell)))
        fig.lines(segs, "#000", 0.8 if step == 1 else 0.5)
    if labels is not None:
        for r in range(rows):
            for c in range(cols):
                text = labels[r][c]
                if text:
                    panel.cell_labels[(r, c)] = str(text)
                    weight = "bold" if bold is not None and bold[r][c] else "normal"
                    if weight == "bold":
                        panel.bold_cells.add((r, c))
                    fill = text_colors[r][c] if text_colors is not None else "#000"
                    fig.text(x + (c + 0.5) * cell, y + (r + 0.5) * cell, text, label_size, weight=weight,
                             fill=fill)
    if outline is not None:
        squares = [(x + c * cell, y + r * cell) for r in range(rows) for c in range(cols) if outline[r][c]]
        sw = max(min(cell * 0.1, 2.5), 1.0)
        segs = []
        for sx, sy in squares:
            segs += [((sx, sy), (sx + cell, sy)), ((sx + cell, sy), (sx + cell, sy + cell)),
                     ((sx + cell, sy + cell), (sx, sy + cell)), ((sx, sy + cell), (sx, sy))]
        fig.lines(segs, "#000", sw)
    if col_ticks is None:
        step = tick_step(cols, cell)
        col_ticks = [(c, str(c)) for c in range(0, cols, step)]
    if row_ticks is None:
        step = 1
        while step * cell < 1.2 * TICK_TEXT:
            step *= 2
        row_ticks = [(r, str(r)) for r in range(0, rows, step)]
    for c, text in col_ticks:
        fig.text(x + (c + 0.5) * cell, y - 10, text, TICK_TEXT, fill="#333")
        panel.texts.append(text)
    for r, text in row_ticks:
        fig.text(x - 5, y + (r + 0.5) * cell, text, TICK_TEXT, anchor="end", fill="#333")
        panel.texts.append(text)
    if col_name:
        fig.text(x + cols * cell / 2, y - 30, col_name, TICK_TEXT)
        panel.texts.append(col_name)
    if row_name:
        width = CHAR_W * TICK_TEXT * max((len(t) for _, t in row_ticks), default=1)
        fig.text(x - width - 16, y + rows * cell / 2, row_name, TICK_TEXT, rotate=-90)
        panel.texts.append(row_name)
    fig.panels.append(panel)
    return panel


def key_size(entries, content_w, title=""):
    """(figure width, key height): the figure is as wide as its content, widened (up to the column) so that
    the key's entries fit on few lines; the height is what :func:`draw_key` takes at that width."""
    if not entries:
        return content_w, 0
    size = MIN_TEXT + 2
    natural = len(entries) * (max(text_width(t, size) for _, t in entries) + 26) + 16
    width = max(content_w, min(MAX_WIDTH, max(natural, text_width(title, size) + 16 if title else 0)))
    return width, _key_layout(entries, width - 16, title)[0]


def _key_layout(entries, width, title):
    size = MIN_TEXT + 2
    col_w = max((text_width(t, size) for _, t in entries), default=0) + 26
    ncol = max(1, min(len(entries), int(width // col_w))) if entries else 1
    nrows = -(-len(entries) // ncol)
    title_lines = wrap(title, width, size).count("\n") + 1 if title else 0
    return 8 + title_lines * 17 + nrows * 19, ncol, col_w, size


def draw_key(fig, x, y, width, entries, title=""):
    """A key (legend): ``entries`` [(colour, text)] as swatches in columns under ``title``; returns its height.
    A colour ``None`` is a text-only line; ``("outline", hex)`` is an empty square with that border."""
    height, ncol, col_w, size = _key_layout(entries, width, title)
    yy = y + 8
    if title:
        t = wrap(title, width, size)
        for line in t.split("\n"):
            fig.text(x, yy + 6, line, size, anchor="start")
            yy += 17
    for i, (color, text) in enumerate(entries):
        cx, cy = x + (i % ncol) * col_w, yy + (i // ncol) * 19
        if isinstance(color, tuple) and color[0] == "outline":
            fig.rect(cx, cy, 14, 14, "none", color[1], 2)
        elif color is not None:
            fig.rect(cx, cy, 14, 14, color, "#444", 0.7)
        fig.text(cx + (20 if color is not None else 0), cy + 7, text, size, anchor="start")
    fig.legends.append(Legend(entries, title))
    return height


def new_figure(content_w, content_h, title, alt, *, min_w=240):
    """An SvgFigure wide enough for ``content_w`` and its wrapped title; returns (fig, y below the title)."""
    width = max(content_w, min_w)
    head = wrap(title, max(width, MAX_WIDTH) - 16, TITLE_TEXT) if title else ""
    width = max(width, min(text_width(head, TITLE_TEXT) + 16, MAX_WIDTH)) if head else width
    head = wrap(title, width - 16, TITLE_TEXT) if title else ""
    top = 10 + (head.count("\n") + 1) * 1.15 * TITLE_TEXT + 6 if head else 6
    fig = SvgFigure(width, top + content_h, title=title, alt=alt)
    if head:
        for i, line in enumerate(head.split("\n")):
            fig.text(width / 2, 10 + (i + 0.5) * 1.15 * TITLE_TEXT, line, TITLE_TEXT)
    return fig, top


@lru_cache(maxsize=1024)
def fade(color, on, amount=0.78):
    """Blend ``color`` (hex) towards white unless ``on``: the highlighted cells stand out."""
    if on:
        return color
    r, g, b = (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return hex_color(tuple(v + (1 - v) * amount for v in (r, g, b)))


@lru_cache(maxsize=1024)
def darken(color, amount=0.55):
    r, g, b = (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return hex_color((r * amount, g * amount, b * amount))

