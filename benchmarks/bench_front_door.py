"""Tree ensembles through the front door: scikit-learn pipelines on the adult DataFrame, one Explainer each.

For each model (the issue's four: the default RandomForest, GradientBoosting 100x3, HistGradientBoosting
default, XGBoost 100x6 when installed) behind a ColumnTransformer that one-hot encodes the string
categories, trained on 20,000 rows, it prints: the seconds until the Explainer is ready (import of the
pipeline, the probe of an exact counting language, and its verdict), the engine chosen for ``axp``
and for ``local_cdrs`` at precision 0.95, and the median and max seconds per explanation of each over
held-out rows. Every ``axp`` is checked against the pipeline's own ``predict``: points that agree with
the row on the explanation's columns, drawn at random in the original units, must all get the row's
class (``wrong`` counts the rows where one does not).

    python benchmarks/bench_front_door.py [--rows 10] [--models Boost] [--forest default --forest 20x8] [--smoke]

``--forest`` (repeatable) runs random forests of those sizes instead (``TREESxDEPTH``; ``default``:
scikit-learn's default forest, 100 trees of unbounded depth).
``--smoke`` runs two tiny models on a few rows (seconds; a test runs it so that the benchmark keeps
working).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from typing import Any

import numpy as np

from kcxai.experiments._ensemble_models import front_door_estimators


def _forest(size: str) -> tuple[str, Any]:
    from sklearn.ensemble import RandomForestClassifier

    if size == "default":
        return "RandomForest default", RandomForestClassifier(random_state=0, n_jobs=1)
    trees, depth = (int(k) for k in size.lower().split("x"))
    return f"RandomForest {trees}x{depth}", RandomForestClassifier(n_estimators=trees, max_depth=depth,
                                                                   random_state=0, n_jobs=1)




def _completions(explainer: Any, row: Any, features: tuple[int, ...], n: int, rng: np.random.Generator) -> Any:
    """``n`` rows agreeing with ``row`` on ``features`` (in the pipeline's input units), the others random."""
    import pandas as pd

    space = explainer.model_.space
    out = pd.DataFrame([row] * n).reset_index(drop=True)
    for f, feat in enumerate(space.features):
        if f in features:
            continue
        col = space.names[f]
        picks = rng.integers(0, feat.size, size=n)
        if feat.is_numeric:
            vals = []
            for k in picks:
                lo, hi = feat.values[k].low, feat.values[k].high  # (low, high]
                if math.isinf(lo) and math.isinf(hi):
                    lo, hi = -10.0, 10.0
                elif math.isinf(lo):
                    lo = hi - 10.0
                elif math.isinf(hi):
                    hi = lo + 10.0
                vals.append(float(rng.uniform(lo, hi)) if hi > lo else hi)
            out[col] = np.asarray(vals, dtype=out[col].dtype if out[col].dtype.kind == "f" else np.float64)
        else:
            out[col] = [feat.values[k] for k in picks]
    return out


def _run(name: str, est: Any, X_train: Any, y_train: Any, X_test: Any, rows: int, checks: int) -> None:
    import kcxai
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    coded = [c for c in X_train.columns if X_train[c].dtype.kind not in "fiu"]
    encode = ColumnTransformer([("coded", OneHotEncoder(handle_unknown="ignore", sparse_output=False), coded)],
                               remainder="passthrough")
    target = (y_train == ">50K").astype(int) if name.startswith("XGBoost") else y_train  # XGBoost takes 0..k-1
    pipe = make_pipeline(encode, est).fit(X_train, target)
    t = time.perf_counter()
    try:
        explainer = kcxai.Explainer(pipe, X_train)
    except kcxai.KcxaiError as err:
        print(f"{name:30} not explained: {type(err).__name__}: {str(err)[:160]}")
        return
    ready = time.perf_counter() - t
    print(f"{name:30} ready in {ready:6.2f} s; exact counts: {explainer.language_reason_[:110]}")
    rng = np.random.default_rng(0)
    for method, bound in (("axp", {}), ("local_cdrs", {"precision": 0.95})):
        t = time.perf_counter()
        engine = explainer.engine_for(method, **bound)
        prepared = time.perf_counter() - t
        times, sizes, wrong, approx, limited = [], [], 0, 0, 0
        for k in range(rows):
            row = X_test.iloc[k]
            t = time.perf_counter()
            try:
                e = explainer.explain_one(row, method=method, max_seconds=120, **bound)
            except kcxai.SearchLimitError:
                limited += 1
                times.append(120.0)
                continue
            times.append(time.perf_counter() - t)
            sizes.append(len(e))
            approx += e.approximate
            if method == "axp" and checks:
                pts = _completions(explainer, row, e.features, checks, rng)
                wrong += int((pipe.predict(pts) != pipe.predict(X_test.iloc[[k]])[0]).any())
        check = f", {wrong} rows with a completion predicted otherwise ({checks} each)" if method == "axp" else ""
        print(f"{'':30} {method:>10} via {engine.language:8} (prepared {prepared:5.2f} s): median "
              f"{statistics.median(times):7.3f} s, max {max(times):7.3f} s, {limited} at the 120 s limit, "
              f"median size {statistics.median(sizes) if sizes else '-'}, approximate {approx}/{rows}{check}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=10, help="held-out rows explained per model and method")
    p.add_argument("--train", type=int, default=20_000, help="training rows")
    p.add_argument("--checks", type=int, default=200, help="random completions checked per axp")
    p.add_argument("--forest", action="append", default=[], metavar="TREESxDEPTH",
                   help="random forests of these sizes instead ('default': scikit-learn's); repeatable")
    p.add_argument("--smoke", action="store_true", help="tiny models, 2 rows: seconds")
    p.add_argument("--models", default="", help="run only the models whose name contains one of these "
                   "comma-separated words (case-insensitive), e.g. 'Boost'")
    args = p.parse_args(argv)
    wanted = [w.strip().lower() for w in args.models.split(",") if w.strip()]
    import kcxai

    ds = kcxai.datasets.load_dataset("adult", as_frame=True)
    X, y = ds.X, ds.y
    n_train = 2000 if args.smoke else args.train
    rows = 2 if args.smoke else args.rows
    X_train, y_train, X_test = X.iloc[:n_train], y.iloc[:n_train], X.iloc[n_train:]
    print(f"adult as a DataFrame, one-hot string categories; {n_train} training rows; {rows} held-out rows per "
          f"cell; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    models = ([_forest(size) for size in args.forest] if args.forest and not args.smoke
              else front_door_estimators(args.smoke))
    for name, est in models:
        if wanted and not any(w in name.lower() for w in wanted):
            continue
        _run(name, est, X_train, y_train, X_test, rows, 20 if args.smoke else args.checks)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
