"""The ``kcxai`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kcxai._errors import KcxaiError

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    """Train a tree on the bundled adult data and explain a few instances."""
    import numpy as np
    from sklearn.tree import DecisionTreeClassifier

    import kcxai
    from kcxai.datasets import load_dataset

    ds = load_dataset("adult")
    rng = np.random.default_rng(args.seed)
    clf = DecisionTreeClassifier(max_depth=args.max_depth, random_state=args.seed).fit(ds.X, ds.y)
    tree = kcxai.DecisionTree.from_sklearn(clf, feature_names=ds.feature_names)
    print(f"adult: {ds.X.shape[0]} rows, {ds.X.shape[1]} features; sklearn tree: {tree.n_nodes} nodes, "
          f"depth {tree.depth}, training accuracy {clf.score(ds.X, ds.y):.3f}")
    print("Feature space: each numeric feature is cut into the intervals of the tree's thresholds; "
          "uniform distribution.\n")
    for k in rng.choice(ds.X.shape[0], size=args.instances, replace=False):
        x = ds.X[k]
        path = tree.path_features(x)
        print(f"instance #{k}: predicted {tree.predict(x)}; its path tests {len(path)} features")
        for delta in args.delta:
            e = kcxai.min_idrs(tree, x, delta, start="path")
            print(f"  delta={delta}: {e.rule()}")
            print(f"    {len(e)} features, error {float(e.error):.5f}, precision {float(e.precision):.4f}, "
                  f"{e.seconds * 1000:.2f} ms")
        print()
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kcxai", description="Exact relevant-set explanations via knowledge compilation.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    d = sub.add_parser("demo", help="explain a tree trained on the bundled adult dataset",
                       description="Train a decision tree on the bundled adult dataset and print "
                                   "min-I-delta-relevant sets for a few instances.")
    d.add_argument("--instances", type=int, default=5, help="how many instances to explain (default 5)")
    d.add_argument("--delta", type=float, nargs="+", default=[0.0, 0.01, 0.05], help="error bounds")
    d.add_argument("--max-depth", type=int, default=10, help="depth of the trained tree (default 10)")
    d.add_argument("--seed", type=int, default=0)
    d.set_defaults(func=_demo)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kcxai`` command."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except KcxaiError as e:
        print(f"kcxai: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
