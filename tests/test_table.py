"""Reading table columns (kcxai/_table.py): a category column read a distinct cell at a time gives what the cell
by cell reading gives, values and errors alike."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kcxai import MISSING, _table
from kcxai._errors import InvalidInputError
from kcxai._table import ColumnReader, TableReader

CATEGORIES = ("a", "b", 1, 2.5, True)
CELLS = st.sampled_from(["a", "b", 1, 1.0, 2.5, True, "c", 7, None, math.nan, pd.NA, MISSING, np.int64(1),
                         np.str_("a")])


def _read(reader: ColumnReader, cells: Any, ids: list[int], at_once: int) -> Any:
    """The reading with columns of at least ``at_once`` rows read a distinct cell at a time: values or error."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_table, "_AT_ONCE", at_once)
        try:
            return reader.read(cells, ids)
        except InvalidInputError as e:
            return f"error: {e}"


@example(cells=["a", MISSING], missing=False, as_array=False)  # MISSING itself in a column that has no missing value
@example(cells=["a", None, "c"], missing=True, as_array=True)  # the unknown category after a missing cell
@given(cells=st.lists(CELLS, min_size=1, max_size=40), missing=st.booleans(), as_array=st.booleans())
def test_a_category_column_reads_alike_at_once_and_cell_by_cell(cells: list[Any], missing: bool,
                                                                as_array: bool) -> None:
    reader = ColumnReader("col", "category", CATEGORIES, missing=missing)
    column = np.asarray(cells, dtype=object) if as_array else cells
    ids = [10 * k for k in range(len(cells))]
    at_once = _read(reader, column, ids, 1)
    by_cell = _read(reader, column, ids, 10**9)
    assert at_once == by_cell
    if not isinstance(by_cell, str):
        assert [type(v) for v in at_once] == [type(v) for v in by_cell]


def test_a_large_frame_reads_its_categories_and_names_the_first_bad_row() -> None:
    reader = TableReader(["sex", "age"], [ColumnReader("sex", "category", ("F", "M"), missing=True),
                                          ColumnReader("age", "number")])
    n = 1_000
    frame = pd.DataFrame({"sex": ["F", "M", None, "M"] * (n // 4), "age": np.arange(n)})
    got = reader.read(frame).instances
    assert got[:4] == [("F", 0.0), ("M", 1.0), (MISSING, 2.0), ("M", 3.0)] and len(got) == n
    frame.loc[700, "sex"], frame.loc[900, "sex"] = "X", "Y"
    with pytest.raises(InvalidInputError, match=r"Column 'sex' has the unknown category 'X' in row 700"):
        reader.read(frame)
