"""The four conformance defects of issue 29 (found by running NVlabs PyCuTe's unit tests against layoutlab), each
judged by the CuTe DSL on the issue's case and on a family of seeded random cases:

1. ``identity tiler``: a divide by a tiler of coordinates (basis strides, e.g. ``make_identity_layout``) takes its
   complement against ``shape(A)`` mode by mode, so ``zipped_divide((12,8):(1,12), make_identity_layout((3,2)))``
   has the rest ``(4,4)`` (it was ``(32,1)``, reaching past A);
2. ``nested basis``: complement, right_inverse and left_inverse of layouts whose strides are nested basis elements
   (``7@1@2``: mode 1 of mode 2) answer as the DSL does (they were refused);
3. ``ordered layout``: ``make_ordered_layout`` refuses an order that is not weakly congruent to the shape
   (``make_ordered_layout(8, (0,1))`` was accepted) and takes a weakly congruent one (an integer orders a whole mode);
4. ``identity product``: a by-mode ``logical_product`` of an identity layout is not injective in the DSL (each mode's
   complement is taken against an integer cotarget, which is coordinate mode 0).  A deliberate choice: we print
   what the DSL prints (names and printing follow the DSL); ``chapters/conformance.md`` shows the case.

Outcome classes, counted per family and printed in the oracle summary: ``identical`` (both print the same; where
the operation has a definition we can check, ours also meets it), ``both_refuse``, ``dsl_wrong:<why>`` (we refuse,
the DSL's answer breaks the operation's contract) and the failures ``MISMATCH`` / ``OVERSTRICT`` / ``OURS_WRONG``.
The last test checks the sentences of the conformance page against this run.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from differential import count_line, run_differential
from layoutlab import (Layout, LayoutError, complement, composition, flat_divide, left_inverse, logical_divide,
                       logical_product, make_identity_layout, make_layout, make_ordered_layout, parse_layout, right_inverse, size,
                       tiled_divide, zipped_divide)
from layoutlab.cute.basis import ScaledBasis
from layoutlab.cute.inttuple import is_tuple, leaves, product, unflatten
from layoutlab.dsl import HAVE_DSL, SKIP_REASON
from strategies import divisors, rand_layout, rand_shape
from test_conformance_dsl import lit

SEED = 20261128
N = 40              # random cases per family and operation
PAGE = Path(__file__).resolve().parents[2] / "chapters" / "conformance.md"

dsl = pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON or "CuTe DSL unavailable")
pytestmark = pytest.mark.xdist_group("conformance_pycute_defects")


class Case:
    __slots__ = ("family", "op", "snippet", "ours", "error", "check", "dsl_wrong")

    def __init__(self, family, op, fn, snippet, check=None, dsl_wrong=None):
        self.family, self.op, self.snippet, self.check, self.dsl_wrong = family, op, snippet, check, dsl_wrong
        try:
            self.ours, self.error = fn(), None
        except LayoutError as e:
            self.ours, self.error = None, e


def _values(L):
    return [L(i) for i in range(size(L))]


def _key(v):
    return str(v)


# --------------------------------------------------------------------------- 1. divides by an identity tiler


def _coordinate_tiler(rng, A):
    """A tiler of coordinates for A: per top-level mode i of A (some skipped), one or two modes ``k@i`` whose sizes
    divide that mode's size; often simply ``make_identity_layout`` of a divisor of each mode."""
    modes = list(A) if is_tuple(A.shape) else [A]
    if rng.random() < 0.5:
        return make_identity_layout(tuple(rng.choice(divisors(size(m))) for m in modes))
    parts = []
    for i, m in enumerate(modes):
        if rng.random() < 0.25:
            continue
        left, step = size(m), 1
        for _ in range(rng.choice([1, 1, 2])):
            s = rng.choice(divisors(left))
            parts.append((s, ScaledBasis(step, i)))
            step, left = step * s, left // s
    parts = parts or [(size(modes[0]), ScaledBasis(1, 0))]
    rng.shuffle(parts)
    if len(parts) == 1:
        return Layout(*parts[0])
    return Layout(tuple(p[0] for p in parts), tuple(p[1] for p in parts))


def _is_rearrangement(A, R):
    """A divide re-indexes A: the same size and the same multiset of offsets."""
    return size(R) == size(A) and sorted(_values(R)) == sorted(_values(A))


def _divide_cases(rng):
    out = []
    A = rand_layout(rng, rng.choice(["compact", "compact", "gapped"]), max_size=256, max_leaves=4, max_depth=2)
    if not is_tuple(A.shape) or len(A.shape) < 2:
        A = make_layout(A, Layout(rng.choice([2, 3, 4]), size(A) * 2))
    T = _coordinate_tiler(rng, A)
    for name, fn in (("logical_divide", logical_divide), ("zipped_divide", zipped_divide),
                     ("tiled_divide", tiled_divide), ("flat_divide", flat_divide)):
        out.append(Case("identity tiler", name, lambda A=A, T=T, fn=fn: fn(A, T), f"cute.{name}({lit(A)}, {lit(T)})",
                        lambda R, A=A: _is_rearrangement(A, R),
                        lambda v, A=A: None if _is_rearrangement(A, parse_layout(v)) else
                        "not a rearrangement of A (the composition's strides do not divide)"))
    return out


# --------------------------------------------------------------------------- 2. nested basis strides


def _nested_basis_layout(rng):
    """Strides ``k@path`` with paths of depth 1 to 3 (every mode of one coordinate mode at the same depth), one or two
    modes per path, shuffled; sometimes a size-1 mode."""
    paths = set()
    for _ in range(rng.randint(1, 3)):
        paths.add(tuple(rng.randint(0, 2) for _ in range(rng.choice([1, 2, 2, 3]))))
    # a path must not be a prefix of another (the DSL aborts on mixed depths; tested apart)
    paths = [p for p in paths if not any(q != p and q[:len(p)] == p for q in paths)]
    modes = []
    for p in paths:
        step = 1
        for _ in range(rng.choice([1, 1, 2])):
            s = rng.choice([1, 2, 3, 4, 5, 7]) if rng.random() < 0.9 else 1
            modes.append((s, ScaledBasis(step * rng.choice([1, 1, 1, 2, 7]), p)))
            step *= max(s, 1) * rng.choice([1, 1, 2])
    rng.shuffle(modes)
    if len(modes) == 1:
        return Layout(*modes[0])
    return Layout(tuple(m[0] for m in modes), tuple(m[1] for m in modes))


def _cotarget(rng, depth=0):
    if depth < 2 and rng.random() < 0.5:
        return tuple(_cotarget(rng, depth + 1) for _ in range(rng.randint(1, 3)))
    return rng.choice([1, 2, 4, 6, 8, 12, 16, 64])


def _nested_cases(rng):
    L = _nested_basis_layout(rng)
    M = _cotarget(rng)
    M = M if is_tuple(M) else (M,)
    return [Case("nested basis", "complement", lambda: complement(L, M), f"cute.complement({lit(L)}, {lit(M)})",
                 dsl_wrong=lambda v: "prints x:x, not a layout" if v == "x:x" else None),
            Case("nested basis", "right_inverse", lambda: right_inverse(L), f"cute.right_inverse({lit(L)})"),
            Case("nested basis", "left_inverse", lambda: left_inverse(L), f"cute.left_inverse({lit(L)})",
                 dsl_wrong=lambda v: "a left inverse of a layout that is not injective" if _collides(L) else None)]


def _collides(L):
    """Two indices of L map to the same coordinate (checked on the whole table): no left inverse exists."""
    return len({_key(v) for v in _values(L)}) < size(L)


# --------------------------------------------------------------------------- 3. make_ordered_layout


def _order_for(rng, shape, kind):
    """An order for ``shape``: 'congruent' (a permutation per leaf), 'weak' (an integer for some whole modes) or
    'other' (an order that is not weakly congruent: an extra or missing entry, or a tuple where the shape has an
    integer)."""
    if kind == "other":
        if not is_tuple(shape):
            return tuple(range(rng.choice([1, 2, 3])))          # a tuple for an integer shape
        if rng.random() < 0.3:                                  # one entry more or fewer than the shape has modes
            n = len(shape) + rng.choice([-1, 1])
            return tuple(range(n)) if n != 1 else (0, 1, 2)
        i = rng.randrange(len(shape))                           # a mode's order nests deeper than the mode
        inner = shape[i]
        bad = tuple(range(len(inner) + 1)) if is_tuple(inner) else (0, 1)
        order = list(_order_for(rng, shape, "congruent"))
        order[i] = tuple(v + 100 for v in bad)
        return tuple(order)
    if not is_tuple(shape) or kind == "weak" and rng.random() < 0.3:
        return rng.randint(-2, 5)
    n = len(leaves(shape))
    values = iter(rng.sample(range(-3, 3 * n), n))      # distinct (a repeated value is refused: tested apart)
    if kind == "congruent":
        return unflatten(tuple(values), shape)
    return tuple(unflatten(tuple(next(values) for _ in leaves(m)), m) if is_tuple(m) and rng.random() < 0.5
                 else next(values) for m in shape)


def _ordered_cases(rng):
    out = []
    for kind in ("congruent", "weak", "other"):
        shape = rand_shape(rng, max_leaves=4, max_depth=2, max_size=512)
        order = _order_for(rng, shape, kind)
        out.append(Case("ordered layout", f"make_ordered_layout({kind})",
                        lambda s=shape, o=order: make_ordered_layout(s, o),
                        f"cute.make_ordered_layout({shape!r}, {order!r})",
                        lambda R, s=shape: size(R) == product(s) and sorted(_values(R)) == list(range(product(s)))))
    return out


# --------------------------------------------------------------------------- 4. by-mode products of identity layouts


def _identity_product_cases(rng):
    shape = tuple(rng.choice([2, 3, 4, 6]) for _ in range(rng.choice([2, 2, 3])))
    tiler = tuple(rng.choice([1, 2, 3, 4]) for _ in shape)
    I = make_identity_layout(shape)
    return [Case("identity product", "logical_product(identity, tuple)", lambda: logical_product(I, tiler),
                 f"cute.logical_product({lit(I)}, {lit(tiler)})")]


def build_cases(seed=SEED, n=N):
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        cases += _divide_cases(rng) + _nested_cases(rng) + _ordered_cases(rng) + _identity_product_cases(rng)
    return cases + issue_cases()


def issue_cases():
    """The issue's four cases, verbatim."""
    A, I = Layout((12, 8), (1, 12)), make_identity_layout((3, 2))
    N = Layout(4, ScaledBasis(7, (2, 1)))                          # 4:7@1@2
    P = make_identity_layout(PRODUCT_SHAPE)
    return [Case("identity tiler", "issue: zipped_divide", lambda: zipped_divide(A, I),
                 f"cute.zipped_divide({lit(A)}, cute.make_identity_layout((3,2)))",
                 lambda R: _is_rearrangement(A, R)),
            Case("nested basis", "issue: complement", lambda: complement(N, (4, (8, 8, 8))),
                 f"cute.complement({lit(N)}, (4,(8,8,8)))"),
            Case("nested basis", "issue: right_inverse", lambda: right_inverse(N), f"cute.right_inverse({lit(N)})"),
            Case("nested basis", "issue: left_inverse", lambda: left_inverse(N), f"cute.left_inverse({lit(N)})"),
            Case("ordered layout", "issue: make_ordered_layout", lambda: make_ordered_layout(8, (0, 1)),
                 "cute.make_ordered_layout(8, (0,1))"),
            Case("identity product", "issue: logical_product", lambda: logical_product(P, PRODUCT_TILER),
                 f"cute.logical_product(cute.make_identity_layout({PRODUCT_SHAPE!r}), {PRODUCT_TILER!r})")]


PRODUCT_SHAPE, PRODUCT_TILER = (6, 4), (2, 2)    # 96 entries, as in the issue


def classify(c, r):
    if c.error is None:
        ok = c.check is None or c.check(c.ours)
        if r.status != "ok":
            return "dsl_refuses" if ok else "OURS_WRONG"
        if str(c.ours) != r.value:
            return "MISMATCH"
        return "identical" if ok else "OURS_WRONG"
    if r.status != "ok":
        return "both_refuse"
    why = c.dsl_wrong(r.value) if c.dsl_wrong else None
    if why:
        return f"dsl_wrong:{why}"
    if c.family == "ordered layout" and c.check is not None:
        if not c.check(parse_layout(r.value)):
            return "dsl_wrong:not a compact layout (repeated order values overlap)"
    return "OVERSTRICT"


@pytest.fixture(scope="module")
def outcome():
    run = run_differential(build_cases(), classify, group=lambda c: (c.family, c.op))
    noninj = [c for c in run.cases if c.family == "identity product" and c.error is None
              and len({_key(v) for v in _values(c.ours)}) < size(c.ours)]
    n_prod = sum(c.family == "identity product" for c in run.cases)
    lines = [f"PyCuTe defects (issue 29) differential vs the CuTe DSL: {len(run.cases)} cases: "
             + count_line(run.counts)]
    for (family, op), cnt in sorted(run.per_group.items()):
        lines.append(f"  PyCuTe defects differential, {family}, {op}: " + count_line(cnt))
    lines.append(f"  PyCuTe defects differential: {len(noninj)} of {n_prod} by-mode products of an identity layout "
                 f"are not injective, in the DSL as here")
    print("\n".join(lines))
    return run, noninj, n_prod, lines


def _show(items, k=8):
    return "\n".join(f"{c.family} {c.op}: {c.snippet}\n   ours: {c.ours if c.error is None else c.error}\n"
                     f"   dsl : {r.status} {r.value or (r.message or '')[:200]}" for c, r in items[:k])


@pytest.mark.dsl
@dsl
def test_counts_printed(outcome):
    run, _, _, lines = outcome
    print("\n".join(lines))
    assert len(run.cases) >= 400
    for (family, op), cnt in run.per_group.items():      # every random family answers somewhere, not only refuses
        if not op.startswith("issue") and op != "make_ordered_layout(other)":
            assert cnt["identical"] > 0, (family, op, cnt)
    assert run.per_group["ordered layout", "make_ordered_layout(other)"]["both_refuse"] > 0


@pytest.mark.dsl
@dsl
@pytest.mark.parametrize("bad", ["MISMATCH", "OVERSTRICT", "OURS_WRONG", "dsl_refuses"])
def test_no_failure_class(outcome, bad):
    run, _, _, _ = outcome
    assert not run.by_class[bad], _show(run.by_class[bad])


@pytest.mark.dsl
@dsl
def test_the_issue_cases_against_the_dsl(outcome):
    run, _, _, _ = outcome
    got = {c.op: (c, r) for c, r in zip(run.cases, run.results) if c.op.startswith("issue")}
    c, r = got["issue: zipped_divide"]
    assert r.value == str(c.ours) == "((3,2),(4,4)):((1,12),(3,24))"
    for op in ("issue: complement", "issue: right_inverse", "issue: left_inverse", "issue: logical_product"):
        c, r = got[op]
        assert r.ok and r.value == str(c.ours), op
    c, r = got["issue: make_ordered_layout"]
    assert not r.ok and "weakly congruent" in r.message
    assert "not congruent" in str(c.error)


# --------------------------------------------------------------------------- named cases (no DSL)


def test_identity_tiler_divides_by_the_shape():
    A = Layout((12, 8), (1, 12))
    R = zipped_divide(A, make_identity_layout((3, 2)))
    assert str(R) == "((3,2),(4,4)):((1,12),(3,24))"
    assert sorted(_values(R)) == list(range(96))               # the rest no longer runs past A
    # an offset tiler of the same tile is the same divide
    assert R == zipped_divide(A, (Layout(3, 1), Layout(2, 1)))


def test_nested_basis_strides():
    N = Layout(4, ScaledBasis(7, (2, 1)))
    assert str(N) == "4:7@1@2"
    assert str(complement(N, (4, (8, 8, 8)))) == "(4,512,(1,7)):(1@0,1@1,(1@0@2,1@1@2))"
    assert str(left_inverse(N)) == "(1,1,(1,(7,4))):(0,0,(0,(0,1)))"   # the DSL prints it (test above)
    mixed = Layout((2, 3), (ScaledBasis(1, 1), ScaledBasis(2, (1, 0))))   # 1@1 and 2@0@1: mode 1 at two depths
    for op in (complement, right_inverse, left_inverse):
        with pytest.raises(LayoutError, match="same depth"):
            op(mixed)


def test_make_ordered_layout_congruence():
    with pytest.raises(LayoutError, match=r"order \(0,1\) is not congruent to shape 8"):
        make_ordered_layout(8, (0, 1))
    assert str(make_ordered_layout(((2, 4), 8), (1, 0))) == "((2,4),8):((8,16),1)"
    assert str(make_ordered_layout((2, 4), 0)) == "(2,4):(1,2)"
    with pytest.raises(LayoutError, match="repeats a value"):
        make_ordered_layout((2, 4), (0, 0))


def identity_product_facts():
    """The by-mode product of the page: what the DSL (and we) print, its counts, and the injective layout that the
    complement in each mode's own coordinate gives (PyCuTe's kind of answer)."""
    I = make_identity_layout(PRODUCT_SHAPE)
    ours = logical_product(I, PRODUCT_TILER)
    modes = []
    for i, (m, t) in enumerate(zip(I, PRODUCT_TILER)):
        cot = (1,) * i + (size(m) * t,)
        modes.append(make_layout(m, composition(complement(m, cot), t)))
    own = make_layout(*modes)
    return I, ours, own, size(ours), len({_key(v) for v in _values(ours)}), len({_key(v) for v in _values(own)})


def test_identity_product_is_the_dsls():
    I, ours, own, n, distinct, own_distinct = identity_product_facts()
    assert str(ours) == "((6,2),(4,2)):((1@0,6@0),(1@1,1@0))"
    assert (n, distinct) == (96, 52)
    assert own_distinct == n == 96 and str(own) == "((6,2),(4,2)):((1@0,6@0),(1@1,4@1))"


# --------------------------------------------------------------------------- the conformance page


def page_lines():
    I, ours, own, n, distinct, own_distinct = identity_product_facts()
    A = Layout((12, 8), (1, 12))
    return [f"`zipped_divide({A}, make_identity_layout((3,2)))`",
            f"`{zipped_divide(A, make_identity_layout((3, 2)))}`",
            f"`logical_product(make_identity_layout({PRODUCT_SHAPE[0]},{PRODUCT_SHAPE[1]}), "
            f"({PRODUCT_TILER[0]},{PRODUCT_TILER[1]}))`".replace("make_identity_layout(6,4)",
                                                                  "make_identity_layout((6,4))"),
            f"`{ours}`", f"{n} entries, {distinct} distinct", f"`{own}`",
            f"`{complement(Layout(4, ScaledBasis(7, (2, 1))), (4, (8, 8, 8)))}`"]


def test_conformance_page_shows_the_cases():
    page = PAGE.read_text()
    missing = [s for s in page_lines() if s not in page]
    assert not missing, "chapters/conformance.md lacks: " + " | ".join(missing)


def counts_sentence(run):
    c = run.counts
    wrong = {k.split(":", 1)[1]: v for k, v in sorted(c.items()) if k.startswith("dsl_wrong:")}
    return (f"{len(run.cases)} cases: {c['identical']} print exactly what the DSL prints, {c['both_refuse']} are "
            f"refused by both, and {sum(wrong.values())} are refused here where the DSL's answer is no result ("
            + "; ".join(f"{why}: {k}" for why, k in wrong.items()) + ")")


@pytest.mark.dsl
@dsl
def test_conformance_page_counts(outcome):
    """The page's sentence on the random families: the number of cases and the non-injective products."""
    run, noninj, n_prod, _ = outcome
    page = PAGE.read_text()
    want = (counts_sentence(run), f"{len(noninj)} of the {n_prod} by-mode products")
    missing = [w for w in want if w not in page]
    assert not missing, "chapters/conformance.md lacks: " + " | ".join(missing)
