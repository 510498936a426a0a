"""tma_copy (the minimal TMA-load kernel) and its probe: CPU compile + PTX checks (CI), the probe's model side,
the recorded H100 run (once it exists) and a live GPU run (`make gpu-test`).

The PTX check counts ``cp.async.bulk.tensor`` instructions: the kernel unrolls one copy per TMA box per stage,
so the count must equal ``len(tma_partition(atom, tile)) * stages`` from layoutlab.nvgpu.tma -- the model's box
derivation, checked against what the DSL emitted.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from layoutlab import gpu
from layoutlab.probe import tma as probe
from layoutlab.nvgpu.tma import tma_partition

ROOT = Path(__file__).resolve().parents[2]
LIB = str(ROOT / "lib")
RECORD = ROOT / "results" / "tma_probe_h100.json"

_SCRIPT = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    sys.path.insert(0, {lib!r})
    from layoutlab.kernels.tma_copy import compile_tma_copy
    from layoutlab.probe.tma import CASES, MISALIGNED_CASES, MULTICAST_CASES, REFUSED_CASES
    out = {{}}
    for i, case in enumerate(CASES + MULTICAST_CASES + MISALIGNED_CASES + REFUSED_CASES):
        for p in Path({dump!r}).glob("*.ptx"):
            p.unlink()                      # two cases may share a file name (same tensor signature)
        compile_tma_copy(case)
        out[case["name"]] = "".join(p.read_text() for p in Path({dump!r}).glob("*.ptx"))
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def ptx(tmp_path_factory):
    pytest.importorskip("cutlass", reason="needs nvidia-cutlass-dsl")
    dump = tmp_path_factory.mktemp("tma_ptx")
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=str(dump),
               CUTE_DSL_DISABLE_FILE_CACHING="1")
    proc = subprocess.run([sys.executable, "-c", _SCRIPT.format(lib=LIB, dump=str(dump))], env=env, cwd=dump,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.dsl
@pytest.mark.parametrize("case", probe.CASES + probe.MISALIGNED_CASES,
                         ids=[c["name"][:40] for c in probe.CASES + probe.MISALIGNED_CASES])
def test_kernel_ptx_has_one_tma_per_box(case, ptx):
    text = ptx[case["name"]]
    assert ".target sm_90a" in text
    assert ".shared .align 1024" in text                      # the SharedStorage buffer, 1024-byte aligned
    assert "mbarrier.arrive.expect_tx" in text and "mbarrier.try_wait.parity" in text
    assert "fence.proxy.async.shared::cta" in text
    _, atom = probe._atom(case)
    boxes = sum(len(tma_partition(atom, tuple(t))) for t in case["tiles"])
    assert text.count("cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes") == boxes


@pytest.mark.dsl
@pytest.mark.parametrize("case", probe.MULTICAST_CASES, ids=[c["name"][:30] for c in probe.MULTICAST_CASES])
def test_multicast_kernel_ptx(case, ptx):
    """A cluster launch: each CTA issues its slice of every box with .multicast::cluster (one instruction per
    box, as without multicast) and the CTAs meet at cluster barriers around it."""
    text = ptx[case["name"]]
    mc = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
    _, atom = probe._atom(case)
    assert text.count(mc) == sum(len(tma_partition(atom, tuple(t))) for t in case["tiles"])
    assert text.count("barrier.cluster.arrive") == 2 and "%cluster_ctarank" in text
    want = probe.expected_bytes(case)
    one = probe.expected_bytes(dict(case, multicast=1))
    assert want == one * case["multicast"]


@pytest.mark.dsl
def test_dsl_aborts_compiling_its_own_120_byte_box():
    """DSL 4.8.1 accepts the atom (tests/oracles/test_tma_dsl.py) but aborts compiling a kernel with it; the chapter
    says so. If this starts to pass compilation, update chapter 7's note and add the case to the probe."""
    pytest.importorskip("cutlass", reason="needs nvidia-cutlass-dsl")
    code = ("import sys, json; sys.path.insert(0, %r)\nfrom layoutlab.kernels.tma_copy import compile_tma_copy\n"
            "from layoutlab.probe.tma import DSL_ABORT_CASE\ncompile_tma_copy(DSL_ABORT_CASE)\nprint('compiled')") % LIB
    proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, CUTE_DSL_ARCH="sm_90a"),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "compiled" not in proc.stdout
    with pytest.raises(Exception, match="120 bytes is not a multiple of 16"):
        probe.expected_bytes(probe.DSL_ABORT_CASE)


@pytest.mark.dsl
def test_refused_cases_compile_in_the_dsl(ptx):
    """The DSL compiles both; layoutlab refuses them (tests/oracles/test_tma_dsl.py), the H100 run says what happens."""
    for case in probe.REFUSED_CASES:
        assert "cp.async.bulk.tensor" in ptx[case["name"]]
        with pytest.raises(Exception):
            probe.expected_bytes(case)


def test_model_and_cute_view_agree_and_show_fill():
    for case in probe.CASES + probe.MISALIGNED_CASES:
        want = probe.expected_bytes(case)
        assert want == probe.cute_view_bytes(case), case["name"]
    zero_fill = probe.expected_bytes(probe.CASES[3])
    tile1 = zero_fill[8192:]                                    # stage 1: rows 192..255 of 200, cols 128..191 of 136
    assert tile1.count(0) > 8192 - 8 * 8 * 2 * 2                 # only 8 x 8 elements are inside the tensor


def test_truncated_stride_model_differs_from_the_legal_reading():
    """The 192-byte reading of a 200-byte stride is not what a legal map would give (so the recorded match
    with it is informative): from row 1 on, every row starts 8 bytes early."""
    case = probe.REFUSED_CASES[0]
    bad = probe.truncated_stride_bytes(case)
    legal = probe.truncated_stride_bytes(dict(case, gmem=[case["gmem"][0], [96, 1]]))
    assert bad[:128] == legal[:128] and bad[128:] != legal[128:]


def test_compare_catches_a_wrong_byte():
    rec = {"cases": [{"case": c, "status": "ran", "bytes": probe._pack(probe.expected_bytes(c))}
                     for c in probe.CASES[:3]]}
    assert probe.compare(rec)["mismatches"] == [] and probe.compare(rec)["checked"] == 3
    bad = bytearray(probe.expected_bytes(probe.CASES[1]))
    bad[100] ^= 1
    rec["cases"][1]["bytes"] = probe._pack(bytes(bad))
    mm = probe.compare(rec)["mismatches"]
    assert len(mm) == 1 and mm[0]["first"] == [100]
    mc = probe.MULTICAST_CASES[0]
    good = {"case": mc, "status": "ran", "bytes": probe._pack(probe.expected_bytes(mc))}
    half = bytes(probe.expected_bytes(dict(mc, multicast=1))) + bytes(probe.expected_bytes(dict(mc, multicast=1))[:-16]) \
        + b"\xff" * 16                                 # CTA 1 missed the last chunk
    bad = {"case": mc, "status": "ran", "bytes": probe._pack(half)}
    assert probe.compare({"cases": [], "multicast_cases": [good]})["multicast"][0][2] == "every CTA holds the whole tile"
    res = probe.compare({"cases": [], "multicast_cases": [bad]})
    assert "differ" in res["multicast"][0][2] and res["mismatches"]
    failed = {"cases": [{"case": probe.CASES[0], "status": "error", "message": "CUDA_ERROR_ILLEGAL_ADDRESS"}]}
    assert probe.compare(failed)["mismatches"][0]["status"] == "error"


@pytest.mark.skipif(not RECORD.exists(), reason="no recording results/tma_probe_h100.json yet "
                                                "(bash tools/tma_gpu_run.sh on an H100)")
def test_recorded_probe_matches_the_model():
    rec = json.loads(RECORD.read_text())
    assert {"gpu", "date", "versions"} <= set(rec) and "H100" in rec["gpu"]
    res = probe.compare(rec)
    assert res["checked"] == len(probe.CASES)
    assert not res["mismatches"], res["mismatches"]
    assert all(status == "ran" for _, status, _ in res["multicast"]), res["multicast"]
    # what the H100 did with the configurations the DSL compiles but the driver's rules forbid
    stride = next(e for e in rec["refused_cases"] if "200 bytes" in e["case"]["name"])
    assert stride["status"] == "ran"
    assert probe.unpack(stride["bytes"]) == probe.truncated_stride_bytes(stride["case"])
    assert "192 bytes apart" in res["refused"][0][2]
    assert not res["cute_view_mismatches"], res["cute_view_mismatches"]


@pytest.mark.gpu
@pytest.mark.skipif(not gpu.is_hopper(), reason="TMA needs an sm_90 GPU")
def test_probe_live_on_gpu():
    rec = probe.run()
    res = probe.compare(rec)
    assert res["checked"] == len(probe.CASES) and not res["mismatches"], res["mismatches"]
