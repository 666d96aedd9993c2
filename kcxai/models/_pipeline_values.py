"""What a pipeline's preprocessing makes of chosen input values, computed by running its fitted steps.

:class:`Preprocessing` runs the steps on synthetic rows (every column at a fixed base value but the ones
asked about), so the encoded values kcxai uses are scikit-learn's own, bit for bit: a category's one-hot
column, a scaled number, an imputed missing value.

:func:`cuts_back` maps a classifier's test on a scaled column back to the original units. The
classifier compares ``read(g(x)) <= t``, with ``g`` the chain of steps (monotone: each is an affine scaler
or an imputer, and rounding is monotone) and ``read`` its own reading (float32 rounding for scikit-learn's
trees and XGBoost). The set of float64 inputs ``x`` that pass is then a prefix of the floats (a suffix when
``g`` decreases), so it has a last element ``c``: found by bisection over the floats ordered as integers
(64 steps, all tests at once, one run of the steps per step), it is exact for every input by construction,
with no formula of the scaler re-derived.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kcxai._errors import InvalidInputError

__all__ = ["Preprocessing", "cuts_back", "read_as", "float_keys", "key_floats"]

_SIGN = np.int64(-0x8000000000000000)
_MAG = np.int64(0x7FFFFFFFFFFFFFFF)
#: The keys of the largest finite floats (scikit-learn refuses infinite inputs).
_LO = -0x7FEFFFFFFFFFFFFF
_HI = 0x7FEFFFFFFFFFFFFF


def float_keys(x: np.ndarray) -> np.ndarray:
    """Float64 values as int64 keys in the same order (``-0.0`` and ``0.0`` share the key 0)."""
    b = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
    return np.where(b < 0, -(b & _MAG), b)


def key_floats(k: np.ndarray) -> np.ndarray:
    """Inverse of :func:`float_keys`."""
    k = np.asarray(k, dtype=np.int64)
    return np.where(k < 0, (-k) | _SIGN, k).view(np.float64)


def read_as(values: np.ndarray, float32: bool) -> np.ndarray:
    """Values as the classifier reads them (rounded to float32, overflow to infinity, or kept)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(values, dtype=np.float64).astype(np.float32).astype(np.float64) if float32 \
            else np.asarray(values, dtype=np.float64)


class Preprocessing:
    """The fitted preprocessing steps of a pipeline, run on synthetic rows.

    Parameters
    ----------
    steps : sequence
        The fitted transformers, in order.
    names : sequence of str
        The input columns.
    named : bool
        Whether the pipeline was fitted on a DataFrame (rows are then built as one).
    bases : sequence
        Per input column, the value it takes in rows that do not ask about it.
    categorical : sequence of bool
        Per input column, whether its cells are categories (built as an object column, as a table of strings
        with missing values is), else numbers (float64).
    """

    def __init__(self, steps: Sequence[Any], names: Sequence[str], named: bool, bases: Sequence[Any],
                 categorical: Sequence[bool]) -> None:
        self.steps = list(steps)
        self.names = list(names)
        self.named = named
        self.bases = list(bases)
        self.categorical = list(categorical)

    def run(self, values: Mapping[int, Sequence[Any]]) -> np.ndarray:
        """The encoded rows (float64) where input column ``c`` takes ``values[c]`` (all of one length) and every
        other column its base value. Raises what the steps raise."""
        m = len(next(iter(values.values())))
        cols: list[Any] = []
        for c, (base, cat) in enumerate(zip(self.bases, self.categorical)):
            v = values.get(c, [base] * m)
            if cat:
                col = np.empty(m, dtype=object)
                col[:] = list(v)
                cols.append(col)
            else:
                cols.append(np.asarray(v, dtype=np.float64))
        if self.named:
            import pandas as pd

            X: Any = pd.DataFrame(dict(zip(self.names, cols)), columns=self.names)
        else:
            X = np.column_stack([np.asarray(c, dtype=object) for c in cols]) if any(self.categorical) \
                else np.column_stack(cols)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            for step in self.steps:
                X = step.transform(X)
        if hasattr(X, "toarray"):
            X = X.toarray()
        return np.asarray(X, dtype=np.float64)

    def try_run(self, values: Mapping[int, Sequence[Any]]) -> tuple[np.ndarray | None, str]:
        """:meth:`run`, or ``None`` and the error the steps raised."""
        try:
            return self.run(values), ""
        except (ValueError, TypeError, KeyError) as e:
            return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]


def cuts_back(pre: Preprocessing, tasks: Sequence[tuple[int, int, np.ndarray, int]], float32: bool
              ) -> list[np.ndarray]:
    """Per task ``(input column, output column z, thresholds, sign)``, the positions of the tests in original
    units, as float64 keys: per threshold ``t``, the largest finite float ``x`` for which
    ``read(g(x)) <= t`` (``sign`` 1; for ``sign`` -1, the largest ``x`` for which it fails), or the key just
    below the smallest float when there is none (every input is on the other side), or :data:`_HI` when every
    finite input passes. ``read`` rounds to float32 when ``float32``.

    One input column may appear in one task only (its one number output).
    """
    lo = [np.full(len(t), _LO, dtype=np.int64) for _, _, t, _ in tasks]
    hi = [np.full(len(t), _HI, dtype=np.int64) for _, _, t, _ in tasks]

    def passes(keys: list[np.ndarray], which: list[np.ndarray]) -> list[np.ndarray]:
        """Per task, whether the inputs ``keys`` pass the tests ``which`` (indices into its thresholds)."""
        m = max((len(k) for k in keys), default=0)
        vals = {}
        for (c, _, _, _), k in zip(tasks, keys):
            x = key_floats(k) if len(k) else np.zeros(1)
            vals[c] = np.concatenate([x, np.full(m - len(x), x[-1])]).tolist()
        X = pre.run(vals)
        out = []
        for (c, z, t, sign), k, w in zip(tasks, keys, which):
            y = read_as(X[:len(k), z], float32)
            ok = y <= t[w]  # NaN: False
            out.append(ok if sign > 0 else ~ok)
        return out

    every_test = [np.arange(len(t)) for _, _, t, _ in tasks]
    none = [~f for f in passes(lo, every_test)]  # not even the smallest float passes
    every = passes(hi, every_test)  # the largest passes
    active = [~(a | b) for a, b in zip(none, every)]
    while True:
        idx = [np.flatnonzero(a & (lo_k + 1 < hi_k)) for a, lo_k, hi_k in zip(active, lo, hi)]
        if not any(len(i) for i in idx):
            break
        mids = [(lo_k[i] >> 1) + (hi_k[i] >> 1) + (lo_k[i] & hi_k[i] & 1) for i, lo_k, hi_k in zip(idx, lo, hi)]
        ok = passes(mids, idx)
        for i, m, o, lo_k, hi_k in zip(idx, mids, ok, lo, hi):
            lo_k[i[o]] = m[o]
            hi_k[i[~o]] = m[~o]
    out = []
    for lo_k, n, e in zip(lo, none, every):
        k = lo_k.copy()
        k[n] = _LO - 1
        k[e] = _HI
        out.append(k)
    return out


def check_monotone(name: str) -> InvalidInputError:
    """The error for a chain of steps found not to be monotone (a step kcxai misread)."""
    return InvalidInputError(
        f"The steps on column {name!r} are not monotone on the values kcxai checked; kcxai cannot map the "
        "classifier's thresholds back to the column. Please report this pipeline.")
