"""Hypothesis strategies for the model families beyond trees.

Random decision lists, rule sets, BDD classifiers, linear classifiers, naive
Bayes (probabilities and log-probabilities) and forests (hard and soft
voting), over the random spaces of :mod:`strategies` (multi-valued and
numeric features, uniform / exact / float distributions, 2-3 classes).
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

import kcxai
from kcxai import DecisionTree, Feature, FeatureSpace
from kcxai.models import BddClassifier, BoostedTrees, DecisionList, LinearClassifier, NaiveBayes, RandomForest, RuleSet
from tests._support.strategies import EXACT_KINDS, feature_spaces, mixtures, trees


def _classes(draw: Any, k: int) -> list[Any]:
    return list(range(k)) if draw(st.booleans()) else [f"c{j}" for j in range(k)]


@st.composite
def _conditions(draw: Any, space: FeatureSpace) -> list[tuple[int, list[Any]]]:
    n = space.n_features
    feats = draw(st.lists(st.integers(0, n - 1), max_size=min(n, 3)))
    out = []
    for i in feats:  # a feature may be tested twice (intersection)
        f = space.features[i]
        ks = draw(st.sets(st.integers(0, f.size - 1), min_size=1, max_size=f.size))
        out.append((i, [f.values[k] for k in sorted(ks)]))
    return out


@st.composite
def decision_lists(draw: Any, *, space: FeatureSpace | None = None, distributions: tuple[str, ...] = EXACT_KINDS
                   ) -> DecisionList:
    if space is None:
        space = draw(feature_spaces(distributions=distributions))
    k = draw(st.integers(2, 3))
    classes = _classes(draw, k)
    rules = [(draw(_conditions(space)), classes[draw(st.integers(0, k - 1))])
             for _ in range(draw(st.integers(0, 5)))]
    return DecisionList(space, classes, rules, classes[draw(st.integers(0, k - 1))])


@st.composite
def rule_sets(draw: Any, *, space: FeatureSpace | None = None, distributions: tuple[str, ...] = EXACT_KINDS
              ) -> RuleSet:
    if space is None:
        space = draw(feature_spaces(distributions=distributions))
    k = draw(st.integers(2, 3))
    classes = _classes(draw, k)
    label, default = draw(st.permutations(range(k)))[:2]
    rules = [(draw(_conditions(space)), classes[label]) for _ in range(draw(st.integers(0, 4)))]
    return RuleSet(space, classes, rules, classes[default], label=classes[label])


@st.composite
def bool_spaces(draw: Any, *, max_features: int = 6, distributions: tuple[str, ...] = EXACT_KINDS
                ) -> FeatureSpace:
    n = draw(st.integers(1, max_features))
    feats = [Feature.categorical(f"b{i}", [0, 1] if draw(st.booleans()) else ["no", "yes"]) for i in range(n)]
    kind = draw(st.sampled_from(distributions))
    if kind == "uniform":
        return FeatureSpace(feats)
    if kind in ("mixture", "float_mixture"):
        return FeatureSpace(feats, distribution=draw(mixtures([2] * n, exact=kind == "mixture")))
    if kind == "exact":
        dist = [[draw(st.integers(1, 5)), draw(st.integers(1, 5))] for _ in feats]
    else:
        dist = [[draw(st.floats(0.1, 2.0)), draw(st.floats(0.1, 2.0))] for _ in feats]
    return FeatureSpace(feats, distribution=dist)


@st.composite
def bdd_models(draw: Any, *, distributions: tuple[str, ...] = EXACT_KINDS) -> BddClassifier:
    space = draw(bool_spaces(distributions=distributions))
    n = space.n_features
    nodes = []
    for k in range(draw(st.integers(0, 8))):
        nid = k + 2
        nodes.append((draw(st.integers(0, n - 1)), draw(st.integers(0, nid - 1)), draw(st.integers(0, nid - 1))))
    root = draw(st.integers(0, len(nodes) + 1)) if draw(st.booleans()) else len(nodes) + 1
    return BddClassifier(space, _classes(draw, 2), nodes, root)


def _number(kind: str) -> st.SearchStrategy[Any]:
    if kind == "int":
        return st.integers(-4, 4)
    if kind == "fraction":
        return st.fractions(min_value=-3, max_value=3, max_denominator=6)
    return st.floats(min_value=-3, max_value=3).map(lambda x: round(x, 2))


@st.composite
def linear_models(draw: Any, *, space: FeatureSpace | None = None,
                  distributions: tuple[str, ...] = EXACT_KINDS) -> LinearClassifier:
    if space is None:
        space = draw(feature_spaces(distributions=distributions))
    k = draw(st.integers(2, 3))
    num = _number(draw(st.sampled_from(["int", "fraction", "float"])))
    weights = [[[draw(num) for _ in range(f.size)] for _ in range(k)] for f in space.features]
    return LinearClassifier(space, _classes(draw, k), weights, [draw(num) for _ in range(k)])


@st.composite
def naive_bayes_models(draw: Any, *, space: FeatureSpace | None = None,
                       distributions: tuple[str, ...] = EXACT_KINDS) -> NaiveBayes:
    if space is None:
        space = draw(feature_spaces(distributions=distributions))
    k = draw(st.integers(2, 3))
    log = draw(st.booleans())
    if log:
        num = st.floats(min_value=-4, max_value=-0.01).map(lambda x: round(x, 1))
    else:
        num = st.fractions(min_value=Fraction(1, 8), max_value=1, max_denominator=8)
    like = [[[draw(num) for _ in range(f.size)] for _ in range(k)] for f in space.features]
    return NaiveBayes(space, _classes(draw, k), [draw(num) for _ in range(k)], like, log=log)


def _with_classes(tree: DecisionTree, classes: list[Any]) -> DecisionTree:
    out = object.__new__(DecisionTree)
    out.space = tree.space
    out._init_classes(classes)
    out._set_arrays(list(tree._feat), list(tree._label), list(tree._branches), None, tree._root)
    return out


@st.composite
def forests(draw: Any, *, space: FeatureSpace | None = None, max_trees: int = 4, max_depth: int = 3,
            distributions: tuple[str, ...] = EXACT_KINDS, tree_strategy: Any = trees) -> RandomForest:
    if space is None:
        space = draw(feature_spaces(max_features=4, distributions=distributions))
    k = draw(st.integers(2, 3))
    classes = _classes(draw, k)
    ts = [_with_classes(draw(tree_strategy(space=space, n_classes=k, max_depth=max_depth)), classes)
          for _ in range(draw(st.integers(1, max_trees)))]
    if draw(st.booleans()):
        return RandomForest(space, classes, ts, voting="hard")
    num = st.one_of(st.fractions(min_value=0, max_value=1, max_denominator=4),
                    st.sampled_from([0.1, 0.2, 0.3, 0.7, 1 / 3]))
    scores = [{p.leaf: [draw(num) for _ in range(k)] for p in t.paths} for t in ts]
    return RandomForest(space, classes, ts, voting="soft", leaf_scores=scores)


@st.composite
def boosted_models(draw: Any, *, space: FeatureSpace | None = None, max_trees: int = 5,
                   max_depth: int = 3, distributions: tuple[str, ...] = EXACT_KINDS,
                   tree_strategy: Any = trees) -> BoostedTrees:
    """Boosted trees: 2 or 3 classes, leaf values that are small ints, fractions, floats taken exactly, or
    rationals whose denominators pass 2^62; ties first or last. ``tree_strategy``: how trees are drawn
    (:func:`strategies.trees` or :func:`strategies.set_split_trees`)."""
    if space is None:
        space = draw(feature_spaces(min_features=3, max_features=6, max_values=4, distributions=distributions))
    k = draw(st.integers(2, 3))
    classes = _classes(draw, k)
    ts = [_with_classes(draw(tree_strategy(space=space, n_classes=k, max_depth=max_depth)), classes)
          for _ in range(draw(st.integers(1, max_trees)))]
    num = st.one_of(st.integers(-3, 3), st.fractions(min_value=-2, max_value=2, max_denominator=4),
                    st.sampled_from([0.1, -0.3, 0.7, 1 / 3, 2.5e-8]),
                    # denominators past 2^62 make the search sum exact Python integers
                    st.sampled_from([Fraction(1, 3 ** 41), -Fraction(2, 7 ** 37), Fraction(5, 11 ** 30)]))
    values = [{p.leaf: draw(num) for p in t.paths} for t in ts]
    if k == 2:
        return BoostedTrees(space, classes, ts, values, init=[draw(num)], ties=draw(st.sampled_from(["first", "last"])))
    tree_class = [draw(st.integers(0, k - 1)) for _ in ts]
    return BoostedTrees(space, classes, ts, values, tree_class=tree_class, init=[draw(num) for _ in range(k)])


def any_model(**kwargs: Any) -> st.SearchStrategy[Any]:
    """A random model of any family (trees included)."""
    return st.one_of(trees(**kwargs), decision_lists(**kwargs), rule_sets(**kwargs), bdd_models(**kwargs),
                     linear_models(**kwargs), naive_bayes_models(**kwargs), forests(**kwargs))


def hard_naive_bayes(n_features: int, seed: int = 0) -> NaiveBayes:
    """An exact naive Bayes whose threshold construction (and so its probe) is exponential in ``n_features``."""
    rng = random.Random(seed)
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"x{i}", [0, 1, 2]) for i in range(n_features)])
    tables = [[[Fraction(rng.randint(1, 997), 1000) for _ in range(3)] for _ in range(2)]
              for _ in range(n_features)]
    return NaiveBayes(space, ["a", "b"], [Fraction(1, 2), Fraction(1, 2)], tables)
