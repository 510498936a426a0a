"""The seeded layout generator of ``strategies.py`` produces the awkward cases the differential and property
tests need covered (stride 0, size-1 modes, depth >= 3, non-powers of two), and its extended evaluation agrees
with the layout inside the domain."""

import random

import numpy as np

from layoutlab import flatten, is_tuple
from strategies import ext_eval, rand_layout


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
