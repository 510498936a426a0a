"""The swizzle search: the shared-memory layout (a CuTe ``Sw<B,M,S>`` or a general F2 swizzle) that keeps every
access of a tile conflict-free, the linear-layout "optimal swizzle" idea.  Re-exported by :mod:`layoutlab.banks`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .bank_model import bank_conflicts
from .errors import LayoutError
from .linear import LinearLayout
from .swizzle import Swizzle

__all__ = ["SwizzleChoice", "find_swizzle"]


@dataclass(frozen=True)
class SwizzleChoice:
    """What :func:`find_swizzle` picked.

    ``linear_layout``: the swizzle as an F2 matrix on byte-address bits (``offset -> offset``), i.e. the
    chosen address of each byte of the plain row-/column-major tile - for a CuTe answer exactly
    ``linear.swizzle_to_linear_layout(swizzle)``; ``smem_layout``: the resulting map (dim0, dim1) -> element ``offset``;
    ``swizzle``: the map as a CuTe ``Sw<B,M,S>`` on byte addresses when it is one (else ``None``, a general
    F2 swizzle); ``wavefronts`` / ``ideal_wavefronts`` / ``unswizzled_wavefronts``:
    total over all warp instructions of warp 0; ``vector_bytes``: the widest access kept; ``per_access``:
    wavefronts of each instruction.  ``conflict_free`` when every access costs only its phases
    (an example is in :func:`find_swizzle`)::

        >>> SwizzleChoice(None, None, None, 64, 64, 1056, 4, (32, 32)).conflict_free
        True
    """
    swizzle: object
    linear_layout: object
    smem_layout: object
    wavefronts: int
    ideal_wavefronts: int
    unswizzled_wavefronts: int
    vector_bytes: int
    per_access: tuple

    @property
    def conflict_free(self) -> bool:
        return self.wavefronts == self.ideal_wavefronts


def _access_instructions(ll, tile_shape, element_bytes, row_major, max_vector_bytes=16):
    """Split a distributed layout into warp instructions: (vector_elems, [(m, n) per lane], lane bases)."""
    regs = dict(ll.bases).get("register", [])
    fast = 1 if row_major else 0
    # leading register bits that walk the contiguous dim by 1, 2, 4, ... form the vector
    vec_bits = 0
    while vec_bits < len(regs) and regs[vec_bits][fast] == (1 << vec_bits) and regs[vec_bits][1 - fast] == 0:
        vec_bits += 1
    while vec_bits and (1 << vec_bits) * element_bytes > max_vector_bytes:
        vec_bits -= 1
    vec = 1 << vec_bits
    lanes = dict(ll.in_dims).get("lane", 1)
    n_regs = 1 << len(regs)
    instrs = []
    for r0 in range(0, n_regs, vec):
        crds = []
        for lane in range(lanes):
            ins = {d: 0 for d in ll.get_in_dim_names()}
            ins.update({"register": r0, "lane": lane})
            ins = {k: v for k, v in ins.items() if k in ll.get_in_dim_names()}
            o = ll.apply(ins)
            crds.append((o["dim0"], o["dim1"]))
        instrs.append((vec, crds))
    return instrs, vec_bits, [tuple(v) for v in dict(ll.bases).get("lane", [])]


def _span_rank(vectors) -> int:
    rows, basis = 0, []
    for v in vectors:
        for b in basis:
            v = min(v, v ^ b)
        if v:
            basis.append(v)
            rows += 1
    return rows


def _f2_layout(accesses_info, n_bits, log_eb, vec_bits):
    """Greedy F2 construction of the smem layout (offset bit j -> logical index vector).

    Offset columns: the vector bits first (kept contiguous), then *bank* columns (element-offset bits
    that pick the 4-byte bank inside a 128-byte line), then *row* columns.  Two lanes of a phase
    conflict when their logical difference lies in span(row columns) (+ same-word columns) but not in
    the same-word part; so the row columns are chosen one by one to keep each phase's lane span as
    disjoint from them as possible; the bank columns complete the basis.
    """
    unit = lambda k: 1 << k  # noqa: E731
    cols = [unit(k) for k in range(vec_bits)]  # logical bits 0..vec-1 of the contiguous dim
    while len(cols) + log_eb < 2 and len(cols) < n_bits:  # rest of a 4-byte word: plain next bits
        cols.append(unit(len(cols)))
    same_word = list(cols[:max(0, 2 - log_eb)])
    n_bank = max(0, min(n_bits, 7 - log_eb) - len(cols))
    n_row = n_bits - len(cols) - n_bank
    phases = [p for p in accesses_info if p]
    low = len(cols)  # candidates avoid the vector/word bits so every vector stays aligned and contiguous
    cands = sorted({unit(i) for i in range(low, n_bits)} |
                   {unit(i) ^ unit(j) for i in range(low, n_bits) for j in range(low, i)},
                   key=lambda v: (bin(v).count("1"), v))

    def excess(extra):
        out = []
        base = same_word
        for ph in phases:
            w = base + extra
            inter = len(ph) + _span_rank(w) - _span_rank(ph + w)
            inter0 = len(ph) + _span_rank(base) - _span_rank(ph + base)
            out.append(inter - inter0)
        return (max(out) if out else 0, sum(out))

    rows = []
    for _ in range(n_row):
        have = cols + rows
        r0 = _span_rank(have)
        best = None
        for c in cands:
            if _span_rank(have + [c]) == r0:
                continue
            score = excess(rows + [c]) + (bin(c).count("1"),)
            if best is None or score < best[0]:
                best = (score, c)
        rows.append(best[1])
    bank = []
    for c in cands:
        if len(bank) == n_bank:
            break
        if _span_rank(cols + rows + bank + [c]) > len(cols) + len(rows) + len(bank):
            bank.append(c)
    return cols + bank + rows


def find_swizzle(accesses, tile_shape, element_bytes: int, row_major: bool = True,
                 max_bits: int = 5, max_vector_bytes: int = 16) -> SwizzleChoice:
    """Choose the shared-memory layout that minimises bank conflicts of all ``accesses`` while keeping
    their vector width - the linear-layout "optimal swizzle" idea.

    ``accesses``: distributed layouts (``LinearLayout`` register/lane[/warp] -> dim0, dim1) that write or
    read the ``tile_shape`` = (M, N) tile, stored row-major (``row_major``, dim1 contiguous) or
    column-major.  Each warp instruction moves, per lane, the vector of register elements that are
    contiguous along the stored-contiguous dim (up to ``max_vector_bytes``, at most 16).

    Math: the smem layout is an invertible F2 matrix F (logical index bits -> offset bits) whose low
    columns are the vector bits (so every vector stays one access).  A phase of an access is
    conflict-free when no nonzero difference of its lanes' logical indices maps into the *row* offset
    bits only (same bank, other word).  Two candidates are scored with the bank model and the better
    kept: (1) a greedy F2 construction choosing the row columns to avoid every phase's lane span,
    (2) every CuTe ``Sw<B,M,S>`` (B <= ``max_bits``, 2^M >= the widest vector in bytes) on byte addresses
    over the plain tile; ties go to the CuTe swizzle (then fewer XOR bits).

    Example (the classic transpose): a 32x32 fp32 tile written by rows and read by columns is 32-way
    conflicted unswizzled; with scalar accesses ``find_swizzle`` returns ``S<5,2,5>`` (row r's words
    XORed by r: one wavefront per access), with 16-byte reads ``S<3,4,3>``::

        >>> from layoutlab import LinearLayout
        >>> def warp(lanes_along):                 # 32 lanes along one dim, 32 registers along the other
        ...     one = lambda d, i: [1 << i, 0] if d == 0 else [0, 1 << i]
        ...     return LinearLayout.from_bases([("register", [one(1 - lanes_along, i) for i in range(5)]),
        ...                                     ("lane", [one(lanes_along, i) for i in range(5)])], ["dim0", "dim1"])
        >>> c = find_swizzle([warp(1), warp(0)], (32, 32), 4, max_vector_bytes=4)     # write rows, read columns
        >>> c.swizzle, c.unswizzled_wavefronts, c.wavefronts
        (S<5,2,5>, 1056, 64)
    """
    M, N = (int(x) for x in tile_shape)
    op = "find_swizzle"
    if element_bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"{op}: element_bytes={element_bytes} must be 1, 2, 4, 8 or 16")
    for what, x in (("M", M), ("N", N)):
        if x <= 0 or x & (x - 1):
            raise LayoutError(f"{op}: tile extent {what}={x} is not a power of two; F2 swizzles need 2^k extents")
    instrs, phase_spans, vec_bits_all = [], [], []
    n_bits = (M * N).bit_length() - 1

    def logical(m, n):
        return m * N + n if row_major else m + n * M

    for ll in accesses:
        ins, vb, lane_bases = _access_instructions(ll, (M, N), element_bytes, row_major, max_vector_bytes)
        instrs += ins
        vec_bits_all.append(vb)
        access = (1 << vb) * element_bytes
        per_phase = max(1, min(32, 128 // max(access, 4))) if access >= 8 else 32
        k = per_phase.bit_length() - 1
        phase_spans.append([logical(*lb) for lb in lane_bases[:k] if logical(*lb)])
    vec_bits = max(vec_bits_all)
    vec_bytes = (1 << vec_bits) * element_bytes
    log_eb = element_bytes.bit_length() - 1

    def cost(addr_of):
        per, tot, ideal = [], 0, 0
        for vec, crds in instrs:
            bc = bank_conflicts([addr_of(logical(m, n)) for m, n in crds], vec * element_bytes)
            per.append(bc.wavefronts)
            tot += bc.wavefronts
            ideal += bc.ideal_wavefronts
        return tot, ideal, tuple(per)

    plain = cost(lambda e: e * element_bytes)
    best_sw, best_cost, best_b = Swizzle(0, 0, 0), plain, 0
    total_bits = n_bits + log_eb
    for b in range(1, max_bits + 1):
        for m in range(max(vec_bytes.bit_length() - 1, log_eb), total_bits):
            for s in range(b, total_bits - m - b + 1):
                sw = Swizzle(b, m, s)
                c = cost(lambda e, sw=sw: sw(e * element_bytes))
                if (c[0], b) < (best_cost[0], best_b):
                    best_sw, best_cost, best_b = sw, c, b
    # the general F2 construction
    cols = _f2_layout(phase_spans, n_bits, log_eb, vec_bits)
    f2_offset = _invert_columns(cols, n_bits)   # logical vector -> offset, as a function
    f2_cost = cost(lambda e: f2_offset(e) * element_bytes)
    names = ["dim0", "dim1"]
    if f2_cost[0] < best_cost[0]:
        swizzle, (tot, ideal, per) = None, f2_cost
        offset_of = f2_offset
    else:
        swizzle, (tot, ideal, per) = best_sw, best_cost
        offset_of = lambda e, sw=best_sw: sw(e * element_bytes) // element_bytes  # noqa: E731
    bases = []
    for d, extent in ((0, M), (1, N)):
        vecs, k = [], 1
        while k < extent:
            e = logical(k, 0) if d == 0 else logical(0, k)
            vecs.append([offset_of(e)])
            k *= 2
        bases.append((names[d], vecs))
    smem = LinearLayout(bases, [("offset", M * N)], require_surjective=False)
    # the plain tile's byte address is element index * eb, so the swizzle on bytes keeps the low log2(eb)
    # bits and sends index bit k to offset_of(2^k) * eb
    byte_bases = [[1 << i] for i in range(log_eb)] + [[offset_of(1 << k) * element_bytes] for k in range(n_bits)]
    sw_matrix = LinearLayout([("offset", byte_bases)], [("offset", 1 << total_bits)])
    return SwizzleChoice(swizzle, sw_matrix, smem, tot, ideal, plain[0], vec_bytes, per)


def _invert_columns(cols, n_bits):
    """Given S (offset bit j -> logical vector cols[j]), return F = S^-1 as a function on ints."""
    # Gauss-Jordan on the augmented rows [S | I] written as (logical vector, offset vector) pairs
    pairs = [(c, 1 << j) for j, c in enumerate(cols)]
    basis = {}
    for v, o in pairs:
        for bit, (bv, bo) in basis.items():
            if v >> bit & 1:
                v ^= bv
                o ^= bo
        if v == 0:
            raise LayoutError("find_swizzle: internal error, the constructed layout is not invertible")
        low = (v & -v).bit_length() - 1
        for bit in list(basis):
            bv, bo = basis[bit]
            if bv >> low & 1:
                basis[bit] = (bv ^ v, bo ^ o)
        basis[low] = (v, o)
    unit_image = [basis[k][1] for k in range(n_bits)]

    def offset(e):
        out = 0
        for k in range(n_bits):
            if e >> k & 1:
                out ^= unit_image[k]
        return out
    return offset
