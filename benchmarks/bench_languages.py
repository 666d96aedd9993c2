"""Compile time, size and milliseconds per min_idrs in every counting language (dt, sdd, obdd, ddnnf).

Scikit-learn trees of about 1,000 and 10,000 nodes trained on the bundled datasets are compiled to
each language (the SDD, OBDD and d-DNNF compilers under the ``--max-seconds`` guard; ``ddnnf`` only
where d4 is installed); then ``min_idrs`` runs on the same instances in every language, timed per
explanation (wall-clock and CPU time of this process), and every explanation is checked to be
identical (features and exact error) to the native tree oracle's. One table, ratios vs dt; sizes in
each language's unit, with its edges; the load average printed first.

    python benchmarks/bench_languages.py [--instances 500] [--deltas 0 0.01] [--max-seconds 300] [--quick] [--smoke]

``--smoke``: one tree of 30 leaves and 5 instances (seconds; a test runs it so that the benchmark keeps working).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from fractions import Fraction

import numpy as np
from sklearn.tree import DecisionTreeClassifier

import kcxai
from kcxai.datasets import load_dataset

TREES = (("adult", 500), ("fars", 500), ("adult", 5000), ("fars", 5000))
LANGS = tuple(lang for lang in ("dt", "sdd", "obdd", "ddnnf") if kcxai.available_languages()[lang])


def _tree(name: str, leaves: int) -> tuple[kcxai.DecisionTree, np.ndarray]:
    ds = load_dataset(name)
    clf = DecisionTreeClassifier(max_leaf_nodes=leaves, random_state=0).fit(ds.X, ds.y)
    return kcxai.DecisionTree.from_sklearn(clf, feature_names=ds.feature_names), ds.X


def _compile(tree: kcxai.DecisionTree, lang: str, max_seconds: float) -> tuple[object, str, float]:
    t0 = time.perf_counter()
    try:
        c = kcxai.compile_model(tree, lang, **({} if lang == "dt" else {"max_seconds": max_seconds}))
    except kcxai.CompilationLimitError as e:
        return None, str(e), time.perf_counter() - t0
    return c, "ok", time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=500)
    ap.add_argument("--deltas", type=str, nargs="+", default=["0", "0.01"],
                    help="bounds on the error, exact decimals (default 0 and 0.01)")
    ap.add_argument("--max-seconds", type=float, default=300.0, help="compile guard per language (default 300)")
    ap.add_argument("--quick", action="store_true", help="the ~1k-node trees and 50 instances only")
    ap.add_argument("--smoke", action="store_true", help="one tree of 30 leaves, 5 instances: seconds")
    args = ap.parse_args(argv)
    trees = [("adult", 30)] if args.smoke else [t for t in TREES if t[1] < 1000] if args.quick else list(TREES)
    n_inst = 5 if args.smoke else 50 if args.quick else args.instances
    deltas = [Fraction(d) for d in args.deltas]
    print(f"# kcxai {kcxai.__version__}, Python {platform.python_version()}, {platform.machine()}; "
          f"{n_inst} instances per tree, min_idrs from all features, feature order; guard {args.max_seconds:g} s; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    head = (f"{'dataset':8} {'nodes':>6} {'lang':5} {'backend':10} {'compile s':>9} {'size':>8} {'edges':>8} "
            f"{'table':>7} {'delta':>5} {'median ms':>9} {'max ms':>8} {'cpu ms':>8} {'x dt':>6} {'agree':>6}")
    print(head)
    print("-" * len(head))
    rng = np.random.default_rng(0)
    limits = []
    for name, leaves in trees:
        tree, X = _tree(name, leaves)
        inst = X[rng.choice(len(X), size=min(n_inst, len(X)), replace=False)]
        compiled = {lang: _compile(tree, lang, args.max_seconds) for lang in LANGS}
        base: dict[Fraction, tuple[float, list[tuple[tuple[int, ...], Fraction]]]] = {}
        for lang in LANGS:
            c, status, secs = compiled[lang]
            if c is None:
                print(f"{name:8} {tree.n_nodes:6d} {lang:5} {'-':10} {secs:9.1f} {'limit':>8} {'':>8} {'':>7} "
                      f"{'':>5} {'-':>9} {'-':>8} {'-':>8} {'-':>6} {'-':>6}")
                limits.append(f"{name} {tree.n_nodes} nodes, {lang}: {status}")
                continue
            size = c.stats.get("size", "")
            edges = c.stats.get("edges", "")
            table = c.stats.get("counting_nodes", "")
            for delta in deltas:
                kcxai.min_idrs(c, inst[0], delta)  # warm caches
                times, found = [], []
                cpu0 = time.process_time()
                for x in inst:
                    t0 = time.perf_counter()
                    e = kcxai.min_idrs(c, x, delta)
                    times.append((time.perf_counter() - t0) * 1000)
                    found.append((e.features, e.error))
                cpu = (time.process_time() - cpu0) * 1000 / len(inst)
                med = statistics.median(times)
                if lang == "dt":
                    base[delta] = (med, found)
                ratio = med / base[delta][0] if delta in base else float("nan")
                agree = sum(a == b for a, b in zip(found, base[delta][1])) if delta in base else 0
                print(f"{name:8} {tree.n_nodes:6d} {lang:5} {c.backend:10} {secs:9.2f} {size!s:>8} {edges!s:>8} "
                      f"{table!s:>7} {str(delta):>5} {med:9.2f} {max(times):8.2f} {cpu:8.2f} {ratio:6.1f} "
                      f"{agree:>3}/{len(inst)}")
    for line in limits:
        print(f"limit: {line}")


if __name__ == "__main__":
    main()
