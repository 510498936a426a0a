"""Pictures of layouts: every concept of the course as a vector picture the library draws itself.

The layout pictures (grids, TV maps, swizzles and banks, ldmatrix lanes, descriptor bits, TMA boxes, F2
matrices, the GEMM tiling) are :class:`~layoutlab.viz.svg.SvgFigure` objects written in pure Python (no numpy,
no matplotlib, so they also draw in JupyterLite offline): a notebook shows them inline as SVG, ``to_svg()`` /
``to_latex()`` (TikZ) give their text, :func:`figure_to_png` a PNG (through matplotlib). Every multi-colour
picture has a key, and no text is smaller than 11 CSS px. The true plots (bar chart, roofline, timelines) are
matplotlib Figures, shown as SVG with real text; they need matplotlib (and numpy).

The look follows CuTe's ``print_latex`` / ``print_latex_tv``: M grows downwards, N to the right, row indices
on the left, column indices on top, and the eight pastel thread colours of ``print_latex_tv`` cycling over
threads (``TV_COLORS[t % 8]``). Shared-memory banks always use :data:`BANK_COLORS` (bank ``b`` has the same
colour in every picture of the book). Grids of more than a few thousand cells are painted as one pixel per
cell, and cells are labelled only where the label fits at a readable size (``labels=True`` forces it: the
picture then scrolls sideways instead of shrinking).

Submodules: :mod:`~layoutlab.viz.svg` (the figure), :mod:`~layoutlab.viz.figure` (colours, grids, keys),
:mod:`~layoutlab.viz.layouts` (layouts, TV layouts, tiled MMAs and copies, F2 matrices), :mod:`~layoutlab.viz.smem`
(swizzles, banks, ldmatrix, TMA boxes, GMMA descriptors), :mod:`~layoutlab.viz.tiling` (GEMM tiling),
:mod:`~layoutlab.viz.gemm` (the matplotlib plots) and :mod:`~layoutlab.viz.tables`; every public name is
importable from here.
"""

from .figure import *  # noqa: F401,F403
from .layouts import *  # noqa: F401,F403
from .smem import *  # noqa: F401,F403
from .tiling import *  # noqa: F401,F403
from .tables import *  # noqa: F401,F403
from . import figure, layouts, smem, tiling, tables

_PLOTS = ["draw_mbarrier_timeline", "draw_wgmma_timeline", "draw_tour_bars", "draw_roofline",
          "draw_pipeline_timeline"]
try:
    from .gemm import *  # noqa: F401,F403
except ImportError as _err:  # no matplotlib / numpy here (e.g. JupyterLite offline): the plots say why
    def _needs_matplotlib(name, why=str(_err)):
        def plot(*args, **kwargs):
            raise ImportError(f"{name} draws a plot with matplotlib, which cannot be imported here ({why}); "
                              f"install it (in JupyterLite: %pip install matplotlib, which needs the internet)")
        plot.__name__ = name
        return plot

    for _name in _PLOTS:
        globals()[_name] = _needs_matplotlib(_name)

__all__ = figure.__all__ + layouts.__all__ + smem.__all__ + tiling.__all__ + tables.__all__ + _PLOTS
