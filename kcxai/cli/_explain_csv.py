"""``kcxai explain-csv``: explain every row of a CSV file with a saved model, write a table.

The output has one row per input row (the columns of :meth:`kcxai.ExplanationSet.to_frame`), in the
format its name ends in (:data:`OUTPUT_FORMATS`): ``.csv``, ``.parquet`` (needs pyarrow:
``pip install kcxai[parquet]``), ``.json`` (a list of objects) or ``.jsonl`` (one object a line); any
other name is refused before anything is computed. The file is written atomically.
Rows that cannot be explained are reported in the ``failure`` column with ``--on-error report``;
by default the first such row stops the command with an error naming it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

import kcxai
from kcxai._errors import InvalidInputError, MissingDependencyError
from kcxai._files import atomic_writer
from kcxai.cli._args import add_method_args
from kcxai.explain._methods import resolve_method

__all__ = ["OUTPUT_FORMATS", "add_subparser", "explain_csv", "output_format", "write_table"]

#: Output name ending -> format written by ``kcxai explain-csv --out``.
OUTPUT_FORMATS = {".csv": "csv", ".parquet": "parquet", ".json": "json", ".jsonl": "jsonl"}


def _read_csv(path: str) -> Any:
    import pandas as pd  # slow to import: loaded when a table is read

    if not os.path.exists(path):
        raise InvalidInputError(f"DATA file {path!r} does not exist.")
    try:
        return pd.read_csv(path)
    except (ValueError, pd.errors.ParserError) as e:
        raise InvalidInputError(f"DATA file {path!r} is not a readable CSV file: {e}") from None


def output_format(out: str) -> str:
    """The format of an output file, from how its name ends (:data:`OUTPUT_FORMATS`, any case).

    Raises :class:`~kcxai.InvalidInputError` naming the supported endings for any other name, and
    :class:`~kcxai.MissingDependencyError` for ``.parquet`` without pyarrow: both before any work.

    Examples
    --------
    >>> output_format("rows.JSONL")
    'jsonl'
    >>> output_format("m.xlsx")
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidInputError: '--out' must name a .csv, .parquet, .json or .jsonl file. Got 'm.xlsx' (a .xlsx file) instead.
    """  # noqa: E501 (a doctest's one-line error message)
    ext = os.path.splitext(out)[1].lower()
    kind = OUTPUT_FORMATS.get(ext)
    if kind is None:
        names = list(OUTPUT_FORMATS)
        got = f"a {ext} file" if ext else "no extension"
        raise InvalidInputError(f"'--out' must name a {', '.join(names[:-1])} or {names[-1]} file. "
                                f"Got {out!r} ({got}) instead.")
    if kind == "parquet":
        try:
            import pyarrow  # noqa: F401  # the optional Parquet writer, asked for here only
        except ImportError:
            raise MissingDependencyError(
                "Writing Parquet needs pyarrow, which is not installed: pip install 'kcxai[parquet]' "
                "(or write a .csv, .json or .jsonl file).") from None
    return kind


def _json_value(v: Any) -> Any:
    """A table cell as JSON: numpy scalars as Python numbers, NaN and missing cells as null."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return v


def write_table(frame: Any, out: str) -> str:
    """Write a DataFrame to ``out`` in the format its name ends in (see :func:`output_format`), atomically;
    returns the format. JSON keeps every float exactly (Python's shortest repr)."""
    kind = output_format(out)
    if kind == "parquet":
        with atomic_writer(out, binary=True) as fh:
            frame.to_parquet(fh, index=False)
    elif kind == "csv":
        with atomic_writer(out) as fh:
            frame.to_csv(fh, index=False)
    else:
        rows = [{str(k): _json_value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
        with atomic_writer(out) as fh:
            if kind == "json":
                fh.write(json.dumps(rows, allow_nan=False, indent=1) + "\n")
            else:
                fh.writelines(json.dumps(row, allow_nan=False) + "\n" for row in rows)
    return kind


def explain_csv(args: argparse.Namespace) -> int:
    """Run ``kcxai explain-csv`` (see :func:`add_subparser`)."""
    output_format(args.out)  # an unsupported name, or Parquet without pyarrow: refused before any work
    m, bound = resolve_method(args.method, delta=args.delta, precision=args.precision)  # before reading DATA
    model = kcxai.load_model(args.model)
    data = _read_csv(args.data)
    explainer = kcxai.Explainer(model, language=args.language)
    options = {} if args.max_seconds is None else {"max_seconds": args.max_seconds}
    engine = explainer.engine_for(m.name, **{m.bound: bound})
    result = explainer.explain(data, method=m.name, **{m.bound: bound}, n_jobs=args.n_jobs,
                               progress=args.progress, on_error=args.on_error, **options)
    kind = write_table(result.to_frame(), args.out)
    failed = f", {result.n_failures} failed (see the 'failure' column)" if result.n_failures else ""
    print(f"explained {len(result) - result.n_failures} of {len(result)} rows with {m.name} via "
          f"{engine.language} ({engine.reason}){failed}; wrote {args.out} ({kind})", file=sys.stderr)
    return 0


def _out(text: str) -> str:
    """``--out``: a name in a supported format (checked when parsed, before any work)."""
    try:
        output_format(text)
    except (InvalidInputError, MissingDependencyError) as e:
        raise argparse.ArgumentTypeError(str(e).replace("'--out' must", "must")) from None
    return text


def add_subparser(sub: Any) -> None:
    """Add ``explain-csv`` to the ``kcxai`` command's subparsers."""
    p = sub.add_parser(
        "explain-csv", help="explain every row of a CSV file with a saved model",
        description="Explain every row of DATA (a CSV file with a header naming the model's features) with "
                    "the saved kcxai model MODEL, and write one row per explanation to --out, in the format "
                    "its name ends in: .csv, .parquet (needs pyarrow), .json (a list of objects) or .jsonl (one "
                    "object a line).",
        epilog="Example:\n  kcxai explain-csv model.json rows.csv --out explanations.csv --delta 0.01 --n-jobs 2",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL", help="a kcxai model saved as JSON (Classifier.save)")
    p.add_argument("data", metavar="DATA", help="a CSV file whose header names the model's features")
    p.add_argument("--out", "-o", required=True, type=_out,
                   help="output file: .csv, .parquet (needs pyarrow), .json or .jsonl")
    add_method_args(p)
    p.add_argument("--language", "-l", default=None, help="force the engine (default: chosen for the method and "
                                                           "bound, see docs/explainer.md)")
    p.add_argument("--n-jobs", "-j", type=int, default=None, help="joblib workers (-1: all cores; default 1)")
    p.add_argument("--on-error", choices=("raise", "report"), default="raise",
                   help="'report': rows that cannot be explained get a 'failure' entry, the others are explained")
    p.add_argument("--progress", action="store_true", help="show a progress bar on stderr")
    p.set_defaults(func=explain_csv)
