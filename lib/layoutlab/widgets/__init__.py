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

The explorers live in submodules by concept: :mod:`~layoutlab.widgets.base` (shared pieces,
:func:`precomputed_explorer`), :mod:`~layoutlab.widgets.layouts`, :mod:`~layoutlab.widgets.smem`,
:mod:`~layoutlab.widgets.linear` and :mod:`~layoutlab.widgets.hopper`; every public name is importable from here.
"""

from .base import *  # noqa: F401,F403
from .layouts import *  # noqa: F401,F403
from .smem import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .hopper import *  # noqa: F401,F403
from . import base, layouts, smem, linear, hopper

__all__ = base.__all__ + layouts.__all__ + smem.__all__ + linear.__all__ + hopper.__all__
