"""What a pipeline's preprocessing makes of chosen input values, computed by running its fitted steps.

:class:`Preprocessing` runs the steps on synthetic rows (every column at a fixed base value but the ones
asked about), so the encoded values kcxai uses are scikit-learn's own, bit for bit: a category's one-hot
column, a scaled number, an imputed missing value.

:func:`cuts_back` maps a classifier's test on a scaled column back to the original units. The
classifier compares ``read(g(x)) <= t``, with ``g`` the chain of steps (monotone: each is an affine scaler
or an imputer, and rounding is monotone) and ``read`` its own reading (float32 rounding for scikit-learn's
trees and XGBoost). The set of float64 inputs ``x`` that pass is then a prefix of the floats (a suffix when
``g`` decreases), so it has a last element ``c``: found by a search over the floats ordered as integers
(16 rounds of 15 candidates for 64-bit keys, all tests at once, one run of the steps per round), it is exact
for every input by construction, with no formula of the scaler re-derived. Inputs range over the floats the
steps accept (a chain of scalers overflows near the largest floats, where scikit-learn refuses the row).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kcxai._errors import InvalidInputError
from kcxai.models.imports._pipeline_steps import resolve_columns

__all__ = ["Preprocessing", "cuts_back", "read_as", "float_keys", "key_floats"]

_SIGN = np.int64(-0x8000000000000000)
_MAG = np.int64(0x7FFFFFFFFFFFFFFF)


#: Candidates per test and round of the search in :func:`cuts_back`, plus one.
_WAYS = 16
_TOP = np.uint64(0x8000000000000000)


def _unsigned(k: np.ndarray) -> np.ndarray:
    """int64 keys as uint64 in the same order (differences of any two then fit)."""
    return k.view(np.uint64) ^ _TOP


def _signed(u: np.ndarray) -> np.ndarray:
    return (u ^ _TOP).view(np.int64)


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

    def _table(self, values: Mapping[int, Any], columns: Sequence[int], m: int) -> Any:
        """The rows of ``columns`` (a DataFrame when the pipeline was fitted on one), ``values`` where given."""
        cols: list[Any] = []
        for c in columns:
            v = values.get(c, [self.bases[c]] * m)
            if self.categorical[c]:
                col = np.empty(m, dtype=object)
                col[:] = list(v)
                cols.append(col)
            else:
                cols.append(np.asarray(v, dtype=np.float64))
        if self.named:
            # pandas (heavy) loads only for named columns, not with kcxai
            import pandas as pd

            names = [self.names[c] for c in columns]
            return pd.DataFrame(dict(zip(names, cols)), columns=names)
        if any(self.categorical[c] for c in columns):
            return np.column_stack([np.asarray(c, dtype=object) for c in cols])
        return np.column_stack(cols)

    def run(self, values: Mapping[int, Any]) -> np.ndarray:
        """The encoded rows (float64) where input column ``c`` takes ``values[c]`` (all of one length) and every
        other column its base value. Raises what the steps raise."""
        m = len(next(iter(values.values())))
        X = self._table(values, range(len(self.names)), m)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            for step in self.steps:
                X = step.transform(X)
        if hasattr(X, "toarray"):
            X = X.toarray()
        return np.asarray(X, dtype=np.float64)

    def run_numbers(self, values: Mapping[int, Any], outputs: Sequence[int]) -> np.ndarray:
        """The encoded columns ``outputs`` of :meth:`run`, for rows that vary numeric columns only: when the
        first step is a ``ColumnTransformer``, only its parts that read the asked columns run, so a one-hot
        part does not encode hundreds of thousands of constant rows. Exact for the outputs of the asked
        columns (every step works column by column; other outputs are not computed)."""
        # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
        from sklearn.compose import ColumnTransformer

        if not self.steps or not isinstance(self.steps[0], ColumnTransformer):
            return self.run(values)[:, list(outputs)]
        ct = self.steps[0]
        m = len(next(iter(values.values())))
        width = max(sl.stop for sl in ct.output_indices_.values())
        rest = self.steps[1:]
        # with steps after the ColumnTransformer, they need its whole width (other parts' columns left at 0)
        X: Any = np.zeros((m, width)) if rest else np.zeros((m, len(outputs)))
        where = {z: k for k, z in enumerate(outputs)}
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            for name, trans, spec in ct.transformers_:
                if isinstance(trans, str) and trans == "drop":
                    continue
                cols = [self.names.index(c) for c in resolve_columns(spec, self.names, name)]
                if not any(c in values for c in cols):
                    continue
                part = self._table({c: values.get(c, [self.bases[c]] * m) for c in cols}, cols, m)
                block = part if isinstance(trans, str) else trans.transform(part)
                block = np.asarray(block.toarray() if hasattr(block, "toarray") else block, dtype=np.float64)
                sl = ct.output_indices_[name]
                if rest:
                    X[:, sl] = block
                    continue
                for j, z in enumerate(range(sl.start, sl.stop)):
                    if z in where:
                        X[:, where[z]] = block[:, j]
            for step in rest:
                X = step.transform(X)
        if hasattr(X, "toarray"):
            X = X.toarray()
        X = np.asarray(X, dtype=np.float64)
        return X[:, list(outputs)] if rest else X

    def try_run(self, values: Mapping[int, Sequence[Any]]) -> tuple[np.ndarray | None, str]:
        """:meth:`run`, or ``None`` and the error the steps raised."""
        try:
            return self.run(values), ""
        except (ValueError, TypeError, KeyError) as e:
            return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]


#: Bounds tried for the inputs of a chain of scalers: the largest at which the steps still run (a chain of
#: scalers overflows to infinity near the largest floats, and scikit-learn then refuses the row, as it would
#: refuse it at predict time).
_BOUNDS = (float(np.finfo(np.float64).max), 1e300, 1e250, 1e200, 1e150, 1e100, 1e50, 1e20)


def _bound(pre: Preprocessing, columns: Sequence[tuple[int, int]]) -> float:
    for b in _BOUNDS:
        try:
            pre.run_numbers({c: [-b, b] for c, _ in columns}, [z for _, z in columns])
            return b
        except (ValueError, TypeError, KeyError):
            continue
    raise InvalidInputError(
        "The pipeline's scalers overflow on inputs of magnitude 1e20: kcxai cannot map their thresholds back.")


def cuts_back(pre: Preprocessing, tasks: Sequence[tuple[int, int, np.ndarray, int]], float32: bool
              ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per task ``(input column, output column z, thresholds, sign)``, where each test falls in original units:
    ``(cuts, status)``. With ``sign`` 1, ``cuts[j]`` is the largest float ``x`` for which
    ``read(g(x)) <= thresholds[j]`` (``g``: the steps to ``z``; ``read`` rounds to float32 when ``float32``);
    with ``sign`` -1, the largest for which it fails. ``status[j]`` is 0 then, -1 when no input is below the
    cut (even the smallest float is past it), 1 when every input is (the largest float is not past it).

    Inputs range over the floats the steps accept (:data:`_BOUNDS`). One input column may appear in one
    task only (its one number output).
    """
    b = _bound(pre, [(c, z) for c, z, _, _ in tasks])
    k_lo, k_hi = float_keys(np.array([-b, b]))
    lo = [np.full(len(t), k_lo, dtype=np.int64) for _, _, t, _ in tasks]
    hi = [np.full(len(t), k_hi, dtype=np.int64) for _, _, t, _ in tasks]

    def passes(keys: list[np.ndarray], which: list[np.ndarray]) -> list[np.ndarray]:
        """Per task, whether the inputs ``keys`` pass the tests ``which`` (indices into its thresholds)."""
        m = max((len(k) for k in keys), default=0)
        vals = {}
        for (c, _, _, _), k in zip(tasks, keys):
            x = key_floats(k) if len(k) else np.zeros(1)
            vals[c] = np.concatenate([x, np.full(m - len(x), x[-1])])
        X = pre.run_numbers(vals, [z for _, z, _, _ in tasks])
        out = []
        for j, ((_, _, t, sign), k, w) in enumerate(zip(tasks, keys, which)):
            y = read_as(X[:len(k), j], float32)
            ok = y <= t[w]  # NaN: False
            out.append(ok if sign > 0 else ~ok)
        return out

    every_test = [np.arange(len(t)) for _, _, t, _ in tasks]
    none = [~f for f in passes(lo, every_test)]  # not even the smallest input passes
    every = passes(hi, every_test)  # the largest passes
    active = [~(a | e) for a, e in zip(none, every)]
    # a search in _WAYS parts at a time (one run of the steps per round, 16 rounds for 64-bit keys): the
    # steps' fixed cost per run dominates, so fewer, larger runs are faster than a bisection
    j = np.arange(1, _WAYS, dtype=np.uint64)
    while True:
        idx = [np.flatnonzero(a & (lo_k + 1 < hi_k)) for a, lo_k, hi_k in zip(active, lo, hi)]
        if not any(len(i) for i in idx):
            break
        cands, tests = [], []
        for i, lo_k, hi_k in zip(idx, lo, hi):
            a_u, b_u = _unsigned(lo_k[i]), _unsigned(hi_k[i])
            step = np.maximum((b_u - a_u) // np.uint64(_WAYS), np.uint64(1))
            c_u = np.minimum(a_u[:, None] + step[:, None] * j[None, :], b_u[:, None] - np.uint64(1))
            cands.append(_signed(c_u.ravel()))
            tests.append(np.repeat(i, len(j)))
        ok = passes(cands, tests)
        for i, c, o, lo_k, hi_k in zip(idx, cands, ok, lo, hi):
            if not len(i):
                continue
            c, o = c.reshape(len(i), -1), o.reshape(len(i), -1)
            n_ok = o.sum(axis=1)  # the inputs that pass are a prefix of the candidates
            has = n_ok > 0
            lo_k[i[has]] = c[has, n_ok[has] - 1]
            fail = n_ok < c.shape[1]
            hi_k[i[fail]] = c[fail, n_ok[fail]]
    return [(key_floats(lo_k), np.where(n, -1, np.where(e, 1, 0))) for lo_k, n, e in zip(lo, none, every)]


def check_monotone(name: str) -> InvalidInputError:
    """The error for a chain of steps found not to be monotone (a step kcxai misread)."""
    return InvalidInputError(
        f"The steps on column {name!r} are not monotone on the values kcxai checked; kcxai cannot map the "
        "classifier's thresholds back to the column. Please report this pipeline.")
