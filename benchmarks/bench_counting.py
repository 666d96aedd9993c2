"""Counting under fitted distributions: ms per explanation against the walk alone, batches against n_jobs, diagrams.

Part 1, per explanation. The experiment's five trees (``kcxai.experiments.train_tree``; the protocol's
instances, subsampled with seed 1 as ``kcxai experiment side-by-side`` does), the three adult reference
trees (``kcxai.datasets.reference_tree``, their own instances) and an unbounded adult tree
(``min_samples_leaf=1``, about 16,600 nodes), under the uniform distribution, the product and mixtures of
K = 1, 4, 8, 16 products fitted on the training rows. Methods, started from the instance's path as in the
experiment: ``local_cdrs`` at precision 0.95 (with and without ``inflate``), ``min_idrs`` at delta 0.01 and
0.05. Both engines explain the same instances in this process, one engine over all of them, then the other
(CPU milliseconds, median and mean): ``walk`` answers every query by the exact walk of the tree (for all
components at once), without the path tables; ``now`` is the ``dt`` language as compiled today. Their
explanations are checked equal (every field but the time).

Part 2, batches: ``Explainer.explain`` on 10,000 adult rows (a 999-node tree, uniform distribution) with
``min_idrs`` at 0.01 (the grouped tree path) and ``local_cdrs`` at 0.95 (inflated), for ``n_jobs`` = 1, 2
(joblib's loky workers, warm): wall seconds, rows per second, the parent's CPU seconds, the workers' CPU
seconds (read from /proc), and the seconds ``to_frame()`` takes after; ``today's transfer`` is the same
run with the workers sending whole ``Explanation`` objects back, as they did before.

Part 3, compiled diagrams: an adult tree (scikit-learn, ``--diagram-leaves`` leaves) and a small forest
(3 trees of depth 3), compiled to OBDD and SDD, under the uniform distribution, the product and mixtures
of K = 1, 4, 8, 16 products fitted on the adult rows; ``min_idrs`` at delta 0.01 and ``local_cdrs`` at
precision 0.95 on the same instances, CPU ms per explanation (median): ``now`` is the compiled model as
``kcxai.compile_model`` makes it (one walk of the diagram with ``K`` weights per node), ``per comp.`` the
same table walked once per component, the components' answers summed (the baseline, in this process).
Their explanations are checked equal.

The machine is shared: the load average is printed beside every figure; the ratios compare runs made
side by side.

    python benchmarks/bench_counting.py [--instances 100] [--rows 10000] [--datasets adult ...]
        [--diagram-languages obdd sdd] [--skip part1 part2 part3] [--smoke]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import kcxai
from kcxai._types import Point
from kcxai.arithmetic import Weight
from kcxai.compilers.compiled import CompiledModel
from kcxai.compilers._tables.diagram import DiagramOracle
from kcxai.engines.dt import TreeOracle
from kcxai.oracle import GenericSession, OracleSession

DATASETS = ("adult", "allhyper", "ann_thyroid", "fars", "kddcup")
REFERENCE = ("IAI12", "IAI14", "SKL14")


class Walk(TreeOracle):
    """The tree oracle without its path tables: every query is the exact walk of the tree."""

    def disagree_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        return self.walked_weight(point, label, fixed)

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> OracleSession:
        return GenericSession(self, point, label, fixed)


def walk_only(tree: Any) -> CompiledModel:
    """``tree`` answered by :class:`Walk`."""
    return CompiledModel(tree, Walk(tree), "dt", "kcxai",
                         stats={"size": tree.n_nodes, "variables": tree.space.n_features, "compile_seconds": 0.0})


def load() -> float:
    return os.getloadavg()[0]


# -- part 1 ---------------------------------------------------------------------------

METHODS: tuple[tuple[str, Callable[..., Any], Any, dict[str, Any]], ...] = (
    ("local_cdrs 0.95", kcxai.local_cdrs, 0.95, {}),
    ("local_cdrs 0.95 inflate", kcxai.local_cdrs, 0.95, {"inflate": True}),
    ("min_idrs 0.01", kcxai.min_idrs, 0.01, {}),
    ("min_idrs 0.05", kcxai.min_idrs, 0.05, {}),
)


def _cpu_ms(f: Callable[..., Any], *args: Any, **kw: Any) -> tuple[Any, float]:
    c0 = time.process_time()
    out = f(*args, **kw)
    return out, (time.process_time() - c0) * 1000


def measure(tree: Any, instances: Sequence[Any], start: Any) -> list[dict[str, Any]]:
    """Per method: CPU ms per explanation (median, mean) of both engines on the same instances."""
    c0 = time.process_time()
    new = kcxai.compile_model(tree, "dt")
    new.oracle.path_table()  # built on the first long query; here before the clock runs (its CPU time is printed)
    build = time.process_time() - c0
    c0 = time.process_time()
    old = walk_only(tree)
    build_old = time.process_time() - c0
    print(f"{'':13} {'':11} compile: now {build:.3f} s (with the path table), walk {build_old:.3f} s", flush=True)
    out = []
    for name, f, bound, kw in METHODS:
        for c in (new, old):  # first calls build what is kept (tables, per-class weights)
            f(c, instances[0], bound, start=start, **kw)
        # each engine over all the instances in turn (run alternately, the walk of big integers evicts the
        # tables from the CPU caches: +50% on an adult mixture of 8), then the answers compared
        got_new = [_cpu_ms(f, new, x, bound, start=start, **kw) for x in instances]
        got_old = [_cpu_ms(f, old, x, bound, start=start, **kw) for x in instances]
        for x, (a, _), (b, _) in zip(instances, got_new, got_old):
            if dataclasses.replace(a, seconds=0.0) != dataclasses.replace(b, seconds=0.0):
                raise AssertionError(f"{name}: the path tables and the walk disagree on {x}: {a} vs {b}")
        tn, to = [t for _, t in got_new], [t for _, t in got_old]
        out.append({"method": name, "now_median": statistics.median(tn), "now_mean": statistics.mean(tn),
                    "walk_median": statistics.median(to), "walk_mean": statistics.mean(to), "load": load()})
    return out


def _print_rows(label: str, dist: str, rows: list[dict[str, Any]]) -> None:
    for r in rows:
        print(f"{label:13} {dist:11} {r['method']:24} {r['now_median']:9.3f} {r['now_mean']:9.3f} "
              f"{r['walk_median']:10.3f} {r['walk_mean']:10.3f} {r['walk_median'] / r['now_median']:7.1f}x "
              f"{r['load']:5.1f}", flush=True)


def part1(datasets: Sequence[str], n_instances: int, ks: Sequence[int], reference: bool, unbounded: bool,
          anchor: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    from kcxai.experiments import prepare_data, train_tree
    from kcxai.experiments._data import explained_instances, subsample
    from kcxai.experiments._settings import with_fitted_distribution

    print(f"{'tree':13} {'distrib.':11} {'method':24} {'now med':>9} {'now mean':>9} {'walk med':>10} "
          f"{'walk mean':>10} {'speed-up':>8} {'load':>5}   (CPU ms per explanation)")
    got: dict[tuple[str, str, str], dict[str, Any]] = {}
    trees = [(name, {}) for name in datasets]
    if unbounded:
        trees.append(("adult", {"min_samples_leaf": 1}))
    for name, settings in trees:
        data = prepare_data(name)
        trained = train_tree(data, settings=settings or None)
        label = f"{name}{'-full' if settings else ''}"
        rows = subsample(explained_instances(data.n_rows), n_instances, seed=1)
        instances = [data.X[r].tolist() for r in rows]
        for dist in ["uniform", "product"] + [f"mixture{k}" for k in ks]:
            kind, k = ("mixture", int(dist[7:])) if dist.startswith("mixture") else (dist, 8)
            tree = with_fitted_distribution(data, trained, kind, components=k)[0].tree
            res = measure(tree, instances, "path")
            _print_rows(f"{label}:{trained.n_nodes}", dist, res)
            for r in res:
                got[(label, dist, r["method"])] = r
    if reference:
        for ref in REFERENCE:
            tree = kcxai.datasets.reference_tree(ref)
            insts = kcxai.datasets.reference_instances(ref)[:n_instances].tolist()
            for start in (None, "path"):
                res = measure(tree, insts, start)
                _print_rows(f"{ref}:{tree.n_nodes}", f"uniform/{start or 'all'}", res)
                for r in res:
                    got[(ref, f"uniform/{start or 'all'}", r["method"])] = r
    return got


def targets(got: dict[tuple[str, str, str], dict[str, Any]], anchor: dict[str, Any], ks: Sequence[int]) -> None:
    """The issue's targets, from the figures above."""
    print("\nTargets (issue 22), from the figures above:")
    k = 8 if 8 in ks else max(ks)
    for (label, dist, method), r in sorted(got.items()):
        if dist != f"mixture{k}" or method != "local_cdrs 0.95":
            continue
        prod = got.get((label, "product", method))
        if prod is None:
            continue
        a = anchor.get(label, {}).get("anchor_cpu_ms_avg")
        shown = "" if a is None else f"; Anchor/kcxai CPU (Anchor's mean, earlier run) {a / r['now_mean']:.0f}x"
        print(f"  {label:10} mixture K={k} local_cdrs 0.95: median {r['now_median']:.3f} ms = "
              f"{r['now_median'] / prod['now_median']:.2f}x the product's {prod['now_median']:.3f} ms "
              f"(walk {r['walk_median']:.3f} ms = {r['walk_median'] / prod['walk_median']:.1f}x the walk's product)"
              f"{shown}")
    for (label, dist, method), r in sorted(got.items()):
        if method.startswith("min_idrs 0.01") and (label in REFERENCE or label.endswith("-full")) and \
                dist in ("uniform/all", "uniform/path", "uniform", "product"):
            print(f"  {label:10} {dist:12} min_idrs 0.01: median {r['now_median']:.3f} ms, walk "
                  f"{r['walk_median']:.3f} ms ({r['walk_median'] / r['now_median']:.1f}x faster)")


# -- part 3 ---------------------------------------------------------------------------


def _diagram_models(leaves: int, ks: Sequence[int]) -> list[tuple[str, Any, np.ndarray]]:
    """The adult tree and forest, each under the uniform distribution, the product and a fitted mixture of
    each ``K``: ``(label, model, rows)``."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    from kcxai.datasets import load_dataset

    ds = load_dataset("adult")
    clf = DecisionTreeClassifier(max_leaf_nodes=leaves, random_state=0).fit(ds.X, ds.y)
    tree = kcxai.DecisionTree.from_sklearn(clf, feature_names=ds.feature_names)
    rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(ds.X, ds.y)
    forest = kcxai.RandomForest.from_sklearn(rf, feature_names=ds.feature_names)
    out = []
    for name, model in ((f"adult-tree:{tree.n_nodes}", tree), ("adult-forest:3x3", forest)):
        out.append((f"{name} uniform", model, ds.X))
        out.append((f"{name} product", model.with_distribution(kcxai.fit_distribution(model, ds.X[:5000])), ds.X))
        for k in ks:
            dist = kcxai.fit_distribution(model, ds.X[:5000], kind="mixture", n_components=k)
            out.append((f"{name} K={k}", model.with_distribution(dist), ds.X))
    return out


def part3(n_instances: int, ks: Sequence[int], leaves: int, languages: Sequence[str]) -> None:
    print("\nCompiled diagrams: CPU ms per explanation, median over the same instances; now (one walk with K "
          "weights per node) vs per comp. (one walk per component, summed)")
    print(f"{'model':30} {'lang':4} {'method':16} {'now':>9} {'per comp.':>9} {'ratio':>7} {'load':>5}")
    for label, model, X in _diagram_models(leaves, ks):
        for language in languages:
            compiled = kcxai.compile_model(model, language)
            per = DiagramOracle(language, model.space, compiled.oracle.table, at_once=False)
            engines = {"now": compiled, "per comp.": dataclasses.replace(compiled, oracle=per)}
            instances = [X[i].tolist() for i in range(0, len(X), max(1, len(X) // n_instances))][:n_instances]
            for name, f, bound in (("min_idrs 0.01", kcxai.min_idrs, 0.01),
                                   ("local_cdrs 0.95", kcxai.local_cdrs, 0.95)):
                times: dict[str, list[float]] = {}
                answers: dict[str, list[Any]] = {}
                for how, c in engines.items():
                    f(c, instances[0], bound)  # first calls build what is kept
                    got = [_cpu_ms(f, c, x, bound) for x in instances]
                    answers[how] = [dataclasses.replace(e, seconds=0.0) for e, _ in got]
                    times[how] = [t for _, t in got]
                if answers["now"] != answers["per comp."]:
                    raise AssertionError(f"{label} {language} {name}: one walk and per component disagree")
                a, b = statistics.median(times["now"]), statistics.median(times["per comp."])
                print(f"{label:30} {language:4} {name:16} {a:9.3f} {b:9.3f} {b / a:6.2f}x {load():5.1f}", flush=True)


# -- part 2 ---------------------------------------------------------------------------


def worker_cpu() -> float:
    """CPU seconds of this process's running child processes (the loky workers), from /proc (0 elsewhere)."""
    me, tot = os.getpid(), 0.0
    if not os.path.isdir("/proc"):
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", encoding="ascii") as fh:
                parts = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(parts[1]) == me:
            tot += (int(parts[11]) + int(parts[12])) / tick
    return tot


def part2(n_rows: int, n_jobs: Sequence[int], backend: str, methods: Sequence[tuple[str, dict[str, Any]]]) -> None:
    import joblib
    import pandas as pd
    from sklearn.tree import DecisionTreeClassifier

    from kcxai import _batch
    from kcxai.datasets import load_dataset
    from kcxai.explanation_set import ExplanationSet

    ds = load_dataset("adult")
    clf = DecisionTreeClassifier(max_leaf_nodes=500, random_state=0).fit(ds.X, ds.y)
    tree = kcxai.DecisionTree.from_sklearn(clf, feature_names=ds.feature_names)
    frame = pd.DataFrame(ds.X[:n_rows], columns=list(ds.feature_names))
    explainer = kcxai.Explainer(tree)
    print(f"\nBatches: Explainer.explain on {len(frame)} adult rows, tree {tree!r}, backend {backend!r}, "
          f"{os.cpu_count()} cores")
    print(f"{'method':16} {'n_jobs':>6} {'transfer':>9} {'wall s':>7} {'rows/s':>8} {'parent CPU s':>12} "
          f"{'workers CPU s':>13} {'to_frame s':>10} {'load':>5}")
    real_run = _batch.run
    for method, kw in methods:
        for transfer in ("packed", "today"):
            if transfer == "today":  # the workers send Explanation objects, rebuilt by the parent on arrival
                def run(job: Any, rows: Any, **opts: Any) -> Any:
                    return real_run(job, rows, packed=False, **opts)
                _batch.run = run
            try:
                walls = {}
                with joblib.parallel_config(backend=backend):
                    for nj in list(n_jobs) + [j for j in n_jobs if j > 1]:  # parallel runs twice: the pool warm
                        w0 = worker_cpu()
                        t, c = time.perf_counter(), time.process_time()
                        res: ExplanationSet = explainer.explain(frame, method=method, n_jobs=nj, **kw)
                        wall, cpu = time.perf_counter() - t, time.process_time() - c
                        w1 = worker_cpu()
                        t = time.perf_counter()
                        res.to_frame()
                        tf = time.perf_counter() - t
                        walls[nj] = wall
                        print(f"{method:16} {nj:6d} {transfer:>9} {wall:7.2f} {len(frame) / wall:8.0f} {cpu:12.2f} "
                              f"{w1 - w0:13.2f} {tf:10.2f} {load():5.1f}", flush=True)
                if 1 in walls and len(walls) > 1:
                    top = max(walls)
                    print(f"{'':16} n_jobs={top}: {walls[1] / walls[top]:.2f}x n_jobs=1 (wall; the machine is shared)")
            finally:
                _batch.run = real_run


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--instances", type=int, default=100, help="instances per tree (part 1)")
    p.add_argument("--rows", type=int, default=10_000, help="rows of the batch (part 2)")
    p.add_argument("--datasets", nargs="+", default=list(DATASETS))
    p.add_argument("--components", type=int, nargs="+", default=[1, 4, 8, 16])
    p.add_argument("--n-jobs", type=int, nargs="+", default=[1, 2])
    p.add_argument("--backend", default="loky")
    p.add_argument("--diagram-leaves", type=int, default=500, help="leaves of the adult tree of part 3")
    p.add_argument("--diagram-languages", nargs="+", default=["obdd", "sdd"], help="languages of part 3")
    p.add_argument("--skip", choices=["part1", "part2", "part3"], nargs="*", default=[])
    p.add_argument("--smoke", action="store_true", help="tiny sizes (seconds): what the test suite runs")
    args = p.parse_args(argv)
    anchor: dict[str, Any] = {}
    table = Path(__file__).resolve().parent.parent / "docs" / "results" / "table.csv"
    if table.exists():
        from kcxai.experiments.side_by_side import read_anchor_table

        anchor = read_anchor_table(table)
    print(f"kcxai {kcxai.__version__}, numpy {np.__version__}, load average {load():.1f}")
    if args.smoke:
        global METHODS
        METHODS = METHODS[:3]
        got = part1(["ann_thyroid"], 3, [2], reference=False, unbounded=False, anchor=anchor)
        ref = kcxai.datasets.reference_tree("IAI12")
        res = measure(ref, kcxai.datasets.reference_instances("IAI12")[:3].tolist(), None)
        _print_rows(f"IAI12:{ref.n_nodes}", "uniform/all", res)
        got.update({("IAI12", "uniform/all", r["method"]): r for r in res})
        targets(got, anchor, [2])
        part2(40, [1, 2], "threading", [("min_idrs", {"delta": 0.01}), ("local_cdrs", {"precision": 0.95})])
        part3(3, [1, 2], 20, ["obdd", "sdd"])
        return
    if "part1" not in args.skip:
        got = part1(args.datasets, args.instances, args.components, reference=True, unbounded="adult" in args.datasets,
                    anchor=anchor)
        targets(got, anchor, args.components)
    if "part2" not in args.skip:
        part2(args.rows, args.n_jobs, args.backend,
              [("min_idrs", {"delta": 0.01}), ("local_cdrs", {"precision": 0.95})])
    if "part3" not in args.skip:
        part3(args.instances, args.components, args.diagram_leaves, args.diagram_languages)


if __name__ == "__main__":
    main()
