"""gemm_hopper_pingpong: CPU compile + PTX checks (CI), refusals before any CUDA call, GPU correctness.

CI (no GPU): the kernel compiles for sm_90a on the CPU and its PTX holds the ping-pong structure (a 256-thread
ordering barrier that one consumer warpgroup syncs on and the other arrives at, one 128-thread epilogue barrier
per consumer). GPU (`make gpu-test`): odd sizes, every majorness, fp16 (cupy) and bf16 (torch) against float64,
C pre-filled with NaN, and persistent grids so small that CTAs hold an odd number of tiles.

`python tests/kernels/test_kernels_pingpong.py sanitize` runs it at small sizes (the command compute-sanitizer wraps).
"""

import functools
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from layoutlab.errors import LayoutError
from layoutlab.kernels._common import DeviceOperand

LIB = str(Path(__file__).resolve().parents[2] / "lib")

_COMPILE_SCRIPT = textwrap.dedent("""
    import json, sys, warnings
    from pathlib import Path
    sys.path.insert(0, {lib!r})
    warnings.simplefilter("error", DeprecationWarning)
    from layoutlab.kernels.hopper_pingpong import compile_hopper_gemm_pingpong
    compile_hopper_gemm_pingpong("bfloat16", "K", "K", "N")
    compile_hopper_gemm_pingpong("float16", "M", "N", "M", with_beta=True)
    ptx = {{p.name: p.read_text() for p in Path({dump!r}).glob("*.ptx")}}
    print(json.dumps({{"bf16": "".join(t for n, t in ptx.items() if "bf16" in n.lower() or "BFloat16" in n),
                      "f16": "".join(t for n, t in ptx.items() if "Float16M" in n)}}))
""")


@pytest.fixture(scope="module")
def pingpong_ptx(tmp_path_factory):
    """PTX of bf16 TN and fp16 NT (C column-major, beta != 0), compiled in a subprocess (the DSL reads
    CUTE_DSL_ARCH/KEEP at import; a native crash must not take pytest down)."""
    pytest.importorskip("cutlass", reason="needs nvidia-cutlass-dsl")
    dump = tmp_path_factory.mktemp("ptx")
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=str(dump))
    proc = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT.format(lib=LIB, dump=str(dump))],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    ptx = {p.name: p.read_text() for p in dump.glob("*.ptx")}
    assert len(ptx) == 2, sorted(ptx)
    return ptx


@pytest.mark.dsl
def test_pingpong_ptx_structure(pingpong_ptx):
    for name, ptx in pingpong_ptx.items():
        words = " ".join(ptx.split())
        assert ".target sm_90a" in ptx
        dt = "bf16" if "bf16" in words.split("wgmma.mma_async.sync.aligned.m64n256k16.f32.")[1][:4] else "f16"
        # one warpgroup's wgmma: 64 x 256 x 16, and 4 of them per 64-deep k-tile (unrolled)
        assert words.count(f"wgmma.mma_async.sync.aligned.m64n256k16.f32.{dt}.{dt}") == 4, name
        # 1 producer + 2 consumer warpgroups, registers moved from the producer to the consumers
        assert ".reqntid 384, 1, 1" in words and ".minnctapersm 1" in words
        assert "setmaxnreg.dec.sync.aligned.u32 40;" in words
        assert "setmaxnreg.inc.sync.aligned.u32 232;" in words
        # the ordering barrier: one consumer's bar.sync meets the other's bar.arrive, 256 threads in all
        assert re.search(r"bar\.sync %r\d+, 256;", words), name
        assert re.search(r"bar\.arrive %r\d+, 256;", words), name
        # each consumer's epilogue barrier counts its own warpgroup only (128), never both (256)
        assert re.search(r"bar\.sync %r\d+, 128;", words), name
        # B multicast across the 2 x 1 cluster, TMA-store epilogue through stmatrix
        assert "multicast::cluster" in ptx and "stmatrix.sync.aligned" in ptx
        assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx
        # the A/B ring: 5 stages of (64 + 256) x 64 x 2 B beside 2 x 2 C buffers of 64 x 32 x 2 B and 1 KiB
        stages = (232448 - 1024 - 2 * 2 * 64 * 32 * 2) // ((64 + 256) * 64 * 2)
        assert stages == 5
        assert len(re.findall(r"mbarrier\.init\.shared\.b64", ptx)) == 2 * stages, name


def test_pingpong_config():
    from layoutlab.kernels.hopper_pingpong import HopperPingpongConfig
    cfg = HopperPingpongConfig()
    assert (cfg.tile_m, cfg.tile_n, cfg.tile_k, cfg.cluster_mn, cfg.consumer_warpgroups) == (64, 256, 64, (4, 1), 2)
    with pytest.raises(LayoutError, match="tile_m=128"):
        HopperPingpongConfig(tile_m=128)
    with pytest.raises(LayoutError, match="epi_stages=3"):
        HopperPingpongConfig(epi_stages=3)


# ---------------------------------------------------------------------------------------------------
# CI: refusals before any CUDA call (this machine has no GPU: a CUDA call would fail otherwise)
# ---------------------------------------------------------------------------------------------------

def _op(a):
    return DeviceOperand(a, a.shape, a.strides, a.itemsize, a.dtype, a.ctypes.data)


def _aligned(shape, dtype=np.float16):
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.zeros(n + 128, np.uint8)
    start = -raw.ctypes.data % 128          # a fresh allocation's 128-byte alignment (TMA swizzle rule)
    return raw[start:start + n].view(dtype).reshape(shape)


def _pingpong(*args, **kw):
    from layoutlab.kernels import gemm_hopper_pingpong
    return gemm_hopper_pingpong(*args, **kw)


def test_pingpong_refuses_host_arrays():
    a = np.zeros((64, 64), np.float16)
    with pytest.raises(LayoutError, match="cupy array or a torch CUDA tensor"):
        _pingpong(a, a.T)


def test_pingpong_refuses_bad_dtypes_before_cuda():
    a = _aligned((64, 64), np.float32)
    with pytest.raises(LayoutError, match="dtype float32"):
        _pingpong(_op(a), _op(a.T))
    h = _aligned((64, 64))
    with pytest.raises(LayoutError, match="C has dtype float32"):
        _pingpong(_op(h), _op(h.T), _op(_aligned((64, 64), np.float32)))


def test_pingpong_refuses_misaligned_strides_before_cuda():
    a = _aligned((64, 1008))[:, :1001]          # fine: stride 1008 elements
    bad = _aligned((64, 1001))                  # stride 1001 elements: not a multiple of 8
    b = _aligned((64, 1008))[:, :1001].T
    with pytest.raises(LayoutError, match="multiple of 8"):
        _pingpong(_op(bad), _op(b))
    with pytest.raises(LayoutError, match="beta=0.5 needs an input C"):
        _pingpong(_op(a), _op(b), beta=0.5)


# ---------------------------------------------------------------------------------------------------
# GPU: correctness against float64 (check_gemm from test_kernels_hopper: NaN-poisoned C, fresh data)
# ---------------------------------------------------------------------------------------------------

def _cases():
    rng = np.random.default_rng(25)
    sizes = [(64, 256, 64), (1, 8, 1), (77, 200, 33), (257, 136, 1000), (1023, 513, 771), (2048, 2048, 2048),
             (1000, 1000, 1000)]
    sizes += [tuple(int(x) for x in rng.integers(1, 1600, 3)) for _ in range(3)]
    cases = [(m, n, k, ["TN", "NT", "NN", "TT"][i % 4], "N") for i, (m, n, k) in enumerate(sizes)]
    return cases + [(300, 264, 520, "TN", "M"), (513, 1000, 64, "NT", "M")]


@pytest.mark.gpu
@pytest.mark.parametrize("lib,dtype", [("cupy", "float16"), ("torch", "bfloat16")])
@pytest.mark.parametrize("m,n,k,layout,c_major", _cases())
def test_pingpong_matches_float64(lib, dtype, m, n, k, layout, c_major):
    if lib == "torch":
        pytest.importorskip("torch")
    from test_kernels_hopper import check_gemm
    err = check_gemm(_pingpong, lib, dtype, layout, m, n, k, c_major=c_major, seed=m + n + k)
    assert err < 1e-2, f"{dtype} {layout} {m}x{n}x{k}: relative error {err:.3g}"


def _few_clusters(sms, cluster_mn=(4, 1)):
    """A persistent grid of sms / cluster-size clusters: each CTA walks many tiles, alternating between its
    two consumers (and odd counts leave consumer 1 with one tile fewer: the ordering barrier's last arrive
    must then be skipped, or the kernel hangs at exit)."""
    from layoutlab.kernels.hopper_pingpong import HopperPingpongConfig, gemm_hopper_pingpong
    return functools.partial(gemm_hopper_pingpong, config=HopperPingpongConfig(num_sms=sms, cluster_mn=cluster_mn))


@pytest.mark.gpu
@pytest.mark.parametrize("sms,cluster,m,n,k,layout,c_major,beta", [
    (8, (4, 1), 1100, 1030, 520, "TN", "N", 0.0),    # 18 x 5 tiles -> 5 x 5 cluster tiles over 2: 13 / 12
    (4, (2, 1), 777, 1500, 1000, "NT", "M", 0.5),    # 13 x 6 -> 7 x 6 over 2: 21 each (11 / 10 per consumer)
    (4, (4, 1), 640, 768, 4100, "NN", "N", -1.0),    # 10 x 3 -> 3 x 3 over 1: consumer 0 gets 5, consumer 1 4
    (4, (2, 2), 500, 1100, 300, "TT", "M", 0.0),     # A and B multicast: 8 x 5 -> 4 x 3 over 1
    (132, (4, 1), 64, 256, 64, "TT", "N", 0.0)])     # one tile: consumer 1 has none
def test_pingpong_persistent_tile_loop(sms, cluster, m, n, k, layout, c_major, beta):
    from test_kernels_hopper import check_gemm
    err = check_gemm(_few_clusters(sms, cluster), "cupy", "float16", layout, m, n, k, c_major=c_major,
                     alpha=1.5, beta=beta, seed=m)
    assert err < 1e-2, err


@pytest.mark.gpu
def test_pingpong_sass_has_hgmma_and_no_spills(tmp_path):
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", CUTE_DSL_KEEP="sass", CUTE_DSL_DUMP_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT.format(lib=LIB, dump=str(tmp_path))],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    sass = "".join(p.read_text() for p in tmp_path.glob("*.sass"))
    assert "HGMMA.64x256x16.F32" in sass and "UTMALDG" in sass and "UTMASTG" in sass and "STSM" in sass
    assert not re.search(r"\b(LDL|STL)\b", sass), "local-memory traffic (register spills)"


def sanitize_main():
    from test_kernels_hopper import check_gemm
    worst = 0.0
    for (m, n, k) in [(200, 136, 72), (1100, 1030, 520)]:
        worst = max(worst, check_gemm(_pingpong, "cupy", "float16", "TN", m, n, k))
        worst = max(worst, check_gemm(_pingpong, "torch", "bfloat16", "NT", m, n, k, alpha=2.0, beta=0.5))
    # 2 persistent clusters of 4 (13 / 12 tiles per CTA) and of 2 (23 / 22): both ordering barriers cycled
    worst = max(worst, check_gemm(_few_clusters(8), "cupy", "float16", "TN", 1100, 1030, 520))
    worst = max(worst, check_gemm(_few_clusters(4, (2, 1)), "cupy", "float16", "TN", 1100, 1030, 520))
    print(f"sanitize runs done, worst relative error {worst:.3g}")
    sys.exit(0 if worst < 1e-2 else 1)


if __name__ == "__main__" and sys.argv[1:] == ["sanitize"]:
    sys.path.insert(0, LIB)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sanitize_main()


# ---------------------------------------------------------------------------------------------------
# CI: the recorded H100 ladder run (results/gemm_ladder_h100.json and its folder)
# ---------------------------------------------------------------------------------------------------

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_recorded_ladder_is_consistent_and_goals_follow_from_rows():
    import statistics
    rec = json.loads((RESULTS / "gemm_ladder_h100.json").read_text())
    assert "H100" in rec["gpu"] and rec["date"] and rec["versions"]["nvidia-cutlass-dsl"]
    kernels = {r["kernel"] for r in rec["rows"]}
    assert kernels == {"sgemm_simple", "sgemm_fast", "gemm_ampere", "gemm_hopper", "gemm_hopper_ws",
                       "gemm_hopper_pingpong"}
    for r in rec["rows"]:
        assert r["tflops"] == pytest.approx(2.0 * r["m"] * r["n"] * r["k"] / r["ms"] / 1e9)
        assert r["ms"] == pytest.approx(statistics.median(r["ms_rounds"]))
        assert r["pct_cublas"] == pytest.approx(100 * statistics.median(r["cublas_ms_rounds"]) / r["ms"])
        assert r["rel_err_vs_cublas"] < 1e-2
    cubes = {(8192, 8192, 8192), (6144, 6144, 6144), (4096, 4096, 4096)}
    for key, kernel in (("goals", "gemm_hopper_pingpong"), ("goals_gemm_hopper_ws", "gemm_hopper_ws")):
        goals = rec[key]
        rows = [r for r in rec["rows"] if r["kernel"] == kernel]
        # bf16 on the six bench shapes + 2048^3, 8000^3, 1024 x 8192 x 8192; fp16 on the three cubes
        assert len(rows) == len(goals["points"]) == 12
        assert {(r["m"], r["n"], r["k"]) for r in rows if r["dtype"] == "float16"} == cubes
        for r, g in zip(rows, goals["points"]):
            target = 105.0 if (r["m"], r["n"], r["k"]) in cubes else 100.0
            assert (g["target_pct"], g["met"]) == (target, r["pct_cublas"] >= target)
            assert g["by_points"] == pytest.approx(r["pct_cublas"] - target)
        assert goals["all_met"] == all(g["met"] for g in goals["points"])
    # the DSL example in the same device call: 3 cubes x 2 dtypes, "ahead" = a shorter median time
    dsl = json.loads((RESULTS / rec["dsl_compare"]).read_text())
    assert dsl["ours"] == ["gemm_hopper_pingpong", "gemm_hopper_ws"] and len(dsl["rows"]) == 6
    for key, kernel in (("goals", "gemm_hopper_pingpong"), ("goals_gemm_hopper_ws", "gemm_hopper_ws")):
        for r, v in zip(dsl["rows"], rec[key]["vs_dsl_example"]):
            assert v["met"] == (r[f"{kernel}_ms"] < r["dsl_example_ms"])
            assert r[f"{kernel}_ms"] == pytest.approx(statistics.median(r[f"{kernel}_ms_rounds"]))


def test_recorded_ladder_gpu_checks_passed():
    rec = json.loads((RESULTS / "gemm_ladder_h100.json").read_text())
    log = (RESULTS / rec["gpu_checks"]["tests"]).read_text()
    assert re.search(r"\b30 passed\b", log) and "failed" not in log and "error" not in log.lower()
    for path in rec["gpu_checks"]["sanitizer"]:
        text = (RESULTS / path).read_text()
        assert "sanitize runs done" in text
        assert "ERROR SUMMARY: 0 errors" in text or "RACECHECK SUMMARY: 0 hazards" in text, path


# ---------------------------------------------------------------------------------------------------
# CI: the consumers' schedule as data (pingpong_schedule: chapter 9's table, ex09 part F)
# ---------------------------------------------------------------------------------------------------

def test_pingpong_schedule_reads_the_kernel_code():
    """The helper's rules are these lines of the kernel: if one changes, the helper must change with it."""
    from layoutlab.kernels import ladder
    from layoutlab.kernels.hopper_pingpong import EPI_BARRIER, ORDER_BARRIER, HopperPingpongConfig
    src = " ".join(ladder.rung_source("gemm_hopper_pingpong").split())
    for line in ("cluster_tile, done = first_cluster_tile + me * persistent_clusters, cutlass.Int32(0)",
                 "if cluster_tile >= persistent_clusters:",
                 "cute.arch.barrier(barrier_id=ORDER_BARRIER + me, number_of_threads=2 * THREADS_PER_WARPGROUP)",
                 "if cluster_tile + persistent_clusters < num_cluster_tiles: "
                 "cute.arch.barrier_arrive(barrier_id=ORDER_BARRIER + 1 - me, "
                 "number_of_threads=2 * THREADS_PER_WARPGROUP)",
                 "kk = k + (done % 2) * (k_tiles - 1 - 2 * k)",
                 "self.epi_barrier = EPI_BARRIER - 1 + wg",
                 "cluster_tile += 2 * persistent_clusters"):
        assert line in src, line
    # the skip of the partner's ring positions: once before consumer 1's first tile, once after every tile
    assert src.count("consume.advance(k_tiles)") == 2 and "if me == 1:" in src
    assert (ORDER_BARRIER, EPI_BARRIER, HopperPingpongConfig().serpentine_k) == (3, 1, True)


def _run_consumers(schedule, late, order_ids=None):
    """Play the two consumers' programs against a model of named barriers (PTX ISA 9.7.13.1: a barrier
    completes when its 256 threads have arrived and is reinitialized at once; bar.sync waits for that,
    bar.arrive does not). ``late``: the consumer that runs only when the other cannot. ``order_ids``: replace
    the ordering barriers' ids (a single barrier for both, to show why the kernel has two). Returns the tiles
    in the order their MMAs were issued, or None on a deadlock."""
    progs = {1: [], 2: []}
    for t in schedule:
        sync, arrive = t.order_sync, t.order_arrive
        if order_ids is not None:
            sync, arrive = (order_ids if sync is not None else None), (order_ids if arrive is not None else None)
        progs[t.warpgroup] += ([("sync", sync)] if sync is not None else []) + [("mma", t.tile)] \
            + ([("arrive", arrive)] if arrive is not None else [])
    count, waiting, issued, pc = {}, {}, [], {1: 0, 2: 0}
    while pc[1] < len(progs[1]) or pc[2] < len(progs[2]):
        for wg in (3 - late, late):
            if pc[wg] >= len(progs[wg]) or wg in waiting:
                continue
            op, arg = progs[wg][pc[wg]]
            pc[wg] += 1
            if op == "mma":
                issued.append(arg)
            else:
                count[arg] = count.get(arg, 0) + 128
                if op == "sync":
                    waiting[wg] = arg
                if count[arg] == 256:                      # complete: release its waiters, re-arm
                    count[arg] = 0
                    waiting = {w: b for w, b in waiting.items() if b != arg}
            break
        else:
            return None
    return issued


@pytest.mark.parametrize("tiles,k_tiles,stages", [(1, 1, 1), (2, 5, 5), (4, 3, 5), (7, 3, 5), (6, 9, 8), (5, 4, 6)])
def test_pingpong_schedule_against_barrier_models(tiles, k_tiles, stages):
    from layoutlab.nvgpu.cpasync import MBarrier
    from layoutlab.kernels.hopper_pingpong import pingpong_schedule
    sched = pingpong_schedule(tiles, k_tiles, stages)
    assert [t.warpgroup for t in sched] == [1 + j % 2 for j in range(tiles)]
    # the full mbarriers: the producer fills the ring in tile order; each consumer wait (stage, parity) must
    # block before its k-tile's fill and pass after it (the layoutlab mbarrier model of chapter 7)
    full = [MBarrier(1) for _ in range(stages)]
    for t in sched:
        assert sorted(kk for _, _, kk in t.slots) == list(range(k_tiles))
        assert [kk for _, _, kk in t.slots] == (list(range(k_tiles))[::-1] if t.tile % 2 else list(range(k_tiles)))
        for stage, parity, _ in t.slots:
            assert not full[stage].try_wait(parity)
            full[stage].arrive_expect_tx(1024)
            full[stage].complete_tx(1024)
            assert full[stage].try_wait(parity)
    # the ordering barriers: whichever consumer runs first, the MMAs are issued tile by tile, nothing hangs,
    # and each barrier's n-th completion releases its n-th bar.sync (the phase)
    for late in (1, 2):
        assert _run_consumers(sched, late) == list(range(tiles))
    for b in (3, 4):
        syncs = [t for t in sched if t.order_sync == b]
        assert [t.order_phase for t in syncs] == list(range(len(syncs)))
        assert len(syncs) == sum(t.order_arrive == b for t in sched)
    assert all((t.order_sync is None) == (t.tile == 0) for t in sched)
    assert [t.epi_barrier for t in sched] == [t.warpgroup for t in sched]


def test_one_ordering_barrier_would_let_a_consumer_overtake():
    """Chapter 9's reason for two ordering barriers: with one, a consumer's bar.arrive and its own later
    bar.sync make up the 256 threads alone when the partner is late, and tile 2 overtakes tile 1."""
    from layoutlab.kernels.hopper_pingpong import pingpong_schedule
    sched = pingpong_schedule(4, 3, 5)
    assert _run_consumers(sched, late=2) == [0, 1, 2, 3]
    assert _run_consumers(sched, late=2, order_ids=3) == [0, 2, 1, 3]


def test_pingpong_schedule_refusals():
    from layoutlab.kernels.hopper_pingpong import pingpong_schedule
    for bad in ((0, 3, 5), (4, -1, 5), (4, 3, 0), (4.0, 3, 5), (True, 3, 5)):
        with pytest.raises(LayoutError, match="positive integers"):
            pingpong_schedule(*bad)


def test_chapter_shows_the_pingpong_order():
    """Chapter 9's worked example: the cell calls the helper on the inputs the prose names, on the default
    config's ring, and the prose names the kernel's constants as the code does."""
    from layoutlab.kernels.hopper_pingpong import HopperPingpongConfig
    nb = json.loads((Path(__file__).resolve().parents[2] / "chapters" / "09_gemm.ipynb").read_text())
    cells = {c["id"]: "".join(c["source"]) for c in nb["cells"]}
    md, code = " ".join(cells["b7e2c41a"].split()), cells["c5d19f60"]
    cfg = HopperPingpongConfig()
    assert "`results/pingpong_order_h200.json`" in md and (RESULTS / "pingpong_order_h200.json").is_file()
    assert "4 tiles of 3 k-tiles" in md and "pingpong_schedule(4, 3, pp_stages)" in code
    assert f"default {cfg.tile_m} × {cfg.tile_n} tile" in md
    assert "`ORDER_BARRIER + c`" in md and "`EPI_BARRIER - 1 + warpgroup`" in md and "§9.7.13.1" in md
    ids = [c["id"] for c in nb["cells"]]
    assert ids.index("c5d19f60") == ids.index("b7e2c41a") + 1 < ids.index("fd6927bc")   # before rung 6's section


def test_recorded_pingpong_order_matches_the_schedule():
    """The kernel itself, on a GPU (``tools/pingpong_order.py``): in every recorded CTA each consumer's
    full-barrier waits hit the stages pingpong_schedule gives the CTA's tile j = consumer + 2 * (its own count),
    and tile j's first MMA is issued only after tile j-1's last (the ordering barrier) -- and before tile j-1's
    epilogue has ended (the overlap ping-pong is for)."""
    from layoutlab.kernels.hopper_pingpong import HopperPingpongConfig, pingpong_schedule
    rec = json.loads((RESULTS / "pingpong_order_h200.json").read_text())
    assert rec["kernel"] == "gemm_hopper_pingpong" and rec["rel_err_vs_float64"] < 1e-2
    p, cfg = rec["problem"], rec["config"]
    assert cfg["tile_mnk"] == [64, 256, 64] and cfg["serpentine_k"] and cfg["cluster_mn"] == [4, 1]
    k_tiles = -(-p["k"] // 64)
    # the persistent grid: cluster tiles over num_sms / 4 clusters, all CTAs holding the same number here
    cluster_tiles = -(-p["m"] // (64 * 4)) * -(-p["n"] // 256)
    clusters = cfg["num_sms"] // 4
    assert cluster_tiles % clusters == 0
    tiles = cluster_tiles // clusters
    hp = HopperPingpongConfig()
    stages = hp.ab_stages(reserved_bytes=1024 + 2 * hp.epi_stages * 64 * 32 * 2)
    sched = pingpong_schedule(tiles, k_tiles, stages)
    rows = [dict(zip(rec["columns"], r)) for r in rec["rows"]]
    for r in rows:
        r["event"] = rec["events"][r["event"]]
    ctas = sorted({r["cta"] for r in rows})
    assert len(ctas) == 4
    for cta in ctas:
        first, last, epi_end, coords = {}, {}, {}, set()
        for wg in (1, 2):
            for i in sorted({r["tile"] for r in rows if r["cta"] == cta and r["role"] == wg}):
                j = wg - 1 + 2 * i
                mine = [r for r in rows if (r["cta"], r["role"], r["tile"]) == (cta, wg, i)]
                waits = sorted((r["k_tile"], r["stage"]) for r in mine if r["event"] == "full_wait")
                assert [s for _, s in waits] == [s for s, _, _ in sched[j].slots], (cta, wg, i)
                issue = [r["clock64"] for r in mine if r["event"] == "mma_start"]
                first[j], last[j] = min(issue), max(issue)
                epi_end[j] = max(r["clock64"] for r in mine if r["event"] == "epi_end")
                coords |= {(r["tile_m"], r["tile_n"]) for r in mine}
        assert sorted(first) == list(range(tiles)) and len(coords) == tiles      # every tile once, distinct
        for j in range(1, tiles):
            assert last[j - 1] < first[j] < epi_end[j - 1], (cta, j)
