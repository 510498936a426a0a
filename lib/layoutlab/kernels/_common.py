"""Operand checks shared by the GEMM kernels (shapes, dtypes and majorness, with clear refusals) and the array-library
helpers: which library (torch, cupy, numpy) an array is from, its strides, a new array or the stream beside it."""

import importlib
from dataclasses import dataclass

import numpy as np

from ..errors import LayoutError


# --------------------------------------------------------------------------- array libraries (torch, cupy, numpy)
# The kernels take a cupy array or a torch CUDA tensor. Which one it is comes from the package of the array's type,
# not from probing attributes (torch and cupy share many of their names), and importing neither.
ARRAY_LIBRARIES = ("torch", "cupy", "numpy")


def array_library(x):
    """``'torch'``, ``'cupy'`` or ``'numpy'``: the library whose type ``x`` has (None for lists, scalars, ...).

    >>> import numpy as np
    >>> array_library(np.zeros(3)), array_library([1.0, 2.0]), array_library(3)
    ('numpy', None, None)
    >>> Tensor = type("Tensor", (), {"__module__": "torch"})      # a stand-in: torch.Tensor lives in torch
    >>> array_library(Tensor())
    'torch'
    """
    lib = type(x).__module__.partition(".")[0]
    return lib if lib in ARRAY_LIBRARIES else None


def array_info(x):
    """``(dtype name, shape, strides in elements, on a GPU)`` of a torch, cupy or numpy array; anything else gives
    ``(its type's name, (), (), False)``.

    >>> import numpy as np
    >>> array_info(np.zeros((4, 6), dtype=np.int64)[:, ::2])
    ('int64', (4, 3), (6, 2), False)
    >>> array_info([0, 1])
    ('list', (), (), False)
    """
    lib = array_library(x)
    if lib == "torch":
        return str(x.dtype).replace("torch.", ""), tuple(x.shape), tuple(x.stride()), bool(x.is_cuda)
    if lib in ("cupy", "numpy"):
        return str(x.dtype), tuple(x.shape), tuple(s // x.itemsize for s in x.strides), lib == "cupy"
    return type(x).__name__, (), (), False


def new_array(like, shape, dtype=None, zeros=False):
    """A new array of ``shape`` from ``like``'s library, on ``like``'s device, of ``dtype`` (a name such as
    ``'float32'``; default: ``like``'s dtype), zero-filled when ``zeros`` (else uninitialised).

    >>> import numpy as np
    >>> new_array(np.ones(2, dtype=np.float16), (2, 3), zeros=True)
    array([[0., 0., 0.],
           [0., 0., 0.]], dtype=float16)
    >>> new_array(np.ones(2), (4,), dtype="int32", zeros=True).dtype
    dtype('int32')
    """
    lib = array_library(like)
    if lib == "torch":
        import torch
        dt = like.dtype if dtype is None else getattr(torch, dtype)
        return (like.new_zeros if zeros else like.new_empty)(shape, dtype=dt)
    if lib is None:
        raise LayoutError(f"new_array: like must be a torch, cupy or numpy array, got {type(like).__name__}")
    xp = importlib.import_module(lib)
    make = xp.zeros if zeros else xp.empty
    dt = like.dtype if dtype is None else dtype
    if lib == "cupy":
        with xp.cuda.Device(like.device.id):
            return make(shape, dtype=dt)
    return make(shape, dtype=dt)


def current_stream(like):
    """The handle (an int) of the CUDA stream that ``like``'s library is using now: torch's current stream for a
    torch tensor, cupy's for a cupy array; a host array has none.

    >>> import numpy as np
    >>> try:
    ...     current_stream(np.zeros(2))
    ... except Exception as err:
    ...     print(type(err).__name__, err)
    LayoutError current_stream: a numpy array has no CUDA stream; pass a cupy array or a torch CUDA tensor
    """
    lib = array_library(like)
    if lib == "torch":
        import torch
        return torch.cuda.current_stream().cuda_stream
    if lib == "cupy":
        import cupy
        return cupy.cuda.get_current_stream().ptr
    raise LayoutError(f"current_stream: a {lib or type(like).__name__} array has no CUDA stream; pass a cupy array "
                      f"or a torch CUDA tensor")


def device_index(x):
    """The index of the GPU holding ``x`` (torch or cupy), or None for a host array.

    >>> import numpy as np
    >>> device_index(np.zeros(2)) is None
    True
    """
    lib = array_library(x)
    if lib == "torch":
        return x.get_device() if x.is_cuda else None
    if lib == "cupy":
        return x.device.id
    return None


@dataclass(frozen=True)
class GemmProblem:
    """What a kernel needs to know about ``C = alpha * A @ B + beta * C``.

    ``a_major`` is ``"K"`` or ``"M"``, ``b_major`` is ``"K"`` or ``"N"``, ``c_major`` is ``"N"`` or ``"M"``
    (the mode in which consecutive elements are adjacent in memory). ``layout`` is the CuTe/BLAS name
    (``"TN"``, ``"NT"``, ``"NN"``, ``"TT"``) of the A/B pair.

    >>> import numpy as np
    >>> GemmProblem(512, 384, 256, np.dtype("float16"), "K", "K", "N").layout
    'TN'
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

    >>> import numpy as np
    >>> def described(x):                     # a numpy buffer stands in for the GPU array on a CPU
    ...     return DeviceOperand(x, x.shape, x.strides, x.itemsize, x.dtype, x.ctypes.data)
    >>> a, b = np.zeros((6, 4), np.float16), np.zeros((4, 5), np.float16, order="F")
    >>> p = gemm_problem(described(a), described(b))
    >>> (p.m, p.n, p.k), p.layout                 # both K-major: CuTe's TN
    ((6, 5, 4), 'TN')
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
# problem size; what must be known at compile time (dtype, majorness, the vector width that the leading
# dimensions and base addresses allow) is the cache key.
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DeviceOperand:
    """A 2-D GPU array seen through what a kernel needs: shape, byte strides, dtype and base address.

    Built by :func:`device_operand` from a cupy array or a torch tensor (torch is how bfloat16 arrives:
    numpy has no bfloat16, so it is described with ``ml_dtypes.bfloat16``).

    >>> import numpy as np
    >>> a = np.zeros((6, 4), np.float16)          # a numpy buffer stands in for the GPU array on a CPU
    >>> op = DeviceOperand(a, a.shape, a.strides, a.itemsize, a.dtype, a.ctypes.data)
    >>> op.ndim, op.strides
    (2, (8, 2))
    """

    array: object
    shape: tuple
    strides: tuple
    itemsize: int
    dtype: object
    ptr: int

    @property
    def ndim(self):
        return len(self.shape)


def refuse_host_array(x, name, kernel="gemm"):
    """Raise LayoutError if ``x`` lives in host memory (a numpy array, a CPU torch tensor, a list...).

    Runs before any CUDA call (and before cupy or the DSL is imported), so a CPU array gets this message
    instead of a ``cudaErrorInvalidDevice`` from inside a launch. Example: ``gemm_hopper(a, a.T)`` with a
    numpy ``a`` -> ``gemm_hopper: A must be a cupy array or a torch CUDA tensor, got ndarray in host
    memory ...``. A :class:`DeviceOperand` (already checked) passes.

    >>> import numpy as np
    >>> try:
    ...     refuse_host_array(np.zeros((4, 4)), "A", "gemm_hopper")
    ... except LayoutError as err:
    ...     print(str(err)[:74])
    gemm_hopper: A must be a cupy array or a torch CUDA tensor, got ndarray in
    """
    if isinstance(x, DeviceOperand):
        return
    lib = array_library(x)
    if lib != "cupy" and not (lib == "torch" and x.is_cuda):           # numpy, CPU tensors, lists, scalars, ...
        raise LayoutError(f"{kernel}: {name} must be a cupy array or a torch CUDA tensor, got "
                          f"{type(x).__name__} in host memory (refused before any CUDA call); move it to "
                          f"the GPU first: cupy.asarray({name}) or {name}.cuda()")


def device_operand(x, name):
    """Wrap a cupy ndarray or a torch CUDA tensor as a :class:`DeviceOperand`, or raise LayoutError
    (host arrays are refused by :func:`refuse_host_array` before anything touches CUDA)."""
    refuse_host_array(x, name)
    if array_library(x) == "torch":
        import torch

        table = {torch.float32: np.dtype("float32"), torch.float16: np.dtype("float16")}
        if x.dtype == torch.bfloat16:
            import ml_dtypes

            table[torch.bfloat16] = np.dtype(ml_dtypes.bfloat16)
        if x.dtype not in table:
            raise LayoutError(f"gemm: {name} has dtype {x.dtype}; use float32, float16 or bfloat16")
        size = x.element_size()
        return DeviceOperand(x, tuple(x.shape), tuple(s * size for s in x.stride()), size, table[x.dtype],
                             x.data_ptr())
    if array_library(x) == "cupy":
        return DeviceOperand(x, tuple(x.shape), tuple(x.strides), x.itemsize, np.dtype(x.dtype), x.data.ptr)
    raise LayoutError(f"gemm: {name} must be a cupy array or a torch CUDA tensor, got {type(x).__name__}")


def cu_stream(A):
    """The CUstream that ``A``'s library (torch or cupy) is using now, for a kernel launch
    (:func:`layoutlab.gpu.current_stream` gives its handle); a host array has none.

    >>> import numpy as np
    >>> try:
    ...     cu_stream(np.zeros(2))
    ... except LayoutError as err:
    ...     print(err)
    current_stream: a numpy array has no CUDA stream; pass a cupy array or a torch CUDA tensor
    """
    handle = current_stream(A)
    import cuda.bindings.driver as cuda

    return cuda.CUstream(handle)


def vector_width(operands, max_elems):
    """Largest power of two ``v <= max_elems`` such that, for every ``(operand, ld, contiguous_extent)``,
    the base address is ``v * itemsize``-byte aligned, the leading dimension is a multiple of ``v`` and
    the contiguous extent is a multiple of ``v`` (so a predicated vector lies wholly inside or wholly
    outside the matrix). Example: fp16 K-major A and B with K = 72 -> 8 (16-byte copies); K = 70 -> 2.

    >>> import numpy as np
    >>> def described(x):                     # a numpy buffer stands in for the GPU array on a CPU
    ...     return DeviceOperand(x, x.shape, x.strides, x.itemsize, x.dtype, x.ctypes.data)
    >>> k72, k70 = np.zeros((64, 72), np.float16), np.zeros((64, 70), np.float16)
    >>> vector_width([(described(k72), 72, 72)], 8), vector_width([(described(k70), 70, 70)], 8)
    (8, 2)
    """
    v = max_elems
    while v > 1 and any(op.ptr % (v * op.itemsize) or ld % v or extent % v for op, ld, extent in operands):
        v //= 2
    return max(v, 1)


def leading_dim(op, contiguous_mode_is_col):
    """Element stride of the non-contiguous mode (BLAS's leading dimension); 1 for a single row/column.

    >>> import numpy as np
    >>> def described(x):                     # a numpy buffer stands in for the GPU array on a CPU
    ...     return DeviceOperand(x, x.shape, x.strides, x.itemsize, x.dtype, x.ctypes.data)
    >>> view = np.zeros((6, 8), np.float16)[:, :4]     # row-major, rows 8 elements apart
    >>> leading_dim(described(view), contiguous_mode_is_col=True)
    8
    """
    s_row, s_col = (s // op.itemsize for s in op.strides)
    return max(1, s_row if contiguous_mode_is_col else s_col)


def cutlass_dtype(dtype):
    """The CuTe DSL numeric type for a numpy dtype: float32, float16 or (ml_dtypes) bfloat16.

    >>> import numpy as np
    >>> cutlass_dtype(np.dtype("float16")).__name__, cutlass_dtype(np.dtype("float32")).__name__
    ('Float16', 'Float32')
    """
    import cutlass

    table = {"float32": cutlass.Float32, "float16": cutlass.Float16, "bfloat16": cutlass.BFloat16}
    if str(dtype) not in table:
        raise LayoutError(f"gemm: no CuTe DSL type for dtype {dtype}; use float32, float16 or bfloat16")
    return table[str(dtype)]


class GemmLauncher:
    """Validate operands, pick (and cache) a compiled kernel, launch it on the current stream.

    ``build(problem, vec, even)`` returns a kernel object with a ``@cute.jit`` method ``run(pA, pB, pC,
    M, N, K, ldA, ldB, ldC, alpha, beta, stream)``. ``max_vec`` is the widest global copy (elements) the
    kernel can use. ``tile`` (bM, bN, bK), if given, lets the launcher ask for an ``even`` kernel when M,
    N and K are multiples of it: one without bounds tests, which the edge tiles of other problems need
    (the CUTLASS practice of a separate kernel for evenly tiled problems). Compiled kernels are cached per
    (dtype, majorness of A, B, C, vector width, even). C has the dtype of A and B.
    """

    def __init__(self, name, dtypes, layouts, build, max_vec=1, tile=None):
        self.name, self.dtypes, self.layouts = name, tuple(dtypes), tuple(layouts)
        self.build, self.max_vec, self.tile = build, max_vec, tile
        self.cache = {}

    def is_even(self, problem):
        """True when this launcher has a tile and M, N, K are multiples of it (e.g. 8192^3 and 128x128x64)."""
        return self.tile is not None and all(x % t == 0 for x, t in zip((problem.m, problem.n, problem.k),
                                                                       self.tile))

    def compile(self, problem, vec):
        """Compile (or fetch from the cache) the kernel for this problem's static properties.

        Needs no GPU: with ``CUTE_DSL_ARCH=sm_80`` set, this is how the CI compile tests build kernels.
        """
        import cuda.bindings.driver as cuda
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import make_ptr

        even = self.is_even(problem)
        key = (str(problem.dtype), problem.a_major, problem.b_major, problem.c_major, vec, even)
        if key not in self.cache:
            dtype = cutlass_dtype(problem.dtype)
            kernel = self.build(problem, vec, even)
            ab_align = vec * problem.dtype.itemsize
            args = [make_ptr(dtype, 0, cute.AddressSpace.gmem, assumed_align=a)
                    for a in (ab_align, ab_align, problem.dtype.itemsize)]
            args += [cutlass.Int32(1)] * 6 + [cutlass.Float32(1.0), cutlass.Float32(0.0), cuda.CUstream(0)]
            self.cache[key] = cute.compile(kernel.run, *args)
        return self.cache[key]

    def __call__(self, A, B, C=None, *, alpha=1.0, beta=0.0):
        for name, x in (("A", A), ("B", B)) + ((("C", C),) if C is not None else ()):
            refuse_host_array(x, name, self.name)          # before any import or call that touches CUDA
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import make_ptr

        a, b = device_operand(A, "A"), device_operand(B, "B")
        problem = gemm_problem(a, b, None)
        if str(problem.dtype) not in self.dtypes:
            raise LayoutError(f"{self.name}: dtype {problem.dtype} is not supported; use one of "
                              f"{list(self.dtypes)}")
        if C is None:
            C = new_array(A, (problem.m, problem.n))
        c = device_operand(C, "C")
        if c.dtype != a.dtype:
            raise LayoutError(f"{self.name}: C is {c.dtype} but A and B are {a.dtype}; C must have the "
                              f"operands' dtype (accumulation is fp32 inside the kernel)")
        problem = gemm_problem(a, b, c)
        if problem.layout not in self.layouts:
            raise LayoutError(f"{self.name}: layout {problem.layout} (A {problem.a_major}-major, B "
                              f"{problem.b_major}-major) is not supported; supported: {self.layouts}")
        for name, op in (("A", a), ("B", b), ("C", c)):
            extent = sum((n - 1) * abs(s) // op.itemsize for n, s in zip(op.shape, op.strides)) + 1
            if extent >= 2 ** 31:
                raise LayoutError(f"{self.name}: {name} spans {extent} elements; these kernels index with "
                                  f"32-bit integers and need fewer than 2**31")
        lda = leading_dim(a, problem.a_major == "K")
        ldb = leading_dim(b, problem.b_major == "N")
        ldc = leading_dim(c, problem.c_major == "N")
        extents = {"M": problem.m, "N": problem.n, "K": problem.k}
        vec = vector_width([(a, lda, extents[problem.a_major]), (b, ldb, extents[problem.b_major])],
                           self.max_vec)
        compiled = self.compile(problem, vec)
        dtype = cutlass_dtype(problem.dtype)
        ab_align = vec * problem.dtype.itemsize
        ptrs = [make_ptr(dtype, op.ptr, cute.AddressSpace.gmem, assumed_align=al)
                for op, al in ((a, ab_align), (b, ab_align), (c, problem.dtype.itemsize))]
        stream = cu_stream(A)
        compiled(*ptrs, cutlass.Int32(problem.m), cutlass.Int32(problem.n), cutlass.Int32(problem.k),
                 cutlass.Int32(lda), cutlass.Int32(ldb), cutlass.Int32(ldc),
                 cutlass.Float32(alpha), cutlass.Float32(beta), stream)
        return C


def operand_tensors(cfg, pA, pB, pC, M, N, K, ldA, ldB, ldC, vec):
    """Inside a ``@cute.jit`` function: the (M, K), (N, K) and (M, N) tensors over the raw pointers.

    B arrives as a (K, N) array; CuTe views it as (N, K) so that A and B are tiled alike. ``cfg`` supplies
    the majorness (``a_major``, ``b_major``, ``c_major``); ``vec`` tells the compiler the leading
    dimensions of A and B are multiples of ``vec`` elements, which is what lets it emit 16-byte copies.
    Example: A K-major with ldA = K gives the layout ``(M,K):(ldA,1)``.
    """
    import cutlass.cute as cute

    ldA = cute.assume(ldA, divby=vec)
    ldB = cute.assume(ldB, divby=vec)
    a_stride = (ldA, 1) if cfg.a_major == "K" else (1, ldA)
    b_stride = (ldB, 1) if cfg.b_major == "K" else (1, ldB)
    c_stride = (ldC, 1) if cfg.c_major == "N" else (1, ldC)
    mA = cute.make_tensor(pA, cute.make_layout((M, K), stride=a_stride))
    mB = cute.make_tensor(pB, cute.make_layout((N, K), stride=b_stride))
    mC = cute.make_tensor(pC, cute.make_layout((M, N), stride=c_stride))
    return mA, mB, mC


def grouped_tile_coord(bidx, bidy, tiles_m, tiles_n, group_m=8):
    """Inside a kernel: the (tile_m, tile_n) a CTA computes, launched in ``group_m``-tall column groups.

    CTAs are numbered row-major over the launch grid (x fastest) and the number ``pid`` is mapped so that
    consecutive CTAs sweep a ``group_m x tiles_n`` band column by column: the CTAs resident at one time
    share A rows and B columns, which then stay in L2 (the ordering Triton's matmul tutorial uses).
    Example: tiles_m = tiles_n = 4, group_m = 2: pids 0,1,2,3 -> (0,0),(1,0),(0,1),(1,1).
    """
    import cutlass

    pid = bidx + bidy * tiles_m
    in_group = group_m * tiles_n
    first_m = (pid // in_group) * group_m
    size_m = cutlass.min(tiles_m - first_m, group_m)
    local = pid % in_group
    return first_m + local % size_m, local // size_m
