"""Batches at volume (issue 31): rows/s against workers, what a cluster is sent, a million rows on the command line.

Prints, with the load average beside every figure (the machine is shared: wall-clock figures move with it,
CPU seconds less so):

1. ``dt min_idrs`` per row on an unbounded adult tree (``min_samples_leaf=5``, uniform distribution,
   delta 0.01), CPU ms a row over a batch (target 0.5 ms).
2. Rows/s against workers on a ``--batch-rows`` ``min_idrs`` batch of a depth-8 adult tree pipeline (product
   distribution fitted on adult): one process, ``n_jobs=2`` (loky) and a Dask ``LocalCluster(n_workers=2,
   processes=True)`` through its client (the job scattered once) and through joblib's Dask backend (the job
   pickled with every chunk); the speed-up of ``n_jobs=2`` (target 1.8x); every run's rows checked equal to
   the first's.
3. What a worker is sent: the job's pickled bytes (model, language, options), the seconds a worker takes to
   rebuild it, the bytes of a chunk's rows and of its packed results, per row.
4. ``kcxai explain-csv`` on ``--rows`` adult rows (resampled, written to a CSV file) through the depth-8 tree
   pipeline's saved model, in a child process: wall, CPU and peak memory (target 1 M rows in 2 minutes and
   2 GiB); the CSV written serially and on the LocalCluster compared (``--cluster-rows`` of them).
5. XGBoost 100 trees of depth 6 on adult, AXps on ``--xgb-rows`` rows: CPU per row, and the projection of
   100,000 rows to 1, 2 and 64 workers from the per-row cost, the rebuild time and the bytes sent.

    python benchmarks/bench_scale.py [--rows 1000000] [--batch-rows 10000] [--xgb-rows 100] [--smoke]

``--smoke``: small sizes (a LocalCluster still starts: about ten seconds).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import joblib
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder
from sklearn.tree import DecisionTreeClassifier

import kcxai
from kcxai._batch import chunks_of, explain_chunk
from kcxai.datasets import load_dataset


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """``fn()``, its wall seconds and this process's CPU seconds."""
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def _same(a: Any, b: Any) -> int:
    """Rows that differ between two ExplanationSets (ids and explanations; times aside)."""
    return sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b)) + int(a.ids != b.ids)


def _adult_pipeline(depth: int | None, fit_rows: int | None) -> tuple[Any, pd.DataFrame, Any]:
    ds = load_dataset("adult", as_frame=True)
    X, y = ds.X, ds.y
    coded = list(ds.value_maps)
    encode = ColumnTransformer([("categories", OrdinalEncoder(), coded)], remainder="passthrough")
    pipe = make_pipeline(encode, DecisionTreeClassifier(max_depth=depth, random_state=0)).fit(X, y)
    return pipe, X, kcxai.Explainer(pipe, X if fit_rows is None else X.iloc[:fit_rows])


def per_row_dt(rows: int) -> None:
    ds = load_dataset("adult")
    clf = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(ds.X, ds.y)
    tree = kcxai.DecisionTree.from_sklearn(clf, feature_names=ds.feature_names)
    frame = pd.DataFrame(ds.X, columns=list(ds.feature_names)).sample(rows, replace=True, random_state=0)
    explainer = kcxai.Explainer(tree)
    explainer.explain(frame.head(50), method="min_idrs", delta=0.01)  # warm: imports, literals
    _, wall, cpu = _timed(lambda: explainer.explain(frame, method="min_idrs", delta=0.01))
    print(f"1. dt min_idrs delta 0.01, unbounded adult tree ({tree.n_nodes} nodes, depth {tree.depth}, uniform), "
          f"{rows} rows: {cpu / rows * 1000:.3f} ms CPU a row, {wall / rows * 1000:.3f} ms wall "
          f"(target 0.5 ms; {_load()})")


def workers(explainer: Any, frame: pd.DataFrame, client: Any) -> None:
    ask = {"method": "min_idrs", "delta": 0.01}
    explainer.explain(frame.head(50), **ask)
    base, wall1, cpu1 = _timed(lambda: explainer.explain(frame, **ask))
    print(f"2. rows/s against workers, min_idrs 0.01 on {len(frame)} adult rows, depth-8 tree pipeline "
          f"(parent CPU only; {_load()} before each run)")
    print(f"   {'where':<34} {'wall s':>7} {'rows/s':>9} {'CPU s':>7} {'speed-up':>8} {'rows differ':>11} {'load':>5}")

    def line(name: str, wall: float, cpu: float, got: Any) -> None:
        print(f"   {name:<34} {wall:>7.2f} {len(frame) / wall:>9.0f} {cpu:>7.2f} {wall1 / wall:>8.2f} "
              f"{_same(got, base):>11} {os.getloadavg()[0]:>5.1f}")

    line("1 (this process)", wall1, cpu1, base)
    with joblib.parallel_config(backend="loky"):
        explainer.explain(frame.head(200), n_jobs=2, **ask)  # start the pool
        got, wall, cpu = _timed(lambda: explainer.explain(frame, n_jobs=2, **ask))
    line("n_jobs=2 (loky, warm pool)", wall, cpu, got)
    if client is None:
        return
    with joblib.parallel_config(backend="dask"):
        got, wall, cpu = _timed(lambda: explainer.explain(frame, n_jobs=-1, **ask))
        line("LocalCluster 2 workers (direct)", wall, cpu, got)
        job = explainer._job("min_idrs", 0.01, None, {}, "raise")
        table = explainer.reader_.read(frame)
        from kcxai._batch import run

        pairs = list(zip(table.ids, table.instances))
        got2, wall, cpu = _timed(lambda: run(job, pairs, n_jobs=-1, progress=False, direct=False))
        differ = sum(a != (b.get() if hasattr(b, "get") else b) for a, b in zip(base, got2))
        print(f"   {'LocalCluster 2 workers (joblib)':<34} {wall:>7.2f} {len(frame) / wall:>9.0f} {cpu:>7.2f} "
              f"{wall1 / wall:>8.2f} {differ:>11} {os.getloadavg()[0]:>5.1f}")


def transfer(explainer: Any, frame: pd.DataFrame, client: Any, name: str, method: str, label: str = "3.",
             **bound: Any) -> dict[str, float]:
    job = explainer._job(method, bound.get("delta"), bound.get("precision"), {}, "raise")
    blob = pickle.dumps(job)
    code = ("import pickle, sys, time; blob = sys.stdin.buffer.read(); t = time.process_time(); "
            "job = pickle.loads(blob); job.compiled.oracle; print(time.process_time() - t)")
    rebuild = float(subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, check=True).stdout)
    table = explainer.reader_.read(frame)
    pairs = list(zip(table.ids, table.instances))
    chunk = chunks_of(pairs, max(1, len(pairs)))[0]
    sent = len(pickle.dumps(chunk)) / len(chunk)
    back = len(pickle.dumps(explain_chunk(job, chunk, packed=True))) / len(chunk)
    scatter = float("nan")
    if client is not None:
        t = time.perf_counter()
        future = client.scatter(job, broadcast=True, hash=False)
        client.run(lambda: None)
        scatter = time.perf_counter() - t
        future.release()
    shipped = "" if client is None else f"scattered to the 2 workers in {scatter:.2f} s wall; "
    print(f"{label} {name}: the job is {len(blob):,} bytes pickled (model, language, options), rebuilt by a worker in "
          f"{rebuild:.2f} s CPU; {shipped}a row is {sent:.0f} bytes "
          f"sent and {back:.0f} bytes back packed ({_load()})")
    return {"job": len(blob), "rebuild": rebuild, "sent": sent, "back": back}


#: The ``kcxai`` command, run by this Python in a child process.
_CLI = "import sys; from kcxai.cli import main; sys.exit(main(sys.argv[1:]))"


def million(pipe: Any, X: pd.DataFrame, explainer: Any, rows: int, cluster_rows: int, address: str | None,
            where: str) -> None:
    data = os.path.join(where, "adult.csv")
    model = os.path.join(where, "model.json")
    explainer.model_.save(model)
    picks = np.random.default_rng(0).integers(0, len(X), size=rows)
    X.iloc[picks].to_csv(data, index=False)
    size = os.path.getsize(data)

    def cli(out: str, n: int | None = None, *extra: str) -> tuple[float, float, float]:
        src = data
        if n is not None:
            src = os.path.join(where, f"first{n}.csv")
            X.iloc[picks[:n]].to_csv(src, index=False)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", _CLI, "explain-csv", model, src, "--out", out, "--delta",
                        "0.01", *extra], check=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), after.ru_maxrss / 2**20

    load = _load()
    wall, cpu, peak = cli(os.path.join(where, "out.csv"))
    print(f"4. explain-csv, {rows:,} adult rows ({size / 2**20:.0f} MiB CSV), depth-8 tree pipeline, min_idrs 0.01, "
          f"one process: {wall:.1f} s wall, {cpu:.1f} s CPU, {rows / wall:,.0f} rows/s, peak memory "
          f"{peak:.2f} GiB (largest child so far) (targets for 1 M rows: 120 s, 2 GiB; {load} before, {_load()} "
          f"after)")
    if address is None:
        return
    cut = min(cluster_rows, rows)
    serial, dask = os.path.join(where, "serial.csv"), os.path.join(where, "dask.csv")
    cli(serial, cut)
    wall, _, _ = cli(dask, cut, "--scheduler", address)
    a, b = (pd.read_csv(p).drop(columns="seconds") for p in (serial, dask))
    differ = int(((a != b) & ~(a.isna() & b.isna())).any(axis=1).sum()) if a.shape == b.shape else max(len(a), len(b))
    print(f"   the same {cut:,} rows on the LocalCluster (--scheduler): {wall:.1f} s wall; rows whose CSV output "
          f"differs from the serial run's (times aside): {differ} ({_load()})")


def xgboost_axps(rows: int, trees: int, depth: int, cost: dict[str, float] | None, client: Any = None) -> None:
    try:
        from xgboost import XGBClassifier
    except ImportError:
        print("5. XGBoost: not installed (pip install -e '.[boost]'), skipped")
        return
    ds = load_dataset("adult")
    frame = pd.DataFrame(ds.X, columns=list(ds.feature_names))
    clf = XGBClassifier(n_estimators=trees, max_depth=depth, random_state=0, n_jobs=1).fit(frame, ds.y)
    explainer = kcxai.Explainer(clf, frame)
    sample = frame.sample(rows, random_state=1)
    explainer.explain(sample.head(1), method="axp")
    base, wall, cpu = _timed(lambda: explainer.explain(sample, method="axp"))
    per_row = cpu / rows
    engine = explainer.engine_for("axp")
    print(f"5. XGBoost {trees}x{depth} on adult, axp via {engine.language}: {rows} rows in {wall:.1f} s wall, "
          f"{per_row * 1000:.1f} ms CPU a row ({_load()})")
    if client is not None:
        from kcxai._batch import run

        job = explainer._job("axp", None, None, {}, "raise")
        table = explainer.reader_.read(sample)
        pairs = list(zip(table.ids, table.instances))
        with joblib.parallel_config(backend="dask"):
            for direct in (True, False):
                got, wall2, _ = _timed(lambda: run(job, pairs, n_jobs=-1, progress=False, direct=direct))
                differ = sum(a != (b.get() if hasattr(b, "get") else b) for a, b in zip(base, got))
                how = "direct: the job scattered once" if direct else "through joblib: the job with every chunk"
                print(f"   on the LocalCluster ({how}): "
                      f"{wall2:.1f} s wall against {wall:.1f} s in one process, rows differ {differ} ({_load()})")
    sent = transfer(explainer, sample, None, f"XGBoost {trees}x{depth}", "axp", "  ") if cost is None else cost
    bandwidth = 125e6  # bytes/s: a 1 Gbit/s link at the scheduler (assumed, not measured)
    n = 100_000
    for w in (1, 2, 64):
        t = sent["rebuild"] + n * per_row / w + (sent["job"] * w + n * (sent["sent"] + sent["back"])) / bandwidth
        print(f"   projection, {n:,} rows on {w} workers: {t / 60:.1f} min (per-row CPU x rows / workers + one "
              f"rebuild + bytes at 1 Gbit/s; no queueing or stragglers)")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1_000_000, help="rows through explain-csv")
    p.add_argument("--cluster-rows", type=int, default=20_000, help="rows through explain-csv on the LocalCluster")
    p.add_argument("--batch-rows", type=int, default=10_000, help="rows of the workers' batch")
    p.add_argument("--dt-rows", type=int, default=10_000, help="rows of the unbounded tree's batch")
    p.add_argument("--xgb-rows", type=int, default=100)
    p.add_argument("--xgb-trees", type=int, default=100)
    p.add_argument("--xgb-depth", type=int, default=6)
    p.add_argument("--no-cluster", action="store_true", help="no Dask LocalCluster")
    p.add_argument("--sections", type=int, nargs="+", default=[1, 2, 3, 4, 5], help="which figures to print")
    p.add_argument("--smoke", action="store_true", help="small sizes")
    args = p.parse_args(argv)
    if args.smoke:
        args.rows, args.cluster_rows, args.batch_rows, args.dt_rows = 3000, 300, 600, 500
        args.xgb_rows, args.xgb_trees, args.xgb_depth = 2, 5, 3
    print(f"bench_scale: {os.cpu_count()} cores, {_load()}")
    want = set(args.sections)
    if 1 in want:
        per_row_dt(args.dt_rows)
    pipe, X, explainer = _adult_pipeline(8, None)
    frame = X.sample(args.batch_rows, replace=True, random_state=2)
    distributed = None
    if not args.no_cluster and want & {2, 3, 4, 5}:
        try:
            import distributed
        except ImportError:
            print("(dask.distributed is not installed: pip install -e '.[dask]'; no cluster figures)")
    with tempfile.TemporaryDirectory() as where, contextlib.ExitStack() as stack:
        client = address = None
        if distributed is not None:
            cluster = stack.enter_context(distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                                   dashboard_address=":0"))
            client, address = stack.enter_context(distributed.Client(cluster)), cluster.scheduler_address
        if 2 in want:
            workers(explainer, frame, client)
        if 3 in want:
            transfer(explainer, frame, client, "depth-8 tree pipeline", "min_idrs", delta=0.01)
        if 4 in want:
            million(pipe, X, explainer, args.rows, args.cluster_rows, address, where)
        if 5 in want:
            xgboost_axps(args.xgb_rows, args.xgb_trees, args.xgb_depth, None, client)

if __name__ == "__main__":
    main()
