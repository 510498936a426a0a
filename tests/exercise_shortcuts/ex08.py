"""The shortcut student for ex08 (warpgroup MMA): library one-liners, the chapter's printed answers and
functions, visible-test copies."""

SHORTCUTS = {
    "a": [
        "_d = gmma_k_block_descs(MAJOR_A, SMEM_A, BITS_A, BASE_A)[KB_A]\n"
        "start_a, lbo_a, sbo_a, type_a = _d.start_address, _d.leading_byte_offset, _d.stride_byte_offset, int(_d.layout_type)",
        "from layoutlab.nvgpu.gmma import make_gmma_desc\n"
        "_k = 256 // BITS_A\n"
        "_d = make_gmma_desc(MAJOR_A, SMEM_A.compose(Layout((MN_A, (_k, K_A // _k)), (1, (MN_A, MN_A * _k)))).slice_((None, (None, KB_A))), BITS_A, BASE_A)\n"
        "start_a, lbo_a, sbo_a, type_a = _d.start_address, _d.leading_byte_offset, _d.stride_byte_offset, int(_d.layout_type)",
        "start_a, lbo_a, sbo_a, type_a = 0x40, 1, 64, 1",                 # the chapter's worked example
        "start_a, lbo_a, sbo_a, type_a = BASE_A >> 4, 1, 64, 1",
        "start_a, lbo_a, sbo_a, type_a = BASE_A >> 4, 8, 16, 0",           # the chapter's interleave example
    ],
    "b": [
        "_d = decode_gmma_desc(DESC_B)\nstart_b, lbo_b, sbo_b = _d.start_address_bytes, _d.leading_byte_offset_bytes, "
        "_d.stride_byte_offset_bytes\nswizzle_b = SWIZZLE_NAMES[int(_d.layout_type)]",
        "start_b, lbo_b, sbo_b, swizzle_b = 2048, 1024, 512, '32B'",       # the chapter's answer 2
        # forgetting the units: fields, not bytes
        "start_b, lbo_b, sbo_b = (DESC_B & 0x3FFF), (DESC_B >> 16) & 0x3FFF, (DESC_B >> 32) & 0x3FFF\n"
        "swizzle_b = SWIZZLE_NAMES[DESC_B >> 62]",
    ],
    "c": [
        "_tm = make_tiled_mma(nvgpu.warpgroup.MmaF16BF16Op('f16', 'f16', (64, N_C, 16)), (1, WG_C, 1))\n"
        "_tv = _tm.tv_layout_C_tiled\n"
        "_w = {}\nfor _t in range(128 * WG_C):\n    for _v in range(N_C // 2):\n"
        "        _x = _tv((_t, _v)); _w[(_x % 64, _x // 64)] = (_t, _v // 2, _v % 2)\n"
        "owner_c = lambda m, n: _w[(m, n)]\nregs_c = N_C // 4",
        # the chapter's owner function, unchanged (one warpgroup, f32 registers)
        "def owner_c(m, n, N=128):\n    w, r = divmod(m, 16)\n    v1, t1 = divmod(r, 8)\n    v2, c = divmod(n, 8)\n"
        "    t0, v0 = divmod(c, 2)\n    return t0 + 4 * t1 + 32 * w, v0 + 2 * v1 + 4 * v2\nregs_c = N_C // 2",
        # the chapter's function with the f16x2 packing but without the warpgroups
        "def owner_c(m, n):\n    w, r = divmod(m, 16)\n    v1, t1 = divmod(r, 8)\n    v2, c = divmod(n, 8)\n"
        "    t0, v0 = divmod(c, 2)\n    v = v0 + 2 * v1 + 4 * v2\n    return t0 + 4 * t1 + 32 * w, v // 2, v % 2\n"
        "regs_c = N_C // 4",
    ],
    "d": [
        "from layoutlab.nvgpu.gmma import check_operand_major\n"
        "def _ok(t, op, mj, src):\n    if op == 'B' and src == 'rmem':\n        return False\n    try:\n"
        "        check_operand_major(t, mj, src)\n        return True\n    except LayoutError:\n        return False\n"
        "legal_d = [_ok(*c) for c in CASES_D]",
        # the chapter's table (type x major, shared memory) applied without the operand and source rules
        "legal_d = [mj == 'K' or t in ('f16', 'bf16') for t, op, mj, src in CASES_D]",
        "legal_d = [True] * len(CASES_D)",
        "legal_d = [False] * len(CASES_D)",
    ],
    "e": [
        "from layoutlab.nvgpu.gmma import wgmma_k\n_b = {'f16': 16, 'bf16': 16, 'tf32': 32, 'e4m3': 8, 'e5m2': 8}\n"
        "shapes_e = [f'm64n{bn}k{wgmma_k(_b[t])}' for t, bm, bn, bk in CASES_E]\n"
        "totals_e = [bk // wgmma_k(_b[t]) * (bm // 64) for t, bm, bn, bk in CASES_E]",
        # K = 16 for every type (the chapter's f16 examples)
        "shapes_e = [f'm64n{bn}k16' for t, bm, bn, bk in CASES_E]\n"
        "totals_e = [bk // 16 * (bm // 64) for t, bm, bn, bk in CASES_E]",
        # K = 32 bytes misread as 32 elements
        "shapes_e = [f'm64n{bn}k32' for t, bm, bn, bk in CASES_E]\n"
        "totals_e = [bk // 32 * (bm // 64) for t, bm, bn, bk in CASES_E]",
        "shapes_e, totals_e = ['m64n256k16'] * 3, [4] * 3",                # the chapter's answer 4
    ],
}
