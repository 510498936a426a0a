"""The recorded comparison of the fp8 rung with the CuTe DSL fp8 example (issue 30), read on the CPU.

``results/gemm_fp8_h200/dsl_example.json`` is what ``tools/compare_dsl_example.py`` wrote on the H200 (the command
is in that folder's README). These tests re-derive every ratio from the milliseconds the record holds (each side's
time is the median of its round medians), check that every timed output was compared with cuBLASLt's and agreed,
and that the record says where, when, with which versions and which example file it was measured. The speed goal
itself is a benchmark, never a test.
"""

import hashlib
import json
import math
import re
import statistics
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parents[2] / "results" / "gemm_fp8_h200"
RECORD = RESULTS / "dsl_example.json"
#: the example's file at its source (NVIDIA/cutlass), which is never committed here.
EXAMPLE_PATH = "examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm_fp8_2xacc.py"


@pytest.fixture(scope="module")
def rec():
    return json.loads(RECORD.read_text())


def _sides(row):
    """Every timed side of a row: the names with a ``_ms_rounds`` list (the best example's alias excluded)."""
    return [k[:-len("_ms_rounds")] for k in row if k.endswith("_ms_rounds") and k != "dsl_example_ms_rounds"]


def test_record_names_gpu_date_versions_and_the_example(rec):
    assert rec["gpu"].startswith("NVIDIA H200") and re.match(r"\d{4}-\d\d-\d\dT", rec["date"])
    for key in ("driver_version", "cuda_runtime", "nvidia-cutlass-dsl", "torch", "cupy"):
        assert rec["versions"][key], key
    ex = rec["example"]
    assert ex["file"] == Path(EXAMPLE_PATH).name and ex["class"] == "HopperFP8WarpSpecialized2xAccGemmKernel"
    assert ex["family"] == "fp8" and re.fullmatch(r"[0-9a-f]{64}", ex["sha256"])
    assert ex["source"].startswith("https://github.com/NVIDIA/cutlass/blob/") and ex["source"].endswith(EXAMPLE_PATH)
    assert ex["mma_promotion_interval"] == 4 and ex["differences"]
    for c in ex["configs"]:          # each configuration's label names its tile and cluster
        assert c["label"] == "{}x{}_c{}x{}".format(*c["tile_mn"], *c["cluster_mn"])
    assert rec["ours"][0] == "gemm_hopper_fp8"


def test_readme_holds_the_command_and_the_example_provenance(rec):
    """The README gives the command the record was made with (its --json folder as $OUT), the example's
    sha256 and its source, so the comparison can be re-run on the same file."""
    text = " ".join((RESULTS / "README.md").read_text().split())
    assert re.sub(r"--json \S*/", "--json $OUT/", rec["command"]) in text
    assert rec["example"]["sha256"] in text and rec["example"]["source"] in text


def test_rows_cover_the_two_cubes_with_every_side_timed_alike(rec):
    assert sorted((r["m"], r["n"], r["k"]) for r in rec["rows"]) == [(4096,) * 3, (8192,) * 3]
    labels = [c["label"] for c in rec["example"]["configs"]]
    for r in rec["rows"]:
        sides = _sides(r)
        assert set(sides) == {rec["ours"][0], "cublas", "cublaslt_fast_accum"} | {f"dsl_example_{lb}" for lb in labels}
        rounds = {len(r[f"{s}_ms_rounds"]) for s in sides}
        assert len(rounds) == 1 and rounds.pop() >= 3


def test_times_and_ratios_are_the_ones_the_rounds_give(rec):
    for r in rec["rows"]:
        flops = 2.0 * r["m"] * r["n"] * r["k"]
        ms = {s: statistics.median(r[f"{s}_ms_rounds"]) for s in _sides(r)}
        for s, t in ms.items():
            assert r[f"{s}_ms"] == pytest.approx(t) and r[f"{s}_tflops"] == pytest.approx(flops / t / 1e9)
            if s != "cublas":
                assert r[f"{s}_pct_cublas"] == pytest.approx(100 * ms["cublas"] / t)
        examples = {s: t for s, t in ms.items() if s.startswith("dsl_example_")}
        best = min(examples, key=examples.get)          # dsl_example_* is the fastest configuration
        assert r["dsl_example_config"] == best[len("dsl_example_"):]
        assert r["dsl_example_ms"] == pytest.approx(ms[best]) and r["dsl_example_ms_rounds"] == r[f"{best}_ms_rounds"]
        ours = rec["ours"][0]
        assert r["ours_pct_cublas"] == pytest.approx(100 * ms["cublas"] / ms[ours])
        assert r["example_pct_cublas"] == pytest.approx(100 * ms["cublas"] / ms[best])
        assert r["ours_pct_example"] == pytest.approx(100 * ms[best] / ms[ours])
        assert all(0.01 < t < 100 and math.isfinite(t) for t in ms.values())


def test_every_timed_output_was_checked_against_cublaslt(rec):
    """Each output is as close to cuBLASLt's as two results no further from float64 than cuBLASLt's default and
    fast accumulation are (results/gemm_fp8_h200.json's accuracy table, same K, standard-normal e4m3 data; the
    triangle inequality, with room for the other M and N)."""
    acc = {a["k"]: a for a in json.loads((RESULTS.parent / "gemm_fp8_h200.json").read_text())["accuracy"]}
    for r in rec["rows"]:
        errs = r["rel_err_vs_cublas"]
        assert set(errs) == set(_sides(r)) - {"cublas"}
        bound = 1.5 * (acc[r["k"]]["cublaslt"] + acc[r["k"]]["cublaslt_fast_accum"])
        assert all(0 <= e < bound for e in errs.values()), (errs, bound)


def test_the_recorded_example_file_is_the_one_the_readme_names():
    """Where the example file is at hand (it travels to the GPU in the git-ignored .device/dsl_examples/), its
    sha256 is the recorded one."""
    local = Path(__file__).resolve().parents[2] / ".device" / "dsl_examples" / Path(EXAMPLE_PATH).name
    if not local.is_file():
        pytest.skip(f"no {local} here (it is never committed)")
    assert hashlib.sha256(local.read_bytes()).hexdigest() == json.loads(RECORD.read_text())["example"]["sha256"]


def test_the_tool_tabulates_the_record(rec):
    """tools/compare_dsl_example.py's table of this record: each row's % of cuBLASLt and the fastest example."""
    from tools_loader import load_tool
    tool = load_tool("compare_dsl_example")
    assert tool.EXAMPLE_CLASSES[rec["example"]["class"]][0] == "fp8" and tool.DEFAULT_OURS["fp8"] == rec["ours"][0]
    table = tool.format_table(rec).splitlines()
    for r in rec["rows"]:
        line = next(ln for ln in table if ln.split()[1:2] == [f"{r['m']}x{r['n']}x{r['k']}"])
        assert line.split()[-3:] == [f"{r['ours_pct_cublas']:.1f}", f"{r['example_pct_cublas']:.1f}",
                                     r["dsl_example_config"]]
