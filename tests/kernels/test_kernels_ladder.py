"""The GEMM ladder (layoutlab.kernels.ladder): every rung's file exists, parses and (with the CuTe DSL) imports
with the named kernel class and public function; the diffs between neighbouring rungs are computed from the files
and add each rung's key calls; the measurements each rung names are in results/. CPU only."""

import ast
import importlib

import pytest

from layoutlab.dsl import HAVE_DSL, SKIP_REASON
from layoutlab.errors import LayoutError
from layoutlab.kernels import KERNEL_MODULES, ladder
from layoutlab.kernels.ladder import LADDER, Rung, rung, rung_checks, rung_diff, rung_row, rung_source

PAIRS = [(rung(r.prev), r) for r in LADDER[1:]]          # each rung and the one it builds on


def _added(diff):
    return "\n".join(line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))


def _removed(diff):
    return "\n".join(line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---"))


def test_the_ladder_is_linked_bottom_to_top():
    assert LADDER[0].prev is None and [r.name for r in LADDER[:6]] == [
        "sgemm_simple", "sgemm_fast", "gemm_ampere", "gemm_hopper", "gemm_hopper_specialized", "gemm_hopper_ws"]
    assert len({r.name for r in LADDER}) == len(LADDER)
    for below, above in PAIRS:
        assert above.prev == below.name and above.adds, above.name
    broken = (LADDER[0], Rung("x", "simt_fast", "SgemmFast", ("run",), "idea", prev="gemm_hopper"))
    with pytest.raises(LayoutError, match="says prev='gemm_hopper', but the rung below it is 'sgemm_simple'"):
        rung("x", broken)
    with pytest.raises(LayoutError, match="no rung 'gemm_volta'"):
        rung("gemm_volta")


@pytest.mark.parametrize("r", LADDER, ids=lambda r: r.name)
def test_each_rung_file_exists_and_parses_with_its_parts(r):
    assert r.path.exists() and r.path.parent.name == "kernels"
    ast.parse(r.path.read_text())                  # compiles as Python
    compile(r.path.read_text(), str(r.path), "exec")
    assert KERNEL_MODULES.get(r.name, r.module) == r.module      # the public entry agrees with the rung
    src = rung_source(r)
    if r.parts is not None:
        headers = [line for line in src.splitlines() if line.startswith(f"# {r.module}.py: ")]
        assert len(headers) == len(r.parts)
        for part in r.parts:
            assert any(h.endswith(f".{part}") for h in headers)
    assert "self.cfg.timeline" not in src and "_stamp(" not in src      # the instrumentation is left out


@pytest.mark.dsl
@pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON)
@pytest.mark.parametrize("r", LADDER, ids=lambda r: r.name)
def test_each_rung_imports_with_its_kernel_and_entry(r):
    mod = importlib.import_module(f"layoutlab.kernels.{r.module}")
    assert callable(getattr(mod, r.name))
    head, *rest = r.kernel.split(".")
    obj = getattr(mod, head)
    if rest:                                        # a class built by a factory: build it
        obj = obj()
        assert obj.__name__ == rest[-1]
    for part in r.parts or ():
        assert callable(getattr(obj, part)), (r.name, part)


@pytest.mark.parametrize("below,above", PAIRS, ids=lambda r: r.name)
def test_each_diff_adds_the_rung_idea(below, above):
    d = rung_diff(below, above)
    assert d.startswith(f"--- {below.name} ({below.module}.py)\n+++ {above.name} ({above.module}.py)\n")
    added, removed = _added(d), _removed(d)
    assert added and removed
    for call in above.adds:
        assert call in added and call not in rung_source(below), (above.name, call)


def test_the_diffs_key_lines():
    """Hand-picked lines each step is about, in the + or - side of the diff where a reader would look."""
    d = rung_diff("sgemm_simple", "sgemm_fast")
    assert "cute.arch.cp_async_commit_group()" in _added(d)
    assert "value = tAgA_k[i]" in _removed(d)                 # the element-by-element copy goes
    d = rung_diff("sgemm_fast", "gemm_ampere")
    assert "warp.MmaF16BF16Op(self.dtype, cutlass.Float32, (16, 8, 16))" in _added(d)
    assert "cute.make_composed_layout(" in _added(d)
    d = rung_diff("gemm_ampere", "gemm_hopper")
    assert "cpasync.CopyBulkTensorTileG2SOp()" in _added(d) and "warpgroup.wait_group(1)" in _added(d)
    assert "cute.arch.cp_async_wait_group(self.stages - 2)" in _removed(d)
    d = rung_diff("gemm_hopper", "gemm_hopper_specialized")
    assert "cute.arch.setmaxregister_decrease(PRODUCER_REGS)" in _added(d)
    assert "warp == 0 and produce.count < k_tiles" in _removed(d)      # warp 0 no longer loads between its MMAs
    assert "while " not in _added(d) and "mcast" not in _added(d)      # one idea: no persistence, no cluster yet
    d = rung_diff("gemm_hopper_specialized", "gemm_hopper_ws")
    assert "while cluster_tile < num_cluster_tiles:" in _added(d) and "mcast_mask=b_mask)" in _added(d)
    assert "setmaxregister" not in _added(d) + _removed(d)             # specialization came one rung earlier


def test_a_whole_file_rung_diffs_whole_files(tmp_path, monkeypatch):
    """parts=None: the diff is between the two files (as for a file made from the previous rung's)."""
    text = rung("gemm_hopper_specialized").path.read_text()
    (tmp_path / "hopper_specialized.py").write_text(text)
    (tmp_path / "hopper_next.py").write_text(text.replace("PRODUCER_REGS, CONSUMER_REGS = 40, 232",
                                                          "PRODUCER_REGS, CONSUMER_REGS = 24, 240"))
    monkeypatch.setattr(ladder, "_HERE", tmp_path)
    below = rung("gemm_hopper_specialized")
    above = Rung("gemm_next", "hopper_next", "make_hopper_specialized_class.HopperGemmSpecialized", None,
                 "more registers", prev="gemm_hopper_specialized", adds=("24, 240",))
    d = rung_diff(below, above)
    assert _removed(d) == "PRODUCER_REGS, CONSUMER_REGS = 40, 232"
    assert _added(d) == "PRODUCER_REGS, CONSUMER_REGS = 24, 240"
    assert rung_source(above) == (tmp_path / "hopper_next.py").read_text()
    missing = Rung("gemm_gone", "no_such_file", "K", ("kernel",), "idea", prev="gemm_hopper_specialized")
    with pytest.raises(LayoutError, match="names module 'no_such_file'"):
        rung_source(missing)
    wrong = Rung("gemm_wrong", "hopper_specialized", "make_hopper_specialized_class.HopperGemmSpecialized",
                 ("main_loop",), "idea")
    with pytest.raises(LayoutError, match=r"no 'main_loop' among \["):
        rung_source(wrong)


def test_every_rung_has_its_measurement_and_gpu_tests_recorded():
    from layoutlab import gpu
    for r in LADDER:
        row = rung_row(r)
        dtype, layout, (m, n, k) = r.bench
        assert (row["kernel"], row["dtype"], row["layout"], row["m"], row["n"], row["k"]) == (
            r.name, dtype, layout, m, n, k)
        # the ratio is what the two medians give, and the result agreed with cuBLAS
        assert row["pct_cublas"] == pytest.approx(100 * row["cublas_ms"] / row["ms"])
        assert row["rel_err_vs_cublas"] < 1e-2
        checks = rung_checks(r)
        assert checks["passed"] > 0 and checks["failed"] == 0, checks
    rec = gpu.load_result("gemm_h100_bench")
    with pytest.raises(LayoutError, match="has no row for gemm_ampere float16 TN 8192x8192x8192"):
        rung_row("gemm_ampere", dict(rec, rows=[x for x in rec["rows"] if x["kernel"] != "gemm_ampere"]))


def test_the_listing_shows_as_a_fenced_block():
    listing = ladder.Listing(rung_diff("gemm_hopper", "gemm_hopper_ws"), "diff")
    md = listing._repr_markdown_()
    assert md.startswith("```diff\n--- gemm_hopper (hopper.py)") and md.endswith("\n```")


def test_docstring_examples_run():
    import doctest
    failed, tried = doctest.testmod(ladder)
    assert tried >= 8 and failed == 0


def test_rung_sections_show_every_rung_above_a_number():
    from layoutlab.kernels.ladder import rung_sections
    md = rung_sections(4)
    assert md.count("#### Rung ") == len(LADDER) - 3
    assert "#### Rung 4 — `gemm_hopper`" in md and "```diff\n--- gemm_ampere (ampere.py)" in md
    assert "% of cuBLAS" in md and md._repr_markdown_() == str(md)
    assert rung_sections(len(LADDER) + 1) == "(no rung above this one in this version of layoutlab)"


def test_a_rung_from_another_run_is_compared_with_the_rung_below_in_its_own_run():
    """A rung recorded in a later run than the rung below: its report adds the rung below at the same point from
    that same run (the fair comparison), read from the record here."""
    from layoutlab import gpu
    from layoutlab.kernels.ladder import rung_report
    checked = 0
    for below, above in PAIRS:
        if below.record == above.record:
            assert "in the same run the rung below" not in rung_report(above)
            continue
        dtype, layout, (m, n, k) = above.bench
        same = [x for x in gpu.load_result(above.record)["rows"] if x["kernel"] == below.name and
                (x["dtype"], x["layout"], x["m"], x["n"], x["k"]) == (dtype, layout, m, n, k)]
        if same:
            assert (f"in the same run the rung below, {below.name}: {same[0]['tflops']:.1f} TFLOP/s = "
                    f"{same[0]['pct_cublas']:.1f} % of cuBLAS") in rung_report(above)
            checked += 1
    assert checked >= 1
