"""A determined student against every assignment, on the stock nbgrader path: at most 10 % per strategy.

One course copy with a teacher secret (so every student below has their own SEED: several seeds per set), stock
``nbgrader generate_assignment``, per-student releases (``llgrade.py release``), ``nbgrader autograde`` over every
submission (two runs side by side, in two copies of the released course, each grading every other assignment),
scores read from the gradebooks. Students, per assignment:

* ``honest``: the reference solution, and after every answer a scratch cell that checks it with the library
  one-liner of ``tests/exercise_shortcuts/exNN.py`` (the check the intros invite): full marks;
* ``callsA``: every part answered by its library one-liner, plainly, under an alias made once, or inside a
  ``%%capture`` cell magic (rotated over the parts);
* ``callsB``: the same one-liners through ``getattr`` with a computed name, or inside ``exec`` (alternating);
* ``tamper``: a first cell that replaces the checkers in ``layoutlab.grading``, registers an AST transformer that
  swallows every error, tries to write the gradebook (a thread keeps trying), to read ``source/``, to open a
  network connection and to allocate 8 GiB; every answer an object equal to everything;
* ``equal``: every answer an object equal to everything (a plain class: nothing else the grader would refuse).

What the sandbox blocked is read from the tamper student's graded notebook.
"""

import ast
import copy
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

# Its own group: the other xdist worker can run test_nbgrader_course at the same time (kernels use Unix sockets).
pytestmark = [pytest.mark.xdist_group("adversary"), pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "exercises"
BIN = Path(sys.executable).parent
ASSIGNMENTS = sorted(p.name for p in (COURSE / "source").iterdir() if re.fullmatch(r"ex\d\d", p.name))
STRATEGIES = {"callsA": ["direct", "alias", "magic"], "callsB": ["getattr", "exec"]}
MAX_SHARE = 0.10
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def _meta(cell):
    return cell.metadata.get("nbgrader", {})


def _shortcuts(name):
    path = ROOT / "tests" / "exercise_shortcuts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"shortcuts_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SHORTCUTS


def _forbidden(source_nb):
    """part -> the names its hidden test's check_reasoned refuses."""
    out = {}
    for cell in source_nb.cells:
        for node in ast.walk(ast.parse(cell.source)) if _meta(cell).get("grade") else []:
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "check_reasoned":
                out[_meta(cell)["grade_id"].split("_")[0]] = ast.literal_eval(node.args[1])
    return out


def _hide(code, forbidden, how):
    """The one-liner ``code`` with its calls of ``forbidden`` names hidden ``how``."""
    names = sorted(n for n in forbidden if re.search(rf"(?<![\w.]){re.escape(n)}\(", code))
    if how == "direct":
        return code
    if how == "exec":
        return f"exec({code!r})"
    if how == "magic":
        return "%%capture\n" + code
    pre = []
    for k, n in enumerate(names):
        if how == "alias":
            pre.append(f"_h{k} = {n}")
        elif how == "getattr":
            import layoutlab
            if hasattr(layoutlab, n):
                pre.append(f"import layoutlab as _L\n_h{k} = getattr(_L, {n[:2]!r} + {n[2:]!r})")
            else:
                pre.append(f"_h{k} = {n}")
        code = re.sub(rf"(?<![\w.]){re.escape(n)}\(", f"_h{k}(", code)
    return "\n".join(pre + [code])


def _solution(source):
    return "\n".join(line for line in source.splitlines() if not any(m in line for m in MARKERS))


def _answers(source):
    """The names a reference solution cell assigns at the top level."""
    names = set()
    for node in ast.parse(_solution(source)).body:
        if isinstance(node, ast.Assign):
            names |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return sorted(n for n in names if not n.startswith("_"))


TAMPER = r'''
import ast, os, socket, threading, sqlite3
import layoutlab.grading as _g
for _n in dir(_g):
    if _n.startswith("check_"):
        setattr(_g, _n, lambda *a, **k: None)
class _Swallow(ast.NodeTransformer):
    def visit_Module(self, node):
        h = ast.ExceptHandler(type=ast.Name("BaseException", ast.Load()), name=None, body=[ast.Pass()])
        return ast.fix_missing_locations(ast.Module([ast.Try(node.body, [h], [], [])], []))
get_ipython().ast_transformers.append(_Swallow())
def _try(what, f):
    try:
        f()
        print("SANDBOX", what, "open")
    except BaseException as e:
        print("SANDBOX", what, "blocked", type(e).__name__)
def _gradebook():
    c = sqlite3.connect("file:%(gradebook)s?mode=rw", uri=True)
    c.execute("UPDATE grade SET manual_score = max_score")
    c.commit()
_try("gradebook", _gradebook)
def _later():
    for _ in range(5):
        __import__("time").sleep(0.5)
        _try("gradebook-later", _gradebook)
threading.Thread(target=_later, daemon=True).start()
_try("source", lambda: open("%(source)s").read())
_try("network", lambda: socket.create_connection(("127.0.0.1", %(port)d), timeout=2))
_try("memory", lambda: bytearray(8 << 30))
'''

EQUAL = r'''
class _Equal:
    __eq__ = lambda s, o: True
    __ne__ = lambda s, o: False
    __hash__ = lambda s: 0
    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    __len__ = lambda s: 2
    __getitem__ = lambda s, k: s
    __iter__ = lambda s: iter([s, s])
    __call__ = lambda s, *a: s
    __index__ = __int__ = lambda s: 0
    __bool__ = lambda s: True
'''


def _nbgrader(course, *args):
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", MPLBACKEND="Agg")
    return subprocess.run([str(BIN / "nbgrader"), *args], cwd=course, env=env, capture_output=True, text=True,
                          timeout=1200)


def _autograde_side_by_side(courses):
    """``nbgrader autograde "*"`` in every course copy at once: each copy holds part of the submissions. One
    autograde keeps a core busy only about half of the time (it waits on its kernels' start and shutdown:
    3.2-3.8 s of CPU in 7.7-7.9 s per notebook on an idle machine); two fill those waits."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", MPLBACKEND="Agg")
    procs = [subprocess.Popen([str(BIN / "nbgrader"), "autograde", "*"], cwd=c, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for c in courses]
    try:
        return [proc.communicate(timeout=1200)[1] for proc in procs]
    finally:   # a timeout: no autograde left running behind the failed test
        for proc in procs:
            proc.kill()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = tmp_path_factory.mktemp("adversary") / "exercises"
    shutil.copytree(COURSE, course, ignore=shutil.ignore_patterns("release", "submitted", "autograded", "feedback",
                                                                  "gradebook.db", "__pycache__"))
    secret = course.parent / "secret"
    secret.write_text("a teacher's secret for the adversary test")
    cfg = course / "nbgrader_config.py"
    cfg.write_text(cfg.read_text() + f"\nc.RestoreCells.secret_file = {str(secret)!r}\n"
                   "c.GradeOutside.sandbox = 'bwrap'\n")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    assert _nbgrader(course, "generate_assignment", "*", "--force").returncode == 0
    spec = importlib.util.spec_from_file_location("llgrade", course / "llgrade.py")
    llgrade = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(llgrade)
    students = ["honest", "callsA", "callsB", "tamper", "equal"]
    for a in ASSIGNMENTS:
        llgrade.release_per_student(course, a, students, str(secret))      # = python llgrade.py release ...
    # A second copy of the released course (its own gradebook) grades every other assignment, beside the first.
    twin = tmp_path_factory.mktemp("adversary-twin") / "exercises"
    shutil.copytree(course, twin)
    home = {a: (course, twin)[k % 2] for k, a in enumerate(ASSIGNMENTS)}
    plan = {}
    for a in ASSIGNMENTS:
        (src_path,) = (home[a] / "source" / a).glob("*.ipynb")
        src = nbformat.read(src_path, 4)
        sols = {_meta(c)["grade_id"]: c.source for c in src.cells if _meta(c).get("solution")}
        forbidden, shortcuts = _forbidden(src), _shortcuts(a)
        parts = sorted(forbidden)
        for student in students:
            nb = nbformat.read(next((home[a] / "release-students" / student / a).glob("*.ipynb")), 4)
            cells, used = [], {}
            for cell in nb.cells:
                gid = _meta(cell).get("grade_id", "")
                part = gid.split("_")[0]
                if _meta(cell).get("solution"):
                    first = gid == next(g for g in sols if g.split("_")[0] == part)
                    if student == "honest":
                        cell.source = _solution(sols[gid])
                        cells.append(cell)
                        if first:
                            body = "\n".join("    " + line for line in shortcuts[part][0].splitlines())
                            cells.append(nbformat.v4.new_code_cell(
                                f"# my check with the library\ndef _check():\n{body}\n    return locals()\n"
                                f"print(_check())"))
                        continue
                    if student in ("tamper", "equal"):
                        names = _answers(sols[gid])
                        cell.source = " = ".join(names + ["_Equal()"]) if names else "pass"
                    elif first:
                        ways = STRATEGIES[student]
                        used[part] = ways[parts.index(part) % len(ways)]
                        cell.source = _hide(shortcuts[part][0], forbidden[part], used[part])
                    else:
                        cell.source = "pass"
                cells.append(cell)
                if student == "tamper" and gid and _meta(cell).get("locked") and "SEED =" in cell.source:
                    cells.append(nbformat.v4.new_code_cell(TAMPER % dict(
                        gradebook=home[a] / "gradebook.db", source=src_path, port=port) + EQUAL))
                if student == "equal" and gid and _meta(cell).get("locked") and "SEED =" in cell.source:
                    cells.append(nbformat.v4.new_code_cell(EQUAL))
            nb.cells = cells
            plan[(a, student)] = used
            out = home[a] / "submitted" / student / a
            out.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, out / src_path.name)
    start = time.monotonic()
    logs = _autograde_side_by_side([course, twin])
    seconds = time.monotonic() - start
    listener.close()
    from nbgrader.api import Gradebook

    scores, seeds = {}, {}
    for copy_ in (course, twin):
        with Gradebook(f"sqlite:///{copy_ / 'gradebook.db'}") as gb:
            for a in [a for a in ASSIGNMENTS if home[a] == copy_]:
                for student in students:
                    sub = gb.find_submission_notebook(next((copy_ / "source" / a).glob("*.ipynb")).stem, a,
                                                      student)
                    for g in sub.grades:
                        scores[(a, student, g.name.split("_")[0])] = (g.score, g.max_score)
    for a in ASSIGNMENTS:
        for student in students:
            nb = nbformat.read(next((home[a] / "autograded" / student / a).glob("*.ipynb")), 4)
            seeds[(a, student)] = re.search(r"^SEED = (\d+)", "\n".join(c.source for c in nb.cells), re.M).group(1)
    return dict(home=home, plan=plan, scores=scores, seeds=seeds, seconds=seconds, log="\n".join(logs))


def _sum(scores, a, student, parts=None):
    rows = [(s, m) for (x, st, p), (s, m) in scores.items()
            if x == a and st == student and (parts is None or p in parts)]
    return sum(s for s, _ in rows), sum(m for _, m in rows)


def test_every_student_has_their_own_seed(graded):
    for a in ASSIGNMENTS:
        seeds = {graded["seeds"][(a, s)] for s in ("honest", "callsA", "callsB", "tamper", "equal")}
        assert len(seeds) == 5, (a, seeds)


def test_honest_student_with_leftover_library_checks_gets_full_marks(graded):
    for a in ASSIGNMENTS:
        got, total = _sum(graded["scores"], a, "honest")
        assert got == total, (a, {k: v for k, v in graded["scores"].items() if k[:2] == (a, "honest")})


def test_hidden_library_calls_score_at_most_ten_percent_per_strategy(graded):
    table, over = [], []
    for strategy in [s for ways in STRATEGIES.values() for s in ways]:
        for a in ASSIGNMENTS:
            got = total = 0
            for student in ("callsA", "callsB"):
                parts = [p for p, s in graded["plan"][(a, student)].items() if s == strategy]
                g, t = _sum(graded["scores"], a, student, parts)
                got, total = got + g, total + t
            table.append(f"{strategy:8} {a}: {got:g}/{total:g}")
            if total and got > MAX_SHARE * total:
                over.append(table[-1])
    print(f"\nautograde of {len(graded['seeds'])} notebooks: {graded['seconds']:.0f} s\n" + "\n".join(table))
    assert not over, over


def test_tampering_and_objects_equal_to_everything_gain_nothing(graded):
    lines = []
    for student in ("tamper", "equal"):
        for a in ASSIGNMENTS:
            got, total = _sum(graded["scores"], a, student)
            lines.append(f"{student:7} {a}: {got:g}/{total:g}")
            assert got <= MAX_SHARE * total, lines[-1]
    print("\n" + "\n".join(lines))


def test_the_sandbox_blocks_the_gradebook_source_network_and_memory(graded):
    nb = nbformat.read(next((graded["home"]["ex01"] / "autograded" / "tamper" / "ex01").glob("*.ipynb")), 4)
    said = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    for what in ("gradebook", "source", "network", "memory"):
        assert f"SANDBOX {what} blocked" in said, (what, said[-2000:])
    assert "open" not in re.findall(r"SANDBOX \S+ (\w+)", said), said


def test_no_checksum_warning_for_untouched_cells(graded):
    assert "checksum" not in graded["log"], [line for line in graded["log"].splitlines() if "checksum" in line][:5]
