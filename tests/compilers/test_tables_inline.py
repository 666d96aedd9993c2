"""The diagram walks compiled with their vector operations inline (kcxai/compilers/_tables/inline.py).

The walk as written (vector operators as methods) and as compiled per ``K`` (entries written out) count the
same, on OBDD and SDD tables of random trees, forests and boosted models under K = 2 and 5 components, exact
and float, in whole counts and sessions, with the terminals as parameters; both equal one walk per component
with Python numbers (K = 1). Past ``UNROLLED_MAX`` components the walk runs as written. The rewriting itself:
each operand evaluated once and in order, the answer in the vector type, the rule's visible breaches refused.
(``test_tables_walk.py`` compares the counts that use the compiled walks with enumeration.)
"""

from __future__ import annotations

import importlib
import linecache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai import Feature, FeatureSpace
from kcxai.compilers._tables import base as _base
from kcxai.compilers._tables.base import FALSE, TRUE, counter_for
from kcxai.compilers._tables.inline import VectorRuleError, inline_vectors
from kcxai.compilers._tables.vectors import UNROLLED_MAX, WeightVector, vector_type
from kcxai.distribution import Mixture, Product
from tests._support.enumerated import models_with_k
from tests._support.strategies import points


def _as_written(counter: Any) -> Any:
    """The same counter running its walk as written (the vectors' operators called as methods)."""
    written = counter_for(counter.table, counter.columns.components)
    written.walk_function = type(written).walk
    return written


@pytest.fixture(scope="module", params=["walk", "mixed"])
def evaluation(request: pytest.FixtureRequest) -> Any:
    """Every count walks (``walk``), or numpy counts the queries with two free features or more (``mixed``)."""
    walk = request.param == "walk"
    with pytest.MonkeyPatch.context() as mp:  # the same for every example: module-scoped
        mp.setattr(_base, "VECTOR_MIN_NODES", 10 ** 9 if walk else 0)
        mp.setattr(_base, "RECURSIVE_MAX_FREE", 10 ** 9 if walk else 1)
        yield request.param


@settings(max_examples=25, deadline=None)
@given(data=st.data(), language=st.sampled_from(["obdd", "sdd"]))
def test_inlined_walk_counts_as_written_and_per_component(evaluation: str, data: Any, language: str) -> None:
    model = data.draw(models_with_k().filter(lambda m: m.space.distribution.n_components > 1))
    table = kcxai.compile_model(model, language).oracle.table
    components = model.space.distribution.components
    inlined = counter_for(table, components)
    assert inlined.walk_function is not type(inlined).walk  # the compiled walk is the one that runs
    written = _as_written(inlined)
    singles = [counter_for(table, [c]) for c in components]
    assert all(s.walk_function is type(s).walk for s in singles)  # numbers: the walk as written
    cols = inlined.columns
    n = model.space.n_features
    p = data.draw(points(model.space))
    for label in range(len(table.roots)):
        s = frozenset(data.draw(st.sets(st.integers(0, n - 1))))
        isfixed = [f in s for f in range(n)]
        for terminals in (None, {FALSE: cols.one, TRUE: None}, {FALSE: cols.one, TRUE: cols.one}):
            got = inlined.counts((label,), p, isfixed, inlined.new_values(), terminals)
            assert got is None or type(got) is type(cols.one)
            assert got == written.counts((label,), p, isfixed, written.new_values(), terminals)
        entries = cols.entries(cols.zero if got is None else got)  # (the last terminals: every point weighs 1)
        for single, entry in zip(singles, entries):
            one, zero = single.columns.one, single.columns.zero
            want = single.counts((label,), p, isfixed, single.new_values(), {FALSE: one, TRUE: one}) or zero
            assert entry == (want if cols.exact else pytest.approx(want, rel=1e-12))
        assert inlined.disagree((label,), p, isfixed) == written.disagree((label,), p, isfixed)
        session, reference = inlined.session(p, (label,), s), written.session(p, (label,), s)
        for f in data.draw(st.permutations(sorted(s))):
            assert session.weight_if_freed(f) == reference.weight_if_freed(f)
            if data.draw(st.booleans()):
                session.free(f)
                reference.free(f)
                assert session.weight() == reference.weight()


@pytest.mark.parametrize("k", [UNROLLED_MAX, UNROLLED_MAX + 1])
def test_up_to_unrolled_max_inline_past_it_as_written(k: int) -> None:
    """UNROLLED_MAX components: the walk inline; one more: generic WeightVectors and the walk as written; both
    counting as the components do one by one."""
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1, 2]) for i in range(3)])
    mix = Mixture(list(range(1, k + 1)), [Product([[1, j + 1, 2], [j + 2, 1, 1], [1, 1, j + 1]]) for j in range(k)])
    tree = kcxai.DecisionTree(space.with_distribution(mix), [0, 1], kcxai.Split("x0", {
        0: kcxai.Leaf(0), 1: kcxai.Split("x2", {0: kcxai.Leaf(1), 1: kcxai.Leaf(0), 2: kcxai.Leaf(1)}),
        2: kcxai.Leaf(1)}))
    for language in ("obdd", "sdd"):
        table = kcxai.compile_model(tree, language).oracle.table
        counter = counter_for(table, mix.components)
        inline = k <= UNROLLED_MAX
        assert (type(counter.columns.one) is WeightVector) is not inline
        assert (counter.walk_function is type(counter).walk) is not inline
        for fixed in ([False] * 3, [True, False, False], [False, True, True]):
            got = counter.counts((1,), (1, 0, 2), fixed, counter.new_values())
            singles = [counter_for(table, [c]) for c in mix.components]
            assert list(got or ()) == [s.counts((1,), (1, 0, 2), fixed, s.new_values()) for s in singles]


SEEN: list[str] = []


def _operand(name: str, value: Any) -> Any:
    SEEN.append(name)
    return value


def _walk(a: Any, b: Any, c: Any) -> Any:  # a walk: its nested function's answer stays a tuple, its own is a vector
    def inner(x: Any) -> Any:
        return _operand("x", x) * _operand("c", c)

    return _operand("a", a) + inner(b) - _operand("a2", a)


def test_operands_are_evaluated_once_and_in_order() -> None:
    v = vector_type(3)
    fast = inline_vectors(_walk, 3, v)
    assert fast is not _walk and fast.__qualname__ == _walk.__qualname__
    SEEN.clear()
    got = fast(v((1, 2, 3)), v((4, 5, 6)), v((7, 8, 9)))
    assert got == (1 + 28 - 1, 2 + 40 - 2, 3 + 54 - 3) and type(got) is v
    assert SEEN == ["a", "x", "c", "a2"]


def test_none_stays_none_and_closures_run_as_written() -> None:
    def nothing(a: Any) -> Any:
        return None if a is None else a * a

    v = vector_type(2)
    fast = inline_vectors(nothing, 2, v)
    assert fast(None) is None and fast(v((3, 4))) == (9, 16)
    factor = v((2, 2))

    def closure(a: Any) -> Any:
        return a * factor

    assert inline_vectors(closure, 2, v) is closure


@pytest.mark.parametrize("body", ["return [None] * len(a)", "return a + 1", "return 2 * a"])
def test_a_visible_non_vector_operation_is_refused(body: str) -> None:
    namespace: dict[str, Any] = {}
    exec(f"def bad(a):\n    {body}\n", namespace)  # (a function whose source inspect cannot read: runs as written)
    assert inline_vectors(namespace["bad"], 2, vector_type(2)) is namespace["bad"]
    with pytest.raises(VectorRuleError, match=r"bad: every binary \+, - and \* must be an operation on vectors"):
        inline_vectors(_with_source(body), 2, vector_type(2))


def _accumulate(a: Any, b: Any) -> Any:
    a += b
    return a


def _negate(a: Any) -> Any:
    return -a


@pytest.mark.parametrize("function, said", [(_accumulate, "write a \\+= b as a = a \\+ b"),
                                            (_negate, "cannot be negated")])
def test_operations_the_rewriting_does_not_write_out_are_refused(function: Any, said: str) -> None:
    with pytest.raises(VectorRuleError, match=said):
        inline_vectors(function, 2, vector_type(2))


def test_a_source_edited_since_import_is_not_compiled(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "edited_walk.py"
    path.write_text("def walk(a, b):\n    return a * b\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("edited_walk")
    v = vector_type(2)
    assert inline_vectors(module.walk, 2, v) is not module.walk  # (its source is what runs)
    path.write_text("def walk(a, b):\n    return a + b\n")  # the same name, another body
    linecache.checkcache(str(path))
    inline_vectors.cache_clear()
    assert inline_vectors(module.walk, 2, v) is module.walk  # runs as written: a * b, not the file's a + b
    assert module.walk(v((2, 3)), v((5, 7))) == (10, 21)


def _with_source(body: str) -> Any:
    """A function whose source inspect reads: one of these, chosen by its body."""
    def list_times(a: Any) -> Any:
        return [None] * len(a)

    def plus_one(a: Any) -> Any:
        return a + 1

    def twice(a: Any) -> Any:
        return 2 * a

    chosen = {"return [None] * len(a)": list_times, "return a + 1": plus_one, "return 2 * a": twice}[body]
    chosen.__qualname__ = "bad"
    return chosen


_FACTOR = vector_type(2)((2, 3))


def _scaled(a: Any) -> Any:
    return a * _FACTOR


def test_the_inlined_walk_reads_its_module_globals_live(monkeypatch: pytest.MonkeyPatch) -> None:
    v = vector_type(2)
    fast = inline_vectors(_scaled, 2, v)
    assert fast is not _scaled and fast(v((5, 7))) == (10, 21)
    monkeypatch.setattr(f"{__name__}._FACTOR", v((1, 1)))
    assert fast(v((5, 7))) == (5, 7)
