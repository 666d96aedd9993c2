"""The one counting walk of a decision tree (kcxai/engines/_tree_walk.py) and its path tables
(kcxai/engines/_path_table.py) against enumeration, for K = 1, 2, 5 product components.

Random trees with multi-valued features and 2-3 classes, under distributions of exactly K components (K = 1: a
product, or a mixture of one whose coefficient need not be 1), exact and float. The tree oracle answers every
component in one walk (weights are vectors of K) or in one set of numpy path tables; each test runs with the
walk alone, with the tables from the first query, and with a session that moves from the walk to the tables
after a few nodes. Counts, the deletion loop's weights, box weights and box weights by value are compared with
probabilities enumerated from the distribution's parameters as given (tests/_support/reference.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcxai.engines import _path_table, dt
from kcxai.engines._tree_walk import TreeWalk
from kcxai.engines.dt import TreeOracle
from tests._support.enumerated import Enumerated, in_box, models_with_k, same
from tests._support.strategies import points

#: How the oracle answers: (the fewest leaves of a tree with path tables, nodes a walk visits before them).
MODES = {"walk": (1 << 30, 0), "tables": (0, 0), "switch": (0, 4)}


@pytest.fixture(params=sorted(MODES))
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    min_leaves, budget = MODES[request.param]
    monkeypatch.setattr(_path_table, "MIN_TABLE_LEAVES", min_leaves)
    monkeypatch.setattr(dt, "WALK_BUDGET", budget)
    return str(request.param)


def _oracle(model: Any, mode: str) -> TreeOracle:
    oracle = TreeOracle(model)
    assert isinstance(oracle._walk, TreeWalk) and oracle._walk.columns.k == model.space.distribution.n_components
    table = oracle.path_table()
    if mode == "walk" or not model.space.is_exact:  # (the tables count exact distributions only)
        assert table is None
    else:
        assert table is not None and table.n_components == model.space.distribution.n_components
    return oracle


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_counts_and_sessions_equal_enumeration(mode: str, data: Any) -> None:
    tree = data.draw(models_with_k(ensembles=False))
    oracle = _oracle(tree, mode)
    truth, total = Enumerated(tree), tree.space.total_weight
    n = tree.space.n_features
    p = data.draw(points(tree.space))
    for label in range(len(tree.classes)):
        s = frozenset(data.draw(st.sets(st.integers(0, n - 1))))
        assert same(oracle.disagree_weight(p, label, s), total, truth.agreeing(p, s, label))
        fixed = set(range(n))
        session = oracle.session(p, label, frozenset(fixed))
        for f in data.draw(st.permutations(range(n))):
            assert same(session.weight_if_freed(f), total, truth.agreeing(p, fixed - {f}, label))
            if data.draw(st.booleans()):
                session.free(f)
                fixed.discard(f)
                assert session.fixed == frozenset(fixed)
                assert same(session.weight(), total, truth.agreeing(p, fixed, label))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_box_weights_and_by_value_equal_enumeration(mode: str, data: Any) -> None:
    tree = data.draw(models_with_k(ensembles=False))
    oracle = _oracle(tree, mode)
    truth, total = Enumerated(tree), tree.space.total_weight
    box = tuple(data.draw(st.integers(1, (1 << f.size) - 1)) for f in tree.space.features)
    feature = data.draw(st.integers(0, tree.space.n_features - 1))
    for label in range(len(tree.classes)):
        disagree, consistent = oracle.box_weights(box, label)
        assert same(disagree, total, truth.weight(in_box(box), label))
        assert same(consistent, total, truth.weight(in_box(box)))
        by_value = oracle.box_weights_by_value(box, label, feature)
        assert len(by_value) == tree.space.features[feature].size
        for k, (d, c) in enumerate(by_value):
            at_k = box[:feature] + (1 << k,) + box[feature + 1:]
            assert same(d, total, truth.weight(in_box(at_k), label))
            assert same(c, total, truth.weight(in_box(at_k)))
