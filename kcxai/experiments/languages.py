"""The cost of the same explanations across knowledge-compilation languages.

For each dataset of the paper's experiment, take the models of the chosen *families* (``tree``: the
paper protocol's tree; ``decision_list``: the same tree as an ordered list of its paths' rules, which
every compiler reads through another ``build``; ``forest``: a hard-voting scikit-learn forest of
:data:`FOREST` trees; the BDD-encoded families of the seed's compiled classifiers, ``naive_bayes``: a
scikit-learn ``CategoricalNB``, and ``logistic``: a ``LogisticRegression`` over the feature codes, both
trained on the :data:`SCORE_FEATURES` features of highest mutual information with the class on the
training rows, imported with their float weights taken exactly and compiled by the threshold
construction), compile each to every language (``dt``: a tree's own paths; ``sdd``; ``obdd``;
``ddnnf``), then time :func:`kcxai.min_idrs` on the same instances and deltas. Every language must
return the same sets as the first language that compiled the model (same deletion order, exact
counts); disagreements are counted and reported. A language that is not installed is reported as
``unavailable``, one that does not take the family as ``not applicable``, one whose compilation hits a
limit as ``over limit`` with the limit's message, each with its error. Runs in one process: a compiled
SDD or BDD lives in a C library and cannot be sent to joblib workers, and sequential timing keeps the
languages comparable.
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
from typing import TYPE_CHECKING, Any

import numpy as np

import kcxai
from kcxai._errors import CompilationLimitError, InvalidInputError, KcxaiError, MissingDependencyError
from kcxai._params import POSITIVE_INT, check
from kcxai.datasets import DATASETS
from kcxai.engines import LANGUAGES
from kcxai.experiments._data import explained_instances, prepare_data, subsample
from kcxai.experiments._plots import plot_languages, require_matplotlib
from kcxai.experiments._progress import Progress
from kcxai.experiments._trees import train_tree
from kcxai.experiments.paper_table import DELTAS, machine_info
from kcxai.models import DecisionList, LinearClassifier, NaiveBayes, RandomForest
from kcxai.space import Feature, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.experiments._data import PreparedData
    from kcxai.experiments._trees import TrainedTree
    from kcxai.models.tree import DecisionTree

__all__ = ["LanguagesConfig", "run_languages", "LANGUAGE_COLUMNS", "FAMILIES", "FOREST", "SCORE_FEATURES",
           "QUICK_MAX_SECONDS", "family_model", "informative_features"]

#: Columns of ``languages.csv``.
LANGUAGE_COLUMNS = ("dataset", "family", "tree_nodes", "language", "backend", "status", "compile_seconds", "size",
                    "size_unit", "edges", "counting_nodes", "explanations", "median_ms", "max_ms", "mean_ms",
                    "cpu_median_ms", "cpu_max_ms", "reference", "disagreements")

#: The model families compared (see the module docstring).
FAMILIES = ("tree", "decision_list", "forest", "naive_bayes", "logistic")

#: scikit-learn settings of the ``forest`` family (hard voting).
FOREST = {"n_estimators": 10, "max_depth": 3}

#: Features the ``naive_bayes`` and ``logistic`` families are trained on (the most informative ones; the
#: others weigh 0 in every class). Trained on all 29 of allhyper's features, neither model compiled in 30 s
#: in obdd or sdd, nor rounded to 1/10 in obdd, sdd or ddnnf (2026-11-28, docs/results.md).
SCORE_FEATURES = 6

#: The compile limit of a quick run (``max_seconds`` is lowered to it): a cell over its limit costs the limit,
#: and the 5 ``ddnnf`` cells over 60 s in docs/results.md's quick run would take up to 50 minutes at 600 s.
QUICK_MAX_SECONDS = 60.0


@dataclass
class LanguagesConfig:
    """Settings of :func:`run_languages`.

    Attributes
    ----------
    datasets : tuple of str
    languages : tuple of str
        Default ``("dt", "sdd", "obdd", "ddnnf")``.
    families : tuple of str
        Among :data:`FAMILIES` (default all).
    instances : int
        Instances per dataset (a seeded subsample of the paper protocol's instances).
    deltas : tuple of Fraction
    seed, bins : int
        As in :class:`~kcxai.experiments.PaperTableConfig` (same trees).
    out : str
        Output directory.
    quick : bool
        5 instances per dataset, and compilations under at most :data:`QUICK_MAX_SECONDS` (the limit used is
        the one the outputs state).
    plots : bool
        Write ``languages.png`` (needs matplotlib).
    max_seconds : float or None
        Compilation time limit, passed to the compilers that take a ``max_seconds`` option.
    """

    datasets: tuple[str, ...] = ("adult", "allhyper", "ann_thyroid", "fars", "kddcup")
    languages: tuple[str, ...] = ("dt", "sdd", "obdd", "ddnnf")
    families: tuple[str, ...] = FAMILIES
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
    if max_seconds is None or lang not in LANGUAGES or not LANGUAGES[lang].is_available():
        return {}
    return {"max_seconds": max_seconds} if "max_seconds" in LANGUAGES[lang].option_names() else {}


def _one_language(tree: DecisionTree, lang: str, work: list[tuple[list[int], Fraction]],
                  reference: tuple[str, list[tuple[int, ...]]] | None, progress: Progress,
                  max_seconds: float | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {"language": lang, "backend": "", "status": "ok", "compile_seconds": "", "size": "",
                           "size_unit": "", "edges": "", "counting_nodes": "", "explanations": 0, "median_ms": "",
                           "max_ms": "", "mean_ms": "", "cpu_median_ms": "", "cpu_max_ms": "", "reference": "",
                           "disagreements": ""}
    t0 = time.perf_counter()
    if not LANGUAGES[lang].takes(tree):
        row["status"] = f"not applicable: {lang} does not take {type(tree).__name__} models"
        progress.update(len(work))
        return row
    try:
        compiled = kcxai.compile_model(tree, lang, **_options(lang, max_seconds))
    except (MissingDependencyError, ImportError) as e:  # a language not (yet) available here: say why
        row["status"] = f"unavailable: {type(e).__name__}: {e}"
        progress.update(len(work))
        return row
    except CompilationLimitError as e:  # report the limit, go on with the other languages
        row["status"] = f"over limit: {e}"
        progress.update(len(work))
        return row
    except KcxaiError as e:
        row["status"] = f"failed: {type(e).__name__}: {e}"
        progress.update(len(work))
        return row
    row["compile_seconds"] = float(compiled.stats.get("compile_seconds", time.perf_counter() - t0))
    row["size"] = compiled.stats.get("size", "")
    row["size_unit"] = compiled.stats.size_unit
    row["edges"] = compiled.stats.get("edges", "")
    row["counting_nodes"] = compiled.stats.get("counting_nodes", "")
    row["backend"] = compiled.backend
    times, cpu, found = [], [], []
    for inst, d in work:
        t1, c1 = time.perf_counter(), time.process_time()
        found_e = kcxai.min_idrs(compiled, inst, d, inflate=False)
        times.append(time.perf_counter() - t1)
        cpu.append(time.process_time() - c1)
        found.append(found_e.features)
        progress.update(1)
    row.update(explanations=len(times), median_ms=_ms(times, statistics.median), max_ms=_ms(times, max),
               mean_ms=_ms(times, statistics.fmean), cpu_median_ms=_ms(cpu, statistics.median),
               cpu_max_ms=_ms(cpu, max))
    if reference is not None:
        row["reference"], sets = reference
        row["disagreements"] = sum(a != b for a, b in zip(found, sets))
    row["_found"] = found
    return row


def family_model(family: str, data: PreparedData, trained: TrainedTree, seed: int = 0) -> Any:
    """The model of ``family`` for a prepared dataset and its trained tree (see the module docstring)."""
    tree = trained.tree
    if family == "tree":
        return tree
    if family == "decision_list":
        space = tree.space
        rules = [([(f, [space.features[f].values[k] for k in range(space.features[f].size) if m >> k & 1])
                   for f, m in p.masks], tree.classes[p.label]) for p in tree.paths]
        return DecisionList(space, tree.classes, rules[:-1], rules[-1][1])  # the paths partition the space
    if family == "forest":
        # scikit-learn (heavy) loads only when a model is trained, not at the command line's start
        from sklearn.ensemble import RandomForestClassifier

        clf = RandomForestClassifier(random_state=seed, **FOREST).fit(data.X[data.train], data.y[data.train])
        return RandomForest.from_sklearn(clf, domains=data.domains, feature_names=list(data.feature_names),
                                         voting="hard")
    if family in ("naive_bayes", "logistic"):
        return _score_model(family, data, seed)
    raise InvalidInputError(f"'family' must be one of {list(FAMILIES)}. Got {family!r} instead.")


def informative_features(data: PreparedData, k: int = SCORE_FEATURES) -> list[int]:
    """The ``k`` features of highest mutual information with the class on ``data``'s training rows (ties: the
    first feature), in feature order."""
    from sklearn.feature_selection import mutual_info_classif  # scikit-learn: loaded when a family needs it

    mi = mutual_info_classif(data.X[data.train], data.y[data.train], discrete_features=True)
    order = np.argsort(-mi, kind="stable")
    return sorted(int(i) for i in order[:k])


def _score_model(family: str, data: PreparedData, seed: int) -> LinearClassifier | NaiveBayes:
    """A ``naive_bayes`` or ``logistic`` model over the dataset's full space, trained on its
    :func:`informative_features`: scikit-learn's model of the selected columns, imported exactly
    (``from_sklearn``), with weight 0 for every value of the other features."""
    from sklearn.linear_model import LogisticRegression  # scikit-learn: loaded when a family needs it
    from sklearn.naive_bayes import CategoricalNB

    picked = informative_features(data)
    domains, names = data.domains, list(data.feature_names)
    x_train, y_train = data.X[data.train][:, picked], data.y[data.train]
    sub_domains, sub_names = [domains[i] for i in picked], [names[i] for i in picked]
    space = FeatureSpace([Feature.categorical(n, d) for n, d in zip(names, domains)])
    sub: LinearClassifier | NaiveBayes
    if family == "naive_bayes":
        nb = CategoricalNB(min_categories=[len(domains[i]) for i in picked]).fit(x_train, y_train)
        sub = NaiveBayes.from_sklearn(nb, domains=sub_domains, feature_names=sub_names)
    else:
        lr = LogisticRegression(max_iter=1000, random_state=seed).fit(x_train, y_train)
        sub = LinearClassifier.from_sklearn(lr, domains=sub_domains, feature_names=sub_names)
    k = len(sub.classes)
    tables: list[list[list[Fraction]]] = [[[Fraction(0)] * len(d) for _ in range(k)] for d in domains]
    for j, i in enumerate(picked):
        per_value = [sub.likelihood(j, v) if isinstance(sub, NaiveBayes) else sub.weight(j, v) for v in domains[i]]
        tables[i] = [[w[c] for w in per_value] for c in range(k)]
    out: LinearClassifier | NaiveBayes
    if isinstance(sub, NaiveBayes):
        out = NaiveBayes(space, sub.classes, sub.priors, tables, log=True)
    else:
        out = LinearClassifier(space, sub.classes, tables, sub.intercepts)
    out.weights_from_floats = True
    return out


def run_languages(cfg: LanguagesConfig) -> list[dict[str, Any]]:
    """Compile the experiment's trees to each language and time min_idrs on each.

    Writes ``languages.md``, ``languages.csv``, ``languages.json`` and
    ``languages.png`` into ``cfg.out``; returns the rows (one per dataset and language).
    """
    bad = [d for d in cfg.datasets if d not in DATASETS]
    if bad or not cfg.datasets:
        raise InvalidInputError(f"'datasets' must be names among {list(DATASETS)}. Got {list(cfg.datasets)}.")
    badl = [x for x in cfg.languages if x not in LANGUAGES]
    if badl or not cfg.languages:
        raise InvalidInputError(f"'languages' must be among {sorted(LANGUAGES)}. Got {list(cfg.languages)}.")
    check("instances", cfg.instances, POSITIVE_INT)
    if cfg.plots:
        require_matplotlib()
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    n_inst = min(cfg.instances, 5) if cfg.quick else cfg.instances
    max_seconds = cfg.max_seconds
    if cfg.quick:
        max_seconds = QUICK_MAX_SECONDS if max_seconds is None else min(max_seconds, QUICK_MAX_SECONDS)
    langs = list(cfg.languages)
    if "dt" in langs:  # dt first: the reference every other language is compared with, where it applies
        langs.remove("dt")
        langs.insert(0, "dt")
    bad_f = [f for f in cfg.families if f not in FAMILIES]
    if bad_f or not cfg.families:
        raise InvalidInputError(f"'families' must be among {list(FAMILIES)}. Got {list(cfg.families)}.")
    rows: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    for name in cfg.datasets:
        data = prepare_data(name, bins=cfg.bins, seed=cfg.seed)
        trained = train_tree(data, seed=cfg.seed)
        picked = subsample(explained_instances(data.n_rows, seed=cfg.seed), n_inst, seed=cfg.seed)
        work = [(data.X[r].tolist(), d) for r in picked.tolist() for d in cfg.deltas]
        for family in cfg.families:
            model = family_model(family, data, trained, cfg.seed)
            reference: tuple[str, list[tuple[int, ...]]] | None = None
            for lang in langs:
                prog = Progress(f"{name} {family} {lang}", len(work), enabled=cfg.progress)
                row = _one_language(model, lang, work, reference, prog, max_seconds)
                prog.close()
                found = row.pop("_found", None)
                if reference is None and found is not None:
                    reference = (lang, found)
                if row["disagreements"] not in ("", 0):
                    print(f"kcxai: warning: {name}/{family}/{lang}: {row['disagreements']} of {len(work)} "
                          f"explanations differ from {row['reference']}'s", file=sys.stderr)
                rows.append({"dataset": name, "family": family, "tree_nodes": trained.n_nodes, **row})
    info = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "machine": machine_info(), "instances_per_dataset": n_inst,
            "deltas": [str(d) for d in cfg.deltas], "seed": cfg.seed, "bins": cfg.bins, "max_seconds": max_seconds,
            "families": list(cfg.families),
            "seconds": round(time.perf_counter() - t_start, 1), "rows": rows}
    (out / "languages.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    with (out / "languages.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=LANGUAGE_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in LANGUAGE_COLUMNS})
    (out / "languages.md").write_text(_markdown(rows, info), encoding="utf-8")
    if cfg.plots:
        plot_languages(out, rows)
    return rows


def _num(v: Any, fmt: str) -> str:
    return "" if v == "" or v is None else format(v, fmt)


def _markdown(rows: Sequence[dict[str, Any]], info: dict[str, Any]) -> str:
    m = info["machine"]
    head = ["Dataset", "family", "tree nodes", "language", "backend", "compile s", "size", "edges", "counting nodes",
            "explanations", "median ms", "max ms", "CPU median ms", "CPU max ms", "same sets as", "disagree", "status"]
    lines = ["# min_idrs across knowledge-compilation languages\n",
             f"Run {info['date']} on {m['cpu']} ({m['cores']} cores), Python {m['python']}; "
             f"{info['instances_per_dataset']} instances per dataset x deltas {', '.join(info['deltas'])}; "
             f"total {info['seconds']} s. Times per min_idrs call: wall-clock (median, max) and CPU time of the "
             f"process. Sizes in each language's unit (size_unit in languages.csv). Compilations under "
             f"max_seconds={info['max_seconds']}.\n",
             "| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        lines.append("| " + " | ".join([
            r["dataset"], r["family"], str(r["tree_nodes"]), r["language"], r["backend"],
            _num(r["compile_seconds"], ".3g"), str(r["size"]), str(r["edges"]), str(r["counting_nodes"]),
            str(r["explanations"]), _num(r["median_ms"], ".3g"),
            _num(r["max_ms"], ".3g"),
            _num(r["cpu_median_ms"], ".3g"), _num(r["cpu_max_ms"], ".3g"),
            r["reference"], str(r["disagreements"]), r["status"].replace("|", "/").replace("\n", " ")]) + " |")
    return "\n".join(lines) + "\n"
