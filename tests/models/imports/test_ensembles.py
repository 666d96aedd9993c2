"""Importers of forests and boosted trees: predictions and margins equal the source library's."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)

import kcxai
from kcxai import InvalidInputError, InvalidTypeError
from kcxai.engines._ensemble_cnf import EnsembleCnf
from kcxai.models import BoostedTrees, RandomForest, from_sklearn, model_from_dict


def _data(n_classes: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X, y = make_classification(n_samples=500, n_features=5, n_informative=4, n_redundant=0, n_classes=n_classes,
                               random_state=seed)
    X = np.round(X, 2)
    return X[:350], y[:350], X[350:]


def _at_thresholds(model: Any, X: np.ndarray) -> np.ndarray:
    """Test points whose values sit exactly on the model's cut points (and one float32 step below)."""
    rows = []
    rng = np.random.default_rng(0)
    for i, f in enumerate(model.space.features):
        for t in (f.thresholds or ())[:40]:
            for v in (t, float(np.nextafter(np.float32(t), np.float32(-np.inf))), float(np.nextafter(t, np.inf))):
                row = X[rng.integers(len(X))].copy()
                row[i] = v
                rows.append(row)
    return np.vstack([X, *rows]) if rows else X


def _library_scores(clf: Any, X: np.ndarray) -> np.ndarray:
    if hasattr(clf, "get_booster"):
        return np.asarray(clf.predict(X, output_margin=True), dtype=np.float64)
    if hasattr(clf, "booster_"):
        return np.asarray(clf.predict(X, raw_score=True), dtype=np.float64)
    return np.asarray(clf.decision_function(X), dtype=np.float64)


def _check(clf: Any, X: np.ndarray, *, tol: float) -> Any:
    model = from_sklearn(clf)
    X = _at_thresholds(model, X)
    ours = np.asarray(model.predict_many(X))
    assert (ours == clf.predict(X)).all()
    if isinstance(model, BoostedTrees):
        ref = _library_scores(clf, X).reshape(len(X), -1)
        got = np.array([[float(s) for s in model.scores(x)] for x in X])
        assert np.abs(ref - got).max() <= tol
    again = model_from_dict(model.to_dict())
    assert type(again) is type(model) and again.predict_many(X[:60]) == model.predict_many(X[:60])
    return model


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("cls", [RandomForestClassifier, ExtraTreesClassifier])
def test_forests_predict_as_sklearn(cls: Any, n_classes: int) -> None:
    Xtr, ytr, Xte = _data(n_classes)
    clf = cls(n_estimators=30, random_state=0).fit(Xtr, ytr)
    model = _check(clf, Xte, tol=0)
    assert isinstance(model, RandomForest) and model.n_trees == 30


@pytest.mark.parametrize("n_classes", [2, 3])
def test_gradient_boosting(n_classes: int) -> None:
    Xtr, ytr, Xte = _data(n_classes)
    for init in (None, "zero"):
        clf = GradientBoostingClassifier(n_estimators=25, max_depth=3, init=init, random_state=0).fit(Xtr, ytr)
        model = _check(clf, Xte, tol=1e-12)
        assert model.n_trees == 25 * (1 if n_classes == 2 else n_classes)
        assert model.ties == ("last" if n_classes == 2 else "first")


@pytest.mark.parametrize("n_classes", [2, 3])
def test_hist_gradient_boosting(n_classes: int) -> None:
    Xtr, ytr, Xte = _data(n_classes)
    clf = HistGradientBoostingClassifier(max_iter=25, random_state=0).fit(Xtr, ytr)
    _check(clf, Xte, tol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_xgboost(n_classes: int) -> None:
    xgb = pytest.importorskip("xgboost")
    Xtr, ytr, Xte = _data(n_classes)
    clf = xgb.XGBClassifier(n_estimators=25, max_depth=4).fit(Xtr, ytr)
    model = _check(clf, Xte, tol=1e-5)  # XGBoost sums float32 leaves; ours are exact
    assert model.n_trees == 25 * (1 if n_classes == 2 else n_classes)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_lightgbm(n_classes: int) -> None:
    lgb = pytest.importorskip("lightgbm")
    Xtr, ytr, Xte = _data(n_classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = lgb.LGBMClassifier(n_estimators=25, verbose=-1).fit(Xtr, ytr)
        _check(clf, Xte, tol=1e-12)


def test_explicit_domains_and_float32_thresholds() -> None:
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(3)
    X = rng.integers(0, 6, size=(300, 3)).astype(float)
    y = (X[:, 0] + X[:, 1] > 5).astype(int)
    clf = xgb.XGBClassifier(n_estimators=10, max_depth=3).fit(X, y)
    model = from_sklearn(clf, domains=[list(range(6))] * 3)
    grid = np.array([[a, b, c] for a in range(6) for b in range(6) for c in range(6)], dtype=float)
    assert (np.asarray(model.predict_many(grid)) == clf.predict(grid)).all()
    # ``x < t`` in float32: the imported cut is the float32 just below t
    cuts = from_sklearn(clf).space.features[0].thresholds
    assert all(np.float32(t) == t for t in cuts)


def test_sat_explanations_of_imported_models() -> None:
    Xtr, ytr, Xte = _data(3)
    clf = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(Xtr, ytr)
    model = from_sklearn(clf)
    cnf = EnsembleCnf(model)
    for x in Xte[:5]:
        e = kcxai.ensemble_axp(cnf, x)
        assert kcxai.is_ensemble_axp(cnf, x, e.features)
        # a counterexample to dropping any feature: the solver's point really changes the class
        for i in e.features:
            assert cnf.changes(model.space.encode(x), model.predict_point(model.space.encode(x)),
                               set(e.features) - {i})
            assert model.predict_point(cnf.model_point()) != model.predict_point(model.space.encode(x))
    cnf.close()


def test_unsupported_estimators_are_named() -> None:
    Xtr, ytr, _ = _data(2)
    with pytest.raises(InvalidTypeError, match="GradientBoostingRegressor.*Supported estimators"):
        from_sklearn(GradientBoostingRegressor(n_estimators=2).fit(Xtr, ytr.astype(float)))
    clf = GradientBoostingClassifier(n_estimators=2, init=RandomForestClassifier(n_estimators=2)).fit(Xtr, ytr)
    with pytest.raises(InvalidInputError, match="init estimator RandomForestClassifier"):
        from_sklearn(clf)
    with pytest.raises(InvalidInputError, match="not fitted"):
        from_sklearn(HistGradientBoostingClassifier())
    cat = HistGradientBoostingClassifier(max_iter=3, categorical_features=[0]).fit(
        np.column_stack([np.abs(Xtr[:, 0] * 3).astype(int) % 4, Xtr[:, 1:]]), ytr)
    with pytest.raises(InvalidInputError, match="categorical"):
        from_sklearn(cat)


def test_unsupported_xgboost_objective() -> None:
    xgb = pytest.importorskip("xgboost")
    Xtr, ytr, _ = _data(2)
    with pytest.raises(InvalidTypeError,
                       match=r"does not support XGBRegressor\. Supported estimators: .*xgboost\.XGBClassifier"):
        from_sklearn(xgb.XGBRegressor(n_estimators=2).fit(Xtr, ytr))
    dart = xgb.XGBClassifier(n_estimators=2, booster="dart").fit(Xtr, ytr)
    with pytest.raises(InvalidInputError, match="booster 'dart'"):
        from_sklearn(dart)


def test_boosted_trees_bad_input() -> None:
    space = kcxai.FeatureSpace([kcxai.Feature.categorical("a", [0, 1])])
    tree = kcxai.DecisionTree(space, [0, 1, 2], kcxai.Split("a", {0: kcxai.Leaf(0), 1: kcxai.Leaf(0)}))
    with pytest.raises(InvalidInputError, match="'tree_class' is required"):
        BoostedTrees(space, [0, 1, 2], [tree], [{1: 1, 2: 0}])
    with pytest.raises(InvalidInputError, match="no value for leaf node 2"):
        BoostedTrees(space, [0, 1, 2], [tree], [{1: 1}], tree_class=[0])
    with pytest.raises(InvalidInputError, match="'ties'"):
        BoostedTrees(space, [0, 1, 2], [tree], [{1: 1, 2: 0}], tree_class=[0], ties="random")
    with pytest.raises(InvalidInputError, match="'init' must give 3"):
        BoostedTrees(space, [0, 1, 2], [tree], [{1: 1, 2: 0}], tree_class=[0], init=[1])
