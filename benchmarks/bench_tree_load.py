"""Decision-tree construction at size: a default random forest's import, and deep chains loaded from files.

Run: ``python benchmarks/bench_tree_load.py [--baseline-rev REV] [--depths 1000 2000 3000] [--skip-forest]``
(``--smoke``: a 5-tree forest imported by this checkout only, and a 50-deep chain: seconds; a test runs it).

Every figure is measured in a fresh subprocess (so peak memory is that of the
one operation), for this checkout ("new") and for kcxai at ``--baseline-rev``
("old", extracted with ``git archive``; default: the last commit that built
every root-to-leaf path when a tree was constructed), and the ratio old / new
is printed (without git, or without that commit in the repository, the "old"
figures are skipped, and the run says so):

1. ``kcxai.from_sklearn(RandomForestClassifier(n_estimators=100, random_state=0))``
   fitted on adult exactly as in ``bench_ensembles.py``: wall and CPU seconds of the
   import, the process's peak resident memory, and whether both built the same
   trees (node arrays, reachable leaves in order, exact leaf scores);
2. a chain ``depth`` tests deep over ``depth`` distinct binary features (the
   shape whose paths hold depth**2 / 2 feature masks), loaded from kcxai JSON
   (``kcxai.load_model``) and from ``.dt`` / ``.map`` files
   (``DecisionTree.from_dt``), then saved again as JSON: seconds and the growth of
   peak resident memory over the process's before the load, for each depth. Memory
   linear in the tree's size means the per-node figure stays flat as the depth grows.

Both trees in 2 are checked against each other: the new code's JSON of the
loaded tree equals the old code's.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

DEFAULT_BASELINE = "b710926"  # main before lazy paths (paths built at construction)
HERE = os.path.dirname(os.path.abspath(__file__))
NEW_SRC = os.path.dirname(HERE)


def _rss_mb() -> float:
    """This process's peak resident memory: VmHWM (reset by exec, unlike ru_maxrss, which a child started
    by a large parent inherits), else ru_maxrss."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- workers (run in a subprocess with the kcxai under test first on sys.path) -----------------------

def _worker_forest(pickle_path: str) -> dict[str, Any]:
    import kcxai

    with open(pickle_path, "rb") as fh:  # written by this script's parent process, never a user's file
        rf = pickle.load(fh)
    before = _rss_mb()
    t, c = time.perf_counter(), time.process_time()
    model = kcxai.from_sklearn(rf)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = _rss_mb()
    # what the import built, as one number: node arrays, reachable leaves in order, exact leaf scores
    # (the old code has no tree.leaves: its paths, built at construction, give the same order)
    prints = []
    for t, tree in enumerate(model.trees):
        a = tree.arrays
        leaves = tree.leaves if hasattr(tree, "leaves") else tuple(p.leaf for p in tree.paths)
        prints.append(hash((a.feature, a.label, a.branches, a.root, leaves, tuple(model.leaf_scores(t).items()))))
    return {"wall": wall, "cpu": cpu, "peak_mb": peak, "growth_mb": peak - before,
            "nodes": sum(t.n_nodes for t in model.trees), "fingerprint": hash(tuple(prints))}


def _worker_chain(kind: str, directory: str) -> dict[str, Any]:
    import kcxai
    from kcxai import DecisionTree

    before = _rss_mb()
    t = time.perf_counter()
    if kind == "json":
        tree = kcxai.load_model(os.path.join(directory, "chain.json"))
    else:
        tree = DecisionTree.from_dt(os.path.join(directory, "chain.dt"), os.path.join(directory, "chain.map"))
    load = time.perf_counter() - t
    t = time.perf_counter()
    text = tree.to_json()
    save = time.perf_counter() - t
    with open(os.path.join(directory, f"out-{kind}.json"), "w") as fh:
        fh.write(text)
    return {"load": load, "save": save, "growth_mb": _rss_mb() - before, "nodes": tree.n_nodes, "json_bytes": len(text)}


# -- inputs ------------------------------------------------------------------------------------------

def write_chain(directory: str, depth: int) -> None:
    """The chain as kcxai JSON and as .dt / .map: node k tests feature k; value 0 goes to a leaf."""
    features = [{"name": f"f{k}", "kind": "categorical", "values": [0, 1]} for k in range(depth)]
    nodes: list[dict[str, Any]] = []
    for k in range(depth):
        nodes.append({"feature": k, "branches": [[[0], 2 * k + 1], [[1], 2 * k + 2]]})
        nodes.append({"class": k % 2})
    nodes.append({"class": 1})
    model = {"format": "kcxai-model", "version": 1, "type": "decision_tree", "space": {"features": features},
             "classes": [0, 1], "root": 0, "nodes": nodes}
    with open(os.path.join(directory, "chain.json"), "w") as fh:
        json.dump(model, fh)
    ids_internal = [2 * k + 1 for k in range(depth)]
    ids_leaf = [2 * k + 2 for k in range(depth)] + [2 * depth + 1]
    lines = [str(2 * depth + 1), "1", "I " + " ".join(map(str, ids_internal)), "T " + " ".join(map(str, ids_leaf))]
    lines += [f"{2 * k + 2} T {k % 2}" for k in range(depth)] + [f"{2 * depth + 1} T 1"]
    for k in range(depth):
        lines += [f"{2 * k + 1} f{k} 0 {2 * k + 2}", f"{2 * k + 1} f{k} 1 {2 * k + 3}"]
    with open(os.path.join(directory, "chain.dt"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(os.path.join(directory, "chain.map"), "w") as fh:
        fh.write(f"Categorical\n{depth}\n" + "".join(f"f{k} 0 =no\nf{k} 1 =yes\n" for k in range(depth)))


def run(src: str, *args: str) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=src)
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", *args], env=env,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"worker {args} with {src} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def baseline_source(rev: str, into: str) -> str | None:
    """kcxai at ``rev`` extracted into ``into`` (``into``), or ``None`` when git or the commit is missing."""
    try:
        archive = subprocess.run(["git", "-C", NEW_SRC, "archive", rev, "kcxai"], capture_output=True, check=True,
                                 timeout=60)
        subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return into


def fitted_forest(path: str, n_estimators: int = 100, max_depth: int | None = None) -> None:
    import numpy as np
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    import kcxai

    data = kcxai.datasets.load_dataset("adult")
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    Xtr, _, ytr, _ = train_test_split(X, y, test_size=0.25, random_state=0)
    rf = RandomForestClassifier(n_estimators=n_estimators, max_depth=max_depth, random_state=0, n_jobs=2).fit(Xtr, ytr)
    with open(path, "wb") as fh:
        pickle.dump(rf, fh)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-rev", default=DEFAULT_BASELINE)
    ap.add_argument("--depths", type=int, nargs="+", default=[1000, 2000, 3000])
    ap.add_argument("--repeat", type=int, default=1, help="forest imports per version (medians printed)")
    ap.add_argument("--skip-forest", action="store_true")
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="a 5-tree forest of depth 6 and a 50-deep chain (seconds)")
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    forest = (5, 6) if args.smoke else (100, None)
    if args.smoke:
        args.depths, args.repeat = [50], 1
    if args.worker:
        kind, *rest = args.worker
        res = _worker_forest(*rest) if kind == "forest" else _worker_chain(kind, *rest)
        print(json.dumps(res))
        return
    with tempfile.TemporaryDirectory() as tmp:
        versions = {"new": NEW_SRC}
        if not args.skip_baseline:
            os.makedirs(os.path.join(tmp, "old"))
            old = baseline_source(args.baseline_rev, os.path.join(tmp, "old"))
            if old is None:
                print(f"kcxai at {args.baseline_rev} is not readable from git here: the 'old' figures are skipped")
            else:
                versions["old"] = old
                print(f"old = kcxai at {args.baseline_rev}; new = {NEW_SRC}")
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
              "(wall time grows with it; CPU time less)")
        if not args.skip_forest:
            path = os.path.join(tmp, "rf.pkl")
            fitted_forest(path, *forest)
            shape = f"n_estimators={forest[0]}" + (f", max_depth={forest[1]}" if forest[1] else "")
            print(f"\n1. kcxai.from_sklearn(RandomForestClassifier({shape}, random_state=0)) on adult")
            # the smoke run imports the forest with this checkout only (a worker that unpickles a forest
            # imports scikit-learn: seconds); the old code is compared on the chains below
            forest_versions = {"new": NEW_SRC} if args.smoke else versions
            if args.smoke and "old" in versions:
                print("   (smoke run: this checkout only; the old code is compared on the chains below)")
            results: dict[str, list[dict[str, Any]]] = {v: [] for v in forest_versions}
            for _ in range(args.repeat):
                for v, src in forest_versions.items():  # alternate, so load changes hit both alike
                    results[v].append(run(src, "forest", path))
            med = {v: {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "peak_mb")}
                   for v, rs in results.items()}
            print(f"   {results['new'][0]['nodes']:,} nodes")
            for v, m in med.items():
                print(f"   {v}: {m['wall']:6.2f} s wall  {m['cpu']:6.2f} s CPU  peak RSS {m['peak_mb']:6.0f} MB")
            if "old" in med:
                print(f"   old / new: wall x{med['old']['wall'] / med['new']['wall']:.1f}, "
                      f"CPU x{med['old']['cpu'] / med['new']['cpu']:.1f}")
                same = results["old"][0]["fingerprint"] == results["new"][0]["fingerprint"]
                print("   same node arrays, reachable leaves (in order) and exact leaf scores: "
                      f"{'yes' if same else 'NO'}")
        print("\n2. a chain `depth` tests deep over `depth` binary features: load, then save as JSON")
        print(f"   {'depth':>6} {'file':>5} {'version':>7} {'load s':>8} {'save s':>7} {'peak growth MB':>15} "
              f"{'kB / node':>10} {'JSON kB':>8}")
        for depth in args.depths:
            d = os.path.join(tmp, f"chain{depth}")
            os.makedirs(d)
            write_chain(d, depth)
            for kind in ("json", "dt"):
                outs = {}
                for v, src in versions.items():
                    r = run(src, kind, d)
                    with open(os.path.join(d, f"out-{kind}.json")) as fh:
                        outs[v] = fh.read()
                    print(f"   {depth:6d} {kind:>5} {v:>7} {r['load']:8.2f} {r['save']:7.2f} {r['growth_mb']:15.1f} "
                          f"{1024 * r['growth_mb'] / r['nodes']:10.2f} {r['json_bytes'] / 1024:8.0f}")
                if len(outs) == 2 and outs["old"] != outs["new"]:
                    print("   !! the old and new JSON of the loaded tree differ")


if __name__ == "__main__":
    main()
