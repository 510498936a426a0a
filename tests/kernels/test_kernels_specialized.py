"""gemm_hopper_specialized (the warp-specialization rung): CPU compile + PTX/structure checks (CI), refusals before
any CUDA call, GPU correctness against float64.

CI: the kernel compiles for sm_90a on the CPU; its PTX holds a producer/consumer split (384 threads, setmaxnreg
down to 40 and up to 232) and none of the next rung's ideas (no multicast, no cluster, no persistent tile loop).
GPU (`make gpu-test`): random and odd sizes, every majorness, fp16 (cupy) and bf16 (torch), beta != 0, NaN-poisoned
C, the SASS without spills.

`python tests/test_kernels_specialized.py sanitize` runs it at small sizes (the command compute-sanitizer wraps).
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from layoutlab.errors import LayoutError

LIB = str(Path(__file__).resolve().parents[2] / "lib")

_COMPILE_SCRIPT = textwrap.dedent("""
    import sys, warnings
    sys.path.insert(0, {lib!r})
    warnings.simplefilter("error", DeprecationWarning)
    from layoutlab.kernels.hopper_specialized import compile_hopper_gemm_specialized
    compile_hopper_gemm_specialized("bfloat16", "K", "K", "N")
    compile_hopper_gemm_specialized("float16", "M", "N", "M", with_beta=True)
""")


def _compile(tmp_path, keep):
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", CUTE_DSL_KEEP=keep, CUTE_DSL_DUMP_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT.format(lib=LIB)],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return {p.name: p.read_text() for p in tmp_path.glob(f"*.{keep}")}


@pytest.fixture(scope="module")
def specialized_ptx(tmp_path_factory):
    pytest.importorskip("cutlass", reason="needs nvidia-cutlass-dsl")
    return _compile(tmp_path_factory.mktemp("ptx"), "ptx")


@pytest.mark.dsl
def test_specialized_ptx_is_a_producer_and_two_consumers_without_cluster(specialized_ptx):
    assert len(specialized_ptx) == 2, sorted(specialized_ptx)
    for name, ptx in specialized_ptx.items():
        words = " ".join(ptx.split())
        assert ".target sm_90a" in ptx
        assert ".reqntid 384, 1, 1" in words and ".minnctapersm 1" in words       # 3 warpgroups, 1 CTA per SM
        assert "setmaxnreg.dec.sync.aligned.u32 40;" in words and "setmaxnreg.inc.sync.aligned.u32 232;" in words
        assert words.count("wgmma.mma_async.sync.aligned.m64n256k16.f32") == 4, name   # 4 k-blocks of 16
        assert "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes" in ptx
        assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx and "stmatrix.sync.aligned" in ptx
        # what the next rung (gemm_hopper_ws) adds is absent: no multicast, no cross-CTA barrier arrivals
        assert "multicast::cluster" not in ptx and "mbarrier.arrive.shared::cluster" not in ptx, name
        assert "%nctaid.z" not in ptx                 # no persistent grid to walk


def test_specialized_config_and_refusals_before_cuda():
    from layoutlab.kernels.hopper_specialized import (CONSUMER_REGS, PRODUCER_REGS, HopperSpecializedConfig,
                                                      gemm_hopper_specialized)
    assert 128 * (PRODUCER_REGS + 2 * CONSUMER_REGS) <= 65536 < 128 * (PRODUCER_REGS + 2 * (CONSUMER_REGS + 8))
    cfg = HopperSpecializedConfig()
    # C's own 4 x 128 x 32 x 2-byte buffers still leave 4 stages of (128 + 256) x 64 x 2 bytes in 227 KiB
    assert cfg.ab_stages(reserved_bytes=1024 + 4 * 128 * 32 * 2) == 4 == (232448 - 1024 - 32768) // 49152
    with pytest.raises(LayoutError, match="epi_stages=3"):
        HopperSpecializedConfig(epi_stages=3)
    with pytest.raises(LayoutError, match="cupy array or a torch CUDA tensor"):
        gemm_hopper_specialized(np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float16))
    from test_kernels_streamk import _aligned, _op
    a = _aligned((64, 64), np.float32)
    with pytest.raises(LayoutError, match="dtype float32"):
        gemm_hopper_specialized(_op(a), _op(a.T))
    with pytest.raises(LayoutError, match="multiple of 8"):
        gemm_hopper_specialized(_op(_aligned((64, 1001))), _op(_aligned((64, 1008))[:, :1001].T))
    b = _aligned((64, 64))
    for bad in (HopperSpecializedConfig(cluster_mn=(2, 1)), HopperSpecializedConfig(timeline=True)):
        with pytest.raises(LayoutError, match="no pipeline timeline and no cluster"):
            gemm_hopper_specialized(_op(b), _op(b.T), config=bad)


# ---------------------------------------------------------------------------------------------------
# GPU: correctness against float64 (check_gemm from test_kernels_hopper: NaN-poisoned C, fresh data)
# ---------------------------------------------------------------------------------------------------

def _spec(*args, **kw):
    from layoutlab.kernels import gemm_hopper_specialized
    return gemm_hopper_specialized(*args, **kw)


def _cases():
    sizes = [(128, 256, 64), (1, 8, 1), (77, 200, 33), (1023, 513, 771), (4096, 4096, 4096), (3000, 5000, 2000),
             (2048, 2048, 2048)]
    cases = [(m, n, k, ["TN", "NT", "NN", "TT"][i % 4], "N") for i, (m, n, k) in enumerate(sizes)]
    return cases + [(300, 264, 520, "TN", "M"), (2500, 4100, 1500, "NT", "M")]


@pytest.mark.gpu
@pytest.mark.parametrize("lib,dtype", [("cupy", "float16"), ("torch", "bfloat16")])
@pytest.mark.parametrize("m,n,k,layout,c_major", _cases())
def test_specialized_matches_float64(lib, dtype, m, n, k, layout, c_major):
    if lib == "torch":
        pytest.importorskip("torch")
    from test_kernels_hopper import check_gemm
    err = check_gemm(_spec, lib, dtype, layout, m, n, k, c_major=c_major, seed=m + n + k)
    assert err < 1e-2, f"{dtype} {layout} {m}x{n}x{k}: relative error {err:.3g}"


@pytest.mark.gpu
@pytest.mark.parametrize("layout,beta", [("TN", -2.0), ("NT", 0.5), ("TT", 1.0)])
def test_specialized_alpha_beta(layout, beta):
    from test_kernels_hopper import check_gemm
    err = check_gemm(_spec, "cupy", "float16", layout, 333, 264, 200, alpha=0.5, beta=beta)
    assert err < 1e-2


@pytest.mark.gpu
def test_specialized_sass_has_no_spills(tmp_path):
    sass = "".join(_compile(tmp_path, "sass").values())
    assert "HGMMA.64x256x16.F32" in sass and "UTMALDG" in sass and "UTMASTG" in sass and "STSM" in sass
    assert "MULTICAST" not in sass
    assert not re.search(r"\b(LDL|STL)\b", sass), "local-memory traffic (register spills)"


def sanitize_main():
    from test_kernels_hopper import check_gemm
    worst = 0.0
    for (m, n, k) in [(200, 136, 72), (1100, 1030, 520)]:
        worst = max(worst, check_gemm(_spec, "cupy", "float16", "TN", m, n, k))
        worst = max(worst, check_gemm(_spec, "torch", "bfloat16", "NT", m, n, k, alpha=2.0, beta=0.5))
    print(f"sanitize runs done, worst relative error {worst:.3g}")
    sys.exit(0 if worst < 1e-2 else 1)


if __name__ == "__main__" and sys.argv[1:] == ["sanitize"]:
    sys.path.insert(0, LIB)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sanitize_main()
