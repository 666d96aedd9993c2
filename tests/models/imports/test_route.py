"""One import for every door: ``from_sklearn(model, X_train)`` and ``from_pipeline(pipe, X_train)`` build the model
the Explainer builds, under the distribution it fits, for every family; without rows the model stays uniform
and says so; what the importers refuse (unseen categories, masks too large) is refused by name."""

from __future__ import annotations

import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

import kcxai
from kcxai.models import from_pipeline, from_sklearn
from kcxai.models.imports import _trees
from kcxai.models.imports.route import import_model


def _families() -> dict[str, Any]:
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        GradientBoostingClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import BernoulliNB, CategoricalNB
    from sklearn.tree import DecisionTreeClassifier

    out = {
        "tree": lambda: DecisionTreeClassifier(max_depth=3, random_state=0),
        "forest": lambda: RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0),
        "extra-trees": lambda: ExtraTreesClassifier(n_estimators=3, max_depth=3, random_state=0),
        "gradient-boosting": lambda: GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0),
        "hist-gradient-boosting": lambda: HistGradientBoostingClassifier(max_iter=3, max_depth=2),
        "categorical-nb": CategoricalNB,
        "bernoulli-nb": BernoulliNB,
        "logistic": lambda: LogisticRegression(max_iter=500),
    }
    try:
        import xgboost

        out["xgboost"] = lambda: xgboost.XGBClassifier(n_estimators=3, max_depth=2, n_jobs=1)
        import lightgbm

        out["lightgbm"] = lambda: lightgbm.LGBMClassifier(n_estimators=3, max_depth=2, verbose=-1, n_jobs=1)
    except ImportError:  # pragma: no cover - the [boost] extra
        pass
    return out


def _data(family: str) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"a b": rng.integers(0, 3, 300), "c": rng.integers(0, 2, 300), "d": rng.integers(0, 4, 300)})
    y = (X["a b"] + X["d"] + rng.integers(0, 2, 300) > 3).astype(int).to_numpy()
    if family == "bernoulli-nb":
        X = X.clip(upper=1)
    return X, y


@pytest.mark.parametrize("family", sorted(_families()))
def test_from_sklearn_with_rows_is_the_explainers_model(family: str) -> None:
    X, y = _data(family)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = _families()[family]().fit(X, y)
    model = from_sklearn(est, X)
    explainer = kcxai.Explainer(est, X)
    assert model.space == explainer.model_.space  # the same features under the same fitted distribution
    assert model.space.distribution.kind == "product"
    row = X.iloc[7]
    e = kcxai.min_idrs(model, row, Fraction(1, 20))
    assert e.distribution == "product" and "not fitted to data" not in str(e)
    again = explainer.explain_one(row, method="min_idrs", delta=Fraction(1, 20))
    assert (e.features, e.precision, e.coverage) == (again.features, again.precision, again.coverage)
    assert from_sklearn(est, X, distribution="uniform").space.distribution.kind == "uniform"


def test_without_rows_the_model_stays_uniform_and_says_so() -> None:
    from sklearn.tree import DecisionTreeClassifier

    X, y = _data("tree")
    est = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    model = from_sklearn(est)
    assert model.space.distribution.kind == "uniform" and model.space == from_sklearn(est, distribution=None).space
    e = kcxai.min_idrs(model, X.iloc[0], 0)
    assert "under the uniform distribution (every value of a feature equally likely, not fitted to data)" in str(e)
    assert "not fitted to data" in e._repr_html_() and "not fitted to data" in str(kcxai.score_rule(model, e.rule()))
    with pytest.raises(kcxai.InvalidInputError, match="pass X_train"):
        from_sklearn(est, distribution="product")
    weights = [[1, 2, 3, 4][:f.size] if f.size <= 4 else None for f in model.space.features]
    assert from_sklearn(est, distribution=weights).space == model.space.with_distribution(weights)
    mixture = from_sklearn(est, X, distribution="mixture", distribution_options={"n_components": 2})
    assert mixture.space.distribution.kind == "mixture"


def test_from_pipeline_with_rows_is_the_explainers_model() -> None:
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    X, y = _data("tree")
    X = X.astype({"c": str}).astype({"a b": float})
    X.loc[X.index[::9], "a b"] = np.nan  # the trees route NaN: the column gets the missing value
    pipe = make_pipeline(ColumnTransformer([("oh", OneHotEncoder(sparse_output=False), ["c"])],
                                           remainder="passthrough"),
                         HistGradientBoostingClassifier(max_iter=3, max_depth=2)).fit(X, y)
    imported = from_pipeline(pipe, X)
    explainer = kcxai.Explainer(pipe, X)
    assert imported.model.space == explainer.model_.space
    a_b = imported.model.space.feature_index("a b")
    assert imported.model.space.features[a_b].missing_index is not None
    assert from_pipeline(pipe).model.space.distribution.kind == "uniform"
    assert from_pipeline(pipe).model.space.features[a_b].missing_index is None  # no rows: no missing value asked
    with pytest.raises(kcxai.InvalidInputError, match="'d'"):  # asked for, with no rule for NaN: an error
        from_pipeline(make_pipeline(ColumnTransformer([("oh", OneHotEncoder(), ["d"])]), _dt()).fit(X, y),
                      missing_columns=["d"])


def _dt() -> Any:
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(max_depth=2, random_state=0)


def test_from_sklearn_with_missing_rows_routes_them_as_the_trees_do() -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = _data("tree")
    X = X.astype(float)
    X.loc[X.index[::5], "d"] = np.nan
    est = HistGradientBoostingClassifier(max_iter=3, max_depth=2).fit(X, y)
    model = from_sklearn(est, X)
    d = model.space.features[2]
    assert d.missing_index is not None and model.space.features[0].missing_index is None
    rows = X.iloc[:40]
    want = est.predict(rows)
    got = [model.predict(x) for x in kcxai.Explainer(est, X).instances(rows)]
    assert list(want) == got
    with pytest.raises(kcxai.InvalidInputError, match="no 'domains' or 'feature_names'"):
        from_sklearn(est, X, feature_names=["p", "q", "r"])


def test_import_model_takes_every_kind_of_source() -> None:
    tree = kcxai.datasets.running_example_tree()
    rows = [[1, 1, 1, 1, 0, 0, 0, 0, 1], [0, 1, 0, 1, 0, 1, 0, 1, 0]]
    assert import_model(tree).model is tree
    assert import_model(tree, rows).model.space.distribution.kind == "product"
    assert import_model(tree, rows, distribution=None).model is tree
    with pytest.raises(kcxai.InvalidTypeError, match="'model' must be a kcxai model"):
        import_model(object())
    compiled = kcxai.compile_model(tree, "dt")
    assert kcxai.Explainer(compiled).model_ is tree  # a CompiledModel: its model


def test_unseen_categories_name_the_encoder_and_its_option() -> None:
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    X, y = _data("tree")
    X = X.astype({"c": str})
    pipe = make_pipeline(ColumnTransformer([("oh", OneHotEncoder(handle_unknown="ignore"), ["c"])],
                                           remainder="passthrough"), _dt()).fit(X, y)
    explainer = kcxai.Explainer(pipe, X)
    row = X.iloc[:1].assign(c="never seen")
    unseen = r"unknown category 'never seen' in row 0.*step 'oh' \(OneHotEncoder\(handle_unknown='ignore'"
    with pytest.raises(kcxai.InvalidInputError, match=unseen):
        explainer.explain_one(row, method="axp")


def test_masks_too_large_are_refused_before_they_are_built(monkeypatch: Any) -> None:
    from sklearn.ensemble import ExtraTreesClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"wide": rng.random(400), "narrow": rng.integers(0, 2, 400)})
    est = ExtraTreesClassifier(n_estimators=4, random_state=0).fit(X, rng.integers(0, 2, 400))  # deep: many cuts
    from_sklearn(est)  # under the limit
    monkeypatch.setattr(_trees, "MASK_MEMORY_LIMIT", 10_000)
    with pytest.raises(kcxai.ProblemTooLargeError, match=r"'wide' \(\d+ cuts\).*RandomForest rather than ExtraTrees"):
        from_sklearn(est)
