"""Exact lower and upper bounds on the counts of a three-valued diagram (the ``bounded`` language).

A bounded construction (:mod:`kcxai.compilers._ensemble.bounded`) makes, per class ``c``, a three-valued
function: TRUE where ``c`` is proven, FALSE where another class is, UNKNOWN where the diagram does not say.
Sending UNKNOWN to FALSE gives the points where ``c`` is *proven*; sending it to TRUE, those where it is
*possible*. Both are ordinary diagrams, held as the ``2K`` roots of one
:class:`~kcxai.compilers._tables.level.LevelTable` (the proven classes, then the possible ones), and
counted by its walk. For an instance ``v``, a fixed set ``S`` and a class ``c``, with ``W`` the weight of
the points agreeing with ``v`` on ``S``:

    lower = W - possible_c(v, S)    (the points proven to get another class)
    upper = W - proven_c(v, S)      (those, plus the points the diagram leaves undecided)

so ``lower <= disagree_weight(v, c, S) <= upper``, with equality where no point of the cell is undecided.
In exact spaces both are Python integers (relative to ``space.total_weight``); under a mixture, sums over
the components with their coefficients. In float spaces they carry the tables' rounding and are clipped
to ``0 <= lower <= upper <= W``.

Sessions (:class:`BoundsSession`) keep the node values of the current fixed set per level, as the exact
diagram sessions do: asking about freeing a feature recomputes only the levels above it, for both bounds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from kcxai.arithmetic import Weight
from kcxai.compilers._tables.base import recursion
from kcxai.compilers._tables.level import LevelTable
from kcxai.space import FeatureSpace
from kcxai._types import Point

__all__ = ["DiagramBoundsOracle", "BoundsSession"]


class DiagramBoundsOracle:
    """The bounds oracle of a three-valued diagram (a :class:`~kcxai.oracle.BoundsOracle`).

    Parameters
    ----------
    space : FeatureSpace
    table : LevelTable
        ``2 * n_classes`` roots: per class the points where it is proven, then where it is possible.
    n_classes : int
    predict : callable
        The model's class of a point (the diagram may not know it).

    Attributes
    ----------
    language : str
        ``"bounded"``.
    parts : list of (coefficient, LevelTable)
        One table per component of the distribution (the structure shared).
    """

    language = "bounded"

    def __init__(self, space: FeatureSpace, table: LevelTable, n_classes: int,
                 predict: Callable[[Point], int]) -> None:
        self.space = space
        self.table = table
        self.n_classes = n_classes
        self._predict = predict
        self.parts: list[tuple[Weight, LevelTable]] = [
            (c, table if pw is table.pw else cast(LevelTable, table.reweighted(pw)))
            for c, pw in space.distribution.components]

    def predict_point(self, point: Point) -> int:
        """The model's class of ``point``."""
        return self._predict(point)

    def _counts(self, table: LevelTable, label: int, point: Point, fixed: Any, fac: list[Weight],
                memo: list[dict[Any, Any]], tmp: list[dict[Any, Any]] | None,
                affected: Sequence[bool] | None) -> tuple[Weight, Weight]:
        """``(proven, possible)`` weights of ``label`` in the cell, sharing ``memo`` between the two walks."""
        with recursion(table.depth):
            proven = table.evaluate((label,), point, fixed, fac, memo, tmp, affected)
            possible = table.evaluate((self.n_classes + label,), point, fixed, fac, memo, tmp, affected)
        return proven, possible

    def disagree_bounds(self, point: Point, label: int, fixed: frozenset[int]) -> tuple[Weight, Weight]:
        """``(lower, upper)`` bounds on ``disagree_weight(point, label, fixed)`` (see the module docstring)."""
        per = []
        for c, t in self.parts:
            memo: list[dict[Any, Any]] = [{} for _ in range(t.n_units)]
            proven, possible = self._counts(t, label, point, fixed, t.factors(point, fixed), memo, None, None)
            per.append((c, t.pw.consistent_weight(point, fixed), proven, possible))
        return self._combine(per)

    def _combine(self, per: Sequence[tuple[Weight, Weight, Weight, Weight]]) -> tuple[Weight, Weight]:
        arith = self.space.arith
        lower = upper = whole = arith.zero
        for c, consistent, proven, possible in per:
            lower += c * (consistent - possible)
            upper += c * (consistent - proven)
            whole += c * consistent
        if not arith.exact:  # rounding: keep 0 <= lower <= upper <= whole
            upper = min(max(upper, 0.0), whole)
            lower = min(max(lower, 0.0), upper)
        return lower, upper

    def unknown_weight(self, point: Point, fixed: frozenset[int]) -> Weight:
        """The weight of the points agreeing with ``point`` on ``fixed`` whose class the diagram does not prove."""
        total = self.space.arith.zero
        for c, t in self.parts:
            memo: list[dict[Any, Any]] = [{} for _ in range(t.n_units)]
            fac = t.factors(point, fixed)
            with recursion(t.depth):
                proven = t.evaluate(tuple(range(self.n_classes)), point, fixed, fac, memo, None, None)
            total += c * (t.pw.consistent_weight(point, fixed) - proven)
        return max(total, self.space.arith.zero)

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> "BoundsSession":
        """A deletion-loop session starting from ``fixed``."""
        return BoundsSession(self, point, label, fixed)


class BoundsSession:
    """Incremental bounds for a deletion loop: ``bounds()`` for the current fixed set, ``bounds_if_freed(i)``
    without changing it, ``free(i)`` to commit (a :class:`~kcxai.oracle.BoundsSession`)."""

    __slots__ = ("_o", "_point", "_label", "_fixed", "_fac", "_memo", "_last", "_bounds")

    def __init__(self, oracle: DiagramBoundsOracle, point: Point, label: int, fixed: frozenset[int]) -> None:
        self._o = oracle
        self._point = tuple(point)
        self._label = label
        self._fixed = set(fixed)
        self._fac = [t.factors(point, self._fixed) for _, t in oracle.parts]
        self._memo: list[list[dict[Any, Any]]] = [[{} for _ in range(t.n_units)] for _, t in oracle.parts]
        self._last: tuple[int, list[list[dict[Any, Any]]], tuple[Weight, Weight]] | None = None
        self._bounds: tuple[Weight, Weight] | None = None

    @property
    def fixed(self) -> frozenset[int]:
        """The current fixed set."""
        return frozenset(self._fixed)

    def bounds(self) -> tuple[Weight, Weight]:
        """``(lower, upper)`` for the current fixed set."""
        if self._bounds is None:
            o, per = self._o, []
            for k, (c, t) in enumerate(o.parts):
                proven, possible = o._counts(t, self._label, self._point, self._fixed, self._fac[k], self._memo[k],
                                             None, None)
                per.append((c, t.pw.consistent_weight(self._point, self._fixed), proven, possible))
            self._bounds = o._combine(per)
        return self._bounds

    def bounds_if_freed(self, feature: int) -> tuple[Weight, Weight]:
        """``(lower, upper)`` with ``feature`` freed; the fixed set is unchanged."""
        if feature not in self._fixed:
            return self.bounds()
        last = self._last
        if last is not None and last[0] == feature:
            return last[2]
        o = self._o
        fixed = self._fixed - {feature}
        per, kept = [], []
        for k, (c, t) in enumerate(o.parts):
            fac = list(self._fac[k])
            fac[feature] = t.pw.totals[feature]
            affected = [False] * t.n_units
            tmp: list[dict[Any, Any]] = [{}] * t.n_units
            for u in t.units_of[feature]:
                affected[u] = True
                tmp[u] = {}
            proven, possible = o._counts(t, self._label, self._point, fixed, fac, self._memo[k], tmp, affected)
            per.append((c, t.pw.consistent_weight(self._point, fixed), proven, possible))
            kept.append(tmp)
        got = o._combine(per)
        self._last = (feature, kept, got)
        return got

    def free(self, feature: int) -> None:
        """Remove ``feature`` from the fixed set (keeping what :meth:`bounds_if_freed` just computed for it)."""
        if feature not in self._fixed:
            return
        last = self._last
        for k, (_, t) in enumerate(self._o.parts):
            for u in t.units_of[feature]:
                self._memo[k][u] = last[1][k][u] if last is not None and last[0] == feature else {}
            self._fac[k][feature] = t.pw.totals[feature]
        self._bounds = last[2] if last is not None and last[0] == feature else None
        self._last = None
        self._fixed.discard(feature)
