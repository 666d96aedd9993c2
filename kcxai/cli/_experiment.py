"""``kcxai experiment ...``: the argparse wiring of the experiment runners (:mod:`kcxai.experiments`).

The experiments import nothing from the command line; plotting and the optional baselines they use load
only when a run asks for them.
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

from kcxai._errors import InvalidInputError
from kcxai.cli._args import delta as _delta
from kcxai.cli._args import output_dir, positive_seconds, seed, unit_float
from kcxai.cli._args import positive_int as _positive
from kcxai.engines import LANGUAGES
from kcxai.experiments._ensemble_models import MODEL_KINDS, default_kinds
from kcxai.experiments._settings import DISTRIBUTIONS
from kcxai.experiments.ensembles import ENSEMBLE_LANGUAGES, EnsemblesConfig, run_ensembles
from kcxai.experiments.languages import FAMILIES as LANGUAGE_FAMILIES
from kcxai.experiments.languages import LanguagesConfig, run_languages
from kcxai.experiments.paper_table import PaperTableConfig, run_paper_table
from kcxai.experiments.rules import RulesConfig, run_rules
from kcxai.experiments.side_by_side import SideBySideConfig, run_side_by_side
from kcxai.explain.ensemble_sat import ENGINES

__all__ = ["add_subparser"]

_DATASETS = ("adult", "allhyper", "ann_thyroid", "fars", "kddcup")


def _bins(text: str) -> int:
    v = _positive(text)
    if v > 1000:
        raise argparse.ArgumentTypeError(f"expected at most 1000 bins, got {text!r}")
    return v


def _n_jobs(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-zero integer (-1: all cores), got {text!r}") from None
    if v == 0:
        raise argparse.ArgumentTypeError("expected a non-zero integer (-1: all cores), got 0")
    return v


def _paper_table(args: argparse.Namespace) -> int:
    if args.mode == "cdrs" and args.delta is not None:
        raise InvalidInputError("--mode cdrs bounds the precision: give --precision (e.g. --precision 0.95), "
                                "not --delta (the error bound of --mode idrs).")
    if args.mode == "idrs" and args.precision is not None:
        raise InvalidInputError("--mode idrs bounds the error: give --delta (e.g. --delta 0 0.01), not --precision "
                                "(the bound of --mode cdrs).")
    deltas = (args.precision or [Fraction(95, 100)]) if args.mode == "cdrs" else (
        args.delta or [Fraction(0), Fraction(1, 100), Fraction(2, 100), Fraction(5, 100)])
    cfg = PaperTableConfig(
        datasets=tuple(args.datasets), deltas=tuple(deltas), seed=args.seed, bins=args.bins,
        distribution=args.distribution, components=args.components, mode=args.mode,
        max_instances=args.max_instances, anchor=not args.no_anchor, anchor_max_instances=args.anchor_max_instances,
        threshold=args.threshold, n_samples=args.samples, n_jobs=args.n_jobs, out=args.out, resume=args.resume,
        quick=args.quick, plots=not args.no_plots, progress=not args.no_progress)
    res = run_paper_table(cfg)
    print((Path(args.out) / "table.md").read_text(encoding="utf-8"))
    print(f"Written to {args.out}/ (table.md, table.csv, table.tex, comparison.md, run.json, records/"
          f"{'' if args.no_plots else ', length_vs_delta.png, runtime.png'}) in {res['seconds']} s.",
          file=sys.stderr)
    return 0


def _languages(args: argparse.Namespace) -> int:
    cfg = LanguagesConfig(datasets=tuple(args.datasets), languages=tuple(args.languages), instances=args.instances,
                          families=tuple(args.families),
                          deltas=tuple(args.delta), seed=args.seed, bins=args.bins, out=args.out,
                          quick=args.quick, plots=not args.no_plots, progress=not args.no_progress,
                          max_seconds=args.max_seconds)
    run_languages(cfg)
    print((Path(args.out) / "languages.md").read_text(encoding="utf-8"))
    return 0


def _confidence(text: str) -> float:
    v = unit_float(text)
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {text!r}")
    return v


def _ensembles(args: argparse.Namespace) -> int:
    cfg = EnsemblesConfig(
        dataset=args.dataset, models=tuple(args.models), trees=tuple(args.trees), depths=tuple(args.depths),
        languages=tuple(args.languages), deltas=tuple(args.delta), instances=args.instances, seed=args.seed,
        bins=args.bins, max_seconds=args.max_seconds, max_nodes=args.max_nodes, max_memory=args.max_memory << 20,
        construction=args.construction, budget=args.budget, train_budget=args.train_budget,
        confidence=args.confidence, max_samples=args.max_samples, sat_engine=args.sat_engine,
        out=args.out, resume=args.resume, progress=not args.no_progress)
    rows = run_ensembles(cfg)
    print((Path(args.out) / "ensembles.md").read_text(encoding="utf-8"))
    bad = sum(r["disagreements"] for r in rows if r["disagreements"] != "")
    if bad:
        print(f"kcxai: error: {bad} cross-checks found an exact language's set not relevant (a bug); see "
              f"{args.out}/ensembles.csv", file=sys.stderr)
        return 1
    return 0


def _add_ensembles(sub: Any) -> None:
    d = EnsemblesConfig(models=())
    r = sub.add_parser(
        "ensembles", help="forests and boosted trees by size: compile time, size, ms per explanation per language",
        description="Train random forests (soft and hard voting) and boosted trees over a grid of sizes on a "
                    "bundled dataset; compile each to obdd and sdd under limits, explain held-out rows with "
                    "min_idrs (obdd, sdd; sampling: approximate, delta > 0) and ensemble_axp (sat, delta = 0) "
                    "under a time budget per cell, and cross-check the exact sets. See docs/experiments.md.")
    r.add_argument("--dataset", choices=_DATASETS, default=d.dataset, help=f"bundled dataset (default {d.dataset})")
    r.add_argument("--models", nargs="+", choices=list(MODEL_KINDS), default=list(default_kinds()), metavar="KIND",
                   help=f"model kinds among {', '.join(MODEL_KINDS)} (default: those installed)")
    r.add_argument("--trees", nargs="+", type=_positive, default=list(d.trees), metavar="N",
                   help=f"numbers of trees (default {' '.join(map(str, d.trees))})")
    r.add_argument("--depths", nargs="+", type=_positive, default=list(d.depths), metavar="D",
                   help=f"maximum depths (default {' '.join(map(str, d.depths))})")
    r.add_argument("--languages", nargs="+", choices=list(ENSEMBLE_LANGUAGES), default=list(ENSEMBLE_LANGUAGES),
                   metavar="LANG", help=f"languages among {', '.join(ENSEMBLE_LANGUAGES)} (default: all)")
    r.add_argument("--delta", nargs="+", type=_delta, default=list(d.deltas),
                   help="error bounds (default 0 0.05; sat runs at 0, sampling at every delta > 0)")
    r.add_argument("--instances", type=_positive, default=d.instances,
                   help=f"held-out rows explained per model (default {d.instances})")
    r.add_argument("--seed", type=seed, default=0, help="seed of the split, models and sampler (default 0)")
    r.add_argument("--bins", type=_bins, default=10, help="quantile bins per continuous column (default 10)")
    r.add_argument("--max-seconds", type=positive_seconds, default=d.max_seconds,
                   help=f"time limit of each compilation (default {d.max_seconds:g})")
    r.add_argument("--max-nodes", type=_positive, default=d.max_nodes,
                   help=f"node limit of each compilation (default {d.max_nodes})")
    r.add_argument("--max-memory", type=_positive, default=d.max_memory >> 20, metavar="MIB",
                   help=f"memory limit of each compilation in MiB (default {d.max_memory >> 20})")
    r.add_argument("--construction", choices=["auto", "ensemble", "builder"], default=d.construction,
                   help="how obdd and sdd are built: auto / ensemble (feature by feature from the leaf scores) or "
                        "builder (the threshold compiler through dd and PySDD) (default auto)")
    r.add_argument("--budget", type=positive_seconds, default=d.budget,
                   help=f"wall-clock seconds per cell (model x language x delta) for its explanations, and for "
                        f"its checks (default {d.budget:g})")
    r.add_argument("--train-budget", type=positive_seconds, default=d.train_budget,
                   help=f"wall-clock seconds to train one model; over it, the model and the larger ones of its "
                        f"family are skipped (default {d.train_budget:g})")
    r.add_argument("--confidence", type=_confidence, default=d.confidence,
                   help=f"the sampling language's confidence (default {d.confidence:g})")
    r.add_argument("--max-samples", type=_positive, default=d.max_samples,
                   help=f"the sampling language's samples per decision at most (default {d.max_samples})")
    r.add_argument("--sat-engine", choices=[e for e in ENGINES], default=d.sat_engine,
                   help="engine of the sat language: auto (SAT for hard voting, branch and bound otherwise), sat "
                        "or search (default auto)")
    r.add_argument("--out", type=output_dir, default=d.out, help=f"output directory (default {d.out})")
    r.add_argument("--resume", action="store_true",
                   help="reuse the per-model record files of an earlier run with the same settings")
    r.add_argument("--no-progress", action="store_true", help="no progress indicator on stderr")
    r.set_defaults(func=_ensembles)


def _common(p: argparse.ArgumentParser, out: str) -> None:
    p.add_argument("--datasets", nargs="+", choices=_DATASETS, default=list(_DATASETS), metavar="NAME",
                   help=f"datasets to run (default: all five: {', '.join(_DATASETS)})")
    p.add_argument("--delta", nargs="+", type=_delta, default=[Fraction(0), Fraction(1, 100), Fraction(2, 100),
                                                               Fraction(5, 100)],
                   help="error bounds (default: the paper's 0 0.01 0.02 0.05)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the split, trees and samples (default 0)")
    p.add_argument("--bins", type=_bins, default=10,
                   help="quantile bins per continuous column (default 10)")
    p.add_argument("--quick", action="store_true", help="a small seeded sample (a smoke run, under 2 minutes)")
    p.add_argument("--out", type=output_dir, default=out, help=f"output directory (default {out})")
    p.add_argument("--no-plots", action="store_true", help="do not write PNG plots (no matplotlib needed)")
    p.add_argument("--no-progress", action="store_true", help="no progress indicator on stderr")


def add_subparser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``experiment`` (``paper-table``, ``languages``, ``side-by-side``, ``ensembles``) to the ``kcxai``
    command's subparsers."""
    e = subparsers.add_parser(
        "experiment", help="reproduce the paper's experiment; compare KC languages",
        description="Reproduce the paper's experiment (Table tab:res) and compare knowledge-compilation "
                    "languages. See docs/experiments.md.")
    sub = e.add_subparsers(dest="experiment", metavar="EXPERIMENT")
    e.set_defaults(func=lambda args: (e.print_help(), 2)[1])

    p = sub.add_parser(
        "paper-table", help="min-I-delta-relevant sets vs Anchor on the five datasets",
        description="The paper's Table tab:res: explain the protocol's instances (30%% of a dataset with "
                    "< 10,000 rows, 3%% otherwise) with min_idrs for each delta and with Anchor, and write "
                    "Markdown/CSV/LaTeX tables and PNG plots.")
    _common(p, "results/paper-table")
    p.add_argument("--n-jobs", type=_n_jobs, default=1, help="joblib workers over instances (default 1; -1: all)")
    p.add_argument("--no-anchor", action="store_true", help="skip the Anchor baseline (no alibi needed)")
    p.add_argument("--max-instances", type=_positive, default=None,
                   help="explain at most N of the protocol's instances per dataset (seeded subsample)")
    p.add_argument("--anchor-max-instances", type=_positive, default=None,
                   help="run Anchor on at most N of the explained instances per dataset (seeded subsample)")
    p.add_argument("--threshold", type=unit_float, default=0.95, help="Anchor's precision threshold (default 0.95)")
    p.add_argument("--samples", type=_positive, default=1000,
                   help="samples per explanation for Anchor's sampled precision metric (default 1000)")
    p.add_argument("--resume", action="store_true",
                   help="reuse the per-dataset record files of an earlier run with the same settings")
    p.add_argument("--distribution", choices=("uniform", "product", "mixture"), default="uniform",
                   help="explain under the uniform distribution (the paper's, default) or one fitted on the "
                        "training rows")
    p.add_argument("--components", type=_positive, default=8, help="K of --distribution mixture (default 8)")
    p.add_argument("--mode", choices=("idrs", "cdrs"), default="idrs",
                   help="idrs: min_idrs, --delta bounds the error (the paper's, default); cdrs: local_cdrs, "
                        "--precision bounds the precision (default 0.95)")
    p.add_argument("--precision", nargs="+", type=_delta, default=None,
                   help="precision bounds of --mode cdrs (default 0.95)")
    p.set_defaults(func=_paper_table, delta=None)

    q = sub.add_parser(
        "languages", help="compile time, size and min_idrs time per KC language",
        description="For the experiment's trees, the same trees as decision lists, and small forests: compile to "
                    "each language and time min_idrs on the same instances and deltas; every language must find "
                    "the sets of the first language that compiled the model.")
    _common(q, "results/languages")
    q.add_argument("--languages", nargs="+", default=["dt", "sdd", "obdd", "ddnnf"], metavar="LANG",
                   choices=list(LANGUAGES), help="languages to compare (default: dt sdd obdd ddnnf)")
    q.add_argument("--families", nargs="+", default=list(LANGUAGE_FAMILIES), choices=list(LANGUAGE_FAMILIES),
                   metavar="FAMILY", help=f"model families among {', '.join(LANGUAGE_FAMILIES)} (default: all)")
    q.add_argument("--instances", type=_positive, default=50,
                   help="instances per dataset (seeded subsample of the protocol's; default 50)")
    q.add_argument("--max-seconds", type=positive_seconds, default=600.0,
                   help="compilation time limit for the compilers that take one (default 600)")
    q.set_defaults(func=_languages)

    _add_side_by_side(sub)
    _add_rules(sub)
    _add_ensembles(sub)
    return e


def _add_side_by_side(sub: Any) -> None:
    """``kcxai experiment side-by-side``."""
    p = sub.add_parser(
        "side-by-side", help="uniform / product / mixture x min_idrs / local_cdrs, Anchor beside",
        description="Explain the same trees and instances under the uniform distribution and under product and "
                    "mixture distributions fitted on the training rows, with min_idrs (0.01, 0.05) and local_cdrs "
                    "(0.95); measure on the held-out rows; Anchor's figures from an earlier paper-table run.")
    p.add_argument("--datasets", nargs="+", choices=_DATASETS, default=list(_DATASETS), metavar="NAME")
    p.add_argument("--distributions", nargs="+", choices=DISTRIBUTIONS, default=list(DISTRIBUTIONS))
    p.add_argument("--components", type=_positive, default=8, help="K of the mixture (default 8)")
    p.add_argument("--max-instances", type=_positive, default=300,
                   help="instances per dataset (default 300: the earlier run's Anchor instances)")
    p.add_argument("--anchor-table", default="docs/results/table.csv",
                   help="table.csv of a paper-table run with Anchor (default docs/results/table.csv)")
    p.add_argument("--no-anchor-table", action="store_true", help="no Anchor columns")
    p.add_argument("--n-jobs", type=int, default=1, help="joblib workers over instances (default 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="20 instances per dataset")
    p.add_argument("--out", default="results/side-by-side")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_side_by_side)


def _side_by_side(args: argparse.Namespace) -> int:
    cfg = SideBySideConfig(datasets=tuple(args.datasets), distributions=tuple(args.distributions),
                           components=args.components, max_instances=args.max_instances,
                           anchor_table=None if args.no_anchor_table else args.anchor_table,
                           n_jobs=args.n_jobs, seed=args.seed, quick=args.quick, out=args.out,
                           progress=not args.no_progress)
    run_side_by_side(cfg)
    print((Path(args.out) / "side_by_side.md").read_text(encoding="utf-8"))
    return 0


def _add_rules(sub: Any) -> None:
    """``kcxai experiment rules``."""
    p = sub.add_parser(
        "rules", help="C-delta sets, inflated, and Anchor (in its own environment) on held-out rows",
        description="Explain the paper-table trees under a fitted mixture with local_cdrs, widen each set with "
                    "kcxai.inflate, run Anchor in a separate Python environment (a subprocess), and measure all "
                    "three on the same held-out rows.")
    p.add_argument("--datasets", nargs="+", choices=_DATASETS, default=list(_DATASETS), metavar="NAME")
    p.add_argument("--precision", type=_delta, default=Fraction(95, 100),
                   help="precision bound of the C-delta sets and Anchor's threshold (default 0.95)")
    p.add_argument("--max-instances", type=int, default=300)
    p.add_argument("--components", type=int, default=8)
    p.add_argument("--anchor-python", default="/work/venvs/anchor/bin/python",
                   help="the Python of an environment with alibi (numpy < 2); default /work/venvs/anchor/bin/python")
    p.add_argument("--no-anchor", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results/rules")
    p.set_defaults(func=_rules)


def _rules(args: argparse.Namespace) -> int:
    cfg = RulesConfig(datasets=tuple(args.datasets), delta=args.precision, max_instances=args.max_instances,
                      components=args.components, anchor_python=None if args.no_anchor else args.anchor_python,
                      seed=args.seed, out=args.out)
    run_rules(cfg)
    print((Path(args.out) / "rules.md").read_text(encoding="utf-8"))
    return 0
