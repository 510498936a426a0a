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

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from browser import CHROMIUM, CHROMIUM_ARGS, ROOT, require_browser

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


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    require_browser()
    book = tmp_path_factory.mktemp("lite") / "book"
    for folder in ("chapters", "exercises"):
        shutil.copytree(ROOT / folder, book / folder,
                        ignore=shutil.ignore_patterns("_build", ".ipynb_checkpoints", "__pycache__", "release",
                                                      "submitted", "autograded", "feedback", "gradebook.db"))
    shutil.copy(ROOT / "_toc.yml", book / "_toc.yml")
    config = (ROOT / "_config.yml").read_text()
    assert "execute_notebooks: force" in config
    (book / "_config.yml").write_text(config.replace("execute_notebooks: force", "execute_notebooks: 'off'"))
    env = dict(os.environ, MPLBACKEND="Agg", LAYOUTLAB_LITE="1",
               LAYOUTLAB_LITE_CACHE=str(ROOT / "_build" / "_lite_cache"))   # registry downloads, kept
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(book), "-W", "-n", "--keep-going"], capture_output=True,
                          text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise AssertionError(f"jupyter-book build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return book / "_build" / "html"


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
            assert not links, f"{html.name} is a GPU chapter but has a launch link"
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


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm",
                      ".json": "application/json"}

    def log_message(self, *args):
        pass


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
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    outside, cdn, errors = [], [], []

    def route(route):
        url = route.request.url
        if url.startswith((base, "data:", "blob:")):
            route.continue_()
        else:
            (cdn if _pyodide_cdn_package(url, lock) else outside).append(url)
            route.abort()

    started = time.time()
    try:
        with sync_playwright() as p:
            # no name resolves, so nothing could leave even past the route (e.g. from a service worker)
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + [
                "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"])
            try:
                context = browser.new_context()
                context.route("**/*", route)
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
    finally:
        server.shutdown()
    print(f"\nlite kernel: layoutlab installed and evaluated in {time.time() - started:.0f} s; "
          f"Pyodide CDN requests (allowed): {len(cdn)}")
    assert not outside, f"outside requests: {sorted(set(outside))[:8]}"
    assert layoutlab_lite.PYODIDE_CDN + numpy_wheel in cdn, cdn
    assert not errors, f"script errors: {errors[:5]}"
