"""SAT explanations of tree ensembles (AXp, CXp, smallest of each) against brute-force enumeration."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from pysat.formula import IDPool

import kcxai
from kcxai import InvalidInputError, InvalidTypeError, ProblemTooLargeError
from kcxai.engines._box_leaves import MASK_BITS, high_bit, low_bit, range_masks
import kcxai.engines._ensemble_box as box_engine
from kcxai.engines._ensemble_box import EnsembleBox
from kcxai.engines._ensemble_cnf import SOLVERS, EnsembleCnf, _runs
from kcxai.engines._portfolio import EnsemblePortfolio
from kcxai.engines._sums import guarded_sum_geq
from kcxai.models import BoostedTrees, RandomForest
from tests._support.ensemble_reference import ENSEMBLES, SPACES, Brute
from tests._support.model_strategies import boosted_models as _boosted_models
from tests._support.model_strategies import forests
from tests._support.strategies import instance_of, points, set_split_trees

ENGINES = st.sampled_from(["sat", "search"])
LANGUAGE = {"sat": "sat", "search": "search"}


@settings(max_examples=150, deadline=None)
@given(data=st.data(), model=ENSEMBLES, engine=ENGINES)
def test_axp_is_sufficient_and_subset_minimal(data: Any, model: Any, engine: str) -> None:
    point = data.draw(points(model.space))
    bf = Brute(model, point)
    e = kcxai.ensemble_axp(model, instance_of(model.space, point), engine=engine)
    s = set(e.features)
    assert bf.sufficient(s)
    assert all(not bf.sufficient(s - {i}) for i in s)
    assert e.error == 0 and e.precision == 1 and e.language == LANGUAGE[engine] and e.kind == "relevant"
    assert e.prediction == model.classes[bf.label]
    assert kcxai.is_ensemble_axp(model, instance_of(model.space, point), s, engine=engine)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), model=ENSEMBLES, engine=ENGINES)
def test_cxp_changes_the_class_and_is_minimal(data: Any, model: Any, engine: str) -> None:
    point = data.draw(points(model.space))
    bf = Brute(model, point)
    x = instance_of(model.space, point)
    if all(c == bf.label for _, c in bf.table):
        with pytest.raises(InvalidInputError, match="no contrastive explanation"):
            kcxai.ensemble_cxp(model, x, engine=engine)
        return
    e = kcxai.ensemble_cxp(model, x, engine=engine)
    t = set(e.features)
    assert bf.contrastive(t)
    assert all(not bf.contrastive(t - {i}) for i in t)
    assert e.kind == "dual" and e.error is None and "not computed" in str(e)
    assert kcxai.is_ensemble_cxp(model, x, t, engine=engine)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), model=ENSEMBLES, engine=ENGINES)
def test_smallest_sets_have_the_brute_force_size(data: Any, model: Any, engine: str) -> None:
    point = data.draw(points(model.space))
    bf = Brute(model, point)
    x = instance_of(model.space, point)
    e = kcxai.smallest_ensemble_axp(model, x, engine=engine)
    assert bf.sufficient(set(e.features))
    assert len(e) == bf.smallest(bf.sufficient)
    if any(c != bf.label for _, c in bf.table):
        d = kcxai.smallest_ensemble_cxp(model, x, engine=engine)
        assert bf.contrastive(set(d.features))
        assert len(d) == bf.smallest(bf.contrastive)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), model=ENSEMBLES, engine=ENGINES)
def test_checkers_agree_with_brute_force(data: Any, model: Any, engine: str) -> None:
    point = data.draw(points(model.space))
    bf = Brute(model, point)
    n = model.space.n_features
    s = set(data.draw(st.sets(st.integers(0, n - 1))))
    x = instance_of(model.space, point)
    assert kcxai.is_ensemble_axp(model, x, s, engine=engine) == (
        bf.sufficient(s) and all(not bf.sufficient(s - {i}) for i in s))
    assert kcxai.is_ensemble_cxp(model, x, s, engine=engine) == (
        bf.contrastive(s) and all(not bf.contrastive(s - {i}) for i in s))


@settings(max_examples=40, deadline=None)
@given(data=st.data(), model=ENSEMBLES, engine=ENGINES)
def test_one_prepared_engine_serves_many_instances_and_orders(data: Any, model: Any, engine: str) -> None:
    cnf = kcxai.compile_model(model, engine)
    try:
        for _ in range(3):
            point = data.draw(points(model.space))
            bf = Brute(model, point)
            order = data.draw(st.permutations(range(model.space.n_features)))
            e = kcxai.ensemble_axp(cnf, instance_of(model.space, point), order=order)
            s = set(e.features)
            assert bf.sufficient(s) and all(not bf.sufficient(s - {i}) for i in s)
            raw = cnf.oracle.engine  # the engine behind the compiled form
            if raw.changes(point, bf.label, ()):  # the counterexample really has another class
                assert model.predict_point(raw.model_point()) != bf.label
    finally:
        cnf.close()


@settings(max_examples=60, deadline=None)
@given(data=st.data(), model=ENSEMBLES, engine=ENGINES)
def test_an_explanation_does_not_depend_on_the_ones_before(data: Any, model: Any, engine: str) -> None:
    """A shared engine answers as a fresh one: a solver's learned clauses from earlier explanations
    change its cores and counterexamples, and the search's regions proven by earlier queries of the same
    instance carve its boxes and so choose its counterexamples; so each explanation starts from a
    restarted engine. Explanations of the same instance in another order run before."""
    first, target = data.draw(points(model.space)), data.draw(points(model.space))
    x, y = instance_of(model.space, first), instance_of(model.space, target)
    order = data.draw(st.permutations(range(model.space.n_features)))
    methods = (kcxai.ensemble_axp, kcxai.smallest_ensemble_axp, kcxai.ensemble_cxp, kcxai.smallest_ensemble_cxp)

    def answer(fn: Any, compiled: Any, at: Any, **options: Any) -> Any:
        try:
            return fn(compiled, at, **options).features
        except InvalidInputError:  # no contrastive explanation: the class never changes
            return None

    fresh = []
    for fn in methods:
        alone = kcxai.compile_model(model, engine)
        try:
            fresh.append(answer(fn, alone, y))
        finally:
            alone.close()
    shared = kcxai.compile_model(model, engine)
    try:
        for fn in methods:
            answer(fn, shared, x)
            answer(kcxai.ensemble_axp, shared, y, order=order)  # proves other sets of the same instance
            answer(fn, shared, y)
        assert [answer(fn, shared, y) for fn in methods] == fresh
    finally:
        shared.close()


@settings(max_examples=40, deadline=None)
@given(data=st.data(), model=ENSEMBLES)
def test_the_portfolio_gives_subset_minimal_sets(data: Any, model: Any) -> None:
    """SAT and search side by side (either may answer each query): every method against enumeration."""
    with EnsemblePortfolio(model) as engine:
        for _ in range(2):
            point = data.draw(points(model.space))
            bf = Brute(model, point)
            x = instance_of(model.space, point)
            e = kcxai.ensemble_axp(engine, x)
            assert _is_axp(bf, set(e.features)) and e.language == "portfolio"
            assert len(kcxai.smallest_ensemble_axp(engine, x)) == bf.smallest(bf.sufficient)
            if any(c != bf.label for _, c in bf.table):
                t = set(kcxai.ensemble_cxp(engine, x).features)
                assert bf.contrastive(t) and all(not bf.contrastive(t - {i}) for i in t)
        assert sum(engine.wins.values()) > 0


@settings(max_examples=200, deadline=None)
@given(blocks=st.lists(st.lists(st.integers(1, 40), min_size=1, max_size=3, unique=True), min_size=1, max_size=4),
       bound=st.integers(-2, 120), big=st.booleans())
def test_guarded_sum_against_enumeration(blocks: list[list[int]], bound: int, big: bool) -> None:
    """``g -> sum >= bound`` is satisfiable with each choice of block values exactly when the sum reaches it."""
    from pysat.solvers import Solver

    scale = 2 ** 40 + 3 if big else 1  # big numbers take the binary (adder) encoding
    pool = IDPool()
    clauses: list[list[int]] = []
    lits = [[(v * scale, pool.id()) for v in blk] for blk in blocks]
    for blk in lits:  # at most one value literal per block
        for (_, a), (_, b) in itertools.combinations(blk, 2):
            clauses.append([-a, -b])
    guard = pool.id()
    guarded_sum_geq(lits, bound * scale, guard, pool, clauses.append)
    with Solver(name="g4", bootstrap_with=clauses) as s:
        for choice in itertools.product(*[[None, *blk] for blk in lits]):
            total = sum(v for v, _ in (c for c in choice if c is not None))
            assume = [guard]
            for c, blk in zip(choice, lits):
                assume += [lit if c is not None and lit == c[1] else -lit for _, lit in blk]
            assert s.solve(assumptions=assume) == (total >= bound * scale)


def test_runs_of_a_mask() -> None:
    assert _runs(0b0111_0010_1100) == [(2, 3), (5, 5), (8, 10)]
    assert _runs((1 << 70_000) - 1) == [(0, 69_999)]
    assert _runs(0) == []


def test_rejects_what_is_not_an_ensemble() -> None:
    tree = kcxai.datasets.running_example_tree()
    with pytest.raises(InvalidTypeError,
                       match=r"decide tree ensembles \(RandomForest, BoostedTrees\); explain other models with "
                             r"min_idrs\(model, x, 0\)\. Got DecisionTree"):
        kcxai.ensemble_axp(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1))
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "ab"])
    forest = RandomForest(space, [0, 1], [kcxai.DecisionTree(space, [0, 1], kcxai.Split("a", {0: kcxai.Leaf(0),
                                                                                          1: kcxai.Leaf(1)}))])
    with pytest.raises(InvalidTypeError, match="'features'"):
        kcxai.is_ensemble_axp(forest, [1, 0], "a")
    with pytest.raises(InvalidInputError, match="'order' must not repeat"):
        kcxai.ensemble_axp(forest, [1, 0], order=[0, 0])
    assert kcxai.ensemble_axp(forest, [1, 0]).names == ("a",)
    assert kcxai.ensemble_cxp(forest, {"a": 1, "b": 0}).names == ("a",)


def test_big_float_margins_are_exact() -> None:
    """Leaf values a float ulp apart decide the class exactly (binary adder encoding, 50+ bit integers)."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "ab"])
    t = [kcxai.DecisionTree(space, [0, 1], kcxai.Split(n, {0: kcxai.Leaf(0), 1: kcxai.Leaf(0)})) for n in "ab"]
    model = BoostedTrees(space, [0, 1], t, [{1: 0.1, 2: 0.1 + 2 ** -52}, {1: -0.1, 2: -0.1}], init=[0])
    assert model.margin([0, 0]) == 0 and model.margin([1, 0]) > 0
    assert model.predict([0, 0]) == 0 and model.predict([1, 0]) == 1
    for engine in ("sat", "search"):
        assert kcxai.ensemble_axp(model, [1, 1], engine=engine).names == ("a",)
        assert kcxai.ensemble_cxp(model, [0, 1], engine=engine).names == ("a",)
    with EnsemblePortfolio(model) as both:
        assert kcxai.ensemble_axp(both, [1, 1]).names == ("a",) and kcxai.ensemble_cxp(both, [0, 1]).names == ("a",)
    with pytest.raises(InvalidInputError, match="'engine'"):
        kcxai.ensemble_axp(model, [1, 1], engine="magic")


def _is_axp(bf: Brute, s: set[int]) -> bool:
    return bf.sufficient(s) and all(not bf.sufficient(s - {i}) for i in s)


@pytest.mark.parametrize("solver", SOLVERS)
@settings(max_examples=25, deadline=None)
@given(data=st.data(), model=ENSEMBLES)
def test_every_solver_gives_subset_minimal_sets(solver: str, data: Any, model: Any) -> None:
    """Hard and soft voting, boosted binary and multi-class: each accepted solver, against enumeration."""
    engine = EnsembleCnf(model, solver=solver)
    try:
        for _ in range(2):
            point = data.draw(points(model.space))
            bf = Brute(model, point)
            e = kcxai.ensemble_axp(engine, instance_of(model.space, point))
            assert _is_axp(bf, set(e.features))
    finally:
        engine.close()


def test_solvers_that_cannot_stop_are_refused() -> None:
    space = kcxai.FeatureSpace([kcxai.Feature.categorical("a", [0, 1])])
    forest = RandomForest(space, [0, 1], [kcxai.DecisionTree(space, [0, 1], kcxai.Split("a", {0: kcxai.Leaf(0),
                                                                                          1: kcxai.Leaf(1)}))])
    for name in ("g4", "g3", "cd19", "lingeling"):
        with pytest.raises(InvalidInputError, match=r"'solver' must be one of \['mgh'"):
            EnsembleCnf(forest, solver=name)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), model=ENSEMBLES)
def test_engines_agree_on_every_query(data: Any, model: Any) -> None:
    """One query, three engines: the same answer, and a counterexample the model confirms."""
    n = model.space.n_features
    engines = [EnsembleCnf(model), EnsembleBox(model), EnsemblePortfolio(model)]
    try:
        for _ in range(3):
            point = data.draw(points(model.space))
            label = model.predict_point(point)
            fixed = data.draw(st.sets(st.integers(0, n - 1)))
            truth = not Brute(model, point).sufficient(fixed)
            for engine in engines:
                assert engine.changes(point, label, fixed) == truth
                if truth:
                    witness = engine.model_point()
                    assert model.predict_point(witness) != label
                    assert all(witness[i] == point[i] for i in fixed)
                else:
                    core = engine.core_features(point, fixed)
                    assert core <= fixed and Brute(model, point).sufficient(core)
    finally:
        for engine in engines:
            engine.close()


def test_the_default_order_tries_features_with_fewer_values_first() -> None:
    """Two AXps, {a} and {b}: the default order tries to drop the 2-valued feature first, so keeps the 3-valued one."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical("a", [0, 1, 2]), kcxai.Feature.categorical("b", [0, 1])])
    tree_a = kcxai.DecisionTree(space, [0, 1], kcxai.Split("a", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1), 2: kcxai.Leaf(0)}))
    tree_b = kcxai.DecisionTree(space, [0, 1], kcxai.Split("b", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1)}))
    forest = RandomForest(space, [0, 1], [tree_a, tree_b, tree_a, tree_b, tree_a])  # class 1 at a=1 (3 votes)
    both = RandomForest(space, [0, 1], [tree_a, tree_b])  # ties go to class 0: class 1 needs a=1 and b=1
    for engine in ("sat", "search"):
        assert kcxai.ensemble_axp(forest, [1, 1], engine=engine).names == ("a",)
    # the search has no cores: the order alone decides which of the two AXps comes out
    assert kcxai.ensemble_axp(both, [0, 0], engine="search").names == ("a",)
    assert kcxai.ensemble_axp(both, [0, 0], engine="search", order=["a", "b"]).names == ("b",)


def test_big_values_are_decided_exactly_past_int64() -> None:
    """Leaf values whose scaled integers pass 2**62: the search bounds in floats, ties decided exactly."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "abc"])
    tiny = Fraction(1, 3 ** 41)  # 3**41 > 2**64: the common denominator makes every value huge
    trees = [kcxai.DecisionTree(space, [0, 1], kcxai.Split(n, {0: kcxai.Leaf(0), 1: kcxai.Leaf(0)})) for n in "abc"]
    values = [{1: Fraction(1, 2), 2: Fraction(1, 2) + tiny}, {1: Fraction(-1, 4), 2: Fraction(-1, 4)},
              {1: -tiny, 2: Fraction(0)}]
    model = BoostedTrees(space, [0, 1], trees, values, init=[Fraction(-1, 4)])
    # class 1 (margin > 0) only at a = c = 1; margins 0 (a tie: class 0) and -tiny elsewhere
    assert model.margin([0, 0, 0]) == -tiny and model.margin([1, 0, 0]) == model.margin([0, 1, 1]) == 0
    assert [model.predict_point(p) for p in ((1, 0, 1), (1, 1, 1), (1, 0, 0), (0, 0, 1))] == [1, 1, 0, 0]
    engine = EnsembleBox(model)
    assert engine.rivals[1][0].slack is not None  # the float path
    for point in itertools.product((0, 1), repeat=3):
        bf = Brute(model, point)
        assert _is_axp(bf, set(kcxai.ensemble_axp(engine, point).features))
        for fixed in itertools.chain.from_iterable(itertools.combinations(range(3), k) for k in range(4)):
            assert engine.changes(point, bf.label, fixed) == (not bf.sufficient(set(fixed)))


def test_a_forest_past_the_memory_limit_is_a_clear_error() -> None:
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1, 2]) for n in "abc"])
    trees = [kcxai.DecisionTree(space, [0, 1], kcxai.Split(n, {0: kcxai.Leaf(0), 1: kcxai.Leaf(1), 2: kcxai.Leaf(1)}))
             for n in "abc"]
    forest = RandomForest(space, [0, 1], trees)
    with pytest.raises(ProblemTooLargeError, match=r"needs more than max_memory=100 bytes .* use the search engine"):
        EnsembleCnf(forest, max_memory=100)
    with pytest.raises(ProblemTooLargeError,
                       match=r"need about [\d,]+ bytes, more than max_memory=100\. Pass a larger"):
        EnsembleBox(forest, max_memory=100)
    assert EnsembleCnf(forest, max_memory=None).memory > 100


@settings(max_examples=60, deadline=None)
@given(data=st.data(), model=ENSEMBLES)
def test_single_feature_flips_are_real_counterexamples(data: Any, model: Any) -> None:
    """The search's first look (a point that differs from the instance on one free feature) answers without
    a box exactly when such a point exists, and its point is one."""
    engine = EnsembleBox(model)
    point = data.draw(points(model.space))
    label = model.predict_point(point)
    n = model.space.n_features
    for i in range(n):
        flips = [tuple(k if j == i else point[j] for j in range(n)) for k in range(model.space.features[i].size)]
        exists = any(model.predict_point(p) != label for p in flips)
        before = engine.nodes
        answer = engine.changes(point, label, set(range(n)) - {i})
        assert answer == exists
        if answer:
            w = engine.model_point()
            assert model.predict_point(w) != label and all(w[j] == point[j] for j in range(n) if j != i)
            assert engine.nodes == before or engine.flips(point, label)[i] is None


# -- leaves that restrict a feature to a value set that is not a range (one-hot pipelines) --------------

@st.composite
def set_split_ensembles(draw: Any, *, wide: bool = False) -> Any:
    """Forests (hard and soft voting) and boosted trees, 2-3 classes, whose trees split features of up to
    6 values (``wide``: also one feature of 63-66 values, about the engine's widest mask) by value sets."""
    sizes = draw(st.lists(st.integers(2, 3 if wide else 6), min_size=2, max_size=3 if wide else 4))
    if wide:
        sizes.insert(draw(st.integers(0, len(sizes))), draw(st.integers(MASK_BITS - 1, MASK_BITS + 2)))
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"f{i}", list(range(k))) for i, k in enumerate(sizes)])
    if draw(st.booleans()):
        return draw(forests(space=space, max_trees=4, tree_strategy=set_split_trees))
    return draw(_boosted_models(space=space, max_trees=4, tree_strategy=set_split_trees))


def _not_ranges(model: Any) -> set[int]:
    """The features on which some point set of a leaf (enumerated) is not a range of values."""
    out: set[int] = set()
    trees_ = model.trees
    space = model.space
    for t in trees_:
        seen: dict[Any, list[set[int]]] = {}
        for p in itertools.product(*map(range, space.domain_sizes)):
            sets = seen.setdefault(t.path_of(p).leaf, [set() for _ in p])
            for i, v in enumerate(p):
                sets[i].add(v)
        for sets in seen.values():
            out |= {i for i, vs in enumerate(sets) if max(vs) - min(vs) + 1 != len(vs)}
    return out


def _check_against_enumeration(data: Any, model: Any, engine: EnsembleBox) -> None:
    """``changes`` (with its counterexample), ``changes_in_box`` and the AXp of random points against the
    table of every point's class."""
    n = model.space.n_features
    sizes = model.space.domain_sizes
    for _ in range(2):
        point = data.draw(points(model.space))
        bf = Brute(model, point)
        fixed = data.draw(st.sets(st.integers(0, n - 1)))
        assert engine.changes(point, bf.label, fixed) == (not bf.sufficient(fixed))
        if not bf.sufficient(fixed):
            w = engine.model_point()
            assert model.predict_point(w) != bf.label and all(w[i] == point[i] for i in fixed)
        ends = [sorted(data.draw(st.tuples(st.integers(0, s - 1), st.integers(0, s - 1)))) for s in sizes]
        lo, hi = [a for a, _ in ends], [b for _, b in ends]
        inside = [c for p, c in bf.table if all(lo[i] <= p[i] <= hi[i] for i in range(n))]
        assert engine.changes_in_box(lo, hi, bf.label) == any(c != bf.label for c in inside)
        if any(c != bf.label for c in inside):
            w = engine.model_point()
            assert model.predict_point(w) != bf.label and all(lo[i] <= w[i] <= hi[i] for i in range(n))
        bounded = engine.changes_in_box(lo, hi, bf.label, max_boxes=data.draw(st.integers(0, 8)))
        assert bounded in (None, any(c != bf.label for c in inside))  # undecided past its boxes, else right
        axp = kcxai.ensemble_axp(engine, instance_of(model.space, point), inflate=False)
        assert _is_axp(bf, set(axp.features)) and not axp.inflated


@settings(max_examples=80, deadline=None)
@given(data=st.data(), model=set_split_ensembles())
def test_leaves_of_value_sets_are_searched_exactly(data: Any, model: Any) -> None:
    """Trees that split features of up to 6 values by sets (``x == v`` against the rest, or any subset):
    the engine keeps those sets exactly (:attr:`EnsembleBox.set_features`) and every answer agrees with
    enumeration."""
    engine = EnsembleBox(model)
    assert set(engine.set_features.tolist()) == _not_ranges(model) and not len(engine.hull_features)
    event(f"features of value sets: {len(engine.set_features)}")
    _check_against_enumeration(data, model, engine)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), model=set_split_ensembles(wide=True))
def test_a_feature_wider_than_a_mask_keeps_hulls_and_stays_exact(data: Any, model: Any) -> None:
    """A feature of 63-66 values split by sets: kept exactly up to :data:`MASK_BITS` values, by its hulls
    past them (a relaxation whose single points the model decides); the answers agree with enumeration."""
    engine = EnsembleBox(model)
    sets = _not_ranges(model)
    narrow = {f for f in sets if model.space.features[f].size <= MASK_BITS}
    assert set(engine.set_features.tolist()) == narrow and set(engine.hull_features.tolist()) >= sets - narrow
    assert all(model.space.features[f].size > MASK_BITS for f in engine.hull_features.tolist())
    event(f"features kept by hulls: {len(engine.hull_features)}")
    _check_against_enumeration(data, model, engine)


@given(st.lists(st.integers(1, 2 ** 64 - 1), min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(0, 63), st.integers(0, 63)), min_size=1, max_size=8))
def test_bit_helpers(masks: list[int], ends: list[tuple[int, int]]) -> None:
    m = np.asarray(masks, dtype=np.uint64)
    assert low_bit(m).tolist() == [(x & -x).bit_length() - 1 for x in masks]
    assert high_bit(m).tolist() == [x.bit_length() - 1 for x in masks]
    lo, hi = [min(e) for e in ends], [max(e) for e in ends]
    got = range_masks(np.asarray(lo), np.asarray(hi)).tolist()
    assert got == [sum(1 << v for v in range(a, b + 1)) for a, b in zip(lo, hi)]


@settings(max_examples=80, deadline=None)
@given(data=st.data(), model=ENSEMBLES)
def test_the_search_forgets_proven_regions_on_restart(data: Any, model: Any) -> None:
    """The search carves regions proven by earlier queries of the same instance out of its root box (which
    changes the boxes it expands and the counterexamples it finds, never its answers); after
    :meth:`EnsembleBox.restart` a query expands the boxes a fresh engine expands and finds its counterexample."""
    point = data.draw(points(model.space))
    n = model.space.n_features
    label = model.predict_point(point)
    fixed = data.draw(st.sets(st.integers(0, n - 1), max_size=max(n - 2, 0)))
    fresh = EnsembleBox(model)
    changes = fresh.changes(point, label, fixed)
    expected = fresh.model_point() if changes else None
    shared = EnsembleBox(model)
    for i in range(n):  # some of these prove fixed + {i}, carving x_i = v_i out of later searches
        assert shared.changes(point, label, fixed | {i}) == Brute(model, point).contrastive(set(range(n)) - fixed - {i})
    shared.restart()
    before = shared.nodes
    assert shared.changes(point, label, fixed) == changes
    assert (shared.model_point() if changes else None) == expected
    assert shared.nodes - before == fresh.nodes


def test_leaf_values_past_the_stated_size_raise_a_clear_error() -> None:
    """A soft forest whose leaf values need a common factor of more than MAX_SCALE_BITS bits to become
    integers: the search engine says so, naming the model and the options; within it, it answers."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1, 2]) for n in "ab"])
    primes = [1009, 1013, 1019, 1021, 1031, 1033]  # 1/p apart: a common factor of about 60 bits
    trees = [kcxai.DecisionTree(space, [0, 1], kcxai.Split(f, {0: kcxai.Leaf(0), 1: kcxai.Leaf(1), 2: kcxai.Leaf(1)}))
             for f in "abab"]
    scores = [{p.leaf: [Fraction(1, primes[(t + p.leaf) % 6]), Fraction(1, 2)] for p in tree.paths}
              for t, tree in enumerate(trees)]
    forest = RandomForest(space, [0, 1], trees, voting="soft", leaf_scores=scores)
    assert EnsembleBox(forest).rivals  # about 60 bits: within the default size
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("kcxai.engines._box_rivals.MAX_SCALE_BITS", 40)
        with pytest.raises(ProblemTooLargeError, match=r"this RandomForest's leaf values exact integers within "
                                                       r"MAX_SCALE_BITS=40 bits.*voting='hard'.*rounded\(step\)"):
            kcxai.ensemble_axp(forest, [1, 0], engine="search")



@st.composite
def _soft_two_class_forests(draw: Any) -> RandomForest:
    """Soft-voting forests of two classes, scores in twelfths: the forests the search asks SAT first about."""
    forest = draw(forests(space=draw(SPACES), max_trees=5).filter(lambda f: len(f.classes) == 2))
    num = st.fractions(min_value=0, max_value=1, max_denominator=12)
    scores = [{p.leaf: [draw(num), draw(num)] for p in t.paths} for t in forest.trees]
    return RandomForest(forest.space, forest.classes, forest.trees, voting="soft", leaf_scores=scores)


@settings(max_examples=25, deadline=None)
@given(data=st.data(), model=_soft_two_class_forests())
def test_the_sat_solver_asked_first_against_enumeration(data: Any, model: RandomForest) -> None:
    """Two-class soft forests: the search asks a SAT solver first (within a budget of conflicts), after its
    single-feature flips, its root boxes and its descent from the instance, switched off here so that SAT
    answers (every root counts as open: tiny forests' roots settle most queries). Every
    decision against enumeration, a counterexample of another class, a proof's core sufficient, and a box
    of ranges (widening's question) likewise; the engine still answers when the budget runs out (then the
    search alone, for the rest of the explanation)."""
    budget = data.draw(st.sampled_from([0, box_engine.SAT_CONFLICTS]))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EnsembleBox, "flips", lambda self, point, label: [None] * len(point))
        patch.setattr("kcxai.engines._box_search.BoxSearch.guess_from_instance", lambda self: None)
        patch.setattr(box_engine, "SAT_CONFLICTS", budget)
        patch.setattr(box_engine, "BoxBatch", object)  # the engine's test "is this root open?" always yes
        _sat_first_decisions(data, model)


def _sat_first_decisions(data: Any, model: RandomForest) -> None:
    point = data.draw(points(model.space))
    bf = Brute(model, point)
    engine = EnsembleBox(model)
    assume(engine.sat is not None)  # some path restricts a feature to a set of values that is not a range
    try:
        n = model.space.n_features
        for fixed in data.draw(st.lists(st.sets(st.integers(0, n - 1)), min_size=1, max_size=6)):
            changes = engine.changes(point, bf.label, fixed)
            assert changes == (not bf.sufficient(set(fixed)))
            if changes:
                assert model.predict_point(engine.model_point()) != bf.label
                assert all(engine.model_point()[i] == point[i] for i in fixed)
            else:
                core = engine.core_features(point, fixed)
                assert core <= set(fixed) and bf.sufficient(core)
                event("a core smaller than the fixed set" if core < set(fixed) else "the whole fixed set")
        sizes = model.space.domain_sizes
        ends = [sorted(data.draw(st.lists(st.integers(0, s - 1), min_size=2, max_size=2))) for s in sizes]
        lo, hi = [a for a, _ in ends], [b for _, b in ends]
        inside = [c for p, c in bf.table if all(a <= v <= b for v, a, b in zip(p, lo, hi))]
        assert engine.changes_in_box(lo, hi, bf.label) == any(c != bf.label for c in inside)
        if any(c != bf.label for c in inside):
            witness = engine.model_point()
            assert all(a <= v <= b for v, a, b in zip(witness, lo, hi)) and model.predict_point(witness) != bf.label
    finally:
        engine.close()


def _check_every_query(model: Any, engine: EnsembleBox) -> None:
    """Every point, every fixed set, every box of ranges and every AXp of a small model against enumeration."""
    sizes = model.space.domain_sizes
    n = len(sizes)
    for point in itertools.product(*(range(s) for s in sizes)):
        bf = Brute(model, point)
        assert _is_axp(bf, set(kcxai.ensemble_axp(engine, point).features))
        for fixed in itertools.chain.from_iterable(itertools.combinations(range(n), k) for k in range(n + 1)):
            changes = engine.changes(point, bf.label, fixed)
            assert changes == (not bf.sufficient(set(fixed)))
            if changes:
                witness = engine.model_point()
                assert model.predict_point(witness) != bf.label and all(witness[i] == point[i] for i in fixed)
        for lo, hi in itertools.product(itertools.product(*(range(s) for s in sizes)), repeat=2):
            if all(a <= b for a, b in zip(lo, hi)):
                inside = [c for p, c in bf.table if all(a <= v <= b for v, a, b in zip(p, lo, hi))]
                assert engine.changes_in_box(lo, hi, bf.label) == any(c != bf.label for c in inside)


def test_sums_past_the_float_range_are_decided_exactly() -> None:
    """Scaled sums past 2**1100 (no float holds them): the search bounds in scaled floats, decides exactly."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "abc"])
    tiny, big = Fraction(1, 3 ** 600), Fraction(2 ** 200)  # a common factor of 951 bits, values of 200 bits more
    trees = [kcxai.DecisionTree(space, [0, 1], kcxai.Split(n, {0: kcxai.Leaf(0), 1: kcxai.Leaf(0)})) for n in "abc"]
    values = [{1: big / 2, 2: big / 2 + tiny}, {1: -big / 4, 2: -big / 4}, {1: -tiny, 2: Fraction(0)}]
    model = BoostedTrees(space, [0, 1], trees, values, init=[-big / 4])
    # class 1 (margin > 0) only at a = c = 1; margins 0 (a tie: class 0) and -tiny elsewhere
    assert [model.predict_point(p) for p in ((1, 0, 1), (1, 1, 1), (1, 0, 0), (0, 0, 1))] == [1, 1, 0, 0]
    engine = EnsembleBox(model)
    rival = engine.rivals[1][0]
    assert rival.slack is not None and max(abs(v) for v in rival.values) * 3 > 2 ** 1100
    _check_every_query(model, engine)


def test_soft_forest_sums_past_the_float_range_are_decided_exactly() -> None:
    """A three-class soft forest whose scores need a 1024-bit common factor: four trees' sums pass the float
    range; every query against enumeration."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical("a", [0, 1, 2]), kcxai.Feature.categorical("b", [0, 1])])
    tiny = Fraction(1, 3 ** 646)  # 1024 bits: the largest common factor allowed
    trees = [kcxai.DecisionTree(space, [0, 1, 2], kcxai.Split(f, {v: kcxai.Leaf(v % 3) for v in range(k)}))
             for f, k in (("a", 3), ("b", 2), ("a", 3), ("b", 2))]

    def row(c: int, t: int) -> list[Fraction]:  # class c's score all but tiny * (t + 1), which goes to the next class
        out = [Fraction(0)] * 3
        out[c], out[(c + 1) % 3] = 1 - tiny * (t + 1), tiny * (t + 1)
        return out

    scores = [{p.leaf: row((p.leaf + t) % 3, t) for p in tree.paths} for t, tree in enumerate(trees)]
    forest = RandomForest(space, [0, 1, 2], trees, voting="soft", leaf_scores=scores)
    engine = EnsembleBox(forest)
    assert any(r.slack is not None and 4 * max(abs(v) for v in r.values) > 2 ** 1024
               for rs in engine.rivals.values() for r in rs)
    assert len({forest.predict_point(p) for p in itertools.product(range(3), range(2))}) > 1
    _check_every_query(forest, engine)


def test_the_portfolio_encodes_a_soft_forest_once() -> None:
    """A two-class soft forest of ranges (the search would ask SAT first): inside the portfolio the search runs
    without a solver of its own, so the forest is encoded once, and the AXps stay subset-minimal."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1, 2]) for n in "abc"])
    trees = [kcxai.DecisionTree(space, [0, 1], kcxai.Split(f, {0: kcxai.Leaf(0), 1: kcxai.Leaf(1), 2: kcxai.Leaf(1)}))
             for f in "abca"]
    scores = [{p.leaf: [Fraction(1 + t + p.leaf, 12), Fraction(11 - t - p.leaf, 12)] for p in tree.paths}
              for t, tree in enumerate(trees)]
    forest = RandomForest(space, [0, 1], trees, voting="soft", leaf_scores=scores)
    encodings = []
    encode = EnsembleCnf._encode
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EnsembleCnf, "_encode", lambda self: (encodings.append(self), encode(self))[1])
        alone = EnsembleBox(forest)
        assert alone.sat is not None and len(encodings) == 1  # the search alone asks SAT first
        alone.close()
        with EnsemblePortfolio(forest) as both:
            assert both.box.sat is None and len(encodings) == 2  # one more: the worker's
            for point in itertools.product(range(3), repeat=3):
                assert _is_axp(Brute(forest, point), set(kcxai.ensemble_axp(both, point).features))


@settings(max_examples=80, deadline=None)
@given(data=st.data(), model=ENSEMBLES)
def test_earlier_counterexamples_guide_one_explanation_only(data: Any, model: Any) -> None:
    """Counterexamples found by earlier queries of the same instance guide later ones (exact answers against
    enumeration); after :meth:`EnsembleBox.restart` a query finds what a fresh engine finds, with as many boxes.
    The single-feature flips and the descent from the instance are switched off, so that the queries reach the
    guesses from earlier counterexamples."""
    point = data.draw(points(model.space))
    n = model.space.n_features
    bf = Brute(model, point)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EnsembleBox, "flips", lambda self, point, label: [None] * len(point))
        patch.setattr("kcxai.engines._box_search.BoxSearch.guess_from_instance", lambda self: None)
        fixed = data.draw(st.sets(st.integers(0, n - 1), max_size=max(n - 1, 0)))
        fresh = EnsembleBox(model)
        changes = fresh.changes(point, bf.label, fixed)
        expected = fresh.model_point() if changes else None
        shared = EnsembleBox(model)
        for other in data.draw(st.lists(st.sets(st.integers(0, n - 1)), min_size=1, max_size=5)):
            assert shared.changes(point, bf.label, other) == (not bf.sufficient(set(other)))
            if not bf.sufficient(set(other)):
                witness = shared.model_point()
                assert model.predict_point(witness) != bf.label and all(witness[i] == point[i] for i in other)
        event(f"{len(shared._earlier[1]) if shared._earlier else 0} earlier counterexamples")
        shared.restart()
        before = shared.nodes
        assert shared.changes(point, bf.label, fixed) == changes
        assert (shared.model_point() if changes else None) == expected
        assert shared.nodes - before == fresh.nodes


def _random_box(data: Any, sizes: list[int]) -> tuple[list[int], list[int]]:
    ends = [sorted(data.draw(st.lists(st.integers(0, s - 1), min_size=2, max_size=2))) for s in sizes]
    return [a for a, _ in ends], [b for _, b in ends]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), model=ENSEMBLES)
def test_box_queries_reuse_counterexamples_within_one_explanation(data: Any, model: Any) -> None:
    """A box query first looks for a counterexample of an earlier box query inside its box (widening asks
    growing boxes): exact answers against enumeration, each witness in its box; after a restart a box query
    answers as a fresh engine does (same witness, same boxes expanded)."""
    sizes = model.space.domain_sizes
    table = [(p, model.predict_point(p)) for p in itertools.product(*map(range, sizes))]
    label = data.draw(st.sampled_from(sorted({c for _, c in table})))

    def changes(lo: list[int], hi: list[int]) -> bool:
        return any(c != label for p, c in table if all(a <= v <= b for v, a, b in zip(p, lo, hi)))

    lo, hi = _random_box(data, sizes)
    fresh = EnsembleBox(model)
    expected = fresh.changes_in_box(lo, hi, label)
    witness = fresh.model_point() if expected else None
    shared = EnsembleBox(model)
    for _ in range(data.draw(st.integers(1, 6))):
        a, b = _random_box(data, sizes)
        assert shared.changes_in_box(a, b, label) == changes(a, b)
        if changes(a, b):
            w = shared.model_point()
            assert model.predict_point(w) != label and all(x <= v <= y for v, x, y in zip(w, a, b))
    shared.restart()
    before = shared.nodes
    assert shared.changes_in_box(lo, hi, label) == expected == changes(lo, hi)
    assert (shared.model_point() if expected else None) == witness
    assert shared.nodes - before == fresh.nodes


def test_a_box_query_out_of_boxes_is_undecided_never_wrong() -> None:
    """``changes_in_box(..., max_boxes=1)`` on a hard-voting forest (no SAT solver asked first): each answer is
    ``None`` or the enumerated one, and some are ``None``; without a bound every answer is decided."""
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.integers(0, 6, size=(300, 3))
    y = (X[:, 0] + 2 * X[:, 1] - X[:, 2] + rng.integers(-2, 3, size=300) > 4).astype(int)
    forest = RandomForest.from_sklearn(RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0).fit(X, y),
                                       voting="hard")
    engine = EnsembleBox(forest)
    table = {p: forest.predict_point(p) for p in itertools.product(range(6), repeat=3)}
    answers = []
    for lo in itertools.product(range(0, 6, 2), repeat=3):
        for label in (0, 1):
            truth = any(c != label for p, c in table.items() if all(a <= v for a, v in zip(lo, p)))
            answers.append(engine.changes_in_box(lo, (5, 5, 5), label, max_boxes=1))
            assert answers[-1] in (None, truth)
            assert engine.changes_in_box(lo, (5, 5, 5), label) == truth
    assert None in answers
