"""A wall-clock limit on one exact search, enforced in Python loops and inside SAT calls.

Every exact search of :mod:`kcxai.explain` (subset searches, SAT-based searches over trees and tree
ensembles, hitting-set loops, the enumeration of relevant sets) runs under a :class:`Deadline`
built from its ``max_seconds`` argument (default :data:`DEFAULT_SEARCH_SECONDS`; ``None``: no
limit). It stops the search in two ways:

* Python loops call :meth:`Deadline.check` once per iteration (a ``time.perf_counter()`` call,
  about 0.1 µs);
* SAT calls go through :meth:`Deadline.solve`, which calls python-sat's
  ``solve_limited(expect_interrupt=True)``. That call releases the GIL (a plain ``solve()`` does
  not, so no Python thread can run while it does), and one process-wide watchdog thread
  (:class:`_Watchdog`) calls ``solver.interrupt()`` when the deadline passes, and again every
  20 ms until the call returns (a flag set just before the solver starts is not lost). The search
  raises once the call returns, whether it returned ``None`` (interrupted) or an answer found past
  the deadline. MiniSat and its descendants look at the flag between conflicts and return within
  milliseconds; Glucose 3/4 and Gluecard only between restarts, which Glucose postpones, so they can
  overrun a limit by seconds (``benchmarks/bench_ensembles.py --solvers`` measures it; figures in
  ``docs/results.md``). So the tree-ensemble SAT engine (:data:`kcxai.engines._ensemble_cnf.SOLVERS`)
  takes only solvers of the MiniSat family. CaDiCaL and Lingeling cannot
  be interrupted at all, and pysat's ``RC2`` / ``Hitman`` only make plain ``solve()`` calls, so kcxai
  uses its own hitting-set solver (:mod:`kcxai.explain._hitting`), on MiniSat-GH.

Hitting the limit raises :class:`SearchLimitError` (a :class:`~kcxai.ProblemTooLargeError`) naming
the limit, what was reached (seconds, SAT calls, candidate sets, counting queries) and what to do.

What cannot be interrupted: one counting query of a compiled oracle (an SDD or OBDD count), one
step of Python code between two checks, and inside a SAT solver the stretch between two looks at
the flag (see above). ``benchmarks/bench_search_limits.py`` measures how far past its limit a hard
search stops (figures in ``docs/results.md``).
"""

from __future__ import annotations

import math
import numbers
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError, SearchLimitError

__all__ = ["DEFAULT_SEARCH_SECONDS", "Deadline", "SearchLimitError", "check_max_seconds"]

#: Default ``max_seconds`` of one exact search (one explanation, or one enumeration's computing time).
DEFAULT_SEARCH_SECONDS = 60.0


def check_max_seconds(max_seconds: Any, *, argument: str = "max_seconds") -> float | None:
    """``None`` or a positive number of seconds (``inf`` means no limit, as ``None``).

    >>> check_max_seconds(2), check_max_seconds(None), check_max_seconds(float("inf"))
    (2.0, None, None)
    >>> check_max_seconds(-1)
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidInputError: 'max_seconds' must be a positive number of seconds or None. Got -1 instead.
    """
    if max_seconds is None:
        return None
    if isinstance(max_seconds, bool) or not isinstance(max_seconds, numbers.Real):
        raise InvalidTypeError(
            f"'{argument}' must be a positive number of seconds or None. Got {max_seconds!r} instead.")
    value = float(max_seconds)
    if math.isnan(value) or value <= 0:
        raise InvalidInputError(
            f"'{argument}' must be a positive number of seconds or None. Got {max_seconds!r} instead.")
    return None if value == math.inf else value


class _Watchdog:
    """One daemon thread calling functions at given times (:func:`time.perf_counter` clock).

    :meth:`cancel` returns only once the function cannot run any more: functions run while the
    watchdog's lock is held, and cancelling takes the same lock. A function that returns a time is
    called again then (under the same token), until it returns ``None``. Idle, the thread wakes once every
    :data:`_IDLE` seconds, so that scheduling a time after its next wake-up (the 60 s default) needs
    no notification: millisecond explanations do not pay a GIL hand-over to wake the thread for every
    search.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._due: dict[int, tuple[float, Callable[[], float | None]]] = {}
        self._next_id = 0
        self._wake_at = math.inf
        self.pid = os.getpid()
        self._thread = threading.Thread(target=self._run, name="kcxai-deadline", daemon=True)
        self._thread.start()

    def schedule(self, at: float, fn: Callable[[], float | None]) -> int:
        with self._cond:
            self._next_id += 1
            self._due[self._next_id] = (at, fn)
            if at < self._wake_at:
                self._cond.notify()
            return self._next_id

    def cancel(self, token: int) -> None:
        with self._cond:
            self._due.pop(token, None)

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.perf_counter()
                for token, (at, fn) in list(self._due.items()):
                    if at <= now:
                        del self._due[token]
                        try:
                            again = fn()
                        except Exception:  # noqa: BLE001 - keep serving the other deadlines; this one's
                            again = None  # search still stops at its next clock check, after the solver returns
                        if again is not None:  # the function asks to be called again then (same token)
                            self._due[token] = (again, fn)
                self._wake_at = min((at for at, _ in self._due.values()), default=now + _IDLE)
                self._cond.wait(max(self._wake_at - now, 0.0))


#: Seconds between two wake-ups of the idle watchdog thread.
_IDLE = 1.0

#: Seconds between two interrupts of a SAT call still running past its deadline.
_REFIRE = 0.02

_WATCHDOG: _Watchdog | None = None
_WATCHDOG_LOCK = threading.Lock()


def _watchdog() -> _Watchdog:
    """The process's watchdog (a new one in a forked child, where the parent's thread does not exist)."""
    global _WATCHDOG
    w = _WATCHDOG
    if w is None or w.pid != os.getpid():
        with _WATCHDOG_LOCK:
            w = _WATCHDOG
            if w is None or w.pid != os.getpid():
                w = _WATCHDOG = _Watchdog()
    return w


class Deadline:
    """The time limit of one search (see the module docstring).

    Parameters
    ----------
    max_seconds : float or None
        Checked already (:func:`check_max_seconds`); ``None``: no limit.
    what : str
        The function, named in the message (``"min_cdrs"``).
    advice : str
        What the user can do besides raising the limit, appended to the message.
    queries : callable, optional
        The number of oracle queries so far, reported in the message.
    queries_are : str
        What those queries are, as the message names them (default ``"counting queries"``).
    started : float, optional
        When the limited call started (``time.perf_counter()``), if before this object was made.

    Use as a context manager (or call :meth:`close`): the watchdog entry is removed on exit.

    Examples
    --------
    >>> d = Deadline(None, what="a search", advice="")
    >>> d.check(); d.examined += 1; d.close()
    """

    __slots__ = ("max_seconds", "what", "advice", "queries", "queries_are", "t0", "at", "sat_calls", "examined",
                 "_lock", "_running", "_fired", "_token", "_paused_at")

    def __init__(self, max_seconds: float | None, *, what: str, advice: str,
                 queries: Callable[[], int] | None = None, queries_are: str = "counting queries",
                 started: float | None = None) -> None:
        self.max_seconds = max_seconds
        self.what = what
        self.advice = advice
        self.queries = queries
        self.queries_are = queries_are
        self.t0 = time.perf_counter() if started is None else started
        self.at = math.inf if max_seconds is None else self.t0 + max_seconds
        #: SAT calls made under this deadline.
        self.sat_calls = 0
        #: Candidate sets examined (incremented by the searches).
        self.examined = 0
        self._lock = threading.Lock()
        self._running: Any = None
        self._fired = False
        self._token: int | None = None
        self._paused_at: float | None = None

    def __enter__(self) -> "Deadline":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def seconds(self) -> float:
        """Seconds since the search started (pauses excluded)."""
        return (self._paused_at if self._paused_at is not None else time.perf_counter()) - self.t0

    def check(self) -> None:
        """Raise :class:`SearchLimitError` if the deadline has passed."""
        if time.perf_counter() > self.at:
            raise self.error()

    def error(self, partial: Sequence[Any] = ()) -> SearchLimitError:
        """The error for this search having run out of time."""
        reached = [f"{self.seconds:.2f} s"]
        if self.sat_calls:
            reached.append(f"{self.sat_calls} SAT calls")
        if self.examined:
            reached.append(f"{self.examined} candidate sets examined")
        if self.queries is not None:
            reached.append(f"{self.queries()} {self.queries_are}")
        found = f"; the {len(partial)} sets found before are in the error's 'partial'" if partial else ""
        return SearchLimitError(
            f"{self.what} stopped at its time limit max_seconds={self.max_seconds:g} ({', '.join(reached)}{found}). "
            f"Pass a larger 'max_seconds' (None: no limit){self.advice}.",
            limit="max_seconds", seconds=self.seconds, partial=partial)

    # -- SAT calls -------------------------------------------------------------

    def solve(self, solver: Any, assumptions: Sequence[int] = ()) -> bool:
        """``solver.solve(assumptions)``, interrupted at the deadline (then :class:`SearchLimitError`).

        ``solver`` is a pysat solver that supports ``interrupt()`` (MiniSat-like solvers).
        """
        self.sat_calls += 1
        if self.max_seconds is None:
            return bool(solver.solve(assumptions=list(assumptions)))
        self.check()
        if self._token is None:
            self._token = _watchdog().schedule(self.at, self._fire)
        try:
            solver.clear_interrupt()  # a flag left by an earlier search on a reused solver
        except NotImplementedError:
            raise InvalidInputError(
                f"{self.what}: the SAT solver {type(solver.solver).__name__} cannot be interrupted, so "
                "'max_seconds' cannot be enforced: pass max_seconds=None or a MiniSat-like solver "
                "('mgh', 'm22', 'mc', 'mcb', 'mpl').") from None
        with self._lock:
            if self._fired:  # the watchdog fired since the check: nothing would interrupt the call
                raise self.error()
            self._running = solver
        try:
            result = solver.solve_limited(assumptions=list(assumptions), expect_interrupt=True)
        finally:
            with self._lock:
                self._running = None
                fired = self._fired
        if fired:
            solver.clear_interrupt()
        if result is None or fired:  # interrupted (only the watchdog does that), or answered past the deadline
            raise self.error()
        return bool(result)

    def _fire(self) -> float | None:  # in the watchdog thread
        with self._lock:
            self._fired = True
            if self._running is not None:
                self._running.interrupt()
                # again until the call returns: a flag set just before the solver starts would be lost
                return time.perf_counter() + _REFIRE
        return None

    # -- generators --------------------------------------------------------------

    def pause(self) -> None:
        """Stop the clock (an enumeration yields: the caller's time is not the search's)."""
        if self._paused_at is None:
            self._paused_at = time.perf_counter()
            self._unschedule()

    def resume(self) -> None:
        """Restart the clock after :meth:`pause`."""
        if self._paused_at is not None:
            shift = time.perf_counter() - self._paused_at
            self._paused_at = None
            self.t0 += shift
            self.at += shift

    def _unschedule(self) -> None:
        if self._token is not None:
            _watchdog().cancel(self._token)
            self._token = None
        self._fired = False

    def close(self) -> None:
        """Remove the watchdog entry (idempotent)."""
        self._unschedule()
