"""The GEMM ladder: the kernels of :mod:`layoutlab.kernels` as rungs, each adding one idea to the one before.

A rung is data: the public kernel, its file, the class (or class factory) that holds its code, the methods that
carry its idea, the idea in one line, the previous rung, and where its measurements live in ``results/``.
:func:`rung_diff` computes, from the files themselves, the unified diff between two rungs' code, so the chapter
never pastes code. Adding a rung is one line in :data:`LADDER`::

    Rung("gemm_next", "hopper_next", "make_next_class.NextGemm", ("__call__", "kernel"),
         "what it adds", prev="gemm_hopper_ws", adds=("the_key_call",), record="gemm_ladder_h100")

``parts=None`` shows (and diffs) the whole file: the right choice for a file made from the previous rung's file.
Reading the source needs neither the CuTe DSL nor a GPU (the files are parsed, not imported). The listings leave
out the pipeline-timeline stamps (``if cutlass.const_expr(self.cfg.timeline): ...``), a build option that is off
by default and compiles to nothing then.
"""

import ast
import difflib
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from ..errors import LayoutError

__all__ = ["Rung", "LADDER", "rung", "rung_source", "rung_diff", "rung_row", "rung_checks", "cublas_spread",
           "rung_report", "rung_sections", "Listing"]

_HERE = Path(__file__).resolve().parent
_TIMELINE_IF = "cutlass.const_expr(self.cfg.timeline)"


@dataclass(frozen=True)
class Rung:
    """One rung. ``name``: the public kernel (``layoutlab.kernels.<name>``); ``module``: its file
    ``kernels/<module>.py``; ``kernel``: the dotted path of the class that holds its code inside the file (a class
    built by a factory function is ``factory.Class``); ``parts``: the methods of that class that carry the idea
    (``None``: the whole file); ``idea``: what it adds, in one line; ``prev``: the rung it builds on; ``adds``:
    names its diff against ``prev`` must add (tests check them); ``bench``: the benchmark row (dtype, layout,
    (M, N, K)) in results record ``record``; ``checks``: the pytest log (under ``results/``) of its GPU tests
    (``log:name``: the summary line of ``log`` that names ``name``, for a log of several test files);
    ``branch``: ``prev`` is a rung further down than the one listed before it (the faster of two rungs).

    >>> r = rung("gemm_ampere")
    >>> r.prev, r.module, r.bench
    ('sgemm_fast', 'ampere', ('float16', 'TN', (8192, 8192, 8192)))
    """

    name: str
    module: str
    kernel: str
    parts: tuple
    idea: str
    prev: str = None
    adds: tuple = ()
    bench: tuple = ("bfloat16", "TN", (8192, 8192, 8192))
    record: str = "gemm_h100_bench"
    checks: str = "refactor_check_h100/hopper_tests.log"
    branch: bool = False

    @property
    def path(self):
        return _HERE / f"{self.module}.py"


_SIMT_CHECKS = "refactor_check_h100/gpu_tests.log"

#: The rungs, bottom to top. Each ``prev`` is the rung before it (checked by :func:`rung`).
LADDER = (
    Rung("sgemm_simple", "simt_simple", "SgemmSimple", ("run", "kernel"),
         "the CuTe tutorial's SIMT GEMM: one element per copy, two barriers per 8-deep k-tile",
         bench=("float32", "NT", (4096, 4096, 4096)), checks=_SIMT_CHECKS),
    Rung("sgemm_fast", "simt_fast", "SgemmFast", ("g2s_copy", "run", "kernel"),
         "16-byte cp.async into a 3-stage ring, 128-bit shared loads, 8x8 register blocking",
         prev="sgemm_simple", adds=("cpasync.CopyG2SOp", "cp_async_wait_group", "value_permutation"),
         bench=("float32", "NT", (4096, 4096, 4096)), checks=_SIMT_CHECKS),
    Rung("gemm_ampere", "ampere", "GemmAmpere", ("smem_layout", "run", "kernel"),
         "tensor cores: swizzled shared memory, ldmatrix.x4, mma.sync m16n8k16",
         prev="sgemm_fast", adds=("make_swizzle", "MmaF16BF16Op", "ldmatrix_op"),
         bench=("float16", "TN", (8192, 8192, 8192)), checks=_SIMT_CHECKS),
    Rung("gemm_hopper", "hopper", "make_hopper_gemm_class.HopperGemm", ("__call__", "kernel", "_load_stage"),
         "TMA loads counted on mbarriers, wgmma from shared memory, a TMA-store epilogue",
         prev="gemm_ampere", adds=("make_tiled_tma_atom", "PipelineTmaAsync", "warpgroup.fence")),
    Rung("gemm_hopper_specialized", "hopper_specialized", "make_hopper_specialized_class.HopperGemmSpecialized",
         ("__call__", "kernel"), "warp specialization: a producer warp issues the TMA loads, two consumer "
         "warpgroups the MMAs and the epilogue, setmaxnreg moves registers to them",
         prev="gemm_hopper", adds=("setmaxregister_decrease", "setmaxregister_increase", "if wg == 0:"),
         record="gemm_ladder_h200", checks="gemm_ladder_h200/alltests.txt:test_kernels_specialized.py"),
    Rung("gemm_hopper_ws", "hopper_ws", "make_hopper_ws_class.HopperGemmWs", ("__call__", "kernel"),
         "persistent tiles (one cluster per two SMs walks many tiles; its producer loads the next tile during the "
         "epilogue) and a 2x1 cluster multicasting B", prev="gemm_hopper_specialized",
         adds=("while cluster_tile < num_cluster_tiles:", "CopyBulkTensorTileG2SMulticastOp", "persistent_clusters")),
    Rung("gemm_hopper_pingpong", "hopper_pingpong", "make_hopper_pingpong_class.HopperGemmPingpong",
         ("__call__", "kernel"), "ping-pong consumers: each warpgroup a whole 64x256 tile, in an order (a named "
         "barrier) that overlaps one's epilogue with the other's MMAs", prev="gemm_hopper_ws",
         adds=("barrier_arrive", "ORDER_BARRIER", "consume.advance(k_tiles)"), record="gemm_ladder_h100",
         checks="gemm_ladder_h100/pingpong_tests.log"),
    # built on gemm_hopper_ws, the faster of the two rungs below it (a branch: see hopper_streamk's docstring)
    Rung("gemm_hopper_streamk", "hopper_streamk", "make_hopper_streamk_class.HopperGemmStreamK",
         ("__call__", "kernel", "_unit", "_fixup"), "the last wave: whole waves as before and, where a rule says "
         "it pays, the tail tiles' K loops split over all clusters (stream-K), each tile's pieces summed in an fp32 "
         "workspace by the CTA that completes it", prev="gemm_hopper_ws", branch=True,
         adds=("sk_iters: cutlass.Int32", "self._unit(u, sched)", "stream_k_owner", "fence_acq_rel_gpu",
               "atomic_add"),
         record="gemm_ladder_h200", checks="gemm_ladder_h200/alltests.txt:test_kernels_streamk.py"),
    Rung("gemm_hopper_fp8", "hopper_fp8", "make_hopper_fp8_class.HopperGemmFp8",
         ("__call__", "kernel", "_consume_overlapped", "_run", "_issue", "_promote_part", "_pin", "_promote"),
         "fp8: e4m3 wgmma partials, double-buffered and promoted into an fp32 accumulator while the next k-tile's "
         "MMAs run, scaled per 1x128 (A) and 128x128 (B) block", prev="gemm_hopper_ws", branch=True,
         adds=("mma_first.set(warpgroup.Field.ACCUMULATE, False)", "self._promote_part(acc, parts[(u - 1) % 2]",
               'llvm.inline_asm(T.f32(), [part[i].ir_value()], "", "=f,0"'),
         bench=("float8_e4m3fn", "TN", (8192, 8192, 8192)), record="gemm_fp8_h200",
         checks="gemm_fp8_h200/fp8_tests.log"),
)


def _check_ladder(ladder, op):
    """:data:`LADDER` for None; refuses what is not a list of :class:`Rung`."""
    if ladder is None:
        return LADDER
    if not isinstance(ladder, (list, tuple)) or not all(isinstance(r, Rung) for r in ladder):
        raise LayoutError(f"{op}: ladder must be a list of Rung (default: LADDER), got {str(ladder)[:60]}")
    return ladder


def rung(name, ladder=None):
    """The rung called ``name``; refuses an unknown name and a ladder whose ``prev`` links are not in order.

    >>> rung("gemm_hopper").idea
    'TMA loads counted on mbarriers, wgmma from shared memory, a TMA-store epilogue'
    """
    ladder = _check_ladder(ladder, "rung")
    if not isinstance(name, str):
        raise LayoutError(f"rung: name is a kernel's name, e.g. 'gemm_hopper', got {type(name).__name__}")
    for i, (below, above) in enumerate(zip(ladder, ladder[1:])):
        # a rung builds on the one before it, or on a rung further down when that one measured faster (a branch)
        if above.prev != below.name and not (above.branch and above.prev in [r.name for r in ladder[:i]]):
            raise LayoutError(f"ladder: rung {above.name!r} says prev={above.prev!r}, but the rung below it is "
                              f"{below.name!r}; list the rungs bottom to top, each naming the one before")
    for r in ladder:
        if r.name == name:
            return r
    raise LayoutError(f"ladder: no rung {name!r}; the rungs are {[r.name for r in ladder]}")


def _find(tree, dotted, where):
    """The ast node at ``dotted`` (``Class.method`` or ``factory.Class.method``) among ``tree``'s statements."""
    node = tree
    for name in dotted.split("."):
        found = [n for n in node.body if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == name]
        if not found:
            have = [n.name for n in node.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))]
            raise LayoutError(f"ladder: {where} has no {dotted!r} (no {name!r} among {have})")
        node = found[0]
    return node


def _instrumentation_lines(tree):
    """Line numbers (1-based, of the file) inside ``tree`` that belong to the timeline instrumentation."""
    drop = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and ast.unparse(n.test) == _TIMELINE_IF and not n.orelse:
            drop.update(range(n.lineno, n.end_lineno + 1))
        elif isinstance(n, ast.Assign) and "tlc" in {t.id for t in ast.walk(n.targets[0]) if isinstance(t, ast.Name)}:
            drop.update(range(n.lineno, n.end_lineno + 1))      # the recorders' setup: None when off
    return drop


def rung_source(r):
    """The code of rung ``r`` (a :class:`Rung` or its name) as shown in the chapter: the whole file when
    ``parts`` is None, else each named method of its kernel class, dedented, in the order given; the timeline
    stamps left out.

    >>> src = rung_source("sgemm_simple")
    >>> src.splitlines()[0], "cute.arch.sync_threads()" in src
    ('# simt_simple.py: SgemmSimple.run', True)
    """
    r = r if isinstance(r, Rung) else rung(r)
    if not r.path.exists():
        raise LayoutError(f"ladder: rung {r.name!r} names module {r.module!r}, but {r.path} does not exist")
    text = r.path.read_text()
    if r.parts is None:
        return text
    tree, lines = ast.parse(text), text.splitlines()
    out = []
    for part in r.parts:
        node = _find(tree, f"{r.kernel}.{part}", f"{r.module}.py")
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        drop = _instrumentation_lines(node)
        body = [lines[i - 1] for i in range(first, node.end_lineno + 1) if i not in drop]
        out.append(f"# {r.module}.py: {r.kernel.split('.')[-1]}.{part}\n" + textwrap.dedent("\n".join(body)))
    return "\n\n".join(out) + "\n"


def rung_diff(a, b, context=3):
    """The unified diff from rung ``a``'s code to rung ``b``'s (names or :class:`Rung`), computed from the files:
    whole files when ``b`` shows its whole file (``parts=None``), else ``a``'s parts against ``b``'s.

    >>> d = rung_diff("sgemm_simple", "sgemm_fast")
    >>> d.splitlines()[0], "+        cute.arch.cp_async_commit_group()" in d
    ('--- sgemm_simple (simt_simple.py)', True)
    """
    a, b = (x if isinstance(x, Rung) else rung(x) for x in (a, b))
    if b.parts is None:
        old, new = a.path.read_text(), b.path.read_text()
    else:
        old, new = rung_source(a), rung_source(b)
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), f"{a.name} ({a.module}.py)",
                                f"{b.name} ({b.module}.py)", n=context, lineterm="")
    return "\n".join(diff) + "\n"


class Listing(str):
    """A code listing (a str) that a notebook shows as a fenced block.

    >>> print(Listing("+x = 1", "diff")._repr_markdown_())
    ```diff
    +x = 1
    ```
    """

    def __new__(cls, text, lang="python"):
        obj = super().__new__(cls, text)
        obj.lang = lang
        return obj

    def _repr_markdown_(self):
        return f"```{self.lang}\n{self.rstrip()}\n```"


def _load(record):
    from .. import gpu
    return record if isinstance(record, dict) else gpu.load_result(record)


def rung_row(r, record=None):
    """The benchmark row of rung ``r`` (its ``bench`` point) in ``record`` (default: the rung's own ``record`` in
    ``results/``): a dict with ``tflops``, ``cublas_tflops``, ``pct_cublas``, ``rel_err_vs_cublas``, ... as
    ``python -m layoutlab.bench.gemm`` writes it, plus the record's ``gpu`` and ``date``.

    >>> row = rung_row("gemm_hopper_ws")
    >>> row["kernel"], (row["m"], row["n"], row["k"]), round(row["pct_cublas"], 1)
    ('gemm_hopper_ws', (8192, 8192, 8192), 102.3)
    """
    r = r if isinstance(r, Rung) else rung(r)
    rec = _load(record if record is not None else r.record)
    dtype, layout, mnk = r.bench
    for row in rec.get("rows", []):
        if (row["kernel"], row["dtype"], row.get("layout", "TN"), (row["m"], row["n"], row["k"])) == (
                r.name, dtype, layout, tuple(mnk)):
            return {**row, "gpu": rec.get("gpu"), "date": rec.get("date")}
    m, n, k = mnk
    raise LayoutError(f"rung_row: the record {r.record!r} has no row for {r.name} {dtype} {layout} {m}x{n}x{k} "
                      f"(run python -m layoutlab.bench.gemm on an H100 to measure it)")


def rung_checks(r):
    """The GPU test run of rung ``r``: ``{"log", "passed", "failed"}`` read from the summary line of its pytest log
    in ``results/`` (the tests compare every kernel with float64 on many shapes and layouts).

    >>> rung_checks("gemm_hopper")["failed"]
    0
    >>> rung_checks("gemm_hopper_specialized")["passed"]        # its line of the one-run log of every kernel file
    22
    """
    r = r if isinstance(r, Rung) else rung(r)
    from .. import gpu
    log, _, name = r.checks.partition(":")
    path = gpu.RESULTS_DIR / log
    if not path.exists():
        raise LayoutError(f"rung_checks: rung {r.name!r} names the test log {log!r}, not in {gpu.RESULTS_DIR}")
    summary = [line for line in path.read_text().splitlines() if re.search(r"\d+ passed", line) and name in line]
    if not summary:
        raise LayoutError(f"rung_checks: {r.checks} has no pytest summary line ('N passed ...')")
    counts = dict((word, int(n)) for n, word in re.findall(r"(\d+) (passed|failed)", summary[-1]))
    return {"log": r.checks, "passed": counts.get("passed", 0), "failed": counts.get("failed", 0)}


def cublas_spread(r, record=None):
    """cuBLAS's TFLOP/s at rung ``r``'s benchmark point in every row of the record that measured it (each kernel's
    row times cuBLAS again, alternating with the kernel): ``(lowest, highest)``. The spread is the run-to-run noise
    of the denominator of every "% of cuBLAS".

    >>> lo, hi = cublas_spread("gemm_hopper_ws")
    >>> round(lo, 1), round(hi, 1)
    (666.1, 673.1)
    """
    r = r if isinstance(r, Rung) else rung(r)
    rec = _load(record if record is not None else r.record)
    dtype, layout, mnk = r.bench
    vals = [row["cublas_tflops"] for row in rec.get("rows", []) if (row["dtype"], row.get("layout", "TN"),
            (row["m"], row["n"], row["k"])) == (dtype, layout, tuple(mnk))]
    if not vals:
        rung_row(r, rec)                            # raises, naming the missing row
    return min(vals), max(vals)


def rung_report(r, record=None):
    """What the record says about rung ``r``, in a few lines: where and when it was measured, its TFLOP/s and % of
    cuBLAS at its benchmark point (with cuBLAS's spread over the record's runs of that point, when there are
    several; and the rung below at the same point in the same run, when the rung below's own numbers come from
    another record), its error against cuBLAS, and its GPU test run (:func:`rung_checks`).

    >>> print(rung_report("sgemm_fast").splitlines()[1])
    float32 NT 4096x4096x4096: 47.7 TFLOP/s = 92.1 % of cuBLAS (51.8 TFLOP/s in the same run)
    """
    r = r if isinstance(r, Rung) else rung(r)
    row = rung_row(r, record)
    lo, hi = cublas_spread(r, record)
    dtype, layout, (m, n, k) = r.bench
    name = r.record if record is None or isinstance(record, str) else "the given record"
    lines = [f"recorded on {row['gpu']}, {str(row['date'])[:10]} (results/{name}.json)",
             f"{dtype} {layout} {m}x{n}x{k}: {row['tflops']:.1f} TFLOP/s = {row['pct_cublas']:.1f} % of cuBLAS "
             f"({row['cublas_tflops']:.1f} TFLOP/s in the same run)"]
    if hi > 1.001 * lo:
        lines.append(f"cuBLAS at this point over the record's runs: {lo:.1f}-{hi:.1f} TFLOP/s "
                     f"({100 * (hi / lo - 1):.1f} % apart); against the fastest: {100 * row['tflops'] / hi:.1f} %")
    if r.prev is not None and record is None and rung(r.prev).record != r.record:
        below = rung(r.prev)
        try:                                          # the rung below, same point, same run: the fair comparison
            b = rung_row(Rung(below.name, below.module, below.kernel, below.parts, below.idea, bench=r.bench,
                              record=r.record))
            lines.append(f"in the same run the rung below, {below.name}: {b['tflops']:.1f} TFLOP/s = "
                         f"{b['pct_cublas']:.1f} % of cuBLAS")
        except LayoutError:
            pass
    checks = rung_checks(r)
    err = row["rel_err_vs_cublas"]
    same = "bit-identical to cuBLAS's result" if err == 0 else f"{err:.1e} relative error vs cuBLAS"
    lines.append(f"correct: {same} here; GPU tests vs float64: "
                 f"{checks['passed']} passed, {checks['failed']} failed (results/{checks['log']})")
    return "\n".join(lines)


class _Markdown(str):
    def _repr_markdown_(self):
        return str(self)


def rung_sections(first, ladder=None):
    """Markdown for every rung from number ``first`` (1-based) to the top: heading, idea, the record
    (:func:`rung_report`) and the diff against the rung below. Chapter 9 shows the rungs it was written with one by
    one and this for any added since, so a new rung is one line of :data:`LADDER`.

    >>> print(rung_sections(5).splitlines()[0])
    #### Rung 5 — `gemm_hopper_specialized`: warp specialization: a producer warp issues the TMA loads, two consumer warpgroups the MMAs and the epilogue, setmaxnreg moves registers to them
    >>> rung_sections(len(LADDER) + 1)
    '(no rung above this one in this version of layoutlab)'
    """
    ladder = _check_ladder(ladder, "rung_sections")
    if not isinstance(first, int) or isinstance(first, bool) or first < 1:
        raise LayoutError(f"rung_sections: first is a rung number >= 1, got {first!r}")
    parts = []
    for i, r in enumerate(ladder[first - 1:], first):
        report = "\n".join(f"    {line}" for line in rung_report(r).splitlines())
        parts.append(f"#### Rung {i} — `{r.name}`: {r.idea}\n\nBuilds on `{r.prev}`; its record:\n\n{report}\n\n"
                     f"{Listing(rung_diff(r.prev, r), 'diff')._repr_markdown_()}")
    return _Markdown("\n\n".join(parts) if parts else "(no rung above this one in this version of layoutlab)")
