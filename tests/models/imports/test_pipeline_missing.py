"""Missing values: a value of the feature (``MISSING``, printed ``missing``), routed as the pipeline routes NaN
(an imputer's value, a tree's own rule, an encoder's NaN category); read from NaN / None cells; refused, with
the column and what to do, where the pipeline has no rule."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder, OrdinalEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

import kcxai
from kcxai import MISSING, Explainer, Feature, FeatureSpace, InvalidInputError
from kcxai.models import DecisionList, from_pipeline, model_from_dict
from tests._support.pipelines import one_thread  # noqa: F401 - an autouse fixture
from tests._support.pipelines import (
    NAN_FAMILIES, TREE_FAMILIES, check_predictions, frame, target_for,
)

STRATEGIES = ["mean", "median", "most_frequent", "constant"]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("family", ["forest", "gb", "xgb"])
def test_imputed_columns_have_a_missing_value_routed_as_the_fill(strategy: str, family: str) -> None:
    df, y = frame(31, n=300, missing=0.15)
    fill = {"fill_value": 0.0} if strategy == "constant" else {}
    cat_fill = {"fill_value": "unknown"} if strategy == "constant" else {}
    ct = ColumnTransformer(
        [("cat", make_pipeline(SimpleImputer(strategy="most_frequent" if strategy in ("mean", "median") else strategy,
                                             **cat_fill), OneHotEncoder(sparse_output=False)), ["sex", "work"]),
         ("num", make_pipeline(SimpleImputer(strategy=strategy, **fill), StandardScaler()), ["age"]),
         ("bins", make_pipeline(SimpleImputer(strategy=strategy, **fill),
                                KBinsDiscretizer(n_bins=3, encode="ordinal", quantile_method="averaged_inverted_cdf")),
          ["hours"])])
    pipe = make_pipeline(ct, TREE_FAMILIES[family]()).fit(df, target_for(family, y))
    imported = check_predictions(pipe, df)
    space = imported.model.space
    for name in ("sex", "age", "hours", "work"):  # declared by the imputer, even for 'work' (never missing) ...
        f = space.features[space.feature_index(name)]
        if name == "work" and strategy == "constant":  # ... unless its encoder refuses the fill value
            assert f.missing_index is None
            continue
        assert f.missing_index == f.size - 1 and f.values[-1] is MISSING and f.label(f.size - 1) == "missing"
    rows = imported.reader.read(df[df["age"].isna()].head(3)).instances
    assert all(row[space.feature_index("age")] is MISSING for row in rows)


@pytest.mark.parametrize("family", NAN_FAMILIES)
def test_nan_routed_by_the_model_itself(family: str) -> None:
    df, y = frame(32, n=300, missing=0.15)
    ct = ColumnTransformer([("cat", OrdinalEncoder(encoded_missing_value=np.nan), ["sex", "work"]),
                            ("num", "passthrough", ["age", "hours", "edu"])])
    pipe = make_pipeline(ct, TREE_FAMILIES[family]()).fit(df, target_for(family, y))
    with pytest.raises(InvalidInputError, match=r"'age' has a missing value.*routes NaN there natively.*"
                                                r"missing_columns=\['age'\]"):
        from_pipeline(pipe).reader.read(df)
    imported = check_predictions(pipe, df, missing_columns=["age", "hours"])
    # sex: the encoder learned NaN as a category; age, hours: asked for; work, edu: never missing
    assert [f.missing_index is not None for f in imported.model.space.features] == [True, True, False, True, False]
    # the Explainer asks for the columns its training rows miss, and explains rows with missing cells
    explainer = Explainer(pipe, df) if family in ("tree", "hgb") else None
    if explainer is not None:
        rows = df[df["age"].isna()].head(2)
        for e, (_, row) in zip(explainer.explain(rows, method="axp"), rows.iterrows()):
            assert e.prediction == pipe.predict(row.to_frame().T)[0]


def test_a_model_that_refuses_nan_is_named_with_what_to_do() -> None:
    df, y = frame(33, n=200, missing=0.1)
    clean = df.dropna()
    gb = make_pipeline(ColumnTransformer([("cat", OrdinalEncoder(), ["sex", "work"])], remainder="passthrough"),
                       GradientBoostingClassifier(n_estimators=3)).fit(clean, y[clean.index])
    with pytest.raises(InvalidInputError, match=r"'age' may be missing.*reaches the classifier as NaN, which "
                                                r"GradientBoostingClassifier does not accept.*SimpleImputer on 'age'"):
        from_pipeline(gb, missing_columns=["age"])
    with pytest.raises(InvalidInputError, match=r"'age' has a missing value \(NaN/None\) in row \d+; the pipeline "
                                                r"has no rule for it \(NaN reaches GradientBoostingClassifier.*"
                                                r"SimpleImputer on 'age'"):
        from_pipeline(gb).reader.read(df[df["age"].isna() & df["sex"].notna()])
    with pytest.raises(InvalidInputError, match=r"'sex' may be missing, but the pipeline has no rule.*raise"):
        from_pipeline(gb, missing_columns=["sex"])  # the encoder refuses NaN
    with pytest.raises(InvalidInputError, match=r"'missing_columns' names \['zip'\]"):
        from_pipeline(gb, missing_columns=["zip"])
    linear = make_pipeline(ColumnTransformer([("cat", OrdinalEncoder(encoded_missing_value=np.nan), ["sex"])]),
                           HistGradientBoostingClassifier(max_iter=2)).fit(df, y)
    from_pipeline(linear)  # HistGradientBoosting routes the NaN code
    lr = make_pipeline(ColumnTransformer([("cat", OneHotEncoder(), ["sex"])]), LogisticRegression())
    lr.fit(clean, y[clean.index])
    with pytest.raises(InvalidInputError, match=r"'sex' may be missing, but the pipeline has no rule"):
        from_pipeline(lr, missing_columns=["sex"])


def test_an_encoder_with_nan_as_a_category_declares_the_missing_value() -> None:
    df, y = frame(34, n=300, missing=0.1)
    for clf in (DecisionTreeClassifier(random_state=0), LogisticRegression(max_iter=500)):
        pipe = make_pipeline(ColumnTransformer([("oh", OneHotEncoder(), ["sex", "work"])]), clf).fit(df, y)
        imported = check_predictions(pipe, df)
        assert imported.model.space.features[0].values == ("Female", "Male", MISSING)


def test_missing_values_survive_json_and_print() -> None:
    age = Feature.numeric("age", [30, 40], missing=True)
    work = Feature.categorical("work", ["gov", "self"], missing=True)
    assert Feature.from_dict(json.loads(json.dumps(age.to_dict()))) == age
    assert Feature.from_dict(json.loads(json.dumps(work.to_dict()))) == work
    assert [age.index(x) for x in (25, 35, 50, float("nan"), None, MISSING)] == [0, 1, 2, 3, 3, 3]
    assert work.index(None) == 2 and age.literal(3) == "age = missing" and work.literal(2) == "work = missing"
    with pytest.raises(InvalidInputError, match="no missing value"):
        Feature.numeric("age", [30]).index(float("nan"))
    space = FeatureSpace([age, work])
    text = "IF age in {(-inf, 30], missing} AND work != missing THEN yes\nIF age = missing THEN no\nELSE yes"
    rules = DecisionList.from_text(text, space)
    assert str(rules).splitlines()[0] == "IF age in {(-inf, 30], missing} AND work != missing THEN yes"
    again = model_from_dict(json.loads(json.dumps(rules.to_dict())))
    points = [(a, w) for a in range(4) for w in range(3)]
    assert [again.predict_point(p) for p in points] == [rules.predict_point(p) for p in points]
    assert [rules.classes[rules.predict_point(p)] for p in points] == [
        "yes" if (a in (0, 3) and w != 2) else ("no" if a == 3 else "yes") for a, w in points]


def test_explanations_name_the_missing_value() -> None:
    df, y = frame(35, n=300, missing=0.2)
    pipe = make_pipeline(ColumnTransformer([("num", SimpleImputer(strategy="median"), ["age", "hours"]),
                                            ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"),
                                                                  OneHotEncoder()), ["sex"])]),
                         DecisionTreeClassifier(max_depth=4, random_state=0)).fit(df, y)
    explainer = Explainer(pipe, df)
    rows = df[df["age"].isna() & df["hours"].notna()].head(5)
    result = explainer.explain(rows, method="axp")
    for e, (_, row) in zip(result, rows.iterrows()):
        assert e.prediction == pipe.predict(row.to_frame().T)[0]
    literals = [lit for e in result for lit in e.literals]
    # AXps are widened by default: the instance's cell (missing) stays in each age condition
    assert all("missing" in lit for lit in literals if lit.startswith("age"))
    frame_out = result.to_frame()
    assert len(frame_out) == len(rows) and kcxai.MISSING is MISSING


def test_nan_and_none_cells_read_as_missing() -> None:
    df, y = frame(36, n=200, missing=0.1)
    pipe = make_pipeline(ColumnTransformer([("num", SimpleImputer(), ["age"]),
                                            ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"),
                                                                  OneHotEncoder()), ["sex"])]),
                         DecisionTreeClassifier(random_state=0)).fit(df, y)
    reader = from_pipeline(pipe).reader
    cells = pd.DataFrame({c: [df[c].iloc[0]] * 3 for c in df.columns})
    cells["sex"] = pd.Series([None, np.nan, "Male"], dtype=object)
    cells["age"] = [np.nan, 3.0, np.nan]
    got = reader.read(cells).instances
    assert [r[0] for r in got] == [MISSING, MISSING, "Male"] and [r[1] for r in got] == [MISSING, 3.0, MISSING]


def test_a_bare_estimator_trained_with_nan_is_explained_through_its_rule() -> None:
    df, y = frame(37, n=300, missing=0.15)
    X = df[["age", "hours", "edu"]]
    hgb = HistGradientBoostingClassifier(max_iter=3, max_depth=2, random_state=0).fit(X, y)
    explainer = Explainer(hgb, X)
    assert [f.missing_index is not None for f in explainer.model_.space.features] == [True, True, False]
    rows = X[X["age"].isna()].head(3)
    for e, (_, row) in zip(explainer.explain(rows, method="axp"), rows.iterrows()):
        assert e.prediction == hgb.predict(row.to_frame().T)[0]


@pytest.mark.parametrize("family", ["tree", "forest", "hgb"])
def test_missing_indicators_split_missing_from_present(family: str) -> None:
    df, y = frame(38, n=300, missing=0.3)
    y = np.where(df["age"].isna(), "missing-age", y)  # the indicator column is worth splitting on
    ct = ColumnTransformer([
        ("num", SimpleImputer(strategy="median", add_indicator=True), ["age", "hours"]),
        ("cat", OrdinalEncoder(encoded_missing_value=np.nan), ["sex"])], remainder="drop")
    pipe = make_pipeline(ct, SimpleImputer(add_indicator=True), TREE_FAMILIES[family]()).fit(df, y)
    assert pipe[:-1].transform(df).shape[1] == 6  # age, hours, their indicators, sex; then sex's
    imported = check_predictions(pipe, df)
    assert all(f.missing_index is not None for f in imported.model.space.features)
    encoded_indicator = make_pipeline(SimpleImputer(strategy="most_frequent", add_indicator=True), OrdinalEncoder(),
                                      TREE_FAMILIES[family]()).fit(df[["sex"]], y)
    with pytest.raises(kcxai.InvalidTypeError, match=r"encodes its missing-value indicator.*column 'sex'"):
        from_pipeline(encoded_indicator)
