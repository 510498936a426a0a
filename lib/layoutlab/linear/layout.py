"""The ``LinearLayout`` class: maps between named bit-vectors over F2, L(x) = M x, with Triton's names and semantics
(checked against Triton in ``tests/oracles/test_linear_triton.py`` and ``tests/oracles/test_peer_triton_ll.py``).  The public
constructor validates; results of the algebra take the unchecked ``_make``; the rank is computed once.
"""

from __future__ import annotations

from functools import reduce
from operator import mul, or_, xor

from ..cute.basis import is_int
from ..errors import LayoutError
from .f2 import bit_offsets, check_size, cols_to_rows, is_pow2, log2, next_pow2_above, pivot_columns
from .f2 import rank_f2 as _rank, solve_f2, spans_meet, supremum

__all__ = ["LinearLayout"]


def _named_pairs(items, what, example):
    """``items`` (a dict or a sequence of (name, value) pairs) as a list of pairs, else a LayoutError."""
    items = list(items.items()) if isinstance(items, dict) else list(items)
    for item in items:
        if not (isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str)):
            raise LayoutError(f"LinearLayout: {what} must be (name, value) pairs such as {example}; got {item!r}")
    return items


class LinearLayout:
    """A linear map over F2 from named input dims to named output dims (Triton's ``LinearLayout``).

    Math: dims have power-of-two sizes; with the input bits stacked in x (dims in order, LSB first), L(x) = M x,
    ``bases[d][i]`` (one integer per out-dim) being column "bit i of in-dim d" of M. Triton's blocked example:

    >>> L = LinearLayout.from_bases([("register", [[0, 1], [1, 0]]), ("lane", [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]]),
    ...                              ("warp", [[8, 0]])], ["dim0", "dim1"])
    >>> L.apply({"register": 3, "lane": 9, "warp": 1})      # 3 -> (1,1); 9 = 1+8 -> (2,2)
    {'dim0': 11, 'dim1': 3}
    """

    __slots__ = ("_bases", "_out_dims", "_rank_cache")

    def __init__(self, bases, out_dims, require_surjective: bool = True):
        """From ``bases`` = [(in_dim, [[v_out0, ...], ...]), ...] and ``out_dims`` = [(out_dim, size), ...], checked.

        >>> LinearLayout([("lane", [[1], [2]])], [("dim0", 4)]).in_dims
        [('lane', 4)]
        """
        op = "LinearLayout"
        bases, out_dims = _named_pairs(bases, "bases", "[('lane', [[1], [2]])]"), _named_pairs(out_dims, "out_dims",
                                                                                               "[('dim0', 4)]")
        for d, vs in bases:
            for i, v in enumerate(vs if isinstance(vs, (list, tuple)) else [vs]):
                if not isinstance(v, (list, tuple)):
                    raise LayoutError(f"{op}: in-dim '{d}' has bases {vs!r}; give a list of bases, each a list with "
                                      f"one entry per out-dim (e.g. [[1], [2]] for one out-dim)")
        names = [n for n, _ in out_dims]
        for kind, dims in (("out", names), ("in", [n for n, _ in bases])):
            if len(set(dims)) != len(dims):
                raise LayoutError(f"{op}: {kind}-dim names {dims} repeat; each {kind}put dim must be named once")
        for name, size in out_dims:
            if not is_pow2(size):
                raise LayoutError(f"{op}: out-dim '{name}' has size {size}; linear layouts need power-of-two sizes "
                                  f"(e.g. {next_pow2_above(size - 1) if isinstance(size, int) and size > 0 else 1})")
        bad = next(((d, i, v, x) for d, vs in bases for i, v in enumerate(vs) for x in v if not is_int(x)), None)
        if bad:
            d, i, v, x = bad
            raise LayoutError(f"{op}: basis {i} of in-dim '{d}' is {list(v)}; every basis entry must be an integer, "
                              f"got {x!r}")
        clean = [(d, [[int(x) for x in v] for v in vs]) for d, vs in bases]
        for in_dim, vectors in clean:
            for i, v in enumerate(vectors):
                if len(v) != len(out_dims):
                    raise LayoutError(f"{op}: basis {i} of in-dim '{in_dim}' is {v} with {len(v)} entries; every "
                                      f"basis needs one entry per out-dim {names}")
                for (oname, osize), x in zip(out_dims, v):
                    if not 0 <= x < osize:
                        raise LayoutError(f"{op}: basis {i} of in-dim '{in_dim}' has value {x} for out-dim "
                                          f"'{oname}', out of range; values must lie in [0, {osize})")
        self._set(clean, out_dims)
        if require_surjective and not self.is_surjective():
            raise LayoutError(f"{op}: the layout is not surjective (some output is reached by no input), but "
                              f"require_surjective=True; pass require_surjective=False or add bases:{self}")

    @classmethod
    def _make(cls, bases, out_dims) -> "LinearLayout":
        """The unchecked constructor, for valid ``bases`` and ``out_dims`` (results of the algebra)."""
        return object.__new__(cls)._set(bases, out_dims)

    def _set(self, bases, out_dims):
        self._bases = tuple((d, tuple(tuple(v) for v in vs)) for d, vs in bases)
        self._out_dims = tuple((n, int(s)) for n, s in out_dims)
        self._rank_cache = None
        return self

    @staticmethod
    def from_bases(bases, out_dim_names, out_dim_sizes=None, require_surjective: bool = True) -> "LinearLayout":
        """Triton's ``from_bases``: basis i of an in-dim is the image of 2^i. Without ``out_dim_sizes`` each out-dim
        gets the smallest power of two above its largest value, and the layout must be surjective (as in Triton).

        >>> LinearLayout.from_bases([("lane", [[1], [2]])], ["dim0"]).out_dims
        [('dim0', 4)]
        """
        out_dim_names, bases = list(out_dim_names), _named_pairs(bases, "bases", "[('lane', [[1], [2]])]")
        if out_dim_sizes is None:           # each out-dim as small as its bases allow; then it must be surjective
            values = [[max(int(x), 0) if is_int(x) else 0 for x in v] for _, vs in bases for v in vs]
            out_dim_sizes = [next_pow2_above(max([0] + [v[k] for v in values if k < len(v)]))
                             for k in range(len(out_dim_names))]
            require_surjective = True
        out_dim_sizes = list(out_dim_sizes)
        if len(out_dim_sizes) != len(out_dim_names):
            raise LayoutError(f"from_bases: {len(out_dim_names)} out-dim names {out_dim_names} but "
                              f"{len(out_dim_sizes)} sizes {out_dim_sizes}; give one size per name")
        return LinearLayout(bases, list(zip(out_dim_names, out_dim_sizes)), require_surjective)

    @staticmethod
    def empty() -> "LinearLayout":
        """The layout with no input and no output dims (the unit of ``*``).

        >>> LinearLayout.empty() * LinearLayout.identity_1d(2, "i", "o") == LinearLayout.identity_1d(2, "i", "o")
        True
        """
        return LinearLayout._make([], [])

    @staticmethod
    def identity_1d(size: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """x -> x on ``size`` (a power of two) elements: basis i is 2^i.  Size 0 is the empty layout (Triton).

        >>> LinearLayout.identity_1d(8, "lane", "dim0").bases
        [('lane', [[1], [2], [4]])]
        """
        check_size("identity_1d", size, allow_zero=True)
        return LinearLayout.strided_1d(size, 1, in_dim, out_dim) if size else LinearLayout.empty()

    @staticmethod
    def zeros_1d(size: int, in_dim: str, out_dim: str, out_dim_size: int = 1) -> "LinearLayout":
        """x -> 0 on ``size`` elements (a broadcast: every input lands on element 0); size 0 is the empty layout.

        >>> LinearLayout.zeros_1d(4, "warp", "dim0").apply({"warp": 3})
        {'dim0': 0}
        """
        check_size("zeros_1d", size, allow_zero=True)
        if size == 0:
            return LinearLayout.empty()
        check_size("zeros_1d", out_dim_size)
        return LinearLayout._make([(in_dim, [[0]] * log2(size))], [(out_dim, out_dim_size)])

    @staticmethod
    def strided_1d(size: int, stride: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """x -> stride * x on ``size`` elements into an out-dim of size ``size * stride``, both powers of two.

        >>> LinearLayout.strided_1d(4, 2, "x", "y").bases
        [('x', [[2], [4]])]
        """
        check_size("strided_1d", size)
        if not is_pow2(stride):
            raise LayoutError(f"strided_1d: stride {stride} is not a power of two; x -> stride*x is linear "
                              f"over F2 only for stride = 2^k")
        return LinearLayout._make([(in_dim, [[stride << i] for i in range(log2(size))])], [(out_dim, size * stride)])

    @property
    def bases(self) -> list:
        """``[(in_dim, [[v_out0, ...], ...]), ...]`` exactly as given to :meth:`from_bases`.

        >>> LinearLayout.strided_1d(2, 4, "i", "o").bases
        [('i', [[4]])]
        """
        return [(d, [list(v) for v in vs]) for d, vs in self._bases]

    @property
    def out_dims(self) -> list:
        """``[(out_dim, size), ...]``.

        >>> LinearLayout.strided_1d(2, 4, "i", "o").out_dims
        [('o', 8)]
        """
        return list(self._out_dims)

    @property
    def in_dims(self) -> list:
        """``[(in_dim, size), ...]`` with size = 2 ** number of bases.

        >>> LinearLayout.identity_1d(8, "i", "o").in_dims
        [('i', 8)]
        """
        return [(d, 1 << len(vs)) for d, vs in self._bases]

    def get_in_dim_names(self) -> list:
        """Input dim names in order.

        >>> (LinearLayout.identity_1d(2, "register", "d") * LinearLayout.identity_1d(2, "lane", "d")).get_in_dim_names()
        ['register', 'lane']
        """
        return [d for d, _ in self._bases]

    def get_out_dim_names(self) -> list:
        """Output dim names in order.

        >>> (LinearLayout.identity_1d(2, "i", "dim0") * LinearLayout.identity_1d(2, "i", "dim1")).get_out_dim_names()
        ['dim0', 'dim1']
        """
        return [d for d, _ in self._out_dims]

    @property
    def num_in_dims(self) -> int:
        """Number of input dims (Triton's ``num_in_dims``).

        >>> LinearLayout.empty().num_in_dims
        0
        """
        return len(self._bases)

    @property
    def num_out_dims(self) -> int:
        """Number of output dims (Triton's ``num_out_dims``).

        >>> LinearLayout.identity_1d(4, "i", "o").num_out_dims
        1
        """
        return len(self._out_dims)

    def get_in_dim_size(self, in_dim: str) -> int:
        """2 ** (number of bases of ``in_dim``).

        >>> LinearLayout.identity_1d(8, "i", "o").get_in_dim_size("i")
        8
        """
        return 1 << len(self._in_bases(in_dim, "get_in_dim_size"))

    def get_out_dim_size(self, out_dim: str) -> int:
        """Declared size of ``out_dim``.

        >>> LinearLayout.strided_1d(4, 2, "i", "o").get_out_dim_size("o")
        8
        """
        return self._out_dims[self._out_index(out_dim, "get_out_dim_size")][1]

    def total_in_dim_size_log2(self) -> int:
        """Number of input bits (columns of the matrix).

        >>> (LinearLayout.identity_1d(4, "i", "o") * LinearLayout.identity_1d(2, "j", "o")).total_in_dim_size_log2()
        3
        """
        return sum(len(vs) for _, vs in self._bases)

    def total_out_dim_size_log2(self) -> int:
        """Number of output bits (rows of the matrix).

        >>> LinearLayout.strided_1d(4, 2, "i", "o").total_out_dim_size_log2()
        3
        """
        return sum(log2(s) for _, s in self._out_dims)

    def _in_bases(self, d, op):
        """The bases of input dim ``d``; ``op`` refuses a dim the layout lacks."""
        if d not in self.get_in_dim_names():
            raise LayoutError(f"{op}: '{d}' is not an input dim; the input dims are {self.get_in_dim_names()}")
        return dict(self._bases)[d]

    def _out_index(self, d, op):
        """The position of output dim ``d``; ``op`` refuses a dim the layout lacks."""
        if d not in self.get_out_dim_names():
            raise LayoutError(f"{op}: '{d}' is not an output dim; the output dims are {self.get_out_dim_names()}")
        return self.get_out_dim_names().index(d)

    def _columns(self) -> list[int]:
        """Each input bit's image as one int (out dims stacked, first least significant): the columns of M."""
        if not self._out_dims:
            return [0] * self.total_in_dim_size_log2()
        return [v[0] for _, vs in self.flatten_outs()._bases for v in vs]

    def _matrix_rows(self) -> list[int]:
        """Rows = output bits (out dims in order, LSB first); bit c of a row = input bit c."""
        return cols_to_rows(self._columns(), self.total_out_dim_size_log2())

    def _bases_over(self, out_names, shifts=None):
        """``{in_dim: bases}`` with each basis spread over ``out_names`` (0 for an out-dim the layout lacks) and
        shifted left by ``shifts[out_dim]`` bits."""
        pos, shifts = {o: k for k, o in enumerate(self.get_out_dim_names())}, shifts or {}
        return {d: [[v[pos[o]] << shifts.get(o, 0) if o in pos else 0 for o in out_names] for v in vs]
                for d, vs in self._bases}

    def _matrix_rank(self) -> int:
        """rank M over F2, computed once (a layout is immutable)."""
        if self._rank_cache is None:
            self._rank_cache = _rank(self._matrix_rows(), self.total_in_dim_size_log2())
        return self._rank_cache

    def get_matrix_view(self) -> list[list[int]]:
        """The 0/1 matrix M with L(x) = M x: rows are output bits, columns input bits.

        >>> LinearLayout.identity_1d(4, "i", "o").get_matrix_view()
        [[1, 0], [0, 1]]
        """
        n = self.total_in_dim_size_log2()
        return [[(row >> c) & 1 for c in range(n)] for row in self._matrix_rows()]

    def is_surjective(self) -> bool:
        """Every output is hit: rank M = number of output bits.

        >>> LinearLayout.zeros_1d(2, "i", "o", 2).is_surjective()
        False
        """
        return self._matrix_rank() == self.total_out_dim_size_log2()

    def is_injective(self) -> bool:
        """No two inputs collide: rank M = number of input bits.

        >>> LinearLayout.zeros_1d(2, "i", "o").is_injective()
        False
        """
        return self._matrix_rank() == self.total_in_dim_size_log2()

    def is_invertible(self) -> bool:
        """Surjective and as many input bits as output bits (M square and full rank).

        >>> LinearLayout.identity_1d(4, "i", "o").is_invertible()
        True
        """
        return self.is_surjective() and self.is_injective()

    def free_variable_masks(self) -> dict:
        """Per input dim, the mask of its bits that are no pivot of RREF(M): broadcast (``getFreeVariableMasks``).

        >>> LinearLayout.from_bases([("lane", [[1]]), ("warp", [[0]])], ["dim0"]).free_variable_masks()
        {'lane': 0, 'warp': 1}
        """
        pivots = pivot_columns(self._matrix_rows(), self.total_in_dim_size_log2())
        return {d: sum(1 << i for i in range(len(vs)) if c + i not in pivots)
                for (d, vs), c in zip(self._bases, bit_offsets(s for _, s in self.in_dims))}

    def get_num_consecutive_in_out(self) -> int:
        """How many consecutive first-in-dim values land on consecutive first-out-dim ones (``getNumConsecutiveInOut``).

        >>> LinearLayout.from_bases([("in", [[1], [2], [4], [10]])], ["out"]).get_num_consecutive_in_out()
        2
        """
        if not self._bases or not self._out_dims:
            return 1
        first, consec = self._bases[0][1], 0
        while consec < len(first) and first[consec][0] == 1 << consec and not any(first[consec][1:]):
            consec += 1
        other = reduce(or_, (v[0] for k, (_, vs) in enumerate(self._bases) for v in vs[0 if k else consec:]), 0)
        return min(1 << consec, other & -other or 1 << 31)    # the lowest bit the other bases touch

    def apply(self, inputs: dict) -> dict:
        """L(x), the XOR of the bases of the set input bits, as ``{out_dim: value}``; every in-dim needs a value.

        >>> LinearLayout.identity_1d(8, "i", "o").apply({"i": 5})
        {'o': 5}
        """
        names = self.get_in_dim_names()
        if set(inputs) != set(names):
            raise LayoutError(f"apply: got input dims {sorted(inputs)}, the layout's input dims are {names}; "
                              f"give a value for each")
        for d, vs in self._bases:
            if not 0 <= int(inputs[d]) < 1 << len(vs):
                raise LayoutError(f"apply: value {int(inputs[d])} for input dim '{d}' is outside [0, {1 << len(vs)})")
        return dict(zip(self.get_out_dim_names(), self._apply_vec((d, int(inputs[d])) for d in names)))

    def __call__(self, **inputs) -> dict:
        """``L(register=3, lane=9)`` is ``L.apply({"register": 3, "lane": 9})``.

        >>> LinearLayout.identity_1d(8, "i", "o")(i=3)
        {'o': 3}
        """
        return self.apply(inputs)

    def _apply_vec(self, named: list) -> tuple:
        """Apply to [(in_dim, value)] where dims may be missing (treated as 0) - internal."""
        table = dict(self._bases)
        hits = [v for d, x in named for i, v in enumerate(table.get(d, ())) if (x >> i) & 1]
        return tuple(reduce(xor, (v[k] for v in hits), 0) for k in range(len(self._out_dims)))

    def compose(self, outer: "LinearLayout") -> "LinearLayout":
        """``A.compose(B)`` is B∘A (M_B M_A): A's out-dims must be B's in-dims (any order), no larger than them.

        >>> LinearLayout.identity_1d(4, "i", "o").compose(LinearLayout.strided_1d(4, 2, "o", "p")).bases
        [('i', [[2], [4]])]
        """
        if set(self.get_out_dim_names()) != set(outer.get_in_dim_names()):
            raise LayoutError(f"compose: A's output dims {self.get_out_dim_names()} must equal B's input dims "
                              f"{outer.get_in_dim_names()} (A.compose(B) = B after A)")
        for d, s in self._out_dims:
            if s > outer.get_in_dim_size(d):
                raise LayoutError(f"compose: A's out-dim '{d}' has size {s} but B's in-dim '{d}' only "
                                  f"{outer.get_in_dim_size(d)}; B must accept every output of A")
        names = self.get_out_dim_names()
        return LinearLayout._make([(d, [outer._apply_vec(zip(names, v)) for v in vs]) for d, vs in self._bases],
                                  outer._out_dims)

    def __mul__(self, outer: "LinearLayout") -> "LinearLayout":
        """Direct-sum product ``A * B``: in a shared dim A's bits come first and B's images shift by A's out-size;
        common dims keep the same relative order in both.

        >>> (LinearLayout.identity_1d(4, "r", "d0") * LinearLayout.identity_1d(2, "r", "d0")).bases
        [('r', [[1], [2], [4]])]
        """
        outs = supremum(self.get_out_dim_names(), outer.get_out_dim_names(), "operator*: output dims")
        ins = supremum(self.get_in_dim_names(), outer.get_in_dim_names(), "operator*: input dims")
        minor, major = self._bases_over(outs), outer._bases_over(outs, {o: log2(s) for o, s in self._out_dims})
        sizes = dict.fromkeys(outs, 1)
        for o, s in self._out_dims + outer._out_dims:
            sizes[o] *= s
        return LinearLayout._make([(d, minor.get(d, []) + major.get(d, [])) for d in ins], list(sizes.items()))

    def invert_and_compose(self, outer: "LinearLayout") -> "LinearLayout":
        """``A.invert_and_compose(B)`` = C with A(x) = B(C(x)) for all x (C = B⁻¹∘A), the minimal-norm solution.

        A and B have the same out-dims and sizes; B is surjective.

        >>> LinearLayout.identity_1d(8, "i", "o").invert_and_compose(LinearLayout.strided_1d(8, 1, "j", "o")).bases
        [('i', [[1], [2], [4]])]

        Why: solving B C = A directly would send an in-dim both use alike (say, broadcast over warps) to the zero
        warp, moving data needlessly; such dims stay the identity. Unlike Triton, one whose image meets the span of
        B's other dims is solved with the rest (else the system may have no solution: Triton asserts).
        """
        A = self                        # the layout whose values we look up...
        out_names = A.get_out_dim_names()
        if set(out_names) != set(outer.get_out_dim_names()):
            raise LayoutError(f"invert_and_compose: A's output dims {out_names} and B's "
                              f"{outer.get_out_dim_names()} must be the same")
        B = outer.transpose_outs(out_names)   # ...in B, whose (pseudo)inverse we apply
        for (d, a), (_, b) in zip(A._out_dims, B._out_dims):
            if a != b:
                raise LayoutError(f"invert_and_compose: out-dim '{d}' has size {a} in A but {b} in B; a conversion "
                                  f"keeps the tensor's shape")
        if not B.is_surjective():
            raise LayoutError("invert_and_compose: B is not surjective, so some values of A have no "
                              f"preimage under B; B must reach every output:{outer}")

        def part(L, dims):
            return L.sublayout(dims, out_names)

        a_ins, b_ins = A.get_in_dim_names(), B.get_in_dim_names()
        # shared dims mapped alike (and not overlapping the rest of B) convert as the identity
        same = [d for d in b_ins if d in a_ins and part(B, [d]) == part(A, [d])
                and not spans_meet(part(B, [d])._columns(), part(B, [e for e in b_ins if e != d])._columns(),
                                   B.total_out_dim_size_log2())]
        ret = _solve(part(B, [d for d in b_ins if d not in same]), part(A, [d for d in a_ins if d not in same]))
        ret = ret * LinearLayout._identity([(d, B.get_in_dim_size(d)) for d in same])
        return ret.transpose_ins(a_ins).transpose_outs(b_ins)

    def pseudoinvert(self) -> "LinearLayout":
        """A right inverse P of a surjective L: L(P(y)) = y; free variables chosen zero.

        >>> L = LinearLayout.zeros_1d(2, "w", "o") * LinearLayout.identity_1d(4, "l", "o")
        >>> L.pseudoinvert().apply({"o": 2})
        {'w': 0, 'l': 2}
        """
        if not self.is_surjective():
            raise LayoutError(f"pseudoinvert: the layout is not surjective, so no right inverse exists:{self}")
        return LinearLayout._identity(self._out_dims).invert_and_compose(self)

    @staticmethod
    def _identity(dims) -> "LinearLayout":
        """x -> x on ``[(dim, size), ...]``, each dim onto itself."""
        return reduce(mul, (LinearLayout.identity_1d(s, d, d) for d, s in dims), LinearLayout.empty())

    def invert(self) -> "LinearLayout":
        """L⁻¹ for a bijective layout (square full-rank matrix): L⁻¹(L(x)) = x.

        >>> LinearLayout.from_bases([("i", [[2], [1]])], ["o"]).invert().bases
        [('o', [[2], [1]])]
        """
        if not self.is_invertible():
            raise LayoutError(f"invert: the layout is not invertible ({self.total_in_dim_size_log2()} input bits, "
                              f"{self.total_out_dim_size_log2()} output bits, surjective={self.is_surjective()}); "
                              f"only a bijection has an inverse - use pseudoinvert() for a surjective layout:{self}")
        return self.pseudoinvert()

    def equal_ignoring_out_dim_sizes(self, other: "LinearLayout") -> bool:
        """Equal but for the out-dim sizes (``equalIgnoringOutDimSizes``).

        >>> wide = LinearLayout.from_bases([("i", [[1], [2]])], ["o"], [8], require_surjective=False)
        >>> LinearLayout.identity_1d(4, "i", "o").equal_ignoring_out_dim_sizes(wide)
        True
        """
        return (isinstance(other, LinearLayout) and self._bases == other._bases
                and self.get_out_dim_names() == other.get_out_dim_names())

    def __eq__(self, other) -> bool:
        return self.equal_ignoring_out_dim_sizes(other) and self._out_dims == other._out_dims

    def __hash__(self) -> int:
        return hash((self._bases, self._out_dims))

    def __str__(self) -> str:
        out = "[" + ", ".join(f"{n} (size {s})" for n, s in self._out_dims) + "]"
        if not self._bases:
            return f"\n(empty layout with out-dims {out})" if self._out_dims else "\n(empty layout)"
        dims = ["\n   ".join(f"{d}={1 << i} -> ({', '.join(map(str, v))})" for i, v in enumerate(vs))
                or f"{d} is a size 1 dimension" for d, vs in self._bases]
        return "\n" + "".join(f" - {text}\n" for text in dims) + "where out dims are: " + out

    def __repr__(self) -> str:
        return f"LinearLayout.from_bases({self.bases!r}, {self.get_out_dim_names()!r}, " \
               f"{[s for _, s in self._out_dims]!r}, require_surjective={self.is_surjective()!r})"

    # The dim-shuffling methods (Triton's names): they never change which bits map where.

    def sublayout(self, in_dim_names, out_dim_names) -> "LinearLayout":
        """The restriction to the given in-dims, projected onto the given out-dims (the layout's order kept).

        >>> from layoutlab.linear import LinearLayout
        >>> (LinearLayout.identity_1d(2, "i", "a") * LinearLayout.identity_1d(2, "j", "b")).sublayout(["i"], ["a"]).bases
        [('i', [[1]])]
        """
        for d in in_dim_names:
            self._in_bases(d, "sublayout")
        for d in out_dim_names:
            self._out_index(d, "sublayout")
        ins, outs = set(in_dim_names), set(out_dim_names)
        keep = [k for k, (o, _) in enumerate(self._out_dims) if o in outs]
        return self._make([(d, [[v[k] for k in keep] for v in vs]) for d, vs in self._bases if d in ins],
                          [self._out_dims[k] for k in keep])

    def sublayout_is_zero(self, in_dim_names, out_dim_names) -> bool:
        """Whether the given input dims send nothing into the given output dims (Triton's ``sublayoutIsZero``).

        >>> from layoutlab.linear import LinearLayout
        >>> LinearLayout.identity_1d(4, "in", "out").sublayout_is_zero([], ["out"])
        True
        """
        return not any(any(v) for _, vs in self.sublayout(in_dim_names, out_dim_names)._bases for v in vs)

    def sublayout_is_identity(self, in_dim_names, out_dim_names) -> bool:
        """Whether the sublayout, flattened (first dims least significant), is x -> x.

        >>> from layoutlab.linear import LinearLayout
        >>> (LinearLayout.identity_1d(4, "i", "o") * LinearLayout.zeros_1d(2, "j", "o")).sublayout_is_identity(["i"], ["o"])
        True
        """
        sub = self.sublayout(in_dim_names, out_dim_names)
        return not sub._out_dims or sub._columns() == [1 << b for b in range(sub.total_in_dim_size_log2())]

    def transpose_ins(self, names) -> "LinearLayout":
        """Same map with the input dims reordered to ``names``.

        >>> from layoutlab.linear import LinearLayout
        >>> (LinearLayout.identity_1d(2, "a", "o") * LinearLayout.identity_1d(2, "b", "o")).transpose_ins(["b", "a"]).bases
        [('b', [[2]]), ('a', [[1]])]
        """
        table = dict(self._bases)
        _check_reordering("transpose_ins", names, list(table))
        return self._make([(d, table[d]) for d in names], self._out_dims)

    def transpose_outs(self, names) -> "LinearLayout":
        """Same map with the output dims reordered to ``names``.

        >>> from layoutlab.linear import LinearLayout
        >>> (LinearLayout.identity_1d(2, "i", "a") * LinearLayout.identity_1d(2, "i", "b")).transpose_outs(["b", "a"]).bases
        [('i', [[0, 1], [1, 0]])]
        """
        _check_reordering("transpose_outs", names, self.get_out_dim_names())
        return self._make(self._bases_over(names).items(), [(n, dict(self._out_dims)[n]) for n in names])

    def flatten_ins(self) -> "LinearLayout":
        """Merge all in-dims into one named like the first, its bits first (Triton's ``flattenIns``).

        >>> from layoutlab.linear import LinearLayout
        >>> (LinearLayout.identity_1d(2, "i", "o") * LinearLayout.identity_1d(4, "j", "o")).flatten_ins().bases
        [('i', [[1], [2], [4]])]
        """
        if not self._bases:
            return self
        return self.reshape_ins([(self._bases[0][0], 1 << self.total_in_dim_size_log2())])

    def flatten_outs(self, name=None) -> "LinearLayout":
        """Merge all out-dims into one (first least significant) named ``name`` or like the first (``flattenOuts``).

        >>> from layoutlab.linear import LinearLayout
        >>> (LinearLayout.identity_1d(2, "i", "a") * LinearLayout.identity_1d(2, "j", "b")).flatten_outs().bases
        [('i', [[1]]), ('j', [[2]])]
        """
        if not self._out_dims:
            return self
        shifts = bit_offsets(s for _, s in self._out_dims)
        return self._make([(d, [[sum(x << sh for x, sh in zip(v, shifts))] for v in vs]) for d, vs in self._bases],
                          [(name or self._out_dims[0][0], 1 << shifts[-1])])

    def reshape_ins(self, new_in_dims) -> "LinearLayout":
        """Re-split the flat sequence of input bits into ``[(name, size), ...]``.

        >>> from layoutlab.linear import LinearLayout
        >>> LinearLayout.identity_1d(8, "i", "o").reshape_ins([("a", 2), ("b", 4)]).bases
        [('a', [[1]]), ('b', [[2], [4]])]
        """
        flat = [v for _, vs in self._bases for v in vs]
        starts = _checked_offsets("reshape_ins", new_in_dims)
        if starts[-1] != len(flat):
            raise LayoutError(f"reshape_ins: sizes {new_in_dims} do not total 2^{len(flat)} input elements")
        return self._make([(d, flat[i:j]) for (d, _), i, j in zip(new_in_dims, starts, starts[1:])], self._out_dims)

    def reshape_outs(self, new_out_dims) -> "LinearLayout":
        """Re-split the flattened output (first out-dim least significant) into ``[(name, size), ...]``.

        >>> from layoutlab.linear import LinearLayout
        >>> LinearLayout.identity_1d(8, "i", "o").reshape_outs([("a", 2), ("b", 4)]).bases
        [('i', [[1, 0], [0, 1], [0, 2]])]
        """
        shifts = _checked_offsets("reshape_outs", new_out_dims)
        if shifts[-1] != self.total_out_dim_size_log2():
            raise LayoutError(f"reshape_outs: sizes {new_out_dims} do not total the output size "
                              f"2^{self.total_out_dim_size_log2()}")
        vectors = [[(b >> sh) & (s - 1) for (_, s), sh in zip(new_out_dims, shifts)] for b in self._columns()]
        return self._make([("_flat", vectors)], new_out_dims).reshape_ins(self.in_dims)

    def rename_in_dim(self, old: str, new: str) -> "LinearLayout":
        """The same layout with input dim ``old`` called ``new`` (Triton's ``renameInDim``).

        >>> from layoutlab.linear import LinearLayout
        >>> LinearLayout.identity_1d(4, "i", "o").rename_in_dim("i", "lane").bases
        [('lane', [[1], [2]])]
        """
        self._in_bases(old, "rename_in_dim")
        if new != old and new in self.get_in_dim_names():
            raise LayoutError(f"rename_in_dim: '{new}' is already an input dim of {self.get_in_dim_names()}")
        return self._make([(new if d == old else d, vs) for d, vs in self._bases], self._out_dims)

    def quotient(self, dim_names) -> "LinearLayout | None":
        """The layout without ``dim_names`` when it is trivial over them (Triton's ``quotient``), else ``None``.

        >>> from layoutlab.linear import LinearLayout
        >>> (LinearLayout.identity_1d(4, "lane", "lane") * LinearLayout.identity_1d(2, "reg", "reg")).quotient(["lane"]).bases
        [('reg', [[1]])]
        """
        dim_names = list(dim_names)
        if not self._is_trivial_over(dim_names):
            return None
        return self.sublayout([d for d in self.get_in_dim_names() if d not in dim_names],
                              [d for d in self.get_out_dim_names() if d not in dim_names])

    def _is_trivial_over(self, dims) -> bool:
        """Triton's ``isTrivialOver``: as a block matrix [[A, B], [C, D]] over (other dims, ``dims``), D is
        the identity and B, C are zero."""
        ins, outs = self.get_in_dim_names(), self.get_out_dim_names()
        if not set(dims) <= set(ins) & set(outs):
            return False
        square = self.sublayout(dims, dims)     # dims matched by name: their order in ins and outs may differ
        return (square.transpose_outs(square.get_in_dim_names()) == self._identity(square.in_dims)
                and self.sublayout_is_zero([d for d in ins if d not in dims], dims)
                and self.sublayout_is_zero(dims, [d for d in outs if d not in dims]))


def _solve(B: LinearLayout, A: LinearLayout) -> LinearLayout:
    """The minimal-norm X with B X = A over F2, as a layout A.in -> B.in."""
    num_b = B.total_in_dim_size_log2()
    cols = solve_f2(B._matrix_rows(), A._matrix_rows(), num_b, A.total_in_dim_size_log2())
    if cols is None:
        raise LayoutError("invert_and_compose: some value of A is not in the image of B, so A cannot "
                          "be written as B after anything")
    flat = LinearLayout._make([("_flat", [[c] for c in cols])], [("_flat", 1 << num_b)])
    return flat.reshape_ins(A.in_dims).reshape_outs(B.in_dims)


def _checked_offsets(op, dims):
    """``bit_offsets`` of ``[(name, size), ...]`` whose sizes ``op`` checks are powers of two."""
    for _, s in dims:
        check_size(op, s)
    return bit_offsets(s for _, s in dims)


def _check_reordering(op, names, current):
    if set(names) != set(current) or len(names) != len(current):
        raise LayoutError(f"{op}: {list(names)} is not a reordering of {current}")
