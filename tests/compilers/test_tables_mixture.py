"""Mixtures counted in one traversal of a compiled diagram (kcxai/compilers/_tables/mixture.py) against enumeration.

The one-pass oracle (:class:`~kcxai.compilers._tables.diagram.MixtureDiagramOracle`) and the per-component fallback
are each forced on OBDD- and SDD-compiled trees, forests and boosted trees (multi-valued features, 2-3
classes) under exact and float mixtures of 1-5 products; the one pass is run with its walk of the reachable
nodes only, with numpy units only, and with both in one session. Counts, sessions, ``min_idrs`` and
``local_cdrs`` are compared with the brute-force oracle, which enumerates points.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from tests._support import reference as ref
from kcxai import Feature, FeatureSpace
from kcxai.compilers._tables import diagram as _diagram, level as _level_table, mixture as _mixture_table
from kcxai.compilers._tables.diagram import MixtureDiagramOracle
from kcxai.distribution import Mixture, Product, Uniform
from kcxai.oracle import MixtureOracle, has_boxes
from tests._support.model_strategies import boosted_models, forests
from tests._support.strategies import deltas, instance_of, mixtures, points, trees

MIXTURES = ("mixture", "float_mixture")
LANGUAGES = ("obdd", "sdd")
#: The automatic choice as shipped (the ``path`` fixture patches it while it is active).
ONE_PASS_MIN_COMPONENTS = _diagram.ONE_PASS_MIN_COMPONENTS

#: How a mixture is counted: (one pass from this many components, the walk's most free features, numpy's
#: fewest nodes).
PATHS = {"per-component": (10 ** 9, 3, 2000), "walk": (1, 10 ** 9, 10 ** 9), "arrays": (1, -1, 0),
         "mixed": (1, 1, 0)}


@pytest.fixture(scope="module", params=list(PATHS))
def path(request):
    one_pass, max_free, min_nodes = PATHS[request.param]
    with pytest.MonkeyPatch.context() as mp:  # the same for every example: module-scoped
        mp.setattr(_diagram, "ONE_PASS_MIN_COMPONENTS", one_pass)
        mp.setattr(_mixture_table, "RECURSIVE_MAX_FREE", max_free)
        mp.setattr(_mixture_table, "VECTOR_MIN_NODES", min_nodes)
        yield request.param


@st.composite
def mixed_models(draw, *, ensembles=True, kinds=MIXTURES):
    """A tree, forest or boosted model under an exact or float mixture of 1-5 products (``kinds``)."""
    models = [trees(distributions=kinds)]
    if ensembles:
        models += [forests(distributions=kinds), boosted_models(distributions=kinds)]
    model = draw(st.one_of(*models))
    if draw(st.booleans()):
        sizes = [f.size for f in model.space.features]
        model = model.with_distribution(draw(mixtures(sizes, exact=model.space.is_exact, max_components=5)))
    return model


def _check_path(oracle, path):
    if path == "per-component":
        assert not isinstance(oracle, MixtureDiagramOracle)
    else:
        assert isinstance(oracle, MixtureDiagramOracle)
        assert has_boxes(oracle)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), language=st.sampled_from(LANGUAGES))
def test_counts_and_sessions_equal_brute_force(path, data, language):
    model = data.draw(mixed_models())
    oracle = kcxai.compile_model(model, language).oracle
    _check_path(oracle, path)
    brute = kcxai.compile_model(model, "brute").oracle
    n = model.space.n_features
    p = data.draw(points(model.space))
    for label in range(len(model.classes)):
        for _ in range(2):
            s = frozenset(data.draw(st.sets(st.integers(0, n - 1))))
            assert ref.close(oracle.disagree_weight(p, label, s), brute.disagree_weight(p, label, s))
        fixed = set(range(n))
        session = oracle.session(p, label, frozenset(fixed))
        for f in data.draw(st.permutations(range(n))):
            got = session.weight_if_freed(f)
            assert ref.close(got, brute.disagree_weight(p, label, frozenset(fixed - {f})))
            if data.draw(st.booleans()):
                session.free(f)
                fixed.discard(f)
                assert session.fixed == frozenset(fixed)
                assert ref.close(session.weight(), brute.disagree_weight(p, label, frozenset(fixed)))


@settings(max_examples=25, deadline=None)
@given(data=st.data(), language=st.sampled_from(LANGUAGES), delta=deltas,
       precision=st.sampled_from([Fraction(1, 2), Fraction(3, 4), Fraction(9, 10), 0.95, Fraction(1)]))
def test_min_idrs_and_local_cdrs_equal_brute_force(path, data, language, delta, precision):
    """Exact mixtures (under float ones a decision at a tie, e.g. precision exactly 1/2, may go either way
    with the rounding of another summation order)."""
    model = data.draw(mixed_models(kinds=("mixture",)))
    x = instance_of(model.space, data.draw(points(model.space)))
    order = data.draw(st.permutations(range(model.space.n_features)))
    compiled, brute = kcxai.compile_model(model, language), kcxai.compile_model(model, "brute")
    _check_path(compiled.oracle, path)
    e, b = kcxai.min_idrs(compiled, x, delta, order=order), kcxai.min_idrs(brute, x, delta, order=order)
    assert e.features == b.features and ref.close(e.error, b.error)
    point = model.space.encode(x)
    assert ref.close(e.error, ref.error(model, point, e.features))
    e, b = kcxai.local_cdrs(compiled, x, precision, order=order), kcxai.local_cdrs(brute, x, precision, order=order)
    assert e.features == b.features and ref.close(e.precision, b.precision)
    assert ref.close(e.precision, ref.precision(model, point, e.features))


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_box_weights_are_the_per_component_ones(data):
    model = data.draw(mixed_models(ensembles=False))
    compiled = kcxai.compile_model(model, "obdd")
    table = compiled.oracle.table if hasattr(compiled.oracle, "table") else compiled.oracle.parts[0][1].table
    one = _diagram.diagram_oracle("obdd", model.space, table, one_pass=True)
    per = _diagram.diagram_oracle("obdd", model.space, table, one_pass=False)
    box = tuple(data.draw(st.integers(1, (1 << f.size) - 1)) for f in model.space.features)
    for label in range(len(model.classes)):
        assert one.box_weights(box, label) == per.box_weights(box, label)  # type: ignore[attr-defined]


def test_the_choice_is_automatic(monkeypatch):
    """One pass from ONE_PASS_MIN_COMPONENTS components; fewer keep one table per component."""
    monkeypatch.setattr(_diagram, "ONE_PASS_MIN_COMPONENTS", ONE_PASS_MIN_COMPONENTS)
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1, 2]) for i in range(3)])
    tree = kcxai.DecisionTree(space, [0, 1], kcxai.Split("x0", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1), 2: kcxai.Leaf(1)}))
    k = _diagram.ONE_PASS_MIN_COMPONENTS
    for n, kind in ((k - 1, MixtureOracle), (k, MixtureDiagramOracle)):
        mix = Mixture(list(range(1, n + 1)), [Product([[1, j + 1, 2]] * 3) for j in range(n)])
        for language in LANGUAGES:
            assert isinstance(kcxai.compile_model(tree.with_distribution(mix), language).oracle, kind)
    # OBDD tables that count with numpy keep one table per component (their numpy beats the one pass's)
    monkeypatch.setattr(_level_table, "VECTOR_MIN_NODES", 0)
    assert isinstance(kcxai.compile_model(tree.with_distribution(mix), "obdd").oracle, MixtureOracle)
    assert isinstance(kcxai.compile_model(tree.with_distribution(mix), "sdd").oracle, MixtureDiagramOracle)


def test_totals_past_int64_walk_with_python_integers(monkeypatch):
    """70 binary features, 4 components: no numpy (counts past int64), exact Python integers, the definition."""
    monkeypatch.setattr(_diagram, "ONE_PASS_MIN_COMPONENTS", ONE_PASS_MIN_COMPONENTS)
    n = 70
    space = FeatureSpace([Feature.categorical(f"b{i}", [0, 1]) for i in range(n)])
    mix = Mixture([1, 2, 3, 4], [Product([[1, 2]] * n), Product([[3, 1]] * n), Uniform([2] * n),
                                 Product([[5, 2]] * n)])
    tree = kcxai.DecisionTree(space.with_distribution(mix), [0, 1], kcxai.Split("b0", {0: kcxai.Leaf(0), 1: kcxai.Split(
        "b69", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1)})}))
    # Pr(kappa != 1 and x_b5 = 1) = Pr(b5 = 1) * (1 - Pr(b0 = 1, b69 = 1)) per component
    qs = [Fraction(2, 3), Fraction(1, 4), Fraction(1, 2), Fraction(2, 7)]
    want = sum(Fraction(i + 1, 10) * q * (1 - q * q) for i, q in enumerate(qs))
    for language in LANGUAGES:
        compiled = kcxai.compile_model(tree, language)
        assert isinstance(compiled.oracle, MixtureDiagramOracle) and not compiled.oracle.mixture.arrays
        assert kcxai.idrs_error(compiled, (1,) * n, ["b5"]) == want
