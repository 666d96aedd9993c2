"""PyXAI's side of ``bench_pyxai.py``: run by the Python of a separate venv that has PyXAI, never by kcxai.

Run: ``/work/venvs/pyxai/bin/python benchmarks/pyxai_side.py JOB.joblib``

``JOB.joblib`` is written by ``bench_pyxai.py`` (this benchmark's own file, read back by its own
process): ``{"model": a fitted scikit-learn or XGBoost classifier, "rows": 2-d array, "method":
"sufficient_reason" | "tree_specific_reason", "theory": bool, "limit": seconds}``. Prints one JSON
line per row: ``{"seconds", "timeout", "literals", "features"}`` (``features``: the distinct features
the reason's conditions name, ``None`` when PyXAI returned no reason), then ``{"done": true}``.

PyXAI's reasons are sets of split conditions ("x_3 > 12.5"): a sufficient reason is a subset of the
conditions of the instance that is minimal over those conditions (a prime implicant over the splits;
with ``theory`` the conditions' order is known to the solver, so "x > 12.5" implies "x > 10"). A
tree-specific reason (boosted trees) is sufficient and minimal for a stronger, per-tree condition,
not necessarily minimal as a sufficient reason. Each call is timed from ``set_instance`` to the
reason, the way a user gets one.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def main() -> None:
    import joblib

    job: dict[str, Any] = joblib.load(sys.argv[1])
    argv, sys.argv = sys.argv, sys.argv[:1]  # PyXAI parses the command line when imported
    from pyxai import Explaining, Learning

    sys.argv = argv
    t = time.perf_counter()
    _, model = Learning.ModelIO.import_models(job["model"], instances_type="tabular")
    rows = job["rows"]
    explainer = Explaining.initialize(model, instance=rows[0],
                                      features_type={"numerical": Learning.DEFAULT} if job["theory"] else None)
    print(json.dumps({"prepared": time.perf_counter() - t}), flush=True)
    for x in rows:
        t = time.perf_counter()
        explainer.set_instance(x)
        if job["method"] == "sufficient_reason":
            reason = explainer.sufficient_reason(time_limit=job["limit"])
        else:
            # one greedy pass: with a time limit PyXAI's anytime search runs to the limit on every row
            reason = explainer.tree_specific_reason(n_iterations=1)
        seconds = time.perf_counter() - t
        timeout = explainer.elapsed_time == Explaining.TIMEOUT or reason is None
        features = None
        if reason is not None:
            conditions = explainer.to_features(reason, details=True, eliminate_redundant_features=True)
            features = len({c["id"] for c in _flat(conditions)})
        print(json.dumps({"seconds": seconds, "timeout": bool(timeout),
                          "literals": None if reason is None else len(reason), "features": features}), flush=True)
    print(json.dumps({"done": True}), flush=True)


def _flat(conditions: Any) -> list[dict[str, Any]]:
    """PyXAI's detailed conditions: a tuple of dicts, or a dict of feature name -> list of dicts."""
    if isinstance(conditions, dict):
        return [c for cs in conditions.values() for c in cs]
    return list(conditions)


if __name__ == "__main__":
    main()
