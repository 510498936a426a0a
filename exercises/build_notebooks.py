"""Build ``source/exNN/exNN_*.ipynb`` (nbgrader source notebooks) from the plain-text files in ``cells/``.

The text files are the readable, diffable form of the exercises; the notebooks are what nbgrader reads and
what is committed (without outputs).  Run ``python build_notebooks.py`` after editing a ``cells/*.cells`` file;
``tests/book/test_nbgrader_course.py`` fails if a notebook is out of date.

Format: a line ``## cell: <kind> <grade_id> [points]`` starts a cell; everything up to the next such line is
its source.  Kinds, with the nbgrader cell type they become:

* ``markdown`` / ``code``: read-only (locked) cells, restored from the gradebook when grading;
* ``solution``: an autograded answer, between ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers;
* ``tests <points>``: an autograder test cell worth ``points``; hidden parts between
  ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS``;
* ``scratch``: a free code cell without nbgrader metadata (students may use it for anything).
"""

import re
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
HEADER = re.compile(r"^## cell: (markdown|code|solution|tests|scratch)(?: ([A-Za-z0-9_]+))?(?: (\d+))?\s*$")

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def _nbgrader_meta(kind, grade_id, points):
    meta = {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3, "solution": False,
            "task": False}
    if kind in ("markdown", "code"):
        meta["locked"] = True
    elif kind == "solution":
        meta["solution"] = True
    elif kind == "tests":
        meta.update(grade=True, locked=True, points=points)
    return meta


def parse_cells(text, name):
    """Split a ``.cells`` file into ``(kind, grade_id, points, source)`` tuples."""
    cells, current = [], None
    for lineno, line in enumerate(text.splitlines(), 1):
        m = HEADER.match(line)
        if m:
            kind, grade_id, points = m.group(1), m.group(2), m.group(3)
            if kind != "scratch" and not grade_id:
                sys.exit(f"{name}:{lineno}: a {kind} cell needs a grade_id")
            if (kind == "tests") != (points is not None):
                sys.exit(f"{name}:{lineno}: points go on tests cells, and every tests cell needs them")
            current = [kind, grade_id, int(points) if points else None, []]
            cells.append(current)
        elif line.startswith("## cell"):
            sys.exit(f"{name}:{lineno}: malformed cell header {line!r}")
        elif current is None:
            if line.strip():
                sys.exit(f"{name}:{lineno}: text before the first cell header")
        else:
            current[3].append(line)
    return [(k, g, p, "\n".join(src).strip("\n")) for k, g, p, src in cells]


def build_notebook(cells_path: Path):
    cells = []
    ids = set()
    for kind, grade_id, points, source in parse_cells(cells_path.read_text(), cells_path.name):
        if grade_id:
            if grade_id in ids:
                sys.exit(f"{cells_path.name}: grade_id {grade_id} used twice")
            ids.add(grade_id)
        if kind == "solution" and "### BEGIN SOLUTION" not in source:
            sys.exit(f"{cells_path.name}: solution cell {grade_id} has no ### BEGIN SOLUTION marker")
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        cell = make(source)
        cell.id = grade_id or f"scratch-{len(cells)}"
        if kind != "scratch":
            cell.metadata["nbgrader"] = _nbgrader_meta(kind, grade_id, points)
        cells.append(cell)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


def main(argv=None):
    """Write every notebook; with ``--check`` only report (exit status 1) which ones are out of date."""
    check = "--check" in (argv or sys.argv[1:])
    stale = []
    for cells_path in sorted((HERE / "cells").glob("ex*.cells")):
        assignment = cells_path.stem.split("_")[0]
        out = HERE / "source" / assignment / f"{cells_path.stem}.ipynb"
        text = nbformat.writes(build_notebook(cells_path)) + "\n"
        if out.exists() and out.read_text() == text:
            continue
        stale.append(str(out.relative_to(HERE)))
        if not check:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
    if stale:
        print(("out of date: " if check else "wrote: ") + ", ".join(stale))
    return 1 if (check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
