"""layoutlab.viz: every picture on small cases, labels checked against the layout definitions (PTX fragment
formulas, brute-force evaluation) and against the CuTe DSL's own print_latex / print_latex_tv."""

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from layoutlab import Layout, LayoutError, parse_layout, viz
from layoutlab.dsl import HAVE_DSL, SKIP_REASON, dsl_eval

WGMMA_C = "((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"


def cell_texts(panel):
    """{(m, n): text} of the per-cell labels of one grid of a picture."""
    return dict(panel.cell_labels)


def bold_cells(panel):
    return set(panel.bold_cells)


def cell_rgb(panel):
    """(rows, cols, 3) floats of the painted cells."""
    out = np.zeros((panel.rows, panel.cols, 3))
    for (r, c), h in panel.cell_colors.items():
        out[r, c] = [int(h[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    return out


def colex(index, shape):
    """Natural coordinate of ``index`` in a flat shape (first mode fastest), written out independently."""
    coord = []
    for extent in shape:
        coord.append(index % extent)
        index //= extent
    return coord


# ------------------------------------------------------------------ TV layouts vs the PTX fragment figures

def wgmma_c_owner(m, n):
    """PTX wgmma m64nNk16 f32 accumulator: warp w owns rows 16w..16w+15; lane l = 4*g + q holds rows
    g and g+8, columns 8j + 2q and 8j + 2q + 1; register index i = 4j + 2*(row half) + (column parity)."""
    w, r = divmod(m, 16)
    half, g = divmod(r, 8)
    j, c = divmod(n, 8)
    q, parity = divmod(c, 2)
    return 32 * w + 4 * g + q, 4 * j + 2 * half + parity


def test_wgmma_accumulator_cells_match_ptx_figure():
    thread, value = viz.tv_cell_owners(parse_layout(WGMMA_C), (64, 64))
    for m in range(64):
        for n in range(64):
            assert (thread[m, n], value[m, n]) == wgmma_c_owner(m, n), (m, n)


def test_wgmma_accumulator_picture_labels():
    fig = viz.draw_tv_layout(parse_layout(WGMMA_C), (64, 64), labels=True)
    assert isinstance(fig, viz.SvgFigure)
    texts = cell_texts(fig.axes[0])
    assert texts[(0, 2)] == "T1\nV0"        # seed 000: T1 V0 -> (0, 2)
    assert texts[(1, 0)] == "T4\nV0"
    assert texts[(16, 0)] == "T32\nV0"
    assert texts[(0, 8)] == "T0\nV4"
    for (m, n), text in texts.items():
        t, v = wgmma_c_owner(m, n)
        assert text == f"T{t}\nV{v}"
    assert len(texts) == 64 * 64
    rgb = cell_rgb(fig.axes[0])
    assert np.allclose(rgb[0, 2], viz.TV_COLORS[1], atol=1 / 255)
    assert np.allclose(rgb[16, 0], viz.TV_COLORS[0], atol=1 / 255)   # thread 32 -> colour 32 % 8 = 0


def test_sm80_accumulator_labels_and_highlight():
    tv = parse_layout("((4,8),(2,2)):((32,1),(16,8))")
    fig = viz.draw_tv_layout(tv, (16, 8), highlight_threads={5})
    texts = cell_texts(fig.axes[0])
    for m in range(16):
        for n in range(8):
            lane = 4 * (m % 8) + n // 2                 # PTX m16n8 C fragment: c_i at (g + 8*(i>=2), 2q + i%2)
            reg = 2 * (m // 8) + n % 2
            assert texts[(m, n)] == f"T{lane}\nV{reg}"
    rgb = cell_rgb(fig.axes[0])
    owned = {(1, 2), (1, 3), (9, 2), (9, 3)}            # thread 5: g = 1, q = 1
    for m in range(16):
        for n in range(8):
            full = np.allclose(rgb[m, n], viz.TV_COLORS[(4 * (m % 8) + n // 2) % 8], atol=1 / 255)
            assert full == ((m, n) in owned), (m, n)
    assert bold_cells(fig.axes[0]) == owned


def test_inverse_picture_lists_mn_per_thread_value():
    tv = parse_layout("((4,8),(2,2)):((32,1),(16,8))")
    fig = viz.draw_tv_layout(tv, (16, 8), inverse=True)
    texts = cell_texts(fig.axes[0])
    assert texts[(1, 0)] == "0,2"      # (t, v) = (1, 0) -> (m, n) = (0, 2)
    assert texts[(4, 2)] == "9,0"      # (4, 2) -> g = 1, row 1 + 8
    assert len(texts) == 32 * 4


def test_broadcast_cells_show_first_thread_like_print_latex_tv():
    thread, value = viz.tv_cell_owners(parse_layout("(4,2):(0,1)"), (2, 1))
    assert thread.tolist() == [[0], [0]] and value.tolist() == [[0], [1]]


def test_tv_errors():
    with pytest.raises(LayoutError, match="outside the 8x8 tile"):
        viz.draw_tv_layout(parse_layout(WGMMA_C), (8, 8))
    with pytest.raises(LayoutError, match="rank 2"):
        viz.draw_tv_layout(parse_layout("(2,2,2):(1,2,4)"), (8, 1))
    with pytest.raises(LayoutError, match="pair"):
        viz.draw_tv_layout(parse_layout("(2,2):(1,2)"), (4,))


# ------------------------------------------------------------------ plain layouts

def test_draw_layout_row_major_and_nested():
    texts = cell_texts(viz.draw_layout(parse_layout("(4,8):(8,1)")).axes[0])
    assert all(texts[(m, n)] == str(8 * m + n) for m in range(4) for n in range(8))
    texts = cell_texts(viz.draw_layout(parse_layout("(4,(2,4)):(2,(1,8))")).axes[0])
    assert all(texts[(m, n)] == str(2 * m + (n % 2) + 8 * (n // 2)) for m in range(4) for n in range(8))


def test_draw_layout_rank1_is_a_column_and_rank3_refused():
    texts = cell_texts(viz.draw_layout("8:3").axes[0])
    assert texts == {(i, 0): str(3 * i) for i in range(8)}
    with pytest.raises(LayoutError, match="rank 3"):
        viz.draw_layout(parse_layout("(2,2,2):(1,2,4)"))
    with pytest.raises(LayoutError, match="color_by"):
        viz.draw_layout("(2,2):(1,2)", color_by="rainbow")


def test_large_tiles_drop_labels_unless_forced():
    tv = parse_layout("((4,8,4,2),(2,2,32)):((256,1,16,64),(128,8,1024))")
    fig = viz.draw_tv_layout(tv, (128, 256))
    assert cell_texts(fig.axes[0]) == {}
    assert len(fig.axes[0].texts) <= 40          # only the index labels: redraw stays cheap


def test_labels_render_in_png_and_svg():
    """The glyph-outline labels really reach the output: a labelled picture differs from an unlabelled one."""
    tv = parse_layout("((4,8),(2,2)):((32,1),(16,8))")
    with_labels = viz.figure_to_png(viz.draw_tv_layout(tv, (16, 8), labels=True))
    without = viz.figure_to_png(viz.draw_tv_layout(tv, (16, 8), labels=False))
    assert with_labels != without and len(with_labels) > len(without)


small_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3)


@settings(max_examples=40, deadline=None)
@given(rows=small_shapes, cols=small_shapes, data=st.data())
def test_draw_layout_matches_brute_force(rows, cols, data):
    strides_r = data.draw(st.lists(st.integers(0, 9), min_size=len(rows), max_size=len(rows)))
    strides_c = data.draw(st.lists(st.integers(0, 9), min_size=len(cols), max_size=len(cols)))
    layout = Layout((tuple(rows), tuple(cols)), (tuple(strides_r), tuple(strides_c)))
    texts = cell_texts(viz.draw_layout(layout, labels=True).axes[0])
    for m in range(int(np.prod(rows))):
        for n in range(int(np.prod(cols))):
            expect = sum(c * d for c, d in zip(colex(m, rows), strides_r)) + \
                sum(c * d for c, d in zip(colex(n, cols), strides_c))
            assert texts[(m, n)] == str(expect)


@settings(max_examples=30, deadline=None)
@given(perm_seed=st.integers(0, 10_000), shape=st.lists(st.sampled_from([2, 4]), min_size=2, max_size=5))
def test_tv_owners_invert_random_bijections(perm_seed, shape):
    """A random compact TV layout (permuted strides) is a bijection: every cell has exactly the (t, v) that
    maps to it, checked by evaluating the layout forwards, mode by mode, in the test."""
    rng = np.random.default_rng(perm_seed)
    order = rng.permutation(len(shape))
    strides = [0] * len(shape)
    acc = 1
    for i in order:
        strides[i] = acc
        acc *= shape[i]
    split = 1 + int(rng.integers(0, len(shape) - 1))
    tv = Layout((tuple(shape[:split]), tuple(shape[split:])), (tuple(strides[:split]), tuple(strides[split:])))
    total = int(np.prod(shape))
    m_ext = 2 ** int(rng.integers(0, int(np.log2(total)) + 1))
    thread, value = viz.tv_cell_owners(tv, (m_ext, total // m_ext))
    nt = int(np.prod(shape[:split]))
    for t in range(nt):
        for v in range(total // nt):
            off = sum(c * d for c, d in zip(colex(t, shape[:split]), strides[:split])) + \
                sum(c * d for c, d in zip(colex(v, shape[split:]), strides[split:]))
            assert (thread[off % m_ext, off // m_ext], value[off % m_ext, off // m_ext]) == (t, v)


# ------------------------------------------------------------------ swizzles and banks

def test_draw_swizzle_banks_follow_the_xor():
    from layoutlab.cute.swizzle import Swizzle
    fig = viz.draw_swizzle(Swizzle(3, 3, 3), element_bytes=2, labels=True)
    logical, physical = fig.axes
    texts = cell_texts(logical)
    assert len(texts) == 8 * 64
    for m in range(8):
        for n in range(64):
            o = 64 * m + n
            phys = o ^ (((o >> 6) & 7) << 3)          # bits 6..8 (the row) XORed into bits 3..5 (16-byte chunk)
            assert texts[(m, n)] == str(phys * 2 // 4 % 32)
    ptexts = cell_texts(physical)
    assert ptexts[(1, 8)] == "1,0"                    # logical (1,0): 64 ^ 8 = 72 = row 1, slot 8
    assert ptexts[(1, 0)] == "1,8"


def test_draw_swizzle_composed_equals_bare_swizzle():
    from layoutlab.cute.swizzle import ComposedLayout, Swizzle
    # A composed (smem) layout's swizzle acts on byte addresses, a bare one on element offsets: with 4-byte
    # elements, byte-level Sw<2,4,3> is element-level Sw<2,2,3> (two more low bits: the byte in the element).
    composed = ComposedLayout(Swizzle(2, 4, 3), 0, Layout((4, 32), (32, 1)))
    a = cell_texts(viz.draw_swizzle(composed, 4, labels=True).axes[0])
    b = cell_texts(viz.draw_swizzle(Swizzle(2, 2, 3), 4, shape=(4, 32), labels=True).axes[0])
    assert a == b and len(a) == 128
    with pytest.raises(LayoutError, match="element_bytes"):
        viz.draw_swizzle(Swizzle(2, 2, 3), 3)


def test_bank_map_ldmatrix_phase_conflicts():
    from layoutlab.cute.swizzle import Swizzle
    rows = [(t, 0) for t in range(8)]
    plain = viz.draw_bank_map(parse_layout("(8,64):(64,1)"), 2, rows, access_bytes=16)
    assert plain.bank_summary == {"wavefronts": 8, "ideal": 1, "worst_ways": 8}
    assert plain.panels[0].conflicts == {b: 8 for b in range(4)}    # banks 0..3, each asked for 8 words
    swizzled = viz.draw_bank_map(Swizzle(3, 3, 3), 2, rows, access_bytes=16)
    assert swizzled.bank_summary == {"wavefronts": 1, "ideal": 1, "worst_ways": 1}
    assert swizzled.panels[0].conflicts == {}
    with pytest.raises(LayoutError, match="outside"):
        viz.draw_bank_map(Swizzle(3, 3, 3), 2, [(9, 0)])


def test_bank_map_column_of_fp32_tile_is_32_way():
    fig = viz.draw_bank_map(parse_layout("(32,32):(32,1)"), 4, [(t, 0) for t in range(32)])
    assert fig.bank_summary["worst_ways"] == 32 and fig.bank_summary["wavefronts"] == 32


def test_bank_map_has_a_legend_for_its_thread_colours_and_conflicts():
    fig = viz.draw_bank_map(parse_layout("(8,64):(64,1)"), 2, [(t, 0) for t in range(3)], access_bytes=16)
    (legend,) = fig.legends
    names = [t.get_text() for t in legend.get_texts()]
    assert names[:3] == [f"t mod 8 = {k}" for k in range(3)]
    assert "k-way" in names[-1] and "the thread reading it" in legend.get_title().get_text()


# ------------------------------------------------------------------ F2 matrices

def test_f2_matrix_labels_and_bits():
    from layoutlab.linear.layout import LinearLayout
    bases = [("register", [[0, 1], [1, 0]]), ("lane", [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]]), ("warp", [[8, 0]])]
    ll = LinearLayout.from_bases(bases, ["dim0", "dim1"])
    fig = viz.draw_f2_matrix(ll)
    ax = fig.axes[0]
    ann = [str(t) for t in ax.texts]
    assert ann[:8] == ["reg0", "reg1", "lane0", "lane1", "lane2", "lane3", "lane4", "warp0"]
    assert ann[8:] == ["dim0.0", "dim0.1", "dim0.2", "dim0.3", "dim1.0", "dim1.1", "dim1.2", "dim1.3"]
    texts = cell_texts(ax)
    columns = [v for _, vs in bases for v in vs]
    for j, (d0, d1) in enumerate(columns):
        for i in range(8):
            bit = (d0 >> i) & 1 if i < 4 else (d1 >> (i - 4)) & 1
            assert texts[(i, j)] == str(bit), (i, j)


def test_f2_matrix_from_numpy_and_errors():
    fig = viz.draw_f2_matrix(np.eye(3, dtype=int))
    assert cell_texts(fig.axes[0])[(1, 1)] == "1"
    with pytest.raises(LayoutError, match="LinearLayout"):
        viz.draw_f2_matrix("not a layout")


# ------------------------------------------------------------------ tiled MMA, tiled copy, GEMM tiling

def test_tiled_mma_panels_match_ptx_fragments():
    from layoutlab.nvgpu.warp import MmaF16BF16Op
    from layoutlab.cute.atom import make_mma_atom
    atom = make_mma_atom(MmaF16BF16Op("f16", "f32", (16, 8, 16)))
    fig = viz.draw_tiled_mma(atom)
    b_ax, a_ax, c_ax = fig.axes
    a, b, c = cell_texts(a_ax), cell_texts(b_ax), cell_texts(c_ax)
    # PTX m16n8k16 f16 A: a_i at row g + 8*((i//2)%2), col 2q + i%2 + 8*(i//4)
    for lane in range(32):
        g, q = divmod(lane, 4)
        for i in range(8):
            assert a[(g + 8 * ((i // 2) % 2), 2 * q + i % 2 + 8 * (i // 4))] == f"T{lane}\nV{i}"
        for i in range(4):   # B: b_i at k = 2q + i%2 + 8*(i//2), n = g; drawn with k down, n right
            assert b[(2 * q + i % 2 + 8 * (i // 2), g)] == f"T{lane}\nV{i}"
        for i in range(4):
            assert c[(g + 8 * (i // 2), 2 * q + i % 2)] == f"T{lane}\nV{i}"
    assert len(a) == 256 and len(b) == 128 and len(c) == 128


def test_tiled_copy_and_errors():
    src = parse_layout("(8,8):(1,8)")                 # thread t holds row m = t
    dst = parse_layout("((4,2),8):((2,1),8)")
    fig = viz.draw_tiled_copy(src=src, dst=dst, tile_mn=(8, 8))
    s, d = (cell_texts(ax) for ax in fig.axes)
    assert s[(3, 5)] == "T3\nV5"
    # dst: t = t0 + 4 t1, v -> offset 2 t0 + t1 + 8 v -> (m, n) = (offset % 8, offset // 8)
    for t in range(8):
        for v in range(8):
            off = 2 * (t % 4) + (t // 4) + 8 * v
            assert d[(off % 8, off // 8)] == f"T{t}\nV{v}"
    with pytest.raises(LayoutError, match="src="):
        viz.draw_tiled_copy(src=src)


def test_gemm_tiling():
    fig = viz.draw_gemm_tiling(256, 256, 64, (128, 128, 8), thread_mn=(16, 16))
    assert "2x2 CTAs, 8 k-tiles" in fig._suptitle.get_text()
    assert "16x16 threads of 8x8" in fig._suptitle.get_text()
    labels = [t for t in fig.all_texts() if re.fullmatch(r"k\d+", t)]
    assert labels == ["k0", "k0", "k7", "k7"]      # k-tiles 14 px apart: only the first and last, on A and on B
    with pytest.raises(LayoutError, match="divide"):
        viz.draw_gemm_tiling(256, 256, 64, (128, 128, 8), thread_mn=(3, 16))
    with pytest.raises(LayoutError, match="outside"):
        viz.draw_gemm_tiling(256, 256, 64, (128, 128, 8), block=(2, 0))


def test_figures_render_to_png_and_svg():
    fig = viz.draw_layout("(2,2):(1,2)")
    assert viz.figure_to_png(fig)[:4] == b"\x89PNG"
    assert "<svg" in viz.figure_to_svg(fig)
    assert fig._repr_svg_().startswith("<svg") and "overflow-x:auto" in fig._repr_html_()


# ------------------------------------------------------------------ differential: the CuTe DSL's own pictures

TV_CASES = [
    ("((4,8),(2,2)):((32,1),(16,8))", (16, 8)),
    ("((4,8),(2,2,2)):((32,1),(16,8,128))", (16, 16)),
    ("((4,8),(2,2)):((16,1),(8,64))", (8, 16)),
    ("((4,8,4),(2,2,2)):((128,1,16),(64,8,512))", (64, 16)),
    ("(32,(2,4)):(2,(1,64))", (64, 4)),
    ("((2,4),(2,2)):((0,1),(4,8))", (4, 4)),          # broadcast: two threads per cell, first one shown
    ("(8,(4,2)):(4,(1,32))", (32, 2)),
]
LAYOUT_CASES = ["(4,(2,4)):(2,(1,8))", "(3,5):(5,1)", "(8,1):(2,0)", "((2,2),(2,3)):((1,6),(2,12))"]


def _dsl_layout(text):
    layout = parse_layout(text)
    return f"cute.make_layout({layout.shape}, stride={layout.stride})"


@pytest.mark.dsl
@pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON or "no DSL")
def test_pictures_match_cute_dsl_print_latex():
    snippets = [f"from cutlass.cute.viz import print_latex_tv\nbuf = []\n"
                f"print_latex_tv({_dsl_layout(tv)}, {tile}, render_func=buf.append)\nbuf[0]" for tv, tile in TV_CASES]
    snippets += [f"from cutlass.cute.viz import print_latex\nbuf = []\n"
                 f"print_latex({_dsl_layout(x)}, render_func=buf.append)\nbuf[0]" for x in LAYOUT_CASES]
    results = dsl_eval(snippets)
    node_tv = re.compile(r"\\path\[fill=\{rgb,255:red,(\d+);green,(\d+);blue,(\d+)\}\] [^;]*;\s*"
                         r"\\node at \((\d+),(\d+)\) \{\\shortstack\{T(\d+) \\\\ V(\d+)\}\}")
    for (tv, tile), res in zip(TV_CASES, results):
        assert res.ok, res.message
        dsl = {(int(m), int(n)): (f"T{t}\nV{v}", (int(r), int(g), int(b)))
               for r, g, b, m, n, t, v in node_tv.findall(res.value)}
        fig = viz.draw_tv_layout(parse_layout(tv), tile, labels=True)
        ours = cell_texts(fig.axes[0])
        assert {k: v[0] for k, v in dsl.items()} == ours, tv
        rgb = np.round(cell_rgb(fig.axes[0]) * 255).astype(int)
        for (m, n), (_, colour) in dsl.items():
            assert tuple(rgb[m, n]) == colour, (tv, m, n)
    node = re.compile(r"\\node\[fill=[^\]]*\] at \((\d+),(\d+)\) \{(\d+)\}")
    for text, res in zip(LAYOUT_CASES, results[len(TV_CASES):]):
        assert res.ok, res.message
        dsl = {(int(m), int(n)): v for m, n, v in node.findall(res.value)}
        assert cell_texts(viz.draw_layout(parse_layout(text), labels=True).axes[0]) == dsl, text
    # the DSL's print_latex means to draw a rank-1 layout as the column (8,1):(2,0) (it appends 1:0) but
    # raises a TypeError in product_each; ours draws that column
    assert cell_texts(viz.draw_layout(parse_layout("8:2"), labels=True).axes[0]) == \
        {(int(m), int(n)): v for m, n, v in node.findall(results[len(TV_CASES) + 2].value)}


def test_linear_layout_drawn_as_tv_matches_cute_tv_layout():
    """Seed 001's blocked layout as a LinearLayout and as the CuTe TV layout ((8,4,2),(2,2)):((32,2,8),(16,1))
    give the same picture; so do TV layouts converted by linear.tv_layout_to_linear_layout."""
    from layoutlab.linear.layout import LinearLayout
    from layoutlab.linear.cute import tv_layout_to_linear_layout
    blocked = LinearLayout.from_bases(
        [("register", [[0, 1], [1, 0]]), ("lane", [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]]), ("warp", [[8, 0]])],
        ["dim0", "dim1"])
    ours = viz.linear_tv_owners(blocked)
    cute = viz.tv_cell_owners(parse_layout("((8,4,2),(2,2)):((32,2,8),(16,1))"), (16, 16))
    assert [g.tolist() for g in ours] == [g.tolist() for g in cute]
    texts = cell_texts(viz.draw_tv_layout(blocked, None, labels=True).axes[0])
    assert texts[(0, 1)] == "T0\nV1" and texts[(2, 0)] == "T8\nV0"      # register0 -> dim1 1, lane3 -> dim0 2
    for text, tile in [(WGMMA_C, (64, 64)), ("((4,8),(2,2,2)):((32,1),(16,8,128))", (16, 16))]:
        tv = parse_layout(text)
        ll = tv_layout_to_linear_layout(tv, tile)
        assert [g.tolist() for g in viz.linear_tv_owners(ll)] == [g.tolist() for g in viz.tv_cell_owners(tv, tile)]
    with pytest.raises(LayoutError, match="register / lane / warp"):
        viz.draw_tv_layout(LinearLayout.identity_1d(8, "offset", "offset"), None)


def test_tile_given_as_a_row_major_layout():
    # tile (4,2):(2,1): offset o sits at m = (o // 2) % 4, n = o % 2 -- thread t of 8:1 lands at (t // 2, t % 2)
    thread, value = viz.tv_cell_owners(parse_layout("(8,1):(1,0)"), Layout((4, 2), (2, 1)))
    assert thread.tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]] and value.tolist() == [[0, 0]] * 4


def test_draw_tv_legend_names_the_colours_and_labels_the_cells():
    """chapters 1-5 fixes: a multi-thread picture with a legend; the cells are the same as draw_tv_layout's."""
    core = parse_layout("((4,8),(2,2,2)):((128,1),(64,8,512))")     # warp 0 of the WGMMA accumulator
    tile = Layout((16, 16), (1, 64))
    fig = viz.draw_tv_legend(core, tile, title="corner")
    assert len(fig.legends) == 1
    names = [t.get_text() for t in fig.legends[0].get_texts()]
    assert names == [f"t mod 8 = {k}" for k in range(8)]
    assert "T<t> V<v>" in fig.legends[0].get_title().get_text()
    # (m, n) = (0, 2) is thread 1's value 0 and (8, 1) thread 0's value 3 (offsets 128 and 8 + 64)
    thread, value = viz.tv_cell_owners(core, tile)
    assert (thread[0, 2], value[0, 2], thread[8, 1], value[8, 1]) == (1, 0, 0, 3)
    with pytest.raises(LayoutError):
        viz.draw_tv_legend(core, (8, 8))          # the tile must hold the layout
    two = viz.draw_tv_legend(Layout((2, 2), (1, 2)), (2, 2))
    assert [t.get_text() for t in two.legends[0].get_texts()] == ["t mod 8 = 0", "t mod 8 = 1"]


def test_tiled_copy_picture_has_the_thread_colour_legend():
    from layoutlab import make_layout, make_tiled_mma, nvgpu, select_ldmatrix
    tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16)))
    fig = viz.draw_tiled_copy(select_ldmatrix(tm, "A", make_layout((16, 16), stride=(16, 1))).tiled_copy)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [f"t mod 8 = {k}" for k in range(8)]
    assert "thread t holds it as its value v" in legend.get_title().get_text()
