"""The SDD node table (decision nodes over a vtree whose leaves are feature blocks) and its counter.

See :mod:`kcxai.compilers._tables.wmc`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Generic, Union

import numpy as np

from kcxai.compilers._tables.base import MISSING, TRUE, Counter, Table, recursion
from kcxai.compilers._tables.vectors import Array, Columns, V
from kcxai.space import FeatureSpace

__all__ = ["VtreeTable", "VtreeCounter", "NodeData"]



#: A node's data: ``None`` (terminal), ``(feature, mask)`` (leaf) or ``(vnode, ((prime, sub), ...))`` (decision).
NodeData = Union[None, tuple[int, int], tuple[int, tuple[tuple[int, int], ...]]]


def _leaf(data: NodeData) -> tuple[int, int]:
    """A leaf's ``(feature, mask)``."""
    if data is None or not isinstance(data[1], int):  # pragma: no cover - the exporter writes them
        raise ValueError(f"internal error: {data!r} is not a leaf's (feature, mask)")
    return data[0], data[1]


def _decision(data: NodeData) -> tuple[int, tuple[tuple[int, int], ...]]:
    """A decision node's ``(vnode, ((prime, sub), ...))``."""
    if data is None or isinstance(data[1], int):  # pragma: no cover - the exporter writes them
        raise ValueError(f"internal error: {data!r} is not a decision's (vnode, elements)")
    return data[0], data[1]


class VtreeTable(Table):
    """An SDD read feature by feature, over a vtree whose leaves are whole feature blocks.

    Parameters
    ----------
    space : FeatureSpace
    vnodes : list of (features_mask, left, right)
        The vtree above the blocks: per vtree node, the bitmask of the features
        below it and its children (``-1`` for a block, i.e. one feature).
    vnode_of_feature : list of int
        Per feature, its block's vtree node (``-1`` for features without variables).
    kind : list of int
        Per node: 0 terminal, 1 leaf, 2 decision.
    data : list
        Per node: ``None`` (terminal), ``(feature, mask)`` (leaf) or
        ``(vnode, ((prime, sub), ...))`` (decision).
    roots : list of int
        Per class.
    root_vnode : int
        The vtree's root.
    """

    def __init__(self, space: FeatureSpace, vnodes: list[tuple[int, int, int]], vnode_of_feature: list[int],
                 kind: list[int], data: Sequence[NodeData], roots: list[int], root_vnode: int) -> None:
        self.space = space
        self.vnodes = vnodes
        self.vnode_of_feature = vnode_of_feature
        self.kind = kind
        self.data = data
        #: per node: its leaf's (feature, mask) ((-1, 0) if not a leaf); its decision's (vnode, elements)
        self.leaf = [_leaf(d) if k == 1 else (-1, 0) for k, d in zip(kind, data)]
        self.decision = [_decision(d) if k == 2 else (-1, ()) for k, d in zip(kind, data)]
        self.roots = list(roots)
        self.root_vnode = root_vnode
        n_v = len(vnodes)
        self.n_units = n_v
        # smoothing pairs (x, u): the features below x and not below u (u = -1: none)
        pair_index: dict[tuple[int, int], int] = {}
        pair_feats: list[tuple[int, ...]] = []

        def pair(x: int, u: int) -> int:
            key = (x, u)
            got = pair_index.get(key)
            if got is None:
                fx = vnodes[x][0]
                fu = vnodes[u][0] if u >= 0 else 0
                diff = fx & ~fu
                got = pair_index[key] = len(pair_feats)
                pair_feats.append(tuple(f for f in range(space.n_features) if diff >> f & 1))
            return got

        def home(n: int) -> int:
            k = kind[n]
            if k == 2:
                return self.decision[n][0]
            if k == 1:
                return vnode_of_feature[self.leaf[n][0]]
            return -1

        home_of = [home(n) for n in range(len(kind))]
        elems: list[tuple[tuple[int, int, int, int], ...]] = [()] * len(kind)
        for n, k in enumerate(kind):
            if k == 2:
                x, els = self.decision[n]
                _, xl, xr = vnodes[x]
                elems[n] = tuple((p, s, pair(xl, home_of[p]) if home_of[p] != xl else -1,
                                  pair(xr, home_of[s]) if home_of[s] != xr else -1) for p, s in els)
        self.home = home_of
        self.elems = elems
        self.pair_feats = pair_feats
        self.root_pairs = [pair(root_vnode, home_of[r]) if home_of[r] != root_vnode else -1 for r in self.roots]
        # freeing feature f changes the values of the nodes whose vtree node is above f's block
        units_of: list[tuple[int, ...]] = []
        for f in range(space.n_features):
            units_of.append(tuple(x for x in range(n_v) if vnodes[x][0] >> f & 1))
        self.units_of = units_of
        depth = [0] * n_v
        for x in range(n_v):  # children before parents
            _, xl, xr = vnodes[x]
            depth[x] = 1 + max(depth[xl] if xl >= 0 else 0, depth[xr] if xr >= 0 else 0)
        self.depth = 2 * (max(depth) if depth else 0) + 4
        self._n_nodes = sum(1 for k in kind if k == 2)

    @property
    def n_nodes(self) -> int:
        """Decision nodes above the blocks."""
        return self._n_nodes

    @property
    def n_edges(self) -> int:
        return sum(len(e) for e in self.elems)

    def holds(self, label: int, point: Sequence[int]) -> bool:
        kind, leaf, decision = self.kind, self.leaf, self.decision

        def ev(n: int) -> bool:
            k = kind[n]
            if k == 0:
                return n == TRUE
            if k == 1:
                f, mask = leaf[n]
                return bool(mask >> point[f] & 1)
            for p, s in decision[n][1]:
                if ev(p):
                    return ev(s)
            return False

        with recursion(self.depth):
            return ev(self.roots[label])

    def counter(self, columns: Columns[V]) -> "VtreeCounter[V]":
        return VtreeCounter(self, columns)


class VtreeCounter(Counter[V]):
    """A :class:`VtreeTable` counting in ``K`` weight columns (see :mod:`kcxai.compilers._tables.base`).

    A decision node over vtree node ``x`` (children ``xl``, ``xr``) with elements ``(p_i, s_i)`` weighs, per
    column, ``V(n) = sum_i sm(xl, p_i) V(p_i) sm(xr, s_i) V(s_i)``; a leaf (the values ``E`` of one feature
    where it holds) weighs ``w(E)`` if its feature is free, ``w(v_f)`` or 0 if it is fixed. The units are
    the vtree's nodes (the leaves of a feature's block computed in its block's unit).
    """

    def __init__(self, table: VtreeTable, columns: Columns[V]) -> None:
        Counter.__init__(self, table, columns)
        self.t = table
        #: per leaf node, its weight w(E) per column
        self.leaf_w: list[V] = [columns.mask_weight(*table.leaf[n]) if kind == 1 else columns.one
                                  for n, kind in enumerate(table.kind)]
        self.order_units = list(range(len(table.vnodes)))  # the vtree's nodes are numbered children first
        self._units: list[_VtreeUnits[V]] = []
        #: no smoothing pair's product known yet
        self.no_smooth: list[V | None] = [None] * len(table.pair_feats)

    def walk(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], fac: Sequence[V],
             stores: list[dict[int, V | None]], terminals: Mapping[int, V | None]) -> V | None:
        t = self.t
        kind, elems, home, pair_feats, leaf_w, leaf = t.kind, t.elems, t.home, t.pair_feats, self.leaf_w, t.leaf
        one = self.columns.one
        smooth: list[V | None] = self.no_smooth.copy()

        def sm(k: int) -> V:  # the product of the factors of the features of smoothing pair k
            r = smooth[k]
            if r is None:
                r = one
                for f in pair_feats[k]:
                    r = r * fac[f]
                smooth[k] = r
            return r

        # per unit its store, and the terminals' values last (a terminal's home is -1)
        units = list(stores)
        units.append(dict(terminals))

        def value(n: int) -> V | None:  # None: weight 0 in every column. n is not in its unit's store yet.
            if kind[n] == 1:  # a leaf: the values E of one feature
                f, mask = leaf[n]
                got: V | None = leaf_w[n] if not isfixed[f] else fac[f] if mask >> point[f] & 1 else None
            else:
                got = None
                for p, s_, kp, ks in elems[n]:
                    a = units[home[p]].get(p, MISSING)
                    if a is MISSING:
                        a = value(p)
                    if a is None:
                        continue
                    b = units[home[s_]].get(s_, MISSING)
                    if b is MISSING:
                        b = value(s_)
                    if b is None:
                        continue
                    if kp >= 0:
                        a = a * sm(kp)
                    if ks >= 0:
                        b = b * sm(ks)
                    got = a * b if got is None else got + a * b
            units[home[n]][n] = got
            return got

        total: V | None = None
        for label in labels:
            root = t.roots[label]
            r = units[home[root]].get(root, MISSING)
            if r is MISSING:
                r = value(root)
            k = t.root_pairs[label]
            if r is not None:
                if k >= 0:
                    r = r * sm(k)
                total = r if total is None else total + r
        return total

    # -- numpy ---------------------------------------------------------------------------------

    def _arrays(self) -> "_VtreeUnits[V]":
        if not self._units:
            self._units.append(_VtreeUnits(self))
        return self._units[0]

    def pair_members(self) -> list[tuple[int, ...]]:
        return [(), *self.t.pair_feats]  # the table's pair k is ours k + 1

    def n_ids(self) -> int:
        return len(self.t.kind)

    def unit_ids(self) -> list[Array]:
        return self._arrays().ids

    def unit_values(self, u: int, val: Array, sm: Array, point: Sequence[int], isfixed: Sequence[bool],
                    fac: Array) -> Array:
        a = self._arrays()
        k = self.columns.k
        parts = []
        if a.n_leaves[u]:
            f = a.leaf_feature[u]
            if isfixed[f]:  # per column: the leaves holding at v_f weigh w(v_f), the others 0
                holds = a.leaf_mask[u][:, point[f]]
                parts.append(np.tile(holds, k) * np.repeat(fac[f], a.n_leaves[u]))
            else:
                parts.append(a.leaf_w[u])
        prime, sub, kp, ks, starts = a.elem[u]
        if len(starts):
            parts.append(np.add.reduceat((val[prime] * sm[kp]) * (val[sub] * sm[ks]), starts))
        if len(parts) == 1:
            one_part: Array = parts[0]
            return one_part
        both: Array = np.concatenate([x.reshape(k, -1) for x in parts], axis=1).ravel()  # per column: leaves first
        return both

    def root_value(self, label: int, val: Array, sm: Array) -> Array:
        a = self._arrays()
        r: Array = val[self.t.roots[label]::a.n_ids] * sm[self.t.root_pairs[label] + 1::a.n_pairs]
        return r


class _VtreeUnits(Generic[V]):
    """The SDD table's units as numpy index arrays in a counter's flat layout (one block per column), with its
    leaf weights."""

    def __init__(self, counter: VtreeCounter[V]) -> None:
        t, columns = counter.t, counter.columns
        n_v = len(t.vnodes)
        self.n_ids = len(t.kind)
        self.n_pairs = len(t.pair_feats) + 1
        leaves: list[list[int]] = [[] for _ in range(n_v)]
        decisions: list[list[int]] = [[] for _ in range(n_v)]
        for n, kind in enumerate(t.kind):
            if kind == 1:
                leaves[t.home[n]].append(n)
            elif kind == 2:
                decisions[t.home[n]].append(n)
        self.n_leaves = [len(x) for x in leaves]
        #: per unit, where its nodes' values go: its block's leaves, then its decision nodes
        self.ids = [counter.spread(np.asarray(leaves[x] + decisions[x], dtype=np.int64), self.n_ids)
                    for x in range(n_v)]
        leaf_data = [[t.leaf[n] for n in leaves[x]] for x in range(n_v)]
        self.leaf_feature = [d[0][0] if d else -1 for d in leaf_data]
        sizes = [t.space.features[f].size if f >= 0 else 0 for f in self.leaf_feature]
        self.leaf_mask = [np.asarray([[m >> v & 1 == 1 for v in range(size)] for _, m in d],
                                     dtype=np.bool_).reshape(len(d), size) for d, size in zip(leaf_data, sizes)]
        self.leaf_w = [counter.flat(columns.array([columns.entries(columns.mask_weight(*x)) for x in d]))
                       for d in leaf_data]
        #: per unit, its decision nodes' elements: primes, subs, their smoothing pairs, where each node starts
        self.elem: list[tuple[Array, Array, Array, Array, Array]] = []
        for x in range(n_v):
            prime: list[int] = []
            sub: list[int] = []
            kp: list[int] = []
            ks: list[int] = []
            starts: list[int] = []
            for n in decisions[x]:
                starts.append(len(prime))
                for p, s_, a, b in t.elems[n]:
                    prime.append(p)
                    sub.append(s_)
                    kp.append(a + 1)
                    ks.append(b + 1)
            arrays = [np.asarray(z, dtype=np.int64) for z in (prime, sub, kp, ks, starts)]
            self.elem.append((counter.spread(arrays[0], self.n_ids), counter.spread(arrays[1], self.n_ids),
                              counter.spread(arrays[2], self.n_pairs), counter.spread(arrays[3], self.n_pairs),
                              counter.spread(arrays[4], len(prime))))
