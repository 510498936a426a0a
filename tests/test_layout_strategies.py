"""Random layouts for the differential and property tests (seeded generator + hypothesis strategies).

Other test files import from here (``tests`` is on ``pythonpath``).  The few tests at the bottom check that
the generator really produces the awkward cases we want covered (stride 0, size-1 modes, depth >= 3,
non-powers of two).
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import strategies as st

from layoutlab import Layout, flatten, is_tuple, make_ordered_layout, product
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


# --------------------------------------------------------------------------- sanity of the generator


def test_generator_covers_awkward_cases():
    rng = random.Random(1)
    ls = [rand_layout(rng) for _ in range(2000)]
    flat_strides = [d for L in ls for d in (flatten(L.stride) if is_tuple(L.stride) else (L.stride,))]
    flat_shapes = [s for L in ls for s in (flatten(L.shape) if is_tuple(L.shape) else (L.shape,))]
    assert 0 in flat_strides
    assert 1 in flat_shapes
    assert any(s in (3, 5, 6) for s in flat_shapes)
    assert max(L.depth() for L in ls) >= 3
    assert sum(L.depth() >= 2 for L in ls) > 200


def test_compact_and_gapped_layouts_are_injective():
    rng = random.Random(3)
    for _ in range(500):
        L = rand_layout(rng, rng.choice(["compact", "gapped"]))
        t = L.table()
        assert np.unique(t).size == t.size, L


def test_ext_eval_matches_table_inside_domain():
    rng = random.Random(2)
    for _ in range(200):
        L = rand_layout(rng)
        n = L.size()
        assert np.array_equal(ext_eval(L, np.arange(n)), L.table())
