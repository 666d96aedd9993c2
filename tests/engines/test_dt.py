"""The tree oracle's path tables and sessions (kcxai/engines/dt.py, kcxai/engines/_path_table.py).

Every answer must equal the brute-force enumeration of the feature space (tests/reference.py: the
distribution's parameters as the user gave them, normalised there), and the exact walk of the tree as it was
answered before the tables (one walk per product component per query, :class:`GenericSession`): counts, the
deletion loop's decisions on the error and on the precision (at ties too, where a float screen cannot decide),
the weights after each feature freed, and whole explanations (every field but the time), on random trees with
multi-valued features, two or three classes, uniform, product and mixture distributions; with the tables
counting in int64 and in floats (totals past 2**62), tracking every leaf or only the live ones.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kcxai
from kcxai import DecisionTree, Feature, FeatureSpace, Leaf, Split
from kcxai.engines import _path_table, dt
from kcxai.compilers.compiled import CompiledModel
from kcxai.engines.dt import TreeOracle
from kcxai.engines._path_table import PathTable
from kcxai.distribution import Mixture, Product
from kcxai.oracle import GenericSession
from tests._support.reference import all_points, point_probability
from tests._support.strategies import instance_of, points, trees


class _Walk:
    """The oracle as it answered before the path tables: one exact walk of the tree per product component and
    query, the components' answers summed (counting is linear in the distribution)."""

    language = "dt"

    def __init__(self, tree: DecisionTree) -> None:
        self.tree, self.space, self.n_classes = tree, tree.space, len(tree.classes)
        self.parts = [(c, TreeOracle(tree, [(1, pw)])) for c, pw in tree.space.distribution.components]

    @property
    def paths(self) -> Any:
        return self.tree.paths

    def path_of(self, point: tuple[int, ...]) -> Any:
        return self.tree.path_of(point)

    def predict_point(self, point: tuple[int, ...]) -> int:
        return self.tree.predict_point(point)

    def disagree_weight(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> Any:
        return sum((c * o.walked_weight(point, label, fixed) for c, o in self.parts), self.space.arith.zero)

    def session(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> Any:
        return GenericSession(self, point, label, fixed)  # type: ignore[arg-type]


def walked(tree: DecisionTree) -> CompiledModel:
    """``tree`` compiled the way it was before (the reference)."""
    return CompiledModel(tree, _Walk(tree), "dt", "kcxai",  # type: ignore[arg-type]
                         stats={"size": tree.n_nodes, "variables": tree.space.n_features, "compile_seconds": 0.0})


MODES = {  # (int64 bits of a total, leaves tracked by a session, nodes a walk may visit before the tables)
    "int-all": (62, 1 << 30, 0), "int-live": (62, 0, 0), "float-all": (0, 1 << 30, 0), "float-live": (0, 0, 0),
    "float-switch": (0, 0, 4)}


@pytest.fixture(params=sorted(MODES))
def tables(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Path tables on every tree (even tiny ones), counting in int64 or floats, tracking all or live leaves,
    used from the first query, or after the walks grow past a few nodes (mid-session)."""
    bits, track, budget = MODES[request.param]
    monkeypatch.setattr(_path_table, "MIN_TABLE_LEAVES", 0)
    monkeypatch.setattr(_path_table, "INT_TOTAL_BITS", bits)
    monkeypatch.setattr(_path_table, "TRACK_ALL", track)
    monkeypatch.setattr(dt, "WALK_BUDGET", budget)
    return str(request.param)


def _table(oracle: TreeOracle, mode: str) -> PathTable:
    table = oracle.path_table()
    assert table is not None
    if mode.startswith("float"):  # (in int64 mode, a mixture whose totals pass 2**62 gets floats all the same)
        assert not table.exact
    return table


def _subsets(draw: Any, n: int) -> frozenset[int]:
    return frozenset(draw(st.lists(st.integers(0, n - 1), max_size=n)))


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_counts_equal_the_walk(tables: str, data: Any) -> None:
    tree = data.draw(trees())
    oracle = TreeOracle(tree)
    _table(oracle, tables)
    ref = walked(tree).oracle
    n = tree.space.n_features
    for _ in range(4):
        point = data.draw(points(tree.space))
        label = data.draw(st.integers(0, len(tree.classes) - 1))
        fixed = _subsets(data.draw, n)
        assert oracle.disagree_weight(point, label, fixed) == ref.disagree_weight(point, label, fixed)


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_session_decisions_equal_the_walk_at_ties(tables: str, data: Any) -> None:
    """Each decision is checked at a bound equal to the exact value (a tie: it holds) and just below it."""
    tree = data.draw(trees())
    oracle = TreeOracle(tree)
    _table(oracle, tables)
    ref = walked(tree).oracle
    space = tree.space
    point = data.draw(points(space))
    label = tree.predict_point(point)
    fixed = set(_subsets(data.draw, space.n_features)) | set(tree.path_of(point).features())
    session = oracle.session(point, label, frozenset(fixed))
    assert isinstance(session, dt.TreeSession)
    total = space.total_weight
    for f in data.draw(st.permutations(sorted(fixed))):
        rest = frozenset(fixed - {f})
        weight = ref.disagree_weight(point, label, rest)
        assert session.weight_if_freed(f) == weight
        error = Fraction(weight, total)
        assert session.holds_if_freed(f, space.arith.bound(error, total))
        if error:
            assert not session.holds_if_freed(f, space.arith.bound(error * (1 - Fraction(1, 10**12)), total))
        cons = space.consistent_weight(point, rest)
        prec = 1 - Fraction(weight, cons)
        assert session.holds_precision_if_freed(f, prec)
        if prec < 1:
            assert not session.holds_precision_if_freed(f, prec + (1 - prec) / 10**12)
        if data.draw(st.booleans()):
            session.free(f)
            fixed.discard(f)
            assert session.fixed == frozenset(fixed)
            assert session.weight() == weight


class _Enumerated:
    """Ground truth for one tree: every point's probability and class, enumerated once."""

    def __init__(self, tree: DecisionTree) -> None:
        space = tree.space
        self.rows = [(x, point_probability(space, x), tree.predict_point(x)) for x in all_points(space)]

    def error(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> Fraction:
        """``Pr(kappa(x) != label, x_S = v_S)``."""
        return sum((p for x, p, c in self.rows if c != label and all(x[i] == point[i] for i in fixed)), Fraction(0))

    def precision(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> Fraction:
        """``Pr(kappa(x) = label | x_S = v_S)``."""
        cons = sum((p for x, p, _ in self.rows if all(x[i] == point[i] for i in fixed)), Fraction(0))
        return 1 - self.error(point, label, fixed) / cons


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_counts_and_decisions_equal_enumeration(tables: str, data: Any) -> None:
    """Counts for any class, and the deletion loop's weights and decisions (at ties, where a float screen cannot
    decide, and just past them), equal the enumeration: multi-valued features, two or three classes, uniform,
    product and mixture distributions, tables in int64 and in floats."""
    tree = data.draw(trees(max_depth=4))
    oracle = TreeOracle(tree)
    _table(oracle, tables)
    space = tree.space
    truth = _Enumerated(tree)
    total = space.total_weight
    for _ in range(2):
        point = data.draw(points(space))
        label = data.draw(st.integers(0, len(tree.classes) - 1))
        fixed = _subsets(data.draw, space.n_features)
        assert Fraction(oracle.disagree_weight(point, label, fixed), total) == truth.error(point, label, fixed)
    point = data.draw(points(space))
    label = tree.predict_point(point)
    fixed = set(_subsets(data.draw, space.n_features)) | set(tree.path_of(point).features())
    session = oracle.session(point, label, frozenset(fixed))
    for f in data.draw(st.permutations(sorted(fixed))):
        rest = frozenset(fixed - {f})
        error = truth.error(point, label, rest)
        assert Fraction(session.weight_if_freed(f), total) == error
        assert session.holds_if_freed(f, space.arith.bound(error, total))
        if error:
            assert not session.holds_if_freed(f, space.arith.bound(error * (1 - Fraction(1, 10**15)), total))
        prec = truth.precision(point, label, rest)
        assert session.holds_precision_if_freed(f, prec)
        if prec < 1:
            assert not session.holds_precision_if_freed(f, prec + (1 - prec) / 10**15)
        if data.draw(st.booleans()):
            session.free(f)
            fixed.discard(f)
            assert Fraction(session.weight(), total) == error


def test_a_float_decision_the_floats_cannot_prove_is_made_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """In float tables, a bound equal to the exact error (a tie) is within the screen's margin: the screen
    declines and the decision is made from the exact count (and holds); far from the bound it is not needed."""
    monkeypatch.setattr(_path_table, "MIN_TABLE_LEAVES", 0)
    monkeypatch.setattr(_path_table, "INT_TOTAL_BITS", 0)
    monkeypatch.setattr(dt, "WALK_BUDGET", 0)
    tree = _wide_tree(6, depth=6, seed=3)
    oracle = TreeOracle(tree)
    assert not _table(oracle, "float").exact
    space = tree.space
    truth = _Enumerated(tree)
    exact_calls: list[frozenset[int]] = []
    real = _path_table.PathSession._exact

    def spy(self: Any, fixed: frozenset[int]) -> Any:
        exact_calls.append(fixed)
        return real(self, fixed)

    monkeypatch.setattr(_path_table.PathSession, "_exact", spy)
    checked = 0
    for point in all_points(space)[::37]:
        label = tree.predict_point(point)
        fixed = frozenset(range(space.n_features))
        for f in sorted(fixed):
            error = truth.error(point, label, fixed - {f})
            if not error:
                continue
            session = oracle.session(point, label, fixed)
            exact_calls.clear()
            assert session.holds_if_freed(f, space.arith.bound(error, space.total_weight))
            assert exact_calls == [fixed - {f}]  # the tie: decided exactly
            exact_calls.clear()
            assert session.holds_if_freed(f, space.arith.bound(2 * error, space.total_weight))
            assert not session.holds_if_freed(f, space.arith.bound(error / 2, space.total_weight))
            assert exact_calls == []  # clear of the bound: the floats decide
            checked += 1
    assert checked >= 10


def _same(a: Any, b: Any) -> None:
    assert dataclasses.replace(a, seconds=0.0) == dataclasses.replace(b, seconds=0.0)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_explanations_equal_the_walk(tables: str, data: Any) -> None:
    tree = data.draw(trees())
    new, old = kcxai.compile_model(tree, "dt"), walked(tree)
    _table(new.oracle, tables)
    point = instance_of(tree.space, data.draw(points(tree.space)))
    start = data.draw(st.sampled_from([None, "path"]))
    for delta in (0, Fraction(1, 100), Fraction(1, 10), Fraction(1, 2)):
        _same(kcxai.min_idrs(new, point, delta, start=start, inflate=False),
              kcxai.min_idrs(old, point, delta, start=start, inflate=False))
    for prec in (Fraction(1, 2), Fraction(9, 10), 1):
        _same(kcxai.local_cdrs(new, point, prec, start=start), kcxai.local_cdrs(old, point, prec, start=start))


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_one_walk_for_all_components_equals_a_walk_per_component(data: Any) -> None:
    """Without tables (small trees), an exact mixture is counted in one walk with a vector of weights."""
    tree = data.draw(trees(distributions=("mixture",)))
    oracle = TreeOracle(tree)
    assert oracle.path_table() is None  # below MIN_TABLE_LEAVES
    ref = walked(tree).oracle
    for _ in range(4):
        point = data.draw(points(tree.space))
        label = data.draw(st.integers(0, len(tree.classes) - 1))
        fixed = _subsets(data.draw, tree.space.n_features)
        assert oracle.disagree_weight(point, label, fixed) == ref.disagree_weight(point, label, fixed)


def _wide_tree(n: int, *, distribution: Any = None, depth: int = 9, seed: int = 0) -> DecisionTree:
    """A random tree over ``n`` features of 3 values, about 2**depth leaves."""
    import random

    rng = random.Random(seed)
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1, 2]) for i in range(n)], distribution=distribution)

    def grow(d: int) -> Any:
        if d == 0 or rng.random() < 0.1:
            return Leaf(rng.randrange(3))
        f = rng.randrange(n)
        return Split(f"x{f}", {0: grow(d - 1), 1: grow(d - 1), 2: grow(d - 1)} if rng.random() < 0.3 else
                     {0: grow(d - 1), 1: Leaf(rng.randrange(3)), 2: grow(d - 1)})

    return DecisionTree(space, [0, 1, 2], grow(depth))


def test_large_weights_are_screened_in_floats_and_stay_exact() -> None:
    """A mixture of products with 40 features and weights up to 10**6: totals far past 2**62, a float table
    (built by default: enough leaves), whose decisions and counts equal the walk's."""
    import random

    rng = random.Random(1)
    n = 40
    parts = [Product([[Fraction(rng.randint(1, 10**6)) for _ in range(3)] for _ in range(n)]) for _ in range(3)]
    tree = _wide_tree(n, distribution=Mixture([Fraction(1), Fraction(2), Fraction(5)], parts), depth=8)
    new, old = kcxai.compile_model(tree, "dt"), walked(tree)
    table = new.oracle.path_table()
    assert table is not None and not table.exact and tree.space.total_weight.bit_length() > 500
    for _ in range(40):
        point = tuple(rng.randrange(3) for _ in range(n))  # the values are the indices here
        for prec in (Fraction(1, 2), Fraction(19, 20)):
            _same(kcxai.local_cdrs(new, point, prec, start="path"), kcxai.local_cdrs(old, point, prec, start="path"))
        _same(kcxai.min_idrs(new, point, Fraction(1, 100)), kcxai.min_idrs(old, point, Fraction(1, 100)))


def test_no_table_where_floats_could_mislead_or_do_not_apply() -> None:
    # float weights: answered in floats already, as before
    assert TreeOracle(_wide_tree(6, distribution=[[0.2, 0.3, 0.5]] * 6)).path_table() is None
    # more features than a uint64 bitmask holds
    assert TreeOracle(_wide_tree(64)).path_table() is None
    # a term could underflow float64 (values of probability about 10**-60 on 20 features)
    tiny = [[Fraction(1), Fraction(1), Fraction(10**60)]] * 20
    tree = _wide_tree(20, distribution=tiny)
    assert tree.space.total_weight.bit_length() > 62 and TreeOracle(tree).path_table() is None
    # tiny trees: the walk is cheaper
    assert TreeOracle(kcxai.datasets.running_example_tree()).path_table() is None
