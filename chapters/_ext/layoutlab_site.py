"""Sphinx extension for the Layout Lab book: small fixes to what Jupyter Book 1.x puts into every page."""

import importlib.util
import shutil
from pathlib import Path

# What the pages need of MathJax 3 (its es5 build): the TeX-to-CommonHTML component, the TeX extensions it
# loads on demand, and the web fonts of its output.
_MATHJAX_PARTS = ("tex-chtml.js", "input/tex/extensions", "output/chtml/fonts/woff-v2")


def _mathjax_es5():
    """The es5 folder of MathJax 3 as the PyPI package django-static-mathjax installs it (no Django needed)."""
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        return None
    es5 = Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax" / "es5"
    return es5 if (es5 / "tex-chtml.js").is_file() else None


def _offline_mathjax(app, config):
    """Serve MathJax from the site itself, so that formulas render without internet (Sphinx would load it
    from a CDN). The files come from an installed package at build time; nothing is committed."""
    from sphinx.errors import ExtensionError

    es5 = _mathjax_es5()
    if es5 is None:
        raise ExtensionError("the book serves MathJax itself: install django-static-mathjax==3.2.2.1 "
                             "(it is in layoutlab's 'book' extra: pip install -e '.[book]')")
    stage = Path(app.doctreedir).parent / "_mathjax_static"
    for part in _MATHJAX_PARTS:
        src, dst = es5 / part, stage / "mathjax" / part
        if dst.exists():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dst)
    config.html_static_path = list(config.html_static_path) + [str(stage)]
    config.mathjax_path = "mathjax/tex-chtml.js"


def _script_key(js):
    # The same inline script arrives once with filename None and once with '' (two registration paths).
    return (getattr(js, "filename", js) or "", getattr(js, "priority", 0),
            tuple(sorted(getattr(js, "attributes", {}).items())))


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    """Drop repeated <script> entries. sphinx-thebe and sphinx-togglebutton register their inline config
    twice per build, which makes the browser raise "Identifier 'THEBE_JS_URL' has already been declared"."""
    if "script_files" in context:
        unique = {}
        for js in context["script_files"]:
            unique.setdefault(_script_key(js), js)
        context["script_files"] = list(unique.values())


def setup(app):
    app.connect("config-inited", _offline_mathjax)
    app.connect("html-page-context", _dedupe_scripts, priority=1000)  # after every other extension
    return {"parallel_read_safe": True, "parallel_write_safe": True}
