"""Chapter 7 (cp.async, TMA): every hand-written answer of its "Check yourself" dropdown and the numbers its
prose states, re-derived with the library (tests/book/test_chapters.py checks the notebook's structure)."""

import pytest

from layoutlab import Layout, LayoutError, SmemLayoutAtomKind, make_smem_layout_atom
from layoutlab.nvgpu.cpasync import MBarrier, cp_async_plan, cp_async_wait_group, mbarrier_try_wait
from layoutlab.nvgpu.tma import (box_placement, encode_tiled, make_tiled_tma_atom, smem_alignment, smem_byte_of,
                                 tma_partition)


def test_ch7_answers():
    # 1. tensor map of a 300 x 200 row-major fp16 matrix, 64 x 64 tile, 128B swizzle
    sl = make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, 16).tile_to_shape((64, 64))
    tm = make_tiled_tma_atom("G2S", Layout((300, 200), (200, 1)), sl, (64, 64), "f16").tensor_map
    assert (tm.global_dim, tm.global_strides, tm.box_dim, tm.swizzle) == ((200, 300), (400,), (64, 64), "128B")
    # 2. 256-byte inner box refused with the 128B swizzle; 64 fp16 is the widest
    with pytest.raises(LayoutError, match="boxDim\\[0\\] <= 64"):
        encode_tiled("f16", (256, 64), (512,), (128, 8), swizzle="128B")
    encode_tiled("f16", (256, 64), (512,), (64, 8), swizzle="128B")
    wide = make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, 16).tile_to_shape((8, 128))
    assert make_tiled_tma_atom("G2S", Layout((256, 256), (256, 1)), wide, (8, 128)).tensor_map.box_dim[0] == 64
    # 3. 64B swizzle, box (32, 8): element (8, 2) at byte 128
    assert smem_byte_of(encode_tiled("f16", (64, 16), (128,), (32, 8), swizzle="64B"), (8, 2)) == 128
    # 4. expect-tx of one stage
    assert (128 + 256) * 64 * 2 == 49152
    bar = MBarrier(1)
    bar.arrive_expect_tx(49152)
    bar.complete_tx(128 * 64 * 2)
    assert bar.phase == 0
    bar.complete_tx(256 * 64 * 2)
    assert bar.phase == 1
    # 5. after 5 completed phases, the next one completes when try_wait.parity(1) succeeds
    assert not mbarrier_try_wait(5, 1) and mbarrier_try_wait(6, 1)
    # 6. the 128B pattern repeats every 1024 bytes
    assert smem_alignment("128B") == 1024 and smem_alignment("none") == 128


def test_ch7_prose_numbers():
    # worked example: one copy of 64 x 64 moves the whole tile (8192 bytes)
    sA = make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, 16).tile_to_shape((64, 64, 2), (0, 1, 2))
    atom = make_tiled_tma_atom("G2S", Layout((200, 136), (136, 1)), sA, (64, 64), "f16")
    assert atom.num_values == 4096 and atom.tensor_map.box_bytes == 8192
    assert len(tma_partition(atom, (3, 2))) == 1
    # cp.async: 512 copies of 16 bytes for a 128 x 32 fp16 tile
    assert cp_async_plan(128 * 32 * 2, 128)["copies"] == 512
    # MN-major staged tile of 128 x 64: two 64 x 64 boxes
    sB = make_smem_layout_atom(SmemLayoutAtomKind.MN_SW128, 16).tile_to_shape((128, 64, 4), (1, 0, 2))
    atomB = make_tiled_tma_atom("G2S", Layout((512, 256), (1, 512)), sB, (128, 64), "f16")
    assert len(tma_partition(atomB, (1, 0))) == 2
    # a warp reading 32 consecutive floats touches 4 sectors of 32 bytes; strided by 136 elements, 32
    assert len({4 * t // 32 for t in range(32)}) == 4 and len({4 * 136 * t // 32 for t in range(32)}) == 32
    # a buffer 512 bytes into the 128B pattern moves every byte of a 1024-byte box
    box = encode_tiled("f16", (64, 16), (128,), (64, 8), swizzle="128B")
    a, b = box_placement(box, (0, 0), 0), box_placement(box, (0, 0), 512)
    assert sum(x != y for x, y in zip(a, b)) == 1024


def test_ch7_order_changes_the_tma_box():
    """Why order=(1,0,2) for an MN-major operand: a (64,64) box, 2 copies per 128 x 64 tile, against a (64,8) box
    and 16 copies with (0,1,2); the wgmma descriptor is valid either way (LBO/SBO 8192/1024 vs 1024/2048)."""
    from layoutlab.nvgpu.gmma import gmma_k_block_descs
    gB = Layout((512, 256), (1, 512))
    got = {}
    for order in ((1, 0, 2), (0, 1, 2)):
        sB = make_smem_layout_atom(SmemLayoutAtomKind.MN_SW128, 16).tile_to_shape((128, 64, 4), order)
        atom = make_tiled_tma_atom("G2S", gB, sB, (128, 64), "f16")
        d = gmma_k_block_descs("MN", sB.slice_((None, None, 0)), "f16")[0]
        got[order] = (atom.tensor_map.box_dim, len(tma_partition(atom, (1, 0))),
                      d.leading_byte_offset_bytes, d.stride_byte_offset_bytes)
        # either way every box copies whole 128-byte M-runs: 64 fp16 along M
        assert atom.tensor_map.box_dim[0] * 2 == 128
    assert got[(1, 0, 2)] == ((64, 64), 2, 8192, 1024)
    assert got[(0, 1, 2)] == ((64, 8), 16, 1024, 2048)
    assert got[(0, 1, 2)][1] == 128 * 64 // (64 * 8) and got[(1, 0, 2)][1] == 128 * 64 // (64 * 64)


def test_ch7_corner_box_fraction():
    """Box (64, 8) at column 96, row 196 of a 200 x 136 A: columns 96..135 (40 of 64) and rows 196..199 (4 of 8)
    are inside: 160 of 512 elements, printed as 31 % inside and 69 % outside."""
    corner = encode_tiled("f16", (136, 200), (272,), (64, 8), swizzle="128B")
    placed = box_placement(corner, (96, 196))
    inside = sum(crd is not None for crd, _ in placed) / len(placed)
    assert inside == (136 - 96) * (200 - 196) / (64 * 8)
    assert (f"{inside:.0%}", f"{1 - inside:.0%}") == ("31%", "69%")


@pytest.mark.parametrize("stages", [2, 3, 4, 7])
def test_ch7_pipeline_waits_with_stages_minus_two(stages):
    """S - 1 groups outstanding before a read: wait_group S-2 guarantees the oldest, S-1 guarantees nothing."""
    assert cp_async_wait_group(stages - 1, stages - 2) == 1
    assert cp_async_wait_group(stages - 1, stages - 1) == 0


def test_ch7_cp_async_instruction_count():
    """The 128 x 32 fp16 tile: 512 thread-level 16-byte copies, 4 per thread, 16 warp instructions (4 per warp)."""
    plan = cp_async_plan(128 * 32 * 2, 128)
    assert plan == {"copies": 512, "per_thread": 4}
    assert plan["copies"] // 32 == 16 and plan["per_thread"] * (128 // 32) == 16


def test_ch7_interleave_rules():
    with pytest.raises(LayoutError, match="tensorRank 2 with interleave 16B must be >= 3"):
        encode_tiled("f16", (64, 64), (128,), (64, 8), interleave="16B")
    with pytest.raises(LayoutError, match="interleave 32B requires swizzle 32B"):
        encode_tiled("f16", (16, 64, 4), (32, 2048), (16, 8, 1), interleave="32B", swizzle="128B")
    encode_tiled("f16", (16, 64, 4), (32, 2048), (16, 8, 1), interleave="32B", swizzle="32B")


@pytest.mark.parametrize("mode,period", [("128B", 8), ("64B", 4), ("32B", 2)])
def test_ch7_guide_offset_recipe(mode, period):
    """The CUDA guide's recipe for a buffer that is 128- but not pattern-aligned: offset = (smem_ptr/128) % period,
    chunk x of 128-byte row y sits at ((y + offset) % period) ^ x -- checked against the placement model for every
    128-byte-aligned start inside the pattern, on a 1024-byte box."""
    width = {"128B": 64, "64B": 32, "32B": 16}[mode]          # fp16 elements per swizzle span
    box = encode_tiled("f16", (width, 1024 // (2 * width)), (2 * width,), (width, 1024 // (2 * width)), swizzle=mode)
    aligned = box_placement(box, (0, 0), smem_base=0)
    for base in range(0, 1024, 128):
        shifted, off = box_placement(box, (0, 0), smem_base=base), (base // 128) % period
        for y in range(8):
            for x in range(8):
                logical = aligned[16 * (8 * y + ((y % period) ^ x))]
                assert shifted[16 * (8 * y + (((y + off) % period) ^ x))] == logical, (mode, base, y, x)


def test_ch7_multicast_op_choice():
    """G2S with num_multicast > 1 is refused and names the multicast op; the multicast op takes it."""
    sA = make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, 16).tile_to_shape((64, 64, 2), (0, 1, 2))
    gA = Layout((200, 136), (136, 1))
    with pytest.raises(LayoutError, match="needs the multicast op CopyBulkTensorTileG2SMulticastOp"):
        make_tiled_tma_atom("CopyBulkTensorTileG2SOp", gA, sA, (64, 64), "f16", num_multicast=2)
    mc = make_tiled_tma_atom("CopyBulkTensorTileG2SMulticastOp", gA, sA, (64, 64), "f16", num_multicast=2)
    assert (mc.op, mc.num_multicast) == ("G2S_MULTICAST", 2)


def test_ch7_ends_with_next():
    import json
    from pathlib import Path
    nb = json.loads((Path(__file__).resolve().parents[2] / "chapters" / "07_tma.ipynb").read_text())
    last = "".join(nb["cells"][-1]["source"]).rstrip().splitlines()[-2:]
    assert last[0].startswith("**Next:** {ref}`ch-wgmma`")
