"""The fit budget counts work: how well its work units track time, and whether the budget is held.

The ``bounded`` language converts its budget ``max_seconds`` (the :class:`~kcxai.Explainer`'s ``fit_budget``)
to units of counted work at a fixed rate (:data:`kcxai.compilers.bounded.WORK_PER_SECOND`) and takes every
decision of its construction from the work counted, never from the clock. This benchmark prints, for the
front-door models (adult as a DataFrame behind a one-hot ``ColumnTransformer``, 20,000 training rows, as
``bench_proven.py``: the default RandomForest, GradientBoosting 100x3, HistGradientBoosting default and
XGBoost 100x6), each compiled to ``bounded`` within ``--budget`` seconds:

* the work counted against the budget in work units (``work / max_work``), the wall and CPU seconds against
  the budget (the issue holds the fit to 1.2x), the construction's rate in work units per CPU second (what
  :data:`~kcxai.compilers.bounded.WORK_PER_SECOND` is set from), the peak growth of the resident memory,
  whether the result is exact, the unknown mass, and why the construction stopped;
* the same compilation again with the timer the construction reads running 2 times slower (a slow or
  loaded machine, simulated; below the safety factor of 10 even on a loaded machine): ``same diagram``
  says whether the schedule, the work and the unknown mass are
  identical (they must be: nothing the construction decides reads the clock);
* through the front door, ``kcxai.Explainer(pipeline, X_train, fit_budget=B)`` (the exact probe first):
  its wall and CPU seconds against the budget, and the peak resident memory of the process.

    python benchmarks/bench_budget.py [--budget 10] [--models Boost] [--no-explainer]
    python benchmarks/bench_budget.py --smoke     # tiny models, a small budget (a test runs it)

Figures are CPU seconds (``time.process_time``) and wall seconds in one process on a shared machine; the
load average is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import kcxai
from kcxai.compilers import _limits
from kcxai.compilers.bounded import WORK_PER_SECOND
from kcxai.engines.choose import ProbeBudget
from kcxai.experiments._ensemble_models import front_door_estimators
from kcxai.models.imports.route import import_model


#: The real timer, for this benchmark's own figures (the slow clock replaces ``time.perf_counter``).
_WALL = time.perf_counter


def _load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextmanager
def slow_clock(factor: float) -> Iterator[None]:
    """The compilation guards' timer running ``factor`` times slower than the real one (a slow machine)."""
    start = _WALL()
    with mock.patch.object(_limits.time, "perf_counter", lambda: start + factor * (_WALL() - start)):
        yield


def _compile(model: Any, budget: float) -> tuple[Any, float, float]:
    w, c = _WALL(), time.process_time()
    compiled = kcxai.compile_model(model, "bounded", max_seconds=budget)
    return compiled, _WALL() - w, time.process_time() - c


def run_model(name: str, pipe: Any, X_train: Any, args: argparse.Namespace) -> bool:
    """Print one model's figures; whether the slow clock gave the same diagram."""
    model = import_model(pipe, X_train)[0]
    compiled, wall, cpu = _compile(model, args.budget)
    st = compiled.stats
    print(f"{name:30} budget {args.budget:g} s = {st['max_work']:,} work units: work {st['work']:,} "
          f"({st['work'] / st['max_work']:.2f}x), wall {wall:.2f} s ({wall / args.budget:.2f}x), CPU {cpu:.2f} s "
          f"({cpu / args.budget:.2f}x), rate {st['work'] / max(cpu, 1e-9):,.0f} units per CPU s; memory "
          f"{st['memory_bytes'] / 2**20:.0f} MiB; exact {st['exact']}, unknown {float(st['unknown']):.4f}, "
          f"reproducible {st['reproducible']} [{_load()}]", flush=True)
    if st["stopped"]:
        print(f"{'':30} stopped: {st['stopped'][:160]}", flush=True)
    with slow_clock(2.0):
        slow, s_wall, s_cpu = _compile(model, args.budget)
    same = (slow.stats["schedule"] == st["schedule"] and slow.stats["work"] == st["work"]
            and slow.stats["unknown_weight"] == st["unknown_weight"])
    print(f"{'':30} with a 2x slower clock: same diagram {same} (work {slow.stats['work']:,}, wall {s_wall:.2f} "
          f"s, CPU {s_cpu:.2f} s) [{_load()}]", flush=True)
    if not args.no_explainer:
        w, c = _WALL(), time.process_time()
        explainer = kcxai.Explainer(pipe, X_train, fit_budget=args.budget, probe=ProbeBudget(args.probe_seconds),
                                    progress=False)
        e_wall, e_cpu = _WALL() - w, time.process_time() - c
        print(f"{'':30} Explainer(fit_budget={args.budget:g}): wall {e_wall:.2f} s ({e_wall / args.budget:.2f}x), "
              f"CPU {e_cpu:.2f} s ({e_cpu / args.budget:.2f}x), language {explainer.language_}; peak memory of the "
              f"process {_peak_mib():.0f} MiB [{_load()}]", flush=True)
    return same


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=None, help="the fit budget in seconds (default 10)")
    parser.add_argument("--models", action="append", help="only the models whose name contains this")
    parser.add_argument("--probe-seconds", type=float, default=None, help="the exact probe (default 3 s)")
    parser.add_argument("--no-explainer", action="store_true", help="skip the front door")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    args.budget = args.budget or (0.001 if args.smoke else 10.0)
    args.probe_seconds = args.probe_seconds or (1e-4 if args.smoke else 3.0)
    from sklearn.compose import ColumnTransformer  # scikit-learn: loaded when the benchmark trains
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    ds = kcxai.datasets.load_dataset("adult", as_frame=True)
    n_train = 2000 if args.smoke else 20_000
    X_train, y_train = ds.X.iloc[:n_train], ds.y.iloc[:n_train]
    print(f"adult as a DataFrame, one-hot string categories, {n_train} training rows; budget {args.budget:g} s; "
          f"{WORK_PER_SECOND:,} work units per second of budget; {_load()}", flush=True)
    coded = [c for c in X_train.columns if X_train[c].dtype.kind not in "fiu"]
    same = []
    for name, est in front_door_estimators(args.smoke):
        if args.models and not any(k.lower() in name.lower() for k in args.models):
            continue
        encode = ColumnTransformer([("coded", OneHotEncoder(handle_unknown="ignore", sparse_output=False), coded)],
                                   remainder="passthrough")
        target = (y_train == y_train.iloc[0]).astype(int) if name.startswith("XGBoost") else y_train
        same.append(run_model(name, make_pipeline(encode, est).fit(X_train, target), X_train, args))
    print(f"same diagram under a 2x slower clock: {sum(same)} of {len(same)} models", flush=True)


if __name__ == "__main__":
    main()
