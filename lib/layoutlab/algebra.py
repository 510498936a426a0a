"""The CuTe layout algebra: coalesce, composition, complement, inverses, divides and products.

Every operation follows CuTe's definitions (``cute/layout.hpp``, as the CuTe DSL evaluates them) so that
results print identically to ``cutlass.cute``.  Where CuTe only checks a *weak* condition and silently
returns a layout that is not the mathematical result, we check the exact admissibility condition and
raise :class:`~layoutlab.errors.LayoutError` saying which rule failed.

The operations live in three modules: :mod:`layoutlab.algebra_core` (coalesce, filter, composition, and the
:class:`LayoutWrapper` protocol through which swizzled layouts and tensors take part),
:mod:`layoutlab.inverse` (complement, the inverses, nullspace) and :mod:`layoutlab.products` (the divides,
the products, tile_to_shape, common vectors, recasting).  This module gathers them, so
``from layoutlab.algebra import logical_divide`` keeps working.
"""

from .algebra_core import *  # noqa: F401,F403
from .algebra_core import __all__ as _core_all
from .algebra_core import _coalesce, _compose_layouts  # noqa: F401 - cached internals (bench clears them)
from .inverse import *  # noqa: F401,F403
from .inverse import __all__ as _inverse_all
from .inverse import _complement  # noqa: F401 - cached internal (bench clears it)
from .products import *  # noqa: F401,F403
from .products import __all__ as _products_all

__all__ = [*_core_all, *_inverse_all, *_products_all]
