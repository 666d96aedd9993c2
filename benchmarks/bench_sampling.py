"""The ``sampling`` language on real-size tree ensembles (adult): prediction speed and explanation times.

Run: ``python benchmarks/bench_sampling.py [--rows 10] [--train 20000] [--distributions uniform product]``
(``--smoke``: tiny models and two rows, a few seconds; a test runs it).

For a default scikit-learn ``RandomForestClassifier`` (100 trees of unbounded depth),
``GradientBoostingClassifier`` (100 trees of depth 3), ``HistGradientBoostingClassifier`` (default) and
``XGBClassifier`` (100 trees of depth 6, if installed), fitted on the first ``--train`` adult rows (the
coded numeric array, ``kcxai.from_sklearn``), and for each distribution (``uniform``: the model's own;
``product``: fitted on the training rows, as ``kcxai.Explainer`` does by default), prints:

* the time to build the batched walk (the model's first ``predict_points`` call);
* ``predict_points`` in points per second on 4,096 points drawn from the distribution, with this
  version's walk and with the one it replaced (read from git at :data:`BEFORE`, in the same process),
  the ratio, and whether both give ``predict_point``'s classes;
* ms per ``kcxai.local_cdrs(kcxai.compile_model(model, "sampling"), x, 0.95)`` and per
  ``kcxai.min_idrs(..., 0.05)`` on ``--rows`` held-out rows (median, max) and the points classified per
  explanation (median).

Every figure is printed beside the load average (``os.getloadavg``): on a shared machine only ratios
measured in the same run mean much.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import subprocess
import sys
import time
import types
import warnings
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

import numpy as np

import kcxai

#: The commit whose ``kcxai/models/_predict_batch.py`` is the "before" walk (trees over 48 levels walked
#: node by node).
BEFORE = "d2fa393"


def load() -> str:
    return "load %.1f" % os.getloadavg()[0]


def old_walk_module() -> types.ModuleType | None:
    """The replaced ``_predict_batch`` module, read from git (``None`` outside a git checkout)."""
    root = Path(__file__).resolve().parent.parent
    try:
        src = subprocess.run(["git", "show", f"{BEFORE}:kcxai/models/_predict_batch.py"], cwd=root,
                             capture_output=True, text=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    module = types.ModuleType("_predict_batch_before")
    exec(compile(src, "_predict_batch_before", "exec"), module.__dict__)
    return module


@contextmanager
def walked_by(old: types.ModuleType, model: Any) -> Iterator[Any]:
    """A copy of ``model`` whose ``predict_points`` sums its leaf scores through the old module's walk."""
    from kcxai.models import boosted, forest

    def old_scores(base: Any, routers: Sequence[Any], leaves: Any, columns: Any, scores: Any) -> Any:
        olds = [old.TreeRouter(r.feature, r.branches, r.root, r.sizes) for r in routers]
        return old.LeafScores(base, olds, leaves, columns, scores)

    saved = forest.LeafScores, boosted.LeafScores
    forest.LeafScores = boosted.LeafScores = old_scores  # type: ignore[assignment,misc]
    try:
        twin = copy.copy(model)
        twin._batch = None
        yield twin
    finally:
        forest.LeafScores, boosted.LeafScores = saved


def draw_points(model: Any, n: int) -> np.ndarray:
    """``n`` points from the model's distribution (the sampler's own draws, nothing fixed)."""
    oracle = kcxai.compile_model(model, "sampling", seed=0).oracle
    return oracle._sample(np.random.default_rng(0), tuple([0] * model.space.n_features), frozenset(), n)


def points_per_second(predict: Callable[[np.ndarray], np.ndarray], pts: np.ndarray) -> tuple[float, np.ndarray]:
    best, got = float("inf"), np.zeros(0)
    for _ in range(5):  # the best of five: other processes' load only ever slows a run
        t = time.perf_counter()
        got = predict(pts)
        best = min(best, time.perf_counter() - t)
    return len(pts) / best, got


def predict_figures(model: Any, old: types.ModuleType | None, n: int) -> None:
    t = time.perf_counter()
    model.predict_points(np.zeros((1, model.space.n_features), dtype=np.int64))
    print(f"  walk built in {time.perf_counter() - t:6.2f} s ({load()})")
    pts = draw_points(model, n)
    sample = pts[:300]
    want = [model.predict_point(tuple(p)) for p in sample.tolist()]
    after, got = points_per_second(model.predict_points, pts)
    line = f"  predict_points, {n:,} points: {after:12,.0f} points/s"
    same = got[:300].tolist() == want
    if old is not None:
        with walked_by(old, model) as twin:
            twin.predict_points(pts[:8])  # its lookups built, as the oracle's first look does
            before, got_old = points_per_second(twin.predict_points, pts)
        same = same and got_old.tolist() == got.tolist()
        line += f"   before (commit {BEFORE}): {before:10,.0f} points/s   ratio {after / before:5.1f}x"
    print(f"{line}   same classes as predict_point: {same} ({load()})")


def explain_figures(model: Any, rows: np.ndarray, method: str, bound: Any) -> None:
    times, points = [], []
    for x in rows:
        c = kcxai.compile_model(model, "sampling")
        t = time.perf_counter()
        try:
            getattr(kcxai, method)(c, x, bound)
        except kcxai.InvalidInputError as e:  # local_cdrs before the certified precision decisions
            print(f"  {method} {bound}: refused ({str(e)[:90]}...)")
            return
        times.append(time.perf_counter() - t)
        points.append(c.oracle.samples)
    print(f"  {method} {bound}: median {1e3 * statistics.median(times):8.1f} ms   max {1e3 * max(times):8.1f} ms"
          f"   points classified (median) {statistics.median(points):9,.0f}   ({len(rows)} rows, {load()})")


def fitted_models(X: np.ndarray, y: np.ndarray, smoke: bool) -> list[tuple[str, Any]]:
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier, RandomForestClassifier

    n = 5 if smoke else 100
    candidates: list[tuple[str, Any]] = [
        (f"RandomForestClassifier({n} trees, unbounded depth)", RandomForestClassifier(n_estimators=n, random_state=0)),
        (f"GradientBoostingClassifier({n} x depth 3)", GradientBoostingClassifier(n_estimators=n, max_depth=3,
                                                                                   random_state=0)),
        ("HistGradientBoostingClassifier(default)" if not smoke else "HistGradientBoostingClassifier(5 iterations)",
         HistGradientBoostingClassifier(random_state=0, max_iter=5 if smoke else 100)),
    ]
    try:
        import xgboost as xgb

        candidates.append((f"XGBClassifier({n} x depth 6)", xgb.XGBClassifier(n_estimators=n, max_depth=6, n_jobs=1)))
    except ImportError:
        print("XGBoost: not installed (pip install 'kcxai[boost]'); skipped")
    out = []
    for name, clf in candidates:
        t = time.perf_counter()
        model = kcxai.from_sklearn(clf.fit(X, y))
        out.append((name, model))
        print(f"{name}: fitted and imported in {time.perf_counter() - t:5.1f} s")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=10, help="held-out rows explained per model")
    parser.add_argument("--train", type=int, default=20000, help="training rows")
    parser.add_argument("--points", type=int, default=4096, help="points per predict_points call")
    parser.add_argument("--distributions", nargs="+", default=["uniform", "product"], choices=["uniform", "product"])
    parser.add_argument("--smoke", action="store_true", help="tiny models, 2 rows, 256 points (seconds)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.rows, args.train, args.points = 2, 1000, 256
    warnings.filterwarnings("ignore")
    data = kcxai.datasets.load_dataset("adult")
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    train, held_out = X[:args.train], X[args.train:args.train + args.rows]
    print(f"adult: {args.train:,} training rows, {len(held_out)} held-out rows; python {sys.version.split()[0]}, "
          f"numpy {np.__version__}; {load()}")
    old = old_walk_module()
    if old is None:
        print(f"the walk before (commit {BEFORE}) is not readable from git here: 'before' figures skipped")
    for name, model in fitted_models(train, y[:args.train], args.smoke):
        for kind in args.distributions:
            m = model if kind == "uniform" else model.with_distribution(
                kcxai.fit_distribution(model, train, kind="product"))
            print(f"{name}, {kind} distribution:")
            predict_figures(m, old, args.points)
            explain_figures(m, held_out, "local_cdrs", 0.95)
            explain_figures(m, held_out, "min_idrs", Fraction(1, 20))


if __name__ == "__main__":
    main()
