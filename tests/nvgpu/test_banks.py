"""Bank-conflict model: first-principles cases, an independent simulator, properties, swizzle search,
ldmatrix phases, and the recorded H100 measurement."""
import json
import os
import random

import pytest
from hypothesis import given, settings, strategies as st

from layoutlab import Layout, make_layout
from layoutlab.nvgpu.banks import (bank_conflicts, classic_patterns, find_swizzle, layout_bank_conflicts,
                                   ldmatrix_bank_conflicts, ldmatrix_row_addresses)
from layoutlab.probe.banks import measure_shared_load_cycles
from layoutlab.errors import LayoutError
from layoutlab.linear.layout import LinearLayout
from layoutlab.linear.cute import swizzle_to_linear_layout
from layoutlab.cute.swizzle import ComposedLayout, Swizzle
from layoutlab.nvgpu.warpgroup import SmemLayoutAtomKind, make_smem_layout_atom

RESULTS = os.path.join(os.path.dirname(__file__), "..", "..", "results", "banks_h100.json")


def simulate(addresses, nbytes):
    """Independent oracle: serve a phase wavefront by wavefront; each wavefront takes, per bank, one pending
    word (and every thread waiting for it).  Returns total wavefronts."""
    per_phase = {8: 16, 16: 8}.get(nbytes, 32)
    total = 0
    for p in range(0, len(addresses), per_phase):
        pending = set()
        for a in addresses[p:p + per_phase]:
            if a is not None:
                pending |= {a // 4 + k for k in range(max(1, nbytes // 4))}
        while pending:
            served = {}
            for w in sorted(pending):
                served.setdefault(w % 32, w)
            pending -= set(served.values())
            total += 1
    return total


# ----------------------------------------------------------------------------- first principles
@pytest.mark.parametrize("k", [1, 2, 4, 8, 16, 32])
def test_k_way_conflict_for_4_byte_words(k):
    # lanes split into k groups; group g reads the same 32/k banks as group 0 but one 128-byte row lower
    groups = 32 // k
    addrs = [(t % groups) * 4 + (t // groups) * 128 for t in range(32)]
    r = bank_conflicts(addrs, 4)
    assert (r.wavefronts, r.conflict_degree, r.ideal_wavefronts) == (k, k, 1)


def test_broadcast_is_free():
    assert bank_conflicts([0] * 32).wavefronts == 1
    assert bank_conflicts([(t // 4) * 4 for t in range(32)]).wavefronts == 1   # 8 words, 4 readers each
    # same bank, two different words: 2 wavefronts even with 16 readers each
    assert bank_conflicts([0 if t < 16 else 128 for t in range(32)]).wavefronts == 2


def test_wide_accesses_are_served_in_phases():
    # 8-byte: half-warps; contiguous = 2 wavefronts, the minimum
    r = bank_conflicts([8 * t for t in range(32)], 8)
    assert (r.wavefronts, r.ideal_wavefronts, r.conflict_degree) == (2, 2, 1)
    # 16-byte: quarter-warps; contiguous = 4 wavefronts; stride 32 B -> each quarter needs 256 B = 2 waves
    assert bank_conflicts([16 * t for t in range(32)], 16).wavefronts == 4
    r = bank_conflicts([32 * t for t in range(32)], 16)
    assert (r.wavefronts, r.conflict_degree) == (8, 2)
    # an 8-byte access covers two banks: lanes 0 and 16 never conflict (different phases)
    assert bank_conflicts([0] + [8 * t for t in range(1, 16)] + [256] + [8 * t for t in range(17, 32)], 8).wavefronts == 2


def test_inactive_lanes_and_small_accesses():
    assert bank_conflicts([None] * 31 + [4]).wavefronts == 1
    assert bank_conflicts([2 * t for t in range(32)], 2).wavefronts == 1   # 16 words, 2 bytes each
    assert bank_conflicts([t for t in range(32)], 1).wavefronts == 1


def test_bad_input():
    with pytest.raises(LayoutError, match="1, 2, 4, 8 or 16"):
        bank_conflicts([0] * 32, 3)
    with pytest.raises(LayoutError, match="not a multiple"):
        bank_conflicts([4 * t + 2 for t in range(32)], 4)
    with pytest.raises(LayoutError, match="1 to 32"):
        bank_conflicts([0] * 33)
    with pytest.raises(LayoutError, match="widest"):
        layout_bank_conflicts(Layout(32, 4), Layout(128), 8, vector=4)
    with pytest.raises(LayoutError, match="not contiguous"):
        layout_bank_conflicts(Layout(32, 1), Layout(128, 2), 4, vector=2)
    with pytest.raises(LayoutError, match="x1, .x2 or .x4"):
        ldmatrix_row_addresses(Layout((64, 64), (64, 1)), 2, 0, 0, num_matrices=3)


# ----------------------------------------------------------------------------- properties
access = st.sampled_from([1, 2, 4, 8, 16])


@st.composite
def warp_access(draw):
    nbytes = draw(access)
    span = draw(st.sampled_from([64, 256, 2048]))
    addrs = [draw(st.one_of(st.none(), st.integers(0, span // nbytes - 1).map(lambda w: w * nbytes)))
             if draw(st.integers(0, 9)) == 0 else draw(st.integers(0, span // nbytes - 1)) * nbytes
             for _ in range(32)]
    return addrs, nbytes


@given(warp_access())
@settings(max_examples=300, deadline=None)
def test_model_matches_independent_simulator(case):
    addrs, nbytes = case
    r = bank_conflicts(addrs, nbytes)
    assert r.wavefronts == simulate(addrs, nbytes)
    assert r.ideal_wavefronts <= r.wavefronts
    assert r.conflict_degree == max(r.phase_wavefronts)


@given(warp_access(), st.integers(0, 64), st.randoms())
@settings(max_examples=100, deadline=None)
def test_invariant_under_row_shift_and_lane_shuffle_within_phase(case, rows, rnd):
    addrs, nbytes = case
    shifted = [None if a is None else a + 128 * rows for a in addrs]
    assert bank_conflicts(shifted, nbytes).wavefronts == bank_conflicts(addrs, nbytes).wavefronts
    per = {8: 16, 16: 8}.get(nbytes, 32)
    shuffled = []
    for p in range(0, 32, per):
        chunk = addrs[p:p + per]
        rnd.shuffle(chunk)
        shuffled += chunk
    assert bank_conflicts(shuffled, nbytes).wavefronts == bank_conflicts(addrs, nbytes).wavefronts


# ----------------------------------------------------------------------------- layouts, swizzles, ldmatrix
def test_layout_pair_column_read_and_padding():
    rowmajor = Layout((32, 32), (32, 1))
    column = Layout(32, 1)               # lane t -> element (t, 0) (1-D index t in colex order)
    assert layout_bank_conflicts(column, rowmajor, 4).conflict_degree == 32
    padded = Layout((32, 32), (33, 1))  # the classic +1 padding
    assert layout_bank_conflicts(column, padded, 4).conflict_degree == 1
    swizzled = ComposedLayout(Swizzle(5, 2, 5), 0, rowmajor)   # row r's words XOR r
    assert layout_bank_conflicts(column, swizzled, 4).conflict_degree == 1
    row = Layout(32, 32)                 # lane t -> element (0, t): a row, conflict-free
    assert layout_bank_conflicts(row, rowmajor, 4).conflict_degree == 1


def _kmajor_tile(kind):
    atom = make_smem_layout_atom(kind, 16)
    return atom.tile_to_shape((64, 64), order=(0, 1))


@pytest.mark.parametrize("row0", [0, 32])
@pytest.mark.parametrize("col0", [0, 8, 24, 56])
def test_ldmatrix_from_kmajor_fp16_tile(row0, col0):
    plain = Layout((64, 64), (64, 1))   # 128-byte rows, no swizzle
    r = ldmatrix_bank_conflicts(ldmatrix_row_addresses(plain, 2, row0, col0))
    assert (r.conflict_degree, r.wavefronts) == (8, 32)   # 8 rows of one matrix share 4 banks
    sw = _kmajor_tile(SmemLayoutAtomKind.K_SW128)
    r = ldmatrix_bank_conflicts(ldmatrix_row_addresses(sw, 2, row0, col0))
    assert r.conflict_free and r.wavefronts == 4
    inter = _kmajor_tile(SmemLayoutAtomKind.K_INTER)      # 16-byte interleave: 8 rows of 16 B, also free
    assert ldmatrix_bank_conflicts(ldmatrix_row_addresses(inter, 2, row0, col0 % 8)).conflict_free


def _blocked(reg_dim, lane_dim, regs=5):
    r = [[0, 0] for _ in range(regs)]
    ln = [[0, 0] for _ in range(5)]
    for i in range(regs):
        r[i][reg_dim] = 1 << i
    for i in range(5):
        ln[i][lane_dim] = 1 << i
    return LinearLayout.from_bases([("register", r), ("lane", ln)], ["dim0", "dim1"])


def _smem_offsets_match(choice, M, N, eb):
    """The returned F2 smem layout is a bijection and, for a CuTe answer, equals Sw(byte address)."""
    ll = choice.smem_layout
    assert ll.is_injective() and ll.get_out_dim_size("offset") == M * N
    assert choice.linear_layout.is_invertible()
    if choice.swizzle is not None:
        assert choice.linear_layout == swizzle_to_linear_layout(choice.swizzle, choice.linear_layout.total_in_dim_size_log2())
        for m in range(0, M, 3):
            for n in range(N):
                off = ll.apply({"dim0": m, "dim1": n})["offset"]
                assert off * eb == choice.swizzle((m * N + n) * eb)


def test_find_swizzle_transpose_scalar():
    write = _blocked(0, 1)   # lanes along a row
    read = _blocked(1, 0)    # lanes down a column
    c = find_swizzle([write, read], (32, 32), 4, max_vector_bytes=4)
    assert c.unswizzled_wavefronts == 32 * 1 + 32 * 32
    assert c.conflict_free and c.vector_bytes == 4
    _smem_offsets_match(c, 32, 32, 4)
    sw = c.swizzle
    assert layout_bank_conflicts(Layout(32, 1), ComposedLayout(sw, 0, Layout((32, 32), (32, 1))), 4).conflict_free


def test_find_swizzle_general_f2_beats_every_cute_swizzle():
    from layoutlab.linear.gluon import BlockedLayout
    a = BlockedLayout([1, 1], [8, 4], [1, 1], [0, 1]).to_linear_layout([32, 32])
    b = BlockedLayout([1, 4], [8, 4], [1, 1], [1, 0]).to_linear_layout([32, 32])
    c = find_swizzle([a, b], (32, 32), 4)
    assert c.swizzle is None          # no Sw<B,M,S> does as well: the answer is a general F2 map
    assert c.conflict_free and c.unswizzled_wavefronts > c.wavefronts and c.vector_bytes == 16
    _smem_offsets_match(c, 32, 32, 4)
    # vectors stay contiguous and aligned: element (m, 4k + j) sits at offset(m, 4k) + j
    ll = c.smem_layout
    for m in range(32):
        for n in range(0, 32, 4):
            base = ll.apply({"dim0": m, "dim1": n})["offset"]
            assert base % 4 == 0
            assert [ll.apply({"dim0": m, "dim1": n + j})["offset"] for j in range(4)] == [base + j for j in range(4)]
    # re-score by brute force: every instruction of both layouts through the bank model
    for lay, vec in ((a, 1), (b, 4)):
        regs = lay.get_in_dim_size("register")
        for r0 in range(0, regs, vec):
            addrs = []
            for lane in range(32):
                crd = lay.apply({"register": r0, "lane": lane, "warp": 0})
                addrs.append(ll.apply(crd)["offset"] * 4)
            assert bank_conflicts(addrs, 4 * vec).conflict_free


def test_find_swizzle_keeps_vectors_and_finds_128b_swizzle_for_ldmatrix():
    ldm = LinearLayout.from_bases([("register", [[0, 1], [0, 2], [0, 4]]),
                                   ("lane", [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]])], ["dim0", "dim1"])
    c = find_swizzle([ldm], (64, 64), 2)
    assert c.vector_bytes == 16 and c.swizzle.num_base >= 4
    assert c.unswizzled_wavefronts == 32 and c.conflict_free
    assert str(c.swizzle) == "S<3,4,3>"
    _smem_offsets_match(c, 64, 64, 2)
    # vectorised transpose: 16-byte row writes, 16-byte column-block reads
    w = LinearLayout.from_bases([("register", [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]]),
                                 ("lane", [[0, 4], [0, 8], [0, 16], [8, 0], [16, 0]])], ["dim0", "dim1"])
    r = LinearLayout.from_bases([("register", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]),
                                 ("lane", [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]])], ["dim0", "dim1"])
    c = find_swizzle([w, r], (32, 32), 4)
    assert c.vector_bytes == 16 and c.conflict_free and c.unswizzled_wavefronts > c.wavefronts


# ----------------------------------------------------------------------------- GPU
def _load_record():
    if not os.path.exists(RESULTS):
        pytest.skip("results/banks_h100.json not recorded yet")
    with open(RESULTS) as f:
        return json.load(f)


def test_recorded_h100_measurement_tracks_the_model():
    rec = _load_record()
    rows = rec["patterns"]
    assert rec["gpu"] and rec["date"] and rec["driver"]
    for r in rows:  # the model still predicts what was recorded
        assert bank_conflicts(r["addresses"], r["bytes_per_access"]).wavefronts == r["predicted_wavefronts"], r
    base = [r for r in rows if r["predicted_wavefronts"] == 1]
    ones = [r["measured_cycles_per_warp_load"] for r in base]
    unit = sorted(ones)[len(ones) // 2]
    print(f"\n{rec['gpu']}: pattern, predicted wavefronts, measured cycles/warp-load, ratio to 1-wavefront")
    for r in rows:
        print(f"  {r['pattern']:45s} {r['predicted_wavefronts']:3d} {r['measured_cycles_per_warp_load']:8.2f} "
              f"{r['measured_cycles_per_warp_load'] / unit:6.2f}")
    # one wavefront per cycle: measured cycles per warp-load equal the predicted wavefronts within 10 %
    for r in rows:
        ratio = r["measured_cycles_per_warp_load"] / unit
        assert 0.9 * r["predicted_wavefronts"] <= ratio <= 1.1 * r["predicted_wavefronts"], r


@pytest.mark.gpu
def test_gpu_measurement_matches_model():
    pytest.importorskip("cupy")
    pats = classic_patterns()
    one = measure_shared_load_cycles(*pats["4B 1-way"])
    for name in ("4B 8-way", "4B 32-way", "16B ldmatrix rows, 128 B pitch (8-way)"):
        addrs, nbytes = pats[name]
        pred = bank_conflicts(addrs, nbytes).wavefronts
        meas = measure_shared_load_cycles(addrs, nbytes) / one
        assert 0.75 * pred <= meas <= 1.25 * pred, (name, pred, meas)
