"""The shortcut student for ex02 (layout algebra): library one-liners, the chapter's and the old set's printed
answers, visible-test brute force."""

SHORTCUTS = {
    "a": [
        "mode0_a, mode1_a, comp_a = composition(A_a, B_a[0]), composition(A_a, B_a[1]), composition(A_a, B_a)",
        # fit the table A_a(B_a(i)) by hand: compose the functions numerically
        "_v = [A_a(B_a(i)) for i in range(size(B_a))]\ncomp_a = composition(A_a, B_a)\n"
        "mode0_a, mode1_a = comp_a[0], comp_a[1]",
        # the chapter's (and the old exercise's) answers
        "mode0_a, mode1_a, comp_a = '(2,2):(24,2)', '3:8', '((2,2),3):((24,2),8)'",
        # the visible test only checks sizes: compact layouts of the right size
        "mode0_a, mode1_a, comp_a = f'{size(B_a[0])}:1', f'{size(B_a[1])}:1', make_layout(B_a.shape)",
    ],
    "b": [
        "comp_b = complement(A_b, M_B)\nholes_b = (comp_b.shape[0], comp_b.stride[0])",
        # "the complement starts after A": one mode, stepping over A's whole span
        "_span = max(A_b.table()) + 1\nholes_b = (M_B // (size(A_b) * (M_B // _span)), 1)\n"
        "comp_b = f'{M_B // size(A_b)}:{_span}'",
        # the chapter's printed complements and the old exercise's answer
        "holes_b, comp_b = (2, 1), '(2,3):(1,8)'",
        "holes_b, comp_b = (3, 2), '(3,2):(2,12)'",
        # the visible test checks only the size
        "holes_b, comp_b = (1, 1), f'{M_B // size(A_b)}:1'",
    ],
    "c": [
        "_z = zipped_divide(L_c, TILE_C)\nzd_shape, zd_stride = _z.shape, _z.stride\nzd_origin = _z((0, TILE_COORD_C))",
        "_z = logical_divide(L_c, TILE_C)\nzd_shape = tuple(zip(*_z.shape))\nzd_stride = tuple(zip(*_z.stride))\n"
        "zd_origin = L_c((TILE_COORD_C[0] * TILE_C[0], TILE_COORD_C[1] * TILE_C[1]))",
        # the unpadded matrix (rows COLS_C apart), as in the chapter's examples
        "t0, t1 = TILE_C\nzd_shape = ((t0, t1), (ROWS_C // t0, COLS_C // t1))\n"
        "zd_stride = ((COLS_C, 1), (t0 * COLS_C, t1))\nzd_origin = TILE_COORD_C[0] * t0 * COLS_C + TILE_COORD_C[1] * t1",
        "zd_shape, zd_stride, zd_origin = ((1, 1), (1, 1)), ((1, 1), (1, 1)), 0",
    ],
    "d": [
        "_p = blocked_product(T_d, R_d)\nshape_d, stride_d = _p.shape, _p.stride",
        "_p = logical_product(T_d, R_d)\nshape_d = ((T_d.shape[0], R_d.shape[0]), (T_d.shape[1], R_d.shape[1]))\n"
        "stride_d = ((T_d.stride[0], size(T_d) * R_d.stride[0]), (T_d.stride[1], size(T_d) * R_d.stride[1]))\n"
        "_ = blocked_product(T_d, R_d)",
        # blocks numbered column-major whatever R_d says
        "(p, q), (r0, r1) = T_d.shape, R_d.shape\nshape_d = ((p, r0), (q, r1))\n"
        "stride_d = ((T_d.stride[0], p * q), (T_d.stride[1], p * q * r0))",
        "shape_d, stride_d = ((1, 1), (1, 1)), ((1, 1), (1, 1))",
    ],
    "e": [
        "def _ok(a, b):\n    try:\n        composition(a, b)\n        return True\n    except LayoutError:\n        return False\n"
        "admissible_e = [_ok(a, b) for a, b in PAIRS_E]",
        "admissible_e = [True, True, True, True]",
        "admissible_e = [False, False, False, False]",
        "admissible_e = [True, False, True, False]",       # the old exercise's answer
    ],
    "f": [
        "inv_f = right_inverse(L_f)\nholder_f = inv_f(X_F)\ncoord_f = idx2crd(holder_f, L_f.shape)",
        "inv_f = left_inverse(L_f)\nholder_f = L_f.table().tolist().index(X_F)\ncoord_f = idx2crd(holder_f, L_f.shape)",
        "inv_f, holder_f, coord_f = '(2,4,4):(4,1,8)', 0, (0, (0, 0))",     # the old exercise's answer
        # the visible test checks only the size and the range
        "inv_f, holder_f, coord_f = f'{size(L_f)}:1', X_F, (0, (0, 0))",
    ],
}
