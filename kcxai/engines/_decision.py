"""Tree-ensemble engines as :class:`~kcxai.oracle.DecisionOracle` s: the ``sat`` and ``search`` languages.

An engine (the CNF of the ensemble in an incremental SAT solver, or the branch and bound over
value boxes) answers one question: can some point agreeing with ``v`` on ``S`` get another class?
:class:`EngineOracle` turns that into :meth:`~kcxai.oracle.DecisionOracle.decide`, which also
returns what the engine learnt on the way (the features its proof used, or those where its
counterexample differs from ``v``), so that the deletion loops can skip queries (as pysat's MUSX
does with cores). One engine holds one solver: calls are serialised by a lock.
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeGuard, runtime_checkable

from kcxai._deadline import DEFAULT_SEARCH_SECONDS, Deadline, check_max_seconds
from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.compilers.compiled import CompiledModel, CompileStats
from kcxai.compilers.language import LanguageOptions
from kcxai.engines._ensemble_box import EnsembleBox
from kcxai.engines._ensemble_cnf import SOLVERS, EnsembleCnf
from kcxai.models.boosted import BoostedTrees
from kcxai.models.classifier import Classifier
from kcxai.models.forest import RandomForest
from kcxai.oracle import Box, BoxDecision, Decision, Point
from kcxai.space import FeatureSpace


__all__ = ["EngineOracle", "BoxEngineOracle", "EngineOptions", "SatOptions", "is_ensemble", "compile_engine",
           "DecisionEngine", "is_decision_engine", "engine_oracle"]


@runtime_checkable
class DecisionEngine(Protocol):
    """What the decision engines of tree ensembles share (:class:`~kcxai.engines._ensemble_cnf.EnsembleCnf`,
    :class:`~kcxai.engines._ensemble_box.EnsembleBox`, :class:`~kcxai.engines._portfolio.EnsemblePortfolio`):
    one question, "can some point agreeing with ``point`` on ``fixed`` get a class other than ``label``?",
    and what the last answer learnt.

    Attributes
    ----------
    language : str
        ``"sat"``, ``"search"`` or ``"portfolio"``.
    model : Classifier
        The ensemble.
    space : FeatureSpace
    """

    language: str
    model: Classifier
    space: FeatureSpace

    def changes(self, point: Sequence[int], label: int, fixed: Iterable[int], deadline: Deadline | None = None
                ) -> bool:
        """Whether some point with ``x_fixed = point_fixed`` is classified other than ``label``."""
        ...

    def core_features(self, point: Sequence[int], fixed: Iterable[int]) -> set[int]:
        """After an unsatisfiable :meth:`changes`: a subset of ``fixed`` that is sufficient already."""
        ...

    def differs(self, point: Sequence[int], features: Iterable[int]) -> set[int]:
        """After a satisfiable :meth:`changes`: the members of ``features`` where its counterexample differs."""
        ...

    def restart(self) -> None:
        """Forget what earlier calls left behind (a solver's learned clauses), so that an explanation's
        answers depend only on its own calls; called before each explanation's first decision."""
        ...

    def close(self) -> None:
        """Free what the engine holds outside Python (idempotent)."""
        ...


def is_decision_engine(obj: object) -> "TypeGuard[DecisionEngine]":
    """Whether ``obj`` is a :class:`DecisionEngine` (found by its methods, not by its class)."""
    return all(callable(getattr(obj, name, None)) for name in ("changes", "core_features", "differs", "close"))


#: Appended to a time-limit message of an engine's construction.
_ADVICE = (", or explain with certified estimates (language='sampling'), or with exact counts where the model "
           "compiles (language='obdd')")


def is_ensemble(model: Classifier | type) -> bool:
    """Whether ``model`` (or a model class) is a tree ensemble the decision engines encode (a random forest
    or boosted trees)."""
    if isinstance(model, type):
        return issubclass(model, (RandomForest, BoostedTrees))
    return isinstance(model, (RandomForest, BoostedTrees))


@dataclass(frozen=True)
class EngineOptions(LanguageOptions):
    """Options of the ``search`` engine.

    Attributes
    ----------
    max_seconds : float or None
        Limit on building the engine (default 60; ``None``: none). Each explanation has its own.
    """

    language = "search"
    max_seconds: float | None = DEFAULT_SEARCH_SECONDS

    def validate(self) -> None:
        check_max_seconds(self.max_seconds)


@dataclass(frozen=True)
class SatOptions(EngineOptions):
    """Options of the ``sat`` engine.

    Attributes
    ----------
    max_seconds : float or None
        Limit on building the CNF (default 60; ``None``: none).
    max_memory : int or None
        Limit on the CNF's estimated memory, in bytes (default ``None``: the engine's own bound);
        over it, :class:`~kcxai.ProblemTooLargeError` advises the ``search`` engine.
    solver : str
        The pysat solver (default ``"mgh"``, MiniSat-GH; one of :data:`kcxai.engines._ensemble_cnf.SOLVERS`).
    """

    language = "sat"
    solver: str = "mgh"
    max_memory: int | None = None

    def validate(self) -> None:
        super().validate()
        if not isinstance(self.solver, str) or self.solver not in SOLVERS:
            raise InvalidInputError(
                f"'solver' must be one of {list(SOLVERS)} (solvers a time limit interrupts within 1.1x of it). "
                f"Got {self.solver!r} instead.")


#: The engines alive, closed at exit while pysat can still free its solvers (after that, a solver's own
#: finaliser finds pysat's module half torn down and prints an ignored exception).
_LIVE: "weakref.WeakSet[EngineOracle]" = weakref.WeakSet()


@atexit.register
def _close_live() -> None:
    for oracle in list(_LIVE):
        oracle.close()


class EngineOracle:
    """A tree-ensemble engine answering sufficiency decisions (a :class:`~kcxai.oracle.DecisionOracle`).

    Parameters
    ----------
    engine : DecisionEngine
        Its ``changes(point, label, fixed, deadline)`` decides whether the class can change, and
        ``core_features`` / ``differs`` read the last answer's proof or counterexample.
    """

    def __init__(self, engine: DecisionEngine) -> None:
        self.engine = engine
        self.model = engine.model
        self.language: str = engine.language
        self.space = self.model.space
        self.n_classes = len(self.model.classes)
        self._lock = threading.Lock()
        self._query: Deadline | None = None  # the deadline of the explanation that decided last
        _LIVE.add(self)

    def predict_point(self, point: Point) -> int:
        return int(self.model.predict_point(point))

    def _begin(self, deadline: Deadline | None) -> None:
        """Restart the engine when a new explanation asks (each query has its own Deadline; a call without
        one stands alone), so that no answer depends on the explanations before it. Called under the lock."""
        if deadline is None or deadline is not self._query:
            self._query = deadline
            self.engine.restart()

    def decide(self, point: Point, label: int, fixed: frozenset[int], deadline: Deadline | None) -> Decision:
        with self._lock:
            self._begin(deadline)
            if self.engine.changes(point, label, fixed, deadline):
                free = frozenset(range(self.space.n_features)) - fixed
                return Decision(False, frozenset(self.engine.differs(point, free)))
            return Decision(True, fixed & frozenset(self.engine.core_features(point, fixed)))

    def close(self) -> None:
        """Free the engine's solver (idempotent)."""
        with self._lock:
            self.engine.close()


class BoxEngineOracle(EngineOracle):
    """An :class:`EngineOracle` of the branch and bound, which also decides boxes of value ranges
    (:class:`~kcxai.oracle.BoxDecisionOracle`)."""

    engine: "EnsembleBox"

    def decide_box(self, box: Box, label: int, deadline: Deadline | None, max_boxes: int | None = None
                   ) -> BoxDecision:
        lo, hi = [], []
        for f, mask in enumerate(box):
            low, high = (mask & -mask).bit_length() - 1, mask.bit_length() - 1
            if mask != ((1 << (high + 1)) - 1) & ~((1 << low) - 1):
                raise InvalidInputError(f"The box search decides ranges of values; feature {f} has the set {mask:b}.")
            lo.append(low)
            hi.append(high)
        with self._lock:
            self._begin(deadline)
            start = self.engine.nodes
            changes = self.engine.changes_in_box(lo, hi, label, deadline, max_boxes)
            return BoxDecision(None if changes is None else not changes, self.engine.nodes - start)


def engine_oracle(engine: DecisionEngine) -> EngineOracle:
    """The oracle of a decision engine (deciding boxes too when it can: the branch and bound)."""
    return BoxEngineOracle(engine) if callable(getattr(engine, "changes_in_box", None)) else EngineOracle(engine)


def compile_engine(model: Classifier, language: str, options: EngineOptions, *, what: str | None = None,
                   advice: str = _ADVICE) -> CompiledModel:
    """Build the ``language`` engine of a tree ensemble under ``options.max_seconds`` (a time-limit
    message names ``what``, default ``compile_model(model, language)``, and ends with ``advice``)."""
    if not is_ensemble(model):
        raise InvalidTypeError(
            f"The {language!r} engine encodes tree ensembles (RandomForest, BoostedTrees). "
            f"Got {type(model).__name__} instead.")
    t0 = time.perf_counter()
    what = what or f"compile_model(model, {language!r})"
    with Deadline(options.max_seconds, what=what, advice=advice) as deadline:
        if language == "sat":
            memory = getattr(options, "max_memory", None)
            extra = {} if memory is None else {"max_memory": memory}
            cnf = EnsembleCnf(model, solver=getattr(options, "solver", "mgh"), deadline=deadline, **extra)
            engine: DecisionEngine = cnf
            stats = CompileStats(size=cnf.clauses, size_unit="CNF clauses", variables=cnf.n_vars,
                                 compile_seconds=time.perf_counter() - t0,
                                 details={"solver": getattr(options, "solver", "mgh")})
            backend = "python-sat"
        else:
            box = EnsembleBox(model, deadline=deadline)
            engine = box
            stats = CompileStats(size=box.n_leaves, size_unit="leaf boxes", variables=model.space.n_features,
                                 compile_seconds=time.perf_counter() - t0)
            backend = "kcxai+numpy"
    return CompiledModel(model=model, oracle=engine_oracle(engine), language=language, backend=backend, stats=stats,
                         options=options.as_kwargs())
