"""The CuTe DSL's ``cute.nvgpu.cpasync`` copy ``CopyG2SOp`` (``cp.async``), and the bookkeeping of asynchronous
copies on a CPU: ``cp.async`` (sizes, zero-fill, commit groups) and the
``mbarrier`` a TMA load completes (arrivals, transaction bytes, phase parity). Sources: PTX ISA, ``cp.async``,
``cp.async.commit_group`` / ``wait_group`` and ``mbarrier``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cute.atom import CopyOp, make_copy_atom  # noqa: F401 (the examples use make_copy_atom)
from ..cute.basis import is_int
from ..errors import LayoutError
from .common import _check, _dsl_enum, _thread_copy

__all__ = ["CopyG2SOp", "MBarrier", "mbarrier_try_wait", "cp_async_copy", "cp_async_plan", "cp_async_wait_group",
           "CP_ASYNC_SIZES"]

#: The copy sizes ``cp.async`` takes (``.cg`` only 16).
CP_ASYNC_SIZES = (4, 8, 16)


class MBarrier:
    """An ``mbarrier``: a phase completes when all ``count`` arrivals came and no transaction bytes are pending;
    ``phase`` (completed phases) then grows by one and the arrivals re-arm. ``arrive_expect_tx(bytes)`` is an
    arrival raising the byte count; the TMA's ``complete_tx`` lowers it. ``log``: ``(event, phase, pending, tx)``.

    >>> bar = MBarrier(1)                      # one producer thread arrives per phase
    >>> bar.arrive_expect_tx(16384)             # ... and expects a 16 KiB TMA box
    >>> bar.phase, bar.pending, bar.tx
    (0, 0, 16384)
    >>> bar.complete_tx(16384)                  # the TMA's bytes land: the phase completes
    >>> bar.phase, bar.parity, bar.try_wait(parity=0)
    (1, 1, True)
    """

    def __init__(self, count: int):
        if not is_int(count) or not 1 <= count < 2 ** 20:
            raise LayoutError(f"MBarrier: expected arrival count {count!r} must be in 1..2^20-1")
        self.count, self.pending, self.tx, self.phase, self.log = count, count, 0, 0, []

    @property
    def parity(self) -> int:
        return self.phase % 2

    def _event(self, what):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count
            what += " -> phase complete"
        self.log.append((what, self.phase, self.pending, self.tx))

    def arrive(self, n: int = 1):
        if n > self.pending:
            raise LayoutError(f"MBarrier.arrive: {n} arrivals but only {self.pending} pending in this phase")
        self.pending -= n
        self._event(f"arrive({n})")

    def expect_tx(self, nbytes: int):
        self.tx += nbytes
        self.log.append((f"expect_tx({nbytes})", self.phase, self.pending, self.tx))

    def arrive_expect_tx(self, nbytes: int):
        if self.pending < 1:
            raise LayoutError("MBarrier.arrive_expect_tx: no arrival pending in this phase")
        self.tx += nbytes
        self.pending -= 1
        self._event(f"arrive.expect_tx({nbytes})")

    def complete_tx(self, nbytes: int):
        if nbytes > self.tx and self.pending == 0:
            raise LayoutError(f"MBarrier.complete_tx: {nbytes} bytes completed but only {self.tx} expected; the "
                              f"expect-tx count must equal the bytes the TMA writes (the box bytes)")
        self.tx -= nbytes
        self._event(f"complete_tx({nbytes})")

    def try_wait(self, parity: int) -> bool:
        return mbarrier_try_wait(self.phase, parity)


def mbarrier_try_wait(completed_phases: int, parity: int) -> bool:
    """``mbarrier.try_wait.parity`` after ``completed_phases`` completions: True once the phase of parity ``parity``
    completed (the current parity differs); a fresh barrier passes parity 1: producers wait on empty ones from 1.

    >>> mbarrier_try_wait(3, parity=0), mbarrier_try_wait(3, parity=1)
    (True, False)
    """
    if parity not in (0, 1):
        raise LayoutError(f"mbarrier_try_wait: parity {parity!r} must be 0 or 1")
    return completed_phases % 2 != parity


def cp_async_copy(cp_size: int, src_size=None, *, cache="ca", src_addr=0, dst_addr=0):
    """One ``cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}``: ``(bytes read, bytes zero-filled)``.
    ``cp-size``: 4, 8 or 16 (``.cg``: 16), both addresses aligned to it; ``src-size <= cp-size`` bytes are read, the
    rest zero-filled (``src-size = 0`` zero-fills a predicated-off tile edge).

    >>> cp_async_copy(16, 6)          # 6 bytes read, 10 zero-filled
    (6, 10)
    """
    if cp_size not in CP_ASYNC_SIZES:
        raise LayoutError(f"cp_async_copy: cp-size {cp_size} must be 4, 8 or 16 bytes")
    if cache not in ("ca", "cg"):
        raise LayoutError(f"cp_async_copy: cache {cache!r} must be 'ca' or 'cg'")
    if cache == "cg" and cp_size != 16:
        raise LayoutError(f"cp_async_copy: cp.async.cg takes only cp-size 16 (got {cp_size}); use .ca")
    src = cp_size if src_size is None else src_size
    if not is_int(src) or not 0 <= src <= cp_size:
        raise LayoutError(f"cp_async_copy: src-size {src_size!r} must be in 0..cp-size ({cp_size})")
    for name, a in (("src", src_addr), ("dst", dst_addr)):
        if a % cp_size:
            raise LayoutError(f"cp_async_copy: {name} address {a:#x} is not aligned to cp-size {cp_size}; "
                              f"use {a - a % cp_size:#x} or a smaller cp-size")
    return src, cp_size - src


def cp_async_plan(tile_bytes: int, threads: int, cp_size: int = 16) -> dict:
    """Total and per-thread ``cp_size``-byte ``cp.async`` copies of a ``tile_bytes`` tile (whole copies per thread).

    >>> cp_async_plan(128 * 32 * 2, threads=128)          # a 128 x 32 fp16 tile
    {'copies': 512, 'per_thread': 4}
    """
    if cp_size not in CP_ASYNC_SIZES:
        raise LayoutError(f"cp_async_plan: cp-size {cp_size} must be 4, 8 or 16 bytes")
    for name, v in (("tile_bytes", tile_bytes), ("threads", threads)):
        if v <= 0:
            raise LayoutError(f"cp_async_plan: {name}={v}; it must be a positive number")
    if tile_bytes % cp_size:
        raise LayoutError(f"cp_async_plan: {tile_bytes} bytes are not whole {cp_size}-byte copies")
    copies = tile_bytes // cp_size
    if copies % threads:
        raise LayoutError(f"cp_async_plan: {copies} copies do not split evenly over {threads} threads; use a "
                          f"thread count that divides {copies}")
    return {"copies": copies, "per_thread": copies // threads}


def cp_async_wait_group(committed: int, n: int) -> int:
    """Groups done when ``cp.async.wait_group n`` returns after ``committed`` commit_groups: all but the ``n`` last.

    >>> cp_async_wait_group(3, 1)          # 3 stages in flight: groups 0 and 1 are done
    2
    """
    if n < 0 or committed < 0:
        raise LayoutError("cp_async_wait_group: counts must be >= 0")
    return max(committed - n, 0)


@dataclass(frozen=True)
class CopyG2SOp(CopyOp):
    """``cp.async.ca/.cg.shared.global`` (sm_80; DSL: ``cute.nvgpu.cpasync.CopyG2SOp(cache_mode)``): a thread copies
    4, 8 or 16 bytes global -> shared; ``cache_mode`` ``"always"`` (.ca) or ``"global"`` (.cg, 16 bytes only).

    >>> make_copy_atom(CopyG2SOp("global"), "f16", num_bits_per_copy=128).name
    'SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>'
    """

    cache_mode: str = "always"

    def __post_init__(self):
        object.__setattr__(self, "cache_mode", _dsl_enum(self.cache_mode, "CopyG2SOp cache_mode", ("always", "global")))

    def _make_atom(self, vt, bits, nb):
        _check("make_copy_atom: num_bits_per_copy", nb, (32, 64, 128),
               "32, 64 or 128: cp.async copies 4, 8 or 16 bytes per thread")
        if self.cache_mode == "global" and nb != 128:
            raise LayoutError("make_copy_atom: cp.async.cg (cache_mode='global') copies 16 bytes only; "
                              "use num_bits_per_copy=128 or cache_mode='always'")
        if nb % bits:
            raise LayoutError(f"make_copy_atom: {nb} bits per copy is not a whole number of {vt} values ({bits} bits)")
        return _thread_copy(self, f"SM80_CP_ASYNC_CACHE{self.cache_mode.upper()}<uint{nb}_t>", vt, nb)
