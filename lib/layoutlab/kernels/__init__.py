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

Each kernel's module (named for the hardware path it takes) says which of these it supports and refuses the
others with a :class:`~layoutlab.errors.LayoutError`. Compiled kernels are cached per (dtype, majorness,
tile config).

=========================  ==============================================  =========================================
 kernel                     module                                          what it shows
=========================  ==============================================  =========================================
 sgemm_simple               :mod:`layoutlab.kernels.simt_simple`            the CuTe tutorial's blocked SIMT GEMM
 sgemm_fast                 :mod:`layoutlab.kernels.simt_fast`              the SIMT GEMM made fast
 gemm_ampere                :mod:`layoutlab.kernels.ampere`                 mma.sync + ldmatrix + cp.async
 gemm_hopper                :mod:`layoutlab.kernels.hopper`                 TMA + wgmma
 gemm_hopper_specialized    :mod:`layoutlab.kernels.hopper_specialized`     a producer warp, two consumer warpgroups
 gemm_hopper_ws             :mod:`layoutlab.kernels.hopper_ws`              persistent, 2 x 1 clusters (the fast one)
 gemm_hopper_pingpong       :mod:`layoutlab.kernels.hopper_pingpong`        ping-pong consumer warpgroups
 gemm_hopper_streamk        :mod:`layoutlab.kernels.hopper_streamk`         the last wave split along K (stream-K)
 gemm_hopper_fp8            :mod:`layoutlab.kernels.hopper_fp8`             e4m3, two-level accumulation, block scales
=========================  ==============================================  =========================================

``from layoutlab.kernels import gemm_hopper`` gives the kernel function. The kernel modules import the CuTe
DSL, so they load on first use (a module ``__getattr__``, PEP 562): ``import layoutlab.kernels`` works
without the DSL or a GPU.
"""

import importlib
import os

from ..errors import LayoutError

# The DSL takes CUTE_DSL_ARCH="" literally (it compiles for arch "" and dies with KeyError: ''); say so first.
if os.environ.get("CUTE_DSL_ARCH") == "":
    raise LayoutError("layoutlab.kernels: CUTE_DSL_ARCH is set but empty, and the CuTe DSL would compile for an "
                      "architecture named '' (KeyError: ''). Unset it (env -u CUTE_DSL_ARCH ...) so the DSL detects "
                      "the GPU, or name the target, e.g. CUTE_DSL_ARCH=sm_90a or sm_80.")

#: kernel name -> the module (in this package) that defines it
KERNEL_MODULES = {
    "sgemm_simple": "simt_simple",
    "sgemm_fast": "simt_fast",
    "gemm_ampere": "ampere",
    "gemm_hopper": "hopper",
    "gemm_hopper_specialized": "hopper_specialized",
    "gemm_hopper_ws": "hopper_ws",
    "gemm_hopper_pingpong": "hopper_pingpong",
    "gemm_hopper_streamk": "hopper_streamk",
    "gemm_hopper_fp8": "hopper_fp8",
}
KERNELS = list(KERNEL_MODULES)

__all__ = KERNELS + ["KERNELS", "KERNEL_MODULES", "kernel_module"]


def kernel_module(name):
    """The module that defines kernel ``name`` (its launcher, ``prepare_<name>``, its configuration).

    >>> kernel_module("gemm_hopper").__name__
    'layoutlab.kernels.hopper'
    """
    if not isinstance(name, str) or name not in KERNEL_MODULES:
        raise LayoutError(f"kernel_module: no kernel {name!r}; the kernels are {KERNELS}")
    return importlib.import_module(f"{__name__}.{KERNEL_MODULES[name]}")


def __getattr__(name):
    if name in KERNEL_MODULES:
        return getattr(kernel_module(name), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
