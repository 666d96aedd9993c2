"""The bounded construction: the exact diagram if it fits the work budget, else a three-valued one that does.

The budget is counted work (:mod:`.threshold`, "Work"), never the clock: every decision below is taken
from the work counted at a counted state, so the same model, order and budget make the same diagram on any
machine and under any load.

0. **The trees' own diagrams** are built first. A budget below the work their paths' tests alone count
   (:func:`~.sources.source_work_floor`) is refused before any work, and their construction stops once the
   pace of the trees begun points past :data:`~.sources.PREDICT_FACTOR` times the budget: then
   :class:`~.stopped.Stopped` carries the work spent, and the language keeps the diagram that decides nothing
   (the default RandomForest behind adult's one-hot pipeline: after 2% of a 30 s budget, not all of it).
1. **The exact pass** runs first, with its work predicted from the mass it decides (:mod:`.progress`).
   If it ends within the budget, the diagram is exact.
2. If it is predicted not to fit (after :data:`~.progress.PREDICT_AFTER` of the budget), or uses the
   budget up, or its diagrams reach ``max_nodes``, **bounded rounds** follow, reusing every exact result the
   pass left in the caches. Round ``k`` sends each state that would need work and whose path mass (the
   probability, under the product of the distribution's marginals, of the branch that reached it) is below
   ``theta_k = THETA0 / 4**k`` to the terminal UNKNOWN; the rest is built exactly. A round costs about four
   times the one before (the states of mass at least ``theta`` at a level are at most ``1 / theta``), so a
   round is only started if its predicted work (the last round's times the growth seen) fits what is left of
   the budget, and one stopped by the budget or ``max_nodes`` is dropped. The last finished round gives the
   diagram; a round that sends nothing to UNKNOWN is exact.

The guard's limits (wall clock and memory) are a safety net for a runaway, not the budget: when one of
them stops the construction, the diagram depends on the machine's speed and load, and
:attr:`BoundedBuild.reproducible` says so (the schedule still replays it).

The states sent to UNKNOWN are the lightest the construction meets, so what is left unknown is the
least probable part of the space it could not afford; its exact weight is counted on the diagram at the
end (:mod:`kcxai.compilers._tables.bounds`).

Which passes ran and where each was stopped (the test and its number of states) is recorded as a
*schedule*; given a schedule, the construction replays it and makes the same diagram.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kcxai.compilers._ensemble.build import Tests
from kcxai.compilers._ensemble.diagram import UNKNOWN, EnsembleDiagram
from kcxai.compilers._ensemble.progress import Monitor, Progress
from kcxai.compilers._ensemble.stopped import Stopped
from kcxai.compilers._limits import Guard, LimitHit
from kcxai.functions import AdditiveTrees

__all__ = ["BoundedBuild", "compile_bounded", "THETA0", "Step", "safety_message"]

#: The path mass below which the first bounded round sends states to UNKNOWN.
THETA0 = 1 / 128
#: What the path mass threshold is divided by from one round to the next.
SHRINK = 4.0

#: One pass of a schedule: ``(theta, test, states)``: the threshold (0: exact), and where the pass was
#: stopped (the test's index and its number of states), or ``(theta, None, None)`` if it ended.
Step = tuple[float, "int | None", "int | None"]


@dataclass
class BoundedBuild:
    """What :func:`compile_bounded` made.

    Attributes
    ----------
    diagram : EnsembleDiagram
        Three-valued.
    roots : list of int
        Per class, its three-valued function.
    exact : bool
        Whether no state was sent to UNKNOWN.
    theta : float
        The threshold of the pass that made the diagram (0: the exact pass).
    schedule : tuple of Step
        The passes run, to replay them.
    stopped : str
        Why the last pass stopped early ("" if none did).
    stats : dict
        ``states``, ``source_nodes``, ``states_by_level``, ``nodes_by_level``, ``work`` (counted).
    reproducible : bool
        False when a safety limit (the guard's wall clock or memory) stopped the construction: then the
        diagram depends on the machine and its load.
    """

    diagram: EnsembleDiagram
    roots: list[int]
    exact: bool
    theta: float
    schedule: tuple[Step, ...]
    stopped: str
    stats: dict[str, Any]
    reproducible: bool = True


def _class_roots(diagram: EnsembleDiagram, roots: Sequence[int], negated: Sequence[bool]) -> list[int]:
    return [diagram.negate(r) if neg else r for r, neg in zip(roots, negated)]


def compile_bounded(spec: AdditiveTrees, order: Sequence[int], guard: Guard, *, max_work: int | None = None,
                    max_nodes: int | None = None, progress: Callable[[Progress], None] | None = None,
                    schedule: Sequence[Step] | None = None, bottom: bool | None = None) -> BoundedBuild:
    """The bounded construction of ``spec`` in ``order`` within ``max_work`` units of work (``None``: the
    exact pass, unbounded) and ``max_nodes`` (see the module docstring), under ``guard``'s safety limits; or
    the replay of ``schedule``. ``bottom`` sets the vectors below the cut (see
    :class:`~kcxai.compilers._ensemble.threshold.Threshold`).

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.compilers._limits import Guard
    >>> from kcxai.models import RandomForest
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "abc"])
    >>> Leaf, Split = kcxai.Leaf, kcxai.Split
    >>> trees = [kcxai.DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in "abc"]
    >>> built = compile_bounded(RandomForest(space, [0, 1], trees).additive_trees(), (0, 1, 2),
    ...                         Guard("bounded", None, 10.0), max_work=100_000)
    >>> built.exact, built.schedule, built.stats["work"]
    (True, ((0.0, None, None),), 980)
    """
    out = EnsembleDiagram(spec.space, order, three_valued=True)
    stats: dict[str, Any] = {}
    monitor = Monitor(guard, progress, max_nodes=max_nodes)
    tests = Tests.prepare(spec, out, guard, stats, bottom=bottom, monitor=monitor,
                          max_work=None if schedule is not None else max_work)
    monitor.tests = tests
    if max_nodes is not None and tests.size() > max_nodes:
        raise Stopped(-1, 0, f"the trees' diagrams have {tests.size():,} nodes, more than max_nodes={max_nodes:,}")
    if schedule is not None:
        return _replay(tests, out, guard, monitor, schedule)
    steps: list[Step] = []
    monitor.begin("exact", 0.0, None if max_work is None else max_work - tests.work())
    try:
        roots, negated = tests.run(guard, 0.0, max_work)
        steps.append((0.0, None, None))
        return _done(tests, monitor, BoundedBuild(out, _class_roots(out, roots, negated), True, 0.0, tuple(steps),
                                                  "", stats))
    except Stopped as e:
        steps.append(_stopped_step(tests, 0.0))
        stopped = str(e)
    except LimitHit as e:  # a safety limit: no round would fit what is left of it
        steps.append(_stopped_step(tests, 0.0))
        return _unsafe(tests, monitor, BoundedBuild(out, [UNKNOWN] * spec.n_classes, False, THETA0, tuple(steps),
                                                    safety_message(e), stats))
    best: tuple[list[int], float] | None = None
    theta, last, growth = THETA0, 0, SHRINK
    while True:
        left = None if max_work is None else max_work - tests.work()
        if left is not None and left <= 0:  # the exact pass (or the last round) used the budget: no round starts
            break
        if best is not None and left is not None and last * growth > left:
            stopped = (f"the next round (theta {theta:.3g}) was predicted to take {last * growth:,.0f} units of "
                       f"work, more than the {left:,} left of the budget")
            break
        monitor.begin("bounded", theta, None)
        w0 = tests.work()
        try:
            roots, negated = tests.run(guard, theta, max_work)
        except Stopped as e:
            steps.append(_stopped_step(tests, theta))
            stopped = str(e)
            break
        except LimitHit as e:
            steps.append(_stopped_step(tests, theta))
            roots_, theta_ = best if best is not None else ([UNKNOWN] * spec.n_classes, THETA0)
            return _unsafe(tests, monitor,
                           BoundedBuild(out, roots_, False, theta_, tuple(steps), safety_message(e), stats))
        steps.append((theta, None, None))
        spent = tests.work() - w0
        growth = max(2.0, spent / last) if last > 0 else SHRINK
        last = spent
        best = (_class_roots(out, roots, negated), theta)
        if not tests.unknown_states():
            return _done(tests, monitor, BoundedBuild(out, best[0], True, theta, tuple(steps), "", stats))
        theta /= SHRINK
    roots_, theta_ = best if best is not None else ([UNKNOWN] * spec.n_classes, THETA0)
    return _done(tests, monitor, BoundedBuild(out, roots_, False, theta_, tuple(steps), stopped, stats))


def _done(tests: Tests, monitor: Monitor, built: BoundedBuild) -> BoundedBuild:
    """``built`` with the work counted, after the last progress report."""
    built.stats["work"] = tests.work()
    monitor.report()
    return built


def _unsafe(tests: Tests, monitor: Monitor, built: BoundedBuild) -> BoundedBuild:
    """``built``, stopped by a safety limit: not reproducible."""
    built.reproducible = False
    return _done(tests, monitor, built)


def safety_message(e: LimitHit) -> str:
    """What a result stopped by the safety limit ``e`` says."""
    return (f"a safety limit stopped the construction, so this diagram depends on the machine's speed and load "
            f"and is not reproducible (the schedule replays it): {e}")


def _stopped_step(tests: Tests, theta: float) -> Step:
    th = tests.runs[tests.current][0] if tests.runs else None
    return (theta, tests.current, th.ticks if th is not None else 0)


def _replay(tests: Tests, out: EnsembleDiagram, guard: Guard, monitor: Monitor,
            schedule: Sequence[Step]) -> BoundedBuild:
    """The passes of ``schedule`` again, each stopped where it was; the last one that ended gives the diagram."""
    best: tuple[list[int], float, bool] | None = None
    stopped = ""
    for theta, test, ticks in schedule:
        if test is not None:
            tests.runs[test][0].cap = ticks
        monitor.begin("exact" if not theta else "bounded", theta, None)
        try:
            roots, negated = tests.run(guard, theta)
            if ticks is None:  # the recorded pass ended: its diagram counts
                best = (_class_roots(out, roots, negated), theta, not tests.unknown_states())
            else:  # the recorded pass stopped after its last counted state (e.g. in a limit between states)
                stopped = f"stopped where the recorded run stopped (test {test}, {ticks} states)"
        except Stopped as e:
            stopped = str(e)
        finally:
            if test is not None:
                tests.runs[test][0].cap = None
    tests.stats["work"] = tests.work()
    if best is None:
        return BoundedBuild(out, [UNKNOWN] * tests.spec.n_classes, False, THETA0, tuple(schedule), stopped,
                            tests.stats)
    return BoundedBuild(out, best[0], best[2], best[1], tuple(schedule), stopped if not best[2] else "",
                        tests.stats)
