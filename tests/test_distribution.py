"""Distributions: mixtures counted exactly, fitting from data, on-data evaluation, JSON, bad input."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai.distribution import Mixture, Product, Uniform
from tests._support.reference import all_points, point_probability
from tests._support.strategies import feature_spaces, trees


@given(feature_spaces(distributions=("uniform", "exact", "mixture", "float", "float_mixture")), st.data())
def test_weights_are_the_parameters_as_given(space, data):
    """Point and consistent weights equal the reference's probabilities (from the raw parameters)."""
    total = space.total_weight
    points = all_points(space)
    probs = [point_probability(space, x) for x in points]
    if space.is_exact:
        assert sum(probs) == 1
        assert all(space.probability(space.point_weight(x)) == p for x, p in zip(points, probs))
    else:
        assert abs(sum(probs) - 1) < 1e-9
        assert all(abs(space.probability(space.point_weight(x)) - p) < 1e-9 for x, p in zip(points, probs))
    v = data.draw(st.sampled_from(points))
    fixed = data.draw(st.sets(st.integers(0, space.n_features - 1)))
    want = sum(p for x, p in zip(points, probs) if all(x[i] == v[i] for i in fixed))
    got = space.probability(space.consistent_weight(v, fixed))
    assert got == want if space.is_exact else abs(got - want) < 1e-9
    for f, size in enumerate(space.domain_sizes):
        for k in range(size):
            marg = sum(p for x, p in zip(points, probs) if x[f] == k)
            assert space.value_probability(f, k) == marg if space.is_exact else abs(
                space.value_probability(f, k) - marg) < 1e-9
    assert total == space.distribution.total_weight


@given(trees(distributions=("mixture",)), st.data())
@settings(max_examples=40)
def test_mixture_oracle_is_the_weighted_sum_of_its_components(tree, data):
    """dt, sdd, obdd under a mixture equal sum_k pi_k * (the same query under component k alone)."""
    dist = tree.space.distribution
    point = data.draw(st.sampled_from(all_points(tree.space)))
    fixed = frozenset(data.draw(st.sets(st.integers(0, tree.space.n_features - 1))))
    label = tree.predict_point(point)
    pis = [Fraction(p) for p in dist.mixing]
    for language in ("dt", "sdd", "obdd"):
        whole = kcxai.compile_model(tree, language).oracle
        mixed = tree.space.probability(whole.disagree_weight(point, label, fixed))
        parts = [tree.with_distribution(c) for c in dist.parts]
        by_part = [p.space.probability(kcxai.compile_model(p, language).oracle.disagree_weight(point, label, fixed))
                   for p in parts]
        assert mixed == sum(pi * b for pi, b in zip(pis, by_part)) / sum(pis)


def test_mixture_counts_past_64_bits_exactly():
    """70 binary features, 3 components: counts are Python ints far past 2**64 and match the definition."""
    n = 70
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"b{i}", [0, 1]) for i in range(n)])
    mix = Mixture([1, 2, 3], [Product([[1, 2]] * n), Product([[3, 1]] * n), Uniform([2] * n)])
    space = space.with_distribution(mix)
    tree = kcxai.DecisionTree(space, [0, 1], kcxai.Split("b0", {0: kcxai.Leaf(0), 1: kcxai.Split(
        "b69", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1)})}))
    assert space.total_weight > 2**64
    point = (1,) * n
    # Pr(kappa != 1 and x_b5 = 1) = Pr(b5 = 1) * (1 - Pr(b0 = 1, b69 = 1)) per component
    comps = [(Fraction(1, 6), Fraction(2, 3)), (Fraction(2, 6), Fraction(1, 4)), (Fraction(3, 6), Fraction(1, 2))]
    want = sum(pi * q * (1 - q * q) for pi, q in comps)
    for language in ("dt", "sdd", "obdd"):
        assert kcxai.idrs_error(kcxai.compile_model(tree, language), point, ["b5"]) == want


def _rows(draw, space, n):
    return [[space.features[f].values[draw(st.integers(0, space.features[f].size - 1))] if not
             space.features[f].is_numeric
             else _inside(space.features[f], draw(st.integers(0, space.features[f].size - 1)))
             for f in range(space.n_features)] for _ in range(n)]


def _inside(feature, k):
    iv = feature.values[k]
    if iv.high == float("inf"):
        return iv.low + 1.0 if iv.low != float("-inf") else 0.0
    return iv.high


@given(feature_spaces(distributions=("uniform",)), st.data())
def test_product_fit_is_counts_plus_smoothing(space, data):
    rows = data.draw(st.integers(1, 30).flatmap(lambda n: st.just(n)))
    X = _rows(data.draw, space, rows)
    alpha = data.draw(st.sampled_from([1, Fraction(1, 2), 3]))
    p = kcxai.fit_distribution(space, X, smoothing=alpha)
    assert p.kind == "product" and p.is_exact
    codes = [space.encode(r) for r in X]
    for f, size in enumerate(space.domain_sizes):
        counts = [sum(1 for c in codes if c[f] == k) for k in range(size)]
        for k in range(size):
            assert p.value_probability(f, k) == Fraction(counts[k] + alpha) / (len(X) + alpha * size)


def _planted(seed=0, n=600):
    """Two binary features that are copies of each other, a third independent one."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    return np.column_stack([a, a, rng.integers(0, 2, n)])


def _log_likelihood(dist, codes):
    return sum(float(np.log(float(dist.probability(dist.point_weight(tuple(r)))))) for r in codes)


def test_mixture_fit_captures_dependencies_and_is_exact():
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in ("a", "a_copy", "b")])
    X = _planted()
    prod = kcxai.fit_distribution(space, X, kind="product")
    mix = kcxai.fit_distribution(space, X, kind="mixture", n_components=2, random_state=1)
    assert mix.kind == "mixture" and mix.is_exact and mix.n_components == 2
    for part in mix.parts:  # stored probabilities: integers summing to the resolution per feature, all positive
        assert all(sum(ws) == kcxai.fit.DEFAULT_RESOLUTION and min(ws) >= 1 for ws in part.raw)
    assert sum(mix.mixing) == kcxai.fit.DEFAULT_RESOLUTION
    # the copies agree: a product puts ~1/2 of the mass where they differ, the mixture almost none
    differ = [(0, 1, 0), (0, 1, 1), (1, 0, 0), (1, 0, 1)]
    p_prod = sum(prod.probability(prod.point_weight(x)) for x in differ)
    p_mix = sum(mix.probability(mix.point_weight(x)) for x in differ)
    assert p_prod > Fraction(4, 10) and p_mix < Fraction(1, 100)
    assert _log_likelihood(mix, X) > _log_likelihood(prod, X)
    # reproducible from the seed
    again = kcxai.fit_distribution(space, X, kind="mixture", n_components=2, random_state=1)
    assert again == mix


def test_fitted_model_round_trips_through_json(tmp_path):
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in ("a", "a_copy", "b")])
    tree = kcxai.DecisionTree(space, ["no", "yes"], kcxai.Split("a", {0: kcxai.Leaf("no"), 1: kcxai.Split(
        "b", {0: kcxai.Leaf("no"), 1: kcxai.Leaf("yes")})}))
    fitted = tree.with_distribution(kcxai.fit_distribution(tree, _planted(), kind="mixture", n_components=3))
    path = tmp_path / "m.json"
    fitted.save(path)
    d = json.loads(path.read_text())
    assert d["version"] == 2 and d["space"]["distribution"]["kind"] == "mixture"
    again = kcxai.load_model(path)
    assert again.space == fitted.space and again.space.distribution.kind == "mixture"
    v = (1, 1, 1)
    assert kcxai.min_idrs(again, v, 0.05) == kcxai.min_idrs(fitted, v, 0.05)
    assert json.loads(tree.to_json())["version"] == 1  # uniform models stay readable by older readers


def test_explanations_report_coverage_and_distribution():
    tree = kcxai.datasets.running_example_tree()
    v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    e = kcxai.min_idrs(tree, v, 0.03, start="path")
    assert e.coverage == Fraction(1, 4) and e.distribution == "uniform" and not e.approximate
    assert "coverage 1/4" in str(e) and "exact, under the uniform distribution" in str(e)
    assert "not fitted to data" in str(e) and "not fitted to data" in e._repr_html_()  # the paper's setting, named
    mix = Mixture([1, 1], [Product([[1, 3]] * 9), Uniform([2] * 9)])
    e2 = kcxai.min_idrs(tree.with_distribution(mix), v, 0.03, start="path")
    assert e2.distribution == "mixture of 2" and e2.coverage == kcxai.FeatureSpace(
        tree.space.features, distribution=mix).probability(
        mix.consistent_weight(v, set(e2.features)))
    assert e2.to_dict()["coverage_exact"] == str(e2.coverage)


@given(trees(distributions=("uniform", "exact", "mixture")), st.data())
@settings(max_examples=40)
def test_evaluate_on_data_counts_matching_rows(tree, data):
    space = tree.space
    points = all_points(space)
    v = data.draw(st.sampled_from(points))
    inst = tuple(space.features[i].values[k] if not space.features[i].is_numeric else _inside(space.features[i], k)
                 for i, k in enumerate(v))
    e = kcxai.min_idrs(tree, inst, data.draw(st.sampled_from([0, Fraction(1, 10), Fraction(1, 3)])))
    rows = [data.draw(st.sampled_from(points)) for _ in range(data.draw(st.integers(1, 20)))]
    X = [[space.features[i].values[k] if not space.features[i].is_numeric else _inside(space.features[i], k)
          for i, k in enumerate(r)] for r in rows]
    m = kcxai.evaluate_on_data(tree, e, X)
    allowed = ({c.feature: set(c.values) for c in e.conditions} if e.conditions is not None  # widened (delta 0)
               else {i: {v[i]} for i in e.features})
    match = [r for r in rows if all(r[i] in vals for i, vals in allowed.items())]
    agree = [r for r in match if tree.predict_point(r) == tree.predict_point(v)]
    assert (m.rows, m.matching, m.agreeing) == (len(rows), len(match), len(agree))
    assert m.precision == (None if not match else Fraction(len(agree), len(match)))


def test_bad_input_names_the_argument():
    space = kcxai.FeatureSpace([kcxai.Feature.categorical("a", [0, 1]), kcxai.Feature.numeric("x", [5])])
    cases = [
        (dict(X=[[0]]), "'X' must have 2 columns"),
        (dict(X=[]), "'X' must have at least one row"),
        (dict(X=[[0, float("nan")]]), r"'X', row 0, column 'x'"),
        (dict(X=[[0, 1.0], [7, 1.0]]), r"'X', row 1, column 'a': .*must take one of the values"),
        (dict(X=[[0, 1.0]], kind="mixture", n_components=0), "'n_components' must be a positive int. Got 0"),
        (dict(X=[[0, 1.0]], kind="tree"), r"'kind' must be one of \['uniform', 'product', 'mixture'\]"),
        (dict(X=[[0, 1.0]], smoothing=0), "'smoothing' must be positive"),
        (dict(X="rows"), "'X' must be a 2-D array"),
    ]
    for kwargs, message in cases:
        with pytest.raises(kcxai.KcxaiError, match=message):
            kcxai.fit_distribution(space, **kwargs)
    pd = pytest.importorskip("pandas")
    with pytest.raises(kcxai.InvalidInputError, match=r"Missing \['x'\], unexpected \['y'\]"):
        kcxai.fit_distribution(space, pd.DataFrame({"a": [0], "y": [1.0]}))
    frame = pd.DataFrame({"x": [1.0, 9.0], "a": [1, 0]})  # columns read by name, in any order
    assert kcxai.fit_distribution(space, frame).value_probability(1, 1) == Fraction(2, 4)
    with pytest.raises(kcxai.InvalidInputError, match="domains of sizes"):
        space.with_distribution(Product([[1, 2, 3], [1, 1]]))
    with pytest.raises(kcxai.InvalidInputError, match="share their domain sizes"):
        Mixture([1, 1], [Product([[1, 2]]), Product([[1, 2, 3]])])
    with pytest.raises(kcxai.InvalidInputError, match="must be positive"):
        Mixture([0, 1], [Product([[1, 2]]), Product([[1, 2]])])


def test_path_engine_not_used_under_mixtures_and_results_still_exact():
    """min_cdrs / smallest_drs on a tree under a mixture take the generic exact search (the path engine
    needs a product distribution) and agree with enumeration over all subsets."""
    tree = kcxai.datasets.running_example_tree()
    mix = Mixture([2, 1], [Product([[1, 3]] * 9), Product([[2, 1]] * 9)])
    m = tree.with_distribution(mix)
    v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    delta = Fraction(9, 10)
    best = None
    for r in range(10):
        for s in itertools.combinations(range(9), r):
            if kcxai.precision(m, v, s) >= delta:
                best = r
                break
        if best is not None:
            break
    e = kcxai.smallest_drs(m, v, delta)
    assert len(e) == best and e.precision >= delta


def test_evaluate_on_data_reads_a_compiled_models_labels():
    space = kcxai.FeatureSpace([kcxai.Feature.categorical("a", ["x", "y"])])
    tree = kcxai.DecisionTree(space, ["no", "yes"], kcxai.Split("a", {"x": kcxai.Leaf("no"), "y": kcxai.Leaf("yes")}))
    for obj in (tree, kcxai.compile_model(tree, "obdd")):
        e = kcxai.min_idrs(obj, ["y"], 0)
        m = kcxai.evaluate_on_data(obj, e, [["y"], ["y"], ["x"]])
        assert (m.matching, m.agreeing, m.precision) == (2, 2, Fraction(1))
