"""Monotone scalers before a tree ensemble: every threshold mapped back to the column's own units exactly (the
cut passes the model's test, the next float does not), a decreasing scale flips the side, and the features
speak of the original units."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, OneHotEncoder, RobustScaler, StandardScaler

from kcxai import InvalidTypeError
from kcxai.models import from_pipeline
from kcxai.models.imports._pipeline_steps import layout_of
from kcxai.models.imports._pipeline_values import Preprocessing, cuts_back, read_as
from tests._support.pipelines import one_thread  # noqa: F401 - an autouse fixture
from tests._support.pipelines import (
    TREE_FAMILIES, check_predictions, frame, target_for,
)

SCALERS = [StandardScaler, MinMaxScaler, RobustScaler, MaxAbsScaler]


def _passes(pre: Preprocessing, x: np.ndarray, t: np.ndarray, float32: bool) -> np.ndarray:
    if not len(x):
        return np.zeros(0, dtype=bool)
    return read_as(pre.run({0: x.tolist()})[:, 0], float32) <= t


@settings(max_examples=40)
@given(scaler=st.sampled_from(SCALERS), seed=st.integers(0, 2**32 - 1), float32=st.booleans(),
       spread=st.sampled_from([1e-3, 1.0, 1e6]), chain=st.booleans())
def test_cuts_back_is_exact_at_every_cut(scaler: Any, seed: int, float32: bool, spread: float, chain: bool) -> None:
    rng = np.random.default_rng(seed)
    data = pd.DataFrame({"x": rng.normal(rng.normal() * spread, spread, 50)})
    steps = [scaler(), StandardScaler()] if chain else [scaler()]
    pipe = make_pipeline(*steps).fit(data)
    pre = Preprocessing(list(pipe), ["x"], True, [0.0], [False])
    z = pipe.transform(data)[:, 0]
    t = np.concatenate([z, z + rng.normal(0, 1e-3, len(z)), [z.min() - 1e300, z.max() + 1e300]])
    t = read_as(t, True) if float32 else t  # the model's thresholds are floats it can hold
    ((c, status),) = cuts_back(pre, [(0, 0, t, 1)], float32)
    cut = status == 0
    assert _passes(pre, c[cut], t[cut], float32).all()
    assert not _passes(pre, np.nextafter(c[cut], np.inf), t[cut], float32).any()
    ok = [pre.try_run({0: [x]})[0] is not None for x in (-1e300, 1e300)]
    smallest, largest = -1e300 if ok[0] else -1e20, 1e300 if ok[1] else 1e20
    assert not _passes(pre, np.full((status < 0).sum(), smallest), t[status < 0], float32).any()
    assert _passes(pre, np.full((status > 0).sum(), largest), t[status > 0], float32).all()


@pytest.mark.parametrize("scaler", SCALERS, ids=lambda s: s.__name__)
@pytest.mark.parametrize("family", ["forest", "gb", "hgb", "xgb"])
def test_scaled_columns_predict_like_sklearn(scaler: Any, family: str) -> None:
    df, y = frame(21, n=300)
    ct = ColumnTransformer([("oh", OneHotEncoder(sparse_output=False), ["sex", "work"]),
                            ("num", scaler(), ["age", "hours", "edu"])])
    pipe = make_pipeline(ct, TREE_FAMILIES[family]()).fit(df, target_for(family, y))
    imported = check_predictions(pipe, df)
    age = imported.model.space.features[imported.model.space.feature_index("age")]
    assert age.thresholds and 17 <= min(age.thresholds) and max(age.thresholds) <= 90  # years, not z-scores
    assert not age.float32  # the cut is in float64 input units; the float32 rounding is inside it


@pytest.mark.parametrize("family", ["tree", "forest", "lgbm"])
def test_a_decreasing_scale_flips_the_side(family: str) -> None:
    df, y = frame(22, n=300)
    ct = ColumnTransformer([("num", StandardScaler(), ["age", "hours"])], remainder="drop")
    pipe = make_pipeline(ct, TREE_FAMILIES[family]()).fit(df, target_for(family, y))
    scaler = pipe[0].named_transformers_["num"]
    scaler.scale_ = scaler.scale_ * np.array([-1.0, 1.0])  # age now decreases through the scaler
    imported = check_predictions(pipe, df)
    trees = [imported.model] if family == "tree" else imported.model.trees
    top = imported.model.space.features[0].size - 1  # age has no missing value: its last interval
    on_age = [b for t in trees for f, b in zip(t.arrays.feature, t.arrays.branches) if f == 0]
    assert on_age
    for (left, _), (right, _) in on_age:  # the left side (the scaled value is small) holds the large ages
        assert left >> top & 1 and right & 1


def test_a_scaler_with_a_function_is_refused_with_the_reason() -> None:
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import FunctionTransformer, PolynomialFeatures

    df, y = frame(23, n=100)
    nums = ["age", "hours"]
    for step, reason in [(FunctionTransformer(np.log1p), "applies an arbitrary function"),
                         (PCA(n_components=1), "mixes all the columns.*kcxai.from_sklearn"),
                         (PolynomialFeatures(), "multiplies columns")]:
        pipe = make_pipeline(ColumnTransformer([("f", step, nums)]), RandomForestClassifier(n_estimators=2)).fit(df, y)
        with pytest.raises(InvalidTypeError, match=rf"Step 'f' \({type(step).__name__} on columns \['age', 'hours'\]\) "
                                                   rf"{reason}.*Supported steps: encoders: OrdinalEncoder"):
            from_pipeline(pipe)
    scaled_then_encoded = make_pipeline(
        ColumnTransformer([("f", make_pipeline(StandardScaler(), OneHotEncoder()), ["age"])]),
        RandomForestClassifier(n_estimators=2)).fit(df, y)
    with pytest.raises(InvalidTypeError, match=r"encodes it after a scaler, column 'age'.*on the original column"):
        from_pipeline(scaled_then_encoded)


def test_numbers_run_through_their_part_only_as_through_the_whole() -> None:
    df, y = frame(24, n=200)
    ct = ColumnTransformer([("oh", OneHotEncoder(sparse_output=False), ["sex", "work"]),
                            ("num", RobustScaler(), ["age", "hours"])], remainder="passthrough")
    pipe = make_pipeline(ct, StandardScaler(), TREE_FAMILIES["forest"]()).fit(df, y)
    layout = layout_of(pipe)[2]
    z = [k for k, o in enumerate(layout.outs) if o.kind == "number"]
    pre = Preprocessing(layout.steps, layout.names, True, ["Male", 0.0, "gov", 0.0, 0.0], [True, False, True, False,
                                                                                        False])
    values = {1: np.random.default_rng(0).normal(50, 30, 64).tolist(), 3: np.linspace(-1e6, 1e6, 64).tolist(),
              4: list(range(64))}
    assert np.array_equal(pre.run(values)[:, z], pre.run_numbers(values, z))
