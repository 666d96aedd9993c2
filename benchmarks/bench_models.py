"""Model families beyond trees: agreement with scikit-learn, construction size, compile time and size.

Run: ``.venv/bin/python benchmarks/bench_models.py [--quick] [--languages sdd obdd]``
(``--smoke``: small models, small tables, no address-space cap: seconds; a test runs it).

Prints:

1. agreement: how many points each kcxai model predicts differently from the scikit-learn estimator
   it came from (whole space when it has at most 10,000 points, else 10,000 random points), and for
   rounded models their certified ``margin`` (they may differ only where sklearn's two best scores
   are that close);
2. construction size (no compiler): the number of sub-functions the interval-cached threshold
   construction builds, exact and rounded, as the number of naive Bayes features grows;
3. compile: time (median and max over repeats) and size per language for a naive Bayes and a
   logistic regression with 30+ features and a forest of 10 trees of depth 5, next to a depth-5
   decision tree fitted to the same data and compiled the same way (ratio = model time / tree time,
   in the same process);
4. forest growth: compiled size as the number of trees and the depth grow, hard voting (exact) and
   soft voting rounded to 1/100, with the ratio of the forest's size to the sum of its trees'.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from fractions import Fraction
from typing import Any

import numpy as np

import kcxai
from kcxai.models import RandomForest, from_sklearn
from kcxai.compilers._threshold import FeatureBlock, threshold_function

STEP = Fraction(1, 100)  # the rounding used for models too large to compile exactly
FINE = Fraction(1, 1000)
MAX_SECONDS = 300.0  # passed to the compilers' guard
MAX_MEMORY = 8 << 30  # address-space cap for this process, so a runaway compilation cannot exhaust the machine


def _points(space: Any, limit: int, rng: Any) -> list[tuple[int, ...]]:
    if space.size <= limit:
        return list(itertools.product(*(range(s) for s in space.domain_sizes)))
    return [tuple(int(rng.integers(0, s)) for s in space.domain_sizes) for _ in range(limit)]


def _value(feature: Any, k: int) -> Any:
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


def _forest_data() -> tuple[Any, Any]:
    X, y = _data(12, 4, 2, seed=3)
    return X + np.random.default_rng(5).normal(scale=0.3, size=X.shape), y


def _small_models() -> dict[str, tuple[Any, Any, Any]]:
    """The smoke run's models: each family of :func:`_models`, small."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import CategoricalNB

    out: dict[str, tuple[Any, Any, Any]] = {}
    X, y = _data(8, 3, 2)
    est = CategoricalNB().fit(X, y)
    out["CategoricalNB 8x3 exact"] = (est, from_sklearn(est), X)
    out["CategoricalNB 8x3 rounded 1/100"] = (est, from_sklearn(est).rounded(STEP), X)
    X, y = _data(8, 3, 2, seed=2)
    est = LogisticRegression(max_iter=2000).fit(X, y)
    out["LogisticRegression 8x3 rounded 1/100"] = (est, from_sklearn(est, domains=[[0, 1, 2]] * 8).rounded(STEP), X)
    X, y = _data(6, 4, 2, seed=3)
    domains = [[0, 1, 2, 3]] * 6
    est = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    out["RF 3x3 4-valued hard (vs hard votes)"] = (
        est, RandomForest.from_sklearn(est, voting="hard", domains=domains), X)
    out["RF 3x3 4-valued soft exact"] = (est, from_sklearn(est, domains=domains), X)
    return out


def _models() -> dict[str, tuple[Any, Any, Any]]:
    """name -> (sklearn estimator, kcxai model, training data X)."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import BernoulliNB, CategoricalNB

    out: dict[str, tuple[Any, Any, Any]] = {}
    X, y = _data(20, 3, 2)
    est = CategoricalNB().fit(X, y)
    out["CategoricalNB 20x3 exact"] = (est, from_sklearn(est), X)
    X, y = _data(32, 3, 2)
    est = CategoricalNB().fit(X, y)
    out["CategoricalNB 32x3 exact (not compiled)"] = (est, from_sklearn(est), X)
    out["CategoricalNB 32x3 rounded 1/100"] = (est, from_sklearn(est).rounded(STEP), X)
    out["CategoricalNB 32x3 rounded 1/1000"] = (est, from_sklearn(est).rounded(FINE), X)
    X, y = _data(30, 3, 3, seed=4)
    est = CategoricalNB().fit(X, y)
    out["CategoricalNB 30x3 3 cls rounded 1/100"] = (est, from_sklearn(est).rounded(STEP), X)
    X, y = _data(40, 2, 2, seed=1)
    est = BernoulliNB().fit(X, y)
    out["BernoulliNB 40x2 rounded 1/100"] = (est, from_sklearn(est).rounded(STEP), X)
    X, y = _data(30, 3, 2, seed=2)
    est = LogisticRegression(max_iter=2000).fit(X, y)
    out["LogisticRegression 30x3 rounded 1/100"] = (
        est, from_sklearn(est, domains=[[0, 1, 2]] * 30).rounded(STEP), X)
    X, y = _data(12, 4, 2, seed=3)
    domains = [[0, 1, 2, 3]] * 12
    est = RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0).fit(X, y)
    out["RF 10x5 4-valued hard (vs hard votes)"] = (
        est, RandomForest.from_sklearn(est, voting="hard", domains=domains), X)
    out["RF 10x5 4-valued soft exact"] = (est, from_sklearn(est, domains=domains), X)
    out["RF 10x5 4-valued soft rounded 1/100"] = (est, from_sklearn(est, domains=domains).rounded(STEP), X)
    X, y = _forest_data()
    est = RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0).fit(X, y)
    out["RF 10x5 numeric hard (vs hard votes)"] = (est, RandomForest.from_sklearn(est, voting="hard"), X)
    out["RF 10x5 numeric soft rounded 1/100"] = (est, from_sklearn(est).rounded(STEP), X)
    return out


def agreement(models: dict[str, tuple[Any, Any, Any]], limit: int = 10_000) -> None:
    print("\n== 1. agreement with scikit-learn ==")
    print(f"{'model':42s} {'points':>7s} {'differ':>7s} {'max sklearn gap there':>22s} {'margin':>9s}")
    rng = np.random.default_rng(11)
    unrounded = 0
    for name, (est, model, _) in models.items():
        pts = _points(model.space, limit, rng)
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
            gap = f"{max(gaps):.2e}"
        rounding = getattr(model, "rounding", None)
        margin = f"{float(rounding[1]):.2e}" if rounding else "-"
        unrounded += 0 if rounding else len(bad)
        print(f"{name:42s} {len(pts):7d} {len(bad):7d} {gap:>22s} {margin:>9s}")
    print(f"points where a model without rounding differs from scikit-learn: {unrounded} (should be 0)")


class _Counter:
    """Counts the sub-functions the construction asks for (stands in for ``FeatureBlock.assemble``)."""

    def __init__(self, limit: int) -> None:
        self.n, self.limit = 0, limit

    def true(self) -> int:
        return 1

    def false(self) -> int:
        return 0

    def assemble(self, block: Any, builder: Any, children: Any) -> int:
        self.n += 1
        if self.n > self.limit:
            raise OverflowError
        return self.n + 1


def _sub_functions(model: Any, limit: int) -> str:
    """Number of sub-functions of the (binary) model's threshold test, or '> limit'."""
    from unittest import mock

    from kcxai.models._numbers import lcm_of_denominators

    t, base = model._terms, model._base
    diffs = [[col[0] - col[1] for col in t[i]] for i in range(len(t))]
    scale = lcm_of_denominators([base[0] - base[1], *(x for r in diffs for x in r)])
    b = _Counter(limit)
    try:
        with mock.patch.object(FeatureBlock, "assemble", lambda blk, builder, ch: b.assemble(blk, builder, ch)):
            threshold_function(b, [FeatureBlock(i) for i in range(len(t))],
                               [[int(x * scale) for x in r] for r in diffs], int((base[0] - base[1]) * scale))
    except OverflowError:
        return f"> {limit:,}"
    return f"{b.n:,}"


def construction_size(quick: bool, smoke: bool = False) -> None:
    from sklearn.naive_bayes import CategoricalNB

    limit = 10_000 if smoke else 100_000 if quick else 400_000
    print("\n== 2. construction size: sub-functions of a binary CategoricalNB (3 values per feature) ==")
    sizes = [8, 12] if smoke else [12, 16, 20, 24, 32]
    print(f"{'features':>8s} {'exact':>12s} {'seconds':>8s} " + " ".join(f"{'step ' + str(s):>14s}" for s in
                                                                    (Fraction(1, 10), STEP, FINE)))
    for n in sizes:
        X, y = _data(n, 3, 2)
        model = from_sklearn(CategoricalNB().fit(X, y))
        t0 = time.perf_counter()
        exact = _sub_functions(model, limit)
        secs = time.perf_counter() - t0
        rounded = [_sub_functions(model.rounded(s), limit) for s in (Fraction(1, 10), STEP, FINE)]
        print(f"{n:8d} {exact:>12s} {secs:8.2f} " + " ".join(f"{r:>14s}" for r in rounded))
        sys.stdout.flush()


def _compile(model: Any, language: str, repeats: int) -> tuple[list[float], Any]:
    times = []
    compiled: Any = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        try:
            compiled = kcxai.compile_model(model, language, max_seconds=MAX_SECONDS)
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

    print(f"\n== 3. compile time and size per language (median / max of {repeats}) ==")
    print(f"{'model':42s} {'lang':5s} {'median s':>9s} {'max s':>8s} {'size':>10s} {'vars':>6s} "
          f"{'tree s':>8s} {'ratio':>7s}")
    for name, (est, model, X) in models.items():
        if "not compiled" in name or "1/1000" in name:
            continue
        base = from_sklearn(DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, est.predict(X)))
        for lang in languages:
            times, compiled = _compile(model, lang, repeats)
            btimes, _ = _compile(base, lang, repeats)
            med, mx, bmed = statistics.median(times), max(times), statistics.median(btimes)
            nvars = "-" if isinstance(compiled, Exception) else compiled.stats.get("variables")
            print(f"{name:42s} {lang:5s} {med:9.3f} {mx:8.3f} {_size(compiled):>10s} {nvars!s:>6s} "
                  f"{bmed:8.3f} {med / bmed if bmed else float('nan'):7.1f}")
            sys.stdout.flush()


def forest_growth(languages: list[str], quick: bool, smoke: bool = False) -> None:
    from sklearn.ensemble import RandomForestClassifier

    print("\n== 4. forest compile size as trees and depth grow (12 features with 4 values, 2 classes) ==")
    n_trees = [1, 2] if smoke else [1, 2, 5, 10] if quick else [1, 2, 5, 10, 20]
    depths = [2, 3] if smoke else [2, 3, 4, 5] if quick else [2, 3, 4, 5, 6]
    X, y = _data(12, 4, 2, seed=3)
    domains = [[0, 1, 2, 3]] * 12
    for lang in languages:
        for voting in ("hard", "soft rounded 1/100"):
            print(f"\n[{lang}, {voting}] size (seconds) xratio = forest size / sum of its trees' sizes")
            print("(stops a row at the first compilation over the guard)")
            print(f"{'depth':>5s} " + " ".join(f"{f'{t} trees':>26s}" for t in n_trees))
            for d in depths:
                cells = []
                for t in n_trees:
                    est = RandomForestClassifier(n_estimators=t, max_depth=d, random_state=0).fit(X, y)
                    model = (RandomForest.from_sklearn(est, voting="hard", domains=domains) if voting == "hard"
                             else from_sklearn(est, domains=domains).rounded(STEP))
                    times, compiled = _compile(model, lang, 1)
                    if isinstance(compiled, Exception):
                        cells.append(f"{'over guard':>26s}")
                        break
                    tree_sizes = 0
                    for tree in model.trees:
                        _, ct = _compile(tree, lang, 1)
                        tree_sizes += 0 if isinstance(ct, Exception) else int(ct.stats.get("size") or 0)
                    size = int(compiled.stats.get("size") or 0)
                    ratio = size / tree_sizes if tree_sizes else float("nan")
                    cells.append(f"{size:>9d} ({times[0]:6.2f}s) x{ratio:5.1f}")
                print(f"{d:5d} " + " ".join(f"{c:>26s}" for c in cells))
                sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and smaller tables")
    parser.add_argument("--languages", nargs="*", default=None, help="default: sdd and obdd when in the tree")
    parser.add_argument("--skip", nargs="*", default=[], choices=["agreement", "construction", "compile", "growth"])
    parser.add_argument("--smoke", action="store_true",
                        help="small models and tables, and no address-space cap on the calling process (seconds)")
    args = parser.parse_args(argv)
    if not args.smoke:  # the smoke run is called inside the test process: no process-wide cap there
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MAX_MEMORY, MAX_MEMORY))
    languages = args.languages
    if languages is None:
        available = kcxai.available_languages()
        languages = [lang for lang in ("sdd", "obdd") if available[lang]]
    print(f"kcxai {kcxai.__version__}; languages: {languages or 'none available'}")
    models = _small_models() if args.smoke else _models()
    if "agreement" not in args.skip:
        agreement(models, 1000 if args.smoke else 10_000)
    if "construction" not in args.skip:
        construction_size(args.quick, args.smoke)
    if languages:
        if "compile" not in args.skip:
            compile_table(models, languages, 1 if args.quick or args.smoke else 3)
        if "growth" not in args.skip:
            forest_growth(languages, args.quick, args.smoke)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
