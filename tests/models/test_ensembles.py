"""BoostedTrees: exact scores read independently, compilation partitions like predict, JSON, distributions."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import given, settings

import kcxai
from tests._support import reference as ref
from kcxai.compilers._truth_table import TruthTableBuilder
from kcxai.models import BoostedTrees
from kcxai.compilers._threshold import class_functions
from tests._support.model_strategies import boosted_models


def _scores(model: BoostedTrees, point: Any) -> list[Fraction]:
    """Independent reading: follow each tree to its leaf and add its value to its class."""
    s = list(model.init)
    for t, tree in enumerate(model.trees):
        s[model.tree_class[t]] += model.leaf_values(t)[tree.path_of(point).leaf]
    return s


def _predicted(model: BoostedTrees, s: list[Fraction]) -> int:
    if len(model.classes) == 2:
        return int(s[0] > 0 or (s[0] == 0 and model.ties == "last"))
    return s.index(max(s))


@settings(deadline=None)
@given(boosted_models())
def test_scores_prediction_and_build(model: BoostedTrees) -> None:
    for p in ref.all_points(model.space):
        s = _scores(model, p)
        assert list(model.scores_point(p)) == s
        assert model.predict_point(p) == _predicted(model, s)
    b = TruthTableBuilder(model.space)
    b.check_partition(class_functions(model, b), model.predict_point)


@settings(deadline=None, max_examples=30)
@given(boosted_models())
def test_compiled_obdd_predicts_as_the_model(model: BoostedTrees) -> None:
    oracle = kcxai.compile_model(model, "obdd").oracle
    for p in ref.all_points(model.space):
        assert oracle.predict_point(p) == model.predict_point(p)


@settings(deadline=None)
@given(boosted_models())
def test_json_round_trip_and_with_distribution(model: BoostedTrees) -> None:
    again = kcxai.models.model_from_dict(model.to_dict())
    assert again.to_dict() == model.to_dict()
    uni = model.with_distribution(None)
    assert uni.space.is_uniform and all(t.space == uni.space for t in uni.trees)
    for p in ref.all_points(model.space):
        assert again.predict_point(p) == uni.predict_point(p) == model.predict_point(p)
