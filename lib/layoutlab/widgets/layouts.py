"""Explorers of layouts and thread-value layouts: click a cell of a layout, follow a (t, v) of an MMA atom to its
(m, n)."""

import itertools

import ipywidgets as w

from .. import viz
from ..errors import LayoutError
from ..cute.inttuple import product
from .base import (_Explorer, _css_rgb, _error_html, _live_only_note, _picture, _img_html, _ok_html, _parse,
                   _parse_set, _svg_html,
                   precomputed_explorer)

__all__ = ["LayoutExplorer", "TVExplorer", "tv_presets"]

_MAX_BUTTON_CELLS = 256


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
        super().__init__([self.text, _live_only_note("Typing a layout"), self.grid, self.info])
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
        flat = viz.figure._offsets(layout, "LayoutExplorer")
        offsets = [[flat[m + rows * n] for n in range(cols)] for m in range(rows)]
        self.layout_value, self._rows, self._cols, self._offsets = layout, rows, cols, offsets
        if rows * cols <= _MAX_BUTTON_CELLS:
            buttons = []
            for m in range(rows):
                for n in range(cols):
                    off = int(offsets[m][n])
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
            self.grid.children = [_picture(viz.draw_layout(layout))]
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
        from ..cute.inttuple import format_int_tuple, idx2crd
        layout = self.layout_value
        index = m + self._rows * n
        natural = idx2crd(index, layout.shape)
        offset = int(layout(index))
        self.info.value = _ok_html(f"(m,n) = ({m},{n})   index {index}   natural coordinate "
                                   f"{format_int_tuple(natural)}   offset {offset}")


def tv_presets():
    """TV-layout presets ``{name: (tv_layout, (rows, cols))}`` of SM80 and SM90 MMA atoms from
    :mod:`layoutlab.cute.atom`: the accumulator C on (M, N), and A on (M, K) and B on (N, K) where each thread
    holds its own fragment (SM80 mma.sync, SM90 wgmma with A from registers); plus a 2x2-warp TiledMMA.

    >>> layout, tile = tv_presets()["SM90_64x64x16_F32F16F16_SS C"]
    >>> print(layout, tile)
    ((4,8,4),(2,2,8)):((128,1,16),(64,8,512)) (64, 64)
    """
    from ..cute.atom import make_mma_atom
    from ..nvgpu import warp, warpgroup
    ops = [warp.MmaF16BF16Op("f16", "f32", (16, 8, 8)), warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)),
           warp.MmaTF32Op((16, 8, 8)), warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16)),
           warpgroup.MmaF16BF16Op("f16", "f32", (64, 16, 16), a_src="rmem")]
    presets = {}
    # a tiled MMA: 2x2 warps of SM80 16x8x16 over a 32x16 (x16) tile, as in the TiledMMA chapter
    from ..cute.tiled import make_tiled_mma
    tiled = make_tiled_mma(ops[1], (2, 2, 1))
    tm, tn, tk = tiled.tile_size_mnk
    presets[f"TiledMMA 2x2x1 of {make_mma_atom(ops[1]).name} C"] = (tiled.tv_layout_C_tiled, (tm, tn))
    presets[f"TiledMMA 2x2x1 of {make_mma_atom(ops[1]).name} A"] = (tiled.tv_layout_A_tiled, (tm, tk))
    for op in ops:
        atom = make_mma_atom(op)
        m, n, k = atom.shape_mnk
        presets[f"{atom.name} C"] = (atom.layout_c_tv, (m, n))
        if atom.layout_a_tv.stride[0] != 0:  # a broadcast (shared-memory) operand has no per-thread picture
            presets[f"{atom.name} A"] = (atom.layout_a_tv, (m, k))
        if atom.layout_b_tv.stride[0] != 0:
            presets[f"{atom.name} B"] = (atom.layout_b_tv, (n, k))
    return presets


def _tv_steps(tv, tile, t, v):
    """The (thread, value) -> (m, n) chain of chapter 3 for one (t, v): natural coordinate, offset, (m, n)."""
    from ..cute.inttuple import format_int_tuple, idx2crd
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
        if presets is not None and not (isinstance(presets, dict) and all(
                isinstance(k, str) and isinstance(v, tuple) and len(v) == 2 for k, v in presets.items())):
            raise LayoutError(f"TVExplorer: presets must map a name to (tv_layout, (M, N)), as tv_presets() does; "
                              f"got {type(presets).__name__}")
        if preset is not None and not isinstance(preset, str):
            raise LayoutError(f"TVExplorer: preset is the name of one of the presets, got {type(preset).__name__}")
        self._preset_error = None
        self.presets = dict(presets) if presets is not None else self._guard_presets()
        names = list(self.presets) or ["(none)"]
        self.atom = w.Dropdown(options=names, value=preset if preset in self.presets else names[0],
                               description="atom", layout=w.Layout(width="32em"))
        self.threads = w.Text(value=threads, description="threads", continuous_update=False)
        self.values = w.Text(value=values, description="values", continuous_update=False)
        self.picture = _picture()
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
        self.picture.value = _svg_html(fig)
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
            return w.HTML(_img_html(fig, caption=_tv_steps(tv, tile, thread, 0)))

        slider = w.SelectionSlider(options=threads, description="thread", layout=w.Layout(width="28em"))
        return precomputed_explorer([("thread", slider)], frame)
