"""Model families beyond trees: agreement with scikit-learn, compile time and size per language.

Run: ``.venv/bin/python benchmarks/bench_models.py [--quick] [--languages sdd obdd]``

Prints three tables:

1. agreement: how many points the kcxai model predicts differently from the scikit-learn estimator
   (whole space when it has at most 10,000 points, else 10,000 random points);
2. compile: time (median and max over repeats) and size per language for a naive Bayes with 32
   three-valued features, a Bernoulli naive Bayes with 40 features, a logistic regression with 30
   features and a random forest of 10 trees of depth 5, next to a decision tree fitted to the same
   data (the baseline; ratio = model time / tree time, measured in the same process);
3. forest growth: compiled size as the number of trees and the depth grow (``over guard`` when
   the compiler's guard stops it), with the ratio of the forest's size to the sum of its trees'.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from typing import Any

import numpy as np

import kcxai
from kcxai.models import RandomForest, from_sklearn


def _points(space: Any, limit: int, rng: Any) -> list[tuple[int, ...]]:
    if space.size <= limit:
        return list(itertools.product(*(range(s) for s in space.domain_sizes)))
    return [tuple(int(rng.integers(0, s)) for s in space.domain_sizes) for _ in range(limit)]


def _value(feature: Any, k: int) -> float:
    if not feature.is_numeric:
        return feature.values[k]
    iv = feature.values[k]
    lo, hi = iv.low, iv.high
    if lo == -np.inf and hi == np.inf:
        return 0.0
    if lo == -np.inf:
        return hi - 1.0
    if hi == np.inf:
        return lo + 1.0
    return (lo + hi) / 2


def _data(n_features: int, n_values: int, n_classes: int, n: int = 2000, seed: int = 0) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_values, size=(n, n_features))
    w = rng.normal(size=(n_features, n_classes))
    y = np.argmax(X @ w + rng.normal(scale=2.0, size=(n, n_classes)), axis=1)
    return X, y


def _models(quick: bool) -> dict[str, tuple[Any, Any, Any]]:
    """name -> (sklearn estimator, kcxai model, training data X) for the acceptance models."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import BernoulliNB, CategoricalNB

    out: dict[str, tuple[Any, Any, Any]] = {}
    X, y = _data(32, 3, 2)
    est = CategoricalNB().fit(X, y)
    out["CategoricalNB 32x3, 2 classes"] = (est, from_sklearn(est), X)
    X, y = _data(30, 3, 3, seed=4)
    est = CategoricalNB().fit(X, y)
    out["CategoricalNB 30x3, 3 classes"] = (est, from_sklearn(est), X)
    X, y = _data(40, 2, 2, seed=1)
    est = BernoulliNB().fit(X, y)
    out["BernoulliNB 40x2"] = (est, from_sklearn(est), X)
    X, y = _data(30, 3, 2, seed=2)
    est = LogisticRegression(max_iter=2000).fit(X, y)
    out["LogisticRegression 30x3"] = (est, from_sklearn(est, domains=[[0, 1, 2]] * 30), X)
    X, y = _data(12, 4, 2, seed=3)
    Xf = X + np.random.default_rng(5).normal(scale=0.3, size=X.shape)
    est = RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0).fit(Xf, y)
    out["RandomForest 10 trees depth 5 (soft)"] = (est, from_sklearn(est), Xf)
    out["RandomForest 10 trees depth 5 (hard)"] = (est, RandomForest.from_sklearn(est, voting="hard"), Xf)
    return out


def agreement(models: dict[str, tuple[Any, Any, Any]]) -> None:
    print("\n== 1. agreement with scikit-learn's predict ==")
    print(f"{'model':40s} {'points':>8s} {'disagree':>9s} {'near-tie gap':>13s}")
    rng = np.random.default_rng(11)
    for name, (est, model, _) in models.items():
        pts = _points(model.space, 10_000, rng)
        X = np.array([[_value(f, k) for f, k in zip(model.space.features, p)] for p in pts], dtype=float)
        if "hard" in name:
            votes = np.zeros((len(X), len(est.classes_)), dtype=int)
            for e in est.estimators_:
                votes[np.arange(len(X)), e.predict(X).astype(int)] += 1
            theirs = est.classes_[np.argmax(votes, axis=1)]
            scores = votes.astype(float)
        else:
            theirs = est.predict(X)
            scores = (est.predict_joint_log_proba(X) if hasattr(est, "predict_joint_log_proba")
                      else est.predict_proba(X) if hasattr(est, "estimators_") else est.decision_function(X))
        ours = np.array([model.classes[model.predict_point(p)] for p in pts])
        bad = np.flatnonzero(ours != theirs)
        gap = "-"
        if len(bad):
            gaps = []
            for r in bad:
                s = np.sort(np.atleast_1d(scores[r]))
                gaps.append(abs(s[-1] - s[-2]) if s.size > 1 else abs(s[0]))
            gap = f"{max(gaps):.1e}"
        print(f"{name:40s} {len(pts):8d} {len(bad):9d} {gap:>13s}")


def _compile(model: Any, language: str, repeats: int) -> tuple[list[float], Any]:
    times = []
    compiled: Any = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        try:
            compiled = kcxai.compile_model(model, language)
        except kcxai.CompilationLimitError as e:
            return [time.perf_counter() - t0], e
        times.append(time.perf_counter() - t0)
    return times, compiled


def _size(compiled: Any) -> str:
    if isinstance(compiled, Exception):
        return "over guard"
    return str(compiled.stats.get("size"))


def compile_table(models: dict[str, tuple[Any, Any, Any]], languages: list[str], repeats: int) -> None:
    from sklearn.tree import DecisionTreeClassifier

    print(f"\n== 2. compile time and size per language (median / max of {repeats}) ==")
    print(f"{'model':40s} {'lang':5s} {'median s':>9s} {'max s':>8s} {'size':>10s} {'vars':>6s} "
          f"{'tree s':>8s} {'ratio':>7s}")
    for name, (est, model, X) in models.items():
        if "hard" in name:
            continue
        # the baseline: a decision tree of depth 5 on the same data, compiled the same way
        base = from_sklearn(DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, est.predict(X)))
        for lang in languages:
            times, compiled = _compile(model, lang, repeats)
            btimes, _ = _compile(base, lang, repeats)
            med, mx, bmed = statistics.median(times), max(times), statistics.median(btimes)
            nvars = "-" if isinstance(compiled, Exception) else compiled.stats.get("variables")
            print(f"{name:40s} {lang:5s} {med:9.3f} {mx:8.3f} {_size(compiled):>10s} {nvars!s:>6s} "
                  f"{bmed:8.3f} {med / bmed if bmed else float('nan'):7.1f}")
            sys.stdout.flush()


def forest_growth(languages: list[str], quick: bool) -> None:
    from sklearn.ensemble import RandomForestClassifier

    print("\n== 3. forest compile size as trees and depth grow (soft voting, 12 features, 2 classes) ==")
    n_trees = [1, 2, 5, 10] if quick else [1, 2, 5, 10, 20]
    depths = [2, 3, 4, 5] if quick else [2, 3, 4, 5, 6]
    X, y = _data(12, 4, 2, seed=3)
    X = X + np.random.default_rng(5).normal(scale=0.3, size=X.shape)
    for lang in languages:
        print(f"\n[{lang}] size (seconds); ratio = forest size / sum of its trees' sizes")
        print(f"{'depth':>5s} " + " ".join(f"{f'{t} trees':>24s}" for t in n_trees))
        for d in depths:
            cells = []
            for t in n_trees:
                est = RandomForestClassifier(n_estimators=t, max_depth=d, random_state=0).fit(X, y)
                model = from_sklearn(est)
                times, compiled = _compile(model, lang, 1)
                if isinstance(compiled, Exception):
                    cells.append(f"{'over guard':>24s}")
                    continue
                tree_sizes = 0
                for tree in model.trees:
                    _, ct = _compile(tree, lang, 1)
                    tree_sizes += 0 if isinstance(ct, Exception) else int(ct.stats.get("size") or 0)
                size = int(compiled.stats.get("size") or 0)
                ratio = size / tree_sizes if tree_sizes else float("nan")
                cells.append(f"{size:>8d} ({times[0]:6.2f}s) x{ratio:5.1f}")
            print(f"{d:5d} " + " ".join(f"{c:>24s}" for c in cells))
            sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and a smaller growth table")
    parser.add_argument("--languages", nargs="*", default=None, help="default: sdd and obdd when installed")
    args = parser.parse_args(argv)
    from kcxai.compilers import LANGUAGES

    languages = args.languages
    if languages is None:
        import importlib.util

        languages = [lang for lang in ("sdd", "obdd")
                     if importlib.util.find_spec(LANGUAGES[lang][0]) is not None]
    print(f"kcxai {kcxai.__version__}; languages: {languages or 'none available'}")
    models = _models(args.quick)
    agreement(models)
    if languages:
        compile_table(models, languages, 1 if args.quick else 3)
        forest_growth(languages, args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
