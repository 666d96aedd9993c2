"""Bounded diagrams, value vectors below the cut and conditioned counts against enumeration.

The bounded construction (kcxai/compilers/_ensemble/bounded.py, the ``bounded`` language) is held to
brute force on random forests and boosted models (two and three classes; uniform, product and mixture
distributions, exact and float): every bound contains the exact count, the unknown weight it reports is
the weight of the points it leaves undecided, and without budget pressure the bounds are the exact counts.
Budget pressure is made deterministic by replaying a schedule (one bounded round at a given threshold).
"""

from __future__ import annotations

import pickle
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai import DecisionTree, Feature, FeatureSpace, Leaf, Split
from kcxai.compilers._ensemble import compile_additive, ensemble_order
from kcxai.compilers._ensemble.bottom import cut_level
from kcxai.compilers._ensemble.bounded import compile_bounded
from kcxai.compilers._ensemble.build import BuiltEnsemble
from kcxai.compilers._ensemble.conditioned import conditioned_counts
from kcxai.compilers._ensemble import threshold
from kcxai.compilers._limits import Guard
from kcxai.compilers._tables.diagram import diagram_oracle
from kcxai.compilers.bounded import bounds_oracle
from kcxai.models import BoostedTrees
from kcxai.oracle import BoundsOracle, BoundsSession, answers_of
from tests._support import reference as ref
from tests._support.model_strategies import boosted_models, forests
from tests._support.strategies import DISTRIBUTIONS, feature_spaces, points
from tests._support.ensemble_reference import boosted_pairs

FAMILIES = {"forest": forests, "boosted": boosted_models}


def _brute(model):
    return kcxai.compile_model(model, "brute").oracle


def _check_bounds(model, oracle, data):
    """Every bound contains brute force's count, at the point level and for random cells."""
    brute = _brute(model)
    space = model.space
    n = space.n_features
    every = frozenset(range(n))
    exact = space.is_exact
    for x in ref.all_points(space):  # a single point: proven right, proven wrong, or undecided
        c = model.predict_point(x)
        lo, hi = oracle.disagree_bounds(x, c, every)
        assert ref.close(lo, 0) and (ref.close(hi, 0) or ref.close(hi, space.point_weight(x)))
    p = data.draw(points(space))
    for label in range(len(model.classes)):
        for _ in range(3):
            s = frozenset(data.draw(st.sets(st.integers(0, n - 1))))
            lo, hi = oracle.disagree_bounds(p, label, s)
            want = brute.disagree_weight(p, label, s)
            if exact:
                assert lo <= want <= hi
            else:
                assert lo - 1e-9 <= want <= hi + 1e-9


def _unknown_by_points(model, oracle):
    """The weight of the points whose class the diagram leaves open, point by point."""
    every = frozenset(range(model.space.n_features))
    total = 0
    for x in ref.all_points(model.space):
        lo, hi = oracle.disagree_bounds(x, model.predict_point(x), every)
        total += hi - lo
    return total


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=40)
@given(data=st.data())
def test_bounds_contain_the_exact_counts_under_budget_pressure(family, data):
    model = data.draw(FAMILIES[family](distributions=DISTRIBUTIONS))
    theta = data.draw(st.sampled_from([0.5, 0.2, 0.05, 0.01]))
    compiled = kcxai.compile_model(model, "bounded", schedule=[(theta, None, None)])
    oracle = compiled.oracle
    assert isinstance(oracle, BoundsOracle) and answers_of(oracle) == "bounds"
    _check_bounds(model, oracle, data)
    unknown = compiled.stats["unknown_weight"]
    assert ref.close(unknown, _unknown_by_points(model, oracle))  # what the stats say is left open
    assert compiled.stats["exact"] == (unknown == 0)
    if model.space.is_exact:
        assert compiled.stats["unknown"] == Fraction(unknown, model.space.total_weight)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=30)
@given(data=st.data())
def test_without_budget_pressure_the_bounds_are_the_exact_counts(family, data):
    model = data.draw(FAMILIES[family](distributions=DISTRIBUTIONS))
    compiled = kcxai.compile_model(model, "bounded")
    assert compiled.stats["exact"] and compiled.stats["unknown_weight"] == 0
    assert compiled.stats["schedule"] == ((0.0, None, None),)
    brute = _brute(model)
    p = data.draw(points(model.space))
    for label in range(len(model.classes)):
        s = frozenset(data.draw(st.sets(st.integers(0, model.space.n_features - 1))))
        lo, hi = compiled.oracle.disagree_bounds(p, label, s)
        assert ref.close(lo, hi) and ref.close(lo, brute.disagree_weight(p, label, s))


@settings(max_examples=30)
@given(data=st.data())
def test_sessions_answer_as_the_oracle(data):
    model = data.draw(st.one_of(forests(distributions=DISTRIBUTIONS), boosted_models(distributions=DISTRIBUTIONS)))
    theta = data.draw(st.sampled_from([0.0, 0.3, 0.05]))
    oracle = kcxai.compile_model(model, "bounded", schedule=[(theta, None, None)]).oracle
    n = model.space.n_features
    p = data.draw(points(model.space))
    label = data.draw(st.integers(0, len(model.classes) - 1))
    fixed = set(range(n))
    session = oracle.session(p, label, frozenset(fixed))
    assert isinstance(session, BoundsSession)
    for f in data.draw(st.permutations(range(n))):
        assert session.bounds_if_freed(f) == oracle.disagree_bounds(p, label, frozenset(fixed - {f}))
        if data.draw(st.booleans()):
            session.free(f)
            fixed.discard(f)
            assert session.fixed == frozenset(fixed)
            assert session.bounds() == oracle.disagree_bounds(p, label, frozenset(fixed))


def _vote_forest(n_trees=40, n_features=8, seed=0):
    """A soft-voting forest of two-level trees with irregular scores: too large for tiny budgets."""
    rng = random.Random(seed)
    space = FeatureSpace([Feature.categorical(f"x{i}", list(range(4))) for i in range(n_features)],
                         distribution=[[rng.randint(1, 9) for _ in range(4)] for _ in range(n_features)])
    trees, scores = [], []
    for _ in range(n_trees):
        a, b = rng.sample(range(n_features), 2)
        sub = {v: Split(f"x{b}", {w: Leaf(rng.randrange(2)) for w in range(4)}) for v in range(4)}
        tree = DecisionTree(space, [0, 1], Split(f"x{a}", sub))
        trees.append(tree)
        scores.append({leaf: [Fraction(rng.randint(0, 97), 97), Fraction(rng.randint(0, 89), 89)]
                       for leaf in tree.leaves})
    return kcxai.models.RandomForest(space, [0, 1], trees, voting="soft", leaf_scores=scores)


def test_a_budget_run_is_replayed_exactly_and_survives_pickling():
    model = _vote_forest()
    first = kcxai.compile_model(model, "bounded", max_seconds=0.5)
    schedule = first.stats["schedule"]
    again = kcxai.compile_model(model, "bounded", schedule=schedule)
    rebuilt = pickle.loads(pickle.dumps(first))
    rng = random.Random(0)
    for _ in range(20):
        p = tuple(rng.randrange(4) for _ in range(8))
        s = frozenset(rng.sample(range(8), rng.randint(0, 8)))
        want = first.oracle.disagree_bounds(p, 1, s)
        assert again.oracle.disagree_bounds(p, 1, s) == want == rebuilt.oracle.disagree_bounds(p, 1, s)
    assert again.stats["unknown_weight"] == first.stats["unknown_weight"]


def test_rounds_under_a_tight_budget_leave_the_lightest_states_unknown_and_report_progress():
    model = _vote_forest(n_trees=60, n_features=10, seed=3)
    seen = []
    compiled = kcxai.compile_model(model, "bounded", max_seconds=0.3, progress=seen.append)
    stats = compiled.stats
    assert 0 <= stats["unknown"] <= 1 and stats["exact"] == (stats["unknown_weight"] == 0)
    assert stats["schedule"] and all(0 <= t <= 1 for t, _, _ in stats["schedule"])
    assert seen and all(0 <= p.done <= 1 for p in seen) and {p.phase for p in seen} <= {"exact", "bounded"}
    # a replayed round at a lower threshold leaves no more unknown (it decides every state the other did), and
    # rounds down to a threshold below every path mass end exact: what a round leaves undecided is not kept
    coarse = kcxai.compile_model(model, "bounded", schedule=[(0.05, None, None)]).stats["unknown_weight"]
    fine = kcxai.compile_model(model, "bounded", schedule=[(0.05, None, None), (0.001, None, None)])
    assert 0 < fine.stats["unknown_weight"] <= coarse
    rounds = [(0.05, None, None), (0.001, None, None), (1e-30, None, None)]
    last = kcxai.compile_model(model, "bounded", schedule=rounds)
    assert last.stats["exact"] and last.stats["unknown_weight"] == 0


def test_the_planted_off_by_one_in_the_unknown_weight_is_caught(monkeypatch):
    """The unknown weight the stats report is checked point by point: one unit more is caught."""
    from kcxai.compilers._tables import bounds

    model = _vote_forest(n_trees=6, n_features=4, seed=1)
    original = bounds.DiagramBoundsOracle.unknown_weight
    monkeypatch.setattr(bounds.DiagramBoundsOracle, "unknown_weight", lambda self, p, f: original(self, p, f) + 1)
    compiled = kcxai.compile_model(model, "bounded", schedule=[(0.2, None, None)])
    assert compiled.stats["unknown_weight"] != _unknown_by_points(model, compiled.oracle)


@pytest.mark.parametrize("bad, match", [({"max_seconds": 0}, "'max_seconds' must be a positive number"),
                                        ({"max_seconds": -1.0}, "'max_seconds' must be a positive number"),
                                        ({"max_seconds": float("inf")}, "'max_seconds' must be a finite"),
                                        ({"max_nodes": 0}, "'max_nodes' must be"),
                                        ({"max_memory": -5}, "'max_memory' must be"),
                                        ({"schedule": [(2.0, None, None)]}, "'schedule' must be"),
                                        ({"schedule": "fast"}, "'schedule' must be"),
                                        ({"progress": 3}, "'progress' must be a callable")])
def test_bad_options_name_the_argument(bad, match):
    forest = _vote_forest(n_trees=2, n_features=3)
    with pytest.raises(kcxai.KcxaiError, match=match):
        kcxai.compile_model(forest, "bounded", **bad)


def test_only_tree_ensembles_are_bounded():
    tree = kcxai.datasets.running_example_tree()
    with pytest.raises(kcxai.InvalidTypeError, match="'bounded' language does not compile DecisionTree"):
        kcxai.compile_model(tree, "bounded")
    with pytest.raises(kcxai.InvalidInputError, match="'bounded' language compiles tree ensembles"):
        kcxai.compilers.bounded.compile(tree)


# -- value vectors below the cut -----------------------------------------------------------------------------


def _exact_table(model, **kwargs):
    spec = model.additive_trees()
    order = ensemble_order(spec)
    counts = {}
    diagram, roots, negated = compile_additive(spec, order, None, counts, **kwargs)
    built = BuiltEnsemble(order, diagram, roots, negated, 0.0, counts)
    return diagram_oracle("obdd", model.space, built.table(model.space)), diagram.reachable(roots)


@settings(max_examples=40)
@given(data=st.data())
def test_vectors_below_every_cut_make_the_same_diagram(data):
    """Deciding the last levels from value vectors (leaf values past 2**62 included: shifted sums with exact
    brackets) gives the very diagram of the state-by-state construction, and brute force's counts."""
    space = data.draw(feature_spaces(min_features=2, max_features=5, max_values=4, distributions=DISTRIBUTIONS))
    model = data.draw(st.one_of(boosted_models(space=space, max_trees=8), forests(space=space, max_trees=6)))
    points_cut = data.draw(st.sampled_from([1, 4, 16, 10_000]))
    plain, nodes = _exact_table(model, bottom=False)
    vec, vec_nodes = _exact_table(model, bottom=True, bottom_points=points_cut)
    assert vec_nodes == nodes
    brute = _brute(model)
    for x in ref.all_points(space):
        assert vec.predict_point(x) == model.predict_point(x)
    p = data.draw(points(space))
    for label in range(len(model.classes)):
        s = frozenset(data.draw(st.sets(st.integers(0, space.n_features - 1))))
        assert ref.close(vec.disagree_weight(p, label, s), brute.disagree_weight(p, label, s))
        assert ref.close(vec.disagree_weight(p, label, s), plain.disagree_weight(p, label, s))


def _huge_ties(n_trees=12, seed=0, small=(0, 0, 1, -1)):
    """Boosted stumps whose leaves are multiples of 2**70 plus a small part from ``small``: sums past 2**62 (the
    vectors are shifted), and exact ties (the initial score cancels the small parts when they are all equal)."""
    rng = random.Random(seed)
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1, 2]) for i in range(4)])
    trees, values = [], []
    for _ in range(n_trees):
        a, b = rng.sample(range(4), 2)
        tree = DecisionTree(space, [0, 1], Split(f"x{a}", {v: Split(f"x{b}", {w: Leaf(0) for w in range(3)})
                                                          for v in range(3)}))
        trees.append(tree)
        values.append({leaf: Fraction(rng.randint(-2, 2) * 2 ** 70 + rng.choice(small), 3 ** 45)
                       for leaf in tree.leaves})
    init = Fraction(-n_trees * small[0], 3 ** 45) if len(set(small)) == 1 else Fraction(0)
    return BoostedTrees(space, [0, 1], trees, values, init=[init], ties=rng.choice(["first", "last"]))


def _straddling(ties):
    """Two trees whose sums are -1, 0 and 1 beside multiples of 2**70: each near tie straddles the bracket."""
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1, 2]) for i in range(2)])
    big = 2 ** 70
    trees, values = [], []
    for name, leaves in (("x0", [big, -big, 0]), ("x1", [-big - 1, big, 1])):
        tree = DecisionTree(space, [0, 1], Split(name, {v: Leaf(0) for v in range(3)}))
        trees.append(tree)
        values.append({leaf: Fraction(leaves[k], 3 ** 45) for k, leaf in enumerate(tree.leaves)})
    return BoostedTrees(space, [0, 1], trees, values, ties=ties)


@pytest.mark.parametrize("ties", ["first", "last"])
def test_shifted_vectors_decide_sums_of_minus_one_zero_and_one(ties):
    model = _straddling(ties)
    vec, _ = _exact_table(model, bottom=True, bottom_points=9)
    assert {model.predict_point(x) for x in ref.all_points(model.space)} == {0, 1}
    for x in ref.all_points(model.space):
        assert vec.predict_point(x) == model.predict_point(x)


@pytest.mark.parametrize("small", [(0, 0, 1, -1), (-1,), (1,), (-(2 ** 19),)])
@pytest.mark.parametrize("seed", range(4))
def test_shifted_vectors_decide_near_ties_exactly(seed, small):
    model = _huge_ties(seed=seed, small=small)
    vec, _ = _exact_table(model, bottom=True, bottom_points=81)
    for x in ref.all_points(model.space):
        assert vec.predict_point(x) == model.predict_point(x)


def test_the_cut_switches_on_mid_run_and_changes_nothing(monkeypatch):
    """The vectors are switched on once the states counted lie below the candidate cut: mid-run, every
    result so far stays valid and the diagram is the same."""
    monkeypatch.setattr(threshold, "PROBE_STATES", 0)
    model = boosted_pairs(n_trees=30, n_features=12, seed=4)
    plain, nodes = _exact_table(model, bottom=False)
    switched, switched_nodes = _exact_table(model, bottom=None, bottom_points=216)
    assert switched_nodes == nodes
    rng = random.Random(0)
    for _ in range(300):
        x = tuple(rng.randrange(6) for _ in range(12))
        assert switched.predict_point(x) == plain.predict_point(x) == model.predict_point(x)



def test_cut_level_and_the_vectors_of_the_bottom():
    assert cut_level([10, 6, 2, 5, 2], 100) == 2 and cut_level([10], 5) == 1 and cut_level([], 5) == 0
    model = _huge_ties(n_trees=3)
    spec = model.additive_trees()
    order = ensemble_order(spec)
    built = compile_bounded(spec, order, Guard("t", None, 10.0), bottom=True)
    oracle = bounds_oracle(model, built, order)
    brute = _brute(model)
    assert built.exact
    for x in ref.all_points(model.space)[::7]:
        for fixed in (frozenset(), frozenset({0, 2}), frozenset(range(4))):
            want = brute.disagree_weight(x, 0, fixed)
            assert oracle.disagree_bounds(x, 0, fixed) == (want, want)


# -- conditioned counts ---------------------------------------------------------------------------------------


@settings(max_examples=40)
@given(data=st.data())
def test_conditioned_counts_equal_brute_force(data):
    model = data.draw(st.one_of(forests(distributions=DISTRIBUTIONS), boosted_models(distributions=DISTRIBUTIONS)))
    space = model.space
    n = space.n_features
    p = data.draw(points(space))
    label = data.draw(st.integers(0, len(model.classes) - 1))
    fixed = frozenset(data.draw(st.sets(st.integers(0, n - 1))))
    free = data.draw(st.sampled_from(sorted(fixed))) if fixed and data.draw(st.booleans()) else None
    got = conditioned_counts(model, p, label, fixed, free=free, max_seconds=None)
    brute = _brute(model)
    assert ref.close(got.disagree, brute.disagree_weight(p, label, fixed))
    assert ref.close(got.consistent, space.consistent_weight(p, fixed))
    if free is None:
        assert got.freed is None and got.disagree_freed is None
    else:
        assert got.freed == free
        assert ref.close(got.disagree_freed, brute.disagree_weight(p, label, fixed - {free}))


def test_a_conditioned_compile_that_does_not_fit_says_so():
    model = _vote_forest(n_trees=60, n_features=10, seed=3)
    with pytest.raises(kcxai.CompilationLimitError, match="max_nodes"):
        conditioned_counts(model, (0,) * 10, 0, (), max_nodes=5, max_seconds=None)
