"""The shortcut student for ex01 (layouts): library one-liners, the chapter's printed patterns, visible-test
brute force."""

SHORTCUTS = {
    "a": [
        # column-major, as make_layout would give (the chapter's default)
        "stride_a = make_layout(SHAPE_A).stride\nfastest_a = (0, 0)",
        # row-major, the chapter's other standard order
        "stride_a = make_ordered_layout(SHAPE_A, order=((3, 2), (1, 0))).stride\nfastest_a = (1, 1)",
        # brute force over the 24 leaf orders, keeping the first that the visible test accepts
        "import itertools, math\n_l = [SHAPE_A[0][0], SHAPE_A[0][1], SHAPE_A[1][0], SHAPE_A[1][1]]\n"
        "for _o in itertools.permutations(range(4)):\n"
        "    _d = [math.prod(_l[j] for j in range(4) if _o[j] < _o[i]) for i in range(4)]\n"
        "    stride_a = ((_d[0], _d[1]), (_d[2], _d[3]))\n"
        "    fastest_a = [(i, j) for i in range(2) for j in range(2) if stride_a[i][j] == 1][0]\n"
        "    break",
    ],
    "b": [
        "mn_b = idx2crd(INDEX_B, (size(SHAPE_B[0]), size(SHAPE_B[1])))\ncoord_b = idx2crd(INDEX_B, SHAPE_B)\n"
        "offset_b = layout_b(INDEX_B)",
        "import numpy as np\n_r = size(SHAPE_B[0])\nmn_b = tuple(int(x) for x in np.unravel_index(INDEX_B, (_r, size(SHAPE_B[1])), order='F'))\n"
        "coord_b = ((mn_b[0] % SHAPE_B[0][0], mn_b[0] // SHAPE_B[0][0]), (mn_b[1] % SHAPE_B[1][0], mn_b[1] // SHAPE_B[1][0]))\n"
        "offset_b = int(layout_b.table()[INDEX_B])",
        # row-major reading (the first mode slowest), which passes every visible property
        "_c = size(SHAPE_B[1])\nmn_b = (INDEX_B // _c % size(SHAPE_B[0]), INDEX_B % _c)\n"
        "coord_b = ((mn_b[0] % SHAPE_B[0][0], mn_b[0] // SHAPE_B[0][0]), (mn_b[1] % SHAPE_B[1][0], mn_b[1] // SHAPE_B[1][0]))\n"
        "offset_b = 0",
    ],
    "c": [
        "size_c, cosize_c, distinct_c = size(layout_c), cosize(layout_c), len(set(layout_c.table().tolist()))",
        "import numpy as np\nsize_c = size(layout_c)\ncosize_c = int(max(layout_c(i) for i in range(size_c))) + 1\n"
        "distinct_c = len(np.unique([layout_c(i) for i in range(size_c)]))",
        # the visible properties alone
        "size_c = cosize_c = distinct_c = 1",
        # stride 0 overlooked: every coordinate its own offset
        "size_c = size(layout_c)\ncosize_c = distinct_c = size_c",
    ],
    "d": [
        # the chapter's table: NT is M-/N-major, TN is K-major (leading dimension = number of rows)
        "dA_d, dB_d, major_a_d, major_b_d = (1, M_D), (1, N_D), 'M', 'N'",
        "dA_d, dB_d, major_a_d, major_b_d = (K_D, 1), (K_D, 1), 'K', 'K'",
        # brute force with the visible checker: the first candidate it accepts
        "for dA_d in [(1, LDA_D), (LDA_D, 1)]:\n    for dB_d in [(1, LDB_D), (LDB_D, 1)]:\n"
        "        major_a_d = 'M' if dA_d[0] == 1 else 'K'\n        major_b_d = 'N' if dB_d[0] == 1 else 'K'\n"
        "        break\n    break",
    ],
    "e": [
        "gA = local_tile(mA, (BM_E, BK_E), (BLOCK_M_E, None))\nshape_e, stride_e = gA.shape, gA.layout.stride\n"
        "start_e = gA.iterator\nlast_e = start_e + gA.layout(size(gA.layout) - 1)",
        "_z = zipped_divide(mA.layout, (BM_E, BK_E))\nshape_e = (BM_E, BK_E, K_E // BK_E)\n"
        "stride_e = (1, LDA_E, BK_E * LDA_E)\nstart_e = _z(((0, 0), (BLOCK_M_E, 0)))\n"
        "last_e = mA((BLOCK_M_E * BM_E + BM_E - 1, K_E - 1))",
        # the chapter's gA, with M as the leading dimension
        "shape_e, stride_e = (BM_E, BK_E, K_E // BK_E), (1, M_E, BK_E * M_E)\nstart_e = BLOCK_M_E * BM_E\n"
        "last_e = start_e + BM_E - 1 + (K_E - 1) * M_E",
    ],
    "f": [
        "block_f = (M_ELT_F // BM_F, N_ELT_F // BN_F)\nin_tile_f = (M_ELT_F % BM_F, N_ELT_F % BN_F)\n"
        "gC = local_tile(mC, (BM_F, BN_F, 8), block_f + (None,), proj=(1, 1, None))\n"
        "start_f, offset_f = gC.iterator, mC((M_ELT_F, N_ELT_F))",
        # M as the leading dimension (the chapter's unpadded C)
        "block_f = (M_ELT_F // BM_F, N_ELT_F // BN_F)\nin_tile_f = (M_ELT_F % BM_F, N_ELT_F % BN_F)\n"
        "start_f = block_f[0] * BM_F + block_f[1] * BN_F * M_F\noffset_f = M_ELT_F + N_ELT_F * M_F",
        # the visible ranges, filled with the first values they accept
        "block_f, in_tile_f, start_f, offset_f = (0, 0), (0, 0), 0, 0",
    ],
}
