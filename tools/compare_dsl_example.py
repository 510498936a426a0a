"""Time a CuTe DSL example's GEMM kernel beside ours (``gemm_hopper_ws`` unless ``--ours`` names others) and
cuBLAS: one process, same data.

    python tools/compare_dsl_example.py PATH/dense_gemm_persistent.py [--ours gemm_hopper_pingpong,gemm_hopper_ws] \\
        [--shapes 8192x8192x8192,4096x4096x4096] [--dtypes float16,bfloat16] \\
        [--tile 128,256] [--cluster 2,1] [--swizzle 1] [--rounds 5] [--seconds 1.0] [--json OUT.json]
    python tools/compare_dsl_example.py PATH/dense_gemm_persistent.py --profile   # one launch each, for ncu

The example is the user's own file (NVIDIA/cutlass ``examples/python/CuTeDSL/hopper/``): it is imported as a
module from that path, its kernel class is built and compiled with ``cute.compile`` on the shapes asked for,
and its compiled kernel is timed **in the course's harness** (:mod:`layoutlab.bench.gemm`): the same
standard-normal operands (TN: A and B K-major, C row-major), L2-cold rotating operand sets, ``--rounds``
rounds in which the sides take turns (the first side rotates), ``--seconds`` of launches per side and
round, each side's time the median of its round medians. With several ``--ours`` kernels, the first is
"ours" in the ``ours_pct_*`` fields, and each gets its ``<name>_ms``, ``<name>_tflops``, ``<name>_pct_cublas``.
Each output is compared with cuBLAS's first (relative Frobenius error), so a wrong kernel is not timed. The DSL examples' own ``run()`` fills A and B
with small integers, on which the H100 clocks higher: this script never uses it.

Supported example classes: those in :data:`EXAMPLE_CLASSES` (the persistent warp-specialized Hopper GEMM,
``HopperWgmmaGemmPersistentKernel(acc_dtype, tile_shape_mn, cluster_shape_mn, swizzle_size,
raster_along_m)``, called as ``kernel(a, b, c, max_active_clusters, stream)`` on (M,K,L), (N,K,L), (M,N,L)
tensors). An example written for another DSL release may use names the installed DSL spells differently;
:func:`dsl_name_shims` adds the known ones (recorded in the JSON), never editing the example's file.
"""

import argparse
import hashlib
import importlib.util
import json
import math
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
#: class name -> how to build it from (tile, cluster, swizzle); all take an fp32 accumulator first.
EXAMPLE_CLASSES = {
    "HopperWgmmaGemmPersistentKernel": lambda mod, acc, tile, cluster, swizzle: getattr(
        mod, "HopperWgmmaGemmPersistentKernel")(acc, tile, cluster, swizzle, True),
}


def dsl_name_shims():
    """Names an example of another DSL release uses that the installed DSL lacks, added as aliases to
    what the installed one takes (``cute.arch.fence_proxy`` takes strings in 4.8). Returns the names added.
    Example: an example from the 4.2 era calls ``fence_proxy(cute.arch.ProxyKind.async_shared,
    space=cute.arch.SharedSpace.shared_cta)``; 4.8.1 spells it ``fence_proxy("async.shared", space="cta")``."""
    import cutlass.cute as cute
    added = []
    if not hasattr(cute.arch, "ProxyKind"):
        cute.arch.ProxyKind = SimpleNamespace(async_shared="async.shared", async_global="async.global",
                                              alias="alias", tensormap="tensormap", generic="generic")
        added.append("cute.arch.ProxyKind")
    if not hasattr(cute.arch, "SharedSpace"):
        cute.arch.SharedSpace = SimpleNamespace(shared_cta="cta", shared_cluster="cluster")
        added.append("cute.arch.SharedSpace")
    return added


def load_example(path):
    """Import the example file at ``path`` as a module (its ``__main__`` block does not run)."""
    path = Path(path).resolve()
    if not path.is_file():
        raise SystemExit(f"compare_dsl_example: no example file at {path}; pass the path of a CuTe DSL "
                         f"example such as examples/python/CuTeDSL/hopper/dense_gemm_persistent.py")
    name = "dsl_example_" + "".join(ch if ch.isalnum() else "_" for ch in path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module          # the DSL looks the kernel's class up through its module
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as err:
        raise SystemExit(f"compare_dsl_example: the example imports {err.name!r}, which is not installed "
                         f"here; if it is a helper module next to the example, put its folder on "
                         f"PYTHONPATH") from err
    found = [c for c in EXAMPLE_CLASSES if hasattr(module, c)]
    if not found:
        raise SystemExit(f"compare_dsl_example: {path.name} defines none of the supported kernel classes "
                         f"{sorted(EXAMPLE_CLASSES)}")
    return module, found[0]


def with_batch(x):
    """A (rows, cols) cupy/torch view as the (rows, cols, 1) tensor the DSL examples take (mode L last)."""
    rows, cols = x.shape
    if hasattr(x, "as_strided"):                                       # torch
        return x.as_strided((rows, cols, 1), (*x.stride(), rows * cols))
    from cupy.lib.stride_tricks import as_strided
    return as_strided(x, shape=(rows, cols, 1), strides=(*x.strides, rows * cols * x.itemsize))


def cute_view(x, leading_dim):
    from cutlass.cute.runtime import from_dlpack
    return from_dlpack(x, assumed_align=16).mark_layout_dynamic(leading_dim=leading_dim)


class ExampleSide:
    """The example's kernel compiled for one dtype and shape family, launched on (a, b, c) sets."""

    def __init__(self, module, class_name, tile, cluster, swizzle, sample, stream):
        import cutlass
        import cutlass.cute as cute
        self.kernel = EXAMPLE_CLASSES[class_name](module, cutlass.Float32, tile, cluster, swizzle)
        self.max_active_clusters = cutlass.utils.HardwareInfo().get_max_active_clusters(cluster[0] * cluster[1])
        self.stream = stream
        self.compiled = cute.compile(self.kernel, *self.tensors(*sample), self.max_active_clusters, stream)

    @staticmethod
    def tensors(a, b, c):
        """(M,K,1), (N,K,1), (M,N,1) CuTe views of A (M,K) K-major, B (K,N) K-major (so B^T is (N,K)
        row-major), C (M,N) row-major."""
        return cute_view(with_batch(a), 1), cute_view(with_batch(b.T), 1), cute_view(with_batch(c), 1)

    def launcher(self, a, b, c):
        args = self.tensors(a, b, c)
        return lambda: self.compiled(*args, self.stream)


def parse_shapes(text):
    try:
        return [tuple(int(v) for v in s.lower().split("x")) for s in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"shapes {text!r}: use MxNxK[,MxNxK...], e.g. 8192x8192x8192")


def parse_pair(text):
    try:
        m, n = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: use two comma-separated integers, e.g. 128,256")
    return m, n


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("example", help="path of the CuTe DSL example file (e.g. dense_gemm_persistent.py)")
    p.add_argument("--ours", default="gemm_hopper_ws",
                   help="comma-separated layoutlab kernels timed beside the example (the first is 'ours')")
    p.add_argument("--shapes", type=parse_shapes, default=parse_shapes("8192x8192x8192,4096x4096x4096"))
    p.add_argument("--dtypes", default="float16,bfloat16")
    p.add_argument("--tile", type=parse_pair, default=(128, 256), help="the example's CTA tile (M,N)")
    p.add_argument("--cluster", type=parse_pair, default=(2, 1), help="the example's cluster (M,N)")
    p.add_argument("--swizzle", type=int, default=1, help="the example's swizzle_size (its default: 1)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--json", default=None, help="output JSON (default results/dsl_example_<gpu>.json)")
    p.add_argument("--profile", action="store_true",
                   help="after compiling and checking, launch ours and the example once each for the first "
                        "shape and dtype inside cudaProfilerStart/Stop (run under ncu --profile-from-start off)")
    args = p.parse_args(argv)

    from layoutlab import gpu
    if not gpu.available():
        print(f"compare_dsl_example needs a CUDA GPU: {gpu.reason()}")
        return 1
    import cupy
    from layoutlab.bench.gemm import Operands, _check_timing, _cupy_has_bf16, _rel_err, _slug, gpu_info, time_launches
    from layoutlab.kernels._common import cu_stream
    from layoutlab import kernels

    _check_timing(args.rounds, args.seconds)
    ours = args.ours.split(",")
    prepares = {name: getattr(kernels.kernel_module(name), f"prepare_{name}") for name in ours}
    shims = dsl_name_shims()
    module, class_name = load_example(args.example)
    info = gpu_info()
    bf16_lib = "cupy" if _cupy_has_bf16() else "torch"
    text = Path(args.example).read_bytes()
    record = {"gpu": info["gpu"], "date": info["date"],
              "versions": {k: info.get(k) for k in ("driver_version", "cupy", "cuda_runtime",
                                                   "nvidia-cutlass-dsl", "torch")},
              "info": info, "ours": ours,
              "example": {"file": Path(args.example).name, "sha256": hashlib.sha256(text).hexdigest(),
                          "class": class_name, "tile_mn": list(args.tile), "cluster_mn": list(args.cluster),
                          "swizzle_size": args.swizzle, "raster_along_m": True, "dsl_name_shims": shims},
              "method": "alternating rounds (first side rotates), median of round medians; L2-cold rotating "
                        "standard-normal operand sets; TN, C row-major; cuBLAS = cupy.matmul (torch.matmul "
                        "for bf16 when cupy has no bfloat16)",
              "rows": []}
    out = Path(args.json) if args.json else REPO / "results" / f"dsl_example_{_slug(info['gpu'])}.json"
    for dtype in args.dtypes.split(","):
        for (m, n, k) in args.shapes:
            lib = bf16_lib if dtype == "bfloat16" else "cupy"
            sets = max(2, math.ceil(4 * info["l2_bytes"] / (2 * (m * k + k * n + m * n))))
            ops = Operands(lib, dtype, m, n, k, sets)
            a, b, c = ops.sets[0]
            stream = cu_stream(a)
            example = ExampleSide(module, class_name, args.tile, args.cluster, args.swizzle, (a, b, c), stream)
            sides = {name: [prepares[name](*s)[1] for s in ops.sets] for name in ours}
            sides.update(dsl_example=[example.launcher(*s) for s in ops.sets],
                         cublas=[(lambda s=s: ops.cublas(*s)) for s in ops.sets])
            ops.cublas(a, b, c)
            ref = c.clone() if hasattr(c, "clone") else c.copy()
            errs = {}
            for name in ours + ["dsl_example"]:
                c[...] = float("nan")
                sides[name][0]()
                errs[name] = _rel_err(c, ref)
            bad = {kname: e for kname, e in errs.items() if not e < 1e-2}
            if bad:
                raise SystemExit(f"{dtype} {m}x{n}x{k}: output differs from cuBLAS: {bad}; not timed")
            if args.profile:
                for launch in sides.values():                  # warm-up outside the profiled range
                    launch[0]()
                cupy.cuda.runtime.deviceSynchronize()
                cupy.cuda.profiler.start()
                for name in ours + ["dsl_example"]:
                    print("profiling", name, dtype, f"{m}x{n}x{k}", flush=True)
                    sides[name][0]()
                cupy.cuda.runtime.deviceSynchronize()
                cupy.cuda.profiler.stop()
                return 0
            names = list(sides)
            times = {name: [] for name in names}
            for r in range(args.rounds):
                for name in names[r % len(names):] + names[:r % len(names)]:
                    times[name].append(time_launches(sides[name], target_s=args.seconds)[0])
            med = {name: statistics.median(t) for name, t in times.items()}
            flops = 2.0 * m * n * k
            row = {"dtype": dtype, "m": m, "n": n, "k": k, "operand_sets": sets,
                   "cublas_via": "torch.matmul" if lib == "torch" else "cupy.matmul",
                   "rel_err_vs_cublas": errs}
            for name in names:
                row[f"{name}_ms"] = med[name]
                row[f"{name}_tflops"] = flops / med[name] / 1e9
                row[f"{name}_ms_rounds"] = times[name]
            for name in ours:
                row[f"{name}_pct_cublas"] = 100 * med["cublas"] / med[name]
            row["ours_pct_cublas"] = 100 * med["cublas"] / med[ours[0]]
            row["example_pct_cublas"] = 100 * med["cublas"] / med["dsl_example"]
            row["ours_pct_example"] = 100 * med["dsl_example"] / med[ours[0]]
            record["rows"].append(row)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(record, indent=1))
            print(f"{dtype:8s} {m:>5}x{n:>5}x{k:>5}  ours {row[ours[0] + '_tflops']:6.1f}  example "
                  f"{row['dsl_example_tflops']:6.1f}  cuBLAS {row['cublas_tflops']:6.1f} TF/s   ours "
                  f"{row['ours_pct_cublas']:6.1f} %  example {row['example_pct_cublas']:6.1f} % of cuBLAS  "
                  f"(ours/example {row['ours_pct_example']:.1f} %)", flush=True)
            ops = example = sides = a = b = c = ref = None
            cupy.get_default_memory_pool().free_all_blocks()
    print(format_table(record))
    print(f"wrote {out}")
    return 0


def format_table(record):
    """The comparison table of a record written by :func:`main`."""
    ex = record["example"]
    ours = record.get("ours", ["gemm_hopper_ws"])[0]
    lines = [f"{record['gpu']}, {record['date']}: {ex['file']} ({ex['class']}, tile {ex['tile_mn']}, cluster "
             f"{ex['cluster_mn']}, swizzle {ex['swizzle_size']}) vs {ours} vs cuBLAS",
             f"{'dtype':10s}{'M x N x K':>20s}{'ours':>9s}{'example':>9s}{'cuBLAS':>9s}   TFLOP/s"
             f"{'ours %':>9s}{'ex. %':>9s}  of cuBLAS"]
    for r in record["rows"]:
        shape = f"{r['m']}x{r['n']}x{r['k']}"
        lines.append(f"{r['dtype']:10s}{shape:>20s}{r[ours + '_tflops']:9.1f}"
                     f"{r['dsl_example_tflops']:9.1f}{r['cublas_tflops']:9.1f}          "
                     f"{r['ours_pct_cublas']:9.1f}{r['example_pct_cublas']:9.1f}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
