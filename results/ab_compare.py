"""Same-run A/B timing of kernel variants against cuBLAS (a results script for the GPU machine).

    python3 results/ab_compare.py OUT.json [ROUNDS]

``CASES`` lists (label, module, commit or "new", configured-launcher kwargs, dtype, (M, N, K), layout). "new"
is the module in this tree; a commit id loads ``$OLD_DIR/<module>_<commit>.py`` (``git show
<commit>:lib/layoutlab/kernels/<module>.py``), so every before/after ratio comes from one process.
Timing is that of ``layoutlab.bench.gemm`` (L2-cold rotating operand sets, 1-s windows of launches), but
each round times every variant of a point and cuBLAS in turn; a side's time is the median of its round
medians. Each variant's output is compared with cuBLAS's first (relative Frobenius error).
"""
import importlib
import importlib.util
import json
import math
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

#: run 13: sgemm_fast's staging copy with conflict-free transposing stores (a warp of 16 rows x 2 k-vectors
#: instead of 8 x 4) against 604a113, and 2 pipeline stages instead of 3, all in TN. Both much slower
#: (78 % and 59 % of cuBLAS vs 95 % at 4096^3): entry 19 of simt_ampere_notes.md.
#: run 14: is the 4096^3 gap the grid's last partial wave? 4224 x 4096 x 4096 is 33 x 32 = 1056 tiles,
#: exactly 4 waves of 264 CTAs (4096^3: 1024 tiles, 3.88 waves); 8192^3 (15.5 waves) for comparison.
#: Neither is: 4224 x 4096 and 4096 x 4224 read 95.5 / 95.7 % (4096^3: 95.5 %, 8192^3: 96.7 %).
#: run 15: cuBLAS' fp32 kernel here (ncu) is sm80_xmma ... tilesize128x128x8 stage3 warpsize2x2x1, 128
#: threads at 255 registers: 8 x 16 outputs per thread, two CTAs of 4 warps per SM. sgemm_fast with
#: n_values=16 (a scratch option, not kept) is the same shape (255 registers; NT spill-free, TN 4 spill
#: loads per k-tile). Got NT 88.4 / 89.1 % (bK 16 / 8) vs 92.0 %, TN 74.4 / 76.4 % vs 95.0 %: dropped.
#: The list below is run 14's, which runs on the committed code (runs 13 and 15 timed scratch variants).
CASES = [("sgemm_fast", "sgemm_fast", "new", {}, "float32", shape, lay)
         for shape, lay in (((4096, 4096, 4096), "TN"), ((4224, 4096, 4096), "TN"), ((4096, 4224, 4096), "TN"),
                            ((8192, 8192, 8192), "TN"), ((4224, 4096, 4096), "NT"))]


def module(name, commit, old_dir=None):
    """``layoutlab.kernels.<name>`` ("new"), or that file at ``commit`` from ``old_dir`` (default
    ``$OLD_DIR`` or ``.device``), its relative imports made absolute so that it loads beside the tree's."""
    if commit == "new":
        return importlib.import_module(f"layoutlab.kernels.{name}")
    old_dir = Path(old_dir or os.environ.get("OLD_DIR", ROOT / ".device"))
    src = (old_dir / f"{name}_{commit}.py").read_text()
    for rel, absolute in (("from ._common import", "from layoutlab.kernels._common import"),
                          ("from .. import", "from layoutlab import"), ("from ..", "from layoutlab."),
                          ("build=lambda p, vec:", "build=lambda p, vec, even=False:")):  # before `even`
        src = src.replace(rel, absolute)
    path = Path(f"/tmp/{name}_{commit}.py")      # a real file: the DSL reads the kernel's source
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(f"{name}_{commit}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(out, rounds=5):
    from layoutlab.bench.gemm import Operands, _check_timing, _rel_err, gpu_info, time_launches
    _check_timing(rounds, 1.0)        # refuses rounds < 1 before any GPU work, as the benchmark does
    import cupy
    info = gpu_info()
    points = {}
    for label, name, commit, kwargs, dtype, shape, layout in CASES:
        launcher = getattr(module(name, commit), f"{name}_configured")(**kwargs)
        points.setdefault((dtype, shape, layout), []).append((label, launcher))
    rows = []
    for (dtype, (m, n, k), layout), variants in points.items():
        set_bytes = (m * k + k * n + m * n) * (4 if dtype == "float32" else 2)
        sets = max(2, math.ceil(4 * info["l2_bytes"] / set_bytes))
        ops = Operands("cupy", dtype, m, n, k, sets, layout=layout)
        a, b, c = ops.sets[0]
        ops.cublas(a, b, c)
        ref = c.copy()
        errs = {}
        for label, launcher in variants:
            c[...] = float("nan")
            launcher(a, b, c)
            errs[label] = _rel_err(c, ref)
        times = {label: [] for label, _ in variants}
        times["cuBLAS"] = []
        for _ in range(rounds):
            for label, launcher in variants:
                times[label].append(time_launches([lambda s=s, f=launcher: f(*s) for s in ops.sets])[0])
            times["cuBLAS"].append(time_launches([lambda s=s: ops.cublas(*s) for s in ops.sets])[0])
        t_ref = statistics.median(times["cuBLAS"])
        for label, _ in variants:
            t = statistics.median(times[label])
            rows.append({"label": label, "dtype": dtype, "m": m, "n": n, "k": k, "layout": layout, "ms": t,
                         "cublas_ms": t_ref, "pct_cublas": 100 * t_ref / t, "rel_err_vs_cublas": errs[label],
                         "ms_rounds": times[label], "cublas_ms_rounds": times["cuBLAS"]})
            print(f"{label:22s} {dtype} {layout} {m}x{n}x{k}  {t:8.3f} ms  {100 * t_ref / t:6.1f} % of cuBLAS  "
                  f"err {errs[label]:.1e}  rounds " + " ".join(f"{100 * r / k:.1f}" for r, k in
                                                              zip(times["cuBLAS"], times[label])), flush=True)
        ops = None
        cupy.get_default_memory_pool().free_all_blocks()
        versions = {k: info.get(k) for k in ("driver_version", "cupy", "cuda_runtime", "nvidia-cutlass-dsl")}
        Path(out).write_text(json.dumps({"gpu": info["gpu"], "date": info["date"], "versions": versions,
                                         "info": info, "rows": rows}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
