"""A diagram's counts under a mixture of ``K`` products in one traversal: a vector of ``K`` weights per node.

Counting is linear in the distribution, so under ``sum_k c_k P_k`` the weight of a set is
``sum_k c_k P_k(set)`` (:mod:`kcxai.distribution`). :func:`~kcxai.compilers._tables.diagram.diagram_oracle`
can answer that with one product oracle per component (``K`` tables, ``K`` walks per query), or, as
here, with one traversal of the shared structure carrying ``K`` weights per node: the recursions of
:mod:`kcxai.compilers._tables.wmc` with every weight a vector,

    OBDD, free feature:  V_k(n) = sum_e w_k(E_e) * skip_k(l, l_e) * V_k(child_e)
    OBDD, fixed feature: V_k(n) = w_k(v_f) * skip_k(l, l_c) * V_k(c)
    SDD decision node:   V_k(n) = sum_i sm_k(xl, p_i) * V_k(p_i) * sm_k(xr, s_i) * V_k(s_i)

and the coefficients ``c_k`` applied once, to the ``K`` counts of the roots.

Two evaluations, chosen per query (:meth:`MixtureTable.counts`):

* a *walk* of the nodes the fixed features leave reachable, each node's value a tuple of ``K`` Python
  weights (exact integers of any size, or floats): one visit per node instead of ``K``;
* on large diagrams with several free features, whole *units* at once with numpy (a level of the OBDD
  table, every node over one vtree node of the SDD table), one column per component, when the counts fit:
  every entry is one component's weight of a set of points, at most that component's total, so with every
  total below ``2**62`` ``int64`` is exact; float spaces use ``float64`` (the per-component path's
  rounding, summed in another order). Skip and smoothing factors are products of per-feature factors over
  a set of features, computed for all sets and components at once.

Sessions keep each unit's values for the current fixed set, as the per-component sessions keep their
nodes' values (:class:`~kcxai.compilers._tables.diagram.DiagramSession`): asking about freeing a feature
recomputes only the units above it, and committing keeps what was computed.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from kcxai.arithmetic import Weight
from kcxai.compilers._tables.level_arrays import VECTOR_MIN_NODES, LevelStructure
from kcxai.compilers._tables.level import LevelTable
from kcxai.compilers._tables.base import Table, recursion
from kcxai.compilers._tables.vtree import VtreeTable
from kcxai.distribution import ProductWeights

__all__ = ["MixtureTable", "LevelMixture", "VtreeMixture", "mixture_table", "int64_exact", "RECURSIVE_MAX_FREE", "Vec",
           "UnitMemo"]

_INT64_SAFE = 1 << 62
#: Per unit, ``{"v": array}``: the unit's node values (one row per node, one column per component).
UnitMemo = list[dict[Any, Any]]
#: One weight per component.
Vec = tuple[Weight, ...]

#: Queries with at most this many free features walk the reachable nodes (as
#: :data:`kcxai.compilers._tables.level.RECURSIVE_MAX_FREE`): few nodes, cheaper than numpy's whole units.
RECURSIVE_MAX_FREE = 3


def _mul(a: Vec, b: Vec) -> Vec:
    return tuple(map(operator.mul, a, b))


def int64_exact(pws: Sequence[ProductWeights]) -> bool:
    """Whether every component's counts are exact in ``int64`` (each total below ``2**62``)."""
    return all(pw.total < _INT64_SAFE for pw in pws)


class MixtureTable:
    """The shared structure of a diagram table with every component's weights as columns (see the module).

    Subclasses give the units (in evaluation order, children first), the node ids each unit computes,
    the sets of features whose factors multiply (skip or smoothing *pairs*), one unit's values and a
    root's value.

    Parameters
    ----------
    table : Table
        The diagram (its ``pw`` is not used: the components' weights are).
    coefficients : sequence
        ``c_k`` per component.
    pws : sequence of ProductWeights
        ``P_k`` per component.

    Attributes
    ----------
    arrays : bool
        Whether numpy may count (every component's counts fit ``int64``, or a float space); else every
        query walks the reachable nodes with Python weights.
    """

    order_units: list[int]
    ids: list[np.ndarray]

    def __init__(self, table: Table, coefficients: Sequence[Weight], pws: Sequence[ProductWeights]) -> None:
        self.table = table
        self.n_nodes: int = table.n_nodes  # type: ignore[attr-defined]
        self.coefficients = tuple(coefficients)
        self.pws = tuple(pws)
        self.arith = pws[0].arith
        self.exact = self.arith.exact
        self.dtype = np.int64 if self.exact else np.float64
        self.arrays = not self.exact or int64_exact(pws)
        self.k = len(pws)
        space = table.space
        self.n_features = space.n_features
        # per feature, the (values, columns) weights and the (columns,) totals
        self.w = [self._arr([[pw.weights[f][v] for pw in pws] for v in range(space.features[f].size)])
                  for f in range(self.n_features)]
        self.z = self._arr([[pw.totals[f] for pw in pws] for f in range(self.n_features)])
        # the same as tuples of Python weights, for the walk
        self.wv = [[tuple(pw.weights[f][v] for pw in pws) for v in range(space.features[f].size)]
                   for f in range(self.n_features)]
        self.zv = [tuple(pw.totals[f] for pw in pws) for f in range(self.n_features)]
        self.ones: Vec = (self.arith.one,) * self.k
        self.pair_members: list[tuple[int, ...]] = [()]  # pair 0: no feature (factor 1)
        self._pair_index: dict[tuple[int, ...], int] = {(): 0}

    def _arr(self, rows: Sequence[Sequence[Weight]]) -> np.ndarray:
        """Rows of one weight per component as an array of one column per component (empty without
        :attr:`arrays`)."""
        if not self.arrays or not len(rows):
            return np.zeros((0, self.k), dtype=self.dtype)
        return np.asarray(rows, dtype=self.dtype).reshape(len(rows), self.k)

    def _pair(self, features: Sequence[int]) -> int:
        key = tuple(sorted(features))
        got = self._pair_index.get(key)
        if got is None:
            got = self._pair_index[key] = len(self.pair_members)
            self.pair_members.append(key)
        return got

    def _finish_pairs(self) -> None:
        member = np.zeros((len(self.pair_members), self.n_features), dtype=bool)
        for p, feats in enumerate(self.pair_members):
            member[p, list(feats)] = True
        self.member = member
        self._used = [f for f in range(self.n_features) if member[:, f].any()]

    def factors(self, point: Sequence[int], isfixed: Sequence[bool]) -> np.ndarray:
        """Per feature, the factor of each column: ``w_k(v_f)`` if fixed, ``Z_k(f)`` if free."""
        fac = self.z.copy()
        for f in range(self.n_features):
            if isfixed[f]:
                fac[f] = self.w[f][point[f]]
        return fac

    def pair_products(self, fac: np.ndarray) -> np.ndarray:
        """Per pair, the product of the factors of its features (one column per component)."""
        out = np.ones((len(self.pair_members), self.k), dtype=self.dtype)
        one = np.ones(self.k, dtype=self.dtype)
        for f in self._used:
            out = out * np.where(self.member[:, f, None], fac[f][None, :], one[None, :])
        return out

    def unit_values(self, u: int, val: np.ndarray, sm: np.ndarray, point: Sequence[int],
                    isfixed: Sequence[bool], fac: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def root_value(self, label: int, val: np.ndarray, sm: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def new_values(self) -> np.ndarray:
        """The node value array with the terminals set (0 = FALSE, 1 = TRUE)."""
        val = np.zeros((self._n_ids(), self.k), dtype=self.dtype)
        val[1] = 1
        return val

    def _n_ids(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def counts(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], memo: UnitMemo,
               kept: dict[str, Any], tmp: UnitMemo | None, affected: Sequence[bool] | None) -> list[Weight]:
        """Per component, the weight of ``{x : kappa(x) in labels, x_S = v_S}``.

        ``memo[u]`` holds unit ``u``'s values for the current fixed set (under ``"v"`` the unit's array, under
        a node's id that node's vector), except for the ``affected`` units (into ``tmp``); ``kept`` holds the
        node array from the last array query and which unit array each unit's rows were copied from. Queries
        with at most :data:`RECURSIVE_MAX_FREE` free features, on diagrams of fewer than
        :data:`~kcxai.compilers._tables.level_arrays.VECTOR_MIN_NODES` internal nodes, and all of them when the counts
        do not fit ``int64``, walk the reachable nodes recursively with a tuple of ``K`` Python weights per
        node; the others compute every node of the units with numpy.
        """
        n_free = len(isfixed) - sum(isfixed)
        if not self.arrays or n_free <= RECURSIVE_MAX_FREE or self.n_nodes < VECTOR_MIN_NODES:
            facs = [self.wv[f][point[f]] if isfixed[f] else self.zv[f] for f in range(self.n_features)]
            with recursion(self.table.depth):
                return self.walk(labels, point, isfixed, facs, memo, tmp, affected)
        return cast(list[Weight], self.array_counts(labels, point, isfixed, memo, kept, tmp, affected).tolist())

    def walk(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], facs: list[Vec],
             memo: UnitMemo, tmp: UnitMemo | None, affected: Sequence[bool] | None
             ) -> list[Weight]:  # pragma: no cover - abstract
        """:meth:`counts` by a walk of the reachable nodes, a tuple of ``K`` Python weights per node."""
        raise NotImplementedError

    def array_counts(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], memo: UnitMemo,
                     kept: dict[str, Any], tmp: UnitMemo | None, affected: Sequence[bool] | None) -> np.ndarray:
        """:meth:`counts` with numpy, a unit at a time: one column per component (and prime)."""
        fac = self.factors(point, isfixed)
        sm = self.pair_products(fac)
        val = kept.get("val")
        if val is None:
            val = kept["val"] = self.new_values()
            kept["from"] = {}
        copied = kept["from"]
        for u in self.order_units:
            ids = self.ids[u]
            if not len(ids):
                continue
            store = tmp[u] if affected is not None and affected[u] else memo[u]  # type: ignore[index]
            got = store.get("v")
            if got is None:
                got = store["v"] = self.unit_values(u, val, sm, point, isfixed, fac)
            if copied.get(u) is not got:
                val[ids] = got
                copied[u] = got
        total = np.zeros(self.k, dtype=self.dtype)
        for label in labels:
            total = total + self.root_value(label, val, sm)
        return total

    def combine(self, per: Sequence[Weight]) -> Weight:
        """``sum_k c_k * count_k`` in the space's arithmetic (Python ints when exact)."""
        total = self.arith.zero
        for c, x in zip(self.coefficients, per):
            if x:
                total += c * x
        return total


class LevelMixture(MixtureTable):
    """:class:`MixtureTable` of an OBDD :class:`~kcxai.compilers._tables.level.LevelTable`: a unit per level."""

    def __init__(self, table: LevelTable, coefficients: Sequence[Weight], pws: Sequence[ProductWeights]) -> None:
        super().__init__(table, coefficients, pws)
        self.t = table
        if not table._structure:
            table._structure.append(LevelStructure(table.sizes, table.lev, table.edges, table.vchild))
        s = self.s = table._structure[0]
        order = table.order
        n_levels = s.n_levels
        # the structure's skip pairs (a, b) as feature sets, in the structure's numbering (0: none)
        for a, b in s.pair_list:
            self._pair([order[j] for j in range(a + 1, b)])
        self.root_pair = [self._pair([order[j] for j in range(min(table.lev[r], n_levels))]) for r in table.roots]
        self.full_pair = self._pair(order)
        self._finish_pairs()
        self.edge_w = [self._arr([[pw.mask_weight(order[lv], m) for pw in pws] for m in masks])
                       for lv, masks in enumerate(s.edge_masks)]
        self.order_units = list(range(n_levels - 1, -1, -1))
        self.ids = s.ids
        self.wedges: list[tuple[tuple[Vec, int, int], ...]] = [
            tuple((tuple(pw.mask_weight(f, m) for pw in pws), c, table.lev[c]) for m, c in table.edges[n])
            if f >= 0 else () for n, f in enumerate(table.feature)]

    def _n_ids(self) -> int:
        return self.s.n_nodes

    def walk(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], facs: list[Vec],
             memo: UnitMemo, tmp: UnitMemo | None, affected: Sequence[bool] | None) -> list[Weight]:
        t = self.t
        lev, feature, vchild, wedges, ones = t.lev, t.feature, t.vchild, self.wedges, self.ones
        mul, add = operator.mul, operator.add
        lfac = [facs[f] for f in t.order]
        skips: dict[tuple[int, int], Vec] = {}

        def skip(a: int, b: int) -> Vec:  # the product of the factors of the levels strictly between a and b
            r = skips.get((a, b))
            if r is None:
                r = ones
                for j in range(a + 1, b):
                    r = _mul(r, lfac[j])
                skips[(a, b)] = r
            return r

        def value(n: int) -> Vec | None:  # None: weight 0 in every component
            if n <= 1:
                return ones if n else None
            ln = lev[n]
            store = tmp[ln] if affected is not None and affected[ln] else memo[ln]  # type: ignore[index]
            r = store.get(n, store)
            if r is not store:
                return r  # type: ignore[no-any-return]
            f = feature[n]
            if isfixed[f]:
                c = vchild[n][point[f]]
                r = value(c)
                if r is not None:
                    lc = lev[c]
                    r = tuple(map(mul, r, facs[f] if lc <= ln + 1 else _mul(facs[f], skip(ln, lc))))
            else:
                r = None
                for w, c, lc in wedges[n]:
                    x = value(c)
                    if x is not None:
                        x = tuple(map(mul, x, w if lc <= ln + 1 else _mul(w, skip(ln, lc))))
                        r = x if r is None else tuple(map(add, r, x))
            store[n] = r
            return r

        total = [self.arith.zero] * self.k
        for label in labels:
            root = t.roots[label]
            r = value(root)
            if r is not None and lev[root] > 0:
                r = _mul(r, skip(-1, lev[root]))
            if t.negated[label]:  # the complement: every point's weight minus the root's
                full = skip(-1, t.n_levels)
                r = full if r is None else tuple([a - b for a, b in zip(full, r)])
            if r is not None:
                total = [a + b for a, b in zip(total, r)]
        return total

    def unit_values(self, u: int, val: np.ndarray, sm: np.ndarray, point: Sequence[int],
                    isfixed: Sequence[bool], fac: np.ndarray) -> np.ndarray:
        s = self.s
        f = self.t.order[u]
        if isfixed[f]:
            v = point[f]
            return val[s.vchild[u][:, v]] * sm[s.vpair[u][:, v]] * fac[f]
        contrib = self.edge_w[u] * sm[s.edge_pair[u]] * val[s.edge_child[u]]
        return np.add.reduceat(contrib, s.starts[u], axis=0)

    def root_value(self, label: int, val: np.ndarray, sm: np.ndarray) -> np.ndarray:
        root = self.t.roots[label]
        r = val[root] * sm[self.root_pair[label]]
        if self.t.negated[label]:  # the complement: every point's weight minus the root's
            r = sm[self.full_pair] - r
        return r


class VtreeMixture(MixtureTable):
    """:class:`MixtureTable` of an SDD :class:`~kcxai.compilers._tables.vtree.VtreeTable`: a unit per vtree node
    (the leaves of a feature's block are computed in its block's unit)."""

    def __init__(self, table: VtreeTable, coefficients: Sequence[Weight], pws: Sequence[ProductWeights]) -> None:
        super().__init__(table, coefficients, pws)
        self.t = table
        n_v = len(table.vnodes)
        self.pair_members.extend(tuple(feats) for feats in table.pair_feats)  # the table's pair k is ours k + 1
        self.root_pair = [k + 1 if k >= 0 else 0 for k in table.root_pairs]
        self._finish_pairs()
        leaves: list[list[int]] = [[] for _ in range(n_v)]
        decisions: list[list[int]] = [[] for _ in range(n_v)]
        for n, kind in enumerate(table.kind):
            if kind == 1:
                leaves[table.home[n]].append(n)
            elif kind == 2:
                decisions[table.home[n]].append(n)
        self.n_leaves = [len(x) for x in leaves]
        self.ids = [np.asarray(leaves[x] + decisions[x], dtype=np.int64) for x in range(n_v)]
        self.order_units = list(range(n_v))  # the vtree's nodes are numbered children first
        self.leaf_feature = [table.data[leaves[x][0]][0] if leaves[x] else -1 for x in range(n_v)]
        self.leaf_mask = [np.asarray([[table.data[n][1] >> v & 1 for v in range(self._size(x))] for n in leaves[x]],
                                     dtype=bool).reshape(len(leaves[x]), self._size(x)) for x in range(n_v)]
        self.leaf_w = [self._arr([[pw.mask_weight(table.data[n][0], table.data[n][1]) for pw in pws]
                                  for n in leaves[x]]) for x in range(n_v)]
        self.leaf_wv: list[Vec] = [tuple(pw.mask_weight(*table.data[n]) for pw in pws) if kind == 1 else ()
                                   for n, kind in enumerate(table.kind)]
        self.elem = []
        for x in range(n_v):
            prime: list[int] = []
            sub: list[int] = []
            kp: list[int] = []
            ks: list[int] = []
            starts: list[int] = []
            for n in decisions[x]:
                starts.append(len(prime))
                for p, s_, a, b in table.elems[n]:
                    prime.append(p)
                    sub.append(s_)
                    kp.append(a + 1)
                    ks.append(b + 1)
            self.elem.append(tuple(np.asarray(a, dtype=np.int64) for a in (prime, sub, kp, ks, starts)))

    def _size(self, x: int) -> int:
        f = self.leaf_feature[x]
        return self.t.space.features[f].size if f >= 0 else 0

    def _n_ids(self) -> int:
        return len(self.t.kind)

    def walk(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], facs: list[Vec],
             memo: UnitMemo, tmp: UnitMemo | None, affected: Sequence[bool] | None) -> list[Weight]:
        t = self.t
        kind, elems, home, pair_feats, leaf_wv, ones = t.kind, t.elems, t.home, t.pair_feats, self.leaf_wv, self.ones
        mul, add = operator.mul, operator.add
        smooth: dict[int, Vec] = {}

        def sm(k: int) -> Vec:
            r = smooth.get(k)
            if r is None:
                r = ones
                for f in pair_feats[k]:
                    r = _mul(r, facs[f])
                smooth[k] = r
            return r

        def value(n: int) -> Vec | None:  # None: weight 0 in every component
            k = kind[n]
            if k == 0:
                return ones if n else None
            if k == 1:
                f, mask = t.data[n]
                if isfixed[f]:
                    return facs[f] if mask >> point[f] & 1 else None
                return leaf_wv[n]
            h = home[n]
            store = tmp[h] if affected is not None and affected[h] else memo[h]  # type: ignore[index]
            r = store.get(n, store)
            if r is not store:
                return r  # type: ignore[no-any-return]
            r = None
            for p, s_, kp, ks in elems[n]:
                a = value(p)
                if a is None:
                    continue
                b = value(s_)
                if b is None:
                    continue
                if kp >= 0:
                    a = tuple(map(mul, a, sm(kp)))
                if ks >= 0:
                    b = tuple(map(mul, b, sm(ks)))
                x = tuple(map(mul, a, b))
                r = x if r is None else tuple(map(add, r, x))
            store[n] = r
            return r

        total = [self.arith.zero] * self.k
        for label in labels:
            r = value(t.roots[label])
            k = t.root_pairs[label]
            if r is not None:
                if k >= 0:
                    r = _mul(r, sm(k))
                total = [a + b for a, b in zip(total, r)]
        return total

    def unit_values(self, u: int, val: np.ndarray, sm: np.ndarray, point: Sequence[int],
                    isfixed: Sequence[bool], fac: np.ndarray) -> np.ndarray:
        parts = []
        if self.n_leaves[u]:
            f = self.leaf_feature[u]
            if isfixed[f]:
                holds = self.leaf_mask[u][:, point[f]]
                zero = np.zeros_like(self.leaf_w[u])
                parts.append(np.where(holds[:, None], fac[f][None, :], zero))
            else:
                parts.append(self.leaf_w[u])
        prime, sub, kp, ks, starts = self.elem[u]
        if len(starts):
            contrib = (val[prime] * sm[kp]) * (val[sub] * sm[ks])
            parts.append(np.add.reduceat(contrib, starts, axis=0))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def root_value(self, label: int, val: np.ndarray, sm: np.ndarray) -> np.ndarray:
        return val[self.t.roots[label]] * sm[self.root_pair[label]]


def mixture_table(table: Table, coefficients: Sequence[Weight], pws: Sequence[ProductWeights]) -> MixtureTable:
    """The :class:`MixtureTable` of an OBDD or SDD table."""
    if isinstance(table, LevelTable):
        return LevelMixture(table, coefficients, pws)
    if isinstance(table, VtreeTable):
        return VtreeMixture(table, coefficients, pws)
    raise TypeError(f"internal error: no mixture evaluation for {type(table).__name__}")  # pragma: no cover
