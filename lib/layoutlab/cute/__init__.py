"""The CuTe DSL's ``cute.*`` in plain Python: integer tuples, layouts, the layout algebra, swizzles, tensors, MMA
and copy atoms, and tiled MMAs and copies. One module per concept, in the order they build on each other:
:mod:`~layoutlab.cute.basis` and :mod:`~layoutlab.cute.inttuple` (shapes, coordinates, ``E(i)``),
:mod:`~layoutlab.cute.layout`, :mod:`~layoutlab.cute.algebra` (composition, complement, inverses, divides,
products), :mod:`~layoutlab.cute.swizzle`, :mod:`~layoutlab.cute.tensor`, :mod:`~layoutlab.cute.atom` (the atoms;
the operations themselves are :mod:`layoutlab.nvgpu`, as the DSL's ``cute.nvgpu``) and :mod:`~layoutlab.cute.tiled`.

>>> from layoutlab import cute
>>> print(cute.logical_divide(cute.make_layout(16), cute.make_layout(4)))
(4,4):(1,4)
"""

from . import algebra, atom, basis, inttuple, layout, swizzle, tensor, tiled
from .algebra import *  # noqa: F401,F403
from .atom import *  # noqa: F401,F403
from .basis import *  # noqa: F401,F403
from .inttuple import *  # noqa: F401,F403
from .layout import *  # noqa: F401,F403
from .swizzle import *  # noqa: F401,F403
from .tensor import *  # noqa: F401,F403
from .tiled import *  # noqa: F401,F403

__all__ = sorted({n for m in (basis, inttuple, layout, algebra, swizzle, tensor, atom, tiled) for n in m.__all__})
