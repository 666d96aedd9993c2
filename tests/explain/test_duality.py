"""Dual sets and enumeration (min_dual_idrs, is_dual_idrs, is_min_dual_idrs, enumerate_idrs) against brute
force, and the paper's Proposition "dual": each side is the minimal hitting sets of the other."""

import itertools

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import kcxai
from tests._support.set_reference import minimal, minimal_hitting_sets, near
from tests._support.relevance_cases import FAMILIES, cases, error_bounds, exact_delta

V = (1, 1, 1, 1, 0, 0, 0, 0, 1)
AXPS = {frozenset({0, 1, 2, 3, 8}), frozenset({0, 1, 2, 7, 8})}
CXPS = {frozenset({0}), frozenset({1}), frozenset({2}), frozenset({8}), frozenset({3, 7})}


@pytest.mark.parametrize("family", FAMILIES)
@given(data=st.data())
def test_enumeration_equals_brute_force_and_the_sides_are_dual(family, data):
    obj, model, x, point, table = data.draw(cases(family))
    delta = data.draw(error_bounds(table))
    found = list(kcxai.enumerate_idrs(obj, x, delta))
    relevant = [frozenset(e.features) for e in found if e.kind == "relevant"]
    dual = [frozenset(e.features) for e in found if e.kind == "dual"]
    assert len(set(relevant)) == len(relevant) and len(set(dual)) == len(dual)  # each set once
    d = found[0].delta
    c_min = minimal(table.idrs(d))
    d_min = minimal(table.duals(d))
    assert set(relevant) == c_min and set(dual) == d_min
    n = model.space.n_features
    assert c_min == minimal_hitting_sets(d_min, n) and d_min == minimal_hitting_sets(c_min, n)  # Prop. dual
    for e in found:
        assert e.method == "enumerate_idrs" and e.delta == d
        fixed = e.features if e.kind == "relevant" else table.complement(e.features)
        assert (e.error, e.precision) == (table.error(fixed), table.precision(fixed))
        assert (e.error <= d) == (e.kind == "relevant")


@given(data=st.data())
def test_limit_stops_the_enumeration(data):
    obj, model, x, point, table = data.draw(cases("tree"))
    delta = data.draw(error_bounds(table))
    full = [(e.kind, e.features) for e in kcxai.enumerate_idrs(obj, x, delta)]
    limit = data.draw(st.integers(0, len(full) + 2))
    some = [(e.kind, e.features) for e in kcxai.enumerate_idrs(obj, x, delta, limit=limit)]
    assert some == full[:limit]


@pytest.mark.parametrize("family", FAMILIES)
@given(data=st.data())
def test_min_dual_idrs_is_dual_and_subset_minimal(family, data):
    obj, model, x, point, table = data.draw(cases(family, ("uniform", "exact", "float")))
    delta = data.draw(error_bounds(table))
    order = data.draw(st.permutations(range(model.space.n_features)))
    everything = frozenset(range(model.space.n_features))
    d0 = exact_delta(delta, table)
    assume(not near(table.error(frozenset()), d0))
    if table.error(frozenset()) <= d0:
        with pytest.raises(kcxai.InvalidInputError, match="No dual set exists"):
            kcxai.min_dual_idrs(obj, x, delta)
        return
    duals = table.duals(d0)
    start = data.draw(st.sampled_from([None] + duals))
    try:
        e = kcxai.min_dual_idrs(obj, x, delta, order=order, start=start)
    except kcxai.InvalidInputError:  # a float tie in the float space: the library and the table disagree
        assume(False)
    t = frozenset(e.features)
    d = exact_delta(e.delta, table)
    assume(not any(near(table.error(table.complement(r)), d) for r in [t] + [t - {i} for i in t]))
    assert table.error(table.complement(t)) > d
    assert all(table.error(table.complement(t - {i})) <= d for i in t)
    assert e.kind == "dual" and e.method == "min_dual_idrs"
    assert t <= (everything if start is None else start)
    if table.exact:
        assert (e.error, e.precision) == (table.error(everything - t), table.precision(everything - t))


@pytest.mark.parametrize("family", FAMILIES)
@given(data=st.data())
def test_dual_checkers_match_brute_force(family, data):
    obj, model, x, point, table = data.draw(cases(family))
    delta = data.draw(error_bounds(table))
    t = data.draw(st.sampled_from(table.sets))
    d = exact_delta(delta, table)
    assert kcxai.is_dual_idrs(obj, x, t, delta) == (table.error(table.complement(t)) > d)
    assert kcxai.is_min_dual_idrs(obj, x, t, delta) == (t in minimal(table.duals(d)))


def test_running_example_axps_and_cxps():
    tree = kcxai.datasets.running_example_tree()
    for obj in (tree, kcxai.compile_model(tree, "brute")):
        found = list(kcxai.enumerate_idrs(obj, V, 0))
        assert {frozenset(e.features) for e in found if e.kind == "relevant"} == AXPS
        assert {frozenset(e.features) for e in found if e.kind == "dual"} == CXPS
        assert all(e.error == 0 for e in found if e.kind == "relevant")
        assert all(e.error > 0 and e.precision < 1 for e in found if e.kind == "dual")
    assert frozenset(kcxai.min_dual_idrs(tree, V, 0).features) in CXPS
    assert kcxai.min_dual_idrs(tree, V, 0, order=[3, 7], start=[3, 7]).names == ("x4", "x8")
    for t in CXPS:
        assert kcxai.is_min_dual_idrs(tree, V, t, 0)
    # with delta = 0.03 the relevant sets grow fewer and smaller
    relevant = [e for e in kcxai.enumerate_idrs(tree, V, 0.03) if e.kind == "relevant"]
    assert frozenset({0, 8}) in {frozenset(e.features) for e in relevant}
    assert list(itertools.islice(kcxai.enumerate_idrs(tree, V, 0), 2)) != []


def test_edge_cases_and_errors():
    tree = kcxai.datasets.running_example_tree()
    # delta above Pr(kappa != c): the empty set is relevant and no dual set exists
    assert [(e.kind, e.features) for e in kcxai.enumerate_idrs(tree, V, 0.6)] == [("relevant", ())]
    with pytest.raises(kcxai.InvalidInputError, match=r"No dual set exists for 'delta' = 3/5 .*143/256"):
        kcxai.min_dual_idrs(tree, V, 0.6)
    with pytest.raises(kcxai.NotRelevantError, match="'start' must be a dual set"):
        kcxai.min_dual_idrs(tree, V, 0, start=[4, 5])
    with pytest.raises(kcxai.InvalidTypeError, match="'start' must be a collection of features. Got 'path'"):
        kcxai.min_dual_idrs(tree, V, 0, start="path")
    with pytest.raises(kcxai.InvalidInputError, match="'limit' must be None or a non-negative int. Got -1"):
        kcxai.enumerate_idrs(tree, V, 0, limit=-1)  # checked at the call, before iterating
    with pytest.raises(kcxai.InvalidTypeError, match="'limit' must be None or a non-negative int. Got 2.0"):
        kcxai.enumerate_idrs(tree, V, 0, limit=2.0)
    assert list(kcxai.enumerate_idrs(tree, V, 0, limit=0)) == []
