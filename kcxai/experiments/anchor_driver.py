"""Anchor (alibi's ``AnchorTabular``) in its own environment: a standalone script, run as a subprocess.

It imports only numpy and alibi (never kcxai: alibi needs numpy < 2, kcxai does not), reads one job
directory written by :func:`kcxai.experiments._anchor.run_anchor` and writes ``anchors.json`` there:

* ``job.json``: ``feature_names``, ``labels`` (per feature, one label per code), ``threshold``,
  ``seed``, and ``tree``: a scikit-learn tree's arrays (``left``, ``right``, ``feature``,
  ``threshold``, ``leaf_class``) and ``classes``;
* ``train.csv`` and ``instances.csv``: coded rows (integers), no header.

The tree predicts as scikit-learn's ``predict`` does (``x[feature] <= threshold`` goes left, the leaf's
majority class); every feature is declared categorical, so an anchor is a set of equalities
``feature = instance value``. Run: ``PYTHON anchor_driver.py JOBDIR``.
"""

import json
import logging
import sys
import time
from pathlib import Path

import numpy as np


def tree_predict(tree, X):
    """The class of each row of ``X`` under the exported tree."""
    left, right = np.asarray(tree["left"]), np.asarray(tree["right"])
    feature, threshold = np.asarray(tree["feature"]), np.asarray(tree["threshold"], dtype=np.float64)
    leaf_class, classes = np.asarray(tree["leaf_class"]), np.asarray(tree["classes"])
    X = np.asarray(X, dtype=np.float32).astype(np.float64)
    node = np.zeros(len(X), dtype=np.int64)
    inner = left[node] >= 0
    while inner.any():
        rows = np.flatnonzero(inner)
        at = node[rows]
        go_left = X[rows, feature[at]] <= threshold[at]
        node[rows] = np.where(go_left, left[at], right[at])
        inner = left[node] >= 0
    return classes[leaf_class[node]]


def main(job_dir):
    # alibi (optional extra 'anchor', heavy) loads in the driver's own Python, never with kcxai
    from alibi.explainers import AnchorTabular

    job_dir = Path(job_dir)
    job = json.loads((job_dir / "job.json").read_text(encoding="utf-8"))
    train = np.loadtxt(job_dir / "train.csv", delimiter=",", dtype=np.int64, ndmin=2)
    instances = np.loadtxt(job_dir / "instances.csv", delimiter=",", dtype=np.int64, ndmin=2)
    tree = job["tree"]

    def predict(X):
        return tree_predict(tree, X)

    categories = {j: [str(s) for s in lab] for j, lab in enumerate(job["labels"])}
    explainer = AnchorTabular(predict, list(job["feature_names"]), categorical_names=categories, seed=0)
    explainer.fit(train)
    logging.getLogger("alibi").setLevel(logging.ERROR)
    out = []
    for k, x in enumerate(instances):
        np.random.seed((job["seed"] * 1_000_003 + int(job["rows"][k])) % 2**32)
        t0, c0 = time.perf_counter(), time.process_time()
        exp = explainer.explain(x, threshold=job["threshold"])
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        out.append({"row": int(job["rows"][k]), "features": sorted(int(f) for f in exp.raw["feature"]),
                    "precision": float(np.asarray(exp.precision, dtype=float).reshape(-1)[0]),
                    "coverage": float(np.asarray(exp.coverage, dtype=float).reshape(-1)[0]),
                    "prediction": int(predict(x.reshape(1, -1))[0]), "seconds": seconds, "cpu_seconds": cpu})
        (job_dir / "progress.txt").write_text(f"{k + 1}/{len(instances)}\n", encoding="utf-8")
    info = {"alibi": __import__("alibi").__version__, "numpy": np.__version__, "python": sys.version.split()[0]}
    (job_dir / "anchors.json").write_text(json.dumps({"info": info, "anchors": out}), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
