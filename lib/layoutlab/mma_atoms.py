"""MMA atoms as data: the (thread, value) -> element maps of single tensor-core instructions, and the element
types atoms are made for.  :mod:`layoutlab.atoms` explains what each layout maps; names, arguments and printing
follow the CuTe DSL's ``cute.nvgpu.warp`` / ``cute.nvgpu.warpgroup`` MMA operations.
"""

from dataclasses import dataclass

from .errors import LayoutError
from .layout import Layout

__all__ = ["MmaAtom", "make_mma_atom", "MmaF16BF16Op", "MmaTF32Op", "MmaFP8Op", "WarpgroupMmaF16BF16Op",
           "WarpgroupMmaF8Op", "dtype_name", "dtype_bits", "WGMMA_N_VALUES"]

# --------------------------------------------------------------------------------------------------
# element types
# --------------------------------------------------------------------------------------------------

# DSL print name -> width in bits. The DSL prints value types in this short MLIR form ("f16", "bf16",
# "f8E4M3FN"); names are matched without regard to case.
_DTYPES = {"f16": 16, "bf16": 16, "f32": 32, "tf32": 32, "f64": 64, "i8": 8, "u8": 8, "i16": 16, "u16": 16,
           "i32": 32, "u32": 32, "i64": 64, "u64": 64, "f8E4M3FN": 8, "f8E5M2": 8}
_CANONICAL = {name.lower(): name for name in _DTYPES}
_ALIASES = {"float16": "f16", "half": "f16", "bfloat16": "bf16", "float32": "f32", "float": "f32",
            "tfloat32": "tf32", "float64": "f64", "int8": "i8", "uint8": "u8", "int16": "i16", "uint16": "u16",
            "int32": "i32", "uint32": "u32", "int64": "i64", "uint64": "u64",
            "float8e4m3fn": "f8E4M3FN", "float8e4m3": "f8E4M3FN", "f8e4m3": "f8E4M3FN", "e4m3": "f8E4M3FN",
            "float8e5m2": "f8E5M2", "e5m2": "f8E5M2"}


def dtype_name(dtype) -> str:
    """The DSL's short name of an element type: ``"f16"`` for ``"f16"``, ``"Float16"``, ``cutlass.Float16``
    or ``numpy.float16``.

    >>> dtype_name("BFloat16")
    'bf16'
    """
    raw = dtype if isinstance(dtype, str) else getattr(dtype, "__name__", None) or str(dtype)
    key = raw.lower()
    key = _ALIASES.get(key, _CANONICAL.get(key))
    if key not in _DTYPES:
        raise LayoutError(f"dtype: unknown element type {dtype!r}; known: {', '.join(sorted(_DTYPES))} "
                          f"(or their DSL names Float16, BFloat16, Float32, TFloat32, Int8, Float8E4M3FN ...)")
    return key


def dtype_bits(dtype) -> int:
    """Width in bits of an element type.

    >>> dtype_bits("bf16"), dtype_bits("Float8E4M3FN")
    (16, 8)
    """
    return _DTYPES[dtype_name(dtype)]


def _dsl_enum(x, what, allowed):
    """Accept "K"/"MN", "smem"/"rmem" or the DSL's enum members (OperandMajorMode.K, OperandSource.RMEM)."""
    raw = getattr(x, "name", x)
    key = str(raw).lower()
    if key not in allowed:
        raise LayoutError(f"{what}: {x!r} is not one of {', '.join(allowed)}")
    return key


def _L(shape, stride):
    """The atom tables' layouts: written out here, so built without re-validation."""
    return Layout._new(shape, stride)


# --------------------------------------------------------------------------------------------------
# MMA atoms
# --------------------------------------------------------------------------------------------------

class MmaAtom:
    """One MMA instruction as layouts (see the module docstring for what each layout maps).

    Attributes (DSL names in brackets): ``op``, ``name`` (CuTe C++ name), ``thr_id`` [``thr_id``],
    ``shape_mnk`` [``shape_mnk``], ``layout_a_tv`` / ``layout_b_tv`` / ``layout_c_tv``
    [``tv_layout_A`` / ``tv_layout_B`` / ``tv_layout_C``, also accepted here].

    Example::

        >>> print(make_mma_atom(MmaF16BF16Op("f16", "f32", (16, 8, 8))))
        MMA Atom
          ThrID:       32:1
          Shape MNK:   (16,8,8)
          TV Layout A: ((4,8),(2,2)):((32,1),(16,8))
          TV Layout B: ((4,8),2):((16,1),8)
          TV Layout C: ((4,8),(2,2)):((32,1),(16,8))
    """

    def __init__(self, op, name, thr_id, shape_mnk, layout_a_tv, layout_b_tv, layout_c_tv):
        self.op = op
        self.name = name
        self.thr_id = thr_id
        self.shape_mnk = tuple(shape_mnk)
        self.layout_a_tv = layout_a_tv
        self.layout_b_tv = layout_b_tv
        self.layout_c_tv = layout_c_tv

    # DSL spellings
    tv_layout_A = property(lambda self: self.layout_a_tv)
    tv_layout_B = property(lambda self: self.layout_b_tv)
    tv_layout_C = property(lambda self: self.layout_c_tv)

    def _body(self, width):
        rows = [("ThrID:", self.thr_id), ("Shape MNK:", "(" + ",".join(map(str, self.shape_mnk)) + ")"),
                ("TV Layout A:", self.layout_a_tv), ("TV Layout B:", self.layout_b_tv),
                ("TV Layout C:", self.layout_c_tv)]
        return "\n".join(f"  {k:<{width}}{v}" for k, v in rows)

    def __str__(self):
        return "MMA Atom\n" + self._body(13)

    def __repr__(self):
        return f"MmaAtom({self.name})"


def _mma_tv_layouts(m, n, k, ab):
    """TV layouts of the SM80 mma.sync family (PTX "Matrix Fragments for mma.m16n8k*").

    Lane l = t0 + 4*t1 (t0 = l % 4 'thread in group', t1 = l / 4 'group'). C/D: group t1 owns rows t1 and
    t1 + 8, the thread in group owns columns 2*t0 and 2*t0 + 1: ((4,8),(2,2)):((32,1),(16,8)) in the
    column-major 16x8 tile. 16-bit A/B pack two K-neighbours per register; tf32 holds one per register.
    """
    c = _L(((4, 8), (2, 2)), ((32, 1), (16, 8)))
    if ab in ("f16", "bf16"):
        if k == 8:
            a = _L(((4, 8), (2, 2)), ((32, 1), (16, 8)))          # rows t1, t1+8; k = 2*t0 + (0,1)
            b = _L(((4, 8), 2), ((16, 1), 8))                      # n = t1; k = 2*t0 + (0,1)
        else:
            a = _L(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))  # ... and the second 8 columns of K
            b = _L(((4, 8), (2, 2)), ((16, 1), (8, 64)))
    else:  # tf32: one element per register, k = t0 (+4)
        if k == 4:
            a = _L(((4, 8), 2), ((16, 1), 8))
            b = _L(((4, 8), 1), ((8, 1), 0))
        else:
            a = _L(((4, 8), (2, 2)), ((16, 1), (8, 64)))
            b = _L(((4, 8), 2), ((8, 1), 32))
    return a, b, c


@dataclass(frozen=True)
class MmaF16BF16Op:
    """SM80 warp MMA ``mma.sync.aligned.m16n8k{8,16}.row.col`` with f16/bf16 inputs (DSL:
    ``cute.nvgpu.warp.MmaF16BF16Op(ab_dtype, acc_dtype, shape_mnk)``).

    Allowed: ab f16 with acc f16 or f32; ab bf16 with acc f32; shape (16,8,8) or (16,8,16).

    >>> make_mma_atom(MmaF16BF16Op("f16", "f32", (16, 8, 16))).name
    'SM80_16x8x16_F32F16F16F32_TN'
    """

    ab_dtype: object
    acc_dtype: object
    shape_mnk: tuple

    def __post_init__(self):
        ab, acc = dtype_name(self.ab_dtype), dtype_name(self.acc_dtype)
        if ab not in ("f16", "bf16"):
            raise LayoutError(f"MmaF16BF16Op: ab_dtype {ab} is not f16 or bf16 (use MmaTF32Op for tf32)")
        if acc not in ("f16", "f32"):
            raise LayoutError(f"MmaF16BF16Op: acc_dtype {acc} must be f16 or f32")
        if ab == "bf16" and acc != "f32":
            raise LayoutError("MmaF16BF16Op: bf16 inputs accumulate in f32 only (mma.sync has no bf16 accumulator)")
        shape = tuple(self.shape_mnk) if isinstance(self.shape_mnk, (tuple, list)) else self.shape_mnk
        if shape not in ((16, 8, 8), (16, 8, 16)):
            raise LayoutError(f"MmaF16BF16Op: shape_mnk {self.shape_mnk} is not an mma.sync shape for "
                              f"16-bit inputs; use (16,8,8) or (16,8,16)")
        object.__setattr__(self, "ab_dtype", ab)
        object.__setattr__(self, "acc_dtype", acc)
        object.__setattr__(self, "shape_mnk", shape)

    def _make_atom(self):
        m, n, k = self.shape_mnk
        a, b, c = _mma_tv_layouts(m, n, k, self.ab_dtype)
        ab, acc = self.ab_dtype.upper(), self.acc_dtype.upper()
        name = f"SM80_{m}x{n}x{k}_{acc}{ab}{ab}{acc}_TN"
        return MmaAtom(self, name, _L(32, 1), self.shape_mnk, a, b, c)


@dataclass(frozen=True)
class MmaTF32Op:
    """SM80 warp MMA ``mma.sync.aligned.m16n8k{4,8}.row.col.f32.tf32.tf32.f32`` (DSL:
    ``cute.nvgpu.warp.MmaTF32Op(shape_mnk)``).

    >>> print(make_mma_atom(MmaTF32Op((16, 8, 8))).layout_a_tv)
    ((4,8),(2,2)):((16,1),(8,64))
    """

    shape_mnk: tuple

    def __post_init__(self):
        shape = tuple(self.shape_mnk) if isinstance(self.shape_mnk, (tuple, list)) else self.shape_mnk
        if shape not in ((16, 8, 4), (16, 8, 8)):
            raise LayoutError(f"MmaTF32Op: shape_mnk {self.shape_mnk} is not a tf32 mma.sync shape; "
                              f"use (16,8,4) or (16,8,8)")
        object.__setattr__(self, "shape_mnk", shape)

    def _make_atom(self):
        m, n, k = self.shape_mnk
        a, b, c = _mma_tv_layouts(m, n, k, "tf32")
        return MmaAtom(self, f"SM80_{m}x{n}x{k}_F32TF32TF32F32_TN", _L(32, 1), self.shape_mnk, a, b, c)


#: The N of ``wgmma.mma_async.m64nNk16`` for f16/bf16 inputs: 8, 16, ..., 256.
WGMMA_N_VALUES = tuple(range(8, 257, 8))


@dataclass(frozen=True)
class WarpgroupMmaF16BF16Op:
    """SM90 warpgroup MMA ``wgmma.mma_async.m64nNk16`` with f16/bf16 inputs (DSL:
    ``cute.nvgpu.warpgroup.MmaF16BF16Op(ab, acc, (64,N,16), a_src, a_major_mode, b_major_mode)``).

    ``a_src`` is ``"smem"`` (A through a shared-memory descriptor, "SS") or ``"rmem"`` (A in registers,
    "RS"); majors are ``"K"`` or ``"MN"`` (A from registers must be K-major). Accumulator f32, or f16
    for f16 inputs.

    TV layouts (warpgroup thread t = t0 + 4*t1 + 32*w: t0 in a quad, t1 the row in a warp's 8-row slab,
    w the warp): C = ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)) -- thread t0 starts at column 2*t0,
    rows t1 + 16*w, values step to the next column (64 = one column of the 64-row tile), 8 rows down, and
    8 columns right. An operand read from shared memory is seen whole by every thread:
    (128,(64,16)):(0,(1,64)).

    >>> make_mma_atom(WarpgroupMmaF16BF16Op("bf16", "f32", (64, 128, 16), a_src="rmem")).name
    'SM90_64x128x16_F32BF16BF16_RS'
    """

    ab_dtype: object
    acc_dtype: object
    shape_mnk: tuple
    a_src: object = "smem"
    a_major_mode: object = "K"
    b_major_mode: object = "K"

    def __post_init__(self):
        ab, acc = dtype_name(self.ab_dtype), dtype_name(self.acc_dtype)
        if ab not in ("f16", "bf16"):
            raise LayoutError(f"warpgroup.MmaF16BF16Op: ab_dtype {ab} is not f16 or bf16")
        if acc not in ("f32", "f16") or (ab == "bf16" and acc != "f32"):
            raise LayoutError(f"warpgroup.MmaF16BF16Op: acc_dtype {acc} with {ab} inputs; wgmma accumulates "
                              f"f16 inputs in f16 or f32 and bf16 inputs in f32 only")
        shape = tuple(self.shape_mnk) if isinstance(self.shape_mnk, (tuple, list)) else None
        if shape is None or len(shape) != 3 or shape[0] != 64 or shape[2] != 16 or shape[1] not in WGMMA_N_VALUES:
            raise LayoutError(f"warpgroup.MmaF16BF16Op: shape_mnk {self.shape_mnk} is not a wgmma shape for "
                              f"16-bit inputs; use (64,N,16) with N a multiple of 8 in [8,256]")
        src = {"smem": "smem", "rmem": "rmem"}[_dsl_enum(self.a_src, "warpgroup.MmaF16BF16Op a_src", ("smem", "rmem"))]
        am = _dsl_enum(self.a_major_mode, "warpgroup.MmaF16BF16Op a_major_mode", ("k", "mn")).upper()
        bm = _dsl_enum(self.b_major_mode, "warpgroup.MmaF16BF16Op b_major_mode", ("k", "mn")).upper()
        if src == "rmem" and am != "K":
            raise LayoutError("warpgroup.MmaF16BF16Op: A from registers is always K-major (wgmma has no "
                              "imm-trans-a for register A); use a_major_mode='K' or a_src='smem'")
        for f, v in (("ab_dtype", ab), ("acc_dtype", acc), ("shape_mnk", shape), ("a_src", src),
                     ("a_major_mode", am), ("b_major_mode", bm)):
            object.__setattr__(self, f, v)

    def _make_atom(self):
        m, n, k = self.shape_mnk
        c = _wgmma_accumulator(n)
        if self.a_src == "rmem":
            a = _L(((4, 8, 4), (2, 2, 2)), ((128, 1, 16), (64, 8, 512)))  # same pattern as C, two k-blocks
        else:
            a = _L((128, (m, k)), (0, (1, m)))
        b = _L((128, (n, k)), (0, (1, n)))
        ab, acc = self.ab_dtype.upper(), self.acc_dtype.upper()
        name = f"SM90_{m}x{n}x{k}_{acc}{ab}{ab}_{'RS' if self.a_src == 'rmem' else 'SS'}"
        return MmaAtom(self, name, _L(128, 1), self.shape_mnk, a, b, c)


_FP8 = ("f8E4M3FN", "f8E5M2")
_FP8_CUTE = {"f8E4M3FN": "E4M3", "f8E5M2": "E5M2"}


@dataclass(frozen=True)
class MmaFP8Op:
    """SM89 warp MMA ``mma.sync.aligned.m16n8k{16,32}.row.col`` with e4m3/e5m2 inputs (DSL:
    ``cute.nvgpu.warp.MmaFP8Op(ab_dtype, acc_dtype, shape_mnk)``).

    Each 32-bit register packs four K-neighbours, so a thread holds ``k = 4*t0 + (0..3)`` of rows
    ``t1`` and ``t1 + 8`` (t0 = lane % 4, t1 = lane / 4); C is the 16-bit MMA's accumulator.

    >>> print(make_mma_atom(MmaFP8Op("f8E4M3FN", "f32", (16, 8, 32))).layout_a_tv)
    ((4,8),(4,2,2)):((64,1),(16,8,256))
    """

    ab_dtype: object
    acc_dtype: object
    shape_mnk: tuple

    def __post_init__(self):
        ab, acc = dtype_name(self.ab_dtype), dtype_name(self.acc_dtype)
        if ab not in _FP8:
            raise LayoutError(f"MmaFP8Op: ab_dtype {ab} is not an fp8 type; use Float8E4M3FN or Float8E5M2 "
                              f"(MmaF16BF16Op for 16-bit inputs)")
        if acc not in ("f16", "f32"):
            raise LayoutError(f"MmaFP8Op: acc_dtype {acc} must be f16 or f32")
        shape = tuple(self.shape_mnk) if isinstance(self.shape_mnk, (tuple, list)) else self.shape_mnk
        if shape not in ((16, 8, 16), (16, 8, 32)):
            raise LayoutError(f"MmaFP8Op: shape_mnk {self.shape_mnk} is not an mma.sync shape for fp8 inputs; "
                              f"use (16,8,16) or (16,8,32)")
        for f, v in (("ab_dtype", ab), ("acc_dtype", acc), ("shape_mnk", shape)):
            object.__setattr__(self, f, v)

    def _make_atom(self):
        m, n, k = self.shape_mnk
        if k == 16:
            a = _L(((4, 8), (4, 2)), ((64, 1), (16, 8)))            # rows t1, t1 + 8; k = 4*t0 + (0..3)
            b = _L(((4, 8), 4), ((32, 1), 8))                         # n = t1; k = 4*t0 + (0..3)
        else:
            a = _L(((4, 8), (4, 2, 2)), ((64, 1), (16, 8, 256)))    # ... and the second 16 columns of K
            b = _L(((4, 8), (4, 2)), ((32, 1), (8, 128)))
        c = _L(((4, 8), (2, 2)), ((32, 1), (16, 8)))
        ab, acc = _FP8_CUTE[self.ab_dtype], self.acc_dtype.upper()
        return MmaAtom(self, f"SM89_{m}x{n}x{k}_{acc}{ab}{ab}{acc}_TN", _L(32, 1), self.shape_mnk, a, b, c)


def _wgmma_accumulator(n):
    """C of ``wgmma.m64nN``: ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)); the DSL drops the size-1 mode of N = 8."""
    if n == 8:
        return _L(((4, 8, 4), (2, 2)), ((128, 1, 16), (64, 8)))
    return _L(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512)))


def _wgmma_shape(shape_mnk, k, what):
    shape = tuple(shape_mnk) if isinstance(shape_mnk, (tuple, list)) else None
    if shape is not None and len(shape) == 2:       # the DSL completes (64, N) with the instruction's K
        shape = shape + (k,)
    if shape is None or len(shape) != 3 or shape[0] != 64 or shape[2] != k or shape[1] not in WGMMA_N_VALUES:
        raise LayoutError(f"warpgroup.{what}: shape_mnk {shape_mnk} is not a wgmma shape for these inputs; "
                          f"use (64,N,{k}) with N a multiple of 8 in [8,256]")
    return shape


@dataclass(frozen=True)
class WarpgroupMmaF8Op:
    """SM90 warpgroup MMA ``wgmma.mma_async.m64nNk32`` with e4m3/e5m2 inputs (DSL:
    ``cute.nvgpu.warpgroup.MmaF8Op(a_dtype, b_dtype, acc_dtype, shape_mnk, a_src, a_major_mode, b_major_mode)``;
    A and B may be different fp8 types).

    wgmma transposes only 16-bit operands, so both operands must be K-major (the DSL accepts MN-major here
    and builds an atom no instruction implements; we refuse).  A from registers: each register packs four
    K-neighbours, ``((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))``; C is the 16-bit wgmma's accumulator.

    >>> make_mma_atom(WarpgroupMmaF8Op("f8E4M3FN", "f8E5M2", "f32", (64, 128, 32))).name
    'SM90_64x128x32_F32E4M3E5M2_SS'
    """

    a_dtype: object
    b_dtype: object
    acc_dtype: object
    shape_mnk: tuple
    a_src: object = "smem"
    a_major_mode: object = "K"
    b_major_mode: object = "K"

    def __post_init__(self):
        what = "MmaF8Op"
        a, b, acc = dtype_name(self.a_dtype), dtype_name(self.b_dtype), dtype_name(self.acc_dtype)
        for name, t in (("a_dtype", a), ("b_dtype", b)):
            if t not in _FP8:
                raise LayoutError(f"warpgroup.{what}: {name} {t} is not an fp8 type; use Float8E4M3FN or Float8E5M2")
        if acc not in ("f16", "f32"):
            raise LayoutError(f"warpgroup.{what}: acc_dtype {acc} must be f16 or f32")
        shape = _wgmma_shape(self.shape_mnk, 32, what)
        src = _dsl_enum(self.a_src, f"warpgroup.{what} a_src", ("smem", "rmem"))
        am = _dsl_enum(self.a_major_mode, f"warpgroup.{what} a_major_mode", ("k", "mn")).upper()
        bm = _dsl_enum(self.b_major_mode, f"warpgroup.{what} b_major_mode", ("k", "mn")).upper()
        if "MN" in (am, bm):
            raise LayoutError(f"warpgroup.{what}: fp8 operands must be K-major (wgmma's imm-trans-a/b exist only "
                              f"for 16-bit inputs); use a_major_mode='K' and b_major_mode='K'. The CuTe DSL "
                              f"accepts MN-major here and builds an atom no instruction implements")
        for f, v in (("a_dtype", a), ("b_dtype", b), ("acc_dtype", acc), ("shape_mnk", shape), ("a_src", src),
                     ("a_major_mode", am), ("b_major_mode", bm)):
            object.__setattr__(self, f, v)

    def _make_atom(self):
        m, n, k = self.shape_mnk
        if self.a_src == "rmem":
            a = _L(((4, 8, 4), (4, 2, 2)), ((256, 1, 16), (64, 8, 1024)))
        else:
            a = _L((128, (m, k)), (0, (1, m)))
        b = _L((128, (n, k)), (0, (1, n)))
        ta, tb, acc = _FP8_CUTE[self.a_dtype], _FP8_CUTE[self.b_dtype], self.acc_dtype.upper()
        name = f"SM90_{m}x{n}x{k}_{acc}{ta}{tb}_{'RS' if self.a_src == 'rmem' else 'SS'}"
        return MmaAtom(self, name, _L(128, 1), self.shape_mnk, a, b, _wgmma_accumulator(n))


def make_mma_atom(op) -> MmaAtom:
    """The MMA atom of an MMA operation (DSL: ``cute.make_mma_atom(op)``).

    >>> print(make_mma_atom(MmaF16BF16Op("f16", "f32", (16, 8, 16))).layout_a_tv)
    ((4,8),(2,2,2)):((32,1),(16,8,128))
    """
    if isinstance(op, MmaAtom):
        return op
    if not isinstance(op, _MMA_OPS):
        raise LayoutError(f"make_mma_atom: {op!r} is not an MMA operation; use nvgpu.warp.MmaF16BF16Op, "
                          f"nvgpu.warp.MmaTF32Op, nvgpu.warp.MmaFP8Op, nvgpu.warpgroup.MmaF16BF16Op or "
                          f"nvgpu.warpgroup.MmaF8Op")
    return op._make_atom()


_MMA_OPS = (MmaF16BF16Op, MmaTF32Op, MmaFP8Op, WarpgroupMmaF16BF16Op, WarpgroupMmaF8Op)
