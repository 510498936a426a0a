"""MMA atoms (``cute.nvgpu.warp`` / ``cute.nvgpu.warpgroup`` MMA operations of the CuTe DSL) and the element
types atoms are made for; :mod:`layoutlab.atoms` explains what each layout maps."""

from dataclasses import dataclass

from .errors import LayoutError
from .inttuple import format_tree
from .layout import Layout

__all__ = ["MmaAtom", "make_mma_atom", "MmaF16BF16Op", "MmaTF32Op", "MmaFP8Op", "WarpgroupMmaF16BF16Op",
           "WarpgroupMmaF8Op", "dtype_name", "dtype_bits", "WGMMA_N_VALUES"]

# DSL print name (the short MLIR form: "f16", "bf16", "f8E4M3FN") -> width in bits; matched regardless of case.
_DTYPES = {"f16": 16, "bf16": 16, "f32": 32, "tf32": 32, "f64": 64, "i8": 8, "u8": 8, "i16": 16, "u16": 16,
           "i32": 32, "u32": 32, "i64": 64, "u64": 64, "f8E4M3FN": 8, "f8E5M2": 8}
# lower-case name -> DSL print name: the print names and the DSL's (and numpy's) long names
_NAMES = {**{name.lower(): name for name in _DTYPES},
          "float16": "f16", "half": "f16", "bfloat16": "bf16", "float32": "f32", "float": "f32", "tfloat32": "tf32",
          "float64": "f64", "int8": "i8", "uint8": "u8", "int16": "i16", "uint16": "u16", "int32": "i32",
          "uint32": "u32", "int64": "i64", "uint64": "u64", "float8e4m3fn": "f8E4M3FN", "float8e4m3": "f8E4M3FN",
          "f8e4m3": "f8E4M3FN", "e4m3": "f8E4M3FN", "float8e5m2": "f8E5M2", "e5m2": "f8E5M2"}


def dtype_name(dtype) -> str:
    """The DSL's short name of an element type: ``"f16"`` for ``"f16"``, ``"Float16"``, ``cutlass.Float16``, ...

    >>> dtype_name("BFloat16")
    'bf16'
    """
    key = _NAMES.get((getattr(dtype, "__name__", None) or str(dtype)).lower())
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
    return _check(f"{what}:", str(getattr(x, "name", x)).lower(), allowed, f"one of {', '.join(allowed)}")


def _check(what, value, allowed, rule):
    if value not in allowed:
        raise LayoutError(f"{what} {value} is not {rule}")
    return value


def _check_fields(op, what, **rules):
    """Check each field ``f`` of a frozen op against ``rules[f] = (allowed, rule)``; store it normalised."""
    for f, (allowed, rule) in rules.items():
        value = getattr(op, f)
        value = dtype_name(value) if f.endswith("dtype") else value
        value = tuple(value) if isinstance(value, list) else value
        object.__setattr__(op, f, _check(f"{what}: {f}", value, allowed, rule))


def _acc16(ab, instr):
    """(allowed, rule) of the accumulator for 16-bit inputs ``ab``."""
    if ab == "f16":
        return ("f16", "f32"), "f16 or f32"
    return ("f32",), f"f32: {instr} accumulates bf16 inputs in f32 only"


# The atom tables' layouts are written out here, so they are built without re-validation.
_L = Layout._new


def _table(width, *sections):
    """The DSL's printing of atoms: per section a title, then ``  label: value`` rows aligned at ``width``."""
    return "\n".join(title + "".join(f"\n  {k + ':':<{width}}{v}" for k, v in rows) for title, rows in sections)


@dataclass(eq=False)
class MmaAtom:
    """One MMA instruction as layouts (see :mod:`layoutlab.atoms`): ``op``, ``name`` (CuTe C++ name), ``thr_id``,
    ``shape_mnk``, ``layout_a_tv``/``_b_tv``/``_c_tv`` (also as the DSL's ``tv_layout_A/B/C``).

        >>> print(make_mma_atom(MmaF16BF16Op("f16", "f32", (16, 8, 8))))
        MMA Atom
          ThrID:       32:1
          Shape MNK:   (16,8,8)
          TV Layout A: ((4,8),(2,2)):((32,1),(16,8))
          TV Layout B: ((4,8),2):((16,1),8)
          TV Layout C: ((4,8),(2,2)):((32,1),(16,8))
    """

    op: object
    name: str
    thr_id: Layout
    shape_mnk: tuple
    layout_a_tv: Layout
    layout_b_tv: Layout
    layout_c_tv: Layout

    tv_layout_A = property(lambda self: self.layout_a_tv)
    tv_layout_B = property(lambda self: self.layout_b_tv)
    tv_layout_C = property(lambda self: self.layout_c_tv)

    def _rows(self):
        return [("ThrID", self.thr_id), ("Shape MNK", format_tree(self.shape_mnk)),
                ("TV Layout A", self.layout_a_tv), ("TV Layout B", self.layout_b_tv), ("TV Layout C", self.layout_c_tv)]

    def __str__(self):
        return _table(13, ("MMA Atom", self._rows()))

    def __repr__(self):
        return f"MmaAtom({self.name})"


# TV layouts of mma.sync (PTX "Matrix Fragments for mma.m16n8k*") by (inputs, K). Lane l = t0 + 4*t1: C rows t1
# and t1 + 8, columns 2*t0 + (0,1). A register packs 2 16-bit or 4 8-bit K-neighbours; the larger K adds a block.
_WARP_C = _L(((4, 8), (2, 2)), ((32, 1), (16, 8)))
_WARP_AB = {
    ("f16", 8): (_WARP_C, _L(((4, 8), 2), ((16, 1), 8))),          # rows t1, t1+8; k = 2*t0 + (0,1); n = t1
    ("f16", 16): (_L(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128))), _L(((4, 8), (2, 2)), ((16, 1), (8, 64)))),
    ("tf32", 4): (_L(((4, 8), 2), ((16, 1), 8)), _L(((4, 8), 1), ((8, 1), 0))),   # k = t0 (+4)
    ("tf32", 8): (_L(((4, 8), (2, 2)), ((16, 1), (8, 64))), _L(((4, 8), 2), ((8, 1), 32))),
    ("f8", 16): (_L(((4, 8), (4, 2)), ((64, 1), (16, 8))), _L(((4, 8), 4), ((32, 1), 8))),   # k = 4*t0 + (0..3)
    ("f8", 32): (_L(((4, 8), (4, 2, 2)), ((64, 1), (16, 8, 256))), _L(((4, 8), (4, 2)), ((32, 1), (8, 128)))),
}


def _warp_atom(op, inputs, sm, types):
    """The MmaAtom of a warp-wide ``mma.sync`` op, named as CuTe does: ``SM{sm}_MxNxK_{types}_TN``."""
    m, n, k = op.shape_mnk
    a, b = _WARP_AB[inputs, k]
    return MmaAtom(op, f"SM{sm}_{m}x{n}x{k}_{types}_TN", _L(32, 1), op.shape_mnk, a, b, _WARP_C)


@dataclass(frozen=True)
class MmaF16BF16Op:
    """SM80 warp MMA ``mma.sync.aligned.m16n8k{8,16}.row.col`` with f16 (acc f16/f32) or bf16 (acc f32) inputs
    (DSL: ``cute.nvgpu.warp.MmaF16BF16Op(ab_dtype, acc_dtype, shape_mnk)``).

    >>> make_mma_atom(MmaF16BF16Op("f16", "f32", (16, 8, 16))).name
    'SM80_16x8x16_F32F16F16F32_TN'
    """

    ab_dtype: object
    acc_dtype: object
    shape_mnk: tuple

    def __post_init__(self):
        _check_fields(self, "MmaF16BF16Op", ab_dtype=(("f16", "bf16"), "f16 or bf16 (use MmaTF32Op for tf32)"))
        _check_fields(self, "MmaF16BF16Op", acc_dtype=_acc16(self.ab_dtype, "mma.sync"),
                      shape_mnk=(((16, 8, 8), (16, 8, 16)),
                                 "an mma.sync shape for 16-bit inputs; use (16,8,8) or (16,8,16)"))

    def _make_atom(self):
        ab, acc = self.ab_dtype.upper(), self.acc_dtype.upper()
        return _warp_atom(self, "f16", 80, f"{acc}{ab}{ab}{acc}")


@dataclass(frozen=True)
class MmaTF32Op:
    """SM80 warp MMA ``mma.sync.aligned.m16n8k{4,8}.row.col.f32.tf32.tf32.f32`` (DSL: ``warp.MmaTF32Op(shape_mnk)``).

    >>> print(make_mma_atom(MmaTF32Op((16, 8, 8))).layout_a_tv)
    ((4,8),(2,2)):((16,1),(8,64))
    """

    shape_mnk: tuple

    def __post_init__(self):
        _check_fields(self, "MmaTF32Op",
                      shape_mnk=(((16, 8, 4), (16, 8, 8)), "a tf32 mma.sync shape; use (16,8,4) or (16,8,8)"))

    def _make_atom(self):
        return _warp_atom(self, "tf32", 80, "F32TF32TF32F32")


_FP8 = {"f8E4M3FN": "E4M3", "f8E5M2": "E5M2"}     # -> CuTe's name
_FP8_RULE = "an fp8 type; use Float8E4M3FN or Float8E5M2"


@dataclass(frozen=True)
class MmaFP8Op:
    """SM89 warp MMA ``mma.sync.aligned.m16n8k{16,32}.row.col`` with e4m3/e5m2 inputs (DSL:
    ``cute.nvgpu.warp.MmaFP8Op(ab_dtype, acc_dtype, shape_mnk)``).

    >>> print(make_mma_atom(MmaFP8Op("f8E4M3FN", "f32", (16, 8, 32))).layout_a_tv)
    ((4,8),(4,2,2)):((64,1),(16,8,256))
    """

    ab_dtype: object
    acc_dtype: object
    shape_mnk: tuple

    def __post_init__(self):
        _check_fields(self, "MmaFP8Op", ab_dtype=(_FP8, _FP8_RULE + " (MmaF16BF16Op for 16-bit inputs)"),
                      acc_dtype=(("f16", "f32"), "f16 or f32"),
                      shape_mnk=(((16, 8, 16), (16, 8, 32)),
                                 "an mma.sync shape for fp8 inputs; use (16,8,16) or (16,8,32)"))

    def _make_atom(self):
        ab, acc = _FP8[self.ab_dtype], self.acc_dtype.upper()
        return _warp_atom(self, "f8", 89, f"{acc}{ab}{ab}{acc}")


#: The N of ``wgmma.mma_async.m64nNk16`` for f16/bf16 inputs: 8, 16, ..., 256.
WGMMA_N_VALUES = tuple(range(8, 257, 8))


class _WarpgroupOp:
    """What the warpgroup ops share: the shape, operand source and majors checks, and the atom."""

    def _check_wgmma(self, what, k):
        """Check and store ``shape_mnk`` (``k`` is the instruction's K), ``a_src`` and the majors ("K" or "MN")."""
        if isinstance(self.shape_mnk, (tuple, list)) and len(self.shape_mnk) == 2:   # the DSL completes (64, N)
            object.__setattr__(self, "shape_mnk", (*self.shape_mnk, k))
        rule = f"a wgmma shape for these inputs; use (64,N,{k}) with N a multiple of 8 in [8,256]"
        _check_fields(self, what, shape_mnk=([(64, n, k) for n in WGMMA_N_VALUES], rule))
        object.__setattr__(self, "a_src", _dsl_enum(self.a_src, f"{what} a_src", ("smem", "rmem")))
        for f in ("a_major_mode", "b_major_mode"):
            object.__setattr__(self, f, _dsl_enum(getattr(self, f), f"{what} {f}", ("k", "mn")).upper())

    def _atom(self, a_rmem, types):
        """The atom: A from registers (``a_rmem``) or, as B, seen whole by every thread from shared memory. C: thread
        t0 + 4*t1 + 32*w starts at row t1 + 16*w, column 2*t0; the DSL drops N = 8's size-1 mode."""
        m, n, k = self.shape_mnk
        rs = self.a_src == "rmem"
        a = a_rmem if rs else _L((128, (m, k)), (0, (1, m)))
        c = (_L(((4, 8, 4), (2, 2)), ((128, 1, 16), (64, 8))) if n == 8 else
             _L(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512))))
        return MmaAtom(self, f"SM90_{m}x{n}x{k}_{types}_{'RS' if rs else 'SS'}", _L(128, 1), self.shape_mnk,
                       a, _L((128, (n, k)), (0, (1, n))), c)


@dataclass(frozen=True)
class WarpgroupMmaF16BF16Op(_WarpgroupOp):
    """SM90 warpgroup MMA ``wgmma.mma_async.m64nNk16`` with f16/bf16 inputs (DSL:
    ``cute.nvgpu.warpgroup.MmaF16BF16Op(ab, acc, (64,N,16), a_src, a_major_mode, b_major_mode)``), acc f32 (or f16
    for f16); ``a_src`` ``"smem"`` (descriptor, "SS") or ``"rmem"`` (registers, "RS", K-major); majors "K" or "MN".

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
        what = "warpgroup.MmaF16BF16Op"
        _check_fields(self, what, ab_dtype=(("f16", "bf16"), "f16 or bf16"))
        _check_fields(self, what, acc_dtype=_acc16(self.ab_dtype, "wgmma"))
        self._check_wgmma(what, 16)
        if self.a_src == "rmem" and self.a_major_mode != "K":
            raise LayoutError(f"{what}: A from registers is always K-major (wgmma has no imm-trans-a for register A); "
                              f"use a_major_mode='K' or a_src='smem'")

    def _make_atom(self):
        ab, acc = self.ab_dtype.upper(), self.acc_dtype.upper()
        # A from registers: the pattern of C, two k-blocks
        return self._atom(_L(((4, 8, 4), (2, 2, 2)), ((128, 1, 16), (64, 8, 512))), f"{acc}{ab}{ab}")


@dataclass(frozen=True)
class WarpgroupMmaF8Op(_WarpgroupOp):
    """SM90 warpgroup MMA ``wgmma.mma_async.m64nNk32`` with e4m3/e5m2 inputs (DSL:
    ``cute.nvgpu.warpgroup.MmaF8Op(a_dtype, b_dtype, acc_dtype, shape_mnk, a_src, a_major_mode, b_major_mode)``).
    wgmma transposes only 16-bit operands: both must be K-major (the DSL accepts MN-major; we refuse).

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
        what = "warpgroup.MmaF8Op"
        _check_fields(self, what, a_dtype=(_FP8, _FP8_RULE), b_dtype=(_FP8, _FP8_RULE),
                      acc_dtype=(("f16", "f32"), "f16 or f32"))
        self._check_wgmma(what, 32)
        if "MN" in (self.a_major_mode, self.b_major_mode):
            raise LayoutError(f"{what}: fp8 operands must be K-major (wgmma's imm-trans-a/b exist only "
                              f"for 16-bit inputs); use a_major_mode='K' and b_major_mode='K'. The CuTe DSL "
                              f"accepts MN-major here and builds an atom no instruction implements")

    def _make_atom(self):
        types = f"{self.acc_dtype.upper()}{_FP8[self.a_dtype]}{_FP8[self.b_dtype]}"
        return self._atom(_L(((4, 8, 4), (4, 2, 2)), ((256, 1, 16), (64, 8, 1024))), types)


def make_mma_atom(op) -> MmaAtom:
    """The MMA atom of an MMA operation (DSL: ``cute.make_mma_atom(op)``).

    >>> print(make_mma_atom(MmaF16BF16Op("f16", "f32", (16, 8, 16))).layout_a_tv)
    ((4,8),(2,2,2)):((32,1),(16,8,128))
    """
    if isinstance(op, MmaAtom):
        return op
    if not isinstance(op, (MmaF16BF16Op, MmaTF32Op, MmaFP8Op, _WarpgroupOp)):
        raise LayoutError(f"make_mma_atom: {op!r} is not an MMA operation; use nvgpu.warp.MmaF16BF16Op, nvgpu.warp"
                          f".MmaTF32Op, nvgpu.warp.MmaFP8Op, nvgpu.warpgroup.MmaF16BF16Op or nvgpu.warpgroup.MmaF8Op")
    return op._make_atom()
