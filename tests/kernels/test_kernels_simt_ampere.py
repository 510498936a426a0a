"""sgemm_simple, sgemm_fast, gemm_ampere: CPU compile + PTX checks (CI), operand rules, GPU correctness.

CI (no GPU): each kernel compiles for sm_80 on the CPU and the PTX that the DSL keeps holds the promised
instructions (FFMA loop; 16-byte cp.async + ld.shared.v4; cp.async + ldmatrix + mma.sync m16n8k16).
GPU (`make gpu-test`): random sizes, odd ones included, every majorness, fp32 / fp16 (cupy) / bf16 (torch)
against a float64 reference, C pre-filled with NaN, alpha/beta, unaligned operands.

`python tests/kernels/test_kernels_simt_ampere.py sanitize` runs each kernel at a small and a medium size and exits
non-zero on a wrong answer (what `compute-sanitizer --tool memcheck|racecheck` wraps);
`python tests/kernels/test_kernels_simt_ampere.py bench OUT.json` times the kernels against cupy.matmul.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from layoutlab.errors import LayoutError
from layoutlab.kernels._common import DeviceOperand, GemmProblem, leading_dim, vector_width

LIB = str(Path(__file__).resolve().parents[2] / "lib")

# ---------------------------------------------------------------------------------------------------
# CI: compile for sm_80 on the CPU, read the kept PTX
# ---------------------------------------------------------------------------------------------------

# (kernel module, dtype, A major, B major, vector width): one configuration per promise
_PTX_CASES = {
    "sgemm_simple_NT": ("sgemm_simple", "float32", "M", "N", 1),
    "sgemm_fast_NT": ("sgemm_fast", "float32", "M", "N", 4),
    "sgemm_fast_TN": ("sgemm_fast", "float32", "K", "K", 4),
    "gemm_ampere_TN": ("gemm_ampere", "float16", "K", "K", 8),
    "gemm_ampere_NT": ("gemm_ampere", "bfloat16", "M", "N", 8),
}

_COMPILE_SCRIPT = textwrap.dedent("""
    import importlib, json, os, sys
    from pathlib import Path
    sys.path.insert(0, {lib!r})
    import numpy as np
    from layoutlab.kernels import kernel_module
    from layoutlab.kernels._common import GemmProblem

    class BF16:                       # stands in for ml_dtypes.bfloat16 (absent on the CPU runner)
        itemsize = 2
        def __str__(self):
            return "bfloat16"

    # The DSL reads CUTE_DSL_DUMP_DIR once; after each compile, take the PTX it wrote there away.
    dump = Path({dump!r})
    out = {{}}
    for name, (module, dtype, a_major, b_major, vec) in json.loads({cases!r}).items():
        launcher = kernel_module(module)._launcher
        dt = BF16() if dtype == "bfloat16" else np.dtype(dtype)
        launcher.compile(GemmProblem(1, 1, 1, dt, a_major, b_major, "N"), vec)
        out[name] = "\\n".join(p.read_text() for p in sorted(dump.glob("*.ptx")))
        for p in dump.glob("*.ptx"):
            p.unlink()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def sm80_ptx(tmp_path_factory):
    """PTX of one configuration per kernel, compiled in a subprocess: the DSL reads CUTE_DSL_ARCH/KEEP
    when it is imported, and a native crash must not take pytest down."""
    pytest.importorskip("cutlass", reason="needs nvidia-cutlass-dsl")
    dump = tmp_path_factory.mktemp("ptx_sm80")
    env = dict(os.environ, CUTE_DSL_ARCH="sm_80", CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=str(dump))
    script = _COMPILE_SCRIPT.format(lib=LIB, dump=str(dump), cases=json.dumps(_PTX_CASES))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _count(ptx, needle):
    return " ".join(ptx.split()).count(needle)


@pytest.mark.dsl
@pytest.mark.xdist_group("simt_ampere_ptx")  # one worker compiles the PTX once
def test_sgemm_simple_ptx_is_a_plain_ffma_loop(sm80_ptx):
    ptx = sm80_ptx["sgemm_simple_NT"]
    assert ".target sm_80" in ptx
    # 8 k-steps x an 8x8 block of FMAs per thread, unrolled, plus alpha * acc + beta * C in the epilogue
    assert _count(ptx, "fma.rn.f32") >= 8 * 8 * 8
    # scalar shared-memory traffic only, two barriers per k-tile, and no asynchronous copies
    assert "ld.shared.b32" in ptx and "ld.shared.v4" not in ptx
    assert _count(ptx, "bar.sync") == 2
    assert "cp.async" not in ptx and "mma.sync" not in ptx


@pytest.mark.dsl
@pytest.mark.xdist_group("simt_ampere_ptx")  # one worker compiles the PTX once
@pytest.mark.parametrize("case", ["sgemm_fast_NT", "sgemm_fast_TN"])
def test_sgemm_fast_ptx_has_vector_copies_and_vector_smem_loads(sm80_ptx, case):
    ptx = sm80_ptx[case]
    assert ".target sm_80" in ptx
    bk, vectors = 16, 2          # k-tiles of 16; a 128x16 operand tile is 2 16-byte vectors per thread
    prologue_tiles = 2           # stages - 1 tiles loaded before the loop
    if case.endswith("NT"):
        # MN-major operands: 128-bit global->shared copies that bypass L1 (cp.async.cg ... 16)
        assert _count(ptx, "cp.async.cg.shared.global") == 2 * vectors * (prologue_tiles + 1)
        assert all(line.rstrip(";").split(",")[-2:] == [" 16", " 16"]
                   for line in ptx.splitlines() if "cp.async.cg.shared.global" in line)
        assert "ld.global.v4" not in ptx           # (the epilogue reads C with scalar loads)
    else:
        # K-major operands are staged: 128-bit global loads into registers, then 4 scalar shared stores
        # per vector (the transpose), and no cp.async at all
        assert _count(ptx, "ld.global.v4") == 2 * vectors * (prologue_tiles + 1)
        assert _count(ptx, "st.shared.b32") == 4 * 2 * vectors * (prologue_tiles + 1)
        assert "cp.async.cg" not in ptx
    assert "cp.async.commit_group" in ptx and "cp.async.wait_group" in ptx
    # register blocking, the same inner loop in both layouts: the 8 A and 8 B values of each k-step arrive
    # as two 128-bit shared loads per operand (bK steps in the loop, plus the first step in the prologue)
    assert _count(ptx, "ld.shared.v4") == 2 * 2 * (bk + 1)
    assert "ld.shared.b32" not in ptx and "ld.shared.f32" not in ptx and "ld.shared.v2" not in ptx
    assert _count(ptx, "fma.rn.f32") >= 8 * 8 * bk
    # one barrier per k-tile (the pipeline needs no second one) plus one before the loop
    assert _count(ptx, "bar.sync") == 2


@pytest.mark.dsl
@pytest.mark.xdist_group("simt_ampere_ptx")  # one worker compiles the PTX once
@pytest.mark.parametrize("case,ab,trans", [("gemm_ampere_TN", "f16", False), ("gemm_ampere_NT", "bf16", True)])
def test_gemm_ampere_ptx_has_cp_async_ldmatrix_mma_sync(sm80_ptx, case, ab, trans):
    from layoutlab.kernels.ampere import DEFAULT_CONFIG
    ptx = sm80_ptx[case]
    assert ".target sm_80" in ptx
    assert f"mma.sync.aligned.m16n8k16.row.col.f32.{ab}.{ab}.f32" in ptx
    (bm, bn, bk), (wm, wn) = DEFAULT_CONFIG["tile"], DEFAULT_CONFIG["warps"]
    warp_m, warp_n, k_blocks = bm // wm, bn // wn, bk // 16        # e.g. 64 x 64 per warp, 2 k-blocks
    # per k-tile: (warp_m / 16) x (warp_n / 8) m16n8k16 per k-block
    assert _count(ptx, "mma.sync.aligned") == (warp_m // 16) * (warp_n // 8) * k_blocks
    ldsm = "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" if trans else "ldmatrix.sync.aligned.m8n8.x4.shared.b16"
    assert ldsm in ptx
    # one ldmatrix.x4 per 16x16 piece: warp_m / 16 for A and warp_n / 16 for B per 16-deep k-block,
    # every k-block of the tile in the loop plus the first k-block in the prologue
    per_kblock = warp_m // 16 + warp_n // 16
    assert _count(ptx, "ldmatrix.sync.aligned") == per_kblock * (k_blocks + 1)
    assert _count(ptx, "bar.sync") == 2
    assert _count(ptx, "cp.async.cg.shared.global") >= 8
    assert "cp.async.commit_group" in ptx and "cp.async.wait_group" in ptx


@pytest.mark.dsl
@pytest.mark.parametrize("a_major,b_major", [("K", "K"), ("M", "N"), ("M", "K"), ("K", "N")])
def test_gemm_ampere_takes_its_ldmatrix_from_select_ldmatrix(a_major, b_major):
    """The kernel asks layoutlab.select_ldmatrix; for m16n8k16 with the 16-wide N permutation the answer
    must be x4, transposed exactly for an MN-major operand (what the PTX test sees compiled)."""
    cutlass = pytest.importorskip("cutlass", reason="needs nvidia-cutlass-dsl")
    from layoutlab.kernels.ampere import GemmAmpere
    for dtype in (cutlass.Float16, cutlass.BFloat16):
        kernel = GemmAmpere(dtype, a_major, b_major, "N")
        for operand, major in (("A", a_major), ("B", b_major)):
            choice = kernel.ldmatrix_selection(operand)
            assert choice.num_matrices == 4
            assert choice.transpose == (major != "K")
            assert choice.name == ("SM75_U16x8_LDSM_T" if major != "K" else "SM75_U32x4_LDSM_N")
            assert "x4" in choice.reasoning


# ---------------------------------------------------------------------------------------------------
# CI: the host-side rules (no DSL, no GPU)
# ---------------------------------------------------------------------------------------------------

class _Fake:
    """What vector_width reads from an operand: a base address and an item size."""

    def __init__(self, ptr, itemsize):
        self.ptr, self.itemsize = ptr, itemsize


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2 ** 20), st.integers(1, 5000), st.integers(1, 5000)),
                min_size=1, max_size=3),
       st.sampled_from([2, 4]), st.sampled_from([1, 2, 4, 8]))
def test_vector_width_is_the_widest_safe_vector(ops, itemsize, max_vec):
    operands = [(_Fake(p * itemsize, itemsize), ld, ext) for p, ld, ext in ops]
    v = vector_width(operands, max_vec)

    def safe(w):
        return all((op.ptr % (w * itemsize) == 0) and ld % w == 0 and ext % w == 0 for op, ld, ext in operands)

    assert 1 <= v <= max_vec and v & (v - 1) == 0
    assert safe(v)
    assert all(not safe(w) for w in (2 * v, 4 * v, 8 * v) if w <= max_vec)


def _np_operand(a):
    return DeviceOperand(a, a.shape, a.strides, a.itemsize, a.dtype, a.ctypes.data)


@pytest.mark.parametrize("order,major,expected", [("C", True, 70), ("F", False, 30)])
def test_leading_dim_is_the_stride_of_the_other_mode(order, major, expected):
    a = np.zeros((30, 70), np.float32, order=order)
    assert leading_dim(_np_operand(a), major) == expected
    # a view with a padded row: the leading dimension is the buffer's, not the view's
    b = np.zeros((30, 80), np.float32)[:, :70]
    assert leading_dim(_np_operand(b), True) == 80


@pytest.mark.parametrize("name", ["sgemm_simple", "sgemm_fast", "gemm_ampere"])
def test_kernels_refuse_host_arrays(name):
    import layoutlab.kernels as kernels
    a = np.zeros((8, 8), np.float32)
    with pytest.raises(LayoutError, match="cupy array or a torch CUDA tensor"):
        getattr(kernels, name)(a, a)


# ---------------------------------------------------------------------------------------------------
# GPU: correctness against float64, NaN-poisoned outputs
# ---------------------------------------------------------------------------------------------------

def make_operand(lib, rows, cols, contiguous_in_cols, dtype, seed, pad=0, offset=0):
    """A random (rows, cols) GPU matrix, row-major (contiguous_in_cols) or column-major, cut out of a
    buffer with ``pad`` extra elements per line and starting ``offset`` elements in (to misalign it)."""
    shape = (rows, cols + pad + offset) if contiguous_in_cols else (cols, rows + pad + offset)
    if lib == "torch":
        import torch
        g = torch.Generator(device="cuda").manual_seed(seed)
        dt = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}[dtype]
        buf = torch.randn(shape, generator=g, device="cuda").to(dt)
    else:
        import cupy
        buf = cupy.random.RandomState(seed).standard_normal(shape, dtype=cupy.float32).astype(dtype)
    if contiguous_in_cols:
        return buf[:, offset:offset + cols]
    return buf[:, offset:offset + rows].T


def _f64(x):
    if hasattr(x, "double"):
        return x.double()
    import cupy
    return x.astype(cupy.float64)


def _rel_err(c, ref):
    if hasattr(c, "double"):
        import torch
        assert not bool(c.isnan().any()), "an output element was not written (NaN left)"
        return float(torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref))
    import cupy
    assert not bool(cupy.isnan(c).any()), "an output element was not written (NaN left)"
    return float(cupy.linalg.norm(c.astype(cupy.float64) - ref) / cupy.linalg.norm(ref))


def check_gemm(kernel, lib, dtype, layout, m, n, k, c_major="N", alpha=1.0, beta=0.0, seed=0, offset=0):
    """One GEMM with C pre-filled with NaN (random when beta != 0): the relative error vs float64."""
    A = make_operand(lib, m, k, layout[0] == "T", dtype, seed, offset=offset)     # T: A K-major
    B = make_operand(lib, k, n, layout[1] == "T", dtype, seed + 1, offset=offset)  # T: B N-major
    C = make_operand(lib, m, n, c_major == "N", dtype, seed + 2)
    if beta == 0:
        C[...] = float("nan")
    ref = alpha * (_f64(A) @ _f64(B)) + (beta * _f64(C) if beta else 0)
    out = kernel(A, B, C, alpha=alpha, beta=beta)
    assert out is C
    return _rel_err(C, ref)


TOL = {"float32": 1e-5, "float16": 1e-2, "bfloat16": 1e-2}


def _cases():
    rng = np.random.default_rng(11)
    sizes = [(128, 128, 8), (1, 1, 1), (77, 200, 33), (257, 136, 1000), (1023, 513, 771), (1024, 1024, 1024)]
    sizes += [tuple(int(x) for x in rng.integers(1, 1300, 3)) for _ in range(2)]
    cases = [(m, n, k, ["TN", "NT", "NN", "TT"][i % 4], "N") for i, (m, n, k) in enumerate(sizes)]
    # evenly tiled (multiples of 128 x 128 x 64): gemm_ampere's launcher compiles its `even` variant
    return cases + [(300, 260, 520, "TN", "M"), (513, 1000, 64, "NT", "M"), (256, 384, 192, "TN", "M"),
                    (384, 256, 512, "NT", "N")]


SIMT = ["sgemm_simple", "sgemm_fast"]


@pytest.mark.gpu
@pytest.mark.parametrize("name", SIMT)
@pytest.mark.parametrize("m,n,k,layout,c_major", _cases())
def test_sgemm_matches_float64(name, m, n, k, layout, c_major):
    import layoutlab.kernels as kernels
    err = check_gemm(getattr(kernels, name), "cupy", "float32", layout, m, n, k, c_major, seed=m + n + k)
    assert err < TOL["float32"], f"{name} {layout} {m}x{n}x{k}: relative error {err:.3g}"


@pytest.mark.gpu
@pytest.mark.parametrize("lib,dtype", [("cupy", "float16"), ("torch", "bfloat16")])
@pytest.mark.parametrize("m,n,k,layout,c_major", _cases())
def test_gemm_ampere_matches_float64(lib, dtype, m, n, k, layout, c_major):
    if lib == "torch":
        pytest.importorskip("torch")
    from layoutlab.kernels import gemm_ampere
    err = check_gemm(gemm_ampere, lib, dtype, layout, m, n, k, c_major, seed=m + n + k)
    assert err < TOL[dtype], f"gemm_ampere {dtype} {layout} {m}x{n}x{k}: relative error {err:.3g}"


@pytest.mark.gpu
@pytest.mark.parametrize("name,dtype", [("sgemm_simple", "float32"), ("sgemm_fast", "float32"),
                                        ("gemm_ampere", "float16")])
@pytest.mark.parametrize("layout", ["TN", "NT"])
def test_alpha_beta_and_misaligned_operands(name, dtype, layout):
    import layoutlab.kernels as kernels
    kernel = getattr(kernels, name)
    err = check_gemm(kernel, "cupy", dtype, layout, 333, 264, 200, alpha=0.5, beta=-2.0)
    assert err < TOL[dtype]
    # operands starting one element into their buffer: a kernel with narrower copies is compiled
    err = check_gemm(kernel, "cupy", dtype, layout, 190, 70, 130, offset=1, seed=5)
    assert err < TOL[dtype]


@pytest.mark.gpu
def test_wrong_dtypes_are_refused_on_gpu():
    import cupy
    from layoutlab.kernels import gemm_ampere, sgemm_fast
    a16 = cupy.ones((64, 64), cupy.float16)
    with pytest.raises(LayoutError, match="float16 is not supported"):
        sgemm_fast(a16, a16)
    with pytest.raises(LayoutError, match="float32 is not supported"):
        gemm_ampere(a16.astype(cupy.float32), a16.astype(cupy.float32))
    with pytest.raises(LayoutError, match="C must have the operands' dtype"):
        gemm_ampere(a16, a16, cupy.zeros((64, 64), cupy.float32))


# ---------------------------------------------------------------------------------------------------
# Entry points for the GPU machine: sanitizer runs and timing
# ---------------------------------------------------------------------------------------------------

def sanitize_main(names):
    """Small and medium runs (NT and TN, one with beta) of the named kernels, for compute-sanitizer."""
    import layoutlab.kernels as kernels
    worst = 0.0
    for name in names:
        dtype = "float16" if name == "gemm_ampere" else "float32"
        for (m, n, k) in [(200, 136, 72), (777, 650, 333), (256, 384, 512)]:   # the last one evenly tiled
            worst = max(worst, check_gemm(getattr(kernels, name), "cupy", dtype, "TN", m, n, k) / TOL[dtype])
            worst = max(worst, check_gemm(getattr(kernels, name), "cupy", dtype, "NT", m, n, k,
                                          alpha=2.0, beta=0.5) / TOL[dtype])
    print(f"sanitize runs done for {names}, worst error / tolerance {worst:.3g}")
    sys.exit(0 if worst < 1 else 1)


def _time_ms(fn, reps=20):
    """Median milliseconds of ``fn`` over ``reps`` runs timed with CUDA events, after 3 warm-ups."""
    import cupy
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    return float(np.median(times))


def bench_main(out_path, configs):
    """Time each (label, kernel, dtype, size, layout) and cupy.matmul on the same inputs, in the same run.

    Phase 1 compiles every kernel (one call each; with CUTE_DSL_KEEP=cubin set, the cubin of each is
    renamed after its label). Phase 2 waits for the file named by $BENCH_WAIT_FOR (so that compiling can
    overlap other GPU work without disturbing the timings), then times: CUDA events, median of 20.
    """
    import time
    import cupy
    dump = os.environ.get("CUTE_DSL_DUMP_DIR")

    def inputs(dtype, size, layout, seed=1):
        A = make_operand("cupy", size, size, layout[0] == "T", dtype, seed)
        B = make_operand("cupy", size, size, layout[1] == "T", dtype, seed + 1)
        return A, B, cupy.empty((size, size), dtype)

    failed = {}
    for label, kernel, dtype, size, layout in configs:
        try:
            A, B, C = inputs(dtype, size, layout)
            kernel(A, B, C)
            cupy.cuda.runtime.deviceSynchronize()
        except Exception as exc:  # keep going; report what failed
            failed[(label, layout)] = repr(exc)[:500]
        if dump:
            for p in Path(dump).glob("*.cubin"):
                p.rename(Path(dump) / (f"{label}_{layout}".replace(" ", "_").replace(",", "")
                                       .replace("(", "").replace(")", "").replace("=", "") + ".cubin.bin"))
        print("compiled", label, layout, flush=True)
    wait_for = os.environ.get("BENCH_WAIT_FOR")
    while wait_for and not Path(wait_for).exists():
        time.sleep(0.5)

    rows = []
    for label, kernel, dtype, size, layout in configs:
        if (label, layout) in failed:
            rows.append({"label": label, "layout": layout, "error": failed[(label, layout)]})
            print(label, layout, "FAILED", failed[(label, layout)][:300], flush=True)
            continue
        A, B, C = inputs(dtype, size, layout, seed=3)
        t_k = _time_ms(lambda: kernel(A, B, C))
        err = _rel_err(C, _f64(A) @ _f64(B))
        t_ref = _time_ms(lambda: cupy.matmul(A, B, out=C))
        t_k2 = _time_ms(lambda: kernel(A, B, C))          # again, interleaved, to see the spread
        t_ref2 = _time_ms(lambda: cupy.matmul(A, B, out=C))
        flops = 2.0 * size ** 3
        row = {"label": label, "dtype": dtype, "size": size, "layout": layout, "ms": t_k, "ms_again": t_k2,
               "cublas_ms": t_ref, "cublas_ms_again": t_ref2, "tflops": flops / min(t_k, t_k2) / 1e9,
               "cublas_tflops": flops / min(t_ref, t_ref2) / 1e9,
               "ratio": (t_ref + t_ref2) / (t_k + t_k2), "rel_err": err}
        rows.append(row)
        print(f"{label:36s} {size:5d} {layout} {t_k:7.3f} {t_k2:7.3f} ms {row['tflops']:6.1f} TF/s | cuBLAS "
              f"{t_ref:7.3f} {t_ref2:7.3f} ms {row['cublas_tflops']:6.1f} TF/s | ratio {row['ratio']:.3f}", flush=True)
        del A, B, C
    Path(out_path).write_text(json.dumps(rows, indent=1))


def _bench_configs():
    from layoutlab.kernels import sgemm_simple
    from layoutlab.kernels.ampere import gemm_ampere_configured
    from layoutlab.kernels.simt_fast import sgemm_fast_configured
    configs = [("sgemm_simple", sgemm_simple, "float32", 4096, "NT")]
    for stages, bk, layouts in ((3, 16, ("NT", "TN")), (4, 16, ("NT",))):
        for layout in layouts:
            configs.append((f"sgemm_fast s={stages} bK={bk}", sgemm_fast_configured(stages, bk), "float32",
                            4096, layout))
    for tile, warps, stages, layouts in [((128, 128, 32), (2, 2), 4, ("TN", "NT")),
                                         ((128, 128, 32), (2, 2), 3, ("TN",)),
                                         ((128, 128, 32), (2, 2), 5, ("TN",)),
                                         ((128, 128, 64), (2, 2), 3, ("TN",))]:
        launcher = gemm_ampere_configured(tile, warps, stages)
        for layout in layouts:
            configs.append((f"gemm_ampere {tile[0]}x{tile[1]}x{tile[2]} w{warps[0]}x{warps[1]} s={stages}",
                            launcher, "float16", 8192, layout))
    return configs


if __name__ == "__main__":
    sys.path.insert(0, LIB)
    if sys.argv[1:2] == ["sanitize"]:
        sanitize_main(sys.argv[2:] or ["sgemm_simple", "sgemm_fast", "gemm_ampere"])
    elif sys.argv[1:2] == ["bench"]:
        bench_main(sys.argv[2], _bench_configs())
