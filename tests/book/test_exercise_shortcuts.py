"""A student who reasons about nothing plays every assignment that has a shortcut file: <= 10 % of the points.

``tests/exercise_shortcuts/exNN.py`` holds ``SHORTCUTS = {part: [code, ...]}``: for each part (the letter
before ``_answer`` / ``_tests`` in the grade ids, or one solution cell's grade id), what such a student pastes
into the answer: the library one-liner that computes it, the visible test's expression, a brute force over a
small answer space with the visible checker, an answer the chapter prints.

The student is generous to itself: every *other* part is filled with the reference solution (so a part that
builds on an earlier one gets the earlier answer for free), and a part counts as won when any of its
attempts passes the part's test cells, visible and hidden. Cells run in one in-process IPython shell, reset
between attempts (fast: every attempt, several seeds); before each test cell the harness traces the answers
through the cells that ran, as the grader does (``trace_answers`` of ``exercises/llanswers.py``), so ``check_reasoned``
sees what it sees in ``nbgrader autograde``. The reference solution must score full marks and a blank part
nothing in the same harness, so the harness cannot pass vacuously. ``tests/book/test_exercise_adversary.py`` plays
the determined student (hidden calls, tampering) on the stock nbgrader path.

Every assignment has a shortcut file (a test below insists).
"""

import contextlib
import functools
import gc
import importlib.util
import io
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "exercises" / "source"
SHORTCUTS = ROOT / "tests" / "exercise_shortcuts"
MAX_SHARE = 0.10
BLANK = "# YOUR CODE HERE\nraise NotImplementedError()"

pytestmark = pytest.mark.xdist_group("shortcuts")


def _assignments():
    return sorted(p.stem for p in SHORTCUTS.glob("ex*.py"))


def _load_shortcuts(name):
    spec = importlib.util.spec_from_file_location(f"shortcuts_{name}", SHORTCUTS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SHORTCUTS


SEEDS = (1, 42)
SEED_LINE = re.compile(r"^SEED = \d+", re.M)


def _cells(name, seed=1):
    (path,) = sorted((SOURCE / name).glob("*.ipynb"))
    nb = nbformat.read(path, 4)
    for cell in nb.cells:
        if cell.cell_type == "code" and SEED_LINE.search(cell.source):
            cell.source = SEED_LINE.sub(f"SEED = {seed}", cell.source, count=1)
            break
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id", "")
        kind = "solution" if meta.get("solution") else "tests" if meta.get("grade") else "code"
        out.append(dict(kind=kind, grade_id=gid, part=gid.split("_")[0] if kind != "code" else None,
                        points=meta.get("points", 0), source=cell.source))
    return out


def _solution_text(source):
    return "\n".join(line for line in source.splitlines() if "### BEGIN SOLUTION" not in line
                     and "### END SOLUTION" not in line)


@pytest.fixture(scope="module")
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    # Every reset (one per attempt, ~450 of them) runs a full gc.collect() (IPython's displayhook.flush), which
    # walks every object of the process: half a second each in a pytest worker that has imported the whole
    # suite. The objects that exist now (modules, the grader's helpers, loaded here first) live until the end:
    # freezing them leaves each collection only what the attempts made.
    import layoutlab  # noqa: F401

    _llanswers(), _llgrade()
    gc.freeze()
    try:
        yield sh
    finally:
        gc.unfreeze()
        from layoutlab import grading

        grading._PROVENANCE.clear()
        sh.reset(new_session=True)
        # Other tests in this worker must not find a running IPython (grading shows pictures only in one).
        InteractiveShell.clear_instance()


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "exercises" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_llanswers = functools.lru_cache(maxsize=None)(lambda: _load("llanswers"))
_llgrade = functools.lru_cache(maxsize=None)(lambda: _load("llgrade"))


@functools.lru_cache(maxsize=None)
def _free_names(source):
    """The names a test cell reads, as the grader exports them (``exercises/llgrade.py``)."""
    return tuple(_llgrade().free_names(source))


def _run(shell, cells, replace, part):
    """Run the notebook with solution cells replaced per ``replace`` (grade_id -> code); return the points
    that ``part``'s test cells earn (all of them must run for a test cell to count, as in nbgrader)."""
    from layoutlab import grading

    answers = _llanswers()
    shell.reset(new_session=True)
    earned, ran, locked = 0, [], set()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for c in cells:
            if c["kind"] == "solution":
                src = replace.get(c["grade_id"], _solution_text(c["source"]))
            else:
                src = c["source"]
            if c["kind"] == "tests" and c["part"] != part:
                continue
            if c["kind"] == "tests":
                names = [n for n in _free_names(src) if n not in locked and n in shell.user_ns]
                grading._PROVENANCE.clear()
                grading._PROVENANCE.update(answers.trace_answers(ran, names))
                grading._PROVENANCE["__exported__"] = names
            else:
                ran.append(("student" if c["kind"] == "solution" else "locked", src))
            result = shell.run_cell(src, store_history=True, silent=False)
            if c["kind"] == "code":
                locked |= set(shell.user_ns)
            if c["kind"] == "tests" and result.success:
                earned += c["points"]
    return earned


def _replacements(cells, key, code):
    """grade_id -> code for one attempt at ``key`` (a part letter, or one solution cell's grade id)."""
    part = key.split("_")[0]
    if "_" in key:
        return {key: code}, part
    sols = [c["grade_id"] for c in cells if c["kind"] == "solution" and c["part"] == part]
    assert sols, f"no solution cell for part {part!r}"
    return {g: (code if i == 0 else "pass") for i, g in enumerate(sols)}, part


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", _assignments())
def test_shortcut_student_scores_at_most_ten_percent(name, seed, shell):
    cells = _cells(name, seed)
    shortcuts = _load_shortcuts(name)
    parts = sorted({c["part"] for c in cells if c["kind"] == "tests"})
    points = {p: sum(c["points"] for c in cells if c["kind"] == "tests" and c["part"] == p) for p in parts}
    total = sum(points.values())
    missing = [p for p in parts if not any(k.split("_")[0] == p for k in shortcuts)]
    assert not missing, f"{name}: no shortcut attempts for parts {missing}"
    won, log = {}, []
    for key, attempts in shortcuts.items():
        assert attempts, f"{name}: part {key} has an empty list of attempts"
        for code in attempts:
            replace, part = _replacements(cells, key, code)
            got = _run(shell, cells, replace, part)
            won[part] = max(won.get(part, 0), got)
            log.append(f"{part}: {got}/{points[part]}  <- {code.strip().splitlines()[0][:70]}")
    score = sum(won.values())
    print(f"\n{name} (SEED = {seed}): shortcut student {score}/{total}\n  " + "\n  ".join(log))
    assert score <= MAX_SHARE * total, (f"{name}: the shortcut student scored {score} of {total} points "
                                        f"(> {MAX_SHARE:.0%}):\n  " + "\n  ".join(log))


@pytest.mark.parametrize("name", _assignments())
def test_harness_gives_the_solution_full_marks_and_a_blank_part_nothing(name, shell):
    cells = _cells(name)
    for part in sorted({c["part"] for c in cells if c["kind"] == "tests"}):
        full = sum(c["points"] for c in cells if c["kind"] == "tests" and c["part"] == part)
        assert _run(shell, cells, {}, part) == full, f"{name} part {part}: the reference solution loses points"
        blank = {c["grade_id"]: BLANK for c in cells if c["kind"] == "solution" and c["part"] == part}
        assert _run(shell, cells, blank, part) == 0, f"{name} part {part}: a blank answer earns points"


def test_every_assignment_has_a_shortcut_student():
    numbered = sorted(p.name for p in SOURCE.iterdir() if re.fullmatch(r"ex\d\d", p.name))
    assert len(numbered) >= 9 and numbered == _assignments(), \
        f"assignments {numbered} vs shortcut files {_assignments()}: every assignment needs tests/exercise_shortcuts/exNN.py"
