"""The bridge between CuTe and linear layouts: a CuTe layout, swizzle or TV layout with power-of-two shapes and
strides is a linear map over F2."""

from __future__ import annotations

from ..errors import LayoutError
from ..cute.inttuple import zip_leaves
from .f2 import is_pow2, log2, next_pow2_above
from .layout import LinearLayout

__all__ = ["linear_layout_from_cute", "cute_from_linear_layout", "swizzle_to_linear_layout",
           "tv_layout_to_linear_layout"]


def _shape_stride(layout):
    if not (hasattr(layout, "shape") and hasattr(layout, "stride")):
        raise LayoutError(f"linear_layout_from_cute: {layout!r} is not a CuTe Layout or ComposedLayout")
    return layout.shape, layout.stride


def linear_layout_from_cute(layout, in_dim_names=None, out_dim_name: str = "offset") -> LinearLayout:
    """A CuTe layout with power-of-two shapes and strides as a LinearLayout.

    Math: bit j of a mode (s):(d) adds d * 2^j to the offset, an XOR exactly when every stride is 0 or a power of
    two and no two bits land on the same offset bit. Mode k becomes in-dim ``in_dim_names[k]`` (default dimk).

    >>> from layoutlab import Layout
    >>> linear_layout_from_cute(Layout((8, 4), (4, 1))).bases
    [('dim0', [[4], [8], [16]]), ('dim1', [[1], [2]])]
    """
    op = "linear_layout_from_cute"
    from ..cute.swizzle import ComposedLayout, Swizzle

    if isinstance(layout, ComposedLayout):      # Sw o 0 o outer: the outer layout's F2 map, then the swizzle's
        if layout.offset != 0:
            raise LayoutError(f"{op}: offset {layout.offset} != 0 makes {layout} affine, not linear over F2")
        if not isinstance(layout.inner, Swizzle):
            raise LayoutError(f"{op}: inner {layout.inner} of {layout} is not a Swizzle")
        outer, sw = linear_layout_from_cute(layout.outer, in_dim_names, out_dim_name), layout.inner
        nbits = max(outer.total_out_dim_size_log2(), sw.num_base + sw.num_bits + abs(sw.num_shift))
        swizzle = swizzle_to_linear_layout(sw, nbits, out_dim_name)
        return LinearLayout._make(outer._bases, swizzle.in_dims).compose(swizzle)
    shape, stride = _shape_stride(layout)
    top = list(zip(shape, stride)) if isinstance(shape, (tuple, list)) else [(shape, stride)]
    in_dim_names = [f"dim{k}" for k in range(len(top))] if in_dim_names is None else list(in_dim_names)
    if len(in_dim_names) != len(top):
        raise LayoutError(f"{op}: {len(in_dim_names)} in-dim names {in_dim_names} for a layout of rank {len(top)}")
    seen, bases = {}, []                # seen: offset bit -> the coordinate bit adding it
    for k, (name, (s, d)) in enumerate(zip(in_dim_names, top)):
        vecs = []
        for ms, md in ((int(a), int(b)) for a, b in zip_leaves(s, d)):
            if not is_pow2(ms):
                raise LayoutError(
                    f"{op}: mode {k} has extent {ms} in shape {shape}, not a power of two; a linear layout "
                    f"over F2 needs 2^k extents (pad the tile to {next_pow2_above(ms - 1)} or use the CuTe layout)")
            if ms > 1 and md != 0 and not is_pow2(md):  # a size-1 mode adds no bit, whatever its stride
                raise LayoutError(f"{op}: mode {k} has stride {md} in {stride}, neither 0 nor a power of two, so "
                                  "offsets carry between bits and the map is not linear over F2")
            for v in (md << j for j in range(log2(ms))):
                if v in seen:
                    raise LayoutError(
                        f"{op}: coordinate bits {seen[v]} and ({name}, bit {len(vecs)}) both add {v} to the "
                        f"offset; the sum then carries and is not an XOR (the layout is not linear)")
                if v:
                    seen[v] = (name, len(vecs))
                vecs.append([v])
        bases.append((name, vecs))
    return LinearLayout(bases, [(out_dim_name, next_pow2_above(max(seen, default=0)))], require_surjective=False)


def cute_from_linear_layout(ll: LinearLayout):
    """Back from a LinearLayout to a CuTe ``Layout``, when one exists (the inverse of :func:`linear_layout_from_cute`).

    Each in-dim is a mode, each input bit (image 0 or a power of two in the flattened output) a size-2 sub-mode,
    doubling runs merged (``2,2,2 : 1,2,4`` -> ``8:1``); an image with several bits (a swizzle) is refused.

    >>> from layoutlab import Layout
    >>> cute_from_linear_layout(linear_layout_from_cute(Layout((8, 64), (64, 1))))
    (8,64):(64,1)
    """
    from ..cute.layout import Layout  # the algebra module's Layout; imported late to keep this module standalone

    def one(xs):                        # a single mode stands alone
        return xs[0] if len(xs) == 1 else tuple(xs)

    shapes, strides = [], []
    for d, vs in ll.flatten_outs()._bases:
        ms, md = [], []
        for i, v in enumerate(b[0] if b else 0 for b in vs):    # no out-dim: every input maps to offset 0
            if v & (v - 1):
                raise LayoutError(f"cute_from_linear_layout: bit {i} of in-dim '{d}' maps to {v} = 0b{v:b}, a sum "
                                  "of several offset bits (an XOR); a CuTe Layout can only add strides - express "
                                  "it as a Swizzle composed with a Layout instead")
            if ms and v == md[-1] * ms[-1]:     # doubling the previous run's stride (or 0 after 0) extends it
                ms[-1] *= 2
            else:
                ms.append(2)
                md.append(v)
        shapes.append(one(ms or [1]))
        strides.append(one(md or [0]))
    return Layout(one(shapes), one(strides))


def swizzle_to_linear_layout(swizzle, num_bits: int | None = None, dim: str = "offset") -> LinearLayout:
    """The swizzle Sw<B,M,S> as an invertible F2 map on offset bits ``dim -> dim``.

    Math: Sw(x) = x XOR ((x & yyy_mask) >> S): bit M+S+i also flips bit M+i (S>0), Sw = I + E, E^2 = 0.

    >>> from layoutlab import Swizzle
    >>> swizzle_to_linear_layout(Swizzle(1, 0, 1), 2).bases      # bit 1 also flips bit 0
    [('offset', [[1], [3]])]
    """
    B, M, S = swizzle.num_bits, swizzle.num_base, swizzle.num_shift
    need = M + B + abs(S)
    n = need if num_bits is None else int(num_bits)
    if n < need:
        raise LayoutError(f"swizzle_to_linear_layout: {swizzle} reads bit {need - 1}, but num_bits={n}")
    return LinearLayout([(dim, [[swizzle(1 << i)] for i in range(n)])], [(dim, 1 << n)])


def tv_layout_to_linear_layout(tv_layout, tile_mn, threads_per_warp: int = 32) -> LinearLayout:
    """A CuTe TV layout (thread, value) -> index ``m + M*n`` of an M x N tile, as register/lane/warp -> dim0/dim1
    (thread bits below ``threads_per_warp`` are lanes, the rest warps; value bits are registers).

    >>> from layoutlab import Layout
    >>> tv_layout_to_linear_layout(Layout(((8, 4, 2), (2, 2)), ((32, 2, 8), (16, 1))), (16, 16)).bases[0]
    ('register', [[0, 1], [1, 0]])
    """
    op = "tv_layout_to_linear_layout"
    M, N = (int(x) for x in tile_mn)
    for what, x in (("M", M), ("N", N), ("threads_per_warp", threads_per_warp)):
        if not is_pow2(x):
            raise LayoutError(f"{op}: {what}={x} is not a power of two")
    shape, stride = _shape_stride(tv_layout)
    if not (isinstance(shape, (tuple, list)) and len(shape) == 2):
        raise LayoutError(f"{op}: a TV layout has two top-level modes (thread, value), got shape {shape}")
    threads, values = (vs for _, vs in linear_layout_from_cute(tv_layout, ["thread", "value"], "idx")._bases)
    bad = [v for (v,) in values + threads if v >= M * N]
    if bad:
        raise LayoutError(f"{op}: the layout reaches index {bad[0]}, outside the {M}x{N} tile")
    lanes = log2(threads_per_warp)
    flat = LinearLayout._make([("register", values), ("lane", threads[:lanes] + ((0,),) * (lanes - len(threads))),
                               ("warp", threads[lanes:])], [("idx", M * N)])
    return flat.reshape_outs([("dim0", M), ("dim1", N)])


