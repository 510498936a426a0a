"""The fp8 rung: refusals and the accumulation model (CPU), the sm_90a compile (CI), correctness (GPU).

CPU: every refusal of gemm_hopper_fp8 before any CUDA call (numpy stand-ins in DeviceOperand; this machine has
neither torch nor cupy, so any CUDA touch would fail with another error), e4m3 rounding against the 256 codes
decoded from their bits, the promotion schedule, the model's accumulator. CI: the kernel compiles for sm_90a and
its PTX holds the fp8 wgmma (m64n128k32 e4m3 x e4m3, 4 per k-tile), the producer/consumer setmaxnreg, no local
memory, and the block-scaled build's scale loads. GPU (`make gpu-test`): against float64 beside cuBLASLt
(torch._scaled_mm) on the same inputs, odd shapes, per-tensor and block scales, every promotion interval, a
persistent grid of few CTAs, beta != 0.

`python tests/test_kernels_fp8.py sanitize` runs small shapes (the command compute-sanitizer wraps).
"""

import math
import re
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from layoutlab.errors import LayoutError
from layoutlab.kernels._common import DeviceOperand
from layoutlab.kernels import fp8_model
from layoutlab.kernels.fp8_model import (E4M3_MAX, accumulate_model, block_scales, promotion_points,
                                         quantize_blocks, quantize_e4m3, relative_error, round_bf16)

LIB = str(Path(__file__).resolve().parents[2] / "lib")


# ---------------------------------------------------------------------------------------------------
# CPU: refusals before any CUDA call
# ---------------------------------------------------------------------------------------------------

def _buf(shape, itemsize, offset=0):
    """A 128-byte aligned numpy buffer of ``shape`` (row-major) with ``itemsize`` bytes per element."""
    n = int(np.prod(shape)) * itemsize
    raw = np.zeros(n + 256, np.uint8)
    start = -raw.ctypes.data % 128 + offset
    return raw[start:start + n].view({1: np.uint8, 2: np.uint16, 4: np.float32}[itemsize]).reshape(shape)


def _op(x, dtype):
    return DeviceOperand(x, x.shape, x.strides, x.itemsize, dtype, x.ctypes.data)


def fp8(shape, offset=0):
    return _op(_buf(shape, 1, offset), "float8_e4m3fn")


def fp8_t(rows, cols):
    """The (cols, rows) transpose of a row-major (rows, cols) e4m3 buffer: B given as b.T (K-major)."""
    x = _buf((rows, cols), 1).T
    return _op(x, "float8_e4m3fn")


def _gemm(*args, **kw):
    from layoutlab.kernels import gemm_hopper_fp8
    return gemm_hopper_fp8(*args, **kw)


def test_fp8_operands_reads_the_problem_off_valid_operands():
    """What the checks hand the launch: (M, N, K), C's contiguous mode, whether the scales are blocks, the operands."""
    from layoutlab.kernels.fp8_operands import fp8_operands
    a, b = fp8((300, 1008)), fp8_t(200, 1008)                      # A (M, K), B = b.T of b (N, K)
    m, n, k, c_major, block, ops = fp8_operands(a, b)
    assert (m, n, k, c_major, block, len(ops)) == (300, 200, 1008, "N", False, 3) and ops[2] is None
    sa, sb = _op(_buf((300, 8), 4), "float32"), _op(_buf((2, 8), 4), "float32")   # Kb = ceil(1008 / 128) = 8
    c = _op(_buf((200, 304), 2)[:, :300].T, "bfloat16")                          # column-major C (M, N)
    m, n, k, c_major, block, ops = fp8_operands(a, b, c, scale_a=sa, scale_b=sb)
    assert (c_major, block, len(ops)) == ("M", True, 5)


def test_refuses_host_arrays():
    a = np.zeros((128, 128), np.uint8)
    with pytest.raises(LayoutError, match="A must be a cupy array or a torch CUDA tensor"):
        _gemm(a, a.T)
    with pytest.raises(LayoutError, match="scale_a must be a cupy array or a torch CUDA tensor"):
        _gemm(fp8((128, 128)), fp8_t(128, 128), scale_a=np.ones((128, 1), np.float32),
              scale_b=np.ones((1, 1), np.float32))


def test_refuses_wrong_dtypes():
    with pytest.raises(LayoutError, match="A has dtype float16; this kernel takes float8_e4m3fn"):
        _gemm(_op(_buf((64, 64), 2), "float16"), fp8_t(64, 64))
    with pytest.raises(LayoutError, match="B has dtype float8_e5m2"):
        _gemm(fp8((64, 64)), _op(_buf((64, 64), 1).T, "float8_e5m2"))
    with pytest.raises(LayoutError, match="C has dtype float32; the fp8 rung writes bfloat16"):
        _gemm(fp8((64, 64)), fp8_t(64, 64), _op(_buf((64, 64), 4), "float32"))


def test_refuses_mn_major_operands_citing_wgmma():
    with pytest.raises(LayoutError, match=r"A is not K-major .*PTX ISA 9.7.15.*TN"):
        _gemm(_op(_buf((64, 128), 1).T, "float8_e4m3fn"), fp8_t(64, 64))      # A (128, 64) M-major
    with pytest.raises(LayoutError, match=r"B is not K-major"):
        _gemm(fp8((64, 64)), fp8((64, 96)))                                   # B (K, N) row-major: N-major


def test_refuses_misaligned_strides_and_bases():
    ok_b = fp8_t(64, 1008)
    with pytest.raises(LayoutError, match="multiple of 16 elements"):
        _gemm(fp8((64, 1001)), fp8_t(64, 1001))                               # lda = 1001 bytes
    with pytest.raises(LayoutError, match="not 16-byte aligned"):
        _gemm(fp8((64, 1008), offset=8), ok_b)
    with pytest.raises(LayoutError, match="128-byte aligned"):
        _gemm(fp8((64, 1008), offset=16), ok_b)
    with pytest.raises(LayoutError, match="K"):
        _gemm(fp8((64, 1008)), fp8_t(64, 1024))                               # K 1008 vs 1024


def test_refuses_bad_scales():
    a, b = fp8((300, 1008)), fp8_t(200, 1008)                                 # M 300, N 200, K 1008: Kb = 8
    sa, sb = _op(_buf((300, 8), 4), "float32"), _op(_buf((2, 8), 4), "float32")
    with pytest.raises(LayoutError, match=r"scale_a is float32 of shape \(300, 7\); .*\(300, 8\)"):
        _gemm(a, b, scale_a=_op(_buf((300, 7), 4), "float32"), scale_b=sb)
    with pytest.raises(LayoutError, match=r"scale_b is float32 of shape \(2, 2\); .*128 x 128 block of B"):
        _gemm(a, b, scale_a=sa, scale_b=_op(_buf((2, 2), 4), "float32"))
    with pytest.raises(LayoutError, match="scale_a is float16"):
        _gemm(a, b, scale_a=_op(_buf((300, 8), 2), "float16"), scale_b=sb)
    with pytest.raises(LayoutError, match="scale_b is a number but the other scale is an array"):
        _gemm(a, b, scale_a=sa, scale_b=2.0)
    with pytest.raises(LayoutError, match="row-major contiguous"):
        _gemm(a, b, scale_a=sa, scale_b=_op(_buf((8, 2), 4).T, "float32"))
    with pytest.raises(LayoutError, match="finite"):
        _gemm(a, b, scale_a=float("inf"))
    from layoutlab.kernels.hopper_fp8 import HopperFp8Config
    with pytest.raises(LayoutError, match="promotion_interval must be 4, got 8"):
        _gemm(a, b, scale_a=sa, scale_b=sb, config=HopperFp8Config(promotion_interval=8))


def test_config_refusals():
    from layoutlab.kernels.hopper_fp8 import HopperFp8Config
    for kw, msg in [({"tile_n": 256}, "use 64, 128 or 192"), ({"tile_k": 64}, "only K tile"),
                    ({"promotion_interval": 2}, "multiple of 4"), ({"tile_m": 64}, "use 128"),
                    ({"epi_stages": 3}, "divisor of 4"), ({"n_halves": 3}, "1 or 2"), ({"partials": 3}, "1 .* or 2"),
                    ({"partials": 2, "promotion_interval": 8}, "promoted after every k-tile: use 4"),
                    ({"partials": 2, "tile_n": 192, "epi_stages": 3}, r"tile_n <= 128"),
                    ({"overlap_run": 1}, "at least 2")]:
        with pytest.raises(LayoutError, match=msg):
            HopperFp8Config(**kw)
    assert HopperFp8Config(promotion_interval=16).promote_every_k_tiles == 4


def test_stage_fits_shared_memory():
    """6 stages of 32 KiB beside 32 KiB of C staging and the barriers: the 227 KiB of a Hopper CTA (5 of 40 KiB
    for 192-column tiles)."""
    from layoutlab.kernels.hopper import SMEM_CAPACITY
    from layoutlab.kernels.hopper_fp8 import HopperFp8Config
    for cfg, want in ((HopperFp8Config(tile_n=192, epi_stages=3), 5), (HopperFp8Config(), 6)):
        c_bytes = 128 * 32 * cfg.epi_stages * 2
        stages = cfg.ab_stages(reserved_bytes=1024 + c_bytes)
        assert stages == want and stages * cfg.ab_stage_bytes() + c_bytes + 1024 <= SMEM_CAPACITY
        assert (stages + 1) * cfg.ab_stage_bytes() + c_bytes + 1024 > SMEM_CAPACITY


def test_each_thread_holds_two_rows_r_and_r_plus_8():
    """The promotion reads two A scales per thread: the kernel takes values 0-1 as row r and 2-3 as row r + 8
    of every 4. That is the fp8 wgmma accumulator's TV layout ((4,8,4),(2,2,16)):((128,1,16),(64,8,512)), for
    all 128 threads and 64 values."""
    from layoutlab import Layout, make_mma_atom, nvgpu
    c = make_mma_atom(nvgpu.warpgroup.MmaF8Op("f8E4M3FN", "f8E4M3FN", "f32", (64, 128, 32))).layout_c_tv
    assert c == Layout(((4, 8, 4), (2, 2, 16)), ((128, 1, 16), (64, 8, 512)))
    for t in range(128):
        rows = [c((t, v)) % 64 for v in range(64)]
        assert rows == [rows[0] + 8 * ((v // 2) % 2) for v in range(64)]
        assert {c((t, v)) // 64 // 128 for v in range(64)} == {0}      # all 128 columns: one B scale block


# ---------------------------------------------------------------------------------------------------
# CPU: e4m3, scales and the accumulation model
# ---------------------------------------------------------------------------------------------------

def _e4m3_codes():
    """All finite float8_e4m3fn values decoded from their bits (sign, 4 exponent bits bias 7, 3 mantissa
    bits; exponent 0 is subnormal; S.1111.111 is NaN)."""
    vals = []
    for code in range(256):
        s, e, m = code >> 7, (code >> 3) & 15, code & 7
        if e == 15 and m == 7:
            continue
        v = (m / 8) * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        vals.append(-v if s else v)
    return np.array(sorted(set(vals)))


def test_e4m3_rounds_to_the_nearest_code():
    codes = _e4m3_codes()
    assert codes.max() == E4M3_MAX and len(codes) == 253            # +-0 merge: 254 finite codes, 253 values
    assert (quantize_e4m3(codes) == codes).all()
    x = np.random.default_rng(0).standard_normal(20000) * np.exp(np.random.default_rng(1).uniform(-8, 6, 20000))
    x = np.clip(x, -E4M3_MAX, E4M3_MAX)
    q = quantize_e4m3(x)
    nearest = np.abs(codes[None, :] - x[:, None]).min(axis=1)
    assert np.isin(q, codes).all() and np.allclose(np.abs(q - x), nearest, rtol=0, atol=0)


def test_block_scales_put_each_block_max_on_448():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((300, 1000)) * 10.0 ** rng.uniform(-3, 3, (300, 1))
    sa = block_scales(x, 1, 128)
    q = quantize_blocks(x, sa, 1, 128)
    assert sa.shape == (300, 8) and np.abs(q).max() <= E4M3_MAX
    blockmax = np.abs(q).reshape(300, -1)[:, :896].reshape(300, 7, 128).max(axis=2)
    assert np.allclose(blockmax, E4M3_MAX)                           # the largest of each block maps to 448
    deq = q * np.repeat(sa.astype(np.float64), 128, 1)[:, :1000]
    assert relative_error(deq, x) < 0.04                             # e4m3: 3 mantissa bits


@pytest.mark.parametrize("k,interval", [(1, 0), (32, 4), (4096, 4), (4100, 8), (16384, 0), (1000, 64)])
def test_promotion_points(k, interval):
    pts = promotion_points(k, interval)
    blocks = math.ceil(k / 32)
    assert pts[-1] == blocks and pts == sorted(set(pts))
    gaps = np.diff([0] + pts)
    assert (gaps[:-1] == interval).all() if interval else pts == [blocks]
    assert 0 < gaps[-1] <= (interval or blocks)


def test_model_without_limit_is_fp32_and_promotion_bounds_the_error():
    rng = np.random.default_rng(7)
    a = quantize_e4m3(rng.standard_normal((32, 8192)))
    b = quantize_e4m3(rng.standard_normal((8192, 32)))
    ref = a @ b
    assert relative_error(accumulate_model(a, b, 4, bits=None), ref) < 1e-6
    errs = {i: relative_error(accumulate_model(a, b, i), ref) for i in (4, 16, 64, 0)}
    assert errs[4] < errs[16] < errs[64] < errs[0]
    # 14 kept bits: a truncation costs < 2^-13 of the accumulator, a few per promotion interval
    assert errs[4] < 4 * 2.0 ** -13 and errs[0] > 10 * errs[4]


def test_model_block_scales_match_scaled_reference():
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((64, 512)) * 3, rng.standard_normal((512, 256)) * 0.01
    sa, sb = block_scales(x, 1, 128), block_scales(w.T, 128, 128)
    qa, qb = quantize_blocks(x, sa, 1, 128), quantize_blocks(w.T, sb, 128, 128).T
    ref = (qa * np.repeat(sa, 128, 1)) @ (qb * np.repeat(np.repeat(sb, 128, 0), 128, 1).T)
    got = accumulate_model(qa, qb, 4, scale_a=sa, scale_b=sb)
    assert relative_error(got, ref) < 1e-3
    assert relative_error(got, x @ w) < 0.06
    with pytest.raises(LayoutError, match="promote every 4"):
        accumulate_model(qa, qb, 8, scale_a=sa, scale_b=sb)


def test_round_bf16_has_8_significant_bits():
    x = np.random.default_rng(2).standard_normal(10000)
    r = round_bf16(x)
    assert np.all(np.abs(r - x) <= np.abs(x) * 2.0 ** -8)
    assert len(np.unique(round_bf16(1 + np.arange(256) / 256.0))) == 129


# ---------------------------------------------------------------------------------------------------
# CI: the sm_90a compile and its PTX
# ---------------------------------------------------------------------------------------------------

_COMPILE_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {lib!r})
    from layoutlab.kernels.hopper_fp8 import compile_hopper_gemm_fp8
    compile_hopper_gemm_fp8({block})
""")


@pytest.fixture(scope="module")
def fp8_ptx(tmp_path_factory):
    """PTX of the per-tensor and the block-scaled builds, each compiled in a subprocess of its own (the DSL
    reads CUTE_DSL_KEEP at import, and the two builds' PTX files would share a name)."""
    pytest.importorskip("cutlass", reason="needs nvidia-cutlass-dsl")
    out = {}
    for kind, block in (("per_tensor", False), ("block", True)):
        dump = tmp_path_factory.mktemp(kind)
        env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", CUTE_DSL_KEEP="ptx,cubin", CUTE_DSL_DUMP_DIR=str(dump))
        proc = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT.format(lib=LIB, block=block)],
                              env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-4000:]
        ptx = list(dump.glob("*.ptx"))
        assert len(ptx) == 1, ptx
        out[kind] = ptx[0].read_text()
        out[kind + "_cubin"] = next(dump.glob("*.cubin"))
    return out


@pytest.mark.dsl
def test_ptx_has_the_fp8_wgmma_and_no_local_memory(fp8_ptx):
    """The default tile (128 x 128, double-buffered partials, runs of 8 k-tiles): 4 wgmma.m64n128k32 per k-tile,
    unrolled over a run (8 k-tiles) and the one-at-a-time rest (1)."""
    from layoutlab.kernels.hopper_fp8 import HopperFp8Config
    run = HopperFp8Config().overlap_run
    for kind in ("per_tensor", "block"):
        ptx = fp8_ptx[kind]
        mma = re.findall(r"wgmma\.mma_async[\w.]*", ptx)
        assert mma == ["wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"] * 4 * (run + 1), (kind, len(mma))
        assert "setmaxnreg.dec.sync.aligned.u32" in ptx and "setmaxnreg.inc.sync.aligned.u32" in ptx
        assert "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster" in ptx
        assert not re.search(r"\b(ld|st)\.local\b", ptx), kind
        assert "wgmma.wait_group.sync.aligned 1" in " ".join(ptx.split())
    # block scales: per k-tile, the A scales of the thread's two rows and the B scale of the tile's block
    assert len(re.findall(r"ld\.global(?:\.\w+)*\.(?:f32|b32)", fp8_ptx["block"])) == 3 * (run + 1)
    assert not re.findall(r"ld\.global(?:\.\w+)*\.(?:f32|b32)", fp8_ptx["per_tensor"])


def _cuobjdump():
    triton = pytest.importorskip("triton", reason="the SASS check uses Triton's bundled cuobjdump")
    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    if not tool.exists():
        pytest.skip(f"no cuobjdump at {tool}")
    return tool


@pytest.mark.dsl
def test_wgmma_batches_stay_in_flight_in_the_sass(fp8_ptx):
    """ptxas serializes every wgmma of a kernel (warning C7514: a wait after each one) when it sees an
    accumulator read while its wgmma may be in flight; the double-buffered loop is written so that it does not.
    In the SASS: a k-tile's 4 QGMMA are issued back to back and most waits leave one batch in flight."""
    tool = _cuobjdump()
    for kind in ("per_tensor", "block"):
        sass = subprocess.run([str(tool), "-sass", str(fp8_ptx[kind + "_cubin"])], capture_output=True,
                              text=True, timeout=120).stdout
        waits = re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, 0x(\d)", sass)
        qgmma = sass.count("QGMMA.64x128x32.F32.E4M3.E4M3")
        assert qgmma == 4 * (_default_run() + 1), (kind, qgmma)
        assert waits.count("1") >= _default_run() and waits.count("0") <= 4, (kind, waits)


def _default_run():
    from layoutlab.kernels.hopper_fp8 import HopperFp8Config
    return HopperFp8Config().overlap_run


# ---------------------------------------------------------------------------------------------------
# GPU: against float64, beside cuBLASLt
# ---------------------------------------------------------------------------------------------------

def make_problem(m, n, k, seed=0, block=False, k_pad=None):
    """torch CUDA operands: A (M, K) e4m3 row-major, B = b.T with b (N, K) row-major, standard-normal data
    quantised to e4m3 (per-tensor: A scaled by 1/2, B by 4 before rounding; block: DeepSeek's 1 x 128 and
    128 x 128 scales of data spread over 4 orders of magnitude per row), and the float64 reference of what the
    kernel computes from them."""
    import torch
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, k))
    w = rng.standard_normal((n, k))
    if block:
        x *= 10.0 ** rng.uniform(-2, 2, (m, 1))
        sa, sb = block_scales(x, 1, 128), block_scales(w, 128, 128)
        qa, qb = quantize_blocks(x, sa, 1, 128), quantize_blocks(w, sb, 128, 128)
        ref = (qa * np.repeat(sa, 128, 1)[:, :k]) @ (qb * np.repeat(np.repeat(sb, 128, 0), 128, 1)[:n, :k]).T
        scales = dict(scale_a=torch.tensor(sa, device="cuda"), scale_b=torch.tensor(sb, device="cuda"))
    else:
        qa, qb = quantize_e4m3(x * 2.0), quantize_e4m3(w / 4.0)
        ref = (qa @ qb.T) * 0.5 * 4.0
        scales = dict(scale_a=0.5, scale_b=4.0)

    def dev(q):
        kp = k_pad or k
        t = torch.zeros((q.shape[0], kp), dtype=torch.float32, device="cuda")
        t[:, :k] = torch.tensor(q, device="cuda")
        return t.to(torch.float8_e4m3fn)[:, :k]

    return dev(qa), dev(qb).T, scales, ref


def cublaslt(A, B, scale_a, scale_b):
    """cuBLASLt's fp8 GEMM (per-tensor scales, bf16 out) on the same e4m3 operands."""
    import torch
    sa = torch.tensor(scale_a, dtype=torch.float32, device="cuda")
    sb = torch.tensor(scale_b, dtype=torch.float32, device="cuda")
    return torch._scaled_mm(A, B, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)


def check_fp8(m, n, k, seed=0, block=False, config=None, beta=0.0, c_major="N", k_pad=None):
    import torch
    from layoutlab.kernels import gemm_hopper_fp8
    A, B, scales, ref = make_problem(m, n, k, seed, block, k_pad)
    C = None
    if beta:
        pad = lambda x: -(-x // 8) * 8
        c0 = torch.randn((m, pad(n)) if c_major == "N" else (n, pad(m)), device="cuda").to(torch.bfloat16)
        C = c0[:, :n] if c_major == "N" else c0[:, :m].T
        ref = ref + beta * C.double().cpu().numpy()
    else:              # NaN-poisoned, rows padded to 16 bytes (TMA) and sliced back to N
        C = torch.full((m, -(-n // 8) * 8), float("nan"), dtype=torch.bfloat16, device="cuda")[:, :n]
    out = gemm_hopper_fp8(A, B, C, beta=beta, config=config, **scales)
    torch.cuda.synchronize()
    assert out is C
    return relative_error(out.double().cpu().numpy(), ref)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(128, 128, 128), (256, 256, 1024), (1024, 2048, 4096), (8192, 4096, 2048)])
def test_per_tensor_matches_float64_like_cublaslt(m, n, k):
    A, B, scales, ref = make_problem(m, n, k, seed=m + k)
    from layoutlab.kernels import gemm_hopper_fp8
    ours = relative_error(gemm_hopper_fp8(A, B, **scales).double().cpu().numpy(), ref)
    theirs = relative_error(cublaslt(A, B, **scales).double().cpu().numpy(), ref)
    # both round the same fp32-ish sum to bf16 (~2^-9 relative): within 10 % of each other
    assert ours < 4e-3 and ours <= 1.1 * theirs + 1e-5, (ours, theirs)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,k_pad", [(1, 8, 16, None), (77, 200, 48, None), (257, 136, 1000, 1008),
                                         (1023, 513, 4112, None), (130, 1000, 129, 144), (3000, 24, 640, None)])
@pytest.mark.parametrize("block", [False, True])
def test_odd_shapes_match_float64(m, n, k, k_pad, block):
    err = check_fp8(m, n, k, seed=m * 7 + n, block=block, k_pad=k_pad)
    assert err < 4e-3, err


@pytest.mark.gpu
@pytest.mark.parametrize("interval", [0, 4, 8, 32])
def test_every_promotion_interval_is_correct(interval):
    from layoutlab.kernels.hopper_fp8 import HopperFp8Config, persistent_sms
    import torch
    cfg = HopperFp8Config(promotion_interval=interval, num_sms=persistent_sms(torch.empty(1, device="cuda"), (2, 1)))
    err = check_fp8(512, 384, 4096 + 256, seed=interval, config=cfg)
    assert err < (2e-2 if interval == 0 else 4e-3), err


@pytest.mark.gpu
@pytest.mark.parametrize("sms,cluster,m,n,k,block,beta,c_major", [
    (4, (2, 1), 1100, 1030, 520, True, 0.0, "N"),
    (2, (1, 1), 777, 640, 1000, False, 0.5, "M"),
    (8, (2, 1), 640, 768, 4100, True, -1.0, "N"),
    (132, (2, 1), 64, 64, 64, False, 0.0, "N")])
def test_persistent_tile_loop_and_beta(sms, cluster, m, n, k, block, beta, c_major):
    from layoutlab.kernels.hopper_fp8 import HopperFp8Config
    cfg = HopperFp8Config(num_sms=sms, cluster_mn=cluster)
    err = check_fp8(m, n, k, seed=sms, block=block, config=cfg, beta=beta, c_major=c_major,
                    k_pad=-(-k // 16) * 16)
    assert err < 4e-3, err


@pytest.mark.gpu
@pytest.mark.parametrize("tile_n,epi,halves", [(64, 2, 2), (128, 4, 2), (128, 4, 1), (192, 3, 2)])
@pytest.mark.parametrize("m,n,k,block", [(700, 1000, 1000, True), (300, 960, 520, True), (513, 392, 777, False)])
def test_other_tile_widths(tile_n, epi, halves, m, n, k, block):
    """64 and 128 columns (within one B block), one or two partial accumulators (the default, 192 columns
    straddling two B blocks with one partial accumulator, is every other test's)."""
    from layoutlab.kernels.hopper_fp8 import HopperFp8Config
    cfg = HopperFp8Config(tile_n=tile_n, epi_stages=epi, n_halves=halves, num_sms=16)
    err = check_fp8(m, n, k, seed=tile_n + m, block=block, config=cfg, k_pad=-(-k // 16) * 16)
    assert err < 4e-3, err


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,block,sms,beta,c_major,run,stagger", [
    (700, 1000, 1000, True, 16, 0.0, "N", 4, False),      # 8 k-tiles: two runs of 4
    (513, 392, 777, False, 4, 0.0, "N", 4, False),       # 7 k-tiles: a run and 3 one at a time
    (300, 960, 300, True, 8, 0.5, "M", 4, False),        # 3 k-tiles: shorter than a run
    (1100, 1030, 2600, True, 132, -1.0, "N", 8, False),  # 21 k-tiles, runs of 8
    (1100, 1030, 2600, True, 16, 0.0, "N", 8, True),     # the same, the second warpgroup half a run later
    (256, 256, 128, False, 2, 0.0, "N", 2, False)])      # one k-tile
def test_double_buffered_partials(m, n, k, block, sms, beta, c_major, run, stagger):
    """partials=2: k-tile j in p[j % 2], promoted under k-tile j + 1's MMAs, runs of ``overlap_run``, the rest of K
    one k-tile at a time; several tiles per CTA (few SMs), beta, column-major C, staggered runs."""
    from layoutlab.kernels.hopper_fp8 import HopperFp8Config
    cfg = HopperFp8Config(tile_n=128, epi_stages=4, partials=2, overlap_run=run, stagger=stagger, num_sms=sms)
    err = check_fp8(m, n, k, seed=m + run, block=block, config=cfg, beta=beta, c_major=c_major,
                    k_pad=-(-k // 16) * 16)
    assert err < 4e-3, err


def sanitize_main():
    from layoutlab.kernels.hopper_fp8 import HopperFp8Config
    worst = 0.0
    for m, n, k, block in [(200, 136, 272, False), (300, 260, 520, True)]:
        worst = max(worst, check_fp8(m, n, k, block=block, k_pad=-(-k // 16) * 16))
    worst = max(worst, check_fp8(520, 300, 640, block=True, config=HopperFp8Config(num_sms=4)))
    worst = max(worst, check_fp8(260, 300, 640, beta=0.5, config=HopperFp8Config(num_sms=2, promotion_interval=8)))
    worst = max(worst, check_fp8(300, 520, 400, block=True, config=HopperFp8Config(num_sms=4, tile_n=128, epi_stages=4,
                                                                                   n_halves=1), k_pad=400))
    worst = max(worst, check_fp8(520, 300, 777, block=True, config=HopperFp8Config(num_sms=4), k_pad=784))
    worst = max(worst, check_fp8(520, 300, 2600, block=True, config=HopperFp8Config(num_sms=4, stagger=True),
                                 k_pad=2608))
    print(f"sanitize runs done, worst relative error {worst:.3g}")
    sys.exit(0 if worst < 4e-3 else 1)


if __name__ == "__main__" and sys.argv[1:] == ["sanitize"]:
    sys.path.insert(0, LIB)
    sanitize_main()


# ---------------------------------------------------------------------------------------------------
# CI: the recorded H200 run (results/gemm_fp8_h200.json and its folder)
# ---------------------------------------------------------------------------------------------------

RESULTS = Path(__file__).resolve().parents[2] / "results"
#: the sweeps that chose the default (results/gemm_fp8_h200/README.md says what each side was)
SWEEPS = ("overlap_sweep", "design_sweep", "scales_ahead_sweep")


def _record():
    import json
    return json.loads((RESULTS / "gemm_fp8_h200.json").read_text())


def _sweep(name):
    import json
    return json.loads((RESULTS / _record()["related"][name]).read_text())


def test_recorded_run_passed_its_gpu_tests_and_sanitizers():
    rec = _record()
    assert rec["gpu"].startswith("NVIDIA H200") and rec["versions"]["nvidia-cutlass-dsl"]
    log = (RESULTS / rec["gpu_checks"]["tests"]).read_text()
    passed, = re.findall(r"(\d+) passed", log.splitlines()[-1])
    assert int(passed) >= 30 and not re.search(r"\d+ (failed|error)", log)
    tools = set()
    for path in rec["gpu_checks"]["sanitizer"]:
        text = (RESULTS / path).read_text()
        assert "sanitize runs done" in text
        assert ("ERROR SUMMARY: 0 errors" in text or "RACECHECK SUMMARY: 0 hazards" in text), path
        tools.add(re.search(r"sanitize_(\w+)\.log", path).group(1))
    assert tools == {"memcheck", "racecheck", "synccheck"}


def test_recorded_goals_follow_from_the_rows():
    from layoutlab.bench.gemm import fp8_goals
    rec = _record()
    assert rec["goals"] == fp8_goals(rec["rows"])
    for g in rec["goals"]:
        assert g["met"] == (g["margin_pct"] >= 0)
    for r in rec["rows"]:
        assert r["pct_cublas"] == pytest.approx(100 * r["cublas_ms"] / r["ms"])
        assert r["tflops"] == pytest.approx(2 * r["m"] * r["n"] * r["k"] / r["ms"] / 1e9)
        assert r["cublas_tflops"] == pytest.approx(2 * r["m"] * r["n"] * r["k"] / r["cublas_ms"] / 1e9)
        if r["kernel"] == "gemm_hopper_fp8":           # per-tensor: the same bits as cuBLASLt (default accumulation)
            assert r["rel_err_vs_cublas"] == 0.0


def test_recorded_config_is_the_default():
    """The bench measured HopperFp8Config() (its fields as the record lists them; num_sms is the GPU's)."""
    import dataclasses
    from layoutlab.kernels.hopper_fp8 import HopperFp8Config
    rec = _record()
    default = {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(HopperFp8Config()).items()}
    for key, value in default.items():
        if key != "num_sms":
            assert rec["config"][key] == value, key
    assert rec["config"]["num_sms"] == rec["info"]["sm_count"]


def test_recorded_accuracy_columns_are_cublaslt_modes():
    """Promoting every 4 k-blocks gives cuBLASLt's default error, never promoting its fast accumulation's."""
    rec = _record()
    assert [r["k"] for r in rec["accuracy"]] == sorted(r["k"] for r in rec["accuracy"])
    for row in rec["accuracy"]:
        assert row["interval_0"] == row["cublaslt_fast_accum"] and row["interval_4"] == row["cublaslt"]
        assert row["interval_4"] <= row["interval_8"] <= row["interval_16"] <= row["interval_32"] <= row["interval_0"]


@pytest.mark.parametrize("name", SWEEPS)
def test_recorded_sweep_rows_follow_from_their_rounds(name):
    """Each side's time is the median of its rounds; TFLOP/s and % of cuBLASLt follow from it; every per-tensor
    configuration that promotes every k-tile gives cuBLASLt's bits, the block-scaled sides the error of the
    accuracy table's promotion every 4 k-blocks at the same K (within 5 %)."""
    import json
    import statistics
    sweep, acc = _sweep(name), {a["k"]: a for a in _record()["accuracy"]}
    assert sweep["gpu"].startswith("NVIDIA H200") and sweep["versions"]["nvidia-cutlass-dsl"]
    sizes = sorted({r["m"] for r in sweep["rows"]})
    assert sizes == [4096, 8192] and not [r for r in sweep["rows"] if "error" in r]
    for size in sizes:
        rows = [r for r in sweep["rows"] if r["m"] == size]
        lt = next(r for r in rows if r["side"] == "cublaslt")
        for r in rows:
            assert len(r["round_ms"]) == sweep["rounds"] and r["ms"] == statistics.median(r["round_ms"])
            assert r["tflops"] == pytest.approx(2 * size ** 3 / r["ms"] / 1e9)
            assert r["pct_cublaslt"] == pytest.approx(100 * lt["ms"] / r["ms"])
            if r["side"] == "cublaslt":
                continue
            config, kind = r["side"].rsplit(" ", 1)
            config = json.loads(config)
            if kind == "per-tensor" and config.get("promotion_interval", 4) == 4:
                assert r["rel_err"] == 0.0, r["side"]
            elif kind == "per-tensor":
                assert r["rel_err"] > 0.0                # never promoting: cuBLASLt's fast accumulation, not its default
            else:
                assert kind == "block" and abs(r["rel_err"] / acc[size]["interval_4"] - 1) < 0.05, r["side"]


def test_recorded_ncu_profiles_the_three_kernels():
    """ncu_fp8.txt and ncu_fp8_source.txt profile ours per-tensor (kernel 0), ours block-scaled (1) and cuBLASLt's
    (3, an nvjet kernel); the source file lists each kernel's SASS lines with the most stall samples."""
    rec = _record()
    text = (RESULTS / rec["related"]["ncu"]).read_text()
    kernels = re.findall(r"^  (.+?) \((\d+), (\d+), (\d+)\)x\((\d+), 1, 1\), Context", text, re.M)
    assert [k[0].startswith("kernel_cutlass") for k in kernels] == [True, True, False, False]
    assert kernels[3][0].startswith("nvjet_sm90") and all(int(k[4]) == 384 for k in (kernels[0], kernels[1], kernels[3]))
    source = (RESULTS / rec["related"]["ncu_source"]).read_text()
    assert re.findall(r"^== kernel (\d+):", source, re.M) == ["0", "1", "2", "3"]


@pytest.mark.parametrize("call", [
    lambda: fp8_model.quantize_e4m3(None), lambda: fp8_model.quantize_e4m3("x"),
    lambda: fp8_model.block_scales([[1.0]], 1.5, 1), lambda: fp8_model.quantize_blocks([[1.0]], None, 1, 1),
    lambda: fp8_model.quantize_blocks([1.0], [[1.0]], 1, 1), lambda: fp8_model.promotion_points("8", 1),
    lambda: fp8_model.promotion_k_tiles(1024, 4, tile_k=0), lambda: fp8_model.promotion_k_tiles(None, 4),
    lambda: fp8_model.accumulate_model([[1.0]], [[1.0], [2.0]], 0), lambda: fp8_model.accumulate_model([[1.0]], [[1.0]], 0.5),
    lambda: fp8_model.round_bf16(None), lambda: fp8_model.relative_error("a", [1.0])])
def test_the_cpu_model_refuses_wrong_kinds_with_a_layout_error(call):
    with pytest.raises(LayoutError):
        call()
