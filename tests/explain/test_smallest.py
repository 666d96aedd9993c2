"""Cardinality-minimum relevant sets (smallest_drs, smallest_idrs and their checkers) against brute force."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kcxai
from tests._support.set_reference import SubsetTable
from tests._support.relevance_cases import FAMILIES, cases, error_bounds, exact_delta, with_delta
from tests._support.strategies import feature_spaces, instance_of, points, trees

V = (1, 1, 1, 1, 0, 0, 0, 0, 1)


def min_size(family):
    return min(len(s) for s in family)


@pytest.mark.parametrize("family", FAMILIES)
@given(data=st.data())
def test_smallest_drs_is_relevant_and_no_smaller_set_is(family, data):
    case = data.draw(cases(family))
    obj, model, x, point, table = case
    delta = data.draw(with_delta(case))
    e = kcxai.smallest_drs(obj, x, delta)
    s = frozenset(e.features)
    relevant = table.cdrs(e.precision_bound)
    assert s in relevant and len(s) == min_size(relevant)
    assert (e.precision, e.error, e.method) == (table.precision(s), table.error(s), "smallest_drs")


@pytest.mark.parametrize("family", FAMILIES)
@given(data=st.data())
def test_is_smallest_drs_matches_brute_force(family, data):
    case = data.draw(cases(family))
    obj, model, x, point, table = case
    delta = data.draw(with_delta(case))
    s = data.draw(st.sampled_from(table.sets))
    relevant = table.cdrs(exact_delta(delta, table))
    assert kcxai.is_smallest_drs(obj, x, s, delta) == (s in relevant and len(s) == min_size(relevant))




@pytest.mark.parametrize("family", FAMILIES)
@given(data=st.data())
def test_smallest_idrs_is_relevant_and_no_smaller_set_is(family, data):
    obj, model, x, point, table = data.draw(cases(family))
    delta = data.draw(error_bounds(table))
    e = kcxai.smallest_idrs(obj, x, delta)
    s = frozenset(e.features)
    relevant = table.idrs(e.delta)
    assert s in relevant and len(s) == min_size(relevant)
    assert (e.error, e.precision, e.method) == (table.error(s), table.precision(s), "smallest_idrs")
    t = data.draw(st.sampled_from(table.sets))
    assert kcxai.is_smallest_idrs(obj, x, t, delta) == (t in relevant and len(t) == len(s))


@given(st.data())
def test_minimum_not_just_minimal_on_wider_trees(data):
    """Four to six features, where minimal sets of different sizes are common."""
    tree = data.draw(trees(space=data.draw(feature_spaces(min_features=4, max_features=6, max_values=3))))
    point = data.draw(points(tree.space))
    x = instance_of(tree.space, point)
    table = SubsetTable(tree, point)
    err = data.draw(st.sampled_from(sorted({table.error(s) for s in table.sets})))
    assert len(kcxai.smallest_idrs(tree, x, err)) == min_size(table.idrs(err))
    prec = data.draw(st.sampled_from(sorted({table.precision(s) for s in table.sets})))
    assert len(kcxai.smallest_drs(tree, x, prec)) == min_size(table.cdrs(prec))


def test_minimum_among_minimal_sets_of_different_sizes():
    """kappa = x0 or (x1 and x2) at v = (1, 1, 1): the minimal relevant sets are {x0} and {x1, x2}."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"x{i}", [0, 1]) for i in range(3)])
    L, S = kcxai.Leaf, kcxai.Split
    tree = kcxai.DecisionTree(space, [0, 1], S("x1", {
        0: S("x0", {0: L(0), 1: L(1)}),
        1: S("x2", {0: S("x0", {0: L(0), 1: L(1)}), 1: L(1)})}))
    x = (1, 1, 1)
    for obj in (tree, kcxai.compile_model(tree, "brute")):
        relevant = {frozenset(e.features) for e in kcxai.enumerate_idrs(obj, x, 0) if e.kind == "relevant"}
        assert relevant == {frozenset({0}), frozenset({1, 2})}
        assert kcxai.smallest_idrs(obj, x, 0).features == (0,)
        assert kcxai.smallest_drs(obj, x, 1).features == (0,)
        assert not kcxai.is_smallest_idrs(obj, x, [1, 2], 0) and kcxai.is_min_idrs(obj, x, [1, 2], 0)


def test_running_example():
    tree = kcxai.datasets.running_example_tree()
    assert kcxai.smallest_idrs(tree, V, 0).features in ((0, 1, 2, 3, 8), (0, 1, 2, 7, 8))
    # {x1, x8} and {x1, x9} are the two smallest sets (the hitting-set solver may return either)
    assert kcxai.smallest_idrs(tree, V, 0.03).names in (("x1", "x8"), ("x1", "x9"))
    e = kcxai.smallest_drs(tree, V, 0.95)
    assert len(e) == 3 and e.precision >= Fraction(95, 100)
    assert kcxai.is_smallest_drs(tree, V, e.features, 0.95)
    assert not kcxai.is_smallest_drs(tree, V, [0, 1, 2, 8], 0.95)  # relevant, not smallest
    assert kcxai.smallest_drs(tree, V, 0).features == ()
    assert kcxai.smallest_idrs(tree, V, 1).features == ()


@pytest.mark.parametrize("name", ["IAI14", "SKL14"])
def test_smallest_drs_on_reference_adult_trees(name):
    """1,200-node trees with 28-bit path weights: the SAT search against enumeration of all smaller sets."""
    tree = kcxai.datasets.reference_tree(name)
    rows = kcxai.datasets.reference_instances(name)
    for x, delta in ((rows[0], 0.9), (rows[1], 0.95)):
        e = kcxai.smallest_drs(tree, x, delta)
        assert kcxai.precision(tree, x, e.features) == e.precision >= Fraction(str(delta))
        # 2.7e7 points, too many for the brute-force oracle: every smaller set is checked with the
        # tree's counting oracle, which shares no code with the SAT search
        for size in range(len(e)):
            for s in itertools.combinations(range(tree.space.n_features), size):
                assert not kcxai.is_cdrs(tree, x, s, delta)
        m = kcxai.min_cdrs(tree, x, delta)
        assert len(m) >= len(e) and kcxai.is_min_cdrs(tree, x, m.features, delta)


def test_limits_for_generic_oracles():
    tree = kcxai.datasets.running_example_tree()
    brute = kcxai.compile_model(tree, "brute")
    with pytest.raises(kcxai.ProblemTooLargeError, match="smallest_drs searches the subsets of 9 features"):
        kcxai.smallest_drs(brute, V, 0.97, max_subsets=100)
    with pytest.raises(kcxai.ProblemTooLargeError, match="is_smallest_drs"):
        kcxai.is_smallest_drs(brute, V, [0, 1, 2, 7, 8], 0.97, max_subsets=100)
    assert len(kcxai.smallest_drs(brute, V, 0.97)) == 5


def test_instances_as_arrays_and_names():
    tree = kcxai.datasets.running_example_tree()
    e = kcxai.smallest_drs(tree, np.array(V), 0.9)
    assert e.names == ("x1", "x9") and e.instance == V
    assert kcxai.is_smallest_idrs(tree, V, ["x1", "x9"], 0.03)
    with pytest.raises(kcxai.InvalidTypeError, match="'max_subsets' must be a positive int"):
        kcxai.smallest_drs(tree, V, 0.9, max_subsets=None)
