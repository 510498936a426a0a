"""Run snippets in the real CuTe DSL (``cutlass.cute``), batched and crash-isolated.

This is the one shared way for tests and notebooks to ask the CuTe DSL what it computes.

* :data:`HAVE_DSL` — whether ``nvidia-cutlass-dsl`` is importable here; :data:`SKIP_REASON` says why not.
* :func:`dsl_eval` — evaluate many snippets (Python source producing a static layout / int / tuple inside a
  ``@cute.jit`` function) in ONE ``cute.compile`` in a subprocess, and return one :class:`DSLResult` each.
  A snippet that raises is reported as ``"error"``; one that kills the process (the DSL's native code can
  SIGFPE or abort) is reported as ``"crash"`` and the batch resumes after it in a fresh process.
* :func:`show_dsl` — for notebooks: print what the DSL prints for an expression next to our own result,
  or a visible note when the DSL is not available (e.g. on macOS).

Snippets see ``cute`` and ``cutlass`` (and whatever ``setup`` defines) and run at trace time inside
``@cute.jit``, where static layouts are computed exactly as in a kernel.  A snippet is an expression, or
several lines whose last line is the expression to report::

    >>> [r.value for r in dsl_eval(["cute.make_layout((4,6), stride=(6,1))",
    ...                             "a = cute.make_layout(8)\\ncute.size(a)"])]     # doctest: +SKIP
    ['(4,6):(6,1)', '8']

Values are formatted the CuTe way: layouts by ``str()``, Python tuples without spaces (``(1,4)``).
Nothing is cached on disk; results are memoised in this process, keyed by the DSL version.
"""

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

from .inttuple import format_tree

__all__ = [
    "HAVE_DSL",
    "SKIP_REASON",
    "DSL_VERSION",
    "DSLResult",
    "dsl_eval",
    "dsl_value",
    "show_dsl",
    "dsl_check",
]


def _detect():
    if importlib.util.find_spec("cutlass") is None:
        return False, "nvidia-cutlass-dsl is not installed (the CuTe DSL ships only for Linux x86-64/aarch64)", None
    try:
        version = importlib.metadata.version("nvidia-cutlass-dsl")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return True, "", version


HAVE_DSL, SKIP_REASON, DSL_VERSION = _detect()


@dataclass(frozen=True)
class DSLResult:
    """The outcome of one snippet.

    ``status`` is ``"ok"`` (``value`` holds the printed result, ``type`` its Python type name),
    ``"error"`` (the DSL raised; ``message`` has the exception), ``"crash"`` (the process died on this
    snippet; ``message`` says how) or ``"timeout"``.

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


_DRIVER = r"""
import sys, json, os, signal
_OUT = sys.stdout

def _fmt(r):
    if isinstance(r, (tuple, list)):
        return "(" + ",".join(_fmt(e) for e in r) + ")"
    return str(r)

def _line(i, status, value=None, typ=None, msg=""):
    return "@@LLR " + json.dumps([i, status, value, typ, msg]) + "\n"

import cutlass
import cutlass.cute as cute

{setup}

{funcs}

_FUNCS = [{names}]
_TIMEOUT = {timeout}

def _child(start, w):
    def drive():
        for k in range(start, len(_FUNCS)):
            signal.alarm(_TIMEOUT)  # per snippet: a slow batch is fine, a hanging snippet is not
            try:
                r = _FUNCS[k]()
                os.write(w, _line(k, "ok", _fmt(r), type(r).__name__).encode())
            except Exception as e:
                m = (type(e).__name__ + ": " + str(e)).strip()
                os.write(w, _line(k, "error", None, None, m[:2000]).encode())

    @cute.jit
    def main():
        drive()

    try:
        cute.compile(main)
        signal.alarm(0)
    except Exception as e:
        os.write(w, _line(-1, "compile_error", None, None, (type(e).__name__ + ": " + str(e))[:2000]).encode())

# A zygote: cutlass is imported once; each attempt runs in a forked child, so a native crash (SIGFPE,
# abort) costs one fork and the batch resumes right after the snippet that killed it.
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
    seen = set()
    buf = b""
    with os.fdopen(r, "rb") as rf:
        for raw in rf:
            line = raw.decode()
            k = json.loads(line[6:])[0]
            if k == -1:
                _OUT.write(line)
                seen = None
                break
            seen.add(k)
            _OUT.write(line)
    _, status = os.waitpid(pid, 0)
    if seen is None:
        break
    missing = [k for k in range(start, len(_FUNCS)) if k not in seen]
    if not missing:
        break
    bad = missing[0]
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        kind = "timeout" if sig == signal.SIGALRM else "crash"
        msg = "timed out after %d s" % _TIMEOUT if kind == "timeout" else "process killed by " + name
    else:
        kind, msg = "crash", "process exited with status %d" % os.WEXITSTATUS(status)
    _OUT.write(_line(bad, kind, None, None, msg))
    _OUT.flush()
    start = bad + 1
_OUT.write(_line(-2, "done"))
_OUT.flush()
"""


def _snippet_function(i: int, src: str) -> str:
    lines = textwrap.dedent(src).strip("\n").split("\n")
    body, last = lines[:-1], lines[-1]
    out = [f"def _s{i}():"]
    out += ["    " + ln for ln in body]
    out.append("    return (" + last + ")")
    return "\n".join(out)


def _syntax_error(src: str) -> str | None:
    try:
        compile(_snippet_function(0, src), "<snippet>", "exec")
    except SyntaxError as e:
        return f"SyntaxError in snippet: {e.msg} ({src!r})"
    return None


def _env(arch: str):
    env = dict(os.environ)
    env.setdefault("CUTE_DSL_ARCH", arch)
    env.setdefault("MPLBACKEND", "Agg")
    return env


def _run_batch(snips: list[tuple[int, str]], setup: str, arch: str, timeout: float, per_snippet_timeout: float):
    """Run snippets in one subprocess; return ({index: DSLResult}, how the process ended)."""
    funcs = "\n\n".join(_snippet_function(i, s) for i, s in snips)
    names = ", ".join(f"_s{i}" for i, _ in snips)
    # Snippet functions are named by their global index; the driver reports them by position.
    script = _DRIVER.format(setup=textwrap.dedent(setup), funcs=funcs, names=names, timeout=int(per_snippet_timeout))
    with tempfile.NamedTemporaryFile("w", suffix="_dsl_batch.py", delete=False) as fh:
        fh.write(script)
        path = fh.name
    try:
        proc = subprocess.run(
            [sys.executable, path], capture_output=True, text=True, timeout=timeout, env=_env(arch)
        )
        stdout, stderr, rc, ended = proc.stdout, proc.stderr, proc.returncode, "exit"
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        rc, ended = None, "timeout"
    finally:
        os.unlink(path)
    results = {}
    done = False
    compile_error = None
    for line in stdout.splitlines():
        if not line.startswith("@@LLR "):
            continue
        k, status, value, typ, msg = json.loads(line[6:])
        if k == -2:
            done = True
        elif k == -1:
            compile_error = msg
        else:
            results[snips[k][0]] = DSLResult(status, value, typ, msg)
    if ended == "timeout":
        how = f"timed out after {timeout:.0f} s"
    elif rc is not None and rc < 0:
        try:
            how = f"process killed by {signal.Signals(-rc).name}"
        except ValueError:
            how = f"process killed by signal {-rc}"
    elif not done:
        how = f"process exited with status {rc}"
    else:
        how = None
    tail = "\n".join(stderr.strip().splitlines()[-5:])
    return results, how, tail, compile_error


_MEMO: dict = {}


def dsl_eval(
    snippets: Sequence[str],
    setup: str = "",
    *,
    arch: str = "sm_90a",
    timeout: float = 600.0,
    child_timeout: float = 120.0,
) -> list[DSLResult]:
    """Evaluate each snippet inside one ``@cute.jit`` trace (one subprocess, one ``cute.compile``).

    Returns one :class:`DSLResult` per snippet, in order.  If the DSL is unavailable, every result is an
    ``"error"`` carrying :data:`SKIP_REASON` (callers normally skip before calling).
    The subprocess imports the DSL once and runs the batch in a forked child; a native crash or a hang
    (``child_timeout`` seconds for one snippet) is pinned on the first snippet without a result and the rest
    run again in a new child, so one bad input never hides the others and costs only a fork.

    >>> rs = dsl_eval(["cute.make_layout((4,6), stride=(6,1))", "cute.size(cute.make_layout((4,6)))", "1/0"])
    >>> [(r.status, r.value) for r in rs]
    [('ok', '(4,6):(6,1)'), ('ok', '24'), ('error', None)]
    """
    snippets = list(snippets)
    if not HAVE_DSL:
        return [DSLResult("error", message=f"CuTe DSL unavailable: {SKIP_REASON}") for _ in snippets]
    out: list[DSLResult | None] = [None] * len(snippets)
    todo = []
    for i, s in enumerate(snippets):
        key = (DSL_VERSION, arch, setup, s)
        if key in _MEMO:
            out[i] = _MEMO[key]
            continue
        err = _syntax_error(s)
        if err:
            out[i] = DSLResult("error", message=err)
        else:
            todo.append((i, s))
    if todo:
        # One subprocess: child crashes and hangs are already pinned on their snippets by the zygote.
        results, how, tail, compile_error = _run_batch(todo, setup, arch, timeout, child_timeout)
        for i, r in results.items():
            out[i] = r
        missing = [i for i, _ in todo if i not in results]
        if missing:
            if compile_error is not None:
                why, status = f"compile failed: {compile_error}", "error"
            elif how is not None and how.startswith("timed out"):
                why, status = f"DSL subprocess {how}", "timeout"
            else:
                # the zygote itself died: the DSL does not import here, or the setup code failed
                why, status = f"DSL subprocess failed ({how or 'ended early'}); stderr: {tail}", "error"
            for i in missing:
                out[i] = DSLResult(status, message=why)
    for i, s in enumerate(snippets):
        _MEMO[(DSL_VERSION, arch, setup, s)] = out[i]
    return out  # type: ignore[return-value]


def dsl_value(snippet: str, setup: str = "") -> str:
    """The DSL's printed value of one snippet; raises ``RuntimeError`` if it errors or crashes.

    >>> dsl_value("cute.size(cute.make_layout((4,6)))")
    '24'
    """
    (r,) = dsl_eval([snippet], setup)
    if not r.ok:
        raise RuntimeError(f"CuTe DSL {r.status} on {snippet!r}: {r.message}")
    return r.value  # type: ignore[return-value]


def show_dsl(snippet: str, ours=None, setup: str = "") -> DSLResult | None:
    """Notebook helper: print what the CuTe DSL gives for ``snippet`` and, if given, whether ``ours`` matches.

    Without the DSL (e.g. on macOS) it prints a visible note instead and returns ``None``.

    >>> from layoutlab import Layout
    >>> r = show_dsl("cute.make_layout((4,6), stride=(6,1))", ours=Layout((4,6),(6,1)))
    CuTe DSL : (4,6):(6,1)
    layoutlab: (4,6):(6,1)   [identical]
    """
    if not HAVE_DSL:
        print(f"(CuTe DSL check skipped: {SKIP_REASON})")
        return None
    (r,) = dsl_eval([snippet], setup)
    if r.ok:
        print(f"CuTe DSL : {r.value}")
    else:
        print(f"CuTe DSL {r.status}: {r.message.splitlines()[0] if r.message else ''}")
    if ours is not None:
        mine = ours if isinstance(ours, str) else format_tree(ours)
        verdict = "identical" if r.ok and r.value == mine else "DIFFERENT"
        print(f"layoutlab: {mine}   [{verdict}]")
    return r


def dsl_check(rows, setup: str = "", *, label_width: int = 16) -> list[DSLResult] | None:
    """Notebook helper: ask the DSL for each ``(label, snippet, ours)`` in one batch; print both; stop on a difference.

    ``ours`` is what ``layoutlab`` computed (compared by its printed form; ``None`` shows the DSL's answer
    alone, e.g. for an error the DSL raises). A disagreement raises ``AssertionError``: the book promises
    identical results, so a drift must stop the notebook rather than scroll past. Without the DSL, or with
    a DSL that cannot run here, it prints a visible note and returns ``None``.

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
    if not any(r.ok for r in results):   # installed but unusable here (e.g. a broken CUDA toolkit install)
        first = (results[0].message or "").splitlines()[:1] if results else []
        print(f"(CuTe DSL comparison skipped: the DSL is installed but failed: {first[0] if first else '?'})")
        return None
    differ = []
    for (label, _, ours), r in zip(rows, results):
        theirs = r.value if r.ok else f"<{r.status}: {r.message.splitlines()[0] if r.message else ''}>"
        mine = None if ours is None else (ours if isinstance(ours, str) else format_tree(ours))
        verdict = "" if mine is None else ("  [identical]" if mine == theirs else f"  [layoutlab: {mine}]")
        if mine is not None and mine != theirs:
            differ.append(label)
        if "\n" in theirs:   # a multi-line print (atoms, tiled MMAs): indented under its label
            print(f"{label}: CuTe DSL prints{verdict}\n  " + theirs.replace("\n", "\n  "))
        else:
            print(f"{label:{label_width}s} CuTe DSL: {theirs}{verdict}")
    assert not differ, f"layoutlab and the CuTe DSL {DSL_VERSION} disagree on: {differ}"
    return _Checked(results)


class _Checked(list):
    """``dsl_check``'s results: a list, shown as nothing when it ends a notebook cell (the lines are printed)."""

    def _ipython_display_(self):
        pass
