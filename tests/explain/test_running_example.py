"""The paper's running example (running_example.md): exact values, Table 3, both AXps."""

from fractions import Fraction

import pytest

import kcxai
from tests._support import reference as ref

V = (1, 1, 1, 1, 0, 0, 0, 0, 1)


@pytest.fixture(scope="module")
def tree():
    return kcxai.datasets.running_example_tree()


def test_prediction_and_path(tree):
    assert tree.predict(V) == 1
    assert tree.path_features(V) == (0, 1, 2, 3, 8)


@pytest.mark.parametrize("removed, expected", [
    (0, Fraction(1, 32)), (1, Fraction(1, 256)), (2, Fraction(1, 128)), (3, Fraction(7, 512)), (8, Fraction(15, 256)),
])
def test_table3_errors(tree, removed, expected):
    # Table 3 with the definition's values: the set after each try, cumulatively
    trace = {0: {1, 2, 3, 8}, 1: {0, 2, 3, 8}, 2: {0, 3, 8}, 3: {0, 8}, 8: {0}}
    assert kcxai.idrs_error(tree, V, trace[removed]) == expected
    assert ref.error(tree, V, trace[removed]) == expected


def test_table3_result(tree):
    e = kcxai.min_idrs(tree, V, 0.03, start="path", order=[0, 1, 2, 3, 8])
    assert e.features == (0, 8)
    assert e.names == ("x1", "x9")
    assert e.error == Fraction(7, 512)
    assert e.precision == 1 - Fraction(7, 512) / Fraction(1, 4)
    assert e.delta == Fraction(3, 100)
    assert e.prediction == 1
    assert e.language == "dt"
    assert e.oracle_calls == 7  # one to check the start, one per try, one for the final error


def test_algorithm1_from_all_features(tree):
    e = kcxai.min_idrs(tree, V, 0)
    assert e.features == (0, 1, 2, 7, 8)
    assert e.error == 0 and e.precision == 1


def test_the_two_axps(tree):
    axps = ref.minimal_sets(lambda s: ref.error(tree, V, s) == 0, 9)
    assert axps == {frozenset({0, 1, 2, 3, 8}), frozenset({0, 1, 2, 7, 8})}
    assert kcxai.is_min_idrs(tree, V, {0, 1, 2, 3, 8}, 0)
    assert not kcxai.is_min_idrs(tree, V, {0, 1, 2, 3, 7, 8}, 0)
    # the deletion order decides which AXp Algorithm 1 finds
    assert kcxai.min_idrs(tree, V, 0).features == (0, 1, 2, 7, 8)
    assert kcxai.min_idrs(tree, V, 0, order=[7]).features == (0, 1, 2, 3, 8)


def test_path_axp_is_relevant_at_zero(tree):
    assert kcxai.idrs_error(tree, V, [0, 1, 2, 3, 8]) == 0
    e = kcxai.min_idrs(tree, V, 0, start="path")
    assert e.features == (0, 1, 2, 3, 8)


def test_str_and_dict(tree):
    e = kcxai.min_idrs(tree, V, Fraction(3, 100), start="path")
    assert str(e).startswith("IF x1 = 1 AND x9 = 1 THEN class = 1")
    d = e.to_dict()
    assert d["error_exact"] == "7/512" and d["features"] == [0, 8] and d["size"] == 2
    assert "<code>x1 = 1</code>" in e._repr_html_()
