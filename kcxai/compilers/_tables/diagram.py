"""The counting oracle of an exported diagram, its incremental deletion-loop session, and the partition check."""

from __future__ import annotations


from collections.abc import Sequence

from kcxai._errors import InvalidInputError
from kcxai._types import Point
from kcxai.arithmetic import Weight
from kcxai.compilers._tables import base
from kcxai.compilers._tables.base import AnyCounter, DiagramSession, Table, counter_for
from kcxai.compilers._tables.vectors import INT64_SAFE, Component
from kcxai.models.classifier import Classifier
from kcxai.oracle import Box, OracleSession, SessionBase
from kcxai.space import FeatureSpace

__all__ = ["DiagramOracle", "DiagramSession", "check_partition", "diagram_oracle", "VECTOR_MIN_COLUMNS"]

#: Mixtures of at least this many components are walked once for all of them; fewer (one) once per component.
#: With the walks' vector operations inline (:mod:`kcxai.compilers._tables.inline`) a walk with vectors of 2
#: or 3 weights costs less than 2 or 3 walks with numbers (docs/results.md, "The K = 8 OBDD walk, inline");
#: diagrams counted with numpy take every component at once whatever their number.
VECTOR_MIN_COLUMNS = 2


def together(table: Table, components: Sequence[Component]) -> bool:
    """Whether a walk of ``table`` takes every component at once (see :data:`VECTOR_MIN_COLUMNS`)."""
    if len(components) >= VECTOR_MIN_COLUMNS:
        return True
    exact = components[0][1].arith.exact
    return table.n_nodes >= base.VECTOR_MIN_NODES and (not exact or all(pw.total < INT64_SAFE for _, pw in components))


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
    counters : list of Counter
        The table counting in the distribution's components: one counter for all of them, or one per
        component (see :data:`VECTOR_MIN_COLUMNS`); the weights are their sums.

    Parameters
    ----------
    at_once : bool, optional
        Walk every component at once (``True``) or each in turn (``False``); by default as
        :data:`VECTOR_MIN_COLUMNS` says. The answers are the same.
    """

    def __init__(self, language: str, space: FeatureSpace, table: Table, *, at_once: bool | None = None) -> None:
        self.language = language
        self.space = space
        self.table = table
        self.n_classes = len(table.roots)
        comps = space.distribution.components
        if at_once is None:
            at_once = together(table, comps)
        self.counters: list[AnyCounter] = [counter_for(table, comps)] if at_once else \
            [counter_for(table, [c]) for c in comps]

    def predict_point(self, point: Point) -> int:
        table = self.table
        for c in range(self.n_classes):
            if table.holds(c, point):
                return c
        raise InvalidInputError(  # pragma: no cover - compile checks the partition
            f"No class function of the compiled model holds at point {point}.")

    def class_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        """Weight of ``{x : kappa(x) = label and x_fixed = point_fixed}``."""
        isfixed = [f in fixed for f in range(self.space.n_features)]
        return _sum([c.weight((label,), point, isfixed) for c in self.counters])

    def others(self, label: int) -> tuple[int, ...]:
        """The classes counted for ``disagree_weight``: ``(label,)`` in exact spaces (the weight
        is the consistent weight minus this class's), the other classes in float spaces (their
        sum, so that an empty set weighs exactly 0.0)."""
        if self.space.is_exact:
            return (label,)
        return tuple(c for c in range(self.n_classes) if c != label)

    def disagree_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        isfixed = [f in fixed for f in range(self.space.n_features)]
        return _sum([c.disagree(self.others(label), point, isfixed) for c in self.counters])

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> OracleSession:
        sessions = [c.session(point, self.others(label), fixed) for c in self.counters]
        return sessions[0] if len(sessions) == 1 else _SumSession(sessions)

    # -- boxes (the BoxOracle capability) ------------------------------------------

    def box_weights(self, box: Box, label: int) -> tuple[Weight, Weight]:
        """``(disagree, consistent)`` weights of a box: the same walk as any count, in the distribution's
        columns with every value outside the box weighing 0 (:class:`~kcxai.oracle.BoxOracle`)."""
        got = [c.box_weights(box, self.others(label)) for c in self.counters]
        return _sum([d for d, _ in got]), _sum([w for _, w in got])

    def box_weights_by_value(self, box: Box, label: int, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        """Per value of ``feature``, the box's weights with ``feature`` set to it, recomputing only the units
        above it from one value to the next."""
        got = [c.box_weights_by_value(box, self.others(label), feature) for c in self.counters]
        return tuple((_sum([d for d, _ in per]), _sum([w for _, w in per])) for per in zip(*got))


def _sum(weights: Sequence[Weight]) -> Weight:
    """The sum of the counters' weights (one weight when the components are walked at once)."""
    total = weights[0]
    for w in weights[1:]:
        total += w
    return total


class _SumSession(SessionBase):
    """The deletion-loop session of an oracle walking each component in turn: one session per component."""

    __slots__ = ("_sessions",)

    def __init__(self, sessions: Sequence[OracleSession]) -> None:
        self._sessions = tuple(sessions)

    @property
    def fixed(self) -> frozenset[int]:
        return self._sessions[0].fixed

    def weight(self) -> Weight:
        return _sum([s.weight() for s in self._sessions])

    def weight_if_freed(self, feature: int) -> Weight:
        return _sum([s.weight_if_freed(feature) for s in self._sessions])

    def free(self, feature: int) -> None:
        for s in self._sessions:
            s.free(feature)


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
