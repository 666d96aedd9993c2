"""PyXAI's side of ``bench_ensembles.py``: run by the Python of a separate venv that has PyXAI, never by kcxai.

Run: ``/work/venvs/pyxai/bin/python benchmarks/pyxai_side.py JOB.joblib``

``JOB.joblib`` is written by ``bench_ensembles.py`` (this benchmark's own file, read back by its own
process): ``{"model": a fitted scikit-learn or XGBoost classifier, "rows": 2-d array, "method":
"sufficient_reason" | "tree_specific_reason", "theory": bool, "limit": seconds}``. Prints one JSON
line per row: ``{"seconds", "cpu", "timeout", "literals", "features"}`` (``cpu``: CPU seconds of this
process and of the MUSER processes PyXAI starts; ``features``: the distinct features the reason's
conditions name, ``None`` when PyXAI returned no reason), then ``{"done": true}``. PyXAI prints its own
lines too: the reader takes the JSON ones.

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
        cpu = _cpu()
        explainer.set_instance(x)
        if job["method"] == "sufficient_reason":
            reason = explainer.sufficient_reason(time_limit=job["limit"])
        else:
            # one greedy pass: with a time limit PyXAI's anytime search runs to the limit on every row
            reason = explainer.tree_specific_reason(n_iterations=1, history=False)
        seconds = time.perf_counter() - t
        cpu = _cpu() - cpu
        timeout = explainer.elapsed_time == Explaining.TIMEOUT or reason is None
        features = None
        if reason is not None:  # the feature of each condition (PyXAI's to_features fails on unused features)
            features = len({model.map_id_binaries_to_features[abs(lit)][0] for lit in reason})
        print(json.dumps({"seconds": seconds, "cpu": cpu, "timeout": bool(timeout),
                          "literals": None if reason is None else len(reason), "features": features}), flush=True)
    print(json.dumps({"done": True}), flush=True)


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (PyXAI runs MUSER as a child process)."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


if __name__ == "__main__":
    main()
