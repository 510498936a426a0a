"""Shared-memory banks: the bank model of one warp's access (NVIDIA, Volta through Hopper) and the swizzle search.

32 banks of 4 bytes: address a is in bank ``(a // 4) % 32``; a *wavefront* serves one 4-byte word per bank. A request
splits into *phases*: 32 threads for 1/2/4-byte accesses, 16 for 8 bytes, 8 for 16 bytes (and ldmatrix). Same-word
threads share (broadcast), so a phase costs max over banks of its distinct words there, the request the sum over
phases; the *conflict degree* ("n-way") is the worst phase's cost, ``ideal_wavefronts`` the number of phases.

The swizzle search (:func:`find_swizzle`): the shared-memory layout (a CuTe ``Sw<B,M,S>`` or a general F2 swizzle)
that keeps every access of a tile conflict-free (the linear-layout "optimal swizzle"). The GPU check of the model
(cupy, ``clock64``) is :mod:`layoutlab.probe.banks`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

from ..cute.swizzle import ComposedLayout, Swizzle
from ..linear.f2 import is_pow2, log2, rank_f2
from ..linear.layout import LinearLayout
from ..errors import LayoutError

__all__ = ["NUM_BANKS", "BANK_BYTES", "BankConflicts", "bank_of", "bank_conflicts", "layout_bank_conflicts",
           "ldmatrix_row_addresses", "ldmatrix_bank_conflicts", "classic_patterns", "SwizzleChoice", "find_swizzle"]


NUM_BANKS = 32
BANK_BYTES = 4


def _check_access_bytes(op: str, name: str, value) -> None:
    if value not in (1, 2, 4, 8, 16):
        raise LayoutError(f"{op}: {name}={value}; shared memory is read and written in 1, 2, 4, 8 or 16 bytes")


def bank_of(address: int) -> int:
    """Bank of a byte address: ``(address // 4) % 32``.

    >>> bank_of(132)
    1
    """
    return (address // BANK_BYTES) % NUM_BANKS


@dataclass(frozen=True)
class BankConflicts:
    """Result of :func:`bank_conflicts` for one warp instruction (terms in the module docstring);
    ``phase_wavefronts`` per phase, ``bank_words`` per phase the distinct words in each of the 32 banks.

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


def _threads_per_phase(bytes_per_access: int) -> int:
    """Threads served together: 32, or 16 / 8 for 8- / 16-byte accesses (half / quarter warps)."""
    return {8: 16, 16: 8}.get(bytes_per_access, 32)


def bank_conflicts(addresses, bytes_per_access: int = 4, threads_per_phase: int | None = None) -> BankConflicts:
    """Wavefronts and conflict degree of one warp access (model in the module docstring).

    ``addresses``: each lane's byte address (at most 32; ``None`` = inactive), multiples of ``bytes_per_access``
    (1, 2, 4, 8, 16); an access covers ``max(1, bytes/4)`` words; ``threads_per_phase`` overrides the phase size.
    Math: wavefronts = sum over phases p of max over banks b of |{a // 4 : a in p, bank(a) = b}|.

    >>> bank_conflicts([128 * t for t in range(32)]).conflict_degree      # a column of a 32x32 fp32 tile
    32
    """
    op = "bank_conflicts"
    _check_access_bytes(op, "bytes_per_access", bytes_per_access)
    addresses = list(addresses)
    if not 0 < len(addresses) <= 32:
        raise LayoutError(f"{op}: got {len(addresses)} addresses; a warp has 1 to 32 threads")
    for t, a in enumerate(addresses):
        if a is not None and (int(a) != a or a < 0):
            raise LayoutError(f"{op}: lane {t} has address {a!r}; addresses are non-negative byte offsets")
        if a is not None and a % bytes_per_access:
            raise LayoutError(f"{op}: lane {t} address {a} is not a multiple of the {bytes_per_access}-byte access "
                              f"size; misaligned shared-memory accesses fault on the GPU")
    n_words = max(1, bytes_per_access // BANK_BYTES)
    step = _threads_per_phase(bytes_per_access) if threads_per_phase is None else threads_per_phase
    bank_words = []
    for s in range(0, len(addresses), step):
        words = {int(a) // BANK_BYTES + k for a in addresses[s:s + step] if a is not None for k in range(n_words)}
        per_bank = Counter(w % NUM_BANKS for w in words)
        bank_words.append(tuple(per_bank[b] for b in range(NUM_BANKS)))
    phase_w = tuple(map(max, bank_words))
    return BankConflicts(sum(phase_w), sum(map(bool, phase_w)), max(phase_w), phase_w, tuple(bank_words))


def layout_bank_conflicts(thread_to_element, smem_layout, element_bytes: int, vector: int = 1,
                          num_threads: int = 32) -> BankConflicts:
    """Bank conflicts of a warp whose lane t accesses elements ``thread_to_element(t) + 0..vector-1``.

    ``thread_to_element`` (a Layout or callable) maps a lane to an element index or coordinate; ``smem_layout``
    (a Layout, or a ComposedLayout whose Swizzle acts on *byte* addresses, as in the CuTe DSL) maps that to the
    element offset. The ``vector`` elements of one access must be contiguous there (checked). ``S<3,4,3>`` only
    permutes 16-byte chunks, so a column of a 32x32 fp32 tile stays 4-way (:func:`find_swizzle` does better):

    >>> from layoutlab import make_layout, make_composed_layout, make_swizzle
    >>> tile = make_layout((32, 32), stride=(32, 1))
    >>> column = lambda t: (t, 0)                            # lane t reads row t, column 0
    >>> (layout_bank_conflicts(column, tile, 4).conflict_degree,
    ...  layout_bank_conflicts(column, make_composed_layout(make_swizzle(3, 4, 3), 0, tile), 4).conflict_degree)
    (32, 4)
    """
    op = "layout_bank_conflicts"
    _check_access_bytes(op, "element_bytes", element_bytes)
    access = element_bytes * vector
    if access not in (1, 2, 4, 8, 16):
        raise LayoutError(f"{op}: {vector} x {element_bytes}-byte elements = {access} bytes per access; "
                          f"the widest shared-memory access is 16 bytes")
    addrs = []
    for t in range(num_threads):
        e = thread_to_element(t)
        addrs.append(_byte_address(smem_layout, e, element_bytes))
        if vector > 1 and not isinstance(e, int):
            raise LayoutError(f"{op}: vector > 1 needs thread_to_element to give 1-D element indices")
        for v in range(1, vector):
            at, want = _byte_address(smem_layout, e + v, element_bytes), addrs[-1] + v * element_bytes
            if at != want:
                raise LayoutError(f"{op}: lane {t}'s {vector} elements from index {e} are not contiguous in shared "
                                  f"memory (element {e + v} is at byte {at}, not {want}); this vector width cannot "
                                  f"be one access")
    return bank_conflicts(addrs, access)


def ldmatrix_row_addresses(smem_layout, element_bytes: int, row0: int, col0: int, num_matrices: int = 4,
                           matrices_along: str = "rows") -> list:
    """The 8 x ``num_matrices`` row addresses ldmatrix reads from a 2-D smem tile (rows = M or N, cols = K).

    Matrix j (8 rows x 16 bytes) starts at (row0 + 8j, col0) (``matrices_along="rows"``) or (row0, col0 +
    j * 16/element_bytes) (``"cols"``); lane 8j + r gives row r of matrix j. ``smem_layout``: as above.

    >>> from layoutlab import make_layout
    >>> ldmatrix_row_addresses(make_layout((64, 64), stride=(64, 1)), 2, 0, 0, num_matrices=1)
    [0, 128, 256, 384, 512, 640, 768, 896]
    """
    if num_matrices not in (1, 2, 4):
        raise LayoutError(f"ldmatrix_row_addresses: num_matrices={num_matrices}; ldmatrix loads .x1, .x2 or .x4")
    _check_access_bytes("ldmatrix_row_addresses", "element_bytes", element_bytes)
    step = 16 // element_bytes
    return [_byte_address(smem_layout, (row0 + 8 * j + r, col0) if matrices_along == "rows" else
                          (row0 + r, col0 + j * step), element_bytes) for j in range(num_matrices) for r in range(8)]


def _byte_address(smem_layout, crd, element_bytes):
    """Byte address of element ``crd``: a swizzled ComposedLayout swizzles the byte address, as the DSL does."""
    if isinstance(smem_layout, ComposedLayout) and isinstance(smem_layout.inner, Swizzle):
        return smem_layout.byte_address(crd, element_bytes)
    return smem_layout(crd) * element_bytes


def ldmatrix_bank_conflicts(row_addresses) -> BankConflicts:
    """Phase analysis of one ``ldmatrix``: each matrix (8 row addresses of 16 bytes) is one phase.

    >>> from layoutlab import make_layout, make_composed_layout, make_swizzle
    >>> tile = make_layout((64, 64), stride=(64, 1))            # 128-byte rows share 4 banks: 8-way
    >>> swizzled = make_composed_layout(make_swizzle(3, 4, 3), 0, tile)
    >>> [ldmatrix_bank_conflicts(ldmatrix_row_addresses(t, 2, 0, 0, 1)).conflict_degree for t in (tile, swizzled)]
    [8, 1]
    """
    rows = list(row_addresses)
    if len(rows) not in (8, 16, 32):
        raise LayoutError(f"ldmatrix_bank_conflicts: {len(rows)} row addresses; ldmatrix takes 8, 16 or 32 (x1/x2/x4)")
    return bank_conflicts(rows, 16, threads_per_phase=8)


def classic_patterns() -> dict:
    """Named warp access patterns with known answers: ``{name: (byte addresses of lanes 0..31, bytes)}``.

    >>> bank_conflicts(*classic_patterns()["4B 8-way"]).conflict_degree
    8
    """
    lanes, plain = range(32), Swizzle(0, 0, 0)
    p = {f"4B {k}-way": ([(t % (32 // k)) * 4 + (t // (32 // k)) * 128 for t in lanes], 4)
         for k in (1, 2, 4, 8, 16, 32)}        # k groups of lanes on the same banks, each a 128-byte row lower
    p["4B broadcast (all lanes one word)"] = ([0] * 32, 4)
    p["4B 8 words x 4 lanes broadcast"] = ([(t // 4) * 4 for t in lanes], 4)
    for name, stride, nbytes, swizzle in [
            ("4B column of 32x32 fp32", 128, 4, plain), ("4B column of 32x33 fp32 (padded)", 132, 4, plain),
            ("4B column, 32x32 fp32 swizzled S<5,2,5>", 128, 4, Swizzle(5, 2, 5)), ("8B contiguous", 8, 8, plain),
            ("8B stride 16 B (2-way)", 16, 8, plain), ("8B stride 256 B", 256, 8, plain),
            ("16B contiguous", 16, 16, plain), ("16B stride 32 B (2-way)", 32, 16, plain),
            ("16B ldmatrix rows, 128 B pitch (8-way)", 128, 16, plain),
            ("16B ldmatrix rows, 128 B pitch, S<3,4,3>", 128, 16, Swizzle(3, 4, 3))]:
        p[name] = ([swizzle(stride * t) for t in lanes], nbytes)
    return p


@dataclass(frozen=True)
class SwizzleChoice:
    """What :func:`find_swizzle` picked: ``swizzle``, a CuTe ``Sw<B,M,S>`` on byte addresses (``None``: general F2);
    ``linear_layout``, it as an F2 matrix on byte-address bits; ``smem_layout``, (dim0, dim1) -> element offset;
    the wavefront counts summed over warp 0's instructions (``per_access``: each); ``vector_bytes``, the access kept::

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


def _access_instructions(ll, element_bytes, row_major, max_vector_bytes):
    """A layout's warp instructions: ([(vector_elems, [(m, n) per lane])], vector bits, lane bases)."""
    bases, names = dict(ll.bases), ll.get_in_dim_names()
    regs, fast = bases.get("register", []), 1 if row_major else 0
    vec_bits = 0  # leading register bits that walk the contiguous dim by 1, 2, 4, ... form the vector
    while (vec_bits < len(regs) and (2 << vec_bits) * element_bytes <= max_vector_bytes
           and regs[vec_bits][fast] == (1 << vec_bits) and regs[vec_bits][1 - fast] == 0):
        vec_bits += 1
    instrs = []
    for r0 in range(0, 1 << len(regs), 1 << vec_bits):
        outs = [ll.apply({d: {"register": r0, "lane": lane}.get(d, 0) for d in names})
                for lane in range(dict(ll.in_dims).get("lane", 1))]
        instrs.append((1 << vec_bits, [(o["dim0"], o["dim1"]) for o in outs]))
    return instrs, vec_bits, [tuple(v) for v in bases.get("lane", [])]


def _f2_layout(phase_spans, n_bits, log_eb, vec_bits):
    """Greedy F2 smem layout (offset bit j -> logical index): vector bits, then *bank* columns, then *row* columns.

    Two lanes of a phase conflict when their difference lies in span(row + same-word columns) but not in the
    same-word part, so each row column is picked to keep every phase's lane span as disjoint from them as possible.
    """
    def rank(vectors):
        return rank_f2(vectors, max(vectors, default=0).bit_length())
    # the vector's logical bits (of the contiguous dim), at least a 4-byte word's: plain low bits
    cols = [1 << k for k in range(max(vec_bits, min(2 - log_eb, n_bits)))]
    same_word = cols[:max(0, 2 - log_eb)]
    n_bank = max(0, min(n_bits, 7 - log_eb) - len(cols))
    # candidates avoid the vector/word bits so every vector stays aligned and contiguous
    cands = sorted((sum(1 << i for i in bits) for n in (1, 2) for bits in combinations(range(len(cols), n_bits), n)),
                   key=lambda v: (v.bit_count(), v))
    shared = [rank(ph + same_word) - rank(same_word) for ph in phase_spans]

    def excess(extra):
        """Per phase: how many more lane differences span(same_word + extra) holds than span(same_word)."""
        w = same_word + extra
        out = [rank(w) - rank(ph + w) + s for ph, s in zip(phase_spans, shared)]
        return max(out, default=0), sum(out)

    rows = []
    for _ in range(n_bits - len(cols) - n_bank):
        rows.append(min((excess(rows + [c]) + (c.bit_count(),), c) for c in cands
                        if rank(cols + rows + [c]) > len(cols) + len(rows))[1])
    bank = []
    for c in cands:
        if len(bank) < n_bank and rank(cols + rows + bank + [c]) > len(cols) + len(rows) + len(bank):
            bank.append(c)
    return cols + bank + rows


def find_swizzle(accesses, tile_shape, element_bytes: int, row_major: bool = True,
                 max_bits: int = 5, max_vector_bytes: int = 16) -> SwizzleChoice:
    """The shared-memory layout that minimises the bank conflicts of all ``accesses`` and keeps their vector width.

    ``accesses``: layouts register/lane[/warp] -> dim0, dim1 on the (M, N) ``tile_shape`` tile, stored row-major
    (``row_major``) or column-major; vectors up to ``max_vector_bytes``. Math: an invertible F2 matrix (index bits
    -> offset bits), vector bits lowest; candidates scored with the bank model: every CuTe ``Sw<B,M,S>`` on bytes
    (B <= ``max_bits``, fewer XOR bits first), then the greedy F2 layout (:func:`_f2_layout`) if strictly better.

    >>> from layoutlab import LinearLayout
    >>> def warp(lanes_along):                 # 32 lanes along one dim, 32 registers along the other
    ...     one = lambda d, i: [1 << i, 0] if d == 0 else [0, 1 << i]
    ...     return LinearLayout.from_bases([("register", [one(1 - lanes_along, i) for i in range(5)]),
    ...                                     ("lane", [one(lanes_along, i) for i in range(5)])], ["dim0", "dim1"])
    >>> c = find_swizzle([warp(1), warp(0)], (32, 32), 4, max_vector_bytes=4)     # transpose: write rows, read columns
    >>> c.swizzle, c.unswizzled_wavefronts, c.wavefronts
    (S<5,2,5>, 1056, 64)
    """
    M, N = (int(x) for x in tile_shape)
    op = "find_swizzle"
    _check_access_bytes(op, "element_bytes", element_bytes)
    for what, x in zip("MN", (M, N)):
        if not is_pow2(x):
            raise LayoutError(f"{op}: tile extent {what}={x} is not a power of two; F2 swizzles need 2^k extents")
    n_bits, log_eb = log2(M * N), log2(element_bytes)
    total_bits = n_bits + log_eb

    def logical(m, n):
        return m * N + n if row_major else m + n * M

    instrs, phase_spans, vec_bits_all = [], [], []
    for ll in accesses:
        ins, vb, lane_bases = _access_instructions(ll, element_bytes, row_major, max_vector_bytes)
        instrs += ins
        vec_bits_all.append(vb)
        k = log2(_threads_per_phase((1 << vb) * element_bytes))      # lane bits of one phase
        phase_spans.append([logical(*lb) for lb in lane_bases[:k] if logical(*lb)])
    vec_bits = max(vec_bits_all)

    def cost(addr_of):
        bcs = [bank_conflicts([addr_of(logical(m, n)) for m, n in crds], vec * element_bytes) for vec, crds in instrs]
        return sum(b.wavefronts for b in bcs), sum(b.ideal_wavefronts for b in bcs), tuple(b.wavefronts for b in bcs)

    f2 = LinearLayout([("offset", [[c] for c in _f2_layout(phase_spans, n_bits, log_eb, vec_bits)])],
                      [("logical", 1 << n_bits)]).invert()        # logical index -> offset
    # the first of the cheapest wins: no swizzle, the CuTe swizzles (fewer XOR bits first), the F2 layout (None)
    cute = [Swizzle(0, 0, 0)] + [Swizzle(b, m, s) for b in range(1, max_bits + 1)
                                 for m in range(vec_bits + log_eb, total_bits)
                                 for s in range(b, total_bits - m - b + 1)]
    addrs = {sw: (lambda e, sw=sw: sw(e * element_bytes)) for sw in cute}
    addrs[None] = lambda e: f2.apply({"logical": e})["offset"] * element_bytes
    costs = {sw: cost(addr_of) for sw, addr_of in addrs.items()}
    swizzle = min(costs, key=lambda sw: costs[sw][0])
    addr_of, best_cost = addrs[swizzle], costs[swizzle]
    smem = LinearLayout([("dim0", [[addr_of(logical(1 << k, 0)) // element_bytes] for k in range(log2(M))]),
                         ("dim1", [[addr_of(logical(0, 1 << k)) // element_bytes] for k in range(log2(N))])],
                        [("offset", M * N)], require_surjective=False)
    # on bytes the swizzle keeps the low log2(eb) bits of element index * eb and sends index bit k to addr_of(2^k)
    byte_bases = [[1 << i] for i in range(log_eb)] + [[addr_of(1 << k)] for k in range(n_bits)]
    sw_matrix = LinearLayout([("offset", byte_bases)], [("offset", 1 << total_bits)])
    return SwizzleChoice(swizzle, sw_matrix, smem, *best_cost[:2], costs[cute[0]][0], (1 << vec_bits) * element_bytes,
                         best_cost[2])


