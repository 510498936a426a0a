"""layoutlab.widgets: every explorer constructed and driven programmatically; invalid input becomes a message."""

import ipywidgets as w
import pytest

from layoutlab import LayoutError, widgets as W
from layoutlab.cute.inttuple import idx2crd


def test_layout_explorer_click_and_errors():
    ex = W.LayoutExplorer("(4,8):(8,1)")
    assert len(ex.buttons) == 32
    # buttons are row-major over the grid: (m, n) = (1, 2) is button 1*8 + 2; index m + 4n = 9, offset 8m + n
    ex.buttons[1 * 8 + 2].click()
    assert "(m,n) = (1,2)" in ex.info.value and "index 9" in ex.info.value and "offset 10" in ex.info.value
    assert ex.buttons[10].description == "10" and "offset 10" in ex.buttons[10].tooltip
    before = ex.grid.children
    ex.text.value = "(4,8):(8"                          # broken: message, old grid stays
    assert "parse_layout" in ex.message.value and "Traceback" not in ex.message.value
    assert ex.grid.children == before
    ex.text.value = "(2,2,2):(1,2,4)"
    assert "rank 3" in ex.message.value
    ex.text.value = "(4,(2,4)):(2,(1,8))"
    assert ex.message.value == ""
    ex.select(3, 5)                                    # index 3 + 4*5 = 23 -> natural (3,(1,2))
    assert idx2crd(23, (4, (2, 4))) == (3, (1, 2))
    assert "natural coordinate (3,(1,2))" in ex.info.value and "offset 23" in ex.info.value   # 6 + 1 + 16
    ex.select(9, 0)
    assert "outside the 4x8 grid" in ex.message.value


def test_layout_explorer_large_layout_is_a_picture():
    ex = W.LayoutExplorer("(32,32):(1,32)")
    assert ex.buttons == []
    image = ex.grid.children[0]
    assert isinstance(image, w.HTML) and "<svg" in image.value and "<title>(32,32):(1,32)" in image.value


def test_tv_explorer_steps_follow_seed_000():
    ex = W.TVExplorer(preset="SM90_64x64x16_F32F16F16_SS C", threads="1", values="0")
    assert "(T,V)=(1,0) -&gt; ((1,0,0),(0,0,0)) -&gt; offset 128" in ex.steps.value
    assert "= (0,2)" in ex.steps.value
    first = ex.picture.value
    ex.threads.value = "4"
    assert "offset 1 " in ex.steps.value and "= (1,0)" in ex.steps.value      # T4 V0 -> (1, 0)
    assert ex.picture.value != first
    ex.threads.value = "0"
    ex.values.value = "4"
    assert "offset 512" in ex.steps.value and "= (0,8)" in ex.steps.value    # T0 V4 -> (0, 8)
    ex.threads.value = "500"
    assert "0..127" in ex.message.value
    ex.threads.value = "x-y"
    assert "not a number" in ex.message.value
    ex.threads.value = "0-1"
    assert ex.message.value == ""


def test_tv_explorer_custom_presets_and_atom_switch():
    presets = {"col": ("(4,2):(1,4)", (4, 2)), "row": ("(4,2):(2,1)", (4, 2))}
    ex = W.TVExplorer(presets=presets, threads="all")
    steps = ex.steps.value
    assert "(T,V)=(1,0) -&gt; (1,0) -&gt; offset 1" in steps
    ex.atom.value = "row"
    assert "(T,V)=(1,0) -&gt; (1,0) -&gt; offset 2" in ex.steps.value


def test_tv_presets_come_from_the_atoms():
    presets = W.tv_presets()
    tv, tile = presets["SM90_64x64x16_F32F16F16_SS C"]
    assert str(tv) == "((4,8,4),(2,2,8)):((128,1,16),(64,8,512))" and tile == (64, 64)
    assert "SM80_16x8x16_F32F16F16F32_TN A" in presets
    tv, tile = presets["TiledMMA 2x2x1 of SM80_16x8x16_F32F16F16F32_TN C"]
    assert tile == (32, 16)
    ex = W.TVExplorer(preset="TiledMMA 2x2x1 of SM80_16x8x16_F32F16F16F32_TN C", threads="32", values="0")
    # warp 1 (threads 32..63) takes the second 16-row block of M: thread 32 value 0 -> (16, 0)
    assert "= (16,0)" in ex.steps.value and ex.message.value == ""


def test_swizzle_explorer_conflicts_and_errors():
    ex = W.SwizzleExplorer(b=3, m=3, s=3, element_bytes=2, pattern="ldmatrix")
    assert "1 wavefront(s), ideal 1 -&gt; conflict-free" in ex.summary.value
    picture = ex.placement.value
    ex.b.value = 0                                     # no swizzle: the 8 rows all start in bank 0
    assert "8 wavefront(s), ideal 1 -&gt; 8-way conflict" in ex.summary.value
    assert ex.placement.value != picture
    ex.pattern.value = "row"
    assert "conflict-free" in ex.summary.value
    ex.element_bytes.value = 4
    ex.pattern.value = "column"                        # 32 threads down 8 rows x 4 columns of fp32
    assert "8-way conflict" in ex.summary.value
    ex.b.value = 3
    ex.m.value = 2
    assert "conflict-free" in ex.summary.value
    ex.b.value = 4
    ex.s.value = 3                                     # |S| < B
    assert "|S|=3 &lt; B=4" in ex.message.value


def test_access_patterns():
    assert W.access_pattern("ldmatrix", 8, 64, 2) == ([(t, 0) for t in range(8)], 16)
    cells, nbytes = W.access_pattern("column", 8, 32, 4)
    assert cells[:9] == [(t, 0) for t in range(8)] + [(0, 1)] and nbytes == 4
    with pytest.raises(LayoutError, match="unknown pattern"):
        W.access_pattern("diagonal", 8, 8, 2)


def test_precomputed_explorer_structure():
    slider = w.SelectionSlider(options=[0, 1, 2], description="a")
    choice = w.Dropdown(options=["x", "y"], description="b")
    box = W.precomputed_explorer([("a", slider), ("b", choice)], lambda a, b: w.HTML(f"{a}{b}"))
    outer = box.frames
    assert isinstance(outer, w.Stack) and len(outer.children) == 3
    assert [[leaf.value for leaf in inner.children] for inner in outer.children] == \
        [["0x", "0y"], ["1x", "1y"], ["2x", "2y"]]
    assert len(box.links) == 4                        # one link per stack: 3 inner + 1 outer
    sources = {(link.source[0].model_id, link.source[1]) for link in box.links}
    assert sources == {(slider.model_id, "index"), (choice.model_id, "index")}
    with pytest.raises(LayoutError, match="options/index"):
        W.precomputed_explorer([("n", w.IntSlider())], lambda n: w.HTML())
    # a picture that depends on one control only is rendered once per option of that control
    calls = []
    box = W.precomputed_explorer([("a", slider), ("b", choice)], lambda a, b: w.HTML(f"{a}{b}"),
                                 (("a",), lambda a: calls.append(a) or w.HTML(f"{a}")))
    assert calls == [0, 1, 2] and [leaf.value for leaf in box.pictures[1].children] == ["0", "1", "2"]
    with pytest.raises(LayoutError, match="not controls"):
        W.precomputed_explorer([("a", slider)], (("z",), lambda z: w.HTML()))


def test_static_swizzle_and_tv_frames_differ():
    box = W.SwizzleExplorer().static(bits=(0, 3), element_sizes=(2,), patterns=("ldmatrix",))
    frames = [inner.children[0].children[0].value for inner in box.frames.children]
    assert len(frames) == 2 and frames[0] != frames[1]
    assert "8-way conflict" in frames[0] and "conflict-free" in frames[1]
    tv = W.TVExplorer(preset="SM80_16x8x8_F32F16F16F32_TN C").static(threads=[0, 5])
    texts = [frame.value for frame in tv.frames.children]
    assert "(T,V)=(5,0)" in texts[1] and texts[0] != texts[1]


def test_linear_layout_explorer_toggle_compose_invert():
    from layoutlab.linear.layout import LinearLayout
    a = LinearLayout.from_bases([("lane", [[1, 0], [2, 0], [0, 1]])], ["dim0", "dim1"])
    b = LinearLayout.from_bases([("lane", [[0, 1], [1, 0], [2, 0]])], ["dim0", "dim1"])
    ex = W.LinearLayoutExplorer(a, b)
    assert len(ex.toggles) == 9 and ex.toggles[(0, 0)].value is True
    ex.operation.value = "inverse(A)"
    assert "injective, surjective" in ex.description.value
    picture = ex.picture.value
    ex.toggle(0, 0)                                   # lane0 -> 0: no longer invertible
    assert ex.a.apply({"lane": 1}) == {"dim0": 0, "dim1": 0}
    assert "not invertible" in ex.message.value
    ex.operation.value = "A"
    assert ex.message.value == "" and ex.picture.value != picture
    ex.toggles[(0, 0)].value = True                   # clicking the button restores the bit
    assert ex.a.apply({"lane": 1}) == {"dim0": 1, "dim1": 0}
    ex.operation.value = "invert_and_compose(A, B)"   # C with A(x) = B(C(x))
    c = ex.result()
    for x in range(8):
        assert b.apply(c.apply({"lane": x})) == a.apply({"lane": x})
    ex.toggle(7, 0)
    assert "outside the 3x3 matrix" in ex.message.value


def test_ldmatrix_explorer_choices_and_errors():
    ex = W.LdmatrixExplorer(atom="SM80_16x8x16_F32F16F16F32_TN", operand="A", repeat="1,2,1", major="K")
    assert ex.selection.name == "SM75_U32x4_LDSM_N" and ex.message.value == ""      # seed 002
    picture = ex.picture.value
    ex.major.value = "MN"
    assert ex.selection.name == "SM75_U16x8_LDSM_T" and ex.picture.value != picture
    ex.operand.value = "B"                             # B of 16x8x16 with N repeated twice: 16x16 -> x4
    assert ex.selection.name == "SM75_U16x8_LDSM_T"
    ex.repeat.value = "1,1,1"                          # B 8x16: 4 values per thread -> 2 matrices -> x2
    assert ex.selection.name == "SM75_U16x4_LDSM_T"
    ex.matrices.value = 4                              # forcing x4 on a 2-matrix fragment
    assert "too few vals" in ex.message.value and ex.selection is None
    ex.matrices.value = "auto"
    ex.atom.value = "SM80_16x8x8_F32TF32TF32F32_TN"
    assert "16-bit" in ex.message.value
    # in the Src picture, thread t supplies the address of a row: 8 consecutive elements share its label
    ex.atom.value = "SM80_16x8x16_F32F16F16F32_TN"
    ex.operand.value = "A"
    ex.major.value = "K"
    assert ex.selection.name == "SM75_U32x4_LDSM_N"


def test_linear_layout_explorer_shows_distributed_layout_on_its_tile():
    from layoutlab.linear.layout import LinearLayout
    blocked = LinearLayout.from_bases(
        [("register", [[0, 1], [1, 0]]), ("lane", [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]]), ("warp", [[8, 0]])],
        ["dim0", "dim1"])
    ex = W.LinearLayoutExplorer(blocked)
    assert "<svg" in ex.tile.value and ex.tile.layout.display is None
    before = ex.tile.value
    ex.toggle(4, 1)                                   # reg1 now also flips dim1 bit 0
    assert ex.tile.value != before
    ex.operation.value = "inverse(A)"                 # inputs dim0/dim1: no tile picture, no error
    assert ex.message.value == "" and ex.tile.layout.display == "none"


def _site_notes(box):
    """The site-only notes (HTML widgets with class ll-live-note) anywhere in a widget tree."""
    found, stack = [], [box]
    while stack:
        x = stack.pop()
        if isinstance(x, w.HTML) and "ll-live-note" in x.value:
            found.append(x.value)
        stack.extend(getattr(x, "children", ()))
    return found


def test_kernel_only_controls_carry_a_note_for_the_static_site():
    """The text box and the bit toggles need a kernel: each explorer carries the site-only note with the link
    that opens the chapter live in JupyterLite; the explorers that work from precomputed frames carry none."""
    from layoutlab.linear.layout import LinearLayout
    for box in (W.LayoutExplorer("(4,8):(8,1)"),
                W.LinearLayoutExplorer(LinearLayout.from_bases([("lane", [[1], [2]])], ["dim0"]))):
        notes = _site_notes(box)
        assert len(notes) == 1 and "edit this layout in your browser" in notes[0]
        assert "a.layoutlab-lite-chapter" in notes[0]           # the page's own JupyterLite link
        assert ".bd-article .ll-site-only{display:block}" in notes[0]   # shown inside the book only
    assert _site_notes(W.SwizzleExplorer().static(bits=(3,), element_sizes=(2,), patterns=("row",))) == []


def test_linear_layout_explorer_pictures_wrap_instead_of_clipping():
    from layoutlab.linear.layout import LinearLayout
    ex = W.LinearLayoutExplorer(LinearLayout.from_bases(
        [("register", [[0, 1], [1, 0]]), ("lane", [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]]), ("warp", [[8, 0]])],
        ["dim0", "dim1"]))
    box = next(c for c in ex.children if ex.picture in getattr(c, "children", ()))
    assert box.layout.flex_flow == "row wrap" and ex.tile in box.children


def test_widget_pictures_are_svg_with_alt_text_and_frames_are_svg_images():
    ex = W.TVExplorer(preset="SM80_16x8x8_F32F16F16F32_TN C", threads="1")
    assert ex.picture.value.count("<svg") == 1 and "<title>SM80_16x8x8_F32F16F16F32_TN C" in ex.picture.value
    frame = W.TmaExplorer().static(dtypes=("f16",), swizzles=("128B",), inner_bytes=(128,)).frames
    html = frame.children[0].children[0].children[0].value
    assert "data:image/svg+xml;base64," in html and "alt='TMA box (64, 8) at (0, 0)" in html


def test_redraw_benchmark(capsys):
    """Redraw time of the explorers' pictures on this CPU (printed, not asserted: the machine is shared)."""
    import statistics
    import time

    ex = W.TVExplorer(preset="SM90_64x64x16_F32F16F16_SS C", threads="0")
    sw = W.SwizzleExplorer()
    times = {"TVExplorer 64x64 (thread change)": [], "SwizzleExplorer (B change)": []}
    for i in range(5):
        start = time.process_time()
        ex.threads.value = str(i + 1)
        times["TVExplorer 64x64 (thread change)"].append(time.process_time() - start)
        start = time.process_time()
        sw.b.value = (i % 4) + 1 if (i % 4) + 1 != sw.b.value else 0
        times["SwizzleExplorer (B change)"].append(time.process_time() - start)
    with capsys.disabled():
        for name, t in times.items():
            print(f"\nredraw {name}: median {1000 * statistics.median(t):.1f} ms CPU (target < 100 ms)")
    assert all(t for t in times.values())
