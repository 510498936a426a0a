"""Test support: run a chapter as a reader without the CuTe DSL (and, optionally, without Triton) would."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_chapter_without_dsl(name, *, without_triton=False):
    """Execute ``chapters/<name>.ipynb`` with the CuTe DSL marked missing (and Triton unimportable if asked);
    return everything the code cells printed, so a test can check that each skip was announced."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "chapters" / f"{name}.ipynb", 4)
    hide = "import sys, layoutlab.dsl as _d\n_d.HAVE_DSL = False\n_d.SKIP_REASON = 'simulated: no CuTe DSL'\n"
    nb.cells.insert(0, nbformat.v4.new_code_cell(hide + ("sys.modules['triton'] = None" if without_triton else "")))
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "chapters")}}).execute()
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
