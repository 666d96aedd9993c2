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

Counting is the exact diagrams' (the table's counters over the ``2K`` roots, every component of the
distribution in one walk, as :class:`~kcxai.compilers._tables.diagram.DiagramOracle` counts); sessions
(:class:`BoundsSession`) are two of its deletion-loop sessions, the proven and the possible class, so that
freeing a feature recomputes only the levels above it for both bounds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kcxai.arithmetic import Weight
from kcxai.compilers._tables.base import AnyCounter, counter_for
from kcxai.compilers._tables.diagram import together
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
    """

    language = "bounded"

    def __init__(self, space: FeatureSpace, table: LevelTable, n_classes: int,
                 predict: Callable[[Point], int]) -> None:
        self.space = space
        self.table = table
        self.n_classes = n_classes
        self._predict = predict
        comps = space.distribution.components
        #: The table's counters in the distribution's components (every one at once, or one per component).
        self.counters: list[AnyCounter] = [counter_for(table, comps)] if together(table, comps) else \
            [counter_for(table, [c]) for c in comps]

    def predict_point(self, point: Point) -> int:
        """The model's class of ``point``."""
        return self._predict(point)

    def _weight(self, labels: Sequence[int], point: Point, fixed: frozenset[int]) -> Weight:
        """The weight of the points of the cell where one of the roots ``labels`` holds."""
        isfixed = [f in fixed for f in range(self.space.n_features)]
        total = self.space.arith.zero
        for c in self.counters:
            total += c.weight(tuple(labels), point, isfixed)
        return total

    def disagree_bounds(self, point: Point, label: int, fixed: frozenset[int]) -> tuple[Weight, Weight]:
        """``(lower, upper)`` bounds on ``disagree_weight(point, label, fixed)`` (see the module docstring)."""
        whole = self.space.consistent_weight(point, fixed)
        proven = self._weight((label,), point, fixed)
        possible = self._weight((self.n_classes + label,), point, fixed)
        return self._clip(whole - possible, whole - proven, whole)

    def _clip(self, lower: Weight, upper: Weight, whole: Weight) -> tuple[Weight, Weight]:
        if not self.space.arith.exact:  # rounding: keep 0 <= lower <= upper <= whole
            upper = min(max(upper, 0.0), whole)
            lower = min(max(lower, 0.0), upper)
        return lower, upper

    def unknown_weight(self, point: Point, fixed: frozenset[int]) -> Weight:
        """The weight of the points agreeing with ``point`` on ``fixed`` whose class the diagram does not prove."""
        whole = self.space.consistent_weight(point, fixed)
        proven = self._weight(tuple(range(self.n_classes)), point, fixed)
        return max(whole - proven, self.space.arith.zero)

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> "BoundsSession":
        """A deletion-loop session starting from ``fixed``."""
        return BoundsSession(self, point, label, fixed)


class BoundsSession:
    """Incremental bounds for a deletion loop: ``bounds()`` for the current fixed set, ``bounds_if_freed(i)``
    without changing it, ``free(i)`` to commit (a :class:`~kcxai.oracle.BoundsSession`)."""

    __slots__ = ("_o", "_point", "_fixed", "_proven", "_possible")

    def __init__(self, oracle: DiagramBoundsOracle, point: Point, label: int, fixed: frozenset[int]) -> None:
        self._o = oracle
        self._point = tuple(point)
        self._fixed = set(fixed)
        counters = oracle.counters
        self._proven: list[Any] = [c.session(point, (label,), frozenset(fixed)) for c in counters]
        self._possible: list[Any] = [c.session(point, (oracle.n_classes + label,), frozenset(fixed)) for c in counters]

    @property
    def fixed(self) -> frozenset[int]:
        """The current fixed set."""
        return frozenset(self._fixed)

    def _bounds(self, fixed: set[int], proven: Weight, possible: Weight) -> tuple[Weight, Weight]:
        """The bounds from the sessions' answers: in exact spaces a session answers the cell's weight less
        its class's (a disagreeing weight), in float spaces its class's weight."""
        o = self._o
        whole = o.space.consistent_weight(self._point, frozenset(fixed))
        if o.space.arith.exact:
            return possible, proven
        return o._clip(whole - possible, whole - proven, whole)

    def bounds(self) -> tuple[Weight, Weight]:
        """``(lower, upper)`` for the current fixed set."""
        zero = self._o.space.arith.zero
        proven = sum((s.weight() for s in self._proven), zero)
        possible = sum((s.weight() for s in self._possible), zero)
        return self._bounds(self._fixed, proven, possible)

    def bounds_if_freed(self, feature: int) -> tuple[Weight, Weight]:
        """``(lower, upper)`` with ``feature`` freed; the fixed set is unchanged."""
        if feature not in self._fixed:
            return self.bounds()
        zero = self._o.space.arith.zero
        proven = sum((s.weight_if_freed(feature) for s in self._proven), zero)
        possible = sum((s.weight_if_freed(feature) for s in self._possible), zero)
        return self._bounds(self._fixed - {feature}, proven, possible)

    def free(self, feature: int) -> None:
        """Remove ``feature`` from the fixed set."""
        if feature not in self._fixed:
            return
        for s in self._proven + self._possible:
            s.free(feature)
        self._fixed.discard(feature)
