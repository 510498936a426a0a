"""``exercises/llanswers.py``: how the grader reads, from the student's cells as text, how each answer was computed,
and how ``layoutlab.grading.check_reasoned`` judges that trace; answers exported as data and read back."""

import importlib.util
import json
from pathlib import Path

import pytest

from layoutlab import grading, make_layout

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("llanswers", ROOT / "exercises" / "llanswers.py")
llanswers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(llanswers)


def _reasoned(cells, answer="x"):
    """check_reasoned as the grader runs it: the answer traced through ``cells`` (student cells, as text)."""
    grading._PROVENANCE.clear()
    grading._PROVENANCE.update(llanswers.trace_answers([("student", c) for c in cells], [answer]))
    grading._PROVENANCE["__exported__"] = [answer]
    try:
        return grading.check_reasoned("part X", {"select_ldmatrix", "layout_b", "table"})
    finally:
        grading._PROVENANCE.clear()
# ------------------------------------------------------------------ check_reasoned: the work, not the lookup


@pytest.mark.parametrize("cells", [
    ["x = select_ldmatrix(tm, 'A', s)"],
    ["import layoutlab", "x = layoutlab.select_ldmatrix(tm, 'A', s).name"],
    ["from layoutlab.nvgpu.ldmatrix import select_ldmatrix as pick\nx = pick(tm, 'A', s)"],
    ["pick = select_ldmatrix", "y = 3", "x = pick(tm, 'A', s)"],                   # an alias made once
    ["def helper(a):\n    return select_ldmatrix(tm, a, s)", "x = helper('A')"],   # inside a function of its own
    ["tmp = []", "tmp.append(select_ldmatrix(tm, 'A', s))", "x = tmp[0]"],          # through a mutated list
    ["x = layout_b(3)"], ["x = layout_b.table()[3]"], ["f = layout_b\nx = f(3)"],
    ["%time x = select_ldmatrix(tm, 'A', s)"], ["%%capture\nx = select_ldmatrix(tm, 'A', s)"],
])
def test_check_reasoned_finds_calls_however_they_are_spelled(cells):
    with pytest.raises(grading.WrongAnswer, match=r"part X: x is computed with (select_ldmatrix|layout_b|table) "
                                                  r"\(cell \d\)"):
        _reasoned(cells)


@pytest.mark.parametrize("cells", [
    ["import layoutlab as L\nx = getattr(L, 'select_' + 'ldmatrix')(tm, 'A', s)"],
    ["exec('x = select_ldmatrix(tm, \"A\", s)')\nx = x"],
    ["import importlib\nx = importlib.import_module('layoutlab').select_ldmatrix(tm, 'A', s)"],
    ["get_ipython().ast_transformers.append(T())", "x = 3"],
    ["import layoutlab.grading as g\ng.check_int = print", "x = 3"],
    ["%run -i helper.py", "x = 3"],
])
def test_check_reasoned_refuses_code_it_cannot_read(cells):
    with pytest.raises(grading.WrongAnswer, match="runs code the grader cannot read"):
        _reasoned(cells)


def test_check_reasoned_refuses_an_answer_no_cell_assigns():
    with pytest.raises(grading.WrongAnswer, match="no cell of yours assigns x"):
        _reasoned(["y = 3"])


@pytest.mark.parametrize("cells", [
    ["x = 'SM75_U32x4_LDSM_N'", "print(select_ldmatrix(tm, 'A', s))"],              # a leftover scratch check
    ["x = 'SM75_U32x4_LDSM_N'\nassert x == select_ldmatrix(tm, 'A', s).name"],
    ["x = 'SM75_U32x4_LDSM_N'", "print(x, select_ldmatrix(tm, 'A', s).name)"],
    ["x = 'SM75_U32x4_LDSM_N'", "grading.check_choice(x, select_ldmatrix(tm, 'A', s).name, opts)"],
    ["y = select_ldmatrix(tm, 'A', s)", "x = 'SM75_U32x4_LDSM_N'"],                  # computed, then overwritten
    ["def check():\n    x = select_ldmatrix(tm, 'A', s)\n    return x", "x = 4 * 2", "check()"],
    ["j = layout_b(3)", "owner = lambda j: j % 4", "x = owner(5)"],                  # a parameter, not the global
    ["x = sum(c * d for c, d in zip((1, 2), layout_b.stride))"],                     # a layout's stride is no call
    ["%matplotlib inline", "x = 3"], ["def f(: broken", "x = 3"],
    ["x = 3", "def check():\n    y = select_ldmatrix(tm, 'A', s)\n    return locals()", "print(check())"],
])
def test_check_reasoned_does_not_dock_honest_work(cells):
    assert _reasoned(cells) is None


def test_check_reasoned_checks_nothing_without_a_trace():
    grading._PROVENANCE.clear()
    assert grading.check_reasoned("part X", {"select_ldmatrix"}) is None


# ------------------------------------------------------------------ answers as data


def test_answers_round_trip_as_data_and_objects_of_their_own_do_not():
    class Equal:
        def __eq__(self, other):
            return True

    ns = {"a": 3, "b": (1, (2, 3)), "c": [True, None, "x"], "d": make_layout((4, 2), stride=(2, 1)),
          "e": Equal(), "f": lambda m, n: (m, n * 2), "g": 2.5}
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        llanswers.export_answers(sorted(ns), ns, {"f": lambda: [(0, 1), (2, 3)]}, nonce="n0")
    assert llanswers.read_export(out.getvalue(), "wrong nonce") == {}
    data = llanswers.read_export(out.getvalue(), "n0")
    back = {}
    llanswers.inject_answers(back, json.dumps(data), "{}", locked=set())
    assert back["a"] == 3 and type(back["b"]) is tuple and back["b"] == (1, (2, 3)) and back["c"] == [True, None, "x"]
    assert str(back["d"]) == "(4,2):(2,1)" and back["g"] == 2.5
    assert back["e"] != 0 and back["e"] != back["a"]              # equal to nothing: it is not data
    assert back["f"](2, 3) == (2, 6)
    with pytest.raises(grading.WrongAnswer, match="was not evaluated"):
        back["f"](5, 5)
    grading._PROVENANCE.clear()
