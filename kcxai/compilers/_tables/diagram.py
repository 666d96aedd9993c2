"""The counting oracle of an exported diagram, its incremental deletion-loop session, and the partition check."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, cast


from kcxai._errors import InvalidInputError
from kcxai.arithmetic import Weight
from kcxai.compilers._tables import level as _level_table
from kcxai.compilers._tables.level import LevelTable
from kcxai.compilers._tables.mixture import MixtureTable, int64_exact, mixture_table
from kcxai.compilers._tables.base import Table, recursion
from kcxai.distribution import ProductWeights
from kcxai.oracle import Box, BoxOracle, CountingOracle, OracleSession, SessionBase, per_component
from kcxai.space import FeatureSpace
from kcxai._types import Point

__all__ = ["DiagramOracle", "DiagramSession", "MixtureDiagramOracle", "MixtureDiagramSession", "check_partition",
           "diagram_oracle", "ONE_PASS_MIN_COMPONENTS"]

#: A mixture of at least this many components is counted in one traversal of the diagram
#: (:class:`MixtureDiagramOracle`); fewer are walked once per component. One walk with a tuple of ``K``
#: weights per node pays more per node than a walk with one weight: measured on an OBDD-compiled adult tree
#: of 999 nodes and a 3-tree forest under fitted mixtures (``min_idrs`` 0.01 and ``local_cdrs`` 0.95), the
#: one pass took 1.5-2.6x the per-component walks' time at K = 1, 0.65-0.87x at K = 4, 0.45-0.51x at K = 8
#: and 0.35-0.43x at K = 16 (benchmarks/bench_counting.py, part 3). Diagrams whose per-component tables count
#: with numpy (:func:`~kcxai.compilers._tables.level_arrays.fits_int64` totals, at least
#: :data:`~kcxai.compilers._tables.level_arrays.VECTOR_MIN_NODES` nodes) keep them: on an adult tree of 56,788 OBDD
#: nodes under float mixtures the one pass's numpy units took 1.2-1.55x their time at K = 4 and 8.
ONE_PASS_MIN_COMPONENTS = 4


class DiagramOracle:
    """The counting oracle of a compiled diagram (see :mod:`kcxai.compilers._tables.wmc`).

    Attributes
    ----------
    language : str
        ``"sdd"`` or ``"obdd"``.
    space : FeatureSpace
    n_classes : int
    table : LevelTable or VtreeTable
        The exported diagram counting is done on.
    """

    def __init__(self, language: str, space: FeatureSpace, table: Table) -> None:
        self.language = language
        self.space = space
        self.table = table
        self.n_classes = len(table.roots)

    def predict_point(self, point: Point) -> int:
        table = self.table
        for c in range(self.n_classes):
            if table.holds(c, point):  # type: ignore[attr-defined]
                return c
        raise InvalidInputError(  # pragma: no cover - compile checks the partition
            f"No class function of the compiled model holds at point {point}.")

    def class_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        """Weight of ``{x : kappa(x) = label and x_fixed = point_fixed}``."""
        return self.table.count((label,), point, fixed)

    def others(self, label: int) -> tuple[int, ...]:
        """The classes counted for ``disagree_weight``: ``(label,)`` in exact spaces (the weight
        is the consistent weight minus this class's), the other classes in float spaces (their
        sum, so that an empty set weighs exactly 0.0)."""
        if self.table.pw.arith.exact:
            return (label,)
        return tuple(c for c in range(self.n_classes) if c != label)

    def disagree_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        count = self.table.count(self.others(label), point, fixed)
        pw = self.table.pw
        if pw.arith.exact:
            return pw.consistent_weight(point, fixed) - count
        return count

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> OracleSession:
        return DiagramSession(self, point, label, fixed)

    # -- boxes (the BoxOracle capability) ------------------------------------------

    def _masked(self, box: Box) -> tuple[Table, ProductWeights]:
        """The table counting under the product weights with every value outside the box weighing 0."""
        pw = self.table.pw
        zero = pw.arith.zero
        masked = ProductWeights([[w if box[f] >> k & 1 else zero for k, w in enumerate(ws)]
                                 for f, ws in enumerate(pw.weights)], pw.arith)
        return self.table.reweighted(masked), masked

    def box_weights(self, box: Box, label: int) -> tuple[Weight, Weight]:
        """``(disagree, consistent)`` weights of a box: the same traversal as any count, under the
        product weights with every value outside the box weighing 0 (:class:`~kcxai.oracle.BoxOracle`)."""
        table, masked = self._masked(box)
        consistent = masked.total
        if not consistent:
            return masked.arith.zero, masked.arith.zero
        count = table.count(self.others(label), (0,) * self.space.n_features, frozenset())
        return (consistent - count if masked.arith.exact else count), consistent

    def box_weights_by_value(self, box: Box, label: int, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        """Per value of ``feature``, the box's weights with ``feature`` set to it: the masked table counted
        with ``feature`` fixed to each value in turn, recomputing only the units above it (as a session
        does when a feature is freed)."""
        size = self.space.features[feature].size
        table, masked = self._masked(box[:feature] + ((1 << size) - 1,) + box[feature + 1:])
        arith = masked.arith
        labels = self.others(label)
        fixed = frozenset((feature,))
        memo: list[dict[int, Weight]] = [{} for _ in range(table.n_units)]
        affected = [False] * table.n_units
        for u in table.units_of[feature]:
            affected[u] = True
        base = arith.div(masked.total, masked.totals[feature])
        out = []
        with recursion(table.depth):
            for k in range(size):
                point = (0,) * feature + (k,) + (0,) * (self.space.n_features - feature - 1)
                fac = table.factors(point, fixed)
                tmp: list[dict[int, Weight]] | None = None
                if k:
                    tmp = [{} for _ in affected]
                count = table.evaluate(labels, point, fixed, fac, memo, tmp, affected if k else None)
                consistent = base * masked.weights[feature][k]
                out.append(((consistent - count if arith.exact else count), consistent))
        return tuple(out)


class DiagramSession(SessionBase):
    """Incremental deletion-loop session: recompute only the units above the feature freed."""

    __slots__ = ("_o", "_point", "_label", "_labels", "_fixed", "_fac", "_memo", "_last", "_weight")

    def __init__(self, oracle: DiagramOracle, point: Point, label: int, fixed: frozenset[int]) -> None:
        self._o = oracle
        self._point = tuple(point)
        self._label = label
        self._labels = oracle.others(label)
        self._fixed = set(fixed)
        table = oracle.table
        self._fac = table.factors(point, self._fixed)
        self._memo: list[dict[int, Weight]] = [{} for _ in range(table.n_units)]
        self._last: tuple[int, list[dict[int, Weight]], Weight] | None = None
        self._weight: Weight | None = None

    @property
    def fixed(self) -> frozenset[int]:
        return frozenset(self._fixed)

    def weight(self) -> Weight:
        if self._weight is None:
            table = self._o.table
            with recursion(table.depth):
                count = table.evaluate(self._labels, self._point, self._fixed, self._fac,
                                       self._memo, None, None)
            self._weight = self._disagree(self._fixed, count)
        return self._weight

    def weight_if_freed(self, feature: int) -> Weight:
        if feature not in self._fixed:
            return self.weight()
        last = self._last
        if last is not None and last[0] == feature:
            return last[2]
        table = self._o.table
        fac = list(self._fac)
        fac[feature] = table.pw.totals[feature]
        fixed = self._fixed - {feature}
        units = table.units_of[feature]
        affected = [False] * table.n_units
        tmp: list[dict[int, Weight]] = [{}] * table.n_units
        for u in units:
            affected[u] = True
            tmp[u] = {}
        with recursion(table.depth):
            count = table.evaluate(self._labels, self._point, fixed, fac, self._memo, tmp, affected)
        w = self._disagree(fixed, count)
        self._last = (feature, tmp, w)
        return w

    def _disagree(self, fixed: Any, count: Weight) -> Weight:
        pw = self._o.table.pw
        return pw.consistent_weight(self._point, fixed) - count if pw.arith.exact else count

    def free(self, feature: int) -> None:
        if feature not in self._fixed:
            return
        _renew_units(self, feature)
        self._fixed.discard(feature)
        self._fac[feature] = self._o.table.pw.totals[feature]


class MixtureDiagramOracle:
    """The counting oracle of a compiled diagram under a mixture: every component in one traversal, with a
    vector of ``K`` weights per node (:mod:`kcxai.compilers._tables.mixture`).

    Answers exactly what the per-component oracle (:class:`~kcxai.oracle.MixtureOracle` of
    :class:`DiagramOracle`) answers; box queries are delegated to that oracle, built on first use.

    Attributes
    ----------
    language : str
    space : FeatureSpace
    n_classes : int
    table : LevelTable or VtreeTable
        The diagram (under the first component's weights).
    mixture : MixtureTable
        The diagram's structure with every component's weights as columns.
    """

    def __init__(self, language: str, space: FeatureSpace, table: Table) -> None:
        self.language = language
        self.space = space
        self.table = table
        self.n_classes = len(table.roots)
        comps = space.distribution.components
        self.mixture: MixtureTable = mixture_table(table, [c for c, _ in comps], [pw for _, pw in comps])
        self._boxes: list[CountingOracle] = []
        self._lock = threading.Lock()

    def predict_point(self, point: Point) -> int:
        table = self.table
        for c in range(self.n_classes):
            if table.holds(c, point):  # type: ignore[attr-defined]
                return c
        raise InvalidInputError(  # pragma: no cover - compile checks the partition
            f"No class function of the compiled model holds at point {point}.")

    def others(self, label: int) -> tuple[int, ...]:
        """As :meth:`DiagramOracle.others`."""
        if self.space.is_exact:
            return (label,)
        return tuple(c for c in range(self.n_classes) if c != label)

    def disagree_from(self, point: Point, isfixed: Sequence[bool], per: Sequence[Weight]) -> Weight:
        """``disagree_weight`` from the per-component counts of :meth:`others` (see :meth:`DiagramOracle.others`)."""
        count = self.mixture.combine(per)
        if not self.space.is_exact:
            return count
        fixed = {f for f, x in enumerate(isfixed) if x}
        return self.space.distribution.consistent_weight(point, fixed) - count

    def disagree_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        isfixed = [f in fixed for f in range(self.space.n_features)]
        memo: list[dict[Any, Any]] = [{} for _ in range(self.table.n_units)]
        per = self.mixture.counts(self.others(label), point, isfixed, memo, {}, None, None)
        return self.disagree_from(point, isfixed, per)

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> OracleSession:
        return MixtureDiagramSession(self, point, label, fixed)

    def per_component(self) -> CountingOracle:
        """The same diagram answered one component at a time (what box queries use)."""
        with self._lock:
            if not self._boxes:
                self._boxes.append(diagram_oracle(self.language, self.space, self.table, one_pass=False))
            return self._boxes[0]

    def box_weights(self, box: Box, label: int) -> tuple[Weight, Weight]:
        """:meth:`DiagramOracle.box_weights`, summed over the components."""
        return cast(BoxOracle, self.per_component()).box_weights(box, label)

    def box_weights_by_value(self, box: Box, label: int, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        """:meth:`DiagramOracle.box_weights_by_value`, summed over the components."""
        return cast(BoxOracle, self.per_component()).box_weights_by_value(box, label, feature)


class MixtureDiagramSession(SessionBase):
    """:class:`DiagramSession` with a vector of ``K`` weights per node: recompute only the units above the
    feature freed, for every component at once."""

    __slots__ = ("_o", "_point", "_labels", "_isfixed", "_memo", "_kept", "_last", "_weight")

    def __init__(self, oracle: MixtureDiagramOracle, point: Point, label: int, fixed: frozenset[int]) -> None:
        self._o = oracle
        self._point = tuple(point)
        self._labels = oracle.others(label)
        self._isfixed = [f in fixed for f in range(oracle.space.n_features)]
        self._memo: list[dict[Any, Any]] = [{} for _ in range(oracle.table.n_units)]
        self._kept: dict[Any, Any] = {}
        self._last: tuple[int, list[dict[Any, Any]], Weight] | None = None
        self._weight: Weight | None = None

    @property
    def fixed(self) -> frozenset[int]:
        return frozenset(f for f, x in enumerate(self._isfixed) if x)

    def weight(self) -> Weight:
        if self._weight is None:
            per = self._o.mixture.counts(self._labels, self._point, self._isfixed, self._memo, self._kept, None, None)
            self._weight = self._o.disagree_from(self._point, self._isfixed, per)
        return self._weight

    def weight_if_freed(self, feature: int) -> Weight:
        if not self._isfixed[feature]:
            return self.weight()
        last = self._last
        if last is not None and last[0] == feature:
            return last[2]
        o = self._o
        isfixed = list(self._isfixed)
        isfixed[feature] = False
        n_units = o.table.n_units
        affected = [False] * n_units
        tmp: list[dict[Any, Any]] = [{}] * n_units
        for u in o.table.units_of[feature]:
            affected[u] = True
            tmp[u] = {}
        per = o.mixture.counts(self._labels, self._point, isfixed, self._memo, self._kept, tmp, affected)
        w = o.disagree_from(self._point, isfixed, per)
        self._last = (feature, tmp, w)
        return w

    def free(self, feature: int) -> None:
        if not self._isfixed[feature]:
            return
        _renew_units(self, feature)
        self._isfixed[feature] = False


def _renew_units(session: Any, feature: int) -> None:
    """A diagram session's per-unit memo once ``feature`` is freed: what ``weight_if_freed(feature)`` just
    computed, if it was the last query, else emptied for the units above the feature."""
    last = session._last
    units = session._o.table.units_of[feature]
    if last is not None and last[0] == feature:  # keep what weight_if_freed computed
        for u in units:
            session._memo[u] = last[1][u]
        session._weight = last[2]
    else:
        for u in units:
            session._memo[u] = {}
        session._weight = None
    session._last = None


def check_partition(oracle: DiagramOracle, model: Any) -> None:
    """The class functions must cover feature space exactly once (their weights sum to the total)."""
    pw = oracle.table.pw
    point = (0,) * oracle.space.n_features
    total = sum(oracle.class_weight(point, c, frozenset()) for c in range(oracle.n_classes))
    ok = total == pw.total if pw.arith.exact else abs(total - pw.total) <= 1e-9
    if not ok:
        raise InvalidInputError(
            f"{type(model).__name__}.build() must return class functions that partition feature space; "
            f"their weights sum to {total}, not to the total weight {pw.total}.")


def _numpy_tables(table: Table, comps: Sequence[tuple[Weight, ProductWeights]]) -> bool:
    """Whether the per-component tables of ``table`` count with numpy (OBDD tables only, see
    :meth:`LevelTable._vectorised <kcxai.compilers._tables.level.LevelTable._vectorised>`)."""
    return isinstance(table, LevelTable) and table.n_nodes >= _level_table.VECTOR_MIN_NODES and \
        (not comps[0][1].arith.exact or int64_exact([pw for _, pw in comps]))


def diagram_oracle(language: str, space: FeatureSpace, table: Table, *,
                   one_pass: bool | None = None) -> CountingOracle:
    """The oracle of an exported diagram under ``space``'s distribution.

    A uniform or product distribution is one table. A mixture of ``K`` products is either counted in one
    traversal with ``K`` weights per node (:class:`MixtureDiagramOracle`, ``one_pass=True``) or by one table
    per component sharing the diagram's structure (``one_pass=False``); by default the first when the
    mixture has at least :data:`ONE_PASS_MIN_COMPONENTS` components and the per-component tables would not
    count with numpy. Both answer exactly the same.
    """
    comps = space.distribution.components
    if one_pass is None:
        one_pass = len(comps) >= ONE_PASS_MIN_COMPONENTS and not _numpy_tables(table, comps)
    if one_pass:
        return MixtureDiagramOracle(language, space, table)
    return per_component(space, lambda pw: DiagramOracle(
        language, space, table if pw is table.pw else table.reweighted(pw)))
