"""The tiling of a GEMM: CTA blocks over C, k-tiles along K, thread tiles in a block (SVG, pure Python)."""

from ..errors import LayoutError
from .figure import TV_HEX, draw_key, key_size, new_figure
from .svg import MAX_WIDTH, TICK_TEXT

__all__ = ["draw_gemm_tiling"]

_PALE, _STRONG = TV_HEX[0], "#5959d9"


def draw_gemm_tiling(m, n, k, block_mnk, *, thread_mn=None, block=(0, 0), k_tile=0, title=None):
    """How a GEMM C[M,N] += A[M,K] B[K,N] is cut: CTA blocks over C, k-tiles along K, thread tiles in a block.

    C is split into ``ceil(M/bM) x ceil(N/bN)`` blocks, one per CTA; the CTA at ``block=(i, j)`` walks A's
    row panel and B's column panel in ``ceil(K/bK)`` k-tiles (numbered ``k0, k1, ...``; ``k_tile`` is
    drawn darker). ``thread_mn=(tM, tN)`` splits the highlighted C block among tM x tN threads into *blocked*
    ``bM/tM x bN/tN`` sub-tiles (thread 0 dark) -- not the raked partition that ``local_partition`` gives the
    CuTe tutorial's GEMM, where a thread's elements lie tM rows and tN columns apart: draw that with
    :func:`draw_partition`. Drawn to scale: A left, B on top, C bottom right.

    >>> draw_gemm_tiling(256, 256, 64, (128, 128, 8), thread_mn=(16, 16)).get_suptitle()
    'GEMM 256x256x64, CTA tile 128x128x8: 2x2 CTAs, 8 k-tiles, 16x16 threads of 8x8'
    """
    op = "draw_gemm_tiling"
    for name, value in (("M", m), ("N", n), ("K", k)):
        if not isinstance(value, int) or value < 1:
            raise LayoutError(f"{op}: {name}={value!r} must be a positive integer")
    if len(block_mnk) != 3 or any(not isinstance(b, int) or b < 1 for b in block_mnk):
        raise LayoutError(f"{op}: block_mnk={block_mnk!r} must be three positive integers (bM, bN, bK)")
    bm, bn, bk = block_mnk
    grid_m, grid_n, k_tiles = -(-m // bm), -(-n // bn), -(-k // bk)
    bi, bj = block
    if not (0 <= bi < grid_m and 0 <= bj < grid_n):
        raise LayoutError(f"{op}: block={block!r} outside the {grid_m}x{grid_n} grid of CTAs")
    if thread_mn is not None:
        tm, tn = thread_mn
        if bm % tm or bn % tn:
            raise LayoutError(f"{op}: thread_mn={thread_mn!r} must divide the block ({bm}, {bn}) evenly")
    left, gap, top = 40, 44, 24
    scale = (MAX_WIDTH - left - gap - 30) / max(m + k, n + k)
    scale = min(scale, 560 / max(m + k, n + k))
    content_w = left + (k + n) * scale + gap + 20
    key = [(_PALE, f"CTA ({bi},{bj}): its A row panel, B column panel and C block"),
           (_STRONG, f"k-tile {k_tile}" + (", thread 0's sub-tile" if thread_mn is not None else ""))]
    width, kh = key_size(key, content_w)
    head = title if title is not None else \
        f"GEMM {m}x{n}x{k}, CTA tile {bm}x{bn}x{bk}: {grid_m}x{grid_n} CTAs, {k_tiles} k-tiles" + \
        (f", {tm}x{tn} threads of {bm // tm}x{bn // tn}" if thread_mn is not None else "")
    fig, y0 = new_figure(width, top + k * scale + gap + m * scale + 10 + kh, head,
                         f"{head}: A ({m} x {k}) on the left, B ({k} x {n}) on top, C ({m} x {n}) below B, to scale")
    xa = (fig.width - content_w) / 2 + left
    xc, yb = xa + k * scale + gap, y0 + top
    yc = yb + k * scale + gap
    for x, y, w, h, label in ((xa, yc, k, m, "A (M x K)"), (xc, yb, n, k, "B (K x N)"), (xc, yc, n, m, "C (M x N)")):
        fig.rect(x, y, w * scale, h * scale, "#fff", "#000", 1)
        fig.text(x + w * scale / 2, y - 10, label, TICK_TEXT)
    roomy = bk * scale >= 24
    for t in range(k_tiles):
        kx, kw = t * bk, min(bk, k - t * bk)
        fill = _STRONG if t == k_tile else _PALE
        fig.rect(xa + kx * scale, yc + bi * bm * scale, kw * scale, min(bm, m - bi * bm) * scale, fill, "#000", 0.6)
        fig.rect(xc + bj * bn * scale, yb + kx * scale, min(bn, n - bj * bn) * scale, kw * scale, fill, "#000", 0.6)
        if roomy or t in (0, k_tiles - 1):
            fig.text(xa + (kx + kw / 2) * scale, yc + min(m, (bi + 1) * bm) * scale + 9, f"k{t}", 11)
            fig.text(xc + bj * bn * scale - 4, yb + (kx + kw / 2) * scale, f"k{t}", 11, anchor="end")
    fig.rect(xc + bj * bn * scale, yc + bi * bm * scale, min(bn, n - bj * bn) * scale, min(bm, m - bi * bm) * scale,
             _PALE, "#000", 1.5)
    segs = [((xc + j * bn * scale, yc), (xc + j * bn * scale, yc + m * scale)) for j in range(grid_n + 1)]
    segs += [((xc, yc + i * bm * scale), (xc + n * scale, yc + i * bm * scale)) for i in range(grid_m + 1)]
    fig.lines(segs, "#000", 0.8)
    if bn * scale >= 56 and bm * scale >= 30:
        for i in range(grid_m):
            for j in range(grid_n):
                fig.text(xc + (j + 0.5) * bn * scale, yc + (i + 0.5) * bm * scale, f"CTA\n({i},{j})", 11,
                         fill="#555")
    else:
        fig.text(xc + (bj + 0.5) * bn * scale, yc + (bi + 0.5) * bm * scale, f"({bi},{bj})", 11)
    if thread_mn is not None:
        sm, sn = bm // tm, bn // tn
        x, y = xc + bj * bn * scale, yc + bi * bm * scale
        segs = [((x + j * sn * scale, y), (x + j * sn * scale, y + bm * scale)) for j in range(tn + 1)]
        segs += [((x, y + i * sm * scale), (x + bn * scale, y + i * sm * scale)) for i in range(tm + 1)]
        fig.lines(segs, "#888", 0.4)
        fig.rect(x, y, sn * scale, sm * scale, _STRONG, "#000", 1)
    draw_key(fig, 8, yc + m * scale + 8, fig.width - 16, key)
    return fig
