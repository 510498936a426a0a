"""Run in your browser (issue 20): the book's JupyterLite site works with the network blocked.

The book is built as `make book` builds it (the project's `_config.yml`, its chapters and exercises, the site
extension that stages the lite folder, jupyterlite-sphinx running `jupyter lite build`), with notebook
execution switched off (outputs are the notebook tests' business), into a temporary folder, and served on
127.0.0.1. Chromium opens a CPU chapter's page, follows its "Run in your browser" link, and in the lite notebook
the Pyodide kernel starts, installs `layoutlab` from the wheel the site serves (the notebook's own setup cell),
evaluates the WGMMA accumulator layout at (T1, D0) and renders an ipywidgets slider.

Every request must go to the site itself. The one documented exception is a package file on the Pyodide CDN
(numpy, matplotlib and their dependencies exist for Pyodide only there): such a request is allowed, though it
is aborted here like every other outside request. The layout evaluation needs none (the core is numpy-free);
the notebook's CDN cell, run last, must ask the CDN for numpy's wheel (and ask nothing else outside).
"""

import json
import re
import sys
import time

import pytest

from browser import ROOT, offline_browser, serve, site  # noqa: F401  (site: the shared fixture)

sys.path.insert(0, str(ROOT / "chapters" / "_ext"))
import layoutlab_lite  # noqa: E402

pytestmark = [pytest.mark.xdist_group("site")]

CPU_CHAPTER = "03_tv_layouts"
# The code a reader would type: thread 1's first accumulator register of a 64x64 WGMMA tile.
WGMMA_CELL = """\
import sys
import ipywidgets as widgets
from layoutlab import make_mma_atom, nvgpu
C = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16))).layout_c_tv
offset = C(1, 0)
print("T1 D0 ->", offset, "-> (m, n) =", (offset % 64, offset // 64), "| numpy imported:", "numpy" in sys.modules)
widgets.IntSlider(value=1, min=0, max=127, description="thread")
"""


def test_lite_notebook_runs_on_the_pyodide_kernel_and_installs_layoutlab_first():
    import nbformat

    chapter = nbformat.read(ROOT / "chapters" / f"{CPU_CHAPTER}.ipynb", as_version=4)
    lite = layoutlab_lite.lite_notebook(chapter)
    assert lite.metadata["kernelspec"]["name"] == "python"          # the Pyodide kernel's name
    code = [c for c in lite.cells if c.cell_type == "code"]
    assert code[0].source.splitlines()[-1] == "%pip install -q --no-deps layoutlab"
    # the %pip magic of the Pyodide kernel would take a trailing comment for package names
    assert all("#" not in line for c in code[:2] for line in c.source.splitlines() if line.startswith("%pip"))
    assert len(lite.cells) == len(chapter.cells) + 3 and not any(c.get("outputs") for c in code)
    assert not re.search(r"^\([\w.:-]+\)=", "".join(c.source for c in lite.cells), re.MULTILINE)
    assert chapter.metadata["kernelspec"]["name"] == "python3"       # the committed notebook is untouched


def test_exercises_are_served_as_their_student_version():
    import nbformat

    source = layoutlab_lite.exercise_for(ROOT / "chapters" / f"{CPU_CHAPTER}.ipynb", ROOT)
    nb = nbformat.read(source, as_version=4)
    text = "".join(c.source for c in nb.cells)
    assert "### BEGIN SOLUTION" in text and "### BEGIN HIDDEN TESTS" in text
    student = "".join(c.source for c in layoutlab_lite.student_version(nb).cells)
    assert "BEGIN SOLUTION" not in student and "BEGIN HIDDEN TESTS" not in student
    assert student.count("raise NotImplementedError()") == text.count("### BEGIN SOLUTION")


@pytest.mark.browser
def test_cpu_chapters_launch_the_lite_site(site):
    lite = site / "lite"
    config = json.loads((lite / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["defaultKernelName"]
    cpu = {p.stem for p in layoutlab_lite.cpu_chapters(ROOT)}
    assert cpu >= {"01_layouts", "02_layout_algebra", CPU_CHAPTER} and "08_wgmma" not in cpu
    for html in sorted((site / "chapters").glob("[0-9][0-9]_*.html")):
        text = html.read_text()
        links = re.findall(r'href="([^"]*lite/notebooks/index\.html\?path=([^"]+))"', text)
        if html.stem not in cpu:
            # a GPU chapter: no chapter link, one to its exercises (they run on a CPU)
            assert "layoutlab-lite-chapter" not in text and len(links) == 1, (html.name, links)
            assert "Exercises in your browser" in text and links[0][1].startswith(f"ex{html.stem[:2]}"), links
            continue
        assert "Run in your browser" in text and "Pyodide CDN" in text, html.name
        assert [name for _, name in links][0] == f"{html.stem}.ipynb", links
        for url, name in links:
            # the link is relative to the page and must land on the site's lite app
            assert (html.parent / url.split("?")[0]).resolve() == (lite / "notebooks" / "index.html").resolve()
            nb = json.loads((lite / "files" / name).read_text())
            assert nb["metadata"]["kernelspec"]["name"] == kernel == "python", (name, nb["metadata"]["kernelspec"])
            source = "".join("".join(c["source"]) for c in nb["cells"])
            assert "%pip install -q --no-deps layoutlab" in source
            assert "BEGIN SOLUTION" not in source and "BEGIN HIDDEN TESTS" not in source, name
        assert len(links) == 2, f"{html.name}: the chapter and its exercises (student version): {links}"
    for html in site.rglob("*.html"):
        if "lite" not in html.relative_to(site).parts:
            assert "fonts.googleapis.com" not in html.read_text(), html
    wheels = sorted(p.name for p in (lite / "pypi").glob("*.whl"))
    assert any(re.fullmatch(r"layoutlab-[\d.]+-py3-none-any\.whl", w) for w in wheels), wheels
    assert (lite / "static" / "pyodide" / "pyodide.asm.wasm").is_file()
    assert not list(lite.rglob("*.map")), "the lite site is built without sourcemaps"
    size = sum(p.stat().st_size for p in lite.rglob("*") if p.is_file())
    assert size < 45e6, f"the lite site is {size / 1e6:.0f} MB"


def _errors(outputs) -> str:
    """The tracebacks among a cell's outputs, readable (ANSI colours removed)."""
    return "\n".join(re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(o["traceback"]))
                     for o in outputs if o["output_type"] == "error")


def _pyodide_cdn_package(url, lock):
    """True for a package file of the Pyodide CDN that our lock file names (the documented exception)."""
    return url.startswith(layoutlab_lite.PYODIDE_CDN) and url[len(layoutlab_lite.PYODIDE_CDN):] in lock


@pytest.mark.browser
def test_chapter_runs_layoutlab_in_the_browser_offline(site):
    from playwright.sync_api import sync_playwright

    packages = json.loads((site / "lite" / "static" / "pyodide" / "pyodide-lock.json").read_text())["packages"]
    lock = {e["file_name"].rsplit("/", 1)[-1] for e in packages.values()}
    numpy_wheel = packages["numpy"]["file_name"].rsplit("/", 1)[-1]
    requested, errors = [], []
    started = time.time()
    with serve(site) as base:
        with sync_playwright() as p:
            # no name resolves, so nothing could leave even past the route (e.g. from a service worker)
            browser, context = offline_browser(p, base, requested)
            try:
                page = context.new_page()
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                page.goto(base + f"chapters/{CPU_CHAPTER}.html", wait_until="load")
                link = page.locator("a.layoutlab-lite-chapter")
                assert link.count() == 1
                with context.expect_page() as opened:
                    link.click()
                lab = opened.value
                lab.on("pageerror", lambda exc: errors.append(str(exc)))
                lab.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                                      " && window.jupyterapp.shell.currentWidget.sessionContext", timeout=90000)
                result = lab.evaluate("""async (code) => {
                  const app = window.jupyterapp, panel = app.shell.currentWidget, nb = panel.content;
                  await panel.sessionContext.ready;
                  const kernel = panel.sessionContext.session.kernel.name;
                  // the notebook's own setup cell: install layoutlab (and ipywidgets) from the site
                  const setup = nb.widgets.findIndex(c => c.model.sharedModel.getSource().includes('--no-deps layoutlab'));
                  nb.activeCellIndex = setup;
                  await app.commands.execute('notebook:run-cell');
                  nb.model.sharedModel.insertCell(setup + 1, {cell_type: 'code', source: code});
                  nb.activeCellIndex = setup + 1;
                  await app.commands.execute('notebook:run-cell');
                  const outputs = i => nb.widgets[i].model.outputs.toJSON();
                  return {kernel, dialog: !!document.querySelector('.jp-Dialog'),
                          setup: outputs(setup), cell: outputs(setup + 1), index: setup + 1};
                }""", WGMMA_CELL)
                assert result["kernel"] == "python" and not result["dialog"], result
                assert not _errors(result["setup"]), _errors(result["setup"])
                text = "".join("".join(o.get("text", "")) for o in result["cell"] if o["output_type"] == "stream")
                assert not _errors(result["cell"]), _errors(result["cell"])
                assert "T1 D0 -> 128 -> (m, n) = (0, 2) | numpy imported: False" in text, result["cell"]
                assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                           for o in result["cell"]), result["cell"]
                slider = lab.locator(".jp-OutputArea .widget-slider, .jp-OutputArea .widget-hslider")
                slider.first.wait_for(timeout=30000)
                assert "thread" in slider.first.inner_text()
                lab.screenshot(path=str(site.parent / "lite.png"))
                # the notebook's CDN cell asks the Pyodide CDN for numpy's wheel (aborted here) and nothing
                # else outside; the algebra above did not need it
                lab.evaluate("""async () => {
                  const app = window.jupyterapp, nb = app.shell.currentWidget.content;
                  nb.activeCellIndex = nb.widgets.findIndex(
                    c => c.model.sharedModel.getSource().includes('install -q numpy matplotlib'));
                  await app.commands.execute('notebook:run-cell');
                }""")
            finally:
                browser.close()
    cdn = [u for u in requested if _pyodide_cdn_package(u, lock)]
    outside = [u for u in requested if u not in cdn]
    print(f"\nlite kernel: layoutlab installed and evaluated in {time.time() - started:.0f} s; "
          f"Pyodide CDN requests (allowed): {len(cdn)}")
    assert not outside, f"outside requests: {sorted(set(outside))[:8]}"
    assert layoutlab_lite.PYODIDE_CDN + numpy_wheel in cdn, cdn
    assert not errors, f"script errors: {errors[:5]}"


def test_lite_markdown_has_no_myst_left_answers_are_collapsed_and_refs_are_links():
    import nbformat

    md = ("(sec-x)=\n## Check yourself\n\n1. Why? See {ref}`ch-tv` and {ref}`[PTX ISA §9.7] <bib-ptx>`.\n\n"
          ":::{dropdown} Answers\n:open:\n1. Because of $a_{ref}$.\n:::\n\nAfter, {ref}`nowhere`.")
    links = {"ch-tv": ("/chapters/03_tv_layouts.html#ch-tv", "3. Thread–value layouts"),
             "bib-ptx": ("/chapters/references.html#bib-ptx", "PTX ISA")}
    assert layoutlab_lite.myst_to_jupyter(md, links) == (
        "## Check yourself\n\n1. Why? See [3. Thread–value layouts](/chapters/03_tv_layouts.html#ch-tv) and "
        "[\\[PTX ISA §9.7\\]](/chapters/references.html#bib-ptx).\n\n"
        "<details>\n<summary>Answers</summary>\n\n1. Because of $a_{ref}$.\n\n</details>\n\nAfter, nowhere.")
    # the real chapter: every dropdown becomes a <details>, no MyST syntax is left, the helper cell is collapsed
    chapter = nbformat.read(ROOT / "chapters" / f"{CPU_CHAPTER}.ipynb", as_version=4)
    source = "".join(c.source for c in chapter.cells if c.cell_type == "markdown")
    lite = layoutlab_lite.lite_notebook(chapter, {})
    text = "".join(c.source for c in lite.cells if c.cell_type == "markdown")
    assert source.count(":::{dropdown}") >= 1
    assert text.count("<details>") == text.count("</details>") == source.count(":::{dropdown}")
    assert ":::" not in text and "{ref}`" not in text and "{dropdown}" not in text
    hidden = [c for c in lite.cells if "hide-input" in c.metadata.get("tags", [])]
    assert hidden and all(c.metadata["jupyter"]["source_hidden"] for c in hidden)
