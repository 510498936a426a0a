"""wgmma_tile: config refusals (no DSL), CPU compile for sm_90a with the promised instruction sequence,
the recorded H100 check, and (``make gpu-test``) the live check against a float64 reference."""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from layoutlab.errors import LayoutError
from layoutlab.kernels.wgmma_tile import GPU_CONFIGS, WgmmaTileConfig, check_record

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "results" / "wgmma_tile_h100.json"


@pytest.mark.parametrize("args,match", [
    (("float32",), "float16 or bfloat16"),
    (("float16", 12), "multiple of 8"),
    (("float16", 64, 24), "multiple of 16"),
    (("float16", 64, 32, "K_SW128"), "multiple of its row of 64"),
    (("float16", 32, 64, "K_SW128", "MN_SW128"), "MN extent \\(32\\)|multiple of its row of 64"),
    (("float16", 64, 64, "K_SW256"), "one of"),
    (("float16", 64, 64, "K_SW128", "RMEM"), "B from shared memory only"),
])
def test_config_refusals(args, match):
    with pytest.raises(LayoutError, match=match):
        WgmmaTileConfig(*args)


_SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {lib!r})
    from layoutlab.kernels.wgmma_tile import WgmmaTileConfig, compile_wgmma_tile
    out = {{}}
    for cfg in [("float16", 64, 64, "K_SW128", "MN_SW64"), ("bfloat16", 256, 32, "MN_SW32", "K_INTER"),
                ("float16", 64, 32, "RMEM", "MN_SW128")]:
        out[repr(cfg)] = compile_wgmma_tile(WgmmaTileConfig(*cfg)).artifacts.PTX
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def ptx(tmp_path_factory):
    pytest.importorskip("cutlass", reason="needs nvidia-cutlass-dsl")
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", CUTE_DSL_KEEP="ptx",
               CUTE_DSL_DUMP_DIR=str(tmp_path_factory.mktemp("ptx")))
    proc = subprocess.run([sys.executable, "-c", _SCRIPT.format(lib=str(ROOT / "lib"))], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.dsl
def test_ptx_has_fence_mma_commit_wait_in_order(ptx):
    for cfg, text in ptx.items():
        if "RMEM" in cfg:
            continue
        n, k = eval(cfg)[1:3]
        assert ".target sm_90a" in text
        body = text[text.index("fence.proxy.async.shared::cta"):]
        steps = [body.index(s) for s in ("wgmma.fence.sync.aligned", "wgmma.mma_async",
                                         "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned")]
        assert steps == sorted(steps), cfg
        # one wgmma per k-block of 16, all m64nNk16, none after the commit
        mmas = re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m64n\d+k16)\.f32\.(\w+)\.\w+", text)
        assert mmas == [(f"m64n{n}k16", "bf16" if "bfloat16" in cfg else "f16")] * (k // 16), cfg
        assert "wgmma.mma_async" not in body[steps[2]:]


@pytest.mark.dsl
def test_ptx_transpose_flags_follow_the_majorness(ptx):
    # imm-trans-a / imm-trans-b: 0 for K-major, 1 for MN-major (PTX ISA, Shared Memory Matrix Layout)
    for cfg, text in ptx.items():
        if "RMEM" in cfg:
            continue
        a_kind, b_kind = eval(cfg)[3:]
        flags = re.findall(r"wgmma\.mma_async[^;]*p, 1,\s*1, (\d), (\d);", text)
        assert flags and set(flags) == {(str(int(a_kind.startswith("MN"))), str(int(b_kind.startswith("MN"))))}


@pytest.mark.dsl
def test_rs_ptx_reads_a_from_registers_after_the_fence(ptx):
    """RS: the A fragment comes from global memory into registers (4 x 32 bits per k-block, the chapter's
    partition), then wgmma.fence, then one wgmma per k-block with A as four registers and only B a descriptor."""
    text = next(t for c, t in ptx.items() if "RMEM" in c)
    mmas = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.f16\.f16 \{[^}]*\}, "
                      r"\{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, p, 1,\s*1, 1;", text)
    assert len(mmas) == 2                                   # K = 32: two k-blocks; B MN-major: trans-b 1
    loads = [m.start() for m in re.finditer(r"ld\.global\.b32", text)]
    assert len(loads) == 8 and max(loads) < text.index("wgmma.fence.sync.aligned") < text.index("wgmma.mma_async")


def test_recorded_h100_check():
    if not RECORD.exists():
        pytest.skip("no H100 recording yet (tools/gmma_gpu_run.sh writes it)")
    rec = json.loads(RECORD.read_text())
    assert {"gpu", "date", "versions"} <= rec.keys()
    checked, problems = check_record(rec)
    assert checked == len(GPU_CONFIGS) and problems == []


def test_check_record_finds_problems():
    good = {"config": ["float16", 64, 64, "K_SW128", "K_SW128"],
            "integers": {"exact": True, "max_abs_err": 0.0, "max_abs_ref": 10.0},
            "normal": {"max_abs_err": 1e-6, "max_abs_ref": 10.0}}
    bad = dict(good, config=["float16", 64, 64, "K_SW64", "K_SW128"],
               integers={"exact": False, "max_abs_err": 3.0, "max_abs_ref": 10.0})
    checked, problems = check_record({"cases": [good, bad]})
    assert checked == 2
    assert any("K_SW64" in p and "integer inputs off by 3.0" in p for p in problems)
    assert any("not in the record" in p for p in problems)
    assert not any("'K_SW128', 'K_SW128')" in p and "off" in p for p in problems)


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", [("float16", 64, 64, "K_SW128", "MN_SW128"), ("float16", 24, 48, "K_INTER", "MN_INTER"),
                                 ("float16", 64, 64, "RMEM", "K_SW128")])
def test_live_against_float64(cfg):
    from layoutlab.kernels.wgmma_tile import gpu_check
    checked, problems = check_record({"cases": gpu_check([cfg])["cases"]})
    assert [p for p in problems if "not in the record" not in p] == []
