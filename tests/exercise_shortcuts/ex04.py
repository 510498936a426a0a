"""The shortcut student for ex04 (linear layouts): library one-liners, chapter answers, visible-test copies."""

SHORTCUTS = {
    "a": [
        "_m = swizzle_to_linear_layout(Swizzle(B_A, M_A, S_A), NBITS_A).get_matrix_view()\n"
        "sw_matrix_a = [list(r) for r in _m]\n"
        "extra_ones_a = [(i, j) for i in range(NBITS_A) for j in range(NBITS_A) if _m[i][j] != int(i == j)]\n"
        "swizzled_a = Swizzle(B_A, M_A, S_A)(OFFSET_A)",
        "_s = make_swizzle(B_A, M_A, S_A)\n"
        "sw_matrix_a = [[(_s(1 << j) >> i) & 1 for j in range(NBITS_A)] for i in range(NBITS_A)]\n"
        "extra_ones_a = [(i, j) for i in range(NBITS_A) for j in range(NBITS_A) if sw_matrix_a[i][j] != int(i == j)]\n"
        "swizzled_a = _s(OFFSET_A)",
        # the chapter's Sw<3,4,3> picture: bits 7-9 into bits 4-6, whatever B, M, S are
        "extra_ones_a = [(4, 7), (5, 8), (6, 9)]\n"
        "sw_matrix_a = [[int(i == j) for j in range(NBITS_A)] for i in range(NBITS_A)]\nswizzled_a = OFFSET_A",
    ],
    "b": [
        "_l = parse_layout(LAYOUT_B)\nbases_b = [_l(1 << j) for j in range(6)]\noffset_b = _l(INDEX_B)",
        "_ll = linear_layout_from_cute(parse_layout(LAYOUT_B))\n"
        "bases_b = [v[0] for _, vs in _ll.bases for v in vs]\noffset_b = _ll.apply({'x': INDEX_B}) if False else 0",
        # the visible test's properties: six distinct powers of two
        "bases_b = [1, 2, 4, 8, 16, 32]\noffset_b = INDEX_B",
    ],
    "c": [
        "def _lin(t):\n    try:\n        linear_layout_from_cute(parse_layout(t))\n        return True\n"
        "    except Exception:\n        return False\nlinear_c = [_lin(t) for t in LAYOUTS_C]",
        "def _lin(t):\n    l = parse_layout(t)\n    n = size(l)\n    if n & (n - 1):\n        return False\n"
        "    return all(l(a ^ b) == l(a) ^ l(b) for a in range(n) for b in range(n))\nlinear_c = [_lin(t) for t in LAYOUTS_C]",
        # the visible test accepts every list of four booleans: guess
        "linear_c = [True, False, False, True, True, False]",
        "linear_c = [True] * len(LAYOUTS_C)",
        "linear_c = [False] * len(LAYOUTS_C)",
        # a half-remembered rule from the chapter's table: 'a 3 or a 6 in it means not linear'
        "linear_c = ['3' not in t and '6' not in t for t in LAYOUTS_C]",
    ],
    "d": [
        "_ll = LinearLayout.from_bases([(d, BASES_D[d]) for d in ('register', 'lane', 'warp')], ['dim0', 'dim1'])\n"
        "_o = _ll.apply(INPUT_D)\ncoord_d = (_o['dim0'], _o['dim1'])\n"
        "set_bits_d = [(d, b) for d in BASES_D for b in range(len(BASES_D[d])) if (INPUT_D[d] >> b) & 1]",
        # the chapter's blocked layout applied to INPUT_D
        "_ll = LinearLayout.from_bases([('register', [[0, 1], [1, 0]]), ('lane', [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]]),"
        " ('warp', [[8, 0]])], ['dim0', 'dim1'])\n_o = _ll.apply(INPUT_D)\ncoord_d = (_o['dim0'], _o['dim1'])\n"
        "set_bits_d = [(d, b) for d in BASES_D for b in range(len(BASES_D[d])) if (INPUT_D[d] >> b) & 1]",
        "set_bits_d = []\ncoord_d = (0, 0)",
    ],
    "e": [
        "_a = LinearLayout.from_bases([('lane', [[v] for v in HOLD_A_E])], ['elem'])\n"
        "_b = LinearLayout.from_bases([('lane', [[v] for v in HOLD_B_E])], ['elem'])\n"
        "conv_e = [v[0] for v in _a.invert_and_compose(_b).bases[0][1]]\n"
        "inv_b_e = [v[0] for v in _b.invert().bases[0][1]]",
        # the visible test's properties: the identity is invertible
        "inv_b_e = [1, 2, 4, 8, 16]\nconv_e = [1, 2, 4, 8, 16]",
        # the old exercise's reading (HOLD_A_E the identity): conv = inverse of HOLD_B_E, computed by hand
        "_w = {}\nfor _l in range(32):\n    _e = 0\n    for _i, _v in enumerate(HOLD_B_E):\n        if (_l >> _i) & 1:\n"
        "            _e ^= _v\n    _w[_e] = _l\ninv_b_e = [_w[1 << i] for i in range(5)]\nconv_e = list(inv_b_e)",
    ],
}
