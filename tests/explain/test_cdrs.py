"""C-delta-relevant sets (local_cdrs, min_cdrs, is_cdrs, is_min_cdrs) against brute force over all subsets."""

from fractions import Fraction

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import kcxai
from kcxai.explain._treesat import TreePrecision, TreeSearch
from tests._support.relevance_cases import FAMILIES, cases, exact_delta, thresholds, with_delta
from tests._support.set_reference import SubsetTable, minimal, near
from tests._support.strategies import instance_of, points, trees

V = (1, 1, 1, 1, 0, 0, 0, 0, 1)


@pytest.mark.parametrize("family", FAMILIES)
@given(data=st.data())
def test_local_cdrs_is_relevant_and_locally_minimal(family, data):
    obj, model, x, point, table = data.draw(cases(family, ("uniform", "exact", "float")))
    delta = data.draw(with_delta((obj, model, x, point, table)))
    order = data.draw(st.permutations(range(model.space.n_features)))
    start = data.draw(st.sampled_from([None, "path"])) if isinstance(model, kcxai.DecisionTree) else None
    e = kcxai.local_cdrs(obj, x, delta, order=order, start=start)
    s = frozenset(e.features)
    d = exact_delta(delta, table)
    assume(not any(near(table.precision(r), d) for r in [s] + [s - {i} for i in s]))
    assert table.precision(s) >= d
    assert all(table.precision(s - {i}) < d for i in s)
    assert e.precision == pytest.approx(table.precision(s), abs=1e-12) if not table.exact else (
        e.precision == table.precision(s) and e.error == table.error(s))
    assert e.method == "local_cdrs" and e.kind == "relevant"
    if start == "path":
        assert s <= set(model.path_features(x))


@pytest.mark.parametrize("family", FAMILIES)
@given(data=st.data())
def test_min_cdrs_is_subset_minimal(family, data):
    case = data.draw(cases(family))
    obj, model, x, point, table = case
    delta = data.draw(with_delta(case))
    start = None
    if data.draw(st.booleans()):
        start = data.draw(st.sampled_from(table.cdrs(exact_delta(delta, table))))
    e = kcxai.min_cdrs(obj, x, delta, start=start)
    s = frozenset(e.features)
    d = e.precision_bound
    relevant = table.cdrs(d)
    assert s in minimal(relevant)  # relevant, and no proper subset of any size is
    assert (e.precision, e.error) == (table.precision(s), table.error(s))
    if start is not None:
        assert s <= start


@pytest.mark.parametrize("family", FAMILIES)
@given(data=st.data())
def test_checkers_match_brute_force(family, data):
    case = data.draw(cases(family))
    obj, model, x, point, table = case
    delta = data.draw(with_delta(case))
    s = data.draw(st.sampled_from(table.sets))
    d = exact_delta(delta, table)
    assert kcxai.is_cdrs(obj, x, s, delta) == (table.precision(s) >= d)
    assert kcxai.is_min_cdrs(obj, x, s, delta) == (s in minimal(table.cdrs(d)))


@given(trees(distributions=("uniform", "exact", "float")), st.data())
def test_path_engine_precision_equals_the_definition(tree, data):
    point = data.draw(points(tree.space))
    table = SubsetTable(tree, point)
    engine = TreePrecision(tree.paths, tree.space, point, tree.predict_point(point), Fraction(1, 2))
    for s in table.sets:
        if tree.space.is_exact:
            assert engine.precision(s) == table.precision(s)
        else:
            assert engine.precision(s) == pytest.approx(table.precision(s), abs=1e-12)
    # features no path restricts never matter
    assert set(engine.active) == {f for p in tree.paths for f, _ in p.masks}


@given(trees(distributions=("uniform", "exact")), st.data())  # the path engine needs a product distribution
def test_path_engine_cuts_are_sound(tree, data):
    """Every partial choice a cut rules out has no relevant completion (checked exhaustively)."""
    point = data.draw(points(tree.space))
    delta = data.draw(thresholds)
    delta = Fraction(str(delta)) if isinstance(delta, float) else Fraction(delta)
    table = SubsetTable(tree, point)
    engine = TreePrecision(tree.paths, tree.space, point, tree.predict_point(point), delta)
    active = frozenset(engine.active)
    for s in table.sets:
        s = s & active
        if table.precision(s) >= delta:
            continue
        for a_set, b_set in engine.cuts(s):
            assert a_set <= s and not b_set & s
            for r in table.sets:
                if a_set <= r and not b_set & r:
                    assert table.precision(r) < delta


@given(trees(distributions=("uniform", "exact")), st.data())
def test_tree_search_finds_exactly_the_relevant_proper_subsets(tree, data):
    point = data.draw(points(tree.space))
    table = SubsetTable(tree, point)
    delta = data.draw(st.sampled_from(sorted({table.precision(s) for s in table.sets})))
    engine = TreePrecision(tree.paths, tree.space, point, tree.predict_point(point), delta)
    relevant = set(table.cdrs(delta))
    with TreeSearch(engine) as search:  # one solver, several queries: cuts carry over
        for s in data.draw(st.lists(st.sampled_from(sorted(relevant, key=sorted)), max_size=4)):
            found = search.proper_subset(s)
            if any(r < s for r in relevant):
                assert found is not None and found < s and found in relevant
            else:
                assert found is None


def test_running_example():
    tree = kcxai.datasets.running_example_tree()
    # precision is not monotone: {x1, x9} reaches 121/128, adding x3 lowers it to 59/64
    assert kcxai.precision(tree, V, ["x1", "x9"]) == Fraction(121, 128)
    assert kcxai.precision(tree, V, ["x1", "x3", "x9"]) == Fraction(59, 64)
    e = kcxai.min_cdrs(tree, V, Fraction(121, 128))
    assert e.names == ("x1", "x9") and e.precision == Fraction(121, 128)
    assert not kcxai.is_cdrs(tree, V, ["x1", "x9"], Fraction(121, 128) + Fraction(1, 10**9))
    # delta = 1: C-delta-relevant sets are the AXp's supersets (precision 1 means error 0)
    assert set(kcxai.min_cdrs(tree, V, 1).features) in ({0, 1, 2, 3, 8}, {0, 1, 2, 7, 8})
    assert kcxai.local_cdrs(tree, V, 0).features == ()


def test_the_papers_constant_path_weights_are_not_the_precision():
    """With Pr(R_j) as constant weights the paper's inequality would give 113/120 for S = {1, 9}."""
    tree = kcxai.datasets.running_example_tree()
    point = tree.space.encode(V)
    kept = [p for p in tree.paths if all(f not in (0, 8) or m >> point[f] & 1 for f, m in p.masks)]
    pr = {p.leaf: Fraction(1, 2 ** len(p.masks)) for p in kept}
    paper = sum(pr[p.leaf] for p in kept if p.label == 1) / sum(pr.values())
    assert paper == Fraction(113, 120)
    assert kcxai.precision(tree, V, [0, 8]) == Fraction(121, 128)
    engine = TreePrecision(tree.paths, tree.space, point, 1, Fraction(1, 2))
    assert engine.precision({0, 8}) == Fraction(121, 128)


def test_local_minimum_need_not_be_subset_minimal():
    """kappa = 1 unless exactly two of three bits are 1, at v = (1, 1, 1): precision 5/8 with nothing
    fixed, 1/2 with one or two features fixed, 1 with all three. At delta = 5/8 no single feature can
    be dropped from F, yet the empty set is relevant: only min_cdrs finds it."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"x{i}", [0, 1]) for i in range(3)])
    twos = [(1, 1, 0), (1, 0, 1), (0, 1, 1)]
    dlist = kcxai.DecisionList(space, [0, 1], [([(i, [b]) for i, b in enumerate(p)], 0) for p in twos], 1)
    L, S = kcxai.Leaf, kcxai.Split
    tree = kcxai.DecisionTree(space, [0, 1], S("x0", {
        0: S("x1", {0: L(1), 1: S("x2", {0: L(1), 1: L(0)})}),
        1: S("x1", {0: S("x2", {0: L(1), 1: L(0)}), 1: S("x2", {0: L(0), 1: L(1)})})}))
    x, delta = (1, 1, 1), Fraction(5, 8)
    for model in (kcxai.compile_model(dlist, "brute"), tree, kcxai.compile_model(tree, "brute")):
        assert kcxai.precision(model, x, []) == delta
        assert kcxai.local_cdrs(model, x, delta).features == (0, 1, 2)
        assert not kcxai.is_min_cdrs(model, x, [0, 1, 2], delta)
        assert kcxai.min_cdrs(model, x, delta).features == ()
        assert kcxai.smallest_drs(model, x, delta).features == ()


def test_min_cdrs_limit_for_generic_oracles():
    tree = kcxai.datasets.running_example_tree()
    brute = kcxai.compile_model(tree, "brute")
    with pytest.raises(kcxai.ProblemTooLargeError, match="'max_subsets' = 3"):
        kcxai.min_cdrs(brute, V, 0.97, max_subsets=3)
    with pytest.raises(kcxai.ProblemTooLargeError, match="is_min_cdrs"):
        kcxai.is_min_cdrs(brute, V, [0, 1, 2, 7, 8], 0.97, max_subsets=3)
    assert kcxai.min_cdrs(tree, V, 0.97, max_subsets=1).names == ("x1", "x2", "x3", "x8", "x9")  # SAT: no limit
    assert kcxai.min_cdrs(brute, V, 0.97).names == ("x1", "x2", "x3", "x8", "x9")


def test_input_errors():
    tree = kcxai.datasets.running_example_tree()
    with pytest.raises(kcxai.NotRelevantError,
                       match="'start' must be a C-delta-relevant set: its precision is 113/256"):
        kcxai.local_cdrs(tree, V, 0.9, start=[])
    with pytest.raises(kcxai.NotRelevantError, match="below precision = 9/10"):
        kcxai.min_cdrs(tree, V, 0.9, start=["x9"])
    with pytest.raises(kcxai.InvalidTypeError, match="'max_subsets' must be a positive int. Got 1.5"):
        kcxai.min_cdrs(tree, V, 0.9, max_subsets=1.5)
    with pytest.raises(kcxai.InvalidInputError, match="'max_subsets' must be a positive int. Got 0"):
        kcxai.is_min_cdrs(tree, V, [0], 0.9, max_subsets=0)
    with pytest.raises(kcxai.InvalidInputError, match="'precision' must be in"):
        kcxai.local_cdrs(tree, V, 1.5)
    with pytest.raises(kcxai.InvalidInputError, match="Unknown feature 'x10'"):
        kcxai.is_cdrs(tree, V, ["x10"], 0.9)


@pytest.mark.parametrize("fn", [kcxai.min_cdrs, kcxai.smallest_drs])
@given(trees(distributions=("float",)), st.data())
def test_tree_search_in_float_spaces(fn, tree, data):
    """Float weights: the same SAT search in floating point; checked away from float ties."""
    point = data.draw(points(tree.space))
    table = SubsetTable(tree, point)
    delta = data.draw(thresholds)
    d = float(delta)
    assume(not any(near(table.precision(s), d, 1e-7) for s in table.sets))
    e = fn(tree, instance_of(tree.space, point), delta)
    s = frozenset(e.features)
    relevant = table.cdrs(d)
    assert s in relevant and e.precision == pytest.approx(table.precision(s), abs=1e-12)
    if fn is kcxai.min_cdrs:
        assert s in minimal(relevant)
    else:
        assert len(s) == min(len(r) for r in relevant)
