"""layoutlab.dsl: how a batch reports what did not run to the end (a hang, a failed compile)."""

from __future__ import annotations

import pytest

from layoutlab import dsl

pytestmark = [pytest.mark.dsl,
              pytest.mark.skipif(not dsl.HAVE_DSL, reason=dsl.SKIP_REASON or "CuTe DSL unavailable")]

# Stands in for a cute.compile that fails: before tracing anything, or after every snippet has run.
FAILING_COMPILE = """
_real_compile = cute.compile
def _failing_compile(f):
    if TRACE_FIRST:
        _real_compile(f)
    raise RuntimeError("lowering failed")
cute.compile = _failing_compile
"""


def test_a_hanging_snippet_times_out_alone():
    rs = dsl.dsl_eval(["import time\ntime.sleep(30)\n1", "cute.size(cute.make_layout(3))"], child_timeout=2)
    assert [(r.status, r.value) for r in rs] == [("timeout", None), ("ok", "3")]
    assert rs[0].message == "timed out after 2 s"


@pytest.mark.parametrize("trace_first", [False, True])
def test_a_failed_compile_is_reported_on_the_snippets_without_a_result(trace_first):
    rs = dsl.dsl_eval(["cute.make_layout(4)", "cute.size(cute.make_layout(5))"],
                      setup=f"TRACE_FIRST = {trace_first}\n" + FAILING_COMPILE)
    if trace_first:   # the snippets ran at trace time: their results stand
        assert [(r.status, r.value) for r in rs] == [("ok", "4:1"), ("ok", "5")]
    else:
        assert [r.status for r in rs] == ["error", "error"]
        assert all(r.message == "compile failed: RuntimeError: lowering failed" for r in rs)
