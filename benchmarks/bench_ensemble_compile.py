"""Tree ensembles compiled to OBDD at real size: the "ensemble" construction against the "builder" one.

Run: ``python benchmarks/bench_ensemble_compile.py [--smoke] [--kinds ...] [--sizes 10x6 100x3] [--far 100x6]``

On adult coded into at most 10 quantile bins per continuous column (14 features), for each model kind
(soft and hard voting random forests, scikit-learn's GradientBoosting and HistGradientBoosting, XGBoost,
LightGBM; see ``kcxai/experiments/_ensemble_models.py``) and each size (trees x depth), prints:

* the new construction (``compile_model(model, "obdd")``, the default for ensembles): wall and CPU
  seconds, OBDD nodes (the diagram in the log encoding), nodes of the multi-valued diagram the queries
  count on, residual states expanded, and the peak growth of the resident memory during the compilation
  (all models run in one process, so memory freed by earlier ones and reused makes later figures lower
  bounds; forking each model hung on locks held at the fork);
* today's construction in the same process (``construction="builder"``: the threshold compiler through
  dd/CUDD) under its own time limit, and the ratio of the two compile times; a builder that hits its
  limit prints ``limit`` and the ratio as a lower bound;
* the median and largest CPU milliseconds of one exact ``min_idrs`` at delta = 0.05 (uniform
  distribution over the coded space) on held-out rows, and at delta = 0;
* checks: the compiled diagram's class equals the model's on 2,000 random points of the coded space and
  the library's own prediction on 1,000 sampled rows (``agree``).

``--far`` sizes (default 100x6) run the new construction only, for XGBoost and the soft forest, under
``--far-seconds``, and report how far they got (the limit's message names the phase, nodes and time).
Figures are wall-clock and CPU seconds on a shared machine: the load average is printed at the start
and the end; ratios from the same run are what count. ``--smoke`` runs tiny sizes in seconds (a test runs it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from fractions import Fraction
from typing import Any

import numpy as np

import kcxai
from kcxai.experiments import prepare_data
from kcxai.experiments._data import subsample
from kcxai.experiments._ensemble_models import (MODEL_KINDS, default_kinds, import_ensemble, library_predict,
                                                train_ensemble)


def _load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg() if hasattr(os, "getloadavg") else "load unknown"


def _compile(model: Any, **options: Any) -> tuple[Any, float, float, str]:
    """(compiled or None, wall s, CPU s, the limit's message with how far the construction got)."""
    t, c = time.perf_counter(), time.process_time()
    try:
        compiled = kcxai.compile_model(model, "obdd", **options)
        return compiled, time.perf_counter() - t, time.process_time() - c, ""
    except kcxai.CompilationLimitError as e:
        progress = getattr(e, "progress", {})
        if progress.get("order"):
            names = model.space.names
            levels = ", ".join(f"{names[f]} {s:,}/{n:,}" for f, s, n in zip(
                progress["order"], progress["states_by_level"], progress["nodes_by_level"]) if s or n)
            return None, time.perf_counter() - t, time.process_time() - c, (
                f"{e}\n      reached, per level (states expanded / diagram nodes): {levels}; total "
                f"{sum(progress['states_by_level']):,} / {sum(progress['nodes_by_level']):,}")
        return None, time.perf_counter() - t, time.process_time() - c, str(e)


def _explain_ms(compiled: Any, rows: list[list[int]], delta: Fraction) -> tuple[float, float]:
    times = []
    for x in rows:
        c = time.process_time()
        kcxai.min_idrs(compiled, x, delta)
        times.append(1000 * (time.process_time() - c))
    return statistics.median(times), max(times)


def _agree(compiled: Any, model: Any, kind: str, clf: Any, data: Any, rng: np.random.Generator) -> str:
    grid = np.stack([rng.integers(0, s, 2000) for s in data.domain_sizes], axis=1)
    oracle = compiled.oracle
    bad = sum(oracle.predict_point(tuple(int(v) for v in x)) != model.predict_point(tuple(int(v) for v in x))
              for x in grid)
    rows = data.X[rng.choice(len(data.X), 1000, replace=False)]
    lib = library_predict(kind, clf, rows)
    bad += sum(model.classes[oracle.predict_point(model.space.encode(list(x)))] != y for x, y in zip(rows, lib))
    return "yes" if bad == 0 else f"NO ({bad} differ)"


def _row(kind: str, size: str, new: tuple[Any, float, float, str], old: tuple[Any, float, float, str] | None,
         ms: tuple[float, float, float], agree: str, old_limit: float) -> str:
    compiled, wall, cpu, err = new
    if compiled is None:
        head = f"{kind:8} {size:6} new: LIMIT after {wall:.1f} s wall / {cpu:.1f} s CPU: {err}"
    else:
        st = compiled.stats
        head = (f"{kind:8} {size:6} new: {wall:7.2f} s wall {cpu:7.2f} s CPU  {st.size:>9,} OBDD  "
                f"{st['counting_nodes']:>8,} MDD  {st['states']:>8,} states  "
                f"{st['memory_bytes'] / 2**20:6.0f} MiB  min_idrs d=0.05 median {ms[0]:7.1f} ms (max {ms[1]:.1f}), "
                f"d=0 median {ms[2]:.1f} ms  agree {agree}")
    if old is None:
        return head
    oc, owall, ocpu, oerr = old
    if oc is None:
        where = oerr.split(' while ')[1].split(' (')[0] if ' while ' in oerr else oerr
        tail = (f"   builder: limit at {owall:.1f} s ({where})"
                + (f"; ratio > {owall / wall:.1f}x" if compiled is not None else ""))
    else:
        tail = (f"   builder: {owall:.2f} s wall {ocpu:.2f} s CPU {oc.stats.size:,} OBDD nodes; "
                f"ratio builder/new {ocpu / max(cpu, 1e-9):.1f}x CPU" if compiled is not None else
                f"   builder: {owall:.2f} s")
    return head + "\n" + tail


def run(kinds: list[str], sizes: list[tuple[int, int]], far: list[tuple[int, int]], args: argparse.Namespace) -> None:
    data = prepare_data("adult", bins=10, seed=0)
    rows = [data.X[r].tolist() for r in subsample(data.test, args.instances, seed=0)]
    print(f"adult: {data.n_rows} rows, {data.n_features} features, domain sizes {data.domain_sizes}; "
          f"{len(rows)} held-out rows explained; {_load()}", flush=True)
    limits = {"max_seconds": args.max_seconds, "max_nodes": args.max_nodes, "max_memory": args.max_memory}
    rng = np.random.default_rng(0)
    trained: dict[tuple[str, int, int], Any] = {}
    for trees, depth in sizes + far:
        for kind in kinds:
            if (trees, depth) in far and (trees, depth) not in sizes and kind not in ("xgb", "rf-soft"):
                continue
            family = MODEL_KINDS[kind][0]
            key = (family, trees, depth)
            if key not in trained:
                trained[key] = train_ensemble(data, family, trees, depth, seed=0)
            t = trained[key]
            model, _ = import_ensemble(kind, t, data)
            is_far = (trees, depth) in far and (trees, depth) not in sizes
            opts = dict(limits, max_seconds=args.far_seconds) if is_far else limits
            new = _compile(model, **opts)
            ms = (0.0, 0.0, 0.0)
            agree = ""
            if new[0] is not None:
                a, b = _explain_ms(new[0], rows, Fraction(1, 20))
                ms = (a, b, _explain_ms(new[0], rows, Fraction(0))[0])
                agree = _agree(new[0], model, kind, t.clf, data, rng)
            old = None
            if not is_far and not args.no_builder:
                old = _compile(model, construction="builder", **dict(limits, max_seconds=args.builder_seconds))
            print(_row(kind, f"{trees}x{depth}", new, old, ms, agree, args.builder_seconds), f"[{_load()}]",
                  flush=True)
            del new, old


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds (for the test suite)")
    parser.add_argument("--kinds", nargs="+", default=None, choices=list(MODEL_KINDS))
    parser.add_argument("--sizes", nargs="+", default=["10x6", "100x3"])
    parser.add_argument("--far", nargs="*", default=["100x6"])
    parser.add_argument("--instances", type=int, default=10)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    parser.add_argument("--max-nodes", type=int, default=10_000_000)
    parser.add_argument("--max-memory", type=int, default=6 << 30)
    parser.add_argument("--builder-seconds", type=float, default=60.0)
    parser.add_argument("--far-seconds", type=float, default=1800.0)
    parser.add_argument("--no-builder", action="store_true", help="skip today's construction")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    kinds = args.kinds or list(default_kinds())

    def parse(items: list[str]) -> list[tuple[int, int]]:
        return [(int(a), int(b)) for a, b in (s.split("x") for s in items)]

    if args.smoke:
        args.instances, args.builder_seconds, args.far_seconds = 2, 10.0, 10.0
        run(kinds, [(2, 2)], [(3, 2)], args)
    else:
        run(kinds, parse(args.sizes), parse(args.far or []), args)
    print(f"done; {_load()}")


if __name__ == "__main__":
    sys.exit(main())
