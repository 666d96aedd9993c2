"""A rule's conditions as value masks, the form the rule models work with.

A condition on feature ``i`` is a *mask*: bit ``k`` is set iff value number
``k`` satisfies it. A rule's conditions are :data:`Conds`, ``(feature, mask)``
pairs sorted by feature, one per tested feature, none with the full mask (a
feature tested twice is the intersection of its masks; a test every value
passes is dropped). Both the Python form (:func:`conditions_from`) and the text
form (:mod:`kcxai.models._rule_text`) are read into it.

Examples
--------
>>> from kcxai import Feature, FeatureSpace, Interval
>>> space = FeatureSpace([Feature.numeric("age", [30, 40]), Feature.categorical("sex", ["F", "M"])])
>>> conds = conditions_from(space, {"sex": "F", "age": Interval(30, 40)}, "rule")
>>> conds, matches(conds, (1, 0)), matches(conds, (2, 0))
(((0, 2), (1, 1)), True, False)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.space import Feature, FeatureSpace, Interval

__all__ = ["Conds", "ConditionsLike", "FeatureKey", "ValueRange", "full_mask", "is_number", "range_mask",
           "values_mask", "conds_from_masks", "conditions_from", "matches"]

#: ``(feature, mask)`` pairs sorted by feature, one per tested feature, no full mask.
Conds = tuple[tuple[int, int], ...]

#: A feature given by name or index.
FeatureKey = Union[int, str]

#: What a :class:`~kcxai.models.Rule` accepts as conditions: ``{feature: values}``
#: or ``[(feature, values), ...]``, ``values`` being one domain value, a
#: collection of them, or (numeric features) :class:`~kcxai.Interval` objects.
ConditionsLike = Union[Mapping[str, Any], Mapping[int, Any], Mapping[FeatureKey, Any],
                       Sequence[tuple[FeatureKey, Any]]]


def full_mask(size: int) -> int:
    """The mask of every value of a feature with ``size`` values."""
    return (1 << size) - 1


@dataclass(frozen=True)
class ValueRange:
    """A set of reals between two bounds, each open or closed.

    Examples
    --------
    >>> 40 in ValueRange(30, 40, False, True), 30 in ValueRange(30, 40, False, True)
    (True, False)
    """

    low: float
    high: float
    low_closed: bool
    high_closed: bool

    def __contains__(self, x: float) -> bool:
        lo_ok = x > self.low or (self.low_closed and x == self.low)
        hi_ok = x < self.high or (self.high_closed and x == self.high)
        return lo_ok and hi_ok


def is_number(v: object) -> bool:
    """Whether ``v`` is an ``int`` or ``float`` (not a ``bool``): a value a range can hold."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _interval_vs_range(iv: Interval, r: ValueRange) -> str:
    """``"in"``, ``"out"`` or ``"cut"``: where the interval ``(low, high]`` stands with respect to ``r``."""
    hi_in = iv.high < r.high or (iv.high == r.high and (r.high_closed or r.high == math.inf))
    if iv.low >= r.low and hi_in:
        return "in"
    if iv.high < r.low or (iv.high == r.low and not r.low_closed) or iv.low >= r.high:
        return "out"
    return "cut"


def range_mask(feature: Feature, r: ValueRange, shown: str) -> int:
    """The mask of the values of ``feature`` in ``r`` (``shown``: the condition, for errors).

    On a numeric feature ``r`` must be a union of the feature's intervals; on a
    categorical one, the values must be numbers.

    Examples
    --------
    >>> from kcxai import Feature
    >>> range_mask(Feature.numeric("age", [30, 40]), ValueRange(-math.inf, 40, False, True), "age <= 40")
    3
    >>> range_mask(Feature.numeric("age", [30, 40]), ValueRange(-math.inf, 35, False, True), "age <= 35")
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidInputError: The condition 'age <= 35' cuts the interval (30, 40] of numeric feature 'age': a condition must be a union of the feature's intervals (add a threshold, or use <= / >).
    """  # noqa: E501 (a doctest's one-line error message)
    mask = 0
    values = feature.values if feature.missing_index is None else feature.values[:-1]  # a range holds no missing
    if feature.is_numeric:
        for k, iv in enumerate(values):
            where = _interval_vs_range(iv, r)
            if where == "cut":
                raise InvalidInputError(
                    f"The condition {shown!r} cuts the interval {iv} of numeric feature {feature.name!r}: "
                    "a condition must be a union of the feature's intervals (add a threshold, or use <= / >).")
            if where == "in":
                mask |= 1 << k
        return mask
    for k, v in enumerate(values):
        if not is_number(v):
            raise InvalidInputError(
                f"The condition {shown!r} compares numbers, but feature {feature.name!r} has the non-numeric "
                f"value {v!r}.")
        if v in r:
            mask |= 1 << k
    return mask


def values_mask(feature: Feature, values: object, where: str) -> int:
    """The mask of a value, a collection of values, or intervals (numeric features)."""
    if isinstance(values, (str, bytes, Interval)) or not isinstance(values, Iterable):
        values = [values]
    mask = 0
    for v in values:
        if feature.is_numeric:
            if not isinstance(v, Interval):
                raise InvalidInputError(
                    f"{where}: feature {feature.name!r} is numeric; give its values as Interval objects "
                    f"(unions of its intervals). Got {v!r} instead.")
            r = ValueRange(v.low, v.high, False, True)
            mask |= range_mask(feature, r, f"{feature.name} in {v}")
        else:
            try:
                mask |= 1 << feature.index(v)
            except InvalidInputError as e:
                raise InvalidInputError(f"{where}: {e}") from None
    return mask


def conds_from_masks(space: FeatureSpace, masks: Mapping[int, int]) -> Conds:
    """``{feature: mask}`` as :data:`Conds`: sorted, full masks dropped."""
    return tuple(sorted((i, m) for i, m in masks.items() if m != full_mask(space.features[i].size)))


def conditions_from(space: FeatureSpace, conditions: ConditionsLike, where: str) -> Conds:
    """Read conditions given as ``{feature: values}`` or ``(feature, values)`` pairs (``where``: for errors)."""
    items: list[tuple[Any, Any]]
    if isinstance(conditions, Mapping):
        items = list(conditions.items())
    elif isinstance(conditions, (str, bytes)) or not isinstance(conditions, Iterable):
        raise InvalidTypeError(
            f"{where}: conditions must be a mapping {{feature: values}} or (feature, values) pairs. "
            f"Got {conditions!r} instead.")
    else:
        items = []
        for item in conditions:
            if isinstance(item, (str, bytes)) or not isinstance(item, Sequence) or len(item) != 2:
                raise InvalidTypeError(f"{where}: each condition must be a (feature, values) pair. Got {item!r}.")
            items.append((item[0], item[1]))
    masks: dict[int, int] = {}
    for feat, values in items:
        i = space.feature_index(feat)
        m = values_mask(space.features[i], values, where)
        masks[i] = masks.get(i, full_mask(space.features[i].size)) & m
    return conds_from_masks(space, masks)


def matches(conds: Conds, point: Sequence[int]) -> bool:
    """Whether a point (value indices) satisfies every condition."""
    return all(m >> point[i] & 1 for i, m in conds)
