"""Import a script of the repository's ``tools/`` (the lab: sweeps, A/B comparisons, profiling, size counts), which
is no part of the installed package, by its path."""
import importlib.util
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "tools"


def load_tool(name):
    """The module ``tools/<name>.py`` (loaded once, as ``tools_<name>``)."""
    key = f"tools_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, TOOLS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]
