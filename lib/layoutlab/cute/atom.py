"""MMA and copy atoms, as the CuTe DSL's ``cute/atom.py``: the operation base classes :class:`MmaOp` and
:class:`CopyOp` (the operations themselves are in :mod:`layoutlab.nvgpu`, as the DSL's ``cute.nvgpu``), the atoms
:class:`MmaAtom` and :class:`CopyAtom`, :func:`make_mma_atom` / :func:`make_copy_atom`, and the element types atoms
are made for. An MMA atom's ``layout_a_tv/b_tv/c_tv`` map ``(thread, value)`` to the column-major index
``m + M*k`` / ``n + N*k`` / ``m + M*n`` of A, B, C; a copy atom's ``layout_src_tv/dst_tv`` to the element, in
``value_type`` units. What the DSL accepts but no instruction does (e.g. MN-major fp8 ``wgmma``) is a LayoutError.
Sources: PTX ISA "Matrix Fragments for mma.m16n8k*", "wgmma.mma_async", "ldmatrix"; CuTe ``mma_traits_sm*.hpp``.
Example (the Hopper accumulator of ``wgmma.m64n64k16``)::

    >>> from layoutlab import nvgpu
    >>> atom = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16)))
    >>> print(atom.layout_c_tv)
    ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))
    >>> c = atom.layout_c_tv(1, 0); (c % 64, c // 64)       # thread 1, value 0 holds C[0, 2]
    (0, 2)
"""

from dataclasses import dataclass

from .algebra import recast_layout
from .inttuple import format_tree
from .layout import Layout
from ..errors import LayoutError

__all__ = ["MmaOp", "CopyOp", "MmaAtom", "CopyAtom", "make_mma_atom", "make_copy_atom", "dtype_name", "dtype_bits"]

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


class MmaOp:
    """An MMA operation (the DSL's ``cute.nvgpu`` MMA ops derive from its ``MmaOp``): a subclass builds its atom in
    ``_make_atom()``, which :func:`make_mma_atom` calls.

    >>> from layoutlab import nvgpu
    >>> isinstance(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16)), MmaOp)
    True
    """

    def _make_atom(self):
        raise NotImplementedError


class CopyOp:
    """A copy operation: a subclass builds its atom for a value type in ``_make_atom(value_type, bits,
    num_bits_per_copy)``, which :func:`make_copy_atom` calls.

    >>> from layoutlab import nvgpu
    >>> isinstance(nvgpu.cpasync.CopyG2SOp(), CopyOp), isinstance(nvgpu.warp.MmaTF32Op((16, 8, 8)), CopyOp)
    (True, False)
    """

    def _make_atom(self, vt, bits, num_bits_per_copy):
        raise NotImplementedError


def _table(width, *sections):
    """The DSL's printing of atoms: per section a title, then ``  label: value`` rows aligned at ``width``."""
    return "\n".join(title + "".join(f"\n  {k + ':':<{width}}{v}" for k, v in rows) for title, rows in sections)


@dataclass(eq=False)
class MmaAtom:
    """One MMA instruction as layouts (see :mod:`layoutlab.cute.atom`): ``op``, ``name`` (CuTe C++ name), ``thr_id``,
    ``shape_mnk``, ``layout_a_tv``/``_b_tv``/``_c_tv`` (also as the DSL's ``tv_layout_A/B/C``).

        >>> from layoutlab import nvgpu
        >>> print(make_mma_atom(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 8))))
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


def make_mma_atom(op) -> MmaAtom:
    """The MMA atom of an MMA operation (DSL: ``cute.make_mma_atom(op)``).

    >>> from layoutlab import nvgpu
    >>> print(make_mma_atom(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16))).layout_a_tv)
    ((4,8),(2,2,2)):((32,1),(16,8,128))
    """
    if isinstance(op, MmaAtom):
        return op
    if not isinstance(op, MmaOp):
        raise LayoutError(f"make_mma_atom: {op!r} is not an MMA operation; use nvgpu.warp.MmaF16BF16Op, nvgpu.warp"
                          f".MmaTF32Op, nvgpu.warp.MmaFP8Op, nvgpu.warpgroup.MmaF16BF16Op or nvgpu.warpgroup.MmaF8Op")
    return op._make_atom()


class CopyAtom:
    """One copy instruction as layouts in units of ``value_type``: ``op``, ``name`` (CuTe's), ``value_type``,
    ``thr_id``, ``layout_src_tv``, ``layout_dst_tv``, ``layout_ref_tv`` (the register side's order), ``num_val``
    (values per thread), ``layout_src_tv_bits`` / ``layout_dst_tv_bits`` (in bits, as CuTe C++ writes them).

        >>> from layoutlab import nvgpu
        >>> print(make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(False, 4), "f16"))
        Copy Atom
          ThrID:         32:1
          TV Layout Src: (32,8):(8,1)
          TV Layout Dst: (32,(2,4)):(2,(1,64))
          Value type:    f16
    """

    def __init__(self, op, name, value_type, thr_id, src_bits, dst_bits, raw_units=False, ref="dst"):
        self.op, self.name, self.value_type, self.thr_id = op, name, value_type, thr_id
        self.layout_src_tv_bits, self.layout_dst_tv_bits = src_bits, dst_bits
        # raw_units: already in value units (the DSL's "auto-vectorising" universal copy)
        bits = 1 if raw_units else dtype_bits(value_type)
        self.layout_src_tv, self.layout_dst_tv = (recast_layout(bits, 1, x) for x in (src_bits, dst_bits))
        # CuTe's RefLayout: the side whose (thread, value) order a TiledCopy follows -- the registers
        # (ldmatrix's destination, stmatrix's source); for copies with one TV layout it does not matter
        self.layout_ref_tv = self.layout_src_tv if ref == "src" else self.layout_dst_tv
        self.num_val = self.layout_ref_tv[1].size()

    def _rows(self):
        return [("ThrID", self.thr_id), ("TV Layout Src", self.layout_src_tv), ("TV Layout Dst", self.layout_dst_tv),
                ("Value type", self.value_type)]

    def __str__(self):
        return _table(15, ("Copy Atom", self._rows()))

    def __repr__(self):
        return f"CopyAtom({self.name}, {self.value_type})"


def make_copy_atom(op, value_type, num_bits_per_copy=None) -> CopyAtom:
    """The copy atom of ``op`` for ``value_type`` (DSL: ``cute.make_copy_atom(op, value_type, num_bits_per_copy)``).

    >>> from layoutlab import nvgpu
    >>> print(make_copy_atom(nvgpu.cpasync.CopyG2SOp(), "f16", num_bits_per_copy=128).layout_src_tv)
    (1,8):(0,1)
    """
    vt = dtype_name(value_type)
    if not isinstance(op, CopyOp):
        raise LayoutError(f"make_copy_atom: {op!r} is not a copy operation; use an nvgpu.warp LdMatrix/StMatrix op, "
                          f"nvgpu.cpasync.CopyG2SOp or nvgpu.CopyUniversalOp")
    return op._make_atom(vt, _DTYPES[vt], num_bits_per_copy)
