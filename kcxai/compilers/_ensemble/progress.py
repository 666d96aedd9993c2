"""How far a construction got, what it predicts, and when it stops early.

Every state of the construction carries its path mass (:mod:`.threshold`), and every branch that ends
(decided by the interval test, found in a cache, or built) adds it to the mass decided. The fraction
of the mass decided grows to 1 as the pass ends, so ``work / done`` extrapolates the pass's work (counted
as in :mod:`.threshold`, "Work"). It overestimates (later branches find more in the caches:
GradientBoosting 100x3 on adult predicted 43 s after 7 s and took 32 s), which is the safe side for
stopping a pass that would not fit.

:class:`Monitor` is called by the construction every 1,024 states: it reports :class:`Progress` to a
callback (a progress bar), stops the exact pass when its predicted work exceeds the budget, and stops a
pass whose diagram has grown past ``max_nodes``. The exact pass is stopped when its prediction exceeds the
budget by a margin that shrinks from 2x (at :data:`PREDICT_AFTER` of the budget) to none (at the end):
early predictions are the least reliable. Every decision is taken from counted work and nodes, at counted
states, so it is the same whatever the clock says; only the progress reports read the clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from kcxai.compilers._ensemble.build import Tests
from kcxai.compilers._ensemble.stopped import Stopped
from kcxai.compilers._ensemble.threshold import Threshold
from kcxai.compilers._limits import Guard

__all__ = ["Progress", "Monitor", "PREDICT_AFTER"]

#: The exact pass is judged once this fraction of its work budget is spent (earlier predictions swing).
PREDICT_AFTER = 0.05


@dataclass(frozen=True)
class Progress:
    """What a construction reports while it runs (for a progress bar).

    Attributes
    ----------
    phase : str
        ``"exact"`` (the exact pass) or ``"bounded"`` (a round sending light states to UNKNOWN).
    done : float
        The fraction of the probability mass (under the product of the distribution's marginals) the pass
        has decided, in [0, 1].
    seconds : float
        Wall-clock seconds since the compilation started.
    predicted_seconds : float
        The pass's total seconds extrapolated from ``done`` (``inf`` before anything is decided).
    theta : float
        The path mass below which states go to UNKNOWN (0 in the exact pass).
    nodes : int
        Diagram nodes made so far.
    states : int
        States expanded so far.
    work : int
        Work counted so far (:mod:`.threshold`, "Work"): what the budget of a bounded construction is set in.
    """

    phase: str
    done: float
    seconds: float
    predicted_seconds: float
    theta: float
    nodes: int
    states: int
    work: int = 0


class Monitor:
    """Called with the running threshold construction every 1,024 states (see the module docstring).

    Parameters
    ----------
    guard : Guard
        Its clock (``seconds``) is the compilation's (progress reports only).
    callback : callable or None
        Given a :class:`Progress` at most every ``every`` seconds.
    every : float
    max_nodes : int or None
        Nodes of the diagram and the trees' diagrams at which a pass is stopped.
    """

    def __init__(self, guard: Guard, callback: Callable[[Progress], None] | None, every: float = 0.25,
                 max_nodes: int | None = None) -> None:
        self.guard = guard
        self.callback = callback
        self.every = every
        self.max_nodes = max_nodes
        self.tests: Tests | None = None
        self.phase = "exact"
        self.theta = 0.0
        self.budget: int | None = None
        self.started = 0.0
        self.started_work = 0
        self._next = 0.0

    def begin(self, phase: str, theta: float, budget: int | None) -> None:
        """A new pass: ``budget`` units of work (from now) within which the exact pass must be predicted to end
        (``None``: no prediction)."""
        self.phase, self.theta, self.budget = phase, theta, budget
        self.started = self.guard.seconds
        self.started_work = self.tests.work() if self.tests is not None else 0

    def progress(self, th: Threshold | None = None) -> Progress:
        """The progress now (``th``: the running test)."""
        tests = self.tests
        done = 1.0
        if tests is not None and th is not None:
            done = tests.done(tests.index(th), th)
        seconds = self.guard.seconds
        spent = seconds - self.started
        predicted = spent / done if done > 0 else math.inf
        nodes = len(tests.out) if tests is not None else 0
        states = sum(tests.stats.get("states_by_level", ())) if tests is not None else 0
        work = tests.work() if tests is not None else 0
        return Progress(self.phase, done, seconds, predicted, self.theta, nodes, states, work)

    def report(self, th: Threshold | None = None) -> None:
        """Give the callback the progress now."""
        if self.callback is not None:
            self.callback(self.progress(th))
            self._next = self.guard.seconds + self.every

    def __call__(self, th: Threshold) -> None:
        tests = self.tests
        if tests is not None and self.max_nodes is not None and tests.size() > self.max_nodes:
            raise Stopped(tests.index(th), th.ticks, f"the diagrams reached max_nodes={self.max_nodes:,} "
                                                     f"({tests.size():,} nodes)")
        if self.budget is not None and tests is not None:
            spent = tests.work() - self.started_work
            if spent >= PREDICT_AFTER * self.budget:
                done = tests.done(tests.index(th), th)
                predicted = spent / done if done > 0 else math.inf
                if predicted > self.budget * (2 - spent / self.budget):  # the margin shrinks to none
                    raise Stopped(tests.index(th), th.ticks,
                                  f"the exact pass was predicted to take {predicted:,.0f} units of work "
                                  f"({done:.2%} of the mass decided in {spent:,}), more than its "
                                  f"{self.budget:,}")
        if self.callback is not None and self.guard.seconds >= self._next:
            self.report(th)
