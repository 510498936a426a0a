"""Operand checks shared by the GEMM kernels: shapes, dtypes and majorness, with clear refusals."""

from dataclasses import dataclass

import numpy as np

from ..errors import LayoutError


@dataclass(frozen=True)
class GemmProblem:
    """What a kernel needs to know about ``C = alpha * A @ B + beta * C``.

    ``a_major`` is ``"K"`` or ``"M"``, ``b_major`` is ``"K"`` or ``"N"``, ``c_major`` is ``"N"`` or ``"M"``
    (the mode in which consecutive elements are adjacent in memory). ``layout`` is the CuTe/BLAS name
    (``"TN"``, ``"NT"``, ``"NN"``, ``"TT"``) of the A/B pair.
    """

    m: int
    n: int
    k: int
    dtype: np.dtype
    a_major: str
    b_major: str
    c_major: str

    @property
    def layout(self):
        return ("T" if self.a_major == "K" else "N") + ("N" if self.b_major == "K" else "T")


def _major(name, array, modes):
    """The mode ('M'/'N'/'K') of a 2-D array whose stride is one element, or a LayoutError."""
    rows, cols = array.shape
    s_row, s_col = (s // array.itemsize for s in array.strides)
    if s_col == 1 or cols == 1:
        return modes[1]
    if s_row == 1 or rows == 1:
        return modes[0]
    raise LayoutError(
        f"{name}: neither mode is contiguous (element strides {s_row, s_col}); a kernel needs "
        f"{name} contiguous along {modes[0]} or {modes[1]} — pass a C- or Fortran-ordered array "
        f"(e.g. cupy.ascontiguousarray({name}))")


def gemm_problem(A, B, C=None, dtypes=None):
    """Validate the operands of ``C = A @ B (+ C)`` and describe the problem.

    Raises :class:`LayoutError` naming the operand and the rule when shapes disagree, a dtype is not in
    ``dtypes`` (the kernel's supported input types), or an operand has no contiguous mode.
    """
    if getattr(A, "ndim", None) != 2 or getattr(B, "ndim", None) != 2:
        raise LayoutError(f"gemm: A and B must be 2-D arrays, got A.ndim={getattr(A, 'ndim', None)}, "
                          f"B.ndim={getattr(B, 'ndim', None)}")
    (m, k), (k2, n) = A.shape, B.shape
    if k != k2:
        raise LayoutError(f"gemm: A is {m}x{k} and B is {k2}x{n}; A's columns must equal B's rows (K)")
    if min(m, n, k) < 1:
        raise LayoutError(f"gemm: M, N, K must all be >= 1, got M={m}, N={n}, K={k}")
    if A.dtype != B.dtype:
        raise LayoutError(f"gemm: A is {A.dtype} but B is {B.dtype}; both operands must have one dtype")
    if dtypes is not None and np.dtype(A.dtype) not in [np.dtype(d) for d in dtypes]:
        raise LayoutError(f"gemm: dtype {A.dtype} is not supported by this kernel; use one of "
                          f"{[str(np.dtype(d)) for d in dtypes]}")
    c_major = "N"
    if C is not None:
        if tuple(C.shape) != (m, n):
            raise LayoutError(f"gemm: C has shape {tuple(C.shape)}, expected (M, N) = {(m, n)}")
        c_major = _major("C", C, "MN")
    return GemmProblem(m, n, k, np.dtype(A.dtype), _major("A", A, "MK"), _major("B", B, "KN"), c_major)


# ---------------------------------------------------------------------------------------------------------
# Launching CuTe DSL GEMMs from array operands (used by sgemm_simple, sgemm_fast, gemm_ampere).
# The kernels take raw pointers plus sizes and leading dimensions, so that one compiled kernel serves every
# problem size; what must be known at compile time (majorness, dtype, the vector width that the leading
# dimensions and base addresses allow) is the cache key.
# ---------------------------------------------------------------------------------------------------------

def vector_width(problem, arrays, itemsize, max_elems):
    """Largest power-of-two element count ``v <= max_elems`` such that every operand's base address is
    ``v * itemsize``-byte aligned, every leading dimension is a multiple of ``v`` and the contiguous extent
    of every operand is a multiple of ``v`` (so a predicated vector is either wholly inside or wholly
    outside the matrix). Example: fp16, K-major A and B with K = 72 -> 8 (16-byte vectors); K = 70 -> 2.
    """
    v = max_elems
    while v > 1:
        ok = True
        for arr, ld, extent in arrays:
            if arr.data.ptr % (v * itemsize) or ld % v or extent % v:
                ok = False
        if ok:
            return v
        v //= 2
    return 1


def _leading_dim(array, contiguous_mode_is_col):
    """Element stride of the non-contiguous mode (the 'leading dimension' in BLAS terms), at least 1."""
    s_row, s_col = (s // array.itemsize for s in array.strides)
    return max(1, s_row if contiguous_mode_is_col else s_col)


class GemmLauncher:
    """Validate operands, pick (and cache) a compiled kernel, launch it on the current cupy stream.

    ``build(problem, dtype, vec)`` returns a kernel object with a ``@cute.jit`` method ``run(pA, pB, pC,
    M, N, K, ldA, ldB, ldC, alpha, beta, stream)``; ``max_vec`` is the widest copy (in elements) the kernel
    can use; the cache key is (dtype, majorness of A/B/C, vector width).
    """

    def __init__(self, name, dtypes, layouts, build, max_vec=1):
        self.name, self.dtypes, self.layouts = name, dtypes, layouts
        self.build, self.max_vec = build, max_vec
        self.cache = {}

    def key(self, problem, vec):
        return (str(problem.dtype), problem.a_major, problem.b_major, problem.c_major, vec)

    def compile(self, problem, vec):
        """Compile (or fetch) the kernel for this problem's static properties; works without a GPU."""
        import cuda.bindings.driver as cuda
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import make_ptr

        key = self.key(problem, vec)
        if key not in self.cache:
            dtype = cutlass_dtype(problem.dtype)
            obj = self.build(problem, dtype, vec)
            align = vec * problem.dtype.itemsize
            args = [make_ptr(dtype, 0, cute.AddressSpace.gmem, assumed_align=align) for _ in "ABC"]
            args += [cutlass.Int32(1)] * 6 + [cutlass.Float32(1.0), cutlass.Float32(0.0), cuda.CUstream(0)]
            self.cache[key] = cute.compile(obj.run, *args)
        return self.cache[key]

    def __call__(self, A, B, C=None, *, alpha=1.0, beta=0.0):
        import cupy as cp
        import cuda.bindings.driver as cuda
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import make_ptr

        problem = gemm_problem(A, B, C, self.dtypes)
        if problem.layout not in self.layouts:
            raise LayoutError(f"{self.name}: layout {problem.layout} (A {problem.a_major}-major, B "
                              f"{problem.b_major}-major) is not supported; supported: {self.layouts}")
        for name, arr in (("A", A), ("B", B), ("C", C)):
            if arr is not None and not isinstance(arr, cp.ndarray):
                raise LayoutError(f"{self.name}: {name} must be a cupy array on the GPU, got {type(arr)}")
            if arr is not None and arr.size >= 2 ** 31:
                raise LayoutError(f"{self.name}: {name} has {arr.size} elements; this kernel indexes with "
                                  f"32-bit integers and needs fewer than 2**31")
        if C is None:
            C = cp.empty((problem.m, problem.n), dtype=cp.float32 if problem.dtype != A.dtype else A.dtype)
            C = cp.empty((problem.m, problem.n), dtype=self.c_dtype(problem.dtype))
            problem = gemm_problem(A, B, C, self.dtypes)
        lda = _leading_dim(A, problem.a_major == "K")
        ldb = _leading_dim(B, problem.b_major == "N")
        ldc = _leading_dim(C, problem.c_major == "N")
        ext = {"M": problem.m, "N": problem.n, "K": problem.k}
        vec = vector_width(problem, [(A, lda, ext[problem.a_major]), (B, ldb, ext[problem.b_major])],
                           problem.dtype.itemsize, self.max_vec)
        compiled = self.compile(problem, vec)
        align = vec * problem.dtype.itemsize
        dtype = cutlass_dtype(problem.dtype)
        ptrs = [make_ptr(dtype, A.data.ptr, cute.AddressSpace.gmem, assumed_align=align),
                make_ptr(dtype, B.data.ptr, cute.AddressSpace.gmem, assumed_align=align),
                make_ptr(cutlass_dtype(C.dtype), C.data.ptr, cute.AddressSpace.gmem,
                         assumed_align=C.itemsize)]
        stream = cuda.CUstream(cp.cuda.get_current_stream().ptr)
        compiled(*ptrs, cutlass.Int32(problem.m), cutlass.Int32(problem.n), cutlass.Int32(problem.k),
                 cutlass.Int32(lda), cutlass.Int32(ldb), cutlass.Int32(ldc),
                 cutlass.Float32(alpha), cutlass.Float32(beta), stream)
        return C

    @staticmethod
    def c_dtype(dtype):
        """C is fp32 for fp32 inputs and has the input type for fp16/bf16 (accumulation is fp32)."""
        return dtype


def cutlass_dtype(dtype):
    """The CuTe DSL numeric type for a numpy/cupy dtype (float32, float16, bfloat16)."""
    import cutlass

    name = str(np.dtype(dtype)) if str(dtype) != "bfloat16" else "bfloat16"
    table = {"float32": cutlass.Float32, "float16": cutlass.Float16, "bfloat16": cutlass.BFloat16}
    if name not in table:
        raise LayoutError(f"gemm: no CuTe DSL type for dtype {dtype}; use float32, float16 or bfloat16")
    return table[name]
