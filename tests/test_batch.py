"""Batches (kcxai/_batch.py) and the compact rows workers send back (kcxai/explanation_set.py).

A packed row rebuilt by the parent equals the worker's explanation in every field (the time too), for
every kind of result: I-delta and C-delta sets, widened conditions, dual sets, delta = 0 decisions,
certified estimates, float distributions; a batch over joblib workers (threads here; the loky processes
are in test_explainer.py) gives the sequential explanations in order.
"""

from __future__ import annotations

import pickle
from fractions import Fraction
from typing import Any

import joblib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai import Explainer
from kcxai._errors import InvalidInputError
from kcxai._batch import Job, explain_chunk, run
from kcxai.explanation_set import ExplanationSet, Lazy, PackedRow, Unpacker, pack
from tests._support.model_strategies import forests
from tests._support.strategies import instance_of, points, tree_and_instance


def _round_trip(e: Any, instance: Any, space: Any) -> Any:
    packed = pack(e, tuple(instance), Unpacker(space))
    assert isinstance(packed, PackedRow)
    blob = pickle.dumps(packed)
    assert b"Fraction" not in blob and b"Interval" not in blob  # only ints, strings and tuples travel
    return Unpacker(space)(pickle.loads(blob), tuple(instance))


@settings(max_examples=40)
@given(ti=tree_and_instance(distributions=("uniform", "exact", "mixture", "float")))
def test_packed_rows_rebuild_every_kind_of_explanation(ti: Any) -> None:
    tree, inst = ti
    space = tree.space
    found = [kcxai.min_idrs(tree, inst, Fraction(1, 20)), kcxai.min_idrs(tree, inst, 0, start="path"),
             kcxai.local_cdrs(tree, inst, Fraction(9, 10))]
    for delta in (0, Fraction(1, 10)):
        try:
            found.append(kcxai.min_dual_idrs(tree, inst, delta))
        except InvalidInputError:  # no dual set (e.g. every point has the class)
            pass
    if space.is_exact:
        found.append(kcxai.local_cdrs(tree, inst, Fraction(9, 10), inflate=True))
    for e in found:
        assert _round_trip(e, inst, space) == e
        assert _round_trip(e, inst, space).seconds == e.seconds


@settings(max_examples=10, deadline=None)
@given(forest=forests(max_trees=3), data=st.data())
def test_packed_rows_rebuild_estimates_and_decisions(forest: Any, data: Any) -> None:
    inst = instance_of(forest.space, data.draw(points(forest.space)))
    for lang, delta in (("sampling", Fraction(1, 10)), ("sat", 0)):
        e = kcxai.min_idrs(kcxai.compile_model(forest, lang), inst, delta)
        assert _round_trip(e, inst, forest.space) == e


def test_a_row_whose_values_are_not_the_space_is_sent_whole() -> None:
    tree = kcxai.datasets.running_example_tree()
    v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    e = kcxai.min_idrs(tree, v, 0.03, start="path")
    odd = type(e)(**{**e.__dict__, "literals": ("x1 is one", "x9 is one")})
    assert pack(odd, v, Unpacker(tree.space)) is odd


def _job(method: str = "min_idrs", bound: Any = Fraction(1, 20), **options: Any) -> Job:
    tree = kcxai.datasets.running_example_tree(distribution=[[Fraction(1), Fraction(2)]] * 9)
    return Job(kcxai.compile_model(tree, "dt"), method, bound, options, "report")


@pytest.mark.parametrize("method,bound,options", [("min_idrs", Fraction(1, 20), {}),
                                                  ("local_cdrs", Fraction(9, 10), {"inflate": True}),
                                                  ("cxp", Fraction(0), {})])
def test_threads_give_the_sequential_rows_in_order(method: str, bound: Any, options: dict[str, Any]) -> None:
    job = _job(method, bound, **options)
    rng = np.random.default_rng(0)
    rows = [(k, tuple(r)) for k, r in enumerate(rng.integers(0, 2, size=(60, 9)).tolist())]
    rows.insert(7, ("bad", (3,) * 9))  # a row that cannot be read: a RowFailure, in its place
    seq = run(job, rows, n_jobs=None, progress=False)
    with joblib.parallel_config(backend="threading"):
        par = run(job, rows, n_jobs=2, progress=False, chunk_size=8)
    assert any(isinstance(r, Lazy) for r in par)
    result = ExplanationSet(par, [rid for rid, _ in rows], bounds="error")
    assert list(result) == seq and result.n_failures == 1 and result[7].id == "bad"
    assert list(result[5:12]) == seq[5:12]
    frames = [r.to_frame().drop(columns="seconds") for r in (result, ExplanationSet(seq, result.ids, bounds="error"))]
    assert frames[0].equals(frames[1])


def test_explain_chunk_packs_what_workers_send() -> None:
    job = _job()
    rows = [(0, (1, 1, 1, 1, 0, 0, 0, 0, 1)), (1, (0,) * 9)]
    plain, packed = explain_chunk(job, rows), explain_chunk(job, rows, packed=True)
    assert all(isinstance(r, PackedRow) for r in packed)
    unpack = Unpacker(job.compiled.model.space)
    assert [unpack(p, inst) for p, (_, inst) in zip(packed, rows)] == plain
    assert len(pickle.dumps(packed)) < len(pickle.dumps(plain)) / 2


def test_explainer_batches_in_threads_equal_one_process() -> None:
    tree = kcxai.datasets.running_example_tree()
    rows = np.random.default_rng(1).integers(0, 2, size=(50, 9))
    explainer = Explainer(tree)
    seq = explainer.explain(rows, method="local_cdrs", precision=0.9)
    with joblib.parallel_config(backend="threading"):
        par = explainer.explain(rows, method="local_cdrs", precision=0.9, n_jobs=2)
    assert list(par) == list(seq) and par.ids == seq.ids


def test_a_failed_pool_names_the_chunks_it_may_have_been(monkeypatch: pytest.MonkeyPatch) -> None:
    """A task that fails inside a worker is named exactly (see test_explain_csv.py); a pool that fails (a worker
    process killed: joblib does not say which task) names the chunks it had in flight."""
    from kcxai import _batch
    from kcxai._errors import WorkerError

    real = _batch._guarded

    def pool_dies(job: Any, rows: Any, packed: bool) -> Any:
        if any(rid == 20 for rid, _ in rows):
            raise OSError("A worker process managed by the executor was unexpectedly terminated.")
        return real(job, rows, packed)

    monkeypatch.setattr(_batch, "_guarded", pool_dies)
    rows = [(k, tuple(r)) for k, r in enumerate(np.random.default_rng(7).integers(0, 2, size=(40, 9)).tolist())]
    kept: list[Any] = []
    with pytest.raises(WorkerError) as err, joblib.parallel_config(backend="threading"), \
            _batch.session(_job(), 2) as s:
        for part in s.map(_batch.chunks_of(rows, 4)):
            kept += part
    k, first, last = err.value.chunk, err.value.first, err.value.last
    # the chunks returned before the failure are kept; the error names the ones in flight (which of them failed
    # joblib does not say), from the first not returned, and they include chunk 5 (rows 20 to 23)
    assert k <= 5 and len(kept) == 4 * k and first == 4 * k and 23 <= last <= 39 and (last + 1) % 4 == 0
    n = (last + 1 - first) // 4
    named = f"chunk {k} (rows {first} to {last}, 4 rows)" if n == 1 else \
        f"one of chunks {k} to {k + n - 1} (rows {first} to {last}, {4 * n} rows)"
    assert named in str(err.value), str(err.value)


def _tables(bad_at: int | None = None) -> list[Any]:
    """Five tables of the running example's rows; table ``bad_at`` has a value outside a feature's domain."""
    rng = np.random.default_rng(11)
    tables = [rng.integers(0, 2, size=(n, 9)).tolist() for n in (30, 7, 1, 64, 12)]
    if bad_at is not None:
        tables[bad_at][3][4] = 5
    return tables


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_a_stream_of_tables_gives_each_table_what_explain_gives_it(n_jobs: int | None) -> None:
    explainer = Explainer(kcxai.datasets.running_example_tree())
    with joblib.parallel_config(backend="threading"):
        got = list(explainer.explain_batches(iter(_tables()), method="min_idrs", delta=0.05, n_jobs=n_jobs))
    want = [explainer.explain(t, method="min_idrs", delta=0.05) for t in _tables()]
    assert [list(s) for s in got] == [list(s) for s in want] and [s.ids for s in got] == [s.ids for s in want]


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_a_bad_table_in_a_stream_raises_after_the_tables_before_it(n_jobs: int | None) -> None:
    explainer = Explainer(kcxai.datasets.running_example_tree())
    kept = []
    with pytest.raises(kcxai.KcxaiError, match=r"row 3") as err, joblib.parallel_config(backend="threading"):
        for s in explainer.explain_batches(iter(_tables(bad_at=3)), method="min_idrs", delta=0.05, n_jobs=n_jobs):
            kept.append(s)
    assert [len(s) for s in kept] == [30, 7, 1], err.value
    # a stream left early (here by its error) leaves the explainer able to run the next one
    with joblib.parallel_config(backend="threading"):
        stream = explainer.explain_batches(iter(_tables()), method="min_idrs", delta=0.05, n_jobs=n_jobs)
        first = next(stream)
        stream.close()
        again = explainer.explain(_tables()[0], method="min_idrs", delta=0.05, n_jobs=n_jobs)
    assert list(first) == list(again)
