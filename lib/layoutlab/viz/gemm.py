"""Plots of a GEMM with matplotlib: the pipelines' timelines, the tour's bars and the roofline (the tiling of the
problem is a layout picture: :mod:`layoutlab.viz.tiling`). Shown as SVG with real text (:mod:`.plot`)."""

import numbers

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from ..errors import LayoutError
from .figure import FONT
from .layouts import _TOUR_COLORS
from .plot import TEXT_PT, TITLE_PT, _BookFigure

__all__ = [
    "draw_mbarrier_timeline", "draw_wgmma_timeline", "draw_tour_bars", "draw_roofline",
    "draw_pipeline_timeline",
]


def draw_mbarrier_timeline(barrier, *, title=None):
    """An ``mbarrier``'s life from its ``log`` (a :class:`layoutlab.nvgpu.cpasync.MBarrier`): one column per event,
    with the pending arrivals and the transaction bytes still expected after it, and the phase number;
    a phase completes (shaded green) when both reach zero (PTX ISA, "mbarrier": phase completion,
    ``expect-tx`` / ``complete-tx``). Event names are written slanted under their columns, so long ones
    (``complete_tx(16384)``) never run into each other.

    >>> from layoutlab import MBarrier
    >>> bar = MBarrier(1)
    >>> bar.arrive_expect_tx(1024); bar.complete_tx(1024)
    >>> draw_mbarrier_timeline(bar).get_suptitle()
    'mbarrier (expected arrivals 1): green = a phase completes'
    """
    from ..nvgpu.cpasync import MBarrier
    if not isinstance(barrier, MBarrier):
        raise LayoutError(f"draw_mbarrier_timeline: barrier must be an MBarrier (layoutlab.nvgpu.cpasync), got "
                          f"{type(barrier).__name__}")
    log = list(barrier.log)
    if not log:
        raise LayoutError("draw_mbarrier_timeline: the barrier has no events yet")
    n = len(log)
    fig = _BookFigure(figsize=(min(max(4.5, 0.75 * n + 2.0), 7.0), 4.6), layout="constrained")
    ax = fig.add_subplot()
    tx = [e[3] for e in log]
    pend = [e[2] for e in log]
    xs = np.arange(n)
    ax.step(xs, tx, where="mid", color="#1f77b4", label="bytes still expected (tx-count)")
    ax2 = ax.twinx()
    ax2.step(xs, pend, where="mid", color="#d62728", ls="--", label="arrivals pending")
    ax2.set_ylim(-0.2, max(pend + [barrier.count]) + 0.5)
    ax.set_ylim(-0.05 * max(tx + [1]), max(tx + [1]) * 1.15)
    for i, e in enumerate(log):
        if e[0].endswith("phase complete"):
            ax.axvspan(i - 0.5, i + 0.5, color="#2ca02c", alpha=0.15)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_xticks(xs, [e[0].replace(" -> phase complete", " -> phase done") for e in log], rotation=35,
                  ha="right", rotation_mode="anchor", fontsize=TEXT_PT, family="monospace")
    top = ax.secondary_xaxis("top")
    top.set_xticks(xs, [f"phase {e[1]}" for e in log], fontsize=TEXT_PT)
    ax.tick_params(axis="y", labelsize=TEXT_PT)
    ax2.tick_params(axis="y", labelsize=TEXT_PT)
    ax.set_ylabel("tx bytes", fontsize=TEXT_PT)
    ax2.set_ylabel("arrivals", fontsize=TEXT_PT)
    fig.legend(loc="outside lower center", ncol=2, fontsize=TEXT_PT, frameon=False)
    fig.suptitle(title or f"mbarrier (expected arrivals {barrier.count}): green = a phase completes",
                 fontsize=TITLE_PT)
    return fig


def draw_wgmma_timeline(k_blocks=4, *, title=None):
    """What may overlap with ``wgmma``: one warpgroup's instruction stream against the tensor cores.

    The operands' shared-memory stores are made visible to the async proxy (``fence.proxy.async``) and to the
    other warps of the CTA (``bar.sync``, the CTA barrier: every warp's stores are done) before any warp's
    ``wgmma`` reads them; ``wgmma.fence`` orders earlier register/shared-memory accesses before the MMAs;
    ``wgmma.mma_async`` only *issues* (the warps go on); ``commit_group`` closes a group;
    ``wait_group N`` blocks until at most N groups are pending -- only then may the accumulators (and the
    shared memory the group reads) be touched again. Independent work can fill the gap.

    >>> draw_wgmma_timeline(2).get_suptitle()
    'wgmma: fence, barrier, issue, commit, overlap, wait (PTX ISA, wgmma.fence / commit_group / wait_group)'
    """
    if not isinstance(k_blocks, int) or isinstance(k_blocks, bool) or not 1 <= k_blocks <= 16:
        raise LayoutError(f"draw_wgmma_timeline: k_blocks={k_blocks!r}; draw 1 to 16 k-blocks")
    steps = [("st.shared\nfence.proxy.async", "#e0e0e0"), ("bar.sync\n(CTA\nbarrier)", "#dadaeb"),
             ("wgmma.fence", "#ffbb78")]
    steps += [(f"mma_async\nk-block {i}", "#aec7e8") for i in range(k_blocks)]
    steps += [("commit_group", "#98df8a"), ("independent\nwork (not\nacc, not\nits smem)", "#f7f7f7"),
              ("wait_group 0", "#ff9896"), ("read/write\naccumu-\nlators", "#c5b0d5")]
    char_in = TEXT_PT * 0.6 / 72
    widths = [max(len(line) for line in label.split("\n")) * char_in + 0.14 for label, _ in steps]
    total = sum(widths)
    fig = _BookFigure(figsize=(total + 1.4, 2.9))
    ax = fig.add_axes((1.25 / (total + 1.4), 0.04, total / (total + 1.4), 0.8))
    ax.set_ylim(-0.2, 2.4)
    ax.axis("off")
    x, mma_x, wait_x = 0.0, [], 0.0
    for (label, color), w in zip(steps, widths):
        ax.add_patch(Rectangle((x, 1.3), w - 0.05, 1.0, facecolor=color, edgecolor="#444", lw=0.6))
        ax.text(x + (w - 0.05) / 2, 1.8, label, ha="center", va="center", fontsize=TEXT_PT, **FONT)
        if label.startswith("mma_async"):
            mma_x.append((x, w))
        if label.startswith("wait_group"):
            wait_x = x
        x += w
    # the tensor cores run the issued MMAs one after the other, finishing before wait_group returns
    t = mma_x[0][0] + 0.3
    for i, (mx, w) in enumerate(mma_x):
        ax.annotate("", xy=(t + 0.15, 0.95), xytext=(mx + w / 2, 1.28),
                    arrowprops=dict(arrowstyle="->", lw=0.6, color="#1f77b4"))
        ax.add_patch(Rectangle((t, 0.3), w * 1.05, 0.65, facecolor="#aec7e8", edgecolor="#1f77b4", lw=0.6))
        ax.text(t + w * 0.52, 0.62, f"MMA {i}", ha="center", va="center", fontsize=TEXT_PT, **FONT)
        t += w * 1.1
    ax.annotate("", xy=(wait_x + 0.3, 1.28), xytext=(t - 0.05, 0.62),
                arrowprops=dict(arrowstyle="->", lw=0.8, color="#d62728"))
    ax.text(-0.1, 1.8, "warpgroup\n(issues)", ha="right", va="center", fontsize=TEXT_PT, **FONT)
    ax.text(-0.1, 0.62, "tensor\ncores\n(execute)", ha="right", va="center", fontsize=TEXT_PT, **FONT)
    ax.set_xlim(0, total)
    fig.suptitle(title or "wgmma: fence, barrier, issue, commit, overlap, wait (PTX ISA, wgmma.fence / "
                          "commit_group / wait_group)", fontsize=TEXT_PT, wrap=True, **FONT)
    return fig


def draw_tour_bars(rows, *, title=None):
    """The tour's measured TFLOP/s, one bar per step (log scale), with cuBLAS on the same dtype and shape
    as a black tick and the percentage written beside. ``rows`` as :func:`layoutlab.bench.tour.tour_rows`
    returns them (keys kernel, dtype, m, n, k, tflops, cublas_tflops, pct_cublas).

    >>> from layoutlab import gpu
    >>> from layoutlab.bench.tour import tour_rows
    >>> draw_tour_bars(tour_rows(gpu.load_result("gemm_h100_bench"))).get_suptitle()
    'The tour, measured: TFLOP/s and % of cuBLAS'
    """
    op = "draw_tour_bars"
    if not isinstance(rows, (list, tuple)) or not all(isinstance(r, dict) for r in rows):
        raise LayoutError(f"{op}: rows must be a list of benchmark rows (dicts, as tour.tour_rows returns), got "
                          f"{type(rows).__name__}")
    if not rows:
        raise LayoutError(f"{op}: no rows to draw")
    for r in rows:
        for key in ("kernel", "dtype", "tflops", "cublas_tflops", "pct_cublas"):
            if key not in r:
                raise LayoutError(f"{op}: row {r.get('kernel', '?')} lacks {key!r} (use tour.tour_rows)")
    n = len(rows)
    fig = _BookFigure(figsize=(6.8, 0.62 * n + 1.6), layout="constrained")
    ax = fig.add_subplot()
    ys = np.arange(n)[::-1]
    for y, r, c in zip(ys, rows, _TOUR_COLORS):
        ax.barh(y, r["tflops"], color=c, height=0.6)
        ax.plot([r["cublas_tflops"]] * 2, [y - 0.38, y + 0.38], color="black", lw=2)
        ax.text(max(r["tflops"], r["cublas_tflops"]) * 1.08, y, f"{r['pct_cublas']:.1f} %", va="center",
                fontsize=TEXT_PT, **FONT)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{r['kernel']}\n{r['dtype']} {r['m']}x{r['n']}x{r['k']}" for r in rows],
                       fontsize=TEXT_PT, **FONT)
    ax.set_xscale("log")
    ax.set_xlim(10, 4000)
    ax.tick_params(axis="x", labelsize=TEXT_PT)
    ax.set_xlabel("TFLOP/s (log scale)", fontsize=TEXT_PT)
    bar = Rectangle((0, 0), 1, 1, facecolor="#888")
    tick = Line2D([0], [0], color="black", lw=2)
    fig.legend([bar, tick], ["kernel", "cuBLAS, same dtype, shape and run"], loc="outside lower center", ncol=2,
               fontsize=TEXT_PT, frameon=False)
    fig.suptitle(title or "The tour, measured: TFLOP/s and % of cuBLAS", fontsize=TITLE_PT, **FONT)
    return fig


def draw_roofline(points, roofs, bandwidth_tbs, *, title=None):
    """A roofline (log-log): for each roof ``(label, peak TFLOP/s)`` the line ``min(peak, I * bandwidth)``,
    and each point ``(label, intensity, tflops, tile_intensity)`` as a filled dot at its DRAM intensity and
    a hollow one at its tile intensity (FLOP per byte a CTA loads), joined by a dotted line.
    Intensities in FLOP/byte, bandwidth in TB/s.

    >>> fig = draw_roofline([("gemm_hopper_ws", 683.0, 620.0, 128.0)], [("H100 fp16 dense", 989.0)], 3.35)
    >>> fig.get_suptitle()
    'Roofline: each step of the tour'
    """
    op = "draw_roofline"
    def _numbers(entry, n):
        return (isinstance(entry, (list, tuple)) and len(entry) == n and isinstance(entry[0], str)
                and all(isinstance(x, numbers.Real) and not isinstance(x, bool) and x > 0 for x in entry[1:]))
    if not isinstance(points, (list, tuple)) or not isinstance(roofs, (list, tuple)) or not all(
            _numbers(p, 4) for p in points) or not all(_numbers(r, 2) for r in roofs):
        raise LayoutError(f"{op}: points are (label, intensity, tflops, tile_intensity) and roofs (label, peak "
                          f"TFLOP/s), positive numbers after the label; got {str(points)[:40]} and {str(roofs)[:40]}")
    if not isinstance(bandwidth_tbs, numbers.Real) or isinstance(bandwidth_tbs, bool):
        raise LayoutError(f"{op}: bandwidth_tbs={bandwidth_tbs!r}; it is a number of TB/s")
    if not roofs or not points:
        raise LayoutError(f"{op}: needs at least one roof and one point")
    if bandwidth_tbs <= 0:
        raise LayoutError(f"{op}: bandwidth_tbs={bandwidth_tbs!r} must be positive")
    fig = _BookFigure(figsize=(6.8, 4.6 + 0.22 * (len(points) + len(roofs))), layout="constrained")
    ax = fig.add_subplot()
    xs = np.logspace(0, 4, 200)
    for (label, peak), style in zip(roofs, ["-", "--", "-.", ":"]):
        ax.plot(xs, np.minimum(peak, xs * bandwidth_tbs), color="black", ls=style, lw=1,
                label=f"roof: {label} ({peak:.0f} TFLOP/s, {bandwidth_tbs} TB/s)")
    for (label, ai, tflops, tile_ai), c in zip(points, _TOUR_COLORS):
        ax.plot([tile_ai, ai], [tflops, tflops], color=c, ls=":", lw=1)
        ax.plot(tile_ai, tflops, "o", mfc="none", mec=c, ms=7)
        ax.plot(ai, tflops, "o", color=c, ms=7, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.tick_params(labelsize=TEXT_PT)
    ax.set_xlabel("arithmetic intensity (FLOP / byte)", fontsize=TEXT_PT)
    ax.set_ylabel("TFLOP/s", fontsize=TEXT_PT)
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    handles, labels = ax.get_legend_handles_labels()
    handles += [Line2D([0], [0], marker="o", color="#555", ls="none"),
                Line2D([0], [0], marker="o", mfc="none", mec="#555", ls="none")]
    labels += ["filled: DRAM intensity (A, B read once, C written once)",
               "hollow: tile intensity (every k-tile from DRAM)"]
    fig.legend(handles, labels, loc="outside lower center", ncol=1, fontsize=TEXT_PT, frameon=False)
    fig.suptitle(title or "Roofline: each step of the tour", fontsize=TITLE_PT, **FONT)
    return fig


_PIPE_COLORS = {"load": ("#9ecae1", "#3182bd"), "mma": ("#fdae6b", "#e6550d"), "epi": ("#a1d99b", "#31a354"),
                "wait": ("#d62728", "#d62728")}


def draw_pipeline_timeline(record, *, kernel=None, ctas=None, tiles=None, t_range_us=None, title=None):
    """A measured pipeline timeline as a Gantt chart: one row per warp role of each CTA, time in us.

    ``record`` is a one-kernel record of :func:`layoutlab.bench.timeline.record_timeline` or the recorded
    file (``gpu.load_result("gemm_timeline_h100")``, several records: ``kernel`` picks one, default the
    first). Producer row: one bar per TMA load from issue to the first consumer's arrival, stacked by
    stage (the ring's slots), and in red the waits for a free stage. Consumer rows (one per MMA
    warpgroup): one bar per k-tile from wgmma issue to ``wait_group`` observing it retired (alternating
    lanes, since the next batch is issued before the previous one is known done), the epilogue, and in
    red the waits for data. Blank stretches are time the role did none of these. ``ctas`` (default the
    first two recorded), ``tiles`` (tile ordinals per CTA, default the first two) and ``t_range_us``
    ``(start, end)`` zoom in. Times are :func:`~layoutlab.kernels.timeline.event_times`: a CTA's events
    placed by their ``%clock64`` cycles on the CTA's fit to ``%globaltimer`` where the record has cycles
    (the axis label says so), else the recorded ``t_ns``. Refuses a malformed record with a LayoutError.
    Example: ``draw_pipeline_timeline(gpu.load_result("gemm_timeline_h100"), kernel="gemm_hopper")``.

    >>> from layoutlab import gpu
    >>> fig = draw_pipeline_timeline(gpu.load_result("gemm_timeline_h100"), kernel="gemm_hopper")
    >>> fig.get_suptitle()
    'gemm_hopper: measured pipeline, ... -- NVIDIA H100 80GB HBM3'
    """
    from matplotlib.patches import Patch

    from ..kernels.timeline import check_timeline_record, event_times, select_record, timer_step_ns
    op = "draw_pipeline_timeline"
    rec = check_timeline_record(select_record(record, kernel), op=op)
    events = rec["events"]
    at = {id(e): t for e, t in zip(events, event_times(rec))}
    stages = rec["config"]["stages"]
    recorded = sorted({e["cta"] for e in events})
    ctas = recorded[:2] if ctas is None else list(ctas)
    if not ctas or any(c not in recorded for c in ctas):
        raise LayoutError(f"{op}: ctas={ctas!r}; this record has CTAs {recorded}")
    all_tiles = sorted({e["tile"] for e in events})
    tiles = all_tiles[:2] if tiles is None else list(tiles)
    if not tiles or any(t not in all_tiles for t in tiles):
        raise LayoutError(f"{op}: tiles={tiles!r}; this record has tile ordinals {all_tiles}")
    if t_range_us is not None:
        if len(t_range_us) != 2 or not t_range_us[0] < t_range_us[1]:
            raise LayoutError(f"{op}: t_range_us={t_range_us!r}; give (start, end) with start < end, in us")
    idx = {(e["cta"], e["role"], e["tile"], e["event"], e["k_tile"]): e for e in events}
    roles = sorted({e["role"] for e in events}, key=lambda r: (r != "producer", r))
    warps = {e["role"]: e["warp"] for e in events}
    K = rec["problem"]["k_tiles"]
    first_arrival = {}
    for e in events:
        if e["event"] == "load_arrive":
            key = (e["cta"], e["tile"], e["k_tile"])
            first_arrival[key] = min(first_arrival.get(key, at[id(e)]), at[id(e)])

    rows = [(c, r) for c in ctas for r in roles]
    polys = {name: [] for name in _PIPE_COLORS}

    def bar(name, t0, t1, y0, h):
        a, b = t0 / 1e3, t1 / 1e3
        polys[name].append([(a, y0), (b, y0), (b, y0 + h), (a, y0 + h)])

    labels, starts = [], []
    for i, (c, r) in enumerate(rows):
        y = len(rows) - 1 - i                      # first row on top
        for t in tiles:
            def ev(name, k, _c=c, _r=r, _t=t):
                e = idx.get((_c, _r, _t, name, k))
                return None if e is None else at[id(e)]
            for k in range(K):
                if r == "producer":
                    issue, wait = ev("load_issue", k), ev("empty_wait", k)
                    e = idx.get((c, r, t, "load_issue", k))
                    arrive = first_arrival.get((c, t, k))
                    if issue is not None and arrive is not None:
                        lane = e["stage"] % stages
                        bar("load", issue, arrive, y + 0.14 + 0.72 * lane / stages, 0.72 / stages * 0.9)
                    if wait is not None and issue is not None and issue > wait:
                        bar("wait", wait, issue, y + 0.02, 0.09)
                else:
                    start, end = ev("mma_start", k), ev("mma_end", k)
                    if start is not None and end is not None:
                        bar("mma", start, end, y + 0.14 + 0.36 * (k % 2), 0.33)
                    wait, arrive = ev("full_wait", k), ev("load_arrive", k)
                    if wait is not None and arrive is not None and arrive > wait:
                        bar("wait", wait, arrive, y + 0.02, 0.09)
            if r != "producer":
                s, e = ev("epi_start", 0), ev("epi_end", 0)
                if s is not None and e is not None:
                    bar("epi", s, e, y + 0.14, 0.72)
                    mn = idx[(c, r, t, "epi_start", 0)].get("tile_mn")
                    labels.append(((s + e) / 2e3, y + 0.5, (e - s) / 1e3, f"tile {t}" + (
                        f"\n({mn[0]},{mn[1]})" if isinstance(mn, (list, tuple)) and len(mn) == 2 else "")))
                ts = ev("tile_start", 0)
                if ts is not None and t != tiles[0]:
                    starts.append((ts / 1e3, i))
    if not any(polys.values()):
        raise LayoutError(f"{op}: the chosen CTAs {ctas} and tiles {tiles} hold no complete interval to draw")

    height = 0.62 * len(rows) + 1.3            # rows + title (0.4 in) + axis label and legend (0.9 in)
    fig = _BookFigure(figsize=(10.0, height))
    ax = fig.add_axes((0.2, 0.9 / height, 0.78, 0.62 * len(rows) / height))
    for name, (face, edge) in _PIPE_COLORS.items():
        if polys[name]:
            ax.add_collection(PolyCollection(polys[name], facecolors=face, edgecolors=edge, linewidths=0.4))
    xs = [p[0][0] for v in polys.values() for p in v] + [p[1][0] for v in polys.values() for p in v]
    lo, hi = (min(xs), max(xs)) if t_range_us is None else t_range_us
    pad = 0.01 * (hi - lo)
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(-0.1, len(rows) + 0.05)
    us_per_inch = (hi - lo + 2 * pad) / (0.78 * 10.0)
    for x, y, width, text in labels:           # a tile's name inside its epilogue bar, where it fits
        if lo <= x <= hi and width / us_per_inch > 0.05 * max(len(line) for line in text.split("\n")):
            ax.text(x, y, text, fontsize=8, va="center", ha="center", color="#1b5e20", **FONT)
    for x, i in starts:                         # where a CTA's next tile begins (consumer rows)
        y = len(rows) - 1 - i
        ax.plot([x, x], [y, y + 1], color="#555", lw=0.7, ls=":")
    for i in range(1, len(ctas)):
        ax.axhline(len(rows) - i * len(roles), color="#888", lw=0.8)
    ax.set_yticks([len(rows) - 1 - i + 0.5 for i in range(len(rows))])
    ax.set_yticklabels([f"CTA {c} {r} (warp {warps[r]})" for c, r in rows], fontsize=8, **FONT)
    ax.tick_params(axis="y", length=0)
    npc = (rec.get("clock") or {}).get("ns_per_cycle")
    ax.set_xlabel("time (us) from the first recorded event" + (
        f", placed by %clock64 on each CTA's fit to %globaltimer ({timer_step_ns(rec)}-ns steps)"
        if npc and all("cycles" in e for e in events) else ""), fontsize=8)
    ax.tick_params(axis="x", labelsize=7.5)
    ax.grid(axis="x", color="#ddd", lw=0.5)
    ax.set_axisbelow(True)
    handles = [Patch(facecolor=_PIPE_COLORS["load"][0], edgecolor=_PIPE_COLORS["load"][1],
                     label=f"TMA load in flight (issue -> arrival), by stage (of {stages})"),
               Patch(facecolor=_PIPE_COLORS["mma"][0], edgecolor=_PIPE_COLORS["mma"][1],
                     label="wgmma k-tile (issue -> wait_group sees it retired)"),
               Patch(facecolor=_PIPE_COLORS["epi"][0], edgecolor=_PIPE_COLORS["epi"][1], label="epilogue"),
               Patch(facecolor=_PIPE_COLORS["wait"][0], edgecolor=_PIPE_COLORS["wait"][1],
                     label="waiting (producer: for a free stage; consumer: for data)")]
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.55, 0.0), ncol=2, fontsize=8,
               frameon=False)
    prob = rec["problem"]
    head = title if title is not None else (
        f"{rec['kernel']}: measured pipeline, {prob.get('m')}x{prob.get('n')}x{prob.get('k')} "
        f"{prob.get('dtype', '')}, {K} k-tiles per tile" + (f" -- {rec['gpu']}" if rec.get("gpu") else ""))
    fig.suptitle(head, fontsize=9, y=1 - 0.08 / height, va="top", **FONT)
    return fig
