"""The ``sampling`` language on adult: batched vs point-by-point classification of the samples.

Run: ``python benchmarks/bench_sampling.py [--instances 3] [--delta 0.05]``

For a scikit-learn ``RandomForestClassifier`` (10 trees of depth 3, 100 of depth 3, 100 of depth 6)
and an ``XGBClassifier`` (100 trees of depth 6, if installed), all fitted on adult, prints:

* ``predict_points`` on 4,096 random encoded points vs a loop of ``predict_point`` over them (ms,
  ratio), and that both give the same classes;
* ms per sampling ``min_idrs`` explanation with the oracle's batched classification (one
  ``predict_points`` call per look) and with the point-by-point path it replaced
  (``oracle.batched = False``), on the same instances and seeds, the ratio, and whether the
  explanations are the same (they must be: the draws are the same and classification is exact).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import kcxai


def predict_figures(model: Any, n: int = 4096) -> None:
    rng = np.random.default_rng(0)
    pts = np.stack([rng.integers(0, s, size=n) for s in model.space.domain_sizes], axis=1)
    model.predict_points(pts[:8])  # build the lookups once, as the oracle does on its first look
    t = time.perf_counter()
    got = model.predict_points(pts)
    batched = time.perf_counter() - t
    rows = pts.tolist()
    t = time.perf_counter()
    want = [model.predict_point(tuple(p)) for p in rows]
    loop = time.perf_counter() - t
    same = got.tolist() == want
    print(f"  predict_points, {n:,} points: {1e3 * batched:8.1f} ms   loop of predict_point: {1e3 * loop:8.1f} ms"
          f"   ratio {loop / batched:6.1f}x   same classes: {same}")


def explain_figures(model: Any, xs: np.ndarray, delta: Fraction) -> None:
    times: dict[bool, list[float]] = {True: [], False: []}
    sets: dict[bool, list[tuple[int, ...]]] = {True: [], False: []}
    for batched in (True, False):
        for seed, x in enumerate(xs):
            c = kcxai.compile_model(model, "sampling", seed=seed)
            c.oracle.batched = batched
            t = time.perf_counter()
            e = kcxai.min_idrs(c, x, delta)
            times[batched].append(time.perf_counter() - t)
            sets[batched].append(e.features)
    new, old = statistics.median(times[True]), statistics.median(times[False])
    print(f"  sampling min_idrs (delta {delta}), median of {len(xs)}: batched {1e3 * new:8.1f} ms   "
          f"point by point {1e3 * old:9.1f} ms   ratio {old / new:6.1f}x   same sets: {sets[True] == sets[False]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=3)
    parser.add_argument("--delta", type=Fraction, default=Fraction(1, 20))
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    data = kcxai.datasets.load_dataset("adult")
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    Xtr, Xte, ytr, _ = train_test_split(X, y, test_size=0.25, random_state=0)
    xs = Xte[:args.instances]
    models: list[tuple[str, Any]] = []
    for n, d in ((10, 3), (100, 3), (100, 6)):
        rf = RandomForestClassifier(n_estimators=n, max_depth=d, random_state=0, n_jobs=2).fit(Xtr, ytr)
        models.append((f"RandomForestClassifier({n}, max_depth={d}), soft voting", kcxai.from_sklearn(rf)))
    try:
        import xgboost as xgb

        clf = xgb.XGBClassifier(n_estimators=100, max_depth=6, n_jobs=2).fit(Xtr, ytr)
        models.append(("XGBClassifier(100, max_depth=6)", kcxai.from_sklearn(clf)))
    except ImportError:
        print("XGBoost: not installed (pip install 'kcxai[boost]'); skipped")
    print(f"adult: {len(Xtr):,} training rows, domain sizes {models[0][1].space.domain_sizes}")
    for name, model in models:
        print(name)
        predict_figures(model)
        explain_figures(model, xs, args.delta)


if __name__ == "__main__":
    main()
