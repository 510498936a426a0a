"""Chapter 8 (warpgroup MMA): every number written by hand into its prose and its answers, re-derived."""

import pytest
from chapter_run import run_chapter_without_dsl

from layoutlab import Layout, make_mma_atom, make_smem_layout_atom, nvgpu
from layoutlab.errors import LayoutError
from layoutlab.nvgpu.gmma import (LayoutType, check_operand_major, decode_gmma_desc, gmma_canonical_layout,
                                  gmma_k_block_descs, make_gmma_desc, wgmma_k)


def test_prose_numbers():
    # the K-major 128B worked example at 0x400: start 0x40, LBO 1, SBO 64, k-blocks 32 bytes apart
    sA = make_smem_layout_atom("K_SW128", 16).tile_to_shape((64, 64), (0, 1))
    d = gmma_k_block_descs("K", sA, 16, smem_base=0x400)
    assert (d[0].start_address, d[0].leading_byte_offset, d[0].stride_byte_offset, d[0].base_offset,
            int(d[0].layout_type)) == (0x40, 1, 64, 0, 1)
    assert [x.start_address_bytes for x in d] == [1024, 1056, 1088, 1120]
    # the MN_SW128 B of 128 x 64: LBO 8192 bytes, SBO 1024 bytes
    sB = make_smem_layout_atom("MN_SW128", 16).tile_to_shape((128, 64), (1, 0))
    b = gmma_k_block_descs("MN", sB, 16)[0]
    assert (b.leading_byte_offset_bytes, b.stride_byte_offset_bytes) == (8192, 1024)
    # interleave K-major worked example: LBO 128, SBO 256 bytes
    e = make_gmma_desc("K", gmma_canonical_layout("K", "INTERLEAVE", 16, 16, 16), 16)
    assert (e.leading_byte_offset_bytes, e.stride_byte_offset_bytes) == (128, 256)
    # accumulator: thread 37 value 5 -> (17, 11); C[45, 99] in thread 85, d51 (N = 128)
    C = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 128, 16))).layout_c_tv
    assert C((37, 5)) == 17 + 64 * 11 and C((85, 51)) == 45 + 64 * 99
    # every warp's 16 rows of the RS A (and of the N = 16 accumulator) are mma.sync m16n8k16's A fragment
    rs = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16), "rmem")).layout_a_tv
    sync_a = make_mma_atom(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, 16))).layout_a_tv
    for w in range(4):
        for t in range(32):
            for v in range(8):
                x, y = rs((32 * w + t, v)), sync_a((t, v))
                assert (x % 64, x // 64) == (16 * w + y % 16, y // 16)
    # the probe: three lbo_x2 cases are exact, all K-major swizzled B operands; pattern shifts of 128 and 256 bytes
    from layoutlab.probe import gmma as probe
    lbo = [c for c in probe.cases() if c[0].startswith("lbo_x2")]
    exact = [c for c in lbo if c[-1] == "exact"]
    assert len(exact) == 3 and all(c[2].startswith("K_SW") for c in exact)
    assert {c[4] for c in probe.cases() if c[0].startswith("pattern_shift")} == {128, 256}
    # swizzle patterns: 1024/512/256 bytes; MN-major only for 16-bit
    assert [8 * 16 * w for w in (8, 4, 2)] == [1024, 512, 256]


def test_ch8_answers():
    # 1. bf16, K-major, 128B, 64 rows: LBO field 1, SBO field 64, layout type 1
    t = make_smem_layout_atom("K_SW128", 16).tile_to_shape((64, 64), (0, 1)).compose(Layout((64, 16), (1, 64)))
    d = make_gmma_desc("K", t, "bf16")
    assert (d.leading_byte_offset, d.stride_byte_offset, d.layout_type) == (1, 64, LayoutType.B128)
    # 2. decode 0xC000002000400080
    x = decode_gmma_desc(0xC000002000400080)
    assert (x.start_address_bytes, x.leading_byte_offset, x.leading_byte_offset_bytes, x.stride_byte_offset,
            x.stride_byte_offset_bytes, x.base_offset, x.layout_type) == (2048, 64, 1024, 32, 512, 0, LayoutType.B32)
    # 3. tf32 N-major: refused
    with pytest.raises(LayoutError):
        check_operand_major("tf32", "MN")
    # 4. 64 x 256 x 64 bf16: m64n256k16, four per k-tile
    atom = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("bf16", "f32", (64, 256, 16)))
    assert atom.name == "SM90_64x256x16_F32BF16BF16_SS" and 64 // wgmma_k(16) == 4
    # 5. RS, N = 64: A[9, 3] in thread 5, value 3
    rs = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 64, 16), "rmem"))
    assert rs.layout_a_tv((5, 3)) == 9 + 64 * 3


def test_chapter_runs_without_the_dsl():
    """Without the CuTe DSL the chapter still runs: the comparisons and the kernel compile announce the skip."""
    pytest.importorskip("nbformat")
    printed = run_chapter_without_dsl("08_wgmma")
    assert printed.count("simulated: no CuTe DSL") >= 4


def test_recorded_base_offset_claims_for_32b():
    """The prose: with a 32B swizzle too, the formula's base offset is exact and 0 is not (H100 recording)."""
    import json
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "results" / "gmma_probe_h100.json"
    if not path.exists():
        pytest.skip("no H100 recording of probe.gmma yet")
    cases = json.loads(path.read_text())["cases"]
    sw32 = [n for n in cases if n.startswith("pattern_shift") and n.endswith("_SW32")]
    assert len(sw32) == 4
    assert all(cases[n]["exact"] == ("formula" in n) for n in sw32)


# --- the review of 2026-11-28 (F8.1-F8.4, T8.1, T8.2, the missing shapes table) ---------------------------------

def _cells():
    import json
    from pathlib import Path
    nb = json.loads((Path(__file__).resolve().parents[2] / "chapters" / "08_wgmma.ipynb").read_text())
    return {c["id"]: "".join(c["source"]) for c in nb["cells"]}


def _flat(text):
    return " ".join(text.split())


def test_value_bits_of_the_accumulator_move_as_the_prose_says():
    """F8.3: v0 is one column, v1 eight rows, v2 eight columns (read off the layout, offset = m + 64 n)."""
    C = make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, 128, 16))).layout_c_tv
    words = {1: "one", 8: "eight"}
    moves = []
    for name, v in (("v0", 1), ("v1", 2), ("v2", 4)):
        dm, dn = (C((0, v)) - C((0, 0))) % 64, (C((0, v)) - C((0, 0))) // 64
        assert (dm == 0) != (dn == 0)                      # each bit moves along one axis only
        moves.append(f"{name} {words[dm]} rows down" if dm else f"{name} {words[dn]} column{'s' * (dn > 1)} right")
    assert moves == ["v0 one column right", "v1 eight rows down", "v2 eight columns right"]
    prose = _flat(_cells()["aea9e639"])
    assert ", ".join(moves) in prose and "steps of 2 columns" not in prose


def test_shapes_the_library_accepts_are_the_ptx_shapes():
    """The shapes table: N every multiple of 8 in [8, 256] (PTX ISA §9.7.15), K = 32 bytes of input."""
    def accepted(make):
        out = set()
        for n in range(1, 257):
            for k in (8, 16, 32, 64):
                try:
                    make(n, k)
                    out.add((n, k))
                except LayoutError:
                    pass
        return out
    for bits, make in ((16, lambda n, k: nvgpu.warpgroup.MmaF16BF16Op("f16", "f32", (64, n, k))),
                       (8, lambda n, k: nvgpu.warpgroup.MmaF8Op("f8E4M3FN", "f8E5M2", "f32", (64, n, k)))):
        assert accepted(make) == {(n, 256 // bits) for n in range(8, 257, 8)}
    assert "accepted(make)" in _cells()["f8-shapes-code"]


def test_async_rules_are_stated_as_narrowly_as_the_ptx():
    """F8.1 and F8.2: the fence before the first wgmma unconditionally, with the register-access rule; the A
    registers of the RS form untouchable until wait_group, stated in the async section and the RS section."""
    sync, rs = _flat(_cells()["63120bbb"]), _flat(_cells()["130e2508"])
    assert '"before the first `wgmma.mma_async` operation in a warpgroup" — always' in sync
    assert ("either as accumulator or input register containing fragments of matrix A, except when these are "
            "accumulator register accesses across multiple `wgmma.mma_async` instructions of the same shape") in sync
    assert "§9.7.15.7.1" in sync and "§9.7.15.7.3" in sync and "touches registers written by ordinary" not in sync
    for text in (sync, rs):
        assert '"the input register containing the fragments of matrix A"' in _flat(text).replace(
            '"the accumulator register or the input register', '"the input register')
    assert "wgmma.wait_group" in rs and "FlashAttention-3" in rs and "scale-d" in sync


def test_timeline_has_the_cta_barrier_between_the_proxy_fence_and_wgmma_fence():
    """T8.2: the picture's instruction stream in the order of the kernel's PTX (fence.proxy.async, bar.sync,
    wgmma.fence, the MMAs, commit, wait)."""
    import matplotlib
    matplotlib.use("Agg")
    from layoutlab import viz

    fig = viz.draw_wgmma_timeline(2)
    labels = [t.get_text() for ax in fig.axes for t in ax.texts]
    order = [next(i for i, s in enumerate(labels) if key in s)
             for key in ("fence.proxy.async", "bar.sync", "wgmma.fence", "mma_async", "commit_group", "wait_group")]
    assert order == sorted(order)


def test_kernel_source_cell_shows_fence_gemm_commit_wait():
    """T8.1: the cell prints the kernel's own source, from the proxy fence to wait_group(0), in that order."""
    import contextlib
    import io

    from layoutlab.kernels import wgmma_tile

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(_cells()["f8-kernel-src-code"], {"wgmma_tile": wgmma_tile})
    text = out.getvalue()
    keys = ("fence_proxy", "sync_threads", "warpgroup.fence()", "cute.gemm(", "commit_group()", "wait_group(0)")
    assert [text.index(k) for k in keys] == sorted(text.index(k) for k in keys)
    assert text.splitlines()[0].lstrip().startswith("# 2.")


@pytest.mark.dsl
def test_answer_4_names_the_instruction_as_the_ptx_prints_it():
    """F8.4: compile the 64 x 256, K-tile 64 bf16 tile and read the instruction name and count from its PTX."""
    import re

    from layoutlab import dsl
    if not dsl.HAVE_DSL:
        pytest.skip(dsl.SKIP_REASON)
    from layoutlab.kernels import wgmma_tile

    ptx = wgmma_tile.compile_report(wgmma_tile.WgmmaTileConfig("bfloat16", 256, 64, "K_SW128", "K_SW128"))["ptx"]
    names = re.findall(r"^\s*(wgmma\.mma_async\S*)", ptx, re.M)
    assert len(set(names)) == 1 and len(names) == 4
    seq = [k for line in ptx.splitlines() for k in ("fence.proxy.async", "bar.sync", "wgmma.fence", "wgmma.mma_async",
                                                    "wgmma.commit_group", "wgmma.wait_group") if k in line]
    assert seq == ["fence.proxy.async", "bar.sync", "wgmma.fence", *["wgmma.mma_async"] * 4, "wgmma.commit_group",
                   "wgmma.wait_group"]
    answer = _flat(_cells()["10510151"].split(":::{dropdown} Answers")[1].split("\n4. ")[1].split("\n5. ")[0])
    assert answer.startswith(f"`{names[0]}`") and "four per k-tile" in answer


@pytest.mark.dsl
def test_wgmma_operands_after_the_descriptors_are_as_the_prose_reads_them():
    """The dump's operands: scale-d p, imm-scale-a/b 1, imm-trans-a 0 (K-major A), imm-trans-b 1 (MN-major B)."""
    import re

    from layoutlab import dsl
    if not dsl.HAVE_DSL:
        pytest.skip(dsl.SKIP_REASON)
    from layoutlab.kernels import wgmma_tile

    ptx = wgmma_tile.compile_report(wgmma_tile.WgmmaTileConfig("float16", 128, 64, "K_SW128", "MN_SW128"))["ptx"]
    tails = {tuple(re.split(r",\s*", line.split("},")[1].strip().rstrip(";")))[2:]
             for line in ptx.splitlines() if "wgmma.mma_async" in line}
    assert tails == {("p", "1", "1", "0", "1")}
    prose = _flat(_cells()["f8-kernel-src-md"])
    assert "`scale-d` (`p`" in prose and "`imm-trans-a`, `imm-trans-b` (1 reads that operand MN-major: here B)" in prose
