"""Every tree family ``from_sklearn`` takes, at the end of a pipeline of every encoder, scaler and imputer:
predictions equal ``pipeline.predict`` on whole tables, at and beside every cut; random small pipelines
(hypothesis) likewise."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    RobustScaler,
    StandardScaler,
)

from kcxai import InvalidTypeError
from kcxai.models import BoostedTrees, DecisionTree, RandomForest, from_pipeline
from kcxai.models.imports.sklearn import FAMILIES, SUPPORTED
from tests._support.pipelines import one_thread  # noqa: F401 - an autouse fixture
from tests._support.pipelines import (
    NAN_FAMILIES, TREE_FAMILIES, check_predictions, frame, target_for,
)

KB: dict[str, Any] = {"quantile_method": "averaged_inverted_cdf"}
SCALERS = {"standard": StandardScaler, "minmax": MinMaxScaler, "robust": RobustScaler, "maxabs": MaxAbsScaler}

PREPROCESSORS = {
    "onehot+passthrough": lambda: ColumnTransformer(
        [("oh", OneHotEncoder(sparse_output=False), ["sex", "work"])], remainder="passthrough"),
    "ordinal+bins+scaled": lambda: ColumnTransformer(
        [("ord", OrdinalEncoder(), ["sex", "work", "edu"]),
         ("kb", KBinsDiscretizer(n_bins=4, encode="onehot-dense", **KB), ["age"]),
         ("num", StandardScaler(), ["hours"])]),
    "imputed+scaled-chain": lambda: ColumnTransformer(
        [("cat", make_pipeline(SimpleImputer(strategy="most_frequent"), OneHotEncoder(sparse_output=False)),
          ["sex", "work"]),
         ("num", make_pipeline(SimpleImputer(strategy="median"), RobustScaler(), MinMaxScaler()), ["age", "hours"]),
         ("edu", "drop", ["edu"])]),
}


@pytest.mark.parametrize("pre", sorted(PREPROCESSORS))
@pytest.mark.parametrize("family", sorted(TREE_FAMILIES))
def test_every_tree_family_behind_every_encoder(pre: str, family: str) -> None:
    df, y = frame(11, n=300)
    pipe = make_pipeline(PREPROCESSORS[pre](), TREE_FAMILIES[family]()).fit(df, target_for(family, y))
    imported = check_predictions(pipe, df)
    kind = {"tree": DecisionTree, "forest": RandomForest, "extra-trees": RandomForest}.get(family, BoostedTrees)
    assert isinstance(imported.model, kind)
    used = [c for c in df.columns if not (pre == "imputed+scaled-chain" and c == "edu")]
    assert imported.model.space.names == tuple(used)  # one feature per original column


@pytest.mark.parametrize("family", sorted(TREE_FAMILIES))
def test_one_encoder_alone_and_a_scaler_after_the_encoding(family: str) -> None:
    df, y = frame(12, n=300)
    cats = df[["sex", "work", "edu"]]
    alone = make_pipeline(OneHotEncoder(sparse_output=False), TREE_FAMILIES[family]()).fit(cats, target_for(family, y))
    check_predictions(alone, cats)
    # a scaler after the ColumnTransformer scales the one-hot columns and the numbers alike
    after = make_pipeline(PREPROCESSORS["onehot+passthrough"](), StandardScaler(), TREE_FAMILIES[family]())
    check_predictions(after.fit(df, target_for(family, y)), df)


@settings(max_examples=12)
@given(seed=st.integers(0, 10_000), family=st.sampled_from(sorted(TREE_FAMILIES)),
       cat=st.sampled_from(["onehot", "ordinal", "onehot-drop"]), num=st.sampled_from(["passthrough", "bins",
                                                                                       *sorted(SCALERS)]),
       chained=st.booleans(), missing=st.sampled_from([0.0, 0.1]))
def test_random_pipelines_predict_like_sklearn(seed: int, family: str, cat: str, num: str, chained: bool,
                                               missing: float) -> None:
    df, y = frame(seed, n=200, missing=missing)
    encoder = {"onehot": OneHotEncoder(sparse_output=False), "ordinal": OrdinalEncoder(),
               "onehot-drop": OneHotEncoder(drop="first", sparse_output=False)}[cat]
    number: Any = {"passthrough": "passthrough", "bins": KBinsDiscretizer(n_bins=3, encode="ordinal", **KB)}.get(
        num) or SCALERS[num]()
    native = missing and family in NAN_FAMILIES and num != "bins" and not chained
    steps: list[Any] = [] if native else [SimpleImputer(strategy="median")]
    if chained and num in SCALERS:
        steps.append(StandardScaler())
    numbers = make_pipeline(*steps, number) if steps else number
    cats = make_pipeline(SimpleImputer(strategy="most_frequent"), encoder) if missing else encoder
    ct = ColumnTransformer([("cat", cats, ["sex", "work"]), ("num", numbers, ["age", "hours"])],
                           remainder="passthrough")
    pipe = make_pipeline(ct, TREE_FAMILIES[family]()).fit(df, target_for(family, y))
    imported = check_predictions(pipe, df, seed=seed, missing_columns=["age", "hours"] if native else ())
    if missing:
        assert all(f.missing_index is not None for f in imported.model.space.features if f.name in ("sex", "age"))


def test_unsupported_classifiers_list_the_registry() -> None:
    from sklearn.svm import SVC

    df, y = frame(13, n=100)
    pipe = make_pipeline(PREPROCESSORS["onehot+passthrough"](), SVC()).fit(df, y)
    with pytest.raises(InvalidTypeError) as info:
        from_pipeline(pipe)
    message = str(info.value)
    assert message.startswith("The pipeline ends in SVC, which kcxai does not import.")
    assert message.endswith(f"Supported estimators: {', '.join(SUPPORTED)}.")
    assert len(SUPPORTED) == len(FAMILIES) and "GradientBoostingClassifier" in message
