"""The measured pipeline timeline of the Hopper GEMMs, the record the kernels write: decode, check, summarise.

:func:`layoutlab.bench.timeline.record_timeline` records it; ``python -m layoutlab.bench.timeline OUT.json
[--kernels ...]`` checks the instrumented kernels against float64 and records a 4096^3 bf16 timeline of each
(``results/gemm_timeline_h100.json``: ``gemm_hopper_ws`` and ``gemm_hopper``;
``results/gemm_timeline_pingpong.json``: ``gemm_hopper_pingpong`` beside ``gemm_hopper_ws`` in one run). With
``config.timeline=True`` one lane per warp role stores ``%globaltimer`` and ``%clock64`` (PTX ISA, "Special
Registers") with each event (:data:`EVENTS`); ``mma_end`` is when ``wgmma.wait_group`` returned, a load's arrival
when the first consumer saw its full barrier complete. ``%globaltimer`` is coarse on the H100 (256-ns steps in the
recorded run): durations within a CTA are read from ``%clock64`` cycles (one SM, one counter) and converted with the
record's ``ns_per_cycle``, a fit of the two counters (:func:`clock_fit` recomputes it from the events).
"""

import math
import re
import statistics

import numpy as np

from ..errors import LayoutError
from .hopper import TIMELINE_COLUMNS, TIMELINE_EVENTS, HopperGemmConfig, timeline_buffer_shape

__all__ = ["KERNELS", "EVENTS", "timeline_config", "pipeline_stages", "decode_timeline",
           "check_timeline_record", "validate_timeline", "summarize_timeline", "select_record", "timer_step_ns",
           "clock_fit", "event_times", "steady_tflops", "format_summary"]

KERNELS = ("gemm_hopper_ws", "gemm_hopper", "gemm_hopper_pingpong")
#: The kernels whose warpgroup 0 is the producer and warpgroups 1, 2 the consumers.
_SPECIALIZED = ("gemm_hopper_ws", "gemm_hopper_pingpong")
EVENTS = TIMELINE_EVENTS
#: Below this many nanoseconds between distinct %globaltimer values the timer is used as is.
FINE_TIMER_NS = 100
_EVENT_KEYS = ("cta", "role", "warp", "event", "tile", "k_tile", "stage", "t_ns")
_PRODUCER_SUB = {0: "empty_wait", 1: "load_issue"}
_CONSUMER_SUB = {0: "full_wait", 1: "load_arrive", 2: "mma_start", 3: "mma_end"}


def timeline_config(kernel_name, num_sms=132, **fields):
    """The kernel's default configuration with ``timeline=True`` (``fields`` override others).

    >>> timeline_config("gemm_hopper")
    HopperGemmConfig(tile_m=128, tile_n=256, tile_k=64, stages=0, cluster_mn=(1, 1), timeline=True)
    """
    if _kernel_name(kernel_name) == "gemm_hopper_ws":
        from .hopper_ws import HopperWsConfig
        return HopperWsConfig(num_sms=num_sms, timeline=True, **fields)
    if kernel_name == "gemm_hopper_pingpong":
        from .hopper_pingpong import HopperPingpongConfig
        return HopperPingpongConfig(num_sms=num_sms, timeline=True, **fields)
    return HopperGemmConfig(timeline=True, **fields)


def pipeline_stages(kernel_name, config, itemsize=2):
    """The shared-memory ring depth the kernel builds (as its ``_setup``): 1 KiB reserved for barriers, for
    gemm_hopper_ws also its C staging buffers (``epi_stages`` of tile_m x 32), for gemm_hopper_pingpong those of
    each of its two consumers.

    >>> pipeline_stages("gemm_hopper", timeline_config("gemm_hopper"))
    4
    >>> pipeline_stages("gemm_hopper_pingpong", timeline_config("gemm_hopper_pingpong"))
    5
    """
    staging = {"gemm_hopper_ws": 1, "gemm_hopper_pingpong": 2}.get(_kernel_name(kernel_name), 0) * (
        config.tile_m * 32 * getattr(config, "epi_stages", 0) * itemsize)
    return config.ab_stages(reserved_bytes=1024 + staging, itemsize=itemsize)


def _kernel_name(name):
    if name not in KERNELS:
        raise LayoutError(f"timeline: unknown kernel {name!r}; the instrumented kernels are {list(KERNELS)}")
    return name


def _role_name(role):
    return "producer" if role == 0 else f"consumer {role - 1}"


def _role_warp(kernel_name, role):
    """The warp whose lane 0 records ``role``: warp 0 loads; a consumer warpgroup's first warp."""
    if role == 0:
        return 0
    return 4 * role if kernel_name in _SPECIALIZED else 4 * (role - 1)


def _cta_tile(kernel_name, role, tile):
    """The CTA's tile ordinal of a role's ``tile``-th recorded tile: gemm_hopper_pingpong's consumer c computes the
    CTA's tiles c, c + 2, c + 4, ... (its own count is what it stamps); every other role sees every tile."""
    return 2 * tile + role - 1 if kernel_name == "gemm_hopper_pingpong" and role > 0 else tile


def decode_timeline(raw, kernel_name, config, k):
    """The events of a raw timeline buffer (int64, :func:`~layoutlab.kernels.hopper.timeline_buffer_shape`,
    flattened or not; unwritten slots hold -1) as ``(events, clock)``: ``events`` dicts with ``cta, role, warp,
    event, tile, k_tile, stage, tile_mn, cycles, t_ns`` (``tile``: the CTA's tile ordinal; ``t_ns``: the ``%globaltimer`` reading, 0 at the earliest
    event; ``cycles``: ``%clock64``, 0 at the CTA's earliest), sorted by time; ``clock`` gives the timer's step and,
    for a coarse timer, the fitted ``ns_per_cycle`` (:func:`event_times` uses it). Refuses (LayoutError) a wrong-size
    buffer and a slot whose stored description disagrees with its place (a lost or raced write). A made-up buffer, K = 64 (columns: :data:`TIMELINE_COLUMNS`):

    >>> cfg = timeline_config("gemm_hopper")
    >>> raw = np.full(timeline_buffer_shape("gemm_hopper", cfg, 64), -1)
    >>> raw[0, 0, 0, 0] = (1000, 7000, 0, 0, 0, 0, 0, 0)     # producer slot 0: empty_wait of k-tile 0
    >>> raw[0, 0, 0, 1] = (1040, 7060, 1, 0, 0, 0, 0, 0)     # producer slot 1: load_issue
    >>> raw[0, 1, 0, 1] = (1500, 7750, 3, 0, 0, 0, 0, 0)     # consumer 0, slot 1: load_arrive
    >>> events, clock = decode_timeline(raw, "gemm_hopper", cfg, 64)
    >>> [(e["role"], e["event"], float(e["t_ns"]), e["cycles"]) for e in events]
    [('producer', 'empty_wait', 0.0, 0), ('producer', 'load_issue', 40.0, 60), ('consumer 0', 'load_arrive', 500.0, 750)]
    >>> clock["source"]
    'globaltimer'
    >>> raw[0, 1, 0, 1, 2] = 4                               # mma_start stored where load_arrive belongs
    >>> decode_timeline(raw, "gemm_hopper", cfg, 64)
    Traceback (most recent call last):
    ...
    layoutlab.errors.LayoutError: decode_timeline: slot 1 of CTA 0, role consumer 0, tile 0 holds event code 4 (tile 0, k-tile 0) where load_arrive of k-tile 0 belongs: the buffer is corrupt
    """
    _kernel_name(kernel_name)
    shape = timeline_buffer_shape(kernel_name, config, k)
    raw, size = np.asarray(raw, dtype=np.int64), math.prod(shape)
    if raw.size < size:
        raise LayoutError(f"decode_timeline: the buffer holds {raw.size} int64 values; {kernel_name} with "
                          f"K={k} writes {size} (shape {shape})")
    buf = raw.reshape(-1)[:size].reshape(shape)
    k_tiles = math.ceil(k / config.tile_k)
    events = []
    for cta, role, tile, slot in np.argwhere(buf[..., TIMELINE_COLUMNS.index("event")] >= 0).tolist():
        r = dict(zip(TIMELINE_COLUMNS, buf[cta, role, tile, slot].tolist()))
        expect, kk = _slot_meaning(role, slot, k_tiles)
        if r["event"] >= len(EVENTS) or EVENTS[r["event"]] != expect or r["tile"] != tile or kk not in (
                None, r["k_tile"]):
            raise LayoutError(f"decode_timeline: slot {slot} of CTA {cta}, role {_role_name(role)}, tile "
                              f"{tile} holds event code {r['event']} (tile {r['tile']}, k-tile {r['k_tile']}) "
                              f"where {expect}{'' if kk is None else f' of k-tile {kk}'} belongs: the buffer "
                              f"is corrupt")
        events.append({"cta": cta, "role": _role_name(role), "warp": _role_warp(kernel_name, role),
                       "event": expect, "tile": _cta_tile(kernel_name, role, tile), "k_tile": r["k_tile"], "stage": r["stage"],
                       "tile_mn": [r["tile_m"], r["tile_n"]], "cycles": r["clock64"], "t_ns": r["globaltimer"]})
    if not events:
        raise LayoutError("decode_timeline: no slot of the buffer was written (is the kernel the "
                          "instrumented build, and did it run?)")
    clock = _clock(*(np.array([e[key] for e in events], dtype=np.float64) for key in ("cta", "t_ns", "cycles")))
    t0 = min(e["t_ns"] for e in events)
    clk0 = {c: min(e["cycles"] for e in events if e["cta"] == c) for c in {e["cta"] for e in events}}
    for e in events:
        e.update(cycles=e["cycles"] - clk0[e["cta"]], t_ns=float(e["t_ns"] - t0))
    events.sort(key=lambda e: (e["t_ns"], e["cta"], e["cycles"], e["role"]))
    return events, clock


def _slot_meaning(role, slot, k_tiles):
    """(event name, k-tile or None) that the kernel stores in ``slot`` of ``role``."""
    if slot < 4 * k_tiles:
        return (_PRODUCER_SUB if role == 0 else _CONSUMER_SUB).get(slot % 4, "unused"), slot // 4
    return {0: "epi_start", 1: "epi_end", 2: "tile_start"}.get(slot - 4 * k_tiles, "unused"), None


def _clock(ctas, gt, clk):
    """What the timers of a buffer can say: ``%globaltimer``'s step (the smallest gap between distinct readings) and,
    when that is coarse, ``ns_per_cycle``: the median over CTAs of a least-squares line through the (cycle, reading)
    pair of the first event after each step. The times themselves stay the raw readings; :func:`event_times`
    places events by their cycles."""
    uniq = np.unique(gt)
    step = float(np.min(np.diff(uniq))) if len(uniq) > 1 else math.inf
    clock = {"source": "globaltimer", "globaltimer_step_ns": step}
    if step < FINE_TIMER_NS:
        return clock
    slopes = []
    for cta in np.unique(ctas):
        sel = ctas == cta
        x, y = clk[sel], gt[sel]
        order = np.argsort(x, kind="stable")
        ty, first = np.unique(y[order], return_index=True)
        tx = x[order][first]
        if len(ty) >= 2 and np.ptp(tx) > 0:
            slopes.append(np.polyfit(tx - x.min(), ty, 1)[0])
    if slopes:
        clock["ns_per_cycle"] = round(float(np.median(slopes)), 5)
    return clock


def select_record(rec, kernel=None):
    """The one-kernel record inside ``rec``: ``rec`` itself when it has ``events``, else the entry of
    ``rec["records"]`` for ``kernel`` (default: the first). Refuses anything else with a LayoutError.

    >>> from layoutlab import gpu
    >>> select_record(gpu.load_result("gemm_timeline_h100"), "gemm_hopper")["problem"] is not None
    True
    """
    if not isinstance(rec, dict):
        raise LayoutError(f"timeline record: expected a dict (a record or a file of records), got "
                          f"{type(rec).__name__}")
    if "records" in rec and "events" not in rec:
        recs = rec["records"]
        if not isinstance(recs, list) or not recs:
            raise LayoutError("timeline record: 'records' must be a non-empty list of one-kernel records")
        found = [r for r in recs if kernel is None or isinstance(r, dict) and r.get("kernel") == kernel]
        if not found:
            raise LayoutError(f"timeline record: no record of kernel {kernel!r}; it holds "
                              f"{[r.get('kernel') for r in recs if isinstance(r, dict)]}")
        return found[0]
    if kernel is not None and rec.get("kernel") != kernel:
        raise LayoutError(f"timeline record: this record is of {rec.get('kernel')!r}, not {kernel!r}")
    return rec


def _count(x):
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _event_problem(e):
    """What is wrong with one event of a record (None if nothing)."""
    if not isinstance(e, dict):
        return f"is a {type(e).__name__}, not a dict"
    missing = [key for key in _EVENT_KEYS if key not in e]
    if missing:
        return f"lacks {missing} (every event has {list(_EVENT_KEYS)})"
    if e["event"] not in EVENTS:
        return f"is {e['event']!r}; known events are {list(EVENTS)}"
    if not isinstance(e["role"], str) or not re.fullmatch(r"producer|consumer \d+", e["role"]):
        return f"has role {e['role']!r}; roles are 'producer' and 'consumer N'"
    for key in ("cta", "warp", "tile", "k_tile", "stage"):
        if not _count(e[key]):
            return f"has {key}={e[key]!r}; it must be an int >= 0"
    t = e["t_ns"]
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t) or t < 0:
        return f"has t_ns={t!r}; times are finite and >= 0 (t = 0 at the first event)"
    return None


def check_timeline_record(rec, op="timeline record"):
    """Check a one-kernel record's format (``kernel``, ``config.stages``, ``problem.k_tiles``, events as
    :func:`decode_timeline` gives them, times from 0); returns ``rec`` or raises a LayoutError naming the first problem.

    >>> from layoutlab import gpu
    >>> check_timeline_record(select_record(gpu.load_result("gemm_timeline_h100"), "gemm_hopper"))["kernel"]
    'gemm_hopper'
    """
    if not isinstance(rec, dict):
        raise LayoutError(f"{op}: expected a dict, got {type(rec).__name__}")
    for key in ("kernel", "config", "problem", "events"):
        if key not in rec:
            raise LayoutError(f"{op}: the record has no {key!r} (it needs kernel, config, problem, events)")
    if not isinstance(rec["config"], dict) or not isinstance(rec["config"].get("stages"), int) \
            or rec["config"]["stages"] < 1:
        raise LayoutError(f"{op}: config must be a dict with the pipeline depth 'stages' (an int >= 1)")
    if not isinstance(rec["problem"], dict) or not isinstance(rec["problem"].get("k_tiles"), int):
        raise LayoutError(f"{op}: problem must be a dict with 'k_tiles' (an int)")
    events = rec["events"]
    if not isinstance(events, list) or not events:
        raise LayoutError(f"{op}: 'events' must be a non-empty list")
    for i, e in enumerate(events):
        problem = _event_problem(e)
        if problem:
            raise LayoutError(f"{op}: event {i} {problem}")
    t_min = min(e["t_ns"] for e in events)
    if t_min != 0:
        raise LayoutError(f"{op}: times must be normalised to the first event (min t_ns is {t_min}, not 0)")
    return rec


def _index(events):
    """{(cta, role, tile, event, k_tile): t_ns} (epilogue/tile events with k_tile as stored)."""
    idx = {}
    for e in events:
        key = (e["cta"], e["role"], e["tile"], e["event"], e["k_tile"])
        if key in idx:
            raise LayoutError(f"timeline record: two {e['event']} events for CTA {e['cta']}, {e['role']}, "
                              f"tile {e['tile']}, k-tile {e['k_tile']}")
        idx[key] = e["t_ns"]
    return idx


def _program_order(role, K):
    """(event, k_tile) in the order one role's recording thread executes them within a tile."""
    if role == "producer":
        return [("tile_start", 0)] + [(ev, k) for k in range(K) for ev in ("empty_wait", "load_issue")]
    seq = [("tile_start", 0)]
    for k in range(K):
        seq += [("full_wait", k), ("load_arrive", k), ("mma_start", k)] + [("mma_end", k - 1)] * (k > 0)
    return seq + [("mma_end", K - 1), ("epi_start", 0), ("epi_end", 0)]


def validate_timeline(rec, kernel=None):
    """Check a recorded timeline against what the pipeline allows; return counts of each check.

    Per (CTA, role, tile): every recorded event is there once, in program order, with times that never decrease
    (``monotone``); the stage of k-tile j (counted over the CTA's tiles) is j mod stages (``stages``); a consumer
    issues a k-tile's MMAs only after it arrived, and it arrived after the load was issued (``causal``); the producer
    refills a stage only after every consumer retired the MMAs of the k-tile that held it (``stage_reuse``); the
    epilogue starts after the last MMA retired. Raises a LayoutError listing the first violations.

    >>> from layoutlab import gpu
    >>> sorted(validate_timeline(gpu.load_result("gemm_timeline_h100"), "gemm_hopper"))
    ['causal', 'complete', 'events', 'monotone', 'stage_reuse', 'stages']
    """
    rec = check_timeline_record(select_record(rec, kernel))
    events, K, S = rec["events"], rec["problem"]["k_tiles"], rec["config"]["stages"]
    idx = _index(events)
    counts = {"events": len(events), "monotone": 0, "complete": 0, "stages": 0, "causal": 0, "stage_reuse": 0}
    bad = []

    def check(ok, key, violation):
        if ok:
            counts[key] += 1
        else:
            bad.append(violation)

    groups = sorted({(e["cta"], e["role"], e["tile"]) for e in events})
    for group in groups:
        cta, role, tile = group
        seq = _program_order(role, K)
        got = {key[3:] for key in idx if key[:3] == group}
        missing, extra = [s for s in seq if s not in got], sorted(got - set(seq))
        if missing or extra:
            bad.append(f"CTA {cta} {role} tile {tile}: missing {missing[:4]} extra {extra[:4]}")
            continue
        counts["complete"] += 1
        for (e0, k0), (e1, k1) in zip(seq, seq[1:]):
            t0, t1 = idx[group + (e0, k0)], idx[group + (e1, k1)]
            check(t1 >= t0, "monotone", f"CTA {cta} {role} tile {tile}: {e1} k{k1} at {t1} ns before {e0} k{k0} "
                                        f"at {t0} ns")
    by_key = {(e["cta"], e["role"], e["tile"], e["event"], e["k_tile"]): e for e in events}
    consumers = sorted({e["role"] for e in events if e["role"] != "producer"})
    for cta, tile in sorted({(cta, tile) for cta, _, tile in groups}):
        for k in range(K):
            j = tile * K + k
            for ev, role in [("load_issue", "producer")] + [("load_arrive", c) for c in consumers]:
                e = by_key.get((cta, role, tile, ev, k))
                if e is not None:
                    check(e["stage"] == j % S, "stages", f"CTA {cta} {role} tile {tile} k{k}: stage {e['stage']}, "
                                                         f"expected {j % S} (k-tile {j} of the CTA, {S} stages)")
            issue = idx.get((cta, "producer", tile, "load_issue", k))
            for c in consumers:
                arrive, start = idx.get((cta, c, tile, "load_arrive", k)), idx.get((cta, c, tile, "mma_start", k))
                if arrive is None or start is None:
                    continue
                if issue is not None:
                    check(arrive >= issue, "causal", f"CTA {cta} tile {tile} k{k}: {c} saw the load arrive at "
                                                     f"{arrive} ns, before the producer issued it at {issue} ns")
                check(start >= arrive, "causal", f"CTA {cta} tile {tile} k{k}: {c} started MMAs at {start} ns "
                                                 f"before the data arrived at {arrive} ns")
            jt, jk = divmod(j + S, K)            # the refill of this stage: load j + S, possibly in a later tile
            refill = idx.get((cta, "producer", jt, "load_issue", jk))
            for c in consumers if refill is not None else ():
                done = idx.get((cta, c, tile, "mma_end", k))
                if done is not None:
                    check(refill >= done, "stage_reuse", f"CTA {cta}: the producer refilled stage {j % S} with "
                                                         f"k-tile {jk} of tile {jt} at {refill} ns before {c} "
                                                         f"retired k-tile {k} of tile {tile} at {done} ns")
    if bad:
        raise LayoutError(f"validate_timeline ({rec.get('kernel')}): {len(bad)} violation(s): "
                          + "; ".join(bad[:5]))
    return counts


def _union_length(intervals):
    total, end = 0.0, -math.inf
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def _mean(xs, scale=1, digits=1):
    return round(statistics.fmean(xs) / scale, digits) if xs else None


def timer_step_ns(rec, kernel=None):
    """The resolution of a record's ``t_ns``: the greatest common divisor of its times (ns). The recorded H100 run
    stamps raw ``%globaltimer`` values, which advance in 256-ns steps:

    >>> from layoutlab import gpu
    >>> timer_step_ns(gpu.load_result("gemm_timeline_h100"), "gemm_hopper")
    256
    """
    rec = check_timeline_record(select_record(rec, kernel))
    return math.gcd(*(int(round(e["t_ns"])) for e in rec["events"]))


def _fits(rec):
    """{cta: (slope ns/cycle, intercept ns, max |residual| ns)}: least squares of t_ns against cycles per CTA."""
    out = {}
    for cta in sorted({e["cta"] for e in rec["events"]}):
        x = np.array([e["cycles"] for e in rec["events"] if e["cta"] == cta], dtype=np.float64)
        y = np.array([e["t_ns"] for e in rec["events"] if e["cta"] == cta], dtype=np.float64)
        if np.ptp(x) > 0:
            a, b = np.polyfit(x, y, 1)
            out[cta] = (float(a), float(b), float(np.max(np.abs(y - a * x - b))))
    return out


def clock_fit(rec, kernel=None):
    """Least-squares fit, per CTA, of ``t_ns`` against ``cycles`` (both from the record's events): ``{cta:
    {"ns_per_cycle", "max_residual_ns"}}``. With a coarse timer the residuals are about half its step, which is how
    well the two counters can be said to agree.

    >>> from layoutlab import gpu
    >>> fit = clock_fit(gpu.load_result("gemm_timeline_h100"), "gemm_hopper")
    >>> sorted(fit), all(0.5 < f["ns_per_cycle"] < 0.7 for f in fit.values())
    ([0, 1, 2, 3], True)
    """
    rec = check_timeline_record(select_record(rec, kernel))
    if not all("cycles" in e for e in rec["events"]):
        raise LayoutError("clock_fit: the record's events have no 'cycles' (%clock64) to fit")
    return {cta: {"ns_per_cycle": round(a, 5), "max_residual_ns": round(r, 1)}
            for cta, (a, _, r) in _fits(rec).items()}


def _ns_per_cycle(rec):
    clock = rec.get("clock") or {}
    return clock.get("ns_per_cycle") if all("cycles" in e for e in rec["events"]) else None


def event_times(rec, kernel=None):
    """Each event's time in ns, as finely as the record allows: where the record has ``%clock64`` cycles and an
    ``ns_per_cycle``, a CTA's events are placed on its own least-squares line of ``t_ns`` against cycles
    (:func:`clock_fit`), so they are as fine as the cycle counter, in the cycles' order, and within half a timer step
    of the timer; otherwise ``t_ns`` as recorded. A list parallel to ``rec["events"]``.

    >>> from layoutlab import gpu
    >>> rec = select_record(gpu.load_result("gemm_timeline_h100"), "gemm_hopper")
    >>> len(event_times(rec)) == len(rec["events"])
    True
    """
    rec = check_timeline_record(select_record(rec, kernel))
    if _ns_per_cycle(rec) is None:
        return [float(e["t_ns"]) for e in rec["events"]]
    fits = _fits(rec)
    return [fits[e["cta"]][0] * e["cycles"] + fits[e["cta"]][1] if e["cta"] in fits else float(e["t_ns"])
            for e in rec["events"]]


def summarize_timeline(rec, kernel=None):
    """Per role (over the recorded CTAs): the span (first ``tile_start`` to last event, us), the fraction of it spent
    waiting (producer: for a free stage; consumer: for data), mean load latency (issue -> arrival), the consumer's
    MMA-in-flight fraction, mean ``load_arrive -> mma_start`` gap, epilogue time per tile, the share of the epilogue
    during which another consumer of the CTA had MMAs in flight (``epilogue_overlap_fraction``) and the steady-state
    k-tile period: the median gap between successive ``mma_end`` of one warp, in cycles (``k_tile_period_cycles``)
    and in ns (those cycles times the record's ``ns_per_cycle``, or, without cycles, the gaps of ``t_ns``). Times
    are :func:`event_times`. Numbers only, for the printed table and the chapter.

    >>> from layoutlab import gpu
    >>> sorted(summarize_timeline(gpu.load_result("gemm_timeline_h100"), "gemm_hopper"))
    ['k_tiles', 'kernel', 'roles', 'tflops_per_sm_steady']
    """
    rec = check_timeline_record(select_record(rec, kernel))
    npc = _ns_per_cycle(rec)
    times = event_times(rec)
    idx, cyc = {}, {}
    for e, t in zip(rec["events"], times):
        key = (e["cta"], e["role"], e["tile"], e["event"], e["k_tile"])
        if key in idx:
            raise LayoutError(f"timeline record: two {e['event']} events for CTA {e['cta']}, {e['role']}, "
                              f"tile {e['tile']}, k-tile {e['k_tile']}")
        idx[key], cyc[key] = t, e.get("cycles")
    first_arrival = {}                           # (cta, tile, k_tile): the earliest load_arrive over consumers
    for (c, r, t, ev, k), v in idx.items():
        if ev == "load_arrive":
            first_arrival[(c, t, k)] = min(first_arrival.get((c, t, k), v), v)

    def spans(role, a, b, step=0, at=idx):
        """((cta, tile, k), t_a, t_b): each event ``a`` of ``role`` and its tile's ``b`` of k-tile k + step."""
        return [((c, t, k), v, at[(c, r, t, b, k + step)]) for (c, r, t, ev, k), v in at.items()
                if r == role and ev == a and (c, r, t, b, k + step) in at]

    out = {"kernel": rec["kernel"], "roles": {}}
    roles = sorted({e["role"] for e in rec["events"]}, key=lambda r: (r != "producer", r))
    for role in roles:
        per_cta = {}
        for e, t in zip(rec["events"], times):
            if e["role"] == role:
                per_cta.setdefault(e["cta"], []).append(t)
        span = sum(max(ts) - min(ts) for ts in per_cta.values())
        waits = spans(role, "empty_wait" if role == "producer" else "full_wait",
                      "load_issue" if role == "producer" else "load_arrive")
        row = {"ctas": len(per_cta), "span_us": round(span / 1e3 / max(len(per_cta), 1), 2),
               "wait_fraction": round(sum(b - a for _, a, b in waits) / span, 3) if span else None,
               "mean_wait_ns": _mean([b - a for _, a, b in waits])}
        if role == "producer":
            row["mean_load_latency_ns"] = _mean([first_arrival[key] - b for key, _, b in waits if key in first_arrival])
        else:
            busy = spans(role, "mma_start", "mma_end")
            mma = sum(_union_length([(a, b) for key, a, b in busy if key[0] == c]) for c in per_cta)
            epilogues = [b - a for _, a, b in spans(role, "epi_start", "epi_end")]
            # The epilogue's share spent while another consumer of the CTA had MMAs in flight: what ping-pong
            # consumers are for (0 when the consumers store together, as in gemm_hopper_ws).
            epi = [(c, a, b) for (c, _, _), a, b in spans(role, "epi_start", "epi_end")]
            others = [(c, a, b) for r in roles if r not in ("producer", role)
                      for (c, _, _), a, b in spans(r, "mma_start", "mma_end")]
            overlap = sum(_union_length([(max(a, x), min(b, y)) for c2, x, y in others if c2 == c and x < b and y > a])
                          for c, a, b in epi)
            row.update({"mma_in_flight_fraction": round(mma / span, 3) if span else None,
                        "epilogue_overlap_fraction": round(overlap / sum(b - a for _, a, b in epi), 3)
                        if others and epi and sum(b - a for _, a, b in epi) > 0 else None,
                        "mean_arrive_to_mma_ns": _mean([a - idx[(c, role, t, "load_arrive", k)]
                                                        for (c, t, k), a, _ in busy]),
                        "epilogue_us_per_tile": _mean(epilogues, 1e3, 2)})
            if npc is not None:
                periods = [b - a for _, a, b in spans(role, "mma_end", "mma_end", 1, cyc)]
                row["k_tile_period_cycles"] = statistics.median(periods) if periods else None
                row["k_tile_period_ns"] = round(row["k_tile_period_cycles"] * npc, 1) if periods else None
            else:
                periods = [b - a for _, a, b in spans(role, "mma_end", "mma_end", 1)]
                row["k_tile_period_ns"] = round(statistics.median(periods), 1) if periods else None
        out["roles"][role] = row
    cfg = rec["config"]
    period = [r.get("k_tile_period_ns") for r in out["roles"].values() if r.get("k_tile_period_ns")]
    if period and {"tile_m", "tile_n", "tile_k"} <= cfg.keys():
        flops = 2 * cfg["tile_m"] * cfg["tile_n"] * cfg["tile_k"]
        out["tflops_per_sm_steady"] = round(flops / statistics.median(period) / 1e3, 2)
    out["k_tiles"] = rec["problem"]["k_tiles"]
    return out


def steady_tflops(summary, sms):
    """The rate ``sms`` SMs would reach if every one ran a CTA at the summary's steady-state k-tile period (no fill,
    no epilogue, no partial wave): ``sms * tflops_per_sm_steady``. 132 SMs at 4.19 MFLOP per 1000 ns:

    >>> steady_tflops({"tflops_per_sm_steady": 4.19}, 132)
    553.1
    """
    if (not isinstance(summary, dict) or "tflops_per_sm_steady" not in summary or not isinstance(sms, int)
            or isinstance(sms, bool) or sms < 1):
        raise LayoutError(f"steady_tflops: needs a summary with tflops_per_sm_steady (summarize_timeline) and a "
                          f"positive SM count, got {sorted(summary) if isinstance(summary, dict) else summary!r} "
                          f"and sms={sms!r}")
    return round(summary["tflops_per_sm_steady"] * sms, 1)


def format_summary(summary):
    """The summary as a few printable lines.

    >>> from layoutlab import gpu
    >>> print(format_summary(summarize_timeline(gpu.load_result("gemm_timeline_h100"), "gemm_hopper")).splitlines()[0])
    gemm_hopper: 64 k-tiles per tile, steady state ~... TFLOP/s per SM
    """
    if not isinstance(summary, dict) or not {"kernel", "k_tiles", "roles"} <= summary.keys():
        raise LayoutError(f"format_summary: summary must be what summarize_timeline returns (a dict with kernel, "
                          f"k_tiles and roles), got {str(summary)[:60]}")
    steady = summary.get("tflops_per_sm_steady")
    lines = [f"{summary['kernel']}: {summary['k_tiles']} k-tiles per tile"
             + (f", steady state ~{steady} TFLOP/s per SM" if "tflops_per_sm_steady" in summary else "")]
    for role, row in summary["roles"].items():
        lines.append(f"  {role:11s} " + " ".join(f"{k}={v}" for k, v in row.items() if v is not None))
    return "\n".join(lines)

