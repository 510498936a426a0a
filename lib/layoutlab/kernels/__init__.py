"""GEMM kernels written in the CuTe DSL, from a plain SIMT GEMM to a warp-specialized Hopper GEMM.

Every kernel has the same calling convention::

    kernel(A, B, C=None, *, alpha=1.0, beta=0.0) -> C      # C = alpha * A @ B + beta * C

``A`` is an (M, K) array and ``B`` a (K, N) array on the GPU (cupy, or anything with DLPack); ``C`` is an
(M, N) array (allocated row-major when not given). What matters to a kernel is which mode of each
operand is contiguous ("majorness"), read from the strides, as in CuTe's naming:

=========  ======================  ======================  ===========================
 CuTe/BLAS  A (M,K) contiguous in   B (K,N) contiguous in   numpy construction
=========  ======================  ======================  ===========================
 TN         K  (K-major)            K  (K-major)            ``A = a``, ``B = b.T``  (a: MxK, b: NxK C-order)
 NT         M  (M-major)            N  (N-major)            ``A = a.T`` (a: KxM), ``B = b`` (KxN C-order)
 NN         M  (M-major)            K  (K-major)
 TT         K  (K-major)            N  (N-major)
=========  ======================  ======================  ===========================

Each kernel module says which of these it supports and refuses the others with a
:class:`~layoutlab.errors.LayoutError`. Compiled kernels are cached per (dtype, majorness, tile config).
Kernels are imported lazily so that ``import layoutlab.kernels`` works without a GPU.
"""

import importlib
import sys
import types

__all__ = ["sgemm_simple", "sgemm_fast", "gemm_ampere", "gemm_hopper", "gemm_hopper_ws", "KERNELS"]

KERNELS = __all__[:5]


def __getattr__(name):
    if name in KERNELS:
        importlib.import_module(f"{__name__}.{name}")   # binds the function, see _KernelsPackage
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _KernelsPackage(types.ModuleType):
    """Each kernel's module has the kernel's name, and importing a submodule binds it on the package:
    keep the function there instead, so ``from layoutlab.kernels import gemm_hopper`` is the kernel."""

    def __setattr__(self, name, value):
        if name in KERNELS and isinstance(value, types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _KernelsPackage
