"""``python -m layoutlab.bench``: algebra speed and widget redraw time on this CPU."""

import importlib

for section in ("algebra", "redraw"):
    try:
        module = importlib.import_module(f"layoutlab.bench.{section}")
    except ModuleNotFoundError as err:
        print(f"[{section}] not available: {err}")
        continue
    print(f"== {section} ==")
    module.main()
