"""Milliseconds per min_idrs through the dt, sdd and obdd oracles (a before/after check of a refactoring).

Uses only the public API that both sides of a refactoring share (``DecisionTree.from_sklearn``,
``compile_model``, ``min_idrs(..., start="path")``, ``datasets.load_dataset``), so the same file can be
run against two checkouts::

    cd <checkout> && PYTHONPATH=<checkout> python benchmarks/bench_seam.py [--instances 300] [--json-out F]

Scikit-learn trees on the bundled "adult" data (``max_leaf_nodes`` 500 and 5000, ``random_state=0``) are
compiled to each language; the first ``--instances`` rows are explained at each delta. Per (tree, language,
delta) it prints the median and p90 wall ms and the median CPU ms (``time.process_time``) per explanation,
then one JSON line (``{"bench_seam": [...]}``) with the figures. ``--json-out`` also writes the figures and
every explanation (features, exact error) so two runs can be checked for identical answers.

A compilation that takes more than ``--compile-limit`` seconds (wall) is abandoned and that tree/language
pair reported as skipped; ``--diagram-leaves`` restricts the sdd/obdd compilations to some tree sizes.
``--smoke``: one tree of about 100 nodes, 5 rows, one delta (seconds; a test runs it).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import signal
import statistics
import subprocess
import time
from pathlib import Path

from sklearn.tree import DecisionTreeClassifier

import kcxai
from kcxai.datasets import load_dataset


class _CompileTimeout(Exception):
    pass


def _on_alarm(signum, frame):  # noqa: ARG001
    raise _CompileTimeout


def _compile(tree, lang, limit):
    """(compiled or None, wall s, cpu s); None when the compilation exceeded ``limit`` seconds."""
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        compiled = kcxai.compile_model(tree, lang)
    except _CompileTimeout:
        compiled = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return compiled, time.perf_counter() - t0, time.process_time() - c0


def _p90(xs):
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.9 * (len(s) - 1))))]


def _git_rev(path):
    try:
        return subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=300, help="explain the first N rows (default 300)")
    ap.add_argument("--json-out", type=Path, default=None, help="write figures and explanations here")
    ap.add_argument("--leaves", type=int, nargs="+", default=[500, 5000], help="max_leaf_nodes of the trees")
    ap.add_argument("--languages", nargs="+", default=["dt", "sdd", "obdd"])
    ap.add_argument("--deltas", type=float, nargs="+", default=[0.0, 0.01])
    ap.add_argument("--diagram-leaves", type=int, nargs="*", default=None,
                    help="compile sdd/obdd only for these tree sizes (default: every size)")
    ap.add_argument("--compile-limit", type=float, default=120.0, help="abandon a compilation after S seconds")
    ap.add_argument("--warmup", type=int, default=10, help="untimed explanations before each timed block")
    ap.add_argument("--smoke", action="store_true", help="one ~100-node tree, 5 rows, delta 0.01 (seconds)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.instances, args.leaves, args.deltas, args.warmup = 5, [50], [0.01], 1

    src = Path(kcxai.__file__).resolve().parent.parent
    print(f"# kcxai from {src} (git {_git_rev(src)}), python {platform.python_version()}", flush=True)
    ds = load_dataset("adult")
    X = ds.X[: args.instances]
    rows, explanations = [], []
    print(f"{'leaves':>6} {'nodes':>6} {'lang':>5} {'delta':>6} {'n':>4} {'compile s':>9} "
          f"{'median ms':>10} {'p90 ms':>8} {'median CPU ms':>14} {'mean |S|':>8}", flush=True)
    for leaves in args.leaves:
        clf = DecisionTreeClassifier(max_leaf_nodes=leaves, random_state=0).fit(ds.X, ds.y)
        tree = kcxai.DecisionTree.from_sklearn(clf, feature_names=ds.feature_names)
        for lang in args.languages:
            if lang != "dt" and args.diagram_leaves is not None and leaves not in args.diagram_leaves:
                print(f"{leaves:6d} {tree.n_nodes:6d} {lang:>5} skipped (--diagram-leaves)", flush=True)
                continue
            compiled, cw, cc = _compile(tree, lang, args.compile_limit)
            if compiled is None:
                print(f"{leaves:6d} {tree.n_nodes:6d} {lang:>5} skipped: compilation > {args.compile_limit:g} s "
                      f"(abandoned after {cw:.1f} s wall, {cc:.1f} s CPU)", flush=True)
                rows.append({"leaves": leaves, "nodes": tree.n_nodes, "lang": lang, "skipped": "compile_limit",
                             "compile_wall_s": cw, "compile_cpu_s": cc})
                continue
            for delta in args.deltas:
                for x in X[: args.warmup]:
                    kcxai.min_idrs(compiled, x, delta, start="path")
                gc.collect()
                wall, cpu, sizes = [], [], []
                for i, x in enumerate(X):
                    t0, c0 = time.perf_counter(), time.process_time()
                    e = kcxai.min_idrs(compiled, x, delta, start="path")
                    c1, t1 = time.process_time(), time.perf_counter()
                    wall.append((t1 - t0) * 1000)
                    cpu.append((c1 - c0) * 1000)
                    sizes.append(len(e.features))
                    explanations.append({"leaves": leaves, "lang": lang, "delta": delta, "i": i,
                                         "features": list(e.features), "error": str(e.error)})
                row = {"leaves": leaves, "nodes": tree.n_nodes, "lang": lang, "delta": delta, "n": len(wall),
                       "compile_wall_s": round(cw, 3), "compile_cpu_s": round(cc, 3),
                       "median_ms": round(statistics.median(wall), 4), "p90_ms": round(_p90(wall), 4),
                       "median_cpu_ms": round(statistics.median(cpu), 4),
                       "mean_cpu_ms": round(statistics.fmean(cpu), 4),
                       "mean_size": round(statistics.fmean(sizes), 3)}
                rows.append(row)
                print(f"{leaves:6d} {tree.n_nodes:6d} {lang:>5} {delta:6g} {len(wall):4d} {cw:9.2f} "
                      f"{row['median_ms']:10.3f} {row['p90_ms']:8.3f} {row['median_cpu_ms']:14.3f} "
                      f"{row['mean_size']:8.2f}", flush=True)
            del compiled
    print(json.dumps({"bench_seam": rows, "kcxai": str(src), "git": _git_rev(src)}), flush=True)
    if args.json_out is not None:
        args.json_out.write_text(json.dumps({"kcxai": str(src), "git": _git_rev(src), "figures": rows,
                                             "explanations": explanations}))


if __name__ == "__main__":
    main()
