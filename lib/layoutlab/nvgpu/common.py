"""What the ``cute.nvgpu`` operations share: the checks of their fields, and the DSL's universal copy
(``cute.nvgpu.CopyUniversalOp``)."""

from dataclasses import dataclass

from ..cute.atom import CopyAtom, CopyOp, dtype_name, make_copy_atom  # noqa: F401 (examples)
from ..cute.layout import Layout
from ..errors import LayoutError

__all__ = ["CopyUniversalOp"]


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


def _alternatives(values):
    """``(1, 2, 4)`` -> ``"1, 2 or 4"`` (for error messages)."""
    *first, last = map(str, values)
    return f"{', '.join(first)} or {last}" if first else last


def _thread_copy(op, name, vt, nb):
    """The atom of one thread moving ``nb`` contiguous bits (``None``: one value, the DSL's auto-vectorising copy)."""
    lay = _L((1, 1), (0, 0)) if nb is None else _L((1, nb), (0, 1))
    return CopyAtom(op, name, vt, _L(1, 0), lay, lay, raw_units=nb is None)


@dataclass(frozen=True)
class CopyUniversalOp(CopyOp):
    """A plain load/store of ``num_bits_per_copy`` bits per thread (DSL: ``cute.nvgpu.CopyUniversalOp()``); without
    it the DSL leaves the width to its auto-vectoriser and shows one value, ``(1,1):(0,0)``, as we do.

    >>> print(make_copy_atom(CopyUniversalOp(), "f32", num_bits_per_copy=128).layout_dst_tv)
    (1,4):(0,1)
    """

    def _make_atom(self, vt, bits, nb):
        if nb is None:
            return _thread_copy(self, f"UniversalCopy<{vt}>", vt, None)
        if not isinstance(nb, int) or nb not in (8, 16, 32, 64, 128, 256) or nb % bits:
            raise LayoutError(f"make_copy_atom: a universal copy moves a power-of-two number of whole {vt} "
                              f"values up to 256 bits; num_bits_per_copy={nb!r} is not that "
                              f"(use a multiple of {bits})")
        return _thread_copy(self, f"UniversalCopy<uint{nb}_t>", vt, nb)
