"""The import graph of ``layoutlab``: each package is one layer, no module imports from a layer above its own,
no import circle anywhere, and no private name (``_x``) is imported from another package.

Every module is parsed with ``ast`` (imports at the top and inside functions alike). The layers, lowest first:
``errors`` and ``gpu`` (they import nothing of the package), ``cute`` (the CuTe DSL's ``cute.*``), ``dsl``
(asking the DSL itself), ``linear`` (Triton's linear layouts, Gluon), ``nvgpu`` (the DSL's ``cute.nvgpu`` and
the hardware models), then ``kernels``, ``viz`` and ``widgets``, then ``probe``, ``bench`` and ``grading``, and the
package's ``__init__``. A module that is in no layer fails the test: place its package in ``LAYERS``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lib" / "layoutlab"

LAYERS = [
    {"errors", "gpu"},
    {"cute"},
    {"dsl"},
    {"linear"},
    {"nvgpu"},
    {"kernels", "viz", "widgets", "boundary"},
    {"probe", "bench", "grading"},
    {"__init__"},
]
LAYER_OF = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def _module_name(path: Path) -> str:
    """``cute/algebra.py`` -> ``cute.algebra``; a package's ``__init__.py`` -> the package (``""``: layoutlab)."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(module: str) -> str:
    """The first component: the package (``cute``) or top-level module (``gpu``); ``__init__`` for layoutlab."""
    return module.split(".")[0] if module else "__init__"


def _is_module(dotted: str) -> bool:
    base = PACKAGE.joinpath(*dotted.split(".")) if dotted else PACKAGE
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def _imports(path: Path, source: str | None = None):
    """(line, imported module, imported name or None) for every ``layoutlab`` import in the file; modules relative
    to the package. ``from X import y`` names module ``X.y`` when that is a module, else module ``X`` and name y."""
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    tree = ast.parse(source if source is not None else path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                base = parts[: len(parts) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.split(".")[0] == "layoutlab":
                target = node.module.partition(".")[2]
            else:
                continue
            for alias in node.names:
                sub = ".".join(filter(None, [target, alias.name]))
                if alias.name != "*" and _is_module(sub):
                    yield node.lineno, sub, None
                else:
                    yield node.lineno, target, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "layoutlab":
                    yield node.lineno, alias.name.partition(".")[2], None


FILES = sorted(p for p in PACKAGE.rglob("*.py") if not {"__pycache__", "results"} & set(p.relative_to(PACKAGE).parts))


def _graph():
    """{module: {imported module: first line}} over the whole package."""
    return {_module_name(p): {t: line for line, t, _ in sorted(_imports(p), reverse=True)} for p in FILES}


def _cycles(graph):
    """The import circles of ``graph`` (each as a list of modules, first repeated at the end)."""
    found, state, stack = [], {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def _upward(path, source=None):
    """The imports of ``path`` from a layer above its own, as messages."""
    name = _module_name(path)
    mine = LAYER_OF[_package_of(name)]
    return [f"lib/layoutlab/{path.relative_to(PACKAGE)}:{line}: {name or 'layoutlab'} (layer {mine}) imports "
            f"{target or 'layoutlab'} (layer {LAYER_OF.get(_package_of(target))}), which sits above it"
            for line, target, _ in _imports(path, source) if LAYER_OF.get(_package_of(target), 99) > mine]


def _private_across(path, source=None):
    """The private names ``path`` imports from another package, as messages."""
    name = _module_name(path)
    return [f"lib/layoutlab/{path.relative_to(PACKAGE)}:{line}: imports the private {target}.{what}"
            for line, target, what in _imports(path, source)
            if what and what.startswith("_") and not what.startswith("__")
            and _package_of(target) != _package_of(name)]


def test_the_files_were_found():
    assert len(FILES) > 40 and {"cute.algebra", "linear.layout", "nvgpu.tma", ""} <= {_module_name(p) for p in FILES}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_module_has_a_layer(path):
    package = _package_of(_module_name(path))
    assert package in LAYER_OF, (f"lib/layoutlab/{path.relative_to(PACKAGE)}: {package!r} is in no layer: add it to "
                                 f"LAYERS in tests/test_import_layers.py")


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_import_from_a_higher_layer(path):
    bad = _upward(path)
    assert not bad, "\n".join(bad)


def test_no_import_circle():
    circles = _cycles(_graph())
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_name_from_another_package(path):
    bad = _private_across(path)
    assert not bad, "\n".join(bad)


def test_the_checkers_see_what_they_look_for():
    # Guard against a vacuous pass: an upward import, a private cross-package name and a circle are caught.
    source = "def f():\n    from ..nvgpu.warp import MmaF16BF16Op\n    from .layout import _table\n" \
             "    from ..linear.f2 import _private\n    from .. import viz\n"
    fake = PACKAGE / "cute" / "layout.py"
    assert [t for _, t, _ in _imports(fake, source)] == ["nvgpu.warp", "cute.layout", "linear.f2", "viz"]
    assert len(_upward(fake, source)) == 3                        # nvgpu, linear and viz sit above cute
    assert _private_across(fake, source) == ["lib/layoutlab/cute/layout.py:4: imports the private linear.f2._private"]
    assert _cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b": 1}, "b": {}}) == []


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


# What the installed package must not do: it has no checkout around it (a wheel), so it neither climbs out of its
# own folder (``parents[3]`` was the repository), nor imports files by path (a test), nor runs git.
NOT_IN_THE_PACKAGE = {
    "reads the checkout": r"parents\[[3-9]\]|\.parent\.parent\.parent",
    "imports a file by path": r"spec_from_file_location|SourceFileLoader|runpy\.run_path",
    "runs git": r"""["']git["']|git (archive|log|show|rev-parse|ls-tree)""",
}


@pytest.mark.parametrize("what", sorted(NOT_IN_THE_PACKAGE))
def test_the_package_stays_inside_itself(what):
    import re

    pattern = re.compile(NOT_IN_THE_PACKAGE[what])
    assert pattern.search("REPO = Path(__file__).resolve().parents[3]\nsubprocess.run(['git', 'archive', c])\n"
                          "importlib.util.spec_from_file_location(name, path)")       # the pattern can match
    bad = [f"lib/layoutlab/{p.relative_to(PACKAGE)}:{i}: {line.strip()}" for p in FILES
           for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not bad, f"a module of the installed package {what} (move it to tools/):\n" + "\n".join(bad)


def test_star_import_binds_names_not_modules():
    # ``from layoutlab import *`` starts every chapter and exercise: it gives the public names and no module (the
    # DSL's namespace of operations is imported by name: ``from layoutlab import nvgpu``).
    import types

    import layoutlab

    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    literal = [n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "__all__"]
    assert literal and isinstance(literal[0].value, ast.List), "layoutlab.__all__ is written out, name by name"
    names = ast.literal_eval(literal[0].value)
    assert len(names) == len(set(names)) > 200
    namespace = {}
    exec("from layoutlab import *", namespace)
    modules = sorted(n for n, v in namespace.items() if isinstance(v, types.ModuleType))
    assert modules == [], f"from layoutlab import * binds the modules {modules}"
    assert set(namespace) - {"__builtins__"} == set(names) == set(layoutlab.__all__)
    exec("from layoutlab import nvgpu", namespace)       # the DSL's spelling, one import away
    assert namespace["nvgpu"].warpgroup.MmaF16BF16Op is namespace["WarpgroupMmaF16BF16Op"]
