"""Reshaping and restricting a linear layout's named dims (Triton's names): a mixin of ``LinearLayout``."""

from __future__ import annotations

from .errors import LayoutError
from .linear_f2 import bit_offsets, check_size


class DimensionOps:
    """The dim-shuffling methods of ``LinearLayout`` (they never change which bits map where)."""

    __slots__ = ()

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


def _checked_offsets(op, dims):
    """``bit_offsets`` of ``[(name, size), ...]`` whose sizes ``op`` checks are powers of two."""
    for _, s in dims:
        check_size(op, s)
    return bit_offsets(s for _, s in dims)


def _check_reordering(op, names, current):
    if set(names) != set(current) or len(names) != len(current):
        raise LayoutError(f"{op}: {list(names)} is not a reordering of {current}")

