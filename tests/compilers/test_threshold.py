"""The threshold compiler (``kcxai.compilers._threshold``) and its interval cache (``_intervals``): against
enumeration, for any priority of the classes, and the one door every compiler builds through."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai import InvalidTypeError
from kcxai.compilers._intervals import IntervalCache, Intervals
from kcxai.compilers._threshold import class_functions, describes_scores
from kcxai.compilers._truth_table import TruthTableBuilder
from kcxai.functions import AdditiveScores, AdditiveTrees
from kcxai.models import DecisionTree, LinearClassifier
from tests._support.model_strategies import forests
from tests._support.strategies import feature_spaces


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-20, 20), st.integers(0, 6), st.integers(1, 6)), max_size=25))
def test_intervals_hold_each_sum_in_at_most_one_node_as_stored(stores: list[tuple[int, int, int]]) -> None:
    """Each store of a sum no interval holds, with an interval around it: afterwards the sum finds that node,
    the intervals stay sorted and disjoint, and every sum finds the node of the one (clipped) interval holding
    it, as a list of intervals clipped by hand says."""
    iv: Intervals[int] = Intervals()
    reference: list[tuple[int, int, int]] = []  # (lo, hi, node), clipped as the cache must clip
    for node, (s, below, above) in enumerate(stores):
        if any(lo <= s < hi for lo, hi, _ in reference):
            assert iv.find(s) is not None
            continue
        lo, hi = s - below, s + above
        lo = max([lo, *(h for _, h, _ in reference if h <= s)])
        hi = min([hi, *(low for low, _, _ in reference if low > s)])
        reference.append((lo, hi, node))
        iv.store(s, s - below, s + above, node)
        assert iv.find(s) == (node, lo, hi)
        got = list(iv)
        assert got == sorted(reference) and all(a[1] <= b[0] for a, b in zip(got, got[1:]))
    for x in range(-30, 31):
        held = [(node, lo, hi) for lo, hi, node in reference if lo <= x < hi]
        assert iv.find(x) == (held[0] if held else None)


def test_the_cache_keeps_each_keys_intervals_apart() -> None:
    cache: IntervalCache[str, str] = IntervalCache()
    cache.store("a", 0, -1, 1, "a0")
    cache.store("b", 0, -5, 5, "b0")
    assert cache.find("a", 0) == ("a0", -1, 1) and cache.find("a", 2) is None
    assert cache.find("b", 2) == ("b0", -5, 5) and cache.find("c", 0) is None and len(cache) == 2
    inf = float("inf")
    cache.store("a", 3, 1, inf, "a1")  # unbounded ends and exact fractions compare alike
    assert cache.find("a", Fraction(7, 2)) == ("a1", 1, inf)


class _Stub(kcxai.models.classifier.Classifier):
    """A classifier with nothing but what the compilers read."""

    def with_distribution(self, distribution: Any) -> "_Stub":
        raise NotImplementedError

    def _body_to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def _from_body(cls, space: Any, classes: Any, body: Any) -> "_Stub":
        raise NotImplementedError


class _Described(_Stub):
    """A model known only by its description (and the rule it stands for, for the reference)."""

    def __init__(self, spec: AdditiveScores) -> None:
        self.space = spec.space
        self._init_classes(list(range(spec.n_classes)))
        self.spec = spec

    def additive_scores(self) -> AdditiveScores:
        return self.spec

    def predict_point(self, point: Any) -> int:
        s = self.spec
        scores = list(s.base)
        for f, v in enumerate(point):
            for c in range(len(scores)):
                scores[c] = scores[c] * s.terms[f][v][c] if s.product else scores[c] + s.terms[f][v][c]
        best = max(scores)
        return next(c for c in s.priority if scores[c] == best)  # the first of highest score in priority


@settings(max_examples=150, deadline=None)
@given(feature_spaces(max_features=3), st.data())
def test_described_scores_compile_to_their_argmax_under_any_priority(space: Any, data: Any) -> None:
    """Sums and products of small integers (many ties), 1-4 classes, every order of the classes on ties: the
    class functions partition the space as the rule of the description does."""
    k = data.draw(st.integers(1, 4))
    product = data.draw(st.booleans())
    num = st.integers(1, 3) if product else st.integers(-2, 2)
    terms = tuple(tuple(tuple(Fraction(data.draw(num)) for _ in range(k)) for _ in range(f.size))
                  for f in space.features)
    base = tuple(Fraction(data.draw(num)) for _ in range(k))
    priority = tuple(data.draw(st.permutations(range(k))))
    model = _Described(AdditiveScores(space, terms, base, priority, product=product))
    b = TruthTableBuilder(space)
    b.check_partition(class_functions(model, b), model.predict_point)


class _DescribedTrees(_Stub):
    """A forest's description with another priority of the classes on ties."""

    def __init__(self, forest: Any, priority: tuple[int, ...]) -> None:
        self.space, self.classes, self.forest, self.priority = forest.space, forest.classes, forest, priority

    def additive_trees(self) -> AdditiveTrees:
        spec = self.forest.additive_trees()
        return AdditiveTrees(spec.space, spec.trees, spec.scores, spec.base, self.priority)

    def predict_point(self, point: Any) -> int:
        scores = self.forest.scores_point(point)
        best = max(scores)
        return next(c for c in self.priority if scores[c] == best)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_trees_described_by_leaf_scores_compile_to_their_vote(data: Any) -> None:
    """AdditiveTrees with a random priority (a forest's description, reordered): tree blocks through the
    builder give the described rule."""
    space = data.draw(feature_spaces(min_features=2, max_features=3, max_values=3))
    forest = data.draw(forests(space=space, max_trees=3))
    model = _DescribedTrees(forest, tuple(data.draw(st.permutations(range(len(forest.classes))))))
    b = TruthTableBuilder(space)
    b.check_partition(class_functions(model, b), model.predict_point)


def test_a_model_that_neither_builds_nor_describes_is_a_clear_error() -> None:
    space = kcxai.FeatureSpace([kcxai.Feature.categorical("a", [0, 1])])

    class Bare(_Stub):
        def predict_point(self, point: Any) -> int:
            return 0

    bare = Bare()
    bare.space = space
    with pytest.raises(InvalidTypeError, match=r"Bare has no build\(\): .* \(additive_scores\(\) or additive_"):
        class_functions(bare, TruthTableBuilder(space))

    class Wrong(Bare):
        def additive_scores(self) -> Any:
            return {"terms": []}

    wrong = Wrong()
    wrong.space = space
    with pytest.raises(InvalidTypeError, match=r"Wrong.additive_scores\(\) must return a kcxai.functions.Additive"):
        describes_scores(wrong)


def test_models_describe_and_trees_build() -> None:
    """Linear models describe their scores, trees build their functions: both through the one door."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "ab"])
    linear = LinearClassifier.from_coefficients(space, [1, 1], Fraction(-3, 2))
    assert isinstance(describes_scores(linear), AdditiveScores)
    tree = DecisionTree(space, [0, 1], kcxai.Split("a", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1)}))
    assert describes_scores(tree) is None
    b = TruthTableBuilder(space)
    for model in (linear, tree):
        b.check_partition(class_functions(model, b), model.predict_point)
    assert [p for p in itertools.product((0, 1), repeat=2) if linear.predict_point(p)] == [(1, 1)]
