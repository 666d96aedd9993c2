"""Issue 28's targets through the front door: how many decisions are proven, at what cost, beside sampling.

For each model, ``kcxai.Explainer(pipeline, X_train, fit_budget=B)`` (no language forced: a tree ensemble
that does not compile within the probe keeps its ``bounded`` form) explains held-out rows with
``local_cdrs`` at precision 0.95. Printed per model: the fit's wall and CPU seconds against the budget
(the ratio the issue holds to 1.2x), the peak resident memory of the process, the language and the
probability mass left unknown; then over the rows: the share of the relevance tests decided without
sampling (``proven``: exact or from proven bounds; one test per oracle call), the rows decided
``exact`` / ``proven`` / ``sampled``, the median and max CPU seconds per row. Beside them, the same rows
by certified sampling alone (``language="sampling"``): its median seconds, and how many of its sets the
proven engine overturns (a sampled set whose precision the bounds prove below 0.95).

Parts: ``front`` (adult as a DataFrame behind a one-hot ``ColumnTransformer``, 20,000 training rows:
the default RandomForest, GradientBoosting 100x3, HistGradientBoosting default, XGBoost 100x6) and
``sklearn`` (breast_cancer behind ``SimpleImputer`` and digits, with RandomForest(100),
GradientBoosting, HistGradientBoosting and XGBoost).

    python benchmarks/bench_proven.py [--part front|sklearn|both] [--rows 10] [--budget 30] [--models Boost]
    python benchmarks/bench_proven.py --smoke      # tiny models, no exact probe, a few rows (a test runs it)

``--why`` runs the rows once more through a query on the bounded form and prints where the tests went:
how many each step decided (the interval, the branch and bound, the conditioned compile, sampling), why
each sampled test was not decided, and the CPU seconds of each refinement.

Figures are CPU seconds (``time.process_time``) in one process on a shared machine; the load average is
printed beside them.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, cast

import kcxai
from kcxai._deadline import Deadline
from kcxai.engines.choose import PROBE, ProbeBudget
from kcxai.explain._methods import METHODS
from kcxai.explain._proven import Proof, Prover, Threshold
from kcxai.explain._query import Query
from kcxai.explain.cdrs import local_deletion
from kcxai.experiments._ensemble_models import front_door_estimators

PRECISION = Fraction(95, 100)


def _load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _estimators(smoke: bool, names: Sequence[str] | None) -> list[tuple[str, Any]]:
    return [(n, e) for n, e in front_door_estimators(smoke) if not names or any(k.lower() in n.lower() for k in names)]


def _overturned(explainer: Any, rows: list[Any], sampled: list[Any]) -> tuple[int, int]:
    """Of the sampled sets, how many the bounds prove below the precision (and how many they cannot tell)."""
    model = explainer.model_
    if explainer.compiled_ is not None:  # exact counts: every sampled set checked exactly
        return sum(kcxai.precision(explainer.compiled_, row, e.features) < PRECISION
                   for row, e in zip(rows, sampled)), 0
    choice = explainer._choices.get("bounds")
    if choice is None or choice.compiled is None:
        return 0, len(sampled)
    oracle = choice.compiled.oracle
    wrong = unknown = 0
    for row, e in zip(rows, sampled):
        point = model.space.encode(row)
        label = model.predict_point(point)
        prover = Prover(oracle, model, point, label, Deadline(None, what="bench", advice=""), sample=False,
                        what="bench")
        try:
            wrong += not prover.decide(Threshold.precision(model.space, point, frozenset(e.features), PRECISION))
        except kcxai.NotProvenError:
            unknown += 1
    return wrong, unknown


def _why(explainer: Any, rows: list[Any]) -> str:
    """Where the tests of ``local_cdrs`` went, run again through a query on the bounded form: per step, the
    tests it decided; why each sampled test was not decided; CPU seconds per refinement."""
    choice = explainer._choices.get("bounds")
    if explainer.compiled_ is not None or choice is None or choice.compiled is None:
        return "exact form: no test refined"
    by: dict[str, int] = {}
    missed: dict[str, int] = {}
    cpu: dict[str, float] = {}
    for row in rows:
        with Query(choice.compiled.oracle, explainer.model_, row, method=METHODS["local_cdrs"],
                   answers=("bounds",)) as q:
            local_deletion(q, PRECISION)
            proof = cast(Proof, q.proof)  # a bounds oracle's query has a prover
        for table, got in ((by, proof.by), (missed, proof.missed), (cpu, proof.cpu)):
            for key, value in got.items():
                table[key] = table.get(key, 0) + value
    steps = ", ".join(f"{k} {v}" for k, v in by.items())
    whys = "; ".join(f"{k}: {v}" for k, v in sorted(missed.items(), key=lambda kv: -kv[1])) or "none"
    seconds = ", ".join(f"{k} {v:.2f} s" for k, v in cpu.items())
    return f"tests by step: {steps}; sampled because: {whys}; CPU in refinements: {seconds}"


def run_model(name: str, pipe: Any, X_train: Any, X_rows: Any, args: argparse.Namespace) -> dict[str, Any]:
    w, c = time.perf_counter(), time.process_time()
    probe = ProbeBudget(max_seconds=args.probe_seconds)
    explainer = kcxai.Explainer(pipe, X_train, fit_budget=args.budget, probe=probe, progress=False)
    fit_wall, fit_cpu = time.perf_counter() - w, time.process_time() - c
    bounded = explainer._choices.get("bounds")
    unknown = "-" if bounded is None or bounded.compiled is None else f"{float(bounded.compiled.stats['unknown']):.4f}"
    print(f"{name:30} fit {fit_wall:6.2f} s wall ({fit_wall / args.budget:.2f}x the budget {args.budget:g} s), "
          f"{fit_cpu:6.2f} s CPU; language {explainer.language_}, unknown mass {unknown}; peak memory "
          f"{_peak_mib():.0f} MiB [{_load()}]", flush=True)
    rows = explainer.instances(X_rows)
    frames = [X_rows.iloc[k:k + 1] for k in range(len(X_rows))]
    cpu, decided, tests, sampled_tests, results = [], {"exact": 0, "proven": 0, "sampled": 0}, 0, 0, []
    failed = 0
    for row in frames:
        c = time.process_time()
        try:
            e = explainer.explain_one(row, method="local_cdrs", precision=PRECISION, inflate=False)
        except kcxai.KcxaiError as err:  # a time limit on a loaded machine, say: counted, not fatal
            failed += 1
            results.append(None)
            print(f"{'':30} a row failed: {type(err).__name__}: {str(err)[:120]}", flush=True)
            continue
        cpu.append(time.process_time() - c)
        decided[e.decided] = decided.get(e.decided, 0) + 1
        tests += e.oracle_calls
        sampled_tests += e.sampled
        results.append(e)
    proven = 1 - sampled_tests / max(tests, 1)
    if not cpu:
        print(f"{'':30} every row failed [{_load()}]", flush=True)
        return {"proven": 0.0, "median": float("nan"), "fit_ratio": fit_wall / args.budget}
    print(f"{'':30} local_cdrs 0.95 on {len(rows)} rows: {proven:.1%} of {tests} tests proven; rows exact "
          f"{decided['exact']}, proven {decided['proven']}, sampled {decided['sampled']}, failed {failed}; CPU per row "
          f"median "
          f"{statistics.median(cpu):.2f} s, max {max(cpu):.2f} s [{_load()}]", flush=True)
    if args.why:
        print(f"{'':30} {_why(explainer, rows)} [{_load()}]", flush=True)
    sampler = kcxai.Explainer(explainer.model_, language="sampling")
    s_cpu, s_sets, s_rows, s_failed = [], [], [], 0
    for row, got in zip(rows, results):  # the imported model reads instances, not the pipeline's columns
        c = time.process_time()
        try:
            s_sets.append(sampler.explain_one(row, method="local_cdrs", precision=PRECISION, inflate=False))
        except kcxai.KcxaiError:  # its time limit on a loaded machine: counted, not fatal
            s_failed += 1
            continue
        s_cpu.append(time.process_time() - c)
        s_rows.append((row, got))
    wrong, unknown_sets = _overturned(explainer, [r for r, _ in s_rows], s_sets)
    differ = sum(a is not None and a.features != b.features for (_, a), b in zip(s_rows, s_sets))
    median = f"{statistics.median(s_cpu):.2f} s" if s_cpu else "-"
    print(f"{'':30} sampling alone: CPU per row median {median} ({s_failed} rows failed); its sets differ on "
          f"{differ} of {len(s_sets)} rows; the bounds prove {wrong} of its sets below 0.95 (overturned), "
          f"{unknown_sets} undecided within the budgets [{_load()}]", flush=True)
    return {"proven": proven, "median": statistics.median(cpu), "fit_ratio": fit_wall / args.budget}


def front(args: argparse.Namespace) -> None:
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    ds = kcxai.datasets.load_dataset("adult", as_frame=True)
    X, y = ds.X, ds.y
    n_train = 2000 if args.smoke else 20_000
    X_train, y_train, X_test = X.iloc[:n_train], y.iloc[:n_train], X.iloc[n_train:n_train + args.rows]
    print(f"Part front: adult as a DataFrame, one-hot string categories, {n_train} training rows, {args.rows} "
          f"held-out rows; fit budget {args.budget:g} s; {_load()}", flush=True)
    coded = [c for c in X_train.columns if X_train[c].dtype.kind not in "fiu"]
    for name, est in _estimators(args.smoke, args.models):
        encode = ColumnTransformer([("coded", OneHotEncoder(handle_unknown="ignore", sparse_output=False), coded)],
                                   remainder="passthrough")
        target = (y_train == y_train.iloc[0]).astype(int) if name.startswith("XGBoost") else y_train
        run_model(name, make_pipeline(encode, est).fit(X_train, target), X_train, X_test, args)


def sklearn_part(args: argparse.Namespace) -> None:
    import pandas as pd
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    sets = [("breast_cancer", load_breast_cancer)] + ([] if args.smoke else [("digits", load_digits)])
    for data_name, load in sets:
        X, y = load(return_X_y=True, as_frame=True)
        X = pd.DataFrame(X)
        X_train, y_train, X_rows = X.iloc[:-args.rows], y.iloc[:-args.rows], X.iloc[-args.rows:]
        print(f"Part sklearn: {data_name}, {len(X_train)} training rows, {args.rows} held-out rows; fit budget "
              f"{args.budget:g} s; {_load()}", flush=True)
        for name, est in _estimators(args.smoke, args.models):
            if data_name == "breast_cancer":
                pipe = make_pipeline(SimpleImputer(), est).fit(X_train, y_train)
            else:
                pipe = est.fit(X_train, y_train)
            run_model(f"{data_name} {name}", pipe, X_train, X_rows, args)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=["front", "sklearn", "both"], default="both")
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--budget", type=float, default=None, help="the Explainer's fit_budget (default 30 s)")
    parser.add_argument("--models", action="append", help="only the models whose name contains this")
    parser.add_argument("--probe-seconds", type=float, default=None,
                        help="the exact probe's budget (default the Explainer's, 3 s; --smoke skips it)")
    parser.add_argument("--why", action="store_true",
                        help="run the rows again through a query on the bounded form and print where its tests went")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    args.probe_seconds = args.probe_seconds or (1e-4 if args.smoke else PROBE.max_seconds)
    args.rows = args.rows or (2 if args.smoke else 10)
    args.why = args.why or args.smoke
    args.budget = args.budget or (2.0 if args.smoke else 30.0)
    if args.part in ("front", "both"):
        front(args)
    if args.part in ("sklearn", "both"):
        sklearn_part(args)


if __name__ == "__main__":
    main()
