"""kcxai._params: each kind of argument rule accepts what it declares and refuses the rest with the one
message form ('name' must be <expected>. Got <got> instead.); the error class says whether the value's
type or its value was wrong; the sites that declare their rules there keep their messages."""

from __future__ import annotations

import math
import numbers
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._params import (BOOL, INT, NONE, NON_NEGATIVE_INT, OPEN_PROBABILITY, POSITIVE_INT, PROBABILITY, Instance,
                           Options, Range, check, validate_params)
from kcxai.space import SPACE


def refused(rules, value, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        check("x", value, rules)


# -- Instance -------------------------------------------------------------------------------------------

def test_instance_accepts_its_types_and_names_a_refused_value_by_type():
    rule = Instance(list, tuple, name="a list or tuple")
    assert check("x", [1], rule) == [1] and check("x", (1,), rule) == (1,)
    refused(rule, {1: 2}, InvalidTypeError, "'x' must be a list or tuple. Got dict instead.")


def test_bool_rule_takes_only_bools_and_shows_the_value():
    assert check("x", False, BOOL) is False
    refused(BOOL, 1, InvalidTypeError, "'x' must be True or False. Got 1 instead.")
    refused(BOOL, "yes", InvalidTypeError, "'x' must be True or False. Got 'yes' instead.")


# -- Range ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_bools_are_not_numbers(value):
    for rule in (POSITIVE_INT, NON_NEGATIVE_INT, INT, PROBABILITY):
        with pytest.raises(InvalidTypeError, match="Got"):
            check("x", value, rule)


def test_positive_and_non_negative_ints():
    assert check("x", 1, POSITIVE_INT) == 1 and check("x", 0, NON_NEGATIVE_INT) == 0
    refused(POSITIVE_INT, 0, InvalidInputError, "'x' must be a positive int. Got 0 instead.")
    refused(NON_NEGATIVE_INT, -1, InvalidInputError, "'x' must be a non-negative int. Got -1 instead.")
    refused(POSITIVE_INT, 1.0, InvalidTypeError, "'x' must be a positive int. Got 1.0 instead.")
    refused(POSITIVE_INT, "3", InvalidTypeError, "'x' must be a positive int. Got '3' instead.")


def test_int_means_python_int_unless_integral_is_asked_for():
    refused(POSITIVE_INT, np.int64(3), InvalidTypeError, "'x' must be a positive int. Got np.int64(3) instead.")
    assert check("x", np.int64(3), Range(numbers.Integral, 1)) == 3
    assert check("x", np.int64(-3), INT) == -3


def test_closed_and_open_ends():
    closed, open_ = PROBABILITY, OPEN_PROBABILITY
    for v in (0, 1, Fraction(1, 3), 0.5):
        assert check("x", v, closed) == v
    for v in (0, 1, 0.0, 1.0):
        refused(open_, v, InvalidInputError, f"'x' must be a number strictly between 0 and 1. Got {v!r} instead.")
    left = Range(numbers.Real, 0, 1, closed="left")
    assert check("x", 0, left) == 0
    refused(left, 1, InvalidInputError, "'x' must be a number in [0, 1). Got 1 instead.")
    right = Range(numbers.Real, 0, 1, closed="right")
    assert check("x", 1, right) == 1
    refused(right, 0, InvalidInputError, "'x' must be a number in (0, 1]. Got 0 instead.")


def test_nan_is_in_no_interval():
    for rule in (PROBABILITY, Range(numbers.Real), Range(numbers.Real, 0), Range(numbers.Real, None, 1)):
        with pytest.raises(InvalidInputError, match="Got nan instead"):
            check("x", math.nan, rule)


def test_unbounded_sides():
    assert check("x", math.inf, Range(numbers.Real, 0)) == math.inf
    assert check("x", -10**30, Range(numbers.Real, None, 1)) == -10**30
    refused(Range(numbers.Real, 0, closed="neither"), 0, InvalidInputError,
            "'x' must be a positive number. Got 0 instead.")
    refused(Range(numbers.Real, 0), -0.5, InvalidInputError, "'x' must be a non-negative number. Got -0.5 instead.")


@pytest.mark.parametrize("rule, said", [
    (Range(int, 1), "a positive int"), (Range(int, 0), "a non-negative int"),
    (Range(int, 0, closed="neither"), "a positive int"),
    (Range(int, 2), "an int >= 2"), (Range(int), "an int"), (Range(int, 1, 9), "an int in [1, 9]"),
    (Range(numbers.Real), "a real number"), (Range(numbers.Real, 0, closed="right"), "a positive number"),
    (Range(numbers.Real, 0, 1, closed="neither"), "a number strictly between 0 and 1"),
    (Range(numbers.Real, None, 1), "a number in (-inf, 1]"),
    (Range(int, 1, description="a count"), "a count"),
])
def test_descriptions(rule, said):
    assert rule.description == said


@settings(max_examples=200, deadline=None)
@given(low=st.one_of(st.none(), st.integers(-3, 3)), high=st.one_of(st.none(), st.integers(-3, 3)),
       closed=st.sampled_from(["both", "left", "right", "neither"]),
       value=st.one_of(st.integers(-5, 5), st.fractions(max_denominator=4), st.floats(allow_nan=True),
                       st.booleans(), st.text(max_size=1)))
def test_range_agrees_with_its_definition(low, high, closed, value):
    rule = Range(numbers.Real, low, high, closed=closed)
    is_number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    inside = is_number and value == value and (
        low is None or (low <= value if closed in ("both", "left") else low < value)) and (
        high is None or (value <= high if closed in ("both", "right") else value < high))
    assert rule.accepts(value) == inside
    if not inside:
        with pytest.raises(InvalidInputError if is_number else InvalidTypeError):
            check("x", value, rule)


def test_a_bad_closed_is_a_programming_error():
    with pytest.raises(ValueError, match="closed"):
        Range(int, 0, closed="open")


# -- Options and None -----------------------------------------------------------------------------------

def test_options():
    rule = Options(("hard", "soft", None, True))
    assert check("voting", "".join(["so", "ft"]), rule) == "soft"  # equal, not the same object
    assert check("voting", None, rule) is None and check("voting", True, rule) is True
    refused(rule, "mean", InvalidInputError, "'x' must be one of ['hard', 'soft', None, True]. Got 'mean' instead.")
    refused(rule, 1, InvalidInputError, "'x' must be one of ['hard', 'soft', None, True]. Got 1 instead.")
    refused(rule, ["hard"], InvalidInputError, "'x' must be one of ['hard', 'soft', None, True]. Got ['hard'] instead.")


def test_several_rules_are_said_in_order_and_one_suffices():
    assert check("x", None, (NONE, POSITIVE_INT)) is None and check("x", 4, (NONE, POSITIVE_INT)) == 4
    refused((NONE, POSITIVE_INT), 0, InvalidInputError, "'x' must be None or a positive int. Got 0 instead.")
    refused((POSITIVE_INT, NONE), "a", InvalidTypeError, "'x' must be a positive int or None. Got 'a' instead.")


# -- validate_params ------------------------------------------------------------------------------------

@validate_params(top=POSITIVE_INT, how=Options(("bar", "text")), scale=(NONE, PROBABILITY))
def _show(data, *, top=10, how="bar", scale=None):
    """A documented function."""
    return data, top, how, scale


def test_validate_params_checks_passed_arguments_and_keeps_the_signature():
    assert _show([], top=3, scale=0.5) == ([], 3, "bar", 0.5)
    with pytest.raises(InvalidInputError, match=r"^'top' must be a positive int. Got 0 instead.$"):
        _show([], top=0)
    with pytest.raises(InvalidTypeError,
                       match=r"^'scale' must be None or a real number in \[0, 1\]. Got '1' instead.$"):
        _show([], scale="1")
    assert str(__import__("inspect").signature(_show)) == "(data, *, top=10, how='bar', scale=None)"
    assert _show.__doc__ == "A documented function."


def test_validate_params_checks_defaults_too():
    @validate_params(n=POSITIVE_INT)
    def f(n=0):
        return n

    with pytest.raises(InvalidInputError, match="'n' must be a positive int. Got 0 instead."):
        f()


def test_a_call_that_does_not_fit_gets_pythons_own_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'tpo'"):
        _show([], tpo=3)


def test_a_table_naming_no_argument_is_refused_when_declared():
    with pytest.raises(TypeError, match=r"has no argument \['size'\]"):
        validate_params(size=POSITIVE_INT)(lambda n: n)


# -- the sites that declare their rules here keep their messages ------------------------------------------

def _models_given(space):
    from kcxai.models.forest import RandomForest
    return [
        lambda: kcxai.DecisionTree(space, [0, 1], kcxai.Leaf(0)),
        lambda: RandomForest(space, [0, 1], []),
        lambda: kcxai.BoostedTrees(space, [0, 1], [], []),
        lambda: kcxai.BddClassifier(space, [0, 1], [], 0),
        lambda: kcxai.DecisionList(space, [0, 1], [], 0),
        lambda: kcxai.RuleSet(space, [0, 1], [], 0),
        lambda: kcxai.LinearClassifier(space, [0, 1], [1]),
        lambda: kcxai.NaiveBayes(space, [0, 1], [1, 1], []),
    ]


@pytest.mark.parametrize("i", range(8))
def test_every_model_constructor_refuses_a_space_that_is_not_one(i):
    with pytest.raises(InvalidTypeError, match=r"^'space' must be a FeatureSpace. Got dict instead.$"):
        _models_given({"x": [0, 1]})[i]()
    assert SPACE.accepts(kcxai.datasets.running_example_tree().space)


@pytest.mark.parametrize("call, error, message", [
    (lambda t: kcxai.min_idrs(t, (1,) * 9, 0.1, inflate=1), InvalidTypeError,
     "'inflate' must be None or True or False. Got 1 instead."),
    (lambda t: kcxai.min_cdrs(t, (1,) * 9, 0.9, max_subsets=0), InvalidInputError,
     "'max_subsets' must be a positive int. Got 0 instead."),
    (lambda t: kcxai.min_cdrs(t, (1,) * 9, 0.9, max_subsets=True), InvalidTypeError,
     "'max_subsets' must be a positive int. Got True instead."),
    (lambda t: list(kcxai.enumerate_idrs(t, (1,) * 9, 0, limit=-1)), InvalidInputError,
     "'limit' must be None or a non-negative int. Got -1 instead."),
    (lambda t: kcxai.Explainer(t).explain([(1,) * 9], on_error="skip"), InvalidInputError,
     "'on_error' must be one of ['raise', 'report']. Got 'skip' instead."),
    (lambda t: kcxai.compile_model(t, "obdd", max_nodes=0), InvalidInputError,
     "'max_nodes' must be a positive int or None. Got 0 instead."),
    (lambda t: kcxai.compile_model(t, "sampling", confidence=1.0), InvalidInputError,
     "'confidence' must be a number strictly between 0 and 1. Got 1.0 instead."),
    (lambda t: kcxai.fit_distribution(t, [(1,) * 9], kind="gauss"), InvalidInputError,
     "'kind' must be one of ['uniform', 'product', 'mixture']. Got 'gauss' instead."),
    (lambda t: kcxai.fit_distribution(t, [(1,) * 9], tol=-1), InvalidInputError,
     "'tol' must be a non-negative number. Got -1 instead."),
    (lambda t: kcxai.fit_distribution(t, [(1,) * 9], random_state=1.5), InvalidTypeError,
     "'random_state' must be an int. Got 1.5 instead."),
])
def test_sites_keep_their_messages(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call(kcxai.datasets.running_example_tree())
