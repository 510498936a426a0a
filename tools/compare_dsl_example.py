"""Time a CuTe DSL example's GEMM kernel beside ours and the vendor library: one process, same data.

    python tools/compare_dsl_example.py PATH/dense_gemm_persistent.py [--ours gemm_hopper_pingpong,gemm_hopper_ws] \\
        [--shapes 8192x8192x8192,4096x4096x4096] [--dtypes float16,bfloat16] \\
        [--tile 128,256] [--cluster 2,1] [--swizzle 1] [--rounds 5] [--seconds 1.0] [--json OUT.json]
    python tools/compare_dsl_example.py PATH/dense_gemm_fp8_2xacc.py --tile 128,128 128,256 --cluster 1,2 2,2
    python tools/compare_dsl_example.py PATH/dense_gemm_persistent.py --profile   # one launch each, for ncu
    CUTE_DSL_ARCH=sm_90a python tools/compare_dsl_example.py PATH/EXAMPLE.py --compile-only   # no GPU needed

The example is the user's own file (NVIDIA/cutlass ``examples/python/CuTeDSL/.../hopper/``): it is imported as
a module from that path, its kernel class is built and compiled with ``cute.compile`` on the shapes asked for,
and its compiled kernel is timed **in the course's harness** (:mod:`layoutlab.bench.gemm`): the same
standard-normal operands (TN: A and B K-major, C row-major), L2-cold rotating operand sets, ``--rounds``
rounds in which the sides take turns (the first side rotates), ``--seconds`` of launches per side and
round, each side's time the median of its round medians. With several ``--ours`` kernels, the first is
"ours" in the ``ours_pct_*`` fields, and each gets its ``<name>_ms``, ``<name>_tflops``, ``<name>_pct_cublas``.
Several ``--tile``/``--cluster`` pairs time every combination of the example as a side of its own
(``dsl_example_<label>_*``); ``dsl_example_*`` is the fastest of them at that shape. Each output is compared
with the library's first (relative Frobenius error), so a wrong kernel is not timed. The DSL examples' own
``run()`` fills A and B with small integers, on which the H100 clocks higher: this script never uses it.

Two families, told apart by the example's class (:data:`EXAMPLE_CLASSES`):

- ``dense`` (``dense_gemm_persistent.py``, ``HopperWgmmaGemmPersistentKernel(acc_dtype, tile_shape_mn,
  cluster_shape_mn, swizzle_size, raster_along_m)``, called as ``kernel(a, b, c, max_active_clusters, stream)``
  on (M,K,L), (N,K,L), (M,N,L) tensors): fp16/bf16 against ``gemm_hopper_ws`` and cuBLAS (``cupy.matmul``, or
  ``torch.matmul`` for bf16).
- ``fp8`` (``dense_gemm_fp8_2xacc.py``, ``HopperFP8WarpSpecialized2xAccGemmKernel(tile_shape_mn,
  cluster_shape_mn, swizzle_size, raster_along_m, mma_promotion_interval)``, called as ``kernel(a, b, d,
  scale_a, scale_b, max_active_clusters, stream)`` with one-element fp32 scale tensors): e4m3 x e4m3 with
  per-tensor scales 1.0, bf16 out, against ``gemm_hopper_fp8`` and cuBLASLt (``torch._scaled_mm``, default
  accumulation; its ``use_fast_accum`` as one more side), on :mod:`layoutlab.bench.gemm`'s fp8 operand sets.
  Both kernels promote wgmma's partial sums into the fp32 accumulator every 4 k-blocks of 32.

An example written for another DSL release may use names the installed DSL spells differently;
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
#: wgmma k-blocks of 32 between promotions of the fp8 partial sums: the fp8 example's default and ours.
FP8_PROMOTION_INTERVAL = 4


def _build_dense(cls, tile, cluster, swizzle):
    import cutlass
    return cls(cutlass.Float32, tile, cluster, swizzle, True)


def _build_fp8(cls, tile, cluster, swizzle):
    return cls(tile, cluster, swizzle, True, FP8_PROMOTION_INTERVAL)


#: class name -> (family, how to build it from (tile, cluster, swizzle)); both rasterise along M.
EXAMPLE_CLASSES = {"HopperWgmmaGemmPersistentKernel": ("dense", _build_dense),
                   "HopperFP8WarpSpecialized2xAccGemmKernel": ("fp8", _build_fp8)}
#: the --ours default of each family.
DEFAULT_OURS = {"dense": "gemm_hopper_ws", "fp8": "gemm_hopper_fp8"}


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
    """A runtime CuTe (rows, cols, 1) view of ``x``; a torch e4m3 tensor travels through DLPack as uint8 and gets
    its element type back (as :mod:`layoutlab.kernels.hopper_fp8` does)."""
    import cutlass
    from cutlass.cute.runtime import from_dlpack
    fp8 = str(getattr(x, "dtype", "")) == "torch.float8_e4m3fn"
    if fp8:
        import torch
        x = x.view(torch.uint8)
    t = from_dlpack(with_batch(x), assumed_align=16)
    if fp8:
        t.element_type = cutlass.Float8E4M3FN
    return t.mark_layout_dynamic(leading_dim=leading_dim)


def fake_operands(family, dtype):
    """Fake (M,K,1), (N,K,1), (M,N,1) K-/K-/N-major tensors with symbolic sizes (and the fp8 family's two scale
    tensors): what ``--compile-only`` compiles on, no GPU needed."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor
    ab = cutlass.Float8E4M3FN if family == "fp8" else {"float16": cutlass.Float16,
                                                        "bfloat16": cutlass.BFloat16}[dtype]
    out = cutlass.BFloat16 if family == "fp8" else ab

    def mat(dt, rows, cols, tag):
        ld = cute.sym_int64(divisibility=128 // dt.width, symbol=f"ld{tag}")
        return make_fake_tensor(dt, (rows, cols, 1), (ld, 1, cute.sym_int64(symbol=f"l{tag}")), assumed_align=16)

    m, n, k = (cute.sym_int32(symbol=s) for s in "MNK")
    tensors = (mat(ab, m, k, "a"), mat(ab, n, k, "b"), mat(out, m, n, "c"))
    if family == "fp8":
        tensors += tuple(make_fake_tensor(cutlass.Float32, (1,), (1,), assumed_align=4) for _ in range(2))
    return tensors


class ExampleSide:
    """The example's kernel compiled for one configuration, dtype and shape family, launched on (a, b, c) sets.
    The fp8 family also passes the two per-tensor scales (one-element fp32 tensors holding 1.0)."""

    def __init__(self, cls, class_name, tile, cluster, swizzle, sample, stream):
        import cutlass
        import cutlass.cute as cute
        family, build = EXAMPLE_CLASSES[class_name]
        self.kernel = build(cls, tile, cluster, swizzle)
        self.max_active_clusters = cutlass.utils.HardwareInfo().get_max_active_clusters(cluster[0] * cluster[1])
        self.stream = stream
        self.scales = ()
        if family == "fp8":
            import torch
            from cutlass.cute.runtime import from_dlpack
            self._ones = [torch.ones(1, dtype=torch.float32, device=sample[0].device) for _ in range(2)]
            self.scales = tuple(from_dlpack(t, assumed_align=4) for t in self._ones)
        self.compiled = cute.compile(self.kernel, *self.tensors(*sample), *self.scales, self.max_active_clusters,
                                     stream)

    @staticmethod
    def tensors(a, b, c):
        """(M,K,1), (N,K,1), (M,N,1) CuTe views of A (M,K) K-major, B (K,N) K-major (so B^T is (N,K)
        row-major), C (M,N) row-major."""
        return cute_view(a, 1), cute_view(b.T, 1), cute_view(c, 1)

    def launcher(self, a, b, c):
        args = self.tensors(a, b, c)
        return lambda: self.compiled(*args, *self.scales, self.stream)


def compile_only(cls, class_name, configs, swizzle, dtypes):
    """Compile every configuration (and dtype) on fake tensors: with ``CUTE_DSL_ARCH=sm_90a`` on a CPU."""
    import time
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_stream
    family, build = EXAMPLE_CLASSES[class_name]
    for dtype in dtypes:
        for label, tile, cluster in configs:
            t0 = time.perf_counter()
            # max_active_clusters only sizes the persistent grid: an H100/H200's 132 SMs stand in for the GPU
            cute.compile(build(cls, tile, cluster, swizzle), *fake_operands(family, dtype),
                         132 // (cluster[0] * cluster[1]), make_fake_stream())
            print(f"compiled {class_name} {dtype} {label} in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


def problem(family, info, dtype, m, n, k, bf16_lib):
    """``(sets, library sides, how the library was called)``: L2-cold operand sets (A, B, C) and the vendor
    library's launches on them; the first library side ("cublas") is the reference every output is checked
    against and the base of every ``*_pct_cublas``."""
    from layoutlab.bench.gemm import Operands, _fp8_sets
    if family == "fp8":
        import torch
        one = torch.ones((), device="cuda")
        sets = _fp8_sets(info, m, n, k)
        sides = {name: [(lambda s=s, fast=fast: torch._scaled_mm(s[0], s[1], one, one, out_dtype=torch.bfloat16,
                                                                  use_fast_accum=fast, out=s[2])) for s in sets]
                 for name, fast in (("cublas", False), ("cublaslt_fast_accum", True))}
        return sets, sides, ("torch._scaled_mm (cuBLASLt): e4m3 x e4m3, per-tensor scales 1.0, bf16 out, default "
                             "accumulation; cublaslt_fast_accum: the same with use_fast_accum=True")
    lib = bf16_lib if dtype == "bfloat16" else "cupy"
    ops = Operands(lib, dtype, m, n, k, max(2, math.ceil(4 * info["l2_bytes"] / (2 * (m * k + k * n + m * n)))))
    return ops.sets, {"cublas": [(lambda s=s: ops.cublas(*s)) for s in ops.sets]}, f"{lib}.matmul"


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
    p.add_argument("--ours", default=None, help="comma-separated layoutlab kernels timed beside the example (the "
                   f"first is 'ours'; default by the example's family: {DEFAULT_OURS})")
    p.add_argument("--shapes", type=parse_shapes, default=parse_shapes("8192x8192x8192,4096x4096x4096"))
    p.add_argument("--dtypes", default="float16,bfloat16", help="the dense family's dtypes (fp8: e4m3 in, bf16 out)")
    p.add_argument("--tile", type=parse_pair, nargs="+", default=[(128, 256)],
                   help="the example's CTA tile(s) (M,N); every tile x cluster pair is timed")
    p.add_argument("--cluster", type=parse_pair, nargs="+", default=[(2, 1)], help="the example's cluster(s) (M,N)")
    p.add_argument("--swizzle", type=int, default=1, help="the example's swizzle_size (its default: 1)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--json", default=None, help="output JSON (default results/dsl_example_<gpu>.json)")
    p.add_argument("--source", default=None,
                   help="where the example file came from (URL at a commit), recorded in the JSON")
    p.add_argument("--compile-only", action="store_true",
                   help="only cute.compile each configuration on fake tensors (CUTE_DSL_ARCH=sm_90a: no GPU)")
    p.add_argument("--profile", action="store_true",
                   help="after compiling and checking, launch ours and the example once each for the first "
                        "shape and dtype inside cudaProfilerStart/Stop (run under ncu --profile-from-start off)")
    args = p.parse_args(argv)
    configs = [(f"{t[0]}x{t[1]}_c{c[0]}x{c[1]}", t, c) for t in args.tile for c in args.cluster]
    shims = dsl_name_shims()
    module, class_name = load_example(args.example)
    family = EXAMPLE_CLASSES[class_name][0]
    cls = getattr(module, class_name)
    dtypes = ["float8_e4m3fn"] if family == "fp8" else args.dtypes.split(",")
    if args.compile_only:
        return compile_only(cls, class_name, configs, args.swizzle, dtypes)

    from layoutlab import gpu
    if not gpu.available():
        print(f"compare_dsl_example needs a CUDA GPU: {gpu.reason()}")
        return 1
    import cupy
    from layoutlab.bench.gemm import _check_timing, _cupy_has_bf16, _rel_err, _slug, gpu_info, time_launches
    from layoutlab.kernels._common import cu_stream
    from layoutlab import kernels

    _check_timing(args.rounds, args.seconds)
    ours = (args.ours or DEFAULT_OURS[family]).split(",")
    prepares = {name: getattr(kernels.kernel_module(name), f"prepare_{name}") for name in ours}
    info = gpu_info()
    bf16_lib = "cupy" if _cupy_has_bf16() else "torch"
    text = Path(args.example).read_bytes()
    example = {"file": Path(args.example).name, "sha256": hashlib.sha256(text).hexdigest(), "class": class_name,
               "family": family, "configs": [{"label": lb, "tile_mn": list(t), "cluster_mn": list(c)}
                                             for lb, t, c in configs],
               "swizzle_size": args.swizzle, "raster_along_m": True, "dsl_name_shims": shims}
    if args.source:
        example["source"] = args.source
    if len(configs) == 1:
        example.update(tile_mn=list(configs[0][1]), cluster_mn=list(configs[0][2]))
    if family == "fp8":
        example["mma_promotion_interval"] = FP8_PROMOTION_INTERVAL
        example["differences"] = (
            "none in what is computed: both take e4m3 A (M,K) and B (N,K) K-major, accumulate in fp32 with a "
            f"promotion every {FP8_PROMOTION_INTERVAL} k-blocks of 32 and write bf16 D = scale_a * scale_b * A B^T "
            "(scales 1.0; the example reads them from one-element fp32 tensors, ours and cuBLASLt take numbers/"
            "scalars). The example documents Float16/Float32/Float8E4M3FN outputs; BFloat16 (the course's and "
            "cuBLASLt's here) goes through the same epilogue conversion.")
    record = {"gpu": info["gpu"], "date": info["date"],
              "versions": {k: info.get(k) for k in ("driver_version", "cupy", "cuda_runtime",
                                                   "nvidia-cutlass-dsl", "torch")},
              "info": info, "ours": ours, "example": example, "command": " ".join(sys.argv),
              "method": "alternating rounds (first side rotates), median of round medians; L2-cold rotating "
                        "standard-normal operand sets; TN, C row-major; each output checked against the "
                        "library's (cuBLAS: cupy.matmul, or torch.matmul for bf16 when cupy has no bfloat16; "
                        "fp8: cuBLASLt through torch._scaled_mm) before timing",
              "rows": []}
    out = Path(args.json) if args.json else REPO / "results" / f"dsl_example_{_slug(info['gpu'])}.json"
    for dtype in dtypes:
        for (m, n, k) in args.shapes:
            sets, lib_sides, lib_via = problem(family, info, dtype, m, n, k, bf16_lib)
            a, b, c = sets[0]
            stream = cu_stream(a)
            sides = {name: [prepares[name](*s)[1] for s in sets] for name in ours}
            for label, tile, cluster in configs:
                side = ExampleSide(cls, class_name, tile, cluster, args.swizzle, (a, b, c), stream)
                sides[f"dsl_example_{label}"] = [side.launcher(*s) for s in sets]
            sides.update(lib_sides)
            lib_sides["cublas"][0]()
            ref = c.clone() if hasattr(c, "clone") else c.copy()
            errs = {}
            for name in [s for s in sides if s != "cublas"]:
                c[...] = float("nan")
                sides[name][0]()
                errs[name] = _rel_err(c, ref)
            bad = {kname: e for kname, e in errs.items() if not e < 1e-2}
            if bad:
                raise SystemExit(f"{dtype} {m}x{n}x{k}: output differs from {lib_via}: {bad}; not timed")
            examples = [f"dsl_example_{label}" for label, _, _ in configs]
            if args.profile:
                for launch in sides.values():                  # warm-up outside the profiled range
                    launch[0]()
                cupy.cuda.runtime.deviceSynchronize()
                cupy.cuda.profiler.start()
                for name in ours + examples:
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
            best = min(examples, key=med.get)
            flops = 2.0 * m * n * k
            row = {"dtype": dtype, "m": m, "n": n, "k": k, "operand_sets": len(sets), "cublas_via": lib_via,
                   "rel_err_vs_cublas": errs, "dsl_example_config": best[len("dsl_example_"):]}
            for name in names:
                row[f"{name}_ms"] = med[name]
                row[f"{name}_tflops"] = flops / med[name] / 1e9
                row[f"{name}_ms_rounds"] = times[name]
            for suffix in ("ms", "tflops", "ms_rounds"):                  # the fastest configuration
                row[f"dsl_example_{suffix}"] = row[f"{best}_{suffix}"]
            for name in ours + examples + [s for s in lib_sides if s != "cublas"]:
                row[f"{name}_pct_cublas"] = 100 * med["cublas"] / med[name]
            row["ours_pct_cublas"] = 100 * med["cublas"] / med[ours[0]]
            row["example_pct_cublas"] = 100 * med["cublas"] / med[best]
            row["ours_pct_example"] = 100 * med[best] / med[ours[0]]
            record["rows"].append(row)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(record, indent=1))
            print(f"{dtype:8s} {m:>5}x{n:>5}x{k:>5}  ours {row[ours[0] + '_tflops']:6.1f}  example "
                  f"{row['dsl_example_tflops']:6.1f} ({row['dsl_example_config']})  library "
                  f"{row['cublas_tflops']:6.1f} TF/s   ours {row['ours_pct_cublas']:6.1f} %  example "
                  f"{row['example_pct_cublas']:6.1f} % of the library  (ours/example {row['ours_pct_example']:.1f} %)",
                  flush=True)
            sets = sides = lib_sides = side = a = b = c = ref = None
            cupy.get_default_memory_pool().free_all_blocks()
    print(format_table(record))
    print(f"wrote {out}")
    return 0


def format_table(record):
    """The comparison table of a record written by :func:`main`."""
    ex = record["example"]
    ours = record.get("ours", ["gemm_hopper_ws"])[0]
    configs = ", ".join(c["label"] for c in ex.get("configs", [])) or \
        f"tile {ex['tile_mn']}, cluster {ex['cluster_mn']}"
    lines = [f"{record['gpu']}, {record['date']}: {ex['file']} ({ex['class']}, {configs}, swizzle "
             f"{ex['swizzle_size']}) vs {ours} vs the library",
             f"{'dtype':14s}{'M x N x K':>20s}{'ours':>9s}{'example':>9s}{'library':>9s}   TFLOP/s"
             f"{'ours %':>9s}{'ex. %':>9s}  of the library   example config"]
    for r in record["rows"]:
        shape = f"{r['m']}x{r['n']}x{r['k']}"
        lines.append(f"{r['dtype']:14s}{shape:>20s}{r[ours + '_tflops']:9.1f}"
                     f"{r['dsl_example_tflops']:9.1f}{r['cublas_tflops']:9.1f}          "
                     f"{r['ours_pct_cublas']:9.1f}{r['example_pct_cublas']:9.1f}                   "
                     f"{r.get('dsl_example_config', '')}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
