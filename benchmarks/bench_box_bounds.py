"""Proven bounds by branch and bound over boxes (``kcxai.engines._box_bounds``) on the ensembles practitioners ship.

For each model it runs the deletion loop of ``local_cdrs`` at precision 0.95 on ``--rows`` held-out rows
(every feature fixed at first; each pass tries to free each fixed feature in index order; passes repeat until
one frees nothing), driven by the engine's own decisions: freeing ``i`` is kept when the engine proves
``W(S - i) <= 0.05 * weight(x_{S - i} = v_{S - i})``, and ``i`` stays fixed when it proves the opposite or
cannot decide within the limit (as a caller falling back on nothing would). Each query is one
``BoxBounds.decide`` call under a deadline of ``--limit`` CPU seconds (1 s: :class:`CpuDeadline`, so that a
shared machine's load does not cut queries short); its CPU time (``time.process_time``) is what the figures
count. Printed per model: the leaves and the engine's build time,
the queries asked, how many were proven within 0.05 s, 0.2 s and 1 s of CPU, the median CPU per query, and
for the queries not proven within 1 s the median undecided weight as a share of the box's weight (the bound
is 0.05 of it).

Models (the front door of issue 28): the adult DataFrame behind a ``ColumnTransformer`` that one-hot encodes
the string columns, ``--train`` training rows (20,000), with scikit-learn's default RandomForest,
GradientBoosting 100x3, HistGradientBoosting (default) and XGBoost 100x6 (when installed); scikit-learn's
breast_cancer and digits with RandomForest(100) (80% of the rows to train). Every model's distribution is the
product distribution fitted on its training rows (``kcxai.fit_distribution(model, rows, kind="product")``).

    python benchmarks/bench_box_bounds.py [--rows 10] [--limit 1] [--models Boost,digits] [--smoke]

``--smoke``: two small ensembles on adult (2,000 training rows) and breast_cancer, 2 rows each, and every
decision checked against the exact count of the model compiled to an OBDD (a test runs it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

import kcxai
from kcxai._deadline import Deadline
from kcxai.engines._box_bounds import BoxBounds
from kcxai.models import from_pipeline
from kcxai.oracle import point_box
from kcxai.experiments._ensemble_models import front_door_estimators

#: The CPU seconds per query the figures count decisions within.
LIMITS = (0.05, 0.2, 1.0)
#: The precision bound of the deletion loop.
PRECISION = Fraction(95, 100)


class CpuDeadline(Deadline):
    """A :class:`~kcxai._deadline.Deadline` on this process's CPU clock (``time.process_time``): the engine stops
    once ``time.perf_counter()`` passes ``at``, which this one keeps at "now plus the CPU seconds left", so that
    the other jobs of a shared machine do not cut a query before it has had its CPU seconds."""

    __slots__ = ("cpu_at",)

    def __init__(self, cpu_seconds: float) -> None:
        super().__init__(None, what="a box-bounds query", advice="")
        self.cpu_at = time.process_time() + cpu_seconds

    @property  # type: ignore[override]
    def at(self) -> float:
        return time.perf_counter() + self.cpu_at - time.process_time()

    @at.setter
    def at(self, value: float) -> None:  # Deadline.__init__ sets it: the CPU clock decides instead
        pass


@dataclass
class Record:
    """One query of a deletion loop."""

    fixed: int  # features fixed in the query's set
    cpu: float
    decided: bool | None
    undecided_share: float  # undecided weight / the box's weight
    exact_agrees: bool | None = None  # against the compiled model's count (smoke)


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.1f}"




def _adult(est: Any, name: str, train: int, rows: int) -> tuple[Any, list[Any]]:
    """The front-door pipeline's kcxai model under the product distribution of its training rows, and held-out
    instances."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    ds = kcxai.datasets.load_dataset("adult", as_frame=True)
    X, y = ds.X, ds.y
    X_train, y_train, X_test = X.iloc[:train], y.iloc[:train], X.iloc[train:train + rows]
    coded = [c for c in X_train.columns if X_train[c].dtype.kind not in "fiu"]
    encode = ColumnTransformer([("coded", OneHotEncoder(handle_unknown="ignore", sparse_output=False), coded)],
                               remainder="passthrough")
    target = (y_train == ">50K").astype(int) if name.startswith("XGBoost") else y_train  # XGBoost takes 0..k-1
    imported = from_pipeline(make_pipeline(encode, est).fit(X_train, target))
    model = imported.model
    fitted = kcxai.fit_distribution(model, imported.reader.read(X_train).instances, kind="product")
    return model.with_distribution(fitted), list(imported.reader.read(X_test).instances)


def _sklearn_data(which: str, n_trees: int, rows: int) -> tuple[Any, list[Any]]:
    """A RandomForest on scikit-learn's ``which`` data (80% to train) under the product distribution of its training
    rows, and held-out instances."""
    from sklearn import datasets
    from sklearn.ensemble import RandomForestClassifier

    X, y = getattr(datasets, f"load_{which}")(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(X))
    cut = int(0.8 * len(X))
    train, test = order[:cut], order[cut:cut + rows]
    model = kcxai.from_sklearn(RandomForestClassifier(n_estimators=n_trees, random_state=0, n_jobs=1)
                               .fit(X[train], y[train]))
    return model.with_distribution(kcxai.fit_distribution(model, X[train], kind="product")), list(X[test])


def deletion_loop(engine: BoxBounds, model: Any, instance: Any, limit: float, exact: Any = None) -> list[Record]:
    """The queries of the ``local_cdrs`` deletion loop of one instance, each decided by ``engine`` (see the module
    docstring); with ``exact`` (a counting oracle) every decision is also checked against the exact count."""
    space = model.space
    point = space.encode(instance)
    label = model.predict_point(point)
    fixed = set(range(space.n_features))
    out: list[Record] = []
    freed = True
    while freed:
        freed = False
        for i in sorted(fixed):
            box = point_box(space, point, fixed - {i})
            threshold = (1 - PRECISION) * engine.box_weight(box)
            started = time.process_time()
            with CpuDeadline(limit) as deadline:
                result = engine.decide(box, label, threshold, deadline=deadline)
            cpu = time.process_time() - started
            decided = result.decides(threshold)
            record = Record(len(fixed) - 1, cpu, decided, float(Fraction(result.undecided) / result.box_weight))
            if exact is not None:
                truth = exact.disagree_weight(point, label, frozenset(fixed - {i})) <= threshold
                record.exact_agrees = decided is None or decided == truth
            out.append(record)
            if decided:
                fixed.discard(i)
                freed = True
    return out


def report(name: str, engine: BoxBounds, built: float, records: list[Record], rows: int) -> None:
    """One model's figures (see the module docstring)."""
    n = len(records)
    within = [sum(r.decided is not None and r.cpu <= t for r in records) for t in LIMITS]
    shares = [r.undecided_share for r in records if r.decided is None or r.cpu > LIMITS[-1]]
    median_share = f"{100 * statistics.median(shares):.2f}%" if shares else "-"
    proven = ", ".join(f"{t:g} s {k} ({100 * k / n:.0f}%)" for t, k in zip(LIMITS, within))
    print(f"{name:30} {engine.table.n_leaves:7,} leaves, built in {built:5.2f} s CPU; {rows} rows, {n} queries: "
          f"proven within {proven}; median {statistics.median(r.cpu for r in records):.3f} s CPU per query; "
          f"{len(shares)} not proven within 1 s, median undecided weight {median_share} of the box (bound: 5%); "
          f"{_load()}")
    checked = [r.exact_agrees for r in records if r.exact_agrees is not None]
    if checked:
        print(f"{'':30} decisions checked against the exact counts of the compiled model: "
              f"{sum(checked)} of {len(checked)} agree")


def _run(name: str, model: Any, instances: list[Any], limit: float, check: bool) -> None:
    started = time.process_time()
    engine = BoxBounds(model)
    built = time.process_time() - started
    exact = kcxai.compile_model(model, "obdd").oracle if check else None
    records = [r for x in instances for r in deletion_loop(engine, model, x, limit, exact)]
    report(name, engine, built, records, len(instances))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=10, help="held-out rows per model")
    p.add_argument("--train", type=int, default=20_000, help="adult training rows")
    p.add_argument("--limit", type=float, default=1.0, help="CPU seconds per query")
    p.add_argument("--models", default="", help="only the models whose name contains one of these "
                   "comma-separated words (case-insensitive)")
    p.add_argument("--smoke", action="store_true", help="small models, 2 rows, decisions checked: seconds")
    args = p.parse_args(argv)
    wanted = [w.strip().lower() for w in args.models.split(",") if w.strip()]
    rows = 2 if args.smoke else args.rows
    train = 2000 if args.smoke else args.train
    print(f"local_cdrs 0.95 deletion loops decided by BoxBounds.decide, product distributions fitted on the training "
          f"rows; {os.cpu_count()} cores, {_load()}")
    for name, est in front_door_estimators(args.smoke):
        if wanted and not any(w in name.lower() for w in wanted):
            continue
        model, instances = _adult(est, name, train, rows)
        _run(f"adult {name}", model, instances, args.limit, args.smoke)
    for which in ("breast_cancer",) if args.smoke else ("breast_cancer", "digits"):
        name = f"{which} RandomForest({5 if args.smoke else 100})"
        if wanted and not any(w in name.lower() for w in wanted):
            continue
        model, instances = _sklearn_data(which, 5 if args.smoke else 100, rows)
        _run(name, model, instances, args.limit, False)
    print(f"{_load()} at the end")


if __name__ == "__main__":
    main()
