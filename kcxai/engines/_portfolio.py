"""Two exact engines side by side on every class-change query: the first answer wins.

:class:`EnsemblePortfolio` asks each query of both
:class:`~kcxai.engines._ensemble_cnf.EnsembleCnf` (SAT) and
:class:`~kcxai.engines._ensemble_box.EnsembleBox` (branch and bound): the SAT
call runs in a worker thread (pysat's ``solve_limited`` releases the GIL), the
search in the calling thread; the one that answers first stops the other (the
solver's ``interrupt()``, the search's stop flag, looked at once per batch of
boxes). Both are exact, so the answer does not depend on which wins; the core
does (the solver's, or every fixed feature), and so may the set a deletion
finds. The search runs without a SAT solver of its own (``ask_sat_first=False``): the forest is encoded
once, for the worker. The chooser (:func:`kcxai.engines.choose.choose`) never picks it: it needs a
second core to pay (with both cores busy it was slower than either alone); the
measured rule that picks one engine is :func:`kcxai.engines._registry.decision_engine`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Sequence

from kcxai._deadline import Deadline
from kcxai._errors import InvalidInputError
from kcxai.engines._ensemble_box import EnsembleBox, Interrupted
from kcxai.engines._ensemble_cnf import EnsembleCnf
from kcxai._types import Point
from kcxai.models.boosted import BoostedTrees
from kcxai.models.forest import RandomForest

__all__ = ["EnsemblePortfolio"]


class _SatWorker:
    """A daemon thread answering the SAT side of the queries, one at a time."""

    def __init__(self, sat: EnsembleCnf, box: EnsembleBox) -> None:
        self.sat, self.box = sat, box
        self._jobs: queue.SimpleQueue[list[int] | None] = queue.SimpleQueue()
        self._done = threading.Event()
        self.result: bool | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="kcxai-portfolio-sat", daemon=True)
        self._thread.start()

    def submit(self, assumptions: list[int]) -> None:
        self._done.clear()
        self.result, self.error = None, None
        self.sat.solver.clear_interrupt()
        self._jobs.put(assumptions)

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def stop(self) -> None:
        self._jobs.put(None)
        self._thread.join()

    def _run(self) -> None:
        while True:
            lits = self._jobs.get()
            if lits is None:
                return
            try:
                self.result = self.sat.solver.solve_limited(assumptions=lits, expect_interrupt=True)
            except BaseException as exc:  # noqa: BLE001 - handed to the querying thread
                self.error = exc
            if self.result is not None or self.error is not None:
                self.box.interrupt()  # answered first (or failed): stop the search
            self._done.set()


class EnsemblePortfolio:
    """SAT and branch and bound on every query of a tree ensemble, the first answer winning.

    Same query interface as :class:`~kcxai.engines._ensemble_cnf.EnsembleCnf`.

    Parameters
    ----------
    model : RandomForest or BoostedTrees
    solver : str, default "mgh"
        The SAT solver (:data:`~kcxai.engines._ensemble_cnf.SOLVERS`).
    deadline : Deadline, optional
        The time limit of the construction of both engines.

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.models import RandomForest
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "abc"])
    >>> trees = [kcxai.DecisionTree(space, [0, 1], kcxai.Split(n, {0: kcxai.Leaf(0), 1: kcxai.Leaf(1)})) for n in "abc"]
    >>> engine = EnsemblePortfolio(RandomForest(space, [0, 1], trees))
    >>> kcxai.ensemble_axp(engine, [1, 1, 0]).names
    ('a', 'b')
    >>> engine.close()
    """

    language = "portfolio"

    def __init__(self, model: RandomForest | BoostedTrees, *, solver: str = "mgh",
                 deadline: Deadline | None = None) -> None:
        self.sat = EnsembleCnf(model, solver=solver, deadline=deadline)
        try:
            self.box = EnsembleBox(model, deadline=deadline, ask_sat_first=False)  # one encoding: the worker's
        except BaseException:
            self.sat.close()
            raise
        self.model = model
        self.space = model.space
        self._worker = _SatWorker(self.sat, self.box)
        self._last: EnsembleCnf | EnsembleBox | None = None  # the engine that answered the last query
        #: Queries answered first by each engine.
        self.wins = {"sat": 0, "search": 0}
        self._closed = False

    def changes(self, point: Sequence[int], label: int, fixed: Iterable[int], deadline: Deadline | None = None) -> bool:
        """Whether some point with ``x_fixed = point_fixed`` is classified other than ``label``."""
        fixed = set(fixed)
        worker = self._worker
        if deadline is not None:
            deadline.check()
            deadline.sat_calls += 1
        worker.submit(self.sat.assumptions(point, label, fixed))
        answer: bool | None = None
        try:
            answer = self.box.changes(point, label, fixed, deadline)
        except Interrupted:
            pass
        finally:
            if answer is not None or worker.result is None:  # the search answered, or stopped: stop the solver
                self.sat.solver.interrupt()
                while not worker.wait(0.02):  # again until it returns (as kcxai._deadline does)
                    self.sat.solver.interrupt()
            worker.wait()
            self.box.clear_interrupt()
        if answer is not None:
            self._last = self.box
            self.wins["search"] += 1
            return answer
        if worker.error is not None:
            raise worker.error
        self._last = self.sat
        self.wins["sat"] += 1
        return bool(worker.result)

    def _answered(self) -> EnsembleCnf | EnsembleBox:
        if self._last is None:
            raise InvalidInputError("The portfolio has answered no query yet: ask changes() first.")
        return self._last

    def core_features(self, point: Sequence[int], fixed: Iterable[int]) -> set[int]:
        """After an unsatisfiable :meth:`changes`: the solver's core if SAT answered, else every fixed feature."""
        return set(self._answered().core_features(point, fixed))

    def model_point(self) -> Point:
        """After a satisfiable :meth:`changes`: the counterexample of the engine that answered."""
        return tuple(self._answered().model_point())

    def differs(self, point: Sequence[int], features: Iterable[int]) -> set[int]:
        """After a satisfiable :meth:`changes`: the features among ``features`` where the counterexample differs."""
        p = self.model_point()
        return {i for i in features if p[i] != point[i]}

    def restart(self) -> None:
        """Restart both engines (:meth:`~kcxai.engines._ensemble_cnf.EnsembleCnf.restart`; the worker calls the
        solver directly, so it counts as used)."""
        self.sat._used = True
        self.sat.restart()
        self.box.restart()

    def __enter__(self) -> "EnsemblePortfolio":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the worker thread and free the solver (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._worker.stop()
        self.sat.close()
        self.box.close()
