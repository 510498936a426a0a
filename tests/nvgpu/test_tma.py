"""layoutlab.nvgpu.tma: the cuTensorMapEncodeTiled rules, TMA byte placement, the CuTe view, mbarrier and cp.async.

The placement model is checked two independent ways: (1) every byte of a box is written exactly once and
un-swizzling the addresses gives the dense box order; (2) for tiles built by make_tiled_tma_atom, the bytes the
TMA copies write are exactly where the shared-memory layout (CuTe's ComposedLayout.byte_address) says each
element lives.  The H100 probe (layoutlab.probe.tma) checks the same placement on the hardware.
"""

import doctest
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layoutlab import (Layout, LayoutError, SmemLayoutAtomKind, Swizzle, make_composed_layout,
                       make_smem_layout_atom, make_swizzle)
from layoutlab.nvgpu import tma
from layoutlab.nvgpu.cpasync import MBarrier, cp_async_copy, cp_async_plan, cp_async_wait_group, mbarrier_try_wait
from layoutlab.nvgpu.tma import (box_placement, encode_tiled, make_tiled_tma_atom, multicast_slices, smem_alignment,
                                 swizzle_mode_of, tile_placement, tma_partition, tma_swizzle)


def test_doctests():
    assert doctest.testmod(tma, optionflags=doctest.ELLIPSIS).failed == 0


# ------------------------------------------------------------------ cuTensorMapEncodeTiled's rules

GOOD = dict(data_type="f16", global_dim=(128, 256), global_strides=(256,), box_dim=(64, 32))


def test_valid_map_and_its_box_bytes():
    tm = encode_tiled(**GOOD, swizzle="128B")
    assert tm.rank == 2 and tm.box_bytes == 64 * 32 * 2 and tm.smem_box == (64, 32)
    assert dict(tm.fields())["swizzle"] == "CU_TENSOR_MAP_SWIZZLE_128B"


BAD = [
    # (change, the field the message must name, a fragment of the valid alternative it must offer)
    (dict(global_dim=(2,) * 6, global_strides=(16,) * 5, box_dim=(8,) * 6), "tensorRank 6", "1..5"),
    (dict(global_address=8), "globalAddress", "16-byte aligned"),
    (dict(global_dim=(128, 0)), r"globalDim\[1\] = 0", "1..2"),
    (dict(global_dim=(128, 2 ** 32 + 1)), r"globalDim\[1\]", "2\\^32"),
    (dict(global_strides=(200,)), r"globalStrides\[0\] = 200", "208"),
    (dict(global_strides=(2 ** 40,)), r"globalStrides\[0\]", "2\\^40"),
    (dict(box_dim=(64, 300)), r"boxDim\[1\] = 300", "at most 256"),
    (dict(box_dim=(0, 8)), r"boxDim\[0\] = 0", "1..256"),
    (dict(box_dim=(4, 8)), r"boxDim\[0\] \* elementSize = 4 \* 2 = 8", "multiple of 8 elements"),
    (dict(element_strides=(1, 9)), r"elementStrides\[1\] = 9", "1..8"),
    (dict(swizzle="128B", box_dim=(128, 8)), "inner dimension.*256 bytes", "boxDim\\[0\\] <= 64"),
    (dict(swizzle="64B", box_dim=(64, 8)), "inner dimension.*128 bytes", "boxDim\\[0\\] <= 32"),
    (dict(swizzle="32B", box_dim=(32, 8)), "inner dimension.*64 bytes", "boxDim\\[0\\] <= 16"),
    (dict(data_type="i32", global_strides=(512,), box_dim=(32, 8), oob_fill="nan"), "oobFill 'nan'", "zero"),
    (dict(swizzle="256B"), "swizzle '256B'", "128B"),
    (dict(data_type="f8"), "element type 'f8'", "f16"),
]


@pytest.mark.parametrize("change,field,valid", BAD, ids=[b[1] for b in BAD])
def test_every_rule_is_refused_with_field_rule_and_valid_value(change, field, valid):
    args = dict(GOOD, **change)
    with pytest.raises(LayoutError, match=field) as e:
        encode_tiled(**args)
    import re
    assert re.search(valid, str(e.value)), str(e.value)


def test_the_suggested_values_are_accepted():
    """The valid values the messages offer really pass."""
    encode_tiled(**dict(GOOD, global_strides=(208,)))
    encode_tiled(**dict(GOOD, box_dim=(8, 8)))
    encode_tiled(**dict(GOOD, swizzle="128B", box_dim=(64, 8)))
    encode_tiled(**dict(GOOD, swizzle="32B", box_dim=(16, 8)))
    encode_tiled(**dict(GOOD, global_address=16))
    encode_tiled(**dict(GOOD, oob_fill="nan"))


def test_interleave_rules():
    with pytest.raises(LayoutError, match=">= 3"):
        encode_tiled(**GOOD, interleave="16B")
    three = dict(data_type="f16", global_dim=(16, 8, 8), global_strides=(32, 256), box_dim=(16, 8, 8))
    with pytest.raises(LayoutError, match="32-byte aligned"):
        encode_tiled(**three, interleave="32B", swizzle="32B", global_address=16)
    with pytest.raises(LayoutError, match="requires swizzle 32B"):
        encode_tiled(**three, interleave="32B")
    encode_tiled(**three, interleave="32B", swizzle="32B")


# ------------------------------------------------------------------ swizzle modes

def test_swizzle_modes_are_the_cute_byte_swizzles():
    assert [str(tma_swizzle(m)) for m in ("none", "32B", "64B", "128B")] == \
        ["S<0,4,3>", "S<1,4,3>", "S<2,4,3>", "S<3,4,3>"]
    for m in ("32B", "64B", "128B"):
        assert swizzle_mode_of(tma_swizzle(m)) == m
    with pytest.raises(LayoutError, match="not a TMA swizzle"):
        swizzle_mode_of(Swizzle(3, 3, 3))


@pytest.mark.parametrize("mode", ["32B", "64B", "128B"])
def test_pattern_period_is_the_alignment(mode):
    """The swizzle permutes bytes within blocks of smem_alignment(mode) bytes and repeats with that period,
    and no shorter period of whole 128-byte rows works: hence the buffer alignment."""
    sw, a = tma_swizzle(mode), smem_alignment(mode)
    assert all(sw(x + a) == sw(x) + a for x in range(4 * a))
    assert sorted(sw(x) for x in range(a)) == list(range(a))
    shorter = a // 2
    assert any(sw(x + shorter) != sw(x) + shorter for x in range(a))
    assert smem_alignment("none") == 128


# ------------------------------------------------------------------ box placement

@settings(max_examples=60, deadline=None)
@given(dt=st.sampled_from(["u8", "f16", "f32", "f64"]), mode=st.sampled_from(["none", "32B", "64B", "128B"]),
       rows=st.integers(1, 9), extra=st.integers(0, 2), data=st.data())
def test_box_bytes_written_once_and_unswizzle_to_dense(dt, mode, rows, extra, data):
    esize = tma.TMA_DATA_TYPES[dt][0]
    span = tma.SWIZZLE_SPAN[mode] or 128
    inner = data.draw(st.sampled_from([k * 16 // esize for k in range(1, span // 16 + 1)]))
    rows = rows * 8                                   # whole swizzle patterns
    tm = encode_tiled(dt, (inner * 2, rows * 2, 3), (inner * 2 * esize, inner * 2 * esize * rows * 2),
                      (inner, rows, 1 + extra), swizzle=mode)
    start = (data.draw(st.integers(-inner, inner * 2)), data.draw(st.integers(-rows, rows * 2)), 0)
    pl = box_placement(tm, start)
    assert len(pl) == tm.box_bytes and all(p is not None for p in pl)
    sw = tma_swizzle(mode)
    for addr, (g, b) in enumerate(pl):
        lin, r = divmod(sw(addr), esize)
        assert r == b
        crd = (lin % inner, lin // inner % rows, lin // (inner * rows))
        want = tuple(s + c for s, c in zip(start, crd))
        inside = all(0 <= w < d for w, d in zip(want, tm.global_dim))
        assert g == (want if inside else None)


def test_placement_worked_example():
    """128B swizzle, fp16 box of 64 x 8: row 1's chunk 1 (elements 8..15) lands in chunk 0 of row 1."""
    tm = encode_tiled("f16", (64, 8), (128,), (64, 8), swizzle="128B")
    pl = box_placement(tm, (0, 0))
    assert pl[128] == ((8, 1), 0) and pl[144] == ((0, 1), 0)
    assert tma.smem_byte_of(tm, (8, 1)) == 0x80
    no = box_placement(encode_tiled("f16", (64, 8), (128,), (64, 8)), (0, 0))
    assert no[128] == ((0, 1), 0)


def test_element_strides_skip_rows():
    tm = encode_tiled("f32", (4, 16), (16,), (4, 8), (1, 2))
    assert tm.smem_box == (4, 4) and tm.box_bytes == 64
    rows = sorted({g[1] for g, _ in box_placement(tm, (0, 1))})
    assert rows == [1, 3, 5, 7]


def test_unaligned_base_refused_and_misaligned_swizzle_differs():
    tm = encode_tiled("f16", (64, 16), (128,), (64, 16), swizzle="128B")
    with pytest.raises(LayoutError, match="128-byte aligned"):
        box_placement(tm, (0, 0), smem_base=64)
    assert box_placement(tm, (0, 0), smem_base=512) != box_placement(tm, (0, 0), smem_base=1024)
    assert box_placement(tm, (0, 0), smem_base=2048) == box_placement(tm, (0, 0), smem_base=0)


# ------------------------------------------------------------------ the CuTe view

def _staged(kind, bits, shape, order):
    return make_smem_layout_atom(SmemLayoutAtomKind[kind], bits).tile_to_shape(shape, order)


TILES = [
    ("K_SW128", 16, (128, 64), (0, 1), Layout((300, 200), (200, 1)), "f16"),
    ("MN_SW128", 16, (128, 64), (1, 0), Layout((200, 300), (1, 200)), "f16"),
    ("K_SW64", 16, (64, 32), (0, 1), Layout((100, 96), (96, 1)), "bf16"),
    ("MN_SW32", 32, (16, 32), (1, 0), Layout((40, 40), (1, 40)), "f32"),
    ("K_SW32", 8, (32, 32), (0, 1), Layout((64, 48), (48, 1)), "i8"),
    ("K_INTER", 16, (16, 16), (0, 1), Layout((40, 24), (24, 1)), "f16"),
]


@pytest.mark.parametrize("kind,bits,tile,order,g,dt", TILES, ids=[t[0] for t in TILES])
def test_tma_bytes_land_where_the_smem_layout_says(kind, bits, tile, order, g, dt):
    sl = _staged(kind, bits, tile + (2,), order + (2,))
    atom = make_tiled_tma_atom("G2S", g, sl, tile, dt)
    esize = bits // 8
    stage0 = sl.slice_((None, None, 0))
    for tc in ((0, 0), (1, 2)):
        pl = tile_placement(atom, tc)
        assert len(pl) == tile[0] * tile[1] * esize
        for m, k in itertools.product(range(tile[0]), range(tile[1])):
            addr = stage0.byte_address((m, k), esize)
            gm = (tc[0] * tile[0] + m, tc[1] * tile[1] + k)
            inside = gm[0] < g.shape[0] and gm[1] < g.shape[1]
            assert pl[addr] == (gm if inside else None, 0), (m, k, addr)


def test_partition_counts_boxes():
    sl = _staged("MN_SW128", 16, (128, 64, 3), (1, 0, 2))
    atom = make_tiled_tma_atom("G2S", Layout((256, 128), (1, 256)), sl, (128, 64))
    cps = tma_partition(atom, (1, 1))
    assert [(c.box_start, c.smem_offset) for c in cps] == [((128, 64), 0), ((192, 64), 4096)]
    assert atom.tensor_map.box_bytes * len(cps) == 128 * 64 * 2


def test_make_tiled_tma_atom_refusals():
    sl = make_composed_layout(make_swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    g = Layout((256, 128), (128, 1))
    with pytest.raises(LayoutError, match="multicast op"):
        make_tiled_tma_atom("G2S", g, sl, (8, 64), num_multicast=2)
    with pytest.raises(LayoutError, match="must be one of"):
        make_tiled_tma_atom("S2S", g, sl, (8, 64))
    with pytest.raises(LayoutError, match="does not cover the tile"):
        make_tiled_tma_atom("G2S", g, sl, (16, 64))
    with pytest.raises(LayoutError, match="not a TMA swizzle"):
        make_tiled_tma_atom("G2S", g, make_composed_layout(make_swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1))),
                            (8, 64))
    a = make_tiled_tma_atom("G2S_MULTICAST", g, sl, (8, 64), num_multicast=2)
    assert a.num_multicast == 2


def test_multicast_slices():
    assert multicast_slices(16384, 4) == [(0, 4096), (4096, 4096), (8192, 4096), (12288, 4096)]
    with pytest.raises(LayoutError, match="16-byte"):
        multicast_slices(48, 2)


# ------------------------------------------------------------------ mbarrier

def test_mbarrier_phase_completes_on_arrivals_and_bytes():
    bar = MBarrier(1)
    assert not bar.try_wait(0) and bar.try_wait(1)          # fresh: parity 0 pending, 1 "already done"
    bar.arrive_expect_tx(8192)
    assert bar.phase == 0 and bar.tx == 8192
    bar.complete_tx(4096)
    assert bar.phase == 0
    bar.complete_tx(4096)
    assert bar.phase == 1 and bar.parity == 1 and bar.try_wait(0) and not bar.try_wait(1)
    bar.complete_tx(1024)                                  # bytes may land before the next expect_tx
    bar.arrive_expect_tx(1024)
    assert bar.phase == 2
    assert [e[0] for e in bar.log][-1].endswith("phase complete")


@given(st.integers(0, 50), st.sampled_from([0, 1]))
def test_try_wait_parity(k, p):
    assert mbarrier_try_wait(k, p) == ((k % 2) != p)


def test_mbarrier_refusals():
    with pytest.raises(LayoutError):
        MBarrier(0)
    bar = MBarrier(2)
    with pytest.raises(LayoutError, match="pending"):
        bar.arrive(3)


# ------------------------------------------------------------------ cp.async

def test_cp_async_rules():
    assert cp_async_copy(16, 6) == (6, 10) and cp_async_copy(4) == (4, 0) and cp_async_copy(8, 0) == (0, 8)
    with pytest.raises(LayoutError, match="4, 8 or 16"):
        cp_async_copy(2)
    with pytest.raises(LayoutError, match="only cp-size 16"):
        cp_async_copy(8, cache="cg")
    with pytest.raises(LayoutError, match="src-size"):
        cp_async_copy(8, 9)
    with pytest.raises(LayoutError, match="not aligned"):
        cp_async_copy(16, src_addr=8)
    assert cp_async_plan(128 * 32 * 2, 128) == {"copies": 512, "per_thread": 4}
    with pytest.raises(LayoutError, match="evenly"):
        cp_async_plan(16 * 48, 32)
    assert cp_async_wait_group(3, 1) == 2 and cp_async_wait_group(1, 2) == 0


# ------------------------------------------------------------------ pictures and the explorer

def test_draw_tma_box_and_timeline():
    from layoutlab import viz
    tm = encode_tiled("f16", (64, 20), (128,), (64, 8), swizzle="128B")
    fig = viz.draw_tma_box(tm, (0, 16))
    assert fig.legends and any("fill" in t.get_text() for t in fig.legends[0].get_texts())
    bar = MBarrier(1)
    with pytest.raises(LayoutError, match="no events"):
        viz.draw_mbarrier_timeline(bar)
    bar.arrive_expect_tx(1024)
    bar.complete_tx(1024)
    assert viz.draw_mbarrier_timeline(bar).axes


def test_tma_explorer_shows_rules_and_static_frames():
    from layoutlab import widgets
    e = widgets.TmaExplorer()
    assert "1024 bytes per copy" in e.summary.value and e.message.value == ""
    e.inner.value = 256
    assert "swizzle span 128" in e.message.value
    s = e.static(dtypes=("f16",), swizzles=("none", "128B"), inner_bytes=(128, 256))
    def leaves(x):
        return [x] if not hasattr(x, "children") or not x.children else [y for c in x.children for y in leaves(c)]
    frames = leaves(s.frames)
    assert len(frames) == 4 and sum("swizzle span" in f.value for f in frames) == 1
