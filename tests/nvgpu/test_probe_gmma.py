"""probe.gmma on a CPU: the cases, the PTX-ISA model of what each computes, the CUDA source, and the
comparison (on the H100 recording in results/ once it exists)."""

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from layoutlab.probe import gmma as probe

RECORD = Path(__file__).resolve().parents[2] / "results" / "gmma_probe_h100.json"


@pytest.fixture(scope="module")
def all_cases():
    return probe.cases()


def test_cases_cover_every_pair_and_every_perturbation(all_cases):
    kinds = probe.KINDS
    documented = {(a, b) for name, a, b, *_rest, expect in all_cases if name.startswith("documented")}
    assert documented == {(a, b) for a in kinds for b in kinds}
    names = [c[0] for c in all_cases]
    assert len(names) == len(set(names))
    wrong = [c for c in all_cases if c[-1] == "wrong"]
    assert {c[2] for c in wrong} == set(kinds)              # every B kind has a wrong variant that must fail
    assert any(n.startswith("sbo_x2") for n in names) and any(n.startswith("lbo_x2") for n in names)
    assert any(n.startswith("pattern_shift") for n in names)


def test_the_ptx_model_agrees_with_every_claim(all_cases):
    """Under the PTX ISA's reading of a descriptor, documented cases are exact, wrong fields are not, a K-major
    swizzled operand ignores LBO, and a shifted pattern needs the base offset of the PTX formula."""
    rng = np.random.default_rng(1)
    A = rng.integers(-2, 3, (64, probe.K)).astype(np.float64)
    B = rng.integers(-2, 3, (probe.N, probe.K)).astype(np.float64)
    ref = A @ B.T
    claims = [c for c in all_cases if c[-1] != "observe"]
    assert len(claims) == 117
    for case in claims:
        exact = np.array_equal(probe.simulate(case, A, B), ref)
        assert exact == (case[-1] == "exact"), case[0]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_cuda_source_compiles_for_sm90a(tmp_path):
    cu = tmp_path / "p.cu"
    cu.write_text(probe.source())
    proc = subprocess.run(["nvcc", "-cubin", "-O1", "-gencode=arch=compute_90a,code=sm_90a", "-o",
                           str(tmp_path / "p.cubin"), str(cu)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for ta in (0, 1):
        for tb in (0, 1):
            assert f"gmma_probe_a{ta}_b{tb}" in probe.source()


def _fake_record(all_cases, flip=None):
    rec = {"gpu": "fake", "date": "x", "versions": {}, "errors": {}, "cases": {}}
    for name, a, b, sa, sb, da, db, expect in all_cases:
        exact = expect != "wrong"
        if name == flip:
            exact = not exact
        rec["cases"][name] = {"desc_a": [f"0x{x:016x}" for x in da], "desc_b": [f"0x{x:016x}" for x in db],
                              "exact": exact, "max_abs_err": 0.0 if exact else 7.0}
    return rec


def test_compare_flags_a_broken_claim(all_cases):
    assert probe.compare(_fake_record(all_cases))["mismatches"] == []
    flip = next(c[0] for c in all_cases if c[-1] == "wrong")
    bad = probe.compare(_fake_record(all_cases, flip))["mismatches"]
    assert len(bad) == 1 and flip in bad[0]
    rec = _fake_record(all_cases)
    first = next(iter(rec["cases"]))
    rec["cases"][first]["desc_b"][0] = "0x0000000000000000"
    assert any("descriptors differ" in m for m in probe.compare(rec)["mismatches"])


def test_recorded_h100_probe():
    if not RECORD.exists():
        pytest.skip("no H100 recording yet (tools/gmma_gpu_run.sh writes it)")
    rec = json.loads(RECORD.read_text())
    assert {"gpu", "date", "versions"} <= rec.keys()
    res = probe.compare(rec)
    assert res["mismatches"] == []


@pytest.mark.gpu
def test_probe_live():
    res = probe.compare(probe.run())
    assert res["mismatches"] == []


class _FakeArrays:
    """numpy standing in for CuPy."""
    float32 = np.float32

    @staticmethod
    def asarray(x):
        return np.asarray(x)

    @staticmethod
    def zeros(n, dtype):
        return np.zeros(n, dtype=dtype)

    @staticmethod
    def asnumpy(x):
        return np.asarray(x)


class _PtxModelModule:
    """The probe kernels executed by the PTX ISA's reading of a descriptor (gmma_read_addresses)."""

    def get_function(self, name):
        from layoutlab.nvgpu.warpgroup import WarpgroupMmaF16BF16Op
        from layoutlab.cute.atom import make_mma_atom
        from layoutlab.nvgpu.gmma import gmma_read_addresses
        from layoutlab.probe.atoms import _tv_table
        ta, tb = int(name[-4]), int(name[-1])
        c_tab = _tv_table(make_mma_atom(WarpgroupMmaF16BF16Op("f16", "f32", (64, probe.N, 16))).layout_c_tv,
                          128, probe.N // 2)

        def launch(grid, block, args):
            imgA, nA, imgB, nB, sA, sB, dA, dB, kblocks, out = args
            assert grid == (1,) and block == (128,) and int(nA) == imgA.size and int(kblocks) == probe.K // 16
            D = np.zeros((64, probe.N))
            mems = []
            for img, shift in ((imgA, int(sA)), (imgB, int(sB))):
                mem = np.zeros(32768 // 2 + 16384, dtype=np.uint16)
                mem[shift // 2: shift // 2 + img.size] = img
                mems.append(mem)
            for kb in range(int(kblocks)):
                ops = []
                for mem, desc, major, mn in ((mems[0], int(dA[kb]), "MN" if ta else "K", 64),
                                             (mems[1], int(dB[kb]), "MN" if tb else "K", probe.N)):
                    addr = gmma_read_addresses(desc, major, 16, mn)
                    ops.append(mem[addr // 2].view(np.float16).astype(np.float64))
                D += ops[0] @ ops[1].T
            out[:] = D.reshape(-1, order="F")[c_tab].reshape(-1)
        return launch


def test_record_host_side_with_the_ptx_model_as_hardware():
    rec = probe.record(_PtxModelModule(), _FakeArrays(), gpu_name="PTX model", versions={"model": 1})
    assert {"gpu", "date", "versions"} <= rec.keys()
    res = probe.compare(rec)
    claims = [n for n, r in rec["cases"].items() if r["expect"] != "observe"]
    assert len(claims) == len(probe.cases()) == 117 and len(rec["cases"]) == 117 and not rec["errors"]
    assert res["mismatches"] == []
    assert all(rec["cases"][n]["exact"] == (rec["cases"][n]["expect"] == "exact") for n in claims)
