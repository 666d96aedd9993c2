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
from kcxai.models._binary_tree import _binary_chains, _binary_two_way, _chain
from kcxai.models._predict_batch import TreeWalk
from tests._support.model_strategies import (_classes, _with_classes, any_model, forests, linear_models,
    naive_bayes_models)
from tests._support.reference import error as brute_error
from tests._support.strategies import feature_spaces, instance_of, points, trees

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


def walks_of(model: Any) -> list[TreeWalk]:
    """The model's trees walked with their tests packed in one int64 and as three arrays."""
    trees = [model] if isinstance(model, DecisionTree) else list(model.trees)
    binaries = [t.router.binary for t in trees]
    return [TreeWalk(binaries), TreeWalk(binaries, pack=False)]


def assert_walks_reach_the_leaves(model: Any, pts: np.ndarray) -> None:
    """Both walks reach, in every tree, the leaf the point-wise walk reaches."""
    trees = [model] if isinstance(model, DecisionTree) else list(model.trees)
    want = [[t._leaf_of(tuple(p)) for p in pts.tolist()] for t in trees]
    for walk in walks_of(model):
        assert walk.node[walk.slots(pts)].tolist() == want


@pytest.mark.parametrize("size", [3, 64, 65, 130, 5000])
def test_large_domains(size: int) -> None:
    """Masks narrower and wider than a machine word: intervals (threshold tests, one value of a one-hot
    column), their complements and arbitrary groups of values (bitmaps), at the root and deeper."""
    from kcxai import Leaf, Split

    space = FeatureSpace([Feature.categorical("big", list(range(size))), Feature.categorical("small", [0, 1, 2])])

    @settings(max_examples=15, derandomize=True, deadline=None)
    @given(st.integers(0, 2 ** 32 - 1), st.integers(1, size - 1), st.integers(0, size - 1), st.integers(0, 9))
    def check(group_seed: int, cut: int, one: int, seed: int) -> None:
        groups = np.random.default_rng(group_seed).integers(0, 4, size=size).tolist()
        inner = Split("big", ((tuple(range(cut)), Leaf("b")), (tuple(range(cut, size)), Leaf("c"))))  # a threshold
        hot = Split("big", ((tuple(v for v in range(size) if v != one), inner), ((one,), Leaf("a"))))  # one-hot
        used = sorted(set(groups))
        root = Split("big", tuple(
            (tuple(v for v in range(size) if groups[v] == g),
             hot if g == used[0] else Split("small", {0: Leaf("a"), 1: Leaf("b"), 2: Leaf("c" if g % 2 else "a")}))
            for g in used))
        tree = DecisionTree(space, ["a", "b", "c"], root)
        forest = RandomForest(space, ["a", "b", "c"], [tree, DecisionTree(space, ["a", "b", "c"], inner)])
        pts = random_points(space, 400, seed)
        # values around the word and byte boundaries, the threshold and the one-hot value
        pts[:10, 0] = [0, size - 1, min(63, size - 1), min(64, size - 1), cut - 1, cut, one, max(0, one - 1),
                       min(size - 1, one + 1), min(7, size - 1)]
        for model in (tree, forest):
            assert_same(model, pts)
            assert_walks_reach_the_leaves(model, pts)

    check()


@SETTINGS
@given(trees(max_depth=6), st.integers(0, 9))
def test_both_walks_and_both_layouts(tree: DecisionTree, seed: int) -> None:
    """Random trees (multi-way splits, values in no branch of a node they cannot reach, branches no point
    takes): the packed and unpacked walks reach the point-wise leaves, and so does the general layout
    for trees the two-way layout takes."""

    pts = random_points(tree.space, 200, seed)
    assert_walks_reach_the_leaves(tree, pts)
    a = tree.arrays
    general = TreeWalk([_binary_chains(a.feature, a.branches, a.root, tree.space.domain_sizes, {})])
    assert general.node[general.slots(pts)[0]].tolist() == [tree._leaf_of(tuple(p)) for p in pts.tolist()]


def test_masks_shared_across_domain_sizes() -> None:
    """An ensemble's mask cache is keyed by domain size too: the same mask object (a small int) makes
    different tests on features of different sizes, in both layouts. Mask 5 is {0, 2}: on 3 values the
    complement of the interval {1}, on 4 values a bitmap; mask 3 on 2 values holds every value."""
    space = FeatureSpace([Feature.categorical("a", [0, 1, 2]), Feature.categorical("b", [0, 1, 2, 3]),
                          Feature.categorical("c", [0, 1])])
    two_way = [DecisionTree._from_arrays(space, [0, 1], [f, -1, -1], [-1, 0, 1], [((5, 1), (rest, 2)), (), ()])
               for f, rest in ((0, 2), (1, 10))]
    chains = [DecisionTree._from_arrays(space, [0, 1], [f, -1, -1, -1], [-1, 0, 1, 0],
                                        [((5, 1), (rest, 2), (8, 3)), (), (), ()])
              for f, rest in ((0, 2), (1, 2))]  # on b, value 3 in the third branch
    chains.append(DecisionTree._from_arrays(space, [0, 1], [2, -1, -1, -1], [-1, 0, 1, 0],
                                            [((3, 1), (4, 2), (8, 3)), (), (), ()]))
    assert two_way[0].arrays.branches[0][0][0] is two_way[1].arrays.branches[0][0][0]
    pts = np.array([[a, b, c] for a in range(3) for b in range(4) for c in range(2)])
    for members in (two_way, chains, two_way + chains, chains + two_way):
        forest = RandomForest(space, [0, 1], members, voting="hard")
        assert_same(forest, pts)
        assert_walks_reach_the_leaves(forest, pts)


@st.composite
def node_branches(draw: Any) -> tuple[list[tuple[int, int]], int, int]:
    """A node's branches over ``size`` values: a partition of the values that reach it (``reach``) into
    groups, plus values that do not reach it in no branch, in the first or in an extra one."""
    size = draw(st.integers(2, 12))
    reach = draw(st.integers(1, (1 << size) - 1))
    vals = [v for v in range(size) if reach >> v & 1]
    groups = draw(st.lists(st.integers(0, 4), min_size=len(vals), max_size=len(vals)))
    masks = [sum(1 << v for v, g in zip(vals, groups) if g == k) for k in sorted(set(groups))]
    other = ((1 << size) - 1) & ~reach
    where = draw(st.sampled_from(["none", "first", "extra", "scattered"]))
    if other and where == "first":
        masks[0] |= other
    elif other and where == "extra":
        masks.insert(draw(st.integers(0, len(masks))), other)
    elif other and where == "scattered":
        masks = [m | (other if draw(st.booleans()) else 0) for m in masks]
    return [(m, 100 + k) for k, m in enumerate(masks)], size, reach


@settings(max_examples=300, derandomize=True, deadline=None)
@given(node_branches())
def test_chain_routes_every_value_as_the_first_branch_holding_it(case: Any) -> None:
    """A node's chain of binary tests (intervals, complements, values of earlier branches added, bitmaps)
    sends every value that reaches the node to the child of the first branch holding it."""

    branches, size, reach = case
    tests, default = _chain(branches, size)
    for v in range(size):
        if not reach >> v & 1:
            continue
        want = next(c for m, c in branches if m >> v & 1)
        got = default
        for (lo, width, bitmap), swap, child in tests:
            inside = bool(bitmap[v >> 3] >> (v & 7) & 1) if bitmap is not None else lo <= v < lo + width
            if inside != swap:
                got = child
                break
        assert got == want


@settings(max_examples=10, derandomize=True, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([2, 3]))
def test_deep_sklearn_forests_on_wide_domains(seed: int, n_classes: int) -> None:
    """Unbounded-depth scikit-learn forests and boosted trees on features with thousands of values (the
    trees are over 10 levels deep): predictions equal predict_point, for both walks."""
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier


    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=600), rng.integers(0, 3, 600), rng.normal(size=600).round(3)])
    y = (X[:, 0] + X[:, 2] + rng.normal(scale=0.8, size=600) > 0).astype(int) + (
        (X[:, 1] == 2) if n_classes == 3 else 0)
    for clf in (RandomForestClassifier(n_estimators=4, random_state=0), ExtraTreesClassifier(n_estimators=3,
                                                                                           random_state=0)):
        model = kcxai.from_sklearn(clf.fit(X, y))
        assert max(t.depth for t in model.trees) > 10
        pts = random_points(model.space, 300, seed % 7)
        pts[:150] = [model.space.encode(x) for x in X[:150]]
        assert_same(model, pts)
        assert_walks_reach_the_leaves(model, pts)
        a = model.trees[0].arrays
        assert _binary_two_way(a.feature, a.branches, a.root, model.space.domain_sizes, {}) is not None


def test_deep_chain() -> None:
    """A 300-deep chain: exact, walked test by test (and the pairs leave it at different depths)."""
    from kcxai import Leaf, Split

    n = 300
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1]) for i in range(n)])
    node: Any = Leaf(1)
    for i in reversed(range(n)):
        node = Split(f"x{i}", {0: Leaf(0), 1: node})
    tree = DecisionTree(space, [0, 1], node)
    pts = random_points(space, 100, 0)
    pts[:3] = 1
    pts[3:6, :250] = 1
    assert_same(tree, pts)
    assert_walks_reach_the_leaves(tree, pts)


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
    from kcxai.engines.sampling import clopper_pearson
    from kcxai.arithmetic import Bound

    point = data.draw(points(model.space))
    label = model.predict_point(point)
    fixed = frozenset(data.draw(st.sets(st.integers(0, model.space.n_features - 1))))
    c = kcxai.compile_model(model, "sampling", seed=data.draw(st.integers(0, 5)), initial_samples=128,
                            max_samples=4096, estimate_samples=4096, confidence=1 - 1e-6)
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
    for walk in walks_of(model) if isinstance(model, (DecisionTree, RandomForest, BoostedTrees)) else ():
        assert walk.slots(empty).shape == (walk.n_trees, 0)
