"""Rows of data as points of a feature space: the one reader of user data sets.

Used to fit distributions and to evaluate explanations on held-out rows. Rows
come as a 2-D numpy array (columns in the space's feature order), a pandas
DataFrame (columns read by feature name; extra or missing columns are an
error), or a sequence of rows. Every value is mapped to its domain value
exactly as an instance is (:meth:`~kcxai.FeatureSpace.encode`): a number falls
in its numeric feature's interval; a categorical value must be one of the
domain's values. Anything else (NaN, an unknown category, a wrong number of
columns, no rows) is an :class:`~kcxai.InvalidInputError` naming the argument,
the row and the column: no row is dropped silently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError, name_mismatch

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.space import FeatureSpace

__all__ = ["DataLike", "encode_rows"]

#: Rows of data: a 2-D array, a pandas DataFrame, or a sequence of rows.
DataLike = Union["np.ndarray[Any, Any]", Any]


def encode_rows(space: "FeatureSpace", X: DataLike, *, argument: str = "X") -> "np.ndarray[Any, Any]":
    """The rows of ``X`` as points: an ``int`` array of shape ``(n_rows, n_features)``.

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.data import encode_rows
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical("c", ["a", "b"]), kcxai.Feature.numeric("x", [5])])
    >>> encode_rows(space, [["a", 1.0], ["b", 7.5]]).tolist()
    [[0, 0], [1, 1]]
    """
    names = list(space.names)
    if hasattr(X, "columns") and hasattr(X, "iloc"):  # a pandas DataFrame
        cols = [str(c) for c in X.columns]
        wrong = name_mismatch(cols, names)
        if wrong:
            raise InvalidInputError(f"'{argument}' must have exactly the model's feature columns {names}. {wrong}")
        columns = [X[n].tolist() for n in names]
        n_rows = len(X)
    else:
        if isinstance(X, (str, bytes)) or not hasattr(X, "__len__"):
            raise InvalidTypeError(
                f"'{argument}' must be a 2-D array, a pandas DataFrame or a sequence of rows. "
                f"Got {type(X).__name__} instead.")
        rows = X.tolist() if hasattr(X, "tolist") else [list(r.tolist() if hasattr(r, "tolist") else r) for r in X]
        n_rows = len(rows)
        for i, r in enumerate(rows):
            if isinstance(r, (str, bytes)) or not hasattr(r, "__len__") or len(r) != len(names):
                got = len(r) if hasattr(r, "__len__") and not isinstance(r, (str, bytes)) else type(r).__name__
                raise InvalidInputError(
                    f"'{argument}' must have {len(names)} columns (the features {names}). Row {i} has {got}.")
        columns = [[r[j] for r in rows] for j in range(len(names))]
    if n_rows == 0:
        raise InvalidInputError(f"'{argument}' must have at least one row. Got an empty data set.")
    out = np.empty((n_rows, len(names)), dtype=np.int64)
    for j, (feature, col) in enumerate(zip(space.features, columns)):
        cache: dict[Any, int] = {}  # keyed by (type, value): True is not the value 1
        for i, value in enumerate(col):
            key = (type(value), value)
            try:
                k = cache.get(key) if not isinstance(value, float) or value == value else None
            except TypeError:  # unhashable
                k = None
            if k is None:
                try:
                    k = feature.index(value)
                except InvalidInputError as e:
                    raise InvalidInputError(f"'{argument}', row {i}, column {feature.name!r}: {e}") from None
                try:
                    cache[key] = k
                except TypeError:
                    pass
            out[i, j] = k
    return out
