"""The last wave of a persistent GEMM, and the stream-K split that removes it: a pure-Python schedule.

A persistent kernel runs ``num_ctas`` CTAs that walk the output tiles: CTA ``c`` takes tiles ``c, c + P, c + 2P, ...``
(``P = num_ctas``). When the tile count is not a multiple of ``P``, the last wave is partial: ``tiles % P`` CTAs
compute a tile while the others idle. The hybrid schedule here keeps the ``full_waves`` whole waves as they are
(*data-parallel* tiles, one CTA each) and splits the K loop of the tail tiles over **all** CTAs (*stream-K*): the
``tail_tiles x k_iters`` k-tiles of the tail are cut into ``P`` contiguous, nearly equal ranges, CTA ``c`` taking
global k-tiles ``[c * S // P, (c + 1) * S // P)`` (``S`` the tail's k-tile count), which is at most two pieces of
two consecutive tail tiles. The pieces of one tile are added up in fp32; which CTA adds the last piece (and so
writes the tile) is decided at run time by a per-tile counter (see :mod:`layoutlab.kernels.hopper_streamk`).

:func:`stream_k_unit` is the whole schedule as arithmetic (``//``, ``*``, ``+``, ``-``, min, max, select): the kernel
calls it with the CuTe DSL's operations on device integers, :func:`stream_k_schedule` with Python's, so the two
cannot disagree. The split is a convention of this course, after CUTLASS's "data-parallel + stream-K" hybrid
(``cutlass/include/cutlass/gemm/kernel/tile_scheduler_params.h``, ``PersistentTileSchedulerSm90StreamKParams``).
"""

import functools
import inspect
import math
from dataclasses import dataclass

from ..errors import LayoutError

__all__ = ["StreamKSchedule", "stream_k_schedule", "stream_k_split", "stream_k_unit", "stream_k_owner",
           "StreamKDecision", "stream_k_pays", "FIXUP_COST"]


def _select(cond, a, b):
    return a if cond else b


def _integer_arithmetic(fn):
    """For the functions that run on Python's integers and, in the kernel, on the DSL's (so no isinstance check):
    integer arithmetic fails only on an argument that is no integer (whatever its operators raise) or a zero
    divisor, refused here with the arguments given."""
    names = list(inspect.signature(fn).parameters)

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as err:  # noqa: BLE001 - see above
            given = ", ".join(f"{n}={a!r}" for n, a in zip(names, args))
            raise LayoutError(f"{fn.__name__}: {given}; its arguments are integers, the CTA count and the k-tile "
                              f"counts >= 1 ({type(err).__name__}: {err})") from None
    return checked


@_integer_arithmetic
def stream_k_split(tiles, num_ctas, k_iters):
    """``(full_waves, dp_tiles, sk_iters)``: whole waves of tiles, the tiles they cover (``full_waves * num_ctas``),
    and the k-tiles of the tail that stream-K spreads over all CTAs. Pure integer arithmetic (also run on device).

    >>> stream_k_split(2048, 132, 128)        # 8192^3 in 128 x 256 tiles on 132 SMs: 15 waves + 68 tiles
    (15, 1980, 8704)
    """
    full_waves = tiles // num_ctas
    dp_tiles = full_waves * num_ctas
    return full_waves, dp_tiles, (tiles - dp_tiles) * k_iters


@_integer_arithmetic
def stream_k_unit(cta, u, num_ctas, full_waves, dp_tiles, sk_iters, k_iters, *, min_=min, max_=max,
                  select=_select):
    """The ``u``-th unit of work of CTA ``cta``: ``(tile, k_begin, k_end)``, k-tiles ``[k_begin, k_end)`` of linear
    tile ``tile``; ``k_begin >= k_end`` means the CTA has no unit ``u`` (nor any after it). Units ``0 ..
    full_waves - 1`` are whole data-parallel tiles ``cta + u * num_ctas``; then the CTA's stream-K range
    ``[cta * sk_iters // num_ctas, (cta + 1) * sk_iters // num_ctas)`` of the tail's k-tiles, cut at tile borders.
    ``min_``, ``max_``, ``select`` default to Python's; the kernel passes the DSL's (no branch, no division of a
    negative number, so both give the same integers). Without the split the kernel passes ``full_waves =
    ceil(tiles / num_ctas)``, ``dp_tiles = tiles``, ``sk_iters = 0``: every tile whole, the last wave partial.

    >>> [stream_k_unit(5, u, 132, 15, 1980, 8704, 128) for u in (0, 14, 15, 16)]
    [(5, 0, 128), (1853, 0, 128), (1982, 73, 128), (1983, 0, 11)]
    """
    begin = cta * sk_iters // num_ctas
    end = (cta + 1) * sk_iters // num_ctas
    t = begin // k_iters + (u - full_waves)              # the tail tile this unit would fall in
    sk_b = max_(begin - t * k_iters, 0)
    sk_e = min_(end - t * k_iters, k_iters)
    # a data-parallel unit needs a tile: with the split off (see stream_k_pays) the last wave is partial
    dp = (u < full_waves) & (cta + u * num_ctas < dp_tiles)
    return (select(dp, cta + u * num_ctas, dp_tiles + t), select(dp, 0, sk_b), select(dp, k_iters, sk_e))


@_integer_arithmetic
def stream_k_owner(i, num_ctas, sk_iters):
    """The CTA whose stream-K range holds tail k-tile ``i`` (``0 <= i < sk_iters``, counted over the tail tiles in
    order): the ``c`` with ``c * sk_iters // num_ctas <= i < (c + 1) * sk_iters // num_ctas``, which is
    ``ceil((i + 1) * num_ctas / sk_iters) - 1``. The CTA that finishes a tail tile reads the pieces of the owners
    of its first to its last k-tile.

    >>> [stream_k_owner(i, 132, 8704) for i in (0, 64, 65, 127, 130, 131)]   # k-tiles 0-127: tail tile 0
    [0, 0, 1, 1, 1, 2]
    """
    return ((i + 1) * num_ctas + sk_iters - 1) // sk_iters - 1


@dataclass(frozen=True)
class StreamKSchedule:
    """A data-parallel + stream-K schedule (:func:`stream_k_schedule`). Tiles are numbered linearly (the kernel
    maps the number to a tile coordinate in its rasterization order); ``units[c]`` lists CTA ``c``'s
    ``(tile, k_begin, k_end)`` in the order it runs them.

    >>> s = stream_k_schedule(1000, 1000, 640, (128, 256, 64), 6)      # 8 x 4 = 32 tiles: 5 waves of 6, 2 left
    >>> s.tail_tiles, s.sk_iters, s.units[0]                           # 2 x 10 tail k-tiles, 3 or 4 per CTA
    (2, 20, ((0, 0, 10), (6, 0, 10), (12, 0, 10), (18, 0, 10), (24, 0, 10), (30, 0, 3)))
    """

    m: int
    n: int
    k: int
    tile_mnk: tuple
    num_ctas: int
    tiles: int
    k_iters: int
    full_waves: int
    dp_tiles: int
    sk_iters: int
    units: tuple

    @property
    def tail_tiles(self):
        """Tiles of the partial last wave: the ones stream-K splits (0 when the waves are whole)."""
        return self.tiles - self.dp_tiles

    @property
    def waves(self):
        """Tiles per CTA, a fraction: 15.5 means 15 full waves and a half-empty last one."""
        return self.tiles / self.num_ctas

    @property
    def idle_fraction(self):
        """Without the split: the share of the CTAs' time spent idle, all in the last wave (1 - waves / ceil)."""
        return 1 - self.waves / math.ceil(self.waves)

    def k_iters_per_cta(self):
        """k-tiles each CTA computes (data-parallel and stream-K together): the work balance."""
        return tuple(sum(e - b for _, b, e in us) for us in self.units)

    def pieces(self, tile):
        """``((cta, k_begin, k_end), ...)``: who computes which k-range of ``tile``, in k order. For a tail tile the
        CTA whose piece arrives last (at run time) adds them up and writes the tile."""
        if not 0 <= tile < self.tiles:
            raise LayoutError(f"StreamKSchedule.pieces: tile {tile} is not in [0, {self.tiles})")
        return tuple(sorted(((c, b, e) for c, us in enumerate(self.units) for t, b, e in us if t == tile),
                            key=lambda p: p[1]))

    def makespan(self, split=True):
        """The busiest CTA's work in tile-times (k_iters k-tiles each): ``ceil(waves)`` without the split,
        ``full_waves + (largest stream-K range) / k_iters`` with it (ignoring the fixup's cost)."""
        if not split:
            return math.ceil(self.waves)
        return max(self.k_iters_per_cta()) / self.k_iters


def stream_k_schedule(M, N, K, tile_mnk, num_ctas):
    """The data-parallel + stream-K schedule of an ``M x N x K`` GEMM in ``tile_mnk`` tiles on ``num_ctas``
    persistent CTAs (each unit computed by :func:`stream_k_unit`, the kernel's own arithmetic).

    >>> s = stream_k_schedule(8192, 8192, 8192, (128, 256, 64), 132)
    >>> s.tiles, s.full_waves, s.tail_tiles, s.k_iters, round(s.waves, 2), round(100 * s.idle_fraction, 1)
    (2048, 15, 68, 128, 15.52, 3.0)
    >>> s.units[1][-3:]                  # CTA 1: its last data-parallel tile, then 66 k-tiles of two tail tiles
    ((1849, 0, 128), (1980, 65, 128), (1981, 0, 3))
    >>> sorted(set(s.k_iters_per_cta())), s.makespan(split=False), round(s.makespan(), 3)
    ([1985, 1986], 16, 15.516)
    >>> s.pieces(1981)                   # tail tile 1981: pieces of three CTAs; the last to arrive writes it
    ((1, 0, 3), (2, 3, 69), (3, 69, 128))
    >>> stream_k_schedule(8192, 8192, 8192, (128, 256, 64), 0)
    Traceback (most recent call last):
    ...
    layoutlab.errors.LayoutError: stream_k_schedule: num_ctas=0; a persistent grid needs at least 1 CTA
    """
    for name, v in (("M", M), ("N", N), ("K", K)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise LayoutError(f"stream_k_schedule: {name}={v!r}; the problem sizes must be integers >= 1")
    if (not isinstance(tile_mnk, tuple) or len(tile_mnk) != 3
            or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 1 for t in tile_mnk)):
        raise LayoutError(f"stream_k_schedule: tile_mnk={tile_mnk!r}; give the tile as a tuple of three integers "
                          f">= 1, (tile_m, tile_n, tile_k), e.g. (128, 256, 64)")
    if not isinstance(num_ctas, int) or isinstance(num_ctas, bool) or num_ctas < 1:
        raise LayoutError(f"stream_k_schedule: num_ctas={num_ctas!r}; a persistent grid needs at least 1 CTA")
    bm, bn, bk = tile_mnk
    tiles = math.ceil(M / bm) * math.ceil(N / bn)
    k_iters = math.ceil(K / bk)
    ctas = min(num_ctas, tiles)                     # never more persistent CTAs than tiles (the kernel's rule)
    full_waves, dp_tiles, sk_iters = stream_k_split(tiles, ctas, k_iters)
    units = []
    for c in range(ctas):
        mine, u = [], 0
        while True:
            t, b, e = stream_k_unit(c, u, ctas, full_waves, dp_tiles, sk_iters, k_iters)
            if b >= e:
                break
            mine.append((t, b, e))
            u += 1
        units.append(tuple(mine))
    return StreamKSchedule(M, N, K, tile_mnk, ctas, tiles, k_iters, full_waves, dp_tiles, sk_iters, tuple(units))


#: The split's price on the busiest CTA, in k-tile times: ``(constant, fraction of the tile's k_iters)``. Measured on
#: the H200 (bf16 and fp16, 128 x 256 x 64 tiles in 2 x 1 clusters, ``results/gemm_ladder_h200/streamk_fixup.json``):
#: storing and loading fp32 pieces, one more MMA drain per unit, and tail pieces that, running at different k
#: offsets at once, share fewer A and B slices in L2 than whole tiles of one wave do.
FIXUP_COST = (8.4, 0.31)


@dataclass(frozen=True)
class StreamKDecision:
    """:func:`stream_k_pays`'s answer. ``saved_k_tiles``: k-tiles the busiest CTA no longer runs with the split
    (``k_iters * ceil(waves) - ceil(tiles * k_iters / ctas)``); ``cost_k_tiles``: the split's price in the same unit
    (:data:`FIXUP_COST`); ``split``: whether the saving beats the price.

    >>> round(StreamKDecision(True, 62, 48.08, 128).net_k_tiles, 2)
    13.92
    """

    split: bool
    saved_k_tiles: int
    cost_k_tiles: float
    k_iters: int

    @property
    def net_k_tiles(self):
        """What the split gains (positive) or loses (negative) on the busiest CTA, in k-tile times."""
        return self.saved_k_tiles - self.cost_k_tiles


def stream_k_pays(M, N, K, tile_mnk, num_ctas, *, cost=FIXUP_COST):
    """Whether splitting the last wave (:func:`stream_k_schedule`) makes an ``M x N x K`` GEMM faster: the split
    saves the empty part of the last wave on the busiest CTA, ``saved`` k-tile times, and costs ``cost[0] +
    cost[1] * k_iters`` k-tile times (the fixup; :data:`FIXUP_COST` was measured). Split only when saved > cost.
    The stream-K kernel asks this on the host for every launch.

    >>> d = stream_k_pays(8192, 8192, 8192, (256, 256, 64), 66)    # 15.5 waves: half of the last one empty
    >>> d.split, d.saved_k_tiles, d.cost_k_tiles
    (True, 62, 48.08)
    >>> d = stream_k_pays(4096, 4096, 4096, (256, 256, 64), 66)    # 3.9 waves: 58 of 66 clusters busy in the last
    >>> d.split, d.saved_k_tiles, d.cost_k_tiles
    (False, 7, 28.24)
    >>> stream_k_pays(2048, 2048, 2048, (256, 256, 64), 66).split  # one whole wave: nothing to save
    False
    >>> stream_k_pays(64, 64, 64, (128, 256, 64), 132, cost=(-1, 0))
    Traceback (most recent call last):
    ...
    layoutlab.errors.LayoutError: stream_k_pays: cost=(-1, 0); give (k-tiles, fraction of a tile's k-tiles), both >= 0
    """
    if (not isinstance(cost, tuple) or len(cost) != 2
            or not all(isinstance(c, (int, float)) and not isinstance(c, bool) and c >= 0 for c in cost)):
        raise LayoutError(f"stream_k_pays: cost={cost!r}; give (k-tiles, fraction of a tile's k-tiles), both >= 0")
    s = stream_k_schedule(M, N, K, tile_mnk, num_ctas)
    busiest = -(-s.tiles * s.k_iters // s.num_ctas)              # ceil: the split balances within one k-tile
    saved = s.k_iters * -(-s.tiles // s.num_ctas) - busiest
    price = cost[0] + cost[1] * s.k_iters
    return StreamKDecision(saved > price, saved, round(float(price), 2), s.k_iters)
