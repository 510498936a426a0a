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
    assert {k for k, *_ in rows} == {r.name for r in LADDER}
    assert len({r["cublas_via"] for r in rec["rows"]}) >= 1 and all(len(r["ms_rounds"]) == 3 for r in rec["rows"])
    for r in rec["rows"]:                      # a ratio is the kernel's median round against cuBLAS's, same run
        assert 0 < r["pct_cublas"] < 200 and r["rel_err_vs_cublas"] < 1e-2


def test_goal_fields_are_the_top_rungs_points_against_the_issues_targets(run):
    rec, rows = run
    goals = rec["goals"]
    assert goals["kernel"] == LADDER[-1].name == "gemm_hopper_streamk"
    for g in goals["points"]:
        mnk = (g["m"], g["n"], g["k"])
        assert g["target_pct"] == (105.0 if mnk in CUBES else 100.0)
        assert round(g["pct_cublas"], 1) == pct(rows, goals["kernel"], g["dtype"], mnk)
        assert g["met"] == (g["pct_cublas"] >= g["target_pct"])
    assert goals["all_met"] == all(g["met"] for g in goals["points"])


def test_the_reading_is_derived_from_the_record(run):
    rec, rows = run
    md = _md()
    top, ws, pp = "gemm_hopper_streamk", "gemm_hopper_ws", "gemm_hopper_pingpong"
    big, small = (8192,) * 3, (4096,) * 3
    waves = {n: n // 128 * (n // 256) / 132 for n in (8192, 4096)}
    assert f"at 8192³ ({waves[8192]:.1f} waves of 132 tiles)" in md and f"at 4096³ ({waves[4096]:.1f} waves" in md
    assert (f"runs at {pct(rows, top, 'bfloat16', big)} % (bf16) and {pct(rows, top, 'float16', big)} % (fp16) "
            f"against rung 5's {pct(rows, ws, 'bfloat16', big)} % and {pct(rows, ws, 'float16', big)} %") in md
    assert f"it falls to {pct(rows, top, 'bfloat16', small)} % against {pct(rows, ws, 'bfloat16', small)} %" in md
    cubes = [g for g in rec["goals"]["points"] if (g["m"], g["n"], g["k"]) in CUBES]
    met = [g for g in cubes if g["met"]]
    assert len(cubes) == 6 and len(met) == 1 and (met[0]["dtype"], met[0]["m"]) == ("float16", 8192)
    assert "is met at one of the six points (fp16 8192³)" in md
    miss = {(g["dtype"], g["m"]): round(-g["by_points"], 1) for g in cubes if not g["met"]}
    assert (f"missed at bf16 8192³ by {miss[('bfloat16', 8192)]} points, at 4096³ by {miss[('bfloat16', 4096)]} "
            f"(bf16) and {miss[('float16', 4096)]} (fp16)") in md
    ahead = [key for key in rows if key[0] == pp and rows[key]["pct_cublas"] >= rows[(ws, *key[1:])]["pct_cublas"]]
    assert [key[3] for key in ahead] == [(8192, 8192, 1024)] and "behind rung 5 everywhere but 8192×8192×1024" in md
    earlier = []
    for call in ("streamk_call1_bench", "streamk_call2_bench"):
        r = gpu.load_result(f"gemm_ladder_h100/{call}")
        earlier += [x["pct_cublas"] for x in r["rows"] if x["kernel"] == ws and (x["m"], x["n"], x["k"]) == big
                    and x["dtype"] == "bfloat16"]
    assert f"(rung 5 read {earlier[0]:.1f} % and {earlier[1]:.1f} % at bf16 8192³" in md
    cub = [r["cublas_tflops"] for r in rec["rows"] if (r["m"], r["n"], r["k"]) == (2048,) * 3]
    assert f"cuBLAS itself ranged from {min(cub):.0f} to {max(cub):.0f} TFLOP/s" in md


def test_the_chapter_shows_the_one_run_table():
    nb = json.loads(NB.read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert any('gpu.load_result("gemm_ladder_h200")' in c and "viz.show_table(" in c and "ladder.LADDER" in c
               for c in code)
