"""Redraw time of a 128x256 thread-value picture (target: median < 150 ms on a laptop CPU).

:data:`TV_128x256`: the accumulator of a 128x256 CTA tile of two WGMMA m64n256 warpgroups. "Redraw": build the
picture with :func:`layoutlab.viz.draw_tv_layout` and write its SVG; "widget frame" adds the base64 image that
a precomputed explorer frame embeds.
"""

import statistics
import time

__all__ = ["main", "redraw_times", "TV_128x256"]

TV_128x256 = "((4,8,4,2),(2,2,32)):((256,1,16,64),(128,8,1024))"


def redraw_times(repeats=9, png=False, clock=time.perf_counter):
    """Seconds of ``repeats`` redraws (after a warm-up) of the 128x256 TV picture by ``clock`` (wall time default).

    >>> len(redraw_times(repeats=2))             # seconds per redraw, measured now
    2
    """
    import base64

    from layoutlab import parse_layout, viz

    tv = parse_layout(TV_128x256)

    def once(thread):
        svg = viz.draw_tv_layout(tv, (128, 256), highlight_threads={thread}).to_svg()
        if png:
            base64.b64encode(svg.encode())

    once(0)
    times = []
    for i in range(repeats):
        start = clock()
        once(i + 1)
        times.append(clock() - start)
    return times


def main():
    """Print the median redraw time (wall and CPU) and the widget frame's (redraw + PNG), 9 redraws each.

    >>> main()                                  # doctest: +ELLIPSIS
    redraw 128x256 TV layout ((4,8,4,2),(2,2,32)):((256,1,16,64),(128,8,1024)): median ... ms (min ...; CPU time median ...), target < 150 ms
    widget frame (redraw + SVG image): median ... ms
    """
    draw = redraw_times()
    cpu = redraw_times(clock=time.process_time)
    frame = redraw_times(png=True)
    print(f"redraw 128x256 TV layout {TV_128x256}: median {1000 * statistics.median(draw):.1f} ms "
          f"(min {1000 * min(draw):.1f}; CPU time median {1000 * statistics.median(cpu):.1f}), target < 150 ms")
    print(f"widget frame (redraw + SVG image): median {1000 * statistics.median(frame):.1f} ms")


if __name__ == "__main__":
    main()
