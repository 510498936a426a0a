"""MMA and copy atoms as data: the (thread, value) -> element maps of single tensor-core and copy instructions.

An *atom* is one hardware instruction seen through layouts. For an MMA atom of shape ``(M, N, K)``:

* ``thr_id``: which hardware threads take part (``32:1`` for a warp, ``128:1`` for a warpgroup);
* ``layout_a_tv``: ``(thread, value) -> m + M*k``, the element of the ``M x K`` tile A that value ``v`` of
  thread ``t`` holds (a column-major index into the tile);
* ``layout_b_tv``: ``(thread, value) -> n + N*k`` into the ``N x K`` tile B (CuTe keeps B as N x K);
* ``layout_c_tv``: ``(thread, value) -> m + M*n`` into the ``M x N`` accumulator.

Example (the Hopper accumulator of seed 000, N = 64)::

    >>> atom = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16)))
    >>> print(atom.layout_c_tv)
    ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))
    >>> c = atom.layout_c_tv(1, 0); (c % 64, c // 64)       # thread 1, value 0 holds C[0, 2]
    (0, 2)

A copy atom moves ``value_type`` elements; ``layout_src_tv`` / ``layout_dst_tv`` map ``(thread, value)``
to the index of the element in the atom's *reference* order (that of the register side). The layouts are
defined in bits, as in CuTe, and shown in units of ``value_type``: ``ldmatrix.x4`` with f16 prints
``TV Layout Dst: (32,(2,4)):(2,(1,64))``.

Names, arguments and printing follow the CuTe DSL (``cute.make_mma_atom(cute.nvgpu.warp.MmaF16BF16Op(
Float16, Float32, (16,8,16)))`` prints exactly as ``str(make_mma_atom(nvgpu.warp.MmaF16BF16Op("f16",
"f32", (16,8,16))))``); each atom also carries its CuTe C++ name (``SM80_16x8x16_F32F16F16F32_TN``,
``SM75_U32x4_LDSM_N`` ...). Where the DSL accepts something no instruction can do (a 2-byte ``cp.async``,
``ldmatrix.trans`` of 32-bit values) we refuse with a :class:`~layoutlab.errors.LayoutError`.
"""

from dataclasses import dataclass
from types import SimpleNamespace

from .algebra import recast_layout
from .errors import LayoutError
from .layout import Layout

__all__ = [
    "MmaAtom",
    "CopyAtom",
    "make_mma_atom",
    "make_copy_atom",
    "MmaF16BF16Op",
    "MmaTF32Op",
    "WarpgroupMmaF16BF16Op",
    "LdMatrix8x8x16bOp",
    "StMatrix8x8x16bOp",
    "CopyG2SOp",
    "CopyUniversalOp",
    "nvgpu",
    "dtype_name",
    "dtype_bits",
    "WGMMA_N_VALUES",
]

# --------------------------------------------------------------------------------------------------
# element types
# --------------------------------------------------------------------------------------------------

# DSL print name -> width in bits. The DSL prints value types in this short MLIR form ("f16", "bf16").
_DTYPES = {"f16": 16, "bf16": 16, "f32": 32, "tf32": 32, "f64": 64, "i8": 8, "u8": 8, "i16": 16, "u16": 16,
           "i32": 32, "u32": 32, "i64": 64, "u64": 64, "f8e4m3": 8, "f8e5m2": 8}
_ALIASES = {"float16": "f16", "half": "f16", "bfloat16": "bf16", "float32": "f32", "float": "f32",
            "tfloat32": "tf32", "float64": "f64", "int8": "i8", "uint8": "u8", "int16": "i16", "uint16": "u16",
            "int32": "i32", "uint32": "u32", "int64": "i64", "uint64": "u64",
            "float8e4m3fn": "f8e4m3", "float8e5m2": "f8e5m2"}


def dtype_name(dtype) -> str:
    """The DSL's short name of an element type: ``"f16"`` for ``"f16"``, ``"Float16"``, ``cutlass.Float16``
    or ``numpy.float16``.

    >>> dtype_name("BFloat16")
    'bf16'
    """
    raw = dtype if isinstance(dtype, str) else getattr(dtype, "__name__", None) or str(dtype)
    key = raw.lower()
    key = _ALIASES.get(key, key)
    if key not in _DTYPES:
        raise LayoutError(f"dtype: unknown element type {dtype!r}; known: {', '.join(sorted(_DTYPES))} "
                          f"(or their DSL names Float16, BFloat16, Float32, TFloat32, Int8 ...)")
    return key


def dtype_bits(dtype) -> int:
    """Width in bits of an element type: ``dtype_bits("bf16") == 16``."""
    return _DTYPES[dtype_name(dtype)]


def _dsl_enum(x, what, allowed):
    """Accept "K"/"MN", "smem"/"rmem" or the DSL's enum members (OperandMajorMode.K, OperandSource.RMEM)."""
    raw = getattr(x, "name", x)
    key = str(raw).lower()
    if key not in allowed:
        raise LayoutError(f"{what}: {x!r} is not one of {', '.join(allowed)}")
    return key


def _L(shape, stride):
    return Layout(shape, stride)


# --------------------------------------------------------------------------------------------------
# MMA atoms
# --------------------------------------------------------------------------------------------------

class MmaAtom:
    """One MMA instruction as layouts (see the module docstring for what each layout maps).

    Attributes (DSL names in brackets): ``op``, ``name`` (CuTe C++ name), ``thr_id`` [``thr_id``],
    ``shape_mnk`` [``shape_mnk``], ``layout_a_tv`` / ``layout_b_tv`` / ``layout_c_tv``
    [``tv_layout_A`` / ``tv_layout_B`` / ``tv_layout_C``, also accepted here].

    Example::

        >>> print(make_mma_atom(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 8))))
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
        rest = n // 8
        # The DSL drops the size-1 column-block mode of N = 8: ((4,8,4),(2,2)) rather than (2,2,1).
        if rest == 1:
            c = _L(((4, 8, 4), (2, 2)), ((128, 1, 16), (64, 8)))
        else:
            c = _L(((4, 8, 4), (2, 2, rest)), ((128, 1, 16), (64, 8, 512)))
        if self.a_src == "rmem":
            a = _L(((4, 8, 4), (2, 2, 2)), ((128, 1, 16), (64, 8, 512)))  # same pattern as C, two k-blocks
        else:
            a = _L((128, (m, k)), (0, (1, m)))
        b = _L((128, (n, k)), (0, (1, n)))
        ab, acc = self.ab_dtype.upper(), self.acc_dtype.upper()
        name = f"SM90_{m}x{n}x{k}_{acc}{ab}{ab}_{'RS' if self.a_src == 'rmem' else 'SS'}"
        return MmaAtom(self, name, _L(128, 1), self.shape_mnk, a, b, c)


def make_mma_atom(op) -> MmaAtom:
    """The MMA atom of an MMA operation (DSL: ``cute.make_mma_atom(op)``).

    >>> print(make_mma_atom(MmaF16BF16Op("f16", "f32", (16, 8, 16))).layout_a_tv)
    ((4,8),(2,2,2)):((32,1),(16,8,128))
    """
    if isinstance(op, MmaAtom):
        return op
    if not hasattr(op, "_make_atom") or not isinstance(op, (MmaF16BF16Op, MmaTF32Op, WarpgroupMmaF16BF16Op)):
        raise LayoutError(f"make_mma_atom: {op!r} is not an MMA operation; use nvgpu.warp.MmaF16BF16Op, "
                          f"nvgpu.warp.MmaTF32Op or nvgpu.warpgroup.MmaF16BF16Op")
    return op._make_atom()


# --------------------------------------------------------------------------------------------------
# Copy atoms
# --------------------------------------------------------------------------------------------------

class CopyAtom:
    """One copy instruction as layouts, in units of ``value_type`` (see the module docstring).

    Attributes: ``op``, ``name`` (CuTe C++ name), ``value_type`` (DSL short name), ``thr_id``,
    ``layout_src_tv``, ``layout_dst_tv``, ``layout_ref_tv`` (the reference order: the register side),
    ``num_val`` (values per thread), ``layout_src_tv_bits`` / ``layout_dst_tv_bits`` (in bits, as CuTe
    C++ writes them).

    Example::

        >>> print(make_copy_atom(LdMatrix8x8x16bOp(False, 4), "f16"))
        Copy Atom
          ThrID:         32:1
          TV Layout Src: (32,8):(8,1)
          TV Layout Dst: (32,(2,4)):(2,(1,64))
          Value type:    f16
    """

    def __init__(self, op, name, value_type, thr_id, src_bits, dst_bits, raw_units=False, ref="dst"):
        self.op = op
        self.name = name
        self.value_type = value_type
        self.thr_id = thr_id
        self.layout_src_tv_bits = src_bits
        self.layout_dst_tv_bits = dst_bits
        if raw_units:  # already in value units (the DSL's "auto-vectorising" universal copy)
            self.layout_src_tv, self.layout_dst_tv = src_bits, dst_bits
        else:
            bits = dtype_bits(value_type)
            self.layout_src_tv = recast_layout(bits, 1, src_bits)
            self.layout_dst_tv = recast_layout(bits, 1, dst_bits)
        # CuTe's RefLayout: the side whose (thread, value) order a TiledCopy follows -- the registers
        # (ldmatrix's destination, stmatrix's source); for copies with one TV layout it does not matter
        self.layout_ref_tv = self.layout_src_tv if ref == "src" else self.layout_dst_tv
        self.num_val = self.layout_ref_tv[1].size()

    def _body(self, width):
        rows = [("ThrID:", self.thr_id), ("TV Layout Src:", self.layout_src_tv),
                ("TV Layout Dst:", self.layout_dst_tv), ("Value type:", self.value_type)]
        return "\n".join(f"  {k:<{width}}{v}" for k, v in rows)

    def __str__(self):
        return "Copy Atom\n" + self._body(15)

    def __repr__(self):
        return f"CopyAtom({self.name}, {self.value_type})"


# ldmatrix/stmatrix in bits, CuTe's SM75_U32x{1,2,4}_LDSM_N / SM75_U16x{2,4,8}_LDSM_T.
# Source ("address") side: lane l names row l of the stacked 8x8 matrices (128 bits per row); with x1 only
# lanes 0..7 and with x2 lanes 0..15 give addresses (the others are broadcast: stride 0).
_LDSM_ADDR = {1: _L(((8, 4), 128), ((128, 0), 1)),
              2: _L(((16, 2), 128), ((128, 0), 1)),
              4: _L((32, 128), (128, 1))}
# Register side without .trans: lane l gets 32 bits of row l/4 of each matrix (bits 32*(l%4)...);
# register j comes from matrix j (1024 bits further).
_LDSM_REG_N = {1: _L((32, 32), (32, 1)),
               2: _L((32, (32, 2)), (32, (1, 1024))),
               4: _L((32, (32, 4)), (32, (1, 1024)))}
# With .trans: lane l = t0 + 4*t1 gets 16-bit elements (row 2*t0 + i, column t1) of each matrix.
_LDSM_REG_T = {1: _L(((4, 8), (16, 2)), ((256, 16), (1, 128))),
               2: _L(((4, 8), (16, 2, 2)), ((256, 16), (1, 128, 1024))),
               4: _L(((4, 8), (16, 2, 4)), ((256, 16), (1, 128, 1024)))}


def _check_matrix_op(op, cls):
    if not isinstance(op.transpose, bool):
        raise LayoutError(f"{cls}: transpose must be a bool, got {op.transpose!r}")
    if op.num_matrices not in (1, 2, 4):
        raise LayoutError(f"{cls}: num_matrices {op.num_matrices!r} is not 1, 2 or 4 (the .x1/.x2/.x4 forms)")


@dataclass(frozen=True)
class LdMatrix8x8x16bOp:
    """``ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16`` (DSL:
    ``cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, num_matrices)``): a warp loads 1, 2 or 4 8x8 matrices
    of 16-bit elements from shared memory; lanes give row addresses, and ``.trans`` transposes each matrix.

    CuTe names: ``SM75_U32x{n}_LDSM_N`` and ``SM75_U16x{2n}_LDSM_T``.

    >>> make_copy_atom(LdMatrix8x8x16bOp(True, 4), "f16").name
    'SM75_U16x8_LDSM_T'
    """

    transpose: bool = False
    num_matrices: int = 1

    def __post_init__(self):
        _check_matrix_op(self, "LdMatrix8x8x16bOp")

    @property
    def name(self):
        n = self.num_matrices
        return f"SM75_U16x{2 * n}_LDSM_T" if self.transpose else f"SM75_U32x{n}_LDSM_N"

    def _layouts(self):
        reg = (_LDSM_REG_T if self.transpose else _LDSM_REG_N)[self.num_matrices]
        return _LDSM_ADDR[self.num_matrices], reg


@dataclass(frozen=True)
class StMatrix8x8x16bOp:
    """``stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16`` (sm_90; DSL:
    ``cute.nvgpu.warp.StMatrix8x8x16bOp(transpose, num_matrices)``): the mirror image of ldmatrix, with
    registers as the source and row addresses as the destination.

    CuTe names: ``SM90_U32x{n}_STSM_N`` and ``SM90_U16x{2n}_STSM_T``.
    """

    transpose: bool = False
    num_matrices: int = 1

    def __post_init__(self):
        _check_matrix_op(self, "StMatrix8x8x16bOp")

    @property
    def name(self):
        n = self.num_matrices
        return f"SM90_U16x{2 * n}_STSM_T" if self.transpose else f"SM90_U32x{n}_STSM_N"

    def _layouts(self):
        reg = (_LDSM_REG_T if self.transpose else _LDSM_REG_N)[self.num_matrices]
        return reg, _LDSM_ADDR[self.num_matrices]


@dataclass(frozen=True)
class CopyG2SOp:
    """``cp.async.ca/.cg.shared.global`` (sm_80): one thread copies 4, 8 or 16 bytes from global to shared
    memory without passing through registers (DSL: ``cute.nvgpu.cpasync.CopyG2SOp(cache_mode)``, with
    ``num_bits_per_copy`` given to :func:`make_copy_atom`). ``cache_mode`` is ``"always"`` (.ca) or
    ``"global"`` (.cg, 16 bytes only).
    """

    cache_mode: str = "always"

    def __post_init__(self):
        mode = _dsl_enum(self.cache_mode, "CopyG2SOp cache_mode", ("always", "global"))
        object.__setattr__(self, "cache_mode", mode)


@dataclass(frozen=True)
class CopyUniversalOp:
    """A plain load/store (``a = b``: LDS/LDG/STS/STG ...) of ``num_bits_per_copy`` bits per thread
    (DSL: ``cute.nvgpu.CopyUniversalOp()``). Without ``num_bits_per_copy`` the DSL leaves the width to its
    auto-vectoriser and shows a single value, ``(1,1):(0,0)``; so do we.
    """


def make_copy_atom(op, value_type, num_bits_per_copy=None) -> CopyAtom:
    """The copy atom of a copy operation for elements of ``value_type`` (DSL: ``cute.make_copy_atom(op,
    value_type, num_bits_per_copy=...)``).

    >>> print(make_copy_atom(CopyG2SOp(), "f16", num_bits_per_copy=128).layout_src_tv)
    (1,8):(0,1)
    """
    vt = dtype_name(value_type)
    bits = _DTYPES[vt]
    if isinstance(op, (LdMatrix8x8x16bOp, StMatrix8x8x16bOp)):
        kind = "ldmatrix" if isinstance(op, LdMatrix8x8x16bOp) else "stmatrix"
        if num_bits_per_copy is not None:
            raise LayoutError(f"make_copy_atom: {kind} moves fixed 8x8 matrices; num_bits_per_copy does not apply")
        if op.transpose and bits != 16:
            raise LayoutError(f"make_copy_atom: {kind}.trans transposes 16-bit elements, so value_type must be "
                              f"16 bits wide, not {vt} ({bits} bits); the DSL accepts this and builds a "
                              f"layout over the wrong number of threads")
        if bits not in (8, 16, 32):
            raise LayoutError(f"make_copy_atom: {kind} moves 32 bits per lane and matrix; value_type {vt} "
                              f"({bits} bits) must be 8, 16 or 32 bits wide")
        src, dst = op._layouts()
        return CopyAtom(op, op.name, vt, _L(32, 1), src, dst, ref="dst" if kind == "ldmatrix" else "src")
    if isinstance(op, CopyG2SOp):
        nb = num_bits_per_copy
        if nb not in (32, 64, 128):
            raise LayoutError(f"make_copy_atom: cp.async copies 4, 8 or 16 bytes per thread; num_bits_per_copy "
                              f"must be 32, 64 or 128, not {nb!r}")
        if op.cache_mode == "global" and nb != 128:
            raise LayoutError("make_copy_atom: cp.async.cg (cache_mode='global') copies 16 bytes only; "
                              "use num_bits_per_copy=128 or cache_mode='always'")
        if nb % bits:
            raise LayoutError(f"make_copy_atom: {nb} bits per copy is not a whole number of {vt} values ({bits} bits)")
        mode = "CACHEALWAYS" if op.cache_mode == "always" else "CACHEGLOBAL"
        lay = _L((1, nb), (0, 1))
        return CopyAtom(op, f"SM80_CP_ASYNC_{mode}<uint{nb}_t>", vt, _L(1, 0), lay, lay)
    if isinstance(op, CopyUniversalOp):
        nb = num_bits_per_copy
        if nb is None:
            lay = _L((1, 1), (0, 0))
            return CopyAtom(op, f"UniversalCopy<{vt}>", vt, _L(1, 0), lay, lay, raw_units=True)
        if not isinstance(nb, int) or nb <= 0 or nb % bits or nb > 256 or (nb & (nb - 1)):
            raise LayoutError(f"make_copy_atom: a universal copy moves a power-of-two number of whole {vt} "
                              f"values up to 256 bits; num_bits_per_copy={nb!r} is not that "
                              f"(use a multiple of {bits})")
        lay = _L((1, nb), (0, 1))
        return CopyAtom(op, f"UniversalCopy<uint{nb}_t>", vt, _L(1, 0), lay, lay)
    raise LayoutError(f"make_copy_atom: {op!r} is not a copy operation; use nvgpu.warp.LdMatrix8x8x16bOp, "
                      f"nvgpu.warp.StMatrix8x8x16bOp, nvgpu.cpasync.CopyG2SOp or nvgpu.CopyUniversalOp")


# --------------------------------------------------------------------------------------------------
# DSL-shaped namespaces: layoutlab.nvgpu.warp.MmaF16BF16Op mirrors cute.nvgpu.warp.MmaF16BF16Op
# --------------------------------------------------------------------------------------------------

nvgpu = SimpleNamespace(
    warp=SimpleNamespace(MmaF16BF16Op=MmaF16BF16Op, MmaTF32Op=MmaTF32Op,
                         LdMatrix8x8x16bOp=LdMatrix8x8x16bOp, StMatrix8x8x16bOp=StMatrix8x8x16bOp),
    warpgroup=SimpleNamespace(MmaF16BF16Op=WarpgroupMmaF16BF16Op),
    cpasync=SimpleNamespace(CopyG2SOp=CopyG2SOp),
    CopyUniversalOp=CopyUniversalOp,
)
