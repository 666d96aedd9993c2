"""Batched prediction (``predict_points``) equals the point-wise one, and the batched sampler stays certified."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai import DecisionTree, Feature, FeatureSpace
from kcxai.models import BoostedTrees, RandomForest
from kcxai.models._predict_batch import LEVELS_PER_NODE, TABLE_LIMIT
from tests.model_strategies import _classes, _with_classes, any_model, forests, linear_models, naive_bayes_models
from tests.reference import error as brute_error
from tests.strategies import feature_spaces, instance_of, points, trees

SETTINGS = settings(max_examples=60, derandomize=True, deadline=None)


def random_points(space: FeatureSpace, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, s, size=n) for s in space.domain_sizes], axis=1)


def assert_same(model: Any, pts: np.ndarray) -> None:
    got = model.predict_points(pts)
    want = [model.predict_point(tuple(p)) for p in pts.tolist()]
    assert got.dtype == np.int64 and got.shape == (len(pts),)
    assert got.tolist() == want


@st.composite
def boosted_models(draw: Any, *, small_ints: bool = False, tiny: bool = False, k: int | None = None,
                   ties: str | None = None) -> BoostedTrees:
    """Binary (ties first/last) or multi-class boosted trees; leaf values with exact ties at zero and
    denominators far past 2**62 (totals as Python ints)."""
    space = draw(feature_spaces(max_features=4))
    k = draw(st.integers(2, 3)) if k is None else k
    classes = _classes(draw, k)
    ts = [_with_classes(draw(trees(space=space, n_classes=k, max_depth=3)), classes)
          for _ in range(draw(st.integers(1, 5)))]
    num = st.one_of(st.integers(-2, 2), st.fractions(min_value=-2, max_value=2, max_denominator=4),
                    st.sampled_from([0.5, -0.5, 0.1, -0.3, 1 / 3]),
                    st.sampled_from([Fraction(1, 3 ** 41), -Fraction(1, 3 ** 41), Fraction(5, 11 ** 30)]))
    if small_ints:  # many exact ties (zero margins, equal class scores)
        num = st.integers(-1, 1)
    if tiny:  # totals split into limbs (scale 3**41 > 2**64) with margins of one unit of the scale, or zero
        num = st.sampled_from([0, 1, -1, Fraction(1, 3 ** 41), -Fraction(1, 3 ** 41)])
    values = [{leaf: draw(num) for leaf in t.leaves} for t in ts]
    if k == 2:
        return BoostedTrees(space, classes, ts, values, init=[draw(num)],
                            ties=ties or draw(st.sampled_from(["first", "last"])))
    tree_class = [draw(st.integers(0, k - 1)) for _ in ts]
    return BoostedTrees(space, classes, ts, values, tree_class=tree_class, init=[draw(num) for _ in range(k)])


@SETTINGS
@given(trees(), st.integers(0, 9))
def test_trees(tree: DecisionTree, seed: int) -> None:
    assert_same(tree, random_points(tree.space, 200, seed))


@SETTINGS
@given(forests(max_trees=5), st.integers(0, 9))
def test_forests_soft_and_hard(forest: RandomForest, seed: int) -> None:
    assert_same(forest, random_points(forest.space, 200, seed))


@SETTINGS
@given(boosted_models(), st.integers(0, 9))
def test_boosted(model: BoostedTrees, seed: int) -> None:
    assert_same(model, random_points(model.space, 200, seed))


@pytest.mark.parametrize("k, ties", [(2, "first"), (2, "last"), (3, "first")])
@pytest.mark.parametrize("values", ["small_ints", "tiny"])
def test_boosted_ties(k: int, ties: str, values: str) -> None:
    """Many zero margins and equal class scores (small integers, or totals past int64 that differ by one
    unit of the scale), decided as predict_point does."""

    @settings(max_examples=30, derandomize=True, deadline=None)
    @given(boosted_models(**{values: True}, k=k, ties=ties), st.integers(0, 9))
    def check(model: BoostedTrees, seed: int) -> None:
        assert_same(model, random_points(model.space, 200, seed))

    check()


@settings(max_examples=30, derandomize=True, deadline=None)
@given(any_model(), st.integers(0, 9))
def test_every_family(model: Any, seed: int) -> None:
    assert_same(model, random_points(model.space, 50, seed))


def test_forest_ties_go_to_the_first_class() -> None:
    """Two trees voting for opposite classes everywhere: every point is a tie, decided for class 0."""
    space = FeatureSpace([Feature.categorical("a", [0, 1, 2])])
    from kcxai import Leaf, Split
    t1 = DecisionTree(space, ["x", "y", "z"], Split("a", {0: Leaf("y"), 1: Leaf("z"), 2: Leaf("z")}))
    t2 = DecisionTree(space, ["x", "y", "z"], Split("a", {0: Leaf("z"), 1: Leaf("y"), 2: Leaf("y")}))
    pts = np.array([[0], [1], [2]])
    for forest in (RandomForest(space, ["x", "y", "z"], [t1, t2], voting="hard"),
                   RandomForest(space, ["x", "y", "z"], [t1, t2], voting="soft",
                                leaf_scores=[{lf: [0, 0.1, 0.1] for lf in t.leaves} for t in (t1, t2)])):
        assert forest.predict_points(pts).tolist() == [1, 1, 1] == [forest.predict_point(tuple(p)) for p in pts]


@pytest.mark.parametrize("size", [TABLE_LIMIT - 20, 65, 130, 5000])
def test_large_domains(size: int) -> None:
    """Features with up to TABLE_LIMIT values (direct tables) and more than 64 values: masks wider than a
    machine word, intervals (threshold tests) and arbitrary groups of values, at the root and deeper; both
    walks (5,000 values: the flat table is refused, past LEVELS_PER_NODE entries a node)."""
    from kcxai import Leaf, Split

    space = FeatureSpace([Feature.categorical("big", list(range(size))), Feature.categorical("small", [0, 1, 2])])

    @settings(max_examples=15, derandomize=True, deadline=None)
    @given(st.integers(0, 2 ** 32 - 1), st.integers(1, size - 1), st.integers(0, 9))
    def check(group_seed: int, cut: int, seed: int) -> None:
        groups = np.random.default_rng(group_seed).integers(0, 4, size=size).tolist()
        inner = Split("big", ((tuple(range(cut)), Leaf("b")), (tuple(range(cut, size)), Leaf("c"))))  # a threshold
        used = sorted(set(groups))
        root = Split("big", tuple(
            (tuple(v for v in range(size) if groups[v] == g),
             inner if g == used[0] else Split("small", {0: Leaf("a"), 1: Leaf("b"), 2: Leaf("c" if g % 2 else "a")}))
            for g in used))
        tree = DecisionTree(space, ["a", "b", "c"], root)
        forest = RandomForest(space, ["a", "b", "c"], [tree, DecisionTree(space, ["a", "b", "c"], inner)])
        pts = random_points(space, 400, seed)
        # values around the word boundary and the threshold
        pts[:6, 0] = [0, size - 1, min(63, size - 1), min(64, size - 1), cut - 1, cut]
        assert (tree.router._flat() is None) == (size > 2 * LEVELS_PER_NODE)  # 5,000 values: past the cap
        for model in (tree, forest):
            assert_same(model, pts)
        want = [tree.predict_point(tuple(p)) for p in pts.tolist()]
        labels = np.asarray(tree.arrays.label)
        assert labels[tree.router.leaves_by_node(pts)].tolist() == want  # runs past TABLE_LIMIT

    check()


@SETTINGS
@given(trees(max_depth=6), st.integers(0, 9))
def test_node_by_node_walk(tree: DecisionTree, seed: int) -> None:
    """The walk used for deep trees or huge tables reaches the leaves the level-by-level one does."""
    pts = random_points(tree.space, 200, seed)
    assert tree.router.leaves_by_node(pts).tolist() == tree.router.leaves(pts).tolist()
    assert [tree.arrays.label[leaf] for leaf in tree.router.leaves(pts)] == \
        [tree.predict_point(tuple(p)) for p in pts.tolist()]


def test_deep_chain_is_walked_node_by_node() -> None:
    """A 300-deep chain (past LEVELS_DEPTH): the node-by-node walk, still exact."""
    from kcxai import Leaf, Split
    from kcxai.models._predict_batch import LEVELS_DEPTH

    n = 300
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1]) for i in range(n)])
    node: Any = Leaf(1)
    for i in reversed(range(n)):
        node = Split(f"x{i}", {0: Leaf(0), 1: node})
    tree = DecisionTree(space, [0, 1], node)
    assert tree.depth > LEVELS_DEPTH and tree.router._flat() is None
    pts = random_points(space, 100, 0)
    pts[:3] = 1
    assert_same(tree, pts)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_imported_sklearn_forest_and_boosting(n_classes: int) -> None:
    from sklearn.datasets import make_classification
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

    X, y = make_classification(n_samples=300, n_features=5, n_informative=3, n_redundant=0,
                               n_classes=n_classes, random_state=0)
    for clf in (RandomForestClassifier(n_estimators=15, max_depth=5, random_state=0),
                GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=0)):
        model = kcxai.from_sklearn(clf.fit(X, y))
        pts = random_points(model.space, 2000, 1)
        assert_same(model, pts)
    hard = RandomForest.from_sklearn(RandomForestClassifier(n_estimators=15, random_state=0).fit(X, y),
                                     voting="hard")
    assert_same(hard, random_points(hard.space, 1000, 2))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_imported_xgboost(n_classes: int) -> None:
    xgb = pytest.importorskip("xgboost")
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=300, n_features=5, n_informative=3, n_redundant=0,
                               n_classes=n_classes, random_state=0)
    model = kcxai.from_sklearn(xgb.XGBClassifier(n_estimators=20, max_depth=4, n_jobs=1).fit(X, y))
    assert_same(model, random_points(model.space, 2000, 3))


def test_imported_lightgbm() -> None:
    lgb = pytest.importorskip("lightgbm")
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    model = kcxai.from_sklearn(lgb.LGBMClassifier(n_estimators=10, num_leaves=7, verbose=-1).fit(X, y))
    assert_same(model, random_points(model.space, 2000, 4))


# -- the sampling oracle ---------------------------------------------------------


@settings(max_examples=20, derandomize=True, deadline=None)
@given(st.one_of(trees(), forests(max_trees=3)), st.data())
def test_batched_sampler_takes_the_point_by_point_decisions(model: Any, data: Any) -> None:
    """The same seed gives the same draws: the batched oracle's explanation is the point-wise one's."""
    x = instance_of(model.space, data.draw(points(model.space)))
    delta = data.draw(st.sampled_from([Fraction(1, 20), Fraction(1, 5)]))
    seed = data.draw(st.integers(0, 5))
    out = []
    for batched in (True, False):
        c = kcxai.compile_model(model, "sampling", seed=seed, initial_samples=32, max_samples=256)
        c.oracle.batched = batched
        out.append((kcxai.min_idrs(c, x, delta).features, c.oracle.samples))
    assert out[0] == out[1]


@settings(max_examples=25, derandomize=True, deadline=None)
@given(st.one_of(trees(max_depth=4), forests(max_trees=3)), st.data())
def test_estimates_are_consistent_with_the_exact_error(model: Any, data: Any) -> None:
    """``disagree_weight`` (max_samples draws) is within a 1e-6-level Clopper-Pearson interval of the exact
    disagreeing weight (brute force), and every certified ``decide`` agrees with the exact comparison."""
    from kcxai.compilers.sampling import clopper_pearson
    from kcxai.arithmetic import Bound

    point = data.draw(points(model.space))
    label = model.predict_point(point)
    fixed = frozenset(data.draw(st.sets(st.integers(0, model.space.n_features - 1))))
    c = kcxai.compile_model(model, "sampling", seed=data.draw(st.integers(0, 5)), initial_samples=128,
                            max_samples=4096, confidence=1 - 1e-6)
    oracle = c.oracle
    space = model.space
    cons = space.consistent_weight(point, fixed)
    exact = brute_error(model, point, fixed) * space.total_weight  # the disagreeing weight
    p = float(exact / cons)
    k = round(float(oracle.disagree_weight(point, label, fixed)) / float(cons) * 4096)
    lo, hi = clopper_pearson(k, 4096, 1e-6)
    assert lo - 1e-9 <= p <= hi + 1e-9
    for delta in (Fraction(1, 50), Fraction(1, 10), Fraction(1, 3)):
        if oracle.decide(point, label, fixed, Bound(delta, space.total_weight)):
            assert exact <= delta * space.total_weight


def test_single_class_forest() -> None:
    from kcxai import Leaf, Split

    space = FeatureSpace([Feature.categorical("y", [0, 1, 2])])
    t = DecisionTree(space, ["only"], Split("y", {0: Leaf("only"), 1: Leaf("only"), 2: Leaf("only")}))
    for forest in (RandomForest(space, ["only"], [t, t], voting="hard"),
                   RandomForest(space, ["only"], [t], voting="soft", leaf_scores=[{lf: [0.5] for lf in t.leaves}])):
        assert_same(forest, np.array([[0], [1], [2]]))


@SETTINGS
@given(st.one_of(linear_models(), naive_bayes_models()), st.integers(0, 9))
def test_additive_score_models(model: Any, seed: int) -> None:
    assert_same(model, random_points(model.space, 200, seed))


@settings(max_examples=30, derandomize=True, deadline=None)
@given(st.data())
def test_linear_totals_past_int64(data: Any) -> None:
    """Weights whose scaled sums overflow int64 (split into limbs) and ties at one unit of the scale."""
    from kcxai.models import LinearClassifier

    space = data.draw(feature_spaces(max_features=4))
    k = data.draw(st.integers(2, 3))
    num = st.sampled_from([0, 1, -1, Fraction(1, 3 ** 41), -Fraction(1, 3 ** 41), Fraction(2, 7 ** 30)])
    weights = [[[data.draw(num) for _ in range(f.size)] for _ in range(k)] for f in space.features]
    model = LinearClassifier(space, _classes(data.draw, k), weights, [data.draw(num) for _ in range(k)])
    assert_same(model, random_points(space, 200, data.draw(st.integers(0, 9))))


@settings(max_examples=10, derandomize=True, deadline=None)
@given(st.one_of(trees(), forests(), boosted_models(), linear_models()))
def test_no_points(model: Any) -> None:
    empty = np.zeros((0, model.space.n_features), dtype=np.int64)
    assert model.predict_points(empty).shape == (0,)
    if isinstance(model, DecisionTree):
        assert model.router.leaves_by_node(empty).shape == (0,)
