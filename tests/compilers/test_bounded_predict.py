"""The bounded construction gives up early, from counted work, where the trees' own diagrams cannot fit.

Issue 28: the default RandomForest behind adult's pipeline spent its whole fit budget building its trees'
diagrams and kept a diagram that decides nothing. A sound floor (:func:`source_work_floor`: the path tests
that building them counts before any node) refuses a budget below it without spending any; the pace of the
trees built so far (:data:`PREDICT_FACTOR`) stops the rest once it points past the budget. The conditioned
compile's trees stop at its node budget and at a work budget per node, and the scaled leaf differences are
computed once per model. Nothing here reads the clock.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai.compilers._ensemble import ensemble_order
from kcxai.compilers._ensemble import sources as sources_module
from kcxai.compilers._ensemble.bounded import compile_bounded
from kcxai.compilers._ensemble import build
from kcxai.compilers._ensemble import conditioned as conditioned_module
from kcxai.compilers._ensemble.conditioned import conditioned_counts
from kcxai.compilers._ensemble.diagram import EnsembleDiagram
from kcxai.compilers._ensemble.sources import scaled_differences, source_work_floor
from kcxai.compilers._ensemble.stopped import Stopped
from kcxai.compilers._limits import Guard
from kcxai.models import RandomForest
from tests._support.model_strategies import boosted_models, forests
from tests._support.strategies import EXACT_KINDS, points

SETTINGS = settings(max_examples=30, deadline=None)
#: Values of the wide forest's features: wide enough that its trees' nodes cost more than their paths' tests.
WIDE = 300


def _pairs(spec) -> list[tuple[int, int]]:
    """The tests the construction builds (as :meth:`build.Tests.prepare` lists them)."""
    out = EnsembleDiagram(spec.space, ensemble_order(spec), three_valued=True)
    return build.Tests.prepare(spec, out, None, {}).pairs


def _sources_work(spec) -> int:
    """The work of building the trees' diagrams of every test, unbounded."""
    out = EnsembleDiagram(spec.space, ensemble_order(spec), three_valued=True)
    tests = build.Tests.prepare(spec, out, None, {})
    return sum(th.src.work for th, _, _ in tests.runs)


def _wide_forest(n_trees: int, seed: int = 5, same: bool = False) -> RandomForest:
    """A forest of deep trees over two wide features: their own diagrams cost most of its construction."""
    rng = random.Random(seed)
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"x{i}", list(range(WIDE))) for i in range(3)])
    shape = [(rng.randrange(3), rng.randrange(1, WIDE - 1)) for _ in range(6)]

    def grow(depth: int, k: int) -> kcxai.DecisionTree | kcxai.Leaf | kcxai.Split:
        if depth == 0:
            return kcxai.Leaf(rng.randrange(2))
        f, cut = shape[k % len(shape)] if same else (rng.randrange(3), rng.randrange(1, WIDE - 1))
        return kcxai.Split(f"x{f}", {tuple(range(cut)): grow(depth - 1, 2 * k + 1),
                                     tuple(range(cut, WIDE)): grow(depth - 1, 2 * k + 2)})

    trees = []
    for _ in range(n_trees):
        if same:
            rng = random.Random(seed)
        trees.append(kcxai.DecisionTree(space, [0, 1], grow(5, 0)))
    return RandomForest(space, [0, 1], trees)


@SETTINGS
@given(model=st.one_of(forests(max_trees=5), boosted_models(max_trees=5)))
def test_the_floor_never_exceeds_the_work_of_the_trees_diagrams(model):
    """The floor is what building counts for the paths' tests alone: never more than the whole build (a floor
    doubled, or counting the trees constant in a pair, passes it on these models)."""
    spec = model.additive_trees()
    assert 0 <= source_work_floor(spec, _pairs(spec)) <= _sources_work(spec)


def test_a_budget_below_the_floor_is_refused_before_any_work():
    spec = _wide_forest(12).additive_trees()
    floor = source_work_floor(spec, _pairs(spec))
    order = ensemble_order(spec)
    with pytest.raises(Stopped, match="not started") as got:
        compile_bounded(spec, order, Guard("bounded", None, None), max_work=floor)
    assert got.value.work == 0
    compiled = kcxai.compile_model(_wide_forest(12), "bounded", max_seconds=floor / 2e7)
    assert compiled.stats["work"] == 0 and compiled.stats["unknown"] == 1
    assert "not started" in compiled.stats["stopped"]


def test_the_pace_of_the_first_trees_stops_the_rest_early():
    """Budget a quarter of what the trees need: the construction stops once the pace shows it (a tree or two),
    long before it has spent the budget, and keeps the diagram of nothing."""
    model = _wide_forest(24)
    spec = model.additive_trees()
    need = _sources_work(spec)
    budget = need // 4
    assert source_work_floor(spec, _pairs(spec)) < budget  # the floor alone does not refuse it
    with pytest.raises(Stopped, match="predicted") as got:
        compile_bounded(spec, ensemble_order(spec), Guard("bounded", None, None), max_work=budget)
    assert got.value.work is not None and got.value.work < budget // 2


def test_trees_that_fit_the_budget_are_never_predicted_not_to():
    """Equal trees whose diagrams fit the budget: the pace never points past it, and the construction is the
    one made without a prediction."""
    model = _wide_forest(16, same=True)
    spec = model.additive_trees()
    budget = _sources_work(spec) + 5_000_000
    order = ensemble_order(spec)
    built = compile_bounded(spec, order, Guard("bounded", None, None), max_work=budget)
    assert "predicted to take more" not in built.stopped


def test_a_planted_pace_without_its_margin_stops_trees_that_fit(monkeypatch):
    """Plant a prediction with no margin and a tree begun counted as done: trees that fit are stopped, which the
    test above would report."""
    model = _wide_forest(16, seed=9)
    spec = model.additive_trees()
    budget = _sources_work(spec) + 1
    monkeypatch.setattr(sources_module, "PREDICT_FACTOR", 0.05)
    with pytest.raises(Stopped, match="predicted"):
        compile_bounded(spec, ensemble_order(spec), Guard("bounded", None, None), max_work=budget)


@SETTINGS
@given(data=st.data(), max_nodes=st.integers(1, 60))
def test_a_conditioned_compile_within_small_budgets_is_exact_or_refused(data, max_nodes):
    """With the trees' diagrams stopped at the node budget and at their work per node, a conditioned compile
    either raises the limit or answers the exact weight; with a budget it cannot reach, it always answers."""
    model = data.draw(st.one_of(forests(distributions=EXACT_KINDS), boosted_models(distributions=EXACT_KINDS)))
    space = model.space
    p = data.draw(points(space))
    label = model.predict_point(p)
    fixed = frozenset(data.draw(st.sets(st.integers(0, space.n_features - 1))))
    want = kcxai.compile_model(model, "brute").oracle.disagree_weight(p, label, fixed)
    try:
        got = conditioned_counts(model, p, label, fixed, max_seconds=None, max_nodes=max_nodes)
    except kcxai.CompilationLimitError as err:
        assert "max_nodes" in str(err)
    else:
        assert got.disagree == want
    assert conditioned_counts(model, p, label, fixed, max_seconds=None, max_nodes=10**7).disagree == want


def test_the_trees_of_a_conditioned_compile_stop_at_their_work_budget(monkeypatch):
    """The wide forest's trees, one feature fixed, with a node budget they fit but a work budget per node they do
    not: they stop by their counted work, with the limit error the prover catches."""
    model = _wide_forest(12)
    p = (3, 17, 30)
    label = model.predict_point(p)
    want = conditioned_counts(model, p, label, {0}, max_seconds=None, max_nodes=10**6).disagree
    monkeypatch.setattr(conditioned_module, "SOURCE_WORK_PER_NODE", 1e-3)
    with pytest.raises(kcxai.CompilationLimitError, match="max_nodes=1,000,000: building the trees' diagrams took"):
        conditioned_counts(model, p, label, {0}, max_seconds=None, max_nodes=10**6)
    monkeypatch.setattr(conditioned_module, "SOURCE_WORK_PER_NODE", 1)
    assert conditioned_counts(model, p, label, {0}, max_seconds=None, max_nodes=10**6).disagree == want


@SETTINGS
@given(model=st.one_of(forests(max_trees=3), boosted_models(max_trees=3)))
def test_scaled_differences_are_kept_per_scores_and_equal_a_fresh_computation(model):
    spec = model.additive_trees()
    c, d = spec.priority[0], spec.priority[1]
    first = scaled_differences(spec, c, d)
    assert scaled_differences(model.additive_trees(), c, d) is first or \
        model.additive_trees().scores is not spec.scores  # the same scores: the kept result
    assert first == sources_module._scaled_differences(spec, c, d)
    swapped = scaled_differences(spec, d, c)
    assert swapped == sources_module._scaled_differences(spec, d, c)
