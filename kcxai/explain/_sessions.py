"""The deletion loop's sessions as a :class:`~kcxai.explain._query.Query` hands them out: over exact counts
(:class:`CountingSession`), over exact bounds refined where they straddle (:class:`ProvenSession`), and over
sufficiency decisions (:class:`DecisionSession`). Each counts its queries on the query and looks at its clock."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, cast

from kcxai._deadline import Deadline
from kcxai._errors import InvalidInputError
from kcxai._types import Point
from kcxai.arithmetic import Bound, Probability, Weight
from kcxai.explain._proven import EXACT_ADVICE, Prover, Threshold
from kcxai.oracle import BoundsSession, Decision, Oracle, OracleSession, SessionBase, describe_answers
from kcxai.space import FeatureSpace

__all__ = ["SessionHost", "CountingSession", "ProvenSession", "DecisionSession", "unanswered"]


class SessionHost(Protocol):
    """What a session reads and counts on the query that hands it out (:class:`~kcxai.explain._query.Query`
    implements it; declared here so that the sessions need not import the query that imports them)."""

    #: The queries made so far (each session adds its own).
    calls: int

    @property
    def what(self) -> str:
        """The name errors carry (the method's, or a checker's)."""

    @property
    def oracle(self) -> Oracle:
        """The oracle asked."""

    @property
    def space(self) -> FeatureSpace:
        """The oracle's feature space."""

    @property
    def point(self) -> Point:
        """The instance as value indices."""

    @property
    def deadline(self) -> Deadline:
        """The query's time limit."""

    @property
    def prover(self) -> Prover | None:
        """Over a bounds oracle, what decides each relevance test; ``None`` otherwise."""

    def decide(self, fixed: Iterable[int]) -> Decision:
        """Whether fixing ``fixed`` is sufficient (delta = 0)."""

    def remember_certified(self, fixed: frozenset[int], rate: float | None) -> None:
        """Keep the rate bound a sampling session certified for ``fixed``."""


def unanswered(what: str, oracle: object, has: str, needs: Sequence[str]) -> str:
    lang = getattr(oracle, "language", type(oracle).__name__)
    gives = {"counts": "exact counts", "bounds": "exact bounds",
             "estimates": "only estimates (certified decisions of the deletion loops)",
             "decisions": "only delta = 0 decisions"}[has]
    exact = f" (for a tree ensemble, {EXACT_ADVICE})" if has == "bounds" else ""
    return (f"{what} needs {describe_answers(needs)} at this bound; the {lang!r} oracle gives {gives}. "
            f"Compile the model to an exact counting language (dt, sdd, obdd: compile_model(model, 'obdd')){exact}, "
            "or use a method and bound that it answers (the table in docs/explainer.md, 'How the engine is chosen').")


class CountingSession:
    """An :class:`~kcxai.oracle.OracleSession` that counts its queries on the query (a :class:`SessionHost`) and
    looks at its clock."""

    __slots__ = ("_q", "_s")

    def __init__(self, q: SessionHost, s: OracleSession) -> None:
        self._q = q
        self._s = s

    @property
    def fixed(self) -> frozenset[int]:
        return self._s.fixed

    def weight(self) -> Weight:
        self._q.calls += 1
        return self._s.weight()

    def weight_if_freed(self, feature: int) -> Weight:
        self._q.deadline.check()
        self._q.calls += 1
        return self._s.weight_if_freed(feature)

    def holds_if_freed(self, feature: int, bound: Bound) -> bool:
        self._q.deadline.check()
        self._q.calls += 1
        return self._s.holds_if_freed(feature, bound)

    @property
    def decides_precision(self) -> bool:
        """Whether the oracle's session decides the precision test itself (``holds_precision_if_freed``): an
        estimating session (certified), or an exact one that screens its queries (the tree's path session)."""
        return callable(getattr(self._s, "holds_precision_if_freed", None))

    def holds_precision_if_freed(self, feature: int, precision: Probability) -> bool:
        """The precision decision of the oracle's session: certified (estimating sessions) or exact (see
        :meth:`~kcxai.explain._query.Query.precision_holds_if_freed`)."""
        self._q.deadline.check()
        self._q.calls += 1
        return self._s.holds_precision_if_freed(feature, precision)  # type: ignore[attr-defined, no-any-return]

    def free(self, feature: int) -> None:
        self._s.free(feature)
        self._q.remember_certified(self._s.fixed, getattr(self._s, "certified", None))


class ProvenSession:
    """The deletion loop's session over a bounds oracle: each test decided from the session's interval for
    the smaller set, refined where it straddles the bound (:class:`~kcxai.explain._proven.Prover`)."""

    __slots__ = ("_q", "_s", "_prover")

    def __init__(self, q: SessionHost, s: BoundsSession) -> None:
        self._q = q
        self._s = s
        self._prover = cast(Prover, q.prover)

    @property
    def fixed(self) -> frozenset[int]:
        return self._s.fixed

    def bounds(self) -> tuple[Weight, Weight]:
        """The oracle's bounds on the weight of the current set."""
        return self._s.bounds()

    def weight(self) -> Weight:
        """The exact weight of the current set (refined; :class:`~kcxai.NotProvenError` if it cannot be)."""
        self._q.calls += 1
        return self._prover.weight(self._s.fixed, self._s.bounds())

    def weight_if_freed(self, feature: int) -> Weight:
        self._q.deadline.check()
        self._q.calls += 1
        return self._prover.weight(self._s.fixed - {feature}, self._s.bounds_if_freed(feature))

    def holds_if_freed(self, feature: int, bound: Bound) -> bool:
        q = self._q
        q.deadline.check()
        q.calls += 1
        test = Threshold.error(q.space, q.point, self._s.fixed - {feature}, bound.delta)
        return self._prover.decide(test, self._s.bounds_if_freed(feature))

    def holds_precision_if_freed(self, feature: int, precision: Probability) -> bool:
        q = self._q
        q.deadline.check()
        q.calls += 1
        test = Threshold.precision(q.space, q.point, self._s.fixed - {feature}, precision)
        return self._prover.decide(test, self._s.bounds_if_freed(feature))

    def free(self, feature: int) -> None:
        self._s.free(feature)


class DecisionSession(SessionBase):
    """The deletion loop over sufficiency decisions (delta = 0), skipping queries with the last core.

    A superset of a sufficient set is sufficient, so once a decision proves a core ``K`` sufficient,
    freeing any feature outside ``K`` needs no query (pysat's MUSX drops such features at once). Its
    weights are the proved zero of a sufficient set; an insufficient one has no known weight.
    """

    __slots__ = ("_q", "_fixed", "_core")

    def __init__(self, q: SessionHost, fixed: Iterable[int]) -> None:
        self._q = q
        self._fixed = frozenset(fixed)
        self._core: frozenset[int] | None = None

    @property
    def fixed(self) -> frozenset[int]:
        return self._fixed

    def _sufficient(self, fixed: frozenset[int]) -> bool:
        if self._core is not None and self._core <= fixed:
            return True
        d = self._q.decide(fixed)
        if d.sufficient:
            self._core = d.features
        return d.sufficient

    def sufficient(self) -> bool:
        """Whether the current set is sufficient."""
        return self._sufficient(self._fixed)

    def weight(self) -> Weight:
        """0, proved, for a sufficient set; a decision engine has no weight for another."""
        if self._sufficient(self._fixed):
            return 0
        raise InvalidInputError(unanswered(self._q.what, self._q.oracle, "decisions", ("counts",)))

    def weight_if_freed(self, feature: int) -> Weight:
        if self._sufficient(self._fixed - {feature}):
            return 0
        raise InvalidInputError(unanswered(self._q.what, self._q.oracle, "decisions", ("counts",)))

    def holds_if_freed(self, feature: int, bound: Bound) -> bool:
        return self._sufficient(self._fixed - {feature})

    def free(self, feature: int) -> None:
        self._fixed = self._fixed - {feature}
