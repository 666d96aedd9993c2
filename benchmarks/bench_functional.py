"""The functional door in a loop over rows against the Explainer, on scikit-learn's default RandomForest.

A model passed to ``kcxai.ensemble_axp`` / ``kcxai.min_idrs(model, x, 0)`` gets its engine from the one
chooser (``kcxai.engines.choose``), built on the first call and kept by the model, as the Explainer keeps
its own. This prints, for the default forest (100 trees, unbounded depth) on adult behind a one-hot
encoder (``--data adult``, the default: 20,000 training rows; the pipeline imported with
``kcxai.from_pipeline``) or on scikit-learn's breast_cancer data (``--data breast_cancer``: 30 numeric
features), one model object per door (so each builds its engine once), CPU seconds
(``time.process_time``) over ``--rows`` held-out rows:

* ``ensemble_axp(model, x)`` in a loop, ``min_idrs(model, x, 0)`` in a loop (which first tries exact
  counts within the probe budget, then takes the same decision engine), and ``Explainer(model).explain``
  of the same rows with ``method="axp"``: total (the first row builds the engine) and median per row
  after the first;
* the same loop with the engine built again for every call (``compile_model(model, engine)`` per row:
  what ``ensemble_axp`` did before the engine was kept by the model), as the baseline of the ratio;
* the default deletion order of ``axp`` over a decision engine (fewer values first) against index order,
  on the same engine: median CPU per AXp and mean size (the rule of
  ``kcxai.explain._methods.DEFAULT_ORDER``);
* whether every door answered by the same engine gives the same sets (``same sets: True``): the
  default order of a method is the same whichever name calls it. A forest that compiles within the
  probe budget (the smoke mode's) is answered by exact counts through ``min_idrs`` and the Explainer.

    python benchmarks/bench_functional.py [--rows 10] [--data adult|breast_cancer] [--smoke]

No time limit (``max_seconds=None``): CPU seconds, not wall-clock seconds, are what is compared.
``--smoke``: a 5-tree forest of depth 3 on 3 rows, adult on 2,000 training rows (seconds; a test runs it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _breast_cancer(smoke: bool) -> tuple[Callable[[], tuple[Any, list[Any]]], str]:
    """A maker of (model, rows) for one door, fresh each time, and the forest's name."""
    import kcxai
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_breast_cancer(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:400], order[400:]
    rf = _estimator(RandomForestClassifier, smoke).fit(X[train], y[train])
    return lambda: (kcxai.from_sklearn(rf), [list(x) for x in X[test]]), "breast_cancer"


def _adult(smoke: bool) -> tuple[Callable[[], tuple[Any, list[Any]]], str]:
    import kcxai
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    ds = kcxai.datasets.load_dataset("adult", as_frame=True)
    n_train = 2000 if smoke else 20_000
    X_train, y_train, X_test = ds.X.iloc[:n_train], ds.y.iloc[:n_train], ds.X.iloc[n_train:]
    coded = [c for c in X_train.columns if X_train[c].dtype.kind not in "fiu"]
    encode = ColumnTransformer([("coded", OneHotEncoder(handle_unknown="ignore", sparse_output=False), coded)],
                               remainder="passthrough")
    pipe = make_pipeline(encode, _estimator(RandomForestClassifier, smoke)).fit(X_train, y_train)

    def make() -> tuple[Any, list[Any]]:
        imported = kcxai.from_pipeline(pipe)
        return imported.model, imported.reader.read(X_test.iloc[:100]).instances

    return make, f"adult one-hot ({n_train} training rows)"


def _estimator(cls: Any, smoke: bool) -> Any:
    return cls(n_estimators=5, max_depth=3, random_state=0) if smoke else cls(random_state=0, n_jobs=1)


def _timed(call: Callable[[Any], Any], rows: list[Any]) -> tuple[list[float], list[Any]]:
    """CPU seconds of ``call(row)`` for each row, and what it returned."""
    seconds, out = [], []
    for x in rows:
        c = time.process_time()
        out.append(call(x))
        seconds.append(time.process_time() - c)
    return seconds, out


def _line(label: str, seconds: list[float], base: float | None = None) -> str:
    rest = statistics.median(seconds[1:]) if len(seconds) > 1 else seconds[0]
    ratio = f", speed-up over the baseline {base / sum(seconds):6.1f}x" if base else ""
    return f"  {label:46} total {sum(seconds):8.3f} s CPU, median after the first row {rest:7.4f} s{ratio}"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=10, help="held-out rows explained by each door")
    p.add_argument("--data", choices=("adult", "breast_cancer"), default="adult", help="the data (default adult)")
    p.add_argument("--smoke", action="store_true", help="a tiny forest, 3 rows: seconds")
    args = p.parse_args(argv)
    import kcxai
    from kcxai.engines.choose import decision_compiled

    make, data = (_adult if args.data == "adult" else _breast_cancer)(args.smoke)
    name = "RandomForest 5x3" if args.smoke else "RandomForest default (100 trees, unbounded depth)"
    baseline_model, rows = make()
    rows = rows[:3 if args.smoke else args.rows]
    print(f"{data}, {name}; {len(rows)} held-out rows; {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}")

    engine = decision_compiled(make()[0]).language  # the chooser's engine for this forest
    base, base_sets = _timed(lambda x: _rebuilt_axp(kcxai, baseline_model, engine, x), rows)
    print(f"decision engine chosen: {engine!r}; CPU seconds over the rows (the first row builds the engine):")
    print(_line("baseline: engine built again on every call", base))
    model = make()[0]
    alias, alias_sets = _timed(lambda x: _answer(kcxai.ensemble_axp(model, x, max_seconds=None)), rows)
    print(_line("kcxai.ensemble_axp(model, x) in a loop", alias, sum(base)))
    model = make()[0]
    general, general_sets = _timed(lambda x: _answer(kcxai.min_idrs(model, x, 0, max_seconds=None)), rows)
    print(_line("kcxai.min_idrs(model, x, 0) in a loop", general, sum(base)) + " (probe of exact counts included)")
    model = make()[0]
    c = time.process_time()
    explainer = kcxai.Explainer(model)
    result = explainer.explain(rows, method="axp", max_seconds=None)
    batch = time.process_time() - c
    door = "Explainer(model).explain(rows, method='axp')"
    print(f"  {door:46} total {batch:8.3f} s CPU (probe of exact counts and engine included), "
          f"speed-up over the baseline {sum(base) / batch:6.1f}x")
    doors = {"ensemble_axp": alias_sets, "min_idrs(delta=0)": general_sets, "Explainer": [_answer(e) for e in result],
             "baseline": base_sets}
    print("engines: " + ", ".join(f"{k} {sorted({lang for lang, _ in v})}" for k, v in doors.items()))
    pairs = [(a, b) for v in doors.values() for w in doors.values() for a, b in zip(v, w) if a[0] == b[0]]
    same = all(a[1] == b[1] for a, b in pairs)
    print(f"same sets: {same} (every door answered by the same engine, one default order)")

    compiled = decision_compiled(model)
    n = model.space.n_features
    fewest, fewest_sets = _timed(lambda x: kcxai.ensemble_axp(compiled, x, max_seconds=None).features, rows)
    index, index_sets = _timed(
        lambda x: kcxai.ensemble_axp(compiled, x, order=range(n), max_seconds=None).features, rows)
    print(f"deletion order of axp on the {engine!r} engine (engine built already), CPU seconds per AXp:")
    for label, secs, sets in (("fewer values first (the default)", fewest, fewest_sets),
                              ("index order", index, index_sets)):
        print(f"  {label:34} median {statistics.median(secs):7.4f} s, total {sum(secs):7.3f} s, mean size "
              f"{statistics.mean(len(s) for s in sets):5.2f}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


def _answer(e: Any) -> tuple[str, tuple[int, ...]]:
    return e.language, tuple(e.features)


def _rebuilt_axp(kcxai: Any, model: Any, engine: str, x: Any) -> tuple[str, tuple[int, ...]]:
    """An AXp on an engine built for this call only (what ``ensemble_axp(model, x)`` did before)."""
    compiled = kcxai.compile_model(model, engine)
    try:
        return _answer(kcxai.ensemble_axp(compiled, x, max_seconds=None))
    finally:
        compiled.close()


if __name__ == "__main__":
    main()
