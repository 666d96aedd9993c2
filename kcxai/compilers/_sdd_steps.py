"""PySDD applies taken in steps near ``max_nodes``, so that the node limit is checked inside a large apply.

One PySDD apply (``a & b``, ``a | b``) cannot be interrupted, and one can create far more nodes
than all the live ones before it: compiling a decision tree of 7,000 nodes under the ``"index"``
order, a disjunction of operands of 3,266 and 4,042 nodes made 158,584 new nodes at once (from
15,842 live), so ``max_nodes=50000`` stopped at 174,426 (3.5 times the limit).

:class:`SteppedApply` takes an apply in steps when all of these hold: the live nodes have reached
:data:`SCREEN` of ``max_nodes``; the larger operand ``b`` (by elements of its top node) is a
decision node of at least :data:`MIN_ELEMENTS` elements ``(p_j, s_j)``; and the product of the
operands' node counts (the pairs of nodes an apply can meet, which bounds the nodes it makes for
uncompressed SDDs; one ``count()`` is a C traversal) is over the nodes left below ``max_nodes``.
The primes are disjoint and cover the points where ``b`` holds, so with ``R_i`` the disjunction of
a run of primes,

* ``a | b = a | (b & R_1) | (b & R_2) | ...``
* ``a & b = (a & (b & R_1)) | (a & (b & R_2)) | ...``

and the node count is read after every step. The first step takes ``1 / FIRST`` of the elements;
from the growth per element seen so far, each next step takes as many elements as would add the
larger of :data:`BUDGET` of ``max_nodes`` and half the nodes left below it (when the whole apply
is predicted to fit that, the plain apply is made at once); the last step covers the negation of
the regions done. SDDs are canonical: the result is the very node the plain apply
makes, so no compiled function changes. Every other apply is native (the screen is one O(1)
``live_count()`` call per operation).

What is guaranteed: the limit is overshot by at most the nodes one step creates. A step's growth
is predicted from the steps before it, not bounded: the first step, or a region holding most of
the result, can still be large, and so can growth shared by all the regions (nodes deep in the
result that every region reaches). Not split at all: applies made below :data:`SCREEN` of the limit
(to overshoot by 10% they must create more than 22 times the live nodes), applies whose operands
have fewer than :data:`MIN_ELEMENTS` top elements (every node of a right-linear vtree: measured
2.8 times ``max_nodes=200000`` on the tree above with ``vtree="right"``), and negations (``~a``
creates at most as many nodes as ``a`` has). The thresholds trade the overshoot for time: splitting
every apply with 16 or more elements made reaching ``max_nodes=20000`` 1.8 times slower on a
20-feature naive Bayes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from kcxai.compilers._limits import Guard
from kcxai.compilers._sdd_types import SddManager, SddNode

__all__ = ["SteppedApply", "SCREEN", "BUDGET", "FIRST", "MIN_ELEMENTS"]

#: Applies are split only once the live nodes have reached this fraction of ``max_nodes``.
SCREEN = 0.05
#: The predicted growth of one step, as a fraction of ``max_nodes``.
BUDGET = 0.03
#: The first step takes this fraction (``1 / FIRST``) of the split operand's elements.
FIRST = 32
#: An operand with fewer elements than this is applied natively.
MIN_ELEMENTS = 256


def _any_of(mgr: SddManager, nodes: Sequence[SddNode]) -> SddNode:
    """The disjunction of ``nodes``, as a balanced tree of applies (disjoint primes: each small)."""
    layer = list(nodes)
    if not layer:
        return mgr.false()
    while len(layer) > 1:
        nxt = [layer[i] | layer[i + 1] for i in range(0, len(layer) - 1, 2)]
        if len(layer) % 2:
            nxt.append(layer[-1])
        layer = nxt
    return layer[0]


class SteppedApply:
    """Conjunction and disjunction of PySDD nodes, in steps near the guard's ``max_nodes`` (module docstring).

    Parameters
    ----------
    mgr : pysdd.sdd.SddManager
        The manager of the nodes.
    guard : Guard
        Its ``max_nodes`` decides when applies are split; :meth:`Guard.check_nodes` is called after
        every step.

    Attributes
    ----------
    split, steps : int
        How many applies were taken in steps, and how many steps they took (for stats and tests).
    """

    __slots__ = ("mgr", "guard", "live", "limit", "screen", "budget", "split", "steps")

    def __init__(self, mgr: SddManager, guard: Guard) -> None:
        self.mgr = mgr
        self.guard = guard
        self.live: Callable[[], int] = mgr.live_count
        limit = guard.max_nodes
        self.limit = 0 if limit is None else limit
        self.screen = float("inf") if limit is None else SCREEN * limit
        self.budget = 0.0 if limit is None else max(1.0, BUDGET * limit)
        self.split = 0
        self.steps = 0

    def conj(self, a: SddNode, b: SddNode) -> SddNode:
        """``a & b``."""
        if self.live() < self.screen:
            return a & b
        return self._apply(a, b, True)

    def disj(self, a: SddNode, b: SddNode) -> SddNode:
        """``a | b``."""
        if self.live() < self.screen:
            return a | b
        return self._apply(a, b, False)

    def _apply(self, a: SddNode, b: SddNode, conj: bool) -> SddNode:
        na = a.node_size() if a.is_decision() else 0
        nb = b.node_size() if b.is_decision() else 0
        if nb < na:
            a, b, nb = b, a, na
        if nb < MIN_ELEMENTS or a.is_true() or a.is_false() or self.fits(a, b):
            return a & b if conj else a | b
        primes = [p for p, s in b.elements() if not s.is_false()]
        return self._steps(a, b, primes, conj)

    def fits(self, a: SddNode, b: SddNode) -> bool:
        """Whether the pairs of nodes an apply of ``a`` and ``b`` can meet (which bounds the nodes it makes
        for uncompressed SDDs) fit below ``max_nodes``."""
        return max(a.count(), 1) * b.count() <= self.limit - self.live()

    def allowance(self, live: int) -> float:
        """The growth one step may add: half the nodes left below ``max_nodes``, and at least BUDGET of it."""
        return max(self.budget, 0.5 * (self.limit - live))

    def _steps(self, a: SddNode, b: SddNode, primes: list[SddNode], conj: bool) -> SddNode:
        mgr, live, guard = self.mgr, self.live, self.guard
        self.split += 1
        k = len(primes)
        start = live()
        acc = mgr.false() if conj else a
        covered = mgr.false()  # the regions done so far
        done = 0
        size = max(1, k // FIRST)
        while True:
            if done + size >= k:  # the rest: the primes not yet covered
                region, done = ~covered, k
            else:
                region = _any_of(mgr, primes[done:done + size])
                covered = covered | region
                done += size
            piece = b & region
            if conj:
                piece = a & piece
            acc = acc | piece
            del region, piece
            self.steps += 1
            guard.check_nodes()
            if done == k:
                return acc
            now = live()
            rate = max(now - start, 1) / done  # new live nodes per element so far
            allow = self.allowance(now)
            if rate * k <= allow:  # the whole apply is predicted to fit one step: make it at once
                del acc, covered
                out = a & b if conj else a | b
                self.steps += 1
                return out
            size = max(1, int(allow / rate))
