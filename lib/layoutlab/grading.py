"""Answer checks for exercise test cells: say *where* a student's answer differs, not just that it does.

Every ``check_*`` returns ``None`` for a right answer, else raises :class:`WrongAnswer` (an ``AssertionError``:
nbgrader fails the cell) naming the answer, what is wrong and what would be valid; wrong *types* too (a list
stands for a tuple, a float or a bool is no integer). ``reveal=False`` (visible tests, where the value *is* the
answer) keeps the expected value out of the message but still says which entry, coordinate or bit is wrong.

    >>> from layoutlab import make_layout
    >>> check_layout("(4,6):(1,4)", make_layout((4,6), stride=(6,1)), name="stride_a")
    Traceback (most recent call last):
    ...
    layoutlab.grading.WrongAnswer: stride_a = (4,6):(1,4) is not the right layout: at index 1 (coordinate (1,0)) it gives 1, expected 6; 22 of 24 offsets differ.
    ...
"""

from __future__ import annotations

import base64
import numbers
from itertools import zip_longest

from .errors import LayoutError
from .cute.inttuple import format_tree, idx2crd, leaf_paths, leaves, product, transform_leaf
from .cute.layout import Layout, parse_layout

__all__ = ["WrongAnswer", "check_int", "check_int_tuple", "check_choice", "check_layout", "as_layout",
           "check_f2_matrix", "check_function", "check_reasoned", "check_that"]

# Text grids larger than this are cut, so that a message stays readable.
_MAX_ROWS, _MAX_COLS = 16, 16


class WrongAnswer(AssertionError):
    """A student's answer is wrong; the message says where and how (an ``AssertionError`` for the grader).

    >>> issubclass(WrongAnswer, AssertionError)       # nbgrader counts the test cell as failed
    True
    """


def _hint(hint, sep=" "):
    return f"{sep}Hint: {hint}" if hint else ""


def _is_array(x):
    """A numpy array (numpy is optional: offline in the browser these checks run without it)."""
    return type(x).__name__ == "ndarray" and hasattr(x, "tolist")


def _as_int(x, name):
    """``x`` as a Python int, or a WrongAnswer saying why it is not one (bools and floats are refused)."""
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        raise WrongAnswer(f"{name} = {x!r} is a bool; give an integer")
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, numbers.Real) and float(x).is_integer():
        raise WrongAnswer(f"{name} = {x!r} is a float; give it as an integer: {int(x)}")
    raise WrongAnswer(f"{name} = {x!r} is a {type(x).__name__}; give an integer")


def check_int(answer, expected: int, name: str = "answer", *, reveal: bool = True, hint: str = "") -> None:
    """``answer`` must be the integer ``expected``; with ``reveal=False`` a wrong one is only "too large/small".

    >>> check_int(4, 4)
    >>> check_int(8, 4, "degree", reveal=False)
    Traceback (most recent call last):
    ...
    layoutlab.grading.WrongAnswer: degree = 8 is too large.
    """
    value = _as_int(answer, name)
    if value != expected:
        raise WrongAnswer((f"{name} = {value}, expected {expected}." if reveal else
                           f"{name} = {value} is too {'large' if value > expected else 'small'}.") + _hint(hint))


def _normalise(x, leaf, path=""):
    """``x`` with lists and numpy arrays as tuples and every leaf ``e`` as ``leaf(e, path)`` (path: ``[1][0]``)."""
    if _is_array(x):
        x = x.tolist()
    if isinstance(x, (tuple, list)):
        return tuple(_normalise(e, leaf, f"{path}[{i}]") for i, e in enumerate(x))
    return leaf(x, path)


def _plain(x, path=""):
    return int(x) if isinstance(x, numbers.Integral) and not isinstance(x, bool) else x


def _profile(t):
    """The nesting of ``t`` with every leaf shown as ``_``: ``(_,(_,_))``."""
    return format_tree(transform_leaf(t, lambda _: None))


def check_int_tuple(answer, expected, name: str = "answer", *, reveal: bool = True, hint: str = "") -> None:
    """``answer`` must be the (nested) integer tuple ``expected``; a wrong nesting or entry is pointed at. Lists
    are accepted as tuples, ``None`` entries (CuTe's ``_``) where ``expected`` has them.

    >>> check_int_tuple([6, 1], (6, 1))
    >>> check_int_tuple((1, 6), (6, 1), "stride_a", reveal=False)
    Traceback (most recent call last):
    ...
    layoutlab.grading.WrongAnswer: stride_a = (1,6): entry [0] is 1, which is not right (entries [0], [1] are wrong).
    """
    if not isinstance(expected, tuple):
        return check_int(answer, expected, name, reveal=reveal, hint=hint)
    hint = _hint(hint)
    profile = _profile(expected)
    if not (isinstance(answer, (tuple, list)) or _is_array(answer)):
        raise WrongAnswer(f"{name} = {answer!r} is a {type(answer).__name__}; give a tuple with the nesting "
                          f"{profile}, e.g. {profile.replace('_', '1')}.{hint}")
    value = _normalise(answer, lambda e, path: None if e is None else _as_int(e, name + path))
    if _profile(value) != profile:
        raise WrongAnswer(f"{name} = {format_tree(value)} has the nesting {_profile(value)}, but the answer has the "
                          f"nesting {profile} (one integer per '_').{hint}")
    wrong = [("".join(f"[{i}]" for i in p), format_tree(x), format_tree(y))
             for p, x, y in zip(leaf_paths(value), leaves(value), leaves(expected)) if x != y]
    if not wrong:
        return
    (where, got, want), listed = wrong[0], ", ".join(w for w, _, _ in wrong)
    entries = f"entry {listed} is" if len(wrong) == 1 else f"entries {listed} are"
    verdict = f", expected {format_tree(expected)}: entry {where} is {got}, expected {want}." if reveal else \
        f": entry {where} is {got}, which is not right ({entries} wrong)."
    raise WrongAnswer(f"{name} = {format_tree(value)}{verdict}{hint}")


def check_choice(answer, expected, options, name: str = "answer", *, reveal: bool = True, hint: str = "") -> None:
    """``answer`` must be one of ``options`` (else the options are listed) and equal to ``expected``.

    >>> check_choice("128B", "128B", ["32B", "64B", "128B"])
    >>> check_choice("256B", "128B", ["32B", "64B", "128B"], "atom")
    Traceback (most recent call last):
    ...
    layoutlab.grading.WrongAnswer: atom = '256B' is not one of the options '32B', '64B', '128B'.
    """
    if not isinstance(options, (list, tuple, set, frozenset, range)) or not options:
        raise LayoutError(f"check_choice: options must be a non-empty list of the choices, got "
                          f"{type(options).__name__}")
    if answer not in list(options) or isinstance(answer, bool) != isinstance(expected, bool):
        raise WrongAnswer(f"{name} = {answer!r} is not one of the options {', '.join(map(repr, options))}.")
    if answer != expected:
        msg = f"{name} = {answer!r}, expected {expected!r}." if reveal else f"{name} = {answer!r} is not right."
        raise WrongAnswer(msg + _hint(hint))


def as_layout(x, name: str = "answer") -> Layout:
    """A student's layout answer (a Layout, CuTe's notation ``"(4,6):(6,1)"`` or a pair ``(shape, stride)``) as a
    :class:`~layoutlab.Layout`, or a WrongAnswer saying what is accepted.

    >>> as_layout("(4,6):(6,1)") == as_layout(((4, 6), (6, 1)))
    True
    """
    if isinstance(x, Layout):
        return x
    try:
        if isinstance(x, str):
            return parse_layout(x)
        if isinstance(x, (tuple, list)) and len(x) == 2:
            return Layout(*(_normalise(t, lambda e, path: _as_int(e, name + path)) for t in x))
    except LayoutError as err:
        raise WrongAnswer(f"{name} = {x!r} is not a valid layout: {err}") from None
    raise WrongAnswer(f"{name} = {x!r} is a {type(x).__name__}; give a layout: make_layout(shape, stride=...), "
                      f"a string in CuTe notation like '(4,6):(6,1)', or a pair (shape, stride)")


def _values(layout):
    if layout.is_integral:
        return [layout(k) for k in range(layout.size())]
    # Coordinate layouts (basis strides) evaluate to tuples: compare their printed form.
    return [format_tree(layout(k)) for k in range(layout.size())]


def _grid_dims(layout):
    """Rows and columns of the 2-D picture of a layout: mode 0 down, everything else across."""
    rows = product(layout.shape[0]) if layout.rank() > 1 else 1
    return rows, layout.size() // rows


def _text_grid(values, rows, cols, diff):
    """Offsets as a rows x cols table (index = r + rows*c, CuTe's column-major order), wrong ones bracketed."""
    cells = [[f"[{values[k]}]" if diff[k] else f" {values[k]} " for k in range(r, rows * min(cols, _MAX_COLS), rows)]
             for r in range(min(rows, _MAX_ROWS))]
    width = max(len(x) for row in cells for x in row)
    more = " ..." if cols > _MAX_COLS else ""
    return [" ".join(x.rjust(width) for x in row) + more for row in cells] + (["..."] if rows > _MAX_ROWS else [])


def _table(title, got, expected=None):
    """``title`` over the lines ``got``; given ``expected`` (when revealing), "expected" over those, to the right."""
    if expected is None:
        return "\n".join([title, *got])
    w = max(map(len, [title, *got]))
    return "\n".join(a.ljust(w) + "   " + b for a, b in zip_longest([title, *got], ["expected", *expected],
                                                                     fillvalue=""))


def _show_picture(answer: Layout, expected: Layout, name: str, wrong_cells):
    """In a notebook, draw both layouts (rank <= 2) side by side, wrong cells outlined (else nothing: see the text)."""
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display

        if get_ipython() is None or max(answer.rank(), expected.rank()) > 2:
            return
        from . import viz

        same_grid = _grid_dims(answer) == _grid_dims(expected)
        figs = [viz.draw_layout(answer, title=f"{name} = {answer}", highlight=wrong_cells if same_grid else None),
                viz.draw_layout(expected, title=f"expected: {expected}", highlight=wrong_cells)]
    except (ImportError, LayoutError):  # no matplotlib, or e.g. a coordinate layout: the text table says it all
        return
    images = "".join(f'<img src="data:image/png;base64,{base64.b64encode(viz.figure_to_png(f)).decode()}"/>'
                     for f in figs)
    display(HTML(f'<div style="display:flex;gap:1em;align-items:flex-start">{images}</div>'))


def check_layout(answer, expected, name: str = "answer", *, exact: bool = False, reveal: bool = True,
                 picture: bool = True, hint: str = "") -> None:
    """``answer`` (anything :func:`as_layout` accepts) must be the same function as the layout ``expected``: the
    same size ``n`` and ``A(k) == E(k)`` for every ``k`` in ``[0, n)``; ``exact=True`` also requires the same shape
    and stride (the form the CuTe DSL prints). A mismatch names the first differing index, its coordinate and both
    offsets, and shows both as tables, wrong entries in brackets (in a notebook also drawn).

    >>> check_layout("(2,4):(1,2)", "8:1")                 # the same function
    >>> check_layout("(2,4):(1,2)", "8:1", exact=True)
    Traceback (most recent call last):
    ...
    layoutlab.grading.WrongAnswer: answer = (2,4):(1,2) computes the right offsets but is not written the way CuTe writes the result: expected 8:1.
    """
    hint = _hint(hint, "\n")
    got = as_layout(answer, name)
    want = expected if isinstance(expected, Layout) else parse_layout(expected)
    if got.size() != want.size():
        shape = f" (shape {format_tree(want.shape)})" if reveal else ""
        raise WrongAnswer(f"{name} = {got} has size {got.size()}, but the answer is a layout of size "
                          f"{want.size()}{shape}.{hint}")
    a, e = _values(got), _values(want)
    diff = [x != y for x, y in zip(a, e)]
    if any(diff):
        k = diff.index(True)
        rows, cols = _grid_dims(want)
        table = _table(f"{name} (wrong entries in [ ])", _text_grid(a, rows, cols, diff),
                       _text_grid(e, rows, cols, diff) if reveal else None)
        if picture and reveal:
            _show_picture(got, want, name, {(i % rows, i // rows) for i, d in enumerate(diff) if d})
        verdict = f"expected {e[k]}" if reveal else "which is wrong"
        raise WrongAnswer(f"{name} = {got} is not the right layout: at index {k} (coordinate "
                          f"{format_tree(idx2crd(k, want.shape))}) it gives {a[k]}, {verdict}; {sum(diff)} of "
                          f"{len(a)} offsets differ.\n{table}{hint}")
    if exact and got != want:  # the same shape and stride
        written = f": expected {want}." if reveal else f" (the result has shape nesting {_profile(want.shape)})."
        raise WrongAnswer(f"{name} = {got} computes the right offsets but is not written the way CuTe writes "
                          f"the result{written}{hint}")


def _bits(col):
    return "".join(map(str, col[::-1])) or "0"


def _matrix_lines(m, wrong):
    marks = "".join(" v" if j in wrong else "  " for j in range(len(m[0])))
    return ["     " + marks] + [f"y{i:<2} [" + "".join(f" {b}" for b in row) + " ]" for i, row in enumerate(m)]


def check_f2_matrix(answer, expected, name: str = "answer", *, reveal: bool = True, hint: str = "") -> None:
    """``answer`` must be the 0/1 matrix ``expected`` (a linear map over F2: ``y = M x`` with XOR for +).
    As in Triton's LinearLayout, ``M[i, j] = 1`` when input bit ``j`` flips output bit ``i``: column ``j`` is the
    image of ``1 << j``. Wrong columns are named with both images in binary (most significant bit first).

    >>> check_f2_matrix([[1, 0], [1, 1]], [[1, 0], [1, 1]])
    >>> check_f2_matrix([[1, 0], [0, 1]], [[1, 0], [1, 1]], "S")
    Traceback (most recent call last):
    ...
    layoutlab.grading.WrongAnswer: S: column 0 (the image of input bit 0) is 0b01, expected 0b11; 1 of 2 columns differ.
    ...
    """
    hint = _hint(hint, "\n")
    want = expected.tolist() if _is_array(expected) else expected
    if not (isinstance(want, (list, tuple)) and want and all(isinstance(r, (list, tuple)) for r in want)
            and len({len(r) for r in want}) == 1 and want[0] and all(b in (0, 1) for r in want for b in r)):
        raise LayoutError(f"check_f2_matrix: expected must be a non-empty 2-D 0/1 matrix (a list of rows), got "
                          f"{str(expected)[:60]}")
    want = [[int(b) for b in row] for row in want]
    rows, cols = len(want), len(want[0])
    got = answer.tolist() if _is_array(answer) else answer
    if not (isinstance(got, (list, tuple)) and got and all(isinstance(r, (list, tuple)) for r in got)
            and len({len(r) for r in got}) == 1):
        raise WrongAnswer(f"{name} should be a 2-D 0/1 matrix with {rows} rows (output bits) and "
                          f"{cols} columns (input bits), e.g. a list of {rows} lists; got {answer!r}")
    if (len(got), len(got[0])) != (rows, cols):
        raise WrongAnswer(f"{name} has shape {len(got)}x{len(got[0])}, but the map has {rows} output "
                          f"bits (rows) and {cols} input bits (columns).{hint}")
    for i, row in enumerate(got):
        for j, b in enumerate(row):
            if not isinstance(b, numbers.Integral) or b not in (0, 1):
                raise WrongAnswer(f"{name}[{i}][{j}] = {b!r}; entries of a matrix over F2 are 0 or 1 "
                                  f"(2 = 0 and 3 = 1 mod 2: reduce them).{hint}")
    got = [[int(b) for b in row] for row in got]
    column = lambda m, j: [r[j] for r in m]  # noqa: E731
    wrong = [j for j in range(cols) if column(got, j) != column(want, j)]
    if wrong:
        j = wrong[0]
        verdict = f"expected 0b{_bits(column(want, j))}; {len(wrong)} of {cols} columns differ." if reveal else \
            f"which is wrong; wrong columns: {', '.join(map(str, wrong))}."
        table = _table(f"{name} (wrong columns marked v)", _matrix_lines(got, wrong),
                       _matrix_lines(want, wrong) if reveal else None)
        raise WrongAnswer(f"{name}: column {j} (the image of input bit {j}) is 0b{_bits(column(got, j))}, {verdict}\n"
                          f"{table}{hint}")


def check_function(fn, expected_fn, inputs, name: str = "answer", *, reveal: bool = True, hint: str = "") -> None:
    """``fn(*x) == expected_fn(*x)`` for every ``x`` in ``inputs`` (a single argument may be given bare), lists
    compared as tuples; names the first differing input (or one ``fn`` raised on) and counts the wrong ones.

    >>> check_function(lambda m: m % 8, lambda m: m % 8, range(64))
    >>> check_function(lambda m: m % 4, lambda m: m % 8, range(64), "lane_row", reveal=False)
    Traceback (most recent call last):
    ...
    layoutlab.grading.WrongAnswer: lane_row(4) = 0, which is wrong; 32 of 64 inputs give a wrong result.
    """
    if not callable(expected_fn) or not hasattr(inputs, "__iter__"):
        raise LayoutError(f"check_function: expected_fn must be a function and inputs an iterable of inputs, got "
                          f"{type(expected_fn).__name__} and {type(inputs).__name__}")
    if not callable(fn):
        raise WrongAnswer(f"{name} = {fn!r} is a {type(fn).__name__}; define it as a function with def {name}(...):")
    hint, results = _hint(hint), []
    for x in inputs:
        args = x if isinstance(x, tuple) else (x,)
        shown = ", ".join(format_tree(_normalise(a, _plain)) for a in args)
        try:
            got = _normalise(fn(*args), _plain)
        except Exception as err:  # noqa: BLE001 - report the student's error with its input
            raise WrongAnswer(f"{name}({shown}) raised {type(err).__name__}: {err}{hint}") from err
        results.append((shown, got, _normalise(expected_fn(*args), _plain)))
    wrong = [r for r in results if r[1] != r[2]]
    if wrong:
        shown, got, want = wrong[0]
        verdict = f"expected {format_tree(want)}" if reveal else "which is wrong"
        raise WrongAnswer(f"{name}({shown}) = {format_tree(got)}, {verdict}; {len(wrong)} of {len(results)} inputs "
                          f"give a wrong result.{hint}")


def check_that(condition, message: str) -> None:
    """A property a visible test checks without revealing the answer (a :class:`WrongAnswer`, even under -O).

    >>> check_that(6 % 2 == 0, "matrices_a: the chosen width must divide the matrix count")
    >>> check_that(6 % 4 == 0, "matrices_a: the chosen width must divide the matrix count")
    Traceback (most recent call last):
    ...
    layoutlab.grading.WrongAnswer: matrices_a: the chosen width must divide the matrix count
    """
    if not condition:
        raise WrongAnswer(message)


# How each answer a test cell reads was computed: set by the exercise grader (exercises/llanswers.py, from the
# student's cells read as text outside their kernel) before the test cell runs; empty in a notebook run by hand.
_PROVENANCE = {}


def check_reasoned(name: str, forbidden, *, hint: str = "") -> None:
    """Refuse an answer computed by a library call that does the whole part (the exercise asks for reasoning).

    Graded by ``exercises/llgrade.py``, the answers this test cell reads were traced outside the student's kernel:
    an answer whose computation calls or passes around a name in ``forbidden`` is refused, and so is one computed
    after code the grader cannot read (``exec``, ``getattr`` with a computed name, a magic that runs a string, a
    changed module). A forbidden call that computes nothing the answer uses (a leftover scratch check) is not
    held against it. In a notebook run by hand there is no trace and nothing is checked.

    >>> _PROVENANCE.update({"__exported__": ["comp_a"], "comp_a": {"calls": ["composition"], "aliases": [],
    ...                     "cells": {"composition": 3}, "meta": [], "defined": True}})
    >>> check_reasoned("part A", {"composition"})
    Traceback (most recent call last):
    ...
    layoutlab.grading.WrongAnswer: part A: comp_a is computed with composition (cell 3), which computes this part's answer for you; this part asks you to work it out.
    >>> _PROVENANCE.clear(); check_reasoned("part A", {"composition"})
    """
    if not isinstance(forbidden, (list, tuple, set, frozenset)) or not all(isinstance(f, str) for f in forbidden):
        raise LayoutError(f"check_reasoned: forbidden must be a set of the names of the library calls that answer "
                          f"the part, e.g. {{'composition'}}, got {str(forbidden)[:60]}")
    exported = set(_PROVENANCE.get("__exported__", ()))
    forbidden = set(forbidden)
    for answer, t in sorted((k, v) for k, v in _PROVENANCE.items() if k in exported):
        if t["meta"]:
            raise WrongAnswer(f"{name}: {t['meta'][0]} runs code the grader cannot read, so it cannot tell how "
                              f"{answer} was computed; remove it and compute the answer in plain code.{_hint(hint)}")
        if not t["defined"]:
            raise WrongAnswer(f"{name}: no cell of yours assigns {answer} in code the grader can read.{_hint(hint)}")
        bad = sorted((set(t["calls"]) | set(t["aliases"])) & forbidden)
        if bad:
            raise WrongAnswer(f"{name}: {answer} is computed with {bad[0]} (cell {t['cells'].get(bad[0], '?')}), "
                              f"which computes this part's answer for you; this part asks you to work it out."
                              f"{_hint(hint)}")
