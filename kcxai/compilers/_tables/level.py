"""The OBDD node table: a reduced ordered multi-valued diagram read feature by feature.

See :mod:`kcxai.compilers._tables.wmc`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kcxai.arithmetic import Weight
from kcxai.compilers._tables.level_arrays import VECTOR_MIN_NODES, LevelArrays, LevelStructure, fits_int64
from kcxai.compilers._tables.base import TRUE, Table
from kcxai.space import FeatureSpace

__all__ = ["LevelTable"]


#: With at most this many free features, a query reaches few nodes: the recursive evaluation, which visits
#: only those, beats numpy's whole levels even on a large diagram (the two share the session's memo: the
#: numpy evaluation stores a level's array under ``"v"``, the recursive one its nodes' values).
RECURSIVE_MAX_FREE = 3


class LevelTable(Table):
    """An OBDD read feature by feature: a reduced ordered multi-valued diagram.

    Parameters
    ----------
    space : FeatureSpace
    order : sequence of int
        The features by level (features with a single value may be left out).
    feature : list of int
        Per node, its feature (``-1`` for the terminals 0 = FALSE and 1 = TRUE).
    edges : list of tuple
        Per node, ``((mask, child), ...)``; the masks partition the feature's values.
    roots : list of int
        Per class, the node of ``kappa(x) = c``.
    negated : list of bool, optional
        Per class, whether its function is the *complement* of its root's (two classes sharing one
        diagram). Exact spaces only: the complement's weight is the total minus the root's, which
        floats would round.
    """

    def __init__(self, space: FeatureSpace, order: Sequence[int], feature: list[int],
                 edges: list[tuple[tuple[int, int], ...]], roots: list[int],
                 negated: Sequence[bool] | None = None) -> None:
        self.space = space
        self.order = tuple(order)
        n_levels = len(self.order)
        level_of = [n_levels] * space.n_features
        for position, f in enumerate(self.order):
            level_of[f] = position
        self.level_of = level_of
        self.feature = feature
        self.edges = edges
        self.roots = list(roots)
        self.negated = [False] * len(self.roots) if negated is None else [bool(x) for x in negated]
        self.pw = space.distribution.components[0][1]
        if any(self.negated) and not self.pw.arith.exact:
            raise ValueError("internal error: negated roots need exact weights")
        lev = [n_levels] * len(feature)
        vchild: list[tuple[int, ...]] = [()] * len(feature)
        for n, f in enumerate(feature):
            if f < 0:
                continue
            lev[n] = level_of[f]
            size = space.features[f].size
            vc = [0] * size
            for mask, child in edges[n]:
                for k in range(size):
                    if mask >> k & 1:
                        vc[k] = child
            vchild[n] = tuple(vc)
        self.lev = lev
        self.vchild = vchild
        self.sizes = [space.features[f].size for f in self.order]
        self._structure: list[LevelStructure] = []  # built on first use, shared by the reweighted copies
        self._weigh()
        self.n_levels = n_levels
        self.n_units = n_levels + 1
        # freeing feature f changes the values of the nodes at levels <= level_of[f]
        self.units_of = [tuple(range(level_of[f] + 1)) if level_of[f] < n_levels else ()
                         for f in range(space.n_features)]
        self.depth = n_levels + 2

    def _weigh(self) -> None:
        # per node, its edges (w(E), child, the child's level for the skip factors)
        mask_weight, lev, edges = self.pw.mask_weight, self.lev, self.edges
        wedges: list[tuple[tuple[Weight, int, int], ...]] = [()] * len(self.feature)
        for n, f in enumerate(self.feature):
            if f >= 0:
                wedges[n] = tuple((mask_weight(f, mask), child, lev[child]) for mask, child in edges[n])
        self.wedges = wedges
        self._arrays: list[LevelArrays | None] = []

    def _vectorised(self) -> LevelArrays | None:
        """The numpy evaluation of this table (:mod:`kcxai.compilers._tables.level_arrays`), for large diagrams whose
        counts fit its arithmetic; ``None`` otherwise."""
        if not self._arrays:
            arrays = None
            if self.n_nodes >= VECTOR_MIN_NODES and fits_int64(self.pw.total, self.pw.arith.exact):
                if not self._structure:
                    self._structure.append(LevelStructure(self.sizes, self.lev, self.edges, self.vchild))
                arrays = LevelArrays(self._structure[0], self.order, self.pw.mask_weight, self.pw.arith.exact)
            self._arrays.append(arrays)
        return self._arrays[0]

    @property
    def n_nodes(self) -> int:
        """Internal nodes (terminals not counted)."""
        return sum(1 for f in self.feature if f >= 0)

    @property
    def n_edges(self) -> int:
        return sum(len(e) for e in self.edges)

    def holds(self, label: int, point: Sequence[int]) -> bool:
        n = self.roots[label]
        feature, vchild = self.feature, self.vchild
        while n > 1:
            n = vchild[n][point[feature[n]]]
        return (n == TRUE) != self.negated[label]

    def evaluate(self, labels: Sequence[int], point: Sequence[int], fixed: Any, fac: list[Weight],
                 memo: list[dict[int, Weight]], tmp: list[dict[int, Weight]] | None,
                 affected: Sequence[bool] | None) -> Weight:
        lev, feature, vchild, wedges, order = self.lev, self.feature, self.vchild, self.wedges, self.order
        arith = self.pw.arith
        one = arith.one
        lfac = [fac[f] for f in order]
        arrays = self._vectorised()
        if arrays is not None and len(fac) - len(fixed) > RECURSIVE_MAX_FREE:
            roots = [self.roots[c] for c in labels]
            return arrays.evaluate(roots, [self.negated[c] for c in labels], [lev[r] for r in roots], point,
                                   [f in fixed for f in range(len(fac))], lfac, memo, tmp, affected)
        skips: dict[int, Weight] = {}
        width = self.n_levels + 1
        isfixed = [f in fixed for f in range(len(fac))]

        def skip(a: int, b: int) -> Weight:
            # product of the factors of the levels strictly between a and b
            key = a * width + b
            r = skips.get(key)
            if r is None:
                r = one
                for j in range(a + 1, b):
                    r *= lfac[j]
                skips[key] = r
            return r

        def value(n: int) -> Weight:
            if n <= 1:
                return n
            ln = lev[n]
            store = tmp[ln] if affected is not None and affected[ln] else memo[ln]  # type: ignore[index]
            r = store.get(n)
            if r is not None:
                return r
            f = feature[n]
            if isfixed[f]:
                c = vchild[n][point[f]]
                r = value(c)
                if r:
                    r = r * fac[f]
                    lc = lev[c]
                    if lc > ln + 1:
                        r = r * skip(ln, lc)
            else:
                r = 0
                for w, c, lc in wedges[n]:
                    x = value(c)
                    if x:
                        if lc > ln + 1:
                            x = x * skip(ln, lc)
                        r += w * x
            store[n] = r
            return r

        total = arith.zero
        for label in labels:
            root = self.roots[label]
            r = value(root)
            if r:
                lr = lev[root]
                if lr > 0:
                    r = r * skip(-1, lr)
            if self.negated[label]:  # the complement: every point's weight minus the root's
                r = skip(-1, self.n_levels) - r
            total += r
        return total
