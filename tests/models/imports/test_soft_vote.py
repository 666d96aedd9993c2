"""The soft vote of imported scikit-learn forests: each leaf's probabilities are the exact ratios of its training
counts, so exact ties stay ties (scikit-learn's float64 sums of 1/3 + 2/3 and 1/6 + 5/6 tie; the floats taken
exactly differ by 2**-55), and predictions equal scikit-learn's except where its float sums break an exact tie.

The reference counts here come from the training rows themselves (``est.apply`` on them, no bootstrap), not from
``tree_.value``: they check the import's reading of the floats, not repeat it."""

from __future__ import annotations

import json
import os
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

from kcxai.data import encode_rows
from kcxai.models import RandomForest, from_pipeline, from_sklearn, model_from_dict
from kcxai.models.imports._sklearn import leaf_probabilities
from tests._support.pipelines import TREE_FAMILIES, frame, one_thread  # noqa: F401 - one_thread: autouse fixture

U = Fraction(1, 2**53)


def _argmax_first(scores: list[Fraction]) -> int:
    return max(range(len(scores)), key=lambda c: (scores[c], -c))


def _count_sums(clf: Any, X: np.ndarray, y: np.ndarray, points: np.ndarray) -> list[list[Fraction]]:
    """Per point, per class, the sum over trees of the training rows' class share in the point's leaf (a forest
    fitted without bootstrap and without weights: every tree sees every training row once)."""
    k = len(clf.classes_)
    yi = np.searchsorted(clf.classes_, y)
    sums = [[Fraction(0)] * k for _ in points]
    for est in clf.estimators_:
        train, at = est.apply(X.astype(np.float32)), est.apply(points.astype(np.float32))
        for i, leaf in enumerate(at.tolist()):
            inside = yi[train == leaf]
            for c in range(k):
                sums[i][c] += Fraction(int(np.count_nonzero(inside == c)), len(inside))
    return sums


# -- the case that failed (hypothesis seed 3052 of the pipeline tests) ---------------------------------------

def _seed_3052() -> tuple[Any, pd.DataFrame]:
    df, y = frame(3052, n=200)
    ct = ColumnTransformer([("cat", OneHotEncoder(drop="first", sparse_output=False), ["sex", "work"]),
                            ("num", "passthrough", ["age", "hours"])], remainder="passthrough")
    pipe = make_pipeline(ct, TREE_FAMILIES["forest"]()).fit(df, y)
    row = pd.DataFrame([{"sex": "Male", "age": 44.5, "work": "none", "hours": 30.4, "edu": 4.0}])
    return pipe, row


def test_seed_3052_an_exact_tie_of_float_sums_goes_to_the_first_class() -> None:
    pipe, row = _seed_3052()
    forest, Xt = pipe[-1], pipe[0].transform(row)
    per_tree = [est.predict_proba(Xt)[0] for est in forest.estimators_]
    # the case still holds: scikit-learn's float sums tie, the floats taken exactly do not
    floats = np.sum(per_tree, axis=0)
    exact_floats = [sum((Fraction(float(p[c])) for p in per_tree), Fraction(0)) for c in range(3)]
    assert list(forest.classes_) == ["<=50K", ">50K", "other"]
    assert floats[1] == floats[2] == 1.5 and exact_floats[1] != exact_floats[2]
    assert list(pipe.predict(row)) == [">50K"]
    imported = from_pipeline(pipe)
    x = imported.reader.read(row).instances[0]
    assert imported.model.predict(x) == ">50K"
    assert imported.model.scores_point(imported.model.space.encode(x)) == (Fraction(1), Fraction(3, 2), Fraction(3, 2))
    # the same forest alone, over the encoded columns
    alone = from_sklearn(forest)
    point = encode_rows(alone.space, Xt)[0].tolist()
    assert alone.predict_point(point) == 1 and alone.scores_point(point)[1:] == (Fraction(3, 2),) * 2


def test_seed_625_scikit_learns_float_sums_break_an_exact_tie() -> None:
    """The residual: the leaves 2/3 : 0 : 1/3, 1 : 0 : 0, 0 : 0 : 1 and 1/3 : 0 : 2/3 tie exactly (2 = 2);
    scikit-learn adds them tree by tree in float64 and gets 1.9999999999999998 against 2.0. kcxai, exact,
    gives the tie to the first class; so did the floats taken exactly."""
    df, y = frame(625, n=200, missing=0.1)
    numbers = make_pipeline(SimpleImputer(strategy="median"), "passthrough")
    cats = make_pipeline(SimpleImputer(strategy="most_frequent"), OrdinalEncoder())
    ct = ColumnTransformer([("cat", cats, ["sex", "work"]), ("num", numbers, ["age", "hours"])],
                           remainder="passthrough")
    pipe = make_pipeline(ct, TREE_FAMILIES["forest"]()).fit(df, y)
    row = pd.DataFrame([{"sex": "Female", "age": 66.0, "work": "private", "hours": 27.9, "edu": 2.0}])
    per_tree = [est.predict_proba(pipe[0].transform(row))[0] for est in pipe[-1].estimators_]
    total = np.zeros(3)
    for p in per_tree:  # as ForestClassifier.predict_proba accumulates
        total += p
    assert total[0] < total[2] and total[0] == np.nextafter(2.0, 0) and list(pipe.predict(row)) == ["other"]
    imported = from_pipeline(pipe)
    model = imported.model
    point = model.space.encode(imported.reader.read(row).instances[0])
    assert model.scores_point(point) == (2, 0, 2) and model.classes[model.predict_point(point)] == "<=50K"
    assert model.float_margin is not None and model.float_margin > 0


# -- leaf probabilities ----------------------------------------------------------------------------------------

def test_leaf_probabilities_are_count_ratios_or_the_floats() -> None:
    X = np.array([[0], [0], [0], [1], [1], [1], [1], [1], [1]], dtype=float)
    y = np.array([0, 0, 1, 0, 1, 1, 1, 1, 1])
    clf = RandomForestClassifier(n_estimators=1, max_depth=1, bootstrap=False, random_state=0).fit(X, y)
    rows = [r for r in leaf_probabilities([clf.estimators_[0].tree_], 2)[0] if r is not None]
    assert sorted(rows) == [(Fraction(1, 6), Fraction(5, 6)), (Fraction(2, 3), Fraction(1, 3))]
    # the lcm of the kept denominators stays at most max_scale, smallest first: 3 kept, 6 gives its floats
    rows = [r for r in leaf_probabilities([clf.estimators_[0].tree_], 2, max_scale=3)[0] if r is not None]
    assert sorted(rows) == [(1 / 6, 5 / 6), (Fraction(2, 3), Fraction(1, 3))]
    assert isinstance(rows[0][0], float) != isinstance(rows[1][0], float)
    # integer sample weights: still the ratios of the weighted counts
    w = np.array([1, 2, 1, 1, 1, 1, 1, 1, 3])
    clf.fit(X, y, sample_weight=w)
    rows = [r for r in leaf_probabilities([clf.estimators_[0].tree_], 2)[0] if r is not None]
    assert sorted(rows) == [(Fraction(1, 8), Fraction(7, 8)), (Fraction(3, 4), Fraction(1, 4))]
    # fractional weights: the leaf's floats, each taken as the rational it stores
    clf.fit(X, y, sample_weight=w * 0.1)
    tree = clf.estimators_[0].tree_
    rows = [r for r in leaf_probabilities([tree], 2)[0] if r is not None]
    leaves = np.flatnonzero(tree.children_left == -1)
    assert sorted(rows) == sorted(tuple(float(v) for v in tree.value[leaf, 0]) for leaf in leaves)
    model = from_sklearn(clf)
    assert model.weights_from_floats and "keep those floats" in model.exactness


def test_float_margin_exactness_and_json() -> None:
    X, y = np.array([[0], [1], [2], [3]] * 3, dtype=float), np.array([0, 1, 1, 0] * 3)
    clf = RandomForestClassifier(n_estimators=7, max_depth=2, random_state=0).fit(X, y)
    model = from_sklearn(clf)
    assert model.float_sums and not model.weights_from_floats
    assert model.float_margin == 8 * U / (1 - 8 * U) * 7  # every leaf's row sums to 1
    assert model.exactness.startswith("exact rationals: each leaf's class probabilities are the ratios")
    again = model_from_dict(json.loads(json.dumps(model.to_dict())))
    assert isinstance(again, RandomForest) and again.float_sums and again.float_margin == model.float_margin
    assert model.with_distribution(None).float_margin == model.float_margin
    assert model.rounded(Fraction(1, 4)).float_margin is None
    assert RandomForest.from_sklearn(clf, voting="hard").float_margin is None
    built = RandomForest(model.space, model.classes, model.trees, voting="soft",
                         leaf_scores=[model.leaf_scores(t) for t in range(model.n_trees)])
    assert not built.float_sums and built.float_margin is None and built.exactness.startswith("exact: all leaf")


# -- random small forests against scikit-learn ---------------------------------------------------------------

@st.composite
def _small_forests(draw: Any) -> tuple[Any, np.ndarray, np.ndarray]:
    """A forest fitted without bootstrap on a few rows of small integer features (leaves of 1-12 rows: the
    probabilities have small denominators, so exact ties are frequent)."""
    n_features, n_classes, top = draw(st.integers(1, 4)), draw(st.integers(2, 3)), draw(st.integers(1, 3))
    n = draw(st.integers(3, 12))
    X = np.array(draw(st.lists(st.lists(st.integers(0, top), min_size=n_features, max_size=n_features),
                               min_size=n, max_size=n)), dtype=float)
    y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
    cls = draw(st.sampled_from([RandomForestClassifier, ExtraTreesClassifier]))
    clf = cls(n_estimators=draw(st.integers(2, 8)), max_depth=draw(st.sampled_from([1, 2, 3])), bootstrap=False,
              max_features=draw(st.sampled_from([1, None])), random_state=draw(st.integers(0, 2**16)))
    return clf.fit(X, y), X, y


def _tie() -> tuple[Any, np.ndarray, np.ndarray]:
    """Three stumps on binary features whose leaves at ``(1, 1, 1)`` hold 1/6 : 5/6, 1 : 0 and 1/3 : 2/3, the
    shape of seed 3052: the class sums tie at 3/2 (scikit-learn's float sums too), the floats taken exactly
    do not (class 0 is 2**-55 behind)."""
    X = np.array([[1, 1, 1], [1, 1, 0], [1, 1, 0], [0, 1, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]],
                 dtype=float)
    y = np.array([0, 1, 1, 1, 1, 1, 0, 0, 1])
    clf = RandomForestClassifier(n_estimators=3, max_depth=1, bootstrap=False, max_features=1, random_state=2)
    return clf.fit(X, y), X, y


def test_three_stumps_whose_float_sums_tie() -> None:
    clf, _, _ = _tie()
    point = np.array([[1.0, 1.0, 1.0]])
    per_tree = [est.predict_proba(point)[0] for est in clf.estimators_]
    assert sorted(tuple(p) for p in per_tree) == [(1 / 6, 5 / 6), (1 / 3, 2 / 3), (1.0, 0.0)]
    assert sum((Fraction(float(p[0])) for p in per_tree), Fraction(0)) - sum(
        (Fraction(float(p[1])) for p in per_tree), Fraction(0)) == -Fraction(1, 2**55)
    assert clf.predict(point).tolist() == [0]
    model = from_sklearn(clf)
    x = encode_rows(model.space, point)
    assert model.predict_points(x).tolist() == [0] and model.scores_point(x[0].tolist()) == (Fraction(3, 2),) * 2


#: Random forests per run: 40 take about 10 s; the random part alone found a planted Fraction(float) reading
#: with 300 (``KCXAI_FUZZ_EXAMPLES=300``), not always with 40, which the explicit example catches every time.
EXAMPLES = int(os.environ.get("KCXAI_FUZZ_EXAMPLES", "40"))


@settings(max_examples=EXAMPLES)
@example(forest=_tie())
@given(forest=_small_forests())
def test_small_forests_predict_the_exact_count_vote_and_like_sklearn(forest: Any) -> None:
    clf, X, y = forest
    grid = np.array(np.meshgrid(*[np.arange(0, 4)] * X.shape[1])).reshape(X.shape[1], -1).T.astype(float)
    model = from_sklearn(clf)
    got = model.predict_points(encode_rows(model.space, grid))
    want = np.searchsorted(clf.classes_, clf.predict(grid))
    sums = _count_sums(clf, X, y, grid)
    assert got.tolist() == [_argmax_first(s) for s in sums]  # the exact vote of the training counts
    margin = model.float_margin
    assert margin is not None
    for i in np.flatnonzero(got != want).tolist():
        s = sums[i]  # scikit-learn differs only where its float sums break an exact tie
        assert s[got[i]] == s[want[i]], (grid[i], s, clf.predict_proba(grid[i:i + 1]))
        assert abs(s[got[i]] - s[want[i]]) <= margin
