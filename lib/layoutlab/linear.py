"""Linear layouts: maps between named bit-vectors over F2, with Triton's names and semantics.

A *linear layout* L sends each named input dimension (``register``, ``lane``, ``warp``, ``block``,
``offset``, ...) of power-of-two size to a point of the named output dimensions (``dim0``, ``dim1``,
... or ``offset``), and is determined by where it sends each input bit.  Write an input as a column
vector x of bits (all input dims stacked, the first dim's bits first, least significant bit first)
and the output the same way; then

    L(x) = M x        over F2, i.e. L(x) = XOR of the bases of the set bits of x,

with M the 0/1 matrix whose column j is the basis of input bit j (``get_matrix_view``).  Addition
is XOR and multiplication is AND; ``compose`` is matrix product, ``invert`` the matrix inverse.

The class follows Triton's Python binding ``triton._C.libtriton.linear_layout.LinearLayout`` name
for name and argument for argument (``from_bases``, ``identity_1d``, ``zeros_1d``, ``strided_1d``,
``bases``, ``out_dims``, ``apply``, ``compose``, ``*``, ``invert``, ``pseudoinvert``,
``invert_and_compose``, ``is_surjective``/``is_injective``/``is_invertible``, ``get_matrix_view``),
and prints like it.  It is checked case by case against Triton in ``tests/test_linear_triton.py``.

The module also converts between linear layouts and CuTe layouts / swizzles / TV layouts, and
classifies a layout conversion (registers only, warp shuffles, or shared memory).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import LayoutError

__all__ = [
    "LinearLayout",
    "rref_f2",
    "linear_layout_from_cute",
    "cute_from_linear_layout",
    "swizzle_to_linear_layout",
    "tv_layout_to_linear_layout",
    "LayoutConversion",
    "layout_conversion",
]


def _is_pow2(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n > 0 and (n & (n - 1)) == 0


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _next_pow2_above(v: int) -> int:
    """Smallest power of two strictly greater than v (LLVM's NextPowerOf2): 0->1, 1->2, 4->8."""
    return 1 << v.bit_length()


def rref_f2(rows: list[int], num_cols: int) -> list[int]:
    """Reduced row-echelon form over F2 of a matrix stored one int per row (bit c = column c).

    Columns are scanned from bit 0 upward; the result lists the nonzero pivot rows by increasing
    pivot column, followed by zero rows, so it is unique (the same as Triton's ``f2reduce``).

    Example: ``rref_f2([0b11, 0b01], 2) == [0b01, 0b10]``.
    """
    m = list(rows)
    r = 0
    for c in range(num_cols):
        bit = 1 << c
        pivot = next((i for i in range(r, len(m)) if m[i] & bit), None)
        if pivot is None:
            continue
        m[r], m[pivot] = m[pivot], m[r]
        for i in range(len(m)):
            if i != r and m[i] & bit:
                m[i] ^= m[r]
        r += 1
    return m


def _rank(rows: list[int], num_cols: int) -> int:
    return sum(1 for row in rref_f2(rows, num_cols) if row)


class LinearLayout:
    """A linear map over F2 from named input dims to named output dims (Triton's ``LinearLayout``).

    Math: with input bits stacked in a column vector x (dims in order, LSB first) the layout is
    L(x) = M x over F2; ``bases[d][i]`` is column "bit i of input dim d" of M, split into one
    integer per output dim.  ``apply`` XORs the bases of the set input bits.

    Example (seed 001's blocked layout, 2 warps, 16x16)::

        >>> L = LinearLayout.from_bases(
        ...     [("register", [[0, 1], [1, 0]]),
        ...      ("lane", [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]]),
        ...      ("warp", [[8, 0]])], ["dim0", "dim1"])
        >>> L.apply({"register": 3, "lane": 9, "warp": 1})      # 3 -> (1,1); 9 = 1+8 -> (2,2)
        {'dim0': 11, 'dim1': 3}
    """

    __slots__ = ("_bases", "_out_dims", "_surjective")

    # ------------------------------------------------------------------ construction
    def __init__(self, bases, out_dims, require_surjective: bool = True):
        """Build from ``bases`` = [(in_dim, [[v_out0, v_out1, ...], ...]), ...] and
        ``out_dims`` = [(out_dim, size), ...]; prefer :meth:`from_bases`."""
        op = "LinearLayout"
        bases = list(bases.items()) if isinstance(bases, dict) else list(bases)
        out_dims = list(out_dims)
        names = [n for n, _ in out_dims]
        if len(set(names)) != len(names):
            raise LayoutError(f"{op}: out-dim names {names} repeat; each output dim must be named once")
        in_names = [n for n, _ in bases]
        if len(set(in_names)) != len(in_names):
            raise LayoutError(f"{op}: in-dim names {in_names} repeat; each input dim must be named once")
        for name, size in out_dims:
            if not _is_pow2(size):
                raise LayoutError(
                    f"{op}: out-dim '{name}' has size {size}; linear layouts need power-of-two sizes "
                    f"(e.g. {_next_pow2_above(max(int(size), 1) - 1) if isinstance(size, int) and size > 0 else 1})")
        clean = []
        for in_dim, vectors in bases:
            vecs = []
            for i, v in enumerate(vectors):
                v = [int(x) for x in v]
                if len(v) != len(out_dims):
                    raise LayoutError(
                        f"{op}: basis {i} of in-dim '{in_dim}' is {v} with {len(v)} entries; every basis "
                        f"needs one entry per out-dim {names}")
                for (oname, osize), x in zip(out_dims, v):
                    if x < 0 or x >= osize:
                        raise LayoutError(
                            f"{op}: basis {i} of in-dim '{in_dim}' has value {x} for out-dim '{oname}', "
                            f"out of range; values must lie in [0, {osize})")
                vecs.append(tuple(v))
            clean.append((in_dim, tuple(vecs)))
        self._bases = tuple(clean)
        self._out_dims = tuple((n, int(s)) for n, s in out_dims)
        self._surjective = _rank(self._matrix_rows(), self.total_in_dim_size_log2()) == self.total_out_dim_size_log2()
        if require_surjective and not self._surjective:
            raise LayoutError(
                f"{op}: the layout is not surjective (some output is reached by no input), but "
                f"require_surjective=True; pass require_surjective=False or add bases:{self}")

    @staticmethod
    def from_bases(bases, out_dim_names, out_dim_sizes=None, require_surjective: bool = True) -> "LinearLayout":
        """Triton's ``LinearLayout.from_bases``.

        ``bases`` is a list of ``(in_dim, [basis, ...])`` where basis i of ``in_dim`` is the image of
        input value 2^i, one integer per name in ``out_dim_names``.  Without ``out_dim_sizes`` each
        out-dim gets the smallest power of two above its largest basis value, and the layout must
        then be surjective (as in Triton).

        Example: ``LinearLayout.from_bases([("lane", [[1], [2]])], ["dim0"]).out_dims == [("dim0", 4)]``.
        """
        out_dim_names = list(out_dim_names)
        if out_dim_sizes is None:
            sizes = {n: 1 for n in out_dim_names}
            for _, vectors in bases:
                for v in vectors:
                    for n, x in zip(out_dim_names, v):
                        sizes[n] = max(sizes[n], _next_pow2_above(int(x)) if int(x) >= 0 else 1)
            return LinearLayout(bases, [(n, sizes[n]) for n in out_dim_names], True)
        out_dim_sizes = list(out_dim_sizes)
        if len(out_dim_sizes) != len(out_dim_names):
            raise LayoutError(
                f"from_bases: {len(out_dim_names)} out-dim names {out_dim_names} but {len(out_dim_sizes)} "
                f"sizes {out_dim_sizes}; give one size per name")
        return LinearLayout(bases, list(zip(out_dim_names, out_dim_sizes)), require_surjective)

    @staticmethod
    def empty() -> "LinearLayout":
        """The layout with no input and no output dims (the unit of ``*``)."""
        return LinearLayout([], [], False)

    @staticmethod
    def identity_1d(size: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """x -> x on ``size`` (a power of two) elements: basis i is 2^i.

        Example: ``identity_1d(8, "lane", "dim0").bases == [("lane", [[1], [2], [4]])]``.
        """
        _check_size("identity_1d", size)
        return LinearLayout([(in_dim, [[1 << i] for i in range(_log2(size))])], [(out_dim, size)])

    @staticmethod
    def zeros_1d(size: int, in_dim: str, out_dim: str, out_dim_size: int = 1) -> "LinearLayout":
        """x -> 0 on ``size`` elements (a broadcast: every input lands on element 0).

        Example: ``zeros_1d(4, "warp", "dim0").apply({"warp": 3}) == {"dim0": 0}``.
        """
        _check_size("zeros_1d", size)
        return LinearLayout([(in_dim, [[0] for _ in range(_log2(size))])], [(out_dim, out_dim_size)],
                            require_surjective=False)

    @staticmethod
    def strided_1d(size: int, stride: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """x -> stride * x on ``size`` elements, into an out-dim of size ``size * stride``.

        Both must be powers of two (then multiplication by the stride is a bit shift, so linear).
        Example: ``strided_1d(4, 2, "x", "y").bases == [("x", [[2], [4]])]`` with out size 8.
        """
        _check_size("strided_1d", size)
        if not _is_pow2(stride):
            raise LayoutError(f"strided_1d: stride {stride} is not a power of two; x -> stride*x is linear "
                              f"over F2 only for stride = 2^k")
        return LinearLayout([(in_dim, [[stride << i] for i in range(_log2(size))])],
                            [(out_dim, size * stride)], require_surjective=False)

    # ------------------------------------------------------------------ accessors
    @property
    def bases(self) -> list:
        """``[(in_dim, [[v_out0, ...], ...]), ...]`` exactly as given to :meth:`from_bases`."""
        return [(d, [list(v) for v in vs]) for d, vs in self._bases]

    @property
    def out_dims(self) -> list:
        """``[(out_dim, size), ...]``."""
        return list(self._out_dims)

    @property
    def in_dims(self) -> list:
        """``[(in_dim, size), ...]`` with size = 2 ** number of bases."""
        return [(d, 1 << len(vs)) for d, vs in self._bases]

    def get_in_dim_names(self) -> list:
        """Input dim names in order, e.g. ``["register", "lane", "warp"]``."""
        return [d for d, _ in self._bases]

    def get_out_dim_names(self) -> list:
        """Output dim names in order, e.g. ``["dim0", "dim1"]``."""
        return [d for d, _ in self._out_dims]

    @property
    def num_in_dims(self) -> int:
        """Number of input dims (Triton's ``num_in_dims``)."""
        return len(self._bases)

    @property
    def num_out_dims(self) -> int:
        """Number of output dims (Triton's ``num_out_dims``)."""
        return len(self._out_dims)

    def get_in_dim_size(self, in_dim: str) -> int:
        """2 ** (number of bases of ``in_dim``): ``identity_1d(8, "i", "o").get_in_dim_size("i") == 8``."""
        return dict(self.in_dims)[self._need_in(in_dim, "get_in_dim_size")]

    def get_out_dim_size(self, out_dim: str) -> int:
        """Declared size of ``out_dim``: ``strided_1d(4, 2, "i", "o").get_out_dim_size("o") == 8``."""
        return dict(self._out_dims)[self._need_out(out_dim, "get_out_dim_size")]

    def total_in_dim_size_log2(self) -> int:
        """Number of input bits (columns of the matrix)."""
        return sum(len(vs) for _, vs in self._bases)

    def total_out_dim_size_log2(self) -> int:
        """Number of output bits (rows of the matrix)."""
        return sum(_log2(s) for _, s in self._out_dims)

    def _need_in(self, d, op):
        if d not in self.get_in_dim_names():
            raise LayoutError(f"{op}: '{d}' is not an input dim; the input dims are {self.get_in_dim_names()}")
        return d

    def _need_out(self, d, op):
        if d not in self.get_out_dim_names():
            raise LayoutError(f"{op}: '{d}' is not an output dim; the output dims are {self.get_out_dim_names()}")
        return d

    # ------------------------------------------------------------------ matrix view
    def _matrix_rows(self) -> list[int]:
        """Rows = output bits (out dims in order, LSB first); bit c of a row = input bit c."""
        rows = []
        for k, (_, osize) in enumerate(self._out_dims):
            for j in range(_log2(osize)):
                row, c = 0, 0
                for _, vs in self._bases:
                    for v in vs:
                        row |= ((v[k] >> j) & 1) << c
                        c += 1
                rows.append(row)
        return rows

    def get_matrix_view(self) -> list[list[int]]:
        """The 0/1 matrix M with L(x) = M x: rows are output bits, columns input bits.

        Example: ``identity_1d(4, "i", "o").get_matrix_view() == [[1, 0], [0, 1]]``.
        """
        n = self.total_in_dim_size_log2()
        return [[(row >> c) & 1 for c in range(n)] for row in self._matrix_rows()]

    # ------------------------------------------------------------------ properties
    def is_surjective(self) -> bool:
        """Every output is hit: rank M = number of output bits."""
        return self._surjective

    def is_injective(self) -> bool:
        """No two inputs collide: rank M = number of input bits."""
        return _rank(self._matrix_rows(), self.total_in_dim_size_log2()) == self.total_in_dim_size_log2()

    def is_invertible(self) -> bool:
        """Surjective and as many input bits as output bits (M square and full rank)."""
        return self._surjective and self.total_in_dim_size_log2() == self.total_out_dim_size_log2()

    def free_variable_masks(self) -> dict:
        """Per input dim, a bit mask of the *free* input bits: those that are not pivots of RREF(M).

        A free bit's basis is a combination of earlier bits' bases, so flipping it (together with
        those bits) revisits data already held: the layout *broadcasts* along it.  Triton's
        ``getFreeVariableMasks``.  Example: a warp bit with basis 0 is free:
        ``from_bases([("lane", [[1]]), ("warp", [[0]])], ["dim0"]).free_variable_masks() == {"lane": 0, "warp": 1}``.
        """
        rows = rref_f2(self._matrix_rows(), self.total_in_dim_size_log2())
        pivots = {(r & -r).bit_length() - 1 for r in rows if r}
        out, c = {}, 0
        for d, vs in self._bases:
            mask = 0
            for i in range(len(vs)):
                if c not in pivots:
                    mask |= 1 << i
                c += 1
            out[d] = mask
        return out

    # ------------------------------------------------------------------ evaluation
    def apply(self, inputs: dict) -> dict:
        """L(x): XOR of the bases of the set bits of each input dim; returns ``{out_dim: value}``.

        Every input dim must be given, and each value must be below its dim's size.
        Example: ``identity_1d(8, "i", "o").apply({"i": 5}) == {"o": 5}``.
        """
        names = self.get_in_dim_names()
        if set(inputs) != set(names):
            raise LayoutError(f"apply: got input dims {sorted(inputs)}, the layout's input dims are {names}; "
                              f"give a value for each")
        out = [0] * len(self._out_dims)
        for d, vs in self._bases:
            x = int(inputs[d])
            if x < 0 or x >= (1 << len(vs)):
                raise LayoutError(f"apply: value {x} for input dim '{d}' is outside [0, {1 << len(vs)})")
            for i, v in enumerate(vs):
                if (x >> i) & 1:
                    out = [a ^ b for a, b in zip(out, v)]
        return {n: o for (n, _), o in zip(self._out_dims, out)}

    def __call__(self, **inputs) -> dict:
        """``L(register=3, lane=9)`` is ``L.apply({"register": 3, "lane": 9})``."""
        return self.apply(inputs)

    def _apply_vec(self, named: list) -> tuple:
        """Apply to [(in_dim, value)] where dims may be missing (treated as 0) - internal."""
        out = [0] * len(self._out_dims)
        table = dict(self._bases)
        for d, x in named:
            for i, v in enumerate(table.get(d, ())):
                if (x >> i) & 1:
                    out = [a ^ b for a, b in zip(out, v)]
        return tuple(out)

    # ------------------------------------------------------------------ algebra
    def compose(self, outer: "LinearLayout") -> "LinearLayout":
        """``A.compose(B)`` is B∘A: apply A first, then B (matrix product M_B M_A).

        A's output dims must be B's input dims (any order), each A out-size <= the B in-size.
        Example: ``identity_1d(4,"i","o").compose(strided_1d(4,2,"o","p")).bases == [("i", [[2],[4]])]``.
        """
        if set(self.get_out_dim_names()) != set(outer.get_in_dim_names()):
            raise LayoutError(
                f"compose: A's output dims {self.get_out_dim_names()} must equal B's input dims "
                f"{outer.get_in_dim_names()} (A.compose(B) = B after A)")
        for d, s in self._out_dims:
            if s > outer.get_in_dim_size(d):
                raise LayoutError(f"compose: A's out-dim '{d}' has size {s} but B's in-dim '{d}' only "
                                  f"{outer.get_in_dim_size(d)}; B must accept every output of A")
        names = self.get_out_dim_names()
        new = [(d, [list(outer._apply_vec(list(zip(names, v)))) for v in vs]) for d, vs in self._bases]
        surj = self._surjective and outer._surjective and all(
            s == outer.get_in_dim_size(d) for d, s in self._out_dims)
        return LinearLayout(new, outer.out_dims, surj)

    def __mul__(self, outer: "LinearLayout") -> "LinearLayout":
        """Direct-sum product ``A * B``: A's bits are minor, B's are stacked above them.

        In-dims (and out-dims) shared by A and B concatenate A's bits then B's; B's images in a
        shared out-dim are shifted left by A's out-size.  Common dims must appear in the same
        relative order in both.  Example:
        ``(identity_1d(4,"r","d0") * identity_1d(2,"r","d0")).bases == [("r", [[1],[2],[4]])]``.
        """
        inner = self
        for what, a, b in (("output", inner.get_out_dim_names(), outer.get_out_dim_names()),
                           ("input", inner.get_in_dim_names(), outer.get_in_dim_names())):
            ca = [d for d in a if d in b]
            cb = [d for d in b if d in a]
            if ca != cb:
                raise LayoutError(f"operator*: {what} dims common to both layouts must appear in the same "
                                  f"relative order, got {a} and {b}")
        # dims merge in an order consistent with both operands (the "supremum" of the two orders)
        in_log = {d: 0 for d in _supremum(inner.get_in_dim_names(), outer.get_in_dim_names())}
        out_log = {d: 0 for d in _supremum(inner.get_out_dim_names(), outer.get_out_dim_names())}
        for lay in (inner, outer):
            for d, vs in lay._bases:
                in_log[d] += len(vs)
            for d, s in lay._out_dims:
                out_log[d] += _log2(s)
        out_names = list(out_log)
        inner_in, outer_in = dict(inner._bases), dict(outer._bases)
        inner_out = dict(inner._out_dims)
        new = []
        for d, n in in_log.items():
            vecs = [[0] * len(out_names) for _ in range(n)]
            ib = inner_in.get(d, ())
            for k, o in enumerate(out_names):
                if o in inner_out:
                    ik = inner.get_out_dim_names().index(o)
                    for i, v in enumerate(ib):
                        vecs[i][k] = v[ik]
                if d in outer_in and o in outer.get_out_dim_names():
                    ok = outer.get_out_dim_names().index(o)
                    shift = _log2(inner_out[o]) if o in inner_out else 0
                    for i, v in enumerate(outer_in[d]):
                        vecs[len(ib) + i][k] = v[ok] << shift
            new.append((d, vecs))
        return LinearLayout(new, [(o, 1 << out_log[o]) for o in out_names],
                            inner._surjective and outer._surjective)

    def sublayout(self, in_dim_names, out_dim_names) -> "LinearLayout":
        """The restriction to the given input dims and projection onto the given output dims."""
        ins = [d for d in self.get_in_dim_names() if d in set(in_dim_names)]
        keep = [k for k, (o, _) in enumerate(self._out_dims) if o in set(out_dim_names)]
        table = dict(self._bases)
        return LinearLayout([(d, [[v[k] for k in keep] for v in table[d]]) for d in ins],
                            [self._out_dims[k] for k in keep], require_surjective=False)

    def transpose_ins(self, names) -> "LinearLayout":
        """Same map with the input dims reordered to ``names``."""
        table = dict(self._bases)
        if set(names) != set(table):
            raise LayoutError(f"transpose_ins: {list(names)} is not a reordering of {list(table)}")
        return LinearLayout([(d, table[d]) for d in names], self._out_dims, False)

    def transpose_outs(self, names) -> "LinearLayout":
        """Same map with the output dims reordered to ``names``."""
        cur = self.get_out_dim_names()
        if set(names) != set(cur):
            raise LayoutError(f"transpose_outs: {list(names)} is not a reordering of {cur}")
        perm = [cur.index(n) for n in names]
        return LinearLayout([(d, [[v[p] for p in perm] for v in vs]) for d, vs in self._bases],
                            [self._out_dims[p] for p in perm], False)

    def flatten_outs(self, name=None) -> "LinearLayout":
        """Merge all output dims into one (the first out-dim least significant), as Triton does."""
        shifts, s = [], 0
        for _, size in self._out_dims:
            shifts.append(s)
            s += _log2(size)
        name = name or (self._out_dims[0][0] if self._out_dims else "dim0")
        return LinearLayout([(d, [[sum(x << sh for x, sh in zip(v, shifts))] for v in vs]) for d, vs in self._bases],
                            [(name, 1 << s)], False)

    def reshape_ins(self, new_in_dims) -> "LinearLayout":
        """Re-split the flat sequence of input bits into ``[(name, size), ...]``."""
        flat = [v for _, vs in self._bases for v in vs]
        if sum(_log2(s) for _, s in new_in_dims) != len(flat):
            raise LayoutError(f"reshape_ins: sizes {new_in_dims} do not total 2^{len(flat)} input elements")
        new, i = [], 0
        for d, s in new_in_dims:
            n = _log2(s)
            new.append((d, flat[i:i + n]))
            i += n
        return LinearLayout(new, self._out_dims, False)

    def reshape_outs(self, new_out_dims) -> "LinearLayout":
        """Re-split the flattened output (first out-dim least significant) into ``[(name, size), ...]``."""
        flat = self.flatten_outs()
        total = sum(_log2(s) for _, s in new_out_dims)
        if total != flat.total_out_dim_size_log2():
            raise LayoutError(f"reshape_outs: sizes {new_out_dims} do not total the output size "
                              f"2^{flat.total_out_dim_size_log2()}")
        new = []
        for d, vs in flat._bases:
            vecs = []
            for (b,) in vs:
                vec = []
                for _, s in new_out_dims:
                    vec.append(b % s)
                    b //= s
                vecs.append(vec)
            new.append((d, vecs))
        return LinearLayout(new, new_out_dims, False)

    def invert_and_compose(self, outer: "LinearLayout") -> "LinearLayout":
        """``A.invert_and_compose(B)`` = C with A(x) = B(C(x)) for all x (C = B⁻¹∘A).

        A and B must have the same output dims and sizes and B must be surjective.  Where B is
        not injective, Triton's choice is reproduced: the minimal-norm least-squares solution
        (free variables of B set to zero - broadcast data is read from one place).
        Example: ``identity_1d(8,"i","o").invert_and_compose(strided_1d(8,1,"j","o")).bases
        == [("i", [[1],[2],[4]])]`` with output dim ``j``.
        """
        out_names = self.get_out_dim_names()
        if set(out_names) != set(outer.get_out_dim_names()):
            raise LayoutError(f"invert_and_compose: A's output dims {out_names} and B's "
                              f"{outer.get_out_dim_names()} must be the same")
        B = self
        A = outer.transpose_outs(out_names)
        for d in out_names:
            if A.get_out_dim_size(d) != B.get_out_dim_size(d):
                raise LayoutError(f"invert_and_compose: out-dim '{d}' has size {B.get_out_dim_size(d)} in A "
                                  f"but {A.get_out_dim_size(d)} in B; a conversion keeps the tensor's shape")
        if not A._surjective:
            raise LayoutError("invert_and_compose: B is not surjective, so some values of A have no "
                              f"preimage under B; B must reach every output:{outer}")
        identity_dims = [d for d in A.get_in_dim_names()
                         if d in B.get_in_dim_names()
                         and A.sublayout([d], out_names) == B.sublayout([d], out_names)
                         and not _spans_meet(A.sublayout([d], out_names),
                                             A.sublayout([e for e in A.get_in_dim_names() if e != d], out_names))]
        a_rest = [d for d in A.get_in_dim_names() if d not in identity_dims]
        b_rest = [d for d in B.get_in_dim_names() if d not in identity_dims]
        ret = _lstsq(A.sublayout(a_rest, out_names), B.sublayout(b_rest, out_names))
        for d in identity_dims:
            ret = ret * LinearLayout.identity_1d(A.get_in_dim_size(d), d, d)
        return ret.transpose_ins(B.get_in_dim_names()).transpose_outs(A.get_in_dim_names())

    def pseudoinvert(self) -> "LinearLayout":
        """A right inverse P of a surjective L: L(P(y)) = y; free variables chosen zero.

        Example: ``zeros_1d(2,"w","o",1) * identity_1d(4,"l","o")`` is not injective but
        ``pseudoinvert`` maps o=2 to lane 2, warp 0.
        """
        if not self._surjective:
            raise LayoutError(f"pseudoinvert: the layout is not surjective, so no right inverse exists:{self}")
        ident = LinearLayout.empty()
        for d, s in self._out_dims:
            ident = ident * LinearLayout.identity_1d(s, d, d)
        return ident.invert_and_compose(self)

    def invert(self) -> "LinearLayout":
        """L⁻¹ for a bijective layout (square full-rank matrix): L⁻¹(L(x)) = x.

        Example: ``strided_1d(4,1,"i","o").invert().bases == [("o", [[1],[2]])]`` (output dim ``i``).
        """
        if not self.is_invertible():
            raise LayoutError(
                f"invert: the layout is not invertible ({self.total_in_dim_size_log2()} input bits, "
                f"{self.total_out_dim_size_log2()} output bits, surjective={self._surjective}); only a "
                f"bijection has an inverse - use pseudoinvert() for a surjective layout:{self}")
        return self.pseudoinvert()

    # ------------------------------------------------------------------ printing / equality
    def __eq__(self, other) -> bool:
        return (isinstance(other, LinearLayout) and self._bases == other._bases
                and self._out_dims == other._out_dims)

    def __hash__(self) -> int:
        return hash((self._bases, self._out_dims))

    def __str__(self) -> str:
        out = "[" + ", ".join(f"{n} (size {s})" for n, s in self._out_dims) + "]"
        if not self._bases:
            return "\n(empty layout)" if not self._out_dims else f"\n(empty layout with out-dims {out})"
        text = "\n"
        for d, vs in self._bases:
            if not vs:
                text += f" - {d} is a size 1 dimension\n"
                continue
            text += " - " + "\n   ".join(
                f"{d}={1 << i} -> (" + ", ".join(str(x) for x in v) + ")" for i, v in enumerate(vs)) + "\n"
        return text + "where out dims are: " + out

    def __repr__(self) -> str:
        return f"LinearLayout.from_bases({self.bases!r}, {self.get_out_dim_names()!r}, " \
               f"{[s for _, s in self._out_dims]!r}, require_surjective={self._surjective!r})"


def _supremum(x: list, y: list) -> list:
    """Shortest list containing x and y as subsequences, preferring x's items when free to choose.

    ``[a, b] , [a, c] -> [a, b, c]``; ``[block, lane] , [register, warp, lane] -> [block, register,
    warp, lane]``.  Raises if x and y order two common items differently.
    """
    pos_x = {d: i for i, d in enumerate(x)}
    pos_y = {d: i for i, d in enumerate(y)}
    out, i, j = [], 0, 0
    while True:
        while i < len(x) and x[i] in out:
            i += 1
        while j < len(y) and y[j] in out:
            j += 1
        if i >= len(x) and j >= len(y):
            return out
        if i < len(x) and j < len(y) and x[i] == y[j]:
            out.append(x[i])
            continue
        cand_x = pos_y[x[i]] if i < len(x) and x[i] in pos_y and pos_y[x[i]] >= j else None
        cand_y = pos_x[y[j]] if j < len(y) and y[j] in pos_x and pos_x[y[j]] >= i else None
        if i < len(x) and cand_x is None:
            out.append(x[i])
        elif j < len(y) and cand_y is None:
            out.append(y[j])
        elif cand_x <= cand_y:
            out.append(x[i])
        else:
            out.append(y[j])


def _check_size(op, size):
    if not _is_pow2(size):
        raise LayoutError(f"{op}: size {size} is not a power of two; linear layouts index bits, so every "
                          f"dimension has 2^k elements")


def _spans_meet(X: LinearLayout, Y: LinearLayout) -> bool:
    """Whether the column spans of X and Y (same out dims) share a nonzero vector."""
    n = X.total_out_dim_size_log2()
    cols = lambda L: [sum(((r >> c) & 1) << k for k, r in enumerate(L._matrix_rows()))  # noqa: E731
                      for c in range(L.total_in_dim_size_log2())]
    cx, cy = cols(X), cols(Y)
    rx = _rank(_cols_to_rows(cx, n), len(cx))
    ry = _rank(_cols_to_rows(cy, n), len(cy))
    rxy = _rank(_cols_to_rows(cx + cy, n), len(cx) + len(cy))
    return rx + ry > rxy


def _cols_to_rows(cols: list[int], n: int) -> list[int]:
    return [sum(((col >> r) & 1) << c for c, col in enumerate(cols)) for r in range(n)]


def _lstsq(A: LinearLayout, B: LinearLayout) -> LinearLayout:
    """Minimal-norm X with A X = B over F2 (Triton's lstsq), as a layout B.in -> A.in."""
    num_a = A.total_in_dim_size_log2()
    num_b = B.total_in_dim_size_log2()
    rows = [a | (b << num_a) for a, b in zip(A._matrix_rows(), B._matrix_rows())]
    red = rref_f2(rows, num_a + num_b)
    pivot_rows = {}
    for r in red:
        if not r:
            continue
        c = (r & -r).bit_length() - 1
        if c >= num_a:
            raise LayoutError("invert_and_compose: some value of A is not in the image of B, so A cannot "
                              "be written as B after anything")
        pivot_rows[c] = r >> num_a
    ret_rows = [pivot_rows.get(r, 0) for r in range(num_a)]
    flat = []
    for c in range(num_b):
        flat.append([sum(((ret_rows[r] >> c) & 1) << r for r in range(num_a))])
    a_in = A.in_dims
    b_in = B.in_dims
    flat_ll = LinearLayout([("_flat", flat)], [("_flat", 1 << num_a)], require_surjective=False)
    return flat_ll.reshape_ins(b_in).reshape_outs(a_in)


# ---------------------------------------------------------------------- conversions
def _flat_modes(shape, stride):
    """Flatten a (possibly nested) shape/stride pair into [(s, d), ...] in colexicographic order."""
    if isinstance(shape, (tuple, list)):
        if not isinstance(stride, (tuple, list)) or len(stride) != len(shape):
            raise LayoutError(f"linear_layout_from_cute: shape {shape} and stride {stride} are not congruent")
        out = []
        for s, d in zip(shape, stride):
            out += _flat_modes(s, d)
        return out
    return [(int(shape), int(stride))]


def _shape_stride(layout):
    if not (hasattr(layout, "shape") and hasattr(layout, "stride")):
        raise LayoutError(f"linear_layout_from_cute: {layout!r} is not a CuTe Layout (needs .shape and .stride); "
                          f"a ComposedLayout converts with its own to_linear_layout()")
    return layout.shape, layout.stride


def linear_layout_from_cute(layout, in_dim_names=None, out_dim_name: str = "offset") -> LinearLayout:
    """A CuTe layout with power-of-two shapes and strides as a LinearLayout.

    Math: coordinate bit j of a mode (s):(d) contributes d * 2^j to the offset; the CuTe sum is an
    XOR (so the layout is linear over F2) exactly when every stride is 0 or a power of two and no
    two bits land on the same offset bit.  Top-level mode k becomes input dim ``in_dim_names[k]``
    (default ``dim0, dim1, ...``; a rank-1 layout gets one dim); the output is one dim ``offset``
    whose size is the next power of two above the largest offset.

    Example: ``(8,64):(64,1)`` -> dim0 bases 64,128,256 and dim1 bases 1,2,...,32 into offset 512.
    """
    op = "linear_layout_from_cute"
    shape, stride = _shape_stride(layout)
    top = list(zip(shape, stride)) if isinstance(shape, (tuple, list)) else [(shape, stride)]
    if in_dim_names is None:
        in_dim_names = [f"dim{k}" for k in range(len(top))]
    in_dim_names = list(in_dim_names)
    if len(in_dim_names) != len(top):
        raise LayoutError(f"{op}: {len(in_dim_names)} in-dim names {in_dim_names} for a layout of rank {len(top)}")
    seen = {}
    bases, biggest = [], 0
    for k, (name, (s, d)) in enumerate(zip(in_dim_names, top)):
        vecs = []
        for m, (ms, md) in enumerate(_flat_modes(s, d)):
            if not _is_pow2(ms):
                raise LayoutError(
                    f"{op}: mode {k} has extent {ms} in shape {shape}, not a power of two; a linear layout "
                    f"over F2 needs 2^k extents (pad the tile to {_next_pow2_above(ms - 1)} or use the CuTe layout)")
            if md != 0 and not _is_pow2(md):
                raise LayoutError(
                    f"{op}: mode {k} has stride {md} in {stride}, neither 0 nor a power of two, so offsets "
                    f"carry between bits and the map is not linear over F2")
            for j in range(_log2(ms)):
                v = md << j if md else 0
                if v:
                    if v in seen:
                        raise LayoutError(
                            f"{op}: coordinate bits {seen[v]} and ({name}, bit {len(vecs)}) both add {v} to the "
                            f"offset; the sum then carries and is not an XOR (the layout is not linear)")
                    seen[v] = (name, len(vecs))
                biggest |= v
                vecs.append([v])
        bases.append((name, vecs))
    return LinearLayout(bases, [(out_dim_name, _next_pow2_above(biggest))], require_surjective=False)


def cute_from_linear_layout(ll: LinearLayout):
    """Back from a LinearLayout to a CuTe ``Layout``, when one exists.

    Each input dim becomes a top-level mode; each input bit whose (flattened) image is 0 or a single
    power of two becomes a size-2 sub-mode with that stride, and runs of bits with doubling strides
    merge (``2,2,2 : 1,2,4`` -> ``8:1``).  An image with two or more set bits (an XOR, e.g. a
    swizzle) has no CuTe Layout: that is a ``LayoutError`` naming the bit (use a ComposedLayout).
    Several output dims flatten with the first output dim least significant (CuTe's colex order).

    Example: the inverse of :func:`linear_layout_from_cute` on ``(8,64):(64,1)``.
    """
    from .layout import Layout  # the algebra module's Layout; imported late to keep this module standalone

    flat = ll.flatten_outs()
    shapes, strides = [], []
    for d, vs in flat._bases:
        ms, md = [], []
        for i, (v,) in enumerate(vs):
            if v & (v - 1):
                raise LayoutError(
                    f"cute_from_linear_layout: bit {i} of in-dim '{d}' maps to {v} = 0b{v:b}, a sum of several "
                    f"offset bits (an XOR); a CuTe Layout can only add strides - express it as a Swizzle "
                    f"composed with a Layout instead")
            if ms and ((md[-1] and v == md[-1] * ms[-1]) or (md[-1] == 0 and v == 0)):
                ms[-1] *= 2
            else:
                ms.append(2)
                md.append(v)
        if not ms:
            ms, md = [1], [0]
        shapes.append(ms[0] if len(ms) == 1 else tuple(ms))
        strides.append(md[0] if len(md) == 1 else tuple(md))
    if len(shapes) == 1:
        return Layout(shapes[0], strides[0])
    return Layout(tuple(shapes), tuple(strides))


def swizzle_to_linear_layout(swizzle, num_bits: int | None = None, dim: str = "offset") -> LinearLayout:
    """The swizzle Sw<B,M,S> as an invertible F2 map on offset bits ``dim -> dim``.

    Math: Sw(x) = x XOR ((x & yyy_mask) >> S) with yyy_mask the B bits starting at M+S, so bit
    M+S+i of x also flips bit M+i (for S>0).  In matrix form Sw = I + E where E has ones at
    (M+i, M+S+i): an involution since E^2 = 0.  ``num_bits`` defaults to M+B+|S|.

    Example: ``Swizzle(1,0,1)`` on 2 bits -> bases [[1],[3]] (bit 1 also flips bit 0).
    """
    B, M, S = swizzle.num_bits, swizzle.num_base, swizzle.num_shift
    need = M + B + abs(S)
    n = need if num_bits is None else int(num_bits)
    if n < need:
        raise LayoutError(f"swizzle_to_linear_layout: {swizzle} reads bit {need - 1}, but num_bits={n}")
    return LinearLayout([(dim, [[swizzle(1 << i)] for i in range(n)])], [(dim, 1 << n)])


def tv_layout_to_linear_layout(tv_layout, tile_mn, threads_per_warp: int = 32) -> LinearLayout:
    """A CuTe TV layout (thread, value) -> index of an M x N tile, as register/lane/warp -> dim0/dim1.

    The tile index is CuTe's colexicographic ``m + M*n``; thread bits below ``threads_per_warp``
    become ``lane``, the rest ``warp``; value bits become ``register``.  Output dims: ``dim0`` = m
    (size M), ``dim1`` = n (size N), the convention of Triton/Gluon.

    Example: seed 001's blocked layout is ``((8,4,2),(2,2)):((32,2,8),(16,1))`` on 16x16.
    """
    op = "tv_layout_to_linear_layout"
    M, N = (int(x) for x in tile_mn)
    for what, x in (("M", M), ("N", N), ("threads_per_warp", threads_per_warp)):
        if not _is_pow2(x):
            raise LayoutError(f"{op}: {what}={x} is not a power of two")
    shape, stride = _shape_stride(tv_layout)
    if not (isinstance(shape, (tuple, list)) and len(shape) == 2):
        raise LayoutError(f"{op}: a TV layout has two top-level modes (thread, value), got shape {shape}")
    flat = linear_layout_from_cute(tv_layout, ["thread", "value"], "idx")
    tbits = [v for (v,) in dict(flat._bases)["thread"]]
    vbits = [v for (v,) in dict(flat._bases)["value"]]
    lane_bits = _log2(threads_per_warp)

    def split(v):
        if v >= M * N:
            raise LayoutError(f"{op}: the layout reaches index {v}, outside the {M}x{N} tile")
        return [v % M, v // M]

    bases = [("register", [split(v) for v in vbits]),
             ("lane", [split(v) for v in tbits[:lane_bits]] + [[0, 0]] * max(0, lane_bits - len(tbits))),
             ("warp", [split(v) for v in tbits[lane_bits:]])]
    return LinearLayout(bases, [("dim0", M), ("dim1", N)], require_surjective=False)


@dataclass(frozen=True)
class LayoutConversion:
    """How data moves when a tensor changes from distributed layout ``src`` to ``dst``.

    ``map`` sends a destination (register, lane, warp, ...) to the source location holding the same
    element (``dst.invert_and_compose(src)``). ``kind`` is the cheapest mechanism that suffices:
    ``"none"`` (same layout), ``"register"`` (values only move between a thread's registers),
    ``"warp_shuffle"`` (within a warp: shuffles), or ``"shared_memory"`` (across warps/blocks).
    """
    kind: str
    map: LinearLayout


def _trivial_over(L: LinearLayout, dims) -> bool:
    """L acts as the identity on ``dims`` and those dims neither feed nor receive the others."""
    dims = [d for d in dims if d in L.get_in_dim_names() or d in L.get_out_dim_names()]
    if not dims:
        return True
    if not all(d in L.get_in_dim_names() and d in L.get_out_dim_names() for d in dims):
        return False
    rest_in = [d for d in L.get_in_dim_names() if d not in dims]
    rest_out = [d for d in L.get_out_dim_names() if d not in dims]
    for d in dims:
        if L.get_in_dim_size(d) != L.get_out_dim_size(d):
            return False
    sq = L.sublayout(dims, dims)
    k = 0
    for d, vs in sq._bases:
        for i, v in enumerate(vs):
            want = [(1 << i) if o == d else 0 for o in sq.get_out_dim_names()]
            if list(v) != want:
                return False
            k += 1
    zero = lambda S: all(not any(v) for _, vs in S._bases for v in vs)  # noqa: E731
    return zero(L.sublayout(rest_in, dims)) and zero(L.sublayout(dims, rest_out))


def layout_conversion(src: LinearLayout, dst: LinearLayout) -> LayoutConversion:
    """Classify converting a distributed tensor from layout ``src`` to ``dst`` (Triton's rule).

    Math: C = dst.invert_and_compose(src) satisfies dst(x) = src(C(x)), i.e. C(x) is where the
    element wanted at x lives now. If C is the identity on (block, warp, lane) and those don't mix
    with registers, each thread already owns its data: register moves.  If only (block, warp) are
    trivial, data stays in its warp: warp shuffles.  Otherwise it goes through shared memory.

    Example: transposing the register order within a thread is ``"register"``; swapping lanes and
    registers (seed 001's two blocked layouts) is ``"warp_shuffle"``.
    """
    if src.get_in_dim_names() and set(src.get_in_dim_names()) != set(dst.get_in_dim_names()):
        raise LayoutError(f"layout_conversion: src input dims {src.get_in_dim_names()} and dst "
                          f"{dst.get_in_dim_names()} differ; both must be distributed layouts")
    cvt = dst.invert_and_compose(src)
    if src == dst:
        kind = "none"
    elif _trivial_over(cvt, ["block", "warp", "lane"]):
        kind = "register"
    elif _trivial_over(cvt, ["block", "warp"]):
        kind = "warp_shuffle"
    else:
        kind = "shared_memory"
    return LayoutConversion(kind, cvt)
