"""Soft-voting forests against scikit-learn's own predictions: how often kcxai's exact soft vote differs.

Run: ``python benchmarks/bench_soft_vote.py [--forests 40] [--rows 2000] [--seed 0]``; ``--smoke`` runs tiny
sizes in seconds (a test runs it).

Per data set (scikit-learn's breast_cancer, wine, digits, iris, and a mixed three-class table like the pipeline
tests' behind a one-hot ``ColumnTransformer``), ``--forests`` random ``RandomForestClassifier`` and
``ExtraTreesClassifier`` (2-60 trees, depth 2-12 or unbounded, ``min_samples_leaf`` 1-20, bootstrap or not,
``max_samples``) are fitted and imported. Each is asked for the training rows and ``--rows`` random rows whose
columns are drawn independently from the data's values (new combinations of leaves). Two leaf readings are
compared with ``clf.predict``, in the same process:

* ``floats``: each leaf's float64 ``tree_.value`` taken as the rational it stores (kcxai before 2026-11-28);
* ``all ratios``: each leaf's probabilities the ratios of its training counts, whatever their denominator;
* ``ratios, lcm <= 2**48`` (the import now, :func:`kcxai.models.imports._sklearn.leaf_probabilities`): the
  ratios of the leaves of smallest denominators while the lcm of the denominators stays at most
  :data:`~kcxai.models.imports._sklearn.MAX_SCALE`, the floats elsewhere.

It prints, per data set and reading, the rows predicted otherwise than scikit-learn and the bits of the
forest's integer scale (the least common multiple of its leaves' denominators, which the engines' encodings
grow with: median and largest over the forests); for the import, how many rows have an exact tie between the
two best classes and how many of the disagreements are such ties that scikit-learn's float sums break (every
disagreement must lie within ``RandomForest.float_margin``, which it checks).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from kcxai.data import encode_rows
from kcxai.models import RandomForest, from_pipeline, from_sklearn
from kcxai.models._numbers import lcm_of_denominators
from kcxai.models.forest import leaf_dicts
from kcxai.models.imports._sklearn import leaf_probabilities


def _mixed(seed: int, n: int = 300) -> tuple[pd.DataFrame, np.ndarray]:
    """A mixed table of string, categorical and numeric columns with a noisy three-class target."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"sex": rng.choice(["Male", "Female"], n), "age": rng.integers(17, 90, n).astype(float),
                       "work": rng.choice(["gov", "private", "self", "none"], n),
                       "hours": np.round(rng.normal(40, 10, n), 1), "edu": rng.integers(0, 5, n)})
    y = np.where(((df["sex"] == "Male") & (df["age"] > 40)) | (df["work"] == "self"), ">50K", "<=50K")
    return df, np.where(rng.random(n) < 0.15, "other", y)


def _data(name: str, seed: int) -> tuple[Any, np.ndarray]:
    loaders: dict[str, Callable[..., Any]] = {"breast_cancer": load_breast_cancer, "wine": load_wine,
                                              "digits": load_digits, "iris": load_iris}
    if name == "mixed":
        return _mixed(seed)
    X, y = loaders[name](return_X_y=True)
    return X, y


def _forest(rng: np.random.Generator) -> Any:
    cls = ExtraTreesClassifier if rng.random() < 0.3 else RandomForestClassifier
    bootstrap = bool(rng.random() < 0.8) or cls is RandomForestClassifier and bool(rng.random() < 0.5)
    return cls(n_estimators=int(rng.integers(2, 61)), max_depth=[None, 2, 3, 4, 6, 8, 12][int(rng.integers(7))],
               min_samples_leaf=int(rng.choice([1, 1, 2, 3, 5, 10, 20])), bootstrap=bootstrap,
               max_samples=float(rng.choice([0.3, 0.7])) if bootstrap and rng.random() < 0.3 else None,
               random_state=int(rng.integers(2**31)))


def _random_rows(X: Any, n: int, rng: np.random.Generator) -> Any:
    """Rows whose columns are drawn independently from the column's values."""
    if isinstance(X, pd.DataFrame):
        return pd.DataFrame({c: X[c].to_numpy()[rng.integers(len(X), size=n)] for c in X.columns})
    return np.stack([X[rng.integers(len(X), size=n), j] for j in range(X.shape[1])], axis=1)


def _as_floats(model: RandomForest, clf: Any) -> RandomForest:
    """The same forest with each leaf's float64 ``tree_.value`` taken as the rational it stores."""
    k = len(model.classes)
    values = [np.asarray(e.tree_.value[:, 0, :k]) for e in clf.estimators_]
    return RandomForest(model.space, model.classes, model.trees, voting="soft",
                        leaf_scores=leaf_dicts(model.trees, values))


def _all_ratios(model: RandomForest, clf: Any) -> RandomForest:
    """The same forest with every leaf's count ratios, whatever their denominator."""
    k = len(model.classes)
    values = leaf_probabilities([e.tree_ for e in clf.estimators_], k, max_scale=None)
    return RandomForest(model.space, model.classes, model.trees, voting="soft",
                        leaf_scores=leaf_dicts(model.trees, values))


def scale_bits(model: RandomForest) -> int:
    """The bits of the forest's integer scale (the lcm of its leaf scores' denominators)."""
    return lcm_of_denominators({id(x): x for t in model._terms for row in t for x in row}.values()).bit_length()


READINGS = ("floats", "all ratios", "ratios, lcm <= 2**48")


def _tied(model: RandomForest, points: np.ndarray) -> np.ndarray:
    """Whether the two best exact summed scores tie at each point (predict_points' integer scores)."""
    ties = np.zeros(len(points), dtype=bool)
    for i, p in enumerate(points.tolist()):
        s = [0] * len(model.classes)
        for blk, t in zip(model._blocks, model._iterms):
            for c, x in enumerate(t[blk.outcome(p)]):
                s[c] += x
        best = sorted(s, reverse=True)
        ties[i] = len(best) > 1 and best[0] == best[1]
    return ties


def _near(model: RandomForest, points: np.ndarray, wrong: np.ndarray, want: np.ndarray) -> int:
    """How many of the ``wrong`` points have the winner and scikit-learn's class within ``float_margin``."""
    margin = model.float_margin
    assert margin is not None
    near = 0
    for i in wrong.tolist():
        s = model.scores_point(points[i].tolist())
        near += abs(s[model.predict_point(points[i].tolist())] - s[int(want[i])]) <= margin
    return near


def run(data: list[str], forests: int, rows: int, seed: int) -> None:
    for name in data:
        X, y = _data(name, seed)
        rng = np.random.default_rng(seed)
        totals = {"rows": 0, "ties": 0, "tie_wrong": 0, "near": 0, "floats_leaves": 0}
        wrongs = dict.fromkeys(READINGS, 0)
        bits: dict[str, list[int]] = {r: [] for r in READINGS}
        cpu = time.process_time()
        for _ in range(forests):
            clf = _forest(rng)
            if isinstance(X, pd.DataFrame):
                pipe = make_pipeline(ColumnTransformer([("oh", OneHotEncoder(sparse_output=False), ["sex", "work"])],
                                                       remainder="passthrough"), clf).fit(X, y)
                imported = from_pipeline(pipe)
                model = imported.model
                table = pd.concat([X, _random_rows(X, rows, rng)], ignore_index=True)
                points = np.asarray([model.space.encode(x) for x in imported.reader.read(table).instances],
                                    dtype=np.int64)
                want_labels = pipe.predict(table)
            else:
                clf.fit(X, y)
                model = from_sklearn(clf)
                table = np.concatenate([X, _random_rows(X, rows, rng)])
                points = encode_rows(model.space, table)
                want_labels = clf.predict(table)
            index = {c: i for i, c in enumerate(model.classes)}
            want = np.asarray([index[c.item() if hasattr(c, "item") else c] for c in want_labels])
            for reading, m in zip(READINGS, (_as_floats(model, clf), _all_ratios(model, clf), model)):
                wrongs[reading] += int(np.count_nonzero(m.predict_points(points) != want))
                bits[reading].append(scale_bits(m))
            wrong = np.flatnonzero(model.predict_points(points) != want)
            ties = _tied(model, points)
            totals["rows"] += len(points)
            totals["ties"] += int(np.count_nonzero(ties))
            totals["tie_wrong"] += int(np.count_nonzero(ties[wrong]))
            totals["near"] += _near(model, points, wrong, want)
            totals["floats_leaves"] += int(model.weights_from_floats)
        cpu = time.process_time() - cpu
        n = totals["rows"]
        print(f"{name}: {forests} forests, {n} rows ({cpu:.1f} s CPU)")
        for reading in READINGS:
            b = sorted(bits[reading])
            print(f"  {reading:21s} {wrongs[reading]:4d} of {n} rows predicted otherwise than scikit-learn; scale "
                  f"{b[len(b) // 2]} bits (median), {b[-1]} (largest)")
        now = wrongs[READINGS[-1]]
        print(f"    import: exact ties of the two best classes: {totals['ties']} rows; disagreements that are exact "
              f"ties broken by scikit-learn's float sums: {totals['tie_wrong']} of {now}; within float_margin: "
              f"{totals['near']} of {now}; forests with some leaf kept as floats: {totals['floats_leaves']}")
        if totals["near"] != now:
            print("  ERROR: a disagreement outside float_margin")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--forests", type=int, default=40, help="random forests per data set")
    ap.add_argument("--rows", type=int, default=2000, help="random rows per forest, besides the data's own")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", nargs="*", default=["breast_cancer", "wine", "digits", "iris", "mixed"])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, seconds (run by the tests)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.forests, args.rows, args.data = 2, 100, ["iris", "mixed"]
    print(f"{platform.python_version()} on {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at start")
    run(args.data, args.forests, args.rows, args.seed)
    print(f"load average {os.getloadavg()[0]:.1f} at end")


if __name__ == "__main__":
    main()
