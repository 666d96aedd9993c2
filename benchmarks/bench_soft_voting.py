"""Soft-voting forests (scikit-learn's own semantics) against hard voting, before and after (issue 32).

Run: ``python benchmarks/bench_soft_voting.py [--rows 10] [--data breast_cancer digits adult] [--limit 60]``
(``--smoke``: 5-tree forests of depth 3 on breast_cancer, 3 rows: seconds; a test runs it).

For each data set, one scikit-learn ``RandomForestClassifier(100)`` (breast_cancer: 400 training rows;
digits: 1,200 training rows behind a ``SimpleImputer``; adult: 20,000 training rows behind a one-hot
``ColumnTransformer``, the pipeline read by ``kcxai.from_pipeline``), and the first ``--rows`` held-out
rows. The same forest is read twice: with soft voting (scikit-learn's ``predict``) and with hard voting.
Printed, CPU seconds per AXp (``kcxai.ensemble_axp`` on the engine ``decision_compiled`` picks, built once
per model and timed apart; median and maximum over the rows, ``max_seconds=--limit``):

* **hard**: the hard-voting reading (the chooser's engine);
* **soft before**: the soft reading on the search engine without its SAT solver asked first
  (``kcxai.engines._ensemble_box.sat_first`` switched off: the engine as it was before issue 32);
* **soft after**: the soft reading on the chooser's engine as it is.

Beside each: the AXps' median length, and their median coverage (the fraction of the feature space, under
the uniform distribution over the features' values, that the rule's conditions hold on, exact: the product
of ``1 / size`` of the features it fixes). Every soft AXp is checked without the engine that found it: 2,000
points that agree with it on its features, drawn uniformly elsewhere (seeded by the row), keep the class
(``predict_points``: the exact integer sums), and for each of its features a fresh engine finds a
counterexample once that feature is freed, which ``predict_point`` confirms (subset-minimality, a witness
per feature); ``wrong`` counts failures. The AXps above are the paper's (``inflate=False``); then each row is
explained again as ``kcxai.ensemble_axp`` does by default, widened (issue 32 item 2, within
``kcxai.explain.inflate.WIDEN_BOXES`` boxes): the widening's CPU seconds (the widened call's less the AXp's),
their ratio to the AXp's own, how many widenings stopped at the budget, and the widened rule's exact coverage
under the model's distribution (for these imports the uniform one), with its gain over the AXp's. The
machine's load is printed before and after (``os.getloadavg``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

import kcxai
import kcxai.engines._ensemble_box as box_engine
from kcxai.engines._ensemble_box import EnsembleBox
from kcxai.engines.choose import decision_compiled
from kcxai.models import RandomForest

#: The sampled completions of every checked AXp.
SAMPLES = 2_000


def _forest(smoke: bool) -> Any:
    from sklearn.ensemble import RandomForestClassifier

    return (RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0) if smoke
            else RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1))


def _sklearn_data(name: str, smoke: bool) -> tuple[RandomForest, RandomForest, list[Any], str]:
    """The soft and hard readings of one forest and the held-out rows (breast_cancer or digits)."""
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    X, y = (load_breast_cancer if name == "breast_cancer" else load_digits)(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    n_train = 400 if name == "breast_cancer" else 1200
    train, test = order[:n_train], order[n_train:]
    if name == "breast_cancer":
        rf = _forest(smoke).fit(X[train], y[train])
        rows = [list(x) for x in X[test]]
        return (RandomForest.from_sklearn(rf, voting="soft"), RandomForest.from_sklearn(rf, voting="hard"), rows,
                f"breast_cancer, RandomForestClassifier({rf.n_estimators})")
    pipe = make_pipeline(SimpleImputer(), _forest(smoke)).fit(X[train], y[train])
    soft = kcxai.from_pipeline(pipe)
    hard = RandomForest(soft.model.space, soft.model.classes, soft.model.trees, voting="hard")
    rows = list(soft.reader.read(X[test][:200]).instances)
    return soft.model, hard, rows, "digits, SimpleImputer + RandomForestClassifier(100)"


def _adult(smoke: bool) -> tuple[RandomForest, RandomForest, list[Any], str]:
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    ds = kcxai.datasets.load_dataset("adult", as_frame=True)
    n_train = 2000 if smoke else 20_000
    X_train, y_train, X_test = ds.X.iloc[:n_train], ds.y.iloc[:n_train], ds.X.iloc[n_train:n_train + 200]
    coded = [c for c in X_train.columns if X_train[c].dtype.kind not in "fiu"]
    encode = ColumnTransformer([("coded", OneHotEncoder(handle_unknown="ignore", sparse_output=False), coded)],
                               remainder="passthrough")
    pipe = make_pipeline(encode, _forest(smoke)).fit(X_train, y_train)
    soft = kcxai.from_pipeline(pipe)
    hard = RandomForest(soft.model.space, soft.model.classes, soft.model.trees, voting="hard")
    return soft.model, hard, list(soft.reader.read(X_test).instances), "adult one-hot pipeline, default forest"


def _coverage(model: RandomForest, features: Sequence[int]) -> Fraction:
    """The uniform fraction of the feature space where the AXp's conditions hold."""
    sizes = model.space.domain_sizes
    out = Fraction(1)
    for i in features:
        out /= sizes[i]
    return out


def _copy(model: RandomForest) -> RandomForest:
    """The same soft forest, as a new model (the chooser keeps one engine per model)."""
    return RandomForest(model.space, model.classes, model.trees, voting="soft",
                        leaf_scores=[model.leaf_scores(t) for t in range(model.n_trees)])


def _timed(model: RandomForest, rows: list[Any], limit: float, found: list[Any] | None = None
           ) -> tuple[list[float], list[tuple[int, ...]], str]:
    """CPU seconds per AXp on the chooser's engine (built first, untimed), the AXps, and the engine's name
    (the explanations appended to ``found``, ``None`` for one stopped at the limit)."""
    compiled = decision_compiled(model)
    seconds, sets = [], []
    for x in rows:
        c = time.process_time()
        try:
            e = kcxai.ensemble_axp(compiled, x, max_seconds=limit, inflate=False)
        except kcxai.SearchLimitError:
            sets.append(())
            seconds.append(limit)
            if found is not None:
                found.append(None)
            continue
        seconds.append(time.process_time() - c)
        sets.append(tuple(e.features))
        if found is not None:
            found.append(e)
    return seconds, sets, compiled.language


def _widened(model: RandomForest, rows: list[Any], found: list[Any], seconds: list[float], limit: float) -> str:
    """Each row's AXp as ``ensemble_axp`` gives it by default (widened, on the same engine): the widening's CPU
    seconds (the call's less the AXp's), their ratio to the AXp's own, and the coverage gained."""
    compiled = decision_compiled(model)
    times, ratios, gains, covers, stopped, budget = [], [], [], [], 0, 0
    for x, e, axp_seconds in zip(rows, found, seconds):
        if e is None:
            continue
        c = time.process_time()
        try:
            w = kcxai.ensemble_axp(compiled, x, max_seconds=limit)
        except kcxai.SearchLimitError:
            stopped += 1
            continue
        times.append(max(0.0, time.process_time() - c - axp_seconds))
        ratios.append(times[-1] / axp_seconds)
        covers.append(w.coverage)
        gains.append(w.coverage / _coverage(model, e.features))
        budget += w.widening == "box budget"
    if not times:
        return f"  widened: none within the limit ({stopped} at it)"
    return (f"  widened (default): median {statistics.median(times):7.3f} s, max {max(times):7.3f} s CPU, "
            f"{statistics.median(ratios):5.1f}x the AXp's own time (max {max(ratios):.1f}x), at the limit {stopped}, "
            f"stopped at the box budget {budget} of {len(times)}; median coverage "
            f"{float(statistics.median(covers)):.3g} (exact, the model's distribution), median gain "
            f"{float(statistics.median(gains)):.3g}x over the AXp's (min {float(min(gains)):.3g}x)")


def _wrong(model: RandomForest, rows: list[Any], sets: list[tuple[int, ...]]) -> int:
    """How many AXps fail their check: a sampled completion changes the class, or a feature has no witness."""
    sizes = np.asarray(model.space.domain_sizes, dtype=np.int64)
    engine = EnsembleBox(model)
    wrong = 0
    try:
        for k, (x, s) in enumerate(zip(rows, sets)):
            if not s:
                continue  # stopped at the limit: nothing to check
            point = model.space.encode(x)
            label = model.predict_point(point)
            rng = np.random.default_rng([k, len(s)])
            pts = rng.integers(0, sizes, size=(SAMPLES, len(sizes)))
            pts[:, list(s)] = np.asarray(point)[list(s)]
            flips = int(np.count_nonzero(model.predict_points(pts) != label))
            engine.restart()
            witnessed = all(engine.changes(point, label, set(s) - {i})
                            and model.predict_point(engine.model_point()) != label for i in s)
            wrong += flips > 0 or not witnessed
    finally:
        engine.close()
    return wrong


def _line(label: str, model: RandomForest, seconds: list[float], sets: list[tuple[int, ...]], engine: str,
          limit: float, base: float | None = None) -> str:
    done = [s for s in sets if s]
    median = statistics.median(seconds)
    ratio = f", {base / median:5.1f}x faster than soft before" if base else ""
    cover = statistics.median([float(_coverage(model, s)) for s in done]) if done else float("nan")
    return (f"  {label:12} engine {engine:7} AXp median {median:7.3f} s, max {max(seconds):7.3f} s CPU, at the limit "
            f"{sum(1 for s in sets if not s)}, median length {statistics.median(len(s) for s in done) if done else 0}, "
            f"median coverage {cover:.3g} (uniform, exact){ratio}")


def run(name: str, make: Callable[[bool], tuple[RandomForest, RandomForest, list[Any], str]], rows: int, limit: float,
        smoke: bool) -> None:
    soft, hard, xs, title = make(smoke)
    xs = xs[:rows]
    print(f"{title}: {len(xs)} held-out rows, {sum(len(t.leaves) for t in soft.trees):,} leaves, "
          f"{len(soft.classes)} classes; load average {os.getloadavg()[0]:.1f}")
    h_sec, h_sets, h_engine = _timed(hard, xs, limit)
    print(_line("hard", hard, h_sec, h_sets, h_engine, limit))
    switch = box_engine.sat_first
    box_engine.sat_first = lambda model, leaves: False  # type: ignore[assignment]  # the engine before issue 32
    try:
        b_sec, b_sets, b_engine = _timed(soft, xs, limit)
    finally:
        box_engine.sat_first = switch
    print(_line("soft before", soft, b_sec, b_sets, b_engine, limit))
    after, found = _copy(soft), []  # a new model: its own engine (one per model)
    a_sec, a_sets, a_engine = _timed(after, xs, limit, found)
    print(_line("soft after", soft, a_sec, a_sets, a_engine, limit, statistics.median(b_sec)))
    print(_widened(after, xs, found, a_sec, limit))
    same = sum(a == b for a, b in zip(a_sets, b_sets))
    print(f"  soft AXps: same before and after {same}/{len(xs)}; wrong {_wrong(soft, xs, a_sets)} of "
          f"{sum(1 for s in a_sets if s)} checked ({SAMPLES:,} sampled completions each, a witness per feature)")


DATA = {"breast_cancer": lambda smoke: _sklearn_data("breast_cancer", smoke),
        "digits": lambda smoke: _sklearn_data("digits", smoke), "adult": _adult}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=10, help="held-out rows per data set")
    p.add_argument("--data", nargs="+", choices=sorted(DATA), default=["breast_cancer", "digits", "adult"])
    p.add_argument("--limit", type=float, default=60.0, help="max_seconds per AXp")
    p.add_argument("--smoke", action="store_true", help="5-tree forests of depth 3 on breast_cancer, 3 rows")
    args = p.parse_args(argv)
    data = ["breast_cancer"] if args.smoke else args.data
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; CPU seconds (time.process_time)")
    for name in data:
        run(name, DATA[name], 3 if args.smoke else args.rows, args.limit, args.smoke)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
