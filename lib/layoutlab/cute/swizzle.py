"""Swizzles ``Sw<B,M,S>`` (CuTe's XOR functor on shared-memory offsets, ``include/cute/swizzle.hpp``) and swizzled
layouts ``ComposedLayout(inner, offset, outer)``: c -> inner(offset + outer(c)), printed as the CuTe DSL prints it.
Over F2 a swizzle is ``I + E`` with ``E^2 = 0``, an involution (:func:`layoutlab.linear.swizzle_to_linear_layout`).
The GMMA atoms live in :mod:`layoutlab.nvgpu.warpgroup` and are re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .algebra import LayoutWrapper, composition, logical_divide, recast_layout, tile_to_shape
from ..errors import LayoutError
from .basis import is_int
from .inttuple import none_to_zero
from .layout import Layout, _has_none, slice_

__all__ = ["Swizzle", "make_swizzle", "ComposedLayout", "make_composed_layout"]


@dataclass(frozen=True, slots=True, repr=False)
class Swizzle:
    """``Sw<B,M,S>``: x -> x XOR ((x & yyy_mask) >> S) (<< when S < 0), CuTe's swizzle functor: B = ``num_bits``
    XORed, M = ``num_base`` low bits kept, S = ``num_shift``.  Requires B >= 0, M >= 0 and |S| >= B (CuTe's
    ``static_assert``s in ``include/cute/swizzle.hpp``; the DSL silently returns ``S<0,4,3>`` instead)::

        >>> sw = Swizzle(3, 4, 3); sw(0x80), sw(0x90)     # row 1: chunk 0 -> 1, chunk 1 -> 0
        (144, 128)
        >>> Swizzle(3, 0, -3)(1)
        9
    """

    num_bits: int
    num_base: int
    num_shift: int

    def __post_init__(self):
        for letter, name in (("B", "num_bits"), ("M", "num_base"), ("S", "num_shift")):
            v = getattr(self, name)
            if not is_int(v):
                raise LayoutError(f"Swizzle: {letter} ({name}) = {v!r} is not an integer")
            object.__setattr__(self, name, int(v))
        b, m, s = self.num_bits, self.num_base, self.num_shift
        if b < 0 or m < 0:
            raise LayoutError(f"Swizzle<{b},{m},{s}>: B and M must be >= 0 (B = bits XORed, M = bits kept below them)")
        if abs(s) < b:
            raise LayoutError(
                f"Swizzle<{b},{m},{s}>: |S| = {abs(s)} < B = {b}, so the {b} source bits and the {b} target bits "
                f"overlap and the map is no longer an involution; CuTe requires |S| >= B (e.g. "
                f"Swizzle<{b},{m},{max(b, 1)}>). The CuTe DSL silently turns this into the identity S<0,4,3>; "
                f"we refuse")

    @property
    def yyy_mask(self) -> int:
        """The source bits: B ones starting at bit M + max(S, 0)."""
        return ((1 << self.num_bits) - 1) << (self.num_base + max(self.num_shift, 0))

    @property
    def zzz_mask(self) -> int:
        """The target bits: B ones starting at bit M - min(S, 0)."""
        return ((1 << self.num_bits) - 1) << (self.num_base - min(self.num_shift, 0))

    def __call__(self, offset):
        """Apply to an int or a numpy integer array."""
        picked = offset & self.yyy_mask
        return offset ^ (picked >> self.num_shift if self.num_shift >= 0 else picked << -self.num_shift)

    def __str__(self):
        return f"S<{self.num_bits},{self.num_base},{self.num_shift}>"

    __repr__ = __str__


def make_swizzle(b: int, m: int, s: int) -> Swizzle:
    """``cute.make_swizzle(b, m, s)``, with CuTe's validity rule enforced (see :class:`Swizzle`).

    >>> make_swizzle(2, 4, 3)          # the 64-byte swizzle
    S<2,4,3>
    """
    return Swizzle(b, m, s)


@dataclass(frozen=True, slots=True, repr=False)
class ComposedLayout(LayoutWrapper):
    """``inner o offset o outer``: c -> inner(offset + outer(c)), as in the CuTe DSL; ``inner`` a :class:`Swizzle` (or
    a Layout).  Shape, size, modes and the algebra are ``outer``'s (a :class:`~layoutlab.cute.algebra.LayoutWrapper`)::

        >>> c = ComposedLayout(Swizzle(3,4,3), 0, Layout((8,64), (64,1)))
        >>> print(c); c((1, 8))        # row 1, column 8: 72 has no bits 7..9 set, unchanged
        S<3,4,3> o 0 o (8,64):(64,1)
        72
    """

    inner: Swizzle | Layout
    offset: int
    outer: Layout

    def __post_init__(self):
        if not isinstance(self.inner, (Swizzle, Layout)):
            raise LayoutError(f"ComposedLayout: inner {self.inner!r} must be a Swizzle or a Layout")
        if not is_int(self.offset):
            raise LayoutError(f"ComposedLayout: offset {self.offset!r} must be an integer")
        if not isinstance(self.outer, Layout):
            raise LayoutError(f"ComposedLayout: outer {self.outer!r} must be a Layout (the coordinate -> offset map)")
        object.__setattr__(self, "offset", int(self.offset))

    def cosize(self) -> int:
        """``offset + cosize(outer)``, as ``cute.cosize`` (the swizzle permutes offsets within aligned blocks)."""
        return self.offset + self.outer.cosize()

    def __getitem__(self, i) -> "ComposedLayout":
        """Mode ``i``: ``inner o offset o outer[i]`` (as ``c[i]`` / ``cute.get(c, mode=[i])``)."""
        return self._with_layout(self.outer[i])

    def __len__(self):
        return self.rank()

    def __call__(self, *args):
        """Evaluate at an index or coordinate; a coordinate with ``None`` slices (see :meth:`slice_`)."""
        crd = args[0] if len(args) == 1 else args
        return self.slice_(crd) if _has_none(crd) else self.inner(self.offset + self.outer(crd))

    def byte_address(self, crd, element_bytes: int, base: int = 0) -> int:
        """The byte address at a smem pointer ``base``: ``inner(base + (offset + outer(crd)) * element_bytes)``."""
        if not isinstance(self.inner, Swizzle):
            raise LayoutError("byte_address: only a Swizzle inner acts on byte addresses")
        return self.inner(base + (self.offset + self.outer(crd)) * element_bytes)

    def slice_(self, crd) -> "ComposedLayout":
        """Fix the integer entries of ``crd`` and keep the ``None`` modes; the fixed part folds into the offset (the DSL
        4.8.1 drops it and folds the swizzle into the strides, wrongly for some SW32 staged layouts: test_swizzle)."""
        return ComposedLayout(self.inner, self.offset + self.outer(none_to_zero(crd)), slice_(self.outer, crd))

    def compose(self, rhs) -> "ComposedLayout":
        """``cute.composition(c, rhs)``: inner o offset o composition(outer, rhs)."""
        return composition(self, rhs)

    def logical_divide(self, tiler) -> "ComposedLayout":
        """``cute.logical_divide(c, tiler)``: the outer layout is divided, inner and offset kept."""
        return logical_divide(self, tiler)

    def tile_to_shape(self, trg_shape, order=None) -> "ComposedLayout":
        """``cute.tile_to_shape(c, shape, order)``: repeat the atom's outer layout over ``shape``."""
        return tile_to_shape(self, trg_shape, order)

    def _algebra_layout(self) -> Layout:
        return self.outer

    def _with_layout(self, layout) -> "ComposedLayout":
        return ComposedLayout(self.inner, self.offset, layout)

    def _recast_layout(self, new_type_bits: int, old_type_bits: int) -> "ComposedLayout":
        """``cute.recast_layout``: outer and offset recast, the swizzle's ``M`` moved by log2 of the width ratio."""
        num, den, inner = new_type_bits, old_type_bits, self.inner
        if isinstance(inner, Swizzle) and inner.num_bits:
            lo, hi = sorted((num, den))
            if hi % lo or (hi // lo) & (hi // lo - 1):
                raise LayoutError(f"recast_layout: {num}/{den} bits is not a power-of-two ratio, so the swizzle "
                                  f"{inner} of {self} has no recast (its bit ranges would split elements)")
            base = inner.num_base + (1 if num < den else -1) * ((hi // lo).bit_length() - 1)  # M moves by log2(hi/lo)
            if base < 0:
                raise LayoutError(
                    f"recast_layout: recasting {self} from {den}- to {num}-bit elements moves the swizzle's base "
                    f"M={inner.num_base} below bit 0 (the swizzle would XOR bits inside one element); the CuTe DSL "
                    f"prints a wrapped-around M here. Recast by a ratio of at most 2^M")
            inner = Swizzle(inner.num_bits, base, inner.num_shift)
        elif isinstance(inner, Layout):
            inner = recast_layout(num, den, inner)
        if (self.offset * den) % num:
            raise LayoutError(f"recast_layout: the offset {self.offset} of {self} is not a whole number of "
                              f"{num}-bit elements")
        return ComposedLayout(inner, self.offset * den // num, recast_layout(num, den, self.outer))

    def __str__(self):
        return f"{self.inner} o {self.offset} o {self.outer}"

    __repr__ = __str__


def make_composed_layout(inner, offset, outer) -> ComposedLayout:
    """``cute.make_composed_layout(inner, offset, outer)``: c -> inner(offset + outer(c)).

    >>> from layoutlab import make_layout
    >>> make_composed_layout(make_swizzle(3,4,3), 0, make_layout((8,64), stride=(64,1)))
    S<3,4,3> o 0 o (8,64):(64,1)
    """
    return ComposedLayout(inner, offset, outer)

