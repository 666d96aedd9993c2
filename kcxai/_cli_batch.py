"""``kcxai explain-csv``: explain every row of a CSV file with a saved model, write a table.

The output has one row per input row (the columns of :meth:`kcxai.ExplanationSet.to_frame`), as CSV,
or as Parquet when the output name ends in ``.parquet`` (needs pyarrow: ``pip install kcxai[parquet]``).
Rows that cannot be explained are reported in the ``failure`` column with ``--on-error report``;
by default the first such row stops the command with an error naming it.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from kcxai._errors import InvalidInputError, MissingDependencyError

__all__ = ["add_subparser", "explain_csv"]


def _read_csv(path: str) -> Any:
    import pandas as pd

    if not os.path.exists(path):
        raise InvalidInputError(f"DATA file {path!r} does not exist.")
    try:
        return pd.read_csv(path)
    except (ValueError, pd.errors.ParserError) as e:
        raise InvalidInputError(f"DATA file {path!r} is not a readable CSV file: {e}") from None


def _write(frame: Any, out: str) -> str:
    if out.lower().endswith(".parquet"):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise MissingDependencyError(
                "Writing Parquet needs pyarrow, which is not installed: pip install 'kcxai[parquet]' "
                "(or write a .csv file).") from None
        frame.to_parquet(out, index=False)
        return "parquet"
    frame.to_csv(out, index=False)
    return "csv"


def explain_csv(args: argparse.Namespace) -> int:
    """Run ``kcxai explain-csv`` (see :func:`add_subparser`)."""
    import kcxai

    from kcxai.explain._methods import resolve_method

    m, bound = resolve_method(args.method, delta=args.delta, precision=args.precision)  # before reading DATA
    model = kcxai.load_model(args.model)
    data = _read_csv(args.data)
    explainer = kcxai.Explainer(model, language=args.language)
    options = {} if args.max_seconds is None else {"max_seconds": args.max_seconds}
    engine = explainer.engine_for(m.name, **{m.bound: bound})
    result = explainer.explain(data, method=m.name, **{m.bound: bound}, n_jobs=args.n_jobs,
                               progress=args.progress, on_error=args.on_error, **options)
    kind = _write(result.to_frame(), args.out)
    failed = f", {result.n_failures} failed (see the 'failure' column)" if result.n_failures else ""
    print(f"explained {len(result) - result.n_failures} of {len(result)} rows with {m.name} via "
          f"{engine.language} ({engine.reason}){failed}; wrote {args.out} ({kind})", file=sys.stderr)
    return 0


def add_subparser(sub: Any) -> None:
    """Add ``explain-csv`` to the ``kcxai`` command's subparsers."""
    from kcxai.cli import add_method_args

    p = sub.add_parser(
        "explain-csv", help="explain every row of a CSV file with a saved model",
        description="Explain every row of DATA (a CSV file with a header naming the model's features) with "
                    "the saved kcxai model MODEL, and write one row per explanation to --out (CSV, or "
                    "Parquet for a .parquet name).",
        epilog="Example:\n  kcxai explain-csv model.json rows.csv --out explanations.csv --delta 0.01 --n-jobs 2",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL", help="a kcxai model saved as JSON (Classifier.save)")
    p.add_argument("data", metavar="DATA", help="a CSV file whose header names the model's features")
    p.add_argument("--out", "-o", required=True, help="output file: .csv, or .parquet (needs pyarrow)")
    add_method_args(p)
    p.add_argument("--language", "-l", default=None, help="force the engine (default: chosen for the method and "
                                                           "bound, see docs/explainer.md)")
    p.add_argument("--n-jobs", "-j", type=int, default=None, help="joblib workers (-1: all cores; default 1)")
    p.add_argument("--on-error", choices=("raise", "report"), default="raise",
                   help="'report': rows that cannot be explained get a 'failure' entry, the others are explained")
    p.add_argument("--progress", action="store_true", help="show a progress bar on stderr")
    p.set_defaults(func=explain_csv)
