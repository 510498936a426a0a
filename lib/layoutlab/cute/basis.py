"""The scaled basis elements ``1@0``, ``2@1@0`` of identity layouts (``cute/numeric/arithmetic_tuple.hpp``; the DSL's
``cute.E``, ``cute.ScaledBasis``) and a reader of CuTe's printed nested tuples.
"""

from __future__ import annotations

import re

from ..errors import LayoutError

__all__ = ["ScaledBasis", "E", "is_int"]


def is_int(x) -> bool:
    """True for a Python/numpy integer (but not ``bool``); :mod:`layoutlab.cute.inttuple` exports it.

    >>> is_int(3), is_int(3.0), is_int(True), is_int((3,))
    (True, False, False, False)
    """
    return (isinstance(x, int) and not isinstance(x, bool)
            or hasattr(x, "dtype") and getattr(x, "ndim", 1) == 0 and x.dtype.kind in "iu")


class ScaledBasis:
    """A scaled unit vector ``value @ mode`` of CuTe's arithmetic tuples; ``mode`` is the path to the coordinate
    entry, outermost first (printed innermost first), as in the CuTe DSL.

    >>> ScaledBasis(2, 1), ScaledBasis(1, [1, 0]), ScaledBasis(1, 1) * 4
    (2@1, 1@0@1, 4@1)
    """

    __slots__ = ("value", "mode")

    def __init__(self, value: int, mode):
        self.value = int(value)
        self.mode = (int(mode),) if is_int(mode) else tuple(map(int, mode))

    @property
    def modes(self) -> tuple:
        """The path innermost first, the order CuTe prints it in (``1@0@1`` -> ``(0, 1)``)."""
        return self.mode[::-1]

    def __mul__(self, k):
        return ScaledBasis(self.value * int(k), self.mode) if is_int(k) else NotImplemented

    __rmul__ = __mul__

    def __neg__(self):
        return ScaledBasis(-self.value, self.mode)

    def __abs__(self):
        return ScaledBasis(abs(self.value), self.mode)

    def __eq__(self, other):
        if isinstance(other, ScaledBasis):
            return (self.value, self.mode) == (other.value, other.mode)
        # 0@i is the zero vector, equal to the integer 0 (a stride-0 mode).
        return is_int(other) and other == 0 and self.value == 0

    def __hash__(self):
        return hash((self.value, self.mode))

    def __str__(self):
        return "@".join(map(str, (self.value, *self.modes)))

    __repr__ = __str__

    def as_coordinate(self):
        """The nested coordinate tuple this basis element points to (zeros elsewhere).

        >>> ScaledBasis(2, 1).as_coordinate(), ScaledBasis(1, [1, 0]).as_coordinate()
        ((0, 2), (0, (1,)))
        """
        out = self.value
        for m in self.modes:  # build from the innermost entry outwards
            out = (0,) * m + (out,)
        return out


def E(*mode):
    """The unit basis vector ``E<mode>`` (``1@mode``), as ``cute.E``; ``E([])`` is the integer 1.

    >>> E(1), E([1, 0]), E(1, 0), E([])
    (1@1, 1@0@1, 1@0@1, 1)
    """
    path = tuple(mode[0]) if len(mode) == 1 and isinstance(mode[0], (list, tuple)) else mode
    return ScaledBasis(1, path) if path else 1


_TOKEN = re.compile(r"-?\d+(?:@\d+)*|[(),]|\S")


def read_tuple(text: str, what: str = "tuple"):
    """Read one nested tuple printed in CuTe's notation (``1@0@1`` is a basis element) back into Python.

    >>> read_tuple("((4,8),(1@0@1,3))")
    ((4, 8), (1@0@1, 3))
    """

    def fail(why):
        raise LayoutError(f"parse_layout: {why} in {what} {text!r}; use CuTe notation like ((4,8),2):((1,4),32)")

    tokens = _TOKEN.findall(text)
    for t in tokens:
        if t not in "()," and not t.lstrip("-")[:1].isdigit():
            fail(f"unexpected character {t!r}")
    stack, prev = [[]], None  # stack: the items of each open tuple, the outermost (the result) first
    for t in tokens:
        if prev in (None, "(", ","):  # a value is expected
            if t in "),":
                fail("empty tuple '()'" if prev == "(" and t == ")" else f"unexpected {t!r}")
        elif len(stack) == 1:
            fail("trailing text")
        elif t not in "),":
            fail(f"expected ',' or ')' at {t!r}")
        if t == "(":
            stack.append([])
        elif t == ")":
            stack[-2].append(tuple(stack.pop()))
        elif t != ",":
            v, *printed = t.split("@")  # printed innermost first: 1@0@1 is the path [1, 0]
            stack[-1].append(ScaledBasis(int(v), reversed(printed)) if printed else int(v))
        prev = t
    if len(stack) > 1 or not tokens:
        fail("missing ')'" if tokens else "empty input")
    return stack[0][0]
