"""The "ensemble" construction of the diagram compilers (kcxai/compilers/_ensemble/) against enumeration.

Random forests (soft and hard voting) and boosted trees (two classes with ties to the first or the last
class, three classes) over random spaces with multi-valued features and uniform, product and mixture
distributions (exact and float): the compiled diagrams predict as the model on every point, every count
equals brute force, and the explanations equal brute force's. An 80-variable model is counted against
an independent dynamic programme; an imported scikit-learn / XGBoost model agrees with the library on
sampled rows; the limits stop the construction with advice.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from tests._support import reference as ref
from kcxai import DecisionTree, Feature, FeatureSpace, Leaf, Split
from kcxai.compilers._ensemble import EnsembleDiagram, compile_additive, ensemble_order
from kcxai.compilers._ensemble.sources import Sources, scaled_differences
from kcxai.compilers._ensemble.threshold import Threshold
from kcxai.models import BoostedTrees, RandomForest
from tests._support.model_strategies import boosted_models, forests
from tests._support.strategies import DISTRIBUTIONS, deltas, feature_spaces, instance_of, points
from tests._support.ensemble_reference import boosted_pairs

FAMILIES = {"forest": forests, "boosted": boosted_models}


def _compiled(model, language, **options):
    c = kcxai.compile_model(model, language, construction="ensemble", **options)
    assert c.stats["construction"] == "ensemble"
    return c


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("language", ["obdd", "sdd"])
@settings(max_examples=30)
@given(data=st.data())
def test_counts_equal_brute_force(family, language, data):
    model = data.draw(FAMILIES[family](distributions=DISTRIBUTIONS))
    compiled = _compiled(model, language)
    brute = kcxai.compile_model(model, "brute").oracle
    for p in ref.all_points(model.space):
        assert compiled.oracle.predict_point(p) == model.predict_point(p)
    p = data.draw(points(model.space))
    for label in range(len(model.classes)):
        for _ in range(2):
            s = frozenset(data.draw(st.sets(st.integers(0, model.space.n_features - 1))))
            assert ref.close(compiled.oracle.disagree_weight(p, label, s), brute.disagree_weight(p, label, s))


@settings(max_examples=30)
@given(data=st.data())
def test_many_trees_over_few_features_count_exactly(data):
    """Many small trees over few features revisit each residual tuple with many partial sums: the interval
    cache is what decides these diagrams."""
    space = data.draw(feature_spaces(min_features=3, max_features=5, max_values=3,
                                     distributions=("uniform", "exact", "float")))
    model = data.draw(st.one_of(boosted_models(space=space, max_trees=10, max_depth=2),
                                forests(space=space, max_trees=10, max_depth=2)))
    compiled = _compiled(model, "obdd")
    brute = kcxai.compile_model(model, "brute").oracle
    for p in ref.all_points(model.space):
        assert compiled.oracle.predict_point(p) == model.predict_point(p)
    for label in range(len(model.classes)):
        assert ref.close(compiled.oracle.disagree_weight(p, label, frozenset()),
                         brute.disagree_weight(p, label, frozenset()))


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=25)
@given(delta=deltas, data=st.data())
def test_explanations_equal_brute_force(family, delta, data):
    model = data.draw(FAMILIES[family]())
    x = instance_of(model.space, data.draw(points(model.space)))
    order = data.draw(st.permutations(range(model.space.n_features)))
    compiled = _compiled(model, "obdd", order=data.draw(st.sampled_from(["auto", "index"])))
    brute = kcxai.compile_model(model, "brute")
    e = kcxai.min_idrs(compiled, x, delta, order=order)
    b = kcxai.min_idrs(brute, x, delta, order=order)
    assert (e.features, e.error, e.precision) == (b.features, b.error, b.precision)
    point = model.space.encode(x)
    assert e.error == ref.error(model, point, set(e.features))
    c = kcxai.local_cdrs(compiled, x, 0.9, order=order)
    assert c.features == kcxai.local_cdrs(brute, x, 0.9, order=order).features


@settings(max_examples=15)
@given(data=st.data())
def test_smallest_and_enumeration_equal_brute_force(data):
    model = data.draw(st.one_of(forests(), boosted_models()))
    x = instance_of(model.space, data.draw(points(model.space)))
    delta = data.draw(st.sampled_from([Fraction(0), Fraction(1, 10), Fraction(1, 3)]))
    compiled, brute = _compiled(model, "obdd"), kcxai.compile_model(model, "brute")
    assert len(kcxai.smallest_idrs(compiled, x, delta)) == len(kcxai.smallest_idrs(brute, x, delta))
    got = {e.features for e in kcxai.enumerate_idrs(compiled, x, delta)}
    assert got == {e.features for e in kcxai.enumerate_idrs(brute, x, delta)}


def test_the_default_construction_of_ensembles_is_the_ensemble_one():
    model = _forest_of_stumps(4, soft=True)
    for language in ("obdd", "sdd"):
        c = kcxai.compile_model(model, language)
        assert c.stats["construction"] == "ensemble" and c.stats["states"] > 0
        old = kcxai.compile_model(model, language, construction="builder")
        assert old.stats["construction"] == "builder"
        for p in ref.all_points(model.space):
            assert c.oracle.predict_point(p) == old.oracle.predict_point(p)
    assert kcxai.compile_model(model, "obdd").backend == "kcxai"
    # a builder-only option selects the builder
    assert kcxai.compile_model(model, "obdd", reorder=False).stats["construction"] == "builder"
    tree = kcxai.datasets.running_example_tree()
    assert kcxai.compile_model(tree, "obdd").stats["construction"] == "builder"


def test_bad_construction_options():
    tree = kcxai.datasets.running_example_tree()
    with pytest.raises(kcxai.InvalidInputError, match="construction='ensemble' compiles tree ensembles.*DecisionTree"):
        kcxai.compile_model(tree, "obdd", construction="ensemble")
    with pytest.raises(kcxai.InvalidInputError, match="'construction' must be one of"):
        kcxai.compile_model(tree, "sdd", construction="fast")
    with pytest.raises(kcxai.InvalidInputError, match="'reorder'=True .* construction='ensemble'"):
        kcxai.compile_model(_forest_of_stumps(3), "obdd", construction="ensemble", reorder=True)


def test_models_that_are_not_classifiers_are_named():
    from sklearn.ensemble import GradientBoostingRegressor

    reg = GradientBoostingRegressor(n_estimators=2).fit([[0], [1], [2]], [0.0, 1.0, 2.0])
    with pytest.raises(kcxai.KcxaiError, match="GradientBoostingRegressor"):
        kcxai.compile_model(reg, "obdd")


# -- past 64 bits: an 80-variable boosted model counted by an independent dynamic programme ----------------


def _pair_model(n_pairs, seed, distribution=None):
    """Boosted trees of depth 2, tree ``i`` over the binary features ``2i`` and ``2i + 1`` (disjoint)."""
    rng = random.Random(seed)
    n = 2 * n_pairs
    space = FeatureSpace([Feature.categorical(f"b{i}", [0, 1]) for i in range(n)], distribution=distribution)
    trees, values = [], []
    for i in range(n_pairs):
        a, b = f"b{2 * i}", f"b{2 * i + 1}"
        tree = DecisionTree(space, [0, 1], Split(a, {0: Split(b, {0: Leaf(0), 1: Leaf(0)}),
                                                     1: Split(b, {0: Leaf(0), 1: Leaf(0)})}))
        trees.append(tree)
        values.append({leaf: Fraction(rng.randint(-2, 2), rng.choice([1, 2])) for leaf in tree.leaves})
    return BoostedTrees(space, [0, 1], trees, values, init=[Fraction(1, 7)])


def _dp_weight(model, point, fixed):
    """Weight of {x : margin(x) > 0, x_fixed = point_fixed} under the space's weights, from the margin's
    distribution summed tree by tree (tree ``t`` reads features ``2t`` and ``2t + 1`` only)."""
    space = model.space
    dist = {model.init[0]: 1}
    for t, tree in enumerate(model.trees):
        f0, f1 = 2 * t, 2 * t + 1
        step: dict[Fraction, int] = {}
        for x0 in range(2):
            for x1 in range(2):
                if (f0 in fixed and x0 != point[f0]) or (f1 in fixed and x1 != point[f1]):
                    continue
                x = [0] * space.n_features
                x[f0], x[f1] = x0, x1
                v = model.leaf_values(t)[tree.path_of(x).leaf]
                step[v] = step.get(v, 0) + space.weights[f0][x0] * space.weights[f1][x1]
        dist = _convolve(dist, step)
    return sum(w for v, w in dist.items() if v > 0)


def _convolve(dist, step):
    out: dict[Fraction, int] = {}
    for a, wa in dist.items():
        for b, wb in step.items():
            out[a + b] = out.get(a + b, 0) + wa * wb
    return out


@pytest.mark.parametrize("language", ["obdd", "sdd"])
@pytest.mark.parametrize("distribution", ["uniform", "product"])
def test_eighty_boolean_variables_count_exactly(language, distribution):
    rng = random.Random(3)
    dist = None if distribution == "uniform" else [[rng.randint(1, 5), rng.randint(1, 5)] for _ in range(80)]
    model = _pair_model(40, seed=5, distribution=dist)
    compiled = _compiled(model, language)
    assert compiled.stats["variables"] == 80
    point = tuple(rng.randrange(2) for _ in range(80))
    for fixed in (frozenset(), frozenset(range(0, 80, 3)), frozenset(range(70))):
        want = _dp_weight(model, point, fixed)
        assert want > 2 ** 64 or fixed  # past 64-bit counters
        assert compiled.oracle.class_weight(point, 1, fixed) == want
        assert compiled.oracle.class_weight(point, 0, fixed) == model.space.consistent_weight(point, fixed) - want


# -- limits ------------------------------------------------------------------------------------------------


def _forest_of_stumps(n, soft=False, seed=0):
    """A forest of ``n`` two-level trees over ``n`` features with three values."""
    rng = random.Random(seed)
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1, 2]) for i in range(n)])
    trees = []
    for i in range(n):
        j = (i + 1) % n
        sub = {v: Split(f"x{j}", {0: Leaf(rng.randrange(2)), 1: Leaf(rng.randrange(2)), 2: Leaf(1)}) for v in range(2)}
        trees.append(DecisionTree(space, [0, 1], Split(f"x{i}", {**sub, 2: Leaf(0)})))
    if not soft:
        return RandomForest(space, [0, 1], trees)
    scores = [{leaf: [Fraction(rng.randint(0, 9), 9), Fraction(rng.randint(0, 9), 9)] for leaf in t.leaves}
              for t in trees]
    return RandomForest(space, [0, 1], trees, voting="soft", leaf_scores=scores)



@pytest.mark.parametrize("limit, options", [("max_nodes", {"max_nodes": 50}), ("max_seconds", {"max_seconds": 0.05}),
                                            ("max_memory", {"max_memory": 1})])
@pytest.mark.parametrize("language", ["obdd", "sdd"])
def test_limits_stop_the_construction_with_advice(limit, options, language):
    with pytest.raises(kcxai.CompilationLimitError, match=f"exceeded {limit}=.*building the ensemble's diagram") as err:
        kcxai.compile_model(boosted_pairs(), language, **options)
    assert err.value.limit == limit and "try another 'order'" in str(err.value)
    progress = err.value.progress  # how far the construction got, per level
    assert sorted(progress["order"]) == list(range(24)) and len(progress["nodes_by_level"]) == 24
    assert len(progress["states_by_level"]) in (0, 24)  # empty when it stopped among the trees' diagrams


# -- the pieces --------------------------------------------------------------------------------------------


@settings(max_examples=40)
@given(data=st.data())
def test_every_cached_interval_gives_its_node(data):
    """Each residual tuple's cached interval [lo, hi) of partial sums must give its node at both ends: built
    again without the cache, the state at lo and at hi - 1 is the same node of the (canonical) diagram."""
    space = data.draw(feature_spaces(min_features=3, max_features=5, max_values=3))
    model = data.draw(boosted_models(space=space, max_trees=10, max_depth=2))
    spec = model.additive_trees()
    order = tuple(data.draw(st.permutations(range(space.n_features))))
    out = EnsembleDiagram(space, order)
    level_of = [order.index(f) for f in range(space.n_features)]
    diffs, s0 = scaled_differences(spec, spec.priority[0], spec.priority[1])
    src = Sources(out.sizes, level_of, None)
    roots = [src.add_tree(t.paths, v) for t, v in zip(spec.trees, diffs)]
    s0 += sum(src.lo[r] for r in roots if src.level[r] == src.n_levels)
    roots = src.seal([r for r in roots if src.level[r] < src.n_levels])
    th = Threshold(src, out, None)
    th.run(roots, s0)
    for rs, e in list(th.entries.items()):
        iv = e.iv or []
        assert all(iv[j] < iv[j + 3] for j in range(0, len(iv) - 3, 3))  # sorted by lo
        for lo, hi, node in zip(iv[0::3], iv[1::3], iv[2::3]):
            for s in {lo, hi - 1} - {-math.inf, math.inf}:
                fresh = Threshold(src, out, None)
                assert fresh.run(rs, int(s)) == node, (rs, lo, hi, s)




def test_order_weighs_tests_by_depth():
    model = boosted_pairs(n_trees=8, n_features=6, seed=2)
    order = ensemble_order(model.additive_trees())
    roots = {t.arrays.feature[t.arrays.root] for t in model.trees}
    assert sorted(order) == list(range(6)) and order[0] in roots


def test_a_constant_ensemble_and_one_tree():
    space = FeatureSpace([Feature.categorical("a", [0, 1, 2])])
    tree = DecisionTree(space, [0, 1], Split("a", {0: Leaf(0), 1: Leaf(1), 2: Leaf(1)}))
    for ties, label in (("first", 0), ("last", 1)):  # the margin is 0 everywhere
        m = BoostedTrees(space, [0, 1], [tree], [{leaf: 1 for leaf in tree.leaves}], init=[-1], ties=ties)
        c = _compiled(m, "obdd")
        assert c.stats["counting_nodes"] == 0 and all(c.oracle.predict_point((k,)) == label for k in range(3))
    diagram, roots, negated = compile_additive(RandomForest(space, [0, 1], [tree]).additive_trees(), (0,))
    assert isinstance(diagram, EnsembleDiagram) and diagram.reachable(roots) == 1 and negated == [False, True]


# -- an imported model agrees with its library ---------------------------------------------------------------


@pytest.fixture(scope="module")
def adult():
    from kcxai.experiments import prepare_data

    return prepare_data("adult", bins=10, seed=0)


@pytest.mark.parametrize("kind", ["gb", "xgb", "rf-soft"])
def test_imported_models_agree_with_the_library_on_sampled_rows(adult, kind):
    if kind == "xgb":
        pytest.importorskip("xgboost")  # the 'boost' extra
    from kcxai.experiments._ensemble_models import MODEL_KINDS, import_ensemble, library_predict, train_ensemble

    trained = train_ensemble(adult, MODEL_KINDS[kind][0], 10, 3)
    model, _ = import_ensemble(kind, trained, adult)
    compiled = _compiled(model, "obdd", max_seconds=60)
    rng = np.random.default_rng(0)
    rows = adult.X[rng.choice(len(adult.X), 1000, replace=False)]
    grid = np.stack([rng.integers(0, s, 1000) for s in adult.domain_sizes], axis=1)  # random points of the space
    for X in (rows, grid):
        lib = library_predict(kind, trained.clf, X)
        got = [compiled.oracle.predict_point(model.space.encode(list(x))) for x in X]
        assert list(lib) == [model.classes[k] for k in got]
