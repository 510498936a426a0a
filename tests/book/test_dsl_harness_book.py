"""A failed CuTe DSL comparison fails the book build: `make book`'s command, on a one-page book with the
project's execution settings, stops on a notebook whose `dsl_check` fails (the DSL is faked in the notebook, so
this runs without it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]

FAILING_CELL = """\
from layoutlab import dsl, Layout
dsl.HAVE_DSL = True   # as where the DSL is installed; it answers the way ch1's old local_partition call did
dsl.dsl_eval = lambda snippets, setup="": [dsl.DSLResult("error", message="AttributeError: 'int' object has no "
                                                         "attribute 'ir_value'") for _ in snippets]
dsl.dsl_check([("local_partition", "cute.local_partition(t, tiler, 0)", Layout((8, 8), (16, 2048)))])
"""


def _book_command():
    """`make book`'s jupyter-book arguments, read from the Makefile."""
    make = (REPO / "Makefile").read_text()
    m = re.search(r"^book:.*\n\t\S*jupyter-book build \. (.*)$", make, re.M)
    assert m, "Makefile: no `book` target running `jupyter-book build .`"
    return m.group(1).split()


def test_book_target_fails_on_warnings_and_cell_errors():
    args = _book_command()
    assert "-W" in args and "--keep-going" in args, args
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    assert config["execute"]["allow_errors"] is False
    assert config["sphinx"]["config"]["nb_execution_raise_on_error"] is True
    allowing = [p.name for p in sorted((REPO / "chapters").glob("*.ipynb"))
                if json.loads(p.read_text()).get("metadata", {}).get("execution", {}).get("allow_errors")]
    assert not allowing, f"chapters that allow cell errors (a failed DSL check would not stop the build): {allowing}"


def test_a_failed_dsl_comparison_fails_the_book_build(tmp_path):
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    (tmp_path / "_config.yml").write_text(yaml.safe_dump({
        "title": "dsl check", "execute": config["execute"],
        "sphinx": {"config": {k: v for k, v in config["sphinx"]["config"].items() if k.startswith("nb_execution")}}}))
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: check\n")
    (tmp_path / "intro.md").write_text("# A book with one DSL check\n")
    nb = {"cells": [{"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# check"},
                    {"cell_type": "code", "id": "c", "metadata": {}, "source": FAILING_CELL,
                     "outputs": [], "execution_count": None}],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "check.ipynb").write_text(json.dumps(nb))
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(tmp_path), *_book_command()], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, "the book built although a DSL comparison failed:\n" + out[-3000:]
    assert "DSLCheckError" in out and "ir_value" in out, out[-3000:]
    assert "comparison skipped" not in out
