"""Every ``>>>`` example in every module of ``layoutlab`` runs and prints what it says, and every public
function has at least one (issue 18 item 4).

The modules are found by walking the package (``pkgutil.walk_packages``), not from a hand-kept list, so a
new module is covered the moment it exists; the lab scripts of ``tools/`` that came out of the package
(``TOOL_MODULES``) are held to the same rule, loaded by path. A "public function" is a callable named in the module's
``__all__`` (or, without ``__all__``, a callable not starting with ``_``), counted once, in the module that
defines it. It has an example when its own docstring (for a class: the class's or one of its methods')
holds a ``>>>`` that runs here. ``GPU_ONLY`` lists, with the reason, those that cannot have one on a CPU
(their examples run where a GPU is); ``DSL_ONLY`` those whose examples ask the CuTe DSL (run where it is
installed); ``PENDING`` those still without one, a list that may only shrink.

The counts (examples run, public functions with and without one) are printed in the run's summary. The same
file checks the operations page ``chapters/api.md``: every function, module and test file it names exists.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import pkgutil
import re
from functools import lru_cache
from pathlib import Path

import pytest

import layoutlab

# The number of examples that ran at the end of session 14 on a CPU without the CuTe DSL (671 with it; more
# on a GPU): a drop means examples were lost silently.
MIN_EXECUTED_EXAMPLES = 623

# Entry points (``__main__`` modules) run their program when imported (``python -m layoutlab.probe`` runs the
# GPU probe); their code lives in the package module next to them, whose doctests are collected.
ENTRY_POINTS = sorted(info.name for info in pkgutil.walk_packages(layoutlab.__path__, "layoutlab.")
                      if info.name.endswith(".__main__"))

# Public functions (and module docstrings) whose examples need a GPU, and why. Their examples run only
# where a GPU is present; on a CPU they are counted and reported as not run. Nothing else may be missing.
GPU_ONLY = {
    # The GEMM kernels launch CuTe DSL kernels on GPU arrays (CuPy); chapter 9 and tests/kernels/test_kernels_*.py
    # run them on the GPU. Their module docstrings hold the calling example.
    "layoutlab.kernels.simt_simple", "layoutlab.kernels.simt_simple.sgemm_simple",
    "layoutlab.kernels.simt_fast", "layoutlab.kernels.simt_fast.sgemm_fast",
    "layoutlab.kernels.ampere", "layoutlab.kernels.ampere.gemm_ampere",
    "layoutlab.kernels.hopper.gemm_hopper",
    "layoutlab.kernels.hopper_ws.gemm_hopper_ws", "layoutlab.kernels.hopper_pingpong.gemm_hopper_pingpong",
    "layoutlab.kernels.hopper_specialized.gemm_hopper_specialized",
    "layoutlab.kernels.hopper_specialized.prepare_gemm_hopper_specialized",
    "layoutlab.kernels.tma_copy.run_tma_copy",
    "layoutlab.kernels.wgmma_tile.run_wgmma_tile",
    "layoutlab.kernels.wgmma_tile.gpu_check",
    # The probes compile PTX and run it on an sm_90a GPU (tests/nvgpu/test_probe*.py check the host side and
    # the recorded results on a CPU); main is `python -m layoutlab.probe`, which runs them.
    "layoutlab.probe.atoms.run", "layoutlab.probe.atoms.main",
    "layoutlab.probe.gmma.run", "layoutlab.probe.gmma.main",
    "layoutlab.probe.tma.run", "layoutlab.probe.tma.main",
    # record(mods, cp) launches compiled CUDA modules through an array library; the tests drive it with a
    # simulated instruction set (tests/nvgpu/test_probe.py, test_probe_gmma.py), which is no example to read.
    "layoutlab.probe.atoms.record", "layoutlab.probe.gmma.record",
    # Measures shared-memory loads on a GPU with CuPy and writes the record; tests/nvgpu/test_banks.py checks the
    # recorded H100 file.
    "layoutlab.probe.banks.record_bank_measurements",
    # The benchmarks time kernels on the GPU (against cuBLAS, across commits, sweeps, Nsight Compute) and
    # record what they measured; the recorded results are read on a CPU through gpu.load_result.
    "tools.ab_compare.main", "layoutlab.bench.gemm.main", "layoutlab.bench.gemm.bench_point",
    "tools.hopper_ws_sweep.main", "tools.profile_kernels.main",
    "tools.simt_ampere_sweep.ampere", "tools.simt_ampere_sweep.check",
    "tools.simt_ampere_sweep.time_all", "layoutlab.bench.timeline.record_timeline",
    "layoutlab.bench.timeline.main", "layoutlab.bench.tour.live_record",
    # They wrap, check or launch on GPU arrays (CuPy / torch CUDA tensors); a host array is refused
    # (refuse_host_array's example shows the refusal).
    "layoutlab.kernels._common.device_operand", "layoutlab.kernels._common.GemmLauncher",
    "layoutlab.kernels.hopper.hopper_operands",
    "layoutlab.kernels.hopper.prepare_gemm_hopper", "layoutlab.kernels.hopper_ws.prepare_gemm_hopper_ws",
    "layoutlab.kernels.hopper_pingpong.prepare_gemm_hopper_pingpong",
    "layoutlab.kernels.hopper_streamk.gemm_hopper_streamk", "layoutlab.kernels.hopper_streamk.prepare_gemm_hopper_streamk",
    "layoutlab.kernels.hopper_fp8.gemm_hopper_fp8", "layoutlab.kernels.hopper_fp8.prepare_gemm_hopper_fp8",
    "layoutlab.bench.gemm.fp8_main", "layoutlab.bench.gemm.fp8_speed", "layoutlab.bench.gemm.fp8_accuracy",
    # Called only inside a traced CuTe DSL kernel (@cute.jit / @cute.kernel), where they build DSL values.
    "layoutlab.kernels._common.operand_tensors", "layoutlab.kernels._common.grouped_tile_coord",
}

# Public functions that can have a CPU example but have none yet (owner E: bench/, kernels/; issue 18 item 4
# reached them late in session 14). Listed, not hidden: the census fails when one gains an example (remove
# it here) or a new function without one appears. The list only shrinks.
PENDING = {}

# Examples that ask the CuTe DSL itself (``nvidia-cutlass-dsl``, Linux only) or compile a kernel with it: run
# where it is installed. (Kernel modules that import the DSL at their top are skipped whole without it, and
# named in the printed counts.)
DSL_ONLY = {"layoutlab.dsl.dsl_eval", "layoutlab.dsl.dsl_value", "layoutlab.dsl.show_dsl", "layoutlab.dsl.dsl_check",
            "layoutlab.kernels.hopper.compile_hopper_gemm", "layoutlab.kernels.hopper_ws.compile_hopper_gemm_ws",
            "layoutlab.kernels.hopper_pingpong.compile_hopper_gemm_pingpong",
            "layoutlab.kernels.hopper_streamk.compile_hopper_gemm_streamk",
            "layoutlab.kernels.hopper_fp8.compile_hopper_gemm_fp8",
            "layoutlab.kernels.hopper_specialized.compile_hopper_gemm_specialized",
            "layoutlab.kernels.tma_copy.compile_tma_copy", "layoutlab.kernels.wgmma_tile.compile_wgmma_tile",
            "layoutlab.kernels.wgmma_tile.compile_report", "layoutlab.bench.tour.compile_tour",
            "layoutlab.kernels._common.cutlass_dtype", "tools.ab_compare.module",
            "layoutlab.kernels.tcgen05_tile.tcgen05_tile_class", "layoutlab.kernels.tcgen05_tile.tcgen05_tile_ptx"}


# The lab scripts that were modules of the package until issue 28 moved them to tools/ (their examples still run).
TOOL_MODULES = ["tools.ab_compare", "tools.algebra", "tools.hopper_ws_sweep", "tools.profile_kernels",
                "tools.redraw", "tools.simt_ampere_sweep"]


def _module_names():
    names = ["layoutlab"]
    for info in pkgutil.walk_packages(layoutlab.__path__, "layoutlab."):
        if info.name not in ENTRY_POINTS:
            names.append(info.name)
    return sorted(names) + TOOL_MODULES


MODULES = _module_names()


def _public_names(mod):
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in vars(mod) if not n.startswith("_")]
    return names


def _qualified(mod):
    """A module's name in these lists: ``tools.<name>`` for a lab script (loaded as ``tools_<name>``)."""
    return "tools." + mod.__name__.partition("_")[2] if mod.__name__.startswith("tools_") else mod.__name__


def _public_functions(mod):
    """{qualified name: object} of the public callables that ``mod`` itself defines."""
    out = {}
    for n in _public_names(mod):
        obj = vars(mod).get(n)                 # not getattr: a lazy module __getattr__ would load kernels
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == mod.__name__:
            out[f"{_qualified(mod)}.{n}"] = obj
    return out


@lru_cache(maxsize=None)
def _have_gpu():
    from layoutlab import gpu

    return gpu.available()


@lru_cache(maxsize=None)
def _have_dsl():
    from layoutlab import dsl

    return dsl.HAVE_DSL


def _skipped_here(name):
    return (name in GPU_ONLY and not _have_gpu()) or (name in DSL_ONLY and not _have_dsl())


@lru_cache(maxsize=None)
def _import(module_name):
    """The module, or None for a kernel module that needs the CuTe DSL where it is not installed."""
    if module_name.startswith("tools."):
        from tools_loader import load_tool

        return load_tool(module_name.partition(".")[2])
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if _have_dsl() or not (err.name or "").startswith("cutlass"):
            raise
        return None


def _needs_missing_dsl():
    return [name for name in MODULES if _import(name) is None]


@lru_cache(maxsize=None)
def _run(module_name):
    """Run the module's doctests: (failure report, {doctest name: examples run})."""
    mod = _import(module_name)
    if mod is None:
        return "", {}
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS, verbose=False)
    report, counts = [], {}
    # The examples see the package's names (``from layoutlab import *``) and, first, the module's own.
    for test in finder.find(mod, module_name, globs={**vars(layoutlab), **vars(mod)}):
        if not test.examples or _skipped_here(test.name):
            continue
        out = []
        result = runner.run(test, out=out.append)
        counts[test.name] = result.attempted
        if result.failed:
            report.append("".join(out))
    return "\n".join(report), counts


def _has_example(qualname, counts):
    return any(counts.get(t) for t in counts if t == qualname or t.startswith(qualname + "."))


@lru_cache(maxsize=None)
def _census():
    """(examples run, {module: [public functions without an example]}, public functions, GPU-only ones)."""
    executed, misses, functions, gpu_only = 0, {}, 0, 0
    for name in MODULES:
        _, counts = _run(name)
        executed += sum(counts.values())
        mod = _import(name)
        for qualname in _public_functions(mod) if mod is not None else ():
            functions += 1
            gpu_only += qualname in GPU_ONLY
            if not _has_example(qualname, counts) and qualname not in GPU_ONLY and not _skipped_here(qualname):
                misses.setdefault(name, []).append(qualname.rsplit(".", 1)[1])
    return executed, misses, functions, gpu_only


@pytest.mark.parametrize("module_name", MODULES)
def test_examples_run(module_name):
    report, _ = _run(module_name)
    assert not report, report


def _census_line():
    executed, misses, functions, gpu_only = _census()
    without = sum(len(v) for v in misses.values())
    pending = sum(len(v) for v in PENDING.values())
    return (f"doc examples: {executed} executed in {len(MODULES)} modules (entry points not imported: "
            f"{', '.join(ENTRY_POINTS)}); {functions} public functions: "
            f"{functions - without - gpu_only} with an example, {without} without ({pending} of them listed as "
            f"PENDING), {gpu_only} GPU-only"
            + ("" if _have_gpu() else " (their examples not run: no GPU here)")
            + ("" if _have_dsl() else f"; not installed here, the CuTe DSL: the examples of {len(DSL_ONLY)} functions "
               f"and the modules {', '.join(_needs_missing_dsl())} not run"))


def test_every_public_function_has_an_executed_example():
    _, misses, _, _ = _census()
    print(_census_line())
    for module_name, names in sorted(misses.items()):
        print(f"  {module_name}: {', '.join(names)}")
    new = {m: [n for n in names if n not in PENDING.get(m, ())] for m, names in misses.items()}
    new = {m: names for m, names in new.items() if names}
    assert not new, "public functions without an executed example (add a >>> to the docstring): " + "; ".join(
        f"{m}: {', '.join(n)}" for m, n in sorted(new.items()))
    done = {m: sorted(set(names) - set(misses.get(m, ()))) for m, names in PENDING.items()}
    done = {m: names for m, names in done.items() if names}
    assert not done, f"these have an example now: remove them from PENDING in tests/test_doc_examples.py: {done}"


def test_gpu_only_names_exist():
    # The allow-list cannot hide a renamed or removed function.
    for qualname in GPU_ONLY:
        if qualname in MODULES:                           # a module docstring's example
            continue
        module_name, name = qualname.rsplit(".", 1)
        mod = _import(module_name)
        if mod is None:                                    # a kernel module that needs the missing DSL
            continue
        obj = getattr(mod, name, None)
        assert inspect.isfunction(obj) or inspect.isclass(obj), qualname


def test_minimum_number_of_executed_examples():
    executed = _census()[0]
    print(_census_line())                  # shown in the run's summary (tests/layoutlab_pytest.py)
    assert executed >= MIN_EXECUTED_EXAMPLES, (
        f"only {executed} doc examples ran, fewer than the {MIN_EXECUTED_EXAMPLES} of session 14: examples were lost")


# ---------------------------------------------------------------- the operations page, chapters/api.md

API_PAGE = Path(__file__).resolve().parents[1] / "chapters" / "api.md"
CHAPTER_LABELS = {"ch-layouts", "ch-algebra", "ch-tv", "ch-linear", "ch-swizzle", "ch-ldmatrix", "ch-tma",
                  "ch-wgmma", "ch-gemm", "ch-fp8", "ch-beyond"}


def _api_rows():
    """(operation, [functions], [modules], [test files], chapter label or None) of every table row."""
    rows = []
    for line in API_PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 5 or cells[0] in ("operation", "---"):
            continue
        operation, functions, module, tests, chapter = cells
        label = re.fullmatch(r"\{ref\}`([\w-]+)`", chapter)
        assert label or chapter == "—", f"api.md: {operation}: chapter cell {chapter!r}"
        rows.append((operation, re.findall(r"`([\w.]+)`", functions), re.findall(r"`([\w.]+)`", module),
                     re.findall(r"`(tests/[\w./]+)`", tests), label.group(1) if label else None))
    return rows


def _module_file(module):
    base = Path(layoutlab.__file__).parent.joinpath(*module.split(".")[1:])
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


@lru_cache(maxsize=None)
def _top_level_definitions(module):
    """The names a module's file defines (``def``, ``class``, assignment), read from its source: a kernel module is
    checked without importing the CuTe DSL."""
    path = _module_file(module)
    if not path.exists():
        return frozenset()
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign) and not isinstance(node.value, ast.Name):      # not an alias
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(names)


def _defining_modules(name):
    root = Path(layoutlab.__file__).parent
    mods = ["layoutlab." + ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            for p in root.rglob("*.py") if "results" not in p.parts]
    return [m for m in mods if name in _top_level_definitions(m)]


def test_api_page_names_the_file_that_defines_each_function():
    # The module column is the file that defines the function, not a module that re-exports it.
    rows = _api_rows()
    assert _defining_modules("composition") == ["layoutlab.cute.algebra"]
    assert all(len(modules) == len({m for n in functions for m in _defining_modules(n)} & set(modules))
               for _, functions, modules, _, _ in rows), "a module of api.md defines none of its row's functions"


def test_api_page_rows_name_real_functions_tests_and_chapters():
    rows = _api_rows()
    assert len(rows) >= 80, f"api.md: only {len(rows)} rows parsed"
    repo, problems = API_PAGE.parents[1], []
    for operation, functions, modules, tests, chapter in rows:
        if not (functions and tests and modules):
            problems.append(f"{operation}: a function, its module and a test file are needed")
            continue
        homes = {m: _top_level_definitions(m) for m in modules}
        for name in functions:
            where = [m for m in modules if name in homes[m]]
            if not where:
                problems.append(f"{operation}: {name} is defined in none of {', '.join(modules)} (the file that "
                                f"defines it: {', '.join(_defining_modules(name)) or 'none'})")
        problems += [f"{operation}: {m} defines none of {', '.join(functions)}" for m in modules
                     if not set(functions) & homes[m]]
        for test in tests:
            path = repo / test
            if not path.exists():
                problems.append(f"{operation}: {test} does not exist")
            elif not any(re.search(rf"\b{re.escape(n)}\b", path.read_text()) for n in functions):
                problems.append(f"{operation}: {test} does not mention {', '.join(functions)}")
        if chapter is not None and chapter not in CHAPTER_LABELS:
            problems.append(f"{operation}: unknown chapter {chapter}")
    assert not problems, "chapters/api.md is stale:\n" + "\n".join(problems)
    taught = {chapter for *_, chapter in rows}
    assert CHAPTER_LABELS <= taught, f"api.md: chapters without a row: {CHAPTER_LABELS - taught}"
