"""The tree batch reads values as ``Feature.index`` does (kcxai/engines/_tree_batch.py, ``TreeBatch.encode``):
floats and ints on numeric features (ints through the vectorised path), and categorical values looked up once
per distinct value and type."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kcxai.engines._tree_batch import TreeBatch
from tests._support.strategies import instance_of, points, trees


def _int_near(feat: Any, draw: Any) -> int:
    lo, hi = (math.floor(min(feat.thresholds)) - 2, math.ceil(max(feat.thresholds)) + 2) if feat.thresholds else (-3, 3)
    return draw(st.integers(lo, hi))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_encode_reads_every_value_as_feature_index_does(data: Any) -> None:
    tree = data.draw(trees(distributions=("uniform", "exact")))
    batch = TreeBatch.build(tree)
    if batch is None:
        return
    space = tree.space
    rows = [list(instance_of(space, data.draw(points(space)))) for _ in range(data.draw(st.integers(1, 8)))]
    for row in rows:
        for f, feat in enumerate(space.features):
            if feat.is_numeric and data.draw(st.booleans()):
                row[f] = _int_near(feat, data.draw)  # an int where the table gave a float
    want = [[feat.index(v) for feat, v in zip(space.features, row)] for row in rows]
    assert batch.encode(rows).tolist() == want
