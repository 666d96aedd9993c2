"""Subset-minimal sufficient sets over a monotone predicate (kcxai.explain._progression) against enumeration."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kcxai.explain._progression import deletion_order, minimal_sufficient, moved_features


@st.composite
def monotone_predicates(draw: Any) -> tuple[int, list[frozenset[int]]]:
    """A monotone predicate on subsets of range(n): "contains one of these sets" (an upward closure)."""
    n = draw(st.integers(1, 7))
    bases = draw(st.lists(st.frozensets(st.integers(0, n - 1), max_size=3), min_size=1, max_size=6))
    return n, bases


def _sufficient(bases: list[frozenset[int]]) -> Any:
    return lambda s: any(b <= s for b in bases)


def _deletion(sufficient: Any, keep: set[int], order: list[int]) -> set[int]:
    """Plain deletion in order, one call per candidate (the reference)."""
    for i in order:
        if i in keep and sufficient(keep - {i}):
            keep = keep - {i}
    return keep


@settings(max_examples=300, deadline=None)
@given(pred=monotone_predicates(), data=st.data(), chunks=st.booleans(), witnesses=st.booleans(),
       cores=st.booleans())
def test_same_set_as_deletion_in_the_same_order(pred: Any, data: Any, chunks: bool, witnesses: bool,
                                                cores: bool) -> None:
    n, bases = pred
    sufficient = _sufficient(bases)
    order = data.draw(st.permutations(range(n)))
    calls: list[frozenset[int]] = []

    def ask(s: set[int]) -> bool:
        calls.append(frozenset(s))
        return sufficient(s)

    def core(s: set[int]) -> set[int]:  # the smallest base inside ``s``, as a solver's core could be
        return set(min((b for b in bases if b <= s), key=len))

    def needed(s: set[int], dropped: set[int]) -> set[int]:
        """A counterexample moved back to the instance wherever it can stay one (as moved_features does)."""
        agree = set(s)
        for j in sorted(dropped):
            if not sufficient(agree | {j}):
                agree.add(j)
        return dropped - agree

    full = set(range(n))
    if not sufficient(full):
        return
    got = minimal_sufficient(ask, full, list(order), core=core if cores else None,
                             needed=needed if witnesses else None, chunks=chunks)
    assert sufficient(got)
    assert all(not sufficient(got - {i}) for i in got)  # subset-minimal
    if not cores:  # cores may drop features deletion would keep; without them the set is deletion's
        assert got == _deletion(sufficient, full, list(order))
    if not chunks:
        assert len(calls) <= n


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 40))
def test_chunks_cut_the_calls_when_few_features_are_needed(n: int) -> None:
    """Nothing needed: chunks of 1, 2, 4, 8, 8, ... candidates, against one call per candidate."""
    calls: list[set[int]] = []
    assert minimal_sufficient(lambda s: calls.append(s) is None, set(range(n)), range(n)) == set()
    assert len(calls) == (n.bit_length() if n <= 7 else 3 + -(-(n - 7) // 8))
    assert len(calls) <= n


def test_a_counterexample_that_needs_two_features_marks_neither() -> None:
    """Dropping {1, 2} together fails but each alone is fine: no witness may claim either is necessary."""
    sufficient = _sufficient([frozenset({1, 3}), frozenset({2, 3})])

    def needed(s: set[int], dropped: set[int]) -> set[int]:
        agree = set(s)
        for j in sorted(dropped):
            if not sufficient(agree | {j}):
                agree.add(j)
        return dropped - agree

    got = minimal_sufficient(sufficient, {0, 1, 2, 3}, [0, 1, 2, 3], needed=needed)
    assert got == _deletion(sufficient, {0, 1, 2, 3}, [0, 1, 2, 3]) == {2, 3}


def test_candidates_outside_the_order_are_kept() -> None:
    assert minimal_sufficient(lambda s: {1, 3} <= s, {0, 1, 2, 3}, [0, 2]) == {1, 3}
    assert minimal_sufficient(lambda s: True, {0, 1, 2}, [2]) == {0, 1}


def test_moved_features_keeps_only_what_the_counterexample_needs() -> None:
    def predict(p: Any) -> int:  # class 1 iff x0 + x1 + x2 >= 2
        return int(sum(p) >= 2)

    point = (0, 0, 0)
    for witness in itertools.product((0, 1), repeat=3):
        if predict(witness) == 0:
            continue
        moved = moved_features(predict, point, 0, witness, range(3))
        assert len(moved) == 2 and moved <= {i for i in range(3) if witness[i]}
        w = [witness[i] if i in moved else 0 for i in range(3)]
        assert predict(w) == 1


def test_deletion_order_takes_fewer_values_first() -> None:
    assert deletion_order([3, 2, 3, 1]) == [3, 1, 0, 2]
    assert deletion_order([]) == []
