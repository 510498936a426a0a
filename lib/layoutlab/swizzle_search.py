"""The swizzle search: the shared-memory layout (a CuTe ``Sw<B,M,S>`` or a general F2 swizzle) that keeps every
access of a tile conflict-free (the linear-layout "optimal swizzle"); re-exported by :mod:`layoutlab.banks`."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from .bank_model import _check_access_bytes, _threads_per_phase, bank_conflicts
from .errors import LayoutError
from .linear import LinearLayout
from .linear_f2 import is_pow2, log2, rank_f2
from .swizzle import Swizzle

__all__ = ["SwizzleChoice", "find_swizzle"]


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
