"""Chapter 7 (cp.async, TMA): every hand-written answer of its "Check yourself" dropdown and the numbers its
prose states, re-derived with the library (tests/test_chapters.py checks the notebook's structure)."""

import pytest

from layoutlab import Layout, LayoutError, SmemLayoutAtomKind, make_smem_layout_atom
from layoutlab.tma import (MBarrier, box_placement, cp_async_plan, encode_tiled, make_tiled_tma_atom,
                           mbarrier_try_wait, smem_alignment, smem_byte_of, tma_partition)


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
