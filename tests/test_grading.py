"""layoutlab.grading: every check passes exactly when the answer is right, and a failure says where.

Oracles are written here from the definitions (brute-force evaluation of shape:stride, plain tuple walks,
numpy matrix comparison), not taken from the module under test.
"""

import doctest
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import layoutlab
from layoutlab import Layout, grading
from layoutlab.grading import WrongAnswer
from strategies import small_layouts as layouts

SETTINGS = settings(max_examples=150, deadline=None)


def test_doctests():
    assert doctest.testmod(grading, optionflags=doctest.ELLIPSIS).failed == 0


def test_wrong_answer_is_an_assertion_error():
    # nbgrader (and pytest) count a test cell as failed when it raises; AssertionError is the usual kind.
    assert issubclass(WrongAnswer, AssertionError)


# --------------------------------------------------------------------------- brute-force layout oracle


def _leaves(t):
    return [x for e in t for x in _leaves(e)] if isinstance(t, tuple) else [t]


def _offsets(shape, stride):
    """Offsets of every 1-D index, by the definition: colexicographic coordinates dotted with strides."""
    shapes, strides = _leaves(shape), _leaves(stride)
    n = int(np.prod(shapes))
    out = []
    for k in range(n):
        rest, off = k, 0
        for s, d in zip(shapes, strides):
            off += (rest % s) * d
            rest //= s
        out.append(off)
    return out


@SETTINGS
@given(layouts(), layouts())
def test_check_layout_passes_exactly_on_equal_functions(a, b):
    fa, fb = _offsets(a.shape, a.stride), _offsets(b.shape, b.stride)
    if fa == fb:
        grading.check_layout(a, b)
        return
    with pytest.raises(WrongAnswer) as err:
        grading.check_layout(a, b, "ans")
    msg = str(err.value)
    assert msg.startswith(f"ans = {a} ")
    if len(fa) != len(fb):
        assert f"has size {len(fa)}" in msg
    else:
        k = next(i for i, (x, y) in enumerate(zip(fa, fb)) if x != y)
        assert f"at index {k} " in msg and f"it gives {fa[k]}, expected {fb[k]};" in msg
        assert f"{sum(x != y for x, y in zip(fa, fb))} of {len(fa)} offsets differ" in msg


@SETTINGS
@given(layouts())
def test_check_layout_accepts_every_spelling_of_the_answer(a):
    grading.check_layout(str(a), a, exact=True)
    grading.check_layout((a.shape, a.stride), a, exact=True)
    grading.check_layout((list(a.shape), list(a.stride)), a)
    # The same function written flat is equal as a function, but not in CuTe's exact form (if nested).
    flat = Layout(tuple(_leaves(a.shape)), tuple(_leaves(a.stride)))
    grading.check_layout(flat, a)
    if flat.shape != a.shape:
        with pytest.raises(WrongAnswer, match="computes the right offsets but is not written"):
            grading.check_layout(flat, a, exact=True)


def test_check_layout_text_table_brackets_exactly_the_wrong_cells():
    want = layoutlab.make_layout((4, 6), stride=(6, 1))
    got = layoutlab.make_layout((4, 6), stride=(1, 4))
    with pytest.raises(WrongAnswer) as err:
        grading.check_layout(got, want, "x")
    header, *rows = str(err.value).splitlines()[1:6]    # titles, then the 4 rows of the side-by-side table
    mine = [row[:header.index("expected")] for row in rows]
    fo, fw = _offsets(got.shape, got.stride), _offsets(want.shape, want.stride)
    wrong = sum(x != y for x, y in zip(fo, fw))
    assert sum(row.count("[") for row in mine) == wrong == 22
    # Entry (m, n) of the table is the offset of index m + 4 n.
    assert re.findall(r"\d+", mine[1]) == [str(fo[1 + 4 * n]) for n in range(6)]


def test_check_layout_reveal_false_hides_the_expected_offsets():
    want = layoutlab.make_layout((4, 6), stride=(6, 1))
    with pytest.raises(WrongAnswer) as err:
        grading.check_layout("(4,6):(1,4)", want, "x", reveal=False)
    msg = str(err.value)
    assert "expected" not in msg and "(6,1)" not in msg
    assert "at index 1 (coordinate (1,0)) it gives 1, which is wrong" in msg


@pytest.mark.parametrize("bad", [[1, 2, 3], 7, None, "(4,6:(1,4)", ((4, 6), (1,))])
def test_malformed_layout_answers_are_explained_not_crashed(bad):
    with pytest.raises(WrongAnswer, match="answer = "):
        grading.check_layout(bad, "(4,6):(1,4)")


def test_side_by_side_picture_only_in_a_notebook(monkeypatch):
    import IPython
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    with pytest.raises(WrongAnswer):
        grading.check_layout("(4,6):(1,4)", "(4,6):(6,1)")
    assert shown == []  # no IPython shell: text only
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    with pytest.raises(WrongAnswer):
        grading.check_layout("(4,6):(1,4)", "(4,6):(6,1)")
    (html,) = shown
    assert html.data.count("<img") == 2 and "data:image/png;base64," in html.data


# --------------------------------------------------------------------------- integers and tuples


@SETTINGS
@given(st.integers(-50, 50), st.integers(-50, 50), st.booleans())
def test_check_int(answer, expected, reveal):
    if answer == expected:
        grading.check_int(np.int64(answer), expected, reveal=reveal)
        return
    with pytest.raises(WrongAnswer) as err:
        grading.check_int(answer, expected, "n", reveal=reveal)
    msg = str(err.value)
    if reveal:
        assert msg == f"n = {answer}, expected {expected}."
    else:
        assert msg == f"n = {answer} is too {'large' if answer > expected else 'small'}."


@pytest.mark.parametrize("bad,why", [(True, "is a bool"), (4.0, "is a float; give it as an integer: 4"),
                                     ("4", "is a str"), (None, "is a NoneType"), (4.5, "is a float")])
def test_check_int_explains_wrong_types(bad, why):
    with pytest.raises(WrongAnswer, match=re.escape(why)):
        grading.check_int(bad, 4)


nested = st.recursive(st.integers(0, 9), lambda inner: st.tuples(inner, inner) | st.tuples(inner, inner, inner),
                      max_leaves=8)


def _paths(t, path=()):
    if isinstance(t, tuple):
        return [p for i, e in enumerate(t) for p in _paths(e, path + (i,))]
    return [path]


def _replace(t, path, value):
    if not path:
        return value
    return tuple(_replace(e, path[1:], value) if i == path[0] else e for i, e in enumerate(t))


@SETTINGS
@given(nested.filter(lambda t: isinstance(t, tuple)), st.data())
def test_check_int_tuple_points_at_the_first_wrong_entry(expected, data):
    grading.check_int_tuple(expected, expected)
    grading.check_int_tuple(_to_lists(expected), expected)          # lists are fine
    paths = _paths(expected)
    wrong = sorted(data.draw(st.sets(st.sampled_from(paths), min_size=1)))
    answer = expected
    for p in wrong:
        answer = _replace(answer, p, _get(expected, p) + 10)
    with pytest.raises(WrongAnswer) as err:
        grading.check_int_tuple(answer, expected, "t", reveal=False)
    msg = str(err.value)
    first = "".join(f"[{i}]" for i in wrong[0])
    assert f"entry {first} is {_get(answer, wrong[0])}, which is not right" in msg
    assert "expected" not in msg
    assert all("".join(f"[{i}]" for i in p) in msg for p in wrong)


def _to_lists(t):
    return [_to_lists(e) for e in t] if isinstance(t, tuple) else t


def _get(t, path):
    for i in path:
        t = t[i]
    return t


def test_check_int_tuple_nesting_mismatch():
    with pytest.raises(WrongAnswer, match=re.escape("has the nesting ((_,_),_), but the answer has the nesting "
                                                    "((_,_),(_,_))")):
        grading.check_int_tuple(((1, 2), 3), ((1, 2), (3, 4)))
    with pytest.raises(WrongAnswer, match="is a int; give a tuple"):
        grading.check_int_tuple(3, (3, 4))


def test_check_choice():
    grading.check_choice("TN", "TN", ["NN", "NT", "TN", "TT"])
    with pytest.raises(WrongAnswer, match="is not one of the options"):
        grading.check_choice("tn", "TN", ["NN", "NT", "TN", "TT"])
    with pytest.raises(WrongAnswer, match="is not one of the options"):
        grading.check_choice(1, True, [True, False])      # 1 == True in Python, but it is not a bool answer
    with pytest.raises(WrongAnswer, match=r"^k = 'NT' is not right\.$"):
        grading.check_choice("NT", "TN", ["NN", "NT", "TN", "TT"], "k", reveal=False)


# --------------------------------------------------------------------------- F2 matrices and functions


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 6), st.data())
def test_check_f2_matrix_names_exactly_the_wrong_columns(rows, cols, data):
    bits = st.lists(st.lists(st.integers(0, 1), min_size=cols, max_size=cols), min_size=rows, max_size=rows)
    want, got = np.array(data.draw(bits)), np.array(data.draw(bits))
    wrong = [j for j in range(cols) if not np.array_equal(want[:, j], got[:, j])]
    if not wrong:
        grading.check_f2_matrix(got.astype(bool).tolist(), want)
        return
    with pytest.raises(WrongAnswer) as err:
        grading.check_f2_matrix(got.tolist(), want, "M", reveal=False)
    msg = str(err.value)
    assert f"column {wrong[0]} (the image of input bit {wrong[0]})" in msg
    assert f"wrong columns: {', '.join(map(str, wrong))}." in msg
    # The binary image is written most significant output bit first.
    assert "0b" + "".join(str(b) for b in got[::-1, wrong[0]]) in msg


def test_check_f2_matrix_shape_and_entries():
    with pytest.raises(WrongAnswer, match="has shape 2x3, but the map has 3 output bits"):
        grading.check_f2_matrix([[1, 0, 0], [0, 1, 0]], np.eye(3, dtype=int))
    with pytest.raises(WrongAnswer, match=re.escape("M[1][1] = 2; entries of a matrix over F2 are 0 or 1")):
        grading.check_f2_matrix([[1, 0], [0, 2]], np.eye(2, dtype=int), "M")
    with pytest.raises(WrongAnswer, match="should be a 2-D 0/1 matrix"):
        grading.check_f2_matrix([[1, 0], [1]], np.eye(2, dtype=int))


def test_check_function_counts_and_reports():
    grading.check_function(lambda m, n: (m, n), lambda m, n: [m, np.int64(n)], [(1, 2), (3, 4)])
    with pytest.raises(WrongAnswer, match=r"^f\(4\) = 0, expected 4; 4 of 8 inputs give a wrong result\.$"):
        grading.check_function(lambda x: x % 4, lambda x: x, range(8), "f")

    def broken(m, n):
        if m == 2:
            raise KeyError("oops")
        return m

    with pytest.raises(WrongAnswer, match=re.escape("g(2, 0) raised KeyError: 'oops'")):
        grading.check_function(broken, lambda m, n: m, [(m, 0) for m in range(4)], "g")
    with pytest.raises(WrongAnswer, match="is a int; define it as a function"):
        grading.check_function(3, lambda x: x, range(2), "h")
