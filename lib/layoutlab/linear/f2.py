"""Linear algebra over F2 on bit-packed matrices (one int per row, bit c = column c, as Triton's ``f2reduce``) and
the helpers every linear-layout module shares."""

from __future__ import annotations

from itertools import accumulate

from ..errors import LayoutError

__all__ = ["rref_f2", "supremum"]


def is_pow2(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n > 0 and not n & (n - 1)


def log2(n: int) -> int:
    return n.bit_length() - 1


def next_pow2_above(v: int) -> int:
    """Smallest power of two strictly greater than v (LLVM's NextPowerOf2): 0->1, 1->2, 4->8."""
    return 1 << v.bit_length()


def bit_offsets(sizes):
    """Where the bits of each power-of-two size start, stacked first lowest, then the total: [2, 8] -> [0, 1, 4]."""
    return list(accumulate(map(log2, sizes), initial=0))


def rref_f2(rows: list[int], num_cols: int) -> list[int]:
    """Reduced row-echelon form over F2: the pivot rows by increasing pivot column, then zero rows (``f2reduce``).

    >>> rref_f2([0b11, 0b01], 2)
    [1, 2]
    """
    m, r = list(rows), 0
    for bit in (1 << c for c in range(num_cols)):
        pivot = next((i for i in range(r, len(m)) if m[i] & bit), None)
        if pivot is not None:
            m[r], m[pivot] = m[pivot], m[r]
            m = [x ^ m[r] if i != r and x & bit else x for i, x in enumerate(m)]
            r += 1
    return m


def rank_f2(rows: list[int], num_cols: int) -> int:
    return sum(map(bool, rref_f2(rows, num_cols)))


def supremum(x: list, y: list, what: str = "supremum: the lists") -> list:
    """Shortest list holding x and y as subsequences, x's items first when free (Triton's ``supremum``, the dim
    order of ``*``); none exists when they order two common items differently.

    >>> supremum(["block", "lane"], ["register", "warp", "lane"])
    ['block', 'register', 'warp', 'lane']
    """
    if [d for d in x if d in y] != [d for d in y if d in x]:
        raise LayoutError(f"{what} {list(x)} and {list(y)} order their common items differently, so no "
                          f"list contains both in order; common dims must keep the same relative order")
    out, j = [], 0
    for d in x:
        if d in y:                      # a common item: first y's items before it (none of them common)
            k = y.index(d)
            out += y[j:k]
            j = k + 1
        out.append(d)
    return out + list(y[j:])


def check_size(op, size, allow_zero=False):
    if not is_pow2(size) and not (allow_zero and size == 0):
        raise LayoutError(f"{op}: size {size} is not a power of two; linear layouts index bits, so every "
                          f"dimension has 2^k elements")


def cols_to_rows(cols: list[int], n: int) -> list[int]:
    """The n-row matrix whose column c is the int ``cols[c]``."""
    return [sum(((col >> r) & 1) << c for c, col in enumerate(cols)) for r in range(n)]


def spans_meet(cols_x: list[int], cols_y: list[int], n: int) -> bool:
    """Whether the spans of two sets of n-bit columns share a nonzero vector (rank x + rank y > rank of both)."""
    return rank_f2(cols_x, n) + rank_f2(cols_y, n) > rank_f2(cols_x + cols_y, n)


def pivot_columns(rows, num_cols):
    """``{pivot column: row}`` of the RREF of a matrix stored one int per row."""
    return {(r & -r).bit_length() - 1: r for r in rref_f2(rows, num_cols) if r}


def solve_f2(b_rows: list[int], a_rows: list[int], num_b: int, num_a: int) -> list[int] | None:
    """The minimal-norm X with B X = A over F2 (Triton's ``lstsq``) as columns, or ``None``: in RREF([B | A]) a pivot
    in B's columns fixes a bit of X, free bits are 0, a pivot in A's columns is a value B never reaches."""
    pivots = pivot_columns([b | (a << num_b) for b, a in zip(b_rows, a_rows)], num_b + num_a)
    if any(c >= num_b for c in pivots):
        return None
    return cols_to_rows([pivots.get(r, 0) >> num_b for r in range(num_b)], num_a)
