"""Sphinx extension for the Layout Lab book: small fixes to what Jupyter Book 1.x puts into every page."""

import html
import importlib.util
import os
import re
import shutil
import sys
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


def _local_only(app, pagename, templatename, context, doctree):
    """Drop stylesheets and scripts that live on other machines: the site makes no outside request
    (jupyterlite-sphinx adds a web-font link to every page)."""
    for key in ("css_files", "script_files"):
        if key in context:
            context[key] = [f for f in context[key]
                            if not str(getattr(f, "filename", f) or "").startswith(("http://", "https://", "//"))]


# ------------------------------------------------------------------ code that fits the column
#: a highlighted block: the class of the div around it (myst-nb's outputs say "output"), its code
_CODE_BLOCK = re.compile(r'(<div class="([^"]*)"><div class="highlight"><pre>)(.*?)(</pre>)', re.DOTALL)
_TAG = re.compile(r"(<[^>]*>)")


def _code_lines(code: str):
    """The highlighted code of one block, each source line in its own ``<span class="ll-line">`` with its
    indentation in ``--lead`` (the CSS wraps a line longer than the column under itself, marked; see
    layoutlab-site.css). The text, newlines included, stays exactly as it was (copying the code gives the
    same). None when the block is not the flat token spans Pygments writes."""
    lines, current, open_tag = [], [], None
    for part in _TAG.split(code):
        if part.startswith("<"):
            if part.startswith("</span"):
                open_tag = None
            elif part.startswith("<span"):
                if open_tag is not None:
                    return None                  # nested spans: not Pygments' flat output
                open_tag = part
            else:
                return None
            current.append(part)
            continue
        for i, piece in enumerate(part.split("\n")):
            if i:
                current.append("\n" + ("</span>" if open_tag else ""))
                lines.append("".join(current))
                current = [open_tag] if open_tag else []
            current.append(piece)
    tail = "".join(current)
    if _TAG.sub("", tail):
        lines.append(tail)
    elif tail:
        lines[-1:] = [(lines[-1] if lines else "") + tail]
    out = []
    for line in lines:
        text = html.unescape(_TAG.sub("", line))
        lead = len(text) - len(text.lstrip(" "))
        out.append(f'<span class="ll-line" style="--lead:{lead}">{line}</span>')
    return "".join(out)


def _fit_code(app, pagename, templatename, context, doctree):
    """Code (cell inputs, code blocks in the prose) never hides behind a scroll bar: each line is marked up for
    the CSS, which wraps a too-long line under itself with a continuation marker (indentation stays exact).
    Outputs are left as they are (they wrap as plain text)."""
    if "body" not in context:
        return

    def lines(m):
        inner = None if "output" in m[2].split() else _code_lines(m[3])
        return m[0] if inner is None else m[1] + inner + m[4]

    context["body"] = _CODE_BLOCK.sub(lines, context["body"])


# ------------------------------------------------------------------ "Run in your browser" (JupyterLite)
def _lite():
    here = str(Path(__file__).parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import layoutlab_lite
    return layoutlab_lite


def _lite_wanted(app):
    """The lite site goes with the real book (chapters with CPU notebooks), not with the small test books;
    ``LAYOUTLAB_LITE=0`` leaves it out."""
    return os.environ.get("LAYOUTLAB_LITE", "1") != "0" and bool(_lite().cpu_chapters(Path(app.srcdir)))


def _stage_lite(app, config):
    """Prepare what ``jupyter lite build`` (run by jupyterlite-sphinx at the end of the build) needs: the
    lite folder (Pyodide core, start-up wheels, layoutlab's wheel, configuration from ``lite/``) and the
    notebooks it serves (CPU chapters, exercises' student versions)."""
    lite = _lite()
    work = Path(app.doctreedir).parent / "_lite"
    cache = Path(os.environ.get("LAYOUTLAB_LITE_CACHE") or Path(app.doctreedir).parent / "_lite_cache")
    lite.stage_lite_dir(work / "lite-dir", cache)
    shutil.rmtree(work / "contents", ignore_errors=True)
    app.layoutlab_launches = lite.stage_contents(Path(app.srcdir), work / "contents")
    config.jupyterlite_dir = str(work / "lite-dir")
    config.jupyterlite_contents = [str(p) for p in sorted((work / "contents").glob("*.ipynb"))]
    config.jupyterlite_content_dir = str(work / "_contents")      # jupyterlite-sphinx empties and fills it
    config.jupyterlite_bind_ipynb_suffix = False                    # else it takes .ipynb from myst-nb


def _lite_links(app, env):
    """Once every page is read, the labels are known: write the lite notebooks again with their ``{ref}``
    roles as links to the website's pages: under ``html_baseurl`` when it is set, else root-relative and made
    relative to the lite app's page in the browser (``layoutlab_lite.link_root``, ``LINK_SCRIPT``)."""
    root = _lite().link_root(app.config.html_baseurl or "")
    labels, anon = env.domaindata["std"]["labels"], env.domaindata["std"]["anonlabels"]
    links = {name: (root + app.builder.get_target_uri(doc) + (f"#{labelid}" if labelid else ""),
                    (labels.get(name) or (0, 0, name))[2] or name)
             for name, (doc, labelid) in anon.items()}
    _lite().stage_contents(Path(app.srcdir), Path(app.doctreedir).parent / "_lite" / "contents", links)


def _drop_lite_stage(app, error):
    """After ``jupyter lite build`` (jupyterlite-sphinx's build-finished): the lite app pages get the script
    that makes the notebooks' links relative to the site, and the staged copy is not needed any more."""
    lite_out = Path(app.outdir) / "lite"
    if error is None and lite_out.is_dir():
        _lite().add_link_script(lite_out)
    shutil.rmtree(Path(app.doctreedir).parent / "_lite", ignore_errors=True)


_LAUNCH = """<div class="admonition tip layoutlab-lite">
<p class="admonition-title">Run in your browser</p>
<p><a class="reference external layoutlab-lite-chapter" href="{chapter}" target="_blank" rel="noopener">Open this
chapter in JupyterLite</a>{exercise}: Python runs in this browser (Pyodide), nothing to install. Run the first
code cell to install <code>layoutlab</code> from this site.</p>
<p>Everything runs offline except the few cells that draw plots with matplotlib: numpy and matplotlib exist for
Pyodide only on the Pyodide CDN, which the notebook's second cell asks for (internet needed); without them those
cells say that they skip. Cells that need a GPU or the CuTe DSL do not run in the browser. A local build must be
served over HTTP for this (<code>make serve</code>), not opened as a file.</p>
</div>
"""

_EXERCISE_ONLY = """<div class="admonition tip layoutlab-lite">
<p class="admonition-title">Exercises in your browser</p>
<p>This chapter's kernels need a GPU, but <a class="reference external layoutlab-lite-exercise" href="{exercise}"
target="_blank" rel="noopener">its exercises</a> (the student version) run on a CPU: they open in JupyterLite, where
Python runs in this browser (Pyodide). Run the first code cell to install <code>layoutlab</code> from this site. A
local build must be served over HTTP for this (<code>make serve</code>), not opened as a file.</p>
</div>
"""


def _launch_button(app, pagename, templatename, context, doctree):
    """Put the launch box under the title of every chapter with a lite notebook (the chapter, its exercises or
    both). The URL is relative to this page, computed from the page's depth (Sphinx's pathto), so it points
    at the site's lite/ folder from any nested page."""
    launch = getattr(app, "layoutlab_launches", {}).get(pagename)
    if launch is None or "body" not in context:
        return
    chapter_nb, exercise_nb = launch
    app_url = context["pathto"](_lite().LITE_APP.split("?")[0], 1)
    exercise_url = html.escape(f"{app_url}?path={exercise_nb}") if exercise_nb else ""
    if chapter_nb is None:
        box = _EXERCISE_ONLY.format(exercise=exercise_url)
    else:
        exercise = ""
        if exercise_nb:
            exercise = (f' (or <a class="reference external layoutlab-lite-exercise" href="{exercise_url}" '
                        f'target="_blank" rel="noopener">its exercises</a>, the student version)')
        box = _LAUNCH.format(chapter=html.escape(f"{app_url}?path={chapter_nb}"), exercise=exercise)
    body = context["body"]
    at = body.find("</h1>")
    context["body"] = body[:at + 5] + box + body[at + 5:] if at >= 0 else box + body


def _site_assets(app, config):
    """The site's own CSS and JavaScript (chapters/_ext/static/): the sidebar toggles, wrapped outputs, table
    padding, display math that scrolls in its own box."""
    config.html_static_path = list(config.html_static_path) + [str(Path(__file__).parent / "static")]


def setup(app):
    app.connect("config-inited", _offline_mathjax)
    app.connect("config-inited", _site_assets)
    app.add_css_file("layoutlab-site.css")
    app.add_js_file("layoutlab-site.js")
    app.connect("html-page-context", _dedupe_scripts, priority=1000)  # after every other extension
    app.connect("html-page-context", _local_only, priority=1000)
    app.connect("html-page-context", _fit_code)
    if _lite_wanted(app):
        app.setup_extension("jupyterlite_sphinx")
        app.connect("config-inited", _stage_lite, priority=400)      # before jupyterlite-sphinx's own
        app.connect("env-updated", _lite_links)
        app.connect("html-page-context", _launch_button)
        app.connect("build-finished", _drop_lite_stage, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
