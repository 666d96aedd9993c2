"""Reading rows of a table (pandas DataFrame, 2-D array, dict, one row) into kcxai instances.

A :class:`TableReader` knows the columns a model was fitted on (in order) and,
for each feature of the kcxai model, which column feeds it and how a cell
becomes a domain value: a category as it is (``"Male"``), a number as a float,
or a number binned by edges as a scikit-learn ``KBinsDiscretizer`` bins it.
Everything is checked once per batch, column by column, and every error names
the column (and the row's id): missing or extra columns, unknown categories,
missing values (NaN/None) in a column whose feature has no missing value, an
empty batch. A column whose feature has the missing value reads NaN / ``None``
as :data:`~kcxai.MISSING`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError, name_mismatch
from kcxai._feature import MISSING

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.space import FeatureSpace
    from kcxai.data import DataLike

#: Rows from which a category column is read a distinct cell at a time (:meth:`ColumnReader.read`).
_AT_ONCE = 64

__all__ = ["ColumnReader", "TableReader", "Table", "is_missing"]


def is_missing(x: Any) -> bool:
    """Whether a cell is a missing value (``None``, ``NaN``, ``pandas.NA``, ``NaT``)."""
    if x is None:
        return True
    if isinstance(x, float):
        return math.isnan(x)
    if isinstance(x, (str, bytes, bool, int)):
        return False
    try:
        # pandas (heavy) loads only when a cell may be a pandas missing value, not with kcxai
        import pandas as pd

        out = pd.isna(x)
        return bool(out) if isinstance(out, (bool, np.bool_)) else False
    except ImportError:  # pragma: no cover - pandas is a dependency
        return bool(x != x) if isinstance(x, numbers.Number) else False


def _py(x: Any) -> Any:
    """A numpy scalar as the Python scalar it stands for."""
    return x.item() if isinstance(x, np.generic) else x


def _shown(values: Sequence[Any], limit: int = 10) -> list[Any]:
    vals = list(values[:limit])
    return vals + ["..."] if len(values) > limit else vals


def _column(series: Any) -> np.ndarray:
    """A DataFrame column as a numpy array: numeric dtypes kept (checked at once), others as objects."""
    kind = getattr(series.dtype, "kind", "O")
    if kind in "fiu":
        return np.asarray(series.to_numpy())
    return np.asarray(series.to_numpy(dtype=object))


@dataclass(frozen=True)
class ColumnReader:
    """How one input column becomes the value of one feature.

    Attributes
    ----------
    column : str
        The input column's name.
    kind : {"category", "number", "bins"}
        ``"category"``: the cell must be one of ``categories``; ``"number"``: a
        real number; ``"bins"``: a real number placed in a bin by ``edges``
        (``searchsorted(edges[1:-1], x, side="right")``, scikit-learn's rule;
        values outside the edges go to the first or last bin).
    categories : tuple
        The domain (``"category"``).
    edges : tuple of float
        The bin edges (``"bins"``).
    missing : bool, default False
        Whether a missing cell (NaN, ``None``, ``pandas.NA``) reads as
        :data:`~kcxai.MISSING` (the feature has that value); else it is an error.
    if_missing : str
        What the error on a missing cell advises.
    if_unknown : str
        What the error on an unknown category adds (``""``: nothing).
    """

    column: str
    kind: str
    categories: tuple[Any, ...] = ()
    edges: tuple[float, ...] = ()
    missing: bool = False
    if_missing: str = "kcxai explains complete rows only: fill or drop it first"
    if_unknown: str = ""

    def _missing_cell(self, rid: Any) -> Any:
        """:data:`~kcxai.MISSING`, or the error for a missing cell in row ``rid``."""
        if self.missing:
            return MISSING
        raise self._missing_error(rid)

    def _missing_error(self, rid: Any) -> InvalidInputError:
        return InvalidInputError(f"Column {self.column!r} has a missing value (NaN/None) in row {rid!r}; "
                                 f"{self.if_missing}.")

    def _categories_at_once(self, cells: Sequence[Any], ids: Sequence[Any]) -> list[Any] | None:
        """The domain values of a category column's cells, each distinct cell looked up once (``pd.factorize``);
        ``None`` when the cells cannot be hashed (the cell-by-cell path then names the bad one)."""
        if len(cells) < _AT_ONCE:
            return None
        import pandas as pd  # heavy: loaded when a batch is read, not with kcxai

        try:
            arr = cells if isinstance(cells, np.ndarray) else np.asarray(cells, dtype=object)
            if arr.ndim != 1:  # cells that are sequences themselves: never categories
                return None
            codes, uniques = pd.factorize(arr, use_na_sentinel=True)
        except (TypeError, ValueError):
            return None
        index = {c: c for c in self.categories}
        table = np.empty(len(uniques) + 1, dtype=object)  # code -> domain value; code -1 (the last): a missing cell
        table[-1] = MISSING
        unknown, missing = [], []
        for code, u in enumerate(uniques.tolist()):
            if u is MISSING:
                table[code] = MISSING
                missing.append(code)
                continue
            try:
                table[code] = index[_py(u)]
            except (KeyError, TypeError):
                unknown.append(code)
        wrong = np.isin(codes, unknown + ([] if self.missing else [*missing, -1]))
        if wrong.any():  # the first bad row, in row order, gets the cell-by-cell path's error
            k = int(np.argmax(wrong))
            x = _py(cells[k])
            if is_missing(x) or x is MISSING:  # only an error here: the column has no missing value
                raise self._missing_error(ids[k])
            raise InvalidInputError(
                f"Column {self.column!r} has the unknown category {x!r} in row {ids[k]!r}; the model knows "
                f"{_shown(self.categories)}.{' ' + self.if_unknown if self.if_unknown else ''}")
        return list(table[codes])

    def read(self, cells: Sequence[Any], ids: Sequence[Any]) -> list[Any]:
        """The domain values of a column's cells (one per row)."""
        if self.kind == "category":
            fast = self._categories_at_once(cells, ids)
            if fast is not None:
                return fast
            index = {c: c for c in self.categories}
            out = []
            for rid, x in zip(ids, cells):
                x = _py(x)
                if is_missing(x) or x is MISSING:
                    out.append(self._missing_cell(rid))
                    continue
                try:
                    out.append(index[x])
                except (KeyError, TypeError):
                    raise InvalidInputError(
                        f"Column {self.column!r} has the unknown category {x!r} in row {rid!r}; the model knows "
                        f"{_shown(self.categories)}.{' ' + self.if_unknown if self.if_unknown else ''}") from None
            return out
        arr = np.asarray(cells) if isinstance(cells, np.ndarray) else None
        if arr is not None and arr.dtype.kind in "fiu":  # a numeric column: checked at once
            nums_arr = arr.astype(np.float64)
            nan = np.flatnonzero(np.isnan(nums_arr))
            if nan.size and not self.missing:
                self._missing_cell(ids[int(nan[0])])
            out_arr: list[Any] = (nums_arr.tolist() if self.kind == "number" else np.searchsorted(
                np.asarray(self.edges[1:-1], dtype=np.float64), nums_arr, side="right").tolist())
            for k in nan.tolist():
                out_arr[k] = MISSING
            return out_arr
        nums: list[Any] = []
        for rid, x in zip(ids, cells):
            x = _py(x)
            if isinstance(x, bool) or not isinstance(x, numbers.Real):
                if is_missing(x) or x is MISSING:
                    nums.append(self._missing_cell(rid))
                    continue
                raise InvalidInputError(
                    f"Column {self.column!r} is numeric: row {rid!r} must hold a real number. Got {x!r} instead.")
            f = float(x)
            nums.append(self._missing_cell(rid) if math.isnan(f) else f)
        if self.kind == "number":
            return nums
        inner = np.asarray(self.edges[1:-1], dtype=np.float64)
        known = np.asarray([np.nan if x is MISSING else x for x in nums], dtype=np.float64)
        bins = np.searchsorted(inner, known, side="right").tolist()
        return [MISSING if x is MISSING else b for x, b in zip(nums, bins)]


@dataclass(frozen=True)
class Table:
    """Rows read from a table: kcxai instances (user values, feature order) and their ids."""

    instances: list[tuple[Any, ...]]
    ids: list[Any]
    single: bool


class TableReader:
    """Reads tables of the columns a model was fitted on into instances of its features.

    Parameters
    ----------
    columns : sequence of str
        Every input column, in the order the model was fitted on (columns a
        pipeline drops are listed too: a table must still have them).
    features : sequence of ColumnReader
        One per feature of the kcxai model, in feature order.
    by_position : bool, default True
        Whether rows without column names (arrays, lists) are accepted, read
        in ``columns`` order.

    Examples
    --------
    >>> import pandas as pd
    >>> from kcxai._table import ColumnReader, TableReader
    >>> reader = TableReader(["sex", "age"], [ColumnReader("sex", "category", ("F", "M")),
    ...                                       ColumnReader("age", "number")])
    >>> reader.read(pd.DataFrame({"age": [37, 50], "sex": ["M", "F"]})).instances
    [('M', 37.0), ('F', 50.0)]
    >>> reader.read({"sex": "F", "age": 20}).single
    True
    """

    def __init__(self, columns: Sequence[str], features: Sequence[ColumnReader], *, by_position: bool = True) -> None:
        self.columns = tuple(str(c) for c in columns)
        self.features = tuple(features)
        self.by_position = by_position
        pos = {c: k for k, c in enumerate(self.columns)}
        missing = [f.column for f in self.features if f.column not in pos]
        if missing:
            raise InvalidInputError(f"Feature columns {missing} are not among the input columns {list(self.columns)}.")
        self._positions = tuple(pos[f.column] for f in self.features)

    @classmethod
    def for_space(cls, space: FeatureSpace) -> "TableReader":
        """The reader of a kcxai model's own features: one column per feature, named like it."""
        readers = [ColumnReader(f.name, "number", missing=f.missing_index is not None) if f.is_numeric
                   else ColumnReader(f.name, "category", f.values, missing=f.missing_index is not None)
                   for f in space.features]
        return cls(space.names, readers)

    # -- reading ---------------------------------------------------------------

    def read(self, X: DataLike, *, argument: str = "X") -> Table:
        """Rows of ``X`` as instances: a DataFrame, a 2-D array or list of rows, a dict of columns or of
        one row's values, a pandas Series (one row) or a 1-D sequence (one row)."""
        cols, ids, single = self._columns_of(X, argument)
        n = len(ids)
        if n == 0:
            raise InvalidInputError(f"'{argument}' is empty: there is no row to explain.")
        values = [reader.read(cols[p], ids) for reader, p in zip(self.features, self._positions)]
        return Table(instances=list(zip(*values)), ids=ids, single=single)

    def _check_names(self, names: Sequence[Any], argument: str) -> None:
        names = [str(c) for c in names]
        wrong = name_mismatch(names, self.columns)
        if wrong:
            raise InvalidInputError(
                f"'{argument}' must have exactly the columns the model was fitted on {_shown(self.columns, 20)}. "
                f"{wrong}")
        if len(set(names)) != len(names):
            raise InvalidInputError(f"'{argument}' has repeated column names: {names}.")

    def _columns_of(self, X: Any, argument: str) -> tuple[list[Any], list[Any], bool]:
        """The input columns (in :attr:`columns` order) of ``X``, the row ids, and whether it was one row."""
        if hasattr(X, "iloc") and hasattr(X, "columns"):  # a DataFrame
            self._check_names(list(X.columns), argument)
            by_name = {str(c): c for c in X.columns}
            cols = [_column(X[by_name[c]]) for c in self.columns]
            return cols, [_py(i) for i in X.index], False
        if hasattr(X, "iloc") and hasattr(X, "index"):  # a Series: one row labelled by column
            self._check_names(list(X.index), argument)
            name = getattr(X, "name", None)
            return [[X[c]] for c in self.columns], [0 if name is None else _py(name)], True
        if isinstance(X, Mapping):
            self._check_names(list(X), argument)
            vals = [X[c] for c in self.columns]
            if all(isinstance(v, (str, bytes)) or not hasattr(v, "__len__") for v in vals):
                return [[v] for v in vals], [0], True
            lens = {len(v) for v in vals}
            if len(lens) != 1:
                raise InvalidInputError(f"'{argument}': the columns of a dict must have equal lengths. Got {lens}.")
            return [list(v) for v in vals], list(range(lens.pop())), False
        if isinstance(X, (str, bytes)):
            raise InvalidTypeError(f"'{argument}' must be a table of rows or one row. Got the string {X!r}.")
        try:
            arr = np.asarray(X)
            if arr.dtype.kind not in "fiu":
                arr = np.asarray(X, dtype=object)
        except (TypeError, ValueError):
            raise InvalidTypeError(
                f"'{argument}' must be a table of rows or one row. Got {type(X).__name__}.") from None
        if arr.ndim not in (1, 2):
            raise InvalidInputError(f"'{argument}' must be one row (1-D) or rows (2-D). Got {arr.ndim} dimensions.")
        if not self.by_position:
            raise InvalidInputError(
                f"'{argument}' must be a pandas DataFrame (or dict) with the columns {_shown(self.columns, 20)}: "
                "the model reads columns by name.")
        single = arr.ndim == 1
        if single:
            arr = arr.reshape(1, -1)
        if arr.shape[0] and arr.shape[1] != len(self.columns):
            raise InvalidInputError(
                f"'{argument}' must have {len(self.columns)} columns {_shown(self.columns, 20)}. "
                f"Got {arr.shape[1]} instead.")
        if arr.shape[0] == 0:
            return [[] for _ in self.columns], [], single
        return [arr[:, k] for k in range(len(self.columns))], list(range(arr.shape[0])), single
