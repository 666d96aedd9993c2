"""The exact probe of tree ensembles: which front-door models are answered exactly, under the counted-work probe
and under the wall-clock probe it replaced (run in the same process, on the same imported model).

For each model (the adult pipelines of ``bench_front_door``: the default RandomForest, GradientBoosting
100x3, HistGradientBoosting, XGBoost 100x6; and RandomForest(100), GradientBoosting, HistGradientBoosting and
XGBoost on scikit-learn's breast_cancer, wine and digits), imported as the Explainer imports it (a product
distribution fitted on the training rows), it prints:

* ``counted``: the chooser's verdict (:func:`kcxai.engines.choose.choose`, the default
  :data:`~kcxai.engines.choose.PROBE`: 3 s of counted work), the work counted, and the probe's CPU seconds;
* ``clock``: the former probe, ``compile_model(model, "obdd", max_seconds=3, max_memory=1 GiB)`` (the wall
  clock), its verdict and CPU seconds;

and the load average beside them. A verdict that differs between the two is marked.

    python benchmarks/bench_probe.py [--datasets adult,breast_cancer,wine,digits] [--models Boost] [--smoke]

``--smoke`` runs two tiny forests on breast_cancer (seconds; a test runs it so that the benchmark keeps
working).
"""

from __future__ import annotations

import argparse
import os
import re
import time
from typing import Any

from kcxai.experiments._ensemble_models import front_door_estimators

#: The former probe's options (the wall clock), as the chooser passed them.
CLOCK = {"max_seconds": 3.0, "max_memory": 1 << 30}


def _sklearn_estimators(smoke: bool) -> list[tuple[str, Any]]:
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier, RandomForestClassifier

    if smoke:
        return [("RandomForest 3x2", RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0)),
                ("RandomForest 8x4", RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0))]
    out: list[tuple[str, Any]] = [
        ("RandomForest 100", RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1)),
        ("GradientBoosting default", GradientBoostingClassifier(random_state=0)),
        ("HistGradientBoosting default", HistGradientBoostingClassifier(random_state=0))]
    try:
        from xgboost import XGBClassifier  # optional: the boost extra
    except ImportError:
        print("XGBoost is not installed (pip install -e '.[boost]'): its rows are left out")
        return out
    out.append(("XGBoost default", XGBClassifier(random_state=0, n_jobs=1)))
    return out


def _data(name: str, smoke: bool) -> tuple[Any, Any, Any]:
    """Training rows, labels and a pipeline factory for ``name``."""
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    if name == "adult":
        import kcxai
        from sklearn.compose import ColumnTransformer
        from sklearn.preprocessing import OneHotEncoder

        ds = kcxai.datasets.load_dataset("adult", as_frame=True)
        X, y = ds.X.iloc[:20_000], ds.y.iloc[:20_000]
        coded = [c for c in X.columns if X[c].dtype.kind not in "fiu"]

        def adult(est: Any) -> Any:
            enc = ColumnTransformer([("onehot", OneHotEncoder(handle_unknown="ignore", sparse_output=False), coded)],
                                    remainder="passthrough")
            return make_pipeline(enc, est)
        return X, y, adult
    from sklearn import datasets

    X, y = getattr(datasets, f"load_{name}")(return_X_y=True, as_frame=True)
    return X, y, lambda est: make_pipeline(SimpleImputer(), est)


def _probe(dataset: str, name: str, est: Any, X: Any, y: Any, pipeline: Any) -> None:
    import kcxai
    from kcxai.engines.choose import PROBE, choose
    from kcxai.models.imports.route import import_model

    if name.startswith("XGBoost") and y.dtype.kind not in "iu":  # XGBoost takes the classes 0..k-1
        y = y.astype("category").cat.codes
    pipe = pipeline(est).fit(X, y)
    model, _ = import_model(pipe, X, distribution="auto")
    c0, t0 = time.process_time(), time.perf_counter()
    counted = choose(model, "counts")
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    work = counted.compiled.stats["work"] if counted.compiled is not None else None
    verdict = "exact" if counted.compiled is not None else "refused"
    c0, t0 = time.process_time(), time.perf_counter()
    try:
        kcxai.compile_model(model, "obdd", **CLOCK)
        clock = "exact"
    except kcxai.CompilationLimitError as e:
        clock = f"refused ({getattr(e, 'limit', '?')})"
    clock_cpu, clock_wall = time.process_time() - c0, time.perf_counter() - t0
    stop = re.search(r"exceeded (max_\w+)", counted.reason)
    verdict += "" if counted.compiled is not None else f" ({stop.group(1) if stop else '?'})"
    mark = "" if verdict.split(" ")[0] == clock.split(" ")[0] else "  <- differs"
    print(f"{dataset:>13} {name:<28} counted: {verdict:<18} work {work if work is None else f'{work:,}'} "
          f"(budget {PROBE.max_work():,}), CPU {cpu:.2f} s, wall {wall:.2f} s | clock: {clock}, CPU "
          f"{clock_cpu:.2f} s, wall {clock_wall:.2f} s | load {os.getloadavg()[0]:.1f}{mark}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", default="adult,breast_cancer,wine,digits",
                   help="comma-separated: adult (the front-door pipelines), breast_cancer, wine, digits")
    p.add_argument("--models", default="", help="only the models whose name contains one of these comma-separated "
                   "words (case-insensitive), e.g. 'Boost'")
    p.add_argument("--smoke", action="store_true", help="two tiny forests on breast_cancer: seconds")
    args = p.parse_args(argv)
    wanted = [w.strip().lower() for w in args.models.split(",") if w.strip()]
    names = ["breast_cancer"] if args.smoke else [d.strip() for d in args.datasets.split(",") if d.strip()]
    print(f"the exact probe, counted work against the wall clock; {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}")
    for dataset in names:
        X, y, pipeline = _data(dataset, args.smoke)
        models = (front_door_estimators(False) if dataset == "adult" else _sklearn_estimators(args.smoke))
        for name, est in models:
            if wanted and not any(w in name.lower() for w in wanted):
                continue
            _probe(dataset, name, est, X, y, pipeline)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
