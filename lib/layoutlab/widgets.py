"""Interactive explorers (ipywidgets) for the course, and precomputed versions that work on the static site.

Every explorer is an ``ipywidgets.VBox`` (display it as the last expression of a cell). Invalid input never
produces a traceback: the library's :class:`~layoutlab.errors.LayoutError` message is shown in the
explorer's ``message`` area instead, and the last good picture stays.

* :class:`LayoutExplorer` -- type a layout in CuTe notation, see its grid, click a cell for its coordinate,
  index and offset (hovering a cell shows the same as a tooltip, also on the static site).
* :class:`TVExplorer` -- MMA atom presets, highlight threads / values, the step-by-step evaluation
  (t, v) -> natural coordinate -> offset -> (m, n).
* :class:`SwizzleExplorer` -- Swizzle<B,M,S> and the element size: placement, banks, and the wavefronts of
  a row / column / ldmatrix-phase access.
* :class:`LinearLayoutExplorer` -- toggle bits of an F2 matrix; compose or invert two linear layouts.
* :class:`LdmatrixExplorer` -- MMA atom, value repetition, smem majorness -> the chosen ldmatrix atom.

Static site: a Jupyter Book page shows each widget's state from execution, but no kernel runs there, so
Python callbacks do nothing. :func:`precomputed_explorer` renders a small grid of parameter values at build
time into nested ``Stack`` widgets whose ``selected_index`` is ``jslink``-ed to the controls: the browser
switches pictures by itself. ``SwizzleExplorer.static()`` and ``TVExplorer.static()`` use it.
"""

import base64
import html
import itertools

import ipywidgets as w
import numpy as np

from . import viz
from .errors import LayoutError
from .inttuple import product
from .swizzle import Swizzle
from .viz.layouts import _f2_parts

__all__ = [
    "LayoutExplorer",
    "TVExplorer",
    "SwizzleExplorer",
    "LinearLayoutExplorer",
    "LdmatrixExplorer",
    "precomputed_explorer",
    "access_pattern",
    "tv_presets",
]

_DPI = 72
_MAX_BUTTON_CELLS = 256


# ---------------------------------------------------------------- small shared pieces

def _png(fig, dpi=_DPI):
    return viz.figure_to_png(fig, dpi=dpi)


def _image(fig=None, dpi=_DPI):
    """An Image widget holding ``fig`` as PNG (the image bytes are saved in the page's widget state)."""
    return w.Image(value=_png(fig, dpi) if fig is not None else b"", format="png",
                   layout=w.Layout(max_width="100%"))


def _img_html(fig, dpi=_DPI, caption=""):
    """An HTML snippet with ``fig`` as an inline PNG (for precomputed frames)."""
    data = base64.b64encode(_png(fig, dpi)).decode("ascii")
    cap = f"<div class='ll-caption' style='font-family:monospace'>{html.escape(caption)}</div>" if caption else ""
    return f"{cap}<img style='max-width:100%' src='data:image/png;base64,{data}'/>"


def _error_html(err):
    """A readable message for an invalid input: the library's own words, no traceback."""
    kind = "" if isinstance(err, LayoutError) else f"{type(err).__name__}: "
    return (f"<div style='color:#b00020;font-family:monospace;white-space:pre-wrap;overflow-wrap:anywhere;"
            f"max-width:48em'>"
            f"&#9888; {html.escape(kind + str(err))}</div>")


def _ok_html(text):
    return (f"<div style='font-family:monospace;white-space:pre-wrap;overflow-wrap:anywhere;max-width:48em'>"
            f"{html.escape(text)}</div>")


class _Explorer(w.VBox):
    """Base: a ``message`` area for errors, and ``_guard`` to route any failure there."""

    def __init__(self, children, **kwargs):
        self.message = w.HTML()
        super().__init__(list(children) + [self.message], **kwargs)

    def _guard(self, fn, *args):
        try:
            result = fn(*args)
        except Exception as err:  # every failure becomes a message; the last good picture stays
            self.message.value = _error_html(err)
            return None
        self.message.value = ""
        return result


def _parse(text):
    from .layout import parse_layout
    return parse_layout(text)


def _css_rgb(rgb):
    r, g, b = (int(round(255 * x)) for x in rgb[:3])
    return f"rgb({r},{g},{b})"


def _parse_set(text, limit, what):
    """``"all"``, ``""`` -> None (everything); ``"0-3, 8"`` -> {0, 1, 2, 3, 8}, each in [0, limit)."""
    text = text.strip().lower()
    if text in ("", "all", "*"):
        return None
    out = set()
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                items = range(lo, hi + 1)
            else:
                items = [int(part)]
        except ValueError:
            raise LayoutError(f"{what}: {part!r} is not a number or a range; write e.g. '0-3, 8' or 'all'") from None
        for i in items:
            if not 0 <= i < limit:
                raise LayoutError(f"{what}: {i} is out of range; valid values are 0..{limit - 1}")
            out.add(i)
    return out


# ---------------------------------------------------------------- LayoutExplorer

class LayoutExplorer(_Explorer):
    """Edit a layout in CuTe notation and look at it: the grid of offsets, and any cell's coordinates.

    The text box takes ``shape:stride`` (e.g. ``(4,(2,4)):(2,(1,8))``) and is parsed by
    :func:`layoutlab.parse_layout`; its errors appear below the grid. Tiles of at most 256 cells are drawn as
    buttons: hovering shows ``(m,n) idx -> offset`` and clicking fills the info line with the natural
    coordinate, the 1-D index ``m + M*n`` and the offset. Larger tiles are drawn as a picture
    (:func:`layoutlab.viz.draw_layout`) and cells are chosen with :meth:`select`.

    >>> ex = LayoutExplorer("(4,8):(8,1)")
    >>> len(ex.buttons)                       # one button per cell of the 4x8 grid
    32
    >>> ex.buttons[1 * 8 + 2].click()         # cell (m, n) = (1, 2)
    >>> "offset 10" in ex.info.value
    True
    """

    def __init__(self, layout="(4,8):(8,1)"):
        self.text = w.Text(value=str(layout), description="layout", continuous_update=False,
                           layout=w.Layout(width="28em"))
        self.grid = w.Box()
        self.info = w.HTML()
        self.layout_value = None
        super().__init__([self.text, self.grid, self.info])
        self.text.observe(lambda change: self._guard(self._update, change["new"]), names="value")
        self._guard(self._update, self.text.value)

    def _update(self, text):
        layout = _parse(text)
        if layout.rank() > 2:
            raise LayoutError(f"LayoutExplorer: {layout} has rank {layout.rank()}; the grid shows rank 1 or 2 "
                              f"(group the modes, e.g. ((2,2),4):((1,2),4))")
        modes = layout.shape if isinstance(layout.shape, tuple) else (layout.shape,)
        rows = product(modes[0])
        cols = product(modes[1]) if len(modes) == 2 else 1
        offsets = np.asarray(layout.table()).reshape(cols, rows).T
        self.layout_value, self._rows, self._cols, self._offsets = layout, rows, cols, offsets
        if rows * cols <= _MAX_BUTTON_CELLS:
            buttons = []
            for m in range(rows):
                for n in range(cols):
                    off = int(offsets[m, n])
                    b = w.Button(description=str(off), tooltip=f"({m},{n}) idx {m + rows * n} -> offset {off}",
                                 layout=w.Layout(width="auto", height="28px", padding="0"))
                    b.style.button_color = _css_rgb(viz.TV_COLORS[off % 8])
                    b.style.font_family = "monospace"
                    b.on_click(lambda _b, m=m, n=n: self.select(m, n))
                    buttons.append(b)
            self.buttons = buttons
            grid = w.GridBox(buttons, layout=w.Layout(
                grid_template_columns=f"repeat({cols}, 38px)", grid_gap="1px", width="max-content"))
            self.grid.children = [grid]
        else:
            self.buttons = []
            self.grid.children = [_image(viz.draw_layout(layout))]
        self.info.value = _ok_html(f"{layout}: size {rows * cols}, cosize {layout.cosize()}; "
                                   f"hover a cell: coordinate, index, offset")

    def select(self, m, n):
        """Show cell (m, n): natural coordinate, 1-D index ``m + M*n`` and offset ``layout(m, n)``."""
        self._guard(self._select, m, n)

    def _select(self, m, n):
        if self.layout_value is None:
            raise LayoutError("LayoutExplorer.select: no valid layout yet; fix the text box first")
        if not (0 <= m < self._rows and 0 <= n < self._cols):
            raise LayoutError(f"LayoutExplorer.select: cell ({m},{n}) is outside the {self._rows}x{self._cols} grid")
        from .inttuple import format_int_tuple, idx2crd
        layout = self.layout_value
        index = m + self._rows * n
        natural = idx2crd(index, layout.shape)
        offset = int(layout(index))
        self.info.value = _ok_html(f"(m,n) = ({m},{n})   index {index}   natural coordinate "
                                   f"{format_int_tuple(natural)}   offset {offset}")


# ---------------------------------------------------------------- TVExplorer

def tv_presets():
    """TV-layout presets ``{name: (tv_layout, (rows, cols))}`` of SM80 and SM90 MMA atoms from
    :mod:`layoutlab.atoms`: the accumulator C on (M, N), and A on (M, K) and B on (N, K) where each thread
    holds its own fragment (SM80 mma.sync, SM90 wgmma with A from registers); plus a 2x2-warp TiledMMA.

    >>> layout, tile = tv_presets()["SM90_64x64x16_F32F16F16_SS C"]
    >>> print(layout, tile)
    ((4,8,4),(2,2,8)):((128,1,16),(64,8,512)) (64, 64)
    """
    from . import atoms
    ops = [atoms.MmaF16BF16Op("f16", "f32", (16, 8, 8)), atoms.MmaF16BF16Op("f16", "f32", (16, 8, 16)),
           atoms.MmaTF32Op((16, 8, 8)), atoms.WarpgroupMmaF16BF16Op("f16", "f32", (64, 64, 16)),
           atoms.WarpgroupMmaF16BF16Op("f16", "f32", (64, 16, 16), a_src="rmem")]
    presets = {}
    # a tiled MMA: 2x2 warps of SM80 16x8x16 over a 32x16 (x16) tile, as in the TiledMMA chapter
    from .tiled import make_tiled_mma
    tiled = make_tiled_mma(ops[1], (2, 2, 1))
    tm, tn, tk = tiled.tile_size_mnk
    presets[f"TiledMMA 2x2x1 of {atoms.make_mma_atom(ops[1]).name} C"] = (tiled.tv_layout_C_tiled, (tm, tn))
    presets[f"TiledMMA 2x2x1 of {atoms.make_mma_atom(ops[1]).name} A"] = (tiled.tv_layout_A_tiled, (tm, tk))
    for op in ops:
        atom = atoms.make_mma_atom(op)
        m, n, k = atom.shape_mnk
        presets[f"{atom.name} C"] = (atom.layout_c_tv, (m, n))
        if atom.layout_a_tv.stride[0] != 0:  # a broadcast (shared-memory) operand has no per-thread picture
            presets[f"{atom.name} A"] = (atom.layout_a_tv, (m, k))
        if atom.layout_b_tv.stride[0] != 0:
            presets[f"{atom.name} B"] = (atom.layout_b_tv, (n, k))
    return presets


def _tv_steps(tv, tile, t, v):
    """The seed-000 chain for one (t, v): natural coordinate, offset, (m, n)."""
    from .inttuple import format_int_tuple, idx2crd
    m_ext, n_ext = (product(x) for x in tile)
    coord = idx2crd((t, v), tv.shape)
    offset = int(tv((t, v)))
    return (f"(T,V)=({t},{v}) -> {format_int_tuple(coord)} -> offset {offset} -> "
            f"(m,n)=({offset} % {m_ext}, {offset} // {m_ext}) = ({offset % m_ext},{offset // m_ext})")


class TVExplorer(_Explorer):
    """A thread-value layout on its tile: pick an atom, select threads and values, follow one evaluation.

    ``presets`` maps a name to ``(tv_layout, (M, N))`` (default: :func:`tv_presets`, the SM80/SM90 atoms).
    ``threads`` / ``values`` accept ``all``, a number or ranges (``0-3, 8``); the selected cells are
    outlined in the picture and the step-by-step evaluation lists up to 8 selected (t, v), e.g. for the
    WGMMA accumulator (PTX ISA, "wgmma 64xNx16 accumulator D" figure):
    ``(T,V)=(1,0) -> ((1,0,0),(0,0,0)) -> offset 128 -> (m,n)=(0,2)``.

    >>> ex = TVExplorer(preset="SM90_64x64x16_F32F16F16_SS C", threads="1", values="0")
    >>> "offset 128 -&gt; (m,n)=(128 % 64, 128 // 64) = (0,2)" in ex.steps.value
    True
    """

    def __init__(self, presets=None, preset=None, threads="0", values="all"):
        self.presets = dict(presets) if presets is not None else self._guard_presets()
        names = list(self.presets) or ["(none)"]
        self.atom = w.Dropdown(options=names, value=preset if preset in self.presets else names[0],
                               description="atom", layout=w.Layout(width="32em"))
        self.threads = w.Text(value=threads, description="threads", continuous_update=False)
        self.values = w.Text(value=values, description="values", continuous_update=False)
        self.picture = _image()
        self.steps = w.HTML()
        super().__init__([self.atom, w.HBox([self.threads, self.values]), self.picture, self.steps])
        if self._preset_error:
            self.message.value = _error_html(self._preset_error)
        for control in (self.atom, self.threads, self.values):
            control.observe(lambda _c: self._guard(self._update), names="value")
        if self.presets:
            self._guard(self._update)

    def _guard_presets(self):
        self._preset_error = None
        try:
            return tv_presets()
        except Exception as err:
            self._preset_error = err
            return {}

    _preset_error = None

    def _update(self):
        tv, tile = self.presets[self.atom.value]
        tv = _parse(tv) if isinstance(tv, str) else tv
        num_t, num_v = product(tv.shape[0]), product(tv.shape[1])
        threads = _parse_set(self.threads.value, num_t, "threads")
        values = _parse_set(self.values.value, num_v, "values")
        fig = viz.draw_tv_legend(tv, tile, highlight_threads=threads, highlight_values=values,
                                 title=f"{self.atom.value}\n{tv}")
        self.picture.value = _png(fig)
        pairs = list(itertools.islice(((t, v) for t in (sorted(threads) if threads is not None else range(num_t))
                                       for v in (sorted(values) if values is not None else range(num_v))), 8))
        self.steps.value = _ok_html("\n".join(_tv_steps(tv, tile, t, v) for t, v in pairs))

    def static(self, threads=None):
        """The current atom with a thread slider that works without a kernel (precomputed frames).

        ``threads`` (default: ``0..min(T, 32)-1``) are the slider's positions; each frame highlights that
        thread's values and shows its step-by-step evaluation for value 0.
        """
        tv, tile = self.presets[self.atom.value]
        tv = _parse(tv) if isinstance(tv, str) else tv
        num_t = product(tv.shape[0])
        threads = list(threads) if threads is not None else list(range(min(num_t, 32)))
        name = self.atom.value

        def frame(thread):
            fig = viz.draw_tv_legend(tv, tile, highlight_threads={thread}, title=f"{name}\n{tv}")
            return w.HTML(_img_html(fig, dpi=60, caption=_tv_steps(tv, tile, thread, 0)))

        slider = w.SelectionSlider(options=threads, description="thread", layout=w.Layout(width="28em"))
        return precomputed_explorer([("thread", slider)], frame)


# ---------------------------------------------------------------- SwizzleExplorer

def access_pattern(name, rows, cols, element_bytes):
    """Per-thread start cells ``[(m, n), ...]`` and bytes per thread of a named warp access of a row-major tile.

    * ``"row"``: 32 threads read consecutive elements of the rows (thread t: element t, row by row).
    * ``"column"``: 32 threads read down the columns (thread t: row ``t % rows``, column ``t // rows``) --
      the transpose pattern that conflicts without a swizzle.
    * ``"ldmatrix"``: one ldmatrix phase: 8 threads each give a 16-byte row address, rows 0..7 of column 0.

    >>> access_pattern("ldmatrix", 8, 64, 2)    # 8 threads, one 16-byte row each, down column 0
    ([(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0), (7, 0)], 16)
    """
    if name == "row":
        return [(t // cols % rows, t % cols) for t in range(32)], element_bytes
    if name == "column":
        return [(t % rows, (t // rows) % cols) for t in range(32)], element_bytes
    if name == "ldmatrix":
        per_row = max(16 // element_bytes, 1)
        return [(t % rows, (t // rows) * per_row % cols) for t in range(8)], 16
    raise LayoutError(f"access_pattern: unknown pattern {name!r}; choose 'row', 'column' or 'ldmatrix'")


def _swizzle_tile_shape(b, m, s, element_bytes):
    """Rows x cols of the row-major tile shown for Sw<B,M,S>: at least 8 rows of 128 bytes, and one period."""
    cols = max(128 // element_bytes, 1 << (m + max(s, 0)))
    rows = max(8, 1 << b)
    return rows, cols


def _swizzle_frame(b, m, s, element_bytes, pattern, labels=None, placement=True):
    """(placement figure, bank-map figure, summary line) for one parameter choice."""
    if b < 0 or m < 0:
        raise LayoutError(f"SwizzleExplorer: B={b} and M={m} must be >= 0")
    if b > 0 and abs(s) < b:
        raise LayoutError(f"SwizzleExplorer: |S|={abs(s)} < B={b}: the XOR source bits [M+S, M+S+B) overlap the "
                          f"target bits [M, M+B); CuTe requires |S| >= B")
    swz = Swizzle(b, m, s)
    rows, cols = _swizzle_tile_shape(b, m, s, element_bytes)
    placement = viz.draw_swizzle(swz, element_bytes, shape=(rows, cols), labels=labels) if placement else None
    coords, access_bytes = access_pattern(pattern, rows, cols, element_bytes)
    bank_fig = viz.draw_bank_map(swz, element_bytes, coords, access_bytes=access_bytes,
                                 title=f"{pattern} access", shape=(rows, cols))
    info = bank_fig.bank_summary
    verdict = "conflict-free" if info["wavefronts"] == info["ideal"] else f"{info['worst_ways']}-way conflict"
    line = (f"{swz} on {element_bytes}-byte elements, {rows}x{cols} tile; {pattern}: "
            f"{info['wavefronts']} wavefront(s), ideal {info['ideal']} -> {verdict}")
    return placement, bank_fig, line


class SwizzleExplorer(_Explorer):
    """Sliders for Swizzle<B,M,S> and the element size; the placement, banks and one access's conflicts.

    The tile is row-major with rows of at least 128 bytes (and at least one period of the swizzle).
    Pictures: :func:`layoutlab.viz.draw_swizzle` (logical tile coloured by bank, physical rows) and
    :func:`layoutlab.viz.draw_bank_map` for the chosen :func:`access_pattern`; the summary line gives the
    wavefront count: B=3, M=3, S=3 with 2-byte elements makes the ldmatrix phase conflict-free
    (1 wavefront); B=0 (no swizzle) gives 8.

    >>> ex = SwizzleExplorer(b=3, m=3, s=3, element_bytes=2, pattern="ldmatrix")
    >>> "conflict-free" in ex.summary.value
    True
    >>> ex.b.value = 0                        # no swizzle: the 8 rows all start in bank 0
    >>> "8-way conflict" in ex.summary.value
    True
    """

    def __init__(self, b=3, m=3, s=3, element_bytes=2, pattern="ldmatrix"):
        self.b = w.IntSlider(value=b, min=0, max=4, description="B")
        self.m = w.IntSlider(value=m, min=0, max=5, description="M")
        self.s = w.IntSlider(value=s, min=1, max=6, description="S")
        self.element_bytes = w.SelectionSlider(options=[1, 2, 4, 8], value=element_bytes, description="bytes")
        self.pattern = w.Dropdown(options=["row", "column", "ldmatrix"], value=pattern, description="access")
        self.summary = w.HTML()
        self.placement = _image()
        self.banks = _image()
        super().__init__([w.HBox([self.b, self.m, self.s]), w.HBox([self.element_bytes, self.pattern]),
                          self.summary, self.placement, self.banks])
        for control in (self.b, self.m, self.s, self.element_bytes, self.pattern):
            control.observe(lambda _c: self._guard(self._update), names="value")
        self._guard(self._update)

    def _update(self):
        placement, bank_fig, line = _swizzle_frame(self.b.value, self.m.value, self.s.value,
                                                   self.element_bytes.value, self.pattern.value)
        self.placement.value = _png(placement)
        self.banks.value = _png(bank_fig)
        self.summary.value = _ok_html(line)

    def static(self, bits=(0, 1, 2, 3), element_sizes=(1, 2, 4), patterns=("row", "column", "ldmatrix")):
        """A kernel-free version: B, element size and access pattern switch precomputed frames in the browser.

        M is chosen so that the 16-byte chunk stays whole (``M = log2(16 / element_bytes)``) and S = 3
        (128-byte rows), the swizzles CuTe uses for shared-memory atoms. The conflict summary and bank map
        come first (4 x 3 x 3 = 36 small frames by default), then the placement (4 x 3 = 12 frames: it does
        not depend on the access).
        """
        def placement(B, bytes):
            m = max((16 // bytes).bit_length() - 1, 0)
            fig, _, line = _swizzle_frame(B, m, 3, bytes, "row", labels=False)
            return w.HTML(_img_html(fig, dpi=56))

        def banks(B, bytes, access):
            m = max((16 // bytes).bit_length() - 1, 0)
            _, bank_fig, line = _swizzle_frame(B, m, 3, bytes, access, labels=False, placement=False)
            return w.HTML(_img_html(bank_fig, dpi=48, caption=line))

        return precomputed_explorer([
            ("B", w.SelectionSlider(options=list(bits), value=3 if 3 in bits else bits[0], description="B",
                                    layout=w.Layout(width="20em"))),
            ("bytes", w.Dropdown(options=list(element_sizes), description="bytes")),
            ("access", w.Dropdown(options=list(patterns), description="access")),
        ], (("B", "bytes", "access"), banks), (("B", "bytes"), placement))


# ---------------------------------------------------------------- precomputed (kernel-free) explorers

def precomputed_explorer(controls, *renders):
    """Controls whose every combination was rendered in advance; the browser switches between them.

    ``controls`` is a list of ``(name, widget)`` where each widget has an ``index`` trait (``Dropdown``,
    ``SelectionSlider``, ``ToggleButtons``...). Each of ``renders`` is ``render(**{name: value})`` returning
    a widget (e.g. an ``HTML`` with an inline image) for one combination, or ``(names, render)`` when that
    picture depends only on some of the controls (so it is rendered once per combination of those). Each
    picture's frames are nested ``Stack`` widgets, one level per control it depends on, and each level's
    ``selected_index`` is ``jslink``-ed to its control's ``index``: the links run in the browser, so the page
    needs no kernel. Frames: the product of the option counts (keep it to a few dozen).

    >>> import ipywidgets as w
    >>> box = precomputed_explorer([("B", w.SelectionSlider(options=[0, 1, 2, 3]))], lambda B: w.HTML(f"B = {B}"))
    >>> [frame.value for frame in box.frames.children], len(box.links)
    (['B = 0', 'B = 1', 'B = 2', 'B = 3'], 1)
    """
    if not controls or not renders:
        raise LayoutError("precomputed_explorer: give at least one (name, control) and one render function")
    by_name = dict(controls)
    for name, control in controls:
        if not hasattr(control, "index") or not getattr(control, "options", None):
            raise LayoutError(f"precomputed_explorer: control {name!r} ({type(control).__name__}) has no "
                              f"options/index; use Dropdown, SelectionSlider or ToggleButtons")
    links = []

    def build(names, render, level, chosen):
        if level == len(names):
            return render(**dict(zip(names, chosen)))
        control = by_name[names[level]]
        values = [opt[1] if isinstance(opt, tuple) else opt for opt in control.options]
        stack = w.Stack([build(names, render, level + 1, chosen + [v]) for v in values],
                        selected_index=control.index)
        links.append(w.jslink((control, "index"), (stack, "selected_index")))
        return stack

    pictures = []
    for item in renders:
        names, render = (item if isinstance(item, tuple) else ([name for name, _ in controls], item))
        missing = [n for n in names if n not in by_name]
        if missing:
            raise LayoutError(f"precomputed_explorer: a render depends on {missing}, which are not controls "
                              f"(the controls are {list(by_name)})")
        pictures.append(build(list(names), render, 0, []))
    box = w.VBox([w.HBox([control for _, control in controls])] + pictures)
    box.links = links  # keep the Link models alive (their state is embedded with the page)
    box.frames = pictures[0]
    box.pictures = pictures
    return box


# ---------------------------------------------------------------- LinearLayoutExplorer

class LinearLayoutExplorer(_Explorer):
    """Toggle the bits of a linear layout's F2 matrix and see the layout change; compose or invert two.

    ``a`` and ``b`` are :class:`layoutlab.linear.LinearLayout`. The matrix of ``a`` is a grid of toggle
    buttons (rows: output bits, columns: input bits); flipping one changes the image of that input bit.
    ``operation`` shows ``A``, ``inverse(A)``, ``compose(A, B)`` = B(A(x)) (``A.compose(B)``), or
    ``invert_and_compose(A, B)`` (the C with A(x) = B(C(x)), Triton's layout conversion), drawn with
    :func:`layoutlab.viz.draw_f2_matrix`, and, for a distributed layout (register / lane / warp -> two
    output dims), on its tile with :func:`layoutlab.viz.draw_tv_layout`. Non-invertible or mismatched
    layouts show the library's error.

    >>> ex = LinearLayoutExplorer()           # A: lane -> (dim0, dim1), 3 bits to 3 bits
    >>> len(ex.toggles)                       # one toggle per entry of the F2 matrix
    9
    """

    OPERATIONS = ("A", "inverse(A)", "compose(A, B)", "invert_and_compose(A, B)")

    def __init__(self, a=None, b=None, operation="A"):
        from .linear import LinearLayout
        if a is None:
            a = LinearLayout.from_bases([("lane", [[1, 0], [2, 0], [0, 1]])], ["dim0", "dim1"])
        self.a, self.b = a, b if b is not None else a
        self.operation = w.Dropdown(options=list(self.OPERATIONS), value=operation, description="show")
        self.bits = w.Box()
        self.picture = _image()
        self.tile = _image()
        self.description = w.HTML()
        super().__init__([self.bits, self.operation, self.description, w.HBox([self.picture, self.tile])])
        self.operation.observe(lambda _c: self._guard(self._update), names="value")
        self._build_toggles()
        self._guard(self._update)

    def _build_toggles(self):
        mat, ins, outs, _, _ = _f2_parts(self.a)
        self.toggles = {}
        cells = [w.Label("")] + [w.Label(lab, layout=w.Layout(width="44px")) for lab in ins]
        for r, out in enumerate(outs):
            cells.append(w.Label(out))
            for c in range(len(ins)):
                t = w.ToggleButton(value=bool(mat[r, c]), description=str(int(mat[r, c])),
                                   layout=w.Layout(width="44px", height="26px"))
                t.observe(lambda change, r=r, c=c: self._guard(self._toggle, r, c, change["new"]), names="value")
                self.toggles[(r, c)] = t
                cells.append(t)
        self.bits.children = [w.GridBox(cells, layout=w.Layout(
            grid_template_columns=f"80px repeat({len(ins)}, 46px)", grid_gap="1px"))]

    def toggle(self, row, col, value=None):
        """Set (or flip) output bit ``row`` of input bit ``col``'s image in A, and redraw (errors as messages)."""
        self._guard(self._toggle, row, col, value)

    def _toggle(self, row, col, value=None):
        from .linear import LinearLayout
        mat, ins, outs, in_groups, out_groups = _f2_parts(self.a)
        if not (0 <= row < len(outs) and 0 <= col < len(ins)):
            raise LayoutError(f"LinearLayoutExplorer.toggle: bit ({row},{col}) outside the "
                              f"{len(outs)}x{len(ins)} matrix")
        new = int(not mat[row, col]) if value is None else int(bool(value))
        if mat[row, col] == new:
            return
        mat[row, col] = new
        bases, c = [], 0
        for (name, vectors) in self.a.bases:
            vecs = []
            for _ in vectors:
                column, vec, r = mat[:, c], [], 0
                for bits in out_groups:
                    vec.append(int(sum(int(column[r + k]) << k for k in range(bits))))
                    r += bits
                vecs.append(vec)
                c += 1
            bases.append((name, vecs))
        self.a = LinearLayout(bases, self.a.out_dims, require_surjective=False)
        toggle = self.toggles.get((row, col))
        if toggle is not None:
            toggle.description = str(new)
            if toggle.value != bool(new):
                toggle.value = bool(new)
        self._update()

    def result(self):
        """The layout currently shown (A, its inverse, or the composition chosen in ``operation``)."""
        op = self.operation.value
        if op == "A":
            return self.a
        if op == "inverse(A)":
            return self.a.invert()
        if op == "compose(A, B)":
            return self.a.compose(self.b)
        return self.a.invert_and_compose(self.b)

    def _update(self):
        result = self.result()
        flags = [name for name, ok in (("injective", result.is_injective()),
                                       ("surjective", result.is_surjective())) if ok]
        self.description.value = _ok_html(f"{self.operation.value} = {result}\n"
                                          f"{', '.join(flags) if flags else 'neither injective nor surjective'}")
        self.picture.value = _png(viz.draw_f2_matrix(result, title=self.operation.value))
        # a distributed layout (register/lane/warp -> (m, n)) is also shown on its tile
        try:
            tile = viz.draw_tv_layout(result, None, title=f"{self.operation.value} on its tile")
        except LayoutError:
            self.tile.value = b""
            self.tile.layout.display = "none"
        else:
            self.tile.value = _png(tile)
            self.tile.layout.display = None


# ---------------------------------------------------------------- LdmatrixExplorer

def _ldmatrix_atoms():
    """MMA atoms offered by LdmatrixExplorer: the 16-bit SM80 ones ldmatrix feeds, and two it cannot."""
    from . import atoms
    ops = [atoms.MmaF16BF16Op("f16", "f32", (16, 8, 16)), atoms.MmaF16BF16Op("f16", "f32", (16, 8, 8)),
           atoms.MmaF16BF16Op("bf16", "f32", (16, 8, 16)), atoms.MmaTF32Op((16, 8, 8)),
           atoms.WarpgroupMmaF16BF16Op("f16", "f32", (64, 64, 16))]
    return {atoms.make_mma_atom(op).name: op for op in ops}


class LdmatrixExplorer(_Explorer):
    """Which ldmatrix atom feeds an MMA operand, which thread supplies which row address, or why none fits.

    Controls: the MMA atom, the operand (A or B), the value repetition (the tiled MMA's tile is the atom's
    M, N, K times ``rep``, CuTe's permutation, e.g. the value layout (1,2,1) of CUTLASS's SM80 GEMM examples), the majorness of the
    operand tile in shared memory, and optionally a forced x1 / x2 / x4. :func:`layoutlab.ldmatrix.select_ldmatrix`
    decides; its reasoning is shown, or its error (e.g. "TiledCopy uses too few vals for selected
    CopyAtom" for a forced x4 on an x2 fragment, or a tf32 atom). The picture is
    :func:`layoutlab.viz.draw_tiled_copy` of the chosen copy: in Src, the thread labelled on a row of 8
    elements is the lane that supplies that row's address.

    SM80_16x8x16, operand A, rep (1,2,1): K-major gives ``SM75_U32x4_LDSM_N``, MN-major ``SM75_U16x8_LDSM_T``.

    >>> LdmatrixExplorer(atom="SM80_16x8x16_F32F16F16F32_TN", operand="A", repeat="1,2,1", major="K").selection.name
    'SM75_U32x4_LDSM_N'
    """

    REPEATS = ("1,1,1", "1,2,1", "2,1,1", "1,1,2", "2,2,1")

    def __init__(self, atom="SM80_16x8x16_F32F16F16F32_TN", operand="A", repeat="1,1,1", major="K",
                 matrices="auto"):
        self.atoms = _ldmatrix_atoms()
        names = list(self.atoms)
        self.atom = w.Dropdown(options=names, value=atom if atom in names else names[0], description="MMA atom",
                               layout=w.Layout(width="32em"))
        self.operand = w.ToggleButtons(options=["A", "B"], value=operand, description="operand")
        self.repeat = w.Dropdown(options=list(self.REPEATS), value=repeat, description="value rep")
        self.major = w.ToggleButtons(options=["K", "MN"], value=major, description="smem major")
        self.matrices = w.Dropdown(options=["auto", 1, 2, 4], value=matrices, description="x")
        self.choice = w.HTML()
        self.picture = _image()
        self.selection = None
        super().__init__([self.atom, w.HBox([self.operand, self.repeat]), w.HBox([self.major, self.matrices]),
                          self.choice, self.picture])
        for control in (self.atom, self.operand, self.repeat, self.major, self.matrices):
            control.observe(lambda _c: self._changed(), names="value")
        self._changed()

    def _changed(self):
        if self._guard(self._update) is None:
            self.selection = None
            self.choice.value = ""

    def _update(self):
        from .layout import Layout
        from .ldmatrix import select_ldmatrix
        from .tiled import make_tiled_mma
        op = self.atoms[self.atom.value]
        m, n, k = op.shape_mnk
        rm, rn, rk = (int(x) for x in self.repeat.value.split(","))
        tiled = make_tiled_mma(op, (1, 1, 1), (m * rm, n * rn, k * rk))
        rows = m * rm if self.operand.value == "A" else n * rn
        cols = k * rk
        # the operand tile (M or N, K): K-major = K contiguous (row-major), MN-major = column-major
        smem = Layout((rows, cols), (cols, 1) if self.major.value == "K" else (1, rows))
        forced = None if self.matrices.value == "auto" else int(self.matrices.value)
        selection = select_ldmatrix(tiled, self.operand.value, smem, num_matrices=forced)
        self.selection = selection
        self.choice.value = _ok_html(f"smem tile {smem}\n{selection.reasoning}")
        self.picture.value = _png(viz.draw_tiled_copy(selection.tiled_copy))
        return selection

    def static(self, operands=("A", "B"), repeats=("1,1,1", "1,2,1", "2,1,1"), majors=("K", "MN")):
        """A kernel-free version for the static site: operand, value repetition and smem majorness switch
        precomputed frames in the browser (for the current MMA atom; ``x`` = auto). Each frame shows
        ``select_ldmatrix``'s reasoning and the chosen copy's Src/Dst picture (or the refusal)."""
        op = self.atoms[self.atom.value]
        name = self.atom.value

        def frame(operand, repeat, major):
            from .layout import Layout
            from .ldmatrix import select_ldmatrix
            from .tiled import make_tiled_mma
            m, n, k = op.shape_mnk
            rm, rn, rk = (int(x) for x in repeat.split(","))
            rows, cols = (m * rm if operand == "A" else n * rn), k * rk
            smem = Layout((rows, cols), (cols, 1) if major == "K" else (1, rows))
            try:
                sel = select_ldmatrix(make_tiled_mma(op, (1, 1, 1), (m * rm, n * rn, k * rk)), operand, smem)
            except LayoutError as err:
                return w.HTML(_error_html(err))
            fig = viz.draw_tiled_copy(sel.tiled_copy)
            return w.HTML(_img_html(fig, dpi=56, caption=f"{name}, smem tile {smem}\n{sel.reasoning}"))

        return precomputed_explorer([
            ("operand", w.ToggleButtons(options=list(operands), description="operand")),
            ("repeat", w.Dropdown(options=list(repeats), description="value rep")),
            ("major", w.ToggleButtons(options=list(majors), description="smem major")),
        ], frame)


# ----------------------------------------------------------------- chapter 6 (ldmatrix): pictures/widgets below


# ----------------------------------------------------------------- chapter 7 (cp.async, TMA): pictures/widgets below

__all__ += ["TmaExplorer"]


def _tma_frame(dtype, swizzle, inner_bytes, start_row, rows=8, dpi=_DPI):
    """One TmaExplorer picture: a (inner x rows) box of a 2-D tensor two boxes wide and 16 rows high,
    starting at row ``start_row``; or the rule of cuTensorMapEncodeTiled that the box breaks."""
    from .tma import TMA_DATA_TYPES, encode_tiled, smem_alignment
    esize = TMA_DATA_TYPES[dtype][0]
    inner = max(inner_bytes // esize, 1)
    tm = encode_tiled(dtype, (2 * inner, 16), (2 * inner * esize,), (inner, rows), swizzle=swizzle)
    fig = viz.draw_tma_box(tm, (0, start_row), labels=False)
    line = (f"boxDim = ({inner}, {rows}) {dtype}, swizzle {swizzle}: {tm.box_bytes} bytes per copy "
            f"(the expect-tx count); smem buffer alignment {smem_alignment(swizzle)} B")
    return fig, line


class TmaExplorer(_Explorer):
    """Element type, swizzle mode, the box's inner extent in bytes and its first row -> where the box's
    bytes land in shared memory (:func:`layoutlab.viz.draw_tma_box`), or the tensor-map rule it breaks
    (``layoutlab.tma.encode_tiled``'s message, e.g. a 256-byte inner box with the 128-byte swizzle).
    The tensor is 16 rows high, so a box starting at row 12 is half outside: its lower rows are the fill.

    >>> ex = TmaExplorer(dtype="f16", swizzle="128B", inner_bytes=128)
    >>> "1024 bytes per copy" in ex.summary.value
    True
    >>> ex.inner.value = 256                  # a 256-byte inner box breaks the 128-byte swizzle's rule
    >>> "must be &lt;= the swizzle span 128 bytes" in ex.message.value
    True
    """

    def __init__(self, dtype="f16", swizzle="128B", inner_bytes=128, start_row=0):
        self.dtype = w.Dropdown(options=["u8", "f16", "f32", "f64"], value=dtype, description="type")
        self.swizzle = w.Dropdown(options=["none", "32B", "64B", "128B"], value=swizzle, description="swizzle")
        self.inner = w.SelectionSlider(options=[8, 16, 32, 64, 128, 256], value=inner_bytes,
                                       description="inner bytes")
        self.start = w.IntSlider(value=start_row, min=0, max=12, step=4, description="first row")
        self.summary = w.HTML()
        self.picture = _image()
        super().__init__([w.HBox([self.dtype, self.swizzle]), w.HBox([self.inner, self.start]), self.summary,
                          self.picture])
        for c in (self.dtype, self.swizzle, self.inner, self.start):
            c.observe(lambda _c: self._guard(self._update), names="value")
        self._guard(self._update)

    def _update(self):
        fig, line = _tma_frame(self.dtype.value, self.swizzle.value, self.inner.value, self.start.value)
        self.picture.value = _png(fig)
        self.summary.value = _ok_html(line)

    def static(self, dtypes=("f16", "f32"), swizzles=("none", "32B", "64B", "128B"),
               inner_bytes=(32, 64, 128, 256)):
        """Kernel-free version for the website: element type, swizzle and inner box bytes switch
        precomputed frames (2 x 4 x 4 = 32 by default); a box that breaks a rule shows the message."""
        def frame(dtype, swizzle, inner):
            try:
                fig, line = _tma_frame(dtype, swizzle, inner, 0)
            except LayoutError as err:
                return w.HTML(_error_html(err))
            return w.HTML(_img_html(fig, dpi=44, caption=line))

        return precomputed_explorer([
            ("dtype", w.ToggleButtons(options=list(dtypes), description="type")),
            ("swizzle", w.ToggleButtons(options=list(swizzles), description="swizzle")),
            ("inner", w.SelectionSlider(options=list(inner_bytes), value=128 if 128 in inner_bytes
                                        else inner_bytes[0], description="inner bytes")),
        ], frame)


# ----------------------------------------------------------------- chapter 8 (warpgroup MMA): pictures/widgets below

_GMMA_DTYPES = {"f16/bf16": 16, "tf32": 32, "e4m3/s8": 8}
_GMMA_SWIZZLES = ("INTERLEAVE", "B32", "B64", "B128")


def _gmma_frame(major, swizzle, dtype, n=64):
    """(text, [figures]) for one choice: the B operand (n x one wgmma's K) of that atom, first k-block,
    or the refusal."""
    from .gmma import gmma_k_block_descs, wgmma_k
    from .swizzle import make_smem_layout_atom
    bits = _GMMA_DTYPES[dtype]
    kind = f"{major}_{'INTER' if swizzle == 'INTERLEAVE' else 'SW' + swizzle[1:]}"
    atom = make_smem_layout_atom(kind, bits)
    k = max(wgmma_k(bits), atom.outer[1].size()) if major == "K" else wgmma_k(bits)
    mn = max(n, atom.outer[0].size()) if major == "MN" else n
    tile = atom.tile_to_shape((mn, k), (0, 1) if major == "K" else (1, 0))
    d = gmma_k_block_descs(major, tile, bits)[0]
    text = (f"B tile {mn} x {k} ({bits}-bit) from {kind}: {tile}\nfirst k-block's descriptor "
            f"(buffer at address 0):\n{d}")
    return text, [viz.draw_gmma_descriptor(d), viz.draw_gmma_canonical(major, swizzle, bits)]


class GmmaDescriptorExplorer(_Explorer):
    """Majorness, swizzle mode and element type -> the descriptor of a B tile built from that GMMA atom, its
    64 bits, and the canonical layout it describes; or the refusal (MN-major needs a 16-bit type).

    ``GmmaDescriptorExplorer("MN", "B128", "tf32")`` shows why tf32 cannot be MN-major.

    >>> "0x4000004000010000" in GmmaDescriptorExplorer("K", "B128", "f16/bf16").summary.value
    True
    >>> "must be K-major" in GmmaDescriptorExplorer("MN", "B128", "tf32").message.value
    True
    """

    def __init__(self, major="K", swizzle="B128", dtype="f16/bf16"):
        self.major = w.ToggleButtons(options=["K", "MN"], value=major, description="major")
        self.swizzle = w.Dropdown(options=list(_GMMA_SWIZZLES), value=swizzle, description="swizzle")
        self.dtype = w.Dropdown(options=list(_GMMA_DTYPES), value=dtype, description="type")
        self.summary = w.HTML()
        self.bits = _image()
        self.canon = _image()
        super().__init__([w.HBox([self.major, self.swizzle, self.dtype]), self.summary, self.bits, self.canon])
        for control in (self.major, self.swizzle, self.dtype):
            control.observe(lambda _c: self._guard(self._update), names="value")
        self._guard(self._update)

    def _update(self):
        self.bits.value, self.canon.value, self.summary.value = b"", b"", ""
        text, (bits_fig, canon_fig) = _gmma_frame(self.major.value, self.swizzle.value, self.dtype.value)
        self.summary.value = _ok_html(text)
        self.bits.value = _png(bits_fig)
        self.canon.value = _png(canon_fig)

    def static(self):
        """A kernel-free version for the website: 2 x 4 x 3 precomputed frames (refusals included)."""
        def frame(major, swizzle, dtype):
            try:
                text, figs = _gmma_frame(major, swizzle, dtype)
            except LayoutError as err:
                return w.HTML(_error_html(err))
            return w.HTML(_ok_html(text) + "".join(_img_html(f, dpi=56) for f in figs))

        return precomputed_explorer([
            ("major", w.ToggleButtons(options=["K", "MN"], description="major")),
            ("swizzle", w.Dropdown(options=list(_GMMA_SWIZZLES), value="B128", description="swizzle")),
            ("dtype", w.Dropdown(options=list(_GMMA_DTYPES), description="type")),
        ], frame)


__all__ += ["GmmaDescriptorExplorer"]
