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

The pictures live in submodules by concept: :mod:`~layoutlab.viz.figure` (colours, figures, the shared
drawing machinery), :mod:`~layoutlab.viz.layouts` (layouts, TV layouts, tiled MMAs and copies, F2 matrices),
:mod:`~layoutlab.viz.smem` (swizzles, banks, ldmatrix, TMA boxes, GMMA descriptors), :mod:`~layoutlab.viz.gemm`
(GEMM tiling, timelines, roofline) and :mod:`~layoutlab.viz.tables`; every public name is importable from here.
"""

from .figure import *  # noqa: F401,F403
from .layouts import *  # noqa: F401,F403
from .smem import *  # noqa: F401,F403
from .gemm import *  # noqa: F401,F403
from .tables import *  # noqa: F401,F403
from . import figure, layouts, smem, gemm, tables

__all__ = figure.__all__ + layouts.__all__ + smem.__all__ + gemm.__all__ + tables.__all__
