"""Chapter 9's "Every rung in one run": the table and every number of its reading come from
``results/gemm_ladder_h200.json`` (one H200 run of every rung against cuBLAS), so the prose cannot drift."""

import json
from pathlib import Path

import pytest

from layoutlab import gpu
from layoutlab.kernels.ladder import LADDER

ROOT = Path(__file__).resolve().parents[2]
NB = ROOT / "chapters" / "09_gemm.ipynb"
CUBES = [(4096,) * 3, (6144,) * 3, (8192,) * 3]


def _md():
    nb = json.loads(NB.read_text())
    return " ".join(" ".join("".join(c["source"]).split()) for c in nb["cells"] if c["cell_type"] == "markdown")


@pytest.fixture(scope="module")
def run():
    rec = gpu.load_result("gemm_ladder_h200")
    return rec, {(r["kernel"], r["dtype"], r["layout"], (r["m"], r["n"], r["k"])): r for r in rec["rows"]}


def pct(rows, kernel, dtype, mnk):
    return round(rows[(kernel, dtype, "TN", mnk)]["pct_cublas"], 1)


def test_the_record_holds_every_rung_of_the_ladder_from_one_run(run):
    rec, rows = run
    assert rec["gpu"] == "NVIDIA H200" and rec["versions"]["nvidia-cutlass-dsl"]
    assert {k for k, *_ in rows} == {r.name for r in LADDER if r.bench[0] != "float8_e4m3fn"}   # fp8: its own record
    assert len({r["cublas_via"] for r in rec["rows"]}) >= 1 and all(len(r["ms_rounds"]) == 3 for r in rec["rows"])
    for r in rec["rows"]:                      # a ratio is the kernel's median round against cuBLAS's, same run
        assert 0 < r["pct_cublas"] < 200 and r["rel_err_vs_cublas"] < 1e-2


def test_goal_fields_are_the_top_rungs_points_against_the_issues_targets(run):
    rec, rows = run
    goals = rec["goals"]
    assert goals["kernel"] == [r for r in LADDER if r.bench[0] != "float8_e4m3fn"][-1].name == "gemm_hopper_streamk"
    for g in goals["points"]:
        mnk = (g["m"], g["n"], g["k"])
        assert g["target_pct"] == (105.0 if mnk in CUBES else 100.0)
        assert round(g["pct_cublas"], 1) == pct(rows, goals["kernel"], g["dtype"], mnk)
        assert g["met"] == (g["pct_cublas"] >= g["target_pct"])
    assert goals["all_met"] == all(g["met"] for g in goals["points"])


def _sched(mnk):
    """The rule's decision for a TN point in 2 x 1 clusters of 128 x 256 tiles on the H200's 66 clusters."""
    import math

    from layoutlab.kernels.schedule import stream_k_pays
    m, n, k = mnk
    return stream_k_pays(m, n, k, (256, 256, 64), min(66, math.ceil(m / 256) * math.ceil(n / 256)))


def _name(m):
    return f"{m[0]}³" if len(set(m)) == 1 else "×".join(map(str, m))


def test_the_reading_is_derived_from_the_record(run):
    rec, rows = run
    md = _md()
    top, ws, spec, pp = "gemm_hopper_streamk", "gemm_hopper_ws", "gemm_hopper_specialized", "gemm_hopper_pingpong"
    big, small, tiny = (8192,) * 3, (4096,) * 3, (2048,) * 3
    assert (f"rung 6 is where the ladder reaches cuBLAS, {pct(rows, ws, 'bfloat16', big)} % at bf16 8192³ against "
            f"rung 5's {pct(rows, spec, 'bfloat16', big)} %") in md
    points = sorted({key[3] for key in rows if key[0] == top and key[1] == "bfloat16"},
                    key=lambda m: [(4096,) * 3, (6144,) * 3, (8192,) * 3, (8000,) * 3, (2048,) * 3, (8192, 8192, 1024),
                                   (4096, 14336, 4096), (16384, 4096, 4096), (1024, 8192, 8192)].index(m))
    splits = [m for m in points if _sched(m).split]
    assert splits == [big, (8000,) * 3, (16384, 4096, 4096)]
    assert (f"of these points at {', '.join(_name(m) for m in splits)} — and there runs at "
            f"{', '.join(str(pct(rows, top, 'bfloat16', m)) + ' %' for m in splits)} (bf16) against rung 6's "
            f"{', '.join(str(pct(rows, ws, 'bfloat16', m)) + ' %' for m in splits)} in the same run") in md
    assert f"(fp16 8192³: {pct(rows, top, 'float16', big)} % against {pct(rows, ws, 'float16', big)} %)" in md
    # where the rule keeps whole tiles the top rung runs rung 6's schedule: the time ratios are the run's noise
    ratios = [100 * rows[(ws, *key[1:])]["ms"] / rows[key]["ms"] for key in rows
              if key[0] == top and not _sched(key[3]).split and key[3] != tiny]
    assert f"within {100 - min(ratios):.1f} % slower to {max(ratios) - 100:.1f} % faster" in md
    assert 100 - min(ratios) < 5 and max(ratios) - 100 < 5
    gap = rows[(ws, "bfloat16", "TN", tiny)]["ms"] / rows[(top, "bfloat16", "TN", tiny)]["ms"]
    assert (f"rung 6's time in this run is {gap:.2f} times the top rung's with the same one-wave schedule: rung 6 reads "
            f"{pct(rows, ws, 'bfloat16', tiny)} %, rung 5 {pct(rows, spec, 'bfloat16', tiny)} %") in md
    cubes = {(g["dtype"], g["m"]): g for g in rec["goals"]["points"] if (g["m"], g["n"], g["k"]) in CUBES}
    assert len(cubes) == 6 and not any(g["met"] for g in cubes.values()) and "is met at none of the six points" in md
    miss = {key: round(-g["by_points"], 1) for key, g in cubes.items()}
    assert (f"missed at bf16 8192³ by {miss[('bfloat16', 8192)]} points and fp16 8192³ by {miss[('float16', 8192)]}, at "
            f"6144³ by {miss[('bfloat16', 6144)]} (bf16) and {miss[('float16', 6144)]} (fp16), at 4096³ by "
            f"{miss[('bfloat16', 4096)]} and {miss[('float16', 4096)]}") in md
    others = [g for g in rec["goals"]["points"] if (g["m"], g["n"], g["k"]) not in CUBES]
    assert len(others) == 6 and f"met at {sum(g['met'] for g in others)} of the six other points" in md
    ahead = [key[3] for key in rows if key[0] == pp and rows[key]["pct_cublas"] >= rows[(ws, *key[1:])]["pct_cublas"]]
    assert ahead == [tiny] and "Ping-pong (rung 7) stays behind rung 6 everywhere but 2048³" in md
    cub = [r["cublas_tflops"] for r in rec["rows"] if (r["m"], r["n"], r["k"]) == tiny]
    assert f"cuBLAS itself ranged from {min(cub):.0f} to {max(cub):.0f} TFLOP/s" in md


def test_the_new_rungs_prose_is_derived_from_the_record(run):
    """Rung 5 (gemm_hopper_specialized) against rung 4 and rung 6 at three points of the same run."""
    _, rows = run
    md = _md()
    h, s, w = "gemm_hopper", "gemm_hopper_specialized", "gemm_hopper_ws"
    b, m, t = (8192,) * 3, (6144,) * 3, (16384, 4096, 4096)
    assert (f"at bf16 8192³ {pct(rows, s, 'bfloat16', b)} % of cuBLAS against `gemm_hopper`'s {pct(rows, h, 'bfloat16', b)} "
            f"% in the same run, at 6144³ {pct(rows, s, 'bfloat16', m)} % against {pct(rows, h, 'bfloat16', m)} %, at "
            f"16384×4096×4096 {pct(rows, s, 'bfloat16', t)} % against {pct(rows, h, 'bfloat16', t)} %") in md
    assert all(abs(pct(rows, s, "bfloat16", x) - pct(rows, h, "bfloat16", x)) < 3 for x in (b, m, t))   # "a few points"
    assert (f"in the same run reaches {pct(rows, w, 'bfloat16', b)} %, {pct(rows, w, 'bfloat16', m)} % and "
            f"{pct(rows, w, 'bfloat16', t)} % at those three points") in md
    from layoutlab.kernels.hopper_specialized import HopperSpecializedConfig
    cfg = HopperSpecializedConfig()
    used = cfg.ab_stages(reserved_bytes=1024 + 4 * 128 * 32 * 2) * cfg.ab_stage_bytes() + 4 * 128 * 32 * 2
    assert used // 1024 == 224 and "4 stages of 48 KiB and 32 KiB of C buffers take 224 KiB of the 227" in md


def test_the_rule_and_the_profile_prose_are_derived_from_their_records():
    """"When the split pays" (results/gemm_ladder_h200/streamk_fixup.json, the rule) and "What limits the top rung next"
    (results/gemm_ladder_h200/ncu_top4096.txt: ours and cuBLAS at bf16 4096^3, ours split / whole at 8192^3)."""
    import re
    from layoutlab.kernels.schedule import FIXUP_COST
    md = _md()
    fix = gpu.load_result("gemm_ladder_h200/streamk_fixup")
    prices = [r["price_k_tiles"] for r in fix["rows"]]
    assert f"the prices paid run from {min(prices):.1f} to {max(prices):.1f} k-tile times" in md
    r16 = next(r for r in fix["rows"] if (r["m"], r["n"], r["k"]) == (8192, 8192, 16384))
    assert f"one per cent is {0.01 * r16['ms']['ws'] / (r16['k_tile_us'] / 1e3):.0f} k-tile times" in md
    assert f"about {FIXUP_COST[0]:.0f} k-tiles plus {FIXUP_COST[1]:.2f} of a tile" in md
    d8, d6, d4 = (_sched(x) for x in CUBES[::-1])
    assert (f"It splits 8192³ ({d8.saved_k_tiles} k-tiles saved against a price of {d8.cost_k_tiles:.1f}) and keeps 6144³ "
            f"({d6.saved_k_tiles} against {d6.cost_k_tiles:.1f}) and 4096³ ({d4.saved_k_tiles} against "
            f"{d4.cost_k_tiles:.1f}) in whole tiles") in md
    ncu = (ROOT / "lib" / "layoutlab" / "results" / "gemm_ladder_h200" / "ncu_top4096.txt").read_text()
    assert re.findall(r"^profiling (\S+ \S+(?: split| nosplit)?)", ncu, re.M) == [
        "top4096 gemm_hopper_streamk", "top4096 cublas", "fixup8192 gemm_hopper_streamk split",
        "fixup8192 gemm_hopper_streamk nosplit"]
    ours4, cub4, split8, whole8 = (int(x.replace(",", "")) for x in re.findall(r"Elapsed Cycles\s+cycle\s+([\d,]+)", ncu))
    per_kt = whole8 / (16 * 128)
    gain = whole8 - split8
    assert (f"{split8:,} cycles split against {whole8:,} whole, {gain:,} cycles saved — {100 * gain / whole8:.1f} %" in md
            and f"about {per_kt:.0f} cycles each, so the 62 k-tiles saved are worth {62 * per_kt:,.0f} cycles" in md
            and f"the split kept {100 * gain / (62 * per_kt):.0f} % of that, a price of {62 - gain / per_kt:.0f} k-tiles" in md)
    tc_min = 2 * 4096 ** 3 / (132 * 4096)
    assert (f"Rung 8 ran {ours4:,} cycles" in md and f"1 × 2 clusters) {cub4:,}: {100 * ours4 / cub4 - 100:.1f} % more" in md
            and f"at least {tc_min:,.0f}" in md and f"rung 8 runs at {100 * tc_min / ours4:.1f} % of that minimum and cuBLAS "
            f"at {100 * tc_min / cub4:.1f} %" in md)
    assert "nvjet_sm90_tst_256x128_64x4_1x2" in ncu and re.search(r"Grid Size\s+132", ncu)
    blocks = re.split(r"\n  (?=\S.*\(\d+, \d+, \d+\)x\()", ncu)[1:]

    def val(block, label):
        return float(re.search(rf"\n\s+{re.escape(label)}\s+(?:%|inst)\s+([\d.]+)", block).group(1))

    stall = [float(re.search(r"stalled_barrier_per_issue_active.ratio\s+inst\s+([\d.]+)", b).group(1)) for b in blocks[:2]]
    assert f"({stall[0]} cycles per issued instruction against {stall[1]};" in md
    assert (f"busy {val(blocks[0], 'SM Busy'):.1f} % and {val(blocks[1], 'SM Busy'):.1f} %" in md
            and f"({val(blocks[0], 'L2 Cache Throughput'):.1f} % of peak against {val(blocks[1], 'L2 Cache Throughput'):.1f} %)" in md)
    assert f"means {cub4 / 1.05:,.0f} cycles here: {100 * tc_min / (cub4 / 1.05):.1f} % of the tensor-core minimum" in md
    assert 512 / 132 == pytest.approx(3.88, abs=0.005) and "3.88 / 4 = 97 %" in md


def test_the_chapter_shows_the_one_run_table():
    nb = json.loads(NB.read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert any('gpu.load_result("gemm_ladder_h200")' in c and "viz.show_table(" in c and "ladder.LADDER" in c
               for c in code)


def test_the_gpu_checks_of_this_run():
    """results/gemm_ladder_h200: the GPU tests of every kernel file (one process per file), the SIMT/Ampere tests in
    five parts, compute-sanitizer on the new rung; what its README says of them."""
    import re
    folder = ROOT / "lib" / "layoutlab" / "results" / "gemm_ladder_h200"
    readme = (folder / "README.md").read_text()
    counts = {}
    for line in (folder / "alltests.txt").read_text().splitlines():
        name, _, summary = line.partition(": ")
        assert "failed" not in summary and "error" not in summary
        counts[name] = int(re.match(r"(\d+) passed", summary).group(1)) if summary.strip() else None
    assert counts == {"test_kernels_hopper.py": 53, "test_kernels_specialized.py": 22, "test_kernels_streamk.py": 26,
                      "test_kernels_pingpong.py": 30, "test_kernels_simt_ampere.py": None, "test_kernels_tma_copy.py": 1,
                      "test_kernels_wgmma_tile.py": 3, "test_timeline.py": 2, "test_gpu.py": 1}
    assert "hopper 53, specialized 22, streamk 26, pingpong 30, tma_copy 1, wgmma_tile 3, timeline 2, gpu 1 passed" in readme
    parts = [(folder / f"tests_simt_part{i}.log").read_text() for i in range(5)]
    done = [int(re.search(r"(\d+) passed", p).group(1)) for p in parts if re.search(r"\d+ passed", p)]
    cut = [p.strip().count(".") for p in parts if not re.search(r"\d+ passed", p)]
    assert not any("F" in p.split("\n")[0] or "failed" in p for p in parts)
    assert (sum(done), cut, sum(done) + sum(cut)) == (31, [7, 10], 48) and "48 passed in all, 7 not run" in readme
    for tool, clean in (("memcheck", "ERROR SUMMARY: 0 errors"), ("racecheck", "RACECHECK SUMMARY: 0 hazards"),
                        ("synccheck", "ERROR SUMMARY: 0 errors")):
        log = (folder / f"specialized_sanitize_{tool}.log").read_text()
        assert clean in log and "sanitize runs done" in log
