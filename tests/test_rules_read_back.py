"""Every rule kcxai prints reads back: ``score_rule(model, e.rule())`` gives the explanation's own exact precision
and coverage (and ``{name: condition.literal}`` the same box), for every model family and feature kind: random
models over spaces with float32 and float64 cuts at awkward thresholds, missing values, categories whose labels
hold commas, spaces and "AND"; widened (inflated) rules too; and scikit-learn models trained on bundled data
through the Explainer (trees, forests, boosted trees, XGBoost, LightGBM, naive Bayes, linear models, pipelines
with one-hot groups, bins, scalers and missing values), and through the command line."""

from __future__ import annotations

import json
import math
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai._cuts import float32_cut
from kcxai.explain.inflate import box_of
from kcxai.scoring import parse_rule
from tests._support.model_strategies import (
    bdd_models,
    boosted_models,
    decision_lists,
    forests,
    linear_models,
    naive_bayes_models,
    rule_sets,
)
from tests._support.strategies import mixtures, points, set_split_trees, trees

float32s = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)
# scikit-learn's float32 thresholds (midpoints of two float32 values) and XGBoost's (the float32 below x < c)
sklearn_cuts = st.tuples(float32s, float32s).map(lambda ab: (ab[0] + ab[1]) / 2)
xgboost_cuts = float32s.map(lambda c: float(np.nextafter(np.float32(c), np.float32(-np.inf))))
# float64 thresholds next to short decimals (HistGradientBoosting's and LightGBM's midpoints)
float64_cuts = st.tuples(st.integers(-10**5, 10**5), st.integers(0, 3), st.sampled_from([-1, 0, 1])).map(
    lambda t: float(np.nextafter(t[0] / 10 ** t[1] + 0.05, np.inf * t[2])) if t[2] else t[0] / 10 ** t[1] + 0.05)
NAMES = ["age", "petal width (cm)", "x AND y", "capital-gain", "f"]
LABELS = ["Private", "Self-emp, inc", "a AND b", "  padded", "x = y", 7, 2.5]


@st.composite
def awkward_spaces(draw: Any, max_features: int = 4, numeric_missing: bool = True) -> kcxai.FeatureSpace:
    """Spaces of float32 and float64 numeric features cut at awkward thresholds, with or without a missing value,
    and categorical features whose labels hold commas, spaces and "AND"; uniform, exact product or mixture.
    ``numeric_missing=False``: no missing value on numeric features (rule models take conditions on them as
    intervals only)."""
    n = draw(st.integers(1, max_features))
    feats = []
    for i in range(n):
        name = f"{NAMES[i % len(NAMES)]}{i}" if draw(st.booleans()) else f"x{i}"
        kind = draw(st.sampled_from(["float32", "float64", "categorical"]))
        missing = draw(st.booleans())
        if kind == "categorical":
            values = draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=4, unique=True))
            feats.append(kcxai.Feature.categorical(name, values, missing=missing))
            continue
        missing = missing and numeric_missing
        float32 = kind == "float32"
        cut = st.one_of(sklearn_cuts, xgboost_cuts) if float32 else float64_cuts
        key = float32_cut if float32 else (lambda t: t)
        ts = sorted(draw(st.lists(cut.filter(math.isfinite), min_size=0, max_size=3, unique_by=key)))
        feats.append(kcxai.Feature.numeric(name, ts, float32=float32, missing=missing))
    sizes = [f.size for f in feats]
    dist = draw(st.sampled_from(["uniform", "product", "mixture"]))
    if dist == "uniform":
        return kcxai.FeatureSpace(feats)
    if dist == "mixture":
        return kcxai.FeatureSpace(feats, distribution=draw(mixtures(sizes)))
    weights = [draw(st.lists(st.integers(1, 9), min_size=s, max_size=s)) for s in sizes]
    return kcxai.FeatureSpace(feats, distribution=weights)


FAMILIES = {
    "tree": lambda space: trees(space=space),
    "one-hot tree": lambda space: forests(space=space, max_trees=1, tree_strategy=set_split_trees),
    "forest": lambda space: forests(space=space),
    "boosted": lambda space: boosted_models(space=space, max_trees=3),
    "decision list": lambda space: decision_lists(space=space),
    "rule set": lambda space: rule_sets(space=space),
    "linear": lambda space: linear_models(space=space),
    "naive bayes": lambda space: naive_bayes_models(space=space),
}


def reads_back(model: Any, e: kcxai.Explanation) -> None:
    """The explanation's rule, its conditions as a mapping, and its literals read back to its box, and score to
    its own exact measures."""
    space = model.space
    box = box_of(space, e)
    assert parse_rule(space, model.classes, e.rule()) == (box, list(model.classes).index(e.prediction)), e.rule()
    s = kcxai.score_rule(model, e.rule())
    assert (s.precision, s.coverage, s.prediction) == (e.precision, e.coverage, e.prediction), (e.rule(), s)
    conditions = e.conditions if e.conditions is not None else [
        kcxai.Condition(f, space.names[f], (k,), lit) for f, k, lit in
        zip(e.features, [box[f].bit_length() - 1 for f in e.features], e.literals)]
    mapping = {c.name: c.literal for c in conditions}
    assert parse_rule(space, model.classes, mapping)[0] == box, mapping
    assert kcxai.score_rule(model, s.rule()).precision == e.precision  # the score's own rule reads back too


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_printed_rules_read_back_to_their_exact_measures(family: str, data: Any) -> None:
    space = data.draw(awkward_spaces(numeric_missing=family not in ("decision list", "rule set")))
    model = data.draw(FAMILIES[family](space))
    x = space.decode(data.draw(points(space)))
    delta = data.draw(st.sampled_from([Fraction(0), Fraction(1, 10), Fraction(1, 3)]))
    e = kcxai.min_idrs(model, x, delta)
    reads_back(model, e)
    reads_back(model, kcxai.inflate(model, e))  # the widened rule: runs of intervals, sets, "or x = missing"
    c = kcxai.local_cdrs(model, x, data.draw(st.sampled_from([Fraction(1, 2), Fraction(9, 10)])), inflate=True)
    reads_back(model, c)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_bdd_rules_read_back(data: Any) -> None:
    model = data.draw(bdd_models())
    x = model.space.decode(data.draw(points(model.space)))
    e = kcxai.min_idrs(model, x, Fraction(1, 10))
    reads_back(model, e)
    reads_back(model, kcxai.inflate(model, e))


def test_the_iris_forest_rule_of_the_issue_scores() -> None:
    """Issue 29: a forest's 'petal width (cm) <= 0.7' sat at 0.7000000029802322 and was refused."""
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_iris(return_X_y=True, as_frame=True)
    explainer = kcxai.Explainer(RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y), X)
    feature = explainer.model_.space.features[3]
    k = next(j for j, t in enumerate(feature.thresholds) if abs(t - 0.7) < 1e-6)
    assert feature.interval_text(0, k) == "<= 0.7"  # the cut of the scikit-learn threshold 0.7000000029802322
    s = explainer.score("IF petal width (cm) <= 0.7 THEN class = 0")
    assert s.precision == 1 and s.coverage > 0
    e = explainer.explain_one(X.iloc[0], method="min_idrs", delta=0.05)
    assert explainer.score(e.rule()).precision == e.precision
    assert explainer.score({c.name: c.literal for c in kcxai.inflate(explainer.compiled_, e).conditions}).precision


# -- scikit-learn models on bundled data, through the Explainer -------------------------------------------------


def _bundled(name: str) -> tuple[pd.DataFrame, Any]:
    from sklearn import datasets

    X, y = getattr(datasets, f"load_{name}")(return_X_y=True, as_frame=True)
    return X, y


def _estimators() -> dict[str, Any]:
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        GradientBoostingClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )
    from sklearn.tree import DecisionTreeClassifier

    out = {
        "tree": lambda: DecisionTreeClassifier(max_depth=4, random_state=0),
        "forest": lambda: RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0),
        "extra-trees": lambda: ExtraTreesClassifier(n_estimators=3, max_depth=3, random_state=0),
        "gradient-boosting": lambda: GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0),
        "hist-gradient-boosting": lambda: HistGradientBoostingClassifier(max_iter=4, max_depth=2, random_state=0),
    }
    try:
        import xgboost

        out["xgboost"] = lambda: xgboost.XGBClassifier(n_estimators=4, max_depth=2, n_jobs=1)
    except ImportError:  # pragma: no cover - the [boost] extra
        pass
    try:
        import lightgbm

        out["lightgbm"] = lambda: lightgbm.LGBMClassifier(n_estimators=4, max_depth=2, verbose=-1, n_jobs=1)
    except ImportError:  # pragma: no cover - the [boost] extra
        pass
    return out


def _explains_and_reads_back(explainer: kcxai.Explainer, rows: Any) -> None:
    assert explainer.compiled_ is not None, explainer.language_reason_  # exact counts
    for method, bound in (("min_idrs", {"delta": 0.05}), ("local_cdrs", {"precision": 0.9}), ("axp", {})):
        for e in explainer.explain(rows, method=method, **bound):
            s = explainer.score(e.rule())
            assert (s.precision, s.coverage) == (e.precision, e.coverage), (e.rule(), s)
            conditions = e.conditions or []
            if conditions:
                assert explainer.score({c.name: c.literal for c in conditions}).precision == e.precision


@pytest.mark.parametrize("data", ["iris", "wine", "breast_cancer"])
@pytest.mark.parametrize("family", sorted(_estimators()))
def test_bundled_data_rules_read_back(family: str, data: str) -> None:
    X, y = _bundled(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _estimators()[family]().fit(X, y)
    _explains_and_reads_back(kcxai.Explainer(model, X), X.iloc[::max(1, len(X) // 6)])


def test_pipelines_with_one_hot_groups_bins_scalers_and_missing_values_read_back() -> None:
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import CategoricalNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder, OrdinalEncoder, StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    adult = kcxai.datasets.load_dataset("adult", as_frame=True)
    X, y = adult.X.iloc[:3000].copy(), adult.y.iloc[:3000]
    coded = list(adult.value_maps)[:4]
    numbers = [c for c in X.columns if c not in adult.value_maps][:3]
    X = X[coded + numbers]
    X.loc[X.index[::11], numbers[0]] = np.nan  # missing values: HistGradientBoosting routes them natively
    kb: dict[str, Any] = {"quantile_method": "averaged_inverted_cdf"}
    pipes = [
        make_pipeline(ColumnTransformer([("oh", OneHotEncoder(handle_unknown="ignore", sparse_output=False), coded)],
                                        remainder="passthrough"),
                      HistGradientBoostingClassifier(max_iter=3, max_depth=2)),
        make_pipeline(ColumnTransformer([("oh", OneHotEncoder(sparse_output=False), coded),
                                         ("num", StandardScaler(), numbers[1:])]),
                      DecisionTreeClassifier(max_depth=4, random_state=0)),
        make_pipeline(ColumnTransformer([("ord", OrdinalEncoder(), coded),
                                         ("kb", KBinsDiscretizer(n_bins=3, encode="ordinal", **kb), numbers[1:])]),
                      CategoricalNB()),
        make_pipeline(ColumnTransformer([("oh", OneHotEncoder(), coded[:3]),
                                         ("kb", KBinsDiscretizer(n_bins=3, encode="onehot", **kb), numbers[1:2])]),
                      LogisticRegression(max_iter=300)),
    ]
    for pipe in pipes:
        data = X if isinstance(pipe[-1], HistGradientBoostingClassifier) else X.drop(columns=[numbers[0]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe.fit(data, y)
        _explains_and_reads_back(kcxai.Explainer(pipe, data), data.iloc[[0, 5, 11, 22]])


def test_the_command_line_scores_a_printed_rule(tmp_path: Any, capsys: Any) -> None:
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier

    from kcxai.cli import main

    X, y = load_wine(return_X_y=True, as_frame=True)
    model = kcxai.from_sklearn(RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y))
    path = tmp_path / "forest.json"
    model.save(path)
    e = kcxai.min_idrs(model, X.iloc[3], Fraction(1, 20))
    assert main(["score", str(path), "--rule", e.rule(), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert Fraction(got["precision_exact"] if "precision_exact" in got else got["precision"]) == e.precision
