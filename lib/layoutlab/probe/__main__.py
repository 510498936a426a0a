"""``python -m layoutlab.probe OUT.json``: run the MMA/copy-atom probes on a Hopper GPU and record them."""

import sys

from .atoms import main

sys.exit(main())
