"""Small random tree ensembles and the brute-force reference for their delta = 0 explanations: every point of
the space with its class."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from kcxai import DecisionTree, Feature, FeatureSpace, Leaf, Split
from kcxai.models import BoostedTrees, RandomForest
from tests._support.model_strategies import boosted_models as _boosted_models
from tests._support.model_strategies import forests
from tests._support.strategies import feature_spaces

SPACES = feature_spaces(min_features=3, max_features=6, max_values=4)


def boosted_models() -> Any:
    return _boosted_models()


@st.composite
def forest_models(draw: Any) -> RandomForest:
    return draw(forests(space=draw(SPACES), max_trees=5))


ENSEMBLES = st.one_of(forest_models(), boosted_models())


class Brute:
    """Every point of a small ensemble's space, with its class."""

    def __init__(self, model: Any, point: tuple[int, ...]) -> None:
        self.n = model.space.n_features
        self.point = point
        self.label = model.predict_point(point)
        self.table = [(p, model.predict_point(p)) for p in itertools.product(*map(range, model.space.domain_sizes))]

    def sufficient(self, s: set[int]) -> bool:
        return all(c == self.label for p, c in self.table if all(p[i] == self.point[i] for i in s))

    def contrastive(self, t: set[int]) -> bool:
        return not self.sufficient(set(range(self.n)) - t)

    def smallest(self, pred: Any) -> int:
        for size in range(self.n + 1):
            if any(pred(set(c)) for c in itertools.combinations(range(self.n), size)):
                return size
        raise AssertionError("no set")  # pragma: no cover


def boosted_pairs(n_trees: int = 60, n_features: int = 24, seed: int = 1) -> BoostedTrees:
    """Boosted two-level trees with irregular leaf values over features with six values: many partial sums
    (a model whose diagrams grow wide, for the compilers' limits and bounded passes)."""
    rng = random.Random(seed)
    space = FeatureSpace([Feature.numeric(f"x{i}", [1.5, 2.5, 3.5, 4.5, 5.5]) for i in range(n_features)])
    trees, values = [], []
    for _ in range(n_trees):
        a, b = rng.sample(range(n_features), 2)
        tree = DecisionTree(space, [0, 1], Split.threshold(f"x{a}", rng.choice([1.5, 3.5]), Leaf(0),
                                                            Split.threshold(f"x{b}", 2.5, Leaf(0), Leaf(0))))
        trees.append(tree)
        values.append({leaf: Fraction(rng.randint(-1000, 1000), 997) for leaf in tree.leaves})
    return BoostedTrees(space, [0, 1], trees, values)
