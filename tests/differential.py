"""The differential harness of the CuTe DSL conformance tests (``test_algebra_dsl_diff``, ``test_conformance_dsl``,
``test_conformance_layout_dsl``) and of the peer judged by the DSL (``test_peer_tensor_layouts``): every case's
snippet goes to the DSL in one ``dsl_eval`` batch, each case is classified with the DSL's result, and the classes
are counted overall and per group."""
import collections
from typing import NamedTuple

from layoutlab.dsl import dsl_eval


class Outcome(NamedTuple):
    cases: list
    results: list
    counts: collections.Counter           # class -> number of cases
    per_group: dict                        # group(case) -> Counter of classes
    by_class: dict                         # class -> [(case, DSL result)], in case order


def run_differential(cases, classify, group=lambda case: case.op, setup=None, extra=None):
    """Run ``cases`` (each with a ``snippet``) through the DSL and classify them with ``classify(case, result)``.
    ``extra``: more snippets for the same batch; then ``classify(case, result, {snippet: result})``."""
    snippets = [c.snippet for c in cases] + list(extra or ())
    results = dsl_eval(snippets, **({"setup": setup} if setup is not None else {}))
    extras, results = dict(zip(extra or (), results[len(cases):])), results[:len(cases)]
    counts, per_group, by_class = collections.Counter(), collections.defaultdict(collections.Counter), \
        collections.defaultdict(list)
    for c, r in zip(cases, results):
        cls = classify(c, r) if extra is None else classify(c, r, extras)
        counts[cls] += 1
        per_group[group(c)][cls] += 1
        by_class[cls].append((c, r))
    return Outcome(cases, results, counts, per_group, by_class)


def count_line(counter, sep="="):
    """``a=1, b=2`` (classes in order)."""
    return ", ".join(f"{k}{sep}{v}" for k, v in sorted(counter.items()))
