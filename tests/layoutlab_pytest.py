"""pytest plugin (loaded by `-p layoutlab_pytest` in pyproject.toml, so it also covers the notebooks in
chapters/ and exercises/): GPU gating for tests and notebooks, and the oracle case-count summary."""

import json
import re
from pathlib import Path

import pytest



def _notebook_needs_gpu(path):
    try:
        meta = json.loads(Path(path).read_text()).get("metadata", {})
    except (OSError, ValueError):
        return False
    return bool(meta.get("layoutlab", {}).get("gpu"))


def pytest_collection_modifyitems(config, items):
    """Notebooks whose metadata says ``{"layoutlab": {"gpu": true}}`` get the ``gpu`` marker; ``gpu`` tests
    are skipped with a reason when no usable CUDA GPU is present."""
    from layoutlab import gpu

    have_gpu = gpu.available()
    for item in items:
        if str(item.fspath).endswith(".ipynb") and _notebook_needs_gpu(item.fspath):
            item.add_marker(pytest.mark.gpu)
        if "gpu" in item.keywords and not have_gpu:
            item.add_marker(pytest.mark.skip(reason=f"needs a CUDA GPU: {gpu.reason()}"))


# ---------------------------------------------------------------- case counts of the oracle suites
# The differential suites (against the CuTe DSL, Triton, Gluon) print one summary line each, e.g.
# "atoms vs CuTe DSL: 644 atoms compared, 0 differ". Collected from passing tests' captured output (also
# across xdist workers) and printed at the end of the run, so CI output shows how much was compared.
_ORACLE_LINE = re.compile(r"(differential|\bvs (the )?(CuTe DSL|Triton|Gluon)).*\d")
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
