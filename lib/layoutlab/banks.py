"""Shared-memory bank conflicts: a model of one warp's access, ldmatrix phases, swizzle search, GPU check.

The model (NVIDIA, Volta through Hopper): shared memory has 32 banks, each 4 bytes wide; bank of byte
address a is ``(a // 4) % 32``.  One *wavefront* delivers at most one 4-byte word per bank (128 bytes).
A warp's request is split into *phases* that are served separately:

* 1/2/4-byte accesses: one phase of 32 threads;
* 8-byte accesses: two phases (half-warps, threads 0-15 and 16-31);
* 16-byte accesses: four phases (quarter-warps of 8 threads).  ``ldmatrix`` is the same: each 8x8
  matrix is 8 row addresses of 16 bytes, one phase per matrix.

Inside a phase, threads reading the *same* word are served together (broadcast), so the phase needs

    wavefronts(phase) = max over banks of (number of distinct 4-byte words that phase touches in that bank)

and the request needs the sum over phases.  The *conflict degree* is the worst phase's count: an
"n-way bank conflict" (1 = conflict-free).  ``ideal_wavefronts`` is the number of phases.

:func:`measure_shared_load_cycles` times such patterns on a GPU (cupy, ``clock64``) so the chapter can
show measured cycles tracking the predicted wavefronts; the H100 record lives in
``results/banks_h100.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .errors import LayoutError
from .linear import LinearLayout
from .swizzle import ComposedLayout, Swizzle

__all__ = [
    "NUM_BANKS",
    "BANK_BYTES",
    "BankConflicts",
    "bank_of",
    "bank_conflicts",
    "layout_bank_conflicts",
    "ldmatrix_row_addresses",
    "ldmatrix_bank_conflicts",
    "SwizzleChoice",
    "find_swizzle",
    "classic_patterns",
    "measure_shared_load_cycles",
    "record_bank_measurements",
]

NUM_BANKS = 32
BANK_BYTES = 4
_ACCESS_BYTES = (1, 2, 4, 8, 16)


def bank_of(address: int) -> int:
    """Bank of a byte address: ``(address // 4) % 32``.

    >>> bank_of(132)
    1
    """
    return (address // BANK_BYTES) % NUM_BANKS


@dataclass(frozen=True)
class BankConflicts:
    """Result of :func:`bank_conflicts` for one warp-wide shared-memory instruction.

    ``wavefronts``: total 128-byte wavefronts (cycles of the shared-memory pipe);
    ``ideal_wavefronts``: the number of phases (what a conflict-free access costs);
    ``conflict_degree``: the worst phase's wavefronts (n-way conflict; 1 = none);
    ``phase_wavefronts``: per phase; ``bank_words``: per phase, distinct words per bank (32 ints).

    >>> bank_conflicts([8 * t for t in range(32)], 8)       # 8-byte loads: two half-warp phases
    BankConflicts(wavefronts=2, ideal_wavefronts=2, conflict_degree=1, phase_wavefronts=(1, 1))
    """
    wavefronts: int
    ideal_wavefronts: int
    conflict_degree: int
    phase_wavefronts: tuple
    bank_words: tuple = field(repr=False)

    @property
    def conflict_free(self) -> bool:
        return self.wavefronts == self.ideal_wavefronts


def _phases(bytes_per_access: int, n_threads: int, threads_per_phase: int | None):
    if threads_per_phase is None:
        threads_per_phase = {8: 16, 16: 8}.get(bytes_per_access, 32)
    return [list(range(s, min(s + threads_per_phase, n_threads))) for s in range(0, n_threads, threads_per_phase)]


def bank_conflicts(addresses, bytes_per_access: int = 4, threads_per_phase: int | None = None) -> BankConflicts:
    """Wavefronts and conflict degree of one warp access (model in the module docstring).

    ``addresses``: the byte address each thread (lane 0, 1, ...) accesses, at most 32, ``None`` for an
    inactive lane; each must be a multiple of ``bytes_per_access`` (1, 2, 4, 8 or 16).  A thread's
    access covers ``max(1, bytes/4)`` consecutive words.  ``threads_per_phase`` overrides the phase
    size (e.g. 8 for ldmatrix's 8 row addresses per matrix).

    Math: wavefronts = sum over phases p of max over banks b of |{a // 4 : a in p, bank(a) = b}|.

    Example: 32 threads reading a column of a 32x32 fp32 row-major tile (stride 128 B) all hit bank
    0 with 32 distinct words::

        >>> bank_conflicts([128 * t for t in range(32)]).conflict_degree
        32
    """
    op = "bank_conflicts"
    if bytes_per_access not in _ACCESS_BYTES:
        raise LayoutError(f"{op}: bytes_per_access={bytes_per_access}; shared-memory accesses are 1, 2, 4, 8 or 16 bytes")
    addresses = list(addresses)
    if not 0 < len(addresses) <= 32:
        raise LayoutError(f"{op}: got {len(addresses)} addresses; a warp has 1 to 32 threads")
    for t, a in enumerate(addresses):
        if a is None:
            continue
        if int(a) != a or a < 0:
            raise LayoutError(f"{op}: lane {t} has address {a!r}; addresses are non-negative byte offsets")
        if a % bytes_per_access:
            raise LayoutError(f"{op}: lane {t} address {a} is not a multiple of the {bytes_per_access}-byte access "
                              f"size; misaligned shared-memory accesses fault on the GPU")
    words_per_access = max(1, bytes_per_access // BANK_BYTES)
    phase_w, bank_words = [], []
    for phase in _phases(bytes_per_access, len(addresses), threads_per_phase):
        words = set()
        for t in phase:
            a = addresses[t]
            if a is None:
                continue
            w0 = int(a) // BANK_BYTES
            words.update(range(w0, w0 + words_per_access))
        per_bank = [0] * NUM_BANKS
        for w in words:
            per_bank[w % NUM_BANKS] += 1
        phase_w.append(max(per_bank) if words else 0)
        bank_words.append(tuple(per_bank))
    active = [w for w in phase_w]
    ideal = sum(1 for w in active if w > 0)
    return BankConflicts(sum(phase_w), ideal, max(phase_w), tuple(phase_w), tuple(bank_words))




def layout_bank_conflicts(thread_to_element, smem_layout, element_bytes: int, vector: int = 1,
                          num_threads: int = 32) -> BankConflicts:
    """Bank conflicts of a warp whose lane t accesses elements ``thread_to_element(t) + 0..vector-1``.

    ``thread_to_element`` is a CuTe Layout (or any callable) from lane to a 1-D element index (or
    coordinate) of ``smem_layout``'s domain; ``smem_layout`` maps that to the element offset in shared
    memory: a Layout, or a ``ComposedLayout`` with a Swizzle, which - as when the CuTe DSL puts it on
    a shared-memory pointer - swizzles the *byte* address.  The ``vector`` elements of one access must
    be contiguous in shared memory (checked).

    Example: reading a column of a 32x32 fp32 row-major tile is a 32-way conflict; with the
    128-byte swizzle it is still 4-way (only 8 distinct 16-byte chunks get remapped) - see
    :func:`find_swizzle` for a choice that is conflict-free::

        >>> from layoutlab import make_layout, make_composed_layout, make_swizzle
        >>> tile = make_layout((32, 32), stride=(32, 1))
        >>> column = lambda t: (t, 0)                            # lane t reads row t, column 0
        >>> (layout_bank_conflicts(column, tile, 4).conflict_degree,
        ...  layout_bank_conflicts(column, make_composed_layout(make_swizzle(3, 4, 3), 0, tile), 4).conflict_degree)
        (32, 4)
    """
    op = "layout_bank_conflicts"
    if element_bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"{op}: element_bytes={element_bytes}; shared-memory elements are 1, 2, 4, 8 or 16 bytes")
    access = element_bytes * vector
    if access not in _ACCESS_BYTES:
        raise LayoutError(f"{op}: {vector} x {element_bytes}-byte elements = {access} bytes per access; "
                          f"the widest shared-memory access is 16 bytes")

    def byte_addr(e):
        return _byte_address(smem_layout, e, element_bytes)

    addrs = []
    for t in range(num_threads):
        e = thread_to_element(t)
        first = byte_addr(e)
        if vector > 1:
            idx = e if isinstance(e, int) else None
            if idx is None:
                raise LayoutError(f"{op}: vector > 1 needs thread_to_element to give 1-D element indices")
            for v in range(1, vector):
                if byte_addr(idx + v) != first + v * element_bytes:
                    raise LayoutError(
                        f"{op}: lane {t}'s {vector} elements from index {idx} are not contiguous in shared memory "
                        f"(element {idx + v} is at byte {byte_addr(idx + v)}, not {first + v * element_bytes}); "
                        f"this vector width cannot be one access")
        addrs.append(first)
    return bank_conflicts(addrs, access)


def ldmatrix_row_addresses(smem_layout, element_bytes: int, row0: int, col0: int, num_matrices: int = 4,
                           matrices_along: str = "rows") -> list:
    """The 8 x ``num_matrices`` row addresses ldmatrix reads from a 2-D smem tile (rows = M or N, cols = K).

    Matrix j is 8 rows x 16 bytes starting at (row0 + 8j, col0) (``matrices_along="rows"``) or at
    (row0, col0 + j * 16/element_bytes) (``"cols"``); lane 8j + r supplies the address of row r of
    matrix j.  ``smem_layout`` maps (row, col) to an element offset (Layout or swizzled ComposedLayout).

    >>> from layoutlab import make_layout
    >>> ldmatrix_row_addresses(make_layout((64, 64), stride=(64, 1)), 2, 0, 0, num_matrices=1)
    [0, 128, 256, 384, 512, 640, 768, 896]
    """
    if num_matrices not in (1, 2, 4):
        raise LayoutError(f"ldmatrix_row_addresses: num_matrices={num_matrices}; ldmatrix loads .x1, .x2 or .x4")
    step = 16 // element_bytes
    out = []
    for j in range(num_matrices):
        for r in range(8):
            crd = (row0 + 8 * j + r, col0) if matrices_along == "rows" else (row0 + r, col0 + j * step)
            out.append(_byte_address(smem_layout, crd, element_bytes))
    return out


def _byte_address(smem_layout, crd, element_bytes):
    """Byte address of element ``crd``: a swizzled ComposedLayout swizzles the byte address, as the DSL does."""
    if isinstance(smem_layout, ComposedLayout) and isinstance(smem_layout.inner, Swizzle):
        return smem_layout.byte_address(crd, element_bytes)
    return smem_layout(crd) * element_bytes


def ldmatrix_bank_conflicts(row_addresses) -> BankConflicts:
    """Phase analysis of one ``ldmatrix``: each matrix (8 row addresses of 16 bytes) is one phase.

    A conflict-free matrix touches all 32 banks once (8 rows x 4 words); rows that share banks
    serialise.  Example: 8 rows of a 128-byte-pitch K-major fp16 tile at the same column share the same
    4 banks -> 8-way; under ``S<3,4,3>`` the rows' 16-byte chunks spread out -> conflict-free::

        >>> from layoutlab import make_layout, make_composed_layout, make_swizzle
        >>> tile = make_layout((64, 64), stride=(64, 1))
        >>> swizzled = make_composed_layout(make_swizzle(3, 4, 3), 0, tile)
        >>> [ldmatrix_bank_conflicts(ldmatrix_row_addresses(t, 2, 0, 0, 1)).conflict_degree for t in (tile, swizzled)]
        [8, 1]
    """
    rows = list(row_addresses)
    if len(rows) not in (8, 16, 32):
        raise LayoutError(f"ldmatrix_bank_conflicts: {len(rows)} row addresses; ldmatrix takes 8, 16 or 32 (x1/x2/x4)")
    return bank_conflicts(rows, 16, threads_per_phase=8)


# ----------------------------------------------------------------------------- swizzle search
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


# ----------------------------------------------------------------------------- patterns + GPU check
def classic_patterns() -> dict:
    """Named warp access patterns with known answers, for the chapter and the GPU check.

    Each value is ``(byte addresses of lanes 0..31, bytes_per_access)``.

    >>> bank_conflicts(*classic_patterns()["4B 8-way"]).conflict_degree
    8
    """
    p = {}
    for k in (1, 2, 4, 8, 16, 32):  # 4-byte, k-way: lanes in groups hit the same bank, different words
        p[f"4B {k}-way"] = ([(t % (32 // k)) * 4 + (t // (32 // k)) * 128 for t in range(32)], 4)
    p["4B broadcast (all lanes one word)"] = ([0] * 32, 4)
    p["4B 8 words x 4 lanes broadcast"] = ([(t // 4) * 4 for t in range(32)], 4)
    p["4B column of 32x32 fp32"] = ([t * 128 for t in range(32)], 4)
    p["4B column of 32x33 fp32 (padded)"] = ([t * 132 for t in range(32)], 4)
    p["4B column, 32x32 fp32 swizzled S<5,2,5>"] = ([(t * 128) ^ (((t * 128) >> 5) & 0x7C) for t in range(32)], 4)
    p["8B contiguous"] = ([8 * t for t in range(32)], 8)
    p["8B stride 16 B (2-way)"] = ([16 * t for t in range(32)], 8)
    p["8B stride 256 B"] = ([256 * t for t in range(32)], 8)
    p["16B contiguous"] = ([16 * t for t in range(32)], 16)
    p["16B stride 32 B (2-way)"] = ([32 * t for t in range(32)], 16)
    p["16B ldmatrix rows, 128 B pitch (8-way)"] = ([128 * t for t in range(32)], 16)
    p["16B ldmatrix rows, 128 B pitch, S<3,4,3>"] = ([(128 * t) ^ (((128 * t) >> 3) & 0x70) for t in range(32)], 16)
    return p


_KERNEL = r'''
extern "C" __global__ void smem_probe(const unsigned* __restrict__ offsets, int iters, int zero,
                                      long long* __restrict__ cycles, unsigned* __restrict__ sink) {
    __shared__ __align__(16) unsigned smem[12288];               // 48 KiB
    for (int i = threadIdx.x; i < 12288; i += blockDim.x) smem[i] = i;
    __syncthreads();
    unsigned lane = threadIdx.x & 31;
    unsigned base;
    asm volatile("{ .reg .u64 g; cvta.to.shared.u64 g, %1; cvt.u32.u64 %0, g; }" : "=r"(base) : "l"(smem));
    unsigned addr = base + offsets[lane];
    unsigned acc = 0;
    __syncthreads();
    long long t0 = clock64();
    for (int it = 0; it < iters; ++it) {
        unsigned a = addr + (unsigned)(it & zero);               // zero == 0 at run time: same address
        #pragma unroll
        for (int u = 0; u < 16; ++u) {
            unsigned x0, x1, x2, x3;
#if BYTES == 4
            asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(x0) : "r"(a)); x1 = x2 = x3 = 0;
#elif BYTES == 8
            asm volatile("ld.volatile.shared.v2.u32 {%0,%1}, [%2];" : "=r"(x0), "=r"(x1) : "r"(a)); x2 = x3 = 0;
#else
            asm volatile("ld.volatile.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                         : "=r"(x0), "=r"(x1), "=r"(x2), "=r"(x3) : "r"(a));
#endif
            acc += x0 ^ x1 ^ x2 ^ x3;
        }
    }
    __syncthreads();
    long long t1 = clock64();
    if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
'''


def measure_shared_load_cycles(addresses, bytes_per_access: int, warps: int = 16, iters: int = 256,
                               repeats: int = 5) -> float:
    """Measured shared-memory cycles per warp-wide load of the given pattern (needs a GPU and cupy).

    One block of ``warps`` warps, every warp issuing ``16 * iters`` volatile ``ld.shared`` of the same
    per-lane addresses; cycles (``clock64``) between two barriers divided by the loads of all warps.
    Since the shared-memory pipe serves one 128-byte wavefront per cycle, this tracks the predicted
    ``wavefronts`` once enough warps keep it busy.  Returns the median over ``repeats`` launches.  The
    arguments are checked before any GPU work::

        >>> measure_shared_load_cycles([0] * 32, 2)
        Traceback (most recent call last):
        ...
        layoutlab.errors.LayoutError: measure_shared_load_cycles: bytes_per_access=2 must be 4, 8 or 16
    """
    if bytes_per_access not in (4, 8, 16):
        raise LayoutError(f"measure_shared_load_cycles: bytes_per_access={bytes_per_access} must be 4, 8 or 16")
    offs = [int(a) for a in addresses]
    if len(offs) != 32 or max(offs) + bytes_per_access > 48 * 1024:
        raise LayoutError("measure_shared_load_cycles: need 32 addresses inside the 48 KiB probe buffer")
    import cupy as cp  # GPU-only dependency
    key = bytes_per_access
    kern = _KERNEL_CACHE.get(key)
    if kern is None:
        kern = cp.RawKernel(_KERNEL, "smem_probe", options=(f"-DBYTES={bytes_per_access}",))
        _KERNEL_CACHE[key] = kern
    d_off = cp.asarray(offs, dtype=cp.uint32)
    cycles = cp.zeros(1, dtype=cp.int64)
    sink = cp.zeros(32 * warps, dtype=cp.uint32)
    kern((1,), (32 * warps,), (d_off, cp.int32(2), cp.int32(0), cycles, sink))  # warm-up / compile
    cp.cuda.Device().synchronize()
    vals = []
    for _ in range(repeats):
        kern((1,), (32 * warps,), (d_off, cp.int32(iters), cp.int32(0), cycles, sink))
        cp.cuda.Device().synchronize()
        vals.append(int(cycles.get()[0]) / (iters * 16 * warps))
    vals.sort()
    return vals[len(vals) // 2]


_KERNEL_CACHE: dict = {}


def record_bank_measurements(path: str, warps: int = 16) -> dict:
    """Measure every :func:`classic_patterns` entry on this GPU and write predicted vs measured as JSON."""
    import datetime
    import platform

    import cupy as cp
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    rows = []
    for name, (addrs, nbytes) in classic_patterns().items():
        pred = bank_conflicts(addrs, nbytes)
        meas = measure_shared_load_cycles(addrs, nbytes, warps=warps)
        rows.append({"pattern": name, "bytes_per_access": nbytes, "addresses": addrs,
                     "predicted_wavefronts": pred.wavefronts, "predicted_conflict_degree": pred.conflict_degree,
                     "measured_cycles_per_warp_load": round(meas, 3)})
    base = next(r["measured_cycles_per_warp_load"] for r in rows if r["pattern"] == "4B 1-way")
    for r in rows:
        r["measured_over_1way"] = round(r["measured_cycles_per_warp_load"] / base, 3)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    try:
        import subprocess
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:  # noqa: BLE001 - informational only
        driver = "unknown"
    rec = {
        "gpu": name,
        "compute_capability": f"{props['major']}.{props['minor']}",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "driver": driver,
        "versions": {"nvidia_driver": driver, "cuda_driver_api": cp.cuda.runtime.driverGetVersion(),
                     "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(), "cupy": cp.__version__,
                     "python": platform.python_version()},
        "method": f"1 block x {warps} warps, 16x unrolled volatile ld.shared per iteration, clock64 between "
                  f"barriers / (loads x warps), median of 5",
        "patterns": rows,
    }
    with open(path, "w") as f:
        json.dump(rec, f, indent=1)
    return rec
