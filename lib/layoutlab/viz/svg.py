"""The vector pictures' machinery, in pure Python (no numpy, no matplotlib): a figure is a list of primitives
(rectangles, paths, lines, text, a pixel image for very large grids) in CSS pixels, written out as SVG (shown
inline in notebooks and on the website), as TikZ (:meth:`SvgFigure.to_latex`, as CuTe's ``print_latex``), or
drawn with matplotlib when a PNG is asked for (:func:`layoutlab.viz.figure_to_png`).

Text sizes are chosen for the reader: no text is smaller than :data:`MIN_TEXT` CSS pixels, and a figure is
never scaled down to fit (it scrolls sideways in its own box instead), so what is drawn at 11 px is read at 11 px.
"""

import html
import struct
import textwrap
import zlib

from ..errors import LayoutError

__all__ = ["SvgFigure"]

MIN_TEXT = 10          # px: the smallest text of any picture (cell labels; index labels and keys are 12)
TICK_TEXT = 12         # px: index labels, axis names
TITLE_TEXT = 14        # px
CHAR_W = 0.6           # a monospace glyph is ~0.6 em wide (DejaVu Sans Mono 0.602)
MAX_WIDTH = 680        # px: the book's text column at 1280 px; a default picture fits it
_VECTOR_CELLS = 2048   # up to this many cells a grid is vector rectangles, above it one pixel per cell


def hex_color(rgb):
    """``(r, g, b)`` in [0, 1] (or a ``#rrggbb`` string) as ``#rrggbb``."""
    if isinstance(rgb, str):
        return rgb
    return "#%02x%02x%02x" % tuple(max(0, min(255, int(round(255 * c)))) for c in rgb[:3])


def text_width(text, size):
    """Width in px of ``text`` (its longest line) in a monospace font of ``size`` px."""
    return CHAR_W * size * max((len(line) for line in str(text).split("\n")), default=0)


class Text(str):
    """A string with ``get_text()`` (so code written for matplotlib's Text objects reads ours too)."""

    def get_text(self):
        return str(self)


class _Texts(list):
    """A list of :class:`Text`: whatever is added becomes a Text."""

    def append(self, s):
        super().append(Text(s))

    def extend(self, items):
        super().extend(Text(s) for s in items)

    def __iadd__(self, items):
        self.extend(items)
        return self


class Panel:
    """One grid of a figure: its name, and per cell ``(row, col)`` the label and the fill colour drawn.

    ``cell_labels`` / ``cell_colors`` are what the picture shows, kept for tests and for readers' code;
    ``texts`` are the other texts drawn with the panel (index labels, names, per-column notes)."""

    def __init__(self, name, rows, cols, colors=()):
        self.name, self.rows, self.cols, self.colors = name, rows, cols, colors
        self.cell_labels, self.texts, self.bold_cells = {}, _Texts(), set()

    @property
    def cell_colors(self):
        return {(r, c): color for r, row in enumerate(self.colors) for c, color in enumerate(row)}


class Legend:
    """A key of a figure: ``entries`` [(colour or None, text)] under an optional ``title``."""

    def __init__(self, entries, title=""):
        self.entries, self.title = list(entries), title

    def get_texts(self):
        return [Text(t) for _, t in self.entries]

    def get_title(self):
        return Text(self.title)


class SvgFigure:
    """A picture of the course: ``width`` x ``height`` CSS px of primitives, with a ``title`` (drawn on top)
    and ``alt`` (a sentence for readers who cannot see it: the SVG's ``<title>`` and the image's alt text).

    Shows itself inline in Jupyter (``_repr_svg_``, ``_repr_html_``) and on the website; ``to_svg()`` and
    ``to_latex()`` give the text, ``savefig(path)`` writes ``.svg``, ``.tex`` or (with matplotlib) ``.png``.
    ``panels`` (also ``axes``) and ``legends`` describe what was drawn.

    >>> fig = SvgFigure(120, 40, title="two cells", alt="a red and a blue cell")
    >>> fig.cells("#ff0000", [(10, 10, 20, 20)]); fig.rect(30, 10, 20, 20, "#0000ff")
    >>> fig.text(80, 20, "hi", 12)
    >>> svg = fig.to_svg()
    >>> svg.startswith("<svg") and "<title>a red and a blue cell</title>" in svg and ">hi</text>" in svg
    True
    >>> fig.font_sizes(), "tikzpicture" in fig.to_latex().splitlines()[1]
    ([12.0], True)
    """

    def __init__(self, width, height, title="", alt=""):
        for name, value in (("width", width), ("height", height)):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
                raise LayoutError(f"SvgFigure: {name}={value!r}; it is a positive number of CSS pixels")
        self.width, self.height = float(width), float(height)
        self.title, self.alt = str(title or ""), str(alt or "")
        self.items, self.panels, self.legends = [], [], []

    # ---- what was drawn (also read by tests)
    @property
    def axes(self):
        return self.panels

    def get_suptitle(self):
        return self.title

    @property
    def _suptitle(self):
        return Text(self.title)

    def all_texts(self):
        """Every text drawn, in drawing order."""
        return [Text(it[3]) for it in self.items if it[0] == "text"]

    def font_sizes(self):
        """The sizes (px) of every text drawn."""
        return [it[4] for it in self.items if it[0] == "text"]

    # ---- primitives (coordinates in px, y down)
    def rect(self, x, y, w, h, fill="none", stroke=None, sw=1.0):
        self.items.append(("rect", x, y, w, h, hex_color(fill) if fill != "none" else "none", stroke, sw))

    def cells(self, fill, squares):
        """Many rectangles of one colour as one path: ``squares`` [(x, y, w, h)]."""
        if squares:
            self.items.append(("cells", hex_color(fill), list(squares)))

    def line(self, points, stroke="#000", sw=1.0, dash=None):
        self.items.append(("line", [tuple(p) for p in points], stroke, sw, dash))

    def lines(self, segments, stroke="#000", sw=1.0):
        """Many straight segments ((x0, y0), (x1, y1)) as one path."""
        if segments:
            self.items.append(("segs", list(segments), stroke, sw))

    def text(self, x, y, s, size=TICK_TEXT, anchor="middle", weight="normal", fill="#000", rotate=0):
        """Text centred vertically on ``y``; ``anchor`` start / middle / end; multi-line text is stacked."""
        size = max(float(size), MIN_TEXT)
        lines = str(s).split("\n")
        for i, line in enumerate(lines):
            dy = (i - (len(lines) - 1) / 2) * 1.05 * size
            if line:
                self.items.append(("text", x, y + dy, line, size, anchor, weight, fill, rotate))

    def pixels(self, x, y, w, h, rgb_rows):
        """A grid drawn as an image, one pixel per cell (``rgb_rows``: rows of (r, g, b) in 0..255)."""
        self.items.append(("image", x, y, w, h, _png(rgb_rows)))

    # ---- output
    def to_svg(self):
        w, h = _num(self.width), _num(self.height)
        alt = html.escape(self.alt or self.title or "picture")
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
               f'role="img" font-family="DejaVu Sans Mono,Menlo,Consolas,monospace" class="ll-figure">'
               f'<title>{alt}</title><rect width="{w}" height="{h}" fill="#fff"/>']
        group = None
        for it in self.items:
            kind = it[0]
            if kind == "text":
                _, x, y, s, size, anchor, weight, fill, rotate = it
                key = (size, anchor, weight, fill)
                if key != group:
                    if group is not None:
                        out.append("</g>")
                    out.append(f'<g font-size="{_num(size)}" text-anchor="{anchor}" dominant-baseline="central"'
                               + (f' font-weight="{weight}"' if weight != "normal" else "")
                               + (f' fill="{fill}"' if fill != "#000" else "") + ">")
                    group = key
                rot = f' transform="rotate({_num(rotate)} {_num(x)} {_num(y)})"' if rotate else ""
                out.append(f'<text x="{_num(x)}" y="{_num(y)}"{rot}>{html.escape(s)}</text>')
                continue
            if group is not None:
                out.append("</g>")
                group = None
            if kind == "rect":
                _, x, y, rw, rh, fill, stroke, sw = it
                st = f' stroke="{stroke}" stroke-width="{_num(sw)}"' if stroke else ""
                out.append(f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(rw)}" height="{_num(rh)}" '
                           f'fill="{fill}"{st}/>')
            elif kind == "cells":
                _, fill, squares = it
                d = "".join(f"M{_num(x)} {_num(y)}h{_num(sw)}v{_num(sh)}h{_num(-sw)}z" for x, y, sw, sh in squares)
                out.append(f'<path fill="{fill}" d="{d}"/>')
            elif kind == "line":
                _, pts, stroke, sw, dash = it
                d = "M" + "L".join(f"{_num(x)} {_num(y)}" for x, y in pts)
                da = f' stroke-dasharray="{dash}"' if dash else ""
                out.append(f'<path fill="none" stroke="{stroke}" stroke-width="{_num(sw)}"{da} d="{d}"/>')
            elif kind == "segs":
                _, segs, stroke, sw = it
                d = "".join(f"M{_num(a[0])} {_num(a[1])}L{_num(b[0])} {_num(b[1])}" for a, b in segs)
                out.append(f'<path fill="none" stroke="{stroke}" stroke-width="{_num(sw)}" d="{d}"/>')
            elif kind == "image":
                _, x, y, iw, ih, png = it
                import base64
                out.append(f'<image x="{_num(x)}" y="{_num(y)}" width="{_num(iw)}" height="{_num(ih)}" '
                           f'preserveAspectRatio="none" style="image-rendering:pixelated" '
                           f'href="data:image/png;base64,{base64.b64encode(png).decode()}"/>')
        if group is not None:
            out.append("</g>")
        out.append("</svg>")
        return "".join(out)

    def _repr_svg_(self):
        return self.to_svg()

    def _repr_html_(self):
        # never scaled down: a picture wider than the column scrolls in its own box, so its text keeps its size
        return f'<div class="ll-figure-box" style="overflow-x:auto;max-width:100%">{self.to_svg()}</div>'

    def to_latex(self):
        """The picture as a TikZ ``tikzpicture`` (1 px = 0.02 cm; colours as ``{rgb,255:...}``)."""
        s = 0.02
        out = ["% needs \\usepackage{tikz}", "\\begin{tikzpicture}[x=%gcm,y=-%gcm,font=\\ttfamily]" % (s, s)]

        def col(c):
            c = c if c.startswith("#") else "#000000"
            c = "#" + "".join(ch * 2 for ch in c[1:]) if len(c) == 4 else c
            r, g, b = int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)
            return "{rgb,255:red,%d;green,%d;blue,%d}" % (r, g, b)

        for it in self.items:
            kind = it[0]
            if kind == "rect":
                _, x, y, w, h, fill, stroke, sw = it
                opts = [f"fill={col(fill)}"] if fill != "none" else []
                opts += [f"draw={col(stroke)}"] if stroke else []
                out.append(f"\\path[{','.join(opts)}] ({_num(x)},{_num(y)}) rectangle ++({_num(w)},{_num(h)});")
            elif kind == "cells":
                _, fill, squares = it
                for x, y, w, h in squares:
                    out.append(f"\\fill[{col(fill)}] ({_num(x)},{_num(y)}) rectangle ++({_num(w)},{_num(h)});")
            elif kind in ("line", "segs"):
                segs = [it[1]] if kind == "line" else [list(seg) for seg in it[1]]
                for pts in segs:
                    out.append(f"\\draw[{col(it[2])}] " + " -- ".join(f"({_num(x)},{_num(y)})" for x, y in pts) + ";")
            elif kind == "text":
                _, x, y, t, size, anchor, weight, fill, rotate = it
                where = {"start": "anchor=west", "end": "anchor=east", "middle": "anchor=center"}[anchor]
                t = "".join("\\" + ch if ch in "_{}%$&#" else ch for ch in t)
                out.append(f"\\node[{where},inner sep=0,font=\\ttfamily\\fontsize{{{_num(size * 0.75)}}}"
                           f"{{{_num(size * 0.9)}}}\\selectfont{',rotate=' + _num(-rotate) if rotate else ''}] "
                           f"at ({_num(x)},{_num(y)}) {{{t}}};")
        out.append("\\end{tikzpicture}")
        return "\n".join(out)

    def to_matplotlib(self, dpi=96):
        """The same picture as a matplotlib Figure (for PNG output; needs matplotlib)."""
        import base64  # noqa: F401
        import io

        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.collections import LineCollection, PolyCollection
        from matplotlib.figure import Figure
        from matplotlib.image import imread
        from matplotlib.patches import Rectangle

        fig = Figure(figsize=(self.width / 96, self.height / 96), dpi=dpi)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, self.width)
        ax.set_ylim(self.height, 0)
        ax.axis("off")
        pt = 72 / 96
        for it in self.items:
            kind = it[0]
            if kind == "rect":
                _, x, y, w, h, fill, stroke, sw = it
                ax.add_patch(Rectangle((x, y), w, h, facecolor=fill if fill != "none" else "none",
                                       edgecolor=stroke or "none", lw=sw * pt))
            elif kind == "cells":
                _, fill, squares = it
                ax.add_collection(PolyCollection([[(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
                                                  for x, y, w, h in squares], facecolors=fill, edgecolors="none"))
            elif kind == "line":
                _, pts, stroke, sw, dash = it
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=stroke, lw=sw * pt,
                        ls="--" if dash else "-")
            elif kind == "segs":
                ax.add_collection(LineCollection(it[1], colors=it[2], linewidths=it[3] * pt))
            elif kind == "image":
                _, x, y, w, h, png = it
                ax.imshow(imread(io.BytesIO(png), format="png"), extent=(x, x + w, y + h, y),
                          interpolation="nearest", aspect="auto")
            elif kind == "text":
                _, x, y, t, size, anchor, weight, fill, rotate = it
                ax.text(x, y, t, fontsize=size * pt, ha={"start": "left", "end": "right"}.get(anchor, "center"),
                        va="center", fontweight=weight, color=fill, rotation=-rotate, family="monospace")
        ax.set_xlim(0, self.width)
        ax.set_ylim(self.height, 0)
        return fig

    def savefig(self, fname, format=None, dpi=96, **_):
        """Write the picture: ``.svg`` / ``.tex`` as text, anything else through matplotlib (e.g. PNG)."""
        kind = format or (str(fname).rsplit(".", 1)[-1] if isinstance(fname, str) else "svg")
        text = {"svg": self.to_svg, "tex": self.to_latex}.get(kind)
        if text is None:
            return self.to_matplotlib(dpi).savefig(fname, format=kind, dpi=dpi)
        if hasattr(fname, "write"):
            fname.write(text() if not hasattr(fname, "mode") or "b" not in fname.mode else text().encode())
        else:
            with open(fname, "w") as f:
                f.write(text())


def _num(x):
    """A coordinate as short text: at most one decimal."""
    r = round(float(x), 1)
    return str(int(r)) if r == int(r) else str(r)


def _png(rgb_rows):
    """A PNG (RGB, 8 bit) of ``rgb_rows`` [[(r, g, b), ...], ...] with values 0..255, written with zlib."""
    h, w = len(rgb_rows), len(rgb_rows[0])
    raw = b"".join(b"\x00" + bytes(v for px in row for v in px) for row in rgb_rows)

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def wrap(text, width_px, size):
    """``text`` wrapped to lines of at most ``width_px`` at ``size`` (explicit newlines kept)."""
    chars = max(int(width_px / (CHAR_W * size)), 8)
    return "\n".join(line for part in str(text).split("\n") for line in (textwrap.wrap(part, chars) or [""]))
