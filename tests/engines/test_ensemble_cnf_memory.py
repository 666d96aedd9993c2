"""The SAT engine's memory bound counts all it keeps: the solver's clauses and the Python copy of them that a
restart loads (:meth:`~kcxai.engines._ensemble_cnf.EnsembleCnf.restart`), about 1.8 times the solver's part."""

from __future__ import annotations

import sys

import pytest

from kcxai import KcxaiError, ProblemTooLargeError
from kcxai.engines._ensemble_cnf import EnsembleCnf
from tests._support.ensemble_reference import boosted_pairs


def _deep_size(clauses: list[list[int]]) -> int:
    """Bytes of a list of clauses: the lists, and each int object once (small ints are shared by Python)."""
    seen: set[int] = set()
    total = sys.getsizeof(clauses)
    for clause in clauses:
        total += sys.getsizeof(clause)
        for x in clause:
            if id(x) not in seen and not -5 <= x <= 256:
                seen.add(id(x))
                total += sys.getsizeof(x)
    return total


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    return boosted_pairs(n_trees=30, n_features=16)


def test_the_clause_copy_is_counted(model) -> None:  # type: ignore[no-untyped-def]
    engine = EnsembleCnf(model, max_memory=None)
    try:
        measured = _deep_size(engine._formula)
        assert 0.75 * measured <= engine.copy_memory <= 1.35 * measured, (engine.copy_memory, measured)
        assert engine.memory - engine.copy_memory < engine.copy_memory  # the copy is the larger part
    finally:
        engine.close()


def test_a_limit_the_copy_alone_reaches_refuses(model) -> None:  # type: ignore[no-untyped-def]
    """A bound that the copy of the clauses alone reaches (as measured here) is refused, naming the limit and
    what to do; the engine's own estimate fits."""
    engine = EnsembleCnf(model, max_memory=None)
    total, limit = engine.memory, _deep_size(engine._formula)
    engine.close()
    assert limit < total
    with pytest.raises(ProblemTooLargeError, match=rf"needs more than max_memory={limit:,} bytes") as caught:
        EnsembleCnf(model, max_memory=limit)
    assert isinstance(caught.value, KcxaiError) and "Pass a larger 'max_memory'" in str(caught.value)
    EnsembleCnf(model, max_memory=total).close()
