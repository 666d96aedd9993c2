"""The diagram of one threshold test ``s0 + sum_t v_t(x) >= 0``, built top-down with cached intervals.

A *state* at a level is the sorted tuple ``R`` of the residual trees still undecided and the partial sum
``s`` of the decided ones. Branching on the level's feature moves the residuals testing it to their
children (values with equal children branch together) and adds the trees that reach a leaf to ``s``.

* Pruning: the remaining trees add between ``lo(R)`` and ``hi(R)``, so a state with ``s + lo(R) >= 0``
  is TRUE and one with ``s + hi(R) < 0`` is FALSE.
* Interval caching (Chan and Darwiche): the function of ``(R, s)`` is monotone in ``s``, so the partial
  sums giving one node form an interval, the intersection of the children's intervals shifted back by
  what each branch added. Each ``R`` keeps its disjoint intervals.
* Below a cut level the states are decided from value vectors (:mod:`.bottom`), exactly, with the
  widest intervals. That pays where the states below the cut outnumber those at it (XGBoost on adult:
  5.5 times the progress in the same CPU time) and costs where they do not (GradientBoosting 100x3: 1.5
  times the time), so the cut is switched on once the first :data:`PROBE_STATES` states show more states
  below the candidate cut than at it, and kept (every result so far stays valid).

Every state carries its *path mass*: the probability, under the product of the distribution's
marginals, of the branch that reached it. It serves two purposes. The mass of the states decided so far
(:attr:`Threshold.done`) measures progress, from which the construction's total time is predicted
(:mod:`.progress`). And a *bounded round* (``theta > 0``) sends every state that would need work and whose
path mass is below ``theta`` to UNKNOWN: the diagram it makes is three-valued, exact wherever it says
TRUE or FALSE. Exact results (nodes that do not reach UNKNOWN) keep their intervals across rounds; the
others are kept for their partial sum only and for one round.

Work
----
The construction counts its work in units that track its CPU time (a bounded construction's budget is set
in them, :mod:`kcxai.compilers.bounded`): grouping a level's values by their children costs one unit per
value of a residual tree and per group made; each branch of a state expanded costs :data:`BRANCH_WORK`
units, and so does a state decided below the cut from its vector. The trees' own diagrams
(:class:`~.sources.Sources`) cost :data:`~.sources.SOURCE_WORK` units per value of a feature looked at for
a node, and :data:`~.sources.MASK_WORK` per test of a tree path read; with more than two classes, each step of
the conjunctions that make the class functions from the pairwise tests costs
:data:`~.diagram.CONJ_WORK` (measured: 4.7-5.3 us a step on digits' ten classes). The weights were fitted (non-negative
least squares, then rounded) on the CPU seconds of GradientBoosting 100x3, HistGradientBoosting and XGBoost
100x6 behind adult's one-hot pipeline, where they predict the time within 10% (the path tests on the
default RandomForest's); the rate they give is :data:`kcxai.compilers.bounded.WORK_PER_SECOND` (the
figures are in docs/results.md). The count depends on the model, the distribution, the order and the
budget only, never on the clock, so a construction stopped at a given work is the same on every machine.

References
----------
Chan, H. and Darwiche, A. (2003). Reasoning about Bayesian network classifiers. UAI 2003 (the symbolic
compilation of a threshold test on a sum, with the partial sums' intervals).
Shih, A., Choi, A. and Darwiche, A. (2018). A symbolic approach to explaining Bayesian network classifiers.
IJCAI 2018 (that compiler used to explain classifiers).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any

from kcxai.compilers._ensemble.bottom import BOTTOM_POINTS, Bottom, cut_level
from kcxai.compilers._ensemble.diagram import FALSE, TRUE, UNKNOWN, EnsembleDiagram
from kcxai.compilers._ensemble.sources import Residuals, Sources
from kcxai.compilers._ensemble.stopped import Stopped
from kcxai.compilers._limits import Guard
from kcxai.compilers._tables.base import recursion

__all__ = ["Entry", "Threshold", "PROBE_STATES", "BRANCH_WORK"]

_INF = math.inf

#: States counted (per construction, every 4,096) before the vectors below the cut may be switched on.
PROBE_STATES = 16384
#: Units of work (see "Work" in the module docstring) of one branch of a state expanded.
BRANCH_WORK = 64


class Entry:
    """One residual tuple ``R``: bounds on the sum of its trees, its branches (computed on the first state
    that needs them), and the intervals of partial sums already built with the node each gave.

    Flat tuples and lists, for memory (a large compilation holds a million of these): ``branches`` is
    ``(mask, ds, child, mask, ds, child, ...)``, per group of values with the same children the mask, what
    the trees reaching a leaf add to the partial sum, and the child's entry (``None``: no tree left);
    ``iv`` is ``[lo, hi, node, lo, hi, node, ...]`` sorted by ``lo`` (disjoint; most tuples hold one
    interval or none, a few dozen at most were seen, so it is scanned). ``level`` is ``-1`` until the
    entry is first expanded (or, below the cut, until ``lo`` and ``hi`` are the vector's exact extremes).
    """

    __slots__ = ("rs", "lo", "hi", "level", "branches", "iv")

    def __init__(self, rs: Residuals, lo: int, hi: int) -> None:
        self.rs = rs
        self.lo = lo
        self.hi = hi
        self.level = -1
        self.branches: tuple[Any, ...] | None = None
        self.iv: list[Any] | None = None


class Threshold:
    """The diagram of ``s0 + sum_t v_t(x) >= 0`` over the trees of a sealed :class:`Sources`.

    Parameters
    ----------
    src : Sources
        Sealed.
    out : EnsembleDiagram
        Where the nodes are made (three-valued for bounded rounds).
    guard : Guard or None
        Ticked every 32 states.
    expanded : list of int, optional
        States expanded per level (a list the caller may share).
    fractions : sequence, optional
        Per level, per value of its feature, its probability (path masses; uniform if not given).
    bottom_points : int
        The candidate cut: levels spanning at most this many points may be decided from vectors (``0``:
        never).
    bottom : bool or None
        Whether the vectors are used from the start (``True``), never (``False``), or once the states
        counted show it pays (``None``, see the module docstring).
    monitor : callable, optional
        Called with this object every 1,024 states (progress reports and predictions; it may raise).
    """

    def __init__(self, src: Sources, out: EnsembleDiagram, guard: Guard | None, expanded: list[int] | None = None,
                 *, fractions: Sequence[Sequence[float]] | None = None, bottom_points: int = BOTTOM_POINTS,
                 bottom: bool | None = None, monitor: Callable[["Threshold"], None] | None = None) -> None:
        self.src = src
        self.out = out
        self.guard = guard
        n = src.n_levels
        #: states expanded per level (a list the caller may share)
        self.expanded = [0] * n if expanded is None else expanded
        self.entries: dict[Residuals, Entry] = {}
        self._ticks = 0
        self._tops: dict[Residuals, list[tuple[int, int, Residuals, int, int]]] = {}
        self.vchild = src.vchild
        if fractions is None:
            fractions = [[1.0 / size] * size for size in src.sizes]
        self._values = [list(p) for p in fractions]
        self._fractions: list[dict[int, float]] = [{} for _ in range(n)]
        #: the level from which states are decided from vectors (``n_levels``: none)
        self.cut = n
        self._candidate = cut_level(src.sizes, bottom_points) if bottom_points and bottom is not False else n
        if bottom:
            self.cut = self._candidate
        self.bottom: Bottom | None = None  # made once the bound on the sums is known (run)
        self._bound = 0
        #: path mass of the states decided so far in this run (1.0 once the run is over)
        self.done = 0.0
        #: path mass below which a state is sent to UNKNOWN (0: exact)
        self.theta = 0.0
        #: states sent to UNKNOWN in this run
        self.unknown_states = 0
        self.inexact: set[int] = {UNKNOWN}
        self._round: dict[tuple[Entry, int], int] = {}
        self.monitor = monitor
        #: stop the run (:class:`Stopped`) when ``ticks`` reaches this
        self.cap: int | None = None
        #: work counted over all runs (see "Work" in the module docstring)
        self.work = 0
        #: stop the run (:class:`Stopped`) once ``work`` reaches this
        self.work_cap: int | None = None

    @property
    def ticks(self) -> int:
        """States expanded by this construction, over all its runs (a multiple of 32 when a run stops)."""
        return self._ticks

    def run(self, roots: Sequence[int], s0: int, theta: float = 0.0) -> int:
        """The node of the test from the residuals ``roots`` and the partial sum ``s0``; with ``theta > 0``, a
        bounded round (states of path mass below ``theta`` sent to UNKNOWN)."""
        self.theta = theta
        self._round = {}
        self.done = 0.0
        self.unknown_states = 0
        rs = tuple(sorted(roots))
        if not rs:
            self.done = 1.0
            return TRUE if s0 >= 0 else FALSE
        lo, hi = self.src.lo, self.src.hi
        self._bound = max(self._bound, abs(s0) + sum(max(-lo[r], hi[r], 0) for r in rs))  # |s + sum left|
        if self.cut < self.src.n_levels:
            self._vectors()
        e = self.entries.get(rs)
        if e is None:
            e = self.entries[rs] = Entry(rs, sum(lo[r] for r in rs), sum(hi[r] for r in rs))
        with recursion(self.src.n_levels + 10):
            node = self._node(e, s0, 1.0)[0]
        self._round = {}
        return node

    def _vectors(self) -> None:
        """Make the vectors below the cut (again if the bound on the sums grew)."""
        if self.bottom is None or self._bound > self.bottom.bound:
            self.bottom = Bottom(self.src, self.out, self.cut, self._bound)

    def _consider_cut(self) -> None:
        """Switch the vectors on if the states counted so far lie more below the candidate cut than at it."""
        c = self._candidate
        if self.cut == self.src.n_levels > c and self._ticks >= PROBE_STATES and \
                sum(self.expanded[c + 1:]) > self.expanded[c]:
            self.cut = c
            self._vectors()

    def _fraction(self, level: int, mask: int) -> float:
        got = self._fractions[level].get(mask)
        if got is None:
            values = self._values[level]
            got = self._fractions[level][mask] = sum(p for k, p in enumerate(values) if mask >> k & 1)
        return got

    def _expand(self, e: Entry) -> tuple[Any, ...]:
        """The branches of ``e``: its top level's values grouped by the children of the residuals there."""
        src, entries = self.src, self.entries
        rs = e.rs
        lv = src.level[rs[0]]
        k = bisect_left(rs, src.start[lv + 1])
        top, rest = rs[:k], rs[k:]
        groups = self._tops.get(top)
        if groups is None:
            groups = self._tops[top] = self._group(top)
        lo_rest = e.lo - groups[0][3]
        hi_rest = e.hi - groups[0][4]
        branches: list[Any] = []
        for mask, ds, moved, lo_add, hi_add in groups[1:]:
            if moved:
                key = tuple(sorted(moved + rest))
            elif rest:
                key = rest
            else:
                branches += (mask, ds, None)
                continue
            child = entries.get(key)
            if child is None:
                child = entries[key] = Entry(key, lo_rest + lo_add, hi_rest + hi_add)
            branches += (mask, ds, child)
        e.level = lv
        e.branches = tuple(branches)
        return e.branches

    def _group(self, top: Residuals) -> list[tuple[int, int, Residuals, int, int]]:
        """For residuals ``top`` at one level: first ``(0, 0, (), lo, hi)`` of ``top`` itself, then per group of
        values with the same children, ``(mask, the leaves' sum, the other children, their lo, their hi)``."""
        src = self.src
        lo, hi, terminal, vchild = src.lo, src.hi, src.start[src.n_levels], self.vchild
        masks: dict[tuple[int, ...], int] = {}
        self.work += len(top) * len(vchild[top[0]])  # every value of every residual at this level
        for v, col in enumerate(zip(*[vchild[r] for r in top])):
            masks[col] = masks.get(col, 0) | 1 << v
        out: list[tuple[int, int, Residuals, int, int]] = [(0, 0, (), sum(lo[r] for r in top), sum(hi[r] for r in top))]
        self.work += len(masks) * len(top)
        for col, mask in masks.items():
            moved = tuple(c for c in col if c < terminal)
            ds = sum(lo[c] for c in col if c >= terminal)
            out.append((mask, ds, moved, sum(lo[c] for c in moved), sum(hi[c] for c in moved)))
        return out

    def _tick(self, level: int) -> None:
        self.expanded[level] += 1
        self._ticks += 1
        if self.cap is not None and self._ticks >= self.cap:  # a replay stops where its recorded run stopped
            raise Stopped(-1, self._ticks, "stopped at a recorded number of states")
        if self.work_cap is not None and self.work >= self.work_cap:
            raise Stopped(-1, self._ticks, f"the pass used the whole work budget left ({self.work_cap:,} units)")
        if not self._ticks & 31:
            if self.guard is not None:  # the guard's clock, every 32 states (~0.5 ms)
                self.guard.calls += 31
                self.guard.tick()
            if not self._ticks & 1023:
                if self.monitor is not None:
                    self.monitor(self)
                if not self._ticks & 4095:
                    self._consider_cut()

    def _node(self, e: Entry, s: int, m: float) -> tuple[int, float, float]:
        """The node of state ``(e.rs, s)`` reached with path mass ``m``, and the interval ``[a, b)`` of partial
        sums giving the same node (``[s, s + 1)`` for a node reaching UNKNOWN)."""
        if s + e.lo >= 0:
            self.done += m
            return TRUE, -e.lo, _INF
        if s + e.hi < 0:
            self.done += m
            return FALSE, -_INF, -e.hi
        iv = e.iv
        j = 0  # past the intervals starting at or below s
        if iv is not None:
            n = len(iv)
            while j < n and iv[j] <= s:
                j += 3
            if j and s < iv[j - 2]:
                self.done += m
                return iv[j - 1], iv[j - 3], iv[j - 2]
        theta = self.theta
        if theta:
            got = self._round.get((e, s))
            if got is not None:
                self.done += m
                return got, s, s + 1
            if m < theta:
                self.done += m
                self.unknown_states += 1
                return UNKNOWN, s, s + 1
        level = e.level if e.level >= 0 else self.src.level[e.rs[0]]
        self._tick(level)
        if level >= self.cut:
            return self._bottom(e, s, level, j, m)
        branches = e.branches
        if branches is None:
            branches = self._expand(e)
        self.work += BRANCH_WORK * (len(branches) // 3)
        fraction = self._fraction
        inexact = self.inexact
        a: float = -_INF
        b: float = _INF
        by: dict[int, int] = {}
        partial = False
        it = iter(branches)
        for mask, ds, child_e in zip(it, it, it):
            t = s + ds
            cm = m * fraction(level, mask)
            if child_e is None:
                self.done += cm
                child, ca, cb = (TRUE, 0, _INF) if t >= 0 else (FALSE, -_INF, 0)
            elif t + child_e.lo >= 0:  # pruned here rather than in the call: most children are
                self.done += cm
                child, ca, cb = TRUE, -child_e.lo, _INF
            elif t + child_e.hi < 0:
                self.done += cm
                child, ca, cb = FALSE, -_INF, -child_e.hi
            else:
                child, ca, cb = self._node(child_e, t, cm)
                if theta and child in inexact:
                    partial = True
            if ca - ds > a:
                a = ca - ds
            if cb - ds < b:
                b = cb - ds
            by[child] = by.get(child, 0) | mask
        node = self.out.make(level, by)
        if partial:
            inexact.add(node)
            self._round[(e, s)] = node
            return node, s, s + 1
        self._remember(e, j, a, b, node)
        return node, a, b

    def _bottom(self, e: Entry, s: int, level: int, j: int, m: float) -> tuple[int, float, float]:
        """A state below the cut, decided from its trees' value vector."""
        bottom = self.bottom
        if bottom is None:  # pragma: no cover - a level at or below the cut implies vectors
            raise RuntimeError("internal error: a state below the cut without vectors")
        g = bottom.vector(e.rs)
        self.work += BRANCH_WORK
        self.done += m
        if e.level < 0:  # first visit: the vector's extremes are the exact range of the remaining sum
            lo, hi = bottom.extremes(g, len(e.rs))
            e.lo, e.hi = max(lo, e.lo), min(hi, e.hi)
            e.level = level
            if s + e.lo >= 0:
                return TRUE, -e.lo, _INF
            if s + e.hi < 0:
                return FALSE, -_INF, -e.hi
        node, a, b = bottom.node(e.rs, g, s)
        self._remember(e, j, a, b, node)
        return node, a, b

    @staticmethod
    def _remember(e: Entry, j: int, a: float, b: float, node: int) -> None:
        """Insert ``[a, b) -> node`` at position ``j`` of ``e``'s intervals (clipped to stay disjoint: the
        children only touched other entries, so ``j`` still locates the partial sum)."""
        iv = e.iv
        if iv is None:
            e.iv = [a, b, node]
        else:
            lo_j = iv[j - 2] if j and iv[j - 2] > a else a
            hi_j = iv[j] if j < len(iv) and iv[j] < b else b
            iv[j:j] = (lo_j, hi_j, node)
