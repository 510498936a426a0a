"""The last-wave rung: the stream-K schedule (CPU), gemm_hopper_streamk's compile and refusals (CI), GPU correctness.

CI: the schedule's properties on many problems (every k-tile of every tile computed exactly once, work balanced
within one k-tile per CTA, nothing split when the waves are whole, at most two pieces per CTA) checked against a
direct enumeration of the rule, its refusals; the kernel compiles for sm_90a and its PTX holds the fixup (the
pieces stored and loaded as fp32, the release/acquire fences, the counter's atomic add). GPU (`make gpu-test`):
against float64 with NaN-poisoned C, odd sizes, every majorness, fp16 and bf16, beta != 0, grids so small that
many tail tiles are split, and the counters left zero after each call.

`python tests/kernels/test_kernels_streamk.py sanitize` runs it at small sizes (the command compute-sanitizer wraps).
"""

import functools
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from layoutlab.errors import LayoutError
from layoutlab.kernels.schedule import stream_k_schedule

LIB = str(Path(__file__).resolve().parents[2] / "lib")


# ---------------------------------------------------------------------------------------------------
# CPU: the schedule
# ---------------------------------------------------------------------------------------------------

def _problems():
    rng = np.random.default_rng(11)
    fixed = [(8192, 8192, 8192, (128, 256, 64), 132), (8192, 8192, 8192, (256, 256, 64), 66),
             (4096, 4096, 4096, (128, 256, 64), 132), (6144, 6144, 6144, (128, 256, 64), 132),
             (8000, 8000, 8000, (256, 256, 64), 66), (1100, 1030, 520, (256, 256, 64), 4),
             (1100, 1030, 64, (256, 256, 64), 4), (640, 768, 4100, (256, 256, 64), 5), (64, 64, 64, (128, 256, 64), 132),
             (128 * 132, 256, 640, (128, 256, 64), 132), (500, 1100, 300, (128, 256, 64), 7)]
    rand = [(int(rng.integers(1, 5000)), int(rng.integers(1, 5000)), int(rng.integers(1, 9000)),
             (128, 256, 64), int(rng.integers(1, 140))) for _ in range(40)]
    return fixed + rand


@pytest.mark.parametrize("m,n,k,tile,ctas", _problems())
def test_schedule_covers_every_k_tile_once(m, n, k, tile, ctas):
    s = stream_k_schedule(m, n, k, tile, ctas)
    tiles, k_iters = math.ceil(m / tile[0]) * math.ceil(n / tile[1]), math.ceil(k / tile[2])
    assert (s.tiles, s.k_iters, s.num_ctas) == (tiles, k_iters, min(ctas, tiles))
    seen = np.zeros((tiles, k_iters), np.int64)
    for units in s.units:
        for t, b, e in units:
            assert 0 <= b < e <= k_iters
            seen[t, b:e] += 1
    assert (seen == 1).all()


@pytest.mark.parametrize("m,n,k,tile,ctas", _problems())
def test_schedule_balances_work_within_one_k_tile(m, n, k, tile, ctas):
    s = stream_k_schedule(m, n, k, tile, ctas)
    work = s.k_iters_per_cta()
    assert sum(work) == s.tiles * s.k_iters
    assert max(work) - min(work) <= 1
    # the busiest CTA: ceil of the average, instead of ceil(waves) whole tiles without the split
    assert max(work) == math.ceil(s.tiles * s.k_iters / s.num_ctas)
    for units in s.units:          # the whole waves, then at most two pieces of the tail
        assert len(units) <= s.tiles // s.num_ctas + 2


@pytest.mark.parametrize("m,n,k,tile,ctas", _problems())
def test_owner_of_each_tail_k_tile_is_the_cta_that_computes_it(m, n, k, tile, ctas):
    from layoutlab.kernels.schedule import stream_k_owner
    s = stream_k_schedule(m, n, k, tile, ctas)
    for c, units in enumerate(s.units):
        for t, b, e in units:
            if t >= s.dp_tiles:
                i0 = (t - s.dp_tiles) * s.k_iters
                assert {stream_k_owner(i, s.num_ctas, s.sk_iters) for i in range(i0 + b, i0 + e)} == {c}


@pytest.mark.parametrize("m,n,k,tile,ctas", _problems())
def test_schedule_matches_the_rule_enumerated(m, n, k, tile, ctas):
    """The rule in the module's words, enumerated k-tile by k-tile: CTA c owns whole tiles c, c + P, ... of the
    whole waves, then the tail's k-tiles [c * S // P, (c + 1) * S // P) in tile order."""
    s = stream_k_schedule(m, n, k, tile, ctas)
    p, kt = s.num_ctas, s.k_iters
    waves = s.tiles // p
    tail = s.tiles - waves * p
    S = tail * kt
    for c in range(p):
        want = [(c + w * p, 0, kt) for w in range(waves)]
        owned = [i for i in range(S) if c * S // p <= i < (c + 1) * S // p]
        for i in owned:                       # group consecutive k-tiles of one tile into a piece
            t, kk = waves * p + i // kt, i % kt
            if want and want[-1][0] == t and want[-1][2] == kk:
                want[-1] = (t, want[-1][1], kk + 1)
            else:
                want.append((t, kk, kk + 1))
        assert list(s.units[c]) == want, c


def test_schedule_whole_waves_split_nothing():
    s = stream_k_schedule(4096, 4096, 4096, (128, 256, 64), 128)       # 32 x 16 = 512 tiles = 4 waves of 128
    assert (s.tiles, s.tail_tiles, s.sk_iters, s.idle_fraction) == (512, 0, 0, 0)
    assert all(len(us) == 4 and all((b, e) == (0, 64) for _, b, e in us) for us in s.units)
    few = stream_k_schedule(300, 300, 300, (128, 256, 64), 132)        # 3 x 2 tiles: 6 CTAs, one tile each
    assert few.num_ctas == 6 and few.units == tuple(((t, 0, 5),) for t in range(6))


def test_schedule_wave_arithmetic_of_8192_cubed():
    """By hand: 64 x 32 = 2048 tiles on 132 CTAs = 15 waves + 68 tiles; 68 x 128 = 8704 tail k-tiles, 65.9 per
    CTA; without the split the last wave runs 68 of 132 CTAs: 64 / 132 of a wave idle = 3.0 % of 16 waves."""
    s = stream_k_schedule(8192, 8192, 8192, (128, 256, 64), 132)
    assert (s.tiles, s.full_waves, s.tail_tiles, s.sk_iters) == (2048, 15, 68, 8704)
    assert s.idle_fraction == pytest.approx((132 - 68) / 132 / 16)
    assert s.makespan(split=False) == 16 and s.makespan() == pytest.approx(15 + 66 / 128)
    for t in range(s.dp_tiles, s.tiles):       # each tail tile: 2 or 3 pieces, contiguous in k
        pieces = s.pieces(t)
        assert 2 <= len(pieces) <= 3 and pieces[0][1] == 0 and pieces[-1][2] == 128
        assert all(a[2] == b[1] for a, b in zip(pieces, pieces[1:]))


@pytest.mark.parametrize("args,match", [
    ((0, 8, 8, (128, 256, 64), 132), "M=0"),
    ((8, 8.0, 8, (128, 256, 64), 132), "N=8.0"),
    ((8, 8, True, (128, 256, 64), 132), "K=True"),
    ((8, 8, 8, (128, 256), 132), "tile_mnk"),
    ((8, 8, 8, [128, 256, 64], 132), "tile_mnk"),
    ((8, 8, 8, (128, 0, 64), 132), "tile_mnk"),
    ((8, 8, 8, (128, 256, 64), 0), "num_ctas=0"),
    ((8, 8, 8, (128, 256, 64), "132"), "num_ctas='132'"),
])
def test_schedule_refuses_bad_input(args, match):
    with pytest.raises(LayoutError, match=match):
        stream_k_schedule(*args)


def test_schedule_pieces_refuses_a_tile_outside():
    s = stream_k_schedule(1000, 1000, 1000, (128, 256, 64), 8)
    with pytest.raises(LayoutError, match=r"tile 32 is not in \[0, 32\)"):
        s.pieces(32)


def test_kernel_schedule_is_in_cluster_tiles():
    from layoutlab.kernels.hopper_streamk import HopperStreamKConfig, kernel_schedule
    s = kernel_schedule(8000, 8000, 8000, HopperStreamKConfig(num_sms=132))
    # 63 x 32 CTA tiles -> 32 x 32 cluster tiles of 2 x 1 over 66 clusters
    assert (s.tile_mnk, s.num_ctas, s.tiles, s.full_waves, s.tail_tiles, s.k_iters) == (
        (256, 256, 64), 66, 1024, 15, 34, 125)
    with pytest.raises(LayoutError, match="timeline"):
        HopperStreamKConfig(timeline=True)


# ---------------------------------------------------------------------------------------------------
# CI: compile for sm_90a on the CPU, read the PTX; refusals before any CUDA call
# ---------------------------------------------------------------------------------------------------

_COMPILE_SCRIPT = textwrap.dedent("""
    import sys, warnings
    from pathlib import Path
    sys.path.insert(0, {lib!r})
    warnings.simplefilter("error", DeprecationWarning)
    from layoutlab.kernels.hopper_streamk import compile_hopper_gemm_streamk
    compile_hopper_gemm_streamk("bfloat16", "K", "K", "N")
    compile_hopper_gemm_streamk("float16", "M", "N", "M", with_beta=True)
""")


@pytest.fixture(scope="module")
def streamk_ptx(tmp_path_factory):
    """PTX of bf16 TN and fp16 NT (C column-major, beta != 0), compiled in a subprocess (the DSL reads
    CUTE_DSL_ARCH/KEEP at import; a native crash must not take pytest down)."""
    pytest.importorskip("cutlass", reason="needs nvidia-cutlass-dsl")
    dump = tmp_path_factory.mktemp("ptx")
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=str(dump))
    proc = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT.format(lib=LIB)],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    ptx = {p.name: p.read_text() for p in dump.glob("*.ptx")}
    assert len(ptx) == 2, sorted(ptx)
    return ptx


@pytest.mark.dsl
def test_streamk_ptx_structure(streamk_ptx):
    for name, ptx in streamk_ptx.items():
        words = " ".join(ptx.split())
        assert ".target sm_90a" in ptx
        # the ws rung's machinery: 2 consumer warpgroups of m64n256k16, setmaxnreg, B multicast, TMA stores
        assert words.count("wgmma.mma_async.sync.aligned.m64n256k16.f32") == 4, name
        assert ".reqntid 384, 1, 1" in words
        assert "setmaxnreg.inc.sync.aligned.u32 232;" in words
        assert "multicast::cluster" in ptx and "cp.async.bulk.tensor.2d.global.shared::cta" in ptx
        # the fixup: each thread stores its 128 fp32 accumulators to the workspace (and, when its CTA finishes
        # the tile, loads the other pieces), fences at GPU scope (release, then acquire), one counter atomic
        assert words.count("fence.acq_rel.gpu") == 2, name
        assert words.count("atom.global.acq_rel.add.u32") == 1, name
        assert words.count("st.global.b32") >= 128 and words.count("ld.global.b32") >= 128, name
        assert "red.relaxed.gpu.global.add.f32" not in words and "exch" not in words   # no atomics on the data
        assert "ld.volatile" not in words           # no spinning: nobody polls a flag


def _op(a):
    from layoutlab.kernels._common import DeviceOperand
    return DeviceOperand(a, a.shape, a.strides, a.itemsize, a.dtype, a.ctypes.data)


def _aligned(shape, dtype=np.float16):
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.zeros(n + 128, np.uint8)
    start = -raw.ctypes.data % 128
    return raw[start:start + n].view(dtype).reshape(shape)


def _streamk(*args, **kw):
    from layoutlab.kernels import gemm_hopper_streamk
    return gemm_hopper_streamk(*args, **kw)


def test_streamk_refusals_before_cuda():
    with pytest.raises(LayoutError, match="cupy array or a torch CUDA tensor"):
        _streamk(np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float16))
    a = _aligned((64, 64), np.float32)
    with pytest.raises(LayoutError, match="dtype float32"):
        _streamk(_op(a), _op(a.T))
    with pytest.raises(LayoutError, match="multiple of 8"):
        _streamk(_op(_aligned((64, 1001))), _op(_aligned((64, 1008))[:, :1001].T))


# ---------------------------------------------------------------------------------------------------
# GPU: correctness against float64 (check_gemm from test_kernels_hopper: NaN-poisoned C, fresh data)
# ---------------------------------------------------------------------------------------------------

def _config(sms, cluster=(2, 1)):
    from layoutlab.kernels.hopper_streamk import HopperStreamKConfig
    return HopperStreamKConfig(num_sms=sms, cluster_mn=cluster)


def _with(sms, cluster=(2, 1)):
    from layoutlab.kernels.hopper_streamk import gemm_hopper_streamk
    return functools.partial(gemm_hopper_streamk, config=_config(sms, cluster))


def _cases():
    sizes = [(128, 256, 64), (1, 8, 1), (77, 200, 33), (1023, 513, 771), (4096, 4096, 4096), (3000, 5000, 2000),
             (2048, 2048, 2048)]
    cases = [(m, n, k, ["TN", "NT", "NN", "TT"][i % 4], "N") for i, (m, n, k) in enumerate(sizes)]
    return cases + [(300, 264, 520, "TN", "M"), (2500, 4100, 1500, "NT", "M")]


@pytest.mark.gpu
@pytest.mark.parametrize("lib,dtype", [("cupy", "float16"), ("torch", "bfloat16")])
@pytest.mark.parametrize("m,n,k,layout,c_major", _cases())
def test_streamk_matches_float64(lib, dtype, m, n, k, layout, c_major):
    if lib == "torch":
        pytest.importorskip("torch")
    from test_kernels_hopper import check_gemm
    err = check_gemm(_streamk, lib, dtype, layout, m, n, k, c_major=c_major, seed=m + n + k)
    assert err < 1e-2, f"{dtype} {layout} {m}x{n}x{k}: relative error {err:.3g}"


#: small persistent grids: many waves, tails split in 2-3 pieces, one whole-wave case, k_iters = 1, no cluster, 2 x 2
_SMALL = [
    (8, (2, 1), 1100, 1030, 520, "TN", "N", 0.0),     # 5 x 5 cluster tiles over 4: 6 waves + 1 tile of 9 k-tiles
    (6, (2, 1), 777, 1500, 1000, "NT", "M", 0.5),     # 4 x 6 over 3: 8 whole waves, nothing split
    (10, (2, 1), 640, 768, 4100, "NN", "N", -1.0),    # 3 x 3 over 5: 1 wave + 4 tiles of 65 k-tiles over 5
    (8, (2, 1), 1100, 1030, 64, "TT", "N", 0.0),      # k_iters = 1: the tail tile stays whole
    (7, (1, 1), 500, 1100, 300, "TT", "M", 0.0),      # 4 x 5 over 7 CTAs: 2 waves + 6 tiles of 5 k-tiles
    (20, (2, 2), 1000, 1100, 700, "TN", "N", 2.0),    # A and B multicast: 4 x 3 over 5: 2 waves + 2 tiles
    (132, (2, 1), 64, 256, 64, "TT", "N", 0.0),       # one tile
]


@pytest.mark.gpu
@pytest.mark.parametrize("sms,cluster,m,n,k,layout,c_major,beta", _SMALL)
def test_streamk_small_grids_split_the_tail(sms, cluster, m, n, k, layout, c_major, beta):
    from test_kernels_hopper import check_gemm
    for seed in (m, m + 1):          # twice: the second call finds the counters zero again
        err = check_gemm(_with(sms, cluster), "cupy", "float16", layout, m, n, k, c_major=c_major,
                         alpha=1.5, beta=beta, seed=seed)
        assert err < 1e-2, err
    import cupy
    from layoutlab.kernels.hopper_streamk import _WORKSPACES
    mine = [v for key, v in _WORKSPACES.items() if key[2] == sms]
    assert mine and all(int(cupy.count_nonzero(cnt)) == 0 for _, cnt in mine)


@pytest.mark.gpu
def test_streamk_sass_has_no_spills(tmp_path):
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", CUTE_DSL_KEEP="sass", CUTE_DSL_DUMP_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT.format(lib=LIB)],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    sass = "".join(p.read_text() for p in tmp_path.glob("*.sass"))
    assert "HGMMA.64x256x16.F32" in sass and "UTMALDG" in sass and "UTMASTG" in sass
    assert not re.search(r"\b(LDL|STL)\b", sass), "local-memory traffic (register spills)"


def sanitize_main():
    from test_kernels_hopper import check_gemm
    worst = 0.0
    for sms, cluster, m, n, k, layout, c_major, beta in _SMALL[:4]:
        worst = max(worst, check_gemm(_with(sms, cluster), "cupy", "float16", layout, m, n, k, c_major=c_major,
                                      alpha=1.5, beta=beta))
    worst = max(worst, check_gemm(_streamk, "torch", "bfloat16", "TN", 1100, 1030, 520))
    print(f"sanitize runs done, worst relative error {worst:.3g}")
    sys.exit(0 if worst < 1e-2 else 1)


if __name__ == "__main__" and sys.argv[1:] == ["sanitize"]:
    sys.path.insert(0, LIB)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sanitize_main()


# ---------------------------------------------------------------------------------------------------
# CI: the recorded H200 runs (results/gemm_ladder_h100/streamk_*) and what their README says of them
# ---------------------------------------------------------------------------------------------------

RESULTS = Path(__file__).resolve().parents[2] / "results" / "gemm_ladder_h100"


@pytest.mark.parametrize("call", [1, 2])
def test_recorded_streamk_runs_are_consistent(call):
    import json
    import statistics
    rec = json.loads((RESULTS / f"streamk_call{call}_bench.json").read_text())
    assert "H200" in rec["gpu"] and rec["date"] and rec["versions"]["nvidia-cutlass-dsl"]
    rows = {(r["kernel"], r["m"]): r for r in rec["rows"]}
    readme = " ".join((RESULTS / "streamk_README.md").read_text().split())
    line = next(x for x in (RESULTS / "streamk_README.md").read_text().splitlines() if x.startswith(f"| {call} "))
    for r in rec["rows"]:
        assert r["ms"] == pytest.approx(statistics.median(r["ms_rounds"]))
        assert r["pct_cublas"] == pytest.approx(100 * statistics.median(r["cublas_ms_rounds"]) / r["ms"])
        assert r["rel_err_vs_cublas"] < 1e-2
    for s in rec["schedules"]:
        sk, ws = rows[("gemm_hopper_streamk", s["m"])], rows[("gemm_hopper_ws", s["m"])]
        assert s["streamk_vs_ws_pct"] == pytest.approx(100 * ws["ms"] / sk["ms"])
        assert (f"{s['m']}^3 {sk['pct_cublas']:.1f} / {ws['pct_cublas']:.1f}") in line
        assert f"{s['streamk_vs_ws_pct']:.1f}" in line
        sched = stream_k_schedule(s["m"], s["n"], s["k"], (256, 256, 64), 66)
        assert (s["tiles"], s["tail_tiles"]) == (sched.tiles, sched.tail_tiles)
        assert f"(66 - {sched.tail_tiles}) / 66" in readme
    assert re.search(r"\b26 passed\b", (RESULTS / f"streamk_call{call}_tests.log").read_text())
    assert "ERROR SUMMARY: 0 errors" in (RESULTS / f"streamk_call{call}_sanitize_memcheck.log").read_text()
    if call == 1:
        assert "RACECHECK SUMMARY: 0 hazards" in (RESULTS / "streamk_call1_sanitize_racecheck.log").read_text()


def test_the_rung_reads_the_library_versions_record():
    from layoutlab.kernels.ladder import rung, rung_checks, rung_row
    r = rung("gemm_hopper_streamk")
    assert r.prev == "gemm_hopper_ws" and r.branch and r.record == "gemm_ladder_h200"
    assert rung_row(r)["kernel"] == "gemm_hopper_streamk"
    assert rung_checks(r) == {"log": "gemm_ladder_h200/alltests.txt:test_kernels_streamk.py", "passed": 26,
                              "failed": 0}


# ---------------------------------------------------------------------------------------------------
# CI: the split rule (stream_k_pays), the kernel's two schedules, and the H200 sweep that priced the split
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("m,n,k,tile,ctas", _problems())
def test_stream_k_pays_weighs_the_saving_against_the_price(m, n, k, tile, ctas):
    from layoutlab.kernels.schedule import FIXUP_COST, stream_k_pays
    s = stream_k_schedule(m, n, k, tile, ctas)
    d = stream_k_pays(m, n, k, tile, ctas)
    # saved: the busiest CTA's k-tiles without the split (ceil(waves) whole tiles) minus with it (the schedule's)
    assert d.saved_k_tiles == s.makespan(split=False) * s.k_iters - max(s.k_iters_per_cta())
    assert d.cost_k_tiles == pytest.approx(FIXUP_COST[0] + FIXUP_COST[1] * s.k_iters)
    assert d.split == (d.saved_k_tiles > d.cost_k_tiles) and d.net_k_tiles == d.saved_k_tiles - d.cost_k_tiles
    if s.tail_tiles == 0:
        assert d.saved_k_tiles == 0 and not d.split
    assert stream_k_pays(m, n, k, tile, ctas, cost=(0, 0)).split == (d.saved_k_tiles > 0)


def test_stream_k_pays_refuses_a_bad_price():
    from layoutlab.kernels.schedule import stream_k_pays
    for bad in ((-1, 0), (1, -0.1), (1,), [1, 0.3], (True, 0.3), ("8", 0.3)):
        with pytest.raises(LayoutError, match="cost="):
            stream_k_pays(8192, 8192, 8192, (256, 256, 64), 66, cost=bad)
    with pytest.raises(LayoutError, match="num_ctas=0"):
        stream_k_pays(8192, 8192, 8192, (256, 256, 64), 0)


@pytest.mark.parametrize("m,n,k,sms", [(4096, 4096, 4096, 132), (8192, 8192, 8192, 132), (1100, 1030, 520, 8),
                                       (640, 768, 4100, 10), (500, 1100, 300, 14), (8000, 8000, 8000, 132)])
def test_the_kernel_params_without_the_split_run_every_tile_whole_once(m, n, k, sms):
    """split=False hands stream_k_unit (the kernel's own arithmetic) every tile as one whole unit: the ws schedule,
    the last wave partial; split=True is the stream-K schedule."""
    from layoutlab.kernels.hopper_streamk import HopperStreamKConfig, kernel_params, kernel_schedule
    from layoutlab.kernels.schedule import stream_k_split, stream_k_unit
    cfg = HopperStreamKConfig(num_sms=sms)
    s = kernel_schedule(m, n, k, cfg)
    assert kernel_params(m, n, k, cfg, True) == (True, stream_k_split(s.tiles, s.num_ctas, s.k_iters))
    split, params = kernel_params(m, n, k, cfg, False)
    assert not split and params == (math.ceil(s.tiles / s.num_ctas), s.tiles, 0)
    seen = []
    for c in range(s.num_ctas):
        u = 0
        while True:
            t, b, e = stream_k_unit(c, u, s.num_ctas, *params, s.k_iters)
            if b >= e:
                break
            assert (t, b, e) == (c + u * s.num_ctas, 0, s.k_iters)
            seen.append(t)
            u += 1
    assert sorted(seen) == list(range(s.tiles))
    with pytest.raises(LayoutError, match="split='yes'"):
        _streamk(_op(_aligned((64, 64))), _op(_aligned((64, 64)).T), split="yes")


def test_the_split_price_record_fits_the_rule():
    """results/gemm_ladder_h200/streamk_fixup.json (H200, tools/streamk_fixup.py): per problem the split's gain in
    k-tile times and its price (saved - gained); the least-squares line through the prices is FIXUP_COST."""
    import json
    import statistics
    from layoutlab.kernels.schedule import FIXUP_COST, stream_k_pays
    rec = json.loads((RESULTS.parent / "gemm_ladder_h200" / "streamk_fixup.json").read_text())
    assert rec["gpu"] == "NVIDIA H200" and rec["versions"]["nvidia-cutlass-dsl"] and len(rec["rows"]) == 13
    for r in rec["rows"]:
        for name in ("ws", "split", "nosplit"):
            assert r["ms"][name] == pytest.approx(statistics.median(r["ms_rounds"][name]))
            assert r["rel_err_vs_cublas"][name] < 1e-2
        assert r["saved_k_tiles"] == stream_k_pays(r["m"], r["n"], r["k"], (256, 256, 64), r["clusters"],
                                                   cost=(0, 0)).saved_k_tiles
        k_tile_ms = r["ms"]["ws"] / (math.ceil(r["tiles"] / r["clusters"]) * r["k_iters"])
        assert r["gained_k_tiles"] == pytest.approx((r["ms"]["ws"] - r["ms"]["split"]) / k_tile_ms)
        assert r["price_k_tiles"] == pytest.approx(r["saved_k_tiles"] - r["gained_k_tiles"])
    xs, ys = [r["k_iters"] for r in rec["rows"]], [r["price_k_tiles"] for r in rec["rows"]]
    c1 = statistics.covariance(xs, ys) / statistics.variance(xs)
    c0 = statistics.mean(ys) - c1 * statistics.mean(xs)
    assert (c0, c1) == (pytest.approx(rec["fit"]["c0"]), pytest.approx(rec["fit"]["c1"]))
    assert FIXUP_COST == (round(c0, 1), round(c1, 2)) == (8.4, 0.31)


@pytest.mark.parametrize("config, split", [(None, None), ("cfg", None), ("default", "yes")])
def test_kernel_params_refuses_a_wrong_config_or_split(config, split):
    from layoutlab.kernels.hopper_streamk import HopperStreamKConfig, kernel_params
    with pytest.raises(LayoutError, match="kernel_params"):
        kernel_params(8192, 8192, 8192, HopperStreamKConfig() if config == "default" else config, split)
