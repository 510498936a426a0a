"""Test support: build a small Jupyter Book with the project's configuration and look at it in Chromium.

Used by the site tests (widgets rendered from saved state, client-side slider interactivity).
"""

import contextlib
import functools
import gzip
import http.server
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


#: the widget manager, committed gzipped; every book build serves it unpacked (chapters/_widgets_js/README.md)
WIDGETS_JS_GZ = ROOT / "vendor" / "embed-amd.js.gz"


def unpack_widgets_js(book: Path):
    """Write ``chapters/_widgets_js/embed-amd.js`` of the book copy ``book`` from :data:`WIDGETS_JS_GZ`, as
    ``make book`` does for the repository (the checkout may hold no unpacked copy, or an old one)."""
    folder = Path(book) / "chapters" / "_widgets_js"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "embed-amd.js").write_bytes(gzip.decompress(WIDGETS_JS_GZ.read_bytes()))


def require_browser():
    """Skip when Chromium or Playwright is missing — except in CI, where the browser test must run."""
    missing = []
    if CHROMIUM is None:
        missing.append("chromium (apt-get install chromium)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing.append("playwright (pip install playwright)")
    if missing:
        if os.environ.get("LAYOUTLAB_REQUIRE_BROWSER"):
            pytest.fail("browser test required but missing: " + ", ".join(missing))
        pytest.skip("needs " + ", ".join(missing))


def build_book(tmp_path, cells, name="page"):
    """Build a one-page book from notebook ``cells`` (source strings; markdown if they start with '#')
    using the project's real ``_config.yml`` and vendored widget JavaScript. Returns the page's HTML path."""
    book = Path(tmp_path) / "book"
    book.mkdir()
    shutil.copytree(ROOT / "chapters" / "_widgets_js", book / "chapters" / "_widgets_js")
    unpack_widgets_js(book)
    shutil.copytree(ROOT / "chapters" / "_ext", book / "chapters" / "_ext")
    shutil.copy(ROOT / "_config.yml", book / "_config.yml")
    (book / "_toc.yml").write_text(f"format: jb-book\nroot: {name}\n")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(c) if c.lstrip().startswith("#") else nbformat.v4.new_code_cell(c)
                for c in cells]
    nbformat.write(nb, book / f"{name}.ipynb")
    env = dict(os.environ, MPLBACKEND="Agg")
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(book), "-W", "-n", "--keep-going"],
                          capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise AssertionError(f"jupyter-book build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return book / "_build" / "html" / f"{name}.html"


def open_page(playwright, html_path):
    """A Chromium page (started as this workplace requires) showing ``html_path``; console errors collected
    in ``page.errors``."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(Path(html_path).as_uri())
    return browser, page


# ------------------------------------------------------------------------------------------ the whole site
#: A page added to the site the tests build: real library output (long lines, a show_table table) executed at
#: build time (the chapters are not: their outputs are the notebook tests' business), so the layout tests
#: see output blocks and tables as a chapter shows them.
CHECK_PAGE_CELLS = [
    "# Site check\n\nOutput blocks and tables as the chapters show them.",
    "from layoutlab import *\nfrom layoutlab import nvgpu\nfrom layoutlab.viz import show_table",
    # dsl_check lines as chapters 8 and 9 print them: the verdict sits at the end of a long line
    'sA = make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, 16).tile_to_shape((64, 64, 2), (0, 1, 2))\n'
    'print(f"staged A       CuTe DSL: {sA}  [identical]")\n'
    'print(f"staged A (MN)  CuTe DSL: {sA}   layoutlab: {sA}  [identical]")\n'
    'print(make_tiled_mma(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 128, 16))))',
    'show_table(["atom", "layout", "bytes per row"],\n'
    '           [[f"`{k.name}`", f"`{make_smem_layout_atom(k, 16)}`", 128] for k in SmemLayoutAtomKind])',
]
CHECK_PAGE = "site_check"


def build_site(book: Path, check_page: bool = True) -> Path:
    """Build the book as ``make book`` does (the project's ``_config.yml``, chapters, exercises, the site
    extension with its JupyterLite site) into ``book``, with the chapters' execution switched off; with
    ``check_page``, plus :data:`CHECK_PAGE` (executed). Returns the HTML folder."""
    for folder in ("chapters", "exercises"):
        shutil.copytree(ROOT / folder, book / folder,
                        ignore=shutil.ignore_patterns("_build", ".ipynb_checkpoints", "__pycache__", "release",
                                                      "submitted", "autograded", "feedback", "gradebook.db"))
    unpack_widgets_js(book)
    toc = (ROOT / "_toc.yml").read_text()
    if check_page:
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nb.metadata["mystnb"] = {"execution_mode": "force"}
        nb.cells = [nbformat.v4.new_markdown_cell(c) if c.startswith("#") else nbformat.v4.new_code_cell(c)
                    for c in CHECK_PAGE_CELLS]
        nbformat.write(nb, book / f"{CHECK_PAGE}.ipynb")
        toc += f"  - caption: Site check\n    chapters:\n      - file: {CHECK_PAGE}\n"
    (book / "_toc.yml").write_text(toc)
    config = (ROOT / "_config.yml").read_text()
    assert "execute_notebooks: force" in config
    (book / "_config.yml").write_text(config.replace("execute_notebooks: force", "execute_notebooks: 'off'"))
    env = dict(os.environ, MPLBACKEND="Agg", LAYOUTLAB_LITE="1",
               LAYOUTLAB_LITE_CACHE=str(ROOT / "_build" / "_lite_cache"))   # registry downloads, kept
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(book), "-W", "-n", "--keep-going"], capture_output=True,
                          text=True, env=env, timeout=900)
    if proc.returncode != 0:
        raise AssertionError(f"jupyter-book build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return book / "_build" / "html"


_EXECUTED_BOOK = {}


def executed_book(tmp_path_factory):
    """``(book, proc)``: the chapters built as ``make book`` builds them, every chapter executed (without the Lite
    site), once per test process. ``book/_build/html`` is the site; ``book/_build/jupyter_execute/chapters`` holds
    the executed notebooks; ``proc`` is jupyter-book's run. One build serves the figure test and the chapters'
    execution test (tests/book/test_chapters_execute.py), so ``make test`` executes each chapter once."""
    if "book" not in _EXECUTED_BOOK:
        book = tmp_path_factory.mktemp("executed") / "book"
        shutil.copytree(ROOT / "chapters", book / "chapters",
                        ignore=shutil.ignore_patterns("_build", ".ipynb_checkpoints", "__pycache__"))
        unpack_widgets_js(book)
        for name in ("_toc.yml", "_config.yml"):
            shutil.copy(ROOT / name, book / name)
        if (ROOT / "results").is_dir():
            shutil.copytree(ROOT / "results", book / "results")
        jb = Path(sys.executable).with_name("jupyter-book")
        env = dict(os.environ, MPLBACKEND="Agg", LAYOUTLAB_LITE="0", PYTHONPATH=str(ROOT / "lib"))
        started = time.time()
        proc = subprocess.run([str(jb), "build", str(book), "--keep-going"], capture_output=True, text=True,
                              env=env, timeout=3000)
        print(f"\nexecuted book built in {time.time() - started:.0f} s")
        _EXECUTED_BOOK["book"] = (book, proc)
    return _EXECUTED_BOOK["book"]


_BUILT_SITE = {}


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The whole site, built once per test process and shared by the site tests (import this fixture). Each module
    that imports it holds its own fixture definition, so the build is cached here, not by pytest's scope.
    ``LAYOUTLAB_TEST_SITE=<folder>`` reuses a site built before (``build_site``'s HTML folder): for working on
    one site test without rebuilding; a full run always builds."""
    require_browser()
    prebuilt = os.environ.get("LAYOUTLAB_TEST_SITE")
    if prebuilt:
        return Path(prebuilt)
    if "html" not in _BUILT_SITE:
        started = time.time()
        _BUILT_SITE["html"] = build_site(tmp_path_factory.mktemp("site") / "book")
        print(f"\nsite built in {time.time() - started:.0f} s")
    return _BUILT_SITE["html"]


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm",
                      ".json": "application/json"}

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(folder):
    """``folder`` served over HTTP on 127.0.0.1 (JupyterLite does not run from file://); yields the base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


def offline_browser(playwright, base, outside):
    """Chromium in which no host name resolves and every request outside ``base`` is aborted (and listed in
    ``outside``); returns (browser, context)."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + [
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"])
    context = browser.new_context()

    def route(route):
        url = route.request.url
        if url.startswith((base, "data:", "blob:", "about:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    context.route("**/*", route)
    return browser, context
