"""Linear layouts over F2 with Triton's names in one import: ``linear_layout``, ``linear_utils``, ``linear_cute``,
``linear_conversion``.

>>> from layoutlab.linear import LinearLayout, divide_left
>>> divide_left(LinearLayout.identity_1d(8, "in", "out"), LinearLayout.identity_1d(4, "in", "out")).bases
[('in', [[1]])]
"""

from . import linear_conversion, linear_cute, linear_layout, linear_utils
from .linear_layout import *  # noqa: F401,F403
from .linear_utils import *  # noqa: F401,F403
from .linear_cute import *  # noqa: F401,F403
from .linear_conversion import *  # noqa: F401,F403

__all__ = [name for m in (linear_layout, linear_utils, linear_cute, linear_conversion) for name in m.__all__]
