"""The OBDD table counted level by level with numpy (kcxai/compilers/_tables/level.py, level_arrays.py) against
enumeration.

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
from kcxai.compilers._tables import base as _base
from tests._support.model_strategies import boosted_models, forests
from tests._support.strategies import DISTRIBUTIONS, deltas, instance_of, points, trees


#: The numpy counts made while a test ran (see the ``vectorised`` fixture).
NUMPY_COUNTS: list[int] = []


@pytest.fixture(scope="module", params=[-1, 1], ids=["numpy-only", "mixed"])
def vectorised(request):
    """Numpy on every diagram: for every query, or (``mixed``) only for queries with two free features or
    more, the recursive evaluation taking the others in the same session. Numpy counts are recorded."""
    real = _base.Counter.array_counts

    def spy(self, *args, **kwargs):
        NUMPY_COUNTS.append(1)
        return real(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:  # the same for every example: module-scoped
        mp.setattr(_base, "VECTOR_MIN_NODES", 0)
        mp.setattr(_base, "RECURSIVE_MAX_FREE", request.param)
        mp.setattr(_base.Counter, "array_counts", spy)
        yield request.param


@settings(max_examples=40)
@given(data=st.data())
def test_counts_equal_brute_force(vectorised, data):
    model = data.draw(st.one_of(trees(distributions=DISTRIBUTIONS), forests(distributions=DISTRIBUTIONS),
                                boosted_models(distributions=DISTRIBUTIONS)))
    compiled = kcxai.compile_model(model, "obdd")
    brute = kcxai.compile_model(model, "brute").oracle
    p = data.draw(points(model.space))
    # with every feature free, numpy counts exactly when its arithmetic is exact (no total past 2**62)
    NUMPY_COUNTS.clear()
    assert ref.close(compiled.oracle.disagree_weight(p, 0, frozenset()), brute.disagree_weight(p, 0, frozenset()))
    exact_in_int64 = all(pw.total < 2**62 for _, pw in model.space.distribution.components)
    assert bool(NUMPY_COUNTS) == ((not model.space.is_exact or exact_in_int64)
                                  and model.space.n_features > vectorised)
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
    assert space.total_weight >= 2**62
    tree = kcxai.DecisionTree(space, [0, 1], kcxai.Split("x0", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1), 2: kcxai.Leaf(1)}))
    compiled = kcxai.compile_model(tree, "obdd")
    point = (0,) * 40
    reference = kcxai.compile_model(tree, "dt").oracle
    NUMPY_COUNTS.clear()
    assert compiled.oracle.disagree_weight(point, 0, frozenset()) == reference.disagree_weight(point, 0, frozenset())
    assert not NUMPY_COUNTS  # no numpy: its int64 would not be exact
