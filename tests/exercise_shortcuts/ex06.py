"""The shortcut student for ex06 (ldmatrix): library one-liners, the chapter's printed answers, visible-test copies."""

_MMA_A = 'make_tiled_mma(nvgpu.warp.MmaF16BF16Op("f16", "f32", (16, 8, K_A)), WARPS_A, TILE_A)'
_ROWS_A = "(TILE_A[0] if OPERAND_A == 'A' else TILE_A[1])"

SHORTCUTS = {
    "a": [
        f"_tm = {_MMA_A}\n_s = select_ldmatrix(_tm, OPERAND_A, Layout(({_ROWS_A}, TILE_A[2]), (TILE_A[2], 1)))\n"
        "values_a = (_tm.tv_layout_A_tiled if OPERAND_A == 'A' else _tm.tv_layout_B_tiled)[1].size()\n"
        "matrices_a = values_a // 2\nx_a = _s.num_matrices",
        "values_a, matrices_a, x_a = 8, 4, 4",          # the chapter's worked example
        "values_a, matrices_a, x_a = 4, 2, 2",
    ],
    "b": [
        "trans_b = operand_majorness(SMEM_B, 'A')[0] == 'MN'\n"
        "name_b = f'SM75_U16x{2 * X_B}_LDSM_T' if trans_b else f'SM75_U32x{X_B}_LDSM_N'",
        "trans_b, name_b = False, 'SM75_U32x4_LDSM_N'",     # the chapter's two worked answers
        "trans_b, name_b = True, 'SM75_U16x8_LDSM_T'",
    ],
    "c": [
        "from layoutlab.nvgpu.ldmatrix import ldmatrix_owner, ldmatrix_address_lane\n"
        "_op = nvgpu.warp.LdMatrix8x8x16bOp(TRANS_C, X_C)\n"
        "address_lane_c = lambda j, r: ldmatrix_address_lane(_op, j, r)\n"
        "owner_c = lambda j, r, c: ldmatrix_owner(_op, j, r, c)",
        "_a = make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(TRANS_C, X_C), 'f16')\n"
        "_inv = {_a.layout_dst_tv(t, v): (t, v) for t in range(32) for v in range(2 * X_C)}\n"
        "address_lane_c = lambda j, r: 8 * j + r\nowner_c = lambda j, r, c: _inv[64 * j + 8 * r + c]",
        # the chapter's rule for the wrong direction (no .trans), without thinking about TRANS_C
        "address_lane_c = lambda j, r: 8 * j + r\nowner_c = lambda j, r, c: (4 * r + c // 2, 2 * j + c % 2)",
    ],
    "d": [
        "_tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op('f16', 'f32', (16, 8, K_D)), (1, 1, 1), TILE_D)\n"
        "have_d = (_tm.tv_layout_A_tiled if OPERAND_D == 'A' else _tm.tv_layout_B_tiled)[1].size()\n"
        "x4_moves_d = 8\n_r = TILE_D[0] if OPERAND_D == 'A' else TILE_D[1]\n"
        "widest_d = select_ldmatrix(_tm, OPERAND_D, Layout((_r, TILE_D[2]), (TILE_D[2], 1))).num_matrices",
        "have_d, x4_moves_d, widest_d = 4, 8, 2",          # the chapter's too-few-vals example
    ],
    "e": [
        "_tm = make_tiled_mma(nvgpu.warp.MmaF16BF16Op('f16', 'f32', (16, 8, K_E)), WARPS_E)\n"
        "_sA = Layout((SMEM_ROWS_E, SMEM_COLS_E), (SMEM_COLS_E, 1))\n"
        "_f = _tm.get_slice(THREAD_E).partition_fragment_A(_sA)\n"
        "frag_shape_e = _f.layout.shape\nview_shape_e = select_ldmatrix(_tm, 'A', _sA).tiled_copy.retile(_f).layout.shape",
        "frag_shape_e, view_shape_e = ((2, 2, 2), 2, 2), ((8, 1), 2, 2)",   # the chapter's mainloop shapes
    ],
}
