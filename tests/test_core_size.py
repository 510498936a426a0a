"""No module of ``layoutlab`` is over ~500 code lines (issue 28: docstrings are this library's teaching and do not
count; a concept bigger than a file becomes a folder), ``tools/core_size.py`` (the measure) counts what it says,
and the core keeps the size it was cut to."""
import pytest

from tools_loader import load_tool

core_size = load_tool("core_size")

# A module may hold this many code lines (no blank, comment or docstring line).
MAX_CODE_LINES = 500

# Issue 18 cut the core (lib/layoutlab without kernels, viz, widgets, bench, probe) from 5230 code lines at e3be559
# (5684 before the cut) to 4485. Growing past this budget is a decision: raise it in the same change, saying why.
# 4600 -> 4620 (issue 29): the DSL's answers for nested basis strides in complement and the inverses, identity
# tilers in the divides and weakly congruent orders in make_ordered_layout (+86 code lines, 4610 measured).
# 4620 -> 4870 (issue 29): the checked public boundary (boundary.py, 251 code lines: the kind of every public
# parameter, in place of hand-written checks in each function; errors.py's checked enums; 4854 measured).
# 4870 -> 4890: the boundary's property test over the public modules: gpu.py and grading.py refuse arguments of
# the wrong kind with a LayoutError (+20 code lines, 4881 measured).
CODE_LINE_BUDGET = 4890


def test_counts_of_a_module_worked_out_by_hand():
    src = '''"""Module docstring,
two lines."""

# a comment
def f(x):  # trailing comment
    """Docstring."""
    return (x +
            1)
'''
    # physical 8; docstring lines 1, 2, 6; code lines 5, 7, 8; tokens: def f ( x ) : return ( x + 1 ) = 12
    assert core_size.measure(src) == {"phys": 8, "code": 3, "tokens": 12, "doc": 3}


def test_the_core_excludes_kernels_pictures_widgets_and_the_gpu_scripts():
    names = set(core_size.core_size())
    assert {"cute/layout.py", "cute/algebra.py", "linear/layout.py", "nvgpu/tma.py"} <= names
    excluded = {"kernels", "viz", "widgets", "bench", "probe"}
    assert not [n for n in names if n.split("/")[0].removesuffix(".py") in excluded]
    assert {"bench/gemm.py", "probe/tma.py"} <= set(core_size.core_size(issue_core=True))


def test_the_core_stays_within_its_code_line_budget():
    code = sum(m["code"] for m in core_size.core_size().values())
    assert code <= CODE_LINE_BUDGET, (f"the core has {code} code lines, over its budget of {CODE_LINE_BUDGET} "
                                      "(tools/core_size.py -v lists them per module)")


def test_no_module_is_over_500_code_lines():
    sizes = {name: m["code"] for name, m in core_size.core_size(issue_core=True, everything=True).items()}
    assert len(sizes) > 60 and "kernels/hopper.py" in sizes and not [n for n in sizes if n.startswith("results")]
    print(f"largest module: {max(sizes, key=sizes.get)} ({max(sizes.values())} code lines) of {len(sizes)}")
    over = {name: n for name, n in sizes.items() if n > MAX_CODE_LINES}
    assert not over, (f"modules over {MAX_CODE_LINES} code lines: {over}; cut a module along its concepts, and "
                      "make a concept bigger than a file a folder")


def test_an_unknown_revision_is_refused_with_what_to_give():
    with pytest.raises(SystemExit, match="is not a revision .* give a commit, tag or branch"):
        core_size.core_size("no-such-revision")
