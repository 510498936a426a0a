"""The shortcut student for ex05 (swizzles and banks): library one-liners, chapter answers, brute force."""

_ADDR_A = "_addr = [4 * (t * WIDTH_A + COLUMN_A) for t in range(32)]\n"

SHORTCUTS = {
    "a": [
        _ADDR_A + "banks_a = [bank_of(a) for a in _addr]\n"
        "first_repeat_a = next((t for t in range(1, 32) if banks_a[t] == banks_a[0]), 32)\n"
        "degree_a = bank_conflicts(_addr, 4).conflict_degree",
        _ADDR_A + "banks_a = [(a // 4) % 32 for a in _addr]\nfirst_repeat_a = 1\n"
        "degree_a = layout_bank_conflicts(Layout(32, 1), Layout((32, WIDTH_A), (WIDTH_A, 1)), 4).conflict_degree",
        # the chapter's column of a 32-wide tile
        "banks_a = [0] * 32\nfirst_repeat_a = 1\ndegree_a = 32",
        # brute force over the degree with the visible test (every value passes it)
        "banks_a = list(range(32))\nfirst_repeat_a = 32\nfor degree_a in range(1, 33):\n"
        "    if isinstance(degree_a, int) and 1 <= degree_a <= 32:\n        break",
    ],
    "b": [
        "_bc = bank_conflicts(ADDRESSES_B, BYTES_B)\n"
        "phase_threads_b = 128 // BYTES_B\nphase_wavefronts_b = list(_bc.phase_wavefronts)\nwavefronts_b = _bc.wavefronts",
        # the visible test's properties: as many phases as it asks, one wavefront each
        "phase_threads_b = 8\nphase_wavefronts_b = [1, 1, 1, 1]\nwavefronts_b = 4",
        "phase_threads_b = 16\nphase_wavefronts_b = [2, 2]\nwavefronts_b = 4",
        "phase_threads_b = 128 // BYTES_B\nphase_wavefronts_b = [1] * (32 // phase_threads_b)\n"
        "wavefronts_b = sum(phase_wavefronts_b)",
        "phase_threads_b = 128 // BYTES_B\nphase_wavefronts_b = [2] * (32 // phase_threads_b)\n"
        "wavefronts_b = sum(phase_wavefronts_b)",
        # one phase for the whole warp, counting words per bank (the 4-byte rule applied to wide loads)
        "phase_threads_b = 32\n_pb = {}\nfor _a in ADDRESSES_B:\n    for _w in range(BYTES_B // 4):\n"
        "        _pb.setdefault((_a // 4 + _w) % 32, set()).add(_a // 4 + _w)\n"
        "phase_wavefronts_b = [max(len(v) for v in _pb.values())]\nwavefronts_b = phase_wavefronts_b[0]",
    ],
    "c": [
        "_sw = Swizzle(B_C, M_C, S_C)\nswizzled_c = [_sw(a) for a in ADDRESSES_C]\n"
        "yyy_c = [((s ^ a) >> M_C) for s, a in zip(swizzled_c, ADDRESSES_C)]",
        # the chapter's Sw<3,4,3> rule (chunk ^= row % 8), whatever B, M, S are
        "yyy_c = [(a >> 7) & 7 for a in ADDRESSES_C]\nswizzled_c = [a ^ (y << 4) for a, y in zip(ADDRESSES_C, yyy_c)]",
        # the visible test's property: leave the address alone
        "yyy_c = [0 for a in ADDRESSES_C]\nswizzled_c = list(ADDRESSES_C)",
    ],
    "d": [
        "contiguous_bytes_d = EXTENT_D * BITS_D // 8\natom_d = get_smem_layout_atom(MAJOR_D, BITS_D, EXTENT_D).name",
        # the chapter's answers, and a brute force with the visible check (any name of ATOM_KINDS passes)
        "contiguous_bytes_d = 128\natom_d = 'K_SW128'",
        "contiguous_bytes_d = EXTENT_D * BITS_D\nfor atom_d in ATOM_KINDS:\n    if atom_d.startswith(MAJOR_D):\n        break",
        # the old prompt's rule applied to bits, not bytes
        "contiguous_bytes_d = EXTENT_D * BITS_D\n"
        "atom_d = MAJOR_D + '_' + next((w for w, b in (('SW128', 1024), ('SW64', 512), ('SW32', 256)) "
        "if contiguous_bytes_d % b == 0), 'INTER')",
    ],
    "e": [
        # the chapter's transpose answer
        "plain_degree_e = 32\nswizzle_e = (5, 2, 5)",
        # a brute force over (B, M, S) with the library's bank counter
        "plain_degree_e = bank_conflicts([4 * t * WIDTH_E for t in range(32)], 4).conflict_degree\n"
        "import itertools\nfor _b, _m, _s in itertools.product(range(6), range(6), range(1, 10)):\n"
        "    try:\n        _sw = Swizzle(_b, _m, _s)\n    except LayoutError:\n        continue\n"
        "    _a = lambda r, c: _sw(4 * (r * WIDTH_E + c))\n"
        "    if all(bank_conflicts([_a(t, c) for t in range(32)], 4).conflict_degree == 1 for c in range(32)) and "
        "all(bank_conflicts([_a(r, t) for t in range(32)], 4).conflict_degree == 1 for r in range(ROWS_E)):\n"
        "        swizzle_e = (_b, _m, _s)\n        break",
        # a brute force with the visible test's own check (any valid swizzle passes it)
        "plain_degree_e = 32\nimport itertools\nfor swizzle_e in itertools.product(range(6), range(6), range(1, 10)):\n"
        "    try:\n        Swizzle(*swizzle_e)\n        break\n    except LayoutError:\n        continue",
    ],
}
