"""Tree ensembles across languages: compile time, size and explanation cost by ensemble size.

For a grid of sizes (number of trees x maximum depth) and model kinds (random
forests with soft and hard voting, scikit-learn's, XGBoost's and LightGBM's
boosted trees; see :mod:`kcxai.experiments._ensemble_models`) trained on a
bundled dataset, each model is explained on the same held-out rows with every
language:

* ``obdd`` and ``sdd``: :func:`kcxai.compile_model` under the run's limits
  (time, nodes, memory) and ``construction`` (default: the ensemble construction,
  :mod:`kcxai.compilers._ensemble`; ``"builder"`` for the threshold compiler through
  dd / PySDD), then :func:`kcxai.min_idrs` at every delta (exact);
* ``sat``: :func:`kcxai.ensemble_axp` with a prepared engine (delta = 0 only;
  the engine is SAT or the exact branch and bound, ``sat_engine``);
* ``sampling``: :func:`kcxai.min_idrs` on the ``sampling`` language (delta > 0
  only): certified *approximate* sets, relevant with the stated confidence.

At each delta every exact language's sets are checked by every other exact
language that is available there (:func:`kcxai.is_idrs` on a compiled diagram,
a class-change query on the SAT engine): a set one of them finds not relevant is
a *disagreement*, i.e. a bug. The sampling sets are checked by an exact language
when one compiled; a set found not relevant is allowed (with probability at most
``1 - confidence`` each) and counted apart. Its certified *decisions* are replayed
exactly as well: the deletion loop (all features, index order) is walked along the
sampled set's own path, and each decision "free feature i" is compared with the
exact one (``decisions``, ``decisions_differ``).

Nothing runs unbounded: each compilation runs under the limits, and once a model
hits a limit for a language, every larger model of its kind (no fewer trees, no
smaller depth) is skipped for that language. Each cell (model x language x delta)
explains the instances under a wall-clock budget (:mod:`kcxai.experiments._budget`;
``SIGALRM`` cannot stop a SAT call, so each SAT-based explanation and check also gets
what is left of the budget as its own ``max_seconds``);
a cell that runs out is recorded as ``skipped: over budget`` with what it did.
Runs in one process, sequentially (compiled diagrams live in C libraries).
"""

from __future__ import annotations

import datetime
import json
import math
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

import kcxai
from kcxai._deadline import Deadline
from kcxai._errors import InvalidInputError, KcxaiError, SearchLimitError
from kcxai._files import write_text
from kcxai._params import NON_NEGATIVE_INT, OPEN_PROBABILITY, POSITIVE_INT, Options, check
from kcxai.compilers._options import CONSTRUCTIONS
from kcxai.datasets import DATASETS
from kcxai.engines import LANGUAGES
from kcxai.engines.choose import decision_compiled
from kcxai.experiments._budget import OverBudget, deadline
from kcxai.experiments._data import PreparedData, prepare_data, subsample
from kcxai.experiments._ensemble_models import (MODEL_KINDS, TrainedEnsemble, default_kinds, import_ensemble,
                                                library_predict, n_nodes, require_kind, train_ensemble)
from kcxai.experiments._ensemble_tables import write_outputs
from kcxai.experiments._progress import Progress
from kcxai.experiments.paper_table import machine_info
from kcxai.explain.ensemble_sat import ENGINES

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models.classifier import Classifier

__all__ = ["EnsemblesConfig", "run_ensembles", "ENSEMBLE_LANGUAGES", "ENSEMBLE_COLUMNS"]

#: The languages compared, in the order they run.
ENSEMBLE_LANGUAGES = ("obdd", "sdd", "sat", "sampling")

#: Bumped when the record files change, so that ``resume`` does not reuse older ones.
RECORDS_VERSION = 3  # 3: the diagrams' construction and the sampling decisions replayed exactly

#: Columns of ``ensembles.csv`` (one row per model, language and delta).
ENSEMBLE_COLUMNS = (
    "dataset", "model", "trees", "depth", "nodes", "train_seconds", "import_seconds", "test_accuracy",
    "library_agrees", "language", "backend", "exact", "confidence", "delta", "status", "note",
    "compile_seconds", "size", "size_unit", "construction", "diagram_nodes", "instances", "explanations",
    "median_ms", "max_ms", "median_size", "checks", "disagreements", "approx_not_relevant", "decisions",
    "decisions_differ")

_LIMIT = "limit"
_TRAIN_OVER = "skipped: training over budget"
_SKIPPED_LIMIT = "skipped: a smaller model hit the limit"
_OVER = "skipped: over budget"


@dataclass
class EnsemblesConfig:
    """Settings of :func:`run_ensembles`.

    Attributes
    ----------
    dataset : str
        A bundled dataset (default ``"adult"``).
    models : tuple of str
        Model kinds (:data:`~kcxai.experiments._ensemble_models.MODEL_KINDS`); default: every kind whose
        package is installed.
    trees, depths : tuple of int
        The grid: number of trees (boosting rounds) and maximum depth.
    languages : tuple of str
        Among :data:`ENSEMBLE_LANGUAGES`.
    deltas : tuple of Fraction
        ``obdd``/``sdd`` run at every delta, ``sat`` at 0, ``sampling`` at every delta > 0.
    instances : int
        Held-out rows explained (a seeded subsample of the test split).
    seed, bins : int
        Seed of the split, the models and the sampler; quantile bins per continuous column.
    max_seconds, max_nodes, max_memory : float, int, int
        The limits of each compilation (memory in bytes).
    construction : str
        The diagrams' ``construction`` option (:mod:`kcxai.compilers._options`): ``"auto"`` (the ensemble
        construction for these models) or ``"builder"``.
    budget : float
        Wall-clock seconds per cell (model x language x delta) for its explanations, and for its checks.
    train_budget : float
        Wall-clock seconds for training one model; a model over it (and every larger one of its family)
        is recorded as ``skipped: training over budget``.
    confidence, max_samples : float, int
        Options of the ``sampling`` language.
    sat_engine : str
        ``"auto"``, ``"sat"`` or ``"search"`` (:func:`kcxai.engines.choose.decision_compiled`: the engine is
        kept by the model).
    out : str
        Output directory.
    resume : bool
        Reuse the per-model record files of an earlier run with the same settings.
    """

    dataset: str = "adult"
    models: tuple[str, ...] = field(default_factory=default_kinds)
    trees: tuple[int, ...] = (1, 10, 100)
    depths: tuple[int, ...] = (3, 6)
    languages: tuple[str, ...] = ENSEMBLE_LANGUAGES
    deltas: tuple[Fraction, ...] = (Fraction(0), Fraction(1, 20))
    instances: int = 10
    seed: int = 0
    bins: int = 10
    max_seconds: float = 60.0
    max_nodes: int = 4_000_000
    max_memory: int = 4 << 30
    construction: str = "auto"
    budget: float = 10.0
    train_budget: float = 120.0
    confidence: float = 0.95
    max_samples: int = 4096
    sat_engine: str = "auto"
    out: str = "results/ensembles"
    resume: bool = False
    progress: bool = field(default=True, repr=False)


def _positive_ints(name: str, values: Any) -> None:
    if not isinstance(values, tuple) or not values or any(
            isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        raise InvalidInputError(f"'{name}' must be a non-empty tuple of positive ints. Got {values!r} instead.")


def _positive_number(name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise InvalidInputError(f"'{name}' must be a finite number > 0. Got {v!r} instead.")


def check_config(cfg: EnsemblesConfig) -> None:
    """An :class:`~kcxai.InvalidInputError` naming the first bad setting (a value of the wrong type: an
    :class:`~kcxai.InvalidTypeError`; a missing package: a :class:`~kcxai.MissingDependencyError`)."""
    check("dataset", cfg.dataset, Options(DATASETS))
    bad = [m for m in cfg.models if m not in MODEL_KINDS]
    if bad or not cfg.models or len(set(cfg.models)) != len(cfg.models):
        raise InvalidInputError(f"'models' must be distinct kinds among {list(MODEL_KINDS)}. Got {list(cfg.models)}.")
    badl = [x for x in cfg.languages if x not in ENSEMBLE_LANGUAGES]
    if badl or not cfg.languages or len(set(cfg.languages)) != len(cfg.languages):
        raise InvalidInputError(
            f"'languages' must be distinct names among {list(ENSEMBLE_LANGUAGES)}. Got {list(cfg.languages)}.")
    _positive_ints("trees", cfg.trees)
    _positive_ints("depths", cfg.depths)
    if not cfg.deltas or any(not isinstance(d, (int, Fraction)) or isinstance(d, bool) or not 0 <= d <= 1
                             for d in cfg.deltas):
        raise InvalidInputError(f"'deltas' must be a non-empty tuple of Fractions in [0, 1]. Got {cfg.deltas!r}.")
    for name in ("instances", "max_nodes", "max_memory", "max_samples", "seed", "bins"):
        check(name, getattr(cfg, name), NON_NEGATIVE_INT if name == "seed" else POSITIVE_INT)
    _positive_number("max_seconds", cfg.max_seconds)
    _positive_number("budget", cfg.budget)
    _positive_number("train_budget", cfg.train_budget)
    check("confidence", cfg.confidence, OPEN_PROBABILITY)
    check("construction", cfg.construction, Options(CONSTRUCTIONS))
    check("sat_engine", cfg.sat_engine, Options(ENGINES))
    for m in cfg.models:
        require_kind(m)


# -- one model: compile, explain, check -----------------------------------------------------


def _covered(hits: list[tuple[int, int]], trees: int, depth: int) -> tuple[int, int] | None:
    """A smaller-or-equal model (no more trees, no deeper) that hit a limit, if any."""
    return next(((t, d) for t, d in hits if t <= trees and d <= depth), None)


def _compile(lang: str, model: Classifier, cfg: EnsemblesConfig, hit: tuple[int, int] | None
             ) -> tuple[dict[str, Any], Any]:
    """The compile fields of ``lang``'s rows, and the compiled model or engine (``None`` when there is none)."""
    f: dict[str, Any] = {"backend": "", "exact": lang != "sampling", "confidence": "", "status": "ok", "note": "",
                         "compile_seconds": "", "size": "", "size_unit": "", "construction": "", "diagram_nodes": ""}
    if lang == "sampling":
        f["confidence"] = cfg.confidence
    if hit is not None:
        f.update(status=_SKIPPED_LIMIT, note=f"the {hit[0]}x{hit[1]} model hit a compilation limit")
        return f, None
    t0 = time.perf_counter()
    try:
        if lang == "sat":
            try:  # linear in the ensemble's size; bounded all the same, as the diagrams' compilations
                with deadline(cfg.max_seconds):
                    engine: Any = decision_compiled(model, cfg.sat_engine)  # the chooser's (or the named) engine
            except (OverBudget, SearchLimitError):
                f.update(status=_LIMIT, note=f"preparing the engine exceeded max_seconds={cfg.max_seconds:g}",
                         compile_seconds=time.perf_counter() - t0)
                return f, None
            f.update(backend=engine.language, compile_seconds=time.perf_counter() - t0, size=engine.stats.size,
                     size_unit=engine.stats.size_unit)
            return f, engine
        declared = LANGUAGES[lang]
        if not declared.is_available():
            f.update(status="unavailable", note=f"needs {declared.package}: {declared.install}")
            return f, None
        if lang == "sampling":
            opts: dict[str, Any] = {"confidence": cfg.confidence, "max_samples": cfg.max_samples,
                                    "initial_samples": min(256, cfg.max_samples), "seed": cfg.seed}
        else:
            opts = {"max_seconds": cfg.max_seconds, "max_nodes": cfg.max_nodes, "max_memory": cfg.max_memory,
                    "construction": cfg.construction}
            f["construction"] = "ensemble" if cfg.construction == "auto" else cfg.construction
        compiled = kcxai.compile_model(model, lang, **opts)
    except kcxai.CompilationLimitError as e:
        f.update(status=_LIMIT, note=str(e), compile_seconds=time.perf_counter() - t0)
        return f, None
    except KcxaiError as e:  # reported, and the other languages go on
        f.update(status="failed", note=f"{type(e).__name__}: {e}")
        return f, None
    st = compiled.stats
    f.update(backend=compiled.backend, compile_seconds=float(st.compile_seconds), size=st.size, size_unit=st.size_unit)
    if lang in ("obdd", "sdd"):
        # the multi-valued diagram the queries count on (the ensemble construction's own, for the SDD)
        f.update(construction=st["construction"], diagram_nodes=st.get("diagram_nodes", st["counting_nodes"]))
    return f, compiled


def _ms(xs: list[float], f: Callable[[list[float]], float]) -> Any:
    return 1000.0 * float(f(xs)) if xs else ""


def _explain(lang: str, obj: Any, xs: list[list[int]], delta: Fraction, budget: float
             ) -> tuple[dict[str, Any], list[tuple[int, ...] | None], bool]:
    """Explain ``xs`` under the budget: the row's figures, the sets found (``None`` when not reached) and
    whether ``obj`` was interrupted inside a call (then it must not be used again)."""
    times: list[float] = []
    sets: list[tuple[int, ...] | None] = []
    sizes: list[int] = []
    confidence: Any = ""
    inside = False
    t0 = time.perf_counter()
    try:
        with deadline(budget):
            for x in xs:
                left = budget - (time.perf_counter() - t0)
                if left <= 0:
                    raise OverBudget()
                t1 = time.perf_counter()
                inside = True
                # SIGALRM waits for a SAT call to return: the call itself is limited to what is left
                e = (kcxai.ensemble_axp(obj, x, max_seconds=left, inflate=False) if lang == "sat"
                     else kcxai.min_idrs(obj, x, delta, inflate=False))
                inside = False
                times.append(time.perf_counter() - t1)
                sets.append(e.features)
                sizes.append(len(e.features))
                if e.confidence is not None:
                    confidence = e.confidence
    except (OverBudget, SearchLimitError):
        pass
    elapsed = time.perf_counter() - t0
    row: dict[str, Any] = {"explanations": len(times), "median_ms": _ms(times, statistics.median),
                           "max_ms": _ms(times, max), "median_size": statistics.median(sizes) if sizes else ""}
    if confidence != "":
        row["confidence"] = confidence
    if len(times) < len(xs):
        row.update(status=_OVER, note=f"{len(times)} of {len(xs)} explained in {elapsed:.1f} s (budget {budget:g} s)")
    if lang == "sat" and getattr(obj, "language", "") == "sat" and not inside:
        row["size"] = obj.oracle.engine.clauses  # the class-change constraints are added at the first query
    return row, sets + [None] * (len(xs) - len(sets)), inside


def _checkers(objs: dict[str, Any], model: Classifier, delta: Fraction,
              limit: Deadline) -> dict[str, Callable[[list[int], Any], bool]]:
    """Per exact language usable at ``delta``: ``check(x, features)``, whether the set is relevant (the SAT
    engine's calls under ``limit``: ``SIGALRM`` cannot stop them)."""
    out: dict[str, Callable[[list[int], Any], bool]] = {}
    for lang in ("obdd", "sdd"):
        if objs.get(lang) is not None:
            out[lang] = (lambda c: lambda x, s: bool(kcxai.is_idrs(c, x, s, delta)))(objs[lang])
    if delta == 0 and objs.get("sat") is not None:
        engine = objs["sat"]

        def sat_check(x: list[int], s: Any) -> bool:
            point = model.space.encode(x)
            return bool(engine.oracle.decide(point, model.predict_point(point), frozenset(s), limit).sufficient)

        out["sat"] = sat_check
    return out


def _cross_check(cells: dict[str, dict[str, Any]], found: dict[str, list[Any]], objs: dict[str, Any], model: Classifier,
                 xs: list[list[int]], delta: Fraction, budget: float) -> set[str]:
    """Fill ``checks``, ``disagreements`` / ``approx_not_relevant`` of the cells; the checkers interrupted."""
    broken: set[str] = set()
    finished: set[str] = set()
    current = ""
    try:
        with Deadline(budget, what="the checks of a cell", advice="") as limit, deadline(budget):
            checkers = _checkers(objs, model, delta, limit)
            for lang, sets in found.items():
                others = [c for c in checkers if c != lang]
                if not others:
                    finished.add(lang)
                    continue
                row = cells[lang]
                exact = lang != "sampling"
                row["checks"], row["disagreements" if exact else "approx_not_relevant"] = 0, 0
                if not exact:
                    row["decisions"], row["decisions_differ"] = 0, 0
                for x, s in zip(xs, sets):
                    if s is None:
                        continue
                    for c in (others if exact else others[:1]):  # exact checkers agree, or a bug is reported
                        current = c
                        ok = checkers[c](x, s)
                        if not exact:
                            n, differ = _replay(checkers[c], x, s, model.space.n_features)
                            row["decisions"] += n
                            row["decisions_differ"] += differ
                        current = ""
                        row["checks"] += 1
                        row["disagreements" if exact else "approx_not_relevant"] += not ok
                finished.add(lang)
    except (OverBudget, SearchLimitError):
        if current:
            broken.add(current)
        for lang in set(found) - finished:
            row = cells[lang]
            row["note"] = (row["note"] + "; " if row["note"] else "") + "checks stopped at the budget"
    return broken


def _replay(relevant: Callable[[list[int], Any], bool], x: list[int], found: Any, n: int) -> tuple[int, int]:
    """The sampling deletion loop (every feature, index order) replayed along its own path: at each step the
    exact decision (``relevant(x, S - {i})``) against the sampled one (``i`` freed iff not in ``found``).
    Returns (decisions, decisions that differ)."""
    fixed = set(range(n))
    kept = set(found)
    differ = 0
    for i in range(n):
        freed = i not in kept
        differ += relevant(x, tuple(sorted(fixed - {i}))) != freed
        if freed:
            fixed.discard(i)
    return n, differ


def _languages_at(cfg: EnsemblesConfig, delta: Fraction) -> list[str]:
    """The languages that explain at ``delta``: sat at 0 only, sampling at delta > 0 only."""
    return [x for x in cfg.languages if not ((x == "sat" and delta != 0) or (x == "sampling" and delta == 0))]


def _train(data: PreparedData, family: str, trees: int, depth: int, cfg: EnsemblesConfig) -> Any:
    """The trained ensemble, or why there is none (training over ``cfg.train_budget``)."""
    t0 = time.perf_counter()
    try:
        with deadline(cfg.train_budget):
            return train_ensemble(data, family, trees, depth, seed=cfg.seed)
    except OverBudget:
        return f"training stopped after {time.perf_counter() - t0:.1f} s (budget {cfg.train_budget:g} s)"


def _untrained_rows(kind: str, trees: int, depth: int, data: PreparedData, n: int, cfg: EnsemblesConfig,
                    note: str) -> list[dict[str, Any]]:
    """The rows of a model that was not trained: every figure empty, the reason in ``note``."""
    base = {"dataset": data.name, "model": kind, "trees": trees, "depth": depth, "nodes": "", "train_seconds": "",
            "import_seconds": "", "test_accuracy": "", "library_agrees": "", "instances": n, "backend": "",
            "status": _TRAIN_OVER, "note": note, "compile_seconds": "", "size": "", "size_unit": "",
            "construction": "", "diagram_nodes": "", "explanations": 0, "median_ms": "", "max_ms": "",
            "median_size": "", "checks": "", "disagreements": "", "approx_not_relevant": "", "decisions": "",
            "decisions_differ": ""}
    return [{**base, "language": lang, "delta": str(delta), "exact": lang != "sampling",
             "confidence": cfg.confidence if lang == "sampling" else ""}
            for delta in cfg.deltas for lang in _languages_at(cfg, delta)]


def _model_rows(kind: str, trained: TrainedEnsemble, data: PreparedData, picked: Any, cfg: EnsemblesConfig,
                hits: dict[tuple[str, str], list[tuple[int, int]]]) -> list[dict[str, Any]]:
    model, import_seconds = import_ensemble(kind, trained, data)
    xs = [data.X[r].tolist() for r in picked]
    classes = np.unique(data.y)
    y_test = np.searchsorted(classes, data.y[data.test])
    lib = library_predict(kind, trained.clf, np.asarray(xs))
    base = {"dataset": data.name, "model": kind, "trees": trained.trees, "depth": trained.depth,
            "nodes": n_nodes(model), "train_seconds": trained.train_seconds, "import_seconds": import_seconds,
            "test_accuracy": float(np.mean(library_predict(kind, trained.clf, data.X[data.test]) == y_test)),
            "library_agrees": f"{sum(int(model.predict(x) == p) for x, p in zip(xs, lib))}/{len(xs)}",
            "instances": len(xs), "checks": "", "disagreements": "", "approx_not_relevant": "", "decisions": "",
            "decisions_differ": ""}
    fields, objs = {}, {}
    for lang in cfg.languages:
        fields[lang], objs[lang] = _compile(lang, model, cfg, _covered(hits.get((kind, lang), []), trained.trees,
                                                                       trained.depth))
        if fields[lang]["status"] == _LIMIT:
            hits.setdefault((kind, lang), []).append((trained.trees, trained.depth))
    rows: list[dict[str, Any]] = []
    broken: set[str] = set()
    try:
        for delta in cfg.deltas:
            cells: dict[str, dict[str, Any]] = {}
            found: dict[str, list[Any]] = {}
            for lang in _languages_at(cfg, delta):
                row = cells[lang] = {**base, "language": lang, "delta": str(delta), **fields[lang],
                                     "explanations": 0, "median_ms": "", "max_ms": "", "median_size": ""}
                if lang in broken:
                    row.update(status=_OVER, note="interrupted at an earlier delta")
                if objs[lang] is None or lang in broken:
                    continue
                got, found[lang], interrupted = _explain(lang, objs[lang], xs, delta, cfg.budget)
                row.update(got)
                if interrupted:
                    broken.add(lang)
            usable = {k: v for k, v in objs.items() if k not in broken}
            broken |= _cross_check(cells, found, usable, model, xs, delta, cfg.budget)
            for lang, row in cells.items():
                if row["disagreements"] not in ("", 0):
                    print(f"kcxai: warning: {kind} {trained.trees}x{trained.depth} delta {delta}: "
                          f"{row['disagreements']} of {row['checks']} checks find {lang}'s set not relevant",
                          file=sys.stderr)
            rows.extend(cells.values())
    finally:
        if objs.get("sat") is not None and "sat" in broken:  # interrupted inside a call: never used again
            objs["sat"].close()
    return rows


# -- records (resume) -----------------------------------------------------------------------


def _records_path(out: Path, kind: str, trees: int, depth: int) -> Path:
    return out / "records" / f"{kind}.{trees}x{depth}.json"


def _key(cfg: EnsemblesConfig, kind: str, trees: int, depth: int, picked: Any) -> dict[str, Any]:
    d = _config_dict(cfg)
    for k in ("models", "trees", "depths", "out", "resume"):
        d.pop(k)
    return {"records_version": RECORDS_VERSION, **d, "kind": kind, "n_trees": trees, "depth": depth,
            "rows": [int(r) for r in picked]}


def _cached(path: Path, key: dict[str, Any]) -> list[dict[str, Any]] | None:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(stored, dict) and stored.get("key") == json.loads(json.dumps(key)):
            rows = stored["rows"]
            if isinstance(rows, list) and all(isinstance(r, dict) and set(ENSEMBLE_COLUMNS) <= set(r) for r in rows):
                return rows
    except (OSError, ValueError, KeyError, TypeError):  # missing or damaged: computed again
        return None
    return None


def _config_dict(cfg: EnsemblesConfig) -> dict[str, Any]:
    d = asdict(cfg)
    d.pop("progress", None)
    d.update(deltas=[str(x) for x in cfg.deltas], models=list(cfg.models), trees=list(cfg.trees),
             depths=list(cfg.depths), languages=list(cfg.languages))
    return d


# -- the run --------------------------------------------------------------------------------


def run_ensembles(cfg: EnsemblesConfig) -> list[dict[str, Any]]:
    """Train the grid's ensembles, compile and explain each with every language, check the sets.

    Writes ``ensembles.md`` (the table), ``ensembles.csv`` (:data:`ENSEMBLE_COLUMNS`),
    ``ensembles.json`` (settings, machine, load, rows) and ``records/<kind>.<trees>x<depth>.json``
    (each model's rows and the settings they were made with, for ``resume``) into ``cfg.out``;
    returns the rows (one per model, language and delta).

    Examples
    --------
    >>> import tempfile
    >>> from fractions import Fraction
    >>> cfg = EnsemblesConfig(dataset="allhyper", models=("rf-hard",), trees=(2,), depths=(2,),
    ...                       languages=("obdd", "sat"), deltas=(Fraction(0),), instances=2,
    ...                       out=tempfile.mkdtemp(), progress=False)
    >>> [(r["language"], r["status"], r["explanations"], r["disagreements"]) for r in run_ensembles(cfg)]
    [('obdd', 'ok', 2, 0), ('sat', 'ok', 2, 0)]
    """
    check_config(cfg)
    out = Path(cfg.out)
    (out / "records").mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg() if hasattr(os, "getloadavg") else None
    t_start = time.perf_counter()
    data = prepare_data(cfg.dataset, bins=cfg.bins, seed=cfg.seed)
    picked = subsample(data.test, cfg.instances, seed=cfg.seed)
    sizes = sorted({(d, t) for t in cfg.trees for d in cfg.depths})  # smaller models first (for the skips)
    families = list(dict.fromkeys(MODEL_KINDS[k][0] for k in cfg.models))
    hits: dict[tuple[str, str], list[tuple[int, int]]] = {}
    rows: list[dict[str, Any]] = []
    resumed = 0
    progress = Progress(f"{cfg.dataset} ensembles", len(sizes) * len(cfg.models), enabled=cfg.progress)
    for depth, trees in sizes:
        for family in families:
            kinds = [k for k in cfg.models if MODEL_KINDS[k][0] == family]
            keys = {k: _key(cfg, k, trees, depth, picked) for k in kinds}
            done = {k: _cached(_records_path(out, k, trees, depth), keys[k]) if cfg.resume else None for k in kinds}
            trained: Any = None
            smaller = _covered(hits.get((family, "train"), []), trees, depth)
            for kind in kinds:
                got = done[kind]
                if got is None:
                    if trained is None and smaller is None:
                        trained = _train(data, family, trees, depth, cfg)
                    if smaller is not None or isinstance(trained, str):
                        note = trained if smaller is None else (f"training the {smaller[0]}x{smaller[1]} model "
                                                                f"ran over budget")
                        got = _untrained_rows(kind, trees, depth, data, len(picked), cfg, note)
                    else:
                        got = _model_rows(kind, trained, data, picked, cfg, hits)
                    write_text(_records_path(out, kind, trees, depth), json.dumps(
                        {"key": keys[kind], "rows": got,
                         "finished": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}))
                else:
                    resumed += 1
                    for r in got:
                        if r["status"] == _LIMIT:
                            hits.setdefault((kind, r["language"]), []).append((trees, depth))
                if any(r["status"] == _TRAIN_OVER for r in got):
                    hits.setdefault((family, "train"), []).append((trees, depth))
                rows.extend(got)
                progress.update(1)
    progress.close()
    info = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "machine": machine_info(),
            "load_start": load_start, "load_end": os.getloadavg() if hasattr(os, "getloadavg") else None,
            "config": _config_dict(cfg), "resumed_models": resumed, "n_rows": data.n_rows,
            "n_test": int(len(data.test)), "n_features": data.n_features,
            "seconds": round(time.perf_counter() - t_start, 1), "rows": rows}
    write_outputs(out, rows, info, ENSEMBLE_COLUMNS)
    return rows
