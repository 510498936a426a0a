"""Linear layouts over F2 with Triton's names, and Gluon's layouts: :mod:`~layoutlab.linear.f2` (matrices over
F2), :mod:`~layoutlab.linear.layout` (the ``LinearLayout`` class), :mod:`~layoutlab.linear.utils` (Triton's
``LayoutUtils``: divides, bases, strides), :mod:`~layoutlab.linear.cute` (the bridge to and from CuTe layouts),
:mod:`~layoutlab.linear.conversion` (layout conversions) and :mod:`~layoutlab.linear.gluon` (Gluon's layout
classes and their linear layouts).

>>> from layoutlab.linear import LinearLayout, divide_left
>>> divide_left(LinearLayout.identity_1d(8, "in", "out"), LinearLayout.identity_1d(4, "in", "out")).bases
[('in', [[1]])]
"""

from . import conversion, cute, f2, gluon, layout, utils
from .conversion import *  # noqa: F401,F403
from .cute import *  # noqa: F401,F403
from .f2 import *  # noqa: F401,F403
from .gluon import *  # noqa: F401,F403
from .layout import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403

__all__ = [n for m in (f2, layout, utils, cute, conversion, gluon) for n in m.__all__]
