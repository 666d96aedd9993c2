"""What widening shares between the exact languages (:mod:`kcxai.explain.inflate`) and the ensemble box
search (:mod:`kcxai.explain._inflate_ensemble`): the order of the features, boxes and their conditions, and
the widened explanation."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.arithmetic import Weight
from kcxai.explain.explanation import Condition, Explanation
from kcxai.oracle import Box, point_box
from kcxai.space import FeatureSpace


def widening_order(space: FeatureSpace, features: Sequence[int], order: Any) -> list[int]:
    """The features of a set in the order they are widened: ``order``'s first (by index or name), then the
    others by index."""
    if order is None:
        return list(features)
    if isinstance(order, (str, bytes, Mapping)) or not isinstance(order, Iterable):
        raise InvalidTypeError(f"'order' must be a sequence of feature indices or names. Got {order!r} instead.")
    seq = [space.feature_index(f) for f in (order.tolist() if hasattr(order, "tolist") else order)]
    if len(set(seq)) != len(seq):
        raise InvalidInputError(f"'order' must not repeat a feature. Got {list(order)!r} instead.")
    return [f for f in seq if f in features] + [f for f in features if f not in set(seq)]


def conditions_of(space: FeatureSpace, box: Box) -> tuple[Condition, ...]:
    """The conditions of a box on its constrained features (those not left free), in index order."""
    out = []
    for f, mask in enumerate(box):
        feat = space.features[f]
        if mask == (1 << feat.size) - 1:
            continue
        values = tuple(k for k in range(feat.size) if mask >> k & 1)
        out.append(Condition(f, feat.name, values, feat.set_literal(values)))
    return tuple(out)


def box_of(space: FeatureSpace, explanation: Explanation) -> Box:
    """The box of an explanation: its conditions if widened, else the instance's cells on its features."""
    if explanation.conditions is not None:
        box = [(1 << f.size) - 1 for f in space.features]
        for c in explanation.conditions:
            box[c.feature] = sum(1 << k for k in c.values)
        return tuple(box)
    return point_box(space, space.encode(explanation.instance, argument="explanation.instance"),
                     explanation.features)


def widened_explanation(e: Explanation, space: FeatureSpace, box: Box, disagree: Weight, consistent: Weight, calls: int,
             seconds: float) -> Explanation:
    """``e`` with the conditions of ``box``, their exact weights under the distribution, and the work added."""
    conds = conditions_of(space, box)
    point = space.encode(e.instance, argument="explanation.instance")
    feats = tuple(c.feature for c in conds)
    return dataclasses.replace(
        e, features=feats, names=tuple(c.name for c in conds),
        values=tuple(space.features[f].values[point[f]] for f in feats), literals=tuple(c.literal for c in conds),
        error=space.probability(disagree), precision=space.arith.complement(disagree, consistent),
        coverage=space.probability(consistent), oracle_calls=e.oracle_calls + calls, seconds=e.seconds + seconds,
        conditions=conds)
