"""The OBDD node table (a reduced ordered multi-valued diagram read feature by feature) and its counter.

See :mod:`kcxai.compilers._tables.wmc`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kcxai.compilers._tables.base import TRUE, Counter, Table, Terminals
from kcxai.compilers._tables.level_arrays import LevelStructure
from kcxai.compilers._tables.vectors import Array, Columns, Vec
from kcxai.space import FeatureSpace

__all__ = ["LevelTable", "LevelCounter"]


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

    Attributes
    ----------
    pair_levels : list of (int, int)
        The *skip pairs*: pairs of levels ``(a, b)`` some edge, value or root spans, whose factors
        (the levels strictly between, features not tested on that edge) multiply its value; pair 0
        spans nothing.
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
        if any(self.negated) and not space.is_exact:
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
        self.n_levels = n_levels
        self.n_units = n_levels
        # freeing feature f changes the values of the nodes at levels <= level_of[f]
        self.units_of = [tuple(range(level_of[f] + 1)) if level_of[f] < n_levels else ()
                         for f in range(space.n_features)]
        self.depth = n_levels + 2
        self.pair_levels: list[tuple[int, int]] = [(0, 0)]
        self._pair_of: dict[tuple[int, int], int] = {}
        #: per node, the skip pair of each edge and of each value's child
        self.edge_pairs = [tuple(self._pair(lev[n], lev[c]) for _, c in edges[n]) for n in range(len(feature))]
        self.value_pairs = [tuple(self._pair(lev[n], lev[c]) for c in vchild[n]) for n in range(len(feature))]
        #: per class, the pair of the levels above its root; the pair of every level
        self.root_pairs = [self._pair(-1, lev[r]) for r in self.roots]
        self.full_pair = self._pair(-1, n_levels)
        self._structure: list[LevelStructure] = []

    def _pair(self, a: int, b: int) -> int:
        """The skip pair of the levels strictly between ``a`` and ``b`` (0: none)."""
        if b <= a + 1:
            return 0
        got = self._pair_of.get((a, b))
        if got is None:
            got = self._pair_of[(a, b)] = len(self.pair_levels)
            self.pair_levels.append((a, b))
        return got

    def structure(self) -> LevelStructure:
        """The numpy index arrays of the levels (built on first use, kept)."""
        if not self._structure:
            self._structure.append(LevelStructure(self.sizes, self.lev, self.edges, self.vchild, self.edge_pairs,
                                                  self.value_pairs))
        return self._structure[0]

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
        while feature[n] >= 0:
            n = vchild[n][point[feature[n]]]
        return (n == TRUE) != self.negated[label]

    def counter(self, columns: Columns) -> "LevelCounter":
        return LevelCounter(self, columns)


class LevelCounter(Counter):
    """A :class:`LevelTable` counting in ``K`` weight columns (see :mod:`kcxai.compilers._tables.base`).

    A node ``n`` at level ``l`` weighs, per column, ``V(n) = sum_e w(E_e) skip(l, l_e) V(child_e)`` if its
    feature is free and ``w(v_f) skip(l, l_c) V(c)`` (``c`` the child of ``v_f``) if it is fixed.
    """

    def __init__(self, table: LevelTable, columns: Columns) -> None:
        super().__init__(table, columns)
        self.t = table
        mw = columns.mask_weight
        feature, edges = table.feature, table.edges
        #: per node, its edges as (w(E) per column, child, skip pair)
        self.wedges: list[tuple[tuple[Vec, int, int], ...]] = [
            tuple((mw(f, m), c, p) for (m, c), p in zip(edges[n], table.edge_pairs[n])) if f >= 0 else ()
            for n, f in enumerate(feature)]
        self.order_units = list(range(table.n_levels - 1, -1, -1))
        self._edge_w: list[Array] = []

    def walk(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], fac: Sequence[Vec],
             stores: list[dict[int, Vec | None]], terminals: Terminals) -> Vec | None:
        t = self.t
        lev, feature, vchild, value_pairs, wedges = t.lev, t.feature, t.vchild, t.value_pairs, self.wedges
        pair_levels = t.pair_levels
        lfac = [fac[f] for f in t.order]
        one = self.columns.one
        skips: list[Vec | None] = [None] * len(pair_levels)
        units = [*stores, dict(terminals)]  # the terminals sit at level n_levels

        def skip(p: int) -> Vec:  # the product of the factors of the levels strictly between pair p's
            r = skips[p]
            if r is None:
                a, b = pair_levels[p]
                r = one
                for j in range(a + 1, b):
                    r = r * lfac[j]
                skips[p] = r
            return r

        def value(n: int) -> Vec | None:  # None: weight 0 in every column
            store = units[lev[n]]
            r = store.get(n, store)
            if r is not store:
                return r  # type: ignore[return-value]  # (the store itself: not there)
            f = feature[n]
            if isfixed[f]:
                v = point[f]
                got = value(vchild[n][v])
                if got is not None:
                    p = value_pairs[n][v]
                    got = got * fac[f] if not p else got * fac[f] * skip(p)
            else:
                got = None
                for w, c, p in wedges[n]:
                    x = value(c)
                    if x is not None:
                        x = x * w if not p else x * w * skip(p)
                        got = x if got is None else got + x
            store[n] = got
            return got

        total: Vec | None = None
        for label in labels:
            r = value(t.roots[label])
            p = t.root_pairs[label]
            if r is not None and p:
                r = r * skip(p)
            if t.negated[label]:  # the complement: every point's weight minus the root's
                full = skip(t.full_pair) if t.full_pair else one
                r = full if r is None else full - r
            if r is not None:
                total = r if total is None else total + r
        return total

    # -- numpy ---------------------------------------------------------------------------------

    def pair_members(self) -> list[tuple[int, ...]]:
        order = self.t.order
        return [tuple(order[j] for j in range(a + 1, b)) for a, b in self.t.pair_levels]

    def n_ids(self) -> int:
        return len(self.t.feature)

    def unit_ids(self) -> list[Array]:
        return self.t.structure().ids

    def unit_values(self, u: int, val: Array, sm: Array, point: Sequence[int], isfixed: Sequence[bool],
                    fac: Array) -> Array:
        s = self.t.structure()
        f = self.t.order[u]
        if isfixed[f]:
            v = point[f]
            fixed_value: Array = val[s.vchild[u][:, v]] * sm[s.vpair[u][:, v]] * fac[f]
            return fixed_value
        if not self._edge_w:
            mw, order = self.columns.mask_weight, self.t.order
            self._edge_w = [self.columns.array([self.columns.entries(mw(order[lv], m)) for m in masks])
                            for lv, masks in enumerate(s.edge_masks)]
        contrib = self._edge_w[u] * sm[s.edge_pair[u]] * val[s.edge_child[u]]
        summed: Array = np.add.reduceat(contrib, s.starts[u], axis=0)
        return summed

    def root_value(self, label: int, val: Array, sm: Array) -> Array:
        t = self.t
        r: Array = val[t.roots[label]] * sm[t.root_pairs[label]]
        if t.negated[label]:  # the complement: every point's weight minus the root's
            r = sm[t.full_pair] - r
        return r
