"""The algebra core works without numpy (issue 20): in the reader's browser (JupyterLite on Pyodide) numpy
comes only from the Pyodide CDN, so `import layoutlab` and the layout algebra must not need it.

Each check runs in a fresh interpreter where a `sys.meta_path` finder makes `numpy` unimportable; numpy may be
imported inside the functions that need it (vectorised tables, pictures), never at a module's top.
Importing any `layoutlab.X` runs `layoutlab/__init__.py` first, so the whole package import is checked too.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Every module of the core's packages (the DSL's cute.*, the linear layouts, the cute.nvgpu models).
CORE = sorted(".".join(p.relative_to(ROOT / "lib" / "layoutlab").with_suffix("").parts).removesuffix(".__init__")
              for package in ("cute", "linear", "nvgpu") for p in (ROOT / "lib" / "layoutlab" / package).glob("*.py"))

_BLOCK_NUMPY = textwrap.dedent("""
    import sys
    sys.path.insert(0, {lib!r})

    class _NoNumpy:
        # Raise as if numpy were not installed (what Pyodide without the CDN package looks like).
        def find_spec(self, name, path=None, target=None):
            if name == "numpy" or name.startswith("numpy."):
                raise ImportError(f"No module named {{name!r}} (blocked by the numpy-free core test)")
            return None

    sys.meta_path.insert(0, _NoNumpy())
    """).format(lib=str(ROOT / "lib"))


def _run_without_numpy(body: str) -> subprocess.CompletedProcess:
    code = _BLOCK_NUMPY + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


def test_numpy_is_really_blocked():
    proc = _run_without_numpy("import numpy\n")
    assert proc.returncode != 0 and "blocked by the numpy-free core test" in proc.stderr


@pytest.mark.parametrize("module", ["layoutlab"] + [f"layoutlab.{m}" for m in CORE])
def test_core_module_imports_without_numpy(module):
    proc = _run_without_numpy(f"import importlib; importlib.import_module({module!r})\n"
                              "assert 'numpy' not in sys.modules\n")
    assert proc.returncode == 0, f"{module} needs numpy at import:\n{proc.stderr[-3000:]}"


def test_core_operations_without_numpy():
    """A composition, a logical_divide, a swizzle, a linear layout's apply and a TV layout (the WGMMA
    accumulator of the acceptance test), with expected values worked by hand from the definitions."""
    proc = _run_without_numpy("""
        import json
        from layoutlab.cute.layout import Layout
        from layoutlab.cute.algebra import composition, logical_divide
        from layoutlab.cute.swizzle import Swizzle
        from layoutlab.linear.layout import LinearLayout
        from layoutlab import make_mma_atom, nvgpu
        from layoutlab.cute.tiled import make_tiled_mma

        out = {}
        # CuTe's composition example: (6,2):(8,2) o (4,3):(3,1)
        out["composition"] = str(composition(Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1))))
        out["composition_at_5"] = composition(Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1)))(5)
        # CuTe's logical_divide example: (4,2,3):(2,1,8) / 4:2
        out["logical_divide"] = str(logical_divide(Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2)))
        sw = Swizzle(3, 4, 3)
        out["swizzle"] = [sw(0x80), sw(0x90), sw(0x3F0)]
        ll = LinearLayout.from_bases([("lane", [[1, 0], [0, 1], [1, 1]])], ["dim0", "dim1"])
        out["linear"] = [ll.apply({"lane": 5}), ll.apply({"lane": 7}), ll.apply({"lane": 2})]
        c = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16))).layout_c_tv
        out["wgmma_c_T1_V0"] = c(1, 0)
        out["wgmma_c_T37_V5"] = c(37, 5)
        tm = make_tiled_mma(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16)))
        out["tiled_threads"] = tm.size if isinstance(tm.size, int) else tm.size()
        assert "numpy" not in sys.modules
        print(json.dumps(out))
        """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    # i -> (i%4, i//4) of (4,3):(3,1) -> 3*(i%4) + i//4 -> index of (6,2):(8,2); 5 -> 3+1 = 4 -> 8*4 = 32
    assert out["composition"] == "((2,2),3):((24,2),8)" and out["composition_at_5"] == 32
    assert out["logical_divide"] == "((2,2),(2,3)):((4,1),(2,8))"
    # Swizzle<3,4,3>: bits [4,7) ^= bits [7,10)
    assert out["swizzle"] == [0x90, 0x80, 0x3F0 ^ (0b111 << 4)]
    # lane 5 = bits 0, 2 -> (1,0) ^ (1,1); lane 7 -> (1,0)^(0,1)^(1,1); lane 2 -> (0,1)
    assert out["linear"] == [{"dim0": 0, "dim1": 1}, {"dim0": 0, "dim1": 0}, {"dim0": 0, "dim1": 1}]
    # ((4,8,4),(2,2,8)):((128,1,16),(64,8,512)): T1 = (1,0,0) -> 128 = (m 0, n 2) on the 64-row tile
    assert out["wgmma_c_T1_V0"] == 128 and divmod(128, 64)[::-1] == (0, 2)
    # T37 = 1 + 4*1 + 32*1 -> (1,1,1) -> 128+1+16; V5 = 1 + 2*0 + 4*1 -> (1,0,1) -> 64+512
    assert out["wgmma_c_T37_V5"] == 128 + 1 + 16 + 64 + 512
    assert out["tiled_threads"] == 128
