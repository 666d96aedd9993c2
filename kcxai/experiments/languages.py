"""The cost of the same explanations across knowledge-compilation languages.

For the trees of the paper's experiment, compile each tree to every
language (``dt``: the tree's own paths; ``sdd``; ``obdd``), then time
:func:`kcxai.min_idrs` on the same instances and deltas. Every language must
return the same set as ``dt`` (same start, same deletion order, exact counts);
disagreements are counted and reported. A language that is not installed
(or not written yet) is reported as ``unavailable``, one whose compilation
fails (e.g. a size limit) as ``failed``, each with its error. Runs in one process: a compiled SDD
or BDD lives in a C library and cannot be sent to joblib workers, and
sequential timing keeps the languages comparable.
"""

from __future__ import annotations

import csv
import datetime
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from kcxai._errors import InvalidInputError, KcxaiError, MissingDependencyError
from kcxai._params import POSITIVE_INT, check
from kcxai.experiments._data import explained_instances, prepare_data, subsample
from kcxai.experiments._progress import Progress
from kcxai.experiments._trees import train_tree
from kcxai.experiments.paper_table import DELTAS, machine_info

__all__ = ["LanguagesConfig", "run_languages", "LANGUAGE_COLUMNS"]

#: Columns of ``languages.csv``.
LANGUAGE_COLUMNS = ("dataset", "tree_nodes", "language", "backend", "status", "compile_seconds", "size",
                    "counting_nodes", "explanations", "median_ms", "max_ms", "mean_ms", "cpu_median_ms", "cpu_max_ms",
                    "disagreements")


@dataclass
class LanguagesConfig:
    """Settings of :func:`run_languages`.

    Attributes
    ----------
    datasets : tuple of str
    languages : tuple of str
        Default ``("dt", "sdd", "obdd")``.
    instances : int
        Instances per dataset (a seeded subsample of the paper protocol's instances).
    deltas : tuple of Fraction
    seed, bins : int
        As in :class:`~kcxai.experiments.PaperTableConfig` (same trees).
    out : str
        Output directory.
    quick : bool
        5 instances per dataset.
    plots : bool
        Write ``languages.png`` (needs matplotlib).
    max_seconds : float or None
        Compilation time limit, passed to the compilers that take a ``max_seconds`` option.
    """

    datasets: tuple[str, ...] = ("adult", "allhyper", "ann_thyroid", "fars", "kddcup")
    languages: tuple[str, ...] = ("dt", "sdd", "obdd")
    instances: int = 50
    deltas: tuple[Fraction, ...] = DELTAS
    seed: int = 0
    bins: int = 10
    out: str = "results/languages"
    quick: bool = False
    plots: bool = True
    max_seconds: float | None = 600.0
    progress: bool = field(default=True, repr=False)


def _ms(xs: Sequence[float], f: Any) -> float:
    return 1000.0 * float(f(xs)) if xs else float("nan")


def _options(lang: str, max_seconds: float | None) -> dict[str, Any]:
    """``max_seconds`` for the languages whose declared options take it."""
    from kcxai.engines import LANGUAGES

    if max_seconds is None or lang not in LANGUAGES or not LANGUAGES[lang].is_available():
        return {}
    return {"max_seconds": max_seconds} if "max_seconds" in LANGUAGES[lang].option_names() else {}


def _one_language(tree: Any, lang: str, work: list[tuple[list[int], Fraction]],
                  reference: list[tuple[int, ...]] | None, progress: Progress,
                  max_seconds: float | None = None) -> dict[str, Any]:
    import kcxai

    row: dict[str, Any] = {"language": lang, "backend": "", "status": "ok", "compile_seconds": "", "size": "",
                           "counting_nodes": "", "explanations": 0, "median_ms": "", "max_ms": "", "mean_ms": "",
                           "cpu_median_ms": "", "cpu_max_ms": "", "disagreements": ""}
    t0 = time.perf_counter()
    try:
        compiled = kcxai.compile_model(tree, lang, **_options(lang, max_seconds))
    except (MissingDependencyError, ImportError) as e:  # a language not (yet) available here: say why
        row["status"] = f"unavailable: {type(e).__name__}: {e}"
        progress.update(len(work))
        return row
    except KcxaiError as e:  # e.g. a compilation limit: report it, go on with the other languages
        row["status"] = f"failed: {type(e).__name__}: {e}"
        progress.update(len(work))
        return row
    row["compile_seconds"] = float(compiled.stats.get("compile_seconds", time.perf_counter() - t0))
    row["size"] = compiled.stats.get("size", "")
    row["counting_nodes"] = compiled.stats.get("counting_nodes", "")
    row["backend"] = compiled.backend
    times, cpu, found = [], [], []
    for inst, d in work:
        t1, c1 = time.perf_counter(), time.process_time()
        found_e = kcxai.min_idrs(compiled, inst, d, start="path")
        times.append(time.perf_counter() - t1)
        cpu.append(time.process_time() - c1)
        found.append(found_e.features)
        progress.update(1)
    row.update(explanations=len(times), median_ms=_ms(times, statistics.median), max_ms=_ms(times, max),
               mean_ms=_ms(times, statistics.fmean), cpu_median_ms=_ms(cpu, statistics.median),
               cpu_max_ms=_ms(cpu, max))
    if reference is not None:
        row["disagreements"] = sum(a != b for a, b in zip(found, reference))
    row["_found"] = found
    return row


def run_languages(cfg: LanguagesConfig) -> list[dict[str, Any]]:
    """Compile the experiment's trees to each language and time min_idrs on each.

    Writes ``languages.md``, ``languages.csv``, ``languages.json`` and
    ``languages.png`` into ``cfg.out``; returns the rows (one per dataset and language).
    """
    from kcxai.engines import LANGUAGES
    from kcxai.datasets import DATASETS

    bad = [d for d in cfg.datasets if d not in DATASETS]
    if bad or not cfg.datasets:
        raise InvalidInputError(f"'datasets' must be names among {list(DATASETS)}. Got {list(cfg.datasets)}.")
    badl = [x for x in cfg.languages if x not in LANGUAGES]
    if badl or not cfg.languages:
        raise InvalidInputError(f"'languages' must be among {sorted(LANGUAGES)}. Got {list(cfg.languages)}.")
    check("instances", cfg.instances, POSITIVE_INT)
    if cfg.plots:
        from kcxai.experiments._plots import require_matplotlib

        require_matplotlib()
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    n_inst = min(cfg.instances, 5) if cfg.quick else cfg.instances
    langs = list(cfg.languages)
    if "dt" in langs:  # dt first: the reference every other language is compared with
        langs.remove("dt")
        langs.insert(0, "dt")
    rows: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    for name in cfg.datasets:
        data = prepare_data(name, bins=cfg.bins, seed=cfg.seed)
        trained = train_tree(data, seed=cfg.seed)
        picked = subsample(explained_instances(data.n_rows, seed=cfg.seed), n_inst, seed=cfg.seed)
        work = [(data.X[r].tolist(), d) for r in picked.tolist() for d in cfg.deltas]
        reference = None
        for lang in langs:
            prog = Progress(f"{name} {lang}", len(work), enabled=cfg.progress)
            row = _one_language(trained.tree, lang, work, reference, prog, cfg.max_seconds)
            prog.close()
            found = row.pop("_found", None)
            if lang == "dt" and found is not None:
                reference = found
            if row["disagreements"] not in ("", 0):
                print(f"kcxai: warning: {name}/{lang}: {row['disagreements']} of {len(work)} explanations "
                      f"differ from dt's", file=sys.stderr)
            rows.append({"dataset": name, "tree_nodes": trained.n_nodes, **row})
    info = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "machine": machine_info(), "instances_per_dataset": n_inst,
            "deltas": [str(d) for d in cfg.deltas], "seed": cfg.seed, "bins": cfg.bins,
            "seconds": round(time.perf_counter() - t_start, 1), "rows": rows}
    (out / "languages.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    with (out / "languages.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=LANGUAGE_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in LANGUAGE_COLUMNS})
    (out / "languages.md").write_text(_markdown(rows, info), encoding="utf-8")
    if cfg.plots:
        from kcxai.experiments._plots import plot_languages

        plot_languages(out, rows)
    return rows


def _num(v: Any, fmt: str) -> str:
    return "" if v == "" or v is None else format(v, fmt)


def _markdown(rows: Sequence[dict[str, Any]], info: dict[str, Any]) -> str:
    m = info["machine"]
    head = ["Dataset", "tree nodes", "language", "backend", "compile s", "size", "counting nodes", "explanations",
            "median ms", "max ms", "CPU median ms", "CPU max ms", "disagree with dt", "status"]
    lines = ["# min_idrs across knowledge-compilation languages\n",
             f"Run {info['date']} on {m['cpu']} ({m['cores']} cores), Python {m['python']}; "
             f"{info['instances_per_dataset']} instances per dataset x deltas {', '.join(info['deltas'])}; "
             f"start = the instance's tree path; total {info['seconds']} s. Times per min_idrs call: "
             f"wall-clock (median, max) and CPU time of the process.\n",
             "| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        lines.append("| " + " | ".join([
            r["dataset"], str(r["tree_nodes"]), r["language"], r["backend"], _num(r["compile_seconds"], ".3g"),
            str(r["size"]), str(r["counting_nodes"]), str(r["explanations"]), _num(r["median_ms"], ".3g"),
            _num(r["max_ms"], ".3g"),
            _num(r["cpu_median_ms"], ".3g"), _num(r["cpu_max_ms"], ".3g"),
            str(r["disagreements"]), r["status"].replace("|", "/")]) + " |")
    return "\n".join(lines) + "\n"
