"""Exercise answers as data, and how each was computed, for grading outside the student's process.

Part of the exercise course, not of the library: the grader (``llgrade.py``, next to this file) copies this file
into both kernels it starts. It runs a student's notebook in a sandboxed kernel, where each test
cell is replaced by a call to :func:`export_answers`: it prints the answer variables in a canonical form (ints,
strings, tuples, lists, layouts as their CuTe string, a function as its table over the inputs the tests use).
A fresh kernel that never ran student code then reads them back with :func:`inject_answers` and runs the test
cells. Whatever the student's code did to its own kernel (patched checkers, swallowed errors, objects equal to
everything) is not in that data.

:func:`trace_answers` reads the student's cells as text, outside the kernel, and says for each answer which
names the code that computed it uses (its backward slice over the cells, in the order they ran), and whether
code the grader cannot read (``exec``, ``getattr`` with a computed name, a magic that runs a string, changing
a module) ran before it. ``layoutlab.grading.check_reasoned`` refuses an answer whose slice calls a part's library
function; a call that computes nothing the answer uses (a leftover scratch check) is not in the slice.

    >>> trace_answers([("student", "import layoutlab as L\\nx = L.idx2crd(5, (2, 3))\\nprint(L.cosize(A))")],
    ...               ["x"])["x"]["calls"]
    ['idx2crd']
"""

from __future__ import annotations

import ast
import json
import numbers
import re

EXPORT_MARK = "LLGRADE-ANSWERS "

# Calls and names through which code runs that the text does not show, or by which a module is changed.
_META_CALLS = {"exec", "eval", "compile", "__import__", "globals", "vars", "locals", "setattr", "delattr",
               "breakpoint", "get_ipython"}
_META_MODULES = {"importlib", "ctypes", "gc", "inspect", "builtins", "runpy", "types", "marshal", "pickle", "dill",
                 "code", "codeop", "subprocess", "sys", "IPython", "operator", "functools", "cloudpickle",
                 "threading", "_thread", "multiprocessing", "concurrent", "asyncio", "signal", "atexit", "sched",
                 "llanswers", "llgrade"}
_META_ATTRS = {"modules", "__dict__", "__globals__", "__builtins__", "__code__", "__closure__", "__wrapped__",
               "__getattribute__", "__getattr__", "__class__", "__subclasses__", "__mro__", "__bases__", "__func__",
               "__self__", "f_globals", "f_locals", "f_back", "ast_transformers", "input_transformers_post",
               "input_transformers_cleanup", "events", "user_ns", "run_cell", "attrgetter", "methodcaller",
               "import_module", "reload", "__setattr__", "__init_subclass__", "__set_name__"}
# Magics that run Python code given as a string: the string is read as code. Others that run nothing are fine.
_CODE_MAGICS = {"time", "timeit", "capture"}
_SAFE_MAGICS = {"matplotlib", "pwd", "who", "whos", "xmode", "precision", "lsmagic", "magic", "who_ls", "config"}
# Functions that do not change their arguments (a call passing x to another function may change x).
_PURE = {"print", "len", "repr", "str", "int", "float", "bool", "tuple", "list", "set", "sorted", "type",
         "isinstance", "display", "format", "max", "min", "sum", "abs", "range", "enumerate", "zip", "hex", "bin",
         "divmod", "all", "any", "dict", "frozenset", "reversed", "hash", "id", "callable", "iter", "next", "map",
         "filter", "round", "pow", "ord", "chr", "size", "cosize", "rank", "depth", "shape", "stride"}


def _is_magic(node):
    """``(name, code)`` when ``node`` is IPython's translation of a magic, ``get_ipython().run_*_magic(...)``."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("run_line_magic", "run_cell_magic", "system", "getoutput")
            and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "get_ipython"):
        args = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args]
        if node.func.attr in ("system", "getoutput") or not args or args[0] is None:
            return ("!", None)
        code = args[-1]
        if args[0] in ("timeit", "time") and code is not None:   # drop options such as -n 10 -r 3
            code = re.sub(r"^\s*(-\w+(\s+\d+)?\s+)*", "", code)
        return (args[0], code)
    return None


def _to_python(src):
    """A cell as plain Python statements: magics translated as IPython does, code magics inlined."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        src = TransformerManager().transform_cell(src)
    except Exception:  # noqa: BLE001 - no IPython: read the cell as it is
        pass
    try:
        body = ast.parse(src).body
    except (SyntaxError, ValueError):
        return []
    out = []
    for stmt in body:
        magic = _is_magic(stmt.value) if isinstance(stmt, ast.Expr) else None
        if magic and magic[0] in _CODE_MAGICS and magic[1] is not None:
            out.extend(_to_python(magic[1]))
        else:
            out.append(stmt)
    return out


class _Stmt(ast.NodeVisitor):
    """What one top-level statement reads, defines (surely or perhaps), calls, aliases, and its meta uses."""

    def __init__(self, stmt, cell, kind):
        self.cell, self.kind = cell, kind
        self.imports = isinstance(stmt, (ast.Import, ast.ImportFrom))
        self.uses, self.must, self.may, self.calls, self.aliases, self.meta = set(), set(), set(), set(), set(), []
        self.attr_stores = set()
        self._bound = [set()]
        self._called, self._bases = set(), set()
        self.visit(stmt)
        targets = set()
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                targets |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            targets = {stmt.name}
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            targets = {(a.asname or a.name.split(".")[0]) for a in stmt.names if a.name != "*"}
        self.must = targets & self.defs if not isinstance(stmt, ast.AugAssign) else set()
        self.may = self.defs - self.must

    # --- scopes: names bound inside a function, lambda or comprehension are not the cell's names
    @property
    def defs(self):
        return self._defs if hasattr(self, "_defs") else set()

    def _define(self, name):
        if len(self._bound) == 1:
            self._defs = self.defs | {name}
        else:
            self._bound[-1].add(name)

    def _local(self, name):
        return any(name in b for b in self._bound[1:])

    def _scope(self, names, nodes):
        self._bound.append(set(names))
        for n in nodes:
            # names assigned in the scope are local to it (unless declared global)
            for sub in ast.walk(n) if isinstance(n, ast.AST) else []:
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    self._bound[-1].add(sub.id)
            glob = {g for sub in (ast.walk(n) if isinstance(n, ast.AST) else [])
                    if isinstance(sub, (ast.Global, ast.Nonlocal)) for g in sub.names}
            self._bound[-1] -= glob
            self._defs = self.defs | glob
        for n in nodes:
            self.visit(n)
        self._bound.pop()

    def _args(self, a):
        return [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs] + [x.arg for x in (a.vararg, a.kwarg) if x]

    def visit_FunctionDef(self, node):
        for d in node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d]:
            self.visit(d)
        self._define(node.name)
        self._scope(self._args(node.args), node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        for d in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(d)
        self._define(node.name)
        self._scope([], node.body)

    def visit_Lambda(self, node):
        for d in node.args.defaults:
            self.visit(d)
        self._scope(self._args(node.args), [node.body])

    def _comp(self, node, elts):
        targets = [n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)]
        self._bound.append(set(targets))
        for g in node.generators:
            self.visit(g.iter)
            for c in g.ifs:
                self.visit(c)
        for e in elts:
            self.visit(e)
        self._bound.pop()

    def visit_ListComp(self, node):
        self._comp(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        self._comp(node, [node.key, node.value])

    # --- names
    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            if not self._local(node.id):
                self.uses.add(node.id)
                if id(node) not in self._called and id(node) not in self._bases:
                    self.aliases.add(node.id)
            if node.id in ("__builtins__", "get_ipython"):
                self.meta.append(node.id)
        elif not self._local(node.id):
            self._define(node.id)

    def visit_Attribute(self, node):
        if node.attr in _META_ATTRS:
            self.meta.append(f".{node.attr}")
        if isinstance(node.ctx, ast.Load):
            if id(node) not in self._called:
                self.aliases.add(node.attr)
        else:
            base = node.value
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name) and not self._local(base.id):
                self._define(base.id)
                self.attr_stores.add(base.id)
        self._bases.add(id(node.value))
        self.visit(node.value)

    def visit_Subscript(self, node):
        if not isinstance(node.ctx, ast.Load):
            base = node.value
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name) and not self._local(base.id):
                self._define(base.id)
        self._bases.add(id(node.value))
        self.generic_visit(node)

    def visit_Call(self, node):
        magic = _is_magic(node)
        if magic:
            name, code = magic
            if name in _CODE_MAGICS and code is not None:
                try:
                    self.visit(ast.parse(code, mode="eval").body)
                    return
                except SyntaxError:
                    pass
            if name not in _SAFE_MAGICS:
                self.meta.append(f"%{name}")
            return
        f = node.func
        self._called.add(id(f))
        if isinstance(f, ast.Name):
            self.calls.add(f.id)
            # locals() inside a function reads that function's own names: harmless
            if f.id in _META_CALLS and not (f.id == "locals" and len(self._bound) > 1):
                self.meta.append(f"{f.id}()")
            if f.id in ("getattr", "hasattr"):
                name = node.args[1] if len(node.args) > 1 else None
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    self.aliases.add(name.value)
                    if name.value in _META_ATTRS:
                        self.meta.append(f".{name.value}")
                elif f.id == "getattr":
                    self.meta.append("getattr() with a computed name")
        elif isinstance(f, ast.Attribute):
            self.calls.add(f.attr)
            base = f.value
            if isinstance(base, ast.Name) and not self._local(base.id):
                self._define(base.id)          # a method may change its object
        fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if fname not in _PURE and not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                       and f.value.id == "grading"):
            for a in node.args:
                if isinstance(a, ast.Name) and not self._local(a.id):
                    self._define(a.id)         # a function may change an argument
        self.generic_visit(node)

    def visit_Import(self, node):
        for a in node.names:
            root = a.name.split(".")[0]
            if root in _META_MODULES or not _installed(root):
                self.meta.append(f"import {a.name}")
            self.uses.update(a.name.split("."))
            self._define(a.asname or root)

    def visit_ImportFrom(self, node):
        mod = node.module or ""
        if mod.split(".")[0] in _META_MODULES or node.level or not _installed(mod.split(".")[0]):
            self.meta.append(f"from {mod} import")
        self.uses.update(mod.split("."))
        for a in node.names:
            if a.name != "*":
                self.uses.add(a.name)
                self.aliases.add(a.name)
                self._define(a.asname or a.name)


def _installed(root):
    """Whether ``root`` is a module of the Python installation (not a file the student's code could write)."""
    import importlib.machinery
    import os
    import sys

    if root in sys.builtin_module_names or root in getattr(sys, "stdlib_module_names", ()):
        return True
    path = [p for p in sys.path if p not in ("", ".", os.getcwd())]
    try:
        return importlib.machinery.PathFinder.find_spec(root, path) is not None
    except (ImportError, ValueError):
        return False


def _statements(cells):
    """``cells``: ``(kind, source)`` in the order they run; kind ``"student"``, ``"locked"`` or ``"test"``."""
    stmts, test_pos = [], []
    for i, (kind, src) in enumerate(cells):
        if kind == "test":
            test_pos.append((i, len(stmts)))
            continue
        for node in (_to_python(src) if kind == "student" else _locked_python(src)):
            stmts.append(_Stmt(node, i, kind))
    return stmts, test_pos


def _locked_python(src):
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return ast.parse(TransformerManager().transform_cell(src)).body
    except Exception:  # noqa: BLE001 - a locked cell that does not parse defines nothing we can see
        return []


def _reaching(stmts, name, end):
    """The statements before ``end`` whose definition of ``name`` can reach ``end``, latest first."""
    for s in reversed(stmts[:end]):
        if name in s.must:
            yield s
            return
        if name in s.may:
            yield s


def _slice(stmts, name, end):
    """The student statements an answer's value depends on, and whether any definition of it was seen."""
    seen, todo, found = {}, [(name, end)], False
    done = set()
    while todo:
        n, e = todo.pop()
        if (n, e) in done:
            continue
        done.add((n, e))
        for s in _reaching(stmts, n, e):
            if n == name and e == end:
                found = True
            if s.kind != "student" or id(s) in seen:
                continue
            seen[id(s)] = s
            idx = stmts.index(s)
            todo.extend((u, idx) for u in s.uses | s.may)
    return list(seen.values()), found


def trace_answers(cells, answers, *, test_index=None):
    """For each name in ``answers``: ``{"calls": [...], "aliases": [...], "cells": {name: cell}, "meta": [...],
    "defined": bool}`` -- the library names the code computing it calls or passes around, the cell each is in,
    code the grader cannot read that ran before (``"exec() in cell 3"``), and whether a student cell defines it.
    The answer is read just before the test cell ``test_index`` (an index into ``cells``), else at the end."""
    stmts, _ = _statements(cells)
    end = len(stmts) if test_index is None else sum(1 for s in stmts if s.cell < test_index)
    meta = [f"{m} in cell {s.cell}" for s in stmts[:end] if s.kind == "student" for m in s.meta]
    out = {}
    for a in answers:
        sl, found = _slice(stmts, a, end)
        where = {}
        for s in sorted(sl, key=lambda s: s.cell):
            for n in s.calls | s.aliases:
                where.setdefault(n, s.cell)
        out[a] = {"calls": sorted({n for s in sl for n in s.calls}),
                  "aliases": sorted({n for s in sl for n in s.aliases}), "cells": where,
                  "meta": meta + _module_changes(stmts, end), "defined": found and bool(sl)}
    return out


def _module_changes(stmts, end):
    """Student statements that set an attribute of something they did not make (a module, a library object)."""
    out = []
    for i, s in enumerate(stmts[:end]):
        if s.kind != "student":
            continue
        for base in s.attr_stores:
            made = [d for d in _reaching(stmts, base, i) if d.kind == "student" and base in d.must and not d.imports]
            if not made:
                out.append(f"a change to {base}.<attribute> in cell {s.cell}")
    return out


# ---------------------------------------------------------------------------------------- answers as data
def _encode(x, depth=0):
    """``x`` as JSON-able data with its Python type kept; anything else becomes ``{"other": type name}``."""
    from layoutlab.cute.layout import Layout

    if depth > 20:
        return {"other": "too deep"}
    try:
        import numpy as np

        if isinstance(x, np.ndarray):
            return _encode(x.tolist(), depth + 1)
        if isinstance(x, np.bool_):
            return {"b": bool(x)}
        if isinstance(x, np.integer):
            return int(x)
    except ImportError:
        pass
    if x is None:
        return None
    if isinstance(x, bool):
        return {"b": bool(x)}
    if isinstance(x, numbers.Integral):
        return int.__index__(int(x)) if type(x) is int else int(x.__index__())
    if isinstance(x, float):
        return {"f": float.__repr__(float(x))}
    if isinstance(x, str):
        return {"s": str.__str__(x)}
    if isinstance(x, (tuple, list)):
        items = [_encode(e, depth + 1) for e in list(x)[:100_000]]
        return {"t": items} if isinstance(x, tuple) else items
    if isinstance(x, dict):
        return {"d": [[_encode(k, depth + 1), _encode(v, depth + 1)] for k, v in list(x.items())[:100_000]]}
    if isinstance(x, Layout):
        return {"layout": str(x)}
    return {"other": type(x).__name__}


def export_answers(names, namespace, domains=None, nonce=""):
    """Print the answers ``names`` (those defined in ``namespace``) as one line of JSON for the grader, marked with
    ``nonce`` (which only this cell knows); a function answer is printed as its table over ``domains[name]()``
    (argument tuples), an error per input as text."""
    out = {}
    for n in names:
        if n not in namespace:
            continue
        v = namespace[n]
        if callable(v) and not isinstance(v, type) and domains and n in domains:
            table = []
            for args in list(domains[n]())[:250_000]:
                args = args if isinstance(args, tuple) else (args,)
                try:
                    table.append([_encode(args), _encode(v(*args))])
                except Exception as err:  # noqa: BLE001 - the grader reports it for that input
                    table.append([_encode(args), {"error": f"{type(err).__name__}: {err}"[:300]}])
            out[n] = {"fn": table}
        elif type(v).__name__ == "module" or isinstance(v, type):
            continue
        else:
            out[n] = _encode(v)
    print(EXPORT_MARK + nonce + " " + json.dumps(out))


def read_export(text, nonce=""):
    """The answers of the export line marked ``nonce`` in ``text`` (a cell's printed output), as JSON; {} if none
    (a line printed by anything else, such as a thread of the student's, does not know the nonce)."""
    found = {}
    for line in text.splitlines():
        if line.startswith(EXPORT_MARK + nonce + " "):
            try:
                data = json.loads(line[len(EXPORT_MARK + nonce) + 1:])
            except ValueError:
                continue
            if isinstance(data, dict):
                found = data
    return found


class NotData:
    """An answer that was not data (an object of a class of its own, a module, ...): equal to nothing."""

    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return f"<a {self.kind} object, not an answer: give ints, strings, tuples or a layout>"


class Tabulated:
    """A function answer as the grader sees it: its table over the inputs the tests use."""

    def __init__(self, name, table):
        self.__name__, self._table = name, table

    def __call__(self, *args):
        from layoutlab.grading import WrongAnswer

        key = _decode(_encode(tuple(args)))
        if key not in self._table:
            raise WrongAnswer(f"{self.__name__}{key!r} was not evaluated when your notebook ran")
        value = self._table[key]
        if isinstance(value, _Raised):
            raise WrongAnswer(f"{self.__name__}{key!r} raised {value.text}")
        return value

    def __repr__(self):
        return f"<function {self.__name__} ({len(self._table)} inputs)>"


class _Raised:
    def __init__(self, text):
        self.text = text


def _decode(x, name="answer"):
    from layoutlab.errors import LayoutError
    from layoutlab.cute.layout import parse_layout

    if isinstance(x, list):
        return [_decode(e) for e in x]
    if not isinstance(x, dict):
        return x if isinstance(x, int) or x is None else NotData(type(x).__name__)
    if "b" in x:
        return bool(x["b"])
    if "f" in x:
        return float(x["f"])
    if "s" in x:
        return str(x["s"])
    if "t" in x:
        return tuple(_decode(e) for e in x["t"])
    if "d" in x:
        return {_hashable(_decode(k)): _decode(v) for k, v in x["d"]}
    if "layout" in x:
        try:
            return parse_layout(str(x["layout"]))
        except LayoutError:
            return str(x["layout"])
    if "fn" in x:
        return Tabulated(name, {_hashable(_decode(a)): (_Raised(r["error"]) if isinstance(r, dict) and "error" in r
                                                        else _decode(r)) for a, r in x["fn"]})
    if "error" in x:
        return _Raised(str(x["error"]))
    return NotData(str(x.get("other", "unknown")))


def _hashable(x):
    return tuple(_hashable(e) for e in x) if isinstance(x, (list, tuple)) else x


_INJECTED = set()


def inject_answers(namespace, answers_json, provenance_json, locked):
    """In the grader's kernel: define every exported answer that neither the course's own (locked) cells nor an
    earlier test defined, and record how each was computed for ``grading.check_reasoned``."""
    answers = json.loads(answers_json)
    for name, value in answers.items():
        if name not in locked and (name not in namespace or name in _INJECTED):
            namespace[name] = _decode(value, name)
            _INJECTED.add(name)
    from layoutlab.grading import _PROVENANCE

    _PROVENANCE.clear()
    _PROVENANCE.update({k: v for k, v in json.loads(provenance_json).items() if k not in locked})
    _PROVENANCE["__exported__"] = sorted(answers)
