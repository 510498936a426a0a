"""Test support: build a small Jupyter Book with the project's configuration and look at it in Chromium.

Used by the site tests (widgets rendered from saved state, client-side slider interactivity).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


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
