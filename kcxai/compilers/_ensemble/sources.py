"""The trees of one comparison of class scores as reduced ordered diagrams with integer leaves.

A comparison ``score_c(x) - score_d(x) >= 0`` is a threshold test on a sum of trees: with every leaf
difference scaled to an integer by one factor (:func:`scaled_differences`), it reads
``s0 + sum_t v_t(x) >= 0``. :class:`Sources` holds each tree as a reduced ordered multi-valued diagram in
the construction's feature order, all trees in one shared table, so that a tree's *residual* (what is left
of it once the features above a level are fixed) is a canonical node.
"""

from __future__ import annotations

import math
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from kcxai.compilers._ensemble.stopped import Stopped
from kcxai.compilers._limits import Guard, LimitHit
from kcxai.compilers._tables.base import recursion
from kcxai.functions import AdditiveTrees

__all__ = ["Sources", "Residuals", "scaled_differences", "source_work_floor", "SOURCE_WORK", "MASK_WORK",
           "PREDICT_FACTOR"]

#: Units of work (:mod:`kcxai.compilers._ensemble.threshold`, "Work") of one value of a feature looked at
#: while the trees' diagrams are built.
SOURCE_WORK = 6
#: Units of work of one test of a tree path read into the table of allowed values (one numpy row operation,
#: about 5 µs whatever the number of values: measured on the default RandomForest behind adult's pipeline).
MASK_WORK = 64

#: How far past the work budget the pace of the trees' diagrams must point before their construction is
#: stopped as one that will not fit (:meth:`Sources._count`): a margin for trees of unequal sizes.
PREDICT_FACTOR = 2

#: A state's residual trees: node numbers of the shared source table, sorted (hence by level).
Residuals = tuple[int, ...]


def _bits(mask: int, size: int) -> np.ndarray:
    """The ``size`` low bits of ``mask`` as booleans, value 0 first."""
    raw = np.frombuffer((mask & ((1 << size) - 1)).to_bytes((size + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[:size].astype(bool)


class Sources:
    """The trees of one comparison as reduced ordered diagrams with integer leaves, in one shared table.

    After :meth:`seal`, nodes are numbered by level (terminals last), so that a sorted tuple of nodes
    lists the highest level first; ``lo``/``hi`` are each node's least and greatest leaf and
    ``part[u]`` its edges ``((mask, child), ...)``.
    """

    def __init__(self, sizes: Sequence[int], level_of: Sequence[int], guard: Guard | None) -> None:
        self.sizes = list(sizes)
        self.level_of = level_of
        self.n_levels = len(sizes)
        self.guard = guard
        self.level: list[int] = []
        self.part: list[tuple[tuple[int, int], ...]] = []
        self.lo: list[int] = []
        self.hi: list[int] = []
        self._unique: dict[Any, int] = {}
        self.start: list[int] = []
        #: after :meth:`seal`, per node its child for each value of its level's feature
        self.vchild: list[tuple[int, ...]] = []
        #: work counted so far (units of :mod:`kcxai.compilers._ensemble.threshold`'s "Work": :data:`SOURCE_WORK`
        #: per value of a feature looked at), and the work at which building stops (``None``: no limit)
        self.work = 0
        self.work_cap: int | None = None
        #: the nodes (leaves included) past which building stops with a ``max_nodes`` limit (``None``: no limit)
        self.node_cap: int | None = None
        #: ``(built, total)``: the trees built so far of those to build, when the work spent is to predict
        #: whether they fit :attr:`work_cap` (``None``: no prediction; see :meth:`_count`)
        self.trees: tuple[int, int] | None = None

    def leaf(self, value: int) -> int:
        key = ("leaf", value)
        got = self._unique.get(key)
        if got is None:
            got = self._unique[key] = len(self.level)
            self.level.append(self.n_levels)
            self.part.append(())
            self.lo.append(value)
            self.hi.append(value)
        return got

    def make(self, level: int, by_child: dict[int, int]) -> int:
        if len(by_child) == 1:
            return next(iter(by_child))
        edges = tuple(sorted((m, c) for c, m in by_child.items()))
        key = (level, edges)
        got = self._unique.get(key)
        if got is None:
            got = self._unique[key] = len(self.level)
            self.level.append(level)
            self.part.append(edges)
            self.lo.append(min(self.lo[c] for _, c in edges))
            self.hi.append(max(self.hi[c] for _, c in edges))
            if self.node_cap is not None and len(self.level) > self.node_cap:
                raise LimitHit(f"Building the trees' diagrams passed the nodes that max_nodes left for them "
                               f"({max(self.node_cap, 0):,}; counted, the same on every machine).", "max_nodes")
        return got

    def add_tree(self, paths: Sequence[Any], values: Sequence[int], fixed: Mapping[int, int] | None = None) -> int:
        """The diagram of a tree whose path ``k`` (a :class:`~kcxai.models.TreePath`) ends at a leaf of value
        ``values[k]``, restricted to the points with ``x_f = fixed[f]`` (no node tests those features). Sets of
        still-consistent paths (bitsets) are split level by level."""
        if fixed:
            keep = [k for k, path in enumerate(paths)
                    if all(mask >> fixed[f] & 1 for f, mask in path.masks if f in fixed)]
            paths, values = [paths[k] for k in keep], [values[k] for k in keep]
        allow = self._allowed(paths, fixed or {})
        levels = sorted(allow)
        groups: dict[int, int] = {}
        for k, v in enumerate(values):
            groups[v] = groups.get(v, 0) | 1 << k
        by_value = list(groups.items())
        memo: dict[tuple[int, int], int] = {}

        def build(j: int, live: int) -> int:
            for v, members in by_value:
                if live & ~members == 0:
                    return self.leaf(v)
            key = (j, live)
            got = memo.get(key)
            if got is not None:
                return got
            while True:
                rows = allow[levels[j]]
                cols = [live & r for r in rows]
                if any(c != live for c in cols):
                    break
                j += 1
            by: dict[int, int] = {}
            seen: dict[int, int] = {}
            for value, c in enumerate(cols):
                child = seen.get(c)
                if child is None:
                    child = seen[c] = build(j + 1, c)
                by[child] = by.get(child, 0) | 1 << value
            got = memo[key] = self.make(levels[j], by)
            self._count(SOURCE_WORK * len(cols))
            if self.guard is not None:
                self.guard.tick()
            return got

        with recursion(len(levels) + 10):
            root = build(0, (1 << len(paths)) - 1)
        if self.trees is not None:
            self.trees = (self.trees[0] + 1, self.trees[1])
        return root

    def _allowed(self, paths: Sequence[Any], fixed: Mapping[int, int]) -> dict[int, list[int]]:
        """Per level whose feature (not ``fixed``) some path restricts: per value, the bitset of the paths that
        allow it.

        One boolean matrix (paths x values) per level, packed into the bitsets column by column: the work is
        linear in the paths' masks (an unbounded tree of a default forest has thousands of paths over
        features of hundreds of values), and the guard's clock is read once per path."""
        n = len(paths)
        tables: dict[int, np.ndarray] = {}
        for k, path in enumerate(paths):
            for f, mask in path.masks:
                if f in fixed:
                    continue
                lv = self.level_of[f]
                table = tables.get(lv)
                if table is None:
                    table = tables[lv] = np.ones((n, self.sizes[lv]), dtype=bool)
                table[k] &= _bits(mask, self.sizes[lv])
                self._count(MASK_WORK)
            if self.guard is not None:
                self.guard.step()
        out: dict[int, list[int]] = {}
        for lv, table in tables.items():
            packed = np.packbits(table, axis=0, bitorder="little")  # (ceil(n / 8), values)
            out[lv] = [int.from_bytes(packed[:, v].tobytes(), "little") for v in range(table.shape[1])]
        return out

    def _count(self, work: int) -> None:
        """Count ``work``; stop (:class:`~kcxai.compilers._ensemble.stopped.Stopped`) at :attr:`work_cap`, or
        when :attr:`trees` is set and the work so far, per tree begun, times the trees to build reaches
        :data:`PREDICT_FACTOR` times :attr:`work_cap` (the rest predicted not to fit; a tree begun counts as
        whole, so a prediction never comes before the pace is clear): the default RandomForest behind adult's
        one-hot pipeline, whose first tree alone needs more than a 60 s budget, stops after 2% of it. The
        prediction can be wrong: an ensemble whose first trees are much larger than the rest can be stopped
        although it would fit (it is then answered by the bounded form; the stop is counted, so the same on
        every machine)."""
        self.work += work
        cap = self.work_cap
        if cap is None:
            return
        if self.work >= cap:
            raise Stopped(-1, 0, f"building the trees' diagrams took the whole work budget ({cap:,} units)",
                          work=self.work)
        if self.trees is not None and self.work * self.trees[1] >= PREDICT_FACTOR * cap * (self.trees[0] + 1):
            begun, total = self.trees[0] + 1, self.trees[1]
            raise Stopped(-1, 0, f"building the trees' diagrams was predicted to take more than the work budget "
                                 f"({cap:,} units): {self.work:,} units for {begun} of {total} trees",
                          work=self.work)

    def seal(self, roots: Sequence[int]) -> list[int]:
        """Number the nodes by level (terminals last); returns ``roots`` renumbered."""
        n = len(self.level)
        perm = sorted(range(n), key=lambda u: (self.level[u], u))
        new = [0] * n
        for j, u in enumerate(perm):
            new[u] = j
        self.level = [self.level[u] for u in perm]
        self.part = [tuple((m, new[c]) for m, c in self.part[u]) for u in perm]
        self.lo = [self.lo[u] for u in perm]
        self.hi = [self.hi[u] for u in perm]
        self.start = [bisect_left(self.level, lv) for lv in range(self.n_levels + 2)]
        self._unique.clear()
        self.vchild = [self._children(u) for u in range(n)]
        self.work += SOURCE_WORK * sum(self.sizes[lv] for lv in self.level if lv < self.n_levels)
        return [new[r] for r in roots]

    def _children(self, u: int) -> tuple[int, ...]:
        """Node ``u``'s child for each value of its level's feature (``()`` for a leaf)."""
        lv = self.level[u]
        if lv == self.n_levels:
            return ()
        out = [0] * self.sizes[lv]
        for m, c in self.part[u]:
            for k in range(len(out)):
                if m >> k & 1:
                    out[k] = c
        return tuple(out)

    def descend(self, roots: Sequence[int], values: Sequence[int | None]) -> tuple[list[int], int]:
        """After :meth:`seal`: each root followed down through the levels whose value is given
        (``values[level]``, ``None`` for a free level): the residuals left (not leaves) and the sum of the
        leaves reached."""
        left: list[int] = []
        reached = 0
        n = self.n_levels
        for r in roots:
            while self.level[r] < n and values[self.level[r]] is not None:
                r = self.vchild[r][values[self.level[r]]]  # type: ignore[index]
            if self.level[r] == n:
                reached += self.lo[r]
            else:
                left.append(r)
        return left, reached


#: The last few :func:`scaled_differences`, by the identity of the scores (kept with them, so that the identity
#: stays theirs) and the pair: a conditioned compile asks for them on every query, and on the default
#: RandomForest behind adult's pipeline (356,052 leaves with rational scores) they take 8 s.
_SCALED: "OrderedDict[tuple[int, int, int], tuple[Any, Any, tuple[list[list[int]], int]]]" = OrderedDict()
_SCALED_KEEP = 4
_SCALED_LOCK = threading.Lock()


def scaled_differences(spec: AdditiveTrees, c: int, d: int) -> tuple[list[list[int]], int]:
    """Per tree, per leaf, ``score_c - score_d`` and the base difference, scaled to integers by one factor
    (computed once for the same scores and base, and shared: read only)."""
    key = (id(spec.scores), c, d)
    with _SCALED_LOCK:
        got = _SCALED.get(key)
        if got is not None and got[0] is spec.scores and got[1] == spec.base:
            _SCALED.move_to_end(key)
            return got[2]
    out = _scaled_differences(spec, c, d)
    with _SCALED_LOCK:
        _SCALED[key] = (spec.scores, spec.base, out)
        while len(_SCALED) > _SCALED_KEEP:
            _SCALED.popitem(last=False)
    return out


def _scaled_differences(spec: AdditiveTrees, c: int, d: int) -> tuple[list[list[int]], int]:
    diffs = [[row[c] - row[d] for row in tree] for tree in spec.scores]
    base = spec.base[c] - spec.base[d]
    scale = 1
    for x in {base, *(x for row in diffs for x in row)}:
        q = Fraction(x).denominator
        scale = scale * q // math.gcd(scale, q)
    return [[int(x * scale) for x in row] for row in diffs], int(base * scale)



def source_work_floor(spec: AdditiveTrees, pairs: Sequence[tuple[int, int]]) -> int:
    """A lower bound on the work of the trees' diagrams of the tests ``pairs`` (unconditioned): the
    :data:`MASK_WORK` units that :meth:`Sources.add_tree` counts for every test of every path of every tree that
    is not constant in the pair, before it builds a node (the nodes' :data:`SOURCE_WORK` comes on top).

    Counted from the paths alone (no table built), so that a budget these diagrams cannot fit is known
    before any of it is spent: the default RandomForest behind adult's one-hot pipeline needs more than
    a 30 s budget for its paths' tests alone.

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.models import RandomForest
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "ab"])
    >>> Leaf, Split = kcxai.Leaf, kcxai.Split
    >>> t = kcxai.DecisionTree(space, [0, 1], Split("a", {0: Leaf(0), 1: Split("b", {0: Leaf(0), 1: Leaf(1)})}))
    >>> source_work_floor(RandomForest(space, [0, 1], [t]).additive_trees(), [(0, 1)]) == MASK_WORK * (1 + 2 + 2)
    True
    """
    tests = [sum(len(path.masks) for path in tree.paths) for tree in spec.trees]
    floor = 0
    for c, d in pairs:
        for tree, n_tests in zip(spec.scores, tests):
            first = tree[0][c] - tree[0][d]
            if any(row[c] - row[d] != first for row in tree):
                floor += MASK_WORK * n_tests
    return floor
