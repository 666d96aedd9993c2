"""The reduced ordered multi-valued diagram the ensemble construction builds, and its OBDD size.

Nodes ``(level, edges)`` in one unique table: node 0 is FALSE, node 1 TRUE and, in a *three-valued*
diagram (a bounded construction, :mod:`kcxai.compilers._ensemble.bounded`), node 2 is UNKNOWN: the
points reaching it are not decided by the diagram. Negation keeps UNKNOWN and conjunction is Kleene's
(false and unknown is false; true and unknown is unknown), so that a class function built from pairwise
tests is three-valued too. :meth:`EnsembleDiagram.settle` sends UNKNOWN to FALSE or TRUE: the diagram of
the points *proven* in the function, or of those *possibly* in it.

References
----------
Srinivasan, A., Kam, T., Malik, S. and Brayton, R. (1990). Algorithms for discrete function manipulation.
ICCAD 1990 (multi-valued decision diagrams, their reduction and ``apply``).
Kleene, S. C. (1952). Introduction to Metamathematics. North-Holland (the strong three-valued logic).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kcxai.compilers._encoding import Encoding
from kcxai.compilers._ensemble.stopped import Stopped
from kcxai.compilers._limits import Guard
from kcxai.compilers._tables.base import FALSE, TRUE
from kcxai.compilers._tables.level import LevelTable
from kcxai.space import FeatureSpace

__all__ = ["EnsembleDiagram", "obdd_nodes", "FALSE", "TRUE", "UNKNOWN", "CONJ_WORK"]

#: The work units of one step of :meth:`EnsembleDiagram.conj` (a pair of nodes not met before), in the units
#: of :mod:`kcxai.compilers._ensemble.threshold` ("Work"): the class functions of a model with more than two
#: classes are conjunctions of their pairwise tests, and on ten classes they can cost more than the tests.
CONJ_WORK = 64

#: The third terminal of a three-valued diagram.
UNKNOWN = 2


class EnsembleDiagram:
    """A reduced ordered multi-valued diagram under construction: nodes ``(level, edges)``, shared.

    Node 0 is FALSE and node 1 TRUE (at level ``n_levels``), and node 2 UNKNOWN when ``three_valued``;
    every other node tests the feature ``order[level]`` and has edges ``((mask, child), ...)`` whose masks
    partition the feature's values, sorted by mask.

    Parameters
    ----------
    space : FeatureSpace
    order : sequence of int
        Every feature once, by level.
    three_valued : bool, default False
        Whether node 2 is the terminal UNKNOWN.
    """

    def __init__(self, space: FeatureSpace, order: Sequence[int], *, three_valued: bool = False) -> None:
        self.space = space
        self.order = tuple(order)
        self.n_levels = len(self.order)
        self.sizes = [space.features[f].size for f in self.order]
        #: the number of terminals (internal nodes are numbered from it)
        self.terminals = 3 if three_valued else 2
        self.level = [self.n_levels] * self.terminals
        self.edges: list[tuple[tuple[int, int], ...]] = [()] * self.terminals
        #: nodes made per level (reported when a limit stops the construction)
        self.per_level = [0] * self.n_levels
        self._unique: dict[tuple[int, tuple[tuple[int, int], ...]], int] = {}
        self._neg: dict[int, int] = {FALSE: TRUE, TRUE: FALSE}
        if three_valued:
            self._neg[UNKNOWN] = UNKNOWN
        self._and: dict[tuple[int, int], int] = {}
        self._settled: dict[tuple[int, int], int] = {}
        #: steps of :meth:`conj` made (pairs of nodes not met before), and the number at which it stops
        #: (:class:`~kcxai.compilers._ensemble.stopped.Stopped`; ``None``: never)
        self.and_steps = 0
        self.and_cap: int | None = None

    def __len__(self) -> int:
        return len(self.level)

    def seal(self) -> None:
        """Drop the tables that only building needs (the unique table, the memos of ``negate``, ``conj`` and
        ``settle``)."""
        self._unique.clear()
        self._and.clear()
        self._settled.clear()

    def make(self, level: int, by_child: dict[int, int]) -> int:
        """The node branching to ``child`` on the values of ``mask`` for each ``child: mask``."""
        if len(by_child) == 1:
            return next(iter(by_child))
        key = (level, tuple(sorted((m, c) for c, m in by_child.items())))
        got = self._unique.get(key)
        if got is None:
            got = self._unique[key] = len(self.level)
            self.level.append(level)
            self.edges.append(key[1])
            self.per_level[level] += 1
        return got

    def negate(self, u: int) -> int:
        """``not u``."""
        got = self._neg.get(u)
        if got is None:
            by: dict[int, int] = {}
            for m, c in self.edges[u]:
                d = self.negate(c)
                by[d] = by.get(d, 0) | m
            got = self._neg[u] = self.make(self.level[u], by)
        return got

    def conj(self, u: int, v: int, guard: Guard | None = None) -> int:
        """``u and v`` (Kleene's conjunction where UNKNOWN is involved)."""
        if u == FALSE or v == FALSE:
            return FALSE
        if u == TRUE or u == v:
            return v
        if v == TRUE:
            return u
        key = (u, v) if u < v else (v, u)
        got = self._and.get(key)
        if got is not None:
            return got
        self.and_steps += 1
        if self.and_cap is not None and self.and_steps >= self.and_cap:
            raise Stopped(-1, 0, "making the class functions from the pairwise tests used the whole work budget "
                                 "left")
        if guard is not None:
            guard.tick()
        lu, lv = self.level[u], self.level[v]
        top = min(lu, lv)
        full = (1 << self.sizes[top]) - 1
        eu = self.edges[u] if lu == top else ((full, u),)
        ev = self.edges[v] if lv == top else ((full, v),)
        by: dict[int, int] = {}
        for mu, cu in eu:
            for mv, cv in ev:
                m = mu & mv
                if m:
                    c = self.conj(cu, cv, guard)
                    by[c] = by.get(c, 0) | m
        got = self._and[key] = self.make(top, by)
        return got

    def settle(self, u: int, unknown: int) -> int:
        """``u`` with UNKNOWN replaced by ``unknown`` (FALSE or TRUE): the points proven in ``u`` (FALSE), or
        those possibly in it (TRUE)."""
        if u < self.terminals:
            return unknown if u == UNKNOWN else u
        key = (u, unknown)
        got = self._settled.get(key)
        if got is None:
            by: dict[int, int] = {}
            for m, c in self.edges[u]:
                d = self.settle(c, unknown)
                by[d] = by.get(d, 0) | m
            got = self._settled[key] = self.make(self.level[u], by)
        return got

    def features(self) -> list[int]:
        """Per node, its feature (``-1`` for the terminals), as :class:`~kcxai.compilers._tables.level.LevelTable`
        takes them."""
        order, n = self.order, self.n_levels
        return [order[lv] if lv < n else -1 for lv in self.level]

    def reachable(self, roots: Sequence[int]) -> int:
        """Internal nodes reachable from ``roots``."""
        first = self.terminals
        seen: set[int] = set()
        stack = [r for r in roots if r >= first]
        while stack:
            u = stack.pop()
            if u in seen:
                continue
            seen.add(u)
            stack.extend(c for _, c in self.edges[u] if c >= first and c not in seen)
        return len(seen)

    def compact(self, roots: Sequence[int]) -> tuple[list[int], list[tuple[tuple[int, int], ...]], list[int]]:
        """``(feature, edges, roots)`` of the nodes reachable from ``roots`` only, renumbered children first
        (the diagram's own lists when every node is reachable and there is no UNKNOWN); UNKNOWN must not be
        reachable (the counting tables have two terminals)."""
        if self.terminals == 2 and self.reachable(roots) == len(self.level) - 2:
            return self.features(), self.edges, list(roots)
        new = {FALSE: FALSE, TRUE: TRUE}
        feature: list[int] = [-1, -1]
        edges: list[tuple[tuple[int, int], ...]] = [(), ()]
        for u in self._post(roots):
            new[u] = len(feature)
            feature.append(self.order[self.level[u]])
            edges.append(tuple((m, new[c]) for m, c in self.edges[u]))
        return feature, edges, [new[r] for r in roots]

    def _post(self, roots: Sequence[int]) -> list[int]:
        """Internal nodes reachable from ``roots``, children before parents."""
        first = self.terminals
        out: list[int] = []
        seen: set[int] = set()
        for r in roots:
            if r < first or r in seen:
                continue
            stack = [(r, False)]
            while stack:
                u, done = stack.pop()
                if done:
                    out.append(u)
                    continue
                if u in seen:
                    continue
                seen.add(u)
                stack.append((u, True))
                stack.extend((c, False) for _, c in self.edges[u] if c >= first and c not in seen)
        return out


def obdd_nodes(table: LevelTable, enc: Encoding, guard: Guard | None = None) -> int:
    """Nodes of the reduced OBDD of a counting table's class functions in the Boolean encoding ``enc``
    (terminal included).

    Each multi-valued node becomes the decision diagram of its block of variables; a variable none of
    whose values on one side is a value of the feature (an invalid code) is skipped, as the diagram
    compilers leave the encodings' validity out. Distinct roots only: a negated root shares its nodes, as
    with CUDD's complement edges, so the figure compares with the ``"builder"`` construction's. Levels are
    taken deepest first, each with its own unique table (blocks share no variable); every node of the
    table is counted (the ensemble construction's tables hold reachable nodes only; in float spaces the
    complement of a two-class test is materialised, so its nodes count too).
    """
    order, lev, vchild = table.order, table.lev, table.vchild
    by_level: list[list[int]] = [[] for _ in range(table.n_levels)]
    for u, lv in enumerate(lev):
        if lv < table.n_levels:
            by_level[lv].append(u)
    boolean: list[int] = [0] * len(lev)
    boolean[FALSE], boolean[TRUE] = -2, -3
    count = 1
    for lv in range(table.n_levels - 1, -1, -1):
        f = order[lv]
        unique: dict[tuple[int, int, int], int] = {}
        log = enc.kinds[f] in ("log", "binary")
        for u in by_level[lv]:
            child_of = [boolean[c] for c in vchild[u]]
            if log:
                boolean[u] = _log_block(enc.blocks[f], child_of, unique, count)
            else:
                boolean[u] = _block(enc.blocks[f], enc.var_true, child_of, (1 << len(child_of)) - 1, 0, unique, count)
        count += len(unique)
        if guard is not None:
            guard.check()
    return count


def _log_block(vs: Sequence[int], child_of: Sequence[int], unique: dict[tuple[int, int, int], int],
               base: int) -> int:
    """:func:`_block` for the log encoding (variable ``vs[j]`` is bit ``len(vs) - 1 - j`` of the value number),
    pairing codes bottom-up; ``None`` stands for the codes past the last value."""
    layer: list[Any] = list(child_of) + [None] * ((1 << len(vs)) - len(child_of))
    for j in range(len(vs) - 1, -1, -1):
        var = vs[j]
        nxt: list[Any] = []
        for k in range(0, len(layer), 2):
            lo, hi = layer[k], layer[k + 1]
            if hi is None or lo == hi:
                nxt.append(lo)
            elif lo is None:
                nxt.append(hi)
            else:
                key = (var, lo, hi)
                got = unique.get(key)
                if got is None:
                    got = unique[key] = base + len(unique)
                nxt.append(got)
        layer = nxt
    return int(layer[0])


def _block(vs: Sequence[int], var_true: Sequence[int], child_of: Sequence[int], values: int, j: int,
           unique: dict[tuple[int, int, int], int], base: int) -> int:
    """The Boolean node deciding ``values`` (a non-empty set of the feature's values) from variable ``vs[j]`` on;
    new nodes are numbered from ``base``."""
    members = [k for k in range(len(child_of)) if values >> k & 1]
    target = child_of[members[0]]
    if all(child_of[k] == target for k in members):
        return target
    while True:
        t = var_true[vs[j]]
        high, low = values & t, values & ~t
        if high and low:
            break
        j += 1
    lo = _block(vs, var_true, child_of, low, j + 1, unique, base)
    hi = _block(vs, var_true, child_of, high, j + 1, unique, base)
    if lo == hi:
        return lo
    key = (vs[j], lo, hi)
    got = unique.get(key)
    if got is None:
        got = unique[key] = base + len(unique)
    return got
