"""Running one explanation method over many instances: in process, or in joblib workers.

Work is cut into chunks of rows; each joblib task explains one chunk. A task carries the kcxai model
(plain Python, picklable), never a compiled diagram (pysdd / CUDD objects cannot be pickled): a
worker compiles the model once and keeps the compiled form for the explainer's later tasks, keyed by a
token. The parent process registers its own compiled form under the same token, so the sequential
and threading backends reuse it without recompiling.

A failure on one row becomes a :class:`~kcxai.explanation_set.RowFailure` for that row with
``on_error="report"``; with ``on_error="raise"`` it stops the batch with an error naming the row.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError, KcxaiError
from kcxai.explanation_set import Row, RowFailure
from kcxai.space import Probability

__all__ = ["Job", "run", "register", "ON_ERROR"]

#: Accepted values of ``on_error``.
ON_ERROR = ("raise", "report")

_COMPILED: "OrderedDict[str, Any]" = OrderedDict()
_CACHE_SIZE = 8


def register(token: str, compiled: Any) -> None:
    """Keep ``compiled`` for tasks carrying ``token`` (in this process; the last few are kept)."""
    _COMPILED[token] = compiled
    _COMPILED.move_to_end(token)
    while len(_COMPILED) > _CACHE_SIZE:
        _COMPILED.popitem(last=False)


def _compiled(job: "Job") -> Any:
    found = _COMPILED.get(job.token)
    if found is None:
        from kcxai.compilers import compile_model

        found = compile_model(job.model, job.language, **job.compile_options)
        register(job.token, found)
    return found


@dataclass(frozen=True)
class Job:
    """What a task needs besides its rows: the model, how to compile it, what to run."""

    token: str
    model: Any
    language: str
    compile_options: dict[str, Any]
    method: str
    delta: Any
    options: dict[str, Any] = field(default_factory=dict)
    on_error: str = "raise"


def _coverage(space: Any, instance: Sequence[Any], e: Any) -> Probability | None:
    cov = getattr(e, "coverage", None)  # Explanation.coverage, where the explainers report it
    if cov is not None:
        return cov  # type: ignore[no-any-return]
    if e.kind != "relevant":
        return None
    try:
        point = space.encode(instance)
        return space.probability(space.consistent_weight(point, e.features))  # type: ignore[no-any-return]
    except (AttributeError, TypeError):  # a distribution without a product form
        return None


def explain_chunk(job: Job, rows: Sequence[tuple[Any, tuple[Any, ...]]]) -> list[tuple[Row, Probability | None]]:
    """Explain ``rows`` (``(id, instance)`` pairs): the task each worker runs."""
    from kcxai._methods import resolve_method

    compiled = _compiled(job)
    method, delta = resolve_method(job.method, job.delta)
    fast = _fast_path(compiled, job, delta, rows)
    if fast is not None:
        return fast
    space = compiled.model.space
    out: list[tuple[Row, Probability | None]] = []
    for rid, inst in rows:
        try:
            e = method.function(compiled, inst, delta, **job.options)
        except Exception as err:  # one row's failure is that row's (see the module docstring)
            if job.on_error == "raise":
                if isinstance(err, KcxaiError):
                    named = type(err)(f"row {rid!r}: {err}")
                    named.__dict__.update(err.__dict__)  # e.g. SearchLimitError's limit, seconds
                    raise named from err
                raise
            out.append((RowFailure(rid, tuple(inst), type(err).__name__, str(err)), None))
            continue
        if method.name != e.method:  # "axp" / "cxp" run min_idrs / min_dual_idrs with delta 0
            from dataclasses import replace

            e = replace(e, method=method.name)
        out.append((e, _coverage(space, inst, e)))
    return out


def _fast_path(compiled: Any, job: Job, delta: Any, rows: Sequence[tuple[Any, tuple[Any, ...]]]
               ) -> list[tuple[Row, Probability | None]] | None:
    """The grouped tree path for min_idrs / axp on the dt language, where it applies."""
    if job.language != "dt" or job.method not in ("min_idrs", "axp"):
        return None
    if job.options and (set(job.options) != {"start"} or not isinstance(job.options["start"], str)
                        or job.options["start"] != "path"):
        return None
    from kcxai.explain._tree_batch import TreeBatch

    batch = TreeBatch.for_compiled(compiled)
    if batch is None:
        return None
    return batch.min_idrs_rows(rows, delta, method=job.method, start=job.options.get("start"),
                               on_error=job.on_error)


def check_n_jobs(n_jobs: Any) -> int | None:
    """``None``, or a non-zero int (``-1``: all cores)."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise InvalidTypeError(f"'n_jobs' must be None or a non-zero int (-1 for all cores). Got {n_jobs!r} instead.")
    return n_jobs


def run(job: Job, rows: Sequence[tuple[Any, tuple[Any, ...]]], *, n_jobs: int | None, progress: bool,
        chunk_size: int | None = None) -> list[tuple[Row, Probability | None]]:
    """Explain every row, in order; ``n_jobs`` > 1 or -1 spreads chunks over joblib workers."""
    if job.on_error not in ON_ERROR:
        raise InvalidInputError(f"'on_error' must be one of {list(ON_ERROR)}. Got {job.on_error!r} instead.")
    n_jobs = check_n_jobs(n_jobs)
    from tqdm.auto import tqdm

    bar = tqdm(total=len(rows), disable=not progress, unit="row", desc=job.method)
    try:
        if n_jobs in (None, 1):
            size = chunk_size or 256
            out: list[tuple[Row, Probability | None]] = []
            for k in range(0, len(rows), size):
                part = explain_chunk(job, rows[k:k + size])
                out += part
                bar.update(len(part))
            return out
        import joblib

        workers = joblib.cpu_count() if n_jobs < 0 else n_jobs
        size = chunk_size or max(1, min(1024, math.ceil(len(rows) / (4 * workers))))
        chunks = [rows[k:k + size] for k in range(0, len(rows), size)]
        parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator")
        out = []
        for part in parallel(joblib.delayed(explain_chunk)(job, c) for c in chunks):
            out += part
            bar.update(len(part))
        return out
    finally:
        bar.close()
