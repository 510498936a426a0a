"""Chapter 9b (fp8): every number its prose and answers state, re-derived from the library and the GPU record.

The chapter itself runs in `make test` (tests/book/test_chapters_execute.py); here its hand-written claims are checked against what computes
them: e4m3 rounding, the scale layouts, the accumulator rows a thread scales, the register arithmetic of the tile
choice, the model's behaviour, and the record's tables (results/gemm_fp8_h200.json).
"""

import json
from pathlib import Path

import numpy as np
import pytest

from layoutlab import Layout, cosize, make_mma_atom, nvgpu, size
from layoutlab.kernels import fp8_model as fm
from layoutlab.kernels.hopper_fp8 import HopperFp8Config, SCALE_BLOCK, WGMMA_K_FP8
from layoutlab.kernels.hopper_ws import CONSUMER_REGS

ROOT = Path(__file__).resolve().parents[2]
NB = json.loads((ROOT / "chapters" / "09b_fp8.ipynb").read_text())
MD = "\n".join("".join(c["source"]) for c in NB["cells"] if c["cell_type"] == "markdown")
CODE = "\n".join("".join(c["source"]) for c in NB["cells"] if c["cell_type"] == "code")


def test_listed_after_chapter_9_and_chained_by_next_lines():
    toc = (ROOT / "_toc.yml").read_text()
    assert toc.index("chapters/09_gemm") < toc.index("chapters/09b_fp8") < toc.index("chapters/10_beyond_hopper")
    ch9 = json.loads((ROOT / "chapters" / "09_gemm.ipynb").read_text())["cells"]
    last9 = "".join(ch9[-1]["source"]) if ch9[-1]["cell_type"] == "markdown" else MD
    assert "**Next:** {ref}`ch-fp8`" in last9 or "**Next:** {ref}`ch-fp8`" in "".join(
        "".join(c["source"]) for c in ch9 if c["cell_type"] == "markdown")
    assert MD.rstrip().splitlines()[-2].startswith("**Next:** {ref}`ch-beyond` — ")


def test_e4m3_claims():
    # "between 1 and 2 its values are 1, 1.125, ..., 1.875, and the largest is 448"
    assert fm.quantize_e4m3(1 + np.arange(8) / 8).tolist() == (1 + np.arange(8) / 8).tolist()
    assert fm.quantize_e4m3(1.0625) in (1.0, 1.125) and fm.E4M3_MAX == 448.0
    assert "the largest is 448" in MD
    # answer 1: step 32 between 256 and 448, 300 -> 288
    assert fm.quantize_e4m3([256 + 16, 300]).tolist() == [256.0, 288.0]
    assert fm.quantize_e4m3(256 + 32) == 288 and "2⁸⁻³ = 32" in MD and "300 rounds to 288" in MD


def test_block_scaling_keeps_the_small_half():
    rng = np.random.default_rng(0)
    row = (rng.standard_normal(256) * np.r_[np.full(128, 1.0), np.full(128, 1e-5)])[None, :]
    errs = {}
    for cols in (256, 128):
        s = fm.block_scales(row, 1, cols)
        back = fm.quantize_blocks(row, s, 1, cols) * np.repeat(s.astype(np.float64), cols, 1)[:, :256]
        errs[cols] = [fm.relative_error(back[:, h:h + 128], row[:, h:h + 128]) for h in (0, 128)]
    assert f"a {round(100 * errs[256][1])} % error" in MD          # one scale: the small half loses its digits
    assert max(errs[128]) < 0.04                               # "keeps e4m3's ~3 % rounding"
    assert "10⁵ times smaller" in MD


def test_atom_and_tile_claims():
    atom = make_mma_atom(nvgpu.warpgroup.MmaF8Op("f8E4M3FN", "f8E4M3FN", "f32", (64, 192, 32)))
    assert str(atom.layout_c_tv) == "((4,8,4),(2,2,24)):((128,1,16),(64,8,512))"
    assert "`((4,8,4),(2,2,24)):((128,1,16),(64,8,512))`" in MD
    c = atom.layout_c_tv
    rows = sorted({c((37, v)) % 64 for v in range(96)})
    assert rows == [17, 25] and "row 1 + 16 = 17, and row 17 + 8 = 25" in MD
    cfg = HopperFp8Config()
    assert (cfg.tile_m, cfg.tile_n) == (128, 192) and "N = 192 and two consumer warpgroups" in MD
    assert "128 × 128 of A and 192 × 128 of B per pipeline stage" in MD
    # a 192-column tile crosses one B block border, after 128 (even tiles) or 64 (odd) of its columns
    assert {(192 * tn) % 128 for tn in range(8)} == {0, 64} and "after 128 or 64 of them" in MD
    assert cfg.tile_k // WGMMA_K_FP8 == 4 and "128 / 32 = 4 instructions" in MD
    # the promotion interval: 128 elements of K, 4 wgmmas (DeepSeek's)
    assert cfg.promotion_interval == 4 and cfg.promotion_interval * WGMMA_K_FP8 == 128
    assert "Their interval is 128 elements of K, 4 `wgmma`s" in MD
    # registers: two accumulators of 64 x 192 / 64 x 256 per 128 threads, against setmaxnreg's 232
    two_192, two_256 = 2 * 64 * 192 // 128, 2 * 64 * 256 // 128
    assert (two_192, two_256, CONSUMER_REGS) == (192, 256, 232)
    assert f"2 × 96 = {two_192} registers" in MD and f"they would be {two_256}" in MD
    assert f"than the {CONSUMER_REGS}" in MD and "of 64 × 192 they are 192" in MD


def test_scale_layout_claims():
    scale_a = Layout((4096, (SCALE_BLOCK, 56)), (56, (0, 1)))
    assert scale_a((1000, 5000)) == 56039 and 5000 // 128 == 39 and 7168 // 128 == 56
    assert "`scale_a[1000, 39]`" in MD and "1000 · 56 + 39 = 56039" in MD and "(4096, 56)" in MD
    ex = Layout((256, (128, 4)), (4, (0, 1)))
    assert size(ex) == 256 * 512 and cosize(ex) == 256 * 4
    assert "`(M,(128,Kb)):(Kb,(0,1))`" in MD and "`((128,Nb),(128,Kb)):((0,Kb),(0,1))`" in MD


def test_model_claims():
    """"the error of a never-promoted sum grows with K while an interval of 4 k-blocks holds it near 2⁻¹³"; bf16
    output rounding is larger than what promotion saves at small K."""
    rng = np.random.default_rng(30)
    errs = {}
    for k in (1024, 4096, 16384):
        a = fm.quantize_e4m3(rng.standard_normal((64, k)))
        b = fm.quantize_e4m3(rng.standard_normal((k, 64)))
        ref = a @ b
        errs[k] = {iv: fm.relative_error(fm.accumulate_model(a, b, iv), ref) for iv in (4, 0)}
        errs[k]["bf16"] = fm.relative_error(fm.round_bf16(fm.accumulate_model(a, b, 4)), ref)
    assert errs[1024][0] < errs[4096][0] < errs[16384][0]
    assert all(0.5 * 2.0 ** -13 < e[4] < 2.0 ** -13 for e in errs.values())
    assert errs[1024]["bf16"] > errs[1024][0]          # at small K bf16 rounding outweighs the saving
    assert "around 14 bits" in MD and "2⁻¹³" in MD


@pytest.fixture(scope="module")
def record():
    from layoutlab import gpu
    try:
        return gpu.load_result("gemm_fp8_h200")
    except FileNotFoundError:
        pytest.skip("results/gemm_fp8_h200.json not recorded yet")


def test_record_tables_the_chapter_reads(record):
    assert record["gpu"].startswith("NVIDIA H200") and record["date"]
    acc = record["accuracy"]
    assert [r["k"] for r in acc] == [1024, 2048, 4096, 8192, 16384]
    for r in acc:
        assert {"interval_4", "interval_0", "cublaslt", "cublaslt_fast_accum", "bf16_rounding_of_ref"} <= set(r)
        # nobody beats rounding the exact result to bf16 by much
        assert r["interval_4"] > 0.5 * r["bf16_rounding_of_ref"]
    kinds = {(r["kernel"], r["baseline"]) for r in record["rows"]}
    assert ("gemm_hopper_fp8", "cublaslt") in kinds and ("gemm_hopper_fp8_block", "gemm_hopper_fp8 per-tensor") in kinds
    for r in record["rows"]:
        assert r["pct_cublas"] == pytest.approx(100 * r["cublas_ms"] / r["ms"])
    for g in record["goals"]:
        assert g["met"] == (g["margin_pct"] >= 0)
    assert 'gpu.load_result("gemm_fp8_h200")' in CODE


def test_prose_numbers_from_the_record(record):
    import json as _json
    acc = {r["k"]: r for r in record["accuracy"]}
    assert all(r["interval_4"] == r["cublaslt"] and r["interval_0"] == r["cublaslt_fast_accum"] for r in acc.values())
    assert "the rung's output is cuBLASLt's, bit for bit" in MD
    assert all(r["rel_err_vs_cublas"] == 0.0 for r in record["rows"] if r["kernel"] == "gemm_hopper_fp8")
    more = 100 * (acc[1024]["interval_0"] / acc[1024]["interval_4"] - 1)
    times = acc[16384]["interval_0"] / acc[16384]["interval_4"]
    assert f"adds {more:.0f} %" in MD and f"({times:.1f} times)" in MD
    # the model's prediction quoted beside it
    rng = np.random.default_rng(30)
    for k in (1024, 4096, 16384):
        a = fm.quantize_e4m3(rng.standard_normal((64, k)))
        b = fm.quantize_e4m3(rng.standard_normal((k, 64)))
    never = fm.relative_error(fm.accumulate_model(a, b, 0), a @ b)
    assert f"{never:.1e}".replace("e-02", " · 10⁻²") in MD
    # the default's share of cuBLASLt, and the promotion's cost (an earlier run's sweep)
    g = next(x for x in record["goals_default_config"] if "cuBLASLt at 8192" in x["goal"])
    assert f"at {g['value_pct']:.0f} % of cuBLASLt at 8192³" in MD and not g["met"]
    before = _json.loads((ROOT / "results" / record["sweep_earlier_run"]["file"]).read_text())["rows"]
    cfg = lambda r: _json.dumps(r["config"], sort_keys=True)
    p4 = next(r for r in before if r["m"] == 8192 and cfg(r) == '{"epi_stages": 3, "tile_n": 192}')
    p0 = next(r for r in before if r["m"] == 8192 and cfg(r) == '{"epi_stages": 3, "promotion_interval": 0, "tile_n": 192}')
    assert (f"{p0['per_tensor_tflops']:.0f} TFLOP/s never promoting against {p4['per_tensor_tflops']:.0f} promoting"
            in MD)
    assert record["config"]["n_halves"] == 2 and "`n_halves=2`" in MD


def test_accuracy_table_shape_in_prose(record):
    assert {(r["m"], r["n"]) for r in record["accuracy"]} == {(1024, 1024)} and "M = N = 1024" in MD
    assert min(r["k"] for r in record["accuracy"]) == 1024 and max(r["k"] for r in record["accuracy"]) == 16384
