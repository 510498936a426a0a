"""Chapter 10 (beyond Hopper, on paper): layoutlab.nvgpu.tcgen05, every number of the prose and the answers re-derived,
the tensor-memory layout checked against Gluon, and the chapter's run without the DSL and Triton."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from chapter_run import run_chapter_without_dsl

from layoutlab import Layout, LayoutError, cosize, make_mma_atom, make_tiled_mma, nvgpu, size
from layoutlab.nvgpu.tcgen05 import (TMEM_COLUMNS, TMEM_LANES, accumulator_columns, block_scale_chunk,
                                     block_scale_layout, block_scale_storage, tmem_alloc_columns, tmem_ld_32x32b_atom,
                                     tmem_ld_32x32b_tv)
from layoutlab.linear.gluon import NVMMADistributedLayout
from layoutlab.linear.layout import LinearLayout
from layoutlab.linear.cute import linear_layout_from_cute, tv_layout_to_linear_layout

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "chapters" / "10_beyond_hopper.ipynb"


def _owner(tv, m, n, M):
    hits = [(t, v) for t in range(size(tv.shape[0])) for v in range(size(tv.shape[1])) if tv((t, v)) == m + M * n]
    assert len(hits) == 1
    return hits[0]


# ------------------------------------------------------------------ layoutlab.nvgpu.tcgen05

def test_tmem_alloc_columns_is_the_smallest_legal_power_of_two():
    for cols in range(1, TMEM_COLUMNS + 1):
        a = tmem_alloc_columns(cols)
        assert a >= max(cols, 32) and a & (a - 1) == 0 and a <= TMEM_COLUMNS
        assert a == 32 or a // 2 < cols          # nothing smaller would do
    for bad in (0, -3, TMEM_COLUMNS + 1, 1024, 2.5):
        with pytest.raises(LayoutError, match="tensor memory has 512 columns"):
            tmem_alloc_columns(bad)


def test_accumulator_columns():
    assert [accumulator_columns(n) for n in (8, 200, 256)] == [8, 200, 256]
    assert accumulator_columns(256, 16) == 128 and accumulator_columns(10, 16) == 5
    for bad in ((0, 32), (64, 8), (64.0, 32)):
        with pytest.raises(LayoutError):
            accumulator_columns(*bad)


def test_tmem_ld_32x32b_is_thread_row_register_column():
    for n in (1, 2, 8, 64, 128):
        tv = tmem_ld_32x32b_tv(n)
        assert size(tv) == TMEM_LANES * n and cosize(tv) == TMEM_LANES * n
        for t in range(0, 128, 7):
            for j in range(0, n, 3):
                assert tv((t, j)) == t + 128 * j
                # warp t // 32 reads lanes 32 (t // 32) ... + 31: its own quarter of tensor memory
                assert 32 * (t // 32) <= tv((t, j)) % 128 < 32 * (t // 32) + 32
    for bad in (0, 3, 256, 96):
        with pytest.raises(LayoutError, match=r"\.x1 \.\.\. \.x128"):
            tmem_ld_32x32b_tv(bad)


def test_tmem_ld_atom_is_the_warp_s_part_of_the_tv_layout():
    """CuTe's per-warp atom (value n t + j of the lane-major slab) and our 128-thread layout (m + 128 n) name the
    same (lane, column) for every thread of warp 0 and every register."""
    for n in (1, 2, 8, 64, 128):
        thr_id, src, dst = tmem_ld_32x32b_atom(n)
        assert str(thr_id) == "32:1" and size(src) == 32 * 32 * n and cosize(src) == 32 * n
        assert all(src((t, i)) == src((0, i)) for t in range(32) for i in range(0, 32 * n, 7))   # one address
        tv = tmem_ld_32x32b_tv(n)
        for t in range(32):
            for j in range(n):
                assert divmod(dst((t, j)), n) == (tv((t, j)) % 128, tv((t, j)) // 128) == (t, j)
    with pytest.raises(LayoutError, match=r"\.x1 \.\.\. \.x128"):
        tmem_ld_32x32b_atom(3)


def test_block_scale_chunk_stores_each_scale_once():
    """Every (row, block) of 128 rows x 4 blocks gets its own byte of the 512; a row's four scales are one aligned
    32-bit word; rows 32 apart share a 16-byte line; MN-major is the same chunk transposed."""
    for vec in (16, 32):
        chunk, mn = block_scale_chunk(vec), block_scale_chunk(vec, "MN")
        seen = {}
        for m in range(128):
            word = {chunk((m, k)) for k in range(0, 4 * vec)}
            assert len(word) == 4 and min(word) % 4 == 0 and max(word) == min(word) + 3
            assert all(chunk((m, k)) == mn((k, m)) for k in range(0, 4 * vec, 3))
            for k in range(0, 4 * vec, vec):
                seen.setdefault(chunk((m, k)), (m, k // vec))
            assert chunk((m, 0)) // 16 == chunk((m % 32, 0)) // 16
        assert sorted(seen) == list(range(512))
    st = block_scale_storage(256, 128, 16)
    assert sorted({st((m, k)) for m in range(256) for k in range(0, 128, 16)}) == list(range(256 * 128 // 16))
    assert st((0, 64)) == 512 and st((128, 0)) == 1024          # the next chunk along K first, then along rows
    for bad, match in (((100, 64, 16), "multiple of 128 rows"), ((128, 32, 16), "multiple of 64"),
                       ((128, 64, 8), "per 32 elements")):
        with pytest.raises(LayoutError, match=match):
            block_scale_storage(*bad)
    with pytest.raises(LayoutError, match="'K'"):
        block_scale_chunk(16, "row")


def test_block_scale_layout_maps_each_block_to_one_scale():
    for rows, k, vec in ((4, 64, 16), (3, 96, 32), (128, 256, 16)):
        sf = block_scale_layout(rows, k, vec)
        assert size(sf) == rows * k and cosize(sf) == rows * k // vec
        for r in range(rows):
            for c in range(0, k, 5):
                assert sf((r, c)) == r * (k // vec) + c // vec
    with pytest.raises(LayoutError, match="per 32 elements"):
        block_scale_layout(4, 64, 8)
    with pytest.raises(LayoutError, match="not a positive multiple"):
        block_scale_layout(4, 40, 16)
    with pytest.raises(LayoutError, match="rows"):
        block_scale_layout(0, 64, 16)


# ------------------------------------------------------------------ the prose

def test_prose_numbers():
    # the worked example: C[77, 5] of 128 x 64
    hopper = make_tiled_mma(nvgpu.warpgroup.MmaF16BF16Op("bf16", "f32", (64, 64, 16)), (2, 1, 1)).tv_layout_C_tiled
    assert _owner(hopper, 77, 5, 128) == (150, 3)
    assert _owner(tmem_ld_32x32b_tv(64), 77, 5, 128) == (77, 5)
    assert str(tmem_ld_32x32b_tv(64)) == "(128,64):(1,128)"
    # the warp-0 picture of Hopper's accumulator is the tiled MMA's warp 0
    w0 = Layout(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))
    assert all(hopper((t, v)) % 128 == w0((t, v)) % 16 and hopper((t, v)) // 128 == w0((t, v)) // 16
               for t in range(32) for v in range(8))
    # 128 x 256 takes half of tensor memory; two fill it; 256 KiB
    assert accumulator_columns(256) == TMEM_COLUMNS // 2 and TMEM_LANES * TMEM_COLUMNS * 4 == 256 * 1024
    # the table: 64, 96, 128, 200, 256 columns -> alloc 64, 128, 128, 256, 256 -> 8, 4, 4, 2, 2 buffers
    assert [tmem_alloc_columns(accumulator_columns(n)) for n in (64, 96, 128, 200, 256)] == [64, 128, 128, 256, 256]
    # the Hopper 64 x 256 slab: 128 fp32 per thread
    assert 64 * 256 // 128 == 128
    # linear layout of the tcgen05.ld: 6 register, 5 lane, 2 warp bits; warps move rows 32 and 64
    ll = tv_layout_to_linear_layout(tmem_ld_32x32b_tv(64), (128, 64))
    bases = dict(ll.bases)
    assert bases["register"] == [[0, 1 << i] for i in range(6)] and bases["lane"] == [[1 << i, 0] for i in range(5)]
    assert bases["warp"] == [[32, 0], [64, 0]]
    # the Hopper accumulator is Gluon's NVMMADistributedLayout v3 (layoutlab's, itself checked in test_gluon)
    wg = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("bf16", "f32", (64, 64, 16))).layout_c_tv
    assert tv_layout_to_linear_layout(wg, (64, 64)) == NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16]).to_linear_layout([64, 64])
    # 2-CTA: block bit -> row 128, and the CuTe form agrees element for element
    pair = Layout(((128, 2), 64), ((1, 128), 256))
    two = LinearLayout.from_bases(list(ll.bases) + [("block", [[128, 0]])], ["dim0", "dim1"], [256, 64])
    seen = set()
    for c in range(2):
        for t in range(0, 128, 3):
            for r in range(0, 64, 5):
                out = two.apply({"register": r, "lane": t % 32, "warp": t // 32, "block": c})
                assert out["dim0"] + 256 * out["dim1"] == pair(((t, c), r))
                seen.add((out["dim0"], out["dim1"]))
    assert len(seen) == 2 * len(range(0, 128, 3)) * len(range(0, 64, 5))
    # the pair's loads: each CTA its 128 rows of A (16384 B) and its half of B (16384 B), no multicast
    assert size(Layout((128, 64))) * 2 + size(Layout((256 // 2, 64))) * 2 == 32768
    # block scales, 128 x 64 NVFP4: logical index vs the stored chunk; A[2, 37] scale 10 at byte 34, A[77, 37]
    # scale 310 at byte 218; 4 free bits in both
    logical, chunk = block_scale_layout(128, 64, 16), block_scale_chunk(16)
    assert str(logical) == "(128,(16,4)):(4,(0,1))" and str(chunk) == "((32,4),(16,4)):((16,4),(0,1))"
    assert [logical((2, 37)), chunk((2, 37)), logical((77, 37)), chunk((77, 37))] == [10, 34, 310, 218]
    assert (size(chunk), cosize(chunk)) == (8192, 512)
    for sf in (logical, chunk):
        free = [(k, i) for k, v in linear_layout_from_cute(sf, ["dim0", "dim1"], "scale").bases
                for i, b in enumerate(v) if not any(b)]
        assert free == [("dim1", 0), ("dim1", 1), ("dim1", 2), ("dim1", 3)]
    # 1024 MX / 2048 NVFP4 scales for 128 x 256: 2 and 4 chunks of 512 bytes
    assert cosize(block_scale_layout(128, 256, 32)) == 1024 and cosize(block_scale_layout(128, 256, 16)) == 2048
    assert [cosize(block_scale_storage(128, 256, v)) // 512 for v in (32, 16)] == [2, 4]


def test_ch10_answers():
    # 1. 200 columns, alloc 256
    assert accumulator_columns(200) == 200 and tmem_alloc_columns(200) == 256
    # 2. two 128 x 256 fit (512), three do not
    assert 2 * accumulator_columns(256) == TMEM_COLUMNS < 3 * accumulator_columns(256)
    # 3. Blackwell thread 77 (warp 2, lane 13) register 5; Hopper consumer thread 150, value 3
    assert _owner(tmem_ld_32x32b_tv(64), 77, 5, 128) == (77, 5) and divmod(77, 32) == (2, 13)
    hopper = make_tiled_mma(nvgpu.warpgroup.MmaF16BF16Op("bf16", "f32", (64, 64, 16)), (2, 1, 1)).tv_layout_C_tiled
    assert _owner(hopper, 77, 5, 128) == (150, 3)
    # the derivation in the answer: row 13 of the second slab: warp 0, quad row 5; column 5: t0 = 2, v0 = 1, v1 = 1
    w, r = divmod(77 - 64, 16)
    v1, t1 = divmod(r, 8)
    t0, v0 = divmod(5, 2)
    assert (w, t1, t0, v0, v1) == (0, 5, 2, 1, 1) and 128 + 32 * w + 4 * t1 + t0 == 150 and v0 + 2 * v1 == 3
    # 4. NVFP4: 2048 UE4M3; MX fp8: 1024 UE8M0
    assert cosize(block_scale_layout(128, 256, 16)) == 2048 and cosize(block_scale_layout(128, 256, 32)) == 1024
    # 5. warp bits move rows 32 and 64; stride 0 -> zero columns (4 low bits of k for NVFP4)
    bases = dict(tv_layout_to_linear_layout(tmem_ld_32x32b_tv(64), (128, 64)).bases)
    assert bases["warp"] == [[32, 0], [64, 0]]
    zeros = [i for i, b in enumerate(dict(linear_layout_from_cute(block_scale_layout(4, 64, 16), ["dim0", "dim1"],
                                                                   "scale").bases)["dim1"]) if not any(b)]
    assert zeros == [0, 1, 2, 3]
    # 6. each CTA of a 256 x 256 pair holds 128 x 256: 256 columns
    assert accumulator_columns(256) == 256
    # 7. A[77, 37] (NVFP4) at byte 218 = 16 * 13 + 4 * 2 + 2; its 16-byte line 13 holds rows 13, 45, 77, 109
    chunk = block_scale_chunk(16)
    assert chunk((77, 37)) == 218 == 16 * 13 + 4 * 2 + 2
    assert sorted({m for m in range(128) for k in range(64) if chunk((m, k)) // 16 == 13}) == [13, 45, 77, 109]


# ------------------------------------------------------------------ Gluon

GLUON_TMEM = r"""
import json
import triton.experimental.gluon.language as ttgl
from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryLayout, tensor_memory_descriptor_type
out = {}
for n in (16, 32, 64, 128):
    desc = tensor_memory_descriptor_type(ttgl.float32, [128, n], TensorMemoryLayout(block=(128, n), col_stride=1), [128, n])
    g = desc.get_reg_layout(num_warps=4)
    out[n] = [g.reg_bases, g.lane_bases, g.warp_bases]
print(json.dumps(out))
"""


@pytest.mark.triton
def test_tmem_register_layout_matches_gluon():
    """Gluon's register layout of a 32x32b tensor-memory load (its own C++, in a subprocess: Triton's bindings
    report leaks at exit) against ours, for 16 ... 128 columns."""
    pytest.importorskip("triton", reason="triton (Gluon's layout oracle) is not installed")
    proc = subprocess.run([sys.executable, "-c", GLUON_TMEM], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    gluon = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sorted(gluon) == ["128", "16", "32", "64"]
    for n, bases in gluon.items():
        ours = dict(tv_layout_to_linear_layout(tmem_ld_32x32b_tv(int(n)), (128, int(n))).bases)
        assert bases == [ours["register"], ours["lane"], ours["warp"]], n


# ------------------------------------------------------------------ the chapter

def _markdown():
    nb = json.loads(CHAPTER.read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def test_chapter_dsl_checks_compare_the_library():
    """The CuTe DSL checks ask the DSL for its own Blackwell atoms, never for a layout typed in as a literal."""
    nb = json.loads(CHAPTER.read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "cute.make_layout(" not in code and code.count("dsl.dsl_check(") == 2
    for name in ("tcgen05.Ld32x32bOp", "BlockScaledBasicChunk(16)", "setup=DSL_SETUP_SM100"):
        assert name in code


def test_chapter_prose_follows_the_review():
    md = _markdown()
    # F10.4: the Hopper value bits, as the atom's value strides say (index m + 64 n)
    wg = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("bf16", "f32", (64, 64, 16))).layout_c_tv
    moves = [divmod(wg((0, 1 << b)) - wg((0, 0)), 64) for b in range(3)]      # (columns, rows) per value bit
    assert moves == [(1, 0), (0, 8), (8, 0)]
    assert "bit `v0` moves 1 column, `v1` 8 rows\nand `v2` 8 columns" in md
    # F10.2: no multicast in the pair; F10.3: which Blackwell
    assert "Nothing is multicast, and A is not shared within the pair" in md and "multicast_slices" not in md
    assert "`sm_120`/`sm_121`, has neither" in md and "`sm_100a`/`sm_100f`, `sm_103a`/`sm_103f`" in md
    # T10.1: every step of the synchronization story, cited to its PTX section
    for word in ("tcgen05.commit.mbarrier::arrive::one", "tcgen05.wait::ld", "tcgen05.fence::before_thread_sync",
                 "tcgen05.fence::after_thread_sync", "tcgen05.relinquish_alloc_permit", "tcgen05.dealloc",
                 "§9.7.16.6.4.2", "§9.7.16.7.1", "§9.7.16.11.1", "§9.7.16.12.1"):
        assert word in md, word
    # T10.3: scales reach tensor memory through tcgen05.cp; the chunk is not a picture of tensor memory
    assert "`tcgen05.cp`" in md and "not a picture of tensor memory" in md
    # T10.2: the compiled tile's PTX, read as the list: k/16 = 4 MMAs, n/32 = 2 loads of .32x32b.x32 per warp
    code = "\n".join("".join(c["source"]) for c in json.loads(CHAPTER.read_text())["cells"] if c["cell_type"] == "code")
    assert "tcgen05_tile_ptx(64, 64)" in code and "inspect.getsource(tcgen05_tile_class)" in code
    assert f"per 16 of K ({64 // 16} here)" in md and f"in {['one', 'two'][64 // 32 - 1]} `.32x32b.x32` loads" in md
    # the last chapter ends the course, with no "Next"
    nb = json.loads(CHAPTER.read_text())
    assert "".join(nb["cells"][-1]["source"]).startswith("## The end of the course") and "**Next" not in md


def test_chapter_links_the_gemm_exercises():
    nb = json.loads(CHAPTER.read_text())
    md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "`exercises/source/ex09/ex09_gemm.ipynb`" in md and "no graded set of its own" in md
    assert (ROOT / "exercises" / "source" / "ex09" / "ex09_gemm.ipynb").is_file()
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


def test_chapter_runs_without_dsl_and_triton():
    """A reader without the CuTe DSL and Triton still runs the chapter, with visible notes."""
    pytest.importorskip("nbformat")
    printed = run_chapter_without_dsl("10_beyond_hopper", without_triton=True)
    assert "Gluon comparison skipped" in printed and "CuTe DSL comparison skipped" in printed


def test_blackwell_doctests():
    import doctest

    import layoutlab.nvgpu.tcgen05 as mod
    failed, tried = doctest.testmod(mod)
    assert tried >= 4 and failed == 0
