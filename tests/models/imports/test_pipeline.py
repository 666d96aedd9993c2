"""Pipelines imported over their original columns: predictions equal sklearn's, errors name the step."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import BernoulliNB, CategoricalNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder, OrdinalEncoder
from sklearn.tree import DecisionTreeClassifier

import kcxai
from kcxai import Explainer
from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.models import from_pipeline
from tests._support.pipelines import one_thread  # noqa: F401 - an autouse fixture
from tests._support.pipelines import check_predictions, frame

KB: dict[str, Any] = {"quantile_method": "averaged_inverted_cdf"}


PREPROCESSORS = {
    "onehot+bins+ordinal+passthrough": lambda: ColumnTransformer(
        [("oh", OneHotEncoder(), ["sex", "work"]), ("kb", KBinsDiscretizer(n_bins=4, encode="onehot", **KB), ["age"]),
         ("ord", OrdinalEncoder(), ["edu"])], remainder="passthrough"),
    "drop-first+ordinal-bins": lambda: ColumnTransformer(
        [("oh", OneHotEncoder(drop="first"), ["sex", "work"]),
         ("kb", KBinsDiscretizer(n_bins=5, encode="ordinal", strategy="uniform"), ["age", "hours"]),
         ("ord", OrdinalEncoder(), ["edu"])]),
    "if-binary+dropped-column": lambda: ColumnTransformer(
        [("oh", OneHotEncoder(drop="if_binary", sparse_output=False), ["sex", "work", "edu"]),
         ("age", "passthrough", ["age"])], remainder="drop"),
    "nested-pipelines": lambda: ColumnTransformer(
        [("cat", make_pipeline(OneHotEncoder()), ["sex", "work"]),
         ("num", make_pipeline("passthrough", KBinsDiscretizer(n_bins=4, encode="ordinal", **KB)), ["age"])],
        remainder="passthrough"),
    "ordinal-only": lambda: ColumnTransformer(
        [("ord", OrdinalEncoder(), ["sex", "work", "edu"]),
         ("kb", KBinsDiscretizer(n_bins=3, encode="ordinal", **KB), ["age", "hours"])]),
}
TREES = {
    "tree": lambda: DecisionTreeClassifier(random_state=0),
    "forest": lambda: RandomForestClassifier(n_estimators=4, max_depth=6, random_state=0),
    "extra-trees": lambda: ExtraTreesClassifier(n_estimators=3, max_depth=5, random_state=0),
}
FINITE = {
    "categorical-nb": lambda: CategoricalNB(),
    "bernoulli-nb": lambda: BernoulliNB(),
    "logistic": lambda: LogisticRegression(max_iter=1000),
}


@pytest.mark.parametrize("pre", sorted(PREPROCESSORS))
@pytest.mark.parametrize("clf", sorted(TREES))
def test_tree_pipelines_predict_like_sklearn(pre: str, clf: str) -> None:
    df, y = frame(0)
    pipe = make_pipeline(PREPROCESSORS[pre](), TREES[clf]()).fit(df, y)
    imported = check_predictions(pipe, df)
    used = [n for n in df.columns if not (pre == "if-binary+dropped-column" and n == "hours")]
    assert imported.model.space.names == tuple(used)  # one feature per original column


@pytest.mark.parametrize(("pre", "clf"), [  # CategoricalNB reads category codes: ordinal encodings only
    (p, c) for p in ("drop-first+ordinal-bins", "ordinal-only") for c in sorted(FINITE)
    if not (c == "categorical-nb" and p != "ordinal-only")])
def test_finite_model_pipelines_predict_like_sklearn(pre: str, clf: str) -> None:
    df, y = frame(1)
    pipe = make_pipeline(PREPROCESSORS[pre](), FINITE[clf]()).fit(df, y)
    check_predictions(pipe, df)


@settings(max_examples=15)
@given(st.integers(0, 10_000), st.integers(2, 8), st.sampled_from(["onehot", "ordinal"]), st.booleans())
def test_random_tree_pipelines(seed: int, bins: int, encode: str, drop: bool) -> None:
    df, y = frame(seed, n=300)
    ct = ColumnTransformer([("oh", OneHotEncoder(drop="first" if drop else None), ["sex", "work"]),
                            ("kb", KBinsDiscretizer(n_bins=bins, encode=encode, **KB), ["age"])],
                           remainder="passthrough")
    pipe = make_pipeline(ct, DecisionTreeClassifier(max_depth=8, random_state=seed)).fit(df, y)
    check_predictions(pipe, df)


def test_adult_pipeline_speaks_of_original_columns() -> None:
    ds = kcxai.datasets.load_dataset("adult", as_frame=True)
    X, y = ds.X, ds.y
    cats = list(ds.value_maps)
    nums = [c for c in X.columns if c not in cats]
    ct = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cats), ("num", "passthrough", nums)])
    pipe = make_pipeline(ct, DecisionTreeClassifier(max_depth=6, random_state=0)).fit(X, y)
    imported = check_predictions(pipe, X)
    assert imported.model.space.n_features == 14 and set(imported.model.classes) == {">50K", "<=50K"}
    explainer = Explainer(pipe)
    result = explainer.explain(X.iloc[:50], method="axp")
    literals = [lit for e in result.explanations for lit in e.literals]
    assert any(lit.startswith("relationship ") or lit.startswith("marital-status ") for lit in literals)
    assert not any("_" in lit.split(" ")[0] and lit.split(" ")[0] not in X.columns for lit in literals)
    assert set(result.to_frame()["prediction"]) <= {">50K", "<=50K"}
    for e, (_, row) in zip(result.explanations, X.iloc[:50].iterrows()):
        assert e.prediction == pipe.predict(row.to_frame().T)[0]


def test_one_hot_is_one_categorical_feature() -> None:
    df, y = frame(2)
    pipe = make_pipeline(ColumnTransformer([("oh", OneHotEncoder(), ["sex", "work"])]),
                         DecisionTreeClassifier(random_state=0)).fit(df[["sex", "work"]], y)
    space = from_pipeline(pipe).model.space
    assert space.domain_sizes == (2, 4) and space.size == 8  # no impossible one-hot points
    e = Explainer(pipe).explain_one(df[["sex", "work"]].iloc[0], method="axp")
    assert all(lit.split(" ")[0] in ("sex", "work") for lit in e.literals)


def test_bins_print_left_closed() -> None:
    df, y = frame(3)
    ct = ColumnTransformer([("kb", KBinsDiscretizer(n_bins=3, encode="ordinal", strategy="uniform"), ["age"])])
    pipe = make_pipeline(ct, DecisionTreeClassifier(random_state=0)).fit(df[["age"]], y)
    f = from_pipeline(pipe).model.space.features[0]
    edges = pipe[0].named_transformers_["kb"].bin_edges_[0]
    assert f.labels[0] == f"(-inf, {edges[1]:g})" and f.labels[1] == f"[{edges[1]:g}, {edges[2]:g})"


def test_input_forms() -> None:
    df, y = frame(4)
    pipe = make_pipeline(PREPROCESSORS["onehot+bins+ordinal+passthrough"](),
                         DecisionTreeClassifier(random_state=0)).fit(df, y)
    explainer = Explainer(pipe)
    first = explainer.explain(df.iloc[:3])
    assert first.ids == (0, 1, 2)
    one = explainer.explain_one(df.iloc[1])  # a Series
    assert one == first[1]
    as_dict = explainer.explain_one(df.iloc[1].to_dict())
    assert as_dict == one
    as_object = df.astype({"sex": object, "work": object})
    assert list(explainer.explain(as_object.iloc[:3])) == list(first)


def test_bad_input_names_the_column() -> None:
    df, y = frame(5)
    pipe = make_pipeline(PREPROCESSORS["onehot+bins+ordinal+passthrough"](),
                         DecisionTreeClassifier(random_state=0)).fit(df, y)
    explainer = Explainer(pipe)
    bad = df.iloc[:4].copy()
    bad["sex"] = bad["sex"].astype(object)
    bad.loc[2, "sex"] = "Robot"
    with pytest.raises(InvalidInputError, match=r"'sex'.*'Robot'.*row 2"):
        explainer.explain(bad)
    nan = df.iloc[:4].copy()
    nan.loc[1, "hours"] = np.nan
    with pytest.raises(InvalidInputError, match=r"'hours'.*missing.*row 1.*routes NaN there natively.*"
                                                 r"missing_columns=\['hours'\]"):
        explainer.explain(nan)
    with pytest.raises(InvalidInputError, match=r"Missing \['edu'\]"):
        explainer.explain(df.drop(columns="edu"))
    with pytest.raises(InvalidInputError, match=r"unexpected \['zip'\]"):
        explainer.explain(df.assign(zip=1))
    with pytest.raises(InvalidInputError, match="empty"):
        explainer.explain(df.iloc[:0])
    with pytest.raises(InvalidInputError, match="DataFrame"):
        explainer.explain(df.to_numpy())  # fitted on names: read by name only
    text = df.iloc[:4].copy()
    text["age"] = text["age"].astype(object)
    text.loc[0, "age"] = "old"
    with pytest.raises(InvalidInputError, match=r"'age' is numeric.*'old'"):
        explainer.explain(text)
    report = explainer.explain(bad, on_error="report")
    assert report.n_failures == 1 and "'Robot'" in report.failures[0].message and report.failures[0].id == 2


def test_unsupported_pipelines_name_the_step() -> None:
    df, y = frame(6)
    twice = make_pipeline(ColumnTransformer([("a", OrdinalEncoder(), ["sex"]), ("b", OneHotEncoder(), ["sex"])]),
                          DecisionTreeClassifier()).fit(df, y)
    with pytest.raises(InvalidInputError, match=r"'sex' is encoded by two steps \('a' and 'b'\)"):
        from_pipeline(twice)
    rare = make_pipeline(ColumnTransformer([("oh", OneHotEncoder(min_frequency=150), ["work"])]),
                         DecisionTreeClassifier()).fit(df, y)
    with pytest.raises(InvalidInputError, match="infrequent"):
        from_pipeline(rare)
    onehot_cnb = make_pipeline(ColumnTransformer([("oh", OneHotEncoder(), ["sex"])]), CategoricalNB()).fit(df, y)
    with pytest.raises(InvalidInputError, match=r"CategoricalNB.*'sex' is one-hot"):
        from_pipeline(onehot_cnb)
    numeric_nb = make_pipeline(ColumnTransformer([("oh", OneHotEncoder(), ["sex"])], remainder="passthrough"),
                               BernoulliNB()).fit(df.drop(columns="work"), y)
    with pytest.raises(InvalidInputError, match=r"BernoulliNB needs finite feature domains.*'age'.*KBinsDiscretizer"):
        from_pipeline(numeric_nb)
    with pytest.raises(InvalidTypeError, match="Pipeline"):
        from_pipeline(DecisionTreeClassifier())


@pytest.mark.parametrize("clf", ["forest", "bernoulli-nb"])
def test_compiled_pipelines_explain_like_the_functional_api(clf: str) -> None:
    df, y = frame(7, n=200)
    est = {**TREES, **FINITE}[clf]()
    pre = PREPROCESSORS["onehot+bins+ordinal+passthrough" if clf == "forest" else "drop-first+ordinal-bins"]()
    pipe = make_pipeline(pre, est).fit(df, y)
    explainer = Explainer(pipe)
    assert explainer.language_ == "obdd"
    result = explainer.explain(df.head(5), delta=0.05)
    for inst, e in zip(explainer.instances(df.head(5)), result):
        assert e == kcxai.min_idrs(explainer.compiled_, inst, 0.05)
        assert e.prediction == explainer.model_.predict(inst)


def test_binned_linear_model_rounded_keeps_the_pipeline_reader() -> None:
    df, y = frame(8, n=300)
    nums = ["age", "hours"]
    pipe = make_pipeline(ColumnTransformer([("bins", KBinsDiscretizer(n_bins=3, encode="onehot-dense", **KB), nums),
                                            ("oh", OneHotEncoder(), ["sex", "work"])]),
                         LogisticRegression(max_iter=1000)).fit(df, y)
    imported = from_pipeline(pipe)
    rounded = imported.rounded(0.25)
    step, margin = rounded.model.rounding
    assert step == Fraction(1, 4) and margin > 0 and rounded.reader is imported.reader
    explainer = Explainer(rounded, df)  # raw numbers binned as scikit-learn bins them
    e = explainer.explain_one(df.iloc[0], method="axp")
    assert e.prediction == rounded.model.predict(imported.reader.read(df.iloc[0]).instances[0])
    with pytest.raises(InvalidTypeError, match="no rounded"):
        from_pipeline(make_pipeline(PREPROCESSORS["ordinal-only"](), DecisionTreeClassifier()).fit(df, y)).rounded(1)
