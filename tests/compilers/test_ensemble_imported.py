"""Ensembles trained by their libraries, compiled by the "ensemble" construction, explained exactly.

Small scikit-learn forests (soft voting as imported, hard voting over the same trees), GradientBoosting,
HistGradientBoosting, XGBoost and LightGBM (two and three classes), trained on a few rounded columns so
that feature space can be enumerated; under the uniform distribution and under a product and a
mixture fitted to the training rows. ``min_idrs`` (delta = 0 and > 0), ``local_cdrs``, the smallest
IDRs and their enumeration through the compiled OBDD (and SDD) equal brute force's.
The random-model tests of the construction are in ``tests/test_compile_ensemble.py``.
"""

from __future__ import annotations

import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier, RandomForestClassifier

import kcxai
from tests._support import reference as ref
from kcxai.models import RandomForest, from_sklearn


def _data(n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(n_samples=300, n_features=4, n_informative=3, n_redundant=0, n_classes=n_classes,
                               n_clusters_per_class=1, random_state=n_classes)
    return np.clip(np.round(X), -2, 2), y  # at most 5 values a column: at most 5^4 points


def _fit(family: str, n_classes: int) -> tuple[Any, np.ndarray]:
    X, y = _data(n_classes)
    if family in ("rf-soft", "rf-hard"):
        clf: Any = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0)
    elif family == "gb":
        clf = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0)
    elif family == "hgb":
        clf = HistGradientBoostingClassifier(max_iter=3, max_depth=2, random_state=0)
    elif family == "xgb":
        xgb = pytest.importorskip("xgboost")
        clf = xgb.XGBClassifier(n_estimators=3, max_depth=2, random_state=0)
    else:
        lgb = pytest.importorskip("lightgbm")
        clf = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, min_child_samples=5, verbose=-1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    model = from_sklearn(clf, domains=[sorted(set(X[:, j])) for j in range(X.shape[1])])
    if family == "rf-hard":
        model = RandomForest(model.space, model.classes, model.trees, voting="hard")
    return model, X


FAMILIES = ["rf-soft", "rf-hard", "gb", "hgb", "xgb", "lgbm"]


@pytest.mark.parametrize("distribution", ["uniform", "product", "mixture"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("family", FAMILIES)
def test_exact_explanations_of_imported_ensembles_equal_brute_force(family, n_classes, distribution):
    model, X = _fit(family, n_classes)
    if distribution != "uniform":
        model = model.with_distribution(kcxai.fit_distribution(model, X, kind=distribution, n_components=2))
    language = "sdd" if (n_classes, distribution) == (3, "mixture") else "obdd"
    compiled = kcxai.compile_model(model, language)
    assert compiled.stats["construction"] == "ensemble"
    brute = kcxai.compile_model(model, "brute")
    points = ref.all_points(model.space)
    assert [compiled.oracle.predict_point(p) for p in points] == [model.predict_point(p) for p in points]
    rng = np.random.default_rng(0)
    for row in X[rng.choice(len(X), 2, replace=False)]:
        x = list(row)
        for delta in (Fraction(0), Fraction(1, 10)):
            e, b = kcxai.min_idrs(compiled, x, delta), kcxai.min_idrs(brute, x, delta)
            assert (e.features, e.error) == (b.features, b.error)
            assert e.error == ref.error(model, model.space.encode(x), set(e.features))
            got = {(s.kind, s.features) for s in kcxai.enumerate_idrs(compiled, x, delta)}  # relevant and dual
            assert got == {(s.kind, s.features) for s in kcxai.enumerate_idrs(brute, x, delta)}
            smallest = min(len(f) for kind, f in got if kind == "relevant")
            assert len(kcxai.smallest_idrs(compiled, x, delta).features) == smallest
        c, cb = kcxai.local_cdrs(compiled, x, Fraction(9, 10)), kcxai.local_cdrs(brute, x, Fraction(9, 10))
        assert (c.features, c.precision) == (cb.features, cb.precision)


def test_the_front_door_explains_a_compiled_pipeline_exactly():
    """``Explainer(pipeline)``: a gradient-boosted pipeline on breast_cancer (30 columns) compiles within the
    probe budget by the ensemble construction, and its exact answers equal the builder construction's."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    pipe = Pipeline([("scale", StandardScaler()),
                     ("model", GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0))])
    pipe.fit(X[:400], y[:400])
    explainer = kcxai.Explainer(pipe)
    assert explainer.language_ == "obdd" and explainer.compiled_.stats["construction"] == "ensemble"
    assert "within the probe budget" in explainer.language_reason_
    builder = kcxai.compile_model(explainer.model_, "obdd", construction="builder")
    rows = X[400:404]
    got = explainer.explain(rows, method="min_idrs", delta=Fraction(1, 20))
    for e, x in zip(got, explainer.instances(rows)):
        b = kcxai.min_idrs(builder, x, Fraction(1, 20))
        assert (e.language, e.approximate) == ("obdd", False)
        assert (e.features, e.error) == (b.features, b.error) and isinstance(e.error, Fraction)
