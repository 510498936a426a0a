"""Differential test: the wgmma descriptors layoutlab.nvgpu.gmma encodes equal those the CuTe DSL builds.

The DSL 4.8.1 does not hand out the 64-bit descriptor on a CPU, so the minimal kernel
(layoutlab.kernels.wgmma_tile) is compiled for sm_90a with every pair of shared-memory atom kinds (and a
few N, K, dtypes), and the descriptor constants are read from the PTX it keeps (each descriptor is
``(address >> 4) | constant``: the constant is the descriptor of a buffer at address 0). Ours:
``gmma_k_block_descs`` on the same atom tiled by our ``tile_to_shape``, smem_base = 0.
"""

import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from layoutlab import make_smem_layout_atom
from layoutlab.dsl import HAVE_DSL, SKIP_REASON
from layoutlab.nvgpu.gmma import gmma_k_block_descs

pytestmark = [pytest.mark.dsl, pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON)]

LIB = str(Path(__file__).resolve().parents[2] / "lib")
KINDS = ["K_INTER", "K_SW32", "K_SW64", "K_SW128", "MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128"]
ROW = {"INTER": 8, "SW32": 16, "SW64": 32, "SW128": 64}


def _fits(kind, mn, k):
    major, width = kind.split("_")
    return (k if major == "K" else mn) % ROW[width] == 0


CONFIGS = [("float16", 64, 64, a, b) for a, b in itertools.product(KINDS, KINDS)]
CONFIGS += [(dt, n, k, a, b) for dt in ("bfloat16",) for n, k in ((8, 16), (24, 48), (128, 128), (256, 32))
            for a, b in itertools.product(KINDS, KINDS) if _fits(a, 64, k) and _fits(b, n, k)][::3]

_SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {lib!r})
    from layoutlab.kernels.wgmma_tile import WgmmaTileConfig, compile_wgmma_tile, descriptor_constants
    out = {{}}
    for cfg in {configs!r}:
        ptx = compile_wgmma_tile(WgmmaTileConfig(*cfg)).artifacts.PTX
        out[repr(tuple(cfg))] = descriptor_constants(ptx)
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def dsl_descriptors(tmp_path_factory):
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", CUTE_DSL_KEEP="ptx",
               CUTE_DSL_DUMP_DIR=str(tmp_path_factory.mktemp("ptx")))
    proc = subprocess.run([sys.executable, "-c", _SCRIPT.format(lib=LIB, configs=CONFIGS)], env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _ours(dtype, n, k, kind, mn):
    major = kind.split("_")[0]
    tile = make_smem_layout_atom(kind, 16).tile_to_shape((mn, k), (0, 1) if major == "K" else (1, 0))
    return [d.desc for d in gmma_k_block_descs(major, tile, 16)]


@pytest.mark.xdist_group("gmma_dsl")
def test_descriptors_equal_the_dsl(dsl_descriptors):
    compared = 0
    for cfg in CONFIGS:
        dtype, n, k, a_kind, b_kind = cfg
        got = dsl_descriptors[repr(tuple(cfg))]
        assert [s for s, _, _ in got] == [f"m64n{n}k16"] * (k // 16), cfg
        dsl_a = [a for _, a, _ in got]
        dsl_b = [b for _, _, b in got]
        assert _ours(dtype, n, k, a_kind, 64) == dsl_a, (cfg, [hex(x) for x in dsl_a])
        assert _ours(dtype, n, k, b_kind, n) == dsl_b, (cfg, [hex(x) for x in dsl_b])
        compared += len(dsl_a) + len(dsl_b)
    # vacuity guard: every atom kind, both operands, several k-blocks each
    assert compared == 976, compared          # the number chapter 8 quotes
    print(f"{compared} descriptors identical to the DSL's over {len(CONFIGS)} kernels")


def test_dsl_is_silent_where_we_refuse():
    """The DSL 4.8.1 builds MN-major fp8/int8 atoms and an RS atom with an MN-major A (chapter 8 shows it);
    check_operand_major refuses each. If a DSL release starts refusing, this test says so."""
    from layoutlab.dsl import dsl_eval
    from layoutlab.errors import LayoutError
    from layoutlab.nvgpu.gmma import check_operand_major
    setup = ("from cutlass import Float8E4M3FN, Float16, Float32, Int8, Int32\nW = cute.nvgpu.warpgroup\n"
             "OM = cute.nvgpu.OperandMajorMode\n")
    cases = [("W.MmaF8Op(Float8E4M3FN, Float8E4M3FN, Float32, (64,64,32), W.OperandSource.SMEM, OM.MN, OM.K)", ("e4m3", "MN", "smem")),
             ("W.MmaI8Op(Int8, Int8, Int32, (64,64,32), W.OperandSource.SMEM, OM.K, OM.MN)", ("s8", "MN", "smem")),
             ("W.MmaF16BF16Op(Float16, Float32, (64,64,16), W.OperandSource.RMEM, OM.MN, OM.K)", ("f16", "MN", "rmem"))]
    results = dsl_eval([f"cute.make_mma_atom({op}).shape_mnk" for op, _ in cases], setup)
    for (op, args), r in zip(cases, results):
        assert r.ok, (op, r.status, r.message[:300])
        with pytest.raises(LayoutError):
            check_operand_major(*args)
