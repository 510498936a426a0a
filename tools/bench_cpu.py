"""``python -m layoutlab.bench``: algebra speed and widget redraw time on this CPU."""

from . import algebra, redraw

for section, module in (("algebra", algebra), ("redraw", redraw)):
    print(f"== {section} ==")
    module.main()
