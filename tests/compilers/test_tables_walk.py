"""The one counting walk of the diagram tables (kcxai/compilers/_tables/) against enumeration, for K = 1, 2, 5.

OBDD- and SDD-compiled trees (multi-valued features, 2-3 classes), forests and boosted trees, under
distributions of exactly K product components (K = 1: a product, or a mixture of one), exact and float.
Every query walks the diagram with a vector of K weights per node, once for all components or once per
component (the oracle's choice forced both ways); each is run three ways: the walk
of the reachable nodes only, numpy over whole units only, and both in one session. Counts, sessions, box
weights and box weights by value are compared with probabilities enumerated from the distribution's
parameters as given (tests/_support/reference.py); ``min_idrs`` and ``local_cdrs`` with the brute-force
oracle; and the walk's terminal values are checked to be its parameters.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai import Feature, FeatureSpace
from kcxai.compilers._tables import base as _base, diagram as _diagram
from kcxai.compilers._tables.base import FALSE, TRUE, counter_for
from kcxai.distribution import Mixture, Product, Uniform
from tests._support import reference as ref
from tests._support.enumerated import Enumerated, in_box, models_with_k, same
from tests._support.strategies import deltas, instance_of, points

LANGUAGES = ("obdd", "sdd")
#: How a count is made: (numpy's fewest nodes, the walk's most free features).
EVALUATIONS = {"walk": (10 ** 9, 10 ** 9), "arrays": (0, -1), "mixed": (0, 1)}


#: The fewest components walked at once (else one walk per component, unless numpy counts).
GROUPINGS = {"at-once": 1, "one-by-one": 10 ** 9}
#: The choices as shipped (the ``evaluation`` fixture patches them while it is active).
SHIPPED = {(_base, "VECTOR_MIN_NODES"): _base.VECTOR_MIN_NODES, (_base, "RECURSIVE_MAX_FREE"): _base.RECURSIVE_MAX_FREE,
           (_diagram, "VECTOR_MIN_COLUMNS"): _diagram.VECTOR_MIN_COLUMNS}


@pytest.fixture(scope="module", params=[(e, g) for e in EVALUATIONS for g in GROUPINGS], ids="-".join)
def evaluation(request: pytest.FixtureRequest) -> Any:
    how, grouping = request.param
    min_nodes, max_free = EVALUATIONS[how]
    with pytest.MonkeyPatch.context() as mp:  # the same for every example: module-scoped
        mp.setattr(_base, "VECTOR_MIN_NODES", min_nodes)
        mp.setattr(_base, "RECURSIVE_MAX_FREE", max_free)
        mp.setattr(_diagram, "VECTOR_MIN_COLUMNS", GROUPINGS[grouping])
        yield how


@settings(max_examples=25, deadline=None)
@given(data=st.data(), language=st.sampled_from(LANGUAGES))
def test_counts_and_sessions_equal_enumeration(evaluation: str, data: Any, language: str) -> None:
    model = data.draw(models_with_k())
    oracle = kcxai.compile_model(model, language).oracle
    truth, total = Enumerated(model), model.space.total_weight
    n = model.space.n_features
    p = data.draw(points(model.space))
    for label in range(len(model.classes)):
        s = frozenset(data.draw(st.sets(st.integers(0, n - 1))))
        assert same(oracle.disagree_weight(p, label, s), total,
                    truth.weight(lambda x: all(x[i] == p[i] for i in s), label))
        fixed = set(range(n))
        session = oracle.session(p, label, frozenset(fixed))
        for f in data.draw(st.permutations(range(n))):
            rest = fixed - {f}
            want = truth.weight(lambda x: all(x[i] == p[i] for i in rest), label)
            assert same(session.weight_if_freed(f), total, want)
            if data.draw(st.booleans()):
                session.free(f)
                fixed.discard(f)
                assert session.fixed == frozenset(fixed)
                assert same(session.weight(), total, truth.weight(lambda x: all(x[i] == p[i] for i in fixed), label))


@settings(max_examples=20, deadline=None)
@given(data=st.data(), language=st.sampled_from(LANGUAGES))
def test_box_weights_and_by_value_equal_enumeration(evaluation: str, data: Any, language: str) -> None:
    model = data.draw(models_with_k(ensembles=False))
    oracle = kcxai.compile_model(model, language).oracle
    truth, total = Enumerated(model), model.space.total_weight
    box = tuple(data.draw(st.integers(1, (1 << f.size) - 1)) for f in model.space.features)
    feature = data.draw(st.integers(0, model.space.n_features - 1))
    for label in range(len(model.classes)):
        disagree, consistent = oracle.box_weights(box, label)
        assert same(disagree, total, truth.weight(in_box(box), label)) and same(consistent, total,
                                                                                 truth.weight(in_box(box)))
        for k, (d, c) in enumerate(oracle.box_weights_by_value(box, label, feature)):
            at_k = box[:feature] + (1 << k,) + box[feature + 1:]
            assert same(d, total, truth.weight(in_box(at_k), label))
            assert same(c, total, truth.weight(in_box(at_k)))


@settings(max_examples=20, deadline=None)
@given(data=st.data(), language=st.sampled_from(LANGUAGES), delta=deltas,
       precision=st.sampled_from([Fraction(1, 2), Fraction(3, 4), Fraction(9, 10), Fraction(1)]))
def test_min_idrs_and_local_cdrs_equal_brute_force(evaluation: str, data: Any, language: str, delta: Any,
                                                   precision: Any) -> None:
    """Exact distributions (under float ones a decision at a tie may go either way with the rounding of
    another summation order)."""
    model = data.draw(models_with_k(exact=True))
    x = instance_of(model.space, data.draw(points(model.space)))
    order = data.draw(st.permutations(range(model.space.n_features)))
    compiled, brute = kcxai.compile_model(model, language), kcxai.compile_model(model, "brute")
    e, b = kcxai.min_idrs(compiled, x, delta, order=order), kcxai.min_idrs(brute, x, delta, order=order)
    assert e.features == b.features and e.error == b.error
    point = model.space.encode(x)
    assert e.error == ref.error(model, point, e.features)
    e, b = kcxai.local_cdrs(compiled, x, precision, order=order), kcxai.local_cdrs(brute, x, precision, order=order)
    assert e.features == b.features and e.precision == b.precision
    assert e.precision == ref.precision(model, point, e.features)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_terminal_values_are_parameters_of_the_walk(evaluation: str, data: Any) -> None:
    """In an OBDD table every path ends at a terminal, so swapping the terminals' values counts the complement:
    ``TRUE`` weighing 0 and ``FALSE`` 1 gives, per component, the consistent weight minus the class's (a
    third terminal would be counted the same way). (In an SDD a terminal is also a prime.)"""
    model = data.draw(models_with_k(exact=True))
    oracle = kcxai.compile_model(model, "obdd").oracle
    counter = counter_for(oracle.table, model.space.distribution.components)
    cols = counter.columns
    n = model.space.n_features
    p = data.draw(points(model.space))
    s = frozenset(data.draw(st.sets(st.integers(0, n - 1))))
    isfixed = [f in s for f in range(n)]
    label = data.draw(st.integers(0, len(model.classes) - 1))
    plain = counter.counts((label,), p, isfixed, counter.new_values())
    swapped = counter.counts((label,), p, isfixed, counter.new_values(), {FALSE: cols.one, TRUE: None})
    per_component = [pw.consistent_weight(p, s) for pw in cols.pws]
    assert [a + b for a, b in zip(cols.entries(cols.zero if plain is None else plain),
                                  cols.entries(cols.zero if swapped is None else swapped))] == per_component


def test_totals_past_int64_walk_with_python_integers(evaluation: str) -> None:
    """70 binary features, 4 components: no numpy (counts past int64), exact Python integers, the definition."""
    n = 70
    space = FeatureSpace([Feature.categorical(f"b{i}", [0, 1]) for i in range(n)])
    mix = Mixture([1, 2, 3, 4], [Product([[1, 2]] * n), Product([[3, 1]] * n), Uniform([2] * n),
                                 Product([[5, 2]] * n)])
    tree = kcxai.DecisionTree(space.with_distribution(mix), [0, 1], kcxai.Split("b0", {0: kcxai.Leaf(0), 1: kcxai.Split(
        "b69", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1)})}))
    # Pr(kappa != 1 and x_b5 = 1) = Pr(b5 = 1) * (1 - Pr(b0 = 1, b69 = 1)) per component
    qs = [Fraction(2, 3), Fraction(1, 4), Fraction(1, 2), Fraction(2, 7)]
    want = sum(Fraction(i + 1, 10) * q * (1 - q * q) for i, q in enumerate(qs))
    for language in LANGUAGES:
        compiled = kcxai.compile_model(tree, language)
        assert not compiled.oracle.counters[0].columns.fits_arrays
        assert kcxai.idrs_error(compiled, (1,) * n, ["b5"]) == want


def test_every_mixture_is_walked_at_once_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    """The automatic choice: one walk for all components from VECTOR_MIN_COLUMNS (2) of them, whether the walk or
    numpy counts; ``at_once=False`` walks each component in turn."""
    for (module, name), value in SHIPPED.items():
        monkeypatch.setattr(module, name, value)
    assert _diagram.VECTOR_MIN_COLUMNS == 2
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1, 2]) for i in range(3)])
    tree = kcxai.DecisionTree(space, [0, 1], kcxai.Split("x0", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1), 2: kcxai.Leaf(1)}))
    for min_nodes in (_base.VECTOR_MIN_NODES, 0):  # the walk, then numpy, counts this diagram
        monkeypatch.setattr(_base, "VECTOR_MIN_NODES", min_nodes)
        for n in (1, 2, 3, 5):
            mix = Mixture(list(range(1, n + 1)), [Product([[1, j + 1, 2]] * 3) for j in range(n)])
            for language in LANGUAGES:
                compiled = kcxai.compile_model(tree.with_distribution(mix), language)
                assert len(compiled.oracle.counters) == 1
                per = _diagram.DiagramOracle(language, compiled.model.space, compiled.oracle.table, at_once=False)
                assert len(per.counters) == n
