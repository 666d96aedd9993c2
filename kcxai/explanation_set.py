"""Explanations of many rows, as a collection that becomes a pandas DataFrame."""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any, NamedTuple, Union, cast, overload

from kcxai._errors import KcxaiError
from kcxai.explain.explanation import Condition, Explanation, Missed, RowFailure, missed_options
from kcxai.space import FeatureSpace, Probability

__all__ = ["ExplanationSet", "RowFailure", "Row", "PackedRow", "pack", "Unpacker", "FRAME_COLUMNS"]


#: One entry of an :class:`ExplanationSet`.
Row = Union[Explanation, RowFailure]

#: A probability in a packed row: ``None``, a float, or an exact fraction as ``(numerator, denominator)``.
_Number = Union[None, float, tuple[int, int]]


class PackedRow(NamedTuple):
    """An explanation in the compact form a worker process sends back (see :func:`pack`).

    Plain ints, strings and tuples: no ``Fraction`` (pickled as text), no domain value (intervals), no
    literal, names or instance (the parent has them). :class:`Unpacker` rebuilds the
    :class:`~kcxai.Explanation`, equal to the worker's in every field.
    """

    features: tuple[int, ...]
    value_indices: tuple[int, ...]  # the instance's value number on each feature of the set
    prediction: Any
    numbers: tuple[_Number, ...]  # delta, error, precision, coverage, precision_bound
    language: str
    oracle_calls: int
    seconds: float
    kind: str
    method: str
    distribution: str
    confidence: float | None
    conditions: tuple[tuple[int, tuple[int, ...]], ...] | None  # (feature, value numbers) if widened
    instance: tuple[Any, ...] | None  # None: the row's own instance
    #: how it was decided: (decided, interval, sampled, error_bounds, certified, missed, widening,
    #: unwidened_coverage), intervals as number pairs
    proof: tuple[Any, ...] = ("exact", None, 0, None, None, (), None, None)


def _num(p: Probability | None) -> _Number:
    return (p.numerator, p.denominator) if isinstance(p, Fraction) else p


def _frac(x: _Number) -> Probability | None:
    return Fraction(*x) if isinstance(x, tuple) else x


def _pair(p: tuple[Probability, Probability] | None) -> tuple[_Number, _Number] | None:
    return None if p is None else (_num(p[0]), _num(p[1]))


def _unpair(p: tuple[_Number, _Number] | None) -> tuple[Probability, Probability] | None:
    return None if p is None else (cast(Probability, _frac(p[0])), cast(Probability, _frac(p[1])))


class Unpacker:
    """Rebuilds explanations from :class:`PackedRow` s of one feature space (literals cached).

    Parameters
    ----------
    space : FeatureSpace
    """

    def __init__(self, space: FeatureSpace) -> None:
        self.space = space
        self._names = space.names
        self._literals: dict[tuple[int, int], str] = {}
        self._set_literals: dict[tuple[int, tuple[int, ...]], str] = {}
        self._indices: dict[tuple[int, type, Any], int] = {}

    def index(self, feature: int, value: Any) -> int:
        """The value number of a domain value of ``feature`` (:meth:`kcxai.Feature.index`, cached)."""
        key = (feature, type(value), value)
        got = self._indices.get(key)
        if got is None:
            got = self._indices[key] = self.space.features[feature].index(value)
        return got

    def literal(self, feature: int, k: int) -> str:
        """``x_feature = value k``, as :meth:`kcxai.FeatureSpace.literal` prints it."""
        got = self._literals.get((feature, k))
        if got is None:
            got = self._literals[(feature, k)] = self.space.features[feature].literal(k)
        return got

    def set_literal(self, feature: int, ks: tuple[int, ...]) -> str:
        """``x_feature in {values}``, as :meth:`kcxai.Feature.set_literal` prints it."""
        got = self._set_literals.get((feature, ks))
        if got is None:
            got = self._set_literals[(feature, ks)] = self.space.features[feature].set_literal(ks)
        return got

    def parts(self, features: tuple[int, ...], ks: tuple[int, ...],
              conditions: tuple[tuple[int, tuple[int, ...]], ...] | None
              ) -> tuple[tuple[str, ...], tuple[Any, ...], tuple[str, ...], tuple[Condition, ...] | None]:
        """Names, values, literals and conditions of a set from its features and the instance's value numbers."""
        fs, names = self.space.features, self._names
        values = tuple(fs[i].values[k] for i, k in zip(features, ks))
        if conditions is None:
            return tuple(names[i] for i in features), values, tuple(map(self.literal, features, ks)), None
        conds = tuple(Condition(f, names[f], vs, self.set_literal(f, vs)) for f, vs in conditions)
        return tuple(names[i] for i in features), values, tuple(c.literal for c in conds), conds

    def __call__(self, row: PackedRow, instance: tuple[Any, ...]) -> Explanation:
        names, values, literals, conds = self.parts(row.features, row.value_indices, row.conditions)
        delta, error, precision, coverage, bound = map(_frac, row.numbers)
        decided, interval, sampled, error_bounds, certified, missed, widening, unwidened = row.proof
        return Explanation(
            features=row.features, names=names, values=values, literals=literals, prediction=row.prediction,
            delta=delta, error=error, precision=precision, language=row.language, oracle_calls=row.oracle_calls,
            seconds=row.seconds, kind=row.kind, method=row.method,
            instance=instance if row.instance is None else row.instance, coverage=coverage,
            distribution=row.distribution, confidence=row.confidence, precision_bound=bound, conditions=conds,
            decided=decided, interval=_unpair(interval), sampled=sampled, error_bounds=_unpair(error_bounds),
            certified=certified, missed=missed, widening=widening, unwidened_coverage=_frac(unwidened))


def pack(e: Explanation, instance: tuple[Any, ...], unpacker: Unpacker) -> "PackedRow | Explanation":
    """``e`` (explaining ``instance`` in ``unpacker.space``) as a :class:`PackedRow`, or ``e`` itself when its
    names, values or literals are not the ones the space gives (nothing is lost either way)."""
    conds = None if e.conditions is None else tuple((c.feature, c.values) for c in e.conditions)
    try:
        ks = tuple(map(unpacker.index, e.features, e.values))
        names, values, literals, rebuilt = unpacker.parts(e.features, ks, conds)
    except (KcxaiError, IndexError, TypeError):  # pragma: no cover - not values of the space: sent as they are
        return e
    if names != e.names or values != e.values or literals != e.literals or rebuilt != e.conditions:
        return e
    return PackedRow(e.features, ks, e.prediction, tuple(map(_num, (e.delta, e.error, e.precision, e.coverage,
                                                                       e.precision_bound))),
                     e.language, e.oracle_calls, e.seconds, e.kind, e.method, e.distribution, e.confidence, conds,
                     None if e.instance == instance else e.instance,
                     (e.decided, _pair(e.interval), e.sampled, _pair(e.error_bounds), e.certified, e.missed,
                      e.widening, _num(e.unwidened_coverage)))


class Lazy:
    """An entry of an :class:`ExplanationSet` rebuilt when first read (a packed row with its instance)."""

    __slots__ = ("unpacker", "row", "instance")

    def __init__(self, unpacker: Unpacker, row: PackedRow, instance: tuple[Any, ...]) -> None:
        self.unpacker = unpacker
        self.row = row
        self.instance = instance

    def get(self) -> Explanation:
        return self.unpacker(self.row, self.instance)


#: The columns of :meth:`ExplanationSet.to_frame`, in order.
FRAME_COLUMNS = ("id", "prediction", "method", "delta", "precision_bound", "bounds", "size", "features", "rule",
                 "error", "precision", "coverage", "error_exact", "precision_exact", "coverage_exact", "distribution",
                 "language", "approximate", "confidence", "decided", "sampled", "interval_low", "interval_high",
                 "error_low", "error_high", "certified", "missed", "missed_options", "widening", "unwidened_coverage",
                 "oracle_calls", "seconds", "failure")


def _float(p: Probability | None) -> float | None:
    return None if p is None else float(p)


def _exact(p: Probability | None) -> str | None:
    return str(p) if isinstance(p, Fraction) else None


def _missed(missed: Missed) -> str | None:
    """``"box max_boxes, conditioned limit: 3; sampling: 12"``: a frame's ``missed`` cell (``None`` if empty)."""
    return "; ".join(f"{reason}: {n}" for reason, n in missed) or None


class ExplanationSet(Sequence[Row]):
    """The explanations of a batch of rows, in row order, with the failures of rows that had none.

    Indexing gives an :class:`~kcxai.Explanation` or a :class:`RowFailure`;
    :meth:`to_frame` gives one DataFrame row per input row.

    Parameters
    ----------
    rows : sequence of Explanation or RowFailure
    ids : sequence
        The row ids (DataFrame index labels, else positions).
    bounds : {"error", "precision"}
        What the method that made them bounds: the error (``delta``) or the precision (``precision_bound``).

    Examples
    --------
    >>> import kcxai
    >>> explainer = kcxai.Explainer(kcxai.datasets.running_example_tree())
    >>> rows = [(1, 1, 1, 1, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 0, 0, 0, 0)]
    >>> result = explainer.explain(rows, method="min_idrs", delta=0.03)
    >>> len(result), result.n_failures
    (2, 0)
    >>> frame = result.to_frame()
    >>> frame["size"].tolist(), frame["rule"][0]
    ([5, 4], 'IF x5 = 0 AND x6 = 0 AND x7 = 0 AND x8 = 0 AND x9 = 1 THEN class = 1')
    """

    def __init__(self, rows: Sequence[Row], ids: Sequence[Any], *, bounds: str) -> None:
        self._rows: list[Any] = list(rows)  # Explanation, RowFailure, or Lazy (rebuilt when first read)
        self.ids = tuple(ids)
        self.bounds = bounds

    # -- sequence ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._rows)

    def _row(self, k: int) -> Row:
        r = self._rows[k]
        if isinstance(r, Lazy):
            r = self._rows[k] = r.get()
        return r  # type: ignore[no-any-return]

    @overload
    def __getitem__(self, k: int) -> Row: ...

    @overload
    def __getitem__(self, k: slice) -> "ExplanationSet": ...

    def __getitem__(self, k: int | slice) -> Any:
        if isinstance(k, slice):
            return ExplanationSet(self._rows[k], self.ids[k], bounds=self.bounds)
        return self._row(k)

    def __iter__(self) -> Iterator[Row]:
        return (self._row(k) for k in range(len(self._rows)))

    @property
    def explanations(self) -> list[Explanation]:
        """The explanations (rows that failed left out)."""
        return [r for r in self if isinstance(r, Explanation)]

    @property
    def failures(self) -> list[RowFailure]:
        """The rows that could not be explained."""
        return [r for r in self._rows if isinstance(r, RowFailure)]

    @property
    def n_failures(self) -> int:
        """Number of rows that could not be explained."""
        return len(self.failures)

    def feature_counts(self) -> dict[str, int]:
        """How many explanations contain each feature, most frequent first.

        Examples
        --------
        >>> import kcxai
        >>> explainer = kcxai.Explainer(kcxai.datasets.running_example_tree())
        >>> explainer.explain([(1, 1, 1, 1, 0, 0, 0, 0, 1)], method="min_idrs", delta=0.03).feature_counts()
        {'x5': 1, 'x6': 1, 'x7': 1, 'x8': 1, 'x9': 1}
        """
        counts: Counter[str] = Counter()
        for e in self.explanations:
            counts.update(e.names)
        return dict(counts.most_common())

    # -- tables -------------------------------------------------------------------

    def records(self) -> list[dict[str, Any]]:
        """One flat dict per row (the rows of :meth:`to_frame`)."""
        out = []
        for rid, row in zip(self.ids, self):
            if isinstance(row, RowFailure):
                out.append({**dict.fromkeys(FRAME_COLUMNS), "id": rid, "bounds": self.bounds,
                            "failure": f"{row.error_type}: {row.message}"})
                continue
            cov = row.coverage
            out.append({
                "id": rid, "prediction": row.prediction, "method": row.method, "delta": _float(row.delta),
                "precision_bound": _float(row.precision_bound), "bounds": self.bounds, "size": len(row),
                "features": ", ".join(row.names), "rule": row.rule(),
                "error": _float(row.error), "precision": _float(row.precision), "coverage": _float(cov),
                "error_exact": None if row.approximate else _exact(row.error),
                "precision_exact": None if row.approximate else _exact(row.precision),
                "coverage_exact": _exact(cov), "distribution": row.distribution, "language": row.language,
                "approximate": row.approximate, "confidence": row.confidence, "decided": row.decided,
                "sampled": row.sampled, "interval_low": _float(row.interval[0]) if row.interval else None,
                "interval_high": _float(row.interval[1]) if row.interval else None,
                "error_low": _float(row.error_bounds[0]) if row.error_bounds else None,
                "error_high": _float(row.error_bounds[1]) if row.error_bounds else None,
                "certified": _float(row.certified), "missed": _missed(row.missed),
                "missed_options": ", ".join(missed_options(row.missed)) or None, "widening": row.widening,
                "unwidened_coverage": _float(row.unwidened_coverage), "oracle_calls": row.oracle_calls,
                "seconds": row.seconds, "failure": None})
        return out

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per input row.

        Columns: ``id`` (the row's id), ``prediction`` (the class label), ``method``, ``delta`` (the
        error bound of error-bounded methods) and ``precision_bound`` (of precision-bounded ones),
        ``bounds`` (which: ``"error"`` or ``"precision"``), ``size``, ``features`` (names,
        comma-separated), ``rule`` (one line, ``IF ... THEN class = c``, with the widened conditions of
        an inflated explanation, in the features' units and labels), ``error``, ``precision`` and
        ``coverage`` (floats) with ``*_exact`` (``"7/512"``, exact spaces only; none for the estimates
        of certified sampling), ``distribution`` (what the probabilities are under: ``"uniform"``,
        ``"product"``, ``"mixture of K"``), ``language`` (the engine that answered), ``approximate``
        and ``confidence`` (estimates from certified sampling, and the confidence with which the set
        holds), ``decided`` (``"exact"``, ``"proven"`` or ``"sampled"``: how the relevance tests were
        decided), ``sampled`` (how many were sampled), ``interval_low`` / ``interval_high`` (the widest
        interval a proven decision used, on the measure bounded), ``error_low`` / ``error_high`` (proven
        bounds on an error that could not be counted exactly), ``certified`` (what a sampled result's last
        freeing decision certified: the lower confidence bound of the precision, or the upper one of the
        error; what the result claims, where ``precision`` is an estimate), ``missed`` (why a sampled
        result's sampled tests were not proven, ``"reason: how many"`` joined by ``"; "``, see
        :attr:`Explanation.missed`) and ``missed_options`` (the options that would prove more of them:
        ``fit_budget``, ``max_seconds``, ``probe``), ``widening`` (how a widened set's widening ended, or why
        a set widened by default was not: :attr:`Explanation.widening`) and ``unwidened_coverage`` (the
        coverage before widening), ``oracle_calls``, ``seconds``,
        and ``failure`` (``None``, or the error of a row that
        could not be explained).
        """
        import pandas as pd  # pandas: optional, loaded when a table is asked for

        frame = pd.DataFrame.from_records(self.records(), columns=list(FRAME_COLUMNS))
        return frame.astype({"size": "Int64", "oracle_calls": "Int64", "sampled": "Int64", "approximate": "boolean"})

    def __repr__(self) -> str:
        fail = f", {self.n_failures} failed" if self.n_failures else ""
        return f"ExplanationSet({len(self)} rows{fail})"

    def _repr_html_(self) -> str:
        head = self.to_frame().head(10)
        return (f"<p><b>{html.escape(repr(self))}</b> (first rows; <code>.to_frame()</code> for all)</p>"
                + head.to_html(index=False, na_rep=""))
