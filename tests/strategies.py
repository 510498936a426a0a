"""The random inputs of the differential and property tests, in one place: CuTe layouts (a seeded generator and
hypothesis strategies over it) and linear layouts over F2 (hypothesis strategies).

Test files import from here (``tests`` is on ``pythonpath``); ``test_layout_strategies.py`` checks that the
generator really produces the awkward cases we want covered (stride 0, size-1 modes, depth >= 3, non-powers of two).
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import strategies as st

from layoutlab import Layout, LinearLayout, flatten, is_tuple, make_ordered_layout, product
from layoutlab.cute.inttuple import unflatten

LEAVES = [1, 2, 2, 3, 4, 4, 5, 6, 8, 2, 3, 4]


# --------------------------------------------------------------------------- seeded generator


def rand_profile(rng: random.Random, n_leaves: int, max_depth: int):
    """A nesting of ``n_leaves`` leaves with depth <= max_depth (leaves are 0)."""
    if n_leaves == 1 and (max_depth == 0 or rng.random() < 0.5):
        return 0
    if max_depth == 0:
        return 0
    parts = []
    left = n_leaves
    while left > 0:
        k = rng.randint(1, min(left, 3))
        parts.append(k)
        left -= k
    if len(parts) == 1 and rng.random() < 0.7:
        return tuple(0 for _ in range(n_leaves)) if n_leaves > 1 else (0,)
    return tuple(rand_profile(rng, k, max_depth - 1) for k in parts)


def rand_shape(rng: random.Random, max_leaves=4, max_depth=3, max_size=2048, leaves=LEAVES):
    while True:
        n = rng.randint(1, max_leaves)
        prof = rand_profile(rng, n, max_depth)
        flat = [rng.choice(leaves) for _ in range(len(flatten(prof)) if is_tuple(prof) else 1)]
        if product(tuple(flat)) <= max_size:
            return unflatten(tuple(flat), prof) if is_tuple(prof) else flat[0]


def rand_layout(rng: random.Random, kind: str | None = None, **kw) -> Layout:
    """A random layout.  Kinds: 'compact' (a permuted compact layout, optionally with gaps),
    'random' (arbitrary small strides incl. 0) and 'zero' (compact with some stride-0 modes)."""
    shape = rand_shape(rng, **kw)
    kind = kind or rng.choice(["compact", "compact", "gapped", "random", "zero"])
    flat = list(flatten(shape)) if is_tuple(shape) else [shape]
    n = len(flat)
    if kind == "random":
        strides = [rng.choice([0, 1, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32]) for _ in range(n)]
    else:
        order = list(range(n))
        rng.shuffle(order)
        base = make_ordered_layout(tuple(flat), tuple(order)) if n > 1 else Layout(flat[0])
        strides = list(flatten(base.stride)) if n > 1 else [base.stride]
        if kind == "gapped":
            # stretch the layout: multiply strides from one mode on by a gap factor
            cut = rng.randint(0, n)
            g = rng.choice([2, 3, 4])
            ranks = sorted(range(n), key=lambda i: order[i])
            for i in ranks[cut:]:
                strides[i] *= g
            if rng.random() < 0.3:
                f = rng.choice([2, 3])
                strides = [d * f for d in strides]
        if kind == "zero":
            for i in range(n):
                if rng.random() < 0.35:
                    strides[i] = 0
        for i in range(n):
            if flat[i] == 1 and rng.random() < 0.5:
                strides[i] = rng.choice([0, 1, 7])
    stride = unflatten(tuple(strides), shape) if is_tuple(shape) else strides[0]
    return Layout(shape, stride)


def divisors(n: int):
    return [d for d in range(1, n + 1) if n % d == 0]


def rand_tiler_layout(rng: random.Random, size_hint: int) -> Layout:
    """A tiler whose size divides ``size_hint`` most of the time and whose strides are often compatible."""
    ds = divisors(size_hint)
    if rng.random() < 0.75:
        s0 = rng.choice(ds)
        rest = size_hint // s0
        if rng.random() < 0.5 and rest > 1:
            s1 = rng.choice(divisors(rest))
            shape = (s0, s1)
            stride = rng.choice([(1, s0), (s1, 1), (1, s0 * rng.choice(divisors(rest // s1)))])
            return Layout(shape, stride)
        return Layout(s0, rng.choice([1, 1, 1] + [d for d in ds if d <= size_hint // s0]))
    return rand_layout(rng, max_leaves=2, max_depth=1, max_size=max(2, size_hint))


def rand_tuple_tiler(rng: random.Random, layout: Layout):
    """A tuple tiler for ``layout``: per mode an int, a Layout or None (keep the mode)."""
    modes = list(layout) if is_tuple(layout.shape) else [layout]
    k = rng.randint(1, len(modes))
    out = []
    for m in modes[:k]:
        sz = m.size()
        r = rng.random()
        if r < 0.15:
            out.append(None)
        elif r < 0.6:
            out.append(rng.choice(divisors(sz)) if rng.random() < 0.85 else rng.randint(1, sz + 2))
        else:
            out.append(rand_tiler_layout(rng, sz))
    return tuple(out)


# --------------------------------------------------------------------------- evaluation helpers


def ext_eval(layout: Layout, idx) -> np.ndarray:
    """Evaluate integer indices with the last flat mode extended beyond the size (CuTe's convention)."""
    idx = np.asarray(idx, dtype=np.int64)
    shapes = flatten(layout.shape) if is_tuple(layout.shape) else (layout.shape,)
    strides = flatten(layout.stride) if is_tuple(layout.stride) else (layout.stride,)
    out = np.zeros_like(idx)
    rest = idx.copy()
    for k, (s, d) in enumerate(zip(shapes, strides)):
        if k == len(shapes) - 1:
            out += rest * d
        else:
            out += (rest % s) * d
            rest //= s
    return out


def dsl_literal(x) -> str:
    """Python source for the CuTe DSL building the same object (Layout, tuple tiler, int, None)."""
    if isinstance(x, Layout):
        return f"cute.make_layout({x.shape!r}, stride={x.stride!r})"
    if isinstance(x, tuple):
        return "(" + "".join(dsl_literal(e) + ", " for e in x) + ")"
    return repr(x)


# --------------------------------------------------------------------------- hypothesis strategies


@st.composite
def layouts(draw, kind=None, max_leaves=4, max_depth=3, max_size=1024):
    """Hypothesis strategy: random layouts (drawn through the seeded generator)."""
    seed = draw(st.integers(0, 2**32 - 1))
    return rand_layout(random.Random(seed), kind, max_leaves=max_leaves, max_depth=max_depth, max_size=max_size)


@st.composite
def injective_layouts(draw, max_leaves=4, max_depth=3, max_size=1024):
    """Layouts with no repeated offsets: permuted compact strides, possibly stretched by gaps
    (every mode's stride is a multiple of the span of the modes below it)."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = random.Random(seed)
    return rand_layout(rng, rng.choice(["compact", "gapped"]), max_leaves=max_leaves, max_depth=max_depth,
                       max_size=max_size)


@st.composite
def small_layouts(draw):
    """Small layouts with shapes nested up to two levels and strides 0..12, so two draws often give the same
    function (what the grading checks need)."""
    def mode():
        if draw(st.booleans()):
            return draw(st.integers(1, 4))
        return tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(2, 3))))

    shape = tuple(mode() for _ in range(draw(st.integers(1, 3))))
    stride = tuple(tuple(draw(st.integers(0, 12)) for _ in m) if isinstance(m, tuple) else draw(st.integers(0, 12))
                   for m in shape)
    return Layout(shape, stride)


def trees(leaf=st.integers(-40, 40), min_size=0):
    """Nested tuples of depth up to 4; the empty tuple included."""
    return st.recursive(leaf, lambda kids: st.lists(kids, min_size=min_size, max_size=4).map(tuple), max_leaves=12)


# --------------------------------------------------------------------------- linear layouts over F2

#: the in- and out-dim names of linear_layouts
IN_NAMES, OUT_NAMES = ["register", "lane", "warp"], ["dim0", "dim1"]


@st.composite
def square_layouts(draw, max_bits=6):
    """A random invertible layout: in dims register/lane, out dims dim0/dim1."""
    n0 = draw(st.integers(0, max_bits // 2))
    n1 = draw(st.integers(0, max_bits // 2))
    n = n0 + n1
    cols = list(range(n))
    # random invertible matrix: a permutation plus random lower-triangular XORs
    perm = draw(st.permutations(cols))
    mat = [1 << p for p in perm]
    for i in range(n):
        for j in range(i):
            if draw(st.booleans()):
                mat[i] ^= mat[j]
    r = draw(st.integers(0, n))

    def split(v):
        return [v & ((1 << n0) - 1), v >> n0]

    return LinearLayout.from_bases([("register", [split(v) for v in mat[:r]]),
                                    ("lane", [split(v) for v in mat[r:]])],
                                   ["dim0", "dim1"], [1 << n0, 1 << n1])


@st.composite
def any_layouts(draw):
    n0, n1 = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    ins = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    names = ["register", "lane", "warp"][:len(ins)]
    bases = [(nm, [[draw(st.integers(0, (1 << n0) - 1)), draw(st.integers(0, (1 << n1) - 1))] for _ in range(k)])
             for nm, k in zip(names, ins)]
    return LinearLayout.from_bases(bases, ["dim0", "dim1"], [1 << n0, 1 << n1], require_surjective=False)


@st.composite
def linear_layouts(draw, in_names=None, out_names=None, max_bits=3, sparse=False):
    """A random layout; with ``sparse`` most bases are single bits or zero (so products and identities occur)."""
    in_names = in_names or draw(st.lists(st.sampled_from(IN_NAMES), min_size=1, max_size=3, unique=True))
    out_names = out_names or draw(st.lists(st.sampled_from(OUT_NAMES), min_size=1, max_size=2, unique=True))
    sizes = [1 << draw(st.integers(0, max_bits)) for _ in out_names]

    def entry(size):
        if sparse:
            return draw(st.sampled_from([0] + [1 << k for k in range(size.bit_length() - 1)]))
        return draw(st.integers(0, size - 1))

    bases = [(d, [[entry(s) for s in sizes] for _ in range(draw(st.integers(0, max_bits)))]) for d in in_names]
    return LinearLayout.from_bases(bases, out_names, sizes, require_surjective=False)


@st.composite
def layouts_with_a_square_dim(draw):
    """A layout times the identity on a dim that is both an input and an output ("lane"), then maybe one
    basis changed so that lane mixes with the rest: quotients both exist and fail."""
    L = draw(linear_layouts(in_names=["register"], sparse=True)) * LinearLayout.identity_1d(
        1 << draw(st.integers(0, 2)), "lane", "lane")
    if draw(st.booleans()):
        bases = dict(L.bases)
        d = draw(st.sampled_from([d for d in bases if bases[d]] or ["lane"]))
        if bases.get(d):
            i = draw(st.integers(0, len(bases[d]) - 1))
            bases[d][i] = [draw(st.integers(0, s - 1)) for _, s in L.out_dims]
            L = LinearLayout.from_bases(list(bases.items()), L.get_out_dim_names(),
                                        [s for _, s in L.out_dims], require_surjective=False)
    return L


# --------------------------------------------------------------------------- seeded linear layouts over F2

#: the dim names of rand_linear_layout (Triton's)
LL_IN_NAMES = ["register", "lane", "warp", "block"]
LL_OUT_NAMES = ["dim0", "dim1", "dim2"]


def rand_linear_layout(rng, in_bits=None, out_sizes=None, in_names=None, out_names=None, surjective=False):
    """A random layout; with ``surjective`` it is built from a random invertible matrix plus extras."""
    if out_names is None:
        out_names = rng.sample(LL_OUT_NAMES, rng.randint(1, 2))
        out_names.sort(key=LL_OUT_NAMES.index)
    if out_sizes is None:
        out_sizes = [1 << rng.randint(0, 3) for _ in out_names]
    if in_names is None:
        in_names = rng.sample(LL_IN_NAMES, rng.randint(1, 3))
    if in_bits is None:
        in_bits = [rng.randint(0, 3) for _ in in_names]
    out_bits = [(s.bit_length() - 1) for s in out_sizes]
    total_out = sum(out_bits)
    total_in = sum(in_bits)
    cols = [rng.getrandbits(total_out) if total_out else 0 for _ in range(total_in)]
    if surjective and total_in >= total_out:
        # place the unit vectors at random distinct columns, mixed with random others: full rank
        pos = rng.sample(range(total_in), total_out)
        for k, p in enumerate(pos):
            cols[p] = 1 << k
        for p in pos:
            for q in range(total_in):
                if q != p and rng.random() < 0.3:
                    cols[q] ^= cols[p]
    bases, c = [], 0
    for name, n in zip(in_names, in_bits):
        vecs = []
        for _ in range(n):
            v, sh = [], 0
            for b in out_bits:
                v.append((cols[c] >> sh) & ((1 << b) - 1))
                sh += b
            vecs.append(v)
            c += 1
        bases.append((name, vecs))
    return LinearLayout.from_bases(bases, out_names, out_sizes, require_surjective=False)
