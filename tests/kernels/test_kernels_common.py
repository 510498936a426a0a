"""The operand checks every GEMM kernel shares (`layoutlab.kernels._common`): shapes, dtypes, majorness,
and the refusals, which must name the operand and the rule. No GPU: numpy buffers stand in for device
arrays (the checks read only shape, strides, itemsize, dtype)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layoutlab.errors import LayoutError
from layoutlab.kernels._common import (DeviceOperand, array_info, array_library, current_stream, cutlass_dtype,
                                       device_index, device_operand, gemm_problem, new_array)


def _op(a):
    return DeviceOperand(a, a.shape, a.strides, a.itemsize, a.dtype, a.ctypes.data)


@pytest.mark.parametrize("a_order,b_order,layout,majors", [
    ("C", "F", "TN", ("K", "K")), ("F", "C", "NT", ("M", "N")),
    ("F", "F", "NN", ("M", "K")), ("C", "C", "TT", ("K", "N"))])
def test_gemm_problem_names_the_blas_layout(a_order, b_order, layout, majors):
    a = np.zeros((6, 4), np.float16, order=a_order)
    b = np.zeros((4, 5), np.float16, order=b_order)
    p = gemm_problem(_op(a), _op(b))
    assert (p.m, p.n, p.k) == (6, 5, 4)
    assert (p.a_major, p.b_major, p.c_major, p.layout) == (*majors, "N", layout)


@settings(max_examples=60, deadline=None)
@given(m=st.integers(2, 40), n=st.integers(2, 40), k=st.integers(2, 40),
       a_f=st.booleans(), b_f=st.booleans(), c_f=st.booleans(),
       pad=st.integers(0, 7))
def test_gemm_problem_reads_majorness_from_strides(m, n, k, a_f, b_f, c_f, pad):
    """Property: for padded views (leading dimension > extent) the contiguous mode is still found."""
    def view(rows, cols, fortran):
        if fortran:
            return np.zeros((cols, rows + pad), np.float32)[:, :rows].T
        return np.zeros((rows, cols + pad), np.float32)[:, :cols]
    a, b, c = view(m, k, a_f), view(k, n, b_f), view(m, n, c_f)
    p = gemm_problem(_op(a), _op(b), _op(c))
    assert (p.m, p.n, p.k) == (m, n, k)
    assert p.a_major == ("M" if a_f else "K")
    assert p.b_major == ("K" if b_f else "N")
    assert p.c_major == ("M" if c_f else "N")


def test_gemm_problem_refuses_mismatched_k():
    with pytest.raises(LayoutError, match=r"A is 4x3 and B is 5x2; A's columns must equal B's rows"):
        gemm_problem(_op(np.zeros((4, 3))), _op(np.zeros((5, 2))))


def test_gemm_problem_refuses_non_matrices_and_empty_modes():
    with pytest.raises(LayoutError, match="must be 2-D arrays"):
        gemm_problem(_op(np.zeros((2, 2, 2))), _op(np.zeros((2, 2))))
    with pytest.raises(LayoutError, match="M, N, K must all be >= 1"):
        gemm_problem(_op(np.zeros((0, 3))), _op(np.zeros((3, 2))))


def test_gemm_problem_refuses_mixed_and_unsupported_dtypes():
    with pytest.raises(LayoutError, match="A is float16 but B is float32"):
        gemm_problem(_op(np.zeros((2, 2), np.float16)), _op(np.zeros((2, 2), np.float32)))
    with pytest.raises(LayoutError, match=r"dtype float64 is not supported.*\['float32'\]"):
        gemm_problem(_op(np.zeros((2, 2))), _op(np.zeros((2, 2))), dtypes=["float32"])


def test_gemm_problem_refuses_wrong_c_shape():
    with pytest.raises(LayoutError, match=r"C has shape \(3, 3\), expected \(M, N\) = \(2, 3\)"):
        gemm_problem(_op(np.zeros((2, 4))), _op(np.zeros((4, 3))), _op(np.zeros((3, 3))))


def test_gemm_problem_refuses_operand_without_contiguous_mode():
    a = np.zeros((8, 8), np.float32)[::2, ::2]          # element strides (16, 2)
    with pytest.raises(LayoutError, match=r"A: neither mode is contiguous \(element strides \(16, 2\)\)"):
        gemm_problem(_op(a), _op(np.zeros((4, 4), np.float32)))


def test_device_operand_refuses_host_arrays():
    with pytest.raises(LayoutError, match="A must be a cupy array or a torch CUDA tensor, got ndarray"):
        device_operand(np.zeros((2, 2)), "A")


@pytest.mark.dsl
def test_cutlass_dtype_maps_the_three_gemm_dtypes():
    cutlass = pytest.importorskip("cutlass", reason="needs nvidia-cutlass-dsl")
    assert cutlass_dtype(np.dtype("float32")) is cutlass.Float32
    assert cutlass_dtype(np.dtype("float16")) is cutlass.Float16
    assert cutlass_dtype("bfloat16") is cutlass.BFloat16
    with pytest.raises(LayoutError, match="no CuTe DSL type for dtype float64"):
        cutlass_dtype(np.dtype("float64"))


class _PoisonedModule:
    """Stands in for cupy / cuda.bindings / cutlass: any use means a kernel went to CUDA before refusing."""

    def __init__(self, name):
        self.__name__ = name

    def __getattr__(self, attr):
        raise AssertionError(f"{self.__name__}.{attr} was touched before the host array was refused")


class _CpuTorchLike:
    """Stands in for a CPU torch tensor (torch is not installed here; its type's package says torch): the kernels
    must ask ``is_cuda``."""

    __module__ = "torch"
    is_cuda = False
    shape, ndim, dtype = (8, 8), 2, "float16"

    def data_ptr(self):
        raise AssertionError("data_ptr of a CPU tensor was read")

    def element_size(self):
        return 2


@pytest.mark.parametrize("kernel", ["sgemm_simple", "sgemm_fast", "gemm_ampere", "gemm_hopper",
                                    "gemm_hopper_ws"])
@pytest.mark.parametrize("host", ["numpy", "list", "cpu_torch", "numpy_C"])
def test_every_kernel_refuses_host_arrays_before_touching_cuda(kernel, host, monkeypatch):
    """Issue 19: a CPU array used to fail with cudaErrorInvalidDevice from inside the launch path."""
    import importlib
    import sys
    fn = getattr(importlib.import_module("layoutlab.kernels"), kernel)
    for mod in ("cupy", "cupy.cuda", "cuda", "cuda.bindings", "cuda.bindings.driver", "cutlass",
                "cutlass.cute", "torch"):
        monkeypatch.setitem(sys.modules, mod, _PoisonedModule(mod))
    dtype = np.float32 if kernel.startswith("sgemm") else np.float16
    a = np.ones((8, 8), dtype)
    if host == "numpy":
        args, bad = (a, a), "A"
    elif host == "list":
        args, bad = ([[1.0] * 8] * 8, a), "A"
    elif host == "cpu_torch":
        args, bad = (_cpu_or_device(a), _CpuTorchLike()), "B"
    else:                                    # device A and B, host C
        args, bad = (_cpu_or_device(a), _cpu_or_device(a), a), "C"
    with pytest.raises(LayoutError, match=rf"{kernel}: {bad} must be a cupy array or a torch CUDA tensor, "
                                          rf"got \w+ in host memory \(refused before any CUDA call\)"):
        fn(*args)


class _DeviceLike:
    """Stands in for a cupy array (its type's package says cupy) and has nothing else: any other use fails
    (AttributeError), so only the host operand after it may be looked at."""

    __module__ = "cupy"


def _cpu_or_device(_):
    return _DeviceLike()


def test_an_empty_dsl_arch_is_refused_with_what_to_do():
    """CUTE_DSL_ARCH="" made the DSL compile for arch '' (KeyError: '' on the H100, via `make gpu-test`)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, CUTE_DSL_ARCH="")
    run = subprocess.run([sys.executable, "-c", "import layoutlab.kernels"], env=env, capture_output=True, text=True)
    assert run.returncode != 0
    assert "LayoutError" in run.stderr and "CUTE_DSL_ARCH is set but empty" in run.stderr and "sm_90a" in run.stderr
    env["CUTE_DSL_ARCH"] = "sm_90a"
    assert subprocess.run([sys.executable, "-c", "import layoutlab.kernels"], env=env).returncode == 0


def test_make_gpu_test_leaves_the_arch_to_the_dsl():
    """`make gpu-test` must unset CUTE_DSL_ARCH (which the Makefile exports for the CPU targets), not empty it."""
    from pathlib import Path
    recipe = Path(__file__).resolve().parents[2].joinpath("Makefile").read_text().split("gpu-test:", 1)[1]
    recipe = recipe.split("\n\n", 1)[0]
    assert "env -u CUTE_DSL_ARCH" in recipe and "CUTE_DSL_ARCH= " not in recipe


# ----------------------------------------------------------------------------- array libraries


class _Stand:
    """An array of another library, named by its type's package as torch's and cupy's are."""

    def __init__(self, module, **attrs):
        self.__class__ = type("Tensor", (), {"__module__": module})
        self.__dict__.update(attrs)


def test_array_library_reads_the_type_not_the_attributes():
    import numpy as np
    assert array_library(np.zeros(2)) == "numpy" and array_library(np.float32(1)) == "numpy"
    assert array_library(_Stand("torch.nn.parameter")) == "torch"
    assert array_library(_Stand("cupy._core.core")) == "cupy"
    # attributes torch and cupy arrays have do not make an array of either
    assert array_library(_Stand("mylib", data_ptr=1, element_size=2, new_empty=3, get_device=4)) is None
    assert array_library([1, 2]) is None and array_library(None) is None


def test_array_info_and_new_array_on_numpy():
    import numpy as np
    x = np.arange(24, dtype=np.float32).reshape(4, 6).T[::2]            # strides (1, 6) elements, then every 2nd row
    assert array_info(x) == ("float32", (3, 4), (2, 6), False)
    out = new_array(x, (2, 5), "int32", zeros=True)
    assert out.dtype == np.int32 and out.shape == (2, 5) and not out.any()
    assert new_array(x, 3).dtype == np.float32
    assert device_index(x) is None
    with pytest.raises(LayoutError, match="new_array: like must be a torch, cupy or numpy array, got list"):
        new_array([1, 2], (2,))
    with pytest.raises(LayoutError, match="current_stream: a numpy array has no CUDA stream"):
        current_stream(x)
