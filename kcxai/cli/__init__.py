"""The ``kcxai`` command line.

Subcommands: ``demo`` (the README's main job), ``explain`` (one instance of a
saved model), ``score`` (a rule's exact precision and coverage), ``compile``
(compile a saved model and report its size), ``languages``, ``explain-csv`` and
``experiment``.
Each subcommand is added to the parser by its own ``_add_<name>`` function.

User errors print one line ``kcxai: error: ...`` to stderr and exit with
status 2; they never show a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, cast

import numpy as np

import kcxai
from kcxai._errors import InvalidInputError, KcxaiError
from kcxai.cli._args import (add_fit_budget_arg, add_method_args, delta_float, fit_budget_of, method_options,
                             positive_int, seed)
from kcxai.cli._experiment import add_subparser as _add_experiment
from kcxai.cli._explain_csv import _read_csv
from kcxai.cli._explain_csv import add_subparser as _add_explain_csv
from kcxai.cli._instance import parse_features, parse_instance
from kcxai.cli._models import BUNDLED, load_cli_model
from kcxai.datasets import load_dataset
from kcxai.engines import LANGUAGES
from kcxai.engines._registry import languages_markdown
from kcxai.explain._methods import METHODS, resolve_method

__all__ = ["main", "parse_instance"]


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line on stderr."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see '{self.prog} --help')\n")


def _one_line(message: str) -> str:
    """A message on one line, with the middle of any run of over 80 non-blank characters (a quoted bad value)
    cut, so that a long path keeps its start and its file name."""
    return re.sub(r"\S{81,}", lambda m: f"{m.group()[:40]}...{m.group()[-30:]} ({len(m.group())} characters)",
                  " ".join(message.split()))


# -- shared helpers ---------------------------------------------------------------


def _plain(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x if isinstance(x, (str, int, float, bool)) or x is None else str(x)


def _json_value(x: Any) -> Any:
    """A compile statistic as JSON: sequences become lists, other objects strings."""
    if isinstance(x, (list, tuple)):
        return [_json_value(v) for v in x]
    return _plain(x)


def _shown_value(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, list):
        return "(" + " ".join(map(str, x)) + ")"
    return str(x)


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", metavar="MODEL",
                   help="a kcxai JSON model (kcxai.load_model), a .dt tree followed by its MAP file, "
                        f"or a bundled model: {', '.join('bundled:' + b for b in BUNDLED)}")
    p.add_argument("map", metavar="MAP", nargs="?", default=None, help="the .map file of a .dt tree")


# -- demo ---------------------------------------------------------------------------


def _demo(args: argparse.Namespace) -> int:
    """Train a pipeline on the bundled adult data, fit the distribution on the training rows, and explain a
    few held-out rows: the sufficient reason, the rule whose precision is bounded, and the paper's
    I-delta set, each with its exact measures and its precision on held-out rows that were not explained."""
    # scikit-learn takes about a second to import: only the demo trains a model
    from sklearn.compose import ColumnTransformer  # scikit-learn: loaded by the demo only
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder
    from sklearn.tree import DecisionTreeClassifier

    ds = load_dataset("adult", as_frame=True)
    if args.instances > ds.X.shape[0] // 10:
        raise InvalidInputError(f"--instances must be at most {ds.X.shape[0] // 10}. Got {args.instances}.")
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(ds.X.shape[0])
    cut = int(0.8 * len(order))
    X_train, y_train = ds.X.iloc[order[:cut]], ds.y.iloc[order[:cut]]
    X_test, y_test = ds.X.iloc[order[cut:]], ds.y.iloc[order[cut:]]
    rows = X_test.iloc[:args.instances]  # explained; the other held-out rows check the rules
    check = X_test.iloc[args.instances:]
    coded = list(ds.value_maps)
    encode = ColumnTransformer([("categories", OrdinalEncoder(), coded)], remainder="passthrough")
    pipe = make_pipeline(encode, DecisionTreeClassifier(max_depth=args.max_depth, random_state=args.seed))
    pipe.fit(X_train, y_train)
    explainer = kcxai.Explainer(pipe, X_train)  # a product distribution fitted on the training rows
    tree = cast(kcxai.DecisionTree, explainer.model_)  # the pipeline ends in a DecisionTreeClassifier
    predicted = np.asarray(explainer.predict(check))
    base = {c: float(np.mean(predicted == c)) for c in tree.classes}
    print(f"adult: {len(X_train)} training rows, {len(X_test)} held out, {ds.X.shape[1]} columns; sklearn "
          f"pipeline (OrdinalEncoder on {len(coded)} coded columns + tree): {tree.n_nodes} nodes, depth "
          f"{tree.depth}, held-out accuracy {pipe.score(X_test, y_test):.3f}")
    print("Every probability below is exact, under the product of the columns' value frequencies in the training "
          f"rows; 'on data' is measured on the {len(check)} held-out rows that are not explained here.\n")
    asks = [("sufficient reason (AXp, delta = 0)", "axp", {}),
            (f"rule with precision >= {args.precision:g}", "local_cdrs", {"precision": args.precision}),
            (f"the paper's I-delta set (delta = {args.delta:g})", "min_idrs", {"delta": args.delta})]
    for rid, row in rows.iterrows():
        print(f"row {rid}: predicted {explainer.predict(row)[0]}")
        for title, method, bound in asks:
            result = explainer.explain(row, method=method, start="path", **bound)
            e = result.explanations[0]
            held = explainer.evaluate(result, check).iloc[0]
            print(f"  {title}: {e.rule()}")
            noun = "feature" if len(e) == 1 else "features"
            print(f"    {len(e)} {noun}; {_demo_measures(e, method)}; {_demo_on_data(held, e, method, base)}")
        print()
    return 0


def _demo_measures(e: Any, method: str) -> str:
    if method == "axp":
        return f"every input agreeing on them gets this class (precision 1, proved), coverage {float(e.coverage):.3%}"
    if method == "min_idrs":
        return (f"bounds Pr(class differs and these features agree) <= {float(e.delta):g}: error "
                f"{float(e.error):.5f}; precision {float(e.precision):.4f}, coverage {float(e.coverage):.3%} "
                f"({e.how_decided()})")
    return f"precision {float(e.precision):.4f} ({e.how_decided()}), coverage {float(e.coverage):.3%}"


def _demo_on_data(held: Any, e: Any, method: str, base: dict[Any, float]) -> str:
    """On-data precision, and why beside it when it is below 0.8."""
    if held["data_precision"] is None or held["data_precision"] != held["data_precision"]:
        return "on data: no matching held-out row"
    p = float(held["data_precision"])
    matching = int(held["data_matching"])
    out = f"on data: precision {p:.4f} on {matching} matching rows"
    if p >= 0.8:
        return out
    if method == "min_idrs":
        why = ("an I-delta set bounds the joint error over all inputs, not the precision: it says 'rarely wrong "
               f"overall', not 'a reason'; {e.prediction} is predicted for {base.get(e.prediction, 0.0):.0%} of "
               "held-out rows")
    elif matching < 30:
        why = f"only {matching} matching rows: a noisy estimate"
    else:
        why = ("the fitted product distribution ignores how columns depend on each other: "
               "Explainer(..., distribution='mixture') tracks the data more closely")
    return f"{out} (below 0.8: {why})"


def _add_demo(sub: Any) -> None:
    d = sub.add_parser("demo", help="explain a tree trained on the bundled adult dataset",
                       description="Train a decision tree on the bundled adult dataset and print, for a few "
                                   "held-out rows, the sufficient reason, a rule of bounded precision and the "
                                   "paper's I-delta set, with exact measures and precision on held-out rows.")
    d.add_argument("--instances", type=positive_int, default=5, help="how many instances to explain (default 5)")
    d.add_argument("--precision", type=delta_float, default=0.95,
                   help="lower bound on the precision of the rule (default 0.95)")
    d.add_argument("--delta", type=delta_float, default=0.05,
                   help="upper bound on the error of the paper's I-delta set (default 0.05)")
    d.add_argument("--max-depth", type=positive_int, default=10, help="depth of the trained tree (default 10)")
    d.add_argument("--seed", type=seed, default=0, help="seed of the tree and of the instances (default 0)")
    d.set_defaults(func=_demo)


# -- explain ------------------------------------------------------------------------


def _explain(args: argparse.Namespace) -> int:

    model = load_cli_model(args.model, args.map)
    space = model.space
    instance = parse_instance(space, args.instance, values=args.values)
    m, bound = resolve_method(args.method, delta=args.delta, precision=args.precision)
    options: dict[str, Any] = method_options(args)
    if args.order is not None:
        options["order"] = parse_features(space, args.order, "--order")
    if args.start == "path":
        options["start"] = "path"
    elif args.start not in (None, "all"):
        options["start"] = parse_features(space, args.start, "--start")
    explainer = kcxai.Explainer(model, language=args.language, fit_budget=fit_budget_of(args))
    e = explainer.explain_one(list(instance), method=m.name, **{m.bound: bound}, **options)
    if args.json:
        d = {"model": args.model, "instance": [_plain(v) for v in instance], **e.to_dict()}
        d["values"] = [_plain(v) for v in d["values"]]
        print(json.dumps(d, indent=2))
        return 0
    shown = ", ".join(f"{f.name}={v}" + ("" if f.labels is None or f.label(f.index(v)) == str(v)
                                          else f" (original {f.label(f.index(v))})")
                      for f, v in zip(space.features, instance))
    print(f"model: {args.model} ({model!r})")
    print(f"instance: {shown}")
    print(f"predicted class: {e.prediction}")
    print(f"{len(e)} of {space.n_features} features: {m.name}, {METHODS[m.name].summary}")
    print(e)
    return 0


def _add_explain(sub: Any) -> None:
    p = sub.add_parser(
        "explain", help="explain one prediction of a saved model",
        description="Explain one instance of a saved model: by default a locally minimal set whose "
                    "precision is at least --precision (0.95); with --delta a subset-minimal I-delta-relevant "
                    "set (the paper's Algorithm 1); any --method of the method table; with exact measures.",
        epilog="Examples:\n"
               "  kcxai explain bundled:running_example --instance 1,1,1,1,0,0,0,0,1 --delta 0.03 --start path\n"
               "  kcxai explain bundled:running_example --instance 1,1,1,1,0,0,0,0,1 --method axp\n"
               "  kcxai explain tree.dt tree.map --values tree --instance 3,6,4,0,6,0,4,1,0,2,0,9"
               " --delta 1/100 --json\n"
               "  kcxai explain model.json --instance '{\"age\": 37, \"colour\": \"red\"}' --language sdd",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_model_args(p)
    p.add_argument("--instance", "-i", required=True,
                   help="the instance: comma-separated values in feature order, a JSON list, or a JSON "
                        "object {name: value}; numeric features take numbers, categorical ones one of "
                        "their domain values")
    p.add_argument("--values", choices=("auto", "tree", "original"), default="auto",
                   help="for a .dt tree: read --instance as tree values (the codes in the .dt file), as original "
                        "values (after '=' in the .map), or 'auto' (default): either, and an error when a value "
                        "means different things in the two; features without a .map have one vocabulary")
    add_method_args(p)
    p.add_argument("--language", "-l", default=None, choices=list(LANGUAGES), metavar="LANG",
                   help=f"force the engine answering the queries ({', '.join(LANGUAGES)}); default: chosen "
                        "for the method and bound (exact counts when the model compiles within the probe budget)")
    p.add_argument("--order", default=None,
                   help="comma-separated features (names or 0-based indices) in the order they are tried")
    p.add_argument("--start", default=None,
                   help="'all' (default), 'path' (a tree's path for the instance), or comma-separated "
                        "features forming a relevant set")
    add_fit_budget_arg(p)
    p.add_argument("--json", action="store_true", help="print the explanation as JSON")
    p.set_defaults(func=_explain)


# -- score --------------------------------------------------------------------------


def _score(args: argparse.Namespace) -> int:
    model = load_cli_model(args.model, args.map)
    explainer = kcxai.Explainer(model, language=args.language, fit_budget=fit_budget_of(args))
    rows = None
    if args.data is not None:
        rows = _read_csv(args.data)
    score = explainer.score(args.rule, rows)
    if args.json:
        print(json.dumps({"model": args.model, **{k: _json_value(v) for k, v in score.to_dict().items()}}, indent=2))
        return 0
    print(f"model: {args.model} ({model!r})")
    print(score)
    return 0


def _add_score(sub: Any) -> None:
    p = sub.add_parser(
        "score", help="the exact precision and coverage of a rule",
        description="Score a rule (yours, or one kcxai printed) on a saved model: its exact precision and "
                    "coverage under the model's distribution, and on the rows of a CSV file if given.",
        epilog="Examples:\n"
               "  kcxai score bundled:running_example --rule 'IF x1 = 1 AND x9 = 1 THEN class = 1'\n"
               "  kcxai score model.json --rule 'IF age > 37.5 THEN class = >50K' --data rows.csv --json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_model_args(p)
    p.add_argument("--rule", "-r", required=True,
                   help="IF cond AND cond [THEN class = c], as kcxai prints rules; a condition is 'name = v', "
                        "'name in {a, b}', 'name > 37.5', 'name <= 52.5', 'name < 1', 'name >= 1' or "
                        "'name in (29.5, 52.5]' / '[1, 2)' (bounds at the feature's cuts, a decimal read as the "
                        "model reads it in a row), '... or name = missing'")
    p.add_argument("--data", default=None, metavar="CSV", help="rows to measure the rule on as well")
    p.add_argument("--language", "-l", default=None, choices=list(LANGUAGES), metavar="LANG",
                   help="force the exact counting language (default: the model's, within the probe budget)")
    add_fit_budget_arg(p)
    p.add_argument("--json", action="store_true", help="print the scores as JSON")
    p.set_defaults(func=_score)


# -- compile ------------------------------------------------------------------------


def _compile(args: argparse.Namespace) -> int:
    model = load_cli_model(args.model, args.map)
    rows = []
    for language in args.language:
        c = kcxai.compile_model(model, language)
        rows.append({"language": c.language, "backend": c.backend,
                     **{k: _json_value(v) for k, v in c.stats.items()}})
    if args.json:
        print(json.dumps(rows if len(rows) > 1 else rows[0], indent=2))
        return 0
    print(f"model: {args.model} ({model!r})")
    for r in rows:
        extra = ", ".join(f"{k} {_shown_value(v)}" for k, v in r.items()
                          if k not in ("language", "backend", "size", "compile_seconds"))
        secs = r.get("compile_seconds")
        t = f"{secs:.4f} s" if isinstance(secs, (int, float)) else "?"
        print(f"{r['language']:>6}: size {r.get('size', '?')}, compiled in {t} by {r['backend']}"
              + (f" ({extra})" if extra else ""))
    return 0


def _add_compile(sub: Any) -> None:
    p = sub.add_parser(
        "compile", help="compile a saved model and report size and time",
        description="Compile a saved model to one or more knowledge-compilation languages and print "
                    "the size of the compiled form and the compile time.",
        epilog="Example:\n  kcxai compile bundled:IAI12 --language dt sdd obdd",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_model_args(p)
    p.add_argument("--language", "-l", nargs="+", default=["dt"], choices=list(LANGUAGES), metavar="LANG",
                   help=f"one or more languages ({', '.join(LANGUAGES)}); default dt")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(func=_compile)


def _languages(args: argparse.Namespace) -> int:
    if args.markdown:
        print(languages_markdown(), end="")
        return 0
    for lang in LANGUAGES.values():
        state = "available" if lang.is_available() else f"not installed ({lang.install})"
        exact = "exact counts" if lang.exact else "estimated counts"
        opts = ", ".join(lang.option_names()) if lang.is_available() else "?"
        print(f"{lang.name:>6}: {lang.summary}; {exact}; {state}; options: {opts or 'none'}")
    return 0


def _add_languages(sub: Any) -> None:
    p = sub.add_parser("languages", help="list the knowledge-compilation languages",
                       description="List the declared knowledge-compilation languages, whether their "
                                   "backend is installed here, and their options.")
    p.add_argument("--markdown", action="store_true", help="print the table of docs/languages.md")
    p.set_defaults(func=_languages)


# -- entry point --------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kcxai", description="Exact relevant-set explanations via knowledge compilation.")
    p.add_argument("--version", action="version", version=f"kcxai {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_demo(sub)
    _add_explain(sub)
    _add_score(sub)
    _add_compile(sub)
    _add_languages(sub)
    _add_explain_csv(sub)
    _add_experiment(sub)
    return p


def _version() -> str:
    return kcxai.__version__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kcxai`` command.

    Returns the exit status: 0 on success, 2 on a user error (one line on
    stderr, no traceback).

    Examples
    --------
    >>> from kcxai.cli import main
    >>> main(["explain", "bundled:running_example", "--instance", "1,1,1,1,0,0,0,0,1",
    ...       "--delta", "3/100", "--start", "path"])  # doctest: +ELLIPSIS
    model: bundled:running_example (DecisionTree(35 nodes, depth 8, 9 features, 2 classes))
    instance: x1=1, x2=1, x3=1, x4=1, x5=0, x6=0, x7=0, x8=0, x9=1
    predicted class: 1
    2 of 9 features: min_idrs, subset-minimal I-delta-relevant set (Algorithm 1): error <= delta
    IF x1 = 1 AND x9 = 1 THEN class = 1
    ...
    0
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version and usage errors (already printed)
        return e.code if isinstance(e.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except (KcxaiError, OSError) as e:  # OSError: an output that cannot be written (disk full, no permission)
        text = str(e) if isinstance(e, KcxaiError) or not e.strerror else f"{e.strerror}: {e.filename!r}"
        print(f"kcxai: error: {_one_line(text)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
