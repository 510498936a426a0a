"""The CuTe layout algebra, gathered from :mod:`.algebra_core`, :mod:`.inverse` and :mod:`.products` (the old path)."""

from .algebra_core import *  # noqa: F401,F403
from .algebra_core import __all__ as _core_all, _coalesce, _compose_layouts  # noqa: F401 - bench clears the caches
from .inverse import *  # noqa: F401,F403
from .inverse import __all__ as _inverse_all, _complement  # noqa: F401 - cached internal (bench clears it)
from .products import *  # noqa: F401,F403
from .products import __all__ as _products_all

__all__ = [*_core_all, *_inverse_all, *_products_all]
