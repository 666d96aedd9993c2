"""The OBDD table counted level by level with numpy (kcxai/compilers/_tables/level_arrays.py) against enumeration.

The numpy evaluation runs on large diagrams only; here it is forced on small random ones (trees through the
builder, forests and boosted trees through the ensemble construction) under every kind of distribution,
through single counts and the deletion loop's incremental sessions.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from tests._support import reference as ref
from kcxai import Feature, FeatureSpace
from kcxai.compilers._tables import level as _level_table
from kcxai.compilers._tables.level_arrays import fits_int64
from tests._support.model_strategies import boosted_models, forests
from tests._support.strategies import DISTRIBUTIONS, deltas, instance_of, points, trees


@pytest.fixture(scope="module", params=[-1, 1], ids=["numpy-only", "mixed"])
def vectorised(request):
    """Numpy on every diagram: for every query, or (``mixed``) only for queries with two free features or
    more, the recursive evaluation taking the others in the same session."""
    with pytest.MonkeyPatch.context() as mp:  # the same for every example: module-scoped
        mp.setattr(_level_table, "VECTOR_MIN_NODES", 0)
        mp.setattr(_level_table, "RECURSIVE_MAX_FREE", request.param)
        yield


def _is_vectorised(compiled):
    tables = [compiled.oracle.table] if hasattr(compiled.oracle, "table") else [
        o.table for _, o in compiled.oracle.parts]
    # numpy counts only where they are exact (a mixture component's total weight may pass 2^62)
    return all(t._vectorised() is not None for t in tables
               if t.n_nodes and fits_int64(t.pw.total, t.pw.arith.exact))


@settings(max_examples=40)
@given(data=st.data())
def test_counts_equal_brute_force(vectorised, data):
    model = data.draw(st.one_of(trees(distributions=DISTRIBUTIONS), forests(distributions=DISTRIBUTIONS),
                                boosted_models(distributions=DISTRIBUTIONS)))
    compiled = kcxai.compile_model(model, "obdd")
    assert _is_vectorised(compiled)
    brute = kcxai.compile_model(model, "brute").oracle
    p = data.draw(points(model.space))
    for label in range(len(model.classes)):
        for _ in range(3):
            s = frozenset(data.draw(st.sets(st.integers(0, model.space.n_features - 1))))
            assert ref.close(compiled.oracle.disagree_weight(p, label, s), brute.disagree_weight(p, label, s))


@settings(max_examples=30)
@given(delta=deltas, data=st.data())
def test_deletion_loops_equal_brute_force(vectorised, delta, data):
    model = data.draw(st.one_of(trees(), forests(), boosted_models()))
    x = instance_of(model.space, data.draw(points(model.space)))
    order = data.draw(st.permutations(range(model.space.n_features)))
    e = kcxai.min_idrs(kcxai.compile_model(model, "obdd"), x, delta, order=order)
    b = kcxai.min_idrs(kcxai.compile_model(model, "brute"), x, delta, order=order)
    assert (e.features, e.error, e.precision) == (b.features, b.error, b.precision)


def test_totals_past_int64_keep_python_integers(vectorised):
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1, 2]) for i in range(40)],
                         distribution=[[Fraction(1, 3 ** 5), 1, 7] for _ in range(40)])
    assert not fits_int64(space.distribution.components[0][1].total, True)
    assert fits_int64(2 ** 61, True) and fits_int64(1e300, False)
    tree = kcxai.DecisionTree(space, [0, 1], kcxai.Split("x0", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1), 2: kcxai.Leaf(1)}))
    compiled = kcxai.compile_model(tree, "obdd")
    assert compiled.oracle.table._vectorised() is None
    point = (0,) * 40
    reference = kcxai.compile_model(tree, "dt").oracle
    assert compiled.oracle.disagree_weight(point, 0, frozenset()) == reference.disagree_weight(point, 0, frozenset())
