"""Seconds per smallest_drs and min_cdrs on decision trees of about 1k nodes (the native "dt" oracle).

Trees: the three adult reference trees published with the authors' tool (their instances), and
scikit-learn trees (``max_leaf_nodes=500``) trained on the bundled adult, fars and kddcup data
(instances sampled from the data with a fixed seed). For each tree, ``--instances`` instances and
each delta in ``--deltas``, prints the median and maximum seconds of each call and the median size
of the sets found.

Baseline, in the same process on the first ``--baseline`` instances: the exact search every
non-tree oracle gets (all subsets by increasing size, one counting query each), run here on the same
tree oracle wrapped so that the SAT search is not used. It is skipped where it would examine more
than ``--baseline-max-subsets`` sets. For scale, the issue quotes 0.9-72 s per instance for a tool
that solves smallest_drs with z3 MaxSMT on 1,200-node adult trees (not measured here).

    python benchmarks/bench_hard_problems.py [--instances 100] [--deltas 0.9 0.95] [--baseline 10] [--smoke]

``--smoke``: one reference tree and a ~100-node adult tree, 2 instances, delta 0.95, a baseline of one
instance (seconds; a test runs it).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from sklearn.tree import DecisionTreeClassifier

import kcxai
from kcxai.datasets import load_dataset, reference_instances, reference_tree


class _Generic:
    """The tree's own counting oracle under another language name: explainers take the generic path."""

    language = "dt-as-generic"

    def __init__(self, oracle):
        self._o = oracle
        self.space = oracle.space
        self.n_classes = oracle.n_classes

    def predict_point(self, point):
        return self._o.predict_point(point)

    def disagree_weight(self, point, label, fixed):
        return self._o.disagree_weight(point, label, fixed)

    def session(self, point, label, fixed):
        return self._o.session(point, label, fixed)


def _trees(n_instances, seed, smoke=False):
    for name in kcxai.datasets.REFERENCE_TREES[:1] if smoke else kcxai.datasets.REFERENCE_TREES:
        tree = reference_tree(name)
        yield f"adult {name} (reference)", tree, list(reference_instances(name)[:n_instances])
    rng = np.random.default_rng(seed)
    for name in ("adult",) if smoke else ("adult", "fars", "kddcup"):
        ds = load_dataset(name)
        clf = DecisionTreeClassifier(max_leaf_nodes=50 if smoke else 500, random_state=seed).fit(ds.X, ds.y)
        tree = kcxai.DecisionTree.from_sklearn(clf, feature_names=list(ds.feature_names))
        rows = rng.choice(len(ds.X), size=min(n_instances, len(ds.X)), replace=False)
        yield f"{name} sklearn", tree, list(ds.X[rows])


def _run(fn, obj, xs, delta):
    secs, sizes = [], []
    for x in xs:
        t0 = time.perf_counter()
        e = fn(obj, x, delta)
        secs.append(time.perf_counter() - t0)
        sizes.append(len(e))
    return secs, sizes


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=100)
    ap.add_argument("--deltas", type=float, nargs="+", default=[0.9, 0.95])
    ap.add_argument("--baseline", type=int, default=10, help="instances for the generic-search baseline (0: none)")
    ap.add_argument("--baseline-max-subsets", type=int, default=1 << 14)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smoke", action="store_true", help="two small trees, 2 instances, one delta (seconds)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.instances, args.deltas, args.baseline = 2, [0.95], 1

    print(f"{'tree':26} {'nodes':>5} {'feat':>4} {'delta':>5} {'problem':13} {'median s':>9} {'max s':>8} "
          f"{'size':>4}   {'baseline median s':>17} {'ratio':>6}")
    for label, tree, xs in _trees(args.instances, args.seed, args.smoke):
        generic = _Generic(kcxai.compile_model(tree, "dt").oracle)
        for delta in args.deltas:
            for fn in (kcxai.smallest_drs, kcxai.min_cdrs):
                secs, sizes = _run(fn, tree, xs, delta)
                base = ""
                if args.baseline:
                    try:
                        bsecs = []
                        for x, size in zip(xs[:args.baseline], sizes):
                            t0 = time.perf_counter()
                            e = fn(generic, x, delta, max_subsets=args.baseline_max_subsets)
                            bsecs.append(time.perf_counter() - t0)
                            if fn is kcxai.smallest_drs and len(e) != size:
                                raise SystemExit(f"size mismatch on {label}: {len(e)} != {size}")
                        fast = statistics.median(secs[:args.baseline])
                        base = f"{statistics.median(bsecs):17.3f} {statistics.median(bsecs) / fast:6.1f}"
                    except kcxai.SearchLimitError as err:  # max_subsets, or max_seconds (default 60)
                        base = f"{'> ' + err.limit:>17} {'':>6}"
                print(f"{label:26} {tree.n_nodes:5d} {tree.space.n_features:4d} {delta:5.2f} {fn.__name__:13} "
                      f"{statistics.median(secs):9.3f} {max(secs):8.3f} {statistics.median(sizes):4.0f}   {base}",
                      flush=True)


if __name__ == "__main__":
    main()
