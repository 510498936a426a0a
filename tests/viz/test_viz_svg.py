"""layoutlab.viz as SVG: every layout picture is well-formed SVG with an accessible title, no text under 10 px,
a key wherever several colours mean something, and labels that equal the layout's values computed here
independently; the pictures draw with neither numpy nor matplotlib installed (JupyterLite offline)."""

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from layoutlab import Layout, encode_tiled, parse_layout, viz
from layoutlab.cute.swizzle import Swizzle

ROOT = Path(__file__).resolve().parents[2]
NS = "{http://www.w3.org/2000/svg}"


def _pictures():
    from layoutlab import MBarrier  # noqa: F401  (the plots are not SVG pictures)
    from layoutlab.nvgpu.warp import LdMatrix8x8x16bOp, MmaF16BF16Op, StMatrix8x8x16bOp
    from layoutlab.cute.atom import make_mma_atom
    from layoutlab.linear.layout import LinearLayout
    blocked = LinearLayout.from_bases(
        [("register", [[0, 1], [1, 0]]), ("lane", [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]]), ("warp", [[8, 0]])],
        ["dim0", "dim1"])
    wgmma = parse_layout("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))")
    return {
        "layout": lambda: viz.draw_layout("(4,(2,3)):(1,(4,16))"),
        "layout_bank": lambda: viz.draw_layout("(8,32):(32,1)", color_by="bank"),
        "layout_highlight": lambda: viz.draw_layout("(8,8):(1,8)", highlight={(0, 0), (1, 1)}),
        "layout_forced_labels": lambda: viz.draw_layout("(4,64):(64,1)", labels=True),
        "tv_64x64": lambda: viz.draw_tv_layout(wgmma, (64, 64)),
        "tv_inverse": lambda: viz.draw_tv_layout(parse_layout("((4,8),(2,2)):((32,1),(16,8))"), (16, 8),
                                                 inverse=True),
        "tv_linear": lambda: viz.draw_tv_layout(blocked, None),
        "tv_legend": lambda: viz.draw_tv_legend(wgmma, (64, 64), highlight_threads={1}),
        "partition": lambda: viz.draw_partition(Layout((32, 8)), (128, 8), [0, 1, 17], transpose=True),
        "tiled_mma": lambda: viz.draw_tiled_mma(make_mma_atom(MmaF16BF16Op("f16", "f32", (16, 8, 16)))),
        "tiled_copy": lambda: viz.draw_tiled_copy(src=parse_layout("(8,8):(1,8)"),
                                                  dst=parse_layout("((4,2),8):((2,1),8)"), tile_mn=(8, 8)),
        "f2": lambda: viz.draw_f2_matrix(blocked),
        "swizzle": lambda: viz.draw_swizzle(Swizzle(3, 3, 3), element_bytes=2),
        "bank_map": lambda: viz.draw_bank_map(parse_layout("(32,32):(32,1)"), 4, [(t, 0) for t in range(32)]),
        "ldmatrix": lambda: viz.draw_ldmatrix(LdMatrix8x8x16bOp(True, 4)),
        "stmatrix": lambda: viz.draw_ldmatrix(StMatrix8x8x16bOp(False, 1)),
        "tma_box": lambda: viz.draw_tma_box(encode_tiled("f16", (136, 200), (272,), (64, 8), swizzle="128B"),
                                            (96, 196)),
        "gmma_descriptor": lambda: viz.draw_gmma_descriptor(0x4000004000010040),
        "gmma_canonical": lambda: viz.draw_gmma_canonical("MN", "B64", 16),
        "gemm_tiling": lambda: viz.draw_gemm_tiling(512, 512, 64, (128, 128, 8), block=(1, 0), k_tile=2),
    }


PICTURES = _pictures()


def _font_sizes(root):
    """Every <text>'s font size, inherited from its <g> (read from the SVG itself)."""
    sizes = []

    def walk(node, size):
        size = float(node.get("font-size", size)) if node.get("font-size") else size
        if node.tag == NS + "text":
            sizes.append(size)
        for child in node:
            walk(child, size)
    walk(root, None)
    return sizes


@pytest.mark.parametrize("name", sorted(PICTURES))
def test_picture_is_wellformed_titled_legible_and_keyed(name):
    fig = PICTURES[name]()
    root = ET.fromstring(fig.to_svg())                      # well-formed XML
    assert root.tag == NS + "svg" and root.get("role") == "img"
    title = root.find(NS + "title")
    assert title is not None and len(title.text) > 20, "every picture says what it shows (alt text)"
    sizes = _font_sizes(root)
    assert sizes and None not in sizes and min(sizes) >= 10, (name, min(sizes))
    assert float(root.get("width")) == fig.width
    fills = {p.get("fill") for p in root.iter(NS + "path") if p.get("fill") not in (None, "none")}
    fills |= {r.get("fill") for r in root.iter(NS + "rect")} - {"#fff", "#ffffff", "none"}
    if len(fills) > 2 or root.find(f".//{NS}image") is not None:
        assert fig.legends and fig.legends[0].entries, f"{name}: {len(fills)} colours and no key"


def test_layout_labels_are_the_layouts_values():
    """Cell (m, n) of draw_layout shows the offset sum_i c_i d_i of the natural coordinate of m + M n."""
    for text in ["(4,(2,3)):(1,(4,16))", "((2,2),(2,4)):((1,8),(2,32))", "(3,5):(5,1)", "7:3"]:
        layout = parse_layout(text)
        shapes = [layout.shape] if isinstance(layout.shape, int) else list(layout.shape)
        strides = [layout.stride] if isinstance(layout.stride, int) else list(layout.stride)

        def flat(x):
            return [x] if isinstance(x, int) else [y for e in x for y in flat(e)]

        def offset(index, shape, stride):        # colexicographic split of a mode's index, then the dot product
            total = 0
            for s, d in zip(flat(shape), flat(stride)):
                total += (index % s) * d
                index //= s
            return total
        rows = 1
        for s in flat(shapes[0]):
            rows *= s
        cols = len(range(layout.size())) // rows
        fig = viz.draw_layout(layout, labels=True)
        labels = fig.panels[0].cell_labels
        for m in range(rows):
            for n in range(cols):
                want = offset(m, shapes[0], strides[0]) + (offset(n, shapes[1], strides[1]) if cols > 1 else 0)
                assert labels[(m, n)] == str(want), (text, m, n)
        assert "offset mod 8" in fig.legends[0].title or "offset mod 8" in fig.legends[0].entries[0][1]


def test_swizzle_labels_are_the_banks_of_the_xor():
    """Sw<3,3,3> on 2-byte elements, row-major 8 x 64: logical (m, n) sits at o = 64 m + n XOR ((o >> 3) & 0x38)
    (bits 6..8 into 3..5), in bank (2 o / 4) mod 32."""
    fig = viz.draw_swizzle(Swizzle(3, 3, 3), element_bytes=2, labels=True)
    labels = fig.panels[0].cell_labels
    for m in range(8):
        for n in range(64):
            o = 64 * m + n
            o ^= (o >> 3) & 0b111000
            assert labels[(m, n)] == str((2 * o // 4) % 32)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [str(b) for b in range(32)]   # the 32-hue key


def test_tma_box_draws_the_part_outside_the_tensor():
    """Box (64, 8) at column 96, row 196 of a 136 x 200 tensor: columns 136..159 and rows 200..203 are outside,
    64 * 8 - 40 * 4 = 352 box elements; in shared memory the fill takes the chunks of those elements."""
    from layoutlab.viz.smem import _OUTSIDE
    fig = viz.draw_tma_box(encode_tiled("f16", (136, 200), (272,), (64, 8), swizzle="128B"), (96, 196))
    glob, smem = fig.panels
    assert sum(1 for c in glob.cell_colors.values() if c == _OUTSIDE) == 64 * 8 - 40 * 4
    assert sum(1 for c in smem.cell_colors.values() if c == _OUTSIDE) == (64 * 8 - 40 * 4) // 8   # 16-B chunks
    assert "box outside the tensor: zero fill" in [e[1] for e in fig.legends[0].entries]
    # the rows inside hold global rows 196..199, each labelled on its chunks
    assert sorted(set(smem.cell_labels.values())) == ["196", "197", "198", "199"]


def test_big_grids_are_one_pixel_per_cell_and_small_svg():
    tv = parse_layout("((4,8,4,2),(2,2,32)):((256,1,16,64),(128,8,1024))")
    svg = viz.draw_tv_layout(tv, (128, 256)).to_svg()
    assert "data:image/png;base64," in svg and len(svg) < 40_000


def test_to_latex_is_a_tikzpicture_of_the_cells():
    tex = viz.draw_layout("(2,2):(1,2)").to_latex()
    assert "\\begin{tikzpicture}" in tex and tex.rstrip().endswith("\\end{tikzpicture}")
    assert tex.count("\\fill[") == 4 and "{3}" in tex      # four cells, offset 3 written


_BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "matplotlib"):
            raise ImportError(f"No module named {name!r} (blocked)")
sys.meta_path.insert(0, Block())
"""


def test_pictures_draw_without_numpy_and_matplotlib():
    """What JupyterLite has offline: no numpy, no matplotlib. The layout pictures still draw; the plots say why
    they cannot."""
    body = _BLOCK + """
from layoutlab import Layout, parse_layout, viz
from layoutlab.cute.swizzle import Swizzle
assert Layout((2, 3), (3, 1)).table() == (0, 3, 1, 4, 2, 5)
svgs = [viz.draw_layout("(4,8):(8,1)").to_svg(),
        viz.draw_tv_legend(parse_layout("((4,8),(2,2)):((32,1),(16,8))"), (16, 8)).to_svg(),
        viz.draw_swizzle(Swizzle(3, 3, 3), 2).to_svg(),
        viz.draw_gemm_tiling(256, 256, 64, (128, 128, 8)).to_svg()]
assert all(s.startswith("<svg") for s in svgs)
try:
    viz.draw_roofline([("k", 1.0, 1.0, 1.0)], [("r", 1.0)], 1.0)
except ImportError as err:
    assert "matplotlib" in str(err), err
else:
    raise AssertionError("the roofline needs matplotlib")
assert "numpy" not in sys.modules and "matplotlib" not in sys.modules
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT / "lib"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-3000:]


def test_redraw_benchmark(capsys):
    """Build + SVG of the pictures the explorers redraw (printed, not asserted: the machine is shared)."""
    import statistics
    import time
    wgmma = parse_layout("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))")
    cases = {"TV 64x64 with key": lambda t: viz.draw_tv_legend(wgmma, (64, 64), highlight_threads={t}),
             "swizzle S<3,3,3>": lambda t: viz.draw_swizzle(Swizzle(3, 3, 3), 2)}
    with capsys.disabled():
        for name, draw in cases.items():
            draw(0).to_svg()
            times = []
            for t in range(5):
                start = time.process_time()
                draw(t + 1).to_svg()
                times.append(time.process_time() - start)
            print(f"\nredraw {name}: median {1000 * statistics.median(times):.1f} ms CPU")
