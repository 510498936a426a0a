"""A CPU model of fp8 GEMM numerics: e4m3 rounding, block scales, and wgmma's limited-precision accumulator
with promotion into fp32 (what :mod:`layoutlab.kernels.hopper_fp8` does on the GPU). numpy only.

The accumulator is a **model**, not a specification: NVIDIA does not document the precision of the fp8
``wgmma`` accumulator. The DeepSeek-V3 technical report (arXiv 2412.19437, section 3.3.2, "Increasing
Accumulation Precision") measured that on the H800 it retains "around 14 bits", and promotes partial sums to
fp32 CUDA-core registers every 128 elements of K (4 wgmmas). The model: each k-block's 32 products are exact
(an e4m3 x e4m3 product has at most 8 significant bits) and summed exactly; the sum is added to the running
accumulator and the result keeps ``bits`` significant bits, rounded toward zero (``bits=None``: fp32, round
to nearest). Every ``interval`` k-blocks (0 = never) the accumulator is added into an fp32 main accumulator
and restarts from zero. The GPU record (``results/gemm_fp8_h200.json``) holds the real kernel's error.
"""

import numpy as np

from ..errors import LayoutError

__all__ = ["E4M3_MAX", "quantize_e4m3", "block_scales", "quantize_blocks", "promotion_points", "promotion_k_tiles",
           "accumulate_model", "round_bf16", "relative_error"]

def _floats(x, op, name):
    """``x`` as a float64 array; a LayoutError for what is not numbers."""
    if x is None or isinstance(x, (str, bytes)):
        raise LayoutError(f"{op}: {name}={x!r}; give numbers (a number, a list or a numpy array)")
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise LayoutError(f"{op}: {name} is not an array of numbers ({err}); give a number, a list or a numpy "
                          f"array") from None


def _ints(op, **values):
    """Refuse a size or count that is not an integer (bool included), naming it."""
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise LayoutError(f"{op}: {name}={v!r}; give an integer")


#: Largest finite e4m3 (``float8_e4m3fn``: 4 exponent bits, bias 7, 3 mantissa bits, no infinities).
E4M3_MAX = 448.0


def quantize_e4m3(x):
    """Round to the nearest e4m3 value (ties to even), saturating at +-448; returned as float64.

    >>> quantize_e4m3([1.0, 1.06, 1.07, 300.0, 1000.0, 2.0 ** -10]).tolist()
    [1.0, 1.0, 1.125, 288.0, 448.0, 0.0]
    """
    x = _floats(x, "quantize_e4m3", "x")
    mag = np.abs(x)
    # exponent of each value, floored at e4m3's smallest normal exponent (-6): below it the step is 2^-9
    e = np.floor(np.log2(np.where(mag > 0, mag, 1.0)))
    step = 2.0 ** (np.maximum(e, -6) - 3)
    q = np.rint(x / step) * step
    return np.clip(q, -E4M3_MAX, E4M3_MAX)


def block_scales(x, rows, cols):
    """One fp32 scale per ``rows x cols`` block of ``x``: the block's max magnitude / 448 (1 where the block is
    zero), so that ``x / scale`` fits e4m3. DeepSeek-V3: 1 x 128 for activations (A), 128 x 128 for weights (B,
    K-major). Partial blocks at the edges count.

    >>> block_scales(np.array([[448.0, 1.0, 4.48], [0.0, 0.0, 896.0]]), 1, 2).tolist()
    [[1.0, 0.009999999776482582], [1.0, 2.0]]
    """
    x = _floats(x, "block_scales", "x")
    _ints("block_scales", rows=rows, cols=cols)
    if x.ndim != 2 or rows < 1 or cols < 1:
        raise LayoutError(f"block_scales: need a 2-D array and positive block sizes, got shape {x.shape} and "
                          f"blocks {rows} x {cols}")
    m, k = x.shape
    out = np.ones((-(-m // rows), -(-k // cols)), np.float32)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            amax = np.abs(x[i * rows:(i + 1) * rows, j * cols:(j + 1) * cols]).max()
            if amax > 0:
                out[i, j] = amax / E4M3_MAX
    return out


def quantize_blocks(x, scales, rows, cols):
    """``quantize_e4m3(x / scale)`` blockwise: the e4m3 values the GPU receives (as float64).

    >>> quantize_blocks([[1.0, 300.0]], [[2.0]], 1, 2).tolist()      # 150 rounds to 144 (step 16 above 128)
    [[0.5, 144.0]]
    """
    x, scales = _floats(x, "quantize_blocks", "x"), _floats(scales, "quantize_blocks", "scales")
    _ints("quantize_blocks", rows=rows, cols=cols)
    if x.ndim != 2 or scales.ndim != 2 or rows < 1 or cols < 1:
        raise LayoutError(f"quantize_blocks: need 2-D x and scales and positive block sizes, got shapes {x.shape}, "
                          f"{scales.shape} and blocks {rows} x {cols}")
    full = np.repeat(np.repeat(scales, rows, 0), cols, 1)[:x.shape[0], :x.shape[1]]
    return quantize_e4m3(x / full)


def promotion_points(k, interval, kblock=32):
    """The k-blocks (of ``kblock``) after which the partial sums are promoted into fp32, for a K of ``k``:
    every ``interval`` k-blocks and at the end (0 = only at the end: single-level accumulation).

    >>> promotion_points(512, 4), promotion_points(300, 4), promotion_points(300, 0)
    ([4, 8, 12, 16], [4, 8, 10], [10])
    """
    _ints("promotion_points", k=k, interval=interval, kblock=kblock)
    if interval < 0 or kblock < 1 or k < 1:
        raise LayoutError(f"promotion_points: need k >= 1, kblock >= 1 and interval >= 0 (0 = never), got "
                          f"k={k}, interval={interval}, kblock={kblock}")
    blocks = -(-k // kblock)
    points = list(range(interval, blocks + 1, interval)) if interval else []
    return points + ([blocks] if not points or points[-1] != blocks else [])


def promotion_k_tiles(k, interval, tile_k=128, kblock=32):
    """The k-tiles (0-based, in the order a consumer computes them) after which ``gemm_hopper_fp8`` promotes: the
    kernel promotes between k-tiles of ``tile_k``, every ``interval // (tile_k // kblock)`` of them, and after the
    last (``interval`` 0: only then). A partial last k-tile is a k-tile (TMA fills it with zeros).

    >>> promotion_k_tiles(1000, 4), promotion_k_tiles(1000, 12), promotion_k_tiles(1000, 0)
    ([0, 1, 2, 3, 4, 5, 6, 7], [2, 5, 7], [7])
    """
    _ints("promotion_k_tiles", k=k, interval=interval, tile_k=tile_k, kblock=kblock)
    per_tile = tile_k // kblock
    if kblock < 1 or per_tile < 1:
        raise LayoutError(f"promotion_k_tiles: need kblock >= 1 and tile_k >= kblock, got tile_k={tile_k}, "
                          f"kblock={kblock}")
    if k < 1 or interval < 0 or interval % per_tile:
        raise LayoutError(f"promotion_k_tiles: need k >= 1 and an interval of 0 or a multiple of {per_tile} "
                          f"k-blocks (the kernel promotes between k-tiles), got k={k}, interval={interval}")
    k_tiles, every = -(-k // tile_k), interval // per_tile
    return [j for j in range(k_tiles) if (every and (j + 1) % every == 0) or j == k_tiles - 1]


def _keep_bits(x, bits):
    """x with ``bits`` significant bits, rounded toward zero."""
    m, e = np.frexp(x)                       # x = m * 2^e, 0.5 <= |m| < 1
    return np.ldexp(np.trunc(m * 2.0 ** bits) / 2.0 ** bits, e)


def accumulate_model(a, b, interval, bits=14, kblock=32, scale_a=None, scale_b=None, block=128):
    """``a @ b`` as the model of wgmma + promotion computes it (float64 out; the fp32 main accumulator is
    kept in float32). ``a`` (M, K) and ``b`` (K, N) hold e4m3 values; ``scale_a`` (M, K/block) and
    ``scale_b`` (N/block, K/block), when given, multiply each k-tile's partial sums at promotion (then
    ``interval`` must be ``block / kblock``). ``bits=None`` accumulates in fp32 (round to nearest).

    >>> a, b = np.full((1, 16384), 1.125), np.full((16384, 1), 1.125)     # exact sum: 20736
    >>> float(accumulate_model(a, b, 0)[0, 0]), float(accumulate_model(a, b, 4)[0, 0])
    (20580.0, 20736.0)

    Never promoted, each k-block's 40.5 lands on an accumulator whose 14 bits step by 1 above 8192: the
    half is cut off 256 times.
    """
    a, b = _floats(a, "accumulate_model", "a"), _floats(b, "accumulate_model", "b")
    _ints("accumulate_model", interval=interval, kblock=kblock, block=block)
    if bits is not None:
        _ints("accumulate_model", bits=bits)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise LayoutError(f"accumulate_model: need a (M, K) and b (K, N), got shapes {a.shape} and {b.shape}")
    (m, k), n = a.shape, b.shape[1]
    points = set(promotion_points(k, interval, kblock))
    scaled = scale_a is not None
    if scaled and interval * kblock != block:
        raise LayoutError(f"accumulate_model: block scales change every {block} of K; promote every "
                          f"{block // kblock} k-blocks, not {interval}")
    main = np.zeros((m, n), np.float32)
    part = np.zeros((m, n), np.float64 if bits else np.float32)
    for j in range(-(-k // kblock)):
        s = slice(j * kblock, (j + 1) * kblock)
        block_sum = a[:, s] @ b[s, :]                     # exact: at most 32 products of 8 significant bits
        part = _keep_bits(part + block_sum, bits) if bits else (part + block_sum.astype(np.float32))
        if j + 1 in points:
            if scaled:
                kt = j * kblock // block
                sn = np.repeat(np.asarray(scale_b, np.float64)[:, kt], block)[:n]
                part = part * np.asarray(scale_a, np.float64)[:, kt:kt + 1] * sn[None, :]
            main = (main + part.astype(np.float32)).astype(np.float32)
            part = np.zeros_like(part)
    return main.astype(np.float64)


def round_bf16(x):
    """Round to the nearest bfloat16 (ties to even), as float64: the kernel's output rounding.

    >>> round_bf16([1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, 3.0]).tolist()     # ties go to the even one
    [1.0, 1.015625, 3.0]
    """
    bits = _floats(x, "round_bf16", "x").astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def relative_error(c, ref):
    """``||c - ref||_F / ||ref||_F`` in float64 (the measure of the GPU tests and the record).

    >>> round(relative_error([3.0, 4.0], [3.0, 5.0]), 4)             # 1 / sqrt(34)
    0.1715
    """
    c, ref = _floats(c, "relative_error", "c"), _floats(ref, "relative_error", "ref")
    return float(np.linalg.norm(c - ref) / np.linalg.norm(ref))
