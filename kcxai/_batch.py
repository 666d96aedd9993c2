"""Running one explanation method over many instances: in process, in joblib workers, or on a Dask cluster.

Work is cut into chunks of rows, sized from the number of workers that will run them (:func:`rows_per_chunk`:
about four chunks a worker, at most :data:`MAX_CHUNK` rows); each task explains one chunk. A task carries
the compiled form the explainer chose (:class:`Job`). In process (sequential or threads) it is that very
object; a worker process receives it pickled as its model, language and options and compiles it once
(:meth:`kcxai.compilers.CompiledModel.__reduce__`).

Where the work goes (:func:`session`):

- ``n_jobs`` ``None`` or 1: this process, in chunks of :data:`SERIAL_CHUNK` rows.
- otherwise the active joblib backend (``loky`` processes by default; ``threading``; ``ray`` once registered),
  with as many workers as it reports (:func:`joblib.effective_n_jobs`). Each task is sent the job with
  its rows.
- inside ``joblib.parallel_config(backend="dask")``, the Dask cluster of that backend's client, directly:
  the job is scattered to every worker once (``Client.scatter(..., broadcast=True)``) and each task is sent
  its rows only, at most :data:`WINDOW_PER_WORKER` chunks a worker in flight (bounded memory however many
  rows come).

Every random choice is seeded from the row (:func:`kcxai.engines.sampling.query_rng`), so each row's answer
is the same whichever way it runs, in any chunk and any order. A method that is Algorithm 1 in its
default form (:attr:`kcxai.explain._methods.Method.batch`) is answered by the oracle's batch hook when it
has one (:class:`~kcxai.oracle.BatchOracle`: the decision tree's), which keeps its own tables.

A failure on one row becomes a :class:`~kcxai.explanation_set.RowFailure` for that row with
``on_error="report"``; with ``on_error="raise"`` it stops the batch with an error naming the row. Workers
that fail (a killed process, a cluster that died) stop the batch with a :class:`~kcxai.WorkerError` naming
the chunk: every chunk before it was returned.
"""

from __future__ import annotations

import itertools
import math
import uuid
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, Union

from kcxai._errors import InvalidInputError, InvalidTypeError, KcxaiError, WorkerError
from kcxai._types import IdRow, MethodOptions, ProbabilityLike, RowId
from kcxai.compilers.compiled import CompiledModel
from kcxai.explain._door import explain_with
from kcxai.explain._methods import METHODS, Method
from kcxai.explain._query import build_explanation, check_delta
from kcxai.explain.explanation import Explanation
from kcxai.explanation_set import Lazy, PackedRow, Row, RowFailure, Unpacker, pack
from kcxai.oracle import BatchRow, answers_of, has_batch

__all__ = ["Job", "run", "ON_ERROR", "check_n_jobs", "check_on_error", "explain_chunk", "Done", "session", "Session",
           "rows_per_chunk", "stream_chunk", "chunks_of", "workers_of", "progress_bar", "MAX_CHUNK", "SERIAL_CHUNK",
           "CHUNKS_PER_WORKER", "WINDOW_PER_WORKER"]

#: What a task returns for a row: its explanation or failure, packed for the trip back from a worker process.
Sent = Union[Row, PackedRow]

#: What :func:`run` returns for a row: its explanation or failure, or one still packed (rebuilt when read).
Done = Union[Row, Lazy]

#: Rows a chunk holds: one task's work.
Chunk = Sequence[IdRow]

#: Accepted values of ``on_error``.
ON_ERROR = ("raise", "report")

#: Rows of a chunk explained in this process (the tree batch's block).
SERIAL_CHUNK = 256
#: Chunks per worker that :func:`rows_per_chunk` aims at (so that a slow chunk does not idle the others).
CHUNKS_PER_WORKER = 4
#: The most rows a chunk holds, whatever the batch.
MAX_CHUNK = 4096
#: Chunks in flight per worker on a Dask cluster (and per joblib round): what bounds a stream's memory.
WINDOW_PER_WORKER = 2


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


def _explain_packed(job: Job, rows: Sequence[IdRow]) -> list[Sent]:
    """:func:`explain_chunk` with packed rows: the task sent to a Dask worker."""
    return explain_chunk(job, rows, packed=True)


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
    inflate = job.options.get("inflate")
    if inflate is None:  # the door's default (the hook answers unwidened sets)
        inflate = method.widens_by_default(job.bound, answers_of(oracle))
    default_form = (not set(job.options) - {"start", "max_seconds", "inflate"} and not inflate
                    and (start is None or (isinstance(start, str) and start == "path")))
    if not method.batch or not default_form or not has_batch(oracle) or not rows:
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


# -- where the chunks run -----------------------------------------------------------------------------------


def workers_of(n_jobs: int | None) -> int:
    """How many workers run a batch: 1 in process (``n_jobs`` ``None`` or 1), else what the active joblib
    backend gives ``n_jobs`` (on a Dask cluster: every worker thread of the cluster)."""
    if n_jobs in (None, 1):
        return 1
    import joblib  # about a second to import: loaded when workers are asked for

    return max(1, int(joblib.effective_n_jobs(n_jobs)))


def rows_per_chunk(n_rows: int, workers: int) -> int:
    """Rows per chunk for ``n_rows`` rows on ``workers`` workers: :data:`CHUNKS_PER_WORKER` chunks a worker,
    at least one row and at most :data:`MAX_CHUNK`.

    Examples
    --------
    >>> rows_per_chunk(10_000, 2), rows_per_chunk(1_000_000, 64), rows_per_chunk(3, 8)
    (1250, 3907, 1)
    """
    return max(1, min(MAX_CHUNK, math.ceil(n_rows / (CHUNKS_PER_WORKER * workers))))


def stream_chunk(n_rows: int, workers: int) -> int:
    """Rows per chunk for a table of ``n_rows`` rows of a stream (:meth:`kcxai.Explainer.explain_batches`): as
    :func:`rows_per_chunk`, but at least :data:`SERIAL_CHUNK` rows (or the whole table), since the next tables'
    chunks keep the other workers busy: a 10,000-row table on 64 workers is 40 chunks of about 256 rows, not 250 of 40.

    Examples
    --------
    >>> stream_chunk(10_000, 2), stream_chunk(10_000, 64), stream_chunk(8, 2)
    (1250, 256, 8)
    """
    return max(min(SERIAL_CHUNK, n_rows), rows_per_chunk(n_rows, workers))


def _dask_client() -> Any:
    """The ``distributed.Client`` of the active joblib backend when it is Dask's, else ``None``."""
    from joblib.parallel import get_active_backend  # joblib: loaded when workers are asked for

    backend, _ = get_active_backend()
    return getattr(backend, "client", None) if type(backend).__name__ == "DaskDistributedBackend" else None


def _failed(k: int, chunk: Chunk, err: BaseException, where: str, chunks: int = 1) -> WorkerError:
    """The error of chunk ``k`` (of ``chunks`` chunks from ``k`` on, their rows ``chunk``, when which of them
    failed is not known) whose workers failed with ``err``."""
    first, last = (chunk[0][0], chunk[-1][0]) if chunk else (None, None)
    rows = f"rows {first!r} to {last!r}, {len(chunk)} row{'s' if len(chunk) > 1 else ''}" if chunk else "no rows"
    which = f"chunk {k}" if chunks == 1 else f"one of chunks {k} to {k + chunks - 1}"
    return WorkerError(f"{which} ({rows}) failed on {where}: {type(err).__name__}: {err}. The chunks before it "
                       "were returned.", chunk=k, first=first, last=last)


class Session(Protocol):
    """Where a batch's chunks run (see :func:`session`)."""

    #: How many workers run the chunks (1 in process).
    workers: int
    #: What the chunks run on: ``"this process"``, ``"joblib (loky)"``, ``"a Dask cluster (direct)"``, ...
    where: str

    def map(self, chunks: Iterable[Chunk]) -> Iterator[list[Done]]:
        """Each chunk's rows explained, in order (packed rows from workers as :class:`Lazy` entries).
        ``chunks`` is read as the work goes (no more than a window ahead of the results)."""
        ...


class _InProcess:
    """Chunks explained in this process, one after another."""

    workers = 1
    where = "this process"

    def __init__(self, job: Job) -> None:
        self.job = job

    def map(self, chunks: Iterable[Chunk]) -> Iterator[list[Done]]:
        for chunk in chunks:
            yield list(_explain(self.job, chunk))


def _unpacked(unpacker: Unpacker, part: list[Sent], chunk: Chunk) -> list[Done]:
    return [Lazy(unpacker, r, tuple(inst)) if isinstance(r, PackedRow) else r for r, (_, inst) in zip(part, chunk)]


class _Source:
    """The chunks of a batch, read ahead of its results: an error while reading them (a table of a stream that
    does not read) ends the chunks and is kept, for :meth:`raise_error` to raise once the chunks before it were
    returned, as one process raises it."""

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self._chunks = iter(chunks)
        self.error: Exception | None = None

    def __iter__(self) -> Iterator[Chunk]:
        return self

    def __next__(self) -> Chunk:
        if self.error is not None:
            raise StopIteration
        try:
            return next(self._chunks)
        except StopIteration:
            raise
        except Exception as err:
            self.error = err
            raise StopIteration from None

    def raise_error(self) -> None:
        if self.error is not None:
            raise self.error


class _Joblib:
    """Chunks sent to the active joblib backend's workers, the job with each, as one stream: joblib dispatches
    :data:`WINDOW_PER_WORKER` chunks a worker at the start (``pre_dispatch``) and the next chunk as soon as one
    returns, so no worker waits for the slowest chunk of a round; the chunks are read about one chunk a worker
    beyond that window (joblib's own queue)."""

    def __init__(self, job: Job, parallel: Any, workers: int, packed: bool) -> None:
        import joblib  # loaded when workers are asked for

        self.job, self.parallel, self.workers, self.packed = job, parallel, workers, packed
        self._delayed = joblib.delayed(_guarded)
        self._unpacker = Unpacker(job.compiled.model.space)
        from joblib.parallel import get_active_backend  # joblib: loaded when a batch runs in parallel

        backend = type(get_active_backend()[0]).__name__.replace("Backend", "")
        self.where = f"joblib workers ({backend}, {workers})"

    def map(self, chunks: Iterable[Chunk]) -> Iterator[list[Done]]:
        sent: deque[Chunk] = deque()  # chunks dispatched and not yet returned, in order
        source = _Source(chunks)

        def tasks() -> Iterator[Any]:
            for chunk in source:
                sent.append(chunk)
                yield self._delayed(self.job, chunk, self.packed)

        k = 0
        results = self.parallel(tasks())
        try:
            for part, err in results:
                chunk = sent.popleft()
                if err is not None:  # raised in the task: this chunk's, named in order
                    if isinstance(err, KcxaiError):
                        raise err
                    raise _failed(k, chunk, err, self.where) from err
                yield _unpacked(self._unpacker, part, chunk)
                k += 1
        except KcxaiError:
            raise
        except Exception as err:  # the pool itself failed (a worker process killed): which chunk is not said
            pending = list(sent)  # joblib's thread may still add one chunk: a copy, not the deque it changes
            raise _failed(k, [row for c in pending for row in c], err, self.where, chunks=max(1, len(pending))) from err
        finally:
            close = getattr(results, "close", None)
            if close is not None:  # a stream left early: joblib stops dispatching its chunks
                with warnings.catch_warnings():  # its count of the tasks done and not read, or cancelled: the
                    warnings.filterwarnings("ignore", category=UserWarning, module=r"joblib\.")  # caller's choice
                    close()
        source.raise_error()


def _guarded(job: Job, rows: Sequence[IdRow], packed: bool) -> tuple[list[Sent] | None, Exception | None]:
    """:func:`explain_chunk`, with what it raises returned (the task sent to joblib workers: the parent raises
    it in chunk order, so the error names its own chunk whichever task failed first)."""
    try:
        return explain_chunk(job, rows, packed=packed), None
    except Exception as err:
        return None, err


class _Dask:
    """Chunks sent to a Dask cluster directly: the job scattered to every worker once, each task its rows;
    :data:`WINDOW_PER_WORKER` chunks a worker in flight."""

    def __init__(self, job: Job, client: Any) -> None:
        self.client = client
        self.workers = max(1, sum(client.nthreads().values()))
        self.where = f"a Dask cluster ({client.scheduler.address}, {self.workers} worker threads)"
        self._job = client.scatter(job, broadcast=True, hash=False)  # once per worker, not per chunk
        self._unpacker = Unpacker(job.compiled.model.space)
        self._batch = uuid.uuid4().hex

    def map(self, chunks: Iterable[Chunk]) -> Iterator[list[Done]]:
        read = _Source(chunks)
        source = enumerate(read)
        window = WINDOW_PER_WORKER * self.workers
        pending: deque[tuple[int, Chunk, Any]] = deque()

        def submit(k: int, chunk: Chunk) -> None:
            key = f"kcxai-chunk-{self._batch}-{k}"
            pending.append((k, chunk, self.client.submit(_explain_packed, self._job, chunk, key=key, pure=False)))

        for k, chunk in itertools.islice(source, window):
            submit(k, chunk)
        try:
            while pending:
                k, chunk, future = pending.popleft()
                try:
                    part = future.result()
                except KcxaiError:
                    raise
                except Exception as err:  # a worker or the cluster died (KilledWorker, CancelledError, ...)
                    raise _failed(k, chunk, err, self.where) from err
                for nk, nchunk in itertools.islice(source, 1):
                    submit(nk, nchunk)
                yield _unpacked(self._unpacker, part, chunk)
        finally:
            for _, _, future in pending:
                future.cancel()
        read.raise_error()

    def close(self) -> None:
        try:
            self._job.release()
        except Exception:  # pragma: no cover - the cluster is gone: nothing to release
            pass


@contextmanager
def session(job: Job, n_jobs: int | None, *, packed: bool = True, direct: bool = True) -> Iterator[Session]:
    """Where ``job``'s chunks run, kept open for several :meth:`Session.map` calls (one pool, one scatter).

    ``n_jobs`` ``None`` or 1: this process. Otherwise the active joblib backend; a Dask one is used through its
    client directly (``direct=False``: through joblib, the job pickled with every chunk; kept to measure).
    ``packed=False``: workers send whole explanations (kept for the benchmark).
    """
    if n_jobs in (None, 1):
        yield _InProcess(job)
        return
    import joblib  # about a second to import: loaded when workers are asked for

    client = _dask_client() if direct else None
    if client is not None:
        dask = _Dask(job, client)
        try:
            yield dask
        finally:
            dask.close()
        return
    workers = workers_of(n_jobs)
    pre_dispatch = WINDOW_PER_WORKER * workers
    with warnings.catch_warnings():
        # loky restarts a worker whose memory grew by 300 MB after its first task (a second compiled form, say
        # a bounded one, is that large) and warns that it stopped with jobs queued: they run on the new worker,
        # with the same answers, so the warning only alarms
        warnings.filterwarnings("ignore", message="A worker stopped while some jobs were given", category=UserWarning)
        with joblib.Parallel(n_jobs=n_jobs, return_as="generator", pre_dispatch=pre_dispatch,
                             batch_size=1) as parallel:
            yield _Joblib(job, parallel, workers, packed)


def chunks_of(rows: Sequence[IdRow], size: int) -> list[Chunk]:
    """``rows`` cut into chunks of ``size`` rows (one empty chunk for no rows)."""
    return [rows[k:k + size] for k in range(0, len(rows), size)] or [rows[:0]]


def run(job: Job, rows: Sequence[IdRow], *, n_jobs: int | None, progress: bool,
        chunk_size: int | None = None, packed: bool = True, direct: bool = True) -> list[Done]:
    """Explain every row, in order; ``n_jobs`` > 1 or -1 spreads chunks over workers (see :func:`session`),
    which send the explanations back packed (:class:`~kcxai.explanation_set.PackedRow`): the result then
    holds them as :class:`~kcxai.explanation_set.Lazy` entries, rebuilt when an :class:`~kcxai.ExplanationSet`
    first reads them (``packed=False``: whole explanations; kept for the benchmark)."""
    check_on_error(job.on_error)
    n_jobs = check_n_jobs(n_jobs)
    with progress_bar(len(rows), progress, job.method) as tick, \
            session(job, n_jobs, packed=packed, direct=direct) as s:
        size = chunk_size or (SERIAL_CHUNK if n_jobs in (None, 1) else rows_per_chunk(len(rows), s.workers))
        out: list[Done] = []
        for part in s.map(chunks_of(rows, size)):
            out += part
            tick(len(part))
        return out


def check_on_error(on_error: str) -> None:
    """``on_error`` is one of :data:`ON_ERROR`."""
    if on_error not in ON_ERROR:
        raise InvalidInputError(f"'on_error' must be one of {list(ON_ERROR)}. Got {on_error!r} instead.")


@contextmanager
def progress_bar(total: int | None, progress: bool, desc: str) -> Iterator[Callable[[int], None]]:
    """A progress bar in rows (its rate in rows/s), as a function that advances it."""
    from tqdm.auto import tqdm  # warns at import in a notebook without ipywidgets: only when a batch runs

    bar = tqdm(total=total, disable=not progress, unit="row", unit_scale=True, desc=desc, smoothing=0.1)
    try:
        yield bar.update
    finally:
        bar.close()
