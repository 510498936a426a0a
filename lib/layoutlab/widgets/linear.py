"""The linear-layout explorer: toggle bits of an F2 matrix, compose, invert and convert linear layouts."""

import ipywidgets as w

from .. import viz
from ..errors import LayoutError
from ..viz.layouts import f2_matrix_parts
from .base import _Explorer, _live_only_note, _ok_html, _picture, _svg_html

__all__ = ["LinearLayoutExplorer"]


class LinearLayoutExplorer(_Explorer):
    """Toggle the bits of a linear layout's F2 matrix and see the layout change; compose or invert two.

    ``a`` and ``b`` are :class:`layoutlab.linear.LinearLayout`. The matrix of ``a`` is a grid of toggle
    buttons (rows: output bits, columns: input bits); flipping one changes the image of that input bit.
    ``operation`` shows ``A``, ``inverse(A)``, ``compose(A, B)`` = B(A(x)) (``A.compose(B)``), or
    ``invert_and_compose(A, B)`` (the C with A(x) = B(C(x)), Triton's layout conversion), drawn with
    :func:`layoutlab.viz.draw_f2_matrix`, and, for a distributed layout (register / lane / warp -> two
    output dims), on its tile with :func:`layoutlab.viz.draw_tv_layout`. Non-invertible or mismatched
    layouts show the library's error.

    >>> ex = LinearLayoutExplorer()           # A: lane -> (dim0, dim1), 3 bits to 3 bits
    >>> len(ex.toggles)                       # one toggle per entry of the F2 matrix
    9
    """

    OPERATIONS = ("A", "inverse(A)", "compose(A, B)", "invert_and_compose(A, B)")

    def __init__(self, a=None, b=None, operation="A"):
        from ..linear.layout import LinearLayout
        if a is None:
            a = LinearLayout.from_bases([("lane", [[1, 0], [2, 0], [0, 1]])], ["dim0", "dim1"])
        self.a, self.b = a, b if b is not None else a
        self.operation = w.Dropdown(options=list(self.OPERATIONS), value=operation, description="show")
        self.bits = w.Box()
        self.picture = _picture()
        self.tile = _picture()
        self.description = w.HTML()
        # the pictures wrap below each other when they do not fit side by side (never clipped)
        pictures = w.Box([self.picture, self.tile], layout=w.Layout(flex_flow="row wrap", align_items="flex-start"))
        super().__init__([self.bits, _live_only_note("Toggling a bit"), self.operation, self.description, pictures])
        self.operation.observe(lambda _c: self._guard(self._update), names="value")
        self._build_toggles()
        self._guard(self._update)

    def _build_toggles(self):
        mat, ins, outs, _, _ = f2_matrix_parts(self.a)
        self.toggles = {}
        cells = [w.Label("")] + [w.Label(lab, layout=w.Layout(width="44px")) for lab in ins]
        for r, out in enumerate(outs):
            cells.append(w.Label(out))
            for c in range(len(ins)):
                t = w.ToggleButton(value=bool(mat[r][c]), description=str(int(mat[r][c])),
                                   layout=w.Layout(width="44px", height="26px"))
                t.observe(lambda change, r=r, c=c: self._guard(self._toggle, r, c, change["new"]), names="value")
                self.toggles[(r, c)] = t
                cells.append(t)
        self.bits.children = [w.GridBox(cells, layout=w.Layout(
            grid_template_columns=f"80px repeat({len(ins)}, 46px)", grid_gap="1px"))]

    def toggle(self, row, col, value=None):
        """Set (or flip) output bit ``row`` of input bit ``col``'s image in A, and redraw (errors as messages)."""
        self._guard(self._toggle, row, col, value)

    def _toggle(self, row, col, value=None):
        from ..linear.layout import LinearLayout
        mat, ins, outs, in_groups, out_groups = f2_matrix_parts(self.a)
        if not (0 <= row < len(outs) and 0 <= col < len(ins)):
            raise LayoutError(f"LinearLayoutExplorer.toggle: bit ({row},{col}) outside the "
                              f"{len(outs)}x{len(ins)} matrix")
        new = int(not mat[row][col]) if value is None else int(bool(value))
        if mat[row][col] == new:
            return
        mat[row][col] = new
        bases, c = [], 0
        for (name, vectors) in self.a.bases:
            vecs = []
            for _ in vectors:
                column, vec, r = [row_[c] for row_ in mat], [], 0
                for bits in out_groups:
                    vec.append(int(sum(int(column[r + k]) << k for k in range(bits))))
                    r += bits
                vecs.append(vec)
                c += 1
            bases.append((name, vecs))
        self.a = LinearLayout(bases, self.a.out_dims, require_surjective=False)
        toggle = self.toggles.get((row, col))
        if toggle is not None:
            toggle.description = str(new)
            if toggle.value != bool(new):
                toggle.value = bool(new)
        self._update()

    def result(self):
        """The layout currently shown (A, its inverse, or the composition chosen in ``operation``)."""
        op = self.operation.value
        if op == "A":
            return self.a
        if op == "inverse(A)":
            return self.a.invert()
        if op == "compose(A, B)":
            return self.a.compose(self.b)
        return self.a.invert_and_compose(self.b)

    def _update(self):
        result = self.result()
        flags = [name for name, ok in (("injective", result.is_injective()),
                                       ("surjective", result.is_surjective())) if ok]
        self.description.value = _ok_html(f"{self.operation.value} = {result}\n"
                                          f"{', '.join(flags) if flags else 'neither injective nor surjective'}")
        self.picture.value = _svg_html(viz.draw_f2_matrix(result, title=self.operation.value))
        # a distributed layout (register/lane/warp -> (m, n)) is also shown on its tile
        try:
            tile = viz.draw_tv_layout(result, None, title=f"{self.operation.value} on its tile")
        except LayoutError:
            self.tile.value = ""
            self.tile.layout.display = "none"
        else:
            self.tile.value = _svg_html(tile)
            self.tile.layout.display = None
