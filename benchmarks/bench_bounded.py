"""Tree ensembles compiled exactly where they fit, bounded where they do not, and what the bounds decide.

Run: ``python benchmarks/bench_bounded.py [--smoke] [--part targets|front|both] [--budget 30] [--rows 10]``

Part 1, **targets** (issue 28): on adult coded into at most 10 quantile bins (14 features, uniform over the
coded space, as ``bench_ensemble_compile.py``), GradientBoosting 100x3, XGBoost 100x3 and every 10x6
ensemble compiled to OBDD by the exact ensemble construction under ``--exact-seconds``: exact or not,
wall and CPU seconds, nodes of the multi-valued diagram, states expanded and the peak growth of the
resident memory. ``--baseline`` also times the construction without the vectors below the cut (the
construction of the previous session) in the same process, for the ratio. A model that does not compile
exactly is compiled to the ``bounded`` language under the same budget: its unknown mass (the probability
of the points it leaves undecided) and why the exact pass stopped (its predicted time).

Part 2, **front door**: adult as a DataFrame behind ``ColumnTransformer([("coded", OneHotEncoder(),
categorical columns)], remainder="passthrough")``, 20,000 training rows, as ``bench_front_door.py``: the
default RandomForest, GradientBoosting 100x3, HistGradientBoosting (default) and XGBoost 100x6, imported
by ``kcxai.Explainer`` (the fitted product distribution). Each is compiled to ``bounded`` within
``--budget`` seconds (size, unknown mass, seconds, memory). Then the deletion loop of ``local_cdrs`` at
precision 0.95 runs on ``--rows`` held-out rows, each query decided, in this order, (1) from the bounds
when the interval lies on one side of the bound, (2) by the conditioned exact compile within
``--conditioned-seconds`` (0.2 s), (3) else by the certified sampling engine. Printed: the fraction of the
queries each decided, how often the conditioned compile fitted, the median seconds per row, and
(``--verify``) how many decisions from the bounds a conditioned compile with a larger budget confirmed.

Figures are wall-clock and CPU seconds on a shared machine; the load average is printed beside them.
``--smoke`` runs tiny models in seconds (a test runs it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from fractions import Fraction
from typing import Any

import numpy as np

import kcxai
from kcxai.compilers._ensemble import compile_additive, ensemble_order
from kcxai.compilers._ensemble.conditioned import conditioned_counts
from kcxai.compilers._limits import Guard, LimitHit
from kcxai.experiments import prepare_data
from kcxai.experiments._ensemble_models import MODEL_KINDS, default_kinds, import_ensemble, train_ensemble
from kcxai.experiments._ensemble_models import front_door_estimators

PRECISION = Fraction(95, 100)


def _load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg() if hasattr(os, "getloadavg") else "load unknown"


# -- part 1: the compile targets -------------------------------------------------------------------------------


def _exact(model: Any, seconds: float) -> tuple[Any, float, float, str]:
    t, c = time.perf_counter(), time.process_time()
    try:
        compiled = kcxai.compile_model(model, "obdd", max_seconds=seconds, max_nodes=20_000_000, max_memory=6 << 30)
        return compiled, time.perf_counter() - t, time.process_time() - c, ""
    except kcxai.CompilationLimitError as e:
        return None, time.perf_counter() - t, time.process_time() - c, str(e).split(" Raise")[0]


def _baseline_cpu(model: Any, seconds: float) -> str:
    """CPU seconds of the construction without the vectors below the cut (the previous session's), or how far
    it got."""
    spec = model.additive_trees()
    c = time.process_time()
    try:
        compile_additive(spec, ensemble_order(spec), Guard("baseline", None, seconds), bottom=False)
        return f"{time.process_time() - c:.2f} s CPU"
    except LimitHit:
        return f"limit at {seconds:g} s wall ({time.process_time() - c:.1f} s CPU)"


def targets(args: argparse.Namespace) -> None:
    data = prepare_data("adult", bins=10, seed=0)
    print(f"Part 1: adult coded into <= 10 bins ({data.n_features} features, domain sizes {data.domain_sizes}), "
          f"uniform over the coded space; exact limit {args.exact_seconds:g} s wall; {_load()}", flush=True)
    kinds = list(default_kinds())
    grid = [(2, 2)] if args.smoke else [(100, 3), (10, 6)]
    for trees, depth in grid:
        for kind in kinds:
            if (trees, depth) == (100, 3) and kind not in ("gb", "xgb") and not args.all_100x3:
                continue
            model, _ = import_ensemble(kind, train_ensemble(data, MODEL_KINDS[kind][0], trees, depth, seed=0), data)
            compiled, wall, cpu, err = _exact(model, args.exact_seconds)
            size = f"{trees}x{depth}"
            if compiled is not None:
                st = compiled.stats
                line = (f"{kind:8} {size:6} exact yes  {wall:7.2f} s wall {cpu:7.2f} s CPU  "
                        f"{st['counting_nodes']:>9,} MDD nodes  {st['states']:>10,} states  "
                        f"{st['memory_bytes'] / 2**20:6.0f} MiB")
            else:
                bounded = kcxai.compile_model(model, "bounded", max_seconds=args.exact_seconds)
                bs = bounded.stats
                line = (f"{kind:8} {size:6} exact NO   {wall:7.2f} s wall {cpu:7.2f} s CPU  ({err}); bounded in "
                        f"{bs['compile_seconds']:.1f} s: unknown mass {float(bs['unknown']):.4f}, "
                        f"{bs['diagram_nodes']:,} nodes, theta {bs['theta']:.3g}; "
                        f"the exact pass: {bs['stopped'][:160]}")
            if args.baseline:
                line += f"; without vectors: {_baseline_cpu(model, args.exact_seconds)}"
            print(line, f"[{_load()}]", flush=True)


# -- part 2: the front door ----------------------------------------------------------------------------------




class _Loop:
    """The local_cdrs 0.95 deletion loop of one row, each query decided by bounds, conditioned compile or
    sampling; counts what decided."""

    def __init__(self, model: Any, bounded: Any, sampler: Any, args: argparse.Namespace) -> None:
        self.model, self.bounded, self.sampler, self.args = model, bounded, sampler, args
        self.by = {"bounds": 0, "conditioned": 0, "sampled": 0}
        self.conditioned_tries = 0
        self.checked = self.confirmed = 0

    def precision_holds(self, point: tuple[int, ...], label: int, fixed: frozenset[int], session: Any,
                        f: int) -> bool:
        space = self.model.space
        smaller = fixed - {f}
        whole = space.consistent_weight(point, smaller)
        limit = (1 - PRECISION) * whole
        lo, hi = session.bounds_if_freed(f)
        if hi <= limit or lo > limit:
            self.by["bounds"] += 1
            decision = hi <= limit
            if self.checked < self.args.verify:
                self._verify(point, label, fixed, f, decision, limit)
            return bool(decision)
        self.conditioned_tries += 1
        try:
            got = conditioned_counts(self.model, point, label, fixed, free=f, max_seconds=self.args.conditioned_seconds)
            self.by["conditioned"] += 1
            return bool(got.disagree_freed <= limit)
        except kcxai.CompilationLimitError:
            self.by["sampled"] += 1
            return bool(self.sampler.decide_precision(point, label, smaller, PRECISION))

    def _verify(self, point: tuple[int, ...], label: int, fixed: frozenset[int], f: int, decision: bool,
                limit: Any) -> None:
        try:
            got = conditioned_counts(self.model, point, label, fixed, free=f, max_seconds=5.0)
        except kcxai.CompilationLimitError:
            return
        self.checked += 1
        self.confirmed += (got.disagree_freed <= limit) == decision

    def run(self, point: tuple[int, ...]) -> set[int]:
        label = self.model.predict_point(point)
        fixed = frozenset(range(self.model.space.n_features))
        session = self.bounded.oracle.session(point, label, fixed)
        changed = True
        while changed:
            changed = False
            for f in sorted(fixed):
                if self.precision_holds(point, label, fixed, session, f):
                    session.free(f)
                    fixed = fixed - {f}
                    changed = True
        return set(fixed)


def _front_model(name: str, est: Any, X_train: Any, y_train: Any, X_test: Any, args: argparse.Namespace) -> None:
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    coded = [c for c in X_train.columns if X_train[c].dtype.kind not in "fiu"]
    encode = ColumnTransformer([("coded", OneHotEncoder(handle_unknown="ignore", sparse_output=False), coded)],
                               remainder="passthrough")
    target = (y_train == ">50K").astype(int) if name.startswith("XGBoost") else y_train
    pipe = make_pipeline(encode, est).fit(X_train, target)
    explainer = kcxai.Explainer(pipe, X_train, language="sampling")
    model = explainer.model_
    sampler = explainer.compiled_ if explainer.compiled_ is not None else kcxai.compile_model(model, "sampling")
    sampler_oracle = getattr(sampler, "oracle", None) or kcxai.compile_model(model, "sampling").oracle
    w, c = time.perf_counter(), time.process_time()
    budget: dict[str, Any] = {"schedule": [(args.theta, None, None)]} if args.theta else {"max_seconds": args.budget}
    bounded = kcxai.compile_model(model, "bounded", **budget)
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    st = bounded.stats
    print(f"{name:30} bounded in {wall:6.2f} s wall ({cpu:6.2f} s CPU, budget {args.budget:g} s): "
          f"{st['diagram_nodes']:>9,} nodes, unknown mass {float(st['unknown']):.4f}, exact {st['exact']}, "
          f"theta {st['theta']:.3g}, peak memory {st['memory_bytes'] / 2**20:.0f} MiB; {model.space.n_features} "
          f"features, sizes up to {max(model.space.domain_sizes)} [{_load()}]", flush=True)
    loop = _Loop(model, bounded, sampler_oracle, args)
    rows = explainer.reader_.read(X_test.iloc[:args.rows]).instances
    seconds = []
    for row in rows:
        t = time.perf_counter()
        loop.run(model.space.encode(row))
        seconds.append(time.perf_counter() - t)
    total = sum(loop.by.values())
    fit = loop.by["conditioned"]
    share = {k: v / max(total, 1) for k, v in loop.by.items()}
    print(f"{'':30} local_cdrs 0.95 on {len(rows)} rows: {total} queries; decided by the bounds "
          f"{share['bounds']:.1%}, by the conditioned compile {share['conditioned']:.1%} (it fitted "
          f"{args.conditioned_seconds:g} s on {fit} of {loop.conditioned_tries} tries), sampled "
          f"{share['sampled']:.1%}; proven {share['bounds'] + share['conditioned']:.1%}; median "
          f"{statistics.median(seconds):.2f} s per row (max {max(seconds):.2f}); bounds decisions confirmed "
          f"exactly {loop.confirmed}/{loop.checked} [{_load()}]", flush=True)


def front(args: argparse.Namespace) -> None:
    ds = kcxai.datasets.load_dataset("adult", as_frame=True)
    X, y = ds.X, ds.y
    n_train = 2000 if args.smoke else args.train
    X_train, y_train, X_test = X.iloc[:n_train], y.iloc[:n_train], X.iloc[n_train:]
    print(f"Part 2: adult as a DataFrame, one-hot string categories, {n_train} training rows, fitted product "
          f"distribution; {args.rows} held-out rows; {_load()}", flush=True)
    for name, est in front_door_estimators(args.smoke):
        _front_model(name, est, X_train, y_train, X_test, args)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny models, seconds (for the test suite)")
    parser.add_argument("--part", choices=["targets", "front", "both"], default="both")
    parser.add_argument("--exact-seconds", type=float, default=60.0, help="wall-clock limit of each exact compile")
    parser.add_argument("--baseline", action="store_true", help="also time the construction without vectors")
    parser.add_argument("--all-100x3", action="store_true", help="every kind at 100x3, not only gb and xgb")
    parser.add_argument("--budget", type=float, default=30.0, help="seconds of the bounded compile (front door)")
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--train", type=int, default=20_000)
    parser.add_argument("--conditioned-seconds", type=float, default=0.2)
    parser.add_argument("--verify", type=int, default=20, help="bounds decisions checked per model")
    parser.add_argument("--theta", type=float, default=0.0,
                        help="front door: one bounded round at this path mass instead of the budget (0: the budget)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    if args.smoke:
        args.exact_seconds, args.budget, args.rows, args.verify, args.theta = 20.0, 2.0, 2, 3, 0.05
    np.random.seed(0)
    if args.part in ("targets", "both"):
        targets(args)
    if args.part in ("front", "both"):
        front(args)
    print(f"done; {_load()}")


if __name__ == "__main__":
    main()
