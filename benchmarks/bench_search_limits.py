"""How close to ``max_seconds`` the exact searches stop, and what the limit costs when it is not hit.

Run: ``python benchmarks/bench_search_limits.py [--limits 1 2 5] [--repeats 30]``
(``--smoke``: a 0.2 s limit, 5-tree forests, 2 repeats: seconds; a test runs it).

Part 1, hard instances (each takes far longer than the largest limit without one), run with each
limit; prints the measured time to the :class:`~kcxai.SearchLimitError` and its ratio to the limit:

* ``smallest_ensemble_axp`` (cardinality-minimal AXp) of a 100-tree random forest trained on the
  bundled adult data (soft voting, depth 8), with both engines: ``"sat"`` (long single SAT calls,
  stopped by interrupting the solver) and ``"search"`` (branch and bound, stopped by clock checks);
* ``ensemble_axp`` (subset-minimal AXp) of the same forest with the SAT engine;
* ``min_cdrs`` and ``smallest_idrs`` on a wide model: a 30-feature linear threshold (class 1 iff at
  least 15 features are 1) compiled to an OBDD, at the all-ones instance (the generic subset search
  and the implicit hitting-set loop);
* ``enumerate_idrs`` of the same model (tens of millions of sets).

Part 2, overhead on fast explanations (no limit hit), in the same process: the median time of the
same call with ``max_seconds=60`` and with ``max_seconds=None``, interleaved, and their ratio (the
running example, a 10-feature threshold, tiny and 10-tree forests).

Measured here (2 shared cores, load about 5): every case stopped between 1.000 and 1.068 times its
limit (largest overshoot 79 ms, the SAT engine, whose solver stops 2-4 ms after an interrupt but
whose CNF building is checked only every 4096 clauses); with Glucose 4 as the ensemble solver the
same runs stopped up to 1.48 times the limit. Overhead when not hit: 0-1% on the tree searches of
the running example (0.6-1.4 ms), about 14 µs per call (1.2x) on a 66 µs AXp of a 3-tree forest,
within noise on calls of 30 ms and more.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from typing import Any, Callable

import numpy as np

import kcxai
from kcxai.models import LinearClassifier


def adult_forest(n_trees: int, depth: int) -> tuple[Any, list[list[float]]]:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    data = kcxai.datasets.load_dataset("adult")
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    Xtr, Xte, ytr, _ = train_test_split(X, y, test_size=0.25, random_state=0)
    t = time.perf_counter()
    rf = RandomForestClassifier(n_estimators=n_trees, max_depth=depth, random_state=0, n_jobs=1).fit(Xtr, ytr)
    model = kcxai.models.from_sklearn(rf)
    print(f"adult forest: {n_trees} trees of depth <= {depth}, soft voting, {model.space.n_features} features "
          f"(trained and imported in {time.perf_counter() - t:.1f} s)")
    return model, [list(map(float, r)) for r in Xte[:5]]


def threshold(n: int, k: int) -> Any:
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"b{i}", [0, 1]) for i in range(n)])
    return kcxai.compile_model(LinearClassifier.from_coefficients(space, [1] * n, -k + 0.5), "obdd")


def stop_time(call: Callable[[float], Any], limit: float) -> tuple[float, str]:
    t = time.perf_counter()
    try:
        out = call(limit)
        if hasattr(out, "__next__"):
            for _ in out:
                pass
    except kcxai.SearchLimitError as err:
        return time.perf_counter() - t, str(err)
    return time.perf_counter() - t, "finished"


def part1(limits: list[float], forest: Any, xs: list[list[float]]) -> None:
    wide = threshold(30, 15)
    ones = [1] * 30
    cases: list[tuple[str, Callable[[float], Any]]] = [
        ("smallest_ensemble_axp, adult forest, engine sat",
         lambda s: kcxai.smallest_ensemble_axp(forest, xs[0], engine="sat", max_seconds=s)),
        ("smallest_ensemble_axp, adult forest, engine search",
         lambda s: kcxai.smallest_ensemble_axp(forest, xs[0], engine="search", max_seconds=s)),
        ("ensemble_axp, adult forest, engine sat",
         lambda s: kcxai.ensemble_axp(forest, xs[0], engine="sat", max_seconds=s)),
        ("min_cdrs, 30-feature threshold (obdd), delta 1",
         lambda s: kcxai.min_cdrs(wide, ones, 1, max_seconds=s, max_subsets=1 << 40)),
        ("smallest_idrs, 30-feature threshold (obdd), delta 0",
         lambda s: kcxai.smallest_idrs(wide, ones, 0, max_seconds=s)),
        ("enumerate_idrs, 30-feature threshold (obdd), delta 0",
         lambda s: kcxai.enumerate_idrs(wide, ones, 0, max_seconds=s)),
    ]
    print("\nPart 1: stop time on hard searches (seconds to SearchLimitError, ratio to the limit)")
    print(f"{'search':<55}" + "".join(f"{f'limit {s:g} s':>20}" for s in limits))
    worst = 0.0
    for name, call in cases:
        cells = []
        for s in limits:
            took, what = stop_time(call, s)
            if what == "finished":
                cells.append(f"{'finished ' + format(took, '.2f'):>20}")
                continue
            worst = max(worst, took / s)
            cells.append(f"{took:>10.3f} ({took / s:.3f}x)")
        print(f"{name:<55}" + "".join(cells), flush=True)
    print(f"largest ratio stop time / limit: {worst:.3f}")
    _, message = stop_time(cases[0][1], limits[0])
    print(f"message (first case, {limits[0]:g} s): {message}")


def _median_pair(fn: Callable[[Any], Any], repeats: int) -> tuple[float, float]:
    fn(60.0)  # warm up: imports, caches, the first CNF target
    fn(None)
    limited, free = [], []
    for _ in range(repeats):
        for seconds, bucket in ((60.0, limited), (None, free)):
            t = time.perf_counter()
            fn(seconds)
            bucket.append(time.perf_counter() - t)
    return statistics.median(limited), statistics.median(free)


def part2(repeats: int, n_trees: int = 10, depth: int = 6) -> None:
    forest, xs = adult_forest(n_trees, depth)
    tree = kcxai.datasets.running_example_tree()
    v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    small = threshold(10, 5)
    box = kcxai.compile_model(forest, "search", max_seconds=None)
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "abc"])
    trees = [kcxai.DecisionTree(space, [0, 1], kcxai.Split(n, {0: kcxai.Leaf(0), 1: kcxai.Leaf(1)})) for n in "abc"]
    tiny = kcxai.compile_model(kcxai.models.RandomForest(space, [0, 1], trees), "sat")
    cases: list[tuple[str, Callable[[Any], Any]]] = [
        ("smallest_drs, running example (tree SAT search)", lambda s: kcxai.smallest_drs(tree, v, 0.9, max_seconds=s)),
        ("min_cdrs, running example (tree SAT search)", lambda s: kcxai.min_cdrs(tree, v, 0.95, max_seconds=s)),
        ("smallest_idrs, running example", lambda s: kcxai.smallest_idrs(tree, v, 0.03, max_seconds=s)),
        ("enumerate_idrs, running example (7 sets)",
         lambda s: list(kcxai.enumerate_idrs(tree, v, 0, max_seconds=s))),
        ("smallest_idrs, 10-feature threshold (obdd)",
         lambda s: kcxai.smallest_idrs(small, [1] * 10, 0, max_seconds=s)),
        ("ensemble_axp, 3-tree forest, prepared SAT engine",
         lambda s: kcxai.ensemble_axp(tiny, [1, 1, 0], max_seconds=s)),
        ("smallest_ensemble_axp, 3-tree forest, SAT engine",
         lambda s: kcxai.smallest_ensemble_axp(tiny, [1, 1, 0], max_seconds=s)),
        (f"ensemble_axp, {n_trees}-tree adult forest, prepared search engine",
         lambda s: kcxai.ensemble_axp(box, xs[1], max_seconds=s)),
        (f"ensemble_axp, {n_trees}-tree adult forest, SAT engine (built per call)",
         lambda s: kcxai.ensemble_axp(forest, xs[1], engine="sat", max_seconds=s)),
    ]
    print(f"\nPart 2: overhead when the limit is not hit (median of {repeats}, interleaved)")
    print(f"{'explanation':<55}{'max_seconds=60':>16}{'None':>12}{'ratio':>8}")
    for name, fn in cases:
        a, b = _median_pair(fn, repeats)
        print(f"{name:<55}{a * 1e3:>13.3f} ms{b * 1e3:>9.3f} ms{a / b:>8.3f}", flush=True)
    for e in (box, tiny):
        e.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limits", type=float, nargs="+", default=[1.0, 2.0, 5.0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--skip-hard", action="store_true", help="only part 2")
    parser.add_argument("--smoke", action="store_true", help="a 0.2 s limit, 5-tree forests, 2 repeats (seconds)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.limits, args.repeats, args.trees, args.depth = [0.2], 2, 5, 4
    warnings.filterwarnings("ignore")
    print(f"load average {os.getloadavg()[0]:.1f}")
    if not args.skip_hard:
        forest, xs = adult_forest(args.trees, args.depth)
        part1(args.limits, forest, xs)
    part2(args.repeats, *((args.trees, args.depth) if args.smoke else (10, 6)))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
