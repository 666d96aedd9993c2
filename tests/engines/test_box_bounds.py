"""The box-bounds engine (:mod:`kcxai.engines._box_bounds`) against enumeration.

On random soft and hard forests and boosted models (2-3 classes, features of 1-4 values and wide features of
65-70 values, trees split by ranges or by arbitrary value sets, leaf values whose scaled sums pass 62 bits)
under uniform, product and mixture distributions (exact, and float ones to within rounding), for random
boxes: the bounds with no limit equal the weight counted point by point from the distribution's parameters
(``tests._support.reference``); every interval reached under a box limit, a margin or a passed deadline
contains it; every decision taken from an interval is the exact one. A planted off-by-one in a child box's
mass and a dropped tree are found by the same checks.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

import kcxai
from kcxai._deadline import Deadline
from kcxai.engines import _box_bounds_search
from kcxai.engines._box_bounds import STOPS, BoxBounds, WeightBounds
from kcxai.models import BoostedTrees, RandomForest
from kcxai.oracle import full_box, point_box
from tests._support import reference as ref
from tests._support.ensemble_reference import ENSEMBLES, Brute
from tests._support.model_strategies import boosted_models, forests
from tests._support.strategies import (DISTRIBUTIONS, EXACT_KINDS, feature_spaces, mixtures, points, set_split_trees,
                                      trees)



def examples(n):
    """Hypothesis settings: ``n`` examples, no deadline (enumeration takes its time)."""
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.data_too_large])


@st.composite
def wide_spaces(draw, *, distributions=EXACT_KINDS):
    """A space with one feature of 65-70 values (past the engine's 64-bit masks) and 1-2 of 2-3 values."""
    wide = draw(st.integers(65, 70))
    sizes = [wide] + [draw(st.integers(2, 3)) for _ in range(draw(st.integers(1, 2)))]
    feats = [kcxai.Feature.numeric("w", [float(k) for k in range(wide - 1)])] + \
        [kcxai.Feature.categorical(f"c{i}", list(range(s))) for i, s in enumerate(sizes[1:])]
    kind = draw(st.sampled_from(distributions))
    if kind == "uniform":
        return kcxai.FeatureSpace(feats)
    if kind in ("mixture", "float_mixture"):
        return kcxai.FeatureSpace(feats, distribution=draw(mixtures(sizes, exact=kind == "mixture")))
    weight = st.integers(1, 9) if kind == "exact" else st.floats(0.1, 3.0)
    return kcxai.FeatureSpace(feats, distribution=[[draw(weight) for _ in range(s)] for s in sizes])


@st.composite
def ensembles(draw, *, distributions=EXACT_KINDS):
    """A random forest (soft or hard voting) or boosted model, its trees split by ranges or by value sets, over a
    small space or one with a wide feature (then by value sets)."""
    wide = draw(st.integers(0, 3)) == 0
    if wide:
        space = draw(wide_spaces(distributions=distributions))
    else:
        space = draw(feature_spaces(min_features=2, max_features=5, max_values=4, distributions=distributions))
    # two branches per node on wide spaces (``trees`` would give a node up to 70)
    shape = {"tree_strategy": set_split_trees} if wide or draw(st.booleans()) else {}
    if draw(st.booleans()):
        return draw(forests(space=space, max_trees=6, **shape))
    return draw(boosted_models(space=space, **shape))


@st.composite
def boxes(draw, space):
    """A box: the whole space, a point's cells on a random fixed set, or a random non-empty set per feature."""
    kind = draw(st.sampled_from(["full", "cells", "sets"]))
    if kind == "full":
        return full_box(space)
    if kind == "cells":
        fixed = draw(st.sets(st.integers(0, space.n_features - 1)))
        return point_box(space, draw(points(space)), fixed)
    return tuple((1 << f.size) - 1 if draw(st.booleans()) else draw(st.integers(1, (1 << f.size) - 1))
                 for f in space.features)


@st.composite
def queries(draw, *, distributions=EXACT_KINDS):
    model = draw(ensembles(distributions=distributions))
    return model, draw(boxes(model.space)), draw(st.integers(0, len(model.classes) - 1))


def exact(model, box, label):
    """``(Pr(x in box and kappa(x) != label), Pr(x in box))`` by enumeration."""
    disagree = weight = 0
    for x in ref.all_points(model.space):
        if all(m >> k & 1 for m, k in zip(box, x)):
            p = ref.point_probability(model.space, x)
            weight += p
            if model.predict_point(x) != label:
                disagree += p
    return disagree, weight


def within(space, result: WeightBounds, want) -> bool:
    """Whether ``want`` (a probability) lies between the bounds (to within rounding in float spaces)."""
    low, high = space.probability(result.lower), space.probability(result.upper)
    if space.is_exact:
        return low <= want <= high
    return float(low) - 1e-9 <= float(want) <= float(high) + 1e-9


def is_exact_answer(model, box, label) -> bool:
    """Whether the engine's unlimited bounds and box weight are the counted ones."""
    space = model.space
    engine = BoxBounds(model)
    result = engine.bounds(box, label)
    d, w = exact(model, box, label)
    return (result.stopped == "exact" and ref.close(space.probability(result.lower), d)
            and ref.close(space.probability(result.upper), d) and ref.close(space.probability(result.box_weight), w))


@examples(100)
@given(q=queries(distributions=DISTRIBUTIONS))
def test_unlimited_bounds_are_the_counted_weight(q):
    model, box, label = q
    assert is_exact_answer(model, box, label)


@examples(80)
@given(q=queries(distributions=DISTRIBUTIONS), data=st.data())
def test_every_interval_reached_under_a_limit_contains_the_weight(q, data):
    model, box, label = q
    space = model.space
    engine = BoxBounds(model)
    want, _ = exact(model, box, label)
    max_boxes = data.draw(st.integers(1, 15))
    limited = engine.bounds(box, label, max_boxes=max_boxes)
    assert limited.boxes <= max_boxes and within(space, limited, want)
    assert limited.stopped in ("exact", "max_boxes") and (limited.stopped == "exact") == limited.is_exact
    margin = data.draw(st.fractions(0, 1)) * limited.box_weight if space.is_exact else \
        data.draw(st.floats(0, 1)) * limited.box_weight
    loose = engine.bounds(box, label, margin=margin)
    assert within(space, loose, want) and loose.stopped in ("exact", "margin")
    assert loose.undecided <= margin or loose.stopped == "exact"
    with Deadline(0.001, what="a test", advice="") as passed:
        time.sleep(0.002)
        late = engine.bounds(box, label, deadline=passed)
    assert within(space, late, want) and late.stopped in ("exact", "deadline")
    assert late.stopped == "exact" or late.boxes == 1


@examples(80)
@given(q=queries(), data=st.data())
def test_decisions_from_intervals_are_the_exact_decisions(q, data):
    model, box, label = q
    space = model.space
    engine = BoxBounds(model)
    want, _ = exact(model, box, label)
    weight = want * space.total_weight  # the counted disagreeing weight, an integer
    assert weight.denominator == 1
    threshold = data.draw(st.sampled_from([weight, weight - 1, weight + 1, weight - Fraction(1, 3), 0,
                                           space.total_weight]))
    decided = engine.decide(box, label, threshold)
    assert decided.stopped in ("exact", "decided") and decided.decides(threshold) == (weight <= threshold)
    limited = engine.decide(box, label, threshold, max_boxes=data.draw(st.integers(1, 9)))
    assert limited.decides(threshold) in (None, weight <= threshold)
    assert (limited.stopped == "max_boxes") == (limited.decides(threshold) is None)


@examples(60)
@given(model=ensembles(), data=st.data())
def test_the_cells_of_an_instance_give_its_error(model, data):
    """A point's cells on a fixed set, with its own class: the lower bound is the paper's error (eq. idr)."""
    space = model.space
    point = data.draw(points(space))
    fixed = data.draw(st.sets(st.integers(0, space.n_features - 1)))
    result = BoxBounds(model).bounds(point_box(space, point, fixed), model.predict_point(point))
    assert space.probability(result.lower) == ref.error(model, point, fixed) and result.is_exact


@examples(40)
@given(model=ENSEMBLES, data=st.data())
def test_a_threshold_of_zero_decides_sufficiency(model, data):
    """``W <= 0`` for the instance's cells is the delta = 0 question (is ``S`` sufficient?): the engine's decision
    is the brute-force one, and it is exact (``W = 0``) exactly when sufficient."""
    space = model.space
    point = data.draw(points(space))
    brute = Brute(model, point)
    engine = BoxBounds(model)
    for fixed in (set(), set(range(space.n_features)), data.draw(st.sets(st.integers(0, space.n_features - 1)))):
        result = engine.decide(point_box(space, point, fixed), brute.label, 0)
        assert result.decides(0) == brute.sufficient(fixed)


def _rounded_boosted(k):
    """A boosted model whose leaf values' common denominator passes 2^62 (3^41, 7^37): its margins are rounded."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1, 2]) for n in "abc"], distribution=[[1, 2, 3]] * 3)
    ts = [kcxai.DecisionTree(space, list(range(k)), kcxai.Split(n, {0: kcxai.Leaf(0), 1: kcxai.Leaf(0),
                                                                    2: kcxai.Leaf(0)})) for n in "abcab"]
    vals = [Fraction(1, 3 ** 41), -Fraction(2, 7 ** 37), Fraction(5, 11 ** 30), Fraction(1, 3), -Fraction(1, 5)]
    values = [{leaf: vals[(t + leaf) % 5] * (leaf + 1) for leaf in tree.leaves} for t, tree in enumerate(ts)]
    if k == 2:
        return BoostedTrees(space, [0, 1], ts, values, init=[Fraction(-1, 2 ** 70)])
    return BoostedTrees(space, list(range(k)), ts, values, tree_class=[t % k for t in range(len(ts))],
                        init=[Fraction(1, 3 ** 41)] * k)


@pytest.mark.parametrize("k", [2, 3])
def test_margins_rounded_past_62_bits_still_give_the_exact_weight(k):
    model = _rounded_boosted(k)
    engine = BoxBounds(model)
    assert not any(engine.pair(c, d).exact for c in range(k) for d in range(k) if c != d)
    space = model.space
    for point in ref.all_points(space)[::4]:
        for fixed in ([], [0], [1, 2]):
            box = point_box(space, point, fixed)
            for label in range(k):
                assert is_exact_answer(model, box, label)


def test_wide_features_with_value_sets_keep_their_hulls_and_stay_exact():
    """A 70-value feature split by sets that are not ranges: the engine keeps hulls (a relaxation) and decides
    the single points where a tree's hulls still overlap with the model."""
    space = kcxai.FeatureSpace([kcxai.Feature.numeric("w", [float(k) for k in range(69)]),
                                kcxai.Feature.categorical("c", [0, 1, 2])],
                               distribution=[list(range(1, 71)), [1, 2, 4]])
    evens = sum(1 << v for v in range(0, 70, 2))
    odd = ((1 << 70) - 1) ^ evens
    t1 = kcxai.DecisionTree._from_arrays(space, [0, 1], [0, -1, -1], [-1, 0, 1], [((evens, 1), (odd, 2)), (), ()])
    t2 = kcxai.DecisionTree._from_arrays(space, [0, 1], [1, -1, -1], [-1, 1, 0], [((0b011, 1), (0b100, 2)), (), ()])
    model = RandomForest(space, [0, 1], [t1, t2, t1])
    engine = BoxBounds(model)
    assert not engine.table.hulls_exact
    for box in (full_box(space), (evens | 1 << 5, 0b101), ((1 << 70) - 1 - 1, 0b010)):
        for label in (0, 1):
            assert is_exact_answer(model, box, label)


def _random_tree(space, classes, rng, depth):
    """A random tree of the given depth over ``space``: each node splits a feature's allowed values at a random
    point (the rest of a range to each side)."""
    feat, label, branches = [], [], []

    def build(allowed, d):
        nid = len(feat)
        feat.append(-1)
        label.append(rng.randrange(len(classes)))
        branches.append(())
        splittable = [f for f, m in enumerate(allowed) if m & (m - 1)]
        if d == depth or not splittable:
            return nid
        f = rng.choice(splittable)
        values = [v for v in range(space.features[f].size) if allowed[f] >> v & 1]
        cut = rng.randrange(1, len(values))
        low = sum(1 << v for v in values[:cut])
        feat[nid] = f
        out = []
        for m in (low, allowed[f] ^ low):
            child = list(allowed)
            child[f] = m
            out.append((m, build(child, d + 1)))
        branches[nid] = tuple(out)
        return nid

    build([(1 << f.size) - 1 for f in space.features], 0)
    return kcxai.DecisionTree._from_arrays(space, classes, feat, label, branches)


def test_limits_return_the_interval_reached_never_an_error():
    """30 random trees of depth 6 over 5 features of 6 values, hard voting: every limit ends with an interval
    around the counted weight, and no limit gives the weight itself."""
    rng = random.Random(7)
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"x{i}", list(range(6))) for i in range(5)])
    model = RandomForest(space, [0, 1, 2], [_random_tree(space, [0, 1, 2], rng, 6) for _ in range(30)],
                         voting="hard")
    engine = BoxBounds(model)
    box = full_box(space)
    classes = [model.predict_point(x) for x in ref.all_points(space)]  # uniform: every point weighs 1
    for label in range(3):
        want = sum(c != label for c in classes)
        for limits in ({"max_boxes": 1}, {"max_boxes": 7}, {"margin": space.total_weight // 4}):
            result = engine.bounds(box, label, **limits)
            assert result.lower <= want <= result.upper and result.stopped in STOPS and not result.is_exact
        result = engine.bounds(box, label)
        assert result.is_exact and result.lower == want


# -- planted bugs -----------------------------------------------------------------


#: Look for a failing example, without shrinking it (the search only has to find one).
FIND = settings(database=None, max_examples=2000, deadline=None, phases=[Phase.generate],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_a_planted_off_by_one_in_a_child_box_mass_is_caught(monkeypatch):
    true_weight = _box_bounds_search.Query.narrow_weight

    def off_by_one(self, j, masks):
        return true_weight(self, j, masks) + 1

    monkeypatch.setattr(_box_bounds_search.Query, "narrow_weight", off_by_one)
    found = find(queries(), lambda q: not is_exact_answer(*q), settings=FIND)
    assert found is not None


def test_a_dropped_tree_is_caught(monkeypatch):
    def dropped(model):
        spec = type(model).additive_trees(model)
        return replace(spec, trees=spec.trees[:-1], scores=spec.scores[:-1])

    def wrong(q):
        model, box, label = q
        if len(model.trees) < 2:
            return False
        monkeypatch.setattr(model, "additive_trees", lambda: dropped(model))
        return not is_exact_answer(model, box, label)

    assert find(queries(), wrong, settings=FIND) is not None


# -- the result and bad input -----------------------------------------------------------


def test_the_result_says_what_it_bounds_and_under_which_distribution():
    model = _rounded_boosted(2)
    engine = BoxBounds(model)
    space = model.space
    done = engine.bounds(full_box(space), 0)
    text = str(done)
    assert "class != 0" in text and "product distribution" in text and "exact" in text
    assert done.to_dict()["lower_probability"] == space.probability(done.lower)
    cut = engine.bounds(full_box(space), 0, max_boxes=1)
    assert cut.stopped == "max_boxes" and "proven bounds, stopped: max_boxes" in str(cut)
    assert cut.probabilities() == (space.probability(cut.lower), space.probability(cut.upper))


def test_same_input_same_answer():
    model = _rounded_boosted(3)
    engine = BoxBounds(model)
    first = [engine.bounds(full_box(model.space), c, max_boxes=5) for c in range(3)]
    again = [BoxBounds(model).bounds(full_box(model.space), c, max_boxes=5) for c in range(3)]
    assert [(r.lower, r.upper, r.boxes) for r in first] == [(r.lower, r.upper, r.boxes) for r in again]


@pytest.mark.parametrize("call, error, says", [
    (lambda e, b: e.bounds(b, 0, margin=-1), kcxai.InvalidInputError, "'margin' must be a non-negative number"),
    (lambda e, b: e.bounds(b, 0, margin="1"), kcxai.InvalidTypeError, "'margin' must be a non-negative number"),
    (lambda e, b: e.bounds(b, 0, margin=float("nan")), kcxai.InvalidInputError, "'margin'"),
    (lambda e, b: e.bounds(b, 0, max_boxes=0), kcxai.InvalidInputError, "'max_boxes' must be None or a positive int"),
    (lambda e, b: e.bounds(b, 0, max_boxes=2.5), kcxai.InvalidTypeError, "'max_boxes'"),
    (lambda e, b: e.decide(b, 0, threshold=float("nan")), kcxai.InvalidInputError, "'threshold' must be a real"),
    (lambda e, b: e.decide(b, 0, threshold="0.1"), kcxai.InvalidTypeError, "'threshold'"),
    (lambda e, b: e.bounds(b, 2), kcxai.InvalidInputError, "'label' must be an int in [0, 1]"),
    (lambda e, b: e.bounds(b, 0, deadline=5), kcxai.InvalidTypeError, "'deadline' must be None or a Deadline"),
    (lambda e, b: e.bounds(b[:-1], 0), kcxai.InvalidInputError, "'box' must have one value mask per feature (3)"),
    (lambda e, b: e.bounds((0,) + b[1:], 0), kcxai.InvalidInputError, "feature 'a' has 3 values"),
    (lambda e, b: e.bounds((8,) + b[1:], 0), kcxai.InvalidInputError, "Got 8 instead"),
    (lambda e, b: e.bounds("abc", 0), kcxai.InvalidTypeError, "'box' must be a sequence of value masks"),
    (lambda e, b: e.bounds((1.0,) + b[1:], 0), kcxai.InvalidTypeError, "'box'"),
    (lambda e, b: e.box_weight((True, 1, 1)), kcxai.InvalidTypeError, "'box'"),
])
def test_bad_input_names_the_argument(call, error, says):
    model = _rounded_boosted(2)
    engine = BoxBounds(model)
    with pytest.raises(error) as info:
        call(engine, full_box(model.space))
    assert says in str(info.value)


def test_a_model_without_additive_trees_is_refused():
    with pytest.raises(kcxai.InvalidTypeError, match="'model' must be a tree ensemble.*Got DecisionTree"):
        BoxBounds(kcxai.datasets.running_example_tree())


@examples(20)
@given(tree=trees(max_depth=3))
def test_a_forest_of_one_tree_matches_the_tree(tree):
    """One tree as a forest: the box's disagreeing weight is the tree's (another model's prediction)."""
    model = RandomForest(tree.space, tree.classes, [tree], voting="hard")
    box = full_box(tree.space)
    for label in range(len(tree.classes)):
        result = BoxBounds(model).bounds(box, label)
        want, _ = exact(tree, box, label)
        assert result.is_exact and ref.close(tree.space.probability(result.lower), want)
