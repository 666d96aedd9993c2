"""``kcxai explain-csv``: explain every row of a CSV file with a saved model, write a table.

DATA (CSV, or Parquet when its name ends in ``.parquet``) is read, explained and written ``--chunk-rows``
rows at a time (:func:`read_pieces`, :meth:`kcxai.Explainer.explain_batches`): memory holds a few chunks,
whatever the file's size. The output has one row per input row: ``id`` (the ``--id`` column, else the row's
number from 0), ``line`` (its line in a CSV file), then the columns of :meth:`kcxai.ExplanationSet.to_frame`;
in the format its name ends in (:data:`OUTPUT_FORMATS`): ``.csv``, ``.parquet`` (needs pyarrow:
``pip install kcxai[parquet]``), ``.json`` (a list of objects) or ``.jsonl`` (one object a line); any other
name is refused before anything is computed. CSV and JSON Lines are appended to as each chunk is explained,
so that ``--resume`` after an interrupted run explains only the rows whose ids are not written yet; JSON and
Parquet replace ``--out`` atomically when every row is written.
Rows that cannot be read or explained (a line with too many fields, a value outside the model's domain) are
reported in the ``failure`` column, starting ``line N:``, with ``--on-error report``; by default the first
such row stops the command with an error naming it. Workers that fail stop it with an error naming their chunk
and how many rows were written.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import sys
import warnings
from collections import deque
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

import kcxai
from kcxai._errors import InvalidInputError, MissingDependencyError, WorkerError
from kcxai._files import atomic_writer
from kcxai.cli._models import load_cli_model
from kcxai.cli._args import add_fit_budget_arg, add_method_args, fit_budget_of, method_options, positive_int
from kcxai.explain._methods import resolve_method
from kcxai.explain.explanation import missed_options
from kcxai.explanation_set import FRAME_COLUMNS

__all__ = ["OUTPUT_FORMATS", "add_subparser", "explain_csv", "output_format", "read_pieces", "Piece",
           "CHUNK_ROWS", "RESUMABLE", "COLUMNS"]

#: Output name ending -> format written by ``kcxai explain-csv --out``.
OUTPUT_FORMATS = {".csv": "csv", ".parquet": "parquet", ".json": "json", ".jsonl": "jsonl"}


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


def _read_csv(path: str) -> Any:
    """A whole CSV file as a DataFrame (``kcxai score --data``)."""
    import pandas as pd  # slow to import: loaded when a table is read

    if not os.path.exists(path):
        raise InvalidInputError(f"DATA file {path!r} does not exist.")
    try:
        return pd.read_csv(path)
    except (ValueError, pd.errors.ParserError) as e:
        raise InvalidInputError(f"DATA file {path!r} is not a readable CSV file: {e}") from None


#: The default of ``--chunk-rows``: rows read, explained and written at a time.
CHUNK_ROWS = 10_000
#: What pandas says of a line with too many fields (``on_bad_lines="warn"``).
_SKIPPED = re.compile(r"Skipping line (\d+): (.*)")
#: An integer as text (what :func:`_number` reads as an int).
_INT_TEXT = re.compile(r"[+-]?[0-9]+")


@dataclass
class Piece:
    """One chunk of DATA: the rows that parsed (a DataFrame indexed by their ids), each one's line in the file
    (``None`` for Parquet), and the lines that did not parse, as ``(id, line, message)``."""

    frame: Any
    lines: list[int | None]
    bad: list[tuple[Any, int, str]] = field(default_factory=list)


def _csv_pieces(path: str, chunk_rows: int, id_column: str | None) -> Iterator[Piece]:
    """DATA read ``chunk_rows`` records at a time. A record is one line (the header is line 1); a line with
    more fields than the header is not read but reported with its number (pandas' ``on_bad_lines``), blank and
    short lines are read with missing cells (then reported by the row's reader)."""
    import pandas as pd  # slow to import: loaded when a table is read

    leading = _leading_rows_too_long(path)
    try:
        reader = pd.read_csv(path, chunksize=chunk_rows, on_bad_lines="warn", skip_blank_lines=False,
                             index_col=False, skiprows=[k - 1 for k, _ in leading] or None)
    except (ValueError, pd.errors.ParserError) as e:
        raise InvalidInputError(f"DATA file {path!r} is not a readable CSV file: {e}") from None
    line = 2 + len(leading)
    pending = [(None if id_column else k - 2, k, msg) for k, msg in leading]
    with reader:
        while True:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", pd.errors.ParserWarning)
                try:
                    frame = reader.get_chunk()
                except StopIteration:
                    frame = None
                except (ValueError, pd.errors.ParserError) as e:
                    raise InvalidInputError(f"DATA file {path!r} is not a readable CSV file after line {line - 1}: "
                                            f"{e}") from None
            skipped = {}
            for w in caught:
                for m in _SKIPPED.finditer(str(w.message)):
                    skipped[int(m.group(1))] = m.group(2).strip()
            if frame is None and not skipped and not pending:
                return
            n = 0 if frame is None else len(frame)
            lines: list[int | None] = []
            while len(lines) < n:
                if line not in skipped:
                    lines.append(line)
                line += 1
            if skipped:
                line = max(line, max(skipped) + 1)
            bad = pending + [(None if id_column else k - 2, k, msg) for k, msg in sorted(skipped.items())]
            pending = []
            if frame is None:
                yield Piece(pd.DataFrame(), [], bad)
                return
            frame = _numbers_read_alike(frame, pd)
            yield Piece(_with_ids(frame, [None if k is None else k - 2 for k in lines], id_column, path), lines, bad)


def _leading_rows_too_long(path: str) -> list[tuple[int, str]]:
    """The lines (with what is wrong) of DATA's first records that have more fields than the header: pandas
    would read the first of them as an index, or drop its last fields, instead of reporting it."""
    out: list[tuple[int, str]] = []
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        rows = csv.reader(fh)
        header = next(rows, None)
        for k, record in enumerate(rows, 2):
            if header is None or len(record) <= len(header):
                break
            out.append((k, f"expected {len(header)} fields, saw {len(record)}"))
    return out


def _numbers_read_alike(frame: Any, pd: Any) -> Any:
    """``frame`` with the numbers of a column of text cells read as numbers, so that a cell reads the same
    whatever its neighbours in the chunk (pandas reads a chunk's whole column as text when one cell is)."""
    for name in frame.columns:
        col = frame[name]
        if pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype):
            continue
        numeric = pd.to_numeric(col, errors="coerce")
        if numeric.isna().all():  # a column of words: nothing to read again
            continue
        frame[name] = col.astype(object).map(_number)
    return frame


def _number(cell: Any) -> Any:
    """A text cell that pandas reads as a number, as that number (int when it is one); others as they are."""
    if not isinstance(cell, str):
        return cell
    text = cell.strip()
    if _INT_TEXT.fullmatch(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return cell


def _parquet_pieces(path: str, chunk_rows: int, id_column: str | None) -> Iterator[Piece]:
    """DATA, a Parquet file, read a record batch of ``chunk_rows`` rows at a time (ids: row numbers from 0)."""
    try:
        import pyarrow.parquet as pq  # the optional Parquet reader, asked for here only
    except ImportError:
        raise MissingDependencyError("Reading Parquet needs pyarrow, which is not installed: "
                                     "pip install 'kcxai[parquet]'.") from None
    try:
        source = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises its own ArrowInvalid, OSError, ...
        raise InvalidInputError(f"DATA file {path!r} is not a readable Parquet file: {e}") from None
    start = 0
    for batch in source.iter_batches(batch_size=chunk_rows):
        frame = batch.to_pandas()
        ids = list(range(start, start + len(frame)))
        start += len(frame)
        yield Piece(_with_ids(frame, ids, id_column, path), [None] * len(frame))


def _with_ids(frame: Any, positions: list[Any], id_column: str | None, path: str) -> Any:
    """``frame`` indexed by its ``id_column`` (taken out of the columns), else by ``positions``."""
    if id_column is None:
        return frame.set_axis(positions)
    if id_column not in frame.columns:
        raise InvalidInputError(f"'--id' must name a column of DATA {path!r}. Got {id_column!r}; the columns are "
                                f"{[str(c) for c in frame.columns][:20]}.")
    return frame.set_index(id_column, drop=True)


def read_pieces(path: str, chunk_rows: int = CHUNK_ROWS, id_column: str | None = None) -> Iterator[Piece]:
    """DATA (a CSV file, or Parquet when its name ends in ``.parquet``) in chunks of ``chunk_rows`` rows: only
    one chunk is held at a time."""
    if not os.path.exists(path):
        raise InvalidInputError(f"DATA file {path!r} does not exist.")
    if path.lower().endswith(".parquet"):
        return _parquet_pieces(path, chunk_rows, id_column)
    return _csv_pieces(path, chunk_rows, id_column)


# -- writing as it goes ---------------------------------------------------------------------------------------


#: The columns written: ``id``, ``line`` (the row's line in a CSV DATA file), then
#: :meth:`kcxai.ExplanationSet.to_frame`'s.
COLUMNS = ("id", "line", *FRAME_COLUMNS[1:])


#: Formats whose output a rerun can append to (``--resume``).
RESUMABLE = ("csv", "jsonl")


class _Writer:
    """Writes the output a chunk at a time. CSV and JSON Lines go straight to ``--out`` (flushed after each
    chunk, so that an interrupted run leaves whole rows a rerun can resume from); JSON and Parquet to a
    temporary file that replaces ``--out`` when every row is written."""

    def __init__(self, out: str, kind: str, append: bool, classes: Any) -> None:
        self.out, self.kind, self.classes = out, kind, classes
        self.rows = 0
        self._stack = ExitStack()
        if kind in RESUMABLE:
            self._fh: IO[Any] = self._stack.enter_context(open(out, "a" if append else "w", encoding="utf-8",
                                                              newline=""))
            self._header = not (append and self._fh.tell() > 0)
        else:
            self._fh = self._stack.enter_context(atomic_writer(out, binary=kind == "parquet"))
            self._header = True
        self._parquet: Any = None

    def write(self, frame: Any) -> None:
        if self.kind == "csv":
            frame.to_csv(self._fh, header=self._header, index=False)
        elif self.kind == "jsonl":
            self._fh.writelines(json.dumps(_record(row), allow_nan=False) + "\n"
                                for row in frame.to_dict(orient="records"))
        elif self.kind == "json":
            self._fh.writelines(("[\n" if self._header and not k else ",\n") + json.dumps(_record(row),
                                                                                           allow_nan=False)
                                for k, row in enumerate(frame.to_dict(orient="records")))
        else:
            self._write_parquet(frame)
        self._header = self._header and len(frame) == 0
        self.rows += len(frame)
        self._fh.flush()

    def _write_parquet(self, frame: Any) -> None:
        import pyarrow as pa  # the optional Parquet writer (checked by output_format)
        import pyarrow.parquet as pq

        if self._parquet is None:
            self._parquet = pq.ParquetWriter(self._fh, _parquet_schema(frame, self.classes))
        self._parquet.write_table(pa.Table.from_pandas(frame, schema=self._parquet.schema, preserve_index=False))

    def close(self, ok: bool) -> None:
        """Finish the file (``ok``: every row was written; else an atomic output keeps what it replaced)."""
        try:
            if ok and self.kind == "csv" and self._header:  # no rows: the header alone
                self._fh.write(",".join(COLUMNS) + "\n")
            if ok and self.kind == "json":
                self._fh.write("[]\n" if self._header else "\n]\n")
            if ok and self.kind == "parquet":
                if self._parquet is None:
                    import pandas as pd  # loaded when a table is written

                    self._write_parquet(pd.DataFrame({c: [] for c in COLUMNS}))
                self._parquet.close()
        finally:
            if ok:
                self._stack.close()
            else:
                self._stack.__exit__(RuntimeError, RuntimeError("not finished"), None)


def _record(row: dict[Any, Any]) -> dict[str, Any]:
    return {str(k): _json_value(v) for k, v in row.items()}


def _parquet_schema(frame: Any, classes: Any) -> Any:
    """The output's Parquet schema: fixed types, so that a chunk whose column is all missing still fits."""
    import pyarrow as pa  # the optional Parquet writer (checked by output_format)

    ids = [i for i in frame["id"].tolist() if i is not None and i == i]
    types = {"id": pa.array(ids).type if ids else pa.int64(), "line": pa.int64(),
             "prediction": pa.array(list(classes)).type, "size": pa.int64(), "oracle_calls": pa.int64(),
             "approximate": pa.bool_(), "sampled": pa.int64()}
    for c in ("delta", "precision_bound", "error", "precision", "coverage", "confidence", "seconds", "interval_low",
              "interval_high", "error_low", "error_high", "certified"):
        types[c] = pa.float64()
    return pa.schema([(c, types.get(c, pa.string())) for c in COLUMNS])


def _done(out: str, kind: str) -> tuple[set[str], set[int]]:
    """The ids and lines of the rows an earlier run wrote to ``out`` (a partly written last line is cut off)."""
    if not os.path.exists(out) or os.path.getsize(out) == 0:
        return set(), set()
    with open(out, "rb+") as fh:  # an interrupted write may have left half a line: drop it
        data_end = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, data_end - (1 << 20)))
        tail = fh.read()
        cut = tail.rfind(b"\n")
        fh.truncate(data_end - len(tail) + cut + 1 if cut >= 0 else 0)
    ids: set[str] = set()
    lines: set[int] = set()
    if kind == "csv":
        import pandas as pd  # loaded when a table is read

        try:
            written = pd.read_csv(out, usecols=["id", "line"], dtype=str, keep_default_na=False)
        except (ValueError, pd.errors.ParserError) as e:
            raise InvalidInputError(f"'--resume': {out!r} is not the output of an earlier run: {e}") from None
        ids.update(written["id"])
        lines.update(int(x) for x in written["line"] if x)
    else:
        with open(out, encoding="utf-8") as fh:
            for k, text in enumerate(fh, 1):
                try:
                    row = json.loads(text)
                    rid, line = row["id"], row["line"]
                except (ValueError, KeyError, TypeError) as e:
                    raise InvalidInputError(f"'--resume': line {k} of {out!r} is not a row an earlier run wrote: "
                                            f"{e}") from None
                ids.add("" if rid is None else str(rid))
                if line is not None:
                    lines.add(int(line))
    ids.discard("")
    return ids, lines


# -- the command --------------------------------------------------------------------------------------------


def explain_csv(args: argparse.Namespace) -> int:
    """Run ``kcxai explain-csv`` (see :func:`add_subparser`)."""

    kind = output_format(args.out)  # an unsupported name, or Parquet without pyarrow: refused before any work
    if args.resume and kind not in RESUMABLE:
        raise InvalidInputError(f"'--resume' needs a .csv or .jsonl --out (rows appended as they are written). "
                                f"Got {args.out!r} ({kind}) instead.")
    m, bound = resolve_method(args.method, delta=args.delta, precision=args.precision)  # before reading DATA
    model = load_cli_model(args.model, None)
    pieces = read_pieces(args.data, args.chunk_rows, args.id)
    explainer = kcxai.Explainer(model, language=args.language, fit_budget=fit_budget_of(args))
    given = method_options(args)  # max_seconds, inflate, as the command line gave them
    engine = explainer.engine_for(m.name, **{m.bound: bound})
    done_ids, done_lines = _done(args.out, kind) if args.resume else (set(), set())
    writer = _Writer(args.out, kind, bool(args.resume), model.classes)
    counts = {"explained": 0, "failed": 0, "skipped": 0, "sampled": 0}
    to_prove: dict[str, None] = {}  # the options that would prove more of the sampled rows
    ok = False
    try:
        with _cluster(args.scheduler) as n_jobs:
            args.n_jobs = n_jobs or args.n_jobs
            _run(explainer, pieces, writer, args, m.name, {m.bound: bound, **given}, done_ids, done_lines, counts,
                 to_prove)
        ok = True
    except WorkerError as e:
        raise WorkerError(f"{e} {writer.rows} rows were written to {args.out}; run the same command with --resume "
                          "to explain the rest.", chunk=e.chunk, first=e.first, last=e.last) from e
    finally:
        writer.close(ok)
    failed = f", {counts['failed']} failed (see the 'failure' column)" if counts["failed"] else ""
    skipped = f"; {counts['skipped']} rows already written were kept" if counts["skipped"] else ""
    total = counts["explained"] + counts["failed"]
    sampled = "" if not counts["sampled"] else (
        f"; {counts['sampled']} of {total} rows sampled some decisions (the 'missed' column says why; "
        f"{', '.join(to_prove)} would prove more)")
    print(f"explained {counts['explained']} of {total} rows with {m.name} via {engine.language} "
          f"({engine.reason}){failed}{skipped}{sampled}; wrote {args.out} ({kind})", file=sys.stderr)
    return 0


@contextmanager
def _cluster(address: str | None) -> Iterator[int | None]:
    """With ``address``, a client of that Dask scheduler as joblib's backend (and ``n_jobs=-1``: every worker)."""
    if address is None:
        yield None
        return
    try:
        import joblib  # loaded when workers are asked for
        from distributed import Client  # the optional Dask cluster, asked for here only
    except ImportError:
        raise MissingDependencyError("'--scheduler' needs dask.distributed, which is not installed: "
                                     "pip install 'kcxai[dask]'.") from None
    try:
        client = Client(address, timeout=30)
    except (OSError, TimeoutError) as e:
        raise InvalidInputError(f"'--scheduler': no Dask scheduler answered at {address!r}: {e}") from None
    with client, joblib.parallel_config(backend="dask"):
        yield -1


def _run(explainer: Any, pieces: Iterator[Piece], writer: _Writer, args: argparse.Namespace, method: str,
         bound: dict[str, Any], done_ids: set[str], done_lines: set[int], counts: dict[str, int],
         to_prove: dict[str, None]) -> None:
    """Explain the pieces' rows not written yet and write them, each table as soon as it is explained; count the
    rows with sampled decisions and keep the options that would prove more of them (``to_prove``)."""
    import pandas as pd  # loaded when a table is read

    read: deque[tuple[list[int | None], list[tuple[Any, int, str]]]] = deque()
    held: list[tuple[Any, int, str]] = []  # unparsed lines of pieces with nothing left to explain

    def tables() -> Iterator[Any]:
        for piece in pieces:
            bad = held + [b for b in piece.bad if b[1] not in done_lines]
            held.clear()
            if bad and args.on_error == "raise":
                raise InvalidInputError(f"DATA file {args.data!r}, line {bad[0][1]}: {bad[0][2]} (--on-error report: "
                                        "reported in "
                                        "the 'failure' column, the other rows explained).")
            frame, lines = piece.frame, piece.lines
            if done_ids and len(frame):
                keep = [str(rid) not in done_ids for rid in frame.index]
                counts["skipped"] += len(keep) - sum(keep)
                frame, lines = frame[keep], [k for k, y in zip(lines, keep) if y]
            if not len(frame):
                held.extend(bad)
                continue
            read.append((lines, bad))
            yield frame

    for result in explainer.explain_batches(tables(), method=method, n_jobs=args.n_jobs, progress=args.progress,
                                            on_error=args.on_error, **bound):
        lines, bad = read.popleft()
        _write(writer, _table(result, lines, bad, pd), counts)
        for e in result.explanations:
            if e.decided == "sampled":
                counts["sampled"] += 1
                to_prove.update(dict.fromkeys(missed_options(e.missed)))
    if held:
        _write(writer, _table(None, [], held, pd), counts)


def _table(result: Any, lines: list[int | None], bad: list[tuple[Any, int, str]], pd: Any) -> Any:
    """The rows of one table to write: ``result``'s, with each row's line (failures start ``line N:``) and the
    lines that did not parse in their places."""
    frame = pd.DataFrame(columns=list(COLUMNS)) if result is None else result.to_frame()
    if result is not None:
        frame.insert(1, "line", pd.array(lines, dtype="Int64"))
        failed = frame["failure"].notna() & frame["line"].notna()
        frame.loc[failed, "failure"] = ["line " + str(k) + ": " + str(f) for k, f in
                                        zip(frame["line"][failed], frame["failure"][failed])]
    if not bad:
        return frame
    unparsed = pd.DataFrame([{"id": rid, "line": k, "failure": f"line {k}: ParseError: {msg}", "bounds": None}
                             for rid, k, msg in bad], columns=list(COLUMNS))
    both = pd.concat([frame, unparsed], ignore_index=True) if len(frame) else unparsed
    return both.sort_values("line", kind="stable").reset_index(drop=True)


def _write(writer: _Writer, frame: Any, counts: dict[str, int]) -> None:
    writer.write(frame)
    n_failed = int(frame["failure"].notna().sum())
    counts["failed"] += n_failed
    counts["explained"] += len(frame) - n_failed

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
    p.add_argument("data", metavar="DATA", help="a CSV file whose header names the model's features (or a "
                                                "Parquet file: a name ending in .parquet)")
    p.add_argument("--out", "-o", required=True, type=_out,
                   help="output file: .csv, .parquet (needs pyarrow), .json or .jsonl")
    add_method_args(p)
    add_fit_budget_arg(p)
    p.add_argument("--language", "-l", default=None, help="force the engine (default: chosen for the method and "
                                                           "bound, see docs/explainer.md)")
    p.add_argument("--n-jobs", "-j", type=int, default=None, help="joblib workers (-1: all cores; default 1)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="a Dask scheduler's address (tcp://host:8786): the chunks run on that cluster, the model "
                        "sent to each worker once (needs pip install 'kcxai[dask]')")
    p.add_argument("--on-error", choices=("raise", "report"), default="raise",
                   help="'report': rows that cannot be explained get a 'failure' entry, the others are explained")
    p.add_argument("--progress", action="store_true", help="show a progress bar on stderr (rows and rows/s)")
    p.add_argument("--id", default=None, metavar="COLUMN",
                   help="the column of DATA that names each row (written as 'id'; default: the row's number "
                        "from 0, header excluded)")
    p.add_argument("--chunk-rows", type=positive_int, default=CHUNK_ROWS, metavar="N",
                   help=f"rows read, explained and written at a time (default {CHUNK_ROWS}): what bounds memory")
    p.add_argument("--resume", action="store_true",
                   help="append to --out (.csv or .jsonl) the rows it does not hold yet (by 'id': the --id column's "
                        "values must then be unique), after an interrupted run")
    p.set_defaults(func=explain_csv)
