"""Run snippets in the real CuTe DSL (``cutlass.cute``), batched and crash-isolated: the one shared way for
tests and notebooks to ask the DSL what it computes. A snippet (an expression, or lines whose last one is the
expression) runs at trace time inside ``@cute.jit``, where static layouts are computed as in a kernel; it sees
``cute``, ``cutlass`` and ``setup``'s names. Values print the CuTe way; results are memoised per DSL version.
:data:`HAVE_DSL` says whether ``nvidia-cutlass-dsl`` is importable, :data:`SKIP_REASON` why not."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from typing import Sequence

from .cute.inttuple import format_tree

__all__ = ["HAVE_DSL", "SKIP_REASON", "DSL_VERSION", "DSLResult", "dsl_eval", "dsl_value", "show_dsl", "dsl_check",
           "DSLCheckError", "FAILS"]


def _detect():
    if importlib.util.find_spec("cutlass") is None:
        return False, "nvidia-cutlass-dsl is not installed (the CuTe DSL ships only for Linux x86-64/aarch64)", None
    try:
        return True, "", importlib.metadata.version("nvidia-cutlass-dsl")
    except importlib.metadata.PackageNotFoundError:
        return True, "", "unknown"


HAVE_DSL, SKIP_REASON, DSL_VERSION = _detect()


@dataclass(frozen=True)
class DSLResult:
    """The outcome of one snippet: ``status`` ``"ok"`` (``value`` the printed result, ``type`` its type name),
    ``"error"`` (``message``: the DSL's exception), ``"crash"`` (``message`` says how it died) or ``"timeout"``.

    >>> r = DSLResult("ok", "(4,6):(6,1)", "Layout")
    >>> r.ok, r.value, DSLResult("crash", message="SIGFPE").ok
    (True, '(4,6):(6,1)', False)
    """

    status: str
    value: str | None = None
    type: str | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


# The subprocess is a zygote: it imports cutlass once and runs the batch in a forked child, so a native crash
# (SIGFPE, abort) or a hang costs one fork and the batch resumes right after the snippet that killed it.
# Each result is one "@@LLR [index, status, value, type, message]" line; index -1 is a failed compile.
_DRIVER = r"""
import sys, json, os, signal
_OUT = sys.stdout
import cutlass
import cutlass.cute as cute

def _fmt(r):
    return "(" + ",".join(_fmt(e) for e in r) + ")" if isinstance(r, (tuple, list)) else str(r)

def _line(i, status, value=None, typ=None, msg=""):
    return "@@LLR " + json.dumps([i, status, value, typ, msg[:2000]]) + "\n"

{setup}

_FUNCS = []

{funcs}
_TIMEOUT = {timeout}

def _child(start, w):
    def drive():
        for k in range(start, len(_FUNCS)):
            signal.alarm(_TIMEOUT)  # per snippet: a slow batch is fine, a hanging snippet is not
            try:
                r = _FUNCS[k]()
                os.write(w, _line(k, "ok", _fmt(r), type(r).__name__).encode())
            except Exception as e:
                os.write(w, _line(k, "error", msg=(type(e).__name__ + ": " + str(e)).strip()).encode())

    @cute.jit
    def main():
        drive()

    try:
        cute.compile(main)
        signal.alarm(0)
    except Exception as e:
        os.write(w, _line(-1, "compile_error", msg=type(e).__name__ + ": " + str(e)).encode())

start = 0
while start < len(_FUNCS):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        signal.alarm(_TIMEOUT)
        _child(start, w)
        os._exit(0)
    os.close(w)
    last = [start - 1, "none yet"]
    with os.fdopen(r, "rb") as rf:
        for raw in rf:
            _OUT.write(raw.decode())
            last = json.loads(raw[6:])
    _, status = os.waitpid(pid, 0)
    start = last[0] + 1
    if last[1] == "compile_error" or start == len(_FUNCS):
        break
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    if sig == signal.SIGALRM:
        kind, msg = "timeout", "timed out after %d s" % _TIMEOUT
    elif sig is not None:
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        kind, msg = "crash", "process killed by " + name
    else:
        kind, msg = "crash", "process exited with status %d" % os.WEXITSTATUS(status)
    _OUT.write(_line(start, kind, msg=msg))
    _OUT.flush()
    start += 1
"""


def _snippet_function(src: str) -> str:
    """The snippet as a function the driver collects in ``_FUNCS``, returning the value of its last line."""
    *body, last = textwrap.dedent(src).strip("\n").split("\n")
    return "\n".join(["def _snippet():", *("    " + ln for ln in body), f"    return ({last})",
                      "_FUNCS.append(_snippet)"])


def _syntax_error(src: str) -> DSLResult | None:
    try:
        compile(_snippet_function(src), "<snippet>", "exec")
    except SyntaxError as e:
        return DSLResult("error", message=f"SyntaxError in snippet: {e.msg} ({src!r})")
    return None


def _run_batch(snippets, setup, arch, timeout, per_snippet_timeout):
    """Run the snippets in one subprocess: one :class:`DSLResult` each."""
    with tempfile.NamedTemporaryFile("w", suffix="_dsl_batch.py", delete=False) as fh:
        fh.write(_DRIVER.format(setup=textwrap.dedent(setup), timeout=int(per_snippet_timeout),
                                funcs="\n\n".join(map(_snippet_function, snippets))))
    try:
        proc = subprocess.run([sys.executable, fh.name], capture_output=True, text=True, timeout=timeout,
                              env={"CUTE_DSL_ARCH": arch, "MPLBACKEND": "Agg", **os.environ})
        stdout = proc.stdout
    except subprocess.TimeoutExpired as e:
        proc, stdout = None, (e.stdout or b"").decode()  # the output so far, as bytes even with text=True
    finally:
        os.unlink(fh.name)
    lines = [json.loads(line[6:]) for line in stdout.splitlines() if line.startswith("@@LLR ")]
    results = {k: DSLResult(*result) for k, *result in lines if k >= 0}
    compile_errors = [msg for k, *_, msg in lines if k == -1]
    if compile_errors:
        missing = DSLResult("error", message=f"compile failed: {compile_errors[0]}")
    elif proc is None:
        missing = DSLResult("timeout", message=f"DSL subprocess timed out after {timeout:.0f} s")
    else:  # the zygote itself died: the DSL does not import here, or the setup code failed
        rc, names = proc.returncode, {sig.value: sig.name for sig in signal.Signals}
        how = f"process killed by {names.get(-rc, f'signal {-rc}')}" if rc < 0 else f"process exited with status {rc}"
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        missing = DSLResult("error", message=f"DSL subprocess failed ({how}); stderr: {tail}")
    return [results.get(k, missing) for k in range(len(snippets))]


_MEMO = {}


def dsl_eval(snippets: Sequence[str], setup: str = "", *, arch: str = "sm_90a", timeout: float = 600.0,
             child_timeout: float = 120.0) -> list[DSLResult]:
    """Evaluate each snippet inside one ``@cute.jit`` trace (one subprocess, one ``cute.compile``): one
    :class:`DSLResult` each, in order (without the DSL, ``"error"``). A native crash or a hang (``child_timeout``
    s for one snippet) is pinned on its snippet and the rest run on in a new child.

    >>> rs = dsl_eval(["cute.make_layout((4,6), stride=(6,1))", "cute.size(cute.make_layout((4,6)))", "1/0"])
    >>> [(r.status, r.value) for r in rs]
    [('ok', '(4,6):(6,1)'), ('ok', '24'), ('error', None)]
    """
    snippets = list(snippets)
    if not HAVE_DSL:
        return [DSLResult("error", message=f"CuTe DSL unavailable: {SKIP_REASON}") for _ in snippets]
    keys = [(DSL_VERSION, arch, setup, s) for s in snippets]
    out = [_MEMO.get(key) or _syntax_error(s) for key, s in zip(keys, snippets)]
    todo = [i for i, r in enumerate(out) if r is None]
    if todo:
        for i, r in zip(todo, _run_batch([snippets[i] for i in todo], setup, arch, timeout, child_timeout)):
            out[i] = r
    _MEMO.update(zip(keys, out))
    return out


def dsl_value(snippet: str, setup: str = "") -> str:
    """The DSL's printed value of one snippet; raises ``RuntimeError`` if it errors or crashes.

    >>> dsl_value("cute.size(cute.make_layout((4,6)))")
    '24'
    """
    (r,) = dsl_eval([snippet], setup)
    if not r.ok:
        raise RuntimeError(f"CuTe DSL {r.status} on {snippet!r}: {r.message}")
    return r.value  # type: ignore[return-value]


def _first_line(r):
    return r.message.splitlines()[0] if r.message else ""


def _printed(ours):
    """How ``layoutlab``'s result prints, the CuTe way."""
    return ours if isinstance(ours, str) else format_tree(ours)


def show_dsl(snippet: str, ours=None, setup: str = "") -> DSLResult | None:
    """Notebook helper: print what the CuTe DSL gives for ``snippet`` and, if given, whether ``ours`` matches
    (without the DSL, a visible note; returns ``None``).

    >>> from layoutlab import Layout
    >>> r = show_dsl("cute.make_layout((4,6), stride=(6,1))", ours=Layout((4,6),(6,1)))
    CuTe DSL : (4,6):(6,1)
    layoutlab: (4,6):(6,1)   [identical]
    """
    if not HAVE_DSL:
        print(f"(CuTe DSL check skipped: {SKIP_REASON})")
        return None
    (r,) = dsl_eval([snippet], setup)
    print(f"CuTe DSL : {r.value}" if r.ok else f"CuTe DSL {r.status}: {_first_line(r)}")
    if ours is not None:
        mine = _printed(ours)
        print(f"layoutlab: {mine}   [{'identical' if r.ok and r.value == mine else 'DIFFERENT'}]")
    return r


class DSLCheckError(AssertionError):
    """A :func:`dsl_check` comparison failed where the CuTe DSL is installed: the DSL raised, crashed or timed out
    on a snippet, or printed something other than ``layoutlab``. Raised, never printed, so that a notebook cell
    (and the book build, which runs the chapters) fails instead of publishing a skipped check. It is an
    ``AssertionError``: a failed comparison is a failed check, like a failed ``assert`` in a cell.

    >>> issubclass(DSLCheckError, AssertionError)
    True
    """


class _Failure:
    def __repr__(self):
        return "dsl.FAILS"


#: A :func:`dsl_check` row's expected value: the DSL fails on this snippet (raises, crashes or hangs); the row passes
#: only then (for input that has no valid result, where the DSL does not return one either).
FAILS = _Failure()


def dsl_check(rows, setup: str = "", *, label_width: int = 16) -> list[DSLResult] | None:
    """Notebook helper: ask the DSL for each ``(label, snippet, ours)`` in one batch; print both; raise
    :class:`DSLCheckError` naming each failed row (its snippet and the DSL's exception or value) if any differs or
    fails. ``ours`` is compared by its printed form; ``None`` shows the DSL's answer alone (it must still run);
    :data:`FAILS` expects the DSL to fail. Only where the DSL is not installed does it print a note (and
    return ``None``) instead: installed but failing is an error, not a skip.

    >>> from layoutlab import Layout
    >>> checked = dsl_check([("row-major", "cute.make_layout((4,6), stride=(6,1))", Layout((4,6),(6,1))),
    ...                      ("size", "cute.size(cute.make_layout((4,6)))", 24)])
    row-major        CuTe DSL: (4,6):(6,1)  [identical]
    size             CuTe DSL: 24  [identical]
    """
    rows = list(rows)
    if not HAVE_DSL:
        print(f"(CuTe DSL comparison skipped: {SKIP_REASON})")
        return None
    results = dsl_eval([snippet for _, snippet, _ in rows], setup)
    failed = []
    for (label, snippet, ours), r in zip(rows, results):
        theirs = r.value if r.ok else f"<{r.status}: {_first_line(r)}>"
        if ours is FAILS:
            good, verdict = not r.ok, "  [fails, as expected]" if not r.ok else "  [expected it to fail]"
        elif ours is None:
            good, verdict = r.ok, ""
        else:
            mine = _printed(ours)
            good = r.ok and mine == theirs
            verdict = "  [identical]" if good else f"  [layoutlab: {mine}]"
        if not good:
            expected = "" if ours is None else "a failure (dsl.FAILS)" if ours is FAILS else _printed(ours)
            failed.append(f"{label}: {snippet!r}\n    CuTe DSL: " + (r.value if r.ok else f"{r.status}: {r.message}")
                          + (f"\n    expected: {expected}" if expected else ""))
        if "\n" in theirs:   # a multi-line print (atoms, tiled MMAs): indented under its label
            print(f"{label}: CuTe DSL prints{verdict}\n  " + theirs.replace("\n", "\n  "))
        else:
            print(f"{label:{label_width}s} CuTe DSL: {theirs}{verdict}")
    if failed:
        raise DSLCheckError(f"the CuTe DSL {DSL_VERSION} comparison failed on {len(failed)} of {len(rows)} rows:\n"
                            + "\n".join(failed))
    return _Checked(results)


class _Checked(list):
    """``dsl_check``'s results: a list, shown as nothing when it ends a notebook cell (the lines are printed)."""

    def _ipython_display_(self):
        pass
