"""gemm_hopper and gemm_hopper_ws: CPU compile + PTX checks (CI), operand refusals, GPU correctness.

CI (no GPU): both kernels compile for sm_90a on the CPU and the PTX the DSL keeps holds the promised
instructions. GPU (`make gpu-test`): random sizes, odd ones included, every majorness, fp16 (cupy) and
bf16 (torch) against a float64 reference, with C pre-filled with NaN.

`python tests/kernels/test_kernels_hopper.py sanitize` runs each kernel once at a small and a medium size and
exits non-zero on a wrong answer: the command that `compute-sanitizer --tool memcheck|racecheck` wraps.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from layoutlab.errors import LayoutError
from layoutlab.kernels._common import DeviceOperand

LIB = str(Path(__file__).resolve().parents[2] / "lib")

# ---------------------------------------------------------------------------------------------------
# CI: compile for sm_90a on the CPU, read the kept PTX
# ---------------------------------------------------------------------------------------------------

_COMPILE_SCRIPT = textwrap.dedent("""
    import json, sys, warnings
    from pathlib import Path
    sys.path.insert(0, {lib!r})
    # issue 19: no deprecated DSL API (the persistent scheduler was utils.StaticPersistentTileScheduler)
    warnings.simplefilter("error", DeprecationWarning)
    from layoutlab.kernels.hopper import compile_hopper_gemm
    from layoutlab.kernels.hopper_ws import compile_hopper_gemm_ws
    compile_hopper_gemm("bfloat16", "K", "K", "N")
    compile_hopper_gemm_ws("float16", "M", "N", "N", with_beta=True)
    ptx = {{p.name: p.read_text() for p in Path({dump!r}).glob("*.ptx")}}
    # the DSL names each file after the kernel class: ...HopperGemmWs... / ...HopperGemm_object...
    print(json.dumps({{"gemm_hopper_ws": "".join(t for n, t in ptx.items() if "HopperGemmWs" in n),
                      "gemm_hopper": "".join(t for n, t in ptx.items() if "HopperGemmWs" not in n)}}))
""")


@pytest.fixture(scope="module")
def hopper_ptx(tmp_path_factory):
    """PTX of gemm_hopper (bf16 TN) and gemm_hopper_ws (fp16 NT, beta != 0), compiled in a subprocess:
    the DSL reads CUTE_DSL_ARCH/KEEP at import, and a native crash must not take pytest down."""
    pytest.importorskip("cutlass", reason="needs nvidia-cutlass-dsl")
    dump = tmp_path_factory.mktemp("ptx")
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=str(dump))
    proc = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT.format(lib=LIB, dump=str(dump))],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.dsl
@pytest.mark.xdist_group("hopper_ptx")     # one worker compiles the module fixture once
def test_gemm_hopper_ptx_has_tma_wgmma_and_tma_store(hopper_ptx):
    ptx = hopper_ptx["gemm_hopper"]
    assert ".target sm_90a" in ptx
    # wgmma from shared memory, 64 x 256 x 16 per instruction, bf16 in, fp32 accumulate
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16" in ptx
    assert "wgmma.commit_group" in ptx and "wgmma.wait_group" in ptx
    # TMA loads completing on an mbarrier with a byte count (expect-tx) ...
    assert "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes" in ptx
    assert "mbarrier.arrive.expect_tx" in ptx
    # ... and a TMA-store epilogue fed by stmatrix, fenced for the async proxy
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx
    assert "stmatrix.sync.aligned" in ptx
    assert "fence.proxy.async.shared::cta" in ptx


@pytest.mark.dsl
@pytest.mark.xdist_group("hopper_ptx")
def test_gemm_hopper_ws_ptx_has_setmaxnreg_and_multicast(hopper_ptx):
    ptx = hopper_ptx["gemm_hopper_ws"]
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in ptx
    # producer gives registers away, consumers take them
    words = " ".join(ptx.split())
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in words
    assert "setmaxnreg.inc.sync.aligned.u32 232;" in words
    # 2-CTA cluster: B is multicast, empty-barrier arrivals cross the cluster
    assert "multicast::cluster" in ptx
    assert "mbarrier.arrive.shared::cluster" in ptx
    # 384 threads = 1 producer + 2 consumer warpgroups, one CTA per SM (lets setmaxnreg apply)
    assert ".reqntid 384, 1, 1" in ptx and ".minnctapersm 1" in ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx


# ---------------------------------------------------------------------------------------------------
# CI: operand refusals (no DSL, no GPU: DeviceOperands over numpy buffers)
# ---------------------------------------------------------------------------------------------------

def _op(a):
    return DeviceOperand(a, a.shape, a.strides, a.itemsize, a.dtype, a.ctypes.data)


def _aligned(shape, dtype=np.float16, order="C", offset=0):
    """A zeroed numpy array whose data starts ``offset`` bytes after a 128-byte boundary."""
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.zeros(n + 128 + offset, np.uint8)
    start = -raw.ctypes.data % 128 + offset
    flat = raw[start:start + n].view(dtype)
    return flat.reshape(shape, order=order)


def _hopper_operands(*args, **kw):
    from layoutlab.kernels.hopper import hopper_operands
    return hopper_operands(*args, **kw)


@pytest.mark.parametrize("a_order,b_order,layout", [("C", "F", "TN"), ("F", "C", "NT"),
                                                     ("F", "F", "NN"), ("C", "C", "TT")])
def test_hopper_operands_accepts_every_majorness(a_order, b_order, layout):
    a, b = _aligned((136, 72), order=a_order), _aligned((72, 264), order=b_order)
    prob, _ = _hopper_operands(_op(a), _op(b))
    assert (prob.m, prob.n, prob.k, prob.layout) == (136, 264, 72, layout)


def test_hopper_operands_accepts_odd_extents_with_aligned_strides():
    # K = 1001 is fine when the rows are 1008 apart: TMA constrains strides, not extents
    a = _aligned((65, 1008))[:, :1001]
    b = _aligned((257, 1008))[:, :1001].T            # (K, N), K-major
    c = _aligned((65, 264))[:, :257]
    prob, _ = _hopper_operands(_op(a), _op(b), _op(c))
    assert (prob.m, prob.n, prob.k, prob.layout) == (65, 257, 1001, "TN")


def test_hopper_operands_refuses_unaligned_leading_dimension():
    a, b = _aligned((64, 1001)), _aligned((1001, 128), order="F")
    with pytest.raises(LayoutError, match=r"A is K-major with a stride of 1001.*multiple of 8.*Pad A's K"):
        _hopper_operands(_op(a), _op(b))


def test_hopper_operands_refuses_unaligned_output_stride():
    a, b, c = _aligned((64, 64)), _aligned((64, 100), order="F"), _aligned((64, 100))
    with pytest.raises(LayoutError, match=r"C is N-major with a stride of 100.*Pad C's N"):
        _hopper_operands(_op(a), _op(b), _op(c))


def test_hopper_operands_refuses_unaligned_base_address():
    a = _aligned((64, 72))[:, 1:65]                   # starts 2 bytes in
    b = _aligned((64, 64), order="F")
    with pytest.raises(LayoutError, match="16-byte aligned"):
        _hopper_operands(_op(a), _op(b))


@pytest.mark.parametrize("label,offset", [("A", 16), ("B", 64), ("C", 112)])
def test_hopper_operands_refuses_swizzled_operand_off_128_bytes(label, offset):
    """16-byte aligned is the driver's rule; the CUDA guide's swizzle table asks 128 for a swizzled map, and every
    map of this kernel swizzles: a base 16, 64 or 112 bytes past a 128-byte boundary is refused, 128 accepted."""
    ops = {x: _aligned((64, 64), order="F" if x == "B" else "C", offset=offset if x == label else 0)
           for x in "ABC"}
    assert ops[label].ctypes.data % 128 == offset
    with pytest.raises(LayoutError, match=rf"{label}'s data pointer 0x[0-9a-f]+ is 16- but not 128-byte aligned.*"
                                          r"swizzle table.*128-byte boundary"):
        _hopper_operands(*(_op(ops[x]) for x in "ABC"))
    ops[label] = _aligned((64, 64), order="F" if label == "B" else "C", offset=128)
    prob, _ = _hopper_operands(*(_op(ops[x]) for x in "ABC"))
    assert (prob.m, prob.n, prob.k) == (64, 64, 64)


def test_hopper_operands_refuses_fp32_and_mixed_output_dtype():
    with pytest.raises(LayoutError, match="float32.*float16 or bfloat16"):
        _hopper_operands(_op(_aligned((64, 64), np.float32)), _op(_aligned((64, 64), np.float32)))
    with pytest.raises(LayoutError, match="C has dtype float32.*writes C in the same dtype"):
        _hopper_operands(_op(_aligned((64, 64))), _op(_aligned((64, 64))), _op(_aligned((64, 64), np.float32)))


def test_hopper_operands_refuses_beta_without_c():
    with pytest.raises(LayoutError, match="beta=0.5 needs an input C"):
        _hopper_operands(_op(_aligned((64, 64))), _op(_aligned((64, 64))), beta=0.5)


def test_hopper_config_refusals():
    from layoutlab.kernels.hopper import HopperGemmConfig
    with pytest.raises(LayoutError, match="tile_m=96"):
        HopperGemmConfig(tile_m=96)
    with pytest.raises(LayoutError, match="tile_n=260"):
        HopperGemmConfig(tile_n=260)
    with pytest.raises(LayoutError, match="tile_k=32"):
        HopperGemmConfig(tile_k=32)
    # the pipeline depth that fits: 227 KiB over (128 + 256) x 64 x 2 bytes per stage
    assert HopperGemmConfig().ab_stages(reserved_bytes=1024) == 4


# ---------------------------------------------------------------------------------------------------
# GPU: correctness against float64, NaN-poisoned outputs
# ---------------------------------------------------------------------------------------------------

def _round8(x):
    return -(-x // 8) * 8


def make_operand(lib, rows, cols, contiguous_in_cols, dtype, rng_seed):
    """A random (rows, cols) GPU matrix, contiguous along cols (row-major) or rows (column-major), held
    in a buffer padded to a multiple of 8 along the contiguous mode so that odd extents meet TMA's rule."""
    if lib == "torch":
        import torch
        g = torch.Generator(device="cuda").manual_seed(rng_seed)
        dt = {"float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
        shape = (rows, _round8(cols)) if contiguous_in_cols else (cols, _round8(rows))
        buf = torch.randn(shape, generator=g, device="cuda").to(dt)
    else:
        import cupy
        rs = cupy.random.RandomState(rng_seed)
        shape = (rows, _round8(cols)) if contiguous_in_cols else (cols, _round8(rows))
        buf = rs.standard_normal(shape, dtype=cupy.float32).astype(dtype)
    return buf[:, :cols] if contiguous_in_cols else buf[:, :rows].T


def _to_f64(x):
    if hasattr(x, "double"):
        return x.double()
    import cupy
    return x.astype(cupy.float64)


def _isnan_any(x):
    if hasattr(x, "isnan"):
        return bool(x.isnan().any())
    import cupy
    return bool(cupy.isnan(x).any())


def _rel_err(c, ref):
    if hasattr(c, "double"):
        import torch
        return float(torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref))
    import cupy
    return float(cupy.linalg.norm(c.astype(cupy.float64) - ref) / cupy.linalg.norm(ref))


def check_gemm(kernel, lib, dtype, layout, m, n, k, c_major="N", alpha=1.0, beta=0.0, seed=0):
    """Run one GEMM with C pre-filled with NaN (or random when beta != 0); return the relative error
    against float64 after asserting that no NaN is left."""
    A = make_operand(lib, m, k, layout[0] == "T", dtype, seed)          # T: A K-major
    B = make_operand(lib, k, n, layout[1] == "T", dtype, seed + 1)      # T: B N-major
    C = make_operand(lib, m, n, c_major == "N", dtype, seed + 2)
    if beta == 0:
        C[...] = float("nan")
    C0 = _to_f64(C)
    ref = alpha * (_to_f64(A) @ _to_f64(B)) + (beta * C0 if beta else 0)
    out = kernel(A, B, C, alpha=alpha, beta=beta)
    assert out is C
    assert not _isnan_any(C), "an output element was not written (NaN left)"
    return _rel_err(C, ref)


def _cases():
    rng = np.random.default_rng(7)
    sizes = [(128, 256, 64), (1, 8, 1), (77, 200, 33), (257, 136, 1000), (1023, 513, 771), (2048, 2048, 2048)]
    sizes += [tuple(int(x) for x in rng.integers(1, 1600, 3)) for _ in range(3)]
    cases = []
    for i, (m, n, k) in enumerate(sizes):
        layout = ["TN", "NT", "NN", "TT"][i % 4]
        cases.append((m, n, k, layout, "N"))
    cases += [(300, 264, 520, "TN", "M"), (513, 1000, 64, "NT", "M")]
    return cases


KERNELS = ["gemm_hopper", "gemm_hopper_ws"]


@pytest.mark.gpu
@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("lib,dtype", [("cupy", "float16"), ("torch", "bfloat16")])
@pytest.mark.parametrize("m,n,k,layout,c_major", _cases())
def test_hopper_gemm_matches_float64(name, lib, dtype, m, n, k, layout, c_major):
    if lib == "torch":
        pytest.importorskip("torch")
    import layoutlab.kernels as kernels
    err = check_gemm(getattr(kernels, name), lib, dtype, layout, m, n, k, c_major=c_major, seed=m + n + k)
    assert err < 1e-2, f"{name} {dtype} {layout} {m}x{n}x{k}: relative error {err:.3g}"


@pytest.mark.gpu
@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("layout", ["TN", "NT"])
def test_hopper_gemm_alpha_beta(name, layout):
    import layoutlab.kernels as kernels
    err = check_gemm(getattr(kernels, name), "cupy", "float16", layout, 333, 264, 200, alpha=0.5, beta=-2.0)
    assert err < 1e-2


def _few_clusters_ws():
    """gemm_hopper_ws on a persistent grid of 2 clusters: every CTA walks many tiles (the test sizes have
    fewer tiles than the H100's 66 clusters, so the default grid would give each CTA one tile), which
    exercises the tile loop, the serpentine k order of odd tiles and the C buffers reused across tiles."""
    import functools

    from layoutlab.kernels.hopper_ws import HopperWsConfig, gemm_hopper_ws
    return functools.partial(gemm_hopper_ws, config=HopperWsConfig(num_sms=4))


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,layout,c_major,beta", [(1100, 1030, 520, "TN", "N", 0.0),
                                                        (777, 1500, 1000, "NT", "M", 0.5),
                                                        (640, 768, 4100, "NN", "N", -1.0)])
def test_hopper_ws_persistent_tile_loop(m, n, k, layout, c_major, beta):
    err = check_gemm(_few_clusters_ws(), "cupy", "float16", layout, m, n, k, c_major=c_major,
                     alpha=1.5, beta=beta, seed=m)
    assert err < 1e-2, err


@pytest.mark.gpu
def test_hopper_sass_has_hgmma_and_tma(tmp_path):
    """The machine code (nvdisasm through CUTE_DSL_KEEP=sass, which needs the GPU machine's CUDA tools):
    HGMMA is wgmma, UTMALDG/UTMASTG are the TMA load/store, STSM is stmatrix."""
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", CUTE_DSL_KEEP="sass", CUTE_DSL_DUMP_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT.format(lib=LIB, dump=str(tmp_path))],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    sass = {p.name: p.read_text() for p in tmp_path.glob("*.sass")}
    plain = "".join(t for n, t in sass.items() if "HopperGemmWs" not in n)
    ws = "".join(t for n, t in sass.items() if "HopperGemmWs" in n)
    for text in (plain, ws):
        assert "HGMMA.64x256x16.F32" in text
        assert "UTMALDG" in text and "UTMASTG" in text and "STSM" in text
    assert "MULTICAST" in ws                       # B reaches both CTAs of the cluster from one load
    spill = re.compile(r"\b(LDL|STL)\b")
    assert not spill.search(plain), "local-memory traffic (register spills) in gemm_hopper"
    assert not spill.search(ws), "local-memory traffic (register spills) in gemm_hopper_ws"


@pytest.mark.gpu
def test_hopper_gemm_refuses_unaligned_on_gpu():
    import cupy
    from layoutlab.kernels import gemm_hopper
    a = cupy.ones((64, 1001), cupy.float16)
    with pytest.raises(LayoutError, match="multiple of 8"):
        gemm_hopper(a, a.T)


def sanitize_main():
    """Small and medium runs of both kernels (fp16 TN + bf16 NT with beta), for compute-sanitizer."""
    import layoutlab.kernels as kernels
    worst = 0.0
    for name in KERNELS:
        for (m, n, k) in [(200, 136, 72), (1100, 1030, 520)]:
            worst = max(worst, check_gemm(getattr(kernels, name), "cupy", "float16", "TN", m, n, k))
            worst = max(worst, check_gemm(getattr(kernels, name), "torch", "bfloat16", "NT", m, n, k,
                                          alpha=2.0, beta=0.5))
    # 2 persistent clusters: each CTA computes ~11 tiles (tile loop, serpentine k, C buffers reused)
    worst = max(worst, check_gemm(_few_clusters_ws(), "cupy", "float16", "TN", 1100, 1030, 520))
    print(f"sanitize runs done, worst relative error {worst:.3g}")
    sys.exit(0 if worst < 1e-2 else 1)


if __name__ == "__main__" and sys.argv[1:] == ["sanitize"]:
    sys.path.insert(0, LIB)
    sanitize_main()


# ---------------------------------------------------------------------------------------------------
# CI: the recorded H100 benchmark (what the book shows where no GPU is present)
# ---------------------------------------------------------------------------------------------------

def test_recorded_benchmark_is_complete_and_consistent():
    from layoutlab import gpu
    from layoutlab.bench.gemm import format_table
    rec = gpu.load_result("gemm_h100_bench")
    assert "H100" in rec["gpu"] and rec["date"] and rec["versions"]["nvidia-cutlass-dsl"]
    rows = {(r["kernel"], r["dtype"], r["m"], r["n"], r["k"]): r for r in rec["rows"]}
    for r in rows.values():
        flops = 2.0 * r["m"] * r["n"] * r["k"]
        assert r["tflops"] == pytest.approx(flops / r["ms"] / 1e9)
        assert r["pct_cublas"] == pytest.approx(100 * r["cublas_ms"] / r["ms"])
        assert r["rel_err_vs_cublas"] < 1e-2          # no wrong kernel was timed
        if "ms_rounds" in r:                          # alternating rounds: each side is their median
            assert r["ms"] == pytest.approx(statistics.median(r["ms_rounds"]))
            assert r["cublas_ms"] == pytest.approx(statistics.median(r["cublas_ms_rounds"]))
    # issue 7's targets at bf16 8192^3, same-run ratios to cuBLAS
    assert rows[("gemm_hopper_ws", "bfloat16", 8192, 8192, 8192)]["pct_cublas"] >= 100
    assert rows[("gemm_hopper", "bfloat16", 8192, 8192, 8192)]["pct_cublas"] >= 85
    table = format_table(rec["rows"], rec["info"], rec["notes"])
    assert len(table.splitlines()) == len(rec["rows"]) + 3 + len(rec["notes"])
