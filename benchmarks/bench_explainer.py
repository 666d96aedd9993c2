"""Explaining 10,000 adult rows with min_idrs on a 1k-node tree: Explainer batches vs a per-row loop.

Prints, in one process: the seconds of a plain loop ``kcxai.min_idrs(compiled, x, delta)`` over the
rows (today's way), of ``Explainer.explain(frame, delta=...)`` on one core (reading the DataFrame, the
grouped tree path, building the ExplanationSet), of ``.to_frame()``, and of ``n_jobs=2`` (joblib loky
workers, cold and warm pool), with the ratios. Checks that the batch gives the loop's explanations.

    python benchmarks/bench_explainer.py [--rows 10000] [--loop-rows 10000] [--delta 0 0.01 0.05] [--smoke]

``--smoke``: a ~100-node tree, 200 rows, one delta, distributions fitted on 2,000 rows (seconds; a test
runs it, n_jobs=2 included).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import joblib
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

import kcxai
from kcxai.datasets import load_dataset


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=10_000)
    p.add_argument("--loop-rows", type=int, default=10_000, help="rows explained by the per-row loop")
    p.add_argument("--delta", type=float, nargs="+", default=[0.0, 0.01, 0.05])
    p.add_argument("--cdrs-rows", type=int, default=1000, help="rows explained with local_cdrs")
    p.add_argument("--leaves", type=int, default=500, help="max_leaf_nodes of the tree (500 -> 999 nodes)")
    p.add_argument("--fit-rows", type=int, default=None, help="rows the distributions are fitted on (default all)")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, seconds")
    args = p.parse_args(argv)
    if args.smoke:
        args.rows, args.loop_rows, args.delta, args.cdrs_rows, args.leaves = 200, 200, [0.01], 10, 50
        args.fit_rows = 2000

    ds = load_dataset("adult")
    clf = DecisionTreeClassifier(max_leaf_nodes=args.leaves, random_state=0).fit(ds.X, ds.y)
    tree = kcxai.DecisionTree.from_sklearn(clf, feature_names=ds.feature_names)
    frame = pd.DataFrame(ds.X[:args.rows], columns=list(ds.feature_names))
    print(f"adult: {len(frame)} rows; tree {tree!r}; {platform.python_implementation()} "
          f"{platform.python_version()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    t = time.perf_counter()
    explainer = kcxai.Explainer(tree)
    print(f"Explainer(tree): {time.perf_counter() - t:.3f} s (import + compile once)\n")
    compiled = explainer.compiled_
    loop_rows = frame.to_numpy()[:args.loop_rows]
    print(f"{'delta':>6} {'loop s':>8} {'(rows)':>7} {'loop ms/row':>11} {'batch s':>8} {'batch ms/row':>12} "
          f"{'x faster':>8} {'to_frame s':>10} {'n_jobs=2 cold':>13} {'warm':>6} {'speed-up':>8} {'same':>5}")
    cpu: list[tuple[float, float, float]] = []
    for delta in args.delta:
        t, c = time.perf_counter(), time.process_time()
        loop = [kcxai.min_idrs(compiled, x, delta) for x in loop_rows]
        t_loop, c_loop = time.perf_counter() - t, time.process_time() - c
        t, c = time.perf_counter(), time.process_time()
        result = explainer.explain(frame, method="min_idrs", delta=delta)
        t_batch, c_batch = time.perf_counter() - t, time.process_time() - c
        cpu.append((delta, c_loop, c_batch))
        t = time.perf_counter()
        result.to_frame()
        t_frame = time.perf_counter() - t
        same = all(a == b for a, b in zip(result, loop))
        with joblib.parallel_config(backend="loky"):
            t = time.perf_counter()
            explainer.explain(frame, method="min_idrs", delta=delta, n_jobs=2)
            t_cold = time.perf_counter() - t
            t = time.perf_counter()
            par = explainer.explain(frame, method="min_idrs", delta=delta, n_jobs=2)
            t_warm = time.perf_counter() - t
        same = same and list(par) == list(result)
        per_loop = t_loop / len(loop_rows) * 1000
        print(f"{delta:>6} {t_loop:>8.2f} {len(loop_rows):>7} {per_loop:>11.3f} {t_batch:>8.2f} "
              f"{t_batch / len(frame) * 1000:>12.3f} {per_loop / (t_batch / len(frame) * 1000):>8.1f} "
              f"{t_frame:>10.2f} {t_cold:>13.2f} {t_warm:>6.2f} {t_batch / t_warm:>8.2f} {str(same):>5}")
    print("\nloop: kcxai.min_idrs(compiled, row, delta) per row; batch: Explainer.explain(DataFrame) on one core "
          "(grouped tree path); x faster: per-row time ratio; speed-up: batch one core / n_jobs=2 (warm pool).")
    print("CPU seconds (this process; robust to other load): " + "; ".join(
        f"delta {d}: loop {a:.2f} s, batch {b:.2f} s (x{a / len(loop_rows) / (b / len(frame)):.1f} per row)"
        for d, a, b in cpu))
    train = pd.DataFrame(ds.X[:args.fit_rows], columns=list(ds.feature_names))
    for kind, options in (("product", {}), ("mixture", {"n_components": 8})):
        fitted = kcxai.Explainer(tree, train, distribution=kind, distribution_options=options)
        sub = frame.to_numpy()[:1000]
        c = time.process_time()
        loop = [kcxai.min_idrs(fitted.compiled_, x, 0.01) for x in sub]
        c_loop = (time.process_time() - c) / len(sub)
        t, c = time.perf_counter(), time.process_time()
        res = fitted.explain(frame, delta=0.01)
        t_b, c_b = time.perf_counter() - t, time.process_time() - c
        print(f"{res[0].distribution} fitted on the {len(train)} rows, delta 0.01: batch of {len(frame)} rows "
              f"{t_b:.2f} s wall, {c_b:.2f} s CPU ({c_b / len(frame) * 1000:.3f} ms/row) vs loop "
              f"{c_loop * 1000:.3f} ms/row CPU (x{c_loop / (c_b / len(frame)):.1f}); same "
              f"{list(res)[:len(sub)] == loop}")
    rows = frame.head(args.cdrs_rows)
    t = time.perf_counter()
    one = explainer.explain(rows, method="local_cdrs", precision=0.95)
    t_one = time.perf_counter() - t
    with joblib.parallel_config(backend="loky"):
        explainer.explain(rows.head(8), method="local_cdrs", precision=0.95, n_jobs=2)  # warm the pool
        t = time.perf_counter()
        two = explainer.explain(rows, method="local_cdrs", precision=0.95, n_jobs=2)
        t_two = time.perf_counter() - t
    print(f"\nlocal_cdrs (precision 0.95, the per-row loop on the cached oracle), {len(rows)} rows: one core "
          f"{t_one:.2f} s ({t_one / len(rows) * 1000:.2f} ms/row), n_jobs=2 {t_two:.2f} s, speed-up "
          f"{t_one / t_two:.2f}, same {list(one) == list(two)}")


if __name__ == "__main__":
    main()
