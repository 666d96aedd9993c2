"""The paper's experiment (Table "tab:res"): min-I-delta-relevant sets vs Anchor on five datasets.

For each dataset: make it finite (:func:`~kcxai.experiments.prepare_data`),
train a scikit-learn tree (:func:`~kcxai.experiments.train_tree`), explain the
protocol's instances (:func:`~kcxai.experiments.explained_instances`) with
:func:`kcxai.min_idrs` for every delta and, optionally, with Anchor; measure
length, runtime and precision (Anchor's sampled metric on data, and exactly),
exact coverage, and on-data precision and coverage on the held-out test rows.
Instances are spread over joblib workers.

Beyond the paper's setting (the uniform distribution, I-delta sets), the tree can
be explained under a distribution fitted on the training rows (``distribution``:
``"product"`` or ``"mixture"``) and with C-delta sets (``mode="cdrs"``:
:func:`kcxai.local_cdrs`, delta a precision bound); see ``_settings``.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

import kcxai
from kcxai._errors import InvalidInputError, KcxaiError
from kcxai._files import atomic_writer, write_text
from kcxai._params import NONE, POSITIVE_INT, check
from kcxai.datasets import DATASETS
from kcxai.experiments import _anchor
from kcxai.experiments._data import PreparedData, explained_instances, prepare_data, subsample
from kcxai.experiments._metrics import sampled_precision
from kcxai.experiments._plots import require_matplotlib
from kcxai.experiments._progress import Progress, chunks, run_chunks
from kcxai.experiments._settings import HeldOut, check_setting, with_fitted_distribution
from kcxai.experiments._tables import summarise, write_tables
from kcxai.experiments._trees import TREE_SETTINGS, TrainedTree, train_tree

__all__ = ["PaperTableConfig", "ExperimentCheckError", "run_paper_table", "explain_kcxai", "explain_anchor",
           "RECORD_FIELDS", "DELTAS"]

#: The paper's deltas.
DELTAS = (Fraction(0), Fraction(1, 100), Fraction(2, 100), Fraction(5, 100))

#: Columns of the per-explanation record files.
#: ``coverage_exact``: Pr(x_S = v_S) under the tree's distribution; ``data_*``: the rule against the
#: held-out test rows (``data_precision`` is empty when no test row matches).
RECORD_FIELDS = ("dataset", "row", "method", "distribution", "mode", "delta", "prediction", "length", "features",
                 "seconds", "cpu_seconds", "precision_exact", "precision_exact_fraction", "precision_sampled",
                 "precision_alibi", "coverage_alibi", "coverage_exact", "coverage_exact_fraction", "data_rows",
                 "data_matching", "data_precision", "data_coverage")


#: Bumped when the record files change, so that --resume does not reuse older ones.
RECORDS_VERSION = 3


class ExperimentCheckError(KcxaiError, RuntimeError):
    """A check of the experiment failed (e.g. a delta = 0 set that is not 100% precise)."""


@dataclass
class PaperTableConfig:
    """Settings of :func:`run_paper_table`.

    Attributes
    ----------
    datasets : tuple of str
        Default: the five datasets of the paper.
    deltas : tuple of Fraction
        Default: the paper's ``0, 0.01, 0.02, 0.05``. With ``mode="cdrs"``
        they are precision bounds (e.g. ``(Fraction(95, 100),)``).
    distribution : {"uniform", "product", "mixture"}
        The distribution the tree is explained under: uniform over the
        feature space (the paper's setting, the default), or fitted on the
        protocol's training rows with :func:`kcxai.fit_distribution`.
    components : int
        ``K``, the mixture's number of components.
    mode : {"idrs", "cdrs"}
        ``"idrs"``: :func:`kcxai.min_idrs` (the paper's); ``"cdrs"``:
        :func:`kcxai.local_cdrs` with precision bound delta. Both start from
        the instance's path.
    seed : int
        Seeds the split, the trees, the instance sample, the subsamples and every sampler.
    bins : int
        Quantile bins per continuous column.
    max_instances : int or None
        Explain at most this many of the protocol's instances per dataset (a
        seeded subsample); ``None`` is the full protocol.
    sample_seed : int or None
        Seed of that subsample (default ``seed``). ``seed + 1`` picks the
        instances an ``anchor_max_instances`` run of the full protocol gave Anchor.
    anchor : bool
        Run the Anchor baseline (needs alibi).
    anchor_max_instances : int or None
        Run Anchor on at most this many of the explained instances per dataset (seeded subsample).
    threshold : float
        Anchor's precision threshold.
    n_samples : int
        Samples per explanation for Anchor's sampled precision metric.
    n_jobs : int
        joblib workers (instances are split among them).
    out : str
        Output directory.
    resume : bool
        Reuse the record files of an earlier run with the same settings.
    quick : bool
        Only a small seeded sample (the CI smoke run).
    plots : bool
        Write the PNG plots (needs matplotlib).
    """

    datasets: tuple[str, ...] = ("adult", "allhyper", "ann_thyroid", "fars", "kddcup")
    deltas: tuple[Fraction, ...] = DELTAS
    distribution: str = "uniform"
    components: int = 8
    mode: str = "idrs"
    seed: int = 0
    bins: int = 10
    max_instances: int | None = None
    sample_seed: int | None = None
    anchor: bool = True
    anchor_max_instances: int | None = None
    threshold: float = 0.95
    n_samples: int = 1000
    n_jobs: int = 1
    out: str = "results/paper-table"
    resume: bool = False
    quick: bool = False
    plots: bool = True
    progress: bool = field(default=True, repr=False)

    #: Instances per dataset in quick mode (kcxai, Anchor).
    QUICK = (20, 3)

    def effective(self) -> tuple[int | None, int | None]:
        """``(max_instances, anchor_max_instances)`` after ``quick``."""
        if not self.quick:
            return self.max_instances, self.anchor_max_instances
        q, qa = self.QUICK
        m = q if self.max_instances is None else min(q, self.max_instances)
        a = qa if self.anchor_max_instances is None else min(qa, self.anchor_max_instances)
        return m, a


# -- workers (run in joblib processes) ------------------------------------------------


def explain_kcxai(rows: Sequence[int], data: PreparedData, trained: TrainedTree, deltas: Sequence[Fraction],
                  n_samples: int, seed: int, mode: str = "idrs") -> list[dict[str, Any]]:
    """Records of :func:`kcxai.min_idrs` (``mode="idrs"``) or :func:`kcxai.local_cdrs`
    (``mode="cdrs"``), started from the instance's path, for ``rows`` and every delta,
    under the distribution of ``trained.tree``.

    Checks that kcxai's tree predicts like scikit-learn's, that every set
    meets its bound exactly (error <= delta, or precision >= delta), and
    that every I-delta set for delta = 0 has exact precision 1.
    """
    explain = kcxai.min_idrs if mode == "idrs" else kcxai.local_cdrs
    compiled = kcxai.compile_model(trained.tree, "dt")
    train = data.X[data.train]
    held_out = HeldOut.of(data, trained)
    predict = trained.clf.predict
    out = []
    for r in rows:
        x = data.X[r]
        inst = x.tolist()
        pred_skl = predict(x.reshape(1, -1))[0]
        for j, d in enumerate(deltas):
            t0, c0 = time.perf_counter(), time.process_time()
            e = explain(compiled, inst, d, start="path", inflate=False)  # the paper's sets
            sec, cpu = time.perf_counter() - t0, time.process_time() - c0
            if e.prediction != pred_skl:
                raise ExperimentCheckError(
                    f"{data.name} row {r}: kcxai's tree predicts {e.prediction!r}, scikit-learn {pred_skl!r}.")
            if mode == "idrs" and d == 0 and e.precision != 1:
                raise ExperimentCheckError(
                    f"{data.name} row {r}: the min-I0-relevant set {e.names} has exact precision {e.precision}, not 1.")
            if e.error is None or e.precision is None or ((e.error > d) if mode == "idrs" else (e.precision < d)):
                raise ExperimentCheckError(
                    f"{data.name} row {r}: the {e.method} set {e.names} has exact error {e.error} and precision "
                    f"{e.precision}, which break its bound delta = {d}.")
            sp = sampled_precision(predict, train, x, e.features, n_samples=n_samples,
                                   rng=np.random.default_rng([seed, int(r), j]))
            cov = e.coverage if e.coverage is not None else ""
            out.append({"dataset": data.name, "row": int(r), "method": "kcxai", "distribution": e.distribution,
                        "mode": mode, "delta": float(d), "prediction": int(e.prediction), "length": len(e),
                        "features": " ".join(map(str, e.features)), "seconds": sec, "cpu_seconds": cpu,
                        "precision_exact": float(e.precision or 0), "precision_exact_fraction": str(e.precision),
                        "precision_sampled": sp, "precision_alibi": "", "coverage_alibi": "",
                        "coverage_exact": cov if cov == "" else float(cov), "coverage_exact_fraction": str(cov),
                        **held_out.fields(x, e.features, pred_skl)})
    return out


_ANCHOR_CACHE: dict[tuple[Any, ...], Any] = {}


def explain_anchor(rows: Sequence[int], data: PreparedData, trained: TrainedTree, threshold: float,
                   n_samples: int, seed: int) -> list[dict[str, Any]]:
    """Records of Anchor (alibi's ``AnchorTabular``) for ``rows``, with both precisions."""
    key = (data.name, seed, threshold, id(trained.clf))
    baseline = _ANCHOR_CACHE.get(key)
    if baseline is None:
        _ANCHOR_CACHE.clear()
        baseline = _ANCHOR_CACHE[key] = _anchor.AnchorBaseline(
            trained.clf.predict, data.X[data.train], data.feature_names, data.labels, threshold=threshold)
    compiled = kcxai.compile_model(trained.tree, "dt")
    train = data.X[data.train]
    held_out = HeldOut.of(data, trained)
    out = []
    for r in rows:
        x = data.X[r]
        a = baseline.explain(x, seed=seed * 1_000_003 + int(r))
        exact = kcxai.precision(compiled, x.tolist(), a.features)
        sp = sampled_precision(trained.clf.predict, train, x, a.features, n_samples=n_samples,
                               rng=np.random.default_rng([seed, int(r), 1_000]))
        pred = int(trained.clf.predict(x.reshape(1, -1))[0])
        out.append({"dataset": data.name, "row": int(r), "method": "anchor", "delta": "", "mode": "anchor",
                    "distribution": _label(compiled.space.distribution), "coverage_exact": "",
                    "coverage_exact_fraction": "", **held_out.fields(x, a.features, pred),
                    "prediction": pred, "length": len(a.features),
                    "features": " ".join(map(str, a.features)), "seconds": a.seconds,
                    "cpu_seconds": a.cpu_seconds,
                    "precision_exact": float(exact), "precision_exact_fraction": str(exact),
                    "precision_sampled": sp, "precision_alibi": a.precision, "coverage_alibi": a.coverage})
    return out


def _label(dist: Any) -> str:
    """``"uniform"``, ``"product"`` or ``"mixture of K"``, as :attr:`kcxai.Explanation.distribution`."""
    return f"mixture of {dist.n_components}" if dist.kind == "mixture" else str(dist.kind)


# -- record files (resume) ------------------------------------------------------------


def _records_path(out: Path, name: str, method: str) -> Path:
    return out / "records" / f"{name}.{method}.csv"


def setting_name(cfg: PaperTableConfig) -> str:
    """The setting's name in record files: ``kcxai`` for the paper's (uniform, idrs), else e.g.
    ``kcxai-mixture8-cdrs``."""
    if cfg.distribution == "uniform" and cfg.mode == "idrs":
        return "kcxai"
    dist = f"mixture{cfg.components}" if cfg.distribution == "mixture" else cfg.distribution
    return f"kcxai-{dist}-{cfg.mode}"


def write_records(path: Path, records: Sequence[dict[str, Any]], key: dict[str, Any], seconds: float) -> None:
    """Write records as CSV; beside them (``.json``) the run settings ``key``, when they were
    finished, on what machine and how many wall-clock ``seconds`` they took."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(path) as fh:  # an interrupted run leaves no truncated record file behind
        w = csv.DictWriter(fh, fieldnames=RECORD_FIELDS)
        w.writeheader()
        for rec in sorted(records, key=lambda r: (r["row"], str(r["delta"]))):
            w.writerow({k: rec[k] for k in RECORD_FIELDS})
    meta = {"key": key, "seconds": round(seconds, 1), "machine": machine_info(),
            "finished": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}
    write_text(path.with_suffix(".json"), json.dumps(meta, sort_keys=True))


def read_records(path: Path) -> list[dict[str, Any]]:
    """Records written by :func:`write_records`, with numbers parsed."""
    out = []
    with path.open(newline="", encoding="utf-8") as fh:
        for rec in csv.DictReader(fh):
            d: dict[str, Any] = dict(rec)
            d["row"] = int(d["row"])
            d["length"] = int(d["length"])
            d["prediction"] = int(d["prediction"])
            for k in ("seconds", "cpu_seconds", "precision_exact", "precision_sampled"):
                d[k] = float(d[k])
            d["data_rows"], d["data_matching"] = int(d["data_rows"]), int(d["data_matching"])
            for k in ("delta", "precision_alibi", "coverage_alibi", "coverage_exact", "data_precision",
                      "data_coverage"):
                d[k] = float(d[k]) if d[k] != "" else ""
            out.append(d)
    return out


def _cached(path: Path, key: dict[str, Any], resume: bool) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """The records at ``path`` and their metadata, if resuming and they were made with settings ``key``."""
    meta_path = path.with_suffix(".json")
    if resume and path.exists() and meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if isinstance(meta, dict) and meta.get("key") == json.loads(json.dumps(key, sort_keys=True)):
                return read_records(path), meta
        except (OSError, ValueError, KeyError, TypeError):  # damaged files (a short row: TypeError) are redone
            return None
    return None


def _compute(path: Path, key: dict[str, Any], resume: bool, parts: dict[str, Any], label: str,
             work: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Records from an earlier run (``resume``) or from ``work()``; notes where they came from in ``parts``."""
    hit = _cached(path, key, resume)
    if hit is not None:
        recs, meta = hit
        parts[label] = {"seconds": meta.get("seconds"), "finished": meta.get("finished"), "resumed": True}
        return recs
    t0 = time.perf_counter()
    recs = work()
    seconds = time.perf_counter() - t0
    write_records(path, recs, key, seconds)
    parts[label] = {"seconds": round(seconds, 1),
                    "finished": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                    "resumed": False}
    return recs


# -- the run ----------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    """CPU, cores, OS and library versions (as installed, read without importing them), for the results'
    header."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info = {"cpu": cpu, "cores": os.cpu_count(), "os": platform.platform(), "python": sys.version.split()[0],
            "numpy": np.__version__, "scikit-learn": version("scikit-learn"), "joblib": version("joblib")}
    try:
        info["alibi"] = version("alibi")
    except PackageNotFoundError:
        info["alibi"] = None
    return info


def _check_config(cfg: PaperTableConfig) -> None:
    bad = [d for d in cfg.datasets if d not in DATASETS]
    if bad or not cfg.datasets:
        raise InvalidInputError(f"'datasets' must be names among {list(DATASETS)}. Got {list(cfg.datasets)}.")
    check("max_instances", cfg.max_instances, (POSITIVE_INT, NONE))
    check("anchor_max_instances", cfg.anchor_max_instances, (POSITIVE_INT, NONE))
    if isinstance(cfg.n_jobs, bool) or not isinstance(cfg.n_jobs, int) or cfg.n_jobs == 0:
        raise InvalidInputError(f"'n_jobs' must be a non-zero int (-1: all cores). Got {cfg.n_jobs!r} instead.")
    if not cfg.deltas:
        raise InvalidInputError("'deltas' must not be empty.")
    check_setting(cfg.distribution, cfg.mode, cfg.components)
    if cfg.sample_seed is not None and (isinstance(cfg.sample_seed, bool) or not isinstance(cfg.sample_seed, int)):
        raise InvalidInputError(f"'sample_seed' must be an int or None. Got {cfg.sample_seed!r} instead.")


def run_paper_table(cfg: PaperTableConfig) -> dict[str, Any]:
    """Run the experiment and write its tables, plots and records into ``cfg.out``.

    Writes ``table.md`` / ``table.csv`` / ``table.tex`` (the paper's columns,
    plus exact precision, Anchor's misses and the Anchor/kcxai runtime
    ratio; ``table.csv`` also exact coverage and on-data precision and
    coverage on the held-out rows), ``comparison.md`` (the paper's numbers
    beside ours), ``length_vs_delta.png`` and ``runtime.png`` (when
    matplotlib is installed), ``run.json`` (settings, machine, trees) and
    ``records/<dataset>.<method>.csv`` (one row per explanation; the method
    is ``kcxai`` in the paper's setting, e.g. ``kcxai-mixture8-cdrs`` in
    others, see :func:`setting_name`).

    Returns
    -------
    dict
        The content of ``run.json`` plus ``rows`` (the summary table).
    """
    _check_config(cfg)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    if cfg.anchor:  # fail now, not after the kcxai part
        _anchor.import_anchor_tabular()
    if cfg.plots:
        require_matplotlib()
    max_i, max_a = cfg.effective()
    t_start = time.perf_counter()
    records: list[dict[str, Any]] = []
    trees: dict[str, Any] = {}
    parts: dict[str, Any] = {}
    for name in cfg.datasets:
        data = prepare_data(name, bins=cfg.bins, seed=cfg.seed)
        trained, fit_cpu = with_fitted_distribution(data, train_tree(data, seed=cfg.seed), cfg.distribution,
                                                    components=cfg.components, seed=cfg.seed)
        protocol = explained_instances(data.n_rows, seed=cfg.seed)
        rows = subsample(protocol, max_i, seed=cfg.seed if cfg.sample_seed is None else cfg.sample_seed)
        a_rows = subsample(rows, max_a, seed=cfg.seed + 1) if cfg.anchor else rows[:0]
        trees[name] = {"settings": trained.settings, "n_nodes": trained.n_nodes, "depth": trained.depth,
                       "train_accuracy": trained.train_accuracy, "test_accuracy": trained.test_accuracy,
                       "n_rows": data.n_rows, "n_features": data.n_features, "n_train": int(len(data.train)),
                       "domain_sizes": list(data.domain_sizes), "protocol_instances": int(len(protocol)),
                       "kcxai_instances": int(len(rows)), "anchor_instances": int(len(a_rows)),
                       "n_test": int(len(data.test)), "distribution": _label(trained.tree.space.distribution),
                       "fit_cpu_seconds": round(fit_cpu, 2)}
        common = {"records_version": RECORDS_VERSION, "seed": cfg.seed, "bins": cfg.bins,
                  "n_samples": cfg.n_samples, "settings": trained.settings, "n_nodes": trained.n_nodes,
                  "distribution": cfg.distribution, "components": cfg.components if cfg.distribution == "mixture"
                  else None}
        key = {**common, "rows": rows.tolist(), "deltas": [str(d) for d in cfg.deltas], "mode": cfg.mode}
        method = setting_name(cfg)
        size = max(1, min(50, len(rows) // (4 * max(1, abs(cfg.n_jobs))) or 1))
        records.extend(_compute(
            _records_path(out, name, method), key, cfg.resume, parts, f"{name}.kcxai",
            lambda: run_chunks(explain_kcxai, chunks(rows.tolist(), size), n_jobs=cfg.n_jobs,
                               progress=Progress(f"{name} {method}", len(rows), enabled=cfg.progress),
                               args=(data, trained, cfg.deltas, cfg.n_samples, cfg.seed, cfg.mode))))
        if cfg.anchor and len(a_rows):
            akey = {**common, "rows": a_rows.tolist(), "threshold": cfg.threshold}
            records.extend(_compute(
                _records_path(out, name, "anchor"), akey, cfg.resume, parts, f"{name}.anchor",
                lambda: run_chunks(explain_anchor, chunks(a_rows.tolist(), 2), n_jobs=cfg.n_jobs,
                                   progress=Progress(f"{name} anchor", len(a_rows), enabled=cfg.progress),
                                   args=(data, trained, cfg.threshold, cfg.n_samples, cfg.seed))))
    # the check, again on what is reported (also covers resumed records)
    bad = [r for r in records if r["method"] == "kcxai" and r["mode"] == "idrs" and r["delta"] == 0 and
           Fraction(r["precision_exact_fraction"]) != 1]
    if bad:
        raise ExperimentCheckError(f"{len(bad)} min-I0-relevant sets are not 100% precise, e.g. {bad[0]}.")
    info = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "machine": machine_info(), "config": _config_dict(cfg), "trees": trees, "parts": parts,
            "seconds": round(time.perf_counter() - t_start, 1)}
    rows_table = summarise(records, info)
    write_text(out / "run.json", json.dumps(info, indent=1))
    write_tables(out, rows_table, info, records, plots=cfg.plots)
    return {**info, "rows": rows_table}


def _config_dict(cfg: PaperTableConfig) -> dict[str, Any]:
    d = asdict(cfg)
    d.pop("progress", None)
    d["deltas"] = [str(x) for x in cfg.deltas]
    d["datasets"] = list(cfg.datasets)
    d["tree_settings"] = {n: TREE_SETTINGS.get(n) for n in cfg.datasets}
    return d
