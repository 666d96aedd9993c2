"""Additive tree ensembles compiled feature by feature into a reduced ordered multi-valued diagram.

A random forest or a boosted model that describes itself as an
:class:`~kcxai.functions.AdditiveTrees` (class scores are sums of leaf scores)
is compiled here without the :class:`~kcxai.functions.FunctionBuilder`: the
diagram is built top-down, one feature at a time, in one feature order, and
every query then counts on it (:class:`~kcxai.compilers._tables.level.LevelTable`,
the reduced ordered multi-valued diagram both diagram languages count on).

Construction
------------
Each comparison of two class scores, ``score_c(x) - score_d(x) >= 0`` (``> 0``
when ``d`` wins ties), is a threshold test on a sum of trees. With every leaf
difference scaled to an integer, it reads ``s0 + sum_t v_t(x) >= 0``.

1. Every tree becomes a reduced ordered multi-valued diagram in the order,
   whose terminals are its integer leaf values (equal values share a
   terminal); all trees share one table, so each tree's *residual* (what is
   left of it once the features above a level are fixed) is a canonical node.
2. A *state* at a level is the sorted tuple ``R`` of the residuals still
   undecided and the partial sum ``s`` of the decided trees. Branching on the
   level's feature moves the residuals testing it to their children (values
   with equal children branch together) and adds the trees that reach a leaf
   to ``s``.
3. Pruning by the interval of reachable remaining scores: the remaining trees
   add between ``lo(R)`` and ``hi(R)`` (sums of the residuals' least and
   greatest leaves), so a state with ``s + lo(R) >= 0`` is TRUE and one with
   ``s + hi(R) < 0`` is FALSE.
4. Interval caching (Chan and Darwiche's construction for threshold tests):
   the function of ``(R, s)`` is monotone in ``s``, so the partial sums giving
   one node form an interval, the intersection of the children's intervals
   shifted back by what each branch added. Each ``R`` keeps its disjoint
   intervals, so two partial sums no completion can tell apart share a node,
   and equal residual tuples (whatever leaves led there) share their cache.
5. Nodes are made through a unique table (equal children: the same node; a
   node whose branches all agree is its child), so the result is the reduced
   diagram of the test in this order.

Two classes need one test (the other class is its complement, a negated
root). ``K > 2`` classes need one test per pair; class ``c`` is the
conjunction of its tests (``apply`` on the same table), so that ties go to
the class first in the ensemble's ``priority``.

Order
-----
``ensemble_order`` ranks features by where the trees test them: each test
weighs ``2**-depth`` (a root test weighs 1), summed over all trees, heaviest
first. Features tested near the roots of many trees decide the most trees
early and let the interval pruning stop whole subtrees. Measured on adult
(<= 10 quantile bins, 14 features): see ``benchmarks/bench_ensemble_compile.py``.

Limits
------
One :class:`~kcxai.compilers._limits.Guard` ticks at every tree node, every
state expanded and every ``apply`` step; its node count is the diagram's nodes
plus the trees' own. The cached states are no nodes: their memory is what
``max_memory`` bounds (about 400 bytes each; a 100-tree boosted model held
700,000 of them).

References
----------
Chan, H. and Darwiche, A. (2003). Reasoning about Bayesian network classifiers. UAI 2003 (the symbolic
compilation of a threshold test on a sum, with the partial sums' intervals).
Shih, A., Choi, A. and Darwiche, A. (2018). A symbolic approach to explaining Bayesian network classifiers.
IJCAI 2018 (that compiler used to explain classifiers).
Srinivasan, A., Kam, T., Malik, S. and Brayton, R. (1990). Algorithms for discrete function manipulation.
ICCAD 1990 (multi-valued decision diagrams, their reduction and ``apply``).
Gossen, F. and Steffen, B. (2019). Large random forests: optimisation for rapid evaluation.
arXiv:1912.10934 (random forests aggregated into one decision diagram).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from kcxai.compilers._encoding import Encoding
from kcxai.compilers._tables.level import LevelTable
from kcxai.compilers._limits import Guard, LimitHit
from kcxai.compilers._orders import feature_order
from kcxai.compilers._tables.base import FALSE, TRUE, recursion
from kcxai.functions import AdditiveTrees
from kcxai.space import FeatureSpace

__all__ = ["ensemble_order", "EnsembleDiagram", "compile_additive", "is_additive", "obdd_nodes", "BuiltEnsemble",
           "build_ensemble"]

_INF = math.inf

#: A state's residual trees: node numbers of the shared source table, sorted (hence by level).
Residuals = tuple[int, ...]


def is_additive(model: Any) -> bool:
    """Whether ``model`` describes itself as an :class:`~kcxai.functions.AdditiveTrees` (``additive_trees()``)."""
    return callable(getattr(model, "additive_trees", None))


def ensemble_order(spec: AdditiveTrees) -> tuple[int, ...]:
    """Features by decreasing weight of their tests: a test at depth ``k`` of any tree weighs ``2**-k``.

    Features no tree tests come last, in index order.

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.models import RandomForest
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "abc"])
    >>> Leaf, Split = kcxai.Leaf, kcxai.Split
    >>> t = kcxai.DecisionTree(space, [0, 1], Split("c", {0: Leaf(0), 1: Split("b", {0: Leaf(0), 1: Leaf(1)})}))
    >>> ensemble_order(RandomForest(space, [0, 1], [t, t]).additive_trees())
    (2, 1, 0)
    """
    n = spec.space.n_features
    weight = [0.0] * n
    for tree in spec.trees:
        a = tree.arrays
        stack = [(a.root, 1.0)]
        while stack:
            nid, w = stack.pop()
            f = a.feature[nid]
            if f >= 0:
                weight[f] += w
                stack.extend((child, w / 2) for _, child in a.branches[nid])
    return tuple(sorted(range(n), key=lambda f: (-weight[f], f)))


class EnsembleDiagram:
    """A reduced ordered multi-valued diagram under construction: nodes ``(level, edges)``, shared.

    Node 0 is FALSE and node 1 TRUE (at level ``n_levels``); every other node tests the feature
    ``order[level]`` and has edges ``((mask, child), ...)`` whose masks partition the feature's values,
    sorted by mask.

    Parameters
    ----------
    space : FeatureSpace
    order : sequence of int
        Every feature once, by level.
    """

    def __init__(self, space: FeatureSpace, order: Sequence[int]) -> None:
        self.space = space
        self.order = tuple(order)
        self.n_levels = len(self.order)
        self.sizes = [space.features[f].size for f in self.order]
        self.level = [self.n_levels, self.n_levels]
        self.edges: list[tuple[tuple[int, int], ...]] = [(), ()]
        #: nodes made per level (reported when a limit stops the construction)
        self.per_level = [0] * self.n_levels
        self._unique: dict[tuple[int, tuple[tuple[int, int], ...]], int] = {}
        self._neg: dict[int, int] = {FALSE: TRUE, TRUE: FALSE}
        self._and: dict[tuple[int, int], int] = {}

    def __len__(self) -> int:
        return len(self.level)

    def seal(self) -> None:
        """Drop the tables that only building needs (the unique table, the memos of ``negate`` and ``conj``)."""
        self._unique.clear()
        self._and.clear()

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
        """``u and v``."""
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

    def features(self) -> list[int]:
        """Per node, its feature (``-1`` for the terminals), as :class:`~kcxai.compilers._tables.level.LevelTable`
        takes them."""
        order, n = self.order, self.n_levels
        return [order[lv] if lv < n else -1 for lv in self.level]

    def reachable(self, roots: Sequence[int]) -> int:
        """Internal nodes reachable from ``roots``."""
        seen: set[int] = set()
        stack = [r for r in roots if r > TRUE]
        while stack:
            u = stack.pop()
            if u in seen:
                continue
            seen.add(u)
            stack.extend(c for _, c in self.edges[u] if c > TRUE and c not in seen)
        return len(seen)

    def compact(self, roots: Sequence[int]) -> tuple[list[int], list[tuple[tuple[int, int], ...]], list[int]]:
        """``(feature, edges, roots)`` of the nodes reachable from ``roots`` only, renumbered children first
        (the diagram's own lists when every node is reachable)."""
        if self.reachable(roots) == len(self.level) - 2:
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
        out: list[int] = []
        seen: set[int] = set()
        for r in roots:
            if r <= TRUE or r in seen:
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
                stack.extend((c, False) for _, c in self.edges[u] if c > TRUE and c not in seen)
        return out


def _bits(mask: int, size: int) -> np.ndarray:
    """The ``size`` low bits of ``mask`` as booleans, value 0 first."""
    raw = np.frombuffer((mask & ((1 << size) - 1)).to_bytes((size + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[:size].astype(bool)


class _Sources:
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
        return got

    def add_tree(self, paths: Sequence[Any], values: Sequence[int]) -> int:
        """The diagram of a tree whose path ``k`` (a :class:`~kcxai.models.TreePath`) ends at a leaf of value
        ``values[k]``. Sets of still-consistent paths (bitsets) are split level by level."""
        allow = self._allowed(paths)
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
            if self.guard is not None:
                self.guard.tick()
            return got

        with recursion(len(levels) + 10):
            return build(0, (1 << len(paths)) - 1)

    def _allowed(self, paths: Sequence[Any]) -> dict[int, list[int]]:
        """Per level whose feature some path restricts: per value, the bitset of the paths that allow it.

        One boolean matrix (paths x values) per level, packed into the bitsets column by column: the work is
        linear in the paths' masks (an unbounded tree of a default forest has thousands of paths over
        features of hundreds of values), and the guard's clock is read once per path."""
        n = len(paths)
        tables: dict[int, np.ndarray] = {}
        for k, path in enumerate(paths):
            for f, mask in path.masks:
                lv = self.level_of[f]
                table = tables.get(lv)
                if table is None:
                    table = tables[lv] = np.ones((n, self.sizes[lv]), dtype=bool)
                table[k] &= _bits(mask, self.sizes[lv])
            if self.guard is not None:
                self.guard.step()
        out: dict[int, list[int]] = {}
        for lv, table in tables.items():
            packed = np.packbits(table, axis=0, bitorder="little")  # (ceil(n / 8), values)
            out[lv] = [int.from_bytes(packed[:, v].tobytes(), "little") for v in range(table.shape[1])]
        return out

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
        return [new[r] for r in roots]


class _Entry:
    """One residual tuple ``R``: the least and greatest sum of its trees, its branches (computed on the first
    state that needs them), and the intervals of partial sums already built with the node each gave.

    Flat tuples and lists, for memory (a large compilation holds a million of these): ``branches`` is
    ``(mask, ds, child, mask, ds, child, ...)``, per group of values with the same children the mask, what
    the trees reaching a leaf add to the partial sum, and the child's entry (``None``: no tree left);
    ``iv`` is ``[lo, hi, node, lo, hi, node, ...]`` sorted by ``lo`` (disjoint; most tuples hold one
    interval or none, a few dozen at most were seen, so it is scanned).
    """

    __slots__ = ("rs", "lo", "hi", "level", "branches", "iv")

    def __init__(self, rs: Residuals, lo: int, hi: int) -> None:
        self.rs = rs
        self.lo = lo
        self.hi = hi
        self.level = -1
        self.branches: tuple[Any, ...] | None = None
        self.iv: list[Any] | None = None


class _Threshold:
    """The diagram of ``s0 + sum_t v_t(x) >= 0`` over the trees of a sealed :class:`_Sources`."""

    def __init__(self, src: _Sources, out: EnsembleDiagram, guard: Guard | None,
                 expanded: list[int] | None = None) -> None:
        self.src = src
        self.out = out
        self.guard = guard
        #: states expanded per level (a list the caller may share)
        self.expanded = [0] * src.n_levels if expanded is None else expanded
        self.entries: dict[Residuals, _Entry] = {}
        self._ticks = 0
        self._tops: dict[Residuals, list[tuple[int, int, Residuals, int, int]]] = {}
        #: per source node, its child for each value of its level's feature
        self.vchild = [self._children(u) for u in range(len(src.level))]

    def _children(self, u: int) -> tuple[int, ...]:
        src = self.src
        lv = src.level[u]
        if lv == src.n_levels:
            return ()
        out = [0] * src.sizes[lv]
        for m, c in src.part[u]:
            for k in range(len(out)):
                if m >> k & 1:
                    out[k] = c
        return tuple(out)

    def run(self, roots: Sequence[int], s0: int) -> int:
        rs = tuple(sorted(roots))
        if not rs:
            return TRUE if s0 >= 0 else FALSE
        lo, hi = self.src.lo, self.src.hi
        e = self.entries[rs] = _Entry(rs, sum(lo[r] for r in rs), sum(hi[r] for r in rs))
        with recursion(self.src.n_levels + 10):
            return self._node(e, s0)[0]

    def _expand(self, e: _Entry) -> tuple[Any, ...]:
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
                child = entries[key] = _Entry(key, lo_rest + lo_add, hi_rest + hi_add)
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
        for v, col in enumerate(zip(*[vchild[r] for r in top])):
            masks[col] = masks.get(col, 0) | 1 << v
        out: list[tuple[int, int, Residuals, int, int]] = [(0, 0, (), sum(lo[r] for r in top), sum(hi[r] for r in top))]
        for col, mask in masks.items():
            moved = tuple(c for c in col if c < terminal)
            ds = sum(lo[c] for c in col if c >= terminal)
            out.append((mask, ds, moved, sum(lo[c] for c in moved), sum(hi[c] for c in moved)))
        return out

    def _node(self, e: _Entry, s: int) -> tuple[int, float, float]:
        """The node of state ``(e.rs, s)`` and the interval ``[a, b)`` of partial sums giving the same node."""
        if s + e.lo >= 0:
            return TRUE, -e.lo, _INF
        if s + e.hi < 0:
            return FALSE, -_INF, -e.hi
        iv = e.iv
        j = 0  # past the intervals starting at or below s
        if iv is not None:
            n = len(iv)
            while j < n and iv[j] <= s:
                j += 3
            if j and s < iv[j - 2]:
                return iv[j - 1], iv[j - 3], iv[j - 2]
        branches = e.branches
        if branches is None:
            branches = self._expand(e)
        self.expanded[e.level] += 1
        self._ticks += 1
        if not self._ticks & 31 and self.guard is not None:  # the guard's clock, every 32 states (~0.5 ms)
            self.guard.calls += 31
            self.guard.tick()
        a: float = -_INF
        b: float = _INF
        by: dict[int, int] = {}
        it = iter(branches)
        for mask, ds, child_e in zip(it, it, it):
            t = s + ds
            if child_e is None:
                child, ca, cb = (TRUE, 0, _INF) if t >= 0 else (FALSE, -_INF, 0)
            elif t + child_e.lo >= 0:  # pruned here rather than in the call: most children are
                child, ca, cb = TRUE, -child_e.lo, _INF
            elif t + child_e.hi < 0:
                child, ca, cb = FALSE, -_INF, -child_e.hi
            else:
                child, ca, cb = self._node(child_e, t)
            if ca - ds > a:
                a = ca - ds
            if cb - ds < b:
                b = cb - ds
            by[child] = by.get(child, 0) | mask
        node = self.out.make(e.level, by)
        # the children only touched other entries: ``j`` still locates s; clip to keep the intervals disjoint
        if iv is None:
            e.iv = [a, b, node]
        else:
            lo_j = iv[j - 2] if j and iv[j - 2] > a else a
            hi_j = iv[j] if j < len(iv) and iv[j] < b else b
            iv[j:j] = (lo_j, hi_j, node)
        return node, a, b


def _scaled(spec: AdditiveTrees, c: int, d: int) -> tuple[list[list[int]], int]:
    """Per tree, per leaf, ``score_c - score_d`` and the base difference, scaled to integers by one factor."""
    diffs = [[row[c] - row[d] for row in tree] for tree in spec.scores]
    base = spec.base[c] - spec.base[d]
    scale = 1
    for x in {base, *(x for row in diffs for x in row)}:
        q = Fraction(x).denominator
        scale = scale * q // math.gcd(scale, q)
    return [[int(x * scale) for x in row] for row in diffs], int(base * scale)


def _test(spec: AdditiveTrees, c: int, d: int, out: EnsembleDiagram, level_of: Sequence[int],
          guard: Guard | None, stats: dict[str, Any]) -> int:
    """The node of ``score_c >= score_d`` (its complement is ``score_d > score_c``)."""
    diffs, s0 = _scaled(spec, c, d)
    src = _Sources(out.sizes, level_of, guard)
    roots = []
    for tree, values in zip(spec.trees, diffs):
        if len(set(values)) == 1:
            s0 += values[0]
            continue
        r = src.add_tree(tree.paths, values)
        if src.level[r] == src.n_levels:
            s0 += src.lo[r]
        else:
            roots.append(r)
    roots = src.seal(roots)
    stats["source_nodes"] = stats.get("source_nodes", 0) + len(src.level)
    th = _Threshold(src, out, guard, stats.setdefault("states_by_level", [0] * src.n_levels))
    if guard is not None:
        guard.set_size(lambda: len(out) + len(src.level))
    node = th.run(roots, s0)
    stats["states"] = sum(stats["states_by_level"])
    if guard is not None:
        guard.set_size(lambda: len(out))
    return node


def compile_additive(spec: AdditiveTrees, order: Sequence[int], guard: Guard | None = None,
                     stats: dict[str, Any] | None = None) -> tuple[EnsembleDiagram, list[int], list[bool]]:
    """The diagram of every class of ``spec`` in ``order``: ``(diagram, roots, negated)``.

    Class ``c``'s function is node ``roots[c]``, complemented when ``negated[c]`` (two classes share one
    test). ``stats`` (if given) receives ``states`` (states expanded: a residual tuple with a partial sum
    that no cached interval covered), ``source_nodes`` (nodes of the trees' diagrams), and, per level,
    ``states_by_level`` and ``nodes_by_level`` (lists updated as the construction goes, so that they tell
    how far it got when a limit stops it).

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.models import RandomForest
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "abc"])
    >>> Leaf, Split = kcxai.Leaf, kcxai.Split
    >>> trees = [kcxai.DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in "abc"]
    >>> spec = RandomForest(space, [0, 1], trees).additive_trees()       # majority of three votes
    >>> diagram, roots, negated = compile_additive(spec, (0, 1, 2))
    >>> diagram.reachable(roots), negated     # class 0 is the complement of class 1's test
    (4, [False, True])
    """
    out = EnsembleDiagram(spec.space, order)
    if stats is not None:
        stats["nodes_by_level"] = out.per_level  # live: read it after a limit stops the construction
    level_of = [0] * spec.space.n_features
    for lv, f in enumerate(order):
        level_of[f] = lv
    stats = {} if stats is None else stats
    k = spec.n_classes
    if k == 1:
        return out, [TRUE], [False]
    first, second = spec.priority[0], spec.priority[1]
    if k == 2:
        t = _test(spec, first, second, out, level_of, guard, stats)
        roots = [0, 0]
        roots[first] = roots[second] = t
        negated = [False, False]
        negated[second] = True
        return out, roots, negated
    tests: dict[tuple[int, int], int] = {}
    rank = {c: j for j, c in enumerate(spec.priority)}
    for c in range(k):
        for d in range(k):
            if rank[c] < rank[d]:
                tests[c, d] = _test(spec, c, d, out, level_of, guard, stats)
    roots = []
    for c in range(k):
        f = TRUE
        for d in range(k):
            if d != c:
                g = tests[c, d] if rank[c] < rank[d] else out.negate(tests[d, c])
                f = out.conj(f, g, guard)
        roots.append(f)
    return out, roots, [False] * k


class BuiltEnsemble:
    """What :func:`build_ensemble` produced: the diagram, its class roots, the order and the cost.

    Attributes
    ----------
    order : tuple of int
    diagram : EnsembleDiagram
    roots : list of int
    negated : list of bool
    seconds : float
        Seconds until the diagram was built (order included).
    states : int
        Residual tuples expanded (the construction's work, see the module docstring).
    source_nodes : int
        Nodes of the trees' own diagrams.
    """

    def __init__(self, order: tuple[int, ...], diagram: EnsembleDiagram, roots: list[int], negated: list[bool],
                 seconds: float, counts: dict[str, Any]) -> None:
        self.order, self.diagram, self.roots, self.negated = order, diagram, roots, negated
        self.seconds = seconds
        self.states = counts.get("states", 0)
        self.source_nodes = counts.get("source_nodes", 0)

    def table(self, space: FeatureSpace) -> LevelTable:
        """The counting table of the class functions (negated roots materialised in float spaces, whose
        counts must not subtract)."""
        roots, negated = list(self.roots), list(self.negated)
        if not space.is_exact:
            roots = [self.diagram.negate(r) if neg else r for r, neg in zip(roots, negated)]
            negated = [False] * len(roots)
        feature, edges, new_roots = self.diagram.compact(roots)
        return LevelTable(space, self.order, feature, edges, new_roots, negated)


def _with_progress(e: LimitHit, order: Sequence[int], counts: dict[str, Any]) -> LimitHit:
    """``e`` with what the construction had reached: per level (in ``order``), the states expanded and the
    diagram's nodes."""
    e.progress = {"order": tuple(order), "states_by_level": list(counts.get("states_by_level", [])),
                  "nodes_by_level": list(counts.get("nodes_by_level", []))}
    return e


def build_ensemble(model: Any, opts: Any, guard: Guard) -> BuiltEnsemble:
    """The ``"ensemble"`` construction of ``model`` (with ``additive_trees()``) under ``opts``'s ``order``
    (``"auto"``: :func:`ensemble_order`) and ``guard``'s limits."""
    spec = model.additive_trees()
    if opts.order == "auto":
        order = ensemble_order(spec)
    else:
        order = feature_order(model, opts.order, guard)
    guard.phase = "building the ensemble's diagram feature by feature"
    counts: dict[str, Any] = {}
    try:
        diagram, roots, negated = compile_additive(spec, order, guard, counts)
    except MemoryError:
        raise _with_progress(guard.out_of_memory("Python failed to allocate"), order, counts) from None
    except LimitHit as e:
        raise _with_progress(e, order, counts) from None
    guard.set_size(None)
    diagram.seal()
    guard.check(diagram.reachable(roots))
    return BuiltEnsemble(tuple(order), diagram, roots, negated, guard.seconds, counts)


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
