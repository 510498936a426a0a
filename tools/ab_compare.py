"""Same-run A/B timing of kernel variants against cuBLAS, on the GPU machine.

    python tools/ab_compare.py OUT.json [ROUNDS]
    python tools/ab_compare.py --extract COMMIT [OLD_DIR]   # here, where the git history is

``CASES``: (label, module, commit or "new", launcher kwargs, dtype, (M, N, K), layout). A commit's package, extracted
into ``$OLD_DIR/<commit>/`` (default ``.device/``), is imported as ``layoutlab_<commit>``, so every ratio comes from
one process. Timing is :mod:`layoutlab.bench.gemm`'s, every variant of a point and cuBLAS in turn each round.
"""
import importlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Run 14's list (entry 20 of results/simt_ampere_notes.md).
CASES = [("sgemm_fast", "sgemm_fast", "new", {}, "float32", shape, lay)
         for shape, lay in (((4096, 4096, 4096), "TN"), ((4224, 4096, 4096), "TN"), ((4096, 4224, 4096), "TN"),
                            ((8192, 8192, 8192), "TN"), ((4224, 4096, 4096), "NT"))]


def _old_dir(old_dir):
    return Path(old_dir or os.environ.get("OLD_DIR", REPO / ".device"))


def extract_commit(commit, old_dir=None):
    """Write ``lib/layoutlab`` of ``commit`` to ``<old_dir>/<commit>/`` (``git archive``, where the history is);
    returns the package folder.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as old:
    ...     root = extract_commit("HEAD", old)
    ...     root.relative_to(old).as_posix(), (root / "cute" / "layout.py").is_file()
    ('HEAD/lib/layoutlab', True)
    """
    dest = _old_dir(old_dir) / commit
    dest.mkdir(parents=True, exist_ok=True)
    tar = subprocess.run(["git", "-C", str(REPO), "archive", commit, "lib/layoutlab"], capture_output=True,
                         check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest / "lib" / "layoutlab"


def module(name, commit, old_dir=None):
    """The module defining kernel ``name`` in this tree ("new"), or in ``commit``'s :func:`extract_commit` package.

    >>> module("sgemm_fast", "new").__name__, module("gemm_hopper_ws", "new").__name__
    ('layoutlab.kernels.simt_fast', 'layoutlab.kernels.hopper_ws')
    >>> module("sgemm_fast", "0000000", "/nonexistent")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no extracted package at /nonexistent/0000000/lib/layoutlab: run `python tools/ab_compare.py --extract 0000000` where the git history is
    """
    if commit == "new":
        from layoutlab.kernels import kernel_module
        return kernel_module(name)
    package = f"layoutlab_{commit}"
    if package not in sys.modules:
        root = _old_dir(old_dir) / commit / "lib" / "layoutlab"
        if not (root / "__init__.py").is_file():
            raise FileNotFoundError(f"no extracted package at {root}: run `python tools/ab_compare.py "
                                    f"--extract {commit}` where the git history is")
        spec = importlib.util.spec_from_file_location(package, root / "__init__.py",
                                                      submodule_search_locations=[str(root)])
        sys.modules[package] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[package])
    old_kernels = importlib.import_module(f"{package}.kernels")
    if hasattr(old_kernels, "kernel_module"):          # kernels in modules named for their hardware path
        return old_kernels.kernel_module(name)
    return importlib.import_module(f"{package}.kernels.{name}")      # one module per kernel name


def main(out, rounds=5):
    from layoutlab.bench.gemm import Operands, _check_timing, _operand_sets, _rel_err, gpu_info, time_launches
    _check_timing(rounds, 1.0)        # refuses rounds < 1 before any GPU work, as the benchmark does
    import cupy
    info = gpu_info()
    points = {}
    for label, name, commit, kwargs, dtype, shape, layout in CASES:
        launcher = getattr(module(name, commit), f"{name}_configured")(**kwargs)
        points.setdefault((dtype, shape, layout), []).append((label, launcher))
    rows = []
    for (dtype, (m, n, k), layout), variants in points.items():
        sets = _operand_sets(info, m, n, k, 4 if dtype == "float32" else 2)
        ops = Operands("cupy", dtype, m, n, k, sets, layout=layout)
        a, b, c = ops.sets[0]
        ops.cublas(a, b, c)
        ref = c.copy()
        errs = {}
        for label, launcher in variants:
            c[...] = float("nan")
            launcher(a, b, c)
            errs[label] = _rel_err(c, ref)
        sides = variants + [("cuBLAS", ops.cublas)]
        times = {label: [] for label, _ in sides}
        for _ in range(rounds):
            for label, launcher in sides:
                times[label].append(time_launches([lambda s=s, f=launcher: f(*s) for s in ops.sets])[0])
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
    if sys.argv[1] == "--extract":
        print(extract_commit(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
    else:
        main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
