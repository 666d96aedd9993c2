"""The counting oracle of an exported diagram, its incremental deletion-loop session, and the partition check."""

from __future__ import annotations

from collections.abc import Sequence

from kcxai._errors import InvalidInputError
from kcxai._types import Point
from kcxai.arithmetic import Weight
from kcxai.compilers._tables.base import Counter, Table, UnitValues
from kcxai.compilers._tables.vectors import Columns, Vec
from kcxai.models.classifier import Classifier
from kcxai.oracle import Box, OracleSession, SessionBase
from kcxai.space import FeatureSpace

__all__ = ["DiagramOracle", "DiagramSession", "check_partition", "diagram_oracle"]


class DiagramOracle:
    """The counting oracle of a compiled diagram (see :mod:`kcxai.compilers._tables.wmc`), under every
    component of the space's distribution at once: each count walks the diagram once with a vector of ``K``
    weights per node (``K = 1`` for a uniform or product distribution).

    Attributes
    ----------
    language : str
        ``"sdd"`` or ``"obdd"``.
    space : FeatureSpace
    n_classes : int
    table : LevelTable or VtreeTable
        The exported diagram counting is done on.
    counter : Counter
        The table counting in the distribution's components.
    """

    def __init__(self, language: str, space: FeatureSpace, table: Table) -> None:
        self.language = language
        self.space = space
        self.table = table
        self.n_classes = len(table.roots)
        self.counter: Counter = table.counter(Columns(space.distribution.components))

    def predict_point(self, point: Point) -> int:
        table = self.table
        for c in range(self.n_classes):
            if table.holds(c, point):
                return c
        raise InvalidInputError(  # pragma: no cover - compile checks the partition
            f"No class function of the compiled model holds at point {point}.")

    def class_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        """Weight of ``{x : kappa(x) = label and x_fixed = point_fixed}``."""
        return self._count(self.counter, (label,), point, fixed)

    def others(self, label: int) -> tuple[int, ...]:
        """The classes counted for ``disagree_weight``: ``(label,)`` in exact spaces (the weight
        is the consistent weight minus this class's), the other classes in float spaces (their
        sum, so that an empty set weighs exactly 0.0)."""
        if self.space.is_exact:
            return (label,)
        return tuple(c for c in range(self.n_classes) if c != label)

    def disagree_from(self, columns: Columns, point: Point, fixed: frozenset[int] | set[int],
                      count: Vec | None) -> Weight:
        """``disagree_weight`` from the per-column counts of :meth:`others`."""
        counted = columns.arith.zero if count is None else columns.combine(count)
        if not columns.exact:
            return counted
        return columns.consistent(point, fixed) - counted

    def _count(self, counter: Counter, labels: Sequence[int], point: Point, fixed: frozenset[int]) -> Weight:
        isfixed = [f in fixed for f in range(self.space.n_features)]
        count = counter.counts(labels, point, isfixed, UnitValues(self.table.n_units))
        return counter.columns.arith.zero if count is None else counter.columns.combine(count)

    def disagree_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        isfixed = [f in fixed for f in range(self.space.n_features)]
        count = self.counter.counts(self.others(label), point, isfixed, UnitValues(self.table.n_units))
        return self.disagree_from(self.counter.columns, point, fixed, count)

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> OracleSession:
        return DiagramSession(self, point, label, fixed)

    # -- boxes (the BoxOracle capability) ------------------------------------------

    def box_weights(self, box: Box, label: int) -> tuple[Weight, Weight]:
        """``(disagree, consistent)`` weights of a box: the same walk as any count, in the distribution's
        columns with every value outside the box weighing 0 (:class:`~kcxai.oracle.BoxOracle`)."""
        columns = self.counter.columns.masked(box)
        free = (0,) * self.space.n_features
        consistent = columns.consistent(free, set())
        if not consistent:
            return columns.arith.zero, columns.arith.zero
        counter = self.table.counter(columns)
        count = counter.counts(self.others(label), free, [False] * self.space.n_features,
                               UnitValues(self.table.n_units))
        return self.disagree_from(columns, free, set(), count), consistent

    def box_weights_by_value(self, box: Box, label: int, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        """Per value of ``feature``, the box's weights with ``feature`` set to it: the masked columns counted
        with ``feature`` fixed to each value in turn, recomputing only the units above it (as a session does
        when a feature is freed)."""
        n = self.space.n_features
        size = self.space.features[feature].size
        columns = self.counter.columns.masked(box[:feature] + ((1 << size) - 1,) + box[feature + 1:])
        counter = self.table.counter(columns)
        labels = self.others(label)
        isfixed = [f == feature for f in range(n)]
        values = UnitValues(self.table.n_units)
        out = []
        for k in range(size):
            point = (0,) * feature + (k,) + (0,) * (n - feature - 1)
            here = values if k == 0 else values.with_fresh(self.table.units_of[feature])
            count = counter.counts(labels, point, isfixed, here)
            consistent = columns.consistent(point, {feature})
            out.append((self.disagree_from(columns, point, {feature}, count), consistent))
        return tuple(out)


class DiagramSession(SessionBase):
    """Incremental deletion-loop session: recompute only the units above the feature freed."""

    __slots__ = ("_o", "_point", "_labels", "_isfixed", "_values", "_last", "_weight")

    def __init__(self, oracle: DiagramOracle, point: Point, label: int, fixed: frozenset[int]) -> None:
        self._o = oracle
        self._point = tuple(point)
        self._labels = oracle.others(label)
        self._isfixed = [f in fixed for f in range(oracle.space.n_features)]
        self._values = UnitValues(oracle.table.n_units)
        #: the last weight_if_freed: the feature, what it computed, its weight
        self._last: tuple[int, UnitValues, Weight] | None = None
        self._weight: Weight | None = None

    @property
    def fixed(self) -> frozenset[int]:
        return frozenset(f for f, x in enumerate(self._isfixed) if x)

    def _disagree(self, isfixed: Sequence[bool], values: UnitValues) -> Weight:
        o = self._o
        count = o.counter.counts(self._labels, self._point, isfixed, values)
        fixed = {f for f, x in enumerate(isfixed) if x}
        return o.disagree_from(o.counter.columns, self._point, fixed, count)

    def weight(self) -> Weight:
        if self._weight is None:
            self._weight = self._disagree(self._isfixed, self._values)
        return self._weight

    def weight_if_freed(self, feature: int) -> Weight:
        if not self._isfixed[feature]:
            return self.weight()
        last = self._last
        if last is not None and last[0] == feature:
            return last[2]
        isfixed = list(self._isfixed)
        isfixed[feature] = False
        values = self._values.with_fresh(self._o.table.units_of[feature])
        w = self._disagree(isfixed, values)
        self._last = (feature, values, w)
        return w

    def free(self, feature: int) -> None:
        if not self._isfixed[feature]:
            return
        last = self._last
        if last is not None and last[0] == feature:  # keep what weight_if_freed computed
            self._values, self._weight = last[1], last[2]
        else:
            self._values = self._values.with_fresh(self._o.table.units_of[feature])
            self._weight = None
        self._last = None
        self._isfixed[feature] = False


def check_partition(oracle: DiagramOracle, model: Classifier) -> None:
    """The class functions must cover feature space exactly once (their weights sum to the total)."""
    point = (0,) * oracle.space.n_features
    total = sum(oracle.class_weight(point, c, frozenset()) for c in range(oracle.n_classes))
    want = oracle.space.total_weight
    ok = total == want if oracle.space.is_exact else abs(total - want) <= 1e-9 * abs(want)
    if not ok:
        raise InvalidInputError(
            f"{type(model).__name__}.build() must return class functions that partition feature space; "
            f"their weights sum to {total}, not to the total weight {want}.")


def diagram_oracle(language: str, space: FeatureSpace, table: Table) -> DiagramOracle:
    """The oracle of an exported diagram under ``space``'s distribution (every component in one walk)."""
    return DiagramOracle(language, space, table)
