"""Linear layouts over F2 with Triton's names: one import for the class and everything built on it.

The parts live in their own modules, lowest first:

- :mod:`layoutlab.linear_layout` - the ``LinearLayout`` class (the algebra over F2), ``rref_f2``, ``supremum``;
- :mod:`layoutlab.linear_utils` - Triton's ``LayoutUtils``: ``divide_left``/``divide_right``,
  ``get_basis_mask``, ``factor_maximal_identity_prefix``, ``get_reps``, ``ColumnAction``, ...;
- :mod:`layoutlab.linear_cute` - the CuTe bridge: CuTe layouts, swizzles and TV layouts to and from
  linear layouts;
- :mod:`layoutlab.linear_conversion` - classifying a layout conversion (registers, warp shuffles or
  shared memory).

>>> from layoutlab.linear import LinearLayout, divide_left
>>> divide_left(LinearLayout.identity_1d(8, "in", "out"), LinearLayout.identity_1d(4, "in", "out")).bases
[('in', [[1]])]
"""

from .linear_layout import *  # noqa: F401,F403
from .linear_layout import __all__ as _layout_all
from .linear_utils import *  # noqa: F401,F403
from .linear_utils import __all__ as _utils_all
from .linear_cute import *  # noqa: F401,F403
from .linear_cute import __all__ as _cute_all
from .linear_conversion import *  # noqa: F401,F403
from .linear_conversion import __all__ as _conversion_all

__all__ = [*_layout_all, *_utils_all, *_cute_all, *_conversion_all]
