"""Minimum hitting sets of a growing family of sets, by incremental SAT under a :class:`~kcxai._deadline.Deadline`.

The implicit-hitting-set loops (:func:`kcxai.smallest_idrs`, :func:`kcxai.smallest_ensemble_axp`,
:func:`kcxai.smallest_ensemble_cxp`) repeatedly ask for a minimum hitting set of the sets found so
far, then add one more set. pysat's ``Hitman`` answers with RC2, whose plain ``solve()`` calls hold
the GIL and cannot be interrupted, so a time limit could not hold inside it. Here: one MiniSat-GH
solver (which stops within milliseconds of an interrupt, where Glucose waits for its next restart:
:mod:`kcxai._deadline`) with a selector variable per element, a clause per set, and an incremental totalizer
(pysat's ``ITotalizer``) over the selectors; a minimum hitting set is the first ``k`` for which
``sum <= k`` is satisfiable. Adding sets only removes hitting sets, so the minimum never decreases
and the next query starts at the last one.
"""

from __future__ import annotations

from collections.abc import Iterable
from pysat.card import ITotalizer
from pysat.solvers import Solver

from kcxai._deadline import Deadline

__all__ = ["MinimumHittingSets"]


class MinimumHittingSets:
    """Minimum hitting sets over the elements ``0 .. n-1``; use as a context manager.

    Examples
    --------
    >>> from kcxai._deadline import Deadline
    >>> with Deadline(None, what="example", advice="") as d, MinimumHittingSets(4, d) as h:
    ...     h.hit([0, 1]); h.hit([1, 2]); h.hit([3])
    ...     sorted(h.get())
    [1, 3]
    """

    def __init__(self, n: int, deadline: Deadline) -> None:
        self.n = n
        self.deadline = deadline
        self._solver = Solver(name="mgh")
        self._tot: ITotalizer | None = None
        self._lower = 0
        if n:
            lits = list(range(1, n + 1))
            self._tot = ITotalizer(lits=lits, ubound=n, top_id=n)
            self._solver.append_formula(self._tot.cnf.clauses)
            self._solver.set_phases([-x for x in lits])  # prefer leaving elements out

    def __enter__(self) -> "MinimumHittingSets":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Free the solver."""
        if self._tot is not None:
            self._tot.delete()
            self._tot = None
        self._solver.delete()

    def hit(self, elements: Iterable[int]) -> None:
        """Every later hitting set meets ``elements`` (an empty set makes :meth:`get` return ``None``)."""
        self._solver.add_clause([i + 1 for i in elements])

    def get(self) -> frozenset[int] | None:
        """A hitting set of minimum size of the sets given so far, or ``None`` if there is none."""
        for k in range(self._lower, self.n + 1):
            bound = [-self._tot.rhs[k]] if self._tot is not None and k < self.n else []
            if self.deadline.solve(self._solver, bound):
                self._lower = k
                model = self._solver.get_model()
                return frozenset(i for i in range(self.n) if model[i] > 0)
        return None
