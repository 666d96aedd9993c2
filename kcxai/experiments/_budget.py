"""A wall-clock budget for a loop of explanations: checked between them, and enforced within one.

:func:`deadline` arms a one-shot ``SIGALRM`` timer (POSIX, main thread) whose
handler raises :class:`OverBudget`. Python code (kcxai's deletion loops, the
sampling oracle, the ensemble search) is interrupted at its next bytecode; one
call into a C library (a SAT call, a CUDD or SDD operation) finishes first, so a
budget is overshot by at most one such call. Where no timer can be armed (another
thread, no ``setitimer``) the caller's check between explanations still holds,
and a budget is overshot by at most one explanation. :class:`OverBudget` derives
from ``BaseException`` so that no ``except Exception`` on the way swallows it.
An object interrupted by it (a compiled diagram, a SAT engine) may be left in an
inconsistent state and must not be used again.
The caller's own ``SIGALRM`` handler is restored afterwards, but a timer it had
armed is cancelled (one process has one real-time timer).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["OverBudget", "deadline"]


class OverBudget(BaseException):
    """The budget of a loop ran out."""


def _raise(signum: int, frame: Any) -> None:
    raise OverBudget()


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[bool]:
    """Raise :class:`OverBudget` in the ``with`` block after ``seconds``; yields whether a timer is armed.

    Examples
    --------
    >>> import time
    >>> try:
    ...     with deadline(0.05):
    ...         while True:
    ...             time.sleep(0.01)
    ... except OverBudget:
    ...     print("stopped")
    stopped
    """
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield False
        return
    old = signal.signal(signal.SIGALRM, _raise)
    try:
        signal.setitimer(signal.ITIMER_REAL, max(float(seconds), 1e-6))
        yield True
    finally:
        try:  # the timer may fire just here: the handler is restored all the same
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            signal.signal(signal.SIGALRM, old)
