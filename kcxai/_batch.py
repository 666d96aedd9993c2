"""Running one explanation method over many instances: in process, or in joblib workers.

Work is cut into chunks of rows; each joblib task explains one chunk. A task carries the compiled
form the explainer chose (:class:`Job`); in process (sequential or threads) it is that very
object, and a worker process receives it pickled as its model, language and options and compiles
it once (:meth:`kcxai.compilers.CompiledModel.__reduce__`). A method that is Algorithm 1 in its default
form (:attr:`kcxai.explain._methods.Method.batch`) is answered by the oracle's batch hook when it has
one (:class:`~kcxai.oracle.BatchOracle`: the decision tree's), which keeps its own tables.

A failure on one row becomes a :class:`~kcxai.explanation_set.RowFailure` for that row with
``on_error="report"``; with ``on_error="raise"`` it stops the batch with an error naming the row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Union

from kcxai._errors import InvalidInputError, InvalidTypeError, KcxaiError
from kcxai._types import IdRow, MethodOptions, ProbabilityLike, RowId
from kcxai.compilers.compiled import CompiledModel
from kcxai.explain._door import explain_with
from kcxai.explain._methods import METHODS, Method
from kcxai.explain._query import build_explanation, check_delta
from kcxai.explain.explanation import Explanation
from kcxai.explanation_set import Lazy, PackedRow, Row, RowFailure, Unpacker, pack
from kcxai.oracle import BatchRow, has_batch

__all__ = ["Job", "run", "ON_ERROR", "check_n_jobs", "explain_chunk", "Done"]

#: What a task returns for a row: its explanation or failure, packed for the trip back from a worker process.
Sent = Union[Row, PackedRow]

#: What :func:`run` returns for a row: its explanation or failure, or one still packed (rebuilt when read).
Done = Union[Row, Lazy]

#: Accepted values of ``on_error``.
ON_ERROR = ("raise", "report")


@dataclass(frozen=True)
class Job:
    """What a task needs besides its rows: the compiled form answering, the method, its bound and options.

    Attributes
    ----------
    compiled : CompiledModel
    method : str
        A name in :data:`kcxai.explain._methods.METHODS`.
    bound : Fraction or float
        The method's ``delta`` or ``precision`` (its :attr:`~kcxai.explain._methods.Method.bound`).
    options : dict
        Passed to the method's function.
    on_error : {"raise", "report"}
    """

    compiled: CompiledModel
    method: str
    bound: ProbabilityLike
    options: MethodOptions = field(default_factory=dict)
    on_error: str = "raise"


def explain_chunk(job: Job, rows: Sequence[IdRow], *, packed: bool = False) -> list[Sent]:
    """Explain ``rows`` (``(id, instance)`` pairs): the task each worker runs. ``packed``: explanations are
    returned as :class:`~kcxai.explanation_set.PackedRow` (what a worker process sends back)."""
    out = _explain(job, rows)
    if not packed:
        return list(out)
    unpacker = Unpacker(job.compiled.model.space)
    return [pack(e, tuple(inst), unpacker) if isinstance(e, Explanation) else e for e, (_, inst) in zip(out, rows)]


def _named(rid: RowId, err: Exception) -> Exception:
    """``err`` with its message starting ``row <id>:`` (its other attributes kept, e.g. a time limit's)."""
    if not isinstance(err, KcxaiError):
        return err
    named = type(err)(f"row {rid!r}: {err}")
    named.__dict__.update(err.__dict__)  # e.g. SearchLimitError's limit, seconds
    return named


def _explain(job: Job, rows: Sequence[IdRow]) -> list[Row]:
    method = METHODS[job.method]
    batched = _batched(job, method, rows)
    if batched is not None:
        return batched
    out: list[Row] = []
    for rid, inst in rows:
        try:
            e = explain_with(method, job.compiled, inst, job.bound, **job.options)
        except Exception as err:  # one row's failure is that row's (see the module docstring)
            if job.on_error == "raise":
                named = _named(rid, err)
                if named is err:
                    raise
                raise named from err
            out.append(RowFailure(rid, tuple(inst), type(err).__name__, str(err)))
            continue
        out.append(e)
    return out


def _batched(job: Job, method: Method, rows: Sequence[IdRow]) -> list[Row] | None:
    """The rows answered by the oracle's batch hook (:class:`~kcxai.oracle.BatchOracle`), when the method is
    Algorithm 1 in its default form and the oracle has one that applies; else ``None``."""
    oracle = job.compiled.oracle
    start = job.options.get("start")
    default_form = (not set(job.options) - {"start", "max_seconds", "inflate"}
                    and job.options.get("inflate") is not True
                    and (start is None or (isinstance(start, str) and start == "path")))
    if not method.batch or not default_form or not has_batch(oracle):
        return None
    delta = check_delta(job.bound)
    got = oracle.min_idrs_batch([inst for _, inst in rows], delta, start)
    if got is None:
        return None
    space = job.compiled.model.space
    classes = job.compiled.model.classes
    literals: dict[tuple[int, int], str] = job.compiled.derived("literals", dict)

    def literal(f: int, k: int) -> str:
        lit = literals.get((f, k))
        if lit is None:
            lit = literals[(f, k)] = space.features[f].literal(k)
        return lit

    out: list[Row] = []
    for (rid, inst), r in zip(rows, got):
        if not isinstance(r, BatchRow):
            if job.on_error == "raise":
                raise _named(rid, r) from r
            out.append(RowFailure(rid, tuple(inst), type(r).__name__, str(r)))
            continue
        cons = space.consistent_weight(r.point, frozenset(r.fixed))
        out.append(build_explanation(
            space, r.point, r.fixed, instance=tuple(inst), prediction=classes[r.label], kind="relevant",
            method=method.name, language=job.compiled.language, calls=r.calls, seconds=r.seconds,
            error=space.probability(r.weight), precision=space.arith.complement(r.weight, cons),
            coverage=space.probability(cons), delta=delta, literal=literal))
    return out


def check_n_jobs(n_jobs: object) -> int | None:
    """``None``, or a non-zero int (``-1``: all cores)."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise InvalidTypeError(f"'n_jobs' must be None or a non-zero int (-1 for all cores). Got {n_jobs!r} instead.")
    return n_jobs


def run(job: Job, rows: Sequence[IdRow], *, n_jobs: int | None, progress: bool,
        chunk_size: int | None = None, packed: bool = True) -> list[Done]:
    """Explain every row, in order; ``n_jobs`` > 1 or -1 spreads chunks over joblib workers, which send the
    explanations back packed (:class:`~kcxai.explanation_set.PackedRow`): the result then holds them as
    :class:`~kcxai.explanation_set.Lazy` entries, rebuilt when an :class:`~kcxai.ExplanationSet` first reads them
    (``packed=False``: whole explanations, as before; kept for the benchmark)."""
    if job.on_error not in ON_ERROR:
        raise InvalidInputError(f"'on_error' must be one of {list(ON_ERROR)}. Got {job.on_error!r} instead.")
    n_jobs = check_n_jobs(n_jobs)
    from tqdm.auto import tqdm  # warns at import in a notebook without ipywidgets: only when a batch runs

    bar = tqdm(total=len(rows), disable=not progress, unit="row", desc=job.method)
    try:
        if n_jobs in (None, 1):
            size = chunk_size or 256
            out: list[Done] = []
            for k in range(0, len(rows), size):
                part = _explain(job, rows[k:k + size])
                out += part
                bar.update(len(part))
            return out
        import joblib  # about a second to import: loaded when workers are asked for

        workers = joblib.cpu_count() if n_jobs < 0 else n_jobs
        size = chunk_size or max(1, min(4096, math.ceil(len(rows) / (4 * workers))))
        chunks = [rows[k:k + size] for k in range(0, len(rows), size)]
        parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator")
        unpacker = Unpacker(job.compiled.model.space)
        out = []
        for chunk, part in zip(chunks, parallel(joblib.delayed(explain_chunk)(job, c, packed=packed) for c in chunks)):
            out += [Lazy(unpacker, r, tuple(inst)) if isinstance(r, PackedRow) else r
                    for r, (_, inst) in zip(part, chunk)]
            bar.update(len(part))
        return out
    finally:
        bar.close()
