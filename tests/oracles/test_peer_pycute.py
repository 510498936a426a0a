"""pycute's own test suite (NVIDIA/cutlass ``test/python/pycute/``), ported to layoutlab.

Each case asserts what the original asserts, through our functions (pycute's ``Layout``, ``coalesce``,
``composition``, ``complement``, ``left_inverse``, ``right_inverse``, ``logical_product``, ``zipped_product``,
``tiled_product``, ``Swizzle`` and the int-tuple helpers map one to one; pycute's ``Integer`` type test maps to
``is_int``).  The comment above each group names the original file and test method.  The inputs are pycute's;
the checks are written here (no pycute code is copied).

``test_pycute_case_count`` runs every case once more and prints the count in the oracle summary.
"""

from __future__ import annotations

import pytest

from layoutlab import (
    Layout,
    LayoutError,
    Swizzle,
    coalesce,
    complement,
    composition,
    inner_product,
    is_int,
    left_inverse,
    logical_product,
    make_layout,
    prefix_product,
    product,
    right_inverse,
    shape_div,
    size,
    tiled_product,
    zipped_product,
)
from layoutlab.cute.inttuple import leaves

CASES = []  # (group, id, check)


def case(group, ident):
    def register(check):
        CASES.append((group, ident, check))
        return check
    return register


def L(shape, stride=None):
    return Layout(shape, stride)


# --------------------------------------------------------------------------- test_coalesce.py :: test_coalesce
# Post-condition: same size, and coalesce(A)(i) == A(i) for every index.

COALESCE = [L(1, 0), L(1, 1), L((2, 4)), L((2, 4, 6)), L((2, 4, 6), (1, 6, 2)), L((2, 1, 6), (1, 7, 2)),
            L((2, 1, 6), (4, 7, 8)), L((2, (4, 6))), L((2, 4), (4, 1)), L((2, 4, 6), (24, 6, 1)),
            L((2, 1, 3), (2, 4, 4)), L(((2, 2), (2, 2)), ((1, 4), (8, 32)))]


def _check_coalesce(A):
    R = coalesce(A)
    assert size(R) == size(A)
    assert [R(i) for i in range(size(A))] == [A(i) for i in range(size(A))]


for _A in COALESCE:
    case("coalesce", str(_A))(lambda A=_A: _check_coalesce(A))


# --------------------------------------------------------------------------- test_complement.py :: test_complement
# Post-condition: the codomains of A and complement(A) are disjoint (they may share only offset 0).

COMPLEMENT = [L(1, 0), L(1, 1), L(4, 0), L((2, 4), (1, 2)), L((2, 3), (1, 2)), L((2, 4), (1, 4)),
              L((2, 4, 8), (8, 1, 64)), L(((2, 2), (2, 2)), ((1, 4), (8, 32))), L((2, (3, 4)), (3, (1, 6))),
              L((4, 6), (1, 6)), L((4, 10), (1, 10))]


def _check_complement(A):
    R = complement(A)
    image = {A(a) for a in range(size(A))}
    for b in range(size(R)):
        assert R(b) not in image or R(b) == 0


for _A in COMPLEMENT:
    case("complement", str(_A))(lambda A=_A: _check_complement(A))


# --------------------------------------------------------------------------- test_composition.py :: test_composition
# Post-condition: R(i) == A(B(i)) for every index of R (A evaluated past its size extends its last mode).

COMPOSITION = [
    (L(1, 0), L(1, 0)), (L(1, 0), L(1, 1)), (L(1, 1), L(1, 0)), (L(1, 1), L(1, 1)),
    (L(4), L(4)), (L(4, 2), L(4)), (L(4), L(4, 2)), (L(4, 0), L(4)), (L(4), L(4, 0)), (L(1, 0), L(4)),
    (L(4), L(1, 0)), (L(4), L(2)), (L(4, 2), L(2)), (L(4), L(2, 2)), (L(4, 2), L(2, 2)),
    (L(12), L((4, 3))), (L(12, 2), L((4, 3))), (L(12), L((4, 3), (3, 1))), (L(12, 2), L((4, 3), (3, 1))),
    (L(12), L((2, 3), (2, 4))), (L((4, 3)), L((4, 3))), (L((4, 3)), L(12)), (L((4, 3)), L(6, 2)),
    (L((4, 3)), L((6, 2), (2, 1))), (L((4, 3), (3, 1)), L((4, 3))), (L((4, 3), (3, 1)), L(12)),
    (L((4, 3), (3, 1)), L(6, 2)), (L((4, 3), (3, 1)), L((6, 2), (2, 1))),
    (L((8, 8)), L(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))),
    (L((8, 8), (8, 1)), L(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))),
    (L(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32))), L(8, 4)),
    (L((4, 2), (1, 16)), L((4, 2), (2, 1))), (L((2, 2), (2, 1)), L((2, 2), (2, 1))),
    (L((4, 8, 2)), L((2, 2, 2), (2, 8, 1))), (L((4, 8, 2), (2, 8, 1)), L((2, 2, 2), (1, 8, 2))),
    (L((4, 8, 2), (2, 8, 1)), L((4, 2, 2), (2, 8, 1))),
    (L((4, 6, 8), (1, 4, 7)), L(6, 1)),            # "Pre-coalesced LHS"
    (L((4, 6, 8, 10), (2, 3, 5, 7)), L(6, 12)),    # "Mid-layout truncation"
]


def _check_composition(A, B):
    R = composition(A, B)
    assert [R(i) for i in range(size(R))] == [A(B(i)) for i in range(size(R))]


for _A, _B in COMPOSITION:
    case("composition", f"{_A} o {_B}")(lambda A=_A, B=_B: _check_composition(A, B))


# --------------------------------------------------------------------------- test_int_tuple.py
# test_product, test_inner_product, test_shape_div, test_prefix_product: worked values.

INT_TUPLE = [
    ("product", lambda: product(2), 2),
    ("product", lambda: product((3, 2)), 6),
    ("product", lambda: product(product(((2, 3), 4))), 24),
    ("inner_product", lambda: inner_product(2, 3), 6),
    ("inner_product", lambda: inner_product((1, 2), (3, 2)), 7),
    ("inner_product", lambda: inner_product(((2, 3), 4), ((2, 1), 2)), 15),
    ("shape_div", lambda: shape_div((3, 4), 6), (1, 2)),
    ("shape_div", lambda: shape_div((3, 4), 12), (1, 1)),
    ("shape_div", lambda: shape_div((3, 4), 36), (1, 1)),
    ("shape_div", lambda: shape_div(((3, 4), 6), 36), ((1, 1), 2)),
    ("shape_div", lambda: shape_div((6, (3, 4)), 36), (1, (1, 2))),
    ("prefix_product", lambda: prefix_product(2), 1),
    ("prefix_product", lambda: prefix_product((3, 2)), (1, 3)),
    ("prefix_product", lambda: prefix_product((3, 2, 4)), (1, 3, 6)),
    ("prefix_product", lambda: prefix_product(((2, 3), 4)), ((1, 2), 6)),
    ("prefix_product", lambda: prefix_product(((2, 3), (2, 1, 2), (5, 2, 1))), ((1, 2), (6, 12, 12), (24, 120, 240))),
]


def _check_value(f, want):
    assert f() == want


for _k, (_name, _f, _want) in enumerate(INT_TUPLE):
    case(f"int_tuple.{_name}", f"{_name}#{_k}")(lambda f=_f, w=_want: _check_value(f, w))


# --------------------------------------------------------------------------- test_left_inverse.py :: test_left_inverse
# Post-condition: left_inverse(A)(A(i)) == i for every index of A.

LEFT_INVERSE = [L(1, 0), L((1, 1), (0, 0)), L(1, 1), L(4, 1), L(4, 2), L((8, 4), (1, 8)), L((8, 4), (4, 1)),
                L((2, 4, 6), (1, 2, 8)), L((2, 4, 6), (4, 1, 8)), L((4, 2), (1, 16))]


def _check_left_inverse(A):
    inv = left_inverse(A)
    assert [inv(A(i)) for i in range(size(A))] == list(range(size(A)))


for _A in LEFT_INVERSE:
    case("left_inverse", str(_A))(lambda A=_A: _check_left_inverse(A))


# --------------------------------------------------------------------------- test_right_inverse.py :: test_right_inverse
# Post-condition: A(right_inverse(A)(i)) == i for every index of the inverse.

RIGHT_INVERSE = [L(1, 0), L((1, 1), (0, 0)), L((3, 7), (0, 0)), L(1, 1), L(4, 0), L(4, 1), L(4, 2),
                 L((2, 4), (0, 2)), L((8, 4), (1, 8)), L((8, 4), (4, 1)), L((2, 4, 6), (1, 2, 8)),
                 L((2, 4, 6), (4, 1, 8)), L((4, 2), (1, 16))]


def _check_right_inverse(A):
    inv = right_inverse(A)
    assert [A(inv(i)) for i in range(size(inv))] == list(range(size(inv)))


for _A in RIGHT_INVERSE:
    case("right_inverse", str(_A))(lambda A=_A: _check_right_inverse(A))


# --------------------------------------------------------------------------- test_typing.py :: test_typing
# pycute's Integer type: int is one, float, str and bool are not (our is_int).

for _v, _want in ((1, True), (1.0, False), ("hi", False), (False, False)):
    case("typing", repr(_v))(lambda v=_v, w=_want: _check_value(lambda: is_int(v), w))


# --------------------------------------------------------------------------- test_product.py (pycute.logical_product)
# test_logical_product: rank 2, mode 0 is A, mode 1 has size(B) elements (test/unit/cute/core/logical_product.cpp).

PRODUCT = [(L(1, 0), L(1, 0)), (L(1, 1), L(1, 0)), (L(1, 0), L(1, 1)), (L(1, 1), L(1, 1)), (L(3, 1), L(4, 0)),
           (L(3, 0), L(4, 1)), (L(3, 0), L(4, 0)), (L(3, 2), L(4, 1)), (L(3), L((2, 4)))]


def _check_product_shape(A, B):
    R = logical_product(A, B)
    assert len(R) == 2 and R[0] == A and size(R[1]) == size(B)


for _A, _B in PRODUCT:
    case("product.logical_product", f"{_A} x {_B}")(lambda A=_A, B=_B: _check_product_shape(A, B))

# test_logical_product_int_tiler: an int tiler behaves like Layout(tiler)
for _A in (L((2, 5), (5, 1)), L(3, 2)):
    case("product.int_tiler", f"{_A} x 4")(lambda A=_A: _check_product_shape(A, 4))
case("product.int_tiler", "equal")(lambda: _check_value(lambda: logical_product(L((2, 5), (5, 1)), 4),
                                                        logical_product(L((2, 5), (5, 1)), Layout(4))))

# test_logical_product_tuple_tiler: a tuple of ints behaves like the tuple of Layouts
case("product.tuple_tiler", "(4,2)")(lambda: _check_value(lambda: logical_product(L((2, 5), (5, 1)), (4, 2)),
                                                          logical_product(L((2, 5), (5, 1)), (Layout(4), Layout(2)))))

# test_zipped_tiled_product_int_tiler
case("product.zipped_tiled", "zipped")(lambda: _check_value(lambda: zipped_product(L((2, 5), (5, 1)), 4),
                                                            zipped_product(L((2, 5), (5, 1)), Layout(4))))
case("product.zipped_tiled", "tiled")(lambda: _check_value(lambda: tiled_product(L((2, 5), (5, 1)), 4),
                                                           tiled_product(L((2, 5), (5, 1)), Layout(4))))


# --------------------------------------------------------------------------- test_logical_product.py (2026 version)


def _flat_equal(X, Y):
    return leaves(X.shape) == leaves(Y.shape) and leaves(X.stride) == leaves(Y.stride)


def _check_product_int(A, n):
    R = logical_product(A, n)
    assert _flat_equal(R, logical_product(A, Layout(n)))  # an int tiler and its Layout spelling agree
    assert size(R) == size(A) * n                          # the product covers size(block) * size(tiler)
    return R


# test_logical_product
case("logical_product", "(2,5):(5,1) x 4 value")(
    lambda: _check_value(lambda: _check_product_int(L((2, 5), (5, 1)), 4), L(((2, 5), 4), ((5, 1), 10))))
for _A, _n in ((L(4, 1), 3), (L((4, 8), (1, 4)), 16), (L(((2, 2), (2, 2)), ((1, 4), (8, 32))), 4)):
    case("logical_product", f"{_A} x {_n}")(lambda A=_A, n=_n: _check_product_int(A, n))


# test_logical_product_none: a None tiler returns the block itself
def _check_product_none():
    A = L((2, 5), (5, 1))
    assert logical_product(A, None) is A


case("logical_product", "None")(_check_product_none)


# test_logical_product_tuple
def _check_product_tuple():
    A = L((2, 5), (5, 1))
    R = logical_product(A, (4, 2))
    assert size(R) == size(A) * 8
    assert _flat_equal(R, make_layout(logical_product(A[0], Layout(4)), logical_product(A[1], Layout(2))))


case("logical_product", "tuple")(_check_product_tuple)

# test_zipped_and_tiled_product
for _f in (zipped_product, tiled_product):
    case("logical_product", _f.__name__)(
        lambda f=_f: _check_value(lambda: size(f(L((2, 5), (5, 1)), 4)), 40))


# --------------------------------------------------------------------------- test_swizzle.py
# Swizzle(B, M, S) is CuTe's Swizzle<B,M,S>; the expected tables are pycute's (cross-checked there against C++).

PROBE = [0, 1, 2, 7, 8, 9, 15, 16, 63, 64, 255, 256]

# test_shift_zero_is_identity
case("swizzle.shift_zero", "Swizzle(0,4,0)")(lambda: _check_value(lambda: [Swizzle(0, 4, 0)(x) for x in PROBE], PROBE))

# test_patterns_match_cpp
SWIZZLE_TABLES = [
    ((2, 3, -3), [0, 1, 2, 7, 72, 73, 79, 144, 255, 64, 63, 256]),
    ((1, 0, 1), [0, 1, 3, 6, 8, 9, 14, 16, 62, 64, 254, 256]),
    ((3, 2, 3), [0, 1, 2, 7, 8, 9, 15, 16, 59, 72, 227, 256]),
    ((2, 1, -2), [0, 1, 10, 31, 8, 9, 23, 16, 39, 64, 231, 256]),
]
for _bms, _want in SWIZZLE_TABLES:
    case("swizzle.patterns", f"Swizzle{_bms}")(
        lambda bms=_bms, w=_want: _check_value(lambda: [Swizzle(*bms)(x) for x in PROBE], w))


# test_involutivity: every legal swizzle is its own inverse on 0 .. 2^(B+M+|S|)
def _check_involution(b, m, s):
    sw = Swizzle(b, m, s)
    domain = range(1 << (b + m + abs(s)))
    assert [sw(sw(x)) for x in domain] == list(domain)


for _bms in ((0, 4, 0), (2, 3, -3), (1, 0, 1), (3, 2, 3), (2, 1, -2)):
    case("swizzle.involutivity", f"Swizzle{_bms}")(lambda bms=_bms: _check_involution(*bms))


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("check", [pytest.param(check, id=f"{group}[{ident}]") for group, ident, check in CASES])
def test_pycute_case(check):
    check()


def test_pycute_case_count():
    """Every case once more, counted; printed in the oracle summary (``layoutlab_pytest``)."""
    failed = []
    for group, ident, check in CASES:
        try:
            check()
        except (AssertionError, LayoutError) as e:
            failed.append(f"{group}[{ident}]: {e}")
    files = {group.split(".")[0] for group, _, _ in CASES}
    print(f"\npycute suite (NVIDIA/cutlass test/python/pycute, {len(files)} files) ported, checked as pycute "
          f"asserts (differential port): {len(CASES)} cases, {len(CASES) - len(failed)} pass")
    assert len(CASES) >= 137  # no case silently dropped (the 10 files hold 137 cases)
    assert not failed, failed
