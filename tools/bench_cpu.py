"""``python tools/bench_cpu.py``: algebra speed and widget redraw time on this CPU."""

import algebra
import redraw

for section, module in (("algebra", algebra), ("redraw", redraw)):
    print(f"== {section} ==")
    module.main()
