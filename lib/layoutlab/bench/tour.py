"""Chapter 9's measured tour of the GEMM: the benchmark row of each step, the roofline that places them, the raked
thread partitions of the tutorial GEMM, and the PTX each step compiles to. Works on a CPU: the rows come from
``results/gemm_h100_bench.json`` (``python -m layoutlab.bench.gemm``), or from :func:`live_record` on a GPU.
"""

import json
import numbers
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from ..errors import LayoutError

__all__ = ["TourStep", "TOUR", "tour_rows", "live_record", "arithmetic_intensity", "tile_intensity",
           "roofline_tflops", "H100_HBM_TBS", "partition_tv", "compile_tour", "PTX_MARKERS"]

#: H100 SXM5 HBM3 bandwidth, TB/s (NVIDIA's H100 datasheet; the recordings' "H100 80GB HBM3"): a peak.
H100_HBM_TBS = 3.35


@dataclass(frozen=True)
class TourStep:
    """One step of the tour: a kernel of :mod:`layoutlab.kernels` and the benchmark row that measures it; ``tile``
    the CTA tile (bM, bN), ``b_share`` how many CTAs share (multicast) one B tile, ``change`` what this step adds.

    >>> TOUR[0].kernel, TOUR[0].dtype, TOUR[0].layout, TOUR[0].mnk
    ('sgemm_simple', 'float32', 'NT', (4096, 4096, 4096))
    """

    kernel: str
    dtype: str
    layout: str
    mnk: tuple
    tile: tuple
    elem_bytes: int
    change: str
    b_share: int = 1


def _step(name, tile, b_share=1):
    """The tour step of ladder rung ``name``: its benchmark point and idea from :data:`~layoutlab.kernels.ladder.LADDER`
    (one place for both), with the CTA tile and B sharing the roofline needs."""
    from ..kernels.ladder import rung
    r = rung(name)
    dtype, layout, mnk = r.bench
    return TourStep(name, dtype, layout, tuple(mnk), tile, 4 if dtype == "float32" else 2, r.idea, b_share)


TOUR = (
    _step("sgemm_simple", (128, 128)),
    _step("sgemm_fast", (128, 128)),
    _step("gemm_ampere", (128, 128)),
    _step("gemm_hopper", (128, 256)),
    _step("gemm_hopper_ws", (128, 256), b_share=2),
)


def _find_row(record, step):
    for r in record.get("rows", []):
        if (r["kernel"], r["dtype"], r.get("layout", "TN"), (r["m"], r["n"], r["k"])) == (
                step.kernel, step.dtype, step.layout, tuple(step.mnk)):
            return r
    have = sorted({(r["kernel"], r["dtype"], r.get("layout", "TN"), f"{r['m']}x{r['n']}x{r['k']}")
                   for r in record.get("rows", []) if r["kernel"] == step.kernel})
    m, n, k = step.mnk
    raise LayoutError(f"tour_rows: the record has no row for {step.kernel} {step.dtype} {step.layout} "
                      f"{m}x{n}x{k}; its rows for {step.kernel}: {have or 'none'} (run python -m "
                      f"layoutlab.bench.gemm, or live_record(), to measure it)")


def tour_rows(record, steps=TOUR):
    """The benchmark row of every step (in order) with the step's ``change``, ``tile`` and ``step`` number added;
    refuses (:class:`LayoutError`) a step the record lacks.

    >>> from layoutlab import gpu
    >>> rows = tour_rows(gpu.load_result("gemm_h100_bench"))
    >>> [r["kernel"] for r in rows]
    ['sgemm_simple', 'sgemm_fast', 'gemm_ampere', 'gemm_hopper', 'gemm_hopper_ws']
    """
    if not isinstance(record, dict) or not isinstance(record.get("rows", []), list) or not all(
            isinstance(r, dict) for r in record.get("rows", [])):
        raise LayoutError(f"tour_rows: record must be a benchmark record (a dict with a list of rows), e.g. "
                          f"gpu.load_result('gemm_h100_bench'); got {type(record).__name__}")
    if not isinstance(steps, (list, tuple)) or not all(isinstance(s, TourStep) for s in steps):
        raise LayoutError(f"tour_rows: steps must be a list of TourStep (default: TOUR), got {str(steps)[:60]}")
    return [{**_find_row(record, step), "step": i, "change": step.change, "tile": step.tile}
            for i, step in enumerate(steps, 1)]


def live_record(steps=TOUR, rounds=3, seconds=0.25):
    """Measure the tour's rows on the GPU (:func:`layoutlab.bench.gemm.bench_point`, ``rounds`` of ``seconds``):
    a record like ``results/gemm_h100_bench.json``."""
    import cupy

    from . import gemm
    info = gemm.gpu_info()
    bf16_lib = "cupy" if gemm._cupy_has_bf16() else "torch"
    rows = []
    for step in steps:
        m, n, k = step.mnk
        lib = bf16_lib if step.dtype == "bfloat16" else "cupy"
        sets = gemm._operand_sets(info, m, n, k, step.elem_bytes)
        ops = gemm.Operands(lib, step.dtype, m, n, k, sets, layout=step.layout)
        t_k, t_c, err, runs = gemm.bench_point(step.kernel, ops, rounds, seconds)
        ops = None
        cupy.get_default_memory_pool().free_all_blocks()
        rows.append(gemm._row(step.kernel, step.dtype, step.layout, (m, n, k), t_k, t_c, err, runs, sets))
    return gemm._record(info, rows, [f"live_record: {rounds} rounds of {seconds} s per point"])


def _check_positive(op, **values):
    for name, v in values.items():
        if not isinstance(v, int) or v < 1:
            raise LayoutError(f"{op}: {name}={v!r} must be a positive integer")


def arithmetic_intensity(m, n, k, elem_bytes, out_bytes=None):
    """FLOP per byte of DRAM traffic if A and B are read once and C written once (the least traffic any kernel can
    have): ``2mnk / ((mk + nk) e + mn e_out)``. bf16 8192^3: ``2*8192^3 / (3 * 8192^2 * 2)`` = 2730.7 FLOP/byte.

    >>> round(arithmetic_intensity(4096, 4096, 4096, 2), 1)      # fp16, each operand moved once
    1365.3
    """
    _check_positive("arithmetic_intensity", m=m, n=n, k=k, elem_bytes=elem_bytes)
    out_bytes = elem_bytes if out_bytes is None else out_bytes
    return 2.0 * m * n * k / ((m * k + n * k) * elem_bytes + m * n * out_bytes)


def tile_intensity(bm, bn, elem_bytes, b_share=1):
    """FLOP per byte a CTA loads in its k-loop (what DRAM sees if L2 holds no tile): ``2 bm bn`` FLOP per k over
    ``(bm + bn / b_share) e`` bytes per k (``b_share`` CTAs of a cluster split one multicast B tile).

    >>> round(tile_intensity(128, 256, 2), 1)
    85.3
    """
    _check_positive("tile_intensity", bm=bm, bn=bn, elem_bytes=elem_bytes, b_share=b_share)
    if bn % b_share:
        raise LayoutError(f"tile_intensity: b_share={b_share} must divide bn={bn} (each CTA loads bn/b_share rows)")
    return 2.0 * bm * bn / ((bm + bn // b_share) * elem_bytes)


def roofline_tflops(intensity, peak_tflops, bandwidth_tbs=H100_HBM_TBS):
    """The roofline: ``min(peak, intensity * bandwidth)`` in TFLOP/s (intensity in FLOP/byte, bandwidth in TB/s).

    >>> roofline_tflops(100, 989), roofline_tflops(1000, 989)    # bandwidth-bound, then compute-bound
    (335.0, 989)
    """
    if not all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in (intensity, peak_tflops,
                                                                                 bandwidth_tbs)):
        raise LayoutError(f"roofline_tflops: intensity (FLOP/byte), peak (TFLOP/s) and bandwidth (TB/s) are "
                          f"numbers, got {intensity!r}, {peak_tflops!r}, {bandwidth_tbs!r}")
    if intensity <= 0 or peak_tflops <= 0 or bandwidth_tbs <= 0:
        raise LayoutError(f"roofline_tflops: intensity, peak and bandwidth must be positive, got "
                          f"{intensity!r}, {peak_tflops!r}, {bandwidth_tbs!r}")
    return min(peak_tflops, intensity * bandwidth_tbs)


def partition_tv(tile_shape, thr_layout, proj=None):
    """The (thread, value) -> offset layout of ``local_partition`` over a column-major tile (thread ``t``'s value
    ``v`` is element ``tv((t, v))``): ``zipped_divide`` by the thread shape, the thread mode read through its right
    inverse, checked thread by thread against :func:`~layoutlab.local_partition`; ``proj`` as there.

    >>> from layoutlab import Layout
    >>> print(partition_tv((128, 8), Layout((32, 8))))
    ((32,8),(4,1)):((1,128),(32,0))
    """
    from ..cute.algebra import composition, right_inverse, zipped_divide
    from ..cute.tensor import local_partition, make_tensor
    from ..cute.layout import make_layout
    from ..cute.inttuple import product_each
    from ..cute.tensor import get_flat_coord
    from ..cute.layout import Layout
    if not isinstance(thr_layout, Layout):
        raise LayoutError(f"partition_tv: thr_layout must be a CuTe Layout of the threads, e.g. Layout((32, 8)), "
                          f"got {type(thr_layout).__name__}")
    if not (isinstance(tile_shape, tuple) and tile_shape and all(
            isinstance(e, int) and not isinstance(e, bool) and e > 0 for e in tile_shape)):
        raise LayoutError(f"partition_tv: tile_shape must be a tuple of positive ints, e.g. (128, 8), got "
                          f"{tile_shape!r}")
    if proj is not None and not isinstance(proj, tuple):
        raise LayoutError(f"partition_tv: proj is a tuple with one entry per thread mode (None drops it), got "
                          f"{type(proj).__name__}")
    tile = make_layout(tuple(tile_shape))
    if proj is None:
        z = zipped_divide(tile, product_each(thr_layout.shape))
        thr = composition(z[0], right_inverse(thr_layout))
    else:
        if len(proj) != len(thr_layout.shape):
            raise LayoutError(f"partition_tv: projection {proj!r} must have one entry per mode of {thr_layout}")
        keep = [i for i, p in enumerate(proj) if p is not None]
        shapes = tuple(thr_layout[i].shape for i in keep)
        z = zipped_divide(tile, product_each(shapes if len(shapes) > 1 else shapes[0]))
        # thread t sits at get_flat_coord(thr_layout, t); keep the projected modes' coordinates
        kept = [tuple(get_flat_coord(thr_layout, t)[i] for i in keep) for t in range(thr_layout.size())]
        thr = _layout_from_offsets([z[0](kc if len(kc) > 1 else kc[0]) for kc in kept])
    tv = make_layout(thr, z[1])
    base = make_tensor(0, tile)
    for t in range(thr_layout.size()):
        part = local_partition(base, thr_layout, t, proj=proj if proj is not None else 1)
        got = [part.iterator + part.layout(i) for i in range(part.layout.size())]
        want = [tv((t, v)) for v in range(z[1].size())]
        if got != want:                                      # the algebra and local_partition must agree
            raise LayoutError(f"partition_tv: thread {t}: local_partition gives offsets {got[:8]}..., the "
                              f"algebra {want[:8]}...; the thread layout {thr_layout} is not supported")
    return tv


def _layout_from_offsets(offs):
    """A compact layout reproducing ``offs`` (index -> offset), split at every change of stride; exact or refused."""
    from ..cute.layout import Layout
    shape, stride, size, n = [], [], 1, len(offs)
    while size < n:
        # the next mode: its stride is offs[size] - offs[0]; its extent the largest run of that step
        d, ext = offs[size] - offs[0], 1
        while size * (ext + 1) <= n and all(offs[j + size * ext] == offs[j] + d * ext for j in range(size)):
            ext += 1
        if ext == 1 or n % (size * ext):
            raise LayoutError(f"partition_tv: the thread offsets {offs[:8]}... are not a layout")
        shape.append(ext)
        stride.append(d)
        size *= ext
    lay = Layout(tuple(shape), tuple(stride)) if len(shape) > 1 else Layout(shape[0], stride[0])
    if [lay(j) for j in range(n)] != list(offs):
        raise LayoutError(f"partition_tv: the thread offsets {offs[:8]}... are not a layout")
    return lay


#: PTX instruction stems that mark what each step adds (counted in the PTX the DSL keeps).
PTX_MARKERS = ("ld.global.f32", "fma.rn.f32", "bar.sync", "cp.async.cg.shared.global", "cp.async.ca.shared.global",
               "ld.shared.v4", "ldmatrix", "mma.sync", "cp.async.bulk.tensor", "multicast::cluster",
               "mbarrier.try_wait", "wgmma.mma_async", "stmatrix", "setmaxnreg")

_COMPILE_SCRIPT = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import numpy as np
    from layoutlab.kernels._common import GemmProblem
    dump = Path(sys.argv[1])
    out = {}
    def take(name, t0):
        text = "\\n".join(p.read_text() for p in sorted(dump.glob("*.ptx")))
        for p in dump.glob("*.ptx"):
            p.unlink()
        out[name] = {"seconds": round(time.time() - t0, 2), "ptx": text}
    from layoutlab.kernels import kernel_module
    for name, dt, vec in (("sgemm_simple", "float32", 1), ("sgemm_fast", "float32", 4), ("gemm_ampere", "float16", 8)):
        t0 = time.time()
        launcher = kernel_module(name)._launcher
        am, bm = ("M", "N") if dt == "float32" else ("K", "K")
        launcher.compile(GemmProblem(1, 1, 1, np.dtype(dt), am, bm, "N"), vec)
        take(name, t0)
    from layoutlab.kernels.hopper import compile_hopper_gemm
    from layoutlab.kernels.hopper_ws import compile_hopper_gemm_ws
    t0 = time.time(); compile_hopper_gemm("bfloat16", "K", "K", "N"); take("gemm_hopper", t0)
    t0 = time.time(); compile_hopper_gemm_ws("bfloat16", "K", "K", "N"); take("gemm_hopper_ws", t0)
    print(json.dumps(out))
""")


def compile_tour(arch="sm_90a", timeout=600, keep_ptx=False):
    """Compile the tour's five kernels for ``arch`` on the CPU, in a subprocess (the DSL reads ``CUTE_DSL_ARCH``
    when imported), and count :data:`PTX_MARKERS`: ``{kernel: {"seconds", "counts": {marker: n}}}`` (+ ``"ptx"``
    with ``keep_ptx``). SIMT kernels NT, tensor-core ones TN, as the tour measures them (about 10 s):

    >>> tour = compile_tour()
    >>> markers = ("ld.shared.v4", "ldmatrix", "mma.sync", "wgmma.mma_async", "multicast::cluster", "setmaxnreg")
    >>> for name, r in tour.items():
    ...     print(name, [m for m in markers if r["counts"][m]])
    sgemm_simple []
    sgemm_fast ['ld.shared.v4']
    gemm_ampere ['ldmatrix', 'mma.sync']
    gemm_hopper ['wgmma.mma_async']
    gemm_hopper_ws ['wgmma.mma_async', 'multicast::cluster', 'setmaxnreg']
    """
    import tempfile
    lib = str(Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory() as dump:
        env = dict(os.environ, CUTE_DSL_ARCH=arch, CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=dump,
                   PYTHONPATH=lib + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT, dump], env=env, capture_output=True,
                              text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"compile_tour: compiling for {arch} failed:\n{proc.stderr[-3000:]}")
    raw = json.loads(proc.stdout.strip().splitlines()[-1])
    result = {}
    for name, r in raw.items():
        flat = " ".join(r["ptx"].split())
        entry = {"seconds": r["seconds"], "counts": {m: flat.count(m) for m in PTX_MARKERS}}
        if keep_ptx:
            entry["ptx"] = r["ptx"]
        result[name] = entry
    return result
