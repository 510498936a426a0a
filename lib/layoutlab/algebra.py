"""The CuTe layout algebra, gathered: :mod:`layoutlab.algebra_core` (coalesce, filter, composition and the
:class:`LayoutWrapper` protocol), :mod:`layoutlab.inverse` (complement, inverses, nullspace) and
:mod:`layoutlab.products` (divides, products, tile_to_shape, common vectors, recasting), so that
``from layoutlab.algebra import logical_divide`` keeps working.
"""

from .algebra_core import *  # noqa: F401,F403
from .algebra_core import __all__ as _core_all, _coalesce, _compose_layouts  # noqa: F401 - bench clears the caches
from .inverse import *  # noqa: F401,F403
from .inverse import __all__ as _inverse_all, _complement  # noqa: F401 - cached internal (bench clears it)
from .products import *  # noqa: F401,F403
from .products import __all__ as _products_all

__all__ = [*_core_all, *_inverse_all, *_products_all]
