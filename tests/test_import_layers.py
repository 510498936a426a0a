"""The import graph of ``layoutlab`` has no upward arrows, and no core module grows past ~600 lines.

Every module is parsed with ``ast`` (imports at the top and inside functions alike) and mapped to a layer.
A core module may import only from core modules below it; the outer modules (pictures, widgets, grading,
the GPU side) may import any core module and each other, but a core module never imports them. A module
that is not in the list fails the test: place it in ``LAYERS`` where it belongs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lib" / "layoutlab"

# The core, lowest first: each layer may import only from itself and the layers before it. A module split
# into several is one layer (a tuple): its parts sit where the original sat.
LAYERS = [
    "errors",
    ("basis", "inttuple"),
    "layout",
    ("algebra_core", "inverse", "products", "algebra"),
    ("swizzle", "smem_atom"),
    "tensor",
    ("linear_f2", "linear_dims", "linear_layout", "linear_utils", "linear_cute", "linear_conversion", "linear"),
    "gluon",
    ("bank_model", "swizzle_search", "banks"),
    ("mma_atoms", "copy_atoms", "atoms"),
    ("tiled_mma", "tiled_copy", "tiled"),
    "ldmatrix",
    ("tensor_map", "async_copy", "tma"),
    "gmma",
]
CORE = [m for layer in LAYERS for m in ((layer,) if isinstance(layer, str) else layer)]
LAYER_OF = {m: i for i, layer in enumerate(LAYERS) for m in ((layer,) if isinstance(layer, str) else layer)}

# Above the core, in no order among themselves (a package stands for all its modules).
OUTER = ["dsl", "viz", "widgets", "grading", "gpu", "probe", "bench", "kernels", "blackwell", "__init__"]

# Not counted against the size limit: pictures, widgets and the GPU side are long by nature (kernels).
NOT_CORE = {"kernels", "viz", "widgets", "bench", "probe"}
MAX_CORE_LINES = 600


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE).with_suffix("").parts)


def _layer_key(name: str) -> str | None:
    """The entry of CORE or OUTER that covers module ``name`` (dotted, relative to the package)."""
    for key in CORE + OUTER:
        if name == key or name.startswith(key + "."):
            return key
    return None


def _rank(key: str) -> int:
    return LAYER_OF.get(key, len(LAYERS))


def _imports(path: Path):
    """(line, imported module relative to the package) for every ``layoutlab`` import in the file."""
    here = _module_name(path).split(".")
    package = here[:-1]                                  # for a package's __init__, "__init__" is dropped
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.split(".")[0] == "layoutlab":
                target = node.module.partition(".")[2]
            else:
                continue
            if node.module is None or not target:       # ``from . import x``: the names are modules
                for alias in node.names:
                    yield node.lineno, ".".join(filter(None, [target, alias.name]))
            else:
                yield node.lineno, target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "layoutlab" and "." in alias.name:
                    yield node.lineno, alias.name.partition(".")[2]


# _results links to the recorded GPU results (data and scripts, not the package).
FILES = sorted(p for p in PACKAGE.rglob("*.py") if not {"__pycache__", "_results"} & set(p.relative_to(PACKAGE).parts))


def test_the_files_were_found():
    assert len(FILES) > 20 and all(_module_name(p) for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_module_has_a_layer(path):
    name = _module_name(path)
    assert _layer_key(name), (
        f"lib/layoutlab/{path.relative_to(PACKAGE)}: module {name!r} is not in the layer list: "
        f"add it to the layer list (LAYERS or OUTER) in tests/test_import_layers.py")


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_import_from_a_higher_layer(path):
    name = _module_name(path)
    key = _layer_key(name)
    if key not in CORE:
        return                                           # the outer modules may import anything
    bad = []
    for line, target in _imports(path):
        target_key = _layer_key(target)
        if target_key is None:
            bad.append(f"lib/layoutlab/{path.relative_to(PACKAGE)}:{line}: {name} imports {target}, which is not "
                       f"in the layer list: add it to the layer list")
        elif _rank(target_key) > _rank(key):
            bad.append(f"lib/layoutlab/{path.relative_to(PACKAGE)}:{line}: {name} (layer {key}) imports {target} "
                       f"(layer {target_key}), which sits above it")
    assert not bad, "\n".join(bad)


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    # Guard against a vacuous pass: a fake core module importing from above must be caught.
    fake = PACKAGE / "layout.py"
    source = "def f():\n    from .viz import draw_layout\n    from . import tiled\n"
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: source)
    found = [(line, target) for line, target in _imports(fake)]
    assert found == [(2, "viz"), (3, "tiled")]
    assert all(_rank(_layer_key(t)) > _rank("layout") for _, t in found)


def _core_sizes():
    out = {}
    for path in FILES:
        name = _module_name(path)
        if name.split(".")[0] in NOT_CORE:
            continue
        out[f"lib/layoutlab/{path.relative_to(PACKAGE)}"] = len(path.read_text().splitlines())
    return out


def test_no_core_module_is_over_600_lines():
    sizes = _core_sizes()
    print(f"core: {sum(sizes.values())} lines in {len(sizes)} modules")
    over = {p: n for p, n in sizes.items() if n > MAX_CORE_LINES}
    assert not over, f"core modules over {MAX_CORE_LINES} lines (split them along their concepts): {over}"


def test_kernel_names_are_the_kernel_functions():
    # Plain imports, no module-class tricks: each kernel's module has another name than its function, so
    # importing the module first cannot shadow the function on the package.
    import importlib

    import layoutlab.kernels as kernels

    for name, module in kernels.KERNEL_MODULES.items():
        assert module != name
        importlib.import_module(f"layoutlab.kernels.{module}")
        fn = getattr(kernels, name)
        assert callable(fn) and fn.__name__ == name and fn.__module__ == f"layoutlab.kernels.{module}"
    assert type(kernels) is type(importlib)                      # a plain module
