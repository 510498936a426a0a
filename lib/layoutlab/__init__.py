"""layoutlab: the CuTe layout algebra, linear layouts over F2, swizzles and MMA/copy atoms in plain Python.

``from layoutlab import *`` gives the algebra with the CuTe DSL's names. Pictures live in
:mod:`layoutlab.viz`, widgets in :mod:`layoutlab.widgets`, GPU detection in :mod:`layoutlab.gpu`,
kernels in :mod:`layoutlab.kernels`.
"""

from .errors import *  # noqa: F401,F403
from .inttuple import *  # noqa: F401,F403
from .layout import *  # noqa: F401,F403
from .algebra import *  # noqa: F401,F403
from .tensor import *  # noqa: F401,F403
from .swizzle import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .gluon import *  # noqa: F401,F403
from .banks import *  # noqa: F401,F403
from .atoms import *  # noqa: F401,F403
from .tiled import *  # noqa: F401,F403
from .ldmatrix import *  # noqa: F401,F403
from .tma import *  # noqa: F401,F403
from .gmma import *  # noqa: F401,F403

__version__ = "0.1.0"
