"""Proof that the exercise course in ``exercises/`` grades correctly with stock nbgrader (0.9.x, offline).

One module-scoped fixture copies the course to a temporary folder and does what a teacher does, once:
``nbgrader generate_assignment`` for every assignment, a batch of submissions in ``submitted/``, ``nbgrader
autograde`` over all of them, ``nbgrader export`` to CSV (in two copies of the released course, each with part of
the submissions, side by side).  The tests then read the release notebooks, the autograded notebooks, the
gradebooks and the CSVs.

Submissions (one student each; abuse cases on ex01 only, graded *before* the normal students, since
nbgrader goes through the students in alphabetical order):

* ``blank``: every release notebook as handed out: must score 0;
* ``solution``: the release notebooks with the source solutions filled in: must score full marks;
* ``abuse_edit``: blank answers, every test cell replaced by ``pass``: the original tests must still run;
* ``abuse_loop``: full solutions, but one answer cell loops forever: that cell must hit the per-cell timeout
  of ``nbgrader_config.py``, its part scores 0, every other part full marks;
* ``abuse_import``: every answer cell first imports a module the grader does not have: scores 0;
* ``abuse_crash``: a cell at the top kills the kernel at import (``os._exit``): the notebook scores 0 and the
  batch goes on.

Besides: autograde warns about a changed checksum only for the student who edited a test cell; the
fresh-variant recipe of teachers.md (new SEED, ``build_notebooks.py``, ``generate_assignment --force``) hands out
the new seed; every test cell fails on the release notebooks as handed out, and on the solution with one plausible
mistake per part the graded notebook (visible and hidden tests) fails with a ``layoutlab.grading.WrongAnswer``
(a message that says where), never with a bare error; the seeded notebooks hold for other seeds; the teachers page lists the real parts and points.

Run with ``-s`` to see the table of observed scores.
"""

import copy
import csv
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

pytestmark = [pytest.mark.xdist_group("nbgrader"), pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "exercises"
BIN = Path(sys.executable).parent
ASSIGNMENTS = sorted(p.name for p in (COURSE / "source").iterdir() if p.is_dir() and p.name.startswith("ex"))
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
LOOP_PART = "b"  # ex01 part whose answer cell loops forever in the abuse_loop submission


def _env():
    env = dict(os.environ)
    # nbgrader runs alembic (the gradebook migrations) from PATH: use the venv's.
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    env.pop("JUPYTER_CONFIG_DIR", None)
    return env


def _nbgrader(course, *args, check=True):
    proc = subprocess.run([str(BIN / "nbgrader"), *args], cwd=course, env=_env(), capture_output=True, text=True,
                          timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"nbgrader {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc


def _meta(cell):
    return cell.metadata.get("nbgrader", {})


def _notebook(folder):
    (path,) = sorted(Path(folder).glob("*.ipynb"))
    return path


def _strip_markers(source):
    return "\n".join(line for line in source.splitlines() if not any(m in line for m in MARKERS))


def _solved(release_nb, source_nb):
    """The release notebook with every solution cell replaced by the source's solution code."""
    solutions = {_meta(c)["grade_id"]: _strip_markers(c.source) for c in source_nb.cells if _meta(c).get("solution")}
    nb = copy.deepcopy(release_nb)
    for cell in nb.cells:
        if _meta(cell).get("solution"):
            cell.source = solutions[_meta(cell)["grade_id"]]
    return nb


def _submit(course, student, assignment, nb, name):
    folder = course / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / name)


def _configured_timeout():
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(COURSE)).load_config().Execute.timeout


def _side_by_side(courses, *args):
    """``nbgrader *args`` in every course copy at once; one CompletedProcess with the logs one after the other."""
    procs = [subprocess.Popen([str(BIN / "nbgrader"), *args], cwd=c, env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for c in courses]
    try:
        outs = [proc.communicate(timeout=600) for proc in procs]
    finally:   # a timeout: no nbgrader left running behind the failed test
        for proc in procs:
            proc.kill()
    return subprocess.CompletedProcess(["nbgrader", *args], max(abs(proc.returncode) for proc in procs),
                                       "".join(out for out, _ in outs), "".join(err for _, err in outs))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course copied, released, submitted to, autograded and exported, with what each step produced.
    A second copy of the released course (its own gradebook) takes two thirds of the assignments, and the two
    copies autograde side by side (one autograde keeps a core busy only about half of the time)."""
    course = tmp_path_factory.mktemp("course") / "exercises"
    shutil.copytree(COURSE, course, ignore=shutil.ignore_patterns(
        "release", "submitted", "autograded", "feedback", "gradebook.db", "*.csv", ".ipynb_checkpoints"))
    _nbgrader(course, "generate_assignment", "*", "--force")
    twin = tmp_path_factory.mktemp("course-twin") / "exercises"
    shutil.copytree(course, twin)
    # ex01 (with the abuse cases and the looping cell) and every third assignment here, the others in the twin.
    home = {a: course if k % 3 == 0 else twin for k, a in enumerate(ASSIGNMENTS)}
    assert home["ex01"] == course

    source, release = {}, {}
    for a in ASSIGNMENTS:
        source[a] = _notebook(course / "source" / a)
        release[a] = _notebook(course / "release" / a)
        rel, src = nbformat.read(release[a], 4), nbformat.read(source[a], 4)
        _submit(home[a], "blank", a, rel, release[a].name)
        _submit(home[a], "solution", a, _solved(rel, src), release[a].name)

    a = "ex01"
    rel, src = nbformat.read(release[a], 4), nbformat.read(source[a], 4)
    name = release[a].name
    edited = copy.deepcopy(rel)
    for cell in edited.cells:
        if _meta(cell).get("grade"):
            cell.source = "pass  # the student deleted the test"
    _submit(course, "abuse_edit", a, edited, name)
    looping = _solved(rel, src)
    for cell in looping.cells:
        if _meta(cell).get("grade_id") == f"{LOOP_PART}_answer":
            cell.source = "while True:\n    pass\n" + cell.source
    _submit(course, "abuse_loop", a, looping, name)
    importing = _solved(rel, src)
    for cell in importing.cells:
        if _meta(cell).get("solution"):
            cell.source = "from my_private_helpers import *  # a module only the student has\n" + cell.source
    _submit(course, "abuse_import", a, importing, name)
    crashing = _solved(rel, src)
    crashing.cells.insert(0, nbformat.v4.new_code_cell("import os\nos._exit(3)  # dies while importing"))
    _submit(course, "abuse_crash", a, crashing, name)

    start = time.monotonic()
    autograde = _side_by_side([course, twin], "autograde", "*")
    autograde_s = time.monotonic() - start
    exported = _side_by_side([course, twin], "export", "--to", "grades.csv")
    assert exported.returncode == 0, exported.stderr[-4000:]
    rows = []
    for copy_ in (course, twin):
        with open(copy_ / "grades.csv", newline="") as f:
            rows += [r for r in csv.DictReader(f) if home.get(r["assignment"]) == copy_]
    scores = {(r["assignment"], r["student_id"]): (float(r["score"]), float(r["max_score"])) for r in rows}
    missing = [(a, s) for a in ASSIGNMENTS for s in ("blank", "solution") if (a, s) not in scores]
    assert not missing, f"no grades for {missing}; autograde said:\n{autograde.stderr[-4000:]}"

    from nbgrader.api import Gradebook

    cell_scores = {}
    for copy_ in (course, twin):
        with Gradebook(f"sqlite:///{copy_ / 'gradebook.db'}") as gb:
            for assignment in [x for x in gb.assignments if home.get(x.name) == copy_]:
                for notebook in assignment.notebooks:
                    for student in gb.students:
                        try:
                            sub = gb.find_submission_notebook(notebook.name, assignment.name, student.id)
                        except Exception:  # noqa: BLE001 - MissingEntry: this student did not submit it
                            continue
                        for grade in sub.grades:
                            cell_scores[(assignment.name, student.id, grade.name)] = (grade.score,
                                                                                      grade.max_score)
    return dict(path=course, source=source, release=release, autograde=autograde, autograde_s=autograde_s,
                scores=scores, cell_scores=cell_scores)


def test_assignments_exist():
    assert ASSIGNMENTS[:5] == ["ex01", "ex02", "ex03", "ex04", "ex05"], ASSIGNMENTS


def test_notebooks_match_their_cells_files(capsys):
    """The committed notebooks are what ``exercises/build_notebooks.py`` makes from ``exercises/cells``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_notebooks", COURSE / "build_notebooks.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    assert builder.main(["--check"]) == 0, capsys.readouterr().out


def test_source_notebooks_are_well_formed():
    """Committed without outputs; every assignment has >= 4 graded parts, unique ids, points on every test."""
    for a in ASSIGNMENTS:
        nb = nbformat.read(_notebook(COURSE / "source" / a), 4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(not c.outputs and c.execution_count is None for c in code), f"{a}: outputs committed"
        tests = [c for c in nb.cells if _meta(c).get("grade")]
        assert len(tests) >= 4, f"{a}: only {len(tests)} graded test cells"
        assert all(_meta(c).get("points", 0) > 0 and _meta(c).get("locked") for c in tests)
        ids = [_meta(c)["grade_id"] for c in nb.cells if _meta(c)]
        assert len(ids) == len(set(ids)), f"{a}: duplicate grade ids"
        for c in nb.cells:
            if _meta(c).get("solution"):
                assert "### BEGIN SOLUTION" in c.source and "### END SOLUTION" in c.source
            if _meta(c).get("grade"):
                assert "### BEGIN HIDDEN TESTS" in c.source, f"{a}/{_meta(c)['grade_id']}: no hidden tests"


def test_teachers_page_lists_the_real_parts_and_points():
    """The table on chapters/teachers.md says what the notebooks contain (parts and points per assignment)."""
    page = (ROOT / "chapters" / "teachers.md").read_text()
    rows = {m.group(1): (int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r"^\| `(ex\d\d)` \|.*\| (\d+) \| (\d+) \|$", page, re.M)}
    actual = {}
    for a in ASSIGNMENTS:
        tests = [c for c in nbformat.read(_notebook(COURSE / "source" / a), 4).cells if _meta(c).get("grade")]
        actual[a] = (len(tests), sum(_meta(c)["points"] for c in tests))
    assert rows == actual


def _region_lines(source, begin, end):
    inside, lines = False, []
    for line in source.splitlines():
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside:
            lines.append(line.strip())
    return [x for x in lines if x and not x.startswith("#")]


def test_release_has_no_solution_or_hidden_test_text(course):
    for a in ASSIGNMENTS:
        src = nbformat.read(course["source"][a], 4)
        text = course["release"][a].read_text()
        released = nbformat.read(course["release"][a], 4)
        released_lines = {line.strip() for c in released.cells for line in c.source.splitlines()}
        for marker in MARKERS:
            assert marker not in text, f"{a}: release still contains '{marker}'"
        # Every secret line (solution or hidden test) that does not also appear in the open part of the
        # source notebook must be gone from the release.
        open_lines = {line.strip() for c in src.cells
                      for line in re.sub(r"### BEGIN (SOLUTION|HIDDEN TESTS).*?### END \1", "", c.source,
                                         flags=re.S).splitlines()}
        for c in src.cells:
            secret = _region_lines(c.source, "### BEGIN SOLUTION", "### END SOLUTION") + \
                _region_lines(c.source, "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
            leaked = [x for x in secret if x not in open_lines and x in released_lines]
            assert not leaked, f"{a}/{_meta(c).get('grade_id')}: leaked into release: {leaked}"
        stubs = [c for c in released.cells if _meta(c).get("solution")]
        assert stubs and all("raise NotImplementedError()" in c.source for c in stubs)


def _execute_all(paths_and_notebooks, allow_errors):
    """Execute several notebooks at once (one kernel each, concurrently: kernel start-up is mostly waiting).

    The kernels talk over Unix sockets in a fresh directory, not TCP: jupyter_client picks a TCP port by
    binding and releasing it, so kernels started at the same moment (here, and nbmake's in the other
    pytest worker) can race for one port, and a kernel that loses dies at start-up ("Address already in
    use", seen once in CI)."""
    import asyncio
    import tempfile

    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    sockets = tempfile.mkdtemp(prefix="ll-kernels-")     # short: a socket path must fit in 107 bytes

    async def run_all():
        clients = [NotebookClient(nb, timeout=120, allow_errors=allow_errors, kernel_name="python3",
                                  km=AsyncKernelManager(kernel_name="python3", transport="ipc",
                                                        ip=os.path.join(sockets, f"k{i}")),
                                  resources={"metadata": {"path": str(path.parent)}})
                   for i, (path, nb) in enumerate(paths_and_notebooks)]
        try:
            await asyncio.gather(*(c.async_execute() for c in clients))
        finally:   # a client given its kernel manager leaves the kernel running: 45 idle kernels otherwise
            await asyncio.gather(*(c.km.shutdown_kernel(now=True) for c in clients if c.km.has_kernel),
                                 return_exceptions=True)

    try:
        asyncio.run(run_all())
    finally:
        shutil.rmtree(sockets, ignore_errors=True)


def test_every_test_cell_fails_on_the_release_version(course):
    """The release notebooks as handed out (visible tests only): every graded test cell raises."""
    notebooks = {a: nbformat.read(course["release"][a], 4) for a in ASSIGNMENTS}
    _execute_all([(course["release"][a], notebooks[a]) for a in ASSIGNMENTS], allow_errors=True)
    for a, nb in notebooks.items():
        passing = [_meta(c)["grade_id"] for c in nb.cells if _meta(c).get("grade")
                   and not any(o.output_type == "error" for o in c.outputs)]
        assert not passing, f"{a}: these test cells pass on the unsolved notebook: {passing}"


# A plausible mistake per part, appended to the reference solution: every test cell must then fail with a
# WrongAnswer (a message that says where), not with a NameError, a TypeError or a bare AssertionError.
MISTAKES = {
    "ex01": {"a": "stride_a = (stride_a[1], stride_a[0])",
             "b": "mn_b = (mn_b[0] + 1, mn_b[1])",
             "c": "cosize_c = cosize_c + 1",
             "d": "dA_d = dA_d[::-1]",
             "e": "stride_e = (1, M_E, BK_E * M_E)",
             "f": "start_f = start_f + BM_F"},
    "ex02": {"a": "mode0_a = f'{size(B_a[0])}:{A_a.stride[0]}'",
             "b": "holes_b = (holes_b[0], holes_b[1] + 1)",
             "c": "zd_stride = (zd_stride[0], (zd_stride[0][0], zd_stride[1][1]))",
             "d": "stride_d = (stride_d[0], (stride_d[1][0], stride_d[1][1] + 1))",
             "e": "admissible_e = [not x for x in admissible_e]",
             "f": "holder_f = (holder_f + 1) % size(L_f)"},
    "ex03": {"a": "coord_a = [(c[0][::-1], c[1]) for c in coord_a]",
             "b": "steps_b = steps_b[::-1]",
             "c": "_o = owner\nowner = lambda m, n: (_o(m, n)[0] ^ 1, _o(m, n)[1])",
             "d": "tv_d = Layout(((Q_D, 32 // Q_D), (P_D, K_D)), ((P_D * M_D, 1), (32 // Q_D, M_D)))",
             "e": "owned_e = owned_e[:-1]"},
    "ex04": {"a": "extra_ones_a = [(c, r) for r, c in extra_ones_a]",
             "b": "bases_b = bases_b[::-1]",
             "c": "linear_c = [not x for x in linear_c]",
             "d": "set_bits_d = set_bits_d[1:]",
             "e": "conv_e = inv_b_e"},
    "ex05": {"a": "degree_a = degree_a + 1",
             "b": "wavefronts_b = max(phase_wavefronts_b)",
             "c": "yyy_c = [y ^ 1 for y in yyy_c]",
             "d": "atom_d = 'K_INTER' if atom_d != 'K_INTER' else 'MN_INTER'",
             "e": "swizzle_e = (3, 4, 3)"},
    "ex06": {"a": "x_a = 4  # always the widest",
             "b": "trans_b = not trans_b",
             "c": "_o = owner_c\nowner_c = lambda j, r, c: (_o(j, r, c)[0], _o(j, r, c)[1] ^ 1)",
             "d": "widest_d = 4 if widest_d != 4 else 2",
             "e": "frag_shape_e = (size(frag_shape_e[0]),) + tuple(frag_shape_e[1:])"},
    "ex07": {"a": "global_dim_a = global_dim_a[::-1]",
             "b": "legal_b[0] = not legal_b[0]\nfield_b[0] = None if legal_b[0] else 'boxDim'",
             "c": "address_c = linear_c",
             "d": "parity_d = KTILE_D % 2",
             "e": "src_size_e = 16 - src_size_e"},
    "ex08": {"a": "sbo_a, lbo_a = lbo_a, sbo_a",
             "b": "lbo_b, sbo_b = sbo_b, lbo_b",
             "c": "_o = owner_c\nowner_c = lambda m, n: (_o(m, n)[0], _o(m, n)[1], 1 - _o(m, n)[2])",
             "d": "legal_d = [not x for x in legal_d]",
             "e": "totals_e = [x * 2 for x in totals_e]"},
    "ex09": {"a": "stages_a = stages_a + 1\nunused_a = unused_a - stage_bytes_a",
             "b": "global_dim_b = tuple(global_dim_b)[::-1]",
             "c": "_o = owner_c\nowner_c = lambda m, n: _o(m, n)[:2] + (_o(m, n)[2] - 128, _o(m, n)[3])",
             "d": "_o = offset_d\noffset_d = lambda i, j, k: _o(i, j, 0)",
             "e": "expect_e = issued_e",
             "f": "_o_f = slot_f\nslot_f = lambda j, k: tuple(_o_f(j, k)[:2]) + (k,)  # serpentine forgotten",
             "g": "idle_g = tail_g",
             "i": "_o_i = scales_i\nscales_i = lambda k: _o_i(k_tiles_i - 1 - k)  # K walked forwards on an odd tile"},
}


def test_wrong_answers_fail_with_a_message_that_says_where(course):
    """What a student reads in the feedback: the graded notebook runs the visible and the hidden tests (the
    source notebook, whose markers are comments). From ex06 on, visible tests check only properties, so a
    typical mistake is usually caught by a hidden test; either way the first error must be a WrongAnswer."""
    runs = []
    for a in ASSIGNMENTS:
        nb = nbformat.read(course["source"][a], 4)
        parts = {_meta(c)["grade_id"][:-len("_answer")]: c for c in nb.cells if _meta(c).get("solution")}
        assert set(parts) == set(MISTAKES[a]), f"{a}: mistakes for {sorted(MISTAKES[a])}, parts {sorted(parts)}"
        for part, mistake in MISTAKES[a].items():
            parts[part].source += "\n" + mistake
        runs.append((a, nb))
    _execute_all([(course["source"][a], nb) for a, nb in runs], allow_errors=True)
    report = []
    for a, nb in runs:
        for cell in nb.cells:
            if _meta(cell).get("grade"):
                errors = [o for o in cell.outputs if o.output_type == "error"]
                assert errors and errors[0].ename == "WrongAnswer", (a, _meta(cell)["grade_id"], errors)
                report.append(f"{a}/{_meta(cell)['grade_id']}: {errors[0].evalue.splitlines()[0]}")
    print("\nfeedback on typical mistakes:\n" + "\n".join(report))


def test_round_trip_blank_scores_zero_and_solution_full_marks(course):
    scores = course["scores"]
    lines = [f"{'assignment':<10} {'points':>6} {'blank':>6} {'solution':>8}"]
    for a in ASSIGNMENTS:
        blank, max_score = scores[(a, "blank")]
        solution, _ = scores[(a, "solution")]
        lines.append(f"{a:<10} {max_score:>6g} {blank:>6g} {solution:>8g}")
    print("\nobserved nbgrader scores (autograde of the whole batch took "
          f"{course['autograde_s']:.0f} s)\n" + "\n".join(lines))
    for a in ASSIGNMENTS:
        blank, max_score = scores[(a, "blank")]
        solution, _ = scores[(a, "solution")]
        assert max_score > 0
        assert blank == 0, f"{a}: the blank release scores {blank}"
        assert solution == max_score, f"{a}: the solution scores {solution} of {max_score}"
    # Every single graded cell, not just the totals.
    for (a, student, grade_id), (score, max_score) in course["cell_scores"].items():
        if student == "blank":
            assert score == 0, (a, grade_id)
        if student == "solution":
            assert score == max_score, (a, grade_id)


def test_edited_test_cells_are_graded_with_the_original_tests(course):
    assert course["scores"][("ex01", "abuse_edit")][0] == 0
    nb = nbformat.read(_notebook(course["path"] / "autograded" / "abuse_edit" / "ex01"), 4)
    tests = [c for c in nb.cells if _meta(c).get("grade")]
    assert tests and all("the student deleted the test" not in c.source for c in tests)
    assert all(any(o.output_type == "error" for o in c.outputs) for c in tests)


def test_infinite_loop_times_out_in_that_cell_only(course):
    timeout = _configured_timeout()
    assert 5 <= timeout <= 120
    nb = nbformat.read(_notebook(course["path"] / "autograded" / "abuse_loop" / "ex01"), 4)
    (loop_cell,) = [c for c in nb.cells if _meta(c).get("grade_id") == f"{LOOP_PART}_answer"]
    errors = {o.ename for o in loop_cell.outputs if o.output_type == "error"}
    assert errors & {"CellTimeoutError", "KeyboardInterrupt"}, errors
    assert course["autograde_s"] >= timeout  # the batch really waited for the per-cell limit
    for (a, student, grade_id), (score, max_score) in course["cell_scores"].items():
        if (a, student) == ("ex01", "abuse_loop"):
            expected = 0 if grade_id == f"{LOOP_PART}_tests" else max_score
            assert score == expected, (grade_id, score)


def _log_by_student(stderr):
    """nbgrader's autograde log cut into one piece per submission (each starts with "Converting notebook ...")."""
    pieces, student = {}, None
    for line in stderr.splitlines():
        m = re.search(r"Converting notebook .*[/\\](?:submitted|autograded)[/\\]([^/\\]+)[/\\]", line)
        if m:
            student = m.group(1)
        pieces.setdefault(student, []).append(line)
    return pieces


def test_only_an_edited_test_cell_gives_a_checksum_warning(course):
    """The hidden tests are not in what the student got: an untouched test cell must not look changed."""
    warned = {student for student, lines in _log_by_student(course["autograde"].stderr).items()
              if any("checksum" in line for line in lines)}
    assert warned == {"abuse_edit"}, warned


def test_the_fresh_variant_recipe_works_as_written(course, tmp_path):
    """teachers.md: change SEED in cells/, ``python build_notebooks.py``, ``nbgrader generate_assignment exNN
    --force``: the release has the new seed (without --force nbgrader keeps the old release)."""
    page = (ROOT / "chapters" / "teachers.md").read_text()
    assert "python build_notebooks.py" in page and "nbgrader generate_assignment exNN --force" in page
    copy_ = tmp_path / "exercises"
    shutil.copytree(course["path"], copy_, ignore=shutil.ignore_patterns("autograded", "submitted", "feedback"))
    cells = next((copy_ / "cells").glob("ex01_*.cells"))
    cells.write_text(SEED_LINE.sub("SEED = 4242", cells.read_text(), count=1))
    subprocess.run([sys.executable, "build_notebooks.py"], cwd=copy_, check=True, capture_output=True)
    _nbgrader(copy_, "generate_assignment", "ex01", "--force")
    assert "SEED = 4242" in _notebook(copy_ / "release" / "ex01").read_text()


def test_failing_imports_and_a_dying_kernel_score_zero_without_stopping_the_batch(course):
    scores = course["scores"]
    assert scores[("ex01", "abuse_import")][0] == 0
    assert scores[("ex01", "abuse_crash")][0] == 0
    assert "abuse_crash" in course["autograde"].stderr  # nbgrader reported it ...
    # ... and went on: the students after it in the same batch were graded normally.
    assert scores[("ex01", "solution")][0] == scores[("ex01", "solution")][1]
    assert scores[("ex01", "blank")][0] == 0


SEED_LINE = re.compile(r"^SEED = \d+", re.M)


def test_seeded_exercises_hold_for_other_seeds():
    """A teacher changes the SEED line: solutions and hidden tests (computed from the seed) still agree.

    The source notebooks (solutions and hidden tests in place) run with two other seeds; any failing
    assertion raises.  (nbmake already runs them with the committed seed.)
    """
    runs = []
    for a in ASSIGNMENTS:
        path = _notebook(COURSE / "source" / a)
        for seed in (7, 2027):
            nb = nbformat.read(path, 4)
            setup = [c for c in nb.cells if c.cell_type == "code" and SEED_LINE.search(c.source)]
            if not setup:
                break
            setup[0].source = SEED_LINE.sub(f"SEED = {seed}", setup[0].source, count=1)
            runs.append((a, path, nb))
    seeded = sorted({a for a, _, _ in runs})
    assert len(seeded) >= 2, f"only {seeded} read a SEED"
    _execute_all([(path, nb) for _, path, nb in runs], allow_errors=False)
