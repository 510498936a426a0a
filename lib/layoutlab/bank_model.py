"""The bank model of one warp's shared-memory access (NVIDIA, Volta through Hopper); re-exported by ``banks``.

32 banks of 4 bytes: address a is in bank ``(a // 4) % 32``; a *wavefront* serves one 4-byte word per bank. A request
splits into *phases*: 32 threads for 1/2/4-byte accesses, 16 for 8 bytes, 8 for 16 bytes (and ldmatrix). Same-word
threads share (broadcast), so a phase costs max over banks of its distinct words there, the request the sum over
phases; the *conflict degree* ("n-way") is the worst phase's cost, ``ideal_wavefronts`` the number of phases.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .errors import LayoutError
from .swizzle import ComposedLayout, Swizzle

__all__ = ["NUM_BANKS", "BANK_BYTES", "BankConflicts", "bank_of", "bank_conflicts", "layout_bank_conflicts",
           "ldmatrix_row_addresses", "ldmatrix_bank_conflicts", "classic_patterns"]

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
