"""min_idrs and its measures against brute-force enumeration on random trees."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kcxai
from tests._support import reference as ref
from kcxai.explain._query import check_delta
from tests._support.strategies import EXACT_KINDS, deltas, instance_of, points, tree_and_instance, trees


@given(tree_and_instance(distributions=("uniform", "exact", "float", "mixture", "float_mixture")), st.data())
def test_error_and_precision_equal_brute_force(ti, data):
    tree, x = ti
    point = tree.space.encode(x)
    n = tree.space.n_features
    s = data.draw(st.sets(st.integers(0, n - 1)))
    for obj in (tree, kcxai.compile_model(tree, "brute")):
        assert ref.close(kcxai.idrs_error(obj, x, s), ref.error(tree, point, s))
        assert ref.close(kcxai.precision(obj, x, s), ref.precision(tree, point, s))
    if tree.space.is_exact:
        assert isinstance(kcxai.idrs_error(tree, x, s), Fraction)


@given(tree_and_instance(distributions=("uniform", "exact", "float")), deltas, st.data())
def test_min_idrs_is_relevant_and_subset_minimal(ti, delta, data):
    tree, x = ti
    point = tree.space.encode(x)
    n = tree.space.n_features
    order = data.draw(st.permutations(range(n)))
    e = kcxai.min_idrs(tree, x, delta, order=order)
    d = float(delta) if not tree.space.is_exact else e.delta
    s = set(e.features)
    assert ref.close(e.error, ref.error(tree, point, s))
    assert ref.close(e.precision, ref.precision(tree, point, s))
    tol = 1e-12 if not tree.space.is_exact else 0
    assert ref.error(tree, point, s) <= d + tol
    for i in s:  # dropping any one feature breaks relevance
        assert ref.error(tree, point, s - {i}) > d - tol
    extra = data.draw(st.sets(st.integers(0, n - 1)))
    assert ref.error(tree, point, s | extra) <= d + tol  # supersets stay relevant (monotone)


@given(tree_and_instance(), deltas, st.data())
def test_native_and_brute_give_the_same_set(ti, delta, data):
    tree, x = ti
    order = data.draw(st.permutations(range(tree.space.n_features)))
    a = kcxai.min_idrs(tree, x, delta, order=order)
    b = kcxai.min_idrs(kcxai.compile_model(tree, "brute"), x, delta, order=order)
    assert (a.features, a.error, a.precision) == (b.features, b.error, b.precision)
    assert b.language == "brute"


@given(tree_and_instance(distributions=EXACT_KINDS), deltas, st.data())
def test_min_idrs_is_algorithm1_for_any_order_and_start(ti, delta, data):
    tree, x = ti
    point = tree.space.encode(x)
    n = tree.space.n_features
    d = check_delta(delta)  # a float delta means the decimal it prints as
    start = data.draw(st.sets(st.integers(0, n - 1)))
    if ref.error(tree, point, start) > d:
        start = set(range(n))
    order = data.draw(st.permutations(range(n)))
    e = kcxai.min_idrs(tree, x, delta, order=order, start=start)
    assert set(e.features) == ref.deletion(tree, point, d, order, start)


@given(tree_and_instance(), deltas)
def test_start_from_path(ti, delta):
    tree, x = ti
    point = tree.space.encode(x)
    path = set(tree.path_features(x))
    assert ref.error(tree, point, path) == 0  # the path's features are an AXp candidate
    e = kcxai.min_idrs(tree, x, delta, start="path")
    assert set(e.features) == ref.deletion(tree, point, e.delta, sorted(path), path)


@given(trees(distributions=("uniform",)))
def test_public_split_construction_round_trip(tree):
    # Leaf/Split objects (the public constructor) rebuild the same classifier
    back = kcxai.DecisionTree(tree.space, tree.classes, tree.to_root())
    for p in ref.all_points(tree.space):
        assert back.predict_point(p) == tree.predict_point(p)


@given(tree_and_instance(), st.data())
def test_start_must_be_relevant(ti, data):
    tree, x = ti
    point = tree.space.encode(x)
    s = data.draw(st.sets(st.integers(0, tree.space.n_features - 1)))
    err = ref.error(tree, point, s)
    if err > 0:
        with pytest.raises(kcxai.NotRelevantError, match="'start' must be an I-delta-relevant set"):
            kcxai.min_idrs(tree, x, err / 2, start=s)
    else:
        assert set(kcxai.min_idrs(tree, x, 0, start=s).features) <= s


@given(trees(distributions=("exact",)), st.data())
def test_with_distribution_changes_only_the_weights(tree, data):
    p = data.draw(points(tree.space))
    uni = tree.with_distribution(None)
    for q in ref.all_points(tree.space)[:20]:
        assert uni.predict_point(q) == tree.predict_point(q)
    x = instance_of(tree.space, p)
    assert kcxai.idrs_error(uni, x, []) == ref.error(uni, p, [])


@given(trees(distributions=("uniform",)))
def test_tree_build_partitions_feature_space(tree):
    from kcxai.compilers._truth_table import TruthTableBuilder

    b = TruthTableBuilder(tree.space)
    b.check_partition(tree.build(b), tree.predict_point)
