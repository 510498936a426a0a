"""The "Run in your browser" site (issue 20): a JupyterLite site in ``_build/html/lite/`` where the CPU
chapters and the exercises' student versions run on Pyodide, with ``layoutlab`` installed from a wheel the
site serves.

Everything the kernel needs to start is served by the site itself, so it starts without internet:

* the Pyodide core, from the npm package ``pyodide@314.0.6`` (what jupyterlite-pyodide-kernel 0.8.6 expects);
* the pure-Python wheels the kernel installs at start-up (micropip, IPython and what it needs, from PyPI at
  the versions Pyodide's lock file names), with the lock file rewritten to point at them;
* ``layoutlab`` (``pip wheel --no-deps``), ipywidgets and comm, as piplite wheels.

numpy and matplotlib for Pyodide are published only on the Pyodide CDN: the lock file points there for every
other package, so an online reader's ``%pip install numpy matplotlib`` works and an offline reader still has
the whole layout algebra (the core is numpy-free).

Used by ``layoutlab_site``: at the start of the Sphinx build (``make book``) it stages the lite folder and the
notebooks; jupyterlite-sphinx runs ``jupyter lite build`` at its end. Build-time assets come from the
registries (pip, npm) into a cache folder; nothing large is committed.
"""

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import nbformat

PYODIDE_VERSION = "314.0.6"
PYODIDE_CDN = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
#: the Pyodide core files the kernel loads (no sourcemaps, no TypeScript declarations, no console pages)
PYODIDE_CORE = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
#: what the Pyodide kernel installs when it starts (from the lock file), with their lock dependencies
KERNEL_START = ("micropip", "ipython", "jedi")
#: piplite wheels besides layoutlab (pinned to the versions the book's own environment uses)
PIPLITE_WHEELS = ("ipywidgets==8.1.9", "jupyterlab-widgets==3.0.17", "comm==0.2.3")
#: the Pyodide kernel's name: the notebooks' kernelspec must say it, else JupyterLite asks "Select Kernel"
LITE_KERNELSPEC = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
#: the launch page of one notebook (the Notebook interface of JupyterLite), relative to the site's root
LITE_APP = "lite/notebooks/index.html?path="


def _repo_root() -> Path:
    """The repository whose ``lib/layoutlab`` is installed (editable): the wheel and ``lite/`` come from
    there, also when the book is built from a copy of the chapters (as the site tests do)."""
    import importlib.util

    spec = importlib.util.find_spec("layoutlab")
    if spec is not None and spec.origin:
        root = Path(spec.origin).resolve().parents[2]
        if (root / "pyproject.toml").is_file() and (root / "lite").is_dir():
            return root
    return Path(__file__).resolve().parents[2]


ROOT = _repo_root()

SETUP_MARKDOWN = """\
**Running in your browser** ([JupyterLite](https://jupyterlite.readthedocs.io), Python on Pyodide). The next
cell installs `layoutlab` and `ipywidgets` from this website: the layout algebra, the tables, the pictures and
the widgets then work without internet. The cell after it asks the Pyodide CDN for numpy and matplotlib (they
exist for Pyodide only there): offline it says so, and the few cells that draw plots with matplotlib then say that
they skip. Cells that need a GPU or the CuTe DSL cannot run here. Changes are kept in this browser only: download
the notebook to keep them."""

MYST_TARGET = re.compile(r"^\([\w.:-]+\)=[ \t]*\n?", re.MULTILINE)
#: ``:::{dropdown} Title`` ... ``:::`` (MyST's colon fence), shown in JupyterLab as a collapsed <details>
DROPDOWN = re.compile(r"^(?P<fence>:{3,})\{dropdown\}[ \t]*(?P<title>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                      re.MULTILINE | re.DOTALL)
DIRECTIVE_OPTION = re.compile(r"\A(?::[\w-]+:[^\n]*\n)+")
#: ``{ref}`label``` and ``{ref}`text <label>```
REF = re.compile(r"\{ref\}`(?:(?P<text>[^`<]*?)\s*<(?P<target>[^`>]+)>|(?P<label>[^`<>]+))`")

SETUP_INSTALL = "%pip install -q ipywidgets\n%pip install -q --no-deps layoutlab"
# (the %pip magic of the Pyodide kernel takes a trailing comment for package names: comments go above)
SETUP_CDN = """\
# numpy and matplotlib, for the few cells that need them: for Pyodide they exist only on the Pyodide CDN.
import importlib.util
try:
    %pip install -q numpy matplotlib
except Exception as exc:
    print("installing numpy and matplotlib failed:", exc)
_ll_missing = {m for m in ("numpy", "matplotlib") if importlib.util.find_spec(m) is None}
if _ll_missing:
    print(f"Could not install {' and '.join(sorted(_ll_missing))} from the Pyodide CDN (is this browser offline?). "
          "The cells that need them will say that they skip; everything else runs without them.")

    def _ll_skip(shell, etype, value, tb, tb_offset=None):
        \"\"\"A cell stopped by a missing numpy/matplotlib says so in one line (and Run All goes on).\"\"\"
        module = (getattr(value, "name", None) or "").split(".")[0]
        if module in _ll_missing:
            print(f"(skipped: this cell needs {module}, which this browser could not get from the Pyodide CDN)")
        else:
            shell.showtraceback((etype, value, tb), tb_offset=tb_offset)

    get_ipython().set_custom_exc((ImportError,), _ll_skip)"""
#: the line a skipped cell prints (the browser test counts them)
SKIP_MESSAGE = "(skipped: this cell needs "


# ------------------------------------------------------------------------------------- links to the website
def link_root(baseurl: str = "") -> str:
    """Where a lite notebook's links to the website's pages begin. With ``html_baseurl`` (Jupyter Book's
    ``html.baseurl``) they are absolute URLs under it, and work also in a downloaded notebook. Without it they
    are root-relative (``/chapters/...``): JupyterLab opens a *relative* link as a file of the lite site's own
    contents, and leaves a root-relative one alone, so :data:`LINK_SCRIPT` can make it relative to the page."""
    return baseurl.rstrip("/") + "/" if baseurl else "/"


#: In every lite app page (``<site>/lite/<app>/index.html``): a root-relative link in a rendered notebook
#: (:func:`link_root` without ``html_baseurl``) becomes relative to the site that serves the app, so a site
#: served under a subpath (a GitHub Pages project site) links to its own pages.
LINK_SCRIPT = """<script data-layoutlab="site-links">(() => {
  const site = new URL("../../", location.href);      // computed before the app's router changes the URL
  let queued = false;
  const fix = () => {
    queued = false;
    document.querySelectorAll('.jp-RenderedMarkdown a[href^="/"]:not([href^="//"])').forEach(a => {
      a.href = new URL(a.getAttribute("href").slice(1), site).href;
    });
  };
  new MutationObserver(() => { if (!queued) { queued = true; requestAnimationFrame(fix); } })
    .observe(document.documentElement, {childList: true, subtree: true});
})();</script>"""


def add_link_script(lite_out: Path) -> list:
    """Put :data:`LINK_SCRIPT` into the built lite site's app pages (``lite_out/<app>/index.html``); returns
    the pages changed."""
    changed = []
    for page in sorted(Path(lite_out).glob("*/index.html")):
        text = page.read_text()
        if 'data-layoutlab="site-links"' in text or "</head>" not in text:
            continue
        page.write_text(text.replace("</head>", LINK_SCRIPT + "\n</head>", 1))
        changed.append(page)
    return changed


def _run(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _wheel_dist(filename: str) -> str:
    return _norm(filename.split("-")[0])


# ----------------------------------------------------------------------------------------------- chapters
def notebook_title(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return ""


def cpu_chapters(srcdir: Path) -> list:
    """The chapter notebooks that run on a CPU: those whose metadata lacks ``layoutlab.gpu_cells``."""
    out = []
    for path in sorted((Path(srcdir) / "chapters").glob("[0-9][0-9]_*.ipynb")):
        meta = json.loads(path.read_text()).get("metadata", {})
        if not meta.get("layoutlab", {}).get("gpu_cells"):
            out.append(path)
    return out


def exercise_for(chapter: Path, srcdir: Path):
    """The nbgrader source notebook of a chapter's exercise set (chapter 10 shares ex09), or None."""
    number = min(int(chapter.name[:2]), 9)
    found = sorted((Path(srcdir) / "exercises" / "source" / f"ex{number:02d}").glob("*.ipynb"))
    return found[0] if found else None


def student_version(source_nb):
    """What nbgrader releases to students: solutions replaced by stubs, hidden tests removed, no outputs."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearOutput, ClearSolutions

    nb = nbformat.from_dict(json.loads(json.dumps(source_nb)))
    for pre in (ClearSolutions(), ClearHiddenTests(), ClearOutput()):
        nb, _ = pre.preprocess(nb, {})
    return nb


def myst_to_jupyter(markdown: str, links: dict) -> str:
    """MyST markdown as JupyterLab's renderer shows it: no targets, dropdowns as collapsed <details>, and
    ``{ref}`` roles as links to the website (``links``: label -> (URL, title); unknown labels become text)."""
    import html

    markdown = MYST_TARGET.sub("", markdown)

    def dropdown(m):
        body = DIRECTIVE_OPTION.sub("", m["body"]).strip()
        title = html.escape(m["title"].strip() or "Details")
        return f"<details>\n<summary>{title}</summary>\n\n{body}\n\n</details>"

    def ref(m):
        label = (m["target"] or m["label"]).strip()
        url, title = links.get(label, (None, label))
        text = (m["text"] or "").strip() or title
        if url is None:
            return text
        return "[" + text.replace("[", r"\[").replace("]", r"\]") + f"]({url})"

    return REF.sub(ref, DROPDOWN.sub(dropdown, markdown))


def lite_notebook(nb, links=None):
    """The notebook as the lite site serves it: the Pyodide kernel's kernelspec, no outputs, MyST turned into
    what JupyterLab renders (see :func:`myst_to_jupyter`), the cells the website hides (``hide-input``)
    collapsed, and the setup cells (install layoutlab from the site; numpy and matplotlib from the Pyodide
    CDN, tolerating their absence) first."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    nb.metadata["kernelspec"] = dict(LITE_KERNELSPEC)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            if "hide-input" in cell.metadata.get("tags", []):
                cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
        else:
            cell.source = myst_to_jupyter(cell.source, links or {})
    setup = [nbformat.v4.new_markdown_cell(SETUP_MARKDOWN), nbformat.v4.new_code_cell(SETUP_INSTALL),
             nbformat.v4.new_code_cell(SETUP_CDN)]
    for i, cell in enumerate(setup):
        cell.metadata["tags"] = ["lite-setup"]
        cell["id"] = f"lite-setup-{i}"
    nb.cells = setup + nb.cells
    return nb


def stage_contents(srcdir: Path, contents: Path, links=None) -> dict:
    """Write the lite notebooks into ``contents``: the CPU chapters, and the student version of every chapter's
    exercise set (the exercises run on a CPU, also those of the GPU chapters). Returns {chapter docname:
    (chapter notebook or None for a GPU chapter, exercise notebook or None)}."""
    contents.mkdir(parents=True, exist_ok=True)
    cpu = set(cpu_chapters(srcdir))
    launches = {}
    for chapter in sorted((Path(srcdir) / "chapters").glob("[0-9][0-9]_*.ipynb")):
        chapter_name = None
        if chapter in cpu:
            chapter_name = chapter.name
            nbformat.write(lite_notebook(nbformat.read(chapter, as_version=4), links), contents / chapter.name)
        exercise = exercise_for(chapter, srcdir)
        ex_name = None
        if exercise is not None:
            ex_name = exercise.name
            student = student_version(nbformat.read(exercise, as_version=4))
            nbformat.write(lite_notebook(student, links), contents / ex_name)
        if chapter_name or ex_name:
            launches[f"chapters/{chapter.stem}"] = (chapter_name, ex_name)
    return launches


# ----------------------------------------------------------------------------------------------- pyodide
def _pyodide_tarball(cache: Path) -> Path:
    cache = Path(cache).resolve()
    tgz = cache / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tgz.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("the lite site serves the Pyodide core from the npm package "
                               f"pyodide@{PYODIDE_VERSION}: install Node.js and npm")
        _run([npm, "pack", f"pyodide@{PYODIDE_VERSION}", "--pack-destination", cache], cwd=cache)
    return tgz


def _pip_download(specs, dest: Path):
    """Pure-Python wheels for Pyodide's Python 3.14, without dependencies (the lock file lists them)."""
    dest.mkdir(parents=True, exist_ok=True)
    have = {_wheel_dist(p.name) + "==" + p.name.split("-")[1] for p in dest.glob("*.whl")}
    missing = [s for s in specs if _norm(s.split("==")[0]) + "==" + s.split("==")[1] not in have]
    if missing:
        _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
              "--python-version", "3.14", "--implementation", "py", "--platform", "any", "-d", dest,
              *missing])
    wanted = {_norm(s.split("==")[0]): s.split("==")[1] for s in specs}
    return {_wheel_dist(p.name): p for p in dest.glob("*.whl")
            if wanted.get(_wheel_dist(p.name)) == p.name.split("-")[1]}


def stage_pyodide(lite_dir: Path, cache: Path):
    """``lite_dir/static/pyodide``: the core, the start-up wheels, and a lock file whose other packages
    (numpy, matplotlib, ...) point at the Pyodide CDN by absolute URL."""
    out = lite_dir / "static" / "pyodide"
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(_pyodide_tarball(cache)) as tar:
        for name in PYODIDE_CORE + ("pyodide-lock.json",):
            member = tar.getmember(f"package/{name}")
            with tar.extractfile(member) as src:
                (out / name).write_bytes(src.read())
    lock = json.loads((out / "pyodide-lock.json").read_text())
    packages = lock["packages"]
    key = {_norm(name): name for name in packages}        # depends may spell a name with '_'
    closure, todo = set(), list(KERNEL_START)
    while todo:
        name = key[_norm(todo.pop())]
        if name not in closure:
            closure.add(name)
            todo.extend(packages[name]["depends"])
    served = _pip_download([f"{n}=={packages[n]['version']}" for n in sorted(closure)], cache / "pyodide-wheels")
    for name, entry in packages.items():
        wheel = served.get(_norm(name))
        if name in closure:
            if wheel is None:
                raise RuntimeError(f"no pure-Python wheel {name}=={entry['version']} on PyPI for the lite kernel")
            shutil.copy2(wheel, out / wheel.name)
            entry["file_name"], entry["sha256"] = wheel.name, _sha256(wheel)
        else:
            entry["file_name"] = PYODIDE_CDN + entry["file_name"]
    (out / "pyodide-lock.json").write_text(json.dumps(lock))
    return sorted(closure)


def _can_build_here() -> bool:
    """Whether this environment has the build backend (setuptools >= 68, wheel): then pip need not fetch it."""
    try:
        import setuptools
        import wheel  # noqa: F401
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 68


def build_layoutlab_wheel(dest: Path, root: Path = ROOT) -> Path:
    """``layoutlab-*-py3-none-any.whl`` from the working tree (built in a scratch copy: no build/ left)."""
    scratch = dest.parent / "layoutlab-src"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(root / "lib", scratch / "lib",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(root / name, scratch / name)
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("layoutlab-*.whl"):
        old.unlink()
    isolation = ["--no-build-isolation"] if _can_build_here() else []
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation, "-w", dest, scratch])
    shutil.rmtree(scratch, ignore_errors=True)
    (wheel,) = dest.glob("layoutlab-*-py3-none-any.whl")
    return wheel


def stage_lite_dir(lite_dir: Path, cache: Path, root: Path = ROOT) -> None:
    """Everything ``jupyter lite build --lite-dir lite_dir`` needs besides the contents."""
    shutil.rmtree(lite_dir, ignore_errors=True)
    lite_dir.mkdir(parents=True)
    for name in ("jupyter_lite_config.json", "jupyter-lite.json"):
        shutil.copy2(root / "lite" / name, lite_dir / name)
    stage_pyodide(lite_dir, cache)
    pypi = lite_dir / "pypi"
    build_layoutlab_wheel(pypi, root)
    for wheel in _pip_download(list(PIPLITE_WHEELS), cache / "piplite-wheels").values():
        shutil.copy2(wheel, pypi / wheel.name)

