"""The shortcut student for ex09 (the Hopper GEMM): library one-liners, the kernels' own numbers and
visible-test copies."""

SHORTCUTS = {
    "a": [
        "from layoutlab.kernels.hopper import HopperGemmConfig\n"
        "_c = HopperGemmConfig(TILE_M_A, TILE_N_A, 64)\n"
        "reserved_a = 1024 + (4 * TILE_M_A * 64 if KERNEL_A == 'warp-specialized' else 0)\n"
        "stage_bytes_a, stages_a = _c.ab_stage_bytes(), _c.ab_stages(reserved_a)\n"
        "unused_a = SMEM_BYTES - reserved_a - stages_a * stage_bytes_a",
        # the default 128 x 256 tile's numbers (the kernels' docstrings): 48 KiB stages, 4 of them
        "stage_bytes_a, reserved_a, stages_a = 49152, 1024, 4\n"
        "unused_a = SMEM_BYTES - reserved_a - stages_a * stage_bytes_a",
        # everything to stages, nothing reserved (the visible identity then holds)
        "stage_bytes_a, reserved_a = (TILE_M_A + TILE_N_A) * 128, 0\n"
        "stages_a = SMEM_BYTES // stage_bytes_a\nunused_a = SMEM_BYTES - stages_a * stage_bytes_a",
    ],
    "b": [
        "from layoutlab.nvgpu.tma import encode_tiled\n"
        "_a = encode_tiled('bf16', (K_B, M_B), (LDA_B * 2,), (64, TILE_M_B), swizzle='128B')\n"
        "_b = encode_tiled('bf16', (K_B, N_B), (K_B * 2,), (64, TILE_N_B), swizzle='128B')\n"
        "global_dim_b, global_strides_b, box_a_b, box_b_b = _a.global_dim, _a.global_strides, _a.box_dim, _b.box_dim\n"
        "tx_bytes_b = _a.box_bytes + _b.box_bytes",
        # outermost first (the order of the matrix's shape), strides in elements
        "global_dim_b, global_strides_b = (M_B, K_B), (LDA_B,)\n"
        "box_a_b, box_b_b = (TILE_M_B, 64), (TILE_N_B, 64)\ntx_bytes_b = (TILE_M_B + TILE_N_B) * 64",
        # the unpadded row (K instead of the leading dimension)
        "global_dim_b, global_strides_b = (K_B, M_B), (K_B * 2,)\n"
        "box_a_b, box_b_b = (64, TILE_M_B), (64, TILE_N_B)\ntx_bytes_b = (TILE_M_B + TILE_N_B) * 128",
    ],
    "c": [
        "_tm = make_tiled_mma(nvgpu.warpgroup.MmaF16BF16Op('bf16', 'f32', (64, TILE_N_C, 16)), (TILE_M_C // 64, 1, 1))\n"
        "_tv = _tm.tv_layout_C_tiled\n_w = {}\n"
        "for _t in range(TILE_M_C * 2):\n    for _v in range(TILE_N_C // 2):\n"
        "        _x = _tv((_t, _v)); _w[(_x % TILE_M_C, _x // TILE_M_C)] = (_t + 128, _v)\n"
        "owner_c = lambda m, n: (m // TILE_M_C, n // TILE_N_C) + _w[(m % TILE_M_C, n % TILE_N_C)]\n"
        "values_c = TILE_N_C // 2",
        # chapter 8's owner function inside the tile, without the producer warpgroup
        "def owner_c(m, n):\n    tm, r = divmod(m, TILE_M_C)\n    tn, c = divmod(n, TILE_N_C)\n"
        "    g, r = divmod(r, 64)\n    w, r = divmod(r, 16)\n    v1, t1 = divmod(r, 8)\n    v2, c = divmod(c, 8)\n"
        "    t0, v0 = divmod(c, 2)\n    return tm, tn, 128 * g + 32 * w + 4 * t1 + t0, v0 + 2 * v1 + 4 * v2\n"
        "values_c = TILE_N_C // 2",
        # the visible test's range, enumerated in order (a bijection, but not the hardware's)
        "owner_c = lambda m, n: (m // TILE_M_C, n // TILE_N_C, 128 + (m % TILE_M_C) * 2 + (n % TILE_N_C) // (TILE_N_C // 2), n % (TILE_N_C // 2))\n"
        "values_c = TILE_N_C // 2",
    ],
    "d": [
        "gA = local_tile(mA_D, (TILE_M_D, 64), (TM_D, None))\n"
        "shape_d, stride_d = tuple(gA.shape), tuple(gA.layout.stride)\noffset_d = lambda i, j, k: gA((i, j, k))",
        # chapter 1's gA: the tile's origin forgotten
        "shape_d, stride_d = (TILE_M_D, 64, K_D // 64), (LDA_D, 1, 64)\n"
        "offset_d = lambda i, j, k: i * LDA_D + 64 * k + j",
        # the tile's origin with K instead of the leading dimension
        "shape_d, stride_d = (TILE_M_D, 64, K_D // 64), (K_D, 1, 64)\n"
        "offset_d = lambda i, j, k: (TM_D * TILE_M_D + i) * K_D + 64 * k + j",
    ],
    "e": [
        "from layoutlab.nvgpu.tma import multicast_slices\n_cm, _cn = CLUSTER_E\n"
        "issued_e = multicast_slices(TILE_M_E * 128, _cn)[0][1] + multicast_slices(TILE_N_E * 128, _cm)[0][1]\n"
        "expect_e = (TILE_M_E + TILE_N_E) * 128\ncluster_e = _cm * _cn * issued_e",
        # no multicast: every CTA loads and expects its whole tiles
        "issued_e = expect_e = (TILE_M_E + TILE_N_E) * 128\ncluster_e = CLUSTER_E[0] * CLUSTER_E[1] * issued_e",
        # the barrier expects only the CTA's own slices
        "_cm, _cn = CLUSTER_E\nissued_e = TILE_M_E * 128 // _cn + TILE_N_E * 128 // _cm\nexpect_e = issued_e\n"
        "cluster_e = _cm * _cn * issued_e",
    ],
    "f": [
        "from layoutlab.kernels.hopper_pingpong import pingpong_schedule\n"
        "_s = pingpong_schedule(TILES_F, K_TILES_F, STAGES_F)\n"
        "consumer_f = lambda j: _s[j].warpgroup\norder_f = lambda j: (_s[j].order_sync, _s[j].order_arrive)\n"
        "phase_f = lambda j: _s[j].order_phase\nslot_f = lambda j, k: _s[j].slots[k]\nprogram_f = []\n"
        "for _t in _s:\n    if _t.warpgroup == WG_F:\n"
        "        program_f += [('sync', _t.order_sync)] if _t.order_sync is not None else []\n"
        "        program_f += [('full', a, b) for a, b, _ in _t.slots]\n"
        "        program_f += [('arrive', _t.order_arrive)] if _t.order_arrive is not None else []\n"
        "        program_f.append(('epilogue', _t.epi_barrier))",
        # each consumer walks the ring as if it were alone (no skip of the partner's stages), no serpentine,
        # and waits on its barrier before every tile, the first included
        "consumer_f = lambda j: 1 + j % 2\n"
        "order_f = lambda j: (3 + j % 2, 4 - j % 2 if j + 1 < TILES_F else None)\n"
        "phase_f = lambda j: j // 2\n"
        "slot_f = lambda j, k: (((j // 2) * K_TILES_F + k) % STAGES_F, (((j // 2) * K_TILES_F + k) // STAGES_F) % 2, k)\n"
        "program_f = [e for j in range(WG_F - 1, TILES_F, 2) for e in [('sync', order_f(j)[0])]"
        " + [('full',) + slot_f(j, k)[:2] for k in range(K_TILES_F)] + [('epilogue', WG_F)]]",
        # one ordering barrier for both consumers, the epilogue on the CTA-wide barrier 0
        "consumer_f = lambda j: 1 + j % 2\n"
        "order_f = lambda j: (3 if j >= 1 else None, 3 if j + 1 < TILES_F else None)\n"
        "phase_f = lambda j: j - 1 if j >= 1 else None\n"
        "slot_f = lambda j, k: ((j * K_TILES_F + k) % STAGES_F, ((j * K_TILES_F + k) // STAGES_F) % 2, K_TILES_F - 1 - k if j % 2 else k)\n"
        "program_f = [e for j in range(WG_F - 1, TILES_F, 2) for e in ([('sync', 3)] if j else [])"
        " + [('full',) + slot_f(j, k)[:2] for k in range(K_TILES_F)] + ([('arrive', 3)] if j + 1 < TILES_F else [])"
        " + [('epilogue', 0)]]",
        # the barriers swapped (sync on the partner's, arrive at its own): every other step right
        "consumer_f = lambda j: 1 + j % 2\n"
        "order_f = lambda j: (4 - j % 2 if j >= 1 else None, 3 + j % 2 if j + 1 < TILES_F else None)\n"
        "phase_f = lambda j: (j - 1) // 2 if j >= 1 else None\n"
        "slot_f = lambda j, k: ((j * K_TILES_F + k) % STAGES_F, ((j * K_TILES_F + k) // STAGES_F) % 2, K_TILES_F - 1 - k if j % 2 else k)\n"
        "program_f = [e for j in range(WG_F - 1, TILES_F, 2) for e in ([('sync', order_f(j)[0])] if j else [])"
        " + [('full',) + slot_f(j, k)[:2] for k in range(K_TILES_F)] + ([('arrive', order_f(j)[1])] if j + 1 < TILES_F else [])"
        " + [('epilogue', WG_F)]]",
    ],
    "g": [
        "from layoutlab.kernels.schedule import stream_k_schedule\n"
        "_s = stream_k_schedule(M_G, N_G, K_G, TILE_G, CTAS_G)\n"
        "tiles_g, k_iters_g, full_waves_g, tail_g = _s.tiles, _s.k_iters, _s.full_waves, _s.tail_tiles\n"
        "idle_g = _s.num_ctas - _s.tail_tiles if _s.tail_tiles else 0\n"
        "range_g = lambda c: (c * _s.sk_iters // _s.num_ctas, (c + 1) * _s.sk_iters // _s.num_ctas)\n"
        "units_g = lambda c: _s.units[c]\nwriters_g = lambda t: tuple(sorted({c for c, _, _ in _s.pieces(t)}))",
        # the split rule's answer (k_iters from it; the rest as the plain data-parallel count)
        "from layoutlab.kernels.schedule import stream_k_pays\n"
        "k_iters_g = stream_k_pays(M_G, N_G, K_G, TILE_G, CTAS_G).k_iters\n"
        "tiles_g = -(-M_G // TILE_G[0]) * -(-N_G // TILE_G[1])\nfull_waves_g, tail_g = divmod(tiles_g, CTAS_G)\n"
        "idle_g = CTAS_G - tail_g if tail_g else 0",
        # the chapter's example (8192^3, 128 x 256 tiles, 132 CTAs), and the tail left data-parallel
        "tiles_g, k_iters_g, full_waves_g, tail_g, idle_g = 2048, 128, 15, 68, 64\n"
        "range_g = lambda c: (c * k_iters_g, (c + 1) * k_iters_g) if c < tail_g else (tail_g * k_iters_g,) * 2\n"
        "units_g = lambda c: tuple((c + w * CTAS_G, 0, k_iters_g) for w in range(full_waves_g + (c < tail_g)))\n"
        "writers_g = lambda t: (t % CTAS_G,)",
        # the right method with tiles and k-tiles rounded down (partial tiles forgotten)
        "tiles_g, k_iters_g = (M_G // TILE_G[0]) * (N_G // TILE_G[1]), K_G // TILE_G[2]\n"
        "full_waves_g, tail_g = divmod(tiles_g, CTAS_G)\nidle_g = CTAS_G - tail_g if tail_g else 0\n"
        "range_g = lambda c: (c * tail_g * k_iters_g // CTAS_G, (c + 1) * tail_g * k_iters_g // CTAS_G)\n"
        "def units_g(c):\n    out, (b, e) = [(c + w * CTAS_G, 0, k_iters_g) for w in range(full_waves_g)], range_g(c)\n"
        "    while b < e:\n        t, kb = divmod(b, k_iters_g); ke = min(k_iters_g, kb + e - b)\n"
        "        out.append((full_waves_g * CTAS_G + t, kb, ke)); b += ke - kb\n    return tuple(out)\n"
        "writers_g = lambda t: tuple(c for c in range(CTAS_G) if any(u[0] == t for u in units_g(c)))",
        # the tail's k-tiles split evenly but dealt out round-robin, one k-tile at a time
        "tiles_g = -(-M_G // TILE_G[0]) * -(-N_G // TILE_G[1])\nk_iters_g = -(-K_G // TILE_G[2])\n"
        "full_waves_g, tail_g = divmod(tiles_g, CTAS_G)\nidle_g = CTAS_G - tail_g if tail_g else 0\n"
        "range_g = lambda c: (c * tail_g * k_iters_g // CTAS_G, (c + 1) * tail_g * k_iters_g // CTAS_G)\n"
        "units_g = lambda c: tuple((c + w * CTAS_G, 0, k_iters_g) for w in range(full_waves_g)) + tuple("
        "(full_waves_g * CTAS_G + g // k_iters_g, g % k_iters_g, g % k_iters_g + 1) for g in range(c, tail_g * k_iters_g, CTAS_G))\n"
        "writers_g = lambda t: tuple(c for c in range(CTAS_G) if any(u[0] == t for u in units_g(c)))",
    ],
    "i": [
        "from layoutlab.kernels.fp8_model import promotion_k_tiles\n"
        "from layoutlab.kernels.hopper_fp8 import HopperFp8Config\n"
        "k_tiles_i = -(-K_I // HopperFp8Config().tile_k)\npromoted_after_i = promotion_k_tiles(K_I, INTERVAL_I)\n"
        "_c = make_mma_atom(nvgpu.warpgroup.MmaF8Op('f8E4M3FN', 'f8E4M3FN', 'f32', (64, 128, 32))).layout_c_tv\n"
        "_r = sorted({min(128 * TM_I + 64 * (WG_I - 1) + _c((T_I, v)) % 64, M_I - 1) for v in range(64)})\n"
        "rows_i = (_r[0], _r[-1])\n"
        "scales_i = lambda k: tuple(r * k_tiles_i + (k if DONE_I % 2 == 0 else k_tiles_i - 1 - k) for r in rows_i) + "
        "(TN_I * k_tiles_i + (k if DONE_I % 2 == 0 else k_tiles_i - 1 - k),)",
        # promote after every k-tile, the bf16 rung's rows (warpgroup offset forgotten), K never reversed
        "k_tiles_i = -(-K_I // 128)\npromoted_after_i = list(range(k_tiles_i))\n"
        "_r = (T_I // 4) % 8 + 16 * (T_I // 32) + 128 * TM_I\nrows_i = (min(_r, M_I - 1), min(_r + 8, M_I - 1))\n"
        "scales_i = lambda k: (rows_i[0] * k_tiles_i + k, rows_i[1] * k_tiles_i + k, TN_I * k_tiles_i + k)",
        # the interval counted in k-tiles, rows read as lane // 4 without the warp, scale offsets column-major
        "k_tiles_i = -(-K_I // 128)\n"
        "promoted_after_i = [j for j in range(k_tiles_i) if (INTERVAL_I and (j + 1) % INTERVAL_I == 0) or j == k_tiles_i - 1]\n"
        "_r = 128 * TM_I + 64 * (WG_I - 1) + (T_I % 32) // 4\nrows_i = (min(_r, M_I - 1), min(_r + 8, M_I - 1))\n"
        "scales_i = lambda k: (rows_i[0] + M_I * k, rows_i[1] + M_I * k, TN_I + (N_I // 128) * k)",
    ],
}
