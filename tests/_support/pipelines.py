"""Tables, classifiers and checks for the pipeline tests: an imported pipeline must predict as
``pipeline.predict`` on whole tables, including rows on, just below and just above every cut."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from kcxai.models import RandomForest, from_pipeline


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """Fit with one thread: HistGradientBoosting's and LightGBM's thread pools on tiny data on a shared,
    loaded machine took 10-20 s a fit instead of milliseconds. Autouse in the modules that import it."""
    with threadpool_limits(limits=1):
        yield


def frame(seed: int, n: int = 400, *, missing: float = 0.0) -> tuple[pd.DataFrame, np.ndarray]:
    """A mixed-type table (string, categorical, float and int columns) and a three-class target; with
    ``missing``, that share of the cells of ``sex``, ``age`` and ``hours`` is missing."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "sex": pd.array(rng.choice(["Male", "Female"], n), dtype="str"),
        "age": rng.integers(17, 90, n).astype(float),
        "work": pd.Categorical(rng.choice(["gov", "private", "self", "none"], n)),
        "hours": np.round(rng.normal(40, 10, n), 1),
        "edu": rng.integers(0, 5, n),
    })
    y = np.where(((df["sex"] == "Male") & (df["age"] > 40)) | (df["work"] == "self"), ">50K", "<=50K")
    y = np.where(rng.random(n) < 0.15, "other", y)
    if missing:
        df["sex"] = df["sex"].astype(object)
        for col in ("sex", "age", "hours"):
            df.loc[rng.random(n) < missing, col] = np.nan
    return df, y


def _xgb() -> Any:
    xgb = pytest.importorskip("xgboost")
    return xgb.XGBClassifier(n_estimators=5, max_depth=3, n_jobs=1, random_state=0)


def _lgbm() -> Any:
    lgb = pytest.importorskip("lightgbm")
    return lgb.LGBMClassifier(n_estimators=5, num_leaves=8, min_child_samples=5, verbose=-1, random_state=0, n_jobs=1)


#: Small classifiers of every tree family kcxai imports (XGBoost and LightGBM skipped when not installed).
TREE_FAMILIES: dict[str, Callable[[], Any]] = {
    "tree": lambda: DecisionTreeClassifier(max_depth=6, random_state=0),
    "forest": lambda: RandomForestClassifier(n_estimators=4, max_depth=6, random_state=0),
    "extra-trees": lambda: ExtraTreesClassifier(n_estimators=3, max_depth=5, random_state=0),
    "gb": lambda: GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0),
    "hgb": lambda: HistGradientBoostingClassifier(max_iter=5, max_depth=3, random_state=0),
    "xgb": _xgb,
    "lgbm": _lgbm,
}

#: The families that route NaN natively (GradientBoostingClassifier refuses it).
NAN_FAMILIES = ("tree", "forest", "extra-trees", "hgb", "xgb", "lgbm")


def codes(y: np.ndarray) -> np.ndarray:
    """Class labels as 0 .. k-1 (XGBoost needs them)."""
    return np.unique(y, return_inverse=True)[1]


def target_for(name: str, y: np.ndarray) -> np.ndarray:
    return codes(y) if name == "xgb" else y


def rows_at_cuts(imported: Any, df: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Rows of ``df`` whose numbers are moved onto, just below and just above every cut of the model (numeric
    features) and every bin edge (binned columns)."""
    extra = []
    for reader in imported.reader.features:
        f = imported.model.space.features[imported.model.space.feature_index(reader.column)]
        cuts = np.asarray(list(f.thresholds or ()) + list(reader.edges), dtype=np.float64)
        if not cuts.size:
            continue
        for where in (-np.inf, None, np.inf):
            v = cuts if where is None else np.nextafter(cuts, where)
            rows = df.iloc[rng.integers(0, len(df), len(v))].copy()
            rows[reader.column] = v
            extra.append(rows)
    return pd.concat([df, *extra], ignore_index=True) if extra else df


def predicted(imported: Any, df: pd.DataFrame) -> np.ndarray:
    """The imported model's classes for the rows of ``df`` (through its reader, batched)."""
    model = imported.model
    points = np.array([model.space.encode(x) for x in imported.reader.read(df).instances])
    return np.asarray(model.classes, dtype=object)[model.predict_points(points)]


def check_predictions(pipe: Any, df: pd.DataFrame, *, seed: int = 0, **kw: Any) -> Any:
    """Import ``pipe`` and check its predictions on ``df`` and on rows at and beside every cut; one in every
    ten rows is also predicted point by point (``model.predict``).

    A soft-voting forest may differ from scikit-learn only at an exact tie of its two classes' summed leaf
    probabilities, which scikit-learn's float64 sums (added tree by tree) can break either way: 2/3 + 1 + 1/3
    against 1/3 + 1 + 2/3 sums to 1.9999999999999998 against 2.0 (seed 625 of the random pipelines)."""
    imported = from_pipeline(pipe, **kw)
    rows = rows_at_cuts(imported, df, np.random.default_rng(seed))
    want = np.asarray(pipe.predict(rows), dtype=object)
    got = predicted(imported, rows)
    wrong = np.flatnonzero(got != want)
    wrong = np.asarray([i for i in wrong.tolist() if not _float_broken_tie(imported, rows.iloc[[i]], want[i])],
                       dtype=np.int64)
    assert not wrong.size, f"{wrong.size} of {len(rows)} rows differ, e.g. {rows.iloc[int(wrong[0])].to_dict()}"
    some = rows.iloc[::10]
    got_some = [imported.model.predict(x) for x in imported.reader.read(some).instances]
    assert [g for g, w, row in zip(got_some, want[::10], range(0, len(rows), 10))
            if g != w and not _float_broken_tie(imported, rows.iloc[[row]], w)] == []
    return imported


def _float_broken_tie(imported: Any, row: pd.DataFrame, want: Any) -> bool:
    """Whether the imported soft-voting forest ties exactly, at ``row``, between its class and ``want``."""
    model = imported.model
    if not isinstance(model, RandomForest) or not model.float_sums:
        return False
    point = model.space.encode(imported.reader.read(row).instances[0])
    scores = model.scores_point(point)
    return bool(scores[model.predict_point(point)] == scores[list(model.classes).index(want)])
