"""Milliseconds per min_idrs on scikit-learn trees of about 1k and 10k nodes (the native "dt" oracle).

The baseline, run in the same process on the same instances, is the same deletion loop answered by the
paper's path formula taken literally (every query sums ``||R_j||`` over all paths of other classes), so the
ratio shows what the pruned traversal of ``TreeOracle`` buys; ``same`` counts the baseline's explanations
identical (features and exact error) to the fast ones.

    python benchmarks/bench_min_idrs.py [--instances 1000] [--delta 0.01] [--smoke]

``--smoke``: one tree of about 100 nodes on adult, 10 instances (seconds; a test runs it).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time

import numpy as np
from sklearn.tree import DecisionTreeClassifier

import kcxai
from kcxai.engines.dt import TreeOracle
from kcxai.datasets import load_dataset


class _PathSum(TreeOracle):
    """Baseline: sum the exact path counts over every path of another class, per query."""

    def __init__(self, tree):
        super().__init__(tree)
        ws, totals = tree.space.weights, tree.space.totals
        self._paths = [(p.label, [(f, m, sum(w for k, w in enumerate(ws[f]) if m >> k & 1), totals[f])
                                  for f, m in p.masks]) for p in tree.paths]

    def disagree_weight(self, point, label, fixed):
        base = self.space.consistent_weight(point, fixed)
        total = 0
        for lab, lits in self._paths:
            if lab == label:
                continue
            num = den = 1
            for f, m, wE, z in lits:
                if f in fixed:
                    if not m >> point[f] & 1:
                        break
                else:
                    num *= wE
                    den *= z
            else:
                total += base // den * num
        return total


def _time(obj, X, delta, start):
    """Milliseconds per explanation, and the explanations (features, exact error)."""
    out, found = [], []
    for x in X:
        t0 = time.perf_counter()
        e = kcxai.min_idrs(obj, x, delta, start=start)
        out.append((time.perf_counter() - t0) * 1000)
        found.append((e.features, e.error))
    return out, found


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=1000)
    ap.add_argument("--delta", type=float, default=0.01)
    ap.add_argument("--smoke", action="store_true", help="one ~100-node tree, 10 instances (seconds)")
    args = ap.parse_args(argv)
    trees = (("adult", 50),) if args.smoke else (("adult", 500), ("fars", 5000))
    n_instances = 10 if args.smoke else args.instances
    rng = np.random.default_rng(0)
    print(f"load average {os.getloadavg()[0]:.1f}; baseline: the path formula taken literally, same process")
    print(f"{'dataset':10} {'nodes':>6} {'depth':>5} {'start':>5} {'median ms':>10} {'max ms':>8} "
          f"{'baseline median':>16} {'ratio':>6} {'same':>7}")
    for name, leaves in trees:
        ds = load_dataset(name)
        clf = DecisionTreeClassifier(max_leaf_nodes=leaves, random_state=0).fit(ds.X, ds.y)
        tree = kcxai.DecisionTree.from_sklearn(clf, feature_names=ds.feature_names)
        X = ds.X[rng.choice(len(ds.X), size=min(n_instances, len(ds.X)), replace=False)]
        base = dataclasses.replace(kcxai.compile_model(tree, "dt"), oracle=_PathSum(tree))
        for start in (None, "path"):
            _time(tree, X[:20], args.delta, start)  # warm the per-(class, feature, value) index
            fast, found = _time(tree, X, args.delta, start)
            slow, found_slow = _time(base, X[: max(min(50, len(X)), len(X) // 10)], args.delta, start)
            same = sum(a == b for a, b in zip(found, found_slow))
            print(f"{name:10} {tree.n_nodes:6d} {tree.depth:5d} {start or 'all':>5} "
                  f"{statistics.median(fast):10.3f} {max(fast):8.2f} {statistics.median(slow):16.3f} "
                  f"{statistics.median(slow) / statistics.median(fast):6.1f} {same:>3}/{len(slow):<3}")


if __name__ == "__main__":
    main()
