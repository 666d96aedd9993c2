"""The named types that every layer uses (the public names live in :mod:`kcxai.typing`, which adds
:data:`~kcxai.typing.Explainable`); this module imports nothing of kcxai, so that any module may use it."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Union

#: An instance in user values: a mapping of feature names to values, or a sequence in feature order.
InstanceLike = Union[Mapping[str, Any], Sequence[Any], Iterable[Any]]

#: A probability bound: ``int``, ``Fraction`` or ``float`` in [0, 1].
ProbabilityLike = Union[int, Fraction, float]

#: One feature: its index or its name.
FeatureLike = Union[int, str]

#: A collection of features, by index or by name.
FeaturesLike = Iterable[FeatureLike]

#: A class label as a model keeps it: a plain JSON scalar (numpy scalars are read as the Python ones).
Label = Union[str, int, float, bool]

#: A point of feature space: one value index per feature.
Point = tuple[int, ...]

#: An instance in user values, one per feature, in feature order.
Values = tuple[Any, ...]

#: A row's id in a table: its DataFrame index label, else its position.
RowId = Hashable

#: A row to explain: its id and its instance in user values.
IdRow = tuple[RowId, Values]

#: A method's keyword options (``order``, ``start``, ``max_seconds``, ...), checked by the method table.
MethodOptions = dict[str, Any]
