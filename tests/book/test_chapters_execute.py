"""Every chapter runs from top to bottom on a CPU, with no error output: read from the executed build that the figure
test measures too (``browser.executed_book``: the book built as ``make book`` builds it), so ``make test`` executes
each chapter once. A cell tagged ``raises-exception`` may show an error (it shows a refusal on purpose), as under
nbmake. ``make gpu-test`` still runs the chapters with nbmake on a GPU.
"""

import nbformat
import pytest

from browser import ROOT, executed_book

# One build, so the same worker as the figure test (its own group: free to run beside the site group).
pytestmark = pytest.mark.xdist_group("figures")

CHAPTERS = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))


def _errors(nb):
    """(cell index, ename: evalue) of every error output outside a cell tagged raises-exception."""
    return [(i, f"{o.get('ename')}: {o.get('evalue')}") for i, c in enumerate(nb.cells) if c.cell_type == "code"
            and "raises-exception" not in c.metadata.get("tags", []) for o in c.get("outputs", [])
            if o.get("output_type") == "error"]


def test_the_chapters_are_the_book_s():
    toc = (ROOT / "_toc.yml").read_text()
    assert CHAPTERS and all(f"chapters/{name}" in toc for name in CHAPTERS), (CHAPTERS, toc)


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_executes_without_errors(tmp_path_factory, name):
    book, proc = executed_book(tmp_path_factory)
    report = book / "_build" / "html" / "reports" / "chapters" / f"{name}.err.log"
    assert not report.exists(), f"{name} failed to execute:\n{report.read_text()[-6000:]}"
    executed = book / "_build" / "jupyter_execute" / "chapters" / f"{name}.ipynb"
    assert executed.is_file(), (f"{name} was not executed by the build (rc {proc.returncode}):\n"
                                f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    nb = nbformat.read(executed, 4)
    ran = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert ran and all(c.get("execution_count") for c in ran), f"{name}: cells left unexecuted"
    assert not _errors(nb), f"{name}: error outputs {_errors(nb)}"
    assert f"chapters/{name}" not in "".join(line for line in proc.stderr.splitlines(True)
                                             if "Executing notebook failed" in line), proc.stderr[-3000:]
