"""Explainer distributions: fitted on the training rows (product by default, mixtures), checked against
the functional API on the same fitted model; explanations held against held-out rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder
from sklearn.tree import DecisionTreeClassifier

import kcxai
from kcxai import Explainer
from kcxai._errors import InvalidInputError


def data(seed: int = 0, n: int = 500) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Male", "Female"], n, p=[0.7, 0.3])
    age = rng.integers(17, 90, n).astype(float)
    work = np.where(sex == "Male", rng.choice(["gov", "private"], n), rng.choice(["self", "none"], n))
    df = pd.DataFrame({"sex": sex, "age": age, "work": work, "hours": np.round(rng.normal(40, 10, n), 1)})
    y = np.where(((df["sex"] == "Male") & (df["age"] > 40)) | (df["work"] == "self"), ">50K", "<=50K")
    return df, y


@pytest.fixture(scope="module")
def pipe() -> tuple[object, pd.DataFrame, pd.DataFrame]:
    df, y = data()
    ct = ColumnTransformer([("oh", OneHotEncoder(), ["sex", "work"]),
                            ("kb", KBinsDiscretizer(n_bins=4, encode="ordinal",
                                                    quantile_method="averaged_inverted_cdf"),
                             ["age"])], remainder="passthrough")
    p = make_pipeline(ct, DecisionTreeClassifier(max_depth=5, random_state=0)).fit(df.iloc[:400], y[:400])
    return p, df.iloc[:400], df.iloc[400:]


def test_default_is_a_product_fitted_on_the_training_rows(pipe) -> None:
    p, train, test = pipe
    explainer = Explainer(p, train)
    base = kcxai.from_pipeline(p)
    rows = base.reader.read(train).instances
    fitted = base.model.with_distribution(kcxai.fit_distribution(base.model, rows, kind="product"))
    assert explainer.model_.space == fitted.space
    result = explainer.explain(test.head(30), delta=0.05)
    for inst, e in zip(explainer.instances(test.head(30)), result):
        assert e == kcxai.min_idrs(fitted, inst, 0.05)
        assert e.distribution == "product"
    assert set(result.to_frame()["distribution"]) == {"product"}
    assert Explainer(p).explain(test.head(2))[0].distribution == "uniform"  # no rows: the model's own
    assert Explainer(p, train, distribution=None).explain(test.head(2))[0].distribution == "uniform"


def test_mixture_fitted_with_options(pipe) -> None:
    p, train, test = pipe
    explainer = Explainer(p, train, distribution="mixture", distribution_options={"n_components": 3})
    assert explainer.model_.space.distribution.n_components == 3
    result = explainer.explain(test.head(20), delta=0.05)  # the grouped tree path, under a mixture
    for inst, e in zip(explainer.instances(test.head(20)), result):
        assert e == kcxai.min_idrs(explainer.model_, inst, 0.05)
        assert e.distribution == "mixture of 3"
    c = explainer.explain(test.head(5), method="local_cdrs", precision=0.9)
    for inst, e in zip(explainer.instances(test.head(5)), c):
        ref = kcxai.local_cdrs(explainer.compiled_, inst, 0.9, inflate=True)  # the Explainer widens by default
        assert (e.features, e.precision) == (ref.features, ref.precision) and e.precision >= 0.9


def test_evaluate_on_held_out_rows(pipe) -> None:
    p, train, test = pipe
    explainer = Explainer(p, train)
    result = explainer.explain(test.head(10), delta=0.05)
    table = explainer.evaluate(result, test)  # the 10 explained rows are left out of the figures
    held = test.iloc[10:]
    rows = explainer.instances(held)
    predicted = list(p.predict(held))  # scikit-learn's own predictions, counted by hand
    for (_, got), e in zip(table.iterrows(), result):
        match = [k for k, r in enumerate(rows) if all(r[f] == e.instance[f] for f in e.features)]
        agree = sum(predicted[k] == e.prediction for k in match)
        assert got["data_excluded"] == 10
        assert got["data_matching"] == len(match) and got["data_rows"] == len(rows)
        assert got["data_precision"] == (agree / len(match) if match else None)
        if e.precision == 1:  # a rule exact under the distribution holds on every row it matches
            assert got["data_precision"] in (1.0, None)
    assert table["id"].tolist() == list(result.ids)
    axp = explainer.explain(test.head(5), method="axp")
    assert all(pr in (1.0, None) for pr in explainer.evaluate(axp, test)["data_precision"])


def test_distribution_errors(pipe) -> None:
    p, train, _ = pipe
    with pytest.raises(InvalidInputError, match="pass X_train"):
        Explainer(p, distribution="mixture")
    with pytest.raises(InvalidInputError, match="'distribution' must be"):
        Explainer(p, train, distribution="gaussian")
    with pytest.raises(InvalidInputError, match="distribution_options"):
        Explainer(p, train, distribution=None, distribution_options={"n_components": 2})
    bad = train.copy()
    bad.loc[bad.index[3], "age"] = np.nan
    with pytest.raises(InvalidInputError, match=r"'age'.*missing.*row 3"):
        Explainer(p, bad)
