"""The OBDD node table (a reduced ordered multi-valued diagram read feature by feature) and its counter.

See :mod:`kcxai.compilers._tables.wmc`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Generic

import numpy as np

from kcxai.compilers._tables.base import MISSING, TRUE, Counter, Table
from kcxai.compilers._tables.level_arrays import LevelStructure
from kcxai.compilers._tables.vectors import Array, Columns, V
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
        #: per node, the skip pair of each edge and of each value's child; and for each value the pair of the
        #: levels from the node's to the child's (the node's own factor and the skipped ones)
        self.edge_pairs = [tuple(self._pair(lev[n], lev[c]) for _, c in edges[n]) for n in range(len(feature))]
        self.value_pairs = [tuple(self._pair(lev[n], lev[c]) for c in vchild[n]) for n in range(len(feature))]
        self.value_spans = [tuple(self._pair(lev[n] - 1, lev[c]) for c in vchild[n]) for n in range(len(feature))]
        #: per class, the pair of the levels above its root; the pair of every level
        self.root_pairs = [self._pair(-1, lev[r]) for r in self.roots]
        self.full_pair = self._pair(-1, n_levels)
        self._structure: list[LevelStructure] = []
        self._n_nodes = sum(1 for f in feature if f >= 0)

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
        return self._n_nodes

    @property
    def n_edges(self) -> int:
        return sum(len(e) for e in self.edges)

    def holds(self, label: int, point: Sequence[int]) -> bool:
        n = self.roots[label]
        feature, vchild = self.feature, self.vchild
        while feature[n] >= 0:
            n = vchild[n][point[feature[n]]]
        return (n == TRUE) != self.negated[label]

    def counter(self, columns: Columns[V]) -> "LevelCounter[V]":
        return LevelCounter(self, columns)


class LevelCounter(Counter[V]):
    """A :class:`LevelTable` counting in ``K`` weight columns (see :mod:`kcxai.compilers._tables.base`).

    A node ``n`` at level ``l`` weighs, per column, ``V(n) = sum_e w(E_e) skip(l, l_e) V(child_e)`` if its
    feature is free and ``w(v_f) skip(l, l_c) V(c)`` (``c`` the child of ``v_f``) if it is fixed.
    """

    def __init__(self, table: LevelTable, columns: Columns[V]) -> None:
        Counter.__init__(self, table, columns)
        self.t = table
        mw = columns.mask_weight
        feature, edges = table.feature, table.edges
        #: per node, its edges as (w(E) per column, child, child's level, skip pair)
        self.wedges: list[tuple[tuple[V, int, int, int], ...]] = [
            tuple((mw(f, m), c, table.lev[c], p) for (m, c), p in zip(edges[n], table.edge_pairs[n])) if f >= 0 else ()
            for n, f in enumerate(feature)]
        self.order_units = list(range(table.n_levels - 1, -1, -1))
        #: per skip pair, the features of the levels strictly between; and no pair's product known yet
        self.pair_features = self.pair_members()
        self.no_skips: list[V | None] = [None] * len(self.pair_features)
        self._pair_bounds: list[tuple[Array, Array]] = []
        self._level_units: list[_LevelUnits[V]] = []

    def walk(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], fac: Sequence[V],
             stores: list[dict[int, V | None]], terminals: Mapping[int, V | None]) -> V | None:
        t = self.t
        lev, feature, vchild, value_spans, wedges = t.lev, t.feature, t.vchild, t.value_spans, self.wedges
        pair_features = self.pair_features
        one = self.columns.one
        skips: list[V | None] = self.no_skips.copy()
        # per level its store, and the terminals' values at level n_levels (never written)
        units = list(stores)
        units.append(dict(terminals))

        def skip(p: int) -> V:  # the product of the factors of the levels strictly between pair p's
            r = skips[p]
            if r is None:
                r = one
                for f in pair_features[p]:
                    r = r * fac[f]
                skips[p] = r
            return r

        def value(n: int) -> V | None:  # None: weight 0 in every column. n is not in its unit's store yet.
            f = feature[n]
            if isfixed[f]:  # the child of v_f, times the factors of the levels from n's to the child's
                v = point[f]
                c = vchild[n][v]
                got = units[lev[c]].get(c, MISSING)
                if got is MISSING:
                    got = value(c)
                if got is not None:
                    got = got * skip(value_spans[n][v])
            else:
                got = None
                for w, c, lc, p in wedges[n]:
                    x = units[lc].get(c, MISSING)
                    if x is MISSING:
                        x = value(c)
                    if x is not None:
                        x = x * w if not p else x * w * skip(p)
                        got = x if got is None else got + x
            units[lev[n]][n] = got
            return got

        total: V | None = None
        for label in labels:
            root = t.roots[label]
            r = units[lev[root]].get(root, MISSING)
            if r is MISSING:
                r = value(root)
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

    def pair_products(self, fac: Array) -> Array:
        """Per skip pair ``(a, b)``, the product of the factors of the levels strictly between: ``P[b] / P[a + 1]``
        for the prefix products ``P`` of the levels' factors (exact in ``int64``: every prefix is at most the
        total weight, and divides the longer ones), or the products themselves where floats could underflow."""
        t = self.t
        if not self._pair_bounds:
            spans = [(0, 0)] + [(a + 1, b) for a, b in t.pair_levels[1:]]  # pair 0 spans nothing
            lo = np.asarray([a for a, _ in spans], dtype=np.int64)
            hi = np.asarray([b for _, b in spans], dtype=np.int64)
            self._pair_bounds.append((lo, hi))
        lo, hi = self._pair_bounds[0]
        levels = fac[list(t.order)] if t.n_levels else np.ones((0, self.columns.k), dtype=fac.dtype)
        prefix = np.concatenate([np.ones((1, self.columns.k), dtype=fac.dtype), np.cumprod(levels, axis=0)])
        if self.columns.exact:
            exact_quotient: Array = prefix[hi] // prefix[lo]
            return exact_quotient
        if prefix.size and prefix.min() > 1e-250 and np.isfinite(prefix).all():
            quotient: Array = prefix[hi] / prefix[lo]
            return quotient
        return super().pair_products(fac)

    def n_ids(self) -> int:
        return len(self.t.feature)

    def _units(self) -> "_LevelUnits[V]":
        if not self._level_units:
            self._level_units.append(_LevelUnits(self))
        return self._level_units[0]

    def unit_ids(self) -> list[Array]:
        return self._units().ids

    def unit_values(self, u: int, val: Array, sm: Array, point: Sequence[int], isfixed: Sequence[bool],
                    fac: Array) -> Array:
        s = self._units()
        f = self.t.order[u]
        if isfixed[f]:
            v = point[f]
            m = s.size[u]
            fixed_value: Array = (val[self.spread(s.vchild[u][:, v], s.n_ids)]
                                  * sm[self.spread(s.vpair[u][:, v], s.n_pairs)] * np.repeat(fac[f], m))
            return fixed_value
        summed: Array = np.add.reduceat(s.edge_w[u] * sm[s.edge_pair[u]] * val[s.edge_child[u]], s.starts[u])
        return summed

    def root_value(self, label: int, val: Array, sm: Array) -> Array:
        t, s = self.t, self._units()
        r: Array = val[t.roots[label]::s.n_ids] * sm[t.root_pairs[label]::s.n_pairs]
        if t.negated[label]:  # the complement: every point's weight minus the root's
            r = sm[t.full_pair::s.n_pairs] - r
        return r


class _LevelUnits(Generic[V]):
    """The levels' index arrays of a :class:`LevelTable` in a counter's flat layout (one block per column), with
    its edge weights."""

    def __init__(self, counter: LevelCounter[V]) -> None:
        t = counter.t
        s = t.structure()
        cols = counter.columns
        self.n_ids = len(t.feature)
        self.n_pairs = len(t.pair_levels)
        self.size = [len(ids) for ids in s.ids]
        self.ids = [counter.spread(ids, self.n_ids) for ids in s.ids]
        self.vchild, self.vpair = s.vchild, s.vpair
        self.edge_child = [counter.spread(c, self.n_ids) for c in s.edge_child]
        self.edge_pair = [counter.spread(p, self.n_pairs) for p in s.edge_pair]
        self.starts = [counter.spread(st, len(c)) for st, c in zip(s.starts, s.edge_child)]
        mw = cols.mask_weight
        self.edge_w = [counter.flat(cols.array([cols.entries(mw(t.order[lv], m)) for m in masks]))
                       for lv, masks in enumerate(s.edge_masks)]
