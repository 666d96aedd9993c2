"""Random forests: hard and soft voting, exact compilation, sklearn import."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given

import kcxai
from tests._support import reference as ref
from kcxai import DecisionTree, Feature, FeatureSpace, Leaf, Split
from kcxai.compilers._truth_table import TruthTableBuilder
from kcxai.models import RandomForest, from_sklearn
from kcxai.compilers._threshold import class_functions
from tests._support.model_strategies import forests


def _votes(forest, point):
    """Independent reading: each tree's prediction (hard) or leaf scores (soft), summed exactly."""
    k = len(forest.classes)
    total = [Fraction(0)] * k
    for t, tree in enumerate(forest.trees):
        if forest.voting == "hard":
            total[tree.predict_point(point)] += 1
        else:
            row = forest.leaf_scores(t)[tree.path_of(point).leaf]
            total = [a + Fraction(b) for a, b in zip(total, row)]
    return total


@given(forests(distributions=("uniform", "exact", "float")))
def test_forest_votes_and_builds_a_partition(forest):
    for p in ref.all_points(forest.space):
        v = _votes(forest, p)
        assert forest.predict_point(p) == v.index(max(v))
        assert list(forest.scores_point(p)) == v
    b = TruthTableBuilder(forest.space)
    b.check_partition(class_functions(forest, b), forest.predict_point)


@given(forests())
def test_json_round_trip_and_with_distribution(forest):
    again = kcxai.models.model_from_dict(forest.to_dict())
    assert again.to_dict() == forest.to_dict()
    uni = forest.with_distribution(None)
    assert uni.space.is_uniform and all(t.space == uni.space for t in uni.trees)
    for p in ref.all_points(forest.space):
        assert again.predict_point(p) == uni.predict_point(p) == forest.predict_point(p)


def test_hard_vote_ties_go_to_the_first_class():
    space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b")])
    trees = [DecisionTree(space, ["x", "y"], Split(n, {0: Leaf("x"), 1: Leaf("y")})) for n in ("a", "b")]
    f = RandomForest(space, ["x", "y"], trees)
    assert [f.predict([a, b]) for a, b in itertools.product([0, 1], repeat=2)] == ["x", "x", "x", "y"]
    soft = RandomForest(space, ["x", "y"], trees, voting="soft",
                        leaf_scores=[{p.leaf: ([0.25, 0.75] if trees[0].classes[p.label] == "y" else [1, 0])
                                      for p in t.paths} for t in trees])
    # a=1, b=0: 0.25 + 1 against 0.75 + 0 -> x; a=0,b=1 likewise
    assert [soft.predict([a, b]) for a, b in itertools.product([0, 1], repeat=2)] == ["x", "x", "x", "y"]
    assert soft.weights_from_floats and soft.n_trees == 2 and "soft voting" in repr(soft)


def test_forest_input_errors():
    space = FeatureSpace([Feature.categorical("a", [0, 1])])
    other = FeatureSpace([Feature.categorical("b", [0, 1])])
    t = DecisionTree(space, [0, 1], Split("a", {0: Leaf(0), 1: Leaf(1)}))
    with pytest.raises(kcxai.InvalidInputError, match="'voting' must be one of"):
        RandomForest(space, [0, 1], [t], voting="majority")
    with pytest.raises(kcxai.InvalidTypeError, match="non-empty sequence of DecisionTree"):
        RandomForest(space, [0, 1], [])
    with pytest.raises(kcxai.InvalidInputError, match=r"'trees\[0\]' is over other features"):
        RandomForest(other, [0, 1], [t])
    with pytest.raises(kcxai.InvalidInputError, match=r"'trees\[0\]' has classes \[0, 1\]"):
        RandomForest(space, [1, 0], [t])
    with pytest.raises(kcxai.InvalidInputError, match="needs 'leaf_scores'"):
        RandomForest(space, [0, 1], [t], voting="soft")
    with pytest.raises(kcxai.InvalidInputError, match="has no scores for leaf node"):
        RandomForest(space, [0, 1], [t], voting="soft", leaf_scores=[{}])
    with pytest.raises(kcxai.InvalidInputError, match="only used with voting='soft'"):
        RandomForest(space, [0, 1], [t], leaf_scores=[{}])
    with pytest.raises(kcxai.InvalidInputError, match="'tree' must be a tree index"):
        RandomForest(space, [0, 1], [t]).leaf_scores(3)


# -- scikit-learn --------------------------------------------------------------

def _hard_votes(est, X):
    """sklearn's trees' predictions, counted; ties to the first class (np.argmax)."""
    k = len(est.classes_)
    counts = np.zeros((len(X), k), dtype=int)
    for e in est.estimators_:
        counts[np.arange(len(X)), e.predict(X).astype(int)] += 1
    return est.classes_[np.argmax(counts, axis=1)], counts


def _sample(space, limit=10_000, seed=0):
    rng = np.random.default_rng(seed)
    if space.size <= limit:
        pts = list(itertools.product(*(range(s) for s in space.domain_sizes)))
    else:
        pts = [tuple(int(rng.integers(0, s)) for s in space.domain_sizes) for _ in range(limit)]
    return pts


def _value_of(feature, k):
    if not feature.is_numeric:
        return feature.values[k]
    iv = feature.values[k]
    if math.isinf(iv.low) and math.isinf(iv.high):
        return 0.0
    if math.isinf(iv.low):
        return iv.high - 1.0
    if math.isinf(iv.high):
        return iv.low + 1.0
    return (iv.low + iv.high) / 2


@pytest.mark.parametrize("n_trees, depth, n_classes, numeric", [
    (3, 3, 2, False), (5, 4, 3, False), (10, 5, 2, True), (10, 5, 3, True)])
def test_random_forest_agrees_with_sklearn(n_trees, depth, n_classes, numeric):
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(n_trees * depth)
    n_features = 6
    X = rng.integers(0, 4, size=(500, n_features)).astype(float)
    if numeric:
        X += rng.normal(scale=0.3, size=X.shape)
    y = (X[:, 0] + X[:, 1] * X[:, 2] / 3 + rng.normal(size=500)).astype(int) % n_classes
    est = RandomForestClassifier(n_estimators=n_trees, max_depth=depth, random_state=0).fit(X, y)
    domains = None if numeric else [[0.0, 1.0, 2.0, 3.0]] * n_features
    soft = from_sklearn(est, domains=domains)
    hard = RandomForest.from_sklearn(est, domains=domains, voting="hard")
    assert isinstance(soft, RandomForest) and soft.voting == "soft" and soft.n_trees == n_trees
    pts = _sample(soft.space)
    values = np.array([[_value_of(f, k) for f, k in zip(soft.space.features, p)] for p in pts])
    theirs = est.predict(values)
    ours = np.array([soft.classes[soft.predict_point(p)] for p in pts])
    proba = est.predict_proba(values)
    for r in np.flatnonzero(ours != theirs):  # only where sklearn's mean probabilities nearly tie
        top = np.sort(proba[r])[-2:]
        assert top[1] - top[0] <= 1e-12, (values[r], proba[r])
    hard_ref, _ = _hard_votes(est, values)
    assert [hard.classes[hard.predict_point(p)] for p in pts] == list(hard_ref)


def test_extra_trees_and_errors():
    from sklearn.ensemble import ExtraTreesClassifier, GradientBoostingClassifier, RandomForestClassifier

    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(200, 4))
    y = (X[:, 0] > X[:, 1]).astype(int)
    est = ExtraTreesClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    f = from_sklearn(est, domains=[[0, 1, 2]] * 4, feature_names=list("abcd"))
    grid = np.array(list(itertools.product(range(3), repeat=4)))
    assert f.predict_many(grid) == list(est.predict(grid))
    assert f.space.names == ("a", "b", "c", "d")
    with pytest.raises(kcxai.InvalidInputError, match="'voting' must be one of"):
        RandomForest.from_sklearn(est, voting="mean")
    with pytest.raises(kcxai.InvalidInputError, match="not fitted"):
        RandomForest.from_sklearn(RandomForestClassifier())
    with pytest.raises(kcxai.InvalidTypeError, match="RandomForestClassifier or ExtraTreesClassifier"):
        RandomForest.from_sklearn(GradientBoostingClassifier().fit(X, y))


@given(forests().filter(lambda f: f.voting == "soft"))
def test_rounded_soft_forest_differs_only_within_the_margin(forest):
    r = forest.rounded(Fraction(1, 4))
    q, margin = r.rounding
    assert q == Fraction(1, 4) and "rounded" in r.exactness
    for p in ref.all_points(forest.space):
        if r.predict_point(p) != forest.predict_point(p):
            top = sorted(forest.scores_point(p))[-2:]
            assert top[1] - top[0] <= margin
    b = TruthTableBuilder(forest.space)
    b.check_partition(class_functions(r, b), r.predict_point)
    again = kcxai.models.model_from_dict(r.to_dict())
    assert again.rounding == r.rounding and again.to_dict() == r.to_dict()
    assert r.with_distribution(None).rounding == r.rounding


def test_hard_forest_cannot_be_rounded():
    space = FeatureSpace([Feature.categorical("a", [0, 1])])
    t = DecisionTree(space, [0, 1], Split("a", {0: Leaf(0), 1: Leaf(1)}))
    f = RandomForest(space, [0, 1], [t])
    assert f.exactness.startswith("exact: votes")
    with pytest.raises(kcxai.InvalidInputError, match="hard votes are already integers"):
        f.rounded(0.1)
