"""Explorers of the Hopper data path: which ldmatrix feeds an MMA operand, where a TMA box lands, what a wgmma
descriptor holds."""

import ipywidgets as w

from .. import viz
from ..errors import LayoutError
from .base import _Explorer, _error_html, _picture, _img_html, _ok_html, _svg_html, precomputed_explorer

__all__ = ["LdmatrixExplorer", "TmaExplorer", "GmmaDescriptorExplorer"]


def _ldmatrix_atoms():
    """MMA atoms offered by LdmatrixExplorer: the 16-bit SM80 ones ldmatrix feeds, and two it cannot."""
    from ..cute.atom import make_mma_atom
    from ..nvgpu import warp, warpgroup
    ops = [warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)), warp.MmaF16BF16Op("f16", "f32", (16, 8, 8)),
           warp.MmaF16BF16Op("bf16", "f32", (16, 8, 16)), warp.MmaTF32Op((16, 8, 8)),
           warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16))]
    return {make_mma_atom(op).name: op for op in ops}


class LdmatrixExplorer(_Explorer):
    """Which ldmatrix atom feeds an MMA operand, which thread supplies which row address, or why none fits.

    Controls: the MMA atom, the operand (A or B), the value repetition (the tiled MMA's tile is the atom's
    M, N, K times ``rep``, CuTe's permutation, e.g. the value layout (1,2,1) of CUTLASS's SM80 GEMM examples), the
    majorness of the operand tile in shared memory, and optionally a forced x1 / x2 / x4.
    :func:`layoutlab.nvgpu.ldmatrix.select_ldmatrix` decides; its reasoning is shown, or its error (e.g. "TiledCopy
    uses too few vals for selected CopyAtom" for a forced x4 on an x2 fragment, or a tf32 atom). The picture is
    :func:`layoutlab.viz.draw_tiled_copy` of the chosen copy: in Src, the thread labelled on a row of 8
    elements is the lane that supplies that row's address.

    SM80_16x8x16, operand A, rep (1,2,1): K-major gives ``SM75_U32x4_LDSM_N``, MN-major ``SM75_U16x8_LDSM_T``.

    >>> LdmatrixExplorer(atom="SM80_16x8x16_F32F16F16F32_TN", operand="A", repeat="1,2,1", major="K").selection.name
    'SM75_U32x4_LDSM_N'
    """

    REPEATS = ("1,1,1", "1,2,1", "2,1,1", "1,1,2", "2,2,1")

    def __init__(self, atom="SM80_16x8x16_F32F16F16F32_TN", operand="A", repeat="1,1,1", major="K",
                 matrices="auto"):
        self.atoms = _ldmatrix_atoms()
        names = list(self.atoms)
        self.atom = w.Dropdown(options=names, value=atom if atom in names else names[0], description="MMA atom",
                               layout=w.Layout(width="32em"))
        self.operand = w.ToggleButtons(options=["A", "B"], value=operand, description="operand")
        self.repeat = w.Dropdown(options=list(self.REPEATS), value=repeat, description="value rep")
        self.major = w.ToggleButtons(options=["K", "MN"], value=major, description="smem major")
        self.matrices = w.Dropdown(options=["auto", 1, 2, 4], value=matrices, description="x")
        self.choice = w.HTML()
        self.picture = _picture()
        self.selection = None
        super().__init__([self.atom, w.HBox([self.operand, self.repeat]), w.HBox([self.major, self.matrices]),
                          self.choice, self.picture])
        for control in (self.atom, self.operand, self.repeat, self.major, self.matrices):
            control.observe(lambda _c: self._changed(), names="value")
        self._changed()

    def _changed(self):
        if self._guard(self._update) is None:
            self.selection = None
            self.choice.value = ""

    def _update(self):
        from ..cute.layout import Layout
        from ..nvgpu.ldmatrix import select_ldmatrix
        from ..cute.tiled import make_tiled_mma
        op = self.atoms[self.atom.value]
        m, n, k = op.shape_mnk
        rm, rn, rk = (int(x) for x in self.repeat.value.split(","))
        tiled = make_tiled_mma(op, (1, 1, 1), (m * rm, n * rn, k * rk))
        rows = m * rm if self.operand.value == "A" else n * rn
        cols = k * rk
        # the operand tile (M or N, K): K-major = K contiguous (row-major), MN-major = column-major
        smem = Layout((rows, cols), (cols, 1) if self.major.value == "K" else (1, rows))
        forced = None if self.matrices.value == "auto" else int(self.matrices.value)
        selection = select_ldmatrix(tiled, self.operand.value, smem, num_matrices=forced)
        self.selection = selection
        self.choice.value = _ok_html(f"smem tile {smem}\n{selection.reasoning}")
        self.picture.value = _svg_html(viz.draw_tiled_copy(selection.tiled_copy))
        return selection

    def static(self, operands=("A", "B"), repeats=("1,1,1", "1,2,1", "2,1,1"), majors=("K", "MN")):
        """A kernel-free version for the static site: operand, value repetition and smem majorness switch
        precomputed frames in the browser (for the current MMA atom; ``x`` = auto). Each frame shows
        ``select_ldmatrix``'s reasoning and the chosen copy's Src/Dst picture (or the refusal)."""
        op = self.atoms[self.atom.value]
        name = self.atom.value

        def frame(operand, repeat, major):
            from ..cute.layout import Layout
            from ..nvgpu.ldmatrix import select_ldmatrix
            from ..cute.tiled import make_tiled_mma
            m, n, k = op.shape_mnk
            rm, rn, rk = (int(x) for x in repeat.split(","))
            rows, cols = (m * rm if operand == "A" else n * rn), k * rk
            smem = Layout((rows, cols), (cols, 1) if major == "K" else (1, rows))
            try:
                sel = select_ldmatrix(make_tiled_mma(op, (1, 1, 1), (m * rm, n * rn, k * rk)), operand, smem)
            except LayoutError as err:
                return w.HTML(_error_html(err))
            fig = viz.draw_tiled_copy(sel.tiled_copy)
            return w.HTML(_img_html(fig, caption=f"{name}, smem tile {smem}\n{sel.reasoning}"))

        return precomputed_explorer([
            ("operand", w.ToggleButtons(options=list(operands), description="operand")),
            ("repeat", w.Dropdown(options=list(repeats), description="value rep")),
            ("major", w.ToggleButtons(options=list(majors), description="smem major")),
        ], frame)


def _tma_frame(dtype, swizzle, inner_bytes, start_row, rows=8):
    """One TmaExplorer picture: a (inner x rows) box of a 2-D tensor two boxes wide and 16 rows high,
    starting at row ``start_row``; or the rule of cuTensorMapEncodeTiled that the box breaks."""
    from ..nvgpu.tma import TMA_DATA_TYPES, encode_tiled, smem_alignment
    esize = TMA_DATA_TYPES[dtype][0]
    inner = max(inner_bytes // esize, 1)
    tm = encode_tiled(dtype, (2 * inner, 16), (2 * inner * esize,), (inner, rows), swizzle=swizzle)
    fig = viz.draw_tma_box(tm, (0, start_row), labels=False)
    line = (f"boxDim = ({inner}, {rows}) {dtype}, swizzle {swizzle}: {tm.box_bytes} bytes per copy "
            f"(the expect-tx count); smem buffer alignment {smem_alignment(swizzle)} B")
    return fig, line


class TmaExplorer(_Explorer):
    """Element type, swizzle mode, the box's inner extent in bytes and its first row -> where the box's
    bytes land in shared memory (:func:`layoutlab.viz.draw_tma_box`), or the tensor-map rule it breaks
    (``layoutlab.nvgpu.tma.encode_tiled``'s message, e.g. a 256-byte inner box with the 128-byte swizzle).
    The tensor is 16 rows high, so a box starting at row 12 is half outside: its lower rows are the fill.

    >>> ex = TmaExplorer(dtype="f16", swizzle="128B", inner_bytes=128)
    >>> "1024 bytes per copy" in ex.summary.value
    True
    >>> ex.inner.value = 256                  # a 256-byte inner box breaks the 128-byte swizzle's rule
    >>> "must be &lt;= the swizzle span 128 bytes" in ex.message.value
    True
    """

    def __init__(self, dtype="f16", swizzle="128B", inner_bytes=128, start_row=0):
        self.dtype = w.Dropdown(options=["u8", "f16", "f32", "f64"], value=dtype, description="type")
        self.swizzle = w.Dropdown(options=["none", "32B", "64B", "128B"], value=swizzle, description="swizzle")
        self.inner = w.SelectionSlider(options=[8, 16, 32, 64, 128, 256], value=inner_bytes,
                                       description="inner bytes")
        self.start = w.IntSlider(value=start_row, min=0, max=12, step=4, description="first row")
        self.summary = w.HTML()
        self.picture = _picture()
        super().__init__([w.HBox([self.dtype, self.swizzle]), w.HBox([self.inner, self.start]), self.summary,
                          self.picture])
        for c in (self.dtype, self.swizzle, self.inner, self.start):
            c.observe(lambda _c: self._guard(self._update), names="value")
        self._guard(self._update)

    def _update(self):
        fig, line = _tma_frame(self.dtype.value, self.swizzle.value, self.inner.value, self.start.value)
        self.picture.value = _svg_html(fig)
        self.summary.value = _ok_html(line)

    def static(self, dtypes=("f16", "f32"), swizzles=("none", "32B", "64B", "128B"),
               inner_bytes=(32, 64, 128, 256)):
        """Kernel-free version for the website: element type, swizzle and inner box bytes switch
        precomputed frames (2 x 4 x 4 = 32 by default); a box that breaks a rule shows the message."""
        def frame(dtype, swizzle, inner):
            try:
                fig, line = _tma_frame(dtype, swizzle, inner, 0)
            except LayoutError as err:
                return w.HTML(_error_html(err))
            return w.HTML(_img_html(fig, caption=line))

        return precomputed_explorer([
            ("dtype", w.ToggleButtons(options=list(dtypes), description="type")),
            ("swizzle", w.ToggleButtons(options=list(swizzles), description="swizzle")),
            ("inner", w.SelectionSlider(options=list(inner_bytes), value=128 if 128 in inner_bytes
                                        else inner_bytes[0], description="inner bytes")),
        ], frame)


_GMMA_DTYPES = {"f16/bf16": 16, "tf32": 32, "e4m3/s8": 8}
_GMMA_SWIZZLES = ("INTERLEAVE", "B32", "B64", "B128")


def _gmma_frame(major, swizzle, dtype, n=64):
    """(text, [figures]) for one choice: the B operand (n x one wgmma's K) of that atom, first k-block,
    or the refusal."""
    from ..nvgpu.gmma import gmma_k_block_descs, wgmma_k
    from ..nvgpu.warpgroup import make_smem_layout_atom
    bits = _GMMA_DTYPES[dtype]
    kind = f"{major}_{'INTER' if swizzle == 'INTERLEAVE' else 'SW' + swizzle[1:]}"
    atom = make_smem_layout_atom(kind, bits)
    k = max(wgmma_k(bits), atom.outer[1].size()) if major == "K" else wgmma_k(bits)
    mn = max(n, atom.outer[0].size()) if major == "MN" else n
    tile = atom.tile_to_shape((mn, k), (0, 1) if major == "K" else (1, 0))
    d = gmma_k_block_descs(major, tile, bits)[0]
    text = (f"B tile {mn} x {k} ({bits}-bit) from {kind}: {tile}\nfirst k-block's descriptor "
            f"(buffer at address 0):\n{d}")
    return text, [viz.draw_gmma_descriptor(d), viz.draw_gmma_canonical(major, swizzle, bits)]


class GmmaDescriptorExplorer(_Explorer):
    """Majorness, swizzle mode and element type -> the descriptor of a B tile built from that GMMA atom, its
    64 bits, and the canonical layout it describes; or the refusal (MN-major needs a 16-bit type).

    ``GmmaDescriptorExplorer("MN", "B128", "tf32")`` shows why tf32 cannot be MN-major.

    >>> "0x4000004000010000" in GmmaDescriptorExplorer("K", "B128", "f16/bf16").summary.value
    True
    >>> "must be K-major" in GmmaDescriptorExplorer("MN", "B128", "tf32").message.value
    True
    """

    def __init__(self, major="K", swizzle="B128", dtype="f16/bf16"):
        self.major = w.ToggleButtons(options=["K", "MN"], value=major, description="major")
        self.swizzle = w.Dropdown(options=list(_GMMA_SWIZZLES), value=swizzle, description="swizzle")
        self.dtype = w.Dropdown(options=list(_GMMA_DTYPES), value=dtype, description="type")
        self.summary = w.HTML()
        self.bits = _picture()
        self.canon = _picture()
        super().__init__([w.HBox([self.major, self.swizzle, self.dtype]), self.summary, self.bits, self.canon])
        for control in (self.major, self.swizzle, self.dtype):
            control.observe(lambda _c: self._guard(self._update), names="value")
        self._guard(self._update)

    def _update(self):
        self.bits.value, self.canon.value, self.summary.value = "", "", ""
        text, (bits_fig, canon_fig) = _gmma_frame(self.major.value, self.swizzle.value, self.dtype.value)
        self.summary.value = _ok_html(text)
        self.bits.value = _svg_html(bits_fig)
        self.canon.value = _svg_html(canon_fig)

    def static(self):
        """A kernel-free version for the website: 2 x 4 x 3 precomputed frames (refusals included)."""
        def frame(major, swizzle, dtype):
            try:
                text, figs = _gmma_frame(major, swizzle, dtype)
            except LayoutError as err:
                return w.HTML(_error_html(err))
            return w.HTML(_ok_html(text) + "".join(_img_html(f) for f in figs))

        return precomputed_explorer([
            ("major", w.ToggleButtons(options=["K", "MN"], description="major")),
            ("swizzle", w.Dropdown(options=list(_GMMA_SWIZZLES), value="B128", description="swizzle")),
            ("dtype", w.Dropdown(options=list(_GMMA_DTYPES), description="type")),
        ], frame)
