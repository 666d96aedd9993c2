"""Tree ensembles at real size on adult: import time, AXp (delta = 0) per instance, PyXAI side by side.

Run: ``python benchmarks/bench_ensembles.py [--instances 10] [--pyxai-limit 120]``

Prints, for a default scikit-learn RandomForest (100 trees, unbounded depth)
and an XGBoost model (100 trees of depth 6):

* the import time of ``kcxai.from_sklearn``;
* the median time of one subset-minimal AXp (``kcxai.ensemble_axp`` with a
  prepared engine, so the per-model set-up is timed once, as PyXAI's), under the
  same time limit as PyXAI's (``--pyxai-limit``; a stopped AXp counts as the limit);
* PyXAI's ``sufficient_reason`` on the same forest and instances (when
  ``pyxai`` is installed), and the ratio of the medians. PyXAI's forests vote
  by majority, so the kcxai side is timed on the hard-voting import of the same
  trees as well; PyXAI minimises over threshold conditions, kcxai over
  features, so the sets differ in kind (both are delta = 0 reasons). PyXAI has
  no sufficient reason for boosted classifiers: its tree-specific reason (a
  sufficient, not necessarily minimal set) is timed as the nearest reference;
* a check of every AXp independent of kcxai: 2,000 random points agreeing with
  it, classified by the source library, must keep the class, and for every
  feature of the set the counterexample found when it is freed must change
  the library's class ("wrong" counts the failures).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from typing import Any, Callable

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import kcxai
from kcxai.explain import prepare_ensemble


def concrete(space: Any, point: Any) -> list[float]:
    """A value inside each value's interval, as the library reads it (float32 when the feature says so)."""
    out = []
    for f, k in zip(space.features, point):
        iv = f.values[k]
        v = iv.high if iv.high != float("inf") else iv.low + max(1.0, abs(iv.low))
        if f.float32 and np.float32(v) > v:
            v = float(np.nextafter(np.float32(v), np.float32(-np.inf)))
        out.append(float(v))
    assert space.encode(out) == tuple(point)
    return out


def check(engine: Any, model: Any, predict: Callable[[np.ndarray], np.ndarray], x: np.ndarray,
          feats: tuple[int, ...], rng: np.random.Generator, samples: int = 2000) -> int:
    """Failures of an AXp under the library's own predictions: sampled points, then minimality witnesses."""
    space = model.space
    point = space.encode(x)
    label = model.predict_point(point)
    want = predict(np.asarray([concrete(space, point)]))[0]
    wrong = 0
    pts = np.array([[point[i] if i in feats else rng.integers(space.features[i].size)
                     for i in range(space.n_features)] for _ in range(samples)])
    rows = np.asarray([concrete(space, p) for p in pts])
    wrong += int(np.any(predict(rows) != want))
    for i in feats:
        if not engine.changes(point, label, set(feats) - {i}):
            wrong += 1
            continue
        wrong += int(predict(np.asarray([concrete(space, engine.model_point())]))[0] == want)
    return wrong


def time_axps(name: str, model: Any, predict: Callable[[np.ndarray], np.ndarray], xs: np.ndarray,
              engine_name: str, limit: float) -> list[float]:
    """AXp times; an AXp stopped at ``limit`` seconds (kcxai.SearchLimitError) counts as ``limit``, as PyXAI's timeouts."""
    t = time.perf_counter()
    engine = prepare_ensemble(model, engine=engine_name)
    print(f"  {name}: engine {engine_name!r} prepared in {time.perf_counter() - t:.2f} s")
    rng = np.random.default_rng(0)
    times, sizes, wrong, timeouts = [], [], 0, 0
    for x in xs:
        t = time.perf_counter()
        try:
            e = kcxai.ensemble_axp(engine, x, max_seconds=limit)
        except kcxai.SearchLimitError:
            times.append(limit)
            timeouts += 1
            continue
        times.append(time.perf_counter() - t)
        sizes.append(len(e))
        wrong += check(engine, model, predict, x, e.features, rng)
    print(f"  {name}: AXp median {statistics.median(times):.3f} s (max {max(times):.2f} s), "
          f"median size {statistics.median(sizes) if sizes else '-'}, wrong {wrong} of {len(sizes)} checked, "
          f"{timeouts} timeouts at {limit} s")
    return times


def pyxai_times(clf: Any, xs: np.ndarray, method: str, limit: float) -> list[float] | None:
    argv, sys.argv = sys.argv, sys.argv[:1]  # PyXAI parses the command line when imported
    try:
        from pyxai import Explaining, Learning
    except ImportError:
        sys.argv = argv
        print("  PyXAI: not installed (pip install pyxai); skipped")
        return None
    sys.argv = argv
    t = time.perf_counter()
    _, model = Learning.ModelIO.import_models(clf, instances_type="tabular")
    print(f"  PyXAI: import {time.perf_counter() - t:.2f} s")
    explainer = Explaining.initialize(model, instance=xs[0])
    times, sizes, timeouts = [], [], 0
    for x in xs:
        t = time.perf_counter()
        explainer.set_instance(x)
        if method == "sufficient_reason":
            reason = explainer.sufficient_reason(time_limit=limit)
        else:
            # one greedy pass: with a time limit PyXAI's anytime search runs to the limit on every instance
            # (10.0 s at time_limit=10, 178 literals on the first adult instance)
            reason = explainer.tree_specific_reason(n_iterations=1)
        times.append(time.perf_counter() - t)
        timeouts += explainer.elapsed_time == Explaining.TIMEOUT or reason is None
        sizes.append(len(explainer.to_features(reason)) if reason is not None else -1)
    print(f"  PyXAI {method}: median {statistics.median(times):.3f} s (max {max(times):.2f} s), "
          f"median size {statistics.median(sizes)} features, {timeouts} timeouts at {limit} s")
    return times


def ratio(ours: list[float], theirs: list[float] | None, what: str) -> None:
    if theirs:
        print(f"  ratio PyXAI / kcxai ({what}): {statistics.median(theirs) / statistics.median(ours):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=10)
    parser.add_argument("--pyxai-limit", type=float, default=120.0)
    parser.add_argument("--skip-forest", action="store_true", help="only the XGBoost part")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    data = kcxai.datasets.load_dataset("adult")
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0)
    xs = Xte[:args.instances]

    if not args.skip_forest:
        forest(Xtr, ytr, Xte, xs, args.pyxai_limit)
    boosted(Xtr, ytr, Xte, xs, args.pyxai_limit)


def forest(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, xs: np.ndarray, limit: float) -> None:
    print("RandomForestClassifier(n_estimators=100), default depth, adult (36,592 training rows)")
    rf = RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=2).fit(Xtr, ytr)
    t = time.perf_counter()
    soft = kcxai.from_sklearn(rf)
    print(f"  import: {time.perf_counter() - t:.2f} s ({sum(e.tree_.node_count for e in rf.estimators_):,} nodes, "
          f"domain sizes {soft.space.domain_sizes})")
    assert (np.asarray(soft.predict_many(Xte[:2000])) == rf.predict(Xte[:2000])).all()
    hard = kcxai.models.RandomForest.from_sklearn(rf, voting="hard")

    def hard_predict(rows: np.ndarray) -> np.ndarray:
        votes = np.stack([e.predict(rows.astype(np.float32)) for e in rf.estimators_]).astype(int)
        counts = np.stack([(votes == k).sum(axis=0) for k in range(len(rf.classes_))])
        return rf.classes_[np.argmax(counts, axis=0)]

    ours_soft = time_axps("soft voting (sklearn's predict)", soft, rf.predict, xs, "search", limit)
    ours_hard = time_axps("hard voting (PyXAI's semantics)", hard, hard_predict, xs, "auto", limit)
    theirs = pyxai_times(rf, xs, "sufficient_reason", limit)
    ratio(ours_hard, theirs, "hard voting, sufficient reason")
    ratio(ours_soft, theirs, "soft voting vs PyXAI's hard voting")


def boosted(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, xs: np.ndarray, limit: float) -> None:
    try:
        import xgboost as xgb
    except ImportError:
        print("XGBoost: not installed (pip install 'kcxai[boost]'); skipped")
        return
    print("XGBClassifier(n_estimators=100, max_depth=6), adult")
    clf = xgb.XGBClassifier(n_estimators=100, max_depth=6, n_jobs=2).fit(Xtr, ytr)
    t = time.perf_counter()
    model = kcxai.from_sklearn(clf)
    print(f"  import: {time.perf_counter() - t:.2f} s")
    assert (np.asarray(model.predict_many(Xte)) == clf.predict(Xte)).all()
    ours = time_axps("XGBoost", model, clf.predict, xs, "search", limit)
    theirs = pyxai_times(clf, xs, "tree_specific_reason", limit)
    ratio(ours, theirs, "tree-specific reason (not an AXp) vs AXp")


if __name__ == "__main__":
    main()
