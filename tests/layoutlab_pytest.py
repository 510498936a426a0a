"""pytest plugin (loaded by `-p layoutlab_pytest` in pyproject.toml, so it also covers the notebooks in
chapters/ and exercises/): GPU gating for tests and notebooks, and the oracle case-count summary."""

import json
import re
from pathlib import Path

import pytest



def _notebook_flags(path):
    try:
        meta = json.loads(Path(path).read_text()).get("metadata", {})
    except (OSError, ValueError):
        return {}
    return meta.get("layoutlab", {})


def pytest_collection_modifyitems(config, items):
    """Notebooks whose metadata says ``{"layoutlab": {"gpu": true}}`` get the ``gpu`` marker (they need one);
    ``{"layoutlab": {"gpu_cells": true}}`` marks a chapter that runs on a CPU (compiling its kernels, showing
    recorded results) and runs its kernels live on a GPU: it gets ``gpu_cells``, so ``make test`` runs it
    and ``make gpu-test`` runs it again on the GPU. ``gpu`` tests are skipped with a reason when no usable
    CUDA GPU is present."""
    from layoutlab import gpu

    have_gpu = gpu.available()
    for item in items:
        if str(item.fspath).endswith(".ipynb"):
            flags = _notebook_flags(item.fspath)
            if flags.get("gpu"):
                item.add_marker(pytest.mark.gpu)
            if flags.get("gpu_cells"):
                item.add_marker(pytest.mark.gpu_cells)
        if "gpu" in item.keywords and not have_gpu:
            item.add_marker(pytest.mark.skip(reason=f"needs a CUDA GPU: {gpu.reason()}"))


# ---------------------------------------------------------------- case counts of the oracle suites
# The differential suites (against the CuTe DSL, Triton, Gluon) print one summary line each, e.g.
# "atoms vs CuTe DSL: 644 atoms compared, 0 differ". Collected from passing tests' captured output (also
# across xdist workers) and printed at the end of the run, so CI output shows how much was compared.
_ORACLE_LINE = re.compile(r"(differential|\bvs (the )?(CuTe DSL|Triton|Gluon)|^doc examples:|^public boundary:).*\d")
_oracle_lines = []


def pytest_runtest_logreport(report):
    if report.when != "call" or not report.passed:
        return
    for name, content in report.sections:
        if "stdout" not in name:
            continue
        for line in content.splitlines():
            line = line.strip()
            if _ORACLE_LINE.search(line) and line not in _oracle_lines:
                _oracle_lines.append(line)


def pytest_terminal_summary(terminalreporter):
    if _oracle_lines:
        terminalreporter.section("cases compared with the oracles (CuTe DSL, Triton, Gluon)")
        for line in _oracle_lines:
            terminalreporter.write_line(line)
