"""Tree ensembles of adult at real size: kcxai's AXps (delta = 0) side by side with PyXAI's reasons.

Run: ``python benchmarks/bench_ensembles.py [--rows 10] [--limit 120] [--pyxai /work/venvs/pyxai/bin/python]``
(``--smoke``: tiny models and rows, seconds; ``--solvers``: how long each SAT solver runs past a 2 s limit).

Three models trained on 20,000 rows of adult (scikit-learn's default forest: 100 trees of unbounded
depth; 100 trees of depth 8; XGBoost, 100 trees of depth 6), and the first ``--rows`` held-out rows.
One after the other, never at the same time:

* **kcxai** (in this process): ``kcxai.ensemble_axp`` with the engine of
  ``kcxai.engines.choose.decision_compiled``, prepared once per model (timed apart, as PyXAI's), under
  ``max_seconds=--limit``. The forests are imported with hard voting, PyXAI's semantics (scikit-learn's
  own ``predict`` averages probabilities). Every AXp is checked without kcxai's engine: 2,000 random
  points agreeing with it, classified by the source library, keep the class (sufficiency, by
  sampling), and for each of its features the counterexample the engine finds when that feature is
  freed changes the library's class (minimality, proved by a witness); "wrong" counts failures. The
  checks run after all the timed explanations, never between them.
* **PyXAI** (``--pyxai``: the Python of a separate venv with ``pyxai`` installed, run as a child
  process on the same model and rows, passed in a joblib file this benchmark writes and reads back):
  ``sufficient_reason`` for the forests, ``tree_specific_reason`` (one greedy pass) for XGBoost, each
  without and with PyXAI's numerical theory, under ``time_limit=--limit``.

The two tools answer different questions. kcxai's AXp is a set of *features* (each fixed to the
instance's value) that forces the class, and no feature can be dropped (subset-minimal over
features). PyXAI's reasons are sets of *split conditions* of the instance ("x_3 > 12.5"); a sufficient
reason is minimal over the conditions seen as independent Booleans (without the theory a condition
implied by another on the same feature may stay) or, with the theory, over conditions that know
their order; a tree-specific reason is sufficient but not necessarily minimal. "features" below
counts the distinct features a reason names.

Printed per model and tool: the preparation time, the median and maximum wall-clock seconds per
explanation (a stopped one counts as the limit), the median CPU seconds (PyXAI's include its MUSER
child processes), the number at the limit, the median size, and the ratios of PyXAI's medians to
kcxai's; then whether the targets of issue 24 are met. Figures depend on the machine's load: it is
printed (``uptime``) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import kcxai
from kcxai.engines.choose import decision_compiled

HERE = Path(__file__).resolve().parent


@dataclass
class Run:
    """The figures of one tool on one model."""

    tool: str
    prepare: float | None = None
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    timeouts: int = 0
    wrong: int = 0
    note: str = ""

    def line(self, limit: float) -> str:
        if not self.seconds:
            return f"  {self.tool:34s} {self.note or 'no figures'}"
        size = statistics.median(self.sizes) if self.sizes else "-"
        prep = f"{self.prepare:6.2f}" if self.prepare is not None else "     -"
        return (f"  {self.tool:34s} prepare {prep} s | median {statistics.median(self.seconds):8.4f} s, max "
                f"{max(self.seconds):8.3f} s, CPU median {statistics.median(self.cpu):8.4f} s | {self.timeouts} at "
                f"the {limit:g} s limit | median {size} features {self.note}")


def load(smoke: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    data = kcxai.datasets.load_dataset("adult")
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    Xtr, Xte, ytr, _ = train_test_split(X, y, train_size=2000 if smoke else 20000, random_state=0)
    return Xtr, ytr, Xte


def train(name: str, Xtr: np.ndarray, ytr: np.ndarray, smoke: bool) -> Any:
    if name == "xgboost":
        import xgboost as xgb

        return xgb.XGBClassifier(n_estimators=5 if smoke else 100, max_depth=3 if smoke else 6, n_jobs=2).fit(Xtr, ytr)
    depth = {"forest": 4 if smoke else None, "depth8": 3 if smoke else 8}[name]
    return RandomForestClassifier(n_estimators=5 if smoke else 100, max_depth=depth, random_state=0,
                                  n_jobs=2).fit(Xtr, ytr)


def concrete(space: Any, point: Any) -> list[float]:
    """A value inside each value's interval, as the library reads it (float32 when the feature says so)."""
    out = []
    for f, k in zip(space.features, point):
        iv = f.values[k]
        if iv.high != float("inf"):
            v = iv.high
        else:
            v = iv.low + max(1.0, abs(iv.low)) if iv.low != -float("inf") else 0.0
        if f.float32 and np.float32(v) > v:
            v = float(np.nextafter(np.float32(v), np.float32(-np.inf)))
        out.append(float(v))
    assert space.encode(out) == tuple(point)
    return out


def check(engine: Any, model: Any, predict: Callable[[np.ndarray], np.ndarray], x: np.ndarray,
          feats: tuple[int, ...], rng: np.random.Generator, samples: int = 2000) -> int:
    """Failures of an AXp under the library's own predictions: sampled points, then minimality witnesses."""
    engine = getattr(getattr(engine, "oracle", None), "engine", engine)  # the engine behind a compiled form
    space = model.space
    point = space.encode(x)
    label = model.predict_point(point)
    want = predict(np.asarray([concrete(space, point)]))[0]
    pts = np.array([[point[i] if i in feats else rng.integers(space.features[i].size)
                     for i in range(space.n_features)] for _ in range(samples)])
    wrong = int(np.any(predict(np.asarray([concrete(space, p) for p in pts])) != want))
    for i in feats:
        if not engine.changes(point, label, set(feats) - {i}):
            wrong += 1
            continue
        wrong += int(predict(np.asarray([concrete(space, engine.model_point())]))[0] == want)
    return wrong


def hard_votes(rf: Any) -> Callable[[np.ndarray], np.ndarray]:
    """A forest's majority vote (PyXAI's semantics; ties to the first class), from scikit-learn's trees."""
    def predict(rows: np.ndarray) -> np.ndarray:
        votes = np.stack([e.predict(rows.astype(np.float32)) for e in rf.estimators_]).astype(int)
        counts = np.stack([(votes == k).sum(axis=0) for k in range(len(rf.classes_))])
        return rf.classes_[np.argmax(counts, axis=0)]
    return predict


def run_kcxai(name: str, clf: Any, xs: np.ndarray, limit: float) -> Run:
    if name == "xgboost":
        model, predict = kcxai.from_sklearn(clf), clf.predict
    else:
        model, predict = kcxai.models.RandomForest.from_sklearn(clf, voting="hard"), hard_votes(clf)
    t = time.perf_counter()
    engine = decision_compiled(model)  # the chooser's engine, kept by the model
    run = Run(f"kcxai ensemble_axp ({engine.language})", prepare=time.perf_counter() - t)
    rng = np.random.default_rng(0)
    calls = []
    found = []
    try:
        for x in xs:
            t, c = time.perf_counter(), time.process_time()
            try:
                e = kcxai.ensemble_axp(engine, x, max_seconds=limit)
            except kcxai.SearchLimitError:
                run.seconds.append(limit)
                run.cpu.append(time.process_time() - c)
                run.timeouts += 1
                continue
            run.seconds.append(time.perf_counter() - t)
            run.cpu.append(time.process_time() - c)
            run.sizes.append(len(e))
            calls.append(e.oracle_calls)
            found.append((x, e.features))
        # checked after the timing: the library's predict (XGBoost's OpenMP threads keep spinning after it
        # returns) slowed the next explanation 2x in CPU and wall time when run between them
        for x, feats in found:
            run.wrong += check(engine, model, predict, x, feats, rng)
    finally:
        engine.close()
    run.note = (f"| {sum(calls) / max(1, len(calls)):.1f} engine calls per AXp | wrong {run.wrong} of "
                f"{len(run.sizes)} checked")
    return run


def run_pyxai(python: str, name: str, clf: Any, xs: np.ndarray, limit: float, theory: bool) -> Run:
    method = "tree_specific_reason" if name == "xgboost" else "sufficient_reason"
    run = Run(f"PyXAI {method}{' + theory' if theory else ''}")
    import joblib

    with tempfile.TemporaryDirectory() as tmp:
        job = os.path.join(tmp, "job.joblib")
        joblib.dump({"model": clf, "rows": xs, "method": method, "theory": theory, "limit": limit}, job)
        try:
            out = subprocess.run([python, str(HERE / "pyxai_side.py"), job], capture_output=True, text=True,
                                 timeout=len(xs) * limit * 2 + 600)
        except subprocess.TimeoutExpired:
            run.note = "(the PyXAI process itself ran past its budget)"
            return run
    for text in out.stdout.splitlines():
        if not text.startswith("{"):
            continue  # PyXAI's own messages
        row = json.loads(text)
        if "prepared" in row:
            run.prepare = row["prepared"]
        elif "seconds" in row:
            run.seconds.append(limit if row["timeout"] else row["seconds"])
            run.cpu.append(row["cpu"])
            run.timeouts += bool(row["timeout"])
            if row["features"] is not None:
                run.sizes.append(row["features"])
    if out.returncode:
        run.note = f"(PyXAI failed: {out.stderr.strip().splitlines()[-1:]})"
    return run


def ratios(ours: Run, theirs: Run) -> str:
    if not (ours.seconds and theirs.seconds):
        return ""
    wall = statistics.median(theirs.seconds) / statistics.median(ours.seconds)
    cpu = statistics.median(theirs.cpu) / max(statistics.median(ours.cpu), 1e-9)
    return f"    ratio {theirs.tool} / kcxai: median wall {wall:.1f}x, median CPU {cpu:.1f}x"


def targets(name: str, ours: Run, runs: list[Run]) -> list[str]:
    """The targets of issue 24 for this model, met or not."""
    if not ours.seconds:
        return []
    med, top = statistics.median(ours.seconds), max(ours.seconds)
    out = []
    if name == "forest":
        theory = next((r for r in runs if r.tool.endswith("+ theory") and r.seconds), None)
        if theory is not None:
            goal = statistics.median(theory.seconds) / 20
            out.append(f"median <= 1/20 of PyXAI-with-theory's ({goal:.3f} s): {med:.3f} s, "
                       f"{'met' if med <= goal else 'NOT met'}")
        out.append(f"max <= 10 s: {top:.2f} s, {'met' if top <= 10 else 'NOT met'}")
        out.append(f"0 rows at the limit: {ours.timeouts}, {'met' if ours.timeouts == 0 else 'NOT met'}")
    elif name == "depth8":
        out.append(f"median <= 0.05 s: {med:.4f} s, {'met' if med <= 0.05 else 'NOT met'}")
    else:
        ts = next((r for r in runs if r.tool == "PyXAI tree_specific_reason" and r.seconds), None)
        if ts is not None:
            goal = statistics.median(ts.seconds)
            out.append(f"faster than PyXAI's tree-specific reason ({goal:.4f} s): {med:.4f} s, "
                       f"{'met' if med < goal else 'NOT met'}")
    out.append(f"every set checked (sampling + minimality witnesses): wrong {ours.wrong}, "
               f"{'met' if ours.wrong == 0 else 'NOT met'}")
    return ["    target: " + t for t in out]


def uptime() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:  # pragma: no cover - not Linux
        return "unknown"


def solvers(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, limit: float = 2.0) -> None:
    """How long each pysat solver runs past a limit on hard queries of the default forest's CNF."""
    import kcxai.engines._ensemble_cnf as cnf_module
    from kcxai._deadline import Deadline

    rf = train("forest", Xtr, ytr, smoke=False)
    model = kcxai.models.RandomForest.from_sklearn(rf, voting="hard")
    point = model.space.encode(Xte[3])
    label = model.predict_point(point)
    queries = [{4, 5, 7, 10, 11, 12}, {4, 6, 7, 10, 11, 12}, {3, 5, 7, 8, 10, 11}, {5, 7, 10, 11}, {4, 10, 11}]
    accepted = cnf_module.SOLVERS
    print(f"SAT solvers past a {limit:g} s limit (default forest, 5 queries; kcxai accepts {list(accepted)})")
    cnf_module.SOLVERS = (*accepted, "g3", "g4", "gc4", "mcm")  # the ones refused, for this measurement only
    for name in cnf_module.SOLVERS:
        cnf = cnf_module.EnsembleCnf(model, solver=name)
        worst = 0.0
        for fixed in queries:
            t = time.perf_counter()
            try:
                with Deadline(limit, what="q", advice="") as d:
                    cnf.changes(point, label, fixed, d)
            except kcxai.SearchLimitError:
                pass
            worst = max(worst, time.perf_counter() - t)
        cnf.close()
        print(f"  {name:5s} worst {worst:6.2f} s = {worst / limit:4.2f} x the limit", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--limit", type=float, default=120.0)
    parser.add_argument("--models", default="forest,depth8,xgboost")
    parser.add_argument("--pyxai", default=None, help="the Python of a venv with pyxai (none: kcxai only)")
    parser.add_argument("--smoke", action="store_true", help="5-tree models, 2,000 training rows, 3 rows")
    parser.add_argument("--solvers", action="store_true", help="only the solvers' overshoot of a 2 s limit")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    rows = 3 if args.smoke else args.rows
    Xtr, ytr, Xte = load(args.smoke)
    print(f"load average {uptime()}")
    if args.solvers:
        solvers(Xtr, ytr, Xte)
        return
    xs = Xte[:rows]
    for name in args.models.split(","):
        try:
            clf = train(name, Xtr, ytr, args.smoke)
        except ImportError:
            print(f"{name}: xgboost is not installed (pip install 'kcxai[boost]'); skipped")
            continue
        print(f"{name}: {clf.__class__.__name__}({_shape(clf)}), {len(Xtr):,} training rows, {rows} rows, "
              f"limit {args.limit:g} s", flush=True)
        ours = run_kcxai(name, clf, xs, args.limit)
        print(ours.line(args.limit), flush=True)
        runs = []
        if args.pyxai:
            for theory in (False, True):
                r = run_pyxai(args.pyxai, name, clf, xs, args.limit, theory)
                runs.append(r)
                print(r.line(args.limit), flush=True)
                print(ratios(ours, r), flush=True)
        for t in targets(name, ours, runs):
            print(t)
    print(f"load average {uptime()}")


def _shape(clf: Any) -> str:
    if hasattr(clf, "estimators_"):
        return f"n_estimators={len(clf.estimators_)}, max_depth={clf.max_depth}"
    return f"n_estimators={clf.n_estimators}, max_depth={clf.max_depth}"


if __name__ == "__main__":
    main()
