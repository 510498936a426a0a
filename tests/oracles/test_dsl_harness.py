"""The shared CuTe DSL harness: batching, per-snippet errors, crash isolation, formatting, notebook helper."""

from __future__ import annotations

import pytest

from layoutlab import dsl

pytestmark = pytest.mark.dsl
needs_dsl = pytest.mark.skipif(not dsl.HAVE_DSL, reason=dsl.SKIP_REASON or "CuTe DSL unavailable")


def test_availability_flags_are_consistent():
    assert isinstance(dsl.HAVE_DSL, bool)
    assert dsl.HAVE_DSL == (dsl.SKIP_REASON == "")
    if dsl.HAVE_DSL:
        assert dsl.DSL_VERSION


@needs_dsl
def test_one_batch_isolates_errors_crashes_and_syntax_errors():
    snippets = [
        "cute.make_layout((4,6), stride=(6,1))",
        "a = cute.make_layout(8)\ncute.size(a)",
        "cute.idx2crd(17, (4,6))",
        # native SIGFPE inside the DSL: must not take the rest of the batch down
        "cute.logical_product(cute.make_layout((2,2), stride=(1,1)), cute.make_layout(3))",
        "1/0",
        "cute.make_layout((4,6)",
        "helper(3)",
        "cute.make_layout(((4,8,4),(2,2,8)), stride=((128,1,16),(64,8,512)))",
    ]
    rs = dsl.dsl_eval(snippets, setup="def helper(n):\n    return cute.make_layout(n, stride=2)")
    assert [r.status for r in rs] == ["ok", "ok", "ok", "crash", "error", "error", "ok", "ok"]
    assert rs[0].value == "(4,6):(6,1)"
    assert rs[1].value == "8" and rs[1].type == "int"
    assert rs[2].value == "(1,4)"  # tuples are printed the CuTe way, without spaces
    assert "SIGFPE" in rs[3].message
    assert rs[4].message.startswith("ZeroDivisionError")
    assert "SyntaxError" in rs[5].message
    assert rs[6].value == "3:2"
    assert rs[7].value == "((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"


@needs_dsl
def test_consecutive_crashes_each_pinned_to_their_snippet():
    bad = "cute.logical_product(cute.make_layout((2,2), stride=(1,1)), cute.make_layout(3))"
    rs = dsl.dsl_eval([bad, bad.replace("(3)", "(5)"), "cute.size(cute.make_layout((3,5)))"])
    assert [r.status for r in rs] == ["crash", "crash", "ok"]
    assert rs[2].value == "15"


@needs_dsl
def test_dsl_value_and_show_dsl(capsys):
    assert dsl.dsl_value("cute.cosize(cute.make_layout((4,6), stride=(1,10)))") == "54"
    with pytest.raises(RuntimeError, match="error"):
        dsl.dsl_value("cute.no_such_function()")
    from layoutlab import Layout

    r = dsl.show_dsl("cute.make_layout((4,6), stride=(6,1))", ours=Layout((4, 6), (6, 1)))
    out = capsys.readouterr().out
    assert r.ok and "CuTe DSL : (4,6):(6,1)" in out and "[identical]" in out
    dsl.show_dsl("cute.make_layout((4,6))", ours="(4,6):(6,1)")
    assert "[DIFFERENT]" in capsys.readouterr().out


def test_show_dsl_without_the_dsl_prints_a_note(monkeypatch, capsys):
    monkeypatch.setattr(dsl, "HAVE_DSL", False)
    monkeypatch.setattr(dsl, "SKIP_REASON", "not installed here")
    assert dsl.show_dsl("cute.make_layout(4)") is None
    assert "CuTe DSL check skipped: not installed here" in capsys.readouterr().out
    rs = dsl.dsl_eval(["cute.make_layout(4)"])
    assert rs[0].status == "error" and "unavailable" in rs[0].message


@needs_dsl
def test_a_failing_setup_reports_every_snippet_once():
    rs = dsl.dsl_eval(["cute.make_layout(4)", "cute.make_layout(8)"], setup="raise RuntimeError('broken setup')")
    assert [r.status for r in rs] == ["error", "error"]
    assert all("broken setup" in r.message for r in rs)


def _fake_dsl(monkeypatch, results):
    """dsl_check with the DSL's answers given (the formatting and the verdicts, without running the DSL)."""
    monkeypatch.setattr(dsl, "HAVE_DSL", True)
    monkeypatch.setattr(dsl, "dsl_eval", lambda snippets, setup="": [results[s] for s in snippets])


def test_dsl_check_prints_both_and_stops_on_a_difference(monkeypatch, capsys):
    from layoutlab import Layout

    _fake_dsl(monkeypatch, {"a": dsl.DSLResult("ok", "(4,6):(6,1)"), "b": dsl.DSLResult("ok", "(1,4)"),
                            "c": dsl.DSLResult("error", message="ValueError: no\nmore"),
                            "d": dsl.DSLResult("ok", "S<0,4,3>")})
    checked = dsl.dsl_check([("row-major", "a", Layout((4, 6), (6, 1))), ("idx2crd", "b", (1, 4)),
                             ("refused", "c", dsl.FAILS), ("DSL alone", "d", None)])
    out = capsys.readouterr().out.splitlines()
    assert out == ["row-major        CuTe DSL: (4,6):(6,1)  [identical]",
                   "idx2crd          CuTe DSL: (1,4)  [identical]",     # tuples printed the CuTe way
                   "refused          CuTe DSL: <error: ValueError: no>  [fails, as expected]",
                   "DSL alone        CuTe DSL: S<0,4,3>"]
    assert [r.status for r in checked] == ["ok", "ok", "error", "ok"]
    with pytest.raises(dsl.DSLCheckError, match=r"failed on 1 of 2 rows:\ncol-major: 'a'\n"
                                               r"    CuTe DSL: \(4,6\):\(6,1\)\n    expected: \(4,6\):\(1,4\)"):
        dsl.dsl_check([("col-major", "a", Layout((4, 6))), ("idx2crd", "b", (1, 4))])
    assert "[layoutlab: (4,6):(1,4)]" in capsys.readouterr().out


def test_dsl_check_indents_a_multi_line_print(monkeypatch, capsys):
    _fake_dsl(monkeypatch, {"atom": dsl.DSLResult("ok", "MMA Atom\n  ThrID: 32:1")})
    dsl.dsl_check([("the atom", "atom", "MMA Atom\n  ThrID: 32:1")], label_width=4)
    assert capsys.readouterr().out == "the atom: CuTe DSL prints  [identical]\n  MMA Atom\n    ThrID: 32:1\n"


def test_dsl_check_skips_only_where_the_dsl_is_not_installed(monkeypatch, capsys):
    monkeypatch.setattr(dsl, "HAVE_DSL", False)
    monkeypatch.setattr(dsl, "SKIP_REASON", "not installed here")
    assert dsl.dsl_check([("x", "cute.make_layout(4)", None)]) is None
    assert capsys.readouterr().out == "(CuTe DSL comparison skipped: not installed here)\n"


@pytest.mark.parametrize("status, message, ours", [
    ("error", "AttributeError: 'int' object has no attribute 'ir_value'", "tensor<0 o (8,8):(16,2048)>"),
    ("crash", "process killed by SIGSEGV", "4:1"),
    ("timeout", "timed out after 120 s", None),      # the DSL's answer alone must still come
    ("error", "DSL subprocess failed (process exited with status 1); stderr: no libcuda", "4:1"),
])
def test_an_installed_dsl_that_fails_raises_naming_the_snippet_and_its_exception(monkeypatch, capsys, status,
                                                                                    message, ours):
    _fake_dsl(monkeypatch, {"x = 1\ncute.f(x)": dsl.DSLResult(status, message=message)})
    with pytest.raises(dsl.DSLCheckError) as e:
        dsl.dsl_check([("lp", "x = 1\ncute.f(x)", ours)])
    assert f"lp: 'x = 1\\ncute.f(x)'\n    CuTe DSL: {status}: {message}" in str(e.value)
    assert "skipped" not in capsys.readouterr().out


def test_an_expected_failure_that_does_not_come_raises(monkeypatch):
    _fake_dsl(monkeypatch, {"p": dsl.DSLResult("ok", "(2,2,3):(1,1,0)")})
    with pytest.raises(dsl.DSLCheckError,
                       match=r"product: 'p'\n    CuTe DSL: \(2,2,3\):\(1,1,0\)\n    expected: a failure"):
        dsl.dsl_check([("product", "p", dsl.FAILS)])


@needs_dsl
def test_the_real_dsl_failing_on_a_literal_thread_index_raises():
    """ch1's former check: ``local_partition`` with a Python-int index fails inside the DSL (it needs an
    ``Int32``); the check must raise where it used to print a skip, and pass on the fixed call."""
    from layoutlab import Layout, local_partition, make_tensor

    ours = local_partition(make_tensor(0, Layout((128, 128))), Layout((16, 16)), 0)
    call = "cute.local_partition(cute.make_tensor(0, cute.make_layout((128, 128))), cute.make_layout((16, 16)), {})"
    with pytest.raises(dsl.DSLCheckError, match="ir_value"):
        dsl.dsl_check([("thread 0", call.format("0"), ours)])
    assert dsl.dsl_check([("thread 0", call.format("cutlass.Int32(0)"), ours)])[0].value == str(ours)
