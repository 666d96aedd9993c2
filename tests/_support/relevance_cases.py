"""Random cases for the relevant-set tests: a model (a tree with its own oracle, a tree through the generic
brute-force oracle, or another family), an instance, and the table of every subset's error and precision
(:class:`set_reference.SubsetTable`); thresholds and error bounds that sometimes hit a set's value exactly."""

from fractions import Fraction

from hypothesis import strategies as st

import kcxai
from tests._support.model_strategies import decision_lists, forests, linear_models, naive_bayes_models, rule_sets
from tests._support.set_reference import SubsetTable
from tests._support.strategies import EXACT_KINDS, deltas, instance_of, points, trees

#: Precision thresholds: exact fractions, decimals, the ends.
thresholds = st.one_of(st.fractions(min_value=0, max_value=1, max_denominator=40),
                       st.sampled_from([0, 1, 0.5, 0.8, 0.9, 0.95, 0.99]))


def other_models(distributions=EXACT_KINDS):
    return st.one_of(decision_lists(distributions=distributions), rule_sets(distributions=distributions),
                     naive_bayes_models(distributions=distributions), linear_models(distributions=distributions),
                     forests(distributions=distributions))


@st.composite
def cases(draw, family="tree", distributions=EXACT_KINDS):
    """(object to explain, model, instance, point, table): a tree with its own oracle, a tree compiled to
    the brute-force oracle (the generic search), or another model family (also the brute-force oracle,
    until the OBDD/SDD compilers land)."""
    if family == "other":
        model = draw(other_models(distributions))
    else:
        model = draw(trees(distributions=distributions))
    obj = kcxai.compile_model(model, "brute") if family != "tree" else model
    point = draw(points(model.space))
    return obj, model, instance_of(model.space, point), point, SubsetTable(model, point)


@st.composite
def with_delta(draw, case):
    """A threshold, sometimes exactly the precision of some set (ties decide relevance)."""
    table = case[4]
    if draw(st.booleans()):
        return draw(st.sampled_from(sorted({table.precision(s) for s in table.sets})))
    return draw(thresholds)


def exact_delta(delta, table):
    return delta if not table.exact else Fraction(str(delta)) if isinstance(delta, float) else Fraction(delta)


FAMILIES = ["tree", "brute", "other"]


@st.composite
def error_bounds(draw, table):
    """An error bound, sometimes exactly the error of some set."""
    if draw(st.booleans()):
        return draw(st.sampled_from(sorted({table.error(s) for s in table.sets})))
    return draw(deltas)
