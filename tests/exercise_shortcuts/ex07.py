"""The shortcut student for ex07 (cp.async and TMA): library one-liners, the chapter's printed numbers, answers
that only satisfy the visible tests, and rules half remembered from the chapter's worked example."""

_SL_A = ('ComposedLayout(Swizzle({"32B": 1, "64B": 2, "128B": 3}[SWIZZLE_A], 4, 3), 0, '
         'Layout(TILE_A, (TILE_A[1], 1) if MAJOR_A == "row" else (1, TILE_A[0])))')

SHORTCUTS = {
    "a": [
        f"_tm = make_tiled_tma_atom('G2S', Layout((ROWS_A, COLS_A), STRIDE_A), {_SL_A}, TILE_A, DTYPE_A).tensor_map\n"
        "global_dim_a, global_strides_a, box_dim_a = _tm.global_dim, _tm.global_strides, _tm.box_dim",
        # the chapter's worked example (row-major fp16), whatever the matrix
        "global_dim_a = (COLS_A, ROWS_A)\nglobal_strides_a = (LD_A * 2,)\nbox_dim_a = (TILE_A[1], TILE_A[0])",
        # shapes as printed, strides in elements
        "global_dim_a = (ROWS_A, COLS_A)\nglobal_strides_a = (LD_A,)\nbox_dim_a = TILE_A",
    ],
    "b": [
        "legal_b, field_b = [], []\nfor _c in CONFIGS_B:\n    try:\n        encode_tiled(**_c)\n"
        "        legal_b.append(True); field_b.append(None)\n    except LayoutError as _e:\n"
        "        legal_b.append(False); field_b.append(str(_e).split(': ')[1].split('[')[0].split(' ')[0])",
        "legal_b = [True] * 4\nfield_b = [None] * 4",
        "legal_b = [False] * 4\nfield_b = ['boxDim'] * 4",
        "legal_b = [False] * 4\nfield_b = ['globalStrides'] * 4",
    ],
    "c": [
        "_tm = encode_tiled(DTYPE_C, (BOX_C[0], 64), (BOX_C[0] * 4,), BOX_C, swizzle=SWIZZLE_C)\n"
        "linear_c = (ELEMENT_C[0] + BOX_C[0] * ELEMENT_C[1]) * _tm.element_bytes\n"
        "address_c = smem_byte_of(_tm, ELEMENT_C)\nalign_c = smem_alignment(SWIZZLE_C)",
        "linear_c = (ELEMENT_C[0] + BOX_C[0] * ELEMENT_C[1]) * 2\n"
        "address_c = Swizzle(3, 4, 3)(linear_c)\nalign_c = 1024",
        # no swizzle at all, the chapter's 1024
        "linear_c = (ELEMENT_C[0] + BOX_C[0] * ELEMENT_C[1]) * (2 if DTYPE_C == 'f16' else 4)\n"
        "address_c = linear_c\nalign_c = 1024",
        # the 128-byte rule for every mode
        "linear_c = (ELEMENT_C[0] + BOX_C[0] * ELEMENT_C[1]) * (2 if DTYPE_C == 'f16' else 4)\n"
        "address_c = linear_c ^ (((linear_c >> 7) & 7) << 4)\nalign_c = 1024",
    ],
    "d": [
        "_b = MBarrier(1)\nfor _t in range(KTILE_D // STAGES_D):\n    _b.arrive_expect_tx(1)\n    _b.complete_tx(1)\n"
        "tx_d = (BM_D + BN_D) * BK_D * {'u8': 1, 'f16': 2, 'f32': 4}[DTYPE_D]\n"
        "stage_d = KTILE_D % STAGES_D\nparity_d = _b.parity",
        "tx_d, stage_d, parity_d = 49152, 0, 1",          # the chapter's numbers
        # parity of the k-tile itself (the check-yourself answer misread)
        "tx_d = (BM_D + BN_D) * BK_D * {'u8': 1, 'f16': 2, 'f32': 4}[DTYPE_D]\n"
        "stage_d = KTILE_D % STAGES_D\nparity_d = KTILE_D % 2",
    ],
    "e": [
        "_e = 2 if DTYPE_E == 'f16' else 4\n_p = cp_async_plan(TILE_E[0] * TILE_E[1] * _e, THREADS_E)\n"
        "copies_e, per_thread_e = _p['copies'], _p['per_thread']\n"
        "src_size_e = cp_async_copy(16, (WIDTH_E % (16 // _e)) * _e)[0]\n"
        "done_e = cp_async_wait_group(COMMITTED_E, WAIT_E)",
        "copies_e, per_thread_e, src_size_e, done_e = 512, 4, 6, 2",      # the chapter's numbers
        "copies_e, per_thread_e, src_size_e, done_e = THREADS_E, 1, 0, 0",   # passes the visible tests
    ],
}
