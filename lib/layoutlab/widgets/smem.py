"""The swizzle explorer: Swizzle<B,M,S> and the element size against a warp's access, its banks and wavefronts."""

import ipywidgets as w

from .. import viz
from ..errors import LayoutError
from ..cute.swizzle import Swizzle
from .base import _Explorer, _picture, _img_html, _ok_html, _svg_html, precomputed_explorer

__all__ = ["SwizzleExplorer", "access_pattern"]


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
        self.placement = _picture()
        self.banks = _picture()
        super().__init__([w.HBox([self.b, self.m, self.s]), w.HBox([self.element_bytes, self.pattern]),
                          self.summary, self.placement, self.banks])
        for control in (self.b, self.m, self.s, self.element_bytes, self.pattern):
            control.observe(lambda _c: self._guard(self._update), names="value")
        self._guard(self._update)

    def _update(self):
        placement, bank_fig, line = _swizzle_frame(self.b.value, self.m.value, self.s.value,
                                                   self.element_bytes.value, self.pattern.value)
        self.placement.value = _svg_html(placement)
        self.banks.value = _svg_html(bank_fig)
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
            return w.HTML(_img_html(fig))

        def banks(B, bytes, access):
            m = max((16 // bytes).bit_length() - 1, 0)
            _, bank_fig, line = _swizzle_frame(B, m, 3, bytes, access, labels=False, placement=False)
            return w.HTML(_img_html(bank_fig, caption=line))

        return precomputed_explorer([
            ("B", w.SelectionSlider(options=list(bits), value=3 if 3 in bits else bits[0], description="B",
                                    layout=w.Layout(width="20em"))),
            ("bytes", w.Dropdown(options=list(element_sizes), description="bytes")),
            ("access", w.Dropdown(options=list(patterns), description="access")),
        ], (("B", "bytes", "access"), banks), (("B", "bytes"), placement))
